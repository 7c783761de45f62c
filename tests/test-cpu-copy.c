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
#include "ggml-backend.h"

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

enum layout { L_CONT, L_TRANS, L_PERM, L_SCRAMBLE, L_OFFSET, L_COUNT };

static const char * k_layout_names[L_COUNT] = { "contiguous", "transposed", "permuted 0213", "permuted 1230", "offset view" };

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

// every layout of src against every layout of dst, same shape
static void test_cpy_all_layouts(enum ggml_type st, enum ggml_type dt, const int64_t ne[4]) {
    for (int ls = 0; ls < L_COUNT; ls++) {
        for (int ld = 0; ld < L_COUNT; ld++) {
            if (layout_ok((enum layout) ls, st) && layout_ok((enum layout) ld, dt)) {
                test_cpy_case(st, ne, (enum layout) ls, dt, ne, (enum layout) ld);
            }
        }
    }
}

static void test_cpy_pairs(void) {
    const int64_t ne_plain[4] = { 7, 5, 3, 2 };
    const int64_t ne_quant[4] = { 64, 3, 5, 2 };
    for (int i = 0; i < N_PLAIN; i++) {
        test_cpy_all_layouts(k_plain[i], k_plain[i], ne_plain);
    }
    for (int i = 0; i < N_CONVERSIONS; i++) {
        test_cpy_all_layouts(k_conversions[i][0], k_conversions[i][1], ne_plain);
    }
    const enum ggml_type to_quant[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    for (int q = 0; q < N_QUANT; q++) {
        test_cpy_all_layouts(k_quant[q], k_quant[q], ne_quant);
        test_cpy_all_layouts(k_quant[q], GGML_TYPE_F32, ne_quant);
        for (int i = 0; i < 3; i++) {
            test_cpy_all_layouts(to_quant[i], k_quant[q], ne_quant);
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
        { L_TRANS, L_TRANS },
    };
    for (int p = 0; p < 12; p++) {
        for (int c = 0; c < 6; c++) {
            test_cpy_case(pairs[p][0], ne, combos[c][0], pairs[p][1], ne, combos[c][1]);
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

int main(void) {
    test_cpy_pairs();
    test_cpy_reshaping();
    test_cpy_large();
    test_dup_cont_cast();
    test_dup_inplace();
    free_pools();
    return TEST_RESULT();
}
