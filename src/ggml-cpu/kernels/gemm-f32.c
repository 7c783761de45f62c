// gemm-f32.c: the float kernel of gemm.h.
//
// The tile is RM rows x RN columns of dot products, each accumulated in its
// own vector register over k; the RM + RN loads of a step feed RM*RN fused
// multiply-adds. The lanes are summed once at the end of the tile.

#include "kernels/gemm.h"

#if defined(GGML_VEC_AVX512)

#define GF_RM 4
#define GF_RN 6
#define GF_W  16
typedef __m512 gf_vec;

static GGML_GEMM_INLINE gf_vec gf_load(const float * p) { return _mm512_loadu_ps(p); }
static GGML_GEMM_INLINE gf_vec gf_load_part(const float * p, int64_t n) {
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p);
}
static GGML_GEMM_INLINE gf_vec gf_zero(void) { return _mm512_setzero_ps(); }
static GGML_GEMM_INLINE gf_vec gf_fmadd(gf_vec a, gf_vec b, gf_vec c) { return _mm512_fmadd_ps(a, b, c); }
static GGML_GEMM_INLINE float  gf_sum(gf_vec v) { return _mm512_reduce_add_ps(v); }

#elif defined(GGML_VEC_AVX2)

#define GF_RM 3
#define GF_RN 3
#define GF_W  8
typedef __m256 gf_vec;

