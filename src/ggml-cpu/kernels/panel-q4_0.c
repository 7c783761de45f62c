// panel-q4_0.c: the portable dot product of Q4_0 panels (panels.h) and
// Q8_0 activation rows; the reference the vector kernels follow
// (arch/x86/panel-q4_0-avx512.c): per block the integer sum of the 32 code
// products, the codes taken as q - 8, scaled by the two block scales, the
// blocks summed in order in float.

#include "kernels/panels.h"
#include "kernels/kernel-config.h"
#include "ggml-impl.h"

#define Q4P_UNIT (GGML_QPANEL_ROWS * sizeof(block_q4_0))

void q4_0p_dot__scalar(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                       const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc) {
    (void) ys;
    for (int64_t g = 0; g < ng; g++) {
        const uint8_t * grp = (const uint8_t *) panels + (size_t) g * (size_t) nb * Q4P_UNIT;
        const int rows = (int) MIN((int64_t) GGML_QPANEL_ROWS, nr - g*GGML_QPANEL_ROWS);
        for (int64_t c = 0; c < nc; c++) {
            const block_q8_0 * yb = (const block_q8_0 *) y[c];
            for (int j = 0; j < rows; j++) {
                float sum = 0.0f;
                for (int64_t b = 0; b < nb; b++) {
                    const uint8_t * u = grp + (size_t) b * Q4P_UNIT;
                    ggml_half dh;
                    memcpy(&dh, u + 2*j, sizeof(dh));
                    int acc = 0;
                    for (int q = 0; q < 4; q++) {
                        for (int e = 0; e < 4; e++) {
                            const uint8_t v = u[32 + 64*q + 4*j + e];
                            acc += ((v & 0x0F) - 8) * yb[b].qs[4*q + e] + ((v >> 4) - 8) * yb[b].qs[16 + 4*q + e];
                        }
                    }
                    sum += GGML_FP16_TO_FP32(dh) * GGML_FP16_TO_FP32(yb[b].d) * (float) acc;
                }
                s[c][g*GGML_QPANEL_ROWS + j] = sum;
            }
        }
    }
}

void ggml_cpu_add_kernels_panel_q4_0(struct ggml_cpu_kernel_config * cfg) {
    // the portable kernel is slower than the row dot on the usual layout: the
    // fast configuration gets a vector kernel or none (and then no panels)
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_Q4_0, dot_panels, q4_0p_dot__scalar, "scalar");
}
