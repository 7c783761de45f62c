// quants-dot-iq4.c: the table formats (IQ4_NL, MXFP4 . Q8_0 rows; IQ4_XS . Q8_K
// rows). The ternary formats are in quants-dot-tq.c.
//
// A weight code indexes a table of 16 int8 values; the dot product of a
// block is the integer sum of table values times activation codes, scaled
// by the two block scales (IQ4_XS: by its 6-bit sub-block scale minus 32 as
// well). The vector path looks the 32 codes of a block up with one byte
// shuffle and multiplies signed bytes by the sign trick (|a| . sign(b, a)):
// table values are at most 127 in magnitude, so the pair sums fit int16.

#include "kernels/quants-dot.h"
#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"

//
// portable path
//

static float iq4_dot_row_ref(enum ggml_type type, int64_t n, const char * x, const void * y) {
    float sum = 0.0f;
    if (type == GGML_TYPE_IQ4_XS) {
        const block_iq4_xs * xb = (const block_iq4_xs *) x;
        const block_q8_K   * yb = (const block_q8_K *) y;
        const int8_t * values = ggml_kvalues_iq4nl();
        for (int64_t b = 0; b < n / QK_K; b++) {
            int32_t isum = 0;
            for (int ib = 0; ib < QK_K/32; ib++) {
                const uint8_t * qs = xb[b].qs + 16*ib;
                const int8_t  * q8 = yb[b].qs + 32*ib;
                int32_t s = 0;
                for (int j = 0; j < 16; j++) {
                    s += values[qs[j] & 0x0F] * q8[j] + values[qs[j] >> 4] * q8[j + 16];
                }
                isum += (ggml_iq4_xs_scale(&xb[b], ib) - 32) * s;
            }
            sum += GGML_FP16_TO_FP32(xb[b].d) * yb[b].d * (float) isum;
        }
        return sum;
    }
    const block_q8_0 * yb = (const block_q8_0 *) y;
    const bool nl = type == GGML_TYPE_IQ4_NL;
    const int8_t * values = nl ? ggml_kvalues_iq4nl() : ggml_kvalues_mxfp4();
    const size_t bs = nl ? sizeof(block_iq4_nl) : sizeof(block_mxfp4);
    for (int64_t b = 0; b < n / 32; b++) {
        const char * blk = x + b*bs;
        const uint8_t * qs = nl ? ((const block_iq4_nl *) blk)->qs : ((const block_mxfp4 *) blk)->qs;
        const float dx = nl ? GGML_FP16_TO_FP32(((const block_iq4_nl *) blk)->d) : ggml_e8m0_to_fp32_half(((const block_mxfp4 *) blk)->e);
        int32_t s = 0;
        for (int j = 0; j < 16; j++) {
            s += values[qs[j] & 0x0F] * yb[b].qs[j] + values[qs[j] >> 4] * yb[b].qs[j + 16];
        }
        sum += dx * GGML_FP16_TO_FP32(yb[b].d) * (float) s;
    }
    return sum;
}

#define IQ4_DEFINE_ROWS_REF(name, type)                                                                \
    static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,                  \
                     const void * const * y, float * const * s, int64_t nc) {                         \
        for (int64_t c = 0; c < nc; c++) {                                                             \
            for (int64_t r = 0; r < nr; r++) {                                                         \
                s[c][r] = iq4_dot_row_ref(type, n, (const char *) x + r*bx, y[c]);                     \
            }                                                                                          \
        }                                                                                              \
    }

IQ4_DEFINE_ROWS_REF(iq4_rows_iq4_nl_ref, GGML_TYPE_IQ4_NL)
IQ4_DEFINE_ROWS_REF(iq4_rows_iq4_xs_ref, GGML_TYPE_IQ4_XS)
IQ4_DEFINE_ROWS_REF(iq4_rows_mxfp4_ref,  GGML_TYPE_MXFP4)

//
// vector path
//

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

