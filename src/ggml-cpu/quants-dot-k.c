// quants-dot-k.c: the K-quant weight rows (Q2_K .. Q6_K) . Q8_K activation rows.
//
// A Q8_K block holds 256 int8 codes, one float scale and the sums of its
// codes by groups of 16 (bsums). Every K-quant block decodes to
//     value = d * sc[g] * q  -  dmin * m[g]      (g = the group of 16 values)
// with small integer codes q, scales sc and minimums m, so the dot product
// of a weight block with an activation block is
//     dy * (d * sum_g sc[g] * (q . y)_g  -  dmin * sum_g m[g] * bsums[g])
// and only integer products are needed inside a block. The types whose codes
// carry an offset (Q3_K: q - 4, Q6_K: q - 32) move it into the bsums term the
// same way.
//
// Portable path for every type; AVX2 paths (256-bit, also used by the AVX-512
// build) for Q2_K .. Q6_K. The two paths differ only in the order of the float
// sums of a row. The Q4_K and
// Q6_K vector paths decode a weight block once for up to 4 activation columns
// (prompts: the matrix product sends every column through this row path).

#include "quants-dot.h"
#include "quants-simd.h"
#include "ggml-quants.h"

//
// portable path: decode a block into codes, per-16 scales and minimums
//

struct qk_block {
    int8_t q[QK_K];        // codes with their offset removed
    int    sc[QK_K/16];    // scale of each group of 16
    int    m[QK_K/16];     // minimum of each group of 16 (0 for the symmetric types)
    float  d, dmin;
};

static void qk_decode(enum ggml_type type, const void * blk, struct qk_block * o) {
    switch (type) {
        case GGML_TYPE_Q2_K: {
            const block_q2_K * b = (const block_q2_K *) blk;
            for (int p = 0; p < QK_K; p++) {
                o->q[p] = (int8_t)((b->qs[32*(p/128) + p%32] >> (2*((p/32)%4))) & 3);
            }
            for (int g = 0; g < QK_K/16; g++) {
                o->sc[g] = b->scales[g] & 0x0F;
                o->m[g]  = b->scales[g] >> 4;
            }
            o->d    = GGML_FP16_TO_FP32(b->d);
            o->dmin = GGML_FP16_TO_FP32(b->dmin);
        } break;
        case GGML_TYPE_Q3_K: {
            const block_q3_K * b = (const block_q3_K *) blk;
            for (int p = 0; p < QK_K; p++) {
                const int low = (b->qs[32*(p/128) + p%32] >> (2*((p/32)%4))) & 3;
                const int hi  = (b->hmask[p%32] >> (p/32)) & 1;
                o->q[p] = (int8_t)(low - (hi ? 0 : 4));
            }
            ggml_q3_K_scales(b->scales, o->sc);
            memset(o->m, 0, sizeof(o->m));
            o->d    = GGML_FP16_TO_FP32(b->d);
            o->dmin = 0.0f;
        } break;
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K: {
            const uint8_t * scales;
            const uint8_t * qs;
            const uint8_t * qh = NULL;
            ggml_half hd, hdmin;
            if (type == GGML_TYPE_Q4_K) {
                const block_q4_K * b = (const block_q4_K *) blk;
                scales = b->scales; qs = b->qs; hd = b->d; hdmin = b->dmin;
            } else {
                const block_q5_K * b = (const block_q5_K *) blk;
                scales = b->scales; qs = b->qs; qh = b->qh; hd = b->d; hdmin = b->dmin;
            }
            for (int j = 0; j < QK_K/32; j++) {
                int sc, m;
                ggml_k_scale_min(j, scales, &sc, &m);
                o->sc[2*j] = o->sc[2*j + 1] = sc;
                o->m[2*j]  = o->m[2*j + 1]  = m;
                for (int l = 0; l < 32; l++) {
                    int v = (j % 2) ? qs[32*(j/2) + l] >> 4 : qs[32*(j/2) + l] & 0x0F;
                    if (qh != NULL) {
                        v |= ((qh[l] >> j) & 1) << 4;
                    }
                    o->q[32*j + l] = (int8_t) v;
                }
            }
            o->d    = GGML_FP16_TO_FP32(hd);
            o->dmin = GGML_FP16_TO_FP32(hdmin);
        } break;
        case GGML_TYPE_Q6_K: {
            const block_q6_K * b = (const block_q6_K *) blk;
            for (int p = 0; p < QK_K; p++) {
                const int h = p/128, s = (p/32)%4, l = p%32;
                const int lo = (b->ql[64*h + 32*(s & 1) + l] >> (4*(s/2))) & 0x0F;
                const int hi = (b->qh[32*h + l] >> (2*s)) & 3;
                o->q[p] = (int8_t)((lo | (hi << 4)) - 32);
            }
            for (int g = 0; g < QK_K/16; g++) {
                o->sc[g] = b->scales[g];
            }
            memset(o->m, 0, sizeof(o->m));
            o->d    = GGML_FP16_TO_FP32(b->d);
            o->dmin = 0.0f;
        } break;
        default:
            GGML_ABORT("no K-quant decoding for type %s", ggml_type_name(type));
    }
}

