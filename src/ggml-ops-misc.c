// ggml-ops-misc.c: constructors of the small ops upstream added for newer
// model families: add_id (per-expert biases), cumsum, diag, diag_mask_zero,
// fill, tri, solve_tri (triangular systems, for chunked linear attention) and
// group_norm (diffusion models).
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
