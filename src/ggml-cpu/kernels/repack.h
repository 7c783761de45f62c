#pragma once

//
// repack.h: the CPU backend's extra buffer type "CPU_REPACK", which stores
// weight matrices already in the layout of the kernel that reads them, so
// that matrix products do not pack them again at every call. Two layouts:
//
//  - BF16: the panel layout of the BF16 tile kernel (gemm-bf16.h). Each
//    matrix (ne2 x ne3 of them) is held as groups of 64 rows, each a k-major
//    run of (k + 1) / 2 pairs of neighbouring values of its 64 rows: pair p
//    of row r of group g is the 32-bit word
//        matrix + (g * ((k + 1) / 2) + p) * 64 + r % 64
//    with the partner of an odd last value, and the rows past the end of the
//    last group, zero. Products of any number of columns take the tile kernel.
//  - Q4_0: panels of 16 rows (panels.h) read by the generation kernel
//    that meets 16 rows with one instruction per 4 values; the rows past the
//    end of the last group are zero. Products of few columns take that
//    kernel; those of many unpack each chunk's rows into the q8 panels of the
//    int8 tile kernel.
//
// A tensor of such a type (not a view, contiguous) placed in a buffer of this
// type is stored in its layout; set_tensor converts from the usual layout,
// get_tensor converts back (so a copy out of the buffer gives the tensor's
// bytes), memset sets the bytes of the usual layout, all on any byte range;
// tensors of other types are stored as they are. The bytes are not the
// tensor's layout, so the type is not host memory, and only MUL_MAT and
// MUL_MAT_ID with such a tensor as src0 (the weights) may use it: the CPU
// device's supports_op refuses every other op that reads a tensor of this
// type, so the scheduler never sends one there.
//
// Each layout exists only where its kernel runs: BF16 where the BF16 tile
// kernel is built, the CPU has AVX512_BF16 and the kernel variant in use
// includes it (GGML_CPU_ISA=avx2 and GGML_CPU_NO_BF16_DOT=1 turn it off);
// Q4_0 where the variant in use has a vector kernel for its panels
// (AVX-512 VNNI, or AVX2 with FMA and F16C). Where neither runs the device's list of extra buffer
// types is empty.
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

// the buffer type, or NULL where no layout of it has its kernel here
ggml_backend_buffer_type_t ggml_backend_cpu_repack_buffer_type(void);

enum ggml_cpu_repack_layout {
    GGML_CPU_REPACK_NONE,    // stored as it is (not in a CPU_REPACK buffer, or not of a packed type)
    GGML_CPU_REPACK_BF16,    // BF16 tile panels
    GGML_CPU_REPACK_PANELS,  // quantized panels of 16 rows (panels.h): Q4_0
};

// the layout t's data is in
enum ggml_cpu_repack_layout ggml_cpu_repack_layout_of(const struct ggml_tensor * t);

// t's data is in a packed layout
bool ggml_cpu_repack_is_packed(const struct ggml_tensor * t);

// bytes of one packed BF16 matrix of nrows rows of k values
size_t ggml_cpu_repack_matrix_size(int64_t k, int64_t nrows);

// bytes of one matrix of a packed tensor, in its layout
size_t ggml_cpu_repack_tensor_matrix_size(const struct ggml_tensor * t);

// the ops the CPU may compute that read a tensor of a CPU_REPACK buffer
// (whatever the other rules of the CPU backend say)
bool ggml_cpu_repack_supports_op(const struct ggml_tensor * op);

// rows [r0, r1) x values [kb, kb + kc) of a packed BF16 matrix of k values
// per row, as F32 rows ldo floats apart (the portable path of the matrix product)
void ggml_cpu_repack_rows_to_f32(const uint32_t * matrix, int64_t k, int64_t r0, int64_t r1, int64_t kb, int64_t kc,
                                 float * out, size_t ldo);

#ifdef __cplusplus
}
#endif
