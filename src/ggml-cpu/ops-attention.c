// ops-attention.c: fused attention (GGML_OP_FLASH_ATTN_EXT).
//
// For query row i of head h (and batch index i3), with keys k_j and values v_j
// of the kv head h / (n_head / n_head_kv):
//
//   s_j = scale * q.k_j                            (logit_softcap == 0)
//   s_j = softcap * tanh(scale * q.k_j / softcap)  (otherwise)
//   s_j += slope_h * mask[j, i]                    (mask given; slope_h = 1 without ALiBi)
//   out = sum_j exp(s_j - M) v_j / (sum_j exp(s_j - M) + exp(sink_h - M))
//
// where M is the largest logit and the sink term is there only when sinks are
// given. Keys whose mask is -INF take no part; a row with every key masked
// (and no sink) gives zeros. The result is stored permuted:
// dst[:, h, i, i3].
//
// Keys are taken in blocks with an online softmax: each row keeps its running
// maximum M and sum S and an F32 accumulator of the values, rescaled when a
// block raises M. Query rows of one head are taken in tiles that share the
// K/V rows converted to F32 (types other than F32 and F16) and the mask
// checks. Each output row is computed by one thread in a fixed order, so the
// result does not depend on the number of threads.

#include "vec.h"

#include <math.h>

#define ATTN_TILE_ROWS 32  // query rows of one head computed together
#define ATTN_BLOCK_MAX 64 // most keys per block of the online softmax

//
// vector helpers, each with a scalar version (*_ref) that is also the
// portable fallback. K and V rows are F32 or F16 (suffix); the F16 versions
// convert on load and otherwise do exactly what the F32 ones do, so a row
// gives the same bits either way.
//

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
    return ggml_vec_hsum_avx(sum) + attn_exp_shift_sum_ref(n - i, x + i, m);
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

//
// the op
//

// per-thread scratch, offsets in floats from the thread's area (each part cache-line aligned)
struct attn_scratch {
    size_t q;      // ATTN_TILE_ROWS x DK: the tile's query rows in F32
    size_t acc;    // ATTN_TILE_ROWS x DV: value accumulators
    size_t logit;  // ATTN_TILE_ROWS x block: logits, then probabilities, of a block
    size_t kconv;  // block x DK: K rows converted to F32 (K not F32)
    size_t vconv;  // block x DV: V rows converted to F32 (V not F32)
    size_t total;  // floats per thread
};

static size_t attn_align_floats(int64_t n) {
    const size_t line = GGML_CPU_CACHE_LINE / sizeof(float);
    return ((size_t) n + line - 1) / line * line;
}

// Keys per block: a power of two from 16 to 64 such that the block's K and V
// rows in F32 fit in about 32 KiB (L1). It depends on the shapes only, so the
// rounding does too.
static int64_t attn_block_size(int64_t DK, int64_t DV) {
    const int64_t fit = 8192 / (DK + DV);
    return fit >= 64 ? 64 : fit >= 32 ? 32 : 16;
}

static struct attn_scratch attn_scratch_layout(const struct ggml_tensor * op) {
    const int64_t DK = op->src[1]->ne[0];
    const int64_t DV = op->src[2]->ne[0];
    const int64_t nb = attn_block_size(DK, DV);
    struct attn_scratch s = { .q = 0, .acc = 0, .logit = 0, .kconv = 0, .vconv = 0, .total = 0 };
    s.acc   = s.q     + attn_align_floats(ATTN_TILE_ROWS * DK);
    s.logit = s.acc   + attn_align_floats(ATTN_TILE_ROWS * DV);
    s.kconv = s.logit + attn_align_floats(ATTN_TILE_ROWS * nb);
    s.vconv = s.kconv + (op->src[1]->type == GGML_TYPE_F32 ? 0 : attn_align_floats(nb * DK));
    s.total = s.vconv + (op->src[2]->type == GGML_TYPE_F32 ? 0 : attn_align_floats(nb * DV));
    return s;
}

// everything a tile needs, read once per node
struct attn_job {
    const struct ggml_tensor * q;
    const struct ggml_tensor * k;
    const struct ggml_tensor * v;
    const struct ggml_tensor * mask;  // NULL: no mask
    const struct ggml_tensor * sinks; // NULL: no sinks
    struct ggml_tensor * dst;

