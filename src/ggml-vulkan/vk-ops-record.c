// vk-ops-record.c: recording each op the device supports as a dispatch.
//
// Each op fills the push constants its shader declares (the structs below
// mirror the shaders' push_constant blocks field by field; every field is
// 32 bits) and picks the shader variant for its types. Strides are passed
// in elements of the array the shader reads (bytes for quantized rows);
// offsets are the tensor's distance from its binding's aligned start.

#include "vk-impl.h"

#include <math.h>

#define SRCS(...) ((const struct ggml_tensor * const[GGML_VK_MAX_BINDINGS - 1]) { __VA_ARGS__ })

static uint32_t u32(int64_t v) {
    return (uint32_t) v;
}

static uint32_t div_up(uint64_t n, uint32_t d) {
    return (uint32_t) ((n + d - 1) / d);
}

// stride i of t in units of unit bytes
static uint32_t stride(const struct ggml_tensor * t, int i, size_t unit) {
    return (uint32_t) (t->nb[i] / unit);
}

static int weight_index(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32:  return 0;
        case GGML_TYPE_F16:  return 1;
        case GGML_TYPE_BF16: return 2;
        case GGML_TYPE_Q4_0: return 3;
        case GGML_TYPE_Q4_1: return 4;
        case GGML_TYPE_Q5_0: return 5;
        case GGML_TYPE_Q5_1: return 6;
        case GGML_TYPE_Q8_0: return 7;
        case GGML_TYPE_Q2_K: return 8;
        case GGML_TYPE_Q3_K: return 9;
        case GGML_TYPE_Q4_K: return 10;
        case GGML_TYPE_Q5_K: return 11;
        case GGML_TYPE_Q6_K: return 12;
        case GGML_TYPE_IQ4_NL: return 13;
        case GGML_TYPE_IQ4_XS: return 14;
        case GGML_TYPE_MXFP4:  return 15;
        default: GGML_ABORT("ggml_vulkan: no shader for type %s", ggml_type_name(t));
    }
}

static int float_index(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32:  return 0;
        case GGML_TYPE_F16:  return 1;
        case GGML_TYPE_BF16: return 2;
        default: GGML_ABORT("ggml_vulkan: no shader for type %s", ggml_type_name(t));
    }
}

//
// MUL_MAT
//

struct pc_mul_mat {
    uint32_t K, M, ne02, ne03;
    uint32_t nb01, nb02, nb03;
    uint32_t N, ne12, ne13;
    uint32_t nb10, nb11, nb12, nb13;
    uint32_t nb1, nb2, nb3;
    uint32_t a_off, b_off, d_off;
    uint32_t ne11, ids_nb0, ids_nb1, ids_off; // MUL_MAT_ID
};

// the variants of one shader for every weight type, in the order of weight_index
#define WEIGHT_PIPES(kind) {                                                                                 \
    GGML_VK_PIPE_##kind##_F32, GGML_VK_PIPE_##kind##_F16, GGML_VK_PIPE_##kind##_BF16,                      \
    GGML_VK_PIPE_##kind##_Q4_0, GGML_VK_PIPE_##kind##_Q4_1, GGML_VK_PIPE_##kind##_Q5_0,                    \
    GGML_VK_PIPE_##kind##_Q5_1, GGML_VK_PIPE_##kind##_Q8_0,                                                \
    GGML_VK_PIPE_##kind##_Q2_K, GGML_VK_PIPE_##kind##_Q3_K, GGML_VK_PIPE_##kind##_Q4_K,                    \
    GGML_VK_PIPE_##kind##_Q5_K, GGML_VK_PIPE_##kind##_Q6_K,                                                \
    GGML_VK_PIPE_##kind##_IQ4_NL, GGML_VK_PIPE_##kind##_IQ4_XS, GGML_VK_PIPE_##kind##_MXFP4,              \
}
static const enum ggml_vk_pipe k_mul_mat_vec[]   = WEIGHT_PIPES(mul_mat_vec);
static const enum ggml_vk_pipe k_mul_mat_tiled[] = WEIGHT_PIPES(mul_mat_tiled);
static const enum ggml_vk_pipe k_mul_mat_id[]    = WEIGHT_PIPES(mul_mat_id);
static const enum ggml_vk_pipe k_get_rows[]      = WEIGHT_PIPES(get_rows);

// columns of src1 from which the tiled kernel pays off
#define GGML_VK_MUL_MAT_TILED_MIN_N 8

