// ops-conv.c: the convolution family: IM2COL, IM2COL_3D, IM2COL_BACK,
// COL2IM_1D, the one-op convolutions CONV_2D and CONV_3D, the depthwise
// CONV_2D_DW, and CONV_TRANSPOSE_1D / CONV_TRANSPOSE_2D.
//
// CONV_2D and CONV_3D are one kernel ("patch GEMM"): a 2-D convolution is a
// 3-D one of depth 1. The output pixels of each image are cut into chunks
// that the threads take dynamically; a chunk's patches (the im2col rows of
// its pixels, F32) are gathered into a per-thread panel, and the float tile
// kernel of gemm.h multiplies them with the kernel rows (converted to F32
// once, in shared memory, when they are not F32 already), writing straight
// into the output channels' planes. No im2col tensor of the whole input is
// ever made, so the memory stays a few hundred KiB per thread.
//
// The rest are direct loops; each output element (or row) is written by one
// thread.

#include "kernels/gemm.h"

// pixels of a patch chunk: a panel of about PATCH_PANEL_BYTES, 8..256 rows
#define PATCH_PANEL_BYTES (256 * 1024)
// k block of the tile kernel (as in ops-matmul.c: 4 KiB of each row)
#define PATCH_KC 1024

static inline float conv_load(enum ggml_type type, const char * p) {
    switch (type) {
        case GGML_TYPE_F32:  return *(const float *) p;
        case GGML_TYPE_F16:  return GGML_FP16_TO_FP32(*(const ggml_fp16_t *) p);
        case GGML_TYPE_BF16: return GGML_BF16_TO_FP32(*(const ggml_bf16_t *) p);
        default: GGML_ABORT("conv: unsupported type %s", ggml_type_name(type));
    }
}

static inline void conv_store(enum ggml_type type, char * p, float v) {
    switch (type) {
        case GGML_TYPE_F32:  *(float *) p = v; break;
        case GGML_TYPE_F16:  *(ggml_fp16_t *) p = GGML_FP32_TO_FP16(v); break;
        case GGML_TYPE_BF16: *(ggml_bf16_t *) p = GGML_FP32_TO_BF16(v); break;
        default: GGML_ABORT("conv: unsupported type %s", ggml_type_name(type));
    }
}

static bool conv_float_type(enum ggml_type type) {
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16 || type == GGML_TYPE_BF16;
}

//
// geometry shared by im2col and the patch GEMM: a 3-D convolution over
// inputs in(x, y, z, c, n) given by byte strides (2-D: z of size 1)
//

struct conv_geom {
    int64_t IW, IH, ID, IC, N;
    int64_t KW, KH, KD;
    int64_t OW, OH, OD;
    int s0, s1, s2, p0, p1, p2, d0, d1, d2;
    const char * in;                   // input data
    enum ggml_type in_type;
    size_t in_x, in_y, in_z, in_c, in_n; // input byte strides
};

static int64_t conv_patch_len(const struct conv_geom * g) {
    return g->IC * g->KD * g->KH * g->KW;
}

// the values of one kernel row (KW taps, dilation d0) starting at input x0
// of an input row, into out; taps [lo, hi) are inside the input
static inline void conv_gather_taps(const struct conv_geom * g, const char * src, int64_t x0, int64_t lo, int64_t hi,
                                    float * out) {
    for (int64_t kx = 0; kx < lo; kx++) {
        out[kx] = 0.0f;
    }
    if (g->in_type == GGML_TYPE_F32 && g->in_x == sizeof(float) && g->d0 == 1 && hi - lo >= 32) {
        memcpy(out + lo, (const float *) src + x0 + lo, (size_t) (hi - lo) * sizeof(float));
    } else if (g->in_type == GGML_TYPE_F32) {
        // short runs (the usual 3 to 7 taps): a call to memcpy costs more than the copy
        const char * p = src + (x0 + lo*g->d0) * (int64_t) g->in_x;
        const int64_t step = g->d0 * (int64_t) g->in_x;
        for (int64_t kx = lo; kx < hi; kx++, p += step) {
            out[kx] = *(const float *) p;
        }
    } else {
        for (int64_t kx = lo; kx < hi; kx++) {
            out[kx] = conv_load(g->in_type, src + (x0 + kx*g->d0) * (int64_t) g->in_x);
        }
    }
    for (int64_t kx = hi; kx < g->KW; kx++) {
        out[kx] = 0.0f;
    }
}

// where output pixel p (= (oz*OH + oy)*OW + ox) of image n reads: its first
// input x, the taps kx in [lo, hi) inside the input row, and its y and z
struct conv_pixel {
    int64_t x0, lo, hi, y0, z0;
};

