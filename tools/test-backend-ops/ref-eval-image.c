// ref-eval-image.c: the reference of the image and signal ops: UPSCALE,
// PAD_REFLECT_1D, ROLL, TIMESTEP_EMBEDDING, WIN_PART, WIN_UNPART,
// GET_REL_POS and ADD_REL_POS, in double precision from their definitions.

#include "ref-eval.h"

#include <math.h>
#include <stdlib.h>

static double * ref_alloc(const struct ggml_tensor * t) {
    return tbo_calloc((size_t) ggml_nelements(t), sizeof(double));
}

static void ref_finish(struct tbo_ref * r, const struct ggml_tensor * dst, double * y, double * x) {
    ref_put(r, dst, y);
    free(y);
    free(x);
}

//
// UPSCALE
//

// The nearest source index is part of the op's definition as ggml computes
// it: i / sf with sf = ne_out / ne_in in single precision, truncated (a
// double quotient picks another index wherever the float one rounds across
// an integer).
static int64_t nearest_index(int64_t i, float sf) {
    return (int64_t) ((float) i / sf);
}

static int64_t clampi(int64_t i, int64_t n) {
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

// the bicubic convolution kernel (a = -0.75) at distance t
static double cubic_weight(double t) {
    const double a = -0.75;
    t = fabs(t);
    if (t <= 1.0) {
        return ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0;
    }
    if (t < 2.0) {
        return ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a;
    }
    return 0.0;
}

struct upscale_ref {
    const double * x;     // the source plane (i2, i3 chosen)
    int64_t W, H;
    uint32_t mode;
    double sf0, sf1, off;
};

static double plane_at(const struct upscale_ref * u, int64_t ix, int64_t iy) {
    return u->x[clampi(iy, u->H)*u->W + clampi(ix, u->W)];
}

static double upscale_ref_value(const struct upscale_ref * u, int64_t i0, int64_t i1) {
    const uint32_t kind = u->mode & 0xFF;
    if (kind == GGML_SCALE_MODE_BILINEAR && (u->mode & GGML_SCALE_FLAG_ANTIALIAS)) {
        // triangle filter of half-width max(1, 1/sf) around the source position
        const double cx = (i0 + u->off) / u->sf0, cy = (i1 + u->off) / u->sf1;
        const double sx = fmax(1.0, 1.0 / u->sf0), sy = fmax(1.0, 1.0 / u->sf1);
        // the filter is zero outside these ranges
        const int64_t y0 = (int64_t) fmax(0.0, floor(cy - u->off - sy)), y1 = (int64_t) fmin(u->H - 1.0, ceil(cy - u->off + sy));
        const int64_t x0 = (int64_t) fmax(0.0, floor(cx - u->off - sx)), x1 = (int64_t) fmin(u->W - 1.0, ceil(cx - u->off + sx));
        double val = 0.0, total = 0.0;
        for (int64_t iy = y0; iy <= y1; iy++) {
            const double wy = fmax(0.0, 1.0 - fabs((iy + u->off - cy) / sy));
            for (int64_t ix = x0; ix <= x1; ix++) {
                const double w = wy * fmax(0.0, 1.0 - fabs((ix + u->off - cx) / sx));
                val   += w * u->x[iy*u->W + ix];
                total += w;
            }
        }
        return total > 0.0 ? val / total : 0.0;
    }
    const double x = (i0 + u->off) / u->sf0 - u->off;
    const double y = (i1 + u->off) / u->sf1 - u->off;
    if (kind == GGML_SCALE_MODE_BILINEAR) {
        // the two nearest source positions in each direction, edges clamped
        const double xc = fmin(fmax(x, 0.0), (double) (u->W - 1)), yc = fmin(fmax(y, 0.0), (double) (u->H - 1));
        const int64_t xa = (int64_t) floor(xc), ya = (int64_t) floor(yc);
        const double dx = xc - xa, dy = yc - ya;
        return (1 - dx) * (1 - dy) * plane_at(u, xa, ya) + dx * (1 - dy) * plane_at(u, xa + 1, ya) +
               (1 - dx) * dy * plane_at(u, xa, ya + 1) + dx * dy * plane_at(u, xa + 1, ya + 1);
    }
    // bicubic: the 4x4 neighbourhood weighted by the cubic kernel of the distances
    const int64_t x0 = (int64_t) floor(x), y0 = (int64_t) floor(y);
    double val = 0.0;
    for (int64_t jy = y0 - 1; jy <= y0 + 2; jy++) {
        for (int64_t jx = x0 - 1; jx <= x0 + 2; jx++) {
            val += cubic_weight(x - jx) * cubic_weight(y - jy) * plane_at(u, jx, jy);
        }
    }
    return val;
}

void ref_op_upscale(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const uint32_t mode = (uint32_t) ref_param_i32(dst, 0);
    double * x = ref_get(r, a);
    double * y = ref_alloc(dst);
    struct upscale_ref u = { .W = a->ne[0], .H = a->ne[1], .mode = mode, .off = 0.5,
                             .sf0 = (double) dst->ne[0] / a->ne[0], .sf1 = (double) dst->ne[1] / a->ne[1] };
    if (mode & GGML_SCALE_FLAG_ALIGN_CORNERS) {
        u.off = 0.0;
        if (dst->ne[0] > 1 && a->ne[0] > 1) {
            u.sf0 = (double) (dst->ne[0] - 1) / (a->ne[0] - 1);
        }
        if (dst->ne[1] > 1 && a->ne[1] > 1) {
            u.sf1 = (double) (dst->ne[1] - 1) / (a->ne[1] - 1);
        }
    }
    const float sf[4] = {
        (float) dst->ne[0] / (float) a->ne[0], (float) dst->ne[1] / (float) a->ne[1],
        (float) dst->ne[2] / (float) a->ne[2], (float) dst->ne[3] / (float) a->ne[3],
    };
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++) {
            u.x = x + ref_idx(a->ne, 0, 0, nearest_index(i2, sf[2]), nearest_index(i3, sf[3]));
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    y[ref_idx(dst->ne, i0, i1, i2, i3)] = (mode & 0xFF) == GGML_SCALE_MODE_NEAREST
                        ? u.x[nearest_index(i1, sf[1])*u.W + nearest_index(i0, sf[0])]
                        : upscale_ref_value(&u, i0, i1);
                }
            }
        }
    }
    ref_finish(r, dst, y, x);
}

