// ggml-backend-sched.c: the multi-backend scheduler's lifecycle, allocation
// and computation (the assignment and splitting passes are in
// ggml-backend-sched-split.c).
//
// Computing a graph: split it (once per graph), allocate every split's
// tensors with one graph allocator holding a buffer per backend, then run the
// splits in order: copy each split's inputs to its backend, compute the split
// (asynchronously where the backend can), record an event.
//
// Pipeline parallelism (parallel = true): every split input exists in
// n_copies versions. Graph k uses copy k % n_copies, so the inputs of the
// next graph can be written while the previous one is still running on
// another backend; the events of a copy tell when it is free again.
//
// Reuse: a graph that was split and allocated is computed again without
// splitting or planning as long as it is the same graph, unchanged (checked
// with a signature of its nodes). A different or changed graph is split and
// planned again, as if ggml_backend_sched_reset had been called.
//
// Out of host memory while splitting or planning: the call returns false (or
// zero sizes) with a log line, the user's graph is left as it was given, and
// the scheduler is reset, ready for the next call.

#include "ggml-backend-sched-impl.h"
#include "ggml-alloc-impl.h"

#include <stdio.h>

//
// graph identity
//

// the nodes, their ops and sources, and the leafs: what splitting depends on
// (a sum of one term per tensor: see ggml_sched_node_term)
static uint64_t graph_signature(const struct ggml_cgraph * graph) {
    uint64_t h = ggml_sched_sig_mix((uint64_t) graph->n_nodes << 32 | (uint64_t)(uint32_t) graph->n_leafs);
    for (int i = 0; i < graph->n_nodes; i++) {
        h += ggml_sched_node_term(graph->nodes[i], i);
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        h += ggml_sched_leaf_term(graph->leafs[i], i);
    }
    return h;
}

//
// helpers
//

static int sched_backend_index(ggml_backend_sched_t sched, ggml_backend_t backend) {
    for (int i = 0; i < sched->n_backends; i++) {
        if (sched->backends[i] == backend) {
            return i;
        }
    }
    return -1;
}

static ggml_backend_event_t sched_event(ggml_backend_sched_t sched, int backend_id, int copy) {
    return sched->events[backend_id * sched->n_copies + copy];
}

static bool sched_graph_fits(ggml_backend_sched_t sched, const struct ggml_cgraph * graph) {
    // the hash set holds the graph's tensors and their view sources
    if ((size_t) graph->n_nodes + (size_t) graph->n_leafs > sched->hash_set.size / 3) {
        GGML_LOG_ERROR("%s: the graph has %d nodes and %d leafs, more than the scheduler was created for "
                       "(graph_size %zu); create it with a larger graph_size\n",
                       __func__, graph->n_nodes, graph->n_leafs, sched->hash_set.size / 3);
        return false;
    }
    return true;
}

static void sched_synchronize_backends(ggml_backend_sched_t sched) {
    for (int i = 0; i < sched->n_backends; i++) {
        ggml_backend_synchronize(sched->backends[i]);
    }
}

//
// creation
//

