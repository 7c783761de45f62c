// cases-matmul.c: MUL_MAT (plain, permuted, broadcast, strided, with the Hadamard
// hint), MUL_MAT_ID, OUT_PROD and the fusions around them.

#include "tbo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool always(const struct tbo_case * c) {
    (void) c;
    return true;
}

//
// MUL_MAT: C^T = A * B^T, (k, m) * (k, n) => (m, n), batched over dims 2 and 3
//

struct mul_mat_params {
    enum ggml_type type_a;
    enum ggml_type type_b;
    int64_t        m;
    int64_t        n;
    int64_t        k;
    int64_t        bs[2];  // batch in dims 2 and 3
    int64_t        nr[2];  // broadcast of a over b in dims 2 and 3
    int64_t        per[4]; // permutation of the dims of both inputs
    int64_t        k_v;    // row length in memory: k_v > k makes strided views
    int            o;      // number of products summed (o > 1 is a fusion test)
    bool           src_overlap; // a and b are interleaved views of one tensor
    bool           hadamard;    // a is a Hadamard matrix, with the hint set
};

static struct ggml_tensor * mul_mat_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct mul_mat_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * a;
    struct ggml_tensor * bt;

    const int npermuted = (p->per[0] != 0) + (p->per[1] != 1) + (p->per[2] != 2) + (p->per[3] != 3);
    if (npermuted > 0) {
        GGML_ASSERT(npermuted == 2);
        GGML_ASSERT(p->k_v == 0);
        GGML_ASSERT(!ggml_is_quantized(p->type_a) || p->per[0] == 0);
        GGML_ASSERT(!ggml_is_quantized(p->type_b) || p->per[0] == 0);

        // tensors with the permuted dims, permuted back to m, n, k
        const int64_t ne_a[4] = { p->k, p->m, p->bs[0],           p->bs[1] };
        const int64_t ne_b[4] = { p->k, p->n, p->bs[0]*p->nr[0], p->bs[1]*p->nr[1] };
        const int64_t * per = p->per;
        a  = tbo_new_tensor_4d(b, p->type_a, ne_a[per[0]], ne_a[per[1]], ne_a[per[2]], ne_a[per[3]]);
        bt = tbo_new_tensor_4d(b, p->type_b, ne_b[per[0]], ne_b[per[1]], ne_b[per[2]], ne_b[per[3]]);
        ggml_set_name(a, "a");
        ggml_set_name(bt, "b");
        a  = ggml_permute(ctx, a,  (int) per[0], (int) per[1], (int) per[2], (int) per[3]);
        bt = ggml_permute(ctx, bt, (int) per[0], (int) per[1], (int) per[2], (int) per[3]);
        ggml_set_name(a, "a_permuted");
        ggml_set_name(bt, "b_permuted");
    } else if (p->src_overlap) {
        GGML_ASSERT(p->type_a == p->type_b);
        GGML_ASSERT(p->k_v == 0);
        // a and b interleave in one tensor, as a fused QKV projection
        struct ggml_tensor * base = tbo_new_tensor_4d(b, p->type_a, 2*p->k, p->m > p->n ? p->m : p->n,
                                                      p->bs[0]*p->nr[0], p->bs[1]*p->nr[1]);
        ggml_set_name(base, "base");
        a  = ggml_view_4d(ctx, base, p->k, p->m, p->bs[0], p->bs[1], base->nb[1], base->nb[2], base->nb[3], 0);
        bt = ggml_view_4d(ctx, base, p->k, p->n, p->bs[0]*p->nr[0], p->bs[1]*p->nr[1], base->nb[1], base->nb[2], base->nb[3],
                          (size_t) p->k * ggml_type_size(p->type_a));
        ggml_set_name(a, "a");
        ggml_set_name(bt, "b");
    } else {
        const int64_t k_physical = p->k_v == 0 ? p->k : p->k_v;
        a  = tbo_new_tensor_4d(b, p->type_a, k_physical, p->m, p->bs[0],           p->bs[1]);
        bt = tbo_new_tensor_4d(b, p->type_b, k_physical, p->n, p->bs[0]*p->nr[0], p->bs[1]*p->nr[1]);
        if (p->k_v != 0) {
            GGML_ASSERT(p->k_v > p->k);
            a  = ggml_view_4d(ctx, a,  p->k, p->m, p->bs[0],           p->bs[1],           a->nb[1],  a->nb[2],  a->nb[3],  0);
            bt = ggml_view_4d(ctx, bt, p->k, p->n, p->bs[0]*p->nr[0], p->bs[1]*p->nr[1], bt->nb[1], bt->nb[2], bt->nb[3], 0);
        }
        ggml_set_name(a, "a");
        ggml_set_name(bt, "b");
    }

    struct ggml_tensor * out = ggml_mul_mat(ctx, a, bt);
    ggml_set_name(out, "out");
    for (int i = 1; i < p->o; ++i) {
        struct ggml_tensor * out2 = ggml_mul_mat(ctx, a, bt);
        ggml_set_name(out2, "out2");
        out = ggml_add(ctx, out, out2);
    }

    if (p->hadamard) {
        for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
            if (t->op == GGML_OP_MUL_MAT) {
                ggml_mul_mat_set_hint(t, GGML_HINT_SRC0_IS_HADAMARD);
            }
        }
    }
    return out;
}

