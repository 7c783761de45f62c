// quants-dot.c: activation quantizers and row dot products (see quants-dot.h).
//
// Quantized rows meet Q8 activation rows block by block: the integer dot
// product of the 32 codes of a block, scaled by the two block scales. The
// vector paths take the codes of a weight block as unsigned bytes u with an
// offset o (value = d*(u - o) for Q4_0 / Q5_0, d*u + m for Q4_1 / Q5_1), so
// that one unsigned x signed byte product instruction (vpdpbusd, or
// vpmaddubsw + vpmaddwd) does the work:
//   sum_j (u_j - o) * y_j = sum_j u_j*y_j - o * sum_j y_j,
// and o * sum_j y_j is computed once per activation block for all rows.
// Q8_0 weights are signed; they use |x| and y with the sign of x.

#include "kernels/quants-dot.h"
#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"

//
// fp32 -> Q8_0 / Q8_1
//
// The vector path reproduces the reference arithmetic exactly: the same
// maximum, the same division and reciprocal, the same products, and roundf
// (half away from zero) built from a truncation and an exact remainder.
// Blocks where that is not enough (a NaN or an infinity, whose handling in
// the reference depends on the order of the maximum, or a scale so small
// that its reciprocal overflows) take the reference quantizer.
//

// below this amax, d = amax/127 is subnormal and 1/d may overflow
#define QD_Q8_MIN_AMAX (127.0f * 1.17549435e-38f)

#if defined(QD_SIMD) && defined(GGML_VEC_AVX512)

// codes of one block of 32 finite values; false if the block needs the reference
static QD_INLINE bool qd_q8_block(const float * x, int8_t * qs, float * pd, int * psum) {
    const __m512 v0 = _mm512_loadu_ps(x);
    const __m512 v1 = _mm512_loadu_ps(x + 16);
    const __m512 a0 = _mm512_abs_ps(v0);
    const __m512 a1 = _mm512_abs_ps(v1);
    const __m512 inf = _mm512_set1_ps(INFINITY);
    // NaN compares false: a block with a NaN or an infinity fails this
    const __mmask16 fin = _mm512_cmp_ps_mask(a0, inf, _CMP_LT_OQ) & _mm512_cmp_ps_mask(a1, inf, _CMP_LT_OQ);
    if (fin != 0xFFFF) {
        return false;
    }
    const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
    if (amax < QD_Q8_MIN_AMAX) {
        return false;
    }
    const float d  = amax / 127.0f;
    const float id = 1.0f / d;
    const __m512  vid  = _mm512_set1_ps(id);
    const __m512  half = _mm512_set1_ps(0.5f);
    const __m512i sign = _mm512_set1_epi32((int) 0x80000000u);
    const __m512i one  = _mm512_castps_si512(_mm512_set1_ps(1.0f));
    __m512i q[2];
    const __m512 v[2] = { v0, v1 };
    for (int h = 0; h < 2; h++) {
        const __m512 t = _mm512_mul_ps(v[h], vid);
        const __m512 r = _mm512_roundscale_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        // |t - r| is exact; at one half or more, step away from zero
        const __mmask16 up = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(t, r)), half, _CMP_GE_OQ);
        const __m512 step = _mm512_castsi512_ps(_mm512_or_si512(one, _mm512_and_si512(sign, _mm512_castps_si512(t))));
        q[h] = _mm512_cvttps_epi32(_mm512_mask_add_ps(r, up, r, step));
    }
    _mm_storeu_si128((__m128i *) qs,        _mm512_cvtepi32_epi8(q[0]));
    _mm_storeu_si128((__m128i *) (qs + 16), _mm512_cvtepi32_epi8(q[1]));
    *pd   = d;
    *psum = _mm512_reduce_add_epi32(_mm512_add_epi32(q[0], q[1]));
    return true;
}

#elif defined(QD_SIMD)