ggml_backend_sched_t ggml_backend_sched_new(
        ggml_backend_t * backends,
        ggml_backend_buffer_type_t * bufts,
        int n_backends,
        size_t graph_size,
        bool parallel,
        bool op_offload) {
    GGML_ASSERT(n_backends > 0);
    GGML_ASSERT(graph_size > 0);
    GGML_ASSERT(ggml_backend_dev_type(ggml_backend_get_device(backends[n_backends - 1])) == GGML_BACKEND_DEVICE_TYPE_CPU &&
                "the last backend of the scheduler must be the CPU");

    struct ggml_backend_sched * sched = (struct ggml_backend_sched *) ggml_impl_calloc(1, sizeof(*sched));
    if (sched == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }

    const char * debug = getenv("GGML_SCHED_DEBUG");
    sched->debug      = debug ? atoi(debug) : 0;
    sched->n_backends = n_backends;
    sched->n_copies   = parallel ? GGML_SCHED_PARALLEL_COPIES : 1;
    sched->op_offload = op_offload;

    // nodes, leafs and the view sources they name
    const bool have_hash_set = ggml_hash_set_init(&sched->hash_set, 3 * graph_size);
    const size_t n_slots = sched->hash_set.size;

    sched->backends              = (ggml_backend_t *) ggml_impl_calloc((size_t) n_backends, sizeof(ggml_backend_t));
    sched->bufts                 = (ggml_backend_buffer_type_t *) ggml_impl_calloc((size_t) n_backends, sizeof(ggml_backend_buffer_type_t));
    sched->events                = (ggml_backend_event_t *) ggml_impl_calloc((size_t)(n_backends * sched->n_copies), sizeof(ggml_backend_event_t));
    sched->hv_tensor_backend_ids = (int *) ggml_impl_malloc(n_slots * sizeof(int));
    sched->hv_graph_pos          = (int *) ggml_impl_malloc(n_slots * sizeof(int));
    sched->hv_tensor_copies      = (struct ggml_tensor **) ggml_impl_malloc(n_slots * (size_t) n_backends * (size_t) sched->n_copies * sizeof(struct ggml_tensor *));
    if (sched->debug) {
        sched->causes = (char (*)[GGML_SCHED_CAUSE_LEN]) ggml_impl_calloc(n_slots, GGML_SCHED_CAUSE_LEN);
    }
    if (!have_hash_set || sched->backends == NULL || sched->bufts == NULL || sched->events == NULL ||
        sched->hv_tensor_backend_ids == NULL || sched->hv_graph_pos == NULL || sched->hv_tensor_copies == NULL || (sched->debug && sched->causes == NULL)) {
        GGML_LOG_ERROR("%s: out of memory for a scheduler of %d backends and graph size %zu\n", __func__, n_backends, graph_size);
        ggml_backend_sched_free(sched);
        return NULL;
    }

    for (int b = 0; b < n_backends; b++) {
        sched->backends[b] = backends[b];
        sched->bufts[b]    = bufts ? bufts[b] : ggml_backend_get_default_buffer_type(backends[b]);
        GGML_ASSERT(ggml_backend_supports_buft(backends[b], sched->bufts[b]) && "a backend cannot use the buffer type given for it");
        sched->any_graph_optimize = sched->any_graph_optimize || backends[b]->iface.graph_optimize != NULL;
        if (sched->n_copies > 1) {
            for (int c = 0; c < sched->n_copies; c++) {
                sched->events[b * sched->n_copies + c] = ggml_backend_event_new(ggml_backend_get_device(backends[b]));
            }
        }
    }

    sched->galloc = ggml_gallocr_new_n(sched->bufts, n_backends);
    if (sched->galloc == NULL) {
        ggml_backend_sched_free(sched);
        return NULL;
    }

    ggml_backend_sched_reset(sched);
    return sched;
}

void ggml_backend_sched_free(ggml_backend_sched_t sched) {
    if (sched == NULL) {
        return;
    }
    if (sched->events != NULL) {
        for (int i = 0; i < sched->n_backends * sched->n_copies; i++) {
            ggml_backend_event_free(sched->events[i]);
        }
    }
    ggml_gallocr_free(sched->galloc);
    ggml_sched_pool_free(&sched->pool);
    ggml_sched_undo_free(&sched->undo);
    ggml_sched_shape_free(&sched->shape);
    ggml_hash_set_free(&sched->hash_set);
    for (int i = 0; i < sched->splits_capacity; i++) {
        free(sched->splits[i].inputs);
    }
    free(sched->splits);
    free(sched->graph_inputs);
    free(sched->hv_tensor_backend_ids);
    free(sched->hv_graph_pos);
    free(sched->hv_tensor_copies);
    free(sched->causes);
    free(sched->node_backend_ids);
    free(sched->leaf_backend_ids);
    free(sched->prev_node_backend_ids);
    free(sched->prev_leaf_backend_ids);
    free(sched->graph.nodes);
    free(sched->graph.leafs);
    free(sched->events);
    free(sched->bufts);
    free(sched->backends);
    free(sched);
}

void ggml_backend_sched_reset(ggml_backend_sched_t sched) {
    // only the set: the values of a slot are cleared when it is taken again
    if (!sched->is_reset) {
        ggml_hash_set_reset(&sched->hash_set);
        sched->is_reset = true;
    }
    sched->is_alloc        = false;
    sched->split_graph_ptr = NULL;
}

//
// splitting and allocation
//

void ggml_backend_sched_split_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    if (!sched_graph_fits(sched, graph)) {
        return;
    }
    ggml_sched_assign_and_split(sched, graph);
}