// a: the rows of a Sylvester-Hadamard matrix scaled to be orthonormal
static void hadamard_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    (void) c;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src != NULL) {
            continue;
        }
        if (strcmp(ggml_get_name(t), "a") == 0) {
            const int64_t n_cols = t->ne[0];
            const int64_t n_rows = ggml_nrows(t);
            float * data = tbo_malloc((size_t) (n_cols * n_rows) * sizeof(float));
            const float scale = 1.0f / sqrtf((float) n_cols);
            for (int64_t r = 0; r < n_rows; r++) {
                for (int64_t i = 0; i < n_cols; i++) {
                    int pop = 0;
                    for (int64_t v = r & i; v != 0; v >>= 1) {
                        pop += (int) (v & 1);
                    }
                    data[r*n_cols + i] = pop % 2 == 0 ? scale : -scale;
                }
            }
            ggml_backend_tensor_set(t, data, 0, (size_t) (n_cols * n_rows) * sizeof(float));
            free(data);
        } else if (t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16) {
            tbo_init_uniform(rng, t, -1.0f, 1.0f);
        }
    }
}

static double matmul_max_err(const struct tbo_case * c) {
    (void) c;
    return 5e-4;
}

static uint64_t mul_mat_flops(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) out;
    const struct mul_mat_params * p = c->p;
    return (uint64_t) (2 * p->m * p->n * p->k * p->bs[0] * p->nr[0] * p->bs[1] * p->nr[1]);
}

static bool mul_mat_whole(const struct tbo_case * c) {
    const struct mul_mat_params * p = c->p;
    return p->o > 1;
}

static const char * mul_mat_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) out;
    const struct mul_mat_params * p = c->p;
    return p->hadamard ? "MUL_MAT_HADAMARD" : "MUL_MAT";
}

static const struct tbo_case_class mul_mat_class = {
    .name            = "mul_mat",
    .build           = mul_mat_build,
    .max_err         = matmul_max_err,
    .flops           = mul_mat_flops,
    .op_desc         = mul_mat_desc,
    .run_whole_graph = mul_mat_whole,
};

static const struct tbo_case_class mul_mat_hadamard_class = {
    .name            = "mul_mat_hadamard",
    .build           = mul_mat_build,
    .init            = hadamard_init,
    .max_err         = matmul_max_err,
    .flops           = mul_mat_flops,
    .op_desc         = mul_mat_desc,
    .run_whole_graph = mul_mat_whole,
};

static void add_mul_mat(struct tbo_case_list * l, const struct mul_mat_params * p, const struct tbo_case_class * cls) {
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type_a", p->type_a);
    tbo_var_type(&s, "type_b", p->type_b);
    tbo_var_i64(&s, "m", p->m);
    tbo_var_i64(&s, "n", p->n);
    tbo_var_i64(&s, "k", p->k);
    tbo_var_arr(&s, "bs", p->bs, 2);
    tbo_var_arr(&s, "nr", p->nr, 2);
    tbo_var_arr(&s, "per", p->per, 4);
    tbo_var_i64(&s, "k_v", p->k_v);
    tbo_var_i64(&s, "o", p->o);
    tbo_var_i64(&s, "src_overlap", p->src_overlap);
    tbo_case_add(l, cls, p, sizeof(*p), &s);
}

