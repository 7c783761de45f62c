// cases-norm.c: NORM, RMS_NORM, L2_NORM and the fusions around them
// (NORM_MUL_ADD, RMS_NORM_MUL_ADD, ADD_RMS_NORM).

#include "tbo.h"

#include <string.h>

static bool always(const struct tbo_case * c) {
    (void) c;
    return true;
}

static void wide_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    tbo_init_all_uniform(rng, ctx, -10.0f, 10.0f);
}

struct norm_params {
    enum ggml_type type;
    int64_t        ne[4];
    float          eps;
    bool           v;              // a is a non-contiguous view
    bool           noncontig_rows; // a is permuted so that its rows are not contiguous
    bool           inplace;
    bool           broadcast;
    bool           multi_add;
};

// the input of the plain norms: optionally permuted, then optionally viewed
static struct ggml_tensor * norm_input(struct tbo_build * b, const struct norm_params * p) {
    int64_t ne_a[4];
    tbo_copy4(ne_a, p->ne);
    if (p->noncontig_rows) {
        ne_a[0] = p->ne[1];
        ne_a[1] = p->ne[0];
    }
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, ne_a);
    ggml_set_name(a, "a");
    if (p->noncontig_rows) {
        a = ggml_permute(b->ctx, a, 1, 0, 2, 3);
        ggml_set_name(a, "permuted a");
    }
    if (p->v) {
        a = ggml_view_4d(b->ctx, a, a->ne[0]/2, a->ne[1]/2, a->ne[2]/2, a->ne[3]/2, a->nb[1], a->nb[2], a->nb[3], 0);
        ggml_set_name(a, "view of a");
    }
    return a;
}

//
// NORM
//

static struct ggml_tensor * norm_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct norm_params * p = c->p;
    struct ggml_tensor * out = ggml_norm(b->ctx, norm_input(b, p), p->eps);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class norm_class = {
    .name  = "norm",
    .build = norm_build,
};

void tbo_add_norm(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool v, float eps, bool noncontig_rows) {
    struct norm_params p = { .type = type, .eps = eps, .v = v, .noncontig_rows = noncontig_rows };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "v", v);
    tbo_var_f32(&s, "eps", eps);
    tbo_var_i64(&s, "noncontig_rows", noncontig_rows);
    tbo_case_add(l, &norm_class, &p, sizeof(p), &s);
}

//
// RMS_NORM
//

static struct ggml_tensor * rms_norm_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct norm_params * p = c->p;
    struct ggml_tensor * a = norm_input(b, p);
    struct ggml_tensor * out = p->inplace ? ggml_rms_norm_inplace(b->ctx, a, p->eps) : ggml_rms_norm(b->ctx, a, p->eps);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class rms_norm_class = {
    .name  = "rms_norm",
    .build = rms_norm_build,
    .init  = wide_init,
};

void tbo_add_rms_norm(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool v, float eps, bool inplace) {
    struct norm_params p = { .type = type, .eps = eps, .v = v, .inplace = inplace };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "v", v);
    tbo_var_f32(&s, "eps", eps);
    tbo_var_i64(&s, "inplace", inplace);
    tbo_case_add(l, &rms_norm_class, &p, sizeof(p), &s);
}

//
// L2_NORM
//

static struct ggml_tensor * l2_norm_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct norm_params * p = c->p;
    struct ggml_tensor * out = ggml_l2_norm(b->ctx, norm_input(b, p), p->eps);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class l2_norm_class = {
    .name  = "l2_norm",
    .build = l2_norm_build,
};

void tbo_add_l2_norm(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps, bool v, bool noncontig_rows) {
    struct norm_params p = { .type = type, .eps = eps, .v = v, .noncontig_rows = noncontig_rows };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "eps", eps);
    tbo_var_i64(&s, "v", v);
    tbo_var_i64(&s, "noncontig_rows", noncontig_rows);
    tbo_case_add(l, &l2_norm_class, &p, sizeof(p), &s);
}

//
// NORM_MUL_ADD: (a + w + b) normalised, times w, plus b
//