static QD_INLINE bool qd_q8_block(const float * x, int8_t * qs, float * pd, int * psum) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 inf  = _mm256_set1_ps(INFINITY);
    __m256 v[4];
    __m256 amaxv = _mm256_setzero_ps();
    int fin = 0xFF;
    for (int h = 0; h < 4; h++) {
        v[h] = _mm256_loadu_ps(x + 8*h);
        const __m256 a = _mm256_andnot_ps(sign, v[h]);
        fin &= _mm256_movemask_ps(_mm256_cmp_ps(a, inf, _CMP_LT_OQ));
        amaxv = _mm256_max_ps(amaxv, a);
    }
    if (fin != 0xFF) {
        return false;
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(amaxv), _mm256_extractf128_ps(amaxv, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    const float amax = _mm_cvtss_f32(m4);
    if (amax < QD_Q8_MIN_AMAX) {
        return false;
    }
    const float d  = amax / 127.0f;
    const float id = 1.0f / d;
    const __m256 vid  = _mm256_set1_ps(id);
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 one  = _mm256_set1_ps(1.0f);
    __m256i q[4];
    for (int h = 0; h < 4; h++) {
        const __m256 t = _mm256_mul_ps(v[h], vid);
        const __m256 r = _mm256_round_ps(t, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 up = _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_sub_ps(t, r)), half, _CMP_GE_OQ);
        const __m256 step = _mm256_and_ps(up, _mm256_or_ps(one, _mm256_and_ps(sign, t)));
        q[h] = _mm256_cvttps_epi32(_mm256_add_ps(r, step));
    }
    // codes are within [-127, 127]: the saturating packs keep them; the packs
    // interleave 128-bit lanes, the permute restores the order
    const __m256i p01 = _mm256_packs_epi32(q[0], q[1]);
    const __m256i p23 = _mm256_packs_epi32(q[2], q[3]);
    const __m256i p   = _mm256_packs_epi16(p01, p23);
    const __m256i o   = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *) qs, o);
    const __m256i s = _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3]));
    __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(1, 0, 3, 2)));
    s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, _MM_SHUFFLE(2, 3, 0, 1)));
    *pd   = d;
    *psum = _mm_cvtsi128_si32(s4);
    return true;
}

#endif

void ggml_cpu_quantize_row_q8_0(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK8_0 == 0);
#if defined(QD_SIMD)
    block_q8_0 * y = (block_q8_0 *) vy;
    for (int64_t i = 0; i < k / QK8_0; i++) {
        float d;
        int sum;
        if (qd_q8_block(x + i*QK8_0, y[i].qs, &d, &sum)) {
            y[i].d = GGML_FP32_TO_FP16(d);
        } else {
            quantize_row_q8_0_ref(x + i*QK8_0, &y[i], QK8_0);
        }
    }
#else
    quantize_row_q8_0_ref(x, vy, k);
#endif
}

void ggml_cpu_quantize_row_q8_1(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK8_1 == 0);
#if defined(QD_SIMD)
    block_q8_1 * y = (block_q8_1 *) vy;
    for (int64_t i = 0; i < k / QK8_1; i++) {
        float d;
        int sum;
        if (qd_q8_block(x + i*QK8_1, y[i].qs, &d, &sum)) {
            y[i].d = GGML_FP32_TO_FP16(d);
            y[i].s = GGML_FP32_TO_FP16((float) sum * d);
        } else {
            quantize_row_q8_1_ref(x + i*QK8_1, &y[i], QK8_1);
        }
    }
#else
    quantize_row_q8_1_ref(x, vy, k);
#endif
}

//
// quantized rows . Q8 rows: portable path
//

// one weight row . one activation row: sum over blocks of dx*dy*isum (+ mx*sy)
static QD_INLINE float qd_dot_row_ref(enum ggml_type type, int64_t nb, const char * x, const char * y) {
    const size_t bsx = qd_block_size(type);
    const bool affine = qd_is_affine(type);
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; b++) {
        int v[32];
        float dx, mx;
        qd_block_codes_ref(type, x + b*bsx, v, &dx, &mx);
        float dy, sy = 0.0f;
        const int8_t * yq;
        if (affine) {
            const block_q8_1 * yb = (const block_q8_1 *) y + b;
            dy = GGML_FP16_TO_FP32(yb->d);
            sy = GGML_FP16_TO_FP32(yb->s);
            yq = yb->qs;
        } else {
            const block_q8_0 * yb = (const block_q8_0 *) y + b;
            dy = GGML_FP16_TO_FP32(yb->d);
            yq = yb->qs;
        }
        int isum = 0;
        for (int j = 0; j < 32; j++) {
            isum += v[j] * yq[j];
        }
        sum += (dx*dy) * (float) isum;
        if (affine) {
            sum += mx*sy;
        }
    }
    return sum;
}

