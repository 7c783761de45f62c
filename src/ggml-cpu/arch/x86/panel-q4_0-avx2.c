// panel-q4_0-avx2.c: the AVX2 dot product of Q4_0 panels (panels.h) and
// Q8_0 activation rows, for the x86 levels below AVX-512 VNNI (whose kernel,
// panel-q4_0-avx512.c, replaces this one where it is built).
//
// Why panels on AVX2: the Q4_0 row dot spends about 14 instructions per
// block and row (unpack, widen, a scalar F16 scale per row and block), which
// holds it to 9 GB/s per thread on a Zen 3 (bench-matmul -g, q4_0, in L3),
// under the memory's speed with 2 threads. In a panel a 256-bit vector
// holds one word of codes of 8 rows: per unit (block b of 16 rows) 8 loads,
// their low and high nibbles, 16 byte products against broadcast activation
// dwords, and one conversion of 8 scales per 8 rows: about 5 instructions
// per block and row.
//
// The integer sums: without VNNI, vpmaddubsw gives pairs of code x
// activation products (|pair| <= 2 x 15 x 127 = 3810); the 8 of a block
// (4 words, low and high nibbles) are added in 16 bits (|sum| <= 30480, no
// overflow) and widened once with vpmaddwd; with AVX-VNNI, vpdpbusd adds
// into 32 bits directly. Either way the sums are exact, and the Q4_0 offset
// comes in as -8 x the activation block's sum. Per row the blocks are summed
// in the order of q4_0p_dot__scalar, with fused multiply-adds, as the
// AVX-512 kernel does: its results, bit for bit.
//
// The streams are those of the AVX-512 kernel: the 4 quarters of the call's
// panels walked side by side, block by block, the panels left over side by
// side at the end; but without the software prefetch that kernel and the
// row dots issue: on the Zen 3 build host (ggml-run --bench --no-mmap,
// llama 2048x8 Q4_0, 2 threads, alternated, tokens/s) 55.8, 61.5, 64.8,
// 62.1, 57.8 without it against 46.4, 47.6, 51.0, 46.0, 54.7 with it 2 KiB
// ahead (and 52-58 for the row dot in the usual layout); with 2 streams
// instead of 4, 54.8-57.6 without, 49.7-62.6 with.

#include "kernels/panels.h"
#include "kernels/kernel-config.h"
#include "ggml-impl.h"

#define Q4P_UNIT (GGML_QPANEL_ROWS * sizeof(block_q4_0))

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && !defined(__AVX512VNNI__)
#include <immintrin.h>

// the sums of one half (8 rows) of a unit's 4 words against the activation
// dwords: isum + sum of code x activation over the block
#if defined(__AVXVNNI__)
#define Q4P_STEP(acc, codes, y) (acc) = _mm256_dpbusd_avx_epi32((acc), (codes), (y))
#define Q4P_WIDEN(acc, base) _mm256_add_epi32((acc), (base))
#define Q4P_ZERO() _mm256_setzero_si256()
#else
#define Q4P_STEP(acc, codes, y) (acc) = _mm256_add_epi16((acc), _mm256_maddubs_epi16((codes), (y)))
#define Q4P_WIDEN(acc, base) _mm256_add_epi32(_mm256_madd_epi16((acc), _mm256_set1_epi16(1)), (base))
#define Q4P_ZERO() _mm256_setzero_si256()
#endif

// acc[2p], acc[2p + 1] (rows 0-7, 8-15 of panel p) + unit u + p gstride .
// activation block (codes yq, sum ysum, scale dy), for np panels read side
// by side: the words of the np units in turn, one line of each at a time
static inline void q4p_block(__m256 * acc, const uint8_t * u, size_t gstride, int np, const int32_t * yq, int32_t ysum,
                             float dy) {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    __m256i isum[8];
    for (int p = 0; p < np; p++) {
        isum[2*p] = isum[2*p + 1] = Q4P_ZERO();
    }
    for (int q = 0; q < 4; q++) {
        const __m256i y0 = _mm256_set1_epi32(yq[q]), y1 = _mm256_set1_epi32(yq[4 + q]);
        for (int p = 0; p < np; p++) {
            for (int h = 0; h < 2; h++) {
                const __m256i z = _mm256_loadu_si256((const __m256i *)(u + p*gstride + 32 + 64*q + 32*h));
                Q4P_STEP(isum[2*p + h], _mm256_and_si256(z, m4), y0);
                Q4P_STEP(isum[2*p + h], _mm256_and_si256(_mm256_srli_epi16(z, 4), m4), y1);
            }
        }
    }
    const __m256i base = _mm256_set1_epi32(-8 * ysum);
    const __m256  vdy  = _mm256_set1_ps(dy);
    for (int p = 0; p < np; p++) {
        for (int h = 0; h < 2; h++) {
            const __m256 dx = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(u + p*gstride + 16*h)));
            const __m256i s = Q4P_WIDEN(isum[2*p + h], base);
            acc[2*p + h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dx, vdy), acc[2*p + h]);
        }
    }
}

static inline void q4p_store(float * out, const __m256 * acc, int rows) {
    if (rows >= GGML_QPANEL_ROWS) {
        _mm256_storeu_ps(out, acc[0]);
        _mm256_storeu_ps(out + 8, acc[1]);
        return;
    }
    float tmp[GGML_QPANEL_ROWS];
    _mm256_storeu_ps(tmp, acc[0]);
    _mm256_storeu_ps(tmp + 8, acc[1]);
    memcpy(out, tmp, (size_t) rows * sizeof(float));
}

// the step of one column (ggml_qpanel_q4_0_run_t, panels.h)
static void q4p_panels(int64_t nb, const uint8_t * grp, int np, int64_t pstride, const block_q8_0 * yb, const int32_t * ys,
                       float * out, int last_p, int rows) {
    const size_t gstride = (size_t)(nb * pstride) * Q4P_UNIT;
    __m256 acc[8];
    for (int i = 0; i < 8; i++) {
        acc[i] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        int32_t yq[8];
        memcpy(yq, yb[b].qs, sizeof(yq));
        const float dy = _cvtsh_ss(yb[b].d);
        const uint8_t * u = grp + (size_t) b * Q4P_UNIT;
        if (np == 4) {
            q4p_block(acc, u, gstride, 4, yq, ys[b], dy);
        } else {
            q4p_block(acc, u, gstride, np, yq, ys[b], dy);
        }
    }
    for (int p = 0; p < np; p++) {
        q4p_store(out + (size_t)(p * pstride) * GGML_QPANEL_ROWS, acc + 2*p, p == last_p ? rows : GGML_QPANEL_ROWS);
    }
}

// the walk of panels.h: 4 streams, the quarters of the call's panels
static void q4_0p_dot__avx2(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                            const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc) {
    ggml_qpanel_q4_0_walk(nb, panels, ng, nr, y, ys, s, nc, q4p_panels);
}

void ggml_cpu_add_kernels_x86_panel_q4_0_avx2(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q4_0, dot_panels, q4_0p_dot__avx2, GGML_CPU_ISA_TAG);
}

#else

void ggml_cpu_add_kernels_x86_panel_q4_0_avx2(struct ggml_cpu_kernel_config * cfg) {
    (void) cfg;
}

#endif
