#pragma once

// ggml-op-list.h: one description per element-wise op, as X-macro lists (internal,
// not installed). Every place that needs to know these ops expands the list
// instead of keeping its own switch, so that adding an op is one entry here
// plus its public constructor (and its gradient rule in ggml-backward.c):
//
//   - names:                   ggml-types.c (ggml_unary_op_name, ggml_glu_op_name)
//   - CPU kernels:             ggml-cpu/ops/ops-unary.c, ops-binary.c, ops-glu.c
//                              (the f32 scalar and vector expressions)
//   - Vulkan:                  ggml-vulkan/vk-op-codes.h (op codes) and the GLSL
//                              header generated from this list at build time
//                              (vk-gen-ops.c), which eltwise.comp and glu.comp include
//   - reference (double):      tools/test-backend-ops/ref-ops.c (library ggml-ref)
//   - gradients:               ggml_backward_has_grad (ggml-backward.c)
//   - tests:                   tests/test-cpu-elementwise.c (input range, tolerance)
//
// A consumer defines X with the fields it reads and ignores the others: the
// arguments of a field it does not expand are never compiled there, so the
// vector expressions (ggml_vf_*) are seen by the CPU kernels only.
//
// Variables the expressions may use:
//   f32 (CPU scalar, float):  x (and y for binary ops, g for GLU), p[i] the
//                             node's op_params as floats (UNARY: p[1..]), gp the
//                             GLU parameters (gp.alpha, gp.limit)
//   vec (CPU vector, ggml_vf): the same names as vectors; p, gp as floats
//   f64 (reference, double):  x (y, g), p[i] op_params widened to double,
//                             alpha, limit for GLU
//   glsl (Vulkan, a string):  a (b for binary ops; x, g for GLU), p.p0, p.p1;
//                             "" where the Vulkan backend has no kernel

// the error classes of the field tol (below)
enum ggml_op_tol {
    GGML_OP_TOL_EXACT,  // one rounding of the exact value
    GGML_OP_TOL_HARD,   // a few exact roundings (hardswish, hardsigmoid)
    GGML_OP_TOL_LIBM,   // the C library on both CPU paths
    GGML_OP_TOL_EXPISH, // exp-based, vector approximations
};

// Unary element-wise ops. Fields:
//   NAME   GGML_OP_<NAME> or GGML_UNARY_OP_<NAME> (and the CPU's EW_<NAME>)
//   op     the node's op
//   f32    CPU scalar value
//   vec    CPU vector value (unused for tol LIBM: the C library on both paths)
//   f64    reference value in double
//   grad   whether ggml-backward.c has a gradient rule
//   glsl   Vulkan expression, "" for none
//   lo, hi input range of the random tests
//   tol    error class (test-cpu-elementwise): EXACT one rounding of the exact
//          value, HARD a few exact roundings, LIBM the C library, EXPISH
//          exp-based vector approximations
//   k      f32 ulps allowed (classes HARD, LIBM, EXPISH)
//   tp0, tp1  op_params[0], [1] of the tests
//
// SCALE_BIAS is the CPU's name for SCALE with a non-zero bias (s x + 0 would
// turn -0 into +0): the same op, listed twice so that each form gets its own loop.
#define GGML_OP_LIST_UNARY_OPS(X)                                                                                    \
    X(SQR,        GGML_OP_SQR,        x * x, ggml_vf_mul(x, x), x * x,                                              \
      true,  "a * a",                 -10.0, 10.0, EXACT, 0.5, 0.0f, 0.0f)                                          \
    X(SQRT,       GGML_OP_SQRT,       sqrtf(x), ggml_vf_sqrt(x), sqrt(x),                                          \
      true,  "sqrt(a)",                 0.0, 10.0, EXACT, 0.5, 0.0f, 0.0f)                                          \
    X(LOG,        GGML_OP_LOG,        logf(x), x, log(x),                                                           \
      true,  "",                       0.01, 10.0, LIBM,  2.0, 0.0f, 0.0f)                                          \
    X(SIN,        GGML_OP_SIN,        sinf(x), x, sin(x),                                                           \
      true,  "",                      -10.0, 10.0, LIBM,  2.0, 0.0f, 0.0f)                                          \
    X(COS,        GGML_OP_COS,        cosf(x), x, cos(x),                                                           \
      true,  "",                      -10.0, 10.0, LIBM,  2.0, 0.0f, 0.0f)                                          \
    X(SCALE,      GGML_OP_SCALE,      p[0] * x, ggml_vf_mul(ggml_vf_set1(p[0]), x), p[0] * x + p[1],               \
      true,  "a * p.p0 + p.p1",       -10.0, 10.0, EXACT, 0.5, 1.75f, 0.0f)                                         \
    /* one rounding but for rare double-rounding ties: the product is exact in double */                            \
    X(SCALE_BIAS, GGML_OP_SCALE,      (float) ((double) p[0] * (double) x + (double) p[1]),                        \
      ggml_vf_fma(ggml_vf_set1(p[0]), x, ggml_vf_set1(p[1])), p[0] * x + p[1],                                     \
      true,  "",                      -10.0, 10.0, EXACT, 0.5, -0.6f, 2.5f)                                         \
    /* min(max(x, p0), p1) as upstream: max(min(x, p1), p0), NaN giving p1 */                                       \
    X(CLAMP,      GGML_OP_CLAMP,      ggml_ew_clamp_sf(x, p[0], p[1]),                                             \
      ggml_vf_max(ggml_vf_min(x, ggml_vf_set1(p[1])), ggml_vf_set1(p[0])),                                         \
      x < p[0] ? p[0] : x > p[1] ? p[1] : x,                                                                        \
      false, "clamp(a, p.p0, p.p1)",  -10.0, 10.0, EXACT, 0.5, -2.0f, 3.0f)                                         \
    X(LEAKY_RELU, GGML_OP_LEAKY_RELU, (x > 0.0f ? x : 0.0f) + p[0] * (x < 0.0f ? x : 0.0f),                        \
      ggml_vf_add(ggml_vf_max(x, ggml_vf_set1(0.0f)), ggml_vf_mul(ggml_vf_set1(p[0]), ggml_vf_min(x, ggml_vf_set1(0.0f)))), \
      x > 0.0 ? x : p[0] * x,                                                                                       \
      false, "",                      -10.0, 10.0, EXACT, 0.5, 0.1f, 0.0f)

