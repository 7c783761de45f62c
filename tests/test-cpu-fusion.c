// test-cpu-fusion: the nodes the CPU computes as one kernel (graph-fusion.c):
// RMS_NORM then MUL by a weight, ADD then RMS_NORM then MUL, and two to
// four MUL_MATs of the same activations.
//
// Each graph is computed twice: as built (fused where the pattern holds) and
// with the norm marked as an output, which forbids the fusion (the norm's
// result must then exist); the results must be the same bits, and within
// 2e-6 of a double-precision reference. That the fusion ran is seen from the
// norm's memory, filled with a NaN pattern first: the fused kernel never
// writes it. Shapes: a generated token's row, odd rows and batches, the
// weight broadcast over rows and matrices or of the full shape, the weight
// as either operand, the ADD and the MUL in place, 1 to 3 threads; then
// patterns that must not fuse (the norm read twice, also by a node added with
// ggml_graph_add_node, an F16 weight, a weight that is not a whole row); and a residual chain allocated by ggml-alloc and
// computed by the CPU backend, with the fused kinds seen in its profile.
// Product pairs (quantized, float, of two types that read the same
// activations, several chunks of other sizes each, 1 and 3 threads) against
// the same products with a node between them, bit for bit, and a double
// reference; pairs that must not fuse (other activation types, the tile
// kernels' many columns). Groups of up to GGML_CPU_MUL_MAT_GROUP_MAX products
// (Q, K and V of a layer): 3 to 6 products in a row, cut into groups where
// one cannot join (another activation type, weights that are an earlier
// product's result) or the group is full, against the same products apart.
// With GGML_CPU_DISABLE_FUSION=1 (a second ctest entry) nothing may fuse.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "testing.h"
#include "cpu-testing.h"
#include "cpu-profile.h"
#include "cpu-impl.h"

#include <stdlib.h>
#include <string.h>

static bool g_fusion_off;

// the CPU backend's profile switch, through its registry (checked)
static ggml_backend_cpu_set_profile_t profile_setter(ggml_backend_t be) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(ggml_backend_get_device(be));
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_set_profile");
    ggml_backend_cpu_set_profile_t set_profile = NULL;
    memcpy(&set_profile, &sym, sizeof(sym));
    CHECK(set_profile != NULL);
    return set_profile;
}

#define EPS 1e-5f

struct fuse_case {
    const char * name;
    int64_t      ne[4];   // of the rows
    int64_t      wne[4];  // of the weight
    bool         with_add;
    bool         w_first;     // MUL(w, norm) rather than MUL(norm, w)
    bool         add_inplace;
    bool         mul_inplace;
};

// the nodes of one case, in a context of its own
struct fuse_graph {
    struct ggml_context * ctx;
    struct ggml_tensor  * a, * b, * w;  // inputs (b only with an ADD)
    struct ggml_tensor  * add, * norm, * mul;
    struct ggml_tensor  * a_copy;       // a's values before an in-place ADD
};

static void fill_nan(struct ggml_tensor * t) {
    const uint32_t pattern = 0x7fc0dead;
    uint32_t * p = (uint32_t *) t->data;
    for (size_t i = 0; i < ggml_nbytes(t) / 4; i++) {
        p[i] = pattern;
    }
}

static bool all_nan_pattern(const struct ggml_tensor * t) {
    const uint32_t * p = (const uint32_t *) t->data;
    for (size_t i = 0; i < ggml_nbytes(t) / 4; i++) {
        if (p[i] != 0x7fc0dead) {
            return false;
        }
    }
    return true;
}

static struct fuse_graph build_case(const struct fuse_case * c, bool forbid) {
    struct fuse_graph g = { 0 };
    g.ctx = tt_ctx_new(64);
    g.a = ggml_new_tensor(g.ctx, GGML_TYPE_F32, 4, c->ne);
    g.w = ggml_new_tensor(g.ctx, GGML_TYPE_F32, 4, c->wne);
    tt_fill_uniform(g.a, -2.0, 2.0, 11);
    tt_fill_uniform(g.w, -1.5, 1.5, 12);
    g.a_copy = ggml_dup_tensor(g.ctx, g.a);
    memcpy(g.a_copy->data, g.a->data, ggml_nbytes(g.a));
    struct ggml_tensor * x = g.a;
    if (c->with_add) {
        g.b = ggml_new_tensor(g.ctx, GGML_TYPE_F32, 4, c->ne);
        tt_fill_uniform(g.b, -2.0, 2.0, 13);
        g.add = c->add_inplace ? ggml_add_inplace(g.ctx, g.a, g.b) : ggml_add(g.ctx, g.a, g.b);
        x = g.add;
    }
    g.norm = ggml_rms_norm(g.ctx, x, EPS);
    if (c->mul_inplace) {
        g.mul = ggml_mul_inplace(g.ctx, g.norm, g.w);
    } else {
        g.mul = c->w_first ? ggml_mul(g.ctx, g.w, g.norm) : ggml_mul(g.ctx, g.norm, g.w);
    }
    if (forbid) {
        ggml_set_output(g.norm);
    }
    fill_nan(g.norm);
    return g;
}

static enum ggml_status compute(struct fuse_graph * g, int n_threads) {
    struct ggml_cgraph * gf = ggml_new_graph(g->ctx);
    ggml_build_forward_expand(gf, g->mul);
    if (g->add != NULL) {
        // a second reader of the sum, as the next residual ADD of a model
        ggml_build_forward_expand(gf, ggml_scale(g->ctx, g->add, 2.0f));
    }
    return ggml_graph_compute_with_ctx(g->ctx, gf, n_threads);
}