#define QD_DEFINE_ROWS_REF(name, type)                                                                 \
    static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,                  \
                     const void * const * y, float * const * s, int64_t nc) {                         \
        for (int64_t c = 0; c < nc; c++) {                                                             \
            for (int64_t r = 0; r < nr; r++) {                                                         \
                s[c][r] = qd_dot_row_ref(type, n / 32, (const char *) x + r*bx, (const char *) y[c]);  \
            }                                                                                          \
        }                                                                                              \
    }

QD_DEFINE_ROWS_REF(qd_rows_q4_0_ref, GGML_TYPE_Q4_0)
QD_DEFINE_ROWS_REF(qd_rows_q4_1_ref, GGML_TYPE_Q4_1)
QD_DEFINE_ROWS_REF(qd_rows_q5_0_ref, GGML_TYPE_Q5_0)
QD_DEFINE_ROWS_REF(qd_rows_q5_1_ref, GGML_TYPE_Q5_1)
QD_DEFINE_ROWS_REF(qd_rows_q8_0_ref, GGML_TYPE_Q8_0)

//
// quantized rows . Q8 rows: vector path (256-bit blocks)
//

#if defined(QD_SIMD)

// columns a step meets at once (the accumulators must fit in registers)
#if defined(GGML_VEC_AVX512)
#define QD_QCOLS 4
#else
#define QD_QCOLS 2
#endif

