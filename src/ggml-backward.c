// ggml-backward.c: automatic differentiation: ggml_build_backward_expand
// appends to a forward graph the nodes that compute the gradient of its loss
// with respect to every node that needs one.
//
// Gradients live in the graph, indexed like its visited hash set:
// cgraph->grads[i] is the gradient of the tensor at hash slot i, and
// cgraph->grad_accs[i] the tensor that accumulates it across evaluations when
// there is one (the loss's, seeded with 1 by ggml_graph_reset, and those the
// caller passes, for gradient accumulation). Hash slots never move, so the
// gradient nodes added while walking back keep every index valid.
//
// Walking the forward nodes from the last to the first, each node with a
// gradient adds its contribution to the gradients of the sources that need
// one: the rules are upstream's, op by op (which ops, and the formulas). A
// contribution to a tensor with an accumulator is added to it in place, so
// that evaluating the graph again sums the gradients of several batches.

#include "ggml-impl.h"
#include "ggml-backward.h"
#include "ggml-op-list.h"

#include <stdlib.h>
#include <string.h>

struct backward_ctx {
    struct ggml_context * ctx;
    struct ggml_cgraph  * cgraph;
};

// the gradient slot of src, which must already be in the graph
static size_t grad_slot(const struct ggml_cgraph * cgraph, const struct ggml_tensor * src) {
    const size_t i = ggml_hash_find(&cgraph->visited_hash_set, src);
    GGML_ASSERT(i != GGML_HASHSET_FULL && ggml_bitset_get(cgraph->visited_hash_set.used, i));
    return i;
}

static void grad_store(struct backward_ctx * b, size_t i, struct ggml_tensor * g) {
    struct ggml_cgraph * cgraph = b->cgraph;
    cgraph->grads[i] = g;
    ggml_format_name(g, "grad for %s", cgraph->visited_hash_set.keys[i]->name);
    ggml_build_forward_expand(cgraph, g);
}

// grad(src) += t; in place on an accumulator
static void grad_add(struct backward_ctx * b, size_t i, struct ggml_tensor * t) {
    struct ggml_tensor * cur = b->cgraph->grads[i];
    if (cur == NULL) {
        grad_store(b, i, t);
        return;
    }
    grad_store(b, i, b->cgraph->grad_accs[i] ? ggml_add_inplace(b->ctx, cur, t) : ggml_add(b->ctx, cur, t));
}

// grad(src) -= t
static void grad_sub(struct backward_ctx * b, size_t i, struct ggml_tensor * t) {
    struct ggml_tensor * cur = b->cgraph->grads[i];
    if (cur == NULL) {
        grad_store(b, i, ggml_neg(b->ctx, t));
        return;
    }
    grad_store(b, i, b->cgraph->grad_accs[i] ? ggml_sub_inplace(b->ctx, cur, t) : ggml_sub(b->ctx, cur, t));
}

// grad(src) += t broadcast from a single value
static void grad_add1(struct backward_ctx * b, size_t i, struct ggml_tensor * t) {
    struct ggml_tensor * cur = b->cgraph->grads[i];
    if (cur == NULL) {
        grad_store(b, i, ggml_repeat(b->ctx, t, b->cgraph->visited_hash_set.keys[i]));
        return;
    }
    grad_store(b, i, b->cgraph->grad_accs[i] ? ggml_add_inplace(b->ctx, cur, t) : ggml_add(b->ctx, cur, t));
}

// the region (nb1, nb2, nb3, offset) of grad(src) += t
static void grad_acc(struct backward_ctx * b, size_t i, struct ggml_tensor * t, size_t nb1, size_t nb2, size_t nb3,
                     size_t offset) {
    struct ggml_tensor * cur = b->cgraph->grads[i];
    if (cur == NULL) {
        // zeros of src's shape: scaling src by 0 would turn inf/NaN into NaN
        struct ggml_tensor * src  = b->cgraph->visited_hash_set.keys[i];
        struct ggml_tensor * zero = ggml_scale(b->ctx, src, 0.0f);
        grad_store(b, i, ggml_acc(b->ctx, zero, t, nb1, nb2, nb3, offset));
        return;
    }
    grad_store(b, i, b->cgraph->grad_accs[i] ? ggml_acc_inplace(b->ctx, cur, t, nb1, nb2, nb3, offset)
                                             : ggml_acc(b->ctx, cur, t, nb1, nb2, nb3, offset));
}