static float qk_dot_row_ref(enum ggml_type type, int64_t nb, const char * x, const block_q8_K * y) {
    const size_t bs = ggml_type_size(type);
    float sum = 0.0f;
    for (int64_t b = 0; b < nb; b++) {
        struct qk_block blk;
        qk_decode(type, x + b*bs, &blk);
        int32_t isum = 0, msum = 0;
        for (int g = 0; g < QK_K/16; g++) {
            int32_t gs = 0;
            for (int i = 0; i < 16; i++) {
                gs += blk.q[16*g + i] * y[b].qs[16*g + i];
            }
            isum += blk.sc[g] * gs;
            msum += blk.m[g] * y[b].bsums[g];
        }
        sum += y[b].d * (blk.d * (float) isum - blk.dmin * (float) msum);
    }
    return sum;
}

#define QK_DEFINE_ROWS_REF(name, type)                                                                 \
    static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,                  \
                     const void * const * y, float * const * s, int64_t nc) {                         \
        for (int64_t c = 0; c < nc; c++) {                                                             \
            for (int64_t r = 0; r < nr; r++) {                                                         \
                s[c][r] = qk_dot_row_ref(type, n / QK_K, (const char *) x + r*bx,                      \
                                         (const block_q8_K *) y[c]);                                   \
            }                                                                                          \
        }                                                                                              \
    }

QK_DEFINE_ROWS_REF(qk_rows_q2_K_ref, GGML_TYPE_Q2_K)
QK_DEFINE_ROWS_REF(qk_rows_q3_K_ref, GGML_TYPE_Q3_K)
QK_DEFINE_ROWS_REF(qk_rows_q4_K_ref, GGML_TYPE_Q4_K)
QK_DEFINE_ROWS_REF(qk_rows_q5_K_ref, GGML_TYPE_Q5_K)
QK_DEFINE_ROWS_REF(qk_rows_q6_K_ref, GGML_TYPE_Q6_K)

//
// vector path
//

#if defined(QD_SIMD)

// sum over 16-bit lanes of (unsigned u . signed y pairs) * scale, as int32 lanes
static QD_INLINE __m256i qk_scaled_dot(__m256i u, __m256i y, __m256i scale16) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, y), scale16);
}

// the 6-bit scales and minimums of a Q4_K / Q5_K block, and the sum of the
// minimums times the activation group sums
static QD_INLINE int32_t qk_scales_mins_45(const uint8_t * scales, const int16_t * bsums, int * sc) {
    int32_t msum = 0;
    for (int j = 0; j < QK_K/32; j++) {
        int m;
        ggml_k_scale_min(j, scales, &sc[j], &m);
        msum += m * (bsums[2*j] + bsums[2*j + 1]);
    }
    return msum;
}

