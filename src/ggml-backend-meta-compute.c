// ggml-backend-meta-compute.c: the meta backend (stream): one simple backend
// per simple device, graphs computed on all of them, partial sums reduced.
//
// A graph is cut after every node whose result is a PARTIAL sum (a MUL_MAT
// over a split K dimension): each device computes its part of the graph up to
// that node on its own slices, then the partial results are added across the
// devices so that every device holds the full sum, and the next part starts.
// The last node too: a result read later, or used by the next graph, is whole.
// A graph is also cut before a node that needs a split source whole (a
// single-source GLU of rows split in one block): the devices' slices are
// gathered on the host into a copy of the whole source on every device (a
// scratch buffer per device, kept by the backend), which the node reads. And
// a product whose weight is split along K while its src1 is whole reads a
// view of the device's K columns of src1 (no transfer), its result a partial
// sum like any K-split product.
// The reduction uses the simple devices' collective when their registry
// exports ggml_backend_comm_init / ggml_backend_comm_allreduce_tensor (NCCL
// for CUDA upstream, MPI here); otherwise the host adds the devices' values
// (f32, f16, bf16) and writes the sum back to each: slow, but every backend
// can do it. Upstream's fallback adds on the devices instead; the results are
// the same up to rounding.
//
// Per graph the device graphs are rebuilt unless the graph has the uid of the
// last one computed and no slices were made since (the scheduler's graphs have
// no uid: always rebuilt, which costs a pass over the nodes).

#include "ggml-backend-meta-impl.h"

#include <stdlib.h>
#include <string.h>

// what happens between two parts of the device graphs
enum meta_cut_kind {
    META_CUT_REDUCE,   // the partial sums of node are added across the devices
    META_CUT_GATHER,   // src of node is gathered into gathered[j] on every device
};

struct meta_cut {
    int                  after;     // the last node of the part before the cut
    enum meta_cut_kind   kind;
    int                  node;
    struct ggml_tensor * meta_src;  // GATHER: the split source (a tensor of the graph)
    struct ggml_tensor **gathered;  // GATHER: its whole copy on each device (n_backends, in aux_tensors)
};

struct ggml_backend_meta_context {
    char                 * name;
    size_t                 n_backends;
    ggml_backend_t       * backends;        // n_backends, owned

    // per backend: a graph with the device's copies of the nodes
    struct ggml_context  * graph_ctx;
    struct ggml_cgraph  ** graphs;          // n_backends
    int                    graph_capacity;  // nodes each graph can hold
    struct meta_cut      * cuts;            // where the parts end, ascending (2 per node at most)
    int                    n_cuts;

    // the gathered copies and K views the device graphs read (headers), and
    // per backend a scratch buffer holding the gathered copies (one at a time)
    struct ggml_context   * aux_ctx;
    struct ggml_tensor   ** aux_tensors;    // the gathered copies, n_backends per GATHER cut
    ggml_backend_buffer_t * scratch;        // n_backends
    uint64_t               uid;             // of the graph the device graphs were built for (0: none)
    uint64_t               generation;      // ggml_backend_meta_slices_generation() when they were built

    void                               * comm_ctx;
    ggml_backend_comm_allreduce_tensor_t comm_allreduce;
    ggml_backend_comm_free_t             comm_free;
};

static struct ggml_backend_meta_context * meta_ctx(ggml_backend_t backend) {
    GGML_ASSERT(ggml_backend_is_meta(backend));
    return (struct ggml_backend_meta_context *) backend->context;
}

static const char * ggml_backend_meta_get_name(ggml_backend_t backend) {
    return meta_ctx(backend)->name;
}

static void meta_ctx_free(struct ggml_backend_meta_context * ctx) {
    if (ctx->comm_ctx != NULL && ctx->comm_free != NULL) {
        ctx->comm_free(ctx->comm_ctx);
    }
    for (size_t j = 0; j < ctx->n_backends; j++) {
        if (ctx->backends[j] != NULL) {
            ggml_backend_free(ctx->backends[j]);
        }
    }
    if (ctx->graph_ctx != NULL) {
        ggml_free(ctx->graph_ctx);
    }
    if (ctx->aux_ctx != NULL) {
        ggml_free(ctx->aux_ctx);
    }
    for (size_t j = 0; ctx->scratch != NULL && j < ctx->n_backends; j++) {
        if (ctx->scratch[j] != NULL) {
            ggml_backend_buffer_free(ctx->scratch[j]);
        }
    }
    free(ctx->scratch);
    free(ctx->aux_tensors);
    free(ctx->graphs);
    free(ctx->cuts);
    free(ctx->backends);
    free(ctx->name);
    free(ctx);
}

