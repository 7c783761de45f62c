// test-cpu-conv.c: the convolution, pooling and image ops of the CPU backend
// against closed forms and round trips (test-backend-ops compares every case
// of upstream's list with the double-precision reference besides):
//   - a convolution of ones counts the kernel taps inside the input, in every
//     form (composite conv_2d, conv_2d_direct, the CWHN layout, conv_3d_direct,
//     conv_2d_dw_direct), with 1 and 3 threads;
//   - im2col_back is the adjoint of im2col: <im2col(x), g> = <x, im2col_back(g)>;
//   - conv_transpose_1d with a one-tap kernel spreads the input s apart;
//   - max pooling of increasing values takes each window's last inside value;
//   - win_unpart(win_part(x)) = x, roll by s then -s = x, pad_reflect_1d mirrors;
//   - get_rel_pos / add_rel_pos (and in place) and pool_2d_back by their closed forms;
//   - the CPU device refuses what it does not implement (F16 upscale, POOL_COUNT).

#include "cpu-testing.h"

#include "ggml-backend.h"

#define TC_MIN(a, b) ((a) < (b) ? (a) : (b))

static void set_all(struct ggml_tensor * t, float v) {
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        if (t->type == GGML_TYPE_F16) {
            ((ggml_fp16_t *) t->data)[i] = ggml_fp32_to_fp16(v);
        } else {
            ((float *) t->data)[i] = v;
        }
    }
}

// taps k < K of a convolution at output o that fall inside [0, n)
static int64_t taps_inside(int64_t o, int64_t K, int s, int p, int d, int64_t n) {
    int64_t c = 0;
    for (int64_t k = 0; k < K; k++) {
        const int64_t i = o*s + k*d - p;
        c += i >= 0 && i < n;
    }
    return c;
}

enum conv_form { FORM_COMPOSITE, FORM_DIRECT, FORM_DIRECT_CWHN, FORM_3D };

static void test_conv_of_ones(enum conv_form form, enum ggml_type ktype, int n_threads) {
    const int64_t W = 13, H = 7, IC = 5, OC = 4, N = 2, KW = 3, KH = 2;
    const int s0 = 2, s1 = 1, p0 = 1, p1 = 1, d0 = 2, d1 = 1;
    struct ggml_context * ctx = tt_ctx_new(16);
    struct ggml_tensor * out;
    if (form == FORM_3D) {
        // depth 1, the channels folded into dim 3 as conv_3d_direct wants them
        struct ggml_tensor * k = ggml_new_tensor_4d(ctx, ktype, KW, KH, 1, IC * OC);
        struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, W, H, 1, IC * N);
        set_all(k, 1.0f);
        set_all(x, 1.0f);
        out = ggml_conv_3d_direct(ctx, k, x, s0, s1, 1, p0, p1, 0, d0, d1, 1, (int) IC, (int) N, (int) OC);
        out = ggml_reshape_4d(ctx, out, out->ne[0], out->ne[1], OC, N);
    } else {
        struct ggml_tensor * k = ggml_new_tensor_4d(ctx, ktype, KW, KH, IC, OC);
        struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, W, H, IC, N);
        set_all(k, 1.0f);
        set_all(x, 1.0f);
        if (form == FORM_DIRECT_CWHN) {
            // channels innermost in memory, the logical shape unchanged
            x = ggml_permute(ctx, ggml_cont(ctx, ggml_permute(ctx, x, 1, 2, 0, 3)), 2, 0, 1, 3);
        }
        out = form == FORM_COMPOSITE ? ggml_conv_2d(ctx, k, x, s0, s1, p0, p1, d0, d1)
                                     : ggml_conv_2d_direct(ctx, k, x, s0, s1, p0, p1, d0, d1);
    }
    CHECK(tt_compute(ctx, out, n_threads) == GGML_STATUS_SUCCESS);
    CHECK_EQ_INT(out->ne[2], OC);
    CHECK_EQ_INT(out->ne[3], N);
    double worst = 0.0;
    for (int64_t n = 0; n < N; n++)
    for (int64_t oc = 0; oc < OC; oc++)
    for (int64_t oy = 0; oy < out->ne[1]; oy++)
    for (int64_t ox = 0; ox < out->ne[0]; ox++) {
        const double want = (double) (IC * taps_inside(ox, KW, s0, p0, d0, W) * taps_inside(oy, KH, s1, p1, d1, H));
        worst = fmax(worst, fabs(tt_get(out, ox, oy, oc, n) - want));
    }
    CHECK_MSG(worst == 0.0, "form %d, kernel %s, %d threads: error %g", (int) form, ggml_type_name(ktype), n_threads, worst);
    ggml_free(ctx);
}