//
// the others
//

// dst[i0] = a[|i0 - p0|] mirrored at both ends (the edge value not repeated)
void ref_op_pad_reflect_1d(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int64_t p0 = ref_param_i32(dst, 0), n = a->ne[0];
    double * x = ref_get(r, a);
    double * y = ref_alloc(dst);
    const int64_t rows = ggml_nrows(dst);
    for (int64_t row = 0; row < rows; row++) {
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const int64_t j = i0 - p0;
            const int64_t m = j < 0 ? -j : j > n - 1 ? 2*(n - 1) - j : j;
            y[row*dst->ne[0] + i0] = x[row*n + m];
        }
    }
    ref_finish(r, dst, y, x);
}

// dst[i] = a[i - shift] cyclically in each dimension (written as a scatter)
void ref_op_roll(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    int64_t sh[4];
    for (int d = 0; d < 4; d++) {
        sh[d] = ref_param_i32(dst, d);
    }
    double * x = ref_get(r, a);
    double * y = ref_alloc(dst);
    const int64_t * ne = a->ne;
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    y[ref_idx(ne, (i0 + sh[0] + ne[0]) % ne[0], (i1 + sh[1] + ne[1]) % ne[1], (i2 + sh[2] + ne[2]) % ne[2],
                              (i3 + sh[3] + ne[3]) % ne[3])] = x[ref_idx(ne, i0, i1, i2, i3)];
                }
            }
        }
    }
    ref_finish(r, dst, y, x);
}

