// cases-attn.c: the attention ops: SOFT_MAX (masks, ALiBi, sinks), ROPE (all modes,
// YaRN parameters, frequency factors, offsets), the rope fusions and FLASH_ATTN_EXT.

#include "tbo.h"

#include <math.h>
#include <string.h>

static bool always(const struct tbo_case * c) {
    (void) c;
    return true;
}

//
// SOFT_MAX
//

struct soft_max_params {
    enum ggml_type type;
    int64_t        ne[4];
    bool           mask;
    bool           sinks;
    enum ggml_type m_prec;
    int64_t        nr23[2]; // broadcast of the mask over dims 2 and 3
    float          scale;
    float          max_bias;
    bool           inplace;
    bool           mask_inf; // ours: the mask has blocks of -inf
};

static struct ggml_tensor * soft_max_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct soft_max_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * a = tbo_new_tensor_4d(b, p->type, p->ne[0], p->ne[1], p->ne[2]*p->nr23[0], p->ne[3]*p->nr23[1]);
    ggml_set_name(a, "a");
    struct ggml_tensor * mask = NULL;
    if (p->mask) {
        mask = tbo_new_tensor_4d(b, p->m_prec, p->ne[0], p->ne[1], p->ne[2], p->ne[3]);
        ggml_set_name(mask, "mask");
    }
    struct ggml_tensor * sinks = NULL;
    if (p->sinks) {
        sinks = tbo_new_tensor_1d(b, GGML_TYPE_F32, p->ne[2]*p->nr23[0]);
        ggml_set_name(sinks, "sinks");
    }
    struct ggml_tensor * out = p->inplace ? ggml_soft_max_ext_inplace(ctx, a, mask, p->scale, p->max_bias)
                                          : ggml_soft_max_ext(ctx, a, mask, p->scale, p->max_bias);
    ggml_soft_max_add_sinks(out, sinks);
    ggml_set_name(out, "out");
    return out;
}

static void soft_max_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct soft_max_params * p = c->p;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (p->mask_inf && strcmp(ggml_get_name(t), "mask") == 0) {
            tbo_init_kq_mask(rng, t, -1.0f, 1.0f);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

// upstream: the 1024-wide case with ALiBi occasionally exceeds 1e-7
static double soft_max_max_err(const struct tbo_case * c) {
    (void) c;
    return 1e-6;
}

static const struct tbo_case_class soft_max_class = {
    .name    = "soft_max",
    .build   = soft_max_build,
    .init    = soft_max_init,
    .max_err = soft_max_max_err,
};

static void soft_max_vars(struct tbo_str * s, const struct soft_max_params * p) {
    tbo_var_type(s, "type", p->type);
    tbo_var_arr(s, "ne", p->ne, 4);
    tbo_var_i64(s, "mask", p->mask);
    tbo_var_i64(s, "sinks", p->sinks);
    tbo_var_type(s, "m_prec", p->m_prec);
    tbo_var_arr(s, "nr23", p->nr23, 2);
    tbo_var_f32(s, "scale", p->scale);
    tbo_var_f32(s, "max_bias", p->max_bias);
    tbo_var_i64(s, "inplace", p->inplace);
}

void tbo_add_soft_max(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], bool mask, bool sinks,
                      enum ggml_type m_prec, const int64_t nr23[2], float scale, float max_bias, bool inplace) {
    struct soft_max_params p = { .type = type, .mask = mask, .sinks = sinks, .m_prec = m_prec,
                                 .nr23 = { nr23[0], nr23[1] }, .scale = scale, .max_bias = max_bias, .inplace = inplace };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    soft_max_vars(&s, &p);
    tbo_case_add(l, &soft_max_class, &p, sizeof(p), &s);
}

