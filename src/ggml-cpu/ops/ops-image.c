// ops-image.c: image and signal ops that are not convolutions: UPSCALE
// (nearest, bilinear with optional antialiasing, bicubic; align-corners),
// PAD_REFLECT_1D, ROLL, TIMESTEP_EMBEDDING, and the ops of SAM's image
// encoder: WIN_PART, WIN_UNPART, GET_REL_POS, ADD_REL_POS.
//
// Every kernel splits the rows of dst among the threads (each dst row is
// written by one thread) and computes each value by gathering from its
// sources, so no kernel needs a barrier.

#include "cpu-impl.h"

#include <math.h>

static void split_rows(const struct ggml_compute_params * params, const struct ggml_tensor * t, int64_t * r0, int64_t * r1) {
    ggml_cpu_split_range(t->ne[1] * t->ne[2] * t->ne[3], params->ith, params->nth, r0, r1);
}

static void row_coords(const struct ggml_tensor * t, int64_t r, int64_t * i1, int64_t * i2, int64_t * i3) {
    *i1 = r % t->ne[1];
    *i2 = (r / t->ne[1]) % t->ne[2];
    *i3 = r / (t->ne[1] * t->ne[2]);
}

static inline float f32_at(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return *(const float *)((const char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3]);
}

static inline float * f32_ptr(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (float *)((char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3]);
}

static bool supports_f32(const struct ggml_tensor * op) {
    return op->type == GGML_TYPE_F32 && op->src[0]->type == GGML_TYPE_F32;
}

//
// UPSCALE: the source coordinate of output i along a dimension is
// (i + offset)/sf - offset, sf = ne_out/ne_in in float (offset 0.5, or 0 with
// align-corners, which also makes sf = (ne_out - 1)/(ne_in - 1)); dimensions 2
// and 3 always take the nearest source index. The float arithmetic is part
// of the definition: it decides which source index "nearest" picks.
//

struct upscale_geom {
    const struct ggml_tensor * src;
    uint32_t mode;
    float sf[4];
    float offset;
};

static float upscale_bicubic_w1(float x) { const float a = -0.75f; return ((a + 2) * x - (a + 3)) * x * x + 1; }
static float upscale_bicubic_w2(float x) { const float a = -0.75f; return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; }

static float upscale_bicubic(const float p[4], float x) {
    return p[0] * upscale_bicubic_w2(x + 1) + p[1] * upscale_bicubic_w1(x) + p[2] * upscale_bicubic_w1(1 - x) +
           p[3] * upscale_bicubic_w2(2 - x);
}

static int64_t clamp_index(int64_t i, int64_t n) {
    return i < 0 ? 0 : i >= n ? n - 1 : i;
}

static float upscale_value(const struct upscale_geom * u, int64_t i0, int64_t i1, int64_t i02, int64_t i03) {
    const struct ggml_tensor * s = u->src;
    const uint32_t kind = u->mode & 0xFF;
    const float off = u->offset;
    if (kind == GGML_SCALE_MODE_NEAREST) {
        return f32_at(s, (int64_t) ((float) i0 / u->sf[0]), (int64_t) ((float) i1 / u->sf[1]), i02, i03);
    }
    if (kind == GGML_SCALE_MODE_BILINEAR && (u->mode & GGML_SCALE_FLAG_ANTIALIAS)) {
        // triangle filter widened by the downscale factor (at least one pixel)
        const float y = ((float) i1 + off) / u->sf[1];
        const float x = ((float) i0 + off) / u->sf[0];
        const float support1 = MAX(1.0f, 1.0f / u->sf[1]), support0 = MAX(1.0f, 1.0f / u->sf[0]);
        const int64_t x_min = MAX((int64_t) (x - support0 + off), 0), x_max = MIN((int64_t) (x + support0 + off), s->ne[0]);
        const int64_t y_min = MAX((int64_t) (y - support1 + off), 0), y_max = MIN((int64_t) (y + support1 + off), s->ne[1]);
        float val = 0.0f, total = 0.0f;
        for (int64_t sy = y_min; sy < y_max; sy++) {
            const float wy = MAX(1.0f - fabsf(((float) sy - y + off) / support1), 0.0f);
            for (int64_t sx = x_min; sx < x_max; sx++) {
                const float w = MAX(1.0f - fabsf(((float) sx - x + off) / support0), 0.0f) * wy;
                if (w > 0.0f) {
                    val   += f32_at(s, sx, sy, i02, i03) * w;
                    total += w;
                }
            }
        }
        return total > 0.0f ? val / total : val;
    }
    const float y = ((float) i1 + off) / u->sf[1] - off;
    const float x = ((float) i0 + off) / u->sf[0] - off;
    const int64_t y0 = (int64_t) floorf(y), x0 = (int64_t) floorf(x);
    if (kind == GGML_SCALE_MODE_BILINEAR) {
        const int64_t ya = clamp_index(y0, s->ne[1]), yb = clamp_index(y0 + 1, s->ne[1]);
        const int64_t xa = clamp_index(x0, s->ne[0]), xb = clamp_index(x0 + 1, s->ne[0]);
        const float dy = MAX(0.0f, MIN(y - (float) ya, 1.0f));
        const float dx = MAX(0.0f, MIN(x - (float) xa, 1.0f));
        return f32_at(s, xa, ya, i02, i03) * (1 - dx) * (1 - dy) + f32_at(s, xb, ya, i02, i03) * dx * (1 - dy) +
               f32_at(s, xa, yb, i02, i03) * (1 - dx) * dy       + f32_at(s, xb, yb, i02, i03) * dx * dy;
    }
    // bicubic convolution (a = -0.75), edges clamped
    float rows[4];
    for (int r = 0; r < 4; r++) {
        float p[4];
        const int64_t yy = clamp_index(y0 - 1 + r, s->ne[1]);
        for (int c = 0; c < 4; c++) {
            p[c] = f32_at(s, clamp_index(x0 - 1 + c, s->ne[0]), yy, i02, i03);
        }
        rows[r] = upscale_bicubic(p, x - (float) x0);
    }
    return upscale_bicubic(rows, y - (float) y0);
}

