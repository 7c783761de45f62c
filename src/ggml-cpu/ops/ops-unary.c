// ops-unary.c: functions applied to each element: SQR, SQRT, LOG, SIN, COS,
// SCALE (s x + b), CLAMP, LEAKY_RELU and the UNARY op (ABS SGN NEG STEP TANH
// ELU RELU SIGMOID GELU GELU_QUICK GELU_ERF SILU HARDSWISH HARDSIGMOID EXP
// EXPM1 SOFTPLUS FLOOR CEIL ROUND TRUNC XIELU).
//
// Values are computed in binary32 from a src of any float type (F32, F16,
// BF16) into a dst of any float type, rows strided or not, in place or not.
// The comparisons follow upstream's definitions, which fixes what NaN gives:
// RELU, STEP, SGN, LEAKY_RELU and HARDSIGMOID map NaN to 0, CLAMP maps it to
// max. LOG, SIN and COS take the C library on both paths: they are rare in
// graphs and a vector version would not pay for its risk. ROUND rounds halves
// away from zero, as roundf does (not to even).
//
// The ops and their scalar and vector expressions are the list of
// ggml-op-list.h; this file holds the loops and the helpers of more than one
// line that the list's expressions call (ggml_ew_*_sf, ggml_ew_*_vf).

#include "ops/elementwise.h"
#include "simd/vec-math.h"
#include "ggml-op-list.h"

// EW_<NAME> for every op of the list (SCALE_BIAS: SCALE with a bias)
enum ew_fn_kind {
#define X(NAME, ...) EW_##NAME,
    GGML_OP_LIST_UNARY(X)
#undef X
    EW_COUNT,
};

// fn_of_node finds a UNARY node's entry at EW_ABS + its unary op
#define X(NAME, ...) _Static_assert(EW_##NAME - EW_ABS == (int) GGML_UNARY_OP_##NAME, "unary list order");
GGML_OP_LIST_UNARY_FNS(X)
#undef X

struct ew_fn {
    enum ew_fn_kind kind;
    float p[5]; // op_params[0..4] as floats
};

// helpers of the list's expressions (ggml-op-list.h)

static inline float ggml_ew_clamp_sf(float x, float lo, float hi) {
    const float t = x < hi ? x : hi;
    return t > lo ? t : lo;
}

static inline float ggml_ew_hardsigmoid_sf(float x) {
    return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f));
}

static inline float ggml_ew_xielu_sf(const float * p, float x) {
    if (x > 0.0f) {
        return p[2] * x * x + p[3] * x;
    }
    return (expm1f(fminf(x, p[4])) - x) * p[1] + p[3] * x;
}

static inline float fn_scalar(enum ew_fn_kind kind, const float * p, float x) {
    (void) p;
    switch (kind) {
#define X(NAME, op, f32, ...) case EW_##NAME: return f32;
        GGML_OP_LIST_UNARY(X)
#undef X
        case EW_COUNT: break;
    }
    return x;
}

// the C library on both paths
static inline bool fn_is_libm_only(enum ew_fn_kind kind) {
    switch (kind) {
#define X(NAME, op, f32, vec, f64, grad, glsl, lo, hi, tol, ...) case EW_##NAME: return GGML_OP_TOL_##tol == GGML_OP_TOL_LIBM;
        GGML_OP_LIST_UNARY(X)
#undef X
        case EW_COUNT: break;
    }
    return false;
}

#ifdef GGML_VF_WIDTH

// min(1, max(0, (x + 3) / 6)), NaN giving 0 as fmaxf does
static inline ggml_vf ggml_ew_hardsigmoid_vf(ggml_vf x) {
    const ggml_vf v = ggml_vf_div(ggml_vf_add(x, ggml_vf_set1(3.0f)), ggml_vf_set1(6.0f));
    return ggml_vf_min(ggml_vf_max(v, ggml_vf_set1(0.0f)), ggml_vf_set1(1.0f));
}

// e^x - 1: the reduced form near 0, e^x itself where ggml_vf_expm1 clamps
// its argument (the two agree to binary32 long before 80)
static inline ggml_vf ggml_ew_expm1_vf(ggml_vf x) {
    return ggml_vf_select(ggml_vf_gt(x, ggml_vf_set1(80.0f)), ggml_vf_exp(x), ggml_vf_expm1(x));
}

