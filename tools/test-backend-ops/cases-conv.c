// cases-conv.c: the case families of the convolution, pooling and image ops
// (upstream's test_pool2d, test_pool1d, test_im2col, test_im2col_3d,
// test_conv_2d, test_conv_2d_dw, test_conv_3d, test_conv_transpose_1d,
// test_col2im_1d, test_conv_transpose_2d, test_upscale, test_interpolate,
// test_pad_reflect_1d, test_roll, test_timestep_embedding), with upstream's
// names, parameters and graphs, and the lists of them in upstream's order.

#include "tbo.h"

static const char * pool_name(enum ggml_op_pool p) {
    return p == GGML_OP_POOL_AVG ? "avg" : p == GGML_OP_POOL_MAX ? "max" : "?";
}

// upstream's spelling of a scale mode with its flags
static void var_scale_mode(struct tbo_str * s, const char * name, uint32_t mode) {
    static const char * const kinds[3] = { "nearest", "bilinear", "bicubic" };
    struct tbo_str v = { 0 };
    if ((mode & 0xFF) < 3) {
        tbo_str_printf(&v, "%s", kinds[mode & 0xFF]);
    } else {
        tbo_str_printf(&v, "%u", mode);
    }
    if (mode & GGML_SCALE_FLAG_ALIGN_CORNERS) {
        tbo_str_printf(&v, "|align_corners");
    }
    if (mode & GGML_SCALE_FLAG_ANTIALIAS) {
        tbo_str_printf(&v, "|antialias");
    }
    tbo_var_str(s, name, v.s);
    tbo_str_free(&v);
}

static double err_5e_4(const struct tbo_case * c) {
    (void) c;
    return 5e-4;
}

static int64_t conv_out(int64_t ins, int64_t ks, int s, int p, int d) {
    return (ins + 2 * p - d * (ks - 1) - 1) / s + 1;
}

//
// POOL_2D, POOL_1D
//

struct pool_params {
    enum ggml_op_pool pool_type;
    enum ggml_type    type_input;
    int64_t           ne_input[4];
    int               k0, k1, s0, s1, p0, p1;
};

static struct ggml_tensor * pool2d_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct pool_params * p = c->p;
    struct ggml_tensor * input = tbo_new_tensor(b, p->type_input, 4, p->ne_input);
    ggml_set_name(input, "input");
    struct ggml_tensor * out = ggml_pool_2d(b->ctx, input, p->pool_type, p->k0, p->k1, p->s0, p->s1, (float) p->p0, (float) p->p1);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class pool2d_class = { .name = "pool2d", .build = pool2d_build };