static void ggml_backend_meta_free(ggml_backend_t backend) {
    meta_ctx_free(meta_ctx(backend));
    free(backend);
}

// Async transfers are offered for every split; one with segments or a
// partial sum waits (see ggml_backend_meta_xfer).
static void ggml_backend_meta_set_tensor_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data,
                                               size_t offset, size_t size) {
    ggml_backend_meta_xfer(backend, true, tensor, (void *) data, offset, size);
}

static void ggml_backend_meta_get_tensor_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data,
                                               size_t offset, size_t size) {
    ggml_backend_meta_xfer(backend, false, tensor, data, offset, size);
}

static void ggml_backend_meta_synchronize(ggml_backend_t backend) {
    struct ggml_backend_meta_context * ctx = meta_ctx(backend);
    for (size_t j = 0; j < ctx->n_backends; j++) {
        ggml_backend_synchronize(ctx->backends[j]);
    }
}

// a view of the graph's host-side input that the scheduler leaves in the
// node list (upstream skips those too): it has no slices
static bool node_is_foreign(const struct ggml_tensor * node) {
    return !ggml_backend_buffer_is_meta(node->buffer);
}

// A node whose devices hold partial sums that its consumers take for whole
// values (a MUL_MAT over a split K): the sums are added after it. A node that
// is partial for its consumers too (made from tensors the program declared
// PARTIAL) stays partial; reading it adds the parts.
static bool node_needs_reduction(const struct ggml_tensor * node) {
    return !node_is_foreign(node) &&
           ggml_backend_meta_get_split_state(node, false).axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL &&
           ggml_backend_meta_get_split_state(node, true).axis  != GGML_BACKEND_SPLIT_AXIS_PARTIAL;
}

static bool node_is_mirrored(const struct ggml_tensor * t) {
    return t != NULL && (node_is_foreign(t) || ggml_backend_meta_get_split_state(t, false).axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED);
}

// Where the sum of node i's partial results is taken. Usually right after
// it; but an ADD_ID that adds a bias the program declared PARTIAL (each
// device holds its share, as llama.cpp's ffn_down_exps.bias) must add it to
// the partial sums before they are added up: the sum moves after the ADD_ID
// (past nodes in between that neither read node i nor anything split).
// Upstream also delays the sum past MoE weighting and expert sums, to send
// less; that changes no result and is not done here.
static int reduction_point(const struct ggml_cgraph * cgraph, int i) {
    const struct ggml_tensor * node = cgraph->nodes[i];
    int id = i;
    while (id + 1 < cgraph->n_nodes) {
        const struct ggml_tensor * next = cgraph->nodes[id + 1];
        bool unrelated = node_is_mirrored(next);
        for (int k = 0; k < GGML_MAX_SRC && unrelated; k++) {
            unrelated = next->src[k] == NULL || (next->src[k] != node && node_is_mirrored(next->src[k]));
        }
        if (!unrelated) {
            break;
        }
        id++;
    }
    if (id + 1 < cgraph->n_nodes) {
        const struct ggml_tensor * next = cgraph->nodes[id + 1];
        if (next->op == GGML_OP_ADD_ID && next->src[0] == node && !node_is_foreign(next) &&
                next->src[1] != NULL && ggml_backend_buffer_is_meta(next->src[1]->buffer) &&
                ggml_backend_meta_get_split_state(next->src[1], false).axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL &&
                node_is_mirrored(next->src[2])) {
            return id + 1;
        }
    }
    return i;
}

