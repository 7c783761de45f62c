#pragma once

//
// ggml-backend-sched-impl.h: the scheduler's state, shared by its two files:
//   ggml-backend-sched-split.c  assigning nodes to backends and splitting
//   ggml-backend-sched.c        lifecycle, allocation, computation, pipelining
//
// Every tensor of the graph being scheduled has a slot in hash_set; per slot
// the scheduler keeps the backend the tensor is assigned to and, for split
// inputs, its copies on other backends (n_copies of each for pipelining).
// Nothing here has a fixed size: arrays grow with the graph, the number of
// splits, inputs and backends.
//

#include "ggml-impl.h"
#include "ggml-backend-impl.h"
#include "ggml-alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

// copies of split inputs kept per backend for pipeline parallelism
#define GGML_SCHED_PARALLEL_COPIES 4

// length of a debug cause string ("1.wgt3", "3.upg", ...)
#define GGML_SCHED_CAUSE_LEN 16

struct ggml_backend_sched_split {
    int backend_id;
    int i_start;                  // first node of the split in the graph
    int i_end;                    // one past the last node
    struct ggml_tensor ** inputs; // tensors from other backends the split reads
    int n_inputs;
    int inputs_capacity;
    struct ggml_cgraph graph;     // view of nodes [i_start, i_end)
};

// A source the scheduler redirected to an input copy, and a tensor it gave
// memory: undone before the same graph is split again.
struct ggml_sched_src_rewrite {
    struct ggml_tensor * node;
    int                  src;
    struct ggml_tensor * orig;
    struct ggml_tensor * copy;
};

struct ggml_sched_undo_log {
    const struct ggml_cgraph * graph;      // the graph the entries belong to
    uint64_t graph_uid;                    // its uid when split: a new graph made at the same address has another
    struct ggml_sched_src_rewrite * rewrites;
    int n_rewrites;
    int rewrites_capacity;
    struct ggml_tensor ** allocated;       // tensors of the graph the scheduler placed
    int n_allocated;
    int allocated_capacity;
};

// Contexts holding the tensors the scheduler makes (input copies, their
// dependency views): reset at every split, grown by adding contexts.
struct ggml_sched_tensor_pool {
    struct ggml_context ** ctxs;
    int n_ctxs;
    int capacity;
    int cur;               // context new tensors go to
    size_t tensors_per_ctx;
};

// What splitting the last graph gave, by position in that graph (node i: i,
// leaf i: n_nodes + i), so that a new graph of the same shape gets the same
// splits, copies and allocation plan without the passes
// (ggml-backend-sched-reuse.c). The shape is compared exactly, value by value,
// not by a hash: a graph that differs in anything the passes or the plan
// read is split afresh.
struct ggml_sched_shape {
    bool valid;                  // describes the last graph split and allocated
    bool next_ok;                // the graph being allocated has a shape (no source outside it)
    bool next_is_sig;            // its shape is sig (equal), not next_sig
    uint64_t graph_sig;          // its identity (graph_signature), kept up to date by a replay
    int  n_nodes;
    int  n_leafs;
    int64_t * sig;               // shape of the last graph
    int64_t * next_sig;          // shape of the graph being allocated
    size_t    cap_sig;
    int     * slots;             // hash slot of each position of the graph being allocated
    int     * ids;               // backend of each position
    int       cap_ids;
    int       cap_pos;
    int     * input_refs;        // split inputs, split by split
    struct ggml_tensor ** input_copies; // [n_inputs][n_copies]: their copies
    int       n_inputs;
    int       cap_inputs;
    struct ggml_tensor ** deps;  // the views that keep the inputs alive until copied, in the same order
    int       n_deps;
    int       cap_deps;
    int     * graph_input_refs;  // user inputs with n_copies versions
    struct ggml_tensor ** graph_input_copies; // [n][n_copies - 1]: the versions other than the input itself
    int       n_graph_inputs;
    int       cap_graph_inputs;
    int     * rewrites;          // sources redirected to a copy: position * GGML_MAX_SRC + source index
    int       n_rewrites;
    int       cap_rewrites;
    int     * order;             // position of each node after the backends' graph_optimize
    int       cap_order;
    // The graph the shape was taken from, as its tensors' bytes (see
    // shape_raw_entry): a graph made of the same tensors, unchanged, has
    // the same shape, which is then known without computing it again.
    unsigned char * raw;         // of the graph whose shape is sig, when raw_valid
    unsigned char * next_raw;    // of the graph being allocated, when next_raw_ok
    size_t    cap_raw;
    bool      raw_valid;
    bool      next_raw_ok;
    uint64_t  raw_graph_sig;     // graph_sig of that graph before splitting
    uint64_t  next_raw_graph_sig;
};

