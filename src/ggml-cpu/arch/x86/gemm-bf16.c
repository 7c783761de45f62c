// gemm-bf16.c: the BF16 tile kernel (gemm-bf16.h), for CPUs with AVX512_BF16.
//
// This file alone is compiled with -mavx512bf16 (and AVX-512 F/BW/VL); it
// includes no header with inline code that other files compile for other
// instructions, so nothing of it can end up in code that runs on CPUs
// without them. ggml_gemm_bf16_available, in cpu-features.c, says when it
// may run.
//
// vdpbf16ps adds the products of a pair of neighbouring BF16 values to one
// float lane: 32 products per instruction, twice the work of a float FMA. It
// rounds each addition to nearest even and treats denormal inputs and
// results as zero.

#include "kernels/gemm-bf16.h"

#include <immintrin.h>
#include <string.h>

//
// The weight rows are packed as pairs of neighbours (k, k+1), one pair per
// 32-bit lane, k-major in groups of 64 rows; a step of the tile loads one
// pair of 64 rows (4 vectors), broadcasts one pair of each of 6 columns and
// makes 24 vdpbf16ps: 4 vector loads where a dot-product tile (rows and
// columns both along k) makes 10, which at two instructions a cycle takes
// nearly all the L2 bandwidth (measured: 77% of the instruction's peak
// against 88-90% packed, m=k=4096 n=512, one thread, by CPU time).
//

#define GBP_ROWS 64
#define GBP_VECS 4
#define GBP_RN   6