void tbo_add_pool2d(struct tbo_case_list * l, enum ggml_op_pool pool_type, enum ggml_type type_input, const int64_t ne[4],
                    int k0, int k1, int s0, int s1, int p0, int p1) {
    struct pool_params p = { .pool_type = pool_type, .type_input = type_input, .k0 = k0, .k1 = k1, .s0 = s0, .s1 = s1,
                             .p0 = p0, .p1 = p1 };
    tbo_copy4(p.ne_input, ne);
    struct tbo_str s = { 0 };
    tbo_var_str(&s, "pool_type", pool_name(pool_type));
    tbo_var_type(&s, "type_input", type_input);
    tbo_var_arr(&s, "ne_input", ne, 4);
    tbo_var_i64(&s, "k0", k0);
    tbo_var_i64(&s, "k1", k1);
    tbo_var_i64(&s, "s0", s0);
    tbo_var_i64(&s, "s1", s1);
    tbo_var_i64(&s, "p0", p0);
    tbo_var_i64(&s, "p1", p1);
    tbo_case_add(l, &pool2d_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * pool1d_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct pool_params * p = c->p;
    struct ggml_tensor * input = tbo_new_tensor(b, p->type_input, 4, p->ne_input);
    ggml_set_name(input, "input");
    struct ggml_tensor * out = ggml_pool_1d(b->ctx, input, p->pool_type, p->k0, p->s0, p->p0);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class pool1d_class = { .name = "pool1d", .build = pool1d_build };

void tbo_add_pool1d(struct tbo_case_list * l, enum ggml_op_pool pool_type, enum ggml_type type_input, const int64_t ne[4],
                    int k0, int s0, int p0) {
    struct pool_params p = { .pool_type = pool_type, .type_input = type_input, .k0 = k0, .s0 = s0, .p0 = p0 };
    tbo_copy4(p.ne_input, ne);
    struct tbo_str s = { 0 };
    tbo_var_str(&s, "pool_type", pool_name(pool_type));
    tbo_var_type(&s, "type_input", type_input);
    tbo_var_arr(&s, "ne_input", ne, 4);
    tbo_var_i64(&s, "k0", k0);
    tbo_var_i64(&s, "s0", s0);
    tbo_var_i64(&s, "p0", p0);
    tbo_case_add(l, &pool1d_class, &p, sizeof(p), &s);
}

//
// IM2COL, IM2COL_3D
//

struct im2col_params {
    enum ggml_type type_input, type_kernel, dst_type;
    int64_t        ne_input[4], ne_kernel[4];
    int            s[3], p[3], d[3];
    int64_t        IC;
    bool           is_2D, v;
};

static struct ggml_tensor * im2col_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct im2col_params * p = c->p;
    struct ggml_tensor * input = tbo_new_tensor(b, p->type_input, 4, p->ne_input);
    ggml_set_name(input, "input");
    struct ggml_tensor * kernel = tbo_new_tensor(b, p->type_kernel, 4, p->ne_kernel);
    ggml_set_name(kernel, "kernel");
    struct ggml_tensor * out = ggml_im2col(b->ctx, kernel, input, p->s[0], p->s[1], p->p[0], p->p[1], p->d[0], p->d[1],
                                           p->is_2D, p->dst_type);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class im2col_class = { .name = "im2col", .build = im2col_build };

void tbo_add_im2col(struct tbo_case_list * l, enum ggml_type type_input, enum ggml_type type_kernel, enum ggml_type dst_type,
                    const int64_t ne_input[4], const int64_t ne_kernel[4], int s0, int s1, int p0, int p1, int d0, int d1,
                    bool is_2D) {
    struct im2col_params p = { .type_input = type_input, .type_kernel = type_kernel, .dst_type = dst_type,
                               .s = { s0, s1, 1 }, .p = { p0, p1, 0 }, .d = { d0, d1, 1 }, .is_2D = is_2D };
    tbo_copy4(p.ne_input, ne_input);
    tbo_copy4(p.ne_kernel, ne_kernel);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type_input", type_input);
    tbo_var_type(&s, "type_kernel", type_kernel);
    tbo_var_type(&s, "dst_type", dst_type);
    tbo_var_arr(&s, "ne_input", ne_input, 4);
    tbo_var_arr(&s, "ne_kernel", ne_kernel, 4);
    tbo_var_i64(&s, "s0", s0);
    tbo_var_i64(&s, "s1", s1);
    tbo_var_i64(&s, "p0", p0);
    tbo_var_i64(&s, "p1", p1);
    tbo_var_i64(&s, "d0", d0);
    tbo_var_i64(&s, "d1", d1);
    tbo_var_i64(&s, "is_2D", is_2D);
    tbo_case_add(l, &im2col_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * im2col_3d_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct im2col_params * p = c->p;
    struct ggml_tensor * input = tbo_new_tensor(b, p->type_input, 4, p->ne_input);
    ggml_set_name(input, "input");
    if (p->v) {
        input = ggml_view_4d(b->ctx, input, p->ne_input[0] - 2, p->ne_input[1] - 2, p->ne_input[2] - 2, p->ne_input[3] - 2,
                             input->nb[1], input->nb[2], input->nb[3], 0);
        ggml_set_name(input, "view_of_input");
    }
    struct ggml_tensor * kernel = tbo_new_tensor(b, p->type_kernel, 4, p->ne_kernel);
    ggml_set_name(kernel, "kernel");
    struct ggml_tensor * out = ggml_im2col_3d(b->ctx, kernel, input, p->IC, p->s[0], p->s[1], p->s[2], p->p[0], p->p[1], p->p[2],
                                              p->d[0], p->d[1], p->d[2], p->dst_type);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class im2col_3d_class = { .name = "im2col_3d", .build = im2col_3d_build };

void tbo_add_im2col_3d(struct tbo_case_list * l, enum ggml_type type_input, enum ggml_type type_kernel, enum ggml_type dst_type,
                       const int64_t ne_input[4], const int64_t ne_kernel[4], int64_t IC, const int s[3], const int pd[3],
                       const int d[3], bool v) {
    struct im2col_params p = { .type_input = type_input, .type_kernel = type_kernel, .dst_type = dst_type,
                               .s = { s[0], s[1], s[2] }, .p = { pd[0], pd[1], pd[2] }, .d = { d[0], d[1], d[2] },
                               .IC = IC, .v = v };
    tbo_copy4(p.ne_input, ne_input);
    tbo_copy4(p.ne_kernel, ne_kernel);
    static const char * const sn[3] = { "s0", "s1", "s2" }, * const pn[3] = { "p0", "p1", "p2" }, * const dn[3] = { "d0", "d1", "d2" };
    struct tbo_str str = { 0 };
    tbo_var_type(&str, "type_input", type_input);
    tbo_var_type(&str, "type_kernel", type_kernel);
    tbo_var_type(&str, "dst_type", dst_type);
    tbo_var_arr(&str, "ne_input", ne_input, 4);
    tbo_var_arr(&str, "ne_kernel", ne_kernel, 4);
    tbo_var_i64(&str, "IC", IC);
    for (int i = 0; i < 3; i++) {
        tbo_var_i64(&str, sn[i], s[i]);
    }
    for (int i = 0; i < 3; i++) {
        tbo_var_i64(&str, pn[i], pd[i]);
    }
    for (int i = 0; i < 3; i++) {
        tbo_var_i64(&str, dn[i], d[i]);
    }
    tbo_var_i64(&str, "v", v);
    tbo_case_add(l, &im2col_3d_class, &p, sizeof(p), &str);
}

//
// CONV_2D (direct), CONV_2D_DW (direct), CONV_3D (direct)
//

struct conv2d_params {
    int64_t        ne_input[4], ne_kernel[4];
    enum ggml_type type_kernel;
    int            s0, s1, p0, p1, d0, d1;
    bool           cwhn;
};

// the channel-contiguous (CWHN) layout with the logical shape unchanged, as upstream builds it
static void conv_to_cwhn(struct tbo_build * b, struct ggml_tensor ** input, struct ggml_tensor ** kernel) {
    *input  = ggml_cont(b->ctx, ggml_permute(b->ctx, *input, 1, 2, 0, 3));
    *input  = ggml_permute(b->ctx, *input, 2, 0, 1, 3);
    *kernel = ggml_cont(b->ctx, ggml_permute(b->ctx, *kernel, 2, 3, 1, 0));
    *kernel = ggml_permute(b->ctx, *kernel, 3, 2, 0, 1);
}

static struct ggml_tensor * conv_2d_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct conv2d_params * p = c->p;
    struct ggml_tensor * input = tbo_new_tensor(b, GGML_TYPE_F32, 4, p->ne_input);
    ggml_set_name(input, "input");
    struct ggml_tensor * kernel = tbo_new_tensor(b, p->type_kernel, 4, p->ne_kernel);
    ggml_set_name(kernel, "kernel");
    if (p->cwhn) {
        conv_to_cwhn(b, &input, &kernel);
    }
    struct ggml_tensor * out = ggml_conv_2d_direct(b->ctx, kernel, input, p->s0, p->s1, p->p0, p->p1, p->d0, p->d1);
    ggml_set_name(out, "out");
    return out;
}

// the matrix product's cost (upstream counts the output size with stride0, padding0, dilation0 in both dimensions)
static uint64_t conv_2d_flops(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) out;
    const struct conv2d_params * p = c->p;
    const int64_t OH  = conv_out(p->ne_input[1], p->ne_kernel[1], p->s0, p->p0, p->d0);
    const int64_t OW  = conv_out(p->ne_input[0], p->ne_kernel[0], p->s0, p->p0, p->d0);
    const int64_t CRS = p->ne_kernel[2] * p->ne_kernel[1] * p->ne_kernel[0];
    return (uint64_t) (p->ne_kernel[3] * p->ne_input[3] * OH * OW * (2 * CRS - 1));
}

static const struct tbo_case_class conv_2d_class = {
    .name = "conv_2d", .build = conv_2d_build, .max_err = err_5e_4, .flops = conv_2d_flops,
};

void tbo_add_conv_2d(struct tbo_case_list * l, const int64_t ne_input[4], const int64_t ne_kernel[4], enum ggml_type type_kernel,
                     int s0, int s1, int p0, int p1, int d0, int d1, bool cwhn) {
    struct conv2d_params p = { .type_kernel = type_kernel, .s0 = s0, .s1 = s1, .p0 = p0, .p1 = p1, .d0 = d0, .d1 = d1,
                               .cwhn = cwhn };
    tbo_copy4(p.ne_input, ne_input);
    tbo_copy4(p.ne_kernel, ne_kernel);
    struct tbo_str s = { 0 };
    tbo_var_arr(&s, "ne_input", ne_input, 4);
    tbo_var_arr(&s, "ne_kernel", ne_kernel, 4);
    tbo_var_type(&s, "type_kernel", type_kernel);
    tbo_var_i64(&s, "stride0", s0);
    tbo_var_i64(&s, "stride1", s1);
    tbo_var_i64(&s, "padding0", p0);
    tbo_var_i64(&s, "padding1", p1);
    tbo_var_i64(&s, "dilation0", d0);
    tbo_var_i64(&s, "dilation1", d1);
    tbo_var_i64(&s, "cwhn", cwhn);
    tbo_case_add(l, &conv_2d_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * conv_2d_dw_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct conv2d_params * p = c->p;
    struct ggml_tensor * input = tbo_new_tensor(b, GGML_TYPE_F32, 4, p->ne_input);
    ggml_set_name(input, "input");
    struct ggml_tensor * kernel = tbo_new_tensor(b, p->type_kernel, 4, p->ne_kernel);
    ggml_set_name(kernel, "kernel");
    if (p->cwhn) {
        conv_to_cwhn(b, &input, &kernel);
    }
    struct ggml_tensor * out = ggml_conv_2d_dw_direct(b->ctx, kernel, input, p->s0, p->s0, p->p0, p->p0, p->d0, p->d0);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class conv_2d_dw_class = { .name = "conv_2d_dw", .build = conv_2d_dw_build };

void tbo_add_conv_2d_dw(struct tbo_case_list * l, const int64_t ne_input[4], const int64_t ne_kernel[4], enum ggml_type type_kernel,
                        int stride, int padding, int dilation, bool cwhn) {
    struct conv2d_params p = { .type_kernel = type_kernel, .s0 = stride, .p0 = padding, .d0 = dilation, .cwhn = cwhn };
    tbo_copy4(p.ne_input, ne_input);
    tbo_copy4(p.ne_kernel, ne_kernel);
    struct tbo_str s = { 0 };
    tbo_var_arr(&s, "ne_input", ne_input, 4);
    tbo_var_arr(&s, "ne_kernel", ne_kernel, 4);
    tbo_var_type(&s, "type_kernel", type_kernel);
    tbo_var_i64(&s, "stride", stride);
    tbo_var_i64(&s, "padding", padding);
    tbo_var_i64(&s, "dilation", dilation);
    tbo_var_i64(&s, "cwhn", cwhn);
    tbo_case_add(l, &conv_2d_dw_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * conv_3d_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct tbo_conv3d * p = c->p;
    const int64_t ne_input[4]  = { p->IW, p->IH, p->ID, p->IC * p->N };
    const int64_t ne_kernel[4] = { p->KW, p->KH, p->KD, p->IC * p->OC };
    struct ggml_tensor * input = tbo_new_tensor(b, GGML_TYPE_F32, 4, ne_input);
    ggml_set_name(input, "input");
    struct ggml_tensor * kernel = tbo_new_tensor(b, p->type_kernel, 4, ne_kernel);
    ggml_set_name(kernel, "kernel");
    struct ggml_tensor * out = ggml_conv_3d_direct(b->ctx, kernel, input, p->s0, p->s1, p->s2, p->p0, p->p1, p->p2,
                                                   p->d0, p->d1, p->d2, (int) p->IC, (int) p->N, (int) p->OC);
    ggml_set_name(out, "out");
    return out;
}

static uint64_t conv_3d_flops(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) out;
    const struct tbo_conv3d * p = c->p;
    const int64_t OD = conv_out(p->ID, p->KD, p->s2, p->p2, p->d2);
    const int64_t OH = conv_out(p->IH, p->KH, p->s1, p->p1, p->d1);
    const int64_t OW = conv_out(p->IW, p->KW, p->s0, p->p0, p->d0);
    return (uint64_t) (p->N * p->OC * OD * OH * OW * (2 * p->IC * p->KD * p->KH * p->KW - 1));
}

static const char * conv_3d_desc(const struct tbo_case * c, const struct ggml_tensor * out) {
    (void) c;
    (void) out;
    return "CONV_3D";
}

static const struct tbo_case_class conv_3d_class = {
    .name = "conv_3d", .build = conv_3d_build, .max_err = err_5e_4, .flops = conv_3d_flops, .op_desc = conv_3d_desc,
};

void tbo_add_conv_3d(struct tbo_case_list * l, const struct tbo_conv3d * p) {
    struct tbo_str s = { 0 };
    tbo_var_i64(&s, "N", p->N);
    tbo_var_i64(&s, "IC", p->IC);
    tbo_var_i64(&s, "ID", p->ID);
    tbo_var_i64(&s, "IH", p->IH);
    tbo_var_i64(&s, "IW", p->IW);
    tbo_var_i64(&s, "OC", p->OC);
    tbo_var_i64(&s, "KD", p->KD);
    tbo_var_i64(&s, "KH", p->KH);
    tbo_var_i64(&s, "KW", p->KW);
    tbo_var_i64(&s, "s0", p->s0);
    tbo_var_i64(&s, "s1", p->s1);
    tbo_var_i64(&s, "s2", p->s2);
    tbo_var_i64(&s, "p0", p->p0);
    tbo_var_i64(&s, "p1", p->p1);
    tbo_var_i64(&s, "p2", p->p2);
    tbo_var_i64(&s, "d0", p->d0);
    tbo_var_i64(&s, "d1", p->d1);
    tbo_var_i64(&s, "d2", p->d2);
    tbo_var_type(&s, "type_kernel", p->type_kernel);
    tbo_case_add(l, &conv_3d_class, p, sizeof(*p), &s);
}

//
// CONV_TRANSPOSE_1D, COL2IM_1D, CONV_TRANSPOSE_2D
//

struct conv_t_params {
    int64_t        ne_input[4], ne_kernel[4];
    int            s0, p0, d0;
    enum ggml_type kernel_type;
};

static struct ggml_tensor * conv_transpose_1d_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct conv_t_params * p = c->p;
    struct ggml_tensor * input = tbo_new_tensor(b, GGML_TYPE_F32, 4, p->ne_input);
    ggml_set_name(input, "input");
    struct ggml_tensor * kernel = tbo_new_tensor(b, GGML_TYPE_F32, 4, p->ne_kernel);
    ggml_set_name(kernel, "kernel");
    struct ggml_tensor * out = ggml_conv_transpose_1d(b->ctx, kernel, input, p->s0, p->p0, p->d0);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class conv_transpose_1d_class = { .name = "conv_transpose_1d", .build = conv_transpose_1d_build };

void tbo_add_conv_transpose_1d(struct tbo_case_list * l, const int64_t ne_input[4], const int64_t ne_kernel[4], int s0, int p0, int d0) {
    struct conv_t_params p = { .s0 = s0, .p0 = p0, .d0 = d0 };
    tbo_copy4(p.ne_input, ne_input);
    tbo_copy4(p.ne_kernel, ne_kernel);
    struct tbo_str s = { 0 };
    tbo_var_arr(&s, "ne_input", ne_input, 4);
    tbo_var_arr(&s, "ne_kernel", ne_kernel, 4);
    tbo_var_i64(&s, "s0", s0);
    tbo_var_i64(&s, "p0", p0);
    tbo_var_i64(&s, "d0", d0);
    tbo_case_add(l, &conv_transpose_1d_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * conv_transpose_2d_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct conv_t_params * p = c->p;
    struct ggml_tensor * input = tbo_new_tensor(b, GGML_TYPE_F32, 4, p->ne_input);
    ggml_set_name(input, "input");
    struct ggml_tensor * kernel = tbo_new_tensor(b, p->kernel_type, 4, p->ne_kernel);
    ggml_set_name(kernel, "kernel");
    struct ggml_tensor * out = ggml_conv_transpose_2d_p0(b->ctx, kernel, input, p->s0);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class conv_transpose_2d_class = {
    .name = "conv_transpose_2d", .build = conv_transpose_2d_build, .max_err = err_5e_4,
};

void tbo_add_conv_transpose_2d(struct tbo_case_list * l, const int64_t ne_input[4], const int64_t ne_kernel[4], int stride,
                               enum ggml_type kernel_type) {
    struct conv_t_params p = { .s0 = stride, .kernel_type = kernel_type };
    tbo_copy4(p.ne_input, ne_input);
    tbo_copy4(p.ne_kernel, ne_kernel);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "kernel_type", kernel_type);
    tbo_var_arr(&s, "ne_input", ne_input, 4);
    tbo_var_arr(&s, "ne_kernel", ne_kernel, 4);
    tbo_var_i64(&s, "stride", stride);
    tbo_case_add(l, &conv_transpose_2d_class, &p, sizeof(p), &s);
}

struct col2im_params {
    enum ggml_type type;
    int64_t        K, OC, T_in;
    int            s0, p0;
};

static struct ggml_tensor * col2im_1d_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct col2im_params * p = c->p;
    struct ggml_tensor * cols = tbo_new_tensor_2d(b, p->type, p->K * p->OC, p->T_in);
    ggml_set_name(cols, "cols");
    struct ggml_tensor * out = ggml_col2im_1d(b->ctx, cols, p->s0, (int) p->OC, p->p0);
    ggml_set_name(out, "out");
    return out;
}

static double col2im_1d_max_err(const struct tbo_case * c) {
    const struct col2im_params * p = c->p;
    return p->type == GGML_TYPE_F32 ? 1e-7 : 5e-4;
}

static const struct tbo_case_class col2im_1d_class = { .name = "col2im_1d", .build = col2im_1d_build, .max_err = col2im_1d_max_err };

void tbo_add_col2im_1d(struct tbo_case_list * l, enum ggml_type type, int64_t K, int64_t OC, int64_t T_in, int s0, int p0) {
    struct col2im_params p = { .type = type, .K = K, .OC = OC, .T_in = T_in, .s0 = s0, .p0 = p0 };
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_i64(&s, "K", K);
    tbo_var_i64(&s, "OC", OC);
    tbo_var_i64(&s, "T_in", T_in);
    tbo_var_i64(&s, "s0", s0);
    tbo_var_i64(&s, "p0", p0);
    tbo_case_add(l, &col2im_1d_class, &p, sizeof(p), &s);
}

//
// UPSCALE (ggml_upscale, ggml_interpolate)
//

struct upscale_params {
    enum ggml_type type;
    int64_t        ne[4], ne_tgt[4];
    int            scale_factor;
    uint32_t       mode;
    bool           transpose;
};

static struct ggml_tensor * upscale_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct upscale_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    if (p->transpose) {
        a = ggml_transpose(b->ctx, a);
        ggml_set_name(a, "a_transposed");
    }
    struct ggml_tensor * out = ggml_upscale(b->ctx, a, p->scale_factor, (enum ggml_scale_mode) p->mode);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class upscale_class = { .name = "upscale", .build = upscale_build };

void tbo_add_upscale(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], int scale_factor, uint32_t mode, bool transpose) {
    struct upscale_params p = { .type = type, .scale_factor = scale_factor, .mode = mode, .transpose = transpose };
    tbo_copy4(p.ne, ne);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_i64(&s, "scale_factor", scale_factor);
    var_scale_mode(&s, "mode", mode);
    tbo_var_i64(&s, "transpose", transpose);
    tbo_case_add(l, &upscale_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * interpolate_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct upscale_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_interpolate(b->ctx, a, p->ne_tgt[0], p->ne_tgt[1], p->ne_tgt[2], p->ne_tgt[3], p->mode);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class interpolate_class = { .name = "interpolate", .build = interpolate_build };

void tbo_add_interpolate(struct tbo_case_list * l, enum ggml_type type, const int64_t ne[4], const int64_t ne_tgt[4], uint32_t mode) {
    struct upscale_params p = { .type = type, .mode = mode };
    tbo_copy4(p.ne, ne);
    tbo_copy4(p.ne_tgt, ne_tgt);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne", ne, 4);
    tbo_var_arr(&s, "ne_tgt", ne_tgt, 4);
    var_scale_mode(&s, "mode", mode);
    tbo_case_add(l, &interpolate_class, &p, sizeof(p), &s);
}

//
// PAD_REFLECT_1D, ROLL, TIMESTEP_EMBEDDING
//

struct signal_params {
    enum ggml_type type;
    int64_t        ne_a[4];
    int            v[4];
    bool           permute;
};

static struct ggml_tensor * pad_reflect_1d_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct signal_params * p = c->p;
    // upstream makes a matrix of the first two sizes
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 2, p->ne_a);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_pad_reflect_1d(b->ctx, a, p->v[0], p->v[1]);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class pad_reflect_1d_class = { .name = "pad_reflect_1d", .build = pad_reflect_1d_build };

void tbo_add_pad_reflect_1d(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int pad_0, int pad_1) {
    struct signal_params p = { .type = type, .v = { pad_0, pad_1, 0, 0 } };
    tbo_copy4(p.ne_a, ne_a);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_i64(&s, "pad_0", pad_0);
    tbo_var_i64(&s, "pad_1", pad_1);
    tbo_case_add(l, &pad_reflect_1d_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * roll_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct signal_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor_4d(b, GGML_TYPE_F32, 10, 5, 4, 3);
    ggml_set_name(a, "a");
    if (p->permute) {
        a = ggml_permute(b->ctx, a, 0, 2, 1, 3);
        ggml_set_name(a, "a_permuted");
    }
    struct ggml_tensor * out = ggml_roll(b->ctx, a, p->v[0], p->v[1], p->v[2], p->v[3]);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class roll_class = { .name = "roll", .build = roll_build };

void tbo_add_roll(struct tbo_case_list * l, int shift0, int shift1, int shift3, int shift4, bool permute) {
    struct signal_params p = { .v = { shift0, shift1, shift3, shift4 }, .permute = permute };
    struct tbo_str s = { 0 };
    tbo_var_i64(&s, "shift0", shift0);
    tbo_var_i64(&s, "shift1", shift1);
    tbo_var_i64(&s, "shift3", shift3);
    tbo_var_i64(&s, "shift4", shift4);
    tbo_var_i64(&s, "permute", permute);
    tbo_case_add(l, &roll_class, &p, sizeof(p), &s);
}

static struct ggml_tensor * timestep_embedding_build(const struct tbo_case * c, struct tbo_build * b) {
    const struct signal_params * p = c->p;
    struct ggml_tensor * a = tbo_new_tensor(b, p->type, 4, p->ne_a);
    ggml_set_name(a, "a");
    struct ggml_tensor * out = ggml_timestep_embedding(b->ctx, a, p->v[0], p->v[1]);
    ggml_set_name(out, "out");
    return out;
}

static const struct tbo_case_class timestep_embedding_class = { .name = "timestep_embedding", .build = timestep_embedding_build };

void tbo_add_timestep_embedding(struct tbo_case_list * l, enum ggml_type type, const int64_t ne_a[4], int dim, int max_period) {
    struct signal_params p = { .type = type, .v = { dim, max_period, 0, 0 } };
    tbo_copy4(p.ne_a, ne_a);
    struct tbo_str s = { 0 };
    tbo_var_type(&s, "type", type);
    tbo_var_arr(&s, "ne_a", ne_a, 4);
    tbo_var_i64(&s, "dim", dim);
    tbo_var_i64(&s, "max_period", max_period);
    tbo_case_add(l, &timestep_embedding_class, &p, sizeof(p), &s);
}
