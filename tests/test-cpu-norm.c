// test-cpu-norm: the CPU kernels of NORM, RMS_NORM, L2_NORM, DIAG_MASK_INF and
// SOFT_MAX (scale, F16/F32 masks with -inf and broadcasting, ALiBi, sinks)
// against naive double-precision references, on odd shapes, long rows,
// non-contiguous and in-place inputs, both code paths and 1/2/3 threads
// (identical bytes); and the vector exp that SOFT_MAX uses (vec-math.h)
// against exp() in ulps over its whole range.

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "testing.h"
#include "cpu-testing.h"
#include "cpu-sweep.h"

#include "simd/vec-math.h"

#include <float.h>
#include <stdlib.h>

static int64_t nelements(const int64_t ne[4]) {
    return ne[0] * ne[1] * ne[2] * ne[3];
}

// a copy of src's values in a new contiguous tensor, for references of in-place ops
static struct ggml_tensor * copy_values(struct ggml_context * ctx, const struct ggml_tensor * src) {
    struct ggml_tensor * t = ggml_new_tensor(ctx, src->type, 4, src->ne);
    for (int64_t i3 = 0; i3 < src->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < src->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < src->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < src->ne[0]; i0++) {
        ggml_set_f32_nd(t, (int) i0, (int) i1, (int) i2, (int) i3, (float) tt_get(src, i0, i1, i2, i3));
    }
    return t;
}

//
// NORM, RMS_NORM, L2_NORM
//

struct norm_case {
    enum ggml_op      op;
    const int64_t   * ne;
    enum sweep_layout layout;
    float             eps;
    bool              inplace;
    double            lo, hi;
    struct ggml_tensor * x; // the input values
    double *          ref;  // computed once
};

static struct ggml_tensor * build_norm(struct ggml_context * ctx, void * user) {
    struct norm_case * c = (struct norm_case *) user;
    struct ggml_tensor * a = sweep_new_source(ctx, GGML_TYPE_F32, c->ne, c->layout);
    tt_fill_uniform(a, c->lo, c->hi, 5);
    c->x = c->inplace ? copy_values(ctx, a) : a;
    switch (c->op) {
        case GGML_OP_NORM:     return c->inplace ? ggml_norm_inplace(ctx, a, c->eps)     : ggml_norm(ctx, a, c->eps);
        case GGML_OP_RMS_NORM: return c->inplace ? ggml_rms_norm_inplace(ctx, a, c->eps) : ggml_rms_norm(ctx, a, c->eps);
        default:               return c->inplace ? ggml_l2_norm_inplace(ctx, a, c->eps)  : ggml_l2_norm(ctx, a, c->eps);
    }
}

static double * norm_ref(const struct norm_case * c) {
    const struct ggml_tensor * x = c->x;
    const int64_t n = x->ne[0];
    double * ref = (double *) malloc(sizeof(double) * (size_t) nelements(c->ne));
    double * p = ref;
    for (int64_t i3 = 0; i3 < x->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < x->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < x->ne[1]; i1++, p += n) {
        double sum = 0.0, sumsq = 0.0;
        for (int64_t i0 = 0; i0 < n; i0++) {
            p[i0] = tt_get(x, i0, i1, i2, i3);
            sum += p[i0];
        }
        const double mean = sum / (double) n;
        for (int64_t i0 = 0; i0 < n; i0++) {
            sumsq += c->op == GGML_OP_NORM ? (p[i0] - mean) * (p[i0] - mean) : p[i0] * p[i0];
        }
        for (int64_t i0 = 0; i0 < n; i0++) {
            switch (c->op) {
                case GGML_OP_NORM:     p[i0] = (p[i0] - mean) / sqrt(sumsq / (double) n + c->eps); break;
                case GGML_OP_RMS_NORM: p[i0] = p[i0] / sqrt(sumsq / (double) n + c->eps); break;
                default:               p[i0] = p[i0] / fmax(sqrt(sumsq), c->eps); break;
            }
        }
    }
    return ref;
}

