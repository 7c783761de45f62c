// gemm-q8.c: the int8 kernel of gemm.h and its q8 panels: the layout, the
// activation packers, and the portable weight packers and tile (the x86
// vector ones are in arch/x86/gemm-q8-avx2.c, the arm64 tiles in
// arch/arm/gemm-q8-neon.c).
//
// Packing a weight row decodes its blocks (nibbles, fifth bits, offsets) once;
// the kernel then reuses the decoded codes for every column of the block.
// In the interleaved layout, integer lane l of every code register belongs
// to block l of the superblock, so the 8 byte-product steps of a superblock
// accumulate whole block dot products in the lanes, and one conversion, one
// scale multiply and two fused multiply-adds per superblock and result apply
// the block scales to all lanes at once.
//
// The K-quants whose scales cover 32 values (Q4_K, Q5_K) and the table
// formats (IQ4_NL, IQ4_XS, MXFP4) fit the same panels: each 32-value
// sub-block becomes a panel block with d = the superblock scale times the
// sub-block scale and c = -dmin times the sub-block minimum; Q8_K activation
// rows become panels with the superblock scale in every lane and the sums of
// the codes from the bsums.
//
// Q2_K, Q3_K and Q6_K scale groups of 16 values, and their codes times
// their scales do not fit int8 (Q6_K: -32..31 times -128..127), so their
// panels keep the codes and carry a scale and a constant term for each half
// of a block (the halves form of gemm.h): the kernel converts its integer
// lanes after groups 0-3 and again after groups 4-7, and the activation
// panels carry the sums of each half (the Q8_K bsums). The integer work per
// value is that of the other types; the float work per superblock doubles.

#include "kernels/gemm.h"
#include "kernels/kernel-config.h"
#include "kernels/gemm-q8-layout.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"


size_t ggml_q8p_row_size(int64_t k) {
    const int64_t nb  = k / 32;
    const int64_t nsb = (nb + Q8P_LANES - 1) / Q8P_LANES;
    return (size_t) nsb * Q8P_SB;
}

size_t ggml_q8p2_row_size(int64_t k) {
    const int64_t nb  = k / 32;
    const int64_t nsb = (nb + Q8P_LANES - 1) / Q8P_LANES;
    return (size_t) nsb * Q8P2_SB;
}

bool ggml_q8p_has_halves(enum ggml_type type) {
    return type == GGML_TYPE_Q2_K || type == GGML_TYPE_Q3_K || type == GGML_TYPE_Q6_K;
}

//
// packing: portable
//

static void q8p_store_codes_ref(uint8_t * sb, int l, const int8_t * v) {
    for (int g = 0; g < 8; g++) {
        memcpy(sb + g*Q8P_W + l*4, v + 4*g, 4);
    }
}

// 32-value block b of a Q2_K, Q3_K or Q6_K row: signed codes v (Q2_K: its
// unsigned codes), and the scale and constant term of each half. Block b of
// a superblock uses the scales 2b and 2b + 1.
static void q8p2_sub_codes_ref(enum ggml_type type, const char * row, int64_t b, int8_t * v, float * d, float * c) {
    const int j = (int)(b % (QK_K/32));
    const int n = j / 4;  // 128-value half of the superblock
    const int m = j % 4;  // block within it
    switch (type) {
        case GGML_TYPE_Q2_K: {
            const block_q2_K * x = (const block_q2_K *) row + b / (QK_K/32);
            for (int l = 0; l < 32; l++) {
                v[l] = (int8_t)((x->qs[32*n + l] >> (2*m)) & 3);
            }
            for (int h = 0; h < 2; h++) {
                const int sc = x->scales[2*j + h];
                d[h] =  GGML_FP16_TO_FP32(x->d)    * (float)(sc & 0x0F);
                c[h] = -GGML_FP16_TO_FP32(x->dmin) * (float)(sc >> 4);
            }
        } break;
        case GGML_TYPE_Q3_K: {
            const block_q3_K * x = (const block_q3_K *) row + b / (QK_K/32);
            int sc[16];
            ggml_q3_K_scales(x->scales, sc);
            for (int l = 0; l < 32; l++) {
                const int low = (x->qs[32*n + l] >> (2*m)) & 3;
                v[l] = (int8_t)(low - ((x->hmask[l] >> j) & 1 ? 0 : 4));
            }
            for (int h = 0; h < 2; h++) {
                d[h] = GGML_FP16_TO_FP32(x->d) * (float) sc[2*j + h];
                c[h] = 0.0f;
            }
        } break;
        default: { // GGML_TYPE_Q6_K
            const block_q6_K * x = (const block_q6_K *) row + b / (QK_K/32);
            const uint8_t * ql = x->ql + 64*n + 32*(m % 2);
            const uint8_t * qh = x->qh + 32*n;
            for (int l = 0; l < 32; l++) {
                const int u = ((ql[l] >> (4*(m/2))) & 0x0F) | (((qh[l] >> (2*m)) & 3) << 4);
                v[l] = (int8_t)(u - 32);
            }
            for (int h = 0; h < 2; h++) {
                d[h] = GGML_FP16_TO_FP32(x->d) * (float) x->scales[2*j + h];
                c[h] = 0.0f;
            }
        } break;
    }
}

