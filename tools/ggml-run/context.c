// context.c: backends and scheduler for a model, and decoding batches.

#include "context.h"
#include "run-common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// cache cells read per graph are rounded up to this, so that graphs of
// nearby lengths look alike and masked cells stay few
#define RUN_KV_PAD 32

struct run_context_params run_context_default_params(void) {
    const long n_cpu = sysconf(_SC_NPROCESSORS_ONLN);
    return (struct run_context_params) {
        .n_ctx      = 0,
        .n_batch    = 512,
        .n_threads  = n_cpu > 0 ? (int) n_cpu : 1,
        .kv_type    = GGML_TYPE_F16,
        .flash_attn = -1,
        .kv_offload = true,
        .all_logits  = false,
        .graph_reuse = true,
    };
}

//
// backends
//

static void backend_set_threads(ggml_backend_t backend, int n_threads) {
    ggml_backend_dev_t dev = ggml_backend_get_device(backend);
    ggml_backend_reg_t reg = dev != NULL ? ggml_backend_dev_backend_reg(dev) : NULL;
    if (reg == NULL) {
        return;
    }
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    if (sym == NULL) {
        return;
    }
    // ISO C has no object-to-function pointer conversion; POSIX makes the bits agree
    ggml_backend_set_n_threads_t set_n_threads;
    memcpy(&set_n_threads, &sym, sizeof(sym));
    set_n_threads(backend, n_threads);
}

// a function of backend's registry by name, or NULL
static void * backend_proc(ggml_backend_t backend, const char * name) {
    ggml_backend_dev_t dev = ggml_backend_get_device(backend);
    ggml_backend_reg_t reg = dev != NULL ? ggml_backend_dev_backend_reg(dev) : NULL;
    return reg != NULL ? ggml_backend_reg_get_proc_address(reg, name) : NULL;
}

// A backend that runs on a thread pool (the CPU) gets one made now, so that
// a thread count the system cannot start is refused before any work rather
// than failing the first graph.
static bool backend_start_threadpool(struct run_context * rc, int i) {
    void * new_sym = backend_proc(rc->backends[i], "ggml_threadpool_new");
    void * set_sym = backend_proc(rc->backends[i], "ggml_backend_cpu_set_threadpool");
    if (new_sym == NULL || set_sym == NULL) {
        return true;
    }
    // ISO C has no object-to-function pointer conversion; POSIX makes the bits agree
    struct ggml_threadpool * (*pool_new)(struct ggml_threadpool_params *);
    void (*set_pool)(ggml_backend_t, struct ggml_threadpool *);
    memcpy(&pool_new, &new_sym, sizeof(new_sym));
    memcpy(&set_pool, &set_sym, sizeof(set_sym));
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(rc->params.n_threads);
    rc->threadpools[i] = pool_new(&tpp);
    if (rc->threadpools[i] == NULL) {
        run_error("cannot start %d threads on %s (the system refused some; see -t)", rc->params.n_threads,
                  ggml_backend_name(rc->backends[i]));
        return false;
    }
    set_pool(rc->backends[i], rc->threadpools[i]);
    return true;
}

static bool context_start_backends(struct run_context * rc) {
    const struct run_devices * devs = &rc->model->devs;
    const int n = devs->n_layer + devs->n_helper;
    rc->backends    = (ggml_backend_t *) run_calloc((size_t) n, sizeof(ggml_backend_t), "the backends");
    rc->threadpools = (struct ggml_threadpool **) run_calloc((size_t) n, sizeof(struct ggml_threadpool *), "the backends");
    if (rc->backends == NULL || rc->threadpools == NULL) {
        return false;
    }
    // priority order: layer devices, helpers, the CPU last
    for (int i = 0; i < n; i++) {
        ggml_backend_dev_t dev;
        if (i < devs->n_layer - 1) {
            dev = devs->layer[i];
        } else if (i < devs->n_layer - 1 + devs->n_helper) {
            dev = devs->helper[i - (devs->n_layer - 1)];
        } else {
            dev = devs->layer[devs->n_layer - 1];
        }
        rc->backends[i] = ggml_backend_dev_init(dev, NULL);
        if (rc->backends[i] == NULL) {
            run_error("cannot start a backend on device %s", ggml_backend_dev_name(dev));
            return false;
        }
        rc->n_backends = i + 1;
        backend_set_threads(rc->backends[i], rc->params.n_threads);
        if (!backend_start_threadpool(rc, i)) {
            return false;
        }
    }
    return true;
}

