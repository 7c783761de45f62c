// ggml-types.c: the type table (names, block sizes, conversions) and the
// names of ops, unary ops and glu ops.

#include "ggml-impl.h"
#include "ggml-quants.h"
#include "ggml-op-list.h"

static void fp16_to_float_row(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    ggml_fp16_to_fp32_row((const ggml_fp16_t *) x, y, k);
}

static void float_to_fp16_row(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    ggml_fp32_to_fp16_row(x, (ggml_fp16_t *) y, k);
}

static void bf16_to_float_row(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int64_t k) {
    ggml_bf16_to_fp32_row((const ggml_bf16_t *) x, y, k);
}

static void float_to_bf16_row_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    ggml_fp32_to_bf16_row_ref(x, (ggml_bf16_t *) y, k);
}

#define REMOVED_TYPE(name) { .type_name = name, .blck_size = 0, .type_size = 0, .is_quantized = false }

// Types outside the implemented set keep their name and block size, so that
// files holding them can be sized and described; their conversions are NULL.
static const struct ggml_type_traits type_traits[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32]     = { .type_name = "f32",  .blck_size = 1, .type_size = sizeof(float),       .is_quantized = false },
    [GGML_TYPE_F16]     = { .type_name = "f16",  .blck_size = 1, .type_size = sizeof(ggml_fp16_t), .is_quantized = false,
                            .to_float = fp16_to_float_row, .from_float_ref = float_to_fp16_row },
    [GGML_TYPE_Q4_0]    = { .type_name = "q4_0", .blck_size = QK4_0, .type_size = sizeof(block_q4_0), .is_quantized = true,
                            .to_float = dequantize_row_q4_0, .from_float_ref = quantize_row_q4_0_ref },
    [GGML_TYPE_Q4_1]    = { .type_name = "q4_1", .blck_size = QK4_1, .type_size = sizeof(block_q4_1), .is_quantized = true,
                            .to_float = dequantize_row_q4_1, .from_float_ref = quantize_row_q4_1_ref },
    [4]                 = REMOVED_TYPE("DEPRECATED"),
    [5]                 = REMOVED_TYPE("DEPRECATED"),
    [GGML_TYPE_Q5_0]    = { .type_name = "q5_0", .blck_size = QK5_0, .type_size = sizeof(block_q5_0), .is_quantized = true,
                            .to_float = dequantize_row_q5_0, .from_float_ref = quantize_row_q5_0_ref },
    [GGML_TYPE_Q5_1]    = { .type_name = "q5_1", .blck_size = QK5_1, .type_size = sizeof(block_q5_1), .is_quantized = true,
                            .to_float = dequantize_row_q5_1, .from_float_ref = quantize_row_q5_1_ref },
    [GGML_TYPE_Q8_0]    = { .type_name = "q8_0", .blck_size = QK8_0, .type_size = sizeof(block_q8_0), .is_quantized = true,
                            .to_float = dequantize_row_q8_0, .from_float_ref = quantize_row_q8_0_ref },
    [GGML_TYPE_Q8_1]    = { .type_name = "q8_1", .blck_size = QK8_1, .type_size = sizeof(block_q8_1), .is_quantized = true,
                            .to_float = dequantize_row_q8_1, .from_float_ref = quantize_row_q8_1_ref },
    [GGML_TYPE_Q2_K]    = { .type_name = "q2_K",    .blck_size = QK_K, .type_size = sizeof(block_q2_K), .is_quantized = true,
                            .to_float = dequantize_row_q2_K, .from_float_ref = quantize_row_q2_K_ref },
    [GGML_TYPE_Q3_K]    = { .type_name = "q3_K",    .blck_size = QK_K, .type_size = sizeof(block_q3_K), .is_quantized = true,
                            .to_float = dequantize_row_q3_K, .from_float_ref = quantize_row_q3_K_ref },
    [GGML_TYPE_Q4_K]    = { .type_name = "q4_K",    .blck_size = QK_K, .type_size = sizeof(block_q4_K), .is_quantized = true,
                            .to_float = dequantize_row_q4_K, .from_float_ref = quantize_row_q4_K_ref },
    [GGML_TYPE_Q5_K]    = { .type_name = "q5_K",    .blck_size = QK_K, .type_size = sizeof(block_q5_K), .is_quantized = true,
                            .to_float = dequantize_row_q5_K, .from_float_ref = quantize_row_q5_K_ref },
    [GGML_TYPE_Q6_K]    = { .type_name = "q6_K",    .blck_size = QK_K, .type_size = sizeof(block_q6_K), .is_quantized = true,
                            .to_float = dequantize_row_q6_K, .from_float_ref = quantize_row_q6_K_ref },
    // as upstream, no conversions: Q8_K is the CPU's activation format only
    // (quantize_row_q8_K_ref and dequantize_row_q8_K are there for those who need them)
    [GGML_TYPE_Q8_K]    = { .type_name = "q8_K",    .blck_size = QK_K, .type_size = sizeof(block_q8_K), .is_quantized = true },
    [GGML_TYPE_IQ2_XXS] = { .type_name = "iq2_xxs", .blck_size = QK_K, .type_size = sizeof(block_iq2_xxs), .is_quantized = true,
                            .to_float = dequantize_row_iq2_xxs },
    [GGML_TYPE_IQ2_XS] = { .type_name = "iq2_xs", .blck_size = QK_K, .type_size = sizeof(block_iq2_xs), .is_quantized = true,
                            .to_float = dequantize_row_iq2_xs },
    [GGML_TYPE_IQ3_XXS] = { .type_name = "iq3_xxs", .blck_size = QK_K, .type_size = sizeof(block_iq3_xxs), .is_quantized = true,
                            .to_float = dequantize_row_iq3_xxs, .from_float_ref = quantize_row_iq3_xxs_ref },
    [GGML_TYPE_IQ1_S] = { .type_name = "iq1_s", .blck_size = QK_K, .type_size = sizeof(block_iq1_s), .is_quantized = true,
                            .to_float = dequantize_row_iq1_s },
    [GGML_TYPE_IQ4_NL]  = { .type_name = "iq4_nl", .blck_size = 32, .type_size = sizeof(block_iq4_nl), .is_quantized = true,
                            .to_float = dequantize_row_iq4_nl, .from_float_ref = quantize_row_iq4_nl_ref },
    [GGML_TYPE_IQ3_S] = { .type_name = "iq3_s", .blck_size = QK_K, .type_size = sizeof(block_iq3_s), .is_quantized = true,
                            .to_float = dequantize_row_iq3_s, .from_float_ref = quantize_row_iq3_s_ref },
    [GGML_TYPE_IQ2_S] = { .type_name = "iq2_s", .blck_size = QK_K, .type_size = sizeof(block_iq2_s), .is_quantized = true,
                            .to_float = dequantize_row_iq2_s, .from_float_ref = quantize_row_iq2_s_ref },
    [GGML_TYPE_IQ4_XS]  = { .type_name = "iq4_xs", .blck_size = QK_K, .type_size = sizeof(block_iq4_xs), .is_quantized = true,
                            .to_float = dequantize_row_iq4_xs, .from_float_ref = quantize_row_iq4_xs_ref },
    [GGML_TYPE_I8]      = { .type_name = "i8",  .blck_size = 1, .type_size = sizeof(int8_t),  .is_quantized = false },
    [GGML_TYPE_I16]     = { .type_name = "i16", .blck_size = 1, .type_size = sizeof(int16_t), .is_quantized = false },
    [GGML_TYPE_I32]     = { .type_name = "i32", .blck_size = 1, .type_size = sizeof(int32_t), .is_quantized = false },
    [GGML_TYPE_I64]     = { .type_name = "i64", .blck_size = 1, .type_size = sizeof(int64_t), .is_quantized = false },
    [GGML_TYPE_F64]     = { .type_name = "f64", .blck_size = 1, .type_size = sizeof(double),  .is_quantized = false },
    [GGML_TYPE_IQ1_M] = { .type_name = "iq1_m", .blck_size = QK_K, .type_size = sizeof(block_iq1_m), .is_quantized = true,
                            .to_float = dequantize_row_iq1_m },
    [GGML_TYPE_BF16]    = { .type_name = "bf16", .blck_size = 1, .type_size = sizeof(ggml_bf16_t), .is_quantized = false,
                            .to_float = bf16_to_float_row, .from_float_ref = float_to_bf16_row_ref },
    [31]                = REMOVED_TYPE("TYPE_Q4_0_4_4 REMOVED, use Q4_0 with runtime repacking"),
    [32]                = REMOVED_TYPE("TYPE_Q4_0_4_8 REMOVED, use Q4_0 with runtime repacking"),
    [33]                = REMOVED_TYPE("TYPE_Q4_0_8_8 REMOVED, use Q4_0 with runtime repacking"),
    [GGML_TYPE_TQ1_0]   = { .type_name = "tq1_0", .blck_size = QK_K, .type_size = sizeof(block_tq1_0), .is_quantized = true,
                            .to_float = dequantize_row_tq1_0, .from_float_ref = quantize_row_tq1_0_ref },
    [GGML_TYPE_TQ2_0]   = { .type_name = "tq2_0", .blck_size = QK_K, .type_size = sizeof(block_tq2_0), .is_quantized = true,
                            .to_float = dequantize_row_tq2_0, .from_float_ref = quantize_row_tq2_0_ref },
    [36]                = REMOVED_TYPE("TYPE_IQ4_NL_4_4 REMOVED, use IQ4_NL with runtime repacking"),
    [37]                = REMOVED_TYPE("TYPE_IQ4_NL_4_8 REMOVED, use IQ4_NL with runtime repacking"),
    [38]                = REMOVED_TYPE("TYPE_IQ4_NL_8_8 REMOVED, use IQ4_NL with runtime repacking"),
    [GGML_TYPE_MXFP4]  = { .type_name = "mxfp4", .blck_size = 32, .type_size = sizeof(block_mxfp4), .is_quantized = true,
                            .to_float = dequantize_row_mxfp4, .from_float_ref = quantize_row_mxfp4_ref },
    [GGML_TYPE_NVFP4] = { .type_name = "nvfp4", .blck_size = QK_NVFP4, .type_size = sizeof(block_nvfp4), .is_quantized = true,
                            .to_float = dequantize_row_nvfp4, .from_float_ref = quantize_row_nvfp4_ref },
    [GGML_TYPE_Q1_0] = { .type_name = "q1_0", .blck_size = QK1_0, .type_size = sizeof(block_q1_0), .is_quantized = true,
                            .to_float = dequantize_row_q1_0, .from_float_ref = quantize_row_q1_0_ref },
    [GGML_TYPE_Q2_0] = { .type_name = "q2_0", .blck_size = QK2_0, .type_size = sizeof(block_q2_0), .is_quantized = true,
                            .to_float = dequantize_row_q2_0, .from_float_ref = quantize_row_q2_0_ref },
};