// device graphs large enough for n_nodes
static bool meta_reserve_graphs(struct ggml_backend_meta_context * ctx, int n_nodes) {
    if (n_nodes <= ctx->graph_capacity && ctx->graph_ctx != NULL) {
        return true;
    }
    const int cap = n_nodes > 2*ctx->graph_capacity ? n_nodes : 2*ctx->graph_capacity;
    const struct ggml_init_params params = {
        /*.mem_size   =*/ ctx->n_backends*ggml_graph_overhead_custom((size_t) cap, false),
        /*.mem_buffer =*/ NULL,
        /*.no_alloc   =*/ true,
    };
    struct ggml_context * gctx = ggml_init(params);
    struct meta_cut * cuts = realloc(ctx->cuts, 2*(size_t) cap*sizeof(cuts[0]));
    if (gctx == NULL || cuts == NULL) {
        if (gctx != NULL) {
            ggml_free(gctx);
        }
        if (cuts != NULL) {
            ctx->cuts = cuts;
        }
        return false;
    }
    ctx->cuts = cuts;
    if (ctx->graph_ctx != NULL) {
        ggml_free(ctx->graph_ctx);
    }
    ctx->graph_ctx = gctx;
    for (size_t j = 0; j < ctx->n_backends; j++) {
        ctx->graphs[j] = ggml_new_graph_custom(gctx, (size_t) cap, false);
    }
    ctx->graph_capacity = cap;
    return true;
}

// the whole copy of a gathered source: contiguous, the source's shape
static size_t gathered_size(const struct ggml_tensor * src) {
    return ggml_row_size(src->type, src->ne[0])*(size_t) (src->ne[1]*src->ne[2]*src->ne[3]);
}

// The tensors the device graphs read besides the simple tensors: for each
// source gathered, a whole copy on every device (all in the device's scratch
// buffer, at its start: one gather at a time, see meta_gather); for each
// product over a K-split weight and a whole src1, a view of the device's K
// columns of src1. The sources of the device nodes are pointed at them.
static enum ggml_status meta_build_aux(struct ggml_backend_meta_context * ctx, struct ggml_cgraph * cgraph) {
    const size_t n = ctx->n_backends;
    size_t n_gathers = 0, n_views = 0, scratch_need = 0;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        if (node_is_foreign(node)) {
            continue;
        }
        for (int k = 0; k < GGML_MAX_SRC; k++) {
            if (ggml_backend_meta_src_gathered(node, k)) {
                n_gathers++;
                const size_t size = gathered_size(node->src[k]);
                scratch_need = size > scratch_need ? size : scratch_need;
            }
        }
        n_views += ggml_backend_meta_src1_k_sliced(node) ? 1 : 0;
    }
    // the last graph's device graphs may still be running on them
    if (ctx->aux_ctx != NULL) {
        for (size_t j = 0; j < n; j++) {
            ggml_backend_synchronize(ctx->backends[j]);
        }
        ggml_free(ctx->aux_ctx);
        ctx->aux_ctx = NULL;
    }
    if (n_gathers + n_views == 0) {
        return GGML_STATUS_SUCCESS;
    }
    const struct ggml_init_params params = { (n_gathers + n_views)*n*ggml_tensor_overhead(), NULL, true };
    ctx->aux_ctx = ggml_init(params);
    struct ggml_tensor ** aux = realloc(ctx->aux_tensors, (n_gathers*n + 1)*sizeof(aux[0]));
    if (ctx->aux_ctx == NULL || aux == NULL) {
        ctx->aux_tensors = aux != NULL ? aux : ctx->aux_tensors;
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return GGML_STATUS_ALLOC_FAILED;
    }
    ctx->aux_tensors = aux;
    if (scratch_need > 0) {
        if (ctx->scratch == NULL && (ctx->scratch = calloc(n, sizeof(ctx->scratch[0]))) == NULL) {
            GGML_LOG_ERROR("%s: out of memory\n", __func__);
            return GGML_STATUS_ALLOC_FAILED;
        }
        for (size_t j = 0; j < n; j++) {
            ggml_backend_buffer_type_t buft = ggml_backend_get_default_buffer_type(ctx->backends[j]);
            const size_t need = scratch_need + ggml_backend_buft_get_alignment(buft);
            if (ctx->scratch[j] != NULL && ggml_backend_buffer_get_size(ctx->scratch[j]) >= need) {
                continue;
            }
            if (ctx->scratch[j] != NULL) {
                ggml_backend_buffer_free(ctx->scratch[j]);
            }
            ctx->scratch[j] = ggml_backend_buft_alloc_buffer(buft, need);
            if (ctx->scratch[j] == NULL) {
                GGML_LOG_ERROR("%s: %s: failed to allocate %zu bytes for gathered tensors\n", __func__,
                               ggml_backend_name(ctx->backends[j]), need);
                return GGML_STATUS_ALLOC_FAILED;
            }
        }
    }

    for (size_t j = 0; j < n; j++) {
        struct ggml_cgraph * g = ctx->graphs[j];
        for (int i = 0; i < cgraph->n_nodes; i++) {
            const struct ggml_tensor * node = cgraph->nodes[i];
            struct ggml_tensor * simple = g->nodes[i];
            if (node_is_foreign(node)) {
                continue;
            }
            for (int k = 0; k < GGML_MAX_SRC; k++) {
                if (!ggml_backend_meta_src_gathered(node, k)) {
                    continue;
                }
                const struct ggml_tensor * src = node->src[k];
                struct ggml_tensor * whole = ggml_new_tensor(ctx->aux_ctx, src->type, GGML_MAX_DIMS, src->ne);
                ggml_format_name(whole, "%s (gathered)", src->name);
                const enum ggml_status st = ggml_backend_tensor_alloc(ctx->scratch[j], whole, ggml_backend_buffer_get_base(ctx->scratch[j]));
                if (st != GGML_STATUS_SUCCESS) {
                    return st;
                }
                simple->src[k] = whole;
            }
            if (ggml_backend_meta_src1_k_sliced(node) && (simple->flags & GGML_TENSOR_FLAG_COMPUTE) != 0) {
                // the device's K columns: its slice of the weight's split, at the slices before it
                const struct ggml_backend_meta_split_state ss = ggml_backend_meta_get_split_state(node->src[0], true);
                int64_t k0 = 0;
                for (size_t p = 0; p < j; p++) {
                    k0 += ggml_meta_split_extent(&ss, n, p);
                }
                struct ggml_tensor * src1 = node_is_foreign(node->src[1]) ? node->src[1] : ggml_backend_meta_buffer_simple_tensor(node->src[1], j);
                struct ggml_tensor * view = ggml_view_4d(ctx->aux_ctx, src1, ggml_meta_split_extent(&ss, n, j), src1->ne[1], src1->ne[2],
                                                         src1->ne[3], src1->nb[1], src1->nb[2], src1->nb[3], (size_t) k0*src1->nb[0]);
                view->buffer = NULL;
                const enum ggml_status st = ggml_backend_view_init(view);
                if (st != GGML_STATUS_SUCCESS) {
                    return st;
                }
                simple->src[1] = view;
            }
        }
    }
    return GGML_STATUS_SUCCESS;
}

