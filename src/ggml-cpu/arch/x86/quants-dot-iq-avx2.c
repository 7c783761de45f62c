// quants-dot-iq-avx2.c: the AVX2 dot products of the grid types (IQ1_S,
// IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S . Q8_K rows), the ternary
// ones (TQ1_0, TQ2_0 . Q8_K rows) and the small-block ones (Q1_0, Q2_0,
// NVFP4 . Q8_0 rows). The portable forms are in quants-dot-iq.c,
// quants-dot-tq.c and quants-dot-lowbit.c (the layouts in ggml-common.h);
// other builds (and use_ref) take those (kernel-config.h).
//
// Every 32 weight values are decoded into three registers: the magnitudes
// (unsigned bytes: the grid bytes, or |v|), the sign carriers (bytes with the
// sign of each value, never 0 where the magnitude is not) and one int16
// multiplier per 16 values (2s + 1 from the 4- or 3-bit scales; 1 for the
// small-block types). The activation codes take the weights' signs
// (_mm256_sign_epi8), maddubs multiplies unsigned by signed bytes, and the
// madd that widens the pair sums to int32 applies the multipliers. Pair sums
// fit int16: magnitudes are at most 62 (IQ3_XXS) and activation codes at
// most 127. The grid types' integer sum over a block is exact and scaled
// once by the block factor and the activation scale; the small-block types
// scale each 16 values by their float scale times the Q8_0 block's.
//
// IQ1 values are grid values (-1, 0, 1) plus a shift of +-1/8 per 32 (IQ1_S)
// or 8 (IQ1_M) values: they are decoded as the integers 8g +- 1 (|v| <= 9)
// with a block factor d/8, so they fit the same kernel.
//
// Generation (one column) decodes each block in registers next to its use;
// prompts decode a block once into memory and meet up to IQX_COLS columns
// with it (with AVX-512, the grid types 64 values per instruction). Each result is the same sequence of operations whatever nr and
// nc are: a vector accumulation over the blocks, then one horizontal sum.

#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"
#include "../ggml-quants-iq.h"

#if defined(QD_SIMD)

// columns that share one decoded block
#define IQX_COLS 8

// the 32 values of one decoded register triple
struct iqx_chunk {
    __m256i mag;  // |value|
    __m256i sgn;  // sign carriers
    __m256i mul;  // int16 multipliers: lanes 0-7 for values 0-15, 8-15 for values 16-31
};

// byte j = -1 where bit j of bits is set, +1 where not
static QD_INLINE __m256i iqx_signs(uint32_t bits) {
    const __m256i b = _mm256_set1_epi32((int) bits);
    const __m256i sel = _mm256_shuffle_epi8(b, _mm256_setr_epi8(
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
        2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(0x8040201008040201LL);
    const __m256i hit = _mm256_cmpeq_epi8(_mm256_and_si256(sel, bit), bit);
    return _mm256_or_si256(hit, _mm256_set1_epi8(1));
}

// the sign carriers of 8 values from their 7 stored sign bits (the eighth
// sign makes the count of negative values even): byte j = 0xFF (-1) for a
// negative value j, 0x01 otherwise. A table of 128, built by the compiler.
#define IQX_PARITY7(s) (((s) ^ (s) >> 1 ^ (s) >> 2 ^ (s) >> 3 ^ (s) >> 4 ^ (s) >> 5 ^ (s) >> 6) & 1)
#define IQX_SIGN8(s)   ((s) | IQX_PARITY7(s) << 7)
#define IQX_BYTE(s, j) ((uint64_t) ((IQX_SIGN8(s) >> (j)) & 1 ? 0xFF : 0x01) << 8*(j))
#define IQX_E1(s)  (IQX_BYTE(s, 0) | IQX_BYTE(s, 1) | IQX_BYTE(s, 2) | IQX_BYTE(s, 3) | \
                    IQX_BYTE(s, 4) | IQX_BYTE(s, 5) | IQX_BYTE(s, 6) | IQX_BYTE(s, 7))
#define IQX_E4(s)  IQX_E1(s), IQX_E1((s) + 1), IQX_E1((s) + 2), IQX_E1((s) + 3)
#define IQX_E16(s) IQX_E4(s), IQX_E4((s) + 4), IQX_E4((s) + 8), IQX_E4((s) + 12)
static const uint64_t iqx_sign_table[128] = {
    IQX_E16(0),  IQX_E16(16), IQX_E16(32), IQX_E16(48),
    IQX_E16(64), IQX_E16(80), IQX_E16(96), IQX_E16(112),
};

// the sign carriers of 32 values from four 7-bit sign groups
static QD_INLINE __m256i iqx_signs7(unsigned s0, unsigned s1, unsigned s2, unsigned s3) {
    return _mm256_setr_epi64x((long long) iqx_sign_table[s0 & 127], (long long) iqx_sign_table[s1 & 127],
                              (long long) iqx_sign_table[s2 & 127], (long long) iqx_sign_table[s3 & 127]);
}

// int16 multipliers m0 (values 0-15) and m1 (values 16-31)
static QD_INLINE __m256i iqx_mul2(int m0, int m1) {
    const __m256i v = _mm256_set1_epi32(m0 | m1 << 16);
    return _mm256_shuffle_epi8(v, _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                                   2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3));
}

