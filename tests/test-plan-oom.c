// test-plan-oom: host memory running out while the graph allocator and the
// scheduler plan a graph.
//
// ggml_impl_test_fail_alloc(k) (ggml-impl.h, a hook in no public header) makes
// the k-th host allocation of the calling thread fail. Each scenario is run
// with k = 1, 2, ... until a run makes fewer than k allocations, so every
// allocation the planning makes fails once, in turn. Each time the call must
// either return false with an error in the log, or (where the code has a
// fallback) succeed; the user's graph must be as it was given; and the same
// allocator or scheduler, with memory back, must then allocate the graph and
// compute the right numbers (a double-precision reference).

#include "ggml.h"
#include "ggml-impl.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "test-backend.h"
#include "testing.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//
// log capture
//

static int  g_log_errors = 0;
static char g_log_last[512];

static void capture_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR) {
        g_log_errors++;
        snprintf(g_log_last, sizeof(g_log_last), "%s", text);
    }
}

//
// the graph: N floats per tensor, two inputs, views, in-place candidates
//
//   x, y inputs [N]          (w: zeros, optional: then y is replaced by add(y, w))
//   a = mul(x, y)            b = add(a, x)          c = mul(b, a)
//   v = view of c, N/2 floats from N/4               d = add(v, v)   [N/2]
//   e = scale(c, 0.5)        f = add(e, b)          out = mul(f, f)
//   out and d are outputs
//

enum { N = 64 };

struct graph {
    struct ggml_context * ctx;
    struct ggml_cgraph  * gf;
    struct ggml_tensor  * x, * y, * out, * d;
    // every node's sources as built, to tell that a failed call left them alone
    struct ggml_tensor  * srcs[64][GGML_MAX_SRC];
};

