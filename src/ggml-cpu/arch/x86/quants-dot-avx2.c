// quants-dot-avx2.c: the x86 activation quantizers (fp32 -> Q8_0 / Q8_1, and
// Q8_K where the variant has AVX-512) and
// row dots of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 . Q8 rows, on AVX2 (AVX-512 for
// the quantizers, 4 columns per step and two blocks per register where the
// variant has it, VNNI where it has that; two blocks per 256-bit register for
// the nibble types without AVX-512); quants-dot.c has the portable paths
// they follow.
//
// Quantizers: the vector path reproduces the reference arithmetic exactly:
// the same maximum, the same division and reciprocal, the same products, and
// roundf (half away from zero) built from a truncation and an exact
// remainder. Blocks where that is not enough (a NaN or an infinity, whose
// handling in the reference depends on the order of the maximum, or a scale
// so small that its reciprocal overflows) take the reference quantizer.
//
// Row dots: the codes of a weight block are unsigned bytes u with an offset o
// (value = d*(u - o) for Q4_0 / Q5_0, d*u + m for Q4_1 / Q5_1), so that one
// unsigned x signed byte product instruction (vpdpbusd, or vpmaddubsw +
// vpmaddwd) does the work: sum_j (u_j - o) * y_j = sum_j u_j*y_j - o * sum_j y_j,
// and o * sum_j y_j is computed once per activation block for all rows.
// Q8_0 weights are signed; they use |x| and y with the sign of x.

#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "simd/stream-prefetch.h"
#include "ggml-quants.h"

#if defined(QD_SIMD)

// below this amax, d = amax/127 is subnormal and 1/d may overflow
#define QD_Q8_MIN_AMAX (127.0f * 1.17549435e-38f)

#if defined(GGML_VEC_AVX512)

// codes of one block of 32 finite values; false if the block needs the reference
static QD_INLINE bool qd_q8_block(const float * x, int8_t * qs, float * pd, int * psum) {
    const __m512 v0 = _mm512_loadu_ps(x);
    const __m512 v1 = _mm512_loadu_ps(x + 16);
    const __m512 a0 = _mm512_abs_ps(v0);
    const __m512 a1 = _mm512_abs_ps(v1);
    const __m512 inf = _mm512_set1_ps(INFINITY);
    // NaN compares false: a block with a NaN or an infinity fails this
    const __mmask16 fin = _mm512_cmp_ps_mask(a0, inf, _CMP_LT_OQ) & _mm512_cmp_ps_mask(a1, inf, _CMP_LT_OQ);
    if (fin != 0xFFFF) {
        return false;
    }
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
    if (amax < QD_Q8_MIN_AMAX) {
        return false;
    }
    const float d  = amax / 127.0f;
    const float id = 1.0f / d;
    const __m512  vid  = _mm512_set1_ps(id);
    const __m512  half = _mm512_set1_ps(0.5f);
    const __m512i sign = _mm512_set1_epi32((int) 0x80000000u);
    const __m512i one  = _mm512_castps_si512(_mm512_set1_ps(1.0f));
    __m512i q[2];
    const __m512 v[2] = { v0, v1 };
    for (int h = 0; h < 2; h++) {
        const __m512 t = _mm512_mul_ps(v[h], vid);
        const __m512 r = _mm512_roundscale_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        // |t - r| is exact; at one half or more, step away from zero
        const __mmask16 up = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(t, r)), half, _CMP_GE_OQ);
        const __m512 step = _mm512_castsi512_ps(_mm512_or_si512(one, _mm512_and_si512(sign, _mm512_castps_si512(t))));
        q[h] = _mm512_cvttps_epi32(_mm512_mask_add_ps(r, up, r, step));
    }
    _mm_storeu_si128((__m128i *) qs,        _mm512_cvtepi32_epi8(q[0]));
    _mm_storeu_si128((__m128i *) (qs + 16), _mm512_cvtepi32_epi8(q[1]));
    *pd   = d;
    *psum = _mm512_reduce_add_epi32(_mm512_add_epi32(q[0], q[1]));
    return true;
}

#else

static QD_INLINE bool qd_q8_block(const float * x, int8_t * qs, float * pd, int * psum) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 inf  = _mm256_set1_ps(INFINITY);
    __m256 v[4];
    __m256 amaxv = _mm256_setzero_ps();
    int fin = 0xFF;
    for (int h = 0; h < 4; h++) {
        v[h] = _mm256_loadu_ps(x + 8*h);
        const __m256 a = _mm256_andnot_ps(sign, v[h]);
        fin &= _mm256_movemask_ps(_mm256_cmp_ps(a, inf, _CMP_LT_OQ));
        amaxv = _mm256_max_ps(amaxv, a);
    }
    if (fin != 0xFF) {
        return false;
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amaxv), _mm256_extractf128_ps(amaxv, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    if (amax < QD_Q8_MIN_AMAX) {
        return false;
    }
    const float d  = amax / 127.0f;
    const float id = 1.0f / d;
    const __m256 vid  = _mm256_set1_ps(id);
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 one  = _mm256_set1_ps(1.0f);
    __m256i q[4];
    for (int h = 0; h < 4; h++) {
        const __m256 t = _mm256_mul_ps(v[h], vid);
        const __m256 r = _mm256_round_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 up = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(t, r)), half, _CMP_GE_OQ);
        const __m256 step = _mm256_and_ps(up, _mm256_or_ps(one, _mm256_and_ps(sign, t)));
        q[h] = _mm256_cvttps_epi32(_mm256_add_ps(r, step));
    }
    // codes are within [-127, 127]: the saturating packs keep them; the packs
    // interleave 128-bit lanes, the permute restores the order
    const __m256i p01 = _mm256_packs_epi32(q[0], q[1]);
    const __m256i p23 = _mm256_packs_epi32(q[2], q[3]);
    const __m256i p   = _mm256_packs_epi16(p01, p23);
    const __m256i o   = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *) qs, o);
    const __m256i s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(1, 0, 3, 2)));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(2, 3, 0, 1)));
    *pd   = d;
    *psum = _mm_cvtsi128_si32(s4);
    return true;
}

