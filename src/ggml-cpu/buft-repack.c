// buft-repack.c: the CPU_REPACK buffer type (repack.h): buffers whose BF16
// and Q4_0 tensors are stored in the layouts of the kernels that read them,
// the conversions to and from those layouts, and which ops may read such
// tensors.
//
// BF16: the whole-tensor conversion (a model's weights, at load time) packs
// whole groups of 64 rows with the kernel's own packing routine; byte ranges
// that cut through a group (partial writes, reads) go value by value,
// through the same address formula the kernel reads by.
// Q4_0: whole panels unit by unit, other ranges block by block
// (panels.h), a block cut by the range read, changed and written back.

#include "kernels/repack.h"
#include "kernels/gemm-bf16.h"
#include "kernels/panels.h"
#include "cpu-impl.h"
#include "cpu-variant.h"

#include <pthread.h>

#define RP_ROWS GGML_CPU_REPACK_ROWS

// which layouts have their kernel here (set once, when the type is first asked for)
static pthread_once_t g_rp_once = PTHREAD_ONCE_INIT;
static bool           g_rp_bf16;
static bool           g_rp_panels[GGML_TYPE_COUNT];  // the types held in 16-row panels

size_t ggml_cpu_repack_matrix_size(int64_t k, int64_t nrows) {
    return (size_t) GGML_PAD(nrows, RP_ROWS) * (size_t)((k + 1) / 2) * sizeof(uint32_t);
}

// the layout this buffer type stores t in (whatever buffer t is in)
static enum ggml_cpu_repack_layout rp_layout(const struct ggml_tensor * t) {
    if (t->view_src != NULL || !ggml_is_contiguous(t)) {
        return GGML_CPU_REPACK_NONE;
    }
    if (t->type == GGML_TYPE_BF16 && g_rp_bf16) {
        return GGML_CPU_REPACK_BF16;
    }
    if (g_rp_panels[t->type]) {
        return GGML_CPU_REPACK_PANELS;
    }
    return GGML_CPU_REPACK_NONE;
}

static bool rp_packable(const struct ggml_tensor * t) {
    return rp_layout(t) != GGML_CPU_REPACK_NONE;
}

size_t ggml_cpu_repack_tensor_matrix_size(const struct ggml_tensor * t) {
    switch (rp_layout(t)) {
        case GGML_CPU_REPACK_BF16: return ggml_cpu_repack_matrix_size(t->ne[0], t->ne[1]);
        case GGML_CPU_REPACK_PANELS: return ggml_qpanel_matrix_size(t->type, t->ne[0], t->ne[1]);
        case GGML_CPU_REPACK_NONE: break;
    }
    return (size_t) t->nb[2];
}

// the index, in 16-bit values, of value kk of row r in its packed matrix
static inline size_t rp_index(int64_t np, int64_t r, int64_t kk) {
    return ((size_t)((r / RP_ROWS) * np + kk / 2) * RP_ROWS + (size_t)(r % RP_ROWS)) * 2 + (size_t)(kk % 2);
}

void ggml_cpu_repack_rows_to_f32(const uint32_t * matrix, int64_t k, int64_t r0, int64_t r1, int64_t kb, int64_t kc,
                                 float * out, size_t ldo) {
    const uint16_t * m = (const uint16_t *) matrix;
    const int64_t np = (k + 1) / 2;
    for (int64_t r = r0; r < r1; r++) {
        float * o = out + (size_t)(r - r0) * ldo;
        for (int64_t i = 0; i < kc; i++) {
            const ggml_bf16_t v = { .bits = m[rp_index(np, r, kb + i)] };
            o[i] = ggml_bf16_to_fp32(v);
        }
    }
}

//
// BF16: conversions of byte ranges
//

// what a pass over a range of values does: write values from src (or the
// constant fill when src is NULL) into the packed tensor, or read them into dst
struct rp_range {
    const uint16_t * src;
    uint16_t         fill;
    uint16_t *       dst;
};

