// cases-reduce.c: reductions and sorting: ARGMAX, COUNT_EQUAL, SUM, SUM_ROWS, MEAN,
// ARGSORT, TOP_K and the MoE routing chain TOPK_MOE.

#include "tbo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool always(const struct tbo_case * c) {
    (void) c;
    return true;
}

static double zero_err(const struct tbo_case * c) {
    (void) c;
    return 0.0;
}

struct type_ne_params {
    enum ggml_type type;
    int64_t        ne[4];
};

static void add_type_ne(struct tbo_case_list * l, const struct tbo_case_class * cls, enum ggml_type type, const int64_t ne[4]) {
    struct type_ne_params p = { .type = type };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_case_add(l, cls, &p, sizeof(p), &s);
}

// F32 inputs hold row permutations of 0..n-1, so that there are no ties
static void unique_rows_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL) {
            continue;
        }
        if (t->type == GGML_TYPE_F32 && t->op == GGML_OP_NONE) {
            tbo_init_unique_rows(rng, t);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

// values away from zero, so that sums do not cancel
static void positive_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    tbo_init_all_uniform(rng, ctx, -0.9f, 1.1f);
}

//
// ARGMAX, COUNT_EQUAL
//

static struct ggml_tensor * argmax_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct type_ne_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_argmax(b->ctx, a);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class argmax_class = {
    .name    = "argmax",
    .build   = argmax_build,
    .init    = unique_rows_init,
    .max_err = zero_err,
};

void tbo_add_argmax(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]) {
    add_type_ne(l, &argmax_class, type, ne);
}

static struct ggml_tensor * count_equal_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct type_ne_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * a_argmax = ggml_argmax(b->ctx, a);
    ggml_set_name(a_argmax, "a_argmax");
    struct ggml_tensor * bt = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(bt, "b");
    struct ggml_tensor * b_argmax = ggml_argmax(b->ctx, bt);
    ggml_set_name(b_argmax, "b_argmax");
    struct ggml_tensor * out = ggml_count_equal(b->ctx, a_argmax, b_argmax);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class count_equal_class = {
    .name    = "count_equal",
    .build   = count_equal_build,
    .init    = unique_rows_init,
    .max_err = zero_err,
};

void tbo_add_count_equal(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]) {
    add_type_ne(l, &count_equal_class, type, ne);
}

//
// SUM, SUM_ROWS, MEAN
//

struct sum_params {
    enum ggml_type type;
    int64_t        ne[4];
    int64_t        permute[4];
};

static struct ggml_tensor * sum_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct sum_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    a = tbo_permute_if(b, a, p->permute, "a_permuted");
    struct ggml_tensor * out = ggml_sum(b->ctx, a);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class sum_class = {
    .name  = "sum",
    .build = sum_build,
    .init  = positive_init,
};

void tbo_add_sum(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t permute[4]) {
    struct sum_params p = { .type = type };
    tbo_copy4(p.ne, ne);
    tbo_copy4(p.permute, permute);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    if (tbo_any_nonzero4(permute)) {
        tbo_var_arr(&s, "permute", permute, 4);
    }
    tbo_case_add(l, &sum_class, &p, sizeof(p), &s);
}

struct sum_rows_params {
    enum ggml_type type;
    int64_t        ne[4];
    bool           permute;
    bool           slice;
};

static struct ggml_tensor * sum_rows_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct sum_rows_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    if (p->slice) {
        a = ggml_view_4d(b->ctx, a, p->ne[0], p->ne[1], p->ne[2] / 2, p->ne[3] - 1, a->nb[1], a->nb[2] * 2, a->nb[3], a->nb[3]);
    }
    if (p->permute) {
        a = ggml_permute(b->ctx, a, 0, 2, 3, 1);
    }
    struct ggml_tensor * out = ggml_sum_rows(b->ctx, a);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class sum_rows_class = {
    .name  = "sum_rows",
    .build = sum_rows_build,
};

void tbo_add_sum_rows(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool permute, bool slice) {
    struct sum_rows_params p = { .type = type, .permute = permute, .slice = slice };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "permute", permute);
    tbo_var_i64(&s, "slice", slice);
    tbo_case_add(l, &sum_rows_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * mean_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct type_ne_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_mean(b->ctx, a);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class mean_class = {
    .name  = "mean",
    .build = mean_build,
    .init  = positive_init,
};

void tbo_add_mean(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]) {
    add_type_ne(l, &mean_class, type, ne);
}

//
// ARGSORT
//

struct argsort_params {
    enum ggml_type        type;
    int64_t               ne[4];
    enum ggml_sort_order  order;
};

static struct ggml_tensor * argsort_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct argsort_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_argsort(b->ctx, a, p->order);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class argsort_class = {
    .name  = "argsort",
    .build = argsort_build,
    .init  = unique_rows_init,
};