static void graph_build(struct graph * g, size_t extra_nodes, struct ggml_tensor * w) {
    struct ggml_init_params params = { (32 + extra_nodes) * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    g->ctx = ggml_init(params);
    struct ggml_context * ctx = g->ctx;
    g->x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    g->y = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    ggml_set_name(g->x, "x");
    ggml_set_name(g->y, "y");
    ggml_set_input(g->x);
    ggml_set_input(g->y);
    struct ggml_tensor * a = ggml_mul(ctx, g->x, w != NULL ? ggml_add(ctx, g->y, w) : g->y);
    struct ggml_tensor * b = ggml_add(ctx, a, g->x);
    struct ggml_tensor * c = ggml_mul(ctx, b, a);
    struct ggml_tensor * v = ggml_view_1d(ctx, c, N / 2, (N / 4) * sizeof(float));
    g->d = ggml_add(ctx, v, v);
    struct ggml_tensor * e = ggml_scale(ctx, c, 0.5f);
    struct ggml_tensor * f = ggml_add(ctx, e, b);
    g->out = ggml_mul(ctx, f, f);
    // a longer chain, for a graph larger than one planned before
    for (size_t i = 0; i < extra_nodes; i++) {
        g->out = ggml_add(ctx, g->out, g->x);
    }
    ggml_set_output(g->out);
    ggml_set_output(g->d);
    g->gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(g->gf, g->d);
    ggml_build_forward_expand(g->gf, g->out);
    for (int i = 0; i < ggml_graph_n_nodes(g->gf) && i < 64; i++) {
        memcpy(g->srcs[i], ggml_graph_node(g->gf, i)->src, sizeof(g->srcs[i]));
    }
}

static bool graph_unchanged(const struct graph * g) {
    for (int i = 0; i < ggml_graph_n_nodes(g->gf) && i < 64; i++) {
        if (memcmp(g->srcs[i], ggml_graph_node(g->gf, i)->src, sizeof(g->srcs[i])) != 0) {
            return false;
        }
    }
    return true;
}

static double in_x(int i) { return 0.125 * (double)(i % 13) - 0.75; }
static double in_y(int i) { return 1.0 + 0.0625 * (double)(i % 7); }

static void graph_set_inputs(const struct graph * g) {
    float xv[N], yv[N];
    for (int i = 0; i < N; i++) {
        xv[i] = (float) in_x(i);
        yv[i] = (float) in_y(i);
    }
    ggml_backend_tensor_set(g->x, xv, 0, sizeof(xv));
    ggml_backend_tensor_set(g->y, yv, 0, sizeof(yv));
}

// the outputs against the reference; false (with a message) when they differ
static bool graph_check_outputs(const struct graph * g, size_t extra_nodes) {
    float out[N], d[N / 2];
    ggml_backend_tensor_get(g->out, out, 0, sizeof(out));
    ggml_backend_tensor_get(g->d, d, 0, sizeof(d));
    double c[N];
    bool ok = true;
    for (int i = 0; i < N; i++) {
        const double x = (double)(float) in_x(i), y = (double)(float) in_y(i);
        const double a = x * y, b = a + x;
        c[i] = b * a;
        const double f = 0.5 * c[i] + b;
        const double want = f * f + (double) extra_nodes * x;
        if (fabs(out[i] - want) > 1e-5 * (1.0 + fabs(want))) {
            fprintf(stderr, "out[%d] = %.9g, expected %.9g\n", i, (double) out[i], want);
            ok = false;
        }
    }
    for (int i = 0; i < N / 2; i++) {
        const double want = 2.0 * c[N / 4 + i];
        if (fabs(d[i] - want) > 1e-5 * (1.0 + fabs(want))) {
            fprintf(stderr, "d[%d] = %.9g, expected %.9g\n", i, (double) d[i], want);
            ok = false;
        }
    }
    return ok;
}

static void graph_free(struct graph * g) {
    ggml_free(g->ctx);
}

//
// the failure sweep
//

struct sweep {
    const char * what;
    int n_runs;       // runs with an injected failure
    int n_refused;    // of those, the call returned false
};

// Arm failure k around one call; true when the k-th allocation happened
// (the run counts), *ok_out receives the call's result.
#define RUN_ARMED(k, call, ok_out, fired_out) do { \
        g_log_errors = 0; \
        g_log_last[0] = '\0'; \
        ggml_impl_test_fail_alloc(k); \
        (ok_out) = (call); \
        (fired_out) = ggml_impl_test_alloc_count() >= (k); \
        ggml_impl_test_fail_alloc(0); \
    } while (0)

static void sweep_done(const struct sweep * s) {
    printf("%s: %d allocations failed in turn, %d of them refused the call\n", s->what, s->n_runs, s->n_refused);
    CHECK_MSG(s->n_runs >= 3, "%s: only %d allocations", s->what, s->n_runs);
    CHECK_MSG(s->n_refused >= 1, "%s: no failure was ever reported", s->what);
}

// a run that fired: the call failed with a log line, or it fell back and succeeded
static void check_fired_run(struct sweep * s, int k, bool ok, const struct graph * g) {
    s->n_runs++;
    if (!ok) {
        s->n_refused++;
        CHECK_MSG(g_log_errors >= 1, "%s: allocation %d failed without a log line", s->what, k);
    }
    CHECK_MSG(graph_unchanged(g), "%s: allocation %d: the graph's sources were left redirected", s->what, k);
}

//
// graph allocator
//

struct backend_env {
    ggml_backend_reg_t reg;
    ggml_backend_t     backend;
    ggml_backend_buffer_type_t buft;
};

// host memory, with buffers of at most 512 bytes: the plan needs several chunks
static void backend_env_init(struct backend_env * e) {
    const struct test_backend_config config = { .name = "OomHost", .host_memory = true, .max_buffer_size = 512 };
    e->reg     = test_backend_reg_new(&config);
    e->backend = ggml_backend_dev_init(test_backend_device(e->reg), NULL);
    e->buft    = ggml_backend_get_default_buffer_type(e->backend);
}