// values [kk0, kk1) of row R (counted over all matrices) of tensor t, one by
// one; element e of the range is the value at (R, kk0) + e
static void rp_row_values(const struct ggml_tensor * t, int64_t R, int64_t kk0, int64_t kk1, const struct rp_range * io, size_t e) {
    const int64_t k = t->ne[0], n = t->ne[1], np = (k + 1) / 2;
    uint16_t * m = (uint16_t *)((char *) t->data + (size_t)(R / n) * ggml_cpu_repack_matrix_size(k, n));
    const int64_t r = R % n;
    for (int64_t kk = kk0; kk < kk1; kk++, e++) {
        const size_t at = rp_index(np, r, kk);
        if (io->dst != NULL) {
            io->dst[e] = m[at];
        } else {
            m[at] = io->src != NULL ? io->src[e] : io->fill;
        }
    }
    // the partner of an odd last value meets the zero after each activation
    // column: it must be a number
    if (io->dst == NULL && k % 2 != 0 && kk1 == k) {
        m[rp_index(np, r, k)] = 0;
    }
}

// values [e0, e1) of t in its usual order
static void rp_range_apply(const struct ggml_tensor * t, int64_t e0, int64_t e1, const struct rp_range * io) {
    const int64_t k = t->ne[0], n = t->ne[1];
    if (k == 0) {
        return;
    }
    int64_t e = e0;
    while (e < e1) {
        const int64_t R = e / k, kk = e % k;
        const int64_t r = R % n;
        const int64_t full_rows = kk == 0 ? (e1 - e) / k : 0;
        const int64_t group_rows = MIN(RP_ROWS, n - r);
#if defined(GGML_CPU_BF16_KERNEL)
        if (io->src != NULL && r % RP_ROWS == 0 && full_rows >= group_rows) {
            // a whole group: the kernel's packing routine (it zeroes the
            // rows past the end and the partner of an odd last value)
            uint32_t * m = (uint32_t *)((char *) t->data + (size_t)(R / n) * ggml_cpu_repack_matrix_size(k, n));
            ggml_gemm_bf16p_pack(group_rows, k, io->src + (e - e0), (size_t) k, m + (size_t)(r / RP_ROWS) * (size_t)((k + 1) / 2) * RP_ROWS);
            e += group_rows * k;
            continue;
        }
#else
        (void) full_rows; (void) group_rows;
#endif
        const int64_t kk1 = MIN(k, kk + (e1 - e));
        rp_row_values(t, R, kk, kk1, io, (size_t)(e - e0));
        e += kk1 - kk;
    }
}

static void rp_check_range(const struct ggml_tensor * t, size_t offset, size_t size) {
    GGML_ASSERT(offset % sizeof(ggml_bf16_t) == 0 && size % sizeof(ggml_bf16_t) == 0 &&
                "a repacked BF16 tensor is accessed in whole values");
    GGML_ASSERT(offset + size <= ggml_nbytes(t));
}

//
// 16-row panels (Q4_0): conversions of byte ranges
//

// what a pass over bytes [o0, o1) of the usual layout does: write bytes from
// src (or the constant fill when src is NULL), or read them into dst
struct rq_range {
    const uint8_t * src;
    uint8_t         fill;
    uint8_t *       dst;
};

// rows [r, r + rows) of a matrix (a whole panel: r a multiple of 16), from
// rows in the usual layout: the units written one after the other, in order
static void rq_put_panel(enum ggml_type type, void * m, int64_t nb, int64_t r, int64_t rows, const uint8_t * src) {
    int nh = 0, nw = 0;
    ggml_qpanel_form(type, &nh, &nw);
    const size_t bs = ggml_type_size(type), us = ggml_qpanel_unit_size(type);
    uint8_t * u = ggml_qpanel_unit(type, m, nb, r, 0);
    for (int64_t b = 0; b < nb; b++, u += us) {
        if (rows < GGML_QPANEL_ROWS) {
            memset(u, 0, us);
        }
        for (int64_t j = 0; j < rows; j++) {
            ggml_qpanel_put(nh, nw, u, (int) j, src + (size_t)(j * nb + b) * bs);
        }
    }
}

