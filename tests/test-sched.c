#define _POSIX_C_SOURCE 200809L
// test-sched: the multi-backend scheduler on hand-drawn graphs.
//
// Three test backends stand in for real devices (tests/backend-test):
//   GPU   device memory (never reachable by pointer), ADD, MUL, MUL_MAT, copies
//   ACC   host memory, MUL_MAT only (like BLAS); shares the CPU's buffer type
//   CPU   host memory, device type CPU, everything the test backend computes
// For each graph the expected backend of every node and the splits are worked
// out by hand from the rules (see the comments), and results are compared
// with a double-precision reference and with a run on the CPU alone.

#include "ggml.h"
#include "ggml-impl.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "testing.h"
#include "backend-test/test-backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct env {
    ggml_backend_reg_t reg_gpu, reg_acc, reg_cpu;
    ggml_backend_t gpu, acc, cpu;
};

static const enum ggml_op k_gpu_ops[] = {
    GGML_OP_NONE, GGML_OP_VIEW, GGML_OP_RESHAPE, GGML_OP_PERMUTE, GGML_OP_TRANSPOSE,
    GGML_OP_ADD, GGML_OP_MUL, GGML_OP_MUL_MAT, GGML_OP_CPY, GGML_OP_DUP, GGML_OP_CONT,
};
static const enum ggml_op k_acc_ops[] = {
    GGML_OP_NONE, GGML_OP_VIEW, GGML_OP_RESHAPE, GGML_OP_PERMUTE, GGML_OP_TRANSPOSE, GGML_OP_MUL_MAT,
};

static void env_init(struct env * e, int64_t gpu_offload_min_batch) {
    struct test_backend_config gpu = {
        .name = "GPU", .type = GGML_BACKEND_DEVICE_TYPE_GPU, .host_memory = false, .events = true,
        .ops = k_gpu_ops, .n_ops = sizeof(k_gpu_ops) / sizeof(k_gpu_ops[0]),
        .offload_min_batch = gpu_offload_min_batch,
    };
    struct test_backend_config acc = {
        .name = "ACC", .type = GGML_BACKEND_DEVICE_TYPE_ACCEL, .host_memory = true,
        .ops = k_acc_ops, .n_ops = sizeof(k_acc_ops) / sizeof(k_acc_ops[0]),
    };
    struct test_backend_config cpu = {
        .name = "CPUT", .type = GGML_BACKEND_DEVICE_TYPE_CPU, .host_memory = true, .events = true,
    };
    e->reg_gpu = test_backend_reg_new(&gpu);
    e->reg_acc = test_backend_reg_new(&acc);
    e->reg_cpu = test_backend_reg_new(&cpu);
    e->gpu = ggml_backend_dev_init(test_backend_device(e->reg_gpu), NULL);
    e->acc = ggml_backend_dev_init(test_backend_device(e->reg_acc), NULL);
    e->cpu = ggml_backend_dev_init(test_backend_device(e->reg_cpu), NULL);
}

static void env_free(struct env * e) {
    ggml_backend_free(e->gpu);
    ggml_backend_free(e->acc);
    ggml_backend_free(e->cpu);
    test_backend_reg_free(e->reg_gpu);
    test_backend_reg_free(e->reg_acc);
    test_backend_reg_free(e->reg_cpu);
}

static struct ggml_context * ctx_new(size_t n_tensors) {
    struct ggml_init_params p = { n_tensors * ggml_tensor_overhead() + ggml_graph_overhead_custom(4096, false), NULL, true };
    return ggml_init(p);
}

static void fill(struct ggml_tensor * t, float scale, float offset) {
    const int64_t n = ggml_nelements(t);
    float * v = (float *) malloc(sizeof(float) * (size_t) n);
    for (int64_t i = 0; i < n; i++) {
        v[i] = offset + scale * (float)((i * 7919) % 23 - 11) / 11.0f;
    }
    ggml_backend_tensor_set(t, v, 0, sizeof(float) * (size_t) n);
    free(v);
}

static void get_all(const struct ggml_tensor * t, float * out) {
    ggml_backend_tensor_get(t, out, 0, ggml_nbytes(t));
}

static const char * backend_of(ggml_backend_sched_t sched, struct ggml_tensor * t) {
    ggml_backend_t b = ggml_backend_sched_get_tensor_backend(sched, t);
    return b ? ggml_backend_name(b) : "NULL";
}

#define CHECK_BACKEND(sched, t, want) \
    CHECK_MSG(strcmp(backend_of(sched, t), want) == 0, "%s runs on %s, expected %s", (t)->name, backend_of(sched, t), want)

// y[i][j] = sum_k a[i][k] b[j][k]  (ggml_mul_mat: a [k, n], b [k, m] -> [n, m])
static void ref_mul_mat(const double * a, const double * b, double * y, int k, int n, int m) {
    for (int j = 0; j < m; j++) {
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int t = 0; t < k; t++) {
                s += a[i*k + t] * b[j*k + t];
            }
            y[j*n + i] = s;
        }
    }
}

//
// scenario A: weights on two devices, an op only the CPU has
//
//   x  input [8,4]                      -> CPU  (1.inp)
//   w1 weights [8,6] in GPU memory, b1 [6] in GPU memory, w2 [6,5] in host memory
//   h1 = mul_mat(w1, x)      [6,4]      -> GPU  (1.wgt: w1 is in GPU memory)
//   h2 = scale(h1, 0.5)                 -> CPU  (only the CPU has SCALE: 3.best)
//   h3 = add(h2, b1)                    -> GPU  (1.wgt: b1 is in GPU memory)
//   h4 = mul_mat(w2, h3)     [5,4]      -> ACC  (1.wgt: the first backend that can read
//                                                host weights and multiply)
//   h5 = mul(h4, h4)                    -> CPU  (3.best: GPU supports MUL but cannot read
//                                                h4, which is in host memory)
// Splits: GPU[h1] CPU[h2] GPU[h3] ACC[h4] CPU[h5] = 5, with one input each
// except the last (h4 is in host memory the CPU reads directly):
//   GPU <- x, CPU <- h1, GPU <- h2, ACC <- h3.
//