const struct ggml_type_traits * ggml_get_type_traits(enum ggml_type type) {
    GGML_ASSERT(type >= 0 && type < GGML_TYPE_COUNT);
    return &type_traits[type];
}

int64_t ggml_blck_size(enum ggml_type type) {
    return ggml_get_type_traits(type)->blck_size;
}

size_t ggml_type_size(enum ggml_type type) {
    return ggml_get_type_traits(type)->type_size;
}

size_t ggml_row_size(enum ggml_type type, int64_t ne) {
    const int64_t blck = ggml_blck_size(type);
    GGML_ASSERT(blck > 0 && "type was removed from ggml");
    GGML_ASSERT(ne % blck == 0 && "row length must be a multiple of the block size");
    return ggml_type_size(type) * (size_t)(ne / blck);
}

double ggml_type_sizef(enum ggml_type type) {
    return (double) ggml_type_size(type) / (double) ggml_blck_size(type);
}

const char * ggml_type_name(enum ggml_type type) {
    return type >= 0 && type < GGML_TYPE_COUNT ? type_traits[type].type_name : "NONE";
}

bool ggml_is_quantized(enum ggml_type type) {
    return ggml_get_type_traits(type)->is_quantized;
}

enum ggml_type ggml_ftype_to_ggml_type(enum ggml_ftype ftype) {
    enum ggml_type wtype = GGML_TYPE_COUNT;
    switch (ftype) {
        case GGML_FTYPE_ALL_F32:              wtype = GGML_TYPE_F32;     break;
        case GGML_FTYPE_MOSTLY_F16:           wtype = GGML_TYPE_F16;     break;
        case GGML_FTYPE_MOSTLY_BF16:          wtype = GGML_TYPE_BF16;    break;
        case GGML_FTYPE_MOSTLY_Q4_0:          wtype = GGML_TYPE_Q4_0;    break;
        case GGML_FTYPE_MOSTLY_Q4_1:          wtype = GGML_TYPE_Q4_1;    break;
        case GGML_FTYPE_MOSTLY_Q1_0:          wtype = GGML_TYPE_Q1_0;    break;
        case GGML_FTYPE_MOSTLY_Q2_0:          wtype = GGML_TYPE_Q2_0;    break;
        case GGML_FTYPE_MOSTLY_Q5_0:          wtype = GGML_TYPE_Q5_0;    break;
        case GGML_FTYPE_MOSTLY_Q5_1:          wtype = GGML_TYPE_Q5_1;    break;
        case GGML_FTYPE_MOSTLY_Q8_0:          wtype = GGML_TYPE_Q8_0;    break;
        case GGML_FTYPE_MOSTLY_MXFP4:         wtype = GGML_TYPE_MXFP4;   break;
        case GGML_FTYPE_MOSTLY_NVFP4:         wtype = GGML_TYPE_NVFP4;   break;
        case GGML_FTYPE_MOSTLY_Q2_K:          wtype = GGML_TYPE_Q2_K;    break;
        case GGML_FTYPE_MOSTLY_Q3_K:          wtype = GGML_TYPE_Q3_K;    break;
        case GGML_FTYPE_MOSTLY_Q4_K:          wtype = GGML_TYPE_Q4_K;    break;
        case GGML_FTYPE_MOSTLY_Q5_K:          wtype = GGML_TYPE_Q5_K;    break;
        case GGML_FTYPE_MOSTLY_Q6_K:          wtype = GGML_TYPE_Q6_K;    break;
        case GGML_FTYPE_MOSTLY_IQ2_XXS:       wtype = GGML_TYPE_IQ2_XXS; break;
        case GGML_FTYPE_MOSTLY_IQ2_XS:        wtype = GGML_TYPE_IQ2_XS;  break;
        case GGML_FTYPE_MOSTLY_IQ3_XXS:       wtype = GGML_TYPE_IQ3_XXS; break;
        case GGML_FTYPE_MOSTLY_IQ1_S:         wtype = GGML_TYPE_IQ1_S;   break;
        case GGML_FTYPE_MOSTLY_IQ1_M:         wtype = GGML_TYPE_IQ1_M;   break;
        case GGML_FTYPE_MOSTLY_IQ4_NL:        wtype = GGML_TYPE_IQ4_NL;  break;
        case GGML_FTYPE_MOSTLY_IQ4_XS:        wtype = GGML_TYPE_IQ4_XS;  break;
        case GGML_FTYPE_MOSTLY_IQ3_S:         wtype = GGML_TYPE_IQ3_S;   break;
        case GGML_FTYPE_MOSTLY_IQ2_S:         wtype = GGML_TYPE_IQ2_S;   break;
        case GGML_FTYPE_UNKNOWN:
        case GGML_FTYPE_MOSTLY_Q4_1_SOME_F16: wtype = GGML_TYPE_COUNT;   break;
    }
    GGML_ASSERT(wtype != GGML_TYPE_COUNT && "file type has no single tensor type");
    return wtype;
}

