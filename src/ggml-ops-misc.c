// ggml-ops-misc.c: constructors of the small ops upstream added for newer
// model families: add_id (per-expert biases), cumsum, diag, diag_mask_zero,
// fill, tri, solve_tri (triangular systems, for chunked linear attention),
// group_norm (diffusion models), and DeepSeek's lightning indexer and V4
// hyper-connection ops (dsv4_hc_comb, dsv4_hc_pre, dsv4_hc_post).
//
// As everywhere, a constructor checks its arguments (misuse aborts with the
// reason), creates the result and stores the parameters in op_params in
// upstream's layout; nothing is computed.

#include "ggml-impl.h"

// a[:, i1, i2] + b[:, ids[i1, i2]]: a [n, n_used, n_token], b [n, n_rows], ids I32 [n_used, n_token]
struct ggml_tensor * ggml_add_id(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                 struct ggml_tensor * ids) {
    GGML_ASSERT(a->ne[0] == b->ne[0]);
    GGML_ASSERT(a->ne[1] == ids->ne[0]);
    GGML_ASSERT(a->ne[2] == ids->ne[1]);
    GGML_ASSERT(ids->type == GGML_TYPE_I32);

    struct ggml_tensor * result = ggml_dup_tensor(ctx, a);
    result->op     = GGML_OP_ADD_ID;
    result->src[0] = a;
    result->src[1] = b;
    result->src[2] = ids;
    return result;
}

// running sums along dim 0
struct ggml_tensor * ggml_cumsum(struct ggml_context * ctx, struct ggml_tensor * a) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);

    struct ggml_tensor * result = ggml_dup_tensor(ctx, a);
    result->op     = GGML_OP_CUMSUM;
    result->src[0] = a;
    return result;
}

// a [n, 1, ne2, ne3] -> [n, n, ne2, ne3] with a on the diagonal, zeros elsewhere
struct ggml_tensor * ggml_diag(struct ggml_context * ctx, struct ggml_tensor * a) {
    GGML_ASSERT(a->ne[1] == 1);

    const int64_t ne[4] = { a->ne[0], a->ne[0], a->ne[2], a->ne[3] };
    struct ggml_tensor * result = ggml_new_tensor(ctx, a->type, 4, ne);
    result->op     = GGML_OP_DIAG;
    result->src[0] = a;
    return result;
}

// op_params[0]: n_past; elements with i0 > n_past + i1 become 0
static struct ggml_tensor * diag_mask_zero_op(struct ggml_context * ctx, struct ggml_tensor * a, int n_past, bool inplace) {
    struct ggml_tensor * result = inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
    ggml_set_op_params_i32(result, 0, n_past);
    result->op     = GGML_OP_DIAG_MASK_ZERO;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_diag_mask_zero(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return diag_mask_zero_op(ctx, a, n_past, false);
}

struct ggml_tensor * ggml_diag_mask_zero_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return diag_mask_zero_op(ctx, a, n_past, true);
}

// op_params[0]: the constant (float)
static struct ggml_tensor * fill_op(struct ggml_context * ctx, struct ggml_tensor * a, float c, bool inplace) {
    GGML_ASSERT(a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16);
    GGML_ASSERT(ggml_is_contiguous(a));

    struct ggml_tensor * result = inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
    ggml_set_op_params_f32(result, 0, c);
    result->op     = GGML_OP_FILL;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_fill(struct ggml_context * ctx, struct ggml_tensor * a, float c) {
    return fill_op(ctx, a, c, false);
}

struct ggml_tensor * ggml_fill_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float c) {
    return fill_op(ctx, a, c, true);
}