static struct conv_pixel conv_pixel_of(const struct conv_geom * g, int64_t p) {
    const int64_t ox = p % g->OW;
    const int64_t oy = (p / g->OW) % g->OH;
    const int64_t oz = p / (g->OW * g->OH);
    struct conv_pixel px = { .x0 = ox*g->s0 - g->p0, .y0 = oy*g->s1 - g->p1, .z0 = oz*g->s2 - g->p2 };
    // 0 <= x0 + kx*d0 < IW exactly for kx in [lo, hi)
    px.lo = px.x0 >= 0 ? 0 : (-px.x0 + g->d0 - 1) / g->d0;
    px.hi = px.x0 >= g->IW ? 0 : (g->IW - 1 - px.x0) / g->d0 + 1;
    px.lo = MIN(px.lo, g->KW);
    px.hi = MAX(px.lo, MIN(px.hi, g->KW));
    return px;
}

// KW contiguous F32 values (a whole kernel row inside the input); the usual
// sizes unrolled, since a loop of three costs more than the copy
static inline void conv_copy_taps(int64_t KW, const float * src, float * out) {
    switch (KW) {
        case 1: out[0] = src[0]; break;
        case 3: out[0] = src[0]; out[1] = src[1]; out[2] = src[2]; break;
        default:
            for (int64_t kx = 0; kx < KW; kx++) {
                out[kx] = src[kx];
            }
    }
}

// The patches of np consecutive output pixels from p0 of image n, as rows of
// F32 values (ldk apart) in the order (ic, kz, ky, kx), kx fastest; positions
// outside the input are 0. The walk goes input row by input row, each row
// serving every pixel of a run of one output row while it is in L1 (walking
// pixel by pixel instead reads IC*KD*KH rows per pixel, whose planes are
// often a multiple of 1 KiB apart and evict each other from a few cache sets).
static void conv_gather_patches(const struct conv_geom * g, int64_t n, int64_t p0, int64_t np, float * panel, int64_t ldk,
                                struct conv_pixel * px) {
    for (int64_t r = 0; r < np; r++) {
        px[r] = conv_pixel_of(g, p0 + r);
    }
    const bool contiguous = g->in_type == GGML_TYPE_F32 && g->in_x == sizeof(float) && g->d0 == 1;
    const char * base = g->in + n*g->in_n;
    for (int64_t ra = 0, rb; ra < np; ra = rb) {
        // the run of pixels [ra, rb) of one output row: the same input rows
        for (rb = ra + 1; rb < np && px[rb].y0 == px[ra].y0 && px[rb].z0 == px[ra].z0; rb++) {
        }
        int64_t col = 0;
        for (int64_t ic = 0; ic < g->IC; ic++) {
            for (int64_t kz = 0; kz < g->KD; kz++) {
                const int64_t iz = px[ra].z0 + kz*g->d2;
                for (int64_t ky = 0; ky < g->KH; ky++, col += g->KW) {
                    const int64_t iy = px[ra].y0 + ky*g->d1;
                    if (iz < 0 || iz >= g->ID || iy < 0 || iy >= g->IH) {
                        for (int64_t r = ra; r < rb; r++) {
                            memset(panel + r*ldk + col, 0, (size_t) g->KW * sizeof(float));
                        }
                        continue;
                    }
                    const char * src = base + ic*g->in_c + iz*g->in_z + iy*g->in_y;
                    for (int64_t r = ra; r < rb; r++) {
                        float * out = panel + r*ldk + col;
                        if (contiguous && px[r].lo == 0 && px[r].hi == g->KW) {
                            conv_copy_taps(g->KW, (const float *) src + px[r].x0, out);
                        } else {
                            conv_gather_taps(g, src, px[r].x0, px[r].lo, px[r].hi, out);
                        }
                    }
                }
            }
        }
    }
}

//
// IM2COL, IM2COL_3D: one dst row per output pixel, rows split among threads
//

