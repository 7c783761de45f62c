// ext-app.c: loads the out-of-tree EXT backend module at run time and runs a
// mixed graph over EXT and the CPU through the scheduler: the matrix products
// (whose weights live in EXT memory) on EXT, the rest on the CPU. Checks the
// assignment, the split count, and the numbers against a double-precision
// reference computed here.
//   usage: ext-app <path to libggml-ext.so>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { K = 64, N1 = 48, N2 = 32, T = 5 };

static float det(int i, int salt) {
    return (float)((i * 37 + salt * 11) % 19 - 9) / 9.0f;
}

int main(int argc, char ** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <module>\n", argv[0]);
        return 2;
    }
    ggml_backend_reg_t reg = ggml_backend_load(argv[1]);
    if (reg == NULL) {
        fprintf(stderr, "could not load %s\n", argv[1]);
        return 1;
    }
    ggml_backend_t ext = ggml_backend_dev_init(ggml_backend_reg_dev_get(reg, 0), NULL);
    ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);

    // weights: the matrices in EXT memory, the norm weight in host memory
    struct ggml_init_params pw = { 8 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx_ext = ggml_init(pw);
    struct ggml_context * ctx_host = ggml_init(pw);
    struct ggml_tensor * w1 = ggml_new_tensor_2d(ctx_ext, GGML_TYPE_F32, K, N1);
    struct ggml_tensor * w2 = ggml_new_tensor_2d(ctx_ext, GGML_TYPE_F32, N1, N2);
    struct ggml_tensor * g  = ggml_new_tensor_1d(ctx_host, GGML_TYPE_F32, K);
    ggml_backend_buffer_t buf_ext  = ggml_backend_alloc_ctx_tensors(ctx_ext, ext);
    ggml_backend_buffer_t buf_host = ggml_backend_alloc_ctx_tensors(ctx_host, cpu);
    ggml_backend_buffer_set_usage(buf_ext, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    ggml_backend_buffer_set_usage(buf_host, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    static float w1v[K * N1], w2v[N1 * N2], gv[K], xv[K * T];
    for (int i = 0; i < K * N1; i++) w1v[i] = det(i, 1) * 0.2f;
    for (int i = 0; i < N1 * N2; i++) w2v[i] = det(i, 2) * 0.3f;
    for (int i = 0; i < K; i++) gv[i] = 1.0f + 0.5f * det(i, 3);
    for (int i = 0; i < K * T; i++) xv[i] = det(i, 4);
    ggml_backend_tensor_set(w1, w1v, 0, sizeof(w1v));
    ggml_backend_tensor_set(w2, w2v, 0, sizeof(w2v));
    ggml_backend_tensor_set(g, gv, 0, sizeof(gv));

    // h = rms_norm(x) * g (CPU), y = w1 h (EXT), s = softmax(y / 2) (CPU), out = w2 s (EXT)
    struct ggml_init_params pg = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(pg);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, T);
    ggml_set_input(x);
    struct ggml_tensor * h   = ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-6f), g);
    struct ggml_tensor * y   = ggml_mul_mat(ctx, w1, h);
    struct ggml_tensor * s   = ggml_soft_max(ctx, ggml_scale(ctx, y, 0.5f));
    struct ggml_tensor * out = ggml_mul_mat(ctx, w2, s);
    ggml_set_output(out);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);

    ggml_backend_t backends[2] = { ext, cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, false, true);
    if (!ggml_backend_sched_alloc_graph(sched, gf)) {
        fprintf(stderr, "ext-app: the scheduler could not place the graph\n");
        return 1;
    }
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    int ok = ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS;

    const char * by = ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, y));
    const char * bo = ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, out));
    const char * bs = ggml_backend_name(ggml_backend_sched_get_tensor_backend(sched, s));
    const int n_splits = ggml_backend_sched_get_n_splits(sched);
    void * p = ggml_backend_reg_get_proc_address(reg, "ext_matmuls");
    long (*matmuls)(void) = NULL;
    memcpy(&matmuls, &p, sizeof(p));
    const long n_matmuls = matmuls ? matmuls() : -1;
    ok = ok && strcmp(by, "EXT") == 0 && strcmp(bo, "EXT") == 0 && strcmp(bs, "CPU") == 0;
    ok = ok && n_splits == 4 && n_matmuls == 2;

    // reference
    double href[K * T], yref[N1 * T], sref[N1 * T], oref[N2 * T];
    for (int t = 0; t < T; t++) {
        double ss = 0;
        for (int k = 0; k < K; k++) ss += (double) xv[t*K + k] * xv[t*K + k];
        const double r = 1.0 / sqrt(ss / K + 1e-6);
        for (int k = 0; k < K; k++) href[t*K + k] = xv[t*K + k] * r * gv[k];
        double m = -INFINITY, sum = 0;
        for (int i = 0; i < N1; i++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += (double) w1v[i*K + k] * href[t*K + k];
            yref[t*N1 + i] = acc;
            m = fmax(m, 0.5 * acc);
        }
        for (int i = 0; i < N1; i++) sum += sref[t*N1 + i] = exp(0.5 * yref[t*N1 + i] - m);
        for (int i = 0; i < N1; i++) sref[t*N1 + i] /= sum;
        for (int i = 0; i < N2; i++) {
            double acc = 0;
            for (int k = 0; k < N1; k++) acc += (double) w2v[i*N1 + k] * sref[t*N1 + k];
            oref[t*N2 + i] = acc;
        }
    }
    float ov[N2 * T];
    ggml_backend_tensor_get(out, ov, 0, sizeof(ov));
    double worst = 0;
    for (int i = 0; i < N2 * T; i++) {
        worst = fmax(worst, fabs(ov[i] - oref[i]));
    }
    ok = ok && worst < 1e-5;

    printf("ext-app: products on %s/%s, softmax on %s, %d splits, %ld EXT products, max error %.2e: %s\n",
           by, bo, bs, n_splits, n_matmuls, worst, ok ? "ok" : "WRONG");

    ggml_backend_sched_free(sched);
    ggml_free(ctx);
    ggml_backend_buffer_free(buf_ext);
    ggml_backend_buffer_free(buf_host);
    ggml_free(ctx_ext);
    ggml_free(ctx_host);
    ggml_backend_free(ext);
    ggml_backend_free(cpu);
    ggml_backend_unload(reg);
    return ok ? 0 : 1;
}
