// ggml-alloc.c: the graph allocator (ggml_gallocr).
//
// Planning walks the graph in execution order and gives every tensor it
// must place an address in a virtual buffer, one per buffer type:
//
//   - leafs, then tensors flagged as inputs, are placed before any node, so
//     they never share memory with each other or with a node;
//   - a node is placed before its sources are released, so it never overlaps
//     a source it reads, unless it computes in place: an op that allows it
//     (ggml_op_can_inplace) takes over the memory of a source with the same
//     layout in the same buffer that it is the only consumer of, and that is
//     placed by this allocator and is not a view, an input or an output;
//   - a tensor's memory returns to the free list after its last consumer has
//     run; a view holds its source until the view's own consumers are done;
//   - inputs and outputs are never released.
//
// Free memory is a sorted list of blocks per chunk, merged on release. A
// request takes the free block that wastes least of the memory the chunk
// already needs; when every fitting block would make the chunk larger, the
// one that grows it least. A chunk never grows past the buffer type's max
// size (unless a single tensor is larger): then a new chunk is started, and
// each chunk becomes one backend buffer.
//
// The plan (an address for each node, source and leaf, by position in the
// graph) is kept, so that a later graph with the same structure whose
// tensors fit the planned sizes is placed without planning again.
//
// Host memory for the planning itself can run out: every allocation of it
// goes through ggml_impl_malloc & co. A planner that could not grow its lists
// is marked failed and keeps answering harmlessly until planning ends; the
// reserve then returns false with a log line, the plan is dropped, and the
// buffers of the last good plan stay as they were, so the allocator can be
// used again.

#include "ggml-alloc.h"
#include "ggml-alloc-impl.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"

bool ggml_op_can_inplace(enum ggml_op op) {
    // backends must not assume that dst and these ops' sources are distinct
    switch (op) {
        case GGML_OP_FILL:
        case GGML_OP_SCALE:
        case GGML_OP_DIAG_MASK_ZERO:
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_ADD:
        case GGML_OP_ADD_ID:
        case GGML_OP_ADD1:
        case GGML_OP_SUB:
        case GGML_OP_MUL:
        case GGML_OP_DIV:
        case GGML_OP_SQR:
        case GGML_OP_SQRT:
        case GGML_OP_LOG:
        case GGML_OP_UNARY:
        case GGML_OP_ROPE:
        case GGML_OP_ROPE_BACK:
        case GGML_OP_SILU_BACK:
        case GGML_OP_RMS_NORM:
        case GGML_OP_RMS_NORM_BACK:
        case GGML_OP_SOFT_MAX:
        case GGML_OP_SOFT_MAX_BACK:
            return true;
        default:
            return false;
    }
}

// grow *array to hold at least needed elements; false (and *array as it
// was) when out of memory
static bool grow_array(void ** array, int * capacity, int needed, size_t elem_size) {
    if (needed <= *capacity) {
        return true;
    }
    int cap = *capacity > 0 ? *capacity : 8;
    while (cap < needed) {
        cap = cap > INT32_MAX / 2 ? needed : 2 * cap;
    }
    void * grown = ggml_impl_realloc(*array, (size_t) cap * elem_size);
    if (grown == NULL) {
        return false;
    }
    *array    = grown;
    *capacity = cap;
    return true;
}

//
// planner: placement in the chunks of one virtual buffer
//

struct plan_addr {
    int    chunk;
    size_t offset;
};

struct free_block {
    size_t offset;
    size_t size;
};

struct plan_chunk {
    struct free_block * blocks; // sorted by offset, never adjacent
    int    n_blocks;
    int    cap_blocks;
    size_t capacity;   // the chunk never extends past this
    size_t high_water; // bytes the chunk's buffer needs
};

struct planner {
    size_t alignment;
    size_t max_chunk_size;
    struct plan_chunk * chunks;
    int n_chunks;
    int cap_chunks;
    bool failed; // out of memory since the last reset: the addresses mean nothing
};

static struct planner * planner_new(size_t alignment, size_t max_size) {
    GGML_ASSERT(alignment != 0 && (alignment & (alignment - 1)) == 0 && "alignment must be a power of two");
    struct planner * p = (struct planner *) ggml_impl_calloc(1, sizeof(struct planner));
    if (p == NULL) {
        return NULL;
    }
    p->alignment      = alignment;
    p->max_chunk_size = MIN(max_size, SIZE_MAX / 2); // no sum of two sizes can overflow
    return p;
}

static void planner_reset(struct planner * p) {
    for (int c = 0; c < p->n_chunks; c++) {
        free(p->chunks[c].blocks);
    }
    p->n_chunks = 0;
    p->failed   = false;
}

static void planner_free(struct planner * p) {
    if (p == NULL) {
        return;
    }
    planner_reset(p);
    free(p->chunks);
    free(p);
}

// every placement takes at least one aligned unit, so that even empty
// tensors get an address of their own
static size_t planner_round(const struct planner * p, size_t size) {
    return size == 0 ? p->alignment : GGML_PAD(size, p->alignment);
}

