// test-cpu-matmul: MUL_MAT, MUL_MAT_ID and OUT_PROD on the CPU, the
// activation quantizers and the dot products of the type traits.
//
// References are double-precision sums over the dequantized weights, written
// here. Each result is checked twice:
//   - against the product with the F32 activations, within the error the
//     activation format allows (rounding to F16 / BF16, or quantizing to Q8:
//     half a step per value plus the fp16 rounding of the block scale, and
//     for Q8_1 the fp16 rounding of the block sum), plus float rounding;
//   - against the product with the activations as the format holds them
//     (rounded, or quantized by the reference quantizer), within float
//     rounding alone: (k + 32) units of the last place of the sum of |terms|.
// Both kernel families run (the vector path and, with use_ref, the portable
// one); 1, 2 and 3 threads must give identical bits.

#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-quants.h"
#include "cpu-testing.h"

#include <float.h>

#define U_F32 (1.0 / 16777216.0) // 2^-24

static const enum ggml_type k_weight_types[] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16,
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
};
#define N_WEIGHT_TYPES (int)(sizeof(k_weight_types)/sizeof(k_weight_types[0]))

// the activation type of each weight type (upstream's vec_dot_type)
static enum ggml_type act_type_of(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32:  return GGML_TYPE_F32;
        case GGML_TYPE_F16:  return GGML_TYPE_F16;
        case GGML_TYPE_BF16: return GGML_TYPE_BF16;
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_1: return GGML_TYPE_Q8_1;
        default:             return GGML_TYPE_Q8_0;
    }
}

static bool is_affine(enum ggml_type t) {
    return t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_1;
}

//
// computing
//

// room for a few tensors and the graphs of run_all besides the data
#define CTX_OVERHEAD (16*ggml_tensor_overhead() + 6*ggml_graph_overhead() + 4096)

static struct ggml_context * ctx_new(size_t bytes) {
    struct ggml_init_params ip = { bytes, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    CHECK(ctx != NULL);
    return ctx;
}

// pools of 1, 2, 3 and 7 threads, made once (workers sleep between graphs:
// they may share 2 cores)
#define LONG_THREADS 7
static struct ggml_threadpool * g_pools[LONG_THREADS + 1];

static void pools_init(void) {
    for (int n = 1; n <= LONG_THREADS; n++) {
        if (n > 3 && n < LONG_THREADS) {
            continue;
        }
        struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n);
        tpp.poll = 0;
        g_pools[n] = ggml_threadpool_new(&tpp);
        CHECK(g_pools[n] != NULL);
    }
}

static void pools_free(void) {
    for (int n = 1; n <= LONG_THREADS; n++) {
        ggml_threadpool_free(g_pools[n]);
    }
}

// out computed with n threads on the vector or the portable path, as a
// malloc'ed array in row-major order of out's elements
static float * run(struct ggml_context * ctx, struct ggml_tensor * out, int n_threads, bool use_ref) {
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, g_pools[n_threads]);
    plan.use_ref = use_ref;
    void * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
    plan.work_data = (uint8_t *) work;
    // every value of out written by this run: what a run leaves out stays NaN
    // (out is contiguous: a fresh tensor of the case)
    memset(out->data, 0xff, ggml_nbytes(out));
    CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
    free(work);

    const int64_t n = ggml_nelements(out);
    float * res = (float *) malloc((size_t) n * sizeof(float));
    int64_t idx = 0;
    for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < out->ne[0]; i0++) {
        res[idx++] = (float) tt_get(out, i0, i1, i2, i3);
    }
    return res;
}

// the vector path with 1, 2, 3 threads and the portable path with 1 and 2;
// each group must agree bit for bit. Returns { vector, portable }.
static void run_all(struct ggml_context * ctx, struct ggml_tensor * out, float ** vec, float ** ref, const char * what) {
    const size_t bytes = (size_t) ggml_nelements(out) * sizeof(float);
    *vec = run(ctx, out, 1, false);
    *ref = run(ctx, out, 1, true);
    for (int nth = 2; nth <= 3; nth++) {
        float * v = run(ctx, out, nth, false);
        CHECK_MSG(memcmp(v, *vec, bytes) == 0, "%s: vector path, %d threads differ from 1", what, nth);
        free(v);
    }
    if (out->ne[0] >= 4096) {
        // long enough for the row chunks that shrink with what is left (ops-matmul.c, mm_rows_split)
        float * v = run(ctx, out, LONG_THREADS, false);
        CHECK_MSG(memcmp(v, *vec, bytes) == 0, "%s: vector path, %d threads differ from 1", what, LONG_THREADS);
        free(v);
    }
    float * r = run(ctx, out, 2, true);
    CHECK_MSG(memcmp(r, *ref, bytes) == 0, "%s: portable path, 2 threads differ from 1", what);
    free(r);
}

//
// activations as the formats hold them
//

// One activation row x (k values, F32) in the form the weights meet, for
// weights of type wt: xa[i] the values, mcorr[b] the difference between the
// block sum the Q8_1 format stores and the sum of its values (the affine
// types use the stored sum), err[b] a bound of |x[i] - xa[i]| in block b and
// serr[b] a bound of |stored block sum - sum of x| (Q8_1).
struct act_row {
    double * x, * xa, * mcorr, * err, * serr;
};

static struct act_row act_row_new(int64_t k) {
    const int64_t nb = k/32 + 1;
    struct act_row a = {
        .x     = (double *) calloc((size_t) k,  sizeof(double)),
        .xa    = (double *) calloc((size_t) k,  sizeof(double)),
        .mcorr = (double *) calloc((size_t) nb, sizeof(double)),
        .err   = (double *) calloc((size_t) nb, sizeof(double)),
        .serr  = (double *) calloc((size_t) nb, sizeof(double)),
    };
    return a;
}

static void act_row_free(struct act_row * a) {
    free(a->x); free(a->xa); free(a->mcorr); free(a->err); free(a->serr);
}

