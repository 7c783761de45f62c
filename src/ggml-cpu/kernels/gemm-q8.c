// gemm-q8.c: the int8 kernel of gemm.h and its q8 panels.
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
#include "simd/quants-simd.h"
#include "ggml-quants.h"

#define Q8P_LANES GGML_Q8P_LANES
#define Q8P_SB    GGML_Q8P_SB_BYTES
#define Q8P_CODES (Q8P_LANES * 32)  // bytes of codes in a superblock
#define Q8P_W     (Q8P_LANES * 4)   // bytes of one group of codes

// unsigned weight codes with offsets: the vector kernels with VNNI
#if defined(QD_SIMD) && ((defined(GGML_VEC_AVX512) && defined(__AVX512VNNI__)) || (!defined(GGML_VEC_AVX512) && defined(QD_VNNI256)))
#define Q8P_UNSIGNED 1
#endif

#define Q8P2_SB   GGML_Q8P2_SB_BYTES

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

// the offset o of the unsigned codes u = v + o of a halves type without
// minima (0: Q2_K, whose codes are unsigned and whose minima are float terms)
static int32_t q8p2_offset(enum ggml_type type) {
    return type == GGML_TYPE_Q6_K ? 32 : type == GGML_TYPE_Q3_K ? 4 : 0;
}

//
// packing: portable
//

static void q8p_store_codes_ref(uint8_t * sb, int l, const int8_t * v) {
    for (int g = 0; g < 8; g++) {
        memcpy(sb + g*Q8P_W + l*4, v + 4*g, 4);
    }
}

static void q8p_store_scales(uint8_t * sb, const float * d, const float * c) {
    memcpy(sb + Q8P_CODES,                         d, Q8P_LANES * sizeof(float));
    memcpy(sb + Q8P_CODES + Q8P_LANES*sizeof(float), c, Q8P_LANES * sizeof(float));
}

