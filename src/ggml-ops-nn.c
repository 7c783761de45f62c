// ggml-ops-nn.c: constructors of the neural-network operations: row
// normalisations, matrix products, softmax, rotary position embedding,
// sorting and top-k, fused attention.
//
// Each op documents its op_params layout; the backends read them as written.

#include "ggml-impl.h"

static struct ggml_tensor * elementwise_result(struct ggml_context * ctx, struct ggml_tensor * a, bool inplace) {
    return inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
}

//
// normalisation along rows: op_params[0] is eps (float)
//

static struct ggml_tensor * norm_op(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a, float eps, bool inplace) {
    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    ggml_set_op_params_f32(result, 0, eps);
    result->op     = op;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op(ctx, GGML_OP_NORM, a, eps, false);
}

struct ggml_tensor * ggml_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op(ctx, GGML_OP_NORM, a, eps, true);
}

struct ggml_tensor * ggml_rms_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op(ctx, GGML_OP_RMS_NORM, a, eps, false);
}

struct ggml_tensor * ggml_rms_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op(ctx, GGML_OP_RMS_NORM, a, eps, true);
}

struct ggml_tensor * ggml_l2_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op(ctx, GGML_OP_L2_NORM, a, eps, false);
}

struct ggml_tensor * ggml_l2_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return norm_op(ctx, GGML_OP_L2_NORM, a, eps, true);
}

//
// matrix products
//

// same row length, and t0's matrices broadcast over t1's dims 2 and 3
static bool ggml_can_mul_mat(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return t0->ne[0] == t1->ne[0] &&
           t1->ne[2] % t0->ne[2] == 0 &&
           t1->ne[3] % t0->ne[3] == 0;
}

// same column count, and t0 broadcasts over t1's dims 2 and 3
static bool ggml_can_out_prod(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return t0->ne[1] == t1->ne[1] &&
           t1->ne[2] % t0->ne[2] == 0 &&
           t1->ne[3] % t0->ne[3] == 0;
}

// op_params (int32): [0] precision (ggml_mul_mat_set_prec), [1] hint
struct ggml_tensor * ggml_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_can_mul_mat(a, b));
    GGML_ASSERT(!ggml_is_transposed(a));

    const int64_t ne[4] = { a->ne[1], b->ne[1], b->ne[2], b->ne[3] };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    result->op     = GGML_OP_MUL_MAT;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

void ggml_mul_mat_set_prec(struct ggml_tensor * a, enum ggml_prec prec) {
    GGML_ASSERT(a->op == GGML_OP_MUL_MAT);
    ggml_set_op_params_i32(a, 0, (int32_t) prec);
}

void ggml_mul_mat_set_hint(struct ggml_tensor * a, enum ggml_op_hint hint) {
    GGML_ASSERT(a->op == GGML_OP_MUL_MAT);
    ggml_set_op_params_i32(a, 1, (int32_t) hint);
}

// as: [k, n, n_expert], b: [k, n_used or a divisor of it, n_tokens],
// ids: I32 [n_used, n_tokens] -> [n, n_used, n_tokens]
struct ggml_tensor * ggml_mul_mat_id(struct ggml_context * ctx, struct ggml_tensor * as, struct ggml_tensor * b,
                                     struct ggml_tensor * ids) {
    GGML_ASSERT(!ggml_is_transposed(as));
    GGML_ASSERT(ids->type == GGML_TYPE_I32);

    GGML_ASSERT(as->ne[3] == 1);
    GGML_ASSERT(b->ne[3] == 1);
    GGML_ASSERT(ids->ne[2] == 1 && ids->ne[3] == 1);
    GGML_ASSERT(ids->ne[1] == b->ne[2]);
    GGML_ASSERT(as->ne[0] == b->ne[0]);
    GGML_ASSERT(ids->ne[0] % b->ne[1] == 0);

    const int64_t ne[4] = { as->ne[1], ids->ne[0], b->ne[2], 1 };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    result->op     = GGML_OP_MUL_MAT_ID;
    result->src[0] = as;
    result->src[1] = b;
    result->src[2] = ids;
    return result;
}

