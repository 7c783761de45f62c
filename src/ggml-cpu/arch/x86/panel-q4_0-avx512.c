// panel-q4_0-avx512.c: the AVX-512 VNNI dot product of Q4_0 panels
// (panel-q4_0.h) and Q8_0 activation rows. Per unit (block b of 16 rows): 4
// loads of codes, their low and high nibbles, 8 VNNI steps against broadcast
// activation dwords (16 rows each), one conversion of the 16 scales. The Q4_0
// offset comes in as -8 x the activation block's sum, the start of the
// integer sums. Per row the blocks are summed in the order of
// q4_0p_dot__scalar, with fused multiply-adds.

#include "kernels/panel-q4_0.h"
#include "kernels/kernel-config.h"
#include "ggml-impl.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__) && defined(__F16C__)
#include <immintrin.h>

// one stream per thread: further ahead than the row dots' four
#define Q4P_AHEAD 8192

static void q4p_group(int64_t nb, const uint8_t * grp, const block_q8_0 * yb, const int32_t * ys, float * out, int rows) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const uint8_t * u = grp + (size_t) b * GGML_Q4_0P_UNIT;
        for (int l = 0; l < (int) GGML_Q4_0P_UNIT; l += 64) {
            __builtin_prefetch(u + Q4P_AHEAD + l, 0, 3);
        }
        int32_t yq[8];
        memcpy(yq, yb[b].qs, sizeof(yq));
        __m512i isum = _mm512_set1_epi32(-8 * ys[b]);
        for (int q = 0; q < 4; q++) {
            const __m512i z = _mm512_loadu_si512(u + 32 + 64*q);
            isum = _mm512_dpbusd_epi32(isum, _mm512_and_si512(z, m4), _mm512_set1_epi32(yq[q]));
            isum = _mm512_dpbusd_epi32(isum, _mm512_and_si512(_mm512_srli_epi16(z, 4), m4), _mm512_set1_epi32(yq[4 + q]));
        }
        const __m512 dx = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) u));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dx, _mm512_set1_ps(_cvtsh_ss(yb[b].d))), acc);
    }
    if (rows == GGML_Q4_0P_ROWS) {
        _mm512_storeu_ps(out, acc);
    } else {
        _mm512_mask_storeu_ps(out, (__mmask16)((1u << rows) - 1), acc);
    }
}

static void q4_0p_dot__avx512vnni(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                           const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc) {
    for (int64_t g = 0; g < ng; g++) {
        const uint8_t * grp = (const uint8_t *) panels + (size_t) g * (size_t) nb * GGML_Q4_0P_UNIT;
        const int rows = (int) MIN((int64_t) GGML_Q4_0P_ROWS, nr - g*GGML_Q4_0P_ROWS);
        for (int64_t c = 0; c < nc; c++) {
            q4p_group(nb, grp, (const block_q8_0 *) y[c], ys[c], s[c] + g*GGML_Q4_0P_ROWS, rows);
        }
    }
}

void ggml_cpu_add_kernels_x86_panel_q4_0(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q4_0, dot_panels, q4_0p_dot__avx512vnni, GGML_CPU_ISA_TAG);
}

#else

void ggml_cpu_add_kernels_x86_panel_q4_0(struct ggml_cpu_kernel_config * cfg) {
    (void) cfg;
}

#endif