static bool sched_assignment_changed(ggml_backend_sched_t sched) {
    for (int i = 0; i < sched->graph.n_nodes; i++) {
        const int cur = sched->node_backend_ids[i], prev = sched->prev_node_backend_ids[i];
        if (cur != prev && (prev < 0 || sched->bufts[cur] != sched->bufts[prev])) {
            return true;
        }
    }
    for (int i = 0; i < sched->graph.n_leafs; i++) {
        const int cur = sched->leaf_backend_ids[i], prev = sched->prev_leaf_backend_ids[i];
        if (cur != prev && (prev < 0 || sched->bufts[cur] != sched->bufts[prev])) {
            return true;
        }
    }
    return false;
}

// the tensors of the user's graph that the allocation is about to place;
// false when out of memory
static bool sched_record_allocations(ggml_backend_sched_t sched, const struct ggml_cgraph * graph) {
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * t = graph->nodes[i];
        if (t->data == NULL && t->buffer == NULL && !ggml_sched_undo_record_alloc(sched, t)) {
            return false;
        }
    }
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * t = graph->leafs[i];
        if (t->data == NULL && t->buffer == NULL && !ggml_sched_undo_record_alloc(sched, t)) {
            return false;
        }
    }
    return true;
}

// place the tensors of sched->graph, planning again only when needed
static bool sched_alloc_splits(ggml_backend_sched_t sched) {
    if (!sched_assignment_changed(sched) && ggml_gallocr_alloc_graph(sched->galloc, &sched->graph)) {
        return true;
    }
    // planning again may move split inputs: nothing may still be using them
    sched_synchronize_backends(sched);
    if (!ggml_gallocr_reserve_n(sched->galloc, &sched->graph, sched->node_backend_ids, sched->leaf_backend_ids)) {
        GGML_LOG_ERROR("%s: failed to allocate the compute buffers\n", __func__);
        return false;
    }
    if (!ggml_gallocr_alloc_graph(sched->galloc, &sched->graph)) {
        GGML_LOG_ERROR("%s: failed to allocate the graph\n", __func__);
        return false;
    }
    return true;
}

void ggml_backend_sched_reserve_size(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph, size_t * sizes) {
    GGML_ASSERT(sizes != NULL);
    ggml_backend_sched_reset(sched);
    ggml_backend_sched_synchronize(sched);
    if (!sched_graph_fits(sched, measure_graph) || !ggml_sched_assign_and_split(sched, measure_graph)) {
        memset(sizes, 0, sizeof(size_t) * (size_t) sched->n_backends);
        ggml_backend_sched_reset(sched);
        return;
    }
    if (!ggml_gallocr_measure(sched->galloc, &sched->graph, sched->node_backend_ids, sched->leaf_backend_ids, sizes)) {
        ggml_sched_undo(sched, measure_graph); // the sources redirected to input copies
        ggml_backend_sched_reset(sched);
    }
}

bool ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph) {
    ggml_backend_sched_synchronize(sched);
    if (!sched_graph_fits(sched, measure_graph) || !ggml_sched_assign_and_split(sched, measure_graph)) {
        ggml_backend_sched_reset(sched);
        return false;
    }
    const bool ok = ggml_gallocr_reserve_n(sched->galloc, &sched->graph, sched->node_backend_ids, sched->leaf_backend_ids);
    if (!ok) {
        GGML_LOG_ERROR("%s: failed to allocate the compute buffers\n", __func__);
        ggml_sched_undo(sched, measure_graph);
    }
    ggml_backend_sched_reset(sched);
    return ok;
}

