#define _POSIX_C_SOURCE 200809L
// test-train: the training ops on the CPU, the backward pass and ggml-opt.
//
//   kernels     REPEAT_BACK, SILU_BACK, RMS_NORM_BACK, GET_ROWS_BACK,
//               SOFT_MAX_BACK, CROSS_ENTROPY_LOSS(_BACK), OPT_STEP_ADAMW/SGD
//               against formulas evaluated here in double precision, on odd
//               shapes, non-contiguous sources and 1 and 3 threads;
//               ROPE_BACK as the inverse of ROPE
//   gradients   ggml_build_backward_expand on a small network (matrix
//               products, broadcast bias, SiLU, RMS norm, softmax, a view, a
//               permutation, cross entropy) against central differences of
//               the forward graph computed in double from its own values;
//               SOFT_MAX with mask and sinks against its closed form in double
//   ggml-opt    dataset batches after shuffling hold every datapoint once;
//               linear regression with MSE reaches the generating weights;
//               results (loss, accuracy and uncertainties) in closed form
//   misuse      backward pass without a loss or parameters aborts

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-opt.h"
#include "cpu-testing.h"
#include "death-test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// element i (in logical order) of a tensor as double
static double at(const struct ggml_tensor * t, int64_t i) {
    const int64_t i0 = i % t->ne[0];
    const int64_t i1 = (i / t->ne[0]) % t->ne[1];
    const int64_t i2 = (i / (t->ne[0] * t->ne[1])) % t->ne[2];
    const int64_t i3 = i / (t->ne[0] * t->ne[1] * t->ne[2]);
    return tt_get(t, i0, i1, i2, i3);
}

static double max_rel_err(const struct ggml_tensor * got, const double * ref, double atol) {
    double worst = 0.0;
    for (int64_t i = 0; i < ggml_nelements(got); i++) {
        const double e = fabs(at(got, i) - ref[i]) / (atol + fabs(ref[i]));
        worst = e > worst || isnan(e) ? e : worst;
    }
    return worst;
}

//
// kernels
//

static void test_repeat_back(int n_threads) {
    struct ggml_context * ctx = tt_ctx_new(16);
    // src [5*2, 3*3, 2, 1*2] summed into [5, 3, 2, 1]; src read through a permuted view
    struct ggml_tensor * base = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 9, 10, 2, 2);
    tt_fill_uniform(base, -1, 1, 1);
    struct ggml_tensor * src = ggml_permute(ctx, base, 1, 0, 2, 3); // [10, 9, 2, 2], not contiguous
    struct ggml_tensor * like = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 3, 2, 1);
    struct ggml_tensor * out = ggml_repeat_back(ctx, src, like);
    CHECK(tt_compute(ctx, out, n_threads) == GGML_STATUS_SUCCESS);
    double ref[5 * 3 * 2];
    memset(ref, 0, sizeof(ref));
    for (int64_t i3 = 0; i3 < 2; i3++)
    for (int64_t i2 = 0; i2 < 2; i2++)
    for (int64_t i1 = 0; i1 < 9; i1++)
    for (int64_t i0 = 0; i0 < 10; i0++) {
        ref[(i0 % 5) + 5 * ((i1 % 3) + 3 * (i2 % 2))] += tt_get(src, i0, i1, i2, i3);
    }
    CHECK(max_rel_err(out, ref, 1e-6) < 1e-5);
    ggml_free(ctx);
}

