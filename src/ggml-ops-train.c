// ggml-ops-train.c: constructors of the ops that training adds: the backward
// ops that ggml_build_backward_expand emits (repeat_back, silu_back,
// rms_norm_back, get_rows_back, soft_max_back, rope_back), the cross-entropy
// loss with its gradient, and the AdamW and SGD optimizer steps.
//
// The optimizer steps update their parameter in place: the result is a view
// of it, so that the graph allocator never gives the node memory of its own.
// Shapes and op_params are upstream's, op by op.

#include "ggml-impl.h"

#include <string.h>

struct ggml_tensor * ggml_repeat_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_can_repeat(b, a));
    struct ggml_tensor * result = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, b->ne);
    result->op     = GGML_OP_REPEAT_BACK;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_silu_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_are_same_shape(a, b));
    struct ggml_tensor * result = ggml_dup_tensor(ctx, a);
    result->op     = GGML_OP_SILU_BACK;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// op_params[0]: eps (float)
struct ggml_tensor * ggml_rms_norm_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float eps) {
    GGML_ASSERT(ggml_are_same_shape(a, b));
    struct ggml_tensor * result = ggml_dup_tensor(ctx, a);
    ggml_set_op_params_f32(result, 0, eps);
    result->op     = GGML_OP_RMS_NORM_BACK;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_get_rows_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                       struct ggml_tensor * c) {
    GGML_ASSERT(ggml_is_matrix(a) && ggml_is_vector(b) && b->type == GGML_TYPE_I32);
    GGML_ASSERT(ggml_is_matrix(c) && a->ne[0] == c->ne[0]);
    GGML_ASSERT(a->ne[1] >= b->ne[0]); // a row of gradient per index (upstream reads a view of fewer indices)
    struct ggml_tensor * result = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, c->ne[0], c->ne[1]);
    result->op     = GGML_OP_GET_ROWS_BACK;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// op_params: [0] scale, [1] max_bias (floats), as SOFT_MAX
static struct ggml_tensor * soft_max_back_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                             float scale, float max_bias, bool inplace) {
    GGML_ASSERT(ggml_are_same_shape(a, b));
    struct ggml_tensor * result = inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
    ggml_set_op_params_f32(result, 0, scale);
    ggml_set_op_params_f32(result, 1, max_bias);
    result->op     = GGML_OP_SOFT_MAX_BACK;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_soft_max_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                           float scale, float max_bias) {
    return soft_max_back_op(ctx, a, b, scale, max_bias, false);
}

struct ggml_tensor * ggml_soft_max_ext_back_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                   float scale, float max_bias) {
    return soft_max_back_op(ctx, a, b, scale, max_bias, true);
}

// ROPE_BACK: the op_params of ROPE, built by the forward constructor
struct ggml_tensor * ggml_rope_ext_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                       struct ggml_tensor * c, int n_dims, int mode, int n_ctx_orig, float freq_base,
                                       float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                       float beta_slow) {
    struct ggml_tensor * result = ggml_rope_ext(ctx, a, b, c, n_dims, mode, n_ctx_orig, freq_base, freq_scale,
                                                ext_factor, attn_factor, beta_fast, beta_slow);
    result->op = GGML_OP_ROPE_BACK;
    return result;
}

struct ggml_tensor * ggml_rope_multi_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                         struct ggml_tensor * c, int n_dims, int sections[4], int mode, int n_ctx_orig,
                                         float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                         float beta_fast, float beta_slow) {
    struct ggml_tensor * result = ggml_rope_multi(ctx, a, b, c, n_dims, sections, mode, n_ctx_orig, freq_base,
                                                  freq_scale, ext_factor, attn_factor, beta_fast, beta_slow);
    result->op = GGML_OP_ROPE_BACK;
    return result;
}

struct ggml_tensor * ggml_flash_attn_back(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                         struct ggml_tensor * v, struct ggml_tensor * d, bool masked) {
    GGML_UNUSED(ctx);
    GGML_UNUSED(q);
    GGML_UNUSED(k);
    GGML_UNUSED(v);
    GGML_UNUSED(d);
    GGML_UNUSED(masked);
    GGML_ABORT("ggml_flash_attn_back: not adapted to ggml_flash_attn_ext (as upstream)");
}

struct ggml_tensor * ggml_cross_entropy_loss(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_are_same_shape(a, b));
    struct ggml_tensor * result = ggml_new_tensor_1d(ctx, a->type, 1);
    result->op     = GGML_OP_CROSS_ENTROPY_LOSS;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_cross_entropy_loss_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                                 struct ggml_tensor * c) {
    GGML_ASSERT(ggml_is_scalar(a));
    GGML_ASSERT(ggml_are_same_shape(b, c));
    struct ggml_tensor * result = ggml_dup_tensor(ctx, b);
    result->op     = GGML_OP_CROSS_ENTROPY_LOSS_BACK;
    result->src[0] = a;
    result->src[1] = b;
    result->src[2] = c;
    return result;
}

struct ggml_tensor * ggml_opt_step_adamw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                        struct ggml_tensor * m, struct ggml_tensor * v, struct ggml_tensor * adamw_params) {
    GGML_ASSERT(a->flags & GGML_TENSOR_FLAG_PARAM);
    GGML_ASSERT(ggml_are_same_shape(a, grad));
    GGML_ASSERT(ggml_are_same_shape(a, m));
    GGML_ASSERT(ggml_are_same_shape(a, v));
    GGML_ASSERT(adamw_params->type == GGML_TYPE_F32);
    GGML_ASSERT(ggml_nelements(adamw_params) == 7);
    struct ggml_tensor * result = ggml_view_tensor(ctx, a);
    result->op     = GGML_OP_OPT_STEP_ADAMW;
    result->src[0] = a;
    result->src[1] = grad;
    result->src[2] = m;
    result->src[3] = v;
    result->src[4] = adamw_params;
    return result;
}

struct ggml_tensor * ggml_opt_step_sgd(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * grad,
                                      struct ggml_tensor * sgd_params) {
    GGML_ASSERT(a->flags & GGML_TENSOR_FLAG_PARAM);
    GGML_ASSERT(ggml_are_same_shape(a, grad));
    GGML_ASSERT(sgd_params->type == GGML_TYPE_F32);
    GGML_ASSERT(ggml_nelements(sgd_params) == 2);
    struct ggml_tensor * result = ggml_view_tensor(ctx, a);
    result->op     = GGML_OP_OPT_STEP_SGD;
    result->src[0] = a;
    result->src[1] = grad;
    result->src[2] = sgd_params;
    return result;
}