struct ref_ctx {
    const struct fuse_graph * g;
    const struct fuse_case  * c;
};

static double ref_x(const struct ref_ctx * r, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    double v = tt_get(r->g->a_copy, i0, i1, i2, i3);
    if (r->c->with_add) {
        v += tt_get(r->g->b, i0, i1, i2, i3);
    }
    return v;
}

static double ref_mul(int64_t i0, int64_t i1, int64_t i2, int64_t i3, void * user) {
    const struct ref_ctx * r = (const struct ref_ctx *) user;
    double ss = 0.0;
    const int64_t n = r->c->ne[0];
    for (int64_t k = 0; k < n; k++) {
        const double v = ref_x(r, k, i1, i2, i3);
        ss += v * v;
    }
    const double scale = 1.0 / sqrt(ss / (double) n + (double) EPS);
    const int64_t * wne = r->c->wne;
    return ref_x(r, i0, i1, i2, i3) * scale * tt_get(r->g->w, i0, i1 % wne[1], i2 % wne[2], i3 % wne[3]);
}

static double ref_add(int64_t i0, int64_t i1, int64_t i2, int64_t i3, void * user) {
    return ref_x((const struct ref_ctx *) user, i0, i1, i2, i3);
}

static void run_case(const struct fuse_case * c, bool expect_fused) {
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        struct fuse_graph fused = build_case(c, false);
        struct fuse_graph plain = build_case(c, true);
        CHECK(compute(&fused, n_threads) == GGML_STATUS_SUCCESS);
        CHECK(compute(&plain, n_threads) == GGML_STATUS_SUCCESS);

        CHECK_MSG(tt_same_bits(fused.mul, plain.mul), "%s, %d threads: fused and unfused results differ", c->name,
                  n_threads);
        if (c->with_add) {
            CHECK_MSG(tt_same_bits(fused.add, plain.add), "%s, %d threads: the sums differ", c->name, n_threads);
            struct ref_ctx r = { &fused, c };
            const double err = tt_max_err(fused.add, ref_add, &r, 1e-6, 1e-6);
            CHECK_MSG(err <= 1.0, "%s: the sum is off the reference (%.3g)", c->name, err);
        }
        struct ref_ctx r = { &fused, c };
        const double err = tt_max_err(fused.mul, ref_mul, &r, 2e-6, 2e-6);
        CHECK_MSG(err <= 1.0, "%s, %d threads: off the reference (%.3g of the tolerance)", c->name, n_threads, err);

        // the unfused norm was written; the fused one not (unless the MUL is in place on it)
        CHECK_MSG(!all_nan_pattern(plain.norm), "%s: the norm marked as output was not computed", c->name);
        if (!c->mul_inplace) {
            const bool fused_ran = all_nan_pattern(fused.norm);
            CHECK_MSG(fused_ran == expect_fused, "%s, %d threads: fusion %s, expected %s", c->name, n_threads,
                      fused_ran ? "ran" : "did not run", expect_fused ? "to" : "not to");
        }
        ggml_free(fused.ctx);
        ggml_free(plain.ctx);
    }
}

static void test_patterns(void) {
    const struct fuse_case cases[] = {
        { "token row",            { 2048, 1, 1, 1 }, { 2048, 1, 1, 1 }, false, false, false, false },
        { "add, token row",       { 2048, 1, 1, 1 }, { 2048, 1, 1, 1 }, true,  false, false, false },
        { "odd rows",             { 1001, 7, 1, 1 }, { 1001, 1, 1, 1 }, false, false, false, false },
        { "add, odd rows, batch", { 67, 5, 3, 2 },   { 67, 1, 1, 1 },   true,  false, false, false },
        { "weight per row",       { 33, 4, 2, 1 },   { 33, 4, 2, 1 },   true,  true,  false, false },
        { "weight per matrix",    { 40, 3, 4, 1 },   { 40, 1, 4, 1 },   false, false, false, false },
        { "weight first",         { 19, 6, 1, 1 },   { 19, 6, 1, 1 },   false, true,  false, false },
        { "short row",            { 1, 9, 1, 1 },    { 1, 1, 1, 1 },    true,  false, false, false },
        { "add in place",         { 300, 5, 1, 1 },  { 300, 1, 1, 1 },  true,  false, true,  false },
        { "mul in place",         { 300, 5, 1, 1 },  { 300, 1, 1, 1 },  true,  false, false, true  },
        { "both in place",        { 129, 3, 1, 1 },  { 129, 1, 1, 1 },  true,  false, true,  true  },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        run_case(&cases[i], !g_fusion_off);
    }
}