struct scenario_a {
    struct ggml_context * ctx_w, * ctx_w2, * ctx;
    ggml_backend_buffer_t buf_w, buf_w2;
    struct ggml_tensor * w1, * b1, * w2, * x, * h1, * h2, * h3, * h4, * h5;
    struct ggml_cgraph * gf;
};

static void scenario_a_build_on(struct scenario_a * s, struct env * e, bool gpu_weights) {
    s->ctx_w = ctx_new(4);
    s->w1 = ggml_new_tensor_2d(s->ctx_w, GGML_TYPE_F32, 8, 6);
    s->b1 = ggml_new_tensor_1d(s->ctx_w, GGML_TYPE_F32, 6);
    ggml_set_name(s->w1, "w1");
    ggml_set_name(s->b1, "b1");
    s->buf_w = gpu_weights ? ggml_backend_alloc_ctx_tensors(s->ctx_w, e->gpu)
                           : ggml_backend_alloc_ctx_tensors_from_buft(s->ctx_w, ggml_backend_cpu_buffer_type());
    ggml_backend_buffer_set_usage(s->buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    fill(s->w1, 0.5f, 0.1f);
    fill(s->b1, 1.0f, -0.2f);

    s->ctx_w2 = ctx_new(2);
    s->w2 = ggml_new_tensor_2d(s->ctx_w2, GGML_TYPE_F32, 6, 5);
    ggml_set_name(s->w2, "w2");
    s->buf_w2 = ggml_backend_alloc_ctx_tensors_from_buft(s->ctx_w2, ggml_backend_cpu_buffer_type());
    ggml_backend_buffer_set_usage(s->buf_w2, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    fill(s->w2, 0.25f, 0.0f);

    s->ctx = ctx_new(32);
    s->x = ggml_new_tensor_2d(s->ctx, GGML_TYPE_F32, 8, 4);
    ggml_set_name(s->x, "x");
    ggml_set_input(s->x);
    s->h1 = ggml_mul_mat(s->ctx, s->w1, s->x);       ggml_set_name(s->h1, "h1");
    s->h2 = ggml_scale(s->ctx, s->h1, 0.5f);         ggml_set_name(s->h2, "h2");
    s->h3 = ggml_add(s->ctx, s->h2, s->b1);          ggml_set_name(s->h3, "h3");
    s->h4 = ggml_mul_mat(s->ctx, s->w2, s->h3);      ggml_set_name(s->h4, "h4");
    s->h5 = ggml_mul(s->ctx, s->h4, s->h4);          ggml_set_name(s->h5, "h5");
    ggml_set_output(s->h5);
    s->gf = ggml_new_graph(s->ctx);
    ggml_build_forward_expand(s->gf, s->h5);
}

static void scenario_a_build(struct scenario_a * s, struct env * e) {
    scenario_a_build_on(s, e, true);
}

static void scenario_a_free(struct scenario_a * s) {
    ggml_backend_buffer_free(s->buf_w);
    ggml_backend_buffer_free(s->buf_w2);
    ggml_free(s->ctx_w);
    ggml_free(s->ctx_w2);
    ggml_free(s->ctx);
}

// the expected output, in double precision from the stored values
static void scenario_a_reference(struct scenario_a * s, const float * xv, double * out) {
    double w1[48], b1[6], w2[30], x[32], h1[24], h3[24], h4[20];
    float tmp[48];
    get_all(s->w1, tmp); for (int i = 0; i < 48; i++) w1[i] = tmp[i];
    get_all(s->b1, tmp); for (int i = 0; i < 6; i++)  b1[i] = tmp[i];
    get_all(s->w2, tmp); for (int i = 0; i < 30; i++) w2[i] = tmp[i];
    for (int i = 0; i < 32; i++) x[i] = xv[i];
    ref_mul_mat(w1, x, h1, 8, 6, 4);
    for (int j = 0; j < 4; j++) for (int i = 0; i < 6; i++) h3[j*6 + i] = 0.5 * h1[j*6 + i] + b1[i];
    ref_mul_mat(w2, h3, h4, 6, 5, 4);
    for (int i = 0; i < 20; i++) out[i] = h4[i] * h4[i];
}

static void test_scenario_a(void) {
    struct env e;
    env_init(&e, 0);
    struct scenario_a s;
    scenario_a_build(&s, &e);

    // ACC and CPU share the host buffer type, as BLAS and CPU do upstream
    ggml_backend_t backends[3] = { e.gpu, e.acc, e.cpu };
    ggml_backend_buffer_type_t bufts[3] = {
        ggml_backend_get_default_buffer_type(e.gpu), ggml_backend_cpu_buffer_type(), ggml_backend_cpu_buffer_type() };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, bufts, 3, 256, false, true);
    CHECK(sched != NULL);
    CHECK_EQ_INT(ggml_backend_sched_get_n_backends(sched), 3);
    CHECK(ggml_backend_sched_get_backend(sched, 1) == e.acc);
    CHECK(ggml_backend_sched_get_buffer_type(sched, e.acc) == ggml_backend_cpu_buffer_type());

    CHECK(ggml_backend_sched_alloc_graph(sched, s.gf));
    CHECK_EQ_INT(ggml_backend_sched_get_n_splits(sched), 5);
    CHECK_BACKEND(sched, s.x,  "CPUT");
    CHECK_BACKEND(sched, s.h1, "GPU");
    CHECK_BACKEND(sched, s.h2, "CPUT");
    CHECK_BACKEND(sched, s.h3, "GPU");
    CHECK_BACKEND(sched, s.h4, "ACC");
    CHECK_BACKEND(sched, s.h5, "CPUT");

    // every run: inputs copied once per split, the weights never
    float xv[32];
    for (int run = 0; run < 3; run++) {
        for (int i = 0; i < 32; i++) {
            xv[i] = (float)((i * 13 + run * 5) % 17 - 8) / 8.0f;
        }
        ggml_backend_tensor_set(s.x, xv, 0, sizeof(xv));
        test_backend_reset_counters(ggml_backend_get_device(e.gpu));
        test_backend_reset_counters(ggml_backend_get_device(e.acc));
        CHECK(ggml_backend_sched_graph_compute(sched, s.gf) == GGML_STATUS_SUCCESS);

        struct test_backend_counters cg, ca;
        test_backend_get_counters(ggml_backend_get_device(e.gpu), &cg);
        test_backend_get_counters(ggml_backend_get_device(e.acc), &ca);
        // into the GPU: x (8*4 floats) and h2 (6*4 floats); out of it: h1 and h3 (6*4 each)
        CHECK_EQ_INT(cg.bytes_set, (8*4 + 6*4) * 4);
        CHECK_EQ_INT(cg.bytes_get, (6*4 + 6*4) * 4);
        CHECK_EQ_INT(cg.n_nodes_computed, 2);
        CHECK_EQ_INT(ca.n_nodes_computed, 1);

        double ref[20];
        float got[20];
        scenario_a_reference(&s, xv, ref);
        get_all(s.h5, got);
        double worst = 0;
        for (int i = 0; i < 20; i++) {
            const double err = fabs(got[i] - ref[i]) / (1e-6 + fabs(ref[i]));
            worst = err > worst ? err : worst;
        }
        CHECK_MSG(worst < 1e-5, "run %d: relative error %g", run, worst);
    }

    ggml_backend_sched_free(sched);
    scenario_a_free(&s);
    env_free(&e);
}

// Scenario A on the CPU alone gives bit-identical results (same naive kernels)
static void test_cpu_only_equal(void) {
    struct env e;
    env_init(&e, 0);
    float out_multi[20], out_cpu[20];
    for (int k = 0; k < 2; k++) {
        struct scenario_a s;
        scenario_a_build_on(&s, &e, k == 0); // the CPU alone needs its weights in host memory
        ggml_backend_t multi[3] = { e.gpu, e.acc, e.cpu };
        ggml_backend_t * backends = k == 0 ? multi : &e.cpu;
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, k == 0 ? 3 : 1, 256, false, true);
        CHECK(ggml_backend_sched_alloc_graph(sched, s.gf));
        if (k == 1) {
            CHECK_EQ_INT(ggml_backend_sched_get_n_splits(sched), 1);
        }
        float xv[32];
        for (int i = 0; i < 32; i++) {
            xv[i] = (float)(i % 9 - 4) / 3.0f;
        }
        ggml_backend_tensor_set(s.x, xv, 0, sizeof(xv));
        CHECK(ggml_backend_sched_graph_compute(sched, s.gf) == GGML_STATUS_SUCCESS);
        get_all(s.h5, k == 0 ? out_multi : out_cpu);
        ggml_backend_sched_free(sched);
        scenario_a_free(&s);
    }
    CHECK(memcmp(out_multi, out_cpu, sizeof(out_cpu)) == 0);
    env_free(&e);
}

