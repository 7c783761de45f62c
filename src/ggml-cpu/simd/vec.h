#pragma once

//
// vec.h: SIMD building blocks on contiguous rows, shared by the kernels.
//
// Each function has a vector path (AVX-512, AVX2 + FMA + F16C, or arm64 NEON)
// chosen at compile time and a portable scalar path; the *_ref functions are the
// scalar path alone, for ggml_backend_cpu_set_use_ref and for tests.
// Results of the vector and scalar paths differ only by float rounding
// (summation order).
//

#include "cpu-impl.h"

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

#ifdef __cplusplus
extern "C" {
#endif

//
// scalar reference paths
//

static inline float ggml_vec_dot_f32_ref(int64_t n, const float * GGML_RESTRICT x, const float * GGML_RESTRICT y) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        sum += x[i] * y[i];
    }
    return sum;
}

static inline float ggml_vec_dot_f16_ref(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, const ggml_fp16_t * GGML_RESTRICT y) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        sum += ggml_compute_fp16_to_fp32(x[i]) * ggml_compute_fp16_to_fp32(y[i]);
    }
    return sum;
}

static inline void ggml_vec_mad_f32_ref(int64_t n, float * GGML_RESTRICT y, const float * GGML_RESTRICT x, float v) {
    for (int64_t i = 0; i < n; i++) {
        y[i] += x[i] * v;
    }
}

static inline void ggml_vec_mad_f16_ref(int64_t n, float * GGML_RESTRICT y, const ggml_fp16_t * GGML_RESTRICT x, float v) {
    for (int64_t i = 0; i < n; i++) {
        y[i] += ggml_compute_fp16_to_fp32(x[i]) * v;
    }
}

static inline void ggml_vec_scale_f32_ref(int64_t n, float * y, float v) {
    for (int64_t i = 0; i < n; i++) {
        y[i] *= v;
    }
}

static inline float ggml_vec_max_f32_ref(int64_t n, const float * x) {
    float m = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        m = x[i] > m ? x[i] : m;
    }
    return m;
}

// whether x holds a NaN; the max above skips NaNs, so a row whose max is -inf
// is either masked out entirely (no NaN) or poisoned (a NaN)
static inline bool ggml_vec_has_nan_f32(int64_t n, const float * x) {
    for (int64_t i = 0; i < n; i++) {
        if (x[i] != x[i]) {
            return true;
        }
    }
    return false;
}

// sums in double: rows can be long (reductions over 10^5 values)
static inline double ggml_vec_sum_f32_ref(int64_t n, const float * x) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        sum += (double) x[i];
    }
    return sum;
}

// sum of squares, accumulated in double
static inline double ggml_vec_sumsq_f32_ref(int64_t n, const float * x) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        sum += (double) x[i] * (double) x[i];
    }
    return sum;
}

static inline void ggml_vec_fp16_to_fp32_ref(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggml_compute_fp16_to_fp32(x[i]);
    }
}

static inline void ggml_vec_fp32_to_fp16_ref(int64_t n, const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggml_compute_fp32_to_fp16(x[i]);
    }
}

static inline void ggml_vec_bf16_to_fp32_ref(int64_t n, const ggml_bf16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggml_compute_bf16_to_fp32(x[i]);
    }
}

static inline void ggml_vec_fp32_to_bf16_ref(int64_t n, const float * GGML_RESTRICT x, ggml_bf16_t * GGML_RESTRICT y) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggml_compute_fp32_to_bf16(x[i]);
    }
}

//
// vector paths
//

#if defined(GGML_VEC_AVX512)

static inline float ggml_vec_dot_f32(int64_t n, const float * GGML_RESTRICT x, const float * GGML_RESTRICT y) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i),      _mm512_loadu_ps(y + i),      a0);
        a1 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 16), _mm512_loadu_ps(y + i + 16), a1);
        a2 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 32), _mm512_loadu_ps(y + i + 32), a2);
        a3 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i + 48), _mm512_loadu_ps(y + i + 48), a3);
    }
    for (; i + 16 <= n; i += 16) {
        a0 = _mm512_fmadd_ps(_mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i), a0);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        a1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), _mm512_maskz_loadu_ps(m, y + i), a1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

static inline float ggml_vec_dot_f16(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, const ggml_fp16_t * GGML_RESTRICT y) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i))),
                             _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(y + i))), a0);
        a1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i + 16))),
                             _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(y + i + 16))), a1);
    }
    for (; i + 16 <= n; i += 16) {
        a0 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i))),
                             _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(y + i))), a0);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        a1 = _mm512_fmadd_ps(_mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i)),
                             _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, y + i)), a1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));
}

