// test-backend.c: the configurable test backend (see test-backend.h).

#include "test-backend.h"

#include "ggml-backend.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TB_DEFAULT_ALIGNMENT 32
#define TB_DEFAULT_MEMORY    ((size_t) 1 << 30)

enum tb_counter {
    TB_N_BUFFERS_ALLOC, TB_BYTES_ALLOC, TB_N_INIT_TENSOR,
    TB_N_SET, TB_N_GET, TB_N_SET_2D, TB_N_GET_2D, TB_N_SET_ASYNC, TB_N_GET_ASYNC,
    TB_BYTES_SET, TB_BYTES_GET, TB_N_MEMSET, TB_N_CLEAR, TB_N_CPY_TENSOR, TB_N_CPY_ASYNC,
    TB_N_GRAPH_COMPUTES, TB_N_NODES_COMPUTED, TB_N_SYNCHRONIZE,
    TB_N_EVENT_RECORD, TB_N_EVENT_WAIT, TB_N_EVENT_SYNCHRONIZE,
    TB_N_COUNTERS
};

// everything one registry entry owns
struct tb_context {
    struct test_backend_config  config;
    char                      * name;
    char                      * description;
    enum ggml_op              * ops;
    struct ggml_backend_reg     reg;
    struct ggml_backend_device  device;
    struct ggml_backend_buffer_type buft;
    _Atomic uint64_t            counters[TB_N_COUNTERS];
};

struct tb_buffer {
    struct tb_context * ctx;
    uint8_t * bytes;    // the storage
    uintptr_t base;     // address of byte 0 as tensors see it
    void    * reserved; // the PROT_NONE range behind base (device memory), or NULL
    size_t    reserved_size;
};

struct tb_event {
    _Atomic uint64_t n_recorded;
};

static void tb_count(struct tb_context * ctx, enum tb_counter c, uint64_t n) {
    atomic_fetch_add(&ctx->counters[c], n);
}

static void tb_fail(const char * what) {
    fprintf(stderr, "test backend: %s\n", what);
    fflush(stderr);
    abort();
}

//
// buffers
//

static void tb_buffer_free(ggml_backend_buffer_t buffer);

static bool tb_is_test_buffer(ggml_backend_buffer_t buffer) {
    return buffer != NULL && buffer->iface.free_buffer == tb_buffer_free;
}

static ggml_backend_buffer_t tb_tensor_buffer(const struct ggml_tensor * t) {
    return t->view_src != NULL ? t->view_src->buffer : t->buffer;
}

// the storage behind [tensor->data + offset, + size) of a test buffer
static uint8_t * tb_storage(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, size_t offset, size_t size) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    const uintptr_t at = (uintptr_t) tensor->data;
    if (at < tb->base || at - tb->base > buffer->size || offset > buffer->size - (at - tb->base) ||
        size > buffer->size - (at - tb->base) - offset) {
        tb_fail("access outside the buffer (is the tensor in this buffer?)");
    }
    return tb->bytes + (at - tb->base) + offset;
}

// host-visible pointer to a tensor's first byte, in any buffer this backend can reach
static uint8_t * tb_tensor_bytes(const struct ggml_tensor * t) {
    ggml_backend_buffer_t buffer = tb_tensor_buffer(t);
    if (tb_is_test_buffer(buffer)) {
        return tb_storage(buffer, t, 0, 0);
    }
    if (buffer == NULL || ggml_backend_buffer_is_host(buffer)) {
        return (uint8_t *) t->data;
    }
    tb_fail("tensor in a buffer the test backend cannot reach");
    return NULL;
}

static void tb_buffer_free(ggml_backend_buffer_t buffer) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    if (tb->reserved != NULL) {
        munmap(tb->reserved, tb->reserved_size);
    }
    free(tb->bytes);
    free(tb);
}

static void * tb_buffer_get_base(ggml_backend_buffer_t buffer) {
    return (void *) ((struct tb_buffer *) buffer->context)->base;
}

static enum ggml_status tb_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    tb_count(tb->ctx, TB_N_INIT_TENSOR, 1);
    if (tb->ctx->config.fail_init_tensor) {
        return GGML_STATUS_FAILED;
    }
    tb_storage(buffer, tensor, 0, ggml_nbytes(tensor)); // the whole tensor lies inside
    if (tensor->view_src == NULL && ((uintptr_t) tensor->data - tb->base) % tb->ctx->config.alignment != 0) {
        tb_fail("tensor placed at a misaligned address");
    }
    return GGML_STATUS_SUCCESS;
}

static void tb_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    tb_count(tb->ctx, TB_N_MEMSET, 1);
    memset(tb_storage(buffer, tensor, offset, size), value, size);
}