static void check_norm(const struct ggml_tensor * out, void * user, const char * label) {
    struct norm_case * c = (struct norm_case *) user;
    if (c->ref == NULL) {
        c->ref = norm_ref(c);
    }
    // outputs are O(1) (L2: O(1/sqrt(n))); NORM's float centring costs a few ulps of the mean
    const double atol = c->op == GGML_OP_L2_NORM ? 1e-6 / sqrt((double) c->ne[0]) : 2e-6;
    const double err = sweep_max_err(out, c->ref, atol, 1e-6);
    CHECK_MSG(err <= 1.0, "%s eps %g %s%s %s [%lld,%lld,%lld,%lld]: error %.3g of tolerance", ggml_op_name(c->op),
              (double) c->eps, sweep_layout_name(c->layout), c->inplace ? " in place" : "", label,
              (long long) c->ne[0], (long long) c->ne[1], (long long) c->ne[2], (long long) c->ne[3], err);
}

static void test_norms(void) {
    static const int64_t shapes[][4] = {
        { 1, 1, 1, 1 }, { 7, 3, 2, 2 }, { 33, 5, 3, 1 }, { 257, 2, 1, 3 }, { 4096, 5, 1, 1 }, { 100000, 2, 1, 1 },
    };
    const enum ggml_op ops[] = { GGML_OP_NORM, GGML_OP_RMS_NORM, GGML_OP_L2_NORM };
    for (int o = 0; o < 3; o++)
    for (int s = 0; s < 6; s++)
    for (int l = SWEEP_CONTIGUOUS; l <= SWEEP_OFFSET; l++)
    for (int inplace = 0; inplace <= 1; inplace++) {
        const int64_t * ne = shapes[s];
        if ((l == SWEEP_TRANSPOSED && inplace) || (nelements(ne) > 5000 && l + inplace > 1)) {
            continue; // long rows: contiguous, offset view and in place
        }
        // NORM: values far from 0, so that centring matters
        struct norm_case c = {
            .op = ops[o], .ne = ne, .layout = (enum sweep_layout) l, .eps = 1e-5f, .inplace = inplace != 0,
            .lo = ops[o] == GGML_OP_NORM ? 2.0 : -1.0, .hi = ops[o] == GGML_OP_NORM ? 4.0 : 1.0, .x = NULL,
            .ref = NULL,
        };
        sweep_run(ggml_op_name(ops[o]), 3 * nelements(ne), build_norm, check_norm, &c);
        free(c.ref);
    }
    // eps that dominates: L2's max(|x|, eps) branch, RMS on tiny values, NORM of a constant row
    static const int64_t small[4] = { 19, 4, 1, 1 };
    const struct norm_case extra[] = {
        { .op = GGML_OP_L2_NORM,  .ne = small, .layout = SWEEP_CONTIGUOUS, .eps = 100.0f, .lo = -1.0,  .hi = 1.0 },
        { .op = GGML_OP_RMS_NORM, .ne = small, .layout = SWEEP_OFFSET,     .eps = 1e-2f,  .lo = -1e-3, .hi = 1e-3 },
        { .op = GGML_OP_NORM,     .ne = small, .layout = SWEEP_CONTIGUOUS, .eps = 1e-5f,  .lo = 3.0,   .hi = 3.0 },
    };
    for (int i = 0; i < 3; i++) {
        struct norm_case c = extra[i];
        sweep_run(ggml_op_name(c.op), 3 * nelements(c.ne), build_norm, check_norm, &c);
        free(c.ref);
    }
}

//
// DIAG_MASK_INF
//

struct diag_case {
    const int64_t   * ne;
    enum sweep_layout layout;
    int               n_past;
    bool              inplace;
    struct ggml_tensor * x;
};

