// test-cpu-attention: GGML_OP_FLASH_ATTN_EXT on the CPU backend.
//
// Every case is compared with an unfused reference computed here in double
// precision from the stored input values (F16 and quantized K/V are read back
// as the values they hold): logits scale * q.k, softcap, + slope * mask, the
// softmax (with the head's sink logit in the denominator), times V. Keys with
// a -INF mask take no part; a row with none left (and no sink) must be zeros.
//
// Cases cover F32, F16, BF16 and quantized K/V of every stored type (the
// 32-value formats, the K-quants, IQ, ternary, MXFP4/NVFP4, Q1_0/Q2_0; K and
// V of different types too), no mask / random masks with -INF entries / causal masks / sliding
// windows / a KV cache with room to spare (every key past some extent masked) / every key
// masked / a fully masked row, mask broadcast over heads and dim 3, ALiBi with head counts that
// are and are not powers of two, softcap, sinks, grouped-query heads, ne3 > 1,
// head sizes 40 to 128 (DK != DV too), n_kv from 0 to 1000, n_batch 1 to 32,
// K/V as permuted views into a larger cache, and permuted or transposed q.
// Each case runs with 1, 2 and 3 threads (results must be bit-identical) on
// the vector path and on the scalar path (use_ref). FA_VERBOSE=1 prints each
// case's largest error. K and V rows of keys masked for every query are set
// to NaN in some cases: the results must stay the same bits. A NaN in the
// masked tail of a padded cache poisons its row only.
//
// Also checked: what the backend's supports_op answers (K/V and q types,
// contiguity, mask and V shapes, precisions), and, once the CPU backend has
// those ops, agreement with the same attention built from mul_mat,
// soft_max_ext and mul_mat.
//
// Tolerance. The kernel works in F32 on exactly the stored K/V values (q is
// never rounded to F16: F16 K and V rows are converted to F32, or converted
// on load), so it differs from the reference by F32 roundings only: a logit
// scale * sum_i q_i k_i over DK terms is off by about sqrt(DK) * 2^-24 times
// its terms' size (1e-5 at the very worst for these inputs, typically 1e-7),
// exp and tanh add a few ulp (softcap multiplies tanh's error by the cap),
// and the normalised sum of V rows (|v| <= 1) a few ulp more. An output, a
// convex combination of V rows, is then off by about the logit error. The
// tolerance is 1e-5 absolute plus 2e-7 * softcap: about 50 times the errors
// seen, and far below what a wrong slope, scale, mask row, head or sink would
// cause (1e-3 and more).

#include "cpu-testing.h"
#include "ggml-backend.h"

#include <stdio.h>

enum mask_kind {
    MASK_NONE,
    MASK_RANDOM, // 30% -INF, the rest uniform in [-3, 1)
    MASK_CAUSAL, // query i at position n_kv - n_batch + i sees the keys up to it
    MASK_WINDOW, // causal, and only the last 100 keys (sliding window)
    MASK_CACHE,  // a KV cache with room to spare: causal over the first n_kv/4 + 5 i2 + 11 i3 keys, the rest -INF
    MASK_EMPTY,  // every key -INF
};

enum q_layout {
    Q_CONTIGUOUS, // [DK, n_batch, n_head, ne3]
    Q_PERMUTED,   // stored [DK, n_head, n_batch, ne3] and permuted
    Q_TRANSPOSED, // stored [n_batch, DK, n_head, ne3] and transposed: nb[0] != 4
};

struct fa_case {
    const char * name;
    int64_t DK, DV, n_kv, n_batch, n_head, n_head_kv, ne3;
    int64_t n_head_v;           // V heads when not n_head_kv (0: n_head_kv)
    enum ggml_type tk, tv;
    enum mask_kind mask;
    int64_t mask_ne2, mask_ne3; // 1: broadcast over heads / dim 3
    bool full_masked_row;       // one query row with every key masked
    float scale, max_bias, softcap;
    bool sinks;
    bool kv_view;               // K/V views into a [D, n_head_kv, n_ctx, ne3] cache
    enum q_layout q_layout;
};

struct fa_graph {
    struct ggml_tensor * q, * k, * v, * mask, * sinks, * out;
};

// the ALiBi slope of head h, from the definition (ALiBi paper, as ggml extends it
// to head counts that are not powers of two)
static double ref_alibi_slope(int64_t h, int64_t n_head, double max_bias) {
    if (max_bias <= 0.0) {
        return 1.0;
    }
    int64_t n_log2 = 1;
    while (n_log2 * 2 <= n_head) {
        n_log2 *= 2;
    }
    const double m0 = pow(2.0, -max_bias / (double) n_log2);
    const double m1 = pow(2.0, -max_bias / 2.0 / (double) n_log2);
    return h < n_log2 ? pow(m0, (double)(h + 1)) : pow(m1, (double)(2*(h - n_log2) + 1));
}

static struct ggml_tensor * new_kv(struct ggml_context * ctx, const struct fa_case * c, enum ggml_type type, int64_t D,
                                   int64_t n_heads, uint64_t seed) {
    if (!c->kv_view) {
        struct ggml_tensor * t = ggml_new_tensor_4d(ctx, type, D, c->n_kv, n_heads, c->ne3);
        tt_fill_uniform(t, -1.0, 1.0, seed);
        return t;
    }
    // a cache holding n_kv + 9 tokens of all heads; the view starts at token 5
    const int64_t n_ctx = c->n_kv + 9;
    struct ggml_tensor * cache = ggml_new_tensor_4d(ctx, type, D, n_heads, n_ctx, c->ne3);
    tt_fill_uniform(cache, -1.0, 1.0, seed);
    struct ggml_tensor * view = ggml_view_4d(ctx, cache, D, n_heads, c->n_kv, c->ne3,
                                             cache->nb[1], cache->nb[2], cache->nb[3], 5*cache->nb[2]);
    return ggml_permute(ctx, view, 0, 2, 1, 3);
}