static bool supports_upscale(const struct ggml_tensor * op) {
    const uint32_t mode = (uint32_t) ggml_get_op_params_i32(op, 0);
    return supports_f32(op) && (mode & 0xFF) < GGML_SCALE_MODE_COUNT &&
           (!(mode & GGML_SCALE_FLAG_ANTIALIAS) || (mode & 0xFF) == GGML_SCALE_MODE_BILINEAR);
}

static void forward_upscale(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    struct upscale_geom u = { .src = src, .mode = (uint32_t) ggml_get_op_params_i32(dst, 0), .offset = 0.5f };
    for (int d = 0; d < 4; d++) {
        u.sf[d] = (float) dst->ne[d] / (float) src->ne[d];
    }
    if (u.mode & GGML_SCALE_FLAG_ALIGN_CORNERS) {
        u.offset = 0.0f;
        for (int d = 0; d < 2; d++) {
            if (dst->ne[d] > 1 && src->ne[d] > 1) {
                u.sf[d] = (float) (dst->ne[d] - 1) / (float) (src->ne[d] - 1);
            }
        }
    }
    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        const int64_t i02 = (int64_t) ((float) i2 / u.sf[2]);
        const int64_t i03 = (int64_t) ((float) i3 / u.sf[3]);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            *f32_ptr(dst, i0, i1, i2, i3) = upscale_value(&u, i0, i1, i02, i03);
        }
    }
}

//
// PAD_REFLECT_1D: [a b c d] with p0 = 2, p1 = 1 -> [c b a b c d c]
//

static void forward_pad_reflect_1d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t p0 = ggml_get_op_params_i32(dst, 0);
    const int64_t n  = src->ne[0];
    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            int64_t j = i0 - p0;
            j = j < 0 ? -j : j >= n ? 2*(n - 1) - j : j;
            *f32_ptr(dst, i0, i1, i2, i3) = f32_at(src, j, i1, i2, i3);
        }
    }
}

//
// ROLL: dst[i] = src[(i - shift) mod ne] in every dimension (elements of any
// non-block type, moved as bytes)
//

static int64_t wrap_shift(int64_t i, int64_t shift, int64_t n) {
    int64_t j = (i - shift) % n;
    return j < 0 ? j + n : j;
}

static bool supports_roll(const struct ggml_tensor * op) {
    return ggml_blck_size(op->type) == 1 && op->type == op->src[0]->type;
}

static void forward_roll(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const size_t ts = ggml_type_size(dst->type);
    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        const char * in = (const char *) src->data + wrap_shift(i1, ggml_get_op_params_i32(dst, 1), src->ne[1])*src->nb[1] +
                          wrap_shift(i2, ggml_get_op_params_i32(dst, 2), src->ne[2])*src->nb[2] +
                          wrap_shift(i3, ggml_get_op_params_i32(dst, 3), src->ne[3])*src->nb[3];
        char * out = (char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];
        const int64_t s0 = ggml_get_op_params_i32(dst, 0);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            memcpy(out + i0*dst->nb[0], in + wrap_shift(i0, s0, src->ne[0])*src->nb[0], ts);
        }
    }
}

//
// TIMESTEP_EMBEDDING: row i = [cos(t_i f_j) for j < half, sin(t_i f_j) for j < half, (0 if dim is odd)],
// f_j = exp(-ln(max_period) j / half)
//

static bool supports_timestep_embedding(const struct ggml_tensor * op) {
    return supports_f32(op) && op->nb[0] == sizeof(float);
}

static void forward_timestep_embedding(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int dim  = ggml_get_op_params_i32(dst, 0);
    const int half = dim / 2;
    const float log_period = logf((float) ggml_get_op_params_i32(dst, 1));
    int64_t r0, r1;
    ggml_cpu_split_range(dst->ne[1], params->ith, params->nth, &r0, &r1);
    for (int64_t i = r0; i < r1; i++) {
        const float t = *(const float *)((const char *) src->data + i*src->nb[0]);
        float * out = (float *)((char *) dst->data + i*dst->nb[1]);
        for (int j = 0; j < half; j++) {
            const float arg = t * expf(-log_period * (float) j / (float) half);
            out[j]        = cosf(arg);
            out[j + half] = sinf(arg);
        }
        if (dim % 2 != 0) {
            out[2*half] = 0.0f;
        }
    }
}

