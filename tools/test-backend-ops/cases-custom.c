// cases-custom.c: the custom ops, MAP_CUSTOM1..3 and CUSTOM (ours: upstream has no
// case for them).
//
// The backend calls a function of the case on its threads (ith of nth); the
// function computes a simple formula on its share of the rows, and the case's
// reference twin computes the same formula in double precision. What is tested
// is the backend's side: every task runs, the rows are split as asked, the
// userdata arrives, in-place results alias their source. The functions read
// tensor->data, so only backends with host memory can support these ops.

#include "tbo.h"
#include "ref-eval.h"

#include <stdlib.h>

struct custom_params {
    int     kind;    // 1..3: MAP_CUSTOM1..3, 4: CUSTOM
    int64_t ne[4];
    int     n_tasks;
    bool    inplace;
};

// the userdata of MAP_CUSTOM1: y = a*scale + shift
struct affine {
    float scale;
    float shift;
};

static const struct affine custom1_userdata = { .scale = 2.0f, .shift = 1.0f };

static float * row_of(const struct ggml_tensor * t, int64_t r) {
    const int64_t i1 = r % t->ne[1];
    const int64_t i2 = (r / t->ne[1]) % t->ne[2];
    const int64_t i3 = r / (t->ne[1] * t->ne[2]);
    return (float *) ((char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3]);
}

// the rows [r0, r1) of task ith of nth
static void share(const struct ggml_tensor * t, int ith, int nth, int64_t * r0, int64_t * r1) {
    const int64_t nr = ggml_nrows(t);
    *r0 = nr * ith / nth;
    *r1 = nr * (ith + 1) / nth;
}

static void custom1_fn(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    const struct affine * p = userdata;
    int64_t r0, r1;
    share(dst, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * x = row_of(a, r);
        float * y = row_of(dst, r);
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            y[i] = x[i] * p->scale + p->shift;
        }
    }
}

static void custom2_fn(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith, int nth,
                       void * userdata) {
    (void) userdata;
    int64_t r0, r1;
    share(dst, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * x = row_of(a, r);
        const float * z = row_of(b, r);
        float * y = row_of(dst, r);
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            y[i] = x[i] * z[i];
        }
    }
}

static void custom3_fn(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                       const struct ggml_tensor * c, int ith, int nth, void * userdata) {
    (void) userdata;
    int64_t r0, r1;
    share(dst, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * x = row_of(a, r);
        const float * z = row_of(b, r);
        const float * w = row_of(c, r);
        float * y = row_of(dst, r);
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            y[i] = x[i] * z[i] + w[i];
        }
    }
}

// CUSTOM: y = src0 - src1
static void custom4_fn(struct ggml_tensor * dst, int ith, int nth, void * userdata) {
    (void) userdata;
    int64_t r0, r1;
    share(dst, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * x = row_of(dst->src[0], r);
        const float * z = row_of(dst->src[1], r);
        float * y = row_of(dst, r);
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            y[i] = x[i] - z[i];
        }
    }
}

static struct ggml_tensor * custom_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct custom_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * x = tbo_new_tensor(b, GGML_TYPE_F32, 4, p->ne);
    struct ggml_tensor * z = tbo_new_tensor(b, GGML_TYPE_F32, 4, p->ne);
    struct ggml_tensor * w = tbo_new_tensor(b, GGML_TYPE_F32, 4, p->ne);
    ggml_set_name(x, "a");
    ggml_set_name(z, "b");
    ggml_set_name(w, "c");
    void * userdata = (void *) &custom1_userdata;
    struct ggml_tensor * out = NULL;
    switch (p->kind) {
        case 1:
            out = p->inplace ? ggml_map_custom1_inplace(ctx, x, custom1_fn, p->n_tasks, userdata)
                             : ggml_map_custom1(ctx, x, custom1_fn, p->n_tasks, userdata);
            break;
        case 2:
            out = p->inplace ? ggml_map_custom2_inplace(ctx, x, z, custom2_fn, p->n_tasks, NULL)
                             : ggml_map_custom2(ctx, x, z, custom2_fn, p->n_tasks, NULL);
            break;
        case 3:
            out = p->inplace ? ggml_map_custom3_inplace(ctx, x, z, w, custom3_fn, p->n_tasks, NULL)
                             : ggml_map_custom3(ctx, x, z, w, custom3_fn, p->n_tasks, NULL);
            break;
        default: {
            struct ggml_tensor * args[2] = { x, z };
            out = ggml_custom_4d(ctx, GGML_TYPE_F32, p->ne[0], p->ne[1], p->ne[2], p->ne[3], args, 2, custom4_fn, p->n_tasks, NULL);
        } break;
    }
    ggml_set_name(out, "out");
    return out;
}

static bool is_custom_op(enum ggml_op op) {
    return op == GGML_OP_MAP_CUSTOM1 || op == GGML_OP_MAP_CUSTOM2 || op == GGML_OP_MAP_CUSTOM3 || op == GGML_OP_CUSTOM;
}

static bool custom_ref_supports(const struct tbo_case * c, const struct ggml_tensor * node) {
    (void) c;
    return is_custom_op(node->op);
}

// the formulas of the functions above, in double precision
static void custom_ref_compute(const struct tbo_case * c, struct tbo_ref * r, const struct ggml_tensor * node) {
    const struct custom_params * p = c->p;
    const int64_t n = ggml_nelements(node);
    double * x = ref_get(r, node->src[0]);
    double * z = node->src[1] != NULL ? ref_get(r, node->src[1]) : NULL;
    double * w = node->src[2] != NULL ? ref_get(r, node->src[2]) : NULL;
    for (int64_t i = 0; i < n; i++) {
        switch (p->kind) {
            case 1:  x[i] = x[i] * (double) custom1_userdata.scale + (double) custom1_userdata.shift; break;
            case 2:  x[i] = x[i] * z[i]; break;
            case 3:  x[i] = x[i] * z[i] + w[i]; break;
            default: x[i] = x[i] - z[i]; break;
        }
    }
    ref_put(r, node, x);
    free(w);
    free(z);
    free(x);
}

static const struct tbo_case_class custom_class = {
    .name         = "custom",
    .build        = custom_build,
    .ref_supports = custom_ref_supports,
    .ref_compute  = custom_ref_compute,
};

void tbo_add_custom(struct tbo_case_list * l, int kind, const int64_t ne[4], int n_tasks, bool inplace) {
    struct custom_params p = { .kind = kind, .n_tasks = n_tasks, .inplace = inplace };
    for (int i = 0; i < 4; i++) {
        p.ne[i] = ne[i];
    }
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", GGML_TYPE_F32);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "n_tasks", n_tasks);
    tbo_var_i64(&s, "inplace", inplace);
    tbo_case_add(l, &custom_class, &p, sizeof(p), &s);
}
