#define _POSIX_C_SOURCE 200809L
// test-threadpool: the CPU backend's thread pool and graph execution, checked
// with custom ops whose behaviour the test knows exactly.
//
//  - every task index of every node runs exactly once, with the right count
//  - a node sees all writes of the node before it (the barrier), even when
//    each thread reads what another thread wrote
//  - results are identical for 1, 2, 3 and 4 threads
//  - the abort callback stops the graph between nodes: ABORTED is returned
//    and no later node runs
//  - a pool runs many graphs, pauses, resumes, and sleeps when idle instead
//    of spinning
//  - nodes without GGML_TENSOR_FLAG_COMPUTE are skipped

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "testing.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define N_ELEM 1000

// counts calls per (ith, nth) of one node
struct call_log {
    atomic_int calls[8][8]; // [nth][ith]
};

static void log_calls(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    (void) dst;
    (void) a;
    struct call_log * log = (struct call_log *) userdata;
    atomic_fetch_add(&log->calls[nth][ith], 1);
}

// dst[i] = a[n-1-i] + 1, each thread writing its own contiguous range of dst:
// every thread reads elements that other threads of the previous node wrote
static void reverse_plus_one(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    (void) userdata;
    const int n = (int) ggml_nelements(dst);
    const int per = (n + nth - 1) / nth;
    const int i0 = per * ith;
    const int i1 = i0 + per < n ? i0 + per : n;
    const float * src = (const float *) a->data;
    float * out = (float *) dst->data;
    for (int i = i0; i < i1; i++) {
        out[i] = src[n - 1 - i] + 1.0f;
    }
}

static atomic_int g_nodes_run;

static void count_node(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    (void) dst;
    (void) a;
    (void) nth;
    (void) userdata;
    if (ith == 0) {
        atomic_fetch_add(&g_nodes_run, 1);
    }
}

static int g_abort_after;
static int g_abort_polls;

static bool abort_after_n(void * data) {
    (void) data;
    return ++g_abort_polls >= g_abort_after;
}

static struct ggml_context * new_ctx(void) {
    struct ggml_init_params params = { 64 * 1024 * 1024, NULL, false };
    return ggml_init(params);
}

static void test_task_indices(void) {
    for (int n_threads = 1; n_threads <= 4; n_threads++) {
        const int task_counts[] = { 1, 2, 3, GGML_N_TASKS_MAX };
        for (size_t t = 0; t < sizeof(task_counts) / sizeof(task_counts[0]); t++) {
            struct ggml_context * ctx = new_ctx();
            static struct call_log log;
            memset(&log, 0, sizeof(log));
            struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
            struct ggml_tensor * r = ggml_map_custom1(ctx, a, log_calls, task_counts[t], &log);
            struct ggml_cgraph * gf = ggml_new_graph(ctx);
            ggml_build_forward_expand(gf, r);
            CHECK(ggml_graph_compute_with_ctx(ctx, gf, n_threads) == GGML_STATUS_SUCCESS);

            const int want_n = task_counts[t] == GGML_N_TASKS_MAX || task_counts[t] > n_threads ? n_threads : task_counts[t];
            for (int nth = 1; nth < 8; nth++) {
                for (int ith = 0; ith < 8; ith++) {
                    const int expect = nth == want_n && ith < want_n ? 1 : 0;
                    CHECK_MSG(atomic_load(&log.calls[nth][ith]) == expect,
                              "threads %d tasks %d: call (%d of %d) ran %d times",
                              n_threads, task_counts[t], ith, nth, atomic_load(&log.calls[nth][ith]));
                }
            }
            ggml_free(ctx);
        }
    }
}

// a chain of n_nodes reverse_plus_one nodes over x0[i] = i
static void run_chain(int n_threads, int n_nodes, struct ggml_threadpool * tp, float * out) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N_ELEM);
    for (int i = 0; i < N_ELEM; i++) {
        ((float *) x->data)[i] = (float) i;
    }
    struct ggml_tensor * cur = x;
    for (int k = 0; k < n_nodes; k++) {
        cur = ggml_map_custom1(ctx, cur, reverse_plus_one, GGML_N_TASKS_MAX, NULL);
    }
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, (size_t) n_nodes + 16, false);
    ggml_build_forward_expand(gf, cur);

    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, tp);
    CHECK(plan.work_size == 0);
    CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
    memcpy(out, cur->data, sizeof(float) * N_ELEM);
    ggml_free(ctx);
}

