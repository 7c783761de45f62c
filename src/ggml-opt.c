// ggml-opt.c: the optimizer API of ggml-opt.h: datasets, the optimizer
// context with its three graphs, results, and the epoch/fit loops.
//
// The context builds up to three graphs from the model's forward graph gf:
//   gf       forward pass and loss (plus predictions and correct count for
//            the cross-entropy loss);
//   gb_grad  gf and the backward pass, which adds the gradients into
//            accumulators (one per parameter, kept in ctx_static);
//   gb_opt   gb_grad and one optimizer step per parameter.
// With opt_period > 1, opt_period - 1 evaluations of gb_grad accumulate the
// gradients and the next one, of gb_opt, steps. With static graphs and
// opt_period 1 there is nothing to accumulate, so the gradients are ordinary
// intermediate tensors and need no memory of their own.
//
// The scheduler allocates the graph to evaluate. Static graphs are copied
// first (tensor by tensor, sharing data pointers), because allocation writes
// into the graph and its tensors: the originals stay usable for the next
// allocation of another of the three graphs.

#include "ggml-opt.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-impl.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ggml_opt_dataset {
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor  * data;
    struct ggml_tensor  * labels;

    int64_t ndata;
    int64_t ndata_shard;
    size_t  nbs_data;    // bytes of data per shard
    size_t  nbs_labels;  // bytes of labels per shard

    int64_t * permutation; // shard order, ndata / ndata_shard entries
    int64_t   nshards;
};

struct ggml_opt_context {
    ggml_backend_sched_t  backend_sched;
    struct ggml_cgraph  * allocated_graph;      // the graph (gf, gb_grad or gb_opt) the scheduler holds
    struct ggml_cgraph  * allocated_graph_copy; // what was given to the scheduler
    struct ggml_context * ctx_static;           // accumulators, moments, static loss tensors
    struct ggml_context * ctx_cpu;              // the optimizer's hyperparameters (host memory)
    struct ggml_context * ctx_compute;
    struct ggml_context * ctx_copy;             // the copy of a static graph
    ggml_backend_buffer_t buf_static;
    ggml_backend_buffer_t buf_cpu;
    uint64_t              rng_state;

    enum ggml_opt_loss_type  loss_type;
    enum ggml_opt_build_type build_type;       // what the next evaluation runs
    enum ggml_opt_build_type build_type_alloc; // the most that was built

    struct ggml_tensor * inputs;
    struct ggml_tensor * outputs;
    struct ggml_tensor * labels;

    struct ggml_tensor * loss;
    struct ggml_tensor * pred;
    struct ggml_tensor * ncorrect;

    struct ggml_cgraph * gf;
    struct ggml_cgraph * gb_grad;
    struct ggml_cgraph * gb_opt;
    bool static_graphs;
    bool eval_ready;

    // per node of gf (NULL where none), made once
    struct ggml_tensor ** grad_accs;
    struct ggml_tensor ** grad_m;
    struct ggml_tensor ** grad_v;
    int                   n_grad_nodes;

    int64_t iter;        // optimizer steps done + 1
    int32_t opt_period;
    int32_t opt_i;       // evaluations with backward pass in the current period
    bool    loss_per_datapoint;

    ggml_opt_get_optimizer_params get_opt_pars;
    void *                        get_opt_pars_ud;
    struct ggml_tensor *          opt_step_params;

    enum ggml_opt_optimizer_type optimizer;
};

struct ggml_opt_result {
    int64_t   ndata;
    float   * loss;      // one per physical batch
    size_t    n_loss;
    size_t    cap_loss;
    int32_t * pred;      // one per datapoint
    size_t    n_pred;
    size_t    cap_pred;
    int64_t   ncorrect;  // -1: not known

    int64_t opt_period;
    bool    loss_per_datapoint;
};

static void * opt_grow(void * p, size_t * cap, size_t need, size_t elem) {
    if (need <= *cap) {
        return p;
    }
    size_t cap_new = *cap ? *cap : 64;
    while (cap_new < need) {
        cap_new *= 2;
    }
    void * q = realloc(p, cap_new * elem);
    GGML_ASSERT(q != NULL && "ggml-opt: out of memory");
    *cap = cap_new;
    return q;
}

//
// random numbers: splitmix64, one stream per context
//