static QD_INLINE __m256i iqx_grid64(const uint64_t * grid, int i0, int i1, int i2, int i3) {
    return _mm256_setr_epi64x((long long) grid[i0], (long long) grid[i1], (long long) grid[i2], (long long) grid[i3]);
}

//
// the grid types
//

static QD_INLINE size_t iqx_block_size(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_IQ2_XXS: return sizeof(block_iq2_xxs);
        case GGML_TYPE_IQ2_XS:  return sizeof(block_iq2_xs);
        case GGML_TYPE_IQ2_S:   return sizeof(block_iq2_s);
        case GGML_TYPE_IQ3_XXS: return sizeof(block_iq3_xxs);
        case GGML_TYPE_IQ3_S:   return sizeof(block_iq3_s);
        case GGML_TYPE_IQ1_S:   return sizeof(block_iq1_s);
        case GGML_TYPE_TQ1_0:   return sizeof(block_tq1_0);
        case GGML_TYPE_TQ2_0:   return sizeof(block_tq2_0);
        default:                return sizeof(block_iq1_m);
    }
}

// the factor of a block: value = factor * mul * v
static QD_INLINE float iqx_block_factor(enum ggml_type type, const void * x) {
    switch (type) {
        case GGML_TYPE_IQ2_XXS: return qd_h2f(((const block_iq2_xxs *) x)->d) * 0.125f;
        case GGML_TYPE_IQ2_XS:  return qd_h2f(((const block_iq2_xs  *) x)->d) * 0.125f;
        case GGML_TYPE_IQ2_S:   return qd_h2f(((const block_iq2_s   *) x)->d) * 0.125f;
        case GGML_TYPE_IQ3_XXS: return qd_h2f(((const block_iq3_xxs *) x)->d) * 0.25f;
        case GGML_TYPE_IQ3_S:   return qd_h2f(((const block_iq3_s   *) x)->d);
        case GGML_TYPE_IQ1_S:   return qd_h2f(((const block_iq1_s   *) x)->d) * 0.125f;
        case GGML_TYPE_TQ1_0:   return qd_h2f(((const block_tq1_0   *) x)->d);
        case GGML_TYPE_TQ2_0:   return qd_h2f(((const block_tq2_0   *) x)->d);
        default:                return ggml_iq1_m_scale((const block_iq1_m *) x) * 0.125f;
    }
}

// IQ1 values 8g + shift from the grid bytes g (-1, 0, 1) and the shift bytes (-1, 1)
static QD_INLINE void iqx_iq1_values(__m256i g, __m256i shift, struct iqx_chunk * ch) {
    const __m256i v = _mm256_add_epi8(_mm256_sign_epi8(_mm256_set1_epi8(8), g), shift);
    ch->mag = _mm256_abs_epi8(v);
    ch->sgn = v;
}

// signed values v (|v| <= 127) as magnitudes and sign carriers, multipliers 1
static QD_INLINE void iqx_signed_values(__m256i v, struct iqx_chunk * ch) {
    ch->mag = _mm256_abs_epi8(v);
    ch->sgn = v;
    ch->mul = _mm256_set1_epi16(1);
}

