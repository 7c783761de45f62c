// graph.c: building the decoder graph of one batch, for every architecture:
// the tensors a layer has and the few flags of its run_arch decide the steps.

#include "graph.h"

#include <math.h>

size_t run_graph_max_nodes(const struct run_model * model) {
    // about 40 tensors per layer with views, experts adding a few per used
    // one; generous so that no count limits a model
    return (size_t) ((80 + 4 * model->hp.n_expert_used) * model->hp.n_layer + 128);
}

size_t run_graph_ctx_size(const struct run_model * model) {
    const size_t n = run_graph_max_nodes(model);
    return n * ggml_tensor_overhead() + ggml_graph_overhead_custom(n, false);
}

static struct ggml_tensor * rms_norm_scaled(struct ggml_context * ctx, struct ggml_tensor * x,
                                            struct ggml_tensor * weight, float eps) {
    return ggml_mul(ctx, ggml_rms_norm(ctx, x, eps), weight);
}

// sliding-window layers have their own RoPE base and no scaling (Gemma 3)
static struct ggml_tensor * rope(struct ggml_context * ctx, const struct run_model * model, int64_t il,
                                 struct ggml_tensor * x, struct ggml_tensor * positions) {
    const struct run_hparams * hp = &model->hp;
    const bool swa = run_layer_is_swa(hp, il);
    return ggml_rope_ext(ctx, x, positions, model->rope_freqs, (int) hp->n_rot, hp->arch->rope_type,
                         (int) hp->n_ctx_train, swa ? hp->arch->rope_base_swa : hp->rope_freq_base,
                         swa ? 1.0f : hp->rope_freq_scale, 0.0f, 1.0f, 0.0f, 0.0f);
}

// cells 0 .. n_kv - 1 of a cache (as write_cache returned it), as [head_dim, n_kv, n_head_kv]
static struct ggml_tensor * cache_view(struct ggml_context * ctx, const struct run_model * model,
                                       struct ggml_tensor * cache, int64_t n_kv) {
    const int64_t head_dim = model->hp.head_dim;
    struct ggml_tensor * v = ggml_view_3d(ctx, cache, head_dim, model->hp.n_head_kv, n_kv,
                                          ggml_row_size(cache->type, head_dim), cache->nb[1], 0);
    return ggml_permute(ctx, v, 0, 2, 1, 3);
}

// Writes rows [n_embd_kv, n_tokens] into the cache; returns the tensor to read
// the cache through. set_rows gives a result the reads depend on; a copy is
// put in the graph now, before any read is built, and the reads use the
// cache itself.
static struct ggml_tensor * write_cache(struct ggml_context * ctx, struct ggml_cgraph * gf, const struct run_kv_cache * kv,
                                        struct ggml_tensor * cache, int64_t il, struct ggml_tensor * rows,
                                        const struct run_graph_shape * shape, const struct run_graph_inputs * in) {
    if (kv->write[il] == RUN_KV_WRITE_SET_ROWS) {
        return ggml_set_rows(ctx, cache, rows, in->cells);
    }
    struct ggml_tensor * cells = ggml_view_2d(ctx, cache, cache->ne[0], shape->n_tokens, cache->nb[1],
                                              (size_t) shape->n_past * cache->nb[1]);
    ggml_build_forward_expand(gf, ggml_cpy(ctx, rows, cells));
    return cache;
}

