// ggml-graph.c: computation graphs and the tensor hash set.
//
// A graph lists the tensors reachable from its outputs in dependency order:
// nodes (computed) and leafs (read only). Its hash set records every tensor
// it holds, so that building is linear in the graph size; the set is sized
// from the capacity the caller asks for (twice it: nodes plus leafs).

#include "ggml-impl.h"
#include "ggml-backend.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

// in ggml.c
void * ggml_new_graph_object(struct ggml_context * ctx, size_t nbytes);

//
// hash set
//

static bool is_prime(size_t n) {
    if (n < 2) {
        return false;
    }
    if (n % 2 == 0) {
        return n == 2;
    }
    for (size_t d = 3; d <= n / d; d += 2) {
        if (n % d == 0) {
            return false;
        }
    }
    return true;
}

size_t ggml_hash_size(size_t min_sz) {
    // primes spread the address-derived hashes; finding one is cheap next to
    // the work of filling a table of that size
    size_t n = min_sz < 2 ? 2 : min_sz;
    while (!is_prime(n)) {
        n++;
    }
    return n;
}

bool ggml_hash_set_init(struct ggml_hash_set * hash_set, size_t size) {
    *hash_set = (struct ggml_hash_set) { 0, NULL, NULL };
    if (size == 0) {
        return true;
    }
    size = ggml_hash_size(size);
    struct ggml_tensor ** keys = (struct ggml_tensor **) ggml_impl_malloc(sizeof(struct ggml_tensor *) * size);
    ggml_bitset_t * used = keys != NULL ? (ggml_bitset_t *) ggml_impl_calloc(ggml_bitset_size(size), sizeof(ggml_bitset_t)) : NULL;
    if (used == NULL) {
        free(keys);
        return false;
    }
    *hash_set = (struct ggml_hash_set) { .size = size, .used = used, .keys = keys };
    return true;
}

struct ggml_hash_set ggml_hash_set_new(size_t size) {
    struct ggml_hash_set result;
    if (!ggml_hash_set_init(&result, size)) {
        GGML_ABORT("failed to allocate a hash set of %zu entries", ggml_hash_size(size));
    }
    return result;
}

void ggml_hash_set_reset(struct ggml_hash_set * hash_set) {
    if (hash_set->size > 0) {
        memset(hash_set->used, 0, sizeof(ggml_bitset_t) * ggml_bitset_size(hash_set->size));
    }
}

void ggml_hash_set_free(struct ggml_hash_set * hash_set) {
    free(hash_set->used);
    free(hash_set->keys);
    hash_set->used = NULL;
    hash_set->keys = NULL;
    hash_set->size = 0;
}

//
// graph memory
//

// Round *offset up to align, reserve size bytes there, return where they start.
static size_t layout_take(size_t * offset, size_t size, size_t align) {
    const size_t start = GGML_PAD(*offset, align);
    *offset = start + size;
    return start;
}

struct graph_layout {
    size_t hash_size;
    size_t nodes, leafs, use_counts, hash_keys, grads, grad_accs, hash_used;
    size_t total;
};

static struct graph_layout graph_layout_for(size_t size, bool grads) {
    struct graph_layout l = { 0 };
    l.hash_size = ggml_hash_size(size * 2);
    const size_t ptr = sizeof(struct ggml_tensor *);
    size_t off = sizeof(struct ggml_cgraph);
    l.nodes      = layout_take(&off, size * ptr, ptr);
    l.leafs      = layout_take(&off, size * ptr, ptr);
    l.use_counts = layout_take(&off, l.hash_size * sizeof(int32_t), sizeof(int32_t));
    l.hash_keys  = layout_take(&off, l.hash_size * ptr, ptr);
    if (grads) {
        l.grads     = layout_take(&off, l.hash_size * ptr, ptr);
        l.grad_accs = layout_take(&off, l.hash_size * ptr, ptr);
    }
    l.hash_used  = layout_take(&off, ggml_bitset_size(l.hash_size) * sizeof(ggml_bitset_t), sizeof(ggml_bitset_t));
    l.total = off;
    return l;
}

