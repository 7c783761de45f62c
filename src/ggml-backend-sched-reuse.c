// ggml-backend-sched-reuse.c: splitting a new graph of the last graph's shape
// without running the assignment and splitting passes again.
//
// An inference engine builds a new graph of the same shape for every token,
// resets the scheduler and allocates the graph. The passes of
// ggml-backend-sched-split.c ask every backend about every node several
// times; for a graph of the shape split last, their answer is already known.
//
// The shape of a graph is a row of values per position (node i: i, leaf i:
// n_nodes + i) holding everything the passes and the allocation plan read:
// op, type, flags, sizes, strides, view offset, op parameters, the buffer it
// already has (and its type and usage) and, instead of pointers, the
// positions of its sources and view source. It is computed once per graph,
// before splitting, and compared exactly with the last graph's (memcmp, no
// hash: two graphs that differ anywhere are never taken for each other).
// A graph with a source outside it, user-pinned tensors (they make
// sched->is_reset false), or debug output always takes the passes.
//
// Equal shapes give equal splits: every position gets the backend its
// position had, split inputs and redirected sources are found by position,
// and the input copies made for the last graph (tensors of the scheduler's
// own pool, same type and shape) serve again. The allocation plan fits the
// copy graph unchanged, so ggml_gallocr places it without checking. Backends
// that reorder their splits (graph_optimize) are asked again, and the replay
// is kept only if they reorder the new graph the same way.

#include "ggml-backend-sched-impl.h"

// values per position in a shape
enum {
    SHAPE_KIND,      // op | type << 16 | flags << 24
    SHAPE_VIEW_SRC,  // position of the view source, -1: none
    SHAPE_SRC,       // GGML_MAX_SRC positions of the sources, -1: none
    SHAPE_NE = SHAPE_SRC + GGML_MAX_SRC,
    SHAPE_NB = SHAPE_NE + GGML_MAX_DIMS,
    SHAPE_VIEW_OFFS = SHAPE_NB + GGML_MAX_DIMS,
    SHAPE_PARAMS,    // op_params, 8 bytes per value
    SHAPE_BUFFER = SHAPE_PARAMS + GGML_MAX_OP_PARAMS / 8,
    SHAPE_BUFT,
    SHAPE_MEMORY,    // data != NULL | buffer usage << 1
    SHAPE_STRIDE,
};

// a tensor's position in the graph being allocated; -2 when outside it
static int64_t shape_ref(struct ggml_backend_sched * sched, const struct ggml_tensor * t) {
    if (t == NULL) {
        return -1;
    }
    const size_t slot = ggml_hash_find(&sched->hash_set, t);
    if (slot == GGML_HASHSET_FULL || !ggml_bitset_get(sched->hash_set.used, slot)) {
        return -2;
    }
    return sched->hv_graph_pos[slot];
}

// false when a source or view source lies outside the graph
static bool shape_row(struct ggml_backend_sched * sched, const struct ggml_tensor * t, int64_t * row) {
    row[SHAPE_KIND]     = (int64_t) t->op | (int64_t) t->type << 16 | (int64_t) t->flags << 24;
    row[SHAPE_VIEW_SRC] = shape_ref(sched, t->view_src);
    bool inside = row[SHAPE_VIEW_SRC] != -2;
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        row[SHAPE_SRC + j] = shape_ref(sched, t->src[j]);
        inside = inside && row[SHAPE_SRC + j] != -2;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        row[SHAPE_NE + d] = t->ne[d];
        row[SHAPE_NB + d] = (int64_t) t->nb[d];
    }
    row[SHAPE_VIEW_OFFS] = (int64_t) t->view_offs;
    memcpy(&row[SHAPE_PARAMS], t->op_params, GGML_MAX_OP_PARAMS);
    row[SHAPE_BUFFER] = (int64_t)(uintptr_t) t->buffer;
    row[SHAPE_BUFT]   = t->buffer != NULL ? (int64_t)(uintptr_t) t->buffer->buft : 0;
    row[SHAPE_MEMORY] = (t->data != NULL) | (t->buffer != NULL ? (int64_t) t->buffer->usage << 1 : 0);
    return inside;
}