static void tb_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    tb_count(tb->ctx, TB_N_SET, 1);
    tb_count(tb->ctx, TB_BYTES_SET, size);
    memcpy(tb_storage(buffer, tensor, offset, size), data, size);
}

static void tb_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    tb_count(tb->ctx, TB_N_GET, 1);
    tb_count(tb->ctx, TB_BYTES_GET, size);
    memcpy(data, tb_storage(buffer, tensor, offset, size), size);
}

static void tb_buffer_set_tensor_2d(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data, size_t offset,
                                    size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    tb_count(tb->ctx, TB_N_SET_2D, 1);
    tb_count(tb->ctx, TB_BYTES_SET, size * n_copies);
    for (size_t i = 0; i < n_copies; i++) {
        memcpy(tb_storage(buffer, tensor, offset + i*stride_tensor, size), (const uint8_t *) data + i*stride_data, size);
    }
}

static void tb_buffer_get_tensor_2d(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data, size_t offset,
                                    size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    tb_count(tb->ctx, TB_N_GET_2D, 1);
    tb_count(tb->ctx, TB_BYTES_GET, size * n_copies);
    for (size_t i = 0; i < n_copies; i++) {
        memcpy((uint8_t *) data + i*stride_data, tb_storage(buffer, tensor, offset + i*stride_tensor, size), size);
    }
}

// dst is in this buffer; a source in a test buffer or in host memory is reachable
static bool tb_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    ggml_backend_buffer_t src_buf = tb_tensor_buffer(src);
    const size_t nbytes = ggml_nbytes(src);
    const uint8_t * from = NULL;
    if (tb_is_test_buffer(src_buf)) {
        from = tb_storage(src_buf, src, 0, nbytes);
    } else if (src_buf != NULL && ggml_backend_buffer_is_host(src_buf)) {
        from = (const uint8_t *) src->data;
    } else {
        return false;
    }
    tb_count(tb->ctx, TB_N_CPY_TENSOR, 1);
    memmove(tb_storage(buffer, dst, 0, nbytes), from, nbytes);
    return true;
}

static void tb_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct tb_buffer * tb = (struct tb_buffer *) buffer->context;
    tb_count(tb->ctx, TB_N_CLEAR, 1);
    memset(tb->bytes, value, buffer->size);
}

//
// buffer type
//

static struct tb_context * tb_ctx_of_buft(ggml_backend_buffer_type_t buft) {
    return (struct tb_context *) buft->context;
}

static const char * tb_buft_get_name(ggml_backend_buffer_type_t buft) {
    return tb_ctx_of_buft(buft)->name;
}

static ggml_backend_buffer_t tb_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    struct tb_context * ctx = tb_ctx_of_buft(buft);
    if (ctx->config.fail_alloc) {
        return NULL;
    }
    const size_t align = ctx->config.alignment;
    struct tb_buffer * tb = (struct tb_buffer *) calloc(1, sizeof(struct tb_buffer));
    if (tb == NULL) {
        return NULL;
    }
    tb->ctx = ctx;
    if (ctx->config.host_memory) {
        tb->bytes = (uint8_t *) aligned_alloc(align, (size + align - 1) / align * align);
        tb->base  = (uintptr_t) tb->bytes;
    } else {
        // addresses nothing can dereference: a range reserved without access
        tb->bytes         = (uint8_t *) calloc(1, size);
        tb->reserved_size = size + align;
        void * range = mmap(NULL, tb->reserved_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        tb->reserved = range == MAP_FAILED ? NULL : range;
        tb->base = ((uintptr_t) tb->reserved + align - 1) / align * align;
    }
    if (tb->bytes == NULL || (!ctx->config.host_memory && tb->reserved == NULL)) {
        if (tb->reserved != NULL) {
            munmap(tb->reserved, tb->reserved_size);
        }
        free(tb->bytes);
        free(tb);
        return NULL;
    }
    const struct ggml_backend_buffer_i iface = {
        .free_buffer   = tb_buffer_free,
        .get_base      = tb_buffer_get_base,
        .init_tensor   = tb_buffer_init_tensor,
        .memset_tensor = tb_buffer_memset_tensor,
        .set_tensor    = tb_buffer_set_tensor,
        .get_tensor    = tb_buffer_get_tensor,
        .set_tensor_2d = ctx->config.buffer_2d ? tb_buffer_set_tensor_2d : NULL,
        .get_tensor_2d = ctx->config.buffer_2d ? tb_buffer_get_tensor_2d : NULL,
        .cpy_tensor    = ctx->config.no_buffer_cpy ? NULL : tb_buffer_cpy_tensor,
        .clear         = tb_buffer_clear,
        .reset         = NULL,
    };
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, iface, tb, size);
    if (buffer == NULL) {
        tb_buffer_free(&(struct ggml_backend_buffer) { .context = tb });
        return NULL;
    }
    tb_count(ctx, TB_N_BUFFERS_ALLOC, 1);
    tb_count(ctx, TB_BYTES_ALLOC, size);
    return buffer;
}