// 32-value block b of a row: signed codes v (or the unsigned codes of the
// affine types), its scale d and its constant term c
static void q8p_sub_codes_ref(enum ggml_type type, const char * row, int64_t b, int8_t * v, float * d, float * c) {
    switch (type) {
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K: {
            const int j = (int)(b % (QK_K/32));
            const uint8_t * scales, * qs, * qh = NULL;
            ggml_half hd, hdmin;
            if (type == GGML_TYPE_Q4_K) {
                const block_q4_K * x = (const block_q4_K *) row + b / (QK_K/32);
                scales = x->scales; qs = x->qs; hd = x->d; hdmin = x->dmin;
            } else {
                const block_q5_K * x = (const block_q5_K *) row + b / (QK_K/32);
                scales = x->scales; qs = x->qs; qh = x->qh; hd = x->d; hdmin = x->dmin;
            }
            int sc, m;
            ggml_k_scale_min(j, scales, &sc, &m);
            for (int l = 0; l < 32; l++) {
                int u = (qs[32*(j/2) + l] >> (4*(j % 2))) & 0x0F;
                if (qh != NULL) {
                    u |= ((qh[l] >> j) & 1) << 4;
                }
                v[l] = (int8_t) u;
            }
            *d = GGML_FP16_TO_FP32(hd) * (float) sc;
            *c = -GGML_FP16_TO_FP32(hdmin) * (float) m;
        } break;
        case GGML_TYPE_IQ4_NL:
        case GGML_TYPE_IQ4_XS:
        case GGML_TYPE_MXFP4: {
            const uint8_t * qs;
            const int8_t  * values = type == GGML_TYPE_MXFP4 ? ggml_kvalues_mxfp4() : ggml_kvalues_iq4nl();
            if (type == GGML_TYPE_IQ4_NL) {
                const block_iq4_nl * x = (const block_iq4_nl *) row + b;
                qs = x->qs;
                *d = GGML_FP16_TO_FP32(x->d);
            } else if (type == GGML_TYPE_MXFP4) {
                const block_mxfp4 * x = (const block_mxfp4 *) row + b;
                qs = x->qs;
                *d = ggml_e8m0_to_fp32_half(x->e);
            } else {
                const block_iq4_xs * x = (const block_iq4_xs *) row + b / (QK_K/32);
                const int ib = (int)(b % (QK_K/32));
                qs = x->qs + 16*ib;
                *d = GGML_FP16_TO_FP32(x->d) * (float)(ggml_iq4_xs_scale(x, ib) - 32);
            }
            for (int l = 0; l < 16; l++) {
                v[l]      = values[qs[l] & 0x0F];
                v[l + 16] = values[qs[l] >> 4];
            }
            *c = 0.0f;
        } break;
        default: {
            int vi[32];
            const size_t bsz = qd_block_size(type);
            GGML_ASSERT(bsz != 0);
            qd_block_codes_ref(type, row + b*bsz, vi, d, c);
            for (int l = 0; l < 32; l++) {
                v[l] = (int8_t) vi[l];
            }
        } break;
    }
}

// signed codes v, c = the affine minimum (0 for the symmetric types)
static void q8p_pack_weights_ref(enum ggml_type type, const char * row, int64_t k, uint8_t * panel) {
    const int64_t nb  = k / 32;
    for (int64_t s = 0; s*Q8P_LANES < nb; s++) {
        uint8_t * sb = panel + s*Q8P_SB;
        float d[Q8P_LANES], c[Q8P_LANES];
        for (int l = 0; l < Q8P_LANES; l++) {
            const int64_t b = s*Q8P_LANES + l;
            int8_t v8[32] = { 0 };
            d[l] = 0.0f;
            c[l] = 0.0f;
            if (b < nb) {
                q8p_sub_codes_ref(type, row, b, v8, &d[l], &c[l]);
            }
            q8p_store_codes_ref(sb, l, v8);
        }
        q8p_store_scales(sb, d, c);
    }
}

