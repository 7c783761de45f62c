// ggml-cpu.c: the CPU backend's stream, device and registry entry.
//
// The backend owns a persistent thread pool (made on first use, remade when
// the thread count changes) unless the user lends it one, and a grow-only
// scratch buffer, so that computing a graph allocates nothing once warm.

#include "cpu-impl.h"
#include "cpu-features.h"
#include "cpu-variant.h"
#include "kernels/repack.h"
#include "simd/stream-prefetch.h"

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

//
// one-time set-up
//

static pthread_once_t g_cpu_init_once = PTHREAD_ONCE_INIT;

static void cpu_init_once(void) {
    ggml_cpu_stream_prefetch_init();
    ggml_cpu_features_init(ggml_cpu_variant_select());
}

void ggml_cpu_init(void) {
    pthread_once(&g_cpu_init_once, cpu_init_once);
}

//
// backend (stream)
//

struct ggml_backend_cpu_context {
    int                      n_threads;
    struct ggml_threadpool * threadpool;       // the user's pool, or NULL
    struct ggml_threadpool * own_threadpool;   // ours, when the user gave none
    uint8_t *                work_data;
    size_t                   work_size;
    ggml_abort_callback      abort_callback;
    void *                   abort_callback_data;
    bool                     use_ref;
    struct ggml_cpu_profile * profile;         // cpu-profile.h, or NULL
    struct ggml_cpu_profile * env_profile;     // GGML_CPU_PROFILE's, printed at free
};

static const char * ggml_backend_cpu_get_name(ggml_backend_t backend) {
    (void) backend;
    return "CPU";
}

static void ggml_backend_cpu_free(ggml_backend_t backend) {
    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) backend->context;
    ggml_cpu_profile_finish(ctx->env_profile, "a CPU backend");
    ggml_threadpool_free(ctx->own_threadpool);
    ggml_aligned_free(ctx->work_data, ctx->work_size);
    free(ctx);
    free(backend);
}

// the pool to run on: the user's, or ours sized to n_threads
static struct ggml_threadpool * cpu_backend_pool(struct ggml_backend_cpu_context * ctx) {
    if (ctx->threadpool != NULL) {
        return ctx->threadpool;
    }
    if (ctx->own_threadpool != NULL && ggml_threadpool_get_n_threads(ctx->own_threadpool) != ctx->n_threads) {
        ggml_threadpool_free(ctx->own_threadpool);
        ctx->own_threadpool = NULL;
    }
    if (ctx->own_threadpool == NULL) {
        ctx->own_threadpool = ggml_threadpool_new_default(ctx->n_threads);
    }
    return ctx->own_threadpool;
}

struct ggml_backend_cpu_plan {
    struct ggml_cplan  cplan;
    struct ggml_cgraph cgraph;
};

static ggml_backend_graph_plan_t ggml_backend_cpu_graph_plan_create(ggml_backend_t backend, const struct ggml_cgraph * cgraph) {
    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) backend->context;
    struct ggml_threadpool * tp = cpu_backend_pool(ctx);
    if (tp == NULL) {
        return NULL;
    }
    struct ggml_backend_cpu_plan * plan = (struct ggml_backend_cpu_plan *) calloc(1, sizeof(*plan));
    if (plan == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    plan->cplan  = ggml_graph_plan(cgraph, ctx->n_threads, tp);
    plan->cgraph = *cgraph; // the plan refers to the graph's node array, as upstream's does
    if (plan->cplan.work_size > 0) {
        plan->cplan.work_data = (uint8_t *) ggml_aligned_malloc(plan->cplan.work_size);
        if (plan->cplan.work_data == NULL) {
            free(plan);
            return NULL;
        }
    }
    plan->cplan.abort_callback      = ctx->abort_callback;
    plan->cplan.abort_callback_data = ctx->abort_callback_data;
    plan->cplan.use_ref             = ctx->use_ref;
    return plan;
}

static void ggml_backend_cpu_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    (void) backend;
    struct ggml_backend_cpu_plan * p = (struct ggml_backend_cpu_plan *) plan;
    ggml_aligned_free(p->cplan.work_data, p->cplan.work_size);
    free(p);
}

