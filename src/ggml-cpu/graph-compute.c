// graph-compute.c: planning and running a graph on the CPU.
//
// ggml_graph_plan sizes the shared scratch memory (the largest any node
// needs); ggml_graph_compute runs every node on all threads of a pool with
// one barrier between nodes that compute something, and polls the abort
// callback between nodes.

#include "cpu-impl.h"

#include <pthread.h>
#include <stdatomic.h>

//
// op table
//

static struct ggml_cpu_op_impl g_op_table[GGML_OP_COUNT];
static pthread_once_t          g_op_table_once = PTHREAD_ONCE_INIT;

static void op_table_init(void) {
    ggml_cpu_register_ops_elementwise(g_op_table);
    ggml_cpu_register_ops_copy(g_op_table);
    ggml_cpu_register_ops_reduce(g_op_table);
    ggml_cpu_register_ops_norm(g_op_table);
    ggml_cpu_register_ops_misc(g_op_table);
    ggml_cpu_register_ops_ssm(g_op_table);
    ggml_cpu_register_ops_rope(g_op_table);
    ggml_cpu_register_ops_matmul(g_op_table);
    ggml_cpu_register_ops_attention(g_op_table);
    ggml_cpu_register_ops_custom(g_op_table);
    ggml_cpu_register_ops_conv(g_op_table);
    ggml_cpu_register_ops_pool(g_op_table);
    ggml_cpu_register_ops_image(g_op_table);
    ggml_cpu_register_ops_train(g_op_table);
}

const struct ggml_cpu_op_impl * ggml_cpu_op_get(enum ggml_op op) {
    GGML_ASSERT(op >= 0 && op < GGML_OP_COUNT);
    pthread_once(&g_op_table_once, op_table_init);
    return &g_op_table[op];
}

bool ggml_cpu_supports_op(const struct ggml_tensor * op) {
    if (ggml_op_is_empty(op->op)) {
        return true;
    }
    const struct ggml_cpu_op_impl * impl = ggml_cpu_op_get(op->op);
    if (impl->forward == NULL) {
        return false;
    }
    return impl->supports == NULL || impl->supports(op);
}

//
// planning
//

static bool node_computes(const struct ggml_tensor * node) {
    return !ggml_op_is_empty(node->op) && (node->flags & GGML_TENSOR_FLAG_COMPUTE) && !ggml_is_empty(node);
}

struct ggml_cplan ggml_graph_plan(const struct ggml_cgraph * cgraph, int n_threads, struct ggml_threadpool * threadpool) {
    if (threadpool != NULL) {
        n_threads = ggml_threadpool_get_n_threads(threadpool);
    }
    if (n_threads <= 0) {
        n_threads = GGML_DEFAULT_N_THREADS;
    }

    size_t work_size = 0;
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        if (!node_computes(node)) {
            continue;
        }
        const struct ggml_cpu_op_impl * impl = ggml_cpu_op_get(node->op);
        if (impl->work_size != NULL) {
            work_size = MAX(work_size, impl->work_size(node, n_threads));
        }
    }
    if (work_size > 0) {
        // room to align the start and to pad per-thread areas to cache lines
        work_size += GGML_CPU_CACHE_LINE * (size_t)(n_threads + 1);
    }

    struct ggml_cplan cplan = {
        .work_size           = work_size,
        .work_data           = NULL,
        .n_threads           = n_threads,
        .threadpool          = threadpool,
        .abort_callback      = NULL,
        .abort_callback_data = NULL,
        .use_ref             = false,
    };
    return cplan;
}

//
// computing
//

struct graph_job {
    struct ggml_cgraph *       cgraph;
    const struct ggml_cplan *  cplan;
    struct ggml_threadpool *   threadpool;
    void *                     wdata; // cplan->work_data aligned to a cache line
    size_t                     wsize;
    atomic_int                 abort_at;  // index of the first node not to run, or -1
    enum ggml_status           status;
};