//
// scenario B: op offload. Weights in host memory; the GPU asks for ops with
// at least 16 rows of input (offload_op).
//   y = mul_mat(w, x) with x [32, 4]  -> CPU (1.wgt: few rows, the GPU does not ask)
//   y = mul_mat(w, x) with x [32, 64] -> GPU (1.off), reading a copy of w
// With op_offload = false the big one stays on the CPU.
//

static void test_offload(void) {
    for (int offload = 0; offload <= 1; offload++) {
        for (int big = 0; big <= 1; big++) {
            struct env e;
            env_init(&e, 16);
            struct ggml_context * ctx_w = ctx_new(1);
            struct ggml_tensor * w = ggml_new_tensor_2d(ctx_w, GGML_TYPE_F32, 32, 8);
            ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors_from_buft(ctx_w, ggml_backend_cpu_buffer_type());
            ggml_backend_buffer_set_usage(buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
            fill(w, 1.0f, 0.0f);

            struct ggml_context * ctx = ctx_new(8);
            struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, big ? 64 : 4);
            ggml_set_input(x);
            struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
            struct ggml_cgraph * gf = ggml_new_graph(ctx);
            ggml_build_forward_expand(gf, y);

            ggml_backend_t backends[2] = { e.gpu, e.cpu };
            ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 64, false, offload);
            CHECK(ggml_backend_sched_alloc_graph(sched, gf));
            const bool on_gpu = offload && big;
            CHECK_BACKEND(sched, y, on_gpu ? "GPU" : "CPUT");
            fill(x, 0.5f, 0.25f);

            test_backend_reset_counters(ggml_backend_get_device(e.gpu));
            CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS);
            struct test_backend_counters c;
            test_backend_get_counters(ggml_backend_get_device(e.gpu), &c);
            // offloaded: the weights (32*8 floats) and x go to the GPU every run
            CHECK_EQ_INT(c.bytes_set, on_gpu ? (32*8 + 32*64) * 4 : 0);

            // check the numbers against a double-precision product
            float wv[256], xv[32*64], yv[8*64];
            get_all(w, wv);
            get_all(x, xv);
            get_all(y, yv);
            double worst = 0;
            for (int j = 0; j < x->ne[1]; j++) {
                for (int i = 0; i < 8; i++) {
                    double r = 0;
                    for (int t = 0; t < 32; t++) {
                        r += (double) wv[i*32 + t] * xv[j*32 + t];
                    }
                    worst = fmax(worst, fabs(yv[j*8 + i] - r));
                }
            }
            CHECK(worst < 1e-4);

            ggml_backend_sched_free(sched);
            ggml_backend_buffer_free(buf_w);
            ggml_free(ctx_w);
            ggml_free(ctx);
            env_free(&e);
        }
    }
}