// 16 x 16 32-bit values transposed in registers: r[i] holds row i; after,
// r[c] holds column c (the moves do not look at the values)
static inline void gbp_transpose16(__m512i r[16]) {
    __m512 u[16];
    for (int g = 0; g < 4; g++) {
        const __m512 r0 = _mm512_castsi512_ps(r[4*g + 0]), r1 = _mm512_castsi512_ps(r[4*g + 1]);
        const __m512 r2 = _mm512_castsi512_ps(r[4*g + 2]), r3 = _mm512_castsi512_ps(r[4*g + 3]);
        const __m512 t0 = _mm512_unpacklo_ps(r0, r1), t1 = _mm512_unpackhi_ps(r0, r1);
        const __m512 t2 = _mm512_unpacklo_ps(r2, r3), t3 = _mm512_unpackhi_ps(r2, r3);
        u[4*g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
        u[4*g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
        u[4*g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
        u[4*g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    }
    for (int x = 0; x < 4; x++) {
        const __m512 w0 = _mm512_shuffle_f32x4(u[x], u[4 + x], 0x88);
        const __m512 w1 = _mm512_shuffle_f32x4(u[x], u[4 + x], 0xDD);
        const __m512 w2 = _mm512_shuffle_f32x4(u[8 + x], u[12 + x], 0x88);
        const __m512 w3 = _mm512_shuffle_f32x4(u[8 + x], u[12 + x], 0xDD);
        r[x + 0]  = _mm512_castps_si512(_mm512_shuffle_f32x4(w0, w2, 0x88));
        r[x + 4]  = _mm512_castps_si512(_mm512_shuffle_f32x4(w1, w3, 0x88));
        r[x + 8]  = _mm512_castps_si512(_mm512_shuffle_f32x4(w0, w2, 0xDD));
        r[x + 12] = _mm512_castps_si512(_mm512_shuffle_f32x4(w1, w3, 0xDD));
    }
}

void ggml_gemm_bf16p_pack(int64_t nrows, int64_t kc, const uint16_t * A, size_t lda, uint32_t * panel) {
    const int64_t np = (kc + 1) / 2;
    for (int64_t g0 = 0; g0 < nrows; g0 += GBP_ROWS) {
        uint32_t * p = panel + (size_t)(g0 / GBP_ROWS) * (size_t) np * GBP_ROWS;
        const int64_t nr = nrows - g0 < GBP_ROWS ? nrows - g0 : GBP_ROWS;
        for (int64_t r0 = 0; r0 < GBP_ROWS; r0 += 16) {
            for (int64_t i = 0; i < np; i += 16) {
                // 32 values from 2i: an odd last value gets a zero partner
                const int64_t nv = kc - 2*i;
                const __mmask32 mask = (__mmask32)(nv >= 32 ? 0xFFFFFFFFu : (1u << nv) - 1);
                __m512i r[16];
                for (int q = 0; q < 16; q++) {
                    r[q] = r0 + q < nr ? _mm512_maskz_loadu_epi16(mask, A + (size_t)(g0 + r0 + q) * lda + 2*i)
                                       : _mm512_setzero_si512();
                }
                gbp_transpose16(r);
                const int64_t m = np - i < 16 ? np - i : 16;
                for (int64_t c = 0; c < m; c++) {
                    _mm512_storeu_si512((void *)(p + (size_t)(i + c) * GBP_ROWS + r0), r[c]);
                }
            }
        }
    }
}

// a tile of 64 rows x RN columns (RN <= GBP_RN, a constant where it is
// inlined: the few columns of generation make narrower tiles, not repeated
// columns)
static inline __attribute__((always_inline)) void gbp_tile(int64_t np, const uint32_t * p, const uint16_t * const * b,
                                                           float * const * c, int64_t nr, int RN, bool accumulate) {
    __m512 acc[GBP_VECS][GBP_RN];
    for (int q = 0; q < GBP_VECS; q++) {
        for (int j = 0; j < RN; j++) {
            acc[q][j] = _mm512_setzero_ps();
        }
    }
    for (int64_t i = 0; i < np; i++) {
        __m512bh av[GBP_VECS];
        for (int q = 0; q < GBP_VECS; q++) {
            av[q] = (__m512bh) _mm512_loadu_si512((const void *)(p + (size_t) i * GBP_ROWS + 16 * q));
        }
        for (int j = 0; j < RN; j++) {
            int32_t pair;
            memcpy(&pair, b[j] + 2*i, sizeof(pair));
            __m512bh bv = (__m512bh) _mm512_set1_epi32(pair);
            __asm__("" : "+v"(bv));
            for (int q = 0; q < GBP_VECS; q++) {
                acc[q][j] = _mm512_dpbf16_ps(acc[q][j], av[q], bv);
            }
        }
    }
    for (int j = 0; j < RN; j++) {
        for (int q = 0; q < GBP_VECS && 16 * q < nr; q++) {
            float * dst = c[j] + 16 * q;
            const int64_t m = nr - 16 * q < 16 ? nr - 16 * q : 16;
            const __mmask16 mask = (__mmask16)(m == 16 ? 0xFFFFu : (1u << m) - 1);
            __m512 v = acc[q][j];
            if (accumulate) {
                v = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, dst), v);
            }
            _mm512_mask_storeu_ps(dst, mask, v);
        }
    }
}

static void gbp_tile_cols(int64_t np, const uint32_t * p, const uint16_t * const * b, float * const * c, int64_t nr,
                          int64_t nc, bool accumulate) {
    switch (nc) {
        case 1:  gbp_tile(np, p, b, c, nr, 1, accumulate); break;
        case 2:  gbp_tile(np, p, b, c, nr, 2, accumulate); break;
        case 3:  gbp_tile(np, p, b, c, nr, 3, accumulate); break;
        case 4:  gbp_tile(np, p, b, c, nr, 4, accumulate); break;
        case 5:  gbp_tile(np, p, b, c, nr, 5, accumulate); break;
        default: gbp_tile(np, p, b, c, nr, GBP_RN, accumulate); break;
    }
}

void ggml_gemm_bf16p(int64_t nrows, int64_t ncols, int64_t kc, const uint32_t * panel, size_t group_pairs,
                     const void * const * B, float * const * C, bool accumulate) {
    const int64_t np = (kc + 1) / 2;
    for (int64_t j0 = 0; j0 < ncols; j0 += GBP_RN) {
        const int64_t nc = ncols - j0 < GBP_RN ? ncols - j0 : GBP_RN;
        const uint16_t * b[GBP_RN];
        for (int64_t j = 0; j < nc; j++) {
            b[j] = (const uint16_t *) B[j0 + j];
        }
        for (int64_t g0 = 0; g0 < nrows; g0 += GBP_ROWS) {
            float * c[GBP_RN];
            for (int64_t j = 0; j < nc; j++) {
                c[j] = C[j0 + j] + g0;
            }
            gbp_tile_cols(np, panel + (size_t)(g0 / GBP_ROWS) * group_pairs * GBP_ROWS, b, c,
                          nrows - g0 < GBP_ROWS ? nrows - g0 : GBP_ROWS, nc, accumulate);
        }
    }
}