static uint64_t opt_rng_next(uint64_t * state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// uniform in [0, n) without modulo bias
static int64_t opt_rng_below(uint64_t * state, int64_t n) {
    const uint64_t un    = (uint64_t) n;
    const uint64_t limit = UINT64_MAX - UINT64_MAX % un;
    uint64_t r;
    do {
        r = opt_rng_next(state);
    } while (r >= limit);
    return (int64_t) (r % un);
}

//
// dataset
//

ggml_opt_dataset_t ggml_opt_dataset_init(enum ggml_type type_data, enum ggml_type type_label, int64_t ne_datapoint,
                                         int64_t ne_label, int64_t ndata, int64_t ndata_shard) {
    GGML_ASSERT(ne_datapoint > 0);
    GGML_ASSERT(ne_label >= 0);
    GGML_ASSERT(ndata > 0);
    GGML_ASSERT(ndata_shard > 0);

    ggml_opt_dataset_t ds = calloc(1, sizeof(*ds));
    if (ds == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    ds->ndata       = ndata;
    ds->ndata_shard = ndata_shard;

    struct ggml_init_params params = { 2 * ggml_tensor_overhead(), NULL, true };
    ds->ctx = ggml_init(params);
    if (ds->ctx == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        free(ds);
        return NULL;
    }
    ds->data     = ggml_new_tensor_2d(ds->ctx, type_data, ne_datapoint, ndata);
    ds->nbs_data = ggml_nbytes(ds->data) * (size_t) ndata_shard / (size_t) ndata;
    if (ne_label > 0) {
        ds->labels     = ggml_new_tensor_2d(ds->ctx, type_label, ne_label, ndata);
        ds->nbs_labels = ggml_nbytes(ds->labels) * (size_t) ndata_shard / (size_t) ndata;
    }

    ds->nshards     = ndata / ndata_shard;
    ds->permutation = malloc((size_t) MAX(ds->nshards, 1) * sizeof(int64_t));
    ds->buf         = ggml_backend_alloc_ctx_tensors_from_buft(ds->ctx, ggml_backend_cpu_buffer_type());
    if (ds->permutation == NULL || ds->buf == NULL) {
        GGML_LOG_ERROR("%s: cannot allocate a dataset of %" PRId64 " datapoints\n", __func__, ndata);
        ggml_opt_dataset_free(ds);
        return NULL;
    }
    for (int64_t i = 0; i < ds->nshards; i++) {
        ds->permutation[i] = i;
    }
    return ds;
}

void ggml_opt_dataset_free(ggml_opt_dataset_t dataset) {
    if (dataset == NULL) {
        return;
    }
    ggml_backend_buffer_free(dataset->buf);
    ggml_free(dataset->ctx);
    free(dataset->permutation);
    free(dataset);
}

int64_t ggml_opt_dataset_ndata(ggml_opt_dataset_t dataset) {
    return dataset->ndata;
}

struct ggml_tensor * ggml_opt_dataset_data(ggml_opt_dataset_t dataset) {
    return dataset->data;
}

struct ggml_tensor * ggml_opt_dataset_labels(ggml_opt_dataset_t dataset) {
    return dataset->labels;
}

void ggml_opt_dataset_shuffle(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, int64_t idata) {
    GGML_ASSERT(idata <= dataset->ndata);
    int64_t n = dataset->nshards;
    if (idata >= 0) {
        GGML_ASSERT(idata % dataset->ndata_shard == 0);
        n = idata / dataset->ndata_shard;
    }
    // Fisher-Yates over the first n shards
    for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j   = opt_rng_below(&opt_ctx->rng_state, i + 1);
        const int64_t tmp = dataset->permutation[i];
        dataset->permutation[i] = dataset->permutation[j];
        dataset->permutation[j] = tmp;
    }
}

// how many shards a batch of nb_data_batch bytes holds
static int64_t dataset_shards_per_batch(ggml_opt_dataset_t dataset, size_t nb_data_batch, int64_t ibatch) {
    GGML_ASSERT(nb_data_batch % dataset->nbs_data == 0);
    const int64_t n = (int64_t) (nb_data_batch / dataset->nbs_data);
    GGML_ASSERT((ibatch + 1) * n <= dataset->nshards);
    return n;
}

void ggml_opt_dataset_get_batch(ggml_opt_dataset_t dataset, struct ggml_tensor * data_batch, struct ggml_tensor * labels_batch,
                                int64_t ibatch) {
    GGML_ASSERT(data_batch != NULL && ggml_is_contiguous(data_batch));
    GGML_ASSERT(labels_batch == NULL || ggml_is_contiguous(labels_batch));
    GGML_ASSERT((labels_batch == NULL) == (dataset->labels == NULL));
    GGML_ASSERT(data_batch->type == dataset->data->type);
    GGML_ASSERT(labels_batch == NULL || labels_batch->type == dataset->labels->type);

    const int64_t n = dataset_shards_per_batch(dataset, ggml_nbytes(data_batch), ibatch);
    if (labels_batch != NULL) {
        GGML_ASSERT(ggml_nbytes(labels_batch) == (size_t) n * dataset->nbs_labels);
    }
    for (int64_t k = 0; k < n; k++) {
        const int64_t ishard = dataset->permutation[ibatch * n + k];
        const char * src = (const char *) dataset->data->data + (size_t) ishard * dataset->nbs_data;
        ggml_backend_tensor_set(data_batch, src, (size_t) k * dataset->nbs_data, dataset->nbs_data);
        if (labels_batch != NULL) {
            const char * lsrc = (const char *) dataset->labels->data + (size_t) ishard * dataset->nbs_labels;
            ggml_backend_tensor_set(labels_batch, lsrc, (size_t) k * dataset->nbs_labels, dataset->nbs_labels);
        }
    }
}

void ggml_opt_dataset_get_batch_host(ggml_opt_dataset_t dataset, void * data_batch, size_t nb_data_batch, void * labels_batch,
                                     int64_t ibatch) {
    GGML_ASSERT((labels_batch == NULL) == (dataset->labels == NULL));
    const int64_t n = dataset_shards_per_batch(dataset, nb_data_batch, ibatch);
    for (int64_t k = 0; k < n; k++) {
        const int64_t ishard = dataset->permutation[ibatch * n + k];
        memcpy((char *) data_batch + (size_t) k * dataset->nbs_data,
               (const char *) dataset->data->data + (size_t) ishard * dataset->nbs_data, dataset->nbs_data);
        if (labels_batch != NULL) {
            memcpy((char *) labels_batch + (size_t) k * dataset->nbs_labels,
                   (const char *) dataset->labels->data + (size_t) ishard * dataset->nbs_labels, dataset->nbs_labels);
        }
    }
}

//
// optimizer parameters
//

struct ggml_opt_optimizer_params ggml_opt_get_default_optimizer_params(void * userdata) {
    GGML_UNUSED(userdata);
    struct ggml_opt_optimizer_params p;
    p.adamw.alpha = 0.001f;
    p.adamw.beta1 = 0.9f;
    p.adamw.beta2 = 0.999f;
    p.adamw.eps   = 1e-8f;
    p.adamw.wd    = 0.0f;
    p.sgd.alpha   = 1e-3f;
    p.sgd.wd      = 0.0f;
    return p;
}

struct ggml_opt_optimizer_params ggml_opt_get_constant_optimizer_params(void * userdata) {
    return *(const struct ggml_opt_optimizer_params *) userdata;
}

struct ggml_opt_params ggml_opt_default_params(ggml_backend_sched_t backend_sched, enum ggml_opt_loss_type loss_type) {
    struct ggml_opt_params p = {
        .backend_sched   = backend_sched,
        .ctx_compute     = NULL,
        .inputs          = NULL,
        .outputs         = NULL,
        .loss_type       = loss_type,
        .build_type      = GGML_OPT_BUILD_TYPE_OPT,
        .opt_period      = 1,
        .get_opt_pars    = ggml_opt_get_default_optimizer_params,
        .get_opt_pars_ud = NULL,
        .optimizer       = GGML_OPT_OPTIMIZER_TYPE_ADAMW,
    };
    return p;
}

const char * ggml_opt_optimizer_name(enum ggml_opt_optimizer_type o) {
    switch (o) {
        case GGML_OPT_OPTIMIZER_TYPE_ADAMW: return "adamw";
        case GGML_OPT_OPTIMIZER_TYPE_SGD:   return "sgd";
        default:                            return "undefined";
    }
}

enum ggml_opt_optimizer_type ggml_opt_context_optimizer_type(ggml_opt_context_t opt_ctx) {
    return opt_ctx->optimizer;
}

//
// copying a static graph for the scheduler
//

struct tensor_map {
    struct ggml_hash_set  set;
    struct ggml_tensor ** vals;
};

static struct ggml_tensor * map_tensor(struct tensor_map * map, struct ggml_context * ctx, struct ggml_tensor * t) {
    if (t == NULL) {
        return NULL;
    }
    const size_t i = ggml_hash_find(&map->set, t);
    GGML_ASSERT(i != GGML_HASHSET_FULL);
    if (ggml_bitset_get(map->set.used, i)) {
        return map->vals[i];
    }
    struct ggml_tensor * c = ggml_dup_tensor(ctx, t);
    ggml_hash_insert(&map->set, t);
    map->vals[i] = c;

    c->op = t->op;
    memcpy(c->nb, t->nb, sizeof(c->nb));
    c->flags = t->flags;
    memcpy(c->op_params, t->op_params, sizeof(t->op_params));
    memcpy(c->name, t->name, sizeof(t->name));
    c->data      = t->data;
    c->buffer    = t->buffer;
    c->extra     = t->extra;
    c->view_offs = t->view_offs;
    c->view_src  = map_tensor(map, ctx, t->view_src);
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        c->src[j] = map_tensor(map, ctx, t->src[j]);
    }
    return c;
}