static void backward_mul_mat(struct backward_ctx * b, struct ggml_tensor * node, struct ggml_tensor * grad,
                             const bool need[3], const size_t slot[3]) {
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * src0 = node->src[0];
    struct ggml_tensor * src1 = node->src[1];
    // node = src0^T src1 per matrix: d src0 = src1 grad^T, d src1 = src0 grad
    if (need[0]) {
        struct ggml_tensor * t = ggml_out_prod(ctx, src1, grad);
        if (!ggml_are_same_shape(t, src0)) {
            // src0 was broadcast over dims 2 (and 3 == 1): sum the copies that used each matrix
            GGML_ASSERT(t->ne[0] == src0->ne[0] && t->ne[1] == src0->ne[1] && t->ne[3] == 1);
            const int64_t nr2 = t->ne[2] / src0->ne[2];
            t = ggml_view_4d(ctx, t, src0->ne[0], src0->ne[1], src0->ne[2], nr2, t->nb[1], t->nb[2] * nr2, t->nb[2], 0);
            t = ggml_repeat_back(ctx, t, src0);
        }
        grad_add(b, slot[0], t);
    }
    if (need[1]) {
        grad_add(b, slot[1], ggml_out_prod(ctx, src0, ggml_transpose(ctx, grad)));
    }
}

static void backward_rope(struct backward_ctx * b, struct ggml_tensor * node, struct ggml_tensor * grad) {
    struct ggml_tensor * pos = node->src[1];
    const int n_dims     = ggml_get_op_params_i32(node, 1);
    const int mode       = ggml_get_op_params_i32(node, 2);
    const int n_ctx_orig = ggml_get_op_params_i32(node, 4);
    const float freq_base   = ggml_get_op_params_f32(node, 5);
    const float freq_scale  = ggml_get_op_params_f32(node, 6);
    const float ext_factor  = ggml_get_op_params_f32(node, 7);
    const float attn_factor = ggml_get_op_params_f32(node, 8);
    const float beta_fast   = ggml_get_op_params_f32(node, 9);
    const float beta_slow   = ggml_get_op_params_f32(node, 10);
    int sections[4];
    for (int i = 0; i < 4; i++) {
        sections[i] = ggml_get_op_params_i32(node, 11 + i);
    }
    struct ggml_tensor * back = grad->ne[2] == pos->ne[0]
        ? ggml_rope_ext_back(b->ctx, grad, pos, node->src[2], n_dims, mode, n_ctx_orig, freq_base, freq_scale,
                             ext_factor, attn_factor, beta_fast, beta_slow)
        : ggml_rope_multi_back(b->ctx, grad, pos, node->src[2], n_dims, sections, mode, n_ctx_orig, freq_base,
                               freq_scale, ext_factor, attn_factor, beta_fast, beta_slow);
    // ROPE_BACK takes the offset of partial rotation from the forward node
    back->op_params[15] = node->op_params[15];
    grad_add(b, grad_slot(b->cgraph, node->src[0]), back);
}

