// test-blas.c: the BLAS backend (built with GGML_BLAS=ON).
//
// - registry entry and device: name, ACCEL type, host buffers, set_n_threads
//   through get_proc_address, the library's thread count following it;
//   the backend is reached through the registry, so that the test runs the
//   same with BLAS built in and as a module (GGML_BACKEND_DL, where
//   TEST_BLAS_MODULE is defined and ggml-blas.h's functions are not linked);
// - MUL_MAT and OUT_PROD on the backend directly, against products computed
//   here in double precision from the inputs as stored (quantized weights
//   read back with their reference dequantizer): every weight type, odd
//   sizes, broadcasting, strided and permuted views, 1 to 3 threads;
// - supports_op: the batch threshold, types and layouts it refuses;
// - a graph with a node it does not support fails before anything runs;
// - the scheduler over BLAS and the CPU: the large products on BLAS, the
//   rest on the CPU, no copies between them, the results right.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-blas.h"
#include "ggml-cpu.h"
#include "cpu-testing.h"

#include <dlfcn.h>
#include <string.h>

static ggml_backend_t g_blas;

static ggml_backend_t blas_init(void) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_name("BLAS");
    return dev != NULL ? ggml_backend_dev_init(dev, NULL) : NULL;
}

static bool is_blas(ggml_backend_t b) {
    return b != NULL && ggml_backend_get_device(b) == ggml_backend_dev_by_name("BLAS");
}

static void blas_set_n_threads(ggml_backend_t b, int n_threads) {
    void * sym = ggml_backend_reg_get_proc_address(ggml_backend_reg_by_name("BLAS"), "ggml_backend_set_n_threads");
    GGML_ASSERT(sym != NULL);
    ggml_backend_set_n_threads_t set_n_threads;
    memcpy(&set_n_threads, &sym, sizeof(sym));
    set_n_threads(b, n_threads);
}

//
// references
//

// dst[i0, i1, i2, i3] = sum_k a[k, i0, i2 / (ne2 / a.ne2), ...] * b[k, i1, i2, i3]
// (out_prod: sum_k a[i0, k, ...] * b[i1, k, ...]); a and b are read once
// into doubles, as stored
struct mm_ref {
    const struct ggml_tensor * a;
    const struct ggml_tensor * b;
    bool                       out_prod;
    double *                   av;
    double *                   bv;
};

static double * read_all(const struct ggml_tensor * t) {
    double * v = (double *) malloc((size_t) ggml_nelements(t) * sizeof(double));
    GGML_ASSERT(v != NULL);
    size_t i = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++) {
        v[i++] = tt_get(t, i0, i1, i2, i3);
    }
    return v;
}

static struct mm_ref mm_ref_new(const struct ggml_tensor * a, const struct ggml_tensor * b, bool out_prod) {
    return (struct mm_ref) { .a = a, .b = b, .out_prod = out_prod, .av = read_all(a), .bv = read_all(b) };
}

static void mm_ref_free(struct mm_ref * r) {
    free(r->av);
    free(r->bv);
}

static double at(const double * v, const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return v[((i3 * t->ne[2] + i2) * t->ne[1] + i1) * t->ne[0] + i0];
}

static double ref_product(int64_t i0, int64_t i1, int64_t i2, int64_t i3, void * user) {
    const struct mm_ref * r = (const struct mm_ref *) user;
    const struct ggml_tensor * a = r->a;
    const struct ggml_tensor * b = r->b;
    const int64_t a2 = i2 / (b->ne[2] / a->ne[2]);
    const int64_t a3 = i3 / (b->ne[3] / a->ne[3]);
    double sum = 0.0;
    if (r->out_prod) {
        for (int64_t k = 0; k < a->ne[1]; k++) {
            sum += at(r->av, a, i0, k, a2, a3) * at(r->bv, b, i1, k, i2, i3);
        }
    } else {
        for (int64_t k = 0; k < a->ne[0]; k++) {
            sum += at(r->av, a, k, i0, a2, a3) * at(r->bv, b, k, i1, i2, i3);
        }
    }
    return sum;
}

static enum ggml_status compute_on(ggml_backend_t backend, struct ggml_context * ctx, struct ggml_tensor * out) {
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    return ggml_backend_graph_compute(backend, gf);
}

