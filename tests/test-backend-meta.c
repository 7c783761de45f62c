// test-backend-meta.c: the meta device (ggml_backend_meta_device) over test
// devices with memory of their own (tests/backend-test: their data pointers
// cannot be dereferenced, so every access must go through the buffers).
//
// Each case is a small graph computed twice: on one test device, unsplit,
// and on a meta device whose weights are split as the case says (each axis,
// MIRRORED, a K dimension split so that MUL_MAT gives PARTIAL sums that are
// added across devices, segments with repeats, views of split results,
// attention split by heads). The
// two must agree, and matrix products also agree with a double-precision
// product computed here. Sizes are odd and the splits uneven. Besides: get
// and set of split tensors round-trip, the device's identity and properties,
// and a device that refuses an op (supports_op false, compute fails with a
// message, nothing crashes).

#define _POSIX_C_SOURCE 200809L

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "test-backend.h"
#include "testing.h"
#include "death-test.h"
#include "meta-testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//
// split states chosen by name
//

#define MAX_SPLITS 8

struct split_table {
    const char *                         names[MAX_SPLITS];
    struct ggml_backend_meta_split_state ss[MAX_SPLITS];
    int                                  n;
};

static struct ggml_backend_meta_split_state split_by_name(const struct ggml_tensor * tensor, void * user_data) {
    const struct split_table * table = user_data;
    for (int i = 0; i < table->n; i++) {
        if (strcmp(tensor->name, table->names[i]) == 0) {
            return table->ss[i];
        }
    }
    return mt_split_mirrored();
}

// one segment: device j gets ne[j] along axis
static void split_add(struct split_table * table, const char * name, int axis, size_t n_devs, const int64_t * ne) {
    table->names[table->n] = name;
    table->ss[table->n++]  = mt_split(axis, n_devs, ne);
}

//
// the cases
//

#define MAX_LEAVES 3

struct meta_case {
    const char * name;
    int          n_leaves;
    const char * leaf_names[MAX_LEAVES];
    int64_t      leaf_ne[MAX_LEAVES][4];
    struct ggml_tensor * (*build)(struct ggml_context * ctx, struct ggml_tensor ** leaves);
};

static struct ggml_tensor * build_mul_mat(struct ggml_context * ctx, struct ggml_tensor ** l) {
    return ggml_mul_mat(ctx, l[0], l[1]);
}

static struct ggml_tensor * build_mul_mat_add(struct ggml_context * ctx, struct ggml_tensor ** l) {
    return ggml_add(ctx, ggml_mul_mat(ctx, l[0], l[1]), l[2]);
}

static struct ggml_tensor * build_add_scale(struct ggml_context * ctx, struct ggml_tensor ** l) {
    return ggml_scale(ctx, ggml_add(ctx, l[0], l[1]), 0.5f);
}

static struct ggml_tensor * build_mul(struct ggml_context * ctx, struct ggml_tensor ** l) {
    return ggml_mul(ctx, l[0], l[1]);
}

// a view of the last two tokens of a row-split product
static struct ggml_tensor * build_view(struct ggml_context * ctx, struct ggml_tensor ** l) {
    struct ggml_tensor * y = ggml_mul_mat(ctx, l[0], l[1]);
    struct ggml_tensor * v = ggml_view_2d(ctx, y, y->ne[0], 2, y->nb[1], y->nb[1]);
    return ggml_scale(ctx, v, 2.0f);
}

// the transpose of a row-split product, made contiguous (split along 1)
static struct ggml_tensor * build_transpose(struct ggml_context * ctx, struct ggml_tensor ** l) {
    struct ggml_tensor * y = ggml_mul_mat(ctx, l[0], l[1]);
    return ggml_cont(ctx, ggml_transpose(ctx, y));
}

// two layers: rows split, then K split (the FFN of tensor parallelism)
static struct ggml_tensor * build_ffn(struct ggml_context * ctx, struct ggml_tensor ** l) {
    struct ggml_tensor * h = ggml_mul_mat(ctx, l[0], l[2]);      // [ff, tokens], split along 0
    h = ggml_scale(ctx, h, 0.25f);
    struct ggml_tensor * o = ggml_mul_mat(ctx, l[1], h);         // [d, tokens], PARTIAL
    return ggml_add(ctx, o, l[2]);                               // reduced before the residual add
}

