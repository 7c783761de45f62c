// ggml-backend-meta-split.c: the split state of every tensor in a meta buffer.
//
// A tensor the program allocated (weights, caches: a buffer not used for
// compute, and not a view) is split as the program's callback says. A graph
// node's state follows from its sources' states by the op's rule, the rules
// upstream's meta backend has (most ops keep their source's split; MUL_MAT of
// two tensors split along the shared K dimension gives a PARTIAL sum; reshapes,
// views and permutations move the split axis). Beyond upstream's rules: a
// single-source GLU of rows split in one block takes its source whole (the
// compute file gathers it) and is whole itself, and a product of a weight
// split along K with a whole src1 is a PARTIAL sum (each device takes its K
// columns of src1): llama.cpp's split of fused up+gate weights. An op whose
// sources are split in a way its rule does not cover aborts with the op's
// name, as upstream does: that is a graph the program should not have built
// for a meta device.
//
// A meta device of one device holds every slice of every tensor there: its
// nodes are all whole (MIRRORED), whatever the weights' splits, so no rule
// can fail (llama.cpp's tensor split over one GPU).
//
// When a node is split along a dimension, each device's extent is taken from
// the first split source in proportion, so that uneven splits (3 and 5 of 8
// rows) carry through the graph.
//
// States are cached per tensor address together with a copy of the tensor's
// header: a new tensor at a reused address clears the cache.

#include "ggml-backend-meta-impl.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ggml_backend_meta_split_state split_state_t;

static split_state_t ss_make(enum ggml_backend_meta_split_axis axis, uint32_t nr0) {
    split_state_t ss;
    memset(&ss, 0, sizeof(ss));
    ss.axis       = axis;
    ss.nr[0]      = nr0;
    ss.n_segments = 1;
    return ss;
}

// what a rule sees
struct split_rule_args {
    const struct ggml_tensor * tensor;
    const split_state_t      * src_ss;   // GGML_MAX_SRC states (UNKNOWN for absent sources)
    size_t                     n_bufs;
    bool                       assume_sync;
};

// same axis and the same total extent per device
static bool ss_equal(const split_state_t * a, const split_state_t * b, size_t n_bufs) {
    if (a->axis != b->axis) {
        return false;
    }
    for (size_t j = 0; j < n_bufs; j++) {
        if (ggml_meta_split_extent(a, n_bufs, j) != ggml_meta_split_extent(b, n_bufs, j)) {
            return false;
        }
    }
    return true;
}

// "0 {3, 4}": an axis and, for a dimension, each device's extent
static void ss_describe(const split_state_t * ss, size_t n_bufs, char * buf, size_t size) {
    int at = snprintf(buf, size, "%s", ggml_backend_meta_split_axis_name(ss->axis));
    for (size_t j = 0; ggml_meta_axis_is_dim(ss->axis) && j < n_bufs && at > 0 && (size_t) at < size; j++) {
        at += snprintf(buf + at, size - (size_t) at, "%s%" PRId64 "%s", j == 0 ? " {" : ", ", ggml_meta_split_extent(ss, n_bufs, j),
                       j + 1 == n_bufs ? "}" : "");
    }
}

static _Noreturn void split_rule_fail(const struct split_rule_args * a, const char * why) {
    const struct ggml_tensor * t = a->tensor;
    char s0[160] = "-", s1[160] = "-";
    if (t->src[0] != NULL) {
        ss_describe(&a->src_ss[0], a->n_bufs, s0, sizeof(s0));
    }
    if (t->src[1] != NULL) {
        ss_describe(&a->src_ss[1], a->n_bufs, s1, sizeof(s1));
    }
    GGML_ABORT("meta backend: no split for %s '%s' (%s): sources '%s' split %s, '%s' split %s", ggml_op_desc(t), t->name, why,
               t->src[0] ? t->src[0]->name : "-", s0, t->src[1] ? t->src[1]->name : "-", s1);
}

