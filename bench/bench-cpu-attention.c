// bench-cpu-attention: GGML_OP_FLASH_ATTN_EXT on the CPU backend.
//
// One attention node as a llama-like model computes it: q [D, n_batch,
// n_head], K and V [D, n_kv, n_head_kv] (F16 by default), an F16 mask of
// zeros padded to 64 rows, scale 1/sqrt(D). Prints the time per call (the
// minimum over the repetitions: the machine's other work only ever adds
// time), the process CPU time per call, and the equivalent GFLOPS, counting
// 4 * n_batch * n_kv * D * n_head (the two matrix products).
//
//   usage: bench-cpu-attention [n_batch=1] [n_kv=4096] [threads=2] [n_head=32]
//                              [n_head_kv=n_head] [D=128] [type=f16|f32|q8_0...] [reps=20]
//                              [heads|cache: K and V in a KV cache's layout] [cold reps=reps]
//                              [live=n_kv: keys past this many masked (-INF), as in a
//                               KV cache with room to spare: llama.cpp pads its keys to 256]
//
// cold reps 0 skips the calls with K and V out of the caches (for a profile
// of the kernels alone).

#define _POSIX_C_SOURCE 199309L

#define FLUSH_BYTES ((size_t) 64 << 20)

#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

static enum ggml_type type_from_name(const char * name) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * tn = ggml_type_name((enum ggml_type) t);
        if (tn != NULL && strcmp(tn, name) == 0) {
            return (enum ggml_type) t;
        }
    }
    fprintf(stderr, "unknown type %s\n", name);
    exit(1);
}

// deterministic values in [-1, 1), converted to t's type
static void fill(struct ggml_tensor * t, uint32_t seed) {
    const int64_t n = ggml_nelements(t);
    float * tmp = (float *) malloc(sizeof(float) * (size_t) n);
    uint32_t x = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        tmp[i] = (float)(x >> 8) / 8388608.0f - 1.0f;
    }
    if (t->type == GGML_TYPE_F32) {
        memcpy(t->data, tmp, sizeof(float) * (size_t) n);
    } else {
        ggml_get_type_traits(t->type)->from_float_ref(tmp, t->data, n);
    }
    free(tmp);
}