// Builds the device graphs and the cuts for cgraph. The simple tensors of
// this graph's nodes were made when it was allocated; the next graph's go
// into the other store, which is emptied now.
static enum ggml_status meta_build_graphs(struct ggml_backend_meta_context * ctx, struct ggml_cgraph * cgraph) {
    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggml_tensor * node = cgraph->nodes[i];
        if (node_is_foreign(node)) {
            continue;
        }
        struct ggml_backend_meta_buffer_context * bctx = (struct ggml_backend_meta_buffer_context *) node->buffer->context;
        if (bctx->stc_compute_index_next == bctx->stc_compute_index) {
            bctx->stc_compute_index_next = bctx->stc_compute_index ^ 1;
            ggml_meta_tensor_store_reset(&bctx->stc_compute[bctx->stc_compute_index_next]);
        }
    }
    if (!meta_reserve_graphs(ctx, cgraph->n_nodes)) {
        GGML_LOG_ERROR("%s: out of memory for %d nodes\n", __func__, cgraph->n_nodes);
        return GGML_STATUS_ALLOC_FAILED;
    }

    ctx->n_cuts = 0;
    for (size_t j = 0; j < ctx->n_backends; j++) {
        struct ggml_cgraph * g = ctx->graphs[j];
        g->n_nodes = 0;
        g->n_leafs = 0;
        ggml_hash_set_reset(&g->visited_hash_set);
        for (int i = 0; i < cgraph->n_nodes; i++) {
            struct ggml_tensor * node = cgraph->nodes[i];
            struct ggml_tensor * simple = node_is_foreign(node) ? node : ggml_backend_meta_buffer_simple_tensor(node, j);
            if (simple == NULL) {
                GGML_LOG_ERROR("%s: node %d '%s' has no slices (was it allocated in this meta buffer?)\n", __func__, i, node->name);
                return GGML_STATUS_FAILED;
            }
            g->nodes[g->n_nodes++] = simple;
            const size_t h = ggml_hash_insert(&g->visited_hash_set, simple);
            if (h != GGML_HASHSET_ALREADY_EXISTS && cgraph->use_counts != NULL) {
                g->use_counts[h] = ggml_hash_contains(&cgraph->visited_hash_set, node)
                    ? cgraph->use_counts[ggml_hash_find(&cgraph->visited_hash_set, node)] : 0;
            }
        }
        g->uid = ggml_graph_next_uid();
    }
    const enum ggml_status status = meta_build_aux(ctx, cgraph);
    if (status != GGML_STATUS_SUCCESS) {
        return status;
    }
    int n_gathers = 0;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        for (int k = 0; k < GGML_MAX_SRC && !node_is_foreign(node); k++) {
            if (ggml_backend_meta_src_gathered(node, k)) {
                struct meta_cut * cut = &ctx->cuts[ctx->n_cuts++];
                cut->after    = i - 1;
                cut->kind     = META_CUT_GATHER;
                cut->node     = i;
                cut->meta_src = node->src[k];
                cut->gathered = &ctx->aux_tensors[(size_t) n_gathers*ctx->n_backends];
                for (size_t j = 0; j < ctx->n_backends; j++) {
                    cut->gathered[j] = ctx->graphs[j]->nodes[i]->src[k];
                }
                n_gathers++;
            }
        }
        if (node_needs_reduction(node)) {
            const int at = reduction_point(cgraph, i);
            // a device that skipped the product (empty slices) skips what is added to it before the sum too
            for (size_t j = 0; j < ctx->n_backends && at > i; j++) {
                if ((ctx->graphs[j]->nodes[i]->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
                    for (int k = i + 1; k <= at; k++) {
                        ctx->graphs[j]->nodes[k]->flags &= ~GGML_TENSOR_FLAG_COMPUTE;
                    }
                }
            }
            struct meta_cut * cut = &ctx->cuts[ctx->n_cuts++];
            cut->after = at;
            cut->kind  = META_CUT_REDUCE;
            cut->node  = at;
            i = at;
        }
    }
    ctx->uid        = cgraph->uid;
    ctx->generation = ggml_backend_meta_slices_generation();
    return GGML_STATUS_SUCCESS;
}