#endif

static void q8_0_quantize__avx2(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK8_0 == 0);
    block_q8_0 * y = (block_q8_0 *) vy;
    for (int64_t i = 0; i < k / QK8_0; i++) {
        float d;
        int sum;
        if (qd_q8_block(x + i*QK8_0, y[i].qs, &d, &sum)) {
            y[i].d = GGML_FP32_TO_FP16(d);
        } else {
            quantize_row_q8_0_ref(x + i*QK8_0, &y[i], QK8_0);
        }
    }
}

static void q8_1_quantize__avx2(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK8_1 == 0);
    block_q8_1 * y = (block_q8_1 *) vy;
    for (int64_t i = 0; i < k / QK8_1; i++) {
        float d;
        int sum;
        if (qd_q8_block(x + i*QK8_1, y[i].qs, &d, &sum)) {
            y[i].d = GGML_FP32_TO_FP16(d);
            y[i].s = GGML_FP32_TO_FP16((float) sum * d);
        } else {
            quantize_row_q8_1_ref(x + i*QK8_1, &y[i], QK8_1);
        }
    }
}

#if defined(GGML_VEC_AVX512)

// One Q8_K block as quantize_row_q8_K_ref makes it: the value of the largest
// magnitude (the first of them) gives iscale = -127/max, the codes are
// iscale*x rounded half to even (the reference's magic-number rounding, exact
// at these magnitudes), at most 127; the group sums of 16 codes are one
// 16-lane sum each. false where the block has a NaN or an infinity (the
// reference's result there depends on its order of comparisons).
static QD_INLINE bool qd_q8_K_block(const float * x, block_q8_K * y) {
    const __m512 inf = _mm512_set1_ps(INFINITY);
    __m512 v[QK_K/16];
    __m512 amaxv = _mm512_setzero_ps();
    __mmask16 fin = 0xFFFF;
    for (int g = 0; g < QK_K/16; g++) {
        v[g] = _mm512_loadu_ps(x + 16*g);
        const __m512 a = _mm512_abs_ps(v[g]);
        fin &= _mm512_cmp_ps_mask(a, inf, _CMP_LT_OQ);   // false for a NaN too
        amaxv = _mm512_max_ps(amaxv, a);
    }
    if (fin != 0xFFFF) {
        return false;
    }
    const float amax = _mm512_reduce_max_ps(amaxv);
    if (amax == 0.0f) {
        memset(y, 0, sizeof(*y));
        return true;
    }
    float max = 0.0f;
    for (int g = 0; g < QK_K/16; g++) {
        const __mmask16 at = _mm512_cmp_ps_mask(_mm512_abs_ps(v[g]), _mm512_set1_ps(amax), _CMP_EQ_OQ);
        if (at != 0) {
            max = x[16*g + __builtin_ctz((unsigned) at)];
            break;
        }
    }
    const float iscale = -127.0f/max;
    if (!isfinite(iscale)) { // |max| so small that its reciprocal overflows
        return false;
    }
    const __m512 vis = _mm512_set1_ps(iscale);
    for (int g = 0; g < QK_K/16; g++) {
        const __m512  t = _mm512_roundscale_ps(_mm512_mul_ps(vis, v[g]), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __m512i q = _mm512_min_epi32(_mm512_cvtps_epi32(t), _mm512_set1_epi32(127));
        _mm_storeu_si128((__m128i *)(y->qs + 16*g), _mm512_cvtepi32_epi8(q));
        y->bsums[g] = (int16_t) _mm512_reduce_add_epi32(q);
    }
    y->d = 1.0f/iscale;
    return true;
}

#else

// One Q8_K block as quantize_row_q8_K_ref makes it (the AVX-512 version above
// says how) in 256-bit steps: the 256 values read twice, from L1 the second
// time (32 vectors do not stay in 16 registers).
static QD_INLINE bool qd_q8_K_block(const float * x, block_q8_K * y) {
    const __m256 absm = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256 inf  = _mm256_set1_ps(INFINITY);
    __m256 amaxv = _mm256_setzero_ps();
    __m256 fin   = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
    for (int i = 0; i < QK_K; i += 8) {
        const __m256 a = _mm256_and_ps(_mm256_loadu_ps(x + i), absm);
        fin   = _mm256_and_ps(fin, _mm256_cmp_ps(a, inf, _CMP_LT_OQ));   // false for a NaN too
        amaxv = _mm256_max_ps(amaxv, a);
    }
    if (_mm256_movemask_ps(fin) != 0xFF) {
        return false;
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amaxv), _mm256_extractf128_ps(amaxv, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    if (amax == 0.0f) {
        memset(y, 0, sizeof(*y));
        return true;
    }
    float max = 0.0f;
    for (int i = 0; i < QK_K; i += 8) {
        const int at = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + i), absm), _mm256_set1_ps(amax), _CMP_EQ_OQ));
        if (at != 0) {
            max = x[i + __builtin_ctz((unsigned) at)];
            break;
        }
    }
    const float iscale = -127.0f/max;
    if (!isfinite(iscale)) { // |max| so small that its reciprocal overflows
        return false;
    }
    const __m256  vis = _mm256_set1_ps(iscale);
    const __m256i top = _mm256_set1_epi32(127);
    for (int g = 0; g < QK_K/16; g++) {
        __m256i q[2];
        for (int h = 0; h < 2; h++) {
            const __m256 t = _mm256_round_ps(_mm256_mul_ps(vis, _mm256_loadu_ps(x + 16*g + 8*h)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            q[h] = _mm256_min_epi32(_mm256_cvtps_epi32(t), top);
        }
        // int32 lanes 0..15 to bytes: the packs work within 128-bit halves
        const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), _MM_SHUFFLE(3, 1, 2, 0));
        const __m128i b8  = _mm_packs_epi16(_mm256_castsi256_si128(w16), _mm256_extracti128_si256(w16, 1));
        _mm_storeu_si128((__m128i *)(y->qs + 16*g), b8);
        __m256i s = _mm256_add_epi32(q[0], q[1]);
        __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(1, 0, 3, 2)));
        s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(2, 3, 0, 1)));
        y->bsums[g] = (int16_t) _mm_cvtsi128_si32(s4);
    }
    y->d = 1.0f/iscale;
    return true;
}

