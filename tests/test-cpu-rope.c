// test-cpu-rope: the CPU kernel of ROPE against a double-precision reference
// written from the definitions: RoPE's rotation of pairs by p * base^(-2i/d)
// (normal: adjacent pairs, neox: halves), frequency factors, YaRN (linear
// interpolation by freq_scale blended with extrapolation by a ramp between
// the correction dims, magnitude scaled by attn_factor*(1 + 0.1 ln(1/s))),
// the rotation offset, the multi-section modes (MROPE, IMROPE, VISION), F32
// and F16 data, strided and in-place inputs, both code paths and 1/2/3
// threads (identical bytes).

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "testing.h"
#include "cpu-testing.h"
#include "cpu-sweep.h"

#include <stdlib.h>

struct rope_case {
    enum ggml_type    type;
    int64_t           ne[4];
    int               mode;
    int               n_dims;
    int               n_offs;
    int               sections[4];
    int               n_ctx_orig;
    float             freq_base;
    float             freq_scale;
    float             ext_factor;
    float             attn_factor;
    float             beta_fast;
    float             beta_slow;
    bool              freq_factors;
    bool              inplace;
    enum sweep_layout layout;
    int64_t           pos_lo, pos_hi; // positions uniform in [pos_lo, pos_hi]
    struct ggml_tensor * x;
    struct ggml_tensor * pos;
    struct ggml_tensor * ff;
};

static bool is_multi(int mode) {
    return mode == GGML_ROPE_TYPE_MROPE || mode == GGML_ROPE_TYPE_IMROPE || mode == GGML_ROPE_TYPE_VISION;
}

static int64_t n_pairs_of(const struct rope_case * c) {
    return c->mode == GGML_ROPE_TYPE_VISION ? c->n_dims : c->n_dims / 2;
}

static struct ggml_tensor * build_rope(struct ggml_context * ctx, void * user) {
    struct rope_case * c = (struct rope_case *) user;
    struct ggml_tensor * a = sweep_new_source(ctx, c->type, c->ne, c->layout);
    tt_fill_uniform(a, -1.0, 1.0, 41);
    if (c->inplace) {
        struct ggml_tensor * copy = ggml_new_tensor(ctx, c->type, 4, c->ne);
        tt_fill_uniform(copy, -1.0, 1.0, 41); // the same values
        c->x = copy;
    } else {
        c->x = a;
    }
    c->pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, c->ne[2] * (is_multi(c->mode) ? 4 : 1));
    tt_fill_int(c->pos, c->pos_lo, c->pos_hi, 42);
    c->ff = NULL;
    if (c->freq_factors) {
        c->ff = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n_pairs_of(c));
        tt_fill_uniform(c->ff, 1.0, 4.0, 43);
    }
    struct ggml_tensor * out;
    if (is_multi(c->mode)) {
        out = (c->inplace ? ggml_rope_multi_inplace : ggml_rope_multi)(ctx, a, c->pos, c->ff, c->n_dims, c->sections,
                  c->mode, c->n_ctx_orig, c->freq_base, c->freq_scale, c->ext_factor, c->attn_factor, c->beta_fast,
                  c->beta_slow);
    } else {
        out = (c->inplace ? ggml_rope_ext_inplace : ggml_rope_ext)(ctx, a, c->pos, c->ff, c->n_dims, c->mode,
                  c->n_ctx_orig, c->freq_base, c->freq_scale, c->ext_factor, c->attn_factor, c->beta_fast,
                  c->beta_slow);
    }
    if (c->n_offs != 0) {
        ggml_rope_set_offset(out, c->n_offs);
    }
    return out;
}

//
// reference
//

// YaRN's correction dim: the pair index whose wavelength fits n_rot turns into n_ctx_orig
static double ref_corr_dim(int n_dims, int n_ctx_orig, double n_rot, double base) {
    const double pi = 3.14159265358979323846;
    return n_dims * log(n_ctx_orig / (n_rot * 2.0 * pi)) / (2.0 * log(base));
}

// which of the four positions pair i takes, and its exponent, from the section layout
static void ref_pair_section(const struct rope_case * c, int64_t i, int * comp, int64_t * expo) {
    *comp = 0;
    *expo = i;
    if (!is_multi(c->mode)) {
        return;
    }
    const int * s = c->sections;
    const int64_t sector = i % (s[0] + s[1] + s[2] + s[3]);
    const int64_t begin[4] = { 0, s[0], s[0] + s[1], s[0] + s[1] + s[2] };
    if (c->mode == GGML_ROPE_TYPE_IMROPE) {
        // t, h, w interleaved while each section lasts, then e
        const int64_t k = sector % 3;
        *comp = sector < 3 * (int64_t) s[k] ? (int) k : 3;
    } else {
        *comp = sector >= begin[3] ? 3 : sector >= begin[2] ? 2 : sector >= begin[1] ? 1 : 0;
    }
    if (c->mode == GGML_ROPE_TYPE_VISION) {
        *expo = sector - begin[*comp]; // each section starts its own frequency sequence
    }
}