void tbo_add_mul_mat(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int64_t m, int64_t n, int64_t k,
                     const int64_t bs[2], const int64_t nr[2], const int64_t per[4], int64_t k_v, int o, bool src_overlap) {
    struct mul_mat_params p = {
        .type_a = type_a, .type_b = type_b, .m = m, .n = n, .k = k,
        .bs = { bs[0], bs[1] }, .nr = { nr[0], nr[1] }, .per = { per[0], per[1], per[2], per[3] },
        .k_v = k_v, .o = o, .src_overlap = src_overlap, .hadamard = false,
    };
    add_mul_mat(l, &p, &mul_mat_class);
}

void tbo_add_mul_mat_hadamard(struct tbo_case_list * l, int64_t m, int64_t n, int64_t k, const int64_t bs[2]) {
    struct mul_mat_params p = {
        .type_a = GGML_TYPE_F32, .type_b = GGML_TYPE_F32, .m = m, .n = n, .k = k,
        .bs = { bs[0], bs[1] }, .nr = { 1, 1 }, .per = { 0, 1, 2, 3 },
        .k_v = 0, .o = 1, .src_overlap = false, .hadamard = true,
    };
    add_mul_mat(l, &p, &mul_mat_hadamard_class);
}

//
// MUL_MAT_ID: each token's rows multiplied by the experts its ids select
//

struct mul_mat_id_params {
    enum ggml_type type_a;
    enum ggml_type type_b;
    int            n_mats;
    int            n_used;
    bool           b;   // one b row broadcast to every expert used
    int64_t        m;
    int64_t        n;
    int64_t        k;
    int            o;   // fusion: number of products summed
    bool           mul; // fusion: scaled by a per-row weight
};

static struct ggml_tensor * mul_mat_id_inputs(struct tbo_build * b, const struct mul_mat_id_params * p,
                                              struct ggml_tensor ** as, struct ggml_tensor ** ids) {
    *as = tbo_new_tensor_3d(b, p->type_a, p->k, p->m, p->n_mats);
    ggml_set_name(*as, "as");
    *ids = tbo_new_tensor_2d(b, GGML_TYPE_I32, p->n_mats, p->n);
    ggml_set_name(*ids, "ids");
    if (p->n_used != p->n_mats) {
        *ids = ggml_view_2d(b->ctx, *ids, p->n_used, p->n, (*ids)->nb[1], 0);
        ggml_set_name(*ids, "view_of_ids");
    }
    struct ggml_tensor * bt = tbo_new_tensor_3d(b, p->type_b, p->k, p->b ? 1 : p->n_used, p->n);
    ggml_set_name(bt, "b");
    return bt;
}

static struct ggml_tensor * mul_mat_id_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct mul_mat_id_params * p = c->p;
    struct ggml_tensor * as;
    struct ggml_tensor * ids;
    struct ggml_tensor * bt = mul_mat_id_inputs(b, p, &as, &ids);
    struct ggml_tensor * out = ggml_mul_mat_id(b->ctx, as, bt, ids);
    ggml_set_name(out, "out");
    return out;
}

static struct ggml_tensor * mul_mat_id_fusion_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct mul_mat_id_params * p = c->p;
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * as;
    struct ggml_tensor * ids;
    struct ggml_tensor * bt = mul_mat_id_inputs(b, p, &as, &ids);
    struct ggml_tensor * out = ggml_mul_mat_id(ctx, as, bt, ids);
    ggml_set_name(out, "out");
    for (int i = 1; i < p->o; ++i) {
        struct ggml_tensor * a2 = tbo_new_tensor_3d(b, p->type_a, p->k, p->m, p->n_mats);
        struct ggml_tensor * out2 = ggml_mul_mat_id(ctx, a2, bt, ids);
        ggml_set_name(out2, "out2");
        out = ggml_add(ctx, out, out2);
    }
    if (p->mul) {
        const int64_t ne[4] = { 1, out->ne[1], out->ne[2], out->ne[3] };
        struct ggml_tensor * w = tbo_new_tensor(b, out->type, 4, ne);
        out = ggml_mul(ctx, out, w);
    }
    return out;
}

static void mul_mat_id_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct mul_mat_id_params * p = c->p;
    tbo_init_mul_mat_id(rng, ctx, p->n_mats);
}