// one Q4_K row . C (<= 4) Q8_K columns: the weight block is decoded once for
// all of them; each result takes the same operations whatever C is
#define QK_MAX_COLS 4
static QD_INLINE void qk_dot_cols_q4_K(int64_t nb, const block_q4_K * x, const block_q8_K * const * y, const int C, float * out) {
    const __m256i mask = _mm256_set1_epi8(0x0F);
    __m256 acc[QK_MAX_COLS];
    float  macc[QK_MAX_COLS];
    for (int c = 0; c < C; c++) {
        acc[c]  = _mm256_setzero_ps();
        macc[c] = 0.0f;
    }
    for (int64_t b = 0; b < nb; b++) {
        int sc[QK_K/32], mn[QK_K/32];
        for (int j = 0; j < QK_K/32; j++) {
            ggml_k_scale_min(j, x[b].scales, &sc[j], &mn[j]);
        }
        const float dx = qd_h2f(x[b].d), mx = qd_h2f(x[b].dmin);
        __m256i isum[QK_MAX_COLS];
        for (int c = 0; c < C; c++) {
            isum[c] = _mm256_setzero_si256();
        }
        for (int h = 0; h < QK_K/64; h++) {
            const __m256i q  = _mm256_loadu_si256((const __m256i *)(x[b].qs + 32*h));
            const __m256i lo = _mm256_and_si256(q, mask);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), mask);
            const __m256i s0 = _mm256_set1_epi16((short) sc[2*h]);
            const __m256i s1 = _mm256_set1_epi16((short) sc[2*h + 1]);
            for (int c = 0; c < C; c++) {
                const __m256i y0 = _mm256_loadu_si256((const __m256i *)(y[c][b].qs + 64*h));
                const __m256i y1 = _mm256_loadu_si256((const __m256i *)(y[c][b].qs + 64*h + 32));
                isum[c] = _mm256_add_epi32(isum[c], qk_scaled_dot(lo, y0, s0));
                isum[c] = _mm256_add_epi32(isum[c], qk_scaled_dot(hi, y1, s1));
            }
        }
        for (int c = 0; c < C; c++) {
            int32_t msum = 0;
            for (int j = 0; j < QK_K/32; j++) {
                msum += mn[j] * (y[c][b].bsums[2*j] + y[c][b].bsums[2*j + 1]);
            }
            const float dy = y[c][b].d;
            acc[c]  = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c]), _mm256_set1_ps(dx * dy), acc[c]);
            macc[c] += mx * dy * (float) msum;
        }
    }
    for (int c = 0; c < C; c++) {
        out[c] = qd_hsum256(acc[c]) - macc[c];
    }
}

static void qk_rows_q4_K(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                         const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c0 = 0; c0 < nc; c0 += QK_MAX_COLS) {
        const block_q8_K * const * yc = (const block_q8_K * const *) y + c0;
        const int C = (int) MIN(QK_MAX_COLS, nc - c0);
        for (int64_t r = 0; r < nr; r++) {
            const block_q4_K * xr = (const block_q4_K *)((const char *) x + r*bx);
            float out[QK_MAX_COLS];
            switch (C) {
                case 1:  qk_dot_cols_q4_K(n / QK_K, xr, yc, 1, out); break;
                case 2:  qk_dot_cols_q4_K(n / QK_K, xr, yc, 2, out); break;
                case 3:  qk_dot_cols_q4_K(n / QK_K, xr, yc, 3, out); break;
                default: qk_dot_cols_q4_K(n / QK_K, xr, yc, 4, out); break;
            }
            for (int c = 0; c < C; c++) {
                s[c0 + c][r] = out[c];
            }
        }
    }
}

