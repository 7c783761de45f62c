#pragma once

//
// vec-math.h: exp and the activation functions built on it, as float vector
// functions (ggml_vf_*, on the lanes of simd-f32.h) and as scalar functions
// (ggml_sf_*, on the C library's expf, expm1f, tanhf, erfcf).
//
// The scalar functions are the portable path and the reference path
// (use_ref); the vector functions differ from them by a few ulp. Both are
// written in forms that stay accurate in relative terms over the whole range:
// the sigmoid-based activations divide by 1 + exp(-|t|) instead of computing
// 1 + tanh(t) or 1 + erf(t), which lose every digit for large negative
// arguments. Special values: NaN propagates, exp(+inf) = inf, exp(-inf) = 0.
//
// The polynomial coefficients come from scripts/fit-vec-math.py, which also
// reports the error of each fit.
//

#include "simd/simd-f32.h"

#include <math.h>

// constants of the activations, as upstream defines them (binary32)
#define GGML_GELU_COEF_A      0.044715f
#define GGML_GELU_QUICK_COEF  (-1.702f)
#define GGML_SQRT_2_OVER_PI   0.79788456080286535587989211986876f
#define GGML_SQRT_2_INV       0.70710678118654752440084436210484f

//
// scalar path
//

// x sigmoid(t) = x / (1 + e^-t), as x e^t / (1 + e^t) for t < 0 so that e^|t|
// never overflows: the result keeps its precision down to the subnormals
static inline float ggml_sf_mul_sigmoid(float x, float t) {
    const float e = expf(-fabsf(t));
    return (t < 0.0f ? x * e : x) / (1.0f + e);
}

static inline float ggml_sf_sigmoid(float x) {
    return ggml_sf_mul_sigmoid(1.0f, x);
}

static inline float ggml_sf_silu(float x) {
    return ggml_sf_mul_sigmoid(x, x);
}

// 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2/pi) x (1 + a x^2)
static inline float ggml_sf_gelu(float x) {
    const float u = GGML_SQRT_2_OVER_PI * x * (1.0f + GGML_GELU_COEF_A * x * x);
    return ggml_sf_mul_sigmoid(x, 2.0f * u);
}

// x / (1 + exp(-1.702 x))
static inline float ggml_sf_gelu_quick(float x) {
    return ggml_sf_mul_sigmoid(x, -GGML_GELU_QUICK_COEF * x);
}

// 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2)
static inline float ggml_sf_gelu_erf(float x) {
    return 0.5f * x * erfcf(-x * GGML_SQRT_2_INV);
}

static inline float ggml_sf_elu(float x) {
    return x > 0.0f ? x : expm1f(x);
}

//
// vector path
//

#ifdef GGML_VF_WIDTH

#define GGML_VM_LOG2E   1.44269504f
#define GGML_VM_LN2_HI  0.693147182f     // ln 2 rounded to binary32
#define GGML_VM_LN2_LO  (-1.90465421e-09f) // ln 2 - GGML_VM_LN2_HI

// expm1(r) = r + r^2 q(r) for |r| <= ln2/2 (relative error of q: 9e-9)
static inline ggml_vf ggml_vf_expm1_reduced(ggml_vf r) {
    ggml_vf q = ggml_vf_set1(0.000198909809f);
    q = ggml_vf_fma(q, r, ggml_vf_set1(0.00139336416f));
    q = ggml_vf_fma(q, r, ggml_vf_set1(0.00833331048f));
    q = ggml_vf_fma(q, r, ggml_vf_set1(0.0416664667f));
    q = ggml_vf_fma(q, r, ggml_vf_set1(0.166666672f));
    q = ggml_vf_fma(q, r, ggml_vf_set1(0.5f));
    return ggml_vf_fma(ggml_vf_mul(r, r), q, r);
}

// x = n ln2 + r with n integral and |r| <= ln2/2 (plus rounding)
static inline ggml_vf ggml_vf_exp_reduce(ggml_vf x, ggml_vf * n) {
    *n = ggml_vf_round(ggml_vf_mul(x, ggml_vf_set1(GGML_VM_LOG2E)));
    const ggml_vf r = ggml_vf_fnma(*n, ggml_vf_set1(GGML_VM_LN2_HI), x);
    return ggml_vf_fnma(*n, ggml_vf_set1(GGML_VM_LN2_LO), r);
}