// patterns that must run unfused, and still right
static void test_not_fused(void) {
    // the norm read twice: by the MUL and by another node
    {
        const struct fuse_case c = { "norm read twice", { 64, 3, 1, 1 }, { 64, 1, 1, 1 }, true, false, false, false };
        struct fuse_graph g = build_case(&c, false);
        struct ggml_cgraph * gf = ggml_new_graph(g.ctx);
        struct ggml_tensor * other = ggml_scale(g.ctx, g.norm, 3.0f);
        ggml_build_forward_expand(gf, g.mul);
        ggml_build_forward_expand(gf, other);
        CHECK(ggml_graph_compute_with_ctx(g.ctx, gf, 2) == GGML_STATUS_SUCCESS);
        CHECK_MSG(!all_nan_pattern(g.norm), "a norm read by two nodes was fused away");
        struct ref_ctx r = { &g, &c };
        CHECK(tt_max_err(g.mul, ref_mul, &r, 2e-6, 2e-6) <= 1.0);
        ggml_free(g.ctx);
    }
    // a reader of the norm added after the graph was built (ggml_graph_add_node)
    {
        const struct fuse_case c = { "norm read by an added node", { 64, 3, 1, 1 }, { 64, 1, 1, 1 }, false, false, false, false };
        struct fuse_graph g = build_case(&c, false);
        struct ggml_cgraph * gf = ggml_new_graph(g.ctx);
        ggml_build_forward_expand(gf, g.mul);
        struct ggml_tensor * other = ggml_scale(g.ctx, g.norm, 3.0f);
        // flagged to compute by a graph of its own first, as add_node does not
        ggml_build_forward_expand(ggml_new_graph(g.ctx), other);
        ggml_graph_add_node(gf, other);
        CHECK(ggml_graph_compute_with_ctx(g.ctx, gf, 2) == GGML_STATUS_SUCCESS);
        CHECK_MSG(!all_nan_pattern(g.norm), "a norm read by an added node was fused away");
        double worst = 0.0;
        for (int64_t i1 = 0; i1 < 3; i1++) {
            for (int64_t i0 = 0; i0 < 64; i0++) {
                const double n = tt_get(g.norm, i0, i1, 0, 0);
                worst = fmax(worst, fabs(tt_get(other, i0, i1, 0, 0) - 3.0 * n) / (1e-6 + 1e-6 * fabs(3.0 * n)));
            }
        }
        CHECK_MSG(worst <= 1.0, "the added node read a wrong norm (%.3g)", worst);
        ggml_free(g.ctx);
    }
    // an F16 weight; a weight of one value per row (MUL broadcasts it along the row)
    for (int k = 0; k < 2; k++) {
        struct ggml_context * ctx = tt_ctx_new(16);
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 48, 3);
        struct ggml_tensor * w = k == 0 ? ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 48, 1)
                                        : ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, 3);
        tt_fill_uniform(a, -1.0, 1.0, 3);
        tt_fill_uniform(w, -1.0, 1.0, 4);
        struct ggml_tensor * norm = ggml_rms_norm(ctx, a, EPS);
        fill_nan(norm);
        struct ggml_tensor * mul = ggml_mul(ctx, norm, w);
        CHECK(tt_compute(ctx, mul, 2) == GGML_STATUS_SUCCESS);
        CHECK_MSG(!all_nan_pattern(norm), "a norm times an %s weight was fused", k == 0 ? "F16" : "one-column");
        double worst = 0.0;
        for (int64_t i1 = 0; i1 < 3; i1++) {
            double ss = 0.0;
            for (int64_t i0 = 0; i0 < 48; i0++) {
                ss += tt_get(a, i0, i1, 0, 0) * tt_get(a, i0, i1, 0, 0);
            }
            const double s = 1.0 / sqrt(ss / 48.0 + (double) EPS);
            for (int64_t i0 = 0; i0 < 48; i0++) {
                const double wv = k == 0 ? tt_get(w, i0, 0, 0, 0) : tt_get(w, 0, i1, 0, 0);
                const double r = tt_get(a, i0, i1, 0, 0) * s * wv;
                worst = fmax(worst, fabs(tt_get(mul, i0, i1, 0, 0) - r) / (2e-6 + 2e-6 * fabs(r)));
            }
        }
        CHECK_MSG(worst <= 1.0, "unfused norm times weight %d off the reference (%.3g)", k, worst);
        ggml_free(ctx);
    }
}