    int64_t DK, DV, n_batch, n_kv, n_head, block;
    int64_t rk2, rk3, rv2, rv3; // q heads (batches) per K and V head (batch)

    // Tiles take their rows from the G heads that share a K and V head (G = 1
    // when K and V heads are grouped differently): row rho of a group is
    // query rho / G of head group*G + rho % G.
    int64_t G;
    int64_t n_rows;  // G * n_batch
    int64_t n_tiles; // per group and i3

    float scale;        // applied to q.k (divided by softcap when softcap != 0)
    float softcap;
    float max_bias;
    float m0, m1;       // ALiBi slope bases
    uint32_t n_head_log2;

    bool use_ref;
    struct attn_scratch layout;
};

// the ALiBi slope of head h (1 without ALiBi)
static float attn_alibi_slope(const struct attn_job * job, int64_t h) {
    if (job->max_bias <= 0.0f) {
        return 1.0f;
    }
    const uint32_t hu = (uint32_t) h;
    return hu < job->n_head_log2 ? powf(job->m0, (float)(hu + 1)) : powf(job->m1, (float)(2*(hu - job->n_head_log2) + 1));
}

static void attn_job_init(struct attn_job * job, struct ggml_tensor * dst, bool use_ref) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];

    job->q = q;
    job->k = k;
    job->v = v;
    job->mask  = dst->src[3];
    job->sinks = dst->src[4];
    job->dst   = dst;

    job->DK      = k->ne[0];
    job->DV      = v->ne[0];
    job->n_batch = q->ne[1];
    job->n_kv    = k->ne[1];
    job->n_head  = q->ne[2];
    job->block   = attn_block_size(job->DK, job->DV);
    job->rk2 = q->ne[2] / k->ne[2];
    job->rk3 = q->ne[3] / k->ne[3];
    job->rv2 = q->ne[2] / v->ne[2];
    job->rv3 = q->ne[3] / v->ne[3];
    job->G       = job->rk2 == job->rv2 ? job->rk2 : 1;
    job->n_rows  = job->G * job->n_batch;
    job->n_tiles = (job->n_rows + ATTN_TILE_ROWS - 1) / ATTN_TILE_ROWS;

    const float scale   = ggml_get_op_params_f32(dst, 0);
    const float softcap = ggml_get_op_params_f32(dst, 2);
    job->softcap  = softcap;
    job->scale    = softcap != 0.0f ? scale / softcap : scale;
    job->max_bias = ggml_get_op_params_f32(dst, 1);

    job->n_head_log2 = 1u << (uint32_t) floor(log2((double) job->n_head));
    job->m0 = powf(2.0f, -(job->max_bias) / (float) job->n_head_log2);
    job->m1 = powf(2.0f, -(job->max_bias / 2.0f) / (float) job->n_head_log2);

    job->use_ref = use_ref;
    job->layout  = attn_scratch_layout(dst);
}

// logit[j] = slope * mask[j] for the block's keys (0 without a mask); false if
// every key of the block is masked out
static bool attn_block_mask(const struct attn_job * job, const ggml_fp16_t * mrow, int64_t nc, float slope, float * logit) {
    if (mrow == NULL) {
        memset(logit, 0, (size_t) nc * sizeof(float));
        return true;
    }
    if (job->use_ref) {
        ggml_vec_fp16_to_fp32_ref(nc, mrow, logit);
    } else {
        ggml_vec_fp16_to_fp32(nc, mrow, logit);
    }
    if (slope != 1.0f) {
        ggml_vec_scale_f32_ref(nc, logit, slope);
    }
    const float max = job->use_ref ? ggml_vec_max_f32_ref(nc, logit) : ggml_vec_max_f32(nc, logit);
    return max != -INFINITY;
}

// K or V rows of a block: row j at base + j*stride bytes, F16 or F32
struct attn_rows {
    const char * base;
    size_t stride;
    bool f16;
};

