// cases-elementwise.c: unary ops, GLU, binary ops with broadcasting, scale and the
// elementwise fusions (RELU_SQR, *_MUL, SNAKE_FUSE, SOFTCAP).

#include "tbo.h"

#include <math.h>
#include <string.h>

//
// UNARY
//

struct unary_params {
    enum ggml_unary_op op;
    enum ggml_type     type;
    int64_t            ne_a[4];
    int                v; // 1: a is a non-contiguous view
    bool               narrow; // ours: inputs in [-3, 3] and a strict threshold
};

static struct ggml_tensor * unary_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct unary_params * p = c->p;
    struct ggml_tensor * a;
    if (p->v & 1) {
        const int64_t ne[4] = { p->ne_a[0]*3, p->ne_a[1]*2, p->ne_a[2]*5, p->ne_a[3]*4 };
        a = tbo_new_tensor(b, p->type, 4, ne);
        ggml_set_name(a, "a");
        a = ggml_view_4d(b->ctx, a, p->ne_a[0], p->ne_a[1], p->ne_a[2], p->ne_a[3], a->nb[1], a->nb[2], a->nb[3], 0);
        ggml_set_name(a, "view_of_a");
    } else {
        a = tbo_new_tensor(b, p->type, 4, p->ne_a);
        ggml_set_name(a, "a");
    }
    struct ggml_tensor * out = ggml_unary(b->ctx, a, p->op);
    ggml_set_name(out, "out");
    return out;
}

static void unary_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct unary_params * p = c->p;
    // a wide range, to find NaNs in GELU; F16 EXP stays finite
    float lim = 150.0f;
    if (p->type == GGML_TYPE_F16 && (p->op == GGML_UNARY_OP_EXP || p->op == GGML_UNARY_OP_EXPM1)) {
        lim = 10.0f;
    }
    if (p->narrow) {
        lim = 3.0f; // where the curve of GELU and the like differs from its limits
    }
    tbo_init_all_uniform(rng, ctx, -lim, lim);
}

// Narrow cases hold F32 results to about 1e-6 of their size (an F32
// evaluation of the exact formula is near 1e-14): a wrong constant in the
// formula (the 0.044715 of GELU off in its 4th digit: 1e-10) fails, which the
// default 1e-7 over [-150, 150] lets through.
static double unary_max_err(const struct tbo_case * c) {
    const struct unary_params * p = c->p;
    return p->narrow ? 1e-12 : 1e-7;
}

static const struct tbo_case_class unary_class = {
    .name    = "unary",
    .build   = unary_build,
    .init    = unary_init,
    .max_err = unary_max_err,
};

void tbo_add_unary(struct tbo_case_list * l, enum ggml_unary_op op, enum ggml_type type, const int64_t ne[4], int v) {
    struct unary_params p = { .op = op, .type = type, .v = v };
    tbo_copy4(p.ne_a, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne, 4);
    tbo_var_i64(&s, "v", v);
    tbo_case_add(l, &unary_class, &p, sizeof(p), &s);
}

void tbo_add_unary_narrow(struct tbo_case_list * l, enum ggml_unary_op op, const int64_t ne[4]) {
    struct unary_params p = { .op = op, .type = GGML_TYPE_F32, .narrow = true };
    tbo_copy4(p.ne_a, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", GGML_TYPE_F32);
    tbo_var_arr(&s, "ne_a", ne, 4);
    tbo_var_i64(&s, "v", 0);
    tbo_var_i64(&s, "narrow", 1);
    tbo_case_add(l, &unary_class, &p, sizeof(p), &s);
}

//
// RELU_SQR: relu followed by sqr, run as one graph
//

struct type_ne_params {
    enum ggml_type type;
    int64_t        ne[4];
};

static struct ggml_tensor * relu_sqr_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct type_ne_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * r = ggml_relu(b->ctx, a);
    ggml_set_name(r, "relu");
    struct ggml_tensor * out = ggml_sqr(b->ctx, r);
    ggml_set_name(out, "out");
    return out;
}

static const char * relu_sqr_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "RELU_SQR";
}

static bool always(const struct tbo_case * c) {
    (void) c;
    return true;
}

