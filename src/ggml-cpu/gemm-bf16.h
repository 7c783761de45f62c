#pragma once

//
// gemm-bf16.h: the BF16 tile kernel of matrix products with many columns, on
// the AVX-512 BF16 dot-product instruction (vdpbf16ps), chosen at run time.
//
// It is the float kernel of gemm.h with BF16 rows and columns: C[j][i] (+)=
// A row i . B[j] over k values, a tile of rows x columns accumulating in
// float registers, two products per lane and step. gemm-bf16.c is compiled
// for the instructions it uses whatever the rest of the build targets; call
// it only where ggml_gemm_bf16_available() says the CPU has them. This
// header includes nothing compiled for other instructions.
//

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// the kernel is built in and this CPU (and OS) run it; false with
// GGML_CPU_NO_BF16_DOT set in the environment (to measure or test the float path)
bool ggml_gemm_bf16_available(void);

// C[j][i] (+)= dot(A + i*lda, B[j]) over k BF16 values, i < nrows, j < ncols
void ggml_gemm_bf16(int64_t nrows, int64_t ncols, int64_t k,
                    const uint16_t * A, size_t lda, const void * const * B, float * const * C,
                    bool accumulate);

#ifdef __cplusplus
}
#endif