static void conv_geom_im2col(struct conv_geom * g, const struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const bool is_2D = ggml_get_op_params_i32(dst, 6) == 1;
    *g = (struct conv_geom) {
        .IW = b->ne[0], .IH = is_2D ? b->ne[1] : 1, .ID = 1,
        .IC = is_2D ? b->ne[2] : b->ne[1], .N = is_2D ? b->ne[3] : b->ne[2],
        .KW = k->ne[0], .KH = is_2D ? k->ne[1] : 1, .KD = 1,
        .OW = dst->ne[1], .OH = is_2D ? dst->ne[2] : 1, .OD = 1,
        .s0 = ggml_get_op_params_i32(dst, 0), .s1 = is_2D ? ggml_get_op_params_i32(dst, 1) : 1, .s2 = 1,
        .p0 = ggml_get_op_params_i32(dst, 2), .p1 = is_2D ? ggml_get_op_params_i32(dst, 3) : 0, .p2 = 0,
        .d0 = ggml_get_op_params_i32(dst, 4), .d1 = is_2D ? ggml_get_op_params_i32(dst, 5) : 1, .d2 = 1,
        .in = b->data, .in_type = b->type,
        .in_x = b->nb[0], .in_y = is_2D ? b->nb[1] : 0, .in_z = 0,
        .in_c = is_2D ? b->nb[2] : b->nb[1], .in_n = is_2D ? b->nb[3] : b->nb[2],
    };
}

static void conv_geom_im2col_3d(struct conv_geom * g, const struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int64_t IC = ggml_get_op_params_i32(dst, 9);
    *g = (struct conv_geom) {
        .IW = b->ne[0], .IH = b->ne[1], .ID = b->ne[2], .IC = IC, .N = b->ne[3] / IC,
        .KW = k->ne[0], .KH = k->ne[1], .KD = k->ne[2],
        .OW = dst->ne[1], .OH = dst->ne[2],
        .OD = (b->ne[2] + 2*ggml_get_op_params_i32(dst, 5) - ggml_get_op_params_i32(dst, 8)*(k->ne[2] - 1) - 1) / ggml_get_op_params_i32(dst, 2) + 1,
        .s0 = ggml_get_op_params_i32(dst, 0), .s1 = ggml_get_op_params_i32(dst, 1), .s2 = ggml_get_op_params_i32(dst, 2),
        .p0 = ggml_get_op_params_i32(dst, 3), .p1 = ggml_get_op_params_i32(dst, 4), .p2 = ggml_get_op_params_i32(dst, 5),
        .d0 = ggml_get_op_params_i32(dst, 6), .d1 = ggml_get_op_params_i32(dst, 7), .d2 = ggml_get_op_params_i32(dst, 8),
        .in = b->data, .in_type = b->type,
        .in_x = b->nb[0], .in_y = b->nb[1], .in_z = b->nb[2], .in_c = b->nb[3], .in_n = (size_t) IC * b->nb[3],
    };
}

static bool supports_im2col(const struct ggml_tensor * op) {
    return conv_float_type(op->src[1]->type) && (op->type == GGML_TYPE_F32 || op->type == GGML_TYPE_F16) &&
           ggml_is_contiguous(op);
}

#define IM2COL_CHUNK 64

static size_t work_size_im2col(const struct ggml_tensor * op, int n_threads) {
    // IM2COL_CHUNK F32 rows per thread when the destination is F16
    return op->type == GGML_TYPE_F32 ? 0 : (size_t) n_threads * (size_t) (op->ne[0] * IM2COL_CHUNK) * sizeof(float);
}

// rows of IM2COL_CHUNK pixels at a time (see conv_gather_patches)

static void im2col_rows(const struct ggml_compute_params * params, struct ggml_tensor * dst, const struct conv_geom * g) {
    const int64_t len    = conv_patch_len(g);
    const int64_t pixels = g->OD * g->OH * g->OW;
    int64_t r0, r1;
    ggml_cpu_split_range(pixels * g->N, params->ith, params->nth, &r0, &r1);
    float * tmp = dst->type == GGML_TYPE_F32 ? NULL : (float *) params->wdata + (size_t) params->ith * (size_t) (len * IM2COL_CHUNK);
    struct conv_pixel px[IM2COL_CHUNK];
    for (int64_t r = r0; r < r1; ) {
        const int64_t n = r / pixels, p = r % pixels;
        const int64_t np = MIN(MIN(IM2COL_CHUNK, r1 - r), pixels - p);
        char * out = (char *) dst->data + (size_t) r * dst->nb[1];
        if (tmp == NULL) {
            conv_gather_patches(g, n, p, np, (float *) out, (int64_t) (dst->nb[1] / sizeof(float)), px);
        } else {
            conv_gather_patches(g, n, p, np, tmp, len, px);
            for (int64_t i = 0; i < np; i++) {
                (params->use_ref ? ggml_vec_fp32_to_fp16_ref : ggml_vec_fp32_to_fp16)(len, tmp + i*len,
                                                                                    (ggml_fp16_t *)(out + (size_t) i * dst->nb[1]));
            }
        }
        r += np;
    }
}

static void forward_im2col(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct conv_geom g;
    conv_geom_im2col(&g, dst);
    im2col_rows(params, dst, &g);
}

