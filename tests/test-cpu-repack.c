// test-cpu-repack.c: the CPU device's extra buffer type CPU_REPACK
// (src/ggml-cpu/repack.h): BF16 weights stored in the BF16 tile
// kernel's panel layout, Q4_0 weights in panels of 16 rows.
//
//   - the device lists it exactly where a kernel of one of its layouts runs:
//     BF16 where the kernel level in use has AVX512_BF16 (so not under
//     GGML_CPU_ISA=avx2 of a GGML_NATIVE=OFF build), the CPU has it and
//     GGML_CPU_NO_BF16_DOT is unset; Q4_0 where the kernel level in use has
//     AVX512_VNNI or AVX2 (with FMA and F16C); elsewhere the list is empty and the rest of the test has
//     nothing to check; each layout's checks run where it exists;
//   - the type: its name, not host memory, the CPU device takes it, the
//     allocation size of packed tensors (rows padded to 64, k to even) and
//     of tensors it stores as they are;
//   - get_tensor gives the values back (whole and in ranges that cut rows and
//     groups of rows), after whole and partial set_tensor and memset, and a
//     copy into host memory gives the original bytes; views of a packed
//     tensor are refused;
//   - MUL_MAT and MUL_MAT_ID with packed weights against a double-precision
//     reference (weights and BF16-rounded activations), for rows not a
//     multiple of 64, odd k, k over one k block of the kernel, 1 to 128
//     columns, 3-D batches with broadcasting, strided activations, 1 and 3
//     threads, and on the portable path (use_ref);
//   - supports_op: MUL_MAT / MUL_MAT_ID with the packed tensor as src0 only;
//     GET_ROWS, ADD, CPY, MUL_MAT with it as src1, and matrix products over
//     tensors of other types in such a buffer are refused;
//   - Q4_0: the allocation size (rows padded to 16), byte-exact get/set/memset
//     on ranges that cut blocks, rows and panels, copies in and out, views
//     refused; MUL_MAT (rows not a multiple of 16, 1 to 129 blocks per row,
//     1 to 40 columns: the panel kernel and the tile kernel's unpacking, 3-D
//     batches with broadcasting, strided activations, 1 and 3 threads,
//     use_ref) against the same product with the weights in host memory
//     (tight) and against a double-precision sum of the dequantized weights
//     and Q8_0 activations (loose: it catches layout errors), and MUL_MAT_ID;
//   - the scheduler, with a higher-priority device on host memory that would
//     take every op and offload every product (a test backend that computes
//     nothing), runs the product with packed weights on the CPU, and the
//     op after it where it likes.

#include "cpu-testing.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "test-backend.h"

#include <stdio.h>

static ggml_backend_dev_t g_cpu_dev;

static ggml_backend_buffer_type_t * extra_bufts(void) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(g_cpu_dev);
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_dev_get_extra_bufts");
    CHECK(sym != NULL);
    if (sym == NULL) {
        return NULL;
    }
    ggml_backend_dev_get_extra_bufts_t fn;
    memcpy(&fn, &sym, sizeof(sym));
    return fn(g_cpu_dev);
}

// whether the kernels in use (the registry's feature list) include a feature
static bool kernels_have(const char * name) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(g_cpu_dev);
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features");
    if (sym == NULL) {
        return false;
    }
    ggml_backend_get_features_t fn;
    memcpy(&fn, &sym, sizeof(sym));
    for (const struct ggml_backend_feature * f = fn(reg); f->name != NULL; f++) {
        if (strcmp(f->name, name) == 0) {
            return true;
        }
    }
    return false;
}

static struct ggml_context * ctx_new(int n_tensors) {
    struct ggml_init_params ip = { (size_t) n_tensors * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    return ggml_init(ip);
}

static uint16_t bf16_bits(float f) {
    return ggml_fp32_to_bf16(f).bits;
}

static double bf16_value(uint16_t bits) {
    const ggml_bf16_t v = { .bits = bits };
    return (double) ggml_bf16_to_fp32(v);
}

// a weight tensor's values, in the usual layout
static uint16_t * random_bf16(size_t n, uint64_t seed) {
    uint16_t * v = (uint16_t *) malloc(n * sizeof(uint16_t));
    uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 3;
    for (size_t i = 0; i < n; i++) {
        v[i] = bf16_bits((float) tt_rand_uniform(&state, -1.0, 1.0));
    }
    return v;
}

//
// the buffer type and its data access
//

static void check_basics(ggml_backend_buffer_type_t buft, bool has_bf16, bool has_panels) {
    CHECK(strcmp(ggml_backend_buft_name(buft), "CPU_REPACK") == 0);
    CHECK(!ggml_backend_buft_is_host(buft));
    CHECK(ggml_backend_buft_get_device(buft) == g_cpu_dev);
    CHECK(ggml_backend_dev_supports_buft(g_cpu_dev, buft));

    // each layout's sizes where it exists, the tensor's bytes elsewhere
    struct ggml_context * ctx = ctx_new(8);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 37, 70);
    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_BF16, 64, 128, 3, 2);
    struct ggml_tensor * f = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 37, 70);
    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 70);
    struct ggml_tensor * r = ggml_new_tensor_4d(ctx, GGML_TYPE_Q4_0, 96, 128, 3, 2);
    struct ggml_tensor * s = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 70);
    struct ggml_tensor * kq = ggml_new_tensor_3d(ctx, GGML_TYPE_Q4_K, 512, 33, 2);
    CHECK_EQ_INT((long long) ggml_backend_buft_get_alloc_size(buft, a), has_bf16 ? 128LL * 19 * 4 : (long long) ggml_nbytes(a));
    CHECK_EQ_INT((long long) ggml_backend_buft_get_alloc_size(buft, b), has_bf16 ? 128LL * 32 * 4 * 6 : (long long) ggml_nbytes(b));
    CHECK_EQ_INT((long long) ggml_backend_buft_get_alloc_size(buft, f), (long long) ggml_nbytes(f));
    // Q4_0: 5 panels of 16 rows, 2 blocks per row, 16 x 18 bytes per unit
    CHECK_EQ_INT((long long) ggml_backend_buft_get_alloc_size(buft, q), has_panels ? 5LL * 2 * 288 : (long long) ggml_nbytes(q));
    // a K-quant: stored as it is
    CHECK_EQ_INT((long long) ggml_backend_buft_get_alloc_size(buft, kq), (long long) ggml_nbytes(kq));
    CHECK_EQ_INT((long long) ggml_backend_buft_get_alloc_size(buft, r), (long long) ggml_nbytes(r));
    CHECK_EQ_INT((long long) ggml_backend_buft_get_alloc_size(buft, s), (long long) ggml_nbytes(s));
    ggml_free(ctx);
}