static struct ggml_tensor * build_diag(struct ggml_context * ctx, void * user) {
    struct diag_case * c = (struct diag_case *) user;
    struct ggml_tensor * a = sweep_new_source(ctx, GGML_TYPE_F32, c->ne, c->layout);
    tt_fill_uniform(a, -3.0, 3.0, 8);
    c->x = c->inplace ? copy_values(ctx, a) : a;
    return c->inplace ? ggml_diag_mask_inf_inplace(ctx, a, c->n_past) : ggml_diag_mask_inf(ctx, a, c->n_past);
}

static void check_diag(const struct ggml_tensor * out, void * user, const char * label) {
    const struct diag_case * c = (const struct diag_case *) user;
    double * ref = (double *) malloc(sizeof(double) * (size_t) nelements(c->ne));
    double * p = ref;
    for (int64_t i3 = 0; i3 < c->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < c->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < c->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < c->ne[0]; i0++) {
        *p++ = i0 > c->n_past + i1 ? -INFINITY : tt_get(c->x, i0, i1, i2, i3);
    }
    const double err = sweep_max_err(out, ref, 1e-300, 0.0);
    CHECK_MSG(err <= 1.0, "DIAG_MASK_INF n_past %d %s%s %s: error %.3g", c->n_past, sweep_layout_name(c->layout),
              c->inplace ? " in place" : "", label, err);
    free(ref);
}

static void test_diag_mask(void) {
    static const int64_t shapes[][4] = { { 1, 1, 1, 1 }, { 7, 5, 2, 2 }, { 33, 33, 3, 1 }, { 16, 9, 1, 1 } };
    const int n_pasts[] = { 0, 1, 3, 40 };
    for (int s = 0; s < 4; s++)
    for (int np = 0; np < 4; np++)
    for (int l = SWEEP_CONTIGUOUS; l <= SWEEP_OFFSET; l++)
    for (int inplace = 0; inplace <= 1; inplace++) {
        struct diag_case c = { .ne = shapes[s], .layout = (enum sweep_layout) l, .n_past = n_pasts[np],
                               .inplace = inplace != 0, .x = NULL };
        sweep_run("DIAG_MASK_INF", 3 * nelements(shapes[s]), build_diag, check_diag, &c);
    }
}

//
// SOFT_MAX
//

struct softmax_case {
    int64_t        ne[4];
    int            mask_type;     // -1 none, else GGML_TYPE_F32 / GGML_TYPE_F16
    int64_t        mask_ne2;      // mask dims 2 and 3 (broadcast when smaller)
    int64_t        mask_ne3;
    float          scale;
    float          max_bias;
    bool           sinks;
    bool           inplace;
    double         range;         // logits uniform in [-range, range]
    struct ggml_tensor * x;
    struct ggml_tensor * mask;
    struct ggml_tensor * sink;
    double *       ref;           // computed once
    double         rtol;
};

// -inf in a scattered pattern, and mask row 1 entirely: rows with all logits masked
static void fill_mask(struct ggml_tensor * m) {
    tt_fill_uniform(m, -2.0, 2.0, 13);
    for (int64_t i3 = 0; i3 < m->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < m->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < m->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < m->ne[0]; i0++) {
        if ((i0*7 + i1*3 + i2 + i3) % 4 == 0 || i1 == 1) {
            ggml_set_f32_nd(m, (int) i0, (int) i1, (int) i2, (int) i3, -INFINITY);
        }
    }
}

static struct ggml_tensor * build_softmax(struct ggml_context * ctx, void * user) {
    struct softmax_case * c = (struct softmax_case *) user;
    struct ggml_tensor * a = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, c->ne);
    tt_fill_uniform(a, -c->range, c->range, 17);
    c->x = c->inplace ? copy_values(ctx, a) : a;
    c->mask = NULL;
    c->sink = NULL;
    if (c->mask_type >= 0) {
        // two rows more than the logits: the kernel must use row i1 of the mask
        c->mask = ggml_new_tensor_4d(ctx, (enum ggml_type) c->mask_type, c->ne[0], c->ne[1] + 2, c->mask_ne2, c->mask_ne3);
        fill_mask(c->mask);
    }
    struct ggml_tensor * out = c->inplace ? ggml_soft_max_ext_inplace(ctx, a, c->mask, c->scale, c->max_bias)
                                          : ggml_soft_max_ext(ctx, a, c->mask, c->scale, c->max_bias);
    if (c->sinks) {
        c->sink = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, c->ne[2]);
        tt_fill_uniform(c->sink, -2.0, 2.0, 19);
        ggml_soft_max_add_sinks(out, c->sink);
    }
    return out;
}