static bool record_mul_mat(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const struct pc_mul_mat pc = {
        .K = u32(a->ne[0]), .M = u32(a->ne[1]), .ne02 = u32(a->ne[2]), .ne03 = u32(a->ne[3]),
        .nb01 = u32(a->nb[1]), .nb02 = u32(a->nb[2]), .nb03 = u32(a->nb[3]),
        .N = u32(b->ne[1]), .ne12 = u32(b->ne[2]), .ne13 = u32(b->ne[3]),
        .nb10 = stride(b, 0, 4), .nb11 = stride(b, 1, 4), .nb12 = stride(b, 2, 4), .nb13 = stride(b, 3, 4),
        .nb1 = stride(dst, 1, 4), .nb2 = stride(dst, 2, 4), .nb3 = stride(dst, 3, 4),
        .a_off = ggml_vk_misalign(s, a, 1), .b_off = ggml_vk_misalign(s, b, 4), .d_off = ggml_vk_misalign(s, dst, 4),
    };
    const int w = weight_index(a->type);
    const uint64_t batch = (uint64_t) b->ne[2] * (uint64_t) b->ne[3];
    if (b->ne[1] >= GGML_VK_MUL_MAT_TILED_MIN_N) {
        const uint64_t tiles = (uint64_t) div_up((uint64_t) a->ne[1], 64) * div_up((uint64_t) b->ne[1], 64) * batch;
        return ggml_vk_dispatch(s, k_mul_mat_tiled[w], SRCS(a, b), dst, &pc, sizeof(pc), (uint32_t) tiles);
    }
    const uint64_t outputs = (uint64_t) a->ne[1] * (uint64_t) b->ne[1] * batch;
    return ggml_vk_dispatch(s, k_mul_mat_vec[w], SRCS(a, b), dst, &pc, sizeof(pc), div_up(outputs, 8)); // ROWS of mul_mat_vec.comp
}

// dst[:, e, t] = as[ids[e, t]] b[:, e % ne11, t], by the matrix-vector kernel
static bool record_mul_mat_id(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const struct ggml_tensor * ids = dst->src[2];
    const struct pc_mul_mat pc = {
        .K = u32(a->ne[0]), .M = u32(a->ne[1]), .ne02 = u32(a->ne[2]), .ne03 = 1,
        .nb01 = u32(a->nb[1]), .nb02 = u32(a->nb[2]), .nb03 = u32(a->nb[3]),
        .N = u32(ids->ne[0]), .ne12 = u32(ids->ne[1]), .ne13 = 1,
        .nb10 = stride(b, 0, 4), .nb11 = stride(b, 1, 4), .nb12 = stride(b, 2, 4), .nb13 = 0,
        .nb1 = stride(dst, 1, 4), .nb2 = stride(dst, 2, 4), .nb3 = stride(dst, 3, 4),
        .a_off = ggml_vk_misalign(s, a, 1), .b_off = ggml_vk_misalign(s, b, 4), .d_off = ggml_vk_misalign(s, dst, 4),
        .ne11 = u32(b->ne[1]), .ids_nb0 = stride(ids, 0, 4), .ids_nb1 = stride(ids, 1, 4), .ids_off = ggml_vk_misalign(s, ids, 4),
    };
    const uint64_t outputs = (uint64_t) a->ne[1] * (uint64_t) ids->ne[0] * (uint64_t) ids->ne[1];
    return ggml_vk_dispatch(s, k_mul_mat_id[weight_index(a->type)], SRCS(a, b, ids), dst, &pc, sizeof(pc), div_up(outputs, 8));
}

//
// GET_ROWS
//

struct pc_get_rows {
    uint32_t ne00, ne10, ne11, ne12;
    uint32_t nb01, nb02, nb03;
    uint32_t nb10, nb11, nb12;
    uint32_t nb1, nb2, nb3;
    uint32_t a_off, r_off, d_off;
};

static bool record_get_rows(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * r = dst->src[1];
    const struct pc_get_rows pc = {
        .ne00 = u32(a->ne[0]), .ne10 = u32(r->ne[0]), .ne11 = u32(r->ne[1]), .ne12 = u32(r->ne[2]),
        .nb01 = u32(a->nb[1]), .nb02 = u32(a->nb[2]), .nb03 = u32(a->nb[3]),
        .nb10 = stride(r, 0, 4), .nb11 = stride(r, 1, 4), .nb12 = stride(r, 2, 4),
        .nb1 = stride(dst, 1, 4), .nb2 = stride(dst, 2, 4), .nb3 = stride(dst, 3, 4),
        .a_off = ggml_vk_misalign(s, a, 1), .r_off = ggml_vk_misalign(s, r, 4), .d_off = ggml_vk_misalign(s, dst, 4),
    };
    return ggml_vk_dispatch(s, k_get_rows[weight_index(a->type)], SRCS(a, r), dst, &pc, sizeof(pc),
                            div_up((uint64_t) ggml_nelements(dst), 256));
}

//
// element-wise ops (eltwise.comp)
//

enum ggml_vk_eltwise_op {
    ELT_COPY = 0, ELT_ADD = 1, ELT_SUB = 2, ELT_MUL = 3, ELT_DIV = 4, ELT_SCALE = 5, ELT_CLAMP = 6,
    ELT_SILU = 7, ELT_GELU = 8, ELT_GELU_QUICK = 9, ELT_GELU_ERF = 10, ELT_RELU = 11, ELT_TANH = 12,
    ELT_SIGMOID = 13, ELT_NEG = 14, ELT_EXP = 15, ELT_STEP = 16,
    ELT_SQR = 17, ELT_SQRT = 18,
};