static bool chunk_insert_block(struct plan_chunk * chunk, int pos, size_t offset, size_t size) {
    if (!grow_array((void **) &chunk->blocks, &chunk->cap_blocks, chunk->n_blocks + 1, sizeof(struct free_block))) {
        return false;
    }
    memmove(&chunk->blocks[pos + 1], &chunk->blocks[pos], (size_t)(chunk->n_blocks - pos) * sizeof(struct free_block));
    chunk->blocks[pos] = (struct free_block) { .offset = offset, .size = size };
    chunk->n_blocks++;
    return true;
}

static void chunk_remove_block(struct plan_chunk * chunk, int pos) {
    memmove(&chunk->blocks[pos], &chunk->blocks[pos + 1], (size_t)(chunk->n_blocks - pos - 1) * sizeof(struct free_block));
    chunk->n_blocks--;
}

// the index of the new chunk, or -1 when out of memory
static int planner_new_chunk(struct planner * p, size_t min_size) {
    if (!grow_array((void **) &p->chunks, &p->cap_chunks, p->n_chunks + 1, sizeof(struct plan_chunk))) {
        return -1;
    }
    struct plan_chunk * chunk = &p->chunks[p->n_chunks];
    *chunk = (struct plan_chunk) {
        .blocks     = NULL,
        .n_blocks   = 0,
        .cap_blocks = 0,
        .capacity   = MAX(min_size, p->max_chunk_size),
        .high_water = 0,
    };
    if (!chunk_insert_block(chunk, 0, 0, chunk->capacity)) {
        return -1;
    }
    return p->n_chunks++;
}

static const struct plan_addr plan_addr_none = { .chunk = -1, .offset = SIZE_MAX };

static struct plan_addr planner_alloc(struct planner * p, size_t size) {
    if (p->failed) {
        return plan_addr_none;
    }
    size = planner_round(p, size);

    // best fit: no growth and least waste, else least growth
    int    best_chunk  = -1;
    int    best_block  = -1;
    bool   best_grows  = true;
    size_t best_cost   = SIZE_MAX;
    for (int c = 0; c < p->n_chunks; c++) {
        const struct plan_chunk * chunk = &p->chunks[c];
        for (int i = 0; i < chunk->n_blocks; i++) {
            const struct free_block * b = &chunk->blocks[i];
            if (b->size < size) {
                continue;
            }
            // the part of the block below the high-water mark costs nothing more
            const size_t paid  = b->offset >= chunk->high_water ? 0 : MIN(b->offset + b->size, chunk->high_water) - b->offset;
            const bool   grows = paid < size;
            const size_t cost  = grows ? size - paid : paid - size;
            if ((best_grows && !grows) || (best_grows == grows && cost < best_cost)) {
                best_chunk = c;
                best_block = i;
                best_grows = grows;
                best_cost  = cost;
            }
        }
    }
    if (best_chunk < 0) {
        best_chunk = planner_new_chunk(p, size);
        best_block = 0;
        if (best_chunk < 0) {
            p->failed = true;
            return plan_addr_none;
        }
    }

    struct plan_chunk * chunk = &p->chunks[best_chunk];
    struct free_block * block = &chunk->blocks[best_block];
    const struct plan_addr addr = { .chunk = best_chunk, .offset = block->offset };
    block->offset += size;
    block->size   -= size;
    if (block->size == 0) {
        chunk_remove_block(chunk, best_block);
    }
    chunk->high_water = MAX(chunk->high_water, addr.offset + size);
    return addr;
}

static void planner_release(struct planner * p, struct plan_addr addr, size_t size) {
    if (p->failed) {
        return; // the plan is lost anyway; addr may be none
    }
    size = planner_round(p, size);
    GGML_ASSERT(addr.chunk >= 0 && addr.chunk < p->n_chunks);
    struct plan_chunk * chunk = &p->chunks[addr.chunk];

    int pos = 0;
    while (pos < chunk->n_blocks && chunk->blocks[pos].offset < addr.offset) {
        pos++;
    }
    const bool joins_prev = pos > 0 && chunk->blocks[pos - 1].offset + chunk->blocks[pos - 1].size == addr.offset;
    const bool joins_next = pos < chunk->n_blocks && addr.offset + size == chunk->blocks[pos].offset;
    GGML_ASSERT((pos == 0 || chunk->blocks[pos - 1].offset + chunk->blocks[pos - 1].size <= addr.offset) && "double release");
    GGML_ASSERT((pos == chunk->n_blocks || addr.offset + size <= chunk->blocks[pos].offset) && "double release");

    if (joins_prev && joins_next) {
        chunk->blocks[pos - 1].size += size + chunk->blocks[pos].size;
        chunk_remove_block(chunk, pos);
    } else if (joins_prev) {
        chunk->blocks[pos - 1].size += size;
    } else if (joins_next) {
        chunk->blocks[pos].offset = addr.offset;
        chunk->blocks[pos].size  += size;
    } else if (!chunk_insert_block(chunk, pos, addr.offset, size)) {
        p->failed = true;
    }
}

