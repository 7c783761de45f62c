// quants-dot-iq.c: dot products of the grid types (IQ1_S, IQ1_M, IQ2_XXS,
// IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S) with Q8_K activation rows; portable C only.
//
// A block is decoded to its 256 signed grid values (small integers: the
// grid bytes of ggml-quants-iq.h with their signs) and 16 integer sub-block
// multipliers (2s + 1 from the 4-bit scales), so that the block's value j is
// factor * mult[j/16] * v[j]; the sum over a block is then exact in int32
// and scaled once by factor * the activation scale. IQ1 values are grid
// values (-1, 0, 1) plus a shift of +-1/8 per 8 (IQ1_M) or 32 (IQ1_S)
// values: per group of 8, sum(g*q) + shift*sum(q) times the group's scale.

#include "kernels/quants-dot.h"
#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"
#include "../ggml-quants-iq.h"

static inline int8_t iq_signed(uint8_t value, uint8_t signs, int j) {
    return (int8_t) (signs & (1u << j) ? -(int) value : (int) value);
}

// the block at x as factor * mult[j/16] * v[j]; returns factor
static float iq_decode_block(enum ggml_type type, const void * x, const struct ggml_iq_grids * g, int8_t * v, int * mult) {
    switch (type) {
        case GGML_TYPE_IQ2_XXS: {
            const block_iq2_xxs * b = x;
            for (int ib = 0; ib < QK_K/32; ib++) {
                uint32_t aux[2];
                memcpy(aux, b->qs + 4*ib, sizeof(aux));
                mult[2*ib] = mult[2*ib + 1] = 2*(int) (aux[1] >> 28) + 1;
                for (int l = 0; l < 4; l++) {
                    const uint8_t * gp = (const uint8_t *) (g->iq2xxs + ((aux[0] >> 8*l) & 255));
                    const uint8_t signs = ggml_iq_signs7(aux[1] >> 7*l);
                    for (int j = 0; j < 8; j++) v[32*ib + 8*l + j] = iq_signed(gp[j], signs, j);
                }
            }
            return GGML_FP16_TO_FP32(b->d) * 0.125f;
        }
        case GGML_TYPE_IQ2_XS: {
            const block_iq2_xs * b = x;
            for (int ib = 0; ib < QK_K/16; ib++) {
                mult[ib] = 2*((b->scales[ib/2] >> 4*(ib%2)) & 15) + 1;
            }
            for (int k = 0; k < QK_K/8; k++) {
                const uint8_t * gp = (const uint8_t *) (g->iq2xs + (b->qs[k] & 511));
                const uint8_t signs = ggml_iq_signs7(b->qs[k] >> 9);
                for (int j = 0; j < 8; j++) v[8*k + j] = iq_signed(gp[j], signs, j);
            }
            return GGML_FP16_TO_FP32(b->d) * 0.125f;
        }
        case GGML_TYPE_IQ2_S: {
            const block_iq2_s * b = x;
            for (int ib = 0; ib < QK_K/16; ib++) {
                mult[ib] = 2*((b->scales[ib/2] >> 4*(ib%2)) & 15) + 1;
            }
            for (int k = 0; k < QK_K/8; k++) {
                const int idx = b->qs[k] | (((b->qh[k/4] >> 2*(k%4)) & 3) << 8);
                const uint8_t * gp = (const uint8_t *) (g->iq2s + idx);
                const uint8_t signs = b->qs[QK_K/8 + k];
                for (int j = 0; j < 8; j++) v[8*k + j] = iq_signed(gp[j], signs, j);
            }
            return GGML_FP16_TO_FP32(b->d) * 0.125f;
        }
        case GGML_TYPE_IQ3_XXS: {
            const block_iq3_xxs * b = x;
            for (int ib = 0; ib < QK_K/32; ib++) {
                uint32_t aux;
                memcpy(&aux, b->qs + QK_K/4 + 4*ib, sizeof(aux));
                mult[2*ib] = mult[2*ib + 1] = 2*(int) (aux >> 28) + 1;
                for (int l = 0; l < 4; l++) {
                    const uint8_t signs = ggml_iq_signs7(aux >> 7*l);
                    for (int h = 0; h < 2; h++) {
                        const uint8_t * gp = (const uint8_t *) (g->iq3xxs + b->qs[8*ib + 2*l + h]);
                        for (int j = 0; j < 4; j++) v[32*ib + 8*l + 4*h + j] = iq_signed(gp[j], signs, 4*h + j);
                    }
                }
            }
            return GGML_FP16_TO_FP32(b->d) * 0.25f;
        }
        case GGML_TYPE_IQ3_S: {
            const block_iq3_s * b = x;
            for (int ib = 0; ib < QK_K/32; ib++) {
                mult[2*ib] = mult[2*ib + 1] = 2*((b->scales[ib/2] >> 4*(ib%2)) & 15) + 1;
                for (int k = 0; k < 8; k++) {
                    const int idx = b->qs[8*ib + k] | (((b->qh[ib] >> k) & 1) << 8);
                    const uint8_t * gp = (const uint8_t *) (g->iq3s + idx);
                    const uint8_t signs = b->signs[4*ib + k/2];
                    for (int j = 0; j < 4; j++) v[32*ib + 4*k + j] = iq_signed(gp[j], signs, 4*(k%2) + j);
                }
            }
            return GGML_FP16_TO_FP32(b->d);
        }
        default:
            GGML_ABORT("iq_decode_block: type %s is not a grid type", ggml_type_name(type));
    }
}

