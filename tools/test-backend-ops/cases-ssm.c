// cases-ssm.c: the cases of the recurrent ops (SSM_CONV and its fusion with a
// bias and SiLU, SSM_SCAN and its rollback snapshots, RWKV_WKV6, RWKV_WKV7,
// GATED_LINEAR_ATTN, GATED_DELTA_NET) and their two places in the case list,
// with upstream's names and parameters.

#include "tbo.h"

#include <math.h>
#include <stdlib.h>

#define NE(...) ((const int64_t[]) { __VA_ARGS__ })

static struct ggml_tensor * named(struct ggml_tensor * t, const char * name) {
    ggml_set_name(t, name);
    return t;
}

static bool whole_graph(const struct tbo_case * c) {
    (void) c;
    return true;
}

//
// SSM_CONV, and SSM_CONV (+ bias) + SILU as one graph
//

struct ssm_conv_params {
    enum ggml_type type;
    int64_t        ne_a[4];
    int64_t        ne_b[4];
    int            fused;     // 0: SSM_CONV alone; 1: followed by SILU
    bool           fuse_bias; // with fused: a bias added before the SILU
};

static struct ggml_tensor * ssm_conv_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct ssm_conv_params * p = c->p;
    struct ggml_tensor * a = named(tbo_new_tensor(b, p->type, 4, p->ne_a), "a");
    struct ggml_tensor * w = named(tbo_new_tensor(b, p->type, 4, p->ne_b), "b");
    struct ggml_tensor * out = ggml_ssm_conv(b->ctx, a, w);
    if (!p->fused) {
        return named(out, "out");
    }
    if (p->fuse_bias) {
        struct ggml_tensor * bias = named(tbo_new_tensor_1d(b, p->type, out->ne[0]), "bias");
        out = ggml_add(b->ctx, out, bias);
    }
    return named(ggml_silu(b->ctx, out), "out");
}

static const char * ssm_conv_fused_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "SSM_CONV_BIAS_SILU";
}

static const struct tbo_case_class ssm_conv_class = {
    .name  = "ssm_conv",
    .build = ssm_conv_build,
};

static const struct tbo_case_class ssm_conv_bias_silu_class = {
    .name            = "ssm_conv_bias_silu",
    .build           = ssm_conv_build,
    .op_desc         = ssm_conv_fused_desc,
    .run_whole_graph = whole_graph,
};

static void add_ssm_conv(struct tbo_case_list * l, const int64_t ne_a[4], const int64_t ne_b[4], int fused, bool fuse_bias) {
    struct ssm_conv_params p = { .type = GGML_TYPE_F32, .fused = fused, .fuse_bias = fuse_bias };
    tbo_copy4(p.ne_a, ne_a);
    tbo_copy4(p.ne_b, ne_b);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", p.type);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_arr(&s, "ne_b", ne_b, 4);
    if (fused) {
        tbo_var_i64(&s, "fuse_bias", fuse_bias);
    }
    tbo_case_add(l, fused ? &ssm_conv_bias_silu_class : &ssm_conv_class, &p, sizeof(p), &s);
}

//
// SSM_SCAN, and the rollback check: each snapshot slot of a scan with K
// slots equals the final state of a scan over the matching prefix
//

struct ssm_scan_params {
    int64_t d_state, head_dim, n_head, n_group, n_seq_tokens, n_seqs;
    bool    xbc_overlap;
    int64_t K;
};

struct ssm_scan_inputs {
    struct ggml_tensor * s, * x, * dt, * A, * B, * C, * ids;
};

