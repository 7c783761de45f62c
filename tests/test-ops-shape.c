// test-ops-shape: the op constructors build the right metadata.
//
// For every constructor: result type and shape, strides (contiguous, or the
// view's), view source and offset, source slots, op, op_params decoded and
// compared with the arguments, flags, and that inplace variants are views of
// their first argument. The expected values are worked out here from the
// definitions of the ops. Misuse must abort with the failed condition in the
// message (death tests in forked children).

#define _POSIX_C_SOURCE 200809L

#include "ggml.h"
#include "testing.h"
#include "death-test.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define CHECK_ASSERT_FAILS(cond_text, ...) CHECK_ABORTS("GGML_ASSERT(" cond_text ") failed", __VA_ARGS__)

//
// expectations
//

// bytes per block and elements per block, from the GGUF format definitions
static size_t test_type_size(enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32:  return 4;
        case GGML_TYPE_F16:  return 2;
        case GGML_TYPE_BF16: return 2;
        case GGML_TYPE_I8:   return 1;
        case GGML_TYPE_I16:  return 2;
        case GGML_TYPE_I32:  return 4;
        case GGML_TYPE_I64:  return 8;
        case GGML_TYPE_F64:  return 8;
        case GGML_TYPE_Q4_0: return 2 + 16;
        case GGML_TYPE_Q8_0: return 2 + 32;
        default:             return 0;
    }
}

static int64_t test_blck_size(enum ggml_type type) {
    return type == GGML_TYPE_Q4_0 || type == GGML_TYPE_Q8_0 ? 32 : 1;
}

static void expect_shape(int line, const struct ggml_tensor * t, enum ggml_type type,
                         int64_t n0, int64_t n1, int64_t n2, int64_t n3) {
    CHECK_MSG(t->type == type, "line %d: type %s, expected %s", line, ggml_type_name(t->type), ggml_type_name(type));
    const int64_t ne[4] = { n0, n1, n2, n3 };
    for (int i = 0; i < 4; i++) {
        CHECK_MSG(t->ne[i] == ne[i], "line %d: ne[%d] = %lld, expected %lld", line, i, (long long) t->ne[i], (long long) ne[i]);
    }
    CHECK_MSG(t->flags == 0, "line %d: flags = %d", line, t->flags);
}

static void expect_strides(int line, const struct ggml_tensor * t, size_t b0, size_t b1, size_t b2, size_t b3) {
    const size_t nb[4] = { b0, b1, b2, b3 };
    for (int i = 0; i < 4; i++) {
        CHECK_MSG(t->nb[i] == nb[i], "line %d: nb[%d] = %zu, expected %zu", line, i, t->nb[i], nb[i]);
    }
}

static void expect_contiguous_strides(int line, const struct ggml_tensor * t) {
    const size_t b0 = test_type_size(t->type);
    const size_t b1 = b0 * (size_t)(t->ne[0] / test_blck_size(t->type));
    const size_t b2 = b1 * (size_t) t->ne[1];
    const size_t b3 = b2 * (size_t) t->ne[2];
    expect_strides(line, t, b0, b1, b2, b3);
}

// a new tensor with its own memory
static void expect_new(int line, const struct ggml_tensor * t, enum ggml_type type,
                       int64_t n0, int64_t n1, int64_t n2, int64_t n3) {
    expect_shape(line, t, type, n0, n1, n2, n3);
    expect_contiguous_strides(line, t);
    CHECK_MSG(t->view_src == NULL, "line %d: a view", line);
    CHECK_MSG(t->view_offs == 0, "line %d: view_offs = %zu", line, t->view_offs);
    CHECK_MSG(t->data != NULL, "line %d: no data", line);
}

// a view of root's memory at byte offset offs
static void expect_view(int line, const struct ggml_tensor * t, const struct ggml_tensor * root, size_t offs) {
    CHECK_MSG(t->view_src == root, "line %d: view_src %p, expected %p", line, (void *) t->view_src, (const void *) root);
    CHECK_MSG(t->view_offs == offs, "line %d: view_offs %zu, expected %zu", line, t->view_offs, offs);
    CHECK_MSG(t->data == (const char *) root->data + offs, "line %d: data does not point into the source", line);
}

// an inplace result: a view of a with a's shape and strides, named "<a> (view)"
static void expect_inplace(int line, const struct ggml_tensor * t, const struct ggml_tensor * a,
                           const struct ggml_tensor * root, size_t offs) {
    expect_shape(line, t, a->type, a->ne[0], a->ne[1], a->ne[2], a->ne[3]);
    expect_strides(line, t, a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
    expect_view(line, t, root, offs);
    char name[2*GGML_MAX_NAME];
    snprintf(name, sizeof(name), "%s (view)", a->name);
    name[GGML_MAX_NAME - 1] = '\0'; // names are truncated to fit
    CHECK_MSG(strcmp(t->name, name) == 0, "line %d: name \"%s\", expected \"%s\"", line, t->name, name);
}

static void expect_srcs(int line, const struct ggml_tensor * t, enum ggml_op op, const struct ggml_tensor * const * src) {
    CHECK_MSG(t->op == op, "line %d: op %s, expected %s", line, ggml_op_name(t->op), ggml_op_name(op));
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        CHECK_MSG(t->src[i] == src[i], "line %d: src[%d] = %p, expected %p", line, i, (void *) t->src[i], (const void *) src[i]);
    }
}

// op_params: the first n words as given, every later byte zero
static void expect_params(int line, const struct ggml_tensor * t, const int32_t * words, size_t n) {
    for (size_t i = 0; i < n; i++) {
        CHECK_MSG(t->op_params[i] == words[i], "line %d: op_params[%zu] = %d (0x%08x), expected %d (0x%08x)", line, i,
                  t->op_params[i], (unsigned) t->op_params[i], words[i], (unsigned) words[i]);
    }
    for (size_t i = n; i < GGML_MAX_OP_PARAMS / sizeof(int32_t); i++) {
        CHECK_MSG(t->op_params[i] == 0, "line %d: op_params[%zu] = %d, expected 0", line, i, t->op_params[i]);
    }
}

static int32_t fbits(float f) {
    int32_t w;
    memcpy(&w, &f, sizeof(w));
    return w;
}

static float param_f32(const struct ggml_tensor * t, int i) {
    float f;
    memcpy(&f, &t->op_params[i], sizeof(f));
    return f;
}

#define EXPECT_SHAPE(t, type, n0, n1, n2, n3) expect_shape(__LINE__, (t), (type), (n0), (n1), (n2), (n3))
#define EXPECT_NEW(t, type, n0, n1, n2, n3)   expect_new(__LINE__, (t), (type), (n0), (n1), (n2), (n3))
#define EXPECT_STRIDES(t, b0, b1, b2, b3)     expect_strides(__LINE__, (t), (b0), (b1), (b2), (b3))
#define EXPECT_VIEW(t, root, offs)            expect_view(__LINE__, (t), (root), (offs))
#define EXPECT_INPLACE(t, a)                  expect_inplace(__LINE__, (t), (a), (a), 0)
#define EXPECT_SRCS(t, op, ...) \
    expect_srcs(__LINE__, (t), (op), (const struct ggml_tensor * const [GGML_MAX_SRC]){ __VA_ARGS__ })
#define EXPECT_NO_SRCS(t, op) \
    expect_srcs(__LINE__, (t), (op), (const struct ggml_tensor * const [GGML_MAX_SRC]){ NULL })
#define EXPECT_PARAMS(t, ...) \
    expect_params(__LINE__, (t), (const int32_t []){ __VA_ARGS__ }, sizeof((const int32_t []){ __VA_ARGS__ }) / sizeof(int32_t))
#define EXPECT_NO_PARAMS(t) expect_params(__LINE__, (t), NULL, 0)
#define EXPECT_NAME(t, expected) \
    CHECK_MSG(strcmp((t)->name, (expected)) == 0, "name \"%s\", expected \"%s\"", (t)->name, (expected))

static struct ggml_context * new_context(void) {
    struct ggml_init_params params = { .mem_size = 64*1024*1024, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(params);
    CHECK(ctx != NULL);
    return ctx;
}

static struct ggml_tensor * named(struct ggml_tensor * t, const char * name) {
    return ggml_set_name(t, name);
}

//
// element-wise binary ops
//

typedef struct ggml_tensor * (*binary_fn)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);

static void test_binary(void) {
    struct ggml_context * ctx = new_context();
    static const struct {
        binary_fn fn, fn_inplace;
        enum ggml_op op;
    } ops[] = {
        { ggml_add, ggml_add_inplace, GGML_OP_ADD },
        { ggml_sub, ggml_sub_inplace, GGML_OP_SUB },
        { ggml_mul, ggml_mul_inplace, GGML_OP_MUL },
        { ggml_div, ggml_div_inplace, GGML_OP_DIV },
    };
    struct ggml_tensor * a  = named(ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 5, 3, 2), "a");
    struct ggml_tensor * h  = named(ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 33, 1, 4), "h");
    struct ggml_tensor * b_same  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 5, 3, 2);
    struct ggml_tensor * b_rows  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 1, 3, 1);
    struct ggml_tensor * b_one   = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    struct ggml_tensor * b_col   = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, 5, 1, 2);
    struct ggml_tensor * b_bad   = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 2, 3, 2);
    struct ggml_tensor * b_big   = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 14, 5, 3, 2);
    struct ggml_tensor * src     = named(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 20), "src");
    // a strided view of 10 rows of 7, starting at row 2 of src
    struct ggml_tensor * strided = ggml_view_2d(ctx, src, 7, 10, src->nb[1], 2*src->nb[1]);

    struct ggml_tensor * bs[] = { b_same, b_rows, b_one, b_col };
    for (size_t k = 0; k < sizeof(ops)/sizeof(ops[0]); k++) {
        for (size_t j = 0; j < sizeof(bs)/sizeof(bs[0]); j++) {
            struct ggml_tensor * r = ops[k].fn(ctx, a, bs[j]);
            EXPECT_NEW(r, GGML_TYPE_F32, 7, 5, 3, 2);
            EXPECT_SRCS(r, ops[k].op, a, bs[j]);
            EXPECT_NO_PARAMS(r);
            EXPECT_NAME(r, "");

            struct ggml_tensor * ri = ops[k].fn_inplace(ctx, a, bs[j]);
            EXPECT_INPLACE(ri, a);
            EXPECT_SRCS(ri, ops[k].op, a, bs[j]);
            EXPECT_NO_PARAMS(ri);
        }
        // the result type follows a
        struct ggml_tensor * rh = ops[k].fn(ctx, h, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 33));
        EXPECT_NEW(rh, GGML_TYPE_F16, 33, 1, 4, 1);

        // a non-contiguous a gives a contiguous result; inplace keeps the view's strides and root
        struct ggml_tensor * rs = ops[k].fn(ctx, strided, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7));
        EXPECT_NEW(rs, GGML_TYPE_F32, 7, 10, 1, 1);
        struct ggml_tensor * rsi = ops[k].fn_inplace(ctx, strided, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7));
        expect_inplace(__LINE__, rsi, strided, src, 2*src->nb[1]);
        EXPECT_STRIDES(rsi, 4, 40, 400, 400);
        CHECK(rsi->src[0] == strided);
    }

    CHECK_ASSERT_FAILS("ggml_can_repeat(b, a)", ggml_add(ctx, a, b_bad));
    CHECK_ASSERT_FAILS("ggml_can_repeat(b, a)", ggml_sub(ctx, a, b_big));
    CHECK_ASSERT_FAILS("ggml_can_repeat(b, a)", ggml_mul_inplace(ctx, a, b_bad));
    CHECK_ASSERT_FAILS("ggml_can_repeat(b, a)", ggml_div(ctx, b_rows, a));

    // add_cast: quantized / half a, rows of b broadcast
    struct ggml_tensor * q  = ggml_new_tensor_3d(ctx, GGML_TYPE_Q4_0, 64, 3, 2);
    struct ggml_tensor * bq = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    struct ggml_tensor * rc = ggml_add_cast(ctx, q, bq, GGML_TYPE_F32);
    EXPECT_NEW(rc, GGML_TYPE_F32, 64, 3, 2, 1);
    EXPECT_SRCS(rc, GGML_OP_ADD, q, bq);
    EXPECT_NO_PARAMS(rc);
    struct ggml_tensor * rc16 = ggml_add_cast(ctx, h, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 1), GGML_TYPE_F16);
    EXPECT_NEW(rc16, GGML_TYPE_F16, 33, 1, 4, 1);
    struct ggml_tensor * hb = ggml_new_tensor_1d(ctx, GGML_TYPE_BF16, 8);
    EXPECT_NEW(ggml_add_cast(ctx, hb, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8), GGML_TYPE_F32), GGML_TYPE_F32, 8, 1, 1, 1);
    CHECK_ASSERT_FAILS("ggml_is_quantized(a->type) || a->type == GGML_TYPE_F16 || a->type == GGML_TYPE_BF16", ggml_add_cast(ctx, a, b_rows, GGML_TYPE_F16));
    CHECK_ASSERT_FAILS("ggml_can_repeat_rows(b, a)", ggml_add_cast(ctx, q, b_one, GGML_TYPE_F32));

    // add1: b a scalar, a packed
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    struct ggml_tensor * r1 = ggml_add1(ctx, a, b_one);
    EXPECT_NEW(r1, GGML_TYPE_F32, 7, 5, 3, 2);
    EXPECT_SRCS(r1, GGML_OP_ADD1, a, b_one);
    EXPECT_NO_PARAMS(r1);
    struct ggml_tensor * r1i = ggml_add1_inplace(ctx, a, b_one);
    EXPECT_INPLACE(r1i, a);
    EXPECT_SRCS(r1i, GGML_OP_ADD1, a, b_one);
    CHECK_ASSERT_FAILS("ggml_is_scalar(b)", ggml_add1(ctx, a, b_rows));
    CHECK_ASSERT_FAILS("ggml_is_padded_1d(a)", ggml_add1(ctx, ggml_transpose(ctx, src), b_one));