// the values of one Q8 block from its bytes: d at offset 0, (Q8_1: s at 2), codes after
static void q8_block_values(enum ggml_type t, const uint8_t * blk, double * xa, double * mcorr) {
    uint16_t dh;
    memcpy(&dh, blk, sizeof(dh));
    const double d = ggml_fp16_to_fp32(dh);
    const int8_t * qs = (const int8_t *)(blk + (t == GGML_TYPE_Q8_1 ? 4 : 2));
    long sum = 0;
    for (int j = 0; j < 32; j++) {
        xa[j] = d * qs[j];
        sum += qs[j];
    }
    *mcorr = 0.0;
    if (t == GGML_TYPE_Q8_1) {
        uint16_t sh;
        memcpy(&sh, blk + 2, sizeof(sh));
        *mcorr = ggml_fp16_to_fp32(sh) - d * (double) sum;
    }
}

// column (i11, i12, i13) of x, for weights of type wt
static void act_row_fill(struct act_row * a, const struct ggml_tensor * x, int64_t i11, int64_t i12, int64_t i13, enum ggml_type wt) {
    const int64_t k = x->ne[0];
    const enum ggml_type at = act_type_of(wt);
    for (int64_t i = 0; i < k; i++) {
        a->x[i] = tt_get(x, i, i11, i12, i13);
    }
    for (int64_t b = 0; b < k/32 + 1; b++) {
        a->mcorr[b] = a->err[b] = a->serr[b] = 0.0;
    }
    if (x->type == at) {
        // already in the activation type: nothing is lost
        if (ggml_is_quantized(at)) {
            const uint8_t * row = (const uint8_t *) x->data + i11*x->nb[1] + i12*x->nb[2] + i13*x->nb[3];
            for (int64_t b = 0; b < k/32; b++) {
                q8_block_values(at, row + b*ggml_type_size(at), a->xa + 32*b, &a->mcorr[b]);
                a->serr[b] = fabs(a->mcorr[b]);
            }
        } else {
            memcpy(a->xa, a->x, (size_t) k * sizeof(double));
        }
        return;
    }
    switch (at) {
        case GGML_TYPE_F32:
            memcpy(a->xa, a->x, (size_t) k * sizeof(double));
            break;
        case GGML_TYPE_F16:
            for (int64_t i = 0; i < k; i++) {
                a->xa[i] = ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) a->x[i]));
            }
            a->err[0] = ldexp(1.0, -11); // relative, for every value
            break;
        case GGML_TYPE_BF16:
            for (int64_t i = 0; i < k; i++) {
                a->xa[i] = ggml_bf16_to_fp32(ggml_fp32_to_bf16((float) a->x[i]));
            }
            a->err[0] = ldexp(1.0, -8);
            break;
        default: {
            float xf[32];
            uint8_t blk[64];
            for (int64_t b = 0; b < k/32; b++) {
                double amax = 0.0, sabs = 0.0, sq = 0.0;
                for (int j = 0; j < 32; j++) {
                    xf[j] = (float) a->x[32*b + j];
                    amax = fmax(amax, fabs(a->x[32*b + j]));
                }
                (at == GGML_TYPE_Q8_0 ? quantize_row_q8_0_ref : quantize_row_q8_1_ref)(xf, blk, 32);
                q8_block_values(at, blk, a->xa + 32*b, &a->mcorr[b]);
                for (int j = 0; j < 32; j++) {
                    sabs += fabs(a->x[32*b + j]);
                    sq   += a->xa[32*b + j];
                }
                // a code is round(x/d) with d = amax/127 rounded to fp32; the
                // stored d is that rounded to fp16 (relative 2^-11, or 2^-25
                // absolute below the normal range), times codes up to 127
                const double d = amax / 127.0;
                a->err[b] = d * 0.5 * (1.0 + 1e-6) + 127.0 * fmax(d * ldexp(1.0, -11), ldexp(1.0, -25));
                // the stored sum: fp16 of d*sum(codes), so within 2^-11 of it
                a->serr[b] = 32.0 * a->err[b] + ldexp(1.0, -11) * fabs(sq) * 1.001 + ldexp(1.0, -24);
                (void) sabs;
            }
        } break;
    }
}

// the weights of row r of matrix (i2, i3) of w, dequantized by the
// reference, and for the affine types the block minimums
static void weight_row(const struct ggml_tensor * w, int64_t r, int64_t i2, int64_t i3, double * out, double * mins) {
    const int64_t k = w->ne[0];
    const char * row = (const char *) w->data + r*w->nb[1] + i2*w->nb[2] + i3*w->nb[3];
    float * f = (float *) malloc((size_t) k * sizeof(float));
    if (ggml_is_quantized(w->type)) {
        ggml_get_type_traits(w->type)->to_float(row, f, k);
    } else {
        for (int64_t i = 0; i < k; i++) {
            f[i] = (float) tt_get(w, i, r, i2, i3);
        }
    }
    for (int64_t i = 0; i < k; i++) {
        out[i] = f[i];
    }
    for (int64_t b = 0; is_affine(w->type) && b < k/32; b++) {
        uint16_t mh; // d at offset 0, m at offset 2 of Q4_1 / Q5_1 blocks
        memcpy(&mh, row + b*ggml_type_size(w->type) + 2, sizeof(mh));
        mins[b] = ggml_fp16_to_fp32(mh);
    }
    free(f);
}

// checks result `got` of weight row w (k values) . activation row a
struct dot_check {
    double ref_x, ref_a;    // with the F32 values / with the values as the format holds them
    double tol_x, tol_a;
};