// e^x for every x, subnormal results included
static inline ggml_vf ggml_vf_exp(ggml_vf x) {
    // outside [-104, 89] the result is 0 or inf anyway; the bounds keep n in
    // [-150, 128], so that 2^n is the product of two normal powers of two
    x = ggml_vf_min(ggml_vf_set1(89.0f), ggml_vf_max(ggml_vf_set1(-104.0f), x));
    ggml_vf n;
    const ggml_vf r  = ggml_vf_exp_reduce(x, &n);
    const ggml_vf p  = ggml_vf_add(ggml_vf_set1(1.0f), ggml_vf_expm1_reduced(r));
    const ggml_vf n1 = ggml_vf_floor(ggml_vf_mul(n, ggml_vf_set1(0.5f)));
    const ggml_vf n2 = ggml_vf_sub(n, n1);
    // p * 2^n1 is exact; the second product rounds once, also into subnormals
    return ggml_vf_mul(ggml_vf_mul(p, ggml_vf_pow2i(n1)), ggml_vf_pow2i(n2));
}

// e^x - 1, accurate near 0, for x <= 88 (larger x are taken as 88)
static inline ggml_vf ggml_vf_expm1(ggml_vf x) {
    // below -20, e^x - 1 rounds to -1
    const ggml_vf xc = ggml_vf_min(ggml_vf_set1(88.0f), ggml_vf_max(ggml_vf_set1(-20.0f), x));
    ggml_vf n;
    const ggml_vf r = ggml_vf_exp_reduce(xc, &n);
    const ggml_vf s = ggml_vf_pow2i(n);
    // 2^n (e^r - 1) + (2^n - 1); 2^n - 1 is exact where it matters (|n| <= 24)
    const ggml_vf y = ggml_vf_fma(s, ggml_vf_expm1_reduced(r), ggml_vf_sub(s, ggml_vf_set1(1.0f)));
    // e^x - 1 has the sign of x, which the sum above loses for x = -0
    return ggml_vf_copysign(y, x);
}

// tanh |x| = t / (t + 2) with t = expm1(2|x|)
static inline ggml_vf ggml_vf_tanh(ggml_vf x) {
    // tanh(10) rounds to 1
    const ggml_vf ax = ggml_vf_min(ggml_vf_set1(10.0f), ggml_vf_abs(x));
    const ggml_vf t  = ggml_vf_expm1(ggml_vf_add(ax, ax));
    return ggml_vf_copysign(ggml_vf_div(t, ggml_vf_add(t, ggml_vf_set1(2.0f))), x);
}

// x sigmoid(t), as ggml_sf_mul_sigmoid
static inline ggml_vf ggml_vf_mul_sigmoid(ggml_vf x, ggml_vf t) {
    const ggml_vf e   = ggml_vf_exp(ggml_vf_neg(ggml_vf_abs(t)));
    const ggml_vf num = ggml_vf_select(ggml_vf_lt(t, ggml_vf_set1(0.0f)), ggml_vf_mul(x, e), x);
    return ggml_vf_div(num, ggml_vf_add(ggml_vf_set1(1.0f), e));
}

static inline ggml_vf ggml_vf_sigmoid(ggml_vf x) {
    return ggml_vf_mul_sigmoid(ggml_vf_set1(1.0f), x);
}

static inline ggml_vf ggml_vf_silu(ggml_vf x) {
    return ggml_vf_mul_sigmoid(x, x);
}

static inline ggml_vf ggml_vf_gelu(ggml_vf x) {
    const ggml_vf inner = ggml_vf_fma(ggml_vf_set1(GGML_GELU_COEF_A), ggml_vf_mul(x, x), ggml_vf_set1(1.0f));
    const ggml_vf u     = ggml_vf_mul(ggml_vf_mul(ggml_vf_set1(GGML_SQRT_2_OVER_PI), x), inner);
    return ggml_vf_mul_sigmoid(x, ggml_vf_add(u, u));
}

