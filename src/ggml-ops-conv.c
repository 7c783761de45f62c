// ggml-ops-conv.c: constructors of the convolutions and pooling: IM2COL
// (patches as rows) and the convolutions composed of it (conv_1d, conv_2d,
// conv_3d and their depthwise and shorthand forms), the one-op convolutions
// (CONV_2D, CONV_3D, CONV_2D_DW, CONV_TRANSPOSE_1D/2D), COL2IM_1D and POOL.
//
// The composite convolutions build the same graph as upstream (IM2COL, then
// MUL_MAT with the kernel, then reshapes / a permute), because backends see
// and may fuse those nodes. Each op documents its op_params layout.

#include "ggml-impl.h"

// the output length of a convolution along one dimension
static int64_t conv_out_size(int64_t ins, int64_t ks, int s, int p, int d) {
    return (ins + 2 * p - d * (ks - 1) - 1) / s + 1;
}

// the im2col type of a composite convolution: F16 patches, F32 for BF16 kernels
static enum ggml_type conv_im2col_type(const struct ggml_tensor * kernel) {
    return kernel->type == GGML_TYPE_BF16 ? GGML_TYPE_F32 : GGML_TYPE_F16;
}

//
// IM2COL: op_params s0, s1, p0, p1, d0, d1, is_2D
//

struct ggml_tensor * ggml_im2col(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                 int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D, enum ggml_type dst_type) {
    if (is_2D) {
        GGML_ASSERT(a->ne[2] == b->ne[2]);
    } else {
        GGML_ASSERT(b->ne[1] == a->ne[1]);
        GGML_ASSERT(b->ne[3] == 1);
    }

    const int64_t OH = is_2D ? conv_out_size(b->ne[1], a->ne[1], s1, p1, d1) : 0;
    const int64_t OW = conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    GGML_ASSERT((!is_2D || OH > 0) && "b too small compared to a");
    GGML_ASSERT(OW > 0 && "b too small compared to a");

    const int64_t ne[4] = {
        is_2D ? a->ne[2] * a->ne[1] * a->ne[0] : a->ne[1] * a->ne[0],
        OW,
        is_2D ? OH : b->ne[2],
        is_2D ? b->ne[3] : 1,
    };
    struct ggml_tensor * result = ggml_new_tensor(ctx, dst_type, 4, ne);
    const int32_t params[7] = { s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_IM2COL;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// IM2COL_BACK: op_params as IM2COL. Upstream's backward pass passes the
// gradient as a and the kernel as b, so src[0] is the gradient.
struct ggml_tensor * ggml_im2col_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      int64_t * ne, int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D) {
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    const int32_t params[7] = { s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_IM2COL_BACK;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// IM2COL_3D: op_params s0, s1, s2, p0, p1, p2, d0, d1, d2, IC
struct ggml_tensor * ggml_im2col_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC,
                                    int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2,
                                    enum ggml_type dst_type) {
    const int64_t N  = b->ne[3] / IC;
    const int64_t OD = conv_out_size(b->ne[2], a->ne[2], s2, p2, d2);
    const int64_t OH = conv_out_size(b->ne[1], a->ne[1], s1, p1, d1);
    const int64_t OW = conv_out_size(b->ne[0], a->ne[0], s0, p0, d0);
    GGML_ASSERT(OD > 0 && "b too small compared to a");
    GGML_ASSERT(OH > 0 && "b too small compared to a");
    GGML_ASSERT(OW > 0 && "b too small compared to a");

    const int64_t ne[4] = { a->ne[0] * a->ne[1] * a->ne[2] * IC, OW, OH, OD * N };
    struct ggml_tensor * result = ggml_new_tensor(ctx, dst_type, 4, ne);
    const int32_t params[10] = { s0, s1, s2, p0, p1, p2, d0, d1, d2, (int32_t) IC };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_IM2COL_3D;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// COL2IM_1D: op_params s0, oc, p0
struct ggml_tensor * ggml_col2im_1d(struct ggml_context * ctx, struct ggml_tensor * a, int s0, int oc, int p0) {
    GGML_ASSERT(ggml_is_matrix(a));
    GGML_ASSERT(ggml_is_contiguous(a));
    GGML_ASSERT(a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16 || a->type == GGML_TYPE_BF16);
    GGML_ASSERT(s0 > 0 && oc > 0 && p0 >= 0);