#endif

static void q8_K_quantize__avx2(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    block_q8_K * y = (block_q8_K *) vy;
    for (int64_t i = 0; i < k / QK_K; i++) {
        if (!qd_q8_K_block(x + i*QK_K, &y[i])) {
            quantize_row_q8_K_ref(x + i*QK_K, &y[i], QK_K);
        }
    }
}

//
// quantized rows . Q8 rows (256-bit blocks)
//

// columns a step meets at once (the accumulators must fit in registers)
#if defined(GGML_VEC_AVX512)
#define QD_QCOLS 4
#else
#define QD_QCOLS 2
#endif

#if defined(QD_SIMD512)

// The 512-bit loop takes two blocks b, b + 1 per register. Nibble codes are
// arranged [low nibbles of b | of b + 1 | high nibbles of b | of b + 1] (128
// bits each: one shift and one mask make them) and the activations are put
// in that order once per column; Q8_0 keeps the natural order. The int32
// lanes of a product then belong to the blocks as qd_pair_scales lays out
// the scales.

// the two halves broadcast to the lanes of their blocks: [d0 x4, d1 x4,
// d0 x4, d1 x4] for the nibble order, [d0 x8, d1 x8] for the natural one
static QD_INLINE __m512 qd_pair_scales(const ggml_half * d0, const ggml_half * d1, const bool nibbles) {
    const __m128i h0 = _mm_set1_epi16((short) *d0);
    const __m128i h1 = _mm_set1_epi16((short) *d1);
    const __m256i h  = nibbles ? _mm256_broadcastsi128_si256(_mm_unpacklo_epi64(h0, h1))
                               : _mm256_inserti128_si256(_mm256_castsi128_si256(h0), h1, 1);
    return _mm512_cvtph_ps(h);
}

// 32 bytes at p0 and at p1 in one register, in the nibble order if asked
static QD_INLINE __m512i qd_pair_bytes(const void * p0, const void * p1, const bool nibbles) {
    const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) p0)),
                                         _mm256_loadu_si256((const __m256i *) p1), 1);
    return nibbles ? _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(3, 1, 2, 0)) : v;
}

// two blocks' scales as floats in lanes 0 and 1 (joined in a general
// register: one move and one conversion on the vector side)
static QD_INLINE __m128 qd_pair_d(ggml_half d0, ggml_half d1) {
    return _mm_cvtph_ps(_mm_cvtsi32_si128((int) ((uint32_t) d0 | (uint32_t) d1 << 16)));
}

// the nibble codes of two blocks, in the nibble order
static QD_INLINE __m512i qd_pair_nibbles(const uint8_t * q0, const uint8_t * q1) {
    const __m256i t = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) q0)),
                                              _mm_loadu_si128((const __m128i *) q1), 1);
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(t), _mm256_srli_epi16(t, 4), 1);
    return _mm512_and_si512(z, _mm512_set1_epi8(0x0F));
}

// the fifth bits of two Q5 blocks, in the nibble order
static QD_INLINE __m512i qd_pair_fifth_bits(const uint8_t * qh0, const uint8_t * qh1) {
    const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(qd_unpack_fifth_bits(qh0)), qd_unpack_fifth_bits(qh1), 1);
    return _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(3, 1, 2, 0));
}

#if defined(__AVX512VBMI__)
// Q4_0 with byte permutes: one 64-byte load takes two blocks (36 bytes) and
// one vpermb puts their codes in the lane order [b dword 0, b + 1 dword 0,
// b dword 1, ...], low nibbles in the lower half and high nibbles in the upper
// one after a shift of that half, so that the int32 lanes alternate between
// the blocks: the scales are then one more vpermb of the same load ([d0, d1]
// repeated) and one conversion, instead of two broadcasts, an unpack and a
// broadcast (which cost as much as the rest of the step).
#define QD_Q4_0_VBMI 1

