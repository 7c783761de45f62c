#pragma once

// kv-cache.h: the keys and values of past tokens, per layer, in the memory
// of the device that runs the layer.
//
// Layer il keeps K and V as [n_embd_kv, n_ctx] tensors (n_embd_kv =
// n_head_kv * head_dim): cell c holds the token at position c, one row per
// cell, V not transposed. A graph writes the new rows with ggml_set_rows
// where the device has it, else with ggml_cpy into a view of the cells
// (the new tokens' cells are consecutive), and reads the first n_kv cells
// through views. A layer whose device can do neither keeps its cache in
// host memory, which the scheduler reads from the CPU. The cache owns its
// buffers.

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

// how a graph writes new rows into a layer's cache
enum run_kv_write {
    RUN_KV_WRITE_SET_ROWS,  // ggml_set_rows at the cells' indices
    RUN_KV_WRITE_COPY,      // ggml_cpy into the view of cells n_past .. n_past + n_tokens - 1
};

struct run_kv_cache {
    int64_t               n_ctx;
    enum ggml_type        type;
    int64_t               n_layer;
    struct ggml_tensor ** k;          // per layer
    struct ggml_tensor ** v;          // per layer
    int                 * dev;        // per layer: index into the model's layer devices holding the cache
    enum run_kv_write   * write;      // per layer
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
