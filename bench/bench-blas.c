// bench-blas: the BLAS backend's matrix product beside the library called
// directly and beside the CPU backend.
//
// One F32 GEMM, dst = X W^T with W of m x k and X of n x k (m = k = 4096,
// n = 512 by default: a 512-token prompt through a 4096-wide projection),
// computed three ways with the same thread count:
//   cblas_sgemm   the BLAS library called directly, on the same arrays
//   BLAS backend  ggml_mul_mat on the BLAS backend (graph_compute)
//   CPU backend   ggml_mul_mat on our CPU backend
// The three alternate run by run, so that a change in the machine's load
// touches them alike; each prints the best and the median wall time over the
// runs with GFLOPS (2 m n k per product), and the process's CPU time per run
// (median) with the GFLOPS per core-second it gives: on a machine shared with
// other work, where the wall time depends on the cores the process was
// given, that figure compares the three ways; CPU time above n_threads x
// wall time would show threads of the previous way still spinning. With -T the weights are of another
// type (f16, bf16, q8_0, ...): the BLAS backend then converts them to F32
// first, and cblas_sgemm runs on F32 weights for reference.
//
//   bench-blas [-t threads] [-r runs] [-m m] [-n n] [-k k] [-T type]

#define _POSIX_C_SOURCE 200809L // clock_gettime

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <cblas.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_s(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

// the library's thread count, set as the BLAS backend sets it
static void library_set_threads(int n) {
    void * sym = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (sym != NULL) {
        void (*set)(int);
        memcpy(&set, &sym, sizeof(sym));
        set(n);
        return;
    }
    sym = dlsym(RTLD_DEFAULT, "bli_thread_set_num_threads");
    if (sym != NULL) {
        void (*set)(int64_t);
        memcpy(&set, &sym, sizeof(sym));
        set(n);
        return;
    }
    fprintf(stderr, "bench-blas: the BLAS library's thread count cannot be set here\n");
}

static int cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static void fill(float * v, size_t n, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i < n; i++) {
        s ^= s >> 12; s ^= s << 25; s ^= s >> 27;
        v[i] = (float) ((double) ((s * 0x2545F4914F6CDD1DULL) >> 40) / 16777216.0 - 0.5);
    }
}

