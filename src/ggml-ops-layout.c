// ggml-ops-layout.c: constructors of the operations that move, copy or
// reinterpret data: dup, cpy, cast, cont, reshape, view, permute, transpose,
// get_rows, set_rows, set, acc, repeat, concat, pad, arange, diag_mask_inf.
//
// Reshape, view, permute and transpose compute nothing: their result is a
// view (view_src, view_offs) of the source's memory with its own ne[] and
// nb[]. A view of a view aliases the root tensor, at the summed offset.

#include "ggml-impl.h"

static struct ggml_tensor * elementwise_result(struct ggml_context * ctx, struct ggml_tensor * a, bool inplace) {
    return inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
}

//
// copies
//

static struct ggml_tensor * dup_op(struct ggml_context * ctx, struct ggml_tensor * a, bool inplace) {
    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    result->op     = GGML_OP_DUP;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_dup(struct ggml_context * ctx, struct ggml_tensor * a) {
    return dup_op(ctx, a, false);
}

struct ggml_tensor * ggml_dup_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return dup_op(ctx, a, true);
}

// The result is a view of b: the copy lands in b's memory.
struct ggml_tensor * ggml_cpy(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_nelements(a) == ggml_nelements(b));

    struct ggml_tensor * result = ggml_view_tensor(ctx, b);
    if (b->name[0] != '\0') {
        ggml_format_name(result, "%s (copy of %s)", b->name, a->name);
    } else {
        ggml_format_name(result, "%s (copy)", a->name);
    }
    result->op     = GGML_OP_CPY;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// A CPY whose destination is the result itself, so that backends handle it
// exactly like ggml_cpy (src[1] is the destination).
struct ggml_tensor * ggml_cast(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_type type) {
    struct ggml_tensor * result = ggml_new_tensor(ctx, type, GGML_MAX_DIMS, a->ne);
    ggml_format_name(result, "%s (copy)", a->name);
    result->op     = GGML_OP_CPY;
    result->src[0] = a;
    result->src[1] = result;
    return result;
}

struct ggml_tensor * ggml_cont(struct ggml_context * ctx, struct ggml_tensor * a) {
    struct ggml_tensor * result = ggml_dup_tensor(ctx, a);
    ggml_format_name(result, "%s (cont)", a->name);
    result->op     = GGML_OP_CONT;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_cont_4d(struct ggml_context * ctx, struct ggml_tensor * a,
                                  int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    GGML_ASSERT(ggml_nelements(a) == (ne0*ne1*ne2*ne3));

    struct ggml_tensor * result = ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    ggml_format_name(result, "%s (cont)", a->name);
    result->op     = GGML_OP_CONT;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_cont_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0) {
    return ggml_cont_4d(ctx, a, ne0, 1, 1, 1);
}

struct ggml_tensor * ggml_cont_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1) {
    return ggml_cont_4d(ctx, a, ne0, ne1, 1, 1);
}

struct ggml_tensor * ggml_cont_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    return ggml_cont_4d(ctx, a, ne0, ne1, ne2, 1);
}

//
// reshape: a contiguous view with a new shape
//

static struct ggml_tensor * reshape_view(struct ggml_context * ctx, struct ggml_tensor * a, int n_dims, const int64_t * ne) {
    struct ggml_tensor * result = ggml_new_tensor_impl(ctx, a->type, n_dims, ne, a, 0);
    ggml_format_name(result, "%s (reshaped)", a->name);
    result->op     = GGML_OP_RESHAPE;
    result->src[0] = a;
    return result;
}

// only b's shape matters: b may be non-contiguous
struct ggml_tensor * ggml_reshape(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(ggml_nelements(a) == ggml_nelements(b));
    return reshape_view(ctx, a, GGML_MAX_DIMS, b->ne);
}

struct ggml_tensor * ggml_reshape_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0) {
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(ggml_nelements(a) == ne0);
    const int64_t ne[1] = { ne0 };
    return reshape_view(ctx, a, 1, ne);
}