// op_params[0]: the ggml_tri_type; element (i0, i1) is kept where i0 < i1
// (LOWER), i0 <= i1 (LOWER_DIAG), i0 > i1 (UPPER), i0 >= i1 (UPPER_DIAG)
struct ggml_tensor * ggml_tri(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_tri_type type) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(a->ne[0] == a->ne[1]);

    struct ggml_tensor * result = ggml_dup_tensor(ctx, a);
    ggml_set_op_params_i32(result, 0, (int32_t) type);
    result->op     = GGML_OP_TRI;
    result->src[0] = a;
    return result;
}

// X with A X = B: A [n, n] lower triangular (row i1, column i0), B and X
// [k, n] (k right-hand sides), batched over dims 2 and 3. Only the variant
// left, lower, not unit-diagonal exists, as upstream.
struct ggml_tensor * ggml_solve_tri(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, bool left,
                                    bool lower, bool uni) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    GGML_ASSERT(b->type == GGML_TYPE_F32);
    GGML_ASSERT(a->ne[0] == a->ne[1]);
    GGML_ASSERT(a->ne[1] == b->ne[1]);
    GGML_ASSERT(a->ne[2] == b->ne[2]);
    GGML_ASSERT(a->ne[3] == b->ne[3]);
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(ggml_is_contiguous(b));
    GGML_ASSERT(lower && left && !uni);

    struct ggml_tensor * result = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, b->ne[0], b->ne[1], b->ne[2], b->ne[3]);
    result->op     = GGML_OP_SOLVE_TRI;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// op_params: [0] n_groups (int), [1] eps (float). The channels (dim 2) form
// n_groups groups of ceil(ne2 / n_groups); each group of each ne3 index is
// normalised to zero mean and unit variance.
static struct ggml_tensor * group_norm_op(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps,
                                          bool inplace) {
    struct ggml_tensor * result = inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
    ggml_set_op_params_i32(result, 0, n_groups);
    ggml_set_op_params_f32(result, 1, eps);
    result->op     = GGML_OP_GROUP_NORM;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_group_norm(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps) {
    return group_norm_op(ctx, a, n_groups, eps, false);
}

struct ggml_tensor * ggml_group_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups, float eps) {
    return group_norm_op(ctx, a, n_groups, eps, true);
}

// DeepSeek's sparse-attention indexer: res[j, t, 0, s] = sum_h relu(q[:, h, t, s] . k[:, 0, j, s])
// w[h, t, 0, s] + mask[j, t, 0, s % ne33]; q, w F32, mask F16, k any type with to_float
struct ggml_tensor * ggml_lightning_indexer(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                           struct ggml_tensor * weights, struct ggml_tensor * mask) {
    GGML_ASSERT(q->type == GGML_TYPE_F32);
    GGML_ASSERT(weights->type == GGML_TYPE_F32);
    GGML_ASSERT(mask->type == GGML_TYPE_F16);
    GGML_ASSERT(q->ne[0] == k->ne[0]);
    GGML_ASSERT(mask->ne[0] == k->ne[2]);
    GGML_ASSERT(q->ne[1] == weights->ne[0]);
    GGML_ASSERT(k->ne[1] == 1);
    GGML_ASSERT(mask->ne[1] == q->ne[2]);
    GGML_ASSERT(q->ne[2] == weights->ne[1]);
    GGML_ASSERT(weights->ne[2] == 1);
    GGML_ASSERT(mask->ne[2] == 1);
    GGML_ASSERT(q->ne[3] == k->ne[3]);
    GGML_ASSERT(k->ne[3] == weights->ne[3]);
    GGML_ASSERT(weights->ne[3] % mask->ne[3] == 0);

    const int64_t ne[4] = { k->ne[2], q->ne[2], 1, q->ne[3] };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    result->op     = GGML_OP_LIGHTNING_INDEXER;
    result->src[0] = q;
    result->src[1] = k;
    result->src[2] = weights;
    result->src[3] = mask;
    return result;
}

