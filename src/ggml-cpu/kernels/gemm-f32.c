// gemm-f32.c: the float kernel of gemm.h.
//
// The tile is RM rows x RN columns of dot products, each accumulated in its
// own vector register over k; the RM + RN loads of a step feed RM*RN fused
// multiply-adds. The lanes are summed once at the end of the tile. Written on
// the float vectors of simd-f32.h; only the tile shape depends on the width.

#include "kernels/gemm.h"

#if defined(GGML_VF_WIDTH) && GGML_VF_WIDTH == 16
// 32 vector registers: 24 accumulators, 4 + 1 operands
#define GF_RM 4
#define GF_RN 6
#elif defined(GGML_VF_WIDTH) && GGML_VF_WIDTH == 8
// 16 vector registers: 9 accumulators, 3 + 1 operands
#define GF_RM 3
#define GF_RN 3
#elif defined(GGML_VF_WIDTH) && GGML_VF_WIDTH == 4
// 32 vector registers: 16 accumulators, 8 operands
#define GF_RM 4
#define GF_RN 4
#endif
#define GF_W GGML_VF_WIDTH // used only where GF_RM is defined

#if defined(GF_RM)

static void gf_tile(int64_t k, const float * const * a, const float * const * b, float out[GF_RM][GF_RN]) {
    ggml_vf acc[GF_RM][GF_RN];
    for (int r = 0; r < GF_RM; r++) {
        for (int c = 0; c < GF_RN; c++) {
            acc[r][c] = ggml_vf_zero();
        }
    }
    int64_t i = 0;
    for (; i + GF_W <= k; i += GF_W) {
        ggml_vf av[GF_RM];
        for (int r = 0; r < GF_RM; r++) {
            av[r] = ggml_vf_load(a[r] + i);
        }
        for (int c = 0; c < GF_RN; c++) {
            ggml_vf bv = ggml_vf_load(b[c] + i);
            GGML_GEMM_KEEP_IN_REG(bv);
            for (int r = 0; r < GF_RM; r++) {
                acc[r][c] = ggml_vf_fma(av[r], bv, acc[r][c]);
            }
        }
    }
    if (i < k) {
        ggml_vf av[GF_RM];
        for (int r = 0; r < GF_RM; r++) {
            av[r] = ggml_vf_load_part(a[r] + i, (int)(k - i));
        }
        for (int c = 0; c < GF_RN; c++) {
            const ggml_vf bv = ggml_vf_load_part(b[c] + i, (int)(k - i));
            for (int r = 0; r < GF_RM; r++) {
                acc[r][c] = ggml_vf_fma(av[r], bv, acc[r][c]);
            }
        }
    }
    for (int r = 0; r < GF_RM; r++) {
        for (int c = 0; c < GF_RN; c++) {
            out[r][c] = ggml_vf_reduce_add(acc[r][c]);
        }
    }
}

#endif

// portable tile: one sequential sum per result
#define GF_REF_RM 4
#define GF_REF_RN 4

static void gf_tile_ref(int64_t k, const float * const * a, const float * const * b, float out[GF_REF_RM][GF_REF_RN]) {
    float acc[GF_REF_RM][GF_REF_RN] = { { 0.0f } };
    for (int64_t i = 0; i < k; i++) {
        for (int r = 0; r < GF_REF_RM; r++) {
            for (int c = 0; c < GF_REF_RN; c++) {
                acc[r][c] += a[r][i] * b[c][i];
            }
        }
    }
    memcpy(out, acc, sizeof(acc));
}

#define GGML_GEMM_WALK    gf_walk_ref
#define GGML_GEMM_WALK_RM GF_REF_RM
#define GGML_GEMM_WALK_RN GF_REF_RN
#define GGML_GEMM_WALK_T  float
#include "kernels/gemm-walk-tmpl.h"
#if defined(GF_RM)
#define GGML_GEMM_WALK    gf_walk
#define GGML_GEMM_WALK_RM GF_RM
#define GGML_GEMM_WALK_RN GF_RN
#define GGML_GEMM_WALK_T  float
#include "kernels/gemm-walk-tmpl.h"
#endif

void ggml_gemm_f32(int64_t nrows, int64_t ncols, int64_t k,
                   const float * A, size_t lda, const void * const * B, float * const * C,
                   bool accumulate, bool use_ref) {
    GGML_UNUSED(use_ref);
#if defined(GF_RM)
    if (!use_ref) {
        gf_walk(gf_tile, nrows, ncols, k, A, lda, B, C, accumulate);
        return;
    }
#endif
    gf_walk_ref(gf_tile_ref, nrows, ncols, k, A, lda, B, C, accumulate);
}

//
// packed form (AVX-512): weight rows packed k-major in groups of
// GGML_F32P_ROWS, so that one step of the tile loads 64 rows' values of one
// k as 4 vectors and meets 6 columns' values of that k, each broadcast: 24
// fused multiply-adds for 4 vector loads and 6 scalar ones, against 10
// vector loads in the dot-product tile, which at two FMAs a cycle needs
// nearly all the L2 bandwidth. Each result is one sequential sum over k.
//

