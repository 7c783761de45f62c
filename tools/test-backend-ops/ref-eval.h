#pragma once

//
// ref-eval.h: what the files of the reference evaluator share.
//
// Every op reads its sources as dense arrays of doubles in logical order
// (i0 fastest: index ((i3*ne2 + i2)*ne1 + i1)*ne0 + i0), computes its result
// in double precision from the op's definition, and stores it through
// ref_put, which rounds each value to the destination's type.
//

#include "tbo.h"

#include <string.h>

// the values of t in logical order; free() the result
double * ref_get(struct tbo_ref * r, const struct ggml_tensor * t);

// stores all values of t (logical order), rounded to its type
void ref_put(struct tbo_ref * r, const struct ggml_tensor * t, const double * v);

// stores row (i1, i2, i3) of t, rounded to its type
void ref_put_row(struct tbo_ref * r, const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3, const double * row);

// copies of quantized data between tensors of one type keep the blocks' bytes
// (requantizing dequantized values need not give the same blocks back)
void ref_copy_blocks(struct tbo_ref * r, const struct ggml_tensor * dst, const struct ggml_tensor * src);
void ref_copy_block(struct tbo_ref * r, const struct ggml_tensor * dst, const int64_t d[4], const struct ggml_tensor * src,
                    const int64_t s[4]);

static inline int64_t ref_idx(const int64_t ne[4], int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return ((i3*ne[2] + i2)*ne[1] + i1)*ne[0] + i0;
}

static inline int32_t ref_param_i32(const struct ggml_tensor * t, int i) {
    int32_t v;
    memcpy(&v, (const char *) t->op_params + (size_t) i * sizeof(int32_t), sizeof(v));
    return v;
}

// a float op parameter, widened
static inline double ref_param_f32(const struct ggml_tensor * t, int i) {
    float v;
    memcpy(&v, (const char *) t->op_params + (size_t) i * sizeof(float), sizeof(v));
    return (double) v;
}

// the ALiBi slope of head h among n_head heads (ggml's definition, in double)
double ref_alibi_slope(double max_bias, uint32_t n_head, uint32_t h);

// ref-eval-elementwise.c
void ref_op_glu(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_binary(struct tbo_ref * r, const struct ggml_tensor * dst); // the binary list (ggml-op-list.h)
void ref_op_add1(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_map(struct tbo_ref * r, const struct ggml_tensor * dst); // UNARY and the unary list's GGML_OP_ ones

// ref-eval-layout.c
void ref_op_copy(struct tbo_ref * r, const struct ggml_tensor * dst); // DUP CONT CPY
void ref_op_get_rows(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_set_rows(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_repeat(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_concat(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_set_acc(struct tbo_ref * r, const struct ggml_tensor * dst); // SET ACC
void ref_op_pad(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_arange(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_diag_mask_inf(struct tbo_ref * r, const struct ggml_tensor * dst); // DIAG_MASK_INF DIAG_MASK_ZERO

// ref-eval-reduce.c
void ref_op_sum(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_sum_rows(struct tbo_ref * r, const struct ggml_tensor * dst); // SUM_ROWS MEAN
void ref_op_argmax(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_count_equal(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_argsort(struct tbo_ref * r, const struct ggml_tensor * dst); // ARGSORT TOP_K
void ref_op_norm(struct tbo_ref * r, const struct ggml_tensor * dst);    // NORM RMS_NORM L2_NORM

// ref-eval-matmul.c
void ref_op_mul_mat(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_mul_mat_id(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_out_prod(struct tbo_ref * r, const struct ggml_tensor * dst);

// ref-eval-attn.c
void ref_op_soft_max(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_rope(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_flash_attn_ext(struct tbo_ref * r, const struct ggml_tensor * dst);

// ref-eval-misc.c
void ref_op_add_id(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_cumsum(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_diag(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_fill(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_tri(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_solve_tri(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_group_norm(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_lightning_indexer(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_dsv4_hc(struct tbo_ref * r, const struct ggml_tensor * dst); // DSV4_HC_COMB DSV4_HC_PRE DSV4_HC_POST

// ref-eval-ssm.c
void ref_op_ssm_conv(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_ssm_scan(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_wkv(struct tbo_ref * r, const struct ggml_tensor * dst); // RWKV_WKV6 GATED_LINEAR_ATTN RWKV_WKV7
void ref_op_gated_delta_net(struct tbo_ref * r, const struct ggml_tensor * dst);
// ref-eval-conv.c
void ref_op_im2col(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_im2col_3d(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_im2col_back(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_col2im_1d(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_conv(struct tbo_ref * r, const struct ggml_tensor * dst);           // CONV_2D CONV_3D
void ref_op_conv_2d_dw(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_conv_transpose(struct tbo_ref * r, const struct ggml_tensor * dst); // CONV_TRANSPOSE_1D CONV_TRANSPOSE_2D
void ref_op_pool(struct tbo_ref * r, const struct ggml_tensor * dst);           // POOL_1D POOL_2D
void ref_op_pool_2d_back(struct tbo_ref * r, const struct ggml_tensor * dst);

// ref-eval-train.c: REPEAT_BACK SILU_BACK RMS_NORM_BACK GET_ROWS_BACK SOFT_MAX_BACK
// CROSS_ENTROPY_LOSS(_BACK) OPT_STEP_ADAMW OPT_STEP_SGD
void ref_op_train(struct tbo_ref * r, const struct ggml_tensor * dst);
// ref-eval-image.c
void ref_op_upscale(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_pad_reflect_1d(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_roll(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_timestep_embedding(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_win_part(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_win_unpart(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_get_rel_pos(struct tbo_ref * r, const struct ggml_tensor * dst);
void ref_op_add_rel_pos(struct tbo_ref * r, const struct ggml_tensor * dst);