// ours: an F16 mask with -inf blocks, as attention masks have
void tbo_add_soft_max_inf_mask(struct tbo_case_list * l, const int64_t ne[4], float scale, float max_bias) {
    struct soft_max_params p = { .type = GGML_TYPE_F32, .mask = true, .sinks = false, .m_prec = GGML_TYPE_F16,
                                 .nr23 = { 1, 1 }, .scale = scale, .max_bias = max_bias, .inplace = false, .mask_inf = true };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    soft_max_vars(&s, &p);
    tbo_var_i64(&s, "mask_inf", 1);
    tbo_case_add(l, &soft_max_class, &p, sizeof(p), &s);
}

//
// ROPE
//

struct rope_params {
    enum ggml_type type;
    enum ggml_type type_idx;
    int64_t        ne_a[4];
    int            n_dims;
    int            mode;
    int            n_ctx;   // positions are drawn below this
    float          fs;      // freq_scale
    float          ef;      // ext_factor
    float          af;      // attn_factor
    bool           ff;      // frequency factors
    int            v;       // 1: a is a non-contiguous view; 2: a view at an offset along dim 0
    bool           inplace;
    int            n_offs;  // start of the rotated dims (ggml_rope_set_offset)
    bool           backward; // ROPE_BACK instead of ROPE (upstream's forward = false; not in the name)
    int            sections[4]; // ours: the multi-section modes' sections (all 0: upstream's choice)
    // RMS_NORM_MUL_ROPE
    float          eps;
    bool           multi_add;
    bool           set_rows;
    bool           broadcast;
};

static bool rope_is_multi(int mode) {
    return (mode & GGML_ROPE_TYPE_MROPE) != 0;
}

static struct ggml_tensor * rope_input(struct tbo_build * b, const struct rope_params * p) {
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * a;
    if (p->v & 1) {
        const int64_t ne[4] = { p->ne_a[0]*2, p->ne_a[1]*4, p->ne_a[2]*3, p->ne_a[3] };
        a = tbo_new_tensor(b, p->type, 4, ne);
        ggml_set_name(a, "a");
        a = ggml_view_4d(ctx, a, p->ne_a[0], p->ne_a[1], p->ne_a[2], p->ne_a[3], a->nb[1], a->nb[2], a->nb[3], 0);
        ggml_set_name(a, "view_of_a");
    } else if (p->v == 2) {
        // the second half along dim 0, as a 2D rope of an image does
        const int64_t ne[4] = { p->ne_a[0]*2, p->ne_a[1], p->ne_a[2], p->ne_a[3] };
        a = tbo_new_tensor(b, p->type, 4, ne);
        ggml_set_name(a, "a");
        a = ggml_view_4d(ctx, a, p->ne_a[0], p->ne_a[1], p->ne_a[2], p->ne_a[3], a->nb[1], a->nb[2], a->nb[3],
                         (size_t) p->ne_a[0] * ggml_element_size(a));
        ggml_set_name(a, "view_of_a");
    } else {
        a = tbo_new_tensor(b, p->type, 4, p->ne_a);
        ggml_set_name(a, "a");
    }
    return a;
}

