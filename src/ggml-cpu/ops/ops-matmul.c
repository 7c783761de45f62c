// ops-matmul.c: MUL_MAT, MUL_MAT_ID and OUT_PROD.
//
// A matrix product meets weight rows (src0, rows contiguous) with activation
// columns (src1, any strides). The activations are first brought into the
// form the kernels read ("act"): F32 rows for float weights (rounded to F16 /
// BF16 when that is the weights' vec_dot_type, as upstream does), Q8_0 / Q8_1 / Q8_K
// rows for quantized weights, or q8 panels (gemm.h) for the int8 tile kernel.
// Then the result is cut into chunks that the threads take dynamically:
//  - few columns (generation, small batches): chunks of weight rows; each
//    row block is streamed once through the weight type's row dot (several
//    rows and a few columns per step; further columns find the block in L2).
//  - many columns (prompt): chunks of (row block x column block); the row
//    block is converted (float) or packed (quantized) into a per-thread panel
//    once, then the register-blocked tile kernels of gemm.h walk it, k block
//    by k block, for every column of the chunk.
// BF16 weights of a CPU_REPACK buffer (repack.h) are already in the
// BF16 tile kernel's panels: they take it for any number of columns (with
// the narrower tiles of few columns for generation), and pack nothing.
// Q4_0 weights of such a buffer are in panels of 16 rows (panels.h): few
// columns take the panel kernel (dot_panels, with the sums of the activation
// blocks computed once per column); many columns unpack each row of a chunk
// and pack it into the q8 panel as usual.
// Every kernel comes from the kernel configuration of the variant in use
// (kernel-config.h: per weight type the row dot, the activation quantizer,
// the q8 panel packer and tile; which float tiles run), the portable ones
// with use_ref; nothing here tests a CPU feature.
// Each result is computed by the same sequence of operations whatever the
// chunking (the kernels guarantee it for their tiles; k blocks are fixed), so
// results do not depend on the number of threads.
//
// The conversion of src1: when src1 is large, the threads convert disjoint
// columns into a shared area and meet at a barrier inside the node before
// any uses them; when it is small (below MM_SHARED_CONVERT_VALUES values,
// e.g. the one column of generation) each thread converts all of it into its
// own area and no barrier is needed: repeating a few microseconds of work
// costs less than making every thread wait for the slowest.

#include <math.h>

#include "kernels/gemm.h"
#include "kernels/gemm-bf16.h"
#include "kernels/repack.h"
#include "kernels/panels.h"
#include "kernels/quants-dot.h"
#include "kernels/kernel-config.h"
#include "ggml-quants.h"

// columns from which the tile kernels beat dot_rows (which meets a few
// columns per pass over rows that stay in L2): packing the weights must pay
// for itself. Measured on AVX-512 (k = n = 4096, one thread): the int8 tile
// kernel wins from 6 columns, the float one from 8 for F32 weights; F16 and
// BF16 rows, half the bytes, keep up with it until about 24.
#define MM_GEMM_MIN_COLS_Q   6
#define MM_GEMM_MIN_COLS_F32 8
#define MM_GEMM_MIN_COLS_F16 24
// k block of the float tile kernel (8 KiB of each row and column): fewer k
// blocks, fewer horizontal sums and C updates (measured, F32 m=k=4096 n=512,
// one thread, by CPU time: 2048 about 8% faster than 1024; 4096 slower)
#define MM_KC_F32 2048
// k block of the BF16 tile kernel (4 KiB of each row and column); it must be even
#define MM_KC_BF16 2048
// k block of the int8 tile kernel, in values
#define MM_KC_Q8 4096
// rows of a float tile chunk, and the row stride of its panel (129 lines)
#define MM_RB_F32 64
#define MM_LDA_F32 (MM_KC_F32 + 16)
// bytes of a per-thread q8 weight panel (it should stay in L2)
#define MM_PANEL_BYTES (512 * 1024)
// bytes of weights of the last dot_rows chunks of a matrix (mm_rows_split)
#ifndef MM_ROWS_TAIL_BYTES
#define MM_ROWS_TAIL_BYTES (256 * 1024)
#endif
// src1 values from which the threads share the conversion (with a barrier)
#define MM_SHARED_CONVERT_VALUES (16 * 1024)

static bool mm_is_quant(enum ggml_type t) {
    return t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_0 ||
           t == GGML_TYPE_Q5_1 || t == GGML_TYPE_Q8_0;
}

// the K-quants and the table formats meet Q8_K / Q8_0 rows through dot_rows;
// those with a q8 panel form (gemm.h) take the tile kernels for many columns
// (the configuration has a packer for them, in both kernel families)
static bool mm_has_panel(enum ggml_type t) {
    return ggml_cpu_type_kernels(t, false)->pack_weights != NULL;
}

static bool mm_is_kquant(enum ggml_type t) {
    return t == GGML_TYPE_Q2_K || t == GGML_TYPE_Q3_K || t == GGML_TYPE_Q4_K ||
           t == GGML_TYPE_Q5_K || t == GGML_TYPE_Q6_K ||
           t == GGML_TYPE_IQ4_NL || t == GGML_TYPE_IQ4_XS || t == GGML_TYPE_MXFP4 ||
           t == GGML_TYPE_TQ1_0 || t == GGML_TYPE_TQ2_0 ||
           t == GGML_TYPE_IQ2_XXS || t == GGML_TYPE_IQ2_XS || t == GGML_TYPE_IQ2_S ||
           t == GGML_TYPE_IQ3_XXS || t == GGML_TYPE_IQ3_S || t == GGML_TYPE_IQ1_S || t == GGML_TYPE_IQ1_M ||
           t == GGML_TYPE_Q1_0 || t == GGML_TYPE_Q2_0 || t == GGML_TYPE_NVFP4;
}

static bool mm_weight_type_supported(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16 || mm_is_quant(t) || mm_is_kquant(t);
}

static size_t mm_pad(size_t n) {
    return GGML_PAD(n, GGML_CPU_CACHE_LINE);
}

// the stride of rows that the tile kernels read many at a time: an odd
// number of cache lines, so that rows do not all fall into the same cache
// sets (a power-of-two stride makes a few sets thrash)
static size_t mm_row_stride(size_t n) {
    const size_t lines = GGML_PAD(n, GGML_CPU_CACHE_LINE) / GGML_CPU_CACHE_LINE;
    return (lines | 1) * GGML_CPU_CACHE_LINE;
}

//
// what a node asks for, and where its scratch memory goes
//

struct mm_op {
    const struct ggml_tensor * w;    // src0: weights
    const struct ggml_tensor * x;    // src1: activations
    const struct ggml_tensor * ids;  // MUL_MAT_ID: the experts per token; NULL for MUL_MAT
    struct ggml_tensor * dst;

    enum ggml_type vdt;              // vec_dot_type of the weights
    bool    quant;
    bool    packed_w;                // BF16 weights already packed for the tile kernel (repack.h)
    bool    panels;                  // quantized weights in 16-row panels (panels.h)
    int64_t k, n;                    // values per row, weight rows
    int64_t n_x_cols;                // columns of src1: ne11*ne12*ne13
    int64_t max_cols;                // most columns one group of the product can have
    int64_t n_as, n_map;             // MUL_MAT_ID: experts, entries of ids
    int64_t min_gemm_cols;           // groups with this many columns take the tile kernels

    // the forms of src1 the kernels may need (a form "in place" is src1 itself)
    bool   need_f32, f32_in_place;   // F32 rows: float weights
    bool   need_q8,  q8_in_place;    // rows of vdt: quantized weights, few columns
    bool   need_q8p;                 // q8 panels: quantized weights, many columns
    bool   need_bf16;                // BF16 rows: BF16 weights, many columns, BF16 dot products
    size_t f32_stride, q8_stride, q8p_stride, bf16_stride;
    size_t ys_stride;                // the block sums of a Q8_0 column (panels, few columns)
    bool   shared;                   // converted by all threads together (barrier)

