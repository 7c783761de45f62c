// vk-ops.c: which nodes the Vulkan device computes (supports_op).
//
// The answer is exactly what vk-ops-record.c records; the scheduler runs
// everything else elsewhere. Common conditions: element counts and byte
// sizes fit 32 bits (the shaders index with uint) and every tensor fits one
// storage-buffer binding (maxStorageBufferRange: 128 MiB on lavapipe), strides and view offsets
// are multiples of the element size (the shaders index typed arrays; rows of
// quantized blocks need even offsets, MXFP4 ones none), and rows read as rows
// are contiguous.

#include "vk-impl.h"

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

// the unit of a tensor's strides and offset in the shaders (MXFP4 blocks,
// 17 bytes, hold no 16-bit field: read byte by byte)
static size_t index_unit(const struct ggml_tensor * t) {
    if (t->type == GGML_TYPE_MXFP4) {
        return 1;
    }
    return ggml_is_quantized(t->type) ? 2 : ggml_type_size(t->type);
}

// indexable by the shaders and bindable as one storage buffer (NULL is
// fine: an absent optional source)
static bool layout_ok(const struct ggml_vk_device * d, const struct ggml_tensor * t) {
    if (t == NULL) {
        return true;
    }
    const size_t unit = index_unit(t);
    if (ggml_nbytes(t) > d->max_buffer_size || (uint64_t) ggml_nelements(t) > UINT32_MAX ||
        (t->view_src != NULL && ggml_nbytes(t->view_src) > d->max_buffer_size)) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (t->nb[i] % unit != 0 || t->ne[i] > UINT32_MAX) {
            return false;
        }
    }
    if (ggml_is_quantized(t->type) && t->nb[0] != ggml_type_size(t->type)) {
        return false;
    }
    return t->view_src == NULL || t->view_offs % unit == 0;
}

static bool rows_contiguous(const struct ggml_tensor * t) {
    return t->nb[0] == ggml_type_size(t->type);
}

static bool supports_mul_mat(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    return is_weight_type(a->type) && b->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 &&
           rows_contiguous(a) && b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0;
}

static bool supports_mul_mat_id(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    const struct ggml_tensor * ids = op->src[2];
    return is_weight_type(a->type) && b->type == GGML_TYPE_F32 && ids->type == GGML_TYPE_I32 && op->type == GGML_TYPE_F32 &&
           rows_contiguous(a) && a->ne[3] == 1 && b->ne[3] == 1;
}

static bool supports_get_rows(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    return is_weight_type(a->type) && op->src[1]->type == GGML_TYPE_I32 && op->type == GGML_TYPE_F32 && rows_contiguous(a);
}

// the quantized types CPY and SET_ROWS write (KV caches)
static bool is_cache_quant_type(enum ggml_type t) {
    return t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q4_0;
}

static bool supports_eltwise(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    if (op->op == GGML_OP_CPY && a->type == GGML_TYPE_F32 && is_cache_quant_type(op->type)) {
        return ggml_nelements(a) == ggml_nelements(op) && op->ne[0] % 32 == 0;
    }
    if (!is_float_type(a->type) || !is_float_type(op->type)) {
        return false;
    }
    switch (op->op) {
        case GGML_OP_ADD: case GGML_OP_SUB: case GGML_OP_MUL: case GGML_OP_DIV: case GGML_OP_ADD1:
            return is_float_type(b->type) && op->type == a->type && ggml_can_repeat(b, a);
        case GGML_OP_CPY: case GGML_OP_DUP: case GGML_OP_CONT:
            return ggml_nelements(a) == ggml_nelements(op);
        default:
            return op->type == a->type && ggml_are_same_shape(a, op);
    }
}

static bool supports_unary(const struct ggml_tensor * op) {
    switch (ggml_get_unary_op(op)) {
        case GGML_UNARY_OP_SILU: case GGML_UNARY_OP_GELU: case GGML_UNARY_OP_GELU_QUICK: case GGML_UNARY_OP_GELU_ERF:
        case GGML_UNARY_OP_RELU: case GGML_UNARY_OP_TANH: case GGML_UNARY_OP_SIGMOID: case GGML_UNARY_OP_NEG:
        case GGML_UNARY_OP_EXP: case GGML_UNARY_OP_STEP:
            return supports_eltwise(op);
        default:
            return false;
    }
}