static uint64_t mul_mat_id_flops(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) out;
    const struct mul_mat_id_params * p = c->p;
    return (uint64_t) (2 * p->m * p->k * p->n * p->n_used);
}

static const char * mul_mat_id_fusion_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "MUL_MAT_ID_FUSION";
}

static const struct tbo_case_class mul_mat_id_class = {
    .name    = "mul_mat_id",
    .build   = mul_mat_id_build,
    .init    = mul_mat_id_init,
    .max_err = matmul_max_err,
    .flops   = mul_mat_id_flops,
};

static const struct tbo_case_class mul_mat_id_fusion_class = {
    .name            = "mul_mat_id_fusion",
    .build           = mul_mat_id_fusion_build,
    .init            = mul_mat_id_init,
    .max_err         = matmul_max_err,
    .flops           = mul_mat_id_flops,
    .op_desc         = mul_mat_id_fusion_desc,
    .run_whole_graph = always,
};

static void mul_mat_id_vars(struct tbo_str * s, const struct mul_mat_id_params * p) {
    tbo_var_type(s, "type_a", p->type_a);
    tbo_var_type(s, "type_b", p->type_b);
    tbo_var_i64(s, "n_mats", p->n_mats);
    tbo_var_i64(s, "n_used", p->n_used);
    tbo_var_i64(s, "b", p->b);
    tbo_var_i64(s, "m", p->m);
    tbo_var_i64(s, "n", p->n);
    tbo_var_i64(s, "k", p->k);
}

void tbo_add_mul_mat_id(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int n_mats, int n_used, bool b,
                        int64_t m, int64_t n, int64_t k) {
    GGML_ASSERT(n_used <= n_mats);
    const struct mul_mat_id_params p = { .type_a = type_a, .type_b = type_b, .n_mats = n_mats, .n_used = n_used, .b = b,
                                         .m = m, .n = n, .k = k, .o = 1, .mul = false };
    struct tbo_str s = { 0 };
    mul_mat_id_vars(&s, &p);
    tbo_case_add(l, &mul_mat_id_class, &p, sizeof(p), &s);
}

void tbo_add_mul_mat_id_fusion(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int n_mats, int n_used,
                               bool b, int64_t m, int64_t n, int64_t k, int o, bool mul) {
    GGML_ASSERT(n_used <= n_mats);
    const struct mul_mat_id_params p = { .type_a = type_a, .type_b = type_b, .n_mats = n_mats, .n_used = n_used, .b = b,
                                         .m = m, .n = n, .k = k, .o = o, .mul = mul };
    struct tbo_str s = { 0 };
    mul_mat_id_vars(&s, &p);
    tbo_var_i64(&s, "o", o);
    tbo_var_i64(&s, "mul", mul);
    tbo_case_add(l, &mul_mat_id_fusion_class, &p, sizeof(p), &s);
}

//
// OUT_PROD
//

struct out_prod_params {
    enum ggml_type type_a;
    enum ggml_type type_b;
    int64_t        m;
    int64_t        n;
    int64_t        k;
    int64_t        bs[2];
    int64_t        nr[2];
    bool           trans_b;
};

static struct ggml_tensor * out_prod_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct out_prod_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor_4d(b, p->type_a, p->m, p->k, p->bs[0], p->bs[1]);
    ggml_set_name(a, "a");
    struct ggml_tensor * bt;
    if (p->trans_b) {
        bt = tbo_new_tensor_4d(b, p->type_b, p->k, p->n, p->bs[0]*p->nr[0], p->bs[1]*p->nr[1]);
        bt = ggml_transpose(b->ctx, bt);
    } else {
        bt = tbo_new_tensor_4d(b, p->type_b, p->n, p->k, p->bs[0]*p->nr[0], p->bs[1]*p->nr[1]);
    }
    ggml_set_name(bt, "b");
    struct ggml_tensor * out = ggml_out_prod(b->ctx, a, bt);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class out_prod_class = {
    .name    = "out_prod",
    .build   = out_prod_build,
    .max_err = matmul_max_err,
};

