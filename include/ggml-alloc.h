#pragma once

//
// ggml-alloc.h: placing tensors in backend buffers.
//
// ggml_tallocr places tensors one after another in a buffer.
//
// ggml_gallocr plans the memory of a whole graph: a tensor's memory is reused
// once its last consumer has run, an op writes into its source's memory when
// it can, views share their source's memory. Tensors flagged with
// ggml_set_input() are placed first and never share memory; tensors flagged
// with ggml_set_output() are never freed or overwritten.
//
//   ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
//   ggml_gallocr_reserve(galloc, build_graph(max_batch)); // optional
//   struct ggml_cgraph * graph = build_graph(batch);
//   ggml_gallocr_alloc_graph(galloc, graph);
//   ggml_backend_graph_compute(backend, graph);
//

#include "ggml.h"

#ifdef  __cplusplus
extern "C" {
#endif

typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
typedef struct      ggml_backend_buffer * ggml_backend_buffer_t;
typedef struct             ggml_backend * ggml_backend_t;

// Linear tensor allocator
struct ggml_tallocr {
    ggml_backend_buffer_t buffer;
    void * base;
    size_t alignment;
    size_t offset;
};

GGML_API struct ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer);
GGML_API enum ggml_status    ggml_tallocr_alloc(struct ggml_tallocr * talloc, struct ggml_tensor * tensor);

// Graph allocator
typedef struct ggml_gallocr * ggml_gallocr_t;

GGML_API ggml_gallocr_t ggml_gallocr_new(ggml_backend_buffer_type_t buft);
GGML_API ggml_gallocr_t ggml_gallocr_new_n(ggml_backend_buffer_type_t * bufts, int n_bufs);
GGML_API void           ggml_gallocr_free(ggml_gallocr_t galloc);

// Size (and allocate) the buffers for a worst-case graph; the graph itself is
// not changed. Returns false if a buffer could not be allocated.
// The _n forms say which buffer each node and leaf goes to; _size only
// reports the sizes that ggml_gallocr_reserve_n would allocate.
GGML_API bool ggml_gallocr_reserve(ggml_gallocr_t galloc, struct ggml_cgraph * graph);
GGML_API void ggml_gallocr_reserve_n_size(
    ggml_gallocr_t galloc,
    struct ggml_cgraph * graph,
    const int * node_buffer_ids,
    const int * leaf_buffer_ids,
    size_t * sizes);
GGML_API bool ggml_gallocr_reserve_n(
    ggml_gallocr_t galloc,
    struct ggml_cgraph * graph,
    const int * node_buffer_ids,
    const int * leaf_buffer_ids);

// Allocate the graph's tensors. With one buffer, a graph that does not fit
// the last reservation is re-planned automatically; with several, false is
// returned and ggml_gallocr_reserve_n must be called first.
GGML_API bool ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, struct ggml_cgraph * graph);

GGML_API size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t galloc, int buffer_id);

// Allocate every unallocated tensor of a context in one new buffer (or, past
// the buffer type's max size, several joined in a multi-buffer). Returns NULL
// on failure, or when there is nothing to allocate.
GGML_API size_t                       ggml_backend_alloc_ctx_tensors_from_buft_size(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft);
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend);

#ifdef  __cplusplus
}
#endif
