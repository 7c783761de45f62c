// quants-dot-iq4-avx2.c: the x86 row dots of the table formats (IQ4_NL,
// MXFP4 . Q8_0 rows; IQ4_XS . Q8_K rows); quants-dot-iq4.c has the portable
// path they follow. The codes of a block are looked up with byte
// shuffles and the signed bytes multiplied by the sign trick (|a| . sign(b, a)):
// table values are at most 127 in magnitude, so the pair sums fit int16.

#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "simd/stream-prefetch.h"
#include "ggml-quants.h"

#if defined(QD_SIMD)

// the table values of the 32 codes of qs (value order: low nibbles, then high)
static QD_INLINE __m256i iq4_lookup(const uint8_t * qs, __m256i table) {
    return _mm256_shuffle_epi8(table, qd_unpack_nibbles(qs));
}

// int32 lanes of sum a*b for signed bytes a (|a| <= 127), b
static QD_INLINE __m256i iq4_dot_s8(__m256i a, __m256i b) {
    const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

static QD_INLINE __m256i iq4_table(const int8_t * values) {
    const __m128i t = _mm_loadu_si128((const __m128i *) values);
    return _mm256_setr_m128i(t, t);
}

// IQ4_NL and MXFP4 take two blocks b, b + 1 per step: their 16 code bytes
// in one register [b | b + 1], a mask and a shift give the low nibbles
// (values 0..15 of both) and the high ones (16..31), the activations are
// loaded in that order, and one conversion and one FMA scale both blocks
// (lanes 0-3 block b, 4-7 block b + 1). The two byte products are summed in
// int32 lanes apart: a pair sum of table values reaches 2*127*127.

// the int32 lanes of two blocks' sums: table values of the codes q (16 bytes
// of each block) against the activations ylo (values 0..15 of each) and yhi
static QD_INLINE __m256i iq4_pair_dot(__m256i q, __m256i table, __m256i ylo, __m256i yhi) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    const __m256i vl = _mm256_shuffle_epi8(table, _mm256_and_si256(q, m4));
    const __m256i vh = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), m4));
    return _mm256_add_epi32(iq4_dot_s8(vl, ylo), iq4_dot_s8(vh, yhi));
}

