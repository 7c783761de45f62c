#pragma once

//
// ggml-backend-meta-impl.h: the parts of the meta backend shared by its files
// (not installed).
//
// A meta device is made of n "simple" devices. Its buffer type allocates one
// buffer per simple device; every tensor placed in a meta buffer gets one
// "simple tensor" per device, holding that device's slice (or a full copy, or
// a partial sum). How a tensor is cut is its split state: weights and other
// tensors the program allocates get theirs from the program's callback, the
// results of graph nodes get one derived from their sources
// (ggml-backend-meta-split.c). The meta backend runs the graph on every simple
// device, each on its own slices, and adds the partial sums across devices
// where the graph needs whole values (ggml-backend-meta-compute.c).
//
//   ggml-backend-meta.c          device, buffer type, public entry point
//   ggml-backend-meta-split.c    split states of graph nodes
//   ggml-backend-meta-buffer.c   buffers, simple tensors, get/set of split tensors
//   ggml-backend-meta-compute.c  backend (stream): graph compute and reduction
//
// Lifetimes: meta devices and their buffer types live until the process ends
// (like upstream's, and like every registry's devices); buffers and backends
// are freed by their owners.
//

#include "ggml-backend-impl.h"
#include "ggml-impl.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// the device's context
struct ggml_backend_meta_device_context {
    size_t                              n_devs;
    ggml_backend_dev_t                * simple_devs;     // n_devs
    ggml_backend_meta_get_split_state_t get_split_state;
    void                              * get_split_state_ud;
    char                              * name;            // "Meta(CPU,CPU)"
    char                              * description;
    struct ggml_backend_buffer_type     buft;            // the device's buffer type
    char                              * buft_name;
    ggml_backend_buffer_type_t        * simple_bufts;    // n_devs
};

//
// a map from addresses to values (open addressing; no fixed size)
//

struct ggml_meta_ptr_map {
    uintptr_t * keys;   // 0: empty slot
    void     ** vals;
    size_t      cap;    // a power of two, or 0
    size_t      count;
};

void * ggml_meta_ptr_map_get  (const struct ggml_meta_ptr_map * map, uintptr_t key);
// false when out of memory
bool   ggml_meta_ptr_map_put  (struct ggml_meta_ptr_map * map, uintptr_t key, void * val);
// empties the map, calling free_val (if not NULL) on every value
void   ggml_meta_ptr_map_clear(struct ggml_meta_ptr_map * map, void (*free_val)(void *));
void   ggml_meta_ptr_map_free (struct ggml_meta_ptr_map * map, void (*free_val)(void *));

//
// simple tensors: per meta tensor, one tensor per simple device
//

struct ggml_meta_tensor_store {
    size_t                     n_devs;
    struct ggml_context     ** ctxs;      // per device: the contexts holding the simple tensors
    size_t                     n_ctxs;    // contexts per device
    struct ggml_meta_ptr_map   map;       // meta tensor -> struct ggml_tensor * [n_devs]
};

// forgets every simple tensor of the store (keeping its memory for the next ones)
void ggml_meta_tensor_store_reset(struct ggml_meta_tensor_store * st);

// the buffer's context
struct ggml_backend_meta_buffer_context {
    size_t                  n_bufs;
    ggml_backend_buffer_t * bufs;         // n_bufs, owned

    // Tensors the program places (weights, caches) keep their simple tensors
    // for the buffer's life. A graph's tensors and views are made again for
    // every new graph: they go into one of two stores, in turns, so that the
    // graph being computed keeps its simple tensors while the next one is
    // being allocated (the scheme upstream uses; see the compute file).
    struct ggml_meta_tensor_store stc_static;
    struct ggml_meta_tensor_store stc_compute[2];
    int                           stc_compute_index;
    int                           stc_compute_index_next;

    // (tensor address | assume_sync) -> struct ggml_meta_split_cache_entry *
    struct ggml_meta_ptr_map      split_state_cache;
};

// counts the slices made in any meta buffer: a meta backend rebuilds its
// device graphs when slices were made since it built them, even for a graph
// of the same uid (a graph allocated again)
uint64_t ggml_backend_meta_slices_generation(void);

// the split state of tensor (in a meta buffer). assume_sync: a partial
// product is taken as already reduced (the state that its consumers see).
struct ggml_backend_meta_split_state ggml_backend_meta_get_split_state(const struct ggml_tensor * tensor, bool assume_sync);

// Sources a node's devices do not read as sliced (ggml-backend-meta-split.c):
// src i of node is split but the op needs it whole on every device, so each
// device reads a gathered copy (a single-source GLU of rows split in one block);
// or src1 of a MUL_MAT is whole while src0 is split along K, so each device
// reads a view of its K columns of src1.
bool ggml_backend_meta_src_gathered (const struct ggml_tensor * node, int i);
bool ggml_backend_meta_src1_k_sliced(const struct ggml_tensor * node);

// the slice of tensor on simple device index (NULL if there is none yet)
struct ggml_tensor * ggml_backend_meta_buffer_simple_tensor(const struct ggml_tensor * tensor, size_t index);

size_t                ggml_backend_meta_buffer_n_bufs       (ggml_backend_buffer_t meta_buf);
ggml_backend_buffer_t ggml_backend_meta_buffer_simple_buffer(ggml_backend_buffer_t meta_buf, size_t index);

// Scatters (set) or gathers (get) bytes [offset, offset + size) of a meta
// tensor; through meta_backend's simple streams when it is not NULL.
void ggml_backend_meta_xfer(ggml_backend_t meta_backend, bool set, const struct ggml_tensor * tensor, void * data,
                            size_t offset, size_t size);

// the device's simple devices and buffer types
size_t                     ggml_backend_meta_dev_n_devs     (ggml_backend_dev_t meta_dev);
ggml_backend_dev_t         ggml_backend_meta_dev_simple_dev (ggml_backend_dev_t meta_dev, size_t index);
ggml_backend_buffer_type_t ggml_backend_meta_buft_simple_buft(ggml_backend_buffer_type_t meta_buft, size_t index);
bool                       ggml_backend_dev_is_meta         (ggml_backend_dev_t dev);

// interfaces defined in the other files
ggml_backend_buffer_t ggml_backend_meta_buffer_type_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size);
ggml_backend_t        ggml_backend_meta_device_init_backend     (ggml_backend_dev_t dev, const char * params);

// the extent of the slice of device j along the split axis (segments and repeats summed)
static inline int64_t ggml_meta_split_extent(const struct ggml_backend_meta_split_state * ss, size_t n_devs, size_t j) {
    int64_t ne = 0;
    for (uint32_t s = 0; s < ss->n_segments; s++) {
        ne += ss->ne[s*n_devs + j] * (int64_t) ss->nr[s];
    }
    return ne;
}

static inline bool ggml_meta_axis_is_dim(enum ggml_backend_meta_split_axis axis) {
    return (int) axis >= 0 && (int) axis < GGML_MAX_DIMS;
}