// byte j of x times byte j of m, modulo 256
static QD_INLINE __m256i iqx_mul_bytes(__m256i x, __m256i m) {
    const __m256i lo = _mm256_mullo_epi16(x, _mm256_and_si256(m, _mm256_set1_epi16(0x00FF)));
    const __m256i hi = _mm256_mullo_epi16(_mm256_srli_epi16(x, 8), _mm256_srli_epi16(m, 8));
    return _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi16(0x00FF)), _mm256_slli_epi16(hi, 8));
}

// the TQ1_0 trit of bytes x that the powers of 3 in m bring to the top:
// q = x * 3^n (mod 256), trit (3q >> 8) - 1, i.e. -1 + (q >= 86) + (q >= 171)
static QD_INLINE __m256i iqx_trits(__m256i x, __m256i m) {
    const __m256i q = _mm256_xor_si256(iqx_mul_bytes(x, m), _mm256_set1_epi8((char) 0x80)); // signed order
    const __m256i ge86  = _mm256_cmpgt_epi8(q, _mm256_set1_epi8(85 - 128));
    const __m256i ge171 = _mm256_cmpgt_epi8(q, _mm256_set1_epi8(170 - 128));
    return _mm256_sub_epi8(_mm256_sub_epi8(_mm256_set1_epi8(-1), ge86), ge171);
}

static QD_INLINE __m256i iqx_pow3_halves(int n0, int n1) {
    static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
    return _mm256_setr_m128i(_mm_set1_epi8((char) pow3[n0]), _mm_set1_epi8((char) pow3[n1]));
}

// values 32i .. 32i + 31 of a TQ1_0 block (layout in ggml-common.h)
static QD_INLINE __m256i iqx_tq1_0_values(const block_tq1_0 * b, int i) {
    if (i < 5) {
        return iqx_trits(_mm256_loadu_si256((const __m256i *) b->qs), iqx_pow3_halves(i, i));
    }
    const __m128i q = _mm_loadu_si128((const __m128i *)(b->qs + 32));
    if (i < 7) {
        return iqx_trits(_mm256_setr_m128i(q, q), iqx_pow3_halves(2*(i - 5), 2*(i - 5) + 1));
    }
    // values 224..239: trit 4 of qs[32..47]; 240..255: value 240 + j + 4m is trit m of qh[j]
    uint32_t h;
    memcpy(&h, b->qh, sizeof(h));
    const __m128i qh = _mm_shuffle_epi8(_mm_cvtsi32_si128((int) h), _mm_setr_epi8(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3));
    const __m256i m = _mm256_setr_m128i(_mm_set1_epi8(81), _mm_setr_epi8(1, 1, 1, 1, 3, 3, 3, 3, 9, 9, 9, 9, 27, 27, 27, 27));
    return iqx_trits(_mm256_setr_m128i(q, qh), m);
}