// halves form: d[h][l], c[h][l]
static void q8p2_store_scales(uint8_t * sb, const float * d, const float * c) {
    memcpy(sb + Q8P_CODES,                           d, 2 * Q8P_LANES * sizeof(float));
    memcpy(sb + Q8P_CODES + 2*Q8P_LANES*sizeof(float), c, 2 * Q8P_LANES * sizeof(float));
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

#if defined(QD_SIMD)

// the table values of 32 codes in the vector kernels' form (signed, or
// offset by 128 for the unsigned kernels), with d and c
static GGML_GEMM_INLINE __m256i q8p_table_codes(const uint8_t * qs, const int8_t * values, float dx, float * d, float * c) {
    const __m128i t = _mm_loadu_si128((const __m128i *) values);
    const __m256i v = _mm256_shuffle_epi8(_mm256_setr_m128i(t, t), qd_unpack_nibbles(qs));
    *d = dx;
#if defined(Q8P_UNSIGNED)
    *c = -128.0f * dx;
    return _mm256_xor_si256(v, _mm256_set1_epi8((char) 0x80)); // v + 128
#else
    *c = 0.0f;
    return v;
#endif
}

// the codes of 32-value block b of a row in the vector kernels' form, with d and c
static GGML_GEMM_INLINE __m256i q8p_decode(enum ggml_type type, const char * row, int64_t bi, float * d, float * c) {
    const char * blk = row + bi*qd_block_size(type);
    switch (type) {
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K: {
            // the unsigned codes of the affine types suit both kernel families
            const int j = (int)(bi % (QK_K/32));
            const uint8_t * scales, * qs, * qh = NULL;
            ggml_half hd, hdmin;
            if (type == GGML_TYPE_Q4_K) {
                const block_q4_K * x = (const block_q4_K *) row + bi / (QK_K/32);
                scales = x->scales; qs = x->qs; hd = x->d; hdmin = x->dmin;
            } else {
                const block_q5_K * x = (const block_q5_K *) row + bi / (QK_K/32);
                scales = x->scales; qs = x->qs; qh = x->qh; hd = x->d; hdmin = x->dmin;
            }
            int sc, m;
            ggml_k_scale_min(j, scales, &sc, &m);
            *d = qd_h2f(hd) * (float) sc;
            *c = -qd_h2f(hdmin) * (float) m;
            const __m256i q = _mm256_loadu_si256((const __m256i *)(qs + 32*(j/2)));
            __m256i u = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(4*(j % 2))), _mm256_set1_epi8(0x0F));
            if (qh != NULL) {
                const __m256i h = _mm256_loadu_si256((const __m256i *) qh);
                const __m256i bit = _mm256_and_si256(_mm256_srl_epi16(h, _mm_cvtsi32_si128(j)), _mm256_set1_epi8(1));
                u = _mm256_or_si256(u, _mm256_slli_epi16(bit, 4));
            }
            return u;
        }
        case GGML_TYPE_IQ4_NL: {
            const block_iq4_nl * x = (const block_iq4_nl *) row + bi;
            return q8p_table_codes(x->qs, ggml_kvalues_iq4nl(), qd_h2f(x->d), d, c);
        }
        case GGML_TYPE_MXFP4: {
            const block_mxfp4 * x = (const block_mxfp4 *) row + bi;
            return q8p_table_codes(x->qs, ggml_kvalues_mxfp4(), ggml_e8m0_to_fp32_half(x->e), d, c);
        }
        case GGML_TYPE_IQ4_XS: {
            const block_iq4_xs * x = (const block_iq4_xs *) row + bi / (QK_K/32);
            const int ib = (int)(bi % (QK_K/32));
            return q8p_table_codes(x->qs + 16*ib, ggml_kvalues_iq4nl(), qd_h2f(x->d) * (float)(ggml_iq4_xs_scale(x, ib) - 32), d, c);
        }
        case GGML_TYPE_Q4_0: {
            const block_q4_0 * b = (const block_q4_0 *) blk;
            const __m256i u = qd_unpack_nibbles(b->qs);
            *d = qd_h2f(b->d);
#if defined(Q8P_UNSIGNED)
            *c = -8.0f * *d;
            return u;
#else
            *c = 0.0f;
            return _mm256_sub_epi8(u, _mm256_set1_epi8(8));
#endif
        }
        case GGML_TYPE_Q4_1: {
            const block_q4_1 * b = (const block_q4_1 *) blk;
            *d = qd_h2f(b->d);
            *c = qd_h2f(b->m);
            return qd_unpack_nibbles(b->qs);
        }
        case GGML_TYPE_Q5_0: {
            const block_q5_0 * b = (const block_q5_0 *) blk;
            const __m256i u = _mm256_or_si256(qd_unpack_nibbles(b->qs), qd_unpack_fifth_bits(b->qh));
            *d = qd_h2f(b->d);
#if defined(Q8P_UNSIGNED)
            *c = -16.0f * *d;
            return u;
#else
            *c = 0.0f;
            return _mm256_sub_epi8(u, _mm256_set1_epi8(16));
#endif
        }
        case GGML_TYPE_Q5_1: {
            const block_q5_1 * b = (const block_q5_1 *) blk;
            *d = qd_h2f(b->d);
            *c = qd_h2f(b->m);
            return _mm256_or_si256(qd_unpack_nibbles(b->qs), qd_unpack_fifth_bits(b->qh));
        }
        default: { // GGML_TYPE_Q8_0
            const block_q8_0 * b = (const block_q8_0 *) blk;
            const __m256i x = _mm256_loadu_si256((const __m256i *) b->qs);
            *d = qd_h2f(b->d);
#if defined(Q8P_UNSIGNED)
            *c = -128.0f * *d;
            return _mm256_xor_si256(x, _mm256_set1_epi8((char) 0x80)); // x + 128
#else
            *c = 0.0f;
            return x;
#endif
        }
    }
}

// 8 x 8 transposes of dwords within each 256-bit half: rows r[j] -> columns
// (in the order 0, 4, 1, 5, 2, 6, 3, 7 of u[], lanes still to be paired)
#define Q8P_TRANSPOSE_STEPS(VT, UNPACKLO32, UNPACKHI32, UNPACKLO64, UNPACKHI64, r, u)                  \
    do {                                                                                               \
        const VT t0 = UNPACKLO32(r[0], r[1]), t1 = UNPACKHI32(r[0], r[1]);                             \
        const VT t2 = UNPACKLO32(r[2], r[3]), t3 = UNPACKHI32(r[2], r[3]);                             \
        const VT t4 = UNPACKLO32(r[4], r[5]), t5 = UNPACKHI32(r[4], r[5]);                             \
        const VT t6 = UNPACKLO32(r[6], r[7]), t7 = UNPACKHI32(r[6], r[7]);                             \
        u[0] = UNPACKLO64(t0, t2); u[1] = UNPACKHI64(t0, t2);                                          \
        u[2] = UNPACKLO64(t1, t3); u[3] = UNPACKHI64(t1, t3);                                          \
        u[4] = UNPACKLO64(t4, t6); u[5] = UNPACKHI64(t4, t6);                                          \
        u[6] = UNPACKLO64(t5, t7); u[7] = UNPACKHI64(t5, t7);                                          \
    } while (0)