// One step: R rows (R <= 4), x + r*xs, . C columns y[c] (C <= QD_QCOLS) into
// s[c][i0 + r*is]. Each weight block is decoded once for the C columns. Each
// result is formed by the same operations whatever R and C are.
static QD_INLINE void qd_rows_step(enum ggml_type type, const int R, const int C, int64_t nb,
                                   const char * x, size_t xs, const char * const * y,
                                   float * const * s, int64_t i0, int64_t is) {
    const size_t bsx = qd_block_size(type);
    const bool affine = qd_is_affine(type);
    const int  offset = type == GGML_TYPE_Q4_0 ? 8 : type == GGML_TYPE_Q5_0 ? 16 : 0;

    __m256 acc[4][QD_QCOLS];
    float  macc[4][QD_QCOLS];
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            acc[r][c]  = _mm256_setzero_ps();
            macc[r][c] = 0.0f;
        }
    }

    for (int64_t b = 0; b < nb; b++) {
        __m256i yq[QD_QCOLS], base[QD_QCOLS];
        float   dy[QD_QCOLS], sy[QD_QCOLS];
        for (int c = 0; c < C; c++) {
            if (affine) {
                const block_q8_1 * yb = (const block_q8_1 *) y[c] + b;
                yq[c] = _mm256_loadu_si256((const __m256i *) yb->qs);
                dy[c] = qd_h2f(yb->d);
                sy[c] = qd_h2f(yb->s);
            } else {
                const block_q8_0 * yb = (const block_q8_0 *) y[c] + b;
                yq[c] = _mm256_loadu_si256((const __m256i *) yb->qs);
                dy[c] = qd_h2f(yb->d);
                sy[c] = 0.0f;
            }
            // -o * (partial sums of y), the starting value of the integer sums
            base[c] = _mm256_setzero_si256();
            if (offset != 0) {
                base[c] = _mm256_sub_epi32(base[c], qd_dot_u8s8(_mm256_setzero_si256(), _mm256_set1_epi8((char) offset), yq[c]));
            }
        }
        for (int r = 0; r < R; r++) {
            const char * blk = x + r*xs + b*bsx;
            __m256i u;   // unsigned codes, or the signed Q8_0 values
            float dx, mx = 0.0f;
            switch (type) {
                case GGML_TYPE_Q4_0: {
                    const block_q4_0 * xb = (const block_q4_0 *) blk;
                    u  = qd_unpack_nibbles(xb->qs);
                    dx = qd_h2f(xb->d);
                } break;
                case GGML_TYPE_Q4_1: {
                    const block_q4_1 * xb = (const block_q4_1 *) blk;
                    u  = qd_unpack_nibbles(xb->qs);
                    dx = qd_h2f(xb->d);
                    mx = qd_h2f(xb->m);
                } break;
                case GGML_TYPE_Q5_0: {
                    const block_q5_0 * xb = (const block_q5_0 *) blk;
                    u  = _mm256_or_si256(qd_unpack_nibbles(xb->qs), qd_unpack_fifth_bits(xb->qh));
                    dx = qd_h2f(xb->d);
                } break;
                case GGML_TYPE_Q5_1: {
                    const block_q5_1 * xb = (const block_q5_1 *) blk;
                    u  = _mm256_or_si256(qd_unpack_nibbles(xb->qs), qd_unpack_fifth_bits(xb->qh));
                    dx = qd_h2f(xb->d);
                    mx = qd_h2f(xb->m);
                } break;
                default: { // GGML_TYPE_Q8_0
                    const block_q8_0 * xb = (const block_q8_0 *) blk;
                    u  = _mm256_loadu_si256((const __m256i *) xb->qs);
                    dx = qd_h2f(xb->d);
                } break;
            }
            for (int c = 0; c < C; c++) {
                const __m256i isum = type == GGML_TYPE_Q8_0
                    ? qd_dot_u8s8(base[c], _mm256_sign_epi8(u, u), _mm256_sign_epi8(yq[c], u))
                    : qd_dot_u8s8(base[c], u, yq[c]);
                acc[r][c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(dx*dy[c]), acc[r][c]);
                if (affine) {
                    macc[r][c] += mx*sy[c];
                }
            }
        }
    }
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            s[c][i0 + r*is] = qd_hsum256(acc[r][c]) + macc[r][c];
        }
    }
}

// C columns: the four rows of a step come from four quarters of the block, so
// that each is one long sequential stream (the prefetchers follow long
// streams; four short ones that restart at every row they do not)
static QD_INLINE void qd_rows_cols(enum ggml_type type, const int C, int64_t n, const char * x, size_t bx,
                                   int64_t nr, const char * const * y, float * const * s) {
    const int64_t nb = n / 32;
    const int64_t q  = nr / 4;
    for (int64_t r = 0; r < q; r++) {
        qd_rows_step(type, 4, C, nb, x + r*bx, q*bx, y, s, r, q);
    }
    for (int64_t r = 4*q; r < nr; r++) {
        qd_rows_step(type, 1, C, nb, x + r*bx, bx, y, s, r, 0);
    }
}

static QD_INLINE void qd_rows_simd(enum ggml_type type, int64_t n, const void * x, size_t bx, int64_t nr,
                                   const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c0 = 0; c0 < nc; c0 += QD_QCOLS) {
        const char * const * yc = (const char * const *) y + c0;
        switch (MIN(QD_QCOLS, nc - c0)) {
            case 1:  qd_rows_cols(type, 1, n, (const char *) x, bx, nr, yc, s + c0); break;
#if QD_QCOLS > 2
            case 3:  qd_rows_cols(type, 3, n, (const char *) x, bx, nr, yc, s + c0); break;
            case 4:  qd_rows_cols(type, 4, n, (const char *) x, bx, nr, yc, s + c0); break;
#endif
            default: qd_rows_cols(type, 2, n, (const char *) x, bx, nr, yc, s + c0); break;
        }
    }
}

#define QD_DEFINE_ROWS_SIMD(name, type)                                                                \
    static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,                  \
                     const void * const * y, float * const * s, int64_t nc) {                         \
        qd_rows_simd(type, n, x, bx, nr, y, s, nc);                                                    \
    }