// out[i][t] = q_{r+i} . k_{j+t} for i < nq, t < 4; keys past the block's end
// repeat its last, rows past nq repeat the last of them
static void attn_qk(const struct attn_job * job, const float * qf, int64_t r, int64_t nq, const struct attn_rows * k,
                    int64_t j, int64_t nc, float out[ATTN_QK_ROWS][4]) {
    const void * krows[4];
    for (int64_t t = 0; t < 4; t++) {
        krows[t] = k->base + MIN(j + t, nc - 1)*k->stride;
    }
    const ggml_fp16_t * const k16[4] = { krows[0], krows[1], krows[2], krows[3] };
    const float       * const k32[4] = { krows[0], krows[1], krows[2], krows[3] };
    if (job->use_ref) {
        for (int64_t i = 0; i < nq; i++) {
            if (k->f16) {
                attn_dot4_ref_f16(job->DK, qf + (r + i)*job->DK, k16, out[i]);
            } else {
                attn_dot4_ref_f32(job->DK, qf + (r + i)*job->DK, k32, out[i]);
            }
        }
    } else if (nq == 1) {
        if (k->f16) {
            attn_dot4_f16(job->DK, qf + r*job->DK, k16, out[0]);
        } else {
            attn_dot4_f32(job->DK, qf + r*job->DK, k32, out[0]);
        }
    } else {
        const float * qrows[ATTN_QK_ROWS];
        for (int64_t i = 0; i < ATTN_QK_ROWS; i++) {
            qrows[i] = qf + (r + MIN(i, nq - 1))*job->DK;
        }
        if (k->f16) {
            attn_qk_f16(job->DK, qrows, k16, out);
        } else {
            attn_qk_f32(job->DK, qrows, k32, out);
        }
    }
}

// logit[r*nb + j] += f(q_r . k_j) for the tile's nr rows and the block's nc
// keys; masked keys keep -INF whatever their K rows hold (rows with every key
// masked are all -INF)
static void attn_tile_logits(const struct attn_job * job, const float * qf, int64_t nr, const struct attn_rows * k,
                             int64_t nc, int64_t nb, float * logit) {
    float dots[ATTN_TILE_ROWS * ATTN_BLOCK_MAX];
    const int64_t qr = job->use_ref ? 1 : ATTN_QK_ROWS;
    for (int64_t j = 0; j < nc; j += 4) {
        const int64_t n4 = MIN(4, nc - j);
        for (int64_t r = 0; r < nr; r += qr) {
            const int64_t nq = MIN(qr, nr - r);
            bool any = false;
            for (int64_t i = 0; i < nq; i++) {
                for (int64_t t = 0; t < n4; t++) {
                    any |= logit[(r + i)*nb + j + t] != -INFINITY;
                }
            }
            float out[ATTN_QK_ROWS][4] = { { 0.0f } };
            if (any) {
                attn_qk(job, qf, r, nq, k, j, nc, out);
            }
            for (int64_t i = 0; i < nq; i++) {
                for (int64_t t = 0; t < n4; t++) {
                    const int64_t at = (r + i)*nb + j + t;
                    dots[at] = logit[at] == -INFINITY ? 0.0f : out[i][t];
                }
            }
        }
    }
    for (int64_t r = 0; r < nr; r++) {
        float * lr = logit + r*nb;
        float * dr = dots + r*nb;
        if (job->softcap != 0.0f) {
            if (job->use_ref) {
                attn_softcap_ref(nc, dr, job->scale, job->softcap);
            } else {
                attn_softcap(nc, dr, job->scale, job->softcap);
            }
            for (int64_t j = 0; j < nc; j++) {
                lr[j] += dr[j];
            }
        } else {
            for (int64_t j = 0; j < nc; j++) {
                lr[j] += job->scale * dr[j];
            }
        }
    }
}

// One row's online-softmax step over a block: logit[] becomes the
// probabilities exp(logit - M) (0 for masked keys), the accumulator and sum
// are rescaled if the block raises the maximum M. False if every key is masked.
static bool attn_block_softmax(const struct attn_job * job, float * logit, int64_t nc, float * acc, float * M, float * S) {
    const int64_t DV = job->DV;
    const float bmax = job->use_ref ? ggml_vec_max_f32_ref(nc, logit) : ggml_vec_max_f32(nc, logit);
    if (bmax == -INFINITY) {
        return false;
    }
    if (bmax > *M) {
        // earlier terms shrink by exp(M_old - M_new) (0 when M_old = -INF)
        const float ms = expf(*M - bmax);
        if (job->use_ref) {
            ggml_vec_scale_f32_ref(DV, acc, ms);
        } else {
            ggml_vec_scale_f32(DV, acc, ms);
        }
        *S *= ms;
        *M = bmax;
    }
    *S += job->use_ref ? attn_exp_shift_sum_ref(nc, logit, *M) : attn_exp_shift_sum(nc, logit, *M);
    return true;
}