static struct ggml_tensor * new_q(struct ggml_context * ctx, const struct fa_case * c, uint64_t seed) {
    struct ggml_tensor * q;
    switch (c->q_layout) {
        case Q_PERMUTED: {
            struct ggml_tensor * s = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->DK, c->n_head, c->n_batch, c->ne3);
            tt_fill_uniform(s, -1.0, 1.0, seed);
            q = ggml_permute(ctx, s, 0, 2, 1, 3);
        } break;
        case Q_TRANSPOSED: {
            struct ggml_tensor * s = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->n_batch, c->DK, c->n_head, c->ne3);
            tt_fill_uniform(s, -1.0, 1.0, seed);
            q = ggml_transpose(ctx, s);
        } break;
        default:
            q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c->DK, c->n_batch, c->n_head, c->ne3);
            tt_fill_uniform(q, -1.0, 1.0, seed);
            break;
    }
    return q;
}

static void fill_mask(struct ggml_tensor * m, const struct fa_case * c, uint64_t seed) {
    uint64_t state = seed;
    for (int64_t i3 = 0; i3 < m->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < m->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < m->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < m->ne[0]; i0++) {
        float val;
        const int64_t pos = c->n_kv - c->n_batch + i1;
        int64_t used = c->n_kv / 4 + 5*i2 + 11*i3; // MASK_CACHE's keys in use
        if (used > c->n_kv) {
            used = c->n_kv;
        }
        if (c->mask == MASK_CAUSAL) {
            val = i0 <= pos ? 0.0f : -INFINITY;
        } else if (c->mask == MASK_CACHE) {
            val = i0 <= used - c->n_batch + i1 ? 0.0f : -INFINITY;
        } else if (c->mask == MASK_EMPTY) {
            val = -INFINITY;
        } else if (c->mask == MASK_WINDOW) {
            val = i0 <= pos && i0 > pos - 100 ? 0.0f : -INFINITY;
        } else {
            val = tt_rand_uniform(&state, 0.0, 1.0) < 0.3 ? -INFINITY : (float) tt_rand_uniform(&state, -3.0, 1.0);
        }
        if (c->full_masked_row && i1 == c->n_batch / 2) {
            val = -INFINITY;
        }
        ggml_fp16_t * p = (ggml_fp16_t *)((char *) m->data + i0*m->nb[0] + i1*m->nb[1] + i2*m->nb[2] + i3*m->nb[3]);
        *p = ggml_fp32_to_fp16(val);
    }
}

static struct fa_graph build_case(struct ggml_context * ctx, const struct fa_case * c, uint64_t seed) {
    struct fa_graph g = { NULL, NULL, NULL, NULL, NULL, NULL };
    g.q = new_q(ctx, c, seed + 1);
    g.k = new_kv(ctx, c, c->tk, c->DK, c->n_head_kv, seed + 2);
    g.v = new_kv(ctx, c, c->tv, c->DV, c->n_head_v ? c->n_head_v : c->n_head_kv, seed + 3);
    if (c->mask != MASK_NONE) {
        // the batch dimension padded as llama.cpp does; with a KV cache view,
        // the mask covers more cells than the view (only the first n_kv count)
        const int64_t n_batch_pad = (c->n_batch + 7) / 8 * 8;
        const int64_t n_cols = c->kv_view ? c->n_kv + 5 : c->n_kv;
        g.mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, n_cols, n_batch_pad, c->mask_ne2, c->mask_ne3);
        fill_mask(g.mask, c, seed + 4);
    }
    g.out = ggml_flash_attn_ext(ctx, g.q, g.k, g.v, g.mask, c->scale, c->max_bias, c->softcap);
    ggml_flash_attn_ext_set_prec(g.out, GGML_PREC_F32);
    if (c->sinks) {
        g.sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, c->n_head);
        tt_fill_uniform(g.sinks, -2.0, 2.0, seed + 5);
        ggml_set_f32_1d(g.sinks, 0, 6.0f); // a sink that dominates its head
        ggml_flash_attn_ext_add_sinks(g.out, g.sinks);
    }
    return g;
}

// reference output, [n_batch][n_head][DV] per i3, as the result is laid out
static double * reference(const struct fa_case * c, const struct fa_graph * g) {
    const int64_t n_out = c->DV * c->n_head * c->n_batch * c->ne3;
    double * out = (double *) calloc((size_t) n_out, sizeof(double));
    double * logit = (double *) malloc(sizeof(double) * (size_t) c->n_kv);
    bool * used = (bool *) malloc(sizeof(bool) * (size_t) c->n_kv);
    double * qrow = (double *) malloc(sizeof(double) * (size_t) c->DK);
    const int64_t gqa_k = c->n_head / c->n_head_kv;
    const int64_t gqa_v = c->n_head / (c->n_head_v ? c->n_head_v : c->n_head_kv);

    for (int64_t i3 = 0; i3 < c->ne3; i3++)
    for (int64_t i = 0; i < c->n_batch; i++)
    for (int64_t h = 0; h < c->n_head; h++) {
        const double slope = ref_alibi_slope(h, c->n_head, c->max_bias);
        for (int64_t d = 0; d < c->DK; d++) {
            qrow[d] = tt_get(g->q, d, i, h, i3);
        }
        double M = -INFINITY;
        for (int64_t j = 0; j < c->n_kv; j++) {
            double m = 0.0;
            if (g->mask != NULL) {
                m = tt_get(g->mask, j, i, h % c->mask_ne2, i3 % c->mask_ne3);
            }
            used[j] = m != -INFINITY;
            if (!used[j]) {
                continue;
            }
            double s = 0.0;
            for (int64_t d = 0; d < c->DK; d++) {
                s += qrow[d] * tt_get(g->k, d, j, h / gqa_k, i3);
            }
            s *= c->scale;
            if (c->softcap != 0.0f) {
                s = c->softcap * tanh(s / c->softcap);
            }
            logit[j] = s + slope * m;
            M = logit[j] > M ? logit[j] : M;
        }
        const double sink = g->sinks != NULL ? tt_get(g->sinks, h, 0, 0, 0) : -INFINITY;
        M = sink > M ? sink : M;
        if (M == -INFINITY) {
            continue; // nothing to attend to: zeros
        }
        double sum = g->sinks != NULL ? exp(sink - M) : 0.0;
        double * o = out + ((i3*c->n_batch + i)*c->n_head + h)*c->DV;
        for (int64_t j = 0; j < c->n_kv; j++) {
            if (!used[j]) {
                continue;
            }
            const double p = exp(logit[j] - M);
            sum += p;
            for (int64_t d = 0; d < c->DV; d++) {
                o[d] += p * tt_get(g->v, d, j, h / gqa_v, i3);
            }
        }
        for (int64_t d = 0; d < c->DV; d++) {
            o[d] /= sum;
        }
    }
    free(logit);
    free(used);
    free(qrow);
    return out;
}