//
// op names
//

static const char * const OP_NAME[GGML_OP_COUNT] = {
    "NONE", "DUP", "ADD", "ADD_ID", "ADD1", "ACC", "SUB", "MUL", "DIV", "SQR", "SQRT", "LOG",
    "SIN", "COS", "SUM", "SUM_ROWS", "CUMSUM", "MEAN", "ARGMAX", "COUNT_EQUAL", "REPEAT",
    "REPEAT_BACK", "CONCAT", "SILU_BACK", "NORM", "RMS_NORM", "RMS_NORM_BACK", "GROUP_NORM",
    "L2_NORM", "MUL_MAT", "MUL_MAT_ID", "OUT_PROD", "SCALE", "SET", "CPY", "CONT", "RESHAPE",
    "VIEW", "PERMUTE", "TRANSPOSE", "GET_ROWS", "GET_ROWS_BACK", "SET_ROWS", "DIAG",
    "DIAG_MASK_INF", "DIAG_MASK_ZERO", "SOFT_MAX", "SOFT_MAX_BACK", "ROPE", "ROPE_BACK",
    "CLAMP", "CONV_TRANSPOSE_1D", "IM2COL", "IM2COL_BACK", "IM2COL_3D", "COL2IM_1D",
    "CONV_2D", "CONV_3D", "CONV_2D_DW", "CONV_TRANSPOSE_2D", "POOL_1D", "POOL_2D",
    "POOL_2D_BACK", "UPSCALE", "PAD", "PAD_REFLECT_1D", "ROLL", "ARANGE",
    "TIMESTEP_EMBEDDING", "ARGSORT", "TOP_K", "LEAKY_RELU", "TRI", "FILL", "FLASH_ATTN_EXT",
    "FLASH_ATTN_BACK", "SSM_CONV", "SSM_SCAN", "WIN_PART", "WIN_UNPART", "GET_REL_POS",
    "ADD_REL_POS", "RWKV_WKV6", "GATED_LINEAR_ATTN", "RWKV_WKV7", "SOLVE_TRI",
    "GATED_DELTA_NET", "LIGHTNING_INDEXER", "DSV4_HC_COMB", "DSV4_HC_PRE", "DSV4_HC_POST",
    "UNARY", "MAP_CUSTOM1", "MAP_CUSTOM2", "MAP_CUSTOM3", "CUSTOM", "CROSS_ENTROPY_LOSS",
    "CROSS_ENTROPY_LOSS_BACK", "OPT_STEP_ADAMW", "OPT_STEP_SGD", "GLU",
};