// a copy of packed tensor w (whose bytes in the usual layout are `want`)
// into host memory has its bytes, one back in gives them back, and a view of
// it (which would address bytes of another layout) is refused
static void check_copies(struct ggml_tensor * w, uint8_t * want, uint8_t * got, const char * what) {
    const size_t nb = ggml_nbytes(w);
    struct ggml_context * hctx = ctx_new(2);
    struct ggml_tensor * h = ggml_dup_tensor(hctx, w);
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors_from_buft(hctx, ggml_backend_cpu_buffer_type());
    ggml_backend_tensor_copy(w, h);
    CHECK_MSG(memcmp(h->data, want, nb) == 0, "%s %lldx%lld: copy out", what, (long long) w->ne[0], (long long) w->ne[1]);
    ((uint8_t *) h->data)[nb - 1] ^= 0x41;
    want[nb - 1] ^= 0x41;
    ggml_backend_tensor_copy(h, w);
    ggml_backend_tensor_get(w, got, 0, nb);
    CHECK_MSG(memcmp(got, want, nb) == 0, "%s %lldx%lld: copy in", what, (long long) w->ne[0], (long long) w->ne[1]);

    struct ggml_tensor * v = ggml_view_2d(hctx, w, w->ne[0], 1, w->nb[1], 0);
    CHECK(ggml_backend_view_init(v) != GGML_STATUS_SUCCESS);
    ggml_backend_buffer_free(hbuf);
    ggml_free(hctx);
}

