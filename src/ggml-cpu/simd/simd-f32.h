#pragma once

//
// simd-f32.h: one vocabulary for float vectors of the instruction set the
// build targets (AVX-512: 16 lanes, AVX2 + FMA + F16C: 8 lanes, arm64 NEON:
// 4 lanes), so that vector algorithms (vec.h's row functions, vec-math.h,
// attention, rope, the float GEMM, the elementwise kernels) are written once
// and the intrinsics stay in this header.
//
// GGML_VF_WIDTH is defined exactly when a vector path exists; code using
// these functions must keep a scalar path for builds without one (an x86
// build below AVX2 + FMA + F16C, the portable sse2 variant included, takes it).
//
// min and max follow the x86 instructions: min(a, b) = a < b ? a : b and
// max(a, b) = a > b ? a : b, so when either is NaN the SECOND operand comes
// back. Put the value that must propagate NaN second: min(limit, x).
//
// Besides arithmetic: loads and stores that convert F16 and BF16 rows, loads
// and stores of the first n lanes (row tails), horizontal sums and maxima,
// and ggml_vfd, a float vector's lanes widened into double accumulators (for
// long reductions).
//

#include "cpu-impl.h"

#include <string.h>

#if defined(__AVX2__) || defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#define GGML_VEC_AVX512 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define GGML_VEC_AVX2 1
#elif defined(__aarch64__) && defined(__ARM_NEON)
// every arm64 CPU has NEON with FMA and fp16 conversions: no run-time check
#include <arm_neon.h>
#define GGML_VEC_NEON 1
#endif

// for helpers with loops over register arrays, which must be unrolled in place
#if defined(__GNUC__)
#define GGML_VF_INLINE inline __attribute__((always_inline))
#else
#define GGML_VF_INLINE inline
#endif

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

// the first n (<= GGML_VF_WIDTH) lanes of p, zeros beyond; lanes from n on
// are neither read nor written
static inline ggml_vf ggml_vf_load_part(const float * p, int n) {
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p);
}
static inline void ggml_vf_store_part(float * p, ggml_vf v, int n) {
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), v);
}

static inline ggml_vf ggml_vf_zero(void)                            { return _mm512_setzero_ps(); }
static inline ggml_vf ggml_vf_fms  (ggml_vf a, ggml_vf b, ggml_vf c) { return _mm512_fmsub_ps(a, b, c); }  // a*b - c
// (x1, x0) in each pair of lanes (x0, x1)
static inline ggml_vf ggml_vf_swap_pairs(ggml_vf a)                 { return _mm512_permute_ps(a, 0xB1); }

static inline float ggml_vf_reduce_add(ggml_vf a) { return _mm512_reduce_add_ps(a); }
static inline float ggml_vf_reduce_max(ggml_vf a) { return _mm512_reduce_max_ps(a); }