static bool grow(void ** array, int * capacity, int needed, size_t elem_size) {
    if (needed <= *capacity) {
        return true;
    }
    int cap = *capacity ? *capacity : 64;
    while (cap < needed) {
        cap *= 2;
    }
    void * grown = ggml_impl_realloc(*array, (size_t) cap * elem_size);
    if (grown == NULL) {
        return false;
    }
    *array = grown;
    *capacity = cap;
    return true;
}

static struct ggml_tensor * tensor_at(const struct ggml_cgraph * graph, int pos) {
    return pos < graph->n_nodes ? graph->nodes[pos] : graph->leafs[pos - graph->n_nodes];
}

// A tensor as the shape sees it, in raw bytes: its address, its fields from
// type to data (every field shape_row reads but the buffer's own: op, type,
// flags, sizes, strides, op params, sources and view source as pointers,
// view offset, buffer), its buffer's type and usage. When every position of
// a graph holds the tensor it held when the shape was taken and these bytes
// are equal, every row of the shape is equal: the sources are the same
// tensors at the same positions. (Bytes of padding that differ only send the
// graph to the full comparison.) Comparing these is about half the work of
// computing the rows: no hash lookups for the sources' positions.
#define SHAPE_RAW_FIELDS (offsetof(struct ggml_tensor, data) + sizeof(void *))
#define SHAPE_RAW_ENTRY  (sizeof(void *) + SHAPE_RAW_FIELDS + 2 * sizeof(int64_t))

static void shape_raw_entry(const struct ggml_tensor * t, unsigned char * out) {
    const int64_t buft  = t->buffer != NULL ? (int64_t)(uintptr_t) t->buffer->buft : 0;
    const int64_t usage = t->buffer != NULL ? (int64_t) t->buffer->usage : -1;
    memcpy(out, &t, sizeof(t));
    memcpy(out + sizeof(void *), t, SHAPE_RAW_FIELDS);
    memcpy(out + sizeof(void *) + SHAPE_RAW_FIELDS, &buft, sizeof(buft));
    memcpy(out + sizeof(void *) + SHAPE_RAW_FIELDS + sizeof(buft), &usage, sizeof(usage));
}

static bool shape_raw_same(const struct ggml_tensor * t, const unsigned char * entry) {
    const struct ggml_tensor * was;
    memcpy(&was, entry, sizeof(was));
    if (was != t || memcmp(entry + sizeof(void *), t, SHAPE_RAW_FIELDS) != 0) {
        return false;
    }
    unsigned char tail[2 * sizeof(int64_t)];
    const int64_t buft  = t->buffer != NULL ? (int64_t)(uintptr_t) t->buffer->buft : 0;
    const int64_t usage = t->buffer != NULL ? (int64_t) t->buffer->usage : -1;
    memcpy(tail, &buft, sizeof(buft));
    memcpy(tail + sizeof(buft), &usage, sizeof(usage));
    return memcmp(entry + sizeof(void *) + SHAPE_RAW_FIELDS, tail, sizeof(tail)) == 0;
}

// the graph is the one the current shape was taken from, unchanged
static bool shape_raw_unchanged(const struct ggml_sched_shape * sh, const struct ggml_cgraph * graph) {
    if (!sh->valid || !sh->raw_valid || sh->n_nodes != graph->n_nodes || sh->n_leafs != graph->n_leafs) {
        return false;
    }
    const int n_pos = graph->n_nodes + graph->n_leafs;
    for (int p = 0; p < n_pos; p++) {
        if (!shape_raw_same(tensor_at(graph, p), sh->raw + (size_t) p * SHAPE_RAW_ENTRY)) {
            return false;
        }
    }
    return true;
}

// the raw image of the graph being allocated describes the shape now kept
static void shape_raw_commit(struct ggml_sched_shape * sh) {
    if (!sh->next_raw_ok) {
        return; // the image kept is still the shape's (the graph was found unchanged)
    }
    unsigned char * tmp = sh->raw;
    sh->raw           = sh->next_raw;
    sh->next_raw      = tmp;
    sh->raw_graph_sig = sh->next_raw_graph_sig;
    sh->raw_valid     = true;
    sh->next_raw_ok   = false;
}