static void check_get_set(ggml_backend_buffer_type_t buft, int64_t k, int64_t n, int64_t ne2) {
    struct ggml_context * ctx = ctx_new(8);
    struct ggml_tensor * w = ggml_new_tensor_3d(ctx, GGML_TYPE_BF16, k, n, ne2);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    CHECK(buf != NULL);
    if (buf == NULL) {
        ggml_free(ctx);
        return;
    }
    const size_t ne = (size_t) ggml_nelements(w);
    uint16_t * want = random_bf16(ne, (uint64_t)(k * 1000 + n));
    uint16_t * got  = (uint16_t *) calloc(ne, sizeof(uint16_t));

    ggml_backend_tensor_set(w, want, 0, ne * 2);
    ggml_backend_tensor_get(w, got, 0, ne * 2);
    CHECK_MSG(memcmp(got, want, ne * 2) == 0, "k=%lld n=%lld: whole set/get round trip", (long long) k, (long long) n);

    // partial writes and reads: ranges that start and end inside rows and groups
    uint16_t * part = random_bf16(ne, 99);
    const size_t e0 = (size_t) k + 5 < ne ? (size_t) k + 5 : ne / 3;
    const size_t e1 = ne - (ne / 5);
    ggml_backend_tensor_set(w, part + e0, e0 * 2, (e1 - e0) * 2);
    memcpy(want + e0, part + e0, (e1 - e0) * 2);
    memset(got, 0, ne * 2);
    ggml_backend_tensor_get(w, got, 0, ne * 2);
    CHECK_MSG(memcmp(got, want, ne * 2) == 0, "k=%lld n=%lld: partial set", (long long) k, (long long) n);
    const size_t g0 = ne / 7, g1 = ne - 3;
    memset(got, 0, ne * 2);
    ggml_backend_tensor_get(w, got + g0, g0 * 2, (g1 - g0) * 2);
    CHECK_MSG(memcmp(got + g0, want + g0, (g1 - g0) * 2) == 0, "k=%lld n=%lld: partial get", (long long) k, (long long) n);

    // memset of a range: every byte of each value
    const size_t m0 = ne / 4;
    ggml_backend_tensor_memset(w, 0x3f, 2 * m0, (ne / 2) * 2);
    for (size_t i = m0; i < m0 + ne / 2; i++) {
        want[i] = 0x3f3f;
    }
    ggml_backend_tensor_get(w, got, 0, ne * 2);
    CHECK_MSG(memcmp(got, want, ne * 2) == 0, "k=%lld n=%lld: memset", (long long) k, (long long) n);

    check_copies(w, (uint8_t *) want, (uint8_t *) got, "bf16");

    free(part);
    free(want);
    free(got);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

//
// matrix products
//

struct mm_case {
    int64_t k, n, ne2, ne3;    // weights
    int64_t cols, xne2, xne3;  // activations
    bool    strided;           // activations a view with a wider row stride
};

// the reference: weights times activations rounded to BF16 (the kernel's inputs)
static double mm_ref(const struct ggml_tensor * w, const uint16_t * wv, const struct ggml_tensor * x, int64_t i0, int64_t i1,
                     int64_t i2, int64_t i3, double * sum_abs) {
    const int64_t k = w->ne[0];
    const int64_t w2 = i2 / (x->ne[2] / w->ne[2]), w3 = i3 / (x->ne[3] / w->ne[3]);
    const uint16_t * row = wv + ((w3 * w->ne[2] + w2) * w->ne[1] + i0) * k;
    double s = 0.0, a = 0.0;
    for (int64_t kk = 0; kk < k; kk++) {
        const float xf = *(const float *)((const char *) x->data + kk*x->nb[0] + i1*x->nb[1] + i2*x->nb[2] + i3*x->nb[3]);
        const double p = bf16_value(row[kk]) * bf16_value(bf16_bits(xf));
        s += p;
        a += fabs(p);
    }
    *sum_abs = a;
    return s;
}

static void check_mul_mat(ggml_backend_t backend, ggml_backend_buffer_type_t buft, const struct mm_case * c) {
    struct ggml_context * wctx = ctx_new(2);
    struct ggml_tensor * w = ggml_new_tensor_4d(wctx, GGML_TYPE_BF16, c->k, c->n, c->ne2, c->ne3);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, buft);
    const size_t nw = (size_t) ggml_nelements(w);
    uint16_t * wv = random_bf16(nw, (uint64_t)(c->k * 7 + c->n * 13 + c->cols));
    ggml_backend_tensor_set(w, wv, 0, nw * 2);

    struct ggml_context * ctx = ctx_new(8);
    struct ggml_tensor * xb = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->k + (c->strided ? 5 : 0), c->cols, c->xne2, c->xne3);
    struct ggml_tensor * x = c->strided ? ggml_view_4d(ctx, xb, c->k, c->cols, c->xne2, c->xne3, xb->nb[1], xb->nb[2], xb->nb[3], 0) : xb;
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    CHECK(wbuf != NULL && buf != NULL);
    tt_fill_uniform(xb, -1.0, 1.0, (uint64_t) c->cols + 5);
    CHECK(ggml_backend_dev_supports_op(g_cpu_dev, y));

    for (int run = 0; run < 3; run++) {
        const int nth = run == 1 ? 3 : 1;
        const bool use_ref = run == 2;
        ggml_backend_cpu_set_n_threads(backend, nth);
        ggml_backend_cpu_set_use_ref(backend, use_ref);
        memset(y->data, 0xff, ggml_nbytes(y)); // NaN: every result must be written
        CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
        double worst = 0.0;
        for (int64_t i3 = 0; i3 < y->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < y->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < y->ne[1]; i1++)
        for (int64_t i0 = 0; i0 < y->ne[0]; i0++) {
            double sum_abs;
            const double ref = mm_ref(w, wv, x, i0, i1, i2, i3, &sum_abs);
            const double got = tt_get(y, i0, i1, i2, i3);
            const double err = fabs(got - ref) / (sum_abs + 1e-30);
            worst = isnan(got) ? INFINITY : fmax(worst, err);
        }
        CHECK_MSG(worst < 1e-5, "mul_mat k=%lld n=%lld w(%lld,%lld) cols=%lld x(%lld,%lld)%s %d threads%s: error %g",
                  (long long) c->k, (long long) c->n, (long long) c->ne2, (long long) c->ne3, (long long) c->cols,
                  (long long) c->xne2, (long long) c->xne3, c->strided ? " strided" : "", nth, use_ref ? " use_ref" : "", worst);
    }
    ggml_backend_cpu_set_use_ref(backend, false);
    free(wv);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
}

// distinct experts per token (ids [n_used, n_tokens]), the first ones more
// often (some get many columns, some none)
static void fill_ids(struct ggml_tensor * ids, int64_t n_as) {
    const int64_t n_used = ids->ne[0], n_tokens = ids->ne[1];
    int32_t * e = (int32_t *) ids->data;
    for (int64_t t = 0; t < n_tokens; t++) {
        for (int64_t s = 0; s < n_used; s++) {
            e[t * n_used + s] = (int32_t)((t % 2 + s * (1 + t % 3)) % n_as);
        }
        if (n_used == 2 && e[t * 2] == e[t * 2 + 1]) {
            e[t * 2 + 1] = (e[t * 2] + 1) % (int32_t) n_as;
        }
    }
}

