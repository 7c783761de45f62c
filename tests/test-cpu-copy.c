// test-cpu-copy: the CPU kernels of the copy op family: DUP, CPY, CONT, SET,
// GET_ROWS, SET_ROWS, REPEAT, CONCAT, PAD, ARANGE.
//
// Every result is compared with a reference computed here, element by
// element, from the inputs' bytes:
//  - conversions between F32, F16, BF16 and I32 with conversions written in
//    this file (rounding to nearest even through double, truncation toward
//    zero), exact bits, NaN only as "some NaN";
//  - quantized destinations: the bytes of the reference quantizer
//    (ggml_get_type_traits()->from_float_ref) applied to the same values;
//    quantized sources: the reference dequantizer's floats;
//  - layouts: contiguous, transposed, permuted, views with offsets and gaps,
//    as source and as destination; bytes of a destination view's parent
//    outside the view stay untouched.
// Each graph runs with 1, 2 and 3 threads and on the vector and the scalar
// (use_ref) paths; all runs must give identical bytes. Index errors abort.

#define _POSIX_C_SOURCE 200809L

#include "cpu-testing.h"
#include "death-test.h"
#include "ggml-backend.h"
#include "ggml-impl.h"

#include <float.h>
#include <stdio.h>

#define SENTINEL 0xA5

//
// independent reference conversions
//

static float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static double ref_f16_value(uint16_t h) {
    const int sign = h >> 15, exp = (h >> 10) & 31, mant = h & 1023;
    double v;
    if (exp == 0) {
        v = ldexp(mant, -24);
    } else if (exp == 31) {
        v = mant ? NAN : INFINITY;
    } else {
        v = ldexp(1024 + mant, exp - 25);
    }
    return sign ? -v : v;
}

static double ref_bf16_value(uint16_t b) {
    return f32_from_bits((uint32_t) b << 16);
}

// Round |x| (finite, >= 0) to a binary format with mbits stored mantissa bits,
// minimum normal exponent emin and maximum exponent emax; returns the bits
// without sign. Ties go to even (rint in the default rounding mode).
static uint32_t ref_round_to_format(double a, int mbits, int emin, int emax) {
    const int bias = -emin + 1;
    if (a < ldexp(1.0, emin)) {
        // subnormal: multiples of 2^(emin - mbits); a carry into the exponent field is the smallest normal
        return (uint32_t) rint(ldexp(a, mbits - emin));
    }
    int e;
    frexp(a, &e); // a = f * 2^e, f in [0.5, 1)
    int E = e - 1;
    double m = rint(ldexp(a, -E) * ldexp(1.0, mbits) - ldexp(1.0, mbits));
    if (m == ldexp(1.0, mbits)) {
        m = 0;
        E++;
    }
    if (E > emax) {
        return (uint32_t)(2*emax + 1) << mbits; // infinity: all-ones exponent, zero mantissa
    }
    return ((uint32_t)(E + bias) << mbits) | (uint32_t) m;
}

static uint16_t ref_f16_bits(double v) {
    if (isnan(v)) {
        return 0x7e00;
    }
    const uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isinf(v)) {
        return sign | 0x7c00;
    }
    return sign | (uint16_t) ref_round_to_format(fabs(v), 10, -14, 15);
}

static uint16_t ref_bf16_bits(double v) {
    if (isnan(v)) {
        return 0x7fc0;
    }
    const uint16_t sign = signbit(v) ? 0x8000 : 0;
    if (isinf(v)) {
        return sign | 0x7f80;
    }
    return sign | (uint16_t) ref_round_to_format(fabs(v), 7, -126, 127);
}

static int32_t ref_i32(double v) {
    // truncation toward zero; NaN and values out of range give INT32_MIN (documented in the kernel)
    if (isnan(v) || v <= -2147483649.0 || v >= 2147483648.0) {
        return INT32_MIN;
    }
    return (int32_t) trunc(v);
}

static bool type_is_float(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16 || t == GGML_TYPE_F64;
}

// exact value of one element of a non-quantized type
static double elem_value(enum ggml_type type, const char * p) {
    switch (type) {
        case GGML_TYPE_F32:  { float v;    memcpy(&v, p, 4); return v; }
        case GGML_TYPE_F64:  { double v;   memcpy(&v, p, 8); return v; }
        case GGML_TYPE_F16:  { uint16_t v; memcpy(&v, p, 2); return ref_f16_value(v); }
        case GGML_TYPE_BF16: { uint16_t v; memcpy(&v, p, 2); return ref_bf16_value(v); }
        case GGML_TYPE_I8:   { int8_t v;   memcpy(&v, p, 1); return v; }
        case GGML_TYPE_I16:  { int16_t v;  memcpy(&v, p, 2); return v; }
        case GGML_TYPE_I32:  { int32_t v;  memcpy(&v, p, 4); return v; }
        case GGML_TYPE_I64:  { int64_t v;  memcpy(&v, p, 8); return (double) v; }
        default: abort();
    }
}

// the bytes of value v (exactly representable in F32, as every source of a conversion is) in type dt
static void ref_store(enum ggml_type dt, double v, char * out) {
    switch (dt) {
        case GGML_TYPE_F32:  { const float    x = (float) v;       memcpy(out, &x, 4); } break;
        case GGML_TYPE_F16:  { const uint16_t x = ref_f16_bits(v);  memcpy(out, &x, 2); } break;
        case GGML_TYPE_BF16: { const uint16_t x = ref_bf16_bits(v); memcpy(out, &x, 2); } break;
        case GGML_TYPE_I32:  { const int32_t  x = ref_i32(v);       memcpy(out, &x, 4); } break;
        default: abort();
    }
}

static bool bytes_are_nan(enum ggml_type type, const char * p) {
    return type_is_float(type) && isnan(elem_value(type, p));
}

// one element of dt: equal bits, or both NaN
static bool same_element(enum ggml_type dt, const char * got, const char * want) {
    if (bytes_are_nan(dt, want)) {
        return bytes_are_nan(dt, got);
    }
    return memcmp(got, want, ggml_type_size(dt)) == 0;
}

//
// tensor access in logical (row-major) order
//

static void unravel(const struct ggml_tensor * t, int64_t k, int64_t i[4]) {
    for (int d = 0; d < 4; d++) {
        i[d] = k % t->ne[d];
        k /= t->ne[d];
    }
}

// the element (non-quantized) or the block holding element i0 (quantized)
static char * at(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + (i0 / ggml_blck_size(t->type)) * t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
}

static char * at_k(const struct ggml_tensor * t, int64_t k) {
    int64_t i[4];
    unravel(t, k, i);
    return at(t, i[0], i[1], i[2], i[3]);
}

// float value of element k of any type with float values (quantized: dequantized)
static float value_f32(const struct ggml_tensor * t, int64_t k) {
    if (ggml_is_quantized(t->type)) {
        const int64_t blck = ggml_blck_size(t->type);
        float vals[256];
        ggml_get_type_traits(t->type)->to_float(at_k(t, k), vals, blck);
        return vals[k % blck];
    }
    return (float) elem_value(t->type, at_k(t, k));
}

static struct ggml_tensor * root_of(struct ggml_tensor * t) {
    return t->view_src != NULL ? t->view_src : t;
}

//
// filling inputs
//

// values where conversions round, overflow or are special
static const float k_specials[] = {
    0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, -70000.0f, 1e-6f, -6e-8f, 3e-8f, 1e-40f,
    1.00048828125f /* 1 + 2^-11: tie, to even */, 1.00146484375f /* 1 + 3*2^-11: tie, up */,
    1.00390625f /* 1 + 2^-8 */, 1.01171875f /* 1 + 3*2^-8 */, 3.4e38f, 2.9999f, -2.9999f, 123456.7f,
};

static void fill_any(struct ggml_tensor * t, uint64_t seed, bool specials) {
    if (t->type == GGML_TYPE_I8 || t->type == GGML_TYPE_I16 || t->type == GGML_TYPE_I32 || t->type == GGML_TYPE_I64) {
        const int64_t lim = t->type == GGML_TYPE_I8 ? 127 : t->type == GGML_TYPE_I16 ? 32000 : 2000000000;
        tt_fill_int(t, -lim, lim, seed);
        return;
    }
    tt_fill_uniform(t, -4.0, 4.0, seed);
    if (!specials || ggml_is_quantized(t->type)) {
        return;
    }
    const int64_t n = ggml_nelements(t);
    const int n_special = (int)(sizeof(k_specials) / sizeof(k_specials[0]));
    for (int j = 0; j < n_special + 3 && j * 5 < n; j++) {
        int64_t i[4];
        unravel(t, (j * 5 + 2) % n, i);
        float v;
        if (j < n_special) {
            v = k_specials[j];
        } else {
            v = j == n_special ? INFINITY : j == n_special + 1 ? -INFINITY : NAN;
        }
        ggml_set_f32_nd(t, (int) i[0], (int) i[1], (int) i[2], (int) i[3], v);
    }
}