// f32, f16 or bf16 values of a row of n elements, as floats
static void to_f32(enum ggml_type type, const void * src, float * dst, int64_t n) {
    switch (type) {
        case GGML_TYPE_F32:  memcpy(dst, src, (size_t) n*sizeof(float)); break;
        case GGML_TYPE_F16:  ggml_fp16_to_fp32_row((const ggml_fp16_t *) src, dst, n); break;
        case GGML_TYPE_BF16: ggml_bf16_to_fp32_row((const ggml_bf16_t *) src, dst, n); break;
        default: GGML_ABORT("unreachable");
    }
}

static void from_f32(enum ggml_type type, const float * src, void * dst, int64_t n) {
    switch (type) {
        case GGML_TYPE_F32:  memcpy(dst, src, (size_t) n*sizeof(float)); break;
        case GGML_TYPE_F16:  ggml_fp32_to_fp16_row(src, (ggml_fp16_t *) dst, n); break;
        case GGML_TYPE_BF16: ggml_fp32_to_bf16_row(src, (ggml_bf16_t *) dst, n); break;
        default: GGML_ABORT("unreachable");
    }
}

// Every device gets the sum of all devices' values of node i. A device that
// skipped the node (an empty slice of a source) adds nothing.
static enum ggml_status meta_allreduce_on_host(struct ggml_backend_meta_context * ctx, int i) {
    const struct ggml_tensor * t0 = ctx->graphs[0]->nodes[i];
    const enum ggml_type type = t0->type;
    if (type != GGML_TYPE_F32 && type != GGML_TYPE_F16 && type != GGML_TYPE_BF16) {
        GGML_LOG_ERROR("%s: cannot add partial sums of type %s ('%s')\n", __func__, ggml_type_name(type), t0->name);
        return GGML_STATUS_FAILED;
    }
    for (size_t j = 0; j < ctx->n_backends; j++) {
        if (!ggml_is_contiguous(ctx->graphs[j]->nodes[i])) {
            GGML_LOG_ERROR("%s: partial sum '%s' is not contiguous\n", __func__, t0->name);
            return GGML_STATUS_FAILED;
        }
    }
    const int64_t n_el   = ggml_nelements(t0);
    const size_t  nbytes = ggml_nbytes(t0);
    float * sum = calloc((size_t) n_el + 1, sizeof(float));
    float * tmp = malloc(((size_t) n_el + 1)*sizeof(float));
    void  * raw = malloc(nbytes + 1);
    if (sum == NULL || tmp == NULL || raw == NULL) {
        free(sum); free(tmp); free(raw);
        GGML_LOG_ERROR("%s: out of memory for %zu bytes\n", __func__, nbytes);
        return GGML_STATUS_ALLOC_FAILED;
    }
    for (size_t j = 0; j < ctx->n_backends; j++) {
        ggml_backend_synchronize(ctx->backends[j]);
    }
    for (size_t j = 0; j < ctx->n_backends; j++) {
        const struct ggml_tensor * t = ctx->graphs[j]->nodes[i];
        if ((t->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
            continue;
        }
        ggml_backend_tensor_get(t, raw, 0, nbytes);
        to_f32(type, raw, tmp, n_el);
        for (int64_t k = 0; k < n_el; k++) {
            sum[k] += tmp[k];
        }
    }
    from_f32(type, sum, raw, n_el);
    for (size_t j = 0; j < ctx->n_backends; j++) {
        ggml_backend_tensor_set(ctx->graphs[j]->nodes[i], raw, 0, nbytes);
    }
    free(sum); free(tmp); free(raw);
    return GGML_STATUS_SUCCESS;
}

static enum ggml_status meta_allreduce(struct ggml_backend_meta_context * ctx, int i) {
    if (ctx->comm_ctx != NULL) {
        struct ggml_tensor ** nodes = malloc(ctx->n_backends*sizeof(nodes[0]));
        if (nodes != NULL) {
            for (size_t j = 0; j < ctx->n_backends; j++) {
                nodes[j] = ctx->graphs[j]->nodes[i];
                // a device that skipped the node (an empty slice of a source)
                // adds nothing: the collective sums what its memory holds
                if ((nodes[j]->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
                    ggml_backend_tensor_memset(nodes[j], 0, 0, ggml_nbytes(nodes[j]));
                }
            }
            const bool ok = ctx->comm_allreduce(ctx->comm_ctx, nodes);
            free(nodes);
            if (ok) {
                return GGML_STATUS_SUCCESS;
            }
        }
    }
    return meta_allreduce_on_host(ctx, i);
}

// Every device gets the whole of cut's split source in its gathered copy:
// the host reads each device's slice, puts it at its place along the split
// axis and writes the whole to every device (upstream has no gather; the
// bytes are small next to the weights: an activation of the batch).
static enum ggml_status meta_gather(struct ggml_backend_meta_context * ctx, const struct meta_cut * cut) {
    const size_t n = ctx->n_backends;
    const struct ggml_tensor * src = cut->meta_src;
    const struct ggml_backend_meta_split_state ss = ggml_backend_meta_get_split_state(src, true);
    const int axis = (int) ss.axis;
    GGML_ASSERT(ggml_meta_axis_is_dim(ss.axis) && ss.n_segments == 1 && ss.nr[0] == 1);