struct pc_eltwise {
    uint32_t ne00, ne01, ne02, ne03;
    uint32_t nb00, nb01, nb02, nb03;
    uint32_t ne10, ne11, ne12, ne13;
    uint32_t nb10, nb11, nb12, nb13;
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t nb0, nb1, nb2, nb3;
    uint32_t a_off, b_off, d_off;
    uint32_t op;
    float    p0, p1;
    uint32_t b_type;
};

static const enum ggml_vk_pipe k_eltwise[3][3] = {
    { GGML_VK_PIPE_eltwise_F32_F32,  GGML_VK_PIPE_eltwise_F32_F16,  GGML_VK_PIPE_eltwise_F32_BF16  },
    { GGML_VK_PIPE_eltwise_F16_F32,  GGML_VK_PIPE_eltwise_F16_F16,  GGML_VK_PIPE_eltwise_F16_BF16  },
    { GGML_VK_PIPE_eltwise_BF16_F32, GGML_VK_PIPE_eltwise_BF16_F16, GGML_VK_PIPE_eltwise_BF16_BF16 },
};

static enum ggml_vk_eltwise_op eltwise_op(const struct ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_ADD: case GGML_OP_ADD1: return ELT_ADD;
        case GGML_OP_SUB:   return ELT_SUB;
        case GGML_OP_MUL:   return ELT_MUL;
        case GGML_OP_DIV:   return ELT_DIV;
        case GGML_OP_SCALE: return ELT_SCALE;
        case GGML_OP_CLAMP: return ELT_CLAMP;
        case GGML_OP_SQR:   return ELT_SQR;
        case GGML_OP_SQRT:  return ELT_SQRT;
        case GGML_OP_UNARY:
            switch (ggml_get_unary_op(dst)) {
                case GGML_UNARY_OP_SILU:       return ELT_SILU;
                case GGML_UNARY_OP_GELU:       return ELT_GELU;
                case GGML_UNARY_OP_GELU_QUICK: return ELT_GELU_QUICK;
                case GGML_UNARY_OP_GELU_ERF:   return ELT_GELU_ERF;
                case GGML_UNARY_OP_RELU:       return ELT_RELU;
                case GGML_UNARY_OP_TANH:       return ELT_TANH;
                case GGML_UNARY_OP_SIGMOID:    return ELT_SIGMOID;
                case GGML_UNARY_OP_NEG:        return ELT_NEG;
                case GGML_UNARY_OP_EXP:        return ELT_EXP;
                case GGML_UNARY_OP_STEP:       return ELT_STEP;
                default: break;
            }
            break;
        default:
            break;
    }
    return ELT_COPY;
}

//
// F32 into Q8_0/Q4_0: CPY and SET_ROWS (quantize.comp)
//

struct pc_quantize {
    uint32_t ne00, ne01, ne02, ne03;
    uint32_t nb00, nb01, nb02, nb03;
    uint32_t ne0, ne1, ne2;
    uint32_t nb1, nb2, nb3;
    uint32_t ne11, ne12;
    uint32_t nb10, nb11, nb12;
    uint32_t a_off, i_off, d_off;
    uint32_t idx64;
};

static bool record_quantize(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const bool rows = dst->op == GGML_OP_SET_ROWS;
    const struct ggml_tensor * idx = rows ? dst->src[1] : NULL;
    const size_t ui = idx != NULL ? ggml_type_size(idx->type) : 4;
    const struct pc_quantize pc = {
        .ne00 = u32(a->ne[0]), .ne01 = u32(a->ne[1]), .ne02 = u32(a->ne[2]), .ne03 = u32(a->ne[3]),
        .nb00 = stride(a, 0, 4), .nb01 = stride(a, 1, 4), .nb02 = stride(a, 2, 4), .nb03 = stride(a, 3, 4),
        .ne0 = u32(dst->ne[0]), .ne1 = u32(dst->ne[1]), .ne2 = u32(dst->ne[2]),
        .nb1 = u32(dst->nb[1]), .nb2 = u32(dst->nb[2]), .nb3 = u32(dst->nb[3]),
        .ne11 = idx != NULL ? u32(idx->ne[1]) : 1, .ne12 = idx != NULL ? u32(idx->ne[2]) : 1,
        .nb10 = idx != NULL ? stride(idx, 0, ui) : 0, .nb11 = idx != NULL ? stride(idx, 1, ui) : 0,
        .nb12 = idx != NULL ? stride(idx, 2, ui) : 0,
        .a_off = ggml_vk_misalign(s, a, 4), .i_off = ggml_vk_misalign(s, idx, ui), .d_off = ggml_vk_misalign(s, dst, 1),
        .idx64 = idx != NULL && idx->type == GGML_TYPE_I64,
    };
    const bool q8 = dst->type == GGML_TYPE_Q8_0;
    const enum ggml_vk_pipe pipe = rows ? (q8 ? GGML_VK_PIPE_quantize_rows_Q8_0 : GGML_VK_PIPE_quantize_rows_Q4_0)
                                        : (q8 ? GGML_VK_PIPE_quantize_Q8_0 : GGML_VK_PIPE_quantize_Q4_0);
    return ggml_vk_dispatch(s, pipe, SRCS(a, idx), dst, &pc, sizeof(pc), div_up((uint64_t) ggml_nelements(a) / 32, 64));
}