static void q8p2_pack_weights_ref(enum ggml_type type, const char * row, int64_t k, uint8_t * panel) {
    const int64_t nb  = k / 32;
    for (int64_t s = 0; s*Q8P_LANES < nb; s++) {
        uint8_t * sb = panel + s*Q8P2_SB;
        float d[2][Q8P_LANES], c[2][Q8P_LANES];
        for (int l = 0; l < Q8P_LANES; l++) {
            const int64_t b = s*Q8P_LANES + l;
            int8_t v8[32] = { 0 };
            float dl[2] = { 0.0f, 0.0f }, cl[2] = { 0.0f, 0.0f };
            if (b < nb) {
                q8p2_sub_codes_ref(type, row, b, v8, dl, cl);
            }
            q8p_store_codes_ref(sb, l, v8);
            for (int h = 0; h < 2; h++) {
                d[h][l] = dl[h];
                c[h][l] = cl[h];
            }
        }
        q8p2_store_scales(sb, &d[0][0], &c[0][0]);
    }
}

void ggml_q8p2_pack_act(enum ggml_type type, const void * row, int64_t k, void * panel) {
    GGML_ASSERT(k % QK_K == 0);
    const int32_t o = q8p2_offset(type);
    const int64_t nb = k / 32;
    for (int64_t s = 0; s*Q8P_LANES < nb; s++) {
        uint8_t * sb = (uint8_t *) panel + s*Q8P2_SB;
        float d[2][Q8P_LANES], c[2][Q8P_LANES];
        for (int l = 0; l < Q8P_LANES; l++) {
            const int64_t b = s*Q8P_LANES + l;
            static const int8_t zero[32] = { 0 };
            const int8_t * qs = zero;
            for (int h = 0; h < 2; h++) {
                d[h][l] = 0.0f;
                c[h][l] = 0.0f;
            }
            if (b < nb) {
                const block_q8_K * blk = (const block_q8_K *) row + b / (QK_K/32);
                const int j = (int)(b % (QK_K/32));
                qs = blk->qs + 32*j;
                for (int h = 0; h < 2; h++) {
                    d[h][l] = blk->d;
                    if (o != 0) {
                        const int32_t ic = -o * blk->bsums[2*j + h];
                        memcpy(&c[h][l], &ic, sizeof(ic));
                    } else {
                        c[h][l] = blk->d * (float) blk->bsums[2*j + h];
                    }
                }
            }
            q8p_store_codes_ref(sb, l, qs);
        }
        q8p2_store_scales(sb, &d[0][0], &c[0][0]);
    }
}

void ggml_q8p_pack_act(enum ggml_type type, const void * row, int64_t k, void * panel) {
    GGML_ASSERT(type == GGML_TYPE_Q8_0 || type == GGML_TYPE_Q8_1 || type == GGML_TYPE_Q8_K);
    const int64_t nb = k / 32;
    for (int64_t s = 0; s*Q8P_LANES < nb; s++) {
        uint8_t * sb = (uint8_t *) panel + s*Q8P_SB;
        float d[Q8P_LANES], c[Q8P_LANES];
        for (int l = 0; l < Q8P_LANES; l++) {
            const int64_t b = s*Q8P_LANES + l;
            static const int8_t zero[32] = { 0 };
            const int8_t * qs = zero;
            d[l] = 0.0f;
            c[l] = 0.0f;
            if (b < nb && type == GGML_TYPE_Q8_0) {
                const block_q8_0 * blk = (const block_q8_0 *) row + b;
                int sum = 0;
                for (int j = 0; j < 32; j++) {
                    sum += blk->qs[j];
                }
                qs   = blk->qs;
                d[l] = GGML_FP16_TO_FP32(blk->d);
                c[l] = d[l] * (float) sum; // exact: 11 x 12 significant bits
            } else if (b < nb && type == GGML_TYPE_Q8_K) {
                const block_q8_K * blk = (const block_q8_K *) row + b / (QK_K/32);
                const int j = (int)(b % (QK_K/32));
                qs   = blk->qs + 32*j;
                d[l] = blk->d;
                c[l] = blk->d * (float)(blk->bsums[2*j] + blk->bsums[2*j + 1]);
            } else if (b < nb) {
                const block_q8_1 * blk = (const block_q8_1 *) row + b;
                qs   = blk->qs;
                d[l] = GGML_FP16_TO_FP32(blk->d);
                c[l] = GGML_FP16_TO_FP32(blk->s); // what the Q8_1 format gives, as its dot products use
            }
            q8p_store_codes_ref(sb, l, qs);
        }
        q8p_store_scales(sb, d, c);
    }
}