// all sources split alike (scalar_only: only MIRRORED or PARTIAL allowed)
static split_state_t rule_generic(const struct split_rule_args * a, bool scalar_only) {
    split_state_t ret = ss_make(GGML_BACKEND_SPLIT_AXIS_NONE, 1);
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * src = a->tensor->src[i];
        if (src == NULL || src == a->tensor) {
            continue;
        }
        if (ret.axis == GGML_BACKEND_SPLIT_AXIS_NONE) {
            ret = a->src_ss[i];
        } else if (!ss_equal(&a->src_ss[i], &ret, a->n_bufs)) {
            split_rule_fail(a, "sources split differently");
        }
    }
    if (ret.axis == GGML_BACKEND_SPLIT_AXIS_NONE) {
        split_rule_fail(a, "no sources");
    }
    if (scalar_only && ggml_meta_axis_is_dim(ret.axis)) {
        split_rule_fail(a, "the op needs whole rows");
    }
    return ret;
}

// ops that work on whole rows: any split but along the rows
static split_state_t rule_per_row(const struct split_rule_args * a) {
    if (a->src_ss[0].axis == GGML_BACKEND_SPLIT_AXIS_0) {
        split_rule_fail(a, "rows split");
    }
    return a->src_ss[0];
}

// binary ops broadcasting src1 over src0 (and ADD_ID)
static split_state_t rule_bin_bcast(const struct split_rule_args * a) {
    const split_state_t * ss = a->src_ss;
    const struct ggml_tensor * t = a->tensor;
    if (ggml_meta_axis_is_dim(ss[0].axis) && t->src[1]->ne[ss[0].axis] == 1 && ss[1].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        return ss[0];
    }
    if (t->src[2] != NULL && ss[2].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED && (ss[0].axis == ss[1].axis ||
            (ss[0].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED && ss[1].axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL))) {
        return ss[0]; // ADD_ID
    }
    if (t->src[2] != NULL && ss[2].axis != GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        split_rule_fail(a, "ids not mirrored");
    }
    return rule_generic(a, false);
}

// SOFT_MAX: a mask broadcast over the split batch dimension (attention split by heads) stays whole
static split_state_t rule_soft_max(const struct split_rule_args * a) {
    const split_state_t * ss = a->src_ss;
    const struct ggml_tensor * t = a->tensor;
    if ((ss[0].axis == GGML_BACKEND_SPLIT_AXIS_2 || ss[0].axis == GGML_BACKEND_SPLIT_AXIS_3) && t->src[1] != NULL &&
        t->src[2] == NULL && t->src[1]->ne[ss[0].axis] == 1 && ss[1].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        return ss[0];
    }
    return rule_generic(a, false);
}

static split_state_t rule_concat(const struct split_rule_args * a) {
    const split_state_t * ss = a->src_ss;
    const int concat_axis = ggml_get_op_params_i32(a->tensor, 0);
    if (ss[0].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED && ggml_meta_axis_is_dim(ss[1].axis) && (int) ss[1].axis != concat_axis) {
        return ss[1];
    }
    if (ss[1].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED && ggml_meta_axis_is_dim(ss[0].axis) && (int) ss[0].axis != concat_axis) {
        return ss[0];
    }
    if (ss[0].axis == ss[1].axis && (int) ss[0].axis != concat_axis) {
        return ss[0];
    }
    return rule_generic(a, true);
}

// A single-source GLU takes the two halves of each row: split along the rows
// in one block (llama.cpp's fused up+gate weights, cut where the devices'
// shares end, not at the halves), a device's slice holds neither pair, so the
// source is gathered whole on every device first and the GLU is mirrored.
// (Split in two segments or in two repeats, each device holds the matching
// parts of both halves and the GLU runs on its slice.)
static bool glu_src_needs_gather(const struct ggml_tensor * t, const split_state_t * src_ss) {
    return t->op == GGML_OP_GLU && t->src[1] == NULL && src_ss->axis == GGML_BACKEND_SPLIT_AXIS_0 &&
           src_ss->n_segments == 1 && src_ss->nr[0] == 1;
}

static split_state_t rule_glu(const struct split_rule_args * a) {
    if (glu_src_needs_gather(a->tensor, &a->src_ss[0])) {
        return ss_make(GGML_BACKEND_SPLIT_AXIS_MIRRORED, 1);
    }
    return rule_generic(a, false);
}