static size_t tb_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    return tb_ctx_of_buft(buft)->config.alignment;
}

static size_t tb_buft_get_max_size(ggml_backend_buffer_type_t buft) {
    return tb_ctx_of_buft(buft)->config.max_buffer_size;
}

static size_t tb_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    return ggml_nbytes(tensor) + tb_ctx_of_buft(buft)->config.alloc_padding;
}

static bool tb_buft_is_host(ggml_backend_buffer_type_t buft) {
    return tb_ctx_of_buft(buft)->config.host_memory;
}

//
// computing
//

static float tb_load(const struct ggml_tensor * t, const uint8_t * p) {
    switch (t->type) {
        case GGML_TYPE_F32: { float v; memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_F16: { ggml_fp16_t v; memcpy(&v, p, sizeof(v)); return ggml_fp16_to_fp32(v); }
        default: tb_fail("unsupported element type"); return 0.0f;
    }
}

static void tb_store(const struct ggml_tensor * t, uint8_t * p, float v) {
    switch (t->type) {
        case GGML_TYPE_F32: memcpy(p, &v, sizeof(v)); break;
        case GGML_TYPE_F16: { const ggml_fp16_t h = ggml_fp32_to_fp16(v); memcpy(p, &h, sizeof(h)); } break;
        default: tb_fail("unsupported element type");
    }
}

static size_t tb_offset(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (size_t) i0*t->nb[0] + (size_t) i1*t->nb[1] + (size_t) i2*t->nb[2] + (size_t) i3*t->nb[3];
}

// dst = src0 op src1, src1 repeated to src0's shape; sums off by add_error (relative)
static void tb_binary(struct ggml_tensor * dst, bool mul, float add_error) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const uint8_t * pa = tb_tensor_bytes(a);
    const uint8_t * pb = tb_tensor_bytes(b);
    uint8_t * pd = tb_tensor_bytes(dst);
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
        const float x = tb_load(a, pa + tb_offset(a, i0, i1, i2, i3));
        const float y = tb_load(b, pb + tb_offset(b, i0 % b->ne[0], i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]));
        tb_store(dst, pd + tb_offset(dst, i0, i1, i2, i3), mul ? x*y : (x + y) * (1.0f + add_error));
    }
}

static void tb_scale(struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    float s;
    float bias;
    memcpy(&s,    &dst->op_params[0], sizeof(s));
    memcpy(&bias, &dst->op_params[1], sizeof(bias));
    const uint8_t * pa = tb_tensor_bytes(a);
    uint8_t * pd = tb_tensor_bytes(dst);
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
        const float x = tb_load(a, pa + tb_offset(a, i0, i1, i2, i3));
        tb_store(dst, pd + tb_offset(dst, i0, i1, i2, i3), s*x + bias);
    }
}

// element k (in row-major order of the logical shape) of src goes to element k of dst
static void tb_copy_elements(const struct ggml_tensor * src, struct ggml_tensor * dst) {
    if (ggml_nelements(src) != ggml_nelements(dst)) {
        tb_fail("copy between tensors with different element counts");
    }
    const uint8_t * ps = tb_tensor_bytes(src);
    uint8_t * pd = tb_tensor_bytes(dst);
    const int64_t n = ggml_nelements(src);
    for (int64_t k = 0; k < n; k++) {
        int64_t s0, s1, s2, s3, d0, d1, d2, d3;
        ggml_unravel_index(src, k, &s0, &s1, &s2, &s3);
        ggml_unravel_index(dst, k, &d0, &d1, &d2, &d3);
        tb_store(dst, pd + tb_offset(dst, d0, d1, d2, d3), tb_load(src, ps + tb_offset(src, s0, s1, s2, s3)));
    }
}

// dst[i0, i1] = sum_k src0[k, i0] * src1[k, i1], src0 broadcast over dims 2 and 3
static void tb_mul_mat(struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const uint8_t * pa = tb_tensor_bytes(a);
    const uint8_t * pb = tb_tensor_bytes(b);
    uint8_t * pd = tb_tensor_bytes(dst);
    const int64_t r2 = b->ne[2] / a->ne[2];
    const int64_t r3 = b->ne[3] / a->ne[3];
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < dst->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
        double sum = 0.0;
        for (int64_t k = 0; k < a->ne[0]; k++) {
            sum += (double) tb_load(a, pa + tb_offset(a, k, i0, i2 / r2, i3 / r3)) *
                   (double) tb_load(b, pb + tb_offset(b, k, i1, i2, i3));
        }
        tb_store(dst, pd + tb_offset(dst, i0, i1, i2, i3), (float) sum);
    }
}

