// graph-compute.c: planning and running a graph on the CPU.
//
// ggml_graph_plan sizes the shared scratch memory (the largest any node
// needs); ggml_graph_compute runs every node on all threads of a pool with
// one barrier between nodes that compute something, and polls the abort
// callback between nodes. With a profile (cpu-profile.h), every thread reads
// the clock after each node's kernel and after the barrier that follows it,
// and the times are added to the profile per kind of node.

#include "cpu-impl.h"
#include "cpu-variant.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

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
    double *                   times;     // with a profile: [n_nodes][nth][2] kernel and whole-node ns
    int                        nth;
    bool                       fuse;      // fusions are taken (ggml_cpu_fusion_enabled)
};

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

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

    double * const times = job->times;
    double t_prev = times != NULL ? now_ns() : 0.0;
    double t_kernel = 0.0;

    // i advances by the nodes computed: 1, or those of a fusion (graph-fusion.c)
    int n = 1;
    for (int i = 0; i < cgraph->n_nodes && atomic_load(&job->abort_at) != i; i += n) {
        struct ggml_tensor * node = cgraph->nodes[i];
        n = 1;
        if (!node_computes(node)) {
            continue;
        }

        const enum ggml_cpu_fusion fusion = ggml_cpu_fusion_at(cgraph, i, job->fuse, &n);
        if (fusion != GGML_CPU_FUSION_NONE) {
            ggml_cpu_fusion_forward(&params, cgraph, i, fusion);
        } else {
            ggml_cpu_op_get(node->op)->forward(&params, node);
        }
        if (times != NULL) {
            t_kernel = now_ns();
        }

        // thread 0 decides before the barrier, so that every thread sees the
        // decision after it and all stop at the same node
        if (ith == 0 && cplan->abort_callback != NULL && cplan->abort_callback(cplan->abort_callback_data)) {
            atomic_store(&job->abort_at, i + n);
            job->status = GGML_STATUS_ABORTED;
        }

        if (i + n < cgraph->n_nodes) {
            // while it waits for the others, the thread asks for the
            // first weights of the next product (stream-lead.c)
            struct ggml_cpu_lead lead;
            ggml_cpu_lead_init(&lead, cgraph, i, i + n, job->fuse, nth);
            ggml_cpu_barrier_busy(job->threadpool, ggml_cpu_lead_step, &lead);
        }
        if (times != NULL) {
            const double t_end = now_ns();
            double * t = times + ((size_t) i * (size_t) job->nth + (size_t) ith) * 2;
            t[0] = t_kernel - t_prev;
            t[1] = t_end - t_prev;
            t_prev = t_end;
        }
    }
}

//
// profiling
//

// the bytes a node reads and writes, and of those the bytes of weights (cpu-profile.h)
static double node_bytes(const struct ggml_tensor * node, double * weight_bytes) {
    double bytes = (double) ggml_nbytes(node);
    *weight_bytes = 0.0;
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        const struct ggml_tensor * src = node->src[j];
        if (src == NULL) {
            continue;
        }
        double b;
        if (node->op == GGML_OP_GET_ROWS && j == 0) {
            b = (double) ggml_row_size(src->type, src->ne[0]) * (double) ggml_nelements(node->src[1]);
        } else {
            b = (double) ggml_nbytes(src);
        }
        bytes += b;
        if (src->buffer != NULL && ggml_backend_buffer_get_usage(src->buffer) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS) {
            *weight_bytes += b;
        }
    }
    return bytes;
}

// n_products: the products of a MUL_MAT group (kept as the row's sub_op: a
// group of 3 is another kind than a pair); last: the fusion's last node (a
// pair's GLU, whose op is the row's sub_op)
static struct ggml_cpu_profile_row * profile_row(struct ggml_cpu_profile * prof, const struct ggml_tensor * node,
                                                 enum ggml_cpu_fusion fusion, int n_products,
                                                 const struct ggml_tensor * last) {
    int32_t sub_op = -1;
    if (fusion == GGML_CPU_FUSION_MUL_MAT_GROUP) {
        sub_op = n_products;
    } else if (fusion == GGML_CPU_FUSION_MUL_MAT_GLU) {
        sub_op = (int32_t) ggml_get_glu_op(last);
    } else if (node->op == GGML_OP_UNARY) {
        sub_op = (int32_t) ggml_get_unary_op(node);
    } else if (node->op == GGML_OP_GLU) {
        sub_op = (int32_t) ggml_get_glu_op(node);
    }
    const enum ggml_type src0_type = node->src[0] != NULL ? node->src[0]->type : GGML_TYPE_COUNT;
    for (size_t r = 0; r < prof->n_rows; r++) {
        struct ggml_cpu_profile_row * row = &prof->rows[r];
        if (row->op == node->op && row->sub_op == sub_op && row->src0_type == src0_type &&
            row->fusion == (int32_t) fusion) {
            return row;
        }
    }
    if (prof->n_rows == prof->cap_rows) {
        const size_t cap = prof->cap_rows > 0 ? 2 * prof->cap_rows : 32;
        struct ggml_cpu_profile_row * rows = (struct ggml_cpu_profile_row *) realloc(prof->rows, cap * sizeof(*rows));
        if (rows == NULL) {
            return NULL;
        }
        prof->rows     = rows;
        prof->cap_rows = cap;
    }
    struct ggml_cpu_profile_row * row = &prof->rows[prof->n_rows++];
    *row = (struct ggml_cpu_profile_row) {
        .op = node->op, .sub_op = sub_op, .src0_type = src0_type, .fusion = (int32_t) fusion,
    };
    return row;
}