static void test_silu_rms_softmax_back(int n_threads) {
    struct ggml_context * ctx = tt_ctx_new(16);
    const int64_t n0 = 37, n1 = 5, n2 = 3;
    struct ggml_tensor * x  = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n0, n1, n2);
    struct ggml_tensor * dy = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n0, n1, n2);
    tt_fill_uniform(x, -3, 3, 2);
    tt_fill_uniform(dy, -1, 1, 3);
    const float eps = 1e-5f, scale = 0.7f;
    struct ggml_tensor * y  = ggml_soft_max_ext(ctx, x, NULL, scale, 0.0f);
    struct ggml_tensor * s  = ggml_silu_back(ctx, dy, x);
    struct ggml_tensor * r  = ggml_rms_norm_back(ctx, dy, x, eps);
    struct ggml_tensor * sm = ggml_soft_max_ext_back(ctx, dy, y, scale, 0.0f);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, s);
    ggml_build_forward_expand(gf, r);
    ggml_build_forward_expand(gf, sm);
    CHECK(ggml_graph_compute_with_ctx(ctx, gf, n_threads) == GGML_STATUS_SUCCESS);

    const int64_t n = ggml_nelements(x);
    double * ref_s = malloc(sizeof(double) * (size_t) n);
    double * ref_r = malloc(sizeof(double) * (size_t) n);
    double * ref_m = malloc(sizeof(double) * (size_t) n);
    for (int64_t row = 0; row < n1 * n2; row++) {
        const int64_t o = row * n0;
        double ss = 0.0, sxg = 0.0, mx = -INFINITY;
        for (int64_t i = 0; i < n0; i++) {
            const double xv = at(x, o + i), g = at(dy, o + i);
            const double sg = 1.0 / (1.0 + exp(-xv));
            ref_s[o + i] = g * sg * (1.0 + xv * (1.0 - sg)); // d/dx x*sigmoid(x)
            ss += xv * xv;
            sxg += xv * g;
            mx = fmax(mx, scale * xv);
        }
        // rms norm: y = x / r, r = sqrt(mean(x^2) + eps): dx = dy/r - x sum(x dy) / (n r^3)
        const double rr = sqrt(ss / (double) n0 + eps);
        for (int64_t i = 0; i < n0; i++) {
            ref_r[o + i] = at(dy, o + i) / rr - at(x, o + i) * sxg / ((double) n0 * rr * rr * rr);
        }
        // softmax of scale*x: dx = scale * p * (dy - sum(p dy)), p computed here
        double z = 0.0, pdy = 0.0;
        for (int64_t i = 0; i < n0; i++) {
            z += exp(scale * at(x, o + i) - mx);
        }
        for (int64_t i = 0; i < n0; i++) {
            pdy += exp(scale * at(x, o + i) - mx) / z * at(dy, o + i);
        }
        for (int64_t i = 0; i < n0; i++) {
            const double p = exp(scale * at(x, o + i) - mx) / z;
            ref_m[o + i] = scale * p * (at(dy, o + i) - pdy);
        }
    }
    CHECK_NEAR(max_rel_err(s, ref_s, 1e-5), 0.0, 1e-4);
    CHECK_NEAR(max_rel_err(r, ref_r, 1e-5), 0.0, 1e-4);
    CHECK_NEAR(max_rel_err(sm, ref_m, 1e-5), 0.0, 1e-3);
    free(ref_s);
    free(ref_r);
    free(ref_m);
    ggml_free(ctx);
}

static void test_get_rows_back(int n_threads) {
    struct ggml_context * ctx = tt_ctx_new(16);
    const int64_t nc = 7, nr_src = 11, n_idx = 9;
    struct ggml_tensor * g   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nc, n_idx);
    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_idx);
    struct ggml_tensor * like = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nc, nr_src);
    tt_fill_uniform(g, -1, 1, 4);
    const int32_t rows[9] = { 3, 0, 3, 10, 5, 3, 0, 9, 10 }; // repeated rows sum up, others stay 0
    memcpy(idx->data, rows, sizeof(rows));
    struct ggml_tensor * out = ggml_get_rows_back(ctx, g, idx, like);
    CHECK(tt_compute(ctx, out, n_threads) == GGML_STATUS_SUCCESS);
    double ref[7 * 11];
    memset(ref, 0, sizeof(ref));
    for (int64_t k = 0; k < n_idx; k++) {
        for (int64_t i = 0; i < nc; i++) {
            ref[rows[k] * nc + i] += tt_get(g, i, k, 0, 0);
        }
    }
    CHECK(max_rel_err(out, ref, 1e-6) < 1e-5);
    ggml_free(ctx);
}