    int64_t rb_q8;                   // rows of a q8 weight panel

    // scratch memory: [shared act area] [thread area] x n_threads, where a
    // thread area is [private act area] [scratch]
    size_t act_f32, act_q8, act_q8p, act_bf16, act_ys, act_size;  // offsets / size of an act area
    size_t tmp_f32, tmp_row, panel, packed, ptrs, map;  // offsets in a thread area
    size_t shared_size, thread_size;
};

static void mm_op_init(struct mm_op * op, struct ggml_tensor * dst) {
    const struct ggml_tensor * w = dst->src[0];
    const struct ggml_tensor * x = dst->src[1];
    const bool is_id = dst->op == GGML_OP_MUL_MAT_ID;

    op->w   = w;
    op->x   = x;
    op->ids = is_id ? dst->src[2] : NULL;
    op->dst = dst;

    op->vdt      = ggml_get_type_traits_cpu(w->type)->vec_dot_type;
    op->quant    = mm_is_quant(w->type) || mm_is_kquant(w->type);
    op->packed_w = ggml_cpu_repack_layout_of(w) == GGML_CPU_REPACK_BF16;
    op->panels   = ggml_cpu_repack_layout_of(w) == GGML_CPU_REPACK_PANELS;
    op->k        = w->ne[0];
    op->n        = w->ne[1];
    op->n_x_cols = x->ne[1] * x->ne[2] * x->ne[3];
    op->n_as     = is_id ? w->ne[2] : 0;
    op->n_map    = is_id ? op->ids->ne[0] * op->ids->ne[1] : 0;
    op->max_cols = is_id ? op->n_map : x->ne[1];

    // with ids, an expert may get few or many columns: keep room for both paths;
    // packed weights take the tile kernel for any number of columns (it has
    // tiles of 1 to 6 columns), as there is no packing left to pay for
    op->min_gemm_cols = op->packed_w ? 1 :
                        op->quant && !mm_has_panel(w->type) ? INT64_MAX :
                        op->quant ? MM_GEMM_MIN_COLS_Q : w->type == GGML_TYPE_F32 ? MM_GEMM_MIN_COLS_F32 : MM_GEMM_MIN_COLS_F16;
    const bool may_rows = is_id || x->ne[1] <  op->min_gemm_cols;
    const bool may_gemm = (is_id && (!op->quant || mm_has_panel(w->type))) || x->ne[1] >= op->min_gemm_cols;

    // the tile kernel reads its columns from the act area (at a friendly stride)
    op->need_f32     = !op->quant;
    op->f32_in_place = op->need_f32 && !may_gemm && w->type == GGML_TYPE_F32 && x->type == GGML_TYPE_F32 &&
                       x->nb[0] == sizeof(float);
    op->need_q8      = op->quant && may_rows;
    op->q8_in_place  = op->need_q8 && x->type == op->vdt;
    op->need_q8p     = op->quant && may_gemm;
    // the BF16 kernel when the CPU has it; F32 rows stay for use_ref and few columns
    op->need_bf16    = w->type == GGML_TYPE_BF16 && may_gemm && ggml_cpu_kconf.gemm_bf16;

    op->f32_stride = mm_row_stride(op->k * sizeof(float));
    op->q8_stride  = mm_pad(ggml_row_size(op->quant ? op->vdt : GGML_TYPE_F32, op->k));
    op->q8p_stride = !op->quant ? 0 : mm_row_stride(ggml_q8p_has_halves(w->type) ? ggml_q8p2_row_size(op->k) : ggml_q8p_row_size(op->k));
    op->bf16_stride = op->need_bf16 ? mm_row_stride((op->k + 1) * sizeof(ggml_bf16_t)) : 0;
    op->ys_stride  = op->panels && op->need_q8 && ggml_qpanel_wants_sums(w->type) ?
                     mm_pad((size_t)(op->k / QK8_0) * sizeof(int32_t)) : 0;

    size_t act = 0;
    op->act_f32 = act; act += op->need_f32 && !op->f32_in_place ? op->n_x_cols * op->f32_stride : 0;
    op->act_q8  = act; act += op->need_q8  && !op->q8_in_place  ? op->n_x_cols * op->q8_stride  : 0;
    op->act_q8p = act; act += op->need_q8p                      ? op->n_x_cols * op->q8p_stride : 0;
    op->act_bf16 = act; act += op->n_x_cols * op->bf16_stride;
    op->act_ys  = act; act += op->n_x_cols * op->ys_stride;
    op->act_size = act;
    op->shared   = act > 0 && op->n_x_cols * op->k >= MM_SHARED_CONVERT_VALUES;

    op->rb_q8 = 0;
    if (op->need_q8p) {
        const int64_t rb = (int64_t)(MM_PANEL_BYTES / op->q8p_stride);
        op->rb_q8 = MAX(4, MIN(256, rb - rb % 4));
    }

    // the F32 weight panel of the float tile kernel, or the q8 panel
    size_t panel = 0;
    if (op->need_f32 && may_gemm) {
        panel = (size_t) MM_RB_F32 * MM_LDA_F32 * sizeof(float);
    }
    if (op->need_q8p) {
        panel = (size_t) op->rb_q8 * op->q8p_stride;
    }

    size_t t = op->shared ? 0 : act;
    op->tmp_f32 = t; t += mm_pad(op->k * sizeof(float));                          // gathered src1 column
    op->tmp_row = t; t += mm_pad(MAX(MAX(op->q8_stride, op->k * sizeof(ggml_fp16_t)),  // its F16 / BF16 / Q8 form,
                                     op->panels ? ggml_row_size(w->type, op->k) : 0)); // or a row out of its panel
    op->panel   = t; t += mm_pad(panel);
    // the float weights packed for the packed kernel (gemm.h)
    // (BF16 weights: as pairs for the BF16 kernel)
    const bool packed = op->need_f32 && may_gemm && ggml_cpu_kconf.gemm_f32_packed;
    size_t packed_size = packed ? (size_t) GGML_PAD(MM_RB_F32, GGML_F32P_ROWS) * MM_KC_F32 * sizeof(float) : 0;
    if (op->need_bf16) {
        packed_size = MAX(packed_size, (size_t) GGML_PAD(MM_RB_F32, 64) * (MM_KC_BF16 / 2) * sizeof(uint32_t));
    }
    op->packed  = t; t += mm_pad(packed_size);
    op->ptrs    = t; t += mm_pad(3 * op->max_cols * sizeof(void *));              // column pointers of a chunk
    op->map     = t; t += mm_pad((2*op->n_as + 2) * sizeof(int64_t) + op->n_map * 2 * sizeof(int32_t));
    op->thread_size = t;
    op->shared_size = op->shared ? mm_pad(act) : 0;
}

//
// columns of src1 and their forms
//

// src1 column c (c = i11 + ne11*(i12 + ne12*i13)) in src1
static const char * mm_x_col(const struct mm_op * op, int64_t c) {
    const struct ggml_tensor * x = op->x;
    const int64_t i11 = c % x->ne[1];
    const int64_t i12 = (c / x->ne[1]) % x->ne[2];
    const int64_t i13 = c / (x->ne[1] * x->ne[2]);
    return (const char *) x->data + i11*x->nb[1] + i12*x->nb[2] + i13*x->nb[3];
}

struct mm_act {
    char * f32;   // bases of the converted forms
    char * q8;
    char * q8p;
    char * bf16;
    char * ys;
};