// [s0 x4, s1 x4]
static QD_INLINE __m256 iq4_pair_lanes(__m128 s01) {
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(s01), _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

// the factors of weight blocks b, b + 1 (IQ4_NL: the halves d; MXFP4: the
// E8M0 exponents) as floats in lanes 0, 1
static QD_INLINE __m128 iq4_pair_factors(const bool mx, const char * blk0, const char * blk1) {
    if (mx) {
        return _mm_setr_ps(ggml_e8m0_to_fp32_half(((const block_mxfp4 *) blk0)->e),
                           ggml_e8m0_to_fp32_half(((const block_mxfp4 *) blk1)->e), 0.0f, 0.0f);
    }
    const uint32_t h = (uint32_t) ((const block_iq4_nl *) blk0)->d | (uint32_t) ((const block_iq4_nl *) blk1)->d << 16;
    return _mm_cvtph_ps(_mm_cvtsi32_si128((int) h));
}

static QD_INLINE float iq4_factor(const bool mx, const char * blk) {
    return mx ? ggml_e8m0_to_fp32_half(((const block_mxfp4 *) blk)->e) : qd_h2f(((const block_iq4_nl *) blk)->d);
}

// One step of IQ4_NL (mx false) or MXFP4 rows against one Q8_0 column: R rows
// (R <= 4), x + r*xs, into s[i0 + r*is]; the activations of a pair of blocks
// are loaded once for the R rows, whose sums are independent chains. Each
// result is formed by the same operations whatever R is.
static QD_INLINE void iq4_step32(const bool mx, const int R, int64_t nb, const char * x, size_t xs,
                                 const block_q8_0 * y, float * s, int64_t i0, int64_t is) {
    const size_t ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    const size_t  bsx   = mx ? sizeof(block_mxfp4) : sizeof(block_iq4_nl);
    const size_t  oqs   = mx ? offsetof(block_mxfp4, qs) : offsetof(block_iq4_nl, qs);
    const __m256i table = iq4_table(mx ? ggml_kvalues_mxfp4() : ggml_kvalues_iq4nl());
    __m256 acc[4];
    for (int r = 0; r < R; r++) {
        acc[r] = _mm256_setzero_ps();
    }
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        const __m256i ylo = qd_load_halves(y[b].qs, y[b + 1].qs);
        const __m256i yhi = qd_load_halves(y[b].qs + 16, y[b + 1].qs + 16);
        const uint32_t hy = (uint32_t) y[b].d | (uint32_t) y[b + 1].d << 16;
        const __m128  dy  = _mm_cvtph_ps(_mm_cvtsi32_si128((int) hy));
        for (int r = 0; r < R; r++) {
            const char * blk0 = x + r*xs + b*bsx;
            const char * blk1 = blk0 + bsx;
            ggml_cpu_stream_prefetch(blk0, 2*bsx, ahead);
            const __m256i sum = iq4_pair_dot(qd_load_halves(blk0 + oqs, blk1 + oqs), table, ylo, yhi);
            const __m128  d   = _mm_mul_ps(iq4_pair_factors(mx, blk0, blk1), dy);
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), iq4_pair_lanes(d), acc[r]);
        }
    }
    for (; b < nb; b++) {
        const __m256i yv = _mm256_loadu_si256((const __m256i *) y[b].qs);
        const float   dy = qd_h2f(y[b].d);
        for (int r = 0; r < R; r++) {
            const char * blk = x + r*xs + b*bsx;
            const __m256i sum = iq4_dot_s8(iq4_lookup((const uint8_t *) blk + oqs, table), yv);
            acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_set1_ps(iq4_factor(mx, blk) * dy), acc[r]);
        }
    }
    for (int r = 0; r < R; r++) {
        s[i0 + r*is] = qd_hsum256(acc[r]);
    }
}

// the rows of IQ4_NL or MXFP4: for each column, steps of 4 rows taken from
// the four quarters of the rows (four long streams), then the rows left one
// by one
static QD_INLINE void iq4_rows32(const bool mx, int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                 const void * const * y, float * const * s, int64_t nc) {
    const int64_t nb = n / 32;
    const int64_t q  = nr / 4;
    for (int64_t c = 0; c < nc; c++) {
        const block_q8_0 * yc = (const block_q8_0 *) y[c];
        for (int64_t r = 0; r < q; r++) {
            iq4_step32(mx, 4, nb, (const char *) x + r*bx, q*bx, yc, s[c], r, q);
        }
        for (int64_t r = 4*q; r < nr; r++) {
            iq4_step32(mx, 1, nb, (const char *) x + r*bx, bx, yc, s[c], r, 0);
        }
    }
}

// the 8 sub-block scales of an IQ4_XS superblock (ggml_iq4_xs_scale, less
// 32) as int16 lanes: the nibbles of scales_l in order (low, then high, of
// each byte), and bits 2ib, 2ib + 1 of scales_h brought to the top of lane ib
// by a multiply by 2^(14 - 2ib), then down by a shift
static QD_INLINE __m128i iq4_xs_scales16(const block_iq4_xs * x) {
    uint32_t l;
    memcpy(&l, x->scales_l, sizeof(l));
    const __m128i v   = _mm_cvtsi32_si128((int) l);
    const __m128i m4  = _mm_set1_epi8(0x0F);
    const __m128i nib = _mm_unpacklo_epi8(_mm_and_si128(v, m4), _mm_and_si128(_mm_srli_epi16(v, 4), m4));
    const __m128i hi  = _mm_srli_epi16(_mm_mullo_epi16(_mm_set1_epi16((short) x->scales_h),
                                                       _mm_setr_epi16(1 << 14, 1 << 12, 1 << 10, 1 << 8, 1 << 6, 1 << 4, 1 << 2, 1)), 14);
    return _mm_sub_epi16(_mm_or_si128(_mm_cvtepu8_epi16(nib), _mm_slli_epi16(hi, 4)), _mm_set1_epi16(32));
}