static struct ggml_context * ctx_new(size_t mib) {
    struct ggml_context * ctx = tt_ctx_new(mib);
    GGML_ASSERT(ctx != NULL);
    return ctx;
}

//
// the registry entry and the device
//

static void test_registry(void) {
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("BLAS");
    CHECK(reg != NULL);
#ifndef TEST_BLAS_MODULE
    CHECK(reg == ggml_backend_blas_reg());
    ggml_backend_t direct = ggml_backend_blas_init();
    CHECK(ggml_backend_is_blas(direct) && is_blas(direct));
    ggml_backend_blas_set_n_threads(direct, 2);
    ggml_backend_free(direct);
#endif
    CHECK_EQ_INT(ggml_backend_reg_dev_count(reg), 1);
    ggml_backend_dev_t dev = ggml_backend_dev_by_name("blas");
    CHECK(dev != NULL && dev == ggml_backend_reg_dev_get(reg, 0));
    CHECK(ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_ACCEL);
    const char * desc = ggml_backend_dev_description(dev);
    CHECK_MSG(strcmp(desc, "OpenBLAS") == 0 || strcmp(desc, "BLIS") == 0 || strcmp(desc, "MKL") == 0 ||
              strcmp(desc, "BLAS") == 0, "description %s", desc);
    printf("BLAS device: %s\n", desc);
    fflush(stdout);

    // it works on the CPU's memory
    CHECK(ggml_backend_dev_buffer_type(dev) == ggml_backend_cpu_buffer_type());
    CHECK(ggml_backend_buft_is_host(ggml_backend_dev_buffer_type(dev)));
    CHECK(ggml_backend_dev_supports_buft(dev, ggml_backend_cpu_buffer_type()));
    struct ggml_backend_dev_props props;
    ggml_backend_dev_get_props(dev, &props);
    CHECK(props.caps.buffer_from_host_ptr && !props.caps.async && !props.caps.events);
    _Alignas(64) float host[16];
    ggml_backend_buffer_t buf = ggml_backend_dev_buffer_from_host_ptr(dev, host, sizeof(host), sizeof(host));
    CHECK(buf != NULL && ggml_backend_buffer_get_base(buf) == (void *) host && ggml_backend_buffer_is_host(buf));
    ggml_backend_buffer_free(buf);

    ggml_backend_t b = ggml_backend_init_by_name("BLAS", NULL);
    CHECK(b != NULL && is_blas(b) && strcmp(ggml_backend_name(b), "BLAS") == 0);
    CHECK(ggml_backend_get_device(b) == dev);
#ifndef TEST_BLAS_MODULE
    CHECK(ggml_backend_is_blas(b));
    ggml_backend_t cpu = ggml_backend_cpu_init();
    CHECK(!ggml_backend_is_blas(cpu) && !ggml_backend_is_blas(NULL));
    ggml_backend_free(cpu);
#endif

    // the generic thread setter reaches it
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
    CHECK(sym != NULL);
    if (sym != NULL) {
        ggml_backend_set_n_threads_t set_n_threads;
        memcpy(&set_n_threads, &sym, sizeof(sym));
        set_n_threads(b, 3);
    }
    CHECK(ggml_backend_reg_get_proc_address(reg, "no_such_function") == NULL);
    ggml_backend_free(b);
}

// the library's own thread count, where it tells: -1 otherwise
static int library_threads(void) {
    void * sym = dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
    if (sym != NULL) {
        int (*get)(void);
        memcpy(&get, &sym, sizeof(sym));
        return get();
    }
    sym = dlsym(RTLD_DEFAULT, "bli_thread_get_num_threads");
    if (sym != NULL) {
        int64_t (*get)(void);
        memcpy(&get, &sym, sizeof(sym));
        return (int) get();
    }
    return -1;
}

//
// products on the backend
//

struct mm_case {
    enum ggml_type type;
    int64_t m, n, k;    // dst is m x n; k the inner size
    int64_t ne2[2];     // batch of the weights (a) and of the activations (b) in dim 2
    int64_t ne3[2];     // and in dim 3
};

