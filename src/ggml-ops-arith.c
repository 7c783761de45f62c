// ggml-ops-arith.c: constructors of the element-wise operations (binary
// arithmetic, unary functions, gated linear units, scale, clamp), the
// reductions (sum, sum_rows, mean, argmax, count_equal) and the custom ops.
//
// A constructor computes nothing: it checks its arguments, creates the result
// tensor, stores the sources in src[] and the parameters in op_params, in the
// layout the backends read. An "inplace" result is a view of the first
// argument, so that the backend writes over it.

#include "ggml-impl.h"

// result of an element-wise op: a fresh tensor shaped like a, or a view of a
static struct ggml_tensor * elementwise_result(struct ggml_context * ctx, struct ggml_tensor * a, bool inplace) {
    return inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
}

// rows are packed one after another, and elements within a row too
static bool ggml_is_padded_1d(const struct ggml_tensor * t) {
    return t->nb[0] == ggml_type_size(t->type) &&
           t->nb[2] == t->nb[1] * (size_t) t->ne[1] &&
           t->nb[3] == t->nb[2] * (size_t) t->ne[2];
}

// t0 can be broadcast to t1's shape with whole rows
static bool ggml_can_repeat_rows(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return t0->ne[0] == t1->ne[0] && ggml_can_repeat(t0, t1);
}

//
// binary arithmetic: b is broadcast over a
//

static struct ggml_tensor * binary_op(struct ggml_context * ctx, enum ggml_op op,
                                      struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    GGML_ASSERT(ggml_can_repeat(b, a));

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    result->op     = op;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_add(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return binary_op(ctx, GGML_OP_ADD, a, b, false);
}

struct ggml_tensor * ggml_add_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return binary_op(ctx, GGML_OP_ADD, a, b, true);
}

struct ggml_tensor * ggml_sub(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return binary_op(ctx, GGML_OP_SUB, a, b, false);
}

struct ggml_tensor * ggml_sub_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return binary_op(ctx, GGML_OP_SUB, a, b, true);
}

struct ggml_tensor * ggml_mul(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return binary_op(ctx, GGML_OP_MUL, a, b, false);
}

struct ggml_tensor * ggml_mul_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return binary_op(ctx, GGML_OP_MUL, a, b, true);
}

struct ggml_tensor * ggml_div(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return binary_op(ctx, GGML_OP_DIV, a, b, false);
}

struct ggml_tensor * ggml_div_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return binary_op(ctx, GGML_OP_DIV, a, b, true);
}

struct ggml_tensor * ggml_add_cast(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                   enum ggml_type type) {
    GGML_ASSERT(ggml_can_repeat_rows(b, a));
    // the backends implement it for these source types only
    GGML_ASSERT(ggml_is_quantized(a->type) || a->type == GGML_TYPE_F16 || a->type == GGML_TYPE_BF16);

    struct ggml_tensor * result = ggml_new_tensor(ctx, type, GGML_MAX_DIMS, a->ne);
    result->op     = GGML_OP_ADD;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

static struct ggml_tensor * add1_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    GGML_ASSERT(ggml_is_scalar(b));
    GGML_ASSERT(ggml_is_padded_1d(a));

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    result->op     = GGML_OP_ADD1;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_add1(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return add1_op(ctx, a, b, false);
}

struct ggml_tensor * ggml_add1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return add1_op(ctx, a, b, true);
}

//
// unary functions with an op of their own
//

static struct ggml_tensor * simple_unary_op(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, bool inplace) {
    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    result->op     = op;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_sqr(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_SQR, a, false);
}

struct ggml_tensor * ggml_sqr_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_SQR, a, true);
}

struct ggml_tensor * ggml_sqrt(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_SQRT, a, false);
}

struct ggml_tensor * ggml_sqrt_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_SQRT, a, true);
}

struct ggml_tensor * ggml_log(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_LOG, a, false);
}

struct ggml_tensor * ggml_log_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_LOG, a, true);
}

struct ggml_tensor * ggml_sin(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_SIN, a, false);
}

struct ggml_tensor * ggml_sin_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_SIN, a, true);
}

struct ggml_tensor * ggml_cos(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_COS, a, false);
}

struct ggml_tensor * ggml_cos_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return simple_unary_op(ctx, GGML_OP_COS, a, true);
}