int main(int argc, char ** argv) {
    int n_threads = 2, runs = 7;
    int64_t m = 4096, n = 512, k = 4096;
    enum ggml_type wtype = GGML_TYPE_F32;
    for (int i = 1; i < argc; i += 2) {
        const char * a = argv[i];
        const char * v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL) {
            fprintf(stderr, "usage: %s [-t threads] [-r runs] [-m m] [-n n] [-k k] [-T type]\n", argv[0]);
            return 1;
        }
        if      (strcmp(a, "-t") == 0) { n_threads = atoi(v); }
        else if (strcmp(a, "-r") == 0) { runs = atoi(v); }
        else if (strcmp(a, "-m") == 0) { m = atoll(v); }
        else if (strcmp(a, "-n") == 0) { n = atoll(v); }
        else if (strcmp(a, "-k") == 0) { k = atoll(v); }
        else if (strcmp(a, "-T") == 0) {
            wtype = GGML_TYPE_COUNT;
            for (int t = 0; t < GGML_TYPE_COUNT; t++) {
                if (ggml_get_type_traits((enum ggml_type) t)->type_name != NULL &&
                    strcmp(ggml_type_name((enum ggml_type) t), v) == 0) {
                    wtype = (enum ggml_type) t;
                }
            }
            if (wtype == GGML_TYPE_COUNT) {
                fprintf(stderr, "unknown type %s\n", v);
                return 1;
            }
        } else {
            fprintf(stderr, "unknown option %s\n", a);
            return 1;
        }
    }
    if (n_threads < 1 || runs < 1 || m < 1 || n < 1 || k < 1 || k % ggml_blck_size(wtype) != 0) {
        fprintf(stderr, "invalid sizes or counts\n");
        return 1;
    }

    // the arrays: weights and activations in F32, the weights also as wtype
    const size_t wbytes = ggml_row_size(wtype, k) * (size_t) m;
    const size_t mem = (size_t) (m * k + n * k + 2 * m * n) * sizeof(float) + wbytes + 16 * ggml_tensor_overhead() +
                       ggml_graph_overhead() + 1024 * 1024;
    struct ggml_init_params ip = { mem, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        return 1;
    }
    struct ggml_tensor * w32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
    struct ggml_tensor * x   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, n);
    struct ggml_tensor * w   = wtype == GGML_TYPE_F32 ? w32 : ggml_new_tensor_2d(ctx, wtype, k, m);
    float * direct = (float *) malloc((size_t) (m * n) * sizeof(float));
    fill((float *) w32->data, (size_t) (m * k), 1);
    fill((float *) x->data, (size_t) (n * k), 2);
    if (wtype != GGML_TYPE_F32) {
        ggml_quantize_chunk(wtype, (const float *) w32->data, w->data, 0, m, k, NULL);
    }
    struct ggml_tensor * d = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, d);

    // through the registry, whether BLAS is built in or a module (GGML_BACKEND_DL)
    ggml_backend_load_all();
    ggml_backend_dev_t blas_dev = ggml_backend_dev_by_name("BLAS");
    ggml_backend_t blas = blas_dev != NULL ? ggml_backend_dev_init(blas_dev, NULL) : NULL;
    ggml_backend_t cpu  = ggml_backend_cpu_init();
    void * set_threads = ggml_backend_reg_get_proc_address(ggml_backend_reg_by_name("BLAS"), "ggml_backend_set_n_threads");
    if (blas == NULL || cpu == NULL || direct == NULL || set_threads == NULL) {
        fprintf(stderr, "no BLAS backend\n");
        return 1;
    }
    ggml_backend_set_n_threads_t set_n_threads;
    memcpy(&set_n_threads, &set_threads, sizeof(set_threads));
    set_n_threads(blas, n_threads);
    ggml_backend_cpu_set_n_threads(cpu, n_threads);
    if (!ggml_backend_supports_op(blas, d)) {
        fprintf(stderr, "the BLAS backend does not take this product (sizes below its threshold?)\n");
        return 1;
    }

    printf("F32 GEMM m=%lld n=%lld k=%lld, weights %s, %d threads, BLAS: %s\n", (long long) m, (long long) n,
           (long long) k, ggml_type_name(wtype), n_threads, ggml_backend_dev_description(ggml_backend_get_device(blas)));

    enum { DIRECT, BACKEND, CPU, N_WAYS };
    const char * names[N_WAYS] = { "cblas_sgemm", "BLAS backend", "CPU backend" };
    double * t[N_WAYS];
    double * c[N_WAYS]; // process CPU time
    for (int j = 0; j < N_WAYS; j++) {
        t[j] = (double *) calloc((size_t) runs, sizeof(double));
        c[j] = (double *) calloc((size_t) runs, sizeof(double));
    }
    for (int r = -1; r < runs; r++) { // run -1 warms up
        for (int j = 0; j < N_WAYS; j++) {
            const double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
            enum ggml_status st = GGML_STATUS_SUCCESS;
            switch (j) {
                case DIRECT:
                    library_set_threads(n_threads);
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) n, (int) m, (int) k, 1.0f,
                                (const float *) x->data, (int) k, (const float *) w32->data, (int) k, 0.0f, direct, (int) m);
                    break;
                case BACKEND: st = ggml_backend_graph_compute(blas, gf); break;
                case CPU:     st = ggml_backend_graph_compute(cpu, gf);  break;
            }
            const double dt = clock_s(CLOCK_MONOTONIC) - t0, dc = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
            if (st != GGML_STATUS_SUCCESS) {
                fprintf(stderr, "%s failed\n", names[j]);
                return 1;
            }
            if (r >= 0) {
                t[j][r] = dt;
                c[j][r] = dc;
            }
        }
    }
    const double flops = 2.0 * (double) m * (double) n * (double) k;
    double best[N_WAYS];
    for (int j = 0; j < N_WAYS; j++) {
        qsort(t[j], (size_t) runs, sizeof(double), cmp_double);
        qsort(c[j], (size_t) runs, sizeof(double), cmp_double);
        best[j] = t[j][0];
        const double median = t[j][runs / 2], cpu_median = c[j][runs / 2];
        printf("  %-13s wall: best %8.2f ms %6.1f GFLOPS, median %8.2f ms   CPU: %8.2f ms %6.1f GFLOPS/core\n",
               names[j], best[j] * 1e3, flops / best[j] * 1e-9, median * 1e3, cpu_median * 1e3,
               flops / cpu_median * 1e-9);
        free(t[j]);
        free(c[j]);
    }
    printf("  BLAS backend / cblas_sgemm: %.3f (best wall times)\n", best[BACKEND] / best[DIRECT]);

    ggml_backend_free(blas);
    ggml_backend_free(cpu);
    free(direct);
    ggml_free(ctx);
    return 0;
}