//
// running a case
//

static float g_leaf_data[MAX_LEAVES][4096];

static void fill_leaves(const struct meta_case * c, unsigned seed) {
    for (int i = 0; i < c->n_leaves; i++) {
        for (int k = 0; k < 4096; k++) {
            seed = seed*1103515245u + 12345u;
            g_leaf_data[i][k] = (float) ((seed >> 8) % 2001) / 1000.0f - 1.0f;
        }
    }
}

// the case's output computed on backend (NULL if anything failed); *n_out gets its element count
static float * run_case(const struct meta_case * c, ggml_backend_t backend, int64_t * n_out, struct ggml_tensor ** out_tensor_ne) {
    const struct ggml_init_params pw = { (size_t) (MAX_LEAVES + 1)*ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx_w = ggml_init(pw);
    struct ggml_tensor * leaves[MAX_LEAVES];
    for (int i = 0; i < c->n_leaves; i++) {
        leaves[i] = ggml_new_tensor(ctx_w, GGML_TYPE_F32, 4, c->leaf_ne[i]);
        ggml_set_name(leaves[i], c->leaf_names[i]);
    }
    ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors_from_buft(ctx_w, ggml_backend_get_default_buffer_type(backend));
    CHECK(buf_w != NULL);
    for (int i = 0; i < c->n_leaves; i++) {
        ggml_backend_tensor_set(leaves[i], g_leaf_data[i], 0, ggml_nbytes(leaves[i]));
        // what was set comes back
        float * back = malloc(ggml_nbytes(leaves[i]));
        ggml_backend_tensor_get(leaves[i], back, 0, ggml_nbytes(leaves[i]));
        CHECK_MSG(memcmp(back, g_leaf_data[i], ggml_nbytes(leaves[i])) == 0, "%s: leaf %s round trip", c->name, c->leaf_names[i]);
        free(back);
    }

    const struct ggml_init_params pg = { 64*ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx_g = ggml_init(pg);
    struct ggml_tensor * out = c->build(ctx_g, leaves);
    struct ggml_cgraph * gf = mt_output_graph(ctx_g, out);

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_get_default_buffer_type(backend));
    float * result = NULL;
    if (ggml_gallocr_alloc_graph(galloc, gf)) {
        // twice: the second run may reuse the device graphs of the first
        enum ggml_status st1 = ggml_backend_graph_compute(backend, gf);
        enum ggml_status st2 = ggml_backend_graph_compute(backend, gf);
        if (st1 == GGML_STATUS_SUCCESS && st2 == GGML_STATUS_SUCCESS) {
            result = malloc(ggml_nbytes(out));
            ggml_backend_tensor_get(out, result, 0, ggml_nbytes(out));
            *n_out = ggml_nelements(out);
            if (out_tensor_ne != NULL) {
                *out_tensor_ne = NULL;
            }
        }
    }
    ggml_gallocr_free(galloc);
    ggml_free(ctx_g);
    ggml_backend_buffer_free(buf_w);
    ggml_free(ctx_w);
    return result;
}

struct test_devices {
    ggml_backend_reg_t regs[4];
    ggml_backend_dev_t devs[4];
};

// computes the case unsplit on devs[0] and split over devs[0..n_devs-1];
// returns the meta result (the caller frees it), NULL on failure
static float * compare_case(const struct meta_case * c, const struct test_devices * td, size_t n_devs,
                            struct split_table * table, int64_t * n_out) {
    fill_leaves(c, 1234u);
    ggml_backend_t plain = ggml_backend_dev_init(td->devs[0], NULL);
    int64_t n_plain = 0;
    float * want = run_case(c, plain, &n_plain, NULL);
    ggml_backend_free(plain);
    CHECK_MSG(want != NULL, "%s: unsplit run failed", c->name);

    ggml_backend_dev_t meta = ggml_backend_meta_device((ggml_backend_dev_t *) td->devs, n_devs, split_by_name, table);
    CHECK(meta != NULL);
    ggml_backend_t mb = ggml_backend_dev_init(meta, NULL);
    CHECK(mb != NULL);
    int64_t n_meta = 0;
    float * got = mb != NULL ? run_case(c, mb, &n_meta, NULL) : NULL;
    ggml_backend_free(mb);
    CHECK_MSG(got != NULL, "%s: meta run failed", c->name);
    if (want != NULL && got != NULL) {
        CHECK_EQ_INT(n_meta, n_plain);
        const double d = mt_max_abs_diff(got, want, n_plain);
        CHECK_MSG(d <= 1e-5, "%s: meta and unsplit differ by %g", c->name, d);
    }
    free(want);
    *n_out = n_meta;
    return got;
}

//
// the tests
//

static void test_axis_cases(const struct test_devices * td) {
    // rows of the weight (axis 1) split 5 + 6: the product is split along 0
    {
        const struct meta_case c = { "rows", 2, { "w", "x" }, { { 7, 11, 1, 1 }, { 7, 3, 1, 1 } }, build_mul_mat };
        struct split_table t = { .n = 0 };
        split_add(&t, "w", 1, 2, (const int64_t[]) { 5, 6 });
        int64_t n = 0;
        float * got = compare_case(&c, td, 2, &t, &n);
        if (got != NULL) {
            float ref[33];
            mt_ref_mul_mat(g_leaf_data[0], g_leaf_data[1], 7, 11, 3, ref);
            CHECK_MSG(mt_max_abs_diff(got, ref, 33) <= 1e-5, "rows: against the double product");
        }
        free(got);
    }
    // K split (axis 0 of both) 4 + 5: PARTIAL sums, added before the bias
    {
        const struct meta_case c = { "K split + bias", 3, { "w", "x", "b" }, { { 9, 5, 1, 1 }, { 9, 3, 1, 1 }, { 5, 1, 1, 1 } },
                                     build_mul_mat_add };
        struct split_table t = { .n = 0 };
        split_add(&t, "w", 0, 2, (const int64_t[]) { 4, 5 });
        split_add(&t, "x", 0, 2, (const int64_t[]) { 4, 5 });
        int64_t n = 0;
        float * got = compare_case(&c, td, 2, &t, &n);
        if (got != NULL) {
            float ref[15];
            mt_ref_mul_mat(g_leaf_data[0], g_leaf_data[1], 9, 5, 3, ref);
            for (int i = 0; i < 15; i++) {
                ref[i] += g_leaf_data[2][i % 5];
            }
            CHECK_MSG(mt_max_abs_diff(got, ref, 15) <= 1e-5, "K split + bias: against the double product");
        }
        free(got);
    }
    // K split over three devices (3 + 3 + 4), the PARTIAL product the output: get sums it
    {
        const struct meta_case c = { "K split, 3 devices", 2, { "w", "x" }, { { 10, 5, 1, 1 }, { 10, 3, 1, 1 } }, build_mul_mat };
        struct split_table t = { .n = 0 };
        split_add(&t, "w", 0, 3, (const int64_t[]) { 3, 3, 4 });
        split_add(&t, "x", 0, 3, (const int64_t[]) { 3, 3, 4 });
        int64_t n = 0;
        float * got = compare_case(&c, td, 3, &t, &n);
        if (got != NULL) {
            float ref[15];
            mt_ref_mul_mat(g_leaf_data[0], g_leaf_data[1], 10, 5, 3, ref);
            CHECK_MSG(mt_max_abs_diff(got, ref, 15) <= 1e-5, "K split, 3 devices: against the double product");
        }
        free(got);
    }
    // elementwise along axis 0 (6 + 7)
    {
        const struct meta_case c = { "axis 0", 2, { "a", "b" }, { { 13, 3, 1, 1 }, { 13, 3, 1, 1 } }, build_add_scale };
        struct split_table t = { .n = 0 };
        split_add(&t, "a", 0, 2, (const int64_t[]) { 6, 7 });
        split_add(&t, "b", 0, 2, (const int64_t[]) { 6, 7 });
        int64_t n = 0;
        free(compare_case(&c, td, 2, &t, &n));
    }
    // axis 2 (2 + 3), broadcasting a mirrored tensor
    {
        const struct meta_case c = { "axis 2", 2, { "a", "b" }, { { 3, 2, 5, 1 }, { 3, 2, 1, 1 } }, build_mul };
        struct split_table t = { .n = 0 };
        split_add(&t, "a", 2, 2, (const int64_t[]) { 2, 3 });
        int64_t n = 0;
        free(compare_case(&c, td, 2, &t, &n));
    }
    // attention split by heads, unfused: K of 2 KV heads (1 + 1), Q of 4 heads (2 + 2) (the
    // test devices have no SOFT_MAX: its rule is checked by test-mpi's -sm tensor runs)
    {
        const struct meta_case c = { "heads", 2, { "k", "q" }, { { 8, 5, 2, 1 }, { 8, 3, 4, 1 } }, build_mul_mat };
        struct split_table t = { .n = 0 };
        split_add(&t, "k", 2, 2, (const int64_t[]) { 1, 1 });
        split_add(&t, "q", 2, 2, (const int64_t[]) { 2, 2 });
        int64_t n = 0;
        free(compare_case(&c, td, 2, &t, &n));
    }
    // axis 3 (2 + 3), one device with nothing on a three-device meta
    {
        const struct meta_case c = { "axis 3", 2, { "a", "b" }, { { 2, 3, 3, 5 }, { 2, 3, 3, 5 } }, build_add_scale };
        struct split_table t = { .n = 0 };
        split_add(&t, "a", 3, 3, (const int64_t[]) { 2, 0, 3 });
        split_add(&t, "b", 3, 3, (const int64_t[]) { 2, 0, 3 });
        int64_t n = 0;
        free(compare_case(&c, td, 3, &t, &n));
    }
    // everything mirrored
    {
        const struct meta_case c = { "mirrored", 2, { "w", "x" }, { { 6, 4, 1, 1 }, { 6, 3, 1, 1 } }, build_mul_mat };
        struct split_table t = { .n = 0 };
        int64_t n = 0;
        free(compare_case(&c, td, 2, &t, &n));
    }
    // a view of a split product, and a transposed copy
    {
        const struct meta_case c = { "view", 2, { "w", "x" }, { { 5, 9, 1, 1 }, { 5, 3, 1, 1 } }, build_view };
        struct split_table t = { .n = 0 };
        split_add(&t, "w", 1, 2, (const int64_t[]) { 4, 5 });
        int64_t n = 0;
        free(compare_case(&c, td, 2, &t, &n));
        const struct meta_case c2 = { "transpose", 2, { "w", "x" }, { { 5, 9, 1, 1 }, { 5, 3, 1, 1 } }, build_transpose };
        free(compare_case(&c2, td, 2, &t, &n));
    }
    // tensor-parallel FFN: up rows split 3 + 4, down K split 3 + 4, residual after the reduction
    {
        const struct meta_case c = { "ffn", 3, { "up", "down", "x" }, { { 5, 7, 1, 1 }, { 7, 5, 1, 1 }, { 5, 3, 1, 1 } }, build_ffn };
        struct split_table t = { .n = 0 };
        split_add(&t, "up",   1, 2, (const int64_t[]) { 3, 4 });
        split_add(&t, "down", 0, 2, (const int64_t[]) { 3, 4 });
        int64_t n = 0;
        free(compare_case(&c, td, 2, &t, &n));
    }
}

// A fused weight of three matrices (Q: 6 rows, K and V: 3 rows each) split as
// two segments, the second repeated twice: device 0 gets Q rows 0-1, K row 0,
// V row 0; device 1 the rest. The product keeps each device's rows together.
static void test_segments(const struct test_devices * td) {
    const struct meta_case c = { "segments", 2, { "qkv", "x" }, { { 4, 12, 1, 1 }, { 4, 3, 1, 1 } }, build_mul_mat };
    struct split_table t = { .n = 0 };
    struct ggml_backend_meta_split_state ss;
    memset(&ss, 0, sizeof(ss));
    ss.axis       = GGML_BACKEND_SPLIT_AXIS_1;
    ss.n_segments = 2;
    ss.nr[0]      = 1;
    ss.nr[1]      = 2;
    ss.ne[0] = 2; ss.ne[1] = 4;   // segment 0 (Q): 2 + 4
    ss.ne[2] = 1; ss.ne[3] = 2;   // segment 1 (K, V): 1 + 2, twice
    t.names[0] = "qkv";
    t.ss[0]    = ss;
    t.n        = 1;

    int64_t n = 0;
    fill_leaves(&c, 99u);
    ggml_backend_dev_t meta = ggml_backend_meta_device((ggml_backend_dev_t *) td->devs, 2, split_by_name, &t);
    ggml_backend_t mb = ggml_backend_dev_init(meta, NULL);
    float * got = run_case(&c, mb, &n, NULL);
    ggml_backend_free(mb);
    CHECK(got != NULL);
    if (got == NULL) {
        return;
    }
    CHECK_EQ_INT(n, 36);
    // the rows of the fused weight in the order of the devices' slices
    static const int order[12] = { 0, 1, 6, 9,   2, 3, 4, 5, 7, 8, 10, 11 };
    float ref[36];
    mt_ref_mul_mat(g_leaf_data[0], g_leaf_data[1], 4, 12, 3, ref);
    double d = 0.0;
    for (int tok = 0; tok < 3; tok++) {
        for (int r = 0; r < 12; r++) {
            const double e = fabs((double) got[tok*12 + r] - (double) ref[tok*12 + order[r]]);
            d = e > d ? e : d;
        }
    }
    CHECK_MSG(d <= 1e-5, "segments: product rows off by %g", d);
    free(got);
}

// get/set of slices and partial sums, whole and by row ranges
static void test_get_set(const struct test_devices * td) {
    struct split_table t = { .n = 0 };
    split_add(&t, "a0", 0, 3, (const int64_t[]) { 4, 1, 2 });
    split_add(&t, "a1", 1, 3, (const int64_t[]) { 2, 0, 3 });
    split_add(&t, "a2", 2, 3, (const int64_t[]) { 1, 1, 1 });
    split_add(&t, "a3", 3, 3, (const int64_t[]) { 0, 2, 1 });
    struct ggml_backend_meta_split_state p;
    memset(&p, 0, sizeof(p));
    p.axis = GGML_BACKEND_SPLIT_AXIS_PARTIAL;
    p.nr[0] = 1;
    p.n_segments = 1;
    t.names[t.n] = "p";
    t.ss[t.n++]  = p;

    ggml_backend_dev_t meta = ggml_backend_meta_device((ggml_backend_dev_t *) td->devs, 3, split_by_name, &t);
    CHECK(meta != NULL);
    const struct ggml_init_params params = { 8*ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    const char * names[6] = { "a0", "a1", "a2", "a3", "m", "p" };
    struct ggml_tensor * ts[6];
    for (int i = 0; i < 6; i++) {
        ts[i] = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 7, 5, 3, 3);
        ggml_set_name(ts[i], names[i]);
    }
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_dev_buffer_type(meta));
    CHECK(buf != NULL);
    CHECK(ggml_backend_buffer_is_meta(buf));
    const size_t nbytes = ggml_nbytes(ts[0]);
    float * in  = malloc(nbytes);
    float * out = malloc(nbytes);
    for (size_t k = 0; k < nbytes/sizeof(float); k++) {
        in[k] = (float) k * 0.25f - 7.0f;
    }
    for (int i = 0; i < 6; i++) {
        ggml_backend_tensor_set(ts[i], in, 0, nbytes);
        memset(out, 0, nbytes);
        ggml_backend_tensor_get(ts[i], out, 0, nbytes);
        if (i < 5) {
            CHECK_MSG(memcmp(in, out, nbytes) == 0, "%s: round trip", names[i]);
        } else {
            CHECK_MSG(mt_max_abs_diff(in, out, (int64_t) (nbytes/sizeof(float))) <= 1e-4, "partial: set/3 three times, summed");
        }
    }
    // a range of whole blocks above the split: the last of the outermost dimension
    const size_t last = ts[0]->nb[3];
    memset(out, 0, nbytes);
    ggml_backend_tensor_get(ts[0], out, 2*last, last);
    CHECK(memcmp(out, in + 2*last/sizeof(float), last) == 0);
    ggml_backend_tensor_set(ts[1], in, last, last);
    ggml_backend_tensor_get(ts[1], out, 0, nbytes);
    CHECK(memcmp(out + last/sizeof(float), in, last) == 0);
    CHECK(memcmp(out, in, last) == 0);

    // memset: a whole split tensor, a range of a mirrored one, a partial sum to zero
    ggml_backend_tensor_memset(ts[2], 0, 0, nbytes);
    ggml_backend_tensor_get(ts[2], out, 0, nbytes);
    bool zero = true;
    for (size_t k = 0; k < nbytes/sizeof(float); k++) {
        zero = zero && out[k] == 0.0f;
    }
    CHECK(zero);
    ggml_backend_tensor_set(ts[4], in, 0, nbytes);
    ggml_backend_tensor_memset(ts[4], 0, sizeof(float), sizeof(float));
    ggml_backend_tensor_get(ts[4], out, 0, nbytes);
    CHECK(out[0] == in[0] && out[1] == 0.0f && out[2] == in[2]);
    ggml_backend_tensor_memset(ts[5], 0, 0, nbytes);
    ggml_backend_tensor_get(ts[5], out, 0, nbytes);
    CHECK(out[0] == 0.0f && out[nbytes/sizeof(float) - 1] == 0.0f);
    CHECK_ABORTS("memset of 'a0'", ggml_backend_tensor_memset(ts[0], 0, 0, sizeof(float)));

    // cutting a split block aborts with a message
    CHECK_ABORTS("cuts a block", ggml_backend_tensor_get(ts[0], out, 0, sizeof(float)));

    free(in);
    free(out);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

static void test_device(const struct test_devices * td) {
    struct split_table t = { .n = 0 };
    ggml_backend_dev_t meta = ggml_backend_meta_device((ggml_backend_dev_t *) td->devs, 2, split_by_name, &t);
    CHECK(meta != NULL);
    CHECK(ggml_backend_meta_device((ggml_backend_dev_t *) td->devs, 2, split_by_name, &t) == meta);
    CHECK(ggml_backend_meta_device((ggml_backend_dev_t *) td->devs, 3, split_by_name, &t) != meta);
    CHECK(ggml_backend_dev_type(meta) == GGML_BACKEND_DEVICE_TYPE_META);
    CHECK(strcmp(ggml_backend_dev_name(meta), "Meta(MA,MB)") == 0);
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(meta);
    CHECK(ggml_backend_buft_is_meta(buft));
    CHECK(strcmp(ggml_backend_buft_name(buft), "Meta(MA,MB)") == 0);
    CHECK(ggml_backend_buft_get_device(buft) == meta);
    CHECK(ggml_backend_dev_supports_buft(meta, buft));
    CHECK(!ggml_backend_dev_supports_buft(meta, ggml_backend_dev_buffer_type(td->devs[0])));
    CHECK(!ggml_backend_buft_is_host(buft));
    size_t free_mem = 0, total = 0, free0 = 0, total0 = 0;
    ggml_backend_dev_memory(meta, &free_mem, &total);
    ggml_backend_dev_memory(td->devs[0], &free0, &total0);
    CHECK_EQ_INT(total, 2*total0);

    ggml_backend_t mb = ggml_backend_dev_init(meta, NULL);
    CHECK(ggml_backend_is_meta(mb));
    CHECK_EQ_INT(ggml_backend_meta_n_backends(mb), 2);
    CHECK(ggml_backend_get_device(ggml_backend_meta_simple_backend(mb, 1)) == td->devs[1]);
    ggml_backend_free(mb);

    // refused arguments: one error line and NULL
    CHECK(ggml_backend_meta_device((ggml_backend_dev_t *) td->devs, 2, NULL, NULL) == NULL);
    CHECK(ggml_backend_meta_device((ggml_backend_dev_t *) td->devs, 0, split_by_name, &t) == NULL);
    ggml_backend_dev_t nested[2] = { meta, td->devs[0] };
    CHECK(ggml_backend_meta_device(nested, 2, split_by_name, &t) == NULL);
}

// a simple device that cannot compute MUL_MAT: the meta device does not
// support it either, and computing it anyway fails with a status
static void test_refusing_device(const struct test_devices * td) {
    struct split_table t = { .n = 0 };
    split_add(&t, "w", 1, 2, (const int64_t[]) { 5, 6 });
    ggml_backend_dev_t devs[2] = { td->devs[0], td->devs[3] };
    ggml_backend_dev_t meta = ggml_backend_meta_device(devs, 2, split_by_name, &t);
    CHECK(meta != NULL);

    const struct ggml_init_params params = { 8*ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 11);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 3);
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    struct ggml_tensor * s = ggml_scale(ctx, x, 2.0f);
    CHECK(!ggml_backend_dev_supports_op(meta, y));
    CHECK(ggml_backend_dev_supports_op(meta, s));
    CHECK(ggml_backend_dev_supports_op(td->devs[0], y));
    ggml_free(ctx);

    const struct meta_case c = { "refused", 2, { "w", "x" }, { { 7, 11, 1, 1 }, { 7, 3, 1, 1 } }, build_mul_mat };
    fill_leaves(&c, 5u);
    ggml_backend_t mb = ggml_backend_dev_init(meta, NULL);
    int64_t n = 0;
    float * got = run_case(&c, mb, &n, NULL);
    CHECK(got == NULL);
    free(got);
    ggml_backend_free(mb);
}