// Rows x against columns y, up to 8 columns at a time: each weight block is
// decoded once per group of columns. The sum of each (column, row) runs over
// the blocks in order, the same whatever nr and nc are.
static void iq_dot_rows(enum ggml_type type, int64_t n, const char * x, size_t bx, int64_t nr,
                        const void * const * y, float * const * s, int64_t nc) {
    enum { IQ_COLS = 8 };
    const struct ggml_iq_grids * g = ggml_iq_grids();
    const size_t bs = ggml_type_size(type);
    for (int64_t r = 0; r < nr; r++) {
        const char * xr = x + r*bx;
        for (int64_t c0 = 0; c0 < nc; c0 += IQ_COLS) {
            const int64_t cn = nc - c0 < IQ_COLS ? nc - c0 : IQ_COLS;
            float acc[IQ_COLS] = { 0 };
            for (int64_t b = 0; b < n / QK_K; b++) {
                int8_t v[QK_K];
                int mult[QK_K/16];
                const float factor = iq_decode_block(type, xr + b*bs, g, v, mult);
                for (int64_t c = 0; c < cn; c++) {
                    const block_q8_K * yb = (const block_q8_K *) y[c0 + c] + b;
                    int32_t isum = 0;
                    for (int sb = 0; sb < QK_K/16; sb++) {
                        int32_t part = 0;
                        for (int j = 0; j < 16; j++) {
                            part += v[16*sb + j] * yb->qs[16*sb + j];
                        }
                        isum += mult[sb] * part;
                    }
                    acc[c] += factor * yb->d * (float) isum;
                }
            }
            for (int64_t c = 0; c < cn; c++) {
                s[c0 + c][r] = acc[c];
            }
        }
    }
}

// one block of iq1_s / iq1_m against q8: the sum over its 32 groups of 8 of
// scale(group) * (sum(g*q) + shift(group)*sum(q)), times the block's d
static float iq1_dot_block(enum ggml_type type, const void * x, const int8_t * q8, const uint64_t * grid) {
    float sum = 0.0f;
    float d;
    uint16_t sc[4] = { 0 };
    if (type == GGML_TYPE_IQ1_M) {
        memcpy(sc, ((const block_iq1_m *) x)->scales, sizeof(sc));
        d = ggml_iq1_m_scale(x);
    } else {
        d = GGML_FP16_TO_FP32(((const block_iq1_s *) x)->d);
    }
    for (int k = 0; k < QK_K/8; k++) {
        int idx, mult;
        float shift;
        if (type == GGML_TYPE_IQ1_S) {
            const block_iq1_s * b = x;
            const uint16_t qh = b->qh[k/4];
            idx   = b->qs[k] | (((qh >> 3*(k%4)) & 7) << 8);
            mult  = 2*((qh >> 12) & 7) + 1;
            shift = qh & 0x8000 ? -GGML_IQ1S_DELTA : GGML_IQ1S_DELTA;
        } else {
            const block_iq1_m * b = x;
            const int ib = k/2, l = k%2;
            const uint8_t qh = b->qh[ib];
            idx   = b->qs[k] | (((qh >> 4*l) & 7) << 8);
            mult  = 2*((sc[ib/4] >> 3*(ib%4)) & 7) + 1;
            shift = (qh >> 4*l) & 0x08 ? -GGML_IQ1S_DELTA : GGML_IQ1S_DELTA;
        }
        const int8_t * g = (const int8_t *) (grid + idx);
        int32_t sg = 0, sq = 0;
        for (int j = 0; j < 8; j++) {
            sg += g[j] * q8[8*k + j];
            sq += q8[8*k + j];
        }
        sum += (float) mult * ((float) sg + shift * (float) sq);
    }
    return d * sum;
}

