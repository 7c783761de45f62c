// test-cpu-ops-later: the ops of upstream's later additions (activations
// with parameters, ADD_ID, CUMSUM, SOLVE_TRI, GROUP_NORM, the recurrent ops,
// the DeepSeek ops): constructor metadata, misuse that must abort, and CPU
// results against closed forms, with 1 and 3 threads (which must agree bit
// for bit) and on the portable scalar paths too where the kernel has a vector
// path. test-backend-ops compares every kernel with the double-precision
// reference on upstream's shapes; these are the cases whose answer is known
// without one.

#define _POSIX_C_SOURCE 200809L

#include "ggml.h"
#include "ggml-cpu.h"
#include "testing.h"
#include "death-test.h"
#include "cpu-testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float pf(const struct ggml_tensor * t, int i) {
    float f;
    memcpy(&f, &t->op_params[i], sizeof(f));
    return f;
}

static float * fdata(struct ggml_tensor * t) {
    return (float *) t->data;
}

static void fill(struct ggml_tensor * t, float v) {
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        fdata(t)[i] = v;
    }
}

//
// metadata
//

static void test_metadata(void) {
    struct ggml_context * ctx = tt_ctx_new(16);
    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 3, 2);

    // xIELU stores the constrained alphas: beta + softplus(alpha_n), softplus(alpha_p)
    struct ggml_tensor * x = ggml_xielu(ctx, a, 4.0f, 20.0f, 0.5f, 1e-7f);
    CHECK(x->op == GGML_OP_UNARY && ggml_get_unary_op(x) == GGML_UNARY_OP_XIELU);
    CHECK_NEAR(pf(x, 1), 0.5 + log1p(exp(4.0)), 1e-5);
    CHECK_NEAR(pf(x, 2), log1p(exp(20.0)), 1e-5);
    CHECK(pf(x, 3) == 0.5f && pf(x, 4) == 1e-7f);

    struct ggml_tensor * o = ggml_swiglu_oai(ctx, a, NULL, 1.702f, 7.0f);
    CHECK(o->op == GGML_OP_GLU && ggml_get_glu_op(o) == GGML_GLU_OP_SWIGLU_OAI && o->ne[0] == 4 && o->src[1] == NULL);
    CHECK(pf(o, 2) == 1.702f && pf(o, 3) == 7.0f && o->op_params[1] == 0);
    struct ggml_tensor * o2 = ggml_swiglu_oai(ctx, a, a, 0.5f, 2.0f);
    CHECK(o2->ne[0] == 8 && o2->src[1] == a);

    struct ggml_tensor * d = ggml_diag(ctx, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 1, 2, 3));
    CHECK(d->op == GGML_OP_DIAG && d->ne[0] == 5 && d->ne[1] == 5 && d->ne[2] == 2 && d->ne[3] == 3);

    struct ggml_tensor * g = ggml_group_norm_inplace(ctx, a, 2, 1e-5f);
    CHECK(g->op == GGML_OP_GROUP_NORM && g->view_src == a && g->op_params[0] == 2 && pf(g, 1) == 1e-5f);

    struct ggml_tensor * f = ggml_fill_inplace(ctx, a, 3.5f);
    CHECK(f->op == GGML_OP_FILL && f->view_src == a && pf(f, 0) == 3.5f);

    struct ggml_tensor * m = ggml_diag_mask_zero(ctx, a, 2);
    CHECK(m->op == GGML_OP_DIAG_MASK_ZERO && m->op_params[0] == 2 && m->view_src == NULL);

    // recurrent ops: outputs, then states
    struct ggml_tensor * sx = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3 + 6, 16, 2);
    struct ggml_tensor * cw = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 16);
    struct ggml_tensor * sc = ggml_ssm_conv(ctx, sx, cw);
    CHECK(sc->ne[0] == 16 && sc->ne[1] == 6 && sc->ne[2] == 2);

    const int64_t S = 8, H = 3, T = 6, ns = 2;
    struct ggml_tensor * k = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, S, H, T);
    struct ggml_tensor * st = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, S*S*H, ns);
    struct ggml_tensor * tf = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, S, H);
    struct ggml_tensor * w6 = ggml_rwkv_wkv6(ctx, k, k, k, tf, k, st);
    CHECK(w6->ne[0] == S*H && w6->ne[1] == T + S*ns && w6->src[5] == st);
    struct ggml_tensor * gl = ggml_gated_linear_attn(ctx, k, k, k, k, st, 0.25f);
    CHECK(gl->op == GGML_OP_GATED_LINEAR_ATTN && pf(gl, 0) == 0.25f);
    struct ggml_tensor * w7 = ggml_rwkv_wkv7(ctx, k, k, k, k, k, k, st);
    CHECK(w7->src[6] == st && w7->ne[1] == T + S*ns);

    struct ggml_tensor * q4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, H, T, ns);
    struct ggml_tensor * g4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, H, T, ns);
    struct ggml_tensor * s4 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, S, H, ns);
    struct ggml_tensor * gd = ggml_gated_delta_net(ctx, q4, q4, q4, g4, g4, s4, 3);
    CHECK(gd->ne[0] == S*H && gd->ne[1] == T*ns + 3*S*ns && gd->op_params[0] == 3);

    struct ggml_tensor * comb = ggml_dsv4_hc_comb(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 24, 5),
                                                  ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3),
                                                  ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 24), 1e-6f, 3);
    CHECK(comb->ne[0] == 4 && comb->ne[1] == 4 && comb->ne[2] == 5 && pf(comb, 0) == 1e-6f && comb->op_params[1] == 3);
    ggml_free(ctx);
}

