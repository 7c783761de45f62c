// ref-eval-attn.c: SOFT_MAX, ROPE and FLASH_ATTN_EXT in double precision.

#include "ref-eval.h"

#include <math.h>
#include <stdlib.h>

//
// SOFT_MAX: softmax(x*scale + slope*mask) along rows, with an optional sink
// logit per head that counts in the sum but has no output. A NaN among a
// row's logits (or its sink) makes the row NaN; a row whose logits are all
// -inf, with no sink or a sink of -inf, is zeros (what the CPU backend
// documents; 0/0 otherwise).
//

void ref_op_soft_max(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src   = dst->src[0];
    const struct ggml_tensor * mask  = dst->src[1];
    const struct ggml_tensor * sinks = dst->src[2];
    const double scale    = ref_param_f32(dst, 0);
    const double max_bias = ref_param_f32(dst, 1);

    double * x  = ref_get(r, src);
    double * m  = mask  != NULL ? ref_get(r, mask)  : NULL;
    double * sk = sinks != NULL ? ref_get(r, sinks) : NULL;
    const int64_t * ne = src->ne;
    const uint32_t n_head = (uint32_t) ne[2];
    double * w = tbo_malloc((size_t) ne[0] * sizeof(double));

    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            const double slope = ref_alibi_slope(max_bias, n_head, (uint32_t) i2);
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                double * row = x + ref_idx(ne, 0, i1, i2, i3);
                double max = -(double) INFINITY;
                bool nan = sk != NULL && isnan(sk[i2]);
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    w[i0] = row[i0] * scale;
                    if (m != NULL) {
                        w[i0] += slope * m[ref_idx(mask->ne, i0, i1, i2 % mask->ne[2], i3 % mask->ne[3])];
                    }
                    nan |= isnan(w[i0]);
                    max = fmax(max, w[i0]);
                }
                if (sk != NULL) {
                    max = fmax(max, sk[i2]);
                }
                if (nan || (isinf(max) && max < 0.0)) {
                    for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                        row[i0] = nan ? (double) NAN : 0.0;
                    }
                    continue;
                }
                double sum = 0.0;
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    w[i0] = exp(w[i0] - max);
                    sum += w[i0];
                }
                if (sk != NULL) {
                    sum += exp(sk[i2] - max);
                }
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    row[i0] = w[i0] / sum;
                }
            }
        }
    }
    ref_put(r, dst, x);
    free(w);
    free(sk);
    free(m);
    free(x);
}

//
// ROPE: each pair of dims rotated by theta = p * base^(-2i/n_dims) (divided by
// a frequency factor), with YaRN's interpolation and magnitude scaling
//

struct rope_setup {
    int    n_dims;
    int    mode;
    int    n_offs;
    double freq_base;
    double freq_scale;
    double ext_factor;
    double attn_factor;
    double corr_dims[2];
    int    sections[4];
};

static double yarn_corr_dim(int n_dims, int n_ctx_orig, double n_rot, double base) {
    const double pi = 3.14159265358979323846;
    return n_dims * log(n_ctx_orig / (n_rot * 2.0 * pi)) / (2.0 * log(base));
}

static double yarn_ramp(double low, double high, int64_t i) {
    const double y = ((double) i - low) / fmax(0.001, high - low);
    return 1.0 - fmin(1.0, fmax(0.0, y));
}

// cos and sin of pair i, already scaled by the magnitude factor
static void rope_cos_sin(const struct rope_setup * s, double theta_extrap, int64_t i, double * c, double * sn) {
    const double theta_interp = s->freq_scale * theta_extrap;
    double theta  = theta_interp;
    double mscale = s->attn_factor;
    if (s->ext_factor != 0.0) {
        const double ramp_mix = yarn_ramp(s->corr_dims[0], s->corr_dims[1], i) * s->ext_factor;
        theta = theta_interp * (1.0 - ramp_mix) + theta_extrap * ramp_mix;
        mscale *= 1.0 + 0.1 * log(1.0 / s->freq_scale);
    }
    *c  = cos(theta) * mscale;
    *sn = sin(theta) * mscale;
}

