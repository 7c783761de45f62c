#pragma once

//
// ggml-impl.h: internals shared by the files of ggml-base and the backends
// built with it. Not installed.
//
//   logging macros, op parameter access, the hash set keyed by tensor
//   address, the graph struct, fp16/bf16 conversion, aligned allocation.
//

#include "ggml.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MIN
#    define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

#ifndef MAX
#    define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

// alignment of tensor data in host buffers: GGUF guarantees 32 bytes, so
// memory-mapped weights can be used in place
#define TENSOR_ALIGNMENT 32

//
// logging
//

GGML_ATTRIBUTE_FORMAT(2, 3)
GGML_API void ggml_log_internal        (enum ggml_log_level level, const char * format, ...);
GGML_API void ggml_log_callback_default(enum ggml_log_level level, const char * text, void * user_data);

#define GGML_LOG(...)       ggml_log_internal(GGML_LOG_LEVEL_NONE , __VA_ARGS__)
#define GGML_LOG_INFO(...)  ggml_log_internal(GGML_LOG_LEVEL_INFO , __VA_ARGS__)
#define GGML_LOG_WARN(...)  ggml_log_internal(GGML_LOG_LEVEL_WARN , __VA_ARGS__)
#define GGML_LOG_ERROR(...) ggml_log_internal(GGML_LOG_LEVEL_ERROR, __VA_ARGS__)
#define GGML_LOG_DEBUG(...) ggml_log_internal(GGML_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define GGML_LOG_CONT(...)  ggml_log_internal(GGML_LOG_LEVEL_CONT , __VA_ARGS__)

GGML_API void ggml_print_backtrace(void);

//
// memory
//

// page-aligned (or at least 64-byte aligned) host memory; NULL with a log line on failure
GGML_API void * ggml_aligned_malloc(size_t size);
GGML_API void   ggml_aligned_free(void * ptr, size_t size);

// Host memory for bookkeeping whose loss must be reported, not crashed on
// (the graph allocator, the scheduler, contexts, hash sets): malloc, calloc
// and realloc, NULL when memory runs out. Freed with free(). They and
// ggml_aligned_malloc can be made to fail on purpose, for tests:
void * ggml_impl_malloc(size_t size);
void * ggml_impl_calloc(size_t n, size_t size);
void * ggml_impl_realloc(void * ptr, size_t size);

// Test hook, in no public header: the n-th (n >= 1) of the allocations above
// that the calling thread makes from now on fails; n = 0 turns it off. Other
// threads are not affected.
GGML_API void ggml_impl_test_fail_alloc(int n);
// how many of those allocations the calling thread made since it last called
// ggml_impl_test_fail_alloc
GGML_API int  ggml_impl_test_alloc_count(void);

//
// function pointers as void * (get_proc_address, dlsym): ISO C has no such
// conversion, POSIX guarantees the representations agree, so copy the bits
//

typedef void (*ggml_generic_fn_t)(void);

static inline void * ggml_fn_to_ptr(ggml_generic_fn_t fn) {
    void * p;
    memcpy(&p, &fn, sizeof(p));
    return p;
}

static inline ggml_generic_fn_t ggml_ptr_to_fn(void * p) {
    ggml_generic_fn_t fn;
    memcpy(&fn, &p, sizeof(fn));
    return fn;
}

#define GGML_FN_TO_PTR(fn) ggml_fn_to_ptr((ggml_generic_fn_t)(fn))

//
// tensors
//

// true if a and b have the same type, shape and strides
static inline bool ggml_are_same_layout(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->type != b->type) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) {
            return false;
        }
    }
    return true;
}

// ops that only reinterpret their source's memory: nothing to compute
static inline bool ggml_op_is_empty(enum ggml_op op) {
    switch (op) {
        case GGML_OP_NONE:
        case GGML_OP_RESHAPE:
        case GGML_OP_TRANSPOSE:
        case GGML_OP_VIEW:
        case GGML_OP_PERMUTE:
            return true;
        default:
            return false;
    }
}

static inline bool ggml_impl_is_view(const struct ggml_tensor * t) {
    return t->view_src != NULL;
}

// Create a tensor in ctx. With view_src, the tensor aliases view_src's memory
// at byte offset view_offs and gets contiguous strides for its own shape.
struct ggml_tensor * ggml_new_tensor_impl(
        struct ggml_context * ctx,
        enum   ggml_type      type,
        int                   n_dims,
        const int64_t       * ne,
        struct ggml_tensor  * view_src,
        size_t                view_offs);

// true if the op's output may be written over one of its sources (ggml-alloc)
GGML_API bool ggml_op_can_inplace(enum ggml_op op);