static float iq4_dot_row_nl(int64_t n, const block_iq4_nl * x, const block_q8_0 * y) {
    const __m256i table = iq4_table(ggml_kvalues_iq4nl());
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / 32; b++) {
        const __m256i v = iq4_lookup(x[b].qs, table);
        const __m256i s = iq4_dot_s8(v, _mm256_loadu_si256((const __m256i *) y[b].qs));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(qd_h2f(x[b].d) * qd_h2f(y[b].d)), acc);
    }
    return qd_hsum256(acc);
}

static float iq4_dot_row_mxfp4(int64_t n, const block_mxfp4 * x, const block_q8_0 * y) {
    const __m256i table = iq4_table(ggml_kvalues_mxfp4());
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < n / 32; b++) {
        const __m256i v = iq4_lookup(x[b].qs, table);
        const __m256i s = iq4_dot_s8(v, _mm256_loadu_si256((const __m256i *) y[b].qs));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(ggml_e8m0_to_fp32_half(x[b].e) * qd_h2f(y[b].d)), acc);
    }
    return qd_hsum256(acc);
}

static float iq4_dot_row_xs(int64_t n, const block_iq4_xs * x, const block_q8_K * y) {
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

#define IQ4_DEFINE_ROWS_SIMD(name, block_t, act_t, dot)                                                \
    static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,                  \
                     const void * const * y, float * const * s, int64_t nc) {                         \
        for (int64_t c = 0; c < nc; c++) {                                                             \
            for (int64_t r = 0; r < nr; r++) {                                                         \
                s[c][r] = dot(n, (const block_t *)((const char *) x + r*bx), (const act_t *) y[c]);    \
            }                                                                                          \
        }                                                                                              \
    }

IQ4_DEFINE_ROWS_SIMD(iq4_rows_iq4_nl, block_iq4_nl, block_q8_0, iq4_dot_row_nl)
IQ4_DEFINE_ROWS_SIMD(iq4_rows_iq4_xs, block_iq4_xs, block_q8_K, iq4_dot_row_xs)
IQ4_DEFINE_ROWS_SIMD(iq4_rows_mxfp4,  block_mxfp4,  block_q8_0, iq4_dot_row_mxfp4)

#else

#define iq4_rows_iq4_nl iq4_rows_iq4_nl_ref
#define iq4_rows_iq4_xs iq4_rows_iq4_xs_ref
#define iq4_rows_mxfp4  iq4_rows_mxfp4_ref

#endif

void ggml_cpu_add_kernels_quants_dot_iq4(struct ggml_cpu_kernel_config * cfg) {
#define IQ4_ADD(type, f, r)                                                       \
    GGML_CPU_SET_KERNEL(cfg->fast, type, dot_rows, f, GGML_CPU_QD_ISA);          \
    GGML_CPU_SET_KERNEL(cfg->ref,  type, dot_rows, r, "scalar")
    IQ4_ADD(GGML_TYPE_IQ4_NL, iq4_rows_iq4_nl, iq4_rows_iq4_nl_ref);
    IQ4_ADD(GGML_TYPE_IQ4_XS, iq4_rows_iq4_xs, iq4_rows_iq4_xs_ref);
    IQ4_ADD(GGML_TYPE_MXFP4,  iq4_rows_mxfp4,  iq4_rows_mxfp4_ref);
#undef IQ4_ADD
}

#define IQ4_DEFINE_VEC_DOT(name, type, blck)                                                           \
    void name(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,      \
              const void * GGML_RESTRICT y, size_t by, int nrc) {                                      \
        GGML_ASSERT(nrc == 1);                                                                         \
        GGML_ASSERT(n % (blck) == 0);                                                                  \
        GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);                                             \
        const void * yc[1] = { y };                                                                    \
        float *      sc[1] = { s };                                                                    \
        ggml_cpu_type_kernels(type, false)->dot_rows(n, x, 0, 1, yc, sc, 1);                             \
    }

IQ4_DEFINE_VEC_DOT(ggml_vec_dot_iq4_nl_q8_0, GGML_TYPE_IQ4_NL, 32)
IQ4_DEFINE_VEC_DOT(ggml_vec_dot_iq4_xs_q8_K, GGML_TYPE_IQ4_XS, QK_K)
IQ4_DEFINE_VEC_DOT(ggml_vec_dot_mxfp4_q8_0,  GGML_TYPE_MXFP4,  32)