// values 32i .. 32i + 31 of the block at x
static QD_INLINE void iqx_decode(enum ggml_type type, const void * x, int i, const struct ggml_iq_grids * g,
                                 struct iqx_chunk * ch) {
    switch (type) {
        case GGML_TYPE_IQ2_XXS: {
            const block_iq2_xxs * b = x;
            uint32_t aux[2];
            memcpy(aux, b->qs + 4*i, sizeof(aux));
            ch->mag = iqx_grid64(g->iq2xxs, aux[0] & 255, (aux[0] >> 8) & 255, (aux[0] >> 16) & 255, aux[0] >> 24);
            ch->sgn = iqx_signs7(aux[1], aux[1] >> 7, aux[1] >> 14, aux[1] >> 21);
            ch->mul = _mm256_set1_epi16((short) (2*(aux[1] >> 28) + 1));
        } break;
        case GGML_TYPE_IQ2_XS: {
            const block_iq2_xs * b = x;
            const uint16_t * q = b->qs + 4*i;
            ch->mag = iqx_grid64(g->iq2xs, q[0] & 511, q[1] & 511, q[2] & 511, q[3] & 511);
            ch->sgn = iqx_signs7(q[0] >> 9, q[1] >> 9, q[2] >> 9, q[3] >> 9);
            ch->mul = iqx_mul2(2*(b->scales[i] & 15) + 1, 2*(b->scales[i] >> 4) + 1);
        } break;
        case GGML_TYPE_IQ2_S: {
            const block_iq2_s * b = x;
            const uint8_t * q = b->qs + 4*i;
            const int h = b->qh[i];
            ch->mag = iqx_grid64(g->iq2s, q[0] | (h << 8 & 0x300), q[1] | (h << 6 & 0x300),
                                          q[2] | (h << 4 & 0x300), q[3] | (h << 2 & 0x300));
            uint32_t signs;
            memcpy(&signs, b->qs + QK_K/8 + 4*i, sizeof(signs));
            ch->sgn = iqx_signs(signs);
            ch->mul = iqx_mul2(2*(b->scales[i] & 15) + 1, 2*(b->scales[i] >> 4) + 1);
        } break;
        case GGML_TYPE_IQ3_XXS: {
            // 8 loads beat a gather here (measured); IQ3_S's 9-bit indices are made in a vector and gathered
            const block_iq3_xxs * b = x;
            const uint8_t * q = b->qs + 8*i;
            const uint32_t * grid = g->iq3xxs;
            uint32_t aux;
            memcpy(&aux, b->qs + QK_K/4 + 4*i, sizeof(aux));
            ch->mag = _mm256_setr_epi32((int) grid[q[0]], (int) grid[q[1]], (int) grid[q[2]], (int) grid[q[3]],
                                        (int) grid[q[4]], (int) grid[q[5]], (int) grid[q[6]], (int) grid[q[7]]);
            ch->sgn = iqx_signs7(aux, aux >> 7, aux >> 14, aux >> 21);
            ch->mul = _mm256_set1_epi16((short) (2*(aux >> 28) + 1));
        } break;
        case GGML_TYPE_IQ3_S: {
            const block_iq3_s * b = x;
            // index k: qs[8i + k] | bit k of qh[i] as bit 8
            const __m256i lo = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(b->qs + 8*i)));
            const __m256i hi = _mm256_sllv_epi32(_mm256_set1_epi32(b->qh[i]), _mm256_setr_epi32(8, 7, 6, 5, 4, 3, 2, 1));
            const __m256i idx = _mm256_or_si256(lo, _mm256_and_si256(hi, _mm256_set1_epi32(256)));
            uint32_t signs;
            memcpy(&signs, b->signs + 4*i, sizeof(signs));
            ch->mag = _mm256_i32gather_epi32((const int *) g->iq3s, idx, 4);
            ch->sgn = iqx_signs(signs);
            ch->mul = _mm256_set1_epi16((short) (2*((b->scales[i/2] >> 4*(i%2)) & 15) + 1));
        } break;
        case GGML_TYPE_IQ1_S: {
            const block_iq1_s * b = x;
            const uint8_t * q = b->qs + 4*i;
            const int h = b->qh[i];
            const __m256i grid = iqx_grid64(g->iq1s, q[0] | (h << 8 & 0x700), q[1] | (h << 5 & 0x700),
                                                     q[2] | (h << 2 & 0x700), q[3] | (h >> 1 & 0x700));
            iqx_iq1_values(grid, _mm256_set1_epi8(h & 0x8000 ? -1 : 1), ch);
            ch->mul = _mm256_set1_epi16((short) (2*((h >> 12) & 7) + 1));
        } break;
        case GGML_TYPE_TQ1_0:
            iqx_signed_values(iqx_tq1_0_values((const block_tq1_0 *) x, i), ch);
            break;
        case GGML_TYPE_TQ2_0: {
            // value 128h + 32n + m: bits 2n of qs[32h + m], stored + 1
            const block_tq2_0 * b = x;
            const __m256i q = _mm256_loadu_si256((const __m256i *)(b->qs + 32*(i/4)));
            const __m256i u = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2*(i%4))), _mm256_set1_epi8(3));
            iqx_signed_values(_mm256_sub_epi8(u, _mm256_set1_epi8(1)), ch);
        } break;
        default: { // GGML_TYPE_IQ1_M
            const block_iq1_m * b = x;
            const uint8_t * q = b->qs + 4*i;
            const int h0 = b->qh[2*i], h1 = b->qh[2*i + 1];
            const __m256i grid = iqx_grid64(g->iq1s, q[0] | (h0 << 8 & 0x700), q[1] | (h0 << 4 & 0x700),
                                                     q[2] | (h1 << 8 & 0x700), q[3] | (h1 << 4 & 0x700));
            // the shift signs: bit 3 of h0, h0's bit 7, h1's bit 3, h1's bit 7, each for 8 values
            const __m256i hb = _mm256_shuffle_epi8(_mm256_set1_epi32(h0 | h1 << 8), _mm256_setr_epi8(
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
            const __m256i bit = _mm256_setr_epi64x(0x0808080808080808LL, (long long) 0x8080808080808080ULL,
                                                   0x0808080808080808LL, (long long) 0x8080808080808080ULL);
            const __m256i shift = _mm256_or_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hb, bit), bit), _mm256_set1_epi8(1));
            iqx_iq1_values(grid, shift, ch);
            uint16_t sc;
            memcpy(&sc, (const uint8_t *) b->scales + 2*(i/2), sizeof(sc));
            const int s = sc >> 6*(i%2);
            ch->mul = iqx_mul2(2*(s & 7) + 1, 2*((s >> 3) & 7) + 1);
        } break;
    }
}