static double ref_at(int64_t i0, int64_t i1, int64_t i2, int64_t i3, void * user) {
    const struct fa_case * c = ((const struct fa_case **) user)[0];
    const double * ref = ((const double **) user)[1];
    return ref[((i3*c->n_batch + i2)*c->n_head + i1)*c->DV + i0];
}

static void compute(struct ggml_tensor * out, int n_threads, bool use_ref, float * result) {
    struct ggml_init_params ip = { ggml_graph_overhead(), NULL, true };
    struct ggml_context * gctx = ggml_init(ip);
    struct ggml_cgraph * gf = ggml_new_graph(gctx);
    ggml_build_forward_expand(gf, out);
    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, NULL);
    plan.use_ref = use_ref;
    void * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
    plan.work_data = (uint8_t *) work;
    CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
    memcpy(result, out->data, ggml_nbytes(out));
    free(work);
    ggml_free(gctx);
}

static void run_case(const struct fa_case * c, uint64_t seed) {
    struct ggml_context * ctx = tt_ctx_new(64);
    const struct fa_graph g = build_case(ctx, c, seed);
    double * ref = reference(c, &g);
    const void * user[2] = { c, ref };

    const double tol = 1e-5 + 2e-7 * c->softcap;
    const size_t nbytes = ggml_nbytes(g.out);
    float * first  = (float *) malloc(nbytes);
    float * result = (float *) malloc(nbytes);

    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        for (int n_threads = 1; n_threads <= 3; n_threads++) {
            compute(g.out, n_threads, use_ref, n_threads == 1 ? first : result);
            if (n_threads == 1) {
                const double err = tt_max_err(g.out, ref_at, (void *) user, tol, 0.0);
                if (getenv("FA_VERBOSE")) printf("%-36s %s max err %.3g\n", c->name, use_ref ? "scalar" : "vector", err * tol);
                CHECK_MSG(err <= 1.0, "%s (%s path): max error %.3g of tolerance %.1g",
                          c->name, use_ref ? "scalar" : "vector", err * tol, tol);
            } else {
                CHECK_MSG(memcmp(first, result, nbytes) == 0, "%s (%s path): %d threads differ from 1",
                          c->name, use_ref ? "scalar" : "vector", n_threads);
            }
        }
    }

    // a query row with every key masked (and no sink) is zeros, not NaN
    if (c->full_masked_row) {
        const int64_t i = c->n_batch / 2;
        bool zeros = true;
        for (int64_t i3 = 0; i3 < c->ne3; i3++)
        for (int64_t h = 0; h < c->n_head; h++)
        for (int64_t d = 0; d < c->DV; d++) {
            zeros &= tt_get(g.out, d, h, i, i3) == 0.0;
        }
        CHECK_MSG(zeros, "%s: the fully masked row is not zeros", c->name);
    }

    free(first);
    free(result);
    free(ref);
    ggml_free(ctx);
}