QD_DEFINE_ROWS_SIMD(qd_rows_q4_0, GGML_TYPE_Q4_0)
QD_DEFINE_ROWS_SIMD(qd_rows_q4_1, GGML_TYPE_Q4_1)
QD_DEFINE_ROWS_SIMD(qd_rows_q5_0, GGML_TYPE_Q5_0)
QD_DEFINE_ROWS_SIMD(qd_rows_q5_1, GGML_TYPE_Q5_1)
QD_DEFINE_ROWS_SIMD(qd_rows_q8_0, GGML_TYPE_Q8_0)

#else

#define qd_rows_q4_0 qd_rows_q4_0_ref
#define qd_rows_q4_1 qd_rows_q4_1_ref
#define qd_rows_q5_0 qd_rows_q5_0_ref
#define qd_rows_q5_1 qd_rows_q5_1_ref
#define qd_rows_q8_0 qd_rows_q8_0_ref

#endif

//
// float rows . F32 rows
//

static QD_INLINE float qd_bf16_to_f32(ggml_bf16_t h) {
    return ggml_compute_bf16_to_fp32(h);
}

static void qd_rows_f32_ref(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                            const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        for (int64_t r = 0; r < nr; r++) {
            s[c][r] = ggml_vec_dot_f32_ref(n, (const float *)((const char *) x + r*bx), (const float *) y[c]);
        }
    }
}

static void qd_rows_f16_ref(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                            const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        const float * yf = (const float *) y[c];
        for (int64_t r = 0; r < nr; r++) {
            const ggml_fp16_t * xr = (const ggml_fp16_t *)((const char *) x + r*bx);
            float sum = 0.0f;
            for (int64_t i = 0; i < n; i++) {
                sum += ggml_compute_fp16_to_fp32(xr[i]) * yf[i];
            }
            s[c][r] = sum;
        }
    }
}

static void qd_rows_bf16_ref(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                             const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        const float * yf = (const float *) y[c];
        for (int64_t r = 0; r < nr; r++) {
            const ggml_bf16_t * xr = (const ggml_bf16_t *)((const char *) x + r*bx);
            float sum = 0.0f;
            for (int64_t i = 0; i < n; i++) {
                sum += qd_bf16_to_f32(xr[i]) * yf[i];
            }
            s[c][r] = sum;
        }
    }
}

#if defined(QD_SIMD) && defined(GGML_VEC_AVX512)

#define QD_FW 16
typedef __m512 qd_fvec;