// a split that does not add up to the tensor aborts with the tensor's name
static void test_bad_split(const struct test_devices * td) {
    struct split_table t = { .n = 0 };
    split_add(&t, "w", 1, 2, (const int64_t[]) { 5, 5 });
    ggml_backend_dev_t meta = ggml_backend_meta_device((ggml_backend_dev_t *) td->devs, 2, split_by_name, &t);
    const struct ggml_init_params params = { 2*ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 11);
    ggml_set_name(w, "w");
    CHECK_ABORTS("split of 'w' along 1 covers 10 of 11", ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_dev_buffer_type(meta)));
    ggml_free(ctx);
}

int main(void) {
    // three test devices with memory of their own, and one that refuses MUL_MAT
    struct test_devices td;
    static const char * names[4] = { "MA", "MB", "MC", "MR" };
    static const enum ggml_op ops_no_mul_mat[] = {
        GGML_OP_NONE, GGML_OP_RESHAPE, GGML_OP_VIEW, GGML_OP_PERMUTE, GGML_OP_TRANSPOSE,
        GGML_OP_ADD, GGML_OP_MUL, GGML_OP_SCALE, GGML_OP_CONT, GGML_OP_CPY,
    };
    for (int i = 0; i < 4; i++) {
        struct test_backend_config config = {
            .name        = names[i],
            .description = "meta test device",
            .type        = GGML_BACKEND_DEVICE_TYPE_ACCEL,
            .fail_op     = GGML_OP_NONE,
        };
        if (i == 3) {
            config.ops     = ops_no_mul_mat;
            config.n_ops   = sizeof(ops_no_mul_mat)/sizeof(ops_no_mul_mat[0]);
            config.fail_op = GGML_OP_MUL_MAT;
        }
        td.regs[i] = test_backend_reg_new(&config);
        td.devs[i] = test_backend_device(td.regs[i]);
    }

    test_device(&td);
    test_axis_cases(&td);
    test_segments(&td);
    test_get_set(&td);
    test_refusing_device(&td);
    test_bad_split(&td);

    return TEST_RESULT();
}