bool ggml_sched_shape_begin(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    struct ggml_sched_shape * sh = &sched->shape;
    sh->next_ok = false;
    sh->next_raw_ok = false;
    // the hash set must hold nothing but this graph (no pins, no last graph)
    if (!sched->is_reset || sched->debug) {
        return false;
    }
    const int n_pos = graph->n_nodes + graph->n_leafs;
    const size_t n_sig = (size_t) n_pos * SHAPE_STRIDE;
    if (n_sig > sh->cap_sig) {
        int64_t * sig      = (int64_t *) ggml_impl_realloc(sh->sig, n_sig * sizeof(int64_t));
        if (sig != NULL) {
            sh->sig = sig;
        }
        int64_t * next_sig = sig != NULL ? (int64_t *) ggml_impl_realloc(sh->next_sig, n_sig * sizeof(int64_t)) : NULL;
        if (next_sig == NULL) {
            sh->valid = false; // sig may have moved: it holds no shape now
            return false;
        }
        sh->next_sig = next_sig;
        sh->cap_sig  = n_sig;
    }
    if (!grow((void **) &sh->slots, &sh->cap_pos, n_pos, sizeof(int))) {
        return false;
    }

    for (int p = 0; p < n_pos; p++) {
        const size_t slot = sched_hash_id(sched, tensor_at(graph, p));
        sched->hv_graph_pos[slot] = p;
        sh->slots[p] = (int) slot;
    }
    // the same tensors unchanged (an engine allocating its graph again): the
    // shape is the one kept, and so is the graph's identity
    if (shape_raw_unchanged(sh, graph)) {
        sh->next_ok     = true;
        sh->next_is_sig = true;
        sh->graph_sig   = sh->raw_graph_sig;
        return true;
    }
    const size_t n_raw = (size_t) n_pos * SHAPE_RAW_ENTRY;
    if (n_raw > sh->cap_raw) {
        unsigned char * raw = (unsigned char *) ggml_impl_realloc(sh->raw, n_raw);
        if (raw != NULL) {
            sh->raw = raw;
        }
        unsigned char * next_raw = raw != NULL ? (unsigned char *) ggml_impl_realloc(sh->next_raw, n_raw) : NULL;
        sh->raw_valid = false; // raw may have moved or be too short: it holds no image now
        if (next_raw == NULL) {
            return false;
        }
        sh->next_raw = next_raw;
        sh->cap_raw  = n_raw;
    }
    // rows are compared as they are made; from the first difference on they
    // are written out, for ggml_sched_shape_record
    bool same = sh->valid && sh->n_nodes == graph->n_nodes && sh->n_leafs == graph->n_leafs;
    bool inside = true;
    int64_t row[SHAPE_STRIDE];
    uint64_t graph_sig = ggml_sched_sig_mix((uint64_t) graph->n_nodes << 32 | (uint64_t)(uint32_t) graph->n_leafs);
    for (int p = 0; p < n_pos; p++) {
        graph_sig += p < graph->n_nodes ? ggml_sched_node_term(graph->nodes[p], p) : ggml_sched_leaf_term(graph->leafs[p - graph->n_nodes], p - graph->n_nodes);
        int64_t * next = sh->next_sig + (size_t) p * SHAPE_STRIDE;
        inside = shape_row(sched, tensor_at(graph, p), same ? row : next) && inside;
        shape_raw_entry(tensor_at(graph, p), sh->next_raw + (size_t) p * SHAPE_RAW_ENTRY);
        if (same && memcmp(row, sh->sig + (size_t) p * SHAPE_STRIDE, sizeof(row)) != 0) {
            same = false;
            memcpy(sh->next_sig, sh->sig, (size_t) p * SHAPE_STRIDE * sizeof(int64_t));
            memcpy(next, row, sizeof(row));
        }
    }
    sh->next_ok = inside;
    sh->next_is_sig = same;
    sh->graph_sig = graph_sig;
    sh->next_raw_ok = inside;
    sh->next_raw_graph_sig = graph_sig;
    return inside && same;
}