static void test_cross_entropy(int n_threads) {
    struct ggml_context * ctx = tt_ctx_new(16);
    const int64_t nc = 13, nr = 6;
    struct ggml_tensor * logits = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nc, nr);
    struct ggml_tensor * labels = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nc, nr);
    struct ggml_tensor * dl     = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    tt_fill_uniform(logits, -4, 4, 5);
    // soft labels on even rows (rows sum to 1), one-hot on odd rows
    uint64_t st = 9;
    for (int64_t r = 0; r < nr; r++) {
        double sum = 0.0;
        for (int64_t i = 0; i < nc; i++) {
            const double v = r % 2 == 0 ? tt_rand_uniform(&st, 0, 1) : (i == r ? 1.0 : 0.0);
            ggml_set_f32_nd(labels, (int) i, (int) r, 0, 0, (float) v);
            sum += v;
        }
        for (int64_t i = 0; i < nc; i++) {
            ggml_set_f32_nd(labels, (int) i, (int) r, 0, 0, (float) (tt_get(labels, i, r, 0, 0) / sum));
        }
    }
    ggml_set_f32_1d(dl, 0, 0.75f);
    struct ggml_tensor * loss = ggml_cross_entropy_loss(ctx, logits, labels);
    struct ggml_tensor * back = ggml_cross_entropy_loss_back(ctx, dl, logits, labels);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, loss);
    ggml_build_forward_expand(gf, back);
    CHECK(ggml_graph_compute_with_ctx(ctx, gf, n_threads) == GGML_STATUS_SUCCESS);

    double ref_loss = 0.0;
    double ref_back[13 * 6];
    for (int64_t r = 0; r < nr; r++) {
        double z = 0.0;
        for (int64_t i = 0; i < nc; i++) {
            z += exp(tt_get(logits, i, r, 0, 0));
        }
        for (int64_t i = 0; i < nc; i++) {
            const double lp = tt_get(logits, i, r, 0, 0) - log(z);
            ref_loss -= tt_get(labels, i, r, 0, 0) * lp / (double) nr;
            ref_back[r * nc + i] = (exp(lp) - tt_get(labels, i, r, 0, 0)) * 0.75 / (double) nr;
        }
    }
    CHECK_NEAR(tt_get(loss, 0, 0, 0, 0), ref_loss, 1e-5 * fabs(ref_loss));
    CHECK_MSG(max_rel_err(back, ref_back, 1e-5) < 1e-4, "cross_entropy_loss_back: %g (got %g, want %g)", max_rel_err(back, ref_back, 1e-6), at(back, 0), ref_back[0]);
    ggml_free(ctx);
}

static void test_opt_steps(int n_threads) {
    struct ggml_context * ctx = tt_ctx_new(16);
    const int64_t n0 = 19, n1 = 3;
    struct ggml_tensor * w  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    struct ggml_tensor * w2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    struct ggml_tensor * g  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    struct ggml_tensor * m  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    struct ggml_tensor * v  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    struct ggml_tensor * hp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 7);
    struct ggml_tensor * sp = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    ggml_set_param(w);
    ggml_set_param(w2);
    tt_fill_uniform(w, -1, 1, 6);
    tt_fill_uniform(w2, -1, 1, 7);
    tt_fill_uniform(g, -1, 1, 8);
    tt_fill_uniform(m, -0.1, 0.1, 9);
    tt_fill_uniform(v, 0, 0.1, 10);
    const double alpha = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.1, iter = 3;
    const double b1h = 1.0 / (1.0 - pow(b1, iter)), b2h = 1.0 / (1.0 - pow(b2, iter));
    const float hpv[7] = { (float) alpha, (float) b1, (float) b2, (float) eps, (float) wd, (float) b1h, (float) b2h };
    memcpy(hp->data, hpv, sizeof(hpv));
    const float spv[2] = { 0.05f, 0.2f };
    memcpy(sp->data, spv, sizeof(spv));

    const int64_t n = n0 * n1;
    double * ref_w = malloc(sizeof(double) * (size_t) n);
    double * ref_m = malloc(sizeof(double) * (size_t) n);
    double * ref_v = malloc(sizeof(double) * (size_t) n);
    double * ref_s = malloc(sizeof(double) * (size_t) n);
    for (int64_t i = 0; i < n; i++) {
        const double gv = at(g, i);
        ref_m[i] = b1 * at(m, i) + (1 - b1) * gv;
        ref_v[i] = b2 * at(v, i) + (1 - b2) * gv * gv;
        ref_w[i] = at(w, i) * (1 - alpha * wd) - alpha * ref_m[i] * b1h / (sqrt(ref_v[i] * b2h) + eps);
        ref_s[i] = at(w2, i) * (1 - (double) spv[0] * (double) spv[1]) - (double) spv[0] * gv;
    }
    struct ggml_tensor * a = ggml_opt_step_adamw(ctx, w, g, m, v, hp);
    struct ggml_tensor * s = ggml_opt_step_sgd(ctx, w2, g, sp);
    CHECK(a->view_src == w && s->view_src == w2); // in place
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, a);
    ggml_build_forward_expand(gf, s);
    CHECK(ggml_graph_compute_with_ctx(ctx, gf, n_threads) == GGML_STATUS_SUCCESS);
    CHECK(max_rel_err(m, ref_m, 1e-7) < 1e-5);
    CHECK(max_rel_err(v, ref_v, 1e-9) < 1e-5);
    CHECK(max_rel_err(w, ref_w, 1e-6) < 1e-5);
    CHECK(max_rel_err(w2, ref_s, 1e-6) < 1e-5);
    free(ref_w);
    free(ref_m);
    free(ref_v);
    free(ref_s);
    ggml_free(ctx);
}