static struct ggml_tensor * rope_op(struct tbo_build * b, const struct rope_params * p, struct ggml_tensor * a,
                                    struct ggml_tensor * pos, struct ggml_tensor * freq) {
    struct ggml_context * ctx = b->ctx;
    const bool is_vision = p->mode == GGML_ROPE_TYPE_VISION;
    struct ggml_tensor * out;
    if (p->backward) {
        // the gradient: upstream's cases call the _back constructors, never in place
        if (rope_is_multi(p->mode)) {
            int sections[4] = { p->n_dims/3, p->n_dims/3, p->n_dims/3, 0 };
            int n_dims = p->n_dims;
            if (is_vision) {
                sections[0] = sections[1] = p->n_dims/4;
                sections[2] = 0;
                n_dims = p->n_dims/2;
            }
            out = ggml_rope_multi_back(ctx, a, pos, freq, n_dims, sections, p->mode, 0, 10000.0f, p->fs, p->ef, p->af, 1.0f, 1.0f);
        } else {
            out = ggml_rope_ext_back(ctx, a, pos, freq, p->n_dims, p->mode, 0, 10000.0f, p->fs, p->ef, p->af, 1.0f, 1.0f);
        }
    } else if (rope_is_multi(p->mode)) {
        if (is_vision) {
            GGML_ASSERT(p->n_dims/4 > 0);
            // vision rope uses the first two sections, for the x and y of an image
            int sections[4] = { p->n_dims/4, p->n_dims/4, 0, 0 };
            out = p->inplace
                ? ggml_rope_multi_inplace(ctx, a, pos, freq, p->n_dims/2, sections, p->mode, 0, 10000.0f, p->fs, p->ef, p->af, 1.0f, 1.0f)
                : ggml_rope_multi(ctx, a, pos, freq, p->n_dims/2, sections, p->mode, 0, 10000.0f, p->fs, p->ef, p->af, 1.0f, 1.0f);
        } else {
            GGML_ASSERT(p->n_dims/3 > 0);
            int sections[4] = { p->n_dims/3, p->n_dims/3, p->n_dims/3, 0 };
            if (p->sections[0] + p->sections[1] + p->sections[2] + p->sections[3] > 0) {
                memcpy(sections, p->sections, sizeof(sections));
            }
            out = p->inplace
                ? ggml_rope_multi_inplace(ctx, a, pos, freq, p->n_dims, sections, p->mode, 0, 10000.0f, p->fs, p->ef, p->af, 1.0f, 1.0f)
                : ggml_rope_multi(ctx, a, pos, freq, p->n_dims, sections, p->mode, 0, 10000.0f, p->fs, p->ef, p->af, 1.0f, 1.0f);
        }
    } else {
        out = p->inplace
            ? ggml_rope_ext_inplace(ctx, a, pos, freq, p->n_dims, p->mode, 0, 10000.0f, p->fs, p->ef, p->af, 1.0f, 1.0f)
            : ggml_rope_ext(ctx, a, pos, freq, p->n_dims, p->mode, 0, 10000.0f, p->fs, p->ef, p->af, 1.0f, 1.0f);
    }
    if (p->n_offs != 0) {
        out = ggml_rope_set_offset(out, p->n_offs);
    }
    return out;
}

static struct ggml_tensor * rope_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct rope_params * p = c->p;
    struct ggml_tensor * a = rope_input(b, p);
    const bool multi = rope_is_multi(p->mode) || p->mode == GGML_ROPE_TYPE_VISION;
    struct ggml_tensor * pos = tbo_new_tensor_1d(b, GGML_TYPE_I32, multi ? p->ne_a[2] * 4 : p->ne_a[2]);
    ggml_set_name(pos, "pos");
    struct ggml_tensor * freq = NULL;
    if (p->ff) {
        freq = tbo_new_tensor_1d(b, GGML_TYPE_F32, p->n_dims/2);
        ggml_set_name(freq, "freq");
    }
    struct ggml_tensor * out = rope_op(b, p, a, pos, freq);
    ggml_set_name(out, "out");
    return out;
}

