// ggml-fp16.c: scalar and row conversions between fp32 and fp16 / bf16.
// Exact, round to nearest even (see ggml-impl.h); the CPU backend has
// vectorised versions that give the same results.

#include "ggml-impl.h"

float ggml_fp16_to_fp32(ggml_fp16_t x) {
    return ggml_compute_fp16_to_fp32(x);
}

ggml_fp16_t ggml_fp32_to_fp16(float x) {
    return ggml_compute_fp32_to_fp16(x);
}

float ggml_bf16_to_fp32(ggml_bf16_t x) {
    return ggml_compute_bf16_to_fp32(x);
}

ggml_bf16_t ggml_fp32_to_bf16(float x) {
    return ggml_compute_fp32_to_bf16(x);
}

void ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggml_compute_fp16_to_fp32(x[i]);
    }
}

void ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggml_compute_fp32_to_fp16(x[i]);
    }
}

void ggml_bf16_to_fp32_row(const ggml_bf16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggml_compute_bf16_to_fp32(x[i]);
    }
}

void ggml_fp32_to_bf16_row_ref(const float * x, ggml_bf16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = ggml_compute_fp32_to_bf16(x[i]);
    }
}

void ggml_fp32_to_bf16_row(const float * x, ggml_bf16_t * y, int64_t n) {
    ggml_fp32_to_bf16_row_ref(x, y, n);
}