//
// the backend buffers behind a virtual buffer: one per chunk
//

struct chunk_buffers {
    ggml_backend_buffer_t * buffers;
    uintptr_t             * bases;   // of each buffer, asked once
    int n_buffers;
};

static void chunk_buffers_free(struct chunk_buffers * cb) {
    if (cb == NULL) {
        return;
    }
    for (int i = 0; i < cb->n_buffers; i++) {
        ggml_backend_buffer_free(cb->buffers[i]);
    }
    free(cb->buffers);
    free(cb->bases);
    free(cb);
}

static size_t chunk_buffers_size(const struct chunk_buffers * cb) {
    size_t size = 0;
    for (int i = 0; i < cb->n_buffers; i++) {
        size += ggml_backend_buffer_get_size(cb->buffers[i]);
    }
    return size;
}

// do the buffers have room for every chunk of the plan?
static bool chunk_buffers_fit(const struct chunk_buffers * cb, const struct planner * p) {
    if (cb == NULL || cb->n_buffers < p->n_chunks) {
        return false;
    }
    for (int c = 0; c < p->n_chunks; c++) {
        if (ggml_backend_buffer_get_size(cb->buffers[c]) < p->chunks[c].high_water) {
            return false;
        }
    }
    return true;
}

static struct chunk_buffers * chunk_buffers_alloc(ggml_backend_buffer_type_t buft, const struct planner * p) {
    struct chunk_buffers * cb = (struct chunk_buffers *) ggml_impl_calloc(1, sizeof(struct chunk_buffers));
    if (cb == NULL) {
        return NULL;
    }
    if (p->n_chunks > 0) {
        cb->buffers = (ggml_backend_buffer_t *) ggml_impl_calloc((size_t) p->n_chunks, sizeof(ggml_backend_buffer_t));
        cb->bases   = (uintptr_t *) ggml_impl_calloc((size_t) p->n_chunks, sizeof(uintptr_t));
        if (cb->buffers == NULL || cb->bases == NULL) {
            free(cb->buffers);
            free(cb->bases);
            free(cb);
            return NULL;
        }
    }
    for (int c = 0; c < p->n_chunks; c++) {
        ggml_backend_buffer_t buffer = ggml_backend_buft_alloc_buffer(buft, p->chunks[c].high_water);
        if (buffer == NULL) {
            chunk_buffers_free(cb);
            return NULL;
        }
        ggml_backend_buffer_set_usage(buffer, GGML_BACKEND_BUFFER_USAGE_COMPUTE);
        cb->bases[cb->n_buffers]     = (uintptr_t) ggml_backend_buffer_get_base(buffer);
        cb->buffers[cb->n_buffers++] = buffer;
    }
    return cb;
}

//
// graph allocator
//

// planning state of one tensor (by hash slot)
struct tensor_state {
    int  n_children; // consumers not yet run
    int  n_views;    // views (graph nodes) whose consumers have not all run
    int  buffer_id;
    struct plan_addr addr;
    bool owned;      // holds planned memory that has not been released
    bool placed;     // has an address from this plan
};

// where the plan puts one tensor; buffer_id -1: placed by someone else (or a view)
struct tensor_plan {
    int    buffer_id;
    struct plan_addr addr;
    size_t size_max;
};

struct node_plan {
    struct tensor_plan dst;
    struct tensor_plan src[GGML_MAX_SRC];
};

struct ggml_gallocr {
    ggml_backend_buffer_type_t * bufts; // [n_buffers]
    struct planner ** planners;         // [n_buffers], shared by ids of one buffer type
    struct chunk_buffers ** buffers;    // [n_buffers], shared likewise
    int n_buffers;

    struct ggml_hash_set  hash_set;
    struct tensor_state * states;       // [hash_set.size]
    int                 * graph_index;  // [hash_set.size], for the structure signature

    struct node_plan   * node_plans;
    int n_nodes;
    int cap_nodes;
    struct tensor_plan * leaf_plans;
    int n_leafs;
    int cap_leafs;

    // the planned graph's structure (see graph_signature)
    int32_t * signature;
    int n_signature;
    int cap_signature;

    bool plan_allocated; // the buffers hold the current plan
};

static const struct tensor_plan plan_elsewhere = {
    .buffer_id = -1,
    .addr      = { .chunk = -1, .offset = SIZE_MAX },
    .size_max  = 0,
};

