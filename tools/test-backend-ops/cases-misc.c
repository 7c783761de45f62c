// cases-misc.c: the cases of the small ops of upstream's later additions
// (ADD_ID, CUMSUM, TRI, FILL, DIAG, SOLVE_TRI, GROUP_NORM and its fusion with
// MUL and ADD) and the parts of the case list they appear in, in upstream's
// order and with its parameters; DIAG_MASK_ZERO, which upstream does not
// test, among the cases of ours.

#include "tbo.h"

#include <stdlib.h>

#define NE(...) ((const int64_t[]) { __VA_ARGS__ })

static struct ggml_tensor * named(struct ggml_tensor * t, const char * name) {
    ggml_set_name(t, name);
    return t;
}

//
// ADD_ID: a [n_embd, n_used, n_token] + rows of b [n_embd, n_experts] chosen by ids
//

struct add_id_params {
    enum ggml_type type_a, type_b;
    int64_t n_embd, n_experts, n_experts_used, n_token;
};

static struct ggml_tensor * add_id_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct add_id_params * p = c->p;
    struct ggml_tensor * a = named(tbo_new_tensor_3d(b, p->type_a, p->n_embd, p->n_experts_used, p->n_token), "a");
    struct ggml_tensor * w = named(tbo_new_tensor_2d(b, p->type_b, p->n_embd, p->n_experts), "b");
    struct ggml_tensor * ids = named(tbo_new_tensor_2d(b, GGML_TYPE_I32, p->n_experts, p->n_token), "ids");
    if (p->n_experts_used != p->n_experts) {
        ids = named(ggml_view_2d(b->ctx, ids, p->n_experts_used, p->n_token, ids->nb[1], 0), "view_of_ids");
    }
    return named(ggml_add_id(b->ctx, a, w, ids), "out");
}

// each row of ids: a shuffled 0..n_experts-1 (valid, distinct rows)
static void add_id_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct add_id_params * p = c->p;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->type != GGML_TYPE_I32) {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
            continue;
        }
        if (t->view_src != NULL) {
            continue;
        }
        int64_t * perm = tbo_malloc((size_t) t->ne[0] * sizeof(int64_t));
        int32_t * row  = tbo_malloc((size_t) t->ne[0] * sizeof(int32_t));
        for (int64_t r = 0; r < ggml_nrows(t); r++) {
            for (int64_t i = 0; i < t->ne[0]; i++) {
                perm[i] = i % p->n_experts;
            }
            tbo_rng_shuffle_i64(rng, perm, t->ne[0]);
            for (int64_t i = 0; i < t->ne[0]; i++) {
                row[i] = (int32_t) perm[i];
            }
            ggml_backend_tensor_set(t, row, (size_t) r * t->nb[1], (size_t) t->ne[0] * sizeof(int32_t));
        }
        free(row);
        free(perm);
    }
}

static size_t add_id_op_size(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c;
    return ggml_nbytes(out) + ggml_nbytes(out->src[0]) + ggml_nbytes(out->src[2]);
}

static const struct tbo_case_class add_id_class = {
    .name    = "add_id",
    .build   = add_id_build,
    .init    = add_id_init,
    .op_size = add_id_op_size,
};

void tbo_add_add_id(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int64_t n_embd, int64_t n_experts,
                    int64_t n_experts_used, int64_t n_token) {
    struct add_id_params p = { type_a, type_b, n_embd, n_experts, n_experts_used, n_token };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type_a", type_a);
    tbo_var_type(&s, "type_b", type_b);
    tbo_var_i64(&s, "n_embd", n_embd);
    tbo_var_i64(&s, "n_experts", n_experts);
    tbo_var_i64(&s, "n_experts_used", n_experts_used);
    tbo_var_i64(&s, "n_token", n_token);
    tbo_case_add(l, &add_id_class, &p, sizeof(p), &s);
}

//
// one-input ops on a 4-d tensor: CUMSUM, TRI, FILL, DIAG, DIAG_MASK_ZERO
//

enum misc_unary { MISC_CUMSUM, MISC_TRI, MISC_FILL, MISC_DIAG, MISC_DIAG_MASK_ZERO };

