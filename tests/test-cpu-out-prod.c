// test-cpu-out-prod: GGML_OP_OUT_PROD on the CPU backend.
//
// dst[i0, i1, i2, i3] = sum_k a[i0, k, i2/r2, i3/r3] * b[i1, k, i2, i3]
//
// Every case is compared with that sum computed here in double precision from
// the stored input values (F16 and quantized a read back as the values they
// hold). a is F32, F16 or any stored quantized type (the gradient of a LoRA
// adapter over a quantized model multiplies through the frozen weights); b is
// F32. Shapes: i0 segments of the kernel (256 values) whole and partial, more
// dst rows than one chunk (64), k from 1 up, batches in dims 2 and 3 with
// broadcasting of an F32 a; layouts: a as a view of every other row of a
// larger tensor, a with dims 2 and 3 swapped, b transposed (its rows are a's
// k) and b permuted. Each case runs with 1, 2 and 3 threads (results must be
// bit-identical) on the vector and on the scalar path (use_ref).
//
// Also checked: what supports_op answers (upstream's rule: F32 a with any
// broadcast, F16 and quantized a without; b and dst F32; not the activation
// formats q8_1 / q8_K, nor BF16 a, which upstream's CPU does not take either).
//
// Tolerance. The kernel sums the k products in F32 on exactly the stored
// values, so it is off by F32 roundings of a sum of k terms of size <= 1
// (|a|, |b| <= 1; quantized values can exceed 1 by a few percent): at most
// about k * 2^-24 * k, typically sqrt(k) * 2^-24. The tolerance 1e-6 * (1 + k)
// absolute is far below what a wrong row, batch index or block (0.01 and
// more) would cause.

#include "cpu-testing.h"
#include "ggml-backend.h"

#include <stdio.h>

enum a_layout {
    A_CONTIGUOUS,
    A_ROW_VIEW,   // every other row of a tensor twice as tall
    A_PERMUTED,   // stored with dims 2 and 3 swapped, permuted back
};

enum b_layout {
    B_CONTIGUOUS, // [n, k, ne2, ne3]
    B_TRANSPOSED, // stored [k, n, ne2, ne3] and transposed
    B_PERMUTED,   // stored [n, ne2, k, ne3] and permuted
};

struct op_case {
    enum ggml_type ta;
    int64_t m, n, k;         // dst is [m, n]; the sum runs over k
    int64_t a2, a3, r2, r3;  // a's batch dims; b and dst have a2*r2, a3*r3
    enum a_layout al;
    enum b_layout bl;
};

static struct ggml_tensor * new_a(struct ggml_context * ctx, const struct op_case * c, uint64_t seed) {
    switch (c->al) {
        case A_ROW_VIEW: {
            struct ggml_tensor * s = ggml_new_tensor_4d(ctx, c->ta, c->m, 2*c->k, c->a2, c->a3);
            tt_fill_uniform(s, -1.0, 1.0, seed);
            return ggml_view_4d(ctx, s, c->m, c->k, c->a2, c->a3, 2*s->nb[1], s->nb[2], s->nb[3], s->nb[1]);
        }
        case A_PERMUTED: {
            struct ggml_tensor * s = ggml_new_tensor_4d(ctx, c->ta, c->m, c->k, c->a3, c->a2);
            tt_fill_uniform(s, -1.0, 1.0, seed);
            return ggml_permute(ctx, s, 0, 1, 3, 2);
        }
        default: {
            struct ggml_tensor * a = ggml_new_tensor_4d(ctx, c->ta, c->m, c->k, c->a2, c->a3);
            tt_fill_uniform(a, -1.0, 1.0, seed);
            return a;
        }
    }
}

static struct ggml_tensor * new_b(struct ggml_context * ctx, const struct op_case * c, uint64_t seed) {
    const int64_t ne2 = c->a2 * c->r2, ne3 = c->a3 * c->r3;
    struct ggml_tensor * s;
    switch (c->bl) {
        case B_TRANSPOSED:
            s = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->k, c->n, ne2, ne3);
            tt_fill_uniform(s, -1.0, 1.0, seed);
            return ggml_transpose(ctx, s);
        case B_PERMUTED:
            s = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->n, ne2, c->k, ne3);
            tt_fill_uniform(s, -1.0, 1.0, seed);
            return ggml_permute(ctx, s, 0, 2, 1, 3);
        default:
            s = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->n, c->k, ne2, ne3);
            tt_fill_uniform(s, -1.0, 1.0, seed);
            return s;
    }
}

