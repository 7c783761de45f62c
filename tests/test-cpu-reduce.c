// test-cpu-reduce: the CPU kernels of SUM, SUM_ROWS, MEAN, ARGMAX, COUNT_EQUAL,
// ARGSORT and TOP_K against naive double-precision references, on odd shapes,
// long rows, non-contiguous inputs, every supported type, both code paths and
// 1/2/3 threads (identical bytes).

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "testing.h"
#include "cpu-testing.h"
#include "cpu-sweep.h"

#include <stdlib.h>

static const int64_t k_shapes[][4] = {
    {      1,    1, 1, 1 },
    {      7,    3, 2, 2 },
    {     33,    5, 3, 1 },
    {    257,    2, 1, 3 },
    {     16,  700, 1, 1 }, // more rows than SUM's row groups
    { 100000,    2, 1, 1 }, // long rows: sums must not lose precision
};
#define N_SHAPES ((int)(sizeof(k_shapes) / sizeof(k_shapes[0])))

static int64_t nelements(const int64_t ne[4]) {
    return ne[0] * ne[1] * ne[2] * ne[3];
}

//
// SUM, SUM_ROWS, MEAN
//

struct sum_case {
    enum ggml_op      op;
    enum ggml_type    type;
    const int64_t   * ne;
    enum sweep_layout layout;
    double            lo;
    struct ggml_tensor * src;
    double *          ref;       // per row, then the total and the total of |x| (computed once)
};

static struct ggml_tensor * build_sum(struct ggml_context * ctx, void * user) {
    struct sum_case * c = (struct sum_case *) user;
    c->src = sweep_new_source(ctx, c->type, c->ne, c->layout);
    tt_fill_uniform(c->src, c->lo, 1.0, 11);
    switch (c->op) {
        case GGML_OP_SUM:      return ggml_sum(ctx, c->src);
        case GGML_OP_SUM_ROWS: return ggml_sum_rows(ctx, c->src);
        default:               return ggml_mean(ctx, c->src);
    }
}

static const double * sum_case_ref(struct sum_case * c) {
    if (c->ref != NULL) {
        return c->ref;
    }
    const struct ggml_tensor * a = c->src;
    const int64_t nr = a->ne[1] * a->ne[2] * a->ne[3];
    c->ref = (double *) calloc((size_t) nr + 2, sizeof(double));
    double total = 0.0, total_abs = 0.0;
    int64_t r = 0;
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < a->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < a->ne[1]; i1++, r++) {
        for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
            const double v = tt_get(a, i0, i1, i2, i3);
            c->ref[r] += v;
            total_abs += fabs(v);
        }
        total += c->ref[r];
        if (c->op == GGML_OP_MEAN) {
            c->ref[r] /= (double) a->ne[0];
        }
    }
    c->ref[nr] = total;
    c->ref[nr + 1] = total_abs;
    return c->ref;
}

static void check_sum(const struct ggml_tensor * out, void * user, const char * label) {
    struct sum_case * c = (struct sum_case *) user;
    const int64_t nr = c->ne[1] * c->ne[2] * c->ne[3];
    const double * ref = sum_case_ref(c);
    const double total_abs = ref[nr + 1];
    // the only rounding allowed is the final one to the output type
    const double rtol = out->type == GGML_TYPE_F32 ? 2e-7 : out->type == GGML_TYPE_F16 ? 1e-3 : 8e-3;
    double err;
    if (c->op == GGML_OP_SUM) {
        CHECK_MSG(ggml_nelements(out) == 1 && out->type == c->type, "%s: shape/type", label);
        err = sweep_max_err(out, &ref[nr], 1e-12 * total_abs, rtol);
    } else {
        err = sweep_max_err(out, ref, 1e-12 * total_abs, rtol);
    }
    CHECK_MSG(err <= 1.0, "%s %s %s %s [%lld,%lld,%lld,%lld]: error %.3g of tolerance", ggml_op_name(c->op),
              ggml_type_name(c->type), sweep_layout_name(c->layout), label, (long long) c->ne[0],
              (long long) c->ne[1], (long long) c->ne[2], (long long) c->ne[3], err);
}

static void test_sums(void) {
    const enum ggml_op ops[] = { GGML_OP_SUM, GGML_OP_SUM_ROWS, GGML_OP_MEAN };
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    for (int o = 0; o < 3; o++)
    for (int t = 0; t < 3; t++)
    for (int s = 0; s < N_SHAPES; s++)
    for (int l = SWEEP_CONTIGUOUS; l <= SWEEP_OFFSET; l++) {
        const int64_t * ne = k_shapes[s];
        if (l != SWEEP_CONTIGUOUS && nelements(ne) > 5000) {
            continue; // strided long rows: slow, and covered by the short shapes
        }
        // long rows of positive values show the accumulation precision (not in F16:
        // their sum would overflow); others cancel
        struct sum_case c = {
            .op = ops[o], .type = types[t], .ne = ne, .layout = (enum sweep_layout) l,
            .lo = ne[0] >= 100000 && types[t] != GGML_TYPE_F16 ? 0.0 : -1.0, .src = NULL, .ref = NULL,
        };
        sweep_run(ggml_op_name(ops[o]), nelements(ne), build_sum, check_sum, &c);
        free(c.ref);
    }
}