static void test_barrier_chain(void) {
    // after k steps: x_k[i] = (k even ? i : n-1-i) + k
    static float ref[N_ELEM], got[N_ELEM];
    const int n_nodes = 301;
    for (int i = 0; i < N_ELEM; i++) {
        ref[i] = (float)(N_ELEM - 1 - i) + (float) n_nodes;
    }
    for (int n_threads = 1; n_threads <= 4; n_threads++) {
        run_chain(n_threads, n_nodes, NULL, got);
        int bad = 0;
        for (int i = 0; i < N_ELEM; i++) {
            bad += got[i] != ref[i];
        }
        CHECK_MSG(bad == 0, "%d threads: %d wrong elements", n_threads, bad);
    }
}

static void test_pool_reuse(void) {
    struct ggml_threadpool_params params = ggml_threadpool_params_default(3);
    struct ggml_threadpool * tp = ggml_threadpool_new(&params);
    CHECK(tp != NULL);
    CHECK_EQ_INT(ggml_threadpool_get_n_threads(tp), 3);

    static float got[N_ELEM];
    for (int rep = 0; rep < 200; rep++) {
        run_chain(3, 5, tp, got);
        // 5 steps: odd, so reversed, plus 5
        CHECK(got[0] == (float)(N_ELEM - 1 + 5) && got[N_ELEM - 1] == 5.0f);
    }

    // paused pools still compute (the next graph wakes the workers)
    ggml_threadpool_pause(tp);
    run_chain(3, 2, tp, got);
    CHECK(got[0] == 2.0f && got[N_ELEM - 1] == (float)(N_ELEM - 1 + 2));
    ggml_threadpool_resume(tp);
    run_chain(3, 2, tp, got);
    CHECK(got[0] == 2.0f);

    // an idle pool sleeps: over 300 ms of idling the process uses far less
    // CPU time than two spinning workers would (600 ms)
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    const struct timespec idle = { 0, 300 * 1000 * 1000 };
    nanosleep(&idle, NULL);
    getrusage(RUSAGE_SELF, &after);
    const double cpu_ms =
        (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec) * 1e3 + (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec) / 1e3 +
        (double)(after.ru_stime.tv_sec - before.ru_stime.tv_sec) * 1e3 + (double)(after.ru_stime.tv_usec - before.ru_stime.tv_usec) / 1e3;
    CHECK_MSG(cpu_ms < 150.0, "idle pool used %.1f ms of CPU in 300 ms", cpu_ms);

    // and wakes up again
    run_chain(3, 3, tp, got);
    CHECK(got[0] == (float)(N_ELEM - 1 + 3));

    ggml_threadpool_free(tp);

    // a pool of one thread creates no worker and still works
    params = ggml_threadpool_params_default(1);
    tp = ggml_threadpool_new(&params);
    CHECK(tp != NULL);
    run_chain(1, 4, tp, got);
    CHECK(got[0] == 4.0f);
    ggml_threadpool_free(tp);

    // invalid sizes are refused
    params = ggml_threadpool_params_default(0);
    CHECK(ggml_threadpool_new(&params) == NULL);
}

static void test_abort(void) {
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * cur = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
        for (int k = 0; k < 20; k++) {
            cur = ggml_map_custom1(ctx, cur, count_node, GGML_N_TASKS_MAX, NULL);
        }
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, cur);

        struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, NULL);
        plan.abort_callback = abort_after_n;
        atomic_store(&g_nodes_run, 0);
        g_abort_polls = 0;
        g_abort_after = 7;
        CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_ABORTED);
        // polled after each node: the 7th poll (after node 7) stops the graph
        CHECK_EQ_INT(atomic_load(&g_nodes_run), 7);

        // without the callback the whole graph runs
        plan.abort_callback = NULL;
        atomic_store(&g_nodes_run, 0);
        CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
        CHECK_EQ_INT(atomic_load(&g_nodes_run), 20);
        ggml_free(ctx);
    }
}