struct ggml_tensor * ggml_reshape_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1) {
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(ggml_nelements(a) == ne0*ne1);
    const int64_t ne[2] = { ne0, ne1 };
    return reshape_view(ctx, a, 2, ne);
}

struct ggml_tensor * ggml_reshape_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(ggml_nelements(a) == ne0*ne1*ne2);
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return reshape_view(ctx, a, 3, ne);
}

struct ggml_tensor * ggml_reshape_4d(struct ggml_context * ctx, struct ggml_tensor * a,
                                     int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(ggml_nelements(a) == ne0*ne1*ne2*ne3);
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return reshape_view(ctx, a, 4, ne);
}

//
// views: op_params hold the byte offset (a size_t)
//

// The view starts with contiguous strides for its shape; callers set their own.
static struct ggml_tensor * view_op(struct ggml_context * ctx, struct ggml_tensor * a, int n_dims, const int64_t * ne, size_t offset) {
    struct ggml_tensor * result = ggml_new_tensor_impl(ctx, a->type, n_dims, ne, a, offset);
    ggml_format_name(result, "%s (view)", a->name);
    ggml_set_op_params(result, &offset, sizeof(offset));
    result->op     = GGML_OP_VIEW;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_view_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, size_t offset) {
    return view_op(ctx, a, 1, &ne0, offset);
}

struct ggml_tensor * ggml_view_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                  size_t nb1, size_t offset) {
    const int64_t ne[2] = { ne0, ne1 };
    struct ggml_tensor * result = view_op(ctx, a, 2, ne, offset);
    result->nb[1] = nb1;
    result->nb[2] = nb1 * (size_t) ne1;
    result->nb[3] = result->nb[2];
    return result;
}

struct ggml_tensor * ggml_view_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                  size_t nb1, size_t nb2, size_t offset) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    struct ggml_tensor * result = view_op(ctx, a, 3, ne, offset);
    result->nb[1] = nb1;
    result->nb[2] = nb2;
    result->nb[3] = nb2 * (size_t) ne2;
    return result;
}

struct ggml_tensor * ggml_view_4d(struct ggml_context * ctx, struct ggml_tensor * a,
                                  int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                  size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    struct ggml_tensor * result = view_op(ctx, a, 4, ne, offset);
    result->nb[1] = nb1;
    result->nb[2] = nb2;
    result->nb[3] = nb3;
    return result;
}

//
// permute, transpose
//

// op_params: the four axes (int32)
struct ggml_tensor * ggml_permute(struct ggml_context * ctx, struct ggml_tensor * a,
                                  int axis0, int axis1, int axis2, int axis3) {
    GGML_ASSERT(axis0 >= 0 && axis0 < GGML_MAX_DIMS);
    GGML_ASSERT(axis1 >= 0 && axis1 < GGML_MAX_DIMS);
    GGML_ASSERT(axis2 >= 0 && axis2 < GGML_MAX_DIMS);
    GGML_ASSERT(axis3 >= 0 && axis3 < GGML_MAX_DIMS);

    GGML_ASSERT(axis0 != axis1);
    GGML_ASSERT(axis0 != axis2);
    GGML_ASSERT(axis0 != axis3);
    GGML_ASSERT(axis1 != axis2);
    GGML_ASSERT(axis1 != axis3);
    GGML_ASSERT(axis2 != axis3);

    struct ggml_tensor * result = ggml_view_tensor(ctx, a);
    ggml_format_name(result, "%s (permuted)", a->name);

    const int32_t axes[GGML_MAX_DIMS] = { axis0, axis1, axis2, axis3 };
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        result->ne[axes[i]] = a->ne[i];
        result->nb[axes[i]] = a->nb[i];
    }

    result->op     = GGML_OP_PERMUTE;
    result->src[0] = a;
    ggml_set_op_params(result, axes, sizeof(axes));
    return result;
}

struct ggml_tensor * ggml_transpose(struct ggml_context * ctx, struct ggml_tensor * a) {
    struct ggml_tensor * result = ggml_view_tensor(ctx, a);
    ggml_format_name(result, "%s (transposed)", a->name);