struct ggml_tensor * ggml_leaky_relu(struct ggml_context * ctx, struct ggml_tensor * a, float negative_slope, bool inplace) {
    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    ggml_set_op_params_f32(result, 0, negative_slope);
    result->op     = GGML_OP_LEAKY_RELU;
    result->src[0] = a;
    return result;
}

//
// GGML_OP_UNARY: the function is op_params[0]
//

static struct ggml_tensor * unary_op(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op, bool inplace) {
    GGML_ASSERT(ggml_is_contiguous_rows(a));

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    ggml_set_op_params_i32(result, 0, (int32_t) op);
    result->op     = GGML_OP_UNARY;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_unary(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) {
    return unary_op(ctx, a, op, false);
}

struct ggml_tensor * ggml_unary_inplace(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) {
    return unary_op(ctx, a, op, true);
}

struct ggml_tensor * ggml_abs(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_ABS, false);
}

struct ggml_tensor * ggml_abs_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_ABS, true);
}

struct ggml_tensor * ggml_sgn(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_SGN, false);
}

struct ggml_tensor * ggml_sgn_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_SGN, true);
}

struct ggml_tensor * ggml_neg(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_NEG, false);
}

struct ggml_tensor * ggml_neg_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_NEG, true);
}

struct ggml_tensor * ggml_step(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_STEP, false);
}

struct ggml_tensor * ggml_step_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_STEP, true);
}

struct ggml_tensor * ggml_tanh(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_TANH, false);
}

struct ggml_tensor * ggml_tanh_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_TANH, true);
}

struct ggml_tensor * ggml_elu(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_ELU, false);
}

struct ggml_tensor * ggml_elu_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_ELU, true);
}

struct ggml_tensor * ggml_relu(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_RELU, false);
}

struct ggml_tensor * ggml_relu_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_RELU, true);
}

struct ggml_tensor * ggml_sigmoid(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_SIGMOID, false);
}

struct ggml_tensor * ggml_sigmoid_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_SIGMOID, true);
}

struct ggml_tensor * ggml_gelu(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_GELU, false);
}

struct ggml_tensor * ggml_gelu_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_GELU, true);
}

struct ggml_tensor * ggml_gelu_erf(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_GELU_ERF, false);
}

struct ggml_tensor * ggml_gelu_erf_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_GELU_ERF, true);
}

struct ggml_tensor * ggml_gelu_quick(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_GELU_QUICK, false);
}

struct ggml_tensor * ggml_gelu_quick_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_GELU_QUICK, true);
}

struct ggml_tensor * ggml_silu(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_SILU, false);
}

struct ggml_tensor * ggml_silu_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_SILU, true);
}

struct ggml_tensor * ggml_hardswish(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_HARDSWISH, false);
}

struct ggml_tensor * ggml_hardsigmoid(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_HARDSIGMOID, false);
}

struct ggml_tensor * ggml_exp(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_EXP, false);
}

struct ggml_tensor * ggml_exp_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return unary_op(ctx, a, GGML_UNARY_OP_EXP, true);
}

//
// gated linear units: op_params[0] is the function, op_params[1] "swapped"
//

// Fused form (b == NULL): each row of a holds the value half and the gate
// half, so the result rows are half as long. Split form: a and b alike.
static struct ggml_tensor * glu_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                   enum ggml_glu_op op, bool swapped) {
    GGML_ASSERT(ggml_is_contiguous_1(a));
    if (b != NULL) {
        GGML_ASSERT(ggml_is_contiguous_1(b));
        GGML_ASSERT(ggml_are_same_shape(a, b));
        GGML_ASSERT(a->type == b->type);
    }

    const int64_t half_ne[GGML_MAX_DIMS] = { a->ne[0] / 2, a->ne[1], a->ne[2], a->ne[3] };
    struct ggml_tensor * result = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, b != NULL ? a->ne : half_ne);

    ggml_set_op_params_i32(result, 0, (int32_t) op);
    ggml_set_op_params_i32(result, 1, (int32_t) swapped);
    result->op     = GGML_OP_GLU;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_glu(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_glu_op op, bool swapped) {
    return glu_op(ctx, a, NULL, op, swapped);
}

struct ggml_tensor * ggml_glu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                    enum ggml_glu_op op) {
    return glu_op(ctx, a, b, op, false);
}

struct ggml_tensor * ggml_reglu(struct ggml_context * ctx, struct ggml_tensor * a) {
    return glu_op(ctx, a, NULL, GGML_GLU_OP_REGLU, false);
}

