// vk-ops-record.c: the ops the device computes, each as a pair {supports,
// record} in one table (k_ops, at the end): which nodes it takes and how each
// is recorded as a dispatch. The element-wise ops come from the lists of
// ggml-op-list.h: every listed op with a GLSL expression is supported, with
// its code of vk-op-codes.h. The training ops have their own table in
// vk-ops-train.c.
//
// Each op fills the push constants its shader declares (the structs below
// mirror the shaders' push_constant blocks field by field; every field is
// 32 bits) and picks the shader variant for its types. Strides are passed
// in elements of the array the shader reads (bytes for quantized rows);
// offsets are the tensor's distance from its binding's aligned start.

#include "vk-impl.h"
#include "vk-op-codes.h"

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

static bool is_float_type(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16;
}

// the weight types of MUL_MAT and GET_ROWS
static bool is_weight_type(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32: case GGML_TYPE_F16: case GGML_TYPE_BF16:
        case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_0: case GGML_TYPE_Q5_1: case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K: case GGML_TYPE_Q6_K:
        case GGML_TYPE_IQ4_NL: case GGML_TYPE_IQ4_XS: case GGML_TYPE_MXFP4:
            return true;
        default:
            return false;
    }
}

static bool rows_contiguous(const struct ggml_tensor * t) {
    return t->nb[0] == ggml_type_size(t->type);
}