// source byte of output byte k of the codes: lane i (of 8, both halves the
// same bytes) is dword i / 2 of block i % 2, whose codes start at byte 2
static const _Alignas(64) uint8_t qd_q4_0_code_index[64] = {
     2,  3,  4,  5, 20, 21, 22, 23,  6,  7,  8,  9, 24, 25, 26, 27,
    10, 11, 12, 13, 28, 29, 30, 31, 14, 15, 16, 17, 32, 33, 34, 35,
     2,  3,  4,  5, 20, 21, 22, 23,  6,  7,  8,  9, 24, 25, 26, 27,
    10, 11, 12, 13, 28, 29, 30, 31, 14, 15, 16, 17, 32, 33, 34, 35,
};

// source byte of output byte k of the scales: the halves d0, d1 alternating
static const _Alignas(64) uint8_t qd_q4_0_scale_index[64] = {
     0,  1, 18, 19,  0,  1, 18, 19,  0,  1, 18, 19,  0,  1, 18, 19,
     0,  1, 18, 19,  0,  1, 18, 19,  0,  1, 18, 19,  0,  1, 18, 19,
     0,  1, 18, 19,  0,  1, 18, 19,  0,  1, 18, 19,  0,  1, 18, 19,
     0,  1, 18, 19,  0,  1, 18, 19,  0,  1, 18, 19,  0,  1, 18, 19,
};

// source byte of output byte k of a column's two Q8_0 blocks' values (loaded
// as [qs of b | qs of b + 1]) in the codes' lane order: lanes 8..15 the
// values 16..31 of the blocks, for the high nibbles
static const _Alignas(64) uint8_t qd_q4_0_act_index[64] = {
     0,  1,  2,  3, 32, 33, 34, 35,  4,  5,  6,  7, 36, 37, 38, 39,
     8,  9, 10, 11, 40, 41, 42, 43, 12, 13, 14, 15, 44, 45, 46, 47,
    16, 17, 18, 19, 48, 49, 50, 51, 20, 21, 22, 23, 52, 53, 54, 55,
    24, 25, 26, 27, 56, 57, 58, 59, 28, 29, 30, 31, 60, 61, 62, 63,
};

// The 64 bytes loaded: from the pair on, or, for the last pairs of a row
// (where they would run past it), the 64 ending with the pair, the indices
// moved by 28; a row of fewer than 4 blocks is loaded with a mask (masked
// loads are slow on AMD's cores once the data is out of the caches).
static QD_INLINE void qd_q4_0_pair_vbmi(const char * blk, int64_t b0, int64_t nb, __m512i code_idx, __m512i scale_idx,
                                       __m512i * u, __m512 * dx) {
    __m512i v;
    if (b0 + 4 <= nb) {
        v = _mm512_loadu_si512(blk);
    } else if (b0 >= 2) {
        v = _mm512_loadu_si512(blk - 28);
        code_idx  = _mm512_add_epi8(code_idx, _mm512_set1_epi8(28));
        scale_idx = _mm512_add_epi8(scale_idx, _mm512_set1_epi8(28));
    } else {
        v = _mm512_maskz_loadu_epi8((__mmask64) ((1ull << 36) - 1), blk);
    }
    const __m512i t = _mm512_permutexvar_epi8(code_idx, v);
#if defined(__GFNI__)
    // the low nibbles of the lower half and the high nibbles of the upper one
    // in one affine byte transform: each 64-bit lane has its own bit matrix
    // (row 7 - i of a matrix picks the source bit of result bit i)
    const long long lo = 0x0102040800000000ll, hi = (long long) 0x1020408000000000ull;
    *u  = _mm512_gf2p8affine_epi64_epi8(t, _mm512_set_epi64(hi, hi, hi, hi, lo, lo, lo, lo), 0);
#else
    *u  = _mm512_and_si512(_mm512_mask_srli_epi16(t, (__mmask32) 0xFFFF0000u, t, 4), _mm512_set1_epi8(0x0F));
#endif
    *dx = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi8(scale_idx, v)));
}

static QD_INLINE void qd_q4_0_act_pair_vbmi(const block_q8_0 * yb, __m512i act_idx, __m512i * yq, __m512 * dy) {
    const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) yb[0].qs)),
                                         _mm256_loadu_si256((const __m256i *) yb[1].qs), 1);
    *yq = _mm512_permutexvar_epi8(act_idx, v);
    uint16_t d0, d1;
    memcpy(&d0, &yb[0].d, sizeof(d0));
    memcpy(&d1, &yb[1].d, sizeof(d1));
    *dy = _mm512_cvtph_ps(_mm256_set1_epi32((int) ((uint32_t) d0 | (uint32_t) d1 << 16)));
}
#endif

#endif

#if !defined(QD_SIMD512)

// The 256-bit loop over pairs of blocks b, b + 1 (the nibble types): one
// register holds the 16 code bytes of both blocks, [b | b + 1], so that a
// mask and a shift give the low nibbles (values 0-15 of both blocks) and the
// high ones (values 16-31); the activations are put in the same order once per
// pair for all the rows. Int32 lanes 0-3 of a product are then block b's, 4-7
// block b + 1's, and one conversion, one multiply and one FMA scale both
// blocks. The one-block loop below spends those on each block: for Q4_0 it
// issues 14 vector instructions a block and row where the pair issues 8, and
// on a Zen 3 core it was bound by them, not by the memory (one thread, the
// weights in L2, best of repeated runs: 1.70 -> 1.23 ns a block; Q4_1 1.99
// -> 1.25, Q5_0 2.25 -> 1.99, Q5_1 2.55 -> 1.89).