ggml_gallocr_t ggml_gallocr_new_n(ggml_backend_buffer_type_t * bufts, int n_bufs) {
    GGML_ASSERT(bufts != NULL && n_bufs > 0);
    ggml_gallocr_t galloc = (ggml_gallocr_t) ggml_impl_calloc(1, sizeof(struct ggml_gallocr));
    if (galloc == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    galloc->bufts    = (ggml_backend_buffer_type_t *) ggml_impl_calloc((size_t) n_bufs, sizeof(ggml_backend_buffer_type_t));
    galloc->planners = (struct planner **) ggml_impl_calloc((size_t) n_bufs, sizeof(struct planner *));
    galloc->buffers  = (struct chunk_buffers **) ggml_impl_calloc((size_t) n_bufs, sizeof(struct chunk_buffers *));
    galloc->n_buffers = n_bufs;
    if (galloc->bufts == NULL || galloc->planners == NULL || galloc->buffers == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        ggml_gallocr_free(galloc);
        return NULL;
    }
    for (int i = 0; i < n_bufs; i++) {
        GGML_ASSERT(bufts[i] != NULL);
        galloc->bufts[i] = bufts[i];
        for (int j = 0; j < i; j++) {
            if (bufts[j] == bufts[i]) {
                galloc->planners[i] = galloc->planners[j];
                break;
            }
        }
        if (galloc->planners[i] == NULL) {
            galloc->planners[i] = planner_new(ggml_backend_buft_get_alignment(bufts[i]), ggml_backend_buft_get_max_size(bufts[i]));
            if (galloc->planners[i] == NULL) {
                GGML_LOG_ERROR("%s: out of memory\n", __func__);
                ggml_gallocr_free(galloc);
                return NULL;
            }
        }
    }
    return galloc;
}

ggml_gallocr_t ggml_gallocr_new(ggml_backend_buffer_type_t buft) {
    return ggml_gallocr_new_n(&buft, 1);
}

// is buffer id i the first of the ids sharing its planner?
static bool gallocr_first_of_type(ggml_gallocr_t galloc, int i) {
    for (int j = 0; j < i; j++) {
        if (galloc->planners[j] == galloc->planners[i]) {
            return false;
        }
    }
    return true;
}

void ggml_gallocr_free(ggml_gallocr_t galloc) {
    if (galloc == NULL) {
        return;
    }
    for (int i = 0; i < galloc->n_buffers; i++) {
        if (galloc->planners != NULL && galloc->planners[i] != NULL && gallocr_first_of_type(galloc, i)) {
            planner_free(galloc->planners[i]);
            if (galloc->buffers != NULL) {
                chunk_buffers_free(galloc->buffers[i]);
            }
        }
    }
    ggml_hash_set_free(&galloc->hash_set);
    free(galloc->states);
    free(galloc->graph_index);
    free(galloc->bufts);
    free(galloc->planners);
    free(galloc->buffers);
    free(galloc->node_plans);
    free(galloc->leaf_plans);
    free(galloc->signature);
    free(galloc);
}

static struct tensor_state * state_of(ggml_gallocr_t galloc, struct ggml_tensor * t) {
    return &galloc->states[ggml_hash_find_or_insert(&galloc->hash_set, t)];
}

// tensors that already have memory, or will get it from someone else
static bool is_placed_elsewhere(const struct ggml_tensor * t) {
    return t->data != NULL || t->buffer != NULL;
}

static bool is_pinned(const struct ggml_tensor * t) {
    return (t->flags & (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT)) != 0;
}

static size_t planned_size(ggml_gallocr_t galloc, int buffer_id, const struct ggml_tensor * t) {
    return ggml_backend_buft_get_alloc_size(galloc->bufts[buffer_id], t);
}

// can node be computed in the memory of its source parent?
static bool can_take_over(ggml_gallocr_t galloc, const struct ggml_tensor * node, struct ggml_tensor * parent, int buffer_id) {
    if (ggml_impl_is_view(parent) || is_pinned(parent)) {
        return false;
    }
    const struct tensor_state * ps = state_of(galloc, parent);
    return ps->owned && galloc->planners[ps->buffer_id] == galloc->planners[buffer_id] &&
           ps->n_children == 1 && ps->n_views == 0 &&
           ggml_are_same_layout(node, parent);
}

static void place_tensor(ggml_gallocr_t galloc, struct ggml_tensor * t, int buffer_id) {
    GGML_ASSERT(buffer_id >= 0 && buffer_id < galloc->n_buffers && "buffer id out of range");
    struct tensor_state * ts = state_of(galloc, t);
    if (ts->placed || ggml_impl_is_view(t) || is_placed_elsewhere(t)) {
        return;
    }
    ts->placed = true;
    ts->owned  = true;

    if (ggml_op_can_inplace(t->op)) {
        for (int i = 0; i < GGML_MAX_SRC; i++) {
            struct ggml_tensor * parent = t->src[i];
            if (parent != NULL && can_take_over(galloc, t, parent, buffer_id)) {
                struct tensor_state * ps = state_of(galloc, parent);
                ts->buffer_id = ps->buffer_id;
                ts->addr      = ps->addr;
                ps->owned     = false; // the memory now belongs to t
                return;
            }
        }
    }

    ts->buffer_id = buffer_id;
    ts->addr      = planner_alloc(galloc->planners[buffer_id], planned_size(galloc, buffer_id, t));
}

static void release_tensor(ggml_gallocr_t galloc, struct ggml_tensor * t) {
    struct tensor_state * ts = state_of(galloc, t);
    if (!ts->owned || is_pinned(t)) {
        return;
    }
    planner_release(galloc->planners[ts->buffer_id], ts->addr, planned_size(galloc, ts->buffer_id, t));
    ts->owned = false;
}

// a consumer of parent has run
static void consume(ggml_gallocr_t galloc, struct ggml_tensor * parent) {
    struct tensor_state * ps = state_of(galloc, parent);
    ps->n_children--;
    if (ps->n_children != 0 || ps->n_views != 0) {
        return;
    }
    if (ggml_impl_is_view(parent)) {
        struct ggml_tensor * view_src = parent->view_src;
        struct tensor_state * vs = state_of(galloc, view_src);
        vs->n_views--;
        if (vs->n_views == 0 && vs->n_children == 0) {
            release_tensor(galloc, view_src);
        }
    } else {
        release_tensor(galloc, parent);
    }
}

static int buffer_id_at(const int * ids, int i) {
    return ids != NULL ? ids[i] : 0;
}

// false when a planner ran out of memory
static bool plan_graph(ggml_gallocr_t galloc, struct ggml_cgraph * graph, const int * node_buffer_ids, const int * leaf_buffer_ids) {
    ggml_hash_set_reset(&galloc->hash_set);
    memset(galloc->states, 0, galloc->hash_set.size * sizeof(struct tensor_state));

    // leafs first: the application may use them outside the graph too
    for (int i = 0; i < graph->n_leafs; i++) {
        place_tensor(galloc, graph->leafs[i], buffer_id_at(leaf_buffer_ids, i));
    }

    // count consumers and views, and place the inputs before any node
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        const int buffer_id = buffer_id_at(node_buffer_ids, i);
        // a NONE node only orders the graph (the scheduler adds them): it is no view to wait for
        if (ggml_impl_is_view(node) && node->op != GGML_OP_NONE) {
            state_of(galloc, node->view_src)->n_views++;
        }
        if (node->flags & GGML_TENSOR_FLAG_INPUT) {
            place_tensor(galloc, node, buffer_id);
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                continue;
            }
            state_of(galloc, src)->n_children++;
            if (src->flags & GGML_TENSOR_FLAG_INPUT) {
                place_tensor(galloc, src, buffer_id);
            }
        }
    }

    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        const int buffer_id = buffer_id_at(node_buffer_ids, i);
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL) {
                place_tensor(galloc, node->src[j], buffer_id);
            }
        }
        place_tensor(galloc, node, buffer_id);
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL) {
                consume(galloc, node->src[j]);
            }
        }
    }

    for (int i = 0; i < galloc->n_buffers; i++) {
        if (galloc->planners[i]->failed) {
            return false;
        }
    }
    return true;
}

