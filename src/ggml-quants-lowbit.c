// ggml-quants-lowbit.c: the small-block formats Q1_0 (signs under one fp16
// scale per 128), Q2_0 (levels -1, 0, 1, 2 under one fp16 scale per 64) and
// NVFP4 (E2M1 values under a UE4M3 scale per 16, four sub-blocks per 64).
//
// Upstream's quantizers are direct (no search, no use of an importance
// matrix): Q1_0's scale is the mean |x|, Q2_0's the absmax with codes
// round(x/d) (half away from zero) + 1 clamped, NVFP4's scale absmax/6
// rounded to UE4M3 and each code the nearest table value (the first of
// equals). These are written out here with the same float operations, so
// that the bytes are upstream's.

#include "ggml-quants.h"

// UE4M3 (no sign, 4 exponent bits biased by 7, 3 mantissa bits) as half its
// value, matching the doubled E2M1 table; 0 and 0x7f read as 0
float ggml_ue4m3_to_fp32_half(uint8_t x) {
    if (x == 0 || x == 0x7f) {
        return 0.0f;
    }
    const int e = (x >> 3) & 15, m = x & 7;
    const float v = e == 0 ? ldexpf((float) m, -9) : ldexpf(1.0f + (float) m / 8.0f, e - 7);
    return v * 0.5f;
}

// x > 0 to the nearest UE4M3 up to 448 by its fp32 bits (the mantissa's
// fourth bit rounds up); subnormals as round(x * 512); 0 for x <= 0 or NaN
uint8_t ggml_fp32_to_ue4m3(float x) {
    if (!(x > 0.0f)) {
        return 0;
    }
    x = x > 448.0f ? 448.0f : x;
    uint32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    int e = (int) ((bits >> 23) & 0xff) - 127 + 7;
    if (e <= 0) {
        const int m = (int) (x * 512.0f + 0.5f);
        return (uint8_t) (m < 1 ? 0 : m > 7 ? 7 : m);
    }
    if (e >= 15) {
        return 0x7e;
    }
    int m = (int) ((bits >> 20) & 7) + (int) ((bits >> 19) & 1);
    if (m > 7) {
        m = 0;
        if (++e >= 15) {
            return 0x7e;
        }
    }
    return (uint8_t) ((e << 3) | m);
}

void quantize_row_q1_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    block_q1_0 * y = vy;
    for (int64_t i = 0; i < k/QK1_0; i++) {
        const float * xb = x + i*QK1_0;
        float sum_abs = 0.0f;
        for (int j = 0; j < QK1_0; j++) {
            sum_abs += fabsf(xb[j]);
        }
        y[i].d = GGML_FP32_TO_FP16(sum_abs / QK1_0);
        memset(y[i].qs, 0, sizeof(y[i].qs));
        for (int j = 0; j < QK1_0; j++) {
            if (xb[j] >= 0.0f) {
                y[i].qs[j/8] |= (uint8_t) (1 << (j%8));
            }
        }
    }
}

void quantize_row_q2_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    block_q2_0 * y = vy;
    for (int64_t i = 0; i < k/QK2_0; i++) {
        const float * xb = x + i*QK2_0;
        float amax = 0.0f;
        for (int j = 0; j < QK2_0; j++) {
            amax = fabsf(xb[j]) > amax ? fabsf(xb[j]) : amax;
        }
        const float id = amax > 0.0f ? 1.0f / amax : 0.0f;
        y[i].d = GGML_FP32_TO_FP16(amax);
        memset(y[i].qs, 0, sizeof(y[i].qs));
        for (int j = 0; j < QK2_0; j++) {
            int q = (int) roundf(xb[j] * id) + 1;
            q = q < 0 ? 0 : q > 3 ? 3 : q;
            y[i].qs[j/4] |= (uint8_t) (q << 2*(j%4));
        }
    }
}

