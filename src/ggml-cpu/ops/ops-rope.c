// ops-rope.c: rotary position embedding (ROPE), F32 and F16 data.
//
// Each row of ne0 values holds n_pairs rotated pairs; pair i of a token at
// position p turns by
//     theta_i = p * freq_base^(-2 e_i / n_dims) / ff_i
// (ff the optional frequency factors, src[2]), corrected by YaRN:
//     theta = freq_scale*theta_i*(1 - mix_i) + theta_i*mix_i,
//     mix_i = ext_factor * (1 - clamp((i - lo)/max(0.001, hi - lo), 0, 1)),
// lo/hi from ggml_rope_yarn_corr_dims, and scaled in magnitude by
// attn_factor * (1 + 0.1 ln(1/freq_scale)) (the log term only when
// ext_factor != 0). Where a pair's two values sit depends on the mode:
//     NORMAL            (n_offs + 2i, n_offs + 2i + 1), i < n_dims/2
//     NEOX/MROPE/IMROPE (n_offs + i,  n_offs + i + n_dims/2)
//     VISION            (i, i + n_dims), i < n_dims = ne0/2
// Values outside the rotated range are copied. For the single-position
// modes e_i = i. The multi-section modes take one of four positions per pair
// (src[1] holds four position vectors of ne2 entries) by section of
// i % (sum of sections): MROPE in consecutive sections, IMROPE interleaved;
// VISION restarts e_i at 0 at the start of each section.
//
// cos/sin are computed in double (see rope_sincos) once per position and
// thread (the scratch memory holds a per-thread cache), rows are split between
// threads in contiguous ranges; results do not depend on the thread count.
//
// ROPE_BACK (the gradient, same op_params) turns by -theta: the rotation is
// orthogonal, so its transpose is its inverse.

#include "simd/vec.h"
#include "ops/row-iter.h"

struct rope_config {
    int     n_dims;
    int     mode;
    bool    backward;   // ROPE_BACK: rotate by -theta
    int     n_offs;
    int     n_ctx_orig;
    float   freq_base;
    float   freq_scale;
    float   ext_factor;
    float   attn_factor;
    float   beta_fast;
    float   beta_slow;
    int     sections[GGML_MROPE_SECTIONS];
    int64_t n_pairs;    // rotated pairs per row
    int64_t pair_gap;   // distance between the two values of a pair (NORMAL: 1)
    int64_t rot_begin;  // first rotated value
    int64_t rot_end;    // one past the last rotated value
};

static bool rope_mode_is_multi(int mode) {
    return mode == GGML_ROPE_TYPE_MROPE || mode == GGML_ROPE_TYPE_IMROPE || mode == GGML_ROPE_TYPE_VISION;
}

static struct rope_config rope_config_get(const struct ggml_tensor * dst) {
    struct rope_config c = {
        .n_dims      = ggml_get_op_params_i32(dst, 1),
        .mode        = ggml_get_op_params_i32(dst, 2),
        .backward    = dst->op == GGML_OP_ROPE_BACK,
        .n_offs      = ggml_get_op_params_i32(dst, 15),
        .n_ctx_orig  = ggml_get_op_params_i32(dst, 4),
        .freq_base   = ggml_get_op_params_f32(dst, 5),
        .freq_scale  = ggml_get_op_params_f32(dst, 6),
        .ext_factor  = ggml_get_op_params_f32(dst, 7),
        .attn_factor = ggml_get_op_params_f32(dst, 8),
        .beta_fast   = ggml_get_op_params_f32(dst, 9),
        .beta_slow   = ggml_get_op_params_f32(dst, 10),
        .sections    = { 0, 0, 0, 0 },
    };
    for (int i = 0; i < GGML_MROPE_SECTIONS; i++) {
        c.sections[i] = ggml_get_op_params_i32(dst, 11 + i);
    }
    if (c.mode == GGML_ROPE_TYPE_VISION) {
        c.n_pairs   = c.n_dims;
        c.pair_gap  = c.n_dims;
        c.rot_begin = 0;
        c.rot_end   = 2 * (int64_t) c.n_dims;
    } else {
        c.n_pairs   = c.n_dims / 2;
        c.pair_gap  = c.mode == GGML_ROPE_TYPE_NORMAL ? 1 : c.n_dims / 2;
        c.rot_begin = c.n_offs;
        c.rot_end   = (int64_t) c.n_offs + c.n_dims;
    }
    return c;
}

