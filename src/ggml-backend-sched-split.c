// ggml-backend-sched-split.c: assigning each node of a graph to a backend,
// and cutting the graph into splits that each run on one backend.
//
// The passes, in order (the causes GGML_SCHED_DEBUG prints are in brackets):
//   1. from current locations: tensors already in a buffer stay with a
//      backend that can use that buffer [1.dst, 1.vsrc]; graph inputs go to
//      the CPU [1.inp]; nodes that read weights go where the weights are
//      [1.wgt], unless a higher-priority backend asks to offload them [1.off].
//      User assignments (ggml_backend_sched_set_tensor_backend) are kept [usr].
//   2. expansion: assigned non-CPU backends spread down and then up the graph
//      to unassigned neighbours that they support, then every backend does
//      [2.sup]; so the CPU only runs what others cannot.
//   3. upgrade: a node moves to a higher-priority backend using the same
//      buffer type when that backend supports it and its sources [3.upg];
//      nodes still unassigned go to the backend supporting most of their
//      sources [3.best].
//   4. sources: views follow their source [4.vsrc], remaining sources follow
//      their consumer [4.cur]; a node nobody could take goes to the first
//      backend that supports it. Then in-place ops: one placed where the
//      memory it writes cannot be reached moves, with that memory's owner
//      and its views, to a backend that runs them all [4.inpl].
//   5. splitting: a new split starts where the backend changes (or where a
//      weight would have to move between incompatible buffers); every source
//      a split reads from a buffer its backend cannot use gets a copy on the
//      split's backend [4.cpy], made once per split input and reused.
//
// Out of host memory (the lists here grow with the graph): the functions
// return false or NULL, ggml_sched_assign_and_split logs one line, undoes
// what it wrote into the user's graph and returns false.

#include "ggml-backend-sched-impl.h"

#include <stdarg.h>
#include <stdio.h>

//
// debug causes
//

void ggml_sched_set_cause(struct ggml_backend_sched * sched, struct ggml_tensor * t, const char * fmt, ...) {
    if (sched->causes == NULL) {
        return;
    }
    va_list args;
    va_start(args, fmt);
    vsnprintf(sched->causes[sched_hash_id(sched, t)], GGML_SCHED_CAUSE_LEN, fmt, args);
    va_end(args);
}

const char * ggml_sched_get_cause(struct ggml_backend_sched * sched, struct ggml_tensor * t) {
    if (sched->causes == NULL) {
        return "";
    }
    return sched->causes[sched_hash_id(sched, t)];
}

//
// tensor pool
//

static struct ggml_tensor * pool_new_tensor(struct ggml_sched_tensor_pool * pool, const struct ggml_tensor * like, bool view) {
    for (;;) {
        if (pool->cur < pool->n_ctxs) {
            struct ggml_context * ctx = pool->ctxs[pool->cur];
            if (ggml_get_mem_size(ctx) - ggml_used_mem(ctx) >= ggml_tensor_overhead()) {
                if (view) {
                    return ggml_view_tensor(ctx, (struct ggml_tensor *) like);
                }
                struct ggml_tensor * t = ggml_new_tensor(ctx, like->type, GGML_MAX_DIMS, like->ne);
                memcpy(t->nb, like->nb, sizeof(t->nb));
                return t;
            }
            pool->cur++;
            continue;
        }
        // all full: add a context twice as large as the last (NULL when out of memory)
        if (pool->n_ctxs == pool->capacity) {
            const int cap = pool->capacity ? 2 * pool->capacity : 4;
            struct ggml_context ** grown = (struct ggml_context **) ggml_impl_realloc(pool->ctxs, sizeof(*grown) * (size_t) cap);
            if (grown == NULL) {
                return NULL;
            }
            pool->ctxs = grown;
            pool->capacity = cap;
        }
        const size_t n_tensors = pool->tensors_per_ctx ? 2 * pool->tensors_per_ctx : 256;
        struct ggml_init_params params = { n_tensors * ggml_tensor_overhead(), NULL, true };
        struct ggml_context * ctx = ggml_init(params);
        if (ctx == NULL) {
            return NULL;
        }
        pool->tensors_per_ctx = n_tensors;
        pool->ctxs[pool->n_ctxs++] = ctx;
    }
}

struct ggml_tensor * ggml_sched_new_tensor_like(struct ggml_backend_sched * sched, const struct ggml_tensor * t) {
    return pool_new_tensor(&sched->pool, t, false);
}

struct ggml_tensor * ggml_sched_new_view(struct ggml_backend_sched * sched, struct ggml_tensor * t) {
    return pool_new_tensor(&sched->pool, t, true);
}