    result->ne[0] = a->ne[1];
    result->ne[1] = a->ne[0];
    result->nb[0] = a->nb[1];
    result->nb[1] = a->nb[0];

    result->op     = GGML_OP_TRANSPOSE;
    result->src[0] = a;
    return result;
}

//
// rows by index
//

// a: [n_embd, ne1, ne2, ne3], b: I32 [n_rows, ne2, ne3] -> [n_embd, n_rows, ne2, ne3]
struct ggml_tensor * ggml_get_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(a->ne[2] == b->ne[1]);
    GGML_ASSERT(a->ne[3] == b->ne[2]);
    GGML_ASSERT(b->ne[3] == 1);
    GGML_ASSERT(b->type == GGML_TYPE_I32);

    // the backends dequantize rows to F32; only I32 rows stay as they are
    const enum ggml_type type = a->type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32;
    struct ggml_tensor * result = ggml_new_tensor_4d(ctx, type, a->ne[0], b->ne[0], b->ne[1], b->ne[2]);
    result->op     = GGML_OP_GET_ROWS;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// Writes the rows of b into a at the indices in c; the result is a view of a.
// The source slots are src[0] = b, src[1] = c, src[2] = a, as upstream.
struct ggml_tensor * ggml_set_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                   struct ggml_tensor * c) {
    GGML_ASSERT(a->ne[0] == b->ne[0]);
    GGML_ASSERT(a->ne[2] == b->ne[2]);
    GGML_ASSERT(a->ne[3] == b->ne[3]);
    GGML_ASSERT(b->ne[1] == c->ne[0]);
    GGML_ASSERT(b->ne[2] % c->ne[1] == 0);
    GGML_ASSERT(b->ne[3] % c->ne[2] == 0);
    GGML_ASSERT(c->ne[3] == 1);
    GGML_ASSERT(b->type == GGML_TYPE_F32 || b->type == GGML_TYPE_F16);
    GGML_ASSERT(c->type == GGML_TYPE_I64 || c->type == GGML_TYPE_I32);

    GGML_ASSERT(ggml_is_contiguous_rows(a));
    GGML_ASSERT(ggml_is_contiguous_rows(b));

    struct ggml_tensor * result = ggml_view_tensor(ctx, a);
    result->op     = GGML_OP_SET_ROWS;
    result->src[0] = b;
    result->src[1] = c;
    result->src[2] = a;
    return result;
}

//
// set, acc: b written into (or added to) a strided window of a
// op_params (int32): nb1, nb2, nb3, offset, inplace
//

static void set_window_params(struct ggml_tensor * result, size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace) {
    const int32_t params[5] = { (int32_t) nb1, (int32_t) nb2, (int32_t) nb3, (int32_t) offset, inplace ? 1 : 0 };
    ggml_set_op_params(result, params, sizeof(params));
}

static struct ggml_tensor * set_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                   size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace) {
    GGML_ASSERT(ggml_nelements(a) >= ggml_nelements(b));

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);

    GGML_ASSERT(offset < (size_t)(1 << 30));
    set_window_params(result, nb1, nb2, nb3, offset, inplace);
    result->op     = GGML_OP_SET;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_set(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                              size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return set_op(ctx, a, b, nb1, nb2, nb3, offset, false);
}

struct ggml_tensor * ggml_set_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return set_op(ctx, a, b, nb1, nb2, nb3, offset, true);
}

struct ggml_tensor * ggml_set_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset) {
    return set_op(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, false);
}

struct ggml_tensor * ggml_set_1d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, size_t offset) {
    return set_op(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], offset, true);
}

struct ggml_tensor * ggml_set_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                 size_t nb1, size_t offset) {
    return set_op(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, false);
}

struct ggml_tensor * ggml_set_2d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                         size_t nb1, size_t offset) {
    return set_op(ctx, a, b, nb1, a->nb[2], a->nb[3], offset, true);
}