    const int64_t K     = a->ne[0] / oc;
    const int64_t T_out = (a->ne[1] - 1) * s0 + K - 2 * (int64_t) p0;
    GGML_ASSERT(a->ne[0] == K * oc && "a->ne[0] must be a whole number of oc blocks");
    GGML_ASSERT(K > 0 && T_out > 0);

    struct ggml_tensor * result = ggml_new_tensor_2d(ctx, a->type, T_out, oc);
    const int32_t params[3] = { s0, oc, p0 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_COL2IM_1D;
    result->src[0] = a;
    return result;
}

//
// composite convolutions
//

struct ggml_tensor * ggml_conv_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                  int s0, int p0, int d0) {
    // [N, OL, IC*K]
    struct ggml_tensor * im2col = ggml_im2col(ctx, a, b, s0, 0, p0, 0, d0, 0, false, conv_im2col_type(a));
    // [N*OL, IC*K] x [OC, IC*K] -> [N*OL, OC] (OL fastest)
    struct ggml_tensor * result = ggml_mul_mat(ctx,
            ggml_reshape_2d(ctx, im2col, im2col->ne[0], im2col->ne[2] * im2col->ne[1]),
            ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1], a->ne[2]));
    return ggml_reshape_3d(ctx, result, im2col->ne[1], a->ne[2], im2col->ne[2]); // [N, OC, OL]
}

struct ggml_tensor * ggml_conv_1d_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int s, int d) {
    return ggml_conv_1d(ctx, a, b, s, (int) (a->ne[0] / 2), d);
}

struct ggml_tensor * ggml_conv_1d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     int s0, int p0, int d0) {
    struct ggml_tensor * new_b  = ggml_reshape_4d(ctx, b, b->ne[0], 1, b->ne[1], b->ne[2]);
    struct ggml_tensor * im2col = ggml_im2col(ctx, a, new_b, s0, 0, p0, 0, d0, 0, false, conv_im2col_type(a));
    struct ggml_tensor * result = ggml_mul_mat(ctx, im2col, a);
    return ggml_reshape_3d(ctx, result, result->ne[0], result->ne[2], 1);
}

struct ggml_tensor * ggml_conv_1d_dw_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                        int s0, int d0) {
    return ggml_conv_1d_dw(ctx, a, b, s0, (int) (a->ne[0] / 2), d0);
}

struct ggml_tensor * ggml_conv_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                  int s0, int s1, int p0, int p1, int d0, int d1) {
    // [N, OH, OW, IC*KH*KW]
    struct ggml_tensor * im2col = ggml_im2col(ctx, a, b, s0, s1, p0, p1, d0, d1, true, conv_im2col_type(a));
    // [N*OH*OW, IC*KH*KW] x [OC, IC*KH*KW] -> [OC][N*OH*OW]
    struct ggml_tensor * result = ggml_mul_mat(ctx,
            ggml_reshape_2d(ctx, im2col, im2col->ne[0], im2col->ne[3] * im2col->ne[2] * im2col->ne[1]),
            ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2], a->ne[3]));
    result = ggml_reshape_4d(ctx, result, im2col->ne[1], im2col->ne[2], im2col->ne[3], a->ne[3]); // [OC, N, OH, OW]
    return ggml_cont(ctx, ggml_permute(ctx, result, 0, 1, 3, 2));                              // [N, OC, OH, OW]
}

struct ggml_tensor * ggml_conv_2d_sk_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return ggml_conv_2d(ctx, a, b, (int) a->ne[0], (int) a->ne[1], 0, 0, 1, 1);
}

struct ggml_tensor * ggml_conv_2d_s1_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return ggml_conv_2d(ctx, a, b, 1, 1, (int) (a->ne[0] / 2), (int) (a->ne[1] / 2), 1, 1);
}

