// mpi-proto.c: messages of the MPI backend: writing and bounds-checked
// reading of fields, and graphs as lists of tensor descriptions.
//
// Nothing here calls MPI: the same code serves rank 0 and the workers, and a
// message can be checked without a job (the fuzz-like cases of test-mpi-proto).

#include "mpi-proto.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"

#include <stdlib.h>
#include <string.h>

// limits on a description: far above any real tensor, low enough that
// products of them cannot overflow 64 bits
#define MPI_MAX_NE      ((int64_t) 1 << 40)
#define MPI_MAX_NB      ((uint64_t) 1 << 44)
#define MPI_MAX_TENSORS (1u << 22)

//
// writer
//

void ggml_mpi_writer_init(struct ggml_mpi_writer * w) {
    memset(w, 0, sizeof(*w));
    w->ok = true;
}

void ggml_mpi_writer_reset(struct ggml_mpi_writer * w) {
    w->size = 0;
    w->ok   = true;
}

void ggml_mpi_writer_free(struct ggml_mpi_writer * w) {
    free(w->data);
    ggml_mpi_writer_init(w);
}

void ggml_mpi_put_bytes(struct ggml_mpi_writer * w, const void * p, size_t n) {
    if (!w->ok) {
        return;
    }
    if (n > w->cap - w->size) {
        size_t cap = w->cap == 0 ? 256 : w->cap;
        while (cap - w->size < n) {
            if (cap > SIZE_MAX / 2) {
                w->ok = false;
                return;
            }
            cap *= 2;
        }
        uint8_t * grown = (uint8_t *) realloc(w->data, cap);
        if (grown == NULL) {
            w->ok = false;
            return;
        }
        w->data = grown;
        w->cap  = cap;
    }
    if (n > 0) {
        memcpy(w->data + w->size, p, n);
    }
    w->size += n;
}

void ggml_mpi_put_u8(struct ggml_mpi_writer * w, uint8_t v) {
    ggml_mpi_put_bytes(w, &v, 1);
}

void ggml_mpi_put_u32(struct ggml_mpi_writer * w, uint32_t v) {
    uint8_t b[4];
    for (int i = 0; i < 4; i++) {
        b[i] = (uint8_t) (v >> (8 * i));
    }
    ggml_mpi_put_bytes(w, b, sizeof(b));
}

void ggml_mpi_put_u64(struct ggml_mpi_writer * w, uint64_t v) {
    uint8_t b[8];
    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t) (v >> (8 * i));
    }
    ggml_mpi_put_bytes(w, b, sizeof(b));
}

void ggml_mpi_put_str(struct ggml_mpi_writer * w, const char * s) {
    const size_t n = strlen(s);
    ggml_mpi_put_u32(w, (uint32_t) n);
    ggml_mpi_put_bytes(w, s, n);
}

//
// reader
//

struct ggml_mpi_reader ggml_mpi_reader_of(const void * data, size_t size) {
    return (struct ggml_mpi_reader) { .data = (const uint8_t *) data, .size = size, .pos = 0, .ok = true };
}

bool ggml_mpi_get_bytes(struct ggml_mpi_reader * r, void * p, size_t n) {
    if (!r->ok || n > r->size - r->pos) {
        r->ok = false;
        if (n > 0) {
            memset(p, 0, n);
        }
        return false;
    }
    if (n > 0) {
        memcpy(p, r->data + r->pos, n);
    }
    r->pos += n;
    return true;
}

uint8_t ggml_mpi_get_u8(struct ggml_mpi_reader * r) {
    uint8_t v;
    ggml_mpi_get_bytes(r, &v, 1);
    return v;
}

uint32_t ggml_mpi_get_u32(struct ggml_mpi_reader * r) {
    uint8_t b[4];
    ggml_mpi_get_bytes(r, b, sizeof(b));
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        v |= (uint32_t) b[i] << (8 * i);
    }
    return v;
}

uint64_t ggml_mpi_get_u64(struct ggml_mpi_reader * r) {
    uint8_t b[8];
    ggml_mpi_get_bytes(r, b, sizeof(b));
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v |= (uint64_t) b[i] << (8 * i);
    }
    return v;
}