//
// scenario C: user pins and views
//   a, b inputs [16] -> CPU (1.inp)
//   s = add(a, b)                 pinned to the GPU by the user
//   v = view_1d(s, 8, 8 floats)   a view: follows s to the GPU
//   m = mul(v, v)                 -> GPU (2.sup: expanded down from s)
//   t = scale(m, 3)               -> CPU (only the CPU has SCALE)
// Splits: GPU[s, v, m] CPU[t] = 2; GPU inputs a, b; CPU input m.
//

static void test_pin_and_views(void) {
    struct env e;
    env_init(&e, 0);
    struct ggml_context * ctx = ctx_new(16);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    ggml_set_input(a);
    ggml_set_input(b);
    struct ggml_tensor * sum = ggml_add(ctx, a, b);
    struct ggml_tensor * v = ggml_view_1d(ctx, sum, 8, 8 * sizeof(float));
    struct ggml_tensor * m = ggml_mul(ctx, v, v);
    struct ggml_tensor * t = ggml_scale(ctx, m, 3.0f);
    ggml_set_name(sum, "sum");
    ggml_set_name(m, "m");
    ggml_set_name(t, "t");
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, t);

    ggml_backend_t backends[2] = { e.gpu, e.cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 64, false, true);
    ggml_backend_sched_set_tensor_backend(sched, sum, e.gpu);
    CHECK(ggml_backend_sched_alloc_graph(sched, gf));
    CHECK_EQ_INT(ggml_backend_sched_get_n_splits(sched), 2);
    CHECK_BACKEND(sched, sum, "GPU");
    CHECK_BACKEND(sched, v, "GPU");
    CHECK_BACKEND(sched, m, "GPU");
    CHECK_BACKEND(sched, t, "CPUT");

    float av[16], bv[16], tv[8];
    for (int i = 0; i < 16; i++) {
        av[i] = (float) i;
        bv[i] = 0.5f * (float) i - 3.0f;
    }
    ggml_backend_tensor_set(a, av, 0, sizeof(av));
    ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
    CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS);
    get_all(t, tv);
    for (int i = 0; i < 8; i++) {
        const double s8 = av[8 + i] + bv[8 + i];
        CHECK_NEAR(tv[i], 3.0 * s8 * s8, 1e-4);
    }

    // without the pin the ADD would stay on the CPU: nothing runs on the GPU
    ggml_backend_sched_reset(sched);
    struct ggml_context * ctx2 = ctx_new(16);
    struct ggml_tensor * a2 = ggml_new_tensor_1d(ctx2, GGML_TYPE_F32, 16);
    ggml_set_input(a2);
    struct ggml_tensor * t2 = ggml_scale(ctx2, ggml_mul(ctx2, ggml_add(ctx2, a2, a2), a2), 2.0f);
    struct ggml_cgraph * gf2 = ggml_new_graph(ctx2);
    ggml_build_forward_expand(gf2, t2);
    CHECK(ggml_backend_sched_alloc_graph(sched, gf2));
    CHECK_EQ_INT(ggml_backend_sched_get_n_splits(sched), 1);
    CHECK_BACKEND(sched, t2->src[0], "CPUT");

    ggml_backend_sched_free(sched);
    ggml_free(ctx);
    ggml_free(ctx2);
    env_free(&e);
}

//
// pass 3's "best backend" for a node nothing has reached: the backend that
// supports the node and can read most of its sources; on a tie, the one of
// higher priority.
//   a, b leafs [8] with no memory and no input flag -> nothing assigned in pass 1
//   c = add(a, b): no neighbour is assigned, so expansion passes it by
//   (i)   backends GPU, CPUT: both support ADD and read 0 of its sources
//         (a and b are unassigned) -> GPU
//   (ii)  backends GPU2, GPU, CPUT: three-way tie at 0 -> GPU2
//   (iii) a pinned to CPUT, b pinned to GPU: GPU reads b, CPUT reads a,
//         1 each -> GPU, with a copied to it
// a and b follow c (4.cur) except where pinned; the result is a + b.
//

static void test_best_backend_tie(void) {
    struct env e;
    env_init(&e, 0);
    const struct test_backend_config gpu2_config = {
        .name = "GPU2", .type = GGML_BACKEND_DEVICE_TYPE_GPU, .host_memory = false,
        .ops = k_gpu_ops, .n_ops = sizeof(k_gpu_ops) / sizeof(k_gpu_ops[0]),
    };
    ggml_backend_reg_t reg_gpu2 = test_backend_reg_new(&gpu2_config);
    ggml_backend_t gpu2 = ggml_backend_dev_init(test_backend_device(reg_gpu2), NULL);

    for (int variant = 0; variant < 3; variant++) {
        struct ggml_context * ctx = ctx_new(8);
        struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
        struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
        struct ggml_tensor * c = ggml_add(ctx, a, b);
        ggml_set_name(a, "a");
        ggml_set_name(b, "b");
        ggml_set_name(c, "c");
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, c);

        ggml_backend_t two[2]   = { e.gpu, e.cpu };
        ggml_backend_t three[3] = { gpu2, e.gpu, e.cpu };
        ggml_backend_sched_t sched = variant == 1 ? ggml_backend_sched_new(three, NULL, 3, 64, false, true)
                                                  : ggml_backend_sched_new(two, NULL, 2, 64, false, true);
        if (variant == 2) {
            ggml_backend_sched_set_tensor_backend(sched, a, e.cpu);
            ggml_backend_sched_set_tensor_backend(sched, b, e.gpu);
        }
        CHECK(ggml_backend_sched_alloc_graph(sched, gf));
        CHECK_BACKEND(sched, c, variant == 1 ? "GPU2" : "GPU");
        CHECK_EQ_INT(ggml_backend_sched_get_n_splits(sched), 1);
        CHECK_BACKEND(sched, a, variant == 1 ? "GPU2" : variant == 2 ? "CPUT" : "GPU");

        float av[8], bv[8], cv[8];
        for (int i = 0; i < 8; i++) {
            av[i] = 0.25f * (float) i - 1.0f;
            bv[i] = (float)(i * i) / 8.0f;
        }
        ggml_backend_tensor_set(a, av, 0, sizeof(av));
        ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
        CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS);
        get_all(c, cv);
        for (int i = 0; i < 8; i++) {
            CHECK_NEAR(cv[i], (double) av[i] + (double) bv[i], 1e-6);
        }
        ggml_backend_sched_free(sched);
        ggml_free(ctx);
    }

    ggml_backend_free(gpu2);
    test_backend_reg_free(reg_gpu2);
    env_free(&e);
}