    // the whole as [outer][ne[axis]][inner bytes]
    const size_t total = gathered_size(src);
    size_t inner = ggml_row_size(src->type, src->ne[0]);
    for (int d = 1; d <= axis; d++) {
        inner *= (size_t) src->ne[d];
    }
    inner /= (size_t) src->ne[axis];
    const size_t outer = total / (inner*(size_t) src->ne[axis]);

    char * whole = malloc(total + 1);
    char * part  = malloc(total + 1);
    if (whole == NULL || part == NULL) {
        free(whole); free(part);
        GGML_LOG_ERROR("%s: out of memory for %zu bytes\n", __func__, total);
        return GGML_STATUS_ALLOC_FAILED;
    }
    for (size_t j = 0; j < n; j++) {
        ggml_backend_synchronize(ctx->backends[j]);
    }
    int64_t at = 0;
    for (size_t j = 0; j < n; j++) {
        const int64_t ext = ggml_meta_split_extent(&ss, n, j);
        const struct ggml_tensor * slice = ggml_backend_meta_buffer_simple_tensor(src, j);
        if (ext == 0) {
            continue;
        }
        if (slice == NULL || !ggml_is_contiguous(slice)) {
            free(whole); free(part);
            GGML_LOG_ERROR("%s: slice %zu of '%s' is not contiguous: cannot gather it\n", __func__, j, src->name);
            return GGML_STATUS_FAILED;
        }
        const size_t run = inner*(size_t) ext;
        ggml_backend_tensor_get(slice, part, 0, run*outer);
        for (size_t o = 0; o < outer; o++) {
            memcpy(whole + o*inner*(size_t) src->ne[axis] + inner*(size_t) at, part + o*run, run);
        }
        at += ext;
    }
    for (size_t j = 0; j < n; j++) {
        ggml_backend_tensor_set(cut->gathered[j], whole, 0, total);
    }
    free(whole);
    free(part);
    return GGML_STATUS_SUCCESS;
}

static enum ggml_status ggml_backend_meta_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct ggml_backend_meta_context * ctx = meta_ctx(backend);
    if (cgraph->grads != NULL) {
        GGML_LOG_ERROR("%s: graphs with gradients are not supported by the meta backend\n", __func__);
        return GGML_STATUS_FAILED;
    }
    if (cgraph->uid == 0 || cgraph->uid != ctx->uid || ctx->graph_ctx == NULL ||
            ctx->generation != ggml_backend_meta_slices_generation()) {
        const enum ggml_status status = meta_build_graphs(ctx, cgraph);
        if (status != GGML_STATUS_SUCCESS) {
            ctx->uid = 0;
            return status;
        }
    }