static const struct tbo_case_class relu_sqr_class = {
    .name            = "relu_sqr",
    .build           = relu_sqr_build,
    .op_desc         = relu_sqr_desc,
    .run_whole_graph = always,
};

static void add_type_ne(struct tbo_case_list * l, const struct tbo_case_class * cls, enum ggml_type type, const int64_t ne[4],
                        const char * ne_name) {
    struct type_ne_params p = { .type = type };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, ne_name, ne, 4);
    tbo_case_add(l, cls, &p, sizeof(p), &s);
}

void tbo_add_relu_sqr(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]) {
    add_type_ne(l, &relu_sqr_class, type, ne, "ne");
}

//
// *_MUL: a unary op whose result is multiplied, with operand layouts that a
// fusing backend must handle (or must refuse to fuse)
//

struct unary_mul_params {
    enum ggml_unary_op op;
    enum ggml_type     type;
    int64_t            ne[4];
    bool               swap;      // the unary result is the second MUL operand
    char               layout[16];
    char               tail[16];
    char               desc[32];
};

static struct ggml_tensor * padded_view(struct tbo_build * b, const struct unary_mul_params * p, const char * name,
                                        int64_t mul0, int64_t off0) {
    const int64_t ne_w[4] = { p->ne[0]*mul0, p->ne[1], p->ne[2], p->ne[3] };
    struct ggml_tensor * base = tbo_new_tensor(b, p->type, 4, ne_w);
    ggml_set_name(base, name);
    return ggml_view_4d(b->ctx, base, p->ne[0], p->ne[1], p->ne[2], p->ne[3], base->nb[1], base->nb[2], base->nb[3],
                        off0 * base->nb[0]);
}

static struct ggml_tensor * unary_mul_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct unary_mul_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * a = NULL; // unary source
    struct ggml_tensor * o = NULL; // the other MUL operand

    if (strcmp(p->layout, "packed") == 0) {
        a = tbo_new_tensor(b, p->type, 4, p->ne);
        o = tbo_new_tensor(b, p->type, 4, p->ne);
    } else if (strcmp(p->layout, "pad_unary") == 0) {
        a = padded_view(b, p, "a", 3, 0);
        o = tbo_new_tensor(b, p->type, 4, p->ne);
    } else if (strcmp(p->layout, "pad_other") == 0) {
        a = tbo_new_tensor(b, p->type, 4, p->ne);
        o = padded_view(b, p, "b", 3, 0);
    } else if (strcmp(p->layout, "halves") == 0) {
        const int64_t ne_w[4] = { p->ne[0]*2, p->ne[1], p->ne[2], p->ne[3] };
        struct ggml_tensor * base = tbo_new_tensor(b, p->type, 4, ne_w);
        ggml_set_name(base, "base");
        o = ggml_view_4d(ctx, base, p->ne[0], p->ne[1], p->ne[2], p->ne[3], base->nb[1], base->nb[2], base->nb[3], 0);
        a = ggml_view_4d(ctx, base, p->ne[0], p->ne[1], p->ne[2], p->ne[3], base->nb[1], base->nb[2], base->nb[3],
                         p->ne[0] * base->nb[0]);
    } else if (strcmp(p->layout, "strided_dim1") == 0) {
        const int64_t ne_w[4] = { p->ne[0], p->ne[1]*3, p->ne[2], p->ne[3] };
        struct ggml_tensor * base = tbo_new_tensor(b, p->type, 4, ne_w);
        ggml_set_name(base, "a");
        a = ggml_view_4d(ctx, base, p->ne[0], p->ne[1], p->ne[2], p->ne[3], base->nb[1], base->nb[2], base->nb[3], 0);
        o = tbo_new_tensor(b, p->type, 4, p->ne);
    } else if (strcmp(p->layout, "bcast") == 0) {
        a = tbo_new_tensor(b, p->type, 4, p->ne);
        o = tbo_new_tensor_4d(b, p->type, p->ne[0], 1, 1, 1);
    } else {
        GGML_ABORT("unknown layout %s", p->layout);
    }
    ggml_set_name(a, "a");
    ggml_set_name(o, "b");

    struct ggml_tensor * u = ggml_unary(ctx, a, p->op);
    ggml_set_name(u, "unary");

    // a broadcasting operand can only be the second one
    const bool second = p->swap && strcmp(p->layout, "bcast") != 0;
    struct ggml_tensor * out = second ? ggml_mul(ctx, o, u) : ggml_mul(ctx, u, o);

    if (strcmp(p->tail, "reuse") == 0) {
        ggml_set_name(out, "mul");
        out = ggml_add(ctx, out, u);
    } else if (strcmp(p->tail, "consumer") == 0) {
        ggml_set_name(out, "mul");
        out = ggml_add(ctx, out, o);
    } else if (p->tail[0] != '\0') {
        GGML_ABORT("unknown tail %s", p->tail);
    }
    ggml_set_name(out, "out");
    return out;
}

