// quants-dot-tq.c: the portable row dots of the ternary formats (TQ1_0,
// TQ2_0 . Q8_K rows; the AVX2 ones are in arch/x86/quants-dot-iq-avx2.c).
// The values of a block are decoded to -1, 0, 1 and summed against the
// activation codes: a few models use these types, and their speed here is
// that of the scalar decode.

#include "kernels/quants-dot.h"
#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"

static float tq_dot_row(enum ggml_type type, int64_t n, const char * x, const void * yv) {
    const block_q8_K * y = (const block_q8_K *) yv;
    const size_t bs = ggml_type_size(type);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / QK_K; b++) {
        int8_t v[QK_K];
        ggml_half d;
        if (type == GGML_TYPE_TQ1_0) {
            ggml_tq1_0_values(x + b*bs, v);
            d = ((const block_tq1_0 *)(x + b*bs))->d;
        } else {
            ggml_tq2_0_values(x + b*bs, v);
            d = ((const block_tq2_0 *)(x + b*bs))->d;
        }
        int32_t isum = 0;
        for (int j = 0; j < QK_K; j++) {
            isum += v[j] * y[b].qs[j];
        }
        sum += GGML_FP16_TO_FP32(d) * y[b].d * (float) isum;
    }
    return sum;
}

GGML_CPU_DEFINE_DOT_ROWS(tq1_0_dot__scalar, qd_rows_by_row, tq_dot_row, GGML_TYPE_TQ1_0)
GGML_CPU_DEFINE_DOT_ROWS(tq2_0_dot__scalar, qd_rows_by_row, tq_dot_row, GGML_TYPE_TQ2_0)

void ggml_cpu_add_kernels_quants_dot_tq(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_TQ1_0, dot_rows, tq1_0_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_TQ2_0, dot_rows, tq2_0_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_TQ1_0, dot_rows, tq1_0_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_TQ2_0, dot_rows, tq2_0_dot__scalar, "scalar");
}

void ggml_vec_dot_tq1_0_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                             const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_TQ1_0, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_tq2_0_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                             const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_TQ2_0, n, s, bs, x, bx, y, by, nrc);
}