// a residual chain as in a model's layers, allocated by ggml-alloc (which
// reuses freed memory in place) and computed by the CPU backend; the
// profile says which fusions ran
static void test_backend_chain(void) {
    enum { N = 96, T = 3, L = 3 };
    ggml_backend_t be = ggml_backend_cpu_init();
    CHECK(be != NULL);
    if (be == NULL) {
        return;
    }
    ggml_backend_cpu_set_n_threads(be, 2);

    struct ggml_init_params ip = { ggml_tensor_overhead() * 256 + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * x0 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N, T);
    struct ggml_tensor * y0 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N, T);
    struct ggml_tensor * w[L + 1];
    ggml_set_input(x0);
    ggml_set_input(y0);
    for (int l = 0; l <= L; l++) {
        w[l] = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
        ggml_set_input(w[l]);
    }
    // h = x + y; y = 0.5 * rms_norm(h) * w; x = h; ... out = rms_norm(x + y) * w[L]
    struct ggml_tensor * x = x0, * y = y0;
    for (int l = 0; l < L; l++) {
        struct ggml_tensor * h = ggml_add(ctx, x, y);
        y = ggml_scale(ctx, ggml_mul(ctx, ggml_rms_norm(ctx, h, EPS), w[l]), 0.5f);
        x = h;
    }
    struct ggml_tensor * out = ggml_mul(ctx, ggml_rms_norm(ctx, ggml_add(ctx, x, y), EPS), w[L]);
    ggml_set_output(out);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(be));
    CHECK(ggml_gallocr_alloc_graph(galloc, gf));

    float xv[N * T], yv[N * T], wv[L + 1][N];
    uint64_t st = 77;
    for (int i = 0; i < N * T; i++) {
        xv[i] = (float) tt_rand_uniform(&st, -1.0, 1.0);
        yv[i] = (float) tt_rand_uniform(&st, -1.0, 1.0);
    }
    for (int l = 0; l <= L; l++) {
        for (int i = 0; i < N; i++) {
            wv[l][i] = (float) tt_rand_uniform(&st, 0.5, 1.5);
        }
        ggml_backend_tensor_set(w[l], wv[l], 0, sizeof(wv[l]));
    }
    ggml_backend_tensor_set(x0, xv, 0, sizeof(xv));
    ggml_backend_tensor_set(y0, yv, 0, sizeof(yv));

    ggml_backend_cpu_set_profile_t set_profile = profile_setter(be);
    struct ggml_cpu_profile prof;
    memset(&prof, 0, sizeof(prof));
    if (set_profile != NULL) {
        set_profile(be, &prof);
    }
    CHECK(ggml_backend_graph_compute(be, gf) == GGML_STATUS_SUCCESS);
    if (set_profile != NULL) {
        set_profile(be, NULL);
    }
    float got[N * T];
    ggml_backend_tensor_get(out, got, 0, sizeof(got));

    // the reference, in double
    double rx[N * T], ry[N * T];
    for (int i = 0; i < N * T; i++) {
        rx[i] = xv[i];
        ry[i] = yv[i];
    }
    for (int l = 0; l <= L; l++) {
        for (int t = 0; t < T; t++) {
            double h[N], ss = 0.0;
            for (int i = 0; i < N; i++) {
                h[i] = rx[t*N + i] + ry[t*N + i];
                ss += h[i] * h[i];
            }
            const double s = 1.0 / sqrt(ss / N + (double) EPS);
            for (int i = 0; i < N; i++) {
                rx[t*N + i] = h[i];
                ry[t*N + i] = (l < L ? 0.5 : 1.0) * h[i] * s * wv[l][i];
            }
        }
    }
    double worst = 0.0;
    for (int i = 0; i < N * T; i++) {
        worst = fmax(worst, fabs(got[i] - ry[i]) / (1e-5 + 1e-5 * fabs(ry[i])));
    }
    CHECK_MSG(worst <= 1.0, "the residual chain is off the reference (%.3g of the tolerance)", worst);

    // every norm: the first after the inputs' ADD, each with its ADD
    int64_t n_fused = 0, n_norms_alone = 0;
    for (size_t r = 0; r < prof.n_rows; r++) {
        if (prof.rows[r].fusion == GGML_CPU_FUSION_ADD_RMS_NORM_MUL) {
            n_fused += prof.rows[r].n_nodes;
        }
        if (prof.rows[r].op == GGML_OP_RMS_NORM && prof.rows[r].fusion == 0) {
            n_norms_alone += prof.rows[r].n_nodes;
        }
    }
    if (g_fusion_off) {
        CHECK_MSG(n_fused == 0 && n_norms_alone == L + 1, "fusion off: %lld fused, %lld norms alone",
                  (long long) n_fused, (long long) n_norms_alone);
    } else {
        CHECK_MSG(n_fused == L + 1 && n_norms_alone == 0, "%lld of %d ADD+RMS_NORM+MUL fused (%lld norms alone)",
                  (long long) n_fused, L + 1, (long long) n_norms_alone);
    }
    free(prof.rows);
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
    ggml_backend_free(be);
}

// a CPU backend and its profile switch (NULL where there is none), for the
// product tests; NULL (a failed check) when no backend can be made
static ggml_backend_t profiled_backend(ggml_backend_cpu_set_profile_t * set_profile) {
    ggml_backend_t be = ggml_backend_cpu_init();
    CHECK(be != NULL);
    *set_profile = be != NULL ? profile_setter(be) : NULL;
    return be;
}

// MUL_MAT pairs: two products of the same activations, consecutive (fused)
// and with an unrelated node between them (not fused): the same bits, and
// within a double-precision sum over the dequantized weights
static int64_t profile_count(const struct ggml_cpu_profile * p, int32_t fusion) {
    int64_t n = 0;
    for (size_t r = 0; r < p->n_rows; r++) {
        n += p->rows[r].fusion == fusion ? p->rows[r].n_nodes : 0;
    }
    return n;
}

// one product pair of a case, computed by be; apart: an unrelated node
// between the two products (so they cannot fuse); view: a reshape of the
// first between them (it computes nothing: they fuse)
struct pair_case {
    enum ggml_type ta, tb;
    int64_t k, na, nb, cols;
    bool expect;  // the pair fuses
};

struct pair_run {
    struct ggml_context * ctx;
    struct ggml_tensor  * w[2], * x, * out[2];
    int64_t               n_pairs;  // fused, in the profile
};