//
// WIN_PART: [C, W, H] -> [C, w, w, npx*npy] windows (zero beyond the input);
// WIN_UNPART: the inverse, cropping to [C, w0, h0]
//

static void forward_win_part(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t npx = ggml_get_op_params_i32(dst, 0);
    const int64_t w   = ggml_get_op_params_i32(dst, 2);
    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        const int64_t x = (i3 % npx)*w + i1, y = (i3 / npx)*w + i2;
        const bool inside = x < src->ne[1] && y < src->ne[2];
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            *f32_ptr(dst, i0, i1, i2, i3) = inside ? f32_at(src, i0, x, y, 0) : 0.0f;
        }
    }
}

static void forward_win_unpart(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t w   = ggml_get_op_params_i32(dst, 0);
    const int64_t npx = (dst->ne[1] + w - 1) / w;
    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            *f32_ptr(dst, i0, i1, i2, i3) = f32_at(src, i0, i1 % w, i2 % w, (i2 / w)*npx + i1 / w);
        }
    }
}

//
// GET_REL_POS: dst[:, k, q] = a[:, (kh - 1 - k) + q] (F16 rows copied);
// ADD_REL_POS: dst[x, y, i, j, b] = a[x, y, i, j, b] + ph[y, i, j, b] + pw[x, i, j, b],
// a's dims 0 and 1 being (x + y*W) and (i + j*ne1(pw))
//

static bool supports_get_rel_pos(const struct ggml_tensor * op) {
    return op->src[0]->type == GGML_TYPE_F16 && op->type == GGML_TYPE_F16;
}

static void forward_get_rel_pos(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t kh = dst->ne[1];
    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        const char * in = (const char *) src->data + (kh - 1 - i1 + i2)*src->nb[1];
        char * out = (char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            memcpy(out + i0*dst->nb[0], in + i0*src->nb[0], sizeof(ggml_fp16_t));
        }
    }
}

static bool supports_add_rel_pos(const struct ggml_tensor * op) {
    return op->type == GGML_TYPE_F32 && op->src[0]->type == GGML_TYPE_F32 && ggml_is_contiguous(op) &&
           op->src[1]->type == GGML_TYPE_F32 && ggml_is_contiguous(op->src[1]) &&
           op->src[2]->type == GGML_TYPE_F32 && ggml_is_contiguous(op->src[2]);
}

static void forward_add_rel_pos(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * a  = dst->src[0];
    const struct ggml_tensor * pw = dst->src[1];
    const struct ggml_tensor * ph = dst->src[2];
    const int64_t W = pw->ne[0], n1 = pw->ne[1];
    int64_t r0, r1;
    split_rows(params, dst, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_coords(dst, r, &i1, &i2, &i3);
        const int64_t i = i1 % n1, j = i1 / n1;
        const float * pwr = (const float *)((const char *) pw->data + i*pw->nb[1] + j*pw->nb[2] + i2*pw->nb[3]);
        const float * phr = (const float *)((const char *) ph->data + i*ph->nb[1] + j*ph->nb[2] + i2*ph->nb[3]);
        for (int64_t y = 0; y < W; y++) {
            for (int64_t x = 0; x < W; x++) {
                *f32_ptr(dst, y*W + x, i1, i2, i3) = f32_at(a, y*W + x, i1, i2, i3) + phr[y] + pwr[x];
            }
        }
    }
}

void ggml_cpu_register_ops_image(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_UPSCALE]            = (struct ggml_cpu_op_impl) { forward_upscale,            supports_upscale,            NULL };
    table[GGML_OP_PAD_REFLECT_1D]     = (struct ggml_cpu_op_impl) { forward_pad_reflect_1d,     supports_f32,                NULL };
    table[GGML_OP_ROLL]               = (struct ggml_cpu_op_impl) { forward_roll,               supports_roll,               NULL };
    table[GGML_OP_TIMESTEP_EMBEDDING] = (struct ggml_cpu_op_impl) { forward_timestep_embedding, supports_timestep_embedding, NULL };
    table[GGML_OP_WIN_PART]           = (struct ggml_cpu_op_impl) { forward_win_part,           supports_f32,                NULL };
    table[GGML_OP_WIN_UNPART]         = (struct ggml_cpu_op_impl) { forward_win_unpart,         supports_f32,                NULL };
    table[GGML_OP_GET_REL_POS]        = (struct ggml_cpu_op_impl) { forward_get_rel_pos,        supports_get_rel_pos,        NULL };
    table[GGML_OP_ADD_REL_POS]        = (struct ggml_cpu_op_impl) { forward_add_rel_pos,        supports_add_rel_pos,        NULL };
}