#pragma GCC diagnostic pop

    ggml_free(ctx);
}

//
// element-wise unary ops
//

typedef struct ggml_tensor * (*unary_fn)(struct ggml_context *, struct ggml_tensor *);

static void test_simple_unary(void) {
    struct ggml_context * ctx = new_context();
    static const struct {
        unary_fn fn, fn_inplace;
        enum ggml_op op;
    } ops[] = {
        { ggml_sqr,  ggml_sqr_inplace,  GGML_OP_SQR  },
        { ggml_sqrt, ggml_sqrt_inplace, GGML_OP_SQRT },
        { ggml_log,  ggml_log_inplace,  GGML_OP_LOG  },
        { ggml_sin,  ggml_sin_inplace,  GGML_OP_SIN  },
        { ggml_cos,  ggml_cos_inplace,  GGML_OP_COS  },
        { ggml_dup,  ggml_dup_inplace,  GGML_OP_DUP  },
    };
    struct ggml_tensor * a = named(ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 257, 3, 1), "x");
    struct ggml_tensor * t = ggml_transpose(ctx, a);
    for (size_t k = 0; k < sizeof(ops)/sizeof(ops[0]); k++) {
        struct ggml_tensor * r = ops[k].fn(ctx, a);
        EXPECT_NEW(r, GGML_TYPE_F16, 257, 3, 1, 1);
        EXPECT_SRCS(r, ops[k].op, a);
        EXPECT_NO_PARAMS(r);
        struct ggml_tensor * ri = ops[k].fn_inplace(ctx, a);
        EXPECT_INPLACE(ri, a);
        EXPECT_SRCS(ri, ops[k].op, a);
        EXPECT_NO_PARAMS(ri);

        // transposed: the result is contiguous in the transposed shape
        struct ggml_tensor * rt = ops[k].fn(ctx, t);
        EXPECT_NEW(rt, GGML_TYPE_F16, 3, 257, 1, 1);
        struct ggml_tensor * rti = ops[k].fn_inplace(ctx, t);
        expect_inplace(__LINE__, rti, t, a, 0);
        EXPECT_STRIDES(rti, 2*257, 2, 2*257*3, 2*257*3);
    }
    ggml_free(ctx);
}

static void test_unary(void) {
    struct ggml_context * ctx = new_context();
    static const struct {
        unary_fn fn, fn_inplace; // fn_inplace may be NULL
        enum ggml_unary_op op;
    } ops[] = {
        { ggml_abs,         ggml_abs_inplace,        GGML_UNARY_OP_ABS         },
        { ggml_sgn,         ggml_sgn_inplace,        GGML_UNARY_OP_SGN         },
        { ggml_neg,         ggml_neg_inplace,        GGML_UNARY_OP_NEG         },
        { ggml_step,        ggml_step_inplace,       GGML_UNARY_OP_STEP        },
        { ggml_tanh,        ggml_tanh_inplace,       GGML_UNARY_OP_TANH        },
        { ggml_elu,         ggml_elu_inplace,        GGML_UNARY_OP_ELU         },
        { ggml_relu,        ggml_relu_inplace,       GGML_UNARY_OP_RELU        },
        { ggml_sigmoid,     ggml_sigmoid_inplace,    GGML_UNARY_OP_SIGMOID     },
        { ggml_gelu,        ggml_gelu_inplace,       GGML_UNARY_OP_GELU        },
        { ggml_gelu_erf,    ggml_gelu_erf_inplace,   GGML_UNARY_OP_GELU_ERF    },
        { ggml_gelu_quick,  ggml_gelu_quick_inplace, GGML_UNARY_OP_GELU_QUICK  },
        { ggml_silu,        ggml_silu_inplace,       GGML_UNARY_OP_SILU        },
        { ggml_hardswish,   NULL,                    GGML_UNARY_OP_HARDSWISH   },
        { ggml_hardsigmoid, NULL,                    GGML_UNARY_OP_HARDSIGMOID },
        { ggml_exp,         ggml_exp_inplace,        GGML_UNARY_OP_EXP         },
        { ggml_expm1,       ggml_expm1_inplace,      GGML_UNARY_OP_EXPM1       },
        { ggml_softplus,    ggml_softplus_inplace,   GGML_UNARY_OP_SOFTPLUS    },
        { ggml_floor,       ggml_floor_inplace,      GGML_UNARY_OP_FLOOR       },
        { ggml_ceil,        ggml_ceil_inplace,       GGML_UNARY_OP_CEIL        },
        { ggml_round,       ggml_round_inplace,      GGML_UNARY_OP_ROUND       },
        { ggml_trunc,       ggml_trunc_inplace,      GGML_UNARY_OP_TRUNC       },
    };
    struct ggml_tensor * a = named(ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 33, 7, 2, 3), "u");
    // rows of 5 taken every 33 elements: rows contiguous, the tensor is not
    struct ggml_tensor * v = ggml_view_2d(ctx, a, 5, 7, a->nb[1], 4*sizeof(float));
    for (size_t k = 0; k < sizeof(ops)/sizeof(ops[0]); k++) {
        struct ggml_tensor * r = ops[k].fn(ctx, a);
        EXPECT_NEW(r, GGML_TYPE_F32, 33, 7, 2, 3);
        EXPECT_SRCS(r, GGML_OP_UNARY, a);
        EXPECT_PARAMS(r, (int32_t) ops[k].op);
        CHECK(ggml_get_unary_op(r) == ops[k].op);
        if (ops[k].fn_inplace) {
            struct ggml_tensor * ri = ops[k].fn_inplace(ctx, a);
            EXPECT_INPLACE(ri, a);
            EXPECT_SRCS(ri, GGML_OP_UNARY, a);
            EXPECT_PARAMS(ri, (int32_t) ops[k].op);
        }
        struct ggml_tensor * rv = ops[k].fn(ctx, v);
        EXPECT_NEW(rv, GGML_TYPE_F32, 5, 7, 1, 1);
    }
    for (int op = 0; op < GGML_UNARY_OP_COUNT; op++) {
        struct ggml_tensor * r = ggml_unary(ctx, a, (enum ggml_unary_op) op);
        EXPECT_NEW(r, GGML_TYPE_F32, 33, 7, 2, 3);
        EXPECT_SRCS(r, GGML_OP_UNARY, a);
        EXPECT_PARAMS(r, op);
        struct ggml_tensor * ri = ggml_unary_inplace(ctx, v, (enum ggml_unary_op) op);
        expect_inplace(__LINE__, ri, v, a, 4*sizeof(float));
        EXPECT_SRCS(ri, GGML_OP_UNARY, v);
        EXPECT_PARAMS(ri, op);
    }
    CHECK_ASSERT_FAILS("ggml_is_contiguous_rows(a)", ggml_relu(ctx, ggml_transpose(ctx, a)));
    CHECK_ASSERT_FAILS("ggml_is_contiguous_rows(a)", ggml_unary_inplace(ctx, ggml_transpose(ctx, a), GGML_UNARY_OP_EXP));

    // leaky_relu keeps its own op, with the slope as a float parameter
    for (int inplace = 0; inplace <= 1; inplace++) {
        struct ggml_tensor * r = ggml_leaky_relu(ctx, a, 0.125f, inplace);
        if (inplace) {
            EXPECT_INPLACE(r, a);
        } else {
            EXPECT_NEW(r, GGML_TYPE_F32, 33, 7, 2, 3);
        }
        EXPECT_SRCS(r, GGML_OP_LEAKY_RELU, a);
        EXPECT_PARAMS(r, fbits(0.125f));
    }
    ggml_free(ctx);
}

static void test_glu(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a  = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 3, 2);
    struct ggml_tensor * a7 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 7, 5);
    struct ggml_tensor * b  = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 3, 2);

    typedef struct ggml_tensor * (*split_fn)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);
    static const struct {
        unary_fn fused, swapped;
        split_fn split;
        enum ggml_glu_op op;
    } ops[] = {
        { ggml_reglu,  ggml_reglu_swapped,  ggml_reglu_split,  GGML_GLU_OP_REGLU  },
        { ggml_geglu,  ggml_geglu_swapped,  ggml_geglu_split,  GGML_GLU_OP_GEGLU  },
        { ggml_swiglu, ggml_swiglu_swapped, ggml_swiglu_split, GGML_GLU_OP_SWIGLU },
        { ggml_geglu_erf,   ggml_geglu_erf_swapped,   ggml_geglu_erf_split,   GGML_GLU_OP_GEGLU_ERF   },
        { ggml_geglu_quick, ggml_geglu_quick_swapped, ggml_geglu_quick_split, GGML_GLU_OP_GEGLU_QUICK },
    };
    for (size_t k = 0; k < sizeof(ops)/sizeof(ops[0]); k++) {
        struct ggml_tensor * r = ops[k].fused(ctx, a);
        EXPECT_NEW(r, GGML_TYPE_F32, 4, 3, 2, 1);
        EXPECT_SRCS(r, GGML_OP_GLU, a);
        EXPECT_PARAMS(r, (int32_t) ops[k].op, 0);
        CHECK(ggml_get_glu_op(r) == ops[k].op);

        struct ggml_tensor * rs = ops[k].swapped(ctx, a7);
        EXPECT_NEW(rs, GGML_TYPE_F16, 3, 5, 1, 1); // 7 / 2 rounds down
        EXPECT_SRCS(rs, GGML_OP_GLU, a7);
        EXPECT_PARAMS(rs, (int32_t) ops[k].op, 1);

        struct ggml_tensor * rp = ops[k].split(ctx, a, b);
        EXPECT_NEW(rp, GGML_TYPE_F32, 8, 3, 2, 1);
        EXPECT_SRCS(rp, GGML_OP_GLU, a, b);
        EXPECT_PARAMS(rp, (int32_t) ops[k].op, 0);
    }
    for (int op = 0; op < GGML_GLU_OP_COUNT; op++) {
        for (int swapped = 0; swapped <= 1; swapped++) {
            struct ggml_tensor * r = ggml_glu(ctx, a, (enum ggml_glu_op) op, swapped);
            EXPECT_NEW(r, GGML_TYPE_F32, 4, 3, 2, 1);
            EXPECT_PARAMS(r, op, swapped);
        }
        struct ggml_tensor * rp = ggml_glu_split(ctx, a, b, (enum ggml_glu_op) op);
        EXPECT_NEW(rp, GGML_TYPE_F32, 8, 3, 2, 1);
        EXPECT_SRCS(rp, GGML_OP_GLU, a, b);
        EXPECT_PARAMS(rp, op, 0);
    }
    // a window of whole rows
    struct ggml_tensor * rows = ggml_view_2d(ctx, a, 8, 2, a->nb[1], a->nb[1]);
    EXPECT_NEW(ggml_swiglu(ctx, rows), GGML_TYPE_F32, 4, 2, 1, 1);

    CHECK_ASSERT_FAILS("ggml_is_contiguous_1(a)", ggml_swiglu(ctx, ggml_transpose(ctx, a)));
    CHECK_ASSERT_FAILS("ggml_is_contiguous_1(b)", ggml_swiglu_split(ctx, a, ggml_permute(ctx, b, 1, 0, 2, 3)));
    CHECK_ASSERT_FAILS("ggml_are_same_shape(a, b)", ggml_geglu_split(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 3, 1)));
    CHECK_ASSERT_FAILS("a->type == b->type", ggml_reglu_split(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 8, 3, 2)));
    ggml_free(ctx);
}

