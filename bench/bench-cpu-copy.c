// bench-cpu-copy: throughput of the CPU backend's copy kernels next to memcpy.
//
//   bench-cpu-copy [n_threads [mib]]
//
// Prints GB/s counted as bytes read plus bytes written, the best of several
// repetitions, for: memcpy (one thread), CPY F32 -> F32, CPY F32 -> F16,
// CPY F16 -> F32, CONT of a permuted (0 2 1 3) F32 tensor and CONT of a
// transposed F32 tensor, each over a tensor of about `mib` MiB of F32.

#define _POSIX_C_SOURCE 200809L

#include "ggml.h"
#include "ggml-cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 7

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void report(const char * what, double bytes, double best_s) {
    printf("%-40s %8.2f GB/s  (%.2f ms)\n", what, bytes / best_s * 1e-9, best_s * 1e3);
}

static double bench_memcpy(size_t n_bytes) {
    char * a = (char *) malloc(n_bytes);
    char * b = (char *) malloc(n_bytes);
    memset(a, 1, n_bytes);
    memset(b, 2, n_bytes);
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        const double t0 = now_s();
        memcpy(b, a, n_bytes);
        const double t = now_s() - t0;
        best = t < best ? t : best;
    }
    // keep the copy observable
    if (b[n_bytes / 2] != 1) {
        printf("memcpy failed\n");
    }
    free(a);
    free(b);
    return best;
}

static double bench_graph(struct ggml_cgraph * gf, struct ggml_threadpool * tp) {
    struct ggml_cplan plan = ggml_graph_plan(gf, 0, tp);
    uint8_t * work = plan.work_size > 0 ? (uint8_t *) malloc(plan.work_size) : NULL;
    plan.work_data = work;
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        const double t0 = now_s();
        if (ggml_graph_compute(gf, &plan) != GGML_STATUS_SUCCESS) {
            printf("compute failed\n");
        }
        const double t = now_s() - t0;
        best = t < best ? t : best;
    }
    free(work);
    return best;
}

// time out = op(src) where src is a [ne0, ne1] F32 tensor (filled) and out has dst_bytes
static void bench_op(const char * what, struct ggml_context * ctx, struct ggml_tensor * out, struct ggml_threadpool * tp,
                     double bytes) {
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    report(what, bytes, bench_graph(gf, tp));
}

int main(int argc, char ** argv) {
    const int n_threads = argc > 1 ? atoi(argv[1]) : 2;
    const int mib = argc > 2 ? atoi(argv[2]) : 128;
    const int64_t n = (int64_t) mib * 1024 * 1024 / 4;
    const int64_t ne0 = 4096, ne1 = n / ne0;

    printf("%d threads, %lld F32 elements (%d MiB)\n", n_threads, (long long) n, mib);

    report("memcpy (1 thread)", 2.0 * (double) n * 4, bench_memcpy((size_t) n * 4));

    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);

    // a, f32, f16 and two results of CONT
    struct ggml_init_params ip = { (size_t) n * 2 * 9 + 64 * 1024 * 1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        printf("not enough memory\n");
        return 1;
    }
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, ne1);
    for (int64_t i = 0; i < n; i++) {
        ((float *) a->data)[i] = (float)(i % 1000) * 0.25f;
    }
    struct ggml_tensor * f32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, ne1);
    struct ggml_tensor * f16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, ne0, ne1);

    bench_op("cpy f32 -> f32", ctx, ggml_cpy(ctx, a, f32), tp, 8.0 * (double) n);
    bench_op("cpy f32 -> f16", ctx, ggml_cpy(ctx, a, f16), tp, 6.0 * (double) n);
    bench_op("cpy f16 -> f32", ctx, ggml_cpy(ctx, f16, f32), tp, 6.0 * (double) n);

    // attention-style permute: [128, 32 heads, ne1/32 tokens] -> swap heads and tokens
    struct ggml_tensor * a3 = ggml_reshape_3d(ctx, a, 128, 32, n / (128 * 32));
    struct ggml_tensor * p  = ggml_permute(ctx, a3, 0, 2, 1, 3);
    bench_op("cont of permute(0,2,1,3) f32", ctx, ggml_cont(ctx, p), tp, 8.0 * (double) n);
    struct ggml_tensor * t = ggml_transpose(ctx, a);
    bench_op("cont of transpose f32", ctx, ggml_cont(ctx, t), tp, 8.0 * (double) n);
    bench_op("cpy transpose f32 -> f16", ctx, ggml_cpy(ctx, t, ggml_reshape_2d(ctx, f16, t->ne[0], t->ne[1])), tp, 6.0 * (double) n);

    ggml_free(ctx);
    ggml_threadpool_free(tp);
    return 0;
}
