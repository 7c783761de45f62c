// cases-train.c: the cases of the training ops, as upstream's: the backward
// ops (GET_ROWS_BACK, REPEAT_BACK, SILU_BACK, RMS_NORM_BACK, SOFT_MAX_BACK),
// CROSS_ENTROPY_LOSS(_BACK) and the optimizer steps. One family, told apart
// by the op it builds; each case's vars are upstream's.

#include "tbo.h"

#include <string.h>

enum train_kind {
    TRAIN_GET_ROWS_BACK,
    TRAIN_REPEAT_BACK,
    TRAIN_SILU_BACK,
    TRAIN_RMS_NORM_BACK,
    TRAIN_SOFT_MAX_BACK,
    TRAIN_CROSS_ENTROPY_LOSS,
    TRAIN_CROSS_ENTROPY_LOSS_BACK,
    TRAIN_OPT_STEP_ADAMW,
    TRAIN_OPT_STEP_SGD,
};

struct train_params {
    enum train_kind kind;
    enum ggml_type  type;
    int64_t         ne[4];
    int64_t         nr[4];     // REPEAT_BACK: repetitions
    int64_t         n, m, r;   // GET_ROWS_BACK: columns, rows, rows taken
    bool            v;         // a non-contiguous view
    float           eps;       // RMS_NORM_BACK, SILU_BACK (unused by the op, part of the name)
    float           scale, max_bias;
};

static struct ggml_tensor * named(struct ggml_tensor * t, const char * name) {
    ggml_set_name(t, name);
    return t;
}

