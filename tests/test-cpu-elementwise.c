// test-cpu-elementwise: the CPU kernels of the elementwise ops (ADD SUB MUL DIV
// ADD1 ACC, SQR SQRT LOG SIN COS SCALE CLAMP LEAKY_RELU, UNARY, GLU) against
// double-precision references computed from the input values: the functions
// of the library ggml-ref (ref-ops.h), which the reference evaluator of
// test-backend-ops uses too. The ops, their input ranges and error classes
// are the lists of ggml-op-list.h.
//
// Cases are grouped in batches, one graph each; every batch runs on the
// vector path and on the scalar path (use_ref), each with 1, 2 and 3 threads,
// and the three results of a path must be bit-identical. Covered: every
// combination of F32/F16/BF16 inputs and outputs, broadcasting patterns,
// transposed / permuted / padded-view inputs, in-place nodes, odd and long
// rows (cut into column blocks between threads), quantized ADD, special
// values (NaN, inf, signed zeros), rounding ties of F16/BF16 outputs, dense
// accuracy sweeps of the approximated functions, and supports_op.
//
// Tolerances, with ulp(T, r) the spacing of type T's values at r:
// - exactly rounded ops (+ - * /, sqr, sqrt, scale, abs, relu, ...): the f32
//   result is the exact value rounded once, so 0.5 ulp(f32); an F16/BF16
//   output is that f32 rounded again: + 0.5 ulp(out).
// - hardswish, hardsigmoid: (x + 3) / 6 rounds twice, times x once more: 2 ulp.
// - exp-based and libm functions: k ulp(f32) (k = 4, 6 for gelu_erf, 2 for
//   libm's log/sin/cos) of the result, plus k times the change of the exact
//   function when the input moves by one f32 ulp (a function that magnifies
//   its input's relative error, like exp(-2u(x)) for large |x|, magnifies the
//   rounding inside the computation alike), plus 2^-122 for results that
//   pass through subnormal intermediates, plus 0.5 ulp(out) for F16/BF16.
//   The measured maxima (printed by the sweeps) are below 3.3 of these units.

#define _POSIX_C_SOURCE 200809L

#include "cpu-testing.h"
#include "death-test.h"
#include "ggml-backend.h"
#include "ggml-op-list.h"
#include "ref-ops.h"

#include <stdarg.h>
#include <stdio.h>

static const enum ggml_type k_float_types[3] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };

static const enum ggml_type k_quant_types[6] = {
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1,
};

//
// numbers
//

// spacing of type t's values at |r| (subnormal spacing below the normal range)
static double ulp_of(enum ggml_type t, double r) {
    const int p    = t == GGML_TYPE_F32 ? 24 : t == GGML_TYPE_F16 ? 11 : 8;
    const int emin = t == GGML_TYPE_F16 ? -14 : -126;
    int e = emin;
    if (r != 0.0 && isfinite(r)) {
        frexp(fabs(r), &e);
        e = e - 1 > emin ? e - 1 : emin;
    }
    return ldexp(1.0, e - p + 1);
}

// rounding of an f32 result into the output type
static double out_rounding(enum ggml_type out, double want) {
    return out == GGML_TYPE_F32 ? 0.0 : 0.5 * ulp_of(out, want);
}

// tolerance of an exactly rounded f32 operation stored as `out`
static double tol_exact(enum ggml_type out, double want) {
    return 1.0001 * (0.5 * ulp_of(GGML_TYPE_F32, want) + out_rounding(out, want));
}

static bool value_ok(double got, double want, double tol) {
    if (isnan(want)) {
        return isnan(got);
    }
    if (isinf(want)) {
        return got == want;
    }
    return !isnan(got) && !isinf(got) && fabs(got - want) <= tol;
}

//
// A batch: a context holding many independent cases (inputs and one output
// node each) in one graph, computed on both paths with 1, 2 and 3 threads.
// The context's memory is restored before each computation, so in-place ops
// start from the same inputs every time. Each case's expected values are
// computed when it is added, before anything runs.
//

struct eout {
    char                 name[160];
    struct ggml_tensor * out;
    int64_t              n;
    double *             want;     // in the order i0 fastest over out's shape
    double *             tol;      // absolute
    unsigned char *      bytes;    // when set: the exact bytes out must hold instead
    unsigned char *      first;    // out's bytes from 1 thread, on the current path
};

struct ebatch {
    struct ggml_context * ctx;
    struct ggml_cgraph *  gf;
    struct eout *         outs;
    int                   n_outs;
    int                   cap;
    void *                snapshot;
    size_t                snapshot_size;
};

static struct ggml_context * batch_begin(struct ebatch * b, size_t mib) {
    memset(b, 0, sizeof(*b));
    b->ctx = tt_ctx_new(mib);
    return b->ctx;
}

static struct eout * batch_add(struct ebatch * b, struct ggml_tensor * out, const char * fmt, ...) {
    if (b->n_outs == b->cap) {
        b->cap  = b->cap ? 2 * b->cap : 64;
        b->outs = (struct eout *) realloc(b->outs, sizeof(struct eout) * (size_t) b->cap);
    }
    struct eout * o = &b->outs[b->n_outs++];
    memset(o, 0, sizeof(*o));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->name, sizeof(o->name), fmt, ap);
    va_end(ap);
    o->out  = out;
    o->n    = ggml_nelements(out);
    o->want = (double *) calloc((size_t) o->n, sizeof(double));
    o->tol  = (double *) calloc((size_t) o->n, sizeof(double));
    CHECK_MSG(ggml_backend_dev_supports_op(ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0), out),
              "%s: not supported", o->name);
    return o;
}

// one pool per thread count, kept for the whole test
static struct ggml_threadpool * g_pools[4];

static void pools_init(void) {
    for (int n = 1; n <= 3; n++) {
        struct ggml_threadpool_params p = ggml_threadpool_params_default(n);
        g_pools[n] = ggml_threadpool_new(&p);
        CHECK(g_pools[n] != NULL);
    }
}

static void pools_free(void) {
    for (int n = 1; n <= 3; n++) {
        ggml_threadpool_free(g_pools[n]);
    }
}

static enum ggml_status graph_compute(struct ggml_cgraph * gf, int nth, bool ref) {
    struct ggml_cplan plan = ggml_graph_plan(gf, nth, g_pools[nth]);
    plan.use_ref = ref;
    uint8_t * work = NULL;
    if (plan.work_size > 0) {
        work = (uint8_t *) malloc(plan.work_size);
        plan.work_data = work;
    }
    const enum ggml_status st = ggml_graph_compute(gf, &plan);
    free(work);
    return st;
}

// after the last batch_add: the graph and the snapshot of the inputs
static void batch_seal(struct ebatch * b) {
    if (b->gf != NULL) {
        return;
    }
    b->gf = ggml_new_graph_custom(b->ctx, 8 * (size_t) b->n_outs + 64, false);
    for (int i = 0; i < b->n_outs; i++) {
        ggml_build_forward_expand(b->gf, b->outs[i].out);
    }
    b->snapshot_size = ggml_used_mem(b->ctx);
    b->snapshot = malloc(b->snapshot_size);
    memcpy(b->snapshot, ggml_get_mem_buffer(b->ctx), b->snapshot_size);
}

static enum ggml_status batch_compute(struct ebatch * b, int nth, bool ref) {
    batch_seal(b);
    memcpy(ggml_get_mem_buffer(b->ctx), b->snapshot, b->snapshot_size);
    return graph_compute(b->gf, nth, ref);
}