//
// reuse: the same graph is computed again without splitting again; a
// changed graph is split and planned again
//

static void test_reuse_and_replan(void) {
    struct env e;
    env_init(&e, 0);
    struct scenario_a s;
    scenario_a_build(&s, &e);
    ggml_backend_t backends[3] = { e.gpu, e.acc, e.cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 3, 256, false, true);

    float xv[32];
    for (int i = 0; i < 32; i++) {
        xv[i] = (float) i / 32.0f;
    }
    CHECK(ggml_backend_sched_alloc_graph(sched, s.gf));
    ggml_backend_tensor_set(s.x, xv, 0, sizeof(xv));
    CHECK(ggml_backend_sched_graph_compute(sched, s.gf) == GGML_STATUS_SUCCESS);
    const uint64_t uid = s.gf->uid; // set by every split
    CHECK(uid != 0);
    for (int k = 0; k < 5; k++) {
        CHECK(ggml_backend_sched_graph_compute(sched, s.gf) == GGML_STATUS_SUCCESS);
    }
    CHECK(s.gf->uid == uid);
    double ref[20];
    float got[20];
    scenario_a_reference(&s, xv, ref);
    get_all(s.h5, got);
    CHECK_NEAR(got[7], ref[7], 1e-4 * fabs(ref[7]) + 1e-6);

    // grow the graph: out = h5 + h5 joins h5's CPU split (expansion from h5);
    // the graph must be split again (new uid) and give the right numbers
    // (planning again places the tensors anew: inputs are set after allocating)
    struct ggml_tensor * out = ggml_add(s.ctx, s.h5, s.h5);
    ggml_build_forward_expand(s.gf, out);
    CHECK(ggml_backend_sched_alloc_graph(sched, s.gf));
    ggml_backend_tensor_set(s.x, xv, 0, sizeof(xv));
    CHECK(ggml_backend_sched_graph_compute(sched, s.gf) == GGML_STATUS_SUCCESS);
    CHECK(s.gf->uid != uid);
    CHECK_EQ_INT(ggml_backend_sched_get_n_splits(sched), 5);
    CHECK_BACKEND(sched, out, "CPUT");
    float o[20];
    get_all(out, o);
    for (int i = 0; i < 20; i++) {
        CHECK_NEAR(o[i], 2.0 * ref[i], 2e-4 * fabs(ref[i]) + 1e-6);
    }

    ggml_backend_sched_free(sched);
    scenario_a_free(&s);
    env_free(&e);
}

//
// pipeline parallelism: 4 copies of each input, graphs computed back to back
//

static void test_pipeline(void) {
    struct env e;
    env_init(&e, 0);
    struct scenario_a s;
    scenario_a_build(&s, &e);
    ggml_backend_t backends[3] = { e.gpu, e.acc, e.cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 3, 256, true, true);
    CHECK_EQ_INT(ggml_backend_sched_get_n_copies(sched), 4);

    test_backend_reset_counters(ggml_backend_get_device(e.gpu));
    for (int run = 0; run < 9; run++) {
        ggml_backend_sched_reset(sched);
        CHECK(ggml_backend_sched_alloc_graph(sched, s.gf));
        float xv[32];
        for (int i = 0; i < 32; i++) {
            xv[i] = (float)((i + run) % 11) / 5.0f - 1.0f;
        }
        ggml_backend_tensor_set(s.x, xv, 0, sizeof(xv));
        CHECK(ggml_backend_sched_graph_compute_async(sched, s.gf) == GGML_STATUS_SUCCESS);
        ggml_backend_sched_synchronize(sched);
        double ref[20];
        float got[20];
        scenario_a_reference(&s, xv, ref);
        get_all(s.h5, got);
        double worst = 0;
        for (int i = 0; i < 20; i++) {
            worst = fmax(worst, fabs(got[i] - ref[i]) / (1e-6 + fabs(ref[i])));
        }
        CHECK_MSG(worst < 1e-5, "run %d: relative error %g", run, worst);
    }
    struct test_backend_counters c;
    test_backend_get_counters(ggml_backend_get_device(e.gpu), &c);
    CHECK(c.n_event_record >= 9 * 2); // both GPU splits record their copy's event
    ggml_backend_sched_free(sched);
    scenario_a_free(&s);
    env_free(&e);
}

//
// eval callback: ask for every node, observe h2 and h4, stop after h4
//

struct eval_log {
    char asked[16][GGML_MAX_NAME];
    int  n_asked;
    char seen[16][GGML_MAX_NAME];
    int  n_seen;
    bool stop_after_h4;
};

static bool eval_cb(struct ggml_tensor * t, bool ask, void * user) {
    struct eval_log * log = (struct eval_log *) user;
    const bool wanted = strcmp(t->name, "h2") == 0 || strcmp(t->name, "h4") == 0;
    if (ask) {
        snprintf(log->asked[log->n_asked++], GGML_MAX_NAME, "%s", t->name);
        return wanted;
    }
    snprintf(log->seen[log->n_seen++], GGML_MAX_NAME, "%s", t->name);
    return !(log->stop_after_h4 && strcmp(t->name, "h4") == 0);
}