//
// computing: every variant must agree with the reference and with the others
//

struct variant {
    int  n_threads;
    bool use_ref;
};

static const struct variant k_variants[] = {
    { 1, true }, { 1, false }, { 2, false }, { 3, false }, { 3, true },
};
#define N_VARIANTS ((int)(sizeof(k_variants) / sizeof(k_variants[0])))

// one pool per thread count, sleeping between graphs (the machine may have fewer cores)
static struct ggml_threadpool * g_pools[4];

static struct ggml_threadpool * pool_for(int n_threads) {
    if (g_pools[n_threads] == NULL) {
        struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
        tpp.poll = 0;
        g_pools[n_threads] = ggml_threadpool_new(&tpp);
    }
    return g_pools[n_threads];
}

static void free_pools(void) {
    for (int i = 0; i < 4; i++) {
        if (g_pools[i] != NULL) {
            ggml_threadpool_free(g_pools[i]);
            g_pools[i] = NULL;
        }
    }
}

static void compute_variant(struct ggml_cgraph * gf, struct variant v) {
    struct ggml_cplan plan = ggml_graph_plan(gf, v.n_threads, pool_for(v.n_threads));
    plan.use_ref = v.use_ref;
    uint8_t * work = plan.work_size > 0 ? (uint8_t *) malloc(plan.work_size) : NULL;
    plan.work_data = work;
    CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
    free(work);
}

static ggml_backend_dev_t cpu_dev(void) {
    return ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
}

typedef void (*check_fn)(const struct ggml_tensor * out, const void * user);
typedef void (*prepare_fn)(void * user);

// bytes of root that t covers (elements, or whole blocks)
static unsigned char * coverage(const struct ggml_tensor * t, const struct ggml_tensor * root) {
    const size_t n = ggml_nbytes(root);
    unsigned char * mask = (unsigned char *) calloc(n, 1);
    const size_t unit = ggml_type_size(t->type);
    const int64_t blck = ggml_blck_size(t->type);
    for (int64_t k = 0; k < ggml_nelements(t); k += blck) {
        const size_t off = (size_t)(at_k(t, k) - (char *) root->data);
        memset(mask + off, 1, unit);
    }
    return mask;
}

// Computes out with every variant: before each, the destination's memory
// (out's root) is filled with SENTINEL and prepare (if any) restores inputs
// that live there. check() compares with the reference each time; the bytes
// of the root must be identical across variants, and outside out's elements
// they must still be SENTINEL.
static void run_variants(struct ggml_context * ctx, struct ggml_tensor * out, const char * what,
                         check_fn check, prepare_fn prepare, void * user) {
    struct ggml_tensor * root = root_of(out);
    const size_t n = ggml_nbytes(root);
    CHECK_MSG(ggml_backend_dev_supports_op(cpu_dev(), out), "%s: not reported as supported", what);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(gf, out);

    unsigned char * first = (unsigned char *) malloc(n);
    const int failures_before = g_test_failures;
    for (int v = 0; v < N_VARIANTS; v++) {
        memset(root->data, SENTINEL, n);
        if (prepare != NULL) {
            prepare(user);
        }
        compute_variant(gf, k_variants[v]);
        check(out, user);
        if (v == 0) {
            memcpy(first, root->data, n);
        } else {
            CHECK_MSG(memcmp(first, root->data, n) == 0, "%s: %d threads%s differ from 1 thread (ref)", what,
                      k_variants[v].n_threads, k_variants[v].use_ref ? " (ref)" : "");
        }
    }
    if (prepare == NULL) {
        unsigned char * mask = coverage(out, root);
        size_t outside_changed = 0;
        for (size_t i = 0; i < n; i++) {
            outside_changed += !mask[i] && ((unsigned char *) root->data)[i] != SENTINEL;
        }
        CHECK_MSG(outside_changed == 0, "%s: %zu bytes outside the destination changed", what, outside_changed);
        free(mask);
    }
    free(first);
    if (g_test_failures != failures_before) {
        fprintf(stderr, "  ^ in %s\n", what);
    }
}

//
// layouts
//

enum layout { L_CONT, L_TRANS, L_PERM, L_SCRAMBLE, L_OFFSET, L_SCRAMBLE2, L_COUNT };

static const char * k_layout_names[L_COUNT] = { "contiguous", "transposed", "permuted 0213", "permuted 1230", "offset view", "permuted 2301" };

// quantized tensors keep whole blocks contiguous along dim 0
static bool layout_ok(enum layout l, enum ggml_type type) {
    return !ggml_is_quantized(type) || l == L_CONT || l == L_PERM || l == L_OFFSET;
}

// a tensor of logical shape ne laid out as l, in memory of its own
static struct ggml_tensor * make_layout(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4], enum layout l) {
    struct ggml_tensor * base;
    switch (l) {
        case L_CONT:
            return ggml_new_tensor(ctx, type, 4, ne);
        case L_TRANS:
            base = ggml_new_tensor_4d(ctx, type, ne[1], ne[0], ne[2], ne[3]);
            return ggml_transpose(ctx, base);
        case L_PERM:
            base = ggml_new_tensor_4d(ctx, type, ne[0], ne[2], ne[1], ne[3]);
            return ggml_permute(ctx, base, 0, 2, 1, 3);
        case L_SCRAMBLE:
            base = ggml_new_tensor_4d(ctx, type, ne[1], ne[2], ne[3], ne[0]);
            return ggml_permute(ctx, base, 1, 2, 3, 0);
        case L_SCRAMBLE2:
            // contiguous along dim 2
            base = ggml_new_tensor_4d(ctx, type, ne[2], ne[3], ne[0], ne[1]);
            return ggml_permute(ctx, base, 2, 3, 0, 1);
        case L_OFFSET: {
            const int64_t blck = ggml_blck_size(type);
            base = ggml_new_tensor_4d(ctx, type, ne[0] + 2*blck, ne[1] + 1, ne[2] + 1, ne[3]);
            // starts one block and one row in, with gaps after every row and plane
            return ggml_view_4d(ctx, base, ne[0], ne[1], ne[2], ne[3], base->nb[1], base->nb[2], base->nb[3],
                                base->nb[0] + base->nb[1]);
        }
        default:
            abort();
    }
}

//
// DUP, CPY, CONT
//

// out[k] = convert(src[k]) in row-major order, with the conversions above
static void check_copy(const struct ggml_tensor * out, const void * user) {
    const struct ggml_tensor * src = (const struct ggml_tensor *) user;
    const enum ggml_type st = src->type, dt = out->type;
    const int64_t n = ggml_nelements(out);
    CHECK_EQ_INT(n, ggml_nelements(src));
    int64_t bad = 0, first_bad = -1;
    if (st == dt) {
        const int64_t blck = ggml_blck_size(dt);
        for (int64_t k = 0; k < n; k += blck) {
            if (memcmp(at_k(out, k), at_k(src, k), ggml_type_size(dt)) != 0 && bad++ == 0) {
                first_bad = k;
            }
        }
    } else if (ggml_is_quantized(dt)) {
        const int64_t blck = ggml_blck_size(dt);
        float vals[256];
        char want[512];
        for (int64_t k = 0; k < n; k += blck) {
            for (int64_t j = 0; j < blck; j++) {
                vals[j] = (float) elem_value(st, at_k(src, k + j));
            }
            ggml_get_type_traits(dt)->from_float_ref(vals, want, blck);
            if (memcmp(at_k(out, k), want, ggml_type_size(dt)) != 0 && bad++ == 0) {
                first_bad = k;
            }
        }
    } else {
        for (int64_t k = 0; k < n; k++) {
            char want[8];
            if (ggml_is_quantized(st)) {
                const float v = value_f32(src, k);
                memcpy(want, &v, sizeof(v));
            } else {
                ref_store(dt, elem_value(st, at_k(src, k)), want);
            }
            if (!same_element(dt, at_k(out, k), want) && bad++ == 0) {
                first_bad = k;
            }
        }
    }
    CHECK_MSG(bad == 0, "%s -> %s: %lld wrong elements, first at %lld", ggml_type_name(st), ggml_type_name(dt),
              (long long) bad, (long long) first_bad);
}