void ggml_sched_pool_reset(struct ggml_sched_tensor_pool * pool) {
    for (int i = 0; i < pool->n_ctxs; i++) {
        ggml_reset(pool->ctxs[i]);
    }
    pool->cur = 0;
}

void ggml_sched_pool_free(struct ggml_sched_tensor_pool * pool) {
    for (int i = 0; i < pool->n_ctxs; i++) {
        ggml_free(pool->ctxs[i]);
    }
    free(pool->ctxs);
    memset(pool, 0, sizeof(*pool));
}

// room for one more tensor in a list of n; false when out of memory
static bool tensor_list_reserve_one(struct ggml_tensor *** list, int * capacity, int n) {
    if (n < *capacity) {
        return true;
    }
    const int cap = *capacity ? 2 * *capacity : 64;
    struct ggml_tensor ** grown = (struct ggml_tensor **) ggml_impl_realloc(*list, sizeof(**list) * (size_t) cap);
    if (grown == NULL) {
        return false;
    }
    *list = grown;
    *capacity = cap;
    return true;
}

//
// undo log
//

bool ggml_sched_undo_record_rewrite(struct ggml_backend_sched * sched, struct ggml_tensor * node, int j, struct ggml_tensor * copy) {
    struct ggml_sched_undo_log * u = &sched->undo;
    if (u->n_rewrites == u->rewrites_capacity) {
        const int cap = u->rewrites_capacity ? 2 * u->rewrites_capacity : 64;
        struct ggml_sched_src_rewrite * grown = (struct ggml_sched_src_rewrite *) ggml_impl_realloc(u->rewrites, sizeof(*grown) * (size_t) cap);
        if (grown == NULL) {
            return false;
        }
        u->rewrites = grown;
        u->rewrites_capacity = cap;
    }
    u->rewrites[u->n_rewrites++] = (struct ggml_sched_src_rewrite) { node, j, node->src[j], copy };
    return true;
}

bool ggml_sched_undo_record_alloc(struct ggml_backend_sched * sched, struct ggml_tensor * t) {
    struct ggml_sched_undo_log * u = &sched->undo;
    if (!tensor_list_reserve_one(&u->allocated, &u->allocated_capacity, u->n_allocated)) {
        return false;
    }
    u->allocated[u->n_allocated++] = t;
    return true;
}

void ggml_sched_undo(struct ggml_backend_sched * sched, const struct ggml_cgraph * graph) {
    struct ggml_sched_undo_log * u = &sched->undo;
    if (graph == u->graph && graph->uid == u->graph_uid) {
        // newest first, and only where the graph still holds what we wrote:
        // a tensor rebuilt by the user in the same memory is left alone
        for (int i = u->n_rewrites - 1; i >= 0; i--) {
            const struct ggml_sched_src_rewrite * r = &u->rewrites[i];
            if (r->node->src[r->src] == r->copy) {
                r->node->src[r->src] = r->orig;
            }
        }
        for (int i = 0; i < u->n_allocated; i++) {
            struct ggml_tensor * t = u->allocated[i];
            t->data   = NULL;
            t->buffer = NULL;
            t->extra  = NULL;
        }
    }
    u->graph       = graph;
    u->graph_uid   = graph != NULL ? graph->uid : 0; // updated where the graph gets a new uid
    u->n_rewrites  = 0;
    u->n_allocated = 0;
}

void ggml_sched_undo_free(struct ggml_sched_undo_log * undo) {
    free(undo->rewrites);
    free(undo->allocated);
    memset(undo, 0, sizeof(*undo));
}

//
// helpers
//

static bool sched_supports_op(struct ggml_backend_sched * sched, int backend_id, const struct ggml_tensor * op) {
    return ggml_backend_supports_op(sched->backends[backend_id], op);
}

// the highest-priority backend that can use the buffer holding tensor and run op, or -1
static int sched_backend_from_buffer(struct ggml_backend_sched * sched, const struct ggml_tensor * tensor, const struct ggml_tensor * op) {
    ggml_backend_buffer_t buffer = tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
    if (buffer == NULL) {
        return -1;
    }
    for (int b = 0; b < sched->n_backends; b++) {
        if (ggml_backend_supports_buft(sched->backends[b], buffer->buft) && sched_supports_op(sched, b, op)) {
            return b;
        }
    }
    return -1;
}

// can backend_id read t where it is (or will be) allocated?
static bool sched_buffer_supported(struct ggml_backend_sched * sched, struct ggml_tensor * t, int backend_id) {
    ggml_backend_buffer_t buf = t->view_src ? t->view_src->buffer : t->buffer;
    ggml_backend_buffer_type_t buft = NULL;
    if (buf != NULL) {
        buft = buf->buft;
    } else {
        int id = *sched_tensor_backend_id(sched, t);
        if (id == -1 && t->view_src != NULL) {
            id = *sched_tensor_backend_id(sched, t->view_src);
        }
        if (id != -1) {
            buft = sched->bufts[id];
        }
    }
    return buft != NULL && ggml_backend_supports_buft(sched->backends[backend_id], buft);
}