static const float * mm_act_f32(const struct mm_op * op, const struct mm_act * act, int64_t c) {
    return op->f32_in_place ? (const float *) mm_x_col(op, c) : (const float *)(act->f32 + c*op->f32_stride);
}

static const void * mm_act_q8(const struct mm_op * op, const struct mm_act * act, int64_t c) {
    return op->q8_in_place ? (const void *) mm_x_col(op, c) : (const void *)(act->q8 + c*op->q8_stride);
}

static const int32_t * mm_act_ys(const struct mm_op * op, const struct mm_act * act, int64_t c) {
    return (const int32_t *)(act->ys + c*op->ys_stride);
}

static const void * mm_act_q8p(const struct mm_op * op, const struct mm_act * act, int64_t c) {
    return act->q8p + c*op->q8p_stride;
}

static const void * mm_act_bf16(const struct mm_op * op, const struct mm_act * act, int64_t c) {
    return act->bf16 + c*op->bf16_stride;
}

// src1 column as contiguous F32 (src1 itself when it is that already)
static const float * mm_x_col_f32(const struct mm_op * op, int64_t c, float * tmp) {
    const struct ggml_tensor * x = op->x;
    const char * src = mm_x_col(op, c);
    if (x->type == GGML_TYPE_F32 && x->nb[0] == sizeof(float)) {
        return (const float *) src;
    }
    for (int64_t i = 0; i < op->k; i++) {
        const char * p = src + i*x->nb[0];
        switch (x->type) {
            case GGML_TYPE_F32:  tmp[i] = *(const float *) p; break;
            case GGML_TYPE_F16:  tmp[i] = ggml_compute_fp16_to_fp32(*(const ggml_fp16_t *) p); break;
            case GGML_TYPE_BF16: tmp[i] = ggml_compute_bf16_to_fp32(*(const ggml_bf16_t *) p); break;
            default: GGML_ABORT("unexpected src1 type %s", ggml_type_name(x->type));
        }
    }
    return tmp;
}

// src1 column c into every form the product needs
static void mm_convert_col(const struct mm_op * op, const struct mm_act * act, int64_t c,
                           char * thr, bool want_f32, bool want_q8, bool want_q8p, bool want_ys, bool want_bf16,
                           bool use_ref) {
    float * tmp_f32 = (float *)(thr + op->tmp_f32);
    void  * tmp_row = thr + op->tmp_row;
    const int64_t k = op->k;

    if (want_bf16) {
        // rounded as the F32 rows below are (the vec_dot_type, BF16); the
        // kernel reads pairs: an odd row gets a zero after its end
        ggml_bf16_t * out = (ggml_bf16_t *)(act->bf16 + c*op->bf16_stride);
        ggml_vec_fp32_to_bf16(k, mm_x_col_f32(op, c, tmp_f32), out);
        if (k % 2 != 0) {
            out[k].bits = 0;
        }
    }
    if (op->need_f32 && !op->f32_in_place && want_f32) {
        float * out = (float *)(act->f32 + c*op->f32_stride);
        const float * xf = mm_x_col_f32(op, c, tmp_f32);
        // F32 activations of F16 / BF16 weights carry the rounding of the
        // vec_dot_type (upstream multiplies in that type)
        if (op->w->type == GGML_TYPE_F16 && op->x->type == GGML_TYPE_F32) {
            if (use_ref) {
                ggml_vec_fp32_to_fp16_ref(k, xf, (ggml_fp16_t *) tmp_row);
                ggml_vec_fp16_to_fp32_ref(k, (const ggml_fp16_t *) tmp_row, out);
            } else {
                ggml_vec_fp32_to_fp16(k, xf, (ggml_fp16_t *) tmp_row);
                ggml_vec_fp16_to_fp32(k, (const ggml_fp16_t *) tmp_row, out);
            }
        } else if (op->w->type == GGML_TYPE_BF16 && op->x->type == GGML_TYPE_F32) {
            if (use_ref) {
                ggml_vec_fp32_to_bf16_ref(k, xf, (ggml_bf16_t *) tmp_row);
                ggml_vec_bf16_to_fp32_ref(k, (const ggml_bf16_t *) tmp_row, out);
            } else {
                ggml_vec_fp32_to_bf16(k, xf, (ggml_bf16_t *) tmp_row);
                ggml_vec_bf16_to_fp32(k, (const ggml_bf16_t *) tmp_row, out);
            }
        } else if (xf != out) {
            memcpy(out, xf, (size_t) k * sizeof(float));
        }
    }

    if (!op->quant || !(want_q8 || want_q8p || want_ys)) {
        return;
    }
    // the Q8 row: src1 itself, the converted rows, or the scratch row
    const void * q8 = NULL;
    if (op->x->type == op->vdt) {
        q8 = mm_x_col(op, c);
    } else {
        void * out = want_q8 ? (void *)(act->q8 + c*op->q8_stride) : tmp_row;
        ggml_cpu_type_kernels(op->w->type, use_ref)->quantize_act(mm_x_col_f32(op, c, tmp_f32), out, k);
        q8 = out;
    }
    if (want_ys) {
        ggml_qpanel_q8_0_sums((const block_q8_0 *) q8, k / QK8_0, (int32_t *) mm_act_ys(op, act, c));
    }
    if (want_q8p) {
        if (ggml_q8p_has_halves(op->w->type)) {
            ggml_q8p2_pack_act(op->w->type, q8, k, act->q8p + c*op->q8p_stride);
        } else {
            ggml_q8p_pack_act(op->vdt, q8, k, act->q8p + c*op->q8p_stride);
        }
    }
}

//
// groups: the products of one weight matrix with its columns
//

struct mm_group {
    const char *    w;       // weight matrix
    int64_t         ncols;
    // MUL_MAT: the src1 / dst matrix (i12, i13); MUL_MAT_ID: the columns' (slot, token) pairs
    int64_t         i12, i13;
    const int32_t * pairs;
};

// column j of group g: its src1 column and its destination
static int64_t mm_group_col(const struct mm_op * op, const struct mm_group * g, int64_t j, float ** pdst) {
    const struct ggml_tensor * dst = op->dst;
    if (op->ids == NULL) {
        *pdst = (float *)((char *) dst->data + j*dst->nb[1] + g->i12*dst->nb[2] + g->i13*dst->nb[3]);
        return j + op->x->ne[1]*(g->i12 + op->x->ne[2]*g->i13);
    }
    const int64_t slot  = g->pairs[2*j + 0];
    const int64_t token = g->pairs[2*j + 1];
    *pdst = (float *)((char *) dst->data + slot*dst->nb[1] + token*dst->nb[2]);
    return slot % op->x->ne[1] + op->x->ne[1]*token;
}

static bool mm_group_uses_gemm(const struct mm_op * op, const struct mm_group * g) {
    return g->ncols >= op->min_gemm_cols;
}

// the chunks of a group: row blocks x column blocks. Row block i is the rows
// [b(i), b(i + 1)): b(i) = min(n, round_up(n (1 - q^i), unit)) for the first
// geo blocks, then blocks of tail rows. With geo = 0 the blocks are all tail rows.
struct mm_split {
    int64_t n, unit, geo, tail;  // rows, the multiple of rows blocks start on, blocks of the two phases
    double  lq;                  // log q
    int64_t tail0;               // b(geo): the first row of the tail blocks
    int64_t cols;                // per chunk
    int64_t n_row_blocks, n_col_blocks;
};

// b(i) of the first phase, i <= geo
static int64_t mm_split_geo_row(const struct mm_split * s, int64_t i) {
    if (i == 0) {
        return 0;
    }
    const double  done = (double) s->n * (1.0 - exp((double) i * s->lq));
    const int64_t r    = ((int64_t) ceil(done) + s->unit - 1) / s->unit * s->unit;
    return MIN(s->n, r);
}