struct misc_unary_params {
    enum misc_unary    op;
    enum ggml_type     type;
    int64_t            ne[4];
    enum ggml_tri_type tri_type;
    float              c;      // FILL
    int                n_past; // DIAG_MASK_ZERO
};

static struct ggml_tensor * misc_unary_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct misc_unary_params * p = c->p;
    struct ggml_tensor * a = named(tbo_new_tensor_4d(b, p->type, p->ne[0], p->ne[1], p->ne[2], p->ne[3]), "a");
    struct ggml_tensor * out = NULL;
    switch (p->op) {
        case MISC_CUMSUM:         out = ggml_cumsum(b->ctx, a); break;
        case MISC_TRI:            out = ggml_tri(b->ctx, a, p->tri_type); break;
        case MISC_FILL:           out = ggml_fill(b->ctx, a, p->c); break;
        case MISC_DIAG:           out = ggml_diag(b->ctx, a); break;
        case MISC_DIAG_MASK_ZERO: out = ggml_diag_mask_zero(b->ctx, a, p->n_past); break;
    }
    return named(out, "out");
}

static const struct tbo_case_class misc_unary_class = {
    .name  = "misc_unary",
    .build = misc_unary_build,
};

static void add_misc_unary(struct tbo_case_list * l, struct misc_unary_params p, struct tbo_str * s) {
    tbo_case_add(l, &misc_unary_class, &p, sizeof(p), s);
}

static void add_type_ne(struct tbo_case_list * l, enum misc_unary op, enum ggml_type type, const int64_t ne[4]) {
    struct misc_unary_params p = { .op = op, .type = type };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    add_misc_unary(l, p, &s);
}

void tbo_add_cumsum(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]) {
    add_type_ne(l, MISC_CUMSUM, type, ne);
}

void tbo_add_diag(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]) {
    add_type_ne(l, MISC_DIAG, type, ne);
}

void tbo_add_tri(struct tbo_case_list * l, enum ggml_tri_type tri_type, enum ggml_type type, const int64_t ne[4]) {
    struct misc_unary_params p = { .op = MISC_TRI, .type = type, .tri_type = tri_type };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "tri_type", (int64_t) tri_type);
    add_misc_unary(l, p, &s);
}

void tbo_add_fill(struct tbo_case_list * l, float c, enum ggml_type type, const int64_t ne[4]) {
    struct misc_unary_params p = { .op = MISC_FILL, .type = type, .c = c };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "c", c);
    add_misc_unary(l, p, &s);
}

void tbo_add_diag_mask_zero(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], int n_past) {
    struct misc_unary_params p = { .op = MISC_DIAG_MASK_ZERO, .type = type, .n_past = n_past };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "n_past", n_past);
    add_misc_unary(l, p, &s);
}

//
// SOLVE_TRI: a lower triangular with its diagonal (and the rest of the
// triangle) in [0.1, 1), zeros above; b uniform in [-1, 1)
//

struct solve_tri_params {
    enum ggml_type type;
    int64_t        ne_lhs[4];
    int64_t        ne_rhs[4];
};

static struct ggml_tensor * solve_tri_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct solve_tri_params * p = c->p;
    struct ggml_tensor * a = named(tbo_new_tensor(b, p->type, 4, p->ne_lhs), "a");
    struct ggml_tensor * r = named(tbo_new_tensor(b, p->type, 4, p->ne_rhs), "b");
    return named(ggml_solve_tri(b->ctx, a, r, true, true, false), "out");
}

static void solve_tri_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (strcmp(ggml_get_name(t), "a") != 0) {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
            continue;
        }
        const int64_t n = ggml_nelements(t);
        float * v = tbo_malloc((size_t) n * sizeof(float));
        for (int64_t i = 0; i < n; i++) {
            const int64_t i0 = i % t->ne[0], i1 = (i / t->ne[0]) % t->ne[1];
            v[i] = i0 <= i1 ? tbo_rng_uniform(rng, 0.1f, 1.0f) : 0.0f;
        }
        ggml_backend_tensor_set(t, v, 0, (size_t) n * sizeof(float));
        free(v);
    }
}

static uint64_t solve_tri_flops(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) out;
    const struct solve_tri_params * p = c->p;
    const int64_t n = p->ne_lhs[0];
    return (uint64_t) (n * (n + 1) * p->ne_rhs[0] * p->ne_lhs[2] * p->ne_lhs[3]);
}