// q: [head_dim, n_head, n_tokens]; k_cur: [head_dim, n_head_kv, n_tokens]; v_cur: [n_embd_kv, n_tokens]
// returns [n_head * head_dim, n_tokens]
static struct ggml_tensor * attention(struct ggml_context * ctx, struct ggml_cgraph * gf, const struct run_model * model,
                                      const struct run_kv_cache * kv, int64_t il, const struct run_graph_shape * shape,
                                      const struct run_graph_inputs * in, struct ggml_tensor * q,
                                      struct ggml_tensor * k_cur, struct ggml_tensor * v_cur) {
    const struct run_hparams * hp = &model->hp;
    const int64_t n_tokens  = shape->n_tokens;
    const int64_t n_embd_kv = hp->n_head_kv * hp->head_dim;
    const int64_t n_embd_q  = hp->n_head * hp->head_dim;
    const float   scale     = hp->attn_scale;
    struct ggml_tensor * mask = run_layer_is_swa(hp, il) ? in->mask_swa : in->mask;

    k_cur = ggml_reshape_2d(ctx, k_cur, n_embd_kv, n_tokens);
    struct ggml_tensor * k_all = write_cache(ctx, gf, kv, kv->k[il], il, k_cur, shape, in);
    struct ggml_tensor * v_all = write_cache(ctx, gf, kv, kv->v[il], il, v_cur, shape, in);
    struct ggml_tensor * k = cache_view(ctx, model, k_all, shape->n_kv);
    struct ggml_tensor * v = cache_view(ctx, model, v_all, shape->n_kv);
    q = ggml_permute(ctx, q, 0, 2, 1, 3); // [head_dim, n_tokens, n_head]

    if (shape->flash_attn) {
        struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, mask, scale, 0.0f, 0.0f);
        ggml_flash_attn_ext_set_prec(out, GGML_PREC_F32);
        return ggml_reshape_2d(ctx, out, n_embd_q, n_tokens); // [head_dim, n_head, n_tokens] is contiguous
    }
    struct ggml_tensor * kq = ggml_mul_mat(ctx, k, q);           // [n_kv, n_tokens, n_head]
    kq = ggml_soft_max_ext(ctx, kq, mask, scale, 0.0f);
    struct ggml_tensor * vt = ggml_cont(ctx, ggml_transpose(ctx, v)); // [n_kv, head_dim, n_head_kv]
    struct ggml_tensor * kqv = ggml_mul_mat(ctx, vt, kq);        // [head_dim, n_tokens, n_head]
    return ggml_cont_2d(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3), n_embd_q, n_tokens);
}

// the last column of x: [n_embd, 1]
static struct ggml_tensor * last_token(struct ggml_context * ctx, struct ggml_tensor * x) {
    return ggml_view_2d(ctx, x, x->ne[0], 1, x->nb[1], (size_t) (x->ne[1] - 1) * x->nb[1]);
}

static struct ggml_tensor * add_bias(struct ggml_context * ctx, struct ggml_tensor * x, struct ggml_tensor * b) {
    return b != NULL ? ggml_add(ctx, x, b) : x;
}

// Q [head_dim, n_head, n_tokens], K [head_dim, n_head_kv, n_tokens], V [n_embd_kv, n_tokens]
// from the normed input: separate matrices (with biases where the layer has
// them), or one fused matrix whose rows are Q, then K, then V. The three
// products go into gf one after the other, so that the CPU backend computes
// them as one node (graph-fusion.c; built lazily, the graph would put RoPE
// and the cache writes between them)
static void project_qkv(struct ggml_context * ctx, struct ggml_cgraph * gf, const struct run_hparams * hp,
                        const struct run_layer * l, struct ggml_tensor * cur,
                        struct ggml_tensor ** q, struct ggml_tensor ** k, struct ggml_tensor ** v) {
    const int64_t n_tokens  = cur->ne[1];
    const int64_t n_embd_q  = hp->n_head * hp->head_dim;
    const int64_t n_embd_kv = hp->n_head_kv * hp->head_dim;
    if (l->wqkv != NULL) {
        struct ggml_tensor * qkv = ggml_mul_mat(ctx, l->wqkv, cur);
        const size_t es = ggml_element_size(qkv);
        // Q and K as strided views (RoPE or the norms copy them), V contiguous for the cache
        *q = ggml_view_3d(ctx, qkv, hp->head_dim, hp->n_head, n_tokens, es * (size_t) hp->head_dim, qkv->nb[1], 0);
        *k = ggml_view_3d(ctx, qkv, hp->head_dim, hp->n_head_kv, n_tokens, es * (size_t) hp->head_dim, qkv->nb[1],
                          es * (size_t) n_embd_q);
        *v = ggml_cont(ctx, ggml_view_2d(ctx, qkv, n_embd_kv, n_tokens, qkv->nb[1], es * (size_t) (n_embd_q + n_embd_kv)));
        return;
    }
    struct ggml_tensor * pq = ggml_mul_mat(ctx, l->wq, cur);
    struct ggml_tensor * pk = ggml_mul_mat(ctx, l->wk, cur);
    struct ggml_tensor * pv = ggml_mul_mat(ctx, l->wv, cur);
    ggml_build_forward_expand(gf, pq);
    ggml_build_forward_expand(gf, pk);
    ggml_build_forward_expand(gf, pv);
    *q = ggml_reshape_3d(ctx, add_bias(ctx, pq, l->bq), hp->head_dim, hp->n_head, n_tokens);
    *k = ggml_reshape_3d(ctx, add_bias(ctx, pk, l->bk), hp->head_dim, hp->n_head_kv, n_tokens);
    *v = add_bias(ctx, pv, l->bv);
}