struct ggml_tensor * ggml_reglu_swapped(struct ggml_context * ctx, struct ggml_tensor * a) {
    return glu_op(ctx, a, NULL, GGML_GLU_OP_REGLU, true);
}

struct ggml_tensor * ggml_reglu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return glu_op(ctx, a, b, GGML_GLU_OP_REGLU, false);
}

struct ggml_tensor * ggml_geglu(struct ggml_context * ctx, struct ggml_tensor * a) {
    return glu_op(ctx, a, NULL, GGML_GLU_OP_GEGLU, false);
}

struct ggml_tensor * ggml_geglu_swapped(struct ggml_context * ctx, struct ggml_tensor * a) {
    return glu_op(ctx, a, NULL, GGML_GLU_OP_GEGLU, true);
}

struct ggml_tensor * ggml_geglu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return glu_op(ctx, a, b, GGML_GLU_OP_GEGLU, false);
}

struct ggml_tensor * ggml_swiglu(struct ggml_context * ctx, struct ggml_tensor * a) {
    return glu_op(ctx, a, NULL, GGML_GLU_OP_SWIGLU, false);
}

struct ggml_tensor * ggml_swiglu_swapped(struct ggml_context * ctx, struct ggml_tensor * a) {
    return glu_op(ctx, a, NULL, GGML_GLU_OP_SWIGLU, true);
}

struct ggml_tensor * ggml_swiglu_split(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return glu_op(ctx, a, b, GGML_GLU_OP_SWIGLU, false);
}

//
// scale, clamp: float parameters
//

static struct ggml_tensor * scale_op(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b, bool inplace) {
    GGML_ASSERT(ggml_is_padded_1d(a));

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    ggml_set_op_params_f32(result, 0, s);
    ggml_set_op_params_f32(result, 1, b);
    result->op     = GGML_OP_SCALE;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_scale(struct ggml_context * ctx, struct ggml_tensor * a, float s) {
    return scale_op(ctx, a, s, 0.0f, false);
}

struct ggml_tensor * ggml_scale_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s) {
    return scale_op(ctx, a, s, 0.0f, true);
}

struct ggml_tensor * ggml_scale_bias(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b) {
    return scale_op(ctx, a, s, b, false);
}

struct ggml_tensor * ggml_scale_bias_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s, float b) {
    return scale_op(ctx, a, s, b, true);
}

// Always a view of a, as upstream: the backends clamp in place.
struct ggml_tensor * ggml_clamp(struct ggml_context * ctx, struct ggml_tensor * a, float min, float max) {
    struct ggml_tensor * result = ggml_view_tensor(ctx, a);
    ggml_set_op_params_f32(result, 0, min);
    ggml_set_op_params_f32(result, 1, max);
    result->op     = GGML_OP_CLAMP;
    result->src[0] = a;
    return result;
}

//
// reductions
//

