// quants-dot-neon.c: arm64 NEON row dot products of the weight types with
// Q8_0 activations (Q4_0, Q8_0, and the table formats IQ4_NL and MXFP4) and of
// IQ4_XS with Q8_K activations, entered in the kernel configuration
// (kernel-config.h) with SDOT or without, as the CPU has it.
//
// Each block's code products are summed in integers and scaled as the
// portable path does, sum += (dx*dy) * isum block after block, so the results
// are the portable path's to the bit. The integer sums use SDOT where the CPU
// has the dotprod extension, otherwise widening multiplies (quants-neon.h).
// The table formats look their 4-bit codes up with one TBL per 16 bytes.

#include "kernels/kernel-config.h"
#include "arm-features.h"
#include "arch/arm/quants-neon.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"

#if defined(GGML_VEC_NEON)

#if defined(GGML_NEON_DOTPROD)
#define QN_DOTPROD 1
#define QN_TARGET_DOTPROD GGML_NEON_TARGET_DOTPROD
#endif

// the 32 codes of a weight block as signed bytes, with the block scale
static inline void qn_codes_q8_0(const void * blk, int8x16_t * lo, int8x16_t * hi, float * d) {
    const block_q8_0 * b = (const block_q8_0 *) blk;
    *lo = vld1q_s8(b->qs);
    *hi = vld1q_s8(b->qs + 16);
    *d  = GGML_FP16_TO_FP32(b->d);
}

// Q4_0: value j is the low nibble of byte j minus 8, value j + 16 its high nibble minus 8
static inline void qn_codes_q4_0(const void * blk, int8x16_t * lo, int8x16_t * hi, float * d) {
    const block_q4_0 * b = (const block_q4_0 *) blk;
    const uint8x16_t q = vld1q_u8(b->qs);
    const int8x16_t  o = vdupq_n_s8(8);
    *lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(0x0F))), o);
    *hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), o);
    *d  = GGML_FP16_TO_FP32(b->d);
}

// the table formats: value j is table[low nibble of byte j], value j + 16 table[high nibble]
static inline void qn_codes_iq4_nl(const void * blk, int8x16_t * lo, int8x16_t * hi, float * d) {
    const block_iq4_nl * b = (const block_iq4_nl *) blk;
    ggml_neon_lookup_nibbles(b->qs, vld1q_s8(ggml_kvalues_iq4nl()), lo, hi);
    *d = GGML_FP16_TO_FP32(b->d);
}

static inline void qn_codes_mxfp4(const void * blk, int8x16_t * lo, int8x16_t * hi, float * d) {
    const block_mxfp4 * b = (const block_mxfp4 *) blk;
    ggml_neon_lookup_nibbles(b->qs, vld1q_s8(ggml_kvalues_mxfp4()), lo, hi);
    *d = ggml_e8m0_to_fp32_half(b->e);
}

static inline int32_t qn_isum_neon(int8x16_t x0, int8x16_t x1, int8x16_t y0, int8x16_t y1) {
    return vaddvq_s32(vaddq_s32(ggml_neon_dot4_widen(x0, y0), ggml_neon_dot4_widen(x1, y1)));
}

#if defined(QN_DOTPROD)
QN_TARGET_DOTPROD
static inline int32_t qn_isum_dotprod(int8x16_t x0, int8x16_t x1, int8x16_t y0, int8x16_t y1) {
    return vaddvq_s32(vdotq_s32(vdotq_s32(vdupq_n_s32(0), x0, y0), x1, y1));
}
#endif

typedef void (*qn_codes_fn)(const void * blk, int8x16_t * lo, int8x16_t * hi, float * d);
typedef int32_t (*qn_isum_fn)(int8x16_t x0, int8x16_t x1, int8x16_t y0, int8x16_t y1);

// The rows of a weight type with Q8_0 activations: blocks of block_size
// bytes, decoded by codes, summed by isum. Inlined into one function per
// (weight type, integer sum) below, so that codes and isum are inlined into
// the loop over the blocks.
static QD_INLINE void qn_dot_rows(size_t block_size, qn_codes_fn codes, qn_isum_fn isum,
                                  int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                  const void * const * y, float * const * s, int64_t nc) {
    const int64_t nb = n / 32;
    for (int64_t r = 0; r < nr; r++) {
        const char * xr = (const char *) x + r*bx;
        for (int64_t c = 0; c < nc; c++) {
            const block_q8_0 * yb = (const block_q8_0 *) y[c];
            float sum = 0.0f;
            for (int64_t b = 0; b < nb; b++) {
                int8x16_t x0, x1;
                float dx;
                codes(xr + b*block_size, &x0, &x1, &dx);
                const int32_t is = isum(x0, x1, vld1q_s8(yb[b].qs), vld1q_s8(yb[b].qs + 16));
                sum += (dx*GGML_FP16_TO_FP32(yb[b].d)) * (float) is;
            }
            s[c][r] = sum;
        }
    }
}