static bool record_eltwise(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    if (ggml_is_quantized(dst->type)) {
        return record_quantize(s, dst);
    }
    const enum ggml_vk_eltwise_op op = eltwise_op(dst);
    const bool binary = op >= ELT_ADD && op <= ELT_DIV;
    // CPY writes into its second source (dst is a view of it)
    const struct ggml_tensor * b = binary ? dst->src[1] : a;
    const size_t ua = ggml_type_size(a->type);
    const size_t ud = ggml_type_size(dst->type);
    const size_t ub = ggml_type_size(b->type);
    struct pc_eltwise pc = {
        .ne00 = u32(a->ne[0]), .ne01 = u32(a->ne[1]), .ne02 = u32(a->ne[2]), .ne03 = u32(a->ne[3]),
        .nb00 = stride(a, 0, ua), .nb01 = stride(a, 1, ua), .nb02 = stride(a, 2, ua), .nb03 = stride(a, 3, ua),
        .ne10 = u32(b->ne[0]), .ne11 = u32(b->ne[1]), .ne12 = u32(b->ne[2]), .ne13 = u32(b->ne[3]),
        .nb10 = stride(b, 0, ub), .nb11 = stride(b, 1, ub), .nb12 = stride(b, 2, ub), .nb13 = stride(b, 3, ub),
        .ne0 = u32(dst->ne[0]), .ne1 = u32(dst->ne[1]), .ne2 = u32(dst->ne[2]), .ne3 = u32(dst->ne[3]),
        .nb0 = stride(dst, 0, ud), .nb1 = stride(dst, 1, ud), .nb2 = stride(dst, 2, ud), .nb3 = stride(dst, 3, ud),
        .a_off = ggml_vk_misalign(s, a, ua), .b_off = binary ? ggml_vk_misalign(s, b, ub) : 0, .d_off = ggml_vk_misalign(s, dst, ud),
        .op = (uint32_t) op, .p0 = 0.0f, .p1 = 0.0f,
        .b_type = binary ? (uint32_t) float_index(b->type) : 0,
    };
    if (op == ELT_SCALE || op == ELT_CLAMP) {
        pc.p0 = ggml_get_op_params_f32(dst, 0);
        pc.p1 = ggml_get_op_params_f32(dst, 1);
    }
    const enum ggml_vk_pipe pipe = k_eltwise[float_index(a->type)][float_index(dst->type)];
    return ggml_vk_dispatch(s, pipe, SRCS(a, binary ? b : NULL), dst, &pc, sizeof(pc), div_up((uint64_t) ggml_nelements(a), 256));
}

//
// GLU
//

struct pc_glu {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t nb01, nb02, nb03;
    uint32_t nb11, nb12, nb13;
    uint32_t nb1, nb2, nb3;
    uint32_t a_off, b_off, d_off;
    uint32_t op, swapped, has_b, f16;
};

static bool record_glu(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const enum ggml_glu_op g = ggml_get_glu_op(dst);
    const size_t u = ggml_type_size(dst->type);
    const struct pc_glu pc = {
        .ne0 = u32(dst->ne[0]), .ne1 = u32(dst->ne[1]), .ne2 = u32(dst->ne[2]), .ne3 = u32(dst->ne[3]),
        .nb01 = stride(a, 1, u), .nb02 = stride(a, 2, u), .nb03 = stride(a, 3, u),
        .nb11 = b != NULL ? stride(b, 1, u) : 0, .nb12 = b != NULL ? stride(b, 2, u) : 0, .nb13 = b != NULL ? stride(b, 3, u) : 0,
        .nb1 = stride(dst, 1, u), .nb2 = stride(dst, 2, u), .nb3 = stride(dst, 3, u),
        .a_off = ggml_vk_misalign(s, a, u), .b_off = ggml_vk_misalign(s, b, u), .d_off = ggml_vk_misalign(s, dst, u),
        .f16 = dst->type == GGML_TYPE_F16,
        .op = g == GGML_GLU_OP_REGLU ? 0 : g == GGML_GLU_OP_GEGLU ? 1 : g == GGML_GLU_OP_SWIGLU ? 2 : g == GGML_GLU_OP_GEGLU_ERF ? 3 : 4,
        .swapped = ggml_get_op_params_i32(dst, 1) != 0, .has_b = b != NULL,
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_glu, SRCS(a, b), dst, &pc, sizeof(pc), div_up((uint64_t) ggml_nelements(dst), 256));
}

//
// row-wise: norms, SUM_ROWS, SOFT_MAX
//

struct pc_norm {
    uint32_t ne00, ne01, ne02, ne03;
    uint32_t nb01, nb02, nb03;
    uint32_t nb1, nb2, nb3;
    uint32_t a_off, d_off;
    uint32_t op;
    float    eps;
};

