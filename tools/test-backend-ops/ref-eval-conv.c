// ref-eval-conv.c: the reference of the convolution family and pooling, from
// the definitions as sums over input positions:
//   conv:           out[o] = sum over kernel taps k and input channels of
//                   kernel[k] * in[o*s + k*d - p] (0 outside the input)
//   im2col:         the same taps, written out as rows instead of summed
//   transposed:     every input value scattered onto out[i*s + k] (a scatter,
//                   where the CPU backend gathers)
// All in double precision over dense logical-order copies of the sources.

#include "ref-eval.h"

#include <float.h>
#include <stdlib.h>

static double * ref_alloc(const struct ggml_tensor * t) {
    return tbo_calloc((size_t) ggml_nelements(t), sizeof(double));
}

static void ref_finish(struct tbo_ref * r, const struct ggml_tensor * dst, double * y, double * a, double * b) {
    ref_put(r, dst, y);
    free(y);
    free(a);
    free(b);
}

// a 3-D view of one input plane stack: value at (x, y, z) of channel plane c
// (the index of dims >= 3 flattened), 0 outside
struct ref_vol {
    const double * v;
    int64_t W, H, D;
};

static double vol_at(const struct ref_vol * s, int64_t c, int64_t x, int64_t y, int64_t z) {
    if (x < 0 || x >= s->W || y < 0 || y >= s->H || z < 0 || z >= s->D) {
        return 0.0;
    }
    return s->v[((c*s->D + z)*s->H + y)*s->W + x];
}

// IM2COL: 1-D b [IW, IC, N], 2-D b [IW, IH, IC, N]; row (n, oy, ox), column (ic, ky, kx)
void ref_op_im2col(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const bool is_2D = ref_param_i32(dst, 6) == 1;
    const int64_t s0 = ref_param_i32(dst, 0), s1 = ref_param_i32(dst, 1);
    const int64_t p0 = ref_param_i32(dst, 2), p1 = ref_param_i32(dst, 3);
    const int64_t d0 = ref_param_i32(dst, 4), d1 = ref_param_i32(dst, 5);
    const int64_t KW = k->ne[0], KH = is_2D ? k->ne[1] : 1;
    const int64_t IC = is_2D ? b->ne[2] : b->ne[1];
    const int64_t N  = is_2D ? b->ne[3] : b->ne[2];
    const int64_t OW = dst->ne[1], OH = is_2D ? dst->ne[2] : 1;
    double * x = ref_get(r, b);
    const struct ref_vol in = { x, b->ne[0], is_2D ? b->ne[1] : 1, 1 };
    double * y = ref_alloc(dst);
    const int64_t len = IC * KH * KW;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t oy = 0; oy < OH; oy++) {
            for (int64_t ox = 0; ox < OW; ox++) {
                double * row = y + ((n*OH + oy)*OW + ox) * len;
                for (int64_t ic = 0; ic < IC; ic++) {
                    for (int64_t ky = 0; ky < KH; ky++) {
                        for (int64_t kx = 0; kx < KW; kx++) {
                            row[(ic*KH + ky)*KW + kx] = vol_at(&in, n*IC + ic, ox*s0 + kx*d0 - p0, is_2D ? oy*s1 + ky*d1 - p1 : 0, 0);
                        }
                    }
                }
            }
        }
    }
    ref_finish(r, dst, y, x, NULL);
}