static bool supports_glu(const struct ggml_tensor * op) {
    const enum ggml_glu_op g = ggml_get_glu_op(op);
    if (g != GGML_GLU_OP_REGLU && g != GGML_GLU_OP_GEGLU && g != GGML_GLU_OP_SWIGLU && g != GGML_GLU_OP_GEGLU_ERF &&
        g != GGML_GLU_OP_GEGLU_QUICK) {
        return false;
    }
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    const enum ggml_type t = op->type;
    return (t == GGML_TYPE_F32 || t == GGML_TYPE_F16) && a->type == t && rows_contiguous(a) && rows_contiguous(op) &&
           (b == NULL || (b->type == t && rows_contiguous(b) && ggml_are_same_shape(b, op)));
}

static bool supports_rows_f32(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    return a->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 && rows_contiguous(a) && rows_contiguous(op);
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

static bool supports_set_rows(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * idx = op->src[1];
    const bool quant = is_cache_quant_type(op->type) && a->ne[0] % 32 == 0;
    return a->type == GGML_TYPE_F32 && rows_contiguous(a) && (is_float_type(op->type) || quant) && rows_contiguous(op) &&
           (idx->type == GGML_TYPE_I64 || idx->type == GGML_TYPE_I32) && a->ne[2] % idx->ne[1] == 0 && a->ne[3] % idx->ne[2] == 0;
}

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

static bool supports_concat(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    const size_t sz = ggml_type_size(op->type);
    return !ggml_is_quantized(op->type) && (sz == 2 || sz == 4) && a->type == op->type && b->type == op->type;
}

// rows that fit the shared memory of argsort.comp
static bool supports_argsort(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    return a->type == GGML_TYPE_F32 && op->type == GGML_TYPE_I32 && rows_contiguous(a) && rows_contiguous(op) &&
           a->ne[0] <= 1024;
}

static bool supports_node(const struct ggml_tensor * op) {
    switch (op->op) {
        case GGML_OP_MUL_MAT:
            return supports_mul_mat(op);
        case GGML_OP_MUL_MAT_ID:
            return supports_mul_mat_id(op);
        case GGML_OP_GET_ROWS:
            return supports_get_rows(op);
        case GGML_OP_ADD: case GGML_OP_SUB: case GGML_OP_MUL: case GGML_OP_DIV: case GGML_OP_ADD1:
        case GGML_OP_SCALE: case GGML_OP_CLAMP: case GGML_OP_CPY: case GGML_OP_DUP: case GGML_OP_CONT:
        case GGML_OP_SQR: case GGML_OP_SQRT:
            return supports_eltwise(op);
        case GGML_OP_UNARY:
            return supports_unary(op);
        case GGML_OP_GLU:
            return supports_glu(op);
        case GGML_OP_NORM: case GGML_OP_RMS_NORM: case GGML_OP_L2_NORM: case GGML_OP_SUM_ROWS: case GGML_OP_MEAN:
            return supports_rows_f32(op);
        case GGML_OP_SUM:
            return op->src[0]->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 && ggml_is_contiguous(op->src[0]);
        case GGML_OP_SOFT_MAX:
            return supports_soft_max(op);
        case GGML_OP_ROPE:
            return supports_rope(op);
        case GGML_OP_SET_ROWS:
            return supports_set_rows(op);
        case GGML_OP_FLASH_ATTN_EXT:
            return supports_flash_attn(op);
        case GGML_OP_CONCAT:
            return supports_concat(op);
        case GGML_OP_ARGSORT:
            return supports_argsort(op);
        default:
            return ggml_vk_supports_train_op(op);
    }
}

bool ggml_vk_supports_op(const struct ggml_vk_device * d, const struct ggml_tensor * op) {
    switch (op->op) {
        case GGML_OP_NONE: case GGML_OP_VIEW: case GGML_OP_RESHAPE: case GGML_OP_PERMUTE: case GGML_OP_TRANSPOSE:
            return true; // nothing to compute
        default:
            break;
    }
    if (!supports_node(op)) {
        return false;
    }
    if (!layout_ok(d, op)) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (!layout_ok(d, op->src[i])) {
            return false;
        }
    }
    return true;
}