static const enum ggml_type k_plain[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I8, GGML_TYPE_I16, GGML_TYPE_I32, GGML_TYPE_I64, GGML_TYPE_F64,
};
#define N_PLAIN ((int)(sizeof(k_plain) / sizeof(k_plain[0])))

static const enum ggml_type k_quant[] = {
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1,
};
#define N_QUANT ((int)(sizeof(k_quant) / sizeof(k_quant[0])))

// the conversions between different non-quantized types that CPY performs
static const enum ggml_type k_conversions[][2] = {
    { GGML_TYPE_F32,  GGML_TYPE_F16  }, { GGML_TYPE_F32,  GGML_TYPE_BF16 }, { GGML_TYPE_F32, GGML_TYPE_I32 },
    { GGML_TYPE_F16,  GGML_TYPE_F32  }, { GGML_TYPE_F16,  GGML_TYPE_BF16 },
    { GGML_TYPE_BF16, GGML_TYPE_F32  }, { GGML_TYPE_BF16, GGML_TYPE_F16  },
    { GGML_TYPE_I32,  GGML_TYPE_F32  },
};
#define N_CONVERSIONS ((int)(sizeof(k_conversions) / sizeof(k_conversions[0])))

static uint64_t g_seed = 1;

// CPY of src (shape ne_s, layout ls) into dst (shape ne_d, layout ld)
static void test_cpy_case(enum ggml_type st, const int64_t ne_s[4], enum layout ls,
                          enum ggml_type dt, const int64_t ne_d[4], enum layout ld) {
    struct ggml_context * ctx = tt_ctx_new(16);
    struct ggml_tensor * src = make_layout(ctx, st, ne_s, ls);
    struct ggml_tensor * dst = make_layout(ctx, dt, ne_d, ld);
    fill_any(src, g_seed++, true);
    struct ggml_tensor * out = ggml_cpy(ctx, src, dst);
    char what[256];
    snprintf(what, sizeof(what), "cpy %s [%lld,%lld,%lld,%lld] %s -> %s [%lld,%lld,%lld,%lld] %s",
             ggml_type_name(st), (long long) ne_s[0], (long long) ne_s[1], (long long) ne_s[2], (long long) ne_s[3],
             k_layout_names[ls], ggml_type_name(dt), (long long) ne_d[0], (long long) ne_d[1], (long long) ne_d[2],
             (long long) ne_d[3], k_layout_names[ld]);
    run_variants(ctx, out, what, check_copy, NULL, src);
    ggml_free(ctx);
}

// Every layout of src against every layout of dst, same shape; unless full,
// only the pairs where src or dst is contiguous or both have one layout.
static void test_cpy_layouts(enum ggml_type st, enum ggml_type dt, const int64_t ne[4], bool full) {
    for (int ls = 0; ls < L_COUNT; ls++) {
        for (int ld = 0; ld < L_COUNT; ld++) {
            const bool pick = full || ls == L_CONT || ld == L_CONT || ls == ld;
            if (pick && layout_ok((enum layout) ls, st) && layout_ok((enum layout) ld, dt)) {
                test_cpy_case(st, ne, (enum layout) ls, dt, ne, (enum layout) ld);
            }
        }
    }
}

static void test_cpy_pairs(void) {
    const int64_t ne_plain[4] = { 7, 5, 3, 2 };
    const int64_t ne_quant[4] = { 64, 3, 5, 2 };
    // the full layout matrix for one type of each element size and for the F32 <-> F16 and Q8_0 conversions
    for (int i = 0; i < N_PLAIN; i++) {
        const enum ggml_type t = k_plain[i];
        test_cpy_layouts(t, t, ne_plain, t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_I8 || t == GGML_TYPE_F64);
    }
    for (int i = 0; i < N_CONVERSIONS; i++) {
        test_cpy_layouts(k_conversions[i][0], k_conversions[i][1], ne_plain, i == 0 || i == 3);
    }
    const enum ggml_type to_quant[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    for (int q = 0; q < N_QUANT; q++) {
        const bool full = k_quant[q] == GGML_TYPE_Q8_0;
        test_cpy_layouts(k_quant[q], k_quant[q], ne_quant, full);
        test_cpy_layouts(k_quant[q], GGML_TYPE_F32, ne_quant, full);
        for (int i = 0; i < 3; i++) {
            test_cpy_layouts(to_quant[i], k_quant[q], ne_quant, full && i == 0);
        }
    }
}

// shapes differ: element k of src goes to element k of dst
static void test_cpy_reshaping(void) {
    const int64_t a[4] = { 6, 35, 2, 1 }, b[4] = { 35, 4, 3, 1 };
    const enum ggml_type same[][2] = {
        { GGML_TYPE_F32, GGML_TYPE_F32 }, { GGML_TYPE_F32, GGML_TYPE_F16 }, { GGML_TYPE_F16, GGML_TYPE_F32 },
        { GGML_TYPE_BF16, GGML_TYPE_F16 }, { GGML_TYPE_I32, GGML_TYPE_F32 }, { GGML_TYPE_I8, GGML_TYPE_I8 },
    };
    const enum layout ls[] = { L_CONT, L_TRANS, L_SCRAMBLE };
    const enum layout ld[] = { L_CONT, L_TRANS, L_OFFSET };
    for (int p = 0; p < 6; p++) {
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) {
                test_cpy_case(same[p][0], a, ls[i], same[p][1], b, ld[j]);
            }
        }
    }
    // quantized blocks that span rows of the other side
    const int64_t f[4] = { 48, 4, 2, 1 }, q[4] = { 64, 3, 2, 1 }, q2[4] = { 32, 12, 1, 1 };
    const enum layout lq[] = { L_CONT, L_OFFSET, L_PERM };
    for (int t = 0; t < N_QUANT; t++) {
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 2; j++) {
                test_cpy_case(GGML_TYPE_F32, f, ls[i] == L_SCRAMBLE ? L_OFFSET : ls[i], k_quant[t], q, lq[j]);
                test_cpy_case(GGML_TYPE_F16, f, ls[i] == L_SCRAMBLE ? L_OFFSET : ls[i], k_quant[t], q, lq[j]);
                test_cpy_case(k_quant[t], q, lq[j], GGML_TYPE_F32, f, ld[i]);
            }
            test_cpy_case(k_quant[t], q, lq[i], k_quant[t], q2, lq[i % 2]);
        }
    }
}

// long rows (vector loops and their tails) and tiles of transposed layouts
static void test_cpy_large(void) {
    const int64_t ne[4] = { 257, 33, 2, 1 };
    const enum ggml_type pairs[][2] = {
        { GGML_TYPE_F32, GGML_TYPE_F16 }, { GGML_TYPE_F16, GGML_TYPE_F32 }, { GGML_TYPE_F32, GGML_TYPE_BF16 },
        { GGML_TYPE_BF16, GGML_TYPE_F32 }, { GGML_TYPE_F32, GGML_TYPE_I32 }, { GGML_TYPE_I32, GGML_TYPE_F32 },
        { GGML_TYPE_F16, GGML_TYPE_BF16 }, { GGML_TYPE_BF16, GGML_TYPE_F16 }, { GGML_TYPE_F32, GGML_TYPE_F32 },
        { GGML_TYPE_F16, GGML_TYPE_F16 }, { GGML_TYPE_I8, GGML_TYPE_I8 }, { GGML_TYPE_F64, GGML_TYPE_F64 },
    };
    const enum layout combos[][2] = {
        { L_CONT, L_CONT }, { L_TRANS, L_CONT }, { L_CONT, L_TRANS }, { L_SCRAMBLE, L_CONT }, { L_PERM, L_OFFSET },
        { L_TRANS, L_TRANS }, { L_SCRAMBLE2, L_OFFSET }, { L_CONT, L_SCRAMBLE2 },
    };
    // tiles along dim 2 need it long
    const int64_t ne2[4] = { 67, 3, 70, 2 };
    // each pair with three of the layout combinations, each combination with several pairs
    for (int p = 0; p < 12; p++) {
        for (int k = 0; k < 3; k++) {
            const int c = (p + 3*k) % 8;
            const int64_t * shape = c < 6 ? ne : ne2;
            test_cpy_case(pairs[p][0], shape, combos[c][0], pairs[p][1], shape, combos[c][1]);
        }
    }
    const int64_t nq[4] = { 256, 9, 2, 1 };
    test_cpy_case(GGML_TYPE_F32, nq, L_CONT, GGML_TYPE_Q8_0, nq, L_CONT);
    test_cpy_case(GGML_TYPE_F32, nq, L_TRANS, GGML_TYPE_Q4_0, nq, L_CONT);
    test_cpy_case(GGML_TYPE_Q5_1, nq, L_CONT, GGML_TYPE_F32, nq, L_TRANS);
}

