// kv-cache.c: allocating the per-layer key/value cache on the layers' devices.

#include "kv-cache.h"
#include "run-common.h"

#include "ggml-alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// How dev can write rows of this cache type: 1 set_rows, 0 a copy, -1 neither.
static int dev_cache_write(ggml_backend_dev_t dev, enum ggml_type type, int64_t n_embd_kv, int64_t n_ctx) {
    const struct ggml_init_params ip = { .mem_size = 8 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        return -1;
    }
    struct ggml_tensor * cache = ggml_new_tensor_2d(ctx, type, n_embd_kv, n_ctx);
    struct ggml_tensor * rows  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_embd_kv, 1);
    struct ggml_tensor * idx   = ggml_new_tensor_1d(ctx, GGML_TYPE_I64, 1);
    struct ggml_tensor * cells = ggml_view_2d(ctx, cache, n_embd_kv, 1, cache->nb[1], 0);
    int how = -1;
    if (ggml_backend_dev_supports_op(dev, ggml_set_rows(ctx, cache, rows, idx))) {
        how = RUN_KV_WRITE_SET_ROWS;
    } else if (ggml_backend_dev_supports_op(dev, ggml_cpy(ctx, rows, cells))) {
        how = RUN_KV_WRITE_COPY;
    }
    ggml_free(ctx);
    return how;
}

// Whether one layer's keys (n_ctx rows) fit the largest buffer dev can
// allocate; when not, says so with the sizes (a device refuses such a cache's
// operations too, and the size is the reason to give).
static bool kv_fits_device(ggml_backend_dev_t dev, enum ggml_type type, int64_t n_embd_kv, int64_t n_ctx) {
    const size_t row = ggml_row_size(type, n_embd_kv);
    const size_t max = ggml_backend_buft_get_max_size(ggml_backend_dev_buffer_type(dev));
    if ((uint64_t) n_ctx <= max / row) {
        return true;
    }
    char need[32], most[32];
    run_warn("%s cannot hold a %s KV cache of %lld tokens: a layer's keys take %s, more than its largest buffer (%s); "
             "its layers keep the cache in host memory", ggml_backend_dev_name(dev), ggml_type_name(type), (long long) n_ctx,
             run_fmt_size(row * (size_t) n_ctx, need, sizeof(need)), run_fmt_size(max, most, sizeof(most)));
    return false;
}

static bool kv_alloc_arrays(struct run_kv_cache * kv, int n_devs) {
    const size_t n_layer = (size_t) kv->n_layer;
    kv->k     = (struct ggml_tensor **)   run_calloc(n_layer, sizeof(*kv->k), "the KV cache");
    kv->v     = (struct ggml_tensor **)   run_calloc(n_layer, sizeof(*kv->v), "the KV cache");
    kv->dev   = (int *)                   run_calloc(n_layer, sizeof(*kv->dev), "the KV cache");
    kv->write = (enum run_kv_write *)     run_calloc(n_layer, sizeof(*kv->write), "the KV cache");
    kv->bytes = (size_t *)                run_calloc((size_t) n_devs, sizeof(*kv->bytes), "the KV cache");
    kv->ctxs  = (struct ggml_context **)  run_calloc((size_t) n_devs, sizeof(*kv->ctxs), "the KV cache");
    kv->bufs  = (ggml_backend_buffer_t *) run_calloc((size_t) n_devs, sizeof(*kv->bufs), "the KV cache");
    kv->n_devs = n_devs;
    return kv->k && kv->v && kv->dev && kv->write && kv->bytes && kv->ctxs && kv->bufs;
}

static struct ggml_context * kv_ctx_of(struct run_kv_cache * kv, int dev) {
    if (kv->ctxs[dev] == NULL) {
        const struct ggml_init_params ip = {
            .mem_size   = (size_t) (2 * kv->n_layer) * ggml_tensor_overhead(),
            .mem_buffer = NULL,
            .no_alloc   = true,
        };
        kv->ctxs[dev] = ggml_init(ip);
        if (kv->ctxs[dev] == NULL) {
            run_error("out of memory creating the KV cache");
        }
    }
    return kv->ctxs[dev];
}