_Static_assert(GGML_OP_COUNT == 101, "update OP_NAME and OP_SYMBOL");

static const char * const OP_SYMBOL[GGML_OP_COUNT] = {
    "none", "x", "x+y", "x[i]+y", "x+y", "view(x,nb,offset)+=y->x", "x-y", "x*y", "x/y",
    "x^2", "√x", "log(x)", "sin(x)", "cos(x)", "Σx", "Σx_k", "cumsum(x)", "Σx/n",
    "argmax(x)", "count_equal(x)", "repeat(x)", "repeat_back(x)", "concat(x, y)",
    "silu_back(x)", "norm(x)", "rms_norm(x)", "rms_norm_back(x)", "group_norm(x)",
    "l2_norm(x)", "X*Y", "X[i]*Y", "X*Y", "x*v", "y-\\>view(x)", "x-\\>y", "cont(x)",
    "reshape(x)", "view(x)", "permute(x)", "transpose(x)", "get_rows(x)", "get_rows_back(x)",
    "set_rows(x)", "diag(x)", "diag_mask_inf(x)", "diag_mask_zero(x)", "soft_max(x)",
    "soft_max_back(x)", "rope(x)", "rope_back(x)", "clamp(x)", "conv_transpose_1d(x)",
    "im2col(x)", "im2col_back(x)", "im2col_3d(x)", "col2im_1d(x)", "conv_2d(x)",
    "conv_3d(x)", "conv_2d_dw(x)", "conv_transpose_2d(x)", "pool_1d(x)", "pool_2d(x)",
    "pool_2d_back(x)", "upscale(x)", "pad(x)", "pad_reflect_1d(x)", "roll(x)",
    "arange(start, stop, step)", "timestep_embedding(timesteps, dim, max_period)",
    "argsort(x)", "top_k(x)", "leaky_relu(x)", "tri(x)", "fill(x, c)", "flash_attn_ext(x)",
    "flash_attn_back(x)", "ssm_conv(x)", "ssm_scan(x)", "win_part(x)", "win_unpart(x)",
    "get_rel_pos(x)", "add_rel_pos(x)", "rwkv_wkv6(k, v, r, tf, td, s)",
    "gated_linear_attn(k, v, q, gate, s)", "rwkv_wkv7(r, w, k, v, a, b, s)",
    "A X = B, A triangular, solve X", "gated_delta_net(q, k, v, g, beta, s)",
    "lightning_indexer(q, k, weights, mask)", "dsv4_hc_comb(mixes, scale, base)",
    "dsv4_hc_pre(x, weights)", "dsv4_hc_post(x, residual, post, comb)", "unary(x)",
    "map_custom(x)", "map_custom(x,y)", "map_custom(x,y,z)", "custom(x)",
    "cross_entropy_loss(x,y)", "cross_entropy_loss_back(x,y)", "adamw(x)", "sgd(x)", "glu(x)",
};