// MUL_MAT / MUL_MAT_ID: dst[i1][i0] = sum_k src0[i0][k] * src1[i1][k]
static split_state_t rule_mul_mat(const struct split_rule_args * a) {
    const split_state_t * ss = a->src_ss;
    if (ss[0].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED && ss[1].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        return ss_make(GGML_BACKEND_SPLIT_AXIS_MIRRORED, 1);
    }
    if (ss[0].axis == GGML_BACKEND_SPLIT_AXIS_0 && ss[1].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        // K split in the weight only (after a gathered GLU): each device reads
        // its K columns of the whole src1 (a view, made by the compute file)
        if (ss[0].n_segments != 1 || ss[0].nr[0] != 1) {
            split_rule_fail(a, "K split in segments, src1 whole");
        }
        return ss_make(a->assume_sync ? GGML_BACKEND_SPLIT_AXIS_MIRRORED : GGML_BACKEND_SPLIT_AXIS_PARTIAL, 1);
    }
    if (ss[0].axis == GGML_BACKEND_SPLIT_AXIS_1 && ss[1].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        // rows of the weight become columns of the result; the segments merge
        split_state_t ret = ss[0];
        ret.axis       = GGML_BACKEND_SPLIT_AXIS_0;
        ret.nr[0]      = 1;
        ret.n_segments = 1;
        return ret;
    }
    if (ss[1].axis == GGML_BACKEND_SPLIT_AXIS_1 && ss[0].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        return ss[1];
    }
    if (ss[0].axis == GGML_BACKEND_SPLIT_AXIS_0 && ss[1].axis == GGML_BACKEND_SPLIT_AXIS_0) {
        if (!ss_equal(&ss[0], &ss[1], a->n_bufs)) {
            split_rule_fail(a, "K split differently");
        }
        return ss_make(a->assume_sync ? GGML_BACKEND_SPLIT_AXIS_MIRRORED : GGML_BACKEND_SPLIT_AXIS_PARTIAL, 1);
    }
    // batches split alike, src0 broadcast over src1 (attention by heads: K's KV heads, Q's heads,
    // a device's Q heads those of its KV heads): the result is split as src1
    if (ss[0].axis == ss[1].axis && (ss[0].axis == GGML_BACKEND_SPLIT_AXIS_2 || ss[0].axis == GGML_BACKEND_SPLIT_AXIS_3)) {
        const int axis = (int) ss[0].axis;
        const int64_t ratio = a->tensor->src[1]->ne[axis] / a->tensor->src[0]->ne[axis];
        for (size_t j = 0; j < a->n_bufs; j++) {
            if (ggml_meta_split_extent(&ss[1], a->n_bufs, j) != ratio * ggml_meta_split_extent(&ss[0], a->n_bufs, j)) {
                split_rule_fail(a, "batches split differently");
            }
        }
        return ss[1];
    }
    split_rule_fail(a, "unsupported combination");
}

// Same elements in a new shape: the split moves to the first dimension of
// the result at which the elements before the split line up.
static split_state_t rule_reshape(const struct split_rule_args * a) {
    const struct ggml_tensor * t   = a->tensor;
    const struct ggml_tensor * src = t->src[0];
    const split_state_t      * ss  = &a->src_ss[0];
    if (ss->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED || ss->axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL) {
        return *ss;
    }
    if (!ggml_meta_axis_is_dim(ss->axis)) {
        split_rule_fail(a, "source not split");
    }
    if (ss->n_segments != 1) {
        split_rule_fail(a, "reshape of a segmented split");
    }
    if ((int) ss->axis == ggml_n_dims(src) - 1 && ss->nr[0] == 1) {
        return ss_make((enum ggml_backend_meta_split_axis) (ggml_n_dims(t) - 1), 1);
    }
    // elements in one repeat of the split block of the source
    int64_t base_in = src->ne[0];
    for (int d = 1; d <= (int) ss->axis; d++) {
        base_in *= src->ne[d];
    }
    base_in /= ss->nr[0];
    int64_t base_out = 1;
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        base_out *= t->ne[d];
        if (base_out % base_in == 0) {
            return ss_make((enum ggml_backend_meta_split_axis) d, (uint32_t) (base_out/base_in));
        }
        if (base_out > base_in) {
            if (ss->nr[0] != 1) {
                split_rule_fail(a, "reshape of a repeated split");
            }
            return ss_make((enum ggml_backend_meta_split_axis) d, 1);
        }
    }
    split_rule_fail(a, "shape mismatch");
}