// n <= 16 values of a row as floats (the rest zero)
static QD_INLINE __m512 qd_load_f32 (const void * p, int64_t n) { return n >= 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p); }
static QD_INLINE __m512 qd_load_f16 (const void * p, int64_t n) {
    const __m256i h = n >= 16 ? _mm256_loadu_si256((const __m256i *) p) : _mm256_maskz_loadu_epi16((__mmask16)((1u << n) - 1), p);
    return _mm512_cvtph_ps(h);
}
static QD_INLINE __m512 qd_load_bf16(const void * p, int64_t n) {
    const __m256i h = n >= 16 ? _mm256_loadu_si256((const __m256i *) p) : _mm256_maskz_loadu_epi16((__mmask16)((1u << n) - 1), p);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
static QD_INLINE __m512 qd_fzero(void) { return _mm512_setzero_ps(); }
static QD_INLINE __m512 qd_fmadd(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
static QD_INLINE __m512 qd_fadd(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
static QD_INLINE float  qd_fsum(__m512 v) { return _mm512_reduce_add_ps(v); }

#elif defined(QD_SIMD)

#define QD_FW 8
typedef __m256 qd_fvec;

static QD_INLINE __m256i qd_tail_mask(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int) n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
static QD_INLINE __m256 qd_load_f32(const void * p, int64_t n) {
    return n >= 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, qd_tail_mask(n));
}
static QD_INLINE __m128i qd_load_u16x8(const void * p, int64_t n) {
    if (n >= 8) {
        return _mm_loadu_si128((const __m128i *) p);
    }
    uint16_t tmp[8] = { 0 };
    memcpy(tmp, p, (size_t) n * sizeof(uint16_t));
    return _mm_loadu_si128((const __m128i *) tmp);
}
static QD_INLINE __m256 qd_load_f16 (const void * p, int64_t n) { return _mm256_cvtph_ps(qd_load_u16x8(p, n)); }
static QD_INLINE __m256 qd_load_bf16(const void * p, int64_t n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(qd_load_u16x8(p, n)), 16));
}
static QD_INLINE __m256 qd_fzero(void) { return _mm256_setzero_ps(); }
static QD_INLINE __m256 qd_fmadd(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
static QD_INLINE __m256 qd_fadd(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
static QD_INLINE float  qd_fsum(__m256 v) { return qd_hsum256(v); }

#endif

#if defined(QD_SIMD)

enum qd_ftype { QD_F32, QD_F16, QD_BF16 };

static QD_INLINE qd_fvec qd_load_row(enum qd_ftype ft, const char * row, int64_t i, int64_t n) {
    switch (ft) {
        case QD_F32: return qd_load_f32(row + i*4, n);
        case QD_F16: return qd_load_f16(row + i*2, n);
        default:     return qd_load_bf16(row + i*2, n);
    }
}

// columns a step meets at once
#if defined(GGML_VEC_AVX512)
#define QD_FCOLS 2
#else
#define QD_FCOLS 1
#endif

// One step: R rows (R <= 4), x + r*xs, . C F32 columns (C <= QD_FCOLS) into
// s[c][i0 + r*is], two accumulators per result; each result is formed by the
// same operations whatever R and C are
static QD_INLINE void qd_frows_step(enum qd_ftype ft, const int R, const int C, int64_t n,
                                    const char * x, size_t xs, const float * const * y,
                                    float * const * s, int64_t i0, int64_t is) {
    qd_fvec acc0[4][QD_FCOLS], acc1[4][QD_FCOLS];
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            acc0[r][c] = qd_fzero();
            acc1[r][c] = qd_fzero();
        }
    }
    int64_t i = 0;
    for (; i + 2*QD_FW <= n; i += 2*QD_FW) {
        qd_fvec y0[QD_FCOLS], y1[QD_FCOLS];
        for (int c = 0; c < C; c++) {
            y0[c] = qd_load_f32(y[c] + i,         QD_FW);
            y1[c] = qd_load_f32(y[c] + i + QD_FW, QD_FW);
        }
        for (int r = 0; r < R; r++) {
            const qd_fvec x0 = qd_load_row(ft, x + r*xs, i,         QD_FW);
            const qd_fvec x1 = qd_load_row(ft, x + r*xs, i + QD_FW, QD_FW);
            for (int c = 0; c < C; c++) {
                acc0[r][c] = qd_fmadd(x0, y0[c], acc0[r][c]);
                acc1[r][c] = qd_fmadd(x1, y1[c], acc1[r][c]);
            }
        }
    }
    for (; i < n; i += QD_FW) {
        const int64_t m = MIN(n - i, QD_FW);
        for (int r = 0; r < R; r++) {
            const qd_fvec xv = qd_load_row(ft, x + r*xs, i, m);
            for (int c = 0; c < C; c++) {
                acc0[r][c] = qd_fmadd(xv, qd_load_f32(y[c] + i, m), acc0[r][c]);
            }
        }
    }
    for (int r = 0; r < R; r++) {
        for (int c = 0; c < C; c++) {
            s[c][i0 + r*is] = qd_fsum(qd_fadd(acc0[r][c], acc1[r][c]));
        }
    }
}

// the rows of a step from four quarters of the block, as in qd_rows_cols
static QD_INLINE void qd_frows_cols(enum qd_ftype ft, const int C, int64_t n, const char * x, size_t bx,
                                    int64_t nr, const float * const * y, float * const * s) {
    const int64_t q = nr / 4;
    for (int64_t r = 0; r < q; r++) {
        qd_frows_step(ft, 4, C, n, x + r*bx, q*bx, y, s, r, q);
    }
    for (int64_t r = 4*q; r < nr; r++) {
        qd_frows_step(ft, 1, C, n, x + r*bx, bx, y, s, r, 0);
    }
}

