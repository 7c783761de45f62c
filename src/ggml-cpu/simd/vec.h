#pragma once

//
// vec.h: SIMD building blocks on contiguous rows, shared by the kernels.
//
// Each function has one vector path, written on the float vectors of
// simd-f32.h (whichever width the build targets), and a portable scalar path;
// the *_ref functions are the scalar path alone, for
// ggml_backend_cpu_set_use_ref and for tests.
// Results of the vector and scalar paths differ only by float rounding
// (summation order).
//

#include "simd/simd-f32.h"

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

#ifdef GGML_VF_WIDTH

#define GGML_VF_W ((int64_t) GGML_VF_WIDTH)

// four accumulators: the latency of the fused multiply-add, not the loads,
// would set the pace with one
static inline float ggml_vec_dot_f32(int64_t n, const float * GGML_RESTRICT x, const float * GGML_RESTRICT y) {
    ggml_vf a0 = ggml_vf_zero(), a1 = ggml_vf_zero(), a2 = ggml_vf_zero(), a3 = ggml_vf_zero();
    int64_t i = 0;
    for (; i + 4*GGML_VF_W <= n; i += 4*GGML_VF_W) {
        a0 = ggml_vf_fma(ggml_vf_load(x + i),               ggml_vf_load(y + i),               a0);
        a1 = ggml_vf_fma(ggml_vf_load(x + i +   GGML_VF_W), ggml_vf_load(y + i +   GGML_VF_W), a1);
        a2 = ggml_vf_fma(ggml_vf_load(x + i + 2*GGML_VF_W), ggml_vf_load(y + i + 2*GGML_VF_W), a2);
        a3 = ggml_vf_fma(ggml_vf_load(x + i + 3*GGML_VF_W), ggml_vf_load(y + i + 3*GGML_VF_W), a3);
    }
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        a0 = ggml_vf_fma(ggml_vf_load(x + i), ggml_vf_load(y + i), a0);
    }
    if (i < n) {
        a1 = ggml_vf_fma(ggml_vf_load_part(x + i, (int)(n - i)), ggml_vf_load_part(y + i, (int)(n - i)), a1);
    }
    return ggml_vf_reduce_add(ggml_vf_add(ggml_vf_add(a0, a1), ggml_vf_add(a2, a3)));
}

static inline float ggml_vec_dot_f16(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, const ggml_fp16_t * GGML_RESTRICT y) {
    ggml_vf a0 = ggml_vf_zero(), a1 = ggml_vf_zero(), a2 = ggml_vf_zero(), a3 = ggml_vf_zero();
    int64_t i = 0;
    for (; i + 4*GGML_VF_W <= n; i += 4*GGML_VF_W) {
        a0 = ggml_vf_fma(ggml_vf_load_f16(x + i),               ggml_vf_load_f16(y + i),               a0);
        a1 = ggml_vf_fma(ggml_vf_load_f16(x + i +   GGML_VF_W), ggml_vf_load_f16(y + i +   GGML_VF_W), a1);
        a2 = ggml_vf_fma(ggml_vf_load_f16(x + i + 2*GGML_VF_W), ggml_vf_load_f16(y + i + 2*GGML_VF_W), a2);
        a3 = ggml_vf_fma(ggml_vf_load_f16(x + i + 3*GGML_VF_W), ggml_vf_load_f16(y + i + 3*GGML_VF_W), a3);
    }
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        a0 = ggml_vf_fma(ggml_vf_load_f16(x + i), ggml_vf_load_f16(y + i), a0);
    }
    if (i < n) {
        a1 = ggml_vf_fma(ggml_vf_load_part_f16(x + i, (int)(n - i)), ggml_vf_load_part_f16(y + i, (int)(n - i)), a1);
    }
    return ggml_vf_reduce_add(ggml_vf_add(ggml_vf_add(a0, a1), ggml_vf_add(a2, a3)));
}