// acc + the products of two byte pairs, u0*s0 + u1*s1, summed by 4 adjacent
// bytes per int32 lane; u <= 31 and |s| <= 127 keep the 16-bit sums of the
// non-VNNI path below 2^15 (4 products of at most 31*127)
static QD_INLINE __m256i qd_dot2_u8s8(__m256i acc, __m256i u0, __m256i s0, __m256i u1, __m256i s1) {
#if defined(QD_VNNI256)
    return qd_dot_u8s8(qd_dot_u8s8(acc, u0, s0), u1, s1);
#else
    const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(u0, s0), _mm256_maddubs_epi16(u1, s1));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
#endif
}

// the fifth bits of a pair of Q5 blocks for the low nibbles (values 0-15 of
// both) and for the high ones: 0x10 in byte j of a half where bit j (or
// 16 + j) of that block's qh is set
static QD_INLINE void qd_pair_fifth_bits2(const uint8_t * qh0, const uint8_t * qh1, __m256i * lo, __m256i * hi) {
    uint32_t b0, b1;
    memcpy(&b0, qh0, sizeof(b0));
    memcpy(&b1, qh1, sizeof(b1));
    // the 64 bits [b0, b1] in every quadword (joined in a general register:
    // one move and one broadcast on the vector side); the lower half of the
    // register takes its bytes from b0, the upper one from b1
    const __m256i b = _mm256_set1_epi64x((long long) ((uint64_t) b0 | (uint64_t) b1 << 32));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    const __m256i sel_lo = _mm256_shuffle_epi8(b, _mm256_setr_epi8(
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
        4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5));
    const __m256i sel_hi = _mm256_shuffle_epi8(b, _mm256_setr_epi8(
        2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
        6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7));
    const __m256i x10 = _mm256_set1_epi8(0x10);
    *lo = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(sel_lo, bit), bit), x10);
    *hi = _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(sel_hi, bit), bit), x10);
}

// the halves at p0 and p1 (a block's d, or its d and m: n = 1 or 2) as
// floats [p0[0], p0[1]?, p1[0], p1[1]?] in the lowest lanes
static QD_INLINE __m128 qd_pair_h2f(const ggml_half * p0, const ggml_half * p1, const int n) {
    if (n == 1) {
        const uint32_t v = (uint32_t) p0[0] | (uint32_t) p1[0] << 16;
        return _mm_cvtph_ps(_mm_cvtsi32_si128((int) v));
    }
    uint32_t v0, v1;
    memcpy(&v0, p0, sizeof(v0));
    memcpy(&v1, p1, sizeof(v1));
    return _mm_cvtph_ps(_mm_cvtsi64_si128((long long) ((uint64_t) v0 | (uint64_t) v1 << 32)));
}

#endif

// One step: R rows (R <= 4), x + r*xs, . C columns y[c] (C <= QD_QCOLS) into
// s[c][i0 + r*is]. Each weight block is decoded once for the C columns. Each
// result is formed by the same operations whatever R and C are.
static QD_INLINE void qd_rows_step(enum ggml_type type, const int R, const int C, int64_t nb,
                                   const char * x, size_t xs, const char * const * y,
                                   float * const * s, int64_t i0, int64_t is) {
    const size_t ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    const size_t bsx = qd_block_size(type);
    const bool affine = qd_is_affine(type);
    const int  offset = type == GGML_TYPE_Q4_0 ? 8 : type == GGML_TYPE_Q5_0 ? 16 : 0;

    __m256 acc[4][QD_QCOLS];
    float  macc[4][QD_QCOLS];
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            acc[r][c]  = _mm256_setzero_ps();
            macc[r][c] = 0.0f;
        }
    }

    int64_t b0 = 0;
#if defined(QD_SIMD512)
    // Q8_0 with VNNI: the codes as unsigned bytes x + 128 (one xor), the
    // offset 128 taken off as for Q4_0; without VNNI |x| and y with x's sign
    const bool nib   = type != GGML_TYPE_Q8_0;
#if defined(__AVX512VNNI__)
    const int  off2  = type == GGML_TYPE_Q8_0 ? 128 : offset;
#else
    const int  off2  = offset;
#endif
    const size_t bsy = affine ? sizeof(block_q8_1) : sizeof(block_q8_0);
    __m512 acc2[4][QD_QCOLS];
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            acc2[r][c] = _mm512_setzero_ps();
        }
    }
#if defined(QD_Q4_0_VBMI)
    const __m512i code_idx  = _mm512_load_si512(qd_q4_0_code_index);
    const __m512i scale_idx = _mm512_load_si512(qd_q4_0_scale_index);
    const __m512i act_idx   = _mm512_load_si512(qd_q4_0_act_index);
#endif
    // the lanes of a product's blocks (qd_pair_scales' layouts): [0 x4, 1 x4,
    // 0 x4, 1 x4] in the nibble order, [0 x8, 1 x8] in the natural one; two
    // scales spread by one permute cost a Q8_0 row pair fewer shuffles than
    // broadcasting them (one core, weights in L2: 0.857 -> 0.740 ns per 32
    // weights on the Zen 4 host)
    const __m512i scale_lanes = nib ? _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1)
                                    : _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
#if defined(QD_Q4_0_VBMI)
    const bool vbmi_q4_0 = type == GGML_TYPE_Q4_0;
#else
    const bool vbmi_q4_0 = false;