// DeepSeek V4 hyper-connections: the mixing matrix of hc = 4 streams per token
// from mixes [(2 + hc)*hc, n_tokens] (the last hc*hc values of each column),
// scale [>= 3] and base [(2 + hc)*hc]. op_params: [0] eps (float), [1] n_iter.
struct ggml_tensor * ggml_dsv4_hc_comb(struct ggml_context * ctx, struct ggml_tensor * mixes, struct ggml_tensor * scale,
                                      struct ggml_tensor * base, float eps, int32_t n_iter) {
    GGML_ASSERT(mixes->type == GGML_TYPE_F32 && scale->type == GGML_TYPE_F32 && base->type == GGML_TYPE_F32);
    GGML_ASSERT(n_iter > 0);

    const int64_t hc = 4;
    GGML_ASSERT(mixes->ne[0] == (2 + hc) * hc);
    GGML_ASSERT(mixes->ne[2] == 1 && mixes->ne[3] == 1);
    GGML_ASSERT(scale->ne[0] >= 3 && scale->ne[1] == 1 && scale->ne[2] == 1 && scale->ne[3] == 1);
    GGML_ASSERT(base->ne[0] == mixes->ne[0] && base->ne[1] == 1 && base->ne[2] == 1 && base->ne[3] == 1);

    struct ggml_tensor * result = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, hc, hc, mixes->ne[1]);
    ggml_set_op_params_f32(result, 0, eps);
    ggml_set_op_params_i32(result, 1, n_iter);
    result->op     = GGML_OP_DSV4_HC_COMB;
    result->src[0] = mixes;
    result->src[1] = scale;
    result->src[2] = base;
    return result;
}

// x [n_embd, hc, n_tokens], weights [hc, n_tokens] -> [n_embd, n_tokens], the weighted sum of the streams
struct ggml_tensor * ggml_dsv4_hc_pre(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * weights) {
    GGML_ASSERT(x->type == GGML_TYPE_F32 && weights->type == GGML_TYPE_F32);
    GGML_ASSERT(x->ne[1] > 0 && x->ne[3] == 1);
    GGML_ASSERT(weights->ne[0] == x->ne[1] && weights->ne[1] == x->ne[2]);
    GGML_ASSERT(weights->ne[2] == 1 && weights->ne[3] == 1);

    struct ggml_tensor * result = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, x->ne[0], x->ne[2]);
    result->op     = GGML_OP_DSV4_HC_PRE;
    result->src[0] = x;
    result->src[1] = weights;
    return result;
}

// x [n_embd, n_tokens], residual [n_embd, hc, n_tokens], post [hc, n_tokens], comb [hc, hc, n_tokens]
// -> [n_embd, hc, n_tokens]: x post[d] + sum_s residual[:, s] comb[d, s]
struct ggml_tensor * ggml_dsv4_hc_post(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * residual,
                                      struct ggml_tensor * post, struct ggml_tensor * comb) {
    GGML_ASSERT(x->type == GGML_TYPE_F32 && residual->type == GGML_TYPE_F32);
    GGML_ASSERT(post->type == GGML_TYPE_F32 && comb->type == GGML_TYPE_F32);
    const int64_t n_embd = x->ne[0], n_tokens = x->ne[1], hc = residual->ne[1];
    GGML_ASSERT(hc > 0 && x->ne[2] == 1 && x->ne[3] == 1);
    GGML_ASSERT(residual->ne[0] == n_embd && residual->ne[2] == n_tokens && residual->ne[3] == 1);
    GGML_ASSERT(post->ne[0] == hc && post->ne[1] == n_tokens && post->ne[2] == 1 && post->ne[3] == 1);
    GGML_ASSERT(comb->ne[0] == hc && comb->ne[1] == hc && comb->ne[2] == n_tokens && comb->ne[3] == 1);

    struct ggml_tensor * result = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n_embd, hc, n_tokens);
    result->op     = GGML_OP_DSV4_HC_POST;
    result->src[0] = x;
    result->src[1] = residual;
    result->src[2] = post;
    result->src[3] = comb;
    return result;
}