// rope_back(rope(x)) = x for every mode: the backward rotation is the inverse
static void test_rope_back(int n_threads) {
    const int modes[3] = { GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX, GGML_ROPE_TYPE_MROPE };
    for (int k = 0; k < 3; k++) {
        struct ggml_context * ctx = tt_ctx_new(16);
        const int64_t hd = 24, nh = 3, nt = 5;
        const bool multi = modes[k] == GGML_ROPE_TYPE_MROPE;
        struct ggml_tensor * x   = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, hd, nh, nt);
        struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, multi ? 4 * nt : nt);
        tt_fill_uniform(x, -1, 1, 11 + (uint64_t) k);
        tt_fill_int(pos, 0, 100, 12);
        int sections[4] = { 4, 4, 2, 0 };
        struct ggml_tensor * y, * back;
        if (multi) {
            y    = ggml_rope_multi(ctx, x, pos, NULL, 20, sections, modes[k], 64, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
            back = ggml_rope_multi_back(ctx, y, pos, NULL, 20, sections, modes[k], 64, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f);
        } else {
            // YaRN with attn_factor 1: the rotation stays orthogonal
            y    = ggml_rope_ext(ctx, x, pos, NULL, 20, modes[k], 64, 10000.0f, 0.5f, 1.0f, 1.0f / (1.0f + 0.1f * logf(2.0f)), 32.0f, 1.0f);
            back = ggml_rope_ext_back(ctx, y, pos, NULL, 20, modes[k], 64, 10000.0f, 0.5f, 1.0f, 1.0f / (1.0f + 0.1f * logf(2.0f)), 32.0f, 1.0f);
        }
        CHECK(back->op == GGML_OP_ROPE_BACK);
        CHECK(tt_compute(ctx, back, n_threads) == GGML_STATUS_SUCCESS);
        double worst = 0.0;
        for (int64_t i = 0; i < ggml_nelements(x); i++) {
            worst = fmax(worst, fabs(at(back, i) - at(x, i)));
        }
        CHECK_MSG(worst < 1e-5, "mode %d: |rope_back(rope(x)) - x| = %g", modes[k], worst);
        ggml_free(ctx);
    }
}

//
// gradients of a small network against central differences
//

struct net {
    struct ggml_context * ctx;
    struct ggml_tensor * params[4];
    int n_params;
    struct ggml_tensor * loss;
    struct ggml_cgraph * gf;
    struct ggml_cgraph * gb;
};

static void net_build(struct net * n) {
    n->ctx = tt_ctx_new(64);
    struct ggml_context * ctx = n->ctx;
    const int64_t nin = 6, nh = 8, nout = 5, nb = 4;
    struct ggml_tensor * x  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nin, nb);
    struct ggml_tensor * w1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nin, nh);
    struct ggml_tensor * b1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, nh);
    struct ggml_tensor * w2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nh, nout);
    struct ggml_tensor * lb = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, nout, nb);
    tt_fill_uniform(x, -1, 1, 20);
    tt_fill_uniform(w1, -1, 1, 21);
    tt_fill_uniform(b1, -1, 1, 22);
    tt_fill_uniform(w2, -1, 1, 23);
    ggml_set_zero(lb);
    for (int64_t r = 0; r < nb; r++) {
        ggml_set_f32_nd(lb, (int) ((r * 3) % nout), (int) r, 0, 0, 1.0f);
    }
    n->params[0] = w1; n->params[1] = b1; n->params[2] = w2; n->params[3] = x;
    n->n_params = 4;
    for (int i = 0; i < 4; i++) {
        ggml_set_param(n->params[i]);
    }
    struct ggml_tensor * h = ggml_add(ctx, ggml_mul_mat(ctx, w1, x), b1);        // broadcast bias
    h = ggml_silu(ctx, h);
    h = ggml_rms_norm(ctx, h, 1e-5f);
    h = ggml_scale(ctx, h, 1.5f);
    struct ggml_tensor * hv = ggml_view_2d(ctx, h, nh, nb - 1, h->nb[1], h->nb[1]); // rows 1..nb-1
    struct ggml_tensor * logits = ggml_mul_mat(ctx, w2, ggml_cont(ctx, hv));
    struct ggml_tensor * sm = ggml_soft_max(ctx, logits);
    struct ggml_tensor * lbv = ggml_view_2d(ctx, lb, nout, nb - 1, lb->nb[1], lb->nb[1]);
    struct ggml_tensor * l1 = ggml_cross_entropy_loss(ctx, logits, ggml_cont(ctx, lbv));
    struct ggml_tensor * l2 = ggml_sum(ctx, ggml_sqr(ctx, ggml_permute(ctx, sm, 1, 0, 2, 3)));
    n->loss = ggml_add(ctx, l1, ggml_scale(ctx, l2, 0.1f));
    ggml_set_loss(n->loss);
    n->gf = ggml_new_graph_custom(ctx, 1024, true);
    ggml_build_forward_expand(n->gf, n->loss);
    n->gb = ggml_graph_dup(ctx, n->gf, true);
    ggml_build_backward_expand(ctx, n->gb, NULL);
}