// the first row of row block i of s (n past the last); an exp() only in the
// first phase's few blocks (one for every chunk cost about 16 us a 2048x8
// token: two calls per chunk, some 200 chunks)
static int64_t mm_split_row(const struct mm_split * s, int64_t i) {
    if (i <= s->geo) {
        return mm_split_geo_row(s, i);
    }
    return MIN(s->n, s->tail0 + (i - s->geo) * s->tail);
}

// the row blocks of the row dots (few columns: every weight read once, in a
// few long streams per chunk), guided by what is left: with nth threads
// each block is 1/(2 nth) of the rows not yet handed out (the first a quarter
// of the matrix with 2 threads), down to MM_ROWS_TAIL_BYTES of weights, then
// blocks of that size. The large first blocks keep the streams long (every
// block starts its weight streams from cold: about 0.7 us on a 2-core Zen 5,
// 4 streams); the small last ones leave little to wait for when one thread is
// slower than the other (another process, its share of the memory). Before,
// with 2 equal blocks per thread, a thread waited for the other 0.55-1.6 ms
// per token of a 2048x8 llama in Q4_K_M on the 2-core Zen 3 host
// (ggml-run --bench --profile, waiting), 0.15-0.7 with the tail 64 or 128
// KiB, 0.3-0.55 with 256 KiB (fewer starts: the least kernel time of the three).
// n_mats: the matrices a chunk reads those rows of (2 for the gate and up
// products of ggml_cpu_forward_mul_mat_glu), so that its tail chunks read
// MM_ROWS_TAIL_BYTES in all
static void mm_rows_split(const struct mm_op * op, int nth, int n_mats, struct mm_split * s) {
    const int64_t m    = op->panels ? 4 * GGML_QPANEL_ROWS : 4;
    const int64_t rb   = (int64_t)(MM_ROWS_TAIL_BYTES / MAX((size_t) 1, (size_t) n_mats * ggml_row_size(op->w->type, op->k)));
    const int64_t tail = MAX(m, MIN(1024, rb - rb % m));
    s->n    = op->n;
    s->unit = m;
    s->tail = tail;
    s->geo  = 0;
    s->lq   = 0.0;
    if (nth > 1) {
        // a block of the first phase is n q^i (1 - q) rows, rounded to whole
        // units: at least 2 tail rows keeps the blocks nonempty and above the tail
        const double f = 1.0 / (2.0 * nth);
        s->lq = log1p(-f);
        const double first = (double) op->n * f;
        if (first >= 2.0 * (double) tail) {
            s->geo = (int64_t) floor(log(2.0 * (double) tail / first) / s->lq) + 1;
        }
    } else {
        // one thread waits for nobody: the matrix in one block
        s->tail = MAX(tail, (op->n + m - 1) / m * m);
    }
    s->tail0 = mm_split_geo_row(s, s->geo);
    s->n_row_blocks = s->geo + (op->n - s->tail0 + s->tail - 1) / s->tail;
}

static int64_t mm_gemm_rows(const struct mm_op * op) {
    return op->quant ? op->rb_q8 : MM_RB_F32;
}

static struct mm_split mm_group_split(const struct mm_op * op, const struct mm_group * g, int64_t n_groups, int nth) {
    struct mm_split s = { 0 };
    s.cols = g->ncols;
    if (!mm_group_uses_gemm(op, g)) {
        mm_rows_split(op, nth, 1, &s);
    } else {
        const int64_t rows = mm_gemm_rows(op);
        // few row blocks in all: split the columns too, so that every thread has work
        const int64_t nrb = (op->n + rows - 1) / rows;
        const int64_t want = 4 * (int64_t) nth;
        if (nrb * n_groups < want) {
            const int64_t ncb = MIN(g->ncols, (want + nrb * n_groups - 1) / (nrb * n_groups));
            // whole column groups of the tiles (12: a multiple of every RN)
            s.cols = MIN(g->ncols, GGML_PAD((g->ncols + ncb - 1) / ncb, 12));
        }
        s.n    = op->n;
        s.unit = rows;
        s.tail = rows;
        s.n_row_blocks = nrb;
    }
    s.n_col_blocks = (g->ncols + s.cols - 1) / s.cols;
    return s;
}

//
// chunk kernels
//

static void mm_chunk_rows(const struct mm_op * op, const struct mm_act * act, const struct mm_group * g,
                          int64_t r0, int64_t r1, char * thr, bool use_ref) {
    const void **    ycol  = (const void **)(thr + op->ptrs);
    float **         scol  = (float **)(ycol + op->max_cols);
    const int32_t ** yscol = (const int32_t **)(scol + op->max_cols);
    for (int64_t j = 0; j < g->ncols; j++) {
        float * d;
        const int64_t c = mm_group_col(op, g, j, &d);
        ycol[j] = op->quant ? mm_act_q8(op, act, c) : (const void *) mm_act_f32(op, act, c);
        scol[j] = d + r0;
        yscol[j] = op->ys_stride > 0 ? mm_act_ys(op, act, c) : NULL;
    }
    if (op->panels) {
        // r0 is a multiple of 16: chunks are whole panels
        const int64_t nb = op->k / ggml_blck_size(op->w->type);
        const char * panels = (const char *) ggml_qpanel_unit(op->w->type, (void *) g->w, nb, r0, 0);
        ggml_cpu_type_kernels(op->w->type, use_ref)->dot_panels(nb, panels, (r1 - r0 + GGML_QPANEL_ROWS - 1) / GGML_QPANEL_ROWS,
                                                                r1 - r0, ycol, yscol, scol, g->ncols);
        return;
    }
    const size_t nb01 = op->w->nb[1];
    ggml_cpu_type_kernels(op->w->type, use_ref)->dot_rows(op->k, g->w + r0*nb01, nb01, r1 - r0, ycol, scol, g->ncols);
}

// weight rows [r0, r1) x [kb, kb + kc) as F32 rows MM_LDA_F32 values apart
static void mm_panel_f32(const struct mm_op * op, const struct mm_group * g, int64_t r0, int64_t r1,
                         int64_t kb, int64_t kc, float * panel, bool use_ref) {
    if (op->packed_w) {
        ggml_cpu_repack_rows_to_f32((const uint32_t *) g->w, op->k, r0, r1, kb, kc, panel, MM_LDA_F32);
        return;
    }
    for (int64_t r = r0; r < r1; r++) {
        const char * row = g->w + r*op->w->nb[1];
        float * out = panel + (r - r0)*MM_LDA_F32;
        if (op->w->type == GGML_TYPE_F32) {
            memcpy(out, (const float *) row + kb, (size_t) kc * sizeof(float));
        } else if (op->w->type == GGML_TYPE_F16) {
            (use_ref ? ggml_vec_fp16_to_fp32_ref : ggml_vec_fp16_to_fp32)(kc, (const ggml_fp16_t *) row + kb, out);
        } else {
            (use_ref ? ggml_vec_bf16_to_fp32_ref : ggml_vec_bf16_to_fp32)(kc, (const ggml_bf16_t *) row + kb, out);
        }
    }
}

