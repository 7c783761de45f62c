#pragma once

// graph-helpers.h: graph nodes made by hand for the allocator and backend
// tests, independent of the op constructors: an op, a shape and sources,
// nothing else (the backends under test read op_params where they need them).

#include "ggml.h"
#include "ggml-impl.h"

static inline struct ggml_tensor * th_node(struct ggml_context * ctx, enum ggml_op op, enum ggml_type type,
                                           int64_t ne0, int64_t ne1, struct ggml_tensor * src0, struct ggml_tensor * src1) {
    const int64_t ne[2] = { ne0, ne1 };
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, 2, ne);
    t->op     = op;
    t->src[0] = src0;
    t->src[1] = src1;
    return t;
}

// an elementwise node shaped like src0
static inline struct ggml_tensor * th_like(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * src0, struct ggml_tensor * src1) {
    struct ggml_tensor * t = ggml_new_tensor(ctx, src0->type, GGML_MAX_DIMS, src0->ne);
    t->op     = op;
    t->src[0] = src0;
    t->src[1] = src1;
    return t;
}

static inline struct ggml_tensor * th_scale(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b) {
    struct ggml_tensor * t = th_like(ctx, GGML_OP_SCALE, a, NULL);
    const float params[2] = { s, b };
    ggml_set_op_params(t, params, sizeof(params));
    return t;
}

// a contiguous copy of a (any layout)
static inline struct ggml_tensor * th_cont(struct ggml_context * ctx, struct ggml_tensor * a) {
    return th_like(ctx, GGML_OP_CONT, a, NULL);
}

// dst[i0, i1] = sum_k a[k, i0] * b[k, i1]
static inline struct ggml_tensor * th_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return th_node(ctx, GGML_OP_MUL_MAT, GGML_TYPE_F32, a->ne[1], b->ne[1], a, b);
}

// a 2-D view of src: ne0 x ne1 elements, rows nb1 bytes apart, starting offset bytes in
static inline struct ggml_tensor * th_view_2d(struct ggml_context * ctx, struct ggml_tensor * src,
                                              int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
    struct ggml_tensor * t = ggml_view_tensor(ctx, src); // view_src and view_offs follow src's
    t->view_offs += offset;
    if (t->data != NULL) {
        t->data = (char *) t->data + offset;
    }
    t->ne[0] = ne0;
    t->ne[1] = ne1;
    t->ne[2] = 1;
    t->ne[3] = 1;
    t->nb[0] = ggml_type_size(src->type);
    t->nb[1] = nb1;
    t->nb[2] = nb1 * (size_t) ne1;
    t->nb[3] = t->nb[2];
    t->op     = GGML_OP_VIEW;
    t->src[0] = src;
    return t;
}

// the transpose of a 2-D tensor, as a view
static inline struct ggml_tensor * th_transpose(struct ggml_context * ctx, struct ggml_tensor * src) {
    struct ggml_tensor * t = ggml_view_tensor(ctx, src);
    t->ne[0]  = src->ne[1];
    t->ne[1]  = src->ne[0];
    t->nb[0]  = src->nb[1];
    t->nb[1]  = src->nb[0];
    t->op     = GGML_OP_TRANSPOSE;
    t->src[0] = src;
    return t;
}