#if defined(GGML_VEC_AVX512)

// blocks 0..15 (one register each, value order) -> groups of the superblock
static GGML_GEMM_INLINE void q8p_store_codes(uint8_t * sb, const __m256i * blk) {
    __m512i r[8], u[8];
    for (int j = 0; j < 8; j++) {
        r[j] = _mm512_inserti64x4(_mm512_castsi256_si512(blk[j]), blk[j + 8], 1);
    }
    Q8P_TRANSPOSE_STEPS(__m512i, _mm512_unpacklo_epi32, _mm512_unpackhi_epi32, _mm512_unpacklo_epi64, _mm512_unpackhi_epi64, r, u);
    // u[j] (j = 0..3 for rows 0-3, 4..7 for rows 4-7) holds, in 128-bit lane
    // 2h+q, the column j%4 + 4q of the rows of half h
    const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    for (int g = 0; g < 4; g++) {
        _mm512_storeu_si512(sb + (g    )*Q8P_W, _mm512_permutex2var_epi64(u[g], lo, u[g + 4]));
        _mm512_storeu_si512(sb + (g + 4)*Q8P_W, _mm512_permutex2var_epi64(u[g], hi, u[g + 4]));
    }
}

#else

// blocks 0..7 -> groups of the superblock
static GGML_GEMM_INLINE void q8p_store_codes(uint8_t * sb, const __m256i * blk) {
    __m256i u[8];
    Q8P_TRANSPOSE_STEPS(__m256i, _mm256_unpacklo_epi32, _mm256_unpackhi_epi32, _mm256_unpacklo_epi64, _mm256_unpackhi_epi64, blk, u);
    for (int g = 0; g < 4; g++) {
        _mm256_storeu_si256((__m256i *)(sb + (g    )*Q8P_W), _mm256_permute2x128_si256(u[g], u[g + 4], 0x20));
        _mm256_storeu_si256((__m256i *)(sb + (g + 4)*Q8P_W), _mm256_permute2x128_si256(u[g], u[g + 4], 0x31));
    }
}

#endif

static GGML_GEMM_INLINE void q8p_pack_weights_simd(enum ggml_type type, const char * row, int64_t k, uint8_t * panel) {
    const int64_t nb  = k / 32;
    for (int64_t s = 0; s*Q8P_LANES < nb; s++) {
        uint8_t * sb = panel + s*Q8P_SB;
        __m256i blk[Q8P_LANES];
        float d[Q8P_LANES], c[Q8P_LANES];
        const int64_t n = MIN(Q8P_LANES, nb - s*Q8P_LANES);
        for (int64_t l = 0; l < n; l++) {
            blk[l] = q8p_decode(type, row, s*Q8P_LANES + l, &d[l], &c[l]);
        }
        for (int64_t l = n; l < Q8P_LANES; l++) {
            blk[l] = _mm256_setzero_si256();
            d[l] = 0.0f;
            c[l] = 0.0f;
        }
        q8p_store_codes(sb, blk);
        q8p_store_scales(sb, d, c);
    }
}

// scale i of a Q3_K block, minus 32 (ggml_q3_K_scales, one at a time)
static GGML_GEMM_INLINE int q8p_q3_K_scale(const uint8_t * scales, int i) {
    const int low  = i < 8 ? scales[i] & 0x0F : scales[i - 8] >> 4;
    const int high = (scales[8 + i%4] >> (2*(i/4))) & 3;
    return (low | (high << 4)) - 32;
}

