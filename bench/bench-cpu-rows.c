// bench-cpu-rows: throughput of the CPU's row kernels on llama-like shapes
// (SOFT_MAX of attention scores, RMS_NORM and NORM of hidden states, ROPE of
// queries, ARGSORT/TOP_K over a vocabulary), vector and scalar paths.
//
//   bench-cpu-rows [n_threads] [iterations] [filter]
//
// (filter: run only the kernels whose name contains it, e.g. SOFT_MAX)
// Prints, per kernel, the time of the fastest call, rows per second and the
// memory traffic (bytes read + written) per second.

#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now_s(void) {
    return 1e-6 * (double) ggml_time_us();
}

static void fill(struct ggml_tensor * t, float lo, float hi) {
    uint32_t state = 12345;
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        state = state * 1664525u + 1013904223u;
        const float v = lo + (hi - lo) * (float)(state >> 8) / 16777216.0f;
        if (t->type == GGML_TYPE_F16) {
            ((ggml_fp16_t *) t->data)[i] = ggml_fp32_to_fp16(v);
        } else if (t->type == GGML_TYPE_I32) {
            ((int32_t *) t->data)[i] = (int32_t) v;
        } else {
            ((float *) t->data)[i] = v;
        }
    }
}

struct bench {
    const char * name;
    int64_t      rows;
    double       bytes;  // read + written per call
};

static const char * g_filter = NULL;

static void run(const struct bench * b, struct ggml_context * ctx, struct ggml_tensor * out,
                struct ggml_threadpool * tp, int iters) {
    if (g_filter != NULL && strstr(b->name, g_filter) == NULL) {
        return;
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        struct ggml_cplan plan = ggml_graph_plan(gf, 0, tp);
        plan.use_ref = use_ref != 0;
        void * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
        plan.work_data = (uint8_t *) work;
        ggml_graph_compute(gf, &plan); // warm-up
        // the fastest call: the least disturbed by other processes on the machine
        double dt = INFINITY;
        for (int i = 0; i < iters; i++) {
            const double t0 = now_s();
            ggml_graph_compute(gf, &plan);
            dt = fmin(dt, now_s() - t0);
        }
        printf("%-44s %-6s %9.3f ms  %10.3g rows/s  %7.2f GB/s\n", b->name, use_ref ? "scalar" : "vector",
               dt * 1e3, (double) b->rows / dt, b->bytes / dt * 1e-9);
        free(work);
    }
}

