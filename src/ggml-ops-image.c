// ggml-ops-image.c: constructors of the image and signal ops that are not
// convolutions: UPSCALE (interpolation), circular and reflective padding,
// ROLL, TIMESTEP_EMBEDDING, and the window / relative-position ops of SAM's
// image encoder (WIN_PART, WIN_UNPART, GET_REL_POS, ADD_REL_POS).
//
// Each op documents its op_params layout; the backends read them as written.

#include "ggml-impl.h"

#include <stdlib.h>

// UPSCALE: op_params[0] = mode (ggml_scale_mode in the low byte | ggml_scale_flag bits)
static struct ggml_tensor * interpolate_op(struct ggml_context * ctx, struct ggml_tensor * a,
                                           int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, uint32_t mode) {
    GGML_ASSERT((mode & 0xFF) < GGML_SCALE_MODE_COUNT);
    GGML_ASSERT(!(mode & GGML_SCALE_FLAG_ANTIALIAS) || (mode & 0xFF) == GGML_SCALE_MODE_BILINEAR);
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    struct ggml_tensor * result = ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    ggml_set_op_params_i32(result, 0, (int32_t) mode);
    result->op     = GGML_OP_UPSCALE;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_upscale(struct ggml_context * ctx, struct ggml_tensor * a, int scale_factor, enum ggml_scale_mode mode) {
    GGML_ASSERT(scale_factor > 1);
    return interpolate_op(ctx, a, a->ne[0] * scale_factor, a->ne[1] * scale_factor, a->ne[2], a->ne[3], (uint32_t) mode);
}

struct ggml_tensor * ggml_upscale_ext(struct ggml_context * ctx, struct ggml_tensor * a, int ne0, int ne1, int ne2, int ne3,
                                      enum ggml_scale_mode mode) {
    return interpolate_op(ctx, a, ne0, ne1, ne2, ne3, (uint32_t) mode);
}

struct ggml_tensor * ggml_interpolate(struct ggml_context * ctx, struct ggml_tensor * a,
                                      int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3, uint32_t mode) {
    return interpolate_op(ctx, a, ne0, ne1, ne2, ne3, mode);
}

// PAD with op_params[8] = 1 (see ggml_pad_ext)
struct ggml_tensor * ggml_pad_ext_circular(struct ggml_context * ctx, struct ggml_tensor * a,
                                           int lp0, int rp0, int lp1, int rp1, int lp2, int rp2, int lp3, int rp3) {
    struct ggml_tensor * result = ggml_pad_ext(ctx, a, lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3);
    ggml_set_op_params_i32(result, 8, 1);
    return result;
}

struct ggml_tensor * ggml_pad_circular(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1, int p2, int p3) {
    return ggml_pad_ext_circular(ctx, a, 0, p0, 0, p1, 0, p2, 0, p3);
}

// PAD_REFLECT_1D: op_params p0, p1
struct ggml_tensor * ggml_pad_reflect_1d(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1) {
    GGML_ASSERT(p0 >= 0 && p1 >= 0);
    // a reflection needs p values besides the edge one
    GGML_ASSERT(p0 < a->ne[0]);
    GGML_ASSERT(p1 < a->ne[0]);
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    struct ggml_tensor * result = ggml_new_tensor_4d(ctx, a->type, a->ne[0] + p0 + p1, a->ne[1], a->ne[2], a->ne[3]);
    const int32_t params[2] = { p0, p1 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_PAD_REFLECT_1D;
    result->src[0] = a;
    return result;
}

// ROLL: op_params shift0..shift3; dst[i] = a[(i - shift) mod ne] in every dimension
struct ggml_tensor * ggml_roll(struct ggml_context * ctx, struct ggml_tensor * a, int shift0, int shift1, int shift2, int shift3) {
    GGML_ASSERT(a->nb[0] == ggml_type_size(a->type));
    GGML_ASSERT(labs((long) shift0) < a->ne[0]);
    GGML_ASSERT(labs((long) shift1) < a->ne[1]);
    GGML_ASSERT(labs((long) shift2) < a->ne[2]);
    GGML_ASSERT(labs((long) shift3) < a->ne[3]);
    struct ggml_tensor * result = ggml_dup_tensor(ctx, a);
    const int32_t params[4] = { shift0, shift1, shift2, shift3 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_ROLL;
    result->src[0] = a;
    return result;
}

// TIMESTEP_EMBEDDING: op_params dim, max_period
struct ggml_tensor * ggml_timestep_embedding(struct ggml_context * ctx, struct ggml_tensor * timesteps, int dim, int max_period) {
    struct ggml_tensor * result = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, dim, timesteps->ne[0]);
    ggml_set_op_params_i32(result, 0, dim);
    ggml_set_op_params_i32(result, 1, max_period);
    result->op     = GGML_OP_TIMESTEP_EMBEDDING;
    result->src[0] = timesteps;
    return result;
}

// WIN_PART: op_params npx, npy, w (windows across, windows down, window size)
struct ggml_tensor * ggml_win_part(struct ggml_context * ctx, struct ggml_tensor * a, int w) {
    GGML_ASSERT(a->ne[3] == 1);
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    const int px  = (int) ((w - a->ne[1] % w) % w);
    const int py  = (int) ((w - a->ne[2] % w) % w);
    const int npx = (int) ((px + a->ne[1]) / w);
    const int npy = (int) ((py + a->ne[2]) / w);
    const int64_t ne[4] = { a->ne[0], w, w, (int64_t) npx * npy };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    const int32_t params[3] = { npx, npy, w };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_WIN_PART;
    result->src[0] = a;
    return result;
}

// WIN_UNPART: op_params w
struct ggml_tensor * ggml_win_unpart(struct ggml_context * ctx, struct ggml_tensor * a, int w0, int h0, int w) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    const int64_t ne[4] = { a->ne[0], w0, h0, 1 };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 3, ne);
    ggml_set_op_params_i32(result, 0, w);
    result->op     = GGML_OP_WIN_UNPART;
    result->src[0] = a;
    return result;
}