static void test_scale_clamp(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a = named(ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 5, 4, 3), "s");

    struct ggml_tensor * r = ggml_scale(ctx, a, 0.5f);
    EXPECT_NEW(r, GGML_TYPE_F32, 5, 4, 3, 1);
    EXPECT_SRCS(r, GGML_OP_SCALE, a);
    EXPECT_PARAMS(r, fbits(0.5f), fbits(0.0f));
    struct ggml_tensor * ri = ggml_scale_inplace(ctx, a, -3.0f);
    EXPECT_INPLACE(ri, a);
    EXPECT_SRCS(ri, GGML_OP_SCALE, a);
    EXPECT_PARAMS(ri, fbits(-3.0f), fbits(0.0f));
    struct ggml_tensor * rb = ggml_scale_bias(ctx, a, 2.0f, 0.25f);
    EXPECT_NEW(rb, GGML_TYPE_F32, 5, 4, 3, 1);
    EXPECT_PARAMS(rb, fbits(2.0f), fbits(0.25f));
    struct ggml_tensor * rbi = ggml_scale_bias_inplace(ctx, a, 1e-3f, -7.5f);
    EXPECT_INPLACE(rbi, a);
    EXPECT_PARAMS(rbi, fbits(1e-3f), fbits(-7.5f));
    CHECK(param_f32(rbi, 0) == 1e-3f && param_f32(rbi, 1) == -7.5f);
    // rows with a gap between them still scale: only dims 2, 3 must be packed
    struct ggml_tensor * gapped = ggml_view_2d(ctx, a, 3, 4, a->nb[1], 0);
    EXPECT_NEW(ggml_scale(ctx, gapped, 2.0f), GGML_TYPE_F32, 3, 4, 1, 1);
    CHECK_ASSERT_FAILS("ggml_is_padded_1d(a)", ggml_scale(ctx, ggml_transpose(ctx, a), 2.0f));
    CHECK_ASSERT_FAILS("ggml_is_padded_1d(a)", ggml_scale_bias_inplace(ctx, ggml_permute(ctx, a, 0, 2, 1, 3), 1.0f, 1.0f));

    // clamp is always a view of a
    struct ggml_tensor * c = ggml_clamp(ctx, a, -1.5f, 6.0f);
    EXPECT_INPLACE(c, a);
    EXPECT_SRCS(c, GGML_OP_CLAMP, a);
    EXPECT_PARAMS(c, fbits(-1.5f), fbits(6.0f));
    ggml_free(ctx);
}

static void test_reductions(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 5, 3, 2);
    struct ggml_tensor * h = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 9, 4, 2);

    struct ggml_tensor * s = ggml_sum(ctx, a);
    EXPECT_NEW(s, GGML_TYPE_F32, 1, 1, 1, 1);
    EXPECT_SRCS(s, GGML_OP_SUM, a);
    EXPECT_NO_PARAMS(s);
    EXPECT_NEW(ggml_sum(ctx, h), GGML_TYPE_F16, 1, 1, 1, 1);

    struct ggml_tensor * sr = ggml_sum_rows(ctx, a);
    EXPECT_NEW(sr, GGML_TYPE_F32, 1, 5, 3, 2);
    EXPECT_SRCS(sr, GGML_OP_SUM_ROWS, a);
    EXPECT_NO_PARAMS(sr);
    EXPECT_NEW(ggml_sum_rows(ctx, h), GGML_TYPE_F16, 1, 4, 2, 1);

    struct ggml_tensor * m = ggml_mean(ctx, h);
    EXPECT_NEW(m, GGML_TYPE_F32, 1, 4, 2, 1); // always F32
    EXPECT_SRCS(m, GGML_OP_MEAN, h);
    EXPECT_NO_PARAMS(m);

    struct ggml_tensor * mat = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 6);
    struct ggml_tensor * am = ggml_argmax(ctx, mat);
    EXPECT_NEW(am, GGML_TYPE_I32, 6, 1, 1, 1);
    EXPECT_SRCS(am, GGML_OP_ARGMAX, mat);
    EXPECT_NO_PARAMS(am);
    CHECK_ASSERT_FAILS("ggml_is_matrix(a)", ggml_argmax(ctx, a));

    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 5, 3, 2);
    struct ggml_tensor * ce = ggml_count_equal(ctx, a, b);
    EXPECT_NEW(ce, GGML_TYPE_I64, 1, 1, 1, 1);
    EXPECT_SRCS(ce, GGML_OP_COUNT_EQUAL, a, b);
    EXPECT_NO_PARAMS(ce);
    CHECK_ASSERT_FAILS("ggml_are_same_shape(a, b)", ggml_count_equal(ctx, a, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 5, 3, 1)));
    ggml_free(ctx);
}

//
// custom ops
//

static void custom1_fn(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * ud) {
    (void) dst; (void) a; (void) ith; (void) nth; (void) ud;
}
static void custom2_fn(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                       int ith, int nth, void * ud) {
    (void) dst; (void) a; (void) b; (void) ith; (void) nth; (void) ud;
}
static void custom3_fn(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                       const struct ggml_tensor * c, int ith, int nth, void * ud) {
    (void) dst; (void) a; (void) b; (void) c; (void) ith; (void) nth; (void) ud;
}
static void custom_fn(struct ggml_tensor * dst, int ith, int nth, void * ud) {
    (void) dst; (void) ith; (void) nth; (void) ud;
}

// The layout backends read: { function pointer, int n_tasks, void * userdata }
// with natural alignment, every other byte zero.
struct custom_params_layout {
    void (*fun)(void);
    int n_tasks;
    void * userdata;
};

static void expect_custom_params(int line, const struct ggml_tensor * t, const void * fun_bytes, size_t fun_size,
                                 int n_tasks, void * userdata) {
    const unsigned char * p = (const unsigned char *) t->op_params;
    const size_t off_tasks = offsetof(struct custom_params_layout, n_tasks);
    const size_t off_ud    = offsetof(struct custom_params_layout, userdata);
    CHECK_MSG(memcmp(p, fun_bytes, fun_size) == 0, "line %d: function pointer", line);
    int nt;
    memcpy(&nt, p + off_tasks, sizeof(nt));
    CHECK_MSG(nt == n_tasks, "line %d: n_tasks %d, expected %d", line, nt, n_tasks);
    void * ud;
    memcpy(&ud, p + off_ud, sizeof(ud));
    CHECK_MSG(ud == userdata, "line %d: userdata", line);
    for (size_t i = off_tasks + sizeof(int); i < off_ud; i++) {
        CHECK_MSG(p[i] == 0, "line %d: padding byte %zu = %d", line, i, p[i]);
    }
    for (size_t i = off_ud + sizeof(void *); i < GGML_MAX_OP_PARAMS; i++) {
        CHECK_MSG(p[i] == 0, "line %d: byte %zu = %d", line, i, p[i]);
    }
}

#define EXPECT_CUSTOM_PARAMS(t, fn_type, fn, n_tasks, ud) do { \
        const fn_type fn_ = (fn); \
        expect_custom_params(__LINE__, (t), &fn_, sizeof(fn_), (n_tasks), (ud)); \
    } while (0)

static void test_custom(void) {
    struct ggml_context * ctx = new_context();
    int ud_storage = 0;
    void * ud = &ud_storage;
    struct ggml_tensor * a = named(ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 5, 4), "ca");
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 3, 3);
    struct ggml_tensor * c = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 9);

    struct ggml_tensor * r1 = ggml_map_custom1(ctx, a, custom1_fn, 3, ud);
    EXPECT_NEW(r1, GGML_TYPE_F32, 6, 5, 4, 1);
    EXPECT_SRCS(r1, GGML_OP_MAP_CUSTOM1, a);
    EXPECT_CUSTOM_PARAMS(r1, ggml_custom1_op_t, custom1_fn, 3, ud);
    struct ggml_tensor * r1i = ggml_map_custom1_inplace(ctx, a, custom1_fn, GGML_N_TASKS_MAX, NULL);
    EXPECT_INPLACE(r1i, a);
    EXPECT_SRCS(r1i, GGML_OP_MAP_CUSTOM1, a);
    EXPECT_CUSTOM_PARAMS(r1i, ggml_custom1_op_t, custom1_fn, GGML_N_TASKS_MAX, NULL);

    struct ggml_tensor * r2 = ggml_map_custom2(ctx, a, b, custom2_fn, 1, ud);
    EXPECT_NEW(r2, GGML_TYPE_F32, 6, 5, 4, 1);
    EXPECT_SRCS(r2, GGML_OP_MAP_CUSTOM2, a, b);
    EXPECT_CUSTOM_PARAMS(r2, ggml_custom2_op_t, custom2_fn, 1, ud);
    struct ggml_tensor * r2i = ggml_map_custom2_inplace(ctx, a, b, custom2_fn, 8, ud);
    EXPECT_INPLACE(r2i, a);
    EXPECT_SRCS(r2i, GGML_OP_MAP_CUSTOM2, a, b);
    EXPECT_CUSTOM_PARAMS(r2i, ggml_custom2_op_t, custom2_fn, 8, ud);

    struct ggml_tensor * r3 = ggml_map_custom3(ctx, a, b, c, custom3_fn, 2, ud);
    EXPECT_NEW(r3, GGML_TYPE_F32, 6, 5, 4, 1);
    EXPECT_SRCS(r3, GGML_OP_MAP_CUSTOM3, a, b, c);
    EXPECT_CUSTOM_PARAMS(r3, ggml_custom3_op_t, custom3_fn, 2, ud);
    struct ggml_tensor * r3i = ggml_map_custom3_inplace(ctx, a, b, c, custom3_fn, 2, NULL);
    EXPECT_INPLACE(r3i, a);
    EXPECT_SRCS(r3i, GGML_OP_MAP_CUSTOM3, a, b, c);
    EXPECT_CUSTOM_PARAMS(r3i, ggml_custom3_op_t, custom3_fn, 2, NULL);

    CHECK_ASSERT_FAILS("n_tasks == GGML_N_TASKS_MAX || n_tasks > 0", ggml_map_custom1(ctx, a, custom1_fn, 0, NULL));
    CHECK_ASSERT_FAILS("n_tasks == GGML_N_TASKS_MAX || n_tasks > 0", ggml_map_custom2_inplace(ctx, a, b, custom2_fn, -2, NULL));
    CHECK_ASSERT_FAILS("n_tasks == GGML_N_TASKS_MAX || n_tasks > 0", ggml_map_custom3(ctx, a, b, c, custom3_fn, 0, NULL));

    // custom_4d: the shape and type asked for, args in src[0..n_args)
    struct ggml_tensor * args[GGML_MAX_SRC];
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        args[i] = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, i + 1);
    }
    struct ggml_tensor * rc = ggml_custom_4d(ctx, GGML_TYPE_I16, 3, 1, 7, 2, args, 3, custom_fn, 4, ud);
    EXPECT_NEW(rc, GGML_TYPE_I16, 3, 1, 7, 2);
    EXPECT_SRCS(rc, GGML_OP_CUSTOM, args[0], args[1], args[2]);
    EXPECT_CUSTOM_PARAMS(rc, ggml_custom_op_t, custom_fn, 4, ud);
    struct ggml_tensor * rc9 = ggml_custom_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 1, args, GGML_MAX_SRC - 1, custom_fn, 1, NULL);
    EXPECT_SRCS(rc9, GGML_OP_CUSTOM, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7], args[8]);
    struct ggml_tensor * rc0 = ggml_custom_4d(ctx, GGML_TYPE_F32, 2, 2, 1, 1, NULL, 0, custom_fn, GGML_N_TASKS_MAX, NULL);
    EXPECT_NO_SRCS(rc0, GGML_OP_CUSTOM);
    EXPECT_CUSTOM_PARAMS(rc0, ggml_custom_op_t, custom_fn, GGML_N_TASKS_MAX, NULL);
    CHECK_ASSERT_FAILS("n_args < GGML_MAX_SRC", ggml_custom_4d(ctx, GGML_TYPE_F32, 1, 1, 1, 1, args, GGML_MAX_SRC, custom_fn, 1, NULL));

    // custom_inplace: a view of a, a in src[0], the args after it
    struct ggml_tensor * ci = ggml_custom_inplace(ctx, a, args, 2, custom_fn, 5, ud);
    EXPECT_INPLACE(ci, a);
    EXPECT_SRCS(ci, GGML_OP_CUSTOM, a, args[0], args[1]);
    EXPECT_CUSTOM_PARAMS(ci, ggml_custom_op_t, custom_fn, 5, ud);
    struct ggml_tensor * ci8 = ggml_custom_inplace(ctx, a, args, GGML_MAX_SRC - 2, custom_fn, 1, NULL);
    EXPECT_SRCS(ci8, GGML_OP_CUSTOM, a, args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]);
    CHECK_ASSERT_FAILS("n_args < GGML_MAX_SRC - 1", ggml_custom_inplace(ctx, a, args, GGML_MAX_SRC - 1, custom_fn, 1, NULL));
    ggml_free(ctx);
}