static struct dot_check dot_reference(enum ggml_type wt, const double * w, const double * mins, const struct act_row * a, int64_t k) {
    const enum ggml_type at = act_type_of(wt);
    struct dot_check c = { 0 };
    double sum_abs = 0.0, fmt_err = 0.0;
    for (int64_t i = 0; i < k; i++) {
        c.ref_x += w[i] * a->x[i];
        c.ref_a += w[i] * a->xa[i];
        sum_abs += fabs(w[i] * a->xa[i]);
    }
    if (at == GGML_TYPE_F16 || at == GGML_TYPE_BF16) {
        for (int64_t i = 0; i < k; i++) {
            fmt_err += fabs(w[i] * a->x[i]) * a->err[0];
        }
    } else if (at == GGML_TYPE_Q8_0 || at == GGML_TYPE_Q8_1) {
        for (int64_t b = 0; b < k/32; b++) {
            const double m = is_affine(wt) ? mins[b] : 0.0;
            for (int j = 0; j < 32; j++) {
                fmt_err += fabs(w[32*b + j] - m) * a->err[b];
            }
            if (is_affine(wt)) {
                // the affine part meets the stored block sum
                c.ref_a  += m * a->mcorr[b];
                sum_abs  += fabs(m * (a->mcorr[b]));
                fmt_err  += fabs(m) * a->serr[b];
            }
        }
    }
    c.tol_a = (double)(k + 32) * U_F32 * 2.0 * sum_abs + 1e-30;
    c.tol_x = fmt_err * 1.001 + c.tol_a;
    return c;
}

//
// MUL_MAT
//

enum x_layout { X_CONT, X_PERM, X_TRANS };

struct mm_case {
    enum ggml_type type;
    int64_t k, n, m;
    int64_t ne02, ne03, ne12, ne13;
    enum x_layout layout;
    bool x_act;       // src1 given in the activation type instead of F32
    bool w_strided;   // weights: every other row of a bigger tensor
};

// the buffers of a product checked against the double reference: the
// activations' and weights' rows, the two paths' results, the context
static void check_buffers_free(struct act_row * a, double * wr, double * mins, float * vec, float * ref,
                               struct ggml_context * ctx) {
    act_row_free(a);
    free(wr);
    free(mins);
    free(vec);
    free(ref);
    ggml_free(ctx);
}

static void test_mul_mat_case(const struct mm_case * c) {
    const enum ggml_type at = act_type_of(c->type);
    const enum ggml_type xt = c->x_act ? at : GGML_TYPE_F32;
    char what[200];
    snprintf(what, sizeof(what), "mul_mat %s k=%lld n=%lld m=%lld [%lld,%lld]x[%lld,%lld] layout=%d x=%s%s",
             ggml_type_name(c->type), (long long) c->k, (long long) c->n, (long long) c->m,
             (long long) c->ne02, (long long) c->ne03, (long long) c->ne12, (long long) c->ne13,
             (int) c->layout, ggml_type_name(xt), c->w_strided ? " strided" : "");

    const size_t mem = ggml_row_size(c->type, c->k)*(2*c->n + 1)*c->ne02*c->ne03 + c->k*c->m*c->ne12*c->ne13*sizeof(float) +
                       c->n*c->m*c->ne12*c->ne13*sizeof(float) + CTX_OVERHEAD;
    struct ggml_context * ctx = ctx_new(mem);

    struct ggml_tensor * w;
    if (c->w_strided) {
        struct ggml_tensor * base = ggml_new_tensor_4d(ctx, c->type, c->k, 2*c->n + 1, c->ne02, c->ne03);
        tt_fill_uniform(base, -1.0, 1.0, 11);
        w = ggml_view_4d(ctx, base, c->k, c->n, c->ne02, c->ne03, 2*base->nb[1], base->nb[2], base->nb[3], base->nb[1]);
    } else {
        w = ggml_new_tensor_4d(ctx, c->type, c->k, c->n, c->ne02, c->ne03);
        tt_fill_uniform(w, -1.0, 1.0, 11);
    }

    struct ggml_tensor * x;
    switch (c->layout) {
        case X_PERM: {
            struct ggml_tensor * base = ggml_new_tensor_4d(ctx, xt, c->k, c->ne12, c->m, c->ne13);
            tt_fill_uniform(base, -1.0, 1.0, 12);
            x = ggml_permute(ctx, base, 0, 2, 1, 3);
        } break;
        case X_TRANS: {
            struct ggml_tensor * base = ggml_new_tensor_4d(ctx, xt, c->m, c->k, c->ne12, c->ne13);
            tt_fill_uniform(base, -1.0, 1.0, 12);
            x = ggml_transpose(ctx, base);
        } break;
        default:
            x = ggml_new_tensor_4d(ctx, xt, c->k, c->m, c->ne12, c->ne13);
            tt_fill_uniform(x, -1.0, 1.0, 12);
            break;
    }

    struct ggml_tensor * out = ggml_mul_mat(ctx, w, x);
    float * vec, * ref;
    run_all(ctx, out, &vec, &ref, what);

    const int64_t k = c->k;
    double * wr   = (double *) malloc((size_t)(k * c->n) * sizeof(double));
    double * mins = (double *) calloc((size_t)(k/32 + 1) * c->n, sizeof(double));
    struct act_row a = act_row_new(k);
    double worst_vec = 0.0, worst_ref = 0.0;
    for (int64_t i13 = 0; i13 < c->ne13; i13++)
    for (int64_t i12 = 0; i12 < c->ne12; i12++) {
        const int64_t i02 = i12 / (c->ne12 / c->ne02);
        const int64_t i03 = i13 / (c->ne13 / c->ne03);
        for (int64_t i = 0; i < c->n; i++) {
            weight_row(w, i, i02, i03, wr + i*k, mins + i*(k/32 + 1));
        }
        for (int64_t j = 0; j < c->m; j++) {
            act_row_fill(&a, x, j, i12, i13, c->type);
            for (int64_t i = 0; i < c->n; i++) {
                const struct dot_check dc = dot_reference(c->type, wr + i*k, mins + i*(k/32 + 1), &a, k);
                const int64_t idx = i + c->n*(j + c->m*(i12 + c->ne12*i13));
                const float got[2] = { vec[idx], ref[idx] };
                for (int p = 0; p < 2; p++) {
                    const double e = fmax(fabs(got[p] - dc.ref_a) / dc.tol_a, fabs(got[p] - dc.ref_x) / dc.tol_x);
                    double * worst = p == 0 ? &worst_vec : &worst_ref;
                    if (!(e <= *worst)) {
                        *worst = e;
                    }
                }
            }
        }
    }
    CHECK_MSG(worst_vec <= 1.0, "%s: vector path error %.3g of the tolerance", what, worst_vec);
    CHECK_MSG(worst_ref <= 1.0, "%s: portable path error %.3g of the tolerance", what, worst_ref);

    check_buffers_free(&a, wr, mins, vec, ref, ctx);
}