bool ggml_mpi_get_str(struct ggml_mpi_reader * r, char * s, size_t cap) {
    const uint32_t n = ggml_mpi_get_u32(r);
    if (!r->ok || (size_t) n >= cap) {
        r->ok = false;
        s[0]  = '\0';
        return false;
    }
    ggml_mpi_get_bytes(r, s, n);
    s[r->ok ? n : 0] = '\0';
    return r->ok;
}

bool ggml_mpi_reader_done(const struct ggml_mpi_reader * r) {
    return r->ok && r->pos == r->size;
}

bool ggml_mpi_op_is_local_only(enum ggml_op op) {
    return op == GGML_OP_MAP_CUSTOM1 || op == GGML_OP_MAP_CUSTOM2 || op == GGML_OP_MAP_CUSTOM3 || op == GGML_OP_CUSTOM;
}

uint64_t ggml_mpi_hash(const void * data, size_t size) {
    const uint8_t * p = (const uint8_t *) data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

//
// tensors and graphs
//

bool ggml_mpi_tensor_extent(enum ggml_type type, const int64_t ne[4], const size_t nb[4], size_t * extent) {
    if ((int) type < 0 || type >= GGML_TYPE_COUNT) {
        return false;
    }
    const int64_t blck  = ggml_blck_size(type);
    const size_t  tsize = ggml_type_size(type);
    if (blck <= 0 || tsize == 0) {
        return false;
    }
    bool empty = false;
    for (int i = 0; i < 4; i++) {
        if (ne[i] < 0 || ne[i] > MPI_MAX_NE || (uint64_t) nb[i] > MPI_MAX_NB) {
            return false;
        }
        empty = empty || ne[i] == 0;
    }
    if (ne[0] % blck != 0) {
        return false;
    }
    // ggml_new_tensor sizes the contiguous tensor of this shape: it must fit too
    uint64_t contiguous = tsize * (uint64_t) (ne[0] / blck);
    for (int i = 1; i < 4; i++) {
        if (__builtin_mul_overflow(contiguous, (uint64_t) ne[i], &contiguous)) {
            return false;
        }
    }
    if (contiguous > SIZE_MAX / 2) {
        return false;
    }
    if (empty) {
        *extent = 0;
        return true;
    }
    // as ggml_nbytes, with every step checked
    uint64_t bytes = 0;
    if (blck == 1) {
        bytes = tsize;
        for (int i = 0; i < 4; i++) {
            uint64_t step;
            if (__builtin_mul_overflow((uint64_t) (ne[i] - 1), (uint64_t) nb[i], &step) ||
                __builtin_add_overflow(bytes, step, &bytes)) {
                return false;
            }
        }
    } else {
        if (__builtin_mul_overflow((uint64_t) (ne[0] / blck), (uint64_t) nb[0], &bytes)) {
            return false;
        }
        for (int i = 1; i < 4; i++) {
            uint64_t step;
            if (__builtin_mul_overflow((uint64_t) (ne[i] - 1), (uint64_t) nb[i], &step) ||
                __builtin_add_overflow(bytes, step, &bytes)) {
                return false;
            }
        }
    }
    if (bytes > SIZE_MAX) {
        return false;
    }
    *extent = (size_t) bytes;
    return true;
}

// tensors of a graph, sources before their users, each with its index in
// that order: an open-addressing map from tensor to index, grown at half
// full. The nodes are entered first as MPI_NODE_PENDING; a tensor being
// visited is MPI_VISITING. Only a node's sources are followed: a tensor
// that is not a node is data to the worker, whatever computed it.
struct graph_tensors {
    struct ggml_tensor ** keys;
    int32_t             * ids;
    size_t                size;    // a power of two
    size_t                n_keys;
    struct ggml_tensor ** list;
    bool                * list_is_node;
    size_t                n;
    size_t                cap;
    bool                  ok;
};

#define MPI_NODE_PENDING (-2)
#define MPI_VISITING     (-1)

static size_t graph_tensors_slot(const struct graph_tensors * gt, const struct ggml_tensor * t) {
    size_t i = ((uintptr_t) t >> 4) & (gt->size - 1);
    while (gt->keys[i] != NULL && gt->keys[i] != t) {
        i = (i + 1) & (gt->size - 1);
    }
    return i;
}

static bool graph_tensors_grow(struct graph_tensors * gt) {
    struct graph_tensors grown = *gt;
    grown.size = gt->size == 0 ? 256 : 2 * gt->size;
    grown.keys = (struct ggml_tensor **) calloc(grown.size, sizeof(*grown.keys));
    grown.ids  = (int32_t *) calloc(grown.size, sizeof(*grown.ids));
    if (grown.keys == NULL || grown.ids == NULL) {
        free(grown.keys);
        free(grown.ids);
        return false;
    }
    for (size_t i = 0; i < gt->size; i++) {
        if (gt->keys[i] != NULL) {
            const size_t j = graph_tensors_slot(&grown, gt->keys[i]);
            grown.keys[j] = gt->keys[i];
            grown.ids[j]  = gt->ids[i];
        }
    }
    free(gt->keys);
    free(gt->ids);
    *gt = grown;
    return true;
}

static int32_t graph_tensors_id(const struct graph_tensors * gt, const struct ggml_tensor * t) {
    return t == NULL ? -1 : gt->ids[graph_tensors_slot(gt, t)];
}

static bool graph_tensors_enter(struct graph_tensors * gt, struct ggml_tensor * t, int32_t id) {
    if (2 * (gt->n_keys + 1) > gt->size && !graph_tensors_grow(gt)) {
        gt->ok = false;
        return false;
    }
    const size_t slot = graph_tensors_slot(gt, t);
    gt->keys[slot] = t;
    gt->ids[slot]  = id;
    gt->n_keys++;
    return true;
}

// post-order: an iterative walk would not need the stack, but graphs are a few hundred deep at most
static void graph_tensors_visit(struct graph_tensors * gt, struct ggml_tensor * t) {
    if (!gt->ok || t == NULL) {
        return;
    }
    bool is_node = false;
    if (gt->size > 0) {
        const size_t slot = graph_tensors_slot(gt, t);
        if (gt->keys[slot] == t && gt->ids[slot] != MPI_NODE_PENDING) {
            return; // visited, or being visited
        }
        is_node = gt->keys[slot] == t;
        if (is_node) {
            gt->ids[slot] = MPI_VISITING;
        }
    }
    if (!is_node && !graph_tensors_enter(gt, t, MPI_VISITING)) {
        return;
    }
    if (t->view_src != NULL) {
        graph_tensors_visit(gt, t->view_src);
    }
    for (int i = 0; i < GGML_MAX_SRC && is_node; i++) {
        graph_tensors_visit(gt, t->src[i]);
    }
    if (!gt->ok) {
        return;
    }
    if (gt->n == gt->cap) {
        const size_t cap = gt->cap == 0 ? 64 : gt->cap * 2;
        struct ggml_tensor ** grown = (struct ggml_tensor **) realloc(gt->list, cap * sizeof(*grown));
        if (grown != NULL) {
            gt->list = grown;
        }
        bool * grown_is_node = (bool *) realloc(gt->list_is_node, cap * sizeof(*grown_is_node));
        if (grown_is_node != NULL) {
            gt->list_is_node = grown_is_node;
        }
        if (grown == NULL || grown_is_node == NULL) {
            gt->ok = false;
            return;
        }
        gt->cap = cap;
    }
    gt->ids[graph_tensors_slot(gt, t)] = (int32_t) gt->n; // the table may have grown meanwhile
    gt->list_is_node[gt->n] = is_node;
    gt->list[gt->n++]       = t;
}

static void put_tensor(struct ggml_mpi_writer * w, const struct graph_tensors * gt, struct ggml_tensor * t, bool is_node,
                       uint64_t handle, uint64_t offset) {
    // a tensor that is not a node is data to the worker: its op and parameters
    // (which may hold rank 0's addresses) do not travel
    static const int32_t no_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)] = { 0 };
    ggml_mpi_put_u32(w, (uint32_t) t->type);
    ggml_mpi_put_u32(w, (uint32_t) (is_node ? t->op : GGML_OP_NONE));
    ggml_mpi_put_u32(w, (uint32_t) t->flags);
    for (int i = 0; i < 4; i++) {
        ggml_mpi_put_u64(w, (uint64_t) t->ne[i]);
    }
    for (int i = 0; i < 4; i++) {
        ggml_mpi_put_u64(w, (uint64_t) t->nb[i]);
    }
    ggml_mpi_put_bytes(w, is_node ? (const void *) t->op_params : (const void *) no_params, sizeof(t->op_params));
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        ggml_mpi_put_u32(w, (uint32_t) (is_node ? graph_tensors_id(gt, t->src[i]) : -1));
    }
    ggml_mpi_put_u32(w, (uint32_t) graph_tensors_id(gt, t->view_src));
    ggml_mpi_put_u64(w, (uint64_t) t->view_offs);
    ggml_mpi_put_u64(w, handle);
    ggml_mpi_put_u64(w, offset);
    ggml_mpi_put_str(w, t->name);
}