static bool record_norm(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    uint32_t op = 3;
    float eps = 0.0f;
    switch (dst->op) {
        case GGML_OP_NORM:     op = 0; eps = ggml_get_op_params_f32(dst, 0); break;
        case GGML_OP_RMS_NORM: op = 1; eps = ggml_get_op_params_f32(dst, 0); break;
        case GGML_OP_L2_NORM:  op = 2; eps = ggml_get_op_params_f32(dst, 0); break;
        case GGML_OP_MEAN:     op = 4; break;
        default: break;
    }
    struct pc_norm pc = {
        .ne00 = u32(a->ne[0]), .ne01 = u32(a->ne[1]), .ne02 = u32(a->ne[2]), .ne03 = u32(a->ne[3]),
        .nb01 = stride(a, 1, 4), .nb02 = stride(a, 2, 4), .nb03 = stride(a, 3, 4),
        .nb1 = stride(dst, 1, 4), .nb2 = stride(dst, 2, 4), .nb3 = stride(dst, 3, 4),
        .a_off = ggml_vk_misalign(s, a, 4), .d_off = ggml_vk_misalign(s, dst, 4), .op = op, .eps = eps,
    };
    if (dst->op == GGML_OP_SUM) { // a contiguous source summed as one row
        pc.ne00 = u32(ggml_nelements(a));
        pc.ne01 = pc.ne02 = pc.ne03 = 1;
    }
    return ggml_vk_dispatch(s, GGML_VK_PIPE_norm, SRCS(a), dst, &pc, sizeof(pc), pc.ne01 * pc.ne02 * pc.ne03);
}

struct pc_soft_max {
    uint32_t ne00, ne01, ne02, ne03;
    uint32_t nb01, nb02, nb03;
    uint32_t ne11, ne12, ne13;
    uint32_t nb11, nb12, nb13;
    uint32_t nb1, nb2, nb3;
    uint32_t a_off, m_off, s_off, d_off;
    uint32_t has_mask, has_sinks;
    float    scale, max_bias, m0, m1;
    uint32_t n_head_log2;
};

// ALiBi: slope of head h is m0^(h+1) below n_head_log2, m1^(2(h-n_head_log2)+1) above
static void alibi_bases(float max_bias, uint32_t n_head, float * m0, float * m1, uint32_t * n_head_log2) {
    const uint32_t nl2 = n_head == 0 ? 1 : 1u << (uint32_t) floor(log2((double) n_head));
    *n_head_log2 = nl2;
    *m0 = max_bias > 0.0f ? powf(2.0f, -max_bias / (float) nl2) : 0.0f;
    *m1 = max_bias > 0.0f ? powf(2.0f, -(max_bias / 2.0f) / (float) nl2) : 0.0f;
}

static bool record_soft_max(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * m = dst->src[1];
    const struct ggml_tensor * sk = dst->src[2];
    const size_t um = m != NULL ? ggml_type_size(m->type) : 4;
    struct pc_soft_max pc = {
        .ne00 = u32(a->ne[0]), .ne01 = u32(a->ne[1]), .ne02 = u32(a->ne[2]), .ne03 = u32(a->ne[3]),
        .nb01 = stride(a, 1, 4), .nb02 = stride(a, 2, 4), .nb03 = stride(a, 3, 4),
        .ne11 = m != NULL ? u32(m->ne[1]) : 1, .ne12 = m != NULL ? u32(m->ne[2]) : 1, .ne13 = m != NULL ? u32(m->ne[3]) : 1,
        .nb11 = m != NULL ? stride(m, 1, um) : 0, .nb12 = m != NULL ? stride(m, 2, um) : 0, .nb13 = m != NULL ? stride(m, 3, um) : 0,
        .nb1 = stride(dst, 1, 4), .nb2 = stride(dst, 2, 4), .nb3 = stride(dst, 3, 4),
        .a_off = ggml_vk_misalign(s, a, 4), .m_off = ggml_vk_misalign(s, m, um), .s_off = ggml_vk_misalign(s, sk, 4),
        .d_off = ggml_vk_misalign(s, dst, 4),
        .has_mask = m != NULL, .has_sinks = sk != NULL,
        .scale = ggml_get_op_params_f32(dst, 0), .max_bias = ggml_get_op_params_f32(dst, 1),
    };
    alibi_bases(pc.max_bias, u32(a->ne[2]), &pc.m0, &pc.m1, &pc.n_head_log2);
    const enum ggml_vk_pipe pipe = m != NULL && m->type == GGML_TYPE_F16 ? GGML_VK_PIPE_soft_max_F16 : GGML_VK_PIPE_soft_max_F32;
    return ggml_vk_dispatch(s, pipe, SRCS(a, m, sk), dst, &pc, sizeof(pc), (uint32_t) ggml_nrows(a));
}

//
// ROPE
//

