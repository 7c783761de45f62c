// type-traits-cpu.c: ggml_get_type_traits_cpu, the CPU's conversions and dot
// products per type.
//
// vec_dot_type is the type a matrix product converts its F32 activations to
// before meeting weights of the type (upstream's choices): F32, F16 and BF16
// meet their own type, Q4_0 / Q5_0 / Q8_0 meet Q8_0, Q4_1 / Q5_1 meet Q8_1,
// the K-quants, IQ4_XS and the ternary types meet Q8_K, IQ4_NL and MXFP4 meet Q8_0.
// Types the CPU backend lacks have NULL members.

#include "kernels/quants-dot.h"
#include "ggml-quants.h"

static void tt_from_f32_f32(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    ggml_cpu_fp32_to_fp32(x, (float *) y, k);
}

static void tt_from_f32_f16(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    ggml_cpu_fp32_to_fp16(x, (ggml_fp16_t *) y, k);
}

static void tt_from_f32_bf16(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    ggml_cpu_fp32_to_bf16(x, (ggml_bf16_t *) y, k);
}

static void tt_from_f32_i32(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    ggml_cpu_fp32_to_i32(x, (int32_t *) y, k);
}

static const struct ggml_type_traits_cpu g_type_traits_cpu[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32] = {
        .from_float   = tt_from_f32_f32,
        .vec_dot      = ggml_vec_dot_f32_row,
        .vec_dot_type = GGML_TYPE_F32,
        .nrows        = 1,
    },
    [GGML_TYPE_F16] = {
        .from_float   = tt_from_f32_f16,
        .vec_dot      = ggml_vec_dot_f16_row,
        .vec_dot_type = GGML_TYPE_F16,
        .nrows        = 1,
    },
    [GGML_TYPE_BF16] = {
        .from_float   = tt_from_f32_bf16,
        .vec_dot      = ggml_vec_dot_bf16_row,
        .vec_dot_type = GGML_TYPE_BF16,
        .nrows        = 1,
    },
    [GGML_TYPE_Q4_0] = {
        .from_float   = quantize_row_q4_0_ref,
        .vec_dot      = ggml_vec_dot_q4_0_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows        = 1,
    },
    [GGML_TYPE_Q4_1] = {
        .from_float   = quantize_row_q4_1_ref,
        .vec_dot      = ggml_vec_dot_q4_1_q8_1,
        .vec_dot_type = GGML_TYPE_Q8_1,
        .nrows        = 1,
    },
    [GGML_TYPE_Q5_0] = {
        .from_float   = quantize_row_q5_0_ref,
        .vec_dot      = ggml_vec_dot_q5_0_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows        = 1,
    },
    [GGML_TYPE_Q5_1] = {
        .from_float   = quantize_row_q5_1_ref,
        .vec_dot      = ggml_vec_dot_q5_1_q8_1,
        .vec_dot_type = GGML_TYPE_Q8_1,
        .nrows        = 1,
    },
    [GGML_TYPE_Q8_0] = {
        .from_float   = ggml_cpu_quantize_row_q8_0,
        .vec_dot      = ggml_vec_dot_q8_0_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows        = 1,
    },
    [GGML_TYPE_Q8_1] = {
        // an activation format; the dot product is there for completeness (see quants-dot.c)
        .from_float   = ggml_cpu_quantize_row_q8_1,
        .vec_dot      = ggml_vec_dot_q8_1_q8_1,
        .vec_dot_type = GGML_TYPE_Q8_1,
        .nrows        = 1,
    },
    [GGML_TYPE_Q2_K] = {
        .from_float   = quantize_row_q2_K_ref,
        .vec_dot      = ggml_vec_dot_q2_K_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_Q3_K] = {
        .from_float   = quantize_row_q3_K_ref,
        .vec_dot      = ggml_vec_dot_q3_K_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_Q4_K] = {
        .from_float   = quantize_row_q4_K_ref,
        .vec_dot      = ggml_vec_dot_q4_K_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_Q5_K] = {
        .from_float   = quantize_row_q5_K_ref,
        .vec_dot      = ggml_vec_dot_q5_K_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_Q6_K] = {
        .from_float   = quantize_row_q6_K_ref,
        .vec_dot      = ggml_vec_dot_q6_K_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_IQ4_NL] = {
        .from_float   = quantize_row_iq4_nl_ref,
        .vec_dot      = ggml_vec_dot_iq4_nl_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows        = 1,
    },
    [GGML_TYPE_IQ4_XS] = {
        .from_float   = quantize_row_iq4_xs_ref,
        .vec_dot      = ggml_vec_dot_iq4_xs_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_MXFP4] = {
        .from_float   = quantize_row_mxfp4_ref,
        .vec_dot      = ggml_vec_dot_mxfp4_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows        = 1,
    },
    [GGML_TYPE_TQ1_0] = {
        .from_float   = quantize_row_tq1_0_ref,
        .vec_dot      = ggml_vec_dot_tq1_0_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_TQ2_0] = {
        .from_float   = quantize_row_tq2_0_ref,
        .vec_dot      = ggml_vec_dot_tq2_0_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_IQ2_XXS] = {
        .vec_dot      = ggml_vec_dot_iq2_xxs_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_IQ2_XS] = {
        .vec_dot      = ggml_vec_dot_iq2_xs_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_IQ2_S] = {
        .from_float   = quantize_row_iq2_s_ref,
        .vec_dot      = ggml_vec_dot_iq2_s_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_IQ3_XXS] = {
        .from_float   = quantize_row_iq3_xxs_ref,
        .vec_dot      = ggml_vec_dot_iq3_xxs_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_IQ3_S] = {
        .from_float   = quantize_row_iq3_s_ref,
        .vec_dot      = ggml_vec_dot_iq3_s_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_IQ1_S] = {
        .vec_dot      = ggml_vec_dot_iq1_s_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_IQ1_M] = {
        .vec_dot      = ggml_vec_dot_iq1_m_q8_K,
        .vec_dot_type = GGML_TYPE_Q8_K,
        .nrows        = 1,
    },
    [GGML_TYPE_Q1_0] = {
        .from_float   = quantize_row_q1_0_ref,
        .vec_dot      = ggml_vec_dot_q1_0_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows        = 1,
    },
    [GGML_TYPE_Q2_0] = {
        .from_float   = quantize_row_q2_0_ref,
        .vec_dot      = ggml_vec_dot_q2_0_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows        = 1,
    },
    [GGML_TYPE_NVFP4] = {
        .from_float   = quantize_row_nvfp4_ref,
        .vec_dot      = ggml_vec_dot_nvfp4_q8_0,
        .vec_dot_type = GGML_TYPE_Q8_0,
        .nrows        = 1,
    },
    [GGML_TYPE_Q8_K] = {
        // an activation format only, as upstream: no dot product of its own
        .from_float   = ggml_cpu_quantize_row_q8_K,
    },
    [GGML_TYPE_I32] = {
        .from_float   = tt_from_f32_i32,
    },
};

const struct ggml_type_traits_cpu * ggml_get_type_traits_cpu(enum ggml_type type) {
    GGML_ASSERT(type >= 0 && type < GGML_TYPE_COUNT);
    return &g_type_traits_cpu[type];
}
