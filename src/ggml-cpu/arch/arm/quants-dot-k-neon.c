// quants-dot-k-neon.c: arm64 NEON row dot products of the K-quants (Q2_K ..
// Q6_K) with Q8_K activation rows.
//
// A weight block is decoded once into 256 signed codes (sixteen int8x16
// registers, one per group of 16 values), its 16 group scales and minimums
// (quants-dot-k.c explains the form value = d * sc[g] * q - dmin * m[g]); then
// each of up to four activation columns takes, per group, the dot products of
// the codes in four int32 lanes (SDOT with the dotprod extension, widening
// multiplies without, quants-neon.h), multiplied by the group scale. The
// integer sums and the float expression per block are the portable path's.

#include "kernels/kernel-config.h"
#include "arm-features.h"
#include "arch/arm/quants-neon.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"

#if defined(GGML_VEC_NEON)

struct qkn_block {
    int8x16_t q[QK_K/16];   // codes of group g, offsets removed
    int32_t   sc[QK_K/16];  // scale of group g
    int32_t   m[QK_K/16];   // minimum of group g (0 for the symmetric types)
    float     d, dmin;
};

// the 32 bits at position (byte k, bit shift) of 32 bytes of packed codes, as two registers
static inline void qkn_bits(uint8x16_t v0, uint8x16_t v1, int shift, uint8_t mask, uint8x16_t * o0, uint8x16_t * o1) {
    const int8x16_t sh = vdupq_n_s8((int8_t) -shift);
    *o0 = vandq_u8(vshlq_u8(v0, sh), vdupq_n_u8(mask));
    *o1 = vandq_u8(vshlq_u8(v1, sh), vdupq_n_u8(mask));
}

// Q2_K: value 128h + 32s + l is bits 2s of qs[32h + l]; the scale byte of a
// group holds its scale (low nibble) and minimum (high nibble)
static inline void qkn_decode_q2_K(const void * blk, struct qkn_block * o) {
    const block_q2_K * b = (const block_q2_K *) blk;
    for (int h = 0; h < QK_K/128; h++) {
        const uint8x16_t q0 = vld1q_u8(b->qs + 32*h), q1 = vld1q_u8(b->qs + 32*h + 16);
        for (int s = 0; s < 4; s++) {
            uint8x16_t u0, u1;
            qkn_bits(q0, q1, 2*s, 3, &u0, &u1);
            o->q[8*h + 2*s]     = vreinterpretq_s8_u8(u0);
            o->q[8*h + 2*s + 1] = vreinterpretq_s8_u8(u1);
        }
    }
    for (int g = 0; g < QK_K/16; g++) {
        o->sc[g] = b->scales[g] & 0x0F;
        o->m[g]  = b->scales[g] >> 4;
    }
    o->d    = GGML_FP16_TO_FP32(b->d);
    o->dmin = GGML_FP16_TO_FP32(b->dmin);
}

// Q3_K: the Q2_K low bits, and bit 4h + s of hmask[l] as bit 2; the value is u - 4
static inline void qkn_decode_q3_K(const void * blk, struct qkn_block * o) {
    const block_q3_K * b = (const block_q3_K *) blk;
    const uint8x16_t hm0 = vld1q_u8(b->hmask), hm1 = vld1q_u8(b->hmask + 16);
    const int8x16_t  four = vdupq_n_s8(4);
    for (int h = 0; h < QK_K/128; h++) {
        const uint8x16_t q0 = vld1q_u8(b->qs + 32*h), q1 = vld1q_u8(b->qs + 32*h + 16);
        for (int s = 0; s < 4; s++) {
            uint8x16_t u0, u1, h0, h1;
            qkn_bits(q0, q1, 2*s, 3, &u0, &u1);
            qkn_bits(hm0, hm1, 4*h + s, 1, &h0, &h1);
            u0 = vorrq_u8(u0, vshlq_n_u8(h0, 2));
            u1 = vorrq_u8(u1, vshlq_n_u8(h1, 2));
            o->q[8*h + 2*s]     = vsubq_s8(vreinterpretq_s8_u8(u0), four);
            o->q[8*h + 2*s + 1] = vsubq_s8(vreinterpretq_s8_u8(u1), four);
        }
    }
    int sc[QK_K/16];
    ggml_q3_K_scales(b->scales, sc);
    for (int g = 0; g < QK_K/16; g++) {
        o->sc[g] = sc[g];
        o->m[g]  = 0;
    }
    o->d    = GGML_FP16_TO_FP32(b->d);
    o->dmin = 0.0f;
}