// a: [m, n, ne2, ne3], b: [p, n, ne2*x, ne3*y] -> [m, p, ne2*x, ne3*y]
struct ggml_tensor * ggml_out_prod(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_ASSERT(ggml_can_out_prod(a, b));
    GGML_ASSERT(!ggml_is_transposed(a));

    const int64_t ne[4] = { a->ne[0], b->ne[0], b->ne[2], b->ne[3] };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    result->op     = GGML_OP_OUT_PROD;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

//
// softmax: op_params (float) scale, max_bias; src[1] the mask, src[2] the sinks
//

static struct ggml_tensor * soft_max_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask,
                                        float scale, float max_bias, bool inplace) {
    GGML_ASSERT(ggml_is_contiguous(a));

    if (mask != NULL) {
        GGML_ASSERT(mask->type == GGML_TYPE_F16 || mask->type == GGML_TYPE_F32);
        GGML_ASSERT(ggml_is_contiguous(mask));
        GGML_ASSERT(mask->ne[0] == a->ne[0]);
        GGML_ASSERT(mask->ne[1] >= a->ne[1]);
        GGML_ASSERT(a->ne[2]%mask->ne[2] == 0);
        GGML_ASSERT(a->ne[3]%mask->ne[3] == 0);
    }

    // ALiBi slopes scale the mask: without one there is nothing to bias
    if (max_bias > 0.0f) {
        GGML_ASSERT(mask);
    }

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);
    ggml_set_op_params_f32(result, 0, scale);
    ggml_set_op_params_f32(result, 1, max_bias);
    result->op     = GGML_OP_SOFT_MAX;
    result->src[0] = a;
    result->src[1] = mask;
    return result;
}

struct ggml_tensor * ggml_soft_max(struct ggml_context * ctx, struct ggml_tensor * a) {
    return soft_max_op(ctx, a, NULL, 1.0f, 0.0f, false);
}

struct ggml_tensor * ggml_soft_max_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return soft_max_op(ctx, a, NULL, 1.0f, 0.0f, true);
}

struct ggml_tensor * ggml_soft_max_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask,
                                       float scale, float max_bias) {
    return soft_max_op(ctx, a, mask, scale, max_bias, false);
}

struct ggml_tensor * ggml_soft_max_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask,
                                               float scale, float max_bias) {
    return soft_max_op(ctx, a, mask, scale, max_bias, true);
}

// sinks == NULL removes them (from any tensor, as upstream)
void ggml_soft_max_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks) {
    if (sinks == NULL) {
        a->src[2] = NULL;
        return;
    }

    GGML_ASSERT(a->op == GGML_OP_SOFT_MAX);
    GGML_ASSERT(a->src[2] == NULL);
    GGML_ASSERT(a->src[0]->ne[2] == sinks->ne[0]);
    GGML_ASSERT(sinks->type == GGML_TYPE_F32);

    a->src[2] = sinks;
}

//
// rotary position embedding
//
// src[0] a, src[1] positions, src[2] frequency factors (optional)
// op_params, 16 int32 slots:
//   [0] n_past (0)  [1] n_dims  [2] mode  [3] n_ctx (0)  [4] n_ctx_orig
//   [5] freq_base  [6] freq_scale  [7] ext_factor  [8] attn_factor
//   [9] beta_fast  [10] beta_slow (floats)
//   [11..14] sections (multi-section modes only, else 0)
//   [15] n_offs (ggml_rope_set_offset)
//

struct rope_params {
    int   n_dims;
    int * sections; // GGML_MROPE_SECTIONS entries, or NULL
    int   mode;
    int   n_ctx_orig;
    float freq_base;
    float freq_scale;
    float ext_factor;
    float attn_factor;
    float beta_fast;
    float beta_slow;
};