// dst row (i1, i2, i3) = src0 row rows[i1, i2, i3] of matrix (i2, i3)
static void tb_get_rows(struct ggml_tensor * dst) {
    const struct ggml_tensor * a    = dst->src[0];
    const struct ggml_tensor * rows = dst->src[1];
    const uint8_t * pa = tb_tensor_bytes(a);
    const uint8_t * pr = tb_tensor_bytes(rows);
    uint8_t * pd = tb_tensor_bytes(dst);
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
        int32_t r;
        memcpy(&r, pr + tb_offset(rows, i1, i2, i3, 0), sizeof(r));
        if (r < 0 || r >= a->ne[1]) {
            tb_fail("get_rows index out of range");
        }
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            tb_store(dst, pd + tb_offset(dst, i0, i1, i2, i3), tb_load(a, pa + tb_offset(a, i0, r, i2, i3)));
        }
    }
}

// dst = src0 (unless in place) with src1 written into the window of strides
// nb1, nb2, nb3 at byte offset (op params); F32 only, src0 contiguous
static void tb_set(struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    int32_t p[5];
    memcpy(p, dst->op_params, sizeof(p));
    uint8_t * pd = tb_tensor_bytes(dst);
    if (!p[4]) {
        memcpy(pd, tb_tensor_bytes(a), ggml_nbytes(dst));
    }
    const uint8_t * pb = tb_tensor_bytes(b);
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < b->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < b->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < b->ne[0]; i0++) {
        const size_t at = (size_t) p[3] + (size_t) i0 * sizeof(float) + (size_t) i1 * (size_t) p[0] +
                          (size_t) i2 * (size_t) p[1] + (size_t) i3 * (size_t) p[2];
        tb_store(dst, pd + at, tb_load(b, pb + tb_offset(b, i0, i1, i2, i3)));
    }
}

static bool tb_is_float(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16;
}

// what the compute code handles
static bool tb_can_compute(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    switch (op->op) {
        case GGML_OP_NONE:
        case GGML_OP_RESHAPE:
        case GGML_OP_VIEW:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE:
            return true;
        case GGML_OP_ADD:
        case GGML_OP_MUL:
            return op->type == GGML_TYPE_F32 && a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32 &&
                   ggml_are_same_shape(op, a) && ggml_can_repeat(b, a);
        case GGML_OP_SCALE:
            return op->type == GGML_TYPE_F32 && a->type == GGML_TYPE_F32 && ggml_are_same_shape(op, a);
        case GGML_OP_DUP:
        case GGML_OP_CONT:
        case GGML_OP_CPY:
            return tb_is_float(op->type) && tb_is_float(a->type) && ggml_nelements(op) == ggml_nelements(a);
        case GGML_OP_MUL_MAT:
            return op->type == GGML_TYPE_F32 && tb_is_float(a->type) && b->type == GGML_TYPE_F32 &&
                   a->ne[0] == b->ne[0] && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0;
        case GGML_OP_GET_ROWS:
            return op->type == GGML_TYPE_F32 && tb_is_float(a->type) && b->type == GGML_TYPE_I32;
        case GGML_OP_SET:
            return op->type == GGML_TYPE_F32 && a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32 && ggml_is_contiguous(a);
        default:
            return false;
    }
}

static void tb_compute_node(const struct test_backend_config * config, struct ggml_tensor * node) {
    switch (node->op) {
        case GGML_OP_ADD:      tb_binary(node, false, config->add_error); break;
        case GGML_OP_MUL:      tb_binary(node, true, 0.0f); break;
        case GGML_OP_SCALE:    tb_scale(node); break;
        case GGML_OP_DUP:
        case GGML_OP_CONT:
        case GGML_OP_CPY:      tb_copy_elements(node->src[0], node); break;
        case GGML_OP_MUL_MAT:  tb_mul_mat(node); break;
        case GGML_OP_GET_ROWS: tb_get_rows(node); break;
        case GGML_OP_SET:      tb_set(node); break;
        default: tb_fail("op not supported by the test backend");
    }
}

//
// backend (stream)
//

static struct tb_context * tb_ctx_of_backend(ggml_backend_t backend) {
    return (struct tb_context *) backend->device->context;
}

static const char * tb_backend_get_name(ggml_backend_t backend) {
    return tb_ctx_of_backend(backend)->name;
}

static void tb_backend_free(ggml_backend_t backend) {
    free(backend);
}

static void tb_backend_set_tensor_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    struct tb_context * ctx = tb_ctx_of_backend(backend);
    ggml_backend_buffer_t buffer = tb_tensor_buffer(tensor);
    tb_count(ctx, TB_N_SET_ASYNC, 1);
    tb_count(ctx, TB_BYTES_SET, size);
    if (tb_is_test_buffer(buffer)) {
        memcpy(tb_storage(buffer, tensor, offset, size), data, size);
    } else {
        memcpy((uint8_t *) tensor->data + offset, data, size);
    }
}