// acc_r += sum_j p_r[j] v_j over the block's nc keys (p_r at p + r*nb) for the
// tile's rows with live[r]; V rows with
// p_r[j] == 0 (masked keys) are not read for that row
static void attn_tile_pv(const struct attn_job * job, const float * p, const bool * live, int64_t nr, int64_t nc,
                         int64_t nb, const struct attn_rows * v, float * acc) {
    const int64_t DV = job->DV;
    for (int64_t r = 0; r < nr; r++) {
        if (!live[r]) {
            continue;
        }
        if (job->use_ref) {
            if (v->f16) {
                attn_pv_ref_f16(nc, p + r*nb, v->base, v->stride, DV, acc + r*DV);
            } else {
                attn_pv_ref_f32(nc, p + r*nb, v->base, v->stride, DV, acc + r*DV);
            }
        } else if (r + 1 < nr && live[r + 1]) {
            if (v->f16) {
                attn_pv2_f16(nc, p + r*nb, p + (r + 1)*nb, v->base, v->stride, DV, acc + r*DV, acc + (r + 1)*DV);
            } else {
                attn_pv2_f32(nc, p + r*nb, p + (r + 1)*nb, v->base, v->stride, DV, acc + r*DV, acc + (r + 1)*DV);
            }
            r++;
        } else {
            if (v->f16) {
                attn_pv_f16(nc, p + r*nb, v->base, v->stride, DV, acc + r*DV);
            } else {
                attn_pv_f32(nc, p + r*nb, v->base, v->stride, DV, acc + r*DV);
            }
        }
    }
}

// Rows [c0, c0 + nc) of K or V for head (i2, i3). F32 rows are used in
// place, and so are F16 rows for a tile of one query row; otherwise the rows
// are converted to F32 into conv once for all rows of the tile.
static struct attn_rows attn_block_rows(const struct ggml_tensor * t, bool use_ref, int64_t nr, int64_t i2, int64_t i3,
                                        int64_t c0, int64_t nc, float * conv) {
    const int64_t n = t->ne[0];
    const char * base = (const char *) t->data + c0*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
    if (t->type == GGML_TYPE_F32 || (t->type == GGML_TYPE_F16 && nr == 1)) {
        return (struct attn_rows) { .base = base, .stride = t->nb[1], .f16 = t->type == GGML_TYPE_F16 };
    }
    for (int64_t j = 0; j < nc; j++) {
        const char * row = base + j*t->nb[1];
        if (t->type == GGML_TYPE_F16) {
            if (use_ref) {
                ggml_vec_fp16_to_fp32_ref(n, (const ggml_fp16_t *) row, conv + j*n);
            } else {
                ggml_vec_fp16_to_fp32(n, (const ggml_fp16_t *) row, conv + j*n);
            }
        } else {
            ggml_get_type_traits(t->type)->to_float(row, conv + j*n, n);
        }
    }
    return (struct attn_rows) { .base = (const char *) conv, .stride = (size_t) n * sizeof(float), .f16 = false };
}

// Asks for rows [c0, c0 + nc) of K or V to be brought into the cache while
// the current block is computed: the rows of a block (and the tile's mask
// rows) are read in short bursts, too short for the hardware prefetchers.
static void attn_prefetch(const void * p, size_t size) {
#if defined(__GNUC__) || defined(__clang__)
    for (size_t off = 0; off < size; off += GGML_CPU_CACHE_LINE) {
        __builtin_prefetch((const char *) p + off, 0, 2);
    }
#else
    (void) p;
    (void) size;
#endif
}

static void attn_prefetch_rows(const struct ggml_tensor * t, int64_t i2, int64_t i3, int64_t c0, int64_t nc) {
    const size_t row = ggml_row_size(t->type, t->ne[0]);
    const char * base = (const char *) t->data + c0*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
    for (int64_t j = 0; j < nc; j++) {
        attn_prefetch(base + j*t->nb[1], row);
    }
}

