// bench-vulkan: the Vulkan device beside the CPU backend.
//
// Copies: host-to-device and device-to-host GB/s of ggml_backend_tensor_set
// and _get (synchronous) from ordinary and from pinned host memory, and of
// the asynchronous versions on a stream, for a 32 MiB tensor.
// MUL_MAT: GFLOPS per weight type for generation (one column: k = n = 2048)
// and for a prompt (64 columns), on the device and on the CPU backend with
// the same graph in the same run. Each figure is the best of repeated runs
// by the wall clock; the device's include the submit and the wait.
//
//   bench-vulkan [-d device index] [-t CPU threads] [-r seconds per figure]

#define _POSIX_C_SOURCE 200809L // clock_gettime

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-vulkan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static double g_seconds = 1.0;

// best time of fn over repeated calls for about g_seconds
#define BEST_TIME(best, stmt) do { \
        (best) = 1e30; \
        const double t_end_ = now() + g_seconds; \
        int reps_ = 0; \
        while (reps_ < 3 || now() < t_end_) { \
            const double t0_ = now(); \
            stmt; \
            const double t_ = now() - t0_; \
            (best) = t_ < (best) ? t_ : (best); \
            reps_++; \
        } \
    } while (0)

static void bench_copies(ggml_backend_t vk, ggml_backend_dev_t dev) {
    const size_t n = (size_t) 32 << 20;
    struct ggml_init_params p = { 2 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, (int64_t) n);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, vk);
    struct ggml_context * hctx = ggml_init(p);
    struct ggml_tensor * h = ggml_new_tensor_1d(hctx, GGML_TYPE_I8, (int64_t) n);
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors_from_buft(hctx, ggml_backend_dev_host_buffer_type(dev));
    char * plain = (char *) malloc(n);
    if (buf == NULL || hbuf == NULL || plain == NULL) {
        fprintf(stderr, "bench-vulkan: cannot allocate the copy buffers\n");
        exit(1);
    }
    memset(plain, 1, n);
    memset(h->data, 2, n);
    const double gb = (double) n / 1e9;
    double t_set, t_get, t_set_pinned, t_get_pinned, t_set_async, t_get_async;
    BEST_TIME(t_set, ggml_backend_tensor_set(t, plain, 0, n));
    BEST_TIME(t_get, ggml_backend_tensor_get(t, plain, 0, n));
    BEST_TIME(t_set_pinned, ggml_backend_tensor_set(t, h->data, 0, n));
    BEST_TIME(t_get_pinned, ggml_backend_tensor_get(t, h->data, 0, n));
    BEST_TIME(t_set_async, (ggml_backend_tensor_set_async(vk, t, plain, 0, n), ggml_backend_synchronize(vk)));
    BEST_TIME(t_get_async, (ggml_backend_tensor_get_async(vk, t, plain, 0, n), ggml_backend_synchronize(vk)));
    double t_memcpy;
    BEST_TIME(t_memcpy, memcpy(h->data, plain, n));
    printf("copies of %zu MiB (GB/s)         host->device   device->host\n", n >> 20);
    printf("  tensor_set/get, malloc memory    %8.2f       %8.2f\n", gb / t_set, gb / t_get);
    printf("  tensor_set/get, pinned memory    %8.2f       %8.2f\n", gb / t_set_pinned, gb / t_get_pinned);
    printf("  async on a stream + synchronize  %8.2f       %8.2f\n", gb / t_set_async, gb / t_get_async);
    printf("  (memcpy on the host              %8.2f)\n\n", gb / t_memcpy);
    free(plain);
    ggml_backend_buffer_free(hbuf);
    ggml_backend_buffer_free(buf);
    ggml_free(hctx);
    ggml_free(ctx);
}

// seconds of one MUL_MAT of w (type, k x n) by k x m activations on backend
static double time_mul_mat(ggml_backend_t backend, enum ggml_type type, int k, int n, int m) {
    struct ggml_init_params p = { 4 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, k, n);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (buf == NULL || !ggml_backend_supports_op(backend, y)) {
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
        return -1.0;
    }
    // any values do: the weights are random bytes of a valid scale range
    float * xf = (float *) malloc((size_t) k * (size_t) m * sizeof(float));
    for (size_t i = 0; i < (size_t) k * (size_t) m; i++) {
        xf[i] = (float) (i % 17) / 17.0f - 0.5f;
    }
    float * wf = (float *) malloc((size_t) k * (size_t) n * sizeof(float));
    for (size_t i = 0; i < (size_t) k * (size_t) n; i++) {
        wf[i] = (float) (i % 23) / 23.0f - 0.5f;
    }
    void * wq = malloc(ggml_nbytes(w));
    ggml_quantize_chunk(type, wf, wq, 0, n, k, NULL);
    ggml_backend_tensor_set(w, wq, 0, ggml_nbytes(w));
    ggml_backend_tensor_set(x, xf, 0, ggml_nbytes(x));
    double best;
    BEST_TIME(best, ggml_backend_graph_compute(backend, gf));
    free(xf);
    free(wf);
    free(wq);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return best;
}

static void bench_mul_mat(ggml_backend_t vk, ggml_backend_t cpu) {
    const enum ggml_type types[] = { GGML_TYPE_F32,  GGML_TYPE_F16,  GGML_TYPE_Q8_0,   GGML_TYPE_Q4_0,
                                     GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,   GGML_TYPE_Q2_K,
                                     GGML_TYPE_Q3_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4 };
    const int k = 2048;
    const int n = 2048;
    const int ms[] = { 1, 64 };
    printf("MUL_MAT k = n = %d (GFLOPS)     device        CPU\n", k);
    for (size_t im = 0; im < sizeof(ms) / sizeof(ms[0]); im++) {
        for (size_t it = 0; it < sizeof(types) / sizeof(types[0]); it++) {
            const int m = ms[im];
            const double flops = 2.0 * k * n * m;
            const double tv = time_mul_mat(vk, types[it], k, n, m);
            const double tc = time_mul_mat(cpu, types[it], k, n, m);
            printf("  %-6s %3d column%s        %8.2f    %8.2f\n", ggml_type_name(types[it]), m, m == 1 ? " " : "s",
                   tv > 0 ? flops / tv * 1e-9 : 0.0, tc > 0 ? flops / tc * 1e-9 : 0.0);
        }
    }
}

int main(int argc, char ** argv) {
    int device = 0;
    int n_threads = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-d") == 0) {
            device = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "-t") == 0) {
            n_threads = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "-r") == 0) {
            g_seconds = atof(argv[i + 1]);
        } else {
            fprintf(stderr, "usage: %s [-d device index] [-t CPU threads] [-r seconds per figure]\n", argv[0]);
            return 1;
        }
    }
    ggml_backend_t vk = ggml_backend_vk_init((size_t) device);
    if (vk == NULL) {
        fprintf(stderr, "bench-vulkan: no Vulkan device %d (a CPU driver such as lavapipe is listed only when GGML_VK_VISIBLE_DEVICES names it)\n", device);
        return 1;
    }
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, n_threads);
    char desc[256];
    ggml_backend_vk_get_device_description(device, desc, sizeof(desc));
    printf("Vulkan%d: %s; CPU backend: %d threads\n\n", device, desc, n_threads);
    bench_copies(vk, ggml_backend_get_device(vk));
    bench_mul_mat(vk, cpu);
    ggml_backend_free(cpu);
    ggml_backend_free(vk);
    return 0;
}