// DUP and CONT of every layout, CONT to another shape, CAST
static void test_dup_cont_cast(void) {
    const int64_t ne_plain[4] = { 7, 5, 3, 2 };
    const int64_t ne_quant[4] = { 64, 3, 5, 2 };
    for (int t = 0; t < N_PLAIN + N_QUANT; t++) {
        const enum ggml_type type = t < N_PLAIN ? k_plain[t] : k_quant[t - N_PLAIN];
        const int64_t * ne = ggml_is_quantized(type) ? ne_quant : ne_plain;
        for (int l = 0; l < L_COUNT; l++) {
            if (!layout_ok((enum layout) l, type)) {
                continue;
            }
            for (int op = 0; op < 3; op++) {
                struct ggml_context * ctx = tt_ctx_new(16);
                struct ggml_tensor * src = make_layout(ctx, type, ne, (enum layout) l);
                fill_any(src, g_seed++, true);
                struct ggml_tensor * out;
                const char * name;
                if (op == 0) {
                    out = ggml_dup(ctx, src);
                    name = "dup";
                } else if (op == 1) {
                    out = ggml_cont(ctx, src);
                    name = "cont";
                } else {
                    out = ggml_is_quantized(type) ? ggml_cont_2d(ctx, src, 32, ggml_nelements(src) / 32)
                                                  : ggml_cont_4d(ctx, src, 35, 3, 1, 2);
                    name = "cont_4d";
                }
                char what[128];
                snprintf(what, sizeof(what), "%s %s %s", name, ggml_type_name(type), k_layout_names[l]);
                run_variants(ctx, out, what, check_copy, NULL, src);
                ggml_free(ctx);
            }
        }
    }
    // casts: CPY into the result itself
    const enum ggml_type casts[][2] = {
        { GGML_TYPE_F32, GGML_TYPE_F16 }, { GGML_TYPE_F32, GGML_TYPE_I32 }, { GGML_TYPE_I32, GGML_TYPE_F32 },
        { GGML_TYPE_BF16, GGML_TYPE_F32 }, { GGML_TYPE_F32, GGML_TYPE_Q8_0 }, { GGML_TYPE_Q4_1, GGML_TYPE_F32 },
    };
    for (int c = 0; c < 6; c++) {
        struct ggml_context * ctx = tt_ctx_new(16);
        const bool q = ggml_is_quantized(casts[c][0]) || ggml_is_quantized(casts[c][1]);
        struct ggml_tensor * src = make_layout(ctx, casts[c][0], q ? ne_quant : ne_plain, q ? L_PERM : L_TRANS);
        fill_any(src, g_seed++, true);
        struct ggml_tensor * out = ggml_cast(ctx, src, casts[c][1]);
        char what[64];
        snprintf(what, sizeof(what), "cast %s -> %s", ggml_type_name(casts[c][0]), ggml_type_name(casts[c][1]));
        run_variants(ctx, out, what, check_copy, NULL, src);
        ggml_free(ctx);
    }
}

// DUP in place copies a tensor onto itself: nothing may change
struct inplace_case {
    struct ggml_tensor * src;
    char * saved;
};

static void prepare_inplace(void * user) {
    struct inplace_case * c = (struct inplace_case *) user;
    memcpy(c->src->data, c->saved, ggml_nbytes(c->src));
}

static void check_inplace(const struct ggml_tensor * out, const void * user) {
    const struct inplace_case * c = (const struct inplace_case *) user;
    CHECK(out->data == c->src->data);
    CHECK(memcmp(c->src->data, c->saved, ggml_nbytes(c->src)) == 0);
}

// CPY of a tensor into a reshape of itself: the same memory, nothing to move
static void test_cpy_onto_itself(void) {
    struct ggml_context * ctx = tt_ctx_new(4);
    struct ggml_tensor * src = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 33, 4, 3);
    fill_any(src, g_seed++, true);
    struct inplace_case c = { .src = src, .saved = (char *) malloc(ggml_nbytes(src)) };
    memcpy(c.saved, src->data, ggml_nbytes(src));
    run_variants(ctx, ggml_cpy(ctx, src, ggml_reshape_2d(ctx, src, 66, 6)), "cpy onto a reshape of itself",
                 check_inplace, prepare_inplace, &c);
    free(c.saved);
    ggml_free(ctx);
}

// same-type copies move blocks of any type as bytes, also types without conversions
static void test_cpy_opaque_blocks(void) {
    const int64_t ne[4] = { 512, 3, 2, 2 }, ne2[4] = { 256, 24, 1, 1 };
    const enum layout ls[] = { L_CONT, L_PERM, L_OFFSET }, ld[] = { L_OFFSET, L_CONT, L_PERM };
    for (int k = 0; k < 3; k++) {
        struct ggml_context * ctx = tt_ctx_new(4);
        struct ggml_tensor * src = make_layout(ctx, GGML_TYPE_Q4_K, ne, ls[k]);
        struct ggml_tensor * dst = make_layout(ctx, GGML_TYPE_Q4_K, k == 1 ? ne2 : ne, k == 1 ? L_CONT : ld[k]);
        struct ggml_tensor * root = root_of(src);
        uint64_t state = g_seed++;
        for (size_t i = 0; i < ggml_nbytes(root); i++) {
            ((unsigned char *) root->data)[i] = (unsigned char) tt_rand_u64(&state);
        }
        char what[64];
        snprintf(what, sizeof(what), "cpy q4_K %s -> %s", k_layout_names[ls[k]], k_layout_names[ld[k]]);
        run_variants(ctx, ggml_cpy(ctx, src, dst), what, check_copy, NULL, src);
        ggml_free(ctx);
    }
}

static void test_dup_inplace(void) {
    struct ggml_context * ctx = tt_ctx_new(4);
    struct ggml_tensor * src = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 33, 4, 3);
    fill_any(src, g_seed++, true);
    struct inplace_case c = { .src = src, .saved = (char *) malloc(ggml_nbytes(src)) };
    memcpy(c.saved, src->data, ggml_nbytes(src));
    run_variants(ctx, ggml_dup_inplace(ctx, src), "dup_inplace", check_inplace, prepare_inplace, &c);
    free(c.saved);
    ggml_free(ctx);
}

//
// GET_ROWS
//

struct rows_case {
    const struct ggml_tensor * data;
    const struct ggml_tensor * idx;
    const struct ggml_tensor * dst;  // SET_ROWS: the destination a
    const unsigned char      * saved; // SET_ROWS: a's root before the op
};