static void test_eval_callback(void) {
    for (int stop = 0; stop <= 1; stop++) {
        struct env e;
        env_init(&e, 0);
        struct scenario_a s;
        scenario_a_build(&s, &e);
        ggml_backend_t backends[3] = { e.gpu, e.acc, e.cpu };
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 3, 256, false, true);
        struct eval_log log;
        memset(&log, 0, sizeof(log));
        log.stop_after_h4 = stop;
        ggml_backend_sched_set_eval_callback(sched, eval_cb, &log);
        CHECK(ggml_backend_sched_alloc_graph(sched, s.gf));
        fill(s.x, 1.0f, 0.0f);
        test_backend_reset_counters(ggml_backend_get_device(e.cpu));
        CHECK(ggml_backend_sched_graph_compute(sched, s.gf) == GGML_STATUS_SUCCESS);

        CHECK_EQ_INT(log.n_seen, 2);
        CHECK(strcmp(log.seen[0], "h2") == 0 && strcmp(log.seen[1], "h4") == 0);
        // every computed node is asked about exactly once, in order
        const char * order[] = { "h1", "h2", "h3", "h4", "h5" };
        CHECK_EQ_INT(log.n_asked, stop ? 4 : 5);
        for (int i = 0; i < log.n_asked && i < 5; i++) {
            CHECK(strcmp(log.asked[i], order[i]) == 0);
        }
        struct test_backend_counters c;
        test_backend_get_counters(ggml_backend_get_device(e.cpu), &c);
        // h2 always runs on the CPU; h5 only when the callback did not stop
        CHECK_EQ_INT(c.n_nodes_computed, stop ? 1 : 2);

        ggml_backend_sched_free(sched);
        scenario_a_free(&s);
        env_free(&e);
    }
}

//
// no fixed limits: 6 backends, hundreds of splits, a split with 60 inputs
//

static void test_no_limits(void) {
    const int n_gpus = 5;
    ggml_backend_reg_t regs[5];
    ggml_backend_t backends[6];
    for (int i = 0; i < n_gpus; i++) {
        char name[16];
        snprintf(name, sizeof(name), "GPU%d", i);
        struct test_backend_config cfg = {
            .name = name, .type = GGML_BACKEND_DEVICE_TYPE_GPU, .host_memory = false,
            .ops = k_gpu_ops, .n_ops = sizeof(k_gpu_ops) / sizeof(k_gpu_ops[0]),
        };
        regs[i] = test_backend_reg_new(&cfg);
        backends[i] = ggml_backend_dev_init(test_backend_device(regs[i]), NULL);
    }
    struct test_backend_config cpu_cfg = { .name = "CPUT", .type = GGML_BACKEND_DEVICE_TYPE_CPU, .host_memory = true };
    ggml_backend_reg_t reg_cpu = test_backend_reg_new(&cpu_cfg);
    backends[n_gpus] = ggml_backend_dev_init(test_backend_device(reg_cpu), NULL);

    // a chain alternating between a GPU (add, pinned round-robin) and the CPU (scale)
    const int n_steps = 300;
    struct ggml_context * ctx = ctx_new(4 * (size_t) n_steps + 256);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_input(x);
    struct ggml_tensor * cur = x;
    struct ggml_tensor ** adds = (struct ggml_tensor **) malloc(sizeof(*adds) * (size_t) n_steps);
    for (int k = 0; k < n_steps; k++) {
        cur = ggml_add(ctx, cur, x);
        adds[k] = cur;
        cur = ggml_scale(ctx, cur, 0.5f);
    }
    // then one GPU node reading 60 CPU tensors: a split with 60 inputs
    struct ggml_tensor * fan = ggml_scale(ctx, x, 1.0f);
    struct ggml_tensor * acc = NULL;
    for (int k = 0; k < 60; k++) {
        struct ggml_tensor * leaf = ggml_scale(ctx, x, (float) k);
        acc = acc ? ggml_add(ctx, acc, leaf) : ggml_add(ctx, fan, leaf);
    }
    struct ggml_tensor * out = ggml_add(ctx, cur, acc);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 4096, false);
    ggml_build_forward_expand(gf, out);

    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, n_gpus + 1, 4096, false, true);
    for (int k = 0; k < n_steps; k++) {
        ggml_backend_sched_set_tensor_backend(sched, adds[k], backends[k % n_gpus]);
    }
    CHECK(ggml_backend_sched_alloc_graph(sched, gf));
    // 300 GPU splits and 300 CPU splits, then the fan-in: the CPU computes the
    // scales; the adds of the fan-in expand from the last GPU add... whatever the
    // exact count, it is above upstream's old fixed limits
    CHECK(ggml_backend_sched_get_n_splits(sched) >= 2 * n_steps);

    const float xv[4] = { 1.0f, -2.0f, 0.25f, 8.0f };
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS);
    float ov[4];
    get_all(out, ov);
    // chain: c <- (c + x) / 2 from c = x converges as c_k = x (constant); fan-in:
    // x + sum_k k*x = x (1 + 1770)
    for (int i = 0; i < 4; i++) {
        CHECK_NEAR(ov[i], xv[i] + xv[i] * 1771.0, 1e-3 * fabs(xv[i] * 1772.0));
    }

    ggml_backend_sched_free(sched);
    free(adds);
    ggml_free(ctx);
    for (int i = 0; i <= n_gpus; i++) {
        ggml_backend_free(backends[i]);
    }
    for (int i = 0; i < n_gpus; i++) {
        test_backend_reg_free(regs[i]);
    }
    test_backend_reg_free(reg_cpu);
}

//
// a graph larger than the size given at creation is an error, not a crash
//

static int g_log_errors;
static void count_errors(enum ggml_log_level level, const char * text, void * user) {
    (void) text;
    (void) user;
    if (level == GGML_LOG_LEVEL_ERROR) {
        g_log_errors++;
    }
}

static void test_too_large(void) {
    struct env e;
    env_init(&e, 0);
    struct ggml_context * ctx = ctx_new(200);
    struct ggml_tensor * cur = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_input(cur);
    for (int k = 0; k < 100; k++) {
        cur = ggml_scale(ctx, cur, 1.0f);
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, cur);

    ggml_backend_t backends[2] = { e.gpu, e.cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 16, false, true);
    ggml_log_set(count_errors, NULL);
    g_log_errors = 0;
    CHECK(!ggml_backend_sched_alloc_graph(sched, gf));
    CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_ALLOC_FAILED);
    CHECK(!ggml_backend_sched_reserve(sched, gf));
    ggml_log_set(NULL, NULL);
    CHECK_EQ_INT(g_log_errors, 3);

    ggml_backend_sched_free(sched);
    ggml_free(ctx);
    env_free(&e);
}