static void test_conv_dw_of_ones(void) {
    struct ggml_context * ctx = tt_ctx_new(4);
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 1, 6);
    struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 9, 8, 6, 1);
    set_all(k, 1.0f);
    set_all(x, 1.0f);
    struct ggml_tensor * out = ggml_conv_2d_dw_direct(ctx, k, x, 1, 2, 1, 0, 1, 1);
    CHECK(tt_compute(ctx, out, 2) == GGML_STATUS_SUCCESS);
    double worst = 0.0;
    for (int64_t c = 0; c < 6; c++)
    for (int64_t oy = 0; oy < out->ne[1]; oy++)
    for (int64_t ox = 0; ox < out->ne[0]; ox++) {
        const double want = (double) (taps_inside(ox, 3, 1, 1, 1, 9) * taps_inside(oy, 3, 2, 0, 1, 8));
        worst = fmax(worst, fabs(tt_get(out, ox, oy, c, 0) - want));
    }
    CHECK(worst == 0.0);
    ggml_free(ctx);
}

// <im2col(x), g> = <x, im2col_back(g)> for random x and g, 1-D and 2-D
static void test_im2col_adjoint(bool is_2D) {
    struct ggml_context * ctx = tt_ctx_new(16);
    struct ggml_tensor * k = is_2D ? ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 2, 3, 1) : ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 3, 1);
    struct ggml_tensor * x = is_2D ? ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 11, 6, 3, 2) : ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 11, 3, 2);
    tt_fill_uniform(x, -1.0, 1.0, 1);
    struct ggml_tensor * cols = ggml_im2col(ctx, k, x, 2, 1, 1, 1, 2, 1, is_2D, GGML_TYPE_F32);
    struct ggml_tensor * g = ggml_new_tensor(ctx, GGML_TYPE_F32, 4, cols->ne);
    tt_fill_uniform(g, -1.0, 1.0, 2);
    struct ggml_tensor * back = ggml_im2col_back(ctx, g, k, x->ne, 2, 1, 1, 1, 2, 1, is_2D);
    CHECK(tt_compute(ctx, cols, 3) == GGML_STATUS_SUCCESS);
    CHECK(tt_compute(ctx, back, 3) == GGML_STATUS_SUCCESS);
    double lhs = 0.0, rhs = 0.0;
    for (int64_t i = 0; i < ggml_nelements(cols); i++) {
        lhs += (double) ((float *) cols->data)[i] * (double) ((float *) g->data)[i];
    }
    for (int64_t i = 0; i < ggml_nelements(x); i++) {
        rhs += (double) ((float *) x->data)[i] * (double) ((float *) back->data)[i];
    }
    CHECK_NEAR(lhs, rhs, 1e-4 * (1.0 + fabs(lhs)));
    ggml_free(ctx);
}

static void test_conv_transpose_1d_spread(void) {
    const int s = 3;
    struct ggml_context * ctx = tt_ctx_new(4);
    struct ggml_tensor * k = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 1, 1, 1);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 1);
    set_all(k, 2.0f);
    for (int i = 0; i < 5; i++) {
        ((float *) x->data)[i] = (float) (i + 1);
    }
    struct ggml_tensor * out = ggml_conv_transpose_1d(ctx, k, x, s, 0, 1);
    CHECK(tt_compute(ctx, out, 2) == GGML_STATUS_SUCCESS);
    CHECK_EQ_INT(out->ne[0], (5 - 1) * s + 1);
    for (int64_t t = 0; t < out->ne[0]; t++) {
        CHECK_NEAR(tt_get(out, t, 0, 0, 0), t % s == 0 ? 2.0 * (double) (t / s + 1) : 0.0, 0.0);
    }
    ggml_free(ctx);
}

