// cpu-convert.c: the row conversions of ggml-cpu.h, on the vector paths of vec.h.

#include "simd/vec.h"
#include "simd/vec-convert.h"

void ggml_cpu_fp32_to_fp32(const float * x, float * y, int64_t n) {
    memcpy(y, x, (size_t) n * sizeof(float));
}

void ggml_cpu_fp32_to_i32(const float * x, int32_t * y, int64_t n) {
    ggml_vec_fp32_to_i32(n, x, y); // truncates toward zero, as ggml_cast documents
}

void ggml_cpu_fp32_to_fp16(const float * x, ggml_fp16_t * y, int64_t n) {
    ggml_vec_fp32_to_fp16(n, x, y);
}

void ggml_cpu_fp16_to_fp32(const ggml_fp16_t * x, float * y, int64_t n) {
    ggml_vec_fp16_to_fp32(n, x, y);
}

void ggml_cpu_fp32_to_bf16(const float * x, ggml_bf16_t * y, int64_t n) {
    ggml_vec_fp32_to_bf16(n, x, y);
}

void ggml_cpu_bf16_to_fp32(const ggml_bf16_t * x, float * y, int64_t n) {
    ggml_vec_bf16_to_fp32(n, x, y);
}