// positions below n_ctx, frequency factors in [0.9, 1.1)
static void rope_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct rope_params * p = c->p;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL) {
            continue;
        }
        if (strcmp(ggml_get_name(t), "row_idxs") == 0) {
            tbo_init_row_ids(rng, t, p->ne_a[2]);
        } else if (t->type == GGML_TYPE_I32) {
            tbo_init_i32_below(rng, t, p->n_ctx);
        } else if (t->ne[0] == p->n_dims/2) {
            tbo_init_uniform(rng, t, 0.9f, 1.1f);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

static const struct tbo_case_class rope_class = {
    .name  = "rope",
    .build = rope_build,
    .init  = rope_init,
};

static void add_rope(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int n_dims, int mode, int n_ctx,
                     float fs, float ef, float af, bool ff, int v, bool inplace, int n_offs, bool backward) {
    struct rope_params p = { .type = type, .n_dims = n_dims, .mode = mode, .n_ctx = n_ctx, .fs = fs, .ef = ef, .af = af,
                             .ff = ff, .v = v, .inplace = inplace, .n_offs = n_offs, .backward = backward };
    tbo_copy4(p.ne_a, ne_a);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_i64(&s, "n_dims", n_dims);
    tbo_var_i64(&s, "mode", mode);
    tbo_var_i64(&s, "n_ctx", n_ctx);
    tbo_var_f32(&s, "fs", fs);
    tbo_var_f32(&s, "ef", ef);
    tbo_var_f32(&s, "af", af);
    tbo_var_i64(&s, "ff", ff);
    tbo_var_i64(&s, "v", v);
    tbo_var_i64(&s, "inplace", inplace);
    tbo_var_i64(&s, "n_offs", n_offs);
    tbo_case_add(l, &rope_class, &p, sizeof(p), &s);
}

void tbo_add_rope(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int n_dims, int mode, int n_ctx,
                  float fs, float ef, float af, bool ff, int v, bool inplace, int n_offs) {
    add_rope(l, type, ne_a, n_dims, mode, n_ctx, fs, ef, af, ff, v, inplace, n_offs, false);
}

void tbo_add_rope_back(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int n_dims, int mode, int n_ctx,
                       float fs, float ef, float af, bool ff, int v) {
    add_rope(l, type, ne_a, n_dims, mode, n_ctx, fs, ef, af, ff, v, false, 0, true);
}

void tbo_add_rope_sections(struct tbo_case_list * l, const int64_t ne_a[4], int n_dims, int mode, const int sections[4]) {
    struct rope_params p = { .type = GGML_TYPE_F32, .n_dims = n_dims, .mode = mode, .n_ctx = 512, .fs = 1.0f, .af = 1.0f };
    tbo_copy4(p.ne_a, ne_a);
    memcpy(p.sections, sections, sizeof(p.sections));
    const int64_t sec[4] = { sections[0], sections[1], sections[2], sections[3] };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", GGML_TYPE_F32);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_i64(&s, "n_dims", n_dims);
    tbo_var_i64(&s, "mode", mode);
    tbo_var_arr(&s, "sections", sec, 4);
    tbo_case_add(l, &rope_class, &p, sizeof(p), &s);
}

//
// ROPE_SET_ROWS: rope, then its rows stored into a cache with SET_ROWS
//

static struct ggml_tensor * rope_set_rows_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct rope_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    const int64_t * ne_a = p->ne_a;
    struct ggml_tensor * a = tbo_new_tensor_4d(b, GGML_TYPE_F32, ne_a[0], ne_a[1], ne_a[2], 1);
    ggml_set_name(a, "a");

    const bool multi = rope_is_multi(p->mode) || p->mode == GGML_ROPE_TYPE_VISION;
    struct ggml_tensor * pos = tbo_new_tensor_1d(b, GGML_TYPE_I32, multi ? ne_a[2] * 4 : ne_a[2]);
    ggml_set_name(pos, "pos");

    struct ggml_tensor * rope;
    if (rope_is_multi(p->mode)) {
        rope = rope_op(b, p, a, pos, NULL);
    } else {
        rope = ggml_rope(ctx, a, pos, (int) ne_a[0], p->mode);
    }

    struct ggml_tensor * view = ggml_view_2d(ctx, rope, ne_a[0] * ne_a[1], ne_a[2], rope->nb[2], 0);
    struct ggml_tensor * dst = tbo_new_tensor_4d(b, p->type, ne_a[0] * ne_a[1], ne_a[2] * ne_a[3], 1, 1);
    ggml_set_name(dst, "dst");
    struct ggml_tensor * row_idxs = tbo_new_tensor_3d(b, p->type_idx, ne_a[2], 1, 1);
    ggml_set_name(row_idxs, "row_idxs");
    struct ggml_tensor * out = ggml_set_rows(ctx, dst, view, row_idxs);
    ggml_set_name(out, "out");
    return out;
}

