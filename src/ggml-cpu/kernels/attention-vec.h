#pragma once

// attention-vec.h: the vector kernels of fused attention (ops-attention.c):
// logits of several query rows against four keys, probability-weighted sums
// of V rows for one or two query rows, exp of shifted logits, softcap.
//
// Each has a scalar version (*_ref) for ggml_backend_cpu_set_use_ref that is
// also the portable fallback, and AVX-512, AVX2 (+FMA, F16C) and arm64 NEON versions.
// K and V rows are F32 or F16 (the suffix); the F16 versions convert on load
// and otherwise do exactly what the F32 ones do, so a row gives the same bits
// either way.

#include "simd/vec.h"

#include <math.h>

// out[t] = q . k_t for four K rows of n elements (rows may repeat)
static inline void attn_dot4_ref_f32(int64_t n, const float * q, const float * const k[4], float out[4]) {
    for (int t = 0; t < 4; t++) {
        out[t] = ggml_vec_dot_f32_ref(n, q, k[t]);
    }
}

static inline void attn_dot4_ref_f16(int64_t n, const float * q, const ggml_fp16_t * const k[4], float out[4]) {
    for (int t = 0; t < 4; t++) {
        float sum = 0.0f;
        for (int64_t i = 0; i < n; i++) {
            sum += q[i] * ggml_compute_fp16_to_fp32(k[t][i]);
        }
        out[t] = sum;
    }
}

// acc[0:n] += sum_j p[j] v_j[0:n] over the nc rows v_j at v + j*stride bytes,
// skipping those with p[j] == 0 (masked keys: their rows are never read)
static inline void attn_pv_ref_f32(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    for (int64_t j = 0; j < nc; j++) {
        if (p[j] != 0.0f) {
            ggml_vec_mad_f32_ref(n, acc, (const float *)(v + j*stride), p[j]);
        }
    }
}

static inline void attn_pv_ref_f16(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    for (int64_t j = 0; j < nc; j++) {
        if (p[j] != 0.0f) {
            ggml_vec_mad_f16_ref(n, acc, (const ggml_fp16_t *)(v + j*stride), p[j]);
        }
    }
}

// x[j] = exp(x[j] - m) for x[j] <= m; returns the sum
static inline float attn_exp_shift_sum_ref(int64_t n, float * x, float m) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        x[i] = expf(x[i] - m);
        s += x[i];
    }
    return s;
}

// x[j] = cap * tanh(x[j] * scale)
static inline void attn_softcap_ref(int64_t n, float * x, float scale, float cap) {
    for (int64_t i = 0; i < n; i++) {
        x[i] = cap * tanhf(x[i] * scale);
    }
}

// The vector exp computes exp(x) for x <= 0 (and NaN): a Cody-Waite
// reduction x = n ln2 + r with |r| <= ln2/2, exp(r) by its Taylor series to
// r^7 (truncation below 6e-9 relative), 2^n through the exponent bits.
// Results below FLT_MIN flush to 0, -INF included.
// The vector tanh is sign(t) (1 - e) / (1 + e) with e = exp(-2|t|) <= 1: no
// overflow, and an absolute error of a few ulp.
#define ATTN_EXP_LOG2E  1.44269504088896341f
#define ATTN_EXP_LN2_HI 0.693359375f     // few mantissa bits: n * LN2_HI is exact
#define ATTN_EXP_LN2_LO -2.12194440e-4f  // ln2 - LN2_HI
#define ATTN_EXP_MIN    -87.33654f       // ln(FLT_MIN)

#if defined(GGML_VEC_AVX512)

#define ATTN_QK_ROWS 4 // query rows of the logit kernel: 16 accumulators

static inline __mmask16 attn_tail_mask(int64_t n) {
    return n >= 16 ? (__mmask16) 0xffff : (__mmask16)((1u << n) - 1);
}

static inline __m512 attn_exp_nonpos(__m512 x) {
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(ATTN_EXP_LOG2E)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ATTN_EXP_LN2_HI), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(ATTN_EXP_LN2_LO), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    const __mmask16 tiny = _mm512_cmp_ps_mask(x, _mm512_set1_ps(ATTN_EXP_MIN), _CMP_LT_OQ); // NaN kept
    return _mm512_maskz_mul_ps((__mmask16) ~tiny, p, _mm512_castsi512_ps(e));
}