static void check_mul_mat(const struct mm_case * c, int n_threads) {
    struct ggml_context * ctx = ctx_new(64);
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, c->type, c->k, c->m, c->ne2[0], c->ne3[0]);
    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->k, c->n, c->ne2[1], c->ne3[1]);
    tt_fill_uniform(a, -1.0, 1.0, 11);
    tt_fill_uniform(b, -1.0, 1.0, 12);
    struct ggml_tensor * d = ggml_mul_mat(ctx, a, b);
    CHECK_MSG(ggml_backend_supports_op(g_blas, d), "%s m=%lld n=%lld k=%lld", ggml_type_name(c->type),
              (long long) c->m, (long long) c->n, (long long) c->k);
    blas_set_n_threads(g_blas, n_threads);
    CHECK(compute_on(g_blas, ctx, d) == GGML_STATUS_SUCCESS);
    struct mm_ref r = mm_ref_new(a, b, false);
    const double err = tt_max_err(d, ref_product, &r, 2e-4, 1e-5);
    mm_ref_free(&r);
    CHECK_MSG(err <= 1.0, "mul_mat %s m=%lld n=%lld k=%lld batch %lldx%lld/%lldx%lld, %d threads: error %.3g",
              ggml_type_name(c->type), (long long) c->m, (long long) c->n, (long long) c->k,
              (long long) c->ne2[0], (long long) c->ne3[0], (long long) c->ne2[1], (long long) c->ne3[1], n_threads, err);
    const int lib = library_threads();
    CHECK_MSG(lib < 0 || lib == n_threads, "the library runs %d threads, the backend was given %d", lib, n_threads);
    ggml_free(ctx);
}

static void test_mul_mat_types(void) {
    const enum ggml_type types[] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
        GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    };
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        const bool quant = ggml_is_quantized(types[t]);
        const int64_t k = quant ? 96 : 67; // odd where the type allows
        const struct mm_case cases[] = {
            { types[t], 33, 45, k, { 1, 1 }, { 1, 1 } },
            { types[t], 40, 32, k, { 2, 6 }, { 1, 2 } },   // broadcast over dims 2 and 3
            { types[t], 64, 37, 2 * k, { 3, 3 }, { 2, 2 } },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
            check_mul_mat(&cases[i], 1 + (int) ((t + i) % 3));
        }
    }
}

// views: rows further apart than their length, permuted batches
static void test_mul_mat_views(void) {
    struct ggml_context * ctx = ctx_new(64);
    // weights: every other row of a 70 x 2m matrix, and a 3-batch of it permuted
    struct ggml_tensor * wbase = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 70, 80, 3);
    struct ggml_tensor * xbase = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 70, 2, 48, 3);
    tt_fill_uniform(wbase, -1.0, 1.0, 21);
    tt_fill_uniform(xbase, -1.0, 1.0, 22);
    // 40 rows of 70, two rows apart
    struct ggml_tensor * w = ggml_view_3d(ctx, wbase, 70, 40, 3, 2 * wbase->nb[1], wbase->nb[2], 0);
    // activations: ne = [70, 48, 2, 3] from [70, 2, 48, 3] by swapping dims 1 and 2
    struct ggml_tensor * x = ggml_permute(ctx, xbase, 0, 2, 1, 3);
    // batches of w in dim 3 to match x: w ne = [70, 40, 1, 3] from [70, 40, 3]
    struct ggml_tensor * w4 = ggml_view_4d(ctx, w, 70, 40, 1, 3, w->nb[1], w->nb[2], w->nb[2], 0);
    CHECK(!ggml_is_contiguous(w4) && !ggml_is_contiguous(x));
    struct ggml_tensor * d = ggml_mul_mat(ctx, w4, x);
    CHECK(ggml_backend_supports_op(g_blas, d));
    blas_set_n_threads(g_blas, 2);
    CHECK(compute_on(g_blas, ctx, d) == GGML_STATUS_SUCCESS);
    struct mm_ref r = mm_ref_new(w4, x, false);
    const double err = tt_max_err(d, ref_product, &r, 2e-4, 1e-5);
    mm_ref_free(&r);
    CHECK_MSG(err <= 1.0, "mul_mat of views: error %.3g", err);

    // quantized weights: a strided view of whole rows converts too
    struct ggml_tensor * qbase = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 90);
    tt_fill_uniform(qbase, -1.0, 1.0, 23);
    struct ggml_tensor * q = ggml_view_2d(ctx, qbase, 64, 45, 2 * qbase->nb[1], qbase->nb[1]);
    struct ggml_tensor * xq = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 33);
    tt_fill_uniform(xq, -1.0, 1.0, 24);
    struct ggml_tensor * dq = ggml_mul_mat(ctx, q, xq);
    CHECK(ggml_backend_supports_op(g_blas, dq));
    CHECK(compute_on(g_blas, ctx, dq) == GGML_STATUS_SUCCESS);
    r = mm_ref_new(q, xq, false);
    CHECK(tt_max_err(dq, ref_product, &r, 2e-4, 1e-5) <= 1.0);
    mm_ref_free(&r);
    ggml_free(ctx);
}