static const struct tbo_case_class solve_tri_class = {
    .name  = "solve_tri",
    .build = solve_tri_build,
    .init  = solve_tri_init,
    .flops = solve_tri_flops,
};

void tbo_add_solve_tri(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_lhs[4], const int64_t ne_rhs[4]) {
    struct solve_tri_params p = { .type = type };
    tbo_copy4(p.ne_lhs, ne_lhs);
    tbo_copy4(p.ne_rhs, ne_rhs);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_lhs", ne_lhs, 4);
    tbo_var_arr(&s, "ne_rhs", ne_rhs, 4);
    tbo_case_add(l, &solve_tri_class, &p, sizeof(p), &s);
}

//
// GROUP_NORM, alone and followed by MUL and ADD (run as one graph)
//

struct group_norm_params {
    enum ggml_type type;
    int64_t        ne[4];
    int            num_groups;
    float          eps;
};

static struct ggml_tensor * group_norm_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct group_norm_params * p = c->p;
    struct ggml_tensor * a = named(tbo_new_tensor(b, p->type, 4, p->ne), "a");
    return named(ggml_group_norm(b->ctx, a, p->num_groups, p->eps), "out");
}

static struct ggml_tensor * group_norm_mul_add_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct group_norm_params * p = c->p;
    struct ggml_tensor * a = named(tbo_new_tensor(b, p->type, 4, p->ne), "a");
    struct ggml_tensor * w = named(tbo_new_tensor(b, p->type, 4, p->ne), "w");
    struct ggml_tensor * s = named(tbo_new_tensor(b, p->type, 4, p->ne), "b");
    struct ggml_tensor * n = ggml_group_norm(b->ctx, a, p->num_groups, p->eps);
    struct ggml_tensor * m = ggml_mul(b->ctx, n, w);
    return named(ggml_add(b->ctx, m, s), "out");
}

static const char * group_norm_mul_add_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "GROUP_NORM_MUL_ADD";
}

static bool whole_graph(const struct tbo_case * c) {
    (void) c;
    return true;
}

static const struct tbo_case_class group_norm_class = {
    .name  = "group_norm",
    .build = group_norm_build,
};

static const struct tbo_case_class group_norm_mul_add_class = {
    .name            = "group_norm_mul_add",
    .build           = group_norm_mul_add_build,
    .op_desc         = group_norm_mul_add_desc,
    .run_whole_graph = whole_graph,
};

static void add_group_norm(struct tbo_case_list * l, const struct tbo_case_class * cls, enum ggml_type type, const int64_t ne[4],
                           int num_groups, float eps) {
    struct group_norm_params p = { .type = type, .num_groups = num_groups, .eps = eps };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "num_groups", num_groups);
    tbo_var_f32(&s, "eps", eps);
    tbo_case_add(l, cls, &p, sizeof(p), &s);
}

//
// DSV4_HC_COMB, DSV4_HC_PRE, DSV4_HC_POST (hc = 4 streams), inputs in the
// ranges of their meaning: mixing weights in [0, 1), post in [0, 2)
//

enum dsv4_kind { DSV4_COMB, DSV4_PRE, DSV4_POST };

struct dsv4_params {
    enum dsv4_kind kind;
    int64_t        n_embd, n_tokens;
    int32_t        n_iter;
    float          eps;
};