void tbo_add_argsort(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], enum ggml_sort_order order) {
    struct argsort_params p = { .type = type, .order = order };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "order", order);
    tbo_case_add(l, &argsort_class, &p, sizeof(p), &s);
}

//
// TOP_K: the indices of the k largest values of each row, in any order
//

struct top_k_params {
    enum ggml_type type;
    int64_t        ne[4];
    int            k;
    bool           ties;
};

static struct ggml_tensor * top_k_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct top_k_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    b->input = a;
    struct ggml_tensor * out = ggml_top_k(b->ctx, a, p->k);
    ggml_set_name(out, "out");
    return out;
}

static void top_k_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct top_k_params * p = c->p;
    int tie_denom = p->k / 2;
    tie_denom = tie_denom < 1 ? 1 : tie_denom > 10 ? 10 : tie_denom;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL || t->type != GGML_TYPE_F32) {
            continue;
        }
        float * row = tbo_malloc((size_t) t->ne[0] * sizeof(float));
        for (int64_t r = 0; r < ggml_nrows(t); r++) {
            for (int64_t i = 0; i < t->ne[0]; i++) {
                // with ties, integer division makes duplicates
                row[i] = p->ties ? (float) (i / tie_denom) : (float) i;
            }
            tbo_rng_shuffle_f32(rng, row, t->ne[0]);
            ggml_backend_tensor_set(t, row, (size_t) r * t->nb[1], (size_t) t->ne[0] * sizeof(float));
        }
        free(row);
    }
}

static int cmp_double(const void * pa, const void * pb) {
    const double a = *(const double *) pa;
    const double b = *(const double *) pb;
    return a < b ? -1 : a > b ? 1 : 0;
}

static bool has_duplicates(double * v, int64_t n) {
    qsort(v, (size_t) n, sizeof(double), cmp_double);
    for (int64_t i = 1; i < n; i++) {
        if (v[i] == v[i - 1]) {
            return true;
        }
    }
    return false;
}

// Without ties both sides must select the same set of indices, in any order.
// With ties the indices may differ, but the values they select must be the same,
// with no index twice.
static double top_k_err(const struct tbo_case * c, const struct tbo_build * b, const double * a, const double * bv, size_t n) {
    const struct top_k_params * p = c->p;
    const int64_t k = p->k;
    if (!p->ties) {
        double diff = 0.0;
        for (size_t i = 0; i < n; i++) {
            diff += fabs(a[i] - trunc(a[i])) + fabs(bv[i] - trunc(bv[i])); // the indices must be integers
        }
        return diff + tbo_jaccard_distance(a, bv, n);
    }

    double * src = tbo_tensor_to_double(b->input);
    const int64_t cols  = b->input->ne[0];
    const int64_t nrows = ggml_nrows(b->input);
    GGML_ASSERT(n == (size_t) (nrows * k));
    double * asrc = tbo_malloc((size_t) k * sizeof(double));
    double * bsrc = tbo_malloc((size_t) k * sizeof(double));
    double * ia   = tbo_malloc((size_t) k * sizeof(double));
    double * ib   = tbo_malloc((size_t) k * sizeof(double));
    double diff = 0.0;
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t j = 0; j < k; j++) {
            const int64_t xa = (int64_t) a[r*k + j];
            const int64_t xb = (int64_t) bv[r*k + j];
            // an index out of the row selects nothing (NaN never matches)
            ia[j]   = xa >= 0 && xa < cols ? (double) xa : (double) (-1 - j);
            ib[j]   = xb >= 0 && xb < cols ? (double) xb : (double) (-1 - j);
            asrc[j] = xa >= 0 && xa < cols ? src[r*cols + xa] : (double) NAN;
            bsrc[j] = xb >= 0 && xb < cols ? src[r*cols + xb] : (double) NAN;
        }
        diff += tbo_jaccard_distance(asrc, bsrc, (size_t) k);
        diff += has_duplicates(ia, k) ? 1.0 : 0.0;
        diff += has_duplicates(ib, k) ? 1.0 : 0.0;
    }
    free(ib);
    free(ia);
    free(bsrc);
    free(asrc);
    free(src);
    return diff;
}

static bool top_k_whole(const struct tbo_case * c) {
    const struct top_k_params * p = c->p;
    return p->ties;
}

static const struct tbo_case_class top_k_class = {
    .name            = "top_k",
    .build           = top_k_build,
    .init            = top_k_init,
    .max_err         = zero_err,
    .err             = top_k_err,
    .run_whole_graph = top_k_whole,
};

void tbo_add_top_k(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], int k, bool ties) {
    struct top_k_params p = { .type = type, .k = k, .ties = ties };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "k", k);
    tbo_var_i64(&s, "ties", ties);
    tbo_case_add(l, &top_k_class, &p, sizeof(p), &s);
}

//
// TOPK_MOE: the expert routing of a mixture-of-experts layer
//