// A node that computes nothing (a view, a reshape) is left out when its data
// is on another worker: the scheduler keeps such nodes in the split where
// they fall, though they belong to their source's device.
static bool node_is_elsewhere(struct ggml_tensor * node, ggml_mpi_buffer_ref_t buffer_ref, void * ref_ctx) {
    uint64_t  handle;
    uintptr_t base;
    return buffer_ref != NULL && ggml_op_is_empty(node->op) && node->buffer != NULL &&
           !buffer_ref(ref_ctx, node->buffer, &handle, &base);
}

bool ggml_mpi_put_graph(struct ggml_mpi_writer * w, const struct ggml_cgraph * graph, ggml_mpi_buffer_ref_t buffer_ref,
                        void * ref_ctx) {
    struct ggml_cgraph * g = (struct ggml_cgraph *) graph;
    const int n_graph_nodes = ggml_graph_n_nodes(g);
    struct ggml_tensor ** nodes = (struct ggml_tensor **) malloc(((size_t) n_graph_nodes + 1) * sizeof(*nodes));
    struct graph_tensors gt = { .ok = nodes != NULL };
    int n_nodes = 0;
    for (int i = 0; i < n_graph_nodes && gt.ok; i++) {
        struct ggml_tensor * node = ggml_graph_node(g, i);
        if (node_is_elsewhere(node, buffer_ref, ref_ctx)) {
            continue;
        }
        nodes[n_nodes++] = node;
        if (gt.size == 0 || gt.keys[graph_tensors_slot(&gt, node)] != node) {
            graph_tensors_enter(&gt, node, MPI_NODE_PENDING);
        }
    }
    for (int i = 0; i < n_nodes && gt.ok; i++) {
        graph_tensors_visit(&gt, nodes[i]);
    }
    bool ok = gt.ok;
    if (!ok) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
    }
    if (ok) {
        ggml_mpi_put_u32(w, (uint32_t) gt.n);
        for (size_t i = 0; i < gt.n && ok; i++) {
            struct ggml_tensor * t = gt.list[i];
            uint64_t handle = 0;
            uint64_t offset = 0;
            if (buffer_ref != NULL && t->data != NULL) {
                uintptr_t base = 0;
                if (t->buffer == NULL || !buffer_ref(ref_ctx, t->buffer, &handle, &base)) {
                    GGML_LOG_ERROR("%s: tensor '%s' (%s) is not in a buffer of this worker\n", __func__, t->name,
                                   ggml_op_desc(t));
                    ok = false;
                    break;
                }
                offset = (uint64_t) ((uintptr_t) t->data - base);
            }
            put_tensor(w, &gt, t, gt.list_is_node[i], handle, offset);
        }
        ggml_mpi_put_u32(w, (uint32_t) n_nodes);
        for (int i = 0; i < n_nodes && ok; i++) {
            ggml_mpi_put_u32(w, (uint32_t) graph_tensors_id(&gt, nodes[i]));
        }
    }
    free(nodes);
    free(gt.keys);
    free(gt.ids);
    free(gt.list);
    free(gt.list_is_node);
    if (ok && !w->ok) {
        GGML_LOG_ERROR("%s: out of memory for the message\n", __func__);
    }
    return ok && w->ok;
}