//
// misuse aborts with the failed condition
//

static void test_misuse(void) {
    struct ggml_context * ctx = tt_ctx_new(4);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 4);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    CHECK_ABORTS("lower && left && !uni", ggml_solve_tri(ctx, a, b, true, false, false));
    CHECK_ABORTS("a->ne[0] == a->ne[1]", ggml_tri(ctx, b, GGML_TRI_TYPE_LOWER));
    CHECK_ABORTS("GGML_TYPE_F32", ggml_cumsum(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 4)));
    struct ggml_tensor * s  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 16, 1, 4, 1);
    struct ggml_tensor * x  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, 4, 2, 1);
    struct ggml_tensor * dt = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 2, 1);
    struct ggml_tensor * A1 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 16, 4);
    struct ggml_tensor * B  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 16, 1, 2, 1);
    struct ggml_tensor * id = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    CHECK_ABORTS("K == 1", ggml_ssm_scan(ctx, s, x, dt, A1, B, B, id, 2)); // snapshots need a scalar A
    CHECK_ABORTS("mixes->ne[0] == (2 + hc) * hc",
                 ggml_dsv4_hc_comb(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 15, 2), ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3),
                                   ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 15), 1e-6f, 1));
    ggml_free(ctx);
}

//
// closed forms on the CPU
//

static enum ggml_status compute(struct ggml_context * ctx, struct ggml_tensor * out, int nth, bool ref) {
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    struct ggml_cplan plan = ggml_graph_plan(gf, nth, NULL);
    plan.use_ref = ref;
    uint8_t * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
    plan.work_data = work;
    const enum ggml_status st = ggml_graph_compute(gf, &plan);
    free(work);
    return st;
}

// Computes out with 3 and 1 threads on the vector path (which must agree bit
// for bit) and checks the scalar path against them within 1e-6 relative; out
// keeps the vector path's result.
static void compute_all_ways(struct ggml_context * ctx, struct ggml_tensor * out, const char * what) {
    const int64_t n = ggml_nelements(out);
    float * scalar = malloc((size_t) n * sizeof(float));
    float * three  = malloc((size_t) n * sizeof(float));
    CHECK(compute(ctx, out, 1, true) == GGML_STATUS_SUCCESS);
    memcpy(scalar, out->data, (size_t) n * sizeof(float));
    CHECK(compute(ctx, out, 3, false) == GGML_STATUS_SUCCESS);
    memcpy(three, out->data, (size_t) n * sizeof(float));
    CHECK(compute(ctx, out, 1, false) == GGML_STATUS_SUCCESS);
    CHECK_MSG(memcmp(three, out->data, (size_t) n * sizeof(float)) == 0, "%s: 1 and 3 threads differ", what);
    double worst = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double v = fdata(out)[i];
        worst = fmax(worst, fabs(v - (double) scalar[i]) / (1.0 + fabs(v)));
    }
    CHECK_MSG(worst < 1e-6, "%s: scalar and vector paths differ by %g", what, worst);
    free(three);
    free(scalar);
}