static void forward_im2col_3d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct conv_geom g;
    conv_geom_im2col_3d(&g, dst);
    im2col_rows(params, dst, &g);
}

//
// IM2COL_BACK: src0 the gradient of the im2col rows, src1 the kernel (its
// shape); each input element sums the patch values it was copied to
//

static bool supports_im2col_back(const struct ggml_tensor * op) {
    return op->src[0]->type == GGML_TYPE_F32 && ggml_is_contiguous(op->src[0]) && op->type == GGML_TYPE_F32 &&
           ggml_is_contiguous(op);
}

static void forward_im2col_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * grad = dst->src[0];
    const struct ggml_tensor * k    = dst->src[1];
    const bool is_2D = ggml_get_op_params_i32(dst, 6) == 1;
    const int s0 = ggml_get_op_params_i32(dst, 0), s1 = is_2D ? ggml_get_op_params_i32(dst, 1) : 1;
    const int p0 = ggml_get_op_params_i32(dst, 2), p1 = is_2D ? ggml_get_op_params_i32(dst, 3) : 0;
    const int d0 = ggml_get_op_params_i32(dst, 4), d1 = is_2D ? ggml_get_op_params_i32(dst, 5) : 1;
    const int64_t IW = dst->ne[0], IH = is_2D ? dst->ne[1] : 1;
    const int64_t IC = is_2D ? dst->ne[2] : dst->ne[1];
    const int64_t N  = is_2D ? dst->ne[3] : dst->ne[2];
    const int64_t KW = k->ne[0], KH = is_2D ? k->ne[1] : 1;
    const int64_t OW = grad->ne[1], OH = is_2D ? grad->ne[2] : 1;
    const float * g = (const float *) grad->data;
    float * out = (float *) dst->data; // contiguous: (((n*IC + ic)*IH + iy)*IW + ix)

    int64_t r0, r1;
    ggml_cpu_split_range(N * IC * IH, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t iy = r % IH, ic = (r / IH) % IC, n = r / (IH * IC);
        for (int64_t ix = 0; ix < IW; ix++) {
            float sum = 0.0f;
            for (int64_t ky = 0; ky < KH; ky++) {
                const int64_t ty = iy + p1 - ky*d1;
                if (ty < 0 || ty % s1 != 0 || ty / s1 >= OH) {
                    continue;
                }
                for (int64_t kx = 0; kx < KW; kx++) {
                    const int64_t tx = ix + p0 - kx*d0;
                    if (tx < 0 || tx % s0 != 0 || tx / s0 >= OW) {
                        continue;
                    }
                    const int64_t pix = (n*OH + ty / s1)*OW + tx / s0;
                    sum += g[pix*(IC*KH*KW) + (ic*KH + ky)*KW + kx];
                }
            }
            out[r*IW + ix] = sum;
        }
    }
}

//
// CONV_2D, CONV_3D: the patch GEMM
//

struct patch_gemm {
    struct conv_geom g;
    const struct ggml_tensor * kernel;
    size_t k_oc, k_ic, k_x, k_y, k_z; // kernel byte strides (output channel, input channel, x, y, z)
    int64_t OC;
    size_t dst_oc, dst_n;             // dst byte strides; pixels are contiguous F32
    int64_t len;                      // patch length
    int64_t ldk;                      // row stride of panels, in floats
    int64_t pix;                      // pixels per chunk
    bool kernel_direct;               // F32 contiguous kernel rows are used in place
    size_t shared_size, thread_size;
};