static bool refuse(const char * what, uint32_t index) {
    GGML_LOG_ERROR("ggml_mpi_get_graph: refusing the graph: tensor %u: %s\n", index, what);
    return false;
}

// reads tensor i into t; every other tensor it names is one of tensors[0, i)
static bool get_tensor(struct ggml_mpi_reader * r, uint32_t i, struct ggml_context * ctx, struct ggml_tensor ** tensors,
                       ggml_mpi_buffer_find_t find_buffer, void * find_ctx) {
    const uint32_t type  = ggml_mpi_get_u32(r);
    const uint32_t op    = ggml_mpi_get_u32(r);
    const uint32_t flags = ggml_mpi_get_u32(r);
    int64_t ne[4];
    size_t  nb[4];
    for (int k = 0; k < 4; k++) {
        ne[k] = (int64_t) ggml_mpi_get_u64(r);
    }
    for (int k = 0; k < 4; k++) {
        const uint64_t v = ggml_mpi_get_u64(r);
        nb[k] = v > MPI_MAX_NB ? SIZE_MAX : (size_t) v;
    }
    int32_t params[GGML_MAX_OP_PARAMS / sizeof(int32_t)];
    ggml_mpi_get_bytes(r, params, sizeof(params));
    int32_t src[GGML_MAX_SRC];
    for (int k = 0; k < GGML_MAX_SRC; k++) {
        src[k] = (int32_t) ggml_mpi_get_u32(r);
    }
    const int32_t  view_src  = (int32_t) ggml_mpi_get_u32(r);
    const uint64_t view_offs = ggml_mpi_get_u64(r);
    const uint64_t handle    = ggml_mpi_get_u64(r);
    const uint64_t offset    = ggml_mpi_get_u64(r);
    char name[GGML_MAX_NAME];
    ggml_mpi_get_str(r, name, sizeof(name));
    if (!r->ok) {
        return refuse("the message ends inside it or a name is too long", i);
    }
    size_t extent = 0;
    if (type >= GGML_TYPE_COUNT || !ggml_mpi_tensor_extent((enum ggml_type) type, ne, nb, &extent)) {
        return refuse("invalid type, shape or strides", i);
    }
    if (op >= GGML_OP_COUNT) {
        return refuse("invalid op", i);
    }
    if (ggml_mpi_op_is_local_only((enum ggml_op) op)) {
        return refuse("an op whose parameters are addresses of rank 0 (a custom function)", i);
    }
    for (int k = 0; k < GGML_MAX_SRC; k++) {
        // a CPY made by ggml_cast is its own destination (src[1] is itself)
        const bool cast_self = op == GGML_OP_CPY && k == 1 && src[k] == (int32_t) i;
        if (!cast_self && (src[k] < -1 || src[k] >= (int32_t) i)) {
            return refuse("a source that is not an earlier tensor", i);
        }
    }
    if (view_src < -1 || view_src >= (int32_t) i) {
        return refuse("a view of a tensor that is not an earlier one", i);
    }

    struct ggml_tensor * t = ggml_new_tensor(ctx, (enum ggml_type) type, 4, ne);
    for (int k = 0; k < 4; k++) {
        t->nb[k] = nb[k];
    }
    t->op    = (enum ggml_op) op;
    t->flags = (int32_t) flags;
    memcpy(t->op_params, params, sizeof(params));
    for (int k = 0; k < GGML_MAX_SRC; k++) {
        t->src[k] = src[k] < 0 ? NULL : src[k] == (int32_t) i ? t : tensors[src[k]];
    }
    t->view_src  = view_src < 0 ? NULL : tensors[view_src];
    t->view_offs = (size_t) view_offs;
    ggml_set_name(t, name);

    if (handle == 0) {
        if (offset != 0) {
            return refuse("an offset without a buffer", i);
        }
        if (find_buffer != NULL && extent > 0) {
            return refuse("data without a buffer", i);
        }
    } else {
        if (find_buffer == NULL) {
            return refuse("a buffer where none is expected", i);
        }
        ggml_backend_buffer_t buffer = find_buffer(find_ctx, handle);
        if (buffer == NULL) {
            return refuse("an unknown buffer", i);
        }
        const size_t size = ggml_backend_buffer_get_size(buffer);
        if (offset > size || extent > size - offset) {
            return refuse("its data runs past the end of its buffer", i);
        }
        if (t->view_src != NULL) {
            // offsets compared as numbers: a hostile view_offs must not make a pointer past its object
            const uint64_t src_offset = t->view_src->buffer == buffer ?
                (uint64_t) ((uintptr_t) t->view_src->data - (uintptr_t) ggml_backend_buffer_get_base(buffer)) : UINT64_MAX;
            if (src_offset == UINT64_MAX || view_offs > UINT64_MAX - src_offset || src_offset + view_offs != offset) {
                return refuse("a view whose data is not where its source's is", i);
            }
        }
        t->buffer = buffer;
        t->data   = (uint8_t *) ggml_backend_buffer_get_base(buffer) + offset;
    }
    tensors[i] = t;
    return true;
}