static void test_mul_mat(void) {
    static const int64_t dims[]     = { 1, 2, 7, 33, 129 };
    static const int64_t ks_quant[] = { 32, 64, 96, 256 };
    static const int64_t ks_float[] = { 1, 7, 32, 33, 96, 257 }; // float rows need not be whole blocks
    int idx = 0;
    for (int t = 0; t < N_WEIGHT_TYPES; t++) {
        const enum ggml_type type = k_weight_types[t];
        const bool quant = ggml_is_quantized(type);
        const int nk = quant ? 4 : 6;
        for (int ik = 0; ik < nk; ik++)
        for (int in = 0; in < 5; in++)
        for (int im = 0; im < 5; im++) {
            const int64_t k = quant ? ks_quant[ik] : ks_float[ik], n = dims[in], m = dims[im];
            // every shape at k = 32 (129 x 129 for two types); half of them,
            // and not the big squares, at the other lengths (they take the time)
            if (k != 32 && ((n >= 33 && m >= 33) || (ik + in + im) % 2 != 0)) {
                continue;
            }
            if (n == 129 && m == 129 && type != GGML_TYPE_F32 && type != GGML_TYPE_Q4_0) {
                continue;
            }
            idx++;
            const struct mm_case c = {
                .type = type, .k = k, .n = n, .m = m,
                .ne02 = 1, .ne03 = 1, .ne12 = 1, .ne13 = 1,
                .layout = idx % 5 == 0 ? X_TRANS : idx % 3 == 0 ? X_PERM : X_CONT,
                .x_act = false, .w_strided = idx % 7 == 0,
            };
            test_mul_mat_case(&c);
        }
        // long rows: several k blocks of the tile kernels, and a partial superblock
        const int64_t big[][3] = { { 4096, 33, 2 }, { 4096, 7, 33 }, { 4096, 40, 5 }, { 4352, 9, 6 } };
        for (int b = 0; b < 4; b++) {
            const struct mm_case c = {
                .type = type, .k = big[b][0] + (quant || b < 2 ? 0 : 1), .n = big[b][1], .m = big[b][2],
                .ne02 = 1, .ne03 = 1, .ne12 = 1, .ne13 = 1,
                .layout = b == 2 ? X_TRANS : b == 3 ? X_PERM : X_CONT, .x_act = false, .w_strided = b == 1,
            };
            test_mul_mat_case(&c);
        }
        // many short rows, few columns: the row dots' chunks shrink with the rows
        // left, from a quarter of the matrix (2 threads) down to blocks of 1024
        // rows, then equal blocks; with 2, 3 and 7 threads every row is computed once
        for (int b = 0; b < 2; b++) {
            const struct mm_case c = {
                .type = type, .k = 32, .n = 30011 - 8*b, .m = 1 + b,
                .ne02 = 1, .ne03 = 1, .ne12 = 1, .ne13 = 1,
                .layout = X_CONT, .x_act = false, .w_strided = b == 1,
            };
            test_mul_mat_case(&c);
        }
        // broadcasting over dims 2 and 3, with each kernel
        const int64_t bm[] = { 1, 2, 7, 65 };
        for (int b = 0; b < 4; b++) {
            const struct mm_case c = {
                .type = type, .k = 64, .n = 7, .m = bm[b],
                .ne02 = 2, .ne03 = 3, .ne12 = 4, .ne13 = 6,
                .layout = (enum x_layout)(b % 3), .x_act = false, .w_strided = b == 1,
            };
            test_mul_mat_case(&c);
        }
        // activations given in the activation type
        const int64_t am[] = { 1, 2, 7, 70 };
        for (int b = 0; b < 4; b++) {
            const struct mm_case c = {
                .type = type, .k = 96, .n = 13, .m = am[b],
                .ne02 = 1, .ne03 = 2, .ne12 = 2, .ne13 = 2,
                .layout = b == 1 ? X_PERM : X_CONT, .x_act = true, .w_strided = false,
            };
            test_mul_mat_case(&c);
        }
    }
}

//
// MUL_MAT_ID
//

static void test_mul_mat_id_case(enum ggml_type type, int64_t k, int64_t n, int64_t n_tokens, int64_t ne11, bool x_perm) {
    const int64_t n_as = 6, n_used = 4;
    char what[160];
    snprintf(what, sizeof(what), "mul_mat_id %s k=%lld n=%lld tokens=%lld ne11=%lld%s", ggml_type_name(type),
             (long long) k, (long long) n, (long long) n_tokens, (long long) ne11, x_perm ? " permuted" : "");

    struct ggml_context * ctx = ctx_new(ggml_row_size(type, k)*n*n_as + (size_t)(k*4 + 4*n*4)*n_tokens*sizeof(float) + CTX_OVERHEAD);
    struct ggml_tensor * as = ggml_new_tensor_3d(ctx, type, k, n, n_as);
    tt_fill_uniform(as, -1.0, 1.0, 21);
    struct ggml_tensor * x;
    if (x_perm) {
        struct ggml_tensor * base = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, k, n_tokens, ne11);
        tt_fill_uniform(base, -1.0, 1.0, 22);
        x = ggml_permute(ctx, base, 0, 2, 1, 3);
    } else {
        x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, k, ne11, n_tokens);
        tt_fill_uniform(x, -1.0, 1.0, 22);
    }
    // experts: 5 unused; 1 in every token, twice in some; 0 and 2 with many
    // columns, 4 with two and 3 with one (with 9 tokens), so that both
    // kernels run
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, n_tokens);
    for (int64_t t = 0; t < n_tokens; t++) {
        int32_t * row = (int32_t *)((char *) ids->data + t*ids->nb[1]);
        row[0] = 1;
        row[1] = t % 3 == 0 ? 1 : 0;
        row[2] = t == 0 || t == 5 ? 4 : 2;
        row[3] = t == 2 ? 3 : 2;
    }
    struct ggml_tensor * out = ggml_mul_mat_id(ctx, as, x, ids);
    float * vec, * ref;
    run_all(ctx, out, &vec, &ref, what);

    double * wr   = (double *) malloc((size_t) k * sizeof(double));
    double * mins = (double *) calloc((size_t)(k/32 + 1), sizeof(double));
    struct act_row a = act_row_new(k);
    double worst[2] = { 0.0, 0.0 };
    for (int64_t t = 0; t < n_tokens; t++) {
        for (int64_t s = 0; s < n_used; s++) {
            const int32_t e = ((const int32_t *)((const char *) ids->data + t*ids->nb[1]))[s];
            act_row_fill(&a, x, s % ne11, t, 0, type);
            for (int64_t i = 0; i < n; i++) {
                weight_row(as, i, e, 0, wr, mins);
                const struct dot_check dc = dot_reference(type, wr, mins, &a, k);
                const int64_t idx = i + n*(s + n_used*t);
                const float got[2] = { vec[idx], ref[idx] };
                for (int p = 0; p < 2; p++) {
                    const double err = fmax(fabs(got[p] - dc.ref_a) / dc.tol_a, fabs(got[p] - dc.ref_x) / dc.tol_x);
                    if (!(err <= worst[p])) {
                        worst[p] = err;
                    }
                }
            }
        }
    }
    CHECK_MSG(worst[0] <= 1.0, "%s: vector path error %.3g of the tolerance", what, worst[0]);
    CHECK_MSG(worst[1] <= 1.0, "%s: portable path error %.3g of the tolerance", what, worst[1]);

    act_row_free(&a);
    free(wr);
    free(mins);
    free(vec);
    free(ref);
    ggml_free(ctx);
}