// NULL if the CPU computes this node, else why not
static const char * rope_unsupported_reason(const struct ggml_tensor * op) {
    const struct ggml_tensor * src = op->src[0];
    const struct ggml_tensor * pos = op->src[1];
    const struct ggml_tensor * ff  = op->src[2];
    const struct rope_config c = rope_config_get(op);

    if ((src->type != GGML_TYPE_F32 && src->type != GGML_TYPE_F16) || op->type != src->type) {
        return "data must be F32 or F16";
    }
    if (pos->type != GGML_TYPE_I32) {
        return "positions must be I32";
    }
    if (c.mode != GGML_ROPE_TYPE_NORMAL && c.mode != GGML_ROPE_TYPE_NEOX && !rope_mode_is_multi(c.mode)) {
        return "unknown mode";
    }
    if (c.n_dims < 0 || c.n_dims % 2 != 0 || c.n_offs < 0 || c.n_offs % 2 != 0 || c.rot_end > src->ne[0]) {
        return "n_dims and the offset must be even, and n_offs + n_dims <= ne0";
    }
    if (c.mode == GGML_ROPE_TYPE_VISION && (2 * (int64_t) c.n_dims != src->ne[0] || c.n_offs != 0)) {
        return "vision mode needs n_dims = ne0/2 and no offset";
    }
    if (rope_mode_is_multi(c.mode)) {
        int64_t sum = 0;
        for (int i = 0; i < GGML_MROPE_SECTIONS; i++) {
            if (c.sections[i] < 0) {
                return "negative section";
            }
            sum += c.sections[i];
        }
        if (c.sections[0] + c.sections[1] + c.sections[2] == 0 || sum > src->ne[0]) {
            return "sections must cover between 1 and ne0 dims, not all in the fourth";
        }
        if (pos->ne[0] != 4 * src->ne[2]) {
            return "multi-section modes need four positions per token";
        }
    } else if (pos->ne[0] != src->ne[2]) {
        return "one position per token";
    }
    if (ff != NULL && (ff->type != GGML_TYPE_F32 || ff->ne[0] < c.n_pairs)) {
        return "frequency factors must be F32, one per rotated pair";
    }
    return NULL;
}

static bool supports_rope(const struct ggml_tensor * op) {
    return rope_unsupported_reason(op) == NULL;
}

//
// scratch memory per thread: per-pair tables, the cos/sin cache and one row
//

struct rope_scratch {
    double  * inv_freq; // freq_base^(-2 e_i / n_dims) / ff_i
    double  * mix;      // YaRN ramp mix per pair (ext_factor included)
    double  * theta;    // the angles of one token
    uint8_t * comp;     // which of the four positions pair i takes
    float   * cos;      // NORMAL: cos_i twice per pair; others: cos_i per pair
    float   * sin;      // NORMAL: -sin_i, sin_i per pair; others: sin_i per pair
    float   * row;      // one row of ne0 values as F32
};

static size_t pad_to_cache_line(size_t bytes) {
    return (bytes + GGML_CPU_CACHE_LINE - 1) / GGML_CPU_CACHE_LINE * GGML_CPU_CACHE_LINE;
}

static size_t rope_scratch_size(int64_t n_pairs, int64_t ne0) {
    const size_t np = (size_t) MAX(n_pairs, 1);
    return 3 * pad_to_cache_line(np * sizeof(double)) +
           pad_to_cache_line(np) + 2 * pad_to_cache_line(2 * np * sizeof(float)) +
           pad_to_cache_line((size_t) ne0 * sizeof(float));
}

static size_t work_size_rope(const struct ggml_tensor * op, int n_threads) {
    const struct rope_config c = rope_config_get(op);
    return rope_scratch_size(c.n_pairs, op->src[0]->ne[0]) * (size_t) n_threads;
}