static void backward_unary(struct backward_ctx * b, struct ggml_tensor * node, struct ggml_tensor * grad, size_t slot0) {
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * x = node->src[0];
    switch (ggml_get_unary_op(node)) {
        case GGML_UNARY_OP_ABS:      grad_add(b, slot0, ggml_mul(ctx, ggml_sgn(ctx, x), grad));        break;
        case GGML_UNARY_OP_NEG:      grad_sub(b, slot0, grad);                                          break;
        case GGML_UNARY_OP_RELU:     grad_add(b, slot0, ggml_mul(ctx, ggml_step(ctx, x), grad));       break;
        case GGML_UNARY_OP_SILU:     grad_add(b, slot0, ggml_silu_back(ctx, grad, x));                  break;
        case GGML_UNARY_OP_EXP:      grad_add(b, slot0, ggml_mul(ctx, node, grad));                     break;
        case GGML_UNARY_OP_EXPM1:    grad_add(b, slot0, ggml_mul(ctx, grad, ggml_exp(ctx, x)));        break;
        case GGML_UNARY_OP_SOFTPLUS: grad_add(b, slot0, ggml_mul(ctx, grad, ggml_sigmoid(ctx, x)));    break;
        case GGML_UNARY_OP_SGN:
        case GGML_UNARY_OP_STEP:
            break; // piecewise constant
        default:
            GGML_ABORT("backward pass: unary op %s is not differentiable here", ggml_unary_op_name(ggml_get_unary_op(node)));
    }
}

// the region of a SET/ACC node that src1 covers, as a view of t
static struct ggml_tensor * region_view(struct ggml_context * ctx, struct ggml_tensor * node, struct ggml_tensor * t) {
    const struct ggml_tensor * src1 = node->src[1];
    const size_t nb1    = (size_t) ggml_get_op_params_i32(node, 0);
    const size_t nb2    = (size_t) ggml_get_op_params_i32(node, 1);
    const size_t nb3    = (size_t) ggml_get_op_params_i32(node, 2);
    const size_t offset = (size_t) ggml_get_op_params_i32(node, 3);
    return ggml_view_4d(ctx, t, src1->ne[0], src1->ne[1], src1->ne[2], src1->ne[3], nb1, nb2, nb3, offset);
}

static void backward_view(struct backward_ctx * b, struct ggml_tensor * node, struct ggml_tensor * grad, size_t slot0) {
    struct ggml_tensor * src0 = node->src[0];
    size_t offset;
    memcpy(&offset, node->op_params, sizeof(offset));
    size_t nb1 = node->nb[1], nb2 = node->nb[2], nb3 = node->nb[3];
    struct ggml_tensor * cur = b->cgraph->grads[slot0];
    if (cur != NULL && cur->type != src0->type) {
        // the gradient has its own element size (F32 for an F16 source): rescale the region
        const size_t ng = ggml_element_size(cur), n0 = ggml_element_size(src0);
        GGML_ASSERT(offset % n0 == 0 && nb1 % n0 == 0 && nb2 % n0 == 0 && nb3 % n0 == 0);
        offset = offset / n0 * ng;
        nb1 = nb1 / n0 * ng;
        nb2 = nb2 / n0 * ng;
        nb3 = nb3 / n0 * ng;
    }
    grad_acc(b, slot0, grad, nb1, nb2, nb3, offset);
}