// the inputs read back once as doubles (reading a quantized element converts its block)
struct op_ref {
    double * a, * b; // a[((i3*a2 + i2)*k + j)*m + i0], b[((i3*ne2 + i2)*k + j)*n + i1]
    int64_t m, n, k, a2, ne2, r2, r3;
};

// every element of t (any layout), dims 0 to 3 from fastest to slowest
static double * read_all(const struct ggml_tensor * t) {
    const int64_t n0 = t->ne[0], n1 = t->ne[1];
    double * v = (double *) malloc(sizeof(double) * (size_t) ggml_nelements(t));
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < n1; i1++)
    for (int64_t i0 = 0; i0 < n0; i0++) {
        v[((i3*t->ne[2] + i2)*n1 + i1)*n0 + i0] = tt_get(t, i0, i1, i2, i3);
    }
    return v;
}

static double ref_at(int64_t i0, int64_t i1, int64_t i2, int64_t i3, void * user) {
    const struct op_ref * r = (const struct op_ref *) user;
    const double * a = r->a + (((i3 / r->r3)*r->a2 + i2 / r->r2)*r->k)*r->m + i0;
    const double * b = r->b + ((i3*r->ne2 + i2)*r->k)*r->n + i1;
    double sum = 0.0;
    for (int64_t j = 0; j < r->k; j++) {
        sum += a[j*r->m] * b[j*r->n];
    }
    return sum;
}

static void compute(struct ggml_tensor * out, int n_threads, bool use_ref) {
    struct ggml_init_params ip = { ggml_graph_overhead(), NULL, true };
    struct ggml_context * gctx = ggml_init(ip);
    struct ggml_cgraph * gf = ggml_new_graph(gctx);
    ggml_build_forward_expand(gf, out);
    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, NULL);
    plan.use_ref = use_ref;
    void * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
    plan.work_data = (uint8_t *) work;
    CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
    free(work);
    ggml_free(gctx);
}

static const char * a_layout_name(enum a_layout l) {
    return l == A_ROW_VIEW ? "a row view" : l == A_PERMUTED ? "a permuted" : "a contiguous";
}

static const char * b_layout_name(enum b_layout l) {
    return l == B_TRANSPOSED ? "b transposed" : l == B_PERMUTED ? "b permuted" : "b contiguous";
}

static void run_case(const struct op_case * c, uint64_t seed) {
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    struct ggml_context * ctx = tt_ctx_new(64);
    struct ggml_tensor * a = new_a(ctx, c, seed);
    struct ggml_tensor * b = new_b(ctx, c, seed + 1);
    struct ggml_tensor * out = ggml_out_prod(ctx, a, b);

    char name[160];
    snprintf(name, sizeof(name), "%s m=%lld n=%lld k=%lld batch %lldx%lld repeat %lldx%lld, %s, %s",
             ggml_type_name(c->ta), (long long) c->m, (long long) c->n, (long long) c->k, (long long) c->a2,
             (long long) c->a3, (long long) c->r2, (long long) c->r3, a_layout_name(c->al), b_layout_name(c->bl));
    if (!ggml_backend_dev_supports_op(dev, out)) {
        CHECK_MSG(false, "%s: not supported", name);
        ggml_free(ctx);
        return;
    }

    struct op_ref r = { read_all(a), read_all(b), c->m, c->n, c->k, c->a2, c->a2 * c->r2, c->r2, c->r3 };
    const double tol = 1e-6 * (double)(1 + c->k);
    const size_t nbytes = ggml_nbytes(out);
    float * first = (float *) malloc(nbytes);
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        for (int n_threads = 1; n_threads <= 3; n_threads++) {
            memset(out->data, 0xff, nbytes); // NaN: every value must be written
            compute(out, n_threads, use_ref);
            if (n_threads == 1) {
                const double err = tt_max_err(out, ref_at, &r, tol, 0.0);
                CHECK_MSG(err <= 1.0, "%s (%s path): max error %.3g of tolerance %.1g",
                          name, use_ref ? "scalar" : "vector", err * tol, tol);
                memcpy(first, out->data, nbytes);
            } else {
                CHECK_MSG(memcmp(first, out->data, nbytes) == 0, "%s (%s path): %d threads differ from 1",
                          name, use_ref ? "scalar" : "vector", n_threads);
            }
        }
    }
    free(first);
    free(r.a);
    free(r.b);
    ggml_free(ctx);
}