// the largest error of o relative to its tolerance (> 1 fails); reports the first failure
static double eout_check(const struct eout * o, const char * how) {
    const struct ggml_tensor * t = o->out;
    if (o->bytes != NULL) {
        const bool same = memcmp(t->data, o->bytes, ggml_nbytes(t)) == 0;
        if (!same) {
            fprintf(stderr, "%s [%s]: bytes differ from the expected ones\n", o->name, how);
        }
        return same ? 0.0 : INFINITY;
    }
    double worst = 0.0;
    bool reported = false;
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++, k++) {
        const double got = tt_get(t, i0, i1, i2, i3);
        double e = 0.0;
        if (!value_ok(got, o->want[k], o->tol[k])) {
            e = INFINITY;
            if (o->tol[k] > 0 && isfinite(got) && isfinite(o->want[k])) {
                e = fabs(got - o->want[k]) / o->tol[k];
            }
            if (!reported) {
                fprintf(stderr, "%s [%s]: element (%lld,%lld,%lld,%lld) = %.9g, want %.9g (tol %.3g)\n", o->name, how,
                        (long long) i0, (long long) i1, (long long) i2, (long long) i3, got, o->want[k], o->tol[k]);
                reported = true;
            }
        } else if (o->tol[k] > 0 && isfinite(o->want[k])) {
            e = fabs(got - o->want[k]) / o->tol[k];
        }
        worst = e > worst ? e : worst;
    }
    return worst;
}

// computes on both paths with 1, 2, 3 threads and checks every output
static void batch_run(struct ebatch * b) {
    for (int i = 0; i < b->n_outs; i++) {
        b->outs[i].first = (unsigned char *) malloc(ggml_nbytes(b->outs[i].out));
    }
    for (int r = 0; r < 2; r++) {
        const bool ref = r == 1;
        for (int nth = 1; nth <= 3; nth++) {
            char how[32];
            snprintf(how, sizeof(how), "%s, %d threads", ref ? "scalar" : "vector", nth);
            const enum ggml_status st = batch_compute(b, nth, ref);
            CHECK_MSG(st == GGML_STATUS_SUCCESS, "batch of %s [%s]: status %d", b->outs[0].name, how, (int) st);
            for (int i = 0; i < b->n_outs; i++) {
                struct eout * o = &b->outs[i];
                const size_t nbytes = ggml_nbytes(o->out);
                const double e = eout_check(o, how);
                CHECK_MSG(e <= 1.0, "%s [%s]: error %.3g times the tolerance", o->name, how, e);
                if (nth == 1) {
                    memcpy(o->first, o->out->data, nbytes);
                } else {
                    CHECK_MSG(memcmp(o->first, o->out->data, nbytes) == 0, "%s [%s]: differs from 1 thread", o->name, how);
                }
            }
        }
    }
}

static void batch_end(struct ebatch * b) {
    for (int i = 0; i < b->n_outs; i++) {
        free(b->outs[i].want);
        free(b->outs[i].tol);
        free(b->outs[i].bytes);
        free(b->outs[i].first);
    }
    free(b->outs);
    free(b->snapshot);
    ggml_free(b->ctx);
}

//
// inputs in several layouts, all with logical shape ne
//

enum layout {
    LAYOUT_CONT,       // contiguous
    LAYOUT_TRANSPOSED, // dimension 0 strided (a transposed matrix)
    LAYOUT_PERMUTED,   // rows contiguous, dimensions 1 and 2 swapped in memory
    LAYOUT_VIEW,       // a window of a larger tensor: padded rows, an offset
};

static const char * layout_name(enum layout l) {
    switch (l) {
        case LAYOUT_CONT:       return "cont";
        case LAYOUT_TRANSPOSED: return "transposed";
        case LAYOUT_PERMUTED:   return "permuted";
        case LAYOUT_VIEW:       return "view";
    }
    return "?";
}

static struct ggml_tensor * new_input(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4],
                                      enum layout l, double lo, double hi, uint64_t seed) {
    struct ggml_tensor * t = NULL;
    switch (l) {
        case LAYOUT_CONT:
            t = ggml_new_tensor(ctx, type, 4, ne);
            break;
        case LAYOUT_TRANSPOSED: {
            const int64_t bne[4] = { ne[1], ne[0], ne[2], ne[3] };
            t = ggml_transpose(ctx, ggml_new_tensor(ctx, type, 4, bne));
        } break;
        case LAYOUT_PERMUTED: {
            const int64_t bne[4] = { ne[0], ne[2], ne[1], ne[3] };
            t = ggml_permute(ctx, ggml_new_tensor(ctx, type, 4, bne), 0, 2, 1, 3);
        } break;
        case LAYOUT_VIEW: {
            const int64_t bne[4] = { ne[0] + 3, ne[1] + 1, ne[2], ne[3] };
            struct ggml_tensor * b = ggml_new_tensor(ctx, type, 4, bne);
            tt_fill_uniform(b, lo, hi, seed + 1000); // the padding holds values too
            const size_t offset = b->nb[1] + 2 * b->nb[0];
            t = ggml_view_4d(ctx, b, ne[0], ne[1], ne[2], ne[3], b->nb[1], b->nb[2], b->nb[3], offset);
        } break;
    }
    tt_fill_uniform(t, lo, hi, seed);
    return t;
}

// A node built by hand, for type combinations and layouts the constructors do
// not make (the kernels take them, and say so in supports_op). In place: a
// view of a, which must then have the node's type and shape.
static struct ggml_tensor * new_node_ex(struct ggml_context * ctx, enum ggml_op op, enum ggml_type type, const int64_t ne[4],
                                        struct ggml_tensor * a, struct ggml_tensor * b, const void * params, size_t params_size,
                                        bool inplace) {
    struct ggml_tensor * t = inplace ? ggml_view_tensor(ctx, a) : ggml_new_tensor(ctx, type, 4, ne);
    t->op     = op;
    t->src[0] = a;
    t->src[1] = b;
    if (params_size > 0) {
        memcpy(t->op_params, params, params_size);
    }
    return t;
}

static struct ggml_tensor * new_node(struct ggml_context * ctx, enum ggml_op op, enum ggml_type type, const int64_t ne[4],
                                     struct ggml_tensor * a, struct ggml_tensor * b, const void * params, size_t params_size) {
    return new_node_ex(ctx, op, type, ne, a, b, params, params_size, false);
}


//
// binary ops
//

// the binary list of ggml-op-list.h: op, constructors, input ranges of a and b
struct binop_spec {
    enum ggml_op op;
    struct ggml_tensor * (*ctor)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);
    struct ggml_tensor * (*ctor_inplace)(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *);
    double       alo, ahi, blo, bhi;
};

static const struct binop_spec k_binops[] = {
#define X(NAME, ctor, f32, vec, f64, grad, glsl, alo, ahi, blo, bhi) { GGML_OP_##NAME, ctor, ctor##_inplace, alo, ahi, blo, bhi },
    GGML_OP_LIST_BINARY(X)
#undef X
};

#define N_BINOPS ((int) (sizeof(k_binops) / sizeof(k_binops[0])))

static const struct binop_spec * binop_spec_of(enum ggml_op op) {
    for (int i = 0; i < N_BINOPS; i++) {
        if (k_binops[i].op == op) {
            return &k_binops[i];
        }
    }
    return &k_binops[0];
}

static double binop_ref(enum ggml_op op, double a, double b) {
    return ggml_ref_binary(op == GGML_OP_ADD1 ? GGML_OP_ADD : op, a, b);
}

static struct ggml_tensor * binop_public(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a,
                                         struct ggml_tensor * b, bool inplace) {
    const struct binop_spec * spec = binop_spec_of(op);
    return inplace ? spec->ctor_inplace(ctx, a, b) : spec->ctor(ctx, a, b);
}

// want = a op b (b broadcast), from the input values as they are before computing
static void binary_expect(struct eout * o, enum ggml_op op, const struct ggml_tensor * a, const struct ggml_tensor * b) {
    const struct ggml_tensor * t = o->out;
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++, k++) {
        const double x = tt_get(a, i0, i1, i2, i3);
        const double y = tt_get(b, i0 % b->ne[0], i1 % b->ne[1], i2 % b->ne[2], i3 % b->ne[3]);
        o->want[k] = binop_ref(op, x, y);
        o->tol[k]  = tol_exact(t->type, o->want[k]);
    }
}

static uint64_t g_seed = 1;

