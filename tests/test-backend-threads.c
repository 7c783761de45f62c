// test-backend-threads: one backend object used from several threads at once
// (issue 10, defect 10: wrong results in 8-73 of 200 runs). Each thread has
// its own context, buffer and graph; they share the backend. The wrappers of
// ggml-backend.c hold a per-backend lock around each stream call, so every
// graph must come out exactly as computed alone:
//
//  - the CPU backend: a matrix product with F16 weights (src1 is converted
//    in the backend's shared scratch memory) and a chain of additions (the
//    backend's thread pool), on small integers so that every value is exact
//    and the expected result is computed here in 64-bit integers;
//  - a backend with per-object state, written here: its ADD stages src0 in
//    the backend's scratch, yields, then adds src1, so that interleaved
//    graphs would mix each other's data;
//  - two threads copying in opposite directions between two such backends
//    with ggml_backend_tensor_copy_async (both streams locked: in an order
//    that cannot deadlock);
//  - one thread pool lent to two CPU backends used by two threads.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "testing.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { N_THREADS = 4, N_ITER = 60, K = 96, M = 40, N = 5, N_ADD = 12 };

struct worker {
    ggml_backend_t backend;
    int id;
    int n_wrong; // runs with a wrong value
    int n_failed;
};

//
// the CPU backend: y = (W x) + b + b + ... (N_ADD times), exact in F32
//

static int small_int(uint64_t * s) {
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (int)((*s >> 33) % 9) - 4;
}

static void * cpu_worker(void * arg) {
    struct worker * w = (struct worker *) arg;
    struct ggml_init_params params = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * W = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, K, M);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, N);
    struct ggml_tensor * y = ggml_mul_mat(ctx, W, x);
    for (int i = 0; i < N_ADD; i++) {
        y = ggml_add(ctx, y, b);
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, w->backend);

    static_assert(K * M < 4096 && K * N < 4096 && M * N < 4096, "buffers below");
    int wi[K * M], xi[K * N], bi[M * N];
    ggml_fp16_t wh[K * M];
    float xf[K * N], bf[M * N], yf[M * N];
    uint64_t seed = 1000u + (uint64_t) w->id;
    for (int it = 0; it < N_ITER; it++) {
        for (int i = 0; i < K * M; i++) { wi[i] = small_int(&seed); wh[i] = ggml_fp32_to_fp16((float) wi[i]); }
        for (int i = 0; i < K * N; i++) { xi[i] = small_int(&seed); xf[i] = (float) xi[i]; }
        for (int i = 0; i < M * N; i++) { bi[i] = small_int(&seed) + 10 * w->id; bf[i] = (float) bi[i]; }
        ggml_backend_tensor_set(W, wh, 0, sizeof(wh));
        ggml_backend_tensor_set(x, xf, 0, sizeof(xf));
        ggml_backend_tensor_set(b, bf, 0, sizeof(bf));
        if (ggml_backend_graph_compute(w->backend, gf) != GGML_STATUS_SUCCESS) {
            w->n_failed++;
            continue;
        }
        ggml_backend_tensor_get(y, yf, 0, sizeof(yf));
        bool ok = true;
        for (int n = 0; n < N; n++) {
            for (int m = 0; m < M; m++) {
                int64_t want = (int64_t) N_ADD * bi[n*M + m];
                for (int k = 0; k < K; k++) {
                    want += (int64_t) wi[m*K + k] * xi[n*K + k];
                }
                ok &= yf[n*M + m] == (float) want;
            }
        }
        w->n_wrong += !ok;
    }
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return NULL;
}

static void run_workers(ggml_backend_t backends[N_THREADS], void * (*fn)(void *), const char * what) {
    pthread_t threads[N_THREADS];
    struct worker workers[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        workers[t] = (struct worker) { .backend = backends[t], .id = t };
        CHECK(pthread_create(&threads[t], NULL, fn, &workers[t]) == 0);
    }
    for (int t = 0; t < N_THREADS; t++) {
        pthread_join(threads[t], NULL);
        CHECK_MSG(workers[t].n_wrong == 0 && workers[t].n_failed == 0, "%s: thread %d: %d of %d runs wrong, %d failed",
                  what, t, workers[t].n_wrong, N_ITER, workers[t].n_failed);
    }
}

static void test_shared_cpu_backend(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 2);
    ggml_backend_t same[N_THREADS] = { cpu, cpu, cpu, cpu };
    run_workers(same, cpu_worker, "one CPU backend, 4 threads");
    ggml_backend_free(cpu);

    // two CPU backends lent one thread pool, two threads each
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(2);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);
    ggml_backend_t a = ggml_backend_cpu_init();
    ggml_backend_t b = ggml_backend_cpu_init();
    ggml_backend_cpu_set_threadpool(a, tp);
    ggml_backend_cpu_set_threadpool(b, tp);
    ggml_backend_t lent[N_THREADS] = { a, b, a, b };
    run_workers(lent, cpu_worker, "two CPU backends, one lent pool");
    ggml_backend_free(a);
    ggml_backend_free(b);
    ggml_threadpool_free(tp);
}

//
// a backend with state in the object: ADD of F32 tensors through a scratch row
//

struct staging_ctx {
    float * scratch;
    size_t  size; // floats
    atomic_int n_copies;
};