// IQ4_XS: the 8 sub-block scales (6 bits, less 32) of a superblock decoded
// once into int16 lanes 0..7 of both halves; each sub-block's byte-pair sums
// meet their scale in the int16 multiply-add (|pair sum| <= 2*127*127, times
// |scale| <= 32: the int32 lanes hold it). One superblock of a row into acc.
static QD_INLINE __m256 iq4_xs_superblock(const block_iq4_xs * x, const block_q8_K * y, __m256i table, __m256 acc) {
    const __m256i sc16 = _mm256_broadcastsi128_si256(iq4_xs_scales16(x));
    __m256i isum = _mm256_setzero_si256();
#if defined(__GNUC__)
#pragma GCC unroll 8
#endif
    for (int ib = 0; ib < QK_K/32; ib++) {
        const __m256i v = iq4_lookup(x->qs + 16*ib, table);
        const __m256i a = _mm256_loadu_si256((const __m256i *)(y->qs + 32*ib));
        const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(v, v), _mm256_sign_epi8(a, v));
        // int16 lane ib of sc16 under every lane (both halves)
        const __m256i s = _mm256_shuffle_epi8(sc16, _mm256_set1_epi16((short) (0x0100 + 0x0202*ib)));
        isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, s));
    }
    return _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(qd_h2f(x->d) * y->d), acc);
}

// rows x + r*xs (r < R) against one column, superblock by superblock: R
// streams; each row's sum formed as by a step of one row
static QD_INLINE void iq4_xs_step(const int R, int64_t nb, const char * x, size_t xs, const block_q8_K * y,
                                  float * s, int64_t is) {
    const size_t ahead = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    const __m256i table = iq4_table(ggml_kvalues_iq4nl());
    __m256 acc[4];
    for (int r = 0; r < R; r++) {
        acc[r] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        for (int r = 0; r < R; r++) {
            const block_iq4_xs * xb = (const block_iq4_xs *)(x + r*xs) + b;
            ggml_cpu_stream_prefetch(xb, sizeof(block_iq4_xs), ahead);
            acc[r] = iq4_xs_superblock(xb, y + b, table, acc[r]);
        }
    }
    for (int r = 0; r < R; r++) {
        s[r*is] = qd_hsum256(acc[r]);
    }
}

// the rows of IQ4_XS, column by column: the four rows of a step from four
// quarters of the block (one long stream read more slowly than four)
static void iq4_xs_dot__avx2(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                             const void * const * y, float * const * s, int64_t nc) {
    const int64_t nb = n / QK_K;
    const int64_t q  = nr / 4;
    for (int64_t c = 0; c < nc; c++) {
        const block_q8_K * yc = (const block_q8_K *) y[c];
        for (int64_t r = 0; r < q; r++) {
            iq4_xs_step(4, nb, (const char *) x + r*bx, q*bx, yc, s[c] + r, q);
        }
        for (int64_t r = 4*q; r < nr; r++) {
            iq4_xs_step(1, nb, (const char *) x + r*bx, bx, yc, s[c] + r, 0);
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(iq4_nl_dot__avx2, iq4_rows32, false)
GGML_CPU_DEFINE_DOT_ROWS(mxfp4_dot__avx2, iq4_rows32, true)

void ggml_cpu_add_kernels_x86_quants_dot_iq4(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ4_NL, dot_rows, iq4_nl_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ4_XS, dot_rows, iq4_xs_dot__avx2, GGML_CPU_ISA_TAG);
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_MXFP4,  dot_rows, mxfp4_dot__avx2,  GGML_CPU_ISA_TAG);
}

#else

void ggml_cpu_add_kernels_x86_quants_dot_iq4(struct ggml_cpu_kernel_config * cfg) {
    GGML_UNUSED(cfg);
}

#endif // QD_SIMD
