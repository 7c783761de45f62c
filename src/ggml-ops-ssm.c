// ggml-ops-ssm.c: constructors of the recurrent (state-space and linear
// attention) ops: ssm_conv and ssm_scan (Mamba), rwkv_wkv6 and rwkv_wkv7
// (RWKV), gated_linear_attn (GLA) and gated_delta_net (Gated DeltaNet, KDA).
//
// Each consumes a batch of tokens and the recurrent state they start from and
// returns one F32 tensor holding the per-token outputs followed by the state
// after the batch (ssm_scan and gated_delta_net: followed by K snapshots of
// the state, the most recent first), in upstream's layouts, so that callers
// take the parts with views.

#include "ggml-impl.h"

// sx [d_conv - 1 + n_t, d_inner, n_s] (past and new inputs of each channel),
// c [d_conv, d_inner] -> [d_inner, n_t, n_s]: a sliding dot product per channel
struct ggml_tensor * ggml_ssm_conv(struct ggml_context * ctx, struct ggml_tensor * sx, struct ggml_tensor * c) {
    GGML_ASSERT(ggml_is_3d(sx));
    GGML_ASSERT(ggml_is_matrix(c));

    const int64_t d_conv  = c->ne[0];
    const int64_t d_inner = c->ne[1];
    const int64_t n_t     = sx->ne[0] - d_conv + 1;
    const int64_t n_s     = sx->ne[2];
    GGML_ASSERT(sx->ne[1] == d_inner);
    GGML_ASSERT(n_t >= 0);

    struct ggml_tensor * result = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, d_inner, n_t, n_s);
    result->op     = GGML_OP_SSM_CONV;
    result->src[0] = sx;
    result->src[1] = c;
    return result;
}

// s [d_state, head_dim, n_head, n_rs] (states, rows picked by ids), x [head_dim,
// n_head, n_tokens, n_seqs], dt [n_head, n_tokens, n_seqs], A [d_state or 1,
// n_head], B and C [d_state, n_group, n_tokens, n_seqs], ids I32 [n_seqs].
// Result (1-d): y like x, then K state snapshots [d_state, head_dim, n_head,
// n_seqs]. op_params[0]: K. A per-state A (Mamba-1) needs K == 1.
struct ggml_tensor * ggml_ssm_scan(struct ggml_context * ctx, struct ggml_tensor * s, struct ggml_tensor * x,
                                   struct ggml_tensor * dt, struct ggml_tensor * A, struct ggml_tensor * B,
                                   struct ggml_tensor * C, struct ggml_tensor * ids, int64_t K) {
    GGML_ASSERT(K >= 1 && K <= INT32_MAX);
    GGML_ASSERT(ggml_is_contiguous(s));
    GGML_ASSERT(ggml_is_contiguous(dt));
    GGML_ASSERT(ggml_is_contiguous(A));
    GGML_ASSERT(x->nb[0] == ggml_type_size(x->type));
    GGML_ASSERT(B->nb[0] == ggml_type_size(B->type));
    GGML_ASSERT(C->nb[0] == ggml_type_size(C->type));
    GGML_ASSERT(x->nb[1] == x->ne[0]*x->nb[0]);
    GGML_ASSERT(B->nb[1] == B->ne[0]*B->nb[0]);
    GGML_ASSERT(C->nb[1] == C->ne[0]*C->nb[0]);
    GGML_ASSERT(ggml_are_same_shape(B, C));
    GGML_ASSERT(ids->type == GGML_TYPE_I32);

    const int64_t d_state = s->ne[0], head_dim = x->ne[0], n_head = x->ne[1];
    const int64_t n_tokens = x->ne[2], n_seqs = x->ne[3];
    GGML_ASSERT(dt->ne[0] == n_head && dt->ne[1] == n_tokens && dt->ne[2] == n_seqs && ggml_is_3d(dt));
    GGML_ASSERT(s->ne[1] == head_dim && s->ne[2] == n_head);
    GGML_ASSERT(B->ne[0] == d_state && B->ne[2] == n_tokens && B->ne[3] == n_seqs);
    GGML_ASSERT(ids->ne[0] == n_seqs && ggml_is_vector(ids));
    GGML_ASSERT(A->ne[1] == n_head && ggml_is_matrix(A));
    if (A->ne[0] != 1) {
        GGML_ASSERT(A->ne[0] == d_state);
        GGML_ASSERT(K == 1);
    }

    struct ggml_tensor * result = ggml_new_tensor_1d(ctx, GGML_TYPE_F32,
                                                     ggml_nelements(x) + K * d_state * head_dim * n_head * n_seqs);
    ggml_set_op_params_i32(result, 0, (int32_t) K);
    result->op     = GGML_OP_SSM_SCAN;
    result->src[0] = s;
    result->src[1] = x;
    result->src[2] = dt;
    result->src[3] = A;
    result->src[4] = B;
    result->src[5] = C;
    result->src[6] = ids;
    return result;
}