static const char * staging_name(ggml_backend_t backend) {
    (void) backend;
    return "staging";
}

static void staging_free(ggml_backend_t backend) {
    struct staging_ctx * ctx = (struct staging_ctx *) backend->context;
    free(ctx->scratch);
    free(ctx);
    free(backend);
}

static enum ggml_status staging_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct staging_ctx * ctx = (struct staging_ctx *) backend->context;
    for (int i = 0; i < ggml_graph_n_nodes(cgraph); i++) {
        struct ggml_tensor * node = ggml_graph_node(cgraph, i);
        if (node->op != GGML_OP_ADD || !ggml_are_same_shape(node->src[0], node->src[1]) ||
            (size_t) ggml_nelements(node) > ctx->size) {
            return GGML_STATUS_FAILED;
        }
        const int64_t n = ggml_nelements(node);
        memcpy(ctx->scratch, node->src[0]->data, (size_t) n * sizeof(float));
        sched_yield(); // another graph on this object would overwrite the scratch here
        const float * s1 = (const float *) node->src[1]->data;
        float * d = (float *) node->data;
        for (int64_t j = 0; j < n; j++) {
            d[j] = ctx->scratch[j] + s1[j];
        }
    }
    return GGML_STATUS_SUCCESS;
}

// copies between host buffers, after a look at the source stream
static bool staging_cpy_tensor_async(ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src,
                                     struct ggml_tensor * dst) {
    ggml_backend_synchronize(backend_src); // the wrapper's lock of src, already held: recursive
    memcpy(dst->data, src->data, ggml_nbytes(src));
    atomic_fetch_add(&((struct staging_ctx *) backend_dst->context)->n_copies, 1);
    return true;
}

static ggml_backend_t staging_new(void) {
    static ggml_guid guid = { 's', 't', 'a', 'g', 'i', 'n', 'g', '-', 'b', 'a', 'c', 'k', 'e', 'n', 'd', 0 };
    struct staging_ctx * ctx = (struct staging_ctx *) calloc(1, sizeof(*ctx));
    ggml_backend_t backend = (ggml_backend_t) calloc(1, sizeof(*backend));
    ctx->size = 4096;
    ctx->scratch = (float *) calloc(ctx->size, sizeof(float));
    *backend = (struct ggml_backend) {
        .guid  = &guid,
        .iface = {
            .get_name         = staging_name,
            .free             = staging_free,
            .graph_compute    = staging_graph_compute,
            .cpy_tensor_async = staging_cpy_tensor_async,
        },
        .device  = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0), // host memory
        .context = ctx,
    };
    return backend;
}

// y = ((a + b) + b) ... on 1000 values, each thread its own pattern
static void * staging_worker(void * arg) {
    struct worker * w = (struct worker *) arg;
    enum { LEN = 1000, CHAIN = 6 };
    struct ggml_init_params params = { 32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, LEN);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, LEN);
    struct ggml_tensor * y = a;
    for (int i = 0; i < CHAIN; i++) {
        y = ggml_add(ctx, y, b);
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    float av[LEN], bv[LEN], yv[LEN];
    for (int it = 0; it < N_ITER; it++) {
        for (int j = 0; j < LEN; j++) {
            av[j] = (float)(j + 1000 * w->id + it);
            bv[j] = (float)(w->id + 1);
        }
        ggml_backend_tensor_set(a, av, 0, sizeof(av));
        ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
        if (ggml_backend_graph_compute(w->backend, gf) != GGML_STATUS_SUCCESS) {
            w->n_failed++;
            continue;
        }
        ggml_backend_tensor_get(y, yv, 0, sizeof(yv));
        bool ok = true;
        for (int j = 0; j < LEN; j++) {
            ok &= yv[j] == av[j] + (float) CHAIN * bv[j];
        }
        w->n_wrong += !ok;
    }
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return NULL;
}

struct copier {
    ggml_backend_t from, to;
    struct ggml_tensor * src, * dst;
    int n;
};

static void * copy_worker(void * arg) {
    struct copier * c = (struct copier *) arg;
    for (int i = 0; i < c->n; i++) {
        ggml_backend_tensor_copy_async(c->from, c->to, c->src, c->dst);
    }
    return NULL;
}

static void test_stateful_backend(void) {
    ggml_backend_t s = staging_new();
    ggml_backend_t same[N_THREADS] = { s, s, s, s };
    run_workers(same, staging_worker, "one stateful backend, 4 threads");

    // opposite copies between two backends: each call locks both streams
    ggml_backend_t t = staging_new();
    struct ggml_init_params params = { 8 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * x[4];
    for (int i = 0; i < 4; i++) {
        x[i] = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    }
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    ggml_backend_buffer_clear(buf, 0);
    struct copier c[2] = { { s, t, x[0], x[1], 2000 }, { t, s, x[2], x[3], 2000 } };
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) {
        CHECK(pthread_create(&threads[i], NULL, copy_worker, &c[i]) == 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(threads[i], NULL);
    }
    CHECK_EQ_INT(atomic_load(&((struct staging_ctx *) s->context)->n_copies), 2000);
    CHECK_EQ_INT(atomic_load(&((struct staging_ctx *) t->context)->n_copies), 2000);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(t);
    ggml_backend_free(s);
}

int main(void) {
    test_shared_cpu_backend();
    test_stateful_backend();
    return TEST_RESULT();
}