struct pc_rope {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t nb01, nb02, nb03;
    uint32_t nb1, nb2, nb3;
    uint32_t a_off, p_off, f_off, d_off;
    uint32_t n_dims, mode, has_ff;
    uint32_t s0, s1, s2, s3;
    float    theta_scale, freq_scale, ext_factor, attn_factor, corr0, corr1;
};

static bool record_rope(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * pos = dst->src[1];
    const struct ggml_tensor * ff = dst->src[2];
    const size_t u = ggml_type_size(a->type);
    const int n_dims = ggml_get_op_params_i32(dst, 1);
    const int mode = ggml_get_op_params_i32(dst, 2);
    const int n_ctx_orig = ggml_get_op_params_i32(dst, 4);
    const float freq_base = ggml_get_op_params_f32(dst, 5);
    const float beta_fast = ggml_get_op_params_f32(dst, 9);
    const float beta_slow = ggml_get_op_params_f32(dst, 10);
    float corr[2];
    ggml_rope_yarn_corr_dims(n_dims, n_ctx_orig, freq_base, beta_fast, beta_slow, corr);
    const struct pc_rope pc = {
        .ne0 = u32(a->ne[0]), .ne1 = u32(a->ne[1]), .ne2 = u32(a->ne[2]), .ne3 = u32(a->ne[3]),
        .nb01 = stride(a, 1, u), .nb02 = stride(a, 2, u), .nb03 = stride(a, 3, u),
        .nb1 = stride(dst, 1, u), .nb2 = stride(dst, 2, u), .nb3 = stride(dst, 3, u),
        .a_off = ggml_vk_misalign(s, a, u), .p_off = ggml_vk_misalign(s, pos, 4), .f_off = ggml_vk_misalign(s, ff, 4),
        .d_off = ggml_vk_misalign(s, dst, u),
        .n_dims = (uint32_t) n_dims, .has_ff = ff != NULL,
        .mode = mode == GGML_ROPE_TYPE_NORMAL ? 0 : mode == GGML_ROPE_TYPE_NEOX ? 1 : mode == GGML_ROPE_TYPE_MROPE ? 2 :
                mode == GGML_ROPE_TYPE_IMROPE ? 3 : 4,
        .s0 = (uint32_t) ggml_get_op_params_i32(dst, 11), .s1 = (uint32_t) ggml_get_op_params_i32(dst, 12),
        .s2 = (uint32_t) ggml_get_op_params_i32(dst, 13), .s3 = (uint32_t) ggml_get_op_params_i32(dst, 14),
        .theta_scale = n_dims > 0 ? powf(freq_base, -2.0f / (float) n_dims) : 1.0f,
        .freq_scale = ggml_get_op_params_f32(dst, 6), .ext_factor = ggml_get_op_params_f32(dst, 7),
        .attn_factor = ggml_get_op_params_f32(dst, 8), .corr0 = corr[0], .corr1 = corr[1],
    };
    const int64_t n_pairs = mode == GGML_ROPE_TYPE_VISION ? n_dims : n_dims / 2;
    const int64_t rot_end = mode == GGML_ROPE_TYPE_VISION ? 2 * (int64_t) n_dims : n_dims;
    const uint64_t per_row = (uint64_t) n_pairs + (uint64_t) (a->ne[0] - rot_end);
    const uint64_t n = per_row * (uint64_t) ggml_nrows(a);
    const enum ggml_vk_pipe pipe = a->type == GGML_TYPE_F16 ? GGML_VK_PIPE_rope_F16 : GGML_VK_PIPE_rope_F32;
    return ggml_vk_dispatch(s, pipe, SRCS(a, pos, ff), dst, &pc, sizeof(pc), div_up(n, 256));
}

//
// SET_ROWS
//

struct pc_set_rows {
    uint32_t ne00, ne01, ne02, ne03;
    uint32_t nb01, nb02, nb03;
    uint32_t ne11, ne12;
    uint32_t nb10, nb11, nb12;
    uint32_t nb1, nb2, nb3;
    uint32_t a_off, i_off, d_off;
};

static bool record_set_rows(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    if (ggml_is_quantized(dst->type)) {
        return record_quantize(s, dst);
    }
    const struct ggml_tensor * idx = dst->src[1];
    const size_t ui = ggml_type_size(idx->type);
    const size_t ud = ggml_type_size(dst->type);
    const struct pc_set_rows pc = {
        .ne00 = u32(a->ne[0]), .ne01 = u32(a->ne[1]), .ne02 = u32(a->ne[2]), .ne03 = u32(a->ne[3]),
        .nb01 = stride(a, 1, 4), .nb02 = stride(a, 2, 4), .nb03 = stride(a, 3, 4),
        .ne11 = u32(idx->ne[1]), .ne12 = u32(idx->ne[2]),
        .nb10 = stride(idx, 0, ui), .nb11 = stride(idx, 1, ui), .nb12 = stride(idx, 2, ui),
        .nb1 = stride(dst, 1, ud), .nb2 = stride(dst, 2, ud), .nb3 = stride(dst, 3, ud),
        .a_off = ggml_vk_misalign(s, a, 4), .i_off = ggml_vk_misalign(s, idx, ui), .d_off = ggml_vk_misalign(s, dst, ud),
    };
    static const enum ggml_vk_pipe pipes[2][3] = {
        { GGML_VK_PIPE_set_rows_I32_F32, GGML_VK_PIPE_set_rows_I32_F16, GGML_VK_PIPE_set_rows_I32_BF16 },
        { GGML_VK_PIPE_set_rows_I64_F32, GGML_VK_PIPE_set_rows_I64_F16, GGML_VK_PIPE_set_rows_I64_BF16 },
    };
    const enum ggml_vk_pipe pipe = pipes[idx->type == GGML_TYPE_I64][float_index(dst->type)];
    return ggml_vk_dispatch(s, pipe, SRCS(a, idx), dst, &pc, sizeof(pc), div_up((uint64_t) ggml_nelements(a), 256));
}