size_t ggml_graph_overhead_custom(size_t size, bool grads) {
    // one object header (the tensor overhead without the tensor) plus the padded graph
    const size_t object_header = ggml_tensor_overhead() - GGML_TENSOR_SIZE;
    return object_header + GGML_PAD(graph_layout_for(size, grads).total, GGML_MEM_ALIGN);
}

size_t ggml_graph_overhead(void) {
    return ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, false);
}

struct ggml_cgraph * ggml_new_graph_custom(struct ggml_context * ctx, size_t size, bool grads) {
    GGML_ASSERT(size > 0 && size <= INT32_MAX / 2 && "graph size out of range");
    const struct graph_layout l = graph_layout_for(size, grads);
    char * base = (char *) ggml_new_graph_object(ctx, l.total);
    struct ggml_cgraph * cgraph = (struct ggml_cgraph *) base;

    *cgraph = (struct ggml_cgraph) {
        .size       = (int) size,
        .n_nodes    = 0,
        .n_leafs    = 0,
        .nodes      = (struct ggml_tensor **)(base + l.nodes),
        .grads      = grads ? (struct ggml_tensor **)(base + l.grads)     : NULL,
        .grad_accs  = grads ? (struct ggml_tensor **)(base + l.grad_accs) : NULL,
        .leafs      = (struct ggml_tensor **)(base + l.leafs),
        .use_counts = (int32_t *)(base + l.use_counts),
        .visited_hash_set = {
            .size = l.hash_size,
            .used = (ggml_bitset_t *)(base + l.hash_used),
            .keys = (struct ggml_tensor **)(base + l.hash_keys),
        },
        .order = GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT,
        .uid   = 0,
    };

    ggml_hash_set_reset(&cgraph->visited_hash_set);
    if (grads) {
        memset(cgraph->grads,     0, l.hash_size * sizeof(struct ggml_tensor *));
        memset(cgraph->grad_accs, 0, l.hash_size * sizeof(struct ggml_tensor *));
    }
    return cgraph;
}

struct ggml_cgraph * ggml_new_graph(struct ggml_context * ctx) {
    return ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE, false);
}

struct ggml_cgraph ggml_graph_view(struct ggml_cgraph * cgraph, int i0, int i1) {
    GGML_ASSERT(0 <= i0 && i0 <= i1 && i1 <= cgraph->n_nodes);
    struct ggml_cgraph view = {
        .size             = 0,
        .n_nodes          = i1 - i0,
        .n_leafs          = 0,
        .nodes            = cgraph->nodes + i0,
        .grads            = NULL,
        .grad_accs        = NULL,
        .leafs            = NULL,
        .use_counts       = cgraph->use_counts,
        .visited_hash_set = cgraph->visited_hash_set,
        .order            = cgraph->order,
        .uid              = 0,
    };
    return view;
}

uint64_t ggml_graph_next_uid(void) {
    static _Atomic uint64_t counter = 1;
    return atomic_fetch_add(&counter, 1);
}

void ggml_graph_cpy(struct ggml_cgraph * src, struct ggml_cgraph * dst) {
    GGML_ASSERT(dst->size >= src->n_leafs);
    GGML_ASSERT(dst->size >= src->n_nodes);
    GGML_ASSERT(dst->visited_hash_set.size >= src->visited_hash_set.size);

    dst->n_leafs = src->n_leafs;
    dst->n_nodes = src->n_nodes;
    dst->order   = src->order;

    memcpy(dst->leafs, src->leafs, sizeof(struct ggml_tensor *) * (size_t) src->n_leafs);
    memcpy(dst->nodes, src->nodes, sizeof(struct ggml_tensor *) * (size_t) src->n_nodes);

    ggml_hash_set_reset(&dst->visited_hash_set);
    for (size_t i = 0; i < src->visited_hash_set.size; i++) {
        if (ggml_bitset_get(src->visited_hash_set.used, i)) {
            const size_t j = ggml_hash_insert(&dst->visited_hash_set, src->visited_hash_set.keys[i]);
            dst->use_counts[j] = src->use_counts[i];
        }
    }

    if (dst->grads) {
        memset(dst->grads,     0, dst->visited_hash_set.size * sizeof(struct ggml_tensor *));
        memset(dst->grad_accs, 0, dst->visited_hash_set.size * sizeof(struct ggml_tensor *));
    }
    if (src->grads) {
        GGML_ASSERT(dst->grads != NULL && dst->grad_accs != NULL && "destination graph has no gradients");
        for (int i = 0; i < src->n_nodes; i++) {
            const size_t is = ggml_hash_find(&src->visited_hash_set, src->nodes[i]);
            const size_t id = ggml_hash_find(&dst->visited_hash_set, dst->nodes[i]);
            GGML_ASSERT(is != GGML_HASHSET_FULL && ggml_bitset_get(src->visited_hash_set.used, is));
            GGML_ASSERT(id != GGML_HASHSET_FULL && ggml_bitset_get(dst->visited_hash_set.used, id));
            dst->grads[id]     = src->grads[is];
            dst->grad_accs[id] = src->grad_accs[is];
        }
    }
}

