#pragma once

//
// vec-convert.h: row conversions between F32 and I32, with a vector path
// (AVX-512, or AVX2) and the *_ref scalar path, bit-identical to each other.
// (Conversions between F32, F16 and BF16 are in vec.h.)
//

#include "simd/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

// Truncation toward zero. NaN and values outside the int32 range give
// INT32_MIN, which is what the x86 conversion instructions produce, so the
// scalar and vector paths agree on every input.
static inline int32_t ggml_cpu_fp32_to_i32_trunc(float x) {
    if (x >= -2147483648.0f && x < 2147483648.0f) {
        return (int32_t) x;
    }
    return INT32_MIN;
}

static inline void ggml_vec_fp32_to_i32_ref(int64_t n, const float * GGML_RESTRICT x, int32_t * GGML_RESTRICT y) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggml_cpu_fp32_to_i32_trunc(x[i]);
    }
}

static inline void ggml_vec_i32_to_fp32_ref(int64_t n, const int32_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = (float) x[i];
    }
}

#if defined(GGML_VEC_AVX512)

static inline void ggml_vec_fp32_to_i32(int64_t n, const float * GGML_RESTRICT x, int32_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_si512((void *)(y + i), _mm512_cvttps_epi32(_mm512_loadu_ps(x + i)));
    }
    ggml_vec_fp32_to_i32_ref(n - i, x + i, y + i);
}

static inline void ggml_vec_i32_to_fp32(int64_t n, const int32_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(y + i, _mm512_cvtepi32_ps(_mm512_loadu_si512((const void *)(x + i))));
    }
    ggml_vec_i32_to_fp32_ref(n - i, x + i, y + i);
}

#elif defined(GGML_VEC_AVX2)

static inline void ggml_vec_fp32_to_i32(int64_t n, const float * GGML_RESTRICT x, int32_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_si256((__m256i *)(y + i), _mm256_cvttps_epi32(_mm256_loadu_ps(x + i)));
    }
    ggml_vec_fp32_to_i32_ref(n - i, x + i, y + i);
}

static inline void ggml_vec_i32_to_fp32(int64_t n, const int32_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(x + i))));
    }
    ggml_vec_i32_to_fp32_ref(n - i, x + i, y + i);
}

#else // portable

static inline void ggml_vec_fp32_to_i32(int64_t n, const float * GGML_RESTRICT x, int32_t * GGML_RESTRICT y) {
    ggml_vec_fp32_to_i32_ref(n, x, y);
}

static inline void ggml_vec_i32_to_fp32(int64_t n, const int32_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    ggml_vec_i32_to_fp32_ref(n, x, y);
}

#endif

#ifdef __cplusplus
}
#endif
