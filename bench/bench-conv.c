// bench-conv: 2-D convolutions on the CPU backend, at the shape of a middle
// layer of a ResNet-like network: a 3x3 kernel, 64 -> 64 channels, a 112x112
// image (stride 1, padding 1: same-size output), batch 1 by default.
//
// For F32 and F16 kernels it times both forms upstream offers:
//   conv_2d         the composite graph IM2COL (F16 patches) -> MUL_MAT -> CONT
//   conv_2d_direct  the one-op CONV_2D
// and prints the time of one graph (best of repeated runs by the wall clock)
// and GFLOPS, counting 2*OC*OH*OW*IC*KH*KW flops per image.
//
// Only the public API is used, so the same file builds against upstream ggml
// for comparisons.
//
//   bench-conv [-t threads] [-r seconds per case] [-n batch] [-c channels] [-s size]

#include "ggml.h"
#include "ggml-cpu.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct conv_shape {
    int64_t W, H, IC, OC, N, K;
};

static void fill_random(struct ggml_tensor * t, uint64_t * s) {
    const int64_t n = ggml_nelements(t);
    float * tmp = (float *) malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
        tmp[i] = (float)((double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    if (t->type == GGML_TYPE_F16) {
        ggml_fp32_to_fp16_row(tmp, (ggml_fp16_t *) t->data, n);
    } else {
        memcpy(t->data, tmp, (size_t) n * sizeof(float));
    }
    free(tmp);
}

// best wall-clock seconds of one graph computing the convolution
static double bench_conv(const struct conv_shape * c, enum ggml_type ktype, bool direct, int n_threads,
                         struct ggml_threadpool * pool, double seconds) {
    const size_t bytes = (size_t) (c->W * c->H * (c->IC + c->OC) * c->N) * sizeof(float) * 6 +
                         (size_t) (c->K * c->K * c->IC * c->OC) * sizeof(float) + (64u << 20);
    struct ggml_init_params ip = { bytes, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        fprintf(stderr, "bench-conv: cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
    struct ggml_tensor * kernel = ggml_new_tensor_4d(ctx, ktype, c->K, c->K, c->IC, c->OC);
    struct ggml_tensor * input  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->W, c->H, c->IC, c->N);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    fill_random(kernel, &s);
    fill_random(input, &s);
    const int pad = (int) (c->K / 2);
    struct ggml_tensor * out = direct ? ggml_conv_2d_direct(ctx, kernel, input, 1, 1, pad, pad, 1, 1)
                                      : ggml_conv_2d(ctx, kernel, input, 1, 1, pad, pad, 1, 1);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, pool);
    void * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
    plan.work_data = (uint8_t *) work;

    ggml_graph_compute(gf, &plan); // warm up
    double best = 1e30, total = 0.0;
    for (int rep = 0; rep < 1000 && (rep < 3 || total < seconds); rep++) {
        const int64_t t0 = ggml_time_us();
        ggml_graph_compute(gf, &plan);
        const double t = (double) (ggml_time_us() - t0) * 1e-6;
        best = t < best ? t : best;
        total += t;
    }
    free(work);
    ggml_free(ctx);
    return best;
}

int main(int argc, char ** argv) {
    int n_threads = 2;
    double seconds = 2.0;
    struct conv_shape c = { .W = 112, .H = 112, .IC = 64, .OC = 64, .N = 1, .K = 3 };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) {
            n_threads = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            seconds = atof(argv[++i]);
        } else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            c.N = atoll(argv[++i]);
        } else if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            c.IC = c.OC = atoll(argv[++i]);
        } else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc) {
            c.W = c.H = atoll(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [-t threads] [-r seconds per case] [-n batch] [-c channels] [-s size]\n", argv[0]);
            return 1;
        }
    }
    ggml_time_init();
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
    struct ggml_threadpool * pool = ggml_threadpool_new(&tpp);
    if (pool == NULL) {
        fprintf(stderr, "bench-conv: cannot start %d threads\n", n_threads);
        return 1;
    }

    const double flops = 2.0 * (double) (c.OC * c.W * c.H * c.N) * (double) (c.IC * c.K * c.K);
    printf("conv_2d %lldx%lld kernel, %lld -> %lld channels, %lldx%lld image, batch %lld, stride 1, same padding; %d threads\n",
           (long long) c.K, (long long) c.K, (long long) c.IC, (long long) c.OC, (long long) c.W, (long long) c.H,
           (long long) c.N, n_threads);
    printf("%-16s %-7s %10s %10s\n", "form", "kernel", "ms", "GFLOPS");
    static const enum ggml_type ktypes[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    for (int direct = 0; direct <= 1; direct++) {
        for (int ti = 0; ti < 2; ti++) {
            const double t = bench_conv(&c, ktypes[ti], direct != 0, n_threads, pool, seconds);
            printf("%-16s %-7s %10.3f %10.1f\n", direct ? "conv_2d_direct" : "conv_2d", ggml_type_name(ktypes[ti]), t * 1e3,
                   flops / t * 1e-9);
        }
    }
    ggml_threadpool_free(pool);
    return 0;
}