static void compute_backward(struct backward_ctx * b, struct ggml_tensor * node, const bool * grads_needed) {
    struct ggml_cgraph  * cgraph = b->cgraph;
    struct ggml_context * ctx    = b->ctx;
    struct ggml_tensor  * grad   = ggml_graph_get_grad(cgraph, node);
    if (grad == NULL) {
        return;
    }

    struct ggml_tensor * src0 = node->src[0];
    struct ggml_tensor * src1 = node->src[1];
    size_t slot[3] = { 0, 0, 0 };
    bool   need[3] = { false, false, false };
    for (int j = 0; j < 3; j++) {
        struct ggml_tensor * s = node->src[j];
        if (s == NULL) {
            continue;
        }
        const size_t i = ggml_hash_find(&cgraph->visited_hash_set, s);
        if (i != GGML_HASHSET_FULL && ggml_bitset_get(cgraph->visited_hash_set.used, i) && grads_needed[i]) {
            slot[j] = i;
            need[j] = true;
        }
    }

    switch (node->op) {
        case GGML_OP_NONE:
            break;
        case GGML_OP_DUP:
            if (need[0]) grad_add(b, slot[0], grad);
            break;
        case GGML_OP_ADD:
            if (need[0]) grad_add(b, slot[0], grad);
            if (need[1]) grad_add(b, slot[1], ggml_are_same_shape(src0, src1) ? grad : ggml_repeat_back(ctx, grad, src1));
            break;
        case GGML_OP_ADD1:
            if (need[0]) grad_add(b, slot[0], grad);
            if (need[1]) grad_add(b, slot[1], ggml_mean(ctx, grad)); // upstream's rule
            break;
        case GGML_OP_ACC:
            if (need[0]) grad_add(b, slot[0], grad);
            if (need[1]) grad_add(b, slot[1], ggml_reshape(ctx, ggml_cont(ctx, region_view(ctx, node, grad)), src1));
            break;
        case GGML_OP_SUB:
            if (need[0]) grad_add(b, slot[0], grad);
            if (need[1]) grad_sub(b, slot[1], grad);
            break;
        case GGML_OP_MUL:
            if (need[0]) grad_add(b, slot[0], ggml_mul(ctx, grad, src1));
            if (need[1]) {
                struct ggml_tensor * t = ggml_mul(ctx, src0, grad);
                grad_add(b, slot[1], ggml_are_same_shape(src0, src1) ? t : ggml_repeat_back(ctx, t, src1));
            }
            break;
        case GGML_OP_DIV:
            if (need[0]) grad_add(b, slot[0], ggml_div(ctx, grad, src1));
            if (need[1]) grad_sub(b, slot[1], ggml_mul(ctx, grad, ggml_div(ctx, node, src1)));
            break;
        case GGML_OP_SQR:
            if (need[0]) grad_add(b, slot[0], ggml_scale(ctx, ggml_mul(ctx, src0, grad), 2.0f));
            break;
        case GGML_OP_SQRT:
            if (need[0]) grad_add(b, slot[0], ggml_scale(ctx, ggml_div(ctx, grad, node), 0.5f));
            break;
        case GGML_OP_LOG:
            if (need[0]) grad_add(b, slot[0], ggml_div(ctx, grad, src0));
            break;
        case GGML_OP_SIN:
            if (need[0]) grad_add(b, slot[0], ggml_mul(ctx, grad, ggml_cos(ctx, src0)));
            break;
        case GGML_OP_COS:
            if (need[0]) grad_sub(b, slot[0], ggml_mul(ctx, grad, ggml_sin(ctx, src0)));
            break;
        case GGML_OP_SUM:
            if (need[0]) grad_add1(b, slot[0], grad);
            break;
        case GGML_OP_SUM_ROWS:
            if (need[0]) grad_add(b, slot[0], ggml_repeat(ctx, grad, src0));
            break;
        case GGML_OP_MEAN:
            if (need[0]) grad_add1(b, slot[0], ggml_scale(ctx, grad, 1.0f / (float) src0->ne[0]));
            break;
        case GGML_OP_REPEAT:
            if (need[0]) grad_add(b, slot[0], ggml_repeat_back(ctx, grad, src0));
            break;
        case GGML_OP_REPEAT_BACK:
            if (need[0]) grad_add(b, slot[0], ggml_repeat(ctx, grad, src0));
            break;
        case GGML_OP_RMS_NORM:
            if (need[0]) grad_add(b, slot[0], ggml_rms_norm_back(ctx, grad, src0, ggml_get_op_params_f32(node, 0)));
            break;
        case GGML_OP_MUL_MAT:
            backward_mul_mat(b, node, grad, need, slot);
            break;
        case GGML_OP_SCALE:
            if (need[0]) grad_add(b, slot[0], ggml_scale(ctx, grad, ggml_get_op_params_f32(node, 0)));
            break;
        case GGML_OP_SET:
            if (need[0] || need[1]) {
                GGML_ASSERT(src0->type == node->type);
            }
            if (need[0]) {
                // the region src1 overwrote gets no gradient
                struct ggml_tensor * hole = ggml_neg(ctx, region_view(ctx, node, grad));
                grad_add(b, slot[0], ggml_acc(ctx, grad, hole, (size_t) ggml_get_op_params_i32(node, 0),
                                              (size_t) ggml_get_op_params_i32(node, 1), (size_t) ggml_get_op_params_i32(node, 2),
                                              (size_t) ggml_get_op_params_i32(node, 3)));
            }
            if (need[1]) grad_add(b, slot[1], ggml_reshape(ctx, ggml_cont(ctx, region_view(ctx, node, grad)), src1));
            break;
        case GGML_OP_CPY:
            // node = src0 copied over src1: src1's old values do not matter
            if (need[0]) grad_add(b, slot[0], ggml_reshape(ctx, grad, src0));
            break;
        case GGML_OP_CONT:
            if (need[0]) {
                GGML_ASSERT(ggml_is_contiguous(grad));
                grad_add(b, slot[0], ggml_are_same_shape(node, src0) ? grad : ggml_reshape(ctx, grad, src0));
            }
            break;
        case GGML_OP_RESHAPE:
            if (need[0]) grad_add(b, slot[0], ggml_reshape(ctx, ggml_is_contiguous(grad) ? grad : ggml_cont(ctx, grad), src0));
            break;
        case GGML_OP_VIEW:
            if (need[0]) backward_view(b, node, grad, slot[0]);
            break;
        case GGML_OP_PERMUTE:
            if (need[0]) {
                int inverse[4] = { 0, 0, 0, 0 };
                for (int d = 0; d < 4; d++) {
                    inverse[ggml_get_op_params_i32(node, d) & 3] = d;
                }
                grad_add(b, slot[0], ggml_permute(ctx, grad, inverse[0], inverse[1], inverse[2], inverse[3]));
            }
            break;
        case GGML_OP_TRANSPOSE:
            if (need[0]) grad_add(b, slot[0], ggml_transpose(ctx, grad));
            break;
        case GGML_OP_GET_ROWS:
            if (need[0]) grad_add(b, slot[0], ggml_get_rows_back(ctx, grad, src1, src0));
            break;
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_DIAG_MASK_ZERO:
            if (need[0]) grad_add(b, slot[0], ggml_diag_mask_zero(ctx, grad, ggml_get_op_params_i32(node, 0)));
            break;
        case GGML_OP_SOFT_MAX:
            GGML_ASSERT(!need[1] && "backward pass: no gradient for the softmax mask");
            if (need[0]) {
                grad_add(b, slot[0], ggml_soft_max_ext_back(ctx, grad, node, ggml_get_op_params_f32(node, 0),
                                                            ggml_get_op_params_f32(node, 1)));
            }
            break;
        case GGML_OP_ROPE:
            GGML_ASSERT(!need[2] && "backward pass: no gradient for the frequency factors");
            if (need[0]) backward_rope(b, node, grad);
            break;
        case GGML_OP_IM2COL:
            if (need[1]) {
                grad_add(b, slot[1], ggml_im2col_back(ctx, grad, src0, src1->ne,
                                                      ggml_get_op_params_i32(node, 0), ggml_get_op_params_i32(node, 1),
                                                      ggml_get_op_params_i32(node, 2), ggml_get_op_params_i32(node, 3),
                                                      ggml_get_op_params_i32(node, 4), ggml_get_op_params_i32(node, 5),
                                                      ggml_get_op_params_i32(node, 6) == 1));
            }
            break;
        case GGML_OP_POOL_2D:
            if (need[0]) {
                grad_add(b, slot[0], ggml_pool_2d_back(ctx, grad, src0, (enum ggml_op_pool) ggml_get_op_params_i32(node, 0),
                                                       ggml_get_op_params_i32(node, 1), ggml_get_op_params_i32(node, 2),
                                                       ggml_get_op_params_i32(node, 3), ggml_get_op_params_i32(node, 4),
                                                       (float) ggml_get_op_params_i32(node, 5), (float) ggml_get_op_params_i32(node, 6)));
            }
            break;
        case GGML_OP_UNARY:
            if (need[0]) backward_unary(b, node, grad, slot[0]);
            break;
        case GGML_OP_CROSS_ENTROPY_LOSS:
            GGML_ASSERT(!need[1] && "backward pass: no gradient for the labels");
            if (need[0]) grad_add(b, slot[0], ggml_cross_entropy_loss_back(ctx, grad, src0, src1));
            break;
        case GGML_OP_GLU:
            GGML_ASSERT(ggml_get_glu_op(node) == GGML_GLU_OP_SWIGLU && "backward pass: only SWIGLU among the GLU ops");
            if (need[0]) {
                GGML_ASSERT(src1 != NULL && "backward pass: only the split form of SWIGLU");
                grad_add(b, slot[0], ggml_silu_back(ctx, ggml_mul(ctx, grad, src1), src0));
            }
            if (need[1]) grad_add(b, slot[1], ggml_mul(ctx, ggml_silu(ctx, src0), grad));
            break;
        default:
            GGML_ABORT("backward pass: op %s is not differentiable", ggml_op_name(node->op));
    }

    for (int j = 0; j < 3; j++) {
        GGML_ASSERT(!need[j] || ggml_are_same_shape(node->src[j], cgraph->grads[slot[j]]));
    }
}