static struct ggml_tensor * rope_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                    struct ggml_tensor * c, const struct rope_params * p, bool inplace) {
    const int n_dims = p->n_dims;
    const int mode   = p->mode;

    GGML_ASSERT((mode & 1) == 0 && "mode & 1 == 1 is no longer supported");

    GGML_ASSERT(ggml_is_vector(b));
    GGML_ASSERT(b->type == GGML_TYPE_I32);

    const bool multi_section = (mode & GGML_ROPE_TYPE_MROPE) != 0;
    if (multi_section) {
        GGML_ASSERT(a->ne[2] * 4 == b->ne[0]); // four position ids per token
    } else {
        GGML_ASSERT(a->ne[2] == b->ne[0]);
    }

    if (c != NULL) {
        GGML_ASSERT(c->type == GGML_TYPE_F32);
        GGML_ASSERT(c->ne[0] >= n_dims / 2);
    }

    struct ggml_tensor * result = elementwise_result(ctx, a, inplace);

    int32_t params[16] = { 0 };
    params[1] = n_dims;
    params[2] = mode;
    params[4] = p->n_ctx_orig;
    memcpy(params +  5, &p->freq_base,   sizeof(float));
    memcpy(params +  6, &p->freq_scale,  sizeof(float));
    memcpy(params +  7, &p->ext_factor,  sizeof(float));
    memcpy(params +  8, &p->attn_factor, sizeof(float));
    memcpy(params +  9, &p->beta_fast,   sizeof(float));
    memcpy(params + 10, &p->beta_slow,   sizeof(float));
    if (multi_section && p->sections != NULL) {
        for (int i = 0; i < GGML_MROPE_SECTIONS; i++) {
            params[11 + i] = p->sections[i];
        }
    }
    ggml_set_op_params(result, params, sizeof(params));

    result->op     = GGML_OP_ROPE;
    result->src[0] = a;
    result->src[1] = b;
    result->src[2] = c;
    return result;
}

// plain RoPE: base 10000, no scaling
static struct rope_params rope_params_plain(int n_dims, int mode) {
    return (struct rope_params) {
        .n_dims      = n_dims,
        .sections    = NULL,
        .mode        = mode,
        .n_ctx_orig  = 0,
        .freq_base   = 10000.0f,
        .freq_scale  = 1.0f,
        .ext_factor  = 0.0f,
        .attn_factor = 1.0f,
        .beta_fast   = 0.0f,
        .beta_slow   = 0.0f,
    };
}

static struct rope_params rope_params_ext(int n_dims, int * sections, int mode, int n_ctx_orig,
                                          float freq_base, float freq_scale, float ext_factor,
                                          float attn_factor, float beta_fast, float beta_slow) {
    return (struct rope_params) {
        .n_dims      = n_dims,
        .sections    = sections,
        .mode        = mode,
        .n_ctx_orig  = n_ctx_orig,
        .freq_base   = freq_base,
        .freq_scale  = freq_scale,
        .ext_factor  = ext_factor,
        .attn_factor = attn_factor,
        .beta_fast   = beta_fast,
        .beta_slow   = beta_slow,
    };
}

struct ggml_tensor * ggml_rope(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                               int n_dims, int mode) {
    const struct rope_params p = rope_params_plain(n_dims, mode);
    return rope_op(ctx, a, b, NULL, &p, false);
}

struct ggml_tensor * ggml_rope_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                       int n_dims, int mode) {
    const struct rope_params p = rope_params_plain(n_dims, mode);
    return rope_op(ctx, a, b, NULL, &p, true);
}

struct ggml_tensor * ggml_rope_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                   struct ggml_tensor * c, int n_dims, int mode, int n_ctx_orig,
                                   float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                   float beta_fast, float beta_slow) {
    const struct rope_params p = rope_params_ext(n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale,
                                                 ext_factor, attn_factor, beta_fast, beta_slow);
    return rope_op(ctx, a, b, c, &p, false);
}