static struct ggml_tensor * train_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct train_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * out = NULL;
    switch (p->kind) {
        case TRAIN_GET_ROWS_BACK: {
            struct ggml_tensor * in_forward = named(tbo_new_tensor_3d(b, p->type, p->n, p->m, 1), "in_forward");
            struct ggml_tensor * rows = named(tbo_new_tensor_2d(b, GGML_TYPE_I32, p->r, 1), "rows");
            if (p->v) {
                rows = named(ggml_view_2d(ctx, rows, p->r / 2, 1, rows->nb[1], 0), "view_of_rows");
            }
            struct ggml_tensor * grad = named(tbo_new_tensor_3d(b, p->type, p->n, p->r, 1), "grad"); // r rows even when a view takes fewer, as upstream
            out = ggml_get_rows_back(ctx, grad, rows, in_forward);
        } break;
        case TRAIN_REPEAT_BACK: {
            struct ggml_tensor * src = named(tbo_new_tensor_4d(b, p->type, p->ne[0] * p->nr[0], p->ne[1] * p->nr[1],
                                                               p->ne[2] * p->nr[2], p->ne[3] * p->nr[3]), "src");
            if (p->v) {
                int64_t ne[4];
                for (int d = 0; d < 4; d++) {
                    ne[d] = p->nr[d] == 1 ? src->ne[d] : src->ne[d] / 2;
                }
                src = ggml_view_4d(ctx, src, ne[0], ne[1], ne[2], ne[3], src->nb[1], src->nb[2], src->nb[3], 0);
            }
            struct ggml_tensor * target = named(tbo_new_tensor(b, p->type, 4, p->ne), "target");
            out = ggml_repeat_back(ctx, src, target);
        } break;
        case TRAIN_SILU_BACK: {
            struct ggml_tensor * a    = named(tbo_new_tensor(b, p->type, 4, p->ne), "a");
            struct ggml_tensor * grad = named(tbo_new_tensor(b, p->type, 4, p->ne), "grad");
            out = ggml_silu_back(ctx, a, grad);
        } break;
        case TRAIN_RMS_NORM_BACK: {
            struct ggml_tensor * a  = named(tbo_new_tensor(b, p->type, 4, p->ne), "a");
            struct ggml_tensor * bb = named(tbo_new_tensor(b, p->type, 4, p->ne), "b");
            out = ggml_rms_norm_back(ctx, a, bb, p->eps);
        } break;
        case TRAIN_SOFT_MAX_BACK: {
            struct ggml_tensor * a  = named(tbo_new_tensor(b, p->type, 4, p->ne), "a");
            struct ggml_tensor * bb = tbo_new_tensor(b, p->type, 4, p->ne);
            out = ggml_soft_max_ext_back(ctx, a, bb, p->scale, p->max_bias);
        } break;
        case TRAIN_CROSS_ENTROPY_LOSS:
        case TRAIN_CROSS_ENTROPY_LOSS_BACK: {
            struct ggml_tensor * grad = p->kind == TRAIN_CROSS_ENTROPY_LOSS_BACK ? named(tbo_new_tensor_1d(b, GGML_TYPE_F32, 1), "grad") : NULL;
            struct ggml_tensor * logits = named(tbo_new_tensor(b, p->type, 4, p->ne), "logits");
            struct ggml_tensor * labels = named(tbo_new_tensor(b, p->type, 4, p->ne), "labels");
            labels = named(ggml_soft_max(ctx, labels), "labels_normalized"); // rows sum to 1
            out = grad != NULL ? ggml_cross_entropy_loss_back(ctx, grad, logits, labels) : ggml_cross_entropy_loss(ctx, logits, labels);
        } break;
        case TRAIN_OPT_STEP_ADAMW:
        case TRAIN_OPT_STEP_SGD: {
            struct ggml_tensor * a = named(tbo_new_tensor(b, p->type, 4, p->ne), "a");
            ggml_set_param(a); // the steps take parameters only
            struct ggml_tensor * grad = named(tbo_new_tensor(b, p->type, 4, p->ne), "grad");
            if (p->kind == TRAIN_OPT_STEP_ADAMW) {
                struct ggml_tensor * m  = named(tbo_new_tensor(b, p->type, 4, p->ne), "grad_m");
                struct ggml_tensor * v  = named(tbo_new_tensor(b, p->type, 4, p->ne), "grad_v");
                struct ggml_tensor * hp = named(tbo_new_tensor_1d(b, GGML_TYPE_F32, 7), "adamw_params");
                out = ggml_opt_step_adamw(ctx, a, grad, m, v, hp);
            } else {
                struct ggml_tensor * hp = named(tbo_new_tensor_1d(b, GGML_TYPE_F32, 2), "sgd_params");
                out = ggml_opt_step_sgd(ctx, a, grad, hp);
            }
        } break;
    }
    ggml_set_name(out, "out");
    return out;
}

static void train_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct train_params * p = c->p;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL || t->op != GGML_OP_NONE) {
            continue;
        }
        switch (p->kind) {
            case TRAIN_GET_ROWS_BACK:
                if (t->type == GGML_TYPE_I32) {
                    tbo_init_i32_below(rng, t, p->m);
                } else {
                    tbo_init_uniform(rng, t, -1.0f, 1.0f);
                }
                break;
            case TRAIN_RMS_NORM_BACK:      tbo_init_uniform(rng, t, -10.0f, 10.0f); break;
            case TRAIN_CROSS_ENTROPY_LOSS: tbo_init_uniform(rng, t, -100.0f, 100.0f); break;
            // the moments and hyperparameters must not be negative
            case TRAIN_OPT_STEP_ADAMW:
            case TRAIN_OPT_STEP_SGD:       tbo_init_uniform(rng, t, 0.0f, 1.0f); break;
            default:                       tbo_init_uniform(rng, t, -1.0f, 1.0f); break;
        }
    }
}