static enum ggml_status ggml_backend_cpu_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) backend->context;
    struct ggml_backend_cpu_plan * p = (struct ggml_backend_cpu_plan *) plan;
    return ggml_graph_compute_profiled(&p->cgraph, &p->cplan, ctx->profile);
}

static enum ggml_status ggml_backend_cpu_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) backend->context;

    struct ggml_threadpool * tp = cpu_backend_pool(ctx);
    if (tp == NULL) {
        return GGML_STATUS_FAILED;
    }
    struct ggml_cplan cplan = ggml_graph_plan(cgraph, ctx->n_threads, tp);
    if (ctx->threadpool != NULL) {
        cplan.n_threads = MIN(ctx->n_threads, ggml_threadpool_get_n_threads(tp));
    }

    if (cplan.work_size > ctx->work_size) {
        ggml_aligned_free(ctx->work_data, ctx->work_size);
        ctx->work_data = (uint8_t *) ggml_aligned_malloc(cplan.work_size);
        if (ctx->work_data == NULL) {
            ctx->work_size = 0;
            return GGML_STATUS_ALLOC_FAILED;
        }
        ctx->work_size = cplan.work_size;
    }
    cplan.work_data           = ctx->work_data;
    cplan.abort_callback      = ctx->abort_callback;
    cplan.abort_callback_data = ctx->abort_callback_data;
    cplan.use_ref             = ctx->use_ref;

    return ggml_graph_compute_profiled(cgraph, &cplan, ctx->profile);
}

static const struct ggml_backend_i ggml_backend_cpu_i = {
    .get_name            = ggml_backend_cpu_get_name,
    .free                = ggml_backend_cpu_free,
    .set_tensor_async    = NULL,
    .get_tensor_async    = NULL,
    .set_tensor_2d_async = NULL,
    .get_tensor_2d_async = NULL,
    .cpy_tensor_async    = NULL,
    .synchronize         = NULL,
    .graph_plan_create   = ggml_backend_cpu_graph_plan_create,
    .graph_plan_free     = ggml_backend_cpu_graph_plan_free,
    .graph_plan_update   = NULL,
    .graph_plan_compute  = ggml_backend_cpu_graph_plan_compute,
    .graph_compute       = ggml_backend_cpu_graph_compute,
    .event_record        = NULL,
    .event_wait          = NULL,
    .graph_optimize      = NULL,
};

static ggml_guid_t ggml_backend_cpu_guid(void) {
    static ggml_guid guid = { 0x43, 0x50, 0x55, 0x2d, 0x67, 0x67, 0x6d, 0x6c, 0x2d, 0x63, 0x31, 0x31, 0x2d, 0x42, 0x4b, 0x44 };
    return &guid;
}

ggml_backend_t ggml_backend_cpu_init(void) {
    ggml_cpu_init();

    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) calloc(1, sizeof(*ctx));
    ggml_backend_t backend = (ggml_backend_t) calloc(1, sizeof(struct ggml_backend));
    if (ctx == NULL || backend == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        free(ctx);
        free(backend);
        return NULL;
    }
    ctx->n_threads   = GGML_DEFAULT_N_THREADS;
    ctx->env_profile = ggml_cpu_profile_from_env();
    ctx->profile     = ctx->env_profile;

    *backend = (struct ggml_backend) {
        .guid    = ggml_backend_cpu_guid(),
        .iface   = ggml_backend_cpu_i,
        .device  = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0),
        .context = ctx,
    };
    return backend;
}

bool ggml_backend_is_cpu(ggml_backend_t backend) {
    return backend != NULL && ggml_guid_matches(backend->guid, ggml_backend_cpu_guid());
}

// Any positive count: the pool is made at the next compute, and if the system
// cannot start that many threads, that compute fails with a log line.
void ggml_backend_cpu_set_n_threads(ggml_backend_t backend_cpu, int n_threads) {
    GGML_ASSERT(ggml_backend_is_cpu(backend_cpu));
    if (n_threads < 1) {
        GGML_LOG_ERROR("%s: invalid number of threads %d (at least 1): keeping %d\n", __func__, n_threads,
                       ((struct ggml_backend_cpu_context *) backend_cpu->context)->n_threads);
        return;
    }
    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) backend_cpu->context;
    ctx->n_threads = n_threads;
}

