// panel-q4_0-avx512.c: the AVX-512 VNNI dot product of Q4_0 panels
// (panels.h) and Q8_0 activation rows. Per unit (block b of 16 rows): 4
// loads of codes, their low and high nibbles, 8 VNNI steps against broadcast
// activation dwords (16 rows each), one conversion of the 16 scales. The Q4_0
// offset comes in as -8 x the activation block's sum, the start of the
// integer sums. Per row the blocks are summed in the order of
// q4_0p_dot__scalar, with fused multiply-adds.
//
// 4 panels are walked side by side, block by block, each from its quarter
// of the call's panels: four sequential weight streams per thread, as the row
// dots read (one stream alone keeps
// too few lines in flight: in llama-bench the single-panel kernel read the
// weights slower than the row dot it replaced), each prefetched
// ggml_cpu_stream_ahead bytes ahead (none on Zen 4); within a block the 4 units' vectors of
// codes are read in turn, one line of each at a time (ggml-run --profile,
// 2 threads, against reading each unit whole: 3072x16 Q4_0 +3%, 2048x8 +6%
// tokens/s, alternated). The order of each row's sum does not change with
// the number of panels walked together.

#include "kernels/panels.h"
#include "kernels/kernel-config.h"
#include "simd/stream-prefetch.h"
#include "ggml-impl.h"

#define Q4P_UNIT (GGML_QPANEL_ROWS * sizeof(block_q4_0))

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__) && defined(__F16C__)
#include <immintrin.h>

// acc[p] + unit u + p gstride (16 rows of panel p) . activation block
// (codes yq, sum ysum, scale dy), for np panels read side by side: the
// vectors of codes of the np units in turn, one line of each at a time
static inline void q4p_block(__m512 * acc, const uint8_t * u, size_t gstride, int np, size_t ahead, const int32_t * yq, int32_t ysum,
                             float dy) {
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    __m512i isum[4];
    for (int p = 0; p < np; p++) {
        ggml_cpu_stream_prefetch(u + p*gstride, Q4P_UNIT, ahead);
        isum[p] = _mm512_set1_epi32(-8 * ysum);
    }
    for (int q = 0; q < 4; q++) {
        const __m512i y0 = _mm512_set1_epi32(yq[q]), y1 = _mm512_set1_epi32(yq[4 + q]);
        for (int p = 0; p < np; p++) {
            const __m512i z = _mm512_loadu_si512(u + p*gstride + 32 + 64*q);
            isum[p] = _mm512_dpbusd_epi32(isum[p], _mm512_and_si512(z, m4), y0);
            isum[p] = _mm512_dpbusd_epi32(isum[p], _mm512_and_si512(_mm512_srli_epi16(z, 4), m4), y1);
        }
    }
    const __m512 vdy = _mm512_set1_ps(dy);
    for (int p = 0; p < np; p++) {
        const __m512 dx = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(u + p*gstride)));
        acc[p] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[p]), _mm512_mul_ps(dx, vdy), acc[p]);
    }
}

static inline void q4p_store(float * out, __m512 acc, int rows) {
    if (rows >= GGML_QPANEL_ROWS) {
        _mm512_storeu_ps(out, acc);
    } else {
        _mm512_mask_storeu_ps(out, (__mmask16)((1u << rows) - 1), acc);
    }
}

// the step of one column (ggml_qpanel_q4_0_run_t, panels.h)
static void q4p_panels(int64_t nb, const uint8_t * grp, int np, int64_t pstride, const block_q8_0 * yb, const int32_t * ys,
                       float * out, int last_p, int rows) {
    const size_t gstride = (size_t)(nb * pstride) * Q4P_UNIT;
    const size_t ahead   = ggml_cpu_stream_ahead_now();   // once: see stream-prefetch.h
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    for (int64_t b = 0; b < nb; b++) {
        int32_t yq[8];
        memcpy(yq, yb[b].qs, sizeof(yq));
        const float dy = _cvtsh_ss(yb[b].d);
        const uint8_t * u = grp + (size_t) b * Q4P_UNIT;
        if (np == 4) {
            q4p_block(acc, u, gstride, 4, ahead, yq, ys[b], dy);
        } else {
            q4p_block(acc, u, gstride, np, ahead, yq, ys[b], dy);
        }
    }
    for (int p = 0; p < np; p++) {
        q4p_store(out + (size_t)(p * pstride) * GGML_QPANEL_ROWS, acc[p], p == last_p ? rows : GGML_QPANEL_ROWS);
    }
}

// the walk of panels.h: 4 streams, the quarters of the call's panels
static void q4_0p_dot__avx512vnni(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                                  const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc) {
    ggml_qpanel_q4_0_walk(nb, panels, ng, nr, y, ys, s, nc, q4p_panels);
}

void ggml_cpu_add_kernels_x86_panel_q4_0(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q4_0, dot_panels, q4_0p_dot__avx512vnni, GGML_CPU_ISA_TAG);
}

#else

void ggml_cpu_add_kernels_x86_panel_q4_0(struct ggml_cpu_kernel_config * cfg) {
    (void) cfg;
}

#endif