static float qk_dot_row_q5_K(int64_t nb, const block_q5_K * x, const block_q8_K * y) {
    const __m256i mask = _mm256_set1_epi8(0x0F);
    const __m256i one  = _mm256_set1_epi8(1);
    __m256 acc = _mm256_setzero_ps();
    float  macc = 0.0f;
    for (int64_t b = 0; b < nb; b++) {
        int sc[QK_K/32];
        const int32_t msum = qk_scales_mins_45(x[b].scales, y[b].bsums, sc);
        const __m256i qh = _mm256_loadu_si256((const __m256i *) x[b].qh);
        __m256i isum = _mm256_setzero_si256();
        for (int h = 0; h < QK_K/64; h++) {
            const __m256i q  = _mm256_loadu_si256((const __m256i *)(x[b].qs + 32*h));
            // bit 2h (2h+1) of qh[l] is bit 4 of value l of the low (high) half;
            // after the 16-bit shifts, the mask keeps bit 0 of each byte only
            const __m256i b0 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2*h)),     one);
            const __m256i b1 = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2*h + 1)), one);
            const __m256i lo = _mm256_or_si256(_mm256_and_si256(q, mask), _mm256_slli_epi16(b0, 4));
            const __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), mask), _mm256_slli_epi16(b1, 4));
            const __m256i y0 = _mm256_loadu_si256((const __m256i *)(y[b].qs + 64*h));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *)(y[b].qs + 64*h + 32));
            isum = _mm256_add_epi32(isum, qk_scaled_dot(lo, y0, _mm256_set1_epi16((short) sc[2*h])));
            isum = _mm256_add_epi32(isum, qk_scaled_dot(hi, y1, _mm256_set1_epi16((short) sc[2*h + 1])));
        }
        const float dy = y[b].d;
        acc  = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(qd_h2f(x[b].d) * dy), acc);
        macc += qd_h2f(x[b].dmin) * dy * (float) msum;
    }
    return qd_hsum256(acc) - macc;
}

// one Q6_K row . C (<= 4) Q8_K columns, the weight block decoded once
static QD_INLINE void qk_dot_cols_q6_K(int64_t nb, const block_q6_K * x, const block_q8_K * const * y, const int C, float * out) {
    const __m256i mask4 = _mm256_set1_epi8(0x0F);
    const __m256i mask2 = _mm256_set1_epi8(0x03);
    __m256 acc[QK_MAX_COLS];
    for (int c = 0; c < C; c++) {
        acc[c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nb; b++) {
        __m256i isum[QK_MAX_COLS];
        for (int c = 0; c < C; c++) {
            isum[c] = _mm256_setzero_si256();
        }
        for (int h = 0; h < QK_K/128; h++) {
            const __m256i ql0 = _mm256_loadu_si256((const __m256i *)(x[b].ql + 64*h));
            const __m256i ql1 = _mm256_loadu_si256((const __m256i *)(x[b].ql + 64*h + 32));
            const __m256i qh  = _mm256_loadu_si256((const __m256i *)(x[b].qh + 32*h));
            __m256i u[4];
            u[0] = _mm256_or_si256(_mm256_and_si256(ql0, mask4), _mm256_slli_epi16(_mm256_and_si256(qh, mask2), 4));
            u[1] = _mm256_or_si256(_mm256_and_si256(ql1, mask4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), mask2), 4));
            u[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), mask4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 4), mask2), 4));
            u[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), mask4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 6), mask2), 4));
            for (int q = 0; q < 4; q++) {
                const int8_t * sc = x[b].scales + 8*h + 2*q;
                // lanes 0..7 hold values 0..15 (first scale), lanes 8..15 values 16..31
                const __m256i scale16 = _mm256_setr_m128i(_mm_set1_epi16(sc[0]), _mm_set1_epi16(sc[1]));
                for (int c = 0; c < C; c++) {
                    const __m256i yv = _mm256_loadu_si256((const __m256i *)(y[c][b].qs + 128*h + 32*q));
                    isum[c] = _mm256_add_epi32(isum[c], qk_scaled_dot(u[q], yv, scale16));
                }
            }
        }
        const float dx = qd_h2f(x[b].d);
        for (int c = 0; c < C; c++) {
            // the codes are u - 32 with u in 0..63: sum sc*u*y - 32 * sum sc*bsums
            int32_t off = 0;
            for (int g = 0; g < QK_K/16; g++) {
                off += x[b].scales[g] * y[c][b].bsums[g];
            }
            const __m256i v = _mm256_sub_epi32(isum[c], _mm256_setr_epi32(32*off, 0, 0, 0, 0, 0, 0, 0));
            acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(dx * y[c][b].d), acc[c]);
        }
    }
    for (int c = 0; c < C; c++) {
        out[c] = qd_hsum256(acc[c]);
    }
}