struct ggml_tensor * ggml_conv_2d_dw(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     int s0, int s1, int p0, int p1, int d0, int d1) {
    struct ggml_tensor * new_a  = ggml_reshape_4d(ctx, a, a->ne[0], a->ne[1], 1, a->ne[2] * a->ne[3]);
    struct ggml_tensor * im2col = ggml_im2col(ctx, new_a,
            ggml_reshape_4d(ctx, b, b->ne[0], b->ne[1], 1, b->ne[2] * b->ne[3]),
            s0, s1, p0, p1, d0, d1, true, conv_im2col_type(a));                  // [N*IC, OH, OW, KH*KW]
    struct ggml_tensor * new_b = ggml_reshape_4d(ctx, im2col, im2col->ne[0], im2col->ne[2] * im2col->ne[1],
                                                 b->ne[2], b->ne[3]);               // [N, IC, OH*OW, KH*KW]
    new_a = ggml_reshape_4d(ctx, new_a, new_a->ne[0] * new_a->ne[1], new_a->ne[2], new_a->ne[3], 1); // [1, OC, 1, KH*KW]
    struct ggml_tensor * result = ggml_mul_mat(ctx, new_a, new_b);
    return ggml_reshape_4d(ctx, result, im2col->ne[1], im2col->ne[2], b->ne[2], b->ne[3]); // [N, OC, OH, OW]
}

struct ggml_tensor * ggml_conv_3d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int64_t IC,
                                  int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2) {
    // [N*OD, OH, OW, IC*KD*KH*KW]
    struct ggml_tensor * im2col = ggml_im2col_3d(ctx, a, b, IC, s0, s1, s2, p0, p1, p2, d0, d1, d2, conv_im2col_type(a));
    const int64_t OC = a->ne[3] / IC;
    const int64_t N  = b->ne[3] / IC;
    struct ggml_tensor * result = ggml_mul_mat(ctx,
            ggml_reshape_2d(ctx, im2col, im2col->ne[0], im2col->ne[3] * im2col->ne[2] * im2col->ne[1]),
            ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2] * IC, OC));
    const int64_t OD = im2col->ne[3] / N;
    result = ggml_reshape_4d(ctx, result, im2col->ne[1] * im2col->ne[2], OD, N, OC);    // [OC, N, OD, OH*OW]
    result = ggml_cont(ctx, ggml_permute(ctx, result, 0, 1, 3, 2));                    // [N, OC, OD, OH*OW]
    return ggml_reshape_4d(ctx, result, im2col->ne[1], im2col->ne[2], OD, OC * N);    // [N*OC, OD, OH, OW]
}

//
// one-op convolutions
//