static inline void ggml_vec_mad_f32(int64_t n, float * GGML_RESTRICT y, const float * GGML_RESTRICT x, float v) {
    const __m512 vv = _mm512_set1_ps(v);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(_mm512_loadu_ps(x + i), vv, _mm512_loadu_ps(y + i)));
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), vv, _mm512_maskz_loadu_ps(m, y + i)));
    }
}

static inline void ggml_vec_mad_f16(int64_t n, float * GGML_RESTRICT y, const ggml_fp16_t * GGML_RESTRICT x, float v) {
    const __m512 vv = _mm512_set1_ps(v);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 xv = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i)));
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(xv, vv, _mm512_loadu_ps(y + i)));
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        const __m512 xv = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, x + i));
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(xv, vv, _mm512_maskz_loadu_ps(m, y + i)));
    }
}

static inline void ggml_vec_scale_f32(int64_t n, float * y, float v) {
    const __m512 vv = _mm512_set1_ps(v);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(y + i), vv));
    }
    if (i < n) {
        const __mmask16 m = (__mmask16)((1u << (n - i)) - 1);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, y + i), vv));
    }
}

static inline float ggml_vec_max_f32(int64_t n, const float * x) {
    __m512 mv = _mm512_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        mv = _mm512_max_ps(_mm512_loadu_ps(x + i), mv); // NaN in x is skipped, as in the scalar path
    }
    float m = _mm512_reduce_max_ps(mv);
    for (; i < n; i++) {
        m = x[i] > m ? x[i] : m;
    }
    return m;
}

static inline void ggml_vec_fp16_to_fp32(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_fp16_to_fp32(x[i]);
    }
}

static inline void ggml_vec_fp32_to_fp16(int64_t n, const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_fp32_to_fp16(x[i]);
    }
}

// bf16 is the high half of an fp32: widen and shift
static inline void ggml_vec_bf16_to_fp32(int64_t n, const ggml_bf16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(x + i)));
        _mm512_storeu_ps(y + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_bf16_to_fp32(x[i]);
    }
}

// round to nearest even as ggml_compute_fp32_to_bf16, NaNs made quiet
static inline void ggml_vec_fp32_to_bf16(int64_t n, const float * GGML_RESTRICT x, ggml_bf16_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512    f   = _mm512_loadu_ps(x + i);
        const __m512i   u   = _mm512_castps_si512(f);
        const __m512i   lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
        const __m512i   rnd = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff))), 16);
        const __m512i   nan = _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(64));
        const __mmask16 isn = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
        _mm256_storeu_si256((__m256i *)(y + i), _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(isn, rnd, nan)));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_fp32_to_bf16(x[i]);
    }
}

// sums accumulated in double: rows can be long (reductions over 10^5 values)
static inline double ggml_vec_sum_f32(int64_t n, const float * x) {
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm256_loadu_ps(x + i)));
        a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8)));
    }
    for (; i < n; i += 8) {
        const __mmask8 m = (__mmask8)(n - i >= 8 ? 0xFF : (1u << (n - i)) - 1);
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + i)));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
}

static inline double ggml_vec_sumsq_f32(int64_t n, const float * x) {
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512d v0 = _mm512_cvtps_pd(_mm256_loadu_ps(x + i));
        const __m512d v1 = _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8));
        a0 = _mm512_fmadd_pd(v0, v0, a0);
        a1 = _mm512_fmadd_pd(v1, v1, a1);
    }
    for (; i < n; i += 8) {
        const __mmask8 m = (__mmask8)(n - i >= 8 ? 0xFF : (1u << (n - i)) - 1);
        const __m512d v = _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, x + i));
        a0 = _mm512_fmadd_pd(v, v, a0);
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
}

#elif defined(GGML_VEC_AVX2)

static inline float ggml_vec_hsum_avx(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline float ggml_vec_dot_f32(int64_t n, const float * GGML_RESTRICT x, const float * GGML_RESTRICT y) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i),      _mm256_loadu_ps(y + i),      a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8),  _mm256_loadu_ps(y + i + 8),  a1);
        a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), a2);
        a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), a3);
    }
    for (; i + 8 <= n; i += 8) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), a0);
    }
    float sum = ggml_vec_hsum_avx(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (; i < n; i++) {
        sum += x[i] * y[i];
    }
    return sum;
}

