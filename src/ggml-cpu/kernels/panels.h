#pragma once

//
// panels.h: quantized weights in panels of 16 rows, the layout of the
// generation kernels that meet 16 rows with one instruction per 4 values
// (the Q4_0 layout of the CPU_REPACK buffer type, repack.h).
//
// A block of such a type is nh F16 values (the scales) followed by nw 32-bit
// words (the codes); Q4_0: nh = 1 (d), nw = 4 (qs[16]). (Q4_K, nh = 2 and
// nw = 35, had this layout and an AVX-512 VNNI kernel on branch q4k-panels:
// 1.65x the row dot with the matrix in L3, but no faster than the row dot
// streaming a model from memory, which the row dot already keeps up with;
// not taken. Again on a 2-core Zen 4, 16 rows a VNNI step, the scales of
// 16 rows decoded by shifts of 3 vectors: 0.42 against 0.67 ns per 32
// weights in L2, one thread, and with 2 threads streaming 100 MB of
// [2048 x 5632] products, alternated with a plain read, 85.7-103% of it
// against the row dot's 95-110% (prefetch 256 B to 8 KiB ahead); not taken.)
//
// A matrix of n rows of k values (nb blocks per row) is held as
// ceil(n / 16) groups of 16 rows; group g is nb units of 16 blocks' bytes,
// unit b holding block b of the group's 16 rows:
//
//   bytes 32 h + 2 j:            F16 value h of row j's block    (h < nh)
//   bytes 32 nh + 64 q + 4 j:    word q of row j's block         (q < nw)
//
// so that word q of 16 rows is one 64-byte vector, each row in its own
// 32-bit lane: one unsigned x signed byte dot product against a broadcast
// dword of the activations serves 16 rows. The rows past n in the last group
// are zero (scale 0). A unit is the size of 16 blocks: a matrix of a multiple
// of 16 rows takes the bytes of its usual layout; the layout moves bytes and
// reads none, so any bytes make the round trip.
//

#include "ggml.h"
#include "ggml-common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define GGML_QPANEL_ROWS 16

// the largest block of these types
#define GGML_QPANEL_MAX_BLOCK sizeof(block_q4_0)

// the types that have this layout, and their block's F16 values and words
static inline bool ggml_qpanel_form(enum ggml_type type, int * nh, int * nw) {
    switch (type) {
        case GGML_TYPE_Q4_0: *nh = 1; *nw = (int)(sizeof(block_q4_0) - sizeof(ggml_half)) / 4; return true;
        default: return false;
    }
}

// bytes of one unit (block b of 16 rows)
static inline size_t ggml_qpanel_unit_size(enum ggml_type type) {
    return GGML_QPANEL_ROWS * ggml_type_size(type);
}

// bytes of a packed matrix of nrows rows of k values
static inline size_t ggml_qpanel_matrix_size(enum ggml_type type, int64_t k, int64_t nrows) {
    return (size_t)((nrows + GGML_QPANEL_ROWS - 1) / GGML_QPANEL_ROWS) * (size_t)(k / ggml_blck_size(type)) *
           ggml_qpanel_unit_size(type);
}

// the unit of block b of row r in a matrix of nb blocks per row
static inline uint8_t * ggml_qpanel_unit(enum ggml_type type, void * matrix, int64_t nb, int64_t r, int64_t b) {
    return (uint8_t *) matrix + ((size_t)(r / GGML_QPANEL_ROWS) * (size_t) nb + (size_t) b) * ggml_qpanel_unit_size(type);
}

// block blk into row j (0 to 15) of unit u
static inline void ggml_qpanel_put(int nh, int nw, uint8_t * u, int j, const void * blk) {
    const uint8_t * s = (const uint8_t *) blk;
    for (int h = 0; h < nh; h++) {
        memcpy(u + 32*h + 2*j, s + 2*h, 2);
    }
    for (int q = 0; q < nw; q++) {
        memcpy(u + 32*nh + 64*q + 4*j, s + 2*nh + 4*q, 4);
    }
}

// row j (0 to 15) of unit u into block blk
static inline void ggml_qpanel_get(int nh, int nw, const uint8_t * u, int j, void * blk) {
    uint8_t * d = (uint8_t *) blk;
    for (int h = 0; h < nh; h++) {
        memcpy(d + 2*h, u + 32*h + 2*j, 2);
    }
    for (int q = 0; q < nw; q++) {
        memcpy(d + 2*nh + 4*q, u + 32*nh + 64*q + 4*j, 4);
    }
}