static int64_t index_at(const struct ggml_tensor * idx, int64_t i0, int64_t i1, int64_t i2) {
    const char * p = at(idx, i0, i1, i2, 0);
    if (idx->type == GGML_TYPE_I64) {
        int64_t v;
        memcpy(&v, p, sizeof(v));
        return v;
    }
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

// element i0 of row (i1, i2, i3) of t as float (exact; quantized: the reference dequantization)
static float row_value(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    if (ggml_is_quantized(t->type)) {
        const int64_t blck = ggml_blck_size(t->type);
        float vals[256];
        ggml_get_type_traits(t->type)->to_float(at(t, i0, i1, i2, i3), vals, blck);
        return vals[i0 % blck];
    }
    return (float) elem_value(t->type, at(t, i0, i1, i2, i3));
}

static void check_get_rows(const struct ggml_tensor * out, const void * user) {
    const struct rows_case * c = (const struct rows_case *) user;
    const struct ggml_tensor * a = c->data, * b = c->idx;
    int64_t bad = 0;
    for (int64_t i12 = 0; i12 < b->ne[2]; i12++)
    for (int64_t i11 = 0; i11 < b->ne[1]; i11++)
    for (int64_t i10 = 0; i10 < b->ne[0]; i10++) {
        const int64_t r = index_at(b, i10, i11, i12);
        for (int64_t i0 = 0; i0 < a->ne[0]; i0++) {
            const char * got = at(out, i0, i10, i11, i12);
            if (a->type == GGML_TYPE_I32) {
                bad += memcmp(got, at(a, i0, r, i11, i12), 4) != 0;
            } else {
                const float v = row_value(a, i0, r, i11, i12);
                bad += !same_element(GGML_TYPE_F32, got, (const char *) &v);
            }
        }
    }
    CHECK_MSG(bad == 0, "get_rows %s: %lld wrong elements", ggml_type_name(a->type), (long long) bad);
}

static void test_get_rows_case(enum ggml_type type, const int64_t ne[4], enum layout la, const int64_t ne_idx[3], enum layout li) {
    struct ggml_context * ctx = tt_ctx_new(16);
    struct ggml_tensor * a = make_layout(ctx, type, ne, la);
    fill_any(a, g_seed++, true);
    const int64_t ne_i[4] = { ne_idx[0], ne_idx[1], ne_idx[2], 1 };
    struct ggml_tensor * b = make_layout(ctx, GGML_TYPE_I32, ne_i, li);
    tt_fill_int(b, 0, ne[1] - 1, g_seed++);
    struct ggml_tensor * out = ggml_get_rows(ctx, a, b);
    struct rows_case c = { .data = a, .idx = b, .dst = NULL, .saved = NULL };
    char what[128];
    snprintf(what, sizeof(what), "get_rows %s %s [%lld], idx %s", ggml_type_name(type), k_layout_names[la],
             (long long) ne[0], k_layout_names[li]);
    run_variants(ctx, out, what, check_get_rows, NULL, &c);
    ggml_free(ctx);
}

static void test_get_rows(void) {
    const enum ggml_type types[] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32,
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1,
    };
    const int64_t ne_plain[4] = { 7, 9, 2, 3 }, ne_quant[4] = { 64, 9, 2, 3 }, ne_idx[3] = { 5, 2, 3 };
    const enum layout li[] = { L_CONT, L_TRANS, L_OFFSET };
    for (int t = 0; t < 10; t++) {
        const bool q = ggml_is_quantized(types[t]);
        for (int la = 0; la < L_COUNT; la++) {
            if (layout_ok((enum layout) la, types[t])) {
                test_get_rows_case(types[t], q ? ne_quant : ne_plain, (enum layout) la, ne_idx, li[la % 3]);
            }
        }
    }
    // embedding-like: long rows, one index list
    const int64_t ne_long[4] = { 257, 40, 1, 1 }, ne_long_q[4] = { 512, 40, 1, 1 }, ne_idx1[3] = { 13, 1, 1 };
    test_get_rows_case(GGML_TYPE_F16,  ne_long, L_CONT, ne_idx1, L_CONT);
    test_get_rows_case(GGML_TYPE_BF16, ne_long, L_CONT, ne_idx1, L_CONT);
    test_get_rows_case(GGML_TYPE_F32,  ne_long, L_TRANS, ne_idx1, L_CONT);
    test_get_rows_case(GGML_TYPE_Q4_0, ne_long_q, L_CONT, ne_idx1, L_OFFSET);
}

//
// SET_ROWS
//

// a's root after the op: rows of a named by the indices replaced with the converted rows of b
static void check_set_rows(const struct ggml_tensor * out, const void * user) {
    const struct rows_case * c = (const struct rows_case *) user;
    const struct ggml_tensor * a = c->dst, * b = c->data, * idx = c->idx;
    const struct ggml_tensor * root = root_of((struct ggml_tensor *) a);
    CHECK(out->data == a->data);

    const size_t n = ggml_nbytes(root);
    unsigned char * want = (unsigned char *) malloc(n);
    memcpy(want, c->saved, n);
    const int64_t nc = b->ne[0], blck = ggml_blck_size(a->type);
    float * vals = (float *) malloc(sizeof(float) * (size_t) nc);
    for (int64_t i03 = 0; i03 < b->ne[3]; i03++)
    for (int64_t i02 = 0; i02 < b->ne[2]; i02++)
    for (int64_t i = 0; i < b->ne[1]; i++) {
        const int64_t i1 = index_at(idx, i, i02 % idx->ne[1], i03 % idx->ne[2]);
        const size_t row = (size_t)(at(a, 0, i1, i02, i03) - (char *) root->data);
        for (int64_t i0 = 0; i0 < nc; i0++) {
            vals[i0] = (float) elem_value(b->type, at(b, i0, i, i02, i03));
        }
        if (ggml_is_quantized(a->type)) {
            ggml_get_type_traits(a->type)->from_float_ref(vals, want + row, nc);
        } else {
            for (int64_t i0 = 0; i0 < nc; i0++) {
                ref_store(a->type, vals[i0], (char *) want + row + (size_t)(i0 / blck) * a->nb[0]);
            }
        }
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += want[i] != ((const unsigned char *) root->data)[i];
    }
    CHECK_MSG(bad == 0, "set_rows %s -> %s: %zu wrong bytes", ggml_type_name(b->type), ggml_type_name(a->type), bad);
    free(vals);
    free(want);
}

static void prepare_set_rows(void * user) {
    const struct rows_case * c = (const struct rows_case *) user;
    const struct ggml_tensor * root = root_of((struct ggml_tensor *) c->dst);
    memcpy(root->data, c->saved, ggml_nbytes(root));
}

// distinct indices in [0, n) for every (i1, i2) of idx, so that every row has one writer
static void fill_distinct_indices(struct ggml_tensor * idx, int64_t n, uint64_t seed) {
    uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 3;
    int64_t * perm = (int64_t *) malloc(sizeof(int64_t) * (size_t) n);
    for (int64_t i2 = 0; i2 < idx->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < idx->ne[1]; i1++) {
        for (int64_t i = 0; i < n; i++) {
            perm[i] = i;
        }
        for (int64_t i = n - 1; i > 0; i--) {
            const int64_t j = (int64_t)(tt_rand_u64(&state) % (uint64_t)(i + 1));
            const int64_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
        }
        for (int64_t i0 = 0; i0 < idx->ne[0]; i0++) {
            char * p = at(idx, i0, i1, i2, 0);
            if (idx->type == GGML_TYPE_I64) {
                memcpy(p, &perm[i0], sizeof(int64_t));
            } else {
                const int32_t v = (int32_t) perm[i0];
                memcpy(p, &v, sizeof(v));
            }
        }
    }
    free(perm);
}

static void test_set_rows_case(enum ggml_type dt, enum ggml_type st, enum ggml_type it, int64_t nc,
                               const int64_t ne_idx[3], enum layout la, enum layout lb) {
    struct ggml_context * ctx = tt_ctx_new(16);
    const int64_t ne_a[4] = { nc, 11, 4, 2 }, ne_b[4] = { nc, ne_idx[0], 4, 2 };
    struct ggml_tensor * a = make_layout(ctx, dt, ne_a, la);
    struct ggml_tensor * b = make_layout(ctx, st, ne_b, lb);
    const int64_t ne_i[4] = { ne_idx[0], ne_idx[1], ne_idx[2], 1 };
    struct ggml_tensor * idx = ggml_new_tensor(ctx, it, 4, ne_i);
    fill_any(a, g_seed++, false);
    fill_any(b, g_seed++, true);
    fill_distinct_indices(idx, ne_a[1], g_seed++);

    const struct ggml_tensor * root = root_of(a);
    unsigned char * saved = (unsigned char *) malloc(ggml_nbytes(root));
    memcpy(saved, root->data, ggml_nbytes(root));

    struct ggml_tensor * out = ggml_set_rows(ctx, a, b, idx);
    struct rows_case c = { .data = b, .idx = idx, .dst = a, .saved = saved };
    char what[160];
    snprintf(what, sizeof(what), "set_rows %s %s -> %s %s, %s [%lld,%lld,%lld]", ggml_type_name(st), k_layout_names[lb],
             ggml_type_name(dt), k_layout_names[la], ggml_type_name(it), (long long) ne_idx[0], (long long) ne_idx[1],
             (long long) ne_idx[2]);
    run_variants(ctx, out, what, check_set_rows, prepare_set_rows, &c);
    free(saved);
    ggml_free(ctx);
}

