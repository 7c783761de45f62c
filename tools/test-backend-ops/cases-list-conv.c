// cases-list-conv.c: the convolution, pooling and interpolation parts of
// upstream's make_test_cases_eval() and make_test_cases_perf(), in upstream's
// order and with its parameters; cases-list-eval.c and cases-list-perf.c
// append each part where upstream has it.

#include "tbo.h"

#define NE(...) ((const int64_t[]) { __VA_ARGS__ })

static const enum ggml_type f32_f16[2] = { GGML_TYPE_F32, GGML_TYPE_F16 };

static int64_t out_size(int64_t ins, int64_t ks, int s, int p, int d) {
    return (ins + 2 * p - d * (ks - 1) - 1) / s + 1;
}

static void eval_pool(struct tbo_case_list * l) {
    static const enum ggml_op_pool pools[2] = { GGML_OP_POOL_AVG, GGML_OP_POOL_MAX };
    for (int pi = 0; pi < 2; pi++) {
        for (int k0 = 1; k0 <= 3; k0 += 2) {
            for (int k1 = 1; k1 <= 3; k1 += 2) {
                for (int s0 = 1; s0 <= 2; s0++) {
                    for (int s1 = 1; s1 <= 2; s1++) {
                        for (int p0 = 0; p0 <= 1; p0++) {
                            for (int p1 = 0; p1 <= 1; p1++) {
                                tbo_add_pool2d(l, pools[pi], GGML_TYPE_F32, NE(10, 10, 3, 1), k0, k1, s0, s1, p0, p1);
                            }
                        }
                    }
                }
            }
        }
    }
    for (int pi = 0; pi < 2; pi++) {
        for (int k0 = 1; k0 <= 3; k0++) {
            for (int s0 = 1; s0 <= 3; s0++) {
                for (int p0 = 0; p0 <= 3; p0++) {
                    tbo_add_pool1d(l, pools[pi], GGML_TYPE_F32, NE(10, 3, 2, 1), k0, s0, p0);
                    tbo_add_pool1d(l, pools[pi], GGML_TYPE_F32, NE(11, 1, 3, 2), k0, s0, p0);
                    tbo_add_pool1d(l, pools[pi], GGML_TYPE_F32, NE(128, 2, 1, 3), k0, s0, p0);
                }
            }
        }
    }
}