static void check_out_prod(enum ggml_type type, int64_t m, int64_t n, int64_t k, int64_t ne2a, int64_t ne2b,
                           bool transposed_b, int n_threads) {
    struct ggml_context * ctx = ctx_new(64);
    // a: [m, k, ne2a]; b: [n, k, ne2b] (or the transpose of a [k, n, ne2b])
    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, type, m, k, ne2a);
    tt_fill_uniform(a, -1.0, 1.0, 31);
    struct ggml_tensor * b;
    if (transposed_b) {
        struct ggml_tensor * bt = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, k, n, ne2b);
        tt_fill_uniform(bt, -1.0, 1.0, 32);
        b = ggml_transpose(ctx, bt);
    } else {
        b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n, k, ne2b);
        tt_fill_uniform(b, -1.0, 1.0, 32);
    }
    struct ggml_tensor * d = ggml_out_prod(ctx, a, b);
    CHECK(ggml_backend_supports_op(g_blas, d));
    blas_set_n_threads(g_blas, n_threads);
    CHECK(compute_on(g_blas, ctx, d) == GGML_STATUS_SUCCESS);
    struct mm_ref r = mm_ref_new(a, b, true);
    const double err = tt_max_err(d, ref_product, &r, 2e-4, 1e-5);
    mm_ref_free(&r);
    CHECK_MSG(err <= 1.0, "out_prod %s m=%lld n=%lld k=%lld batch %lld/%lld%s: error %.3g", ggml_type_name(type),
              (long long) m, (long long) n, (long long) k, (long long) ne2a, (long long) ne2b,
              transposed_b ? " transposed b" : "", err);
    ggml_free(ctx);
}

static void test_out_prod(void) {
    check_out_prod(GGML_TYPE_F32, 37, 29, 13, 1, 1, false, 1);
    check_out_prod(GGML_TYPE_F32, 37, 29, 13, 1, 1, true, 2);
    check_out_prod(GGML_TYPE_F32, 16, 5, 7, 2, 4, false, 3);  // broadcast
    check_out_prod(GGML_TYPE_F32, 16, 5, 7, 2, 4, true, 2);
    check_out_prod(GGML_TYPE_F16, 40, 9, 21, 1, 1, false, 2);
    check_out_prod(GGML_TYPE_Q8_0, 64, 11, 5, 2, 2, false, 2);
    check_out_prod(GGML_TYPE_Q4_0, 96, 3, 17, 1, 3, true, 3);
}

//
// what it takes
//