bool ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    if (sched->is_alloc) {
        if (graph == sched->split_graph_ptr && graph_signature(graph) == sched->split_graph_sig) {
            return true; // this very graph is allocated already
        }
        ggml_backend_sched_reset(sched);
    }
    if (!sched_graph_fits(sched, graph)) {
        return false;
    }

    sched->cur_copy  = sched->next_copy;
    sched->next_copy = (sched->next_copy + 1) % sched->n_copies;

    // the shape is taken from the graph as the user made it
    ggml_sched_undo(sched, graph);
    const bool same_shape = ggml_sched_shape_begin(sched, graph);
    bool replayed = same_shape && ggml_sched_shape_replay(sched, graph);
    if (!replayed && !ggml_sched_assign_and_split(sched, graph)) {
        ggml_backend_sched_reset(sched);
        return false;
    }
    if (!sched_record_allocations(sched, graph)) {
        GGML_LOG_ERROR("%s: out of host memory for the list of the graph's tensors\n", __func__);
        ggml_sched_undo(sched, graph);
        ggml_backend_sched_reset(sched);
        return false;
    }
    // a replayed graph has the copy graph of the plan: placed without checks
    if (!(replayed && ggml_gallocr_alloc_graph_planned(sched->galloc, &sched->graph)) && !sched_alloc_splits(sched)) {
        ggml_sched_undo(sched, graph); // the sources redirected to input copies
        ggml_backend_sched_reset(sched);
        return false;
    }
    if (!replayed) {
        ggml_sched_shape_record(sched, graph);
    }

    sched->is_alloc        = true;
    sched->split_graph_ptr = graph;
    // after splitting: sources now name the copies (a replay has kept the sum up to date)
    sched->split_graph_sig = replayed ? sched->shape.graph_sig : graph_signature(graph);
    return true;
}

//
// computation
//

// copy one input of a split to the split's backend
static void sched_copy_input(ggml_backend_sched_t sched, int split_backend_id, struct ggml_tensor * input) {
    ggml_backend_t split_backend = sched->backends[split_backend_id];
    ggml_backend_t input_backend = ggml_backend_sched_get_tensor_backend(sched, input);
    struct ggml_tensor * input_cpy = *sched_tensor_copy(sched, sched_hash_id(sched, input), split_backend_id, sched->cur_copy);
    ggml_backend_event_t event = sched_event(sched, split_backend_id, sched->cur_copy);

    if (input->flags & GGML_TENSOR_FLAG_INPUT) {
        // the user may overwrite their input right after we return: copy now
        if (event != NULL) {
            ggml_backend_event_synchronize(event);
        } else {
            ggml_backend_synchronize(split_backend);
        }
        ggml_backend_tensor_copy(input, input_cpy);
        return;
    }

    // the split backend must be done with this copy (from n_copies graphs ago)
    if (event != NULL) {
        ggml_backend_event_wait(split_backend, event);
    } else {
        ggml_backend_synchronize(split_backend);
    }
    if (split_backend->iface.cpy_tensor_async != NULL &&
        split_backend->iface.cpy_tensor_async(input_backend, split_backend, input, input_cpy)) {
        return;
    }
    // a synchronous copy: the producer must have finished, and the consumer
    // must not be using the destination (guaranteed by the copies and events)
    ggml_backend_synchronize(input_backend);
    if (event != NULL) {
        ggml_backend_event_synchronize(event);
    } else {
        ggml_backend_synchronize(split_backend);
    }
    ggml_backend_tensor_copy(input, input_cpy);
}

// run a split, stopping at the nodes the eval callback wants to see
static enum ggml_status sched_compute_split_observed(ggml_backend_sched_t sched, struct ggml_backend_sched_split * split, bool * stop) {
    ggml_backend_t backend = sched->backends[split->backend_id];
    for (int j0 = 0; j0 < split->graph.n_nodes; j0++) {
        struct ggml_tensor * t = split->graph.nodes[j0];
        bool need = sched->callback_eval(t, true, sched->callback_eval_user_data);
        int j1 = j0;
        // nodes nobody observes run together with the next observed one
        while (!need && j1 < split->graph.n_nodes - 1) {
            t = split->graph.nodes[++j1];
            need = sched->callback_eval(t, true, sched->callback_eval_user_data);
        }
        struct ggml_cgraph gv = ggml_graph_view(&split->graph, j0, j1 + 1);
        const enum ggml_status ec = ggml_backend_graph_compute_async(backend, &gv);
        if (ec != GGML_STATUS_SUCCESS) {
            return ec;
        }
        ggml_backend_synchronize(backend);
        if (need && !sched->callback_eval(t, false, sched->callback_eval_user_data)) {
            *stop = true;
            break;
        }
        j0 = j1;
    }
    return GGML_STATUS_SUCCESS;
}