static void tb_backend_get_tensor_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    struct tb_context * ctx = tb_ctx_of_backend(backend);
    ggml_backend_buffer_t buffer = tb_tensor_buffer(tensor);
    tb_count(ctx, TB_N_GET_ASYNC, 1);
    tb_count(ctx, TB_BYTES_GET, size);
    if (tb_is_test_buffer(buffer)) {
        memcpy(data, tb_storage(buffer, tensor, offset, size), size);
    } else {
        memcpy(data, (const uint8_t *) tensor->data + offset, size);
    }
}

static void tb_backend_set_tensor_2d_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data, size_t offset,
                                           size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data) {
    for (size_t i = 0; i < n_copies; i++) {
        tb_backend_set_tensor_async(backend, tensor, (const uint8_t *) data + i*stride_data, offset + i*stride_tensor, size);
    }
}

static void tb_backend_get_tensor_2d_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data, size_t offset,
                                           size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data) {
    for (size_t i = 0; i < n_copies; i++) {
        tb_backend_get_tensor_async(backend, tensor, (uint8_t *) data + i*stride_data, offset + i*stride_tensor, size);
    }
}

// between any two test buffers, or from host memory into a test buffer
static bool tb_backend_cpy_tensor_async(ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    (void) backend_src;
    ggml_backend_buffer_t dst_buf = tb_tensor_buffer(dst);
    ggml_backend_buffer_t src_buf = tb_tensor_buffer(src);
    if (!tb_is_test_buffer(dst_buf) || !(tb_is_test_buffer(src_buf) || ggml_backend_buffer_is_host(src_buf))) {
        return false;
    }
    const size_t nbytes = ggml_nbytes(src);
    const uint8_t * from = tb_is_test_buffer(src_buf) ? tb_storage(src_buf, src, 0, nbytes) : (const uint8_t *) src->data;
    memmove(tb_storage(dst_buf, dst, 0, nbytes), from, nbytes);
    tb_count(tb_ctx_of_backend(backend_dst), TB_N_CPY_ASYNC, 1);
    return true;
}

static void tb_backend_synchronize(ggml_backend_t backend) {
    tb_count(tb_ctx_of_backend(backend), TB_N_SYNCHRONIZE, 1);
}

// can this device compute on t where t is? its own memory, and host memory
// only when its own memory is host memory too (a device with memory of its
// own, like a GPU, reaches neither host memory nor another device's)
static bool tb_reachable(const struct tb_context * ctx, const struct ggml_tensor * t) {
    ggml_backend_buffer_t buffer = tb_tensor_buffer(t);
    if (buffer == NULL) {
        return true; // not allocated: nothing is read or written
    }
    if (tb_is_test_buffer(buffer) && ((const struct tb_buffer *) buffer->context)->ctx == ctx) {
        return true;
    }
    return ctx->config.host_memory && ggml_backend_buffer_is_host(buffer);
}

static enum ggml_status tb_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct tb_context * ctx = tb_ctx_of_backend(backend);
    tb_count(ctx, TB_N_GRAPH_COMPUTES, 1);
    const int n_nodes = ggml_graph_n_nodes(cgraph);
    for (int i = 0; i < n_nodes; i++) {
        struct ggml_tensor * node = ggml_graph_node(cgraph, i);
        if (ggml_is_empty(node) || node->op == GGML_OP_NONE || node->op == GGML_OP_RESHAPE || node->op == GGML_OP_VIEW ||
            node->op == GGML_OP_PERMUTE || node->op == GGML_OP_TRANSPOSE || (node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
            continue;
        }
        if (ctx->config.skip_compute) {
            tb_count(ctx, TB_N_NODES_COMPUTED, 1);
            continue;
        }
        if (!tb_can_compute(node)) {
            fprintf(stderr, "test backend %s: cannot compute node %s (%s)\n", ctx->name, node->name, ggml_op_desc(node));
            return GGML_STATUS_FAILED;
        }
        for (int j = -1; j < GGML_MAX_SRC; j++) {
            const struct ggml_tensor * t = j < 0 ? node : node->src[j];
            if (t != NULL && !tb_reachable(ctx, t)) {
                fprintf(stderr, "test backend %s: node %s (%s): tensor %s is in memory it cannot reach (%s)\n", ctx->name,
                        node->name, ggml_op_desc(node), t->name, ggml_backend_buffer_name(tb_tensor_buffer(t)));
                return GGML_STATUS_FAILED;
            }
        }
        if (ctx->config.fail_op != GGML_OP_NONE && node->op == ctx->config.fail_op) {
            return GGML_STATUS_FAILED; // a fault asked for by the configuration
        }
        tb_compute_node(&ctx->config, node);
        tb_count(ctx, TB_N_NODES_COMPUTED, 1);
    }
    return GGML_STATUS_SUCCESS;
}