//
// ARGMAX
//

struct argmax_case {
    int64_t           n;
    int64_t           rows;
    enum sweep_layout layout;
    int               fill; // 0 uniform, 1 few distinct values (ties), 2 some rows all -inf
    struct ggml_tensor * src;
    int64_t *         ref;  // expected index per row (computed once)
};

static struct ggml_tensor * build_argmax(struct ggml_context * ctx, void * user) {
    struct argmax_case * c = (struct argmax_case *) user;
    const int64_t ne[4] = { c->n, c->rows, 1, 1 };
    c->src = sweep_new_source(ctx, GGML_TYPE_F32, ne, c->layout);
    if (c->fill == 0) {
        tt_fill_uniform(c->src, -5.0, 5.0, 3);
    } else {
        tt_fill_int(c->src, -3, 3, 4);
    }
    if (c->fill == 2) {
        for (int64_t i1 = 0; i1 < c->rows; i1 += 2) {
            for (int64_t i0 = 0; i0 < c->n; i0++) {
                ggml_set_f32_nd(c->src, (int) i0, (int) i1, 0, 0, -INFINITY);
            }
        }
    }
    return ggml_argmax(ctx, c->src);
}

static void check_argmax(const struct ggml_tensor * out, void * user, const char * label) {
    struct argmax_case * c = (struct argmax_case *) user;
    if (c->ref == NULL) {
        c->ref = (int64_t *) malloc(sizeof(int64_t) * (size_t) c->rows);
        for (int64_t i1 = 0; i1 < c->rows; i1++) {
            int64_t best = 0;
            for (int64_t i0 = 1; i0 < c->n; i0++) {
                if (tt_get(c->src, i0, i1, 0, 0) > tt_get(c->src, best, i1, 0, 0)) {
                    best = i0;
                }
            }
            c->ref[i1] = best;
        }
    }
    int bad = 0;
    for (int64_t i1 = 0; i1 < c->rows; i1++) {
        bad += tt_get(out, i1, 0, 0, 0) != (double) c->ref[i1];
    }
    CHECK_MSG(bad == 0, "ARGMAX n=%lld fill %d %s %s: %d wrong rows", (long long) c->n, c->fill,
              sweep_layout_name(c->layout), label, bad);
}

static void test_argmax(void) {
    const int64_t ns[] = { 1, 7, 33, 257, 100000 };
    for (int i = 0; i < 5; i++)
    for (int fill = 0; fill < 3; fill++)
    for (int l = SWEEP_CONTIGUOUS; l <= SWEEP_OFFSET; l++) {
        if (l != SWEEP_CONTIGUOUS && ns[i] > 5000) {
            continue;
        }
        struct argmax_case c = { .n = ns[i], .rows = ns[i] > 5000 ? 3 : 9, .layout = (enum sweep_layout) l,
                                 .fill = fill, .src = NULL, .ref = NULL };
        sweep_run("ARGMAX", c.n * c.rows * 2, build_argmax, check_argmax, &c);
        free(c.ref);
    }
}

//
// COUNT_EQUAL
//

struct count_case {
    const int64_t   * ne;
    enum sweep_layout layout;
    struct ggml_tensor * a;
    struct ggml_tensor * b;
};

static struct ggml_tensor * build_count(struct ggml_context * ctx, void * user) {
    struct count_case * c = (struct count_case *) user;
    c->a = sweep_new_source(ctx, GGML_TYPE_I32, c->ne, c->layout);
    c->b = sweep_new_source(ctx, GGML_TYPE_I32, c->ne, SWEEP_CONTIGUOUS);
    tt_fill_int(c->a, 0, 3, 21);
    tt_fill_int(c->b, 0, 3, 22);
    return ggml_count_equal(ctx, c->a, c->b);
}

static void check_count(const struct ggml_tensor * out, void * user, const char * label) {
    const struct count_case * c = (const struct count_case *) user;
    int64_t n = 0;
    for (int64_t i3 = 0; i3 < c->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < c->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < c->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < c->ne[0]; i0++) {
        n += tt_get(c->a, i0, i1, i2, i3) == tt_get(c->b, i0, i1, i2, i3);
    }
    CHECK_MSG(out->type == GGML_TYPE_I64 && *(const int64_t *) out->data == n, "COUNT_EQUAL %s %s: %lld, expected %lld",
              sweep_layout_name(c->layout), label, (long long) *(const int64_t *) out->data, (long long) n);
}

