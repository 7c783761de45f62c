// ops-binary.c: ADD, SUB, MUL, DIV (src1 broadcast over src0), ADD1 (a scalar
// added) and ACC (src1 added into a window of src0).
//
// Values are computed in binary32 from inputs of any float type (F32, F16,
// BF16) into outputs of any float type, rows strided or not. ADD and ADD1
// also take a quantized src0 with an F32 src1, as upstream: each chunk is
// dequantized, added to and written out in dst's type (requantized when dst
// is quantized). The ops and their expressions are the binary list of
// ggml-op-list.h.

#include "ops/elementwise.h"
#include "simd/simd-f32.h"
#include "ggml-op-list.h"

// EW_<NAME> for every binary op of the list (ggml-op-list.h)
enum ew_binop {
#define X(NAME, ...) EW_##NAME,
    GGML_OP_LIST_BINARY(X)
#undef X
    EW_BINOP_COUNT,
};

static inline float binop_scalar(enum ew_binop op, float x, float y) {
    switch (op) {
#define X(NAME, ctor, f32, ...) case EW_##NAME: return f32;
        GGML_OP_LIST_BINARY(X)
#undef X
        case EW_BINOP_COUNT: break;
    }
    return 0.0f;
}

#ifdef GGML_VF_WIDTH
static inline ggml_vf binop_vector(enum ew_binop op, ggml_vf x, ggml_vf y) {
    switch (op) {
#define X(NAME, ctor, f32, vec, ...) case EW_##NAME: return vec;
        GGML_OP_LIST_BINARY(X)
#undef X
        case EW_BINOP_COUNT: break;
    }
    return x;
}
#endif

// z[i] = x[i] op y[i]. Called with a constant op, so that each caller gets
// its own loop. z may be x or y (in-place), hence no restrict.
static inline void binop_rows(enum ew_binop op, int64_t n, float * z, const float * x, const float * y, bool ref) {
    (void) ref; // without a vector path, every call takes the scalar loop
    int64_t i = 0;
#ifdef GGML_VF_WIDTH
    if (!ref) {
        for (; i + GGML_VF_WIDTH <= n; i += GGML_VF_WIDTH) {
            ggml_vf_store(z + i, binop_vector(op, ggml_vf_load(x + i), ggml_vf_load(y + i)));
        }
    }
#endif
    // the tail: the list's ops round the same in scalar and vector code
    for (; i < n; i++) {
        z[i] = binop_scalar(op, x[i], y[i]);
    }
}

// z[i] = x[i] op s
static inline void binop_rows_scalar(enum ew_binop op, int64_t n, float * z, const float * x, float s, bool ref) {
    (void) ref; // without a vector path, every call takes the scalar loop
    int64_t i = 0;
#ifdef GGML_VF_WIDTH
    if (!ref) {
        const ggml_vf sv = ggml_vf_set1(s);
        for (; i + GGML_VF_WIDTH <= n; i += GGML_VF_WIDTH) {
            ggml_vf_store(z + i, binop_vector(op, ggml_vf_load(x + i), sv));
        }
    }
#endif
    for (; i < n; i++) {
        z[i] = binop_scalar(op, x[i], s);
    }
}

static void binop_apply(enum ew_binop op, int64_t n, float * z, const float * x, const float * y, bool ref) {
    switch (op) {
#define X(NAME, ...) case EW_##NAME: binop_rows(EW_##NAME, n, z, x, y, ref); break;
        GGML_OP_LIST_BINARY(X)
#undef X
        case EW_BINOP_COUNT: break;
    }
}

static void binop_apply_scalar(enum ew_binop op, int64_t n, float * z, const float * x, float s, bool ref) {
    switch (op) {
#define X(NAME, ...) case EW_##NAME: binop_rows_scalar(EW_##NAME, n, z, x, s, ref); break;
        GGML_OP_LIST_BINARY(X)
#undef X
        case EW_BINOP_COUNT: break;
    }
}

// buf[k] = b[(j + k) % ne10] for k < n: src1's row repeated along dimension 0
static void read_repeated(struct ggml_ew_row b, int64_t ne10, int64_t j, int64_t n, float * buf, bool ref) {
    for (int64_t k = 0; k < n; ) {
        const int64_t pos = (j + k) % ne10;
        const int64_t m   = MIN(ne10 - pos, n - k);
        const float * v = ggml_ew_read(b, pos, m, buf + k, ref);
        if (v != buf + k) {
            memcpy(buf + k, v, sizeof(float) * (size_t) m);
        }
        k += m;
    }
}