static inline float attn_exp_shift_sum(int64_t n, float * x, float m) {
    const __m512 mv = _mm512_set1_ps(m);
    __m512 sum = _mm512_setzero_ps();
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = attn_tail_mask(n - i);
        const __m512 e = attn_exp_nonpos(_mm512_sub_ps(_mm512_maskz_loadu_ps(k, x + i), mv));
        _mm512_mask_storeu_ps(x + i, k, e);
        sum = _mm512_mask_add_ps(sum, k, sum, e);
    }
    return _mm512_reduce_add_ps(sum);
}

static inline void attn_softcap(int64_t n, float * x, float scale, float cap) {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512i sign = _mm512_set1_epi32((int) 0x80000000u);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = attn_tail_mask(n - i);
        const __m512 t  = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), _mm512_set1_ps(scale));
        const __m512 e  = attn_exp_nonpos(_mm512_mul_ps(_mm512_abs_ps(t), _mm512_set1_ps(-2.0f)));
        const __m512 th = _mm512_div_ps(_mm512_sub_ps(one, e), _mm512_add_ps(one, e));
        const __m512 st = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(th),
                                              _mm512_and_si512(_mm512_castps_si512(t), sign)));
        _mm512_mask_storeu_ps(x + i, k, _mm512_mul_ps(st, _mm512_set1_ps(cap)));
    }
}

// the four lane sums of a0..a3
static inline __m128 attn_hsum4(__m512 a0, __m512 a1, __m512 a2, __m512 a3) {
    // per 128-bit lane: s01 = [a0_0+a0_2, a1_0+a1_2, a0_1+a0_3, a1_1+a1_3], s23 alike
    const __m512 s01 = _mm512_add_ps(_mm512_unpacklo_ps(a0, a1), _mm512_unpackhi_ps(a0, a1));
    const __m512 s23 = _mm512_add_ps(_mm512_unpacklo_ps(a2, a3), _mm512_unpackhi_ps(a2, a3));
    // per 128-bit lane: [sum a0, sum a1, sum a2, sum a3]
    const __m512 s = _mm512_add_ps(_mm512_shuffle_ps(s01, s23, _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm512_shuffle_ps(s01, s23, _MM_SHUFFLE(3, 2, 3, 2)));
    const __m256 h = _mm256_add_ps(_mm512_castps512_ps256(s),
                                   _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(s), 1)));
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

#define ATTN_LOAD_f32(p)     _mm512_loadu_ps(p)
#define ATTN_LOAD_f16(p)     _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p)))
#define ATTN_MLOAD_f32(m, p) _mm512_maskz_loadu_ps(m, p)
#define ATTN_MLOAD_f16(m, p) _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p))