static void add_binary_case(struct ebatch * bt, enum ggml_op op, enum ggml_type t0, enum ggml_type t1, enum ggml_type td,
                            const int64_t ne0[4], const int64_t ne1[4], enum layout l0, enum layout l1, bool inplace) {
    struct ggml_context * ctx = bt->ctx;
    const struct binop_spec * spec = binop_spec_of(op);
    struct ggml_tensor * a = new_input(ctx, t0, ne0, l0, spec->alo, spec->ahi, g_seed++);
    struct ggml_tensor * b = new_input(ctx, t1, ne1, l1, spec->blo, spec->bhi, g_seed++);
    struct ggml_tensor * out = td == t0 ? binop_public(ctx, op, a, b, inplace) : new_node(ctx, op, td, a->ne, a, b, NULL, 0);
    struct eout * o = batch_add(bt, out, "%s %s,%s->%s [%lld,%lld,%lld,%lld]+[%lld,%lld,%lld,%lld] %s/%s%s",
        ggml_op_name(op), ggml_type_name(t0), ggml_type_name(t1), ggml_type_name(td),
        (long long) ne0[0], (long long) ne0[1], (long long) ne0[2], (long long) ne0[3],
        (long long) ne1[0], (long long) ne1[1], (long long) ne1[2], (long long) ne1[3],
        layout_name(l0), layout_name(l1), inplace ? " inplace" : "");
    binary_expect(o, op, a, b);
}

static void test_binary(void) {
    struct ebatch bt;

    // every type combination, with broadcasting in dimensions 1..3
    batch_begin(&bt, 8);
    const int64_t bne0[4] = { 33, 3, 2, 2 };
    const int64_t bne1[4] = { 33, 1, 2, 1 };
    for (int o = 0; o < N_BINOPS; o++)
    for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
    for (int k = 0; k < 3; k++) {
        add_binary_case(&bt, k_binops[o].op, k_float_types[i], k_float_types[j], k_float_types[k], bne0, bne1,
                        LAYOUT_CONT, LAYOUT_CONT, false);
    }
    batch_run(&bt);
    batch_end(&bt);

    // broadcasting patterns and layouts
    const struct { int64_t a[4], b[4]; } shapes[] = {
        { { 7, 5, 3, 2 }, { 7, 5, 3, 2 } },  // same shape
        { { 7, 5, 3, 2 }, { 1, 1, 1, 1 } },  // a scalar
        { { 7, 5, 3, 2 }, { 7, 1, 1, 1 } },  // one row
        { { 7, 5, 3, 2 }, { 1, 5, 3, 2 } },  // one column
        { { 7, 5, 3, 2 }, { 7, 5, 1, 2 } },
        { { 12, 3, 2, 1 }, { 4, 1, 2, 1 } }, // a row repeated along dimension 0
        { { 900, 2, 1, 1 }, { 300, 1, 1, 1 } }, // ... across conversion chunks
        { { 257, 3, 1, 1 }, { 257, 3, 1, 1 } },
        { { 1, 1, 1, 1 }, { 1, 1, 1, 1 } },
    };
    const struct { enum ggml_type t0, t1, td; } types[] = {
        { GGML_TYPE_F32,  GGML_TYPE_F32, GGML_TYPE_F32 },
        { GGML_TYPE_F16,  GGML_TYPE_F16, GGML_TYPE_F16 },
        { GGML_TYPE_BF16, GGML_TYPE_F32, GGML_TYPE_BF16 },
    };
    const enum layout layouts[4][2] = {
        { LAYOUT_CONT, LAYOUT_CONT }, { LAYOUT_TRANSPOSED, LAYOUT_CONT },
        { LAYOUT_PERMUTED, LAYOUT_TRANSPOSED }, { LAYOUT_VIEW, LAYOUT_VIEW },
    };
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        batch_begin(&bt, 8);
        for (int o = 0; o < N_BINOPS; o++)
        for (int t = 0; t < 3; t++)
        for (int l = 0; l < 4; l++) {
            add_binary_case(&bt, k_binops[o].op, types[t].t0, types[t].t1, types[t].td, shapes[s].a, shapes[s].b,
                            layouts[l][0], layouts[l][1], false);
        }
        batch_run(&bt);
        batch_end(&bt);
    }

    // in place, on contiguous and strided src0
    batch_begin(&bt, 8);
    for (int o = 0; o < N_BINOPS; o++)
    for (int t = 0; t < 3; t++) {
        add_binary_case(&bt, k_binops[o].op, types[t].t0, types[t].t1, types[t].td, shapes[0].a, shapes[2].b,
                        LAYOUT_CONT, LAYOUT_CONT, true);
        add_binary_case(&bt, k_binops[o].op, types[t].t0, types[t].t1, types[t].td, shapes[0].a, shapes[0].b,
                        LAYOUT_TRANSPOSED, LAYOUT_VIEW, true);
        add_binary_case(&bt, k_binops[o].op, types[t].t0, types[t].t1, types[t].td, shapes[5].a, shapes[5].b,
                        LAYOUT_VIEW, LAYOUT_CONT, true);
    }
    // a + a in place: src1 is src0 itself
    for (int t = 0; t < 3; t++) {
        const int64_t ne[4] = { 37, 4, 1, 1 };
        struct ggml_tensor * a = new_input(bt.ctx, k_float_types[t], ne, LAYOUT_CONT, -10.0, 10.0, g_seed++);
        struct eout * o = batch_add(&bt, ggml_add_inplace(bt.ctx, a, a), "ADD self inplace %s", ggml_type_name(k_float_types[t]));
        binary_expect(o, GGML_OP_ADD, a, a);
    }
    batch_run(&bt);
    batch_end(&bt);

    // rows long enough to be cut into column blocks between threads
    batch_begin(&bt, 8);
    const int64_t lne0[4] = { 10007, 2, 1, 1 };
    const int64_t lne1[4] = { 10007, 1, 1, 1 };
    const int64_t lsc[4]  = { 1, 2, 1, 1 };
    add_binary_case(&bt, GGML_OP_ADD, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, lne0, lne1, LAYOUT_CONT, LAYOUT_CONT, false);
    add_binary_case(&bt, GGML_OP_MUL, GGML_TYPE_F16, GGML_TYPE_F32, GGML_TYPE_F16, lne0, lne1, LAYOUT_CONT, LAYOUT_CONT, false);
    add_binary_case(&bt, GGML_OP_DIV, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, lne0, lsc, LAYOUT_CONT, LAYOUT_CONT, true);
    add_binary_case(&bt, GGML_OP_SUB, GGML_TYPE_BF16, GGML_TYPE_BF16, GGML_TYPE_F32, lne0, lne0, LAYOUT_CONT, LAYOUT_VIEW, false);
    batch_run(&bt);
    batch_end(&bt);
}

//
// ADD1, and ADD with a quantized src0
//

// ggml_add1 is deprecated upstream (ggml_add broadcasts scalars too) but still
// makes ADD1 nodes, which the backends must compute
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static struct ggml_tensor * add1_node(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    return inplace ? ggml_add1_inplace(ctx, a, b) : ggml_add1(ctx, a, b);
}
#pragma GCC diagnostic pop

static void test_add1(void) {
    struct ebatch bt;
    batch_begin(&bt, 4);
    const int64_t ne[4] = { 33, 3, 2, 1 };
    const int64_t one[4] = { 1, 1, 1, 1 };
    for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++)
    for (int inplace = 0; inplace < 2; inplace++) {
        struct ggml_tensor * a = new_input(bt.ctx, k_float_types[i], ne, LAYOUT_CONT, -10.0, 10.0, g_seed++);
        struct ggml_tensor * b = new_input(bt.ctx, k_float_types[j], one, LAYOUT_CONT, -10.0, 10.0, g_seed++);
        struct eout * o = batch_add(&bt, add1_node(bt.ctx, a, b, inplace), "ADD1 %s,%s%s", ggml_type_name(k_float_types[i]),
                                    ggml_type_name(k_float_types[j]), inplace ? " inplace" : "");
        binary_expect(o, GGML_OP_ADD1, a, b);
    }
    batch_run(&bt);
    batch_end(&bt);
}