static struct pair_run pair_compute(ggml_backend_t be, ggml_backend_cpu_set_profile_t set_profile,
                                    const struct pair_case * c, bool apart, bool view) {
    struct pair_run r = { 0 };
    r.ctx  = tt_ctx_new(32);
    r.w[0] = ggml_new_tensor_2d(r.ctx, c->ta, c->k, c->na);
    r.w[1] = ggml_new_tensor_2d(r.ctx, c->tb, c->k, c->nb);
    r.x    = ggml_new_tensor_2d(r.ctx, GGML_TYPE_F32, c->k, c->cols);
    tt_fill_uniform(r.w[0], -1.0, 1.0, 21);
    tt_fill_uniform(r.w[1], -1.0, 1.0, 22);
    tt_fill_uniform(r.x, -1.0, 1.0, 23);
    r.out[0] = ggml_mul_mat(r.ctx, r.w[0], r.x);
    r.out[1] = ggml_mul_mat(r.ctx, r.w[1], r.x);
    struct ggml_cgraph * gf = ggml_new_graph(r.ctx);
    ggml_build_forward_expand(gf, r.out[0]);
    if (apart) {
        ggml_build_forward_expand(gf, ggml_scale(r.ctx, r.x, 2.0f));
    }
    if (view) {
        ggml_build_forward_expand(gf, ggml_reshape_1d(r.ctx, r.out[0], ggml_nelements(r.out[0])));
    }
    ggml_build_forward_expand(gf, r.out[1]);
    struct ggml_cpu_profile prof;
    memset(&prof, 0, sizeof(prof));
    set_profile(be, &prof);
    CHECK(ggml_backend_graph_compute(be, gf) == GGML_STATUS_SUCCESS);
    set_profile(be, NULL);
    r.n_pairs = profile_count(&prof, GGML_CPU_FUSION_MUL_MAT_GROUP);
    free(prof.rows);
    return r;
}

// the products within a double sum over the dequantized weights (the
// activations are rounded to the weights' vec_dot_type: 8 bits for the
// quantized types, 11 for F16)
static void pair_check_ref(const struct pair_run * r) {
    for (int m = 0; m < 2; m++) {
        const struct ggml_tensor * w = r->w[m];
        const double rel = w->type == GGML_TYPE_F32 ? 1e-5 : w->type == GGML_TYPE_F16 ? 2e-3 : 2e-2;
        double worst = 0.0;
        for (int64_t j = 0; j < r->x->ne[1]; j++) {
            for (int64_t i = 0; i < w->ne[1]; i++) {
                double ref = 0.0, mag = 0.0;
                for (int64_t e = 0; e < w->ne[0]; e++) {
                    const double p = tt_get(w, e, i, 0, 0) * tt_get(r->x, e, j, 0, 0);
                    ref += p;
                    mag += fabs(p);
                }
                worst = fmax(worst, fabs(tt_get(r->out[m], i, j, 0, 0) - ref) / (rel * mag + 1e-6));
            }
        }
        CHECK_MSG(worst <= 1.0, "%s product %d off the reference (%.3g of the tolerance)", ggml_type_name(w->type), m,
                  worst);
    }
}

static void test_mul_mat_pairs(void) {
    const struct pair_case cases[] = {
        { GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, 256, 70,  33, 1,  true  },
        { GGML_TYPE_Q4_0, GGML_TYPE_Q4_0, 512, 129, 64, 2,  true  },
        { GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, 512, 40,  97, 1,  true  },  // both read Q8_K activations
        { GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, 2048, 1024, 700, 2, true },  // several chunks each, of other sizes
        { GGML_TYPE_F16,  GGML_TYPE_F16,  96,  50,  17, 3,  true  },
        { GGML_TYPE_F32,  GGML_TYPE_F32,  64,  20,  21, 1,  true  },
        { GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, 64,  16,  16, 1,  false },  // Q8_0 and Q8_1 activations
        { GGML_TYPE_F16,  GGML_TYPE_Q8_0, 64,  16,  16, 1,  false },
        { GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, 256, 64,  64, 40, false },  // many columns: the tile kernels
    };
    ggml_backend_cpu_set_profile_t set_profile;
    ggml_backend_t be = profiled_backend(&set_profile);
    if (be == NULL) {
        return;
    }
    for (size_t ci = 0; set_profile != NULL && ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        const struct pair_case * c = &cases[ci];
        for (int n_threads = 1; n_threads <= 3; n_threads += 2) {
            ggml_backend_cpu_set_n_threads(be, n_threads);
            // a view between the two products on the odd thread count
            struct pair_run together = pair_compute(be, set_profile, c, false, n_threads == 3);
            struct pair_run apart    = pair_compute(be, set_profile, c, true, false);
            const int want = c->expect && !g_fusion_off ? 1 : 0;
            CHECK_MSG(together.n_pairs == want && apart.n_pairs == 0,
                      "%s x %s, %lld columns%s: %lld pairs fused together, %lld apart; expected %d and 0",
                      ggml_type_name(c->ta), ggml_type_name(c->tb), (long long) c->cols,
                      n_threads == 3 ? ", a view between" : "", (long long) together.n_pairs,
                      (long long) apart.n_pairs, want);
            CHECK_MSG(tt_same_bits(together.out[0], apart.out[0]) && tt_same_bits(together.out[1], apart.out[1]),
                      "%s x %s, %d threads: the products together and apart differ", ggml_type_name(c->ta),
                      ggml_type_name(c->tb), n_threads);
            if (n_threads == 1 && c->k * (c->na + c->nb) <= 100000) {
                pair_check_ref(&together);
            }
            ggml_free(together.ctx);
            ggml_free(apart.ctx);
        }
    }
    ggml_backend_free(be);
}

// MUL_MAT groups: n products of one x in a row (a view of the first after
// it), against the same products with a node between each; want[g]: the
// expected group sizes in order (0 ends)
struct group_case {
    const char *   name;
    int            n;
    enum ggml_type type[6];
    int64_t        rows[6];
    int64_t        k, cols;
    int            chain;    // product chain's weights are product 0's result (-1: none)
    int            want[4];  // the sizes of the fused groups, in graph order
};