static split_state_t rule_cpy(const struct split_rule_args * a) {
    if (ggml_meta_axis_is_dim(a->src_ss[0].axis)) {
        return rule_reshape(a);
    }
    return rule_generic(a, false);
}

static split_state_t rule_view(const struct split_rule_args * a) {
    const struct ggml_tensor * t   = a->tensor;
    const struct ggml_tensor * src = t->src[0];
    const split_state_t      * ss  = &a->src_ss[0];
    if (ggml_is_contiguous(t) && ggml_is_contiguous(src)) {
        return rule_reshape(a);
    }
    bool same_strides = true;
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (t->ne[d] == 1 && src->ne[d] == 1) {
            continue;
        }
        if (t->nb[d] != src->nb[d]) {
            same_strides = false;
            break;
        }
    }
    if (same_strides) {
        return *ss;
    }
    if (!ggml_is_permuted(t) && !ggml_is_permuted(src) && ggml_meta_axis_is_dim(ss->axis) && (int) ss->axis < GGML_MAX_DIMS - 1) {
        for (int d = 0; d < GGML_MAX_DIMS - 1; d++) {
            if (t->nb[d + 1] == src->nb[ss->axis + 1]) {
                return ss_make((enum ggml_backend_meta_split_axis) d, 1);
            }
        }
        split_rule_fail(a, "view cuts the split");
    }
    if (ss->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED || ss->axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL) {
        return *ss;
    }
    split_rule_fail(a, "view of a permuted split tensor");
}

static split_state_t rule_permute(const struct split_rule_args * a) {
    const split_state_t * ss = &a->src_ss[0];
    if (ggml_meta_axis_is_dim(ss->axis)) {
        if (ss->n_segments != 1 && ss->nr[0] != 1) {
            split_rule_fail(a, "permute of a segmented split");
        }
        return ss_make((enum ggml_backend_meta_split_axis) a->tensor->op_params[ss->axis], ss->nr[0]);
    }
    if (ss->axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED || ss->axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL) {
        return *ss;
    }
    split_rule_fail(a, "source not split");
}

static split_state_t rule_transpose(const struct split_rule_args * a) {
    const split_state_t * ss = &a->src_ss[0];
    if (ss->axis == GGML_BACKEND_SPLIT_AXIS_0 || ss->axis == GGML_BACKEND_SPLIT_AXIS_1) {
        if (ss->n_segments != 1 && ss->nr[0] != 1) {
            split_rule_fail(a, "transpose of a segmented split");
        }
        return ss_make((enum ggml_backend_meta_split_axis) ((int) ss->axis ^ 1), ss->nr[0]);
    }
    return *ss;
}

static split_state_t rule_get_rows(const struct split_rule_args * a) {
    if (a->src_ss[0].axis == GGML_BACKEND_SPLIT_AXIS_0 && a->src_ss[1].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        return a->src_ss[0];
    }
    return rule_generic(a, true);
}

static split_state_t rule_set_rows(const struct split_rule_args * a) {
    const split_state_t * ss = a->src_ss;
    if (ss[0].axis == GGML_BACKEND_SPLIT_AXIS_1 || ss[1].axis != GGML_BACKEND_SPLIT_AXIS_MIRRORED ||
            !ss_equal(&ss[0], &ss[2], a->n_bufs)) {
        split_rule_fail(a, "rows split, or indices not mirrored");
    }
    return ss[0];
}

static split_state_t rule_rope(const struct split_rule_args * a) {
    if (a->src_ss[1].axis != GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        split_rule_fail(a, "positions not mirrored");
    }
    return a->src_ss[0];
}

static split_state_t rule_pad(const struct split_rule_args * a) {
    const split_state_t * ss = &a->src_ss[0];
    if (ggml_meta_axis_is_dim(ss->axis) &&
            (a->tensor->op_params[2*ss->axis] != 0 || a->tensor->op_params[2*ss->axis + 1] != 0)) {
        split_rule_fail(a, "padding along the split");
    }
    return *ss;
}

