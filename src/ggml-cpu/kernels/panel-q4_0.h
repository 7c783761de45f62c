#pragma once

//
// panel-q4_0.h: Q4_0 weights in panels of 16 rows, the layout of the
// generation kernel that meets 16 rows with one instruction per 4 values
// (the Q4_0 layout of the CPU_REPACK buffer type, repack.h).
//
// A matrix of n rows of k values (k a multiple of 32, nb = k / 32 blocks per
// row) is held as ceil(n / 16) groups of 16 rows; group g is nb units of
// GGML_Q4_0P_UNIT bytes, unit b holding block b of the group's 16 rows:
//
//   bytes   0 ..  31: the 16 blocks' scales (F16), row j at 2 j
//   bytes  32 .. 287: 4 vectors of 64 bytes; vector q, bytes 4 j .. 4 j + 3:
//                     row j's code bytes qs[4 q .. 4 q + 3]
//
// so that, for vector q, the low nibbles are values 4q .. 4q + 3 and the high
// nibbles values 16 + 4q .. 16 + 4q + 3 of all 16 rows, each row in its own
// 32-bit lane: one unsigned x signed byte dot product against a broadcast
// dword of the activations serves 16 rows. The rows past n in the last group
// are zero (scale 0). A unit is the size of 16 blocks: a matrix of a multiple
// of 16 rows takes the bytes of its usual layout.
//

#include "ggml.h"
#include "ggml-common.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GGML_Q4_0P_ROWS 16
#define GGML_Q4_0P_UNIT (GGML_Q4_0P_ROWS * sizeof(block_q4_0))

// bytes of a packed matrix of nrows rows of k values
static inline size_t ggml_q4_0p_matrix_size(int64_t k, int64_t nrows) {
    return (size_t)((nrows + GGML_Q4_0P_ROWS - 1) / GGML_Q4_0P_ROWS) * (size_t)(k / QK4_0) * GGML_Q4_0P_UNIT;
}

// the unit of block b of row r
static inline uint8_t * ggml_q4_0p_unit(void * matrix, int64_t nb, int64_t r, int64_t b) {
    return (uint8_t *) matrix + ((size_t)(r / GGML_Q4_0P_ROWS) * (size_t) nb + (size_t) b) * GGML_Q4_0P_UNIT;
}

// block b of row r into its place
static inline void ggml_q4_0p_put_block(void * matrix, int64_t nb, int64_t r, int64_t b, const block_q4_0 * blk) {
    uint8_t * u = ggml_q4_0p_unit(matrix, nb, r, b);
    const int j = (int)(r % GGML_Q4_0P_ROWS);
    memcpy(u + 2*j, &blk->d, sizeof(ggml_half));
    for (int q = 0; q < 4; q++) {
        memcpy(u + 32 + 64*q + 4*j, blk->qs + 4*q, 4);
    }
}

// block b of row r out of its place
static inline void ggml_q4_0p_get_block(const void * matrix, int64_t nb, int64_t r, int64_t b, block_q4_0 * blk) {
    const uint8_t * u = ggml_q4_0p_unit((void *) matrix, nb, r, b);
    const int j = (int)(r % GGML_Q4_0P_ROWS);
    memcpy(&blk->d, u + 2*j, sizeof(ggml_half));
    for (int q = 0; q < 4; q++) {
        memcpy(blk->qs + 4*q, u + 32 + 64*q + 4*j, 4);
    }
}

// row r's nb blocks out of their places
static inline void ggml_q4_0p_get_row(const void * matrix, int64_t nb, int64_t r, block_q4_0 * row) {
    for (int64_t b = 0; b < nb; b++) {
        ggml_q4_0p_get_block(matrix, nb, r, b, row + b);
    }
}

// Panels . Q8_0 activation rows: s[c][16 g + j] = row j of group g . y[c]
// for the ng groups from `panels` (group after group), the first nr rows
// written (nr <= 16 * ng), nc columns, nb blocks per row. ys[c][b] is the sum
// of the 32 values of y[c]'s block b (ggml_q4_0p_block_sums), computed once
// per column by the caller: the kernels take the codes' offset 8 off as
// 8 x that sum.
typedef void (*ggml_cpu_dot_panels_t)(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                                      const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc);

// the sums of the values of each of the nb blocks of a Q8_0 row
static inline void ggml_q4_0p_block_sums(const block_q8_0 * y, int64_t nb, int32_t * ys) {
    for (int64_t b = 0; b < nb; b++) {
        int32_t sum = 0;
        for (int e = 0; e < QK8_0; e++) {
            sum += y[b].qs[e];
        }
        ys[b] = sum;
    }
}

// the portable kernel (kernels/panel-q4_0.c; it takes the offset off per
// code and does not read ys): the use_ref kernel only, as the panels exist
// only where a vector kernel reads them (repack.h)
void q4_0p_dot__scalar(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                       const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc);