static void group_compute(ggml_backend_t be, ggml_backend_cpu_set_profile_t set_profile, const struct group_case * c,
                          bool apart, struct ggml_context ** ctx_out, struct ggml_tensor ** out,
                          int64_t * n_groups /* [GGML_CPU_MUL_MAT_GROUP_MAX + 1], by size */) {
    struct ggml_context * ctx = tt_ctx_new(64);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, c->k, c->cols);
    tt_fill_uniform(x, -1.0, 1.0, 30);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    for (int m = 0; m < c->n; m++) {
        struct ggml_tensor * w;
        if (m == c->chain) {
            w = out[0];
        } else {
            w = ggml_new_tensor_2d(ctx, c->type[m], c->k, c->rows[m]);
            tt_fill_uniform(w, -1.0, 1.0, 31 + (uint64_t) m);
        }
        if (m > 0 && apart) {
            ggml_build_forward_expand(gf, ggml_scale(ctx, x, 2.0f));
        }
        out[m] = ggml_mul_mat(ctx, w, x);
        ggml_build_forward_expand(gf, out[m]);
        if (m == 0) {
            ggml_build_forward_expand(gf, ggml_reshape_1d(ctx, out[0], ggml_nelements(out[0])));
        }
    }
    struct ggml_cpu_profile prof;
    memset(&prof, 0, sizeof(prof));
    set_profile(be, &prof);
    CHECK(ggml_backend_graph_compute(be, gf) == GGML_STATUS_SUCCESS);
    set_profile(be, NULL);
    for (int g = 0; g <= GGML_CPU_MUL_MAT_GROUP_MAX; g++) {
        n_groups[g] = 0;
    }
    for (size_t r = 0; r < prof.n_rows; r++) {
        const struct ggml_cpu_profile_row * row = &prof.rows[r];
        if (row->fusion == GGML_CPU_FUSION_MUL_MAT_GROUP && row->sub_op >= 2 && row->sub_op <= GGML_CPU_MUL_MAT_GROUP_MAX) {
            n_groups[row->sub_op] += row->n_nodes;
        }
    }
    free(prof.rows);
    *ctx_out = ctx;
}

static void test_mul_mat_groups(void) {
    const struct group_case cases[] = {
        { "Q, K, V", 3, { GGML_TYPE_Q4_K, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K }, { 256, 64, 64 }, 512, 1, -1, { 3 } },
        { "four Q8_0", 4, { GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, GGML_TYPE_Q8_0 }, { 70, 33, 129, 8 }, 256, 2,
          -1, { 4 } },
        { "five: full at four", 5, { GGML_TYPE_F16, GGML_TYPE_F16, GGML_TYPE_F16, GGML_TYPE_F16, GGML_TYPE_F16 },
          { 17, 50, 3, 64, 9 }, 96, 3, -1, { 4 } },
        { "six: four and two", 6, { GGML_TYPE_Q4_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_0,
          GGML_TYPE_Q4_0 }, { 16, 32, 48, 64, 80, 96 }, 128, 1, -1, { 4, 2 } },
        { "Q4_1 between", 4, { GGML_TYPE_Q4_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q4_0 }, { 16, 16, 16, 16 }, 64, 1,
          -1, { 2 } },
        // product 1 reads product 0's result: 0 alone, then 1 and 2
        { "weights from the first", 3, { GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32 }, { 64, 0, 20 }, 64, 1, 1, { 2 } },
    };
    ggml_backend_cpu_set_profile_t set_profile;
    ggml_backend_t be = profiled_backend(&set_profile);
    if (be == NULL) {
        return;
    }
    for (size_t ci = 0; set_profile != NULL && ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        const struct group_case * c = &cases[ci];
        for (int n_threads = 1; n_threads <= 3; n_threads += 2) {
            ggml_backend_cpu_set_n_threads(be, n_threads);
            struct ggml_context * ctx_t, * ctx_a;
            struct ggml_tensor * out_t[6], * out_a[6];
            int64_t groups_t[GGML_CPU_MUL_MAT_GROUP_MAX + 1], groups_a[GGML_CPU_MUL_MAT_GROUP_MAX + 1];
            group_compute(be, set_profile, c, false, &ctx_t, out_t, groups_t);
            group_compute(be, set_profile, c, true, &ctx_a, out_a, groups_a);
            int64_t want[GGML_CPU_MUL_MAT_GROUP_MAX + 1] = { 0 };
            for (int g = 0; g < 4 && c->want[g] != 0 && !g_fusion_off; g++) {
                want[c->want[g]]++;
            }
            for (int g = 2; g <= GGML_CPU_MUL_MAT_GROUP_MAX; g++) {
                CHECK_MSG(groups_t[g] == want[g] && groups_a[g] == 0,
                          "%s, %d threads: %lld groups of %d fused together, %lld apart; expected %lld and 0", c->name,
                          n_threads, (long long) groups_t[g], g, (long long) groups_a[g], (long long) want[g]);
            }
            for (int m = 0; m < c->n; m++) {
                CHECK_MSG(tt_same_bits(out_t[m], out_a[m]), "%s, %d threads: product %d together and apart differ",
                          c->name, n_threads, m);
            }
            ggml_free(ctx_t);
            ggml_free(ctx_a);
        }
    }
    ggml_backend_free(be);
}