static void qk_rows_q6_K(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                         const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c0 = 0; c0 < nc; c0 += QK_MAX_COLS) {
        const block_q8_K * const * yc = (const block_q8_K * const *) y + c0;
        const int C = (int) MIN(QK_MAX_COLS, nc - c0);
        for (int64_t r = 0; r < nr; r++) {
            const block_q6_K * xr = (const block_q6_K *)((const char *) x + r*bx);
            float out[QK_MAX_COLS];
            switch (C) {
                case 1:  qk_dot_cols_q6_K(n / QK_K, xr, yc, 1, out); break;
                case 2:  qk_dot_cols_q6_K(n / QK_K, xr, yc, 2, out); break;
                case 3:  qk_dot_cols_q6_K(n / QK_K, xr, yc, 3, out); break;
                default: qk_dot_cols_q6_K(n / QK_K, xr, yc, 4, out); break;
            }
            for (int c = 0; c < C; c++) {
                s[c0 + c][r] = out[c];
            }
        }
    }
}

#define QK_DEFINE_ROWS_SIMD(name, block_t, dot)                                                        \
    static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,                  \
                     const void * const * y, float * const * s, int64_t nc) {                         \
        for (int64_t c = 0; c < nc; c++) {                                                             \
            for (int64_t r = 0; r < nr; r++) {                                                         \
                s[c][r] = dot(n / QK_K, (const block_t *)((const char *) x + r*bx),                    \
                              (const block_q8_K *) y[c]);                                              \
            }                                                                                          \
        }                                                                                              \
    }

// the scales of groups g0 (int16 lanes 0..7) and g0 + 1 (lanes 8..15): the
// lanes of a maddubs over 32 values, 16 of each group
static QD_INLINE __m256i qk_pair_scales(int s0, int s1) {
    return _mm256_setr_m128i(_mm_set1_epi16((short) s0), _mm_set1_epi16((short) s1));
}

// Q2_K: codes 0..3; the minimums meet the bsums in one int16 multiply-add
static float qk_dot_row_q2_K(int64_t nb, const block_q2_K * x, const block_q8_K * y) {
    const __m256i mask2 = _mm256_set1_epi8(0x03);
    __m256 acc  = _mm256_setzero_ps();
    __m256 macc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        const __m128i sm = _mm_loadu_si128((const __m128i *) x[b].scales);
        const __m256i mn = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sm, 4), _mm_set1_epi8(0x0F)));
        const __m256i msum = _mm256_madd_epi16(mn, _mm256_loadu_si256((const __m256i *) y[b].bsums));
        __m256i isum = _mm256_setzero_si256();
        for (int h = 0; h < QK_K/128; h++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[b].qs + 32*h));
            for (int sh = 0; sh < 4; sh++) {
                const int g = 8*h + 2*sh;
                const __m256i u  = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2*sh)), mask2);
                const __m256i yv = _mm256_loadu_si256((const __m256i *)(y[b].qs + 128*h + 32*sh));
                const __m256i sc = qk_pair_scales(x[b].scales[g] & 0x0F, x[b].scales[g + 1] & 0x0F);
                isum = _mm256_add_epi32(isum, qk_scaled_dot(u, yv, sc));
            }
        }
        const float dy = y[b].d;
        acc  = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(qd_h2f(x[b].d) * dy), acc);
        macc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(msum), _mm256_set1_ps(qd_h2f(x[b].dmin) * dy), macc);
    }
    return qd_hsum256(acc) - qd_hsum256(macc);
}