static struct ggml_tensor * dsv4_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct dsv4_params * p = c->p;
    const int64_t hc = 4;
    switch (p->kind) {
        case DSV4_COMB: {
            struct ggml_tensor * mixes = named(tbo_new_tensor_2d(b, GGML_TYPE_F32, (2 + hc)*hc, p->n_tokens), "mixes");
            struct ggml_tensor * scale = named(tbo_new_tensor_1d(b, GGML_TYPE_F32, 3), "scale");
            struct ggml_tensor * base  = named(tbo_new_tensor_1d(b, GGML_TYPE_F32, (2 + hc)*hc), "base");
            return named(ggml_dsv4_hc_comb(b->ctx, mixes, scale, base, p->eps, p->n_iter), "out");
        }
        case DSV4_PRE: {
            struct ggml_tensor * x = named(tbo_new_tensor_3d(b, GGML_TYPE_F32, p->n_embd, hc, p->n_tokens), "x");
            struct ggml_tensor * w = named(tbo_new_tensor_2d(b, GGML_TYPE_F32, hc, p->n_tokens), "weights");
            return named(ggml_dsv4_hc_pre(b->ctx, x, w), "out");
        }
        case DSV4_POST: {
            struct ggml_tensor * x    = named(tbo_new_tensor_2d(b, GGML_TYPE_F32, p->n_embd, p->n_tokens), "x");
            struct ggml_tensor * res  = named(tbo_new_tensor_3d(b, GGML_TYPE_F32, p->n_embd, hc, p->n_tokens), "residual");
            struct ggml_tensor * post = named(tbo_new_tensor_2d(b, GGML_TYPE_F32, hc, p->n_tokens), "post");
            struct ggml_tensor * comb = named(tbo_new_tensor_3d(b, GGML_TYPE_F32, hc, hc, p->n_tokens), "comb");
            return named(ggml_dsv4_hc_post(b->ctx, x, res, post, comb), "out");
        }
    }
    return NULL;
}

static void dsv4_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    static const struct { const char * name; float lo, hi; } ranges[] = {
        { "mixes", -2.0f, 2.0f }, { "scale", -0.5f, 0.5f }, { "base", -0.25f, 0.25f }, { "weights", 0.0f, 1.0f },
        { "comb", 0.0f, 1.0f }, { "post", 0.0f, 2.0f }, { "x", -1.0f, 1.0f }, { "residual", -1.0f, 1.0f },
    };
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        float lo = -1.0f, hi = 1.0f;
        for (size_t i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
            if (strcmp(ggml_get_name(t), ranges[i].name) == 0) {
                lo = ranges[i].lo;
                hi = ranges[i].hi;
            }
        }
        tbo_init_uniform(rng, t, lo, hi);
    }
}

static const struct tbo_case_class dsv4_class = {
    .name  = "dsv4_hc",
    .build = dsv4_build,
    .init  = dsv4_init,
};

static void add_dsv4(struct tbo_case_list * l, struct dsv4_params p) {
    struct tbo_str s = { 0 };
    if (p.kind == DSV4_COMB) {
        tbo_var_i64(&s, "n_tokens", p.n_tokens);
        tbo_var_i64(&s, "n_iter", p.n_iter);
        tbo_var_f32(&s, "eps", p.eps);
    } else {
        tbo_var_i64(&s, "n_embd", p.n_embd);
        tbo_var_i64(&s, "n_tokens", p.n_tokens);
    }
    tbo_case_add(l, &dsv4_class, &p, sizeof(p), &s);
}

//
// LIGHTNING_INDEXER: hsk-sized K rows of type_K, an F16 mask with -inf blocks
//

struct indexer_params {
    int64_t        hsk, nh, kv, nb, ns, nm;
    enum ggml_type type_K;
};

static struct ggml_tensor * indexer_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct indexer_params * p = c->p;
    struct ggml_tensor * q = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, p->hsk, p->nh, p->nb, p->ns), "q");
    struct ggml_tensor * k = named(tbo_new_tensor_4d(b, p->type_K, p->hsk, 1, p->kv, p->ns), "k");
    struct ggml_tensor * w = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, p->nh, p->nb, 1, p->ns), "w");
    struct ggml_tensor * m = named(tbo_new_tensor_4d(b, GGML_TYPE_F16, p->kv, p->nb, 1, p->nm), "m");
    return named(ggml_lightning_indexer(b->ctx, q, k, w, m), "out");
}

static void indexer_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (strcmp(ggml_get_name(t), "m") == 0) {
            tbo_init_kq_mask(rng, t, -1.0f, 1.0f);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

static double indexer_max_err(const struct tbo_case * c) {
    (void) c;
    return 1e-6;
}

static uint64_t indexer_flops(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) out;
    const struct indexer_params * p = c->p;
    return (uint64_t) (((2 * p->hsk + 2) * p->nh + 1) * p->kv * p->nb * p->ns);
}

static const struct tbo_case_class indexer_class = {
    .name    = "lightning_indexer",
    .build   = indexer_build,
    .init    = indexer_init,
    .max_err = indexer_max_err,
    .flops   = indexer_flops,
};