static void eval_im2col(struct tbo_case_list * l) {
    const enum ggml_type F32 = GGML_TYPE_F32, F16 = GGML_TYPE_F16;
    // 1-D
    tbo_add_im2col(l, F32, F32, F32, NE(3000, 128, 1, 1), NE(3, 128, 1280, 1), 1, 0, 1, 0, 1, 0, false);
    tbo_add_im2col(l, F32, F16, F32, NE(3000, 128, 1, 1), NE(3, 128, 1280, 1), 1, 0, 1, 0, 1, 0, false);
    tbo_add_im2col(l, F32, F16, F16, NE(3000, 128, 1, 1), NE(3, 128, 1280, 1), 1, 0, 1, 0, 1, 0, false);
    tbo_add_im2col(l, F32, F16, F16, NE(3000, 384, 1, 1), NE(3, 384, 384, 1), 1, 0, 1, 0, 1, 0, false);
    for (int s0 = 1; s0 <= 3; s0 += 2) {
        for (int p0 = 0; p0 <= 3; p0 += 3) {
            for (int d0 = 1; d0 <= 3; d0 += 2) {
                tbo_add_im2col(l, F32, F32, F32, NE(20, 2, 2, 1), NE(3, 2, 2, 1), s0, 0, p0, 0, d0, 0, false);
            }
        }
    }

    // 2-D
    static const int64_t def_in[4] = { 10, 10, 3, 1 }, def_k[4] = { 3, 3, 3, 1 };
    tbo_add_im2col(l, F32, F32, F32, def_in, def_k, 1, 1, 1, 1, 1, 1, true);
    tbo_add_im2col(l, F32, F32, F16, def_in, def_k, 1, 1, 1, 1, 1, 1, true);
    tbo_add_im2col(l, F32, F16, F32, def_in, def_k, 1, 1, 1, 1, 1, 1, true);
    tbo_add_im2col(l, F32, F16, F16, def_in, def_k, 1, 1, 1, 1, 1, 1, true);
    for (int s0 = 1; s0 <= 3; s0 += 2) {
        for (int s1 = 1; s1 <= 3; s1 += 2) {
            for (int p0 = 0; p0 <= 3; p0 += 3) {
                for (int p1 = 0; p1 <= 3; p1 += 3) {
                    for (int d0 = 1; d0 <= 3; d0 += 2) {
                        for (int d1 = 1; d1 <= 3; d1 += 2) {
                            tbo_add_im2col(l, F32, F32, F32, NE(20, 20, 2, 2), NE(3, 3, 2, 2), s0, s1, p0, p1, d0, d1, true);
                        }
                    }
                }
            }
        }
    }
    static const int64_t extra_n[4] = { 32, 1024, 2048, 2560 };
    for (int i = 0; i < 4; i++) {
        tbo_add_im2col(l, F32, F16, F16, NE(12, 12, 1, extra_n[i]), NE(3, 3, 1, extra_n[i]), 1, 1, 1, 1, 1, 1, true);
        tbo_add_im2col(l, F32, F16, F16, NE(12, 12, 2, extra_n[i]), NE(3, 3, 2, extra_n[i]), 1, 1, 1, 1, 1, 1, true);
    }
    tbo_add_im2col(l, F32, F16, F16, NE(5, 5, 1, 32), NE(3, 4, 1, 32), 1, 1, 0, 0, 1, 1, true);
    tbo_add_im2col(l, F32, F32, F32, NE(2, 2, 1536, 729), NE(2, 2, 1536, 4096), 1, 1, 0, 0, 1, 1, true);
    tbo_add_im2col(l, F32, F16, F16, NE(128, 128, 1, 2), NE(32, 33, 1, 2), 1, 1, 1, 1, 1, 1, true);
    tbo_add_im2col(l, F32, F16, F16, NE(128, 128, 2, 1), NE(33, 34, 2, 1), 1, 1, 1, 1, 1, 1, true);

    // 3-D
    static const int64_t def3_in[4] = { 10, 10, 10, 9 }, def3_k[4] = { 3, 3, 3, 1 };
    static const int ones[3] = { 1, 1, 1 };
    tbo_add_im2col_3d(l, F32, F32, F32, def3_in, def3_k, 3, ones, ones, ones, false);
    tbo_add_im2col_3d(l, F32, F16, F32, def3_in, def3_k, 3, ones, ones, ones, false);
    tbo_add_im2col_3d(l, F32, F16, F16, def3_in, def3_k, 3, ones, ones, ones, false);
    // s0 s1 s2 p0 p1 p2 d0 d1 d2 IC v, each of two values, the last fastest
    for (int bits = 0; bits < (1 << 11); bits++) {
        const int b[11] = {
            (bits >> 10) & 1, (bits >> 9) & 1, (bits >> 8) & 1, (bits >> 7) & 1, (bits >> 6) & 1, (bits >> 5) & 1,
            (bits >> 4) & 1, (bits >> 3) & 1, (bits >> 2) & 1, (bits >> 1) & 1, bits & 1,
        };
        const int s[3] = { 1 + 2*b[0], 1 + 2*b[1], 1 + 2*b[2] };
        const int p[3] = { 3*b[3], 3*b[4], 3*b[5] };
        const int d[3] = { 1 + 2*b[6], 1 + 2*b[7], 1 + 2*b[8] };
        tbo_add_im2col_3d(l, F32, F32, F32, NE(20, 20, 10, 3), NE(3, 3, 3, 3), 1 + 2*b[9], s, p, d, b[10] != 0);
    }
}