static inline float ggml_vec_dot_f16(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, const ggml_fp16_t * GGML_RESTRICT y) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))),
                             _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(y + i))), a0);
        a1 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i + 8))),
                             _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(y + i + 8))), a1);
    }
    for (; i + 8 <= n; i += 8) {
        a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))),
                             _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(y + i))), a0);
    }
    float sum = ggml_vec_hsum_avx(_mm256_add_ps(a0, a1));
    for (; i < n; i++) {
        sum += ggml_compute_fp16_to_fp32(x[i]) * ggml_compute_fp16_to_fp32(y[i]);
    }
    return sum;
}

static inline void ggml_vec_mad_f32(int64_t n, float * GGML_RESTRICT y, const float * GGML_RESTRICT x, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), vv, _mm256_loadu_ps(y + i)));
    }
    for (; i < n; i++) {
        y[i] += x[i] * v;
    }
}

static inline void ggml_vec_mad_f16(int64_t n, float * GGML_RESTRICT y, const ggml_fp16_t * GGML_RESTRICT x, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 xv = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i)));
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(xv, vv, _mm256_loadu_ps(y + i)));
    }
    for (; i < n; i++) {
        y[i] += ggml_compute_fp16_to_fp32(x[i]) * v;
    }
}

static inline void ggml_vec_scale_f32(int64_t n, float * y, float v) {
    const __m256 vv = _mm256_set1_ps(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(y + i), vv));
    }
    for (; i < n; i++) {
        y[i] *= v;
    }
}

static inline float ggml_vec_max_f32(int64_t n, const float * x) {
    __m256 mv = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        mv = _mm256_max_ps(_mm256_loadu_ps(x + i), mv); // NaN in x is skipped, as in the scalar path
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mv), _mm256_extractf128_ps(mv, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    float m = _mm_cvtss_f32(m4);
    for (; i < n; i++) {
        m = x[i] > m ? x[i] : m;
    }
    return m;
}

static inline void ggml_vec_fp16_to_fp32(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + i))));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_fp16_to_fp32(x[i]);
    }
}

static inline void ggml_vec_fp32_to_fp16(int64_t n, const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm_storeu_si128((__m128i *)(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_fp32_to_fp16(x[i]);
    }
}

static inline void ggml_vec_bf16_to_fp32(int64_t n, const ggml_bf16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(x + i)));
        _mm256_storeu_ps(y + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_bf16_to_fp32(x[i]);
    }
}

static inline void ggml_vec_fp32_to_bf16(int64_t n, const float * GGML_RESTRICT x, ggml_bf16_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256  f   = _mm256_loadu_ps(x + i);
        const __m256i u   = _mm256_castps_si256(f);
        const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
        const __m256i rnd = _mm256_srli_epi32(_mm256_add_epi32(u, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))), 16);
        const __m256i nan = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(64));
        const __m256i r   = _mm256_blendv_epi8(rnd, nan, _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
        // every lane holds a value below 2^16: the unsigned saturating pack keeps it
        const __m256i p   = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
        _mm_storeu_si128((__m128i *)(y + i), _mm256_castsi256_si128(p));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_fp32_to_bf16(x[i]);
    }
}

static inline double ggml_v256_hsum_pd(__m256d v) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    s = _mm_add_sd(s, _mm_unpackhi_pd(s, s));
    return _mm_cvtsd_f64(s);
}

// sums accumulated in double: rows can be long (reductions over 10^5 values)
static inline double ggml_vec_sum_f32(int64_t n, const float * x) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm_loadu_ps(x + i)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4)));
    }
    double sum = ggml_v256_hsum_pd(_mm256_add_pd(a0, a1));
    for (; i < n; i++) {
        sum += (double) x[i];
    }
    return sum;
}

static inline double ggml_vec_sumsq_f32(int64_t n, const float * x) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256d v0 = _mm256_cvtps_pd(_mm_loadu_ps(x + i));
        const __m256d v1 = _mm256_cvtps_pd(_mm_loadu_ps(x + i + 4));
        a0 = _mm256_fmadd_pd(v0, v0, a0);
        a1 = _mm256_fmadd_pd(v1, v1, a1);
    }
    double sum = ggml_v256_hsum_pd(_mm256_add_pd(a0, a1));
    for (; i < n; i++) {
        sum += (double) x[i] * (double) x[i];
    }
    return sum;
}

#elif defined(GGML_VEC_NEON)

static inline float32x4_t ggml_neon_load_f16(const ggml_fp16_t * p) {
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *) p)));
}