//
// copies
//

static void test_copies(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a = named(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 4), "src");
    struct ggml_tensor * b = named(ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 24), "dst");
    struct ggml_tensor * anon = ggml_new_tensor_3d(ctx, GGML_TYPE_Q8_0, 32, 3, 1);

    // cpy: a view of b, with b's type, shape and strides
    struct ggml_tensor * c = ggml_cpy(ctx, a, b);
    EXPECT_SHAPE(c, GGML_TYPE_F16, 24, 1, 1, 1);
    EXPECT_STRIDES(c, 2, 48, 48, 48);
    EXPECT_VIEW(c, b, 0);
    EXPECT_SRCS(c, GGML_OP_CPY, a, b);
    EXPECT_NO_PARAMS(c);
    EXPECT_NAME(c, "dst (copy of src)");

    struct ggml_tensor * c2 = ggml_cpy(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 96), anon);
    EXPECT_SHAPE(c2, GGML_TYPE_Q8_0, 32, 3, 1, 1);
    EXPECT_VIEW(c2, anon, 0);
    EXPECT_NAME(c2, " (copy)"); // the source has no name
    CHECK_ASSERT_FAILS("ggml_nelements(a) == ggml_nelements(b)", ggml_cpy(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 23)));

    // into a view: the copy lands in the root tensor at the view's offset
    struct ggml_tensor * big = named(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 6, 10), "big");
    struct ggml_tensor * win = ggml_view_2d(ctx, big, 6, 4, big->nb[1], 3*big->nb[1]);
    struct ggml_tensor * cv = ggml_cpy(ctx, a, win);
    EXPECT_VIEW(cv, big, 3*6*sizeof(float));
    EXPECT_SRCS(cv, GGML_OP_CPY, a, win);
    EXPECT_NAME(cv, "big (view) (copy of src)");

    // cast: a new tensor that is its own destination
    struct ggml_tensor * k = ggml_cast(ctx, a, GGML_TYPE_F16);
    EXPECT_NEW(k, GGML_TYPE_F16, 6, 4, 1, 1);
    EXPECT_SRCS(k, GGML_OP_CPY, a, k);
    EXPECT_NO_PARAMS(k);
    EXPECT_NAME(k, "src (copy)");
    struct ggml_tensor * ki = ggml_cast(ctx, ggml_transpose(ctx, a), GGML_TYPE_I32);
    EXPECT_NEW(ki, GGML_TYPE_I32, 4, 6, 1, 1);
    EXPECT_NAME(ki, "src (transposed) (copy)");

    // cont: contiguous copies
    struct ggml_tensor * t = ggml_transpose(ctx, a);
    struct ggml_tensor * ct = ggml_cont(ctx, t);
    EXPECT_NEW(ct, GGML_TYPE_F32, 4, 6, 1, 1);
    EXPECT_SRCS(ct, GGML_OP_CONT, t);
    EXPECT_NO_PARAMS(ct);
    EXPECT_NAME(ct, "src (transposed) (cont)");

    struct ggml_tensor * c1 = ggml_cont_1d(ctx, t, 24);
    EXPECT_NEW(c1, GGML_TYPE_F32, 24, 1, 1, 1);
    EXPECT_SRCS(c1, GGML_OP_CONT, t);
    struct ggml_tensor * c2d = ggml_cont_2d(ctx, t, 3, 8);
    EXPECT_NEW(c2d, GGML_TYPE_F32, 3, 8, 1, 1);
    struct ggml_tensor * c3 = ggml_cont_3d(ctx, t, 2, 3, 4);
    EXPECT_NEW(c3, GGML_TYPE_F32, 2, 3, 4, 1);
    struct ggml_tensor * c4 = ggml_cont_4d(ctx, t, 1, 2, 3, 4);
    EXPECT_NEW(c4, GGML_TYPE_F32, 1, 2, 3, 4);
    EXPECT_SRCS(c4, GGML_OP_CONT, t);
    EXPECT_NAME(c4, "src (transposed) (cont)");
    CHECK_ASSERT_FAILS("ggml_nelements(a) == (ne0*ne1*ne2*ne3)", ggml_cont_2d(ctx, t, 5, 5));
    CHECK_ASSERT_FAILS("ggml_nelements(a) == (ne0*ne1*ne2*ne3)", ggml_cont_4d(ctx, t, 2, 3, 4, 2));
    ggml_free(ctx);
}

//
// reshape and views
//

static void test_reshape(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a = named(ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 5, 4), "r");

    struct ggml_tensor * r1 = ggml_reshape_1d(ctx, a, 120);
    EXPECT_SHAPE(r1, GGML_TYPE_F32, 120, 1, 1, 1);
    EXPECT_STRIDES(r1, 4, 480, 480, 480);
    EXPECT_VIEW(r1, a, 0);
    EXPECT_SRCS(r1, GGML_OP_RESHAPE, a);
    EXPECT_NO_PARAMS(r1);
    EXPECT_NAME(r1, "r (reshaped)");

    struct ggml_tensor * r2 = ggml_reshape_2d(ctx, a, 10, 12);
    EXPECT_SHAPE(r2, GGML_TYPE_F32, 10, 12, 1, 1);
    EXPECT_STRIDES(r2, 4, 40, 480, 480);
    EXPECT_VIEW(r2, a, 0);
    struct ggml_tensor * r3 = ggml_reshape_3d(ctx, a, 2, 3, 20);
    EXPECT_SHAPE(r3, GGML_TYPE_F32, 2, 3, 20, 1);
    EXPECT_STRIDES(r3, 4, 8, 24, 480);
    struct ggml_tensor * r4 = ggml_reshape_4d(ctx, a, 5, 4, 3, 2);
    EXPECT_SHAPE(r4, GGML_TYPE_F32, 5, 4, 3, 2);
    EXPECT_STRIDES(r4, 4, 20, 80, 240);
    EXPECT_SRCS(r4, GGML_OP_RESHAPE, a);

    // only b's shape counts: a transposed b is fine
    struct ggml_tensor * shape = ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 15));
    struct ggml_tensor * rb = ggml_reshape(ctx, a, shape);
    EXPECT_SHAPE(rb, GGML_TYPE_F32, 15, 8, 1, 1);
    EXPECT_STRIDES(rb, 4, 60, 480, 480);
    EXPECT_VIEW(rb, a, 0);
    EXPECT_SRCS(rb, GGML_OP_RESHAPE, a);
    EXPECT_NAME(rb, "r (reshaped)");

    // a quantized reshape keeps whole blocks per row
    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 6);
    struct ggml_tensor * rq = ggml_reshape_2d(ctx, q, 128, 3);
    EXPECT_STRIDES(rq, 18, 72, 216, 216);

    // reshape of a contiguous view: the root stays the source of memory
    struct ggml_tensor * v = ggml_view_1d(ctx, a, 30, 60*sizeof(float));
    struct ggml_tensor * rv = ggml_reshape_2d(ctx, v, 5, 6);
    EXPECT_VIEW(rv, a, 60*sizeof(float));
    EXPECT_SRCS(rv, GGML_OP_RESHAPE, v);
    EXPECT_NAME(rv, "r (view) (reshaped)");

    // reshaping a view that is not contiguous must abort
    struct ggml_tensor * t  = ggml_transpose(ctx, ggml_reshape_2d(ctx, a, 30, 4));
    struct ggml_tensor * sv = ggml_view_2d(ctx, a, 3, 5, a->nb[1], 0); // half of each row
    CHECK_ASSERT_FAILS("ggml_is_contiguous(a)", ggml_reshape_1d(ctx, t, 120));
    CHECK_ASSERT_FAILS("ggml_is_contiguous(a)", ggml_reshape_2d(ctx, sv, 5, 3));
    CHECK_ASSERT_FAILS("ggml_is_contiguous(a)", ggml_reshape_3d(ctx, ggml_permute(ctx, a, 0, 2, 1, 3), 6, 4, 5));
    CHECK_ASSERT_FAILS("ggml_is_contiguous(a)", ggml_reshape_4d(ctx, t, 120, 1, 1, 1));
    CHECK_ASSERT_FAILS("ggml_is_contiguous(a)", ggml_reshape(ctx, sv, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 15)));
    // and so must a change of the element count
    CHECK_ASSERT_FAILS("ggml_nelements(a) == ne0", ggml_reshape_1d(ctx, a, 121));
    CHECK_ASSERT_FAILS("ggml_nelements(a) == ne0*ne1", ggml_reshape_2d(ctx, a, 11, 11));
    CHECK_ASSERT_FAILS("ggml_nelements(a) == ne0*ne1*ne2", ggml_reshape_3d(ctx, a, 2, 3, 4));
    CHECK_ASSERT_FAILS("ggml_nelements(a) == ne0*ne1*ne2*ne3", ggml_reshape_4d(ctx, a, 5, 4, 3, 3));
    CHECK_ASSERT_FAILS("ggml_nelements(a) == ggml_nelements(b)", ggml_reshape(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 119)));
    ggml_free(ctx);
}

static void expect_view_offset_param(int line, const struct ggml_tensor * t, size_t offset) {
    size_t stored;
    memcpy(&stored, t->op_params, sizeof(stored));
    CHECK_MSG(stored == offset, "line %d: offset param %zu, expected %zu", line, stored, offset);
    const unsigned char * p = (const unsigned char *) t->op_params;
    for (size_t i = sizeof(size_t); i < GGML_MAX_OP_PARAMS; i++) {
        CHECK_MSG(p[i] == 0, "line %d: op_params byte %zu = %d", line, i, p[i]);
    }
}

static void test_views(void) {
    struct ggml_context * ctx = new_context();
    static int np_marker; // stands for a backend buffer: only its address is used
    // 8 x 6 x 5 x 3 floats: nb = 4, 32, 192, 960; 2880 bytes
    struct ggml_tensor * a = named(ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 6, 5, 3), "v");

    struct ggml_tensor * v1 = ggml_view_1d(ctx, a, 10, 12);
    EXPECT_SHAPE(v1, GGML_TYPE_F32, 10, 1, 1, 1);
    EXPECT_STRIDES(v1, 4, 40, 40, 40);
    EXPECT_VIEW(v1, a, 12);
    EXPECT_SRCS(v1, GGML_OP_VIEW, a);
    expect_view_offset_param(__LINE__, v1, 12);
    EXPECT_NAME(v1, "v (view)");

    // every other row of 3 elements
    struct ggml_tensor * v2 = ggml_view_2d(ctx, a, 3, 4, 64, 8);
    EXPECT_SHAPE(v2, GGML_TYPE_F32, 3, 4, 1, 1);
    EXPECT_STRIDES(v2, 4, 64, 256, 256);
    EXPECT_VIEW(v2, a, 8);
    EXPECT_SRCS(v2, GGML_OP_VIEW, a);
    expect_view_offset_param(__LINE__, v2, 8);
    CHECK(!ggml_is_contiguous(v2));

    struct ggml_tensor * v3 = ggml_view_3d(ctx, a, 8, 2, 5, 32, 192, 960);
    EXPECT_SHAPE(v3, GGML_TYPE_F32, 8, 2, 5, 1);
    EXPECT_STRIDES(v3, 4, 32, 192, 960);
    EXPECT_VIEW(v3, a, 960);
    expect_view_offset_param(__LINE__, v3, 960);

    struct ggml_tensor * v4 = ggml_view_4d(ctx, a, 4, 6, 5, 2, 32, 192, 960, 16);
    EXPECT_SHAPE(v4, GGML_TYPE_F32, 4, 6, 5, 2);
    EXPECT_STRIDES(v4, 4, 32, 192, 960);
    EXPECT_VIEW(v4, a, 16);
    EXPECT_SRCS(v4, GGML_OP_VIEW, a);
    expect_view_offset_param(__LINE__, v4, 16);

    // views of views: offsets add up, view_src is the root, src[0] the parent
    struct ggml_tensor * vv = ggml_view_2d(ctx, v3, 4, 2, 32, 8);
    EXPECT_VIEW(vv, a, 968);
    EXPECT_SRCS(vv, GGML_OP_VIEW, v3);
    expect_view_offset_param(__LINE__, vv, 8);
    EXPECT_NAME(vv, "v (view) (view)");
    struct ggml_tensor * vvv = ggml_view_1d(ctx, vv, 2, 4);
    EXPECT_VIEW(vvv, a, 972);
    EXPECT_SRCS(vvv, GGML_OP_VIEW, vv);
    struct ggml_tensor * tv = ggml_view_tensor(ctx, vvv);
    EXPECT_VIEW(tv, a, 972);
    EXPECT_NAME(tv, "v (view) (view) (view) (view)");
    struct ggml_tensor * pv = ggml_permute(ctx, vv, 1, 0, 2, 3);
    EXPECT_VIEW(pv, a, 968);

    // a view of a tensor in a backend buffer gets the data address, but its
    // buffer only from ggml_backend_view_init (which lets the buffer set it up)
    struct ggml_tensor * in_buffer = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    in_buffer->buffer = (struct ggml_backend_buffer *) (void *) &np_marker;
    struct ggml_tensor * bv = ggml_view_1d(ctx, in_buffer, 4, 8);
    CHECK(bv->buffer == NULL);
    EXPECT_VIEW(bv, in_buffer, 8);
    CHECK(ggml_view_tensor(ctx, in_buffer)->buffer == NULL);
    CHECK(ggml_transpose(ctx, in_buffer)->buffer == NULL);
    in_buffer->buffer = NULL;

    // a view of an unallocated tensor has no data
    struct ggml_init_params np = { .mem_size = 16*ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * nctx = ggml_init(np);
    struct ggml_tensor * na = ggml_new_tensor_1d(nctx, GGML_TYPE_F32, 100);
    struct ggml_tensor * nv = ggml_view_1d(nctx, na, 10, 40);
    CHECK(na->data == NULL && nv->data == NULL);
    CHECK(nv->view_src == na && nv->view_offs == 40);
    ggml_free(nctx);

    // views reaching past the end of the source abort
#define PAST_END "view_src == NULL || data_size == 0 || data_size + view_offs <= ggml_nbytes(view_src)"
    CHECK_ASSERT_FAILS(PAST_END, ggml_view_1d(ctx, a, 721, 0));
    CHECK_ASSERT_FAILS(PAST_END, ggml_view_1d(ctx, a, 720, 4));
    CHECK_ASSERT_FAILS(PAST_END, ggml_view_2d(ctx, a, 8, 91, 32, 0));
    CHECK_ASSERT_FAILS(PAST_END, ggml_view_4d(ctx, a, 8, 6, 5, 3, 32, 192, 960, 1));
    // within the parent view's element count, but past the root's end
    struct ggml_tensor * tail = ggml_view_1d(ctx, a, 100, 2480);
    CHECK_ASSERT_FAILS(PAST_END, ggml_view_1d(ctx, tail, 60, 240));
    // exactly up to the end is fine
    EXPECT_VIEW(ggml_view_1d(ctx, a, 720, 0), a, 0);
    EXPECT_VIEW(ggml_view_1d(ctx, a, 1, 2876), a, 2876);
    EXPECT_VIEW(ggml_view_1d(ctx, tail, 40, 240), a, 2720);
    ggml_free(ctx);
}