// Q4_K / Q5_K: sub-block j (32 values) is nibble j % 2 of qs[32*(j/2) + l],
// Q5_K adding bit j of qh[l] as bit 4; 6-bit scales and minimums per sub-block
static inline void qkn_decode_q45_K(const uint8_t * scales, const uint8_t * qs, const uint8_t * qh,
                                    ggml_half d, ggml_half dmin, struct qkn_block * o) {
    uint8x16_t qh0 = vdupq_n_u8(0), qh1 = vdupq_n_u8(0);
    if (qh != NULL) {
        qh0 = vld1q_u8(qh);
        qh1 = vld1q_u8(qh + 16);
    }
    for (int j = 0; j < QK_K/32; j++) {
        uint8x16_t u0, u1;
        qkn_bits(vld1q_u8(qs + 32*(j/2)), vld1q_u8(qs + 32*(j/2) + 16), 4*(j % 2), 0x0F, &u0, &u1);
        if (qh != NULL) {
            uint8x16_t h0, h1;
            qkn_bits(qh0, qh1, j, 1, &h0, &h1);
            u0 = vorrq_u8(u0, vshlq_n_u8(h0, 4));
            u1 = vorrq_u8(u1, vshlq_n_u8(h1, 4));
        }
        o->q[2*j]     = vreinterpretq_s8_u8(u0);
        o->q[2*j + 1] = vreinterpretq_s8_u8(u1);
        int sc, m;
        ggml_k_scale_min(j, scales, &sc, &m);
        o->sc[2*j] = o->sc[2*j + 1] = sc;
        o->m[2*j]  = o->m[2*j + 1]  = m;
    }
    o->d    = GGML_FP16_TO_FP32(d);
    o->dmin = GGML_FP16_TO_FP32(dmin);
}

static inline void qkn_decode_q4_K(const void * blk, struct qkn_block * o) {
    const block_q4_K * b = (const block_q4_K *) blk;
    qkn_decode_q45_K(b->scales, b->qs, NULL, b->d, b->dmin, o);
}

static inline void qkn_decode_q5_K(const void * blk, struct qkn_block * o) {
    const block_q5_K * b = (const block_q5_K *) blk;
    qkn_decode_q45_K(b->scales, b->qs, b->qh, b->d, b->dmin, o);
}

// Q6_K: value 128h + 32s + l has low nibble s / 2 of ql[64h + 32(s % 2) + l]
// and high bits 2s of qh[32h + l]; the value is u - 32; int8 group scales
static inline void qkn_decode_q6_K(const void * blk, struct qkn_block * o) {
    const block_q6_K * b = (const block_q6_K *) blk;
    const int8x16_t off = vdupq_n_s8(32);
    for (int h = 0; h < QK_K/128; h++) {
        const uint8x16_t qh0 = vld1q_u8(b->qh + 32*h), qh1 = vld1q_u8(b->qh + 32*h + 16);
        for (int s = 0; s < 4; s++) {
            const uint8_t * ql = b->ql + 64*h + 32*(s % 2);
            uint8x16_t u0, u1, h0, h1;
            qkn_bits(vld1q_u8(ql), vld1q_u8(ql + 16), 4*(s/2), 0x0F, &u0, &u1);
            qkn_bits(qh0, qh1, 2*s, 3, &h0, &h1);
            u0 = vorrq_u8(u0, vshlq_n_u8(h0, 4));
            u1 = vorrq_u8(u1, vshlq_n_u8(h1, 4));
            o->q[8*h + 2*s]     = vsubq_s8(vreinterpretq_s8_u8(u0), off);
            o->q[8*h + 2*s + 1] = vsubq_s8(vreinterpretq_s8_u8(u1), off);
        }
    }
    for (int g = 0; g < QK_K/16; g++) {
        o->sc[g] = b->scales[g];
        o->m[g]  = 0;
    }
    o->d    = GGML_FP16_TO_FP32(b->d);
    o->dmin = 0.0f;
}

// dy * (d * sum_g sc[g] * (q . y)_g - dmin * sum_g m[g] * bsums[g]), as the portable path
static inline float qkn_block_value(const struct qkn_block * o, const block_q8_K * y, int32x4_t acc) {
    int32_t msum = 0;
    for (int g = 0; g < QK_K/16; g++) {
        msum += o->m[g] * y->bsums[g];
    }
    return y->d * (o->d * (float) vaddvq_s32(acc) - o->dmin * (float) msum);
}

static inline float qkn_block_dot_widen(const struct qkn_block * o, const block_q8_K * y) {
    int32x4_t acc = vdupq_n_s32(0);
    for (int g = 0; g < QK_K/16; g++) {
        acc = vmlaq_n_s32(acc, ggml_neon_dot4_widen(o->q[g], vld1q_s8(y->qs + 16*g)), o->sc[g]);
    }
    return qkn_block_value(o, y, acc);
}

#if defined(GGML_NEON_DOTPROD)
GGML_NEON_TARGET_DOTPROD
static inline float qkn_block_dot_sdot(const struct qkn_block * o, const block_q8_K * y) {
    int32x4_t acc = vdupq_n_s32(0);
    for (int g = 0; g < QK_K/16; g++) {
        acc = vmlaq_n_s32(acc, vdotq_s32(vdupq_n_s32(0), o->q[g], vld1q_s8(y->qs + 16*g)), o->sc[g]);
    }
    return qkn_block_value(o, y, acc);
}
#endif