static void tb_backend_event_record(ggml_backend_t backend, ggml_backend_event_t event) {
    tb_count(tb_ctx_of_backend(backend), TB_N_EVENT_RECORD, 1);
    // the stream runs its work as it is queued: the event is complete at once
    atomic_fetch_add(&((struct tb_event *) event->context)->n_recorded, 1);
}

static void tb_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event) {
    tb_count(tb_ctx_of_backend(backend), TB_N_EVENT_WAIT, 1);
    (void) event;
}

//
// device
//

static struct tb_context * tb_ctx_of_dev(ggml_backend_dev_t dev) {
    return (struct tb_context *) dev->context;
}

static const char * tb_dev_get_name(ggml_backend_dev_t dev) {
    return tb_ctx_of_dev(dev)->name;
}

static const char * tb_dev_get_description(ggml_backend_dev_t dev) {
    return tb_ctx_of_dev(dev)->description;
}

static void tb_dev_get_memory(ggml_backend_dev_t dev, size_t * free_mem, size_t * total) {
    *free_mem = tb_ctx_of_dev(dev)->config.memory_total;
    *total    = tb_ctx_of_dev(dev)->config.memory_total;
}

static enum ggml_backend_dev_type tb_dev_get_type(ggml_backend_dev_t dev) {
    return tb_ctx_of_dev(dev)->config.type;
}

static void tb_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    const struct tb_context * ctx = tb_ctx_of_dev(dev);
    props->name         = ctx->name;
    props->description  = ctx->description;
    props->memory_free  = ctx->config.memory_total;
    props->memory_total = ctx->config.memory_total;
    props->type         = ctx->config.type;
    props->caps = (struct ggml_backend_dev_caps) {
        .async                = ctx->config.async,
        .host_buffer          = false,
        .buffer_from_host_ptr = false,
        .events               = ctx->config.events,
        .mmap_support         = false,
    };
}

static ggml_backend_t tb_dev_init_backend(ggml_backend_dev_t dev, const char * params) {
    (void) params;
    struct tb_context * ctx = tb_ctx_of_dev(dev);
    static ggml_guid guid = { 0x74, 0x65, 0x73, 0x74, 0x2d, 0x62, 0x61, 0x63, 0x6b, 0x65, 0x6e, 0x64, 0x00, 0x00, 0x00, 0x01 };
    ggml_backend_t backend = (ggml_backend_t) malloc(sizeof(struct ggml_backend));
    if (backend == NULL) {
        return NULL;
    }
    const bool async  = ctx->config.async;
    const bool events = ctx->config.events;
    *backend = (struct ggml_backend) {
        .guid  = &guid,
        .iface = {
            .get_name            = tb_backend_get_name,
            .free                = tb_backend_free,
            .set_tensor_async    = async ? tb_backend_set_tensor_async : NULL,
            .get_tensor_async    = async ? tb_backend_get_tensor_async : NULL,
            .set_tensor_2d_async = async ? tb_backend_set_tensor_2d_async : NULL,
            .get_tensor_2d_async = async ? tb_backend_get_tensor_2d_async : NULL,
            .cpy_tensor_async    = async ? tb_backend_cpy_tensor_async : NULL,
            .synchronize         = tb_backend_synchronize,
            .graph_plan_create   = NULL,
            .graph_plan_free     = NULL,
            .graph_plan_update   = NULL,
            .graph_plan_compute  = NULL,
            .graph_compute       = tb_backend_graph_compute,
            .event_record        = events ? tb_backend_event_record : NULL,
            .event_wait          = events ? tb_backend_event_wait : NULL,
            .graph_optimize      = NULL,
        },
        .device  = dev,
        .context = ctx,
    };
    return backend;
}

static ggml_backend_buffer_type_t tb_dev_get_buffer_type(ggml_backend_dev_t dev) {
    return &tb_ctx_of_dev(dev)->buft;
}

static bool tb_type_allowed(const struct tb_context * ctx, const struct ggml_tensor * t) {
    return t->type < 64 && (ctx->config.types & ((uint64_t) 1 << t->type)) != 0;
}

static bool tb_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    const struct tb_context * ctx = tb_ctx_of_dev(dev);
    if (!ctx->config.skip_compute && !tb_can_compute(op)) {
        return false;
    }
    if (ctx->ops != NULL) {
        bool listed = false;
        for (size_t i = 0; i < ctx->config.n_ops && !listed; i++) {
            listed = ctx->ops[i] == op->op;
        }
        if (!listed) {
            return false;
        }
    }
    if (!tb_type_allowed(ctx, op)) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (op->src[i] != NULL && !tb_type_allowed(ctx, op->src[i])) {
            return false;
        }
    }
    return ctx->config.supports_op_extra == NULL || ctx->config.supports_op_extra(op, ctx->config.user_data);
}