static void test_supports_op(void) {
    struct ggml_context * ctx = ctx_new(1);
    struct ggml_tensor * w   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 64);
    struct ggml_tensor * x32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 32);
    struct ggml_tensor * x31 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 31);
    struct ggml_tensor * w31 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 31);
    struct ggml_tensor * k31 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 31, 64);
    struct ggml_tensor * x16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 32);
    struct ggml_tensor * wq  = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 64);

    // the batch threshold: 32 in each of the three sizes
    CHECK(ggml_backend_supports_op(g_blas, ggml_mul_mat(ctx, w, x32)));
    CHECK(ggml_backend_supports_op(g_blas, ggml_mul_mat(ctx, wq, x32)));
    CHECK(!ggml_backend_supports_op(g_blas, ggml_mul_mat(ctx, w, x31)));   // 31 tokens
    CHECK(!ggml_backend_supports_op(g_blas, ggml_mul_mat(ctx, w31, x32))); // 31 outputs
    CHECK(!ggml_backend_supports_op(g_blas, ggml_mul_mat(ctx, k31, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 31, 32))));
    // F32 activations only
    CHECK(!ggml_backend_supports_op(g_blas, ggml_mul_mat(ctx, w, x16)));
    // rows of src1 not contiguous (a transposed view)
    struct ggml_tensor * xt = ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 64));
    CHECK(!ggml_backend_supports_op(g_blas, ggml_mul_mat(ctx, w, xt)));
    // a Hadamard rotation stays on the CPU's fast path
    struct ggml_tensor * h = ggml_mul_mat(ctx, w, x32);
    ggml_mul_mat_set_hint(h, GGML_HINT_SRC0_IS_HADAMARD);
    CHECK(!ggml_backend_supports_op(g_blas, h));
    // OUT_PROD: F32 src1 only, no size threshold
    CHECK(ggml_backend_supports_op(g_blas, ggml_out_prod(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 2),
                                                         ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2))));
    CHECK(!ggml_backend_supports_op(g_blas, ggml_out_prod(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 2),
                                                          ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 2))));
    // other ops: only the ones that compute nothing
    CHECK(!ggml_backend_supports_op(g_blas, ggml_add(ctx, w, w)));
    CHECK(!ggml_backend_supports_op(g_blas, ggml_mul_mat_id(ctx, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 64, 2),
                                                            ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 64, 1, 32),
                                                            ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 1, 32))));
    CHECK(ggml_backend_supports_op(g_blas, ggml_reshape_2d(ctx, w, 32, 128)));
    CHECK(ggml_backend_supports_op(g_blas, ggml_transpose(ctx, w)));
    ggml_free(ctx);
}

// a graph with a node the backend does not compute fails whole, with
// nothing written
static void test_unsupported_graph(void) {
    struct ggml_context * ctx = ctx_new(4);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 64);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 32);
    tt_fill_uniform(w, -1.0, 1.0, 41);
    tt_fill_uniform(x, -1.0, 1.0, 42);
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    struct ggml_tensor * z = ggml_add(ctx, y, y);
    memset(y->data, 0x7f, ggml_nbytes(y));
    CHECK(compute_on(g_blas, ctx, z) == GGML_STATUS_FAILED);
    const unsigned char * bytes = (const unsigned char *) y->data;
    bool untouched = true;
    for (size_t i = 0; i < ggml_nbytes(y); i++) {
        untouched = untouched && bytes[i] == 0x7f;
    }
    CHECK(untouched);
    ggml_free(ctx);
}

//
// the scheduler over BLAS and the CPU
//