static void graph_compute_thread(void * arg, int ith, int nth) {
    struct graph_job * job = (struct graph_job *) arg;
    const struct ggml_cgraph * cgraph = job->cgraph;
    const struct ggml_cplan  * cplan  = job->cplan;

    const struct ggml_compute_params params = {
        .ith        = ith,
        .nth        = nth,
        .wsize      = job->wsize,
        .wdata      = job->wdata,
        .threadpool = job->threadpool,
        .use_ref    = cplan->use_ref,
    };

    for (int i = 0; i < cgraph->n_nodes && atomic_load(&job->abort_at) != i; i++) {
        struct ggml_tensor * node = cgraph->nodes[i];
        if (!node_computes(node)) {
            continue;
        }

        ggml_cpu_op_get(node->op)->forward(&params, node);

        // thread 0 decides before the barrier, so that every thread sees the
        // decision after it and all stop at the same node
        if (ith == 0 && cplan->abort_callback != NULL && cplan->abort_callback(cplan->abort_callback_data)) {
            atomic_store(&job->abort_at, i + 1);
            job->status = GGML_STATUS_ABORTED;
        }

        if (i + 1 < cgraph->n_nodes) {
            ggml_cpu_barrier(job->threadpool);
        }
    }
}

// every node that computes something must be supported (types and layouts
// included); checked before any runs, so that a graph the CPU cannot compute
// fails cleanly instead of stopping inside a kernel
static bool graph_check_supported(const struct ggml_cgraph * cgraph) {
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        if (node_computes(node) && !ggml_cpu_supports_op(node)) {
            GGML_LOG_ERROR("%s: node %d (%s): the CPU backend does not support %s with type %s%s%s\n",
                           __func__, i, node->name, ggml_op_desc(node), ggml_type_name(node->type),
                           node->src[0] ? " from " : "", node->src[0] ? ggml_type_name(node->src[0]->type) : "");
            return false;
        }
    }
    return true;
}

enum ggml_status ggml_graph_compute(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan) {
    GGML_ASSERT(cplan != NULL);
    GGML_ASSERT(cplan->n_threads > 0);
    GGML_ASSERT(cplan->work_size == 0 || cplan->work_data != NULL);

    ggml_cpu_init();

    if (!graph_check_supported(cgraph)) {
        return GGML_STATUS_FAILED;
    }

    struct ggml_threadpool * tp = cplan->threadpool;
    bool disposable = false;
    int n_threads = cplan->n_threads;
    if (tp == NULL) {
        tp = ggml_threadpool_new_default(n_threads);
        if (tp == NULL) {
            return GGML_STATUS_FAILED;
        }
        disposable = true;
    } else {
        n_threads = MIN(n_threads, ggml_threadpool_get_n_threads(tp));
    }

    struct graph_job job = {
        .cgraph     = cgraph,
        .cplan      = cplan,
        .threadpool = tp,
        .wdata      = NULL,
        .wsize      = 0,
        .status     = GGML_STATUS_SUCCESS,
    };
    atomic_init(&job.abort_at, -1);
    if (cplan->work_size > 0) {
        const uintptr_t p = (uintptr_t) cplan->work_data;
        const uintptr_t aligned = (p + GGML_CPU_CACHE_LINE - 1) & ~(uintptr_t)(GGML_CPU_CACHE_LINE - 1);
        job.wdata = (void *) aligned;
        job.wsize = cplan->work_size - (size_t)(aligned - p);
    }

    ggml_threadpool_run(tp, n_threads, graph_compute_thread, &job);

    if (disposable) {
        ggml_threadpool_free(tp);
    }
    return job.status;
}

enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * cgraph, int n_threads) {
    struct ggml_cplan cplan = ggml_graph_plan(cgraph, n_threads, NULL);
    if (cplan.work_size > 0) {
        cplan.work_data = (uint8_t *) ggml_new_buffer(ctx, cplan.work_size);
    }
    return ggml_graph_compute(cgraph, &cplan);
}
