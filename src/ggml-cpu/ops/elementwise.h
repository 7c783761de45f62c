#pragma once

//
// elementwise.h: what the elementwise kernels (ops-binary.c, ops-unary.c,
// ops-glu.c) share: reading and writing row segments of any float type,
// strided or not, as float chunks, and splitting rows among threads.
//
// A kernel works on float values: a segment of a row that already holds
// contiguous F32 is used in place; any other (F16, BF16, quantized, strided)
// is converted into a stack buffer of at most GGML_EW_CHUNK floats and back.
// Each output element is computed by one thread from the same inputs with
// the same instructions whatever the number of threads, so results are
// identical for any thread count.
//

#include "simd/vec.h"

// floats per conversion buffer: a multiple of every block size and of the
// vector width, small enough for the stack and the L1 cache
#define GGML_EW_CHUNK 256

void ggml_cpu_register_ops_binary(struct ggml_cpu_op_impl * table); // ops-binary.c
void ggml_cpu_register_ops_unary (struct ggml_cpu_op_impl * table); // ops-unary.c
void ggml_cpu_register_ops_glu   (struct ggml_cpu_op_impl * table); // ops-glu.c

static inline bool ggml_ew_is_float(enum ggml_type type) {
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

// a quantized type the kernels can both read (to_float) and write (from_float_ref)
static inline bool ggml_ew_is_requantizable(enum ggml_type type) {
    const struct ggml_type_traits * tr = ggml_get_type_traits(type);
    return ggml_is_quantized(type) && tr->to_float != NULL && tr->from_float_ref != NULL;
}

// one row of a tensor: element i is at p + i*nb (for quantized types, nb is
// the size of a block of ggml_blck_size(type) elements)
struct ggml_ew_row {
    char *         p;
    size_t         nb;
    enum ggml_type type;
};

static inline struct ggml_ew_row ggml_ew_row_of(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    const struct ggml_ew_row row = {
        .p    = (char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3],
        .nb   = t->nb[0],
        .type = t->type,
    };
    return row;
}

// the segment needs no conversion: contiguous F32
static inline bool ggml_ew_row_is_direct(struct ggml_ew_row row) {
    return row.type == GGML_TYPE_F32 && row.nb == sizeof(float);
}

// Elements [j, j+n) as floats: a pointer into the row when it is direct,
// else buf (n <= GGML_EW_CHUNK) filled by conversion. For quantized rows, j
// is a multiple of the block size and n too, or j+n is the row's end.
static inline const float * ggml_ew_read(struct ggml_ew_row row, int64_t j, int64_t n, float * buf, bool ref) {
    if (ggml_ew_row_is_direct(row)) {
        return (const float *) row.p + j;
    }
    if (ggml_is_quantized(row.type)) {
        const int64_t blck = ggml_blck_size(row.type);
        ggml_get_type_traits(row.type)->to_float(row.p + (j / blck) * ggml_type_size(row.type), buf, n);
        return buf;
    }
    const char * p = row.p + j*(int64_t) row.nb;
    const size_t esize = ggml_type_size(row.type);
    switch (row.type) {
        case GGML_TYPE_F32:
            for (int64_t i = 0; i < n; i++) {
                memcpy(&buf[i], p + i*row.nb, sizeof(float));
            }
            break;
        case GGML_TYPE_F16:
            if (row.nb == esize) {
                if (ref) {
                    ggml_vec_fp16_to_fp32_ref(n, (const ggml_fp16_t *) p, buf);
                } else {
                    ggml_vec_fp16_to_fp32(n, (const ggml_fp16_t *) p, buf);
                }
            } else {
                for (int64_t i = 0; i < n; i++) {
                    buf[i] = ggml_compute_fp16_to_fp32(*(const ggml_fp16_t *)(p + i*row.nb));
                }
            }
            break;
        case GGML_TYPE_BF16:
            if (row.nb == esize) {
                if (ref) {
                    ggml_vec_bf16_to_fp32_ref(n, (const ggml_bf16_t *) p, buf);
                } else {
                    ggml_vec_bf16_to_fp32(n, (const ggml_bf16_t *) p, buf);
                }
            } else {
                for (int64_t i = 0; i < n; i++) {
                    buf[i] = ggml_compute_bf16_to_fp32(*(const ggml_bf16_t *)(p + i*row.nb));
                }
            }
            break;
        default:
            GGML_ABORT("elementwise kernels cannot read type %s", ggml_type_name(row.type));
    }
    return buf;
}

// where to compute the floats of elements [j, j+n): into the row when it is
// direct, else into buf, to be written with ggml_ew_write
static inline float * ggml_ew_out(struct ggml_ew_row row, int64_t j, float * buf) {
    return ggml_ew_row_is_direct(row) ? (float *) row.p + j : buf;
}

// store the floats of elements [j, j+n) computed at ggml_ew_out's pointer
static inline void ggml_ew_write(struct ggml_ew_row row, int64_t j, int64_t n, const float * vals, bool ref) {
    if (ggml_ew_row_is_direct(row)) {
        return; // computed in place
    }
    if (ggml_is_quantized(row.type)) {
        const int64_t blck = ggml_blck_size(row.type);
        ggml_get_type_traits(row.type)->from_float_ref(vals, row.p + (j / blck) * ggml_type_size(row.type), n);
        return;
    }
    char * p = row.p + j*(int64_t) row.nb;
    const size_t esize = ggml_type_size(row.type);
    switch (row.type) {
        case GGML_TYPE_F32:
            for (int64_t i = 0; i < n; i++) {
                memcpy(p + i*row.nb, &vals[i], sizeof(float));
            }
            break;
        case GGML_TYPE_F16:
            if (row.nb == esize) {
                if (ref) {
                    ggml_vec_fp32_to_fp16_ref(n, vals, (ggml_fp16_t *) p);
                } else {
                    ggml_vec_fp32_to_fp16(n, vals, (ggml_fp16_t *) p);
                }
            } else {
                for (int64_t i = 0; i < n; i++) {
                    *(ggml_fp16_t *)(p + i*row.nb) = ggml_compute_fp32_to_fp16(vals[i]);
                }
            }
            break;
        case GGML_TYPE_BF16:
            if (row.nb == esize) {
                if (ref) {
                    ggml_vec_fp32_to_bf16_ref(n, vals, (ggml_bf16_t *) p);
                } else {
                    ggml_vec_fp32_to_bf16(n, vals, (ggml_bf16_t *) p);
                }
            } else {
                for (int64_t i = 0; i < n; i++) {
                    *(ggml_bf16_t *)(p + i*row.nb) = ggml_compute_fp32_to_bf16(vals[i]);
                }
            }
            break;
        default:
            GGML_ABORT("elementwise kernels cannot write type %s", ggml_type_name(row.type));
    }
}

//
// work split: units are (row, column block) pairs, taken in memory order
//

struct ggml_ew_split {
    int64_t nrows; // rows of the output (ne1*ne2*ne3)
    int64_t ne0;   // elements per row
    int64_t blk;   // elements per column block (a multiple of GGML_EW_CHUNK, or ne0)
    int64_t nblk;  // column blocks per row
};

// Long rows are cut into column blocks when there are too few rows to keep
// every thread busy. Blocks start at multiples of GGML_EW_CHUNK, hence
// between the blocks of quantized rows. (The kernels give each element the
// same instructions wherever a chunk starts, so the cut changes no result.)
static inline struct ggml_ew_split ggml_ew_split_make(const struct ggml_tensor * dst, int nth) {
    const int64_t nrows = ggml_nrows(dst);
    const int64_t ne0   = dst->ne[0];
    const int64_t want  = 4 * (int64_t) nth; // units wanted, for balance
    int64_t blk = ne0;
    if (nrows < want) {
        const int64_t per_row = (want + nrows - 1) / nrows;
        blk = (ne0 + per_row - 1) / per_row;
        blk = MAX(blk, 16 * GGML_EW_CHUNK); // not worth cutting finer
        blk = (blk + GGML_EW_CHUNK - 1) / GGML_EW_CHUNK * GGML_EW_CHUNK;
        blk = MIN(blk, ne0);
    }
    const struct ggml_ew_split split = {
        .nrows = nrows,
        .ne0   = ne0,
        .blk   = MAX(blk, 1),
        .nblk  = ne0 > 0 ? (ne0 + MAX(blk, 1) - 1) / MAX(blk, 1) : 0,
    };
    return split;
}

// unit u: its row (as i1, i2, i3 of dst) and its columns [*c0, *c1)
static inline void ggml_ew_split_unit(const struct ggml_ew_split * s, const struct ggml_tensor * dst, int64_t u,
                                      int64_t * i1, int64_t * i2, int64_t * i3, int64_t * c0, int64_t * c1) {
    const int64_t row = u / s->nblk;
    const int64_t b   = u % s->nblk;
    *i1 = row % dst->ne[1];
    *i2 = (row / dst->ne[1]) % dst->ne[2];
    *i3 = row / (dst->ne[1] * dst->ne[2]);
    *c0 = b * s->blk;
    *c1 = MIN(s->ne0, *c0 + s->blk);
}