struct ggml_cgraph * ggml_graph_dup(struct ggml_context * ctx, struct ggml_cgraph * cgraph, bool force_grads) {
    struct ggml_cgraph * result = ggml_new_graph_custom(ctx, (size_t) cgraph->size, cgraph->grads != NULL || force_grads);
    ggml_graph_cpy(cgraph, result);
    return result;
}

void ggml_graph_reset(struct ggml_cgraph * cgraph) {
    if (cgraph == NULL) {
        return;
    }
    GGML_ASSERT(cgraph->grads != NULL && "ggml_graph_reset: the graph has no gradients");

    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggml_tensor * node     = cgraph->nodes[i];
        struct ggml_tensor * grad_acc = ggml_graph_get_grad_acc(cgraph, node);

        if (node->op == GGML_OP_OPT_STEP_ADAMW) {
            // the optimizer's first and second moments start again from zero
            ggml_set_zero(node->src[2]);
            ggml_set_zero(node->src[3]);
        }
        if (grad_acc == NULL) {
            continue;
        }
        if (node->flags & GGML_TENSOR_FLAG_LOSS) {
            // d loss / d loss = 1 seeds the backward pass
            GGML_ASSERT(grad_acc->type == GGML_TYPE_F32);
            GGML_ASSERT(ggml_is_scalar(grad_acc));
            const float one = 1.0f;
            if (grad_acc->buffer != NULL) {
                ggml_backend_tensor_set(grad_acc, &one, 0, sizeof(one));
            } else {
                GGML_ASSERT(grad_acc->data != NULL && "ggml_graph_reset: the loss gradient is not allocated");
                memcpy(grad_acc->data, &one, sizeof(one));
            }
        } else {
            ggml_set_zero(grad_acc);
        }
    }
}

void ggml_graph_clear(struct ggml_cgraph * cgraph) {
    cgraph->n_leafs = 0;
    cgraph->n_nodes = 0;
    ggml_hash_set_reset(&cgraph->visited_hash_set);
}

int ggml_graph_size(struct ggml_cgraph * cgraph) {
    return cgraph->size;
}

struct ggml_tensor * ggml_graph_node(struct ggml_cgraph * cgraph, int i) {
    if (i < 0) {
        GGML_ASSERT(cgraph->n_nodes + i >= 0);
        return cgraph->nodes[cgraph->n_nodes + i];
    }
    GGML_ASSERT(i < cgraph->n_nodes);
    return cgraph->nodes[i];
}

struct ggml_tensor ** ggml_graph_nodes(struct ggml_cgraph * cgraph) {
    return cgraph->nodes;
}

int ggml_graph_n_nodes(struct ggml_cgraph * cgraph) {
    return cgraph->n_nodes;
}

void ggml_graph_add_node(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor) {
    GGML_ASSERT(cgraph->size > cgraph->n_nodes && "graph is full");
    cgraph->nodes[cgraph->n_nodes] = tensor;
    cgraph->n_nodes++;
    // its operands known to the graph gain a use: a backend that fuses a node
    // into the next one by its use count (ggml_can_fuse) must see this reader
    // (upstream keeps the counts as they were)
    if (cgraph->use_counts != NULL && cgraph->visited_hash_set.size > 0) {
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (tensor->src[j] == NULL) {
                continue;
            }
            const size_t slot = ggml_hash_find(&cgraph->visited_hash_set, tensor->src[j]);
            if (slot != GGML_HASHSET_FULL && ggml_bitset_get(cgraph->visited_hash_set.used, slot)) {
                cgraph->use_counts[slot]++;
            }
        }
    }
}