static QD_INLINE void qd_frows(enum qd_ftype ft, int64_t n, const void * x, size_t bx, int64_t nr,
                               const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c0 = 0; c0 < nc; c0 += QD_FCOLS) {
        const float * const * yc = (const float * const *) y + c0;
#if QD_FCOLS > 1
        if (nc - c0 >= 2) {
            qd_frows_cols(ft, 2, n, (const char *) x, bx, nr, yc, s + c0);
            continue;
        }
#endif
        qd_frows_cols(ft, 1, n, (const char *) x, bx, nr, yc, s + c0);
    }
}

#define QD_DEFINE_FROWS(name, ft)                                                                      \
    static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,                  \
                     const void * const * y, float * const * s, int64_t nc) {                         \
        qd_frows(ft, n, x, bx, nr, y, s, nc);                                                          \
    }

QD_DEFINE_FROWS(qd_rows_f32,  QD_F32)
QD_DEFINE_FROWS(qd_rows_f16,  QD_F16)
QD_DEFINE_FROWS(qd_rows_bf16, QD_BF16)

#else

#define qd_rows_f32  qd_rows_f32_ref
#define qd_rows_f16  qd_rows_f16_ref
#define qd_rows_bf16 qd_rows_bf16_ref

#endif

void ggml_cpu_add_kernels_quants_dot(struct ggml_cpu_kernel_config * cfg) {
#define QD_ADD(type, f, r)                                                        \
    GGML_CPU_SET_KERNEL(cfg->fast, type, dot_rows, f, GGML_CPU_QD_ISA);          \
    GGML_CPU_SET_KERNEL(cfg->ref,  type, dot_rows, r, "scalar")
    QD_ADD(GGML_TYPE_F32,  qd_rows_f32,  qd_rows_f32_ref);
    QD_ADD(GGML_TYPE_F16,  qd_rows_f16,  qd_rows_f16_ref);
    QD_ADD(GGML_TYPE_BF16, qd_rows_bf16, qd_rows_bf16_ref);
    QD_ADD(GGML_TYPE_Q4_0, qd_rows_q4_0, qd_rows_q4_0_ref);
    QD_ADD(GGML_TYPE_Q4_1, qd_rows_q4_1, qd_rows_q4_1_ref);
    QD_ADD(GGML_TYPE_Q5_0, qd_rows_q5_0, qd_rows_q5_0_ref);
    QD_ADD(GGML_TYPE_Q5_1, qd_rows_q5_1, qd_rows_q5_1_ref);
    QD_ADD(GGML_TYPE_Q8_0, qd_rows_q8_0, qd_rows_q8_0_ref);
#undef QD_ADD

    // the activation quantizers (Q8_K has only the reference one)
    cfg->act_fast[GGML_TYPE_Q8_0] = ggml_cpu_quantize_row_q8_0;
    cfg->act_fast[GGML_TYPE_Q8_1] = ggml_cpu_quantize_row_q8_1;
    cfg->act_fast[GGML_TYPE_Q8_K] = quantize_row_q8_K_ref;
    cfg->act_ref[GGML_TYPE_Q8_0]  = quantize_row_q8_0_ref;
    cfg->act_ref[GGML_TYPE_Q8_1]  = quantize_row_q8_1_ref;
    cfg->act_ref[GGML_TYPE_Q8_K]  = quantize_row_q8_K_ref;
    cfg->act_fast_isa[GGML_TYPE_Q8_0] = GGML_CPU_QD_ISA;
    cfg->act_fast_isa[GGML_TYPE_Q8_1] = GGML_CPU_QD_ISA;
    cfg->act_fast_isa[GGML_TYPE_Q8_K] = "scalar";
}

//
// ggml_vec_dot_t kernels of the type traits
//