static const char * unary_mul_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) out;
    const struct unary_mul_params * p = c->p;
    return p->desc;
}

static double unary_mul_max_err(const struct tbo_case * c) {
    const struct unary_mul_params * p = c->p;
    return p->type == GGML_TYPE_F16 ? 5e-5 : 1e-7;
}

static const struct tbo_case_class unary_mul_class = {
    .name            = "unary_mul",
    .build           = unary_mul_build,
    .max_err         = unary_mul_max_err,
    .op_desc         = unary_mul_desc,
    .run_whole_graph = always,
};

void tbo_add_unary_mul(struct tbo_case_list * l, enum ggml_unary_op op, enum ggml_type type, const int64_t ne[4], bool swap,
                       const char * layout, const char * tail) {
    struct unary_mul_params p = { .op = op, .type = type, .swap = swap };
    tbo_copy4(p.ne, ne);
    snprintf(p.layout, sizeof(p.layout), "%s", layout);
    snprintf(p.tail, sizeof(p.tail), "%s", tail);
    snprintf(p.desc, sizeof(p.desc), "%s_MUL", ggml_unary_op_name(op));
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "swap", swap);
    tbo_var_str(&s, "layout", layout);
    tbo_var_str(&s, "tail", tail);
    tbo_case_add(l, &unary_mul_class, &p, sizeof(p), &s);
}

//
// SNAKE_FUSE: x + sin(a*x)^2 * inv_b, the 5-op chain of BigVGAN
//

static struct ggml_tensor * snake_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct type_ne_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * x = tbo_new_tensor_4d(b, p->type, p->ne[0], p->ne[1], p->ne[2], p->ne[3]);
    ggml_set_name(x, "x");
    struct ggml_tensor * a = tbo_new_tensor_2d(b, GGML_TYPE_F32, 1, p->ne[1]);
    ggml_set_name(a, "a");
    struct ggml_tensor * inv_b = tbo_new_tensor_2d(b, GGML_TYPE_F32, 1, p->ne[1]);
    ggml_set_name(inv_b, "inv_b");

    struct ggml_tensor * ax     = ggml_mul(ctx, x, a);
    struct ggml_tensor * sin_ax = ggml_sin(ctx, ax);
    struct ggml_tensor * sin_sq = ggml_sqr(ctx, sin_ax);
    struct ggml_tensor * scaled = ggml_mul(ctx, sin_sq, inv_b);
    struct ggml_tensor * out    = ggml_add(ctx, x, scaled);
    ggml_set_name(out, "out");
    return out;
}

static void snake_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (strcmp(ggml_get_name(t), "x") == 0) {
            tbo_init_uniform(rng, t, -3.14159f, 3.14159f);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

static double snake_max_err(const struct tbo_case * c) {
    const struct type_ne_params * p = c->p;
    switch (p->type) {
        case GGML_TYPE_BF16: return 5e-3;
        case GGML_TYPE_F16:  return 5e-5;
        default:             return 1e-7;
    }
}

static const char * snake_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "SNAKE_FUSE";
}

static const struct tbo_case_class snake_class = {
    .name            = "snake_fuse",
    .build           = snake_build,
    .init            = snake_init,
    .max_err         = snake_max_err,
    .op_desc         = snake_desc,
    .run_whole_graph = always,
};

void tbo_add_snake_fuse(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]) {
    add_type_ne(l, &snake_class, type, ne, "ne");
}

//
// GLU, fused (one input split in halves) and split (two inputs)
//

