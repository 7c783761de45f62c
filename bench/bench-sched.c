// bench-sched: the cost of the multi-backend scheduler itself.
//
// A llama-shaped graph of 32 nodes per layer (attention and feed-forward)
// runs over two backends: a "GPU" with device memory holding the weights of
// the first half of the layers, and a "CPU" holding the rest. Both are test
// backends that compute nothing, so what is timed is the scheduler:
// assignment, splitting, allocation planning, input copies, events and
// dispatch. The GPU takes only the ops the test backend could compute (not
// norms, rope, softmax, silu, repeat), so each layer is about ten splits, as
// on a device that lacks some ops; with "all" it takes every op (2 splits).
//
//   split+alloc (fresh)  a new scheduler: split, plan and allocate
//   reset+split+alloc    a new graph of the same shape on a warm scheduler,
//                        as in token-by-token generation: ggml_backend_sched_reset
//                        and ggml_backend_sched_alloc_graph
//   reset+split+alloc    the same graph object again on a warm scheduler (an
//   (same graph)         engine that keeps its graph): reset and alloc_graph
//   compute (again)      the same graph computed again (no re-splitting),
//                        minus the time spent inside the backends
//
// Built with -DBENCH_SCHED_PUBLIC_API it uses only the public API and the
// backend interface (ggml-backend-impl.h), so that it compiles against
// upstream's library for a comparison; the compute figure, which reads the
// scheduler's splits, is then left out.
//
// Each figure is the minimum over the repetitions: the machine's other work
// only ever adds time.
//
// usage: bench-sched [n_layer=16] [n_tokens=8] [reps=200] [some|all]

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#if !defined(BENCH_SCHED_PUBLIC_API)
#include "ggml-backend-sched-impl.h"
#endif
#include "test-backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct model {
    int n_layer, n_embd, n_head, n_ff, n_tokens, n_kv;
    struct ggml_context * ctx_gpu, * ctx_cpu;
    ggml_backend_buffer_t buf_gpu, buf_cpu;
    struct ggml_tensor ** w; // 9 per layer: attn_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3
};