struct ggml_tensor * ggml_sum(struct ggml_context * ctx, struct ggml_tensor * a) {
    struct ggml_tensor * result = ggml_new_tensor_1d(ctx, a->type, 1);
    result->op     = GGML_OP_SUM;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_sum_rows(struct ggml_context * ctx, struct ggml_tensor * a) {
    const int64_t ne[GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    struct ggml_tensor * result = ggml_new_tensor(ctx, a->type, GGML_MAX_DIMS, ne);
    result->op     = GGML_OP_SUM_ROWS;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_mean(struct ggml_context * ctx, struct ggml_tensor * a) {
    const int64_t ne[GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, GGML_MAX_DIMS, ne);
    result->op     = GGML_OP_MEAN;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_argmax(struct ggml_context * ctx, struct ggml_tensor * a) {
    GGML_ASSERT(ggml_is_matrix(a));
    GGML_ASSERT(a->ne[0] <= INT32_MAX);

    struct ggml_tensor * result = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, a->ne[1]);
    result->op     = GGML_OP_ARGMAX;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_count_equal(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_are_same_shape(a, b));

    struct ggml_tensor * result = ggml_new_tensor_1d(ctx, GGML_TYPE_I64, 1);
    result->op     = GGML_OP_COUNT_EQUAL;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

//
// custom operations: op_params hold { fun, n_tasks, userdata }
//
// The parameter structs are cleared before they are filled: their padding is
// copied into op_params, which graph caches compare byte for byte.
//

static struct ggml_tensor * map_custom1_op(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun,
                                           int n_tasks, void * userdata, bool inplace) {
    GGML_ASSERT(n_tasks == GGML_N_TASKS_MAX || n_tasks > 0);

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    struct ggml_map_custom1_op_params params;
    memset(&params, 0, sizeof(params));
    params.fun      = fun;
    params.n_tasks  = n_tasks;
    params.userdata = userdata;
    ggml_set_op_params(result, &params, sizeof(params));

    result->op     = GGML_OP_MAP_CUSTOM1;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_map_custom1(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun,
                                      int n_tasks, void * userdata) {
    return map_custom1_op(ctx, a, fun, n_tasks, userdata, false);
}

struct ggml_tensor * ggml_map_custom1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun,
                                              int n_tasks, void * userdata) {
    return map_custom1_op(ctx, a, fun, n_tasks, userdata, true);
}

static struct ggml_tensor * map_custom2_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                           ggml_custom2_op_t fun, int n_tasks, void * userdata, bool inplace) {
    GGML_ASSERT(n_tasks == GGML_N_TASKS_MAX || n_tasks > 0);

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    struct ggml_map_custom2_op_params params;
    memset(&params, 0, sizeof(params));
    params.fun      = fun;
    params.n_tasks  = n_tasks;
    params.userdata = userdata;
    ggml_set_op_params(result, &params, sizeof(params));

    result->op     = GGML_OP_MAP_CUSTOM2;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

struct ggml_tensor * ggml_map_custom2(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    return map_custom2_op(ctx, a, b, fun, n_tasks, userdata, false);
}

struct ggml_tensor * ggml_map_custom2_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                              ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    return map_custom2_op(ctx, a, b, fun, n_tasks, userdata, true);
}

static struct ggml_tensor * map_custom3_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                           struct ggml_tensor * c, ggml_custom3_op_t fun, int n_tasks, void * userdata,
                                           bool inplace) {
    GGML_ASSERT(n_tasks == GGML_N_TASKS_MAX || n_tasks > 0);

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    struct ggml_map_custom3_op_params params;
    memset(&params, 0, sizeof(params));
    params.fun      = fun;
    params.n_tasks  = n_tasks;
    params.userdata = userdata;
    ggml_set_op_params(result, &params, sizeof(params));

    result->op     = GGML_OP_MAP_CUSTOM3;
    result->src[0] = a;
    result->src[1] = b;
    result->src[2] = c;
    return result;
}

struct ggml_tensor * ggml_map_custom3(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      struct ggml_tensor * c, ggml_custom3_op_t fun, int n_tasks, void * userdata) {
    return map_custom3_op(ctx, a, b, c, fun, n_tasks, userdata, false);
}

struct ggml_tensor * ggml_map_custom3_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                              struct ggml_tensor * c, ggml_custom3_op_t fun, int n_tasks, void * userdata) {
    return map_custom3_op(ctx, a, b, c, fun, n_tasks, userdata, true);
}

static void set_custom_op_params(struct ggml_tensor * result, ggml_custom_op_t fun, int n_tasks, void * userdata) {
    struct ggml_custom_op_params params;
    memset(&params, 0, sizeof(params));
    params.fun      = fun;
    params.n_tasks  = n_tasks;
    params.userdata = userdata;
    ggml_set_op_params(result, &params, sizeof(params));
}

struct ggml_tensor * ggml_custom_4d(struct ggml_context * ctx, enum ggml_type type,
                                    int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                    struct ggml_tensor ** args, int n_args,
                                    ggml_custom_op_t fun, int n_tasks, void * userdata) {
    GGML_ASSERT(n_args < GGML_MAX_SRC);

    struct ggml_tensor * result = ggml_new_tensor_4d(ctx, type, ne0, ne1, ne2, ne3);
    set_custom_op_params(result, fun, n_tasks, userdata);
    result->op = GGML_OP_CUSTOM;
    for (int i = 0; i < n_args; i++) {
        result->src[i] = args[i];
    }
    return result;
}

// a itself is src[0], the args follow it
struct ggml_tensor * ggml_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a,
                                         struct ggml_tensor ** args, int n_args,
                                         ggml_custom_op_t fun, int n_tasks, void * userdata) {
    GGML_ASSERT(n_args < GGML_MAX_SRC - 1);

    struct ggml_tensor * result = ggml_view_tensor(ctx, a);
    set_custom_op_params(result, fun, n_tasks, userdata);
    result->op     = GGML_OP_CUSTOM;
    result->src[0] = a;
    for (int i = 0; i < n_args; i++) {
        result->src[i + 1] = args[i];
    }
    return result;
}