static inline ggml_vf ggml_vf_gelu_quick(ggml_vf x) {
    return ggml_vf_mul_sigmoid(x, ggml_vf_mul(ggml_vf_set1(-GGML_GELU_QUICK_COEF), x));
}

// x Phi(x) with Phi(x) = 0.5 erfc(-z), z = x / sqrt 2
static inline ggml_vf ggml_vf_gelu_erf(ggml_vf x) {
    const ggml_vf half = ggml_vf_set1(0.5f);
    const ggml_vf one  = ggml_vf_set1(1.0f);
    // beyond |x| = 20, Phi is 0 or 1 in binary32
    const ggml_vf xc = ggml_vf_min(ggml_vf_set1(20.0f), ggml_vf_max(ggml_vf_set1(-20.0f), x));
    const ggml_vf ax = ggml_vf_abs(xc);

    // |z| < 0.5: erf(z) = z P(z^2)
    const ggml_vf z  = ggml_vf_mul(xc, ggml_vf_set1(GGML_SQRT_2_INV));
    const ggml_vf z2 = ggml_vf_mul(z, z);
    ggml_vf p = ggml_vf_set1(0.00471908273f);
    p = ggml_vf_fma(p, z2, ggml_vf_set1(-0.026757732f));
    p = ggml_vf_fma(p, z2, ggml_vf_set1(0.112828314f));
    p = ggml_vf_fma(p, z2, ggml_vf_set1(-0.376126081f));
    p = ggml_vf_fma(p, z2, ggml_vf_set1(1.12837911f));
    const ggml_vf phi_small = ggml_vf_fma(ggml_vf_mul(half, z), p, half);

    // |z| >= 0.5: erfc(|z|) = exp(-z^2) R(t), t = 1 / (1 + |z|/2). z^2 = x^2/2 is
    // taken exactly as h + l (h = x*x/2 rounded), because exp(-z^2) would
    // magnify the rounding error of z^2 by z^2.
    const ggml_vf xx = ggml_vf_mul(xc, xc);
    const ggml_vf h  = ggml_vf_mul(half, xx);
    const ggml_vf l  = ggml_vf_mul(half, ggml_vf_fma(xc, xc, ggml_vf_neg(xx))); // x*x - xx, exactly
    const ggml_vf t  = ggml_vf_div(one, ggml_vf_fma(ax, ggml_vf_set1(0.5f * GGML_SQRT_2_INV), one));
    ggml_vf r = ggml_vf_set1(-0.0771237686f);
    r = ggml_vf_fma(r, t, ggml_vf_set1(0.362652451f));
    r = ggml_vf_fma(r, t, ggml_vf_set1(-0.631723106f));
    r = ggml_vf_fma(r, t, ggml_vf_set1(0.427759856f));
    r = ggml_vf_fma(r, t, ggml_vf_set1(-0.12184269f));
    r = ggml_vf_fma(r, t, ggml_vf_set1(0.241100132f));
    r = ggml_vf_fma(r, t, ggml_vf_set1(0.233312726f));
    r = ggml_vf_fma(r, t, ggml_vf_set1(0.283890814f));
    r = ggml_vf_fma(r, t, ggml_vf_set1(0.281957448f));
    r = ggml_vf_fma(r, t, ggml_vf_set1(4.59152216e-06f));
    ggml_vf e = ggml_vf_exp(ggml_vf_neg(h));
    e = ggml_vf_fnma(e, l, e); // exp(-h - l) = exp(-h) (1 - l), |l| < ulp(h)
    const ggml_vf half_erfc = ggml_vf_mul(half, ggml_vf_mul(e, r));
    const ggml_vf phi_large = ggml_vf_select(ggml_vf_lt(xc, ggml_vf_set1(0.0f)), half_erfc, ggml_vf_sub(one, half_erfc));

    const ggml_vf phi = ggml_vf_select(ggml_vf_lt(ax, ggml_vf_set1(0.70710678f)), phi_small, phi_large);
    return ggml_vf_mul(x, phi);
}

static inline ggml_vf ggml_vf_elu(ggml_vf x) {
    return ggml_vf_select(ggml_vf_gt(x, ggml_vf_set1(0.0f)), x, ggml_vf_expm1(x));
}

#endif // GGML_VF_WIDTH