int main(int argc, char ** argv) {
    const int n_threads = argc > 1 ? atoi(argv[1]) : 2;
    const int iters     = argc > 2 ? atoi(argv[2]) : 20;
    g_filter            = argc > 3 ? argv[3] : NULL;
    if (argc > 4 || n_threads < 1 || n_threads > 4096 || iters < 1) {
        fprintf(stderr, "usage: %s [n_threads (1-4096)] [iterations (at least 1)] [filter]\n", argv[0]);
        return 1;
    }
    ggml_time_init();

    struct ggml_init_params ip = { (size_t) 1536 * 1024 * 1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);
    printf("%d threads, %d iterations\n", n_threads, iters);

    const int64_t n_embd = 4096, n_head = 32, head_dim = 128, n_tok = 512, n_kv = 4096, n_vocab = 32000;

    {   // attention scores of a prompt: [n_kv, n_tok, n_head], causal F16 mask, scale 1/sqrt(head_dim)
        struct ggml_tensor * kq = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n_kv, n_tok, n_head);
        struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, n_kv, n_tok);
        fill(kq, -10.0f, 10.0f);
        for (int64_t j = 0; j < n_tok; j++) {
            for (int64_t i = 0; i < n_kv; i++) {
                ((ggml_fp16_t *) mask->data)[j*n_kv + i] = ggml_fp32_to_fp16(i > n_kv - n_tok + j ? -INFINITY : 0.0f);
            }
        }
        const struct bench b = { "SOFT_MAX [4096,512,32] F16 mask, scale", n_tok * n_head,
                                 (double) ggml_nbytes(kq) * 2 + (double) ggml_nbytes(mask) * n_head };
        run(&b, ctx, ggml_soft_max_ext_inplace(ctx, kq, mask, 1.0f / sqrtf((float) head_dim), 0.0f), tp, iters);
    }
    {   // the same for one token (decoding)
        struct ggml_tensor * kq = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n_kv, 1, n_head);
        fill(kq, -10.0f, 10.0f);
        const struct bench b = { "SOFT_MAX [4096,1,32] no mask", n_head, (double) ggml_nbytes(kq) * 2 };
        run(&b, ctx, ggml_soft_max_inplace(ctx, kq), tp, iters * 50);
    }
    {   // hidden states of a prompt
        struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_embd, n_tok);
        fill(x, -2.0f, 2.0f);
        const struct bench b = { "RMS_NORM [4096,512]", n_tok, (double) ggml_nbytes(x) * 2 };
        run(&b, ctx, ggml_rms_norm(ctx, x, 1e-5f), tp, iters * 5);
        const struct bench bn = { "NORM [4096,512]", n_tok, (double) ggml_nbytes(x) * 2 };
        run(&bn, ctx, ggml_norm(ctx, x, 1e-5f), tp, iters * 5);
    }
    {   // queries of a prompt: [head_dim, n_head, n_tok], NEOX and NORMAL
        struct ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, head_dim, n_head, n_tok);
        struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tok);
        fill(q, -1.0f, 1.0f);
        for (int64_t i = 0; i < n_tok; i++) {
            ((int32_t *) pos->data)[i] = (int32_t) (1000 + i);
        }
        const struct bench b = { "ROPE neox [128,32,512] F32", n_head * n_tok, (double) ggml_nbytes(q) * 2 };
        run(&b, ctx, ggml_rope_ext(ctx, q, pos, NULL, (int) head_dim, GGML_ROPE_TYPE_NEOX, 4096, 10000.0f, 1.0f,
                                   0.0f, 1.0f, 32.0f, 1.0f), tp, iters * 5);
        const struct bench bn = { "ROPE normal [128,32,512] F32", n_head * n_tok, (double) ggml_nbytes(q) * 2 };
        run(&bn, ctx, ggml_rope_ext(ctx, q, pos, NULL, (int) head_dim, GGML_ROPE_TYPE_NORMAL, 4096, 10000.0f, 1.0f,
                                    0.0f, 1.0f, 32.0f, 1.0f), tp, iters * 5);
    }
    {   // the queries of one generated token (the graph's every layer has one)
        struct ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, head_dim, n_head, 1);
        struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
        fill(q, -1.0f, 1.0f);
        ((int32_t *) pos->data)[0] = 1000;
        const struct bench b = { "ROPE neox [128,32,1] F32", n_head, (double) ggml_nbytes(q) * 2 };
        run(&b, ctx, ggml_rope_ext(ctx, q, pos, NULL, (int) head_dim, GGML_ROPE_TYPE_NEOX, 4096, 10000.0f, 1.0f,
                                   0.0f, 1.0f, 32.0f, 1.0f), tp, iters * 50);
    }
    {   // sampling over a vocabulary
        struct ggml_tensor * logits = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_vocab, 4);
        fill(logits, -20.0f, 20.0f);
        const struct bench b = { "ARGSORT [32000,4] desc", 4, (double) ggml_nbytes(logits) * 2 };
        run(&b, ctx, ggml_argsort(ctx, logits, GGML_SORT_ORDER_DESC), tp, iters);
        const struct bench bk = { "TOP_K 40 of [32000,4]", 4, (double) ggml_nbytes(logits) };
        run(&bk, ctx, ggml_top_k(ctx, logits, 40), tp, iters);
    }

    ggml_threadpool_free(tp);
    ggml_free(ctx);
    return 0;
}