struct ggml_tensor * ggml_graph_get_tensor(const struct ggml_cgraph * cgraph, const char * name) {
    for (int i = 0; i < cgraph->n_leafs; i++) {
        if (strcmp(cgraph->leafs[i]->name, name) == 0) {
            return cgraph->leafs[i];
        }
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        if (strcmp(cgraph->nodes[i]->name, name) == 0) {
            return cgraph->nodes[i];
        }
    }
    return NULL;
}

static struct ggml_tensor * graph_lookup(const struct ggml_cgraph * cgraph, struct ggml_tensor * const * table,
                                         const struct ggml_tensor * node) {
    if (table == NULL) {
        return NULL;
    }
    const size_t i = ggml_hash_find(&cgraph->visited_hash_set, node);
    if (i == GGML_HASHSET_FULL || !ggml_bitset_get(cgraph->visited_hash_set.used, i)) {
        return NULL;
    }
    return table[i];
}

struct ggml_tensor * ggml_graph_get_grad(const struct ggml_cgraph * cgraph, const struct ggml_tensor * node) {
    return graph_lookup(cgraph, cgraph->grads, node);
}

struct ggml_tensor * ggml_graph_get_grad_acc(const struct ggml_cgraph * cgraph, const struct ggml_tensor * node) {
    return graph_lookup(cgraph, cgraph->grad_accs, node);
}

//
// building
//

// Building is a depth-first walk over src[], kept on an explicit stack so that
// the depth of a graph (a chain of 100000 ops is one) is limited by memory,
// not by the thread's stack. It gives the order of the recursive definition:
//
//   visit(node, compute):
//     compute and node->op != NONE: flag node COMPUTE
//     first visit: visit each source (src[0] first, or last for RIGHT_TO_LEFT),
//                  counting one use of it; then append node to nodes or leafs
//     seen before, with compute: visit each source not yet flagged COMPUTE,
//                  so that what an ordered node needs becomes computed too

struct visit_frame {
    struct ggml_tensor * node;
    int  next_src; // sources [0, next_src) are done
    bool compute;
    bool first;    // first visit: count uses and append the node when done
};

struct visit_stack {
    struct visit_frame * frames;
    int n;
    int capacity;
    struct visit_frame local[64]; // enough for most graphs: no allocation
};

static void visit_stack_push(struct visit_stack * st, struct visit_frame frame) {
    if (st->n == st->capacity) {
        const int capacity = 2*st->capacity;
        struct visit_frame * frames = (struct visit_frame *) malloc(sizeof(struct visit_frame) * (size_t) capacity);
        if (frames == NULL) {
            GGML_ABORT("failed to allocate the stack to build a graph %d tensors deep", st->n);
        }
        memcpy(frames, st->frames, sizeof(struct visit_frame) * (size_t) st->n);
        if (st->frames != st->local) {
            free(st->frames);
        }
        st->frames   = frames;
        st->capacity = capacity;
    }
    st->frames[st->n++] = frame;
}

// Start visiting node: flag it, find its slot, and push a frame when its
// sources need a visit. Returns node's hash slot.
static size_t visit_begin(struct ggml_cgraph * cgraph, struct visit_stack * st, struct ggml_tensor * node, bool compute) {
    if (compute && node->op != GGML_OP_NONE) {
        node->flags |= GGML_TENSOR_FLAG_COMPUTE;
    }

    const size_t slot = ggml_hash_find(&cgraph->visited_hash_set, node);
    GGML_ASSERT(slot != GGML_HASHSET_FULL && "graph hash set is full: create the graph with a larger size");

    const bool first = !ggml_bitset_get(cgraph->visited_hash_set.used, slot);
    if (first) {
        cgraph->visited_hash_set.keys[slot] = node;
        ggml_bitset_set(cgraph->visited_hash_set.used, slot);
        cgraph->use_counts[slot] = 0;
    }
    if (first || compute) {
        visit_stack_push(st, (struct visit_frame) { .node = node, .next_src = 0, .compute = compute, .first = first });
    }
    return slot;
}