static bool tb_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    const struct tb_context * ctx = tb_ctx_of_dev(dev);
    return buft == &ctx->buft || (ctx->config.host_memory && ggml_backend_buft_is_host(buft));
}

static bool tb_dev_offload_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    return op->ne[1] >= tb_ctx_of_dev(dev)->config.offload_min_batch;
}

static ggml_backend_event_t tb_dev_event_new(ggml_backend_dev_t dev) {
    struct tb_event * ev = (struct tb_event *) calloc(1, sizeof(struct tb_event));
    ggml_backend_event_t event = (ggml_backend_event_t) malloc(sizeof(struct ggml_backend_event));
    if (ev == NULL || event == NULL) {
        free(ev);
        free(event);
        return NULL;
    }
    *event = (struct ggml_backend_event) { .device = dev, .context = ev };
    return event;
}

static void tb_dev_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event) {
    (void) dev;
    free(event->context);
    free(event);
}

static void tb_dev_event_synchronize(ggml_backend_dev_t dev, ggml_backend_event_t event) {
    (void) event;
    tb_count(tb_ctx_of_dev(dev), TB_N_EVENT_SYNCHRONIZE, 1);
}

//
// registry entry
//

static struct tb_context * tb_ctx_of_reg(ggml_backend_reg_t reg) {
    return (struct tb_context *) reg->context;
}

static const char * tb_reg_get_name(ggml_backend_reg_t reg) {
    return tb_ctx_of_reg(reg)->name;
}

static size_t tb_reg_get_device_count(ggml_backend_reg_t reg) {
    (void) reg;
    return 1;
}

static ggml_backend_dev_t tb_reg_get_device(ggml_backend_reg_t reg, size_t index) {
    if (index != 0) {
        tb_fail("device index out of range");
    }
    return &tb_ctx_of_reg(reg)->device;
}

static void * tb_reg_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    (void) reg;
    // function pointers travel through void * as their bytes (ISO C has no cast between them)
    void * result = NULL;
    if (strcmp(name, "test_backend_get_counters") == 0) {
        const test_backend_get_counters_t fn = test_backend_get_counters;
        memcpy(&result, &fn, sizeof(result));
    } else if (strcmp(name, "test_backend_reset_counters") == 0) {
        const test_backend_reset_counters_t fn = test_backend_reset_counters;
        memcpy(&result, &fn, sizeof(result));
    }
    return result;
}

static char * tb_strdup(const char * s) {
    const size_t n = strlen(s) + 1;
    char * copy = (char *) malloc(n);
    if (copy != NULL) {
        memcpy(copy, s, n);
    }
    return copy;
}

ggml_backend_reg_t test_backend_reg_new(const struct test_backend_config * config) {
    struct tb_context * ctx = (struct tb_context *) calloc(1, sizeof(struct tb_context));
    if (ctx == NULL) {
        return NULL;
    }
    ctx->config = *config;
    struct test_backend_config * cfg = &ctx->config;
    cfg->alignment    = cfg->alignment    != 0 ? cfg->alignment    : TB_DEFAULT_ALIGNMENT;
    cfg->memory_total = cfg->memory_total != 0 ? cfg->memory_total : TB_DEFAULT_MEMORY;
    cfg->types        = cfg->types        != 0 ? cfg->types
                      : ((uint64_t) 1 << GGML_TYPE_F32) | ((uint64_t) 1 << GGML_TYPE_F16) | ((uint64_t) 1 << GGML_TYPE_I32);
    if ((cfg->alignment & (cfg->alignment - 1)) != 0) {
        tb_fail("alignment must be a power of two");
    }
    ctx->name        = tb_strdup(cfg->name != NULL ? cfg->name : "Test");
    ctx->description = tb_strdup(cfg->description != NULL ? cfg->description : "test backend");
    if (cfg->ops != NULL) {
        ctx->ops = (enum ggml_op *) malloc((cfg->n_ops + 1) * sizeof(enum ggml_op));
        if (ctx->ops != NULL) {
            memcpy(ctx->ops, cfg->ops, cfg->n_ops * sizeof(enum ggml_op));
        }
    }
    if (ctx->name == NULL || ctx->description == NULL || (cfg->ops != NULL && ctx->ops == NULL)) {
        free(ctx->name);
        free(ctx->description);
        free(ctx->ops);
        free(ctx);
        return NULL;
    }
    cfg->name        = ctx->name;
    cfg->description = ctx->description;
    cfg->ops         = ctx->ops;

    ctx->buft = (struct ggml_backend_buffer_type) {
        .iface = {
            .get_name       = tb_buft_get_name,
            .alloc_buffer   = tb_buft_alloc_buffer,
            .get_alignment  = tb_buft_get_alignment,
            .get_max_size   = cfg->max_buffer_size != 0 ? tb_buft_get_max_size : NULL,
            .get_alloc_size = cfg->alloc_padding   != 0 ? tb_buft_get_alloc_size : NULL,
            .is_host        = tb_buft_is_host,
        },
        .device  = &ctx->device,
        .context = ctx,
    };
    ctx->device = (struct ggml_backend_device) {
        .iface = {
            .get_name             = tb_dev_get_name,
            .get_description      = tb_dev_get_description,
            .get_memory           = tb_dev_get_memory,
            .get_type             = tb_dev_get_type,
            .get_props            = tb_dev_get_props,
            .init_backend         = tb_dev_init_backend,
            .get_buffer_type      = tb_dev_get_buffer_type,
            .get_host_buffer_type = NULL,
            .buffer_from_host_ptr = NULL,
            .supports_op          = tb_dev_supports_op,
            .supports_buft        = tb_dev_supports_buft,
            .offload_op           = cfg->offload_min_batch > 0 ? tb_dev_offload_op : NULL,
            .event_new            = cfg->events ? tb_dev_event_new : NULL,
            .event_free           = cfg->events ? tb_dev_event_free : NULL,
            .event_synchronize    = cfg->events ? tb_dev_event_synchronize : NULL,
        },
        .reg     = &ctx->reg,
        .context = ctx,
    };
    ctx->reg = (struct ggml_backend_reg) {
        .api_version = GGML_BACKEND_API_VERSION,
        .iface = {
            .get_name         = tb_reg_get_name,
            .get_device_count = tb_reg_get_device_count,
            .get_device       = tb_reg_get_device,
            .get_proc_address = tb_reg_get_proc_address,
        },
        .context = ctx,
    };
    return &ctx->reg;
}