// IM2COL_3D: b [IW, IH, ID, N*IC]; row (n, oz, oy, ox), column (ic, kz, ky, kx)
void ref_op_im2col_3d(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    int64_t s[3], p[3], d[3];
    for (int i = 0; i < 3; i++) {
        s[i] = ref_param_i32(dst, i);
        p[i] = ref_param_i32(dst, 3 + i);
        d[i] = ref_param_i32(dst, 6 + i);
    }
    const int64_t IC = ref_param_i32(dst, 9);
    const int64_t N  = b->ne[3] / IC;
    const int64_t KW = k->ne[0], KH = k->ne[1], KD = k->ne[2];
    const int64_t OW = dst->ne[1], OH = dst->ne[2];
    const int64_t OD = (b->ne[2] + 2*p[2] - d[2]*(KD - 1) - 1) / s[2] + 1; // not ne3 / N: N may be 0
    double * x = ref_get(r, b);
    const struct ref_vol in = { x, b->ne[0], b->ne[1], b->ne[2] };
    double * y = ref_alloc(dst);
    const int64_t len = IC * KD * KH * KW;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t oz = 0; oz < OD; oz++) {
            for (int64_t oy = 0; oy < OH; oy++) {
                for (int64_t ox = 0; ox < OW; ox++) {
                    double * row = y + (((n*OD + oz)*OH + oy)*OW + ox) * len;
                    int64_t col = 0;
                    for (int64_t ic = 0; ic < IC; ic++) {
                        for (int64_t kz = 0; kz < KD; kz++) {
                            for (int64_t ky = 0; ky < KH; ky++) {
                                for (int64_t kx = 0; kx < KW; kx++) {
                                    row[col++] = vol_at(&in, n*IC + ic, ox*s[0] + kx*d[0] - p[0], oy*s[1] + ky*d[1] - p[1],
                                                        oz*s[2] + kz*d[2] - p[2]);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    ref_finish(r, dst, y, x, NULL);
}

// IM2COL_BACK: the adjoint of IM2COL: every row value is added to the input
// position it was copied from (src0: the rows, src1: the kernel)
void ref_op_im2col_back(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * g = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const bool is_2D = ref_param_i32(dst, 6) == 1;
    const int64_t s0 = ref_param_i32(dst, 0), s1 = ref_param_i32(dst, 1);
    const int64_t p0 = ref_param_i32(dst, 2), p1 = ref_param_i32(dst, 3);
    const int64_t d0 = ref_param_i32(dst, 4), d1 = ref_param_i32(dst, 5);
    const int64_t IW = dst->ne[0], IH = is_2D ? dst->ne[1] : 1;
    const int64_t IC = is_2D ? dst->ne[2] : dst->ne[1];
    const int64_t N  = is_2D ? dst->ne[3] : dst->ne[2];
    const int64_t KW = k->ne[0], KH = is_2D ? k->ne[1] : 1;
    const int64_t OW = g->ne[1], OH = is_2D ? g->ne[2] : 1;
    double * x = ref_get(r, g);
    double * y = ref_alloc(dst);
    for (int64_t n = 0; n < N; n++) {
        for (int64_t oy = 0; oy < OH; oy++) {
            for (int64_t ox = 0; ox < OW; ox++) {
                const double * row = x + ((n*OH + oy)*OW + ox) * IC*KH*KW;
                for (int64_t ic = 0; ic < IC; ic++) {
                    for (int64_t ky = 0; ky < KH; ky++) {
                        for (int64_t kx = 0; kx < KW; kx++) {
                            const int64_t ix = ox*s0 + kx*d0 - p0, iy = is_2D ? oy*s1 + ky*d1 - p1 : 0;
                            if (ix >= 0 && ix < IW && iy >= 0 && iy < IH) {
                                y[((n*IC + ic)*IH + iy)*IW + ix] += row[(ic*KH + ky)*KW + kx];
                            }
                        }
                    }
                }
            }
        }
    }
    ref_finish(r, dst, y, x, NULL);
}

// COL2IM_1D: column (oc*K + k) of time step t lands on output time t*s0 + k - p0
void ref_op_col2im_1d(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int64_t s0 = ref_param_i32(dst, 0), OC = ref_param_i32(dst, 1), p0 = ref_param_i32(dst, 2);
    const int64_t K = a->ne[0] / OC, T_out = dst->ne[0];
    double * x = ref_get(r, a);
    double * y = ref_alloc(dst);
    for (int64_t t = 0; t < a->ne[1]; t++) {
        for (int64_t oc = 0; oc < OC; oc++) {
            for (int64_t kk = 0; kk < K; kk++) {
                const int64_t o = t*s0 + kk - p0;
                if (o >= 0 && o < T_out) {
                    y[oc*T_out + o] += x[t*a->ne[0] + oc*K + kk];
                }
            }
        }
    }
    ref_finish(r, dst, y, x, NULL);
}

// CONV_2D (kernel [KW, KH, IC, OC], input [W, H, IC, N]) and CONV_3D (kernel
// [KW, KH, KD, OC*IC], input [W, H, D, N*IC], output [OW, OH, OD, N*OC])
void ref_op_conv(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const bool is_3d = dst->op == GGML_OP_CONV_3D;
    int64_t s[3] = { 1, 1, 1 }, p[3] = { 0, 0, 0 }, d[3] = { 1, 1, 1 };
    int64_t IC, N, OC;
    if (is_3d) {
        for (int i = 0; i < 3; i++) {
            s[i] = ref_param_i32(dst, i);
            p[i] = ref_param_i32(dst, 3 + i);
            d[i] = ref_param_i32(dst, 6 + i);
        }
        IC = ref_param_i32(dst, 9);
        N  = ref_param_i32(dst, 10);
        OC = ref_param_i32(dst, 11);
    } else {
        for (int i = 0; i < 2; i++) {
            s[i] = ref_param_i32(dst, i);
            p[i] = ref_param_i32(dst, 2 + i);
            d[i] = ref_param_i32(dst, 4 + i);
        }
        IC = b->ne[2];
        N  = b->ne[3];
        OC = k->ne[3];
    }
    const int64_t KW = k->ne[0], KH = k->ne[1], KD = is_3d ? k->ne[2] : 1;
    const int64_t OW = dst->ne[0], OH = dst->ne[1], OD = is_3d ? dst->ne[2] : 1;
    double * x = ref_get(r, b);
    double * w = ref_get(r, k);
    const struct ref_vol in = { x, b->ne[0], b->ne[1], is_3d ? b->ne[2] : 1 };
    double * y = ref_alloc(dst);
    // output plane (n, oc) and kernel block (oc, ic): the same flattening in 2-D and 3-D
    for (int64_t n = 0; n < N; n++) {
        for (int64_t oc = 0; oc < OC; oc++) {
            double * out = y + (n*OC + oc) * OD*OH*OW;
            for (int64_t oz = 0; oz < OD; oz++) {
                for (int64_t oy = 0; oy < OH; oy++) {
                    for (int64_t ox = 0; ox < OW; ox++) {
                        double sum = 0.0;
                        for (int64_t ic = 0; ic < IC; ic++) {
                            const double * kw = w + (oc*IC + ic) * KD*KH*KW;
                            for (int64_t kz = 0; kz < KD; kz++) {
                                for (int64_t ky = 0; ky < KH; ky++) {
                                    for (int64_t kx = 0; kx < KW; kx++) {
                                        sum += kw[(kz*KH + ky)*KW + kx] *
                                               vol_at(&in, n*IC + ic, ox*s[0] + kx*d[0] - p[0], oy*s[1] + ky*d[1] - p[1],
                                                      oz*s[2] + kz*d[2] - p[2]);
                                    }
                                }
                            }
                        }
                        out[(oz*OH + oy)*OW + ox] = sum;
                    }
                }
            }
        }
    }
    free(w);
    ref_finish(r, dst, y, x, NULL);
}

// CONV_2D_DW: kernel [KW, KH, 1, C], input [W, H, C, N]; channel c by kernel c alone
void ref_op_conv_2d_dw(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int64_t s0 = ref_param_i32(dst, 0), s1 = ref_param_i32(dst, 1);
    const int64_t p0 = ref_param_i32(dst, 2), p1 = ref_param_i32(dst, 3);
    const int64_t d0 = ref_param_i32(dst, 4), d1 = ref_param_i32(dst, 5);
    const int64_t KW = k->ne[0], KH = k->ne[1], OW = dst->ne[0], OH = dst->ne[1];
    double * x = ref_get(r, b);
    double * w = ref_get(r, k);
    const struct ref_vol in = { x, b->ne[0], b->ne[1], 1 };
    double * y = ref_alloc(dst);
    for (int64_t n = 0; n < b->ne[3]; n++) {
        for (int64_t c = 0; c < b->ne[2]; c++) {
            for (int64_t oy = 0; oy < OH; oy++) {
                for (int64_t ox = 0; ox < OW; ox++) {
                    double sum = 0.0;
                    for (int64_t ky = 0; ky < KH; ky++) {
                        for (int64_t kx = 0; kx < KW; kx++) {
                            sum += w[(c*KH + ky)*KW + kx] * vol_at(&in, n*b->ne[2] + c, ox*s0 + kx*d0 - p0, oy*s1 + ky*d1 - p1, 0);
                        }
                    }
                    y[ref_idx(dst->ne, ox, oy, c, n)] = sum;
                }
            }
        }
    }
    free(w);
    ref_finish(r, dst, y, x, NULL);
}

// CONV_TRANSPOSE_1D: kernel [K, OC, IC], input [L, IC, N]: in[l, ic] * kernel[k, oc, ic] onto out[l*s + k, oc]
// CONV_TRANSPOSE_2D: kernel [KW, KH, OC, IC], input [W, H, IC, N], likewise in 2-D
void ref_op_conv_transpose(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const bool is_2d = dst->op == GGML_OP_CONV_TRANSPOSE_2D;
    const int64_t s = ref_param_i32(dst, 0);
    const int64_t KW = k->ne[0], KH = is_2d ? k->ne[1] : 1;
    const int64_t OC = is_2d ? k->ne[2] : k->ne[1], IC = is_2d ? k->ne[3] : k->ne[2];
    const int64_t W = b->ne[0], H = is_2d ? b->ne[1] : 1, N = is_2d ? b->ne[3] : b->ne[2];
    const int64_t OW = dst->ne[0], OH = is_2d ? dst->ne[1] : 1;
    double * x = ref_get(r, b);
    double * w = ref_get(r, k);
    double * y = ref_alloc(dst);
    for (int64_t n = 0; n < N; n++) {
        for (int64_t ic = 0; ic < IC; ic++) {
            for (int64_t iy = 0; iy < H; iy++) {
                for (int64_t ix = 0; ix < W; ix++) {
                    const double v = x[((n*IC + ic)*H + iy)*W + ix];
                    for (int64_t oc = 0; oc < OC; oc++) {
                        const double * kw = w + (ic*OC + oc)*KH*KW;
                        double * out = y + (n*OC + oc)*OH*OW;
                        for (int64_t ky = 0; ky < KH; ky++) {
                            for (int64_t kx = 0; kx < KW; kx++) {
                                out[(iy*s + ky)*OW + ix*s + kx] += v * kw[ky*KW + kx];
                            }
                        }
                    }
                }
            }
        }
    }
    free(w);
    ref_finish(r, dst, y, x, NULL);
}

// POOL_1D / POOL_2D: max or average of the window's positions inside the input;
// the 1-D average divides by their number, the 2-D one by k0*k1
void ref_op_pool(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const bool is_2d = dst->op == GGML_OP_POOL_2D;
    const bool is_max = ref_param_i32(dst, 0) == GGML_OP_POOL_MAX;
    const int64_t k0 = ref_param_i32(dst, 1), k1 = is_2d ? ref_param_i32(dst, 2) : 1;
    const int64_t s0 = ref_param_i32(dst, is_2d ? 3 : 2), s1 = is_2d ? ref_param_i32(dst, 4) : 1;
    const int64_t p0 = ref_param_i32(dst, is_2d ? 5 : 3), p1 = is_2d ? ref_param_i32(dst, 6) : 0;
    double * x = ref_get(r, a);
    double * y = ref_alloc(dst);
    const int64_t H = is_2d ? a->ne[1] : 1, planes = ggml_nelements(a) / (a->ne[0] * H);
    const int64_t OW = dst->ne[0], OH = is_2d ? dst->ne[1] : 1;
    for (int64_t c = 0; c < planes; c++) {
        for (int64_t oy = 0; oy < OH; oy++) {
            for (int64_t ox = 0; ox < OW; ox++) {
                double acc = is_max ? -DBL_MAX : 0.0;
                int64_t count = 0;
                for (int64_t iy = oy*s1 - p1; iy < oy*s1 - p1 + k1; iy++) {
                    for (int64_t ix = ox*s0 - p0; ix < ox*s0 - p0 + k0; ix++) {
                        if (iy < 0 || iy >= H || ix < 0 || ix >= a->ne[0]) {
                            continue;
                        }
                        const double v = x[(c*H + iy)*a->ne[0] + ix];
                        acc = is_max ? (v > acc ? v : acc) : acc + v;
                        count++;
                    }
                }
                if (is_max && count == 0) {
                    acc = -(double) FLT_MAX;
                } else if (!is_max) {
                    acc = is_2d ? acc / (double) (k0*k1) : count > 0 ? acc / (double) count : 0.0;
                }
                y[(c*OH + oy)*OW + ox] = acc;
            }
        }
    }
    ref_finish(r, dst, y, x, NULL);
}

// POOL_2D_BACK: each output gradient goes to its window: spread evenly over
// the k0*k1 positions (average; those outside the input are dropped), or to
// the first position of the window's maximum in the forward input
void ref_op_pool_2d_back(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * g  = dst->src[0];
    const struct ggml_tensor * af = dst->src[1];
    const bool is_max = ref_param_i32(dst, 0) == GGML_OP_POOL_MAX;
    const int64_t k0 = ref_param_i32(dst, 1), k1 = ref_param_i32(dst, 2);
    const int64_t s0 = ref_param_i32(dst, 3), s1 = ref_param_i32(dst, 4);
    const int64_t p0 = ref_param_i32(dst, 5), p1 = ref_param_i32(dst, 6);
    const int64_t W = dst->ne[0], H = dst->ne[1], planes = dst->ne[2] * dst->ne[3];
    double * gv = ref_get(r, g);
    double * fv = ref_get(r, af);
    double * y = ref_alloc(dst);
    for (int64_t c = 0; c < planes; c++) {
        for (int64_t oy = 0; oy < g->ne[1]; oy++) {
            for (int64_t ox = 0; ox < g->ne[0]; ox++) {
                const double gr = gv[(c*g->ne[1] + oy)*g->ne[0] + ox];
                int64_t best = -1;
                for (int64_t iy = oy*s1 - p1; iy < oy*s1 - p1 + k1; iy++) {
                    for (int64_t ix = ox*s0 - p0; ix < ox*s0 - p0 + k0; ix++) {
                        if (iy < 0 || iy >= H || ix < 0 || ix >= W) {
                            continue;
                        }
                        const int64_t at = (c*H + iy)*W + ix;
                        if (!is_max) {
                            y[at] += gr / (double) (k0*k1);
                        } else if (best < 0 || fv[at] > fv[best]) {
                            best = at;
                        }
                    }
                }
                if (is_max && best >= 0) {
                    y[best] += gr;
                }
            }
        }
    }
    free(fv);
    ref_finish(r, dst, y, gv, NULL);
}