// heads split: q, k, v along dimension 2; the result (head, token) along 1
static split_state_t rule_flash_attn_ext(const struct split_rule_args * a) {
    const split_state_t * ss = a->src_ss;
    const struct ggml_tensor * t = a->tensor;
    if (ss[0].axis != GGML_BACKEND_SPLIT_AXIS_2 || ss[1].axis != GGML_BACKEND_SPLIT_AXIS_2 || ss[2].axis != GGML_BACKEND_SPLIT_AXIS_2 ||
            (t->src[3] != NULL && ss[3].axis != GGML_BACKEND_SPLIT_AXIS_MIRRORED) ||
            (t->src[4] != NULL && ss[4].axis != GGML_BACKEND_SPLIT_AXIS_0)) {
        split_rule_fail(a, "q, k, v must be split by heads");
    }
    return ss_make(GGML_BACKEND_SPLIT_AXIS_1, 1);
}

static split_state_t rule_ssm_conv(const struct split_rule_args * a) {
    const split_state_t * ss = a->src_ss;
    if (ss[0].axis == ss[1].axis && ss[0].axis == GGML_BACKEND_SPLIT_AXIS_0) {
        return ss_make(GGML_BACKEND_SPLIT_AXIS_1, 1);
    }
    if (ss[0].axis == ss[1].axis && ss[0].axis == GGML_BACKEND_SPLIT_AXIS_1) {
        return ss_make(GGML_BACKEND_SPLIT_AXIS_0, 1);
    }
    return rule_generic(a, false);
}

static split_state_t rule_gated_delta_net(const struct split_rule_args * a) {
    const split_state_t * ss = a->src_ss;
    bool all_mirrored = true;
    for (int i = 0; i < 6; i++) {
        all_mirrored = all_mirrored && ss[i].axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED;
    }
    if (all_mirrored) {
        return ss[0];
    }
    for (int i = 0; i < 5; i++) {
        if (ss[i].axis != GGML_BACKEND_SPLIT_AXIS_1) {
            split_rule_fail(a, "inputs must be split by heads");
        }
    }
    if (ss[5].axis != GGML_BACKEND_SPLIT_AXIS_0 && ss[5].axis != GGML_BACKEND_SPLIT_AXIS_1 && ss[5].axis != GGML_BACKEND_SPLIT_AXIS_2) {
        split_rule_fail(a, "state must be split by heads");
    }
    return ss_make(GGML_BACKEND_SPLIT_AXIS_0, 1);
}