static const struct fa_case g_cases[] = {
    { .name = "f16 plain", .DK = 64, .DV = 64, .n_kv = 33, .n_batch = 3, .n_head = 4, .n_head_kv = 4, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f },
    { .name = "f32 gqa d40", .DK = 40, .DV = 40, .n_kv = 7, .n_batch = 1, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.3f },
    { .name = "single key", .DK = 64, .DV = 64, .n_kv = 1, .n_batch = 1, .n_head = 1, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 1.0f },
    { .name = "no keys", .DK = 64, .DV = 64, .n_kv = 0, .n_batch = 3, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 1.0f, .sinks = true },
    { .name = "f16 d128 random mask", .DK = 128, .DV = 128, .n_kv = 256, .n_batch = 32, .n_head = 8, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .full_masked_row = true, .scale = 0.0883883476f },
    { .name = "f32 random mask per head", .DK = 80, .DV = 80, .n_kv = 1000, .n_batch = 3, .n_head = 6, .n_head_kv = 3, .ne3 = 2,
      .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_RANDOM, .mask_ne2 = 6, .mask_ne3 = 2,
      .full_masked_row = true, .scale = 0.11f },
    { .name = "alibi 6 heads", .DK = 80, .DV = 80, .n_kv = 1000, .n_batch = 3, .n_head = 6, .n_head_kv = 3, .ne3 = 2,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM, .mask_ne2 = 3, .mask_ne3 = 1,
      .scale = 0.11f, .max_bias = 8.0f },
    { .name = "alibi 8 heads causal", .DK = 64, .DV = 64, .n_kv = 256, .n_batch = 32, .n_head = 8, .n_head_kv = 8, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f, .max_bias = 8.0f },
    { .name = "alibi 5 heads f32", .DK = 40, .DV = 40, .n_kv = 33, .n_batch = 7, .n_head = 5, .n_head_kv = 5, .ne3 = 1,
      .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.2f, .max_bias = 2.5f },
    { .name = "softcap", .DK = 128, .DV = 128, .n_kv = 256, .n_batch = 7, .n_head = 4, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.5f, .softcap = 3.0f },
    { .name = "softcap f32 alibi", .DK = 64, .DV = 64, .n_kv = 33, .n_batch = 3, .n_head = 3, .n_head_kv = 1, .ne3 = 2,
      .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_RANDOM, .mask_ne2 = 3, .mask_ne3 = 2,
      .scale = 1.0f, .max_bias = 4.0f, .softcap = 50.0f },
    { .name = "sinks causal", .DK = 64, .DV = 64, .n_kv = 33, .n_batch = 32, .n_head = 4, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .full_masked_row = true, .scale = 0.125f, .sinks = true },
    { .name = "sinks no mask f32", .DK = 40, .DV = 40, .n_kv = 7, .n_batch = 3, .n_head = 2, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.2f, .sinks = true },
    { .name = "causal, fewer keys than queries", .DK = 64, .DV = 64, .n_kv = 7, .n_batch = 32, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f },
    { .name = "kv cache views, permuted q", .DK = 64, .DV = 64, .n_kv = 33, .n_batch = 7, .n_head = 4, .n_head_kv = 2, .ne3 = 2,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f, .max_bias = 8.0f, .kv_view = true, .q_layout = Q_PERMUTED },
    { .name = "kv cache views f32, transposed q", .DK = 40, .DV = 80, .n_kv = 256, .n_batch = 3, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.15f, .kv_view = true, .q_layout = Q_TRANSPOSED },
    { .name = "DK != DV", .DK = 128, .DV = 40, .n_kv = 33, .n_batch = 3, .n_head = 2, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F32, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0883883476f },
    { .name = "K and V heads grouped differently", .DK = 64, .DV = 40, .n_kv = 33, .n_batch = 7, .n_head = 4, .n_head_kv = 2,
      .n_head_v = 4, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f },
    { .name = "K and V heads grouped differently, f32", .DK = 40, .DV = 64, .n_kv = 7, .n_batch = 1, .n_head = 4, .n_head_kv = 4,
      .n_head_v = 1, .ne3 = 1, .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.2f },
    { .name = "bf16 k, q8_0 v", .DK = 64, .DV = 64, .n_kv = 33, .n_batch = 3, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_BF16, .tv = GGML_TYPE_Q8_0, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f },
    { .name = "q8_0 k, q4_0 v", .DK = 128, .DV = 64, .n_kv = 256, .n_batch = 7, .n_head = 2, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_Q8_0, .tv = GGML_TYPE_Q4_0, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0883883476f },
    { .name = "q4_1 k, q5_0 v", .DK = 64, .DV = 64, .n_kv = 33, .n_batch = 3, .n_head = 2, .n_head_kv = 1, .ne3 = 2,
      .tk = GGML_TYPE_Q4_1, .tv = GGML_TYPE_Q5_0, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f },
    { .name = "q5_1 k, bf16 v", .DK = 64, .DV = 64, .n_kv = 7, .n_batch = 1, .n_head = 2, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_Q5_1, .tv = GGML_TYPE_BF16, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f, .sinks = true },
    // the other quantized KV cache types (upstream's CPU takes every one)
    { .name = "iq4_nl k and v, cache views", .DK = 64, .DV = 64, .n_kv = 113, .n_batch = 3, .n_head = 4, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_IQ4_NL, .tv = GGML_TYPE_IQ4_NL, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f, .sinks = true, .kv_view = true, .q_layout = Q_PERMUTED },
    { .name = "iq4_nl k and v, one query, d96", .DK = 96, .DV = 96, .n_kv = 600, .n_batch = 1, .n_head = 2, .n_head_kv = 1, .ne3 = 2,
      .tk = GGML_TYPE_IQ4_NL, .tv = GGML_TYPE_IQ4_NL, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.1f, .max_bias = 8.0f },
    { .name = "q4_K k, iq4_xs v", .DK = 256, .DV = 256, .n_kv = 33, .n_batch = 7, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_Q4_K, .tv = GGML_TYPE_IQ4_XS, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0625f },
    { .name = "q2_K k, q3_K v", .DK = 256, .DV = 256, .n_kv = 7, .n_batch = 1, .n_head = 2, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_Q2_K, .tv = GGML_TYPE_Q3_K, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0625f },
    { .name = "q5_K k, q6_K v, kv views", .DK = 256, .DV = 256, .n_kv = 33, .n_batch = 3, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_Q5_K, .tv = GGML_TYPE_Q6_K, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0625f, .kv_view = true },
    { .name = "iq2_xxs k, iq2_xs v", .DK = 256, .DV = 256, .n_kv = 17, .n_batch = 2, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_IQ2_XXS, .tv = GGML_TYPE_IQ2_XS, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0625f },
    { .name = "iq2_s k, iq3_xxs v", .DK = 256, .DV = 256, .n_kv = 17, .n_batch = 2, .n_head = 2, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_IQ2_S, .tv = GGML_TYPE_IQ3_XXS, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0625f, .sinks = true },
    { .name = "iq3_s k, iq1_s v", .DK = 256, .DV = 256, .n_kv = 17, .n_batch = 3, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_IQ3_S, .tv = GGML_TYPE_IQ1_S, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0625f },
    { .name = "iq1_m k, tq1_0 v", .DK = 256, .DV = 256, .n_kv = 9, .n_batch = 1, .n_head = 1, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_IQ1_M, .tv = GGML_TYPE_TQ1_0, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0625f },
    { .name = "tq2_0 k, f16 v", .DK = 256, .DV = 64, .n_kv = 9, .n_batch = 3, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_TQ2_0, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0625f },
    { .name = "mxfp4 k, nvfp4 v", .DK = 64, .DV = 128, .n_kv = 70, .n_batch = 5, .n_head = 4, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_MXFP4, .tv = GGML_TYPE_NVFP4, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f, .kv_view = true },
    { .name = "q1_0 k, q2_0 v", .DK = 128, .DV = 64, .n_kv = 70, .n_batch = 3, .n_head = 2, .n_head_kv = 2, .ne3 = 2,
      .tk = GGML_TYPE_Q1_0, .tv = GGML_TYPE_Q2_0, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0883883476f, .softcap = 3.0f },
    { .name = "q2_0 k, q1_0 v", .DK = 64, .DV = 128, .n_kv = 33, .n_batch = 32, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_Q2_0, .tv = GGML_TYPE_Q1_0, .mask = MASK_RANDOM, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f },
    { .name = "sliding window, mqa, sinks", .DK = 64, .DV = 64, .n_kv = 1000, .n_batch = 3, .n_head = 4, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_WINDOW, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.125f, .sinks = true },
    { .name = "sliding window, one query", .DK = 128, .DV = 128, .n_kv = 1000, .n_batch = 1, .n_head = 2, .n_head_kv = 2, .ne3 = 1,
      .tk = GGML_TYPE_Q8_0, .tv = GGML_TYPE_F16, .mask = MASK_WINDOW, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0883883476f },
    // token generation: every head group of a key chunk in one item (wide)
    { .name = "generation, gqa, kv cache views", .DK = 128, .DV = 128, .n_kv = 1000, .n_batch = 1, .n_head = 16,
      .n_head_kv = 4, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CAUSAL, .mask_ne2 = 1,
      .mask_ne3 = 1, .scale = 0.0883883476f, .kv_view = true },
    { .name = "generation, 2 queries, mha, q8_0 v, alibi", .DK = 64, .DV = 64, .n_kv = 700, .n_batch = 2, .n_head = 8,
      .n_head_kv = 8, .ne3 = 2, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_Q8_0, .mask = MASK_RANDOM, .mask_ne2 = 8,
      .mask_ne3 = 2, .full_masked_row = true, .scale = 0.125f, .max_bias = 8.0f },
    { .name = "generation f32, 3 heads a group, window, sinks, softcap", .DK = 80, .DV = 80, .n_kv = 300, .n_batch = 1,
      .n_head = 6, .n_head_kv = 2, .ne3 = 1, .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_WINDOW,
      .mask_ne2 = 1, .mask_ne3 = 1, .scale = 0.11f, .softcap = 20.0f, .sinks = true, .kv_view = true },
    { .name = "generation, 8 heads a group (rows converted)", .DK = 64, .DV = 64, .n_kv = 513, .n_batch = 1,
      .n_head = 16, .n_head_kv = 2, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM,
      .mask_ne2 = 1, .mask_ne3 = 1, .scale = 0.125f, .q_layout = Q_PERMUTED },
    { .name = "generation, K and V heads grouped differently", .DK = 64, .DV = 80, .n_kv = 700, .n_batch = 1, .n_head = 8,
      .n_head_kv = 4, .n_head_v = 2, .ne3 = 2, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM,
      .mask_ne2 = 1, .mask_ne3 = 2, .scale = 0.125f, .kv_view = false },
    // a KV cache with room to spare (llama.cpp pads the keys to 256): the keys
    // are split among the threads over the live ones only
    { .name = "generation, cache with room", .DK = 128, .DV = 128, .n_kv = 256, .n_batch = 1, .n_head = 16,
      .n_head_kv = 4, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CACHE, .mask_ne2 = 1,
      .mask_ne3 = 1, .scale = 0.0883883476f, .kv_view = true },
    { .name = "generation, cache with room, extent per head and dim 3, sinks", .DK = 64, .DV = 64, .n_kv = 700,
      .n_batch = 2, .n_head = 8, .n_head_kv = 8, .ne3 = 2, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_Q8_0,
      .mask = MASK_CACHE, .mask_ne2 = 8, .mask_ne3 = 2, .scale = 0.125f, .sinks = true },
    { .name = "generation, cache with room, f32, one query masked", .DK = 80, .DV = 80, .n_kv = 1000, .n_batch = 3,
      .n_head = 6, .n_head_kv = 2, .ne3 = 1, .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_CACHE,
      .mask_ne2 = 1, .mask_ne3 = 1, .full_masked_row = true, .scale = 0.11f, .softcap = 20.0f },
    { .name = "generation, empty cache", .DK = 128, .DV = 128, .n_kv = 256, .n_batch = 1, .n_head = 16,
      .n_head_kv = 4, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_EMPTY, .mask_ne2 = 1,
      .mask_ne3 = 1, .full_masked_row = true, .scale = 0.0883883476f },
    { .name = "generation, empty cache, sinks", .DK = 64, .DV = 64, .n_kv = 300, .n_batch = 1, .n_head = 4,
      .n_head_kv = 2, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_EMPTY, .mask_ne2 = 1,
      .mask_ne3 = 1, .scale = 0.125f, .sinks = true },
    // head sizes with a partial vector at the end (the logits' and the weighted sums' tails; rows of 4 at once)
    { .name = "generation, gqa, head size 52", .DK = 52, .DV = 52, .n_kv = 300, .n_batch = 1, .n_head = 8,
      .n_head_kv = 2, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CAUSAL, .mask_ne2 = 1,
      .mask_ne3 = 1, .scale = 0.14f, .kv_view = true },
    { .name = "f32 prompt, DK 36, DV 44", .DK = 36, .DV = 44, .n_kv = 130, .n_batch = 7, .n_head = 4, .n_head_kv = 1,
      .ne3 = 1, .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.17f },
    { .name = "long f16 prompt", .DK = 128, .DV = 128, .n_kv = 1000, .n_batch = 32, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
      .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CAUSAL, .mask_ne2 = 1, .mask_ne3 = 1,
      .scale = 0.0883883476f },
};

