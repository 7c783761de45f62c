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

#include "ops/elementwise.h"
#include "simd/vec-math.h"

enum ew_fn_kind {
    EW_SQR,
    EW_SQRT,
    EW_LOG,
    EW_SIN,
    EW_COS,
    EW_SCALE,       // a x
    EW_SCALE_BIAS,  // a x + b
    EW_CLAMP,       // min(max(x, a), b) as upstream: max(min(x, b), a)
    EW_LEAKY_RELU,  // slope a
    EW_ABS,
    EW_SGN,
    EW_NEG,
    EW_STEP,
    EW_TANH,
    EW_ELU,
    EW_RELU,
    EW_SIGMOID,
    EW_GELU,
    EW_GELU_QUICK,
    EW_GELU_ERF,
    EW_SILU,
    EW_HARDSWISH,
    EW_HARDSIGMOID,
    EW_EXP,
    EW_EXPM1,
    EW_SOFTPLUS,
    EW_FLOOR,
    EW_CEIL,
    EW_ROUND,
    EW_TRUNC,
    EW_XIELU,       // x > 0: c x^2 + d x, else (expm1(min(x, b)) - x) a + d x
};

struct ew_fn {
    enum ew_fn_kind kind;
    float a, b, c, d; // parameters, see the kinds
};

static inline float hardsigmoid_scalar(float x) {
    return fminf(1.0f, fmaxf(0.0f, (x + 3.0f) / 6.0f));
}

static inline float xielu_scalar(float an, float eps, float ap, float beta, float x) {
    if (x > 0.0f) {
        return ap * x * x + beta * x;
    }
    return (expm1f(fminf(x, eps)) - x) * an + beta * x;
}

static inline float fn_scalar(enum ew_fn_kind kind, float a, float b, float c, float d, float x) {
    switch (kind) {
        case EW_SQR:         return x * x;
        case EW_SQRT:        return sqrtf(x);
        case EW_LOG:         return logf(x);
        case EW_SIN:         return sinf(x);
        case EW_COS:         return cosf(x);
        case EW_SCALE:       return a * x;
        // one rounding but for rare double-rounding ties: the product is exact in double
        case EW_SCALE_BIAS:  return (float) ((double) a * (double) x + (double) b);
        case EW_CLAMP:       { const float t = x < b ? x : b; return t > a ? t : a; }
        case EW_LEAKY_RELU:  return (x > 0.0f ? x : 0.0f) + a * (x < 0.0f ? x : 0.0f);
        case EW_ABS:         return fabsf(x);
        case EW_SGN:         return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
        case EW_NEG:         return -x;
        case EW_STEP:        return x > 0.0f ? 1.0f : 0.0f;
        case EW_TANH:        return tanhf(x);
        case EW_ELU:         return ggml_sf_elu(x);
        case EW_RELU:        return x > 0.0f ? x : 0.0f;
        case EW_SIGMOID:     return ggml_sf_sigmoid(x);
        case EW_GELU:        return ggml_sf_gelu(x);
        case EW_GELU_QUICK:  return ggml_sf_gelu_quick(x);
        case EW_GELU_ERF:    return ggml_sf_gelu_erf(x);
        case EW_SILU:        return ggml_sf_silu(x);
        case EW_HARDSWISH:   return x * hardsigmoid_scalar(x);
        case EW_HARDSIGMOID: return hardsigmoid_scalar(x);
        case EW_EXP:         return expf(x);
        case EW_EXPM1:       return expm1f(x);
        case EW_SOFTPLUS:    return x > 20.0f ? x : log1pf(expf(x));
        case EW_FLOOR:       return floorf(x);
        case EW_CEIL:        return ceilf(x);
        case EW_ROUND:       return roundf(x);
        case EW_TRUNC:       return truncf(x);
        case EW_XIELU:       return xielu_scalar(a, b, c, d, x);
    }
    return x;
}

// the C library on both paths
static inline bool fn_is_libm_only(enum ew_fn_kind kind) {
    return kind == EW_LOG || kind == EW_SIN || kind == EW_COS;
}

#ifdef GGML_VF_WIDTH

// min(1, max(0, (x + 3) / 6)), NaN giving 0 as fmaxf does
static inline ggml_vf hardsigmoid_vector(ggml_vf x) {
    const ggml_vf v = ggml_vf_div(ggml_vf_add(x, ggml_vf_set1(3.0f)), ggml_vf_set1(6.0f));
    return ggml_vf_min(ggml_vf_max(v, ggml_vf_set1(0.0f)), ggml_vf_set1(1.0f));
}