// the rule of each op (upstream's table)
static split_state_t split_by_op(const struct split_rule_args * a) {
    switch (a->tensor->op) {
        case GGML_OP_NONE:
            return ss_make(GGML_BACKEND_SPLIT_AXIS_MIRRORED, 1);

        case GGML_OP_ADD: case GGML_OP_ADD_ID: case GGML_OP_SUB: case GGML_OP_MUL: case GGML_OP_DIV:
            return rule_bin_bcast(a);

        case GGML_OP_SQR: case GGML_OP_SQRT: case GGML_OP_LOG: case GGML_OP_SIN: case GGML_OP_COS:
        case GGML_OP_REPEAT: case GGML_OP_REPEAT_BACK: case GGML_OP_SILU_BACK: case GGML_OP_SCALE:
        case GGML_OP_SOFT_MAX:       return rule_soft_max(a);

        case GGML_OP_SOFT_MAX_BACK: case GGML_OP_CLAMP: case GGML_OP_LEAKY_RELU:
        case GGML_OP_FILL: case GGML_OP_UNARY:
        case GGML_OP_OPT_STEP_ADAMW: case GGML_OP_OPT_STEP_SGD:
            return rule_generic(a, false);

        case GGML_OP_GLU:            return rule_glu(a);

        case GGML_OP_DUP: case GGML_OP_ADD1: case GGML_OP_ACC: case GGML_OP_SUM: case GGML_OP_OUT_PROD:
        case GGML_OP_SET: case GGML_OP_GET_ROWS_BACK: case GGML_OP_DIAG: case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_DIAG_MASK_ZERO: case GGML_OP_ROPE_BACK:
        case GGML_OP_CONV_TRANSPOSE_1D: case GGML_OP_IM2COL: case GGML_OP_IM2COL_BACK: case GGML_OP_IM2COL_3D:
        case GGML_OP_CONV_2D: case GGML_OP_CONV_3D: case GGML_OP_CONV_2D_DW: case GGML_OP_CONV_TRANSPOSE_2D:
        case GGML_OP_POOL_1D: case GGML_OP_POOL_2D: case GGML_OP_POOL_2D_BACK: case GGML_OP_UPSCALE:
        case GGML_OP_PAD_REFLECT_1D: case GGML_OP_ROLL: case GGML_OP_ARANGE: case GGML_OP_TIMESTEP_EMBEDDING:
        case GGML_OP_TRI: case GGML_OP_FLASH_ATTN_BACK:
        case GGML_OP_SSM_SCAN: case GGML_OP_WIN_PART: case GGML_OP_WIN_UNPART: case GGML_OP_GET_REL_POS:
        case GGML_OP_ADD_REL_POS: case GGML_OP_RWKV_WKV6: case GGML_OP_GATED_LINEAR_ATTN: case GGML_OP_RWKV_WKV7:
        case GGML_OP_SOLVE_TRI:
        case GGML_OP_MAP_CUSTOM1: case GGML_OP_MAP_CUSTOM2: case GGML_OP_MAP_CUSTOM3: case GGML_OP_CUSTOM:
            return rule_generic(a, true);

        case GGML_OP_SUM_ROWS: case GGML_OP_CUMSUM: case GGML_OP_MEAN: case GGML_OP_ARGMAX: case GGML_OP_COUNT_EQUAL:
        case GGML_OP_NORM: case GGML_OP_RMS_NORM: case GGML_OP_RMS_NORM_BACK: case GGML_OP_GROUP_NORM: case GGML_OP_L2_NORM:
        case GGML_OP_ARGSORT: case GGML_OP_TOP_K:
        case GGML_OP_CROSS_ENTROPY_LOSS: case GGML_OP_CROSS_ENTROPY_LOSS_BACK:
            return rule_per_row(a);

        case GGML_OP_CONCAT:         return rule_concat(a);
        case GGML_OP_MUL_MAT:
        case GGML_OP_MUL_MAT_ID:     return rule_mul_mat(a);
        case GGML_OP_CPY:            return rule_cpy(a);
        case GGML_OP_CONT:
        case GGML_OP_RESHAPE:        return rule_reshape(a);
        case GGML_OP_VIEW:           return rule_view(a);
        case GGML_OP_PERMUTE:        return rule_permute(a);
        case GGML_OP_TRANSPOSE:      return rule_transpose(a);
        case GGML_OP_GET_ROWS:       return rule_get_rows(a);
        case GGML_OP_SET_ROWS:       return rule_set_rows(a);
        case GGML_OP_ROPE:           return rule_rope(a);
        case GGML_OP_PAD:            return rule_pad(a);
        case GGML_OP_FLASH_ATTN_EXT: return rule_flash_attn_ext(a);
        case GGML_OP_SSM_CONV:       return rule_ssm_conv(a);
        case GGML_OP_GATED_DELTA_NET: return rule_gated_delta_net(a);
        default:
            split_rule_fail(a, "op not handled by the meta backend");
    }
}