// The kernels for F32 and F16 rows (TYPE) differ only in their loads (SUF).
//
// attn_dot4_SUF:  out[t] = q . k_t, as attn_dot4_ref_*
// attn_qk_SUF:    out[r][t] = q_r . k_t for ATTN_QK_ROWS rows q_r, each exactly as attn_dot4_SUF
// attn_pv128_SUF: acc[0:128] += sum_j p[j] v_j[0:128]: eight independent chains
// attn_pv64_SUF:  the same on 64 elements
// attn_pv64x2_SUF: the same for two rows of p and acc, loading V once
// attn_pv16_SUF:  acc[0:n] += sum_j p[j] v_j[0:n] for n <= 16; keys alternate
//                 between four accumulators so that the chains overlap
// attn_pv_SUF, attn_pv2_SUF: acc[0:n] += sum_j p[j] v_j[0:n] for one or two
//                 rows. Elements below a multiple of 64 take the keys in order
//                 (whichever kernel), the rest alternate: a row gives the
//                 same bits alone or paired.
#define ATTN_DEFINE_KERNELS(SUF, TYPE)                                                                            \
static inline void attn_dot4_##SUF(int64_t n, const float * q, const TYPE * const k[4], float out[4]) {           \
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps(); \
    for (int64_t i = 0; i < n; i += 16) {                                                                         \
        const __mmask16 m = attn_tail_mask(n - i);                                                                \
        const __m512 qv = _mm512_maskz_loadu_ps(m, q + i);                                                        \
        a0 = _mm512_fmadd_ps(ATTN_MLOAD_##SUF(m, k[0] + i), qv, a0);                                              \
        a1 = _mm512_fmadd_ps(ATTN_MLOAD_##SUF(m, k[1] + i), qv, a1);                                              \
        a2 = _mm512_fmadd_ps(ATTN_MLOAD_##SUF(m, k[2] + i), qv, a2);                                              \
        a3 = _mm512_fmadd_ps(ATTN_MLOAD_##SUF(m, k[3] + i), qv, a3);                                              \
    }                                                                                                             \
    _mm_storeu_ps(out, attn_hsum4(a0, a1, a2, a3));                                                               \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_qk_##SUF(int64_t n, const float * const q[ATTN_QK_ROWS], const TYPE * const k[4],        \
                                 float out[ATTN_QK_ROWS][4]) {                                                    \
    __m512 a[ATTN_QK_ROWS][4];                                                                                    \
    for (int r = 0; r < ATTN_QK_ROWS; r++) {                                                                      \
        for (int t = 0; t < 4; t++) {                                                                             \
            a[r][t] = _mm512_setzero_ps();                                                                        \
        }                                                                                                         \
    }                                                                                                             \
    for (int64_t i = 0; i < n; i += 16) {                                                                         \
        const __mmask16 m = attn_tail_mask(n - i);                                                                \
        __m512 kv[4];                                                                                             \
        for (int t = 0; t < 4; t++) {                                                                             \
            kv[t] = ATTN_MLOAD_##SUF(m, k[t] + i);                                                                \
        }                                                                                                         \
        for (int r = 0; r < ATTN_QK_ROWS; r++) {                                                                  \
            const __m512 qv = _mm512_maskz_loadu_ps(m, q[r] + i);                                                 \
            for (int t = 0; t < 4; t++) {                                                                         \
                a[r][t] = _mm512_fmadd_ps(kv[t], qv, a[r][t]);                                                    \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
    for (int r = 0; r < ATTN_QK_ROWS; r++) {                                                                      \
        _mm_storeu_ps(out[r], attn_hsum4(a[r][0], a[r][1], a[r][2], a[r][3]));                                    \
    }                                                                                                             \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_pv128_##SUF(int64_t nc, const float * p, const char * v, size_t stride, float * acc) {    \
    __m512 a0 = _mm512_loadu_ps(acc),      a1 = _mm512_loadu_ps(acc + 16);                                        \
    __m512 a2 = _mm512_loadu_ps(acc + 32), a3 = _mm512_loadu_ps(acc + 48);                                        \
    __m512 a4 = _mm512_loadu_ps(acc + 64), a5 = _mm512_loadu_ps(acc + 80);                                        \
    __m512 a6 = _mm512_loadu_ps(acc + 96), a7 = _mm512_loadu_ps(acc + 112);                                       \
    for (int64_t j = 0; j < nc; j++) {                                                                            \
        if (p[j] == 0.0f) {                                                                                       \
            continue;                                                                                             \
        }                                                                                                         \
        const __m512 pj = _mm512_set1_ps(p[j]);                                                                   \
        const TYPE * vj = (const TYPE *)(v + j*stride);                                                           \
        a0 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj),       pj, a0);                                                  \
        a1 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 16),  pj, a1);                                                  \
        a2 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 32),  pj, a2);                                                  \
        a3 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 48),  pj, a3);                                                  \
        a4 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 64),  pj, a4);                                                  \
        a5 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 80),  pj, a5);                                                  \
        a6 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 96),  pj, a6);                                                  \
        a7 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 112), pj, a7);                                                  \
    }                                                                                                             \
    _mm512_storeu_ps(acc,      a0); _mm512_storeu_ps(acc + 16,  a1);                                              \
    _mm512_storeu_ps(acc + 32, a2); _mm512_storeu_ps(acc + 48,  a3);                                              \
    _mm512_storeu_ps(acc + 64, a4); _mm512_storeu_ps(acc + 80,  a5);                                              \
    _mm512_storeu_ps(acc + 96, a6); _mm512_storeu_ps(acc + 112, a7);                                              \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_pv64_##SUF(int64_t nc, const float * p, const char * v, size_t stride, float * acc) {     \
    __m512 a0 = _mm512_loadu_ps(acc),      a1 = _mm512_loadu_ps(acc + 16);                                        \
    __m512 a2 = _mm512_loadu_ps(acc + 32), a3 = _mm512_loadu_ps(acc + 48);                                        \
    for (int64_t j = 0; j < nc; j++) {                                                                            \
        if (p[j] == 0.0f) {                                                                                       \
            continue;                                                                                             \
        }                                                                                                         \
        const __m512 pj = _mm512_set1_ps(p[j]);                                                                   \
        const TYPE * vj = (const TYPE *)(v + j*stride);                                                           \
        a0 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj),      pj, a0);                                                   \
        a1 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 16), pj, a1);                                                   \
        a2 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 32), pj, a2);                                                   \
        a3 = _mm512_fmadd_ps(ATTN_LOAD_##SUF(vj + 48), pj, a3);                                                   \
    }                                                                                                             \
    _mm512_storeu_ps(acc,      a0); _mm512_storeu_ps(acc + 16, a1);                                               \
    _mm512_storeu_ps(acc + 32, a2); _mm512_storeu_ps(acc + 48, a3);                                               \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_pv64x2_##SUF(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride, \
                                     float * acc0, float * acc1) {                                                \
    __m512 a0 = _mm512_loadu_ps(acc0),      a1 = _mm512_loadu_ps(acc0 + 16);                                      \
    __m512 a2 = _mm512_loadu_ps(acc0 + 32), a3 = _mm512_loadu_ps(acc0 + 48);                                      \
    __m512 b0 = _mm512_loadu_ps(acc1),      b1 = _mm512_loadu_ps(acc1 + 16);                                      \
    __m512 b2 = _mm512_loadu_ps(acc1 + 32), b3 = _mm512_loadu_ps(acc1 + 48);                                      \
    for (int64_t j = 0; j < nc; j++) {                                                                            \
        if (p0[j] == 0.0f && p1[j] == 0.0f) {                                                                     \
            continue;                                                                                             \
        }                                                                                                         \
        /* a row whose p is 0 is left alone, as in the one-row kernels */                                         \
        const __mmask16 m0 = p0[j] != 0.0f ? (__mmask16) 0xffff : 0;                                              \
        const __mmask16 m1 = p1[j] != 0.0f ? (__mmask16) 0xffff : 0;                                              \
        const __m512 w0 = _mm512_set1_ps(p0[j]);                                                                  \
        const __m512 w1 = _mm512_set1_ps(p1[j]);                                                                  \
        const TYPE * vj = (const TYPE *)(v + j*stride);                                                           \
        const __m512 v0 = ATTN_LOAD_##SUF(vj),      v1 = ATTN_LOAD_##SUF(vj + 16);                                \
        const __m512 v2 = ATTN_LOAD_##SUF(vj + 32), v3 = ATTN_LOAD_##SUF(vj + 48);                                \
        a0 = _mm512_mask3_fmadd_ps(v0, w0, a0, m0); b0 = _mm512_mask3_fmadd_ps(v0, w1, b0, m1);                   \
        a1 = _mm512_mask3_fmadd_ps(v1, w0, a1, m0); b1 = _mm512_mask3_fmadd_ps(v1, w1, b1, m1);                   \
        a2 = _mm512_mask3_fmadd_ps(v2, w0, a2, m0); b2 = _mm512_mask3_fmadd_ps(v2, w1, b2, m1);                   \
        a3 = _mm512_mask3_fmadd_ps(v3, w0, a3, m0); b3 = _mm512_mask3_fmadd_ps(v3, w1, b3, m1);                   \
    }                                                                                                             \
    _mm512_storeu_ps(acc0,      a0); _mm512_storeu_ps(acc0 + 16, a1);                                             \
    _mm512_storeu_ps(acc0 + 32, a2); _mm512_storeu_ps(acc0 + 48, a3);                                             \
    _mm512_storeu_ps(acc1,      b0); _mm512_storeu_ps(acc1 + 16, b1);                                             \
    _mm512_storeu_ps(acc1 + 32, b2); _mm512_storeu_ps(acc1 + 48, b3);                                             \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_pv16_##SUF(int64_t nc, const float * p, const char * v, size_t stride, int64_t n,        \
                                   float * acc) {                                                                 \
    const __mmask16 m = attn_tail_mask(n);                                                                        \
    __m512 a[4] = { _mm512_maskz_loadu_ps(m, acc), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() }; \
    for (int64_t j = 0; j < nc; j++) {                                                                            \
        if (p[j] != 0.0f) {                                                                                       \
            const __m512 vj = ATTN_MLOAD_##SUF(m, (const TYPE *)(v + j*stride));                                  \
            a[j & 3] = _mm512_fmadd_ps(vj, _mm512_set1_ps(p[j]), a[j & 3]);                                       \
        }                                                                                                         \
    }                                                                                                             \
    _mm512_mask_storeu_ps(acc, m, _mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])));          \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_pv_##SUF(int64_t nc, const float * p, const char * v, size_t stride, int64_t n,          \
                                 float * acc) {                                                                   \
    int64_t d = 0;                                                                                                \
    for (; d + 128 <= n; d += 128) {                                                                              \
        attn_pv128_##SUF(nc, p, v + d*sizeof(TYPE), stride, acc + d);                                             \
    }                                                                                                             \
    if (d + 64 <= n) {                                                                                            \
        attn_pv64_##SUF(nc, p, v + d*sizeof(TYPE), stride, acc + d);                                              \
        d += 64;                                                                                                  \
    }                                                                                                             \
    for (; d < n; d += 16) {                                                                                      \
        attn_pv16_##SUF(nc, p, v + d*sizeof(TYPE), stride, MIN(16, n - d), acc + d);                              \
    }                                                                                                             \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_pv2_##SUF(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride,  \
                                  int64_t n, float * acc0, float * acc1) {                                        \
    int64_t d = 0;                                                                                                \
    for (; d + 64 <= n; d += 64) {                                                                                \
        attn_pv64x2_##SUF(nc, p0, p1, v + d*sizeof(TYPE), stride, acc0 + d, acc1 + d);                            \
    }                                                                                                             \
    for (; d < n; d += 16) {                                                                                      \
        attn_pv16_##SUF(nc, p0, v + d*sizeof(TYPE), stride, MIN(16, n - d), acc0 + d);                            \
        attn_pv16_##SUF(nc, p1, v + d*sizeof(TYPE), stride, MIN(16, n - d), acc1 + d);                            \
    }                                                                                                             \
}