// from the lists of ggml-op-list.h, which hold every unary and GLU op
static const char * const UNARY_OP_NAME[GGML_UNARY_OP_COUNT] = {
#define X(NAME, ...) [GGML_UNARY_OP_##NAME] = #NAME,
    GGML_OP_LIST_UNARY_FNS(X)
#undef X
};

#define X(NAME, ...) + 1
_Static_assert(GGML_UNARY_OP_COUNT == 0 GGML_OP_LIST_UNARY_FNS(X), "a unary op missing in ggml-op-list.h");
#undef X

static const char * const GLU_OP_NAME[GGML_GLU_OP_COUNT] = {
#define X(NAME, ...) [GGML_GLU_OP_##NAME] = #NAME,
    GGML_OP_LIST_GLU(X)
#undef X
};

#define X(NAME, ...) + 1
_Static_assert(GGML_GLU_OP_COUNT == 0 GGML_OP_LIST_GLU(X), "a GLU op missing in ggml-op-list.h");
#undef X

const char * ggml_op_name(enum ggml_op op) {
    return op >= 0 && op < GGML_OP_COUNT ? OP_NAME[op] : "INVALID";
}

const char * ggml_op_symbol(enum ggml_op op) {
    return op >= 0 && op < GGML_OP_COUNT ? OP_SYMBOL[op] : "invalid";
}

const char * ggml_unary_op_name(enum ggml_unary_op op) {
    return op >= 0 && op < GGML_UNARY_OP_COUNT ? UNARY_OP_NAME[op] : "INVALID";
}

const char * ggml_glu_op_name(enum ggml_glu_op op) {
    return op >= 0 && op < GGML_GLU_OP_COUNT ? GLU_OP_NAME[op] : "INVALID";
}

const char * ggml_op_desc(const struct ggml_tensor * t) {
    if (t->op == GGML_OP_UNARY) {
        return ggml_unary_op_name(ggml_get_unary_op(t));
    }
    if (t->op == GGML_OP_GLU) {
        return ggml_glu_op_name(ggml_get_glu_op(t));
    }
    return ggml_op_name(t->op);
}

const char * ggml_status_to_string(enum ggml_status status) {
    switch (status) {
        case GGML_STATUS_ALLOC_FAILED: return "GGML status: error (failed to allocate memory)";
        case GGML_STATUS_FAILED:       return "GGML status: error (operation failed)";
        case GGML_STATUS_SUCCESS:      return "GGML status: success";
        case GGML_STATUS_ABORTED:      return "GGML status: warning (operation aborted)";
    }
    return "GGML status: unknown";
}