// the codes of 32-value block bi of a Q2_K, Q3_K or Q6_K row in the vector
// kernels' form (signed, or offset to unsigned for the unsigned kernels),
// with the scale and constant term of each half
static GGML_GEMM_INLINE __m256i q8p2_decode(enum ggml_type type, const char * row, int64_t bi, float * d, float * c) {
    const int j = (int)(bi % (QK_K/32));
    const int n = j / 4;
    const int m = j % 4;
    const __m256i mask2 = _mm256_set1_epi8(3);
    switch (type) {
        case GGML_TYPE_Q2_K: {
            const block_q2_K * x = (const block_q2_K *) row + bi / (QK_K/32);
            const float xd = qd_h2f(x->d), xm = qd_h2f(x->dmin);
            for (int h = 0; h < 2; h++) {
                const int sc = x->scales[2*j + h];
                d[h] =  xd * (float)(sc & 0x0F);
                c[h] = -xm * (float)(sc >> 4);
            }
            const __m256i q = _mm256_loadu_si256((const __m256i *)(x->qs + 32*n));
            return _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2*m)), mask2);
        }
        case GGML_TYPE_Q3_K: {
            const block_q3_K * x = (const block_q3_K *) row + bi / (QK_K/32);
            const float xd = qd_h2f(x->d);
            const __m256i q  = _mm256_loadu_si256((const __m256i *)(x->qs + 32*n));
            const __m256i hm = _mm256_loadu_si256((const __m256i *) x->hmask);
            const __m256i lo = _mm256_and_si256(_mm256_srl_epi16(q, _mm_cvtsi32_si128(2*m)), mask2);
            const __m256i hi = _mm256_and_si256(_mm256_srl_epi16(hm, _mm_cvtsi32_si128(j)), _mm256_set1_epi8(1));
            const __m256i u  = _mm256_or_si256(lo, _mm256_slli_epi16(hi, 2)); // v + 4
            for (int h = 0; h < 2; h++) {
                d[h] = xd * (float) q8p_q3_K_scale(x->scales, 2*j + h);
                c[h] = 0.0f;  // the offset is in the activation panel
            }
#if defined(Q8P_UNSIGNED)
            return u;
#else
            return _mm256_sub_epi8(u, _mm256_set1_epi8(4));
#endif
        }
        default: { // GGML_TYPE_Q6_K
            const block_q6_K * x = (const block_q6_K *) row + bi / (QK_K/32);
            const float xd = qd_h2f(x->d);
            for (int h = 0; h < 2; h++) {
                d[h] = xd * (float) x->scales[2*j + h];
                c[h] = 0.0f;  // the offset is in the activation panel
            }
            const __m256i ql = _mm256_loadu_si256((const __m256i *)(x->ql + 64*n + 32*(m % 2)));
            const __m256i qh = _mm256_loadu_si256((const __m256i *)(x->qh + 32*n));
            const __m256i lo = _mm256_and_si256(_mm256_srl_epi16(ql, _mm_cvtsi32_si128(4*(m/2))), _mm256_set1_epi8(0x0F));
            const __m256i hi = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(2*m)), mask2);
            const __m256i u  = _mm256_or_si256(lo, _mm256_slli_epi16(hi, 4)); // v + 32
#if defined(Q8P_UNSIGNED)
            return u;
#else
            return _mm256_sub_epi8(u, _mm256_set1_epi8(32));
#endif
        }
    }
}

static GGML_GEMM_INLINE void q8p2_pack_weights_simd(enum ggml_type type, const char * row, int64_t k, uint8_t * panel) {
    const int64_t nb  = k / 32;
    for (int64_t s = 0; s*Q8P_LANES < nb; s++) {
        uint8_t * sb = panel + s*Q8P2_SB;
        __m256i blk[Q8P_LANES];
        float d[2][Q8P_LANES], c[2][Q8P_LANES];
        const int64_t n = MIN(Q8P_LANES, nb - s*Q8P_LANES);
        for (int64_t l = 0; l < n; l++) {
            float dl[2], cl[2];
            blk[l] = q8p2_decode(type, row, s*Q8P_LANES + l, dl, cl);
            for (int h = 0; h < 2; h++) {
                d[h][l] = dl[h];
                c[h][l] = cl[h];
            }
        }
        for (int64_t l = n; l < Q8P_LANES; l++) {
            blk[l] = _mm256_setzero_si256();
            for (int h = 0; h < 2; h++) {
                d[h][l] = 0.0f;
                c[h][l] = 0.0f;
            }
        }
        q8p_store_codes(sb, blk);
        q8p2_store_scales(sb, &d[0][0], &c[0][0]);
    }
}

#define Q8P2_DEFINE_PACK(name, type)                                                                   \
    static void name(const void * row, int64_t k, void * panel) {                                      \
        GGML_ASSERT(k % 32 == 0);                                                                      \
        q8p2_pack_weights_simd(type, (const char *) row, k, (uint8_t *) panel);                        \
    }

Q8P2_DEFINE_PACK(q8p_pack_q2_K, GGML_TYPE_Q2_K)
Q8P2_DEFINE_PACK(q8p_pack_q3_K, GGML_TYPE_Q3_K)
Q8P2_DEFINE_PACK(q8p_pack_q6_K, GGML_TYPE_Q6_K)

#define Q8P_DEFINE_PACK(name, type)                                                                    \
    static void name(const void * row, int64_t k, void * panel) {                                      \
        GGML_ASSERT(k % 32 == 0);                                                                      \
        q8p_pack_weights_simd(type, (const char *) row, k, (uint8_t *) panel);                         \
    }