//
// FLASH_ATTN_EXT
//

struct pc_flash_attn {
    uint32_t Dk, Dv, n_q, n_head, n_kv, n_q3;
    uint32_t nbq1, nbq2, nbq3;
    uint32_t nbk1, nbk2, nbk3;
    uint32_t nbv1, nbv2, nbv3;
    uint32_t nbm1, nbm2, nbm3;
    uint32_t nem2, nem3;
    uint32_t rk2, rk3;
    float    scale, softcap, m0, m1;
    uint32_t n_head_log2;
    uint32_t flags;
    uint32_t offs_qkvm;
    uint32_t offs_sd;
};

static bool record_flash_attn(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];
    const struct ggml_tensor * m = dst->src[3];
    const struct ggml_tensor * sk = dst->src[4];
    const size_t ukv = ggml_type_size(k->type);
    float scale = ggml_get_op_params_f32(dst, 0);
    const float max_bias = ggml_get_op_params_f32(dst, 1);
    const float softcap = ggml_get_op_params_f32(dst, 2);
    if (softcap != 0.0f) {
        scale /= softcap; // s = softcap * tanh(scale * q.k / softcap)
    }
    struct pc_flash_attn pc = {
        .Dk = u32(q->ne[0]), .Dv = u32(v->ne[0]), .n_q = u32(q->ne[1]), .n_head = u32(q->ne[2]), .n_kv = u32(k->ne[1]),
        .n_q3 = u32(q->ne[3]),
        .nbq1 = stride(q, 1, 4), .nbq2 = stride(q, 2, 4), .nbq3 = stride(q, 3, 4),
        .nbk1 = stride(k, 1, ukv), .nbk2 = stride(k, 2, ukv), .nbk3 = stride(k, 3, ukv),
        .nbv1 = stride(v, 1, ukv), .nbv2 = stride(v, 2, ukv), .nbv3 = stride(v, 3, ukv),
        .nbm1 = m != NULL ? stride(m, 1, 2) : 0, .nbm2 = m != NULL ? stride(m, 2, 2) : 0, .nbm3 = m != NULL ? stride(m, 3, 2) : 0,
        .nem2 = m != NULL ? u32(m->ne[2]) : 1, .nem3 = m != NULL ? u32(m->ne[3]) : 1,
        .rk2 = u32(q->ne[2] / k->ne[2]), .rk3 = u32(q->ne[3] / k->ne[3]),
        .scale = scale, .softcap = softcap,
        .flags = (m != NULL ? 1u : 0u) | (sk != NULL ? 2u : 0u),
        .offs_qkvm = ggml_vk_misalign(s, q, 4) | ggml_vk_misalign(s, k, ukv) << 8 | ggml_vk_misalign(s, v, ukv) << 16 |
                     ggml_vk_misalign(s, m, 2) << 24,
        .offs_sd = ggml_vk_misalign(s, sk, 4) | ggml_vk_misalign(s, dst, 4) << 8,
    };
    alibi_bases(max_bias, pc.n_head, &pc.m0, &pc.m1, &pc.n_head_log2);
    const enum ggml_vk_pipe pipe = k->type == GGML_TYPE_F16 ? GGML_VK_PIPE_flash_attn_F16 : GGML_VK_PIPE_flash_attn_F32;
    const uint64_t groups = (uint64_t) q->ne[1] * (uint64_t) q->ne[2] * (uint64_t) q->ne[3];
    return ggml_vk_dispatch(s, pipe, SRCS(q, k, v, m, sk), dst, &pc, sizeof(pc), (uint32_t) groups);
}

//
// CONCAT, ARGSORT
//

struct pc_concat {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t nb00, nb01, nb02, nb03;
    uint32_t nb10, nb11, nb12, nb13;
    uint32_t nb0, nb1, nb2, nb3;
    uint32_t a_len, dim;
    uint32_t a_off, b_off, d_off;
};