static struct ggml_tensor * acc_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                   size_t nb1, size_t nb2, size_t nb3, size_t offset, bool inplace) {
    GGML_ASSERT(ggml_nelements(b) <= ggml_nelements(a));
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    GGML_ASSERT(b->type == GGML_TYPE_F32);

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    set_window_params(result, nb1, nb2, nb3, offset, inplace);
    result->op     = GGML_OP_ACC;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_acc(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                              size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return acc_op(ctx, a, b, nb1, nb2, nb3, offset, false);
}

struct ggml_tensor * ggml_acc_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return acc_op(ctx, a, b, nb1, nb2, nb3, offset, true);
}

//
// repeat, concat, pad
//

struct ggml_tensor * ggml_repeat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_can_repeat(a, b));

    struct ggml_tensor * result = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, b->ne);
    result->op     = GGML_OP_REPEAT;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_repeat_4d(struct ggml_context * ctx, struct ggml_tensor * a,
                                    int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const bool can_repeat = ggml_is_empty(a) || (
        ne0 % a->ne[0] == 0 &&
        ne1 % a->ne[1] == 0 &&
        ne2 % a->ne[2] == 0 &&
        ne3 % a->ne[3] == 0);
    GGML_ASSERT(can_repeat);

    struct ggml_tensor * result = ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    result->op     = GGML_OP_REPEAT;
    result->src[0] = a;
    return result;
}

// op_params[0]: dim
struct ggml_tensor * ggml_concat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int dim) {
    GGML_ASSERT(dim >= 0 && dim < GGML_MAX_DIMS);
    GGML_ASSERT(a->type == b->type);

    int64_t ne[GGML_MAX_DIMS];
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (d == dim) {
            ne[d] = a->ne[d] + b->ne[d];
        } else {
            GGML_ASSERT(a->ne[d] == b->ne[d]);
            ne[d] = a->ne[d];
        }
    }

    struct ggml_tensor * result = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, ne);
    ggml_set_op_params_i32(result, 0, dim);
    result->op     = GGML_OP_CONCAT;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_pad(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1, int p2, int p3) {
    return ggml_pad_ext(ctx, a, 0, p0, 0, p1, 0, p2, 0, p3);
}

// op_params (int32): lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3, circular (0 here)
struct ggml_tensor * ggml_pad_ext(struct ggml_context * ctx, struct ggml_tensor * a,
                                  int lp0, int rp0, int lp1, int rp1, int lp2, int rp2, int lp3, int rp3) {
    struct ggml_tensor * result = ggml_new_tensor_4d(ctx, a->type,
            a->ne[0] + lp0 + rp0,
            a->ne[1] + lp1 + rp1,
            a->ne[2] + lp2 + rp2,
            a->ne[3] + lp3 + rp3);

    const int32_t params[9] = { lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3, 0 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_PAD;
    result->src[0] = a;
    return result;
}

//
// generators and masks
//

// op_params (float): start, stop, step
struct ggml_tensor * ggml_arange(struct ggml_context * ctx, float start, float stop, float step) {
    GGML_ASSERT(stop > start);

    const int64_t steps = (int64_t) ceilf((stop - start) / step);

    struct ggml_tensor * result = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, steps);
    ggml_set_op_params_f32(result, 0, start);
    ggml_set_op_params_f32(result, 1, stop);
    ggml_set_op_params_f32(result, 2, step);
    result->op = GGML_OP_ARANGE;
    return result;
}

// op_params[0]: n_past
static struct ggml_tensor * diag_mask_inf_op(struct ggml_context * ctx, struct ggml_tensor * a, int n_past, bool inplace) {
    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    ggml_set_op_params_i32(result, 0, n_past);
    result->op     = GGML_OP_DIAG_MASK_INF;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_diag_mask_inf(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return diag_mask_inf_op(ctx, a, n_past, false);
}

struct ggml_tensor * ggml_diag_mask_inf_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return diag_mask_inf_op(ctx, a, n_past, true);
}