// a fusion's nodes are one row (kind: its first node and the fusion), their
// times kept at its first node; the intermediate result it never moves is not
// counted in its bytes
// Returns the bytes of weights the graph read.
static double profile_add(struct ggml_cpu_profile * prof, const struct ggml_cgraph * cgraph, const double * times,
                          int nth, int n_run, double graph_ns, bool fuse) {
    double graph_weight_bytes = 0.0;
    int n = 1;
    for (int i = 0; i < n_run; i += n) {
        const struct ggml_tensor * node = cgraph->nodes[i];
        n = 1;
        if (!node_computes(node)) {
            continue;
        }
        const enum ggml_cpu_fusion fusion = ggml_cpu_fusion_at(cgraph, i, fuse, &n);
        int n_products = 0;
        for (int j = i; j < i + n; j++) {
            n_products += cgraph->nodes[j]->op == GGML_OP_MUL_MAT && node_computes(cgraph->nodes[j]);
        }
        struct ggml_cpu_profile_row * row = profile_row(prof, node, fusion, n_products, cgraph->nodes[i + n - 1]);
        if (row == NULL) {
            prof->failed = 1;
            continue;
        }
        const double * t0 = times + (size_t) i * (size_t) nth * 2;
        const double wall = t0[1];
        double kmax = 0.0, ksum = 0.0;
        for (int t = 0; t < nth; t++) {
            kmax  = MAX(kmax, t0[2 * t]);
            ksum += t0[2 * t];
        }
        row->n_nodes         += 1;
        row->wall_ns         += wall;
        row->compute_max_ns  += kmax;
        row->compute_mean_ns += ksum / nth;
        for (int j = i; j < i + n; j++) {
            if (!node_computes(cgraph->nodes[j])) {
                continue;
            }
            double weight_bytes;
            row->bytes         += node_bytes(cgraph->nodes[j], &weight_bytes);
            row->weight_bytes  += weight_bytes;
            graph_weight_bytes += weight_bytes;
        }
        if (fusion == GGML_CPU_FUSION_RMS_NORM_MUL || fusion == GGML_CPU_FUSION_ADD_RMS_NORM_MUL) {
            // the norm's result: written by it and read by the MUL, unfused
            const struct ggml_tensor * norm = cgraph->nodes[i + n - 2];
            row->bytes -= 2.0 * (double) ggml_nbytes(norm);
        }
    }
    prof->n_graphs  += 1;
    prof->graph_ns  += graph_ns;
    prof->n_threads  = nth;
    return graph_weight_bytes;
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

enum ggml_status ggml_graph_compute_profiled(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan,
                                             struct ggml_cpu_profile * prof) {
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
        .fuse       = ggml_cpu_fusion_enabled(cplan->use_ref),
    };
    atomic_init(&job.abort_at, -1);
    if (cplan->work_size > 0) {
        const uintptr_t p = (uintptr_t) cplan->work_data;
        const uintptr_t aligned = (p + GGML_CPU_CACHE_LINE - 1) & ~(uintptr_t)(GGML_CPU_CACHE_LINE - 1);
        job.wdata = (void *) aligned;
        job.wsize = cplan->work_size - (size_t)(aligned - p);
    }

    double t_start = 0.0;
    if (prof != NULL && cgraph->n_nodes > 0) {
        // a profile that cannot be kept does not stop the computation
        job.times = (double *) calloc((size_t) cgraph->n_nodes * (size_t) n_threads * 2, sizeof(double));
        job.nth   = n_threads;
        prof->failed |= job.times == NULL;
        t_start = now_ns();
    }

    ggml_threadpool_run(tp, n_threads, graph_compute_thread, &job);

    if (job.times != NULL) {
        const double t_end = now_ns();
        const int stop = atomic_load(&job.abort_at);
        const double weight_bytes = profile_add(prof, cgraph, job.times, n_threads, stop >= 0 ? stop : cgraph->n_nodes,
                                                t_end - t_start, job.fuse);
        free(job.times);
        if (job.status == GGML_STATUS_SUCCESS) {
            ggml_cpu_profile_pair_graph(prof, tp, n_threads, t_start, t_end, weight_bytes);
        }
    }
    if (disposable) {
        ggml_threadpool_free(tp);
    }
    return job.status;
}

enum ggml_status ggml_graph_compute(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan) {
    return ggml_graph_compute_profiled(cgraph, cplan, NULL);
}

enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * cgraph, int n_threads) {
    struct ggml_cplan cplan = ggml_graph_plan(cgraph, n_threads, NULL);
    if (cplan.work_size > 0) {
        cplan.work_data = (uint8_t *) ggml_new_buffer(ctx, cplan.work_size);
    }
    return ggml_graph_compute(cgraph, &cplan);
}