static void test_mul_mat_id(void) {
    for (int t = 0; t < N_WEIGHT_TYPES; t++) {
        const enum ggml_type type = k_weight_types[t];
        test_mul_mat_id_case(type, 64,  7,  1, 4, false);  // generation: one column per expert
        test_mul_mat_id_case(type, 256, 33, 9, 4, false);  // both kernels, by expert
        test_mul_mat_id_case(type, 96,  13, 9, 1, false);  // one src1 row per token
        test_mul_mat_id_case(type, 64,  7,  5, 2, true);   // src1 permuted, ne11 dividing n_used
        test_mul_mat_id_case(type, 64,  9, 80, 4, false);  // experts with many columns for every kernel
    }
}

//
// OUT_PROD
//

static void test_out_prod_case(enum ggml_type type, int64_t m0, int64_t n, int64_t p, int64_t ne02, int64_t ne03,
                               int64_t ne12, int64_t ne13, bool b_trans) {
    char what[160];
    snprintf(what, sizeof(what), "out_prod %s %lldx%lld . %lldx%lld [%lld,%lld]x[%lld,%lld]%s", ggml_type_name(type),
             (long long) m0, (long long) n, (long long) p, (long long) n, (long long) ne02, (long long) ne03,
             (long long) ne12, (long long) ne13, b_trans ? " transposed" : "");
    struct ggml_context * ctx = ctx_new(ggml_row_size(type, m0)*n*ne02*ne03 + (size_t)(p*n + m0*p)*ne12*ne13*sizeof(float) + CTX_OVERHEAD);
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, type, m0, n, ne02, ne03);
    tt_fill_uniform(a, -1.0, 1.0, 31);
    struct ggml_tensor * b;
    if (b_trans) {
        struct ggml_tensor * base = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n, p, ne12, ne13);
        tt_fill_uniform(base, -1.0, 1.0, 32);
        b = ggml_transpose(ctx, base);
    } else {
        b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, p, n, ne12, ne13);
        tt_fill_uniform(b, -1.0, 1.0, 32);
    }
    struct ggml_tensor * out = ggml_out_prod(ctx, a, b);
    float * vec, * ref;
    run_all(ctx, out, &vec, &ref, what);

    double worst[2] = { 0.0, 0.0 };
    double * av = (double *) malloc((size_t)(m0 * n) * sizeof(double));
    for (int64_t i3 = 0; i3 < ne13; i3++)
    for (int64_t i2 = 0; i2 < ne12; i2++) {
        const int64_t i02 = i2 / (ne12 / ne02), i03 = i3 / (ne13 / ne03);
        for (int64_t r = 0; r < n; r++) {
            double mins[64];
            weight_row(a, r, i02, i03, av + r*m0, mins);
        }
        for (int64_t i1 = 0; i1 < p; i1++)
        for (int64_t i0 = 0; i0 < m0; i0++) {
            double sum = 0.0, sabs = 0.0;
            for (int64_t r = 0; r < n; r++) {
                const double t = av[r*m0 + i0] * tt_get(b, i1, r, i2, i3);
                sum  += t;
                sabs += fabs(t);
            }
            const double tol = (double)(n + 4) * U_F32 * 2.0 * sabs + 1e-30;
            const int64_t idx = i0 + m0*(i1 + p*(i2 + ne12*i3));
            for (int q = 0; q < 2; q++) {
                const double e = fabs((q == 0 ? vec : ref)[idx] - sum) / tol;
                if (!(e <= worst[q])) {
                    worst[q] = e;
                }
            }
        }
    }
    CHECK_MSG(worst[0] <= 1.0, "%s: vector path error %.3g of the tolerance", what, worst[0]);
    CHECK_MSG(worst[1] <= 1.0, "%s: portable path error %.3g of the tolerance", what, worst[1]);
    free(av);
    free(vec);
    free(ref);
    ggml_free(ctx);
}