static void test_set_rows(void) {
    const enum ggml_type dts[] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_I32,
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1,
    };
    const int64_t bcast[][3] = { { 5, 1, 1 }, { 5, 2, 1 }, { 5, 4, 2 }, { 11, 2, 2 } };
    const enum layout layouts[] = { L_CONT, L_OFFSET, L_PERM };
    int k = 0;
    for (int d = 0; d < 10; d++) {
        const int64_t nc = ggml_is_quantized(dts[d]) ? 64 : 33;
        for (int s = 0; s < 2; s++) {
            const enum ggml_type st = s == 0 ? GGML_TYPE_F32 : GGML_TYPE_F16;
            for (int b = 0; b < 4; b++, k++) {
                test_set_rows_case(dts[d], st, (b + s) % 2 == 0 ? GGML_TYPE_I32 : GGML_TYPE_I64, nc, bcast[b],
                                   layouts[k % 3], layouts[(k / 3) % 3]);
            }
        }
    }
    // long rows for the vector paths
    const int64_t one[3] = { 5, 1, 1 };
    test_set_rows_case(GGML_TYPE_F16,  GGML_TYPE_F32, GGML_TYPE_I64, 257, one, L_CONT, L_CONT);
    test_set_rows_case(GGML_TYPE_BF16, GGML_TYPE_F16, GGML_TYPE_I32, 257, one, L_CONT, L_CONT);
    test_set_rows_case(GGML_TYPE_Q8_0, GGML_TYPE_F16, GGML_TYPE_I32, 2048 + 64, one, L_CONT, L_CONT);
}

// with one thread, a repeated index keeps the row written last
static void test_set_rows_repeated(void) {
    struct ggml_context * ctx = tt_ctx_new(4);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 3);
    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    ggml_set_f32(a, -1.0f);
    for (int i = 0; i < 9; i++) {
        ((float *) b->data)[i] = (float) i;
    }
    const int32_t rows[3] = { 2, 0, 2 };
    memcpy(idx->data, rows, sizeof(rows));
    struct ggml_tensor * out = ggml_set_rows(ctx, a, b, idx);
    CHECK(tt_compute(ctx, out, 1) == GGML_STATUS_SUCCESS);
    const float * r = (const float *) a->data;
    CHECK(r[0] == 3.0f && r[2] == 5.0f);   // row 0 <- b row 1
    CHECK(r[3] == -1.0f && r[5] == -1.0f); // row 1 untouched
    CHECK(r[6] == 6.0f && r[8] == 8.0f);   // row 2 <- b row 2, written after b row 0
    ggml_free(ctx);
}

//
// SET
//

struct set_case {
    struct ggml_tensor * a;
    struct ggml_tensor * b;
    size_t nb1, nb2, nb3, offset;
    unsigned char * saved; // a's bytes (in-place cases)
};

// dst (contiguous, a's shape) = a, then the window at offset with strides (element, nb1, nb2, nb3) = b
static void check_set(const struct ggml_tensor * out, const void * user) {
    const struct set_case * c = (const struct set_case *) user;
    const size_t es = ggml_type_size(out->type), n = ggml_nbytes(out);
    CHECK(ggml_is_contiguous(out));
    char * want = (char *) malloc(n);
    const int64_t na = ggml_nelements(c->a);
    for (int64_t k = 0; k < na; k++) {
        memcpy(want + (size_t) k*es, c->saved != NULL ? (const char *) c->saved + (size_t) k*es : at_k(c->a, k), es);
    }
    for (int64_t k = 0; k < ggml_nelements(c->b); k++) {
        int64_t j[4];
        unravel(c->b, k, j);
        const size_t p = c->offset + (size_t) j[0]*es + (size_t) j[1]*c->nb1 + (size_t) j[2]*c->nb2 + (size_t) j[3]*c->nb3;
        if (c->b->type == out->type) {
            memcpy(want + p, at_k(c->b, k), es);
        } else {
            ref_store(out->type, elem_value(c->b->type, at_k(c->b, k)), want + p);
        }
    }
    CHECK_MSG(memcmp(want, out->data, n) == 0, "set %s <- %s: wrong bytes", ggml_type_name(out->type), ggml_type_name(c->b->type));
    free(want);
}

static void prepare_set(void * user) {
    const struct set_case * c = (const struct set_case *) user;
    memcpy(c->a->data, c->saved, ggml_nbytes(c->a));
}

enum set_kind { SET_4D, SET_1D, SET_2D, SET_SPARSE };

static void test_set_case(enum ggml_type type, enum ggml_type btype, enum layout la, enum layout lb, enum set_kind kind, bool inplace) {
    struct ggml_context * ctx = tt_ctx_new(16);
    const int64_t ne_a[4] = { 9, 7, 4, 3 };
    struct ggml_tensor * a = make_layout(ctx, type, ne_a, la);
    fill_any(a, g_seed++, false);
    const size_t es = ggml_type_size(type);
    // strides of dst, which is contiguous with a's shape
    const size_t r1 = es * 9, r2 = r1 * 7, r3 = r2 * 4;
    struct set_case c = { .a = a, .b = NULL, .nb1 = r1, .nb2 = r2, .nb3 = r3, .offset = 0, .saved = NULL };
    struct ggml_tensor * out = NULL;
    const char * name = "";
    switch (kind) {
        case SET_4D: {
            const int64_t ne_b[4] = { 4, 3, 2, 2 };
            c.b = make_layout(ctx, btype, ne_b, lb);
            c.offset = es * 1 + r1 * 2 + r2 * 1 + r3 * 0;
            name = "set";
        } break;
        case SET_1D: {
            const int64_t ne_b[4] = { 10, 1, 1, 1 };
            c.b = make_layout(ctx, btype, ne_b, lb == L_TRANS ? L_CONT : lb);
            c.offset = es * 5;
            name = "set_1d";
        } break;
        case SET_2D: {
            const int64_t ne_b[4] = { 3, 4, 1, 1 };
            c.b = make_layout(ctx, btype, ne_b, lb);
            c.offset = es * 2 + r1;
            name = "set_2d";
        } break;
        case SET_SPARSE: {
            // every other row, planes overlapping nothing
            const int64_t ne_b[4] = { 5, 3, 2, 1 };
            c.b = make_layout(ctx, btype, ne_b, lb);
            c.nb1 = 2 * r1;
            c.nb2 = r2 + es;
            c.offset = r3 + es * 3;
            name = "set (sparse window)";
        } break;
    }
    fill_any(c.b, g_seed++, true);
    if (kind == SET_1D) {
        out = inplace ? ggml_set_1d_inplace(ctx, a, c.b, c.offset) : ggml_set_1d(ctx, a, c.b, c.offset);
    } else if (kind == SET_2D) {
        out = inplace ? ggml_set_2d_inplace(ctx, a, c.b, c.nb1, c.offset) : ggml_set_2d(ctx, a, c.b, c.nb1, c.offset);
    } else {
        out = inplace ? ggml_set_inplace(ctx, a, c.b, c.nb1, c.nb2, c.nb3, c.offset)
                      : ggml_set(ctx, a, c.b, c.nb1, c.nb2, c.nb3, c.offset);
    }
    if (inplace) {
        c.saved = (unsigned char *) malloc(ggml_nbytes(a));
        memcpy(c.saved, a->data, ggml_nbytes(a));
    }
    char what[128];
    snprintf(what, sizeof(what), "%s%s %s %s <- %s %s", name, inplace ? " in place" : "", ggml_type_name(type),
             k_layout_names[la], ggml_type_name(btype), k_layout_names[lb]);
    run_variants(ctx, out, what, check_set, inplace ? prepare_set : NULL, &c);
    free(c.saved);
    ggml_free(ctx);
}

static void test_set(void) {
    for (int t = 0; t < N_PLAIN; t++) {
        for (int kind = 0; kind < 4; kind++) {
            test_set_case(k_plain[t], k_plain[t], L_CONT, L_CONT, (enum set_kind) kind, false);
            test_set_case(k_plain[t], k_plain[t], L_CONT, L_TRANS, (enum set_kind) kind, true);
            test_set_case(k_plain[t], k_plain[t], L_SCRAMBLE, L_OFFSET, (enum set_kind) kind, false);
        }
    }
    test_set_case(GGML_TYPE_F32, GGML_TYPE_F16, L_TRANS, L_TRANS, SET_4D, false);
    test_set_case(GGML_TYPE_F16, GGML_TYPE_F32, L_CONT, L_CONT, SET_2D, true);
}

