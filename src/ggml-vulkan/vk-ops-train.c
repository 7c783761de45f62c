// vk-ops-train.c: the training ops on the Vulkan device: the backward ops
// SILU_BACK, RMS_NORM_BACK, SOFT_MAX_BACK, REPEAT_BACK and GET_ROWS_BACK,
// OUT_PROD (the gradient of a matrix product's weights), the loss
// CROSS_ENTROPY_LOSS with its gradient, and the optimizer steps
// OPT_STEP_ADAMW and OPT_STEP_SGD, REPEAT (the gradient of SUM and MEAN),
// and the ops of ggml-opt's accuracy, ARGMAX and COUNT_EQUAL (SUM, MEAN,
// SQR and SQRT are in vk-ops-record.c with their kin): which nodes the device takes
// and how each is recorded: one entry per op in k_train_ops (ggml_vk_train_op_impl).
//
// Everything is F32, as on the CPU. Sources may have any strides (in whole
// elements, which layout_ok of vk-ops.c checks for every op); results have
// contiguous rows, GET_ROWS_BACK's and the optimizer steps' tensors are
// contiguous. The shaders: train_rows.comp (the row-wise backward ops and
// the loss gradient), cross_entropy.comp, repeat_back.comp,
// get_rows_back.comp, out_prod.comp, opt_step.comp, argmax.comp,
// count_equal.comp, repeat.comp.

#include "vk-impl.h"

#define SRCS(...) ((const struct ggml_tensor * const[GGML_VK_MAX_BINDINGS - 1]) { __VA_ARGS__ })

static uint32_t u32(int64_t v) {
    return (uint32_t) v;
}

static uint32_t div_up(uint64_t n, uint32_t d) {
    return (uint32_t) ((n + d - 1) / d);
}

// stride i of an F32 (or I32) tensor in elements
static uint32_t el(const struct ggml_tensor * t, int i) {
    return (uint32_t) (t->nb[i] / 4);
}

static bool is_f32(const struct ggml_tensor * t) {
    return t->type == GGML_TYPE_F32;
}

static bool all_f32(const struct ggml_tensor * op, int n_src) {
    bool ok = is_f32(op) && op->nb[0] == sizeof(float);
    for (int i = 0; i < n_src; i++) {
        ok = ok && op->src[i] != NULL && is_f32(op->src[i]);
    }
    return ok;
}

// the supports of each op: everything F32 unless said otherwise

static bool supports_rows_back(const struct ggml_tensor * op) { // SILU_BACK RMS_NORM_BACK
    return all_f32(op, 2) && ggml_are_same_shape(op, op->src[0]) && ggml_are_same_shape(op, op->src[1]);
}

static bool supports_soft_max_back(const struct ggml_tensor * op) {
    // no ALiBi, as on the CPU and upstream
    return supports_rows_back(op) && ggml_get_op_params_f32(op, 1) == 0.0f;
}

static bool supports_cross_entropy(const struct ggml_tensor * op) {
    return all_f32(op, 2) && ggml_nelements(op) == 1 && ggml_are_same_shape(op->src[0], op->src[1]);
}

static bool supports_cross_entropy_back(const struct ggml_tensor * op) {
    return all_f32(op, 3) && ggml_nelements(op->src[0]) == 1 && ggml_are_same_shape(op, op->src[1]) &&
           ggml_are_same_shape(op, op->src[2]);
}

static bool supports_repeat_back(const struct ggml_tensor * op) {
    return all_f32(op, 1) && ggml_can_repeat(op, op->src[0]);
}

static bool supports_repeat(const struct ggml_tensor * op) {
    return all_f32(op, 1) && ggml_can_repeat(op->src[0], op);
}

static bool supports_get_rows_back(const struct ggml_tensor * op) {
    return all_f32(op, 1) && ggml_is_contiguous(op) && op->src[1]->type == GGML_TYPE_I32 &&
           op->src[0]->ne[0] == op->ne[0] && op->src[0]->ne[1] >= op->src[1]->ne[0] && ggml_nrows(op) == op->ne[1];
}

static bool supports_out_prod(const struct ggml_tensor * op) {
    return all_f32(op, 2) && op->src[0]->ne[1] == op->src[1]->ne[1] && op->ne[2] % op->src[0]->ne[2] == 0 &&
           op->ne[3] % op->src[0]->ne[3] == 0;
}

static bool supports_adamw(const struct ggml_tensor * op) {
    return all_f32(op, 5) && ggml_is_contiguous(op->src[0]) && ggml_is_contiguous(op->src[1]) &&
           ggml_is_contiguous(op->src[2]) && ggml_is_contiguous(op->src[3]) && ggml_nelements(op->src[4]) == 7 &&
           ggml_is_contiguous(op->src[4]);
}