static void backend_env_free(struct backend_env * e) {
    ggml_backend_free(e->backend);
    test_backend_reg_free(e->reg);
}

static bool compute_and_check(ggml_backend_t backend, const struct graph * g, size_t extra_nodes) {
    graph_set_inputs(g);
    return ggml_backend_graph_compute(backend, g->gf) == GGML_STATUS_SUCCESS && graph_check_outputs(g, extra_nodes);
}

enum galloc_call { GALLOC_RESERVE, GALLOC_RESERVE_N, GALLOC_ALLOC_GRAPH, GALLOC_RESERVE_N_SIZE };

static bool galloc_call(ggml_gallocr_t galloc, enum galloc_call call, struct ggml_cgraph * gf) {
    switch (call) {
        case GALLOC_RESERVE:     return ggml_gallocr_reserve(galloc, gf);
        case GALLOC_RESERVE_N:   return ggml_gallocr_reserve_n(galloc, gf, NULL, NULL);
        case GALLOC_ALLOC_GRAPH: return ggml_gallocr_alloc_graph(galloc, gf);
        case GALLOC_RESERVE_N_SIZE: {
            size_t size = 0;
            ggml_gallocr_reserve_n_size(galloc, gf, NULL, NULL, &size);
            return size > 0;
        }
    }
    return false;
}

static void test_gallocr(enum galloc_call call, const char * what, bool planned_before) {
    struct backend_env e;
    backend_env_init(&e);
    struct sweep s = { .what = what, .n_runs = 0, .n_refused = 0 };
    const size_t extra = planned_before ? 12 : 0;
    for (int k = 1; ; k++) {
        struct graph small, g;
        graph_build(&small, 0, NULL);
        graph_build(&g, extra, NULL);
        ggml_gallocr_t galloc = ggml_gallocr_new(e.buft);
        CHECK(galloc != NULL);
        if (planned_before) {
            // a smaller graph planned and allocated first: the failure comes while growing
            CHECK(ggml_gallocr_alloc_graph(galloc, small.gf));
        }

        bool ok, fired;
        RUN_ARMED(k, galloc_call(galloc, call, g.gf), ok, fired);
        if (!fired) {
            CHECK_MSG(ok, "%s: failed with no failure injected", what);
            ggml_gallocr_free(galloc);
            graph_free(&small);
            graph_free(&g);
            break;
        }
        check_fired_run(&s, k, ok, &g);

        // memory is back: the same allocator allocates and the numbers are right
        CHECK_MSG(ggml_gallocr_alloc_graph(galloc, g.gf), "%s: unusable after allocation %d failed", what, k);
        CHECK_MSG(compute_and_check(e.backend, &g, extra), "%s: wrong results after allocation %d failed", what, k);
        if (planned_before) {
            // and the graph planned before still fits it too
            CHECK(ggml_gallocr_alloc_graph(galloc, small.gf));
            CHECK(compute_and_check(e.backend, &small, 0));
        }
        ggml_gallocr_free(galloc);
        graph_free(&small);
        graph_free(&g);
    }
    sweep_done(&s);
    backend_env_free(&e);
}

//
// scheduler: a device-memory backend with the weights, and the CPU-typed one
//
//   w weights [N] in GPU memory; x, y inputs -> CPUT. add(y, w) goes to the
//   GPU (1.wgt), expansion takes the rest there except SCALE, which only
//   CPUT has: three splits, inputs copied both ways, and with parallel = true
//   4 copies of each
//

static const enum ggml_op k_gpu_ops[] = {
    GGML_OP_NONE, GGML_OP_VIEW, GGML_OP_RESHAPE, GGML_OP_PERMUTE, GGML_OP_TRANSPOSE,
    GGML_OP_ADD, GGML_OP_MUL, GGML_OP_CPY, GGML_OP_DUP, GGML_OP_CONT,
};

