// bench-elementwise: throughput of elementwise CPU kernels on large tensors,
// next to the memory bandwidth of a plain memcpy with the same threads.
//
// usage: bench-elementwise [n_threads (2)] [elements (16M)] [repetitions (10)]
//
// GB/s counts the bytes each op must move: inputs read plus output written.
// Each figure is the best of the repetitions (after one warm-up run). On a
// shared machine the bandwidth varies from moment to moment, so each row also
// gives the memcpy bandwidth measured right before it, with the same threads,
// and the op's share of it.

#define _POSIX_C_SOURCE 200809L

#include "ggml.h"
#include "ggml-cpu.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double now_s(void) {
    return (double) ggml_time_us() * 1e-6;
}

struct copy_job {
    char *       dst;
    const char * src;
    size_t       n;
};

static void * copy_thread(void * arg) {
    struct copy_job * j = (struct copy_job *) arg;
    memcpy(j->dst, j->src, j->n);
    return NULL;
}

// best GB/s (bytes read + written) of memcpy of `bytes` split over nth threads
static double memcpy_bandwidth(size_t bytes, int nth, int reps) {
    char * src = (char *) malloc(bytes);
    char * dst = (char *) malloc(bytes);
    memset(src, 1, bytes);
    memset(dst, 2, bytes);
    double best = 0.0;
    for (int r = 0; r <= reps; r++) {
        pthread_t threads[64];
        struct copy_job jobs[64];
        const size_t per = (bytes / (size_t) nth + 63) & ~(size_t) 63;
        const double t0 = now_s();
        for (int t = 0; t < nth; t++) {
            const size_t off = per * (size_t) t;
            jobs[t] = (struct copy_job) { .dst = dst + off, .src = src + off, .n = off >= bytes ? 0 : (bytes - off < per ? bytes - off : per) };
            if (t > 0) {
                pthread_create(&threads[t], NULL, copy_thread, &jobs[t]);
            }
        }
        copy_thread(&jobs[0]);
        for (int t = 1; t < nth; t++) {
            pthread_join(threads[t], NULL);
        }
        const double dt = now_s() - t0;
        if (r > 0) {
            const double gbs = 2.0 * (double) bytes / dt * 1e-9;
            best = gbs > best ? gbs : best;
        }
    }
    free(src);
    free(dst);
    return best;
}

enum bench_op {
    BENCH_ADD,
    BENCH_MUL_ROW,  // src1 one row, broadcast
    BENCH_SCALE,
    BENCH_SILU,
    BENCH_GELU,
    BENCH_GELU_ERF,
    BENCH_EXP,
    BENCH_SWIGLU,
    BENCH_EXPM1,
    BENCH_SOFTPLUS,
    BENCH_ROUND,
    BENCH_XIELU,
    BENCH_GEGLU_ERF,
    BENCH_SWIGLU_OAI,
};

static const char * bench_op_name(enum bench_op op) {
    switch (op) {
        case BENCH_ADD:      return "add";
        case BENCH_MUL_ROW:  return "mul (row bcast)";
        case BENCH_SCALE:    return "scale";
        case BENCH_SILU:     return "silu";
        case BENCH_GELU:     return "gelu";
        case BENCH_GELU_ERF: return "gelu_erf";
        case BENCH_EXP:      return "exp";
        case BENCH_SWIGLU:   return "swiglu (fused)";
        case BENCH_EXPM1:    return "expm1";
        case BENCH_SOFTPLUS: return "softplus";
        case BENCH_ROUND:    return "round";
        case BENCH_XIELU:    return "xielu";
        case BENCH_GEGLU_ERF: return "geglu_erf (fused)";
        case BENCH_SWIGLU_OAI: return "swiglu_oai (fused)";
    }
    return "?";
}