static bool tensor_is_weight(const struct ggml_tensor * t) {
    return t->buffer != NULL && t->buffer->usage == GGML_BACKEND_BUFFER_USAGE_WEIGHTS;
}

//
// pass 1: from the current locations of the tensors
//

static int sched_backend_from_current(struct ggml_backend_sched * sched, struct ggml_tensor * tensor) {
    int id = sched_backend_from_buffer(sched, tensor, tensor);
    if (id != -1) {
        ggml_sched_set_cause(sched, tensor, "1.dst");
        return id;
    }
    if (tensor->view_src != NULL) {
        id = sched_backend_from_buffer(sched, tensor->view_src, tensor);
        if (id != -1) {
            ggml_sched_set_cause(sched, tensor, "1.vsrc");
            return id;
        }
    }
    if (tensor->buffer != NULL || (tensor->view_src != NULL && tensor->view_src->buffer != NULL)) {
        // a tensor that already has memory cannot move to a backend that can use it
        ggml_backend_buffer_t buffer = tensor->view_src ? tensor->view_src->buffer : tensor->buffer;
        GGML_ABORT("pre-allocated tensor (%s) in a buffer (%s) that no backend of the scheduler can run %s on",
                   tensor->name, ggml_backend_buffer_name(buffer), ggml_op_desc(tensor));
    }
    if (tensor->flags & GGML_TENSOR_FLAG_INPUT) {
        ggml_sched_set_cause(sched, tensor, "1.inp");
        return sched->n_backends - 1;
    }

    // Nodes that read weights run where the weights are. Not for ROPE and
    // FLASH_ATTN_EXT: their small weight-like sources (frequency factors,
    // sinks) should not decide where the big computation goes.
    if (tensor->op == GGML_OP_ROPE || tensor->op == GGML_OP_FLASH_ATTN_EXT) {
        return -1;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * src = tensor->src[i];
        if (src == NULL || !tensor_is_weight(src)) {
            continue;
        }
        const int src_id = sched_backend_from_buffer(sched, src, tensor);
        // weights in host memory used on the CPU: a faster backend may want the work
        if (sched->op_offload && src_id == sched->n_backends - 1 && ggml_backend_buffer_is_host(src->buffer)) {
            for (int b = 0; b < src_id; b++) {
                if (sched_supports_op(sched, b, tensor) && ggml_backend_offload_op(sched->backends[b], tensor)) {
                    ggml_sched_set_cause(sched, tensor, "1.off");
                    return b;
                }
            }
        }
        ggml_sched_set_cause(sched, tensor, "1.wgt%d", i);
        return src_id;
    }
    return -1;
}

static void sched_assign_from_current(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * leaf = graph->leafs[i];
        int * id = sched_tensor_backend_id(sched, leaf);
        if (*id == -1) { // keep user assignments
            *id = sched_backend_from_current(sched, leaf);
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        int * id = sched_tensor_backend_id(sched, node);
        if (*id == -1) {
            *id = sched_backend_from_current(sched, node);
        }
    }
}

//
// pass 2: expansion to neighbours
//

// One sweep over the nodes (down or up): the backend of the last assigned
// node spreads to the unassigned nodes after it that it supports. With
// skip_cpu, the lowest-priority backend (the CPU) does not spread.
static void sched_expand_sweep(struct ggml_backend_sched * sched, struct ggml_cgraph * graph, bool down, bool skip_cpu) {
    int cur = -1;
    for (int k = 0; k < graph->n_nodes; k++) {
        struct ggml_tensor * node = graph->nodes[down ? k : graph->n_nodes - 1 - k];
        if (sched_is_view_op(node->op)) {
            continue;
        }
        int * id = sched_tensor_backend_id(sched, node);
        if (*id != -1) {
            cur = skip_cpu && *id == sched->n_backends - 1 ? -1 : *id;
        } else if (cur != -1 && sched_supports_op(sched, cur, node)) {
            *id = cur;
            ggml_sched_set_cause(sched, node, "2.sup");
        }
    }
}

static void sched_expand(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    sched_expand_sweep(sched, graph, true,  true);
    sched_expand_sweep(sched, graph, false, true);
    sched_expand_sweep(sched, graph, true,  false);
    sched_expand_sweep(sched, graph, false, false);
}

//
// pass 3: upgrades, and the nodes expansion could not reach
//