static inline float ggml_vec_dot_f32(int64_t n, const float * GGML_RESTRICT x, const float * GGML_RESTRICT y) {
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = vfmaq_f32(a0, vld1q_f32(x + i),      vld1q_f32(y + i));
        a1 = vfmaq_f32(a1, vld1q_f32(x + i + 4),  vld1q_f32(y + i + 4));
        a2 = vfmaq_f32(a2, vld1q_f32(x + i + 8),  vld1q_f32(y + i + 8));
        a3 = vfmaq_f32(a3, vld1q_f32(x + i + 12), vld1q_f32(y + i + 12));
    }
    for (; i + 4 <= n; i += 4) {
        a0 = vfmaq_f32(a0, vld1q_f32(x + i), vld1q_f32(y + i));
    }
    float sum = vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3)));
    for (; i < n; i++) {
        sum += x[i] * y[i];
    }
    return sum;
}

static inline float ggml_vec_dot_f16(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, const ggml_fp16_t * GGML_RESTRICT y) {
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = vfmaq_f32(a0, ggml_neon_load_f16(x + i),      ggml_neon_load_f16(y + i));
        a1 = vfmaq_f32(a1, ggml_neon_load_f16(x + i + 4),  ggml_neon_load_f16(y + i + 4));
        a2 = vfmaq_f32(a2, ggml_neon_load_f16(x + i + 8),  ggml_neon_load_f16(y + i + 8));
        a3 = vfmaq_f32(a3, ggml_neon_load_f16(x + i + 12), ggml_neon_load_f16(y + i + 12));
    }
    for (; i + 4 <= n; i += 4) {
        a0 = vfmaq_f32(a0, ggml_neon_load_f16(x + i), ggml_neon_load_f16(y + i));
    }
    float sum = vaddvq_f32(vaddq_f32(vaddq_f32(a0, a1), vaddq_f32(a2, a3)));
    for (; i < n; i++) {
        sum += ggml_compute_fp16_to_fp32(x[i]) * ggml_compute_fp16_to_fp32(y[i]);
    }
    return sum;
}

static inline void ggml_vec_mad_f32(int64_t n, float * GGML_RESTRICT y, const float * GGML_RESTRICT x, float v) {
    const float32x4_t vv = vdupq_n_f32(v);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        vst1q_f32(y + i,     vfmaq_f32(vld1q_f32(y + i),     vld1q_f32(x + i),     vv));
        vst1q_f32(y + i + 4, vfmaq_f32(vld1q_f32(y + i + 4), vld1q_f32(x + i + 4), vv));
    }
    for (; i < n; i++) {
        y[i] += x[i] * v;
    }
}

static inline void ggml_vec_mad_f16(int64_t n, float * GGML_RESTRICT y, const ggml_fp16_t * GGML_RESTRICT x, float v) {
    const float32x4_t vv = vdupq_n_f32(v);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vst1q_f32(y + i, vfmaq_f32(vld1q_f32(y + i), ggml_neon_load_f16(x + i), vv));
    }
    for (; i < n; i++) {
        y[i] += ggml_compute_fp16_to_fp32(x[i]) * v;
    }
}

static inline void ggml_vec_scale_f32(int64_t n, float * y, float v) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vst1q_f32(y + i, vmulq_n_f32(vld1q_f32(y + i), v));
    }
    for (; i < n; i++) {
        y[i] *= v;
    }
}

// NaNs are skipped, as in the scalar path: a lane takes x only when x > m
static inline float ggml_vec_max_f32(int64_t n, const float * x) {
    float32x4_t m4 = vdupq_n_f32(-INFINITY);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        m4 = vbslq_f32(vcgtq_f32(v, m4), v, m4);
    }
    float m = vmaxvq_f32(m4);
    for (; i < n; i++) {
        m = x[i] > m ? x[i] : m;
    }
    return m;
}

static inline void ggml_vec_fp16_to_fp32(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16((const uint16_t *) x + i));
        vst1q_f32(y + i,     vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(y + i + 4, vcvt_high_f32_f16(h));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_fp16_to_fp32(x[i]);
    }
}

// rounds to nearest even, as the scalar path; NaNs stay NaNs with their sign
static inline void ggml_vec_fp32_to_fp16(int64_t n, const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t h = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(x + i)), vld1q_f32(x + i + 4));
        vst1q_u16((uint16_t *) y + i, vreinterpretq_u16_f16(h));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_fp32_to_fp16(x[i]);
    }
}

static inline void ggml_vec_bf16_to_fp32(int64_t n, const ggml_bf16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const uint16x8_t h = vld1q_u16((const uint16_t *) x + i);
        vst1q_f32(y + i,     vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16)));
        vst1q_f32(y + i + 4, vreinterpretq_f32_u32(vshll_high_n_u16(h, 16)));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_bf16_to_fp32(x[i]);
    }
}