// best seconds of one computation of the op on n elements of type `type`
static double bench_op_time(enum bench_op op, enum ggml_type type, int64_t n, struct ggml_threadpool * tp,
                            int nth, bool ref, int reps, double * bytes) {
    const int64_t ne0 = 4096;
    const int64_t ne1 = n / ne0;
    const size_t esize = ggml_type_size(type);
    const size_t mem = (size_t) n * esize * 4 + 64 * 1024 * 1024;
    struct ggml_init_params ip = { mem, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);

    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, type, ne0, ne1);
    for (int64_t i = 0; i < ggml_nelements(a); i++) {
        ggml_set_f32_1d(a, (int) i, (float)((i % 1000) - 500) * 0.01f);
    }
    struct ggml_tensor * out = NULL;
    switch (op) {
        case BENCH_ADD: {
            struct ggml_tensor * b = ggml_new_tensor_2d(ctx, type, ne0, ne1);
            memcpy(b->data, a->data, ggml_nbytes(a));
            out = ggml_add(ctx, a, b);
            *bytes = 3.0 * (double) ggml_nbytes(a);
        } break;
        case BENCH_MUL_ROW: {
            struct ggml_tensor * b = ggml_new_tensor_1d(ctx, type, ne0);
            memcpy(b->data, a->data, ggml_nbytes(b));
            out = ggml_mul(ctx, a, b);
            *bytes = 2.0 * (double) ggml_nbytes(a);
        } break;
        case BENCH_SCALE:    out = ggml_scale(ctx, a, 0.5f);                     *bytes = 2.0 * (double) ggml_nbytes(a); break;
        case BENCH_SILU:     out = ggml_silu(ctx, a);                            *bytes = 2.0 * (double) ggml_nbytes(a); break;
        case BENCH_GELU:     out = ggml_gelu(ctx, a);                            *bytes = 2.0 * (double) ggml_nbytes(a); break;
        case BENCH_GELU_ERF: out = ggml_gelu_erf(ctx, a);                        *bytes = 2.0 * (double) ggml_nbytes(a); break;
        case BENCH_EXP:      out = ggml_exp(ctx, a);                             *bytes = 2.0 * (double) ggml_nbytes(a); break;
        case BENCH_SWIGLU:   out = ggml_swiglu(ctx, a);                          *bytes = 1.5 * (double) ggml_nbytes(a); break;
        case BENCH_EXPM1:    out = ggml_expm1(ctx, a);                           *bytes = 2.0 * (double) ggml_nbytes(a); break;
        case BENCH_SOFTPLUS: out = ggml_softplus(ctx, a);                        *bytes = 2.0 * (double) ggml_nbytes(a); break;
        case BENCH_ROUND:    out = ggml_round(ctx, a);                           *bytes = 2.0 * (double) ggml_nbytes(a); break;
        case BENCH_XIELU:    out = ggml_xielu(ctx, a, 0.8f, 0.8f, 0.5f, -1e-6f); *bytes = 2.0 * (double) ggml_nbytes(a); break;
        case BENCH_GEGLU_ERF: out = ggml_geglu_erf(ctx, a);                      *bytes = 1.5 * (double) ggml_nbytes(a); break;
        case BENCH_SWIGLU_OAI: out = ggml_swiglu_oai(ctx, a, NULL, 1.702f, 7.0f); *bytes = 1.5 * (double) ggml_nbytes(a); break;
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    struct ggml_cplan plan = ggml_graph_plan(gf, nth, tp);
    plan.use_ref = ref;
    if (plan.work_size > 0) {
        plan.work_data = (uint8_t *) malloc(plan.work_size);
    }
    double best = 1e30;
    for (int r = 0; r <= reps; r++) {
        const double t0 = now_s();
        const enum ggml_status st = ggml_graph_compute(gf, &plan);
        const double dt = now_s() - t0;
        if (st != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "%s: compute failed (status %d)\n", bench_op_name(op), (int) st);
            exit(1);
        }
        if (r > 0 && dt < best) {
            best = dt;
        }
    }
    free(plan.work_data);
    ggml_free(ctx);
    return best;
}

int main(int argc, char ** argv) {
    const int     nth  = argc > 1 ? atoi(argv[1]) : 2;
    const int64_t n    = argc > 2 ? atoll(argv[2]) : 16 * 1024 * 1024;
    const int     reps = argc > 3 ? atoi(argv[3]) : 10;
    if (nth < 1 || nth > 64 || n < 4096 || reps < 1) {
        fprintf(stderr, "usage: %s [n_threads 1..64] [elements >= 4096] [repetitions >= 1]\n", argv[0]);
        return 1;
    }
    ggml_cpu_init();

    printf("elements: %lld (%.0f MiB as f32), threads: %d, best of %d\n", (long long) n, (double) n * 4 / (1 << 20), nth, reps);
    printf("memcpy %.0f MiB: %6.1f GB/s with %d thread(s), %6.1f GB/s with 1\n", (double) n * 4 / (1 << 20),
           memcpy_bandwidth((size_t) n * 4, nth, reps), nth, memcpy_bandwidth((size_t) n * 4, 1, reps));

    struct ggml_threadpool_params tpp = ggml_threadpool_params_default(nth);
    struct ggml_threadpool * tp = ggml_threadpool_new(&tpp);

    const enum bench_op ops[] = { BENCH_ADD, BENCH_MUL_ROW, BENCH_SCALE, BENCH_SILU, BENCH_GELU, BENCH_GELU_ERF, BENCH_EXP, BENCH_SWIGLU,
                                  BENCH_EXPM1, BENCH_SOFTPLUS, BENCH_ROUND, BENCH_XIELU, BENCH_GEGLU_ERF, BENCH_SWIGLU_OAI };
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    printf("%-18s %-5s %12s %12s %14s %12s %8s\n", "op", "type", "vector GB/s", "scalar GB/s", "vector Gelem/s",
           "memcpy GB/s", "share");
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
        if (types[t] != GGML_TYPE_F32 && ops[o] == BENCH_SCALE) {
            continue; // ggml_scale makes F32 nodes only in upstream's backends; ours takes any, but keep the table short
        }
        if (types[t] != GGML_TYPE_F32 && ops[o] >= BENCH_EXPM1) {
            continue; // the later activations: F32 only, for a short table
        }
        double bytes = 0.0;
        const double mc = memcpy_bandwidth((size_t) n * 4, nth, reps);
        const double tv = bench_op_time(ops[o], types[t], n, tp, nth, false, reps, &bytes);
        const double ts = bench_op_time(ops[o], types[t], n, tp, nth, true, reps > 3 ? 3 : reps, &bytes);
        printf("%-18s %-5s %12.1f %12.1f %14.2f %12.1f %7.0f%%\n", bench_op_name(ops[o]), ggml_type_name(types[t]),
               bytes / tv * 1e-9, bytes / ts * 1e-9, (double) n / tv * 1e-9, mc, 100.0 * bytes / tv * 1e-9 / mc);
    }
    ggml_threadpool_free(tp);
    return 0;
}