static struct ggml_tensor * norm_mul_add_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct norm_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    const int64_t bdims[4] = { p->ne[0], p->ne[1]*2, p->ne[2]*2, p->ne[3]*2 };
    struct ggml_tensor * a  = tbo_new_tensor(b, p->type, 4, p->broadcast ? bdims : p->ne);
    struct ggml_tensor * w  = tbo_new_tensor(b, p->type, 4, p->ne);
    struct ggml_tensor * bb = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    ggml_set_name(w, "w");
    ggml_set_name(bb, "b");

    // a, w and b are used early, so that no NONE op sits between the fused ops
    a = ggml_add(ctx, ggml_add(ctx, a, w), bb);
    struct ggml_tensor * n = ggml_norm(ctx, a, p->eps);
    struct ggml_tensor * m = ggml_mul(ctx, n, w);
    struct ggml_tensor * out = ggml_add(ctx, m, bb);
    ggml_set_name(out, "out");
    return out;
}

static const char * norm_mul_add_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "NORM_MUL_ADD";
}

static const struct tbo_case_class norm_mul_add_class = {
    .name            = "norm_mul_add",
    .build           = norm_mul_add_build,
    .op_desc         = norm_mul_add_desc,
    .run_whole_graph = always,
};

void tbo_add_norm_mul_add(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps, bool broadcast) {
    struct norm_params p = { .type = type, .eps = eps, .broadcast = broadcast };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "eps", eps);
    tbo_var_i64(&s, "broadcast", broadcast);
    tbo_case_add(l, &norm_mul_add_class, &p, sizeof(p), &s);
}

//
// RMS_NORM_MUL_ADD: rms_norm(a + b + c) * b + c, optionally after a second pair of adds
//

static struct ggml_tensor * rms_norm_mul_add_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct norm_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    const int64_t bdims[4] = { p->ne[0]*2, p->ne[1]*3, p->ne[2]*3, p->ne[3]*4 };
    struct ggml_tensor * a  = tbo_new_tensor(b, p->type, 4, p->broadcast ? bdims : p->ne);
    struct ggml_tensor * bb = tbo_new_tensor(b, p->type, 4, p->ne);
    struct ggml_tensor * cc = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    ggml_set_name(bb, "b");
    ggml_set_name(cc, "c");

    a = ggml_add(ctx, ggml_add(ctx, a, bb), cc);
    if (p->multi_add) {
        a = ggml_add(ctx, ggml_add(ctx, a, bb), cc);
    }
    struct ggml_tensor * out = ggml_add(ctx, ggml_mul(ctx, ggml_rms_norm(ctx, a, p->eps), bb), cc);
    ggml_set_name(out, "out");
    return out;
}

static const char * rms_norm_mul_add_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "RMS_NORM_MUL_ADD";
}

static const struct tbo_case_class rms_norm_mul_add_class = {
    .name            = "rms_norm_mul_add",
    .build           = rms_norm_mul_add_build,
    .init            = wide_init,
    .op_desc         = rms_norm_mul_add_desc,
    .run_whole_graph = always,
};

void tbo_add_rms_norm_mul_add(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps, bool broadcast,
                              bool multi_add) {
    struct norm_params p = { .type = type, .eps = eps, .broadcast = broadcast, .multi_add = multi_add };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "eps", eps);
    tbo_var_i64(&s, "broadcast", broadcast);
    tbo_var_i64(&s, "multi_add", multi_add);
    tbo_case_add(l, &rms_norm_mul_add_class, &p, sizeof(p), &s);
}

//
// ADD_RMS_NORM
//

static struct ggml_tensor * add_rms_norm_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct norm_params * p = c->p;
    const int64_t bdims[4] = { p->ne[0]*2, p->ne[1]*3, p->ne[2]*3, p->ne[3]*4 };
    struct ggml_tensor * a  = tbo_new_tensor(b, p->type, 4, p->broadcast ? bdims : p->ne);
    struct ggml_tensor * bb = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    ggml_set_name(bb, "b");
    struct ggml_tensor * sum = ggml_add(b->ctx, a, bb);
    ggml_set_name(sum, "add_result");
    struct ggml_tensor * out = ggml_rms_norm(b->ctx, sum, p->eps);
    ggml_set_name(out, "out");
    return out;
}

static const char * add_rms_norm_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "ADD_RMS_NORM";
}

static const struct tbo_case_class add_rms_norm_class = {
    .name            = "add_rms_norm",
    .build           = add_rms_norm_build,
    .init            = wide_init,
    .op_desc         = add_rms_norm_desc,
    .run_whole_graph = always,
};

void tbo_add_add_rms_norm(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps, bool broadcast) {
    struct norm_params p = { .type = type, .eps = eps, .broadcast = broadcast };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "eps", eps);
    tbo_var_i64(&s, "broadcast", broadcast);
    tbo_case_add(l, &add_rms_norm_class, &p, sizeof(p), &s);
}