static void model_init(struct model * m, ggml_backend_t gpu, int n_layer, int n_tokens) {
    m->n_layer = n_layer; m->n_embd = 128; m->n_head = 4; m->n_ff = 256; m->n_tokens = n_tokens; m->n_kv = 64;
    struct ggml_init_params p = { (size_t) n_layer * 9 * ggml_tensor_overhead(), NULL, true };
    m->ctx_gpu = ggml_init(p);
    m->ctx_cpu = ggml_init(p);
    m->w = (struct ggml_tensor **) malloc(sizeof(*m->w) * (size_t) n_layer * 9);
    for (int l = 0; l < n_layer; l++) {
        struct ggml_context * c = l < n_layer / 2 ? m->ctx_gpu : m->ctx_cpu;
        struct ggml_tensor ** w = m->w + 9 * l;
        w[0] = ggml_new_tensor_1d(c, GGML_TYPE_F32, m->n_embd);
        w[1] = ggml_new_tensor_2d(c, GGML_TYPE_F32, m->n_embd, m->n_embd);
        w[2] = ggml_new_tensor_2d(c, GGML_TYPE_F32, m->n_embd, m->n_embd);
        w[3] = ggml_new_tensor_2d(c, GGML_TYPE_F32, m->n_embd, m->n_embd);
        w[4] = ggml_new_tensor_2d(c, GGML_TYPE_F32, m->n_embd, m->n_embd);
        w[5] = ggml_new_tensor_1d(c, GGML_TYPE_F32, m->n_embd);
        w[6] = ggml_new_tensor_2d(c, GGML_TYPE_F32, m->n_embd, m->n_ff);
        w[7] = ggml_new_tensor_2d(c, GGML_TYPE_F32, m->n_ff, m->n_embd);
        w[8] = ggml_new_tensor_2d(c, GGML_TYPE_F32, m->n_embd, m->n_ff);
    }
    m->buf_gpu = ggml_backend_alloc_ctx_tensors(m->ctx_gpu, gpu);
    m->buf_cpu = ggml_backend_alloc_ctx_tensors_from_buft(m->ctx_cpu, ggml_backend_cpu_buffer_type());
    ggml_backend_buffer_set_usage(m->buf_gpu, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    ggml_backend_buffer_set_usage(m->buf_cpu, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
}

static struct ggml_cgraph * build_graph(struct model * m, struct ggml_context * ctx) {
    const int E = m->n_embd, H = m->n_head, D = E / H, T = m->n_tokens;
    struct ggml_tensor * inp = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, E, T);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, T);
    struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, m->n_kv, T);
    ggml_set_input(inp);
    ggml_set_input(pos);
    ggml_set_input(mask);
    struct ggml_tensor * x = inp;
    for (int l = 0; l < m->n_layer; l++) {
        struct ggml_tensor ** w = m->w + 9 * l;
        struct ggml_tensor * cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-5f), w[0]);
        struct ggml_tensor * q = ggml_rope(ctx, ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w[1], cur), D, H, T), pos, D, 0);
        struct ggml_tensor * k = ggml_rope(ctx, ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w[2], cur), D, H, T), pos, D, 0);
        struct ggml_tensor * v = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w[3], cur), D, H, T);
        // attention over a window of n_kv positions built from the current tokens
        struct ggml_tensor * kk = ggml_cont(ctx, ggml_permute(ctx, ggml_repeat_4d(ctx, k, D, H, m->n_kv, 1), 0, 2, 1, 3));
        struct ggml_tensor * qq = ggml_permute(ctx, q, 0, 2, 1, 3);
        struct ggml_tensor * kq = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, kk, qq), mask, 1.0f / 8.0f, 0.0f);
        struct ggml_tensor * vv = ggml_cont(ctx, ggml_permute(ctx, ggml_repeat_4d(ctx, v, D, H, m->n_kv, 1), 1, 2, 0, 3));
        struct ggml_tensor * kqv = ggml_mul_mat(ctx, vv, kq);
        struct ggml_tensor * merged = ggml_cont_2d(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3), E, T);
        x = ggml_add(ctx, ggml_mul_mat(ctx, w[4], merged), x);
        cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-5f), w[5]);
        struct ggml_tensor * g = ggml_silu(ctx, ggml_mul_mat(ctx, w[6], cur));
        struct ggml_tensor * u = ggml_mul_mat(ctx, w[8], cur);
        x = ggml_add(ctx, ggml_mul_mat(ctx, w[7], ggml_mul(ctx, g, u)), x);
    }
    ggml_set_output(x);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 8192, false);
    ggml_build_forward_expand(gf, x);
    return gf;
}

static struct ggml_context * graph_ctx(void) {
    struct ggml_init_params p = { 16384 * ggml_tensor_overhead() + ggml_graph_overhead_custom(8192, false), NULL, true };
    return ggml_init(p);
}

// the ops the GPU takes unless "all"
static const enum ggml_op gpu_ops[] = {
    GGML_OP_NONE, GGML_OP_VIEW, GGML_OP_RESHAPE, GGML_OP_PERMUTE, GGML_OP_TRANSPOSE,
    GGML_OP_ADD, GGML_OP_MUL, GGML_OP_SCALE, GGML_OP_DUP, GGML_OP_CONT, GGML_OP_CPY,
    GGML_OP_MUL_MAT, GGML_OP_GET_ROWS,
};