static void test_count_equal(void) {
    for (int s = 0; s < N_SHAPES; s++)
    for (int l = SWEEP_CONTIGUOUS; l <= SWEEP_OFFSET; l++) {
        if (l == SWEEP_TRANSPOSED && nelements(k_shapes[s]) > 5000) {
            continue;
        }
        struct count_case c = { .ne = k_shapes[s], .layout = (enum sweep_layout) l, .a = NULL, .b = NULL };
        sweep_run("COUNT_EQUAL", 3 * nelements(k_shapes[s]), build_count, check_count, &c);
    }
}

//
// ARGSORT and TOP_K: the reference is a stable sort of (value, index)
//

struct keyed {
    double  v;
    int32_t i;
};

static int cmp_keyed(const void * pa, const void * pb) {
    const struct keyed * a = (const struct keyed *) pa;
    const struct keyed * b = (const struct keyed *) pb;
    if (a->v != b->v) {
        return a->v < b->v ? -1 : 1;
    }
    return a->i < b->i ? -1 : a->i > b->i;
}

// indices of row (i1, i2, i3) of a sorted ascending or descending, ties by index
static void ref_sorted_indices(const struct ggml_tensor * a, int64_t i1, int64_t i2, int64_t i3, bool descending,
                               struct keyed * tmp) {
    const int64_t n = a->ne[0];
    for (int64_t i = 0; i < n; i++) {
        const double v = tt_get(a, i, i1, i2, i3);
        tmp[i].v = descending ? -v : v;
        tmp[i].i = (int32_t) i;
    }
    qsort(tmp, (size_t) n, sizeof(*tmp), cmp_keyed);
}

struct sort_case {
    const int64_t   * ne;
    enum sweep_layout layout;
    int               fill;   // 0 uniform, 1 small integers (ties), 2 with +-0 and +-inf, 3 four values
    bool              top_k;
    bool              descending;
    int64_t           k;
    struct ggml_tensor * src;
    int32_t *         ref;
};

static struct ggml_tensor * build_sort(struct ggml_context * ctx, void * user) {
    struct sort_case * c = (struct sort_case *) user;
    c->src = sweep_new_source(ctx, GGML_TYPE_F32, c->ne, c->layout);
    if (c->fill == 0) {
        tt_fill_uniform(c->src, -100.0, 100.0, 31);
    } else {
        tt_fill_int(c->src, -4, 4, 32);
    }
    if (c->fill == 3) {
        // 1, 1.25, 1.5, 1.75: the values differ in one byte only (one radix pass)
        for (int64_t i3 = 0; i3 < c->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < c->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < c->ne[1]; i1++)
        for (int64_t i0 = 0; i0 < c->ne[0]; i0++) {
            const double v = tt_get(c->src, i0, i1, i2, i3);
            ggml_set_f32_nd(c->src, (int) i0, (int) i1, (int) i2, (int) i3, (float)(1.0 + 0.25 * fabs(fmod(v, 4.0))));
        }
    }
    if (c->fill == 2) {
        const float specials[] = { -0.0f, 0.0f, INFINITY, -INFINITY };
        uint64_t state = 99;
        for (int64_t i3 = 0; i3 < c->ne[3]; i3++)
        for (int64_t i2 = 0; i2 < c->ne[2]; i2++)
        for (int64_t i1 = 0; i1 < c->ne[1]; i1++)
        for (int64_t i0 = 0; i0 < c->ne[0]; i0++) {
            if (tt_rand_u64(&state) % 3 == 0) {
                ggml_set_f32_nd(c->src, (int) i0, (int) i1, (int) i2, (int) i3, specials[tt_rand_u64(&state) % 4]);
            }
        }
    }
    if (c->top_k) {
        return ggml_top_k(ctx, c->src, (int) c->k);
    }
    return ggml_argsort(ctx, c->src, c->descending ? GGML_SORT_ORDER_DESC : GGML_SORT_ORDER_ASC);
}

// the expected indices, computed once per case (every run fills the same values)
static const int32_t * sort_case_ref(struct sort_case * c) {
    if (c->ref != NULL) {
        return c->ref;
    }
    const int64_t n = c->ne[0];
    const int64_t k = c->top_k ? c->k : n;
    struct keyed * tmp = (struct keyed *) malloc(sizeof(struct keyed) * (size_t) n);
    c->ref = (int32_t *) malloc(sizeof(int32_t) * (size_t)(k * c->ne[1] * c->ne[2] * c->ne[3]));
    int32_t * p = c->ref;
    for (int64_t i3 = 0; i3 < c->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < c->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < c->ne[1]; i1++) {
        ref_sorted_indices(c->src, i1, i2, i3, c->top_k || c->descending, tmp);
        for (int64_t i = 0; i < k; i++) {
            *p++ = tmp[i].i;
        }
    }
    free(tmp);
    return c->ref;
}