static enum ggml_status sched_compute_splits(ggml_backend_sched_t sched) {
    int prev_backend_id = -1;
    for (int s = 0; s < sched->n_splits; s++) {
        struct ggml_backend_sched_split * split = &sched->splits[s];
        const int backend_id = split->backend_id;
        ggml_backend_t backend = sched->backends[backend_id];

        // without inputs nothing orders this split after the previous one,
        // whose memory the allocator may have given to this split
        if (split->n_inputs == 0 && prev_backend_id >= 0 && prev_backend_id != backend_id) {
            ggml_backend_event_t ev = sched_event(sched, prev_backend_id, sched->cur_copy);
            if (ev != NULL) {
                ggml_backend_event_synchronize(ev);
            } else {
                ggml_backend_synchronize(sched->backends[prev_backend_id]);
            }
        }

        for (int i = 0; i < split->n_inputs; i++) {
            sched_copy_input(sched, backend_id, split->inputs[i]);
        }

        if (sched->callback_eval == NULL) {
            const enum ggml_status ec = ggml_backend_graph_compute_async(backend, &split->graph);
            if (ec != GGML_STATUS_SUCCESS) {
                return ec;
            }
        } else {
            bool stop = false;
            const enum ggml_status ec = sched_compute_split_observed(sched, split, &stop);
            if (ec != GGML_STATUS_SUCCESS) {
                return ec;
            }
            if (stop) {
                break;
            }
        }

        ggml_backend_event_t ev = sched_event(sched, backend_id, sched->cur_copy);
        if (ev != NULL) {
            ggml_backend_event_record(ev, backend);
        }
        prev_backend_id = backend_id;
    }
    return GGML_STATUS_SUCCESS;
}

enum ggml_status ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    const enum ggml_status err = ggml_backend_sched_graph_compute_async(sched, graph);
    ggml_backend_sched_synchronize(sched);
    return err;
}

enum ggml_status ggml_backend_sched_graph_compute_async(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    if (!ggml_backend_sched_alloc_graph(sched, graph)) {
        return GGML_STATUS_ALLOC_FAILED;
    }
    return sched_compute_splits(sched);
}

void ggml_backend_sched_synchronize(ggml_backend_sched_t sched) {
    sched_synchronize_backends(sched);
    if (!sched->is_alloc) {
        // between graphs, start again from copy 0: the same graph then always
        // uses the same copy, which keeps backend-side graph caches valid
        sched->next_copy = 0;
    }
}

//
// accessors
//

void ggml_backend_sched_set_eval_callback(ggml_backend_sched_t sched, ggml_backend_sched_eval_callback callback, void * user_data) {
    sched->callback_eval           = callback;
    sched->callback_eval_user_data = user_data;
}

int ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched) {
    return sched->n_splits;
}

int ggml_backend_sched_get_n_copies(ggml_backend_sched_t sched) {
    return sched->n_copies;
}

int ggml_backend_sched_get_n_backends(ggml_backend_sched_t sched) {
    return sched->n_backends;
}

ggml_backend_t ggml_backend_sched_get_backend(ggml_backend_sched_t sched, int i) {
    GGML_ASSERT(i >= 0 && i < sched->n_backends);
    return sched->backends[i];
}

ggml_backend_buffer_type_t ggml_backend_sched_get_buffer_type(ggml_backend_sched_t sched, ggml_backend_t backend) {
    const int i = sched_backend_index(sched, backend);
    GGML_ASSERT(i >= 0 && "backend is not part of the scheduler");
    return sched->bufts[i];
}

size_t ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend) {
    const int i = sched_backend_index(sched, backend);
    GGML_ASSERT(i >= 0 && "backend is not part of the scheduler");
    return ggml_gallocr_get_buffer_size(sched->galloc, i);
}

void ggml_backend_sched_set_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node, ggml_backend_t backend) {
    const int i = sched_backend_index(sched, backend);
    GGML_ASSERT(i >= 0 && "backend is not part of the scheduler");
    if (sched->is_alloc) {
        // a pin is for the next graph: forget the allocated one now, so that
        // allocating the next graph keeps the pin
        ggml_backend_sched_reset(sched);
    }
    *sched_tensor_backend_id(sched, node) = i;
    ggml_sched_set_cause(sched, node, "usr");
    sched->is_reset = false;
}

ggml_backend_t ggml_backend_sched_get_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node) {
    const int i = *sched_tensor_backend_id(sched, node);
    return i == -1 ? NULL : sched->backends[i];
}