static void mm_chunk_gemm(const struct mm_op * op, const struct mm_act * act, const struct mm_group * g,
                          int64_t r0, int64_t r1, int64_t j0, int64_t j1, char * thr, bool use_ref) {
    const int64_t ncols = j1 - j0;
    const int64_t nrows = r1 - r0;
    const void ** bcol = (const void **)(thr + op->ptrs);
    const void ** bk   = bcol + op->max_cols;
    float **      ccol = (float **)(bk + op->max_cols);
    const bool    bf16 = op->need_bf16 && !use_ref;

    for (int64_t j = 0; j < ncols; j++) {
        float * d;
        const int64_t c = mm_group_col(op, g, j0 + j, &d);
        ccol[j] = d + r0;
        bcol[j] = op->quant ? mm_act_q8p(op, act, c) : bf16 ? mm_act_bf16(op, act, c) : (const void *) mm_act_f32(op, act, c);
    }

#if defined(GGML_CPU_BF16_KERNEL)
    if (bf16 && op->packed_w) {
        // packed once, at load time: the k blocks of the chunk's groups of
        // rows (r0 is a multiple of 64: chunks are MM_RB_F32 rows)
        const size_t np = (size_t)(op->k + 1) / 2;
        const uint32_t * groups = (const uint32_t *) g->w + (size_t)(r0 / GGML_CPU_REPACK_ROWS) * np * GGML_CPU_REPACK_ROWS;
        for (int64_t kb = 0; kb < op->k; kb += MM_KC_BF16) {
            const int64_t kc = MIN(MM_KC_BF16, op->k - kb);
            for (int64_t j = 0; j < ncols; j++) {
                bk[j] = (const uint16_t *) bcol[j] + kb;
            }
            ggml_gemm_bf16p(nrows, ncols, kc, groups + (size_t)(kb / 2) * GGML_CPU_REPACK_ROWS, np, bk, ccol, kb > 0);
        }
        return;
    }
    if (bf16) {
        // BF16 weight rows packed as pairs, k block by k block
        uint32_t * panel = (uint32_t *)(thr + op->packed);
        for (int64_t kb = 0; kb < op->k; kb += MM_KC_BF16) {
            const int64_t kc = MIN(MM_KC_BF16, op->k - kb);
            ggml_gemm_bf16p_pack(nrows, kc, (const uint16_t *)(g->w + r0*op->w->nb[1]) + kb, op->w->nb[1] / sizeof(uint16_t), panel);
            for (int64_t j = 0; j < ncols; j++) {
                bk[j] = (const uint16_t *) bcol[j] + kb;
            }
            ggml_gemm_bf16p(nrows, ncols, kc, panel, (size_t)(kc + 1) / 2, bk, ccol, kb > 0);
        }
        return;
    }
#endif

    if (op->quant) {
        const struct ggml_cpu_type_kernels * tk = ggml_cpu_type_kernels(op->w->type, use_ref);
        char * panel = thr + op->panel;
        const size_t lda = op->q8p_stride;
        for (int64_t r = r0; r < r1; r++) {
            const char * row = g->w + r*op->w->nb[1];
            if (op->panels) {
                // the row out of its panel, in the usual layout
                char * tmp = thr + op->tmp_row;
                ggml_qpanel_get_row(op->w->type, g->w, op->k / ggml_blck_size(op->w->type), r, tmp);
                row = tmp;
            }
            tk->pack_weights(row, op->k, panel + (r - r0)*lda);
        }
        const bool    halves = ggml_q8p_has_halves(op->w->type);
        const size_t  sbb = halves ? GGML_Q8P2_SB_BYTES : GGML_Q8P_SB_BYTES;
        const int64_t nsb = (op->k/32 + GGML_Q8P_LANES - 1) / GGML_Q8P_LANES;
        const int64_t ksb = MM_KC_Q8 / (32 * GGML_Q8P_LANES);
        for (int64_t s0 = 0; s0 < nsb; s0 += ksb) {
            for (int64_t j = 0; j < ncols; j++) {
                bk[j] = (const char *) bcol[j] + s0*sbb;
            }
            tk->gemm(nrows, ncols, MIN(ksb, nsb - s0), panel + s0*sbb, lda, bk, ccol, s0 > 0);
        }
        return;
    }

    // the packed kernel where it is built (the portable path keeps the dot-product tile)
    const bool packed = !use_ref && ggml_cpu_kconf.gemm_f32_packed;
    for (int64_t kb = 0; kb < op->k; kb += MM_KC_F32) {
        const int64_t kc = MIN(MM_KC_F32, op->k - kb);
        for (int64_t j = 0; j < ncols; j++) {
            bk[j] = (const float *) bcol[j] + kb;
        }
        // F32 rows: the weights themselves when packing, else converted (or
        // copied, for a contiguous panel with a friendly stride)
        const float * rows = (const float *)(g->w + r0*op->w->nb[1]) + kb;
        size_t lda = op->w->nb[1] / sizeof(float);
        if (!packed || op->w->type != GGML_TYPE_F32) {
            float * panel = (float *)(thr + op->panel);
            mm_panel_f32(op, g, r0, r1, kb, kc, panel, use_ref);
            rows = panel;
            lda  = MM_LDA_F32;
        }
        if (packed) {
            float * pp = (float *)(thr + op->packed);
            ggml_gemm_f32p_pack(nrows, kc, rows, lda, pp);
            ggml_gemm_f32p(nrows, ncols, kc, pp, bk, ccol, kb > 0);
        } else {
            ggml_gemm_f32(nrows, ncols, kc, rows, lda, bk, ccol, kb > 0, use_ref);
        }
    }
}

//
// the forward pass shared by MUL_MAT and MUL_MAT_ID
//

// weight matrix (i02, i03): packed matrices follow each other
static const char * mm_weight_matrix(const struct mm_op * op, int64_t i02, int64_t i03) {
    const struct ggml_tensor * w = op->w;
    if (op->packed_w || op->panels) {
        return (const char *) w->data + (size_t)(i02 + i03*w->ne[2]) * ggml_cpu_repack_tensor_matrix_size(w);
    }
    return (const char *) w->data + i02*w->nb[2] + i03*w->nb[3];
}

// MUL_MAT_ID: the (slot, token) pairs of each expert, in token order; counts
// and offsets in cnt[0..n_as) and off[0..n_as]
static void mm_map_experts(const struct mm_op * op, int64_t * cnt, int64_t * off, int32_t * pairs) {
    const struct ggml_tensor * ids = op->ids;
    memset(cnt, 0, (size_t) op->n_as * sizeof(int64_t));
    for (int64_t t = 0; t < ids->ne[1]; t++) {
        for (int64_t s = 0; s < ids->ne[0]; s++) {
            const int32_t e = *(const int32_t *)((const char *) ids->data + s*ids->nb[0] + t*ids->nb[1]);
            GGML_ASSERT(e >= 0 && e < op->n_as && "expert id out of range");
            cnt[e]++;
        }
    }
    off[0] = 0;
    for (int64_t e = 0; e < op->n_as; e++) {
        off[e + 1] = off[e] + cnt[e];
        cnt[e] = 0;
    }
    for (int64_t t = 0; t < ids->ne[1]; t++) {
        for (int64_t s = 0; s < ids->ne[0]; s++) {
            const int32_t e = *(const int32_t *)((const char *) ids->data + s*ids->nb[0] + t*ids->nb[1]);
            int32_t * p = pairs + 2*(off[e] + cnt[e]++);
            p[0] = (int32_t) s;
            p[1] = (int32_t) t;
        }
    }
}

static void mm_zero_dst(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const int64_t nr = ggml_nrows(dst);
    int64_t r0, r1;
    ggml_cpu_split_range(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % dst->ne[1];
        const int64_t i2 = (r / dst->ne[1]) % dst->ne[2];
        const int64_t i3 = r / (dst->ne[1] * dst->ne[2]);
        memset((char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3], 0, (size_t) dst->ne[0] * sizeof(float));
    }
}