struct ggml_tensor * ggml_rope_ext_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                           struct ggml_tensor * c, int n_dims, int mode, int n_ctx_orig,
                                           float freq_base, float freq_scale, float ext_factor, float attn_factor,
                                           float beta_fast, float beta_slow) {
    const struct rope_params p = rope_params_ext(n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale,
                                                 ext_factor, attn_factor, beta_fast, beta_slow);
    return rope_op(ctx, a, b, c, &p, true);
}

struct ggml_tensor * ggml_rope_multi(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     struct ggml_tensor * c, int n_dims, int sections[GGML_MROPE_SECTIONS], int mode,
                                     int n_ctx_orig, float freq_base, float freq_scale, float ext_factor,
                                     float attn_factor, float beta_fast, float beta_slow) {
    const struct rope_params p = rope_params_ext(n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                                                 ext_factor, attn_factor, beta_fast, beta_slow);
    return rope_op(ctx, a, b, c, &p, false);
}

struct ggml_tensor * ggml_rope_multi_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                             struct ggml_tensor * c, int n_dims, int sections[GGML_MROPE_SECTIONS],
                                             int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                             float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const struct rope_params p = rope_params_ext(n_dims, sections, mode, n_ctx_orig, freq_base, freq_scale,
                                                 ext_factor, attn_factor, beta_fast, beta_slow);
    return rope_op(ctx, a, b, c, &p, true);
}

struct ggml_tensor * ggml_rope_custom(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                      float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const struct rope_params p = rope_params_ext(n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale,
                                                 ext_factor, attn_factor, beta_fast, beta_slow);
    return rope_op(ctx, a, b, NULL, &p, false);
}

struct ggml_tensor * ggml_rope_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                              int n_dims, int mode, int n_ctx_orig, float freq_base, float freq_scale,
                                              float ext_factor, float attn_factor, float beta_fast, float beta_slow) {
    const struct rope_params p = rope_params_ext(n_dims, NULL, mode, n_ctx_orig, freq_base, freq_scale,
                                                 ext_factor, attn_factor, beta_fast, beta_slow);
    return rope_op(ctx, a, b, NULL, &p, true);
}

// The dimension whose wavelength makes n_rot turns over n_ctx_orig positions:
// solving n_ctx_orig = n_rot * 2*pi * base^(2*dim/n_dims) for dim. Evaluated
// in float and in this order, so that the correction range matches upstream's
// bit for bit.
static float rope_yarn_corr_dim(int n_dims, int n_ctx_orig, float n_rot, float base) {
    return n_dims * logf(n_ctx_orig / (n_rot * 2 * (float) M_PI)) / (2 * logf(base));
}

void ggml_rope_yarn_corr_dims(int n_dims, int n_ctx_orig, float freq_base, float beta_fast, float beta_slow, float dims[2]) {
    const float start = floorf(rope_yarn_corr_dim(n_dims, n_ctx_orig, beta_fast, freq_base));
    const float end   = ceilf (rope_yarn_corr_dim(n_dims, n_ctx_orig, beta_slow, freq_base));
    dims[0] = MAX(0, start);
    dims[1] = MIN(n_dims - 1, end);
}

struct ggml_tensor * ggml_rope_set_offset(struct ggml_tensor * a, int n_offs) {
    GGML_ASSERT(a->op == GGML_OP_ROPE || a->op == GGML_OP_ROPE_BACK);
    GGML_ASSERT(n_offs >= 0);

    const int32_t mode = ggml_get_op_params_i32(a, 2);
    GGML_ASSERT(mode != GGML_ROPE_TYPE_VISION);

    ggml_set_op_params_i32(a, 15, n_offs);
    return a;
}

//
// sorting
//