static void add_indexer(struct tbo_case_list * l, int64_t hsk, int64_t nh, int64_t kv, int64_t nb, int64_t ns, int64_t nm,
                        enum ggml_type type_K) {
    struct indexer_params p = { hsk, nh, kv, nb, ns, nm, type_K };
    struct tbo_str s = { 0 };
    tbo_var_i64(&s, "hsk", hsk);
    tbo_var_i64(&s, "nh", nh);
    tbo_var_i64(&s, "kv", kv);
    tbo_var_i64(&s, "nb", nb);
    tbo_var_i64(&s, "ns", ns);
    tbo_var_i64(&s, "nm", nm);
    tbo_var_type(&s, "type_K", type_K);
    tbo_case_add(l, &indexer_class, &p, sizeof(p), &s);
}

//
// the places in upstream's list
//

void tbo_list_misc_add_id(struct tbo_case_list * l) {
    static const int n_mats[2] = { 4, 8 }, n_used[3] = { 1, 2, 4 }, n_embd[2] = { 32, 129 }, n_token[3] = { 1, 32, 129 };
    for (int m = 0; m < 2; m++)
    for (int u = 0; u < 3; u++)
    for (int e = 0; e < 2; e++)
    for (int t = 0; t < 3; t++) {
        tbo_add_add_id(l, GGML_TYPE_F32, GGML_TYPE_F32, n_embd[e], n_mats[m], n_used[u], n_token[t]);
    }
}

void tbo_list_misc_group_norm(struct tbo_case_list * l) {
    add_group_norm(l, &group_norm_class, GGML_TYPE_F32, NE(64, 64, 320, 1), 32, 1e-6f);
    add_group_norm(l, &group_norm_class, GGML_TYPE_F32, NE(9, 9, 1280, 1), 32, 1e-6f);
    add_group_norm(l, &group_norm_mul_add_class, GGML_TYPE_F32, NE(64, 64, 320, 1), 4, 1e-5f);
    add_group_norm(l, &group_norm_mul_add_class, GGML_TYPE_F32, NE(9, 9, 1280, 1), 4, 1e-5f);
}