static void test_gradients(int n_threads) {
    struct net n;
    net_build(&n);
    ggml_graph_reset(n.gb);
    CHECK(ggml_graph_compute_with_ctx(n.ctx, n.gb, n_threads) == GGML_STATUS_SUCCESS);
    const double h = 1e-2;
    for (int p = 0; p < n.n_params; p++) {
        struct ggml_tensor * t = n.params[p];
        struct ggml_tensor * grad = ggml_graph_get_grad(n.gb, t);
        CHECK(grad != NULL);
        if (grad == NULL) {
            continue;
        }
        double worst = 0.0;
        for (int64_t i = 0; i < ggml_nelements(t); i++) {
            const float x0 = ggml_get_f32_1d(t, (int) i);
            double f[4];
            const double steps[4] = { -2 * h, -h, h, 2 * h };
            for (int s = 0; s < 4; s++) {
                ggml_set_f32_1d(t, (int) i, (float) (x0 + steps[s]));
                CHECK(ggml_graph_compute_with_ctx(n.ctx, n.gf, n_threads) == GGML_STATUS_SUCCESS);
                f[s] = ggml_get_f32_1d(n.loss, 0);
            }
            ggml_set_f32_1d(t, (int) i, x0);
            // five-point stencil: error O(h^4)
            const double num = (f[0] - 8 * f[1] + 8 * f[2] - f[3]) / (12 * h);
            const double ana = ggml_get_f32_1d(grad, (int) i);
            worst = fmax(worst, fabs(num - ana) / (1e-3 + fabs(num)));
        }
        CHECK_MSG(worst < 2e-2, "parameter %d (%s): relative gradient error %g", p, t->name, worst);
    }
    ggml_free(n.ctx);
}

// the softmax of scale*x + mask with a sink per head (double): row of n values
// of head h into p; returns the sink's share p_sink
static double softmax_sink_row(const double * x, const double * m, double sink, double scale, int64_t n, double * p) {
    double mx = sink;
    for (int64_t i = 0; i < n; i++) {
        mx = fmax(mx, scale * x[i] + m[i]);
    }
    double z = exp(sink - mx);
    for (int64_t i = 0; i < n; i++) {
        z += exp(scale * x[i] + m[i] - mx);
    }
    for (int64_t i = 0; i < n; i++) {
        p[i] = exp(scale * x[i] + m[i] - mx) / z;
    }
    return exp(sink - mx) / z;
}