struct glu_params {
    enum ggml_glu_op op;
    enum ggml_type   type;
    int64_t          ne_a[4];
    int              v;
    bool             swapped;
};

static struct ggml_tensor * glu_input(struct tbo_build * b, const struct glu_params * p, const char * name, const char * view_name) {
    struct ggml_tensor * a;
    if (p->v & 1) {
        const int64_t ne[4] = { p->ne_a[0]*3, p->ne_a[1], p->ne_a[2], p->ne_a[3] };
        a = tbo_new_tensor(b, p->type, 4, ne);
        ggml_set_name(a, name);
        a = ggml_view_4d(b->ctx, a, p->ne_a[0], p->ne_a[1], p->ne_a[2], p->ne_a[3], a->nb[1], a->nb[2], a->nb[3], 0);
        ggml_set_name(a, view_name);
    } else {
        a = tbo_new_tensor(b, p->type, 4, p->ne_a);
        ggml_set_name(a, name);
    }
    return a;
}

static struct ggml_tensor * glu_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct glu_params * p = c->p;
    struct ggml_tensor * a = glu_input(b, p, "a", "view_of_a");
    struct ggml_tensor * out = ggml_glu(b->ctx, a, p->op, p->swapped);
    ggml_set_name(out, "out");
    return out;
}

static struct ggml_tensor * glu_split_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct glu_params * p = c->p;
    struct ggml_tensor * a = glu_input(b, p, "a", "view_of_a");
    struct ggml_tensor * g = glu_input(b, p, "b", "view_of_b");
    struct ggml_tensor * out = ggml_glu_split(b->ctx, a, g, p->op);
    ggml_set_name(out, "out");
    return out;
}

static void wide_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    tbo_init_all_uniform(rng, ctx, -150.0f, 150.0f);
}

static const struct tbo_case_class glu_class = {
    .name  = "glu",
    .build = glu_build,
    .init  = wide_init,
};

static const struct tbo_case_class glu_split_class = {
    .name  = "glu_split",
    .build = glu_split_build,
    .init  = wide_init,
};

void tbo_add_glu(struct tbo_case_list * l, enum ggml_glu_op op, enum ggml_type type, const int64_t ne[4], int v, bool swapped) {
    struct glu_params p = { .op = op, .type = type, .v = v, .swapped = swapped };
    tbo_copy4(p.ne_a, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne, 4);
    tbo_var_i64(&s, "v", v);
    tbo_var_i64(&s, "swapped", swapped);
    tbo_case_add(l, &glu_class, &p, sizeof(p), &s);
}

void tbo_add_glu_split(struct tbo_case_list * l, enum ggml_glu_op op, enum ggml_type type, const int64_t ne[4], int v) {
    struct glu_params p = { .op = op, .type = type, .v = v };
    tbo_copy4(p.ne_a, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne, 4);
    tbo_var_i64(&s, "v", v);
    tbo_str_printf(&s, ",split");
    tbo_case_add(l, &glu_split_class, &p, sizeof(p), &s);
}

//
// ADD, SUB, MUL, DIV with broadcasting; nf > 1 chains the op (a fusion test)
//

enum { TBO_MAX_FUSED = 16 };

struct bin_bcast_params {
    tbo_binary_fn  op;
    enum ggml_type type;
    int64_t        ne[4];
    int64_t        nr[4];
    int            nf;
    bool           perm1;       // src1 is permuted
    bool           src_overlap; // src0 and src1 are overlapping views of one tensor
};

