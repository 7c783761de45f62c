// ggml-blas.c: the BLAS backend's stream, device and registry entry.
//
// The device "BLAS" (type ACCEL) computes on host memory with the CPU's
// buffer types, so that with a CPU backend beside it the scheduler sends it
// the large matrix products (see blas-ops.c for which) and copies nothing.
// A backend owns a grow-only work buffer for weights converted to F32 and,
// with more than one thread, a pool of its own for that conversion, remade
// when the thread count changes.

#include "ggml-blas.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"
#include "blas-impl.h"

#include <stdlib.h>
#include <string.h>

//
// backend (stream)
//

struct ggml_backend_blas_context {
    int                     n_threads;
    struct ggml_blas_pool * pool;       // NULL until needed, and with one thread
    void *                  work;
    size_t                  work_size;
};

static const char * ggml_backend_blas_get_name(ggml_backend_t backend) {
    (void) backend;
    return "BLAS";
}

static void ggml_backend_blas_free(ggml_backend_t backend) {
    struct ggml_backend_blas_context * ctx = (struct ggml_backend_blas_context *) backend->context;
    ggml_blas_pool_free(ctx->pool);
    ggml_aligned_free(ctx->work, ctx->work_size);
    free(ctx);
    free(backend);
}

static bool blas_node_is_computed(const struct ggml_tensor * node) {
    return !ggml_op_is_empty(node->op) && (node->flags & GGML_TENSOR_FLAG_COMPUTE) && !ggml_is_empty(node);
}

static bool blas_reserve_work(struct ggml_backend_blas_context * ctx, size_t size) {
    if (size <= ctx->work_size) {
        return true;
    }
    ggml_aligned_free(ctx->work, ctx->work_size);
    ctx->work      = ggml_aligned_malloc(size);
    ctx->work_size = ctx->work != NULL ? size : 0;
    return ctx->work != NULL;
}

// the pool for n_threads; on failure the conversion runs on one thread
static struct ggml_blas_pool * blas_pool(struct ggml_backend_blas_context * ctx) {
    if (ctx->pool != NULL && ggml_blas_pool_n_threads(ctx->pool) != ctx->n_threads) {
        ggml_blas_pool_free(ctx->pool);
        ctx->pool = NULL;
    }
    if (ctx->pool == NULL && ctx->n_threads > 1) {
        ctx->pool = ggml_blas_pool_new(ctx->n_threads);
        if (ctx->pool == NULL) {
            GGML_LOG_WARN("%s: converting weights on one thread\n", __func__);
        }
    }
    return ctx->pool;
}

static enum ggml_status ggml_backend_blas_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct ggml_backend_blas_context * ctx = (struct ggml_backend_blas_context *) backend->context;

    // refuse the whole graph before computing any of it
    size_t work_size = 0;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        if (!blas_node_is_computed(node)) {
            continue;
        }
        if (!ggml_blas_supports_op(node)) {
            GGML_LOG_ERROR("%s: node %d (%s, %s) is not supported by the BLAS backend\n",
                           __func__, i, node->name, ggml_op_desc(node));
            return GGML_STATUS_FAILED;
        }
        work_size = MAX(work_size, ggml_blas_work_size(node));
    }
    if (!blas_reserve_work(ctx, work_size)) {
        GGML_LOG_ERROR("%s: cannot allocate %zu bytes for weights converted to F32\n", __func__, work_size);
        return GGML_STATUS_ALLOC_FAILED;
    }

    struct ggml_blas_exec exec = {
        .pool      = work_size > 0 ? blas_pool(ctx) : NULL,
        .work      = ctx->work,
        .work_size = ctx->work_size,
        .n_threads = ctx->n_threads,
    };
    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggml_tensor * node = cgraph->nodes[i];
        if (blas_node_is_computed(node)) {
            ggml_blas_compute_node(&exec, node);
        }
    }
    return GGML_STATUS_SUCCESS;
}

static const struct ggml_backend_i ggml_backend_blas_i = {
    .get_name            = ggml_backend_blas_get_name,
    .free                = ggml_backend_blas_free,
    .set_tensor_async    = NULL,
    .get_tensor_async    = NULL,
    .set_tensor_2d_async = NULL,
    .get_tensor_2d_async = NULL,
    .cpy_tensor_async    = NULL,
    .synchronize         = NULL,
    .graph_plan_create   = NULL,
    .graph_plan_free     = NULL,
    .graph_plan_update   = NULL,
    .graph_plan_compute  = NULL,
    .graph_compute       = ggml_backend_blas_graph_compute,
    .event_record        = NULL,
    .event_wait          = NULL,
    .graph_optimize      = NULL,
};

static ggml_guid_t ggml_backend_blas_guid(void) {
    static ggml_guid guid = { 0x42, 0x4c, 0x41, 0x53, 0x2d, 0x67, 0x67, 0x6d, 0x6c, 0x2d, 0x63, 0x31, 0x31, 0x2d, 0x42, 0x4b };
    return &guid;
}

ggml_backend_t ggml_backend_blas_init(void) {
    struct ggml_backend_blas_context * ctx = (struct ggml_backend_blas_context *) calloc(1, sizeof(*ctx));
    ggml_backend_t backend = (ggml_backend_t) calloc(1, sizeof(struct ggml_backend));
    if (ctx == NULL || backend == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        free(ctx);
        free(backend);
        return NULL;
    }
    ctx->n_threads = GGML_DEFAULT_N_THREADS;

    *backend = (struct ggml_backend) {
        .guid    = ggml_backend_blas_guid(),
        .iface   = ggml_backend_blas_i,
        .device  = ggml_backend_reg_dev_get(ggml_backend_blas_reg(), 0),
        .context = ctx,
    };
    return backend;
}