struct ggml_backend_sched {
    bool is_reset; // assignments cleared since the last split
    bool is_alloc; // the current graph is split and allocated

    int n_backends;
    ggml_backend_t * backends;           // [n_backends], priority order
    ggml_backend_buffer_type_t * bufts;  // [n_backends]
    ggml_gallocr_t galloc;

    // per tensor of the graph (indexed by hash slot)
    struct ggml_hash_set hash_set;
    int                 * hv_tensor_backend_ids; // assigned backend or -1
    struct ggml_tensor ** hv_tensor_copies;      // [slot][n_backends][n_copies]
    char               (* causes)[GGML_SCHED_CAUSE_LEN]; // why each assignment was made (debug only)

    // backend of each node / leaf of `graph` (and of the previous graph, to
    // detect when the allocation must be planned again)
    int * node_backend_ids;
    int * leaf_backend_ids;
    int * prev_node_backend_ids;
    int * prev_leaf_backend_ids;
    int   ids_capacity;

    // the graph actually allocated: the user's nodes plus the input copies
    struct ggml_cgraph graph;

    struct ggml_backend_sched_split * splits;
    int n_splits;
    int splits_capacity;

    // pipeline parallelism
    int n_copies;
    int cur_copy;
    int next_copy;
    ggml_backend_event_t * events;      // [n_backends][n_copies], NULL where unsupported
    struct ggml_tensor ** graph_inputs; // user inputs duplicated per copy
    int n_graph_inputs;
    int graph_inputs_capacity;

    struct ggml_sched_tensor_pool pool;
    struct ggml_sched_undo_log    undo;

    ggml_backend_sched_eval_callback callback_eval;
    void * callback_eval_user_data;

    bool op_offload;
    int  debug; // GGML_SCHED_DEBUG: 1 splits and the backend and cause of each node, 2 also sources and views

    // the graph split last, to compute it again without splitting again
    const struct ggml_cgraph * split_graph_ptr;
    uint64_t                   split_graph_sig;

    // a new graph of the last graph's shape: the same splits
    struct ggml_sched_shape shape;
    int * hv_graph_pos;          // position in the graph being allocated of each slot's tensor, or -2
    bool  any_graph_optimize;    // some backend reorders its splits
    bool  build_deps_reuse;      // sched_build_graph_copy takes the views of shape.deps
};

// A graph's identity, to tell that a graph given again is unchanged: the
// sum over its tensors of a mixed term per tensor and position, so that
// redirecting one source changes one term (see ggml_sched_shape_replay).
static inline uint64_t ggml_sched_sig_mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

static inline uint64_t ggml_sched_node_term(const struct ggml_tensor * node, int i) {
    uint64_t v = (uint64_t)(uintptr_t) node ^ (uint64_t) node->op << 48;
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        v += ((uint64_t)(uintptr_t) node->src[j] + (uint64_t) j) * (0x9E3779B97F4A7C15ULL + 2 * (uint64_t) j);
    }
    return ggml_sched_sig_mix(v + (uint64_t) i * 0xD6E8FEB86659FD93ULL);
}

static inline uint64_t ggml_sched_leaf_term(const struct ggml_tensor * leaf, int i) {
    return ggml_sched_sig_mix((uint64_t)(uintptr_t) leaf ^ ((uint64_t) i << 1 | 1) * 0xC2B2AE3D27D4EB4FULL);
}

// a slot taken by a tensor for the first time since the last reset: the
// reset only empties the hash set, the values are cleared here
static inline void ggml_sched_slot_init(struct ggml_backend_sched * sched, size_t slot) {
    const size_t n_per_slot = (size_t) sched->n_backends * (size_t) sched->n_copies;
    sched->hv_tensor_backend_ids[slot] = -1;
    sched->hv_graph_pos[slot] = -2;
    for (size_t i = 0; i < n_per_slot; i++) {
        sched->hv_tensor_copies[slot * n_per_slot + i] = NULL;
    }
    if (sched->causes) {
        sched->causes[slot][0] = '\0';
    }
}

