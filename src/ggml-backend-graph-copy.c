// ggml-backend-graph-copy.c: placing single tensors in buffers, and copying
// a whole computed graph (structure and data) into another backend's memory
// so that two backends can be compared node by node.

#include "ggml-backend-impl.h"
#include "ggml-impl.h"

//
// placing tensors
//

enum ggml_status ggml_backend_view_init(struct ggml_tensor * tensor) {
    GGML_ASSERT(tensor != NULL);
    GGML_ASSERT(tensor->buffer == NULL && "view already initialised");
    GGML_ASSERT(tensor->view_src != NULL && "not a view");
    GGML_ASSERT(tensor->view_src->buffer != NULL && "the view's source has no buffer");
    GGML_ASSERT(tensor->view_src->data != NULL && "the view's source is not allocated");

    tensor->buffer = tensor->view_src->buffer;
    tensor->data   = (char *) tensor->view_src->data + tensor->view_offs;
    return ggml_backend_buffer_init_tensor(tensor->buffer, tensor);
}

enum ggml_status ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, void * addr) {
    GGML_ASSERT(buffer != NULL);
    GGML_ASSERT(tensor != NULL);
    GGML_ASSERT(tensor->buffer == NULL && "tensor already has a buffer");
    GGML_ASSERT(tensor->data == NULL && "tensor already allocated");
    GGML_ASSERT(tensor->view_src == NULL && "views are placed with ggml_backend_view_init");

    // addresses of non-host buffers need not point to memory: compare them as integers
    const uintptr_t base = (uintptr_t) ggml_backend_buffer_get_base(buffer);
    const uintptr_t at   = (uintptr_t) addr;
    const size_t    size = ggml_backend_buffer_get_alloc_size(buffer, tensor);
    if (at < base || size > ggml_backend_buffer_get_size(buffer) || at - base > ggml_backend_buffer_get_size(buffer) - size) {
        GGML_ABORT("%s: tensor '%s' (%zu bytes) at offset %zu does not fit in a buffer of %zu bytes",
                   __func__, tensor->name, size, (size_t)(at - base), ggml_backend_buffer_get_size(buffer));
    }

    tensor->buffer = buffer;
    tensor->data   = addr;
    return ggml_backend_buffer_init_tensor(buffer, tensor);
}

//
// graph copy
//

// The tensors reachable from a graph, each listed after its sources and its
// view source, with a copy for each (indexed like the list).
struct graph_copier {
    struct ggml_hash_set  set;
    int                 * index;   // by hash slot: position in order
    struct ggml_tensor ** order;
    int                   n_order;
    struct ggml_tensor ** copies;  // by position in order
};

static void copier_visit(struct graph_copier * gc, struct ggml_tensor * t) {
    if (t == NULL || ggml_hash_contains(&gc->set, t)) {
        return;
    }
    const size_t slot = ggml_hash_insert(&gc->set, t);
    GGML_ASSERT(t->data != NULL && "graph must be allocated");
    copier_visit(gc, t->view_src);
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        copier_visit(gc, t->src[i]);
    }
    gc->index[slot] = gc->n_order;
    gc->order[gc->n_order++] = t;
}

static struct ggml_tensor * copier_copy_of(const struct graph_copier * gc, const struct ggml_tensor * t) {
    if (t == NULL) {
        return NULL;
    }
    const size_t slot = ggml_hash_find(&gc->set, t);
    GGML_ASSERT(slot != GGML_HASHSET_FULL && ggml_bitset_get(gc->set.used, slot));
    return gc->copies[gc->index[slot]];
}

static void copier_free(struct graph_copier * gc) {
    ggml_hash_set_free(&gc->set);
    free(gc->index);
    free(gc->order);
    free(gc->copies);
}

