#pragma once

// arch.h: the decoder architectures ggml-run runs, each a small description
// of how it differs from the others.
//
// Every architecture is the same pre-norm decoder (graph.h): embeddings,
// layers of attention and feed-forward blocks around residuals, a final
// norm and the output matrix. What differs is which tensors a layer has
// (names and shapes as llama.cpp's GGUF converter writes them: fused QKV,
// Q/K biases, Q/K norms, post-norms, fused gate-up, experts), the kind of
// RoPE, the activation of the feed-forward block, the embedding scale and
// the sliding-window layers. The graph looks at the tensors a layer has and
// at these few flags; an architecture is one entry of a table in arch.c.
//
// The hyperparameters come from the GGUF keys "<arch>.*" (llama.cpp's names:
// "qwen3.attention.key_length", "gemma3.attention.sliding_window", ...).

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gguf_context;

enum run_ffn_act {
    RUN_ACT_SILU,   // silu(gate) * up
    RUN_ACT_GELU,   // gelu(gate) * up (the tanh approximation)
};

// a size of a tensor dimension, in terms of the hyperparameters
enum run_dim {
    RUN_DIM_ONE = 0,   // 1 (unused dimension)
    RUN_DIM_EMBD,      // n_embd
    RUN_DIM_Q,         // n_head * head_dim
    RUN_DIM_KV,        // n_head_kv * head_dim
    RUN_DIM_QKV,       // n_head * head_dim + 2 * n_head_kv * head_dim
    RUN_DIM_HEAD,      // head_dim
    RUN_DIM_FF,        // n_ff
    RUN_DIM_FF2,       // 2 * n_ff (gate and up in one matrix)
    RUN_DIM_EXPERT,    // n_expert
    RUN_DIM_FF_EXP,    // n_ff_exp (an expert's feed-forward length)
};

// how the graph uses a weight: decides which op a device must support to hold it
enum run_weight_use {
    RUN_USE_MATMUL,     // ggml_mul_mat(w, x)
    RUN_USE_MATMUL_ID,  // ggml_mul_mat_id(w, x, experts)
    RUN_USE_SCALE,      // ggml_mul(x, w): norm weights
    RUN_USE_ADD,        // ggml_add(x, w): biases
    RUN_USE_ROWS,       // ggml_get_rows(w, ids): token embeddings
    RUN_USE_ROPE,       // frequency factors of ggml_rope_ext
};

// one tensor of a layer: "blk.<il>.<name>"
struct run_tensor_desc {
    const char        * name;      // "attn_q.weight"
    size_t              field;     // offsetof(struct run_layer, ...)
    enum run_dim        ne[3];
    enum run_weight_use use;
    bool                required;  // else used when the file has it
};

struct run_arch {
    const char * name;               // general.architecture
    int          rope_type;          // GGML_ROPE_TYPE_NORMAL or GGML_ROPE_TYPE_NEOX
    enum run_ffn_act act;
    bool         embd_scale;         // embeddings times sqrt(n_embd)
    bool         moe;                // feed-forward by routed experts (softmax gating, top-k, weights normalised)
    int          swa_pattern;        // > 0: of every swa_pattern layers, all but the last attend to a sliding window
    float        rope_base_swa;      // RoPE base of the sliding-window layers
    const struct run_tensor_desc * layer;
    int          n_layer_tensors;
};

// the architecture named name, or NULL
const struct run_arch * run_arch_find(const char * name);

// the names of the architectures, comma-separated ("llama, qwen2, ...")
const char * run_arch_names(void);

struct run_hparams {
    const struct run_arch * arch;
    int64_t n_vocab;
    int64_t n_ctx_train;     // context length the model was trained for
    int64_t n_embd;
    int64_t n_layer;
    int64_t n_ff;
    int64_t n_head;
    int64_t n_head_kv;
    int64_t head_dim;        // <arch>.attention.key_length, else n_embd / n_head
    int64_t n_rot;           // dimensions of a head that RoPE rotates
    int64_t n_expert;        // experts of a layer (0: a dense model)
    int64_t n_expert_used;   // experts each token goes through
    int64_t n_ff_exp;        // an expert's feed-forward length
    int64_t n_swa;           // sliding window: a token sees the n_swa last positions, itself included (0: none)
    float   rms_eps;
    float   rope_freq_base;
    float   rope_freq_scale;
    float   attn_scale;      // of Q·K
};

// Reads the hyperparameters of the architecture general.architecture names.
// False (reported) for another architecture, a missing or invalid key.
bool run_hparams_load(struct run_hparams * hp, const struct gguf_context * gguf);

// the size dim stands for
int64_t run_dim_size(const struct run_hparams * hp, enum run_dim dim);

// whether layer il attends to a sliding window
bool run_layer_is_swa(const struct run_hparams * hp, int64_t il);

#ifdef __cplusplus
}
#endif