static bool kv_alloc_buffers(struct run_kv_cache * kv, const struct run_model * model) {
    for (int d = 0; d < kv->n_devs; d++) {
        if (kv->ctxs[d] == NULL) {
            continue;
        }
        ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(model->devs.layer[d]);
        kv->bufs[d] = ggml_backend_alloc_ctx_tensors_from_buft(kv->ctxs[d], buft);
        if (kv->bufs[d] == NULL) {
            char sz[32];
            run_error("cannot allocate %s of KV cache on %s",
                      run_fmt_size(ggml_backend_alloc_ctx_tensors_from_buft_size(kv->ctxs[d], buft), sz, sizeof(sz)),
                      ggml_backend_dev_name(model->devs.layer[d]));
            return false;
        }
        kv->bytes[d] = ggml_backend_buffer_get_size(kv->bufs[d]);
    }
    return true;
}

bool run_kv_cache_init(struct run_kv_cache * kv, const struct run_model * model, int64_t n_ctx,
                       enum ggml_type type, bool offload) {
    memset(kv, 0, sizeof(*kv));
    kv->n_ctx   = n_ctx;
    kv->type    = type;
    kv->n_layer = model->hp.n_layer;
    const int cpu = run_devices_cpu(&model->devs);
    const int64_t n_embd_kv = model->hp.n_head_kv * model->hp.head_dim;
    if (!kv_alloc_arrays(kv, model->devs.n_layer)) {
        run_kv_cache_free(kv);
        return false;
    }
    // one support check per device, not per layer: -2 not checked yet
    int * how = (int *) run_calloc((size_t) kv->n_devs, sizeof(int), "the KV cache");
    if (how == NULL) {
        run_kv_cache_free(kv);
        return false;
    }
    for (int d = 0; d < kv->n_devs; d++) {
        how[d] = -2;
    }
    bool ok = true;
    for (int64_t il = 0; ok && il < kv->n_layer; il++) {
        int d = offload ? model->layer_dev[il] : cpu;
        if (how[d] == -2 && d != cpu && !kv_fits_device(model->devs.layer[d], type, n_embd_kv, n_ctx)) {
            how[d] = -1; // said why
        } else if (how[d] == -2) {
            how[d] = dev_cache_write(model->devs.layer[d], type, n_embd_kv, n_ctx);
            if (how[d] < 0 && d != cpu) {
                run_warn("%s cannot write a %s KV cache: its layers keep the cache in host memory",
                         ggml_backend_dev_name(model->devs.layer[d]), ggml_type_name(type));
            }
        }
        if (how[d] < 0 && d != cpu) {
            d = cpu;
            how[d] = how[d] == -2 ? dev_cache_write(model->devs.layer[d], type, n_embd_kv, n_ctx) : how[d];
        }
        if (how[d] < 0) {
            run_error("the CPU backend cannot write a %s KV cache", ggml_type_name(type));
            ok = false;
            break;
        }
        kv->dev[il]   = d;
        kv->write[il] = (enum run_kv_write) how[d];
        struct ggml_context * ctx = kv_ctx_of(kv, d);
        ok = ctx != NULL;
        if (ok) {
            kv->k[il] = ggml_new_tensor_2d(ctx, type, n_embd_kv, n_ctx);
            kv->v[il] = ggml_new_tensor_2d(ctx, type, n_embd_kv, n_ctx);
            ggml_format_name(kv->k[il], "cache_k_l%lld", (long long) il);
            ggml_format_name(kv->v[il], "cache_v_l%lld", (long long) il);
        }
    }
    free(how);
    if (!ok || !kv_alloc_buffers(kv, model)) {
        run_kv_cache_free(kv);
        return false;
    }
    run_kv_cache_clear(kv);
    return true;
}

void run_kv_cache_clear(struct run_kv_cache * kv) {
    for (int d = 0; d < kv->n_devs; d++) {
        if (kv->bufs[d] != NULL) {
            ggml_backend_buffer_clear(kv->bufs[d], 0);
        }
    }
}

void run_kv_cache_free(struct run_kv_cache * kv) {
    for (int d = 0; d < kv->n_devs; d++) {
        if (kv->bufs != NULL && kv->bufs[d] != NULL) {
            ggml_backend_buffer_free(kv->bufs[d]);
        }
        if (kv->ctxs != NULL && kv->ctxs[d] != NULL) {
            ggml_free(kv->ctxs[d]);
        }
    }
    free(kv->k);
    free(kv->v);
    free(kv->dev);
    free(kv->write);
    free(kv->bytes);
    free(kv->ctxs);
    free(kv->bufs);
    memset(kv, 0, sizeof(*kv));
}