void tbo_list_misc_after_leaky_relu(struct tbo_case_list * l) {
    static const int64_t cumsum_ne[][4] = {
        { 10, 5, 4, 3 }, { 127, 5, 4, 3 }, { 128, 5, 4, 3 }, { 128, 128, 4, 4 }, { 255, 5, 4, 3 }, { 256, 5, 4, 3 },
        { 511, 5, 4, 3 }, { 512, 5, 4, 3 }, { 1023, 5, 4, 3 }, { 1024, 5, 4, 3 }, { 2047, 5, 4, 3 }, { 2048, 5, 4, 3 },
        { 201*1204, 1, 1, 1 }, { 312*1205, 1, 1, 1 }, { 20481, 4, 1, 1 },
    };
    for (size_t i = 0; i < sizeof(cumsum_ne) / sizeof(cumsum_ne[0]); i++) {
        tbo_add_cumsum(l, GGML_TYPE_F32, cumsum_ne[i]);
    }

    tbo_add_xielu(l, GGML_TYPE_F32, NE(10, 5, 4, 3));
    tbo_add_xielu(l, GGML_TYPE_F16, NE(10, 5, 4, 3));
    tbo_add_xielu(l, GGML_TYPE_F32, NE(512, 16, 1, 1));
    tbo_add_xielu(l, GGML_TYPE_F16, NE(512, 16, 1, 1));

    static const enum ggml_tri_type tris[4] = {
        GGML_TRI_TYPE_LOWER, GGML_TRI_TYPE_LOWER_DIAG, GGML_TRI_TYPE_UPPER, GGML_TRI_TYPE_UPPER_DIAG,
    };
    for (int i = 0; i < 4; i++) {
        tbo_add_tri(l, tris[i], GGML_TYPE_F32, NE(10, 10, 4, 3));
    }

    tbo_add_fill(l, 0.0f, GGML_TYPE_F32, NE(10, 10, 4, 3));
    tbo_add_fill(l, 2.0f, GGML_TYPE_F32, NE(303, 207, 11, 3));
    tbo_add_fill(l, -152.0f, GGML_TYPE_F32, NE(800, 600, 4, 4));
    tbo_add_fill(l, 3.5f, GGML_TYPE_F32, NE(2048, 512, 2, 2));

    tbo_add_diag(l, GGML_TYPE_F32, NE(10, 1, 4, 3));
    tbo_add_diag(l, GGML_TYPE_F32, NE(79, 1, 19, 13));
    tbo_add_diag(l, GGML_TYPE_F32, NE(256, 1, 8, 16));

    static const int64_t solve[][2][4] = {
        { { 10, 10, 4, 3 }, { 3, 10, 4, 3 } },
        { { 11, 11, 1, 1 }, { 5, 11, 1, 1 } },
        { { 17, 17, 2, 4 }, { 9, 17, 2, 4 } },
        { { 30, 30, 7, 1 }, { 8, 30, 7, 1 } },
        { { 42, 42, 5, 2 }, { 10, 42, 5, 2 } },
        { { 64, 64, 2, 2 }, { 10, 64, 2, 2 } },
        { { 64, 64, 2, 2 }, { 64, 64, 2, 2 } },
        { { 79, 79, 5, 3 }, { 417, 79, 5, 3 } },
        { { 128, 128, 4, 2 }, { 32, 128, 4, 2 } },
        { { 80, 80, 2, 8 }, { 80, 80, 2, 8 } },
        { { 80, 80, 2, 8 }, { 79, 80, 2, 8 } },
        { { 80, 80, 2, 8 }, { 81, 80, 2, 8 } },
        { { 80, 80, 8, 8 }, { 80, 80, 8, 8 } },
        { { 80, 80, 8, 8 }, { 79, 80, 8, 8 } },
        { { 80, 80, 8, 8 }, { 81, 80, 8, 8 } },
        { { 84, 84, 4, 4 }, { 32, 84, 4, 4 } },
        { { 95, 95, 8, 8 }, { 40, 95, 8, 8 } },
        { { 100, 100, 4, 4 }, { 41, 100, 4, 4 } },
        { { 128, 128, 4, 4 }, { 31, 128, 4, 4 } },
        { { 128, 128, 4, 4 }, { 32, 128, 4, 4 } },
        { { 128, 128, 3, 4 }, { 32, 128, 3, 4 } },
        { { 128, 128, 4, 1 }, { 32, 128, 4, 1 } },
        { { 64, 64, 4, 4 }, { 200, 64, 4, 4 } },
        { { 64, 64, 4, 4 }, { 384, 64, 4, 4 } },
    };
    for (size_t i = 0; i < sizeof(solve) / sizeof(solve[0]); i++) {
        tbo_add_solve_tri(l, GGML_TYPE_F32, solve[i][0], solve[i][1]);
    }
}

void tbo_list_misc_ours(struct tbo_case_list * l) {
    tbo_add_diag_mask_zero(l, GGML_TYPE_F32, NE(10, 10, 3, 2), 5);
    tbo_add_diag_mask_zero(l, GGML_TYPE_F32, NE(17, 9, 2, 1), 0);
}

void tbo_list_misc_dsv4(struct tbo_case_list * l) {
    static const int64_t comb[4][2] = { { 1, 1 }, { 17, 4 }, { 257, 8 }, { 17, 20 } };
    for (int i = 0; i < 4; i++) {
        add_dsv4(l, (struct dsv4_params) { .kind = DSV4_COMB, .n_tokens = comb[i][0], .n_iter = (int32_t) comb[i][1], .eps = 1e-6f });
    }
    static const int64_t sizes[4][2] = { { 1, 1 }, { 31, 17 }, { 128, 257 }, { 4096, 21 } };
    for (int i = 0; i < 4; i++) {
        add_dsv4(l, (struct dsv4_params) { .kind = DSV4_PRE, .n_embd = sizes[i][0], .n_tokens = sizes[i][1] });
    }
    for (int i = 0; i < 4; i++) {
        add_dsv4(l, (struct dsv4_params) { .kind = DSV4_POST, .n_embd = sizes[i][0], .n_tokens = sizes[i][1] });
    }
}