static void check_sort(const struct ggml_tensor * out, void * user, const char * label) {
    struct sort_case * c = (struct sort_case *) user;
    const int32_t * ref = sort_case_ref(c);
    const int64_t k = c->top_k ? c->k : c->ne[0];
    int64_t bad = 0;
    for (int64_t i3 = 0; i3 < c->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < c->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < c->ne[1]; i1++) {
        for (int64_t i = 0; i < k; i++) {
            bad += tt_get(out, i, i1, i2, i3) != (double) *ref++;
        }
    }
    CHECK_MSG(bad == 0, "%s%s k=%lld n=%lld fill %d %s %s: %lld wrong indices", c->top_k ? "TOP_K" : "ARGSORT",
              c->top_k ? "" : (c->descending ? " desc" : " asc"), (long long) k, (long long) c->ne[0], c->fill,
              sweep_layout_name(c->layout), label, (long long) bad);
}

static void sort_sweep(const int64_t ne[4], enum sweep_layout layout, int fill, bool top_k, bool descending, int64_t k) {
    struct sort_case c = { .ne = ne, .layout = layout, .fill = fill, .top_k = top_k, .descending = descending,
                           .k = k, .src = NULL, .ref = NULL };
    sweep_run(top_k ? "TOP_K" : "ARGSORT", 3 * nelements(ne), build_sort, check_sort, &c);
    free(c.ref);
}

static void test_sorting(void) {
    static const int64_t shapes[][4] = {
        { 1, 3, 1, 1 }, { 2, 5, 1, 1 }, { 7, 3, 2, 2 }, { 33, 4, 1, 2 }, { 257, 3, 2, 1 }, { 5000, 2, 1, 1 },
        { 40000, 1, 1, 1 },
    };
    for (int s = 0; s < 7; s++)
    for (int fill = 0; fill < 4; fill++)
    for (int l = SWEEP_CONTIGUOUS; l <= SWEEP_OFFSET; l++) {
        const int64_t * ne = shapes[s];
        // strided inputs with the tie-rich fill only
        if (l != SWEEP_CONTIGUOUS && (fill != 1 || (l == SWEEP_TRANSPOSED && nelements(ne) > 5000))) {
            continue;
        }
        sort_sweep(ne, (enum sweep_layout) l, fill, false, false, 0);
        sort_sweep(ne, (enum sweep_layout) l, fill, false, true, 0);
        // k = 1, a few (the heap path for long rows), half and all (the sort path)
        const int64_t ks[] = { 1, ne[0] < 3 ? ne[0] : 3, ne[0] < 2 ? 1 : ne[0] / 2, ne[0] };
        for (int j = 0; j < 4; j++) {
            sort_sweep(ne, (enum sweep_layout) l, fill, true, true, ks[j]);
        }
    }
}

//
// supports_op: what the CPU answers must match what the kernels implement
//

static void test_supports(void) {
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    struct ggml_init_params ip = { 1024 * 1024, NULL, true };
    struct ggml_context * ctx = ggml_init(ip);

    struct ggml_tensor * f32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 3);
    struct ggml_tensor * f16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 3);
    struct ggml_tensor * bf16 = ggml_new_tensor_2d(ctx, GGML_TYPE_BF16, 8, 3);
    struct ggml_tensor * i32 = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 8, 3);
    struct ggml_tensor * i16 = ggml_new_tensor_2d(ctx, GGML_TYPE_I16, 8, 3);

    CHECK(ggml_backend_dev_supports_op(dev, ggml_sum(ctx, f32)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_sum(ctx, f16)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_sum(ctx, bf16)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_sum(ctx, i32)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_sum(ctx, i16)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_sum_rows(ctx, bf16)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_sum_rows(ctx, i32)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_mean(ctx, f16)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_argmax(ctx, f32)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_argmax(ctx, f16)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_count_equal(ctx, i32, i32)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_count_equal(ctx, f32, f32)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_argsort(ctx, f32, GGML_SORT_ORDER_ASC)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_argsort(ctx, f16, GGML_SORT_ORDER_ASC)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_top_k(ctx, f32, 3)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_top_k(ctx, i32, 3)));

    ggml_free(ctx);
}

int main(void) {
    test_sums();
    test_argmax();
    test_count_equal();
    test_sorting();
    test_supports();
    sweep_end();
    return TEST_RESULT();
}