ATTN_DEFINE_KERNELS(f32, float)
ATTN_DEFINE_KERNELS(f16, ggml_fp16_t)

#elif defined(GGML_VEC_AVX2)

#define ATTN_QK_ROWS 2 // query rows of the logit kernel: 8 of the 16 registers accumulate

static inline __m256 attn_exp_nonpos(__m256 x) {
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(ATTN_EXP_LOG2E)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(ATTN_EXP_LN2_HI), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(ATTN_EXP_LN2_LO), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    const __m256 keep = _mm256_cmp_ps(x, _mm256_set1_ps(ATTN_EXP_MIN), _CMP_NLT_UQ); // NaN kept
    return _mm256_and_ps(keep, _mm256_mul_ps(p, _mm256_castsi256_ps(e)));
}

static inline float attn_exp_shift_sum(int64_t n, float * x, float m) {
    const __m256 mv = _mm256_set1_ps(m);
    __m256 sum = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = attn_exp_nonpos(_mm256_sub_ps(_mm256_loadu_ps(x + i), mv));
        _mm256_storeu_ps(x + i, e);
        sum = _mm256_add_ps(sum, e);
    }
    return ggml_vf_reduce_add(sum) + attn_exp_shift_sum_ref(n - i, x + i, m);
}

static inline void attn_softcap(int64_t n, float * x, float scale, float cap) {
    const __m256 one  = _mm256_set1_ps(1.0f);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 t  = _mm256_mul_ps(_mm256_loadu_ps(x + i), _mm256_set1_ps(scale));
        const __m256 e  = attn_exp_nonpos(_mm256_mul_ps(_mm256_andnot_ps(sign, t), _mm256_set1_ps(-2.0f)));
        const __m256 th = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
        _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_or_ps(th, _mm256_and_ps(t, sign)), _mm256_set1_ps(cap)));
    }
    attn_softcap_ref(n - i, x + i, scale, cap);
}

