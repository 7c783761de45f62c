#pragma once

//
// quants-dot.h: the activation quantizers and the row dot products of the
// CPU backend's matrix products.
//
// A weight row of type T meets an activation row of T's vec_dot_type
// (ggml_get_type_traits_cpu): Q8_0 for Q4_0, Q5_0 and Q8_0, Q8_1 for Q4_1 and
// Q5_1, Q8_K for the K-quants and IQ4_XS, Q8_0 for IQ4_NL and MXFP4, the type
// itself for F16 and BF16. The quantizers here write the same
// bytes as the reference quantizers of ggml-quants.c, only faster.
//
// Every kernel has a vector path (AVX-512 or AVX2, with VNNI where the build
// has it; NEON in arch/arm) and a portable path (the *_ref functions and the
// portable build); the two differ only in the order of the float sums.
//

#include "simd/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

// fast fp32 -> Q8_0 / Q8_1 (k a multiple of 32) / Q8_K (of 256), bytes
// identical to quantize_row_q8_*_ref
void ggml_cpu_quantize_row_q8_0(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
void ggml_cpu_quantize_row_q8_1(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);
void ggml_cpu_quantize_row_q8_K(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);

// Dot products of nr weight rows (x, x + bx, ...) of `type` with nc
// activation rows y[c] of type's vec_dot_type, n values each: s[c][r]. The
// rows are streamed once, several at a time, for a few columns at a time (the
// kernel of matrix-vector products). Each s[c][r] is computed the same way
// whatever nr and nc are. F32, F16 and BF16 rows take F32 activation rows here
// (already rounded to F16 / BF16 by the caller where the vec_dot_type asks for it).
typedef void (*ggml_cpu_dot_rows_t)(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,
                                    const void * const * y, float * const * s, int64_t nc);

// Defines the dot_rows kernel `name` (static; function attributes such as a
// target go before the macro) as the one call rows(args..., n, x, bx, nr, y,
// s, nc) of an always-inlined rows function: the kernels of a file differ
// only in the constant arguments they give it (a block type, its decoder).
#define GGML_CPU_DEFINE_DOT_ROWS(name, rows, ...)                                                       \
    static void name(int64_t n, const void * GGML_RESTRICT x, size_t bx, int64_t nr,                   \
                     const void * const * y, float * const * s, int64_t nc) {                          \
        rows(__VA_ARGS__, n, x, bx, nr, y, s, nc);                                                      \
    }

// The kernel of each weight type, and of its portable path (use_ref), is an
// entry of the kernel configuration (kernel-config.h); each file of row dots
// adds its own there.

// The ggml_vec_dot_t of a block-quantized type (nrc must be 1, n a multiple of
// the block): one weight row x against one activation row y through the
// type's dot_rows kernel; the ggml_vec_dot_<type>_<vec_dot_type> below are it
// for each type.
void ggml_cpu_vec_dot_quant(enum ggml_type type, int n, float * GGML_RESTRICT s, size_t bs,
                            const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);

// ggml_vec_dot_t kernels of the type traits (nrc must be 1)
void ggml_vec_dot_f32_row (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_f16_row (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_bf16_row(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q4_0_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q4_1_q8_1(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q5_0_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q5_1_q8_1(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q8_0_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q2_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q3_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q4_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q5_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q6_K_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_iq4_nl_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_iq4_xs_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_mxfp4_q8_0 (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_tq1_0_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_tq2_0_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_iq2_xxs_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_iq2_xs_q8_K (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_iq2_s_q8_K  (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_iq3_xxs_q8_K(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_iq3_s_q8_K  (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_iq1_s_q8_K  (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_iq1_m_q8_K  (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q1_0_q8_0 (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q2_0_q8_0 (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_nvfp4_q8_0(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);
void ggml_vec_dot_q8_1_q8_1(int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx, const void * GGML_RESTRICT y, size_t by, int nrc);

#ifdef __cplusplus
}
#endif