static struct ggml_tensor * bin_bcast_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct bin_bcast_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    const int64_t * ne = p->ne;
    GGML_ASSERT(p->nf <= TBO_MAX_FUSED);

    struct ggml_tensor * a = tbo_new_tensor_4d(b, p->type, ne[0]*p->nr[0], ne[1]*p->nr[1], ne[2]*p->nr[2], ne[3]*p->nr[3]);
    ggml_set_name(a, "a");

    struct ggml_tensor * bs[TBO_MAX_FUSED];
    for (int i = 0; i < p->nf; ++i) {
        if (p->perm1) {
            const int pm[4] = { 1, 2, 0, 3 };
            bs[i] = tbo_new_tensor_4d(b, p->type, ne[pm[0]], ne[pm[1]], ne[pm[2]], ne[pm[3]]);
            bs[i] = ggml_permute(ctx, bs[i], pm[0], pm[1], pm[2], pm[3]);
        } else if (p->src_overlap) {
            bs[i] = ggml_view_4d(ctx, a, ne[0], ne[1], ne[2], 2 * (ne[3] / 3), a->nb[1], a->nb[2], a->nb[3],
                                 (size_t) (ne[3] / 3) * a->nb[3]);
        } else {
            bs[i] = tbo_new_tensor(b, p->type, 4, ne);
        }
        ggml_format_name(bs[i], "b%d", i);
    }

    struct ggml_tensor * out = a;
    if (p->src_overlap) {
        out = ggml_view_4d(ctx, a, ne[0], ne[1], ne[2], 2 * (ne[3] / 3), a->nb[1], a->nb[2], a->nb[3], 0);
    }
    for (int i = 0; i < p->nf; ++i) {
        out = p->op(ctx, out, bs[i]);
    }
    ggml_set_name(out, "out");
    return out;
}

static void bin_bcast_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct bin_bcast_params * p = c->p;
    // MUL and DIV lose precision near zero
    if (p->op == ggml_mul || p->op == ggml_div) {
        tbo_init_all_uniform(rng, ctx, 0.9f, 1.1f);
    } else {
        tbo_init_all_uniform(rng, ctx, -1.0f, 1.0f);
    }
}

static size_t bin_bcast_op_size(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c;
    return ggml_nbytes(out) * 3;
}

static bool bin_bcast_whole(const struct tbo_case * c) {
    const struct bin_bcast_params * p = c->p;
    return p->nf > 1;
}

static const struct tbo_case_class bin_bcast_class = {
    .name            = "bin_bcast",
    .build           = bin_bcast_build,
    .init            = bin_bcast_init,
    .op_size         = bin_bcast_op_size,
    .run_whole_graph = bin_bcast_whole,
};

void tbo_add_bin_bcast(struct tbo_case_list * l, tbo_binary_fn op, enum ggml_type type, const int64_t ne[4], const int64_t nr[4],
                       int nf, bool perm1, bool src_overlap) {
    struct bin_bcast_params p = { .op = op, .type = type, .nf = nf, .perm1 = perm1, .src_overlap = src_overlap };
    tbo_copy4(p.ne, ne);
    tbo_copy4(p.nr, nr);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_arr(&s, "nr", nr, 4);
    tbo_var_i64(&s, "nf", nf);
    tbo_var_i64(&s, "perm1", perm1);
    tbo_var_i64(&s, "src_overlap", src_overlap);
    tbo_case_add(l, &bin_bcast_class, &p, sizeof(p), &s);
}

//
// SCALE (with bias) and SOFTCAP (scale, tanh, scale)
//

struct scale_params {
    enum ggml_type type;
    int64_t        ne[4];
    float          scale;
    float          bias;
    bool           inplace;
};

static struct ggml_tensor * scale_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct scale_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = p->inplace ? ggml_scale_bias_inplace(b->ctx, a, p->scale, p->bias)
                                          : ggml_scale_bias(b->ctx, a, p->scale, p->bias);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class scale_class = {
    .name  = "scale",
    .build = scale_build,
};

void tbo_add_scale(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float scale, float bias, bool inplace) {
    struct scale_params p = { .type = type, .scale = scale, .bias = bias, .inplace = inplace };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "scale", scale);
    tbo_var_f32(&s, "bias", bias);
    tbo_var_i64(&s, "inplace", inplace);
    tbo_case_add(l, &scale_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * softcap_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct scale_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_scale(b->ctx, ggml_tanh(b->ctx, ggml_scale(b->ctx, a, 1.0f / p->scale)), p->scale);
    ggml_set_name(out, "out");
    return out;
}

static const char * softcap_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "SOFTCAP";
}

static const struct tbo_case_class softcap_class = {
    .name            = "softcap",
    .build           = softcap_build,
    .op_desc         = softcap_desc,
    .run_whole_graph = always,
};

void tbo_add_softcap(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float softcap) {
    struct scale_params p = { .type = type, .scale = softcap };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "softcap", softcap);
    tbo_case_add(l, &softcap_class, &p, sizeof(p), &s);
}