static bool supports_sgd(const struct ggml_tensor * op) {
    return all_f32(op, 3) && ggml_is_contiguous(op->src[0]) && ggml_is_contiguous(op->src[1]) &&
           ggml_nelements(op->src[2]) == 2 && ggml_is_contiguous(op->src[2]);
}

static bool supports_argmax(const struct ggml_tensor * op) {
    return is_f32(op->src[0]) && op->type == GGML_TYPE_I32 && ggml_is_contiguous(op);
}

static bool supports_count_equal(const struct ggml_tensor * op) {
    return op->src[0]->type == GGML_TYPE_I32 && op->src[1]->type == GGML_TYPE_I32 &&
           ggml_are_same_shape(op->src[0], op->src[1]) && op->type == GGML_TYPE_I64 && ggml_nelements(op) == 1;
}

//
// the row-wise ops (train_rows.comp)
//

struct pc_train_rows {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t nba0, nba1, nba2, nba3;
    uint32_t nbb0, nbb1, nbb2, nbb3;
    uint32_t nbc0, nbc1, nbc2, nbc3;
    uint32_t nb1, nb2, nb3;
    uint32_t a_off, b_off, c_off, d_off;
    uint32_t op;
    float    p0;
};

static bool record_train_rows(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const struct ggml_tensor * c = dst->src[2]; // CROSS_ENTROPY_LOSS_BACK only
    uint32_t op = 0;
    float p0 = 0.0f;
    switch (dst->op) {
        case GGML_OP_SILU_BACK:     op = 0; break;
        case GGML_OP_RMS_NORM_BACK: op = 1; p0 = ggml_get_op_params_f32(dst, 0); break;
        case GGML_OP_SOFT_MAX_BACK: op = 2; p0 = ggml_get_op_params_f32(dst, 0); break;
        default:                    op = 3; p0 = 1.0f / (float) ggml_nrows(b); break;
    }
    const struct pc_train_rows pc = {
        .ne0 = u32(dst->ne[0]), .ne1 = u32(dst->ne[1]), .ne2 = u32(dst->ne[2]), .ne3 = u32(dst->ne[3]),
        .nba0 = el(a, 0), .nba1 = el(a, 1), .nba2 = el(a, 2), .nba3 = el(a, 3),
        .nbb0 = el(b, 0), .nbb1 = el(b, 1), .nbb2 = el(b, 2), .nbb3 = el(b, 3),
        .nbc0 = c != NULL ? el(c, 0) : 0, .nbc1 = c != NULL ? el(c, 1) : 0,
        .nbc2 = c != NULL ? el(c, 2) : 0, .nbc3 = c != NULL ? el(c, 3) : 0,
        .nb1 = el(dst, 1), .nb2 = el(dst, 2), .nb3 = el(dst, 3),
        .a_off = ggml_vk_misalign(s, a, 4), .b_off = ggml_vk_misalign(s, b, 4), .c_off = ggml_vk_misalign(s, c, 4),
        .d_off = ggml_vk_misalign(s, dst, 4), .op = op, .p0 = p0,
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_train_rows, SRCS(a, b, c), dst, &pc, sizeof(pc), (uint32_t) ggml_nrows(dst));
}

struct pc_cross_entropy {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t nba0, nba1, nba2, nba3;
    uint32_t nbb0, nbb1, nbb2, nbb3;
    uint32_t a_off, b_off, d_off;
};

static bool record_cross_entropy(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const struct pc_cross_entropy pc = {
        .ne0 = u32(a->ne[0]), .ne1 = u32(a->ne[1]), .ne2 = u32(a->ne[2]), .ne3 = u32(a->ne[3]),
        .nba0 = el(a, 0), .nba1 = el(a, 1), .nba2 = el(a, 2), .nba3 = el(a, 3),
        .nbb0 = el(b, 0), .nbb1 = el(b, 1), .nbb2 = el(b, 2), .nbb3 = el(b, 3),
        .a_off = ggml_vk_misalign(s, a, 4), .b_off = ggml_vk_misalign(s, b, 4), .d_off = ggml_vk_misalign(s, dst, 4),
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_cross_entropy, SRCS(a, b), dst, &pc, sizeof(pc), 1);
}

//
// REPEAT_BACK, GET_ROWS_BACK, OUT_PROD
//

struct pc_repeat_back {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t nr0, nr1, nr2, nr3;
    uint32_t nba0, nba1, nba2, nba3;
    uint32_t nb0, nb1, nb2, nb3;
    uint32_t a_off, d_off;
};