// every stored type of a
static const enum ggml_type g_quant_types[] = {
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
    GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_MXFP4, GGML_TYPE_NVFP4,
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
    GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0,
    GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S,
    GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS,
};

static void test_supports(void) {
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    struct ggml_context * ctx = tt_ctx_new(16);
    struct ggml_tensor * b  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 16, 8, 2, 3);
    struct ggml_tensor * bb = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 16, 8, 4, 3); // twice a's dim 2

    for (size_t i = 0; i < sizeof(g_quant_types) / sizeof(g_quant_types[0]); i++) {
        const enum ggml_type t = g_quant_types[i];
        struct ggml_tensor * a = ggml_new_tensor_4d(ctx, t, 256, 8, 2, 3);
        CHECK_MSG(ggml_backend_dev_supports_op(dev, ggml_out_prod(ctx, a, b)), "%s a", ggml_type_name(t));
        // upstream converts quantized rows without broadcasting
        CHECK_MSG(!ggml_backend_dev_supports_op(dev, ggml_out_prod(ctx, a, bb)), "%s a broadcast", ggml_type_name(t));
    }
    struct ggml_tensor * a32 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 256, 8, 2, 3);
    CHECK(ggml_backend_dev_supports_op(dev, ggml_out_prod(ctx, a32, b)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_out_prod(ctx, a32, bb)));
    struct ggml_tensor * a16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 256, 8, 2, 3);
    CHECK(ggml_backend_dev_supports_op(dev, ggml_out_prod(ctx, a16, b)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_out_prod(ctx, a16, bb)));

    const enum ggml_type bad[] = { GGML_TYPE_BF16, GGML_TYPE_Q8_1, GGML_TYPE_Q8_K, GGML_TYPE_I32 };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct ggml_tensor * a = ggml_new_tensor_4d(ctx, bad[i], 256, 8, 2, 3);
        CHECK_MSG(!ggml_backend_dev_supports_op(dev, ggml_out_prod(ctx, a, b)), "%s a", ggml_type_name(bad[i]));
    }
    // b must be F32
    struct ggml_tensor * b16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 16, 8, 2, 3);
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_out_prod(ctx, a32, b16)));
    ggml_free(ctx);
}

int main(void) {
    test_supports();

    uint64_t seed = 100;
    // every type, with a whole and a partial i0 segment, several dst row chunks
    for (size_t i = 0; i < sizeof(g_quant_types) / sizeof(g_quant_types[0]); i++) {
        const enum ggml_type t = g_quant_types[i];
        const int64_t m = ggml_blck_size(t) == 256 ? 512 : 256 + 2*ggml_blck_size(t);
        const struct op_case c1 = { t, m, 70, 13, 1, 1, 1, 1, A_CONTIGUOUS, B_CONTIGUOUS };
        run_case(&c1, seed += 7);
        // batches, layouts: b transposed (upstream's trans_b) and permuted, a as views
        const struct op_case c2 = { t, ggml_blck_size(t) == 256 ? 256 : 3*ggml_blck_size(t), 5, 16, 2, 3, 1, 1,
                                    A_ROW_VIEW, B_TRANSPOSED };
        run_case(&c2, seed += 7);
        const struct op_case c3 = { t, 256, 16, 1, 3, 2, 1, 1, A_PERMUTED, B_PERMUTED };
        run_case(&c3, seed += 7);
    }
    // F32 and F16 a, broadcasting F32 a
    const struct op_case plain[] = {
        { GGML_TYPE_F32, 300, 67, 33, 1, 1, 1, 1, A_CONTIGUOUS, B_CONTIGUOUS },
        { GGML_TYPE_F32, 7, 3, 1, 1, 1, 1, 1, A_CONTIGUOUS, B_TRANSPOSED },
        { GGML_TYPE_F32, 65, 9, 16, 2, 1, 3, 2, A_ROW_VIEW, B_PERMUTED },
        { GGML_TYPE_F32, 33, 17, 5, 3, 2, 2, 2, A_PERMUTED, B_TRANSPOSED },
        { GGML_TYPE_F16, 257, 65, 16, 2, 3, 1, 1, A_ROW_VIEW, B_CONTIGUOUS },
        { GGML_TYPE_F16, 31, 4, 9, 2, 2, 1, 1, A_PERMUTED, B_TRANSPOSED },
    };
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
        run_case(&plain[i], seed += 7);
    }
    return TEST_RESULT();
}