// int32 lanes of the chunk's values . q (32 activation codes), with the multipliers
static QD_INLINE __m256i iqx_dot_chunk(__m256i acc, const struct iqx_chunk * ch, const int8_t * q) {
    const __m256i y = _mm256_loadu_si256((const __m256i *) q);
    const __m256i p = _mm256_maddubs_epi16(ch->mag, _mm256_sign_epi8(y, ch->sgn));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, ch->mul));
}

#if defined(GGML_VEC_AVX512)

// two chunks as 64 values, the signs as a mask (for the columns that share
// a decoded block: half the instructions per column of the 256-bit form)
struct iqx_pair {
    __m512i   mag, mul;
    __mmask64 neg;
};

static QD_INLINE void iqx_pair_join(const struct iqx_chunk * a, const struct iqx_chunk * b, struct iqx_pair * p) {
    p->mag = _mm512_inserti64x4(_mm512_castsi256_si512(a->mag), b->mag, 1);
    p->mul = _mm512_inserti64x4(_mm512_castsi256_si512(a->mul), b->mul, 1);
    p->neg = _mm512_movepi8_mask(_mm512_inserti64x4(_mm512_castsi256_si512(a->sgn), b->sgn, 1));
}

// the same int32 lanes as the sum of iqx_dot_chunk over the chunks: each
// 256-bit half sums the even or the odd chunks, then the halves are added
// (exact integers, so the order does not matter)
static QD_INLINE __m256i iqx_dot_pairs(const struct iqx_pair * pr, const int8_t * q) {
    __m512i acc = _mm512_setzero_si512();
    for (int i = 0; i < QK_K/64; i++) {
        const __m512i y  = _mm512_loadu_si512(q + 64*i);
        const __m512i ys = _mm512_mask_sub_epi8(y, pr[i].neg, _mm512_setzero_si512(), y);
        acc = _mm512_add_epi32(acc, _mm512_madd_epi16(_mm512_maddubs_epi16(pr[i].mag, ys), pr[i].mul));
    }
    return _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
}

#endif

// whether generation unrolls the loop over a superblock's 8 chunks: where
// the chunk index selects constants and branches (TQ1_0's powers of 3,
// TQ2_0's shifts, IQ1_M's scale halves) they then fold; IQ2_XXS and IQ2_XS
// ran slower so (one thread, weights in L2: IQ2_XS 3.6 -> 12.7 ns per 32
// values), IQ3_S no faster
static QD_INLINE bool iqx_unroll(enum ggml_type type) {
    return type == GGML_TYPE_TQ1_0 || type == GGML_TYPE_TQ2_0 || type == GGML_TYPE_IQ1_M ||
           type == GGML_TYPE_IQ1_S || type == GGML_TYPE_IQ2_S || type == GGML_TYPE_IQ3_XXS;
}