static inline __m128 attn_hsum4(__m256 a0, __m256 a1, __m256 a2, __m256 a3) {
    // as the AVX-512 version, on two 128-bit lanes
    const __m256 s01 = _mm256_add_ps(_mm256_unpacklo_ps(a0, a1), _mm256_unpackhi_ps(a0, a1));
    const __m256 s23 = _mm256_add_ps(_mm256_unpacklo_ps(a2, a3), _mm256_unpackhi_ps(a2, a3));
    const __m256 s = _mm256_add_ps(_mm256_shuffle_ps(s01, s23, _MM_SHUFFLE(1, 0, 1, 0)),
                                   _mm256_shuffle_ps(s01, s23, _MM_SHUFFLE(3, 2, 3, 2)));
    return _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
}

#define ATTN_LOAD_f32(p)  _mm256_loadu_ps(p)
#define ATTN_LOAD_f16(p)  _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define ATTN_SCALAR_f32(x) (x)
#define ATTN_SCALAR_f16(x) ggml_compute_fp16_to_fp32(x)

// As the AVX-512 kernels on 8 lanes: attn_pv128_SUF covers 64 elements and
// attn_pv16_SUF up to 8, a partial vector in scalar.
#define ATTN_DEFINE_KERNELS(SUF, TYPE)                                                                            \
static inline void attn_dot4_##SUF(int64_t n, const float * q, const TYPE * const k[4], float out[4]) {           \
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps(); \
    int64_t i = 0;                                                                                                \
    for (; i + 8 <= n; i += 8) {                                                                                  \
        const __m256 qv = _mm256_loadu_ps(q + i);                                                                 \
        a0 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(k[0] + i), qv, a0);                                                  \
        a1 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(k[1] + i), qv, a1);                                                  \
        a2 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(k[2] + i), qv, a2);                                                  \
        a3 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(k[3] + i), qv, a3);                                                  \
    }                                                                                                             \
    _mm_storeu_ps(out, attn_hsum4(a0, a1, a2, a3));                                                               \
    for (; i < n; i++) {                                                                                          \
        for (int t = 0; t < 4; t++) {                                                                             \
            out[t] += q[i] * ATTN_SCALAR_##SUF(k[t][i]);                                                          \
        }                                                                                                         \
    }                                                                                                             \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_qk_##SUF(int64_t n, const float * const q[ATTN_QK_ROWS], const TYPE * const k[4],        \
                                 float out[ATTN_QK_ROWS][4]) {                                                    \
    __m256 a[ATTN_QK_ROWS][4];                                                                                    \
    for (int r = 0; r < ATTN_QK_ROWS; r++) {                                                                      \
        for (int t = 0; t < 4; t++) {                                                                             \
            a[r][t] = _mm256_setzero_ps();                                                                        \
        }                                                                                                         \
    }                                                                                                             \
    int64_t i = 0;                                                                                                \
    for (; i + 8 <= n; i += 8) {                                                                                  \
        __m256 kv[4];                                                                                             \
        for (int t = 0; t < 4; t++) {                                                                             \
            kv[t] = ATTN_LOAD_##SUF(k[t] + i);                                                                    \
        }                                                                                                         \
        for (int r = 0; r < ATTN_QK_ROWS; r++) {                                                                  \
            const __m256 qv = _mm256_loadu_ps(q[r] + i);                                                          \
            for (int t = 0; t < 4; t++) {                                                                         \
                a[r][t] = _mm256_fmadd_ps(kv[t], qv, a[r][t]);                                                    \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
    for (int r = 0; r < ATTN_QK_ROWS; r++) {                                                                      \
        _mm_storeu_ps(out[r], attn_hsum4(a[r][0], a[r][1], a[r][2], a[r][3]));                                    \
        for (int64_t e = i; e < n; e++) {                                                                         \
            for (int t = 0; t < 4; t++) {                                                                         \
                out[r][t] += q[r][e] * ATTN_SCALAR_##SUF(k[t][e]);                                                \
            }                                                                                                     \
        }                                                                                                         \
    }                                                                                                             \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_pv128_##SUF(int64_t nc, const float * p, const char * v, size_t stride, float * acc) {    \
    __m256 a0 = _mm256_loadu_ps(acc),      a1 = _mm256_loadu_ps(acc + 8);                                         \
    __m256 a2 = _mm256_loadu_ps(acc + 16), a3 = _mm256_loadu_ps(acc + 24);                                        \
    __m256 a4 = _mm256_loadu_ps(acc + 32), a5 = _mm256_loadu_ps(acc + 40);                                        \
    __m256 a6 = _mm256_loadu_ps(acc + 48), a7 = _mm256_loadu_ps(acc + 56);                                        \
    for (int64_t j = 0; j < nc; j++) {                                                                            \
        if (p[j] == 0.0f) {                                                                                       \
            continue;                                                                                             \
        }                                                                                                         \
        const __m256 pj = _mm256_set1_ps(p[j]);                                                                   \
        const TYPE * vj = (const TYPE *)(v + j*stride);                                                           \
        a0 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(vj),      pj, a0);                                                   \
        a1 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(vj + 8),  pj, a1);                                                   \
        a2 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(vj + 16), pj, a2);                                                   \
        a3 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(vj + 24), pj, a3);                                                   \
        a4 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(vj + 32), pj, a4);                                                   \
        a5 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(vj + 40), pj, a5);                                                   \
        a6 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(vj + 48), pj, a6);                                                   \
        a7 = _mm256_fmadd_ps(ATTN_LOAD_##SUF(vj + 56), pj, a7);                                                   \
    }                                                                                                             \
    _mm256_storeu_ps(acc,      a0); _mm256_storeu_ps(acc + 8,  a1);                                               \
    _mm256_storeu_ps(acc + 16, a2); _mm256_storeu_ps(acc + 24, a3);                                               \
    _mm256_storeu_ps(acc + 32, a4); _mm256_storeu_ps(acc + 40, a5);                                               \
    _mm256_storeu_ps(acc + 48, a6); _mm256_storeu_ps(acc + 56, a7);                                               \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_pv16_##SUF(int64_t nc, const float * p, const char * v, size_t stride, int64_t n,        \
                                   float * acc) {                                                                 \
    if (n < 8) {                                                                                                  \
        attn_pv_ref_##SUF(nc, p, v, stride, n, acc);                                                              \
        return;                                                                                                   \
    }                                                                                                             \
    __m256 a[4] = { _mm256_loadu_ps(acc), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps() };       \
    for (int64_t j = 0; j < nc; j++) {                                                                            \
        if (p[j] != 0.0f) {                                                                                       \
            const __m256 vj = ATTN_LOAD_##SUF((const TYPE *)(v + j*stride));                                      \
            a[j & 3] = _mm256_fmadd_ps(vj, _mm256_set1_ps(p[j]), a[j & 3]);                                       \
        }                                                                                                         \
    }                                                                                                             \
    _mm256_storeu_ps(acc, _mm256_add_ps(_mm256_add_ps(a[0], a[1]), _mm256_add_ps(a[2], a[3])));                  \
}