static int sched_count_supported_sources(struct ggml_backend_sched * sched, struct ggml_tensor * node, int b) {
    int n = 0;
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        struct ggml_tensor * src = node->src[j];
        if (src == NULL) {
            continue;
        }
        const bool assigned = *sched_tensor_backend_id(sched, src) != -1 ||
                              (src->view_src != NULL && *sched_tensor_backend_id(sched, src->view_src) != -1);
        if (assigned && sched_buffer_supported(sched, src, b)) {
            n++;
        }
    }
    return n;
}

static bool sched_sources_supported(struct ggml_backend_sched * sched, struct ggml_tensor * node, int b) {
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        if (node->src[j] != NULL && !sched_buffer_supported(sched, node->src[j], b)) {
            return false;
        }
    }
    return true;
}

static void sched_upgrade(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (sched_is_view_op(node->op)) {
            continue;
        }
        int * id = sched_tensor_backend_id(sched, node);
        if (*id == -1) {
            // the backend that supports the node and most of its sources
            int best = -1;
            for (int b = 0; b < sched->n_backends; b++) {
                if (!sched_supports_op(sched, b, node)) {
                    continue;
                }
                const int n = sched_count_supported_sources(sched, node, b);
                if (n > best) {
                    best = n;
                    *id = b;
                    ggml_sched_set_cause(sched, node, "3.best");
                }
            }
        } else {
            // a higher-priority backend with the same buffer type, if it can take the node
            for (int b = 0; b < *id; b++) {
                if (sched->bufts[b] == sched->bufts[*id] && sched_supports_op(sched, b, node) &&
                    sched_sources_supported(sched, node, b)) {
                    *id = b;
                    ggml_sched_set_cause(sched, node, "3.upg");
                    break;
                }
            }
        }
    }
}

//
// pass 4: sources and views
//

static bool sched_assign_sources(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        int * id = sched_tensor_backend_id(sched, node);
        if (node->view_src != NULL && *id == -1) {
            *id = *sched_tensor_backend_id(sched, node->view_src);
            ggml_sched_set_cause(sched, node, "4.vsrc");
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                continue;
            }
            int * src_id = sched_tensor_backend_id(sched, src);
            if (*src_id != -1) {
                continue;
            }
            if (src->view_src != NULL) {
                *src_id = *sched_tensor_backend_id(sched, src->view_src);
                ggml_sched_set_cause(sched, src, "4.vsrc");
            } else {
                *src_id = *id;
                ggml_sched_set_cause(sched, src, "4.cur");
            }
        }
        for (int b = 0; b < sched->n_backends && *id == -1; b++) {
            if (sched_supports_op(sched, b, node)) {
                *id = b;
                ggml_sched_set_cause(sched, node, "4.any");
            }
        }
        if (*id == -1) {
            GGML_LOG_ERROR("%s: no backend of the scheduler supports node %d (%s, op %s, type %s)\n",
                           __func__, i, node->name, ggml_op_desc(node), ggml_type_name(node->type));
            return false;
        }
    }
    return true;
}

//
// pass 4b: in-place ops and the memory they write
//

// every node on the memory of root (in-place ops, views): is b able to run them all?
static bool sched_runs_users_of(struct ggml_backend_sched * sched, struct ggml_cgraph * graph, struct ggml_tensor * root, int b) {
    if (root->op != GGML_OP_NONE && !sched_supports_op(sched, b, root)) {
        return false;
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (node->view_src == root && !sched_supports_op(sched, b, node)) {
            return false;
        }
    }
    return true;
}