void ggml_sched_shape_record(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    struct ggml_sched_shape * sh = &sched->shape;
    sh->valid = false;
    if (!sh->next_ok) {
        return;
    }
    const int n_pos = graph->n_nodes + graph->n_leafs;
    int total_inputs = 0;
    for (int s = 0; s < sched->n_splits; s++) {
        total_inputs += sched->splits[s].n_inputs;
    }
    const int n_copies = sched->n_copies;
    if (!grow((void **) &sh->ids, &sh->cap_ids, n_pos, sizeof(int)) ||
        !grow((void **) &sh->order, &sh->cap_order, graph->n_nodes, sizeof(int)) ||
        !grow((void **) &sh->input_refs, &sh->cap_inputs, total_inputs, sizeof(int)) ||
        total_inputs != sh->n_deps) {
        return;
    }
    if (!grow((void **) &sh->graph_input_refs, &sh->cap_graph_inputs, sched->n_graph_inputs, sizeof(int))) {
        return;
    }
    // the copy lists follow the capacities of the reference lists
    struct ggml_tensor ** copies = (struct ggml_tensor **) ggml_impl_realloc(sh->input_copies,
        sizeof(*copies) * (size_t)(sh->cap_inputs + 1) * (size_t) n_copies);
    if (copies == NULL) {
        return;
    }
    sh->input_copies = copies;
    copies = (struct ggml_tensor **) ggml_impl_realloc(sh->graph_input_copies,
        sizeof(*copies) * (size_t)(sh->cap_graph_inputs + 1) * (size_t) n_copies);
    if (copies == NULL) {
        return;
    }
    sh->graph_input_copies = copies;
    if (!grow((void **) &sh->rewrites, &sh->cap_rewrites, sched->undo.n_rewrites, sizeof(int))) {
        return;
    }

    for (int p = 0; p < n_pos; p++) {
        sh->ids[p] = sched->hv_tensor_backend_ids[sh->slots[p]];
    }
    int k = 0;
    for (int s = 0; s < sched->n_splits; s++) {
        const struct ggml_backend_sched_split * split = &sched->splits[s];
        for (int j = 0; j < split->n_inputs; j++, k++) {
            const size_t slot = sched_hash_id(sched, split->inputs[j]);
            sh->input_refs[k] = sched->hv_graph_pos[slot];
            for (int c = 0; c < n_copies; c++) {
                sh->input_copies[k * n_copies + c] = *sched_tensor_copy(sched, slot, split->backend_id, c);
            }
        }
    }
    sh->n_inputs = total_inputs;
    for (int i = 0; i < sched->n_graph_inputs; i++) {
        const size_t slot = sched_hash_id(sched, sched->graph_inputs[i]);
        const int backend_id = sched->hv_tensor_backend_ids[slot];
        sh->graph_input_refs[i] = sched->hv_graph_pos[slot];
        int n = 0;
        for (int c = 0; c < n_copies; c++) {
            struct ggml_tensor * copy = *sched_tensor_copy(sched, slot, backend_id, c);
            if (copy != sched->graph_inputs[i]) {
                sh->graph_input_copies[i * (n_copies - 1) + n++] = copy;
            }
        }
        if (n != n_copies - 1) {
            return;
        }
    }
    sh->n_graph_inputs = sched->n_graph_inputs;
    for (int i = 0; i < sched->undo.n_rewrites; i++) {
        const struct ggml_sched_src_rewrite * r = &sched->undo.rewrites[i];
        sh->rewrites[i] = sched->hv_graph_pos[sched_hash_id(sched, r->node)] * GGML_MAX_SRC + r->src;
    }
    sh->n_rewrites = sched->undo.n_rewrites;
    if (sched->any_graph_optimize) {
        for (int i = 0; i < graph->n_nodes; i++) {
            sh->order[i] = sched->hv_graph_pos[sched_hash_id(sched, graph->nodes[i])];
        }
    }

    if (!sh->next_is_sig) {
        int64_t * tmp = sh->sig;
        sh->sig      = sh->next_sig;
        sh->next_sig = tmp;
    }
    sh->n_nodes  = graph->n_nodes;
    sh->n_leafs  = graph->n_leafs;
    sh->valid    = true;
    if (sh->next_raw_ok) {
        shape_raw_commit(sh);
    } else {
        sh->raw_valid = false; // split afresh after an unchanged graph's replay failed: no image of it
    }
}

// the copy tensors of the last graph hold its allocation: forget it
static void copy_clear(struct ggml_tensor * t) {
    t->data   = NULL;
    t->buffer = NULL;
    t->extra  = NULL;
}