static void test_permute(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a = named(ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 3, 5, 7), "p");
    int n_perms = 0;
    for (int p0 = 0; p0 < 4; p0++) {
        for (int p1 = 0; p1 < 4; p1++) {
            for (int p2 = 0; p2 < 4; p2++) {
                for (int p3 = 0; p3 < 4; p3++) {
                    if (p0 == p1 || p0 == p2 || p0 == p3 || p1 == p2 || p1 == p3 || p2 == p3) {
                        continue;
                    }
                    n_perms++;
                    struct ggml_tensor * r = ggml_permute(ctx, a, p0, p1, p2, p3);
                    // dimension i of a becomes dimension p_i of the result
                    const int perm[4] = { p0, p1, p2, p3 };
                    int64_t ne[4];
                    size_t  nb[4];
                    for (int i = 0; i < 4; i++) {
                        ne[perm[i]] = a->ne[i];
                        nb[perm[i]] = a->nb[i];
                    }
                    EXPECT_SHAPE(r, GGML_TYPE_F32, ne[0], ne[1], ne[2], ne[3]);
                    EXPECT_STRIDES(r, nb[0], nb[1], nb[2], nb[3]);
                    EXPECT_VIEW(r, a, 0);
                    EXPECT_SRCS(r, GGML_OP_PERMUTE, a);
                    EXPECT_PARAMS(r, p0, p1, p2, p3);
                    EXPECT_NAME(r, "p (permuted)");
                    const bool identity = p0 == 0 && p1 == 1 && p2 == 2 && p3 == 3;
                    CHECK(ggml_is_permuted(r) == !identity);
                    CHECK(ggml_is_contiguous(r) == identity);
                    CHECK_EQ_INT(ggml_nbytes(r), ggml_nbytes(a));
                }
            }
        }
    }
    CHECK_EQ_INT(n_perms, 24);

    // permuting a permutation composes them; back to the original strides
    struct ggml_tensor * pp = ggml_permute(ctx, ggml_permute(ctx, a, 2, 0, 3, 1), 1, 3, 0, 2);
    EXPECT_SHAPE(pp, GGML_TYPE_F32, 2, 3, 5, 7);
    EXPECT_STRIDES(pp, a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
    EXPECT_VIEW(pp, a, 0);

    CHECK_ASSERT_FAILS("axis0 != axis1", ggml_permute(ctx, a, 1, 1, 2, 3));
    CHECK_ASSERT_FAILS("axis0 != axis3", ggml_permute(ctx, a, 3, 1, 2, 3));
    CHECK_ASSERT_FAILS("axis1 != axis2", ggml_permute(ctx, a, 0, 2, 2, 3));
    CHECK_ASSERT_FAILS("axis2 != axis3", ggml_permute(ctx, a, 0, 1, 3, 3));
    CHECK_ASSERT_FAILS("axis0 >= 0 && axis0 < GGML_MAX_DIMS", ggml_permute(ctx, a, 4, 1, 2, 3));
    CHECK_ASSERT_FAILS("axis3 >= 0 && axis3 < GGML_MAX_DIMS", ggml_permute(ctx, a, 0, 1, 2, -1));

    struct ggml_tensor * m = named(ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 9, 4), "m");
    struct ggml_tensor * t = ggml_transpose(ctx, m);
    EXPECT_SHAPE(t, GGML_TYPE_F16, 4, 9, 1, 1);
    EXPECT_STRIDES(t, 18, 2, 72, 72);
    EXPECT_VIEW(t, m, 0);
    EXPECT_SRCS(t, GGML_OP_TRANSPOSE, m);
    EXPECT_NO_PARAMS(t);
    EXPECT_NAME(t, "m (transposed)");
    CHECK(ggml_is_transposed(t));
    struct ggml_tensor * tt = ggml_transpose(ctx, t);
    EXPECT_STRIDES(tt, 2, 18, 72, 72);
    EXPECT_VIEW(tt, m, 0);
    EXPECT_SRCS(tt, GGML_OP_TRANSPOSE, t);
    EXPECT_NAME(tt, "m (transposed) (transposed)");
    ggml_free(ctx);
}

//
// rows by index
//

static void test_get_set_rows(void) {
    struct ggml_context * ctx = new_context();
    // get_rows: per (i2, i3) batch, rows of a picked by b
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 10, 3, 2);
    struct ggml_tensor * b = ggml_new_tensor_3d(ctx, GGML_TYPE_I32, 4, 3, 2);
    struct ggml_tensor * g = ggml_get_rows(ctx, a, b);
    EXPECT_NEW(g, GGML_TYPE_F32, 5, 4, 3, 2);
    EXPECT_SRCS(g, GGML_OP_GET_ROWS, a, b);
    EXPECT_NO_PARAMS(g);

    struct ggml_tensor * h  = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 33, 7);
    struct ggml_tensor * i1 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 9);
    EXPECT_NEW(ggml_get_rows(ctx, h, i1), GGML_TYPE_F32, 33, 9, 1, 1);
    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 10);
    EXPECT_NEW(ggml_get_rows(ctx, q, i1), GGML_TYPE_F32, 64, 9, 1, 1);
    struct ggml_tensor * ai = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 10);
    EXPECT_NEW(ggml_get_rows(ctx, ai, i1), GGML_TYPE_I32, 3, 9, 1, 1);
    // a 2-d table with 1-d indices: a single batch
    struct ggml_tensor * i0 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    EXPECT_NEW(ggml_get_rows(ctx, h, i0), GGML_TYPE_F32, 33, 1, 1, 1);

    CHECK_ASSERT_FAILS("a->ne[2] == b->ne[1]", ggml_get_rows(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_I32, 4, 2, 2)));
    CHECK_ASSERT_FAILS("a->ne[3] == b->ne[2]", ggml_get_rows(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_I32, 4, 3, 1)));
    CHECK_ASSERT_FAILS("b->ne[3] == 1", ggml_get_rows(ctx, h, ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 4, 1, 1, 2)));
    CHECK_ASSERT_FAILS("b->type == GGML_TYPE_I32", ggml_get_rows(ctx, h, ggml_new_tensor_1d(ctx, GGML_TYPE_I64, 4)));

    // set_rows: a view of the destination a; sources b (rows) and c (indices)
    struct ggml_tensor * dst  = named(ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 10, 3, 2), "cache");
    struct ggml_tensor * rows = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 4, 3, 2);
    const enum ggml_type idx_types[2] = { GGML_TYPE_I64, GGML_TYPE_I32 };
    for (int k = 0; k < 2; k++) {
        struct ggml_tensor * idx = ggml_new_tensor_3d(ctx, idx_types[k], 4, 3, 2);
        struct ggml_tensor * s = ggml_set_rows(ctx, dst, rows, idx);
        EXPECT_INPLACE(s, dst);
        EXPECT_SRCS(s, GGML_OP_SET_ROWS, rows, idx, dst);
        EXPECT_NO_PARAMS(s);
        // indices broadcast over dims 2 and 3 of b
        struct ggml_tensor * idx_b = ggml_new_tensor_3d(ctx, idx_types[k], 4, 1, 1);
        struct ggml_tensor * sb = ggml_set_rows(ctx, dst, rows, idx_b);
        EXPECT_INPLACE(sb, dst);
        EXPECT_SRCS(sb, GGML_OP_SET_ROWS, rows, idx_b, dst);
        struct ggml_tensor * idx_c = ggml_new_tensor_3d(ctx, idx_types[k], 4, 3, 1);
        EXPECT_SRCS(ggml_set_rows(ctx, dst, rows, idx_c), GGML_OP_SET_ROWS, rows, idx_c, dst);
    }
    // into a view of the destination (a window of rows): the view's root and offset
    struct ggml_tensor * win = ggml_view_4d(ctx, dst, 8, 5, 3, 2, dst->nb[1], dst->nb[2], dst->nb[3], 2*dst->nb[1]);
    struct ggml_tensor * idx = ggml_new_tensor_3d(ctx, GGML_TYPE_I64, 4, 3, 2);
    struct ggml_tensor * sw = ggml_set_rows(ctx, win, rows, idx);
    expect_inplace(__LINE__, sw, win, dst, 2*dst->nb[1]);
    EXPECT_SRCS(sw, GGML_OP_SET_ROWS, rows, idx, win);
    // F16 rows too
    struct ggml_tensor * rows16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 4, 3, 2);
    EXPECT_INPLACE(ggml_set_rows(ctx, dst, rows16, idx), dst);

    CHECK_ASSERT_FAILS("a->ne[0] == b->ne[0]", ggml_set_rows(ctx, dst, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 4, 3, 2), idx));
    CHECK_ASSERT_FAILS("b->ne[1] == c->ne[0]", ggml_set_rows(ctx, dst, rows, ggml_new_tensor_3d(ctx, GGML_TYPE_I64, 5, 3, 2)));
    CHECK_ASSERT_FAILS("b->ne[2] % c->ne[1] == 0", ggml_set_rows(ctx, dst, rows, ggml_new_tensor_3d(ctx, GGML_TYPE_I64, 4, 2, 2)));
    CHECK_ASSERT_FAILS("a->ne[2] == b->ne[2]", ggml_set_rows(ctx, dst, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 4, 1, 2), idx));
    CHECK_ASSERT_FAILS("c->type == GGML_TYPE_I64 || c->type == GGML_TYPE_I32",
                       ggml_set_rows(ctx, dst, rows, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2)));
    CHECK_ASSERT_FAILS("b->type == GGML_TYPE_F32 || b->type == GGML_TYPE_F16",
                       ggml_set_rows(ctx, dst, ggml_new_tensor_4d(ctx, GGML_TYPE_I32, 8, 4, 3, 2), idx));
    ggml_free(ctx);
}

//
// set, acc
//

