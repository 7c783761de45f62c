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

// k/QK blocks at x -> k values at y
GGML_API void dequantize_row_q4_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q4_1(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q5_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q5_1(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q8_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);
GGML_API void dequantize_row_q8_1(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k);

// nrows rows of n_per_row values (a multiple of the block size); returns the
// bytes written. Without imatrix each row is the reference quantizer's. With
// imatrix (n_per_row non-negative importance weights, the same for every row)
// each block minimises sum w[j]*(x[j] - dequantized[j])^2 over a search of
// scales (and minimums) that includes the reference block, so the weighted
// error is never larger than without imatrix. The search is ours: its bytes
// differ from upstream's imatrix quantization. q8_0 ignores imatrix.
GGML_API size_t quantize_q4_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q4_1(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q5_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q5_1(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);
GGML_API size_t quantize_q8_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix);

#ifdef __cplusplus
}
#endif