static struct ggml_tensor * glu_split(struct ggml_context * ctx, enum run_ffn_act act, struct ggml_tensor * gate, struct ggml_tensor * up) {
    return act == RUN_ACT_GELU ? ggml_geglu_split(ctx, gate, up) : ggml_swiglu_split(ctx, gate, up);
}

// Routed experts, as llama.cpp's softmax gating: the router's softmax over
// the experts, the n_expert_used most likely, their probabilities
// normalised to sum 1 weighting their outputs. cur: [n_embd, n_tokens]
static struct ggml_tensor * moe_ffn(struct ggml_context * ctx, const struct run_hparams * hp, const struct run_layer * l,
                                    struct ggml_tensor * cur) {
    const int64_t n_tokens = cur->ne[1];
    const int64_t n_used   = hp->n_expert_used;
    struct ggml_tensor * probs    = ggml_soft_max(ctx, ggml_mul_mat(ctx, l->ffn_gate_inp, cur));   // [n_expert, n_tokens]
    struct ggml_tensor * selected = ggml_argsort_top_k(ctx, probs, (int) n_used);                  // [n_used, n_tokens]
    struct ggml_tensor * weights  = ggml_get_rows(ctx, ggml_reshape_3d(ctx, probs, 1, hp->n_expert, n_tokens), selected);
    weights = ggml_reshape_2d(ctx, weights, n_used, n_tokens);
    weights = ggml_div(ctx, weights, ggml_sum_rows(ctx, weights));
    weights = ggml_reshape_3d(ctx, weights, 1, n_used, n_tokens);

    struct ggml_tensor * x    = ggml_reshape_3d(ctx, cur, hp->n_embd, 1, n_tokens);
    struct ggml_tensor * up   = ggml_mul_mat_id(ctx, l->ffn_up_exps, x, selected);    // [n_ff_exp, n_used, n_tokens]
    struct ggml_tensor * gate = ggml_mul_mat_id(ctx, l->ffn_gate_exps, x, selected);
    struct ggml_tensor * out  = ggml_mul_mat_id(ctx, l->ffn_down_exps, glu_split(ctx, hp->arch->act, gate, up), selected);
    out = ggml_mul(ctx, out, weights);                                                     // [n_embd, n_used, n_tokens]
    struct ggml_tensor * sum = NULL;
    for (int64_t i = 0; i < n_used; i++) {
        struct ggml_tensor * e = ggml_view_2d(ctx, out, hp->n_embd, n_tokens, out->nb[2], (size_t) i * out->nb[1]);
        sum = sum == NULL ? e : ggml_add(ctx, sum, e);
    }
    return n_used == 1 ? ggml_cont(ctx, sum) : sum;
}

// cur: the normed input [n_embd, n_tokens]
static struct ggml_tensor * feed_forward(struct ggml_context * ctx, const struct run_hparams * hp, const struct run_layer * l,
                                         struct ggml_tensor * cur) {
    if (l->ffn_gate_inp != NULL) {
        return moe_ffn(ctx, hp, l, cur);
    }
    struct ggml_tensor * up = ggml_mul_mat(ctx, l->ffn_up, cur);
    struct ggml_tensor * act;
    if (l->ffn_gate != NULL) {
        act = glu_split(ctx, hp->arch->act, ggml_mul_mat(ctx, l->ffn_gate, cur), up);
    } else { // gate and up in one matrix: the gate is the first half
        act = hp->arch->act == RUN_ACT_GELU ? ggml_geglu(ctx, up) : ggml_swiglu(ctx, up);
    }
    return ggml_mul_mat(ctx, l->ffn_down, act);
}

