// ref-ops.c: the element-wise ops in double precision, one expression each,
// from the lists of ggml-op-list.h (see ref-ops.h).

#include "ref-ops.h"
#include "ggml-op-list.h"

#include <math.h>

// binary32 constants, as the ops define them
static const double k_gelu_c = (double) 0.79788456080286535587989211986876f;
static const double k_gelu_a = (double) 0.044715f;
static const double k_gelu_q = (double) 1.702f;

// x / (1 + exp(-t)) in a form that does not overflow
static double ggml_ref_mul_sigmoid(double x, double t) {
    return t >= 0.0 ? x / (1.0 + exp(-t)) : x * exp(t) / (1.0 + exp(t));
}

// 0.5 (1 + tanh u) = 1 / (1 + exp(-2u))
static double ggml_ref_gelu(double x) {
    return ggml_ref_mul_sigmoid(x, 2.0 * k_gelu_c * x * (1.0 + k_gelu_a * x * x));
}

static double ggml_ref_gelu_quick(double x) {
    return ggml_ref_mul_sigmoid(x, k_gelu_q * x);
}

static double ggml_ref_hardsigmoid(double x) {
    const double v = (x + 3.0) / 6.0;
    return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

// op_params [1] alpha_n (beta added), [2] alpha_p, [3] beta, [4] eps, as ggml_xielu stores them
static double ggml_ref_xielu(const double p[5], double x) {
    if (x > 0.0) {
        return p[2] * x * x + p[3] * x;
    }
    return (expm1(fmin(x, p[4])) - x) * p[1] + p[3] * x;
}

static double ggml_ref_swiglu_oai(double alpha, double limit, double x, double g) {
    const double xc = fmin(x, limit);
    const double gc = fmax(-limit, fmin(g, limit));
    return xc / (1.0 + exp(-alpha * xc)) * (gc + 1.0);
}

bool ggml_ref_has_unary(enum ggml_op op, enum ggml_unary_op uop) {
    if (op == GGML_OP_UNARY) {
        return (unsigned) uop < GGML_UNARY_OP_COUNT; // the list holds every unary op
    }
#define X(NAME, lop, ...) if (op == lop) return true;
    GGML_OP_LIST_UNARY_OPS(X)
#undef X
    return false;
}

double ggml_ref_unary(enum ggml_op op, enum ggml_unary_op uop, const double p[5], double x) {
    if (op == GGML_OP_UNARY) {
        switch (uop) {
#define X(NAME, lop, f32, vec, f64, ...) case GGML_UNARY_OP_##NAME: return f64;
            GGML_OP_LIST_UNARY_FNS(X)
#undef X
            default: break;
        }
        GGML_ABORT("reference: unary op %d is not in the list", (int) uop);
    }
    // the first entry of op (SCALE_BIAS repeats SCALE's value)
#define X(NAME, lop, f32, vec, f64, ...) if (op == lop) return f64;
    GGML_OP_LIST_UNARY_OPS(X)
#undef X
    GGML_ABORT("reference: op %s is not a unary element-wise op", ggml_op_name(op));
}

bool ggml_ref_has_binary(enum ggml_op op) {
    switch (op) {
#define X(NAME, ...) case GGML_OP_##NAME: return true;
        GGML_OP_LIST_BINARY(X)
#undef X
        default: return false;
    }
}

double ggml_ref_binary(enum ggml_op op, double x, double y) {
    switch (op) {
#define X(NAME, ctor, f32, vec, f64, ...) case GGML_OP_##NAME: return f64;
        GGML_OP_LIST_BINARY(X)
#undef X
        default: break;
    }
    GGML_ABORT("reference: op %s is not a binary element-wise op", ggml_op_name(op));
}

double ggml_ref_glu(enum ggml_glu_op op, double alpha, double limit, double x, double g) {
    (void) alpha;
    (void) limit;
    switch (op) {
#define X(NAME, f32, vec, f64, ...) case GGML_GLU_OP_##NAME: return f64;
        GGML_OP_LIST_GLU(X)
#undef X
        default: break;
    }
    GGML_ABORT("reference: GLU op %d is not in the list", (int) op);
}