static void test_pool_max_increasing(void) {
    struct ggml_context * ctx = tt_ctx_new(4);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 7, 6, 2);
    for (int64_t i = 0; i < ggml_nelements(x); i++) {
        ((float *) x->data)[i] = (float) i;
    }
    struct ggml_tensor * out = ggml_pool_2d(ctx, x, GGML_OP_POOL_MAX, 3, 2, 2, 2, 1, 1);
    CHECK(tt_compute(ctx, out, 2) == GGML_STATUS_SUCCESS);
    for (int64_t c = 0; c < 2; c++)
    for (int64_t oy = 0; oy < out->ne[1]; oy++)
    for (int64_t ox = 0; ox < out->ne[0]; ox++) {
        const int64_t y = TC_MIN(oy*2 - 1 + 1, 5), xx = TC_MIN(ox*2 - 1 + 2, 6); // last position inside the window
        CHECK_NEAR(tt_get(out, ox, oy, c, 0), (double) ((c*6 + y)*7 + xx), 0.0);
    }
    ggml_free(ctx);
}

static void test_round_trips(void) {
    struct ggml_context * ctx = tt_ctx_new(8);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 11, 9);
    tt_fill_uniform(x, -1.0, 1.0, 3);
    struct ggml_tensor * parts = ggml_win_part(ctx, x, 5);
    CHECK_EQ_INT(parts->ne[3], 3 * 2);
    struct ggml_tensor * back = ggml_win_unpart(ctx, parts, 11, 9, 5);
    struct ggml_tensor * rolled = ggml_roll(ctx, ggml_roll(ctx, x, 3, -4, 5, 0), -3, 4, -5, 0);
    struct ggml_tensor * refl = ggml_pad_reflect_1d(ctx, x, 3, 2);
    CHECK(tt_compute(ctx, back, 2) == GGML_STATUS_SUCCESS);
    CHECK(tt_compute(ctx, rolled, 2) == GGML_STATUS_SUCCESS);
    CHECK(tt_compute(ctx, refl, 2) == GGML_STATUS_SUCCESS);
    CHECK(memcmp(back->data, x->data, ggml_nbytes(x)) == 0);
    CHECK(memcmp(rolled->data, x->data, ggml_nbytes(x)) == 0);
    for (int64_t r = 0; r < 11 * 9; r++) {
        const float * a = (const float *) x->data + r*4;
        const float * b = (const float *) refl->data + r*9;
        const float want[9] = { a[3], a[2], a[1], a[0], a[1], a[2], a[3], a[2], a[1] };
        CHECK(memcmp(b, want, sizeof(want)) == 0);
    }
    ggml_free(ctx);
}

// get_rel_pos: dst[:, k, q] = a[:, q - k + kh - 1]; add_rel_pos: a + pw[x] + ph[y] (also in place)
static void test_rel_pos(void) {
    struct ggml_context * ctx = tt_ctx_new(8);
    const int kh = 5;
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 3, 2*kh - 1);
    for (int64_t r = 0; r < a->ne[1]; r++) {
        for (int64_t c = 0; c < 3; c++) {
            ((ggml_fp16_t *) a->data)[r*3 + c] = ggml_fp32_to_fp16((float) (r * 4 + c));
        }
    }
    struct ggml_tensor * rel = ggml_get_rel_pos(ctx, a, kh, kh);
    CHECK(tt_compute(ctx, rel, 2) == GGML_STATUS_SUCCESS);
    for (int64_t q = 0; q < kh; q++)
    for (int64_t k = 0; k < kh; k++)
    for (int64_t c = 0; c < 3; c++) {
        CHECK_NEAR(tt_get(rel, c, k, q, 0), (double) ((q - k + kh - 1) * 4 + c), 0.0);
    }

    const int64_t W = 3, n1 = 4, n2 = 2, B = 2;
    struct ggml_tensor * x  = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, W*W, n1*n2, B);
    struct ggml_tensor * pw = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, W, n1, n2, B);
    struct ggml_tensor * ph = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, W, n1, n2, B);
    tt_fill_uniform(x, -1.0, 1.0, 4);
    tt_fill_uniform(pw, -1.0, 1.0, 5);
    tt_fill_uniform(ph, -1.0, 1.0, 6);
    struct ggml_tensor * x0 = ggml_dup_tensor(ctx, x);
    memcpy(x0->data, x->data, ggml_nbytes(x));
    struct ggml_tensor * out = ggml_add_rel_pos(ctx, x, pw, ph);
    CHECK(tt_compute(ctx, out, 3) == GGML_STATUS_SUCCESS);
    struct ggml_tensor * in_place = ggml_add_rel_pos_inplace(ctx, x, pw, ph);
    CHECK(in_place->data == x->data);
    CHECK(tt_compute(ctx, in_place, 2) == GGML_STATUS_SUCCESS);
    double worst = 0.0;
    for (int64_t b = 0; b < B; b++)
    for (int64_t j = 0; j < n2; j++)
    for (int64_t i = 0; i < n1; i++)
    for (int64_t yy = 0; yy < W; yy++)
    for (int64_t xx = 0; xx < W; xx++) {
        const double want = tt_get(x0, yy*W + xx, j*n1 + i, b, 0) + tt_get(pw, xx, i, j, b) + tt_get(ph, yy, i, j, b);
        worst = fmax(worst, fabs(tt_get(out, yy*W + xx, j*n1 + i, b, 0) - want));
        worst = fmax(worst, fabs(tt_get(in_place, yy*W + xx, j*n1 + i, b, 0) - want));
    }
    CHECK(worst < 1e-6);
    ggml_free(ctx);
}