void tbo_list_misc_lightning_indexer(struct tbo_case_list * l) {
    static const enum ggml_type k_types[9] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q5_1, GGML_TYPE_Q5_0, GGML_TYPE_Q4_1,
        GGML_TYPE_Q4_0, GGML_TYPE_IQ4_NL,
    };
    static const int64_t bss[2] = { 1, 512 }, nhs[2] = { 32, 64 }, ns_nm[3][2] = { { 1, 1 }, { 4, 4 }, { 4, 1 } };
    for (int bi = 0; bi < 2; bi++)
    for (int hi = 0; hi < 2; hi++)
    for (int si = 0; si < 3; si++)
    for (int ti = 0; ti < 9; ti++) {
        add_indexer(l, 128, nhs[hi], 256, bss[bi], ns_nm[si][0], ns_nm[si][1], k_types[ti]);
    }
    static const int64_t kvs[6] = { 1, 7, 8, 63, 64, 65 };
    for (int ki = 0; ki < 6; ki++) {
        for (int ti = 0; ti < 8; ti++) {
            add_indexer(l, 128, 64, kvs[ki], 32, 4, 1, k_types[ti]);
        }
    }
}

//
// perf mode: upstream's shapes of these ops, in its order
//

void tbo_perf_misc_after_hadamard(struct tbo_case_list * l) {
    tbo_add_solve_tri(l, GGML_TYPE_F32, NE(64, 64, 4, 4), NE(32, 64, 4, 4));
    tbo_add_solve_tri(l, GGML_TYPE_F32, NE(128, 128, 4, 2), NE(32, 128, 4, 2));
    tbo_add_solve_tri(l, GGML_TYPE_F32, NE(64, 64, 8, 32), NE(64, 64, 8, 32));     // qwen3next, chunks of 64
    tbo_add_solve_tri(l, GGML_TYPE_F32, NE(128, 128, 4, 32), NE(128, 128, 4, 32)); // chunks of 128
    tbo_add_solve_tri(l, GGML_TYPE_F32, NE(256, 256, 4, 2), NE(128, 256, 4, 2));

    tbo_add_tri(l, GGML_TRI_TYPE_LOWER, GGML_TYPE_F32, NE(256, 256, 4, 4));
    tbo_add_tri(l, GGML_TRI_TYPE_UPPER_DIAG, GGML_TYPE_F32, NE(1024, 1024, 8, 4));

    tbo_add_cumsum(l, GGML_TYPE_F32, NE(128, 128, 4, 4));
    tbo_add_cumsum(l, GGML_TYPE_F32, NE(2048, 16, 5, 4));
    tbo_add_cumsum(l, GGML_TYPE_F32, NE(20000, 10, 4, 1));
}

void tbo_perf_misc_add_id(struct tbo_case_list * l) {
    for (int64_t n_token = 1; n_token <= 512; n_token *= 512) {
        tbo_add_add_id(l, GGML_TYPE_F32, GGML_TYPE_F32, 2880, 128, 4, n_token);
        tbo_add_add_id(l, GGML_TYPE_F32, GGML_TYPE_F32, 2880, 32, 4, n_token);
    }
}

void tbo_perf_misc_cumsum(struct tbo_case_list * l) {
    static const int64_t nrows[4] = { 1, 4, 8, 16 };
    static const int64_t cols[10] = { 128, 1024, 4096, 8192, 16384, 32768, 65536, 131072, 200000, 2000000 };
    for (int r = 0; r < 4; r++) {
        for (int c = 0; c < 10; c++) {
            tbo_add_cumsum(l, GGML_TYPE_F32, NE(cols[c], nrows[r], 1, 1));
        }
    }
}

void tbo_perf_misc_lightning_indexer(struct tbo_case_list * l) {
    static const enum ggml_type k_types[9] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q5_1, GGML_TYPE_Q5_0, GGML_TYPE_Q4_1,
        GGML_TYPE_Q4_0, GGML_TYPE_IQ4_NL,
    };
    static const int64_t kvs[3] = { 256, 4096, 65536 }, bss[3] = { 1, 512, 2048 }, nhs[2] = { 32, 64 }, nss[2] = { 1, 4 };
    for (int ki = 0; ki < 3; ki++)
    for (int bi = 0; bi < 3; bi++)
    for (int hi = 0; hi < 2; hi++)
    for (int si = 0; si < 2; si++)
    for (int ti = 0; ti < 9; ti++) {
        add_indexer(l, 128, nhs[hi], kvs[ki], bss[bi], nss[si], nss[si], k_types[ti]);
    }
}