// An in-place op (ggml_*_inplace, SET_ROWS, CPY: a node that is a view of
// its root) writes the root's memory. The root is allocated in its backend's
// buffer type, so a backend that cannot use that memory cannot run the op
// (it would write through a pointer into another device's memory): where an
// in-place op ended up on such a backend (the root's backend lacks the op),
// the root and everything on its memory move to the highest-priority
// backend that runs them all [4.inpl]; users already on a backend that can
// use that backend's memory stay. Roots already in a buffer were placed in
// pass 1. False when some root has no such backend, or out of memory.
static bool sched_assign_inplace(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    struct ggml_tensor ** roots = NULL;
    int n_roots = 0;
    int cap_roots = 0;
    bool ok = true;
    for (int i = 0; i < graph->n_nodes && ok; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        struct ggml_tensor * root = node->view_src;
        if (root == NULL || root->buffer != NULL || sched_is_view_op(node->op)) {
            continue;
        }
        const int root_id = *sched_tensor_backend_id(sched, root);
        const int node_id = *sched_tensor_backend_id(sched, node);
        if (root_id == node_id || (root_id != -1 && ggml_backend_supports_buft(sched->backends[node_id], sched->bufts[root_id]))) {
            continue;
        }
        bool known = false;
        for (int k = 0; k < n_roots && !known; k++) {
            known = roots[k] == root;
        }
        if (!known) {
            ok = tensor_list_reserve_one(&roots, &cap_roots, n_roots);
            if (ok) {
                roots[n_roots++] = root;
            } else {
                GGML_LOG_ERROR("%s: out of host memory\n", __func__);
            }
        }
    }
    for (int k = 0; k < n_roots && ok; k++) {
        struct ggml_tensor * root = roots[k];
        int b = 0;
        while (b < sched->n_backends && !sched_runs_users_of(sched, graph, root, b)) {
            b++;
        }
        if (b == sched->n_backends) {
            GGML_LOG_ERROR("%s: no backend of the scheduler runs %s (%s) and the in-place ops on its memory\n",
                           __func__, root->name, ggml_op_desc(root));
            ok = false;
            break;
        }
        *sched_tensor_backend_id(sched, root) = b;
        ggml_sched_set_cause(sched, root, "4.inpl");
        for (int i = 0; i < graph->n_nodes; i++) {
            struct ggml_tensor * node = graph->nodes[i];
            int * id = sched_tensor_backend_id(sched, node);
            if (node->view_src == root && (sched_is_view_op(node->op) || *id == -1 ||
                                           !ggml_backend_supports_buft(sched->backends[*id], sched->bufts[b]))) {
                *id = b;
                ggml_sched_set_cause(sched, node, "4.inpl");
            }
        }
        for (int i = 0; i < graph->n_leafs; i++) {
            if (graph->leafs[i]->view_src == root) {
                *sched_tensor_backend_id(sched, graph->leafs[i]) = b;
            }
        }
    }
    free(roots);
    return ok;
}

//
// pass 5: splitting
//

// NULL when out of memory
static struct ggml_backend_sched_split * sched_new_split(struct ggml_backend_sched * sched, int backend_id, int i_start) {
    if (sched->n_splits == sched->splits_capacity) {
        const int cap = sched->splits_capacity ? 2 * sched->splits_capacity : 16;
        struct ggml_backend_sched_split * grown = (struct ggml_backend_sched_split *) ggml_impl_realloc(sched->splits, sizeof(*grown) * (size_t) cap);
        if (grown == NULL) {
            return NULL;
        }
        memset(grown + sched->splits_capacity, 0, sizeof(*grown) * (size_t)(cap - sched->splits_capacity));
        sched->splits = grown;
        sched->splits_capacity = cap;
    }
    struct ggml_backend_sched_split * split = &sched->splits[sched->n_splits++];
    split->backend_id = backend_id;
    split->i_start    = i_start;
    split->i_end      = i_start;
    split->n_inputs   = 0;
    return split;
}


// n_copies tensors like src for backend_id (copy cur_copy may be src itself);
// false when out of memory (then none is recorded)
static bool sched_make_copies(struct ggml_backend_sched * sched, struct ggml_tensor * src, size_t src_id, int backend_id, bool self_is_current) {
    ggml_backend_t backend = sched->backends[backend_id];
    for (int c = 0; c < sched->n_copies; c++) {
        struct ggml_tensor * copy;
        if (self_is_current && c == sched->cur_copy) {
            copy = src;
        } else {
            copy = ggml_sched_new_tensor_like(sched, src);
            if (copy == NULL) {
                for (int k = 0; k < c; k++) {
                    *sched_tensor_copy(sched, src_id, backend_id, k) = NULL;
                }
                return false;
            }
            ggml_format_name(copy, "%s#%s#%d", ggml_backend_name(backend), src->name, c);
        }
        if (sched->n_copies > 1) {
            // inputs are placed first, and never overwritten: the pipeline
            // writes the next graph's copy while this one runs
            ggml_set_input(copy);
            ggml_set_output(copy);
        }
        *sched_tensor_copy(sched, src_id, backend_id, c) = copy;
        ggml_sched_set_cause(sched, copy, "4.cpy");
    }
    return true;
}

// should a node on the current split's backend still start a new split?
// yes when it reads a weight the split's backend cannot use: a new split
// lets the memory of the previous split's copied weights be reused
static bool sched_node_needs_new_split(struct ggml_backend_sched * sched, struct ggml_tensor * node, int cur_backend_id) {
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        struct ggml_tensor * src = node->src[j];
        if (src == NULL || !tensor_is_weight(src)) {
            continue;
        }
        const int src_backend_id = *sched_tensor_backend_id(sched, src);
        if (src_backend_id != cur_backend_id && !sched_buffer_supported(sched, src, cur_backend_id)) {
            return true;
        }
    }
    return false;
}

