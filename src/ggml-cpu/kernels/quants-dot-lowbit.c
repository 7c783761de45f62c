// quants-dot-lowbit.c: dot products of Q1_0, Q2_0 and NVFP4 with Q8_0
// activation rows; portable C only.
//
// A weight block is decoded to int8 values (+-1; q - 1; the doubled E2M1
// table) with one float scale per 16 values (the fp16 d for Q1_0 and Q2_0,
// half the UE4M3 sub-block scale for NVFP4), so that value j is
// scale[j/16] * v[j]. Each 16 values meet half a Q8_0 block: an exact int32
// sum, times both scales.

#include "kernels/quants-dot.h"
#include "kernels/kernel-config.h"
#include "simd/quants-simd.h"
#include "ggml-quants.h"

// the block of `type` at x (blck values) as scale[j/16] * v[j]
static void lowbit_decode(enum ggml_type type, const void * x, int8_t * v, float * scale) {
    switch (type) {
        case GGML_TYPE_Q1_0: {
            const block_q1_0 * b = x;
            for (int j = 0; j < QK1_0; j++) v[j] = (int8_t) ((b->qs[j/8] >> (j%8)) & 1 ? 1 : -1);
            for (int s = 0; s < QK1_0/16; s++) scale[s] = GGML_FP16_TO_FP32(b->d);
            break;
        }
        case GGML_TYPE_Q2_0: {
            const block_q2_0 * b = x;
            for (int j = 0; j < QK2_0; j++) v[j] = (int8_t) (((b->qs[j/4] >> 2*(j%4)) & 3) - 1);
            for (int s = 0; s < QK2_0/16; s++) scale[s] = GGML_FP16_TO_FP32(b->d);
            break;
        }
        case GGML_TYPE_NVFP4: {
            const block_nvfp4 * b = x;
            const int8_t * values = ggml_kvalues_mxfp4();
            for (int s = 0; s < QK_NVFP4/QK_NVFP4_SUB; s++) {
                scale[s] = ggml_ue4m3_to_fp32_half(b->d[s]);
                for (int j = 0; j < QK_NVFP4_SUB/2; j++) {
                    const uint8_t q = b->qs[s*(QK_NVFP4_SUB/2) + j];
                    v[16*s + j]     = values[q & 15];
                    v[16*s + j + 8] = values[q >> 4];
                }
            }
            break;
        }
        default:
            GGML_ABORT("lowbit_decode: type %s is not one of q1_0, q2_0, nvfp4", ggml_type_name(type));
    }
}

static float lowbit_dot_row(enum ggml_type type, int64_t n, const char * x, const void * yv) {
    const block_q8_0 * y = (const block_q8_0 *) yv;
    const int64_t blck = ggml_blck_size(type);
    const size_t bs = ggml_type_size(type);
    float sum = 0.0f;
    for (int64_t b = 0; b < n / blck; b++) {
        // zeroed: some compilers (gcc 12 for s390x) cannot see that the decode writes every value
        int8_t v[QK1_0] = { 0 };
        float scale[QK1_0/16] = { 0 };
        lowbit_decode(type, x + b*bs, v, scale);
        for (int s = 0; s < blck/16; s++) {
            const block_q8_0 * yb = y + (b*blck + 16*s) / QK8_0;
            const int8_t * q8 = yb->qs + (16*s) % QK8_0;
            int32_t isum = 0;
            for (int j = 0; j < 16; j++) {
                isum += v[16*s + j] * q8[j];
            }
            sum += scale[s] * GGML_FP16_TO_FP32(yb->d) * (float) isum;
        }
    }
    return sum;
}

GGML_CPU_DEFINE_DOT_ROWS(q1_0_dot__scalar, qd_rows_by_row, lowbit_dot_row, GGML_TYPE_Q1_0)
GGML_CPU_DEFINE_DOT_ROWS(q2_0_dot__scalar, qd_rows_by_row, lowbit_dot_row, GGML_TYPE_Q2_0)
GGML_CPU_DEFINE_DOT_ROWS(nvfp4_dot__scalar, qd_rows_by_row, lowbit_dot_row, GGML_TYPE_NVFP4)

void ggml_cpu_add_kernels_quants_dot_lowbit(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q1_0, dot_rows, q1_0_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_Q1_0, dot_rows, q1_0_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q2_0, dot_rows, q2_0_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_Q2_0, dot_rows, q2_0_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_NVFP4, dot_rows, nvfp4_dot__scalar, "scalar");
    GGML_CPU_SET_KERNEL(cfg->ref,  GGML_TYPE_NVFP4, dot_rows, nvfp4_dot__scalar, "scalar");
}

void ggml_vec_dot_q1_0_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q1_0, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_q2_0_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                            const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_Q2_0, n, s, bs, x, bx, y, by, nrc);
}

void ggml_vec_dot_nvfp4_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                             const void * GGML_RESTRICT y, size_t by, int nrc) {
    ggml_cpu_vec_dot_quant(GGML_TYPE_NVFP4, n, s, bs, x, bx, y, by, nrc);
}