void ref_op_timestep_embedding(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const int64_t dim = ref_param_i32(dst, 0), half = dim / 2;
    const double max_period = ref_param_i32(dst, 1);
    double * x = ref_get(r, dst->src[0]);
    double * y = ref_alloc(dst);
    for (int64_t i = 0; i < dst->ne[1]; i++) {
        for (int64_t j = 0; j < half; j++) {
            const double arg = x[i] * pow(max_period, -(double) j / (double) half);
            y[i*dim + j]        = cos(arg);
            y[i*dim + j + half] = sin(arg);
        }
    }
    ref_finish(r, dst, y, x);
}

// window (px, py) = index py*npx + px holds a[:, px*w + i1, py*w + i2] (0 outside)
void ref_op_win_part(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int64_t npx = ref_param_i32(dst, 0), w = ref_param_i32(dst, 2);
    double * x = ref_get(r, a);
    double * y = ref_alloc(dst);
    for (int64_t win = 0; win < dst->ne[3]; win++) {
        for (int64_t i2 = 0; i2 < w; i2++) {
            for (int64_t i1 = 0; i1 < w; i1++) {
                const int64_t ax = (win % npx)*w + i1, ay = (win / npx)*w + i2;
                if (ax >= a->ne[1] || ay >= a->ne[2]) {
                    continue;
                }
                for (int64_t c = 0; c < a->ne[0]; c++) {
                    y[ref_idx(dst->ne, c, i1, i2, win)] = x[ref_idx(a->ne, c, ax, ay, 0)];
                }
            }
        }
    }
    ref_finish(r, dst, y, x);
}

void ref_op_win_unpart(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int64_t w = ref_param_i32(dst, 0);
    const int64_t npx = (dst->ne[1] + w - 1) / w;
    double * x = ref_get(r, a);
    double * y = ref_alloc(dst);
    for (int64_t iy = 0; iy < dst->ne[2]; iy++) {
        for (int64_t ix = 0; ix < dst->ne[1]; ix++) {
            for (int64_t c = 0; c < dst->ne[0]; c++) {
                y[ref_idx(dst->ne, c, ix, iy, 0)] = x[ref_idx(a->ne, c, ix % w, iy % w, (iy / w)*npx + ix / w)];
            }
        }
    }
    ref_finish(r, dst, y, x);
}

// dst[:, k, q] = a[:, q - k + kh - 1]: relative position q - k, shifted to be >= 0
void ref_op_get_rel_pos(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    double * x = ref_get(r, a);
    double * y = ref_alloc(dst);
    const int64_t kh = dst->ne[1];
    for (int64_t q = 0; q < dst->ne[2]; q++) {
        for (int64_t k = 0; k < kh; k++) {
            memcpy(y + ref_idx(dst->ne, 0, k, q, 0), x + (q - k + kh - 1)*a->ne[0], (size_t) a->ne[0] * sizeof(double));
        }
    }
    ref_finish(r, dst, y, x);
}

// a's dim 0 is (x + W*y), dim 1 (i + ne1(pw)*j): dst = a + pw[x, i, j, b] + ph[y, i, j, b]
void ref_op_add_rel_pos(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * pw = dst->src[1];
    double * x  = ref_get(r, dst->src[0]);
    double * vw = ref_get(r, pw);
    double * vh = ref_get(r, dst->src[2]);
    const int64_t W = pw->ne[0];
    for (int64_t b = 0; b < dst->ne[2]; b++) {
        for (int64_t j = 0; j < pw->ne[2]; j++) {
            for (int64_t i = 0; i < pw->ne[1]; i++) {
                for (int64_t yy = 0; yy < W; yy++) {
                    for (int64_t xx = 0; xx < W; xx++) {
                        x[ref_idx(dst->ne, yy*W + xx, j*pw->ne[1] + i, b, 0)] +=
                            vw[ref_idx(pw->ne, xx, i, j, b)] + vh[ref_idx(pw->ne, yy, i, j, b)];
                    }
                }
            }
        }
    }
    free(vw);
    free(vh);
    ref_put(r, dst, x);
    free(x);
}
