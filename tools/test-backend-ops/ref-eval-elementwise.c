// ref-eval-elementwise.c: elementwise ops in double precision, from their definitions.

#include "ref-eval.h"

#include <math.h>
#include <stdlib.h>

static double sigmoid(double x) {
    return 1.0 / (1.0 + exp(-x));
}

// the tanh approximation of GELU that ggml defines GELU as
static double gelu(double x) {
    const double sqrt_2_over_pi = 0.79788456080286535587989211986876;
    return 0.5 * x * (1.0 + tanh(sqrt_2_over_pi * x * (1.0 + 0.044715 * x * x)));
}

static double gelu_erf(double x) {
    return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
}

static double gelu_quick(double x) {
    return x * sigmoid(1.702 * x);
}

static double silu(double x) {
    return x * sigmoid(x);
}

static double relu(double x) {
    return x > 0.0 ? x : 0.0;
}

bool ref_supports_unary(enum ggml_unary_op op) {
    switch (op) {
        case GGML_UNARY_OP_ABS:
        case GGML_UNARY_OP_SGN:
        case GGML_UNARY_OP_NEG:
        case GGML_UNARY_OP_STEP:
        case GGML_UNARY_OP_TANH:
        case GGML_UNARY_OP_ELU:
        case GGML_UNARY_OP_RELU:
        case GGML_UNARY_OP_SIGMOID:
        case GGML_UNARY_OP_GELU:
        case GGML_UNARY_OP_GELU_QUICK:
        case GGML_UNARY_OP_SILU:
        case GGML_UNARY_OP_HARDSWISH:
        case GGML_UNARY_OP_HARDSIGMOID:
        case GGML_UNARY_OP_EXP:
        case GGML_UNARY_OP_EXPM1:
        case GGML_UNARY_OP_SOFTPLUS:
        case GGML_UNARY_OP_GELU_ERF:
        case GGML_UNARY_OP_FLOOR:
        case GGML_UNARY_OP_CEIL:
        case GGML_UNARY_OP_ROUND:
        case GGML_UNARY_OP_TRUNC:
        case GGML_UNARY_OP_XIELU:
            return true;
        default:
            return false;
    }
}

// xIELU with the constrained alphas as the node stores them: op_params [1]
// beta + softplus(alpha_n), [2] softplus(alpha_p), [3] beta, [4] eps
static double xielu(const struct ggml_tensor * dst, double x) {
    const double an = ref_param_f32(dst, 1), ap = ref_param_f32(dst, 2);
    const double beta = ref_param_f32(dst, 3), eps = ref_param_f32(dst, 4);
    if (x > 0.0) {
        return ap * x * x + beta * x;
    }
    return (expm1(fmin(x, eps)) - x) * an + beta * x;
}

static double unary(enum ggml_unary_op op, double x) {
    switch (op) {
        case GGML_UNARY_OP_ABS:         return fabs(x);
        case GGML_UNARY_OP_SGN:         return x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : 0.0;
        case GGML_UNARY_OP_NEG:         return -x;
        case GGML_UNARY_OP_STEP:        return x > 0.0 ? 1.0 : 0.0;
        case GGML_UNARY_OP_TANH:        return tanh(x);
        case GGML_UNARY_OP_ELU:         return x > 0.0 ? x : expm1(x);
        case GGML_UNARY_OP_RELU:        return relu(x);
        case GGML_UNARY_OP_SIGMOID:     return sigmoid(x);
        case GGML_UNARY_OP_GELU:        return gelu(x);
        case GGML_UNARY_OP_GELU_QUICK:  return gelu_quick(x);
        case GGML_UNARY_OP_SILU:        return silu(x);
        case GGML_UNARY_OP_HARDSWISH:   return x * fmin(1.0, fmax(0.0, (x + 3.0) / 6.0));
        case GGML_UNARY_OP_HARDSIGMOID: return fmin(1.0, fmax(0.0, (x + 3.0) / 6.0));
        case GGML_UNARY_OP_EXP:         return exp(x);
        case GGML_UNARY_OP_EXPM1:       return expm1(x);
        case GGML_UNARY_OP_SOFTPLUS:    return x > 20.0 ? x : log1p(exp(x));
        case GGML_UNARY_OP_GELU_ERF:    return gelu_erf(x);
        case GGML_UNARY_OP_FLOOR:       return floor(x);
        case GGML_UNARY_OP_CEIL:        return ceil(x);
        case GGML_UNARY_OP_ROUND:       return round(x);
        case GGML_UNARY_OP_TRUNC:       return trunc(x);
        default: GGML_ABORT("reference: unary op %s not implemented", ggml_unary_op_name(op));
    }
}