// ggml_gallocr_reserve_n_size that also says whether planning succeeded
// (false, with a log line, when host memory ran out: the sizes are 0 then)
struct ggml_gallocr;
bool ggml_gallocr_measure(struct ggml_gallocr * galloc, struct ggml_cgraph * graph,
                          const int * node_buffer_ids, const int * leaf_buffer_ids, size_t * sizes);

//
// op parameters
//

static inline void ggml_set_op_params(struct ggml_tensor * tensor, const void * params, size_t params_size) {
    GGML_ASSERT(tensor != NULL);
    GGML_ASSERT(params_size <= GGML_MAX_OP_PARAMS);
    memcpy(tensor->op_params, params, params_size);
}

static inline int32_t ggml_get_op_params_i32(const struct ggml_tensor * tensor, uint32_t i) {
    assert(i < GGML_MAX_OP_PARAMS / sizeof(int32_t));
    return tensor->op_params[i];
}

static inline float ggml_get_op_params_f32(const struct ggml_tensor * tensor, uint32_t i) {
    assert(i < GGML_MAX_OP_PARAMS / sizeof(float));
    float v;
    memcpy(&v, &tensor->op_params[i], sizeof(v));
    return v;
}

static inline void ggml_set_op_params_i32(struct ggml_tensor * tensor, uint32_t i, int32_t value) {
    assert(i < GGML_MAX_OP_PARAMS / sizeof(int32_t));
    tensor->op_params[i] = value;
}

static inline void ggml_set_op_params_f32(struct ggml_tensor * tensor, uint32_t i, float value) {
    assert(i < GGML_MAX_OP_PARAMS / sizeof(float));
    memcpy(&tensor->op_params[i], &value, sizeof(value));
}

// op_params layouts of the custom ops (read by the backends)
struct ggml_map_custom1_op_params {
    ggml_custom1_op_t  fun;
    int                n_tasks;
    void             * userdata;
};

struct ggml_map_custom2_op_params {
    ggml_custom2_op_t  fun;
    int                n_tasks;
    void             * userdata;
};

struct ggml_map_custom3_op_params {
    ggml_custom3_op_t  fun;
    int                n_tasks;
    void             * userdata;
};

struct ggml_custom_op_params {
    ggml_custom_op_t   fun;
    int                n_tasks;
    void             * userdata;
};

//
// bitset
//

typedef uint32_t ggml_bitset_t;

#define BITSET_SHR 5 // log2 of the bits in a ggml_bitset_t
#define BITSET_MASK (sizeof(ggml_bitset_t)*8 - 1)

static inline size_t ggml_bitset_size(size_t n) {
    return (n + BITSET_MASK) >> BITSET_SHR;
}

static inline bool ggml_bitset_get(const ggml_bitset_t * bitset, size_t i) {
    return !!(bitset[i >> BITSET_SHR] & (1u << (i & BITSET_MASK)));
}

static inline void ggml_bitset_set(ggml_bitset_t * bitset, size_t i) {
    bitset[i >> BITSET_SHR] |= (1u << (i & BITSET_MASK));
}

static inline void ggml_bitset_clear(ggml_bitset_t * bitset, size_t i) {
    bitset[i >> BITSET_SHR] &= ~(1u << (i & BITSET_MASK));
}

//
// hash set of tensors (open addressing, linear probing)
//
// Sized once for the number of keys it must hold (ggml_hash_size picks a
// prime at least that large); graphs size theirs from the graph size.
//

#define GGML_HASHSET_FULL           ((size_t)-1)
#define GGML_HASHSET_ALREADY_EXISTS ((size_t)-2)

struct ggml_hash_set {
    size_t size;
    ggml_bitset_t * used;       // which slots hold a key
    struct ggml_tensor ** keys; // keys[i] is valid only where used
};

// size == 0 gives an empty set that holds nothing; aborts if memory runs out
GGML_API struct ggml_hash_set ggml_hash_set_new(size_t size);
// the same, but false (and an empty set) if memory runs out
GGML_API bool                 ggml_hash_set_init(struct ggml_hash_set * hash_set, size_t size);
GGML_API void                 ggml_hash_set_free(struct ggml_hash_set * hash_set);

// the smallest prime >= min_sz
GGML_API size_t ggml_hash_size(size_t min_sz);

// remove every key
GGML_API void ggml_hash_set_reset(struct ggml_hash_set * hash_set);

static inline size_t ggml_hash(const struct ggml_tensor * p) {
    // tensors are at least 16-byte aligned: the low bits carry no information
    return (size_t)(uintptr_t)p >> 4;
}

// the slot holding key, or the free slot where it would go; GGML_HASHSET_FULL if neither exists
static inline size_t ggml_hash_find(const struct ggml_hash_set * hash_set, const struct ggml_tensor * key) {
    if (hash_set->size == 0) {
        return GGML_HASHSET_FULL;
    }
    const size_t h = ggml_hash(key) % hash_set->size;
    size_t i = h;
    while (ggml_bitset_get(hash_set->used, i) && hash_set->keys[i] != key) {
        i = (i + 1) % hash_set->size;
        if (i == h) {
            return GGML_HASHSET_FULL;
        }
    }
    return i;
}

