#pragma once

//
// quants-simd.h: block-level helpers shared by the quantized kernels
// (quants-dot*.c, gemm-q8.c): decoding the codes of a weight block, the
// portable dot_rows loop over a row dot, and the 256-bit unsigned x signed
// byte products.
//

#include "simd/vec.h"
#include "ggml-common.h"

#if defined(__GNUC__)
#define QD_INLINE inline __attribute__((always_inline))
#else
#define QD_INLINE inline
#endif

// the 256-bit block kernels need AVX2 and F16C; both vector builds have them
#if (defined(GGML_VEC_AVX512) || defined(GGML_VEC_AVX2)) && defined(__AVX2__) && defined(__F16C__)
#define QD_SIMD 1
#endif

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define QD_VNNI256 1
#elif defined(__AVXVNNI__)
#define QD_VNNI256 1
#define QD_VNNI256_AVX 1
#endif

// the codes of a weight block as values q - o (or q for the affine types),
// with the block's scale d and minimum m (0 for the symmetric types)
static QD_INLINE void qd_block_codes_ref(enum ggml_type type, const void * blk, int * v, float * d, float * m) {
    switch (type) {
        case GGML_TYPE_Q4_0: {
            const block_q4_0 * b = (const block_q4_0 *) blk;
            for (int j = 0; j < 16; j++) {
                v[j]      = (b->qs[j] & 0x0F) - 8;
                v[j + 16] = (b->qs[j] >>   4) - 8;
            }
            *d = GGML_FP16_TO_FP32(b->d);
            *m = 0.0f;
        } break;
        case GGML_TYPE_Q4_1: {
            const block_q4_1 * b = (const block_q4_1 *) blk;
            for (int j = 0; j < 16; j++) {
                v[j]      = b->qs[j] & 0x0F;
                v[j + 16] = b->qs[j] >>   4;
            }
            *d = GGML_FP16_TO_FP32(b->d);
            *m = GGML_FP16_TO_FP32(b->m);
        } break;
        case GGML_TYPE_Q5_0: {
            const block_q5_0 * b = (const block_q5_0 *) blk;
            uint32_t qh;
            memcpy(&qh, b->qh, sizeof(qh));
            for (int j = 0; j < 16; j++) {
                v[j]      = ((b->qs[j] & 0x0F) | (int)(((qh >>  j      ) & 1u) << 4)) - 16;
                v[j + 16] = ((b->qs[j] >>   4) | (int)(((qh >> (j + 16)) & 1u) << 4)) - 16;
            }
            *d = GGML_FP16_TO_FP32(b->d);
            *m = 0.0f;
        } break;
        case GGML_TYPE_Q5_1: {
            const block_q5_1 * b = (const block_q5_1 *) blk;
            uint32_t qh;
            memcpy(&qh, b->qh, sizeof(qh));
            for (int j = 0; j < 16; j++) {
                v[j]      = (b->qs[j] & 0x0F) | (int)(((qh >>  j      ) & 1u) << 4);
                v[j + 16] = (b->qs[j] >>   4) | (int)(((qh >> (j + 16)) & 1u) << 4);
            }
            *d = GGML_FP16_TO_FP32(b->d);
            *m = GGML_FP16_TO_FP32(b->m);
        } break;
        case GGML_TYPE_Q8_0: {
            const block_q8_0 * b = (const block_q8_0 *) blk;
            for (int j = 0; j < 32; j++) {
                v[j] = b->qs[j];
            }
            *d = GGML_FP16_TO_FP32(b->d);
            *m = 0.0f;
        } break;
        default:
            GGML_ABORT("no block codes for type %s", ggml_type_name(type));
    }
}

static QD_INLINE size_t qd_block_size(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_Q4_0: return sizeof(block_q4_0);
        case GGML_TYPE_Q4_1: return sizeof(block_q4_1);
        case GGML_TYPE_Q5_0: return sizeof(block_q5_0);
        case GGML_TYPE_Q5_1: return sizeof(block_q5_1);
        case GGML_TYPE_Q8_0: return sizeof(block_q8_0);
        default:             return 0;
    }
}

static QD_INLINE bool qd_is_affine(enum ggml_type type) {
    return type == GGML_TYPE_Q4_1 || type == GGML_TYPE_Q5_1;
}

// The rows of `type` one row dot at a time, s[c][r] = row(type, n, x + r*bx, y[c]):
// the portable dot_rows kernels whose row dot takes the type and n values
// (GGML_CPU_DEFINE_DOT_ROWS(name, qd_rows_by_row, row, type) specializes it).
static QD_INLINE void qd_rows_by_row(float (*row)(enum ggml_type type, int64_t n, const char * x, const void * y),
                                     enum ggml_type type, int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                     const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        for (int64_t r = 0; r < nr; r++) {
            s[c][r] = row(type, n, (const char *) x + r*bx, y[c]);
        }
    }
}