// The same attention from separate ops, as llama.cpp builds it without
// flash attention: mul_mat(k, q), softcap (scale, tanh, scale), soft_max_ext
// with mask, ALiBi and sinks, mul_mat(v^T, p), permute. Those kernels round q
// (and the probabilities) to F16 when K (V) is F16, so the tolerance is that
// of F16: 2e-3 absolute on outputs of size <= 1. Skipped (and said so) while
// the CPU backend lacks any of the ops.
static void test_unfused(const struct fa_case * c, uint64_t seed) {
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    struct ggml_context * ctx = tt_ctx_new(64);
    const struct fa_graph g = build_case(ctx, c, seed);

    struct ggml_tensor * kq = ggml_mul_mat(ctx, g.k, g.q);
    float scale = c->scale;
    if (c->softcap != 0.0f) {
        kq = ggml_scale(ctx, ggml_tanh(ctx, ggml_scale(ctx, kq, c->scale / c->softcap)), c->softcap);
        scale = 1.0f;
    }
    struct ggml_tensor * mask = g.mask;
    if (mask != NULL && mask->ne[0] != c->n_kv) {
        // soft_max_ext takes a mask exactly as wide as the rows
        mask = ggml_cont(ctx, ggml_view_4d(ctx, mask, c->n_kv, mask->ne[1], mask->ne[2], mask->ne[3],
                                           mask->nb[1], mask->nb[2], mask->nb[3], 0));
    }
    kq = ggml_soft_max_ext(ctx, kq, mask, scale, c->max_bias);
    if (g.sinks != NULL) {
        ggml_soft_max_add_sinks(kq, g.sinks);
    }
    struct ggml_tensor * vt  = ggml_cont(ctx, ggml_transpose(ctx, g.v));
    struct ggml_tensor * kqv = ggml_mul_mat(ctx, vt, kq);
    struct ggml_tensor * out = ggml_cont(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3));

    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    ggml_build_forward_expand(gf, g.out);
    for (int i = 0; i < ggml_graph_n_nodes(gf); i++) {
        struct ggml_tensor * node = ggml_graph_node(gf, i);
        if (!ggml_backend_dev_supports_op(dev, node)) {
            printf("unfused comparison skipped: the CPU backend does not compute %s yet\n", ggml_op_desc(node));
            ggml_free(ctx);
            return;
        }
    }
    CHECK(ggml_graph_compute_with_ctx(ctx, gf, 2) == GGML_STATUS_SUCCESS);

    double worst = 0.0;
    for (int64_t i3 = 0; i3 < out->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < out->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < out->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < out->ne[0]; i0++) {
        const double e = fabs(tt_get(out, i0, i1, i2, i3) - tt_get(g.out, i0, i1, i2, i3));
        worst = e > worst || isnan(e) ? e : worst;
    }
    CHECK_MSG(worst <= 2e-3, "%s: fused and unfused differ by %.3g", c->name, worst);
    ggml_free(ctx);
}