#endif
    for (; b0 + 2 <= nb; b0 += 2) {
        __m512i yq[QD_QCOLS], base[QD_QCOLS];
        __m512  dy[QD_QCOLS];
        __m128  dy2[QD_QCOLS]; // the two blocks' scales in lanes 0 and 1 (but Q4_0 with VBMI: dy)
        float   sy[QD_QCOLS][2];
        for (int c = 0; c < C; c++) {
            const char * yb = y[c] + b0*bsy;
            if (affine) {
                const block_q8_1 * y0 = (const block_q8_1 *) yb;
                yq[c]    = qd_pair_bytes(y0[0].qs, y0[1].qs, nib);
                dy2[c]   = qd_pair_d(y0[0].d, y0[1].d);
                sy[c][0] = qd_h2f(y0[0].s);
                sy[c][1] = qd_h2f(y0[1].s);
            } else {
                const block_q8_0 * y0 = (const block_q8_0 *) yb;
#if defined(QD_Q4_0_VBMI)
                if (type == GGML_TYPE_Q4_0) {
                    qd_q4_0_act_pair_vbmi(y0, act_idx, &yq[c], &dy[c]);
                } else
#endif
                {
                    yq[c]  = qd_pair_bytes(y0[0].qs, y0[1].qs, nib);
                    dy2[c] = qd_pair_d(y0[0].d, y0[1].d);
                }
            }
            base[c] = _mm512_setzero_si512();
            if (off2 != 0) {
                base[c] = _mm512_sub_epi32(base[c], qd_dot_u8s8_512(_mm512_setzero_si512(), _mm512_set1_epi8((char) off2), yq[c]));
            }
        }
        for (int r = 0; r < R; r++) {
            const char * blk = x + r*xs + b0*bsx;
            ggml_cpu_stream_prefetch(blk, 2*bsx, ahead);
            __m512i u;
            __m512  dx  = _mm512_setzero_ps(); // Q4_0 (VBMI): the scales in the lanes of their blocks
            __m128  dx2 = _mm_setzero_ps();    // the others: the two blocks' scales in lanes 0 and 1
            float   mx[2] = { 0.0f, 0.0f };
#if !defined(__AVX512VNNI__)
            __mmask64 neg = 0; // Q8_0: the lanes where x < 0
#endif
            switch (type) {
                case GGML_TYPE_Q4_0: {
#if defined(QD_Q4_0_VBMI)
                    qd_q4_0_pair_vbmi(blk, b0, nb, code_idx, scale_idx, &u, &dx);
#else
                    const block_q4_0 * xb = (const block_q4_0 *) blk;
                    u   = qd_pair_nibbles(xb[0].qs, xb[1].qs);
                    dx2 = qd_pair_d(xb[0].d, xb[1].d);
#endif
                } break;
                case GGML_TYPE_Q4_1: {
                    const block_q4_1 * xb = (const block_q4_1 *) blk;
                    u   = qd_pair_nibbles(xb[0].qs, xb[1].qs);
                    dx2 = qd_pair_d(xb[0].d, xb[1].d);
                    mx[0] = qd_h2f(xb[0].m);
                    mx[1] = qd_h2f(xb[1].m);
                } break;
                case GGML_TYPE_Q5_0: {
                    const block_q5_0 * xb = (const block_q5_0 *) blk;
                    u   = _mm512_or_si512(qd_pair_nibbles(xb[0].qs, xb[1].qs), qd_pair_fifth_bits(xb[0].qh, xb[1].qh));
                    dx2 = qd_pair_d(xb[0].d, xb[1].d);
                } break;
                case GGML_TYPE_Q5_1: {
                    const block_q5_1 * xb = (const block_q5_1 *) blk;
                    u   = _mm512_or_si512(qd_pair_nibbles(xb[0].qs, xb[1].qs), qd_pair_fifth_bits(xb[0].qh, xb[1].qh));
                    dx2 = qd_pair_d(xb[0].d, xb[1].d);
                    mx[0] = qd_h2f(xb[0].m);
                    mx[1] = qd_h2f(xb[1].m);
                } break;
                default: { // GGML_TYPE_Q8_0
                    const block_q8_0 * xb = (const block_q8_0 *) blk;
                    const __m512i v = qd_pair_bytes(xb[0].qs, xb[1].qs, false);
                    dx2 = qd_pair_d(xb[0].d, xb[1].d);
#if defined(__AVX512VNNI__)
                    u = _mm512_xor_si512(v, _mm512_set1_epi8((char) 0x80));
#else
                    u   = _mm512_abs_epi8(v);
                    neg = _mm512_movepi8_mask(v);
#endif
                } break;
            }
            for (int c = 0; c < C; c++) {
#if defined(__AVX512VNNI__)
                const __m512i ys   = yq[c];
#else
                const __m512i ys   = type == GGML_TYPE_Q8_0 ? _mm512_mask_sub_epi8(yq[c], neg, _mm512_setzero_si512(), yq[c]) : yq[c];
#endif
                const __m512i isum = qd_dot_u8s8_512(base[c], u, ys);
                // the two products d_x d_y in lanes 0 and 1, spread to the
                // lanes of their blocks by one permute (Q4_0 with VBMI: its
                // scales come laid out, and are multiplied so)
                const __m512 scale = vbmi_q4_0 ? _mm512_mul_ps(dx, dy[c])
                    : _mm512_permutexvar_ps(scale_lanes, _mm512_castps128_ps512(_mm_mul_ps(dx2, dy2[c])));
                acc2[r][c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), scale, acc2[r][c]);
                if (affine) {
                    macc[r][c] += mx[0]*sy[c][0] + mx[1]*sy[c][1];
                }
            }
        }
    }