// Q3_K: unsigned codes u = low | hbit << 2 in 0..7, the value u - 4; the
// offset goes into the scaled bsums
static float qk_dot_row_q3_K(int64_t nb, const block_q3_K * x, const block_q8_K * y) {
    const __m256i mask2 = _mm256_set1_epi8(0x03);
    const __m256i one   = _mm256_set1_epi8(1);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; b++) {
        int sc[QK_K/16];
        ggml_q3_K_scales(x[b].scales, sc);
        int16_t sc16[QK_K/16];
        for (int g = 0; g < QK_K/16; g++) {
            sc16[g] = (int16_t) sc[g];
        }
        const __m256i off = _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *) sc16),
                                              _mm256_loadu_si256((const __m256i *) y[b].bsums));
        const __m256i hm = _mm256_loadu_si256((const __m256i *) x[b].hmask);
        // sum sc*(u - 4)*y = sum sc*u*y - 4 * sum sc*bsums
        __m256i isum = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(off, 2));
        for (int h = 0; h < QK_K/128; h++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x[b].qs + 32*h));
            for (int sh = 0; sh < 4; sh++) {
                const int g = 8*h + 2*sh;
                const __m256i lo = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2*sh)), mask2);
                // bit 4h + sh of hmask[l] after the 16-bit shift is bit 0 of each byte
                const __m256i hb = _mm256_and_si256(_mm256_srl_epi16(hm, _mm_cvtsi32_si128(4*h + sh)), one);
                const __m256i u  = _mm256_or_si256(lo, _mm256_slli_epi16(hb, 2));
                const __m256i yv = _mm256_loadu_si256((const __m256i *)(y[b].qs + 128*h + 32*sh));
                isum = _mm256_add_epi32(isum, qk_scaled_dot(u, yv, qk_pair_scales(sc[g], sc[g + 1])));
            }
        }
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(qd_h2f(x[b].d) * y[b].d), acc);
    }
    return qd_hsum256(acc);
}

QK_DEFINE_ROWS_SIMD(qk_rows_q2_K, block_q2_K, qk_dot_row_q2_K)
QK_DEFINE_ROWS_SIMD(qk_rows_q3_K, block_q3_K, qk_dot_row_q3_K)
QK_DEFINE_ROWS_SIMD(qk_rows_q5_K, block_q5_K, qk_dot_row_q5_K)

#else

#define qk_rows_q2_K qk_rows_q2_K_ref
#define qk_rows_q3_K qk_rows_q3_K_ref
#define qk_rows_q4_K qk_rows_q4_K_ref
#define qk_rows_q5_K qk_rows_q5_K_ref
#define qk_rows_q6_K qk_rows_q6_K_ref

#endif

ggml_cpu_dot_rows_t ggml_cpu_get_dot_rows_k(enum ggml_type type, bool use_ref) {
    switch (type) {
        case GGML_TYPE_Q2_K: return use_ref ? qk_rows_q2_K_ref : qk_rows_q2_K;
        case GGML_TYPE_Q3_K: return use_ref ? qk_rows_q3_K_ref : qk_rows_q3_K;
        case GGML_TYPE_Q4_K: return use_ref ? qk_rows_q4_K_ref : qk_rows_q4_K;
        case GGML_TYPE_Q5_K: return use_ref ? qk_rows_q5_K_ref : qk_rows_q5_K;
        case GGML_TYPE_Q6_K: return use_ref ? qk_rows_q6_K_ref : qk_rows_q6_K;
        default:             return NULL;
    }
}

//
// ggml_vec_dot_t kernels of the type traits
//

#define QK_DEFINE_VEC_DOT(name, type)                                                                  \
    void name(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,      \
              const void * GGML_RESTRICT y, size_t by, int nrc) {                                      \
        GGML_ASSERT(nrc == 1);                                                                         \
        GGML_ASSERT(n % QK_K == 0);                                                                    \
        GGML_UNUSED(bs); GGML_UNUSED(bx); GGML_UNUSED(by);                                             \
        const void * yc[1] = { y };                                                                    \
        float *      sc[1] = { s };                                                                    \
        ggml_cpu_get_dot_rows_k(type, false)(n, x, 0, 1, yc, sc, 1);                                  \
    }

QK_DEFINE_VEC_DOT(ggml_vec_dot_q2_K_q8_K, GGML_TYPE_Q2_K)
QK_DEFINE_VEC_DOT(ggml_vec_dot_q3_K_q8_K, GGML_TYPE_Q3_K)
QK_DEFINE_VEC_DOT(ggml_vec_dot_q4_K_q8_K, GGML_TYPE_Q4_K)
QK_DEFINE_VEC_DOT(ggml_vec_dot_q5_K_q8_K, GGML_TYPE_Q5_K)
QK_DEFINE_VEC_DOT(ggml_vec_dot_q6_K_q8_K, GGML_TYPE_Q6_K)