//
// SQR, SQRT, LOG, SIN, COS
//

struct simple_params {
    enum tbo_simple_op op;
    enum ggml_type     type;
    int64_t            ne[4];
};

static struct ggml_tensor * simple_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct simple_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = NULL;
    switch (p->op) {
        case TBO_SQR:  out = ggml_sqr (b->ctx, a); break;
        case TBO_SQRT: out = ggml_sqrt(b->ctx, a); break;
        case TBO_LOG:  out = ggml_log (b->ctx, a); break;
        case TBO_SIN:  out = ggml_sin (b->ctx, a); break;
        case TBO_COS:  out = ggml_cos (b->ctx, a); break;
        case TBO_FLOOR: out = ggml_unary(b->ctx, a, GGML_UNARY_OP_FLOOR); break;
        case TBO_CEIL:  out = ggml_unary(b->ctx, a, GGML_UNARY_OP_CEIL);  break;
        case TBO_ROUND: out = ggml_unary(b->ctx, a, GGML_UNARY_OP_ROUND); break;
        case TBO_TRUNC: out = ggml_unary(b->ctx, a, GGML_UNARY_OP_TRUNC); break;
    }
    ggml_set_name(out, "out");
    return out;
}

static void simple_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct simple_params * p = c->p;
    switch (p->op) {
        case TBO_SQR:  tbo_init_all_uniform(rng, ctx, -1.0f, 1.0f);   break;
        case TBO_SQRT: tbo_init_all_uniform(rng, ctx, 50.0f, 100.0f); break; // positive
        case TBO_LOG:  tbo_init_all_uniform(rng, ctx, 0.9f, 1.1f);    break; // around log(1) = 0
        case TBO_SIN:
        case TBO_COS:  tbo_init_all_uniform(rng, ctx, -6.5f, 6.5f);   break; // [-2 pi, 2 pi]
        case TBO_FLOOR:
        case TBO_CEIL:
        case TBO_ROUND:
        case TBO_TRUNC: tbo_init_all_uniform(rng, ctx, -10.0f, 10.0f); break;
    }
}

static const struct tbo_case_class simple_class = {
    .name  = "simple",
    .build = simple_build,
    .init  = simple_init,
};

void tbo_add_simple(struct tbo_case_list * l, enum tbo_simple_op op, enum ggml_type type, const int64_t ne[4]) {
    struct simple_params p = { .op = op, .type = type };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_case_add(l, &simple_class, &p, sizeof(p), &s);
}

//
// CLAMP, LEAKY_RELU
//

struct clamp_params {
    enum ggml_type type;
    int64_t        ne[4];
    float          min;
    float          max;
};

static struct ggml_tensor * clamp_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct clamp_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_clamp(b->ctx, a, p->min, p->max);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class clamp_class = {
    .name  = "clamp",
    .build = clamp_build,
};

void tbo_add_clamp(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float min, float max) {
    struct clamp_params p = { .type = type, .min = min, .max = max };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "min", min);
    tbo_var_f32(&s, "max", max);
    tbo_case_add(l, &clamp_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * leaky_relu_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct clamp_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_leaky_relu(b->ctx, a, p->min, true);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class leaky_relu_class = {
    .name  = "leaky_relu",
    .build = leaky_relu_build,
};

void tbo_add_leaky_relu(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float negative_slope) {
    struct clamp_params p = { .type = type, .min = negative_slope };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne, 4);
    tbo_var_f32(&s, "negative_slope", negative_slope);
    tbo_case_add(l, &leaky_relu_class, &p, sizeof(p), &s);
}

//
// ADD1 (ours: upstream has no case for it): a + a scalar
//

static struct ggml_tensor * add1_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct type_ne_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * s = tbo_new_tensor_1d(b, p->type, 1);
    ggml_set_name(s, "b");
    // ggml_add1 is deprecated upstream in favour of ggml_add, but still an op of the set
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
    struct ggml_tensor * out = ggml_add1(b->ctx, a, s);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class add1_class = {
    .name  = "add1",
    .build = add1_build,
};

void tbo_add_add1(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]) {
    add_type_ne(l, &add1_class, type, ne, "ne");
}
