#pragma once

//
// simd-f32.h: one vocabulary for float vectors of the instruction set the
// build targets (AVX-512: 16 lanes, AVX2 + FMA: 8 lanes, arm64 NEON: 4 lanes), so that vector
// algorithms (vec-math.h, the elementwise kernels) are written once.
//
// GGML_VF_WIDTH is defined exactly when a vector path exists; code using
// these functions must keep a scalar path for builds without one.
//
// min and max follow the x86 instructions: min(a, b) = a < b ? a : b and
// max(a, b) = a > b ? a : b, so when either is NaN the SECOND operand comes
// back. Put the value that must propagate NaN second: min(limit, x).
//

#include "simd/vec.h"

#if defined(GGML_VEC_AVX512)

#define GGML_VF_WIDTH 16

typedef __m512    ggml_vf;    // GGML_VF_WIDTH floats
typedef __mmask16 ggml_vmask; // one condition per lane

static inline ggml_vf ggml_vf_set1 (float c)                        { return _mm512_set1_ps(c); }
static inline ggml_vf ggml_vf_load (const float * p)                { return _mm512_loadu_ps(p); }
static inline void    ggml_vf_store(float * p, ggml_vf v)           { _mm512_storeu_ps(p, v); }
static inline ggml_vf ggml_vf_add  (ggml_vf a, ggml_vf b)           { return _mm512_add_ps(a, b); }
static inline ggml_vf ggml_vf_sub  (ggml_vf a, ggml_vf b)           { return _mm512_sub_ps(a, b); }
static inline ggml_vf ggml_vf_mul  (ggml_vf a, ggml_vf b)           { return _mm512_mul_ps(a, b); }
static inline ggml_vf ggml_vf_div  (ggml_vf a, ggml_vf b)           { return _mm512_div_ps(a, b); }
static inline ggml_vf ggml_vf_sqrt (ggml_vf a)                      { return _mm512_sqrt_ps(a); }
static inline ggml_vf ggml_vf_fma  (ggml_vf a, ggml_vf b, ggml_vf c) { return _mm512_fmadd_ps(a, b, c); }  // a*b + c
static inline ggml_vf ggml_vf_fnma (ggml_vf a, ggml_vf b, ggml_vf c) { return _mm512_fnmadd_ps(a, b, c); } // c - a*b
static inline ggml_vf ggml_vf_min  (ggml_vf a, ggml_vf b)           { return _mm512_min_ps(a, b); }
static inline ggml_vf ggml_vf_max  (ggml_vf a, ggml_vf b)           { return _mm512_max_ps(a, b); }
static inline ggml_vf ggml_vf_round(ggml_vf a)                      { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline ggml_vf ggml_vf_floor(ggml_vf a)                      { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
static inline ggml_vf ggml_vf_ceil (ggml_vf a)                      { return _mm512_roundscale_ps(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
static inline ggml_vf ggml_vf_trunc(ggml_vf a)                      { return _mm512_roundscale_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }

static inline ggml_vf ggml_vf_and(ggml_vf a, ggml_vf b) {
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
static inline ggml_vf ggml_vf_andnot(ggml_vf a, ggml_vf b) { // ~a & b
    return _mm512_castsi512_ps(_mm512_andnot_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
static inline ggml_vf ggml_vf_or(ggml_vf a, ggml_vf b) {
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
static inline ggml_vf ggml_vf_xor(ggml_vf a, ggml_vf b) {
    return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

static inline ggml_vmask ggml_vf_lt(ggml_vf a, ggml_vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline ggml_vmask ggml_vf_gt(ggml_vf a, ggml_vf b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }

// m ? t : f, lane by lane
static inline ggml_vf ggml_vf_select(ggml_vmask m, ggml_vf t, ggml_vf f) { return _mm512_mask_blend_ps(m, f, t); }

// 2^k for lanes holding integers k in [-126, 127]
static inline ggml_vf ggml_vf_pow2i(ggml_vf k) {
    const __m512i e = _mm512_add_epi32(_mm512_cvtps_epi32(k), _mm512_set1_epi32(127));
    return _mm512_castsi512_ps(_mm512_slli_epi32(e, 23));
}

// the first n (< GGML_VF_WIDTH) lanes of p, zeros beyond
static inline ggml_vf ggml_vf_load_part(const float * p, int n) {
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p);
}
static inline void ggml_vf_store_part(float * p, ggml_vf v, int n) {
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), v);
}

#elif defined(GGML_VEC_AVX2)

#define GGML_VF_WIDTH 8

typedef __m256 ggml_vf;
typedef __m256 ggml_vmask; // all ones or all zeros per lane

static inline ggml_vf ggml_vf_set1 (float c)                        { return _mm256_set1_ps(c); }
static inline ggml_vf ggml_vf_load (const float * p)                { return _mm256_loadu_ps(p); }
static inline void    ggml_vf_store(float * p, ggml_vf v)           { _mm256_storeu_ps(p, v); }
static inline ggml_vf ggml_vf_add  (ggml_vf a, ggml_vf b)           { return _mm256_add_ps(a, b); }
static inline ggml_vf ggml_vf_sub  (ggml_vf a, ggml_vf b)           { return _mm256_sub_ps(a, b); }
static inline ggml_vf ggml_vf_mul  (ggml_vf a, ggml_vf b)           { return _mm256_mul_ps(a, b); }
static inline ggml_vf ggml_vf_div  (ggml_vf a, ggml_vf b)           { return _mm256_div_ps(a, b); }
static inline ggml_vf ggml_vf_sqrt (ggml_vf a)                      { return _mm256_sqrt_ps(a); }
static inline ggml_vf ggml_vf_fma  (ggml_vf a, ggml_vf b, ggml_vf c) { return _mm256_fmadd_ps(a, b, c); }
static inline ggml_vf ggml_vf_fnma (ggml_vf a, ggml_vf b, ggml_vf c) { return _mm256_fnmadd_ps(a, b, c); }
static inline ggml_vf ggml_vf_min  (ggml_vf a, ggml_vf b)           { return _mm256_min_ps(a, b); }
static inline ggml_vf ggml_vf_max  (ggml_vf a, ggml_vf b)           { return _mm256_max_ps(a, b); }
static inline ggml_vf ggml_vf_round(ggml_vf a)                      { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
static inline ggml_vf ggml_vf_floor(ggml_vf a)                      { return _mm256_round_ps(a, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC); }
static inline ggml_vf ggml_vf_ceil (ggml_vf a)                      { return _mm256_round_ps(a, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC); }
static inline ggml_vf ggml_vf_trunc(ggml_vf a)                      { return _mm256_round_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
static inline ggml_vf ggml_vf_and   (ggml_vf a, ggml_vf b)          { return _mm256_and_ps(a, b); }
static inline ggml_vf ggml_vf_andnot(ggml_vf a, ggml_vf b)          { return _mm256_andnot_ps(a, b); }
static inline ggml_vf ggml_vf_or    (ggml_vf a, ggml_vf b)          { return _mm256_or_ps(a, b); }
static inline ggml_vf ggml_vf_xor   (ggml_vf a, ggml_vf b)          { return _mm256_xor_ps(a, b); }

static inline ggml_vmask ggml_vf_lt(ggml_vf a, ggml_vf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline ggml_vmask ggml_vf_gt(ggml_vf a, ggml_vf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }

static inline ggml_vf ggml_vf_select(ggml_vmask m, ggml_vf t, ggml_vf f) { return _mm256_blendv_ps(f, t, m); }

static inline ggml_vf ggml_vf_pow2i(ggml_vf k) {
    const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127));
    return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

static inline ggml_vf ggml_vf_load_part(const float * p, int n) {
    float tmp[GGML_VF_WIDTH] = { 0 };
    memcpy(tmp, p, sizeof(float) * (size_t) n);
    return _mm256_loadu_ps(tmp);
}
static inline void ggml_vf_store_part(float * p, ggml_vf v, int n) {
    float tmp[GGML_VF_WIDTH];
    _mm256_storeu_ps(tmp, v);
    memcpy(p, tmp, sizeof(float) * (size_t) n);
}

#elif defined(GGML_VEC_NEON)

#define GGML_VF_WIDTH 4

typedef float32x4_t ggml_vf;
typedef uint32x4_t  ggml_vmask; // all ones or all zeros per lane

static inline ggml_vf ggml_vf_set1 (float c)                        { return vdupq_n_f32(c); }
static inline ggml_vf ggml_vf_load (const float * p)                { return vld1q_f32(p); }
static inline void    ggml_vf_store(float * p, ggml_vf v)           { vst1q_f32(p, v); }
static inline ggml_vf ggml_vf_add  (ggml_vf a, ggml_vf b)           { return vaddq_f32(a, b); }
static inline ggml_vf ggml_vf_sub  (ggml_vf a, ggml_vf b)           { return vsubq_f32(a, b); }
static inline ggml_vf ggml_vf_mul  (ggml_vf a, ggml_vf b)           { return vmulq_f32(a, b); }
static inline ggml_vf ggml_vf_div  (ggml_vf a, ggml_vf b)           { return vdivq_f32(a, b); }
static inline ggml_vf ggml_vf_sqrt (ggml_vf a)                      { return vsqrtq_f32(a); }
static inline ggml_vf ggml_vf_fma  (ggml_vf a, ggml_vf b, ggml_vf c) { return vfmaq_f32(c, a, b); }
static inline ggml_vf ggml_vf_fnma (ggml_vf a, ggml_vf b, ggml_vf c) { return vfmsq_f32(c, a, b); }
// NEON's fmin/fmax return NaN when either is NaN; the x86 rule (see the top) is a select
static inline ggml_vf ggml_vf_min  (ggml_vf a, ggml_vf b)           { return vbslq_f32(vcltq_f32(a, b), a, b); }
static inline ggml_vf ggml_vf_max  (ggml_vf a, ggml_vf b)           { return vbslq_f32(vcgtq_f32(a, b), a, b); }
static inline ggml_vf ggml_vf_round(ggml_vf a)                      { return vrndnq_f32(a); } // ties to even, as x86
static inline ggml_vf ggml_vf_floor(ggml_vf a)                      { return vrndmq_f32(a); }
static inline ggml_vf ggml_vf_ceil (ggml_vf a)                      { return vrndpq_f32(a); }
static inline ggml_vf ggml_vf_trunc(ggml_vf a)                      { return vrndq_f32(a); }

static inline ggml_vf ggml_vf_and(ggml_vf a, ggml_vf b) {
    return vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
static inline ggml_vf ggml_vf_andnot(ggml_vf a, ggml_vf b) { // ~a & b
    return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(b), vreinterpretq_u32_f32(a)));
}
static inline ggml_vf ggml_vf_or(ggml_vf a, ggml_vf b) {
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
static inline ggml_vf ggml_vf_xor(ggml_vf a, ggml_vf b) {
    return vreinterpretq_f32_u32(veorq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}

static inline ggml_vmask ggml_vf_lt(ggml_vf a, ggml_vf b) { return vcltq_f32(a, b); }
static inline ggml_vmask ggml_vf_gt(ggml_vf a, ggml_vf b) { return vcgtq_f32(a, b); }

static inline ggml_vf ggml_vf_select(ggml_vmask m, ggml_vf t, ggml_vf f) { return vbslq_f32(m, t, f); }

static inline ggml_vf ggml_vf_pow2i(ggml_vf k) {
    const int32x4_t e = vaddq_s32(vcvtnq_s32_f32(k), vdupq_n_s32(127));
    return vreinterpretq_f32_s32(vshlq_n_s32(e, 23));
}

static inline ggml_vf ggml_vf_load_part(const float * p, int n) {
    float tmp[GGML_VF_WIDTH] = { 0 };
    memcpy(tmp, p, sizeof(float) * (size_t) n);
    return vld1q_f32(tmp);
}
static inline void ggml_vf_store_part(float * p, ggml_vf v, int n) {
    float tmp[GGML_VF_WIDTH];
    vst1q_f32(tmp, v);
    memcpy(p, tmp, sizeof(float) * (size_t) n);
}

#endif

#ifdef GGML_VF_WIDTH

// |a|, -a, and a with the sign of s
static inline ggml_vf ggml_vf_abs(ggml_vf a) { return ggml_vf_andnot(ggml_vf_set1(-0.0f), a); }
static inline ggml_vf ggml_vf_neg(ggml_vf a) { return ggml_vf_xor(ggml_vf_set1(-0.0f), a); }
static inline ggml_vf ggml_vf_copysign(ggml_vf a, ggml_vf s) {
    const ggml_vf sign = ggml_vf_set1(-0.0f);
    return ggml_vf_or(ggml_vf_andnot(sign, a), ggml_vf_and(sign, s));
}

#endif

//
// added for the quantized kernels (kernels/quants-dot.c: the row dots of
// F16 and BF16 weights): n <= GGML_VF_WIDTH half-precision values loaded as
// floats (the lanes past n zero), where GGML_VF_HALF_LOADS says they exist,
// and the sum of a vector's lanes, in a fixed order (the same order for every
// call, so that results do not depend on where a row is cut)
//

#if defined(GGML_VEC_AVX512)

#define GGML_VF_HALF_LOADS 1

static inline __m256i ggml_vf_load_u16_part(const void * p, int n) {
    return n >= 16 ? _mm256_loadu_si256((const __m256i *) p) : _mm256_maskz_loadu_epi16((__mmask16)((1u << n) - 1), p);
}
static inline ggml_vf ggml_vf_load_f16_part(const ggml_fp16_t * p, int n) {
    return _mm512_cvtph_ps(ggml_vf_load_u16_part(p, n));
}
static inline ggml_vf ggml_vf_load_bf16_part(const ggml_bf16_t * p, int n) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(ggml_vf_load_u16_part(p, n)), 16));
}
static inline float ggml_vf_reduce_add(ggml_vf v) { return _mm512_reduce_add_ps(v); }

#elif defined(GGML_VEC_AVX2)

#if defined(__F16C__)
#define GGML_VF_HALF_LOADS 1

static inline __m128i ggml_vf_load_u16_part(const void * p, int n) {
    if (n >= 8) {
        return _mm_loadu_si128((const __m128i *) p);
    }
    uint16_t tmp[8] = { 0 };
    memcpy(tmp, p, (size_t) n * sizeof(uint16_t));
    return _mm_loadu_si128((const __m128i *) tmp);
}
static inline ggml_vf ggml_vf_load_f16_part(const ggml_fp16_t * p, int n) {
    return _mm256_cvtph_ps(ggml_vf_load_u16_part(p, n));
}
static inline ggml_vf ggml_vf_load_bf16_part(const ggml_bf16_t * p, int n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(ggml_vf_load_u16_part(p, n)), 16));
}
#endif

static inline float ggml_vf_reduce_add(ggml_vf v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#elif defined(GGML_VEC_NEON)

static inline float ggml_vf_reduce_add(ggml_vf v) { return vaddvq_f32(v); }

#endif