ggml_backend_t run_context_backend_of(const struct run_context * rc, ggml_backend_dev_t dev) {
    for (int i = 0; i < rc->n_backends; i++) {
        if (ggml_backend_get_device(rc->backends[i]) == dev) {
            return rc->backends[i];
        }
    }
    return NULL;
}

//
// attention kind
//

static bool dev_supports_flash_attn(ggml_backend_dev_t dev, const struct run_model * model, enum ggml_type kv_type,
                                    int64_t n_batch, int64_t n_kv) {
    const struct run_hparams * hp = &model->hp;
    const struct ggml_init_params ip = { .mem_size = 8 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        return false;
    }
    struct ggml_tensor * q    = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, hp->head_dim, n_batch, hp->n_head);
    struct ggml_tensor * k    = ggml_new_tensor_3d(ctx, kv_type, hp->head_dim, n_kv, hp->n_head_kv);
    struct ggml_tensor * v    = ggml_new_tensor_3d(ctx, kv_type, hp->head_dim, n_kv, hp->n_head_kv);
    struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, n_kv, n_batch);
    struct ggml_tensor * op   = ggml_flash_attn_ext(ctx, q, k, v, mask, 1.0f, 0.0f, 0.0f);
    ggml_flash_attn_ext_set_prec(op, GGML_PREC_F32);
    const bool ok = ggml_backend_dev_supports_op(dev, op);
    ggml_free(ctx);
    return ok;
}

// Fused attention runs where the cache is: every device holding a cache
// (and the CPU) must support it, or every layer takes the unfused path.
static bool context_choose_flash_attn(struct run_context * rc) {
    const struct run_model * model = rc->model;
    const int64_t n_batch = rc->params.n_batch < rc->kv.n_ctx ? rc->params.n_batch : rc->kv.n_ctx;
    bool supported = dev_supports_flash_attn(model->devs.layer[run_devices_cpu(&model->devs)], model,
                                             rc->params.kv_type, n_batch, rc->kv.n_ctx);
    for (int64_t il = 0; supported && il < model->hp.n_layer; il++) {
        supported = dev_supports_flash_attn(model->devs.layer[rc->kv.dev[il]], model, rc->params.kv_type,
                                            n_batch, rc->kv.n_ctx);
    }
    if (rc->params.flash_attn == 1 && !supported) {
        run_error("fused attention (flash_attn_ext) with a %s cache is not supported by the devices in use",
                  ggml_type_name(rc->params.kv_type));
        return false;
    }
    rc->flash_attn = rc->params.flash_attn != 0 && supported;
    return true;
}

//
// context
//

static bool context_check_params(const struct run_context_params * params) {
    if (params->n_ctx < 0 || params->n_batch <= 0 || params->n_threads <= 0) {
        run_error("invalid context parameters (context %lld, batch %lld, threads %d)",
                  (long long) params->n_ctx, (long long) params->n_batch, params->n_threads);
        return false;
    }
    if (params->kv_type != GGML_TYPE_F16 && params->kv_type != GGML_TYPE_F32) {
        run_error("KV cache type %s is not supported (f16 or f32)", ggml_type_name(params->kv_type));
        return false;
    }
    return true;
}

// forgets the graph kept for reuse (its metadata lies in graph_mem, which the
// next graph overwrites)
static void context_drop_graph(struct run_context * rc) {
    if (rc->graph_ctx != NULL) {
        ggml_free(rc->graph_ctx);
    }
    rc->graph_ctx = NULL;
    rc->graph     = NULL;
}

// a new graph of this shape in graph_mem (the kept one dropped, the scheduler
// reset: the last graph's tensors are about to be overwritten, the scheduler
// lets go of them first); NULL (reported) when the context cannot be made
static struct ggml_cgraph * context_build_graph(struct run_context * rc, const struct run_graph_shape * shape,
                                                struct ggml_context ** ctx, struct run_graph_inputs * in) {
    context_drop_graph(rc);
    ggml_backend_sched_reset(rc->sched);
    const struct ggml_init_params ip = { .mem_size = rc->graph_mem_size, .mem_buffer = rc->graph_mem, .no_alloc = true };
    *ctx = ggml_init(ip);
    if (*ctx == NULL) {
        run_error("cannot create the graph context");
        return NULL;
    }
    return run_graph_build(*ctx, rc->model, &rc->kv, shape, in);
}

