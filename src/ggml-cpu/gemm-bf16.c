// gemm-bf16.c: the BF16 tile kernel (gemm-bf16.h), for CPUs with AVX512_BF16.
//
// This file alone is compiled with -mavx512bf16 (and AVX-512 F/BW/VL); it
// includes no header with inline code that other files compile for other
// instructions, so nothing of it can end up in code that runs on CPUs
// without them. ggml_gemm_bf16_available, in cpu-features.c, says when it
// may run.
//
// The tile is 4 rows x 6 columns, as the float kernel's: 24 accumulators, the
// 4 row vectors and one column vector in the 32 registers. A step reads 32
// BF16 values of each row and column, and vdpbf16ps adds the products of
// each pair of neighbours to one float lane: twice the work of a float FMA
// per instruction. The instruction rounds each addition to nearest even and
// treats denormal inputs and results as zero.

#include "gemm-bf16.h"

#include <immintrin.h>

#define GB_RM 4
#define GB_RN 6
#define GB_W  32 // BF16 values per vector

static inline __m512bh gb_load(const uint16_t * p) {
    return (__m512bh) _mm512_loadu_si512((const void *) p);
}

static inline __m512bh gb_load_part(const uint16_t * p, int64_t n) {
    const __mmask32 mask = (__mmask32)(n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1);
    return (__m512bh) _mm512_maskz_loadu_epi16(mask, (const void *) p);
}

static void gb_tile(int64_t k, const uint16_t * const * a, const uint16_t * const * b, float out[GB_RM][GB_RN]) {
    __m512 acc[GB_RM][GB_RN];
    for (int r = 0; r < GB_RM; r++) {
        for (int c = 0; c < GB_RN; c++) {
            acc[r][c] = _mm512_setzero_ps();
        }
    }
    int64_t i = 0;
    for (; i + GB_W <= k; i += GB_W) {
        __m512bh av[GB_RM];
        for (int r = 0; r < GB_RM; r++) {
            av[r] = gb_load(a[r] + i);
        }
        for (int c = 0; c < GB_RN; c++) {
            __m512bh bv = gb_load(b[c] + i);
            // one load per column vector, not one per use (see GGML_GEMM_KEEP_IN_REG)
            __asm__("" : "+v"(bv));
            for (int r = 0; r < GB_RM; r++) {
                acc[r][c] = _mm512_dpbf16_ps(acc[r][c], av[r], bv);
            }
        }
    }
    if (i < k) {
        // zeros past the end on both sides: their products are 0
        __m512bh av[GB_RM];
        for (int r = 0; r < GB_RM; r++) {
            av[r] = gb_load_part(a[r] + i, k - i);
        }
        for (int c = 0; c < GB_RN; c++) {
            const __m512bh bv = gb_load_part(b[c] + i, k - i);
            for (int r = 0; r < GB_RM; r++) {
                acc[r][c] = _mm512_dpbf16_ps(acc[r][c], av[r], bv);
            }
        }
    }
    for (int r = 0; r < GB_RM; r++) {
        for (int c = 0; c < GB_RN; c++) {
            out[r][c] = _mm512_reduce_add_ps(acc[r][c]);
        }
    }
}

// the walk of gemm.h: column groups outside, row groups inside; edge tiles
// repeat their last row / column and drop the extra results
void ggml_gemm_bf16(int64_t nrows, int64_t ncols, int64_t k,
                    const uint16_t * A, size_t lda, const void * const * B, float * const * C,
                    bool accumulate) {
    for (int64_t j0 = 0; j0 < ncols; j0 += GB_RN) {
        const int64_t nc = ncols - j0 < GB_RN ? ncols - j0 : GB_RN;
        const uint16_t * b[GB_RN];
        for (int c = 0; c < GB_RN; c++) {
            b[c] = (const uint16_t *) B[j0 + (c < nc ? c : nc - 1)];
        }
        for (int64_t i0 = 0; i0 < nrows; i0 += GB_RM) {
            const int64_t nr = nrows - i0 < GB_RM ? nrows - i0 : GB_RM;
            const uint16_t * a[GB_RM];
            for (int r = 0; r < GB_RM; r++) {
                a[r] = A + (size_t)(i0 + (r < nr ? r : nr - 1)) * lda;
            }
            float out[GB_RM][GB_RN];
            gb_tile(k, a, b, out);
            for (int64_t c = 0; c < nc; c++) {
                float * dst = C[j0 + c] + i0;
                for (int64_t r = 0; r < nr; r++) {
                    dst[r] = accumulate ? dst[r] + out[r][c] : out[r][c];
                }
            }
        }
    }
}