int main(int argc, char ** argv) {
    const int n_batch   = argc > 1 ? atoi(argv[1]) : 1;
    const int n_kv      = argc > 2 ? atoi(argv[2]) : 4096;
    const int n_threads = argc > 3 ? atoi(argv[3]) : 2;
    const int n_head    = argc > 4 ? atoi(argv[4]) : 32;
    const int n_head_kv = argc > 5 ? atoi(argv[5]) : n_head;
    const int D         = argc > 6 ? atoi(argv[6]) : 128;
    const enum ggml_type type = argc > 7 ? type_from_name(argv[7]) : GGML_TYPE_F16;
    const int reps      = argc > 8 ? atoi(argv[8]) : 20;
    // cache: K and V as views of a KV cache [D * n_head_kv, n_kv], one row per
    // position with the heads side by side (llama.cpp's and ggml-run's layout)
    const bool cache    = argc > 9 && strcmp(argv[9], "cache") == 0;
    const int cold_reps = argc > 10 ? atoi(argv[10]) : reps;
    const int live      = argc > 11 ? atoi(argv[11]) : n_kv;
    if (n_batch < 1 || n_kv < 1 || n_threads < 1 || n_head < 1 || n_head_kv < 1 || n_head % n_head_kv != 0 || D < 1 ||
        reps < 1 || cold_reps < 0 || live < 0 || live > n_kv) {
        fprintf(stderr, "bad arguments: see the usage at the top of bench/bench-cpu-attention.c\n");
        return 1;
    }

    const size_t kv_bytes = 2 * ggml_row_size(type, D) * (size_t) n_kv * (size_t) n_head_kv;
    const size_t mem = (cache ? 2 : 1) * kv_bytes + sizeof(float) * (size_t) D * (size_t) n_batch * (size_t) n_head * 2 +
                       sizeof(ggml_fp16_t) * (size_t) n_kv * (size_t)(n_batch + 63) + (64u << 20) +
                       (cold_reps > 0 ? FLUSH_BYTES : 0);
    struct ggml_init_params ip = { mem, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }

    struct ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, D, n_batch, n_head);
    struct ggml_tensor * k = ggml_new_tensor_3d(ctx, type, D, n_kv, n_head_kv);
    struct ggml_tensor * v = ggml_new_tensor_3d(ctx, type, D, n_kv, n_head_kv);
    if (cache) {
        struct ggml_tensor * kc = ggml_new_tensor_2d(ctx, type, (int64_t) D * n_head_kv, n_kv);
        struct ggml_tensor * vc = ggml_new_tensor_2d(ctx, type, (int64_t) D * n_head_kv, n_kv);
        k = ggml_view_3d(ctx, kc, D, n_kv, n_head_kv, kc->nb[1], ggml_row_size(type, D), 0);
        v = ggml_view_3d(ctx, vc, D, n_kv, n_head_kv, vc->nb[1], ggml_row_size(type, D), 0);
        fill(kc, 2);
        fill(vc, 3);
    }
    struct ggml_tensor * m = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, n_kv, (n_batch + 63) / 64 * 64);
    fill(q, 1);
    if (!cache) {
        fill(k, 2);
        fill(v, 3);
    }
    memset(m->data, 0, ggml_nbytes(m));
    for (int64_t i1 = 0; i1 < m->ne[1]; i1++) {
        ggml_fp16_t * row = (ggml_fp16_t *)((char *) m->data + i1*m->nb[1]);
        for (int j = live; j < n_kv; j++) {
            row[j] = ggml_fp32_to_fp16(-INFINITY);
        }
    }

    struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, m, 1.0f / sqrtf((float) D), 0.0f, 0.0f);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);

    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);
    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, tp);
    plan.work_data = (uint8_t *) malloc(plan.work_size);

    ggml_graph_compute(gf, &plan); // warm-up
    double best = INFINITY;
    for (int r = 0; r < reps; r++) {
        const double t0 = seconds();
        ggml_graph_compute(gf, &plan);
        const double t = seconds() - t0;
        best = t < best ? t : best;
    }
    // cold: K, V and the mask pushed out of the caches before each call, as
    // in a model, where a layer's weights stream through the caches between
    // two attentions: a graph that reads a 64 MiB tensor (SUM_ROWS) computed by
    // the same threads right before (the pool's threads keep spinning in
    // between, as between a model's nodes; a read by this thread alone let
    // them sleep, and each call paid their wake-up: 30-50 us)
    double best_cold = INFINITY;
    if (cold_reps > 0) {
        struct ggml_tensor * big = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4096, FLUSH_BYTES / (4096 * sizeof(float)));
        for (int64_t i = 0; i < ggml_nelements(big); i++) {
            ((float *) big->data)[i] = (float)(i & 1023);
        }
        struct ggml_cgraph * gflush = ggml_new_graph(ctx);
        ggml_build_forward_expand(gflush, ggml_sum_rows(ctx, big));
        struct ggml_cplan fplan = ggml_graph_plan(gflush, n_threads, tp);
        fplan.work_data = (uint8_t *) malloc(fplan.work_size + 1);
        for (int r = 0; r < cold_reps; r++) {
            ggml_graph_compute(gflush, &fplan);
            const double t0 = seconds();
            ggml_graph_compute(gf, &plan);
            const double t = seconds() - t0;
            best_cold = t < best_cold ? t : best_cold;
        }
        free(fplan.work_data);
    }

    // the live keys' work and bytes
    const double flop = 4.0 * n_batch * (double) live * D * n_head;
    const double live_bytes = (double) kv_bytes * live / n_kv;
    printf("flash_attn_ext n_batch %d, n_kv %d (%d live), %d heads (%d kv) of %d, %s K/V%s, %d threads: %.3f ms/call, %.1f GFLOPS",
           n_batch, n_kv, live, n_head, n_head_kv, D, ggml_type_name(type), cache ? " (cache layout)" : "", n_threads,
           best * 1e3, flop / best * 1e-9);
    if (best_cold < INFINITY) {
        printf("; K and V out of the caches: %.3f ms/call, %.1f GFLOPS, %.1f GB/s of live K and V",
               best_cold * 1e3, flop / best_cold * 1e-9, live_bytes / best_cold * 1e-9);
    }
    printf("\n");

    free(plan.work_data);
    ggml_threadpool_free(tp);
    ggml_free(ctx);
    return 0;
}