static struct ssm_scan_inputs ssm_scan_inputs(struct tbo_build * b, const struct ssm_scan_params * p) {
    struct ssm_scan_inputs in;
    in.s  = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, p->d_state, p->head_dim, p->n_head, p->n_seqs), "s");
    in.dt = named(tbo_new_tensor_3d(b, GGML_TYPE_F32, p->n_head, p->n_seq_tokens, p->n_seqs), "dt");
    in.A  = named(tbo_new_tensor_2d(b, GGML_TYPE_F32, p->head_dim > 1 ? 1 : p->d_state, p->n_head), "A");
    if (p->xbc_overlap) {
        // x, B and C as views of one tensor, as a fused projection gives them
        struct ggml_tensor * xbc = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, p->d_state, p->n_head, p->n_seq_tokens,
                                                           2 * p->n_seqs), "xbc");
        in.x = ggml_view_4d(b->ctx, xbc, p->head_dim, p->n_head, p->n_seq_tokens, p->n_seqs, xbc->nb[1], xbc->nb[2],
                            xbc->nb[3], xbc->nb[3]);
        in.B = ggml_view_4d(b->ctx, xbc, p->d_state, p->n_group, p->n_seq_tokens, p->n_seqs, xbc->nb[1], xbc->nb[2],
                            xbc->nb[3], 0);
        in.C = ggml_view_4d(b->ctx, xbc, p->d_state, p->n_group, p->n_seq_tokens, p->n_seqs, xbc->nb[1], xbc->nb[2],
                            xbc->nb[3], 2 * xbc->nb[3]);
    } else {
        in.x = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, p->head_dim, p->n_head, p->n_seq_tokens, p->n_seqs), "x");
        in.B = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, p->d_state, p->n_group, p->n_seq_tokens, p->n_seqs), "B");
        in.C = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, p->d_state, p->n_group, p->n_seq_tokens, p->n_seqs), "C");
    }
    in.ids = named(tbo_new_tensor_1d(b, GGML_TYPE_I32, p->n_seqs), "ids");
    return in;
}

static struct ggml_tensor * ssm_scan_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct ssm_scan_params * p = c->p;
    const struct ssm_scan_inputs in = ssm_scan_inputs(b, p);
    return named(ggml_ssm_scan(b->ctx, in.s, in.x, in.dt, in.A, in.B, in.C, in.ids, p->K), "out");
}

// sum over the slots of |snapshot - prefix scan's final state|^2
static struct ggml_tensor * ssm_scan_rollback_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct ssm_scan_params * p = c->p;
    const struct ssm_scan_inputs in = ssm_scan_inputs(b, p);
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * full = ggml_ssm_scan(ctx, in.s, in.x, in.dt, in.A, in.B, in.C, in.ids, p->K);
    const int64_t y_elems     = p->head_dim * p->n_head * p->n_seq_tokens * p->n_seqs;
    const int64_t state_elems = p->d_state * p->head_dim * p->n_head * p->n_seqs;
    const size_t  es = ggml_element_size(full);
    struct ggml_tensor * out = NULL;
    for (int64_t slot = 0; slot < p->K; slot++) {
        const int64_t n = p->n_seq_tokens - slot;
        struct ggml_tensor * x  = ggml_cont(ctx, ggml_view_4d(ctx, in.x, p->head_dim, p->n_head, n, p->n_seqs,
                                                              in.x->nb[1], in.x->nb[2], in.x->nb[3], 0));
        struct ggml_tensor * dt = ggml_cont(ctx, ggml_view_3d(ctx, in.dt, p->n_head, n, p->n_seqs, in.dt->nb[1],
                                                              in.dt->nb[2], 0));
        struct ggml_tensor * B  = ggml_cont(ctx, ggml_view_4d(ctx, in.B, p->d_state, p->n_group, n, p->n_seqs,
                                                              in.B->nb[1], in.B->nb[2], in.B->nb[3], 0));
        struct ggml_tensor * C  = ggml_cont(ctx, ggml_view_4d(ctx, in.C, p->d_state, p->n_group, n, p->n_seqs,
                                                              in.C->nb[1], in.C->nb[2], in.C->nb[3], 0));
        struct ggml_tensor * prefix = ggml_ssm_scan(ctx, in.s, x, dt, in.A, B, C, in.ids, 1);
        struct ggml_tensor * fs = ggml_view_1d(ctx, full, state_elems, (size_t) (y_elems + slot * state_elems) * es);
        struct ggml_tensor * ps = ggml_view_1d(ctx, prefix, state_elems,
                                               (size_t) (p->head_dim * p->n_head * n * p->n_seqs) * es);
        struct ggml_tensor * diff = ggml_sum(ctx, ggml_sqr(ctx, ggml_sub(ctx, fs, ps)));
        out = out == NULL ? diff : ggml_add(ctx, out, diff);
    }
    return out;
}