// the position behind pair i of token i2 in the multi-section modes
static double mrope_position(const struct rope_setup * s, const double * pos, int64_t ne2, int64_t i2, int64_t i, int64_t * exponent) {
    const int * sec = s->sections;
    const int sect_dims = sec[0] + sec[1] + sec[2] + sec[3];
    const int sec_w = sec[0] + sec[1];
    const int sector = (int) (i % sect_dims);
    int which; // 0: t, 1: h, 2: w, 3: e
    if (s->mode == GGML_ROPE_TYPE_IMROPE) {
        // interleaved sections
        if (sector % 3 == 1 && sector < 3 * sec[1]) {
            which = 1;
        } else if (sector % 3 == 2 && sector < 3 * sec[2]) {
            which = 2;
        } else if (sector % 3 == 0 && sector < 3 * sec[0]) {
            which = 0;
        } else {
            which = 3;
        }
    } else {
        which = sector < sec[0] ? 0 : sector < sec_w ? 1 : sector < sec_w + sec[2] ? 2 : 3;
    }
    *exponent = i;
    if (s->mode == GGML_ROPE_TYPE_VISION) {
        // each section counts its frequencies from its own start
        const int starts[4] = { 0, sec[0], sec_w, sec_w + sec[2] };
        *exponent = sector - starts[which];
    }
    return pos[i2 + which * ne2];
}

void ref_op_rope(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src  = dst->src[0];
    const struct ggml_tensor * psrc = dst->src[1];
    const struct ggml_tensor * fsrc = dst->src[2];

    struct rope_setup s = {
        .n_dims      = ref_param_i32(dst, 1),
        .mode        = ref_param_i32(dst, 2),
        .n_offs      = ref_param_i32(dst, 15),
        .freq_base   = ref_param_f32(dst, 5),
        .freq_scale  = ref_param_f32(dst, 6),
        .ext_factor  = ref_param_f32(dst, 7),
        .attn_factor = ref_param_f32(dst, 8),
    };
    const int    n_ctx_orig = ref_param_i32(dst, 4);
    const double beta_fast  = ref_param_f32(dst, 9);
    const double beta_slow  = ref_param_f32(dst, 10);
    for (int i = 0; i < 4; i++) {
        s.sections[i] = ref_param_i32(dst, 11 + i);
    }
    s.corr_dims[0] = fmax(0.0, floor(yarn_corr_dim(s.n_dims, n_ctx_orig, beta_fast, s.freq_base)));
    s.corr_dims[1] = fmin(s.n_dims - 1, ceil(yarn_corr_dim(s.n_dims, n_ctx_orig, beta_slow, s.freq_base)));

    const bool multi  = (s.mode & GGML_ROPE_TYPE_MROPE) != 0;
    const bool vision = s.mode == GGML_ROPE_TYPE_VISION;
    const bool neox   = (s.mode & GGML_ROPE_TYPE_NEOX) != 0 || multi;

    double * x   = ref_get(r, src);
    double * pos = ref_get(r, psrc);
    double * ff  = fsrc != NULL ? ref_get(r, fsrc) : NULL;
    const int64_t * ne = src->ne;
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    memcpy(y, x, (size_t) ggml_nelements(dst) * sizeof(double)); // the dims not rotated stay

    // vision rotates (i, i + n_dims) for every i < n_dims, the whole row
    const int64_t n_pairs = vision ? s.n_dims : s.n_dims / 2;
    double * cs = tbo_malloc((size_t) (2 * n_pairs) * sizeof(double)); // cos and sin of each pair, for one token
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            // the angles depend on the token's position only
            for (int64_t i = 0; i < n_pairs; i++) {
                double  p;
                int64_t e = i;
                if (multi) {
                    p = mrope_position(&s, pos, ne[2], i2, i, &e);
                } else {
                    p = pos[i2];
                }
                double theta = p * pow(s.freq_base, -2.0 * (double) e / s.n_dims);
                if (ff != NULL) {
                    theta /= ff[i];
                }
                rope_cos_sin(&s, theta, i, &cs[2*i], &cs[2*i + 1]);
                if (dst->op == GGML_OP_ROPE_BACK) {
                    cs[2*i + 1] = -cs[2*i + 1]; // the gradient: the inverse rotation
                }
            }
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                const double * xr = x + ref_idx(ne, 0, i1, i2, i3);
                double       * yr = y + ref_idx(ne, 0, i1, i2, i3);
                for (int64_t i = 0; i < n_pairs; i++) {
                    const double c  = cs[2*i];
                    const double sn = cs[2*i + 1];
                    int64_t j0, j1;
                    if (vision) {
                        j0 = i;
                        j1 = i + s.n_dims;
                    } else if (neox) {
                        j0 = s.n_offs + i;
                        j1 = s.n_offs + i + s.n_dims/2;
                    } else {
                        j0 = s.n_offs + 2*i;
                        j1 = s.n_offs + 2*i + 1;
                    }
                    const double x0 = xr[j0];
                    const double x1 = xr[j1];
                    yr[j0] = x0*c - x1*sn;
                    yr[j1] = x0*sn + x1*c;
                }
            }
        }
    }
    ref_put(r, dst, y);
    free(cs);
    free(y);
    free(ff);
    free(pos);
    free(x);
}