// GET_REL_POS: no op_params; F16 [a->ne[0], kh, qh]
struct ggml_tensor * ggml_get_rel_pos(struct ggml_context * ctx, struct ggml_tensor * a, int qh, int kh) {
    GGML_ASSERT(qh == kh);
    GGML_ASSERT(2 * (int64_t) MAX(qh, kh) - 1 == a->ne[1]);
    const int64_t ne[4] = { a->ne[0], kh, qh, 1 };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F16, 3, ne);
    result->op     = GGML_OP_GET_REL_POS;
    result->src[0] = a;
    return result;
}

// ADD_REL_POS: op_params[0] = inplace
static struct ggml_tensor * add_rel_pos_op(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw,
                                           struct ggml_tensor * ph, bool inplace) {
    GGML_ASSERT(ggml_are_same_shape(pw, ph));
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(ggml_is_contiguous(pw));
    GGML_ASSERT(ggml_is_contiguous(ph));
    GGML_ASSERT(ph->type == GGML_TYPE_F32);
    GGML_ASSERT(pw->type == GGML_TYPE_F32);
    GGML_ASSERT(pw->ne[3] == a->ne[2]);
    GGML_ASSERT(pw->ne[0] * pw->ne[0] == a->ne[0]);
    GGML_ASSERT(pw->ne[1] * pw->ne[2] == a->ne[1]);
    struct ggml_tensor * result = inplace ? ggml_view_tensor(ctx, a) : ggml_dup_tensor(ctx, a);
    ggml_set_op_params_i32(result, 0, inplace ? 1 : 0);
    result->op     = GGML_OP_ADD_REL_POS;
    result->src[0] = a;
    result->src[1] = pw;
    result->src[2] = ph;
    return result;
}

struct ggml_tensor * ggml_add_rel_pos(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw, struct ggml_tensor * ph) {
    return add_rel_pos_op(ctx, a, pw, ph, false);
}

struct ggml_tensor * ggml_add_rel_pos_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * pw,
                                              struct ggml_tensor * ph) {
    return add_rel_pos_op(ctx, a, pw, ph, true);
}