// dst = requant(dequant(a) + b). With a quantized dst the bytes must equal the
// reference quantization of the sums rounded to float (the kernel's f32 sum
// of two floats is that same rounding), computed here row by row.
static void add_quantized_case(struct ebatch * bt, enum ggml_op op, enum ggml_type tq, enum ggml_type td,
                               const int64_t ne[4], const int64_t ne1[4], enum layout l0) {
    struct ggml_context * ctx = bt->ctx;
    struct ggml_tensor * a = new_input(ctx, tq, ne, l0, -4.0, 4.0, g_seed++);
    struct ggml_tensor * b = new_input(ctx, GGML_TYPE_F32, ne1, LAYOUT_CONT, -1.0, 1.0, g_seed++);
    struct ggml_tensor * out;
    if (op == GGML_OP_ADD1) {
        out = add1_node(ctx, a, b, false);
    } else if (td == tq) {
        out = ggml_add(ctx, a, b);
    } else if (ne1[0] == ne[0]) {
        out = ggml_add_cast(ctx, a, b, td);
    } else {
        out = new_node(ctx, GGML_OP_ADD, td, a->ne, a, b, NULL, 0);
    }
    struct eout * o = batch_add(bt, out, "%s %s[%lld,%lld,%lld,%lld]+f32[%lld,%lld,%lld,%lld]->%s %s", ggml_op_name(op),
        ggml_type_name(tq), (long long) ne[0], (long long) ne[1], (long long) ne[2], (long long) ne[3],
        (long long) ne1[0], (long long) ne1[1], (long long) ne1[2], (long long) ne1[3], ggml_type_name(td), layout_name(l0));
    binary_expect(o, op, a, b);
    if (!ggml_is_quantized(td)) {
        return;
    }
    const size_t row_size = ggml_row_size(td, ne[0]);
    o->bytes = (unsigned char *) malloc(row_size * (size_t) ggml_nrows(out));
    float * sums = (float *) malloc(sizeof(float) * (size_t) ne[0]);
    for (int64_t r = 0; r < ggml_nrows(out); r++) {
        for (int64_t i = 0; i < ne[0]; i++) {
            sums[i] = (float) o->want[r * ne[0] + i];
        }
        ggml_get_type_traits(td)->from_float_ref(sums, o->bytes + r * row_size, ne[0]);
    }
    free(sums);
}

static void test_add_quantized(void) {
    struct ebatch bt;
    batch_begin(&bt, 4);
    const int64_t same[4] = { 64, 3, 2, 1 };
    const int64_t bcast[4] = { 64, 1, 2, 1 };
    const int64_t one[4] = { 1, 1, 1, 1 };
    // one long row: cut into column blocks between threads, at block boundaries
    const int64_t longr[4] = { 32 * 320, 1, 1, 1 };
    for (int q = 0; q < 6; q++) {
        const enum ggml_type tq = k_quant_types[q];
        add_quantized_case(&bt, GGML_OP_ADD,  tq, tq, same, same,  LAYOUT_CONT);
        add_quantized_case(&bt, GGML_OP_ADD,  tq, tq, same, bcast, LAYOUT_PERMUTED);
        add_quantized_case(&bt, GGML_OP_ADD1, tq, tq, same, one,   LAYOUT_CONT);
        for (int f = 0; f < 3; f++) {
            add_quantized_case(&bt, GGML_OP_ADD, tq, k_float_types[f], same, same, LAYOUT_CONT);
        }
        add_quantized_case(&bt, GGML_OP_ADD, tq, GGML_TYPE_Q8_0, same, bcast, LAYOUT_CONT);
        add_quantized_case(&bt, GGML_OP_ADD, tq, tq, longr, longr, LAYOUT_CONT);
        add_quantized_case(&bt, GGML_OP_ADD, tq, GGML_TYPE_F32, longr, one, LAYOUT_CONT);
    }
    batch_run(&bt);
    batch_end(&bt);
}

//
// ACC
//

// dst = a, with a's window (nb1, nb2, nb3, offset) += b, b's rows in order
static void add_acc_case(struct ebatch * bt, const int64_t ne_b[4], size_t nb1, size_t nb2, size_t nb3, size_t offset,
                         enum layout lb, bool inplace, const char * what) {
    struct ggml_context * ctx = bt->ctx;
    const int64_t ne[4] = { 10, 6, 3, 2 };
    struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, ne, LAYOUT_CONT, -10.0, 10.0, g_seed++);
    struct ggml_tensor * b = new_input(ctx, GGML_TYPE_F32, ne_b, lb, -10.0, 10.0, g_seed++);
    struct ggml_tensor * out = inplace ? ggml_acc_inplace(ctx, a, b, nb1, nb2, nb3, offset) : ggml_acc(ctx, a, b, nb1, nb2, nb3, offset);
    struct eout * o = batch_add(bt, out, "ACC %s %s%s", what, layout_name(lb), inplace ? " inplace" : "");

    // accumulated in double, counting the additions per element
    const int64_t n = ggml_nelements(a);
    int * adds = (int *) calloc((size_t) n, sizeof(int));
    for (int64_t i = 0; i < n; i++) {
        o->want[i] = tt_get(a, i % 10, (i / 10) % 6, (i / 60) % 3, i / 180);
    }
    for (int64_t i3 = 0; i3 < ne_b[3]; i3++)
    for (int64_t i2 = 0; i2 < ne_b[2]; i2++)
    for (int64_t i1 = 0; i1 < ne_b[1]; i1++)
    for (int64_t i0 = 0; i0 < ne_b[0]; i0++) {
        const size_t byte = offset + (size_t) i0 * sizeof(float) + i1*nb1 + i2*nb2 + i3*nb3;
        const int64_t e = (int64_t)(byte / sizeof(float));
        o->want[e] += tt_get(b, i0, i1, i2, i3);
        adds[e]++;
    }
    for (int64_t i = 0; i < n; i++) {
        // each f32 addition rounds once: 0.5 ulp of a partial sum, bounded by the sum of magnitudes
        const double bound = 10.0 * (adds[i] + 1);
        o->tol[i] = 1.0001 * adds[i] * 0.5 * ulp_of(GGML_TYPE_F32, bound);
    }
    free(adds);
}

static void test_acc(void) {
    const size_t nb1 = 10 * sizeof(float), nb2 = 60 * sizeof(float), nb3 = 180 * sizeof(float);
    const int64_t b1[4] = { 4, 3, 2, 1 };
    const int64_t b2[4] = { 10, 6, 3, 2 };
    const int64_t b3[4] = { 7, 2, 1, 1 };
    struct ebatch bt;
    batch_begin(&bt, 4);
    for (int inplace = 0; inplace < 2; inplace++) {
        add_acc_case(&bt, b1, nb1, nb2, nb3, 3 * sizeof(float) + nb1, LAYOUT_CONT, inplace, "window");
        add_acc_case(&bt, b1, nb1, nb2, nb3, 0, LAYOUT_TRANSPOSED, inplace, "window");
        add_acc_case(&bt, b2, nb1, nb2, nb3, 0, LAYOUT_CONT, inplace, "whole");
        // a window with strides of its own: rows 2 apart, planes 3 rows apart
        add_acc_case(&bt, b1, 2 * nb1, 3 * nb1, nb3, 0, LAYOUT_VIEW, inplace, "strided window");
        // overlapping rows (3 floats apart, 7 long): added one after another
        add_acc_case(&bt, b3, 3 * sizeof(float), nb2, nb3, 2 * sizeof(float), LAYOUT_CONT, inplace, "overlapping rows");
    }
    batch_run(&bt);
    batch_end(&bt);

    // a window beyond the end of dst is misuse
    struct ggml_context * ctx = tt_ctx_new(1);
    const int64_t ne[4] = { 10, 6, 3, 2 };
    struct ggml_tensor * a = new_input(ctx, GGML_TYPE_F32, ne, LAYOUT_CONT, -1.0, 1.0, 53);
    struct ggml_tensor * b = new_input(ctx, GGML_TYPE_F32, b1, LAYOUT_CONT, -1.0, 1.0, 54);
    struct ggml_tensor * out = ggml_acc(ctx, a, b, nb1, nb2, nb3, 350 * sizeof(float));
    CHECK_ABORTS("ACC window out of bounds", tt_compute(ctx, out, 1));
    ggml_free(ctx);
}

//
// unary functions
//

// the error classes of ggml-op-list.h (field tol)
enum fn_class {
    FN_EXACT  = GGML_OP_TOL_EXACT,  // one rounding of the exact value
    FN_HARD   = GGML_OP_TOL_HARD,   // two or three exact roundings (hardswish, hardsigmoid)
    FN_LIBM   = GGML_OP_TOL_LIBM,   // the C library on both paths
    FN_EXPISH = GGML_OP_TOL_EXPISH, // exp-based, vector approximations
};

