// bench-matmul: MUL_MAT on the CPU backend, per weight type.
//
// For generation (one activation column: k = 4096, n = 4096 and 11008, and
// n = 32000, a vocabulary projection whose weights of 4 bits and more are
// larger than the last-level caches of most machines) it prints GFLOPS, the
// effective bandwidth of the weights (bytes of src0 per second) and that as
// a percentage of the read bandwidth measured here; for prompts (m = 64, 128, 512 columns, k = n = 4096) GFLOPS. Beside
// them, the machine's limits measured here: the peak of a tight FMA loop and
// the read bandwidth of a large buffer, both with the same number of threads.
//
// Each figure is the best of repeated runs by the wall clock. With one thread
// (-t 1) it is given a second time by the CPU time of the process, which on
// a machine shared with other work leaves out the time the thread waited for
// a core (with more threads the CPU time of the others is not reliable: the
// kernel accounts it late).
//
// Only the public API is used, so the same file builds against upstream ggml
// for comparisons.
//
//   bench-matmul [-t threads] [-r seconds per shape] [-T type] [-g: generation shapes only]
//                [-k k: the k of the generation shapes (default 4096; a multiple of 256)]
//                [--list-kernels: print the CPU backend's kernel per weight type and exit]
//                [--bandwidth: measure the read bandwidth only, print it and exit
//                 (scripts/llama-bench-bandwidth.py sets generation speeds against it)]
//                [--read-passes n: the read bandwidth as a run of n passes of 64 MiB per
//                 thread in the fastest pattern: their median and quartiles, and exit
//                 (what llama-bench-bandwidth.py --paired sets each run against: a
//                 best pass is a high outlier of a shared host, a median is not)]
//                [--chain n L: L products of [k, n] weights, one node each (a model's
//                 layers), against one product of the same bytes (see bench_chain)]
//                [--in-cache: one-column products whose weights (about 256 KiB, k = 2048)
//                 stay in the L2 cache: the kernels' own speed, in ns per 32 weights
//                 of a row and GB/s, best of repeated runs (-t 1 for one core: on a
//                 shared host the best of many runs is the figure that repeats)]
//                [--cache-kib KiB: the weights' size for --in-cache (default 256; a
//                 few hundred KiB more leave the products' fixed cost smaller
//                 beside the rows, as long as they stay in the L2 cache)]
//                [--repack: the weights in the CPU device's extra buffer type
//                 CPU_REPACK, in the layout of its kernels where it has one for
//                 the type (BF16, Q4_0), as llama.cpp places a model's matrices]

#define _POSIX_C_SOURCE 200809L // clock_gettime

#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-backend.h"
#include "ggml-alloc.h"
#include "read-bandwidth.h"

#include <pthread.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

#if defined(__AVX512F__) || defined(__AVX2__)
#include <immintrin.h>
#endif

//
// machine limits
//

struct limit_job {
    int64_t  iters;
    double   result;
};

// 16 independent FMA chains; returns flops done
static void * fma_loop(void * arg) {
    struct limit_job * j = (struct limit_job *) arg;
#if defined(__AVX512F__)
    __m512 a[16];
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
    for (int i = 0; i < 16; i++) {
        a[i] = _mm512_set1_ps((float) i);
    }
    for (int64_t it = 0; it < j->iters; it++) {
        for (int i = 0; i < 16; i++) {
            a[i] = _mm512_fmadd_ps(a[i], m, c);
        }
    }
    float s = 0.0f;
    for (int i = 0; i < 16; i++) {
        s += _mm512_reduce_add_ps(a[i]);
    }
    j->result = (double) s;
    return (void *)(intptr_t)(16 * 16 * 2);
#elif defined(__AVX2__) && defined(__FMA__)
    __m256 a[12];
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
    for (int i = 0; i < 12; i++) {
        a[i] = _mm256_set1_ps((float) i);
    }
    for (int64_t it = 0; it < j->iters; it++) {
        for (int i = 0; i < 12; i++) {
            a[i] = _mm256_fmadd_ps(a[i], m, c);
        }
    }
    float s = 0.0f;
    for (int i = 0; i < 12; i++) {
        float t[8];
        _mm256_storeu_ps(t, a[i]);
        for (int l = 0; l < 8; l++) {
            s += t[l];
        }
    }
    j->result = (double) s;
    return (void *)(intptr_t)(12 * 8 * 2);
#else
    float a[16];
    for (int i = 0; i < 16; i++) {
        a[i] = (float) i;
    }
    for (int64_t it = 0; it < j->iters; it++) {
        for (int i = 0; i < 16; i++) {
            a[i] = a[i] * 0.999999f + 1e-7f;
        }
    }
    float s = 0.0f;
    for (int i = 0; i < 16; i++) {
        s += a[i];
    }
    j->result = (double) s;
    return (void *)(intptr_t)(16 * 2);
#endif
}