static void ref_angles(const struct rope_case * c, int64_t i2, double * cs, double * sn) {
    const int64_t np = n_pairs_of(c);
    const int64_t n_tok = c->ne[2];
    const double lo = fmax(0.0, floor(ref_corr_dim(c->n_dims, c->n_ctx_orig, c->beta_fast, c->freq_base)));
    const double hi = fmin(c->n_dims - 1, ceil(ref_corr_dim(c->n_dims, c->n_ctx_orig, c->beta_slow, c->freq_base)));
    for (int64_t i = 0; i < np; i++) {
        int comp;
        int64_t expo;
        ref_pair_section(c, i, &comp, &expo);
        const double p = tt_get(c->pos, i2 + (is_multi(c->mode) ? comp * n_tok : 0), 0, 0, 0);
        const double f = c->ff != NULL ? tt_get(c->ff, i, 0, 0, 0) : 1.0;
        const double theta_extrap = p * pow(c->freq_base, -2.0 * (double) expo / c->n_dims) / f;
        const double theta_interp = c->freq_scale * theta_extrap;
        double theta = theta_interp;
        double mscale = c->attn_factor;
        if (c->ext_factor != 0.0f) {
            const double ramp = 1.0 - fmin(1.0, fmax(0.0, ((double) i - lo) / fmax(0.001, hi - lo)));
            const double mix = ramp * c->ext_factor;
            theta = theta_interp * (1.0 - mix) + theta_extrap * mix;
            mscale *= 1.0 + 0.1 * log(1.0 / c->freq_scale);
        }
        cs[i] = cos(theta) * mscale;
        sn[i] = sin(theta) * mscale;
    }
}

static void check_rope(const struct ggml_tensor * out, void * user, const char * label) {
    const struct rope_case * c = (const struct rope_case *) user;
    const int64_t ne0 = c->ne[0];
    const int64_t np = n_pairs_of(c);
    double * ref = (double *) malloc(sizeof(double) * (size_t)(ne0 * c->ne[1] * c->ne[2] * c->ne[3]));
    double * cs = (double *) malloc(sizeof(double) * (size_t)(np + 1));
    double * sn = (double *) malloc(sizeof(double) * (size_t)(np + 1));
    double * p = ref;
    for (int64_t i3 = 0; i3 < c->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < c->ne[2]; i2++) {
        ref_angles(c, i2, cs, sn);
        for (int64_t i1 = 0; i1 < c->ne[1]; i1++, p += ne0) {
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                p[i0] = tt_get(c->x, i0, i1, i2, i3); // unrotated values stay
            }
            for (int64_t i = 0; i < np; i++) {
                int64_t j0, j1; // the pair's two places
                if (c->mode == GGML_ROPE_TYPE_NORMAL) {
                    j0 = c->n_offs + 2*i;
                    j1 = j0 + 1;
                } else if (c->mode == GGML_ROPE_TYPE_VISION) {
                    j0 = i;
                    j1 = i + c->n_dims;
                } else {
                    j0 = c->n_offs + i;
                    j1 = j0 + c->n_dims / 2;
                }
                const double x0 = tt_get(c->x, j0, i1, i2, i3);
                const double x1 = tt_get(c->x, j1, i1, i2, i3);
                p[j0] = x0 * cs[i] - x1 * sn[i];
                p[j1] = x0 * sn[i] + x1 * cs[i];
            }
        }
    }
    // cos/sin rounded to float and a float rotation; F16 results round to 11 bits.
    // Angles above 2^24 are themselves uncertain by ~1 ulp of a double (2^-28 at 2^24)
    const double scale = fmax(1.0, c->attn_factor * 1.2);
    const double angle_ulp = ldexp(1.0, -52) * fmax((double) llabs(c->pos_lo), (double) llabs(c->pos_hi));
    const double atol = (c->type == GGML_TYPE_F16 ? 1e-3 : 6e-7 + 4.0 * angle_ulp) * scale;
    const double rtol = c->type == GGML_TYPE_F16 ? 1e-3 : 0.0;
    const double err = sweep_max_err(out, ref, atol, rtol);
    CHECK_MSG(err <= 1.0, "ROPE %s mode %d [%lld,%lld,%lld,%lld] n_dims %d offs %d fs %g ext %g ff %d %s%s %s: "
              "error %.3g of tolerance", ggml_type_name(c->type), c->mode, (long long) c->ne[0], (long long) c->ne[1],
              (long long) c->ne[2], (long long) c->ne[3], c->n_dims, c->n_offs, (double) c->freq_scale,
              (double) c->ext_factor, c->freq_factors, sweep_layout_name(c->layout), c->inplace ? " in place" : "",
              label, err);
    free(sn);
    free(cs);
    free(ref);
}