//
// REPEAT
//

static void check_repeat(const struct ggml_tensor * out, const void * user) {
    const struct ggml_tensor * a = (const struct ggml_tensor *) user;
    int64_t bad = 0;
    for (int64_t k = 0; k < ggml_nelements(out); k++) {
        int64_t i[4];
        unravel(out, k, i);
        bad += memcmp(at(out, i[0], i[1], i[2], i[3]),
                      at(a, i[0] % a->ne[0], i[1] % a->ne[1], i[2] % a->ne[2], i[3] % a->ne[3]), ggml_type_size(a->type)) != 0;
    }
    CHECK_MSG(bad == 0, "repeat %s: %lld wrong elements", ggml_type_name(a->type), (long long) bad);
}

static void test_repeat(void) {
    const int64_t shapes[][2][4] = {
        { { 3, 2, 1, 2 }, { 12, 4, 3, 2 } },
        { { 1, 1, 1, 1 }, { 7, 5, 3, 2 } },
        { { 5, 1, 3, 1 }, { 10, 4, 3, 2 } },
        { { 7, 5, 3, 2 }, { 7, 5, 3, 2 } },
        { { 1, 3, 1, 1 }, { 257, 6, 1, 1 } },
    };
    const enum layout layouts[] = { L_CONT, L_TRANS, L_OFFSET, L_SCRAMBLE };
    for (int t = 0; t < N_PLAIN; t++) {
        for (int s = 0; s < 5; s++) {
            for (int l = 0; l < 4; l++) {
                struct ggml_context * ctx = tt_ctx_new(16);
                struct ggml_tensor * a = make_layout(ctx, k_plain[t], shapes[s][0], layouts[l]);
                fill_any(a, g_seed++, true);
                const int64_t * ne = shapes[s][1];
                struct ggml_tensor * out = (s + l) % 2 ? ggml_repeat_4d(ctx, a, ne[0], ne[1], ne[2], ne[3])
                                                       : ggml_repeat(ctx, a, ggml_new_tensor(ctx, k_plain[t], 4, ne));
                char what[96];
                snprintf(what, sizeof(what), "repeat %s %s shape %d", ggml_type_name(k_plain[t]), k_layout_names[layouts[l]], s);
                run_variants(ctx, out, what, check_repeat, NULL, a);
                ggml_free(ctx);
            }
        }
    }
}

//
// CONCAT
//

struct concat_case {
    const struct ggml_tensor * a;
    const struct ggml_tensor * b;
    int dim;
};

static void check_concat(const struct ggml_tensor * out, const void * user) {
    const struct concat_case * c = (const struct concat_case *) user;
    const int64_t blck = ggml_blck_size(out->type);
    int64_t bad = 0;
    for (int64_t k = 0; k < ggml_nelements(out); k += blck) {
        int64_t i[4];
        unravel(out, k, i);
        const char * got = at(out, i[0], i[1], i[2], i[3]);
        const struct ggml_tensor * src = c->a;
        if (i[c->dim] >= c->a->ne[c->dim]) {
            i[c->dim] -= c->a->ne[c->dim];
            src = c->b;
        }
        bad += memcmp(got, at(src, i[0], i[1], i[2], i[3]), ggml_type_size(out->type)) != 0;
    }
    CHECK_MSG(bad == 0, "concat %s dim %d: %lld wrong elements", ggml_type_name(out->type), c->dim, (long long) bad);
}

static void test_concat(void) {
    const enum layout combos[][2] = { { L_CONT, L_CONT }, { L_TRANS, L_OFFSET }, { L_SCRAMBLE, L_CONT }, { L_OFFSET, L_PERM } };
    for (int t = 0; t < N_PLAIN + N_QUANT; t++) {
        const enum ggml_type type = t < N_PLAIN ? k_plain[t] : k_quant[t - N_PLAIN];
        const bool q = ggml_is_quantized(type);
        for (int dim = 0; dim < 4; dim++) {
            for (int l = 0; l < 4; l++) {
                enum layout la = combos[l][0], lb = combos[l][1];
                if (q) {
                    la = layout_ok(la, type) ? la : L_PERM;
                    lb = layout_ok(lb, type) ? lb : L_OFFSET;
                }
                int64_t ne_a[4] = { q ? 64 : 7, 5, 3, 2 }, ne_b[4] = { q ? 64 : 7, 5, 3, 2 };
                ne_a[dim] = dim == 0 && q ? 64 : 3;
                ne_b[dim] = dim == 0 && q ? 32 : 4;
                struct ggml_context * ctx = tt_ctx_new(16);
                struct ggml_tensor * a = make_layout(ctx, type, ne_a, la);
                struct ggml_tensor * b = make_layout(ctx, type, ne_b, lb);
                fill_any(a, g_seed++, true);
                fill_any(b, g_seed++, true);
                struct concat_case c = { .a = a, .b = b, .dim = dim };
                char what[96];
                snprintf(what, sizeof(what), "concat %s dim %d %s + %s", ggml_type_name(type), dim, k_layout_names[la], k_layout_names[lb]);
                run_variants(ctx, ggml_concat(ctx, a, b, dim), what, check_concat, NULL, &c);
                ggml_free(ctx);
            }
        }
    }
}

//
// PAD
//

struct pad_case {
    const struct ggml_tensor * a;
    int lp[4];
    bool circular;
};

static int64_t wrap(int64_t i, int64_t n) {
    return ((i % n) + n) % n;
}

static void check_pad(const struct ggml_tensor * out, const void * user) {
    const struct pad_case * c = (const struct pad_case *) user;
    const size_t es = ggml_type_size(out->type);
    const char zero[8] = { 0 };
    int64_t bad = 0;
    for (int64_t k = 0; k < ggml_nelements(out); k++) {
        int64_t i[4], j[4];
        unravel(out, k, i);
        bool inside = true;
        for (int d = 0; d < 4; d++) {
            j[d] = c->circular ? wrap(i[d] - c->lp[d], c->a->ne[d]) : i[d] - c->lp[d];
            inside = inside && j[d] >= 0 && j[d] < c->a->ne[d];
        }
        const char * want = inside ? at(c->a, j[0], j[1], j[2], j[3]) : zero;
        bad += memcmp(at(out, i[0], i[1], i[2], i[3]), want, es) != 0;
    }
    CHECK_MSG(bad == 0, "pad %s: %lld wrong elements", ggml_type_name(out->type), (long long) bad);
}