static struct rope_scratch rope_scratch_get(const struct ggml_compute_params * params, int64_t n_pairs, int64_t ne0) {
    const size_t stride = rope_scratch_size(n_pairs, ne0);
    GGML_ASSERT(params->wsize >= stride * (size_t) params->nth);
    const size_t np = (size_t) MAX(n_pairs, 1);
    char * p = (char *) params->wdata + stride * (size_t) params->ith;
    struct rope_scratch s;
    s.inv_freq = (double  *) p; p += pad_to_cache_line(np * sizeof(double));
    s.mix      = (double  *) p; p += pad_to_cache_line(np * sizeof(double));
    s.theta    = (double  *) p; p += pad_to_cache_line(np * sizeof(double));
    s.comp     = (uint8_t *) p; p += pad_to_cache_line(np);
    s.cos      = (float   *) p; p += pad_to_cache_line(2 * np * sizeof(float));
    s.sin      = (float   *) p; p += pad_to_cache_line(2 * np * sizeof(float));
    s.row      = (float   *) p;
    return s;
}

// The position pair i takes (*comp) and its exponent e_i (*expo), following
// upstream's section walk: the section of pair i is chosen by i % sum(sections);
// in VISION mode a section's exponent restarts where its section starts (the
// first matching start of t, h, w, e in that order). Called for i = 0, 1, ...
// in turn; start[] carries the restarts between calls.
static void rope_pair_section(const struct rope_config * c, int64_t start[4], int64_t i, uint8_t * comp, int64_t * expo) {
    if (!rope_mode_is_multi(c->mode)) {
        *comp = 0;
        *expo = i;
        return;
    }
    const int * s = c->sections;
    const int64_t sect_dims = (int64_t) s[0] + s[1] + s[2] + s[3];
    const int64_t sec_w = (int64_t) s[0] + s[1];
    const int64_t sec_e = sec_w + s[2];
    const int64_t sector = i % sect_dims;
    const bool restarts = c->mode == GGML_ROPE_TYPE_VISION;

    if (restarts) {
        if (sector == 0) {
            start[0] = i;
        } else if (sector == s[0]) {
            start[1] = i;
        } else if (sector == sec_w) {
            start[2] = i;
        } else if (sector == sec_e) {
            start[3] = i;
        }
    }
    uint8_t k;
    if (c->mode == GGML_ROPE_TYPE_IMROPE) {
        if (sector % 3 == 1 && sector < 3 * (int64_t) s[1]) {
            k = 1;
        } else if (sector % 3 == 2 && sector < 3 * (int64_t) s[2]) {
            k = 2;
        } else if (sector % 3 == 0 && sector < 3 * (int64_t) s[0]) {
            k = 0;
        } else {
            k = 3;
        }
    } else if (sector >= s[0] && sector < sec_w) {
        k = 1;
    } else if (sector >= sec_w && sector < sec_e) {
        k = 2;
    } else if (sector >= sec_e) {
        k = 3;
    } else {
        k = 0;
    }
    *comp = k;
    *expo = restarts ? i - start[k] : i;
}

static void rope_tables_init(const struct rope_config * c, const struct ggml_tensor * ff, const struct rope_scratch * s) {
    float corr[2];
    ggml_rope_yarn_corr_dims(c->n_dims, c->n_ctx_orig, c->freq_base, c->beta_fast, c->beta_slow, corr);
    const double ramp_width = MAX(0.001, (double) corr[1] - (double) corr[0]);

    // freq_base^(-2e / n_dims) for e < n_pairs, by repeated products in
    // double (relative error under n_pairs * 2^-53, far below the float
    // results; a pow() per pair cost about 2 us a node), kept in theta until
    // the cache uses it
    double * powers = s->theta;
    const double step = pow((double) c->freq_base, -2.0 / (double) c->n_dims);
    for (int64_t e = 0; e < c->n_pairs; e++) {
        powers[e] = e == 0 ? 1.0 : powers[e - 1] * step;
    }
    int64_t start[4] = { 0, 0, 0, 0 };
    for (int64_t i = 0; i < c->n_pairs; i++) {
        int64_t expo;
        rope_pair_section(c, start, i, &s->comp[i], &expo);
        const double f = ff != NULL ? (double) *(const float *)((const char *) ff->data + i*ff->nb[0]) : 1.0;
        const double y = ((double) i - (double) corr[0]) / ramp_width;
        const double ramp = 1.0 - MIN(1.0, MAX(0.0, y));
        s->inv_freq[i] = powers[expo] / f;
        s->mix[i] = ramp * (double) c->ext_factor;
    }
}