ATTN_DEFINE_KERNELS(f32, float)
ATTN_DEFINE_KERNELS(f16, ggml_fp16_t)

// one row at a time: the 16 registers do not hold two rows' accumulators
#define ATTN_DEFINE_PV(SUF, TYPE)                                                                                  \
static inline void attn_pv_##SUF(int64_t nc, const float * p, const char * v, size_t stride, int64_t n,          \
                                 float * acc) {                                                                   \
    int64_t d = 0;                                                                                                \
    for (; d + 64 <= n; d += 64) {                                                                                \
        attn_pv128_##SUF(nc, p, v + d*sizeof(TYPE), stride, acc + d);                                             \
    }                                                                                                             \
    for (; d < n; d += 8) {                                                                                       \
        attn_pv16_##SUF(nc, p, v + d*sizeof(TYPE), stride, MIN(8, n - d), acc + d);                               \
    }                                                                                                             \
}                                                                                                                 \
                                                                                                                  \
static inline void attn_pv2_##SUF(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride,  \
                                  int64_t n, float * acc0, float * acc1) {                                        \
    attn_pv_##SUF(nc, p0, v, stride, n, acc0);                                                                    \
    attn_pv_##SUF(nc, p1, v, stride, n, acc1);                                                                    \
}

ATTN_DEFINE_PV(f32, float)
ATTN_DEFINE_PV(f16, ggml_fp16_t)