// experts [k, n, n_as]; tokens use n_used of them each
static void check_mul_mat_id(ggml_backend_t backend, ggml_backend_buffer_type_t buft, int64_t k, int64_t n, int64_t n_as,
                             int64_t n_used, int64_t n_tokens) {
    struct ggml_context * wctx = ctx_new(2);
    struct ggml_tensor * w = ggml_new_tensor_3d(wctx, GGML_TYPE_BF16, k, n, n_as);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, buft);
    const size_t nw = (size_t) ggml_nelements(w);
    uint16_t * wv = random_bf16(nw, (uint64_t)(k + n_tokens));
    ggml_backend_tensor_set(w, wv, 0, nw * 2);

    struct ggml_context * ctx = ctx_new(8);
    struct ggml_tensor * x   = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, k, 1, n_tokens);
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, n_tokens);
    struct ggml_tensor * y = ggml_mul_mat_id(ctx, w, x, ids);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    tt_fill_uniform(x, -1.0, 1.0, 11);
    fill_ids(ids, n_as);
    CHECK(ggml_backend_dev_supports_op(g_cpu_dev, y));
    for (int run = 0; run < 2; run++) {
        ggml_backend_cpu_set_n_threads(backend, run == 0 ? 1 : 3);
        memset(y->data, 0xff, ggml_nbytes(y));
        CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
        double worst = 0.0;
        for (int64_t t = 0; t < n_tokens; t++)
        for (int64_t s = 0; s < n_used; s++) {
            const int64_t e = ((int32_t *) ids->data)[t * n_used + s];
            for (int64_t i0 = 0; i0 < n; i0++) {
                double ref = 0.0, sum_abs = 0.0;
                for (int64_t kk = 0; kk < k; kk++) {
                    const double p = bf16_value(wv[(e * n + i0) * k + kk]) *
                                     bf16_value(bf16_bits(((const float *) x->data)[t * k + kk]));
                    ref += p;
                    sum_abs += fabs(p);
                }
                const double got = tt_get(y, i0, s, t, 0);
                worst = isnan(got) ? INFINITY : fmax(worst, fabs(got - ref) / (sum_abs + 1e-30));
            }
        }
        CHECK_MSG(worst < 1e-5, "mul_mat_id k=%lld n=%lld experts=%lld tokens=%lld: error %g", (long long) k, (long long) n,
                  (long long) n_as, (long long) n_tokens, worst);
    }
    free(wv);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
}

//
// which ops may read such tensors
//

static void check_supports_op(ggml_backend_buffer_type_t buft, enum ggml_type type) {
    struct ggml_context * wctx = ctx_new(4);
    struct ggml_tensor * w  = ggml_new_tensor_2d(wctx, type, 256, 96);
    struct ggml_tensor * wf = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, 256, 96);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, buft);

    struct ggml_context * ctx = ctx_new(32);
    struct ggml_tensor * x   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 8);
    struct ggml_tensor * xb  = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 256, 8);
    struct ggml_tensor * h   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 96);
    struct ggml_tensor * hb  = ggml_new_tensor_2d(ctx, type, 256, 96);
    struct ggml_tensor * ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());

    CHECK(ggml_backend_dev_supports_op(g_cpu_dev, ggml_mul_mat(ctx, w, x)));
    CHECK(ggml_backend_dev_supports_op(g_cpu_dev, ggml_mul_mat(ctx, w, xb)) == (type == GGML_TYPE_BF16));
    CHECK(!ggml_backend_dev_supports_op(g_cpu_dev, ggml_mul_mat(ctx, hb, w)));
    CHECK(!ggml_backend_dev_supports_op(g_cpu_dev, ggml_get_rows(ctx, w, ids)));
    CHECK(!ggml_backend_dev_supports_op(g_cpu_dev, ggml_add(ctx, h, w)));
    CHECK(!ggml_backend_dev_supports_op(g_cpu_dev, ggml_cpy(ctx, w, h)));
    CHECK(!ggml_backend_dev_supports_op(g_cpu_dev, ggml_out_prod(ctx, w, hb)));
    // a type it stores as it is: not for the matrix products either
    CHECK(!ggml_backend_dev_supports_op(g_cpu_dev, ggml_mul_mat(ctx, wf, x)));
    // the same ops on host memory are the CPU's as always
    CHECK(ggml_backend_dev_supports_op(g_cpu_dev, ggml_get_rows(ctx, hb, ids)));
    CHECK(ggml_backend_dev_supports_op(g_cpu_dev, ggml_mul_mat(ctx, hb, x)));

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
}