//
// reserve: buffers sized for a worst case; a smaller graph then fits
//

static void test_reserve(void) {
    struct env e;
    env_init(&e, 0);
    ggml_backend_t backends[2] = { e.gpu, e.cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, false, true);

    // a weight in GPU memory draws the ADD to the GPU (pins would not survive
    // ggml_backend_sched_reserve_size, which resets the scheduler first)
    struct ggml_context * ctx_w = ctx_new(1);
    struct ggml_tensor * wg = ggml_new_tensor_1d(ctx_w, GGML_TYPE_F32, 1);
    ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors(ctx_w, e.gpu);
    ggml_backend_buffer_set_usage(buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    size_t sizes_big[2] = { 0, 0 };
    for (int pass = 0; pass < 2; pass++) {
        const int64_t n = pass == 0 ? 1024 : 256;
        struct ggml_context * ctx = ctx_new(16);
        struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
        ggml_set_input(a);
        struct ggml_tensor * g = ggml_add(ctx, a, wg);  // GPU: an input copy of a, then g
        struct ggml_tensor * c = ggml_scale(ctx, g, 2.0f); // CPU: a copy of g, then c
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, c);
        if (pass == 0) {
            size_t sizes[2] = { 0, 0 };
            ggml_backend_sched_reserve_size(sched, gf, sizes);
            CHECK(ggml_backend_sched_reserve(sched, gf));
            sizes_big[0] = ggml_backend_sched_get_buffer_size(sched, e.gpu);
            sizes_big[1] = ggml_backend_sched_get_buffer_size(sched, e.cpu);
            CHECK_EQ_INT(sizes[0], sizes_big[0]);
            CHECK_EQ_INT(sizes[1], sizes_big[1]);
            // GPU: a's copy and g (4 KiB each); CPU: a, g's copy and c
            // GPU: the copy of a (4 KiB), with g computed in place over it (the
            // copy has no other reader); CPU: the input a (4 KiB, never reused)
            // and the copy of g, with c computed in place over that copy
            CHECK_EQ_INT(sizes_big[0], 4096);
            CHECK_EQ_INT(sizes_big[1], 8192);
        } else {
            CHECK(ggml_backend_sched_alloc_graph(sched, gf));
            // the smaller graph fits the reserved buffers: no new allocation
            CHECK_EQ_INT(ggml_backend_sched_get_buffer_size(sched, e.gpu), sizes_big[0]);
            CHECK_EQ_INT(ggml_backend_sched_get_buffer_size(sched, e.cpu), sizes_big[1]);
        }
        ggml_backend_sched_reset(sched);
        ggml_free(ctx);
    }
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(buf_w);
    ggml_free(ctx_w);
    env_free(&e);
}

//
// GGML_SCHED_DEBUG: the splits, and for each node its backend and the cause
//

static char   g_debug_text[16384];
static size_t g_debug_len;

static void capture_debug(enum ggml_log_level level, const char * text, void * user) {
    (void) user;
    (void) level;
    const size_t n = strlen(text);
    if (g_debug_len + n < sizeof(g_debug_text)) {
        memcpy(g_debug_text + g_debug_len, text, n + 1);
        g_debug_len += n;
    }
}

static void test_debug_output(void) {
    for (int level = 1; level <= 2; level++) {
        struct env e;
        env_init(&e, 0);
        struct scenario_a s;
        scenario_a_build(&s, &e);
        char value[2] = { (char)('0' + level), 0 };
        setenv("GGML_SCHED_DEBUG", value, 1);
        ggml_backend_t backends[3] = { e.gpu, e.acc, e.cpu };
        ggml_backend_buffer_type_t bufts[3] = {
            ggml_backend_get_default_buffer_type(e.gpu), ggml_backend_cpu_buffer_type(), ggml_backend_cpu_buffer_type() };
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, bufts, 3, 256, false, true);
        unsetenv("GGML_SCHED_DEBUG");

        g_debug_len = 0;
        g_debug_text[0] = '\0';
        ggml_log_set(capture_debug, NULL);
        CHECK(ggml_backend_sched_alloc_graph(sched, s.gf));
        ggml_log_set(NULL, NULL);

        // the splits of scenario A with their inputs, and the cause of each assignment
        CHECK(strstr(g_debug_text, "## SPLIT #0: GPU # 1 inputs: [x ") != NULL);
        CHECK(strstr(g_debug_text, "## SPLIT #4: CPUT # 0 inputs") != NULL);
        CHECK(strstr(g_debug_text, "h1 (") != NULL && strstr(g_debug_text, "1.wgt0]") != NULL);
        CHECK(strstr(g_debug_text, "3.best]") != NULL);
        CHECK(strstr(g_debug_text, "1.wgt1]") != NULL);
        // level 2 also lists every source with its backend and cause: the
        // weights where they are, the input copies on their split's backend
        const bool has_sources = strstr(g_debug_text, "w1 ( 192B) [  GPU    1.dst]") != NULL &&
                                 strstr(g_debug_text, "GPU#x#0 ( 128B) [  GPU    4.cpy]") != NULL;
        CHECK(has_sources == (level == 2));

        ggml_backend_sched_free(sched);
        scenario_a_free(&s);
        env_free(&e);
    }
}