#elif defined(GGML_VEC_NEON)

// arm64: the dot products and the weighted sums of V rows in NEON; exp and
// softcap stay scalar. F16 rows are converted on load and summed in the same
// order as F32 rows.

#define ATTN_QK_ROWS 1

static inline float32x4_t attn_load_f32(const float * p)       { return vld1q_f32(p); }
static inline float32x4_t attn_load_f16(const ggml_fp16_t * p) { return ggml_vf_load_f16(p); }
static inline float attn_elem_f32(const float * p, int64_t i)       { return p[i]; }
static inline float attn_elem_f16(const ggml_fp16_t * p, int64_t i) { return ggml_compute_fp16_to_fp32(p[i]); }

#define ATTN_DEFINE_NEON(SUF, TYPE)                                                                    \
static inline void attn_dot4_##SUF(int64_t n, const float * q, const TYPE * const k[4], float out[4]) { \
    float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;                                    \
    int64_t i = 0;                                                                                     \
    for (; i + 4 <= n; i += 4) {                                                                       \
        const float32x4_t qv = vld1q_f32(q + i);                                                       \
        a0 = vfmaq_f32(a0, qv, attn_load_##SUF(k[0] + i));                                             \
        a1 = vfmaq_f32(a1, qv, attn_load_##SUF(k[1] + i));                                             \
        a2 = vfmaq_f32(a2, qv, attn_load_##SUF(k[2] + i));                                             \
        a3 = vfmaq_f32(a3, qv, attn_load_##SUF(k[3] + i));                                             \
    }                                                                                                  \
    out[0] = vaddvq_f32(a0); out[1] = vaddvq_f32(a1); out[2] = vaddvq_f32(a2); out[3] = vaddvq_f32(a3); \
    for (; i < n; i++) {                                                                               \
        for (int t = 0; t < 4; t++) {                                                                  \
            out[t] += q[i] * attn_elem_##SUF(k[t], i);                                                 \
        }                                                                                              \
    }                                                                                                  \
}                                                                                                      \
static inline void attn_qk_##SUF(int64_t n, const float * const q[1], const TYPE * const k[4],         \
                                 float out[1][4]) {                                                    \
    attn_dot4_##SUF(n, q[0], k, out[0]);                                                               \
}                                                                                                      \
static inline void attn_pv_##SUF(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, \
                                 float * acc) {                                                        \
    for (int64_t j = 0; j < nc; j++) {                                                                 \
        if (p[j] == 0.0f) {                                                                            \
            continue;                                                                                  \
        }                                                                                              \
        const TYPE * vr = (const TYPE *)(v + j*stride);                                                \
        const float32x4_t pv = vdupq_n_f32(p[j]);                                                      \
        int64_t i = 0;                                                                                 \
        for (; i + 4 <= n; i += 4) {                                                                   \
            vst1q_f32(acc + i, vfmaq_f32(vld1q_f32(acc + i), attn_load_##SUF(vr + i), pv));            \
        }                                                                                              \
        for (; i < n; i++) {                                                                           \
            acc[i] += attn_elem_##SUF(vr, i) * p[j];                                                   \
        }                                                                                              \
    }                                                                                                  \
}                                                                                                      \
static inline void attn_pv2_##SUF(int64_t nc, const float * p0, const float * p1, const char * v,     \
                                  size_t stride, int64_t n, float * acc0, float * acc1) {              \
    attn_pv_##SUF(nc, p0, v, stride, n, acc0);                                                         \
    attn_pv_##SUF(nc, p1, v, stride, n, acc1);                                                         \
}

ATTN_DEFINE_NEON(f32, float)
ATTN_DEFINE_NEON(f16, ggml_fp16_t)

static inline float attn_exp_shift_sum(int64_t n, float * x, float m) {
    return attn_exp_shift_sum_ref(n, x, m);
}
static inline void attn_softcap(int64_t n, float * x, float scale, float cap) {
    attn_softcap_ref(n, x, scale, cap);
}

#else // portable

#define ATTN_QK_ROWS 1

static inline void attn_qk_f32(int64_t n, const float * const q[1], const float * const k[4], float out[1][4]) {
    attn_dot4_ref_f32(n, q[0], k, out[0]);
}
static inline void attn_qk_f16(int64_t n, const float * const q[1], const ggml_fp16_t * const k[4], float out[1][4]) {
    attn_dot4_ref_f16(n, q[0], k, out[0]);
}
static inline void attn_dot4_f32(int64_t n, const float * q, const float * const k[4], float out[4]) {
    attn_dot4_ref_f32(n, q, k, out);
}
static inline void attn_dot4_f16(int64_t n, const float * q, const ggml_fp16_t * const k[4], float out[4]) {
    attn_dot4_ref_f16(n, q, k, out);
}
static inline void attn_pv_f32(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    attn_pv_ref_f32(nc, p, v, stride, n, acc);
}
static inline void attn_pv_f16(int64_t nc, const float * p, const char * v, size_t stride, int64_t n, float * acc) {
    attn_pv_ref_f16(nc, p, v, stride, n, acc);
}
static inline void attn_pv2_f32(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride,
                                int64_t n, float * acc0, float * acc1) {
    attn_pv_ref_f32(nc, p0, v, stride, n, acc0);
    attn_pv_ref_f32(nc, p1, v, stride, n, acc1);
}
static inline void attn_pv2_f16(int64_t nc, const float * p0, const float * p1, const char * v, size_t stride,
                                int64_t n, float * acc0, float * acc1) {
    attn_pv_ref_f16(nc, p0, v, stride, n, acc0);
    attn_pv_ref_f16(nc, p1, v, stride, n, acc1);
}
static inline float attn_exp_shift_sum(int64_t n, float * x, float m) {
    return attn_exp_shift_sum_ref(n, x, m);
}
static inline void attn_softcap(int64_t n, float * x, float scale, float cap) {
    attn_softcap_ref(n, x, scale, cap);
}

#endif