int main(int argc, char ** argv) {
    const int n_layer  = argc > 1 ? atoi(argv[1]) : 16;
    const int n_tokens = argc > 2 ? atoi(argv[2]) : 8;
    const int reps     = argc > 3 ? atoi(argv[3]) : 200;
    const bool gpu_all = argc > 4 && strcmp(argv[4], "all") == 0;

    struct test_backend_config gpu_cfg = {
        .name = "GPU", .type = GGML_BACKEND_DEVICE_TYPE_GPU, .host_memory = false, .events = true, .skip_compute = true,
        .ops = gpu_all ? NULL : gpu_ops, .n_ops = gpu_all ? 0 : sizeof(gpu_ops) / sizeof(gpu_ops[0]),
    };
    struct test_backend_config cpu_cfg = {
        .name = "CPU", .type = GGML_BACKEND_DEVICE_TYPE_CPU, .host_memory = true, .events = true, .skip_compute = true,
    };
    ggml_backend_reg_t reg_gpu = test_backend_reg_new(&gpu_cfg);
    ggml_backend_reg_t reg_cpu = test_backend_reg_new(&cpu_cfg);
    ggml_backend_t gpu = ggml_backend_dev_init(test_backend_device(reg_gpu), NULL);
    ggml_backend_t cpu = ggml_backend_dev_init(test_backend_device(reg_cpu), NULL);
    ggml_backend_t backends[2] = { gpu, cpu };

    struct model m;
    model_init(&m, gpu, n_layer, n_tokens);

    // fresh scheduler: split + plan + allocate
    struct ggml_context * ctx = graph_ctx();
    struct ggml_cgraph * gf = build_graph(&m, ctx);
    const int64_t t0 = ggml_time_us();
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 8192, false, true);
    const bool ok = ggml_backend_sched_alloc_graph(sched, gf);
    const int64_t t1 = ggml_time_us();
    if (!ok) {
        fprintf(stderr, "allocation failed\n");
        return 1;
    }
    printf("graph: %d nodes, %d splits over %s + %s (n_layer %d, n_tokens %d)\n",
           ggml_graph_n_nodes(gf), ggml_backend_sched_get_n_splits(sched),
           ggml_backend_name(gpu), ggml_backend_name(cpu), n_layer, n_tokens);
    printf("compute buffers: GPU %.2f MiB, CPU %.2f MiB\n",
           (double) ggml_backend_sched_get_buffer_size(sched, gpu) / (1024.0 * 1024.0),
           (double) ggml_backend_sched_get_buffer_size(sched, cpu) / (1024.0 * 1024.0));
    printf("split+alloc (fresh scheduler) : %8.3f ms\n", (double)(t1 - t0) / 1000.0);

    // new graphs of the same shape on the warm scheduler
    int64_t t_again = INT64_MAX;
    for (int r = 0; r < reps / 4 + 1; r++) {
        ggml_free(ctx);
        ctx = graph_ctx();
        gf = build_graph(&m, ctx);
        const int64_t a = ggml_time_us();
        ggml_backend_sched_reset(sched);
        ggml_backend_sched_alloc_graph(sched, gf);
        const int64_t dt = ggml_time_us() - a;
        t_again = dt < t_again ? dt : t_again;
    }
    printf("reset+split+alloc (same shape): %8.3f ms\n", (double) t_again / 1000.0);

    // the same graph object again
    int64_t t_same = INT64_MAX;
    for (int r = 0; r < reps / 4 + 1; r++) {
        const int64_t a = ggml_time_us();
        ggml_backend_sched_reset(sched);
        ggml_backend_sched_alloc_graph(sched, gf);
        const int64_t dt = ggml_time_us() - a;
        t_same = dt < t_same ? dt : t_same;
    }
    printf("reset+split+alloc (same graph): %8.3f ms\n", (double) t_same / 1000.0);

#if !defined(BENCH_SCHED_PUBLIC_API)

    // the same graph again, timing the backends' share separately
    ggml_backend_sched_graph_compute(sched, gf);
    int64_t t_total = INT64_MAX, t_backends = INT64_MAX;
    for (int r = 0; r < reps; r++) {
        const int64_t a = ggml_time_us();
        ggml_backend_sched_graph_compute(sched, gf);
        const int64_t dt = ggml_time_us() - a;
        t_total = dt < t_total ? dt : t_total;
        // the backends alone, on the same split graphs
        const int64_t b = ggml_time_us();
        for (int s = 0; s < sched->n_splits; s++) {
            ggml_backend_graph_compute(sched->backends[sched->splits[s].backend_id], &sched->splits[s].graph);
        }
        const int64_t db = ggml_time_us() - b;
        t_backends = db < t_backends ? db : t_backends;
    }
    const double per_graph = (double) t_total, per_backend = (double) t_backends;
    printf("compute (same graph again)    : %8.3f ms per graph, of which backends %.3f ms\n",
           per_graph / 1000.0, per_backend / 1000.0);
    printf("scheduler overhead per graph  : %8.1f us (%.1f ns per node)\n",
           per_graph - per_backend, (per_graph - per_backend) * 1000.0 / ggml_graph_n_nodes(gf));
#endif

    ggml_backend_sched_free(sched);
    ggml_free(ctx);
    ggml_backend_buffer_free(m.buf_gpu);
    ggml_backend_buffer_free(m.buf_cpu);
    ggml_free(m.ctx_gpu);
    ggml_free(m.ctx_cpu);
    free(m.w);
    ggml_backend_free(gpu);
    ggml_backend_free(cpu);
    test_backend_reg_free(reg_gpu);
    test_backend_reg_free(reg_cpu);
    return 0;
}