void ggml_backend_cpu_set_threadpool(ggml_backend_t backend_cpu, ggml_threadpool_t threadpool) {
    GGML_ASSERT(ggml_backend_is_cpu(backend_cpu));
    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) backend_cpu->context;
    if (ctx->threadpool != NULL && ctx->threadpool != threadpool) {
        // the previous pool is no longer used by us: let its threads sleep
        ggml_threadpool_pause(ctx->threadpool);
    }
    ctx->threadpool = threadpool;
    if (threadpool != NULL) {
        // a lent pool replaces ours
        ggml_threadpool_free(ctx->own_threadpool);
        ctx->own_threadpool = NULL;
    }
}

void ggml_backend_cpu_set_abort_callback(ggml_backend_t backend_cpu, ggml_abort_callback abort_callback, void * abort_callback_data) {
    GGML_ASSERT(ggml_backend_is_cpu(backend_cpu));
    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) backend_cpu->context;
    ctx->abort_callback      = abort_callback;
    ctx->abort_callback_data = abort_callback_data;
}

void ggml_backend_cpu_set_use_ref(ggml_backend_t backend_cpu, bool use_ref) {
    GGML_ASSERT(ggml_backend_is_cpu(backend_cpu));
    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) backend_cpu->context;
    ctx->use_ref = use_ref;
}

// proc address "ggml_backend_cpu_set_profile" (cpu-profile.h)
static void ggml_backend_cpu_set_profile(ggml_backend_t backend_cpu, struct ggml_cpu_profile * profile) {
    if (!ggml_backend_is_cpu(backend_cpu)) {
        GGML_LOG_ERROR("%s: %s is not a CPU backend: nothing to profile\n", __func__,
                       backend_cpu != NULL ? ggml_backend_name(backend_cpu) : "NULL");
        return;
    }
    struct ggml_backend_cpu_context * ctx = (struct ggml_backend_cpu_context *) backend_cpu->context;
    struct ggml_cpu_profile * next = profile != NULL ? profile : ctx->env_profile;
    if (ctx->profile != next) {
        // the read buffers of a paired profile taken back
        ggml_cpu_profile_release_probe(ctx->profile);
    }
    ctx->profile = next;
}

//
// device
//

static char           g_cpu_description[256] = "CPU";
static pthread_once_t g_cpu_description_once = PTHREAD_ONCE_INIT;

// the model name from /proc/cpuinfo, trimmed, and the kernels in use:
// "AMD EPYC (avx2)"
static void cpu_description_init(void) {
    const char * kernels = ggml_cpu_kernels_active()->name;
    snprintf(g_cpu_description, sizeof(g_cpu_description), "CPU (%s)", kernels);
    FILE * f = fopen("/proc/cpuinfo", "r");
    if (f == NULL) {
        return;
    }
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "model name", 10) != 0) {
            continue;
        }
        const char * p = strchr(line, ':');
        if (p == NULL) {
            break;
        }
        p++;
        while (isspace((unsigned char) *p)) {
            p++;
        }
        size_t n = strlen(p);
        while (n > 0 && isspace((unsigned char) p[n - 1])) {
            n--;
        }
        if (n > 0) {
            snprintf(g_cpu_description, sizeof(g_cpu_description), "%.*s (%s)", (int) MIN(n, 200), p, kernels);
        }
        break;
    }
    fclose(f);
}

static const char * ggml_backend_cpu_device_get_name(ggml_backend_dev_t dev) {
    (void) dev;
    return "CPU";
}

static const char * ggml_backend_cpu_device_get_description(ggml_backend_dev_t dev) {
    (void) dev;
    pthread_once(&g_cpu_description_once, cpu_description_init);
    return g_cpu_description;
}