// out[t] = the lane sum of a_t, for four vectors at once
static inline void ggml_vf_reduce_add4(ggml_vf a0, ggml_vf a1, ggml_vf a2, ggml_vf a3, float out[4]) {
    // per 128-bit lane: s01 = [a0_0+a0_2, a1_0+a1_2, a0_1+a0_3, a1_1+a1_3], s23 alike
    const __m512 s01 = _mm512_add_ps(_mm512_unpacklo_ps(a0, a1), _mm512_unpackhi_ps(a0, a1));
    const __m512 s23 = _mm512_add_ps(_mm512_unpacklo_ps(a2, a3), _mm512_unpackhi_ps(a2, a3));
    // per 128-bit lane: [sum a0, sum a1, sum a2, sum a3]
    const __m512 s = _mm512_add_ps(_mm512_shuffle_ps(s01, s23, _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm512_shuffle_ps(s01, s23, _MM_SHUFFLE(3, 2, 3, 2)));
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(s),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

static inline ggml_vf ggml_vf_load_f16(const ggml_fp16_t * p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) p));
}
static inline ggml_vf ggml_vf_load_part_f16(const ggml_fp16_t * p, int n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16((__mmask16)((1u << n) - 1), p));
}
static inline void ggml_vf_store_f16(ggml_fp16_t * p, ggml_vf v) {
    _mm256_storeu_si256((__m256i *) p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

// bf16 is the high half of an fp32: widen and shift
static inline ggml_vf ggml_vf_load_bf16(const ggml_bf16_t * p) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *) p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
static inline ggml_vf ggml_vf_load_part_bf16(const ggml_bf16_t * p, int n) {
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16((__mmask16)((1u << n) - 1), p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
// round to nearest even as ggml_compute_fp32_to_bf16, NaNs made quiet
static inline void ggml_vf_store_bf16(ggml_bf16_t * p, ggml_vf f) {
    const __m512i   u   = _mm512_castps_si512(f);
    const __m512i   lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i   rnd = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
    const __m512i   nan = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(64));
    const __mmask16 isn = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    _mm256_storeu_si256((__m256i *) p, _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(isn, rnd, nan)));
}

// 16 x 16 floats transposed in registers: r[i] holds row i; after, r[c]
// holds column c
static GGML_VF_INLINE void ggml_vf_transpose16(ggml_vf r[16]) {
    __m512 u[16];
    for (int g = 0; g < 4; g++) {
        // per 128-bit lane L, of rows 4g..4g+3: t0 = a0 b0 a1 b1, t1 = a2 b2 a3 b3 (and c, d)
        const __m512 t0 = _mm512_unpacklo_ps(r[4*g + 0], r[4*g + 1]);
        const __m512 t1 = _mm512_unpackhi_ps(r[4*g + 0], r[4*g + 1]);
        const __m512 t2 = _mm512_unpacklo_ps(r[4*g + 2], r[4*g + 3]);
        const __m512 t3 = _mm512_unpackhi_ps(r[4*g + 2], r[4*g + 3]);
        // u[4g + x], lane L: element 4L + x of rows 4g..4g+3
        u[4*g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
        u[4*g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
        u[4*g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
        u[4*g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    }
    for (int x = 0; x < 4; x++) {
        // column 4L + x: lane L of u[x], u[4 + x], u[8 + x], u[12 + x]
        const __m512 w0 = _mm512_shuffle_f32x4(u[x], u[4 + x], 0x88);
        const __m512 w1 = _mm512_shuffle_f32x4(u[x], u[4 + x], 0xDD);
        const __m512 w2 = _mm512_shuffle_f32x4(u[8 + x], u[12 + x], 0x88);
        const __m512 w3 = _mm512_shuffle_f32x4(u[8 + x], u[12 + x], 0xDD);
        r[x + 0]  = _mm512_shuffle_f32x4(w0, w2, 0x88);
        r[x + 4]  = _mm512_shuffle_f32x4(w1, w3, 0x88);
        r[x + 8]  = _mm512_shuffle_f32x4(w0, w2, 0xDD);
        r[x + 12] = _mm512_shuffle_f32x4(w1, w3, 0xDD);
    }
}

// double accumulators for the lanes of a float vector
typedef struct { __m512d lo, hi; } ggml_vfd;

static inline ggml_vfd ggml_vfd_zero(void) {
    const ggml_vfd a = { _mm512_setzero_pd(), _mm512_setzero_pd() };
    return a;
}
static inline __m512d ggml_vf_lo_f64(ggml_vf v) { return _mm512_cvtps_pd(_mm512_castps512_ps256(v)); }
static inline __m512d ggml_vf_hi_f64(ggml_vf v) {
    return _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
static inline ggml_vfd ggml_vfd_add(ggml_vfd a, ggml_vf v) {
    a.lo = _mm512_add_pd(a.lo, ggml_vf_lo_f64(v));
    a.hi = _mm512_add_pd(a.hi, ggml_vf_hi_f64(v));
    return a;
}
static inline ggml_vfd ggml_vfd_add_sq(ggml_vfd a, ggml_vf v) { // a + v*v
    const __m512d lo = ggml_vf_lo_f64(v), hi = ggml_vf_hi_f64(v);
    a.lo = _mm512_fmadd_pd(lo, lo, a.lo);
    a.hi = _mm512_fmadd_pd(hi, hi, a.hi);
    return a;
}
static inline double ggml_vfd_reduce_add(ggml_vfd a) { return _mm512_reduce_add_pd(_mm512_add_pd(a.lo, a.hi)); }

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

// the lanes below n, as a mask for maskload / maskstore (which never touch the others)
static inline __m256i ggml_vf_first_lanes(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static inline ggml_vf ggml_vf_load_part(const float * p, int n) {
    return _mm256_maskload_ps(p, ggml_vf_first_lanes(n));
}
static inline void ggml_vf_store_part(float * p, ggml_vf v, int n) {
    _mm256_maskstore_ps(p, ggml_vf_first_lanes(n), v);
}

static inline ggml_vf ggml_vf_zero(void)                            { return _mm256_setzero_ps(); }
static inline ggml_vf ggml_vf_fms  (ggml_vf a, ggml_vf b, ggml_vf c) { return _mm256_fmsub_ps(a, b, c); }
static inline ggml_vf ggml_vf_swap_pairs(ggml_vf a)                 { return _mm256_permute_ps(a, 0xB1); }

static inline float ggml_vf_reduce_add(ggml_vf a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float ggml_vf_reduce_max(ggml_vf a) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}
// as the AVX-512 version, on two 128-bit lanes
static inline void ggml_vf_reduce_add4(ggml_vf a0, ggml_vf a1, ggml_vf a2, ggml_vf a3, float out[4]) {
    const __m256 s01 = _mm256_add_ps(_mm256_unpacklo_ps(a0, a1), _mm256_unpackhi_ps(a0, a1));
    const __m256 s23 = _mm256_add_ps(_mm256_unpacklo_ps(a2, a3), _mm256_unpackhi_ps(a2, a3));
    const __m256 s = _mm256_add_ps(_mm256_shuffle_ps(s01, s23, _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(s01, s23, _MM_SHUFFLE(3, 2, 3, 2)));
    _mm_storeu_ps(out, _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1)));
}

static inline ggml_vf ggml_vf_load_f16(const ggml_fp16_t * p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) p));
}
static inline ggml_vf ggml_vf_load_part_f16(const ggml_fp16_t * p, int n) {
    ggml_fp16_t tmp[GGML_VF_WIDTH] = { 0 };
    memcpy(tmp, p, sizeof(ggml_fp16_t) * (size_t) n);
    return ggml_vf_load_f16(tmp);
}
static inline void ggml_vf_store_f16(ggml_fp16_t * p, ggml_vf v) {
    _mm_storeu_si128((__m128i *) p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

static inline ggml_vf ggml_vf_load_bf16(const ggml_bf16_t * p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *) p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
static inline ggml_vf ggml_vf_load_part_bf16(const ggml_bf16_t * p, int n) {
    ggml_bf16_t tmp[GGML_VF_WIDTH] = { { 0 } };
    memcpy(tmp, p, sizeof(ggml_bf16_t) * (size_t) n);
    return ggml_vf_load_bf16(tmp);
}
static inline void ggml_vf_store_bf16(ggml_bf16_t * p, ggml_vf f) {
    const __m256i u   = _mm256_castps_si256(f);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i rnd = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
    const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(64));
    const __m256i r   = _mm256_blendv_epi8(rnd, nan, _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
    // every lane holds a value below 2^16: the unsigned saturating pack keeps it
    const __m256i w   = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128((__m128i *) p, _mm256_castsi256_si128(w));
}

typedef struct { __m256d lo, hi; } ggml_vfd;

static inline ggml_vfd ggml_vfd_zero(void) {
    const ggml_vfd a = { _mm256_setzero_pd(), _mm256_setzero_pd() };
    return a;
}
static inline __m256d ggml_vf_lo_f64(ggml_vf v) { return _mm256_cvtps_pd(_mm256_castps256_ps128(v)); }
static inline __m256d ggml_vf_hi_f64(ggml_vf v) { return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)); }
static inline ggml_vfd ggml_vfd_add(ggml_vfd a, ggml_vf v) {
    a.lo = _mm256_add_pd(a.lo, ggml_vf_lo_f64(v));
    a.hi = _mm256_add_pd(a.hi, ggml_vf_hi_f64(v));
    return a;
}
static inline ggml_vfd ggml_vfd_add_sq(ggml_vfd a, ggml_vf v) {
    const __m256d lo = ggml_vf_lo_f64(v), hi = ggml_vf_hi_f64(v);
    a.lo = _mm256_fmadd_pd(lo, lo, a.lo);
    a.hi = _mm256_fmadd_pd(hi, hi, a.hi);
    return a;
}
static inline double ggml_vfd_reduce_add(ggml_vfd a) {
    const __m256d v = _mm256_add_pd(a.lo, a.hi);
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
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

static inline ggml_vf ggml_vf_zero(void)                            { return vdupq_n_f32(0.0f); }
static inline ggml_vf ggml_vf_fms  (ggml_vf a, ggml_vf b, ggml_vf c) { return vfmaq_f32(vnegq_f32(c), a, b); }
static inline ggml_vf ggml_vf_swap_pairs(ggml_vf a)                 { return vrev64q_f32(a); }

static inline float ggml_vf_reduce_add(ggml_vf a) { return vaddvq_f32(a); }
static inline float ggml_vf_reduce_max(ggml_vf a) { return vmaxvq_f32(a); }
// pairwise, so that out[t] has the bits of ggml_vf_reduce_add(a_t)
static inline void ggml_vf_reduce_add4(ggml_vf a0, ggml_vf a1, ggml_vf a2, ggml_vf a3, float out[4]) {
    vst1q_f32(out, vpaddq_f32(vpaddq_f32(a0, a1), vpaddq_f32(a2, a3)));
}

static inline ggml_vf ggml_vf_load_f16(const ggml_fp16_t * p) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *) p)));
}
static inline ggml_vf ggml_vf_load_part_f16(const ggml_fp16_t * p, int n) {
    ggml_fp16_t tmp[GGML_VF_WIDTH] = { 0 };
    memcpy(tmp, p, sizeof(ggml_fp16_t) * (size_t) n);
    return ggml_vf_load_f16(tmp);
}
// rounds to nearest even, as the scalar path; NaNs stay NaNs with their sign
static inline void ggml_vf_store_f16(ggml_fp16_t * p, ggml_vf v) {
    vst1_u16((uint16_t *) p, vreinterpret_u16_f16(vcvt_f16_f32(v)));
}