static void check_sched(ggml_backend_t cpu, ggml_backend_buffer_type_t buft) {
    const struct test_backend_config cfg = {
        .name = "Eager", .type = GGML_BACKEND_DEVICE_TYPE_GPU, .host_memory = true,
        .types = ((uint64_t) 1 << GGML_TYPE_F32) | ((uint64_t) 1 << GGML_TYPE_BF16) | ((uint64_t) 1 << GGML_TYPE_I32),
        .skip_compute = true, .offload_min_batch = 1,
    };
    ggml_backend_reg_t reg = test_backend_reg_new(&cfg);
    ggml_backend_t eager = ggml_backend_dev_init(test_backend_device(reg), NULL);
    CHECK(eager != NULL);

    const int64_t k = 100, n = 70, cols = 40;
    struct ggml_context * wctx = ctx_new(2);
    struct ggml_tensor * w = ggml_new_tensor_2d(wctx, GGML_TYPE_BF16, k, n);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, buft);
    ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    uint16_t * wv = random_bf16((size_t)(k * n), 5);
    ggml_backend_tensor_set(w, wv, 0, (size_t)(k * n) * 2);

    struct ggml_context * ctx = ctx_new(16);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, cols);
    ggml_set_input(x);
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    ggml_set_output(y);
    struct ggml_tensor * z = ggml_scale(ctx, y, 2.0f);
    ggml_set_output(z);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, z);

    ggml_backend_t backends[2] = { eager, cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, GGML_DEFAULT_GRAPH_SIZE, false, true);
    CHECK(ggml_backend_sched_alloc_graph(sched, gf));
    CHECK(ggml_backend_sched_get_tensor_backend(sched, y) == cpu);
    float * xv = (float *) malloc((size_t)(k * cols) * sizeof(float));
    uint64_t state = 77;
    for (int64_t i = 0; i < k * cols; i++) {
        xv[i] = (float) tt_rand_uniform(&state, -1.0, 1.0);
    }
    ggml_backend_tensor_set(x, xv, 0, ggml_nbytes(x));
    CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS);
    float * yv = (float *) malloc(ggml_nbytes(y));
    ggml_backend_tensor_get(y, yv, 0, ggml_nbytes(y));
    double worst = 0.0;
    for (int64_t j = 0; j < cols; j++) {
        for (int64_t i = 0; i < n; i++) {
            double ref = 0.0, sum_abs = 0.0;
            for (int64_t kk = 0; kk < k; kk++) {
                const double p = bf16_value(wv[i * k + kk]) * bf16_value(bf16_bits(xv[j * k + kk]));
                ref += p;
                sum_abs += fabs(p);
            }
            worst = fmax(worst, isnan(yv[j * n + i]) ? INFINITY : fabs(yv[j * n + i] - ref) / (sum_abs + 1e-30));
        }
    }
    CHECK_MSG(worst < 1e-5, "scheduler: error %g", worst);

    free(yv);
    free(xv);
    ggml_backend_sched_free(sched);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
    free(wv);
    ggml_backend_free(eager);
    test_backend_reg_free(reg);
}

//
// Q4_0 panels
//

// rows of k random values quantized to type
static uint8_t * random_quant(enum ggml_type type, int64_t k, int64_t rows, uint64_t seed) {
    float * f = (float *) malloc((size_t)(k * rows) * sizeof(float));
    uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (int64_t i = 0; i < k * rows; i++) {
        f[i] = (float) tt_rand_uniform(&state, -1.0, 1.0);
    }
    uint8_t * q = (uint8_t *) malloc(ggml_row_size(type, k) * (size_t) rows);
    ggml_quantize_chunk(type, f, q, 0, rows, k, NULL);
    free(f);
    return q;
}

static uint8_t * random_bytes(size_t n, uint64_t seed) {
    uint8_t * b = (uint8_t *) malloc(n);
    uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 7;
    for (size_t i = 0; i < n; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        b[i] = (uint8_t)(state >> 56);
    }
    return b;
}