//
// packing: vector
//

// the portable packers, per type
#define Q8P_DEFINE_PACK_REF(name, type)                                                                \
    static void name(const void * row, int64_t k, void * panel) {                                      \
        GGML_ASSERT(k % 32 == 0);                                                                      \
        if (ggml_q8p_has_halves(type)) {                                                               \
            q8p2_pack_weights_ref(type, (const char *) row, k, (uint8_t *) panel);                     \
        } else {                                                                                       \
            q8p_pack_weights_ref(type, (const char *) row, k, (uint8_t *) panel);                      \
        }                                                                                              \
    }

Q8P_DEFINE_PACK_REF(q4_0_pack__scalar,   GGML_TYPE_Q4_0)
Q8P_DEFINE_PACK_REF(q4_1_pack__scalar,   GGML_TYPE_Q4_1)
Q8P_DEFINE_PACK_REF(q5_0_pack__scalar,   GGML_TYPE_Q5_0)
Q8P_DEFINE_PACK_REF(q5_1_pack__scalar,   GGML_TYPE_Q5_1)
Q8P_DEFINE_PACK_REF(q8_0_pack__scalar,   GGML_TYPE_Q8_0)
Q8P_DEFINE_PACK_REF(q4_K_pack__scalar,   GGML_TYPE_Q4_K)
Q8P_DEFINE_PACK_REF(q5_K_pack__scalar,   GGML_TYPE_Q5_K)
Q8P_DEFINE_PACK_REF(iq4_nl_pack__scalar, GGML_TYPE_IQ4_NL)
Q8P_DEFINE_PACK_REF(iq4_xs_pack__scalar, GGML_TYPE_IQ4_XS)
Q8P_DEFINE_PACK_REF(mxfp4_pack__scalar,  GGML_TYPE_MXFP4)
Q8P_DEFINE_PACK_REF(q2_K_pack__scalar,   GGML_TYPE_Q2_K)
Q8P_DEFINE_PACK_REF(q3_K_pack__scalar,   GGML_TYPE_Q3_K)
Q8P_DEFINE_PACK_REF(q6_K_pack__scalar,   GGML_TYPE_Q6_K)

//
// kernels
//

// portable: lane by lane, signed weight codes
#define Q8P_REF_RM 2
#define Q8P_REF_RN 2

static GGML_GEMM_INLINE void q8p_tile_ref_form(enum q8p_form form, int64_t nsb, const uint8_t * const * a, const uint8_t * const * b,
                                               float out[Q8P_REF_RM][Q8P_REF_RN]) {
    const int    nh       = form == Q8P_PLAIN ? 1 : 2;
    const size_t sb_bytes = (size_t) Q8P_LANES * (32 + 2*nh*sizeof(float));
    const int    gh       = 8 / nh;  // groups of a half
    float acc[Q8P_REF_RM][Q8P_REF_RN][Q8P_LANES] = { { { 0.0f } } };
    for (int64_t s = 0; s < nsb; s++) {
        const size_t off = (size_t) s * sb_bytes;
        for (int r = 0; r < Q8P_REF_RM; r++) {
            const int8_t * ac = (const int8_t *)(a[r] + off);
            const float  * ad = (const float  *)(a[r] + off + Q8P_CODES);
            const float  * aa = ad + nh*Q8P_LANES;
            for (int c = 0; c < Q8P_REF_RN; c++) {
                const int8_t * bc = (const int8_t *)(b[c] + off);
                const float  * bd = (const float  *)(b[c] + off + Q8P_CODES);
                const float  * ba = bd + nh*Q8P_LANES;
                for (int h = 0; h < nh; h++) {
                    int32_t isum[Q8P_LANES] = { 0 };
                    for (int g = h*gh; g < (h + 1)*gh; g++) {
                        for (int l = 0; l < Q8P_LANES; l++) {
                            for (int t = 0; t < 4; t++) {
                                isum[l] += ac[g*Q8P_W + l*4 + t] * bc[g*Q8P_W + l*4 + t];
                            }
                        }
                    }
                    for (int l = 0; l < Q8P_LANES; l++) {
                        acc[r][c][l] += (float) isum[l] * (ad[h*Q8P_LANES + l] * bd[h*Q8P_LANES + l]);
                    }
                }
                for (int h = 0; h < nh && form != Q8P_HALVES_OFS; h++) {  // signed codes: no offset
                    for (int l = 0; l < Q8P_LANES; l++) {
                        acc[r][c][l] += aa[h*Q8P_LANES + l] * ba[h*Q8P_LANES + l];
                    }
                }
            }
        }
    }
    for (int r = 0; r < Q8P_REF_RM; r++) {
        for (int c = 0; c < Q8P_REF_RN; c++) {
            float sum = 0.0f;
            for (int l = 0; l < Q8P_LANES; l++) {
                sum += acc[r][c][l];
            }
            out[r][c] = sum;
        }
    }
}

