// ggml-quants.c: reference quantization of the block formats.
//
// These scalar routines define the formats: each picks the block scale the
// way upstream ggml does and rounds the same way, so that the bytes written
// are identical to upstream's for the same input.

#include "ggml-quants.h"

#include <float.h>

//
// quantize: fp32 -> blocks
//

void quantize_row_q4_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK4_0 == 0);
    block_q4_0 * y = (block_q4_0 *) vy;
    const int64_t nb = k / QK4_0;

    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK4_0;

        // the value of largest magnitude, with its sign, maps to -8
        float amax = 0.0f;
        float max  = 0.0f;
        for (int j = 0; j < QK4_0; j++) {
            const float v = xb[j];
            if (amax < fabsf(v)) {
                amax = fabsf(v);
                max  = v;
            }
        }
        const float d  = max / -8;
        const float id = d ? 1.0f/d : 0.0f;

        y[i].d = GGML_FP32_TO_FP16(d);
        for (int j = 0; j < QK4_0/2; j++) {
            const float x0 = xb[j]           * id;
            const float x1 = xb[QK4_0/2 + j] * id;
            const uint8_t q0 = (uint8_t) MIN(15, (int8_t)(x0 + 8.5f));
            const uint8_t q1 = (uint8_t) MIN(15, (int8_t)(x1 + 8.5f));
            y[i].qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
    }
}

void quantize_row_q4_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK4_1 == 0);
    block_q4_1 * y = (block_q4_1 *) vy;
    const int64_t nb = k / QK4_1;

    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK4_1;

        float min =  FLT_MAX;
        float max = -FLT_MAX;
        for (int j = 0; j < QK4_1; j++) {
            min = xb[j] < min ? xb[j] : min;
            max = xb[j] > max ? xb[j] : max;
        }
        const float d  = (max - min) / ((1 << 4) - 1);
        const float id = d ? 1.0f/d : 0.0f;

        y[i].d = GGML_FP32_TO_FP16(d);
        y[i].m = GGML_FP32_TO_FP16(min);
        for (int j = 0; j < QK4_1/2; j++) {
            const float x0 = (xb[j]           - min) * id;
            const float x1 = (xb[QK4_1/2 + j] - min) * id;
            const uint8_t q0 = (uint8_t) MIN(15, (int8_t)(x0 + 0.5f));
            const uint8_t q1 = (uint8_t) MIN(15, (int8_t)(x1 + 0.5f));
            y[i].qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
    }
}

void quantize_row_q5_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK5_0 == 0);
    block_q5_0 * y = (block_q5_0 *) vy;
    const int64_t nb = k / QK5_0;

    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK5_0;

        float amax = 0.0f;
        float max  = 0.0f;
        for (int j = 0; j < QK5_0; j++) {
            const float v = xb[j];
            if (amax < fabsf(v)) {
                amax = fabsf(v);
                max  = v;
            }
        }
        const float d  = max / -16;
        const float id = d ? 1.0f/d : 0.0f;

        y[i].d = GGML_FP32_TO_FP16(d);

        uint32_t qh = 0;
        for (int j = 0; j < QK5_0/2; j++) {
            const float x0 = xb[j]           * id;
            const float x1 = xb[QK5_0/2 + j] * id;
            const uint8_t q0 = (uint8_t) MIN(31, (int8_t)(x0 + 16.5f));
            const uint8_t q1 = (uint8_t) MIN(31, (int8_t)(x1 + 16.5f));
            y[i].qs[j] = (uint8_t)((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= ((uint32_t)(q0 & 0x10) >> 4) << j;
            qh |= ((uint32_t)(q1 & 0x10) >> 4) << (j + QK5_0/2);
        }
        memcpy(y[i].qh, &qh, sizeof(qh));
    }
}

void quantize_row_q5_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK5_1 == 0);
    block_q5_1 * y = (block_q5_1 *) vy;
    const int64_t nb = k / QK5_1;

    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK5_1;

        float min =  FLT_MAX;
        float max = -FLT_MAX;
        for (int j = 0; j < QK5_1; j++) {
            min = xb[j] < min ? xb[j] : min;
            max = xb[j] > max ? xb[j] : max;
        }
        const float d  = (max - min) / ((1 << 5) - 1);
        const float id = d ? 1.0f/d : 0.0f;

        y[i].d = GGML_FP32_TO_FP16(d);
        y[i].m = GGML_FP32_TO_FP16(min);

        uint32_t qh = 0;
        for (int j = 0; j < QK5_1/2; j++) {
            const float x0 = (xb[j]           - min) * id;
            const float x1 = (xb[QK5_1/2 + j] - min) * id;
            const uint8_t q0 = (uint8_t)(x0 + 0.5f);
            const uint8_t q1 = (uint8_t)(x1 + 0.5f);
            y[i].qs[j] = (uint8_t)((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= ((uint32_t)(q0 & 0x10) >> 4) << j;
            qh |= ((uint32_t)(q1 & 0x10) >> 4) << (j + QK5_1/2);
        }
        memcpy(y[i].qh, &qh, sizeof(qh));
    }
}