//
// cases
//

static struct rope_case plain_case(enum ggml_type type, int mode, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                   int n_dims) {
    struct rope_case c = {
        .type = type, .ne = { ne0, ne1, ne2, ne3 }, .mode = mode, .n_dims = n_dims, .n_offs = 0,
        .sections = { 0, 0, 0, 0 }, .n_ctx_orig = 4096, .freq_base = 10000.0f, .freq_scale = 1.0f,
        .ext_factor = 0.0f, .attn_factor = 1.0f, .beta_fast = 32.0f, .beta_slow = 1.0f,
        .freq_factors = false, .inplace = false, .layout = SWEEP_CONTIGUOUS, .pos_lo = -40, .pos_hi = 5000,
    };
    return c;
}

static void run_case(struct rope_case c) {
    sweep_run("ROPE", 3 * c.ne[0] * c.ne[1] * c.ne[2] * c.ne[3], build_rope, check_rope, &c);
}

static void test_single_position_modes(void) {
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    const int modes[] = { GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX };
    // head size, rotated dims
    static const int shapes[][2] = { { 2, 2 }, { 8, 8 }, { 64, 64 }, { 70, 64 }, { 128, 32 }, { 35, 34 } };
    for (int t = 0; t < 2; t++)
    for (int m = 0; m < 2; m++)
    for (int s = 0; s < 6; s++)
    for (int variant = 0; variant < 7; variant++) {
        struct rope_case c = plain_case(types[t], modes[m], shapes[s][0], 3, 7, 2, shapes[s][1]);
        switch (variant) {
            case 0: break;
            case 1: c.freq_base = 500000.0f; c.freq_scale = 0.25f; c.attn_factor = 0.8f; break;
            case 2: // YaRN
                c.freq_scale = 0.25f; c.ext_factor = 1.0f; c.n_ctx_orig = 2048; c.beta_fast = 32.0f; c.beta_slow = 1.0f;
                break;
            case 3: c.freq_factors = true; c.ext_factor = 0.5f; c.freq_scale = 0.5f; c.attn_factor = 1.1f; break;
            case 4: c.layout = SWEEP_OFFSET; c.ne[1] = 5; c.ne[2] = 3; break;
            case 5: c.layout = SWEEP_TRANSPOSED; c.ne[1] = 4; c.ne[2] = 2; c.ne[3] = 1; break;
            default: c.inplace = true; c.layout = s % 2 ? SWEEP_OFFSET : SWEEP_CONTIGUOUS; break;
        }
        run_case(c);
    }
    // large positions: angles reduced modulo 2*pi in many turns, and beyond 2^29 radians
    for (int m = 0; m < 2; m++) {
        struct rope_case c = plain_case(GGML_TYPE_F32, modes[m], 64, 2, 9, 1, 64);
        c.pos_lo = 1 << 20;
        c.pos_hi = 1 << 27;
        run_case(c);
        c.pos_lo = 1 << 29;
        c.pos_hi = 2147483647;
        c.freq_base = 100.0f;
        run_case(c);
    }
    // many tokens and heads: threads split rows inside one position
    run_case(plain_case(GGML_TYPE_F32, GGML_ROPE_TYPE_NEOX, 128, 32, 33, 1, 128));
    run_case(plain_case(GGML_TYPE_F32, GGML_ROPE_TYPE_NORMAL, 96, 5, 41, 1, 96));
}

static void test_offset(void) {
    const int modes[] = { GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX, GGML_ROPE_TYPE_MROPE, GGML_ROPE_TYPE_IMROPE };
    for (int m = 0; m < 4; m++)
    for (int t = 0; t < 2; t++) {
        struct rope_case c = plain_case(t ? GGML_TYPE_F16 : GGML_TYPE_F32, modes[m], 40, 3, 5, 1, 24);
        c.n_offs = modes[m] == GGML_ROPE_TYPE_NEOX ? 16 : 6; // 16 + 24 = 40: the rotated range ends the row
        c.sections[0] = 4; c.sections[1] = 4; c.sections[2] = 4; c.sections[3] = 0;
        c.inplace = t == 1;
        run_case(c);
    }
}