static const char * rope_set_rows_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "ROPE_SET_ROWS";
}

static const struct tbo_case_class rope_set_rows_class = {
    .name            = "rope_set_rows",
    .build           = rope_set_rows_build,
    .init            = rope_init,
    .op_desc         = rope_set_rows_desc,
    .run_whole_graph = always,
};

void tbo_add_rope_set_rows(struct tbo_case_list * l, enum ggml_type type, enum ggml_type type_idx, const int64_t ne_a[4], int mode) {
    // the parameters of upstream's case: n_dims 128 (sections of the multi modes), n_ctx 512
    struct rope_params p = { .type = type, .type_idx = type_idx, .n_dims = 128, .mode = mode, .n_ctx = 512,
                             .fs = 1.4245f, .ef = 0.7465f, .af = 1.4245f };
    tbo_copy4(p.ne_a, ne_a);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_type(&s, "type_idx", type_idx);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_i64(&s, "mode", mode);
    tbo_case_add(l, &rope_set_rows_class, &p, sizeof(p), &s);
}

//
// RMS_NORM_MUL_ROPE: rms_norm, times a weight, rope, optionally stored with SET_ROWS
//

static struct ggml_tensor * rms_norm_mul_rope_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct rope_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    const int64_t * ne = p->ne_a;
    struct ggml_tensor * a  = tbo_new_tensor_4d(b, GGML_TYPE_F32, ne[0], ne[1], ne[2], 1);
    struct ggml_tensor * bb = tbo_new_tensor_4d(b, GGML_TYPE_F32, ne[0], ne[1], ne[2], 1);
    struct ggml_tensor * cc = tbo_new_tensor_4d(b, GGML_TYPE_F32, ne[0], ne[1], ne[2], 1);
    if (p->multi_add) {
        a = ggml_add(ctx, ggml_add(ctx, a, bb), cc);
    }
    struct ggml_tensor * w = p->broadcast ? tbo_new_tensor_1d(b, GGML_TYPE_F32, ne[0]) : bb;
    a = ggml_mul(ctx, ggml_rms_norm(ctx, a, p->eps), w);

    struct ggml_tensor * pos = tbo_new_tensor_1d(b, GGML_TYPE_I32, ne[2]);
    struct ggml_tensor * rope = ggml_rope(ctx, a, pos, (int) ne[0], p->mode);

    if (!p->set_rows) {
        return rope;
    }
    struct ggml_tensor * view = ggml_view_2d(ctx, rope, ne[0] * ne[1], ne[2], rope->nb[2], 0);
    struct ggml_tensor * dst = tbo_new_tensor_4d(b, GGML_TYPE_F16, ne[0] * ne[1], ne[2] * ne[3], 1, 1);
    ggml_set_name(dst, "dst");
    struct ggml_tensor * row_idxs = tbo_new_tensor_3d(b, GGML_TYPE_I64, ne[2], 1, 1);
    ggml_set_name(row_idxs, "row_idxs");
    struct ggml_tensor * out = ggml_set_rows(ctx, dst, view, row_idxs);
    ggml_set_name(out, "out");
    return out;
}

// the positions too are a permutation of 0..ne2-1, as upstream initialises them
static void rms_norm_mul_rope_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct rope_params * p = c->p;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL) {
            continue;
        }
        if (t->type == GGML_TYPE_I64 || t->type == GGML_TYPE_I32) {
            tbo_init_row_ids(rng, t, p->ne_a[2]);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

static const char * rms_norm_mul_rope_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "RMS_NORM_MUL_ROPE";
}

static const struct tbo_case_class rms_norm_mul_rope_class = {
    .name            = "rms_norm_mul_rope",
    .build           = rms_norm_mul_rope_build,
    .init            = rms_norm_mul_rope_init,
    .op_desc         = rms_norm_mul_rope_desc,
    .run_whole_graph = always,
};