static bool record_repeat_back(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct pc_repeat_back pc = {
        .ne0 = u32(dst->ne[0]), .ne1 = u32(dst->ne[1]), .ne2 = u32(dst->ne[2]), .ne3 = u32(dst->ne[3]),
        .nr0 = u32(a->ne[0] / dst->ne[0]), .nr1 = u32(a->ne[1] / dst->ne[1]),
        .nr2 = u32(a->ne[2] / dst->ne[2]), .nr3 = u32(a->ne[3] / dst->ne[3]),
        .nba0 = el(a, 0), .nba1 = el(a, 1), .nba2 = el(a, 2), .nba3 = el(a, 3),
        .nb0 = el(dst, 0), .nb1 = el(dst, 1), .nb2 = el(dst, 2), .nb3 = el(dst, 3),
        .a_off = ggml_vk_misalign(s, a, 4), .d_off = ggml_vk_misalign(s, dst, 4),
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_repeat_back, SRCS(a), dst, &pc, sizeof(pc),
                            div_up((uint64_t) ggml_nelements(dst), 256));
}

struct pc_repeat {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t ne00, ne01, ne02, ne03;
    uint32_t nba0, nba1, nba2, nba3;
    uint32_t nb0, nb1, nb2, nb3;
    uint32_t a_off, d_off;
};

static bool record_repeat(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct pc_repeat pc = {
        .ne0 = u32(dst->ne[0]), .ne1 = u32(dst->ne[1]), .ne2 = u32(dst->ne[2]), .ne3 = u32(dst->ne[3]),
        .ne00 = u32(a->ne[0]), .ne01 = u32(a->ne[1]), .ne02 = u32(a->ne[2]), .ne03 = u32(a->ne[3]),
        .nba0 = el(a, 0), .nba1 = el(a, 1), .nba2 = el(a, 2), .nba3 = el(a, 3),
        .nb0 = el(dst, 0), .nb1 = el(dst, 1), .nb2 = el(dst, 2), .nb3 = el(dst, 3),
        .a_off = ggml_vk_misalign(s, a, 4), .d_off = ggml_vk_misalign(s, dst, 4),
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_repeat, SRCS(a), dst, &pc, sizeof(pc),
                            div_up((uint64_t) ggml_nelements(dst), 256));
}

struct pc_get_rows_back {
    uint32_t nc, nr, n_idx;
    uint32_t nbg0, nbg1;
    uint32_t nbi0;
    uint32_t g_off, i_off, d_off;
};

static bool record_get_rows_back(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * g = dst->src[0];
    const struct ggml_tensor * idx = dst->src[1];
    const struct pc_get_rows_back pc = {
        .nc = u32(dst->ne[0]), .nr = u32(dst->ne[1]), .n_idx = u32(idx->ne[0]),
        .nbg0 = el(g, 0), .nbg1 = el(g, 1), .nbi0 = el(idx, 0),
        .g_off = ggml_vk_misalign(s, g, 4), .i_off = ggml_vk_misalign(s, idx, 4), .d_off = ggml_vk_misalign(s, dst, 4),
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_get_rows_back, SRCS(g, idx), dst, &pc, sizeof(pc), div_up((uint64_t) ggml_nelements(dst), 64));
}

struct pc_out_prod {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t K, r2, r3;
    uint32_t nba0, nba1, nba2, nba3;
    uint32_t nbb0, nbb1, nbb2, nbb3;
    uint32_t nb0, nb1, nb2, nb3;
    uint32_t a_off, b_off, d_off;
};

static bool record_out_prod(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const struct pc_out_prod pc = {
        .ne0 = u32(dst->ne[0]), .ne1 = u32(dst->ne[1]), .ne2 = u32(dst->ne[2]), .ne3 = u32(dst->ne[3]),
        .K = u32(a->ne[1]), .r2 = u32(dst->ne[2] / a->ne[2]), .r3 = u32(dst->ne[3] / a->ne[3]),
        .nba0 = el(a, 0), .nba1 = el(a, 1), .nba2 = el(a, 2), .nba3 = el(a, 3),
        .nbb0 = el(b, 0), .nbb1 = el(b, 1), .nbb2 = el(b, 2), .nbb3 = el(b, 3),
        .nb0 = el(dst, 0), .nb1 = el(dst, 1), .nb2 = el(dst, 2), .nb3 = el(dst, 3),
        .a_off = ggml_vk_misalign(s, a, 4), .b_off = ggml_vk_misalign(s, b, 4), .d_off = ggml_vk_misalign(s, dst, 4),
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_out_prod, SRCS(a, b), dst, &pc, sizeof(pc),
                            div_up((uint64_t) ggml_nelements(dst), 256));
}

//
// optimizer steps: in place on src0 (the result is a view of it)
//

struct pc_opt_step {
    uint32_t n;
    uint32_t w_off, g_off, m_off, v_off, h_off;
};