static void test_out_prod(void) {
    test_out_prod_case(GGML_TYPE_F32, 7, 5, 3, 1, 1, 1, 1, false);
    test_out_prod_case(GGML_TYPE_F32, 33, 17, 19, 2, 3, 4, 6, false);   // broadcasting
    test_out_prod_case(GGML_TYPE_F32, 1100, 9, 21, 1, 2, 2, 2, true);   // segments, transposed src1
    test_out_prod_case(GGML_TYPE_F16, 129, 7, 18, 2, 1, 2, 1, true);
    test_out_prod_case(GGML_TYPE_F32, 300, 13, 70, 1, 1, 1, 1, false);   // several row blocks and segments
    for (int t = 3; t < N_WEIGHT_TYPES; t++) {
        test_out_prod_case(k_weight_types[t], 64, 5, 17, 2, 1, 2, 1, false);
        test_out_prod_case(k_weight_types[t], 1056, 3, 4, 1, 1, 1, 1, true);
    }
}

//
// activation quantizers: the bytes of the reference
//

static void check_q8_row(const float * x, int64_t k, const char * what) {
    for (int t = 0; t < 3; t++) {
        const enum ggml_type at = t == 0 ? GGML_TYPE_Q8_0 : t == 1 ? GGML_TYPE_Q8_1 : GGML_TYPE_Q8_K;
        if (k % ggml_blck_size(at) != 0) {
            continue;
        }
        const size_t bytes = ggml_row_size(at, k);
        uint8_t * fast = (uint8_t *) malloc(bytes);
        uint8_t * slow = (uint8_t *) malloc(bytes);
        memset(fast, 0xAA, bytes);
        memset(slow, 0x55, bytes);
        ggml_get_type_traits_cpu(at)->from_float(x, fast, k);
        (t == 0 ? quantize_row_q8_0_ref : t == 1 ? quantize_row_q8_1_ref : quantize_row_q8_K_ref)(x, slow, k);
        CHECK_MSG(memcmp(fast, slow, bytes) == 0, "%s: %s bytes differ from the reference", what, ggml_type_name(at));
        free(fast);
        free(slow);
    }
}

static void test_quantize_q8(void) {
    uint64_t st = 99;
    const int64_t k = 32 * 24;
    float * x = (float *) malloc((size_t) k * sizeof(float));

    // random rows at several magnitudes
    const double scales[] = { 1.0, 1e-3, 1e3, 1e-20, 1e30, 3e-36, 1e-40 };
    for (int s = 0; s < 7; s++) {
        for (int rep = 0; rep < 20; rep++) {
            for (int64_t i = 0; i < k; i++) {
                x[i] = (float)(tt_rand_uniform(&st, -1.0, 1.0) * scales[s]);
            }
            check_q8_row(x, k, "random");
        }
    }
    // ties: amax 127 makes d = 1 and 1/d = 1, so v.5 rounds away from zero
    for (int64_t i = 0; i < k; i++) {
        x[i] = i % 32 == 0 ? 127.0f : (float)((int)(i % 255) - 127) + (i % 2 ? 0.5f : -0.5f);
        x[i] = fminf(127.0f, fmaxf(-127.0f, x[i]));
    }
    check_q8_row(x, k, "ties");
    // just below and above one half step
    for (int64_t i = 0; i < k; i++) {
        x[i] = i % 32 == 0 ? -127.0f : (i % 2 ? nextafterf(0.5f, 0.0f) : nextafterf(2.5f, 3.0f)) * (i % 3 ? 1.0f : -1.0f);
    }
    check_q8_row(x, k, "half steps");
    // zeros, signed zeros, one value per block, subnormals, huge values
    for (int64_t i = 0; i < k; i++) {
        const int b = (int)(i / 32), j = (int)(i % 32);
        switch (b % 8) {
            case 0: x[i] = 0.0f; break;
            case 1: x[i] = j % 2 ? -0.0f : 0.0f; break;
            case 2: x[i] = j == 5 ? -3.25f : 0.0f; break;
            case 3: x[i] = (float) j * 1e-45f; break;                  // subnormals
            case 4: x[i] = j == 0 ? FLT_MAX : -FLT_MAX / (float)(j + 1); break;
            case 5: x[i] = j == 0 ? 1.5e-36f : 1e-38f; break;          // d subnormal
            case 6: x[i] = 65504.0f * 127.0f * (j % 2 ? 1.0f : -1.0f); break; // d at the fp16 limit
            default: x[i] = 1e6f + (float) j; break;
        }
    }
    check_q8_row(x, k, "special values");
    // the same kinds, one per 256 values (a Q8_K block of only subnormals or tiny values)
    for (int64_t i = 0; i < k; i++) {
        const int b = (int)(i / 256), j = (int)(i % 256);
        switch (b % 3) {
            case 0:  x[i] = (float)(j % 7) * 1e-45f * (j % 2 ? -1.0f : 1.0f); break;
            case 1:  x[i] = j == 77 ? -1e-38f : 1e-39f; break;
            default: x[i] = j % 2 ? -0.0f : 0.0f; break;
        }
    }
    check_q8_row(x, k, "tiny blocks");
    // NaN and infinities, alone and mixed
    for (int64_t i = 0; i < k; i++) {
        const int b = (int)(i / 32), j = (int)(i % 32);
        x[i] = (float) tt_rand_uniform(&st, -2.0, 2.0);
        switch (b % 6) {
            case 0: if (j == 3)  { x[i] = NAN; } break;
            case 1: if (j == 0)  { x[i] = INFINITY; } break;
            case 2: if (j == 31) { x[i] = -INFINITY; } break;
            case 3: if (j % 7 == 0) { x[i] = -NAN; } break;
            case 4: if (j == 9)  { x[i] = NAN; } if (j == 10) { x[i] = 1e10f; } break;
            default: break;
        }
    }
    check_q8_row(x, k, "NaN and infinities");
    free(x);
}

//
// type traits and their dot products
//