bool ggml_sched_shape_replay(struct ggml_backend_sched * sched, struct ggml_cgraph * graph) {
    struct ggml_sched_shape * sh = &sched->shape;
    const int n_pos = graph->n_nodes + graph->n_leafs;
    const int n_copies = sched->n_copies;

    for (int p = 0; p < n_pos; p++) {
        sched->hv_tensor_backend_ids[sh->slots[p]] = sh->ids[p];
    }
    // split inputs and their copies
    int k = 0;
    for (int s = 0; s < sched->n_splits; s++) {
        struct ggml_backend_sched_split * split = &sched->splits[s];
        for (int j = 0; j < split->n_inputs; j++, k++) {
            struct ggml_tensor * input = tensor_at(graph, sh->input_refs[k]);
            split->inputs[j] = input;
            const size_t slot = (size_t) sh->slots[sh->input_refs[k]];
            for (int c = 0; c < n_copies; c++) {
                struct ggml_tensor * copy = sh->input_copies[k * n_copies + c];
                copy_clear(copy);
                *sched_tensor_copy(sched, slot, split->backend_id, c) = copy;
            }
        }
    }
    // user inputs: the current copy is the input itself
    for (int i = 0; i < sh->n_graph_inputs; i++) {
        struct ggml_tensor * input = tensor_at(graph, sh->graph_input_refs[i]);
        sched->graph_inputs[i] = input;
        const size_t slot = (size_t) sh->slots[sh->graph_input_refs[i]];
        const int backend_id = sh->ids[sh->graph_input_refs[i]];
        for (int c = 0, n = 0; c < n_copies; c++) {
            struct ggml_tensor * copy = input;
            if (c != sched->cur_copy) {
                copy = sh->graph_input_copies[i * (n_copies - 1) + n++];
                copy_clear(copy);
            }
            *sched_tensor_copy(sched, slot, backend_id, c) = copy;
        }
    }
    sched->n_graph_inputs = sh->n_graph_inputs;
    sched->is_reset = false;

    // sources read from copies
    for (int i = 0; i < sh->n_rewrites; i++) {
        struct ggml_tensor * node = graph->nodes[sh->rewrites[i] / GGML_MAX_SRC];
        const int j = sh->rewrites[i] % GGML_MAX_SRC;
        const size_t slot = sched_hash_id(sched, node->src[j]);
        struct ggml_tensor * copy = *sched_tensor_copy(sched, slot, sh->ids[sh->rewrites[i] / GGML_MAX_SRC], sched->cur_copy);
        GGML_ASSERT(copy != NULL);
        if (!ggml_sched_undo_record_rewrite(sched, node, j, copy)) {
            ggml_sched_undo(sched, graph);
            return false;
        }
        const int pos = sh->rewrites[i] / GGML_MAX_SRC;
        sh->graph_sig -= ggml_sched_node_term(node, pos);
        node->src[j] = copy;
        sh->graph_sig += ggml_sched_node_term(node, pos);
    }

    graph->uid = ggml_graph_next_uid();
    sched->undo.graph_uid = graph->uid; // the undo log belongs to this graph, not one made at its address before
    sched->build_deps_reuse = true;
    const bool built = ggml_sched_build_graph_copy(sched, graph);
    sched->build_deps_reuse = false;
    bool same_order = built;
    if (built && sched->any_graph_optimize) {
        for (int i = 0; i < graph->n_nodes && same_order; i++) {
            same_order = sched->hv_graph_pos[sched_hash_id(sched, graph->nodes[i])] == sh->order[i];
        }
    }
    if (!same_order) {
        ggml_sched_undo(sched, graph);
        sh->valid = false;
        return false;
    }
    shape_raw_commit(sh);
    return true;
}

bool ggml_sched_deps_push(struct ggml_backend_sched * sched, struct ggml_tensor * dep) {
    struct ggml_sched_shape * sh = &sched->shape;
    if (!grow((void **) &sh->deps, &sh->cap_deps, sh->n_deps + 1, sizeof(*sh->deps))) {
        return false;
    }
    sh->deps[sh->n_deps++] = dep;
    return true;
}

void ggml_sched_shape_free(struct ggml_sched_shape * sh) {
    free(sh->sig);
    free(sh->next_sig);
    free(sh->slots);
    free(sh->ids);
    free(sh->input_refs);
    free(sh->input_copies);
    free(sh->deps);
    free(sh->graph_input_refs);
    free(sh->graph_input_copies);
    free(sh->rewrites);
    free(sh->order);
    free(sh->raw);
    free(sh->next_raw);
    memset(sh, 0, sizeof(*sh));
}