    int start = 0;
    for (int c = 0; c <= ctx->n_cuts; c++) {
        const int stop = c < ctx->n_cuts ? ctx->cuts[c].after + 1 : cgraph->n_nodes;
        for (size_t j = 0; j < ctx->n_backends && stop > start; j++) {
            struct ggml_cgraph part = ggml_graph_view(ctx->graphs[j], start, stop);
            const enum ggml_status status = ggml_backend_graph_compute_async(ctx->backends[j], &part);
            if (status != GGML_STATUS_SUCCESS) {
                GGML_LOG_ERROR("%s: %s failed to compute nodes %d..%d: %s\n", __func__,
                               ggml_backend_name(ctx->backends[j]), start, stop - 1, ggml_status_to_string(status));
                return status;
            }
        }
        if (c < ctx->n_cuts && ctx->n_backends > 1) {
            const enum ggml_status status = ctx->cuts[c].kind == META_CUT_REDUCE ? meta_allreduce(ctx, ctx->cuts[c].node)
                                                                                 : meta_gather(ctx, &ctx->cuts[c]);
            if (status != GGML_STATUS_SUCCESS) {
                return status;
            }
        }
        start = stop;
    }
    return GGML_STATUS_SUCCESS;
}

static const struct ggml_backend_i ggml_backend_meta_i = {
    /* .get_name            = */ ggml_backend_meta_get_name,
    /* .free                = */ ggml_backend_meta_free,
    /* .set_tensor_async    = */ ggml_backend_meta_set_tensor_async,
    /* .get_tensor_async    = */ ggml_backend_meta_get_tensor_async,
    /* .set_tensor_2d_async = */ NULL,
    /* .get_tensor_2d_async = */ NULL,
    /* .cpy_tensor_async    = */ NULL,
    /* .synchronize         = */ ggml_backend_meta_synchronize,
    /* .graph_plan_create   = */ NULL,
    /* .graph_plan_free     = */ NULL,
    /* .graph_plan_update   = */ NULL,
    /* .graph_plan_compute  = */ NULL,
    /* .graph_compute       = */ ggml_backend_meta_graph_compute,
    /* .event_record        = */ NULL,
    /* .event_wait          = */ NULL,
    /* .graph_optimize      = */ NULL,
};

bool ggml_backend_is_meta(ggml_backend_t backend) {
    return backend != NULL && backend->iface.get_name == ggml_backend_meta_i.get_name;
}

size_t ggml_backend_meta_n_backends(ggml_backend_t meta_backend) {
    return meta_ctx(meta_backend)->n_backends;
}

ggml_backend_t ggml_backend_meta_simple_backend(ggml_backend_t meta_backend, size_t index) {
    const struct ggml_backend_meta_context * ctx = meta_ctx(meta_backend);
    GGML_ASSERT(index < ctx->n_backends);
    return ctx->backends[index];
}

static ggml_guid_t ggml_backend_meta_guid(void) {
    static ggml_guid guid = { 0x6d, 0x65, 0x74, 0x61, 0x2d, 0x63, 0x31, 0x31, 0x8a, 0x1f, 0x42, 0x0b, 0x9e, 0x53, 0xd7, 0x28 };
    return &guid;
}

static char * meta_strdup(const char * s) {
    const size_t len = strlen(s) + 1;
    char * d = malloc(len);
    if (d != NULL) {
        memcpy(d, s, len);
    }
    return d;
}

// the collective of the simple devices' registry, if it has one
static void meta_comm_init(struct ggml_backend_meta_context * ctx) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(ggml_backend_get_device(ctx->backends[0]));
    if (reg == NULL || ctx->n_backends < 2) {
        return;
    }
    // ISO C has no cast from void * to a function pointer: copy the bits
    void * p_init      = ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_init");
    void * p_allreduce = ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_allreduce_tensor");
    void * p_free      = ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_free");
    ggml_backend_comm_init_t             comm_init = NULL;
    ggml_backend_comm_allreduce_tensor_t allreduce = NULL;
    ggml_backend_comm_free_t             comm_free = NULL;
    if (p_init != NULL)      { memcpy(&comm_init, &p_init,      sizeof(comm_init)); }
    if (p_allreduce != NULL) { memcpy(&allreduce, &p_allreduce, sizeof(allreduce)); }
    if (p_free != NULL)      { memcpy(&comm_free, &p_free,      sizeof(comm_free)); }
    if (comm_init == NULL || allreduce == NULL) {
        return;
    }
    ctx->comm_ctx       = comm_init(ctx->backends, ctx->n_backends);
    ctx->comm_allreduce = allreduce;
    ctx->comm_free      = comm_free;
}