// pool_2d_back with 2x2 windows, stride 2: max sends each gradient to its
// window's maximum, avg spreads it over the window
static void test_pool_2d_back(void) {
    struct ggml_context * ctx = tt_ctx_new(4);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 6, 4, 3);
    tt_fill_uniform(x, -1.0, 1.0, 7);
    struct ggml_tensor * g = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 3, 2, 3);
    tt_fill_uniform(g, 0.5, 1.5, 8);
    struct ggml_tensor * bmax = ggml_pool_2d_back(ctx, g, x, GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0);
    struct ggml_tensor * bavg = ggml_pool_2d_back(ctx, g, x, GGML_OP_POOL_AVG, 2, 2, 2, 2, 0, 0);
    CHECK(tt_compute(ctx, bmax, 2) == GGML_STATUS_SUCCESS);
    CHECK(tt_compute(ctx, bavg, 2) == GGML_STATUS_SUCCESS);
    for (int64_t c = 0; c < 3; c++)
    for (int64_t iy = 0; iy < 4; iy++)
    for (int64_t ix = 0; ix < 6; ix++) {
        const int64_t oy = iy / 2, ox = ix / 2;
        bool is_max = true;
        for (int64_t y = oy*2; y < oy*2 + 2; y++) {
            for (int64_t xx = ox*2; xx < ox*2 + 2; xx++) {
                is_max = is_max && tt_get(x, xx, y, c, 0) <= tt_get(x, ix, iy, c, 0);
            }
        }
        const double gr = tt_get(g, ox, oy, c, 0);
        CHECK_NEAR(tt_get(bmax, ix, iy, c, 0), is_max ? gr : 0.0, 1e-7);
        CHECK_NEAR(tt_get(bavg, ix, iy, c, 0), gr / 4.0, 1e-7);
    }
    ggml_free(ctx);
}

static void test_supports(void) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    CHECK(dev != NULL);
    if (dev == NULL) {
        return;
    }
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 8, 2, 1);
    struct ggml_tensor * up = ggml_upscale(ctx, x, 2, GGML_SCALE_MODE_BICUBIC);
    CHECK(ggml_backend_dev_supports_op(dev, up));
    struct ggml_tensor * pool = ggml_pool_2d(ctx, x, GGML_OP_POOL_COUNT, 2, 2, 2, 2, 0, 0);
    CHECK(!ggml_backend_dev_supports_op(dev, pool));
    struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 3, 2, 4);
    CHECK(ggml_backend_dev_supports_op(dev, ggml_im2col(ctx, k, x, 1, 1, 1, 1, 1, 1, true, GGML_TYPE_F16)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_im2col(ctx, k, x, 1, 1, 1, 1, 1, 1, true, GGML_TYPE_I32)));
    ggml_free(ctx);
}

int main(void) {
    static const enum conv_form forms[4] = { FORM_COMPOSITE, FORM_DIRECT, FORM_DIRECT_CWHN, FORM_3D };
    for (int f = 0; f < 4; f++) {
        for (int t = 1; t <= 3; t += 2) {
            test_conv_of_ones(forms[f], GGML_TYPE_F32, t);
            test_conv_of_ones(forms[f], GGML_TYPE_F16, t);
        }
    }
    test_conv_dw_of_ones();
    test_im2col_adjoint(false);
    test_im2col_adjoint(true);
    test_conv_transpose_1d_spread();
    test_pool_max_increasing();
    test_round_trips();
    test_rel_pos();
    test_pool_2d_back();
    test_supports();
    return TEST_RESULT();
}
