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
// This is the portable path for every type; the x86 vector paths are in
// arch/x86/quants-dot-k-avx2.c, the arm64 ones in arch/arm/quants-dot-k-neon.c.

#include "kernels/quants-dot.h"
#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
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

// the dot_rows kernel of one type, specialized for it by the callers below
static QD_INLINE void qk_rows_ref(enum ggml_type type, int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                  const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c = 0; c < nc; c++) {
        for (int64_t r = 0; r < nr; r++) {
            s[c][r] = qk_dot_row_ref(type, n / QK_K, (const char *) x + r*bx, (const block_q8_K *) y[c]);
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(q2_K_dot__scalar, qk_rows_ref, GGML_TYPE_Q2_K)
GGML_CPU_DEFINE_DOT_ROWS(q3_K_dot__scalar, qk_rows_ref, GGML_TYPE_Q3_K)
GGML_CPU_DEFINE_DOT_ROWS(q4_K_dot__scalar, qk_rows_ref, GGML_TYPE_Q4_K)
GGML_CPU_DEFINE_DOT_ROWS(q5_K_dot__scalar, qk_rows_ref, GGML_TYPE_Q5_K)
GGML_CPU_DEFINE_DOT_ROWS(q6_K_dot__scalar, qk_rows_ref, GGML_TYPE_Q6_K)

void ggml_cpu_add_kernels_quants_dot_k(struct ggml_cpu_kernel_config * cfg) {
#define QK_ADD(type, f, r)                                                        \
    GGML_CPU_SET_KERNEL(cfg->fast, type, dot_rows, f, "scalar");                   \
    GGML_CPU_SET_KERNEL(cfg->ref,  type, dot_rows, r, "scalar")
    QK_ADD(GGML_TYPE_Q2_K, q2_K_dot__scalar, q2_K_dot__scalar);
    QK_ADD(GGML_TYPE_Q3_K, q3_K_dot__scalar, q3_K_dot__scalar);
    QK_ADD(GGML_TYPE_Q4_K, q4_K_dot__scalar, q4_K_dot__scalar);
    QK_ADD(GGML_TYPE_Q5_K, q5_K_dot__scalar, q5_K_dot__scalar);
    QK_ADD(GGML_TYPE_Q6_K, q6_K_dot__scalar, q6_K_dot__scalar);
#undef QK_ADD
}

//
// ggml_vec_dot_t kernels of the type traits
//

void ggml_vec_dot_q2_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q2_K, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_q3_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q3_K, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_q4_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q4_K, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_q5_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q5_K, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_q6_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q6_K, n, s, bs, x, bx, y, by, nrc);
}