static void test_type_traits(void) {
    for (int t = 0; t < N_WEIGHT_TYPES; t++) {
        const enum ggml_type type = k_weight_types[t];
        const struct ggml_type_traits_cpu * tr = ggml_get_type_traits_cpu(type);
        CHECK_MSG(tr->vec_dot_type == act_type_of(type), "%s: vec_dot_type %s", ggml_type_name(type), ggml_type_name(tr->vec_dot_type));
        CHECK(tr->vec_dot != NULL && tr->from_float != NULL && tr->nrows == 1);
    }
    CHECK(ggml_get_type_traits_cpu(GGML_TYPE_Q8_1)->from_float != NULL);
    {
        // Q8_1 . Q8_1: the sum over the dequantized values, to float rounding
        const struct ggml_type_traits_cpu * q81 = ggml_get_type_traits_cpu(GGML_TYPE_Q8_1);
        CHECK(q81->vec_dot != NULL && q81->vec_dot_type == GGML_TYPE_Q8_1);
        enum { NQ = 32 * 9 };
        float xa[NQ], xb[NQ], da[NQ], db[NQ];
        uint64_t sq = 11;
        for (int i = 0; i < NQ; i++) {
            xa[i] = (float) tt_rand_uniform(&sq, -2.0, 2.0);
            xb[i] = (float) tt_rand_uniform(&sq, -2.0, 2.0);
        }
        uint8_t qa[NQ / 32 * 36], qb[NQ / 32 * 36];
        ggml_get_type_traits(GGML_TYPE_Q8_1)->from_float_ref(xa, qa, NQ);
        ggml_get_type_traits(GGML_TYPE_Q8_1)->from_float_ref(xb, qb, NQ);
        ggml_get_type_traits(GGML_TYPE_Q8_1)->to_float(qa, da, NQ);
        ggml_get_type_traits(GGML_TYPE_Q8_1)->to_float(qb, db, NQ);
        double ref = 0, mag = 0;
        for (int i = 0; i < NQ; i++) {
            ref += (double) da[i] * db[i];
            mag += fabs((double) da[i] * db[i]);
        }
        float got = 0;
        q81->vec_dot(NQ, &got, 0, qa, 0, qb, 0, 1);
        CHECK_NEAR(got, ref, 1e-5 * mag);
    }
    CHECK(ggml_get_type_traits_cpu(GGML_TYPE_Q8_K)->vec_dot == NULL); // an activation format only
    CHECK(ggml_get_type_traits_cpu(GGML_TYPE_Q8_1)->from_float != NULL);

    // from_float of the weight types is their reference quantizer / conversion
    uint64_t st = 5;
    const int64_t k = 32 * 37;
    float * x = (float *) malloc((size_t) k * sizeof(float));
    for (int64_t i = 0; i < k; i++) {
        x[i] = (float) tt_rand_uniform(&st, -3.0, 3.0);
    }
    for (int t = 0; t < N_WEIGHT_TYPES; t++) {
        const enum ggml_type type = k_weight_types[t];
        const size_t bytes = ggml_row_size(type, k);
        uint8_t * a = (uint8_t *) malloc(bytes), * b = (uint8_t *) malloc(bytes);
        ggml_get_type_traits_cpu(type)->from_float(x, a, k);
        if (type == GGML_TYPE_F32) {
            memcpy(b, x, bytes); // F32 has no reference conversion: it is the identity
        } else {
            ggml_get_type_traits(type)->from_float_ref(x, b, k);
        }
        CHECK_MSG(memcmp(a, b, bytes) == 0, "%s: from_float differs from the reference", ggml_type_name(type));
        free(a);
        free(b);
    }

    // vec_dot: a weight row . an activation row, against the double reference
    for (int t = 0; t < N_WEIGHT_TYPES; t++) {
        const enum ggml_type type = k_weight_types[t];
        const enum ggml_type at = act_type_of(type);
        const int64_t lens[] = { 32, 96, 4096, 32 * 37 };
        for (int li = 0; li < 4; li++) {
            const int64_t n = ggml_is_quantized(type) || lens[li] != 32*37 ? lens[li] : 1001;
            struct ggml_context * ctx = ctx_new(2*ggml_row_size(GGML_TYPE_F32, n) + CTX_OVERHEAD);
            struct ggml_tensor * w = ggml_new_tensor_1d(ctx, type, n);
            struct ggml_tensor * y = ggml_new_tensor_1d(ctx, at, n);
            tt_fill_uniform(w, -1.0, 1.0, 41 + li);
            tt_fill_uniform(y, -1.0, 1.0, 42 + li);
            float s = NAN;
            ggml_get_type_traits_cpu(type)->vec_dot((int) n, &s, 0, w->data, 0, y->data, 0, 1);

            double * wr = (double *) malloc((size_t) n * sizeof(double));
            double mins[200] = { 0.0 };
            weight_row(w, 0, 0, 0, wr, mins);
            struct act_row a = act_row_new(n);
            act_row_fill(&a, y, 0, 0, 0, type);
            const struct dot_check dc = dot_reference(type, wr, mins, &a, n);
            CHECK_MSG(fabs(s - dc.ref_a) <= dc.tol_a, "vec_dot %s n=%lld: %.9g, reference %.9g, tol %.3g",
                      ggml_type_name(type), (long long) n, (double) s, dc.ref_a, dc.tol_a);
            act_row_free(&a);
            free(wr);
            ggml_free(ctx);
        }
    }
    free(x);
}

