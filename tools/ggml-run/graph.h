#pragma once

// graph.h: the decoder of every architecture (arch.h) as a ggml graph for
// one batch of tokens.
//
// For tokens at positions n_past .. n_past + n_tokens - 1 of one sequence:
//   x = token_embd[tokens] (times sqrt(n_embd) for Gemma)
//   per layer: h = x + P(Wo · attention(RoPE(N(Wq · n + bq)), RoPE(N(Wk · n + bk)), Wv · n + bv)),
//              n = rms_norm(x) * attn_norm
//              x = h + P(F(m)), m = rms_norm(h) * ffn_norm
//   logits = output · (rms_norm(x) * output_norm)
// where the biases b, the per-head norms N and the post-norms P are there
// when the layer has those tensors; Q, K, V may come from one fused matrix.
// F is W_down · (act(W_gate · m) * (W_up · m)) (act: SiLU or GELU; gate and
// up may be one matrix), or for a model of experts the sum of the chosen
// experts' outputs weighted by the router. RoPE is the architecture's kind
// (adjacent pairs for llama, NeoX halves for the others); sliding-window
// layers use their own base and mask. Attention is grouped-query (head h
// reads key/value head h / (n_head / n_head_kv)), causal, over the cache
// cells 0 .. n_kv - 1, either fused
// (ggml_flash_attn_ext) or as mul_mat / soft_max_ext / mul_mat. The graph
// writes the new keys and values into the cache before reading it: reads
// depend on the ggml_set_rows result, or follow the ggml_cpy in graph order.

#include "kv-cache.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

struct run_graph_inputs {
    struct ggml_tensor * tokens;     // I32 [n_tokens]
    struct ggml_tensor * positions;  // I32 [n_tokens]
    struct ggml_tensor * cells;      // I64 [n_tokens]: cache cell of each token
    struct ggml_tensor * mask;       // F16 [n_kv, n_tokens]: 0 where a token may look, -inf elsewhere
    struct ggml_tensor * mask_swa;   // the same for sliding-window layers (NULL when the model has none)
    struct ggml_tensor * logits;     // F32 [n_vocab, n_outputs]: the result
};

struct run_graph_shape {
    int64_t n_past;        // tokens already in the cache: the new ones go to cells n_past, n_past + 1, ...
    int64_t n_tokens;
    int64_t n_kv;          // cache cells the attention reads
    bool    flash_attn;
    bool    all_logits;    // logits of every token (else the last only)
};

// nodes a graph of this model can have (for ggml_new_graph_custom)
size_t run_graph_max_nodes(const struct run_model * model);

// Builds the graph in ctx (a no_alloc context of enough metadata memory:
// see run_graph_ctx_size) and fills in.
struct ggml_cgraph * run_graph_build(struct ggml_context * ctx, const struct run_model * model,
                                     const struct run_kv_cache * kv, const struct run_graph_shape * shape,
                                     struct run_graph_inputs * in);

// bytes of context metadata a graph of this model needs
size_t run_graph_ctx_size(const struct run_model * model);

#ifdef __cplusplus
}
#endif