static struct ggml_cgraph * dup_graph(struct ggml_context * ctx, struct ggml_cgraph * src) {
    struct tensor_map map;
    map.set  = ggml_hash_set_new((size_t) src->visited_hash_set.size);
    map.vals = calloc(map.set.size, sizeof(struct ggml_tensor *));
    GGML_ASSERT(map.vals != NULL && "ggml-opt: out of memory");

    struct ggml_cgraph * dst = ggml_new_graph_custom(ctx, (size_t) src->size, true);
    for (int i = 0; i < src->n_leafs; i++) {
        ggml_build_forward_expand(dst, map_tensor(&map, ctx, src->leafs[i]));
    }
    GGML_ASSERT(dst->n_leafs == src->n_leafs);
    for (int i = 0; i < src->n_nodes; i++) {
        ggml_build_forward_expand(dst, map_tensor(&map, ctx, src->nodes[i]));
    }
    GGML_ASSERT(dst->n_nodes == src->n_nodes);
    for (int i = 0; i < src->n_nodes; i++) {
        const size_t is = ggml_hash_find(&src->visited_hash_set, src->nodes[i]);
        const size_t id = ggml_hash_find(&dst->visited_hash_set, dst->nodes[i]);
        GGML_ASSERT(is != GGML_HASHSET_FULL && ggml_bitset_get(src->visited_hash_set.used, is));
        GGML_ASSERT(id != GGML_HASHSET_FULL && ggml_bitset_get(dst->visited_hash_set.used, id));
        dst->grads[id]     = src->grads[is];
        dst->grad_accs[id] = src->grad_accs[is];
    }
    ggml_hash_set_free(&map.set);
    free(map.vals);
    return dst;
}

//
// building the graphs
//

static ggml_backend_buffer_t alloc_static(ggml_opt_context_t opt_ctx) {
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(opt_ctx->ctx_static,
                                                               ggml_backend_sched_get_backend(opt_ctx->backend_sched, 0));
    GGML_ASSERT(buf != NULL && "ggml-opt: cannot allocate the gradient accumulators and optimizer moments");
    return buf;
}

// the loss of opt_ctx->outputs and, for cross entropy, predictions and correct count
static void build_loss(ggml_opt_context_t opt_ctx, struct ggml_context * ctx) {
    struct ggml_tensor * out = opt_ctx->outputs;
    const float per_datapoint = 1.0f / ((float) opt_ctx->opt_period * (float) ggml_nelements(out));
    switch (opt_ctx->loss_type) {
        case GGML_OPT_LOSS_TYPE_MEAN:
            opt_ctx->loss = ggml_sum(ctx, out);
            ggml_set_name(opt_ctx->loss, "loss_sum");
            opt_ctx->loss = ggml_scale(ctx, opt_ctx->loss, per_datapoint);
            ggml_set_name(opt_ctx->loss, "loss_mean");
            opt_ctx->loss_per_datapoint = true;
            break;
        case GGML_OPT_LOSS_TYPE_SUM:
            opt_ctx->loss = ggml_sum(ctx, out);
            ggml_set_name(opt_ctx->loss, "loss_sum");
            opt_ctx->loss_per_datapoint = false;
            break;
        case GGML_OPT_LOSS_TYPE_CROSS_ENTROPY:
            opt_ctx->labels = ggml_dup_tensor(ctx, out);
            ggml_set_input(opt_ctx->labels);
            ggml_set_name(opt_ctx->labels, "labels");
            opt_ctx->loss = ggml_cross_entropy_loss(ctx, out, opt_ctx->labels);
            ggml_set_name(opt_ctx->loss, "loss_cross_entropy");
            if (opt_ctx->opt_period > 1) {
                opt_ctx->loss = ggml_scale(ctx, opt_ctx->loss, 1.0f / (float) opt_ctx->opt_period);
                ggml_set_name(opt_ctx->loss, "loss_cross_entropy_scaled");
            }
            opt_ctx->loss_per_datapoint = true;
            break;
        case GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR:
            opt_ctx->labels = ggml_dup_tensor(ctx, out);
            ggml_set_input(opt_ctx->labels);
            ggml_set_name(opt_ctx->labels, "labels");
            opt_ctx->loss = ggml_sub(ctx, out, opt_ctx->labels);
            ggml_set_name(opt_ctx->loss, "loss_error");
            opt_ctx->loss = ggml_sqr(ctx, opt_ctx->loss);
            ggml_set_name(opt_ctx->loss, "loss_squared_error");
            opt_ctx->loss = ggml_sum(ctx, opt_ctx->loss);
            ggml_set_name(opt_ctx->loss, "loss_sum_squared_error");
            opt_ctx->loss = ggml_scale(ctx, opt_ctx->loss, per_datapoint);
            ggml_set_name(opt_ctx->loss, "loss_mean_squared_error");
            opt_ctx->loss_per_datapoint = true;
            break;
    }
    ggml_set_output(opt_ctx->loss);
    ggml_set_loss(opt_ctx->loss);
    ggml_build_forward_expand(opt_ctx->gf, opt_ctx->loss);

    if (opt_ctx->loss_type == GGML_OPT_LOSS_TYPE_CROSS_ENTROPY) {
        opt_ctx->pred = ggml_argmax(ctx, out);
        ggml_set_name(opt_ctx->pred, "pred");
        ggml_set_output(opt_ctx->pred);
        ggml_build_forward_expand(opt_ctx->gf, opt_ctx->pred);

        opt_ctx->ncorrect = ggml_count_equal(ctx, opt_ctx->pred, ggml_argmax(ctx, opt_ctx->labels));
        ggml_set_name(opt_ctx->ncorrect, "ncorrect");
        ggml_set_output(opt_ctx->ncorrect);
        ggml_build_forward_expand(opt_ctx->gf, opt_ctx->ncorrect);
    }
}