// roundf: the truncation, moved one away from zero when the dropped fraction
// is at least one half (x - trunc(x) is exact)
static inline ggml_vf ggml_ew_round_vf(ggml_vf x) {
    const ggml_vf t = ggml_vf_trunc(x);
    const ggml_vf frac = ggml_vf_abs(ggml_vf_sub(x, t));
    const ggml_vf away = ggml_vf_add(t, ggml_vf_copysign(ggml_vf_set1(1.0f), x));
    return ggml_vf_select(ggml_vf_lt(frac, ggml_vf_set1(0.5f)), t, away);
}

// log(1 + e^x) = max(x, 0) + log1p(u), u = e^-|x| in (0, 1], with
// log1p(u) = 2 atanh(s), s = u / (2 + u) <= 1/3: the series 2 s sum_k s^2k / (2k+1)
// to k = 7 is within 2e-8 relative, and s keeps u's precision where 1 + u would
// not. Above 20, x itself, as the scalar path and upstream.
static inline ggml_vf ggml_ew_softplus_vf(ggml_vf x) {
    const ggml_vf u  = ggml_vf_exp(ggml_vf_neg(ggml_vf_abs(x)));
    const ggml_vf s  = ggml_vf_div(u, ggml_vf_add(ggml_vf_set1(2.0f), u));
    const ggml_vf t  = ggml_vf_mul(s, s);
    ggml_vf p = ggml_vf_set1(1.0f / 15.0f);
    p = ggml_vf_fma(p, t, ggml_vf_set1(1.0f / 13.0f));
    p = ggml_vf_fma(p, t, ggml_vf_set1(1.0f / 11.0f));
    p = ggml_vf_fma(p, t, ggml_vf_set1(1.0f / 9.0f));
    p = ggml_vf_fma(p, t, ggml_vf_set1(1.0f / 7.0f));
    p = ggml_vf_fma(p, t, ggml_vf_set1(1.0f / 5.0f));
    p = ggml_vf_fma(p, t, ggml_vf_set1(1.0f / 3.0f));
    p = ggml_vf_fma(p, t, ggml_vf_set1(1.0f));
    const ggml_vf l1p = ggml_vf_mul(ggml_vf_add(s, s), p);
    const ggml_vf y = ggml_vf_add(ggml_vf_max(x, ggml_vf_set1(0.0f)), l1p);
    return ggml_vf_select(ggml_vf_gt(x, ggml_vf_set1(20.0f)), x, y);
}

static inline ggml_vf ggml_ew_xielu_vf(const float * p, ggml_vf x) {
    const ggml_vf bx  = ggml_vf_mul(ggml_vf_set1(p[3]), x);
    const ggml_vf pos = ggml_vf_fma(ggml_vf_mul(ggml_vf_set1(p[2]), x), x, bx);
    const ggml_vf em  = ggml_vf_expm1(ggml_vf_min(x, ggml_vf_set1(p[4])));
    const ggml_vf neg = ggml_vf_fma(ggml_vf_sub(em, x), ggml_vf_set1(p[1]), bx);
    return ggml_vf_select(ggml_vf_gt(x, ggml_vf_set1(0.0f)), pos, neg);
}

// The comparisons use the operand orders of simd-f32.h, so that each NaN
// case matches fn_scalar.
static inline ggml_vf fn_vector(enum ew_fn_kind kind, const float * p, ggml_vf x) {
    (void) p;
    switch (kind) {
#define X(NAME, op, f32, vec, ...) case EW_##NAME: return vec;
        GGML_OP_LIST_UNARY(X)
#undef X
        case EW_COUNT: break;
    }
    return x;
}

#endif

// z[i] = f(x[i]). Called with a constant kind, so that each caller gets its
// own loop. The vector tail goes through the vector function too: every
// element gets the same function whatever its position. z may be x.
static inline void fn_rows(enum ew_fn_kind kind, const struct ew_fn * f, int64_t n, float * z, const float * x, bool ref) {
    // a local copy: z's stores cannot change it, so it stays in registers
    const float p[5] = { f->p[0], f->p[1], f->p[2], f->p[3], f->p[4] };
    (void) ref; // without a vector path, every call takes the scalar loop
    int64_t i = 0;
#ifdef GGML_VF_WIDTH
    if (!ref && !fn_is_libm_only(kind)) {
        for (; i + GGML_VF_WIDTH <= n; i += GGML_VF_WIDTH) {
            ggml_vf_store(z + i, fn_vector(kind, p, ggml_vf_load(x + i)));
        }
        if (i < n) {
            const int rest = (int)(n - i);
            ggml_vf_store_part(z + i, fn_vector(kind, p, ggml_vf_load_part(x + i, rest)), rest);
        }
        return;
    }
#endif
    for (; i < n; i++) {
        z[i] = fn_scalar(kind, p, x[i]);
    }
}