static void mm_forward(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct mm_op op;
    mm_op_init(&op, dst);

    if (op.k == 0) {
        mm_zero_dst(params, dst);
        return;
    }

    const int  ith     = params->ith;
    const int  nth     = params->nth;
    const bool use_ref = params->use_ref;
    GGML_ASSERT(params->wsize >= op.shared_size + (size_t) nth * op.thread_size);

    char * wdata = (char *) params->wdata;
    char * thr   = wdata + op.shared_size + (size_t) ith * op.thread_size;
    char * actb  = op.shared ? wdata : thr;
    const struct mm_act act = {
        .f32  = actb + op.act_f32,
        .q8   = actb + op.act_q8,
        .q8p  = actb + op.act_q8p,
        .bf16 = actb + op.act_bf16,
        .ys   = actb + op.act_ys,
    };

    // groups: one per src1 matrix, or one per expert
    int64_t n_groups;
    int64_t * cnt = NULL, * off = NULL;
    int32_t * pairs = NULL;
    bool want_q8 = false, want_q8p = false, want_rows = false;
    if (op.ids != NULL) {
        cnt   = (int64_t *)(thr + op.map);
        off   = cnt + op.n_as;
        pairs = (int32_t *)(off + op.n_as + 1);
        mm_map_experts(&op, cnt, off, pairs);
        for (int64_t e = 0; e < op.n_as; e++) {
            const int64_t m = off[e + 1] - off[e];
            want_q8   = want_q8   || (m > 0 && m < op.min_gemm_cols);
            want_q8p  = want_q8p  || m >= op.min_gemm_cols;
            want_rows = want_rows || (m > 0 && m < op.min_gemm_cols);
        }
        n_groups = op.n_as;
    } else {
        want_q8   = op.need_q8;
        want_q8p  = op.need_q8p;
        want_rows = op.x->ne[1] < op.min_gemm_cols;
        n_groups  = op.x->ne[2] * op.x->ne[3];
    }
    // the Q4_0 panels' kernel takes the sums of the activation blocks
    const bool want_ys = op.ys_stride > 0 && want_q8;
    want_q8 = want_q8 && !op.q8_in_place;
    // float weights: BF16 rows for the BF16 kernel, F32 rows for the others
    const bool want_bf16 = op.need_bf16 && !use_ref;
    const bool want_f32  = !want_bf16 || want_rows;

    // bring src1 into the kernels' forms
    if (op.act_size > 0) {
        int64_t c0 = 0, c1 = op.n_x_cols;
        if (op.shared) {
            ggml_cpu_split_range(op.n_x_cols, ith, nth, &c0, &c1);
        }
        for (int64_t c = c0; c < c1; c++) {
            mm_convert_col(&op, &act, c, thr, want_f32, want_q8, want_q8p, want_ys, want_bf16, use_ref);
        }
        if (op.shared) {
            ggml_cpu_barrier(params->threadpool);
        }
    }

    // the chunks of all groups, numbered group after group
    const int64_t r2 = op.ids ? 1 : op.x->ne[2] / op.w->ne[2];
    const int64_t r3 = op.ids ? 1 : op.x->ne[3] / op.w->ne[3];
    struct mm_group g = { 0 };
    struct mm_split sp = { 0 };
    int64_t g_first = 0, g_count = 0;  // chunks of the current group
    int64_t gi = -1;

    for (int64_t chunk = ggml_cpu_next_chunk(params); ; chunk = ggml_cpu_next_chunk(params)) {
        // chunks grow with the group index: walk forward to chunk's group
        while (chunk >= g_first + g_count) {
            g_first += g_count;
            g_count = 0;
            if (++gi >= n_groups) {
                return;
            }
            if (op.ids) {
                g.w     = mm_weight_matrix(&op, gi, 0);
                g.ncols = off[gi + 1] - off[gi];
                g.pairs = pairs + 2*off[gi];
            } else {
                g.i12   = gi % op.x->ne[2];
                g.i13   = gi / op.x->ne[2];
                g.w     = mm_weight_matrix(&op, g.i12/r2, g.i13/r3);
                g.ncols = op.x->ne[1];
            }
            if (g.ncols > 0) {
                sp = mm_group_split(&op, &g, n_groups, nth);
                g_count = sp.n_row_blocks * sp.n_col_blocks;
            }
        }
        // the chunks are taken in order, so a thread never needs an earlier group again
        const int64_t local = chunk - g_first;
        const int64_t r0 = mm_split_row(&sp, local % sp.n_row_blocks);
        const int64_t r1 = mm_split_row(&sp, local % sp.n_row_blocks + 1);
        const int64_t j0 = (local / sp.n_row_blocks) * sp.cols;
        const int64_t j1 = MIN(g.ncols, j0 + sp.cols);
        if (mm_group_uses_gemm(&op, &g)) {
            mm_chunk_gemm(&op, &act, &g, r0, r1, j0, j1, thr, use_ref);
        } else {
            mm_chunk_rows(&op, &act, &g, r0, r1, thr, use_ref);
        }
    }
}

static bool mm_supports(const struct ggml_tensor * op) {
    const struct ggml_tensor * w = op->src[0];
    const struct ggml_tensor * x = op->src[1];
    if (!mm_weight_type_supported(w->type) || op->type != GGML_TYPE_F32 || op->nb[0] != sizeof(float)) {
        return false;
    }
    const enum ggml_type vdt = ggml_get_type_traits_cpu(w->type)->vec_dot_type;
    if (x->type != GGML_TYPE_F32 && x->type != vdt) {
        return false;
    }
    // weight rows must be contiguous; quantized activations come in whole blocks
    if (w->nb[0] != ggml_type_size(w->type)) {
        return false;
    }
    if (ggml_is_quantized(x->type) && x->nb[0] != ggml_type_size(x->type)) {
        return false;
    }
    if (op->op == GGML_OP_MUL_MAT_ID && op->src[2]->type != GGML_TYPE_I32) {
        return false;
    }
    return true;
}

static size_t mm_work_size(const struct ggml_tensor * node, int n_threads) {
    struct mm_op op;
    mm_op_init(&op, (struct ggml_tensor *) node);
    return op.shared_size + (size_t) n_threads * op.thread_size;
}

static void mm_forward_mul_mat(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    GGML_ASSERT(dst->src[0]->ne[0] == dst->src[1]->ne[0]);
    GGML_ASSERT(dst->ne[0] == dst->src[0]->ne[1] && dst->ne[1] == dst->src[1]->ne[1]);
    GGML_ASSERT(dst->src[1]->ne[2] % dst->src[0]->ne[2] == 0 && dst->src[1]->ne[3] % dst->src[0]->ne[3] == 0);
    mm_forward(params, dst);
}

static void mm_forward_mul_mat_id(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * ids = dst->src[2];
    GGML_ASSERT(ids->type == GGML_TYPE_I32);
    GGML_ASSERT(dst->ne[0] == dst->src[0]->ne[1] && dst->ne[1] == ids->ne[0] && dst->ne[2] == ids->ne[1]);
    GGML_ASSERT(ids->ne[1] == dst->src[1]->ne[2] && ids->ne[0] % dst->src[1]->ne[1] == 0);
    mm_forward(params, dst);
}

//
// products of the same activations (graph-fusion.c): Q, K and V, gate and
// up of a layer. With few columns (generation) each thread converts src1
// into its own area anyway; products whose weights take the same forms of
// it share that conversion, and their chunks are one space that the threads
// take dynamically: one barrier and one wait for the slowest thread instead
// of one per product. Every result is computed as by the products alone.
//

// the product of one weight matrix (no broadcast, no experts) through the row dots or panels
static bool mm_pair_member(const struct mm_op * op) {
    return op->dst->op == GGML_OP_MUL_MAT && op->k > 0 && op->w->ne[2] == 1 && op->w->ne[3] == 1 &&
           op->x->ne[2] == 1 && op->x->ne[3] == 1 && op->x->ne[1] < op->min_gemm_cols && !op->shared &&
           !op->need_q8p && !op->need_bf16 && !op->packed_w;
}