// false when out of memory
static bool sched_split(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    sched->n_splits = 0;

    // the first split takes the backend of the first node that computes
    int i = 0;
    int cur_backend_id = sched->n_backends - 1;
    for (; i < graph->n_nodes; i++) {
        if (!sched_is_view_op(graph->nodes[i]->op)) {
            cur_backend_id = *sched_tensor_backend_id(sched, graph->nodes[i]);
            break;
        }
    }
    struct ggml_backend_sched_split * split = sched_new_split(sched, cur_backend_id, 0);
    if (split == NULL) {
        return false;
    }

    for (; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (sched_is_view_op(node->op)) {
            continue;
        }
        const int node_backend_id = *sched_tensor_backend_id(sched, node);
        GGML_ASSERT(node_backend_id != -1);

        const bool new_split = node_backend_id != cur_backend_id ||
            (split->n_inputs > 0 && sched_node_needs_new_split(sched, node, cur_backend_id));
        if (new_split) {
            split->i_end = i;
            split = sched_new_split(sched, node_backend_id, i);
            if (split == NULL) {
                return false;
            }
            cur_backend_id = node_backend_id;
        }

        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                continue;
            }
            const size_t src_id = sched_hash_id(sched, src);
            const int src_backend_id = sched->hv_tensor_backend_ids[src_id];
            GGML_ASSERT(src_backend_id != -1);

            // user inputs get n_copies versions in their own backend for pipelining
            if ((src->flags & GGML_TENSOR_FLAG_INPUT) && sched->n_copies > 1 &&
                *sched_tensor_copy(sched, src_id, src_backend_id, 0) == NULL) {
                if (!tensor_list_reserve_one(&sched->graph_inputs, &sched->graph_inputs_capacity, sched->n_graph_inputs) ||
                    !sched_make_copies(sched, src, src_id, src_backend_id, true)) {
                    return false;
                }
                sched->graph_inputs[sched->n_graph_inputs++] = src;
            }

            if (src_backend_id != cur_backend_id && !sched_buffer_supported(sched, src, cur_backend_id)) {
                // read from a copy on this split's backend, made once per split
                if (*sched_tensor_copy(sched, src_id, cur_backend_id, 0) == NULL) {
                    if (!tensor_list_reserve_one(&split->inputs, &split->inputs_capacity, split->n_inputs) ||
                        !sched_make_copies(sched, src, src_id, cur_backend_id, false)) {
                        return false;
                    }
                    split->inputs[split->n_inputs++] = src;
                }
                struct ggml_tensor * copy = *sched_tensor_copy(sched, src_id, cur_backend_id, sched->cur_copy);
                if (!ggml_sched_undo_record_rewrite(sched, node, j, copy)) {
                    return false;
                }
                node->src[j] = copy;
            }
        }
    }
    split->i_end = graph->n_nodes;
    return true;
}

//
// the graph that is allocated: input copies placed at the start of their split
//

// room for n nodes and n leafs in sched->graph and the id arrays; false when
// out of memory (what did grow is kept: it is merely larger than needed)
static bool sched_reserve_ids(struct ggml_backend_sched * sched, int n) {
    if (n <= sched->ids_capacity) {
        return true;
    }
    int ** arrays[4] = { &sched->node_backend_ids, &sched->leaf_backend_ids,
                         &sched->prev_node_backend_ids, &sched->prev_leaf_backend_ids };
    for (int k = 0; k < 4; k++) {
        int * grown = (int *) ggml_impl_realloc(*arrays[k], sizeof(int) * (size_t) n);
        if (grown == NULL) {
            return false;
        }
        // new previous ids are unknown (-1): the next allocation is planned afresh
        for (int j = sched->ids_capacity; j < n; j++) {
            grown[j] = -1;
        }
        *arrays[k] = grown;
    }
    struct ggml_tensor ** nodes = (struct ggml_tensor **) ggml_impl_realloc(sched->graph.nodes, sizeof(*nodes) * (size_t) n);
    if (nodes == NULL) {
        return false;
    }
    sched->graph.nodes = nodes;
    struct ggml_tensor ** leafs = (struct ggml_tensor **) ggml_impl_realloc(sched->graph.leafs, sizeof(*leafs) * (size_t) n);
    if (leafs == NULL) {
        return false;
    }
    sched->graph.leafs = leafs;
    sched->graph.size  = n;
    sched->ids_capacity = n;
    return true;
}