// ids: a permutation of the sequences; A negative (decay); the rest in [-1, 1)
static void ssm_scan_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL) {
            continue;
        }
        if (t->type == GGML_TYPE_I32) {
            int64_t * perm = tbo_malloc((size_t) t->ne[0] * sizeof(int64_t));
            int32_t * v = tbo_malloc((size_t) t->ne[0] * sizeof(int32_t));
            for (int64_t i = 0; i < t->ne[0]; i++) {
                perm[i] = i;
            }
            tbo_rng_shuffle_i64(rng, perm, t->ne[0]);
            for (int64_t i = 0; i < t->ne[0]; i++) {
                v[i] = (int32_t) perm[i];
            }
            ggml_backend_tensor_set(t, v, 0, (size_t) t->ne[0] * sizeof(int32_t));
            free(v);
            free(perm);
        } else if (strcmp(ggml_get_name(t), "A") == 0) {
            tbo_init_uniform(rng, t, -1.0f, -0.5f);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

static double ssm_scan_max_err(const struct tbo_case * c) {
    const struct ssm_scan_params * p = c->p;
    return p->head_dim > 1 ? 2e-7 : 1e-7;
}

static double rollback_max_err(const struct tbo_case * c) {
    (void) c;
    return 1e-6;
}

// the largest magnitude on either side: both should be 0
static double rollback_err(const struct tbo_case * c, const struct tbo_build * b, const double * x, const double * y, size_t n) {
    (void) c; (void) b;
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        worst = fmax(worst, fmax(fabs(x[i]), fabs(y[i])));
    }
    return worst;
}

static const char * rollback_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "SSM_SCAN_ROLLBACK";
}

static const struct tbo_case_class ssm_scan_class = {
    .name    = "ssm_scan",
    .build   = ssm_scan_build,
    .init    = ssm_scan_init,
    .max_err = ssm_scan_max_err,
};

static const struct tbo_case_class ssm_scan_rollback_class = {
    .name            = "ssm_scan_rollback",
    .build           = ssm_scan_rollback_build,
    .init            = ssm_scan_init,
    .max_err         = rollback_max_err,
    .err             = rollback_err,
    .op_desc         = rollback_desc,
    .run_whole_graph = whole_graph,
};

static void add_ssm_scan(struct tbo_case_list * l, bool rollback, int64_t d_state, int64_t head_dim, int64_t n_head,
                         int64_t n_group, int64_t n_seq_tokens, int64_t n_seqs, bool xbc_overlap, int64_t K) {
    struct ssm_scan_params p = { d_state, head_dim, n_head, n_group, n_seq_tokens, n_seqs, xbc_overlap, K };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", GGML_TYPE_F32);
    tbo_var_i64(&s, "d_state", d_state);
    tbo_var_i64(&s, "head_dim", head_dim);
    tbo_var_i64(&s, "n_head", n_head);
    tbo_var_i64(&s, "n_group", n_group);
    tbo_var_i64(&s, "n_seq_tokens", n_seq_tokens);
    tbo_var_i64(&s, "n_seqs", n_seqs);
    if (!rollback) {
        tbo_var_i64(&s, "xbc_overlap", xbc_overlap);
    }
    tbo_var_i64(&s, "K", K);
    tbo_case_add(l, rollback ? &ssm_scan_rollback_class : &ssm_scan_class, &p, sizeof(p), &s);
}