// the shared checks and result of the RWKV-style ops: every per-token input
// [S, H, n_tokens], state S*S*H values per sequence; result [S*H, n_tokens + S*n_seqs]
static struct ggml_tensor * wkv_result(struct ggml_context * ctx, struct ggml_tensor * const * tok, int n_tok,
                                       struct ggml_tensor * state) {
    const struct ggml_tensor * k = tok[0];
    const int64_t S = k->ne[0], H = k->ne[1], n_tokens = k->ne[2];
    const int64_t n_seqs = state->ne[1];
    for (int i = 0; i < n_tok; i++) {
        GGML_ASSERT(ggml_is_contiguous(tok[i]));
        GGML_ASSERT(tok[i]->ne[0] == S && tok[i]->ne[1] == H && tok[i]->ne[2] == n_tokens);
    }
    GGML_ASSERT(ggml_is_contiguous(state));
    GGML_ASSERT(ggml_nelements(state) == S * S * H * n_seqs);

    const int64_t ne[4] = { S * H, n_tokens + S * n_seqs, 1, 1 };
    return ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
}

// RWKV v6: tf [S, H] (time_first), td per token (time_decay)
struct ggml_tensor * ggml_rwkv_wkv6(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v,
                                    struct ggml_tensor * r, struct ggml_tensor * tf, struct ggml_tensor * td,
                                    struct ggml_tensor * state) {
    struct ggml_tensor * const tok[4] = { k, v, r, td };
    GGML_ASSERT(ggml_is_contiguous(tf));
    struct ggml_tensor * result = wkv_result(ctx, tok, 4, state);
    result->op     = GGML_OP_RWKV_WKV6;
    result->src[0] = k;
    result->src[1] = v;
    result->src[2] = r;
    result->src[3] = tf;
    result->src[4] = td;
    result->src[5] = state;
    return result;
}

// GLA: op_params[0] scale (applied to q)
struct ggml_tensor * ggml_gated_linear_attn(struct ggml_context * ctx, struct ggml_tensor * k, struct ggml_tensor * v,
                                            struct ggml_tensor * q, struct ggml_tensor * g, struct ggml_tensor * state,
                                            float scale) {
    struct ggml_tensor * const tok[4] = { k, v, q, g };
    struct ggml_tensor * result = wkv_result(ctx, tok, 4, state);
    ggml_set_op_params_f32(result, 0, scale);
    result->op     = GGML_OP_GATED_LINEAR_ATTN;
    result->src[0] = k;
    result->src[1] = v;
    result->src[2] = q;
    result->src[3] = g;
    result->src[4] = state;
    return result;
}

// RWKV v7
struct ggml_tensor * ggml_rwkv_wkv7(struct ggml_context * ctx, struct ggml_tensor * r, struct ggml_tensor * w,
                                    struct ggml_tensor * k, struct ggml_tensor * v, struct ggml_tensor * a,
                                    struct ggml_tensor * b, struct ggml_tensor * state) {
    struct ggml_tensor * const tok[6] = { k, r, w, v, a, b };
    struct ggml_tensor * result = wkv_result(ctx, tok, 6, state);
    result->op     = GGML_OP_RWKV_WKV7;
    result->src[0] = r;
    result->src[1] = w;
    result->src[2] = k;
    result->src[3] = v;
    result->src[4] = a;
    result->src[5] = b;
    result->src[6] = state;
    return result;
}

// Gated DeltaNet: q, k [S, H_k, n_tokens, n_seqs] (rows contiguous), v [S, H,
// n_tokens, n_seqs], g [1 or S, H, n_tokens, n_seqs], beta [1, H, n_tokens,
// n_seqs], state [S, S, H, n_seqs]. Result [S*H, n_tokens*n_seqs + K*S*n_seqs]:
// outputs, then K state snapshots. op_params[0]: K.
struct ggml_tensor * ggml_gated_delta_net(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                          struct ggml_tensor * v, struct ggml_tensor * g, struct ggml_tensor * beta,
                                          struct ggml_tensor * state, int64_t K) {
    GGML_ASSERT(ggml_is_contiguous_rows(q));
    GGML_ASSERT(ggml_is_contiguous_rows(k));
    GGML_ASSERT(ggml_is_contiguous_rows(v));
    GGML_ASSERT(ggml_is_contiguous(g));
    GGML_ASSERT(ggml_is_contiguous(beta));
    GGML_ASSERT(ggml_is_contiguous(state));
    GGML_ASSERT(q->type == GGML_TYPE_F32 && k->type == GGML_TYPE_F32 && v->type == GGML_TYPE_F32);
    GGML_ASSERT(g->type == GGML_TYPE_F32 && beta->type == GGML_TYPE_F32 && state->type == GGML_TYPE_F32);

    const int64_t S = v->ne[0], H = v->ne[1], n_tokens = v->ne[2], n_seqs = v->ne[3];
    GGML_ASSERT(g->ne[0] == 1 || g->ne[0] == S);
    GGML_ASSERT(beta->ne[0] == 1);
    GGML_ASSERT(state->ne[0] == S && state->ne[1] == S && state->ne[2] == H && state->ne[3] == n_seqs);
    GGML_ASSERT(K >= 1);

    const int64_t ne[4] = { S * H, n_tokens * n_seqs + K * S * n_seqs, 1, 1 };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    ggml_set_op_params_i32(result, 0, (int32_t) K);
    result->op     = GGML_OP_GATED_DELTA_NET;
    result->src[0] = q;
    result->src[1] = k;
    result->src[2] = v;
    result->src[3] = g;
    result->src[4] = beta;
    result->src[5] = state;
    return result;
}