static void test_multi_section_modes(void) {
    // MROPE / IMROPE: sections of a qwen2-vl-like head (and one that wraps around)
    static const int sections[][4] = { { 16, 24, 24, 0 }, { 2, 3, 1, 2 } };
    const int modes[] = { GGML_ROPE_TYPE_MROPE, GGML_ROPE_TYPE_IMROPE };
    for (int m = 0; m < 2; m++)
    for (int s = 0; s < 2; s++)
    for (int t = 0; t < 2; t++) {
        struct rope_case c = plain_case(t ? GGML_TYPE_F16 : GGML_TYPE_F32, modes[m], 128, 3, 6, 1, s == 0 ? 128 : 40);
        memcpy(c.sections, sections[s], sizeof(c.sections));
        c.freq_factors = s == 1;
        c.ext_factor = s == 1 ? 1.0f : 0.0f;
        c.freq_scale = s == 1 ? 0.5f : 1.0f;
        run_case(c);
    }
    // VISION: n_dims = ne0/2, each section restarts its frequencies
    static const int vsections[][4] = { { 4, 4, 4, 4 }, { 3, 2, 2, 1 }, { 2, 1, 1, 0 } };
    static const int vdims[] = { 16, 8, 10 };
    for (int s = 0; s < 3; s++)
    for (int t = 0; t < 2; t++) {
        struct rope_case c = plain_case(t ? GGML_TYPE_F16 : GGML_TYPE_F32, GGML_ROPE_TYPE_VISION, 2 * vdims[s], 4, 5, 1,
                                        vdims[s]);
        memcpy(c.sections, vsections[s], sizeof(c.sections));
        c.freq_base = 100.0f;
        c.freq_factors = s == 1;
        c.layout = s == 2 ? SWEEP_OFFSET : SWEEP_CONTIGUOUS;
        run_case(c);
    }
}

static void test_supports(void) {
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    struct ggml_init_params ip = { 1024 * 1024, NULL, true };
    struct ggml_context * ctx = ggml_init(ip);

    struct ggml_tensor * f32 = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 16, 2, 3);
    struct ggml_tensor * f16 = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 16, 2, 3);
    struct ggml_tensor * bf16 = ggml_new_tensor_3d(ctx, GGML_TYPE_BF16, 16, 2, 3);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    struct ggml_tensor * pos4 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 12);
    struct ggml_tensor * ff_short = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    int sections[4] = { 2, 2, 2, 0 };

    CHECK(ggml_backend_dev_supports_op(dev, ggml_rope(ctx, f32, pos, 16, GGML_ROPE_TYPE_NORMAL)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_rope(ctx, f16, pos, 8, GGML_ROPE_TYPE_NEOX)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_rope(ctx, bf16, pos, 8, GGML_ROPE_TYPE_NEOX)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_rope(ctx, f32, pos, 18, GGML_ROPE_TYPE_NEOX)));  // n_dims > ne0
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_rope(ctx, f32, pos, 7, GGML_ROPE_TYPE_NEOX)));   // odd n_dims
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_rope(ctx, f32, pos, 8, 16)));                    // unknown mode
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_rope_set_offset(ggml_rope(ctx, f32, pos, 12, 0), 6))); // 6 + 12 > 16
    CHECK(ggml_backend_dev_supports_op(dev, ggml_rope_set_offset(ggml_rope(ctx, f32, pos, 12, 0), 4)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_rope_ext(ctx, f32, pos, ff_short, 8, GGML_ROPE_TYPE_NEOX, 0,
                                                          1e4f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_rope_multi(ctx, f32, pos4, NULL, 12, sections, GGML_ROPE_TYPE_MROPE,
                                                            0, 1e4f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f)));
    CHECK(ggml_backend_dev_supports_op(dev, ggml_rope_multi(ctx, f32, pos4, NULL, 8, sections, GGML_ROPE_TYPE_VISION,
                                                            0, 1e4f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_rope_multi(ctx, f32, pos4, NULL, 6, sections, GGML_ROPE_TYPE_VISION,
                                                             0, 1e4f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f))); // n_dims != ne0/2
    // VISION rotates n_dims pairs: it needs a factor for each (the constructor checks n_dims/2 only)
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_rope_multi(ctx, f32, pos4, ff_short, 8, sections, GGML_ROPE_TYPE_VISION,
                                                             0, 1e4f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f)));
    int no_sections[4] = { 0, 0, 0, 4 };
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_rope_multi(ctx, f32, pos4, NULL, 12, no_sections, GGML_ROPE_TYPE_MROPE,
                                                             0, 1e4f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f)));

    ggml_free(ctx);
}

int main(void) {
    test_single_position_modes();
    test_offset();
    test_multi_section_modes();
    test_supports();
    sweep_end();
    return TEST_RESULT();
}