struct fn_spec {
    const char *       name;
    enum ggml_op       op;
    enum ggml_unary_op uop; // for GGML_OP_UNARY
    float              p0, p1;
    double             lo, hi; // input range of the random tests
    enum fn_class      cls;
    double             k;      // f32 ulps allowed
};

// FN_<NAME>: the unary list of ggml-op-list.h
enum {
#define X(NAME, ...) FN_##NAME,
    GGML_OP_LIST_UNARY(X)
#undef X
    N_FNS,
};

static const struct fn_spec k_fns[N_FNS] = {
#define X(NAME, op, f32, vec, f64, grad, glsl, lo, hi, tol, k, tp0, tp1) \
    [FN_##NAME] = { #NAME, op, GGML_UNARY_OP_COUNT, tp0, tp1, lo, hi, FN_##tol, k },
    GGML_OP_LIST_UNARY_OPS(X)
#undef X
#define X(NAME, op, f32, vec, f64, grad, glsl, lo, hi, tol, k, tp0, tp1) \
    [FN_##NAME] = { #NAME, op, GGML_UNARY_OP_##NAME, tp0, tp1, lo, hi, FN_##tol, k },
    GGML_OP_LIST_UNARY_FNS(X)
#undef X
};

// cases with the two parameters of fn_spec only: not XIELU (four)
static bool fn_testable(const struct fn_spec * f) {
    return !(f->op == GGML_OP_UNARY && f->uop == GGML_UNARY_OP_XIELU);
}

// the function in double (ref-ops.h, the library ggml-ref)
static double fn_ref(const struct fn_spec * f, double x) {
    const double p[5] = { f->p0, f->p1, 0.0, 0.0, 0.0 };
    return ggml_ref_unary(f->op, f->uop, p, x);
}

// how much f changes when x moves by one f32 ulp
static double fn_sensitivity(const struct fn_spec * f, double x, double fx) {
    const double h = ulp_of(GGML_TYPE_F32, x);
    const double up = fabs(fn_ref(f, x + h) - fx);
    const double dn = fabs(fn_ref(f, x - h) - fx);
    return up > dn ? up : dn;
}

static double fn_tol(const struct fn_spec * f, enum ggml_type out, double x, double want) {
    switch (f->cls) {
        case FN_EXACT:
            return tol_exact(out, want);
        case FN_HARD:
            return 1.0001 * (f->k * ulp_of(GGML_TYPE_F32, want) + out_rounding(out, want));
        case FN_LIBM:
        case FN_EXPISH:
            return f->k * (ulp_of(GGML_TYPE_F32, want) + fn_sensitivity(f, x, want)) + ldexp(1.0, -122) +
                   out_rounding(out, want);
    }
    return 0.0;
}

// the constructors accept a's layout (ggml_unary wants contiguous rows,
// ggml_scale packed rows)
static bool fn_public_ok(const struct fn_spec * f, const struct ggml_tensor * a) {
    switch (f->op) {
        case GGML_OP_UNARY: return ggml_is_contiguous_rows(a);
        case GGML_OP_SCALE: return ggml_is_contiguous(a);
        default:            return true;
    }
}

// the node of f on a with dst type `out`: from the public constructor where it
// makes that node, else built by hand
static struct ggml_tensor * fn_node(struct ggml_context * ctx, const struct fn_spec * f, struct ggml_tensor * a,
                                    enum ggml_type out, bool inplace) {
    if (out != a->type || !fn_public_ok(f, a)) {
        int32_t params[2] = { 0, 0 };
        if (f->op == GGML_OP_UNARY) {
            params[0] = (int32_t) f->uop;
        } else {
            memcpy(&params[0], &f->p0, sizeof(float));
            memcpy(&params[1], &f->p1, sizeof(float));
        }
        const bool view = inplace || (f->op == GGML_OP_CLAMP && out == a->type);
        return new_node_ex(ctx, f->op, out, a->ne, a, NULL, params, sizeof(params), view);
    }
    switch (f->op) {
        case GGML_OP_SQR:        return inplace ? ggml_sqr_inplace(ctx, a)  : ggml_sqr(ctx, a);
        case GGML_OP_SQRT:       return inplace ? ggml_sqrt_inplace(ctx, a) : ggml_sqrt(ctx, a);
        case GGML_OP_LOG:        return inplace ? ggml_log_inplace(ctx, a)  : ggml_log(ctx, a);
        case GGML_OP_SIN:        return inplace ? ggml_sin_inplace(ctx, a)  : ggml_sin(ctx, a);
        case GGML_OP_COS:        return inplace ? ggml_cos_inplace(ctx, a)  : ggml_cos(ctx, a);
        case GGML_OP_SCALE:      return inplace ? ggml_scale_bias_inplace(ctx, a, f->p0, f->p1) : ggml_scale_bias(ctx, a, f->p0, f->p1);
        case GGML_OP_CLAMP:      return ggml_clamp(ctx, a, f->p0, f->p1);
        case GGML_OP_LEAKY_RELU: return ggml_leaky_relu(ctx, a, f->p0, inplace);
        case GGML_OP_UNARY:      return inplace ? ggml_unary_inplace(ctx, a, f->uop) : ggml_unary(ctx, a, f->uop);
        default:                 return NULL;
    }
}

static void fn_expect(struct eout * o, const struct fn_spec * f, const struct ggml_tensor * a) {
    const struct ggml_tensor * t = o->out;
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++, k++) {
        const double x = tt_get(a, i0, i1, i2, i3);
        o->want[k] = fn_ref(f, x);
        o->tol[k]  = fn_tol(f, t->type, x, o->want[k]);
    }
}

static void add_fn_case(struct ebatch * bt, const struct fn_spec * f, enum ggml_type tin, enum ggml_type tout,
                        const int64_t ne[4], enum layout l, bool inplace) {
    struct ggml_tensor * a = new_input(bt->ctx, tin, ne, l, f->lo, f->hi, g_seed++);
    struct eout * o = batch_add(bt, fn_node(bt->ctx, f, a, tout, inplace), "%s %s->%s [%lld,%lld,%lld,%lld] %s%s",
        f->name, ggml_type_name(tin), ggml_type_name(tout), (long long) ne[0], (long long) ne[1], (long long) ne[2],
        (long long) ne[3], layout_name(l), inplace ? " inplace" : "");
    fn_expect(o, f, a);
}

static void test_unary(void) {
    const int64_t ne[4] = { 37, 3, 2, 1 };
    const int64_t sizes[5][4] = { { 1, 1, 1, 1 }, { 7, 1, 1, 1 }, { 33, 2, 1, 1 }, { 257, 1, 3, 1 }, { 10007, 1, 1, 1 } };
    for (int i = 0; i < N_FNS; i++) {
        const struct fn_spec * f = &k_fns[i];
        if (!fn_testable(f)) {
            continue;
        }
        struct ebatch bt;
        batch_begin(&bt, 8);
        // every type combination
        for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            add_fn_case(&bt, f, k_float_types[a], k_float_types[b], ne, LAYOUT_CONT, false);
        }
        // layouts and in place, same type in and out
        for (int t = 0; t < 3; t++) {
            const enum ggml_type type = k_float_types[t];
            add_fn_case(&bt, f, type, type, ne, LAYOUT_TRANSPOSED, false);
            add_fn_case(&bt, f, type, type, ne, LAYOUT_PERMUTED, false);
            add_fn_case(&bt, f, type, type, ne, LAYOUT_VIEW, false);
            add_fn_case(&bt, f, type, type, ne, LAYOUT_CONT, true);
            add_fn_case(&bt, f, type, type, ne, LAYOUT_VIEW, true);
        }
        add_fn_case(&bt, f, GGML_TYPE_F16, GGML_TYPE_F32, ne, LAYOUT_TRANSPOSED, false);
        // odd sizes, and a row long enough for column blocks
        for (int s = 0; s < 5; s++) {
            add_fn_case(&bt, f, GGML_TYPE_F32, GGML_TYPE_F32, sizes[s], LAYOUT_CONT, false);
        }
        add_fn_case(&bt, f, GGML_TYPE_BF16, GGML_TYPE_F16, sizes[4], LAYOUT_CONT, false);
        batch_run(&bt);
        batch_end(&bt);
    }
}