#endif
#if !defined(QD_SIMD512)
    // pairs of blocks (the nibble types): the lanes of a step's scales are
    // [block b x4 | block b + 1 x4]; the minima's terms of the affine types
    // are lanes 1 and 3 of a 4-lane sum (m . s of each block)
    __m128 macc4[4][QD_QCOLS];
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            macc4[r][c] = _mm_setzero_ps();
        }
    }
    if (type != GGML_TYPE_Q8_0) {
        const bool q5 = type == GGML_TYPE_Q5_0 || type == GGML_TYPE_Q5_1;
        const __m256i m4   = _mm256_set1_epi8(0x0F);
        const __m256i dup  = affine ? _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2) : _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
        const size_t  bsy  = affine ? sizeof(block_q8_1) : sizeof(block_q8_0);
        for (; b0 + 2 <= nb; b0 += 2) {
            __m256i ylo[QD_QCOLS], yhi[QD_QCOLS], base[QD_QCOLS];
            __m256  dy[QD_QCOLS];
            __m128  sw[QD_QCOLS];
            for (int c = 0; c < C; c++) {
                // the q8_0 and q8_1 blocks both start with d; their codes
                // follow d (q8_0) or d and s (q8_1)
                const char * y0 = y[c] + b0*bsy;
                const char * y1 = y0 + bsy;
                const size_t oq = affine ? offsetof(block_q8_1, qs) : offsetof(block_q8_0, qs);
                ylo[c] = qd_load_halves(y0 + oq,      y1 + oq);
                yhi[c] = qd_load_halves(y0 + oq + 16, y1 + oq + 16);
                const __m128 d4 = qd_pair_h2f((const ggml_half *) y0, (const ggml_half *) y1, affine ? 2 : 1);
                dy[c] = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(d4), dup);
                // [0, s0, 0, s1]: the lanes of the weights' minima
                sw[c] = _mm_and_ps(d4, _mm_castsi128_ps(_mm_setr_epi32(0, -1, 0, -1)));
                base[c] = _mm256_setzero_si256();
                if (offset != 0) {
                    const __m256i o = _mm256_set1_epi8((char) offset);
                    base[c] = _mm256_sub_epi32(base[c], qd_dot2_u8s8(_mm256_setzero_si256(), o, ylo[c], o, yhi[c]));
                }
            }
            for (int r = 0; r < R; r++) {
                const char * blk0 = x + r*xs + b0*bsx;
                const char * blk1 = blk0 + bsx;
                ggml_cpu_stream_prefetch(blk0, 2*bsx, ahead);
                // every weight block starts with d (and m for the affine
                // types); the codes are the last 16 bytes, after the fifth
                // bits of Q5
                const __m256i q  = qd_load_halves(blk0 + bsx - 16, blk1 + bsx - 16);
                __m256i lo = _mm256_and_si256(q, m4);
                __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
                if (q5) {
                    __m256i flo, fhi;
                    qd_pair_fifth_bits2((const uint8_t *) blk0 + bsx - 20, (const uint8_t *) blk1 + bsx - 20, &flo, &fhi);
                    lo = _mm256_or_si256(lo, flo);
                    hi = _mm256_or_si256(hi, fhi);
                }
                const __m128 d4 = qd_pair_h2f((const ggml_half *) blk0, (const ggml_half *) blk1, affine ? 2 : 1);
                const __m256 dx = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(d4), dup);
                for (int c = 0; c < C; c++) {
                    const __m256i isum = qd_dot2_u8s8(base[c], lo, ylo[c], hi, yhi[c]);
                    acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(dx, dy[c]), acc[r][c]);
                    if (affine) {
                        macc4[r][c] = _mm_fmadd_ps(d4, sw[c], macc4[r][c]);
                    }
                }
            }
        }
    }
#endif
    for (int64_t b = b0; b < nb; b++) {
        __m256i yq[QD_QCOLS], base[QD_QCOLS];
        float   dy[QD_QCOLS], sy[QD_QCOLS];
        for (int c = 0; c < C; c++) {
            if (affine) {
                const block_q8_1 * yb = (const block_q8_1 *) y[c] + b;
                yq[c] = _mm256_loadu_si256((const __m256i *) yb->qs);
                dy[c] = qd_h2f(yb->d);
                sy[c] = qd_h2f(yb->s);
            } else {
                const block_q8_0 * yb = (const block_q8_0 *) y[c] + b;
                yq[c] = _mm256_loadu_si256((const __m256i *) yb->qs);
                dy[c] = qd_h2f(yb->d);
                sy[c] = 0.0f;
            }
            // -o * (partial sums of y), the starting value of the integer sums
            base[c] = _mm256_setzero_si256();
            if (offset != 0) {
                base[c] = _mm256_sub_epi32(base[c], qd_dot_u8s8(_mm256_setzero_si256(), _mm256_set1_epi8((char) offset), yq[c]));
            }
        }
        for (int r = 0; r < R; r++) {
            const char * blk = x + r*xs + b*bsx;
            ggml_cpu_stream_prefetch(blk, bsx, ahead);
            __m256i u;   // unsigned codes, or the signed Q8_0 values
            float dx, mx = 0.0f;
            switch (type) {
                case GGML_TYPE_Q4_0: {
                    const block_q4_0 * xb = (const block_q4_0 *) blk;
                    u  = qd_unpack_nibbles(xb->qs);
                    dx = qd_h2f(xb->d);
                } break;
                case GGML_TYPE_Q4_1: {
                    const block_q4_1 * xb = (const block_q4_1 *) blk;
                    u  = qd_unpack_nibbles(xb->qs);
                    dx = qd_h2f(xb->d);
                    mx = qd_h2f(xb->m);
                } break;
                case GGML_TYPE_Q5_0: {
                    const block_q5_0 * xb = (const block_q5_0 *) blk;
                    u  = _mm256_or_si256(qd_unpack_nibbles(xb->qs), qd_unpack_fifth_bits(xb->qh));
                    dx = qd_h2f(xb->d);
                } break;
                case GGML_TYPE_Q5_1: {
                    const block_q5_1 * xb = (const block_q5_1 *) blk;
                    u  = _mm256_or_si256(qd_unpack_nibbles(xb->qs), qd_unpack_fifth_bits(xb->qh));
                    dx = qd_h2f(xb->d);
                    mx = qd_h2f(xb->m);
                } break;
                default: { // GGML_TYPE_Q8_0
                    const block_q8_0 * xb = (const block_q8_0 *) blk;
                    u  = _mm256_loadu_si256((const __m256i *) xb->qs);
                    dx = qd_h2f(xb->d);
                } break;
            }
            for (int c = 0; c < C; c++) {
                const __m256i isum = type == GGML_TYPE_Q8_0
                    ? qd_dot_u8s8(base[c], _mm256_sign_epi8(u, u), _mm256_sign_epi8(yq[c], u))
                    : qd_dot_u8s8(base[c], u, yq[c]);
                acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(dx*dy[c]), acc[r][c]);
                if (affine) {
                    macc[r][c] += mx*sy[c];
                }
            }
        }
    }
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
#if defined(QD_SIMD512)
            s[c][i0 + r*is] = _mm512_reduce_add_ps(acc2[r][c]) + qd_hsum256(acc[r][c]) + macc[r][c];