void quantize_row_q8_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK8_0 == 0);
    block_q8_0 * y = (block_q8_0 *) vy;
    const int64_t nb = k / QK8_0;

    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK8_0;

        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++) {
            amax = MAX(amax, fabsf(xb[j]));
        }
        const float d  = amax / ((1 << 7) - 1);
        const float id = d ? 1.0f/d : 0.0f;

        y[i].d = GGML_FP32_TO_FP16(d);
        for (int j = 0; j < QK8_0; j++) {
            y[i].qs[j] = (int8_t) roundf(xb[j] * id);
        }
    }
}

void quantize_row_q8_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK8_1 == 0);
    block_q8_1 * y = (block_q8_1 *) vy;
    const int64_t nb = k / QK8_1;

    for (int64_t i = 0; i < nb; i++) {
        const float * xb = x + i*QK8_1;

        float amax = 0.0f;
        for (int j = 0; j < QK8_1; j++) {
            amax = MAX(amax, fabsf(xb[j]));
        }
        const float d  = amax / ((1 << 7) - 1);
        const float id = d ? 1.0f/d : 0.0f;

        y[i].d = GGML_FP32_TO_FP16(d);

        int sum = 0;
        for (int j = 0; j < QK8_1/2; j++) {
            const int8_t q0 = (int8_t) roundf(xb[j]           * id);
            const int8_t q1 = (int8_t) roundf(xb[QK8_1/2 + j] * id);
            y[i].qs[j]           = q0;
            y[i].qs[QK8_1/2 + j] = q1;
            sum += q0 + q1;
        }
        y[i].s = GGML_FP32_TO_FP16((float) sum * d);
    }
}

//
// dequantize: blocks -> fp32
//

void dequantize_row_q4_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK4_0 == 0);
    const block_q4_0 * x = (const block_q4_0 *) vx;
    const int64_t nb = k / QK4_0;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int j = 0; j < QK4_0/2; j++) {
            const int q0 = (x[i].qs[j] & 0x0F) - 8;
            const int q1 = (x[i].qs[j] >>   4) - 8;
            y[i*QK4_0 + j]           = (float) q0 * d;
            y[i*QK4_0 + j + QK4_0/2] = (float) q1 * d;
        }
    }
}

void dequantize_row_q4_1(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK4_1 == 0);
    const block_q4_1 * x = (const block_q4_1 *) vx;
    const int64_t nb = k / QK4_1;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        const float m = GGML_FP16_TO_FP32(x[i].m);
        for (int j = 0; j < QK4_1/2; j++) {
            const int q0 = x[i].qs[j] & 0x0F;
            const int q1 = x[i].qs[j] >>   4;
            y[i*QK4_1 + j]           = (float) q0 * d + m;
            y[i*QK4_1 + j + QK4_1/2] = (float) q1 * d + m;
        }
    }
}

void dequantize_row_q5_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK5_0 == 0);
    const block_q5_0 * x = (const block_q5_0 *) vx;
    const int64_t nb = k / QK5_0;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < QK5_0/2; j++) {
            const int h0 = (int)((qh >> j)                 & 1u) << 4;
            const int h1 = (int)((qh >> (j + QK5_0/2))     & 1u) << 4;
            const int q0 = ((x[i].qs[j] & 0x0F) | h0) - 16;
            const int q1 = ((x[i].qs[j] >>   4) | h1) - 16;
            y[i*QK5_0 + j]           = (float) q0 * d;
            y[i*QK5_0 + j + QK5_0/2] = (float) q1 * d;
        }
    }
}

void dequantize_row_q5_1(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK5_1 == 0);
    const block_q5_1 * x = (const block_q5_1 *) vx;
    const int64_t nb = k / QK5_1;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        const float m = GGML_FP16_TO_FP32(x[i].m);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < QK5_1/2; j++) {
            const int h0 = (int)((qh >> j)             & 1u) << 4;
            const int h1 = (int)((qh >> (j + QK5_1/2)) & 1u) << 4;
            const int q0 = (x[i].qs[j] & 0x0F) | h0;
            const int q1 = (x[i].qs[j] >>   4) | h1;
            y[i*QK5_1 + j]           = (float) q0 * d + m;
            y[i*QK5_1 + j + QK5_1/2] = (float) q1 * d + m;
        }
    }
}

void dequantize_row_q8_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK8_0 == 0);
    const block_q8_0 * x = (const block_q8_0 *) vx;
    const int64_t nb = k / QK8_0;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int j = 0; j < QK8_0; j++) {
            y[i*QK8_0 + j] = (float) x[i].qs[j] * d;
        }
    }
}

void dequantize_row_q8_1(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK8_1 == 0);
    const block_q8_1 * x = (const block_q8_1 *) vx;
    const int64_t nb = k / QK8_1;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int j = 0; j < QK8_1; j++) {
            y[i*QK8_1 + j] = (float) x[i].qs[j] * d;
        }
    }
}