// The ops compute_backward has a rule for: the element-wise ones from the
// lists of ggml-op-list.h (field grad), the others here.
bool ggml_backward_has_grad(const struct ggml_tensor * node) {
    switch (node->op) {
        case GGML_OP_NONE: case GGML_OP_DUP: case GGML_OP_ADD1: case GGML_OP_ACC:
        case GGML_OP_SUM: case GGML_OP_SUM_ROWS: case GGML_OP_MEAN: case GGML_OP_REPEAT: case GGML_OP_REPEAT_BACK:
        case GGML_OP_RMS_NORM: case GGML_OP_MUL_MAT: case GGML_OP_SET: case GGML_OP_CPY: case GGML_OP_CONT:
        case GGML_OP_RESHAPE: case GGML_OP_VIEW: case GGML_OP_PERMUTE: case GGML_OP_TRANSPOSE:
        case GGML_OP_GET_ROWS: case GGML_OP_DIAG_MASK_INF: case GGML_OP_DIAG_MASK_ZERO: case GGML_OP_SOFT_MAX:
        case GGML_OP_ROPE: case GGML_OP_IM2COL: case GGML_OP_POOL_2D: case GGML_OP_CROSS_ENTROPY_LOSS:
            return true;
        case GGML_OP_UNARY:
            switch (ggml_get_unary_op(node)) {
#define X(NAME, op, f32, vec, f64, grad, ...) case GGML_UNARY_OP_##NAME: return grad;
                GGML_OP_LIST_UNARY_FNS(X)
#undef X
                default: return false;
            }
        case GGML_OP_GLU:
            // the split form only
            switch (ggml_get_glu_op(node)) {
#define X(NAME, f32, vec, f64, grad, ...) case GGML_GLU_OP_##NAME: return grad && node->src[1] != NULL;
                GGML_OP_LIST_GLU(X)
#undef X
                default: return false;
            }
        default:
            break;
    }
#define X(NAME, lop, f32, vec, f64, grad, ...) if (node->op == lop) return grad;
    GGML_OP_LIST_UNARY_OPS(X)
#undef X
#define X(NAME, ctor, f32, vec, f64, grad, ...) if (node->op == GGML_OP_##NAME) return grad;
    GGML_OP_LIST_BINARY(X)
#undef X
    return false;
}