// every tensor of the graph can be reached from its nodes and leafs, plus
// view sources that are not themselves in the graph
static bool copier_collect(struct graph_copier * gc, struct ggml_cgraph * graph) {
    const size_t max_tensors = 2 * (size_t)(graph->n_nodes + graph->n_leafs) + graph->visited_hash_set.size + 1;
    gc->set    = ggml_hash_set_new(max_tensors);
    gc->index  = (int *) malloc(gc->set.size * sizeof(int));
    gc->order  = (struct ggml_tensor **) malloc(gc->set.size * sizeof(struct ggml_tensor *));
    gc->copies = (struct ggml_tensor **) calloc(gc->set.size, sizeof(struct ggml_tensor *));
    gc->n_order = 0;
    if (gc->index == NULL || gc->order == NULL || gc->copies == NULL) {
        return false;
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        copier_visit(gc, graph->leafs[i]);
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        copier_visit(gc, graph->nodes[i]);
    }
    return true;
}

static struct ggml_tensor * dup_with_layout(struct ggml_context * ctx, const struct ggml_tensor * src) {
    struct ggml_tensor * dup = ggml_dup_tensor(ctx, src);
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        dup->nb[i] = src->nb[i];
    }
    return dup;
}

// the copied graph lists the copies of the nodes and leafs in the same order
static struct ggml_cgraph * copier_build_graph(const struct graph_copier * gc, struct ggml_context * ctx,
                                               struct ggml_cgraph * graph, size_t size) {
    struct ggml_cgraph * copy = ggml_new_graph_custom(ctx, size, false);
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * leaf = copier_copy_of(gc, graph->leafs[i]);
        ggml_hash_insert(&copy->visited_hash_set, leaf);
        copy->leafs[copy->n_leafs++] = leaf;
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = copier_copy_of(gc, graph->nodes[i]);
        const size_t slot = ggml_hash_insert(&copy->visited_hash_set, node);
        const size_t src_slot = ggml_hash_find(&graph->visited_hash_set, graph->nodes[i]);
        const bool known = src_slot != GGML_HASHSET_FULL && ggml_bitset_get(graph->visited_hash_set.used, src_slot);
        if (slot != GGML_HASHSET_ALREADY_EXISTS) {
            copy->use_counts[slot] = known ? graph->use_counts[src_slot] : 0;
        }
        copy->nodes[copy->n_nodes++] = node;
    }
    return copy;
}

static struct ggml_backend_graph_copy graph_copy_failed(struct graph_copier * gc, struct ggml_context * ctx_allocated,
                                                        struct ggml_context * ctx_unallocated) {
    copier_free(gc);
    ggml_free(ctx_allocated);
    ggml_free(ctx_unallocated);
    return (struct ggml_backend_graph_copy) {
        .buffer          = NULL,
        .ctx_allocated   = NULL,
        .ctx_unallocated = NULL,
        .graph           = NULL,
    };
}

struct ggml_backend_graph_copy ggml_backend_graph_copy(ggml_backend_t backend, struct ggml_cgraph * graph) {
    GGML_ASSERT(backend != NULL && graph != NULL);

    struct graph_copier gc = { 0 };
    if (!copier_collect(&gc, graph)) {
        GGML_LOG_ERROR("%s: out of memory for the graph copy's bookkeeping\n", __func__);
        return graph_copy_failed(&gc, NULL, NULL);
    }

    size_t n_views = 0;
    for (int i = 0; i < gc.n_order; i++) {
        n_views += gc.order[i]->view_src != NULL;
    }
    const size_t n_owned    = (size_t) gc.n_order - n_views;
    const size_t graph_size = (size_t) MAX(1, MAX(graph->size, graph->n_nodes + graph->n_leafs));

    struct ggml_context * ctx_allocated = ggml_init((struct ggml_init_params) {
        .mem_size   = n_owned * ggml_tensor_overhead() + ggml_graph_overhead_custom(graph_size, false),
        .mem_buffer = NULL,
        .no_alloc   = true,
    });
    struct ggml_context * ctx_unallocated = ggml_init((struct ggml_init_params) {
        .mem_size   = (n_views + 1) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc   = true,
    });
    if (ctx_allocated == NULL || ctx_unallocated == NULL) {
        GGML_LOG_ERROR("%s: failed to allocate contexts for the graph copy\n", __func__);
        return graph_copy_failed(&gc, ctx_allocated, ctx_unallocated);
    }