#if defined(__AVX512BF16__)
// 16 independent chains of BF16 dot products (vdpbf16ps: 32 products and
// their pairwise sums into 16 floats, 64 flops); returns flops done
static void * bf16_dot_loop(void * arg) {
    struct limit_job * j = (struct limit_job *) arg;
    __m512 a[16];
    const __m512bh m = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5f), _mm512_set1_ps(0.25f));
    const __m512bh c = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(2e-3f));
    for (int i = 0; i < 16; i++) {
        a[i] = _mm512_set1_ps((float) i);
    }
    for (int64_t it = 0; it < j->iters; it++) {
        for (int i = 0; i < 16; i++) {
            a[i] = _mm512_dpbf16_ps(a[i], m, c);
        }
    }
    float s = 0.0f;
    for (int i = 0; i < 16; i++) {
        s += _mm512_reduce_add_ps(a[i]);
    }
    j->result = (double) s;
    return (void *)(intptr_t)(16 * 64);
}
#endif

// runs fn on n threads; returns seconds
static double run_threads(int n, void * (*fn)(void *), struct limit_job * jobs, void ** rets) {
    pthread_t * th = (pthread_t *) malloc((size_t) n * sizeof(pthread_t));
    const int64_t t0 = ggml_time_us();
    for (int i = 0; i < n; i++) {
        pthread_create(&th[i], NULL, fn, &jobs[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], rets ? &rets[i] : NULL);
    }
    const int64_t t1 = ggml_time_us();
    free(th);
    return (double)(t1 - t0) * 1e-6;
}

// best GFLOPS of loop on n threads by the wall clock, and (*by_cpu) by the
// CPU time of the process per thread (see the top of the file)
static double measure_peak_gflops_of(int n_threads, void * (*loop)(void *), double * by_cpu) {
    struct limit_job * jobs = (struct limit_job *) calloc((size_t) n_threads, sizeof(*jobs));
    void ** rets = (void **) calloc((size_t) n_threads, sizeof(void *));
    double best = 0.0;
    *by_cpu = 0.0;
    for (int rep = 0; rep < 5; rep++) {
        for (int i = 0; i < n_threads; i++) {
            jobs[i].iters = 20 * 1000 * 1000;
        }
        const double c0 = cpu_seconds();
        const double t = run_threads(n_threads, loop, jobs, rets);
        const double c = (cpu_seconds() - c0) / n_threads;
        const double flops = (double) n_threads * (double) jobs[0].iters * (double)(intptr_t) rets[0];
        best = flops / t * 1e-9 > best ? flops / t * 1e-9 : best;
        *by_cpu = flops / n_threads / c * 1e-9 > *by_cpu ? flops / n_threads / c * 1e-9 : *by_cpu;
    }
    free(jobs);
    free(rets);
    return best;
}

static double measure_peak_gflops(int n_threads, double * by_cpu) {
    return measure_peak_gflops_of(n_threads, fma_loop, by_cpu);
}

// the peak of the BF16 dot-product instruction, 0 where the build has none
static double measure_bf16_peak_gflops(int n_threads, double * by_cpu) {
#if defined(__AVX512BF16__)
    return measure_peak_gflops_of(n_threads, bf16_dot_loop, by_cpu);
#else
    (void) n_threads;
    *by_cpu = 0.0;
    return 0.0;
#endif
}