// The UNARY op's functions (GGML_UNARY_OP_<NAME>), the fields as above; all
// of enum ggml_unary_op, in its order (the name table is built from it).
#define GGML_OP_LIST_UNARY_FNS(X)                                                                                    \
    X(ABS,         GGML_OP_UNARY, fabsf(x), ggml_vf_abs(x), fabs(x),                                                \
      true,  "",                          -10.0, 10.0, EXACT,  0.5, 0.0f, 0.0f)                                     \
    X(SGN,         GGML_OP_UNARY, x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f),                                     \
      ggml_vf_select(ggml_vf_gt(x, ggml_vf_set1(0.0f)), ggml_vf_set1(1.0f),                                        \
                     ggml_vf_select(ggml_vf_lt(x, ggml_vf_set1(0.0f)), ggml_vf_set1(-1.0f), ggml_vf_set1(0.0f))), \
      x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : 0.0,                                                                         \
      true,  "",                          -10.0, 10.0, EXACT,  0.5, 0.0f, 0.0f)                                     \
    X(NEG,         GGML_OP_UNARY, -x, ggml_vf_neg(x), -x,                                                           \
      true,  "-a",                        -10.0, 10.0, EXACT,  0.5, 0.0f, 0.0f)                                     \
    X(STEP,        GGML_OP_UNARY, x > 0.0f ? 1.0f : 0.0f,                                                           \
      ggml_vf_select(ggml_vf_gt(x, ggml_vf_set1(0.0f)), ggml_vf_set1(1.0f), ggml_vf_set1(0.0f)),                   \
      x > 0.0 ? 1.0 : 0.0,                                                                                          \
      true,  "a > 0.0 ? 1.0 : 0.0",       -10.0, 10.0, EXACT,  0.5, 0.0f, 0.0f)                                     \
    X(TANH,        GGML_OP_UNARY, tanhf(x), ggml_vf_tanh(x), tanh(x),                                               \
      false, "tanh(clamp(a, -15.0, 15.0))", -10.0, 10.0, EXPISH, 4.0, 0.0f, 0.0f)                                   \
    X(ELU,         GGML_OP_UNARY, ggml_sf_elu(x), ggml_vf_elu(x), x > 0.0 ? x : expm1(x),                          \
      false, "",                          -10.0, 10.0, EXPISH, 4.0, 0.0f, 0.0f)                                     \
    X(RELU,        GGML_OP_UNARY, x > 0.0f ? x : 0.0f, ggml_vf_max(x, ggml_vf_set1(0.0f)), x > 0.0 ? x : 0.0,      \
      true,  "max(a, 0.0)",               -10.0, 10.0, EXACT,  0.5, 0.0f, 0.0f)                                     \
    X(SIGMOID,     GGML_OP_UNARY, ggml_sf_sigmoid(x), ggml_vf_sigmoid(x), ggml_ref_mul_sigmoid(1.0, x),            \
      false, "1.0 / (1.0 + exp(-a))",     -10.0, 10.0, EXPISH, 4.0, 0.0f, 0.0f)                                     \
    X(GELU,        GGML_OP_UNARY, ggml_sf_gelu(x), ggml_vf_gelu(x), ggml_ref_gelu(x),                               \
      false, "gelu_tanh(a)",              -10.0, 10.0, EXPISH, 4.0, 0.0f, 0.0f)                                     \
    X(GELU_QUICK,  GGML_OP_UNARY, ggml_sf_gelu_quick(x), ggml_vf_gelu_quick(x), ggml_ref_gelu_quick(x),            \
      false, "a / (1.0 + exp(-1.702 * a))", -10.0, 10.0, EXPISH, 4.0, 0.0f, 0.0f)                                   \
    X(SILU,        GGML_OP_UNARY, ggml_sf_silu(x), ggml_vf_silu(x), ggml_ref_mul_sigmoid(x, x),                    \
      true,  "a / (1.0 + exp(-a))",       -10.0, 10.0, EXPISH, 4.0, 0.0f, 0.0f)                                     \
    X(HARDSWISH,   GGML_OP_UNARY, x * ggml_ew_hardsigmoid_sf(x), ggml_vf_mul(x, ggml_ew_hardsigmoid_vf(x)),       \
      x * ggml_ref_hardsigmoid(x),                                                                                  \
      false, "",                          -10.0, 10.0, HARD,   2.0, 0.0f, 0.0f)                                     \
    X(HARDSIGMOID, GGML_OP_UNARY, ggml_ew_hardsigmoid_sf(x), ggml_ew_hardsigmoid_vf(x), ggml_ref_hardsigmoid(x),   \
      false, "",                          -10.0, 10.0, HARD,   2.0, 0.0f, 0.0f)                                     \
    X(EXP,         GGML_OP_UNARY, expf(x), ggml_vf_exp(x), exp(x),                                                  \
      true,  "exp(a)",                    -10.0, 10.0, EXPISH, 4.0, 0.0f, 0.0f)                                     \
    X(EXPM1,       GGML_OP_UNARY, expm1f(x), ggml_ew_expm1_vf(x), expm1(x),                                         \
      true,  "",                          -10.0, 10.0, EXPISH, 4.0, 0.0f, 0.0f)                                     \
    X(SOFTPLUS,    GGML_OP_UNARY, x > 20.0f ? x : log1pf(expf(x)), ggml_ew_softplus_vf(x),                         \
      x > 20.0 ? x : log1p(exp(x)),                                                                                 \
      true,  "",                          -30.0, 30.0, EXPISH, 4.0, 0.0f, 0.0f)                                     \
    X(GELU_ERF,    GGML_OP_UNARY, ggml_sf_gelu_erf(x), ggml_vf_gelu_erf(x), 0.5 * x * erfc(-x / sqrt(2.0)),        \
      false, "0.5 * a * (1.0 + erf_approx(a * 0.7071067811865476))", -10.0, 10.0, EXPISH, 6.0, 0.0f, 0.0f)         \
    /* x > 0: p2 x^2 + p3 x, else (expm1(min(x, p4)) - x) p1 + p3 x, with op_params as      */                     \
    /* ggml_xielu stores them: alpha_n (beta added), alpha_p, beta, eps; no test-cpu case  */                      \
    X(XIELU,       GGML_OP_UNARY, ggml_ew_xielu_sf(p, x), ggml_ew_xielu_vf(p, x), ggml_ref_xielu(p, x),           \
      false, "",                          -10.0, 10.0, EXPISH, 4.0, 0.0f, 0.0f)                                     \
    X(FLOOR,       GGML_OP_UNARY, floorf(x), ggml_vf_floor(x), floor(x),                                            \
      false, "",                          -10.0, 10.0, EXACT,  0.5, 0.0f, 0.0f)                                     \
    X(CEIL,        GGML_OP_UNARY, ceilf(x), ggml_vf_ceil(x), ceil(x),                                               \
      false, "",                          -10.0, 10.0, EXACT,  0.5, 0.0f, 0.0f)                                     \
    /* halves away from zero, as roundf */                                                                          \
    X(ROUND,       GGML_OP_UNARY, roundf(x), ggml_ew_round_vf(x), round(x),                                         \
      false, "",                          -10.0, 10.0, EXACT,  0.5, 0.0f, 0.0f)                                     \
    X(TRUNC,       GGML_OP_UNARY, truncf(x), ggml_vf_trunc(x), trunc(x),                                            \
      false, "",                          -10.0, 10.0, EXACT,  0.5, 0.0f, 0.0f)

