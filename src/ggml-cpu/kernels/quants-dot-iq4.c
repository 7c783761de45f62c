// quants-dot-iq4.c: the table formats (IQ4_NL, MXFP4 . Q8_0 rows; IQ4_XS . Q8_K
// rows). The ternary formats are in quants-dot-tq.c.
//
// A weight code indexes a table of 16 int8 values; the dot product of a
// block is the integer sum of table values times activation codes, scaled
// by the two block scales (IQ4_XS: by its 6-bit sub-block scale minus 32 as
// well). This is the portable path; the x86 one is in
// arch/x86/quants-dot-iq4-avx2.c, the arm64 one in arch/arm/quants-dot-neon.c.

#include "kernels/quants-dot.h"
#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"

//
// portable path
//

static float iq4_dot_row_ref(enum ggml_type type, int64_t n, const char * x, const void * y) {
    float sum = 0.0f;
    if (type == GGML_TYPE_IQ4_XS) {
        const block_iq4_xs * xb = (const block_iq4_xs *) x;
        const block_q8_K   * yb = (const block_q8_K *) y;
        const int8_t * values = ggml_kvalues_iq4nl();
        for (int64_t b = 0; b < n / QK_K; b++) {
            int32_t isum = 0;
            for (int ib = 0; ib < QK_K/32; ib++) {
                const uint8_t * qs = xb[b].qs + 16*ib;
                const int8_t  * q8 = yb[b].qs + 32*ib;
                int32_t s = 0;
                for (int j = 0; j < 16; j++) {
                    s += values[qs[j] & 0x0F] * q8[j] + values[qs[j] >> 4] * q8[j + 16];
                }
                isum += (ggml_iq4_xs_scale(&xb[b], ib) - 32) * s;
            }
            sum += GGML_FP16_TO_FP32(xb[b].d) * yb[b].d * (float) isum;
        }
        return sum;
    }
    const block_q8_0 * yb = (const block_q8_0 *) y;
    const bool nl = type == GGML_TYPE_IQ4_NL;
    const int8_t * values = nl ? ggml_kvalues_iq4nl() : ggml_kvalues_mxfp4();
    const size_t bs = nl ? sizeof(block_iq4_nl) : sizeof(block_mxfp4);
    for (int64_t b = 0; b < n / 32; b++) {
        const char * blk = x + b*bs;
        const uint8_t * qs = nl ? ((const block_iq4_nl *) blk)->qs : ((const block_mxfp4 *) blk)->qs;
        const float dx = nl ? GGML_FP16_TO_FP32(((const block_iq4_nl *) blk)->d) : ggml_e8m0_to_fp32_half(((const block_mxfp4 *) blk)->e);
        int32_t s = 0;
        for (int j = 0; j < 16; j++) {
            s += values[qs[j] & 0x0F] * yb[b].qs[j] + values[qs[j] >> 4] * yb[b].qs[j + 16];
        }
        sum += dx * GGML_FP16_TO_FP32(yb[b].d) * (float) s;
    }
    return sum;
}

GGML_CPU_DEFINE_DOT_ROWS(iq4_nl_dot__scalar, qd_rows_by_row, iq4_dot_row_ref, GGML_TYPE_IQ4_NL)
GGML_CPU_DEFINE_DOT_ROWS(iq4_xs_dot__scalar, qd_rows_by_row, iq4_dot_row_ref, GGML_TYPE_IQ4_XS)
GGML_CPU_DEFINE_DOT_ROWS(mxfp4_dot__scalar, qd_rows_by_row, iq4_dot_row_ref, GGML_TYPE_MXFP4)

void ggml_cpu_add_kernels_quants_dot_iq4(struct ggml_cpu_kernel_config * cfg) {
#define IQ4_ADD(type, f, r)                                                       \
    GGML_CPU_SET_KERNEL(cfg->fast, type, dot_rows, f, "scalar");                   \
    GGML_CPU_SET_KERNEL(cfg->ref,  type, dot_rows, r, "scalar")
    IQ4_ADD(GGML_TYPE_IQ4_NL, iq4_nl_dot__scalar, iq4_nl_dot__scalar);
    IQ4_ADD(GGML_TYPE_IQ4_XS, iq4_xs_dot__scalar, iq4_xs_dot__scalar);
    IQ4_ADD(GGML_TYPE_MXFP4,  mxfp4_dot__scalar,  mxfp4_dot__scalar);
#undef IQ4_ADD
}

void ggml_vec_dot_iq4_nl_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                              const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_IQ4_NL, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_iq4_xs_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                              const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_IQ4_XS, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_mxfp4_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                             const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_MXFP4, n, s, bs, x, bx, y, by, nrc);
}