static struct tensor_plan plan_of(ggml_gallocr_t galloc, struct ggml_tensor * t) {
    if (t == NULL || t->view_src != NULL || is_placed_elsewhere(t)) {
        return plan_elsewhere;
    }
    const struct tensor_state * ts = state_of(galloc, t);
    if (!ts->placed) {
        return plan_elsewhere;
    }
    return (struct tensor_plan) {
        .buffer_id = ts->buffer_id,
        .addr      = ts->addr,
        .size_max  = planned_size(galloc, ts->buffer_id, t),
    };
}

static bool record_plan(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    if (!grow_array((void **) &galloc->node_plans, &galloc->cap_nodes, graph->n_nodes, sizeof(struct node_plan)) ||
        !grow_array((void **) &galloc->leaf_plans, &galloc->cap_leafs, graph->n_leafs, sizeof(struct tensor_plan))) {
        return false;
    }
    galloc->n_nodes = graph->n_nodes;
    galloc->n_leafs = graph->n_leafs;
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        struct node_plan * np = &galloc->node_plans[i];
        np->dst = plan_of(galloc, node);
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            np->src[j] = plan_of(galloc, node->src[j]);
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        galloc->leaf_plans[i] = plan_of(galloc, graph->leafs[i]);
    }
    return true;
}

// Make sure the hash set has room for every tensor the graph touches: its
// nodes and leafs, and sources that are neither (as in a graph view). False
// when out of memory: the set is empty then, and the next call tries again.
static bool ensure_hash_capacity(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    size_t n = (size_t)(graph->n_nodes + graph->n_leafs);
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src != NULL && !ggml_hash_contains(&graph->visited_hash_set, src)) {
                n++;
            }
            if (src != NULL && src->view_src != NULL && !ggml_hash_contains(&graph->visited_hash_set, src->view_src)) {
                n++;
            }
        }
        if (node->view_src != NULL && !ggml_hash_contains(&graph->visited_hash_set, node->view_src)) {
            n++;
        }
    }
    n += n / 4 + 1; // open addressing wants slack
    if (galloc->hash_set.size >= n) {
        return true;
    }
    ggml_hash_set_free(&galloc->hash_set);
    free(galloc->states);
    free(galloc->graph_index);
    galloc->states      = NULL;
    galloc->graph_index = NULL;
    struct ggml_hash_set set;
    if (!ggml_hash_set_init(&set, n)) {
        return false;
    }
    galloc->states      = (struct tensor_state *) ggml_impl_malloc(set.size * sizeof(struct tensor_state));
    galloc->graph_index = galloc->states != NULL ? (int *) ggml_impl_malloc(set.size * sizeof(int)) : NULL;
    if (galloc->graph_index == NULL) {
        free(galloc->states);
        galloc->states = NULL;
        ggml_hash_set_free(&set);
        return false;
    }
    galloc->hash_set = set;
    return true;
}