static void rq_range_apply(const struct ggml_tensor * t, size_t o0, size_t o1, const struct rq_range * io) {
    const int64_t k = t->ne[0], n = t->ne[1], nb = k / ggml_blck_size(t->type);
    int nh = 0, nw = 0;
    ggml_qpanel_form(t->type, &nh, &nw);
    const size_t  bs = ggml_type_size(t->type);
    const size_t  msize = ggml_qpanel_matrix_size(t->type, k, n);
    const size_t  row_bytes = (size_t) nb * bs;
    uint8_t blk[GGML_QPANEL_MAX_BLOCK];
    GGML_ASSERT(bs <= sizeof(blk));
    for (size_t B = o0 / bs; B * bs < o1; B++) {
        if (io->src != NULL && B * bs >= o0 && B % (size_t) nb == 0) {
            // a whole panel: packed unit by unit (a model's weights at load time)
            const int64_t R = (int64_t) B / nb, r = R % n;
            const int64_t rows = MIN((int64_t) GGML_QPANEL_ROWS, n - r);
            if (r % GGML_QPANEL_ROWS == 0 && B * bs + (size_t) rows * row_bytes <= o1) {
                rq_put_panel(t->type, (char *) t->data + (size_t)(R / n) * msize, nb, r, rows, io->src + (B * bs - o0));
                B += (size_t)(rows * nb) - 1;
                continue;
            }
        }
        // block b of row R, counted over all matrices
        const int64_t R = (int64_t) B / nb, b = (int64_t) B % nb;
        uint8_t * u = ggml_qpanel_unit(t->type, (char *) t->data + (size_t)(R / n) * msize, nb, R % n, b);
        const int j = (int)((R % n) % GGML_QPANEL_ROWS);
        const size_t lo = MAX(o0, B * bs) - B * bs;
        const size_t hi = MIN(o1, (B + 1) * bs) - B * bs;
        if (io->dst != NULL || lo != 0 || hi != bs) {
            ggml_qpanel_get(nh, nw, u, j, blk);
        }
        if (io->dst != NULL) {
            memcpy(io->dst + (B * bs + lo - o0), blk + lo, hi - lo);
            continue;
        }
        if (io->src != NULL) {
            memcpy(blk + lo, io->src + (B * bs + lo - o0), hi - lo);
        } else {
            memset(blk + lo, io->fill, hi - lo);
        }
        ggml_qpanel_put(nh, nw, u, j, blk);
    }
}

//
// buffer
//

static void * rp_buffer_get_base(ggml_backend_buffer_t buffer) {
    return buffer->context;
}

static void rp_buffer_free(ggml_backend_buffer_t buffer) {
    ggml_aligned_free(buffer->context, buffer->size);
}

static enum ggml_status rp_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    (void) buffer;
    // a view of a packed tensor would address bytes of another layout
    if (tensor->view_src != NULL && rp_packable(tensor->view_src)) {
        GGML_LOG_ERROR("%s: tensor %s: views of repacked %s tensors (%s) are not supported\n", __func__,
                       tensor->name, ggml_type_name(tensor->view_src->type), tensor->view_src->name);
        return GGML_STATUS_FAILED;
    }
    // the rows past the end of each matrix's last panel of 16 rows: zero, so
    // that the kernels meet numbers there (their results are not stored)
    if (rp_layout(tensor) == GGML_CPU_REPACK_PANELS && tensor->ne[1] % GGML_QPANEL_ROWS != 0) {
        const size_t  msize = ggml_qpanel_matrix_size(tensor->type, tensor->ne[0], tensor->ne[1]);
        const size_t  gsize = (size_t)(tensor->ne[0] / ggml_blck_size(tensor->type)) * ggml_qpanel_unit_size(tensor->type);
        const int64_t nmat  = tensor->ne[2] * tensor->ne[3];
        for (int64_t i = 0; i < nmat; i++) {
            memset((char *) tensor->data + (size_t)(i + 1) * msize - gsize, 0, gsize);
        }
    }
    return GGML_STATUS_SUCCESS;
}