//
// RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7: head_count heads of head_size,
// n_seq_tokens tokens in each of n_seqs sequences
//

enum wkv_kind { WKV6, WKV_GLA, WKV7 };

struct wkv_params {
    enum wkv_kind kind;
    int64_t head_count, head_size, n_seq_tokens, n_seqs;
};

static struct ggml_tensor * wkv_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct wkv_params * p = c->p;
    const int64_t S = p->head_size, H = p->head_count, T = p->n_seq_tokens * p->n_seqs;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * t[6];
    const int n_tok = p->kind == WKV7 ? 6 : p->kind == WKV_GLA ? 4 : 3;
    for (int i = 0; i < n_tok; i++) {
        t[i] = tbo_new_tensor_3d(b, GGML_TYPE_F32, S, H, T);
    }
    switch (p->kind) {
        case WKV6: {
            // r, k, v, then tf [S, H] and td
            struct ggml_tensor * tf = tbo_new_tensor_2d(b, GGML_TYPE_F32, S, H);
            struct ggml_tensor * td = tbo_new_tensor_3d(b, GGML_TYPE_F32, S, H, T);
            struct ggml_tensor * s  = tbo_new_tensor_2d(b, GGML_TYPE_F32, S * S * H, p->n_seqs);
            return ggml_rwkv_wkv6(ctx, t[1], t[2], t[0], tf, td, s);
        }
        case WKV_GLA: {
            // q, k, v, g
            struct ggml_tensor * s = tbo_new_tensor_2d(b, GGML_TYPE_F32, S * S * H, p->n_seqs);
            return ggml_gated_linear_attn(ctx, t[1], t[2], t[0], t[3], s, (float) pow((double) S, -0.5));
        }
        case WKV7: {
            // r, w, k, v, a, b; a and b normalised, or long sequences overflow
            struct ggml_tensor * a  = ggml_l2_norm(ctx, t[4], 1e-7f);
            struct ggml_tensor * bb = ggml_l2_norm(ctx, t[5], 1e-7f);
            struct ggml_tensor * s  = tbo_new_tensor_2d(b, GGML_TYPE_F32, S * S * H, p->n_seqs);
            return ggml_rwkv_wkv7(ctx, t[0], t[1], t[2], t[3], a, bb, s);
        }
    }
    return NULL;
}

static const struct tbo_case_class wkv_class = {
    .name  = "wkv",
    .build = wkv_build,
};

static void add_wkv(struct tbo_case_list * l, enum wkv_kind kind, int64_t head_count, int64_t head_size, int64_t n_seq_tokens,
                    int64_t n_seqs) {
    struct wkv_params p = { kind, head_count, head_size, n_seq_tokens, n_seqs };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", GGML_TYPE_F32);
    tbo_var_i64(&s, "head_count", head_count);
    tbo_var_i64(&s, "head_size", head_size);
    tbo_var_i64(&s, "n_seq_tokens", n_seq_tokens);
    tbo_var_i64(&s, "n_seqs", n_seqs);
    tbo_case_add(l, &wkv_class, &p, sizeof(p), &s);
}

//
// GATED_DELTA_NET: q and k L2-normalised first, as the models do
//

struct gdn_params {
    int64_t head_count, head_size, n_seq_tokens, n_seqs;
    int     v_repeat;
    bool    permuted, kda;
    int64_t K;
};

static struct ggml_tensor * gdn_qkv(struct tbo_build * b, const struct gdn_params * p, int64_t heads, const char * name) {
    if (p->permuted) {
        // dims 1 and 2 swapped, then permuted back: rows of each token not adjacent
        struct ggml_tensor * t = tbo_new_tensor_4d(b, GGML_TYPE_F32, p->head_size, p->n_seq_tokens, heads, p->n_seqs);
        return named(ggml_permute(b->ctx, t, 0, 2, 1, 3), name);
    }
    return named(tbo_new_tensor_4d(b, GGML_TYPE_F32, p->head_size, heads, p->n_seq_tokens, p->n_seqs), name);
}

