#pragma once

//
// repack-bf16.h: the CPU backend's extra buffer type "CPU_REPACK", which
// stores BF16 weight matrices already in the panel layout of the BF16 tile
// kernel (gemm-bf16.h), so that matrix products do not pack them again at
// every call.
//
// A BF16 tensor (not a view, contiguous) placed in a buffer of this type is
// held, matrix by matrix (ne2 x ne3 of them), as groups of 64 rows, each a
// k-major run of (k + 1) / 2 pairs of neighbouring values of its 64 rows:
// pair p of row r of group g is the 32-bit word
//     matrix + (g * ((k + 1) / 2) + p) * 64 + r % 64
// with the partner of an odd last value, and the rows past the end of the
// last group, zero. set_tensor converts from the usual layout, get_tensor
// converts back (so a copy out of the buffer gives the tensor's values);
// tensors of other types are stored as they are. The bytes are not the
// tensor's layout, so the type is not host memory, and only MUL_MAT and
// MUL_MAT_ID with such a tensor as src0 (the weights) may use it: the CPU
// device's supports_op refuses every other op that reads a tensor of this
// type, so the scheduler never sends one there.
//
// It exists only where the BF16 tile kernel runs (built in, the CPU has
// AVX512_BF16, the kernel variant in use includes it: GGML_CPU_ISA=avx2 and
// GGML_CPU_NO_BF16_DOT=1 turn it off); elsewhere the device's list of extra
// buffer types is empty.
//

#include "ggml.h"
#include "ggml-backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_CPU_REPACK_ROWS 64

// the buffer type, or NULL where the BF16 tile kernel does not run
ggml_backend_buffer_type_t ggml_backend_cpu_repack_buffer_type(void);

// t's data is in the packed layout (t is BF16, in a CPU_REPACK buffer, not a view)
bool ggml_cpu_repack_is_packed(const struct ggml_tensor * t);

// bytes of one packed matrix of nrows rows of k values
size_t ggml_cpu_repack_matrix_size(int64_t k, int64_t nrows);

// the ops the CPU may compute that read a tensor of a CPU_REPACK buffer
// (whatever the other rules of the CPU backend say)
bool ggml_cpu_repack_supports_op(const struct ggml_tensor * op);

// rows [r0, r1) x values [kb, kb + kc) of a packed matrix of k values per
// row, as F32 rows ldo floats apart (the portable path of the matrix product)
void ggml_cpu_repack_rows_to_f32(const uint32_t * matrix, int64_t k, int64_t r0, int64_t r1, int64_t kb, int64_t kc,
                                 float * out, size_t ldo);

#ifdef __cplusplus
}
#endif