// the first table index of least |value*d - x|
static int nvfp4_nearest(float x, float d) {
    const int8_t * values = ggml_kvalues_mxfp4();
    int best = 0;
    float best_err = fabsf(values[0]*d - x);
    for (int i = 1; i < 16; i++) {
        const float err = fabsf(values[i]*d - x);
        if (err < best_err) {
            best = i;
            best_err = err;
        }
    }
    return best;
}

void quantize_row_nvfp4_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    block_nvfp4 * y = vy;
    for (int64_t i = 0; i < k/QK_NVFP4; i++) {
        for (int s = 0; s < QK_NVFP4/QK_NVFP4_SUB; s++) {
            const float * xb = x + i*QK_NVFP4 + s*QK_NVFP4_SUB;
            float amax = 0.0f;
            for (int j = 0; j < QK_NVFP4_SUB; j++) {
                amax = amax < fabsf(xb[j]) ? fabsf(xb[j]) : amax;
            }
            y[i].d[s] = ggml_fp32_to_ue4m3(amax / 6.0f);
            const float d = ggml_ue4m3_to_fp32_half(y[i].d[s]);
            for (int j = 0; j < QK_NVFP4_SUB/2; j++) {
                const int lo = nvfp4_nearest(xb[j], d);
                const int hi = nvfp4_nearest(xb[j + QK_NVFP4_SUB/2], d);
                y[i].qs[s*(QK_NVFP4_SUB/2) + j] = (uint8_t) (lo | (hi << 4));
            }
        }
    }
}

void dequantize_row_q1_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_q1_0 * x = vx;
    for (int64_t i = 0; i < k/QK1_0; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int j = 0; j < QK1_0; j++) {
            y[i*QK1_0 + j] = (x[i].qs[j/8] >> (j%8)) & 1 ? d : -d;
        }
    }
}

void dequantize_row_q2_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_q2_0 * x = vx;
    for (int64_t i = 0; i < k/QK2_0; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int j = 0; j < QK2_0; j++) {
            y[i*QK2_0 + j] = (float) (((x[i].qs[j/4] >> 2*(j%4)) & 3) - 1) * d;
        }
    }
}

void dequantize_row_nvfp4(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_nvfp4 * x = vx;
    const int8_t * values = ggml_kvalues_mxfp4();
    for (int64_t i = 0; i < k/QK_NVFP4; i++) {
        for (int s = 0; s < QK_NVFP4/QK_NVFP4_SUB; s++) {
            const float d = ggml_ue4m3_to_fp32_half(x[i].d[s]);
            float * yb = y + i*QK_NVFP4 + s*QK_NVFP4_SUB;
            for (int j = 0; j < QK_NVFP4_SUB/2; j++) {
                const uint8_t q = x[i].qs[s*(QK_NVFP4_SUB/2) + j];
                yb[j]                  = values[q & 15]*d;
                yb[j + QK_NVFP4_SUB/2] = values[q >> 4]*d;
            }
        }
    }
}

// imatrix is not used, as upstream
static size_t lowbit_rows(enum ggml_type type, void (*quantize)(const float *, void *, int64_t), const float * src,
                          void * dst, int64_t nrows, int64_t n_per_row) {
    quantize(src, dst, nrows*n_per_row);
    return (size_t) nrows * ggml_row_size(type, n_per_row);
}

size_t quantize_q1_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_UNUSED(imatrix);
    return lowbit_rows(GGML_TYPE_Q1_0, quantize_row_q1_0_ref, src, dst, nrows, n_per_row);
}

size_t quantize_q2_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_UNUSED(imatrix);
    return lowbit_rows(GGML_TYPE_Q2_0, quantize_row_q2_0_ref, src, dst, nrows, n_per_row);
}

size_t quantize_nvfp4(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_UNUSED(imatrix);
    return lowbit_rows(GGML_TYPE_NVFP4, quantize_row_nvfp4_ref, src, dst, nrows, n_per_row);
}