void tbo_add_out_prod(struct tbo_case_list * l, enum ggml_type type_a, enum ggml_type type_b, int64_t m, int64_t n, int64_t k,
                      const int64_t bs[2], const int64_t nr[2], bool trans_b) {
    const struct out_prod_params p = { .type_a = type_a, .type_b = type_b, .m = m, .n = n, .k = k,
                                       .bs = { bs[0], bs[1] }, .nr = { nr[0], nr[1] }, .trans_b = trans_b };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type_a", type_a);
    tbo_var_type(&s, "type_b", type_b);
    tbo_var_i64(&s, "m", m);
    tbo_var_i64(&s, "n", n);
    tbo_var_i64(&s, "k", k);
    tbo_var_arr(&s, "bs", bs, 2);
    tbo_var_arr(&s, "nr", nr, 2);
    tbo_var_i64(&s, "trans_b", trans_b);
    tbo_case_add(l, &out_prod_class, &p, sizeof(p), &s);
}

//
// MUL_MAT_VEC_FUSION: gate and up projections, their biases and the GLU of an FFN
//

struct vec_fusion_params {
    enum ggml_type   type;
    enum ggml_glu_op glu_op;
    int64_t          m;
    int64_t          n;
    int64_t          k;
    bool             use_id;
    int              n_mats;
    int              n_used;
    bool             b;
    bool             with_bias;
    bool             with_gate;
    bool             with_lane_scale;
    int64_t          batch_dims[2];
};

static struct ggml_tensor * dense_lane(struct tbo_build * b, const struct vec_fusion_params * p, struct ggml_tensor * w,
                                       struct ggml_tensor * cur) {
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * r = ggml_mul_mat(ctx, w, cur);
    if (p->with_lane_scale) {
        struct ggml_tensor * scale = tbo_new_tensor_1d(b, GGML_TYPE_F32, 1);
        r = ggml_mul(ctx, r, scale);
    }
    if (p->with_bias) {
        const int64_t bias_ne[4] = { r->ne[0], 1, p->batch_dims[0], p->batch_dims[1] };
        struct ggml_tensor * bias = tbo_new_tensor(b, GGML_TYPE_F32, 4, bias_ne);
        r = ggml_add(ctx, r, bias);
    }
    return r;
}

static struct ggml_tensor * id_lane(struct tbo_build * b, const struct vec_fusion_params * p, struct ggml_tensor * w,
                                    struct ggml_tensor * cur, struct ggml_tensor * ids) {
    struct ggml_context * ctx = b->ctx;
    struct ggml_tensor * r = ggml_mul_mat_id(ctx, w, cur, ids);
    if (p->with_lane_scale) {
        struct ggml_tensor * scale = tbo_new_tensor_1d(b, GGML_TYPE_F32, p->n_mats);
        struct ggml_tensor * s = ggml_reshape_3d(ctx, scale, 1, p->n_mats, 1);
        s = ggml_repeat_4d(ctx, s, 1, p->n_mats, p->m, 1);
        s = ggml_get_rows(ctx, s, ids);
        r = ggml_mul(ctx, r, s);
    }
    if (p->with_bias) {
        // a bias row per expert, picked by the same ids
        struct ggml_tensor * bias = tbo_new_tensor_2d(b, GGML_TYPE_F32, r->ne[0], p->n_mats);
        r = ggml_add_id(ctx, r, bias, ids);
    }
    return r;
}