// ALiBi slope of head h from its definition: 2^(-max_bias*(h+1)/n) for the
// first n heads (n the largest power of two <= n_head), then odd multiples of
// half that exponent step
static double ref_alibi_slope(double max_bias, int64_t n_head, int64_t h) {
    if (max_bias <= 0.0) {
        return 1.0;
    }
    int64_t n = 1;
    while (n * 2 <= n_head) {
        n *= 2;
    }
    return h < n ? pow(2.0, -max_bias * (double)(h + 1) / (double) n)
                 : pow(2.0, -(max_bias / 2.0) * (double)(2*(h - n) + 1) / (double) n);
}

static void softmax_ref(struct softmax_case * c) {
    const int64_t n = c->ne[0];
    double * ref = (double *) malloc(sizeof(double) * (size_t) nelements(c->ne));
    double * w = (double *) malloc(sizeof(double) * (size_t) n);
    double * p = ref;
    double max_abs_w = 0.0;
    for (int64_t i3 = 0; i3 < c->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < c->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < c->ne[1]; i1++, p += n) {
        const double slope = ref_alibi_slope(c->max_bias, c->ne[2], i2);
        double max = -INFINITY;
        for (int64_t i0 = 0; i0 < n; i0++) {
            w[i0] = tt_get(c->x, i0, i1, i2, i3) * c->scale;
            if (c->mask != NULL) {
                w[i0] += slope * tt_get(c->mask, i0, i1, i2 % c->mask_ne2, i3 % c->mask_ne3);
            }
            max = fmax(max, w[i0]);
            max_abs_w = isinf(w[i0]) ? max_abs_w : fmax(max_abs_w, fabs(w[i0]));
        }
        const double sink = c->sink != NULL ? tt_get(c->sink, i2, 0, 0, 0) : -INFINITY;
        max = fmax(max, sink);
        if (max == -INFINITY) {
            for (int64_t i0 = 0; i0 < n; i0++) {
                p[i0] = 0.0; // documented: all masked and no sink
            }
            continue;
        }
        double sum = exp(sink - max);
        for (int64_t i0 = 0; i0 < n; i0++) {
            sum += exp(w[i0] - max);
        }
        for (int64_t i0 = 0; i0 < n; i0++) {
            p[i0] = exp(w[i0] - max) / sum;
        }
    }
    free(w);
    c->ref = ref;
    // exp of a float logit is exact only to |w| ulps of w; otherwise a few ulps
    c->rtol = 1e-6 + 2.4e-7 * max_abs_w;
}

static void check_softmax(const struct ggml_tensor * out, void * user, const char * label) {
    struct softmax_case * c = (struct softmax_case *) user;
    if (c->ref == NULL) {
        softmax_ref(c);
    }
    const double err = sweep_max_err(out, c->ref, 1e-30, c->rtol);
    CHECK_MSG(err <= 1.0, "SOFT_MAX [%lld,%lld,%lld,%lld] mask %d (%lld,%lld) scale %g bias %g%s%s %s: error %.3g of tolerance",
              (long long) c->ne[0], (long long) c->ne[1], (long long) c->ne[2], (long long) c->ne[3], c->mask_type,
              (long long) c->mask_ne2, (long long) c->mask_ne3, (double) c->scale, (double) c->max_bias,
              c->sinks ? " sinks" : "", c->inplace ? " in place" : "", label, err);
    // no NaN anywhere, whatever is masked
    int nan = 0;
    for (int64_t i = 0; i < ggml_nelements(out); i++) {
        nan += isnan(((const float *) out->data)[i]);
    }
    CHECK_MSG(nan == 0, "SOFT_MAX %s: %d NaN", label, nan);
}