struct topk_moe_params {
    int64_t             ne[4];
    int                 n_expert_used;
    bool                with_norm;
    bool                bias_probs;
    enum tbo_moe_gating gating;
    float               scale_w;
};

static struct ggml_tensor * topk_moe_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct topk_moe_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    const int n_expert = (int) p->ne[0];
    const int n_tokens = (int) p->ne[1];
    const int n_used   = p->n_expert_used;

    struct ggml_tensor * logits = tbo_new_tensor(b, GGML_TYPE_F32, 4, p->ne);
    struct ggml_tensor * probs;
    switch (p->gating) {
        case TBO_GATING_SOFTMAX:        probs = ggml_soft_max(ctx, logits); break;
        case TBO_GATING_SIGMOID:        probs = ggml_sigmoid(ctx, logits); break;
        case TBO_GATING_SQRT_SOFTPLUS:  probs = ggml_sqrt(ctx, ggml_unary(ctx, logits, GGML_UNARY_OP_SOFTPLUS)); break;
        case TBO_GATING_SOFTMAX_WEIGHT:
        default:                        probs = logits; break;
    }
    ggml_set_name(probs, "probs");

    struct ggml_tensor * selection_probs = probs;
    if (p->bias_probs) {
        struct ggml_tensor * exp_probs_b = tbo_new_tensor_1d(b, GGML_TYPE_F32, p->ne[0]);
        ggml_set_name(exp_probs_b, "exp_probs_b");
        selection_probs = ggml_add(ctx, probs, exp_probs_b);
        ggml_set_name(selection_probs, "selection_probs");
    }

    struct ggml_tensor * selected_experts = ggml_argsort_top_k(ctx, selection_probs, n_used);
    ggml_set_name(selected_experts, "selected_experts");

    struct ggml_tensor * weights = ggml_get_rows(ctx, ggml_reshape_3d(ctx, probs, 1, n_expert, n_tokens), selected_experts);
    ggml_set_name(weights, "weights");

    if (p->gating == TBO_GATING_SOFTMAX_WEIGHT) {
        weights = ggml_reshape_2d(ctx, weights, n_used, n_tokens);
        weights = ggml_soft_max(ctx, weights);
        weights = ggml_reshape_3d(ctx, weights, 1, n_used, n_tokens);
    }
    if (p->with_norm) {
        weights = ggml_reshape_2d(ctx, weights, n_used, n_tokens);
        struct ggml_tensor * weights_sum = ggml_sum_rows(ctx, weights);
        ggml_set_name(weights_sum, "weights_sum");
        weights_sum = ggml_clamp(ctx, weights_sum, 6.103515625e-5f, INFINITY);
        weights = ggml_div(ctx, weights, weights_sum);
        weights = ggml_reshape_3d(ctx, weights, 1, n_used, n_tokens);
    }
    if (p->scale_w != 0.0f) {
        weights = ggml_scale(ctx, weights, p->scale_w);
    }
    ggml_set_name(weights, "weights");

    b->test_nodes[0] = selected_experts;
    b->test_nodes[1] = weights;
    b->n_test_nodes  = 2;
    return weights;
}

// both outputs may come in any order
static double sorted_nmse(const struct tbo_case * c, const struct tbo_build * b, const double * a, const double * bv, size_t n) {
    (void) c; (void) b;
    double * sa = tbo_malloc(n * sizeof(double));
    double * sb = tbo_malloc(n * sizeof(double));
    memcpy(sa, a, n * sizeof(double));
    memcpy(sb, bv, n * sizeof(double));
    qsort(sa, n, sizeof(double), cmp_double);
    qsort(sb, n, sizeof(double), cmp_double);
    const double e = tbo_nmse(sa, sb, n);
    free(sb);
    free(sa);
    return e;
}

static const char * topk_moe_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "TOPK_MOE";
}

static const struct tbo_case_class topk_moe_class = {
    .name            = "topk_moe",
    .build           = topk_moe_build,
    .err             = sorted_nmse,
    .op_desc         = topk_moe_desc,
    .run_whole_graph = always,
};

void tbo_add_topk_moe(struct tbo_case_list * l, const int64_t ne[4], int n_expert_used, bool with_norm, bool bias_probs,
                      enum tbo_moe_gating gating, float scale_w) {
    GGML_ASSERT(n_expert_used <= ne[0]);
    struct topk_moe_params p = { .n_expert_used = n_expert_used, .with_norm = with_norm, .bias_probs = bias_probs,
                                 .gating = gating, .scale_w = scale_w };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "n_expert_used", n_expert_used);
    tbo_var_i64(&s, "with_norm", with_norm);
    tbo_var_i64(&s, "bias_probs", bias_probs);
    tbo_var_i64(&s, "gating_func", gating);
    tbo_var_f32(&s, "scale_w", scale_w);
    tbo_case_add(l, &topk_moe_class, &p, sizeof(p), &s);
}
