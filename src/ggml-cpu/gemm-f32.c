// gemm-f32.c: the float kernel of gemm.h.
//
// The tile is RM rows x RN columns of dot products, each accumulated in its
// own vector register over k; the RM + RN loads of a step feed RM*RN fused
// multiply-adds. The lanes are summed once at the end of the tile.

#include "gemm.h"

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