static void test_closed_forms(void) {
    struct ggml_context * ctx = tt_ctx_new(64);

    // cumsum of ones along rows of 1001: 1, 2, ..., exactly
    struct ggml_tensor * ones = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1001, 3);
    fill(ones, 1.0f);
    struct ggml_tensor * cs = ggml_cumsum(ctx, ones);
    compute_all_ways(ctx, cs, "cumsum");
    bool ok = true;
    for (int64_t r = 0; r < 3; r++) {
        for (int64_t i = 0; i < 1001; i++) {
            ok = ok && fdata(cs)[r*1001 + i] == (float) (i + 1);
        }
    }
    CHECK_MSG(ok, "cumsum of ones");

    // solve_tri: B = L X for a known X; the solution gives X back
    const int64_t n = 37, kc = 70;
    struct ggml_tensor * L = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n, n, 2);
    struct ggml_tensor * B = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, kc, n, 2);
    uint64_t seed = 7;
    double * X = malloc((size_t) (kc*n*2) * sizeof(double));
    for (int64_t m = 0; m < 2; m++) {
        for (int64_t i = 0; i < n; i++) {
            for (int64_t j = 0; j < n; j++) {
                // well conditioned: a dominant diagonal, small values below it
                fdata(L)[(m*n + i)*n + j] = j < i ? (float) tt_rand_uniform(&seed, -0.1, 0.1) : j == i ? 2.0f : 0.0f;
            }
            for (int64_t c = 0; c < kc; c++) {
                X[(m*n + i)*kc + c] = (double) (float) tt_rand_uniform(&seed, -1.0, 1.0);
            }
        }
        for (int64_t i = 0; i < n; i++) {
            for (int64_t c = 0; c < kc; c++) {
                double sum = 0.0;
                for (int64_t t = 0; t <= i; t++) {
                    sum += (double) fdata(L)[(m*n + i)*n + t] * X[(m*n + t)*kc + c];
                }
                fdata(B)[(m*n + i)*kc + c] = (float) sum;
            }
        }
    }
    struct ggml_tensor * sol = ggml_solve_tri(ctx, L, B, true, true, false);
    compute_all_ways(ctx, sol, "solve_tri");
    double worst = 0.0;
    for (int64_t i = 0; i < kc*n*2; i++) {
        worst = fmax(worst, fabs((double) fdata(sol)[i] - X[i]));
    }
    CHECK_MSG(worst < 1e-5, "solve_tri: max error %g", worst);
    free(X);

    // group_norm: each group of channels has mean 0 and variance 1 afterwards
    struct ggml_tensor * gx = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 3, 7, 2); // 7 channels in 3 groups: 3, 3, 1
    tt_fill_uniform(gx, -2.0, 3.0, 11);
    struct ggml_tensor * gn = ggml_group_norm(ctx, gx, 3, 1e-6f);
    compute_all_ways(ctx, gn, "group_norm");
    for (int64_t i3 = 0; i3 < 2; i3++) {
        for (int64_t c0 = 0; c0 < 7; c0 += 3) {
            const int64_t c1 = c0 + 3 < 7 ? c0 + 3 : 7;
            double s1 = 0.0, s2 = 0.0, cnt = 0.0;
            for (int64_t c = c0; c < c1; c++) {
                for (int64_t i = 0; i < 15; i++) {
                    const double v = fdata(gn)[(i3*7 + c)*15 + i];
                    s1 += v;
                    s2 += v*v;
                    cnt += 1.0;
                }
            }
            CHECK_NEAR(s1 / cnt, 0.0, 1e-6);
            CHECK_NEAR(s2 / cnt, 1.0, 1e-4);
        }
    }

    // gated delta net, one token from a zero state with g = 0 (no decay) and
    // beta = 1: S = k v^T, out = (q . k) v / sqrt(S_v); the state slot is k v^T
    const int64_t S = 16, H = 2;
    struct ggml_tensor * q  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, H, 1, 1);
    struct ggml_tensor * kk = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, H, 1, 1);
    struct ggml_tensor * v  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, H, 1, 1);
    struct ggml_tensor * g  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, H, 1, 1);
    struct ggml_tensor * be = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, H, 1, 1);
    struct ggml_tensor * s0 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, S, S, H, 1);
    tt_fill_uniform(q, -1.0, 1.0, 1);
    tt_fill_uniform(kk, -1.0, 1.0, 2);
    tt_fill_uniform(v, -1.0, 1.0, 3);
    fill(g, 0.0f);
    fill(be, 1.0f);
    fill(s0, 0.0f);
    struct ggml_tensor * gdn = ggml_gated_delta_net(ctx, q, kk, v, g, be, s0, 1);
    compute_all_ways(ctx, gdn, "gated_delta_net");
    worst = 0.0;
    for (int64_t h = 0; h < H; h++) {
        double qk = 0.0;
        for (int64_t i = 0; i < S; i++) {
            qk += (double) fdata(q)[h*S + i] * fdata(kk)[h*S + i];
        }
        for (int64_t j = 0; j < S; j++) {
            const double want = qk * fdata(v)[h*S + j] / sqrt((double) S);
            worst = fmax(worst, fabs(fdata(gdn)[h*S + j] - want));
            for (int64_t i = 0; i < S; i++) {
                // state element (i0 = i key, i1 = j value) of head h
                const double st = fdata(gdn)[S*H + (h*S + j)*S + i];
                worst = fmax(worst, fabs(st - (double) fdata(kk)[h*S + i] * fdata(v)[h*S + j]));
            }
        }
    }
    CHECK_MSG(worst < 1e-5, "gated_delta_net: max error %g", worst);

    // Mamba-2 scan, one token from a zero state: y[d] = x[d] softplus(dt) (B . C)
    const int64_t ds = 16, hd = 4, nh = 2;
    struct ggml_tensor * ss = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ds, hd, nh, 1);
    struct ggml_tensor * sxv = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, hd, nh, 1, 1);
    struct ggml_tensor * sdt = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, nh, 1, 1);
    struct ggml_tensor * sA = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, nh);
    struct ggml_tensor * sB = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ds, 1, 1, 1);
    struct ggml_tensor * sC = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ds, 1, 1, 1);
    struct ggml_tensor * sid = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    fill(ss, 0.0f);
    tt_fill_uniform(sxv, -1.0, 1.0, 4);
    tt_fill_uniform(sdt, -1.0, 1.0, 5);
    tt_fill_uniform(sA, -1.0, -0.5, 6);
    tt_fill_uniform(sB, -1.0, 1.0, 7);
    tt_fill_uniform(sC, -1.0, 1.0, 8);
    ((int32_t *) sid->data)[0] = 0;
    struct ggml_tensor * scan = ggml_ssm_scan(ctx, ss, sxv, sdt, sA, sB, sC, sid, 1);
    compute_all_ways(ctx, scan, "ssm_scan");
    double bc = 0.0;
    for (int64_t i = 0; i < ds; i++) {
        bc += (double) fdata(sB)[i] * fdata(sC)[i];
    }
    worst = 0.0;
    for (int64_t h = 0; h < nh; h++) {
        const double sp = log1p(exp((double) fdata(sdt)[h]));
        for (int64_t d = 0; d < hd; d++) {
            worst = fmax(worst, fabs(fdata(scan)[h*hd + d] - fdata(sxv)[h*hd + d] * sp * bc));
        }
    }
    CHECK_MSG(worst < 1e-5, "ssm_scan: max error %g", worst);

    // dsv4_hc_comb: after the last normalisation over the sources, each
    // destination's weights sum to sum / (sum + eps), within eps of 1
    struct ggml_tensor * mixes = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 24, 9);
    struct ggml_tensor * scale = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor * base  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 24);
    tt_fill_uniform(mixes, -2.0, 2.0, 9);
    tt_fill_uniform(scale, -0.5, 0.5, 10);
    tt_fill_uniform(base, -0.25, 0.25, 12);
    struct ggml_tensor * comb = ggml_dsv4_hc_comb(ctx, mixes, scale, base, 1e-6f, 3);
    compute_all_ways(ctx, comb, "dsv4_hc_comb");
    worst = 0.0;
    for (int64_t t = 0; t < 9; t++) {
        for (int64_t d = 0; d < 4; d++) {
            double sum = 0.0;
            for (int64_t s = 0; s < 4; s++) {
                sum += fdata(comb)[(t*4 + s)*4 + d];
            }
            worst = fmax(worst, fabs(sum - 1.0));
        }
    }
    CHECK_MSG(worst < 1e-5, "dsv4_hc_comb: column sums off by %g", worst);

    // xielu at known points, both paths: x > 0: ap x^2 + beta x; x <= 0: (expm1(min(x, eps)) - x) an + beta x
    struct ggml_tensor * xi = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 37);
    for (int i = 0; i < 37; i++) {
        fdata(xi)[i] = -3.0f + 0.17f * (float) i;
    }
    struct ggml_tensor * xo = ggml_xielu(ctx, xi, 0.8f, 0.3f, 0.5f, -1e-6f);
    compute_all_ways(ctx, xo, "xielu");
    const double an = 0.5 + log1p(exp(0.8)), ap = log1p(exp(0.3));
    worst = 0.0;
    for (int i = 0; i < 37; i++) {
        const double x0 = fdata(xi)[i];
        const double want = x0 > 0.0 ? ap * x0 * x0 + 0.5 * x0 : (expm1(fmin(x0, -1e-6)) - x0) * an + 0.5 * x0;
        worst = fmax(worst, fabs(fdata(xo)[i] - want) / (1.0 + fabs(want)));
    }
    CHECK_MSG(worst < 1e-5, "xielu: max error %g", worst);

    ggml_free(ctx);
}

int main(void) {
    test_metadata();
    test_misuse();
    test_closed_forms();
    return TEST_RESULT();
}