static const struct tbo_case_class train_classes[] = {
    [TRAIN_GET_ROWS_BACK]           = { .name = "get_rows_back",           .build = train_build, .init = train_init },
    [TRAIN_REPEAT_BACK]             = { .name = "repeat_back",             .build = train_build, .init = train_init },
    [TRAIN_SILU_BACK]               = { .name = "silu_back",               .build = train_build, .init = train_init },
    [TRAIN_RMS_NORM_BACK]           = { .name = "rms_norm_back",           .build = train_build, .init = train_init },
    [TRAIN_SOFT_MAX_BACK]           = { .name = "soft_max_back",           .build = train_build, .init = train_init },
    [TRAIN_CROSS_ENTROPY_LOSS]      = { .name = "cross_entropy_loss",      .build = train_build, .init = train_init },
    [TRAIN_CROSS_ENTROPY_LOSS_BACK] = { .name = "cross_entropy_loss_back", .build = train_build, .init = train_init },
    [TRAIN_OPT_STEP_ADAMW]          = { .name = "opt_step_adamw",          .build = train_build, .init = train_init },
    [TRAIN_OPT_STEP_SGD]            = { .name = "opt_step_sgd",            .build = train_build, .init = train_init },
};

static void add(struct tbo_case_list * l, const struct train_params * p, struct tbo_str * s) {
    tbo_case_add(l, &train_classes[p->kind], p, sizeof(*p), s);
}

void tbo_add_get_rows_back(struct tbo_case_list * l, enum ggml_type type, int n, int m, int r, int b, bool v) {
    const struct train_params p = { .kind = TRAIN_GET_ROWS_BACK, .type = type, .n = n, .m = m, .r = r, .v = v };
    GGML_ASSERT(b == 1); // upstream's cases have one batch
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_i64(&s, "n", n);
    tbo_var_i64(&s, "m", m);
    tbo_var_i64(&s, "r", r);
    tbo_var_i64(&s, "b", b);
    tbo_var_i64(&s, "v", v);
    add(l, &p, &s);
}

void tbo_add_repeat_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t nr[4], bool v) {
    struct train_params p = { .kind = TRAIN_REPEAT_BACK, .type = type, .v = v };
    tbo_copy4(p.ne, ne);
    tbo_copy4(p.nr, nr);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_arr(&s, "nr", nr, 4);
    tbo_var_i64(&s, "v", v);
    add(l, &p, &s);
}

static void add_type_ne_eps(struct tbo_case_list * l, enum train_kind kind, enum ggml_type type, const int64_t ne[4], float eps) {
    struct train_params p = { .kind = kind, .type = type, .eps = eps };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "eps", eps);
    add(l, &p, &s);
}

void tbo_add_silu_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps) {
    add_type_ne_eps(l, TRAIN_SILU_BACK, type, ne, eps);
}

void tbo_add_rms_norm_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float eps) {
    add_type_ne_eps(l, TRAIN_RMS_NORM_BACK, type, ne, eps);
}

void tbo_add_soft_max_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], float scale, float max_bias) {
    struct train_params p = { .kind = TRAIN_SOFT_MAX_BACK, .type = type, .scale = scale, .max_bias = max_bias };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "scale", scale);
    tbo_var_f32(&s, "max_bias", max_bias);
    add(l, &p, &s);
}

// CROSS_ENTROPY_LOSS(_BACK), OPT_STEP_ADAMW/SGD: type and shape
void tbo_add_train_step_cases(struct tbo_case_list * l) {
    static const int64_t shapes[2][4] = { { 10, 5, 4, 3 }, { 30000, 1, 1, 1 } };
    const enum train_kind kinds[4] = { TRAIN_CROSS_ENTROPY_LOSS, TRAIN_CROSS_ENTROPY_LOSS_BACK, TRAIN_OPT_STEP_ADAMW, TRAIN_OPT_STEP_SGD };
    for (int k = 0; k < 4; k++) {
        for (int i = 0; i < (k < 2 ? 2 : 1); i++) {
            struct train_params p = { .kind = kinds[k], .type = GGML_TYPE_F32 };
            tbo_copy4(p.ne, shapes[i]);
            struct tbo_str s = { 0 };
            tbo_var_type(&s, "type", p.type);
            tbo_var_arr(&s, "ne", p.ne, 4);
            add(l, &p, &s);
        }
    }
}