// d[j] = a[j] op b[j % ne10] for j in [c0, c1), where b's row has ne10 elements
static void binary_span(enum ew_binop op, struct ggml_ew_row d, struct ggml_ew_row a, struct ggml_ew_row b,
                        int64_t ne0, int64_t ne10, int64_t c0, int64_t c1, bool ref) {
    float xbuf[GGML_EW_CHUNK];
    float ybuf[GGML_EW_CHUNK];
    float zbuf[GGML_EW_CHUNK];

    float s = 0.0f;
    if (ne10 == 1) {
        s = *ggml_ew_read(b, 0, 1, ybuf, ref);
    }
    const bool direct = ggml_ew_row_is_direct(d) && ggml_ew_row_is_direct(a) &&
                        (ne10 == 1 || (ne10 == ne0 && ggml_ew_row_is_direct(b)));

    for (int64_t j = c0; j < c1; ) {
        const int64_t n = direct ? c1 - j : MIN(GGML_EW_CHUNK, c1 - j);
        const float * x = ggml_ew_read(a, j, n, xbuf, ref);
        float * z = ggml_ew_out(d, j, zbuf);
        if (ne10 == 1) {
            binop_apply_scalar(op, n, z, x, s, ref);
        } else if (ne10 == ne0) {
            binop_apply(op, n, z, x, ggml_ew_read(b, j, n, ybuf, ref), ref);
        } else {
            read_repeated(b, ne10, j, n, ybuf, ref);
            binop_apply(op, n, z, x, ybuf, ref);
        }
        ggml_ew_write(d, j, n, z, ref);
        j += n;
    }
}

static enum ew_binop binop_of(enum ggml_op op) {
    switch (op) {
        case GGML_OP_ADD1: return EW_ADD;
#define X(NAME, ...) case GGML_OP_##NAME: return EW_##NAME;
        GGML_OP_LIST_BINARY(X)
#undef X
        default: GGML_ABORT("%s is not a binary elementwise op", ggml_op_name(op));
    }
}

static void forward_binary(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    GGML_ASSERT(ggml_can_repeat(src1, src0) && ggml_are_same_shape(src0, dst));

    const enum ew_binop op = binop_of(dst->op);
    const struct ggml_ew_split split = ggml_ew_split_make(dst, params->nth);

    int64_t u0, u1;
    ggml_cpu_split_range(split.nrows * split.nblk, params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        int64_t i1, i2, i3, c0, c1;
        ggml_ew_split_unit(&split, dst, u, &i1, &i2, &i3, &c0, &c1);
        binary_span(op,
                    ggml_ew_row_of(dst,  i1, i2, i3),
                    ggml_ew_row_of(src0, i1, i2, i3),
                    ggml_ew_row_of(src1, i1 % src1->ne[1], i2 % src1->ne[2], i3 % src1->ne[3]),
                    dst->ne[0], src1->ne[0], c0, c1, params->use_ref);
    }
}

// whole blocks, one after another along dimension 0
static bool blocks_packed(const struct ggml_tensor * t) {
    return t->nb[0] == ggml_type_size(t->type) && t->ne[0] % ggml_blck_size(t->type) == 0;
}

static bool supports_binary(const struct ggml_tensor * op) {
    const struct ggml_tensor * src0 = op->src[0];
    const struct ggml_tensor * src1 = op->src[1];
    if (src1 == NULL || !ggml_can_repeat(src1, src0) || !ggml_are_same_shape(src0, op)) {
        return false;
    }
    if (ggml_ew_is_float(src0->type)) {
        return ggml_ew_is_float(src1->type) && ggml_ew_is_float(op->type);
    }
    // quantized src0: ADD and ADD1 with an F32 src1, into a float or quantized dst
    const bool dst_ok = ggml_ew_is_float(op->type) || (ggml_ew_is_requantizable(op->type) && blocks_packed(op));
    return (op->op == GGML_OP_ADD || op->op == GGML_OP_ADD1) &&
           ggml_ew_is_requantizable(src0->type) && blocks_packed(src0) &&
           src1->type == GGML_TYPE_F32 && dst_ok;
}

//
// ACC: dst = src0, then dst's window (strides nb1, nb2, nb3 from offset bytes,
// shaped like src1) += src1
//

