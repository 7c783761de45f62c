// ggml-quants-tq.c: the ternary formats TQ1_0 and TQ2_0.
//
// Every value of a block of 256 is -1, 0 or 1 times the block's absmax
// (rounded half away from zero, as upstream's lroundf does). TQ2_0 stores
// each as 2 bits; TQ1_0 packs 5 trits per byte as a fixed-point fraction of
// 3^5, so that the trits come back by multiplying by 3 (see ggml-common.h).

#include "ggml-quants.h"

static float tq_absmax(const float * x) {
    float amax = 0.0f;
    for (int j = 0; j < QK_K; j++) {
        amax = amax > fabsf(x[j]) ? amax : fabsf(x[j]);
    }
    return amax;
}

// -1, 0, 1 -> 0, 1, 2
static int tq_trit(float v) {
    return (int) lroundf(v) + 1;
}

// t (a base-3 number of 5 trits) as the byte ceil(t * 256 / 243)
static uint8_t tq_pack5(unsigned t) {
    return (uint8_t)((t * 256u + 242u) / 243u);
}

void quantize_row_tq1_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    block_tq1_0 * y = (block_tq1_0 *) vy;
    for (int64_t b = 0; b < k / QK_K; b++, x += QK_K) {
        const float d  = tq_absmax(x);
        const float id = d != 0.0f ? 1.0f/d : 0.0f;
        y[b].d = GGML_FP32_TO_FP16(d);
        for (int m = 0; m < 32; m++) {
            unsigned t = 0;
            for (int n = 0; n < 5; n++) {
                t = 3*t + (unsigned) tq_trit(x[m + 32*n] * id);
            }
            y[b].qs[m] = tq_pack5(t);
        }
        for (int m = 0; m < 16; m++) {
            unsigned t = 0;
            for (int n = 0; n < 5; n++) {
                t = 3*t + (unsigned) tq_trit(x[160 + m + 16*n] * id);
            }
            y[b].qs[32 + m] = tq_pack5(t);
        }
        for (int j = 0; j < 4; j++) {
            unsigned t = 0;
            for (int m = 0; m < 4; m++) {
                t = 3*t + (unsigned) tq_trit(x[240 + j + 4*m] * id);
            }
            y[b].qh[j] = tq_pack5(3*t); // the first trit the most significant of five
        }
    }
}

// trit n (0 = most significant) of a packed byte, as -1, 0, 1
static int tq_unpack(uint8_t byte, int n) {
    static const uint8_t pow3[5] = { 1, 3, 9, 27, 81 };
    const uint8_t q = (uint8_t)(byte * pow3[n]);
    return ((q * 3) >> 8) - 1;
}

void ggml_tq1_0_values(const void * blk, int8_t * v) {
    const block_tq1_0 * b = (const block_tq1_0 *) blk;
    for (int n = 0; n < 5; n++) {
        for (int m = 0; m < 32; m++) {
            v[m + 32*n] = (int8_t) tq_unpack(b->qs[m], n);
        }
        for (int m = 0; m < 16; m++) {
            v[160 + m + 16*n] = (int8_t) tq_unpack(b->qs[32 + m], n);
        }
    }
    for (int m = 0; m < 4; m++) {
        for (int j = 0; j < 4; j++) {
            v[240 + j + 4*m] = (int8_t) tq_unpack(b->qh[j], m);
        }
    }
}

void ggml_tq2_0_values(const void * blk, int8_t * v) {
    const block_tq2_0 * b = (const block_tq2_0 *) blk;
    for (int p = 0; p < QK_K; p++) {
        v[p] = (int8_t)(((b->qs[32*(p/128) + p%32] >> (2*((p/32)%4))) & 3) - 1);
    }
}

void dequantize_row_tq1_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    const block_tq1_0 * x = (const block_tq1_0 *) vx;
    int8_t v[QK_K];
    for (int64_t b = 0; b < k / QK_K; b++) {
        const float d = GGML_FP16_TO_FP32(x[b].d);
        ggml_tq1_0_values(&x[b], v);
        for (int p = 0; p < QK_K; p++) {
            y[b*QK_K + p] = (float) v[p] * d;
        }
    }
}

void quantize_row_tq2_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    block_tq2_0 * y = (block_tq2_0 *) vy;
    for (int64_t b = 0; b < k / QK_K; b++, x += QK_K) {
        const float d  = tq_absmax(x);
        const float id = d != 0.0f ? 1.0f/d : 0.0f;
        y[b].d = GGML_FP32_TO_FP16(d);
        for (int h = 0; h < QK_K/128; h++) {
            for (int m = 0; m < 32; m++) {
                unsigned q = 0;
                for (int n = 0; n < 4; n++) {
                    q |= (unsigned)(tq_trit(x[128*h + m + 32*n] * id) & 3) << (2*n);
                }
                y[b].qs[32*h + m] = (uint8_t) q;
            }
        }
    }
}

void dequantize_row_tq2_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    const block_tq2_0 * x = (const block_tq2_0 *) vx;
    int8_t v[QK_K];
    for (int64_t b = 0; b < k / QK_K; b++) {
        const float d = GGML_FP16_TO_FP32(x[b].d);
        ggml_tq2_0_values(&x[b], v);
        for (int p = 0; p < QK_K; p++) {
            y[b*QK_K + p] = (float) v[p] * d;
        }
    }
}

size_t quantize_tq1_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_UNUSED(imatrix);
    quantize_row_tq1_0_ref(src, dst, nrows*n_per_row);
    return (size_t) nrows * ggml_row_size(GGML_TYPE_TQ1_0, n_per_row);
}

size_t quantize_tq2_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_UNUSED(imatrix);
    quantize_row_tq2_0_ref(src, dst, nrows*n_per_row);
    return (size_t) nrows * ggml_row_size(GGML_TYPE_TQ2_0, n_per_row);
}