static GGML_GEMM_INLINE gf_vec gf_load(const float * p) { return _mm256_loadu_ps(p); }
static GGML_GEMM_INLINE gf_vec gf_load_part(const float * p, int64_t n) {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int) n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    return _mm256_maskload_ps(p, mask);
}
static GGML_GEMM_INLINE gf_vec gf_zero(void) { return _mm256_setzero_ps(); }
static GGML_GEMM_INLINE gf_vec gf_fmadd(gf_vec a, gf_vec b, gf_vec c) { return _mm256_fmadd_ps(a, b, c); }
static GGML_GEMM_INLINE float  gf_sum(gf_vec v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

#elif defined(GGML_VEC_NEON)

// 32 vector registers: 16 accumulators, 8 operands
#define GF_RM 4
#define GF_RN 4
#define GF_W  4
typedef float32x4_t gf_vec;

static GGML_GEMM_INLINE gf_vec gf_load(const float * p) { return vld1q_f32(p); }
static GGML_GEMM_INLINE gf_vec gf_load_part(const float * p, int64_t n) {
    float tmp[GF_W] = { 0.0f };
    memcpy(tmp, p, (size_t) n * sizeof(float));
    return vld1q_f32(tmp);
}
static GGML_GEMM_INLINE gf_vec gf_zero(void) { return vdupq_n_f32(0.0f); }
static GGML_GEMM_INLINE gf_vec gf_fmadd(gf_vec a, gf_vec b, gf_vec c) { return vfmaq_f32(c, a, b); }
static GGML_GEMM_INLINE float  gf_sum(gf_vec v) { return vaddvq_f32(v); }

#endif

#if defined(GF_RM)

static void gf_tile(int64_t k, const float * const * a, const float * const * b, float out[GF_RM][GF_RN]) {
    gf_vec acc[GF_RM][GF_RN];
    for (int r = 0; r < GF_RM; r++) {
        for (int c = 0; c < GF_RN; c++) {
            acc[r][c] = gf_zero();
        }
    }
    int64_t i = 0;
    for (; i + GF_W <= k; i += GF_W) {
        gf_vec av[GF_RM];
        for (int r = 0; r < GF_RM; r++) {
            av[r] = gf_load(a[r] + i);
        }
        for (int c = 0; c < GF_RN; c++) {
            gf_vec bv = gf_load(b[c] + i);
            GGML_GEMM_KEEP_IN_REG(bv);
            for (int r = 0; r < GF_RM; r++) {
                acc[r][c] = gf_fmadd(av[r], bv, acc[r][c]);
            }
        }
    }
    if (i < k) {
        gf_vec av[GF_RM];
        for (int r = 0; r < GF_RM; r++) {
            av[r] = gf_load_part(a[r] + i, k - i);
        }
        for (int c = 0; c < GF_RN; c++) {
            const gf_vec bv = gf_load_part(b[c] + i, k - i);
            for (int r = 0; r < GF_RM; r++) {
                acc[r][c] = gf_fmadd(av[r], bv, acc[r][c]);
            }
        }
    }
    for (int r = 0; r < GF_RM; r++) {
        for (int c = 0; c < GF_RN; c++) {
            out[r][c] = gf_sum(acc[r][c]);
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

GGML_GEMM_DEFINE_WALK(gf_walk_ref, GF_REF_RM, GF_REF_RN, gf_tile_ref, float)
#if defined(GF_RM)
GGML_GEMM_DEFINE_WALK(gf_walk, GF_RM, GF_RN, gf_tile, float)
#endif

void ggml_gemm_f32(int64_t nrows, int64_t ncols, int64_t k,
                   const float * A, size_t lda, const void * const * B, float * const * C,
                   bool accumulate, bool use_ref) {
    GGML_UNUSED(use_ref);
#if defined(GF_RM)
    if (!use_ref) {
        gf_walk(nrows, ncols, k, A, lda, B, C, accumulate);
        return;
    }
#endif
    gf_walk_ref(nrows, ncols, k, A, lda, B, C, accumulate);
}

//
// packed form (AVX-512): weight rows packed k-major in groups of
// GGML_F32P_ROWS, so that one step of the tile loads 64 rows' values of one
// k as 4 vectors and meets 6 columns' values of that k, each broadcast: 24
// fused multiply-adds for 4 vector loads and 6 scalar ones, against 10
// vector loads in the dot-product tile, which at two FMAs a cycle needs
// nearly all the L2 bandwidth. Each result is one sequential sum over k.
//

#if defined(GGML_VEC_AVX512)

#define GP_VECS 4
#define GP_RN   6

bool ggml_gemm_f32p_available(void) {
    return true;
}

// 16 x 16 floats transposed in registers: r[i] holds row i; after, r[c]
// holds column c
static GGML_GEMM_INLINE void gp_transpose16(__m512 r[16]) {
    __m512 u[16];
    for (int g = 0; g < 4; g++) {
        // per 128-bit lane L, of rows 4g..4g+3: t0 = a0 b0 a1 b1, t1 = a2 b2 a3 b3 (and c, d)
        const __m512 t0 = _mm512_unpacklo_ps(r[4*g + 0], r[4*g + 1]);
        const __m512 t1 = _mm512_unpackhi_ps(r[4*g + 0], r[4*g + 1]);
        const __m512 t2 = _mm512_unpacklo_ps(r[4*g + 2], r[4*g + 3]);
        const __m512 t3 = _mm512_unpackhi_ps(r[4*g + 2], r[4*g + 3]);
        // u[4g + x], lane L: element 4L + x of rows 4g..4g+3
        u[4*g + 0] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
        u[4*g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t0), _mm512_castps_pd(t2)));
        u[4*g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
        u[4*g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t1), _mm512_castps_pd(t3)));
    }
    for (int x = 0; x < 4; x++) {
        // column 4L + x: lane L of u[x], u[4 + x], u[8 + x], u[12 + x]
        const __m512 w0 = _mm512_shuffle_f32x4(u[x], u[4 + x], 0x88);
        const __m512 w1 = _mm512_shuffle_f32x4(u[x], u[4 + x], 0xDD);
        const __m512 w2 = _mm512_shuffle_f32x4(u[8 + x], u[12 + x], 0x88);
        const __m512 w3 = _mm512_shuffle_f32x4(u[8 + x], u[12 + x], 0xDD);
        r[x + 0]  = _mm512_shuffle_f32x4(w0, w2, 0x88);
        r[x + 4]  = _mm512_shuffle_f32x4(w1, w3, 0x88);
        r[x + 8]  = _mm512_shuffle_f32x4(w0, w2, 0xDD);
        r[x + 12] = _mm512_shuffle_f32x4(w1, w3, 0xDD);
    }
}

void ggml_gemm_f32p_pack(int64_t nrows, int64_t kc, const float * A, size_t lda, float * panel) {
    for (int64_t g0 = 0; g0 < nrows; g0 += GGML_F32P_ROWS) {
        float * p = panel + (size_t)(g0 / GGML_F32P_ROWS) * (size_t) kc * GGML_F32P_ROWS;
        const int64_t nr = MIN(GGML_F32P_ROWS, nrows - g0);
        // 16 rows x 16 values at a time, transposed: each k's 16 values one vector
        for (int64_t r0 = 0; r0 < GGML_F32P_ROWS; r0 += 16) {
            for (int64_t i = 0; i < kc; i += 16) {
                const int64_t m = MIN(16, kc - i);
                const __mmask16 mask = (__mmask16)(m == 16 ? 0xFFFFu : (1u << m) - 1);
                __m512 r[16];
                for (int q = 0; q < 16; q++) {
                    r[q] = r0 + q < nr ? _mm512_maskz_loadu_ps(mask, A + (size_t)(g0 + r0 + q) * lda + i) : _mm512_setzero_ps();
                }
                gp_transpose16(r);
                for (int64_t c = 0; c < m; c++) {
                    _mm512_storeu_ps(p + (size_t)(i + c) * GGML_F32P_ROWS + r0, r[c]);
                }
            }
        }
    }
}

// rows [0, nr) of a 64-row group x nc <= 6 columns
static void gp_tile(int64_t kc, const float * p, const float * const * b, float * const * c, int64_t nr, int64_t nc,
                    bool accumulate) {
    __m512 acc[GP_VECS][GP_RN];
    for (int q = 0; q < GP_VECS; q++) {
        for (int j = 0; j < GP_RN; j++) {
            acc[q][j] = _mm512_setzero_ps();
        }
    }
    for (int64_t i = 0; i < kc; i++) {
        __m512 av[GP_VECS];
        for (int q = 0; q < GP_VECS; q++) {
            av[q] = _mm512_loadu_ps(p + (size_t) i * GGML_F32P_ROWS + 16 * q);
        }
        for (int j = 0; j < GP_RN; j++) {
            __m512 bv = _mm512_set1_ps(b[j][i]);
            GGML_GEMM_KEEP_IN_REG(bv);
            for (int q = 0; q < GP_VECS; q++) {
                acc[q][j] = _mm512_fmadd_ps(av[q], bv, acc[q][j]);
            }
        }
    }
    for (int64_t j = 0; j < nc; j++) {
        for (int q = 0; q < GP_VECS && 16 * q < nr; q++) {
            float * dst = c[j] + 16 * q;
            const int64_t m = MIN(16, nr - 16 * q);
            const __mmask16 mask = (__mmask16)(m == 16 ? 0xFFFFu : (1u << m) - 1);
            __m512 v = acc[q][j];
            if (accumulate) {
                v = _mm512_add_ps(_mm512_maskz_loadu_ps(mask, dst), v);
            }
            _mm512_mask_storeu_ps(dst, mask, v);
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

#define GO_REF_ROWS 4
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

#define GO_ROWS 4
#define GO_VECS 4
#define GO_V    (GO_VECS * GF_W)

#if defined(GGML_VEC_AVX512)
static GGML_GEMM_INLINE void gf_store(float * p, gf_vec v) { _mm512_storeu_ps(p, v); }
static GGML_GEMM_INLINE void gf_store_part(float * p, gf_vec v, int64_t n) {
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1), v);
}
static GGML_GEMM_INLINE gf_vec gf_broadcast(const char * p) { return _mm512_set1_ps(*(const float *) p); }
#elif defined(GGML_VEC_AVX2)
static GGML_GEMM_INLINE void gf_store(float * p, gf_vec v) { _mm256_storeu_ps(p, v); }
static GGML_GEMM_INLINE void gf_store_part(float * p, gf_vec v, int64_t n) {
    const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int) n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_maskstore_ps(p, mask, v);
}
static GGML_GEMM_INLINE gf_vec gf_broadcast(const char * p) { return _mm256_broadcast_ss((const float *) p); }
#elif defined(GGML_VEC_NEON)
static GGML_GEMM_INLINE void gf_store(float * p, gf_vec v) { vst1q_f32(p, v); }
static GGML_GEMM_INLINE void gf_store_part(float * p, gf_vec v, int64_t n) {
    float tmp[GF_W];
    vst1q_f32(tmp, v);
    memcpy(p, tmp, (size_t) n * sizeof(float));
}
static GGML_GEMM_INLINE gf_vec gf_broadcast(const char * p) { return vld1q_dup_f32((const float *) p); }
#endif

// nv <= GO_V values of GO_ROWS rows (c[r] NULL: a row to drop)
static void go_tile(int64_t n, int64_t nv, const float * A, size_t lda, const char * const * b, size_t b_col,
                    float * const * c) {
    gf_vec acc[GO_ROWS][GO_VECS];
    for (int r = 0; r < GO_ROWS; r++) {
        for (int q = 0; q < GO_VECS; q++) {
            acc[r][q] = gf_zero();
        }
    }
    const int nq = (int)((nv + GF_W - 1) / GF_W);
    if (nv == GO_V) {
        for (int64_t i = 0; i < n; i++) {
            const float * a = A + (size_t) i * lda;
            gf_vec av[GO_VECS];
            for (int q = 0; q < GO_VECS; q++) {
                av[q] = gf_load(a + q*GF_W);
            }
            for (int r = 0; r < GO_ROWS; r++) {
                gf_vec bv = gf_broadcast(b[r] + (size_t) i * b_col);
                GGML_GEMM_KEEP_IN_REG(bv);
                for (int q = 0; q < GO_VECS; q++) {
                    acc[r][q] = gf_fmadd(av[q], bv, acc[r][q]);
                }
            }
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            const float * a = A + (size_t) i * lda;
            for (int r = 0; r < GO_ROWS; r++) {
                const gf_vec bv = gf_broadcast(b[r] + (size_t) i * b_col);
                for (int q = 0; q < nq; q++) {
                    acc[r][q] = gf_fmadd(gf_load_part(a + q*GF_W, MIN(GF_W, nv - q*GF_W)), bv, acc[r][q]);
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
                gf_store(c[r] + q*GF_W, acc[r][q]);
            } else {
                gf_store_part(c[r] + q*GF_W, acc[r][q], m);
            }
        }
    }
}

#endif

// rows in groups of RN (missing rows read row 0 and are dropped), values in blocks of V
#define GO_DEFINE_WALK(name, RN, V, tile)                                                              \
    static void name(int64_t nrows, int64_t nv, int64_t n, const float * A, size_t lda,               \
                     const char * B, size_t b_row, size_t b_col, float * const * C) {                 \
        for (int64_t r0 = 0; r0 < nrows; r0 += RN) {                                                   \
            for (int64_t v0 = 0; v0 < nv; v0 += V) {                                                   \
                const char * b[RN];                                                                    \
                float * c[RN];                                                                         \
                for (int r = 0; r < RN; r++) {                                                         \
                    const bool in = r0 + r < nrows;                                                    \
                    b[r] = B + (size_t)(in ? r0 + r : r0) * b_row;                                     \
                    c[r] = in ? C[r0 + r] + v0 : NULL;                                                 \
                }                                                                                      \
                tile(n, MIN(V, nv - v0), A + v0, lda, b, b_col, c);                                    \
            }                                                                                          \
        }                                                                                              \
    }

GO_DEFINE_WALK(go_walk_ref, GO_REF_ROWS, GO_REF_V, go_tile_ref)
#if defined(GF_RM)
GO_DEFINE_WALK(go_walk, GO_ROWS, GO_V, go_tile)
#endif

void ggml_gemm_f32_outer(int64_t nrows, int64_t nv, int64_t n, const float * A, size_t lda,
                         const char * B, size_t b_row, size_t b_col, float * const * C, bool use_ref) {
    GGML_UNUSED(use_ref);
#if defined(GF_RM)
    if (!use_ref) {
        go_walk(nrows, nv, n, A, lda, B, b_row, b_col, C);
        return;
    }
#endif
    go_walk_ref(nrows, nv, n, A, lda, B, b_row, b_col, C);
}