static void test_softmax(void) {
    static const int64_t shapes[][4] = {
        { 1, 1, 1, 1 }, { 7, 3, 2, 2 }, { 33, 5, 3, 1 }, { 257, 4, 5, 2 }, { 4096, 3, 1, 1 }, { 100000, 2, 1, 1 },
    };
    for (int s = 0; s < 6; s++) {
        const int64_t * ne = shapes[s];
        for (int variant = 0; variant < 10; variant++) {
            struct softmax_case c = {
                .ne = { ne[0], ne[1], ne[2], ne[3] }, .mask_type = -1, .mask_ne2 = 1, .mask_ne3 = 1,
                .scale = 1.0f, .max_bias = 0.0f, .sinks = false, .inplace = false, .range = 5.0, .ref = NULL,
            };
            switch (variant) {
                case 0: break;
                case 1: c.scale = 0.125f; c.range = 60.0; break;
                case 2: c.mask_type = GGML_TYPE_F32; c.mask_ne2 = ne[2]; c.mask_ne3 = ne[3]; break;
                case 3: c.mask_type = GGML_TYPE_F16; break;                                    // broadcast over 2 and 3
                case 4: c.mask_type = GGML_TYPE_F16; c.mask_ne2 = ne[2]; c.scale = 0.5f; break; // broadcast over 3
                case 5: c.mask_type = GGML_TYPE_F32; c.max_bias = 8.0f; break;                 // ALiBi
                case 6: c.mask_type = GGML_TYPE_F16; c.max_bias = 3.0f; c.sinks = true; break;
                case 7: c.sinks = true; c.inplace = true; break;
                case 8: c.mask_type = GGML_TYPE_F32; c.sinks = true; c.mask_ne3 = ne[3]; break;
                default: c.mask_type = GGML_TYPE_F32; c.inplace = true; c.range = 30.0; break;
            }
            if (nelements(ne) > 5000 && variant % 3 != 0) {
                continue; // long rows: a few variants are enough
            }
            sweep_run("SOFT_MAX", 4 * nelements(ne), build_softmax, check_softmax, &c);
            free(c.ref);
        }
    }
    // ALiBi head counts around powers of two
    const int64_t heads[] = { 1, 3, 4, 5, 12 };
    for (int h = 0; h < 5; h++) {
        struct softmax_case c = {
            .ne = { 9, 3, heads[h], 2 }, .mask_type = GGML_TYPE_F32, .mask_ne2 = 1, .mask_ne3 = 1,
            .scale = 0.7f, .max_bias = 8.0f, .sinks = h % 2 == 1, .inplace = false, .range = 4.0, .ref = NULL,
        };
        sweep_run("SOFT_MAX alibi", 4 * nelements(c.ne), build_softmax, check_softmax, &c);
        free(c.ref);
    }
}

//
// the vector exp of vec-math.h, which SOFT_MAX uses (the build's own path:
// AVX-512 or AVX2; builds without one use expf and skip this)
//

#if defined(GGML_VF_WIDTH)

static void vf_exp_rows(int n, float * y, const float * x) {
    int i = 0;
    for (; i + GGML_VF_WIDTH <= n; i += GGML_VF_WIDTH) {
        ggml_vf_store(y + i, ggml_vf_exp(ggml_vf_load(x + i)));
    }
    if (i < n) {
        ggml_vf_store_part(y + i, ggml_vf_exp(ggml_vf_load_part(x + i, n - i)), n - i);
    }
}

// |got - exp(x)| in units of the last place of the correctly rounded result
static double exp_ulp_error(float x, float got) {
    const double exact = exp((double) x);
    const float rounded = (float) exact;
    if (isinf(rounded)) {
        return isinf(got) ? 0.0 : INFINITY;
    }
    int e;
    frexp(rounded == 0.0f ? FLT_MIN : (double) rounded, &e);
    const double ulp = ldexp(1.0, MAX(e - 24, -149));
    return fabs((double) got - exact) / ulp;
}