static void graph_append(struct ggml_cgraph * cgraph, struct ggml_tensor * node) {
    if (node->op == GGML_OP_NONE && (node->flags & GGML_TENSOR_FLAG_PARAM) == 0) {
        if (cgraph->n_leafs >= cgraph->size) {
            GGML_ABORT("graph has more than %d leafs: create it with a larger size (ggml_new_graph_custom)", cgraph->size);
        }
        if (node->name[0] == '\0') {
            ggml_format_name(node, "leaf_%d", cgraph->n_leafs);
        }
        cgraph->leafs[cgraph->n_leafs++] = node;
    } else {
        if (cgraph->n_nodes >= cgraph->size) {
            GGML_ABORT("graph has more than %d nodes: create it with a larger size (ggml_new_graph_custom)", cgraph->size);
        }
        if (node->name[0] == '\0') {
            ggml_format_name(node, "node_%d", cgraph->n_nodes);
        }
        cgraph->nodes[cgraph->n_nodes++] = node;
    }
}

static void visit_parents(struct ggml_cgraph * cgraph, struct ggml_tensor * root, bool compute) {
    struct visit_stack st;
    st.frames   = st.local;
    st.n        = 0;
    st.capacity = (int)(sizeof(st.local) / sizeof(st.local[0]));

    visit_begin(cgraph, &st, root, compute);

    while (st.n > 0) {
        // the frame is re-read after each push: a push may move the frames
        struct visit_frame * f = &st.frames[st.n - 1];
        if (f->next_src == GGML_MAX_SRC) {
            const struct visit_frame done = *f;
            st.n--;
            if (done.first) {
                graph_append(cgraph, done.node);
            }
            continue;
        }

        const int i = f->next_src++;
        if (f->first) {
            const int k = cgraph->order == GGML_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT ? GGML_MAX_SRC - 1 - i : i;
            struct ggml_tensor * src = f->node->src[k];
            if (src != NULL) {
                const size_t src_slot = visit_begin(cgraph, &st, src, f->compute);
                cgraph->use_counts[src_slot]++;
            }
        } else {
            struct ggml_tensor * src = f->node->src[i];
            if (src != NULL && (src->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
                visit_begin(cgraph, &st, src, true);
            }
        }
    }

    if (st.frames != st.local) {
        free(st.frames);
    }
}

static void build_forward(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor, bool compute) {
    const int n_old = cgraph->n_nodes;
    visit_parents(cgraph, tensor, compute);
    if (cgraph->n_nodes > n_old) {
        // the tensor asked for is the last node added
        GGML_ASSERT(cgraph->nodes[cgraph->n_nodes - 1] == tensor);
    }
}

void ggml_build_forward_expand(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor) {
    build_forward(cgraph, tensor, true);
}

void ggml_build_forward_order(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor) {
    build_forward(cgraph, tensor, false);
}

struct ggml_tensor * ggml_build_forward_select(struct ggml_cgraph * cgraph, struct ggml_tensor ** tensors, int n_tensors, int idx) {
    GGML_ASSERT(idx >= 0 && idx < n_tensors);
    for (int i = 0; i < n_tensors; i++) {
        build_forward(cgraph, tensors[i], i == idx);
    }
    return tensors[idx];
}

//
// printing
//

void ggml_graph_print(const struct ggml_cgraph * cgraph) {
    GGML_LOG_INFO("=== GRAPH ===\n");
    GGML_LOG_INFO("n_nodes = %d\n", cgraph->n_nodes);
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        GGML_LOG_INFO(" - %3d: [ %5" PRId64 ", %5" PRId64 ", %5" PRId64 ", %5" PRId64 "] %16s %s %s\n",
                      i, node->ne[0], node->ne[1], node->ne[2], node->ne[3],
                      ggml_op_desc(node), ggml_type_name(node->type),
                      (node->flags & GGML_TENSOR_FLAG_PARAM) ? "x" :
                      ggml_graph_get_grad(cgraph, node) ? "g" : " ");
    }
    GGML_LOG_INFO("n_leafs = %d\n", cgraph->n_leafs);
    for (int i = 0; i < cgraph->n_leafs; i++) {
        const struct ggml_tensor * leaf = cgraph->leafs[i];
        GGML_LOG_INFO(" - %3d: [ %5" PRId64 ", %5" PRId64 "] %8s %16s\n",
                      i, leaf->ne[0], leaf->ne[1], ggml_op_name(leaf->op), ggml_get_name(leaf));
    }
    GGML_LOG_INFO("========================================\n");
}