static struct ggml_tensor * gdn_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct gdn_params * p = c->p;
    const int64_t H = p->head_count, Hv = H * p->v_repeat, S = p->head_size;
    struct ggml_tensor * q = gdn_qkv(b, p, H, "q");
    struct ggml_tensor * k = gdn_qkv(b, p, H, "k");
    struct ggml_tensor * v = gdn_qkv(b, p, Hv, "v");
    struct ggml_tensor * g     = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, p->kda ? S : 1, Hv, p->n_seq_tokens, p->n_seqs), "g");
    struct ggml_tensor * beta  = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, 1, Hv, p->n_seq_tokens, p->n_seqs), "beta");
    struct ggml_tensor * state = named(tbo_new_tensor_4d(b, GGML_TYPE_F32, S, S, Hv, p->n_seqs), "state");
    q = ggml_l2_norm(b->ctx, q, 1e-6f);
    k = ggml_l2_norm(b->ctx, k, 1e-6f);
    return ggml_gated_delta_net(b->ctx, q, k, v, g, beta, state, p->K);
}

// g in [-20, 0) (decays), beta in [0, 1), v in [-0.3, 5)
static void gdn_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        const char * name = ggml_get_name(t);
        if (t->view_src != NULL) {
            continue;
        }
        if (strcmp(name, "g") == 0) {
            tbo_init_uniform(rng, t, -20.0f, -1e-4f);
        } else if (strcmp(name, "beta") == 0) {
            tbo_init_uniform(rng, t, 0.0f, 1.0f);
        } else if (strcmp(name, "v") == 0) {
            tbo_init_uniform(rng, t, -0.3f, 5.0f);
        } else {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

static const struct tbo_case_class gdn_class = {
    .name  = "gated_delta_net",
    .build = gdn_build,
    .init  = gdn_init,
};

static void add_gdn(struct tbo_case_list * l, int64_t head_count, int64_t head_size, int64_t n_seq_tokens, int64_t n_seqs,
                    int v_repeat, bool permuted, bool kda, int64_t K) {
    struct gdn_params p = { head_count, head_size, n_seq_tokens, n_seqs, v_repeat, permuted, kda, K };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", GGML_TYPE_F32);
    tbo_var_i64(&s, "head_count", head_count);
    tbo_var_i64(&s, "head_size", head_size);
    tbo_var_i64(&s, "n_seq_tokens", n_seq_tokens);
    tbo_var_i64(&s, "n_seqs", n_seqs);
    tbo_var_i64(&s, "v_repeat", v_repeat);
    tbo_var_i64(&s, "permuted", permuted);
    tbo_var_i64(&s, "kda", kda);
    tbo_var_i64(&s, "K", K);
    tbo_case_add(l, &gdn_class, &p, sizeof(p), &s);
}

//
// the places in upstream's list
//

void tbo_list_ssm_after_norms(struct tbo_case_list * l) {
    static const int64_t d_convs[3] = { 3, 4, 9 }, d_inners[3] = { 1024, 1536, 2048 };
    for (int ci = 0; ci < 3; ci++) {
        for (int ii = 0; ii < 3; ii++) {
            const int64_t dc = d_convs[ci], di = d_inners[ii];
            add_ssm_conv(l, NE(dc, di, 1, 1), NE(dc, di, 1, 1), 0, false);
            add_ssm_conv(l, NE(2 * dc, di, 1, 1), NE(dc, di, 1, 1), 0, false);
            add_ssm_conv(l, NE(dc, di, 4, 1), NE(dc, di, 1, 1), 0, false);
            add_ssm_conv(l, NE(dc - 1 + 64, di, 1, 1), NE(dc, di, 1, 1), 0, false);
            add_ssm_conv(l, NE(dc - 1 + 64, di, 4, 1), NE(dc, di, 1, 1), 0, false);
        }
    }
    for (int ci = 0; ci < 3; ci++) {
        for (int ii = 0; ii < 3; ii++) {
            for (int fb = 0; fb <= 1; fb++) {
                const int64_t dc = d_convs[ci], di = d_inners[ii];
                add_ssm_conv(l, NE(dc, di, 1, 1), NE(dc, di, 1, 1), 1, fb);
                add_ssm_conv(l, NE(2 * dc, di, 1, 1), NE(dc, di, 1, 1), 1, fb);
                add_ssm_conv(l, NE(dc, di, 4, 1), NE(dc, di, 1, 1), 1, fb);
                add_ssm_conv(l, NE(dc - 1 + 64, di, 1, 1), NE(dc, di, 1, 1), 1, fb);
                add_ssm_conv(l, NE(dc - 1 + 64, di, 4, 1), NE(dc, di, 1, 1), 1, fb);
            }
        }
    }

    add_ssm_scan(l, false, 16, 1, 1024, 1, 32, 4, false, 1);   // Mamba-1
    add_ssm_scan(l, false, 128, 64, 16, 2, 32, 4, false, 1);   // Mamba-2
    add_ssm_scan(l, false, 256, 64, 8, 2, 32, 4, false, 1);    // Falcon-H1
    add_ssm_scan(l, false, 128, 128, 4, 4, 16, 2, true, 1);    // x, B, C overlapping
    add_ssm_scan(l, false, 128, 80, 128, 1, 256, 1, false, 1);
    add_ssm_scan(l, false, 128, 80, 128, 1, 512, 1, false, 1);
    add_ssm_scan(l, false, 128, 64, 80, 8, 300, 2, false, 1);
    add_ssm_scan(l, false, 128, 64, 16, 2, 4, 2, false, 4);    // rollback snapshots
    add_ssm_scan(l, false, 128, 64, 16, 2, 8, 2, false, 3);    // more tokens than slots
    add_ssm_scan(l, true, 128, 64, 16, 2, 8, 2, false, 3);

    add_wkv(l, WKV6, 32, 64, 1, 1);
    add_wkv(l, WKV6, 32, 64, 32, 1);
    add_wkv(l, WKV6, 32, 64, 32, 4);
    add_wkv(l, WKV6, 32, 64, 128, 4);

    add_wkv(l, WKV7, 32, 64, 1, 1);
    add_wkv(l, WKV7, 32, 64, 1, 4);
    add_wkv(l, WKV7, 32, 64, 32, 1);
    add_wkv(l, WKV7, 32, 64, 32, 4);
    add_wkv(l, WKV7, 32, 64, 128, 4);

    add_wkv(l, WKV_GLA, 32, 64, 1, 1);
    add_wkv(l, WKV_GLA, 32, 64, 32, 1);
    add_wkv(l, WKV_GLA, 32, 64, 32, 4);
    add_wkv(l, WKV_GLA, 32, 64, 128, 4);
}

void tbo_list_ssm_gated_delta_net(struct tbo_case_list * l) {
    add_gdn(l, 32, 128, 1, 1, 1, false, false, 1);
    add_gdn(l, 32, 16, 1, 1, 1, false, false, 1);
    add_gdn(l, 32, 16, 1, 1, 1, true, true, 1);
    add_gdn(l, 32, 16, 1, 1, 1, false, true, 1);
    add_gdn(l, 16, 64, 1, 2, 1, false, false, 1);
    add_gdn(l, 4, 64, 4, 1, 1, false, false, 1);
    add_gdn(l, 4, 64, 4, 2, 1, false, false, 1);
    add_gdn(l, 8, 32, 4, 2, 2, false, false, 1);
    add_gdn(l, 4, 64, 4, 2, 1, true, false, 1);
    add_gdn(l, 4, 64, 4, 1, 1, true, false, 1);
    // KDA (a gate per key element)
    add_gdn(l, 4, 64, 1, 1, 1, false, true, 1);
    add_gdn(l, 4, 64, 1, 2, 1, false, true, 1);
    add_gdn(l, 4, 16, 1, 2, 1, false, true, 1);
    add_gdn(l, 4, 32, 4, 1, 1, false, true, 1);
    add_gdn(l, 4, 64, 4, 2, 1, false, true, 1);
    add_gdn(l, 8, 32, 4, 2, 2, false, true, 1);
    add_gdn(l, 4, 64, 4, 2, 1, true, true, 1);
    add_gdn(l, 4, 16, 4, 2, 1, true, true, 1);
    // longer sequences
    static const int64_t long_gdn[][2] = { { 64, 1 }, { 127, 1 }, { 256, 1 }, { 65, 1 }, { 100, 1 }, { 200, 1 }, { 127, 2 } };
    for (size_t i = 0; i < sizeof(long_gdn) / sizeof(long_gdn[0]); i++) {
        add_gdn(l, 4, 64, long_gdn[i][0], long_gdn[i][1], 1, false, false, 1);
    }
    add_gdn(l, 4, 64, 64, 1, 1, false, true, 1);
    add_gdn(l, 4, 64, 33, 1, 1, false, true, 1);
    add_gdn(l, 4, 64, 100, 1, 1, false, true, 1);
    // K snapshot slots, as many as tokens, then fewer
    add_gdn(l, 4, 16, 2, 1, 1, false, false, 2);
    add_gdn(l, 4, 32, 4, 1, 1, false, false, 4);
    add_gdn(l, 4, 64, 4, 2, 1, false, false, 4);
    add_gdn(l, 8, 128, 4, 1, 1, false, false, 4);
    add_gdn(l, 4, 64, 4, 2, 1, false, true, 4);
    add_gdn(l, 8, 32, 4, 2, 2, false, true, 4);
    add_gdn(l, 4, 32, 8, 1, 1, false, false, 3);
    add_gdn(l, 4, 64, 16, 2, 1, false, false, 4);
}

//
// perf mode: upstream's model shapes (granite-4.0-h, Nemotron, Qwen3.5-like)
//

void tbo_perf_ssm_conv_scan(struct tbo_case_list * l) {
    add_ssm_conv(l, NE(515, 3328, 1, 1), NE(4, 3328, 1, 1), 0, false); // prefill
    add_ssm_conv(l, NE(937, 8192, 1, 1), NE(4, 8192, 1, 1), 0, false);
    add_ssm_conv(l, NE(4, 3328, 1, 1), NE(4, 3328, 1, 1), 0, false);   // generation
    add_ssm_conv(l, NE(515, 3328, 1, 1), NE(4, 3328, 1, 1), 1, true);
    add_ssm_conv(l, NE(4, 3328, 1, 1), NE(4, 3328, 1, 1), 1, true);
    add_ssm_scan(l, false, 128, 64, 48, 1, 512, 1, false, 1);
    add_ssm_scan(l, false, 128, 64, 48, 1, 1, 1, false, 1);
    add_ssm_scan(l, false, 128, 80, 128, 1, 512, 1, false, 1);
    add_ssm_scan(l, false, 128, 80, 128, 1, 1, 1, false, 1);
}

void tbo_perf_ssm_gated_delta_net(struct tbo_case_list * l) {
    add_gdn(l, 32, 128, 1, 1, 1, false, false, 1);
    add_gdn(l, 16, 64, 1, 1, 1, false, false, 1);
    add_gdn(l, 32, 128, 1, 1, 1, false, true, 1);
    static const int64_t pp[4] = { 64, 256, 512, 1024 };
    for (int i = 0; i < 4; i++) {
        add_gdn(l, 32, 128, pp[i], 1, 1, false, false, 1);
    }
    for (int i = 0; i < 4; i++) {
        add_gdn(l, 4, 128, pp[i], 1, 1, false, false, 1);
    }
    add_gdn(l, 32, 128, 64, 1, 1, false, true, 1);
}