static void patch_gemm_init(struct patch_gemm * pg, const struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    memset(pg, 0, sizeof(*pg));
    pg->kernel = k;
    if (dst->op == GGML_OP_CONV_2D) {
        pg->g = (struct conv_geom) {
            .IW = b->ne[0], .IH = b->ne[1], .ID = 1, .IC = b->ne[2], .N = b->ne[3],
            .KW = k->ne[0], .KH = k->ne[1], .KD = 1,
            .OW = dst->ne[0], .OH = dst->ne[1], .OD = 1,
            .s0 = ggml_get_op_params_i32(dst, 0), .s1 = ggml_get_op_params_i32(dst, 1), .s2 = 1,
            .p0 = ggml_get_op_params_i32(dst, 2), .p1 = ggml_get_op_params_i32(dst, 3), .p2 = 0,
            .d0 = ggml_get_op_params_i32(dst, 4), .d1 = ggml_get_op_params_i32(dst, 5), .d2 = 1,
            .in = b->data, .in_type = b->type,
            .in_x = b->nb[0], .in_y = b->nb[1], .in_z = 0, .in_c = b->nb[2], .in_n = b->nb[3],
        };
        pg->OC   = k->ne[3];
        pg->k_x  = k->nb[0]; pg->k_y = k->nb[1]; pg->k_z = 0; pg->k_ic = k->nb[2]; pg->k_oc = k->nb[3];
        pg->dst_oc = dst->nb[2];
        pg->dst_n  = dst->nb[3];
    } else {
        const int64_t IC = ggml_get_op_params_i32(dst, 9);
        const int64_t N  = ggml_get_op_params_i32(dst, 10);
        pg->OC = ggml_get_op_params_i32(dst, 11);
        pg->g = (struct conv_geom) {
            .IW = b->ne[0], .IH = b->ne[1], .ID = b->ne[2], .IC = IC, .N = N,
            .KW = k->ne[0], .KH = k->ne[1], .KD = k->ne[2],
            .OW = dst->ne[0], .OH = dst->ne[1], .OD = dst->ne[2],
            .s0 = ggml_get_op_params_i32(dst, 0), .s1 = ggml_get_op_params_i32(dst, 1), .s2 = ggml_get_op_params_i32(dst, 2),
            .p0 = ggml_get_op_params_i32(dst, 3), .p1 = ggml_get_op_params_i32(dst, 4), .p2 = ggml_get_op_params_i32(dst, 5),
            .d0 = ggml_get_op_params_i32(dst, 6), .d1 = ggml_get_op_params_i32(dst, 7), .d2 = ggml_get_op_params_i32(dst, 8),
            .in = b->data, .in_type = b->type,
            .in_x = b->nb[0], .in_y = b->nb[1], .in_z = b->nb[2], .in_c = b->nb[3], .in_n = (size_t) IC * b->nb[3],
        };
        // kernel channel index oc*IC + ic, output channel index n*OC + oc
        pg->k_x  = k->nb[0]; pg->k_y = k->nb[1]; pg->k_z = k->nb[2]; pg->k_ic = k->nb[3]; pg->k_oc = (size_t) IC * k->nb[3];
        pg->dst_oc = dst->nb[3];
        pg->dst_n  = (size_t) pg->OC * dst->nb[3];
    }
    pg->len = conv_patch_len(&pg->g);
    // an odd number of cache lines between rows (see mm_row_stride in ops-matmul.c)
    const int64_t lines = (pg->len * (int64_t) sizeof(float) + GGML_CPU_CACHE_LINE - 1) / GGML_CPU_CACHE_LINE;
    pg->ldk = (lines | 1) * GGML_CPU_CACHE_LINE / (int64_t) sizeof(float);
    pg->pix = MAX(8, MIN(256, PATCH_PANEL_BYTES / (pg->ldk * (int64_t) sizeof(float))));
    pg->kernel_direct = k->type == GGML_TYPE_F32 && ggml_is_contiguous(k);
    pg->shared_size = pg->kernel_direct ? 0 : GGML_PAD((size_t) pg->OC * (size_t) pg->ldk * sizeof(float), GGML_CPU_CACHE_LINE);
    // panel, the column pointers of B (whole rows and one k block) and C, the chunk's pixels
    pg->thread_size = GGML_PAD((size_t) pg->pix * (size_t) pg->ldk * sizeof(float) + 3 * (size_t) pg->OC * sizeof(void *) +
                               (size_t) pg->pix * sizeof(struct conv_pixel), GGML_CPU_CACHE_LINE);
}

static bool supports_patch_gemm(const struct ggml_tensor * op) {
    const struct ggml_tensor * k = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    return conv_float_type(k->type) && conv_float_type(b->type) && op->type == GGML_TYPE_F32 && ggml_is_contiguous(op);
}

static size_t work_size_patch_gemm(const struct ggml_tensor * op, int n_threads) {
    struct patch_gemm pg;
    patch_gemm_init(&pg, op);
    return pg.shared_size + (size_t) n_threads * pg.thread_size + GGML_CPU_CACHE_LINE;
}

// kernel row oc as F32 values in patch order (ic, kz, ky, kx)
static void patch_gemm_kernel_row(const struct patch_gemm * pg, int64_t oc, float * row) {
    const struct ggml_tensor * k = pg->kernel;
    for (int64_t ic = 0; ic < pg->g.IC; ic++) {
        for (int64_t kz = 0; kz < pg->g.KD; kz++) {
            for (int64_t ky = 0; ky < pg->g.KH; ky++) {
                const char * src = (const char *) k->data + oc*pg->k_oc + ic*pg->k_ic + kz*pg->k_z + ky*pg->k_y;
                for (int64_t kx = 0; kx < pg->g.KW; kx++) {
                    *row++ = conv_load(k->type, src + kx*pg->k_x);
                }
            }
        }
    }
}