static void ggml_backend_cpu_device_get_memory(ggml_backend_dev_t dev, size_t * free_mem, size_t * total) {
    (void) dev;
    const long page  = sysconf(_SC_PAGESIZE);
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long avail = sysconf(_SC_AVPHYS_PAGES);
    *total    = page > 0 && pages > 0 ? (size_t) page * (size_t) pages : 0;
    *free_mem = page > 0 && avail > 0 ? (size_t) page * (size_t) avail : 0;
}

static enum ggml_backend_dev_type ggml_backend_cpu_device_get_type(ggml_backend_dev_t dev) {
    (void) dev;
    return GGML_BACKEND_DEVICE_TYPE_CPU;
}

static void ggml_backend_cpu_device_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    props->name        = ggml_backend_cpu_device_get_name(dev);
    props->description = ggml_backend_cpu_device_get_description(dev);
    props->type        = ggml_backend_cpu_device_get_type(dev);
    props->device_id   = NULL;
    ggml_backend_cpu_device_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps = (struct ggml_backend_dev_caps) {
        .async                = false,
        .host_buffer          = false,
        .buffer_from_host_ptr = true,
        .events               = false,
        .mmap_support         = true,
    };
}

static ggml_backend_t ggml_backend_cpu_device_init_backend(ggml_backend_dev_t dev, const char * params) {
    (void) dev;
    (void) params;
    return ggml_backend_cpu_init();
}

static ggml_backend_buffer_type_t ggml_backend_cpu_device_get_buffer_type(ggml_backend_dev_t dev) {
    (void) dev;
    return ggml_backend_cpu_buffer_type();
}

static ggml_backend_buffer_t ggml_backend_cpu_device_buffer_from_host_ptr(ggml_backend_dev_t dev, void * ptr, size_t size, size_t max_tensor_size) {
    (void) dev;
    (void) max_tensor_size;
    return ggml_backend_cpu_buffer_from_ptr(ptr, size);
}

static bool ggml_backend_cpu_device_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    (void) dev;
    // a tensor of the repacked layout may be read by what knows that layout only
    ggml_backend_buffer_type_t repack = ggml_backend_cpu_repack_buffer_type();
    for (int i = 0; repack != NULL && i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * s = op->src[i];
        if (s != NULL && s->buffer != NULL && s->buffer->buft == repack) {
            return ggml_cpu_repack_supports_op(op) && ggml_cpu_supports_op(op);
        }
    }
    return ggml_cpu_supports_op(op);
}

static bool ggml_backend_cpu_device_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    (void) dev;
    return ggml_backend_buft_is_host(buft) || (buft != NULL && buft == ggml_backend_cpu_repack_buffer_type());
}


//
// registry entry
//

static const char * ggml_backend_cpu_reg_get_name(ggml_backend_reg_t reg) {
    (void) reg;
    return "CPU";
}

static size_t ggml_backend_cpu_reg_get_device_count(ggml_backend_reg_t reg) {
    (void) reg;
    return 1;
}

static ggml_backend_dev_t ggml_backend_cpu_reg_get_device(ggml_backend_reg_t reg, size_t index);

// the weight layouts of the kernels in use (repack.h), NULL-terminated
static ggml_backend_buffer_type_t g_cpu_extra_bufts[2];
static pthread_once_t             g_cpu_extra_bufts_once = PTHREAD_ONCE_INIT;

static void cpu_extra_bufts_init(void) {
    g_cpu_extra_bufts[0] = ggml_backend_cpu_repack_buffer_type();
    g_cpu_extra_bufts[1] = NULL;
}

static ggml_backend_buffer_type_t * ggml_backend_cpu_device_get_extra_bufts(ggml_backend_dev_t device) {
    (void) device;
    pthread_once(&g_cpu_extra_bufts_once, cpu_extra_bufts_init);
    return g_cpu_extra_bufts;
}

static struct ggml_backend_feature * ggml_backend_cpu_get_features(ggml_backend_reg_t reg) {
    (void) reg;
    return ggml_cpu_features_list();
}