// IQ4_XS . Q8_K: eight sub-blocks of 32 with 6-bit scales s (the factor s - 32);
// sum += (d*dy) * sum over sub-blocks of (s - 32) * isum, as the portable path
static QD_INLINE void qn_dot_rows_iq4_xs(qn_isum_fn isum, int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                         const void * const * y, float * const * s, int64_t nc) {
    const int8x16_t table = vld1q_s8(ggml_kvalues_iq4nl());
    for (int64_t r = 0; r < nr; r++) {
        const block_iq4_xs * xr = (const block_iq4_xs *)((const char *) x + r*bx);
        for (int64_t c = 0; c < nc; c++) {
            const block_q8_K * yb = (const block_q8_K *) y[c];
            float sum = 0.0f;
            for (int64_t b = 0; b < n / QK_K; b++) {
                int32_t is = 0;
                for (int ib = 0; ib < QK_K/32; ib++) {
                    int8x16_t x0, x1;
                    ggml_neon_lookup_nibbles(xr[b].qs + 16*ib, table, &x0, &x1);
                    const int8_t * q8 = yb[b].qs + 32*ib;
                    is += (ggml_iq4_xs_scale(&xr[b], ib) - 32) *
                          isum(x0, x1, vld1q_s8(q8), vld1q_s8(q8 + 16));
                }
                sum += GGML_FP16_TO_FP32(xr[b].d) * yb[b].d * (float) is;
            }
            s[c][r] = sum;
        }
    }
}

GGML_CPU_DEFINE_DOT_ROWS(q8_0_dot__neon, qn_dot_rows, sizeof(block_q8_0), qn_codes_q8_0, qn_isum_neon)
GGML_CPU_DEFINE_DOT_ROWS(q4_0_dot__neon, qn_dot_rows, sizeof(block_q4_0), qn_codes_q4_0, qn_isum_neon)
GGML_CPU_DEFINE_DOT_ROWS(iq4_nl_dot__neon, qn_dot_rows, sizeof(block_iq4_nl), qn_codes_iq4_nl, qn_isum_neon)
GGML_CPU_DEFINE_DOT_ROWS(mxfp4_dot__neon, qn_dot_rows, sizeof(block_mxfp4), qn_codes_mxfp4, qn_isum_neon)
GGML_CPU_DEFINE_DOT_ROWS(iq4_xs_dot__neon, qn_dot_rows_iq4_xs, qn_isum_neon)
#if defined(QN_DOTPROD)
QN_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(q8_0_dot__neon_sdot, qn_dot_rows, sizeof(block_q8_0), qn_codes_q8_0, qn_isum_dotprod)
QN_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(q4_0_dot__neon_sdot, qn_dot_rows, sizeof(block_q4_0), qn_codes_q4_0, qn_isum_dotprod)
QN_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(iq4_nl_dot__neon_sdot, qn_dot_rows, sizeof(block_iq4_nl), qn_codes_iq4_nl, qn_isum_dotprod)
QN_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(mxfp4_dot__neon_sdot, qn_dot_rows, sizeof(block_mxfp4), qn_codes_mxfp4, qn_isum_dotprod)
QN_TARGET_DOTPROD GGML_CPU_DEFINE_DOT_ROWS(iq4_xs_dot__neon_sdot, qn_dot_rows_iq4_xs, qn_isum_dotprod)
#endif

void ggml_cpu_add_kernels_arm_quants_dot(struct ggml_cpu_kernel_config * cfg) {
#define QN_ADD(type, name, isa) GGML_CPU_SET_KERNEL(cfg->fast, type, dot_rows, name, isa)
#if defined(QN_DOTPROD)
    if (ggml_arm_has_dotprod()) {
        QN_ADD(GGML_TYPE_Q8_0,   q8_0_dot__neon_sdot,   "neon_sdot");
        QN_ADD(GGML_TYPE_Q4_0,   q4_0_dot__neon_sdot,   "neon_sdot");
        QN_ADD(GGML_TYPE_IQ4_NL, iq4_nl_dot__neon_sdot, "neon_sdot");
        QN_ADD(GGML_TYPE_MXFP4,  mxfp4_dot__neon_sdot,  "neon_sdot");
        QN_ADD(GGML_TYPE_IQ4_XS, iq4_xs_dot__neon_sdot, "neon_sdot");
        return;
    }
#endif
    QN_ADD(GGML_TYPE_Q8_0,   q8_0_dot__neon,   "neon");
    QN_ADD(GGML_TYPE_Q4_0,   q4_0_dot__neon,   "neon");
    QN_ADD(GGML_TYPE_IQ4_NL, iq4_nl_dot__neon, "neon");
    QN_ADD(GGML_TYPE_MXFP4,  mxfp4_dot__neon,  "neon");
    QN_ADD(GGML_TYPE_IQ4_XS, iq4_xs_dot__neon, "neon");
#undef QN_ADD
}

#else

void ggml_cpu_add_kernels_arm_quants_dot(struct ggml_cpu_kernel_config * cfg) {
    GGML_UNUSED(cfg);
}

#endif