#if defined(GGML_VF_WIDTH) && GGML_VF_WIDTH == 16 // the packing transposes 16 x 16 blocks

#define GP_VECS 4
#define GP_RN   6

bool ggml_gemm_f32p_available(void) {
    return true;
}

void ggml_gemm_f32p_pack(int64_t nrows, int64_t kc, const float * A, size_t lda, float * panel) {
    for (int64_t g0 = 0; g0 < nrows; g0 += GGML_F32P_ROWS) {
        float * p = panel + (size_t)(g0 / GGML_F32P_ROWS) * (size_t) kc * GGML_F32P_ROWS;
        const int64_t nr = MIN(GGML_F32P_ROWS, nrows - g0);
        // 16 rows x 16 values at a time, transposed: each k's 16 values one vector
        for (int64_t r0 = 0; r0 < GGML_F32P_ROWS; r0 += 16) {
            for (int64_t i = 0; i < kc; i += 16) {
                const int64_t m = MIN(16, kc - i);
                ggml_vf r[16];
                for (int q = 0; q < 16; q++) {
                    r[q] = r0 + q < nr ? ggml_vf_load_part(A + (size_t)(g0 + r0 + q) * lda + i, (int) m) : ggml_vf_zero();
                }
                ggml_vf_transpose16(r);
                for (int64_t c = 0; c < m; c++) {
                    ggml_vf_store(p + (size_t)(i + c) * GGML_F32P_ROWS + r0, r[c]);
                }
            }
        }
    }
}

// rows [0, nr) of a 64-row group x nc <= 6 columns
static void gp_tile(int64_t kc, const float * p, const float * const * b, float * const * c, int64_t nr, int64_t nc,
                    bool accumulate) {
    ggml_vf acc[GP_VECS][GP_RN];
    for (int q = 0; q < GP_VECS; q++) {
        for (int j = 0; j < GP_RN; j++) {
            acc[q][j] = ggml_vf_zero();
        }
    }
    for (int64_t i = 0; i < kc; i++) {
        ggml_vf av[GP_VECS];
        for (int q = 0; q < GP_VECS; q++) {
            av[q] = ggml_vf_load(p + (size_t) i * GGML_F32P_ROWS + 16 * q);
        }
        for (int j = 0; j < GP_RN; j++) {
            ggml_vf bv = ggml_vf_set1(b[j][i]);
            GGML_GEMM_KEEP_IN_REG(bv);
            for (int q = 0; q < GP_VECS; q++) {
                acc[q][j] = ggml_vf_fma(av[q], bv, acc[q][j]);
            }
        }
    }
    for (int64_t j = 0; j < nc; j++) {
        for (int q = 0; q < GP_VECS && 16 * q < nr; q++) {
            float * dst = c[j] + 16 * q;
            const int64_t m = MIN(16, nr - 16 * q);
            ggml_vf v = acc[q][j];
            if (accumulate) {
                v = ggml_vf_add(ggml_vf_load_part(dst, (int) m), v);
            }
            ggml_vf_store_part(dst, v, (int) m);
        }
    }
}

void ggml_gemm_f32p(int64_t nrows, int64_t ncols, int64_t kc, const float * panel,
                    const void * const * B, float * const * C, bool accumulate) {
    for (int64_t j0 = 0; j0 < ncols; j0 += GP_RN) {
        const int64_t nc = MIN(GP_RN, ncols - j0);
        const float * b[GP_RN];
        for (int j = 0; j < GP_RN; j++) {
            b[j] = (const float *) B[j0 + MIN(j, nc - 1)];
        }
        for (int64_t g0 = 0; g0 < nrows; g0 += GGML_F32P_ROWS) {
            float * c[GP_RN];
            for (int j = 0; j < GP_RN; j++) {
                c[j] = C[j0 + MIN(j, nc - 1)] + g0;
            }
            gp_tile(kc, panel + (size_t)(g0 / GGML_F32P_ROWS) * (size_t) kc * GGML_F32P_ROWS, b, c,
                    MIN(GGML_F32P_ROWS, nrows - g0), nc, accumulate);
        }
    }
}

#else

bool ggml_gemm_f32p_available(void) {
    return false;
}

void ggml_gemm_f32p_pack(int64_t nrows, int64_t kc, const float * A, size_t lda, float * panel) {
    GGML_UNUSED(nrows); GGML_UNUSED(kc); GGML_UNUSED(A); GGML_UNUSED(lda); GGML_UNUSED(panel);
    GGML_ABORT("the packed float kernel is not built");
}

void ggml_gemm_f32p(int64_t nrows, int64_t ncols, int64_t kc, const float * panel,
                    const void * const * B, float * const * C, bool accumulate) {
    GGML_UNUSED(nrows); GGML_UNUSED(ncols); GGML_UNUSED(kc); GGML_UNUSED(panel);
    GGML_UNUSED(B); GGML_UNUSED(C); GGML_UNUSED(accumulate);
    GGML_ABORT("the packed float kernel is not built");
}

#endif

//
// outer-product form: a tile of OR rows x OV values in registers, one
// broadcast of b(r, i) and OV/W loads of A row i per step
//