// e^x - 1: the reduced form near 0, e^x itself where ggml_vf_expm1 clamps
// its argument (the two agree to binary32 long before 80)
static inline ggml_vf expm1_vector(ggml_vf x) {
    return ggml_vf_select(ggml_vf_gt(x, ggml_vf_set1(80.0f)), ggml_vf_exp(x), ggml_vf_expm1(x));
}

// roundf: the truncation, moved one away from zero when the dropped fraction
// is at least one half (x - trunc(x) is exact)
static inline ggml_vf round_vector(ggml_vf x) {
    const ggml_vf t = ggml_vf_trunc(x);
    const ggml_vf frac = ggml_vf_abs(ggml_vf_sub(x, t));
    const ggml_vf away = ggml_vf_add(t, ggml_vf_copysign(ggml_vf_set1(1.0f), x));
    return ggml_vf_select(ggml_vf_lt(frac, ggml_vf_set1(0.5f)), t, away);
}

// log(1 + e^x) = max(x, 0) + log1p(u), u = e^-|x| in (0, 1], with
// log1p(u) = 2 atanh(s), s = u / (2 + u) <= 1/3: the series 2 s sum_k s^2k / (2k+1)
// to k = 7 is within 2e-8 relative, and s keeps u's precision where 1 + u would
// not. Above 20, x itself, as the scalar path and upstream.
static inline ggml_vf softplus_vector(ggml_vf x) {
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

static inline ggml_vf xielu_vector(float an, float eps, float ap, float beta, ggml_vf x) {
    const ggml_vf bx  = ggml_vf_mul(ggml_vf_set1(beta), x);
    const ggml_vf pos = ggml_vf_fma(ggml_vf_mul(ggml_vf_set1(ap), x), x, bx);
    const ggml_vf em  = ggml_vf_expm1(ggml_vf_min(x, ggml_vf_set1(eps)));
    const ggml_vf neg = ggml_vf_fma(ggml_vf_sub(em, x), ggml_vf_set1(an), bx);
    return ggml_vf_select(ggml_vf_gt(x, ggml_vf_set1(0.0f)), pos, neg);
}

// The comparisons use the operand orders of simd-f32.h, so that each NaN
// case matches fn_scalar.
static inline ggml_vf fn_vector(enum ew_fn_kind kind, float a, float b, float c, float d, ggml_vf x) {
    const ggml_vf zero = ggml_vf_set1(0.0f);
    const ggml_vf one  = ggml_vf_set1(1.0f);
    switch (kind) {
        case EW_SQR:         return ggml_vf_mul(x, x);
        case EW_SQRT:        return ggml_vf_sqrt(x);
        case EW_SCALE:       return ggml_vf_mul(ggml_vf_set1(a), x);
        case EW_SCALE_BIAS:  return ggml_vf_fma(ggml_vf_set1(a), x, ggml_vf_set1(b));
        case EW_CLAMP:       return ggml_vf_max(ggml_vf_min(x, ggml_vf_set1(b)), ggml_vf_set1(a));
        case EW_LEAKY_RELU:  return ggml_vf_add(ggml_vf_max(x, zero), ggml_vf_mul(ggml_vf_set1(a), ggml_vf_min(x, zero)));
        case EW_ABS:         return ggml_vf_abs(x);
        case EW_SGN:         return ggml_vf_select(ggml_vf_gt(x, zero), one,
                                                   ggml_vf_select(ggml_vf_lt(x, zero), ggml_vf_set1(-1.0f), zero));
        case EW_NEG:         return ggml_vf_neg(x);
        case EW_STEP:        return ggml_vf_select(ggml_vf_gt(x, zero), one, zero);
        case EW_TANH:        return ggml_vf_tanh(x);
        case EW_ELU:         return ggml_vf_elu(x);
        case EW_RELU:        return ggml_vf_max(x, zero);
        case EW_SIGMOID:     return ggml_vf_sigmoid(x);
        case EW_GELU:        return ggml_vf_gelu(x);
        case EW_GELU_QUICK:  return ggml_vf_gelu_quick(x);
        case EW_GELU_ERF:    return ggml_vf_gelu_erf(x);
        case EW_SILU:        return ggml_vf_silu(x);
        case EW_HARDSWISH:   return ggml_vf_mul(x, hardsigmoid_vector(x));
        case EW_HARDSIGMOID: return hardsigmoid_vector(x);
        case EW_EXP:         return ggml_vf_exp(x);
        case EW_EXPM1:       return expm1_vector(x);
        case EW_SOFTPLUS:    return softplus_vector(x);
        case EW_FLOOR:       return ggml_vf_floor(x);
        case EW_CEIL:        return ggml_vf_ceil(x);
        case EW_ROUND:       return round_vector(x);
        case EW_TRUNC:       return ggml_vf_trunc(x);
        case EW_XIELU:       return xielu_vector(a, b, c, d, x);
        case EW_LOG:
        case EW_SIN:
        case EW_COS:         break; // fn_is_libm_only
    }
    return x;
}

#endif

// z[i] = f(x[i]). Called with a constant kind, so that each caller gets its
// own loop. The vector tail goes through the vector function too: every
// element gets the same function whatever its position. z may be x.
static inline void fn_rows(enum ew_fn_kind kind, const struct ew_fn * f, int64_t n, float * z, const float * x, bool ref) {
    const float a = f->a, b = f->b, c = f->c, d = f->d;
    (void) ref; // without a vector path, every call takes the scalar loop
    int64_t i = 0;
#ifdef GGML_VF_WIDTH
    if (!ref && !fn_is_libm_only(kind)) {
        for (; i + GGML_VF_WIDTH <= n; i += GGML_VF_WIDTH) {
            ggml_vf_store(z + i, fn_vector(kind, a, b, c, d, ggml_vf_load(x + i)));
        }
        if (i < n) {
            const int rest = (int)(n - i);
            ggml_vf_store_part(z + i, fn_vector(kind, a, b, c, d, ggml_vf_load_part(x + i, rest)), rest);
        }
        return;
    }
#endif
    for (; i < n; i++) {
        z[i] = fn_scalar(kind, a, b, c, d, x[i]);
    }
}

static void fn_apply(const struct ew_fn * f, int64_t n, float * z, const float * x, bool ref) {
    switch (f->kind) {
        case EW_SQR:         fn_rows(EW_SQR,         f, n, z, x, ref); break;
        case EW_SQRT:        fn_rows(EW_SQRT,        f, n, z, x, ref); break;
        case EW_LOG:         fn_rows(EW_LOG,         f, n, z, x, ref); break;
        case EW_SIN:         fn_rows(EW_SIN,         f, n, z, x, ref); break;
        case EW_COS:         fn_rows(EW_COS,         f, n, z, x, ref); break;
        case EW_SCALE:       fn_rows(EW_SCALE,       f, n, z, x, ref); break;
        case EW_SCALE_BIAS:  fn_rows(EW_SCALE_BIAS,  f, n, z, x, ref); break;
        case EW_CLAMP:       fn_rows(EW_CLAMP,       f, n, z, x, ref); break;
        case EW_LEAKY_RELU:  fn_rows(EW_LEAKY_RELU,  f, n, z, x, ref); break;
        case EW_ABS:         fn_rows(EW_ABS,         f, n, z, x, ref); break;
        case EW_SGN:         fn_rows(EW_SGN,         f, n, z, x, ref); break;
        case EW_NEG:         fn_rows(EW_NEG,         f, n, z, x, ref); break;
        case EW_STEP:        fn_rows(EW_STEP,        f, n, z, x, ref); break;
        case EW_TANH:        fn_rows(EW_TANH,        f, n, z, x, ref); break;
        case EW_ELU:         fn_rows(EW_ELU,         f, n, z, x, ref); break;
        case EW_RELU:        fn_rows(EW_RELU,        f, n, z, x, ref); break;
        case EW_SIGMOID:     fn_rows(EW_SIGMOID,     f, n, z, x, ref); break;
        case EW_GELU:        fn_rows(EW_GELU,        f, n, z, x, ref); break;
        case EW_GELU_QUICK:  fn_rows(EW_GELU_QUICK,  f, n, z, x, ref); break;
        case EW_GELU_ERF:    fn_rows(EW_GELU_ERF,    f, n, z, x, ref); break;
        case EW_SILU:        fn_rows(EW_SILU,        f, n, z, x, ref); break;
        case EW_HARDSWISH:   fn_rows(EW_HARDSWISH,   f, n, z, x, ref); break;
        case EW_HARDSIGMOID: fn_rows(EW_HARDSIGMOID, f, n, z, x, ref); break;
        case EW_EXP:         fn_rows(EW_EXP,         f, n, z, x, ref); break;
        case EW_EXPM1:       fn_rows(EW_EXPM1,       f, n, z, x, ref); break;
        case EW_SOFTPLUS:    fn_rows(EW_SOFTPLUS,    f, n, z, x, ref); break;
        case EW_FLOOR:       fn_rows(EW_FLOOR,       f, n, z, x, ref); break;
        case EW_CEIL:        fn_rows(EW_CEIL,        f, n, z, x, ref); break;
        case EW_ROUND:       fn_rows(EW_ROUND,       f, n, z, x, ref); break;
        case EW_TRUNC:       fn_rows(EW_TRUNC,       f, n, z, x, ref); break;
        case EW_XIELU:       fn_rows(EW_XIELU,       f, n, z, x, ref); break;
    }
}

// the function of a UNARY node; false for the unary ops not implemented
static bool fn_of_unary(enum ggml_unary_op op, enum ew_fn_kind * kind) {
    switch (op) {
        case GGML_UNARY_OP_ABS:         *kind = EW_ABS;         return true;
        case GGML_UNARY_OP_SGN:         *kind = EW_SGN;         return true;
        case GGML_UNARY_OP_NEG:         *kind = EW_NEG;         return true;
        case GGML_UNARY_OP_STEP:        *kind = EW_STEP;        return true;
        case GGML_UNARY_OP_TANH:        *kind = EW_TANH;        return true;
        case GGML_UNARY_OP_ELU:         *kind = EW_ELU;         return true;
        case GGML_UNARY_OP_RELU:        *kind = EW_RELU;        return true;
        case GGML_UNARY_OP_SIGMOID:     *kind = EW_SIGMOID;     return true;
        case GGML_UNARY_OP_GELU:        *kind = EW_GELU;        return true;
        case GGML_UNARY_OP_GELU_QUICK:  *kind = EW_GELU_QUICK;  return true;
        case GGML_UNARY_OP_GELU_ERF:    *kind = EW_GELU_ERF;    return true;
        case GGML_UNARY_OP_SILU:        *kind = EW_SILU;        return true;
        case GGML_UNARY_OP_HARDSWISH:   *kind = EW_HARDSWISH;   return true;
        case GGML_UNARY_OP_HARDSIGMOID: *kind = EW_HARDSIGMOID; return true;
        case GGML_UNARY_OP_EXP:         *kind = EW_EXP;         return true;
        case GGML_UNARY_OP_EXPM1:       *kind = EW_EXPM1;       return true;
        case GGML_UNARY_OP_SOFTPLUS:    *kind = EW_SOFTPLUS;    return true;
        case GGML_UNARY_OP_FLOOR:       *kind = EW_FLOOR;       return true;
        case GGML_UNARY_OP_CEIL:        *kind = EW_CEIL;        return true;
        case GGML_UNARY_OP_ROUND:       *kind = EW_ROUND;       return true;
        case GGML_UNARY_OP_TRUNC:       *kind = EW_TRUNC;       return true;
        case GGML_UNARY_OP_XIELU:       *kind = EW_XIELU;       return true;
        default:                        return false;
    }
}

// the function a node computes; false when it is not one of ours
static bool fn_of_node(const struct ggml_tensor * node, struct ew_fn * f) {
    f->a = 0.0f;
    f->b = 0.0f;
    f->c = 0.0f;
    f->d = 0.0f;
    switch (node->op) {
        case GGML_OP_SQR:  f->kind = EW_SQR;  return true;
        case GGML_OP_SQRT: f->kind = EW_SQRT; return true;
        case GGML_OP_LOG:  f->kind = EW_LOG;  return true;
        case GGML_OP_SIN:  f->kind = EW_SIN;  return true;
        case GGML_OP_COS:  f->kind = EW_COS;  return true;
        case GGML_OP_SCALE:
            f->a = ggml_get_op_params_f32(node, 0);
            f->b = ggml_get_op_params_f32(node, 1);
            // without a bias, s x alone: s x + 0 would turn -0 into +0
            f->kind = f->b == 0.0f ? EW_SCALE : EW_SCALE_BIAS;
            return true;
        case GGML_OP_CLAMP:
            f->kind = EW_CLAMP;
            f->a = ggml_get_op_params_f32(node, 0);
            f->b = ggml_get_op_params_f32(node, 1);
            return true;
        case GGML_OP_LEAKY_RELU:
            f->kind = EW_LEAKY_RELU;
            f->a = ggml_get_op_params_f32(node, 0);
            return true;
        case GGML_OP_UNARY:
            if (ggml_get_unary_op(node) == GGML_UNARY_OP_XIELU) {
                // op_params: alpha_n (with beta added), alpha_p, beta, eps, as ggml_xielu stores them
                f->a = ggml_get_op_params_f32(node, 1);
                f->c = ggml_get_op_params_f32(node, 2);
                f->d = ggml_get_op_params_f32(node, 3);
                f->b = ggml_get_op_params_f32(node, 4);
            }
            return fn_of_unary(ggml_get_unary_op(node), &f->kind);
        default:
            return false;
    }
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
    table[GGML_OP_SQR]        = unary;
    table[GGML_OP_SQRT]       = unary;
    table[GGML_OP_LOG]        = unary;
    table[GGML_OP_SIN]        = unary;
    table[GGML_OP_COS]        = unary;
    table[GGML_OP_SCALE]      = unary;
    table[GGML_OP_CLAMP]      = unary;
    table[GGML_OP_LEAKY_RELU] = unary;
    table[GGML_OP_UNARY]      = unary;
}