static struct ggml_tensor * vec_fusion_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct vec_fusion_params * p = c->p;
    struct ggml_context * ctx = b->ctx;

    if (!p->use_id) {
        const int64_t ne[4]  = { p->k, p->m, p->batch_dims[0], p->batch_dims[1] };
        const int64_t ne0[4] = { p->k, p->n, p->batch_dims[0], p->batch_dims[1] };
        struct ggml_tensor * cur  = tbo_new_tensor(b, GGML_TYPE_F32, 4, ne);
        struct ggml_tensor * gate = p->with_gate ? tbo_new_tensor(b, p->type, 4, ne0) : NULL;
        struct ggml_tensor * up   = tbo_new_tensor(b, p->type, 4, ne0);

        struct ggml_tensor * ffn_up   = dense_lane(b, p, up, cur);
        struct ggml_tensor * ffn_gate = p->with_gate ? dense_lane(b, p, gate, cur) : NULL;
        struct ggml_tensor * out = p->with_gate ? ggml_glu_split(ctx, ffn_gate, ffn_up, p->glu_op) : ffn_up;

        const int64_t bias2_ne[4] = { out->ne[0], 1, p->batch_dims[0], p->batch_dims[1] };
        struct ggml_tensor * bias2 = tbo_new_tensor(b, GGML_TYPE_F32, 4, bias2_ne);
        out = ggml_add(ctx, out, bias2);
        ggml_set_name(out, "out");
        return out;
    }

    struct ggml_tensor * gates = tbo_new_tensor_3d(b, p->type, p->k, p->n, p->n_mats);
    struct ggml_tensor * ups   = tbo_new_tensor_3d(b, p->type, p->k, p->n, p->n_mats);
    struct ggml_tensor * ids   = tbo_new_tensor_2d(b, GGML_TYPE_I32, p->n_mats, p->m);
    if (p->n_used != p->n_mats) {
        ids = ggml_view_2d(ctx, ids, p->n_used, p->m, ids->nb[1], 0);
    }
    struct ggml_tensor * cur = tbo_new_tensor_3d(b, GGML_TYPE_F32, p->k, p->b ? 1 : p->n_used, p->m);
    ggml_set_name(cur, "cur");

    struct ggml_tensor * ffn_up   = id_lane(b, p, ups, cur, ids);
    struct ggml_tensor * ffn_gate = p->with_gate ? id_lane(b, p, gates, cur, ids) : NULL;
    struct ggml_tensor * out = p->with_gate ? ggml_glu_split(ctx, ffn_gate, ffn_up, p->glu_op) : ffn_up;

    const int64_t scale_ne[4] = { 1, out->ne[1], out->ne[2], out->ne[3] };
    struct ggml_tensor * scale = tbo_new_tensor(b, out->type, 4, scale_ne);
    out = ggml_mul(ctx, out, scale);
    ggml_set_name(out, "out");
    return out;
}

static void vec_fusion_init(const struct tbo_case * c, struct ggml_context * ctx, struct tbo_rng * rng) {
    const struct vec_fusion_params * p = c->p;
    if (!p->use_id) {
        tbo_init_all_uniform(rng, ctx, -1.0f, 1.0f);
    } else {
        tbo_init_mul_mat_id(rng, ctx, p->n_mats);
    }
}

static double vec_fusion_max_err(const struct tbo_case * c) {
    (void) c;
    return 5e-3;
}

static const char * vec_fusion_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c; (void) out;
    return "MUL_MAT_VEC_FUSION";
}

static const struct tbo_case_class vec_fusion_class = {
    .name            = "mul_mat_vec_fusion",
    .build           = vec_fusion_build,
    .init            = vec_fusion_init,
    .max_err         = vec_fusion_max_err,
    .op_desc         = vec_fusion_desc,
    .run_whole_graph = always,
};

void tbo_add_mul_mat_vec_fusion(struct tbo_case_list * l, enum ggml_type type, enum ggml_glu_op glu_op, int64_t m, int64_t n,
                                int64_t k, bool use_id, int n_mats, int n_used, bool b, bool with_bias, bool with_gate,
                                bool with_lane_scale, const int64_t batch_dims[2]) {
    if (use_id) {
        GGML_ASSERT(n_used <= n_mats);
    }
    const struct vec_fusion_params p = {
        .type = type, .glu_op = glu_op, .m = m, .n = n, .k = k, .use_id = use_id, .n_mats = n_mats, .n_used = n_used,
        .b = b, .with_bias = with_bias, .with_gate = with_gate, .with_lane_scale = with_lane_scale,
        .batch_dims = { batch_dims[0], batch_dims[1] },
    };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_i64(&s, "glu_op", glu_op);
    tbo_var_i64(&s, "m", m);
    tbo_var_i64(&s, "n", n);
    tbo_var_i64(&s, "k", k);
    tbo_var_i64(&s, "use_id", use_id);
    tbo_var_i64(&s, "n_mats", n_mats);
    tbo_var_i64(&s, "n_used", n_used);
    tbo_var_i64(&s, "b", b);
    tbo_var_i64(&s, "with_bias", with_bias);
    tbo_var_i64(&s, "with_gate", with_gate);
    tbo_var_i64(&s, "with_lane_scale", with_lane_scale);
    tbo_var_arr(&s, "batch_dims", batch_dims, 2);
    tbo_case_add(l, &vec_fusion_class, &p, sizeof(p), &s);
}