static inline ggml_vf ggml_vf_load_bf16(const ggml_bf16_t * p) {
    return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16((const uint16_t *) p), 16));
}
static inline ggml_vf ggml_vf_load_part_bf16(const ggml_bf16_t * p, int n) {
    ggml_bf16_t tmp[GGML_VF_WIDTH] = { { 0 } };
    memcpy(tmp, p, sizeof(ggml_bf16_t) * (size_t) n);
    return ggml_vf_load_bf16(tmp);
}
// the scalar path's rounding, lane by lane: nearest even, NaNs quiet with sign and payload
static inline void ggml_vf_store_bf16(ggml_bf16_t * p, ggml_vf f) {
    const uint32x4_t u   = vreinterpretq_u32_f32(f);
    const uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
    const uint32x4_t rnd = vshrq_n_u32(vaddq_u32(u, vaddq_u32(lsb, vdupq_n_u32(0x7fff))), 16);
    const uint32x4_t nan = vorrq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(64));
    vst1_u16((uint16_t *) p, vmovn_u32(vbslq_u32(vceqq_f32(f, f), rnd, nan)));
}

typedef struct { float64x2_t lo, hi; } ggml_vfd;

static inline ggml_vfd ggml_vfd_zero(void) {
    const ggml_vfd a = { vdupq_n_f64(0.0), vdupq_n_f64(0.0) };
    return a;
}
static inline ggml_vfd ggml_vfd_add(ggml_vfd a, ggml_vf v) {
    a.lo = vaddq_f64(a.lo, vcvt_f64_f32(vget_low_f32(v)));
    a.hi = vaddq_f64(a.hi, vcvt_high_f64_f32(v));
    return a;
}
static inline ggml_vfd ggml_vfd_add_sq(ggml_vfd a, ggml_vf v) {
    const float64x2_t lo = vcvt_f64_f32(vget_low_f32(v)), hi = vcvt_high_f64_f32(v);
    a.lo = vfmaq_f64(a.lo, lo, lo);
    a.hi = vfmaq_f64(a.hi, hi, hi);
    return a;
}
static inline double ggml_vfd_reduce_add(ggml_vfd a) { return vaddvq_f64(vaddq_f64(a.lo, a.hi)); }

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