// the quantized types CPY and SET_ROWS write (KV caches)
static bool is_cache_quant_type(enum ggml_type t) {
    return t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_0;
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

static bool supports_mul_mat(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    return is_weight_type(a->type) && b->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 &&
           rows_contiguous(a) && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0;
}

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

static bool supports_mul_mat_id(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    const struct ggml_tensor * ids = op->src[2];
    return is_weight_type(a->type) && b->type == GGML_TYPE_F32 && ids->type == GGML_TYPE_I32 && op->type == GGML_TYPE_F32 &&
           rows_contiguous(a) && a->ne[3] == 1 && b->ne[3] == 1;
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

static bool supports_get_rows(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    return is_weight_type(a->type) && op->src[1]->type == GGML_TYPE_I32 && op->type == GGML_TYPE_F32 && rows_contiguous(a);
}

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

// the code of node's op in eltwise.comp (vk-op-codes.h), GGML_VK_ELT_COUNT for none
static enum ggml_vk_elt_op eltwise_code(const struct ggml_tensor * node) {
    switch (node->op) {
        case GGML_OP_CPY: case GGML_OP_DUP: case GGML_OP_CONT:
            return GGML_VK_ELT_COPY;
        case GGML_OP_ADD1:
            return GGML_VK_ELT_ADD;
        case GGML_OP_UNARY:
            switch (ggml_get_unary_op(node)) {
#define X(NAME, ...) case GGML_UNARY_OP_##NAME: return GGML_VK_ELT_##NAME;
                GGML_OP_LIST_UNARY_FNS(X)
#undef X
                default: return GGML_VK_ELT_COUNT;
            }
        default:
            break;
    }
#define X(NAME, ...) if (node->op == GGML_OP_##NAME) return GGML_VK_ELT_##NAME;
    GGML_OP_LIST_BINARY(X)
#undef X
    // the first entry of the op: SCALE's expression takes the bias
#define X(NAME, lop, ...) if (node->op == lop) return GGML_VK_ELT_##NAME;
    GGML_OP_LIST_UNARY_OPS(X)
#undef X
    return GGML_VK_ELT_COUNT;
}

// the codes with a GLSL expression in the list (a case in eltwise.comp)
static const bool k_elt_has_kernel[GGML_VK_ELT_COUNT] = {
    [GGML_VK_ELT_COPY] = true,
#define X(NAME, ctor, f32, vec, f64, grad, glsl, ...) [GGML_VK_ELT_##NAME] = sizeof(glsl) > 1,
    GGML_OP_LIST_BINARY(X)
#undef X
#define X(NAME, op, f32, vec, f64, grad, glsl, ...) [GGML_VK_ELT_##NAME] = sizeof(glsl) > 1,
    GGML_OP_LIST_UNARY(X)
#undef X
};

static bool elt_is_binary(enum ggml_vk_elt_op code) {
    return code >= GGML_VK_ELT_COPY + 1 && code <= (enum ggml_vk_elt_op) GGML_VK_ELT_LAST_BINARY;
}

static bool supports_eltwise(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    const enum ggml_vk_elt_op code = eltwise_code(op);
    if (code == GGML_VK_ELT_COUNT || !k_elt_has_kernel[code]) {
        return false;
    }
    if (code == GGML_VK_ELT_COPY && a->type == GGML_TYPE_F32 && is_cache_quant_type(op->type)) {
        return ggml_nelements(a) == ggml_nelements(op) && op->ne[0] % 32 == 0;
    }
    if (!is_float_type(a->type) || !is_float_type(op->type)) {
        return false;
    }
    if (elt_is_binary(code)) {
        return is_float_type(b->type) && op->type == a->type && ggml_can_repeat(b, a);
    }
    if (code == GGML_VK_ELT_COPY) {
        return ggml_nelements(a) == ggml_nelements(op);
    }
    return op->type == a->type && ggml_are_same_shape(a, op);
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
    const enum ggml_vk_elt_op op = eltwise_code(dst);
    const bool binary = elt_is_binary(op);
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
    if (!binary && op != GGML_VK_ELT_COPY && dst->op != GGML_OP_UNARY) { // the parameters of SCALE, CLAMP, ...
        pc.p0 = ggml_get_op_params_f32(dst, 0);
        pc.p1 = ggml_get_op_params_f32(dst, 1);
    }
    const enum ggml_vk_pipe pipe = k_eltwise[float_index(a->type)][float_index(dst->type)];
    return ggml_vk_dispatch(s, pipe, SRCS(a, binary ? b : NULL), dst, &pc, sizeof(pc), div_up((uint64_t) ggml_nelements(a), 256));
}

//
// GLU
//

// the GLU ops with a GLSL expression in the list (a case in glu.comp)
static const bool k_glu_has_kernel[GGML_VK_GLU_COUNT] = {
#define X(NAME, f32, vec, f64, grad, glsl) [GGML_VK_GLU_##NAME] = sizeof(glsl) > 1,
    GGML_OP_LIST_GLU(X)
#undef X
};

// glu.comp's codes are enum ggml_glu_op's values
#define X(NAME, ...) _Static_assert((int) GGML_VK_GLU_##NAME == (int) GGML_GLU_OP_##NAME, "GLU list order");
GGML_OP_LIST_GLU(X)
#undef X

static bool supports_glu(const struct ggml_tensor * op) {
    const enum ggml_glu_op g = ggml_get_glu_op(op);
    if ((unsigned) g >= GGML_VK_GLU_COUNT || !k_glu_has_kernel[g]) {
        return false;
    }
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    const enum ggml_type t = op->type;
    return (t == GGML_TYPE_F32 || t == GGML_TYPE_F16) && a->type == t && rows_contiguous(a) && rows_contiguous(op) &&
           (b == NULL || (b->type == t && rows_contiguous(b) && ggml_are_same_shape(b, op)));
}

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
        .op = (uint32_t) g,
        .swapped = ggml_get_op_params_i32(dst, 1) != 0, .has_b = b != NULL,
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_glu, SRCS(a, b), dst, &pc, sizeof(pc), div_up((uint64_t) ggml_nelements(dst), 256));
}

//
// row-wise: norms, SUM_ROWS, SOFT_MAX
//

static bool supports_rows_f32(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    return a->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 && rows_contiguous(a) && rows_contiguous(op);
}

// a contiguous source summed as one row
static bool supports_sum(const struct ggml_tensor * op) {
    return op->src[0]->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 && ggml_is_contiguous(op->src[0]);
}

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