bool ggml_cpu_mul_mat_pair_ok(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->op != GGML_OP_MUL_MAT || b->op != GGML_OP_MUL_MAT || a->src[1] != b->src[1] ||
        !mm_supports(a) || !mm_supports(b)) {
        return false;
    }
    struct mm_op oa, ob;
    mm_op_init(&oa, (struct ggml_tensor *) a);
    mm_op_init(&ob, (struct ggml_tensor *) b);
    // the same forms of src1 in the same places of a thread's area
    return mm_pair_member(&oa) && mm_pair_member(&ob) && oa.k == ob.k && oa.vdt == ob.vdt && oa.quant == ob.quant &&
           oa.panels == ob.panels && oa.need_f32 == ob.need_f32 && oa.f32_in_place == ob.f32_in_place &&
           oa.need_q8 == ob.need_q8 && oa.q8_in_place == ob.q8_in_place && oa.act_size == ob.act_size &&
           oa.act_f32 == ob.act_f32 && oa.act_q8 == ob.act_q8 && oa.act_ys == ob.act_ys &&
           oa.f32_stride == ob.f32_stride && oa.q8_stride == ob.q8_stride && oa.ys_stride == ob.ys_stride;
}

// the start of a fused kernel of n products of one src1: their ops, this
// thread's area and in it src1 in the forms all read (each thread converts
// all of it: no barrier)
static char * mm_together_begin(const struct ggml_compute_params * params, struct ggml_tensor * const * nodes, int n,
                                struct mm_op * op, struct mm_act * act) {
    size_t tsize = 0;   // a thread's area: room for any product's scratch (each alone fits the plan)
    for (int i = 0; i < n; i++) {
        mm_op_init(&op[i], nodes[i]);
        tsize = MAX(tsize, op[i].thread_size);
    }
    GGML_ASSERT(params->wsize >= (size_t) params->nth * tsize);
    char * thr = (char *) params->wdata + (size_t) params->ith * tsize;
    *act = (struct mm_act) {
        .f32  = thr + op[0].act_f32,
        .q8   = thr + op[0].act_q8,
        .q8p  = thr + op[0].act_q8p,
        .bf16 = thr + op[0].act_bf16,
        .ys   = thr + op[0].act_ys,
    };
    // mm_forward's choice for few columns
    const bool want_ys = op[0].ys_stride > 0 && op[0].need_q8;
    const bool want_q8 = op[0].need_q8 && !op[0].q8_in_place;
    if (op[0].act_size > 0) {
        for (int64_t c = 0; c < op[0].n_x_cols; c++) {
            mm_convert_col(&op[0], act, c, thr, true, want_q8, false, want_ys, false, params->use_ref);
        }
    }
    return thr;
}

void ggml_cpu_forward_mul_mat_group(const struct ggml_compute_params * params, struct ggml_tensor * const * nodes, int n) {
    GGML_ASSERT(n >= 2 && n <= GGML_CPU_MUL_MAT_GROUP_MAX);
    struct mm_op  op[GGML_CPU_MUL_MAT_GROUP_MAX];
    struct mm_act act;
    char * const  thr     = mm_together_begin(params, nodes, n, op, &act);
    const int     nth     = params->nth;
    const bool    use_ref = params->use_ref;

    // the row blocks of the products one after the other: product i's are
    // chunks [first[i], first[i + 1])
    struct mm_group g[GGML_CPU_MUL_MAT_GROUP_MAX];
    struct mm_split sp[GGML_CPU_MUL_MAT_GROUP_MAX];
    int64_t first[GGML_CPU_MUL_MAT_GROUP_MAX + 1];
    first[0] = 0;
    for (int i = 0; i < n; i++) {
        g[i] = (struct mm_group) { 0 };
        g[i].w     = mm_weight_matrix(&op[i], 0, 0);
        g[i].ncols = op[i].x->ne[1];
        sp[i] = mm_group_split(&op[i], &g[i], 1, nth);
        first[i + 1] = first[i] + sp[i].n_row_blocks;
    }
    int i = 0;   // chunks are taken in order: a thread never needs an earlier product again
    for (int64_t chunk = ggml_cpu_next_chunk(params); chunk < first[n]; chunk = ggml_cpu_next_chunk(params)) {
        while (chunk >= first[i + 1]) {
            i++;
        }
        const int64_t r0 = mm_split_row(&sp[i], chunk - first[i]);
        const int64_t r1 = mm_split_row(&sp[i], chunk - first[i] + 1);
        mm_chunk_rows(&op[i], &act, &g[i], r0, r1, thr, use_ref);
    }
}

// The gate and up products of a feed-forward layer and their GLU: a chunk is
// the same rows of both products (the split of one, as their weights are of
// one type and size), then the GLU of those rows of every column, while the
// thread still holds them in its cache (the GLU alone, a node of its own,
// read both products' rows from the other threads' caches after a barrier).
// Every value is computed by the operations of the three nodes.
void ggml_cpu_forward_mul_mat_glu(const struct ggml_compute_params * params, struct ggml_tensor * a, struct ggml_tensor * b,
                                  struct ggml_tensor * glu) {
    struct ggml_tensor * const nodes[2] = { a, b };
    struct mm_op  op[2];
    struct mm_act act;
    char * const  thr     = mm_together_begin(params, nodes, 2, op, &act);
    const bool    use_ref = params->use_ref;
    GGML_ASSERT(op[0].n == op[1].n && op[0].w->type == op[1].w->type && glu->ne[0] == op[0].n);

    struct mm_group g[2];
    for (int i = 0; i < 2; i++) {
        g[i] = (struct mm_group) { 0 };
        g[i].w     = mm_weight_matrix(&op[i], 0, 0);
        g[i].ncols = op[i].x->ne[1];
    }
    // a chunk reads its rows of both matrices: tail chunks of half the rows
    // (with chunks of a product's, a thread waited 14 us on average per
    // node for the other's last chunk in a 2048x8 Q4_K_M token)
    struct mm_split sp = { 0 };
    sp.cols = g[0].ncols;
    mm_rows_split(&op[0], params->nth, 2, &sp);
    sp.n_col_blocks = 1;
    for (int64_t chunk = ggml_cpu_next_chunk(params); chunk < sp.n_row_blocks; chunk = ggml_cpu_next_chunk(params)) {
        const int64_t r0 = mm_split_row(&sp, chunk);
        const int64_t r1 = mm_split_row(&sp, chunk + 1);
        mm_chunk_rows(&op[0], &act, &g[0], r0, r1, thr, use_ref);
        mm_chunk_rows(&op[1], &act, &g[1], r0, r1, thr, use_ref);
        for (int64_t c = 0; c < glu->ne[1]; c++) {
            ggml_cpu_glu_span_f32(glu, c, r0, r1, use_ref);
        }
    }
}