// Two attention nodes in one graph (the second reading the first's output as
// its q), computed with 1, 2 and 3 threads: each node must do all its work
// whatever the previous node did with the shared work counter, and the chunked
// path (few tiles, many keys) synchronises its threads inside the node.
static void test_two_nodes(void) {
    const struct fa_case c = {
        .name = "two nodes", .DK = 64, .DV = 64, .n_kv = 600, .n_batch = 2, .n_head = 2, .n_head_kv = 1, .ne3 = 1,
        .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_NONE, .mask_ne2 = 1, .mask_ne3 = 1, .scale = 0.125f,
    };
    struct ggml_context * ctx = tt_ctx_new(16);
    const struct fa_graph g = build_case(ctx, &c, 77);
    // out [DV, n_head, n_batch] permuted back to a q of [DK, n_batch, n_head]
    struct ggml_tensor * q2   = ggml_permute(ctx, g.out, 0, 2, 1, 3);
    struct ggml_tensor * out2 = ggml_flash_attn_ext(ctx, q2, g.k, g.v, NULL, c.scale, 0.0f, 0.0f);
    ggml_flash_attn_ext_set_prec(out2, GGML_PREC_F32);

    // the second node's reference, from the first node's reference output
    double * ref1 = reference(&c, &g);
    for (int n_threads = 1; n_threads <= 3; n_threads++) {
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, out2);
        CHECK(ggml_graph_compute_with_ctx(ctx, gf, n_threads) == GGML_STATUS_SUCCESS);
        double worst1 = 0.0, worst2 = 0.0;
        for (int64_t i = 0; i < c.n_batch; i++)
        for (int64_t h = 0; h < c.n_head; h++) {
            for (int64_t d = 0; d < c.DV; d++) {
                const double e = fabs(tt_get(g.out, d, h, i, 0) - ref1[(i*c.n_head + h)*c.DV + d]);
                worst1 = e > worst1 || isnan(e) ? e : worst1;
            }
            // softmax(scale * q2 . k) v with q2 the node 1 output row (i, h)
            double logit[600], M = -INFINITY, sum = 0.0;
            for (int64_t j = 0; j < c.n_kv; j++) {
                double s = 0.0;
                for (int64_t d = 0; d < c.DK; d++) {
                    s += ref1[(i*c.n_head + h)*c.DV + d] * tt_get(g.k, d, j, 0, 0);
                }
                logit[j] = c.scale * s;
                M = logit[j] > M ? logit[j] : M;
            }
            for (int64_t j = 0; j < c.n_kv; j++) {
                sum += exp(logit[j] - M);
            }
            for (int64_t d = 0; d < c.DV; d++) {
                double o = 0.0;
                for (int64_t j = 0; j < c.n_kv; j++) {
                    o += exp(logit[j] - M) * tt_get(g.v, d, j, 0, 0);
                }
                const double e = fabs(tt_get(out2, d, h, i, 0) - o / sum);
                worst2 = e > worst2 || isnan(e) ? e : worst2;
            }
        }
        CHECK_MSG(worst1 <= 1e-5 && worst2 <= 1e-5, "two nodes, %d threads: errors %.3g and %.3g", n_threads, worst1, worst2);
    }
    free(ref1);
    ggml_free(ctx);
}