Q8P_DEFINE_PACK(q8p_pack_q4_0, GGML_TYPE_Q4_0)
Q8P_DEFINE_PACK(q8p_pack_q4_1, GGML_TYPE_Q4_1)
Q8P_DEFINE_PACK(q8p_pack_q5_0, GGML_TYPE_Q5_0)
Q8P_DEFINE_PACK(q8p_pack_q5_1, GGML_TYPE_Q5_1)
Q8P_DEFINE_PACK(q8p_pack_q8_0, GGML_TYPE_Q8_0)
Q8P_DEFINE_PACK(q8p_pack_q4_K, GGML_TYPE_Q4_K)
Q8P_DEFINE_PACK(q8p_pack_q5_K, GGML_TYPE_Q5_K)
Q8P_DEFINE_PACK(q8p_pack_iq4_nl, GGML_TYPE_IQ4_NL)
Q8P_DEFINE_PACK(q8p_pack_iq4_xs, GGML_TYPE_IQ4_XS)
Q8P_DEFINE_PACK(q8p_pack_mxfp4, GGML_TYPE_MXFP4)

#endif // QD_SIMD

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

Q8P_DEFINE_PACK_REF(q8p_pack_q4_0_ref,   GGML_TYPE_Q4_0)
Q8P_DEFINE_PACK_REF(q8p_pack_q4_1_ref,   GGML_TYPE_Q4_1)
Q8P_DEFINE_PACK_REF(q8p_pack_q5_0_ref,   GGML_TYPE_Q5_0)
Q8P_DEFINE_PACK_REF(q8p_pack_q5_1_ref,   GGML_TYPE_Q5_1)
Q8P_DEFINE_PACK_REF(q8p_pack_q8_0_ref,   GGML_TYPE_Q8_0)
Q8P_DEFINE_PACK_REF(q8p_pack_q4_K_ref,   GGML_TYPE_Q4_K)
Q8P_DEFINE_PACK_REF(q8p_pack_q5_K_ref,   GGML_TYPE_Q5_K)
Q8P_DEFINE_PACK_REF(q8p_pack_iq4_nl_ref, GGML_TYPE_IQ4_NL)
Q8P_DEFINE_PACK_REF(q8p_pack_iq4_xs_ref, GGML_TYPE_IQ4_XS)
Q8P_DEFINE_PACK_REF(q8p_pack_mxfp4_ref,  GGML_TYPE_MXFP4)
Q8P_DEFINE_PACK_REF(q8p_pack_q2_K_ref,   GGML_TYPE_Q2_K)
Q8P_DEFINE_PACK_REF(q8p_pack_q3_K_ref,   GGML_TYPE_Q3_K)
Q8P_DEFINE_PACK_REF(q8p_pack_q6_K_ref,   GGML_TYPE_Q6_K)

#if !defined(QD_SIMD)
#define q8p_pack_q4_0   q8p_pack_q4_0_ref
#define q8p_pack_q4_1   q8p_pack_q4_1_ref
#define q8p_pack_q5_0   q8p_pack_q5_0_ref
#define q8p_pack_q5_1   q8p_pack_q5_1_ref
#define q8p_pack_q8_0   q8p_pack_q8_0_ref
#define q8p_pack_q4_K   q8p_pack_q4_K_ref
#define q8p_pack_q5_K   q8p_pack_q5_K_ref
#define q8p_pack_iq4_nl q8p_pack_iq4_nl_ref
#define q8p_pack_iq4_xs q8p_pack_iq4_xs_ref
#define q8p_pack_mxfp4  q8p_pack_mxfp4_ref
#define q8p_pack_q2_K   q8p_pack_q2_K_ref
#define q8p_pack_q3_K   q8p_pack_q3_K_ref
#define q8p_pack_q6_K   q8p_pack_q6_K_ref
#endif

//
// kernels
//

// portable: lane by lane, signed weight codes
#define Q8P_REF_RM 2
#define Q8P_REF_RN 2

// the panel forms the kernels meet
enum q8p_form {
    Q8P_PLAIN,       // one scale and constant term per block
    Q8P_HALVES,      // halves form, float constant terms (Q2_K: the minima)
    Q8P_HALVES_OFS,  // halves form, the weights' offset o (Q3_K, Q6_K):
                     // activation panels hold the integers -o * (sum of the
                     // half's codes) in c, where the unsigned kernels start
                     // their integer sums; weight panels hold no c
};

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

#if defined(QD_SIMD) && defined(GGML_VEC_AVX512)

#define Q8P_RM 4
#define Q8P_RN 3
typedef __m512i q8p_ivec;
typedef __m512  q8p_fvec;