// The first bytes of weights the product a (with b, the other product of a
// fused GLU pair, or NULL) reads: the starts of the streams of its first
// chunks, as the row dots read them (4 streams, each a quarter of a
// chunk's rows), for a thread to ask for while it waits at the barrier
// before it. Chunks are taken in the order the threads come, so any of the
// first nth may be this thread's: those of the first MIN(nth, chunks).
// Returns the starts written (0 when a does not take the row dots), and in
// *span the bytes of the shortest stream.
int ggml_cpu_mul_mat_lead(struct ggml_tensor * a, struct ggml_tensor * b, int nth, int chunks, const char ** starts, int max,
                          size_t * span) {
    if (a->op != GGML_OP_MUL_MAT || !mm_weight_type_supported(a->src[0]->type) || a->src[0]->data == NULL ||
        a->src[1]->ne[2] != 1 || a->src[1]->ne[3] != 1 || a->src[0]->ne[2] != 1 || a->src[0]->ne[3] != 1) {
        return 0;
    }
    struct mm_op op;
    mm_op_init(&op, a);
    if (a->src[1]->ne[1] >= op.min_gemm_cols) {
        return 0;
    }
    struct mm_split sp = { 0 };
    mm_rows_split(&op, nth, b != NULL ? 2 : 1, &sp);
    int n = 0;
    *span = SIZE_MAX;
    for (int64_t c = 0; c < MIN((int64_t) MIN(nth, chunks), sp.n_row_blocks); c++) {
        const int64_t r0 = mm_split_row(&sp, c), r1 = mm_split_row(&sp, c + 1);
        // a quarter of the chunk's rows (of its 16-row panels)
        const int64_t pr = op.panels ? GGML_QPANEL_ROWS : 1;
        const int64_t q  = (r1 - r0) / pr / 4 * pr;
        // fewer rows than 4 quarters: one stream, row after row
        *span = MIN(*span, (size_t)(q > 0 ? q : r1 - r0) * a->src[0]->nb[1]);
        for (int p = 0; p < (q > 0 ? 4 : 1); p++) {
            for (int m = 0; m < (b != NULL ? 2 : 1); m++) {
                const struct ggml_tensor * w = m == 0 ? a->src[0] : b->src[0];
                if (n < max) {
                    starts[n++] = (const char *) w->data + (size_t)(r0 + p*q) * w->nb[1];
                }
            }
        }
    }
    return n;
}

//
// OUT_PROD: dst[i0, i1, i2, i3] = sum_i01 src0[i0, i01, i02, i03] * src1[i1, i01, i2, i3]
//
// A chunk is a block of dst rows (i1) of one (i2, i3) times a segment of i0:
// the src0 segment of every i01 is converted to F32 into a per-thread panel,
// and the outer-product kernel of gemm.h sums over i01, in order, with the
// tile of results in registers. Each dst value is written once.
//

#define OP_ROWS 64           // dst rows per chunk
#define OP_SEG  256          // values of an i0 segment (a multiple of every block size)
#define OP_LDA  (OP_SEG + 16) // panel row stride: an odd number of cache lines

// quantized src0 rows are converted segment by segment with the type's
// to_float, so a segment must hold whole blocks: every quantized type with a
// conversion (as upstream: the K-quants, IQ, MXFP4/NVFP4, Q1_0/Q2_0 and
// ternary formats of a fine-tuned model's weights), but not the activation
// formats q8_1 and q8_K, which weights are not stored in
static bool op_quant_supported(enum ggml_type t) {
    return ggml_is_quantized(t) && t != GGML_TYPE_Q8_1 && t != GGML_TYPE_Q8_K &&
           ggml_get_type_traits(t)->to_float != NULL && OP_SEG % ggml_blck_size(t) == 0;
}

static bool op_supports(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    if (op->type != GGML_TYPE_F32 || b->type != GGML_TYPE_F32 || op->nb[0] != sizeof(float)) {
        return false;
    }
    if (a->nb[0] != ggml_type_size(a->type)) {
        return false;
    }
    if (a->type == GGML_TYPE_F32) {
        return true;
    }
    // upstream converts F16 and quantized rows without broadcasting
    return (a->type == GGML_TYPE_F16 || op_quant_supported(a->type)) && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

static size_t op_panel_size(const struct ggml_tensor * node) {
    return mm_pad((size_t) node->src[0]->ne[1] * OP_LDA * sizeof(float));
}

static size_t op_work_size(const struct ggml_tensor * node, int n_threads) {
    return (size_t) n_threads * op_panel_size(node);
}

// src0 values [i0, i0 + n) of every row of matrix a_mat as F32 rows OP_LDA apart
static void op_panel(const struct ggml_tensor * a, const char * a_mat, int64_t i0, int64_t n, float * panel, bool use_ref) {
    for (int64_t i01 = 0; i01 < a->ne[1]; i01++) {
        const char * row = a_mat + i01*a->nb[1];
        float * out = panel + i01*OP_LDA;
        switch (a->type) {
            case GGML_TYPE_F32:
                memcpy(out, (const float *) row + i0, (size_t) n * sizeof(float));
                break;
            case GGML_TYPE_F16:
                (use_ref ? ggml_vec_fp16_to_fp32_ref : ggml_vec_fp16_to_fp32)(n, (const ggml_fp16_t *) row + i0, out);
                break;
            default: {
                const int64_t bs = ggml_blck_size(a->type);
                ggml_get_type_traits(a->type)->to_float(row + (i0/bs)*ggml_type_size(a->type), out, n);
            } break;
        }
    }
}

static void op_forward(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    GGML_ASSERT(dst->ne[0] == a->ne[0] && dst->ne[1] == b->ne[0] && dst->ne[2] == b->ne[2] && dst->ne[3] == b->ne[3]);
    GGML_ASSERT(a->ne[1] == b->ne[1] && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0);
    GGML_ASSERT(params->wsize >= (size_t) params->nth * op_panel_size(dst));

    float * panel = (float *)((char *) params->wdata + (size_t) params->ith * op_panel_size(dst));

    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const int64_t n_segs = (ne0 + OP_SEG - 1) / OP_SEG;
    const int64_t n_row_blocks = (ne1 + OP_ROWS - 1) / OP_ROWS;
    const int64_t n_chunks = n_segs * n_row_blocks * ne2 * dst->ne[3];
    const int64_t r2 = ne2 / a->ne[2];
    const int64_t r3 = dst->ne[3] / a->ne[3];

    for (int64_t chunk = ggml_cpu_next_chunk(params); chunk < n_chunks; chunk = ggml_cpu_next_chunk(params)) {
        const int64_t seg = chunk % n_segs;
        const int64_t rb  = (chunk / n_segs) % n_row_blocks;
        const int64_t i2  = (chunk / (n_segs * n_row_blocks)) % ne2;
        const int64_t i3  = chunk / (n_segs * n_row_blocks * ne2);
        const int64_t i0  = seg * OP_SEG;
        const int64_t nv  = MIN(OP_SEG, ne0 - i0);
        const int64_t i1b = rb * OP_ROWS;
        const int64_t nr  = MIN(OP_ROWS, ne1 - i1b);

        const char * a_mat = (const char *) a->data + (i2/r2)*a->nb[2] + (i3/r3)*a->nb[3];
        op_panel(a, a_mat, i0, nv, panel, params->use_ref);

        float * c[OP_ROWS];
        for (int64_t r = 0; r < nr; r++) {
            c[r] = (float *)((char *) dst->data + (i1b + r)*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3]) + i0;
        }
        const char * b_rows = (const char *) b->data + i1b*b->nb[0] + i2*b->nb[2] + i3*b->nb[3];
        ggml_gemm_f32_outer(nr, nv, a->ne[1], panel, OP_LDA, b_rows, b->nb[0], b->nb[1], c, params->use_ref);
    }
}

void ggml_cpu_register_ops_matmul(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_MUL_MAT] = (struct ggml_cpu_op_impl) {
        .forward   = mm_forward_mul_mat,
        .supports  = mm_supports,
        .work_size = mm_work_size,
    };
    table[GGML_OP_MUL_MAT_ID] = (struct ggml_cpu_op_impl) {
        .forward   = mm_forward_mul_mat_id,
        .supports  = mm_supports,
        .work_size = mm_work_size,
    };
    table[GGML_OP_OUT_PROD] = (struct ggml_cpu_op_impl) {
        .forward   = op_forward,
        .supports  = op_supports,
        .work_size = op_work_size,
    };
}