// A node split along a dimension takes each device's share from its first
// split source, in proportion to the extents; the other split sources must
// agree with that share.
static void split_take_ratio(const struct split_rule_args * a, split_state_t * ss) {
    const struct ggml_tensor * t = a->tensor;
    const size_t n = a->n_bufs;
    bool first = true;
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * src = t->src[i];
        const split_state_t      * sss = &a->src_ss[i];
        if (src == NULL || src == t || !ggml_meta_axis_is_dim(sss->axis)) {
            continue;
        }
        const int64_t src_ne = src->ne[sss->axis];
        if (first) {
            for (size_t j = 0; j < n; j++) {
                int64_t ne_j = ggml_meta_split_extent(sss, n, j) * t->ne[ss->axis];
                for (uint32_t s = 0; s < sss->n_segments; s++) {
                    ss->ne[s*n + j] = 0;
                }
                if (ne_j != 0 || src_ne != 0) {
                    const int64_t div = src_ne * ss->nr[0];
                    if (div == 0 || ne_j % div != 0) {
                        split_rule_fail(a, "extents do not divide");
                    }
                    ne_j /= div;
                }
                ss->ne[j] = ne_j;
            }
            first = false;
        } else {
            for (size_t j = 0; j < n; j++) {
                if (ss->ne[j] * ss->nr[0] * src_ne != ggml_meta_split_extent(sss, n, j) * t->ne[ss->axis]) {
                    split_rule_fail(a, "sources split in different proportions");
                }
            }
        }
    }
    if (first) {
        split_rule_fail(a, "split along a dimension without a split source");
    }
}

static size_t meta_dev_n(const struct ggml_tensor * tensor) {
    return ggml_backend_meta_buffer_n_bufs(tensor->buffer);
}

static split_state_t split_state_of_program_tensor(const struct ggml_tensor * tensor, size_t n_bufs) {
    ggml_backend_dev_t dev = ggml_backend_buft_get_device(ggml_backend_buffer_get_type(tensor->buffer));
    const struct ggml_backend_meta_device_context * dctx = (const struct ggml_backend_meta_device_context *) dev->context;
    split_state_t ss = dctx->get_split_state(tensor, dctx->get_split_state_ud);
    if (ggml_meta_axis_is_dim(ss.axis)) {
        const int64_t granularity = ss.axis == GGML_BACKEND_SPLIT_AXIS_0 ? ggml_blck_size(tensor->type) : 1;
        if (ss.n_segments == 0 || ss.n_segments > 16) {
            GGML_ABORT("meta backend: split of '%s' has %u segments (1 to 16)", tensor->name, ss.n_segments);
        }
        int64_t total = 0;
        for (uint32_t s = 0; s < ss.n_segments; s++) {
            for (size_t j = 0; j < n_bufs; j++) {
                if (ss.ne[s*n_bufs + j] < 0 || ss.ne[s*n_bufs + j] % granularity != 0) {
                    GGML_ABORT("meta backend: split of '%s': slice %" PRId64 " is not a multiple of the block size %" PRId64,
                               tensor->name, ss.ne[s*n_bufs + j], granularity);
                }
                total += ss.ne[s*n_bufs + j] * (int64_t) ss.nr[s];
            }
        }
        if (total != tensor->ne[ss.axis]) {
            GGML_ABORT("meta backend: split of '%s' along %d covers %" PRId64 " of %" PRId64 " elements",
                       tensor->name, (int) ss.axis, total, tensor->ne[ss.axis]);
        }
    } else if (ss.axis != GGML_BACKEND_SPLIT_AXIS_MIRRORED && ss.axis != GGML_BACKEND_SPLIT_AXIS_PARTIAL) {
        GGML_ABORT("meta backend: split of '%s' has axis %d", tensor->name, (int) ss.axis);
    }
    return ss;
}

static split_state_t split_state_compute(const struct ggml_tensor * tensor, bool assume_sync) {
    const size_t n_bufs = meta_dev_n(tensor);
    if (ggml_nelements(tensor) == 0) {
        return ss_make(GGML_BACKEND_SPLIT_AXIS_UNKNOWN, 1);
    }
    if (ggml_backend_buffer_get_usage(tensor->buffer) != GGML_BACKEND_BUFFER_USAGE_COMPUTE && tensor->view_src == NULL) {
        return split_state_of_program_tensor(tensor, n_bufs);
    }
    if (n_bufs == 1) {
        // one device holds every slice of every source, and its partial sums are
        // the whole sums: each node is whole there, whatever its op's rule says
        return ss_make(GGML_BACKEND_SPLIT_AXIS_MIRRORED, 1);
    }

    split_state_t src_ss[GGML_MAX_SRC];
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * src = tensor->src[i];
        if (src == NULL || src == tensor) {
            src_ss[i] = ss_make(GGML_BACKEND_SPLIT_AXIS_UNKNOWN, 1);
            continue;
        }
        if (!ggml_backend_buffer_is_meta(src->buffer)) {
            // a source in another device's memory (host inputs): every device reads all of it
            src_ss[i] = ss_make(GGML_BACKEND_SPLIT_AXIS_MIRRORED, 1);
            continue;
        }
        src_ss[i] = ggml_backend_meta_get_split_state(src, true);
    }
    const struct split_rule_args args = { tensor, src_ss, n_bufs, assume_sync };
    split_state_t ss = split_by_op(&args);
    if (ggml_meta_axis_is_dim(ss.axis)) {
        split_take_ratio(&args, &ss);
    }
    return ss;
}

