#pragma once

//
// gemm-bf16.h: the BF16 tile kernel of matrix products with many columns, on
// the AVX-512 BF16 dot-product instruction (vdpbf16ps), chosen at run time.
//
// It is the packed float kernel of gemm.h with BF16 rows and columns: C[j][i]
// (+)= A row i . B[j] over k values, a tile of 64 rows x 6 columns
// accumulating in float registers, two products per lane and step.
// arch/x86/gemm-bf16.c is compiled for the instructions it uses whatever the
// rest of the build targets (in the host part, once); the kernel variants call
// it only where their kernel configuration's gemm_bf16 says it runs
// (kernel-config.h), the host part where ggml_gemm_bf16_available() does.
// This header includes nothing compiled for other instructions.
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

// Weight rows as pairs of neighbours, k-major in groups of
// 64 rows (panel[g][k/2][r], rows past the end and the partner of an odd
// last value zero), a tile of 64 rows x 6 columns per pair of k. pack: nrows
// rows of kc values, lda values apart, into panel (GGML_PAD(nrows, 64) *
// (kc + 1) / 2 pairs). The columns of an odd kc are read one value past the
// end: that value must be zero.
void ggml_gemm_bf16p_pack(int64_t nrows, int64_t kc, const uint16_t * A, size_t lda, uint32_t * panel);
// C[j][i] (+)= panel row i . B[j] over kc values, i < nrows, j < ncols; the
// group of rows g starts at panel + g * group_pairs * 64 ((kc + 1) / 2 for a
// panel packed as above; more for a k block of a panel packed over a longer
// k, as the repacked weights of repack.h are)
void ggml_gemm_bf16p(int64_t nrows, int64_t ncols, int64_t kc, const uint32_t * panel, size_t group_pairs,
                     const void * const * B, float * const * C, bool accumulate);

#ifdef __cplusplus
}
#endif