static struct ggml_tensor * decoder_layer(struct ggml_context * ctx, struct ggml_cgraph * gf, const struct run_model * model,
                                          const struct run_kv_cache * kv, int64_t il,
                                          const struct run_graph_shape * shape, const struct run_graph_inputs * in,
                                          struct ggml_tensor * x) {
    const struct run_hparams * hp = &model->hp;
    const struct run_layer   * l  = &model->layers[il];
    const int64_t n_tokens = shape->n_tokens;

    struct ggml_tensor * cur = rms_norm_scaled(ctx, x, l->attn_norm, hp->rms_eps);
    struct ggml_tensor * q, * k, * v;
    project_qkv(ctx, gf, hp, l, cur, &q, &k, &v);
    if (l->attn_q_norm != NULL) { // per head
        q = rms_norm_scaled(ctx, q, l->attn_q_norm, hp->rms_eps);
        k = rms_norm_scaled(ctx, k, l->attn_k_norm, hp->rms_eps);
    }
    q = rope(ctx, model, il, q, in->positions);
    k = rope(ctx, model, il, k, in->positions);
    ggml_format_name(q, "q_l%lld", (long long) il);
    ggml_format_name(k, "k_l%lld", (long long) il);

    cur = attention(ctx, gf, model, kv, il, shape, in, q, k, v);
    cur = ggml_mul_mat(ctx, l->wo, cur);
    if (l->attn_post_norm != NULL) {
        cur = rms_norm_scaled(ctx, cur, l->attn_post_norm, hp->rms_eps);
    }

    // only the last token matters after the last layer's attention
    if (il == hp->n_layer - 1 && !shape->all_logits && n_tokens > 1) {
        cur = last_token(ctx, cur);
        x   = last_token(ctx, x);
    }
    struct ggml_tensor * h = ggml_add(ctx, cur, x);

    cur = feed_forward(ctx, hp, l, rms_norm_scaled(ctx, h, l->ffn_norm, hp->rms_eps));
    if (l->ffn_post_norm != NULL) {
        cur = rms_norm_scaled(ctx, cur, l->ffn_post_norm, hp->rms_eps);
    }
    cur = ggml_add(ctx, cur, h);
    ggml_format_name(cur, "l_out_%lld", (long long) il);
    return cur;
}

static bool model_has_swa(const struct run_model * model) {
    for (int64_t il = 0; il < model->hp.n_layer; il++) {
        if (run_layer_is_swa(&model->hp, il)) {
            return true;
        }
    }
    return false;
}

static void graph_make_inputs(struct ggml_context * ctx, const struct run_model * model, const struct run_graph_shape * shape,
                              struct run_graph_inputs * in) {
    in->tokens    = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, shape->n_tokens);
    in->positions = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, shape->n_tokens);
    in->cells     = ggml_new_tensor_1d(ctx, GGML_TYPE_I64, shape->n_tokens);
    in->mask      = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, shape->n_kv, shape->n_tokens);
    in->mask_swa  = model_has_swa(model) ? ggml_new_tensor_2d(ctx, GGML_TYPE_F16, shape->n_kv, shape->n_tokens) : NULL;
    ggml_set_name(in->tokens, "inp_tokens");
    ggml_set_name(in->positions, "inp_pos");
    ggml_set_name(in->cells, "inp_cells");
    ggml_set_name(in->mask, "inp_mask");
    ggml_set_input(in->tokens);
    ggml_set_input(in->positions);
    ggml_set_input(in->cells);
    ggml_set_input(in->mask);
    if (in->mask_swa != NULL) {
        ggml_set_name(in->mask_swa, "inp_mask_swa");
        ggml_set_input(in->mask_swa);
    }
}

struct ggml_cgraph * run_graph_build(struct ggml_context * ctx, const struct run_model * model,
                                     const struct run_kv_cache * kv, const struct run_graph_shape * shape,
                                     struct run_graph_inputs * in) {
    graph_make_inputs(ctx, model, shape, in);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, run_graph_max_nodes(model), false);

    struct ggml_tensor * x = ggml_get_rows(ctx, model->tok_embd, in->tokens);
    if (model->hp.arch->embd_scale) {
        x = ggml_scale(ctx, x, sqrtf((float) model->hp.n_embd));
    }
    ggml_set_name(x, "inp_embd");
    for (int64_t il = 0; il < model->hp.n_layer; il++) {
        x = decoder_layer(ctx, gf, model, kv, il, shape, in, x);
    }
    x = rms_norm_scaled(ctx, x, model->output_norm, model->hp.rms_eps);
    in->logits = ggml_mul_mat(ctx, model->output, x);
    ggml_set_name(in->logits, "logits");
    ggml_set_output(in->logits);

    ggml_build_forward_expand(gf, in->logits);
    return gf;
}