// what the backend reports it can compute
static void test_supports(void) {
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0);
    struct ggml_context * ctx = tt_ctx_new(8);

    struct ggml_tensor * q  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 64, 3, 4, 1);
    struct ggml_tensor * k  = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 8, 2, 1);
    struct ggml_tensor * v  = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 8, 2, 1);
    struct ggml_tensor * m  = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 8, 1, 1);

    struct ggml_tensor * ok = ggml_flash_attn_ext(ctx, q, k, v, m, 0.125f, 0.0f, 0.0f);
    CHECK(ggml_backend_dev_supports_op(dev, ok));

    // K/V types: everything with a conversion to F32 except the activation formats q8_1 and q8_K
    const enum ggml_type kv_ok[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
                                     GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0 };
    for (size_t i = 0; i < sizeof(kv_ok) / sizeof(kv_ok[0]); i++) {
        struct ggml_tensor * kt = ggml_new_tensor_4d(ctx, kv_ok[i], 64, 8, 2, 1);
        CHECK_MSG(ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q, kt, v, m, 1.0f, 0.0f, 0.0f)), "K %s", ggml_type_name(kv_ok[i]));
        CHECK_MSG(ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q, k, kt, m, 1.0f, 0.0f, 0.0f)), "V %s", ggml_type_name(kv_ok[i]));
    }
    const enum ggml_type kv_bad[] = { GGML_TYPE_Q8_1, GGML_TYPE_I32, GGML_TYPE_I8 };
    for (size_t i = 0; i < sizeof(kv_bad) / sizeof(kv_bad[0]); i++) {
        struct ggml_tensor * kt = ggml_new_tensor_4d(ctx, kv_bad[i], 64, 8, 2, 1);
        CHECK_MSG(!ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q, kt, v, m, 1.0f, 0.0f, 0.0f)), "K %s", ggml_type_name(kv_bad[i]));
        CHECK_MSG(!ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q, k, kt, m, 1.0f, 0.0f, 0.0f)), "V %s", ggml_type_name(kv_bad[i]));
    }

    // every other stored quantized type too (a quantized KV cache): rows of 256 values
    struct ggml_tensor * q256 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 256, 3, 4, 1);
    struct ggml_tensor * k256 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 256, 8, 2, 1);
    struct ggml_tensor * v256 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 256, 8, 2, 1);
    const enum ggml_type kv_quant[] = { GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K,
                                        GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S,
                                        GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S, GGML_TYPE_IQ1_S, GGML_TYPE_IQ1_M, GGML_TYPE_TQ1_0,
                                        GGML_TYPE_TQ2_0, GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0 };
    for (size_t i = 0; i < sizeof(kv_quant) / sizeof(kv_quant[0]); i++) {
        struct ggml_tensor * kt = ggml_new_tensor_4d(ctx, kv_quant[i], 256, 8, 2, 1);
        CHECK_MSG(ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q256, kt, v256, m, 1.0f, 0.0f, 0.0f)), "K %s", ggml_type_name(kv_quant[i]));
        CHECK_MSG(ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q256, k256, kt, m, 1.0f, 0.0f, 0.0f)), "V %s", ggml_type_name(kv_quant[i]));
    }
    struct ggml_tensor * k8k = ggml_new_tensor_4d(ctx, GGML_TYPE_Q8_K, 256, 8, 2, 1);
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q256, k8k, v256, m, 1.0f, 0.0f, 0.0f)));
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q256, k256, k8k, m, 1.0f, 0.0f, 0.0f)));

    // q must be F32
    struct ggml_tensor * q16 = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 3, 4, 1);
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q16, k, v, m, 1.0f, 0.0f, 0.0f)));

    // K rows must be contiguous (a transposed K is not taken)
    struct ggml_tensor * kt_store = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 64, 2, 1);
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q, ggml_transpose(ctx, kt_store), v, m, 1.0f, 0.0f, 0.0f)));

    // a mask with fewer rows than queries, or fewer columns than keys
    struct ggml_tensor * m_short = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 2, 1, 1);
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q, k, v, m_short, 1.0f, 0.0f, 0.0f)));
    struct ggml_tensor * m_narrow = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 7, 8, 1, 1);
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q, k, v, m_narrow, 1.0f, 0.0f, 0.0f)));

    // V with fewer rows than K
    struct ggml_tensor * v_short = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 64, 7, 2, 1);
    CHECK(!ggml_backend_dev_supports_op(dev, ggml_flash_attn_ext(ctx, q, k, v_short, m, 1.0f, 0.0f, 0.0f)));

    // precisions: default and F32 only
    struct ggml_tensor * p = ggml_flash_attn_ext(ctx, q, k, v, m, 1.0f, 0.0f, 0.0f);
    ggml_flash_attn_ext_set_prec(p, GGML_PREC_F32);
    CHECK(ggml_backend_dev_supports_op(dev, p));
    ggml_flash_attn_ext_set_prec(p, (enum ggml_prec) 3);
    CHECK(!ggml_backend_dev_supports_op(dev, p));

    ggml_free(ctx);
}

// Keys masked (-INF) for every query row take no part: their K and V rows
// are never used, whatever they hold (a KV cache's cells not yet written).
// Those rows are set to NaN (F16 and F32 values, Q8_0 block scales) and the
// result must be the same bits as with the rows as they were, on the wide
// path of token generation (F16 rows read in place, converted, F32, Q8_0)
// and on tiles of one head group.
static void poison_row(struct ggml_tensor * t, int64_t j, int64_t h, int64_t i3) {
    char * row = (char *) t->data + j*t->nb[1] + h*t->nb[2] + i3*t->nb[3];
    const uint16_t nan16 = 0x7E00;
    switch (t->type) {
        case GGML_TYPE_F32:
            for (int64_t d = 0; d < t->ne[0]; d++) {
                ((float *) row)[d] = NAN;
            }
            break;
        case GGML_TYPE_F16:
            for (int64_t d = 0; d < t->ne[0]; d++) {
                memcpy(row + d*sizeof(uint16_t), &nan16, sizeof(nan16));
            }
            break;
        case GGML_TYPE_Q8_0:
            for (int64_t b = 0; b < t->ne[0] / 32; b++) {
                memcpy(row + b*ggml_type_size(GGML_TYPE_Q8_0), &nan16, sizeof(nan16)); // the block's scale d
            }
            break;
        default:
            GGML_ABORT("poison_row: type %s", ggml_type_name(t->type));
    }
}