// the read bandwidth (tools/common/read-bandwidth.h: the patterns of the
// matrix-vector kernels, best pass)
static double measure_read_gbs(int n_threads) {
    char err[256];
    const double gbs = tools_read_bandwidth(n_threads, err, sizeof(err));
    if (gbs <= 0.0) {
        fprintf(stderr, "error: %s\n", err);
        exit(1);
    }
    return gbs;
}

static int cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y ? 1 : 0;
}

// --read-passes: one pass of each pattern picks the fastest, then n passes
// of it; prints their median and quartiles
static int print_read_passes(int n_threads, int n) {
    char err[256] = "";
    struct tools_read_probe * probe = tools_read_probe_init(n_threads, (size_t) 64 << 20, err, sizeof(err));
    double * gbs = probe != NULL ? (double *) calloc((size_t) n, sizeof(double)) : NULL;
    if (gbs == NULL) {
        fprintf(stderr, "error: --read-passes: %s\n", probe == NULL ? err : "out of memory");
        tools_read_probe_free(probe);
        return 1;
    }
    int pattern = 0;
    double best = 0.0;
    for (int i = 0; i < tools_read_n_patterns(); i++) {
        const double g = tools_read_probe_pass(probe, i, err, sizeof(err));
        if (g <= 0.0) {
            fprintf(stderr, "error: --read-passes: %s\n", err);
            free(gbs);
            tools_read_probe_free(probe);
            return 1;
        }
        if (g > best) {
            best    = g;
            pattern = i;
        }
    }
    for (int i = 0; i < n; i++) {
        gbs[i] = tools_read_probe_pass(probe, pattern, err, sizeof(err));
        if (gbs[i] <= 0.0) {
            fprintf(stderr, "error: --read-passes: %s\n", err);
            free(gbs);
            tools_read_probe_free(probe);
            return 1;
        }
    }
    qsort(gbs, (size_t) n, sizeof(double), cmp_double);
    int streams = 0;
    size_t ahead = 0;
    tools_read_pattern(pattern, &streams, &ahead);
    printf("threads %d: read bandwidth %.2f GB/s, the median of %d passes of %zu MiB (quartiles %.2f-%.2f; %d stream%s per thread, prefetch %zu B ahead)\n",
           n_threads, gbs[n/2], n, tools_read_probe_bytes(probe) >> 20, gbs[n/4], gbs[(3*n)/4], streams, streams == 1 ? "" : "s", ahead);
    free(gbs);
    tools_read_probe_free(probe);
    return 0;
}

//
// matrix products
//

struct bench_ctx {
    struct ggml_threadpool * pool;
    int n_threads;
    double seconds;
    ggml_backend_buffer_type_t repack; // --repack: weights in the CPU's extra buffer type, or NULL
    int inner;                         // computes per timed sample (> 1 for products of a few us, which the us clock would round)
};

struct bench_time {
    double wall;   // best seconds by the wall clock
    double cpu;    // best CPU seconds of the process / threads
};

static bool bench_slow_quant(enum ggml_type type) {
    return type == GGML_TYPE_IQ1_S || type == GGML_TYPE_IQ1_M || type == GGML_TYPE_IQ2_XXS ||
           type == GGML_TYPE_IQ2_XS || type == GGML_TYPE_IQ2_S || type == GGML_TYPE_IQ3_XXS || type == GGML_TYPE_IQ3_S;
}