// any bytes go in and come back: the layout moves bytes, it reads none
static void check_panels_get_set(ggml_backend_buffer_type_t buft, enum ggml_type type, int64_t k, int64_t n, int64_t ne2) {
    const char * tn = ggml_type_name(type);
    struct ggml_context * ctx = ctx_new(8);
    struct ggml_tensor * w = ggml_new_tensor_3d(ctx, type, k, n, ne2);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    CHECK(buf != NULL);
    if (buf == NULL) {
        ggml_free(ctx);
        return;
    }
    const size_t nb = ggml_nbytes(w);
    uint8_t * want = random_bytes(nb, (uint64_t)(k * 31 + n));
    uint8_t * got  = (uint8_t *) calloc(nb, 1);

    ggml_backend_tensor_set(w, want, 0, nb);
    ggml_backend_tensor_get(w, got, 0, nb);
    CHECK_MSG(memcmp(got, want, nb) == 0, "%s k=%lld n=%lld: whole set/get round trip", tn, (long long) k, (long long) n);

    // ranges that start and end inside blocks, rows and panels
    uint8_t * part = random_bytes(nb, 99);
    const size_t o0 = nb / 3 + (nb > 64 ? 5 : 0), o1 = nb - nb / 5 - (nb > 64 ? 7 : 0);
    ggml_backend_tensor_set(w, part + o0, o0, o1 - o0);
    memcpy(want + o0, part + o0, o1 - o0);
    memset(got, 0, nb);
    ggml_backend_tensor_get(w, got, 0, nb);
    CHECK_MSG(memcmp(got, want, nb) == 0, "%s k=%lld n=%lld: partial set", tn, (long long) k, (long long) n);
    const size_t g0 = nb / 7 + 3, g1 = nb - 1;
    memset(got, 0, nb);
    ggml_backend_tensor_get(w, got + g0, g0, g1 - g0);
    CHECK_MSG(memcmp(got + g0, want + g0, g1 - g0) == 0, "%s k=%lld n=%lld: partial get", tn, (long long) k, (long long) n);
    // one byte, in the middle of a block's codes and of its scale
    const size_t bs = ggml_type_size(type);
    if (nb > 2 * bs + 2) {
        ggml_backend_tensor_set(w, part, bs + bs / 2, 1);
        ggml_backend_tensor_set(w, part + 1, 2 * bs + 1, 1);
        want[bs + bs / 2] = part[0];
        want[2 * bs + 1] = part[1];
        ggml_backend_tensor_get(w, got, 0, nb);
        CHECK_MSG(memcmp(got, want, nb) == 0, "%s k=%lld n=%lld: single bytes", tn, (long long) k, (long long) n);
    }

    const size_t m0 = nb / 4 + 1, m1 = nb / 2 + 3;
    ggml_backend_tensor_memset(w, 0x5a, m0, m1 - m0);
    memset(want + m0, 0x5a, m1 - m0);
    ggml_backend_tensor_get(w, got, 0, nb);
    CHECK_MSG(memcmp(got, want, nb) == 0, "%s k=%lld n=%lld: memset", tn, (long long) k, (long long) n);

    check_copies(w, want, got, tn);

    free(part);
    free(want);
    free(got);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

// the double-precision product of dequantized weights with the Q8_0 form of
// the activations (what the kernels multiply)
static double q_ref(const float * wf, const float * xq, int64_t k, double * sum_abs) {
    double s = 0.0, a = 0.0;
    for (int64_t i = 0; i < k; i++) {
        const double p = (double) wf[i] * (double) xq[i];
        s += p;
        a += fabs(p);
    }
    *sum_abs = a;
    return s;
}

// column (i1, i2, i3) of x, contiguous, through vdt (the weights'
// vec_dot_type) and back
static void q_x_col(const struct ggml_tensor * x, enum ggml_type vdt, int64_t i1, int64_t i2, int64_t i3, float * out) {
    const int64_t k = x->ne[0];
    float * col = (float *) malloc((size_t) k * sizeof(float));
    for (int64_t i = 0; i < k; i++) {
        col[i] = (float) tt_get(x, i, i1, i2, i3);
    }
    uint8_t * q = (uint8_t *) malloc(ggml_row_size(vdt, k));
    ggml_get_type_traits_cpu(vdt)->from_float(col, q, k);
    ggml_get_type_traits(vdt)->to_float(q, out, k);
    free(q);
    free(col);
}

static void check_panels_mul_mat(ggml_backend_t backend, ggml_backend_buffer_type_t buft, enum ggml_type type,
                                 const struct mm_case * c) {
    const enum ggml_type vdt = ggml_get_type_traits_cpu(type)->vec_dot_type;
    // the same weights packed and in host memory
    struct ggml_context * wctx = ctx_new(2);
    struct ggml_tensor * w = ggml_new_tensor_4d(wctx, type, c->k, c->n, c->ne2, c->ne3);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, buft);
    const int64_t nrows = c->n * c->ne2 * c->ne3;
    uint8_t * wq = random_quant(type, c->k, nrows, (uint64_t)(c->k * 7 + c->n * 13 + c->cols));
    ggml_backend_tensor_set(w, wq, 0, ggml_nbytes(w));
    float * wf = (float *) malloc((size_t)(c->k * nrows) * sizeof(float));
    ggml_get_type_traits(type)->to_float(wq, wf, c->k * nrows);

    struct ggml_context * ctx = ctx_new(8);
    struct ggml_tensor * wh = ggml_dup_tensor(ctx, w);
    struct ggml_tensor * xb = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->k + (c->strided ? 32 : 0), c->cols, c->xne2, c->xne3);
    struct ggml_tensor * x = c->strided ? ggml_view_4d(ctx, xb, c->k, c->cols, c->xne2, c->xne3, xb->nb[1], xb->nb[2], xb->nb[3], 0) : xb;
    struct ggml_tensor * y  = ggml_mul_mat(ctx, w, x);
    struct ggml_tensor * yh = ggml_mul_mat(ctx, wh, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_build_forward_expand(gf, yh);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    CHECK(wbuf != NULL && buf != NULL);
    memcpy(wh->data, wq, ggml_nbytes(wh));
    tt_fill_uniform(xb, -1.0, 1.0, (uint64_t) c->cols + 5);
    CHECK(ggml_backend_dev_supports_op(g_cpu_dev, y));

    float * xq = (float *) malloc((size_t) c->k * sizeof(float));
    for (int run = 0; run < 3; run++) {
        const int nth = run == 1 ? 3 : 1;
        const bool use_ref = run == 2;
        ggml_backend_cpu_set_n_threads(backend, nth);
        ggml_backend_cpu_set_use_ref(backend, use_ref);
        memset(y->data, 0xff, ggml_nbytes(y)); // NaN: every result must be written
        CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
        double worst_h = 0.0, worst_ref = 0.0;
        for (int64_t i3 = 0; i3 < y->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < y->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < y->ne[1]; i1++) {
            q_x_col(x, vdt, i1, i2, i3, xq);
            const int64_t w2 = i2 / (c->xne2 / c->ne2), w3 = i3 / (c->xne3 / c->ne3);
            for (int64_t i0 = 0; i0 < y->ne[0]; i0++) {
                double sum_abs;
                const double ref = q_ref(wf + ((w3 * c->ne2 + w2) * c->n + i0) * c->k, xq, c->k, &sum_abs);
                const double got = tt_get(y, i0, i1, i2, i3);
                const double host = tt_get(yh, i0, i1, i2, i3);
                worst_h   = isnan(got) ? INFINITY : fmax(worst_h,   fabs(got - host) / (sum_abs + 1e-30));
                worst_ref = isnan(got) ? INFINITY : fmax(worst_ref, fabs(got - ref)  / (sum_abs + 1e-30));
            }
        }
        CHECK_MSG(worst_h < 1e-5 && worst_ref < 1e-3,
                  "%s mul_mat k=%lld n=%lld w(%lld,%lld) cols=%lld x(%lld,%lld)%s %d threads%s: error %g against host "
                  "memory, %g against the reference", ggml_type_name(type),
                  (long long) c->k, (long long) c->n, (long long) c->ne2, (long long) c->ne3, (long long) c->cols,
                  (long long) c->xne2, (long long) c->xne3, c->strided ? " strided" : "", nth, use_ref ? " use_ref" : "",
                  worst_h, worst_ref);
    }
    ggml_backend_cpu_set_use_ref(backend, false);
    free(xq);
    free(wf);
    free(wq);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
}