//
// FLASH_ATTN_EXT: softmax(scale * q k^T, soft-capped, + slope * mask) v per query,
// heads of q sharing heads of k and v in groups; the result is [d_v, head, query, batch].
// Keys masked to -inf take no part (their K and V rows are not read); a NaN
// logit of a key that does (from q, its K row or the mask) or a NaN sink
// makes the row NaN; a row with no key left and no sink is zeros.
//

void ref_op_flash_attn_ext(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * q     = dst->src[0];
    const struct ggml_tensor * k     = dst->src[1];
    const struct ggml_tensor * v     = dst->src[2];
    const struct ggml_tensor * mask  = dst->src[3];
    const struct ggml_tensor * sinks = dst->src[4];
    const double scale    = ref_param_f32(dst, 0);
    const double max_bias = ref_param_f32(dst, 1);
    const double softcap  = ref_param_f32(dst, 2);

    const int64_t dk = q->ne[0];
    const int64_t dv = v->ne[0];
    const int64_t n_kv = k->ne[1];
    const int64_t rk2 = q->ne[2] / k->ne[2], rk3 = q->ne[3] / k->ne[3];
    const int64_t rv2 = q->ne[2] / v->ne[2], rv3 = q->ne[3] / v->ne[3];
    const uint32_t n_head = (uint32_t) q->ne[2];

    double * xq = ref_get(r, q);
    double * xk = ref_get(r, k);
    double * xv = ref_get(r, v);
    double * xm = mask  != NULL ? ref_get(r, mask)  : NULL;
    double * xs = sinks != NULL ? ref_get(r, sinks) : NULL;
    double * y  = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    double * sc = tbo_malloc((size_t) n_kv * sizeof(double));
    double * acc = tbo_malloc((size_t) dv * sizeof(double));

    for (int64_t iq3 = 0; iq3 < q->ne[3]; iq3++) {
        for (int64_t iq2 = 0; iq2 < q->ne[2]; iq2++) {
            const double slope = ref_alibi_slope(max_bias, n_head, (uint32_t) iq2);
            for (int64_t iq1 = 0; iq1 < q->ne[1]; iq1++) {
                const double * qr = xq + ref_idx(q->ne, 0, iq1, iq2, iq3);
                double max = -(double) INFINITY;
                bool nan = xs != NULL && isnan(xs[iq2]);
                for (int64_t j = 0; j < n_kv; j++) {
                    const double mv = xm != NULL
                        ? slope * xm[ref_idx(mask->ne, j, iq1, iq2 % mask->ne[2], iq3 % mask->ne[3])] : 0.0;
                    if (isinf(mv) && mv < 0.0) {
                        sc[j] = -(double) INFINITY;
                        continue;
                    }
                    const double * kr = xk + ref_idx(k->ne, 0, j, iq2 / rk2, iq3 / rk3);
                    double s = 0.0;
                    for (int64_t d = 0; d < dk; d++) {
                        s += qr[d] * kr[d];
                    }
                    s *= scale;
                    if (softcap != 0.0) {
                        s = softcap * tanh(s / softcap);
                    }
                    sc[j] = s + mv;
                    nan |= isnan(sc[j]);
                    max = fmax(max, sc[j]);
                }
                if (xs != NULL) {
                    max = fmax(max, xs[iq2]);
                }

                double sum = 0.0;
                for (int64_t d = 0; d < dv; d++) {
                    acc[d] = 0.0;
                }
                if (!(isinf(max) && max < 0.0)) {
                    for (int64_t j = 0; j < n_kv; j++) {
                        if (isinf(sc[j]) && sc[j] < 0.0) {
                            continue;
                        }
                        const double w = exp(sc[j] - max);
                        const double * vr = xv + ref_idx(v->ne, 0, j, iq2 / rv2, iq3 / rv3);
                        for (int64_t d = 0; d < dv; d++) {
                            acc[d] += w * vr[d];
                        }
                        sum += w;
                    }
                    if (xs != NULL) {
                        sum += exp(xs[iq2] - max);
                    }
                }
                // no key left and no sink: zeros, as a softmax over nothing
                const double inv = nan ? (double) NAN : sum == 0.0 ? 0.0 : 1.0 / sum;
                double * yr = y + ref_idx(dst->ne, 0, iq2, iq1, iq3);
                for (int64_t d = 0; d < dv; d++) {
                    yr[d] = acc[d] * inv;
                }
            }
        }
    }
    ref_put(r, dst, y);
    free(acc);
    free(sc);
    free(y);
    free(xs);
    free(xm);
    free(xv);
    free(xk);
    free(xq);
}