static bool supports_soft_max(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * m = op->src[1];
    const struct ggml_tensor * s = op->src[2];
    if (!supports_rows_f32(op)) {
        return false;
    }
    if (m != NULL && ((m->type != GGML_TYPE_F32 && m->type != GGML_TYPE_F16) || !rows_contiguous(m) ||
                      m->ne[0] != a->ne[0] || m->ne[1] < a->ne[1] || a->ne[2] % m->ne[2] != 0 || a->ne[3] % m->ne[3] != 0)) {
        return false;
    }
    return s == NULL || (s->type == GGML_TYPE_F32 && rows_contiguous(s) && s->ne[0] >= a->ne[2]);
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

static bool rope_sections_ok(const struct ggml_tensor * op, int mode) {
    const struct ggml_tensor * a = op->src[0];
    int64_t sum = 0;
    for (int i = 0; i < 4; i++) {
        const int s = ggml_get_op_params_i32(op, 11 + i);
        if (s < 0) {
            return false;
        }
        sum += s;
    }
    const int64_t first3 = (int64_t) ggml_get_op_params_i32(op, 11) + ggml_get_op_params_i32(op, 12) + ggml_get_op_params_i32(op, 13);
    if (first3 == 0 || sum > a->ne[0] || op->src[1]->ne[0] != 4 * a->ne[2]) {
        return false;
    }
    return mode != GGML_ROPE_TYPE_VISION || 2 * (int64_t) ggml_get_op_params_i32(op, 1) == a->ne[0];
}

static bool supports_rope(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * pos = op->src[1];
    const struct ggml_tensor * ff = op->src[2];
    const int n_dims = ggml_get_op_params_i32(op, 1);
    const int mode   = ggml_get_op_params_i32(op, 2);
    const int n_offs = ggml_get_op_params_i32(op, 15);
    const bool multi = mode == GGML_ROPE_TYPE_MROPE || mode == GGML_ROPE_TYPE_IMROPE || mode == GGML_ROPE_TYPE_VISION;
    if (!(mode == GGML_ROPE_TYPE_NORMAL || mode == GGML_ROPE_TYPE_NEOX || multi) || n_offs != 0) {
        return false;
    }
    const int64_t n_pairs = mode == GGML_ROPE_TYPE_VISION ? n_dims : n_dims / 2;
    const int64_t rot_end = mode == GGML_ROPE_TYPE_VISION ? 2 * (int64_t) n_dims : n_dims;
    return (a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16) && op->type == a->type && rows_contiguous(a) &&
           rows_contiguous(op) && n_dims >= 0 && n_dims % 2 == 0 && rot_end <= a->ne[0] && pos->type == GGML_TYPE_I32 &&
           rows_contiguous(pos) && (multi ? rope_sections_ok(op, mode) : pos->ne[0] == a->ne[2]) &&
           (ff == NULL || (ff->type == GGML_TYPE_F32 && rows_contiguous(ff) && ff->ne[0] >= n_pairs));
}

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

static bool supports_set_rows(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * idx = op->src[1];
    const bool quant = is_cache_quant_type(op->type) && a->ne[0] % 32 == 0;
    return a->type == GGML_TYPE_F32 && rows_contiguous(a) && (is_float_type(op->type) || quant) && rows_contiguous(op) &&
           (idx->type == GGML_TYPE_I64 || idx->type == GGML_TYPE_I32) && a->ne[2] % idx->ne[1] == 0 && a->ne[3] % idx->ne[2] == 0;
}

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

static bool supports_flash_attn(const struct ggml_tensor * op) {
    const struct ggml_tensor * q = op->src[0];
    const struct ggml_tensor * k = op->src[1];
    const struct ggml_tensor * v = op->src[2];
    const struct ggml_tensor * m = op->src[3];
    const struct ggml_tensor * s = op->src[4];
    if (q->type != GGML_TYPE_F32 || op->type != GGML_TYPE_F32 || !rows_contiguous(q) ||
        (k->type != GGML_TYPE_F16 && k->type != GGML_TYPE_F32) || v->type != k->type ||
        !rows_contiguous(k) || !rows_contiguous(v) || !ggml_is_contiguous(op)) {
        return false;
    }
    if (k->ne[0] != q->ne[0] || k->ne[0] > 256 || v->ne[0] > 256 || k->ne[1] != v->ne[1] ||
        k->ne[2] != v->ne[2] || k->ne[3] != v->ne[3] || q->ne[2] % k->ne[2] != 0 || q->ne[3] % k->ne[3] != 0) {
        return false;
    }
    if (m != NULL && (m->type != GGML_TYPE_F16 || !rows_contiguous(m) || m->ne[0] < k->ne[1] || m->ne[1] < q->ne[1] ||
                      q->ne[2] % m->ne[2] != 0 || q->ne[3] % m->ne[3] != 0)) {
        return false;
    }
    return s == NULL || (s->type == GGML_TYPE_F32 && rows_contiguous(s) && s->ne[0] >= q->ne[2]);
}

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

static bool supports_concat(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    const size_t sz = ggml_type_size(op->type);
    return !ggml_is_quantized(op->type) && (sz == 2 || sz == 4) && a->type == op->type && b->type == op->type;
}

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

// rows that fit the shared memory of argsort.comp
static bool supports_argsort(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    return a->type == GGML_TYPE_F32 && op->type == GGML_TYPE_I32 && rows_contiguous(a) && rows_contiguous(op) &&
           a->ne[0] <= 1024;
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

//
// the table: one entry per op, {supports, record}
//

static const struct ggml_vk_op_impl k_ops[GGML_OP_COUNT] = {
    [GGML_OP_MUL_MAT]        = { supports_mul_mat,    record_mul_mat },
    [GGML_OP_MUL_MAT_ID]     = { supports_mul_mat_id, record_mul_mat_id },
    [GGML_OP_GET_ROWS]       = { supports_get_rows,   record_get_rows },
    [GGML_OP_CPY]            = { supports_eltwise,    record_eltwise },
    [GGML_OP_DUP]            = { supports_eltwise,    record_eltwise },
    [GGML_OP_CONT]           = { supports_eltwise,    record_eltwise },
    [GGML_OP_ADD1]           = { supports_eltwise,    record_eltwise },
    [GGML_OP_UNARY]          = { supports_eltwise,    record_eltwise },
    [GGML_OP_GLU]            = { supports_glu,        record_glu },
    [GGML_OP_NORM]           = { supports_rows_f32,   record_norm },
    [GGML_OP_RMS_NORM]       = { supports_rows_f32,   record_norm },
    [GGML_OP_L2_NORM]        = { supports_rows_f32,   record_norm },
    [GGML_OP_SUM_ROWS]       = { supports_rows_f32,   record_norm },
    [GGML_OP_MEAN]           = { supports_rows_f32,   record_norm },
    [GGML_OP_SUM]            = { supports_sum,        record_norm },
    [GGML_OP_SOFT_MAX]       = { supports_soft_max,   record_soft_max },
    [GGML_OP_ROPE]           = { supports_rope,       record_rope },
    [GGML_OP_SET_ROWS]       = { supports_set_rows,   record_set_rows },
    [GGML_OP_FLASH_ATTN_EXT] = { supports_flash_attn, record_flash_attn },
    [GGML_OP_CONCAT]         = { supports_concat,     record_concat },
    [GGML_OP_ARGSORT]        = { supports_argsort,    record_argsort },
};

// the GGML_OP_ ops of the element-wise lists share eltwise.comp's entry
static const struct ggml_vk_op_impl k_eltwise_impl = { supports_eltwise, record_eltwise };

static bool op_in_eltwise_lists(enum ggml_op op) {
#define X(NAME, ...) if (op == GGML_OP_##NAME) return true;
    GGML_OP_LIST_BINARY(X)
#undef X
#define X(NAME, lop, ...) if (op == lop) return true;
    GGML_OP_LIST_UNARY_OPS(X)
#undef X
    return false;
}

const struct ggml_vk_op_impl * ggml_vk_op_impl_of(enum ggml_op op) {
    if ((unsigned) op >= GGML_OP_COUNT) {
        return NULL;
    }
    if (k_ops[op].record != NULL) {
        return &k_ops[op];
    }
    if (op_in_eltwise_lists(op)) {
        return &k_eltwise_impl;
    }
    return ggml_vk_train_op_impl(op);
}