static void rp_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    (void) buffer;
    GGML_ASSERT(offset + size <= ggml_nbytes(tensor));
    switch (rp_layout(tensor)) {
        case GGML_CPU_REPACK_BF16: {
            rp_check_range(tensor, offset, size);
            const struct rp_range io = { .src = NULL, .fill = (uint16_t)(value * 0x0101u), .dst = NULL };
            rp_range_apply(tensor, (int64_t)(offset / 2), (int64_t)((offset + size) / 2), &io);
        } break;
        case GGML_CPU_REPACK_PANELS: {
            const struct rq_range io = { .src = NULL, .fill = value, .dst = NULL };
            rq_range_apply(tensor, offset, offset + size, &io);
        } break;
        case GGML_CPU_REPACK_NONE:
            memset((char *) tensor->data + offset, value, size);
            break;
    }
}

static void rp_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    (void) buffer;
    GGML_ASSERT(offset + size <= ggml_nbytes(tensor));
    switch (rp_layout(tensor)) {
        case GGML_CPU_REPACK_BF16: {
            rp_check_range(tensor, offset, size);
            const struct rp_range io = { .src = (const uint16_t *) data, .fill = 0, .dst = NULL };
            rp_range_apply(tensor, (int64_t)(offset / 2), (int64_t)((offset + size) / 2), &io);
        } break;
        case GGML_CPU_REPACK_PANELS: {
            const struct rq_range io = { .src = (const uint8_t *) data, .fill = 0, .dst = NULL };
            rq_range_apply(tensor, offset, offset + size, &io);
        } break;
        case GGML_CPU_REPACK_NONE:
            memcpy((char *) tensor->data + offset, data, size);
            break;
    }
}

// the bytes of the usual layout
static void rp_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    (void) buffer;
    GGML_ASSERT(offset + size <= ggml_nbytes(tensor));
    switch (rp_layout(tensor)) {
        case GGML_CPU_REPACK_BF16: {
            rp_check_range(tensor, offset, size);
            const struct rp_range io = { .src = NULL, .fill = 0, .dst = (uint16_t *) data };
            rp_range_apply(tensor, (int64_t)(offset / 2), (int64_t)((offset + size) / 2), &io);
        } break;
        case GGML_CPU_REPACK_PANELS: {
            const struct rq_range io = { .src = NULL, .fill = 0, .dst = (uint8_t *) data };
            rq_range_apply(tensor, offset, offset + size, &io);
        } break;
        case GGML_CPU_REPACK_NONE:
            memcpy(data, (const char *) tensor->data + offset, size);
            break;
    }
}

// from any host memory
static bool rp_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    ggml_backend_buffer_t src_buf = src->view_src != NULL ? src->view_src->buffer : src->buffer;
    if (src_buf == NULL || !ggml_backend_buffer_is_host(src_buf) || !ggml_is_contiguous(src)) {
        return false;
    }
    rp_buffer_set_tensor(buffer, dst, src->data, 0, ggml_nbytes(src));
    return true;
}

// every byte the same: the same bytes in any layout (a panel unit holds the
// bytes of 16 blocks; the BF16 layout is of 16-bit values)
static void rp_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    memset(buffer->context, value, buffer->size);
}