#if defined(QD_SIMD)

// acc + the sums of 4 adjacent products u*s (u unsigned, s signed bytes) per int32 lane
static QD_INLINE __m256i qd_dot_u8s8(__m256i acc, __m256i u, __m256i s) {
#if defined(QD_VNNI256_AVX)
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#elif defined(QD_VNNI256)
    return _mm256_dpbusd_epi32(acc, u, s);
#else
    // u <= 31 (or |x| <= 128 for Q8_0), |s| <= 127: pair sums stay below 2^15
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
#endif
}

// 16 bytes at p0 (low 128-bit half) and 16 at p1 (high half)
static QD_INLINE __m256i qd_load_halves(const void * p0, const void * p1) {
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) p0)),
                                   _mm_loadu_si128((const __m128i *) p1), 1);
}

// bit `from` of every byte of v moved to bit `to` and kept alone (or 0);
// from and to are constants at the call (the switch folds). The 16-bit shifts
// bring no bit of the other byte there.
static QD_INLINE __m256i qd_move_bit(__m256i v, int from, int to) {
    const __m256i m = _mm256_set1_epi8((char) (1 << to));
    switch (to - from) {
        case  7: return _mm256_and_si256(_mm256_slli_epi16(v, 7), m);
        case  6: return _mm256_and_si256(_mm256_slli_epi16(v, 6), m);
        case  5: return _mm256_and_si256(_mm256_slli_epi16(v, 5), m);
        case  4: return _mm256_and_si256(_mm256_slli_epi16(v, 4), m);
        case  3: return _mm256_and_si256(_mm256_slli_epi16(v, 3), m);
        case  2: return _mm256_and_si256(_mm256_slli_epi16(v, 2), m);
        case  1: return _mm256_and_si256(_mm256_slli_epi16(v, 1), m);
        case  0: return _mm256_and_si256(v, m);
        case -1: return _mm256_and_si256(_mm256_srli_epi16(v, 1), m);
        case -2: return _mm256_and_si256(_mm256_srli_epi16(v, 2), m);
        case -3: return _mm256_and_si256(_mm256_srli_epi16(v, 3), m);
        case -4: return _mm256_and_si256(_mm256_srli_epi16(v, 4), m);
        case -5: return _mm256_and_si256(_mm256_srli_epi16(v, 5), m);
        case -6: return _mm256_and_si256(_mm256_srli_epi16(v, 6), m);
        default: return _mm256_and_si256(_mm256_srli_epi16(v, 7), m);
    }
}

// the 32 nibbles of a Q4 block in value order (low nibbles, then high nibbles)
static QD_INLINE __m256i qd_unpack_nibbles(const uint8_t * qs) {
    const __m128i q = _mm_loadu_si128((const __m128i *) qs);
    const __m256i t = _mm256_inserti128_si256(_mm256_castsi128_si256(q), _mm_srli_epi16(q, 4), 1);
    return _mm256_and_si256(t, _mm256_set1_epi8(0x0F));
}

#if defined(GGML_VEC_AVX512) && defined(__AVX512BW__)
#define QD_SIMD512 1

// the 512-bit qd_dot_u8s8; without VNNI the pair sums of maddubs saturate
// above 2^15 - 1: u <= 128 there (|x| for Q8_0)
static QD_INLINE __m512i qd_dot_u8s8_512(__m512i acc, __m512i u, __m512i s) {
#if defined(__AVX512VNNI__)
    return _mm512_dpbusd_epi32(acc, u, s);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(u, s), _mm512_set1_epi16(1)));
#endif
}
#endif

// the fifth bits of a Q5 block: 0x10 in byte j where bit j of qh is set
static QD_INLINE __m256i qd_unpack_fifth_bits(const uint8_t * qh) {
    uint32_t bits;
    memcpy(&bits, qh, sizeof(bits));
    const __m256i b = _mm256_set1_epi32((int) bits);
    // byte j takes byte j/8 of bits, then keeps bit j%8
    const __m256i sel = _mm256_shuffle_epi8(b, _mm256_setr_epi8(
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
        2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    const __m256i hit = _mm256_cmpeq_epi8(_mm256_and_si256(sel, bit), bit);
    return _mm256_and_si256(hit, _mm256_set1_epi8(0x10));
}

static QD_INLINE float qd_hsum256(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static QD_INLINE float qd_h2f(ggml_half h) {
    return _cvtsh_ss(h);
}

#endif // QD_SIMD