void ggml_vec_dot_f32_row(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                          const void * GGML_RESTRICT y, size_t by, int nrc) {
    GGML_ASSERT(nrc == 1);
    GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);
    *s = ggml_vec_dot_f32(n, (const float *) x, (const float *) y);
}

void ggml_vec_dot_f16_row(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                          const void * GGML_RESTRICT y, size_t by, int nrc) {
    GGML_ASSERT(nrc == 1);
    GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);
    *s = ggml_vec_dot_f16(n, (const ggml_fp16_t *) x, (const ggml_fp16_t *) y);
}

void ggml_vec_dot_bf16_row(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                           const void * GGML_RESTRICT y, size_t by, int nrc) {
    GGML_ASSERT(nrc == 1);
    GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);
    const ggml_bf16_t * xb = (const ggml_bf16_t *) x;
    const ggml_bf16_t * yb = (const ggml_bf16_t *) y;
#if defined(QD_SIMD)
    qd_fvec acc0 = qd_fzero(), acc1 = qd_fzero();
    int64_t i = 0;
    for (; i + 2*QD_FW <= n; i += 2*QD_FW) {
        acc0 = qd_fmadd(qd_load_bf16(xb + i,         QD_FW), qd_load_bf16(yb + i,         QD_FW), acc0);
        acc1 = qd_fmadd(qd_load_bf16(xb + i + QD_FW, QD_FW), qd_load_bf16(yb + i + QD_FW, QD_FW), acc1);
    }
    for (; i < n; i += QD_FW) {
        const int64_t m = MIN(n - i, QD_FW);
        acc0 = qd_fmadd(qd_load_bf16(xb + i, m), qd_load_bf16(yb + i, m), acc0);
    }
    *s = qd_fsum(qd_fadd(acc0, acc1));
#else
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        sum += qd_bf16_to_f32(xb[i]) * qd_bf16_to_f32(yb[i]);
    }
    *s = sum;
#endif
}

#define QD_DEFINE_VEC_DOT(name, rows)                                                                  \
    void name(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,      \
              const void * GGML_RESTRICT y, size_t by, int nrc) {                                      \
        GGML_ASSERT(nrc == 1);                                                                         \
        GGML_ASSERT(n % 32 == 0);                                                                      \
        GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);                                             \
        const void * yc[1] = { y };                                                                    \
        float *      sc[1] = { s };                                                                    \
        rows(n, x, 0, 1, yc, sc, 1);                                                                   \
    }

QD_DEFINE_VEC_DOT(ggml_vec_dot_q4_0_q8_0, qd_rows_q4_0)
QD_DEFINE_VEC_DOT(ggml_vec_dot_q4_1_q8_1, qd_rows_q4_1)
QD_DEFINE_VEC_DOT(ggml_vec_dot_q5_0_q8_0, qd_rows_q5_0)
QD_DEFINE_VEC_DOT(ggml_vec_dot_q5_1_q8_1, qd_rows_q5_1)
QD_DEFINE_VEC_DOT(ggml_vec_dot_q8_0_q8_0, qd_rows_q8_0)

// Q8_1 is an activation format: no matrix product reads it as weights, but
// the type traits offer a dot product for every type that has to_float, so
// that code walking the table (as upstream's quantization tests do) finds a
// consistent entry. Plain integer sums per block; speed does not matter here.
void ggml_vec_dot_q8_1_q8_1(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    GGML_ASSERT(nrc == 1);
    GGML_ASSERT(n % QK8_1 == 0);
    GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);
    const block_q8_1 * xb = (const block_q8_1 *) x;
    const block_q8_1 * yb = (const block_q8_1 *) y;
    float sum = 0.0f;
    for (int i = 0; i < n / QK8_1; i++) {
        int32_t acc = 0;
        for (int j = 0; j < QK8_1; j++) {
            acc += (int32_t) xb[i].qs[j] * (int32_t) yb[i].qs[j];
        }
        sum += GGML_FP16_TO_FP32(xb[i].d) * GGML_FP16_TO_FP32(yb[i].d) * (float) acc;
    }
    *s = sum;
}