// rows [rho0, rho0 + nr) of head group grp, batch i3
static void attn_tile(const struct attn_job * job, float * scratch, int64_t grp, int64_t i3, int64_t rho0, int64_t nr) {
    const int64_t DK = job->DK;
    const int64_t DV = job->DV;
    const int64_t nb = job->block;
    const struct ggml_tensor * q    = job->q;
    const struct ggml_tensor * mask = job->mask;

    float * qf    = scratch + job->layout.q;
    float * acc   = scratch + job->layout.acc;
    float * logit = scratch + job->layout.logit;
    float * kconv = scratch + job->layout.kconv;
    float * vconv = scratch + job->layout.vconv;

    // every head of the group reads the same K and V head
    const int64_t h0  = grp * job->G;
    const int64_t ik2 = h0 / job->rk2, ik3 = i3 / job->rk3;
    const int64_t iv2 = h0 / job->rv2, iv3 = i3 / job->rv3;

    int64_t head[ATTN_TILE_ROWS];
    int64_t row[ATTN_TILE_ROWS];
    float slope[ATTN_TILE_ROWS];
    float M[ATTN_TILE_ROWS];
    float S[ATTN_TILE_ROWS];
    const ggml_fp16_t * mrow[ATTN_TILE_ROWS];
    bool live[ATTN_TILE_ROWS];

    for (int64_t r = 0; r < nr; r++) {
        const int64_t h = h0 + (rho0 + r) % job->G;
        const int64_t i = (rho0 + r) / job->G;
        head[r]  = h;
        row[r]   = i;
        slope[r] = attn_alibi_slope(job, h);
        M[r] = -INFINITY;
        S[r] = 0.0f;
        mrow[r] = mask == NULL ? NULL : (const ggml_fp16_t *)((const char *) mask->data + i*mask->nb[1] +
                                          (h % mask->ne[2])*mask->nb[2] + (i3 % mask->ne[3])*mask->nb[3]);
        const char * qr = (const char *) q->data + i*q->nb[1] + h*q->nb[2] + i3*q->nb[3];
        for (int64_t d = 0; d < DK; d++) {
            qf[r*DK + d] = *(const float *)(qr + d*q->nb[0]);
        }
        memset(acc + r*DV, 0, (size_t) DV * sizeof(float));
    }

    for (int64_t c0 = 0; c0 < job->n_kv; c0 += nb) {
        const int64_t nc = MIN(nb, job->n_kv - c0);

        bool any = false;
        for (int64_t r = 0; r < nr; r++) {
            live[r] = attn_block_mask(job, mrow[r] ? mrow[r] + c0 : NULL, nc, slope[r], logit + r*nb);
            any |= live[r];
        }
        if (!any) {
            continue;
        }

        const struct attn_rows kb = attn_block_rows(job->k, job->use_ref, nr, ik2, ik3, c0, nc, kconv);
        const struct attn_rows vb = attn_block_rows(job->v, job->use_ref, nr, iv2, iv3, c0, nc, vconv);
        if (c0 + nb < job->n_kv) {
            const int64_t nn = MIN(nb, job->n_kv - c0 - nb);
            attn_prefetch_rows(job->k, ik2, ik3, c0 + nb, nn);
            attn_prefetch_rows(job->v, iv2, iv3, c0 + nb, nn);
            for (int64_t r = 0; r < nr && mask != NULL; r++) {
                attn_prefetch(mrow[r] + c0 + nb, (size_t) nn * sizeof(ggml_fp16_t));
            }
        }

        attn_tile_logits(job, qf, nr, &kb, nc, nb, logit);
        for (int64_t r = 0; r < nr; r++) {
            live[r] = live[r] && attn_block_softmax(job, logit + r*nb, nc, acc + r*DV, &M[r], &S[r]);
        }
        attn_tile_pv(job, logit, live, nr, nc, nb, &vb, acc);
    }

    for (int64_t r = 0; r < nr; r++) {
        if (job->sinks != NULL) {
            // the sink is one more logit, with a zero value row
            const float s = *(const float *)((const char *) job->sinks->data + head[r]*job->sinks->nb[0]);
            if (s > M[r]) {
                const float ms = expf(M[r] - s);
                ggml_vec_scale_f32_ref(DV, acc + r*DV, ms);
                S[r] = S[r]*ms + 1.0f;
                M[r] = s;
            } else {
                S[r] += expf(s - M[r]);
            }
        }
        const float inv = S[r] == 0.0f ? 0.0f : 1.0f / S[r];
        float * out = (float *)((char *) job->dst->data + head[r]*job->dst->nb[1] + row[r]*job->dst->nb[2] +
                                i3*job->dst->nb[3]);
        for (int64_t d = 0; d < DV; d++) {
            out[d] = acc[r*DV + d] * inv;
        }
    }
}