// experts [k, n, n_as] against the same product on host memory
static void check_panels_mul_mat_id(ggml_backend_t backend, ggml_backend_buffer_type_t buft, enum ggml_type type, int64_t k,
                                    int64_t n, int64_t n_as, int64_t n_used, int64_t n_tokens) {
    struct ggml_context * wctx = ctx_new(2);
    struct ggml_tensor * w = ggml_new_tensor_3d(wctx, type, k, n, n_as);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, buft);
    uint8_t * wq = random_quant(type, k, n * n_as, (uint64_t)(k + n_tokens));
    ggml_backend_tensor_set(w, wq, 0, ggml_nbytes(w));

    struct ggml_context * ctx = ctx_new(8);
    struct ggml_tensor * wh  = ggml_dup_tensor(ctx, w);
    struct ggml_tensor * x   = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, k, 1, n_tokens);
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, n_tokens);
    struct ggml_tensor * y  = ggml_mul_mat_id(ctx, w, x, ids);
    struct ggml_tensor * yh = ggml_mul_mat_id(ctx, wh, x, ids);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_build_forward_expand(gf, yh);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    memcpy(wh->data, wq, ggml_nbytes(wh));
    tt_fill_uniform(x, -1.0, 1.0, 11);
    fill_ids(ids, n_as);
    CHECK(ggml_backend_dev_supports_op(g_cpu_dev, y));
    for (int run = 0; run < 2; run++) {
        ggml_backend_cpu_set_n_threads(backend, run == 0 ? 1 : 3);
        memset(y->data, 0xff, ggml_nbytes(y));
        CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
        double worst = 0.0;
        for (int64_t t = 0; t < n_tokens; t++)
        for (int64_t s = 0; s < n_used; s++)
        for (int64_t i0 = 0; i0 < n; i0++) {
            const double got = tt_get(y, i0, s, t, 0), host = tt_get(yh, i0, s, t, 0);
            worst = isnan(got) ? INFINITY : fmax(worst, fabs(got - host) / (fabs(host) + 1.0));
        }
        CHECK_MSG(worst < 1e-4, "%s mul_mat_id k=%lld n=%lld experts=%lld tokens=%lld: error %g", ggml_type_name(type), (long long) k,
                  (long long) n, (long long) n_as, (long long) n_tokens, worst);
    }
    free(wq);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
}

static void check_panels(ggml_backend_buffer_type_t buft, enum ggml_type type) {
    check_panels_get_set(buft, type, 64, 70, 1);
    check_panels_get_set(buft, type, 96, 130, 2);
    check_panels_get_set(buft, type, 32, 1, 1);
    check_supports_op(buft, type);

    ggml_backend_t backend = ggml_backend_cpu_init();
    CHECK(backend != NULL);
    if (backend == NULL) {
        return;
    }
    // rows: 1, 15, 16, 17, 70, 300; blocks per row: 1 to 129; columns 1 to 5
    // take the panel kernel, 6 and more the tile kernel
    const struct mm_case cases[] = {
        { .k = 32,   .n = 1,   .ne2 = 1, .ne3 = 1, .cols = 1,  .xne2 = 1, .xne3 = 1 },
        { .k = 64,   .n = 15,  .ne2 = 1, .ne3 = 1, .cols = 2,  .xne2 = 1, .xne3 = 1 },
        { .k = 64,   .n = 16,  .ne2 = 1, .ne3 = 1, .cols = 5,  .xne2 = 1, .xne3 = 1 },
        { .k = 96,   .n = 17,  .ne2 = 1, .ne3 = 1, .cols = 1,  .xne2 = 1, .xne3 = 1, .strided = true },
        { .k = 4128, .n = 70,  .ne2 = 1, .ne3 = 1, .cols = 1,  .xne2 = 1, .xne3 = 1 },
        { .k = 4128, .n = 70,  .ne2 = 1, .ne3 = 1, .cols = 3,  .xne2 = 1, .xne3 = 1 },
        { .k = 2048, .n = 300, .ne2 = 1, .ne3 = 1, .cols = 1,  .xne2 = 1, .xne3 = 1 },
        { .k = 2048, .n = 300, .ne2 = 1, .ne3 = 1, .cols = 40, .xne2 = 1, .xne3 = 1 },
        { .k = 64,   .n = 33,  .ne2 = 2, .ne3 = 1, .cols = 3,  .xne2 = 4, .xne3 = 1 },
        { .k = 128,  .n = 129, .ne2 = 2, .ne3 = 2, .cols = 9,  .xne2 = 2, .xne3 = 4, .strided = true },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_panels_mul_mat(backend, buft, type, &cases[i]);
    }
    check_panels_mul_mat_id(backend, buft, type, 64, 67, 4, 2, 3);
    check_panels_mul_mat_id(backend, buft, type, 96, 130, 3, 2, 40);
    ggml_backend_free(backend);
}

