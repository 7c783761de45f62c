#pragma once

// context.h: running a model: one backend per device, the scheduler over
// them (the CPU last), the KV cache, and decoding batches of tokens.
//
// A run_context reads a run_model (which must outlive it) and owns its
// backends, scheduler, cache and logits. Tokens are appended to one
// sequence: run_decode() evaluates them at positions n_past, n_past + 1,
// ... in batches of at most n_batch tokens and leaves their logits in the
// context; run_context_reset() starts a new sequence.

#include "graph.h"
#include "kv-cache.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

struct run_context_params {
    int64_t        n_ctx;       // cache cells, the most tokens a sequence can have (0: the model's training context)
    int64_t        n_batch;     // most tokens per graph
    int            n_threads;   // threads of the CPU (and other backends that take a count)
    enum ggml_type kv_type;     // F16 or F32
    int            flash_attn;  // 1: fused attention, 0: mul_mat + soft_max, -1: fused where supported
    bool           kv_offload;  // cache on the layers' devices (else in host memory)
    bool           all_logits;  // logits of every token (else of the last token of each run_decode)
    bool           graph_reuse; // a batch of the last graph's shape computes that graph again (default)
};

struct run_context_params run_context_default_params(void);

struct run_context {
    const struct run_model  * model;
    struct run_context_params params;
    ggml_backend_t          * backends;     // the scheduler's order: layer devices, helpers, CPU
    int                       n_backends;
    struct ggml_threadpool ** threadpools;  // [n_backends]: the pool made for a backend that takes one, or NULL
    ggml_backend_sched_t      sched;
    struct run_kv_cache       kv;
    bool                      flash_attn;   // what the graphs use
    void                    * graph_mem;    // metadata of the graph being built
    size_t                    graph_mem_size;
    struct ggml_context     * graph_ctx;    // the last decode's graph, in graph_mem, kept to compute
    struct ggml_cgraph      * graph;        // again for a batch of its shape (NULL: none kept)
    struct run_graph_inputs   graph_in;
    struct run_graph_shape    graph_shape;
    float                   * logits;       // [n_outputs][n_vocab]
    int64_t                   n_outputs;
    int64_t                   logits_cap;   // rows logits can hold
    int64_t                   n_past;       // tokens in the cache
    int                       n_splits;     // of the last graph
    int64_t                   n_graph_builds; // graphs built (a graph computed again is not counted)
};

// NULL (reported) when a backend cannot be started, the CPU's threads
// cannot all be started (checked here, before any work), or memory runs out
struct run_context * run_context_new(const struct run_model * model, const struct run_context_params * params);

void run_context_free(struct run_context * rc);

// Evaluates n_tokens tokens after the ones in the cache. False (reported)
// on invalid tokens, a full context or a failed computation.
//
// With graph_reuse, a batch of the last one's shape (tokens, cache cells
// read, attention kind, outputs; and position where a layer writes its cache
// with a copy into a view) does not build, split and allocate a new graph:
// the last one, still allocated by the scheduler, gets the new inputs
// (tokens, positions, cells, masks) and is computed again. One token after
// another reads the same cells (the cache read is padded) until the padding
// fills; the same bits as a new graph.
bool run_decode(struct run_context * rc, const int32_t * tokens, int64_t n_tokens);

// logits of output i of the last run_decode (0 .. n_outputs - 1)
const float * run_get_logits(const struct run_context * rc, int64_t i);

// forget the sequence
void run_context_reset(struct run_context * rc);

// Pauses (or resumes) the thread pools of the CPU backends: paused, their
// workers sleep at once instead of polling for the next graph on their
// cores (which the next graph's wake-up costs), for work of other threads
// in between (ggml-run --profile's paired reads). A paused pool still
// computes graphs.
void run_context_pause(struct run_context * rc, bool pause);

// Tokens a generation of n_predict tokens after a prompt of n_prompt can make
// in a context of n_ctx positions: n_predict, or fewer when the context fills
// first; -1 when the prompt itself does not fit. A prompt that fills the
// context exactly fits (and leaves no room to generate).
int64_t run_generation_length(int64_t n_ctx, int64_t n_prompt, int64_t n_predict);

// the backend the scheduler uses for a device, or NULL
ggml_backend_t run_context_backend_of(const struct run_context * rc, ggml_backend_dev_t dev);

#ifdef __cplusplus
}
#endif