static GGML_GEMM_INLINE q8p_ivec q8p_iload(const uint8_t * p) { return _mm512_loadu_si512(p); }
static GGML_GEMM_INLINE q8p_ivec q8p_izero(void) { return _mm512_setzero_si512(); }
static GGML_GEMM_INLINE q8p_fvec q8p_fload(const uint8_t * p) { return _mm512_loadu_ps(p); }
static GGML_GEMM_INLINE q8p_fvec q8p_fzero(void) { return _mm512_setzero_ps(); }
static GGML_GEMM_INLINE q8p_fvec q8p_fmadd(q8p_fvec a, q8p_fvec b, q8p_fvec c) { return _mm512_fmadd_ps(a, b, c); }
static GGML_GEMM_INLINE q8p_fvec q8p_fmul(q8p_fvec a, q8p_fvec b) { return _mm512_mul_ps(a, b); }
static GGML_GEMM_INLINE q8p_fvec q8p_cvt(q8p_ivec a) { return _mm512_cvtepi32_ps(a); }
static GGML_GEMM_INLINE float    q8p_fsum(q8p_fvec v) { return _mm512_reduce_add_ps(v); }
static GGML_GEMM_INLINE q8p_ivec q8p_idot(q8p_ivec acc, q8p_ivec a, q8p_ivec b) {
#if defined(Q8P_UNSIGNED)
    return _mm512_dpbusd_epi32(acc, a, b);
#else
    // signed weight codes: |a| times b with the sign of a
    const __m512i sb = _mm512_mask_sub_epi8(b, _mm512_movepi8_mask(a), _mm512_setzero_si512(), b);
    const __m512i p  = _mm512_maddubs_epi16(_mm512_abs_epi8(a), sb);
    return _mm512_add_epi32(acc, _mm512_madd_epi16(p, _mm512_set1_epi16(1)));
#endif
}

#elif defined(QD_SIMD)

#define Q8P_RM 2
#define Q8P_RN 2
typedef __m256i q8p_ivec;
typedef __m256  q8p_fvec;