struct sched_env {
    ggml_backend_reg_t reg_gpu, reg_cpu;
    ggml_backend_t gpu, cpu;
};

static void sched_env_init(struct sched_env * e) {
    const struct test_backend_config gpu = {
        .name = "GPU", .type = GGML_BACKEND_DEVICE_TYPE_GPU, .host_memory = false, .events = true,
        .ops = k_gpu_ops, .n_ops = sizeof(k_gpu_ops) / sizeof(k_gpu_ops[0]),
    };
    const struct test_backend_config cpu = {
        .name = "CPUT", .type = GGML_BACKEND_DEVICE_TYPE_CPU, .host_memory = true, .events = true,
    };
    e->reg_gpu = test_backend_reg_new(&gpu);
    e->reg_cpu = test_backend_reg_new(&cpu);
    e->gpu = ggml_backend_dev_init(test_backend_device(e->reg_gpu), NULL);
    e->cpu = ggml_backend_dev_init(test_backend_device(e->reg_cpu), NULL);
}

static void sched_env_free(struct sched_env * e) {
    ggml_backend_free(e->gpu);
    ggml_backend_free(e->cpu);
    test_backend_reg_free(e->reg_gpu);
    test_backend_reg_free(e->reg_cpu);
}

enum sched_call { SCHED_ALLOC_GRAPH, SCHED_GRAPH_COMPUTE, SCHED_RESERVE, SCHED_RESERVE_SIZE };

static bool sched_call(ggml_backend_sched_t sched, enum sched_call call, struct graph * g) {
    switch (call) {
        case SCHED_ALLOC_GRAPH:   return ggml_backend_sched_alloc_graph(sched, g->gf);
        case SCHED_GRAPH_COMPUTE: return ggml_backend_sched_graph_compute(sched, g->gf) == GGML_STATUS_SUCCESS;
        case SCHED_RESERVE:       return ggml_backend_sched_reserve(sched, g->gf);
        case SCHED_RESERVE_SIZE: {
            size_t sizes[2] = { 0, 0 };
            ggml_backend_sched_reserve_size(sched, g->gf, sizes);
            return sizes[0] > 0 && sizes[1] > 0;
        }
    }
    return false;
}

static void test_sched(enum sched_call call, const char * what, bool parallel) {
    struct sched_env e;
    sched_env_init(&e);
    struct sweep s = { .what = what, .n_runs = 0, .n_refused = 0 };

    for (int k = 1; ; k++) {
        // w (zeros) in GPU memory draws add(y, w) to the GPU, and expansion the
        // rest but SCALE: GPU[y + w .. d] CPUT[e] GPU[f, out]
        struct ggml_init_params wp = { 2 * ggml_tensor_overhead(), NULL, true };
        struct ggml_context * ctx_w = ggml_init(wp);
        struct ggml_tensor * w = ggml_new_tensor_1d(ctx_w, GGML_TYPE_F32, N);
        ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors(ctx_w, e.gpu);
        ggml_backend_buffer_set_usage(buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
        const float zeros[N] = { 0 };
        ggml_backend_tensor_set(w, zeros, 0, sizeof(zeros));
        struct graph g;
        graph_build(&g, 0, w);

        ggml_backend_t backends[2] = { e.gpu, e.cpu };
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 64, parallel, true);
        CHECK(sched != NULL);

        bool ok, fired;
        RUN_ARMED(k, sched_call(sched, call, &g), ok, fired);
        const bool done = !fired;
        if (done) {
            CHECK_MSG(ok, "%s: failed with no failure injected", what);
        } else {
            s.n_runs++;
            if (!ok) {
                s.n_refused++;
                CHECK_MSG(g_log_errors >= 1, "%s: allocation %d failed without a log line", what, k);
                // a failed call leaves the user's graph as it was given
                CHECK_MSG(graph_unchanged(&g), "%s: allocation %d: the graph's sources were left redirected", what, k);
            }
        }

        // memory is back: the same scheduler splits, allocates and computes right
        ggml_backend_sched_reset(sched);
        CHECK_MSG(ggml_backend_sched_alloc_graph(sched, g.gf), "%s: unusable after allocation %d failed", what, k);
        CHECK(ggml_backend_sched_get_n_splits(sched) >= 3);
        graph_set_inputs(&g);
        CHECK(ggml_backend_sched_graph_compute(sched, g.gf) == GGML_STATUS_SUCCESS);
        CHECK_MSG(graph_check_outputs(&g, 0), "%s: wrong results after allocation %d failed", what, k);

        ggml_backend_sched_free(sched);
        ggml_backend_buffer_free(buf_w);
        ggml_free(ctx_w);
        graph_free(&g);
        if (done) {
            break;
        }
    }
    sweep_done(&s);
    sched_env_free(&e);
}