void ref_op_unary(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const enum ggml_unary_op op = ggml_get_unary_op(dst);
    double * x = ref_get(r, dst->src[0]);
    const int64_t n = ggml_nelements(dst);
    for (int64_t i = 0; i < n; i++) {
        x[i] = op == GGML_UNARY_OP_XIELU ? xielu(dst, x[i]) : unary(op, x[i]);
    }
    ref_put(r, dst, x);
    free(x);
}

bool ref_supports_glu(enum ggml_glu_op op) {
    switch (op) {
        case GGML_GLU_OP_REGLU:
        case GGML_GLU_OP_GEGLU:
        case GGML_GLU_OP_SWIGLU:
        case GGML_GLU_OP_GEGLU_ERF:
        case GGML_GLU_OP_GEGLU_QUICK:
        case GGML_GLU_OP_SWIGLU_OAI:
            return true;
        default:
            return false;
    }
}

// gpt-oss: x clamped above and the gate both sides by limit, alpha scaling the sigmoid
static double swiglu_oai(double alpha, double limit, double x, double g) {
    const double xc = fmin(x, limit);
    const double gc = fmax(-limit, fmin(g, limit));
    return xc / (1.0 + exp(-alpha * xc)) * (gc + 1.0);
}

static double glu_gate(enum ggml_glu_op op, double x) {
    switch (op) {
        case GGML_GLU_OP_REGLU:       return relu(x);
        case GGML_GLU_OP_GEGLU:       return gelu(x);
        case GGML_GLU_OP_SWIGLU:      return silu(x);
        case GGML_GLU_OP_GEGLU_ERF:   return gelu_erf(x);
        case GGML_GLU_OP_GEGLU_QUICK: return gelu_quick(x);
        default: GGML_ABORT("reference: glu op %s not implemented", ggml_glu_op_name(op));
    }
}

// out = gate(a) * b. With one source, a and b are its two halves (b first when swapped).
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
            y[row*nc + i] = op == GGML_GLU_OP_SWIGLU_OAI ? swiglu_oai(alpha, limit, a[i], b[i]) : glu_gate(op, a[i]) * b[i];
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(x1);
    free(x0);
}

// ADD, SUB, MUL, DIV: src1 repeats over src0 in every dim
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
                    switch (dst->op) {
                        case GGML_OP_ADD: a[ia] = a[ia] + y; break;
                        case GGML_OP_SUB: a[ia] = a[ia] - y; break;
                        case GGML_OP_MUL: a[ia] = a[ia] * y; break;
                        case GGML_OP_DIV: a[ia] = a[ia] / y; break;
                        default: GGML_ABORT("not a binary op");
                    }
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

// the ops that map each value on its own
void ref_op_map(struct tbo_ref * r, const struct ggml_tensor * dst) {
    double * x = ref_get(r, dst->src[0]);
    const int64_t n = ggml_nelements(dst);
    const double p0 = ref_param_f32(dst, 0);
    const double p1 = ref_param_f32(dst, 1);
    for (int64_t i = 0; i < n; i++) {
        const double v = x[i];
        switch (dst->op) {
            case GGML_OP_SQR:        x[i] = v * v; break;
            case GGML_OP_SQRT:       x[i] = sqrt(v); break;
            case GGML_OP_LOG:        x[i] = log(v); break;
            case GGML_OP_SIN:        x[i] = sin(v); break;
            case GGML_OP_COS:        x[i] = cos(v); break;
            case GGML_OP_SCALE:      x[i] = v * p0 + p1; break;               // scale, bias
            case GGML_OP_CLAMP:      x[i] = v < p0 ? p0 : v > p1 ? p1 : v; break; // min, max
            case GGML_OP_LEAKY_RELU: x[i] = v > 0.0 ? v : p0 * v; break;      // negative slope
            default: GGML_ABORT("reference: op %s is not elementwise", ggml_op_desc(dst));
        }
    }
    ref_put(r, dst, x);
    free(x);
}