// sizes the compute buffers for the largest graph: a full batch over the whole cache
static bool context_reserve(struct run_context * rc) {
    const struct run_graph_shape shape = {
        .n_past     = 0,
        .n_tokens   = rc->params.n_batch < rc->kv.n_ctx ? rc->params.n_batch : rc->kv.n_ctx,
        .n_kv       = rc->kv.n_ctx,
        .flash_attn = rc->flash_attn,
        .all_logits = rc->params.all_logits,
    };
    struct ggml_context * ctx;
    struct run_graph_inputs in;
    struct ggml_cgraph * gf = context_build_graph(rc, &shape, &ctx, &in);
    if (gf == NULL) {
        return false;
    }
    const bool ok = ggml_backend_sched_reserve(rc->sched, gf);
    if (!ok) {
        run_error("cannot allocate the compute buffers");
    }
    ggml_free(ctx);
    return ok;
}

struct run_context * run_context_new(const struct run_model * model, const struct run_context_params * params) {
    if (!context_check_params(params)) {
        return NULL;
    }
    struct run_context * rc = (struct run_context *) run_calloc(1, sizeof(*rc), "the context");
    if (rc == NULL) {
        return NULL;
    }
    rc->model  = model;
    rc->params = *params;
    if (rc->params.n_ctx == 0) {
        rc->params.n_ctx = model->hp.n_ctx_train;
    }
    rc->graph_mem_size = run_graph_ctx_size(model);
    rc->graph_mem = run_malloc(rc->graph_mem_size, "the graph");
    bool ok = rc->graph_mem != NULL &&
              context_start_backends(rc) &&
              run_kv_cache_init(&rc->kv, model, rc->params.n_ctx, rc->params.kv_type, rc->params.kv_offload) &&
              context_choose_flash_attn(rc);
    if (ok) {
        rc->sched = ggml_backend_sched_new(rc->backends, NULL, rc->n_backends, run_graph_max_nodes(model), false, true);
        if (rc->sched == NULL) {
            run_error("cannot create the scheduler");
        }
        ok = rc->sched != NULL && context_reserve(rc);
    }
    if (!ok) {
        run_context_free(rc);
        return NULL;
    }
    return rc;
}

void run_context_free(struct run_context * rc) {
    if (rc == NULL) {
        return;
    }
    context_drop_graph(rc);
    if (rc->sched != NULL) {
        ggml_backend_sched_free(rc->sched);
    }
    run_kv_cache_free(&rc->kv);
    for (int i = 0; i < rc->n_backends; i++) {
        // a pool goes after the backend that ran on it (which does not free a lent one)
        void * free_sym = rc->threadpools[i] != NULL ? backend_proc(rc->backends[i], "ggml_threadpool_free") : NULL;
        ggml_backend_free(rc->backends[i]);
        if (free_sym != NULL) {
            void (*pool_free)(struct ggml_threadpool *);
            memcpy(&pool_free, &free_sym, sizeof(free_sym));
            pool_free(rc->threadpools[i]);
        }
    }
    free(rc->threadpools);
    free(rc->backends);
    free(rc->graph_mem);
    free(rc->logits);
    free(rc);
}

void run_context_pause(struct run_context * rc, bool pause) {
    for (int i = 0; i < rc->n_backends; i++) {
        void * sym = rc->threadpools[i] != NULL
            ? backend_proc(rc->backends[i], pause ? "ggml_threadpool_pause" : "ggml_threadpool_resume") : NULL;
        if (sym != NULL) {
            void (*fn)(struct ggml_threadpool *);
            memcpy(&fn, &sym, sizeof(sym));
            fn(rc->threadpools[i]);
        }
    }
}

void run_context_reset(struct run_context * rc) {
    rc->n_past    = 0;
    rc->n_outputs = 0;
    run_kv_cache_clear(&rc->kv);
}