// cos(theta)*scale and sin(theta)*scale for n angles, without a libm call per
// angle: theta is reduced to [-pi, pi] with 2*pi split in two (k*TWO_PI_HI is
// exact for |k| < 2^27), folded into [-pi/2, pi/2] and the Taylor polynomials
// to degree 13 (sin) and 14 (cos) applied: truncation below 7e-10, far under
// the float rounding of the result. The loop is plain C that compilers
// vectorise. Angles beyond the reduction's range (|theta| >= 2^29) use libm.
#define ROPE_TWO_PI_HI      6.283185362815857
#define ROPE_TWO_PI_LO      (-5.5636270456668466e-08)
#define ROPE_INV_TWO_PI     0.15915494309189535
#define ROPE_PI             3.141592653589793
#define ROPE_HALF_PI        1.5707963267948966
#define ROPE_REDUCTION_MAX  536870912.0
#define ROPE_ROUND_MAGIC    6755399441055744.0

static void rope_sincos(int64_t n, const double * theta, double scale, float * cs, float * sn) {
    for (int64_t i = 0; i < n; i++) {
        // nearest integer by adding and removing 1.5*2^52 (floor() keeps compilers from vectorising)
        const double k = (theta[i] * ROPE_INV_TWO_PI + ROPE_ROUND_MAGIC) - ROPE_ROUND_MAGIC;
        double r = (theta[i] - k * ROPE_TWO_PI_HI) - k * ROPE_TWO_PI_LO;
        const bool fold = fabs(r) > ROPE_HALF_PI;
        r = fold ? (r > 0.0 ? ROPE_PI : -ROPE_PI) - r : r;
        const double r2 = r * r;
        const double sp = r * (1.0 + r2 * (-1.0/6 + r2 * (1.0/120 + r2 * (-1.0/5040 + r2 * (1.0/362880 +
                          r2 * (-1.0/39916800 + r2 * (1.0/6227020800.0)))))));
        const double cp = 1.0 + r2 * (-1.0/2 + r2 * (1.0/24 + r2 * (-1.0/720 + r2 * (1.0/40320 + r2 * (-1.0/3628800 +
                          r2 * (1.0/479001600 + r2 * (-1.0/87178291200.0)))))));
        cs[i] = (float)((fold ? -cp : cp) * scale);
        sn[i] = (float)(sp * scale);
    }
    for (int64_t i = 0; i < n; i++) {
        if (!(fabs(theta[i]) < ROPE_REDUCTION_MAX)) {
            cs[i] = (float)(cos(theta[i]) * scale);
            sn[i] = (float)(sin(theta[i]) * scale);
        }
    }
}

// the cos/sin cache of one token (pos: its four positions, only the first used
// by the single-position modes)
static void rope_cache_fill(const struct rope_config * c, const struct rope_scratch * s, const int64_t pos[4]) {
    const int64_t n = c->n_pairs;
    const double freq_scale = (double) c->freq_scale;
    double mscale = (double) c->attn_factor;
    if (c->ext_factor != 0.0f) {
        mscale *= 1.0 + 0.1 * log(1.0 / freq_scale);
        for (int64_t i = 0; i < n; i++) {
            const double theta_extrap = (double) pos[s->comp[i]] * s->inv_freq[i];
            s->theta[i] = freq_scale * theta_extrap * (1.0 - s->mix[i]) + theta_extrap * s->mix[i];
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            s->theta[i] = freq_scale * ((double) pos[s->comp[i]] * s->inv_freq[i]);
        }
    }
    rope_sincos(n, s->theta, mscale, s->cos, s->sin);
    if (c->backward) {
        for (int64_t i = 0; i < n; i++) {
            s->sin[i] = -s->sin[i];
        }
    }
    if (c->mode == GGML_ROPE_TYPE_NORMAL) {
        // spread to the interleaved layout, from the end so that nothing is overwritten before it is read
        for (int64_t i = n - 1; i >= 0; i--) {
            const float cv = s->cos[i];
            const float sv = s->sin[i];
            s->cos[2*i] = cv;
            s->cos[2*i + 1] = cv;
            s->sin[2*i] = -sv;
            s->sin[2*i + 1] = sv;
        }
    }
}