//
// the hook itself: counted per thread, and off after one failure
// (ggml_init makes two counted allocations: the context and its memory)
//

static void * init_on_other_thread(void * arg) {
    (void) arg;
    struct ggml_init_params p = { 1024, NULL, false };
    struct ggml_context * ctx = ggml_init(p);
    const bool ok = ctx != NULL && ggml_impl_test_alloc_count() == 0;
    ggml_free(ctx);
    return ok ? arg : NULL;
}

static void test_hook(void) {
    struct ggml_init_params p = { 1024, NULL, false };
    ggml_impl_test_fail_alloc(2);
    struct ggml_context * c1 = ggml_init(p);
    CHECK(c1 == NULL);
    CHECK_EQ_INT(ggml_impl_test_alloc_count(), 2);
    CHECK(g_log_errors >= 1);
    struct ggml_context * c2 = ggml_init(p); // the one failure is spent
    CHECK(c2 != NULL);
    CHECK_EQ_INT(ggml_impl_test_alloc_count(), 4);

    // armed here, another thread is not affected
    ggml_impl_test_fail_alloc(1);
    pthread_t thread;
    int token = 0;
    void * result = NULL;
    CHECK(pthread_create(&thread, NULL, init_on_other_thread, &token) == 0);
    pthread_join(thread, &result);
    CHECK(result == &token);
    CHECK_EQ_INT(ggml_impl_test_alloc_count(), 0);

    ggml_impl_test_fail_alloc(0);
    struct ggml_context * c3 = ggml_init(p);
    CHECK(c3 != NULL);
    CHECK_EQ_INT(ggml_impl_test_alloc_count(), 0); // not counted while off
    ggml_free(c2);
    ggml_free(c3);
}

int main(void) {
    ggml_log_set(capture_log, NULL);
    test_hook();
    test_gallocr(GALLOC_RESERVE,        "ggml_gallocr_reserve", false);
    test_gallocr(GALLOC_RESERVE_N,      "ggml_gallocr_reserve_n", false);
    test_gallocr(GALLOC_ALLOC_GRAPH,    "ggml_gallocr_alloc_graph", false);
    test_gallocr(GALLOC_RESERVE_N_SIZE, "ggml_gallocr_reserve_n_size", false);
    test_gallocr(GALLOC_ALLOC_GRAPH,    "ggml_gallocr_alloc_graph (growing)", true);
    test_sched(SCHED_ALLOC_GRAPH,   "ggml_backend_sched_alloc_graph", false);
    test_sched(SCHED_ALLOC_GRAPH,   "ggml_backend_sched_alloc_graph (parallel)", true);
    test_sched(SCHED_GRAPH_COMPUTE, "ggml_backend_sched_graph_compute", false);
    test_sched(SCHED_RESERVE,       "ggml_backend_sched_reserve", false);
    test_sched(SCHED_RESERVE_SIZE,  "ggml_backend_sched_reserve_size", true);
    ggml_log_set(NULL, NULL);
    return TEST_RESULT();
}