// a view of input that keeps it alive until it is copied: made anew, or on
// a replay the one made for the same input of the last graph, pointed at
// input as ggml_view_tensor would (NULL when out of memory)
static struct ggml_tensor * sched_input_dep(struct ggml_backend_sched * sched, struct ggml_tensor * input, int k) {
    if (!sched->build_deps_reuse) {
        struct ggml_tensor * dep = ggml_sched_new_view(sched, input);
        return dep != NULL && ggml_sched_deps_push(sched, dep) ? dep : NULL;
    }
    GGML_ASSERT(k < sched->shape.n_deps);
    struct ggml_tensor * dep = sched->shape.deps[k];
    struct ggml_tensor * view_src = input->view_src != NULL ? input->view_src : input;
    dep->view_src  = view_src;
    dep->view_offs = input->view_src != NULL ? input->view_offs : 0;
    dep->data      = view_src->data != NULL ? (char *) view_src->data + dep->view_offs : NULL;
    dep->buffer    = NULL;
    dep->extra     = NULL;
    return dep;
}

// false when out of memory
bool ggml_sched_build_graph_copy(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    int total_inputs = 0;
    for (int s = 0; s < sched->n_splits; s++) {
        total_inputs += sched->splits[s].n_inputs;
    }
    const int n_nodes = graph->n_nodes + 2 * total_inputs;
    const int n_leafs = graph->n_leafs + (sched->n_copies > 1 ? sched->n_copies * (sched->n_graph_inputs + total_inputs) : 0);
    if (!sched_reserve_ids(sched, MAX(n_nodes, n_leafs))) {
        return false;
    }

    // the previous ids become prev_*, for the re-planning check
    int * tmp = sched->node_backend_ids;
    sched->node_backend_ids = sched->prev_node_backend_ids;
    sched->prev_node_backend_ids = tmp;
    tmp = sched->leaf_backend_ids;
    sched->leaf_backend_ids = sched->prev_leaf_backend_ids;
    sched->prev_leaf_backend_ids = tmp;

    struct ggml_cgraph * copy = &sched->graph;
    copy->n_nodes = 0;
    copy->n_leafs = 0;
    int n_deps = 0;

    for (int s = 0; s < sched->n_splits; s++) {
        struct ggml_backend_sched_split * split = &sched->splits[s];
        split->graph = ggml_graph_view(graph, split->i_start, split->i_end);

        // let the backend reorder its split before the allocation sees it
        ggml_backend_t backend = sched->backends[split->backend_id];
        if (backend->iface.graph_optimize != NULL) {
            backend->iface.graph_optimize(backend, &split->graph);
        }

        for (int j = 0; j < split->n_inputs; j++) {
            struct ggml_tensor * input = split->inputs[j];
            const size_t input_id = sched_hash_id(sched, input);
            struct ggml_tensor * input_cpy = *sched_tensor_copy(sched, input_id, split->backend_id, sched->cur_copy);

            // a use of the input at this point keeps it alive until it is copied
            struct ggml_tensor * input_dep = sched_input_dep(sched, input, n_deps++);
            if (input_dep == NULL) {
                // the ids are half written: as unknown, they make the next allocation plan afresh
                for (int i = 0; i < sched->ids_capacity; i++) {
                    sched->node_backend_ids[i] = -1;
                    sched->leaf_backend_ids[i] = -1;
                }
                return false;
            }
            input_dep->src[0] = input;
            sched->node_backend_ids[copy->n_nodes] = sched->hv_tensor_backend_ids[input_id];
            copy->nodes[copy->n_nodes++] = input_dep;

            // and the copy is allocated at the start of the split
            sched->node_backend_ids[copy->n_nodes] = split->backend_id;
            copy->nodes[copy->n_nodes++] = input_cpy;
        }

        // a replay knows the backends by position, unless the nodes were reordered
        const bool by_position = sched->build_deps_reuse && !sched->any_graph_optimize;
        for (int j = split->i_start; j < split->i_end; j++) {
            sched->node_backend_ids[copy->n_nodes] = by_position ? sched->shape.ids[j] : *sched_tensor_backend_id(sched, graph->nodes[j]);
            copy->nodes[copy->n_nodes++] = graph->nodes[j];
        }
    }

    if (sched->n_copies > 1) {
        // every copy of every input is a leaf: allocated first, never reused
        for (int i = 0; i < sched->n_graph_inputs; i++) {
            struct ggml_tensor * input = sched->graph_inputs[i];
            const size_t id = sched_hash_id(sched, input);
            const int backend_id = sched->hv_tensor_backend_ids[id];
            for (int c = 0; c < sched->n_copies; c++) {
                sched->leaf_backend_ids[copy->n_leafs] = backend_id;
                copy->leafs[copy->n_leafs++] = *sched_tensor_copy(sched, id, backend_id, c);
            }
        }
        for (int s = 0; s < sched->n_splits; s++) {
            struct ggml_backend_sched_split * split = &sched->splits[s];
            for (int j = 0; j < split->n_inputs; j++) {
                const size_t id = sched_hash_id(sched, split->inputs[j]);
                for (int c = 0; c < sched->n_copies; c++) {
                    sched->leaf_backend_ids[copy->n_leafs] = split->backend_id;
                    copy->leafs[copy->n_leafs++] = *sched_tensor_copy(sched, id, split->backend_id, c);
                }
            }
        }
    }

    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * leaf = graph->leafs[i];
        sched->leaf_backend_ids[copy->n_leafs] = *sched_tensor_backend_id(sched, leaf);
        copy->leafs[copy->n_leafs++] = leaf;
    }

    for (int s = 0; s < sched->n_splits; s++) {
        sched->splits[s].graph.uid = ggml_graph_next_uid();
    }
    return true;
}