static void eval_conv_2d(struct tbo_case_list * l) {
    const int s1 = 5, p0 = 5, d0 = 2, d1 = 4;
    static const int64_t KS[4] = { 1, 2, 3, 11 };
    for (int s0 = 1; s0 <= 3; s0 += 2) {
        for (int p1 = 2; p1 <= 5; p1 += 3) {
            for (int64_t Cin = 1; Cin <= 25; Cin += 24) {
                for (int64_t Cout = 1; Cout <= 12; Cout += 11) {
                    for (int kh = 0; kh < 4; kh++) {
                        for (int kw = 0; kw < 4; kw++) {
                            for (int64_t H = 1; H <= 133; H += 132) {
                                for (int64_t W = 1; W <= 141; W += 140) {
                                    if (out_size(W, KS[kw], s0, p0, d0) <= 0 || out_size(H, KS[kh], s1, p1, d1) <= 0) {
                                        continue;
                                    }
                                    for (int ti = 0; ti < 2; ti++) {
                                        for (int cwhn = 0; cwhn <= 1; cwhn++) {
                                            tbo_add_conv_2d(l, NE(W, H, Cin, 2), NE(KS[kw], KS[kh], Cin, Cout), f32_f16[ti],
                                                            s0, s1, p0, p1, d0, d1, cwhn != 0);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    for (int ti = 0; ti < 2; ti++) {
        tbo_add_conv_2d(l, NE(256, 256, 192, 1), NE(3, 3, 192, 96), f32_f16[ti], 1, 1, 1, 1, 1, 1, false);
        tbo_add_conv_2d(l, NE(256, 256, 192, 1), NE(3, 3, 192, 96), f32_f16[ti], 1, 1, 1, 1, 1, 1, true);
    }

    for (int ti = 0; ti < 2; ti++) {
        for (int cwhn = 0; cwhn <= 1; cwhn++) {
            tbo_add_conv_2d_dw(l, NE(17, 34, 9, 1), NE(3, 3, 1, 9), f32_f16[ti], 1, 0, 1, cwhn != 0);
        }
        for (int cwhn = 0; cwhn <= 1; cwhn++) {
            tbo_add_conv_2d_dw(l, NE(32, 8, 64, 1), NE(3, 3, 1, 64), f32_f16[ti], 2, 1, 1, cwhn != 0);
        }
    }
}

static bool conv3d_fits(const struct tbo_conv3d * c) {
    return out_size(c->IW, c->KW, c->s0, c->p0, c->d0) > 0 && out_size(c->IH, c->KH, c->s1, c->p1, c->d1) > 0 &&
           out_size(c->ID, c->KD, c->s2, c->p2, c->d2) > 0;
}

static void eval_conv_3d(struct tbo_case_list * l) {
    for (int ti = 0; ti < 2; ti++) {
        for (int N = 1; N <= 2; N++) {
            for (int IC = 1; IC <= 3; IC += 2) {
                for (int OC = 1; OC <= 4; OC += 3) {
                    for (int s0 = 1; s0 <= 2; s0++) {
                        for (int p1 = 0; p1 <= 1; p1++) {
                            for (int d2 = 1; d2 <= 2; d2++) {
                                const struct tbo_conv3d sym = {
                                    .N = N, .IC = IC, .ID = 18, .IH = 22, .IW = 20, .OC = OC, .KD = 3, .KH = 3, .KW = 3,
                                    .s0 = s0, .s1 = s0, .s2 = s0, .p0 = p1, .p1 = p1, .p2 = p1, .d0 = d2, .d1 = d2, .d2 = d2,
                                    .type_kernel = f32_f16[ti],
                                };
                                if (!conv3d_fits(&sym)) {
                                    continue;
                                }
                                tbo_add_conv_3d(l, &sym);
                                const struct tbo_conv3d asym = {
                                    .N = N, .IC = IC, .ID = 18, .IH = 22, .IW = 20, .OC = OC, .KD = 3, .KH = 1, .KW = 5,
                                    .s0 = 2, .s1 = 1, .s2 = 1, .p0 = 2, .p1 = 0, .p2 = 1, .d0 = 1, .d1 = 1, .d2 = 2,
                                    .type_kernel = f32_f16[ti],
                                };
                                if (!conv3d_fits(&asym)) {
                                    continue;
                                }
                                tbo_add_conv_3d(l, &asym);
                            }
                        }
                    }
                }
            }
        }
        const struct tbo_conv3d k1 = {
            .N = 1, .IC = 4, .ID = 8, .IH = 8, .IW = 8, .OC = 8, .KD = 1, .KH = 1, .KW = 1,
            .s0 = 1, .s1 = 1, .s2 = 1, .p0 = 0, .p1 = 0, .p2 = 0, .d0 = 1, .d1 = 1, .d2 = 1, .type_kernel = f32_f16[ti],
        };
        tbo_add_conv_3d(l, &k1);
    }
}

static void eval_conv_transpose(struct tbo_case_list * l) {
    static const int64_t Ks[3] = { 1, 3, 1337 }, Ls[3] = { 1, 2, 13 };
    for (int64_t Cout = 1; Cout <= 9; Cout += 8) {
        for (int64_t Cin = 1; Cin <= 7; Cin += 6) {
            for (int ki = 0; ki < 3; ki++) {
                for (int li = 0; li < 3; li++) {
                    for (int s0 = 1; s0 <= 3; s0++) {
                        tbo_add_conv_transpose_1d(l, NE(Ls[li], Cin, 1, 1), NE(Ks[ki], Cout, Cin, 1), s0, 0, 1);
                    }
                }
            }
        }
    }
    tbo_add_conv_transpose_1d(l, NE(197, 32, 1, 1), NE(16, 32, 32, 1), 1, 0, 1);
    tbo_add_conv_transpose_1d(l, NE(3, 2, 1, 1), NE(2, 3, 2, 1), 3, 0, 1);
    tbo_add_conv_transpose_1d(l, NE(3, 2, 1, 1), NE(2, 3, 2, 1), 2, 0, 1);
    tbo_add_conv_transpose_1d(l, NE(3, 2, 1, 1), NE(2, 3, 2, 1), 1, 0, 1);
    tbo_add_conv_transpose_1d(l, NE(3, 2, 1, 1), NE(3, 2, 2, 1), 2, 0, 1);
    tbo_add_conv_transpose_1d(l, NE(3, 2, 1, 1), NE(3, 2, 2, 1), 1, 0, 1);
    tbo_add_conv_transpose_1d(l, NE(3, 2, 1, 1), NE(3, 1, 2, 1), 1, 0, 1);
    tbo_add_conv_transpose_1d(l, NE(2, 1, 1, 1), NE(3, 1, 1, 1), 1, 0, 1);

    static const enum ggml_type col_types[3] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16 };
    for (int ti = 0; ti < 3; ti++) {
        const enum ggml_type t = col_types[ti];
        tbo_add_col2im_1d(l, t, 16, 32, 197, 8, 0);
        tbo_add_col2im_1d(l, t, 4, 3, 7, 2, 0);
        tbo_add_col2im_1d(l, t, 1, 5, 13, 1, 0);
        tbo_add_col2im_1d(l, t, 6, 4, 11, 3, 1);
        tbo_add_col2im_1d(l, t, 2, 3, 9, 3, 0);
        tbo_add_col2im_1d(l, t, 5, 4, 11, 2, 0);
        tbo_add_col2im_1d(l, t, 8, 4, 13, 4, 2);
        tbo_add_col2im_1d(l, t, 4, 3, 1, 2, 0);
        tbo_add_col2im_1d(l, t, 16, 1, 197, 8, 0);
        tbo_add_col2im_1d(l, t, 1, 5, 13, 3, 0);
        tbo_add_col2im_1d(l, t, 8, 2, 3, 2, 5);
    }

    for (int ti = 0; ti < 2; ti++) {
        tbo_add_conv_transpose_2d(l, NE(3, 2, 3, 1), NE(2, 2, 1, 3), 1, f32_f16[ti]);
        tbo_add_conv_transpose_2d(l, NE(10, 10, 9, 1), NE(3, 3, 1, 9), 2, f32_f16[ti]);
        tbo_add_conv_transpose_2d(l, NE(129, 63, 35, 1), NE(3, 3, 48, 35), 1, f32_f16[ti]);
    }
}

static void eval_upscale(struct tbo_case_list * l) {
    static const uint32_t modes[4] = {
        GGML_SCALE_MODE_NEAREST, GGML_SCALE_MODE_BILINEAR, GGML_SCALE_MODE_BICUBIC,
        GGML_SCALE_MODE_BILINEAR | GGML_SCALE_FLAG_ANTIALIAS,
    };
    for (int i = 0; i < 4; i++) {
        tbo_add_upscale(l, GGML_TYPE_F32, NE(512, 512, 3, 2), 2, modes[i], false);
        tbo_add_upscale(l, GGML_TYPE_F32, NE(512, 512, 3, 2), 2, modes[i], true);
        tbo_add_interpolate(l, GGML_TYPE_F32, NE(2, 5, 7, 11), NE(5, 7, 11, 13), modes[i]);
        tbo_add_interpolate(l, GGML_TYPE_F32, NE(5, 7, 11, 13), NE(2, 5, 7, 11), modes[i]);
    }
    for (uint32_t m = GGML_SCALE_MODE_BILINEAR; m <= GGML_SCALE_MODE_BICUBIC; m++) {
        const uint32_t mode = m | GGML_SCALE_FLAG_ALIGN_CORNERS;
        tbo_add_interpolate(l, GGML_TYPE_F32, NE(2, 5, 7, 11), NE(5, 7, 11, 13), mode);
        tbo_add_interpolate(l, GGML_TYPE_F32, NE(1, 4, 3, 2), NE(2, 8, 3, 2), mode);
        tbo_add_interpolate(l, GGML_TYPE_F32, NE(4, 1, 3, 2), NE(1, 1, 3, 2), mode);
    }
}

//
// perf
//

static void perf_conv(struct tbo_case_list * l) {
    // { IWH, KWH, Cout, Cin, B }
    static const int64_t cases[11][5] = {
        { 19, 4, 4096, 256, 16 }, { 19, 4, 128, 8, 16 }, { 19, 4, 130, 8, 16 }, { 19, 2, 4, 4, 16 },
        { 224, 3, 8, 3, 1 }, { 224, 2, 8, 1, 1 }, { 224, 2, 8, 1, 8 }, { 58, 3, 64, 32, 1 },
        { 58, 3, 64, 32, 8 }, { 16, 3, 512, 128, 8 }, { 1536, 3, 64, 32, 1 },
    };
    for (int ti = 0; ti < 2; ti++) {
        for (int i = 0; i < 11; i++) {
            const int64_t * c = cases[i];
            for (int cwhn = 0; cwhn <= 1; cwhn++) {
                tbo_add_conv_2d(l, NE(c[0], c[0], c[3], c[4]), NE(c[1], c[1], c[3], c[2]), f32_f16[ti], 1, 1, 0, 0, 1, 1, cwhn != 0);
            }
        }
    }
    // { N, IC, ID, IH, IW, OC }, 3x3x3 kernels, stride, padding and dilation 1
    static const int64_t c3[5][6] = {
        { 1, 320, 8, 38, 26, 1280 }, { 1, 1280, 8, 38, 26, 1280 }, { 1, 320, 8, 76, 52, 1280 },
        { 1, 1280, 8, 76, 52, 1280 }, { 1, 320, 8, 152, 104, 1280 },
    };
    for (int ti = 0; ti < 2; ti++) {
        for (int i = 0; i < 5; i++) {
            const struct tbo_conv3d c = {
                .N = c3[i][0], .IC = c3[i][1], .ID = c3[i][2], .IH = c3[i][3], .IW = c3[i][4], .OC = c3[i][5],
                .KD = 3, .KH = 3, .KW = 3, .s0 = 1, .s1 = 1, .s2 = 1, .p0 = 1, .p1 = 1, .p2 = 1, .d0 = 1, .d1 = 1, .d2 = 1,
                .type_kernel = f32_f16[ti],
            };
            tbo_add_conv_3d(l, &c);
        }
    }
}

static void perf_im2col(struct tbo_case_list * l) {
    static const int64_t ics[2] = { 256, 2560 }, whs[3] = { 32, 64, 256 };
    for (int K = 3; K <= 5; K += 2) {
        for (int i = 0; i < 2; i++) {
            for (int j = 0; j < 3; j++) {
                if (ics[i] == 2560 && whs[j] == 256) {
                    continue; // too big
                }
                tbo_add_im2col(l, GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_F32, NE(whs[j], whs[j], ics[i], 1), NE(K, K, ics[i], 1),
                               1, 1, 1, 1, 1, 1, true);
            }
        }
    }
}

static void perf_tail(struct tbo_case_list * l) {
    for (int cwhn = 0; cwhn <= 1; cwhn++) {
        tbo_add_conv_2d_dw(l, NE(512, 512, 256, 1), NE(3, 3, 1, 256), GGML_TYPE_F32, 1, 1, 1, cwhn != 0);
    }
    for (int cwhn = 0; cwhn <= 1; cwhn++) {
        tbo_add_conv_2d_dw(l, NE(112, 112, 32, 1), NE(3, 3, 1, 32), GGML_TYPE_F32, 1, 1, 1, cwhn != 0);
    }
    for (int cwhn = 0; cwhn <= 1; cwhn++) {
        tbo_add_conv_2d_dw(l, NE(56, 56, 128, 1), NE(5, 5, 1, 128), GGML_TYPE_F32, 2, 2, 1, cwhn != 0);
    }
    for (int ti = 0; ti < 2; ti++) {
        tbo_add_conv_transpose_2d(l, NE(256, 256, 256, 1), NE(3, 3, 16, 256), 1, f32_f16[ti]);
        tbo_add_conv_transpose_2d(l, NE(16, 16, 16, 1), NE(3, 3, 8, 16), 1, f32_f16[ti]);
        tbo_add_conv_transpose_2d(l, NE(10, 10, 9, 1), NE(3, 3, 1, 9), 2, f32_f16[ti]);
    }
    tbo_add_col2im_1d(l, GGML_TYPE_F32, 16, 512, 2048, 8, 0);
    tbo_add_col2im_1d(l, GGML_TYPE_F32, 4, 128, 65536, 2, 0);
    tbo_add_col2im_1d(l, GGML_TYPE_F16, 16, 512, 2048, 8, 0);
}

void tbo_add_conv_list(struct tbo_case_list * l, enum tbo_conv_list which) {
    switch (which) {
        case TBO_CONV_EVAL_CONV:
            eval_pool(l);
            eval_im2col(l);
            eval_conv_2d(l);
            eval_conv_3d(l);
            eval_conv_transpose(l);
            break;
        case TBO_CONV_EVAL_UPSCALE:
            eval_upscale(l);
            break;
        case TBO_CONV_PERF_CONV:
            perf_conv(l);
            break;
        case TBO_CONV_PERF_REFLECT: {
            static const int64_t shapes[5][4] = {
                { 512, 34, 2, 1 }, { 3000, 80, 1, 1 }, { 3000, 80, 4, 1 }, { 3000, 384, 1, 1 }, { 3000, 384, 4, 1 },
            };
            for (int i = 0; i < 5; i++) {
                tbo_add_pad_reflect_1d(l, GGML_TYPE_F32, shapes[i], 10, 9);
            }
            break;
        }
        case TBO_CONV_PERF_IM2COL:
            perf_im2col(l);
            break;
        case TBO_CONV_PERF_TAIL:
            perf_tail(l);
            break;
    }
}
