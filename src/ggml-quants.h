#pragma once

//
// ggml-quants.h: reference quantization and dequantization of the block
// formats in ggml-common.h. These are the scalar definitions of the formats:
// the bytes they produce are the bytes upstream ggml produces. Backends may
// have faster versions that must agree with these.
//

#include "ggml-common.h"
#include "ggml-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

// k values of x -> k/QK blocks at y (k must be a multiple of the block size)
GGML_API void quantize_row_q4_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q4_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q5_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q5_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q8_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q8_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q2_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q3_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q4_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q5_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q6_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q8_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);

// k/QK blocks at x -> k values at y
GGML_API void dequantize_row_q4_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q4_1(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q5_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q5_1(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q8_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q8_1(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q2_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q3_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q4_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q5_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q6_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q8_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);

// nrows rows of n_per_row values (a multiple of the block size); returns the
// bytes written. Without imatrix each row is the reference quantizer's. With
// imatrix (n_per_row non-negative importance weights, the same for every row)
// each block is upstream's weighted fit: weights imatrix[j]*sqrt(sigma2 + x[j]^2)
// (sigma2 the mean square of the row), a search of scales (and minimums)
// around the absmax (min/max) one, least-squares refits; the bytes are
// upstream's. q8_0 ignores imatrix.
GGML_API size_t quantize_q4_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q4_1(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q5_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q5_1(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q8_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

// K-quants: without imatrix, the reference quantizer's rows; with imatrix,
// upstream's weighted search (the bytes are upstream's in both cases)
GGML_API size_t quantize_q2_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q3_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q4_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q5_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q6_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

// IQ4_NL, IQ4_XS, MXFP4 (ggml-quants-iq4.c). quantize_iq4_nl searches more
// scales than quantize_row_iq4_nl_ref (as upstream's); mxfp4 ignores imatrix.
GGML_API void quantize_row_iq4_nl_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_iq4_xs_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_mxfp4_ref (const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_iq4_nl(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_iq4_xs(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_mxfp4 (const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API size_t quantize_iq4_nl(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_iq4_xs(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_mxfp4 (const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

// TQ1_0, TQ2_0 (ggml-quants-tq.c); imatrix is ignored, as upstream does.
// ggml_tq*_values: the 256 values of a block as -1, 0, 1.
GGML_API void quantize_row_tq1_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_tq2_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_tq1_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_tq2_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API size_t quantize_tq1_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_tq2_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API void ggml_tq1_0_values(const void * block, int8_t * values);
GGML_API void ggml_tq2_0_values(const void * block, int8_t * values);

// The grid types IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S (ggml-quants-iq.c).
// iq2_xxs and iq2_xs need an importance matrix (they assert one); the
// others fall back to x^2-based weights without one, as upstream's do. The
// quantizers build their search tables on first use (ggml_quantize_init).
GGML_API void quantize_row_iq2_s_ref  (const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_iq3_xxs_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_iq3_s_ref  (const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_iq2_xxs(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_iq2_xs (const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_iq2_s  (const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_iq3_xxs(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_iq3_s  (const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API size_t quantize_iq2_xxs(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_iq2_xs (const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_iq2_s  (const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_iq3_xxs(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_iq3_s  (const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

// IQ1_S (an imatrix is required) and IQ1_M (ggml-quants-iq1.c); neither has
// a reference row quantizer, as upstream
GGML_API void dequantize_row_iq1_s(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_iq1_m(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API size_t quantize_iq1_s(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_iq1_m(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
// the fp16 super-block scale of an iq1_m block (spread over its scales)
GGML_API float ggml_iq1_m_scale(const block_iq1_m * b);

// Q1_0, Q2_0, NVFP4 (ggml-quants-lowbit.c); imatrix is ignored, as upstream
GGML_API void quantize_row_q1_0_ref (const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_q2_0_ref (const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void quantize_row_nvfp4_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q1_0 (const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q2_0 (const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_nvfp4(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API size_t quantize_q1_0 (const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q2_0 (const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_nvfp4(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
// UE4M3 scales of nvfp4: half the value (the E2M1 table is doubled), and from fp32
GGML_API float   ggml_ue4m3_to_fp32_half(uint8_t x);
GGML_API uint8_t ggml_fp32_to_ue4m3(float x);

// the 6-bit scale (0..63, stored + 32) of sub-block ib of an iq4_xs block
static inline int ggml_iq4_xs_scale(const block_iq4_xs * b, int ib) {
    return ((b->scales_l[ib/2] >> (4*(ib%2))) & 0x0F) | (((b->scales_h >> (2*ib)) & 3) << 4);
}

// Upstream's scale searches (ggml-quants-k.c), shared with the weighted
// quantizers of the 32-value formats. Symmetric: codes nmax + [-nmax, nmax)
// fitted under weights w (x^2 when NULL), returns the scale. Affine: codes
// [0, nmax] with x ~ scale*L - *the_min, nstep+1 candidate scales.
float ggml_quant_search_symmetric(int n, int nmax, const float * x, int8_t * L, const float * w);
float ggml_quant_search_affine(int n, int nmax, const float * x, const float * w, uint8_t * L, float * the_min,
                               uint8_t * Laux, float rmin, float rdelta, int nstep, bool use_mad);
// Non-negative: codes [0, nmax] for non-negative x under weights w, nine
// scales around nmax/max, then single-code moves (upstream's make_qp_quants).
float ggml_quant_search_positive(int n, int nmax, const float * x, uint8_t * L, const float * w);

// the 6-bit scale and minimum of sub-block j (0..7) of a q4_K / q5_K block
static inline void ggml_k_scale_min(int j, const uint8_t * scales, int * sc, int * m) {
    if (j < 4) {
        *sc = scales[j] & 63;
        *m  = scales[j + 4] & 63;
    } else {
        *sc = (scales[j + 4] & 0x0F) | ((scales[j - 4] >> 6) << 4);
        *m  = (scales[j + 4] >>   4) | ((scales[j]     >> 6) << 4);
    }
}

// the 16 6-bit scales of a q3_K block, minus 32
static inline void ggml_q3_K_scales(const uint8_t * scales, int * sc) {
    for (int j = 0; j < 16; j++) {
        const int low  = j < 8 ? scales[j] & 0x0F : scales[j - 8] >> 4;
        const int high = (scales[8 + j%4] >> (2*(j/4))) & 3;
        sc[j] = (low | (high << 4)) - 32;
    }
}

#ifdef __cplusplus
}
#endif