//
// structure signature: what a plan depends on besides the tensor sizes
//
// Per node: op, input/output flags, and where its view source and sources
// are (node i: i, leaf i: n_nodes + i, elsewhere: -2, none: -1); per leaf:
// flags and view source. Two graphs with the same signature have the same
// lifetimes, views and in-place candidates position by position.
//

static int32_t graph_ref(ggml_gallocr_t galloc, const struct ggml_tensor * t) {
    if (t == NULL) {
        return -1;
    }
    const size_t slot = ggml_hash_find(&galloc->hash_set, t);
    if (slot == GGML_HASHSET_FULL || !ggml_bitset_get(galloc->hash_set.used, slot)) {
        return -2;
    }
    return galloc->graph_index[slot];
}

// one value of the signature: stored, or compared with the stored one
static inline bool sig_put(int32_t * sig, int * k, int32_t v, bool compare) {
    if (compare) {
        return sig[(*k)++] == v;
    }
    sig[(*k)++] = v;
    return true;
}

// Write graph's signature to sig, or (compare) tell whether sig holds it
// already: comparing needs no memory of its own.
static bool graph_signature(ggml_gallocr_t galloc, struct ggml_cgraph * graph, int32_t * sig, bool compare) {
    ggml_hash_set_reset(&galloc->hash_set);
    for (int i = 0; i < graph->n_nodes; i++) {
        galloc->graph_index[ggml_hash_find_or_insert(&galloc->hash_set, graph->nodes[i])] = i;
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        galloc->graph_index[ggml_hash_find_or_insert(&galloc->hash_set, graph->leafs[i])] = graph->n_nodes + i;
    }
    const int32_t pin_flags = GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT;
    int k = 0;
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct ggml_tensor * node = graph->nodes[i];
        bool same = sig_put(sig, &k, (int32_t) node->op, compare) &&
                    sig_put(sig, &k, node->flags & pin_flags, compare) &&
                    sig_put(sig, &k, graph_ref(galloc, node->view_src), compare);
        for (int j = 0; j < GGML_MAX_SRC && same; j++) {
            same = sig_put(sig, &k, graph_ref(galloc, node->src[j]), compare);
        }
        if (!same) {
            return false;
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        if (!sig_put(sig, &k, graph->leafs[i]->flags & pin_flags, compare) ||
            !sig_put(sig, &k, graph_ref(galloc, graph->leafs[i]->view_src), compare)) {
            return false;
        }
    }
    return true;
}

static int signature_length(const struct ggml_cgraph * graph) {
    return graph->n_nodes * (3 + GGML_MAX_SRC) + graph->n_leafs * 2;
}

static bool record_signature(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    const int n = signature_length(graph);
    if (!grow_array((void **) &galloc->signature, &galloc->cap_signature, n, sizeof(int32_t))) {
        return false;
    }
    galloc->n_signature = n;
    graph_signature(galloc, graph, galloc->signature, false);
    return true;
}

static bool signature_matches(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    const int n = signature_length(graph);
    if (n != galloc->n_signature || !ensure_hash_capacity(galloc, graph)) {
        return false;
    }
    return graph_signature(galloc, graph, galloc->signature, true);
}

//
// reserve
//

// forget the plan: the next allocation must reserve again
static void gallocr_drop_plan(ggml_gallocr_t galloc) {
    galloc->n_nodes        = 0;
    galloc->n_leafs        = 0;
    galloc->n_signature    = 0;
    galloc->plan_allocated = false;
}