#define GO_TILE_ROWS 4 // rows of both outer-product tiles (the walk below)
#define GO_REF_ROWS GO_TILE_ROWS
#define GO_REF_V    16

static void go_tile_ref(int64_t n, int64_t nv, const float * A, size_t lda, const char * const * b, size_t b_col,
                        float * const * c) {
    float acc[GO_REF_ROWS][GO_REF_V] = { { 0.0f } };
    for (int64_t i = 0; i < n; i++) {
        const float * a = A + (size_t) i * lda;
        for (int r = 0; r < GO_REF_ROWS; r++) {
            const float bv = *(const float *)(b[r] + (size_t) i * b_col);
            for (int64_t v = 0; v < nv; v++) {
                acc[r][v] += a[v] * bv;
            }
        }
    }
    for (int r = 0; r < GO_REF_ROWS; r++) {
        if (c[r] != NULL) {
            memcpy(c[r], acc[r], (size_t) nv * sizeof(float));
        }
    }
}

#if defined(GF_RM)

#define GO_ROWS GO_TILE_ROWS
#define GO_VECS 4
#define GO_V    (GO_VECS * GF_W)

// nv <= GO_V values of GO_ROWS rows (c[r] NULL: a row to drop)
static void go_tile(int64_t n, int64_t nv, const float * A, size_t lda, const char * const * b, size_t b_col,
                    float * const * c) {
    ggml_vf acc[GO_ROWS][GO_VECS];
    for (int r = 0; r < GO_ROWS; r++) {
        for (int q = 0; q < GO_VECS; q++) {
            acc[r][q] = ggml_vf_zero();
        }
    }
    const int nq = (int)((nv + GF_W - 1) / GF_W);
    if (nv == GO_V) {
        for (int64_t i = 0; i < n; i++) {
            const float * a = A + (size_t) i * lda;
            ggml_vf av[GO_VECS];
            for (int q = 0; q < GO_VECS; q++) {
                av[q] = ggml_vf_load(a + q*GF_W);
            }
            for (int r = 0; r < GO_ROWS; r++) {
                ggml_vf bv = ggml_vf_set1(*(const float *)(b[r] + (size_t) i * b_col));
                GGML_GEMM_KEEP_IN_REG(bv);
                for (int q = 0; q < GO_VECS; q++) {
                    acc[r][q] = ggml_vf_fma(av[q], bv, acc[r][q]);
                }
            }
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            const float * a = A + (size_t) i * lda;
            for (int r = 0; r < GO_ROWS; r++) {
                const ggml_vf bv = ggml_vf_set1(*(const float *)(b[r] + (size_t) i * b_col));
                for (int q = 0; q < nq; q++) {
                    acc[r][q] = ggml_vf_fma(ggml_vf_load_part(a + q*GF_W, (int) MIN(GF_W, nv - q*GF_W)), bv, acc[r][q]);
                }
            }
        }
    }
    for (int r = 0; r < GO_ROWS; r++) {
        if (c[r] == NULL) {
            continue;
        }
        for (int q = 0; q < nq; q++) {
            const int64_t m = MIN(GF_W, nv - q*GF_W);
            if (m == GF_W) {
                ggml_vf_store(c[r] + q*GF_W, acc[r][q]);
            } else {
                ggml_vf_store_part(c[r] + q*GF_W, acc[r][q], (int) m);
            }
        }
    }
}

#endif

typedef void (*go_tile_fn)(int64_t n, int64_t nv, const float * A, size_t lda, const char * const * b, size_t b_col,
                           float * const * c);

// rows in groups of GO_TILE_ROWS (missing rows read row 0 and are dropped),
// values in blocks of V; inlined where tile and V are constants
static GGML_GEMM_INLINE void go_walk(go_tile_fn tile, int64_t V, int64_t nrows, int64_t nv, int64_t n, const float * A,
                                     size_t lda, const char * B, size_t b_row, size_t b_col, float * const * C) {
    for (int64_t r0 = 0; r0 < nrows; r0 += GO_TILE_ROWS) {
        for (int64_t v0 = 0; v0 < nv; v0 += V) {
            const char * b[GO_TILE_ROWS];
            float * c[GO_TILE_ROWS];
            for (int r = 0; r < GO_TILE_ROWS; r++) {
                const bool in = r0 + r < nrows;
                b[r] = B + (size_t)(in ? r0 + r : r0) * b_row;
                c[r] = in ? C[r0 + r] + v0 : NULL;
            }
            tile(n, MIN(V, nv - v0), A + v0, lda, b, b_col, c);
        }
    }
}

void ggml_gemm_f32_outer(int64_t nrows, int64_t nv, int64_t n, const float * A, size_t lda,
                         const char * B, size_t b_row, size_t b_col, float * const * C, bool use_ref) {
    GGML_UNUSED(use_ref);
#if defined(GF_RM)
    if (!use_ref) {
        go_walk(go_tile, GO_V, nrows, nv, n, A, lda, B, b_row, b_col, C);
        return;
    }
#endif
    go_walk(go_tile_ref, GO_REF_V, nrows, nv, n, A, lda, B, b_row, b_col, C);
}