// the accumulators (and AdamW moments) per node of gf, made on the first build
static void make_grad_tensors(ggml_opt_context_t opt_ctx, bool accumulate, bool need_momenta) {
    const int n = opt_ctx->gf->n_nodes;
    opt_ctx->n_grad_nodes = n;
    opt_ctx->grad_accs = calloc((size_t) n, sizeof(struct ggml_tensor *));
    opt_ctx->grad_m    = calloc((size_t) n, sizeof(struct ggml_tensor *));
    opt_ctx->grad_v    = calloc((size_t) n, sizeof(struct ggml_tensor *));
    GGML_ASSERT(opt_ctx->grad_accs && opt_ctx->grad_m && opt_ctx->grad_v && "ggml-opt: out of memory");
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * node = opt_ctx->gf->nodes[i];
        const bool param = (node->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        if ((accumulate && param) || (node->flags & GGML_TENSOR_FLAG_LOSS)) {
            opt_ctx->grad_accs[i] = ggml_new_tensor(opt_ctx->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
        }
        if (need_momenta && param) {
            opt_ctx->grad_m[i] = ggml_new_tensor(opt_ctx->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
            opt_ctx->grad_v[i] = ggml_new_tensor(opt_ctx->ctx_static, GGML_TYPE_F32, GGML_MAX_DIMS, node->ne);
        }
    }
}

// gb_opt: gb_grad with one optimizer step per parameter
static void build_opt_steps(ggml_opt_context_t opt_ctx, bool need_momenta) {
    opt_ctx->gb_opt = ggml_graph_dup(opt_ctx->ctx_compute, opt_ctx->gb_grad, true);

    const char * name = ggml_opt_optimizer_name(opt_ctx->optimizer);
    opt_ctx->opt_step_params = ggml_new_tensor_1d(opt_ctx->ctx_cpu, GGML_TYPE_F32, need_momenta ? 7 : 2);
    ggml_set_input(opt_ctx->opt_step_params);
    ggml_format_name(opt_ctx->opt_step_params, "%s_params", name);

    for (int i = opt_ctx->gf->n_nodes - 1; i >= 0; i--) {
        struct ggml_tensor * node = opt_ctx->gb_opt->nodes[i];
        struct ggml_tensor * grad = ggml_graph_get_grad(opt_ctx->gb_opt, node);
        if (grad == NULL || !(node->flags & GGML_TENSOR_FLAG_PARAM)) {
            continue;
        }
        struct ggml_tensor * step = NULL;
        switch (opt_ctx->optimizer) {
            case GGML_OPT_OPTIMIZER_TYPE_ADAMW:
                ggml_format_name(opt_ctx->grad_m[i], "AdamW m for %s", node->name);
                ggml_format_name(opt_ctx->grad_v[i], "AdamW v for %s", node->name);
                step = ggml_opt_step_adamw(opt_ctx->ctx_compute, node, grad, opt_ctx->grad_m[i], opt_ctx->grad_v[i],
                                           opt_ctx->opt_step_params);
                break;
            case GGML_OPT_OPTIMIZER_TYPE_SGD:
                step = ggml_opt_step_sgd(opt_ctx->ctx_compute, node, grad, opt_ctx->opt_step_params);
                break;
            default:
                GGML_ABORT("ggml-opt: unknown optimizer %d", (int) opt_ctx->optimizer);
        }
        ggml_format_name(step, "%s step for %s", name, node->name);
        ggml_build_forward_expand(opt_ctx->gb_opt, step);
    }
}

static void opt_build(ggml_opt_context_t opt_ctx) {
    GGML_ASSERT(opt_ctx->ctx_compute && "no compute context: use static graphs or call ggml_opt_prepare_alloc");
    GGML_ASSERT((!opt_ctx->static_graphs || opt_ctx->inputs->data) && "with static graphs the inputs must be allocated");

    const bool accumulate = opt_ctx->build_type_alloc >= GGML_OPT_BUILD_TYPE_GRAD &&
        !(opt_ctx->static_graphs && opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_OPT && opt_ctx->opt_period == 1);
    const bool need_momenta = opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_OPT &&
        opt_ctx->optimizer == GGML_OPT_OPTIMIZER_TYPE_ADAMW;

    ggml_set_input(opt_ctx->inputs);
    ggml_set_output(opt_ctx->outputs);

    size_t n_param = 0;
    for (int i = 0; i < opt_ctx->gf->n_nodes; i++) {
        const struct ggml_tensor * node = opt_ctx->gf->nodes[i];
        n_param += (node->flags & GGML_TENSOR_FLAG_PARAM) != 0;
        GGML_ASSERT(!(node->flags & GGML_TENSOR_FLAG_LOSS) && "ggml-opt: extra loss terms are not supported");
    }

    if (opt_ctx->ctx_static == NULL) {
        // the loss gradient, per parameter an accumulator and two moments,
        // and with static graphs the labels, loss, predictions and count
        const size_t per_param = (accumulate ? 1 : 0) + (need_momenta ? 2 : 0);
        const size_t n_tensors = 1 + per_param * n_param + (opt_ctx->static_graphs ? 9 : 0);
        struct ggml_init_params params = { n_tensors * ggml_tensor_overhead(), NULL, true };
        opt_ctx->ctx_static = ggml_init(params);
        GGML_ASSERT(opt_ctx->ctx_static != NULL && "ggml-opt: out of memory");
    }
    GGML_ASSERT(opt_ctx->build_type <= opt_ctx->build_type_alloc);

    {
        struct ggml_init_params params = { ggml_tensor_overhead(), NULL, true };
        ggml_free(opt_ctx->ctx_cpu);
        opt_ctx->ctx_cpu = ggml_init(params);
        GGML_ASSERT(opt_ctx->ctx_cpu != NULL && "ggml-opt: out of memory");
        ggml_backend_buffer_free(opt_ctx->buf_cpu);
        opt_ctx->buf_cpu = NULL;
    }

    build_loss(opt_ctx, opt_ctx->static_graphs ? opt_ctx->ctx_static : opt_ctx->ctx_compute);

    if (opt_ctx->buf_static != NULL) {
        if (opt_ctx->build_type == GGML_OPT_BUILD_TYPE_FORWARD) {
            return;
        }
    } else if (opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_FORWARD) {
        opt_ctx->buf_static = alloc_static(opt_ctx);
        return;
    }

    if (opt_ctx->grad_accs == NULL) {
        GGML_ASSERT(opt_ctx->build_type_alloc >= GGML_OPT_BUILD_TYPE_GRAD);
        make_grad_tensors(opt_ctx, accumulate, need_momenta);
    }
    GGML_ASSERT(opt_ctx->n_grad_nodes == opt_ctx->gf->n_nodes && "ggml-opt: the forward graph changed its size");

    opt_ctx->gb_grad = ggml_graph_dup(opt_ctx->ctx_compute, opt_ctx->gf, true);
    ggml_build_backward_expand(opt_ctx->ctx_compute, opt_ctx->gb_grad, opt_ctx->grad_accs);

    if (opt_ctx->buf_static != NULL) {
        if (opt_ctx->build_type == GGML_OPT_BUILD_TYPE_GRAD) {
            return;
        }
    } else if (opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_GRAD) {
        opt_ctx->buf_static = alloc_static(opt_ctx);
        ggml_graph_reset(opt_ctx->gb_grad);
    }

    GGML_ASSERT(opt_ctx->build_type_alloc == GGML_OPT_BUILD_TYPE_OPT);
    build_opt_steps(opt_ctx, need_momenta);

    if (opt_ctx->buf_static == NULL) {
        opt_ctx->buf_static = alloc_static(opt_ctx);
        ggml_graph_reset(opt_ctx->gb_opt);
    }
    opt_ctx->buf_cpu = ggml_backend_alloc_ctx_tensors_from_buft(opt_ctx->ctx_cpu, ggml_backend_cpu_buffer_type());
    GGML_ASSERT(opt_ctx->buf_cpu != NULL && "ggml-opt: out of memory");
}

ggml_opt_context_t ggml_opt_init(struct ggml_opt_params params) {
    GGML_ASSERT(params.opt_period >= 1);
    GGML_ASSERT(params.backend_sched != NULL);

    ggml_opt_context_t c = calloc(1, sizeof(*c));
    if (c == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    c->backend_sched    = params.backend_sched;
    c->ctx_compute      = params.ctx_compute;
    c->loss_type        = params.loss_type;
    c->build_type       = params.build_type;
    c->build_type_alloc = params.build_type;
    c->inputs           = params.inputs;
    c->outputs          = params.outputs;
    c->opt_period       = params.opt_period;
    c->get_opt_pars     = params.get_opt_pars;
    c->get_opt_pars_ud  = params.get_opt_pars_ud;
    c->optimizer        = params.optimizer;
    c->iter             = 1;
    c->rng_state        = 5489; // fixed, so that runs repeat
    c->static_graphs    = c->ctx_compute != NULL;

    if (!c->static_graphs) {
        GGML_ASSERT(c->inputs == NULL && c->outputs == NULL && "inputs and outputs need ctx_compute (static graphs)");
        return c;
    }
    GGML_ASSERT(c->inputs != NULL && c->outputs != NULL);

    c->gf = ggml_new_graph_custom(c->ctx_compute, GGML_DEFAULT_GRAPH_SIZE, true);
    ggml_build_forward_expand(c->gf, c->outputs);
    opt_build(c);
    return c;
}

void ggml_opt_free(ggml_opt_context_t opt_ctx) {
    if (opt_ctx == NULL) {
        return;
    }
    ggml_backend_buffer_free(opt_ctx->buf_static);
    ggml_backend_buffer_free(opt_ctx->buf_cpu);
    ggml_free(opt_ctx->ctx_static);
    ggml_free(opt_ctx->ctx_cpu);
    ggml_free(opt_ctx->ctx_copy);
    free(opt_ctx->grad_accs);
    free(opt_ctx->grad_m);
    free(opt_ctx->grad_v);
    free(opt_ctx);
}

void ggml_opt_reset(ggml_opt_context_t opt_ctx, bool optimizer) {
    if (optimizer) {
        ggml_graph_reset(opt_ctx->gb_opt);
        opt_ctx->iter = 1;
    } else {
        ggml_graph_reset(opt_ctx->gb_grad);
    }
}

bool ggml_opt_static_graphs(ggml_opt_context_t opt_ctx) {
    return opt_ctx->static_graphs;
}

struct ggml_tensor * ggml_opt_inputs(ggml_opt_context_t opt_ctx) {
    return opt_ctx->inputs;
}

struct ggml_tensor * ggml_opt_outputs(ggml_opt_context_t opt_ctx) {
    return opt_ctx->outputs;
}

struct ggml_tensor * ggml_opt_labels(ggml_opt_context_t opt_ctx) {
    return opt_ctx->labels;
}

struct ggml_tensor * ggml_opt_loss(ggml_opt_context_t opt_ctx) {
    return opt_ctx->loss;
}

struct ggml_tensor * ggml_opt_pred(ggml_opt_context_t opt_ctx) {
    return opt_ctx->pred;
}

struct ggml_tensor * ggml_opt_ncorrect(ggml_opt_context_t opt_ctx) {
    return opt_ctx->ncorrect;
}

struct ggml_tensor * ggml_opt_grad_acc(ggml_opt_context_t opt_ctx, struct ggml_tensor * node) {
    return ggml_graph_get_grad_acc(opt_ctx->gb_opt, node);
}

//
// results
//

ggml_opt_result_t ggml_opt_result_init(void) {
    ggml_opt_result_t r = calloc(1, sizeof(*r));
    if (r == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    r->opt_period = -1;
    return r;
}

void ggml_opt_result_free(ggml_opt_result_t result) {
    if (result == NULL) {
        return;
    }
    free(result->loss);
    free(result->pred);
    free(result);
}

void ggml_opt_result_reset(ggml_opt_result_t result) {
    result->ndata    = 0;
    result->n_loss   = 0;
    result->n_pred   = 0;
    result->ncorrect = 0;
}

void ggml_opt_result_ndata(ggml_opt_result_t result, int64_t * ndata) {
    *ndata = result->ndata;
}

// The loss of each physical batch is a sample: a per-datapoint loss (a
// mean) reports their mean and its standard error, a sum reports the total
// and the standard deviation of a sum of that many batches.
void ggml_opt_result_loss(ggml_opt_result_t result, double * loss, double * unc) {
    const size_t n = result->n_loss;
    if (n == 0) {
        *loss = 0.0;
        if (unc != NULL) {
            *unc = (double) NAN;
        }
        return;
    }
    double sum = 0.0, sum_sq = 0.0;
    for (size_t i = 0; i < n; i++) {
        // a per-datapoint loss was divided by opt_period in each physical batch
        const double l = result->loss_per_datapoint ? (double) result->loss[i] * (double) result->opt_period
                                                    : (double) result->loss[i];
        sum    += l;
        sum_sq += l * l;
    }
    const double mean = sum / (double) n;
    *loss = result->loss_per_datapoint ? mean : sum;
    if (unc == NULL) {
        return;
    }
    if (n < 2) {
        *unc = (double) NAN;
        return;
    }
    const double var = sum_sq / (double) n - mean * mean; // biased; corrected below
    *unc = result->loss_per_datapoint ? sqrt(var / (double) (n - 1)) : sqrt(var * (double) n / (double) (n - 1));
}

void ggml_opt_result_pred(ggml_opt_result_t result, int32_t * pred) {
    if (result->n_pred > 0) {
        memcpy(pred, result->pred, result->n_pred * sizeof(int32_t));
    }
}

// accuracy and its binomial standard error
void ggml_opt_result_accuracy(ggml_opt_result_t result, double * accuracy, double * unc) {
    *accuracy = result->ncorrect >= 0 ? (double) result->ncorrect / (double) result->ndata : (double) NAN;
    if (unc == NULL) {
        return;
    }
    *unc = result->ncorrect >= 0 && result->ndata >= 2
        ? sqrt(*accuracy * (1.0 - *accuracy) / (double) (result->ndata - 1)) : (double) NAN;
}

//
// computation
//

void ggml_opt_prepare_alloc(ggml_opt_context_t opt_ctx, struct ggml_context * ctx_compute, struct ggml_cgraph * gf,
                            struct ggml_tensor * inputs, struct ggml_tensor * outputs) {
    GGML_ASSERT(!opt_ctx->static_graphs);
    opt_ctx->ctx_compute = ctx_compute;
    opt_ctx->gf          = gf;
    opt_ctx->inputs      = inputs;
    opt_ctx->outputs     = outputs;
}

void ggml_opt_alloc(ggml_opt_context_t opt_ctx, bool backward) {
    GGML_ASSERT(!opt_ctx->eval_ready && "ggml_opt_alloc called twice without ggml_opt_eval");
    if (opt_ctx->build_type == GGML_OPT_BUILD_TYPE_OPT && opt_ctx->opt_period > 1 && opt_ctx->opt_i == 0) {
        ggml_graph_reset(opt_ctx->gb_grad); // a new period of accumulation starts from zero
    }
    if (backward) {
        const int32_t next = (opt_ctx->opt_i + 1) % opt_ctx->opt_period;
        opt_ctx->build_type = next == 0 ? GGML_OPT_BUILD_TYPE_OPT : GGML_OPT_BUILD_TYPE_GRAD;
    } else {
        opt_ctx->build_type = GGML_OPT_BUILD_TYPE_FORWARD;
    }

    if (!opt_ctx->static_graphs) {
        opt_build(opt_ctx);
    }

    struct ggml_cgraph * graph = opt_ctx->build_type == GGML_OPT_BUILD_TYPE_FORWARD ? opt_ctx->gf
                               : opt_ctx->build_type == GGML_OPT_BUILD_TYPE_GRAD    ? opt_ctx->gb_grad
                                                                                    : opt_ctx->gb_opt;
    GGML_ASSERT(graph != NULL);

    if (opt_ctx->allocated_graph == graph) {
        opt_ctx->eval_ready = true;
        return;
    }

    ggml_backend_sched_reset(opt_ctx->backend_sched);

    if (opt_ctx->static_graphs) {
        struct ggml_init_params params = {
            (size_t) graph->size * ggml_tensor_overhead() + ggml_graph_overhead_custom((size_t) graph->size, graph->grads != NULL),
            NULL, true,
        };
        ggml_free(opt_ctx->ctx_copy);
        opt_ctx->ctx_copy = ggml_init(params);
        GGML_ASSERT(opt_ctx->ctx_copy != NULL && "ggml-opt: out of memory");
        opt_ctx->allocated_graph_copy = dup_graph(opt_ctx->ctx_copy, graph);
    } else {
        opt_ctx->allocated_graph_copy = graph;
    }

    GGML_ASSERT(ggml_backend_sched_alloc_graph(opt_ctx->backend_sched, opt_ctx->allocated_graph_copy) &&
                "ggml-opt: the scheduler cannot allocate the graph");
    opt_ctx->allocated_graph = graph;
    opt_ctx->eval_ready = true;
}

static void set_optimizer_params(ggml_opt_context_t opt_ctx) {
    const struct ggml_opt_optimizer_params p = opt_ctx->get_opt_pars(opt_ctx->get_opt_pars_ud);
    float * dst = (float *) opt_ctx->opt_step_params->data;
    switch (opt_ctx->optimizer) {
        case GGML_OPT_OPTIMIZER_TYPE_ADAMW:
            GGML_ASSERT(p.adamw.alpha > 0.0f);
            GGML_ASSERT(p.adamw.beta1 >= 0.0f && p.adamw.beta1 <= 1.0f);
            GGML_ASSERT(p.adamw.beta2 >= 0.0f && p.adamw.beta2 <= 1.0f);
            GGML_ASSERT(p.adamw.eps >= 0.0f);
            GGML_ASSERT(p.adamw.wd >= 0.0f && p.adamw.wd <= 1.0f);
            dst[0] = p.adamw.alpha;
            dst[1] = p.adamw.beta1;
            dst[2] = p.adamw.beta2;
            dst[3] = p.adamw.eps;
            dst[4] = p.adamw.wd;
            // bias corrections of the moments, which start at zero
            dst[5] = (float) (1.0 / (1.0 - pow((double) p.adamw.beta1, (double) opt_ctx->iter)));
            dst[6] = (float) (1.0 / (1.0 - pow((double) p.adamw.beta2, (double) opt_ctx->iter)));
            break;
        case GGML_OPT_OPTIMIZER_TYPE_SGD:
            GGML_ASSERT(p.sgd.alpha > 0.0f);
            GGML_ASSERT(p.sgd.wd >= 0.0f && p.sgd.wd <= 1.0f);
            dst[0] = p.sgd.alpha;
            dst[1] = p.sgd.wd;
            break;
        default:
            GGML_ABORT("ggml-opt: unknown optimizer %d", (int) opt_ctx->optimizer);
    }
}

static void result_add_batch(ggml_opt_context_t opt_ctx, ggml_opt_result_t result) {
    if (result->ndata == 0) {
        result->loss_per_datapoint = opt_ctx->loss_per_datapoint;
        result->opt_period         = opt_ctx->opt_period;
    } else {
        GGML_ASSERT(result->loss_per_datapoint == opt_ctx->loss_per_datapoint);
        GGML_ASSERT(result->opt_period == opt_ctx->opt_period);
    }
    const int64_t ndata = opt_ctx->outputs->ne[1];
    GGML_ASSERT(result->ndata == ndata * (int64_t) result->n_loss && "ggml-opt: batches of varying size");
    result->ndata += ndata;

    GGML_ASSERT(ggml_is_scalar(opt_ctx->loss) && opt_ctx->loss->type == GGML_TYPE_F32);
    result->loss = opt_grow(result->loss, &result->cap_loss, result->n_loss + 1, sizeof(float));
    ggml_backend_tensor_get(opt_ctx->loss, &result->loss[result->n_loss++], 0, sizeof(float));

    if (opt_ctx->pred != NULL) {
        GGML_ASSERT(opt_ctx->pred->type == GGML_TYPE_I32);
        result->pred = opt_grow(result->pred, &result->cap_pred, result->n_pred + (size_t) ndata, sizeof(int32_t));
        ggml_backend_tensor_get(opt_ctx->pred, result->pred + result->n_pred, 0, ggml_nbytes(opt_ctx->pred));
        result->n_pred += (size_t) ndata;
    }

    if (opt_ctx->ncorrect == NULL || result->ncorrect < 0) {
        result->ncorrect = -1;
        return;
    }
    GGML_ASSERT(ggml_is_scalar(opt_ctx->ncorrect) && opt_ctx->ncorrect->type == GGML_TYPE_I64);
    int64_t ncorrect;
    ggml_backend_tensor_get(opt_ctx->ncorrect, &ncorrect, 0, sizeof(ncorrect));
    result->ncorrect += ncorrect;
}

void ggml_opt_eval(ggml_opt_context_t opt_ctx, ggml_opt_result_t result) {
    GGML_ASSERT(opt_ctx->eval_ready && "ggml_opt_eval without ggml_opt_alloc");
    const bool step = opt_ctx->allocated_graph == opt_ctx->gb_opt;
    if (step) {
        set_optimizer_params(opt_ctx);
    }

    const enum ggml_status status = ggml_backend_sched_graph_compute(opt_ctx->backend_sched, opt_ctx->allocated_graph_copy);
    GGML_ASSERT(status == GGML_STATUS_SUCCESS && "ggml-opt: computing the graph failed");
    opt_ctx->iter += step;
    opt_ctx->opt_i = (opt_ctx->opt_i + 1) % opt_ctx->opt_period;

    if (!opt_ctx->static_graphs) {
        opt_ctx->gf                   = NULL;
        opt_ctx->gb_grad              = NULL;
        opt_ctx->gb_opt               = NULL;
        opt_ctx->allocated_graph      = NULL;
        opt_ctx->allocated_graph_copy = NULL;
    }
    opt_ctx->eval_ready = false;

    if (result != NULL) {
        result_add_batch(opt_ctx, result);
    }
}

//
// high-level functions
//

void ggml_opt_epoch(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, ggml_opt_result_t result_train,
                    ggml_opt_result_t result_eval, int64_t idata_split, ggml_opt_epoch_callback callback_train,
                    ggml_opt_epoch_callback callback_eval) {
    GGML_ASSERT(ggml_opt_static_graphs(opt_ctx) && "ggml_opt_epoch needs static graphs");
    struct ggml_tensor * inputs = ggml_opt_inputs(opt_ctx);
    struct ggml_tensor * labels = ggml_opt_labels(opt_ctx);
    struct ggml_tensor * data   = ggml_opt_dataset_data(dataset);
    GGML_ASSERT(data->ne[0] == inputs->ne[0]);

    const int64_t ndata       = data->ne[1];
    const int64_t ndata_batch = inputs->ne[1];
    GGML_ASSERT(ndata % ndata_batch == 0);
    const int64_t nbatches = ndata / ndata_batch;

    idata_split = idata_split < 0 ? ndata : idata_split;
    GGML_ASSERT(idata_split % ndata_batch == 0);
    const int64_t ibatch_split = idata_split / ndata_batch;

    int64_t ibatch = 0;
    int64_t t_start = ggml_time_us();
    for (; ibatch < ibatch_split; ibatch++) {
        ggml_opt_alloc(opt_ctx, true);
        ggml_opt_dataset_get_batch(dataset, inputs, labels, ibatch);
        ggml_opt_eval(opt_ctx, result_train);
        if (callback_train != NULL) {
            callback_train(true, opt_ctx, dataset, result_train, ibatch + 1, ibatch_split, t_start);
        }
    }
    t_start = ggml_time_us();
    for (; ibatch < nbatches; ibatch++) {
        ggml_opt_alloc(opt_ctx, false);
        ggml_opt_dataset_get_batch(dataset, inputs, labels, ibatch);
        ggml_opt_eval(opt_ctx, result_eval);
        if (callback_eval != NULL) {
            callback_eval(false, opt_ctx, dataset, result_eval, ibatch + 1 - ibatch_split, nbatches - ibatch_split, t_start);
        }
    }
}

static void split_hms(int64_t us, int64_t * h, int64_t * m, int64_t * s) {
    int64_t t = us / 1000000;
    *h = t / 3600;
    t -= *h * 3600;
    *m = t / 60;
    *s = t - *m * 60;
}

void ggml_opt_epoch_callback_progress_bar(bool train, ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset,
                                          ggml_opt_result_t result, int64_t ibatch, int64_t ibatch_max, int64_t t_start_us) {
    GGML_UNUSED(dataset);
    // eight cells, each drawn with one of the eight partial blocks U+2589..U+258F or full U+2588
    static const char * const partial[8] = {
        " ", "\u258F", "\u258E", "\u258D", "\u258C", "\u258B", "\u258A", "\u2589",
    };
    fprintf(stderr, "%s[", train ? "train: " : "val:   ");
    const int64_t n_cells = 8;
    for (int64_t j = 0; j < n_cells; j++) {
        // eighths of cell j that are done
        const int64_t done = ibatch_max > 0 ? (8 * ibatch * n_cells) / ibatch_max - 8 * j : 8;
        fprintf(stderr, "%s", done >= 8 ? "\u2588" : done <= 0 ? partial[0] : partial[done]);
    }

    const int64_t batch_size = ggml_opt_inputs(opt_ctx)->ne[1];
    double loss, loss_unc, acc, acc_unc;
    ggml_opt_result_loss(result, &loss, &loss_unc);
    ggml_opt_result_accuracy(result, &acc, &acc_unc);

    const int64_t t_us   = ggml_time_us() - t_start_us;
    const int64_t eta_us = ibatch > 0 ? t_us * (ibatch_max - ibatch) / ibatch : 0;
    int64_t th, tm, ts, eh, em, es;
    split_hms(t_us, &th, &tm, &ts);
    split_hms(eta_us, &eh, &em, &es);

    fprintf(stderr,
            "] data=%07" PRId64 "/%07" PRId64 " loss=%.5lf\u00b1%.5lf acc=%.2lf\u00b1%.2lf%% "
            "t=%02" PRId64 ":%02" PRId64 ":%02" PRId64 " ETA=%02" PRId64 ":%02" PRId64 ":%02" PRId64 " \r",
            ibatch * batch_size, ibatch_max * batch_size, loss, loss_unc, 100.0 * acc, 100.0 * acc_unc,
            th, tm, ts, eh, em, es);
    if (ibatch == ibatch_max) {
        fprintf(stderr, "\n");
    }
    fflush(stderr);
}

void ggml_opt_fit(ggml_backend_sched_t backend_sched, struct ggml_context * ctx_compute, struct ggml_tensor * inputs,
                  struct ggml_tensor * outputs, ggml_opt_dataset_t dataset, enum ggml_opt_loss_type loss_type,
                  enum ggml_opt_optimizer_type optimizer, ggml_opt_get_optimizer_params get_opt_pars, int64_t nepoch,
                  int64_t nbatch_logical, float val_split, bool silent) {
    ggml_time_init();
    const int64_t t_start = ggml_time_us();

    const int64_t ndata           = ggml_opt_dataset_data(dataset)->ne[1];
    const int64_t nbatch_physical = inputs->ne[1];
    GGML_ASSERT(ndata % nbatch_logical == 0);
    GGML_ASSERT(nbatch_logical % nbatch_physical == 0);
    GGML_ASSERT(val_split >= 0.0f && val_split < 1.0f);

    const int64_t opt_period       = nbatch_logical / nbatch_physical;
    const int64_t nbatches_logical = ndata / nbatch_logical;
    // the split between training and validation, in whole logical batches
    const int64_t ibatch_split = (int64_t) ((1.0f - val_split) * (float) nbatches_logical) * opt_period;
    const int64_t idata_split  = ibatch_split * nbatch_physical;

    int64_t epoch = 1;

    struct ggml_opt_params params = ggml_opt_default_params(backend_sched, loss_type);
    params.ctx_compute     = ctx_compute;
    params.inputs          = inputs;
    params.outputs         = outputs;
    params.opt_period      = (int32_t) opt_period;
    params.get_opt_pars    = get_opt_pars;
    params.get_opt_pars_ud = &epoch;
    params.optimizer       = optimizer;
    ggml_opt_context_t opt_ctx = ggml_opt_init(params);
    GGML_ASSERT(opt_ctx != NULL);

    // shuffling changes nothing when one batch holds everything
    if (nbatch_logical < ndata) {
        ggml_opt_dataset_shuffle(opt_ctx, dataset, -1);
    }

    ggml_opt_result_t result_train = ggml_opt_result_init();
    ggml_opt_result_t result_val   = ggml_opt_result_init();
    GGML_ASSERT(result_train != NULL && result_val != NULL);
    ggml_opt_epoch_callback callback = silent ? NULL : ggml_opt_epoch_callback_progress_bar;

    for (; epoch <= nepoch; epoch++) {
        if (nbatch_logical < idata_split) {
            ggml_opt_dataset_shuffle(opt_ctx, dataset, idata_split);
        }
        ggml_opt_result_reset(result_train);
        ggml_opt_result_reset(result_val);
        if (!silent) {
            fprintf(stderr, "%s: epoch %04" PRId64 "/%04" PRId64 ":\n", __func__, epoch, nepoch);
        }
        ggml_opt_epoch(opt_ctx, dataset, result_train, result_val, idata_split, callback, callback);
        if (!silent) {
            fprintf(stderr, "\n");
        }
    }

    if (!silent) {
        int64_t h, m, s;
        split_hms(ggml_time_us() - t_start, &h, &m, &s);
        fprintf(stderr, "%s: training took %02" PRId64 ":%02" PRId64 ":%02" PRId64 "\n", __func__, h, m, s);
    }

    ggml_opt_free(opt_ctx);
    ggml_opt_result_free(result_train);
    ggml_opt_result_free(result_val);
}
