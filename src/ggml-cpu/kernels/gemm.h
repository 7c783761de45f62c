#pragma once

//
// gemm.h: the register-blocked kernels of matrix products with many columns.
//
// A block of weight rows (A) meets a block of activation columns (B); every
// result C[j][i] = sum_k A[i][k] * B[j][k] is one dot product. The kernels
// compute tiles of several rows x several columns at once, so that each value
// loaded is used several times, and walk the tiles column group by column
// group, so that a few B columns stay in L1 while the A block (in L2) streams
// past them. The caller blocks over k (the results are accumulated) and over
// rows and columns (threads take such chunks).
//
// C[j] is the destination of column j (rows contiguous); an edge tile that
// is only partly inside the block repeats its last row / column and drops
// the extra results, so every result is computed by the same sequence of
// operations wherever it lies, and therefore independent of the blocking.
//
// Two families:
//  - float: A rows and B columns are F32 (weights of other float types are
//    converted into an F32 panel first).
//  - int8: A and B are "q8 panels" (below), the interleaved form of rows of
//    block-quantized values; the integer dot products of 32-value blocks are
//    scaled by the two block scales.
//

#include "simd/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

// for the small kernel helpers whose constant arguments must reach the loops
#if defined(__GNUC__)
#define GGML_GEMM_INLINE inline __attribute__((always_inline))
#else
#define GGML_GEMM_INLINE inline
#endif

// Keeps a loaded vector in a register. Without it GCC folds the load into
// every instruction that uses the value: RM loads of each column vector per
// step instead of one, and the loads, not the arithmetic, set the pace
// (measured: the float tile went from 82% to 98% of the FMA peak).
// (x86 only: an arm64 instruction takes no memory operand, and "v" is no register class there)
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define GGML_GEMM_KEEP_IN_REG(v) __asm__("" : "+v"(v))
#else
#define GGML_GEMM_KEEP_IN_REG(v) ((void) 0)
#endif

// The walk over the tiles of a block (column groups outside, row groups
// inside; edge tiles repeat their last row / column) is gemm-walk-tmpl.h,
// included once per tile shape.

//
// float
//

// C[j][i] (+)= dot(A + i*lda, B[j]) over k values, i < nrows, j < ncols
void ggml_gemm_f32(int64_t nrows, int64_t ncols, int64_t k,
                   const float * A, size_t lda, const void * const * B, float * const * C,
                   bool accumulate, bool use_ref);

// The packed form, with AVX-512 (ggml_gemm_f32p_available): weight rows
// packed k-major in groups of GGML_F32P_ROWS (panel[g][k][r], rows past the
// end zero), a tile of 64 rows x 6 columns per step of k; each result is one
// sequential sum over k. pack: nrows rows of kc values, lda floats apart, into
// panel (GGML_PAD(nrows, GGML_F32P_ROWS) * kc floats).
#define GGML_F32P_ROWS 64
bool ggml_gemm_f32p_available(void);
void ggml_gemm_f32p_pack(int64_t nrows, int64_t kc, const float * A, size_t lda, float * panel);
// C[j][i] (+)= panel row i . B[j] over kc values, i < nrows, j < ncols
void ggml_gemm_f32p(int64_t nrows, int64_t ncols, int64_t kc, const float * panel,
                    const void * const * B, float * const * C, bool accumulate);

// The outer-product form (OUT_PROD): C[r][v] = sum over i < n of
// b(r, i) * A[i][v], for r < nrows and v < nv, where A rows are lda floats
// apart and b(r, i) is the float at B + r*b_row + i*b_col (any strides).
// Each result is one sequential sum over i.
void ggml_gemm_f32_outer(int64_t nrows, int64_t nv, int64_t n, const float * A, size_t lda,
                         const char * B, size_t b_row, size_t b_col, float * const * C, bool use_ref);

//
// int8 (q8 panels)
//
// A q8 panel holds one row of k values (k a multiple of 32) as superblocks of
// GGML_Q8P_LANES blocks of 32 values; a superblock is
//     int8 codes[8][LANES][4]   group g (values 4g..4g+3) of block l at [g][l]
//     float d[LANES]            block scales
//     float c[LANES]            weight panels: the block's constant term
//                               activation panels: d * (sum of the block's codes)
// so that one SIMD register of group g holds that group of every block, and
// integer lane l accumulates block l alone. Missing blocks of the last
// superblock are zero. A result is
//     sum over blocks of  dA*dB * (codes A . codes B)  +  cA * cB
// where weight codes are either signed values (cA = the affine minimum, or 0),
// or, for the vector kernels with VNNI, the unsigned codes u = v + o with
// cA = -o*dA (+ the minimum), which the unsigned x signed instructions need.
// Weight panels are made for one kernel family (use_ref or not); activation
// panels suit both.
//

#if defined(GGML_VEC_AVX512)
#define GGML_Q8P_LANES 16
#else
#define GGML_Q8P_LANES 8
#endif

#define GGML_Q8P_SB_BYTES (GGML_Q8P_LANES * (32 + 2 * (int) sizeof(float)))

// bytes of the panel of one row of k values
size_t ggml_q8p_row_size(int64_t k);

// The packers (weight row of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K,
// IQ4_NL, IQ4_XS, MXFP4; Q2_K, Q3_K, Q6_K in the halves form below -> panel)
// and the tile kernels (C[j][i] (+)= A row i . B[j] over nsb superblocks)
// are entries of the kernel configuration, per weight type (kernel-config.h):
// kernels/gemm-q8.c adds the portable and the x86 ones, arch/arm/gemm-q8-neon.c
// the arm64 tiles.

// activation row of Q8_0, Q8_1 or Q8_K blocks -> panel (the same panel for both kernel families)
void ggml_q8p_pack_act(enum ggml_type type, const void * row, int64_t k, void * panel);

// The halves form, for the K-quants whose scales cover 16 values (Q2_K,
// Q3_K, Q6_K): the same codes, with a scale and a constant term for each
// half (groups 4h..4h+3, 16 values) of every block:
//     int8 codes[8][LANES][4]
//     float d[2][LANES]
//     float c[2][LANES]     activation panels: d * (sum of the half's codes)
// A result is
//     sum over blocks and halves of  dA*dB * (codes A . codes B)  +  cA * cB
// (the plain form is the one-half case of the same layout). For Q3_K and
// Q6_K, which have no minima, the unsigned kernels' offset o is applied in
// the integers instead: their activation panels hold the int32 values
// -o * (sum of the half's codes) in c, and the c of their weight panels is
// unused. Activation panels are thus made for one weight type.
#define GGML_Q8P2_SB_BYTES (GGML_Q8P_LANES * (32 + 4 * (int) sizeof(float)))

// whether the panels of weight type `type` are in the halves form
bool ggml_q8p_has_halves(enum ggml_type type);

// bytes of the halves panel of one row of k values
size_t ggml_q8p2_row_size(int64_t k);

// activation row of Q8_K blocks -> halves panel for weights of `type` (both kernel families)
void ggml_q8p2_pack_act(enum ggml_type type, const void * row, int64_t k, void * panel);

#ifdef __cplusplus
}
#endif