static void patch_gemm_chunk(const struct patch_gemm * pg, struct ggml_tensor * dst, const float * krows, int64_t n,
                             int64_t p0, int64_t np, char * thr, bool use_ref) {
    float * panel = (float *) thr;
    char * ptrs = thr + (size_t) pg->pix * (size_t) pg->ldk * sizeof(float);
    const void ** bcol = (const void **) ptrs;
    const void ** bk   = (const void **)(ptrs + (size_t) pg->OC * sizeof(void *));
    float **      ccol = (float **)(ptrs + 2 * (size_t) pg->OC * sizeof(void *));
    struct conv_pixel * pxs = (struct conv_pixel *)(ptrs + 3 * (size_t) pg->OC * sizeof(void *));
    conv_gather_patches(&pg->g, n, p0, np, panel, pg->ldk, pxs);
    const size_t krow_stride = pg->kernel_direct ? (size_t) pg->len : (size_t) pg->ldk;
    for (int64_t oc = 0; oc < pg->OC; oc++) {
        bcol[oc] = krows + (size_t) oc * krow_stride;
        ccol[oc] = (float *)((char *) dst->data + n*pg->dst_n + oc*pg->dst_oc) + p0;
    }
    for (int64_t kb = 0; kb < pg->len; kb += PATCH_KC) {
        for (int64_t oc = 0; oc < pg->OC; oc++) {
            bk[oc] = (const float *) bcol[oc] + kb;
        }
        ggml_gemm_f32(np, pg->OC, MIN(PATCH_KC, pg->len - kb), panel + kb, (size_t) pg->ldk, bk, ccol, kb > 0, use_ref);
    }
}

static void forward_patch_gemm(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    struct patch_gemm pg;
    patch_gemm_init(&pg, dst);
    char * base = (char *) GGML_PAD((uintptr_t) params->wdata, GGML_CPU_CACHE_LINE);

    const float * krows = (const float *) pg.kernel->data;
    if (!pg.kernel_direct) {
        float * panel = (float *) base;
        int64_t o0, o1;
        ggml_cpu_split_range(pg.OC, params->ith, params->nth, &o0, &o1);
        for (int64_t oc = o0; oc < o1; oc++) {
            patch_gemm_kernel_row(&pg, oc, panel + oc*pg.ldk);
        }
        ggml_cpu_barrier(params->threadpool);
        krows = panel;
    }

    char * thr = base + pg.shared_size + (size_t) params->ith * pg.thread_size;
    const int64_t pixels   = pg.g.OD * pg.g.OH * pg.g.OW;
    const int64_t per_img  = (pixels + pg.pix - 1) / pg.pix;
    const int64_t n_chunks = per_img * pg.g.N;
    for (int64_t c = ggml_cpu_next_chunk(params); c < n_chunks; c = ggml_cpu_next_chunk(params)) {
        const int64_t n  = c / per_img;
        const int64_t p0 = (c % per_img) * pg.pix;
        patch_gemm_chunk(&pg, dst, krows, n, p0, MIN(pg.pix, pixels - p0), thr, params->use_ref);
    }
}

//
// CONV_2D_DW: depthwise, kernel [KW, KH, 1, C]; any input and output strides
// (the CWHN layout included). Output rows are split among threads; a row is
// accumulated tap by tap in F32 over the range of outputs whose input lies
// inside (no bounds checks in the loop, which vectorizes for stride 1).
//

static bool supports_conv_2d_dw(const struct ggml_tensor * op) {
    return conv_float_type(op->src[0]->type) && conv_float_type(op->src[1]->type) && conv_float_type(op->type);
}

static size_t work_size_conv_2d_dw(const struct ggml_tensor * op, int n_threads) {
    return (size_t) n_threads * (size_t) GGML_PAD(op->ne[0], 16) * sizeof(float);
}

// acc[o] += w * in[o*s + off] for the outputs o < n whose input index lies in [0, IW)
static void conv_dw_tap(float * acc, int64_t n, float w, const char * in, enum ggml_type type, size_t nb0, int s, int64_t off,
                        int64_t IW) {
    const int64_t lo = off >= 0 ? 0 : (-off + s - 1) / s;
    const int64_t hi = MIN(n, IW - 1 - off < 0 ? 0 : (IW - 1 - off) / s + 1);
    if (type == GGML_TYPE_F32 && nb0 == sizeof(float) && s == 1) {
        const float * x = (const float *) in + off;
        for (int64_t o = lo; o < hi; o++) {
            acc[o] += w * x[o];
        }
    } else if (type == GGML_TYPE_F32) {
        for (int64_t o = lo; o < hi; o++) {
            acc[o] += w * *(const float *)(in + (o*s + off) * (int64_t) nb0);
        }
    } else {
        for (int64_t o = lo; o < hi; o++) {
            acc[o] += w * conv_load(type, in + (o*s + off) * (int64_t) nb0);
        }
    }
}