// the largest |got - want| / (ulp + sensitivity) of o (results below 2^-122
// left out: there the tolerance is absolute)
static double sweep_error(const struct eout * o, const struct fn_spec * f, const struct ggml_tensor * a) {
    double worst = 0.0;
    for (int64_t i = 0; i < o->n; i++) {
        const double x = tt_get(a, i, 0, 0, 0);
        const double got = tt_get(o->out, i, 0, 0, 0);
        const double want = o->want[i];
        if (fabs(want) < ldexp(1.0, -122) || !isfinite(want)) {
            continue;
        }
        const double e = fabs(got - want) / (ulp_of(GGML_TYPE_F32, want) + fn_sensitivity(f, x, want));
        worst = e > worst ? e : worst;
    }
    return worst;
}

// Dense sweeps of the approximated functions over their whole range, F32, on
// both paths (the scalar path is the C library's expf, expm1f, tanhf, erfcf):
// checked against the tolerance, and the largest error printed in units of
// one ulp plus the function's sensitivity to a one-ulp change of its input.
static void test_accuracy_sweeps(void) {
    const struct { int fn; double lo, hi; } sweeps[] = {
        { FN_EXP, -103.0, 88.7 }, // from the subnormal results up to the largest floats
        { FN_EXP, -1.0, 1.0 },
        { FN_TANH, -12.0, 12.0 },
        { FN_TANH, -0.01, 0.01 },
        { FN_ELU, -30.0, 30.0 },
        { FN_ELU, -0.01, 0.01 },
        { FN_SIGMOID, -100.0, 100.0 },
        { FN_SILU, -100.0, 100.0 },
        { FN_GELU, -12.0, 12.0 },
        { FN_GELU_QUICK, -60.0, 60.0 },
        { FN_GELU_ERF, -14.0, 14.0 },
        { FN_GELU_ERF, -1.5, 1.5 },
        { FN_EXPM1, -30.0, 88.7 },
        { FN_EXPM1, -0.01, 0.01 },
        { FN_SOFTPLUS, -100.0, 25.0 },
        { FN_SOFTPLUS, -1.0, 1.0 },
    };
    const int n_sweeps = (int)(sizeof(sweeps) / sizeof(sweeps[0]));
    struct ebatch bt;
    batch_begin(&bt, 16);
    struct ggml_tensor * inputs[16];
    const int64_t n = 65536 + 5;
    for (int s = 0; s < n_sweeps; s++) {
        const struct fn_spec * f = &k_fns[sweeps[s].fn];
        struct ggml_tensor * a = ggml_new_tensor_1d(bt.ctx, GGML_TYPE_F32, n);
        for (int64_t i = 0; i < n; i++) {
            ((float *) a->data)[i] = (float)(sweeps[s].lo + (sweeps[s].hi - sweeps[s].lo) * (double) i / (double)(n - 1));
        }
        inputs[s] = a;
        struct eout * o = batch_add(&bt, fn_node(bt.ctx, f, a, GGML_TYPE_F32, false), "sweep %s [%g, %g]",
                                    f->name, sweeps[s].lo, sweeps[s].hi);
        fn_expect(o, f, a);
    }
    double err[16][2];
    for (int ref = 0; ref < 2; ref++) {
        CHECK(batch_compute(&bt, 2, ref == 1) == GGML_STATUS_SUCCESS);
        for (int s = 0; s < n_sweeps; s++) {
            const double e = eout_check(&bt.outs[s], ref ? "scalar" : "vector");
            CHECK_MSG(e <= 1.0, "%s: error %.3g times the tolerance", bt.outs[s].name, e);
            err[s][ref] = sweep_error(&bt.outs[s], &k_fns[sweeps[s].fn], inputs[s]);
        }
    }
    for (int s = 0; s < n_sweeps; s++) {
        printf("  %-10s on [%g, %g]: max error %.2f (vector), %.2f (scalar) ulp + sensitivity; allowed %.0f\n",
               k_fns[sweeps[s].fn].name, sweeps[s].lo, sweeps[s].hi, err[s][0], err[s][1], k_fns[sweeps[s].fn].k);
    }
    batch_end(&bt);
}

//
// special values
//

struct special {
    int   fn;   // index in k_fns
    float x;
    float want; // NaN: any NaN; zeros compared with their sign
};