static void q8p_tile_ref(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8P_REF_RM][Q8P_REF_RN]) {
    q8p_tile_ref_form(Q8P_PLAIN, nsb, a, b, out);
}

static void q8p2_tile_ref(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8P_REF_RM][Q8P_REF_RN]) {
    q8p_tile_ref_form(Q8P_HALVES, nsb, a, b, out);
}

static void q8p2o_tile_ref(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8P_REF_RM][Q8P_REF_RN]) {
    q8p_tile_ref_form(Q8P_HALVES_OFS, nsb, a, b, out);
}

#define GGML_GEMM_WALK    q8p_walk_ref
#define GGML_GEMM_WALK_RM Q8P_REF_RM
#define GGML_GEMM_WALK_RN Q8P_REF_RN
#define GGML_GEMM_WALK_T  uint8_t
#include "kernels/gemm-walk-tmpl.h"

// the walks as ggml_cpu_q8p_gemm_t
#define Q8P_DEFINE_GEMM(name, tile)                                                                    \
    static void name(int64_t nrows, int64_t ncols, int64_t nsb, const void * A, size_t lda,            \
                     const void * const * B, float * const * C, bool accumulate) {                     \
        q8p_walk_ref(tile, nrows, ncols, nsb, (const uint8_t *) A, lda, B, C, accumulate);             \
    }

Q8P_DEFINE_GEMM(q8p_gemm__scalar_2x2,   q8p_tile_ref)
Q8P_DEFINE_GEMM(q8p2_gemm__scalar_2x2,  q8p2_tile_ref)
Q8P_DEFINE_GEMM(q8p2o_gemm__scalar_2x2, q8p2o_tile_ref)
void ggml_cpu_add_kernels_gemm_q8(struct ggml_cpu_kernel_config * cfg) {
#define Q8P_ADD(type, pk, tile)                                                                   \
    GGML_CPU_SET_KERNEL(cfg->fast, type, pack_weights, pk,   "scalar");                        \
    GGML_CPU_SET_KERNEL(cfg->ref,  type, pack_weights, pk,   "scalar");                        \
    GGML_CPU_SET_KERNEL(cfg->fast, type, gemm,         tile, "scalar_2x2");                    \
    GGML_CPU_SET_KERNEL(cfg->ref,  type, gemm,         tile, "scalar_2x2")
    Q8P_ADD(GGML_TYPE_Q4_0,   q4_0_pack__scalar,   q8p_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_Q4_1,   q4_1_pack__scalar,   q8p_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_Q5_0,   q5_0_pack__scalar,   q8p_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_Q5_1,   q5_1_pack__scalar,   q8p_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_Q8_0,   q8_0_pack__scalar,   q8p_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_Q4_K,   q4_K_pack__scalar,   q8p_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_Q5_K,   q5_K_pack__scalar,   q8p_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_IQ4_NL, iq4_nl_pack__scalar, q8p_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_IQ4_XS, iq4_xs_pack__scalar, q8p_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_MXFP4,  mxfp4_pack__scalar,  q8p_gemm__scalar_2x2);
    // the halves form; Q3_K and Q6_K carry the weights' offset in the integers
    Q8P_ADD(GGML_TYPE_Q2_K,   q2_K_pack__scalar,   q8p2_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_Q3_K,   q3_K_pack__scalar,   q8p2o_gemm__scalar_2x2);
    Q8P_ADD(GGML_TYPE_Q6_K,   q6_K_pack__scalar,   q8p2o_gemm__scalar_2x2);
#undef Q8P_ADD
}