bool ggml_backend_is_blas(ggml_backend_t backend) {
    return backend != NULL && ggml_guid_matches(backend->guid, ggml_backend_blas_guid());
}

void ggml_backend_blas_set_n_threads(ggml_backend_t backend_blas, int n_threads) {
    GGML_ASSERT(ggml_backend_is_blas(backend_blas));
    GGML_ASSERT(n_threads > 0 && n_threads <= GGML_MAX_N_THREADS);
    struct ggml_backend_blas_context * ctx = (struct ggml_backend_blas_context *) backend_blas->context;
    ctx->n_threads = n_threads;
}

//
// device
//

static const char * ggml_backend_blas_device_get_name(ggml_backend_dev_t dev) {
    (void) dev;
    return "BLAS";
}

static const char * ggml_backend_blas_device_get_description(ggml_backend_dev_t dev) {
    (void) dev;
    return ggml_blas_vendor_name();
}

// it has no memory of its own: the CPU's is what it uses
static void ggml_backend_blas_device_get_memory(ggml_backend_dev_t dev, size_t * free_mem, size_t * total) {
    (void) dev;
    *free_mem = 0;
    *total    = 0;
}

static enum ggml_backend_dev_type ggml_backend_blas_device_get_type(ggml_backend_dev_t dev) {
    (void) dev;
    return GGML_BACKEND_DEVICE_TYPE_ACCEL;
}

static void ggml_backend_blas_device_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    props->name        = ggml_backend_blas_device_get_name(dev);
    props->description = ggml_backend_blas_device_get_description(dev);
    props->type        = ggml_backend_blas_device_get_type(dev);
    props->device_id   = NULL;
    ggml_backend_blas_device_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps = (struct ggml_backend_dev_caps) {
        .async                = false,
        .host_buffer          = false,
        .buffer_from_host_ptr = true,
        .events               = false,
        .mmap_support         = true,
    };
}

static ggml_backend_t ggml_backend_blas_device_init_backend(ggml_backend_dev_t dev, const char * params) {
    (void) dev;
    (void) params;
    return ggml_backend_blas_init();
}

static ggml_backend_buffer_type_t ggml_backend_blas_device_get_buffer_type(ggml_backend_dev_t dev) {
    (void) dev;
    return ggml_backend_cpu_buffer_type();
}

static ggml_backend_buffer_t ggml_backend_blas_device_buffer_from_host_ptr(ggml_backend_dev_t dev, void * ptr, size_t size,
                                                                           size_t max_tensor_size) {
    (void) dev;
    (void) max_tensor_size;
    return ggml_backend_cpu_buffer_from_ptr(ptr, size);
}

static bool ggml_backend_blas_device_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    (void) dev;
    return ggml_blas_supports_op(op);
}

static bool ggml_backend_blas_device_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    (void) dev;
    return ggml_backend_buft_is_host(buft);
}

//
// registry entry
//

static const char * ggml_backend_blas_reg_get_name(ggml_backend_reg_t reg) {
    (void) reg;
    return "BLAS";
}

static size_t ggml_backend_blas_reg_get_device_count(ggml_backend_reg_t reg) {
    (void) reg;
    return 1;
}

static ggml_backend_dev_t ggml_backend_blas_reg_get_device(ggml_backend_reg_t reg, size_t index);

static void * ggml_backend_blas_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    (void) reg;
    if (strcmp(name, "ggml_backend_set_n_threads") == 0) {
        ggml_backend_set_n_threads_t fn = ggml_backend_blas_set_n_threads;
        return GGML_FN_TO_PTR(fn);
    }
    return NULL;
}

// (interfaces spelled out in place: a static initialiser may not copy another object)
static struct ggml_backend_reg g_blas_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface       = {
        .get_name         = ggml_backend_blas_reg_get_name,
        .get_device_count = ggml_backend_blas_reg_get_device_count,
        .get_device       = ggml_backend_blas_reg_get_device,
        .get_proc_address = ggml_backend_blas_get_proc_address,
    },
    .context     = NULL,
};

static struct ggml_backend_device g_blas_device = {
    .iface   = {
        .get_name             = ggml_backend_blas_device_get_name,
        .get_description      = ggml_backend_blas_device_get_description,
        .get_memory           = ggml_backend_blas_device_get_memory,
        .get_type             = ggml_backend_blas_device_get_type,
        .get_props            = ggml_backend_blas_device_get_props,
        .init_backend         = ggml_backend_blas_device_init_backend,
        .get_buffer_type      = ggml_backend_blas_device_get_buffer_type,
        .get_host_buffer_type = NULL,
        .buffer_from_host_ptr = ggml_backend_blas_device_buffer_from_host_ptr,
        .supports_op          = ggml_backend_blas_device_supports_op,
        .supports_buft        = ggml_backend_blas_device_supports_buft,
        .offload_op           = NULL,
        .event_new            = NULL,
        .event_free           = NULL,
        .event_synchronize    = NULL,
    },
    .reg     = &g_blas_reg,
    .context = NULL,
};

static ggml_backend_dev_t ggml_backend_blas_reg_get_device(ggml_backend_reg_t reg, size_t index) {
    (void) reg;
    GGML_ASSERT(index == 0);
    return &g_blas_device;
}

ggml_backend_reg_t ggml_backend_blas_reg(void) {
    return &g_blas_reg;
}

GGML_BACKEND_DL_IMPL(ggml_backend_blas_reg)