// the scalar path's rounding, lane by lane: nearest even, NaNs quiet with sign and payload
static inline uint16x4_t ggml_neon_fp32_to_bf16(float32x4_t f) {
    const uint32x4_t u   = vreinterpretq_u32_f32(f);
    const uint32x4_t lsb = vandq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(1));
    const uint32x4_t rnd = vshrq_n_u32(vaddq_u32(u, vaddq_u32(lsb, vdupq_n_u32(0x7fff))), 16);
    const uint32x4_t nan = vorrq_u32(vshrq_n_u32(u, 16), vdupq_n_u32(64));
    return vmovn_u32(vbslq_u32(vceqq_f32(f, f), rnd, nan));
}

static inline void ggml_vec_fp32_to_bf16(int64_t n, const float * GGML_RESTRICT x, ggml_bf16_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        vst1_u16((uint16_t *) y + i, ggml_neon_fp32_to_bf16(vld1q_f32(x + i)));
    }
    for (; i < n; i++) {
        y[i] = ggml_compute_fp32_to_bf16(x[i]);
    }
}

// sums accumulated in double: rows can be long (reductions over 10^5 values)
static inline double ggml_vec_sum_f32(int64_t n, const float * x) {
    float64x2_t a0 = vdupq_n_f64(0.0), a1 = a0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        a0 = vaddq_f64(a0, vcvt_f64_f32(vget_low_f32(v)));
        a1 = vaddq_f64(a1, vcvt_high_f64_f32(v));
    }
    double sum = vaddvq_f64(vaddq_f64(a0, a1));
    for (; i < n; i++) {
        sum += (double) x[i];
    }
    return sum;
}

static inline double ggml_vec_sumsq_f32(int64_t n, const float * x) {
    float64x2_t a0 = vdupq_n_f64(0.0), a1 = a0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float32x4_t v  = vld1q_f32(x + i);
        const float64x2_t lo = vcvt_f64_f32(vget_low_f32(v));
        const float64x2_t hi = vcvt_high_f64_f32(v);
        a0 = vfmaq_f64(a0, lo, lo);
        a1 = vfmaq_f64(a1, hi, hi);
    }
    double sum = vaddvq_f64(vaddq_f64(a0, a1));
    for (; i < n; i++) {
        sum += (double) x[i] * (double) x[i];
    }
    return sum;
}

#else // portable

static inline float ggml_vec_dot_f32(int64_t n, const float * GGML_RESTRICT x, const float * GGML_RESTRICT y) {
    // four partial sums: independent chains the compiler can vectorise
    float s[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        for (int k = 0; k < 4; k++) {
            s[k] += x[i + k] * y[i + k];
        }
    }
    for (; i < n; i++) {
        s[0] += x[i] * y[i];
    }
    return (s[0] + s[1]) + (s[2] + s[3]);
}

static inline float ggml_vec_dot_f16(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, const ggml_fp16_t * GGML_RESTRICT y) {
    return ggml_vec_dot_f16_ref(n, x, y);
}

static inline void ggml_vec_mad_f32(int64_t n, float * GGML_RESTRICT y, const float * GGML_RESTRICT x, float v) {
    ggml_vec_mad_f32_ref(n, y, x, v);
}

static inline void ggml_vec_mad_f16(int64_t n, float * GGML_RESTRICT y, const ggml_fp16_t * GGML_RESTRICT x, float v) {
    ggml_vec_mad_f16_ref(n, y, x, v);
}

static inline void ggml_vec_scale_f32(int64_t n, float * y, float v) {
    ggml_vec_scale_f32_ref(n, y, v);
}

static inline float ggml_vec_max_f32(int64_t n, const float * x) {
    return ggml_vec_max_f32_ref(n, x);
}

static inline void ggml_vec_fp16_to_fp32(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    ggml_vec_fp16_to_fp32_ref(n, x, y);
}

static inline void ggml_vec_fp32_to_fp16(int64_t n, const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y) {
    ggml_vec_fp32_to_fp16_ref(n, x, y);
}

static inline void ggml_vec_bf16_to_fp32(int64_t n, const ggml_bf16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    ggml_vec_bf16_to_fp32_ref(n, x, y);
}

static inline void ggml_vec_fp32_to_bf16(int64_t n, const float * GGML_RESTRICT x, ggml_bf16_t * GGML_RESTRICT y) {
    ggml_vec_fp32_to_bf16_ref(n, x, y);
}

static inline double ggml_vec_sum_f32(int64_t n, const float * x) {
    return ggml_vec_sum_f32_ref(n, x);
}

static inline double ggml_vec_sumsq_f32(int64_t n, const float * x) {
    return ggml_vec_sumsq_f32_ref(n, x);
}

#endif

#ifdef __cplusplus
}
#endif