// The row dots of few columns meet several rows and columns per step (the
// weights decoded once for the columns, the activations loaded once for the
// rows); every result must be formed by the same operations whatever the
// step, so a column's products do not depend on the columns computed with it:
// each column of a 5-column product (below the tile kernels' 6; steps of 2 or
// 4 columns, then 1) against the product of that column alone, bit for bit.
// Rows 37 (steps of 2 or 4 rows, then single rows); k 96 (an odd count of
// 32-value blocks), 512 (whole K-quant superblocks) and 4352 (17
// superblocks: the x86 Q4_K / Q5_K steps lay a call's activations out in a
// 16 KiB buffer where they fit, one column's here but not four's, so the
// two ways meet bit for bit).
static void test_mul_mat_columns(void) {
    static const enum ggml_type types[] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16,
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
        GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
        GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4, GGML_TYPE_NVFP4,
        GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M, GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
        GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S, GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0,
        GGML_TYPE_Q1_0, GGML_TYPE_Q2_0,
    };
    const int64_t n = 37, m = 5;
    for (size_t t = 0; t < sizeof(types)/sizeof(types[0]); t++) {
        static const int64_t ks[] = { 96, 512, 4352 };
        for (size_t ik = 0; ik < sizeof(ks)/sizeof(ks[0]); ik++) {
            const int64_t k = ks[ik];
            if (k % ggml_blck_size(types[t]) != 0) {
                continue;
            }
            char what[64];
            snprintf(what, sizeof(what), "%s k=%lld: columns", ggml_type_name(types[t]), (long long) k);
            struct ggml_context * ctx = ctx_new(ggml_row_size(types[t], k) * n + (size_t)(k * m + 2 * n * m) * sizeof(float) +
                                                (m + 2) * CTX_OVERHEAD);
            struct ggml_tensor * w = ggml_new_tensor_2d(ctx, types[t], k, n);
            struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
            tt_fill_uniform(w, -1.0, 1.0, 41);
            tt_fill_uniform(x, -1.0, 1.0, 42);
            float * all = run(ctx, ggml_mul_mat(ctx, w, x), 1, false);   // [n, m]: column j at all + j*n
            for (int64_t j = 0; j < m; j++) {
                struct ggml_tensor * xj = ggml_view_2d(ctx, x, k, 1, x->nb[1], (size_t) j * x->nb[1]);
                float * one = run(ctx, ggml_mul_mat(ctx, w, xj), 1, false);
                CHECK_MSG(memcmp(one, all + j*n, (size_t) n * sizeof(float)) == 0,
                          "%s: column %lld alone differs from it among %lld", what, (long long) j, (long long) m);
                free(one);
            }
            free(all);
            ggml_free(ctx);
        }
    }
}

// The K-quant row dots of x86 pack sums of 4 code-activation products to
// int16 before scaling them (arch/x86/quants-dot-k-avx2.c): weights at their
// extremes (every code at its largest or smallest, scales at +-max, minimums
// at max) against activations at +-max must come out exact, as the double
// reference has them. Rows 9 (two steps of 4 and a row alone), columns 5
// (steps of 4, then 1), k 512; each row another pattern of code bytes and
// scale bytes, each column another sign pattern of the activations.
static void test_mul_mat_extremes(void) {
    static const enum ggml_type types[] = { GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K };
    static const uint8_t codes[]  = { 0xFF, 0x00, 0xF0, 0x0F, 0xFF, 0xAA, 0xFF, 0x55, 0x00 };
    static const uint8_t scales[] = { 0xFF, 0xFF, 0x80, 0x7F, 0x81, 0xFF, 0x7F, 0x80, 0x00 };
    const int64_t k = 512, n = 9, m = 5;
    for (size_t t = 0; t < sizeof(types)/sizeof(types[0]); t++) {
        const enum ggml_type type = types[t];
        char what[64];
        snprintf(what, sizeof(what), "mul_mat %s extremes", ggml_type_name(type));
        struct ggml_context * ctx = ctx_new(ggml_row_size(type, k) * n + (size_t)(k * m + 2 * n * m) * sizeof(float) +
                                            4 * CTX_OVERHEAD);
        struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, k, n);
        struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
        const size_t bs = ggml_type_size(type);
        for (int64_t r = 0; r < n; r++) {
            for (int64_t b = 0; b < k / ggml_blck_size(type); b++) {
                uint8_t * blk = (uint8_t *) w->data + r * w->nb[1] + b * bs;
                memset(blk, codes[r], bs);
                const ggml_fp16_t one = ggml_fp32_to_fp16(1.0f);
                if (type == GGML_TYPE_Q6_K) {
                    // ql, qh, int8 scales, d
                    memset(blk + offsetof(block_q6_K, scales), scales[r], QK_K/16);
                    memcpy(blk + offsetof(block_q6_K, d), &one, sizeof(one));
                } else {
                    // d, dmin, 12 bytes of 6-bit scales and minimums, (qh), qs
                    memcpy(blk, &one, sizeof(one));
                    memcpy(blk + sizeof(one), &one, sizeof(one));
                    memset(blk + 2*sizeof(one), scales[r], K_SCALE_SIZE);
                }
            }
        }
        for (int64_t j = 0; j < m; j++) {
            for (int64_t i = 0; i < k; i++) {
                const float v = j == 0 ? 1.0f : j == 1 ? -1.0f : j == 2 ? (i % 2 ? 1.0f : -1.0f) :
                                j == 3 ? (i % 64 < 32 ? 1.0f : -1.0f) : (i % 3 == 0 ? -1.0f : 1.0f);
                ((float *)((char *) x->data + j * x->nb[1]))[i] = v;
            }
        }
        struct ggml_tensor * out = ggml_mul_mat(ctx, w, x);
        float * vec, * ref;
        run_all(ctx, out, &vec, &ref, what);
        double * wr   = (double *) malloc((size_t)(k * n) * sizeof(double));
        double * mins = (double *) calloc((size_t)(k/32 + 1) * n, sizeof(double));
        struct act_row a = act_row_new(k);
        for (int64_t i = 0; i < n; i++) {
            weight_row(w, i, 0, 0, wr + i*k, mins + i*(k/32 + 1));
        }
        for (int64_t j = 0; j < m; j++) {
            act_row_fill(&a, x, j, 0, 0, type);
            for (int64_t i = 0; i < n; i++) {
                const struct dot_check dc = dot_reference(type, wr + i*k, mins + i*(k/32 + 1), &a, k);
                const float got[2] = { vec[i + n*j], ref[i + n*j] };
                for (int p = 0; p < 2; p++) {
                    CHECK_MSG(fabs(got[p] - dc.ref_a) <= dc.tol_a, "%s: %s path, row %lld column %lld: %.9g, reference %.9g",
                              what, p == 0 ? "vector" : "portable", (long long) i, (long long) j, got[p], dc.ref_a);
                }
            }
        }
        check_buffers_free(&a, wr, mins, vec, ref, ctx);
    }
}

int main(void) {
    pools_init();
    test_type_traits();
    test_quantize_q8();
    test_mul_mat();
    test_mul_mat_id();
    test_mul_mat_columns();
    test_mul_mat_extremes();
    test_out_prod();
    pools_free();
    return TEST_RESULT();
}