// MUL_MAT pairs with the GLU of their results (gate, up, SWIGLU): computed
// together (one fused node), and apart (a node between the products), the
// same bits of the products and the GLU; layout: how the graph is built
enum glu_layout {
    GLU_AFTER,        // a, b, glu(a, b)
    GLU_SWAPPED,      // a, b, glu(b, a): the second product activated
    GLU_VIEW,         // a, b, a view of b, glu(a, b)
    GLU_NODE_BEFORE,  // a, b, an unrelated node, glu(a, b): the pair alone fuses
    GLU_OF_ONE,       // a, b, glu(a, a): the pair alone fuses
    GLU_OVER_X,       // a, b, glu(a, b) written over the activations: the pair alone fuses
};

struct glu_case {
    const char *      name;
    enum ggml_glu_op  op;
    enum ggml_type    ta, tb;
    int64_t           k, na, nb, cols;
    enum glu_layout   layout;
    bool              expect;  // the GLU fuses with the pair
    int               pairs;   // else the pairs fused without it
};

struct glu_run {
    struct ggml_context * ctx;
    struct ggml_tensor  * out[3];  // a, b, the GLU
    int64_t               n_glu, n_pairs, n_glu_alone;
};

static struct glu_run glu_compute(ggml_backend_t be, ggml_backend_cpu_set_profile_t set_profile,
                                  const struct glu_case * c, bool apart) {
    struct glu_run r = { 0 };
    r.ctx = tt_ctx_new(64);
    struct ggml_tensor * wa = ggml_new_tensor_2d(r.ctx, c->ta, c->k, c->na);
    struct ggml_tensor * wb = ggml_new_tensor_2d(r.ctx, c->tb, c->k, c->nb);
    struct ggml_tensor * x  = ggml_new_tensor_2d(r.ctx, GGML_TYPE_F32, c->k, c->cols);
    tt_fill_uniform(wa, -1.0, 1.0, 41);
    tt_fill_uniform(wb, -1.0, 1.0, 42);
    tt_fill_uniform(x, -1.0, 1.0, 43);
    struct ggml_cgraph * gf = ggml_new_graph(r.ctx);
    r.out[0] = ggml_mul_mat(r.ctx, wa, x);
    ggml_build_forward_expand(gf, r.out[0]);
    if (apart) {
        ggml_build_forward_expand(gf, ggml_scale(r.ctx, x, 2.0f));
    }
    r.out[1] = ggml_mul_mat(r.ctx, wb, x);
    ggml_build_forward_expand(gf, r.out[1]);
    struct ggml_tensor * ga = r.out[0], * gb = r.out[1];
    switch (c->layout) {
        case GLU_AFTER:       break;
        case GLU_SWAPPED:     ga = r.out[1]; gb = r.out[0]; break;
        case GLU_VIEW:        ggml_build_forward_expand(gf, ggml_reshape_1d(r.ctx, r.out[1], ggml_nelements(r.out[1]))); break;
        case GLU_NODE_BEFORE: ggml_build_forward_expand(gf, ggml_scale(r.ctx, x, 3.0f)); break;
        case GLU_OF_ONE:      gb = r.out[0]; break;
        case GLU_OVER_X:      break;
    }
    r.out[2] = ggml_glu_split(r.ctx, ga, gb, c->op);
    if (c->layout == GLU_OVER_X) {
        // as an allocator may place it once x is read for the last time (by b)
        GGML_ASSERT(ggml_nbytes(r.out[2]) <= ggml_nbytes(x));
        r.out[2]->data = x->data;
    }
    ggml_build_forward_expand(gf, r.out[2]);
    struct ggml_cpu_profile prof;
    memset(&prof, 0, sizeof(prof));
    set_profile(be, &prof);
    CHECK(ggml_backend_graph_compute(be, gf) == GGML_STATUS_SUCCESS);
    set_profile(be, NULL);
    r.n_glu       = profile_count(&prof, GGML_CPU_FUSION_MUL_MAT_GLU);
    r.n_pairs     = profile_count(&prof, GGML_CPU_FUSION_MUL_MAT_GROUP);
    for (size_t i = 0; i < prof.n_rows; i++) {
        r.n_glu_alone += prof.rows[i].op == GGML_OP_GLU && prof.rows[i].fusion == GGML_CPU_FUSION_NONE ? prof.rows[i].n_nodes : 0;
    }
    free(prof.rows);
    return r;
}

// the GLU of a run against act(x) * g in double, from the run's own products
// (SWIGLU, REGLU, GEGLU in its tanh form; SWIGLU_OAI with its parameters 0:
// min(x, 0) / 2): the fused node applied the GLU to every value, in order
static void glu_check_ref(const struct glu_case * c, const struct glu_run * r) {
    const struct ggml_tensor * z = r->out[2];
    const struct ggml_tensor * x = z->src[0], * g = z->src[1];
    if (c->layout == GLU_OVER_X) {
        return; // x is gone: its memory holds the result
    }
    double worst = 0.0;
    for (int64_t j = 0; j < z->ne[1]; j++) {
        for (int64_t i = 0; i < z->ne[0]; i++) {
            const double xv = tt_get(x, i, j, 0, 0);
            double act, gate = tt_get(g, i, j, 0, 0);
            switch (c->op) {
                case GGML_GLU_OP_SWIGLU:     act = xv / (1.0 + exp(-xv)); break;
                case GGML_GLU_OP_REGLU:      act = xv > 0.0 ? xv : 0.0; break;
                case GGML_GLU_OP_GEGLU:      act = 0.5 * xv * (1.0 + tanh(0.7978845608028654 * (xv + 0.044715 * xv * xv * xv))); break;
                case GGML_GLU_OP_SWIGLU_OAI: act = (xv < 0.0 ? xv : 0.0) * 0.5; gate = 1.0; break; // clamp(g, 0, 0) + 1
                default:                     return;
            }
            const double ref = act * gate;
            worst = fmax(worst, fabs(tt_get(z, i, j, 0, 0) - ref) / (fabs(ref) + 1e-3));
        }
    }
    CHECK_MSG(worst <= 1e-4, "%s: the GLU off act(x) * g by %.3g (relative)", c->name, worst);
}