static void test_special_values(void) {
    const float inf = INFINITY;
    const struct special cases[] = {
        { FN_SQR, NAN, NAN }, { FN_SQR, -inf, inf },
        { FN_SQRT, -1.0f, NAN }, { FN_SQRT, inf, inf }, { FN_SQRT, -0.0f, -0.0f },
        { FN_LOG, 0.0f, -inf }, { FN_LOG, -1.0f, NAN }, { FN_LOG, inf, inf },
        { FN_SIN, inf, NAN }, { FN_COS, NAN, NAN },
        { FN_SCALE, NAN, NAN }, { FN_SCALE, -inf, -inf }, { FN_SCALE, -0.0f, -0.0f }, // no bias: -0 stays -0
        { FN_SCALE_BIAS, NAN, NAN }, { FN_SCALE_BIAS, inf, -inf },
        { FN_CLAMP, NAN, 3.0f }, { FN_CLAMP, -inf, -2.0f }, { FN_CLAMP, inf, 3.0f }, // NaN gives max, as upstream
        { FN_LEAKY_RELU, NAN, 0.0f }, { FN_LEAKY_RELU, -inf, -inf }, { FN_LEAKY_RELU, inf, inf },
        { FN_ABS, -0.0f, 0.0f }, { FN_ABS, -inf, inf }, { FN_ABS, NAN, NAN },
        { FN_SGN, NAN, 0.0f }, { FN_SGN, -0.0f, 0.0f }, { FN_SGN, -inf, -1.0f },
        { FN_NEG, 0.0f, -0.0f }, { FN_NEG, -0.0f, 0.0f }, { FN_NEG, inf, -inf }, { FN_NEG, NAN, NAN },
        { FN_STEP, NAN, 0.0f }, { FN_STEP, inf, 1.0f }, { FN_STEP, 0.0f, 0.0f },
        { FN_TANH, NAN, NAN }, { FN_TANH, inf, 1.0f }, { FN_TANH, -inf, -1.0f }, { FN_TANH, -0.0f, -0.0f },
        { FN_TANH, 1e-30f, 1e-30f },
        { FN_ELU, NAN, NAN }, { FN_ELU, -inf, -1.0f }, { FN_ELU, inf, inf }, { FN_ELU, -0.0f, -0.0f },
        { FN_RELU, NAN, 0.0f }, { FN_RELU, -inf, 0.0f }, { FN_RELU, inf, inf },
        { FN_SIGMOID, NAN, NAN }, { FN_SIGMOID, inf, 1.0f }, { FN_SIGMOID, -inf, 0.0f },
        { FN_GELU, NAN, NAN }, { FN_GELU, inf, inf }, { FN_GELU, -0.0f, -0.0f },
        { FN_GELU_QUICK, NAN, NAN }, { FN_GELU_QUICK, inf, inf },
        { FN_GELU_ERF, NAN, NAN }, { FN_GELU_ERF, inf, inf }, { FN_GELU_ERF, 0.0f, 0.0f },
        { FN_SILU, NAN, NAN }, { FN_SILU, inf, inf }, { FN_SILU, -0.0f, -0.0f },
        { FN_HARDSWISH, NAN, NAN }, { FN_HARDSWISH, inf, inf },
        { FN_HARDSIGMOID, NAN, 0.0f }, { FN_HARDSIGMOID, inf, 1.0f }, { FN_HARDSIGMOID, -inf, 0.0f },
        { FN_EXP, NAN, NAN }, { FN_EXP, inf, inf }, { FN_EXP, -inf, 0.0f }, { FN_EXP, 0.0f, 1.0f },
        { FN_EXP, 89.0f, inf }, { FN_EXP, -110.0f, 0.0f },
        { FN_EXPM1, NAN, NAN }, { FN_EXPM1, inf, inf }, { FN_EXPM1, -inf, -1.0f }, { FN_EXPM1, -0.0f, -0.0f },
        { FN_EXPM1, 100.0f, inf }, { FN_EXPM1, 1e-30f, 1e-30f },
        { FN_SOFTPLUS, inf, inf }, { FN_SOFTPLUS, -inf, 0.0f }, { FN_SOFTPLUS, 30.0f, 30.0f }, { FN_SOFTPLUS, NAN, NAN },
        { FN_FLOOR, -0.5f, -1.0f }, { FN_FLOOR, -0.0f, -0.0f }, { FN_FLOOR, inf, inf }, { FN_FLOOR, NAN, NAN },
        { FN_CEIL, -0.5f, -0.0f }, { FN_CEIL, 0.25f, 1.0f }, { FN_CEIL, -inf, -inf },
        { FN_ROUND, 2.5f, 3.0f }, { FN_ROUND, -2.5f, -3.0f }, { FN_ROUND, 0.5f, 1.0f }, { FN_ROUND, -0.3f, -0.0f },
        { FN_ROUND, 0.49975586f, 0.0f }, { FN_ROUND, 100.5f, 101.0f }, { FN_ROUND, inf, inf }, { FN_ROUND, NAN, NAN },
        { FN_TRUNC, -2.9f, -2.0f }, { FN_TRUNC, 3.7f, 3.0f }, { FN_TRUNC, -0.5f, -0.0f }, { FN_TRUNC, -inf, -inf },
    };
    const int n_cases = (int)(sizeof(cases) / sizeof(cases[0]));
    // each value at a position of the vector loop's body and at the tail; a
    // fresh graph for each path, as clamp works in place
    const int n = 37;
    for (int ref = 0; ref < 2; ref++)
    for (int t = 0; t < 2; t++) {
        const enum ggml_type type = k_float_types[t];
        struct ggml_context * ctx = tt_ctx_new(4);
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        struct ggml_tensor * outs[128];
        for (int i = 0; i < n_cases; i++) {
            struct ggml_tensor * a = ggml_new_tensor_1d(ctx, type, n);
            for (int j = 0; j < n; j++) {
                ggml_set_f32_1d(a, j, j == 3 || j == n - 1 ? cases[i].x : 0.5f);
            }
            outs[i] = fn_node(ctx, &k_fns[cases[i].fn], a, type, false);
            ggml_build_forward_expand(gf, outs[i]);
        }
        CHECK(graph_compute(gf, 2, ref == 1) == GGML_STATUS_SUCCESS);
        for (int i = 0; i < n_cases; i++) {
            if (type == GGML_TYPE_F16 && (cases[i].x == 89.0f || cases[i].x == -110.0f || cases[i].x == 1e-30f)) {
                continue; // not representable
            }
            for (int j = 3; j < n; j += n - 4) {
                const float got  = ggml_get_f32_1d(outs[i], j);
                const float want = cases[i].want;
                const bool ok = isnan(want) ? isnan(got) : (got == want && (signbit(got) != 0) == (signbit(want) != 0));
                CHECK_MSG(ok, "%s(%g) %s %s at %d: got %g, want %g", k_fns[cases[i].fn].name, (double) cases[i].x,
                          ggml_type_name(type), ref ? "scalar" : "vector", j, (double) got, (double) want);
            }
        }
        ggml_free(ctx);
    }

    // binary ops: inf - inf, 0/0, x/0, NaN + x
    const float xs[4] = { inf, 0.0f, 1.0f, NAN };
    const float ys[4] = { inf, 0.0f, 0.0f, 2.0f };
    const enum ggml_op ops[4] = { GGML_OP_SUB, GGML_OP_DIV, GGML_OP_DIV, GGML_OP_ADD };
    const float wants[4] = { NAN, NAN, inf, NAN };
    struct ggml_context * ctx = tt_ctx_new(1);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    struct ggml_tensor * outs[4];
    for (int i = 0; i < 4; i++) {
        struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
        struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
        for (int j = 0; j < n; j++) {
            ggml_set_f32_1d(a, j, xs[i]);
            ggml_set_f32_1d(b, j, ys[i]);
        }
        outs[i] = binop_public(ctx, ops[i], a, b, false);
        ggml_build_forward_expand(gf, outs[i]);
    }
    for (int ref = 0; ref < 2; ref++) {
        CHECK(graph_compute(gf, 1, ref == 1) == GGML_STATUS_SUCCESS);
        for (int i = 0; i < 4; i++)
        for (int j = 0; j < n; j++) {
            const float got = ggml_get_f32_1d(outs[i], j);
            CHECK_MSG(isnan(wants[i]) ? isnan(got) : got == wants[i], "%s(%g, %g) = %g", ggml_op_name(ops[i]),
                      (double) xs[i], (double) ys[i], (double) got);
        }
    }
    ggml_free(ctx);
}

// F32 -> F16 / BF16 results round to nearest, ties to even, on both paths
static void test_output_rounding(void) {
    const int n = 40;
    for (int t = 1; t < 3; t++) {
        const enum ggml_type type = k_float_types[t];
        const int mant = type == GGML_TYPE_F16 ? 10 : 7;
        struct ggml_context * ctx = tt_ctx_new(1);
        struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
        double want[40];
        for (int j = 0; j < n; j++) {
            // 1 + (k + 1/2) 2^-mant lies halfway between two neighbours; j odd: just above
            const int k = j / 2;
            const double tie = 1.0 + (k + 0.5) * ldexp(1.0, -mant);
            ((float *) a->data)[j] = (float)(j % 2 == 0 ? tie : tie + ldexp(1.0, -20));
            const int up = j % 2 == 1 || k % 2 == 1;
            want[j] = 1.0 + (k + up) * ldexp(1.0, -mant);
        }
        const int32_t params[1] = { GGML_UNARY_OP_RELU };
        struct ggml_tensor * out = new_node(ctx, GGML_OP_UNARY, type, a->ne, a, NULL, params, sizeof(params));
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, out);
        for (int ref = 0; ref < 2; ref++) {
            CHECK(graph_compute(gf, 1, ref == 1) == GGML_STATUS_SUCCESS);
            for (int j = 0; j < n; j++) {
                const double got = tt_get(out, j, 0, 0, 0);
                CHECK_MSG(got == want[j], "%s %s rounding of %.9g: got %.9g, want %.9g", ggml_type_name(type),
                          ref ? "scalar" : "vector", (double) ((float *) a->data)[j], got, want[j]);
            }
        }
        ggml_free(ctx);
    }
}

//
// GLU
//

struct glu_spec {
    const char *     name;
    enum ggml_glu_op op;
    int              fn; // the activation in k_fns
};

static const struct glu_spec k_glus[3] = {
    { "reglu",  GGML_GLU_OP_REGLU,  FN_RELU },
    { "geglu",  GGML_GLU_OP_GEGLU,  FN_GELU },
    { "swiglu", GGML_GLU_OP_SWIGLU, FN_SILU },
};

// want = act(x) g; tolerance: act's scaled by |g|, and the rounding of the product
static void glu_expect(struct eout * o, const struct glu_spec * g, const struct ggml_tensor * src0,
                       const struct ggml_tensor * src1, bool swapped) {
    const struct ggml_tensor * t = o->out;
    const struct fn_spec * act = &k_fns[g->fn];
    const int64_t nc = t->ne[0];
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < nc; i0++, k++) {
        double x, gate;
        if (src1 != NULL) {
            x    = tt_get(src0, i0, i1, i2, i3);
            gate = tt_get(src1, i0, i1, i2, i3);
        } else {
            x    = tt_get(src0, i0 + (swapped ? nc : 0), i1, i2, i3);
            gate = tt_get(src0, i0 + (swapped ? 0 : nc), i1, i2, i3);
        }
        const double ax = fn_ref(act, x);
        o->want[k] = ggml_ref_glu(g->op, 0.0, 0.0, x, gate);
        const double act_tol = act->cls == FN_EXACT ? 0.0 : act->k * (ulp_of(GGML_TYPE_F32, ax) + fn_sensitivity(act, x, ax));
        o->tol[k] = 1.0001 * (fabs(gate) * act_tol + 0.5 * ulp_of(GGML_TYPE_F32, o->want[k]) +
                              out_rounding(t->type, o->want[k])) + ldexp(1.0, -122);
    }
}

