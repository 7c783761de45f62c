// ggml-ops-activ.c: constructors of the activation functions that came after
// the first op set: the rounding functions (floor, ceil, round, trunc), expm1,
// softplus and xIELU as UNARY ops, and the GLU variants on gelu_erf and
// gelu_quick and the clamped SwiGLU of gpt-oss (swiglu_oai).
//
// They are thin layers over ggml_unary and ggml_glu[_split] (ggml-ops-arith.c),
// which check the arguments; the ones with parameters add them to op_params
// after the function's id, in upstream's layout.

#include "ggml-impl.h"

#include <math.h>

//
// UNARY
//

struct ggml_tensor * ggml_expm1(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary(ctx, a, GGML_UNARY_OP_EXPM1);
}

struct ggml_tensor * ggml_expm1_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary_inplace(ctx, a, GGML_UNARY_OP_EXPM1);
}

struct ggml_tensor * ggml_softplus(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary(ctx, a, GGML_UNARY_OP_SOFTPLUS);
}

struct ggml_tensor * ggml_softplus_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary_inplace(ctx, a, GGML_UNARY_OP_SOFTPLUS);
}

struct ggml_tensor * ggml_floor(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary(ctx, a, GGML_UNARY_OP_FLOOR);
}

struct ggml_tensor * ggml_floor_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary_inplace(ctx, a, GGML_UNARY_OP_FLOOR);
}

struct ggml_tensor * ggml_ceil(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary(ctx, a, GGML_UNARY_OP_CEIL);
}

struct ggml_tensor * ggml_ceil_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary_inplace(ctx, a, GGML_UNARY_OP_CEIL);
}

struct ggml_tensor * ggml_round(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary(ctx, a, GGML_UNARY_OP_ROUND);
}

struct ggml_tensor * ggml_round_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary_inplace(ctx, a, GGML_UNARY_OP_ROUND);
}

struct ggml_tensor * ggml_trunc(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary(ctx, a, GGML_UNARY_OP_TRUNC);
}

struct ggml_tensor * ggml_trunc_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_unary_inplace(ctx, a, GGML_UNARY_OP_TRUNC);
}

// log(1 + e^x), and x itself where the two agree in binary32, as upstream
// computes the constrained alphas (the values become part of the op)
static float softplus_f32(float x) {
    return x > 20.0f ? x : logf(1.0f + expf(x));
}

// op_params: [0] the function, [1] beta + softplus(alpha_n), [2] softplus(alpha_p), [3] beta, [4] eps
struct ggml_tensor * ggml_xielu(struct ggml_context * ctx, struct ggml_tensor * a, float alpha_n, float alpha_p, float beta,
                                float eps) {
    struct ggml_tensor * result = ggml_unary(ctx, a, GGML_UNARY_OP_XIELU);
    ggml_set_op_params_f32(result, 1, beta + softplus_f32(alpha_n));
    ggml_set_op_params_f32(result, 2, softplus_f32(alpha_p));
    ggml_set_op_params_f32(result, 3, beta);
    ggml_set_op_params_f32(result, 4, eps);
    return result;
}

//
// GLU
//

struct ggml_tensor * ggml_geglu_erf(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_glu(ctx, a, GGML_GLU_OP_GEGLU_ERF, false);
}

struct ggml_tensor * ggml_geglu_erf_swapped(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_glu(ctx, a, GGML_GLU_OP_GEGLU_ERF, true);
}

struct ggml_tensor * ggml_geglu_erf_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return ggml_glu_split(ctx, a, b, GGML_GLU_OP_GEGLU_ERF);
}

struct ggml_tensor * ggml_geglu_quick(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_glu(ctx, a, GGML_GLU_OP_GEGLU_QUICK, false);
}

struct ggml_tensor * ggml_geglu_quick_swapped(struct ggml_context * ctx, struct ggml_tensor * a) {
    return ggml_glu(ctx, a, GGML_GLU_OP_GEGLU_QUICK, true);
}

struct ggml_tensor * ggml_geglu_quick_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return ggml_glu_split(ctx, a, b, GGML_GLU_OP_GEGLU_QUICK);
}

// b may be NULL: the fused form, gate in the second half of a's rows.
// op_params: [0] the function, [1] swapped (0), [2] alpha, [3] limit
struct ggml_tensor * ggml_swiglu_oai(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, float alpha,
                                     float limit) {
    struct ggml_tensor * result = b != NULL ? ggml_glu_split(ctx, a, b, GGML_GLU_OP_SWIGLU_OAI)
                                            : ggml_glu(ctx, a, GGML_GLU_OP_SWIGLU_OAI, false);
    ggml_set_op_params_f32(result, 2, alpha);
    ggml_set_op_params_f32(result, 3, limit);
    return result;
}