static void forward_conv_2d_dw(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int s0 = ggml_get_op_params_i32(dst, 0), s1 = ggml_get_op_params_i32(dst, 1);
    const int p0 = ggml_get_op_params_i32(dst, 2), p1 = ggml_get_op_params_i32(dst, 3);
    const int d0 = ggml_get_op_params_i32(dst, 4), d1 = ggml_get_op_params_i32(dst, 5);
    const int64_t KW = k->ne[0], KH = k->ne[1];
    const int64_t OW = dst->ne[0], OH = dst->ne[1], C = dst->ne[2];
    float * acc = (float *) params->wdata + (size_t) params->ith * (size_t) GGML_PAD(OW, 16);

    int64_t r0, r1;
    ggml_cpu_split_range(OH * C * dst->ne[3], params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t oy = r % OH, c = (r / OH) % C, n = r / (OH * C);
        const char * kc = (const char *) k->data + c*k->nb[3];
        const char * in = (const char *) b->data + c*b->nb[2] + n*b->nb[3];
        char * out = (char *) dst->data + oy*dst->nb[1] + c*dst->nb[2] + n*dst->nb[3];
        memset(acc, 0, (size_t) OW * sizeof(float));
        for (int64_t ky = 0; ky < KH; ky++) {
            const int64_t iy = oy*s1 + ky*d1 - p1;
            if (iy < 0 || iy >= b->ne[1]) {
                continue;
            }
            for (int64_t kx = 0; kx < KW; kx++) {
                const float w = conv_load(k->type, kc + kx*k->nb[0] + ky*k->nb[1]);
                conv_dw_tap(acc, OW, w, in + iy*b->nb[1], b->type, b->nb[0], s0, kx*d0 - p0, b->ne[0]);
            }
        }
        for (int64_t ox = 0; ox < OW; ox++) {
            conv_store(dst->type, out + ox*dst->nb[0], acc[ox]);
        }
    }
}

//
// CONV_TRANSPOSE_1D: kernel [K, OC, IC], input [L, IC];
// dst[t, oc] = sum over (l, k) with l*s0 + k = t and ic of in[l, ic] * kernel[k, oc, ic].
// CONV_TRANSPOSE_2D: kernel [KW, KH, OC, IC], input [W, H, IC, 1], likewise in 2-D.
// Each output element gathers its terms (no scatter), so threads need no
// shared accumulation.
//

static bool supports_conv_transpose(const struct ggml_tensor * op) {
    return conv_float_type(op->src[0]->type) && op->src[1]->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 &&
           op->nb[0] == sizeof(float);
}

// the inputs l < n whose positions l*s + k cover t for some 0 <= k < K: [*l0, *l1]
static void conv_transpose_range(int64_t t, int64_t K, int s, int64_t n, int64_t * l0, int64_t * l1) {
    *l0 = t - K + 1 <= 0 ? 0 : (t - K + 1 + s - 1) / s;
    *l1 = MIN(t / s, n - 1);
}

static void forward_conv_transpose_1d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int s0 = ggml_get_op_params_i32(dst, 0);
    const int64_t K = k->ne[0], IC = k->ne[2], L = b->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_range(dst->ne[1] * dst->ne[2], params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t oc = r % dst->ne[1], n = r / dst->ne[1];
        float * out = (float *)((char *) dst->data + oc*dst->nb[1] + n*dst->nb[2]);
        for (int64_t t = 0; t < dst->ne[0]; t++) {
            int64_t l0, l1;
            conv_transpose_range(t, K, s0, L, &l0, &l1);
            float sum = 0.0f;
            for (int64_t l = l0; l <= l1; l++) {
                const int64_t kk = t - l*s0;
                for (int64_t ic = 0; ic < IC; ic++) {
                    sum += conv_load(k->type, (const char *) k->data + kk*k->nb[0] + oc*k->nb[1] + ic*k->nb[2]) *
                           *(const float *)((const char *) b->data + l*b->nb[0] + ic*b->nb[1] + n*b->nb[2]);
                }
            }
            out[t] = sum;
        }
    }
}