static void add_glu_case(struct ebatch * bt, const struct glu_spec * g, enum ggml_type t0, enum ggml_type t1,
                         enum ggml_type td, const int64_t ne[4], bool split, bool swapped, enum layout l) {
    struct ggml_context * ctx = bt->ctx;
    struct ggml_tensor * a = new_input(ctx, t0, ne, l, -6.0, 6.0, g_seed++);
    struct ggml_tensor * b = split ? new_input(ctx, t1, ne, l, -3.0, 3.0, g_seed++) : NULL;
    const bool public_ok = ggml_is_contiguous_1(a) && (b == NULL || ggml_is_contiguous_1(b)) && td == t0 && (!split || t1 == t0);
    struct ggml_tensor * out;
    if (public_ok) {
        out = split ? ggml_glu_split(ctx, a, b, g->op) : ggml_glu(ctx, a, g->op, swapped);
    } else {
        const int32_t params[2] = { (int32_t) g->op, swapped };
        const int64_t half[4] = { ne[0] / 2, ne[1], ne[2], ne[3] };
        out = new_node(ctx, GGML_OP_GLU, td, split ? ne : half, a, b, params, sizeof(params));
    }
    struct eout * o = batch_add(bt, out, "%s %s %s,%s->%s [%lld,%lld,%lld,%lld] %s%s", g->name,
        split ? "split" : "fused", ggml_type_name(t0), ggml_type_name(split ? t1 : t0), ggml_type_name(td),
        (long long) ne[0], (long long) ne[1], (long long) ne[2], (long long) ne[3], layout_name(l), swapped ? " swapped" : "");
    glu_expect(o, g, a, b, swapped);
}

static void test_glu(void) {
    const int64_t fused[4] = { 2 * 33, 3, 2, 1 };
    const int64_t odd[4]   = { 2 * 33 + 1, 2, 1, 1 };
    const int64_t split[4] = { 33, 3, 2, 1 };
    const int64_t longr[4] = { 2 * 5003, 1, 1, 1 };
    for (int k = 0; k < 3; k++) {
        const struct glu_spec * g = &k_glus[k];
        struct ebatch bt;
        batch_begin(&bt, 8);
        for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            add_glu_case(&bt, g, k_float_types[i], k_float_types[i], k_float_types[j], fused, false, false, LAYOUT_CONT);
            add_glu_case(&bt, g, k_float_types[i], k_float_types[i], k_float_types[j], fused, false, true, LAYOUT_CONT);
            add_glu_case(&bt, g, k_float_types[i], k_float_types[j], k_float_types[i], split, true, false, LAYOUT_CONT);
        }
        for (int t = 0; t < 3; t++) {
            const enum ggml_type type = k_float_types[t];
            add_glu_case(&bt, g, type, type, type, odd, false, false, LAYOUT_CONT);
            add_glu_case(&bt, g, type, type, type, odd, false, true, LAYOUT_CONT);
            add_glu_case(&bt, g, type, type, type, fused, false, true, LAYOUT_VIEW);
            add_glu_case(&bt, g, type, type, type, fused, false, false, LAYOUT_PERMUTED);
            add_glu_case(&bt, g, type, type, type, split, true, false, LAYOUT_VIEW);
            add_glu_case(&bt, g, type, type, type, split, true, false, LAYOUT_TRANSPOSED);
        }
        add_glu_case(&bt, g, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, longr, false, false, LAYOUT_CONT);
        add_glu_case(&bt, g, GGML_TYPE_F16, GGML_TYPE_F16, GGML_TYPE_F32, longr, false, true, LAYOUT_CONT);
        batch_run(&bt);
        batch_end(&bt);
    }
}

//
// what the CPU backend says it supports
//

static bool cpu_supports(const struct ggml_tensor * t) {
    return ggml_backend_dev_supports_op(ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0), t);
}

static void test_supports(void) {
    struct ggml_context * ctx = tt_ctx_new(1);
    const int64_t ne[4] = { 32, 2, 1, 1 };
    struct ggml_tensor * f32 = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    struct ggml_tensor * q40 = ggml_new_tensor(ctx, GGML_TYPE_Q4_0, 4, ne);
    struct ggml_tensor * i32 = ggml_new_tensor(ctx, GGML_TYPE_I32, 4, ne);
    struct ggml_tensor * f16 = ggml_new_tensor(ctx, GGML_TYPE_F16, 4, ne);

    // every unary op, xIELU included, on float data only
    for (int op = 0; op < GGML_UNARY_OP_COUNT; op++) {
        const char * name = ggml_unary_op_name((enum ggml_unary_op) op);
        CHECK_MSG(cpu_supports(ggml_unary(ctx, f32, (enum ggml_unary_op) op)), "unary %s", name);
        CHECK_MSG(!cpu_supports(ggml_unary(ctx, i32, (enum ggml_unary_op) op)), "unary %s i32", name);
    }
    for (int i = 0; i < N_FNS; i++) {
        CHECK_MSG(cpu_supports(fn_node(ctx, &k_fns[i], f32, GGML_TYPE_F32, false)), "%s f32", k_fns[i].name);
        CHECK_MSG(!cpu_supports(fn_node(ctx, &k_fns[i], i32, GGML_TYPE_I32, false)), "%s i32", k_fns[i].name);
        CHECK_MSG(!cpu_supports(fn_node(ctx, &k_fns[i], f32, GGML_TYPE_Q8_0, false)), "%s -> q8_0", k_fns[i].name);
        CHECK_MSG(!cpu_supports(fn_node(ctx, &k_fns[i], q40, GGML_TYPE_F32, false)), "%s q4_0 ->", k_fns[i].name);
    }
    // every glu op
    for (int op = 0; op < GGML_GLU_OP_COUNT; op++) {
        CHECK_MSG(cpu_supports(ggml_glu(ctx, f32, (enum ggml_glu_op) op, false)), "glu %s", ggml_glu_op_name((enum ggml_glu_op) op));
    }
    CHECK(cpu_supports(ggml_glu(ctx, f32, GGML_GLU_OP_SWIGLU, false)));
    CHECK(!cpu_supports(ggml_glu(ctx, i32, GGML_GLU_OP_SWIGLU, false)));

    // binary: a quantized src0 only for ADD/ADD1, with an F32 src1
    CHECK(cpu_supports(ggml_add(ctx, q40, f32)));
    CHECK(!cpu_supports(ggml_sub(ctx, q40, f32)));
    CHECK(!cpu_supports(ggml_mul(ctx, q40, f32)));
    CHECK(!cpu_supports(ggml_div(ctx, q40, f32)));
    CHECK(!cpu_supports(ggml_add(ctx, q40, f16)));
    CHECK(!cpu_supports(ggml_add(ctx, f32, q40)));
    CHECK(!cpu_supports(ggml_add(ctx, i32, i32)));
    CHECK(!cpu_supports(ggml_add(ctx, f32, i32)));
    CHECK(!cpu_supports(ggml_add_cast(ctx, f16, f32, GGML_TYPE_Q8_0))); // a quantized dst needs a quantized src0
    CHECK(cpu_supports(ggml_add_cast(ctx, q40, f32, GGML_TYPE_F16)));
    CHECK(cpu_supports(ggml_add_cast(ctx, q40, f32, GGML_TYPE_Q8_0)));
    const int64_t kne[4] = { 256, 1, 1, 1 };
    CHECK(!cpu_supports(ggml_add(ctx, ggml_new_tensor(ctx, GGML_TYPE_Q8_K, 4, kne), ggml_new_tensor(ctx, GGML_TYPE_F32, 4, kne))));
    ggml_free(ctx);
}

int main(void) {
    ggml_cpu_init();
    pools_init();
    test_supports();
    test_special_values();
    test_output_rounding();
    test_binary();
    test_add1();
    test_add_quantized();
    test_acc();
    test_unary();
    test_glu();
    test_accuracy_sweeps();
    pools_free();
    return TEST_RESULT();
}