//
// the cache
//

// a copy of the tensor's header up to its padding: any change to shape,
// op, sources or data means another tensor
#define META_TENSOR_KEY_BYTES offsetof(struct ggml_tensor, padding)

struct split_cache_entry {
    split_state_t ss;
    char          header[META_TENSOR_KEY_BYTES];
};

// GGML_META_DEBUG set: every split state computed goes to the debug log
static bool meta_debug(void) {
    static _Atomic int debug = -1;
    if (atomic_load(&debug) < 0) {
        atomic_store(&debug, getenv("GGML_META_DEBUG") != NULL ? 1 : 0);
    }
    return atomic_load(&debug) == 1;
}

struct ggml_backend_meta_split_state ggml_backend_meta_get_split_state(const struct ggml_tensor * tensor, bool assume_sync) {
    GGML_ASSERT(ggml_backend_buffer_is_meta(tensor->buffer));
    struct ggml_backend_meta_buffer_context * bctx = (struct ggml_backend_meta_buffer_context *) tensor->buffer->context;
    const uintptr_t key = (uintptr_t) tensor | (assume_sync ? 1u : 0u);

    struct split_cache_entry * e = ggml_meta_ptr_map_get(&bctx->split_state_cache, key);
    if (e != NULL && memcmp(e->header, tensor, META_TENSOR_KEY_BYTES) == 0) {
        return e->ss;
    }
    if (e != NULL) {
        ggml_meta_ptr_map_clear(&bctx->split_state_cache, free);
    }
    const split_state_t ss = split_state_compute(tensor, assume_sync);
    e = malloc(sizeof(*e));
    if (e != NULL) {
        e->ss = ss;
        memcpy(e->header, tensor, META_TENSOR_KEY_BYTES);
        if (!ggml_meta_ptr_map_put(&bctx->split_state_cache, key, e)) {
            free(e);
        }
    }
    if (meta_debug()) {
        char desc[160];
        ss_describe(&ss, bctx->n_bufs, desc, sizeof(desc));
        GGML_LOG_DEBUG("meta: %s [%s] split %s\n", tensor->name, ggml_op_desc(tensor), desc);
    }
    return ss;
}

// the state of src i of node as node's rule sees it (a source outside the
// meta buffers is whole)
static split_state_t src_state(const struct ggml_tensor * node, int i) {
    const struct ggml_tensor * src = node->src[i];
    if (src == NULL || !ggml_backend_buffer_is_meta(src->buffer)) {
        return ss_make(GGML_BACKEND_SPLIT_AXIS_MIRRORED, 1);
    }
    return ggml_backend_meta_get_split_state(src, true);
}

bool ggml_backend_meta_src_gathered(const struct ggml_tensor * node, int i) {
    if (i != 0 || node->op != GGML_OP_GLU || node->src[0] == NULL || !ggml_backend_buffer_is_meta(node->buffer) ||
            meta_dev_n(node) < 2 || ggml_nelements(node) == 0) {
        return false;
    }
    const split_state_t ss = src_state(node, 0);
    return glu_src_needs_gather(node, &ss);
}

bool ggml_backend_meta_src1_k_sliced(const struct ggml_tensor * node) {
    if ((node->op != GGML_OP_MUL_MAT && node->op != GGML_OP_MUL_MAT_ID) || !ggml_backend_buffer_is_meta(node->buffer) ||
            meta_dev_n(node) < 2 || ggml_nelements(node) == 0) {
        return false;
    }
    return src_state(node, 0).axis == GGML_BACKEND_SPLIT_AXIS_0 && src_state(node, 1).axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED;
}