// Sources whose gradient cannot reach the output through this node (indices,
// positions, shape-only inputs, piecewise constant functions).
static bool backward_ignores_src(const struct ggml_tensor * node, int j) {
    switch (node->op) {
        case GGML_OP_IM2COL:
        case GGML_OP_IM2COL_BACK:
            return j == 0;
        case GGML_OP_UNARY: {
            const enum ggml_unary_op uop = ggml_get_unary_op(node);
            return j == 0 && (uop == GGML_UNARY_OP_SGN || uop == GGML_UNARY_OP_STEP);
        }
        case GGML_OP_CPY:
        case GGML_OP_GET_ROWS:
        case GGML_OP_GET_ROWS_BACK:
        case GGML_OP_ROPE:
            return j == 1;
        default:
            return false;
    }
}

void ggml_build_backward_expand(struct ggml_context * ctx, struct ggml_cgraph * cgraph, struct ggml_tensor ** grad_accs) {
    GGML_ASSERT(cgraph->n_nodes > 0);
    GGML_ASSERT(cgraph->grads != NULL && cgraph->grad_accs != NULL && "the graph was made without gradients");

    const int    n_forward = cgraph->n_nodes;
    const size_t n_slots   = cgraph->visited_hash_set.size;
    memset(cgraph->grads,     0, n_slots * sizeof(struct ggml_tensor *));
    memset(cgraph->grad_accs, 0, n_slots * sizeof(struct ggml_tensor *));

    bool any_param = false, any_loss = false;
    for (int i = 0; i < n_forward; i++) {
        any_param = any_param || (cgraph->nodes[i]->flags & GGML_TENSOR_FLAG_PARAM);
        any_loss  = any_loss  || (cgraph->nodes[i]->flags & GGML_TENSOR_FLAG_LOSS);
    }
    GGML_ASSERT(any_param && "no trainable parameters: ggml_set_param was not called");
    GGML_ASSERT(any_loss && "no loss: ggml_set_loss was not called");

    bool * grads_needed = calloc(n_slots, sizeof(bool));
    GGML_ASSERT(grads_needed != NULL && "out of memory");

    // forward: a node needs a gradient if it is a parameter or the loss, or
    // depends on a node that needs one
    for (int i = 0; i < n_forward; i++) {
        struct ggml_tensor * node = cgraph->nodes[i];
        if (node->type == GGML_TYPE_I32) {
            continue;
        }
        bool needs = (node->flags & (GGML_TENSOR_FLAG_PARAM | GGML_TENSOR_FLAG_LOSS)) != 0;
        for (int j = 0; j < GGML_MAX_SRC && !needs; j++) {
            const struct ggml_tensor * s = node->src[j];
            if (s == NULL || backward_ignores_src(node, j) ||
                !grads_needed[ggml_hash_find(&cgraph->visited_hash_set, s)]) {
                continue;
            }
            GGML_ASSERT(s->type == GGML_TYPE_F32 || s->type == GGML_TYPE_F16);
            needs = true;
        }
        if (!needs) {
            continue;
        }
        // in-place ops would overwrite values the backward pass reads
        GGML_ASSERT((node->view_src == NULL || node->op == GGML_OP_CPY || node->op == GGML_OP_VIEW ||
                     node->op == GGML_OP_RESHAPE || node->op == GGML_OP_PERMUTE || node->op == GGML_OP_TRANSPOSE) &&
                    "backward pass: in-place ops are not supported");

        const size_t ih = grad_slot(cgraph, node);
        if (grad_accs != NULL && grad_accs[i] != NULL) {
            cgraph->grad_accs[ih] = grad_accs[i];
            cgraph->grads[ih]     = grad_accs[i];
        } else if (node->flags & GGML_TENSOR_FLAG_LOSS) {
            cgraph->grad_accs[ih] = ggml_new_tensor(ctx, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            cgraph->grads[ih]     = cgraph->grad_accs[ih];
        }
        grads_needed[ih] = true;
    }

    struct backward_ctx b = { ctx, cgraph };
    for (int i = n_forward - 1; i >= 0; i--) {
        compute_backward(&b, cgraph->nodes[i], grads_needed);
    }
    free(grads_needed);
}