static GGML_GEMM_INLINE q8p_ivec q8p_iload(const uint8_t * p) { return _mm256_loadu_si256((const __m256i *) p); }
static GGML_GEMM_INLINE q8p_ivec q8p_izero(void) { return _mm256_setzero_si256(); }
static GGML_GEMM_INLINE q8p_fvec q8p_fload(const uint8_t * p) { return _mm256_loadu_ps((const float *) p); }
static GGML_GEMM_INLINE q8p_fvec q8p_fzero(void) { return _mm256_setzero_ps(); }
static GGML_GEMM_INLINE q8p_fvec q8p_fmadd(q8p_fvec a, q8p_fvec b, q8p_fvec c) { return _mm256_fmadd_ps(a, b, c); }
static GGML_GEMM_INLINE q8p_fvec q8p_fmul(q8p_fvec a, q8p_fvec b) { return _mm256_mul_ps(a, b); }
static GGML_GEMM_INLINE q8p_fvec q8p_cvt(q8p_ivec a) { return _mm256_cvtepi32_ps(a); }
static GGML_GEMM_INLINE float    q8p_fsum(q8p_fvec v) { return qd_hsum256(v); }
static GGML_GEMM_INLINE q8p_ivec q8p_idot(q8p_ivec acc, q8p_ivec a, q8p_ivec b) {
#if defined(Q8P_UNSIGNED)
    return qd_dot_u8s8(acc, a, b);
#else
    return qd_dot_u8s8(acc, _mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
#endif
}

#endif

#if defined(Q8P_RM)

static GGML_GEMM_INLINE void q8p_tile_form(enum q8p_form form, int64_t nsb, const uint8_t * const * a, const uint8_t * const * b,
                                           float out[Q8P_RM][Q8P_RN]) {
    const int    nh       = form == Q8P_PLAIN ? 1 : 2;
    const size_t sb_bytes = (size_t) Q8P_LANES * (32 + 2*nh*sizeof(float));
    const int    gh       = 8 / nh;
    const size_t cofs     = Q8P_CODES + (size_t) nh*Q8P_LANES*sizeof(float);  // constant terms
    q8p_fvec facc[Q8P_RM][Q8P_RN];
    for (int r = 0; r < Q8P_RM; r++) {
        for (int c = 0; c < Q8P_RN; c++) {
            facc[r][c] = q8p_fzero();
        }
    }
    for (int64_t s = 0; s < nsb; s++) {
        const size_t off = (size_t) s * sb_bytes;
        for (int h = 0; h < nh; h++) {
            q8p_ivec iacc[Q8P_RM][Q8P_RN];
            for (int c = 0; c < Q8P_RN; c++) {
                q8p_ivec i0 = q8p_izero();
#if defined(Q8P_UNSIGNED)
                if (form == Q8P_HALVES_OFS) {
                    i0 = q8p_iload(b[c] + off + cofs + (size_t) h*Q8P_LANES*sizeof(float));
                }
#endif
                for (int r = 0; r < Q8P_RM; r++) {
                    iacc[r][c] = i0;
                }
            }
            for (int g = h*gh; g < (h + 1)*gh; g++) {
                q8p_ivec av[Q8P_RM];
                for (int r = 0; r < Q8P_RM; r++) {
                    av[r] = q8p_iload(a[r] + off + g*Q8P_W);
                }
                for (int c = 0; c < Q8P_RN; c++) {
                    q8p_ivec bv = q8p_iload(b[c] + off + g*Q8P_W);
                    GGML_GEMM_KEEP_IN_REG(bv);
                    for (int r = 0; r < Q8P_RM; r++) {
                        iacc[r][c] = q8p_idot(iacc[r][c], av[r], bv);
                    }
                }
            }
            const size_t dofs = off + Q8P_CODES + (size_t) h*Q8P_LANES*sizeof(float);
            q8p_fvec ad[Q8P_RM];
            for (int r = 0; r < Q8P_RM; r++) {
                ad[r] = q8p_fload(a[r] + dofs);
            }
            for (int c = 0; c < Q8P_RN; c++) {
                const q8p_fvec bd = q8p_fload(b[c] + dofs);
                for (int r = 0; r < Q8P_RM; r++) {
                    facc[r][c] = q8p_fmadd(q8p_cvt(iacc[r][c]), q8p_fmul(ad[r], bd), facc[r][c]);
                }
            }
        }
        for (int h = 0; h < nh && form != Q8P_HALVES_OFS; h++) {
            const size_t hofs = off + cofs + (size_t) h*Q8P_LANES*sizeof(float);
            q8p_fvec ac[Q8P_RM];
            for (int r = 0; r < Q8P_RM; r++) {
                ac[r] = q8p_fload(a[r] + hofs);
            }
            for (int c = 0; c < Q8P_RN; c++) {
                const q8p_fvec bc = q8p_fload(b[c] + hofs);
                for (int r = 0; r < Q8P_RM; r++) {
                    facc[r][c] = q8p_fmadd(ac[r], bc, facc[r][c]);
                }
            }
        }
    }
    for (int r = 0; r < Q8P_RM; r++) {
        for (int c = 0; c < Q8P_RN; c++) {
            out[r][c] = q8p_fsum(facc[r][c]);
        }
    }
}

static void q8p_tile(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8P_RM][Q8P_RN]) {
    q8p_tile_form(Q8P_PLAIN, nsb, a, b, out);
}

static void q8p2_tile(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8P_RM][Q8P_RN]) {
    q8p_tile_form(Q8P_HALVES, nsb, a, b, out);
}

static void q8p2o_tile(int64_t nsb, const uint8_t * const * a, const uint8_t * const * b, float out[Q8P_RM][Q8P_RN]) {
    q8p_tile_form(Q8P_HALVES_OFS, nsb, a, b, out);
}

#endif

GGML_GEMM_DEFINE_WALK(q8p_walk_ref, Q8P_REF_RM, Q8P_REF_RN, q8p_tile_ref, uint8_t)
GGML_GEMM_DEFINE_WALK(q8p2_walk_ref, Q8P_REF_RM, Q8P_REF_RN, q8p2_tile_ref, uint8_t)
GGML_GEMM_DEFINE_WALK(q8p2o_walk_ref, Q8P_REF_RM, Q8P_REF_RN, q8p2o_tile_ref, uint8_t)
#if defined(Q8P_RM)
GGML_GEMM_DEFINE_WALK(q8p_walk, Q8P_RM, Q8P_RN, q8p_tile, uint8_t)
GGML_GEMM_DEFINE_WALK(q8p2_walk, Q8P_RM, Q8P_RN, q8p2_tile, uint8_t)
GGML_GEMM_DEFINE_WALK(q8p2o_walk, Q8P_RM, Q8P_RN, q8p2o_tile, uint8_t)
#endif

// the walks as ggml_cpu_q8p_gemm_t
#define Q8P_DEFINE_GEMM(name, walk)                                                                    \
    static void name(int64_t nrows, int64_t ncols, int64_t nsb, const void * A, size_t lda,            \
                     const void * const * B, float * const * C, bool accumulate) {                     \
        walk(nrows, ncols, nsb, (const uint8_t *) A, lda, B, C, accumulate);                           \
    }