static void test_masked_rows_unused(void) {
    const struct fa_case cases[] = {
        { .name = "generation, f16 in place, cache", .DK = 128, .DV = 128, .n_kv = 700, .n_batch = 1, .n_head = 16,
          .n_head_kv = 4, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM, .mask_ne2 = 1,
          .mask_ne3 = 1, .scale = 0.0883883476f, .kv_view = true },
        { .name = "generation, f16 converted", .DK = 64, .DV = 64, .n_kv = 513, .n_batch = 1, .n_head = 16,
          .n_head_kv = 2, .ne3 = 2, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM, .mask_ne2 = 1,
          .mask_ne3 = 2, .scale = 0.125f },
        { .name = "generation, q8_0, 2 queries", .DK = 64, .DV = 64, .n_kv = 600, .n_batch = 2, .n_head = 8,
          .n_head_kv = 4, .ne3 = 1, .tk = GGML_TYPE_Q8_0, .tv = GGML_TYPE_Q8_0, .mask = MASK_RANDOM, .mask_ne2 = 1,
          .mask_ne3 = 1, .scale = 0.125f, .kv_view = true },
        { .name = "one head group, f32", .DK = 40, .DV = 40, .n_kv = 100, .n_batch = 1, .n_head = 2,
          .n_head_kv = 2, .ne3 = 1, .tk = GGML_TYPE_F32, .tv = GGML_TYPE_F32, .mask = MASK_RANDOM, .mask_ne2 = 1,
          .mask_ne3 = 1, .scale = 0.2f },
        { .name = "generation, cache with room", .DK = 128, .DV = 128, .n_kv = 256, .n_batch = 1, .n_head = 16,
          .n_head_kv = 4, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CACHE, .mask_ne2 = 1,
          .mask_ne3 = 1, .scale = 0.0883883476f, .kv_view = true },
        { .name = "prompt tile, f16", .DK = 64, .DV = 64, .n_kv = 300, .n_batch = 3, .n_head = 8,
          .n_head_kv = 2, .ne3 = 1, .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_RANDOM, .mask_ne2 = 1,
          .mask_ne3 = 1, .scale = 0.125f },
    };
    for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        const struct fa_case * c = &cases[ci];
        struct ggml_context * ctx = tt_ctx_new(64);
        const struct fa_graph g = build_case(ctx, c, 900 + ci);
        const size_t nbytes = ggml_nbytes(g.out);
        float * clean  = (float *) malloc(nbytes);
        float * result = (float *) malloc(nbytes);
        float * clean_ref = (float *) malloc(nbytes);
        compute(g.out, 1, false, clean);
        compute(g.out, 1, true, clean_ref);

        int64_t n_poisoned = 0;
        for (int64_t j = 0; j < c->n_kv; j++) {
            bool masked = true;
            for (int64_t i3 = 0; i3 < c->ne3; i3++) {
                for (int64_t i1 = 0; i1 < c->n_batch; i1++) {
                    const ggml_fp16_t * m = (const ggml_fp16_t *)((const char *) g.mask->data + j*g.mask->nb[0] +
                                                                  i1*g.mask->nb[1] + (i3 % c->mask_ne3)*g.mask->nb[3]);
                    masked &= ggml_fp16_to_fp32(*m) == -INFINITY;
                }
            }
            if (!masked) {
                continue;
            }
            n_poisoned++;
            for (int64_t i3 = 0; i3 < c->ne3; i3++) {
                for (int64_t h = 0; h < g.k->ne[2]; h++) {
                    poison_row(g.k, j, h, i3);
                }
                for (int64_t h = 0; h < g.v->ne[2]; h++) {
                    poison_row(g.v, j, h, i3);
                }
            }
        }
        CHECK_MSG(n_poisoned > 0, "%s: no key masked for every row", c->name);
        for (int n_threads = 1; n_threads <= 2; n_threads++) {
            compute(g.out, n_threads, false, result);
            CHECK_MSG(memcmp(clean, result, nbytes) == 0, "%s (vector path, %d threads): NaN rows of masked keys "
                      "changed the result", c->name, n_threads);
            compute(g.out, n_threads, true, result);
            CHECK_MSG(memcmp(clean_ref, result, nbytes) == 0, "%s (scalar path, %d threads): NaN rows of masked "
                      "keys changed the result", c->name, n_threads);
        }
        free(clean);
        free(clean_ref);
        free(result);
        ggml_free(ctx);
    }
}

// A NaN in the mask past the keys the other rows use (in a padded cache's
// masked tail) is live: it poisons its query row (every head: the mask is
// broadcast over them) and leaves the other row's results as they were (up to
// F32 rounding: the chunks of keys follow the live extent), with 1 and 2
// threads, on both paths.
static void test_mask_nan_past_live(void) {
    const struct fa_case c = { .name = "generation, cache with room, NaN in the tail", .DK = 128, .DV = 128,
                               .n_kv = 256, .n_batch = 2, .n_head = 16, .n_head_kv = 4, .ne3 = 1,
                               .tk = GGML_TYPE_F16, .tv = GGML_TYPE_F16, .mask = MASK_CACHE, .mask_ne2 = 1,
                               .mask_ne3 = 1, .scale = 0.0883883476f, .kv_view = true };
    struct ggml_context * ctx = tt_ctx_new(64);
    const struct fa_graph g = build_case(ctx, &c, 1234);
    const size_t nbytes = ggml_nbytes(g.out);
    float * clean  = (float *) malloc(nbytes);
    float * result = (float *) malloc(nbytes);
    const int64_t j = 200; // past every row's live keys (n_kv / 4 of them)
    ggml_fp16_t * m = (ggml_fp16_t *)((char *) g.mask->data + j*g.mask->nb[0]);
    CHECK(ggml_fp16_to_fp32(*m) == -INFINITY);
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        *m = ggml_fp32_to_fp16(-INFINITY);
        compute(g.out, 1, use_ref, clean);
        *m = ggml_fp32_to_fp16(NAN);
        for (int n_threads = 1; n_threads <= 2; n_threads++) {
            compute(g.out, n_threads, use_ref, result);
            bool row0_nan = true, row1_same = true;
            for (int64_t h = 0; h < c.n_head; h++) {
                for (int64_t d = 0; d < c.DV; d++) {
                    row0_nan &= isnan(tt_get(g.out, d, h, 0, 0));
                    const size_t at = (size_t)((d*g.out->nb[0] + h*g.out->nb[1] + 1*g.out->nb[2]) / sizeof(float));
                    // within F32 rounding: the NaN widens the live extent, and with it the key chunks
                    row1_same &= fabs((double) clean[at] - (double) result[at]) <= 1e-6;
                }
            }
            CHECK_MSG(row0_nan, "%s (%s path, %d threads): the row with the NaN is not all NaN", c.name,
                      use_ref ? "scalar" : "vector", n_threads);
            CHECK_MSG(row1_same, "%s (%s path, %d threads): the other row changed", c.name,
                      use_ref ? "scalar" : "vector", n_threads);
        }
    }
    free(clean);
    free(result);
    ggml_free(ctx);
}

int main(void) {
    test_supports();
    test_mask_nan_past_live();
    test_two_nodes();
    test_masked_rows_unused();
    for (size_t i = 0; i < sizeof(g_cases) / sizeof(g_cases[0]); i++) {
        run_case(&g_cases[i], 1000 + 17*i);
    }
    // F32/F16 cases with keys and without fully masked rows (the unfused
    // softmax of such a row is not defined, and quantized V cannot be
    // transposed)
    for (size_t i = 0; i < sizeof(g_cases) / sizeof(g_cases[0]); i++) {
        const struct fa_case * c = &g_cases[i];
        const bool plain_types = (c->tk == GGML_TYPE_F32 || c->tk == GGML_TYPE_F16) &&
                                 (c->tv == GGML_TYPE_F32 || c->tv == GGML_TYPE_F16);
        if (plain_types && c->n_kv > 0 && !c->full_masked_row && c->mask != MASK_EMPTY && !((c->mask == MASK_CAUSAL || c->mask == MASK_WINDOW) && c->n_kv < c->n_batch)) {
            test_unfused(c, 5000 + 31*i);
        }
    }
    return TEST_RESULT();
}