static QD_INLINE void iqx_rows(enum ggml_type type, int64_t n, const char * x, size_t bx, int64_t nr,
                               const void * const * y, float * const * s, int64_t nc) {
    const struct ggml_iq_grids * g = ggml_iq_grids();
    const size_t bs = iqx_block_size(type);
    const int64_t nb = n / QK_K;
    for (int64_t r = 0; r < nr; r++) {
        const char * xr = x + r*bx;
        if (nc == 1) {
            const block_q8_K * yb = (const block_q8_K *) y[0];
            __m256 acc = _mm256_setzero_ps();
            for (int64_t b = 0; b < nb; b++) {
                const char * blk = xr + b*bs;
                __m256i isum = _mm256_setzero_si256();
                if (iqx_unroll(type)) {
#if defined(__GNUC__)
#pragma GCC unroll 8
#endif
                    for (int i = 0; i < QK_K/32; i++) {
                        struct iqx_chunk ch;
                        iqx_decode(type, blk, i, g, &ch);
                        isum = iqx_dot_chunk(isum, &ch, yb[b].qs + 32*i);
                    }
                } else {
                    for (int i = 0; i < QK_K/32; i++) {
                        struct iqx_chunk ch;
                        iqx_decode(type, blk, i, g, &ch);
                        isum = iqx_dot_chunk(isum, &ch, yb[b].qs + 32*i);
                    }
                }
                const float d = iqx_block_factor(type, blk) * yb[b].d;
                acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d), acc);
            }
            s[0][r] = qd_hsum256(acc);
            continue;
        }
        for (int64_t c0 = 0; c0 < nc; c0 += IQX_COLS) {
            const int64_t cn = MIN(IQX_COLS, nc - c0);
            __m256 acc[IQX_COLS];
            for (int64_t c = 0; c < cn; c++) {
                acc[c] = _mm256_setzero_ps();
            }
            for (int64_t b = 0; b < nb; b++) {
                const char * blk = xr + b*bs;
                struct iqx_chunk ch[QK_K/32];
#if defined(__GNUC__)
#pragma GCC unroll 8
#endif
                for (int i = 0; i < QK_K/32; i++) {
                    iqx_decode(type, blk, i, g, &ch[i]);
                }
                const float factor = iqx_block_factor(type, blk);
#if defined(GGML_VEC_AVX512)
                struct iqx_pair pr[QK_K/64];
                for (int i = 0; i < QK_K/64; i++) {
                    iqx_pair_join(&ch[2*i], &ch[2*i + 1], &pr[i]);
                }
#endif
                for (int64_t c = 0; c < cn; c++) {
                    const block_q8_K * yb = (const block_q8_K *) y[c0 + c] + b;
#if defined(GGML_VEC_AVX512)
                    const __m256i isum = iqx_dot_pairs(pr, yb->qs);
#else
                    __m256i isum = _mm256_setzero_si256();
                    for (int i = 0; i < QK_K/32; i++) {
                        isum = iqx_dot_chunk(isum, &ch[i], yb->qs + 32*i);
                    }
#endif
                    acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(factor * yb->d), acc[c]);
                }
            }
            for (int64_t c = 0; c < cn; c++) {
                s[c0 + c][r] = qd_hsum256(acc[c]);
            }
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(iq2_xxs_dot__avx2, iqx_rows, GGML_TYPE_IQ2_XXS)
GGML_CPU_DEFINE_DOT_ROWS(iq2_xs_dot__avx2, iqx_rows, GGML_TYPE_IQ2_XS)
GGML_CPU_DEFINE_DOT_ROWS(iq2_s_dot__avx2, iqx_rows, GGML_TYPE_IQ2_S)
GGML_CPU_DEFINE_DOT_ROWS(iq3_xxs_dot__avx2, iqx_rows, GGML_TYPE_IQ3_XXS)
GGML_CPU_DEFINE_DOT_ROWS(iq3_s_dot__avx2, iqx_rows, GGML_TYPE_IQ3_S)
GGML_CPU_DEFINE_DOT_ROWS(iq1_s_dot__avx2, iqx_rows, GGML_TYPE_IQ1_S)
GGML_CPU_DEFINE_DOT_ROWS(iq1_m_dot__avx2, iqx_rows, GGML_TYPE_IQ1_M)
GGML_CPU_DEFINE_DOT_ROWS(tq1_0_dot__avx2, iqx_rows, GGML_TYPE_TQ1_0)
GGML_CPU_DEFINE_DOT_ROWS(tq2_0_dot__avx2, iqx_rows, GGML_TYPE_TQ2_0)