static inline bool ggml_hash_contains(const struct ggml_hash_set * hash_set, struct ggml_tensor * key) {
    const size_t i = ggml_hash_find(hash_set, key);
    return i != GGML_HASHSET_FULL && ggml_bitset_get(hash_set->used, i);
}

// the slot of the newly inserted key, or GGML_HASHSET_ALREADY_EXISTS; aborts when full
static inline size_t ggml_hash_insert(struct ggml_hash_set * hash_set, struct ggml_tensor * key) {
    const size_t i = ggml_hash_find(hash_set, key);
    if (i == GGML_HASHSET_FULL) {
        GGML_ABORT("hash set of %zu slots is full", hash_set->size);
    }
    if (ggml_bitset_get(hash_set->used, i)) {
        return GGML_HASHSET_ALREADY_EXISTS;
    }
    ggml_bitset_set(hash_set->used, i);
    hash_set->keys[i] = key;
    return i;
}

// the slot of key, inserting it if needed; aborts when full
static inline size_t ggml_hash_find_or_insert(struct ggml_hash_set * hash_set, struct ggml_tensor * key) {
    const size_t i = ggml_hash_find(hash_set, key);
    if (i == GGML_HASHSET_FULL) {
        GGML_ABORT("hash set of %zu slots is full", hash_set->size);
    }
    if (!ggml_bitset_get(hash_set->used, i)) {
        ggml_bitset_set(hash_set->used, i);
        hash_set->keys[i] = key;
    }
    return i;
}

//
// computation graph
//

enum ggml_cgraph_eval_order {
    GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT = 0,
    GGML_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT,
    GGML_CGRAPH_EVAL_ORDER_COUNT
};

// The layout matches upstream's, which separately built backends read.
struct ggml_cgraph {
    int size;    // capacity of nodes, leafs, grads and grad_accs
    int n_nodes; // tensors computed by the graph, in execution order
    int n_leafs; // tensors the graph only reads (op NONE)

    struct ggml_tensor ** nodes;
    struct ggml_tensor ** grads;     // gradient of each node (hash slot indexed), or NULL
    struct ggml_tensor ** grad_accs; // gradient accumulators (hash slot indexed), or NULL
    struct ggml_tensor ** leafs;
    int32_t             * use_counts; // consumers of each tensor, indexed by hash slot

    struct ggml_hash_set visited_hash_set; // every tensor in the graph

    enum ggml_cgraph_eval_order order;

    // identifies a graph so that two equal non-zero uids mean the same graph; 0 means unknown
    uint64_t uid;
};

// nodes [i0, i1) of cgraph, without leafs or gradients; shares cgraph's memory
GGML_API struct ggml_cgraph ggml_graph_view(struct ggml_cgraph * cgraph, int i0, int i1);

//
// fusion: which consecutive nodes a backend may compute as one (upstream's
// helpers of the same names). Use counts are those of the whole graph (a
// view shares them), so a result also read in another part of a split graph
// counts as used there.
//

// how many nodes of the graph read nodes[i] as an operand (0 when unknown)
static inline int32_t ggml_node_get_use_count(const struct ggml_cgraph * cgraph, int node_idx) {
    const struct ggml_tensor * node = cgraph->nodes[node_idx];
    if (cgraph->use_counts == NULL || cgraph->visited_hash_set.size == 0) {
        return 0;
    }
    const size_t slot = ggml_hash_find(&cgraph->visited_hash_set, node);
    if (slot == GGML_HASHSET_FULL || !ggml_bitset_get(cgraph->visited_hash_set.used, slot)) {
        return 0;
    }
    return cgraph->use_counts[slot];
}

// true when nodes[i]'s result is read by exactly n_uses nodes and by nothing
// else: not through a view of it (it is no view itself) and not as an output
static inline bool ggml_node_has_n_uses(const struct ggml_cgraph * cgraph, int node_idx, int32_t n_uses) {
    const struct ggml_tensor * node = cgraph->nodes[node_idx];
    return ggml_node_get_use_count(cgraph, node_idx) == n_uses && node->view_src == NULL &&
           (node->flags & GGML_TENSOR_FLAG_OUTPUT) == 0;
}