void tbo_add_rms_norm_mul_rope(struct tbo_case_list * l, const int64_t ne[4], float eps, bool multi_add, bool set_rows,
                               bool broadcast, int mode) {
    struct rope_params p = { .type = GGML_TYPE_F32, .mode = mode, .eps = eps, .multi_add = multi_add, .set_rows = set_rows,
                             .broadcast = broadcast };
    tbo_copy4(p.ne_a, ne);
    struct tbo_str s = { 0 };
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_f32(&s, "eps", eps);
    tbo_var_i64(&s, "multi_add", multi_add);
    tbo_var_i64(&s, "set_rows", set_rows);
    tbo_var_i64(&s, "broadcast", broadcast);
    tbo_var_i64(&s, "mode", mode);
    tbo_case_add(l, &rms_norm_mul_rope_class, &p, sizeof(p), &s);
}

//
// FLASH_ATTN_EXT
//

struct flash_attn_params {
    int64_t        hsk; // K head size
    int64_t        hsv; // V head size
    int64_t        nh;  // heads
    int64_t        nr23[2]; // query heads per K/V head, and batches
    int64_t        kv;  // K/V length
    int64_t        nb;  // queries
    bool           mask;
    bool           sinks;
    float          max_bias;      // ALiBi
    float          logit_softcap;
    enum ggml_prec prec;
    enum ggml_type type_k;
    enum ggml_type type_v;
    int64_t        permute[4];
    bool           kv_view;       // K and V are views of larger caches
    bool           v_is_view_of_k;
};

static struct ggml_tensor * fa_permuted(struct tbo_build * b, const struct flash_attn_params * p, enum ggml_type type,
                                        int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, bool is_view) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    int64_t ne_perm[4];
    for (int i = 0; i < 4; ++i) {
        ne_perm[p->permute[i]] = ne[i];
    }
    struct ggml_tensor * t;
    if (is_view) {
        struct ggml_tensor * t0 = tbo_new_tensor_4d(b, type, ne_perm[0], 2*ne_perm[1], ne_perm[2], ne_perm[3]);
        t = ggml_view_4d(b->ctx, t0, ne_perm[0], ne_perm[1], ne_perm[2], ne_perm[3], t0->nb[1], t0->nb[2], t0->nb[3], 0);
    } else {
        t = tbo_new_tensor_4d(b, type, ne_perm[0], ne_perm[1], ne_perm[2], ne_perm[3]);
    }
    if (p->permute[0] != 0 || p->permute[1] != 1 || p->permute[2] != 2 || p->permute[3] != 3) {
        t = ggml_permute(b->ctx, t, (int) p->permute[0], (int) p->permute[1], (int) p->permute[2], (int) p->permute[3]);
    }
    return t;
}

static struct ggml_tensor * flash_attn_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct flash_attn_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    const int64_t hsk_padded = GGML_PAD(p->hsk, ggml_blck_size(p->type_k));
    const int64_t hsv_padded = GGML_PAD(p->hsv, ggml_blck_size(p->type_v));

    struct ggml_tensor * q = fa_permuted(b, p, GGML_TYPE_F32, hsk_padded, p->nb, p->nh*p->nr23[0], p->nr23[1], false);
    ggml_set_name(q, "q");
    struct ggml_tensor * k = fa_permuted(b, p, p->type_k, hsk_padded, p->kv, p->nh, p->nr23[1], p->kv_view);
    ggml_set_name(k, "k");
    struct ggml_tensor * v;
    if (p->v_is_view_of_k) {
        // V a sub-view of K, as in multi-head latent attention
        GGML_ASSERT(p->type_k == p->type_v && hsv_padded <= hsk_padded);
        v = ggml_view_4d(ctx, k, hsv_padded, p->kv, p->nh, p->nr23[1], k->nb[1], k->nb[2], k->nb[3], 0);
    } else {
        v = fa_permuted(b, p, p->type_v, hsv_padded, p->kv, p->nh, p->nr23[1], p->kv_view);
    }
    ggml_set_name(v, "v");

    struct ggml_tensor * m = NULL;
    if (p->mask) {
        m = tbo_new_tensor_4d(b, GGML_TYPE_F16, p->kv, p->nb, 1, p->nr23[1]);
        ggml_set_name(m, "m");
    }
    struct ggml_tensor * s = NULL;
    if (p->sinks) {
        s = tbo_new_tensor_1d(b, GGML_TYPE_F32, q->ne[2]);
        ggml_set_name(s, "s");
    }

    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, m, 1.0f/sqrtf((float) p->hsk), p->max_bias, p->logit_softcap);
    ggml_flash_attn_ext_add_sinks(out, s);
    ggml_flash_attn_ext_set_prec(out, p->prec);
    ggml_set_name(out, "out");
    return out;
}