// random weights in w ([k, n] of its type), and x's values
static void fill_weights(struct ggml_tensor * w, int64_t k, int64_t n, struct ggml_tensor * x) {
    const enum ggml_type type = w->type;
    // weights: random rows converted to the type (quantized by rows of 64).
    // The grid types' quantizers are slow (seconds per million values): their
    // first 64 rows are quantized (with an importance matrix of ones) and
    // copied to the others; the figures do not depend on the values.
    const bool slow_quant = bench_slow_quant(type);
    float * imatrix = NULL;
    if (ggml_quantize_requires_imatrix(type)) {
        imatrix = (float *) malloc((size_t) k * sizeof(float));
        for (int64_t i = 0; i < k; i++) {
            imatrix[i] = 1.0f;
        }
    }
    uint64_t s = 0x9E3779B97F4A7C15ull;
    float * rows = (float *) malloc((size_t)(k * 64) * sizeof(float));
    for (int64_t r0 = 0; r0 < n; r0 += 64) {
        const int64_t nr = n - r0 < 64 ? n - r0 : 64;
        if (slow_quant && r0 > 0) {
            memcpy((char *) w->data + r0 * w->nb[1], w->data, (size_t) nr * w->nb[1]);
            continue;
        }
        for (int64_t i = 0; i < k * nr; i++) {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            rows[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        }
        char * dst = (char *) w->data + r0 * w->nb[1];
        if (type == GGML_TYPE_F32) {
            memcpy(dst, rows, (size_t)(k * nr) * sizeof(float));
        } else if (type == GGML_TYPE_F16) {
            ggml_fp32_to_fp16_row(rows, (ggml_fp16_t *) dst, k * nr);
        } else if (type == GGML_TYPE_BF16) {
            ggml_fp32_to_bf16_row(rows, (ggml_bf16_t *) dst, k * nr);
        } else {
            ggml_quantize_chunk(type, rows, dst, 0, nr, k, imatrix);
        }
    }
    free(rows);
    free(imatrix);
    float * xd = (float *) x->data;
    for (int64_t i = 0; i < ggml_nelements(x); i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        xd[i] = (float)((double)(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
}

// best times of one MUL_MAT of `type` weights [k, n] with m F32 columns
static struct bench_time bench_mul_mat(const struct bench_ctx * bc, enum ggml_type type, int64_t k, int64_t n, int64_t m, size_t * wbytes) {
    const size_t wsize = ggml_row_size(type, k) * (size_t) n;
    const size_t xsize = (size_t)(k * m) * sizeof(float);
    const size_t dsize = (size_t)(n * m) * sizeof(float);
    struct ggml_init_params ip = { wsize + xsize + dsize + 16*ggml_tensor_overhead() + ggml_graph_overhead() + (1u << 20), NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, k, n);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);

    fill_weights(w, k, n, x);

    // --repack: a copy of the weights in the CPU_REPACK buffer type (the
    // layout it gives the type, or the usual one where it has none)
    struct ggml_context * rctx = NULL;
    ggml_backend_buffer_t rbuf = NULL;
    if (bc->repack != NULL) {
        struct ggml_init_params rp = { ggml_tensor_overhead(), NULL, true };
        rctx = ggml_init(rp);
        struct ggml_tensor * wr = ggml_dup_tensor(rctx, w);
        rbuf = ggml_backend_alloc_ctx_tensors_from_buft(rctx, bc->repack);
        if (rbuf != NULL) {
            ggml_backend_tensor_set(wr, w->data, 0, ggml_nbytes(w));
            w = wr;
        }
    }

    struct ggml_tensor * out = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    struct ggml_cplan plan = ggml_graph_plan(gf, bc->n_threads, bc->pool);
    void * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
    plan.work_data = (uint8_t *) work;

    ggml_graph_compute(gf, &plan); // warm up (and fault in the pages)
    struct bench_time best = { 1e30, 1e30 };
    double total = 0.0;
    const int inner = bc->inner > 1 ? bc->inner : 1;
    for (int rep = 0; rep < 1000 && (rep < 3 || total < bc->seconds); rep++) {
        const double  c0 = cpu_seconds();
        const int64_t t0 = ggml_time_us();
        for (int i = 0; i < inner; i++) {
            ggml_graph_compute(gf, &plan);
        }
        const double t = (double)(ggml_time_us() - t0) * 1e-6 / inner;
        const double c = (cpu_seconds() - c0) / bc->n_threads / inner;
        best.wall = t < best.wall ? t : best.wall;
        best.cpu  = c < best.cpu  ? c : best.cpu;
        total += t;
    }
    free(work);
    ggml_free(ctx);
    if (rbuf != NULL) {
        ggml_backend_buffer_free(rbuf);
    }
    if (rctx != NULL) {
        ggml_free(rctx);
    }
    *wbytes = wsize;
    return best;
}

// --chain n L: what a model's many products cost beside one large one. L
// products of [k, n] weights with one column, each its own node (as the
// layers of a model: every one starts its weight streams from cold, and a
// barrier ends it), against one product of the same bytes ([k, L*n], one
// node). The L weights are consecutive row ranges of that one matrix, so
// both read the same memory. The two graphs alternate, 5 runs each; each
// figure is the best and the median by the wall clock.

static void bench_chain(const struct bench_ctx * bc, enum ggml_type type, int64_t k, int64_t n, int64_t L) {
    const size_t wsize = ggml_row_size(type, k) * (size_t) n * (size_t) L;
    struct ggml_init_params ip = { wsize + (size_t)(k + 2 * n * L) * sizeof(float) + (size_t)(4 * L + 16) * ggml_tensor_overhead() +
                                   2 * ggml_graph_overhead_custom((size_t)(2 * L + 16), false) + (1u << 20), NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        fprintf(stderr, "error: cannot allocate %.0f MiB for --chain\n", (double) wsize / 1048576.0);
        exit(1);
    }
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, k, n * L);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 1);
    fill_weights(w, k, n * L, x);

    struct ggml_cgraph * g_one = ggml_new_graph_custom(ctx, (size_t)(2 * L + 16), false);
    ggml_build_forward_expand(g_one, ggml_mul_mat(ctx, w, x));
    struct ggml_cgraph * g_chain = ggml_new_graph_custom(ctx, (size_t)(2 * L + 16), false);
    for (int64_t i = 0; i < L; i++) {
        struct ggml_tensor * wi = ggml_view_2d(ctx, w, k, n, w->nb[1], (size_t)(i * n) * w->nb[1]);
        ggml_build_forward_expand(g_chain, ggml_mul_mat(ctx, wi, x));
    }
    struct ggml_cgraph * graphs[2] = { g_one, g_chain };
    struct ggml_cplan plans[2];
    void * work[2];
    for (int g = 0; g < 2; g++) {
        plans[g] = ggml_graph_plan(graphs[g], bc->n_threads, bc->pool);
        work[g]  = plans[g].work_size > 0 ? malloc(plans[g].work_size) : NULL;
        plans[g].work_data = (uint8_t *) work[g];
        ggml_graph_compute(graphs[g], &plans[g]); // warm up
    }
    enum { RUNS = 5 };
    double t[2][RUNS];
    const double bw0 = measure_read_gbs(bc->n_threads);
    for (int r = 0; r < RUNS; r++) {
        for (int g = 0; g < 2; g++) {
            const int64_t t0 = ggml_time_us();
            ggml_graph_compute(graphs[g], &plans[g]);
            t[g][r] = (double)(ggml_time_us() - t0) * 1e-6;
        }
    }
    const double bw1 = measure_read_gbs(bc->n_threads);
    for (int g = 0; g < 2; g++) {
        qsort(t[g], RUNS, sizeof(double), cmp_double);
        free(work[g]);
    }
    const double gb = (double) wsize * 1e-9;
    printf("%s, k = %lld, n = %lld, %lld products (%.0f MB of weights), %d threads:\n", ggml_type_name(type),
           (long long) k, (long long) n, (long long) L, gb * 1e3, bc->n_threads);
    printf("  one product of %lld rows: %8.3f ms (best) %8.3f ms (median), %6.1f / %6.1f GB/s\n", (long long)(n * L),
           t[0][0] * 1e3, t[0][RUNS / 2] * 1e3, gb / t[0][0], gb / t[0][RUNS / 2]);
    printf("  %lld products of %lld rows: %8.3f ms (best) %8.3f ms (median), %6.1f / %6.1f GB/s\n", (long long) L, (long long) n,
           t[1][0] * 1e3, t[1][RUNS / 2] * 1e3, gb / t[1][0], gb / t[1][RUNS / 2]);
    printf("  each product beside the one: %+.1f us (best) %+.1f us (median); read bandwidth %.1f GB/s before, %.1f after\n",
           (t[1][0] - t[0][0]) / (double) L * 1e6, (t[1][RUNS / 2] - t[0][RUNS / 2]) / (double) L * 1e6, bw0, bw1);
    ggml_free(ctx);
}

static const enum ggml_type k_types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16,
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
    GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4, GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0,
    GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M, GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
    GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0,
};