static void test_pad(void) {
    const int pads[][8] = {
        { 0, 3, 0, 0, 0, 1, 0, 2 },  // ggml_pad
        { 1, 2, 0, 3, 2, 0, 1, 1 },
        { 0, 0, 0, 0, 0, 0, 0, 0 },
        { -2, 1, 1, -1, 0, 0, 0, 1 }, // negative padding crops
        { 9, 4, 6, 2, 1, 3, 0, 0 },  // wider than the source (wraps more than once when circular)
    };
    const enum layout layouts[] = { L_CONT, L_TRANS, L_OFFSET };
    for (int t = 0; t < N_PLAIN; t++) {
        for (int p = 0; p < 5; p++) {
            for (int circular = 0; circular < 2; circular++) {
                const enum layout l = layouts[(p + circular) % 3];
                const int * v = pads[p];
                if (circular && p == 3) {
                    continue;
                }
                struct ggml_context * ctx = tt_ctx_new(16);
                const int64_t ne[4] = { 7, 5, 3, 2 };
                struct ggml_tensor * a = make_layout(ctx, k_plain[t], ne, l);
                fill_any(a, g_seed++, true);
                struct ggml_tensor * out = p == 0 ? ggml_pad(ctx, a, v[1], v[3], v[5], v[7])
                                                  : ggml_pad_ext(ctx, a, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
                if (circular) {
                    ggml_set_op_params_i32(out, 8, 1); // no constructor sets it yet; the kernel follows upstream
                }
                struct pad_case c = { .a = a, .lp = { v[0], v[2], v[4], v[6] }, .circular = circular != 0 };
                char what[96];
                snprintf(what, sizeof(what), "pad %s %s case %d%s", ggml_type_name(k_plain[t]), k_layout_names[l], p,
                         circular ? " circular" : "");
                run_variants(ctx, out, what, check_pad, NULL, &c);
                ggml_free(ctx);
            }
        }
    }
}

//
// ARANGE
//

static void check_arange(const struct ggml_tensor * out, const void * user) {
    const float * p = (const float *) user; // start, step
    int64_t bad = 0;
    for (int64_t i = 0; i < out->ne[0]; i++) {
        const double want = (double) p[0] + (double) p[1] * (double) i;
        const double got  = ((const float *) out->data)[i];
        // one rounding of step*i and one of the sum
        const double tol = 2.0 * FLT_EPSILON * (fabs((double) p[0]) + fabs((double) p[1] * (double) i) + fabs(want));
        bad += !(fabs(got - want) <= tol);
    }
    CHECK_MSG(bad == 0, "arange(%g, step %g): %lld wrong values", (double) p[0], (double) p[1], (long long) bad);
}

static void test_arange(void) {
    const float cases[][3] = { { 0.0f, 10.0f, 1.0f }, { -3.5f, 7.25f, 0.37f }, { 1.0f, 1000.5f, 0.5f }, { 5.0f, 5.5f, 2.0f } };
    for (int c = 0; c < 4; c++) {
        struct ggml_context * ctx = tt_ctx_new(1);
        struct ggml_tensor * out = ggml_arange(ctx, cases[c][0], cases[c][1], cases[c][2]);
        CHECK_EQ_INT(out->ne[0], (int64_t) ceil(((double) cases[c][1] - cases[c][0]) / cases[c][2]));
        const float user[2] = { cases[c][0], cases[c][2] };
        run_variants(ctx, out, "arange", check_arange, NULL, (void *) user);
        ggml_free(ctx);
    }
}

//
// what the CPU backend declines, and API misuse
//

static void check_unsupported(struct ggml_tensor * op, const char * what) {
    CHECK_MSG(!ggml_backend_dev_supports_op(cpu_dev(), op), "%s: reported as supported", what);
}

static void test_unsupported(void) {
    struct ggml_init_params ip = { 1024 * 1024, NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    const enum ggml_type no_cpy[][2] = {
        { GGML_TYPE_F16, GGML_TYPE_I32 },  { GGML_TYPE_I32, GGML_TYPE_F16 },   { GGML_TYPE_BF16, GGML_TYPE_I32 },
        { GGML_TYPE_I16, GGML_TYPE_F32 },  { GGML_TYPE_F32, GGML_TYPE_I16 },   { GGML_TYPE_F64, GGML_TYPE_F32 },
        { GGML_TYPE_F32, GGML_TYPE_F64 },  { GGML_TYPE_I64, GGML_TYPE_I32 },   { GGML_TYPE_Q8_0, GGML_TYPE_F16 },
        { GGML_TYPE_Q8_0, GGML_TYPE_Q4_0 }, { GGML_TYPE_F32, GGML_TYPE_Q8_K },  { GGML_TYPE_I32, GGML_TYPE_Q8_0 },
        { GGML_TYPE_Q8_K, GGML_TYPE_F32 },
    };
    for (int i = 0; i < (int)(sizeof(no_cpy) / sizeof(no_cpy[0])); i++) {
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, no_cpy[i][0], 256, 2);
        struct ggml_tensor * b = ggml_new_tensor_2d(ctx, no_cpy[i][1], 256, 2);
        char what[64];
        snprintf(what, sizeof(what), "cpy %s -> %s", ggml_type_name(no_cpy[i][0]), ggml_type_name(no_cpy[i][1]));
        check_unsupported(ggml_cpy(ctx, a, b), what);
    }
    // quantized blocks must be contiguous along dim 0 on a converting side
    struct ggml_tensor * qt = ggml_transpose(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 64));
    check_unsupported(ggml_cpy(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 64), qt), "cpy f32 -> transposed q8_0");
    check_unsupported(ggml_cpy(ctx, qt, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 64)), "cpy transposed q8_0 -> f32");

    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    const enum ggml_type no_get[] = { GGML_TYPE_F64, GGML_TYPE_I16, GGML_TYPE_I8, GGML_TYPE_I64, GGML_TYPE_Q8_K };
    for (int i = 0; i < 5; i++) {
        check_unsupported(ggml_get_rows(ctx, ggml_new_tensor_2d(ctx, no_get[i], 256, 4), idx), ggml_type_name(no_get[i]));
    }
    const enum ggml_type no_set[] = { GGML_TYPE_F64, GGML_TYPE_I16, GGML_TYPE_I8, GGML_TYPE_I64, GGML_TYPE_Q8_K };
    for (int i = 0; i < 5; i++) {
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, no_set[i], 256, 4);
        check_unsupported(ggml_set_rows(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 256, 3), idx), ggml_type_name(no_set[i]));
    }
    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 4);
    check_unsupported(ggml_set_1d(ctx, q, ggml_new_tensor_1d(ctx, GGML_TYPE_Q8_0, 32), 0), "set q8_0");
    check_unsupported(ggml_set_1d(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64), ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 8), 0),
                      "set f32 <- i8");
    check_unsupported(ggml_repeat_4d(ctx, q, 128, 4, 1, 1), "repeat q8_0");
    check_unsupported(ggml_pad(ctx, q, 32, 1, 0, 0), "pad q8_0");
    ggml_free(ctx);
}

static struct ggml_tensor * index_tensor(struct ggml_context * ctx, enum ggml_type type, int64_t value) {
    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, type, 2);
    if (type == GGML_TYPE_I64) {
        ((int64_t *) idx->data)[0] = 0;
        ((int64_t *) idx->data)[1] = value;
    } else {
        ((int32_t *) idx->data)[0] = 0;
        ((int32_t *) idx->data)[1] = (int32_t) value;
    }
    return idx;
}

static void compute_one_thread(struct ggml_context * ctx, struct ggml_tensor * out) {
    tt_compute(ctx, out, 1);
}

static void test_misuse(void) {
    struct ggml_context * ctx = tt_ctx_new(4);
    struct ggml_tensor * data = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 6);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 6);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2);
    ggml_set_f32(data, 1.0f);
    ggml_set_f32(b, 2.0f);

    CHECK_ABORTS("get_rows: row index 6 out of range",
                 compute_one_thread(ctx, ggml_get_rows(ctx, data, index_tensor(ctx, GGML_TYPE_I32, 6))));
    CHECK_ABORTS("get_rows: row index -1 out of range",
                 compute_one_thread(ctx, ggml_get_rows(ctx, data, index_tensor(ctx, GGML_TYPE_I32, -1))));
    CHECK_ABORTS("set_rows: row index 6 out of range",
                 compute_one_thread(ctx, ggml_set_rows(ctx, a, b, index_tensor(ctx, GGML_TYPE_I64, 6))));
    CHECK_ABORTS("set_rows: row index -3 out of range",
                 compute_one_thread(ctx, ggml_set_rows(ctx, a, b, index_tensor(ctx, GGML_TYPE_I32, -3))));
    CHECK_ABORTS("repeat: an empty tensor",
                 compute_one_thread(ctx, ggml_repeat_4d(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 0), 4, 6, 1, 1)));
    CHECK_ABORTS("set: the window lies outside",
                 compute_one_thread(ctx, ggml_set_1d(ctx, data, b, 20 * sizeof(float))));
    // unsupported type combinations: the graph is refused before any kernel runs
    CHECK(tt_compute(ctx, ggml_cpy(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 4, 6)), 1) == GGML_STATUS_FAILED);
    CHECK(tt_compute(ctx, ggml_get_rows(ctx, ggml_new_tensor_2d(ctx, GGML_TYPE_F64, 4, 6),
                                        index_tensor(ctx, GGML_TYPE_I32, 0)), 1) == GGML_STATUS_FAILED);
    // the last element of the window ends exactly at the end: allowed
    CHECK(tt_compute(ctx, ggml_set_1d(ctx, data, b, 16 * sizeof(float)), 2) == GGML_STATUS_SUCCESS);
    ggml_free(ctx);
}

int main(void) {
    test_cpy_pairs();
    test_cpy_reshaping();
    test_cpy_large();
    test_dup_cont_cast();
    test_dup_inplace();
    test_cpy_onto_itself();
    test_cpy_opaque_blocks();
    test_get_rows();
    test_set_rows();
    test_set_rows_repeated();
    test_set();
    test_repeat();
    test_concat();
    test_pad();
    test_arange();
    test_unsupported();
    test_misuse();
    free_pools();
    return TEST_RESULT();
}