static void flash_attn_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (strcmp(ggml_get_name(t), "s") == 0) {
            // large sinks, so that a wrong implementation shows
            tbo_init_uniform(rng, t, -10.0f, 10.0f);
        } else if (strcmp(ggml_get_name(t), "m") == 0) {
            tbo_init_kq_mask(rng, t, -1.0f, 1.0f);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

static double flash_attn_max_err(const struct tbo_case * c) {
    (void) c;
    return 5e-4;
}

// the two matrix products only: Q*K^T and P*V
static uint64_t flash_attn_flops(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) out;
    const struct flash_attn_params * p = c->p;
    return (uint64_t) ((2 * p->nh*p->nr23[0] * p->nb * (p->hsk + p->hsv) * p->kv) * p->nr23[1]);
}

static const struct tbo_case_class flash_attn_class = {
    .name    = "flash_attn_ext",
    .build   = flash_attn_build,
    .init    = flash_attn_init,
    .max_err = flash_attn_max_err,
    .flops   = flash_attn_flops,
};

void tbo_add_flash_attn_ext(struct tbo_case_list * l, int64_t hsk, int64_t hsv, int64_t nh, const int64_t nr23[2], int64_t kv,
                            int64_t nb, bool mask, bool sinks, float max_bias, float logit_softcap, enum ggml_prec prec,
                            enum ggml_type type_k, enum ggml_type type_v, const int64_t permute[4], bool kv_view,
                            bool v_is_view_of_k) {
    struct flash_attn_params p = {
        .hsk = hsk, .hsv = hsv, .nh = nh, .nr23 = { nr23[0], nr23[1] }, .kv = kv, .nb = nb, .mask = mask, .sinks = sinks,
        .max_bias = max_bias, .logit_softcap = logit_softcap, .prec = prec, .type_k = type_k, .type_v = type_v,
        .kv_view = kv_view, .v_is_view_of_k = v_is_view_of_k,
    };
    tbo_copy4(p.permute, permute);
    struct tbo_str s = { 0 };
    tbo_var_i64(&s, "hsk", hsk);
    tbo_var_i64(&s, "hsv", hsv);
    tbo_var_i64(&s, "nh", nh);
    tbo_var_arr(&s, "nr23", nr23, 2);
    tbo_var_i64(&s, "kv", kv);
    tbo_var_i64(&s, "nb", nb);
    tbo_var_i64(&s, "mask", mask);
    tbo_var_i64(&s, "sinks", sinks);
    tbo_var_f32(&s, "max_bias", max_bias);
    tbo_var_f32(&s, "logit_softcap", logit_softcap);
    tbo_var_prec(&s, "prec", prec);
    tbo_var_type(&s, "type_K", type_k);
    tbo_var_type(&s, "type_V", type_v);
    tbo_var_arr(&s, "permute", permute, 4);
    tbo_var_i64(&s, "kv_view", kv_view);
    tbo_var_i64(&s, "v_is_view_of_k", v_is_view_of_k);
    tbo_case_add(l, &flash_attn_class, &p, sizeof(p), &s);
}