// --repack: the CPU device's extra buffer type (upstream's name for the
// query), or NULL (host memory) where it has none; says which
static ggml_backend_buffer_type_t repack_buft(void) {
    ggml_backend_buffer_type_t buft = NULL;
    ggml_backend_reg_t reg = ggml_backend_cpu_reg();
    ggml_backend_dev_t cpu = ggml_backend_reg_dev_get(reg, 0);
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    if (sym != NULL) {
        ggml_backend_dev_get_extra_bufts_t fn;
        memcpy(&fn, &sym, sizeof(sym));
        ggml_backend_buffer_type_t * bufts = fn(cpu);
        buft = bufts != NULL ? bufts[0] : NULL;
    }
    printf("--repack: weights in %s\n\n", buft != NULL ? ggml_backend_buft_name(buft) : "host memory (the CPU has no extra buffer type here)");
    return buft;
}

int main(int argc, char ** argv) {
    int n_threads = 2;
    double seconds = 1.0;
    const char * only = NULL;
    bool gen_only = false;
    bool bandwidth_only = false;
    int read_passes = 0;
    bool repack = false;
    bool in_cache = false;
    int64_t in_cache_kib = 256;
    int64_t gen_k = 4096;
    int64_t chain_n = 0, chain_L = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            n_threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else if (strcmp(argv[i], "-T") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (strcmp(argv[i], "-g") == 0) {
            gen_only = true;
        } else if (strcmp(argv[i], "--bandwidth") == 0) {
            bandwidth_only = true;
        } else if (strcmp(argv[i], "--read-passes") == 0 && i + 1 < argc) {
            read_passes = atoi(argv[++i]);
            if (read_passes < 1 || read_passes > 10000) {
                fprintf(stderr, "error: --read-passes takes a count from 1 to 10000\n");
                return 1;
            }
        } else if (strcmp(argv[i], "-k") == 0 && i + 1 < argc) {
            gen_k = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--chain") == 0 && i + 2 < argc) {
            chain_n = atoll(argv[++i]);
            chain_L = atoll(argv[++i]);
        } else if (strcmp(argv[i], "--repack") == 0) {
            repack = true;
        } else if (strcmp(argv[i], "--in-cache") == 0) {
            in_cache = true;
        } else if (strcmp(argv[i], "--cache-kib") == 0 && i + 1 < argc) {
            in_cache_kib = atoll(argv[++i]);
            if (in_cache_kib < 16 || in_cache_kib > 65536) {
                fprintf(stderr, "error: --cache-kib takes KiB from 16 to 65536\n");
                return 1;
            }
        } else if (strcmp(argv[i], "--list-kernels") == 0) {
            // the CPU backend prints its kernel table when it starts with
            // GGML_CPU_KERNELS set (through the public API: upstream prints nothing)
            setenv("GGML_CPU_KERNELS", "1", 1);
            ggml_cpu_init();
            return 0;
        } else {
            fprintf(stderr, "usage: %s [-t threads] [-r seconds per shape] [-T type] [-g] [-k k] [--list-kernels] [--bandwidth] [--read-passes n] [--repack] [--in-cache [--cache-kib KiB]] [--chain n L]\n", argv[0]);
            return 1;
        }
    }
    if (gen_k < 256 || gen_k % 256 != 0 || gen_k > (1 << 20)) {
        fprintf(stderr, "error: -k takes a multiple of 256 from 256 to 1048576\n");
        return 1;
    }
    if (n_threads < 1 || n_threads > 4096) {
        fprintf(stderr, "error: -t takes a thread count from 1 to 4096\n");
        return 1;
    }
    if (chain_n != 0 || chain_L != 0) {
        if (chain_n < 1 || chain_n > (1 << 20) || chain_L < 1 || chain_L > 100000 || repack) {
            fprintf(stderr, "error: --chain takes a row count n of 1 to 1048576 and a product count L of 1 to 100000 (without --repack)\n");
            return 1;
        }
    }
    ggml_time_init();
    if (chain_L > 0) {
        // Q8_0 unless -T names another
        enum ggml_type t = only != NULL ? GGML_TYPE_COUNT : GGML_TYPE_Q8_0;
        for (size_t i = 0; only != NULL && i < sizeof(k_types)/sizeof(k_types[0]); i++) {
            if (strcmp(only, ggml_type_name(k_types[i])) == 0) {
                t = k_types[i];
            }
        }
        if (t == GGML_TYPE_COUNT) {
            fprintf(stderr, "error: -T %s: not a type of this bench\n", only);
            return 1;
        }
        struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
        struct bench_ctx bc = { .pool = ggml_threadpool_new(&tpp), .n_threads = n_threads, .seconds = seconds };
        bench_chain(&bc, t, gen_k, chain_n, chain_L);
        ggml_threadpool_free(bc.pool);
        return 0;
    }
    if (read_passes > 0) {
        return print_read_passes(n_threads, read_passes);
    }
    if (bandwidth_only) {
        printf("threads %d: read bandwidth %.1f GB/s\n", n_threads, measure_read_gbs(n_threads));
        return 0;
    }
    if (in_cache) {
        struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
        struct bench_ctx bc = { .pool = ggml_threadpool_new(&tpp), .n_threads = n_threads, .seconds = seconds, .inner = 20 };
        if (repack) {
            bc.repack = repack_buft();
        }
        const int64_t k = 2048;
        printf("one column, weights [%lld, n] of about %lld KiB (in the L2 cache), %d thread%s, best of %.1f s (20 products a sample):\n",
               (long long) k, (long long) in_cache_kib, n_threads, n_threads == 1 ? "" : "s", seconds);
        printf("%-8s %6s %14s %9s\n", "type", "n", "ns / 32 weights", "GB/s");
        for (size_t t = 0; t < sizeof(k_types)/sizeof(k_types[0]); t++) {
            const enum ggml_type type = k_types[t];
            if (only && strcmp(only, ggml_type_name(type)) != 0) {
                continue;
            }
            // rows for about in_cache_kib KiB, a multiple of 16
            const int64_t n16 = (int64_t)((size_t) in_cache_kib*1024 / ggml_row_size(type, k)) / 16 * 16;
            const int64_t n   = n16 > 16 ? n16 : 16;
            size_t wb;
            const struct bench_time bt = bench_mul_mat(&bc, type, k, n, 1, &wb);
            printf("%-8s %6lld %14.3f %9.1f\n", ggml_type_name(type), (long long) n,
                   bt.wall * 1e9 / ((double) k * (double) n / 32.0), (double) wb / bt.wall * 1e-9);
            fflush(stdout);
        }
        ggml_threadpool_free(bc.pool);
        return 0;
    }

    double peak_cpu, peak_bf16_cpu;
    const double peak = measure_peak_gflops(n_threads, &peak_cpu);
    const double peak_bf16 = measure_bf16_peak_gflops(n_threads, &peak_bf16_cpu);
    const double bw   = measure_read_gbs(n_threads);
    double bw_max = bw; // the highest read bandwidth measured in the run
    const bool show_cpu = n_threads == 1;
    if (show_cpu) {
        printf("threads 1: FMA peak %.1f/%.1f GFLOPS, BF16 dot-product peak %.1f/%.1f GFLOPS%s (wall / CPU time), read bandwidth %.1f GB/s\n\n",
               peak, peak_cpu, peak_bf16, peak_bf16_cpu, peak_bf16 > 0 ? "" : " (not in this build)", bw);
    } else {
        printf("threads %d: FMA peak %.1f GFLOPS, BF16 dot-product peak %.1f GFLOPS%s, read bandwidth %.1f GB/s\n\n",
               n_threads, peak, peak_bf16, peak_bf16 > 0 ? "" : " (not in this build)", bw);
    }

    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
    struct bench_ctx bc = { .pool = ggml_threadpool_new(&tpp), .n_threads = n_threads, .seconds = seconds };
    if (repack) {
        bc.repack = repack_buft();
    }

    printf(show_cpu ? "GFLOPS by the wall clock / by CPU time; gen: and GB/s of weights (by CPU time), %% of the read bandwidth\n"
                    : "GFLOPS by the wall clock; gen: and GB/s of weights, %% of the read bandwidth\n");
    printf("%-6s| %-30s | %-30s | %-30s | %-13s %-13s %-13s\n", "type", "gen n=4096", "gen n=11008", "gen n=32000",
           "pp64", "pp128", "pp512");
    for (size_t t = 0; t < sizeof(k_types)/sizeof(k_types[0]); t++) {
        const enum ggml_type type = k_types[t];
        if (only && strcmp(only, ggml_type_name(type)) != 0) {
            continue;
        }
        printf("%-6s|", ggml_type_name(type));
        const int64_t gen_n[3] = { 4096, 11008, 32000 };
        for (int g = 0; g < 3; g++) {
            size_t wb;
            // the out-of-cache shape: the memory bandwidth of a shared machine
            // drifts, so it is measured again right before and after the cell,
            // and the highest of the three figures is the one compared with
            const bool dram = g == 2;
            double cell_bw = dram ? fmax(bw, measure_read_gbs(n_threads)) : bw;
            const struct bench_time bt = bench_mul_mat(&bc, type, gen_k, gen_n[g], 1, &wb);
            if (dram) {
                cell_bw = fmax(cell_bw, measure_read_gbs(n_threads));
                if (cell_bw > bw_max) {
                    bw_max = cell_bw;
                }
            }
            const double flops = 2.0*(double) gen_k*(double) gen_n[g];
            char cell[64];
            const double gbs = (double) wb/(show_cpu ? bt.cpu : bt.wall)*1e-9;
            if (show_cpu) {
                snprintf(cell, sizeof(cell), "%5.1f/%5.1f %5.1f GB/s %3.0f%%", flops/bt.wall*1e-9, flops/bt.cpu*1e-9, gbs, 100.0*gbs/cell_bw);
            } else {
                snprintf(cell, sizeof(cell), "%5.1f %5.1f GB/s %3.0f%%", flops/bt.wall*1e-9, gbs, 100.0*gbs/cell_bw);
            }
            printf(" %-30s |", cell);
            fflush(stdout);
        }
        const int64_t pp[3] = { 64, 128, 512 };
        double pp512 = 0.0, pp512_cpu = 0.0;
        for (int p = 0; p < (gen_only ? 0 : 3); p++) {
            size_t wb;
            const struct bench_time bt = bench_mul_mat(&bc, type, 4096, 4096, pp[p], &wb);
            const double flops = 2.0*4096*4096*(double) pp[p];
            char cell[64];
            if (show_cpu) {
                snprintf(cell, sizeof(cell), "%5.1f/%5.1f", flops/bt.wall*1e-9, flops/bt.cpu*1e-9);
            } else {
                snprintf(cell, sizeof(cell), "%5.1f", flops/bt.wall*1e-9);
            }
            pp512 = flops/bt.wall*1e-9;
            pp512_cpu = flops/bt.cpu*1e-9;
            printf(" %-13s", cell);
            fflush(stdout);
        }
        // pp512 against the peak of the instructions that type can use
        // (with one thread by CPU time, which the machine's other work disturbs less)
        const bool bf16_dot = type == GGML_TYPE_BF16 && peak_bf16 > 0;
        const double type_peak = show_cpu ? (bf16_dot ? peak_bf16_cpu : peak_cpu) : (bf16_dot ? peak_bf16 : peak);
        if (!gen_only && (type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16)) {
            printf(" (pp512 %.0f%% of the %s peak)", 100.0 * (show_cpu ? pp512_cpu : pp512) / type_peak, bf16_dot ? "BF16 dot" : "FMA");
        }
        printf("\n");
    }
    printf("\n(peak %.1f GFLOPS, read bandwidth %.1f GB/s at the start, %.1f GB/s the highest of the run, %d threads;\n"
           " gen: k = %lld, n rows, n=32000 against the highest bandwidth measured right before, after or at the start;\n"
           " pp: k = n = 4096, m columns)\n",
           peak, bw, bw_max, n_threads, (long long) gen_k);
    ggml_threadpool_free(bc.pool);
    return 0;
}
