#pragma once

// kv-cache.h: the keys and values of past tokens, per layer, in the memory
// of the device that runs the layer.
//
// Layer il keeps K and V as [n_embd_kv, n_ctx] tensors (n_embd_kv =
// n_head_kv * head_dim): cell c holds the token at position c, one row per
// cell, V not transposed. A graph writes new rows with ggml_set_rows and
// reads the first n_kv cells through views. A layer whose device cannot
// write the cache (no SET_ROWS for the type) keeps it in host memory, which
// the scheduler reads from the CPU. The cache owns its buffers.

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

struct run_kv_cache {
    int64_t               n_ctx;
    enum ggml_type        type;
    int64_t               n_layer;
    struct ggml_tensor ** k;          // per layer
    struct ggml_tensor ** v;          // per layer
    int                 * dev;        // per layer: index into the model's layer devices holding the cache
    size_t              * bytes;      // per layer device: bytes of cache there
    struct ggml_context ** ctxs;      // per layer device: the tensors placed there (NULL if none)
    ggml_backend_buffer_t * bufs;     // per layer device
    int                   n_devs;
};

// offload false: every layer's cache in host memory
bool run_kv_cache_init(struct run_kv_cache * kv, const struct run_model * model, int64_t n_ctx,
                       enum ggml_type type, bool offload);

void run_kv_cache_free(struct run_kv_cache * kv);

// zeroes every cell (empty cells must hold finite values: they are masked,
// and 0 * NaN would still poison the attention)
void run_kv_cache_clear(struct run_kv_cache * kv);

#ifdef __cplusplus
}
#endif