//
// rotations of the contiguous F32 range [x, x + 2*n_pairs*...) into y (y may be x)
//

// NORMAL: pairs adjacent; cos/sin in the interleaved layout
static void rotate_adjacent_ref(int64_t n_pairs, const float * x, float * y, const float * cs, const float * sn) {
    for (int64_t i = 0; i < n_pairs; i++) {
        const float x0 = x[2*i];
        const float x1 = x[2*i + 1];
        const float c  = cs[2*i];
        const float s  = sn[2*i + 1];
        y[2*i]     = x0*c - x1*s;
        y[2*i + 1] = x0*s + x1*c;
    }
}

// the others: pair i is (x[i], x[i + gap])
static void rotate_split_ref(int64_t n_pairs, int64_t gap, const float * x, float * y, const float * cs, const float * sn) {
    for (int64_t i = 0; i < n_pairs; i++) {
        const float x0 = x[i];
        const float x1 = x[i + gap];
        y[i]       = x0*cs[i] - x1*sn[i];
        y[i + gap] = x0*sn[i] + x1*cs[i];
    }
}

#ifdef GGML_VF_WIDTH

// sn holds -s at the even elements (see above), so y = x*cs + swap(x)*sn
static void rotate_adjacent(int64_t n_pairs, const float * x, float * y, const float * cs, const float * sn) {
    const int64_t n = 2 * n_pairs;
    int64_t i = 0;
    for (; i + GGML_VF_WIDTH <= n; i += GGML_VF_WIDTH) {
        const ggml_vf v = ggml_vf_load(x + i);
        const ggml_vf swapped = ggml_vf_swap_pairs(v); // (x1, x0) in each pair
        ggml_vf_store(y + i, ggml_vf_fma(v, ggml_vf_load(cs + i), ggml_vf_mul(swapped, ggml_vf_load(sn + i))));
    }
    rotate_adjacent_ref((n - i) / 2, x + i, y + i, cs + i, sn + i);
}

static void rotate_split(int64_t n_pairs, int64_t gap, const float * x, float * y, const float * cs, const float * sn) {
    int64_t i = 0;
    for (; i + GGML_VF_WIDTH <= n_pairs; i += GGML_VF_WIDTH) {
        const ggml_vf x0 = ggml_vf_load(x + i);
        const ggml_vf x1 = ggml_vf_load(x + i + gap);
        const ggml_vf c  = ggml_vf_load(cs + i);
        const ggml_vf s  = ggml_vf_load(sn + i);
        ggml_vf_store(y + i,       ggml_vf_fms(x0, c, ggml_vf_mul(x1, s)));
        ggml_vf_store(y + i + gap, ggml_vf_fma(x0, s, ggml_vf_mul(x1, c)));
    }
    rotate_split_ref(n_pairs - i, gap, x + i, y + i, cs + i, sn + i);
}

#else

static void rotate_adjacent(int64_t n_pairs, const float * x, float * y, const float * cs, const float * sn) {
    rotate_adjacent_ref(n_pairs, x, y, cs, sn);
}

static void rotate_split(int64_t n_pairs, int64_t gap, const float * x, float * y, const float * cs, const float * sn) {
    rotate_split_ref(n_pairs, gap, x, y, cs, sn);
}

#endif

// rotates the range of one contiguous F32 row x into y (y may be x)
static void rope_rotate_row(const struct rope_config * c, const struct rope_scratch * s, const float * x, float * y, bool use_ref) {
    x += c->rot_begin;
    y += c->rot_begin;
    if (c->mode == GGML_ROPE_TYPE_NORMAL) {
        if (use_ref) {
            rotate_adjacent_ref(c->n_pairs, x, y, s->cos, s->sin);
        } else {
            rotate_adjacent(c->n_pairs, x, y, s->cos, s->sin);
        }
    } else if (use_ref) {
        rotate_split_ref(c->n_pairs, c->pair_gap, x, y, s->cos, s->sin);
    } else {
        rotate_split(c->n_pairs, c->pair_gap, x, y, s->cos, s->sin);
    }
}