static void test_compute_flag(void) {
    // nodes added with ggml_build_forward_order are not computed
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct ggml_tensor * skipped = ggml_map_custom1(ctx, a, count_node, 1, NULL);
    struct ggml_tensor * run     = ggml_map_custom1(ctx, a, count_node, 1, NULL);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_order(gf, skipped);
    ggml_build_forward_expand(gf, run);
    atomic_store(&g_nodes_run, 0);
    CHECK(ggml_graph_compute_with_ctx(ctx, gf, 2) == GGML_STATUS_SUCCESS);
    CHECK_EQ_INT(atomic_load(&g_nodes_run), 1);
    ggml_free(ctx);
}

// the same through the backend API: ggml_backend_cpu_set_abort_callback
static void test_backend_abort(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 2);
    struct ggml_init_params params = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * cur = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    for (int k = 0; k < 20; k++) {
        cur = ggml_map_custom1(ctx, cur, count_node, GGML_N_TASKS_MAX, NULL);
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, cur);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);

    ggml_backend_cpu_set_abort_callback(cpu, abort_after_n, NULL);
    atomic_store(&g_nodes_run, 0);
    g_abort_polls = 0;
    g_abort_after = 3;
    CHECK(ggml_backend_graph_compute(cpu, gf) == GGML_STATUS_ABORTED);
    CHECK_EQ_INT(atomic_load(&g_nodes_run), 3);

    ggml_backend_cpu_set_abort_callback(cpu, NULL, NULL);
    atomic_store(&g_nodes_run, 0);
    CHECK(ggml_backend_graph_compute(cpu, gf) == GGML_STATUS_SUCCESS);
    CHECK_EQ_INT(atomic_load(&g_nodes_run), 20);

    // a user-provided pool
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(3);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);
    ggml_backend_cpu_set_threadpool(cpu, tp);
    atomic_store(&g_nodes_run, 0);
    CHECK(ggml_backend_graph_compute(cpu, gf) == GGML_STATUS_SUCCESS);
    CHECK_EQ_INT(atomic_load(&g_nodes_run), 20);
    ggml_backend_cpu_set_threadpool(cpu, NULL);
    ggml_threadpool_free(tp);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

// more threads than GGML_MAX_N_THREADS (512): there is no fixed limit, the
// backend runs them (issue 10, defect 3: it asserted at 512); a count below 1
// is refused with a log line and the previous count kept
static void test_many_threads(void) {
    const int n_threads = GGML_MAX_N_THREADS + 88;
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);
    CHECK(tp != NULL);
    if (tp != NULL) {
        CHECK_EQ_INT(ggml_threadpool_get_n_threads(tp), n_threads);
        ggml_threadpool_free(tp);
    }
    tpp.n_threads = 0;
    CHECK(ggml_threadpool_new(&tpp) == NULL);

    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 0);  // refused
    ggml_backend_cpu_set_n_threads(cpu, -3); // refused
    ggml_backend_cpu_set_n_threads(cpu, n_threads);

    // y = ((x + x) + x) ... over 2000 values: every thread has elements of
    // the next node to read that others wrote
    const int n = 2000, n_add = 4;
    struct ggml_init_params params = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
    struct ggml_tensor * cur = x;
    for (int k = 0; k < n_add; k++) {
        cur = ggml_add(ctx, cur, x);
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, cur);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    float * xv = malloc((size_t) n * sizeof(float));
    float * yv = malloc((size_t) n * sizeof(float));
    for (int i = 0; i < n; i++) {
        xv[i] = (float) i - 700.0f;
    }
    ggml_backend_tensor_set(x, xv, 0, (size_t) n * sizeof(float));
    CHECK(ggml_backend_graph_compute(cpu, gf) == GGML_STATUS_SUCCESS);
    ggml_backend_tensor_get(cur, yv, 0, (size_t) n * sizeof(float));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        bad += yv[i] != (float)(n_add + 1) * xv[i];
    }
    CHECK_MSG(bad == 0, "%d threads: %d wrong values", n_threads, bad);
    free(yv);
    free(xv);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

int main(void) {
    test_many_threads();
    test_backend_abort();
    test_task_indices();
    test_barrier_chain();
    test_pool_reuse();
    test_abort();
    test_compute_flag();
    return TEST_RESULT();
}