static void fn_apply(const struct ew_fn * f, int64_t n, float * z, const float * x, bool ref) {
    switch (f->kind) {
#define X(NAME, ...) case EW_##NAME: fn_rows(EW_##NAME, f, n, z, x, ref); break;
        GGML_OP_LIST_UNARY(X)
#undef X
        case EW_COUNT: break;
    }
}

// the function a node computes; false when it is not one of ours
static bool fn_of_node(const struct ggml_tensor * node, struct ew_fn * f) {
    static const enum ggml_op k_op[EW_COUNT] = {
#define X(NAME, op, ...) [EW_##NAME] = op,
        GGML_OP_LIST_UNARY(X)
#undef X
    };
    memcpy(f->p, node->op_params, sizeof(f->p));
    const bool unary = node->op == GGML_OP_UNARY;
    const enum ggml_unary_op uop = unary ? ggml_get_unary_op(node) : GGML_UNARY_OP_COUNT;
    // the UNARY list follows enum ggml_unary_op: its entry is at EW_ABS + uop
    if (unary && (unsigned) uop >= GGML_UNARY_OP_COUNT) {
        return false;
    }
    for (int k = unary ? EW_ABS + (int) uop : 0; k < EW_COUNT; k++) {
        if (k_op[k] == node->op) {
            f->kind = (enum ew_fn_kind) k;
            // without a bias, s x alone: s x + 0 would turn -0 into +0
            if (f->kind == EW_SCALE && f->p[1] != 0.0f) {
                f->kind = EW_SCALE_BIAS;
            }
            return true;
        }
        if (unary) {
            break;
        }
    }
    return false;
}

static void unary_span(const struct ew_fn * f, struct ggml_ew_row d, struct ggml_ew_row a, int64_t c0, int64_t c1, bool ref) {
    float xbuf[GGML_EW_CHUNK];
    float zbuf[GGML_EW_CHUNK];
    const bool direct = ggml_ew_row_is_direct(d) && ggml_ew_row_is_direct(a);
    for (int64_t j = c0; j < c1; ) {
        const int64_t n = direct ? c1 - j : MIN(GGML_EW_CHUNK, c1 - j);
        const float * x = ggml_ew_read(a, j, n, xbuf, ref);
        float * z = ggml_ew_out(d, j, zbuf);
        fn_apply(f, n, z, x, ref);
        ggml_ew_write(d, j, n, z, ref);
        j += n;
    }
}

static void forward_unary(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    GGML_ASSERT(ggml_are_same_shape(src0, dst));

    struct ew_fn f;
    if (!fn_of_node(dst, &f)) {
        GGML_ABORT("%s: op %s is not implemented", __func__, ggml_op_desc(dst));
    }

    const struct ggml_ew_split split = ggml_ew_split_make(dst, params->nth);
    int64_t u0, u1;
    ggml_cpu_split_range(split.nrows * split.nblk, params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        int64_t i1, i2, i3, c0, c1;
        ggml_ew_split_unit(&split, dst, u, &i1, &i2, &i3, &c0, &c1);
        unary_span(&f, ggml_ew_row_of(dst, i1, i2, i3), ggml_ew_row_of(src0, i1, i2, i3), c0, c1, params->use_ref);
    }
}

static bool supports_unary(const struct ggml_tensor * op) {
    struct ew_fn f;
    return fn_of_node(op, &f) && ggml_ew_is_float(op->src[0]->type) && ggml_ew_is_float(op->type) &&
           ggml_are_same_shape(op->src[0], op);
}

void ggml_cpu_register_ops_unary(struct ggml_cpu_op_impl * table) {
    const struct ggml_cpu_op_impl unary = { .forward = forward_unary, .supports = supports_unary, .work_size = NULL };
#define X(NAME, op, ...) table[op] = unary;
    GGML_OP_LIST_UNARY(X)
#undef X
}