static bool record_concat(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const size_t u = ggml_type_size(dst->type);
    const int dim = ggml_get_op_params_i32(dst, 0);
    const struct pc_concat pc = {
        .ne0 = u32(dst->ne[0]), .ne1 = u32(dst->ne[1]), .ne2 = u32(dst->ne[2]), .ne3 = u32(dst->ne[3]),
        .nb00 = stride(a, 0, u), .nb01 = stride(a, 1, u), .nb02 = stride(a, 2, u), .nb03 = stride(a, 3, u),
        .nb10 = stride(b, 0, u), .nb11 = stride(b, 1, u), .nb12 = stride(b, 2, u), .nb13 = stride(b, 3, u),
        .nb0 = stride(dst, 0, u), .nb1 = stride(dst, 1, u), .nb2 = stride(dst, 2, u), .nb3 = stride(dst, 3, u),
        .a_len = u32(a->ne[dim]), .dim = (uint32_t) dim,
        .a_off = ggml_vk_misalign(s, a, u), .b_off = ggml_vk_misalign(s, b, u), .d_off = ggml_vk_misalign(s, dst, u),
    };
    const enum ggml_vk_pipe pipe = u == 2 ? GGML_VK_PIPE_concat_16 : GGML_VK_PIPE_concat_32;
    return ggml_vk_dispatch(s, pipe, SRCS(a, b), dst, &pc, sizeof(pc), div_up((uint64_t) ggml_nelements(dst), 256));
}

struct pc_argsort {
    uint32_t ncols, ncols_pad, nrows;
    uint32_t nb01, nb02, nb03;
    uint32_t ne01, ne02;
    uint32_t nb1, nb2, nb3;
    uint32_t a_off, d_off;
    uint32_t desc;
};

static bool record_argsort(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    uint32_t pad = 1;
    while (pad < (uint32_t) a->ne[0]) {
        pad <<= 1;
    }
    const struct pc_argsort pc = {
        .ncols = u32(a->ne[0]), .ncols_pad = pad, .nrows = u32(ggml_nrows(a)),
        .nb01 = stride(a, 1, 4), .nb02 = stride(a, 2, 4), .nb03 = stride(a, 3, 4),
        .ne01 = u32(a->ne[1]), .ne02 = u32(a->ne[2]),
        .nb1 = stride(dst, 1, 4), .nb2 = stride(dst, 2, 4), .nb3 = stride(dst, 3, 4),
        .a_off = ggml_vk_misalign(s, a, 4), .d_off = ggml_vk_misalign(s, dst, 4),
        .desc = ggml_get_op_params_i32(dst, 0) == GGML_SORT_ORDER_DESC,
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_argsort, SRCS(a), dst, &pc, sizeof(pc), (uint32_t) ggml_nrows(a));
}

bool ggml_vk_record_node(struct ggml_vk_stream * s, struct ggml_tensor * node) {
    switch (node->op) {
        case GGML_OP_MUL_MAT:
            return record_mul_mat(s, node);
        case GGML_OP_MUL_MAT_ID:
            return record_mul_mat_id(s, node);
        case GGML_OP_GET_ROWS:
            return record_get_rows(s, node);
        case GGML_OP_ADD: case GGML_OP_SUB: case GGML_OP_MUL: case GGML_OP_DIV: case GGML_OP_ADD1:
        case GGML_OP_SCALE: case GGML_OP_CLAMP: case GGML_OP_CPY: case GGML_OP_DUP: case GGML_OP_CONT: case GGML_OP_UNARY:
        case GGML_OP_SQR: case GGML_OP_SQRT:
            return record_eltwise(s, node);
        case GGML_OP_GLU:
            return record_glu(s, node);
        case GGML_OP_NORM: case GGML_OP_RMS_NORM: case GGML_OP_L2_NORM: case GGML_OP_SUM_ROWS: case GGML_OP_MEAN:
        case GGML_OP_SUM:
            return record_norm(s, node);
        case GGML_OP_SOFT_MAX:
            return record_soft_max(s, node);
        case GGML_OP_ROPE:
            return record_rope(s, node);
        case GGML_OP_SET_ROWS:
            return record_set_rows(s, node);
        case GGML_OP_FLASH_ATTN_EXT:
            return record_flash_attn(s, node);
        case GGML_OP_CONCAT:
            return record_concat(s, node);
        case GGML_OP_ARGSORT:
            return record_argsort(s, node);
        case GGML_OP_SILU_BACK: case GGML_OP_RMS_NORM_BACK: case GGML_OP_SOFT_MAX_BACK: case GGML_OP_CROSS_ENTROPY_LOSS:
        case GGML_OP_CROSS_ENTROPY_LOSS_BACK: case GGML_OP_REPEAT_BACK: case GGML_OP_GET_ROWS_BACK: case GGML_OP_OUT_PROD:
        case GGML_OP_OPT_STEP_ADAMW: case GGML_OP_OPT_STEP_SGD: case GGML_OP_ARGMAX: case GGML_OP_COUNT_EQUAL:
        case GGML_OP_REPEAT:
            return ggml_vk_record_train_op(s, node);
        default:
            GGML_LOG_ERROR("ggml_vulkan: no kernel for %s\n", ggml_op_desc(node));
            return false;
    }
}