static void rope_read_positions(const struct ggml_tensor * pos, int64_t i2, int64_t n_tokens, bool multi, int64_t out[4]) {
    for (int k = 0; k < 4; k++) {
        const int64_t j = multi ? i2 + k * n_tokens : i2;
        out[k] = *(const int32_t *)((const char *) pos->data + j * pos->nb[0]);
    }
}

static void forward_rope(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const char * why = rope_unsupported_reason(dst);
    if (why != NULL) {
        GGML_ABORT("ROPE node %s: %s", dst->name, why);
    }

    const struct ggml_tensor * src = dst->src[0];
    const struct ggml_tensor * pos = dst->src[1];
    const struct rope_config c = rope_config_get(dst);
    const int64_t ne0 = src->ne[0];
    const int64_t ne2 = src->ne[2];
    const bool is_f16 = src->type == GGML_TYPE_F16;
    const bool direct = !is_f16 && src->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float);
    const bool use_ref = params->use_ref;

    const struct rope_scratch s = rope_scratch_get(params, c.n_pairs, ne0);
    rope_tables_init(&c, dst->src[2], &s);

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(src), params->ith, params->nth, &r0, &r1);
    int64_t cached_i2 = -1;
    struct cpu_row_iter it = cpu_row_iter_at(src, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        const int64_t i2 = it.i2;
        if (i2 != cached_i2) {
            int64_t p[4];
            rope_read_positions(pos, i2, ne2, rope_mode_is_multi(c.mode), p);
            rope_cache_fill(&c, &s, p);
            cached_i2 = i2;
        }
        const char * x = cpu_row_iter_ptr(&it, src);
        char * y = cpu_row_iter_ptr(&it, dst);

        if (direct) {
            if (x != y) {
                memcpy(y, x, (size_t) c.rot_begin * sizeof(float));
                memcpy(y + c.rot_end * sizeof(float), x + c.rot_end * sizeof(float), (size_t)(ne0 - c.rot_end) * sizeof(float));
            }
            rope_rotate_row(&c, &s, (const float *) x, (float *) y, use_ref);
            continue;
        }

        // through the scratch row: F16 data or strided values
        if (is_f16 && src->nb[0] == sizeof(ggml_fp16_t)) {
            if (use_ref) {
                ggml_vec_fp16_to_fp32_ref(ne0, (const ggml_fp16_t *) x, s.row);
            } else {
                ggml_vec_fp16_to_fp32(ne0, (const ggml_fp16_t *) x, s.row);
            }
        } else {
            for (int64_t i = 0; i < ne0; i++) {
                const char * p = x + i*src->nb[0];
                s.row[i] = is_f16 ? ggml_compute_fp16_to_fp32(*(const ggml_fp16_t *) p) : *(const float *) p;
            }
        }
        rope_rotate_row(&c, &s, s.row, s.row, use_ref);
        if (is_f16 && dst->nb[0] == sizeof(ggml_fp16_t)) {
            if (use_ref) {
                ggml_vec_fp32_to_fp16_ref(ne0, s.row, (ggml_fp16_t *) y);
            } else {
                ggml_vec_fp32_to_fp16(ne0, s.row, (ggml_fp16_t *) y);
            }
        } else {
            for (int64_t i = 0; i < ne0; i++) {
                char * p = y + i*dst->nb[0];
                if (is_f16) {
                    *(ggml_fp16_t *) p = ggml_compute_fp32_to_fp16(s.row[i]);
                } else {
                    *(float *) p = s.row[i];
                }
            }
        }
    }
}

void ggml_cpu_register_ops_rope(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_ROPE] = (struct ggml_cpu_op_impl) {
        .forward = forward_rope, .supports = supports_rope, .work_size = work_size_rope,
    };
    table[GGML_OP_ROPE_BACK] = table[GGML_OP_ROPE];
}
