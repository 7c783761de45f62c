#pragma once

// synthetic.h: a model of any architecture of arch.h built in memory, for
// benchmarks and for trying the runner without a model file.
//
// The model is a complete weight source, as a GGUF file would give: the
// same metadata keys and tensor names (those the architecture requires), a vocabulary of synthetic word
// pieces ("▁kaba", byte tokens, bos/eos), and weights drawn from a seeded
// generator: the same parameters always give the same bytes, whatever the
// thread count. Matrices are uniform in +-sqrt(3 / n_in) (unit variance of
// their outputs), norms near 1, so activations stay finite at any depth.

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

struct run_synth_params {
    const char   * arch;       // general.architecture: llama (also when NULL), qwen2, qwen3, qwen3moe, gemma3, phi3
    int64_t        n_embd;
    int64_t        n_layer;
    int64_t        n_head;
    int64_t        n_head_kv;
    int64_t        n_ff;
    int64_t        n_vocab;
    int64_t        n_expert;   // models of experts: experts per layer, used per token, their feed-forward length
    int64_t        n_expert_used;
    int64_t        n_ff_exp;
    int64_t        n_swa;      // sliding window of the architectures that have one
    int64_t        n_ctx;      // context length written in the metadata
    enum ggml_type wtype;      // type of the matrices and token embeddings (norms are F32)
    uint64_t       seed;
    int            n_threads;  // threads generating the weights
};

// the default: a model of a few hundred MB (see the README)
struct run_synth_params run_synth_default_params(void);

// sizes by name: "tiny", "small", "default", "large" (llama; experts: 8, 2
// used, of half the feed-forward length); false for unknown names
bool run_synth_preset(const char * name, struct run_synth_params * params);

// Builds the source. False (reported) for invalid sizes or when memory runs out.
bool run_synth_source(const struct run_synth_params * params, struct run_weight_source * src);

// bytes the weights of these parameters take
size_t run_synth_weight_bytes(const struct run_synth_params * params);

#ifdef __cplusplus
}
#endif