struct acc_window {
    size_t nb1, nb2, nb3, offset;
    bool   inplace;
};

static struct acc_window acc_window_of(const struct ggml_tensor * dst) {
    const struct acc_window w = {
        .nb1     = (size_t) ggml_get_op_params_i32(dst, 0),
        .nb2     = (size_t) ggml_get_op_params_i32(dst, 1),
        .nb3     = (size_t) ggml_get_op_params_i32(dst, 2),
        .offset  = (size_t) ggml_get_op_params_i32(dst, 3),
        .inplace = ggml_get_op_params_i32(dst, 4) != 0,
    };
    return w;
}

// rows of the window never share an element (otherwise the additions into a
// shared element must happen in one fixed order)
static bool acc_rows_disjoint(const struct acc_window * w, const struct ggml_tensor * src1) {
    const size_t row = (size_t) src1->ne[0] * sizeof(float);
    const size_t ext1 = (size_t)(src1->ne[1] - 1) * w->nb1 + row;
    const size_t ext2 = (size_t)(src1->ne[2] - 1) * w->nb2 + ext1;
    return (src1->ne[1] == 1 || w->nb1 >= row) &&
           (src1->ne[2] == 1 || w->nb2 >= ext1) &&
           (src1->ne[3] == 1 || w->nb3 >= ext2);
}

static void forward_acc(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const struct acc_window w = acc_window_of(dst);

    if (!w.inplace && dst->data != src0->data) {
        int64_t b0, b1;
        ggml_cpu_split_range((int64_t) ggml_nbytes(dst), params->ith, params->nth, &b0, &b1);
        if (b1 > b0) {
            memcpy((char *) dst->data + b0, (const char *) src0->data + b0, (size_t)(b1 - b0));
        }
        ggml_cpu_barrier(params->threadpool);
    }
    if (ggml_is_empty(src1)) {
        return;
    }

    const size_t last = w.offset + (size_t)(src1->ne[0] - 1) * sizeof(float) + (size_t)(src1->ne[1] - 1) * w.nb1 +
                        (size_t)(src1->ne[2] - 1) * w.nb2 + (size_t)(src1->ne[3] - 1) * w.nb3;
    GGML_ASSERT(last + sizeof(float) <= ggml_nbytes(dst) && "ACC window out of bounds");

    const bool disjoint = acc_rows_disjoint(&w, src1);
    if (!disjoint && params->ith != 0) {
        return;
    }
    const struct ggml_ew_split split = ggml_ew_split_make(src1, disjoint ? params->nth : 1);
    int64_t u0 = 0, u1 = split.nrows * split.nblk;
    if (disjoint) {
        ggml_cpu_split_range(split.nrows * split.nblk, params->ith, params->nth, &u0, &u1);
    }
    for (int64_t u = u0; u < u1; u++) {
        int64_t i1, i2, i3, c0, c1;
        ggml_ew_split_unit(&split, src1, u, &i1, &i2, &i3, &c0, &c1);
        const struct ggml_ew_row win = {
            .p    = (char *) dst->data + w.offset + i1*w.nb1 + i2*w.nb2 + i3*w.nb3,
            .nb   = sizeof(float),
            .type = GGML_TYPE_F32,
        };
        binary_span(EW_ADD, win, win, ggml_ew_row_of(src1, i1, i2, i3), src1->ne[0], src1->ne[0], c0, c1,
                    params->use_ref);
    }
}

static bool supports_acc(const struct ggml_tensor * op) {
    const struct ggml_tensor * src0 = op->src[0];
    const struct ggml_tensor * src1 = op->src[1];
    return src0->type == GGML_TYPE_F32 && src1->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 &&
           ggml_is_contiguous(src0) && ggml_is_contiguous(op) && ggml_are_same_shape(src0, op);
}

void ggml_cpu_register_ops_binary(struct ggml_cpu_op_impl * table) {
    const struct ggml_cpu_op_impl binary = { .forward = forward_binary, .supports = supports_binary, .work_size = NULL };
    table[GGML_OP_ADD1] = binary;
#define X(NAME, ...) table[GGML_OP_##NAME] = binary;
    GGML_OP_LIST_BINARY(X)
#undef X
    table[GGML_OP_ACC]  = (struct ggml_cpu_op_impl) { .forward = forward_acc, .supports = supports_acc, .work_size = NULL };
}