// CONV_2D_DW: op_params stride0, stride1, pad0, pad1, dilation0, dilation1
struct ggml_tensor * ggml_conv_2d_dw_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                            int stride0, int stride1, int pad0, int pad1, int dilation0, int dilation1) {
    GGML_ASSERT(a->ne[2] == 1);
    GGML_ASSERT(a->ne[3] == b->ne[2]);
    const int64_t ne[4] = {
        conv_out_size(b->ne[0], a->ne[0], stride0, pad0, dilation0),
        conv_out_size(b->ne[1], a->ne[1], stride1, pad1, dilation1),
        b->ne[2],
        b->ne[3],
    };
    struct ggml_tensor * result = ggml_new_tensor(ctx, b->type, 4, ne);
    if (ggml_is_contiguous_channels(b)) {
        // the result takes the input's channel-contiguous (CWHN) layout
        GGML_ASSERT(ggml_blck_size(result->type) == 1);
        const size_t ts = ggml_type_size(result->type);
        result->nb[0] = result->ne[2] * ts;
        result->nb[1] = result->ne[0] * result->nb[0];
        result->nb[2] = ts;
    }
    const int32_t params[6] = { stride0, stride1, pad0, pad1, dilation0, dilation1 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_CONV_2D_DW;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// CONV_2D: op_params s0, s1, p0, p1, d0, d1
struct ggml_tensor * ggml_conv_2d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                         int s0, int s1, int p0, int p1, int d0, int d1) {
    GGML_ASSERT(a->ne[2] == b->ne[2]);
    const int64_t ne[4] = {
        conv_out_size(b->ne[0], a->ne[0], s0, p0, d0),
        conv_out_size(b->ne[1], a->ne[1], s1, p1, d1),
        a->ne[3],
        b->ne[3],
    };
    struct ggml_tensor * result = ggml_new_tensor(ctx, b->type, 4, ne);
    const int32_t params[6] = { s0, s1, p0, p1, d0, d1 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_CONV_2D;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// CONV_3D: op_params s0, s1, s2, p0, p1, p2, d0, d1, d2, c, n, oc
struct ggml_tensor * ggml_conv_3d_direct(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                         int s0, int s1, int s2, int p0, int p1, int p2, int d0, int d1, int d2,
                                         int c, int n, int oc) {
    GGML_ASSERT(a->ne[3] == (int64_t) c * oc);
    GGML_ASSERT(b->ne[3] == (int64_t) c * n);
    const int64_t ne[4] = {
        conv_out_size(b->ne[0], a->ne[0], s0, p0, d0),
        conv_out_size(b->ne[1], a->ne[1], s1, p1, d1),
        conv_out_size(b->ne[2], a->ne[2], s2, p2, d2),
        (int64_t) oc * n,
    };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    const int32_t params[12] = { s0, s1, s2, p0, p1, p2, d0, d1, d2, c, n, oc };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_CONV_3D;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// CONV_TRANSPOSE_1D: op_params s0, p0, d0 (only p0 = 0 and d0 = 1 exist)
struct ggml_tensor * ggml_conv_transpose_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                            int s0, int p0, int d0) {
    GGML_ASSERT(ggml_is_matrix(b));
    GGML_ASSERT(a->ne[2] == b->ne[1]);
    GGML_ASSERT(a->ne[3] == 1);
    GGML_ASSERT(p0 == 0);
    GGML_ASSERT(d0 == 1);
    const int64_t ne[4] = { (b->ne[0] - 1) * s0 + a->ne[0], a->ne[1], b->ne[2], 1 };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    const int32_t params[3] = { s0, p0, d0 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_CONV_TRANSPOSE_1D;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

// CONV_TRANSPOSE_2D: op_params stride
struct ggml_tensor * ggml_conv_transpose_2d_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                               int stride) {
    GGML_ASSERT(a->ne[3] == b->ne[2]);
    const int64_t ne[4] = {
        (b->ne[0] - 1) * stride + a->ne[0],
        (b->ne[1] - 1) * stride + a->ne[1],
        a->ne[2],
        b->ne[3],
    };
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    ggml_set_op_params_i32(result, 0, stride);
    result->op     = GGML_OP_CONV_TRANSPOSE_2D;
    result->src[0] = a;
    result->src[1] = b;
    return result;
}

//
// POOL_1D: op_params op, k0, s0, p0; POOL_2D(_BACK): op, k0, k1, s0, s1, p0, p1
// (the float paddings are stored truncated to int32, as upstream does)
//

static int64_t pool_out_size(int64_t ins, int ks, int s, float p) {
    return (int64_t) ((ins + 2 * p - ks) / s + 1);
}

struct ggml_tensor * ggml_pool_1d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op,
                                  int k0, int s0, int p0) {
    const int64_t ne[4] = { pool_out_size(a->ne[0], k0, s0, (float) p0), a->ne[1], a->ne[2], a->ne[3] };
    GGML_ASSERT(ne[0] > 0);
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    const int32_t params[4] = { (int32_t) op, k0, s0, p0 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_POOL_1D;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_pool_2d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op,
                                  int k0, int k1, int s0, int s1, float p0, float p1) {
    const int64_t ne[4] = {
        pool_out_size(a->ne[0], k0, s0, p0),
        pool_out_size(a->ne[1], k1, s1, p1),
        a->ne[2],
        a->ne[3],
    };
    GGML_ASSERT(ne[0] > 0);
    GGML_ASSERT(ne[1] > 0);
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, ne);
    const int32_t params[7] = { (int32_t) op, k0, k1, s0, s1, (int32_t) p0, (int32_t) p1 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_POOL_2D;
    result->src[0] = a;
    return result;
}

struct ggml_tensor * ggml_pool_2d_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * af,
                                       enum ggml_op_pool op, int k0, int k1, int s0, int s1, float p0, float p1) {
    struct ggml_tensor * result = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, af->ne);
    const int32_t params[7] = { (int32_t) op, k0, k1, s0, s1, (int32_t) p0, (int32_t) p1 };
    ggml_set_op_params(result, params, sizeof(params));
    result->op     = GGML_OP_POOL_2D_BACK;
    result->src[0] = a;
    result->src[1] = af;
    return result;
}