// nr rows . nc columns: a weight block decoded once for up to QKN_COLS columns;
// each column's sum runs over the blocks in order whatever nc is. Inlined
// into one function per (type, dot step) below, with decode and block_dot.
#define QKN_COLS 4
static QD_INLINE void qkn_dot_rows(size_t block_size, void (*decode)(const void * blk, struct qkn_block * o),
                                   float (*block_dot)(const struct qkn_block * o, const block_q8_K * y),
                                   int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                   const void * const * y, float * const * s, int64_t nc) {
    for (int64_t c0 = 0; c0 < nc; c0 += QKN_COLS) {
        const int C = (int) MIN(QKN_COLS, nc - c0);
        for (int64_t r = 0; r < nr; r++) {
            const char * xr = (const char *) x + r*bx;
            float sum[QKN_COLS] = { 0.0f };
            for (int64_t b = 0; b < n / QK_K; b++) {
                struct qkn_block blk;
                decode(xr + b*block_size, &blk);
                for (int c = 0; c < C; c++) {
                    sum[c] += block_dot(&blk, (const block_q8_K *) y[c0 + c] + b);
                }
            }
            for (int c = 0; c < C; c++) {
                s[c0 + c][r] = sum[c];
            }
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(q2_K_dot__neon, qkn_dot_rows, sizeof(block_q2_K), qkn_decode_q2_K, qkn_block_dot_widen)
GGML_CPU_DEFINE_DOT_ROWS(q3_K_dot__neon, qkn_dot_rows, sizeof(block_q3_K), qkn_decode_q3_K, qkn_block_dot_widen)
GGML_CPU_DEFINE_DOT_ROWS(q4_K_dot__neon, qkn_dot_rows, sizeof(block_q4_K), qkn_decode_q4_K, qkn_block_dot_widen)
GGML_CPU_DEFINE_DOT_ROWS(q5_K_dot__neon, qkn_dot_rows, sizeof(block_q5_K), qkn_decode_q5_K, qkn_block_dot_widen)
GGML_CPU_DEFINE_DOT_ROWS(q6_K_dot__neon, qkn_dot_rows, sizeof(block_q6_K), qkn_decode_q6_K, qkn_block_dot_widen)
#if defined(GGML_NEON_DOTPROD)
GGML_NEON_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(q2_K_dot__neon_sdot, qkn_dot_rows, sizeof(block_q2_K), qkn_decode_q2_K, qkn_block_dot_sdot)
GGML_NEON_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(q3_K_dot__neon_sdot, qkn_dot_rows, sizeof(block_q3_K), qkn_decode_q3_K, qkn_block_dot_sdot)
GGML_NEON_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(q4_K_dot__neon_sdot, qkn_dot_rows, sizeof(block_q4_K), qkn_decode_q4_K, qkn_block_dot_sdot)
GGML_NEON_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(q5_K_dot__neon_sdot, qkn_dot_rows, sizeof(block_q5_K), qkn_decode_q5_K, qkn_block_dot_sdot)
GGML_NEON_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(q6_K_dot__neon_sdot, qkn_dot_rows, sizeof(block_q6_K), qkn_decode_q6_K, qkn_block_dot_sdot)
#endif

void ggml_cpu_add_kernels_arm_quants_dot_k(struct ggml_cpu_kernel_config * cfg) {
#define QKN_ADD(type, name, isa) GGML_CPU_SET_KERNEL(cfg->fast, type, dot_rows, name, isa)
#if defined(GGML_NEON_DOTPROD)
    if (ggml_arm_has_dotprod()) {
        QKN_ADD(GGML_TYPE_Q2_K, q2_K_dot__neon_sdot, "neon_sdot");
        QKN_ADD(GGML_TYPE_Q3_K, q3_K_dot__neon_sdot, "neon_sdot");
        QKN_ADD(GGML_TYPE_Q4_K, q4_K_dot__neon_sdot, "neon_sdot");
        QKN_ADD(GGML_TYPE_Q5_K, q5_K_dot__neon_sdot, "neon_sdot");
        QKN_ADD(GGML_TYPE_Q6_K, q6_K_dot__neon_sdot, "neon_sdot");
        return;
    }
#endif
    QKN_ADD(GGML_TYPE_Q2_K, q2_K_dot__neon, "neon");
    QKN_ADD(GGML_TYPE_Q3_K, q3_K_dot__neon, "neon");
    QKN_ADD(GGML_TYPE_Q4_K, q4_K_dot__neon, "neon");
    QKN_ADD(GGML_TYPE_Q5_K, q5_K_dot__neon, "neon");
    QKN_ADD(GGML_TYPE_Q6_K, q6_K_dot__neon, "neon");
#undef QKN_ADD
}

#else

void ggml_cpu_add_kernels_arm_quants_dot_k(struct ggml_cpu_kernel_config * cfg) {
    GGML_UNUSED(cfg);
}

#endif