static void test_mul_mat_glu(void) {
    const struct glu_case cases[] = {
        { "SWIGLU q4_K", GGML_GLU_OP_SWIGLU, GGML_TYPE_Q4_K, GGML_TYPE_Q4_K, 512, 200, 200, 1, GLU_AFTER, true, 0 },
        { "SWIGLU q4_K, several chunks", GGML_GLU_OP_SWIGLU, GGML_TYPE_Q4_K, GGML_TYPE_Q4_K, 2048, 1500, 1500, 2,
          GLU_AFTER, true, 0 },
        { "GEGLU q8_0 of (b, a)", GGML_GLU_OP_GEGLU, GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, 256, 77, 77, 3, GLU_SWAPPED, true, 0 },
        { "REGLU f16, a view between", GGML_GLU_OP_REGLU, GGML_TYPE_F16, GGML_TYPE_F16, 96, 50, 50, 1, GLU_VIEW, true, 0 },
        { "SWIGLU q4_0", GGML_GLU_OP_SWIGLU, GGML_TYPE_Q4_0, GGML_TYPE_Q4_0, 512, 130, 130, 1, GLU_AFTER, true, 0 },
        { "SWIGLU_OAI f32", GGML_GLU_OP_SWIGLU_OAI, GGML_TYPE_F32, GGML_TYPE_F32, 64, 33, 33, 2, GLU_AFTER, true, 0 },
        { "GEGLU_ERF, a node before it", GGML_GLU_OP_GEGLU_ERF, GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, 256, 64, 64, 1,
          GLU_NODE_BEFORE, false, 1 },
        { "SWIGLU of one product", GGML_GLU_OP_SWIGLU, GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, 256, 64, 64, 1, GLU_OF_ONE, false, 1 },
        // the threads would still read x while the first chunks' GLU overwrote it
        { "SWIGLU over the activations", GGML_GLU_OP_SWIGLU, GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, 256, 64, 64, 2, GLU_OVER_X, false,
          1 },
        // a pair (both read Q8_K activations), but of two split geometries
        { "SWIGLU q4_K x q6_K", GGML_GLU_OP_SWIGLU, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, 256, 64, 64, 1, GLU_AFTER, false, 1 },
        { "SWIGLU, many columns", GGML_GLU_OP_SWIGLU, GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, 256, 64, 64, 40, GLU_AFTER, false, 0 },
    };
    ggml_backend_cpu_set_profile_t set_profile;
    ggml_backend_t be = profiled_backend(&set_profile);
    if (be == NULL) {
        return;
    }
    for (size_t ci = 0; set_profile != NULL && ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        const struct glu_case * c = &cases[ci];
        for (int n_threads = 1; n_threads <= 3; n_threads += 2) {
            ggml_backend_cpu_set_n_threads(be, n_threads);
            struct glu_run together = glu_compute(be, set_profile, c, false);
            struct glu_run apart    = glu_compute(be, set_profile, c, true);
            // fused: one pair with its GLU; else the pair alone (few columns)
            // and the GLU a node of its own
            const bool    fused  = c->expect && !g_fusion_off;
            const int64_t want_p = fused || g_fusion_off ? 0 : c->pairs;
            CHECK_MSG(together.n_glu == (fused ? 1 : 0) && together.n_glu_alone == (fused ? 0 : 1) &&
                          together.n_pairs == want_p && apart.n_glu == 0 && apart.n_pairs == 0 && apart.n_glu_alone == 1,
                      "%s, %d threads: %lld fused with the GLU, %lld pairs, %lld GLU alone; apart %lld, %lld",
                      c->name, n_threads, (long long) together.n_glu, (long long) together.n_pairs,
                      (long long) together.n_glu_alone, (long long) apart.n_glu, (long long) apart.n_glu_alone);
            for (int m = 0; m < 3; m++) {
                CHECK_MSG(tt_same_bits(together.out[m], apart.out[m]), "%s, %d threads: %s together and apart differ",
                          c->name, n_threads, m < 2 ? "a product" : "the GLU");
            }
            glu_check_ref(c, &together);
            ggml_free(together.ctx);
            ggml_free(apart.ctx);
        }
    }
    ggml_backend_free(be);
}

int main(void) {
    const char * env = getenv("GGML_CPU_DISABLE_FUSION");
    g_fusion_off = env != NULL && atoi(env) == 1;
    printf("fusion %s\n", g_fusion_off ? "off (GGML_CPU_DISABLE_FUSION=1)" : "on");
    test_patterns();
    test_not_fused();
    test_backend_chain();
    test_mul_mat_pairs();
    test_mul_mat_groups();
    test_mul_mat_glu();
    return TEST_RESULT();
}