//
// the small-block types . Q8_0: 32 values per chunk, a float scale per 16
// (the weight scale; times the activation scale at use)
//

struct lbx_chunk {
    __m256i mag, sgn;
    __m256  scale;  // lanes 0-3 for values 0-15, 4-7 for values 16-31
};

// half a UE4M3 scale, exactly as ggml_ue4m3_to_fp32_half: 0x7f reads as 0, bit 7 is ignored
static QD_INLINE float lbx_ue4m3_half(uint8_t x) {
    if (x == 0x7f) {
        return 0.0f;
    }
    x &= 0x7f;
    if (x < 8) {
        return (float) x * (1.0f / 1024.0f); // subnormal: m * 2^-9, halved
    }
    // 2^(e - 8) * (1 + m/8): exponent field e - 8 + 127, mantissa m << 20
    const uint32_t bits = ((uint32_t) x << 20) + (119u << 23);
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

static QD_INLINE int lbx_values(enum ggml_type type) {
    return type == GGML_TYPE_Q1_0 ? QK1_0 : type == GGML_TYPE_Q2_0 ? QK2_0 : QK_NVFP4;
}

static QD_INLINE size_t lbx_block_size(enum ggml_type type) {
    return type == GGML_TYPE_Q1_0 ? sizeof(block_q1_0) : type == GGML_TYPE_Q2_0 ? sizeof(block_q2_0) : sizeof(block_nvfp4);
}

// values 32i .. 32i + 31 of the block at x
static QD_INLINE void lbx_decode(enum ggml_type type, const void * x, int i, struct lbx_chunk * ch) {
    switch (type) {
        case GGML_TYPE_Q1_0: {
            const block_q1_0 * b = x;
            uint32_t bits;
            memcpy(&bits, b->qs + 4*i, sizeof(bits));
            ch->mag = _mm256_set1_epi8(1);
            ch->sgn = iqx_signs(~bits); // a set bit is +1
            ch->scale = _mm256_set1_ps(qd_h2f(b->d));
        } break;
        case GGML_TYPE_Q2_0: {
            const block_q2_0 * b = x;
            // byte j holds values 4j .. 4j + 3, two bits each
            const __m128i q = _mm_loadl_epi64((const __m128i *)(b->qs + 8*i));
            const __m128i m = _mm_set1_epi8(3);
            const __m128i f0 = _mm_and_si128(q, m);
            const __m128i f1 = _mm_and_si128(_mm_srli_epi16(q, 2), m);
            const __m128i f2 = _mm_and_si128(_mm_srli_epi16(q, 4), m);
            const __m128i f3 = _mm_and_si128(_mm_srli_epi16(q, 6), m);
            const __m128i p01 = _mm_unpacklo_epi8(f0, f1);
            const __m128i p23 = _mm_unpacklo_epi8(f2, f3);
            const __m256i u = _mm256_setr_m128i(_mm_unpacklo_epi16(p01, p23), _mm_unpackhi_epi16(p01, p23));
            const __m256i v = _mm256_sub_epi8(u, _mm256_set1_epi8(1));
            ch->mag = _mm256_abs_epi8(v);
            ch->sgn = v;
            ch->scale = _mm256_set1_ps(qd_h2f(b->d));
        } break;
        default: { // GGML_TYPE_NVFP4: sub-blocks 2i and 2i + 1
            const block_nvfp4 * b = x;
            const __m128i q  = _mm_loadu_si128((const __m128i *)(b->qs + 16*i));
            const __m128i lo = _mm_and_si128(q, _mm_set1_epi8(0x0F));
            const __m128i hi = _mm_and_si128(_mm_srli_epi16(q, 4), _mm_set1_epi8(0x0F));
            const __m256i codes = _mm256_setr_m128i(_mm_unpacklo_epi64(lo, hi), _mm_unpackhi_epi64(lo, hi));
            const __m128i t = _mm_loadu_si128((const __m128i *) ggml_kvalues_mxfp4());
            const __m256i v = _mm256_shuffle_epi8(_mm256_setr_m128i(t, t), codes);
            ch->mag = _mm256_abs_epi8(v);
            ch->sgn = v;
            const float s0 = lbx_ue4m3_half(b->d[2*i]), s1 = lbx_ue4m3_half(b->d[2*i + 1]);
            ch->scale = _mm256_setr_ps(s0, s0, s0, s0, s1, s1, s1, s1);
        } break;
    }
}

static QD_INLINE __m256 lbx_dot_chunk(__m256 acc, const struct lbx_chunk * ch, const block_q8_0 * yb) {
    const __m256i y = _mm256_loadu_si256((const __m256i *) yb->qs);
    const __m256i p = _mm256_maddubs_epi16(ch->mag, _mm256_sign_epi8(y, ch->sgn));
    const __m256i isum = _mm256_madd_epi16(p, _mm256_set1_epi16(1));
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(ch->scale, _mm256_set1_ps(qd_h2f(yb->d))), acc);
}