ggml_backend_t ggml_backend_meta_device_init_backend(ggml_backend_dev_t dev, const char * params) {
    const size_t n = ggml_backend_meta_dev_n_devs(dev);
    struct ggml_backend_meta_context * ctx = calloc(1, sizeof(*ctx));
    ggml_backend_t backend = calloc(1, sizeof(*backend));
    if (ctx == NULL || backend == NULL || (ctx->backends = calloc(n, sizeof(ctx->backends[0]))) == NULL ||
            (ctx->graphs = calloc(n, sizeof(ctx->graphs[0]))) == NULL ||
            (ctx->name = meta_strdup(ggml_backend_dev_name(dev))) == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        if (ctx != NULL) {
            meta_ctx_free(ctx);
        }
        free(backend);
        return NULL;
    }
    ctx->n_backends = n;
    for (size_t j = 0; j < n; j++) {
        ctx->backends[j] = ggml_backend_dev_init(ggml_backend_meta_dev_simple_dev(dev, j), params);
        if (ctx->backends[j] == NULL) {
            GGML_LOG_ERROR("%s: failed to start a backend on %s\n", __func__,
                           ggml_backend_dev_name(ggml_backend_meta_dev_simple_dev(dev, j)));
            meta_ctx_free(ctx);
            free(backend);
            return NULL;
        }
    }
    meta_comm_init(ctx);

    backend->guid    = ggml_backend_meta_guid();
    backend->iface   = ggml_backend_meta_i;
    backend->device  = dev;
    backend->context = ctx;
    return backend;
}