//
// in-place ops write the memory of their root: they must run where that
// memory is. The GPU here has no SET and no SCALE.
//   (i) a result written chunk by chunk (a linear-attention layer's shape):
//       v = mul_mat(w, x) [6,8]                 GPU by its weights (1.wgt)
//       v = set_inplace(v, add(mul_mat(w, x_c), b), chunk c of v's columns),
//           c = 0, 1: only the CPU has SET: v and both SETs -> CPUT (4.inpl)
//       y = add(view of v, b)                   GPU, v copied to it
//       y = w x + 2 b (each chunk's columns overwritten with w x_c + b)
//   (ii) an in-place op the GPU has, on memory of an op only the CPU has
//       (a top-k mask's shape: SET_ROWS on a FILL):
//       h = mul_mat(w, x) [6,4]                 GPU
//       r = scale(h, 2)                          CPUT (3.best)
//       m = add_inplace(rows 2-3 of r, rows 0-1 of h): the GPU has ADD and
//           expansion gives it the GPU, but it writes r: -> CPUT (4.inpl)
//       y = scale(r, 0.5) after m               CPUT
// Before, the SETs of (i) wrote through pointers into the GPU's memory and
// the ADD of (ii) into host memory from the GPU: the test backends refuse to
// compute on memory they cannot reach, so the computation failed.
//

static void test_inplace_other_memory(void) {
    struct env e;
    env_init(&e, 0);
    struct ggml_context * ctx_w = ctx_new(4);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx_w, GGML_TYPE_F32, 8, 6);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx_w, GGML_TYPE_F32, 6);
    ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors(ctx_w, e.gpu);
    ggml_backend_buffer_set_usage(buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    fill(w, 0.5f, 0.1f);
    fill(b, 1.0f, -0.2f);
    float wv[48], bv[6], xv[64];
    get_all(w, wv);
    get_all(b, bv);
    for (int i = 0; i < 64; i++) {
        xv[i] = (float) ((i * 37) % 17 - 8) / 8.0f;
    }
    double wd[48], xd[64], ref[64];
    for (int i = 0; i < 48; i++) {
        wd[i] = wv[i];
    }
    for (int i = 0; i < 64; i++) {
        xd[i] = xv[i];
    }
    ref_mul_mat(wd, xd, ref, 8, 6, 8); // ref[col*6 + row] = (w x)[row, col]
    ggml_backend_t backends[2] = { e.gpu, e.cpu };

    // (i)
    {
        struct ggml_context * ctx = ctx_new(64);
        struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 8);
        ggml_set_input(x);
        struct ggml_tensor * v = ggml_mul_mat(ctx, w, x);
        ggml_set_name(v, "v");
        struct ggml_tensor * root = v;
        struct ggml_tensor * sets[2];
        for (int c = 0; c < 2; c++) {
            struct ggml_tensor * xc = ggml_view_2d(ctx, x, 8, 4, x->nb[1], (size_t) c * 4 * x->nb[1]);
            struct ggml_tensor * oc = ggml_add(ctx, ggml_mul_mat(ctx, w, xc), b);
            v = ggml_set_inplace(ctx, v, oc, v->nb[1], v->nb[2], v->nb[3], (size_t) c * 4 * v->nb[1]);
            sets[c] = v;
        }
        struct ggml_tensor * y = ggml_add(ctx, ggml_view_2d(ctx, v, 6, 8, v->nb[1], 0), b);
        ggml_set_name(y, "y");
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, y);
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 64, false, true);
        CHECK(ggml_backend_sched_alloc_graph(sched, gf));
        CHECK_BACKEND(sched, root, "CPUT");
        CHECK_BACKEND(sched, sets[0], "CPUT");
        CHECK_BACKEND(sched, sets[1], "CPUT");
        CHECK_BACKEND(sched, y, "GPU");
        ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
        CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS);
        float yv[48];
        get_all(y, yv);
        for (int col = 0; col < 8; col++) {
            for (int row = 0; row < 6; row++) {
                CHECK_NEAR(yv[col*6 + row], ref[col*6 + row] + 2.0 * bv[row], 1e-4);
            }
        }
        ggml_backend_sched_free(sched);
        ggml_free(ctx);
    }

    // (ii)
    {
        struct ggml_context * ctx = ctx_new(64);
        struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4);
        ggml_set_input(x);
        struct ggml_tensor * h = ggml_mul_mat(ctx, w, x);
        struct ggml_tensor * r = ggml_scale(ctx, h, 2.0f);
        ggml_set_name(h, "h");
        ggml_set_name(r, "r");
        struct ggml_tensor * m = ggml_add_inplace(ctx, ggml_view_2d(ctx, r, 6, 2, r->nb[1], 2 * r->nb[1]),
                                                  ggml_view_2d(ctx, h, 6, 2, h->nb[1], 0));
        ggml_set_name(m, "m");
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, m);
        struct ggml_tensor * y = ggml_scale(ctx, r, 0.5f);
        ggml_set_name(y, "y");
        ggml_build_forward_expand(gf, y);
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 64, false, true);
        CHECK(ggml_backend_sched_alloc_graph(sched, gf));
        CHECK_BACKEND(sched, h, "GPU");
        CHECK_BACKEND(sched, r, "CPUT");
        CHECK_BACKEND(sched, m, "CPUT");
        ggml_backend_tensor_set(x, xv, 0, 32 * sizeof(float));
        CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS);
        float yv[24];
        get_all(y, yv);
        for (int col = 0; col < 4; col++) {
            for (int row = 0; row < 6; row++) {
                const double want = ref[col*6 + row] + (col >= 2 ? 0.5 * ref[(col - 2)*6 + row] : 0.0);
                CHECK_NEAR(yv[col*6 + row], want, 1e-4);
            }
        }
        ggml_backend_sched_free(sched);
        ggml_free(ctx);
    }

    ggml_backend_buffer_free(buf_w);
    ggml_free(ctx_w);
    env_free(&e);
}

int main(void) {
    test_debug_output();
    test_scenario_a();
    test_cpu_only_equal();
    test_offload();
    test_pin_and_views();
    test_best_backend_tie();
    test_reuse_and_replan();
    test_pipeline();
    test_eval_callback();
    test_no_limits();
    test_too_large();
    test_reserve();
    test_inplace_other_memory();
    return TEST_RESULT();
}