// slot of a tensor in the scheduler's hash set (inserting it)
static inline size_t sched_hash_id(struct ggml_backend_sched * sched, struct ggml_tensor * t) {
    const size_t i = ggml_hash_find(&sched->hash_set, t);
    GGML_ASSERT(i != GGML_HASHSET_FULL && "the scheduler's hash set is full");
    if (!ggml_bitset_get(sched->hash_set.used, i)) {
        ggml_bitset_set(sched->hash_set.used, i);
        sched->hash_set.keys[i] = t;
        ggml_sched_slot_init(sched, i);
    }
    return i;
}

static inline int * sched_tensor_backend_id(struct ggml_backend_sched * sched, struct ggml_tensor * t) {
    return &sched->hv_tensor_backend_ids[sched_hash_id(sched, t)];
}

static inline struct ggml_tensor ** sched_tensor_copy(struct ggml_backend_sched * sched, size_t id, int backend_id, int copy_id) {
    return &sched->hv_tensor_copies[(id * (size_t) sched->n_backends + (size_t) backend_id) * (size_t) sched->n_copies + (size_t) copy_id];
}

static inline bool sched_is_view_op(enum ggml_op op) {
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

// record why t was assigned (no-op unless debugging)
GGML_ATTRIBUTE_FORMAT(3, 4)
void ggml_sched_set_cause(struct ggml_backend_sched * sched, struct ggml_tensor * t, const char * fmt, ...);
const char * ggml_sched_get_cause(struct ggml_backend_sched * sched, struct ggml_tensor * t);

// a fresh tensor with t's type, shape and strides, in the scheduler's pool
// (NULL when out of memory)
struct ggml_tensor * ggml_sched_new_tensor_like(struct ggml_backend_sched * sched, const struct ggml_tensor * t);
// a view of t in the scheduler's pool (NULL when out of memory)
struct ggml_tensor * ggml_sched_new_view(struct ggml_backend_sched * sched, struct ggml_tensor * t);
void ggml_sched_pool_reset(struct ggml_sched_tensor_pool * pool);
void ggml_sched_pool_free(struct ggml_sched_tensor_pool * pool);

// assign every node a backend, split the graph and make the input copies;
// fills sched->splits, sched->graph and the backend id arrays. False (with a
// log line) if some node is supported by no backend, or host memory ran out
// (then the sources it redirected in graph are restored).
bool ggml_sched_assign_and_split(struct ggml_backend_sched * sched, struct ggml_cgraph * graph);

// record that node->src[j] (orig) now names copy; false when out of memory
// (then it must not be rewritten)
bool ggml_sched_undo_record_rewrite(struct ggml_backend_sched * sched, struct ggml_tensor * node, int j, struct ggml_tensor * copy);
// record that the scheduler gave t its memory; false when out of memory
// (then it must not be given any)
bool ggml_sched_undo_record_alloc(struct ggml_backend_sched * sched, struct ggml_tensor * t);
// before splitting graph: if it is the graph split last, undo the rewrites
// and allocations made then (the graph is alive: the caller passed it);
// otherwise forget the log (the old graph may be gone)
void ggml_sched_undo(struct ggml_backend_sched * sched, const struct ggml_cgraph * graph);
void ggml_sched_undo_free(struct ggml_sched_undo_log * undo);

// a new graph of the last graph's shape (ggml-backend-sched-reuse.c).
// ggml_sched_shape_begin: before splitting graph (its sources as the user
// made them), its shape; true when it is the shape of the last graph and its
// splits can be replayed. ggml_sched_shape_replay: split graph as the last
// one, without the passes; false (nothing changed) when it cannot.
// ggml_sched_shape_record: after graph was split and allocated, remember
// what it gave (silently nothing when out of memory: the next graph is split
// afresh). ggml_sched_deps_push: sched_build_graph_copy's views, recorded.
bool ggml_sched_shape_begin(struct ggml_backend_sched * sched, struct ggml_cgraph * graph);
bool ggml_sched_shape_replay(struct ggml_backend_sched * sched, struct ggml_cgraph * graph);
void ggml_sched_shape_record(struct ggml_backend_sched * sched, struct ggml_cgraph * graph);
bool ggml_sched_deps_push(struct ggml_backend_sched * sched, struct ggml_tensor * dep);
void ggml_sched_shape_free(struct ggml_sched_shape * shape);
// the graph copy of ggml-backend-sched-split.c, for a replayed split
bool ggml_sched_build_graph_copy(struct ggml_backend_sched * sched, struct ggml_cgraph * graph);

// log the assignment and the splits (GGML_SCHED_DEBUG)
void ggml_sched_print_assignments(struct ggml_backend_sched * sched, struct ggml_cgraph * graph);

#ifdef __cplusplus
}
#endif