static void test_set_acc(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a = named(ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 10, 8, 3), "w");
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);

    struct ggml_tensor * s = ggml_set(ctx, a, b, 40, 320, 960, 44);
    EXPECT_NEW(s, GGML_TYPE_F32, 10, 8, 3, 1);
    EXPECT_SRCS(s, GGML_OP_SET, a, b);
    EXPECT_PARAMS(s, 40, 320, 960, 44, 0);
    struct ggml_tensor * si = ggml_set_inplace(ctx, a, b, 80, 320, 960, 8);
    EXPECT_INPLACE(si, a);
    EXPECT_SRCS(si, GGML_OP_SET, a, b);
    EXPECT_PARAMS(si, 80, 320, 960, 8, 1);
    // 1d and 2d take the remaining strides from a
    struct ggml_tensor * s1 = ggml_set_1d(ctx, a, b, 12);
    EXPECT_NEW(s1, GGML_TYPE_F32, 10, 8, 3, 1);
    EXPECT_PARAMS(s1, 40, 320, 960, 12, 0);
    struct ggml_tensor * s1i = ggml_set_1d_inplace(ctx, a, b, 16);
    EXPECT_INPLACE(s1i, a);
    EXPECT_PARAMS(s1i, 40, 320, 960, 16, 1);
    struct ggml_tensor * s2 = ggml_set_2d(ctx, a, b, 120, 4);
    EXPECT_NEW(s2, GGML_TYPE_F32, 10, 8, 3, 1);
    EXPECT_PARAMS(s2, 120, 320, 960, 4, 0);
    struct ggml_tensor * s2i = ggml_set_2d_inplace(ctx, a, b, 120, 0);
    EXPECT_INPLACE(s2i, a);
    EXPECT_SRCS(s2i, GGML_OP_SET, a, b);
    EXPECT_PARAMS(s2i, 120, 320, 960, 0, 1);
    // other types are fine for set
    struct ggml_tensor * ai = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 16);
    struct ggml_tensor * bi = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    EXPECT_NEW(ggml_set_1d(ctx, ai, bi, 8), GGML_TYPE_I32, 16, 1, 1, 1);
    CHECK_ASSERT_FAILS("ggml_nelements(a) >= ggml_nelements(b)", ggml_set_1d(ctx, bi, ai, 0));
    CHECK_ASSERT_FAILS("offset < (size_t)(1 << 30)", ggml_set_1d(ctx, a, b, (size_t) 1 << 30));

    struct ggml_tensor * c = ggml_acc(ctx, a, b, 40, 320, 960, 48);
    EXPECT_NEW(c, GGML_TYPE_F32, 10, 8, 3, 1);
    EXPECT_SRCS(c, GGML_OP_ACC, a, b);
    EXPECT_PARAMS(c, 40, 320, 960, 48, 0);
    struct ggml_tensor * ci = ggml_acc_inplace(ctx, a, b, 400, 800, 1200, 4);
    EXPECT_INPLACE(ci, a);
    EXPECT_SRCS(ci, GGML_OP_ACC, a, b);
    EXPECT_PARAMS(ci, 400, 800, 1200, 4, 1);
    CHECK_ASSERT_FAILS("ggml_nelements(b) <= ggml_nelements(a)", ggml_acc(ctx, b, a, 16, 32, 32, 0));
    CHECK_ASSERT_FAILS("ggml_is_contiguous(a)", ggml_acc(ctx, ggml_transpose(ctx, a), b, 40, 320, 960, 0));
    CHECK_ASSERT_FAILS("a->type == GGML_TYPE_F32", ggml_acc(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 16), b, 32, 32, 32, 0));
    CHECK_ASSERT_FAILS("b->type == GGML_TYPE_F32", ggml_acc(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 4), 40, 320, 960, 0));
    ggml_free(ctx);
}

//
// repeat, concat, pad, arange, diag_mask_inf
//

static void test_repeat_concat_pad(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 3, 1, 2, 1);
    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 4, 2, 3);

    struct ggml_tensor * r = ggml_repeat(ctx, a, b);
    EXPECT_NEW(r, GGML_TYPE_F16, 6, 4, 2, 3);
    EXPECT_SRCS(r, GGML_OP_REPEAT, a);
    EXPECT_NO_PARAMS(r);
    // same shape: still a new REPEAT node
    struct ggml_tensor * rs = ggml_repeat(ctx, b, b);
    EXPECT_NEW(rs, GGML_TYPE_F32, 6, 4, 2, 3);
    EXPECT_SRCS(rs, GGML_OP_REPEAT, b);
    CHECK_ASSERT_FAILS("ggml_can_repeat(a, b)", ggml_repeat(ctx, b, a));
    CHECK_ASSERT_FAILS("ggml_can_repeat(a, b)", ggml_repeat(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 4)));

    struct ggml_tensor * r4 = ggml_repeat_4d(ctx, a, 9, 5, 4, 7);
    EXPECT_NEW(r4, GGML_TYPE_F16, 9, 5, 4, 7);
    EXPECT_SRCS(r4, GGML_OP_REPEAT, a);
    EXPECT_NO_PARAMS(r4);
    CHECK_ASSERT_FAILS("can_repeat", ggml_repeat_4d(ctx, a, 4, 1, 2, 1));

    // concat along each dimension
    struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 3, 4, 5);
    for (int dim = 0; dim < 4; dim++) {
        int64_t ne[4] = { 2, 3, 4, 5 };
        ne[dim] = 7;
        struct ggml_tensor * y = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
        struct ggml_tensor * c = ggml_concat(ctx, x, y, dim);
        int64_t expected[4] = { 2, 3, 4, 5 };
        expected[dim] += 7;
        EXPECT_NEW(c, GGML_TYPE_F32, expected[0], expected[1], expected[2], expected[3]);
        EXPECT_SRCS(c, GGML_OP_CONCAT, x, y);
        EXPECT_PARAMS(c, dim);
        CHECK_ASSERT_FAILS("a->ne[d] == b->ne[d]", ggml_concat(ctx, x, y, (dim + 1) % 4));
    }
    CHECK_ASSERT_FAILS("a->type == b->type", ggml_concat(ctx, x, ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 2, 3, 4, 5), 0));
    CHECK_ASSERT_FAILS("dim >= 0 && dim < GGML_MAX_DIMS", ggml_concat(ctx, x, x, 4));
    CHECK_ASSERT_FAILS("dim >= 0 && dim < GGML_MAX_DIMS", ggml_concat(ctx, x, x, -1));

    struct ggml_tensor * p = ggml_pad(ctx, x, 1, 0, 3, 2);
    EXPECT_NEW(p, GGML_TYPE_F32, 3, 3, 7, 7);
    EXPECT_SRCS(p, GGML_OP_PAD, x);
    EXPECT_PARAMS(p, 0, 1, 0, 0, 0, 3, 0, 2, 0);
    struct ggml_tensor * pe = ggml_pad_ext(ctx, a, 1, 2, 3, 4, 5, 6, 7, 8);
    EXPECT_NEW(pe, GGML_TYPE_F16, 6, 8, 13, 16);
    EXPECT_SRCS(pe, GGML_OP_PAD, a);
    EXPECT_PARAMS(pe, 1, 2, 3, 4, 5, 6, 7, 8, 0);

    struct ggml_tensor * ar = ggml_arange(ctx, 0.0f, 10.0f, 3.0f);
    EXPECT_NEW(ar, GGML_TYPE_F32, 4, 1, 1, 1); // 0 3 6 9
    EXPECT_NO_SRCS(ar, GGML_OP_ARANGE);
    EXPECT_PARAMS(ar, fbits(0.0f), fbits(10.0f), fbits(3.0f));
    EXPECT_NEW(ggml_arange(ctx, -2.0f, 5.0f, 0.5f), GGML_TYPE_F32, 14, 1, 1, 1);
    EXPECT_NEW(ggml_arange(ctx, 1.0f, 2.0f, 4.0f), GGML_TYPE_F32, 1, 1, 1, 1);
    EXPECT_NEW(ggml_arange(ctx, 0.0f, 9.0f, 3.0f), GGML_TYPE_F32, 3, 1, 1, 1); // stop excluded
    CHECK_ASSERT_FAILS("stop > start", ggml_arange(ctx, 1.0f, 1.0f, 1.0f));

    struct ggml_tensor * sq = named(ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 7, 7, 2), "kq");
    struct ggml_tensor * dm = ggml_diag_mask_inf(ctx, sq, 3);
    EXPECT_NEW(dm, GGML_TYPE_F32, 7, 7, 2, 1);
    EXPECT_SRCS(dm, GGML_OP_DIAG_MASK_INF, sq);
    EXPECT_PARAMS(dm, 3);
    struct ggml_tensor * dmi = ggml_diag_mask_inf_inplace(ctx, sq, -1);
    EXPECT_INPLACE(dmi, sq);
    EXPECT_SRCS(dmi, GGML_OP_DIAG_MASK_INF, sq);
    EXPECT_PARAMS(dmi, -1);
    ggml_free(ctx);
}

//
// normalisation, matrix products
//

static void test_norms(void) {
    struct ggml_context * ctx = new_context();
    typedef struct ggml_tensor * (*norm_fn)(struct ggml_context *, struct ggml_tensor *, float);
    static const struct {
        norm_fn fn, fn_inplace;
        enum ggml_op op;
    } ops[] = {
        { ggml_norm,     ggml_norm_inplace,     GGML_OP_NORM     },
        { ggml_rms_norm, ggml_rms_norm_inplace, GGML_OP_RMS_NORM },
        { ggml_l2_norm,  ggml_l2_norm_inplace,  GGML_OP_L2_NORM  },
    };
    struct ggml_tensor * a = named(ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 257, 3, 2), "n");
    for (size_t k = 0; k < sizeof(ops)/sizeof(ops[0]); k++) {
        struct ggml_tensor * r = ops[k].fn(ctx, a, 1e-5f);
        EXPECT_NEW(r, GGML_TYPE_F32, 257, 3, 2, 1);
        EXPECT_SRCS(r, ops[k].op, a);
        EXPECT_PARAMS(r, fbits(1e-5f));
        struct ggml_tensor * ri = ops[k].fn_inplace(ctx, a, 1e-6f);
        EXPECT_INPLACE(ri, a);
        EXPECT_SRCS(ri, ops[k].op, a);
        EXPECT_PARAMS(ri, fbits(1e-6f));
    }
    ggml_free(ctx);
}