static void test_vec_exp(void) {
    // every 331st float from -104 up to 89, both signs
    const uint32_t lo_bits = 0xC2D00000u; // -104
    const uint32_t hi_bits = 0x42B20000u; // 89
    enum { BATCH = 1024 };
    float x[BATCH], y[BATCH];
    double worst = 0.0;
    float worst_x = 0.0f;
    int64_t count = 0;
    int n = 0;
    for (int side = 0; side < 2; side++) {
        const uint32_t end = side == 0 ? lo_bits : hi_bits;
        for (uint32_t b = side == 0 ? 0x80000000u : 0u; b <= end; b += 331) {
            memcpy(&x[n], &b, sizeof(float));
            if (++n == BATCH || b + 331 > end) {
                vf_exp_rows(n, y, x);
                for (int i = 0; i < n; i++) {
                    const double e = exp_ulp_error(x[i], y[i]);
                    if (e > worst) {
                        worst = e;
                        worst_x = x[i];
                    }
                }
                count += n;
                n = 0;
            }
        }
    }
    printf("vector exp: %lld inputs, worst %.3f ulp at x = %.9g\n", (long long) count, worst, (double) worst_x);
    CHECK_MSG(worst <= 2.0, "exp error %.3f ulp at %.9g", worst, (double) worst_x);

    const float special[] = { -INFINITY, INFINITY, NAN, 0.0f, -0.0f, 88.72f, 88.8f, 100.0f, -87.0f, -100.0f, -120.0f, 1e-10f };
    float out[12];
    vf_exp_rows(12, out, special);
    CHECK(out[0] == 0.0f);
    CHECK(isinf(out[1]) && out[1] > 0);
    CHECK(isnan(out[2]));
    CHECK(out[3] == 1.0f && out[4] == 1.0f);
    CHECK(exp_ulp_error(88.72f, out[5]) <= 2.0 && isfinite(out[5]));
    CHECK(isinf(out[6]) && isinf(out[7]));
    CHECK(exp_ulp_error(-87.0f, out[8]) <= 2.0);
    CHECK(exp_ulp_error(-100.0f, out[9]) <= 2.0); // subnormal result
    CHECK(out[10] == 0.0f);
    CHECK(out[11] == 1.0f);
}

#else

static void test_vec_exp(void) {
    printf("vector exp: no vector path in this build (SOFT_MAX uses expf)\n");
}

#endif

//
// supports_op
//

static void test_supports(void) {
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    struct ggml_init_params ip = { 1024 * 1024, NULL, true };
    struct ggml_context * ctx = ggml_init(ip);

    struct ggml_tensor * f32 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 3, 2);
    struct ggml_tensor * f16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 8, 3, 2);
    struct ggml_tensor * m32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4);
    struct ggml_tensor * m16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 8, 4);

    CHECK(ggml_backend_dev_supports_op(dev, ggml_norm(ctx, f32, 1e-5f)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_rms_norm(ctx, ggml_transpose(ctx, f32), 1e-5f)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_l2_norm(ctx, f32, 1e-5f)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_norm(ctx, f16, 1e-5f)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_rms_norm(ctx, f16, 1e-5f)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_diag_mask_inf(ctx, f32, 2)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_diag_mask_inf(ctx, f16, 2)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_soft_max(ctx, f32)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_soft_max_ext(ctx, f32, m32, 1.0f, 0.0f)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_soft_max_ext(ctx, f32, m16, 1.0f, 8.0f)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_soft_max(ctx, f16)));

    ggml_free(ctx);
}

int main(void) {
    test_vec_exp();
    test_norms();
    test_diag_mask();
    test_softmax();
    test_supports();
    sweep_end();
    return TEST_RESULT();
}