static const struct ggml_backend_buffer_i rp_buffer_iface = {
    .free_buffer   = rp_buffer_free,
    .get_base      = rp_buffer_get_base,
    .init_tensor   = rp_buffer_init_tensor,
    .memset_tensor = rp_buffer_memset_tensor,
    .set_tensor    = rp_buffer_set_tensor,
    .get_tensor    = rp_buffer_get_tensor,
    .set_tensor_2d = NULL,
    .get_tensor_2d = NULL,
    .cpy_tensor    = rp_buffer_cpy_tensor,
    .clear         = rp_buffer_clear,
    .reset         = NULL,
};

//
// buffer type
//

// the panels are read a cache line at a time
#define RP_ALIGNMENT 64

static const char * rp_buft_get_name(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "CPU_REPACK";
}

static ggml_backend_buffer_t rp_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    void * data = ggml_aligned_malloc(size);
    if (data == NULL) {
        return NULL;
    }
    GGML_ASSERT((uintptr_t) data % RP_ALIGNMENT == 0);
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, rp_buffer_iface, data, size);
    if (buffer == NULL) {
        ggml_aligned_free(data, size);
    }
    return buffer;
}

static size_t rp_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return RP_ALIGNMENT;
}

static size_t rp_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    (void) buft;
    if (!rp_packable(tensor)) {
        return ggml_nbytes(tensor);
    }
    return ggml_cpu_repack_tensor_matrix_size(tensor) * (size_t)(tensor->ne[2] * tensor->ne[3]);
}

static bool rp_buft_is_host(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return false;
}

// .device is set once, when the type is first asked for
static struct ggml_backend_buffer_type g_rp_buft = {
    .iface = {
        .get_name       = rp_buft_get_name,
        .alloc_buffer   = rp_buft_alloc_buffer,
        .get_alignment  = rp_buft_get_alignment,
        .get_max_size   = NULL,
        .get_alloc_size = rp_buft_get_alloc_size,
        .is_host        = rp_buft_is_host,
    },
    .device  = NULL,
    .context = NULL,
};

static void rp_init(void) {
    // each layout where its kernel runs, in the kernel level in use (GGML_CPU_ISA)
#if defined(GGML_CPU_BF16_KERNEL)
    g_rp_bf16 = ggml_gemm_bf16_available() &&
                (ggml_cpu_kernels_active()->features & GGML_CPU_X86_AVX512_BF16) != 0;
#endif
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        int nh, nw;
        g_rp_panels[t] = ggml_qpanel_form((enum ggml_type) t, &nh, &nw) &&
                         ggml_cpu_kernels_active()->reads_panels((enum ggml_type) t);
    }
    g_rp_buft.device = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
}

ggml_backend_buffer_type_t ggml_backend_cpu_repack_buffer_type(void) {
    pthread_once(&g_rp_once, rp_init);
    bool any = g_rp_bf16;
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        any = any || g_rp_panels[t];
    }
    return any ? &g_rp_buft : NULL;
}

static bool rp_in_repack_buffer(const struct ggml_tensor * t) {
    return t != NULL && t->buffer != NULL && t->buffer->buft == &g_rp_buft;
}

enum ggml_cpu_repack_layout ggml_cpu_repack_layout_of(const struct ggml_tensor * t) {
    return rp_in_repack_buffer(t) ? rp_layout(t) : GGML_CPU_REPACK_NONE;
}

bool ggml_cpu_repack_is_packed(const struct ggml_tensor * t) {
    return ggml_cpu_repack_layout_of(t) != GGML_CPU_REPACK_NONE;
}

bool ggml_cpu_repack_supports_op(const struct ggml_tensor * op) {
    if (op->op != GGML_OP_MUL_MAT && op->op != GGML_OP_MUL_MAT_ID) {
        return false;
    }
    if (!ggml_cpu_repack_is_packed(op->src[0])) {
        return false;
    }
    // the activations (and expert ids) in host memory
    for (int i = 1; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * s = op->src[i];
        if (s != NULL && s->buffer != NULL && !ggml_backend_buffer_is_host(s->buffer)) {
            return false;
        }
    }
    return true;
}
