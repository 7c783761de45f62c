// gemm-walk-tmpl.h: the walk over the tiles of a block (gemm.h), for one tile
// shape and element type. Included once per shape, after defining
//     GGML_GEMM_WALK     the name of the walk
//     GGML_GEMM_WALK_RM  the rows of a tile
//     GGML_GEMM_WALK_RN  the columns of a tile
//     GGML_GEMM_WALK_T   the element type of the rows (float, uint8_t)
// (all four are undefined at the end). The walk takes the tile kernel as its
// first argument: tile(k, a, b, out) computes out[RM][RN] for the row
// pointers a[RM] and column pointers b[RN]; the walk is always inlined, so a
// constant tile is called directly.
//
// Column groups outside, row groups inside: a few B columns stay in L1 while
// the A block streams past them. Edge tiles repeat their last row / column
// and drop the extra results.

#if !defined(GGML_GEMM_WALK) || !defined(GGML_GEMM_WALK_RM) || !defined(GGML_GEMM_WALK_RN) || !defined(GGML_GEMM_WALK_T)
#error "define GGML_GEMM_WALK, GGML_GEMM_WALK_RM, GGML_GEMM_WALK_RN and GGML_GEMM_WALK_T before including gemm-walk-tmpl.h"
#endif

static GGML_GEMM_INLINE void GGML_GEMM_WALK(
        void (*tile)(int64_t k, const GGML_GEMM_WALK_T * const * a, const GGML_GEMM_WALK_T * const * b,
                     float out[GGML_GEMM_WALK_RM][GGML_GEMM_WALK_RN]),
        int64_t nrows, int64_t ncols, int64_t k, const GGML_GEMM_WALK_T * A, size_t lda,
        const void * const * B, float * const * C, bool accumulate) {
    for (int64_t j0 = 0; j0 < ncols; j0 += GGML_GEMM_WALK_RN) {
        const int64_t nc = MIN(GGML_GEMM_WALK_RN, ncols - j0);
        const GGML_GEMM_WALK_T * b[GGML_GEMM_WALK_RN];
        for (int c = 0; c < GGML_GEMM_WALK_RN; c++) {
            b[c] = (const GGML_GEMM_WALK_T *) B[j0 + MIN(c, nc - 1)];
        }
        for (int64_t i0 = 0; i0 < nrows; i0 += GGML_GEMM_WALK_RM) {
            const int64_t nr = MIN(GGML_GEMM_WALK_RM, nrows - i0);
            const GGML_GEMM_WALK_T * a[GGML_GEMM_WALK_RM];
            for (int r = 0; r < GGML_GEMM_WALK_RM; r++) {
                a[r] = A + (size_t)(i0 + MIN(r, nr - 1)) * lda;
            }
            float out[GGML_GEMM_WALK_RM][GGML_GEMM_WALK_RN];
            tile(k, a, b, out);
            for (int64_t c = 0; c < nc; c++) {
                float * dst = C[j0 + c] + i0;
                for (int64_t r = 0; r < nr; r++) {
                    dst[r] = accumulate ? dst[r] + out[r][c] : out[r][c];
                }
            }
        }
    }
}

#undef GGML_GEMM_WALK
#undef GGML_GEMM_WALK_RM
#undef GGML_GEMM_WALK_RN
#undef GGML_GEMM_WALK_T