Q8P_DEFINE_GEMM(q8p_gemm_ref,   q8p_walk_ref)
Q8P_DEFINE_GEMM(q8p2_gemm_ref,  q8p2_walk_ref)
Q8P_DEFINE_GEMM(q8p2o_gemm_ref, q8p2o_walk_ref)
#if defined(Q8P_RM)
Q8P_DEFINE_GEMM(q8p_gemm,   q8p_walk)
Q8P_DEFINE_GEMM(q8p2_gemm,  q8p2_walk)
Q8P_DEFINE_GEMM(q8p2o_gemm, q8p2o_walk)
#if defined(GGML_VEC_AVX512)
#define Q8P_TILE_ISA GGML_CPU_QD_ISA "_4x3"
#else
#define Q8P_TILE_ISA GGML_CPU_QD_ISA "_2x2"
#endif
#else
#define q8p_gemm   q8p_gemm_ref
#define q8p2_gemm  q8p2_gemm_ref
#define q8p2o_gemm q8p2o_gemm_ref
#define Q8P_TILE_ISA "scalar_2x2"
#endif

void ggml_cpu_add_kernels_gemm_q8(struct ggml_cpu_kernel_config * cfg) {
#define Q8P_ADD(type, pk, pk_ref, tile, tile_ref)                                                  \
    GGML_CPU_SET_KERNEL(cfg->fast, type, pack_weights, pk,       GGML_CPU_QD_ISA);             \
    GGML_CPU_SET_KERNEL(cfg->ref,  type, pack_weights, pk_ref,   "scalar");                    \
    GGML_CPU_SET_KERNEL(cfg->fast, type, gemm,         tile,     Q8P_TILE_ISA);                \
    GGML_CPU_SET_KERNEL(cfg->ref,  type, gemm,         tile_ref, "scalar_2x2")
    Q8P_ADD(GGML_TYPE_Q4_0,   q8p_pack_q4_0,   q8p_pack_q4_0_ref,   q8p_gemm,   q8p_gemm_ref);
    Q8P_ADD(GGML_TYPE_Q4_1,   q8p_pack_q4_1,   q8p_pack_q4_1_ref,   q8p_gemm,   q8p_gemm_ref);
    Q8P_ADD(GGML_TYPE_Q5_0,   q8p_pack_q5_0,   q8p_pack_q5_0_ref,   q8p_gemm,   q8p_gemm_ref);
    Q8P_ADD(GGML_TYPE_Q5_1,   q8p_pack_q5_1,   q8p_pack_q5_1_ref,   q8p_gemm,   q8p_gemm_ref);
    Q8P_ADD(GGML_TYPE_Q8_0,   q8p_pack_q8_0,   q8p_pack_q8_0_ref,   q8p_gemm,   q8p_gemm_ref);
    Q8P_ADD(GGML_TYPE_Q4_K,   q8p_pack_q4_K,   q8p_pack_q4_K_ref,   q8p_gemm,   q8p_gemm_ref);
    Q8P_ADD(GGML_TYPE_Q5_K,   q8p_pack_q5_K,   q8p_pack_q5_K_ref,   q8p_gemm,   q8p_gemm_ref);
    Q8P_ADD(GGML_TYPE_IQ4_NL, q8p_pack_iq4_nl, q8p_pack_iq4_nl_ref, q8p_gemm,   q8p_gemm_ref);
    Q8P_ADD(GGML_TYPE_IQ4_XS, q8p_pack_iq4_xs, q8p_pack_iq4_xs_ref, q8p_gemm,   q8p_gemm_ref);
    Q8P_ADD(GGML_TYPE_MXFP4,  q8p_pack_mxfp4,  q8p_pack_mxfp4_ref,  q8p_gemm,   q8p_gemm_ref);
    // the halves form; Q3_K and Q6_K carry the weights' offset in the integers
    Q8P_ADD(GGML_TYPE_Q2_K,   q8p_pack_q2_K,   q8p_pack_q2_K_ref,   q8p2_gemm,  q8p2_gemm_ref);
    Q8P_ADD(GGML_TYPE_Q3_K,   q8p_pack_q3_K,   q8p_pack_q3_K_ref,   q8p2o_gemm, q8p2o_gemm_ref);
    Q8P_ADD(GGML_TYPE_Q6_K,   q8p_pack_q6_K,   q8p_pack_q6_K_ref,   q8p2o_gemm, q8p2o_gemm_ref);
#undef Q8P_ADD
}