static void test_mul_mat(void) {
    struct ggml_context * ctx = new_context();
    // a = [k, n, b2, b3], b = [k, m, b2*x, b3*y] -> [n, m, b2*x, b3*y]
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 33, 7, 2, 3);
    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 33, 5, 4, 6);
    struct ggml_tensor * r = ggml_mul_mat(ctx, a, b);
    EXPECT_NEW(r, GGML_TYPE_F32, 7, 5, 4, 6);
    EXPECT_SRCS(r, GGML_OP_MUL_MAT, a, b);
    EXPECT_NO_PARAMS(r);

    struct ggml_tensor * same = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 33, 1, 2, 3);
    EXPECT_NEW(ggml_mul_mat(ctx, a, same), GGML_TYPE_F32, 7, 1, 2, 3);
    struct ggml_tensor * q  = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 3);
    struct ggml_tensor * v  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    EXPECT_NEW(ggml_mul_mat(ctx, q, v), GGML_TYPE_F32, 3, 1, 1, 1);
    // one matrix broadcast over every batch of b
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 9);
    EXPECT_NEW(ggml_mul_mat(ctx, w, b), GGML_TYPE_F32, 9, 5, 4, 6);
    // b may be non-contiguous (a permuted view)
    struct ggml_tensor * bp = ggml_permute(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 33, 4, 5, 6), 0, 2, 1, 3);
    struct ggml_tensor * rp = ggml_mul_mat(ctx, a, bp);
    EXPECT_NEW(rp, GGML_TYPE_F32, 7, 5, 4, 6);
    EXPECT_SRCS(rp, GGML_OP_MUL_MAT, a, bp);

    ggml_mul_mat_set_prec(r, GGML_PREC_F32);
    EXPECT_PARAMS(r, GGML_PREC_F32);
    ggml_mul_mat_set_hint(r, GGML_HINT_SRC0_IS_HADAMARD);
    EXPECT_PARAMS(r, GGML_PREC_F32, GGML_HINT_SRC0_IS_HADAMARD);
    ggml_mul_mat_set_prec(r, GGML_PREC_DEFAULT);
    EXPECT_PARAMS(r, GGML_PREC_DEFAULT, GGML_HINT_SRC0_IS_HADAMARD);
    CHECK_ASSERT_FAILS("a->op == GGML_OP_MUL_MAT", ggml_mul_mat_set_prec(a, GGML_PREC_F32));
    CHECK_ASSERT_FAILS("a->op == GGML_OP_MUL_MAT", ggml_mul_mat_set_hint(ggml_add(ctx, b, b), GGML_HINT_NONE));

    CHECK_ASSERT_FAILS("ggml_can_mul_mat(a, b)", ggml_mul_mat(ctx, a, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 32, 5, 4, 6)));
    CHECK_ASSERT_FAILS("ggml_can_mul_mat(a, b)", ggml_mul_mat(ctx, a, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 33, 5, 3, 6)));
    CHECK_ASSERT_FAILS("ggml_can_mul_mat(a, b)", ggml_mul_mat(ctx, a, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 33, 5, 4, 4)));
    CHECK_ASSERT_FAILS("ggml_can_mul_mat(a, b)", ggml_mul_mat(ctx, b, a)); // broadcast only one way
    CHECK_ASSERT_FAILS("!ggml_is_transposed(a)",
                       ggml_mul_mat(ctx, ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 4)), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2)));

    // mul_mat_id: as [k, n, n_expert], b [k, n_used or 1, n_tokens], ids [n_used, n_tokens]
    struct ggml_tensor * as  = ggml_new_tensor_3d(ctx, GGML_TYPE_Q8_0, 64, 9, 8);
    struct ggml_tensor * bb  = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 2, 5);
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 5);
    struct ggml_tensor * mi  = ggml_mul_mat_id(ctx, as, bb, ids);
    EXPECT_NEW(mi, GGML_TYPE_F32, 9, 4, 5, 1);
    EXPECT_SRCS(mi, GGML_OP_MUL_MAT_ID, as, bb, ids);
    EXPECT_NO_PARAMS(mi);
    struct ggml_tensor * b1 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 1, 5);
    EXPECT_NEW(ggml_mul_mat_id(ctx, as, b1, ids), GGML_TYPE_F32, 9, 4, 5, 1);
    CHECK_ASSERT_FAILS("ids->type == GGML_TYPE_I32", ggml_mul_mat_id(ctx, as, bb, ggml_new_tensor_2d(ctx, GGML_TYPE_I64, 4, 5)));
    CHECK_ASSERT_FAILS("ids->ne[0] % b->ne[1] == 0", ggml_mul_mat_id(ctx, as, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 3, 5), ids));
    CHECK_ASSERT_FAILS("ids->ne[1] == b->ne[2]", ggml_mul_mat_id(ctx, as, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 2, 6), ids));
    CHECK_ASSERT_FAILS("as->ne[0] == b->ne[0]", ggml_mul_mat_id(ctx, as, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 32, 2, 5), ids));
    CHECK_ASSERT_FAILS("as->ne[3] == 1", ggml_mul_mat_id(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 64, 9, 8, 2), bb, ids));

    // out_prod: a [m, n, b2, b3], b [p, n, b2*x, b3*y] -> [m, p, b2*x, b3*y]
    struct ggml_tensor * oa = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 6, 4, 2, 1);
    struct ggml_tensor * ob = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 4, 4, 3);
    struct ggml_tensor * op = ggml_out_prod(ctx, oa, ob);
    EXPECT_NEW(op, GGML_TYPE_F32, 6, 3, 4, 3);
    EXPECT_SRCS(op, GGML_OP_OUT_PROD, oa, ob);
    EXPECT_NO_PARAMS(op);
    CHECK_ASSERT_FAILS("ggml_can_out_prod(a, b)", ggml_out_prod(ctx, oa, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 5, 4, 3)));
    CHECK_ASSERT_FAILS("ggml_can_out_prod(a, b)", ggml_out_prod(ctx, oa, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 4, 3, 3)));
    ggml_free(ctx);
}

//
// softmax, rope
//

static void test_soft_max(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a = named(ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 32, 7, 4, 2), "kq");

    struct ggml_tensor * s = ggml_soft_max(ctx, a);
    EXPECT_NEW(s, GGML_TYPE_F32, 32, 7, 4, 2);
    EXPECT_SRCS(s, GGML_OP_SOFT_MAX, a);
    EXPECT_PARAMS(s, fbits(1.0f), fbits(0.0f));
    struct ggml_tensor * si = ggml_soft_max_inplace(ctx, a);
    EXPECT_INPLACE(si, a);
    EXPECT_SRCS(si, GGML_OP_SOFT_MAX, a);
    EXPECT_PARAMS(si, fbits(1.0f), fbits(0.0f));

    // masks: F16 or F32, rows padded beyond ne1, broadcast over dims 2 and 3
    struct ggml_tensor * m16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 32, 8);
    struct ggml_tensor * e = ggml_soft_max_ext(ctx, a, m16, 0.125f, 8.0f);
    EXPECT_NEW(e, GGML_TYPE_F32, 32, 7, 4, 2);
    EXPECT_SRCS(e, GGML_OP_SOFT_MAX, a, m16);
    EXPECT_PARAMS(e, fbits(0.125f), fbits(8.0f));
    struct ggml_tensor * m32 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 32, 7, 2, 2);
    struct ggml_tensor * ei = ggml_soft_max_ext_inplace(ctx, a, m32, 0.5f, 0.0f);
    EXPECT_INPLACE(ei, a);
    EXPECT_SRCS(ei, GGML_OP_SOFT_MAX, a, m32);
    EXPECT_PARAMS(ei, fbits(0.5f), fbits(0.0f));
    struct ggml_tensor * en = ggml_soft_max_ext(ctx, a, NULL, 2.0f, 0.0f);
    EXPECT_SRCS(en, GGML_OP_SOFT_MAX, a);

    // sinks: one per head, in src[2]; NULL removes them
    struct ggml_tensor * sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_soft_max_add_sinks(e, sinks);
    EXPECT_SRCS(e, GGML_OP_SOFT_MAX, a, m16, sinks);
    EXPECT_PARAMS(e, fbits(0.125f), fbits(8.0f));
    ggml_soft_max_add_sinks(e, NULL);
    EXPECT_SRCS(e, GGML_OP_SOFT_MAX, a, m16);
    ggml_soft_max_add_sinks(e, sinks);
    CHECK_ASSERT_FAILS("a->src[2] == NULL", ggml_soft_max_add_sinks(e, sinks));
    CHECK_ASSERT_FAILS("a->src[0]->ne[2] == sinks->ne[0]", ggml_soft_max_add_sinks(s, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3)));
    CHECK_ASSERT_FAILS("sinks->type == GGML_TYPE_F32", ggml_soft_max_add_sinks(s, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 4)));
    CHECK_ASSERT_FAILS("a->op == GGML_OP_SOFT_MAX", ggml_soft_max_add_sinks(a, sinks));

    CHECK_ASSERT_FAILS("ggml_is_contiguous(a)", ggml_soft_max(ctx, ggml_permute(ctx, a, 0, 2, 1, 3)));
    CHECK_ASSERT_FAILS("mask->type == GGML_TYPE_F16 || mask->type == GGML_TYPE_F32",
                       ggml_soft_max_ext(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 32, 7), 1.0f, 0.0f));
    CHECK_ASSERT_FAILS("mask->ne[0] == a->ne[0]", ggml_soft_max_ext(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 31, 7), 1.0f, 0.0f));
    CHECK_ASSERT_FAILS("mask->ne[1] >= a->ne[1]", ggml_soft_max_ext(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 32, 6), 1.0f, 0.0f));
    CHECK_ASSERT_FAILS("a->ne[2]%mask->ne[2] == 0", ggml_soft_max_ext(ctx, a, ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 32, 7, 3), 1.0f, 0.0f));
    CHECK_ASSERT_FAILS("a->ne[3]%mask->ne[3] == 0", ggml_soft_max_ext(ctx, a, ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 32, 7, 1, 3), 1.0f, 0.0f));
    CHECK_ASSERT_FAILS("ggml_is_contiguous(mask)",
                       ggml_soft_max_ext(ctx, a, ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 7, 32)), 1.0f, 0.0f));
    CHECK_ASSERT_FAILS("mask", ggml_soft_max_ext(ctx, a, NULL, 1.0f, 1.0f));
    ggml_free(ctx);
}

static void expect_rope_params(int line, const struct ggml_tensor * t, int n_dims, int mode, int n_ctx_orig,
                               float base, float scale, float ext, float attn, float fast, float slow,
                               const int sections[4], int n_offs) {
    const int32_t words[16] = {
        0, n_dims, mode, 0, n_ctx_orig,
        fbits(base), fbits(scale), fbits(ext), fbits(attn), fbits(fast), fbits(slow),
        sections ? sections[0] : 0, sections ? sections[1] : 0, sections ? sections[2] : 0, sections ? sections[3] : 0,
        n_offs,
    };
    expect_params(line, t, words, 16);
}

static void test_rope(void) {
    struct ggml_context * ctx = new_context();
    // a: [head_dim, n_head, n_tokens]; positions: one I32 per token
    struct ggml_tensor * a   = named(ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 8, 5), "q");
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 5);
    struct ggml_tensor * ff  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 32);

    struct ggml_tensor * r = ggml_rope(ctx, a, pos, 64, GGML_ROPE_TYPE_NORMAL);
    EXPECT_NEW(r, GGML_TYPE_F32, 64, 8, 5, 1);
    EXPECT_SRCS(r, GGML_OP_ROPE, a, pos);
    expect_rope_params(__LINE__, r, 64, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, NULL, 0);
    struct ggml_tensor * ri = ggml_rope_inplace(ctx, a, pos, 32, GGML_ROPE_TYPE_NEOX);
    EXPECT_INPLACE(ri, a);
    EXPECT_SRCS(ri, GGML_OP_ROPE, a, pos);
    expect_rope_params(__LINE__, ri, 32, 2, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, NULL, 0);

    struct ggml_tensor * re = ggml_rope_ext(ctx, a, pos, ff, 64, GGML_ROPE_TYPE_NEOX, 4096,
                                           500000.0f, 0.25f, 1.0f, 0.75f, 32.0f, 1.0f);
    EXPECT_NEW(re, GGML_TYPE_F32, 64, 8, 5, 1);
    EXPECT_SRCS(re, GGML_OP_ROPE, a, pos, ff);
    expect_rope_params(__LINE__, re, 64, 2, 4096, 500000.0f, 0.25f, 1.0f, 0.75f, 32.0f, 1.0f, NULL, 0);
    CHECK(param_f32(re, 5) == 500000.0f && param_f32(re, 8) == 0.75f);
    struct ggml_tensor * rei = ggml_rope_ext_inplace(ctx, a, pos, NULL, 48, 0, 2048, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    EXPECT_INPLACE(rei, a);
    EXPECT_SRCS(rei, GGML_OP_ROPE, a, pos);
    expect_rope_params(__LINE__, rei, 48, 0, 2048, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f, NULL, 0);

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    struct ggml_tensor * rc = ggml_rope_custom(ctx, a, pos, 64, 2, 1024, 1e6f, 0.5f, 0.0f, 1.0f, 16.0f, 2.0f);
    EXPECT_NEW(rc, GGML_TYPE_F32, 64, 8, 5, 1);
    EXPECT_SRCS(rc, GGML_OP_ROPE, a, pos);
    expect_rope_params(__LINE__, rc, 64, 2, 1024, 1e6f, 0.5f, 0.0f, 1.0f, 16.0f, 2.0f, NULL, 0);
    struct ggml_tensor * rci = ggml_rope_custom_inplace(ctx, a, pos, 16, 0, 1024, 1e6f, 0.5f, 0.0f, 1.0f, 16.0f, 2.0f);
    EXPECT_INPLACE(rci, a);
    expect_rope_params(__LINE__, rci, 16, 0, 1024, 1e6f, 0.5f, 0.0f, 1.0f, 16.0f, 2.0f, NULL, 0);
#pragma GCC diagnostic pop

    // multi-section: four positions per token, sections stored
    int sections[4] = { 16, 8, 8, 0 };
    struct ggml_tensor * pos4 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 20);
    struct ggml_tensor * rm = ggml_rope_multi(ctx, a, pos4, ff, 64, sections, GGML_ROPE_TYPE_MROPE, 8192,
                                             1e6f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
    EXPECT_NEW(rm, GGML_TYPE_F32, 64, 8, 5, 1);
    EXPECT_SRCS(rm, GGML_OP_ROPE, a, pos4, ff);
    expect_rope_params(__LINE__, rm, 64, 8, 8192, 1e6f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f, sections, 0);
    int vsec[4] = { 8, 8, 0, 0 };
    struct ggml_tensor * rmi = ggml_rope_multi_inplace(ctx, a, pos4, NULL, 32, vsec, GGML_ROPE_TYPE_VISION, 0,
                                                      10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    EXPECT_INPLACE(rmi, a);
    EXPECT_SRCS(rmi, GGML_OP_ROPE, a, pos4);
    expect_rope_params(__LINE__, rmi, 32, 24, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, vsec, 0);
    struct ggml_tensor * rim = ggml_rope_multi(ctx, a, pos4, NULL, 64, sections, GGML_ROPE_TYPE_IMROPE, 0,
                                              10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    expect_rope_params(__LINE__, rim, 64, 40, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, sections, 0);
    // sections are ignored in the single-position modes
    struct ggml_tensor * rmn = ggml_rope_multi(ctx, a, pos, NULL, 64, sections, GGML_ROPE_TYPE_NEOX, 0,
                                              10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    expect_rope_params(__LINE__, rmn, 64, 2, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, NULL, 0);
    // a multi-section mode without sections stores zeros
    struct ggml_tensor * rm0 = ggml_rope_multi(ctx, a, pos4, NULL, 64, NULL, GGML_ROPE_TYPE_MROPE, 0,
                                              10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f);
    expect_rope_params(__LINE__, rm0, 64, 8, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, NULL, 0);

    // the offset goes into the last slot
    CHECK(ggml_rope_set_offset(re, 7) == re);
    expect_rope_params(__LINE__, re, 64, 2, 4096, 500000.0f, 0.25f, 1.0f, 0.75f, 32.0f, 1.0f, NULL, 7);
    ggml_rope_set_offset(rm, 3);
    expect_rope_params(__LINE__, rm, 64, 8, 8192, 1e6f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f, sections, 3);
    CHECK_ASSERT_FAILS("a->op == GGML_OP_ROPE || a->op == GGML_OP_ROPE_BACK", ggml_rope_set_offset(a, 1));
    CHECK_ASSERT_FAILS("n_offs >= 0", ggml_rope_set_offset(r, -1));
    CHECK_ASSERT_FAILS("mode != GGML_ROPE_TYPE_VISION", ggml_rope_set_offset(rmi, 1));

    // positions: an I32 vector with one entry per token (four in the multi-section modes)
    CHECK_ASSERT_FAILS("a->ne[2] == b->ne[0]", ggml_rope(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 8), 64, 0));
    CHECK_ASSERT_FAILS("a->ne[2] == b->ne[0]", ggml_rope(ctx, a, pos4, 64, 0));
    CHECK_ASSERT_FAILS("b->type == GGML_TYPE_I32", ggml_rope(ctx, a, ggml_new_tensor_1d(ctx, GGML_TYPE_I64, 5), 64, 0));
    CHECK_ASSERT_FAILS("ggml_is_vector(b)", ggml_rope(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 5, 2), 64, 0));
    CHECK_ASSERT_FAILS("a->ne[2] * 4 == b->ne[0]",
                       ggml_rope_multi(ctx, a, pos, NULL, 64, sections, GGML_ROPE_TYPE_MROPE, 0, 1e4f, 1, 0, 1, 0, 0));
    CHECK_ASSERT_FAILS("(mode & 1) == 0 && \"mode & 1 == 1 is no longer supported\"", ggml_rope(ctx, a, pos, 64, 1));
    CHECK_ASSERT_FAILS("c->ne[0] >= n_dims / 2",
                       ggml_rope_ext(ctx, a, pos, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 31), 64, 0, 0, 1e4f, 1, 0, 1, 0, 0));
    CHECK_ASSERT_FAILS("c->type == GGML_TYPE_F32",
                       ggml_rope_ext(ctx, a, pos, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 32), 64, 0, 0, 1e4f, 1, 0, 1, 0, 0));
    ggml_free(ctx);
}