static bool graph_has_node(const struct ggml_cgraph * cgraph, const struct ggml_tensor * t) {
    if (cgraph == NULL) {
        return false;
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        if (cgraph->nodes[i] == t) {
            return true;
        }
    }
    return false;
}

// label text for dot: escape the characters dot treats specially
static void dot_write_escaped(FILE * fp, const char * s) {
    for (; *s; s++) {
        if (*s == '"' || *s == '\\' || *s == '{' || *s == '}' || *s == '<' || *s == '>' || *s == '|') {
            fputc('\\', fp);
        }
        fputc(*s, fp);
    }
}

static void dot_write_edge(FILE * fp, const struct ggml_cgraph * gf, const struct ggml_tensor * src,
                           const struct ggml_tensor * dst, int index) {
    const bool src_is_node = graph_has_node(gf, src);
    fprintf(fp, "  \"%p\" -> \"%p\" [ arrowhead = %s; style = %s; label = \"%d\"; ]\n",
            (const void *) src, (const void *) dst,
            src_is_node ? "empty" : "vee", src_is_node ? "solid" : "dashed", index);
}

void ggml_graph_dump_dot(const struct ggml_cgraph * gb, const struct ggml_cgraph * gf, const char * filename) {
    FILE * fp = ggml_fopen(filename, "w");
    if (fp == NULL) {
        GGML_LOG_ERROR("%s: cannot open %s for writing\n", __func__, filename);
        return;
    }

    fprintf(fp, "digraph G {\n");
    fprintf(fp, "  newrank = true;\n");
    fprintf(fp, "  rankdir = TB;\n");

    for (int i = 0; i < gb->n_nodes; i++) {
        const struct ggml_tensor * node = gb->nodes[i];
        const char * color = (node->flags & GGML_TENSOR_FLAG_PARAM) ? "yellow" :
                             graph_has_node(gf, node) && gb != gf ? "lightblue" :
                             (node->flags & GGML_TENSOR_FLAG_OUTPUT) ? "lightgreen" : "white";
        fprintf(fp, "  \"%p\" [ style = filled; fillcolor = %s; shape = record; label=\"",
                (const void *) node, color);
        if (node->name[0] != '\0') {
            dot_write_escaped(fp, node->name);
            fprintf(fp, " (%s)|", ggml_type_name(node->type));
        } else {
            fprintf(fp, "(%s)|", ggml_type_name(node->type));
        }
        fprintf(fp, "%d [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "] | ",
                i, node->ne[0], node->ne[1], node->ne[2], node->ne[3]);
        dot_write_escaped(fp, ggml_op_desc(node));
        fprintf(fp, "\"; ]\n");
    }

    for (int i = 0; i < gb->n_leafs; i++) {
        const struct ggml_tensor * leaf = gb->leafs[i];
        fprintf(fp, "  \"%p\" [ style = filled; fillcolor = pink; shape = record; label=\"",
                (const void *) leaf);
        if (leaf->name[0] != '\0') {
            dot_write_escaped(fp, leaf->name);
            fprintf(fp, " (%s)|", ggml_type_name(leaf->type));
        } else {
            fprintf(fp, "(%s)|", ggml_type_name(leaf->type));
        }
        fprintf(fp, "[%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 "]\"; ]\n",
                leaf->ne[0], leaf->ne[1], leaf->ne[2], leaf->ne[3]);
    }

    for (int i = 0; i < gb->n_nodes; i++) {
        const struct ggml_tensor * node = gb->nodes[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (node->src[j]) {
                dot_write_edge(fp, gb, node->src[j], node, j);
            }
        }
    }
    for (int i = 0; i < gb->n_leafs; i++) {
        const struct ggml_tensor * leaf = gb->leafs[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            if (leaf->src[j]) {
                dot_write_edge(fp, gb, leaf->src[j], leaf, j);
            }
        }
    }

    fprintf(fp, "}\n");
    fclose(fp);

    GGML_LOG_INFO("%s: dot -Tpng %s -o %s.png && open %s.png\n", __func__, filename, filename, filename);
}
