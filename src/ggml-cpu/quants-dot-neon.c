// quants-dot-neon.c: arm64 NEON row dot products of Q4_0 and Q8_0 weights
// with Q8_0 activations (the kernels of ggml_cpu_get_dot_rows on arm64).
//
// Each block's 32 code products are summed in integers and scaled as the
// portable path does, sum += (dx*dy) * isum block after block, so the results
// are the portable path's to the bit. The integer sums use SDOT (vdotq_s32)
// where the CPU has the dotprod extension, found at run time from the kernel's
// hardware capabilities (AT_HWCAP), since arm64 builds for every CPU;
// otherwise widening multiplies (SMULL) and pairwise adds, present on every
// arm64 CPU.

#include "quants-dot.h"
#include "arm-features.h"
#include "ggml-common.h"

#if defined(GGML_VEC_NEON)

// gcc declares vdotq_s32 for functions that target dotprod; clang (up to 15
// at least) only when the whole build does, so there the SDOT kernels need
// -march=armv8.2-a+dotprod or later
#if !defined(__clang__)
#define QN_DOTPROD 1
#define QN_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#elif defined(__ARM_FEATURE_DOTPROD)
#define QN_DOTPROD 1
#define QN_TARGET_DOTPROD
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

static inline int32_t qn_isum_neon(int8x16_t x0, int8x16_t x1, int8x16_t y0, int8x16_t y1) {
    int32x4_t acc = vpaddlq_s16(vmull_s8(vget_low_s8(x0), vget_low_s8(y0)));
    acc = vpadalq_s16(acc, vmull_high_s8(x0, y0));
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x1), vget_low_s8(y1)));
    acc = vpadalq_s16(acc, vmull_high_s8(x1, y1));
    return vaddvq_s32(acc);
}

#if defined(QN_DOTPROD)
QN_TARGET_DOTPROD
static inline int32_t qn_isum_dotprod(int8x16_t x0, int8x16_t x1, int8x16_t y0, int8x16_t y1) {
    return vaddvq_s32(vdotq_s32(vdotq_s32(vdupq_n_s32(0), x0, y0), x1, y1));
}
#endif

// One definition per (weight type, integer sum): the codes and the sum are
// inlined into the loop over the blocks.
#define QN_DEFINE_ROWS(name, block, codes, isum, attr)                                                 \
    attr static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,             \
                          const void * const * y, float * const * s, int64_t nc) {                    \
        const int64_t nb = n / 32;                                                                     \
        for (int64_t r = 0; r < nr; r++) {                                                             \
            const char * xr = (const char *) x + r*bx;                                                 \
            for (int64_t c = 0; c < nc; c++) {                                                         \
                const block_q8_0 * yb = (const block_q8_0 *) y[c];                                     \
                float sum = 0.0f;                                                                      \
                for (int64_t b = 0; b < nb; b++) {                                                     \
                    int8x16_t x0, x1;                                                                  \
                    float dx;                                                                          \
                    codes(xr + b*sizeof(block), &x0, &x1, &dx);                                       \
                    const int32_t is = isum(x0, x1, vld1q_s8(yb[b].qs), vld1q_s8(yb[b].qs + 16));      \
                    sum += (dx*GGML_FP16_TO_FP32(yb[b].d)) * (float) is;                               \
                }                                                                                      \
                s[c][r] = sum;                                                                         \
            }                                                                                          \
        }                                                                                              \
    }

QN_DEFINE_ROWS(qn_rows_q8_0_neon,    block_q8_0, qn_codes_q8_0, qn_isum_neon, )
QN_DEFINE_ROWS(qn_rows_q4_0_neon,    block_q4_0, qn_codes_q4_0, qn_isum_neon, )
#if defined(QN_DOTPROD)
QN_DEFINE_ROWS(qn_rows_q8_0_dotprod, block_q8_0, qn_codes_q8_0, qn_isum_dotprod, QN_TARGET_DOTPROD)
QN_DEFINE_ROWS(qn_rows_q4_0_dotprod, block_q4_0, qn_codes_q4_0, qn_isum_dotprod, QN_TARGET_DOTPROD)
#endif

ggml_cpu_dot_rows_t ggml_cpu_get_dot_rows_neon(enum ggml_type type) {
#if defined(QN_DOTPROD)
    if (ggml_arm_has_dotprod()) {
        switch (type) {
            case GGML_TYPE_Q8_0: return qn_rows_q8_0_dotprod;
            case GGML_TYPE_Q4_0: return qn_rows_q4_0_dotprod;
            default:             return NULL;
        }
    }
#endif
    switch (type) {
        case GGML_TYPE_Q8_0: return qn_rows_q8_0_neon;
        case GGML_TYPE_Q4_0: return qn_rows_q4_0_neon;
        default:             return NULL;
    }
}

#else

ggml_cpu_dot_rows_t ggml_cpu_get_dot_rows_neon(enum ggml_type type) {
    GGML_UNUSED(type);
    return NULL;
}

#endif