static float iq1_dot_row(enum ggml_type type, int64_t n, const char * x, const block_q8_K * y, const uint64_t * grid) {
    const size_t bs = ggml_type_size(type);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / QK_K; b++) {
        sum += y[b].d * iq1_dot_block(type, x + b*bs, y[b].qs, grid);
    }
    return sum;
}

// the dot_rows kernel of IQ1_S or IQ1_M, specialized for it by the callers below
static QD_INLINE void iq1_rows(enum ggml_type type, int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                               const void * const * y, float * const * s, int64_t nc) {
    const uint64_t * grid = ggml_iq_grids()->iq1s;
    for (int64_t c = 0; c < nc; c++) {
        for (int64_t r = 0; r < nr; r++) {
            s[c][r] = iq1_dot_row(type, n, (const char *) x + r*bx, (const block_q8_K *) y[c], grid);
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(iq1_s_dot__scalar, iq1_rows, GGML_TYPE_IQ1_S)
GGML_CPU_DEFINE_DOT_ROWS(iq1_m_dot__scalar, iq1_rows, GGML_TYPE_IQ1_M)
GGML_CPU_DEFINE_DOT_ROWS(iq2_xxs_dot__scalar, iq_dot_rows, GGML_TYPE_IQ2_XXS)
GGML_CPU_DEFINE_DOT_ROWS(iq2_xs_dot__scalar, iq_dot_rows, GGML_TYPE_IQ2_XS)
GGML_CPU_DEFINE_DOT_ROWS(iq2_s_dot__scalar, iq_dot_rows, GGML_TYPE_IQ2_S)
GGML_CPU_DEFINE_DOT_ROWS(iq3_xxs_dot__scalar, iq_dot_rows, GGML_TYPE_IQ3_XXS)
GGML_CPU_DEFINE_DOT_ROWS(iq3_s_dot__scalar, iq_dot_rows, GGML_TYPE_IQ3_S)

void ggml_cpu_add_kernels_quants_dot_iq(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ2_XXS, dot_rows, iq2_xxs_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_IQ2_XXS, dot_rows, iq2_xxs_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ2_XS, dot_rows, iq2_xs_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_IQ2_XS, dot_rows, iq2_xs_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ2_S, dot_rows, iq2_s_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_IQ2_S, dot_rows, iq2_s_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ3_XXS, dot_rows, iq3_xxs_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_IQ3_XXS, dot_rows, iq3_xxs_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ3_S, dot_rows, iq3_s_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_IQ3_S, dot_rows, iq3_s_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ1_S, dot_rows, iq1_s_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_IQ1_S, dot_rows, iq1_s_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_IQ1_M, dot_rows, iq1_m_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_IQ1_M, dot_rows, iq1_m_dot__scalar, "scalar");
}

void ggml_vec_dot_iq2_xxs_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                               const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_IQ2_XXS, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_iq2_xs_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                              const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_IQ2_XS, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_iq2_s_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                             const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_IQ2_S, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_iq3_xxs_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                               const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_IQ3_XXS, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_iq3_s_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                             const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_IQ3_S, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_iq1_s_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                             const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_IQ1_S, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_iq1_m_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                             const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_IQ1_M, n, s, bs, x, bx, y, by, nrc);
}