static bool supports_flash_attn_ext(const struct ggml_tensor * op);

static void forward_flash_attn_ext(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    GGML_ASSERT(supports_flash_attn_ext(dst) && "flash_attn_ext: types or shapes the CPU kernel does not take");

    struct attn_job job;
    attn_job_init(&job, dst, params->use_ref);

    GGML_ASSERT(params->wsize >= (size_t) params->nth * job.layout.total * sizeof(float));
    float * scratch = (float *) params->wdata + (size_t) params->ith * job.layout.total;

    // tiles in the order (i3, head group, rows): consecutive tiles share K/V
    const int64_t n_groups = job.n_head / job.G;
    const int64_t n_items  = job.n_tiles * n_groups * dst->ne[3];
    for (int64_t it = ggml_cpu_next_chunk(params); it < n_items; it = ggml_cpu_next_chunk(params)) {
        const int64_t t    = it % job.n_tiles;
        const int64_t grp  = it / job.n_tiles % n_groups;
        const int64_t i3   = it / (job.n_tiles * n_groups);
        const int64_t rho0 = t * ATTN_TILE_ROWS;
        attn_tile(&job, scratch, grp, i3, rho0, MIN(ATTN_TILE_ROWS, job.n_rows - rho0));
    }
}

static size_t work_size_flash_attn_ext(const struct ggml_tensor * op, int n_threads) {
    return (size_t) n_threads * attn_scratch_layout(op).total * sizeof(float);
}

static bool attn_kv_type_supported(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32:
        case GGML_TYPE_F16:
        case GGML_TYPE_BF16:
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q5_1:
        case GGML_TYPE_Q8_0:
            return true;
        default:
            return false;
    }
}

static bool supports_flash_attn_ext(const struct ggml_tensor * op) {
    const struct ggml_tensor * q     = op->src[0];
    const struct ggml_tensor * k     = op->src[1];
    const struct ggml_tensor * v     = op->src[2];
    const struct ggml_tensor * mask  = op->src[3];
    const struct ggml_tensor * sinks = op->src[4];

    const int32_t prec = ggml_get_op_params_i32(op, 3);
    if (prec != GGML_PREC_DEFAULT && prec != GGML_PREC_F32) {
        return false;
    }
    if (op->type != GGML_TYPE_F32 || !ggml_is_contiguous(op) || q->type != GGML_TYPE_F32) {
        return false;
    }
    // K and V rows are read in place: contiguous within a row
    if (!attn_kv_type_supported(k->type) || !attn_kv_type_supported(v->type) ||
        k->nb[0] != ggml_type_size(k->type) || v->nb[0] != ggml_type_size(v->type)) {
        return false;
    }
    if (q->ne[0] != k->ne[0] || v->ne[1] != k->ne[1] ||
        q->ne[2] % k->ne[2] != 0 || q->ne[3] % k->ne[3] != 0 ||
        q->ne[2] % v->ne[2] != 0 || q->ne[3] % v->ne[3] != 0) {
        return false;
    }
    if (mask != NULL && (mask->type != GGML_TYPE_F16 || mask->nb[0] != sizeof(ggml_fp16_t) ||
                         mask->ne[0] < k->ne[1] || mask->ne[1] < q->ne[1] ||
                         q->ne[2] % mask->ne[2] != 0 || q->ne[3] % mask->ne[3] != 0)) {
        return false;
    }
    if (sinks != NULL && (sinks->type != GGML_TYPE_F32 || sinks->ne[0] < q->ne[2])) {
        return false;
    }
    return true;
}

void ggml_cpu_register_ops_attention(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_FLASH_ATTN_EXT] = (struct ggml_cpu_op_impl) {
        .forward   = forward_flash_attn_ext,
        .supports  = supports_flash_attn_ext,
        .work_size = work_size_flash_attn_ext,
    };
}