void test_backend_reg_free(ggml_backend_reg_t reg) {
    if (reg == NULL) {
        return;
    }
    struct tb_context * ctx = tb_ctx_of_reg(reg);
    free(ctx->name);
    free(ctx->description);
    free(ctx->ops);
    free(ctx);
}

ggml_backend_dev_t test_backend_device(ggml_backend_reg_t reg) {
    return &tb_ctx_of_reg(reg)->device;
}

bool test_backend_is_test_device(ggml_backend_dev_t dev) {
    return dev != NULL && dev->iface.get_name == tb_dev_get_name;
}

void test_backend_get_counters(ggml_backend_dev_t dev, struct test_backend_counters * counters) {
    if (!test_backend_is_test_device(dev)) {
        tb_fail("not a test backend device");
    }
    struct tb_context * ctx = tb_ctx_of_dev(dev);
    uint64_t v[TB_N_COUNTERS];
    for (int i = 0; i < TB_N_COUNTERS; i++) {
        v[i] = atomic_load(&ctx->counters[i]);
    }
    *counters = (struct test_backend_counters) {
        .n_buffers_alloc     = v[TB_N_BUFFERS_ALLOC],
        .bytes_alloc         = v[TB_BYTES_ALLOC],
        .n_init_tensor       = v[TB_N_INIT_TENSOR],
        .n_set               = v[TB_N_SET],
        .n_get               = v[TB_N_GET],
        .n_set_2d            = v[TB_N_SET_2D],
        .n_get_2d            = v[TB_N_GET_2D],
        .n_set_async         = v[TB_N_SET_ASYNC],
        .n_get_async         = v[TB_N_GET_ASYNC],
        .bytes_set           = v[TB_BYTES_SET],
        .bytes_get           = v[TB_BYTES_GET],
        .n_memset            = v[TB_N_MEMSET],
        .n_clear             = v[TB_N_CLEAR],
        .n_cpy_tensor        = v[TB_N_CPY_TENSOR],
        .n_cpy_async         = v[TB_N_CPY_ASYNC],
        .n_graph_computes    = v[TB_N_GRAPH_COMPUTES],
        .n_nodes_computed    = v[TB_N_NODES_COMPUTED],
        .n_synchronize       = v[TB_N_SYNCHRONIZE],
        .n_event_record      = v[TB_N_EVENT_RECORD],
        .n_event_wait        = v[TB_N_EVENT_WAIT],
        .n_event_synchronize = v[TB_N_EVENT_SYNCHRONIZE],
    };
}

void test_backend_reset_counters(ggml_backend_dev_t dev) {
    if (!test_backend_is_test_device(dev)) {
        tb_fail("not a test backend device");
    }
    struct tb_context * ctx = tb_ctx_of_dev(dev);
    for (int i = 0; i < TB_N_COUNTERS; i++) {
        atomic_store(&ctx->counters[i], 0);
    }
}