// op_params[0]: the order
struct ggml_tensor * ggml_argsort(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_sort_order order) {
    GGML_ASSERT(a->ne[0] <= INT32_MAX);

    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_I32, GGML_MAX_DIMS, a->ne);
    ggml_set_op_params_i32(result, 0, (int32_t) order);
    result->op     = GGML_OP_ARGSORT;
    result->src[0] = a;
    return result;
}

// a view of the first k columns of a descending argsort
struct ggml_tensor * ggml_argsort_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k) {
    GGML_ASSERT(a->ne[0] >= k);

    struct ggml_tensor * sorted = ggml_argsort(ctx, a, GGML_SORT_ORDER_DESC);
    return ggml_view_4d(ctx, sorted, k, sorted->ne[1], sorted->ne[2], sorted->ne[3],
                        sorted->nb[1], sorted->nb[2], sorted->nb[3], 0);
}

struct ggml_tensor * ggml_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k) {
    GGML_ASSERT(a->ne[0] >= k);

    struct ggml_tensor * result = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, k, a->ne[1], a->ne[2], a->ne[3]);
    result->op     = GGML_OP_TOP_K;
    result->src[0] = a;
    return result;
}

//
// fused attention
//
// src: [0] q, [1] k, [2] v, [3] mask (optional), [4] sinks (optional)
// op_params: [0] scale, [1] max_bias, [2] logit_softcap (float), [3] precision (int32)
//

struct ggml_tensor * ggml_flash_attn_ext(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                         struct ggml_tensor * v, struct ggml_tensor * mask,
                                         float scale, float max_bias, float logit_softcap) {
    GGML_ASSERT(ggml_can_mul_mat(k, q));

    GGML_ASSERT(q->ne[3] == k->ne[3]);
    GGML_ASSERT(q->ne[3] == v->ne[3]);

    if (mask != NULL) {
        GGML_ASSERT(mask->type == GGML_TYPE_F16);
        GGML_ASSERT(ggml_is_contiguous(mask));
        GGML_ASSERT(q->ne[2] % mask->ne[2] == 0);
        GGML_ASSERT(q->ne[3] % mask->ne[3] == 0);
    }

    if (max_bias > 0.0f) {
        GGML_ASSERT(mask);
    }

    // heads and batch swap places: [n_embd_v, n_head, n_batch, ne3]
    const int64_t ne[4] = { v->ne[0], q->ne[2], q->ne[1], q->ne[3] };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);

    ggml_set_op_params_f32(result, 0, scale);
    ggml_set_op_params_f32(result, 1, max_bias);
    ggml_set_op_params_f32(result, 2, logit_softcap);
    result->op     = GGML_OP_FLASH_ATTN_EXT;
    result->src[0] = q;
    result->src[1] = k;
    result->src[2] = v;
    result->src[3] = mask;
    return result;
}

void ggml_flash_attn_ext_set_prec(struct ggml_tensor * a, enum ggml_prec prec) {
    GGML_ASSERT(a->op == GGML_OP_FLASH_ATTN_EXT);
    ggml_set_op_params_i32(a, 3, (int32_t) prec);
}

enum ggml_prec ggml_flash_attn_ext_get_prec(const struct ggml_tensor * a) {
    GGML_ASSERT(a->op == GGML_OP_FLASH_ATTN_EXT);
    return (enum ggml_prec) ggml_get_op_params_i32(a, 3);
}

// sinks == NULL removes them (from any tensor, as upstream)
void ggml_flash_attn_ext_add_sinks(struct ggml_tensor * a, struct ggml_tensor * sinks) {
    if (sinks == NULL) {
        a->src[4] = NULL;
        return;
    }

    GGML_ASSERT(a->op == GGML_OP_FLASH_ATTN_EXT);
    GGML_ASSERT(a->src[4] == NULL);
    GGML_ASSERT(a->src[0]->ne[2] == sinks->ne[0]);
    GGML_ASSERT(sinks->type == GGML_TYPE_F32);

    a->src[4] = sinks;
}
