// quants-dot-iq4-avx2.c: the x86 row dots of the table formats (IQ4_NL,
// MXFP4 . Q8_0 rows; IQ4_XS . Q8_K rows); quants-dot-iq4.c has the portable
// path they follow. The 32 codes of a block are looked up with one byte
// shuffle and the signed bytes multiplied by the sign trick (|a| . sign(b, a)):
// table values are at most 127 in magnitude, so the pair sums fit int16.

#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
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

static float iq4_dot_row_nl(int64_t n, const void * xv, const void * yv) {
    const block_iq4_nl * x = (const block_iq4_nl *) xv;
    const block_q8_0 * y = (const block_q8_0 *) yv;
    const __m256i table = iq4_table(ggml_kvalues_iq4nl());
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / 32; b++) {
        const __m256i v = iq4_lookup(x[b].qs, table);
        const __m256i s = iq4_dot_s8(v, _mm256_loadu_si256((const __m256i *) y[b].qs));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(qd_h2f(x[b].d) * qd_h2f(y[b].d)), acc);
    }
    return qd_hsum256(acc);
}

static float iq4_dot_row_mxfp4(int64_t n, const void * xv, const void * yv) {
    const block_mxfp4 * x = (const block_mxfp4 *) xv;
    const block_q8_0 * y = (const block_q8_0 *) yv;
    const __m256i table = iq4_table(ggml_kvalues_mxfp4());
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / 32; b++) {
        const __m256i v = iq4_lookup(x[b].qs, table);
        const __m256i s = iq4_dot_s8(v, _mm256_loadu_si256((const __m256i *) y[b].qs));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(ggml_e8m0_to_fp32_half(x[b].e) * qd_h2f(y[b].d)), acc);
    }
    return qd_hsum256(acc);
}

static float iq4_dot_row_xs(int64_t n, const void * xv, const void * yv) {
    const block_iq4_xs * x = (const block_iq4_xs *) xv;
    const block_q8_K * y = (const block_q8_K *) yv;
    const __m256i table = iq4_table(ggml_kvalues_iq4nl());
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / QK_K; b++) {
        __m256i isum = _mm256_setzero_si256();
        for (int ib = 0; ib < QK_K/32; ib++) {
            const __m256i v = iq4_lookup(x[b].qs + 16*ib, table);
            const __m256i s = iq4_dot_s8(v, _mm256_loadu_si256((const __m256i *)(y[b].qs + 32*ib)));
            isum = _mm256_add_epi32(isum, _mm256_mullo_epi32(s, _mm256_set1_epi32(ggml_iq4_xs_scale(&x[b], ib) - 32)));
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(qd_h2f(x[b].d) * y[b].d), acc);
    }
    return qd_hsum256(acc);
}

// the rows of one table type: dot(n, x row, y column) is its row dot
static QD_INLINE void iq4_rows_simd(float (*dot)(int64_t n, const void * x, const void * y),
                                    int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                    const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        for (int64_t r = 0; r < nr; r++) {
            s[c][r] = dot(n, (const char *) x + r*bx, y[c]);
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(iq4_nl_dot__avx2, iq4_rows_simd, iq4_dot_row_nl)
GGML_CPU_DEFINE_DOT_ROWS(iq4_xs_dot__avx2, iq4_rows_simd, iq4_dot_row_xs)
GGML_CPU_DEFINE_DOT_ROWS(mxfp4_dot__avx2, iq4_rows_simd, iq4_dot_row_mxfp4)

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