// true when nodes node_idxs[0..num_ops) have the ops ops[], all compute, all
// have the same shape, each but the last is read only by the next one, and
// each but the first reads the one before it
static inline bool ggml_can_fuse_ext(const struct ggml_cgraph * cgraph, const int * node_idxs, const enum ggml_op * ops,
                                     int num_ops) {
    for (int i = 0; i < num_ops; i++) {
        if (node_idxs[i] < 0 || node_idxs[i] >= cgraph->n_nodes) {
            return false;
        }
        const struct ggml_tensor * node = cgraph->nodes[node_idxs[i]];
        if (node->op != ops[i] || (node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
            return false;
        }
        if (i + 1 < num_ops && !ggml_node_has_n_uses(cgraph, node_idxs[i], 1)) {
            return false;
        }
        if (i > 0) {
            const struct ggml_tensor * prev = cgraph->nodes[node_idxs[i - 1]];
            if ((node->src[0] != prev && node->src[1] != prev) || !ggml_are_same_shape(node, prev)) {
                return false;
            }
        }
    }
    return true;
}

// ggml_can_fuse_ext for the num_ops nodes from node_idx on
static inline bool ggml_can_fuse(const struct ggml_cgraph * cgraph, int node_idx, const enum ggml_op * ops, int num_ops) {
    if (node_idx < 0 || num_ops <= 0 || num_ops > 32 || node_idx + num_ops > cgraph->n_nodes) {
        return false;
    }
    int idxs[32];
    for (int i = 0; i < num_ops; i++) {
        idxs[i] = node_idx + i;
    }
    return ggml_can_fuse_ext(cgraph, idxs, ops, num_ops);
}

// a fresh non-zero graph uid
GGML_API uint64_t ggml_graph_next_uid(void);

//
// fp16 / bf16 conversion (exact, round to nearest even)
//

static inline float ggml_fp32_from_bits(uint32_t w) {
    float f;
    memcpy(&f, &w, sizeof(f));
    return f;
}

static inline uint32_t ggml_fp32_to_bits(float f) {
    uint32_t w;
    memcpy(&w, &f, sizeof(w));
    return w;
}

static inline float ggml_compute_fp16_to_fp32(ggml_fp16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    const uint32_t exp  = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    if (exp == 0) {
        // zero or subnormal: mant * 2^-24, exact in binary32
        const float v = (float) mant * 0x1p-24f;
        return ggml_fp32_from_bits(ggml_fp32_to_bits(v) | sign);
    }
    if (exp == 31) {
        // inf keeps a zero mantissa; NaN keeps its payload and comes out
        // quiet, as an fp32 multiply would leave it (upstream converts that way)
        const uint32_t quiet = mant ? 0x00400000u : 0;
        return ggml_fp32_from_bits(sign | 0x7f800000u | quiet | (mant << 13));
    }
    return ggml_fp32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

static inline ggml_fp16_t ggml_compute_fp32_to_fp16(float f) {
    const uint32_t w    = ggml_fp32_to_bits(f);
    const uint16_t sign = (uint16_t)((w >> 16) & 0x8000);
    const uint32_t x    = w & 0x7fffffffu;

    if (x > 0x7f800000u) {
        return sign | 0x7e00; // NaN: a quiet NaN
    }
    if (x >= 0x477ff000u) {
        return sign | 0x7c00; // rounds to a magnitude of 65520 or more: infinity
    }
    if (x >= 0x38800000u) {
        // normal half: rebias the exponent, round the 13 dropped bits to nearest even
        const uint32_t r = x + 0x0fffu + ((x >> 13) & 1u);
        return sign | (uint16_t)((r >> 13) - (112u << 10));
    }
    // subnormal half (or zero): value = m * 2^-24 with m = round(x / 2^-24)
    const uint32_t e = x >> 23;
    if (e < 102) {
        return sign; // below 2^-25: rounds to zero
    }
    const uint32_t mant  = (x & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e; // 14..24
    uint32_t m = mant >> shift;
    const uint32_t rem  = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (m & 1u))) {
        m++;
    }
    return sign | (uint16_t) m;
}

static inline float ggml_compute_bf16_to_fp32(ggml_bf16_t h) {
    return ggml_fp32_from_bits((uint32_t) h.bits << 16);
}

static inline ggml_bf16_t ggml_compute_fp32_to_bf16(float s) {
    ggml_bf16_t h;
    const uint32_t u = ggml_fp32_to_bits(s);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        h.bits = (uint16_t)((u >> 16) | 64); // NaN: keep the sign and payload, force quiet
        return h;
    }
    h.bits = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    return h;
}

#define GGML_COMPUTE_FP16_TO_FP32(x) ggml_compute_fp16_to_fp32(x)
#define GGML_COMPUTE_FP32_TO_FP16(x) ggml_compute_fp32_to_fp16(x)
#define GGML_FP16_TO_FP32(x) ggml_compute_fp16_to_fp32(x)
#define GGML_FP32_TO_FP16(x) ggml_compute_fp32_to_fp16(x)
#define GGML_FP32_TO_BF16(x) ggml_compute_fp32_to_bf16(x)
#define GGML_BF16_TO_FP32(x) ggml_compute_bf16_to_fp32(x)

#ifdef __cplusplus
}
#endif
