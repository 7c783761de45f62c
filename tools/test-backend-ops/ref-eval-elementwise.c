// ref-eval-elementwise.c: the element-wise ops over whole tensors, each value
// from the double-precision functions of ref-ops.c (the lists of ggml-op-list.h).

#include "ref-eval.h"
#include "ref-ops.h"

#include <math.h>
#include <stdlib.h>

// the op_params of a node as floats, widened
static void params_of(const struct ggml_tensor * dst, double p[5]) {
    for (int i = 0; i < 5; i++) {
        p[i] = ref_param_f32(dst, i);
    }
}

// UNARY and the ops of one source that map each value on its own (SQR SQRT
// LOG SIN COS SCALE CLAMP LEAKY_RELU): the list's f64 expressions
void ref_op_map(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const enum ggml_unary_op uop = dst->op == GGML_OP_UNARY ? ggml_get_unary_op(dst) : GGML_UNARY_OP_COUNT;
    double p[5];
    params_of(dst, p);
    double * x = ref_get(r, dst->src[0]);
    const int64_t n = ggml_nelements(dst);
    for (int64_t i = 0; i < n; i++) {
        x[i] = ggml_ref_unary(dst->op, uop, p, x[i]);
    }
    ref_put(r, dst, x);
    free(x);
}

// out = f(a, b) of the list. With one source, a and b are its two halves (b first when swapped).
void ref_op_glu(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const enum ggml_glu_op op = ggml_get_glu_op(dst);
    const bool swapped = ref_param_i32(dst, 1) != 0;
    const double alpha = ref_param_f32(dst, 2);
    const double limit = ref_param_f32(dst, 3);
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const int64_t nc = dst->ne[0];

    double * x0 = ref_get(r, src0);
    double * x1 = src1 != NULL ? ref_get(r, src1) : NULL;
    double * y  = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    const int64_t nrows = ggml_nrows(dst);
    for (int64_t row = 0; row < nrows; row++) {
        const double * a;
        const double * b;
        if (x1 != NULL) {
            a = x0 + row * src0->ne[0];
            b = x1 + row * src1->ne[0];
        } else {
            const double * s = x0 + row * src0->ne[0];
            a = swapped ? s + nc : s;
            b = swapped ? s : s + nc;
        }
        for (int64_t i = 0; i < nc; i++) {
            y[row*nc + i] = ggml_ref_glu(op, alpha, limit, a[i], b[i]);
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(x1);
    free(x0);
}

// the binary ops of the list (ADD SUB MUL DIV): src1 repeats over src0 in every dim
void ref_op_binary(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    double * a = ref_get(r, src0);
    double * b = ref_get(r, src1);
    const int64_t * ne = dst->ne;
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    const int64_t ia = ref_idx(ne, i0, i1, i2, i3);
                    const double  y  = b[ref_idx(src1->ne, i0 % src1->ne[0], i1 % src1->ne[1], i2 % src1->ne[2], i3 % src1->ne[3])];
                    a[ia] = ggml_ref_binary(dst->op, a[ia], y);
                }
            }
        }
    }
    ref_put(r, dst, a);
    free(b);
    free(a);
}

void ref_op_add1(struct tbo_ref * r, const struct ggml_tensor * dst) {
    double * a = ref_get(r, dst->src[0]);
    double * b = ref_get(r, dst->src[1]);
    const int64_t n = ggml_nelements(dst);
    for (int64_t i = 0; i < n; i++) {
        a[i] += b[0];
    }
    ref_put(r, dst, a);
    free(b);
    free(a);
}