static void forward_conv_transpose_2d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * k = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int s = ggml_get_op_params_i32(dst, 0);
    const int64_t KW = k->ne[0], KH = k->ne[1], IC = k->ne[3];
    const int64_t OW = dst->ne[0], OH = dst->ne[1], OC = dst->ne[2];

    int64_t r0, r1;
    ggml_cpu_split_range(OH * OC * dst->ne[3], params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t oy = r % OH, oc = (r / OH) % OC, n = r / (OH * OC);
        float * out = (float *)((char *) dst->data + oy*dst->nb[1] + oc*dst->nb[2] + n*dst->nb[3]);
        int64_t y0, y1;
        conv_transpose_range(oy, KH, s, b->ne[1], &y0, &y1);
        for (int64_t ox = 0; ox < OW; ox++) {
            int64_t x0, x1;
            conv_transpose_range(ox, KW, s, b->ne[0], &x0, &x1);
            float sum = 0.0f;
            for (int64_t y = y0; y <= y1; y++) {
                for (int64_t x = x0; x <= x1; x++) {
                    const char * kp = (const char *) k->data + (ox - x*s)*k->nb[0] + (oy - y*s)*k->nb[1] + oc*k->nb[2];
                    const char * ip = (const char *) b->data + x*b->nb[0] + y*b->nb[1] + n*b->nb[3];
                    for (int64_t ic = 0; ic < IC; ic++) {
                        sum += conv_load(k->type, kp + ic*k->nb[3]) * *(const float *)(ip + ic*b->nb[2]);
                    }
                }
            }
            out[ox] = sum;
        }
    }
}

//
// COL2IM_1D: columns [K*OC, T_in] -> [T_out, OC], each output a gathered sum
//

static bool supports_col2im_1d(const struct ggml_tensor * op) {
    return conv_float_type(op->src[0]->type) && op->type == op->src[0]->type && ggml_is_contiguous(op->src[0]) &&
           ggml_is_contiguous(op);
}

static void forward_col2im_1d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int s0 = ggml_get_op_params_i32(dst, 0);
    const int64_t OC = ggml_get_op_params_i32(dst, 1);
    const int p0 = ggml_get_op_params_i32(dst, 2);
    const int64_t K = a->ne[0] / OC, T_in = a->ne[1], T_out = dst->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_range(T_out * OC, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t t = r % T_out, oc = r / T_out;
        int64_t l0, l1;
        conv_transpose_range(t + p0, K, s0, T_in, &l0, &l1);
        float sum = 0.0f;
        if (a->type == GGML_TYPE_F32) {
            const float * col = (const float *) a->data + oc*K + t + p0; // contiguous: row l at l*ne0
            for (int64_t l = l0; l <= l1; l++) {
                sum += col[l*(a->ne[0] - s0)];
            }
            ((float *) dst->data)[oc*T_out + t] = sum;
            continue;
        }
        for (int64_t l = l0; l <= l1; l++) {
            sum += conv_load(a->type, (const char *) a->data + (oc*K + t + p0 - l*s0)*a->nb[0] + l*a->nb[1]);
        }
        conv_store(dst->type, (char *) dst->data + t*dst->nb[0] + oc*dst->nb[1], sum);
    }
}

void ggml_cpu_register_ops_conv(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_IM2COL]            = (struct ggml_cpu_op_impl) { forward_im2col,            supports_im2col,         work_size_im2col };
    table[GGML_OP_IM2COL_3D]         = (struct ggml_cpu_op_impl) { forward_im2col_3d,         supports_im2col,         work_size_im2col };
    table[GGML_OP_IM2COL_BACK]       = (struct ggml_cpu_op_impl) { forward_im2col_back,       supports_im2col_back,    NULL };
    table[GGML_OP_COL2IM_1D]         = (struct ggml_cpu_op_impl) { forward_col2im_1d,         supports_col2im_1d,      NULL };
    table[GGML_OP_CONV_2D]           = (struct ggml_cpu_op_impl) { forward_patch_gemm,        supports_patch_gemm,     work_size_patch_gemm };
    table[GGML_OP_CONV_3D]           = (struct ggml_cpu_op_impl) { forward_patch_gemm,        supports_patch_gemm,     work_size_patch_gemm };
    table[GGML_OP_CONV_2D_DW]        = (struct ggml_cpu_op_impl) { forward_conv_2d_dw,        supports_conv_2d_dw,     work_size_conv_2d_dw };
    table[GGML_OP_CONV_TRANSPOSE_1D] = (struct ggml_cpu_op_impl) { forward_conv_transpose_1d, supports_conv_transpose, NULL };
    table[GGML_OP_CONV_TRANSPOSE_2D] = (struct ggml_cpu_op_impl) { forward_conv_transpose_2d, supports_conv_transpose, NULL };
}