static bool gallocr_reserve(ggml_gallocr_t galloc, struct ggml_cgraph * graph,
                            const int * node_buffer_ids, const int * leaf_buffer_ids, bool size_only) {
    for (int i = 0; i < galloc->n_buffers; i++) {
        if (gallocr_first_of_type(galloc, i)) {
            planner_reset(galloc->planners[i]);
        }
    }
    if (!ensure_hash_capacity(galloc, graph) ||
        !plan_graph(galloc, graph, node_buffer_ids, leaf_buffer_ids) ||
        !record_plan(galloc, graph) ||
        !record_signature(galloc, graph)) {
        GGML_LOG_ERROR("%s: out of host memory while planning a graph of %d nodes and %d leafs\n",
                       __func__, graph->n_nodes, graph->n_leafs);
        gallocr_drop_plan(galloc);
        for (int i = 0; i < galloc->n_buffers; i++) {
            planner_reset(galloc->planners[i]); // no half plan is reported as a size
        }
        return false;
    }

    if (size_only) {
        // the buffers may be too small for this plan: the next allocation must reserve again
        galloc->plan_allocated = false;
        return true;
    }

    for (int i = 0; i < galloc->n_buffers; i++) {
        if (!gallocr_first_of_type(galloc, i)) {
            continue;
        }
        const struct planner * p = galloc->planners[i];
        // with no chunk at all the (empty) set of buffers still serves the views
        if (galloc->buffers[i] != NULL && chunk_buffers_fit(galloc->buffers[i], p)) {
            continue;
        }
        if (galloc->buffers[i] != NULL && galloc->buffers[i]->n_buffers > 0) {
            GGML_LOG_DEBUG("%s: reallocating %s buffer from %.2f MiB\n", __func__,
                           ggml_backend_buft_name(galloc->bufts[i]), (double) chunk_buffers_size(galloc->buffers[i]) / (1024.0 * 1024.0));
        }
        chunk_buffers_free(galloc->buffers[i]);
        galloc->buffers[i] = chunk_buffers_alloc(galloc->bufts[i], p);
        // ids sharing the buffer type share the buffers
        for (int j = i + 1; j < galloc->n_buffers; j++) {
            if (galloc->planners[j] == p) {
                galloc->buffers[j] = galloc->buffers[i];
            }
        }
        if (galloc->buffers[i] == NULL) {
            size_t total = 0;
            for (int c = 0; c < p->n_chunks; c++) {
                total += p->chunks[c].high_water;
            }
            GGML_LOG_ERROR("%s: failed to allocate %s buffer of size %zu\n", __func__, ggml_backend_buft_name(galloc->bufts[i]), total);
            galloc->plan_allocated = false;
            return false;
        }
    }
    galloc->plan_allocated = true;
    return true;
}

bool ggml_gallocr_measure(ggml_gallocr_t galloc, struct ggml_cgraph * graph,
                          const int * node_buffer_ids, const int * leaf_buffer_ids, size_t * sizes) {
    // on failure (logged) the planners are empty: the sizes are 0
    const bool ok = gallocr_reserve(galloc, graph, node_buffer_ids, leaf_buffer_ids, true);
    for (int i = 0; i < galloc->n_buffers; i++) {
        sizes[i] = 0;
        if (!gallocr_first_of_type(galloc, i)) {
            continue; // counted under the first id of its buffer type
        }
        const struct planner * p = galloc->planners[i];
        for (int c = 0; c < p->n_chunks; c++) {
            sizes[i] += p->chunks[c].high_water;
        }
    }
    return ok;
}

void ggml_gallocr_reserve_n_size(ggml_gallocr_t galloc, struct ggml_cgraph * graph,
                                 const int * node_buffer_ids, const int * leaf_buffer_ids, size_t * sizes) {
    ggml_gallocr_measure(galloc, graph, node_buffer_ids, leaf_buffer_ids, sizes);
}

bool ggml_gallocr_reserve_n(ggml_gallocr_t galloc, struct ggml_cgraph * graph, const int * node_buffer_ids, const int * leaf_buffer_ids) {
    return gallocr_reserve(galloc, graph, node_buffer_ids, leaf_buffer_ids, false);
}

bool ggml_gallocr_reserve(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    return ggml_gallocr_reserve_n(galloc, graph, NULL, NULL);
}

//
// allocate from the plan
//

static void init_tensor(ggml_gallocr_t galloc, struct ggml_tensor * t, const struct tensor_plan * tp) {
    if (t->view_src != NULL) {
        // a view of a tensor placed without ggml-backend stays as it is
        if (t->buffer == NULL && t->view_src->buffer != NULL) {
            const enum ggml_status status = ggml_backend_view_init(t);
            GGML_ASSERT(status == GGML_STATUS_SUCCESS && "failed to initialise a view");
        }
        return;
    }
    if (is_placed_elsewhere(t)) {
        return;
    }
    GGML_ASSERT(tp->buffer_id >= 0 && "tensor has no place in the plan");
    const struct chunk_buffers * cb = galloc->buffers[tp->buffer_id];
    GGML_ASSERT(cb != NULL && tp->addr.chunk < cb->n_buffers);
    // the plan was made with the buffer's allocation sizes and the buffers
    // hold every chunk (chunk_buffers_fit): the tensor fits where it goes
    ggml_backend_buffer_t buffer = cb->buffers[tp->addr.chunk];
    t->buffer = buffer;
    t->data   = (void *)(cb->bases[tp->addr.chunk] + tp->addr.offset);
    const enum ggml_status status = ggml_backend_buffer_init_tensor(buffer, t);
    GGML_ASSERT(status == GGML_STATUS_SUCCESS && "failed to initialise a tensor in its buffer");
}

// does the tensor still fit where the plan put it?
static bool fits_plan(ggml_gallocr_t galloc, const struct ggml_tensor * t, const struct tensor_plan * tp) {
    if (t->view_src != NULL || is_placed_elsewhere(t)) {
        return true;
    }
    if (tp->buffer_id < 0) {
        return false; // had memory of its own when planned, has none now
    }
    return planned_size(galloc, tp->buffer_id, t) <= tp->size_max;
}