struct ggml_cgraph * ggml_mpi_get_graph(struct ggml_mpi_reader * r, ggml_mpi_buffer_find_t find_buffer, void * find_ctx,
                                        struct ggml_context ** ctx_out) {
    *ctx_out = NULL;
    const uint32_t n_tensors = ggml_mpi_get_u32(r);
    // each description takes more than 200 bytes: a count the message cannot hold is refused before allocating
    if (!r->ok || n_tensors == 0 || n_tensors > MPI_MAX_TENSORS || n_tensors > (r->size - r->pos) / 200) {
        GGML_LOG_ERROR("%s: refusing a graph of %u tensors in a message of %zu bytes\n", __func__, n_tensors, r->size);
        return NULL;
    }
    struct ggml_init_params params = {
        .mem_size   = (size_t) n_tensors * ggml_tensor_overhead() + ggml_graph_overhead_custom(n_tensors, false),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor ** tensors = (struct ggml_tensor **) calloc(n_tensors, sizeof(*tensors));
    if (ctx == NULL || tensors == NULL) {
        GGML_LOG_ERROR("%s: out of memory for a graph of %u tensors\n", __func__, n_tensors);
        ggml_free(ctx);
        free(tensors);
        return NULL;
    }
    bool ok = true;
    for (uint32_t i = 0; i < n_tensors && ok; i++) {
        ok = get_tensor(r, i, ctx, tensors, find_buffer, find_ctx);
    }
    struct ggml_cgraph * graph = NULL;
    if (ok) {
        const uint32_t n_nodes = ggml_mpi_get_u32(r);
        if (!r->ok || n_nodes > n_tensors) {
            GGML_LOG_ERROR("%s: refusing the graph: %u nodes of %u tensors\n", __func__, n_nodes, n_tensors);
            ok = false;
        } else {
            graph = ggml_new_graph_custom(ctx, n_tensors, false);
            for (uint32_t i = 0; i < n_nodes && ok; i++) {
                const uint32_t id = ggml_mpi_get_u32(r);
                if (!r->ok || id >= n_tensors) {
                    GGML_LOG_ERROR("%s: refusing the graph: node %u is not one of its tensors\n", __func__, i);
                    ok = false;
                } else {
                    ggml_graph_add_node(graph, tensors[id]);
                }
            }
        }
    }
    if (ok && !ggml_mpi_reader_done(r)) {
        GGML_LOG_ERROR("%s: refusing the graph: %zu bytes after its end\n", __func__, r->size - r->pos);
        ok = false;
    }
    free(tensors);
    if (!ok) {
        ggml_free(ctx);
        return NULL;
    }
    *ctx_out = ctx;
    return graph;
}