const float * run_get_logits(const struct run_context * rc, int64_t i) {
    if (i < 0 || i >= rc->n_outputs) {
        return NULL;
    }
    return rc->logits + i * rc->model->hp.n_vocab;
}

//
// decoding
//

static bool context_reserve_logits(struct run_context * rc, int64_t rows) {
    if (rows <= rc->logits_cap) {
        return true;
    }
    float * grown = (float *) realloc(rc->logits, (size_t) rows * (size_t) rc->model->hp.n_vocab * sizeof(float));
    if (grown == NULL) {
        run_error("out of memory for the logits of %lld tokens", (long long) rows);
        return false;
    }
    rc->logits     = grown;
    rc->logits_cap = rows;
    return true;
}

// An input that no node of the graph reads was given no memory by the
// scheduler (the cells when no layer writes its cache with set_rows, the
// full mask when every layer has a sliding window): nothing to write.
static void input_set(struct ggml_tensor * input, const void * data, size_t size) {
    if (input != NULL && input->buffer != NULL) {
        ggml_backend_tensor_set(input, data, 0, size);
    }
}

static bool set_inputs(struct run_context * rc, const struct run_graph_inputs * in, const int32_t * tokens,
                       int64_t n_tokens, int64_t n_kv) {
    int32_t     * pos   = (int32_t *)     run_malloc((size_t) n_tokens * sizeof(int32_t), "the graph inputs");
    int64_t     * cells = (int64_t *)     run_malloc((size_t) n_tokens * sizeof(int64_t), "the graph inputs");
    ggml_fp16_t * mask  = (ggml_fp16_t *) run_malloc((size_t) (n_tokens * n_kv) * sizeof(ggml_fp16_t), "the graph inputs");
    ggml_fp16_t * swa   = in->mask_swa == NULL ? NULL :
                          (ggml_fp16_t *) run_malloc((size_t) (n_tokens * n_kv) * sizeof(ggml_fp16_t), "the graph inputs");
    const int64_t n_swa = rc->model->hp.n_swa;
    const bool ok = pos != NULL && cells != NULL && mask != NULL && (in->mask_swa == NULL || swa != NULL);
    if (ok) {
        const ggml_fp16_t zero = ggml_fp32_to_fp16(0.0f);
        const ggml_fp16_t ninf = ggml_fp32_to_fp16(-INFINITY);
        for (int64_t j = 0; j < n_tokens; j++) {
            const int64_t p = rc->n_past + j;
            pos[j]   = (int32_t) p;
            cells[j] = p;
            for (int64_t c = 0; c < n_kv; c++) {
                mask[j * n_kv + c] = c <= p ? zero : ninf; // causal: a token sees itself and the past
                if (swa != NULL) { // and in a sliding window, only the last n_swa positions
                    swa[j * n_kv + c] = c <= p && p - c < n_swa ? zero : ninf;
                }
            }
        }
        input_set(in->tokens, tokens, (size_t) n_tokens * sizeof(int32_t));
        input_set(in->positions, pos, (size_t) n_tokens * sizeof(int32_t));
        input_set(in->cells, cells, (size_t) n_tokens * sizeof(int64_t));
        input_set(in->mask, mask, (size_t) (n_tokens * n_kv) * sizeof(ggml_fp16_t));
        if (swa != NULL) {
            input_set(in->mask_swa, swa, (size_t) (n_tokens * n_kv) * sizeof(ggml_fp16_t));
        }
    }
    free(pos);
    free(cells);
    free(mask);
    free(swa);
    return ok;
}

// the graph kept can compute a batch of this shape (context.h): the same but
// for the position, unless a layer writes its cache into a view at it
static bool context_graph_fits(const struct run_context * rc, const struct run_graph_shape * shape) {
    const struct run_graph_shape * g = &rc->graph_shape;
    if (rc->graph == NULL || !rc->params.graph_reuse || g->n_tokens != shape->n_tokens || g->n_kv != shape->n_kv ||
        g->flash_attn != shape->flash_attn || g->all_logits != shape->all_logits) {
        return false;
    }
    for (int64_t il = 0; g->n_past != shape->n_past && il < rc->kv.n_layer; il++) {
        if (rc->kv.write[il] != RUN_KV_WRITE_SET_ROWS) {
            return false;
        }
    }
    return true;
}