//
// all passes
//

bool ggml_sched_assign_and_split(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    ggml_sched_undo(sched, graph);

    sched->n_splits       = 0;
    sched->n_graph_inputs = 0;
    sched->is_reset       = false;
    // the copies and views of the last graph are gone: its splits cannot be replayed
    ggml_sched_pool_reset(&sched->pool);
    sched->shape.valid    = false;
    sched->shape.n_deps   = 0;

    graph->uid = ggml_graph_next_uid();
    sched->undo.graph_uid = graph->uid;

    sched_assign_from_current(sched, graph);
    sched_expand(sched, graph);
    sched_upgrade(sched, graph);
    if (!sched_assign_sources(sched, graph) || !sched_assign_inplace(sched, graph)) {
        return false;
    }
    if (!sched_split(sched, graph)) {
        GGML_LOG_ERROR("%s: out of host memory while splitting a graph of %d nodes\n", __func__, graph->n_nodes);
        ggml_sched_undo(sched, graph); // the sources it redirected so far
        return false;
    }

    if (sched->debug) {
        ggml_sched_print_assignments(sched, graph);
    }

    if (!ggml_sched_build_graph_copy(sched, graph)) {
        GGML_LOG_ERROR("%s: out of host memory while splitting a graph of %d nodes\n", __func__, graph->n_nodes);
        ggml_sched_undo(sched, graph);
        return false;
    }
    return true;
}

//
// GGML_SCHED_DEBUG output
//

static const char * fmt_size(size_t size, char * buf, size_t len) {
    if (size >= 1024 * 1024) {
        snprintf(buf, len, "%zuM", size / 1024 / 1024);
    } else if (size >= 1024) {
        snprintf(buf, len, "%zuK", size / 1024);
    } else {
        snprintf(buf, len, "%zuB", size);
    }
    return buf;
}

void ggml_sched_print_assignments(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    char sz[32];
    int cur_split = 0;
    for (int i = 0; i < graph->n_nodes; i++) {
        if (cur_split < sched->n_splits && i == sched->splits[cur_split].i_start) {
            const struct ggml_backend_sched_split * split = &sched->splits[cur_split];
            GGML_LOG_DEBUG("\n## SPLIT #%d: %s # %d inputs", cur_split,
                           ggml_backend_name(sched->backends[split->backend_id]), split->n_inputs);
            for (int j = 0; j < split->n_inputs; j++) {
                GGML_LOG_DEBUG("%s[%s (%5.5s)] ", j == 0 ? ": " : "", split->inputs[j]->name,
                               fmt_size(ggml_nbytes(split->inputs[j]), sz, sizeof(sz)));
            }
            GGML_LOG_DEBUG("\n");
            cur_split++;
        }
        struct ggml_tensor * node = graph->nodes[i];
        if (sched_is_view_op(node->op) && sched->debug < 2) {
            continue;
        }
        const int id = *sched_tensor_backend_id(sched, node);
        GGML_LOG_DEBUG("node #%3d (%10.10s): %20.20s (%5.5s) [%5.5s %8.8s]%s", i, ggml_op_desc(node), node->name,
                       fmt_size(ggml_nbytes(node), sz, sizeof(sz)),
                       id >= 0 ? ggml_backend_name(sched->backends[id]) : "NULL", ggml_sched_get_cause(sched, node),
                       sched->debug < 2 ? "\n" : ":");
        if (sched->debug < 2) {
            continue;
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                continue;
            }
            // input copies were made for this node's split, on its backend
            int sid = *sched_tensor_backend_id(sched, src);
            if (sid < 0 && strcmp(ggml_sched_get_cause(sched, src), "4.cpy") == 0) {
                sid = id;
            }
            GGML_LOG_DEBUG(" %20.20s (%5.5s) [%5.5s %8.8s]", src->name, fmt_size(ggml_nbytes(src), sz, sizeof(sz)),
                           sid >= 0 ? ggml_backend_name(sched->backends[sid]) : "NULL", ggml_sched_get_cause(sched, src));
        }
        GGML_LOG_DEBUG("\n");
    }
}