    // sources come before their users in gc.order, so their copies exist
    for (int i = 0; i < gc.n_order; i++) {
        const struct ggml_tensor * src = gc.order[i];
        struct ggml_tensor * dst = dup_with_layout(src->view_src != NULL ? ctx_unallocated : ctx_allocated, src);
        if (src->view_src != NULL) {
            dst->view_src  = copier_copy_of(&gc, src->view_src);
            dst->view_offs = src->view_offs;
        }
        dst->op    = src->op;
        dst->flags = src->flags;
        memcpy(dst->op_params, src->op_params, sizeof(dst->op_params));
        ggml_set_name(dst, src->name);
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            dst->src[j] = copier_copy_of(&gc, src->src[j]);
        }
        gc.copies[i] = dst;
    }

    ggml_backend_buffer_t buffer = ggml_backend_alloc_ctx_tensors(ctx_allocated, backend);
    if (buffer == NULL) {
        GGML_LOG_ERROR("%s: failed to allocate the buffer for the graph copy on %s\n", __func__, ggml_backend_name(backend));
        return graph_copy_failed(&gc, ctx_allocated, ctx_unallocated);
    }

    for (int i = 0; i < gc.n_order; i++) {
        struct ggml_tensor * dst = gc.copies[i];
        if (dst->view_src != NULL) {
            const enum ggml_status status = ggml_backend_view_init(dst);
            GGML_ASSERT(status == GGML_STATUS_SUCCESS && "failed to initialise a view in the graph copy");
        } else {
            ggml_backend_tensor_copy(gc.order[i], dst);
        }
    }

    struct ggml_cgraph * copy_graph = copier_build_graph(&gc, ctx_allocated, graph, graph_size);
    copier_free(&gc);

    return (struct ggml_backend_graph_copy) {
        .buffer          = buffer,
        .ctx_allocated   = ctx_allocated,
        .ctx_unallocated = ctx_unallocated,
        .graph           = copy_graph,
    };
}

void ggml_backend_graph_copy_free(struct ggml_backend_graph_copy copy) {
    ggml_backend_buffer_free(copy.buffer);
    ggml_free(copy.ctx_allocated);
    ggml_free(copy.ctx_unallocated);
}

static bool op_is_view(enum ggml_op op) {
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

bool ggml_backend_compare_graph_backend(ggml_backend_t backend1, ggml_backend_t backend2, struct ggml_cgraph * graph,
                                        ggml_backend_eval_callback callback, void * user_data,
                                        struct ggml_tensor const * const * test_nodes, size_t num_test_nodes) {
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(backend2, graph);
    if (copy.buffer == NULL) {
        return false;
    }

    struct ggml_cgraph * g1 = graph;
    struct ggml_cgraph * g2 = copy.graph;
    GGML_ASSERT(g1->n_nodes == g2->n_nodes);

    if (num_test_nodes != 0) {
        GGML_ASSERT(test_nodes != NULL);
        // compute everything, then look only at the nodes asked for
        ggml_backend_graph_compute(backend1, g1);
        ggml_backend_graph_compute(backend2, g2);

        bool found = false;
        for (int i = 0; i < g1->n_nodes; i++) {
            for (size_t j = 0; j < num_test_nodes; j++) {
                if (g1->nodes[i] == test_nodes[j]) {
                    callback(i, g1->nodes[i], g2->nodes[i], user_data);
                    found = true;
                }
            }
        }
        GGML_ASSERT(found && "none of the test nodes is a node of the graph");
    } else {
        // node by node: the callback sees each result as soon as it exists and may stop early
        for (int i = 0; i < g1->n_nodes; i++) {
            struct ggml_tensor * t1 = g1->nodes[i];
            struct ggml_tensor * t2 = g2->nodes[i];
            GGML_ASSERT(t1->op == t2->op && ggml_are_same_layout(t1, t2));

            struct ggml_cgraph g1v = ggml_graph_view(g1, i, i + 1);
            struct ggml_cgraph g2v = ggml_graph_view(g2, i, i + 1);
            ggml_backend_graph_compute(backend1, &g1v);
            ggml_backend_graph_compute(backend2, &g2v);

            if (op_is_view(t1->op)) {
                continue;
            }
            if (!callback(i, t1, t2, user_data)) {
                break;
            }
        }
    }

    ggml_backend_graph_copy_free(copy);
    return true;
}