// x -> mul_mat(w1) [64 tokens: BLAS] -> add bias [CPU] -> mul_mat(w2) [64 tokens, Q8_0: BLAS]
//   -> a 1-token product mul_mat(w2, last column) [CPU]
static void test_sched(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_t blas = blas_init();
    ggml_backend_cpu_set_n_threads(cpu, 2);
    blas_set_n_threads(blas, 2);

    // weights in a CPU buffer, as a model's are
    const struct ggml_init_params wp = { 8 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * wctx = ggml_init(wp);
    struct ggml_tensor * w1   = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, 96, 128);
    struct ggml_tensor * bias = ggml_new_tensor_1d(wctx, GGML_TYPE_F32, 128);
    struct ggml_tensor * w2   = ggml_new_tensor_2d(wctx, GGML_TYPE_Q8_0, 128, 48);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, ggml_backend_cpu_buffer_type());
    CHECK(wbuf != NULL);
    ggml_backend_buffer_set_usage(wbuf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    // the same values in host memory for the reference
    struct ggml_context * hctx = ctx_new(4);
    struct ggml_tensor * hw1 = ggml_dup_tensor(hctx, w1);
    struct ggml_tensor * hb  = ggml_dup_tensor(hctx, bias);
    struct ggml_tensor * hw2 = ggml_dup_tensor(hctx, w2);
    struct ggml_tensor * hx  = ggml_new_tensor_2d(hctx, GGML_TYPE_F32, 96, 64);
    tt_fill_uniform(hw1, -0.5, 0.5, 51);
    tt_fill_uniform(hb, -0.5, 0.5, 52);
    tt_fill_uniform(hw2, -0.5, 0.5, 53);
    tt_fill_uniform(hx, -1.0, 1.0, 54);
    ggml_backend_tensor_set(w1, hw1->data, 0, ggml_nbytes(w1));
    ggml_backend_tensor_set(bias, hb->data, 0, ggml_nbytes(bias));
    ggml_backend_tensor_set(w2, hw2->data, 0, ggml_nbytes(w2));

    const struct ggml_init_params gp = { 32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * gctx = ggml_init(gp);
    struct ggml_tensor * x = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, 96, 64);
    ggml_set_input(x);
    struct ggml_tensor * h1 = ggml_mul_mat(gctx, w1, x);
    struct ggml_tensor * h2 = ggml_add(gctx, h1, bias);
    struct ggml_tensor * h3 = ggml_mul_mat(gctx, w2, h2);
    struct ggml_tensor * last = ggml_view_2d(gctx, h2, 128, 1, h2->nb[1], 63 * h2->nb[1]);
    struct ggml_tensor * h4 = ggml_mul_mat(gctx, w2, last);
    ggml_set_output(h3);
    ggml_set_output(h4);
    struct ggml_cgraph * gf = ggml_new_graph(gctx);
    ggml_build_forward_expand(gf, h3);
    ggml_build_forward_expand(gf, h4);

    ggml_backend_t backends[2] = { blas, cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, GGML_DEFAULT_GRAPH_SIZE, false, true);
    CHECK(sched != NULL);
    CHECK(ggml_backend_sched_alloc_graph(sched, gf));
    ggml_backend_tensor_set(x, hx->data, 0, ggml_nbytes(x));
    CHECK(ggml_backend_sched_graph_compute(sched, gf) == GGML_STATUS_SUCCESS);

    CHECK(ggml_backend_sched_get_tensor_backend(sched, h1) == blas);
    CHECK(ggml_backend_sched_get_tensor_backend(sched, h2) == cpu);
    CHECK(ggml_backend_sched_get_tensor_backend(sched, h3) == blas);
    CHECK(ggml_backend_sched_get_tensor_backend(sched, h4) == cpu);
    // BLAS, CPU, BLAS, CPU: the inputs of each are in host memory already
    CHECK_EQ_INT(ggml_backend_sched_get_n_splits(sched), 4);
    CHECK_EQ_INT(ggml_backend_sched_get_n_copies(sched), 1);

    // reference, in double precision, from the stored values
    static double ref_h2[64][128];
    for (int t = 0; t < 64; t++) {
        for (int o = 0; o < 128; o++) {
            double s = tt_get(hb, o, 0, 0, 0);
            for (int i = 0; i < 96; i++) {
                s += tt_get(hw1, i, o, 0, 0) * tt_get(hx, i, t, 0, 0);
            }
            ref_h2[t][o] = s;
        }
    }
    float got3[64 * 48], got4[48];
    ggml_backend_tensor_get(h3, got3, 0, sizeof(got3));
    ggml_backend_tensor_get(h4, got4, 0, sizeof(got4));
    double worst = 0.0;
    for (int t = 0; t < 64; t++) {
        for (int o = 0; o < 48; o++) {
            double s = 0.0;
            for (int i = 0; i < 128; i++) {
                s += tt_get(hw2, i, o, 0, 0) * ref_h2[t][i];
            }
            worst = fmax(worst, fabs(got3[t * 48 + o] - s));
            if (t == 63) {
                // the CPU's 1-token product quantizes its activations to Q8_0:
                // each off by at most half a step of its block's largest
                double sum_w = 0.0, max_h = 0.0;
                for (int i = 0; i < 128; i++) {
                    sum_w += fabs(tt_get(hw2, i, o, 0, 0));
                    max_h = fmax(max_h, fabs(ref_h2[t][i]));
                }
                const double tol = sum_w * max_h / 127.0 + 1e-3;
                CHECK_MSG(fabs(got4[o] - s) <= tol, "1-token product %d: %g vs %g", o, (double) got4[o], s);
            }
        }
    }
    CHECK_MSG(worst <= 1e-3, "scheduled graph: error %g", worst);

    ggml_backend_sched_free(sched);
    ggml_free(gctx);
    ggml_free(hctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
    ggml_backend_free(blas);
    ggml_backend_free(cpu);
}

int main(void) {
    ggml_backend_load_all(); // the module, where BLAS is one
    g_blas = blas_init();
    CHECK(g_blas != NULL);
    if (g_blas == NULL) {
        return TEST_RESULT();
    }
    test_registry();
    test_supports_op();
    test_mul_mat_types();
    test_mul_mat_views();
    test_out_prod();
    test_unsupported_graph();
    test_sched();
    ggml_backend_free(g_blas);
    return TEST_RESULT();
}