// corr_dim(n_rot) = n_dims * ln(n_ctx_orig / (2 pi n_rot)) / (2 ln(base)), in double
static double corr_dim_ref(int n_dims, int n_ctx_orig, double n_rot, double base) {
    const double pi = 3.14159265358979323846;
    return n_dims * log(n_ctx_orig / (n_rot * 2.0 * pi)) / (2.0 * log(base));
}

static void test_rope_yarn_corr_dims(void) {
    // (n_dims, n_ctx_orig, base, fast, slow): chosen so that no corr_dim is within 1e-3 of an integer
    static const struct { int n_dims, n_ctx; float base, fast, slow; } cases[] = {
        { 128, 4096,  10000.0f, 32.0f, 1.0f },
        {  64, 2048, 500000.0f, 32.0f, 1.0f },
        {  96, 8192,  10000.0f, 16.0f, 2.0f },
        { 128, 4096,  10000.0f, 1e6f,  1e-6f }, // clamped to [0, n_dims - 1]
    };
    for (size_t k = 0; k < sizeof(cases)/sizeof(cases[0]); k++) {
        float dims[2] = { -100.0f, -100.0f };
        ggml_rope_yarn_corr_dims(cases[k].n_dims, cases[k].n_ctx, cases[k].base, cases[k].fast, cases[k].slow, dims);
        const double lo = corr_dim_ref(cases[k].n_dims, cases[k].n_ctx, cases[k].fast, cases[k].base);
        const double hi = corr_dim_ref(cases[k].n_dims, cases[k].n_ctx, cases[k].slow, cases[k].base);
        CHECK_MSG(fabs(lo - round(lo)) > 1e-3 && fabs(hi - round(hi)) > 1e-3, "case %zu is too close to an integer", k);
        const double start = fmax(0.0, floor(lo));
        const double end   = fmin(cases[k].n_dims - 1.0, ceil(hi));
        CHECK_NEAR(dims[0], start, 0.0);
        CHECK_NEAR(dims[1], end, 0.0);
    }
    // case 0 by hand: 128 ln(4096 / 64pi) / (2 ln 1e4) = 20.94..., 128 ln(4096 / 2pi) / (2 ln 1e4) = 45.03...
    float dims[2];
    ggml_rope_yarn_corr_dims(128, 4096, 10000.0f, 32.0f, 1.0f, dims);
    CHECK(dims[0] == 20.0f && dims[1] == 46.0f);
    ggml_rope_yarn_corr_dims(128, 4096, 10000.0f, 1e6f, 1e-6f, dims);
    CHECK(dims[0] == 0.0f && dims[1] == 127.0f);
}

//
// sorting, attention
//

static void test_sort(void) {
    struct ggml_context * ctx = new_context();
    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 33, 4, 2);

    for (int order = 0; order <= 1; order++) {
        struct ggml_tensor * s = ggml_argsort(ctx, a, (enum ggml_sort_order) order);
        EXPECT_NEW(s, GGML_TYPE_I32, 33, 4, 2, 1);
        EXPECT_SRCS(s, GGML_OP_ARGSORT, a);
        EXPECT_PARAMS(s, order);
    }

    // argsort_top_k: the first k columns of a descending argsort, as a view
    struct ggml_tensor * tk = ggml_argsort_top_k(ctx, a, 5);
    EXPECT_SHAPE(tk, GGML_TYPE_I32, 5, 4, 2, 1);
    EXPECT_STRIDES(tk, 4, 33*4, 33*4*4, 33*4*4*2);
    struct ggml_tensor * sorted = tk->src[0];
    CHECK(sorted != NULL);
    if (sorted) {
        EXPECT_NEW(sorted, GGML_TYPE_I32, 33, 4, 2, 1);
        EXPECT_SRCS(sorted, GGML_OP_ARGSORT, a);
        EXPECT_PARAMS(sorted, GGML_SORT_ORDER_DESC);
        EXPECT_VIEW(tk, sorted, 0);
        EXPECT_SRCS(tk, GGML_OP_VIEW, sorted);
        expect_view_offset_param(__LINE__, tk, 0);
    }
    EXPECT_SHAPE(ggml_argsort_top_k(ctx, a, 33), GGML_TYPE_I32, 33, 4, 2, 1);
    CHECK_ASSERT_FAILS("a->ne[0] >= k", ggml_argsort_top_k(ctx, a, 34));

    struct ggml_tensor * t = ggml_top_k(ctx, a, 7);
    EXPECT_NEW(t, GGML_TYPE_I32, 7, 4, 2, 1);
    EXPECT_SRCS(t, GGML_OP_TOP_K, a);
    EXPECT_NO_PARAMS(t);
    CHECK_ASSERT_FAILS("a->ne[0] >= k", ggml_top_k(ctx, a, 34));
    ggml_free(ctx);
}

static void test_flash_attn(void) {
    struct ggml_context * ctx = new_context();
    // q [D, n_batch, n_head, ne3], k/v [D(v), n_kv, n_head_kv, ne3], mask [n_kv, n_batch_pad, 1, 1]
    struct ggml_tensor * q    = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 64, 7, 8, 2);
    struct ggml_tensor * k    = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 33, 2, 2);
    struct ggml_tensor * v    = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 48, 33, 2, 2);
    struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 33, 8);

    struct ggml_tensor * r = ggml_flash_attn_ext(ctx, q, k, v, mask, 0.125f, 0.0f, 30.0f);
    EXPECT_NEW(r, GGML_TYPE_F32, 48, 8, 7, 2); // heads before the batch
    EXPECT_SRCS(r, GGML_OP_FLASH_ATTN_EXT, q, k, v, mask);
    EXPECT_PARAMS(r, fbits(0.125f), fbits(0.0f), fbits(30.0f));
    CHECK(ggml_flash_attn_ext_get_prec(r) == GGML_PREC_DEFAULT);
    ggml_flash_attn_ext_set_prec(r, GGML_PREC_F32);
    CHECK(ggml_flash_attn_ext_get_prec(r) == GGML_PREC_F32);
    EXPECT_PARAMS(r, fbits(0.125f), fbits(0.0f), fbits(30.0f), GGML_PREC_F32);

    struct ggml_tensor * sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    ggml_flash_attn_ext_add_sinks(r, sinks);
    EXPECT_SRCS(r, GGML_OP_FLASH_ATTN_EXT, q, k, v, mask, sinks);
    ggml_flash_attn_ext_add_sinks(r, NULL);
    EXPECT_SRCS(r, GGML_OP_FLASH_ATTN_EXT, q, k, v, mask);
    ggml_flash_attn_ext_add_sinks(r, sinks);
    CHECK_ASSERT_FAILS("a->src[4] == NULL", ggml_flash_attn_ext_add_sinks(r, sinks));
    CHECK_ASSERT_FAILS("a->src[0]->ne[2] == sinks->ne[0]",
                       ggml_flash_attn_ext_add_sinks(ggml_flash_attn_ext(ctx, q, k, v, NULL, 1, 0, 0), ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2)));
    CHECK_ASSERT_FAILS("a->op == GGML_OP_FLASH_ATTN_EXT", ggml_flash_attn_ext_set_prec(q, GGML_PREC_F32));
    CHECK_ASSERT_FAILS("a->op == GGML_OP_FLASH_ATTN_EXT", ggml_flash_attn_ext_get_prec(q));

    // no mask; ALiBi with a mask broadcast over heads and ne3
    struct ggml_tensor * rn = ggml_flash_attn_ext(ctx, q, k, v, NULL, 1.0f, 0.0f, 0.0f);
    EXPECT_NEW(rn, GGML_TYPE_F32, 48, 8, 7, 2);
    EXPECT_SRCS(rn, GGML_OP_FLASH_ATTN_EXT, q, k, v);
    struct ggml_tensor * m4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 33, 8, 4, 1);
    struct ggml_tensor * ra = ggml_flash_attn_ext(ctx, q, k, v, m4, 1.0f, 8.0f, 0.0f);
    EXPECT_SRCS(ra, GGML_OP_FLASH_ATTN_EXT, q, k, v, m4);
    EXPECT_PARAMS(ra, fbits(1.0f), fbits(8.0f), fbits(0.0f));

    CHECK_ASSERT_FAILS("ggml_can_mul_mat(k, q)",
                       ggml_flash_attn_ext(ctx, q, ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 32, 33, 2, 2), v, mask, 1, 0, 0));
    CHECK_ASSERT_FAILS("ggml_can_mul_mat(k, q)",
                       ggml_flash_attn_ext(ctx, q, ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 33, 3, 2), v, mask, 1, 0, 0));
    CHECK_ASSERT_FAILS("q->ne[3] == v->ne[3]",
                       ggml_flash_attn_ext(ctx, q, k, ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 48, 33, 2, 1), mask, 1, 0, 0));
    CHECK_ASSERT_FAILS("mask->type == GGML_TYPE_F16",
                       ggml_flash_attn_ext(ctx, q, k, v, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 8), 1, 0, 0));
    CHECK_ASSERT_FAILS("q->ne[2] % mask->ne[2] == 0",
                       ggml_flash_attn_ext(ctx, q, k, v, ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 33, 8, 3), 1, 0, 0));
    CHECK_ASSERT_FAILS("mask", ggml_flash_attn_ext(ctx, q, k, v, NULL, 1.0f, 1.0f, 0.0f));
    ggml_free(ctx);
}

int main(void) {
    test_binary();
    test_simple_unary();
    test_unary();
    test_glu();
    test_scale_clamp();
    test_reductions();
    test_custom();
    test_copies();
    test_reshape();
    test_views();
    test_permute();
    test_get_set_rows();
    test_set_acc();
    test_repeat_concat_pad();
    test_norms();
    test_mul_mat();
    test_soft_max();
    test_rope();
    test_rope_yarn_corr_dims();
    test_sort();
    test_flash_attn();
    return TEST_RESULT();
}