// Does a tensor stand where the signature says (position ref, -1: none,
// -2: outside the graph)? Positions are checked by pointer, with no hash:
// graph->nodes[ref] must be t. Outside needs the graph's own hash set; a
// graph without one (a view) answers "unknown" (-1) for the full check.
static int ref_matches(const struct ggml_cgraph * graph, const struct ggml_tensor * t, int32_t ref) {
    if (ref >= 0) {
        const struct ggml_tensor * at = ref < graph->n_nodes ? graph->nodes[ref] : graph->leafs[ref - graph->n_nodes];
        return at == t;
    }
    if (ref == -1) {
        return t == NULL;
    }
    if (t == NULL || graph->visited_hash_set.size == 0) {
        return t == NULL ? 0 : -1;
    }
    return !ggml_hash_contains(&graph->visited_hash_set, (struct ggml_tensor *) t);
}

// The plan fits graph when every tensor it places still fits its place and
// the graph's structure is the planned one (see graph_signature), checked in
// one pass. Sources inside the graph are checked where they are nodes or
// leafs; only sources outside it are checked against their consumer's plan.
static bool plan_fits_graph(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    if (!galloc->plan_allocated || galloc->n_nodes != graph->n_nodes || galloc->n_leafs != graph->n_leafs ||
        galloc->n_signature != signature_length(graph)) {
        return false;
    }
    const int32_t pin_flags = GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT;
    const int32_t * sig = galloc->signature;
    bool unknown = false;
    for (int i = 0; i < graph->n_nodes; i++, sig += 3 + GGML_MAX_SRC) {
        const struct ggml_tensor * node = graph->nodes[i];
        const struct node_plan * np = &galloc->node_plans[i];
        if (sig[0] != (int32_t) node->op || sig[1] != (node->flags & pin_flags) || !fits_plan(galloc, node, &np->dst)) {
            return false;
        }
        const int vm = ref_matches(graph, node->view_src, sig[2]);
        if (vm == 0) {
            return false;
        }
        unknown = unknown || vm < 0;
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            const struct ggml_tensor * src = node->src[j];
            const int m = ref_matches(graph, src, sig[3 + j]);
            if (m == 0) {
                return false;
            }
            unknown = unknown || m < 0;
            if (sig[3 + j] == -2 && !fits_plan(galloc, src, &np->src[j])) {
                return false;
            }
        }
    }
    for (int i = 0; i < graph->n_leafs; i++, sig += 2) {
        const struct ggml_tensor * leaf = graph->leafs[i];
        if (sig[0] != (leaf->flags & pin_flags) || !fits_plan(galloc, leaf, &galloc->leaf_plans[i])) {
            return false;
        }
        const int vm = ref_matches(graph, leaf->view_src, sig[1]);
        if (vm == 0) {
            return false;
        }
        unknown = unknown || vm < 0;
    }
    return !unknown || signature_matches(galloc, graph);
}

static void place_by_plan(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    for (int i = 0; i < galloc->n_buffers; i++) {
        if (gallocr_first_of_type(galloc, i) && galloc->buffers[i] != NULL) {
            for (int c = 0; c < galloc->buffers[i]->n_buffers; c++) {
                ggml_backend_buffer_reset(galloc->buffers[i]->buffers[c]);
            }
        }
    }

    for (int i = 0; i < graph->n_leafs; i++) {
        init_tensor(galloc, graph->leafs[i], &galloc->leaf_plans[i]);
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        const struct node_plan * np = &galloc->node_plans[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (node->src[j] != NULL) {
                init_tensor(galloc, node->src[j], &np->src[j]);
            }
        }
        init_tensor(galloc, node, &np->dst);
    }
}

bool ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    if (!plan_fits_graph(galloc, graph)) {
        if (galloc->n_buffers != 1) {
            GGML_LOG_DEBUG("%s: the graph does not fit the plan and has several buffers: call ggml_gallocr_reserve_n\n", __func__);
            return false;
        }
        if (galloc->n_signature > 0) {
            GGML_LOG_DEBUG("%s: the graph does not fit the plan: planning again\n", __func__);
        }
        if (!ggml_gallocr_reserve(galloc, graph)) {
            return false;
        }
    }
    place_by_plan(galloc, graph);
    return true;
}

bool ggml_gallocr_alloc_graph_planned(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    if (!galloc->plan_allocated || galloc->n_nodes != graph->n_nodes || galloc->n_leafs != graph->n_leafs) {
        return false;
    }
    place_by_plan(galloc, graph);
    return true;
}

size_t ggml_gallocr_get_buffer_size(ggml_gallocr_t galloc, int buffer_id) {
    GGML_ASSERT(buffer_id >= 0 && buffer_id < galloc->n_buffers);
    // a buffer shared by several ids counts once, under the first
    if (galloc->buffers[buffer_id] == NULL || !gallocr_first_of_type(galloc, buffer_id)) {
        return 0;
    }
    return chunk_buffers_size(galloc->buffers[buffer_id]);
}
