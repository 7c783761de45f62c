// cases-activ.c: the activations with parameters of their own, which upstream
// tests outside the generic unary and GLU loops: XIELU and SWIGLU_OAI.

#include "tbo.h"

//
// XIELU: fixed alphas, beta and eps, inputs in [-1, 1)
//

struct xielu_params {
    enum ggml_type type;
    int64_t        ne[4];
};

static struct ggml_tensor * xielu_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct xielu_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_xielu(b->ctx, a, 4.0f, 20.0f, 0.5f, 0.0000001f);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class xielu_class = {
    .name  = "xielu",
    .build = xielu_build,
};

void tbo_add_xielu(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4]) {
    struct xielu_params p = { .type = type };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_case_add(l, &xielu_class, &p, sizeof(p), &s);
}

//
// SWIGLU_OAI: split form, a and b optionally views of wider rows
//

struct swiglu_oai_params {
    enum ggml_type type;
    int64_t        ne_a[4];
    int            v; // 1: a and b are non-contiguous views
    float          alpha;
    float          limit;
};

static struct ggml_tensor * swiglu_oai_input(struct tbo_build * b, const struct swiglu_oai_params * p, const char * name,
                                             const char * view_name) {
    if (!(p->v & 1)) {
        struct ggml_tensor * t = tbo_new_tensor(b, p->type, 4, p->ne_a);
        ggml_set_name(t, name);
        return t;
    }
    const int64_t ne[4] = { p->ne_a[0] * 3, p->ne_a[1], p->ne_a[2], p->ne_a[3] };
    struct ggml_tensor * t = tbo_new_tensor(b, p->type, 4, ne);
    ggml_set_name(t, name);
    t = ggml_view_4d(b->ctx, t, p->ne_a[0], p->ne_a[1], p->ne_a[2], p->ne_a[3], t->nb[1], t->nb[2], t->nb[3], 0);
    ggml_set_name(t, view_name);
    return t;
}

static struct ggml_tensor * swiglu_oai_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct swiglu_oai_params * p = c->p;
    struct ggml_tensor * a = swiglu_oai_input(b, p, "a", "view_of_a");
    struct ggml_tensor * g = swiglu_oai_input(b, p, "b", "view_of_b");
    struct ggml_tensor * out = ggml_swiglu_oai(b->ctx, a, g, p->alpha, p->limit);
    ggml_set_name(out, "out");
    return out;
}

static void swiglu_oai_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    tbo_init_all_uniform(rng, ctx, -150.0f, 150.0f); // a wide range, to find NaNs
}

static const struct tbo_case_class swiglu_oai_class = {
    .name  = "swiglu_oai",
    .build = swiglu_oai_build,
    .init  = swiglu_oai_init,
};

void tbo_add_swiglu_oai(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int v, float alpha, float limit) {
    struct swiglu_oai_params p = { .type = type, .v = v, .alpha = alpha, .limit = limit };
    tbo_copy4(p.ne_a, ne_a);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_i64(&s, "v", v);
    tbo_var_f32(&s, "alpha", alpha);
    tbo_var_f32(&s, "limit", limit);
    tbo_case_add(l, &swiglu_oai_class, &p, sizeof(p), &s);
}