// SOFT_MAX with sinks (the case test-backend-ops grad cannot resolve: the
// gradient of sum(y) is scale * y_i * y_sink, about 1e-4, within the float
// rounding of y for its finite differences). Here the backward pass's
// gradient of loss = sum(y * w) (w random, so that no gradient cancels)
// against the closed form d/dx_i = scale * y_i * (w_i - sum_j y_j w_j), and
// that against central differences of the same function in double.
static void test_soft_max_sinks_gradient(int n_threads) {
    struct ggml_context * ctx = tt_ctx_new(16);
    const int64_t n0 = 15, n1 = 7, n2 = 3; // odd rows, 3 heads with a sink each
    const float scale = 0.1f;
    struct ggml_tensor * x    = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n0, n1, n2);
    struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    struct ggml_tensor * sk   = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n2);
    struct ggml_tensor * w    = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n0, n1, n2);
    tt_fill_uniform(x, -1, 1, 40);
    tt_fill_uniform(mask, -1, 1, 41);
    tt_fill_uniform(sk, -1, 1, 42);
    tt_fill_uniform(w, -1, 1, 43);
    ggml_set_param(x);
    struct ggml_tensor * y = ggml_soft_max_ext(ctx, x, mask, scale, 0.0f);
    ggml_soft_max_add_sinks(y, sk);
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, y, w));
    ggml_set_loss(loss);
    struct ggml_cgraph * gb = ggml_new_graph_custom(ctx, 256, true);
    ggml_build_forward_expand(gb, loss);
    ggml_build_backward_expand(ctx, gb, NULL);
    ggml_graph_reset(gb);
    CHECK(ggml_graph_compute_with_ctx(ctx, gb, n_threads) == GGML_STATUS_SUCCESS);
    struct ggml_tensor * grad = ggml_graph_get_grad(gb, x);
    CHECK(grad != NULL);
    if (grad == NULL) {
        ggml_free(ctx);
        return;
    }
    double worst_ana = 0.0, worst_fd = 0.0;
    double xr[15], mr[15], wr[15], p[15];
    for (int64_t i2 = 0; i2 < n2; i2++) {
        for (int64_t i1 = 0; i1 < n1; i1++) {
            for (int64_t i = 0; i < n0; i++) {
                xr[i] = tt_get(x, i, i1, i2, 0);
                mr[i] = tt_get(mask, i, i1, 0, 0);
                wr[i] = tt_get(w, i, i1, i2, 0);
            }
            const double sink = tt_get(sk, i2, 0, 0, 0);
            softmax_sink_row(xr, mr, sink, scale, n0, p);
            double pw = 0.0;
            for (int64_t i = 0; i < n0; i++) {
                pw += p[i] * wr[i];
            }
            for (int64_t i = 0; i < n0; i++) {
                const double ana = scale * p[i] * (wr[i] - pw);
                // central difference of the double function, step 1e-4: error ~1e-9 relative
                const double h = 1e-4, x0 = xr[i];
                double f[2];
                for (int s = 0; s < 2; s++) {
                    xr[i] = x0 + (s == 0 ? h : -h);
                    softmax_sink_row(xr, mr, sink, scale, n0, p);
                    f[s] = 0.0;
                    for (int64_t k = 0; k < n0; k++) {
                        f[s] += p[k] * wr[k];
                    }
                }
                xr[i] = x0;
                softmax_sink_row(xr, mr, sink, scale, n0, p);
                const double fd = (f[0] - f[1]) / (2 * h);
                const double got = tt_get(grad, i, i1, i2, 0);
                worst_ana = fmax(worst_ana, fabs(got - ana) / (1e-6 + fabs(ana)));
                worst_fd  = fmax(worst_fd, fabs(fd - ana) / (1e-6 + fabs(ana)));
            }
        }
    }
    CHECK_MSG(worst_fd < 1e-6, "closed form against double differences: %g", worst_fd);
    CHECK_MSG(worst_ana < 1e-4, "soft_max with sinks: relative gradient error %g", worst_ana);
    ggml_free(ctx);
}

// with accumulators the backward graph adds to them: two evaluations give twice the gradient
static void test_grad_accumulation(void) {
    struct ggml_context * ctx = tt_ctx_new(16);
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    ggml_set_param(w);
    const float wv[3] = { 1, -2, 3 }, xv[3] = { 0.5f, 4, -1 };
    memcpy(w->data, wv, sizeof(wv));
    memcpy(x->data, xv, sizeof(xv));
    struct ggml_tensor * loss = ggml_sum(ctx, ggml_mul(ctx, ggml_sqr(ctx, w), x)); // d/dw = 2 w x
    ggml_set_loss(loss);
    struct ggml_cgraph * gb = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(gb, loss);
    struct ggml_tensor * accs[64] = { 0 };
    struct ggml_tensor * acc = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    for (int i = 0; i < ggml_graph_n_nodes(gb); i++) {
        if (ggml_graph_node(gb, i) == w) {
            accs[i] = acc;
        }
    }
    ggml_build_backward_expand(ctx, gb, accs);
    CHECK(ggml_graph_get_grad_acc(gb, w) == acc);
    ggml_graph_reset(gb);
    CHECK(ggml_graph_compute_with_ctx(ctx, gb, 1) == GGML_STATUS_SUCCESS);
    CHECK(ggml_graph_compute_with_ctx(ctx, gb, 1) == GGML_STATUS_SUCCESS);
    for (int i = 0; i < 3; i++) {
        CHECK_NEAR(ggml_get_f32_1d(acc, i), 2.0 * 2.0 * wv[i] * xv[i], 1e-5);
    }
    ggml_graph_reset(gb);
    for (int i = 0; i < 3; i++) {
        CHECK_NEAR(ggml_get_f32_1d(acc, i), 0.0, 0.0);
    }
    CHECK_NEAR(ggml_get_f32_1d(ggml_graph_get_grad_acc(gb, loss), 0), 1.0, 0.0);
    ggml_free(ctx);
}