int main(void) {
    g_cpu_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    CHECK(g_cpu_dev != NULL);
    if (g_cpu_dev == NULL) {
        return TEST_RESULT();
    }
    ggml_backend_buffer_type_t * bufts = extra_bufts();
    const char * no_dot = getenv("GGML_CPU_NO_BF16_DOT");
    const bool has_bf16 = kernels_have("AVX512_BF16") && ggml_cpu_has_avx512_bf16() && (no_dot == NULL);
    // the Q4_0 panel kernels: AVX-512 VNNI, or AVX2 with FMA and F16C
    const bool has_panels = kernels_have("AVX512_VNNI") ||
                            (kernels_have("AVX2") && kernels_have("FMA") && kernels_have("F16C"));
    const bool expect = has_bf16 || has_panels;
    const bool listed = bufts != NULL && bufts[0] != NULL;
    CHECK_MSG(listed == expect, "extra buffer types listed: %d, expected %d", listed, expect);
    // the CPU's own type is no extra one
    CHECK(!listed || bufts[0] != ggml_backend_cpu_buffer_type());
    if (!listed) {
        printf("no CPU_REPACK buffer type here (kernels without AVX512_BF16 or AVX2, or GGML_CPU_NO_BF16_DOT)\n");
        return TEST_RESULT();
    }
    CHECK(bufts[1] == NULL);
    ggml_backend_buffer_type_t buft = bufts[0];
    printf("CPU_REPACK layouts here: BF16 %s, Q4_0 %s\n", has_bf16 ? "yes" : "no", has_panels ? "yes" : "no");

    check_basics(buft, has_bf16, has_panels);
    if (has_panels) {
        check_panels(buft, GGML_TYPE_Q4_0);
    }
    if (!has_bf16) {
        return TEST_RESULT();
    }
    check_get_set(buft, 37, 70, 1);
    check_get_set(buft, 64, 130, 2);
    check_get_set(buft, 3, 1, 1);
    check_supports_op(buft, GGML_TYPE_BF16);

    ggml_backend_t backend = ggml_backend_cpu_init();
    CHECK(backend != NULL);
    const struct mm_case cases[] = {
        { .k = 37,   .n = 70,  .ne2 = 1, .ne3 = 1, .cols = 1,   .xne2 = 1, .xne3 = 1 },
        { .k = 37,   .n = 70,  .ne2 = 1, .ne3 = 1, .cols = 5,   .xne2 = 1, .xne3 = 1 },
        { .k = 37,   .n = 70,  .ne2 = 1, .ne3 = 1, .cols = 128, .xne2 = 1, .xne3 = 1 },
        { .k = 4100, .n = 65,  .ne2 = 1, .ne3 = 1, .cols = 1,   .xne2 = 1, .xne3 = 1 },
        { .k = 4100, .n = 65,  .ne2 = 1, .ne3 = 1, .cols = 30,  .xne2 = 1, .xne3 = 1, .strided = true },
        { .k = 2051, .n = 3,   .ne2 = 1, .ne3 = 1, .cols = 7,   .xne2 = 1, .xne3 = 1 },
        { .k = 33,   .n = 64,  .ne2 = 2, .ne3 = 1, .cols = 5,   .xne2 = 4, .xne3 = 1 },
        { .k = 48,   .n = 129, .ne2 = 2, .ne3 = 2, .cols = 9,   .xne2 = 2, .xne3 = 4, .strided = true },
        { .k = 256,  .n = 200, .ne2 = 1, .ne3 = 1, .cols = 128, .xne2 = 1, .xne3 = 1 },
    };
    for (size_t i = 0; backend != NULL && i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_mul_mat(backend, buft, &cases[i]);
    }
    if (backend != NULL) {
        ggml_backend_cpu_set_n_threads(backend, 2);
        check_sched(backend, buft);
        check_mul_mat_id(backend, buft, 40, 67, 4, 2, 3);
        check_mul_mat_id(backend, buft, 41, 130, 3, 2, 40);
        ggml_backend_free(backend);
    }
    return TEST_RESULT();
}