static inline void ggml_vec_mad_f32(int64_t n, float * GGML_RESTRICT y, const float * GGML_RESTRICT x, float v) {
    const ggml_vf vv = ggml_vf_set1(v);
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        ggml_vf_store(y + i, ggml_vf_fma(ggml_vf_load(x + i), vv, ggml_vf_load(y + i)));
    }
    if (i < n) {
        const int m = (int)(n - i);
        ggml_vf_store_part(y + i, ggml_vf_fma(ggml_vf_load_part(x + i, m), vv, ggml_vf_load_part(y + i, m)), m);
    }
}

static inline void ggml_vec_mad_f16(int64_t n, float * GGML_RESTRICT y, const ggml_fp16_t * GGML_RESTRICT x, float v) {
    const ggml_vf vv = ggml_vf_set1(v);
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        ggml_vf_store(y + i, ggml_vf_fma(ggml_vf_load_f16(x + i), vv, ggml_vf_load(y + i)));
    }
    if (i < n) {
        const int m = (int)(n - i);
        ggml_vf_store_part(y + i, ggml_vf_fma(ggml_vf_load_part_f16(x + i, m), vv, ggml_vf_load_part(y + i, m)), m);
    }
}

static inline void ggml_vec_scale_f32(int64_t n, float * y, float v) {
    const ggml_vf vv = ggml_vf_set1(v);
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        ggml_vf_store(y + i, ggml_vf_mul(ggml_vf_load(y + i), vv));
    }
    if (i < n) {
        const int m = (int)(n - i);
        ggml_vf_store_part(y + i, ggml_vf_mul(ggml_vf_load_part(y + i, m), vv), m);
    }
}

static inline float ggml_vec_max_f32(int64_t n, const float * x) {
    ggml_vf mv = ggml_vf_set1(-INFINITY);
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        mv = ggml_vf_max(ggml_vf_load(x + i), mv); // NaN in x is skipped, as in the scalar path
    }
    float m = ggml_vf_reduce_max(mv);
    for (; i < n; i++) {
        m = x[i] > m ? x[i] : m;
    }
    return m;
}

// the conversions are bit-identical to the scalar ones: the tails take those
static inline void ggml_vec_fp16_to_fp32(int64_t n, const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        ggml_vf_store(y + i, ggml_vf_load_f16(x + i));
    }
    ggml_vec_fp16_to_fp32_ref(n - i, x + i, y + i);
}

static inline void ggml_vec_fp32_to_fp16(int64_t n, const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        ggml_vf_store_f16(y + i, ggml_vf_load(x + i));
    }
    ggml_vec_fp32_to_fp16_ref(n - i, x + i, y + i);
}

static inline void ggml_vec_bf16_to_fp32(int64_t n, const ggml_bf16_t * GGML_RESTRICT x, float * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        ggml_vf_store(y + i, ggml_vf_load_bf16(x + i));
    }
    ggml_vec_bf16_to_fp32_ref(n - i, x + i, y + i);
}

static inline void ggml_vec_fp32_to_bf16(int64_t n, const float * GGML_RESTRICT x, ggml_bf16_t * GGML_RESTRICT y) {
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        ggml_vf_store_bf16(y + i, ggml_vf_load(x + i));
    }
    ggml_vec_fp32_to_bf16_ref(n - i, x + i, y + i);
}

// sums accumulated in double: rows can be long (reductions over 10^5 values)
static inline double ggml_vec_sum_f32(int64_t n, const float * x) {
    ggml_vfd a = ggml_vfd_zero();
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        a = ggml_vfd_add(a, ggml_vf_load(x + i));
    }
    if (i < n) {
        a = ggml_vfd_add(a, ggml_vf_load_part(x + i, (int)(n - i)));
    }
    return ggml_vfd_reduce_add(a);
}

static inline double ggml_vec_sumsq_f32(int64_t n, const float * x) {
    ggml_vfd a = ggml_vfd_zero();
    int64_t i = 0;
    for (; i + GGML_VF_W <= n; i += GGML_VF_W) {
        a = ggml_vfd_add_sq(a, ggml_vf_load(x + i));
    }
    if (i < n) {
        a = ggml_vfd_add_sq(a, ggml_vf_load_part(x + i, (int)(n - i)));
    }
    return ggml_vfd_reduce_add(a);
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