#else
            const __m128 m2 = _mm_add_ps(macc4[r][c], _mm_movehl_ps(macc4[r][c], macc4[r][c]));
            s[c][i0 + r*is] = qd_hsum256(acc[r][c]) + (_mm_cvtss_f32(_mm_movehdup_ps(m2)) + macc[r][c]);
#endif
        }
    }
}

// C columns: the four rows of a step come from four quarters of the block, so
// that each is one long sequential stream (the prefetchers follow long
// streams; four short ones that restart at every row they do not)
static QD_INLINE void qd_rows_cols(enum ggml_type type, const int C, int64_t n, const char * x, size_t bx,
                                   int64_t nr, const char * const * y, float * const * s) {
    const int64_t nb = n / 32;
    const int64_t q  = nr / 4;
    for (int64_t r = 0; r < q; r++) {
        qd_rows_step(type, 4, C, nb, x + r*bx, q*bx, y, s, r, q);
    }
    for (int64_t r = 4*q; r < nr; r++) {
        qd_rows_step(type, 1, C, nb, x + r*bx, bx, y, s, r, 0);
    }
}

static QD_INLINE void qd_rows_simd(enum ggml_type type, int64_t n, const void * x, size_t bx, int64_t nr,
                                   const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c0 = 0; c0 < nc; c0 += QD_QCOLS) {
        const char * const * yc = (const char * const *) y + c0;
        switch (MIN(QD_QCOLS, nc - c0)) {
            case 1:  qd_rows_cols(type, 1, n, (const char *) x, bx, nr, yc, s + c0); break;
#if QD_QCOLS > 2
            case 3:  qd_rows_cols(type, 3, n, (const char *) x, bx, nr, yc, s + c0); break;
            case 4:  qd_rows_cols(type, 4, n, (const char *) x, bx, nr, yc, s + c0); break;
#endif
            default: qd_rows_cols(type, 2, n, (const char *) x, bx, nr, yc, s + c0); break;
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(q4_0_dot__avx2, qd_rows_simd, GGML_TYPE_Q4_0)
GGML_CPU_DEFINE_DOT_ROWS(q4_1_dot__avx2, qd_rows_simd, GGML_TYPE_Q4_1)
GGML_CPU_DEFINE_DOT_ROWS(q5_0_dot__avx2, qd_rows_simd, GGML_TYPE_Q5_0)
GGML_CPU_DEFINE_DOT_ROWS(q5_1_dot__avx2, qd_rows_simd, GGML_TYPE_Q5_1)
GGML_CPU_DEFINE_DOT_ROWS(q8_0_dot__avx2, qd_rows_simd, GGML_TYPE_Q8_0)

void ggml_cpu_add_kernels_x86_quants_dot(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q4_0, dot_rows, q4_0_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q4_1, dot_rows, q4_1_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q5_0, dot_rows, q5_0_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q5_1, dot_rows, q5_1_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q8_0, dot_rows, q8_0_dot__avx2, GGML_CPU_ISA_TAG);
    cfg->act_fast[GGML_TYPE_Q8_0]     = q8_0_quantize__avx2;
    cfg->act_fast[GGML_TYPE_Q8_1]     = q8_1_quantize__avx2;
    cfg->act_fast_isa[GGML_TYPE_Q8_0] = GGML_CPU_ISA_TAG;
    cfg->act_fast_isa[GGML_TYPE_Q8_1] = GGML_CPU_ISA_TAG;
    cfg->act_fast[GGML_TYPE_Q8_K]     = q8_K_quantize__avx2;
    cfg->act_fast_isa[GGML_TYPE_Q8_K] = GGML_CPU_ISA_TAG;
}

#else

void ggml_cpu_add_kernels_x86_quants_dot(struct ggml_cpu_kernel_config * cfg) {
    GGML_UNUSED(cfg);
}

#endif // QD_SIMD
