// panel-q4_K.c: the portable dot product of Q4_K panels (panels.h) and Q8_K
// activation rows; the reference the vector kernels follow
// (arch/x86/panel-q4_K-avx512.c): per block the integer sum of each 32-value
// sub-block's code products times its 6-bit scale, and the integer sum of
// each sub-block's activations times its 6-bit min; the first scaled by
// d x dy, the second by dmin x dy and taken off; the blocks summed in order
// in float.

#include "kernels/panels.h"
#include "kernels/kernel-config.h"
#include "ggml-impl.h"

#define Q4KP_UNIT (GGML_QPANEL_ROWS * sizeof(block_q4_K))

// sub-block i's scale and min from a block's 12 packed bytes
static void q4kp_scale_min(const uint8_t * q, int i, int * sc, int * m) {
    if (i < 4) {
        *sc = q[i] & 63;
        *m  = q[i + 4] & 63;
    } else {
        *sc = (q[i + 4] & 0x0F) | ((q[i - 4] >> 6) << 4);
        *m  = (q[i + 4] >> 4)   | ((q[i] >> 6) << 4);
    }
}

void q4_Kp_dot__scalar(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                       const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc) {
    (void) ys;
    int nh = 0, nw = 0;
    ggml_qpanel_form(GGML_TYPE_Q4_K, &nh, &nw);
    for (int64_t g = 0; g < ng; g++) {
        const uint8_t * grp = (const uint8_t *) panels + (size_t) g * (size_t) nb * Q4KP_UNIT;
        const int rows = (int) MIN((int64_t) GGML_QPANEL_ROWS, nr - g*GGML_QPANEL_ROWS);
        for (int64_t c = 0; c < nc; c++) {
            const block_q8_K * yb = (const block_q8_K *) y[c];
            for (int j = 0; j < rows; j++) {
                float sum = 0.0f;
                for (int64_t b = 0; b < nb; b++) {
                    block_q4_K x;
                    ggml_qpanel_get(nh, nw, grp + (size_t) b * Q4KP_UNIT, j, &x);
                    int32_t isum = 0, msum = 0;
                    for (int i = 0; i < QK_K / 32; i++) {
                        int sc, m;
                        q4kp_scale_min(x.scales, i, &sc, &m);
                        // sub-block i: the low (even i) or high (odd i) nibbles of qs[32 (i / 2) ..]
                        const uint8_t * qs = x.qs + 32*(i/2);
                        const int8_t  * yq = yb[b].qs + 32*i;
                        int32_t dot = 0;
                        for (int e = 0; e < 32; e++) {
                            dot += ((i % 2 == 0 ? qs[e] : qs[e] >> 4) & 0x0F) * yq[e];
                        }
                        isum += sc * dot;
                        msum += m * (yb[b].bsums[2*i] + yb[b].bsums[2*i + 1]);
                    }
                    const float d    = GGML_FP16_TO_FP32(x.d)    * yb[b].d;
                    const float dmin = GGML_FP16_TO_FP32(x.dmin) * yb[b].d;
                    sum = fmaf((float) isum, d, sum);
                    sum = fmaf(-(float) msum, dmin, sum);
                }
                s[c][g*GGML_QPANEL_ROWS + j] = sum;
            }
        }
    }
}

void ggml_cpu_add_kernels_panel_q4_K(struct ggml_cpu_kernel_config * cfg) {
    // as for Q4_0: the use_ref configuration only (panel-q4_0.c)
    GGML_CPU_SET_KERNEL(cfg->ref, GGML_TYPE_Q4_K, dot_panels, q4_Kp_dot__scalar, "scalar");
}