// one graph: tokens[0, n_tokens) at n_past; logits go to row out_row onwards
static bool decode_batch(struct run_context * rc, const int32_t * tokens, int64_t n_tokens, int64_t out_row) {
    const int64_t n_kv_used = rc->n_past + n_tokens;
    const int64_t n_kv_pad  = (n_kv_used + RUN_KV_PAD - 1) / RUN_KV_PAD * RUN_KV_PAD;
    const struct run_graph_shape shape = {
        .n_past     = rc->n_past,
        .n_tokens   = n_tokens,
        .n_kv       = n_kv_pad < rc->kv.n_ctx ? n_kv_pad : rc->kv.n_ctx,
        .flash_attn = rc->flash_attn,
        .all_logits = rc->params.all_logits,
    };
    if (!context_graph_fits(rc, &shape)) {
        struct ggml_context * ctx;
        struct run_graph_inputs in;
        struct ggml_cgraph * gf = context_build_graph(rc, &shape, &ctx, &in);
        if (gf == NULL) {
            return false;
        }
        if (!ggml_backend_sched_alloc_graph(rc->sched, gf)) {
            run_error("cannot allocate the graph of %lld tokens", (long long) n_tokens);
            ggml_free(ctx);
            return false;
        }
        rc->n_graph_builds++;
        rc->graph_ctx   = ctx;
        rc->graph       = gf;
        rc->graph_in    = in;
        rc->graph_shape = shape;
    }
    bool ok = set_inputs(rc, &rc->graph_in, tokens, n_tokens, shape.n_kv);
    if (ok) {
        const enum ggml_status status = ggml_backend_sched_graph_compute(rc->sched, rc->graph);
        if (status != GGML_STATUS_SUCCESS) {
            run_error("computing the graph failed (%s)", ggml_status_to_string(status));
            ok = false;
        }
    }
    if (ok) {
        rc->n_splits = ggml_backend_sched_get_n_splits(rc->sched);
        const struct ggml_tensor * logits = rc->graph_in.logits;
        const size_t row = (size_t) rc->model->hp.n_vocab * sizeof(float);
        ggml_backend_tensor_get(logits, rc->logits + out_row * rc->model->hp.n_vocab, 0, row * (size_t) logits->ne[1]);
        rc->n_past += n_tokens;
    } else {
        context_drop_graph(rc); // built anew next time
    }
    return ok;
}

static bool check_tokens(const struct run_context * rc, const int32_t * tokens, int64_t n_tokens) {
    if (n_tokens <= 0) {
        run_error("nothing to decode");
        return false;
    }
    if (n_tokens > rc->kv.n_ctx - rc->n_past) {
        run_error("the context of %lld tokens is full (%lld in it, %lld more asked for)",
                  (long long) rc->kv.n_ctx, (long long) rc->n_past, (long long) n_tokens);
        return false;
    }
    for (int64_t i = 0; i < n_tokens; i++) {
        if (tokens[i] < 0 || tokens[i] >= rc->model->hp.n_vocab) {
            run_error("token %d is outside the vocabulary of %lld tokens", (int) tokens[i], (long long) rc->model->hp.n_vocab);
            return false;
        }
    }
    return true;
}

bool run_decode(struct run_context * rc, const int32_t * tokens, int64_t n_tokens) {
    rc->n_outputs = 0;
    if (!check_tokens(rc, tokens, n_tokens) || !context_reserve_logits(rc, rc->params.all_logits ? n_tokens : 1)) {
        return false;
    }
    for (int64_t done = 0; done < n_tokens;) {
        const int64_t n = n_tokens - done < rc->params.n_batch ? n_tokens - done : rc->params.n_batch;
        // with one output per call, every batch overwrites row 0: the last one stays
        if (!decode_batch(rc, tokens + done, n, rc->params.all_logits ? done : 0)) {
            return false;
        }
        done += n;
    }
    rc->n_outputs = rc->params.all_logits ? n_tokens : 1;
    return true;
}

int64_t run_generation_length(int64_t n_ctx, int64_t n_prompt, int64_t n_predict) {
    if (n_prompt > n_ctx) {
        return -1;
    }
    return n_predict < n_ctx - n_prompt ? n_predict : n_ctx - n_prompt;
}