// both unary lists, GGML_OP_ ones first
#define GGML_OP_LIST_UNARY(X) GGML_OP_LIST_UNARY_OPS(X) GGML_OP_LIST_UNARY_FNS(X)

// Binary ops, src1 broadcast over src0 (GGML_OP_<NAME>). ADD1 is ADD with a
// one-element src1 (not listed). Fields: NAME, ctor (the public constructor,
// with a ctor_inplace beside it), f32, vec, f64 (of x and y), grad, glsl (of a
// and b), the input ranges of x and of y in the tests.
#define GGML_OP_LIST_BINARY(X)                                                                          \
    X(ADD, ggml_add, x + y, ggml_vf_add(x, y), x + y, true, "a + b", -10.0, 10.0, -10.0, 10.0)         \
    X(SUB, ggml_sub, x - y, ggml_vf_sub(x, y), x - y, true, "a - b", -10.0, 10.0, -10.0, 10.0)         \
    X(MUL, ggml_mul, x * y, ggml_vf_mul(x, y), x * y, true, "a * b", -10.0, 10.0, -10.0, 10.0)         \
    X(DIV, ggml_div, x / y, ggml_vf_div(x, y), x / y, true, "a / b", -10.0, 10.0,   0.5,  4.0)

// GLU ops (GGML_GLU_OP_<NAME>): dst = f(x, g). Fields: NAME, f32, vec, f64,
// grad (split form only), glsl (of x and g). All of enum ggml_glu_op, in its order.
#define GGML_OP_LIST_GLU(X)                                                                                         \
    X(REGLU,       x > 0.0f ? x * g : 0.0f,                                                                          \
      ggml_vf_select(ggml_vf_gt(x, ggml_vf_set1(0.0f)), ggml_vf_mul(x, g), ggml_vf_set1(0.0f)),                    \
      (x > 0.0 ? x : 0.0) * g,                                                                                      \
      false, "max(x, 0.0) * g")                                                                                     \
    X(GEGLU,       ggml_sf_gelu(x) * g, ggml_vf_mul(ggml_vf_gelu(x), g), ggml_ref_gelu(x) * g,                     \
      false, "gelu_tanh(x) * g")                                                                                    \
    X(SWIGLU,      ggml_sf_silu(x) * g, ggml_vf_mul(ggml_vf_silu(x), g), ggml_ref_mul_sigmoid(x, x) * g,           \
      true,  "x / (1.0 + exp(-x)) * g")                                                                             \
    /* gpt-oss: x clamped above by limit, g both sides, alpha scaling the sigmoid */                                \
    X(SWIGLU_OAI,  ggml_ew_swiglu_oai_sf(gp, x, g), ggml_ew_swiglu_oai_vf(gp, x, g),                               \
      ggml_ref_swiglu_oai(alpha, limit, x, g),                                                                      \
      false, "")                                                                                                    \
    X(GEGLU_ERF,   ggml_sf_gelu_erf(x) * g, ggml_vf_mul(ggml_vf_gelu_erf(x), g),                                   \
      0.5 * x * erfc(-x / sqrt(2.0)) * g,                                                                           \
      false, "0.5 * x * (1.0 + erf_approx(x * 0.7071067811865476)) * g")                                            \
    X(GEGLU_QUICK, ggml_sf_gelu_quick(x) * g, ggml_vf_mul(ggml_vf_gelu_quick(x), g), ggml_ref_gelu_quick(x) * g,   \
      false, "x / (1.0 + exp(-1.702 * x)) * g")