// row r's nb blocks out of their places (the usual layout of the row; the
// many-column products unpack every row so: Q4_0's form as constants)
static inline void ggml_qpanel_get_row(enum ggml_type type, const void * matrix, int64_t nb, int64_t r, void * row) {
    int nh = 0, nw = 0;
    ggml_qpanel_form(type, &nh, &nw);
    const size_t    bs = ggml_type_size(type), us = GGML_QPANEL_ROWS * bs;
    const uint8_t * u  = ggml_qpanel_unit(type, (void *) matrix, nb, r, 0);
    const int       j  = (int)(r % GGML_QPANEL_ROWS);
    uint8_t *       o  = (uint8_t *) row;
    for (int64_t b = 0; b < nb; b++, u += us, o += bs) {
        if (type == GGML_TYPE_Q4_0) {
            ggml_qpanel_get(1, 4, u, j, o);
        } else {
            ggml_qpanel_get(nh, nw, u, j, o);
        }
    }
}

// Panels . activation rows (the type's vec_dot_type): s[c][16 g + j] = row j
// of group g . y[c] for the ng groups from `panels` (group after group), the
// first nr rows written (nr <= 16 * ng), nc columns, nb blocks per row.
// ys[c] (where ggml_qpanel_wants_sums, else NULL) holds the sums of the
// values of each Q8_0 block of y[c] (ggml_qpanel_q8_0_sums), computed once
// per column by the caller: the Q4_0 kernels take the codes' offset 8 off as
// 8 x that sum.
typedef void (*ggml_cpu_dot_panels_t)(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                                      const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc);

// the type's dot_panels kernels need the block sums of the Q8_0 activations
static inline bool ggml_qpanel_wants_sums(enum ggml_type type) {
    return type == GGML_TYPE_Q4_0;
}

// the sums of the values of each of the nb blocks of a Q8_0 row
static inline void ggml_qpanel_q8_0_sums(const block_q8_0 * y, int64_t nb, int32_t * ys) {
    for (int64_t b = 0; b < nb; b++) {
        int32_t sum = 0;
        for (int e = 0; e < QK8_0; e++) {
            sum += y[b].qs[e];
        }
        ys[b] = sum;
    }
}

// the vector Q4_0 kernels' per-column step: np (1 to 4) panels of one column
// side by side, pstride panels apart (the same apart in out, 16 values a
// panel); rows: those of the panel last_p (the matrix's last, maybe partial;
// -1: none of these)
typedef void (*ggml_qpanel_q4_0_run_t)(int64_t nb, const uint8_t * grp, int np, int64_t pstride, const block_q8_0 * yb,
                                       const int32_t * ys, float * out, int last_p, int rows);

// their walk over a call's ng panels: 4 streams that are the 4 quarters of
// the panels (each a run of whole panels, one after another in memory), as
// the row dots take the quarters of their rows, so that a stream is as long
// as the chunk allows and few starts cost few cold misses; the panels left
// over are walked side by side at the end
static inline void ggml_qpanel_q4_0_walk(int64_t nb, const void * panels, int64_t ng, int64_t nr, const void * const * y,
                                         const int32_t * const * ys, float * const * s, int64_t nc,
                                         ggml_qpanel_q4_0_run_t run) {
    const size_t  pbytes = (size_t) nb * GGML_QPANEL_ROWS * sizeof(block_q4_0);
    const int64_t q      = ng / 4;
    const int     rows   = (int) (nr - (ng - 1) * GGML_QPANEL_ROWS); // of the last panel
    for (int64_t g = 0; g < q; g++) {
        const uint8_t * grp = (const uint8_t *) panels + (size_t) g * pbytes;
        const int last_p = g == q - 1 && 4 * q == ng ? 3 : -1;
        for (int64_t c = 0; c < nc; c++) {
            run(nb, grp, 4, q, (const block_q8_0 *) y[c], ys[c], s[c] + g * GGML_QPANEL_ROWS, last_p, rows);
        }
    }
    if (4 * q < ng) {
        const int np = (int) (ng - 4 * q);
        const uint8_t * grp = (const uint8_t *) panels + (size_t)(4 * q) * pbytes;
        for (int64_t c = 0; c < nc; c++) {
            run(nb, grp, np, 1, (const block_q8_0 *) y[c], ys[c], s[c] + 4 * q * GGML_QPANEL_ROWS, np - 1, rows);
        }
    }
}

// the portable kernel (kernels/panel-q4_0.c; it takes the offset off per
// code and does not read ys): the use_ref kernel only, as the panels exist
// only where a vector kernel reads them (repack.h)
void q4_0p_dot__scalar(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                       const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc);