static void * ggml_backend_cpu_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    (void) reg;
    if (strcmp(name, "ggml_backend_set_n_threads") == 0) {
        ggml_backend_set_n_threads_t fn = ggml_backend_cpu_set_n_threads;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_dev_get_extra_bufts") == 0) {
        ggml_backend_dev_get_extra_bufts_t fn = ggml_backend_cpu_device_get_extra_bufts;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_get_features") == 0) {
        ggml_backend_get_features_t fn = ggml_backend_cpu_get_features;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_set_abort_callback") == 0) {
        ggml_backend_set_abort_callback_t fn = ggml_backend_cpu_set_abort_callback;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_cpu_numa_init") == 0) {
        return GGML_FN_TO_PTR(ggml_numa_init);
    }
    if (strcmp(name, "ggml_backend_cpu_is_numa") == 0) {
        return GGML_FN_TO_PTR(ggml_is_numa);
    }
    if (strcmp(name, "ggml_backend_cpu_set_use_ref") == 0) {
        return GGML_FN_TO_PTR(ggml_backend_cpu_set_use_ref);
    }
    if (strcmp(name, "ggml_backend_cpu_set_profile") == 0) {
        ggml_backend_cpu_set_profile_t fn = ggml_backend_cpu_set_profile;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_cpu_profile_print_pairs") == 0) {
        ggml_backend_cpu_profile_print_pairs_t fn = ggml_cpu_profile_print_pairs;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_cpu_profile_print_table") == 0) {
        ggml_backend_cpu_profile_print_table_t fn = ggml_cpu_profile_print_table;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_threadpool_new") == 0) {
        return GGML_FN_TO_PTR(ggml_threadpool_new);
    }
    if (strcmp(name, "ggml_threadpool_free") == 0) {
        return GGML_FN_TO_PTR(ggml_threadpool_free);
    }
    if (strcmp(name, "ggml_threadpool_pause") == 0) {
        return GGML_FN_TO_PTR(ggml_threadpool_pause);
    }
    if (strcmp(name, "ggml_threadpool_resume") == 0) {
        return GGML_FN_TO_PTR(ggml_threadpool_resume);
    }
    if (strcmp(name, "ggml_backend_cpu_set_threadpool") == 0) {
        return GGML_FN_TO_PTR(ggml_backend_cpu_set_threadpool);
    }
    return NULL;
}

// (interfaces spelled out in place: a static initialiser may not copy another object)
static struct ggml_backend_reg g_cpu_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface       = {
        .get_name         = ggml_backend_cpu_reg_get_name,
        .get_device_count = ggml_backend_cpu_reg_get_device_count,
        .get_device       = ggml_backend_cpu_reg_get_device,
        .get_proc_address = ggml_backend_cpu_get_proc_address,
    },
    .context     = NULL,
};

static struct ggml_backend_device g_cpu_device = {
    .iface   = {
        .get_name             = ggml_backend_cpu_device_get_name,
        .get_description      = ggml_backend_cpu_device_get_description,
        .get_memory           = ggml_backend_cpu_device_get_memory,
        .get_type             = ggml_backend_cpu_device_get_type,
        .get_props            = ggml_backend_cpu_device_get_props,
        .init_backend         = ggml_backend_cpu_device_init_backend,
        .get_buffer_type      = ggml_backend_cpu_device_get_buffer_type,
        .get_host_buffer_type = NULL,
        .buffer_from_host_ptr = ggml_backend_cpu_device_buffer_from_host_ptr,
        .supports_op          = ggml_backend_cpu_device_supports_op,
        .supports_buft        = ggml_backend_cpu_device_supports_buft,
        .offload_op           = NULL,
        .event_new            = NULL,
        .event_free           = NULL,
        .event_synchronize    = NULL,
    },
    .reg     = &g_cpu_reg,
    .context = NULL,
};

static ggml_backend_dev_t ggml_backend_cpu_reg_get_device(ggml_backend_reg_t reg, size_t index) {
    (void) reg;
    GGML_ASSERT(index == 0);
    return &g_cpu_device;
}

ggml_backend_reg_t ggml_backend_cpu_reg(void) {
    ggml_cpu_init();
    return &g_cpu_reg;
}

GGML_BACKEND_DL_IMPL(ggml_backend_cpu_reg)