static bool record_opt_step(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const bool adamw = dst->op == GGML_OP_OPT_STEP_ADAMW;
    const struct ggml_tensor * w = dst->src[0];
    const struct ggml_tensor * g = dst->src[1];
    const struct ggml_tensor * m = adamw ? dst->src[2] : NULL;
    const struct ggml_tensor * v = adamw ? dst->src[3] : NULL;
    const struct ggml_tensor * hp = dst->src[adamw ? 4 : 2];
    const struct pc_opt_step pc = {
        .n = u32(ggml_nelements(w)),
        .w_off = ggml_vk_misalign(s, w, 4), .g_off = ggml_vk_misalign(s, g, 4), .m_off = ggml_vk_misalign(s, m, 4),
        .v_off = ggml_vk_misalign(s, v, 4), .h_off = ggml_vk_misalign(s, hp, 4),
    };
    const uint32_t groups = div_up((uint64_t) ggml_nelements(w), 256);
    if (adamw) {
        return ggml_vk_dispatch(s, GGML_VK_PIPE_opt_step_adamw, SRCS(w, g, m, v, hp), dst, &pc, sizeof(pc), groups);
    }
    return ggml_vk_dispatch(s, GGML_VK_PIPE_opt_step_sgd, SRCS(w, g, hp), dst, &pc, sizeof(pc), groups);
}

//
// ARGMAX, COUNT_EQUAL
//

struct pc_argmax {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t nba0, nba1, nba2, nba3;
    uint32_t a_off, d_off;
};

static bool record_argmax(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct pc_argmax pc = {
        .ne0 = u32(a->ne[0]), .ne1 = u32(a->ne[1]), .ne2 = u32(a->ne[2]), .ne3 = u32(a->ne[3]),
        .nba0 = el(a, 0), .nba1 = el(a, 1), .nba2 = el(a, 2), .nba3 = el(a, 3),
        .a_off = ggml_vk_misalign(s, a, 4), .d_off = ggml_vk_misalign(s, dst, 4),
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_argmax, SRCS(a), dst, &pc, sizeof(pc), (uint32_t) ggml_nrows(a));
}

struct pc_count_equal {
    uint32_t ne0, ne1, ne2, ne3;
    uint32_t nba0, nba1, nba2, nba3;
    uint32_t nbb0, nbb1, nbb2, nbb3;
    uint32_t a_off, b_off, d_off;
};

static bool record_count_equal(struct ggml_vk_stream * s, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const struct pc_count_equal pc = {
        .ne0 = u32(a->ne[0]), .ne1 = u32(a->ne[1]), .ne2 = u32(a->ne[2]), .ne3 = u32(a->ne[3]),
        .nba0 = el(a, 0), .nba1 = el(a, 1), .nba2 = el(a, 2), .nba3 = el(a, 3),
        .nbb0 = el(b, 0), .nbb1 = el(b, 1), .nbb2 = el(b, 2), .nbb3 = el(b, 3),
        .a_off = ggml_vk_misalign(s, a, 4), .b_off = ggml_vk_misalign(s, b, 4), .d_off = ggml_vk_misalign(s, dst, 4),
    };
    return ggml_vk_dispatch(s, GGML_VK_PIPE_count_equal, SRCS(a, b), dst, &pc, sizeof(pc), 1);
}

// one entry per op: its supports and its recorder, side by side
static const struct ggml_vk_op_impl k_train_ops[GGML_OP_COUNT] = {
    [GGML_OP_SILU_BACK]               = { supports_rows_back,          record_train_rows },
    [GGML_OP_RMS_NORM_BACK]           = { supports_rows_back,          record_train_rows },
    [GGML_OP_SOFT_MAX_BACK]           = { supports_soft_max_back,      record_train_rows },
    [GGML_OP_CROSS_ENTROPY_LOSS_BACK] = { supports_cross_entropy_back, record_train_rows },
    [GGML_OP_CROSS_ENTROPY_LOSS]      = { supports_cross_entropy,      record_cross_entropy },
    [GGML_OP_REPEAT_BACK]             = { supports_repeat_back,        record_repeat_back },
    [GGML_OP_REPEAT]                  = { supports_repeat,             record_repeat },
    [GGML_OP_GET_ROWS_BACK]           = { supports_get_rows_back,      record_get_rows_back },
    [GGML_OP_OUT_PROD]                = { supports_out_prod,           record_out_prod },
    [GGML_OP_OPT_STEP_ADAMW]          = { supports_adamw,              record_opt_step },
    [GGML_OP_OPT_STEP_SGD]            = { supports_sgd,                record_opt_step },
    [GGML_OP_ARGMAX]                  = { supports_argmax,             record_argmax },
    [GGML_OP_COUNT_EQUAL]             = { supports_count_equal,        record_count_equal },
};

const struct ggml_vk_op_impl * ggml_vk_train_op_impl(enum ggml_op op) {
    return k_train_ops[op].record != NULL ? &k_train_ops[op] : NULL;
}