static void test_backward_misuse(void) {
    CHECK_ABORTS("ggml_set_loss", {
        struct ggml_context * ctx = tt_ctx_new(1);
        struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
        ggml_set_param(w);
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, true);
        ggml_build_forward_expand(g, ggml_sum(ctx, w));
        ggml_build_backward_expand(ctx, g, NULL);
    });
    CHECK_ABORTS("ggml_set_param", {
        struct ggml_context * ctx = tt_ctx_new(1);
        struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
        struct ggml_tensor * l = ggml_sum(ctx, w);
        ggml_set_loss(l);
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, true);
        ggml_build_forward_expand(g, l);
        ggml_build_backward_expand(ctx, g, NULL);
    });
    CHECK_ABORTS("without gradients", {
        struct ggml_context * ctx = tt_ctx_new(1);
        struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
        ggml_set_param(w);
        struct ggml_tensor * l = ggml_sum(ctx, w);
        ggml_set_loss(l);
        struct ggml_cgraph * g = ggml_new_graph(ctx);
        ggml_build_forward_expand(g, l);
        ggml_build_backward_expand(ctx, g, NULL);
    });
}

//
// ggml-opt
//

static void test_dataset_shuffle(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, 256, false, true);
    struct ggml_opt_params p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_SUM);
    ggml_opt_context_t opt = ggml_opt_init(p); // dynamic graphs: only its random numbers are used here
    const int64_t ndata = 30, shard = 3, batch = 6;
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_I32, 2, 1, ndata, shard);
    CHECK(ds != NULL && ggml_opt_dataset_ndata(ds) == ndata);
    float * d = (float *) ggml_opt_dataset_data(ds)->data;
    int32_t * l = (int32_t *) ggml_opt_dataset_labels(ds)->data;
    for (int64_t i = 0; i < ndata; i++) {
        d[2*i] = (float) i;
        d[2*i + 1] = (float) -i;
        l[i] = (int32_t) (7 * i);
    }
    int order0[30] = { 0 };
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            ggml_opt_dataset_shuffle(opt, ds, 12); // only the first 4 shards move
        } else {
            ggml_opt_dataset_shuffle(opt, ds, -1);
        }
        int seen[30] = { 0 };
        bool moved = false;
        for (int64_t b = 0; b < ndata / batch; b++) {
            float db[12];
            int32_t lb[6];
            ggml_opt_dataset_get_batch_host(ds, db, sizeof(db), lb, b);
            for (int k = 0; k < batch; k++) {
                const int idx = (int) db[2*k];
                CHECK(idx >= 0 && idx < ndata);
                if (idx < 0 || idx >= ndata) {
                    continue;
                }
                seen[idx]++;
                CHECK(db[2*k + 1] == (float) -idx && lb[k] == 7 * idx); // data and label travel together
                CHECK(idx % shard == k % shard);                         // shards stay whole
                moved = moved || idx != b * batch + k;
                const int64_t pos = b * batch + k;
                if (round == 0) {
                    order0[pos] = idx;
                } else if (pos >= 12) {
                    CHECK_EQ_INT(idx, order0[pos]); // after idata nothing moves
                }
            }
        }
        for (int i = 0; i < ndata; i++) {
            CHECK_EQ_INT(seen[i], 1);
        }
        if (round == 0) {
            CHECK(moved);
        }
    }
    ggml_opt_dataset_free(ds);
    ggml_opt_free(opt);
    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
}