static QD_INLINE void lbx_rows(enum ggml_type type, int64_t n, const char * x, size_t bx, int64_t nr,
                               const void * const * y, float * const * s, int64_t nc) {
    enum { MAX_CHUNKS = QK1_0/32 };
    const int nch = lbx_values(type) / 32;
    const size_t bs = lbx_block_size(type);
    const int64_t nb = n / lbx_values(type);
    for (int64_t r = 0; r < nr; r++) {
        const char * xr = x + r*bx;
        if (nc == 1) {
            const block_q8_0 * yb = (const block_q8_0 *) y[0];
            __m256 acc = _mm256_setzero_ps();
            for (int64_t b = 0; b < nb; b++) {
                for (int i = 0; i < nch; i++) {
                    struct lbx_chunk ch;
                    lbx_decode(type, xr + b*bs, i, &ch);
                    acc = lbx_dot_chunk(acc, &ch, yb + b*nch + i);
                }
            }
            s[0][r] = qd_hsum256(acc);
            continue;
        }
        for (int64_t c0 = 0; c0 < nc; c0 += IQX_COLS) {
            const int64_t cn = MIN(IQX_COLS, nc - c0);
            __m256 acc[IQX_COLS];
            for (int64_t c = 0; c < cn; c++) {
                acc[c] = _mm256_setzero_ps();
            }
            for (int64_t b = 0; b < nb; b++) {
                struct lbx_chunk ch[MAX_CHUNKS];
                for (int i = 0; i < nch; i++) {
                    lbx_decode(type, xr + b*bs, i, &ch[i]);
                }
                for (int64_t c = 0; c < cn; c++) {
                    const block_q8_0 * yb = (const block_q8_0 *) y[c0 + c] + b*nch;
                    for (int i = 0; i < nch; i++) {
                        acc[c] = lbx_dot_chunk(acc[c], &ch[i], yb + i);
                    }
                }
            }
            for (int64_t c = 0; c < cn; c++) {
                s[c0 + c][r] = qd_hsum256(acc[c]);
            }
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(q1_0_dot__avx2, lbx_rows, GGML_TYPE_Q1_0)
GGML_CPU_DEFINE_DOT_ROWS(q2_0_dot__avx2, lbx_rows, GGML_TYPE_Q2_0)
GGML_CPU_DEFINE_DOT_ROWS(nvfp4_dot__avx2, lbx_rows, GGML_TYPE_NVFP4)

void ggml_cpu_add_kernels_x86_quants_dot_iq(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ2_XXS, dot_rows, iq2_xxs_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ2_XS, dot_rows, iq2_xs_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ2_S, dot_rows, iq2_s_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ3_XXS, dot_rows, iq3_xxs_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ3_S, dot_rows, iq3_s_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ1_S, dot_rows, iq1_s_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ1_M, dot_rows, iq1_m_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_TQ1_0, dot_rows, tq1_0_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_TQ2_0, dot_rows, tq2_0_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q1_0, dot_rows, q1_0_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q2_0, dot_rows, q2_0_dot__avx2, "avx2");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_NVFP4, dot_rows, nvfp4_dot__avx2, "avx2");
}

#else

void ggml_cpu_add_kernels_x86_quants_dot_iq(struct ggml_cpu_kernel_config * cfg) {
    GGML_UNUSED(cfg);
}

#endif // QD_SIMD