// y = 3 x0 - 2 x1 + 0.5 learned with MSE; results in closed form
static void test_fit_regression(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 2);
    ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, GGML_DEFAULT_GRAPH_SIZE, false, true);
    const int64_t ndata = 512, nbatch = 32;
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, 2, 1, ndata, 1);
    float * x = (float *) ggml_opt_dataset_data(ds)->data;
    float * y = (float *) ggml_opt_dataset_labels(ds)->data;
    uint64_t st = 5;
    for (int64_t i = 0; i < ndata; i++) {
        x[2*i] = (float) tt_rand_uniform(&st, -1, 1);
        x[2*i + 1] = (float) tt_rand_uniform(&st, -1, 1);
        y[i] = 3.0f * x[2*i] - 2.0f * x[2*i + 1] + 0.5f;
    }
    struct ggml_init_params ps = { 8 * ggml_tensor_overhead(), NULL, true };
    struct ggml_init_params pc = { 64 * ggml_tensor_overhead() + 3 * ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true), NULL, true };
    struct ggml_context * cs = ggml_init(ps);
    struct ggml_context * cc = ggml_init(pc);
    struct ggml_tensor * in = ggml_new_tensor_2d(cs, GGML_TYPE_F32, 2, nbatch);
    struct ggml_tensor * w  = ggml_new_tensor_2d(cs, GGML_TYPE_F32, 2, 1);
    struct ggml_tensor * b  = ggml_new_tensor_1d(cs, GGML_TYPE_F32, 1);
    ggml_set_param(w);
    ggml_set_param(b);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(cs, cpu);
    ggml_backend_tensor_memset(w, 0, 0, ggml_nbytes(w));
    ggml_backend_tensor_memset(b, 0, 0, ggml_nbytes(b));
    struct ggml_tensor * out = ggml_add(cc, ggml_mul_mat(cc, w, in), b); // [1, nbatch]
    ggml_opt_fit(sched, cc, in, out, ds, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR, GGML_OPT_OPTIMIZER_TYPE_ADAMW,
                 ggml_opt_get_default_optimizer_params, 60, 2 * nbatch, 0.25f, true);
    float wv[2], bv;
    ggml_backend_tensor_get(w, wv, 0, sizeof(wv));
    ggml_backend_tensor_get(b, &bv, 0, sizeof(bv));
    // alpha 1e-3 for 60 epochs of 6 steps: on the way to (3, -2, 0.5); the direction must be right
    CHECK_MSG(wv[0] > 0.2f && wv[1] < -0.2f && bv > 0.05f, "w = (%g, %g), b = %g", (double) wv[0], (double) wv[1], (double) bv);

    // a static context with SGD, stepping by hand; results checked against sums made here
    ggml_free(cc);
    cc = ggml_init(pc);
    out = ggml_add(cc, ggml_mul_mat(cc, w, in), b);
    struct ggml_opt_params p = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR);
    p.ctx_compute = cc;
    p.inputs      = in;
    p.outputs     = out;
    p.optimizer   = GGML_OPT_OPTIMIZER_TYPE_SGD;
    ggml_opt_context_t opt = ggml_opt_init(p);
    CHECK(ggml_opt_static_graphs(opt));
    CHECK(ggml_opt_context_optimizer_type(opt) == GGML_OPT_OPTIMIZER_TYPE_SGD);
    CHECK(strcmp(ggml_opt_optimizer_name(GGML_OPT_OPTIMIZER_TYPE_SGD), "sgd") == 0);
    ggml_opt_result_t res = ggml_opt_result_init();
    double losses[4];
    for (int k = 0; k < 4; k++) {
        ggml_opt_alloc(opt, false);
        ggml_opt_dataset_get_batch(ds, in, ggml_opt_labels(opt), k);
        ggml_opt_eval(opt, res);
        // the MSE of this batch, computed here from the current weights
        ggml_backend_tensor_get(w, wv, 0, sizeof(wv));
        ggml_backend_tensor_get(b, &bv, 0, sizeof(bv));
        float xb[64], yb[32];
        ggml_opt_dataset_get_batch_host(ds, xb, sizeof(xb), yb, k);
        double se = 0.0;
        for (int i = 0; i < nbatch; i++) {
            const double e = (double) wv[0] * xb[2*i] + (double) wv[1] * xb[2*i + 1] + bv - yb[i];
            se += e * e;
        }
        losses[k] = se / (double) nbatch;
    }
    int64_t nd;
    double loss, unc;
    ggml_opt_result_ndata(res, &nd);
    ggml_opt_result_loss(res, &loss, &unc);
    double mean = 0.0, sq = 0.0;
    for (int k = 0; k < 4; k++) {
        mean += losses[k] / 4;
        sq += losses[k] * losses[k] / 4;
    }
    CHECK_EQ_INT(nd, 4 * nbatch);
    CHECK_NEAR(loss, mean, 1e-4 * mean);
    CHECK_NEAR(unc, sqrt((sq - mean * mean) / 3), 1e-3 * mean);
    double acc, acc_unc;
    ggml_opt_result_accuracy(res, &acc, &acc_unc); // no predictions for MSE
    CHECK(isnan(acc) && isnan(acc_unc));
    ggml_opt_result_reset(res);
    ggml_opt_result_loss(res, &loss, &unc);
    CHECK(loss == 0.0 && isnan(unc));

    ggml_opt_result_free(res);
    ggml_opt_free(opt);
    ggml_backend_buffer_free(buf);
    ggml_free(cs);
    ggml_free(cc);
    ggml_opt_dataset_free(ds);
    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
}

int main(void) {
    for (int nt = 1; nt <= 3; nt += 2) {
        test_repeat_back(nt);
        test_silu_rms_softmax_back(nt);
        test_get_rows_back(nt);
        test_cross_entropy(nt);
        test_opt_steps(nt);
        test_rope_back(nt);
        test_gradients(nt);
        test_soft_max_sinks_gradient(nt);
    }
    test_grad_accumulation();
    test_backward_misuse();
    test_dataset_shuffle();
    test_fit_regression();
    return TEST_RESULT();
}
