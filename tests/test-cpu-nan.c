// test-cpu-nan: a NaN among a row's inputs gives NaN in that row's output, for
// SOFT_MAX and FLASH_ATTN_EXT on the CPU backend, and only a row masked
// entirely to -inf gives zeros (issue 10, defect 4: a row that was all NaN, or
// whose mask row was all NaN, came out as zeros).
//
// Every case runs with 1, 2 and 3 threads on the vector path and the scalar
// path (use_ref). The expected output of each row is worked out here in double
// precision with the rule written out: a NaN row if any input the row uses is
// NaN (x or q, the mask row, the K rows of keys not masked, the sink; a NaN
// in the V row of a key not masked gives NaN in its own column), zeros if no
// key is left and there is no sink, the softmax otherwise. NaN must be where
// the reference has NaN, the other values must match it closely.
//
// Attention is also built unfused (mul_mat, soft_max_ext, mul_mat) on inputs
// whose NaNs are in q and the mask only (unfused, a NaN in the K or V row of a
// masked key reaches the output through 0 * NaN: a documented difference), and
// in the decode shape (one query row, 1024 keys) where the keys are cut into
// chunks computed apart and combined.

#include "cpu-testing.h"

#include <stdio.h>

static bool row_has_nan_f(const float * v, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (isnan(v[i])) {
            return true;
        }
    }
    return false;
}

static void compute(struct ggml_tensor * out, int n_threads, bool use_ref) {
    struct ggml_init_params ip = { ggml_graph_overhead(), NULL, true };
    struct ggml_context * gctx = ggml_init(ip);
    struct ggml_cgraph * gf = ggml_new_graph(gctx);
    ggml_build_forward_expand(gf, out);
    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, NULL);
    plan.use_ref = use_ref;
    void * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
    plan.work_data = (uint8_t *) work;
    CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
    free(work);
    ggml_free(gctx);
}

// out rows of n values (row r at r*stride floats) against ref: NaN where ref
// is NaN, within tol elsewhere
static void check_rows(const char * what, const float * out, int64_t stride, const double * ref, int64_t n_rows, int64_t n,
                       double tol) {
    for (int64_t r = 0; r < n_rows; r++) {
        const float  * o = out + r*stride;
        const double * e = ref + r*n;
        int64_t n_wrong = 0, first = -1;
        for (int64_t i = 0; i < n; i++) {
            const bool ok = isnan(e[i]) ? isnan(o[i]) : fabs((double) o[i] - e[i]) <= tol;
            if (!ok && n_wrong++ == 0) {
                first = i;
            }
        }
        CHECK_MSG(n_wrong == 0, "%s: row %lld: %lld of %lld values wrong, the first [%lld] %g, want %g",
                  what, (long long) r, (long long) n_wrong, (long long) n, (long long) first,
                  first >= 0 ? (double) o[first] : 0.0, first >= 0 ? e[first] : 0.0);
    }
}

//
// SOFT_MAX
//

// rows of x and of the mask, chosen to hit each case
enum { SM_ROWS = 10 };

static void softmax_fill(float * x, float * m, int64_t n, int64_t head) {
    uint64_t st = 77 + (uint64_t) head;
    for (int64_t r = 0; r < SM_ROWS; r++) {
        for (int64_t i = 0; i < n; i++) {
            x[r*n + i] = (float) tt_rand_uniform(&st, -3.0, 3.0);
            m[r*n + i] = (float) tt_rand_uniform(&st, -1.0, 0.0);
        }
    }
    const int64_t j = n / 2;
    for (int64_t i = 0; i < n; i++) {
        x[1*n + i] = NAN;                  // row 1: x all NaN
        m[3*n + i] = NAN;                  // row 3: mask all NaN
        m[4*n + i] = -INFINITY;            // row 4: mask all -inf: zeros
        m[5*n + i] = -INFINITY;            // row 5: mask -inf but one NaN
        m[6*n + i] = -INFINITY;            // row 6: x NaN under a -inf mask
        x[6*n + i] = NAN;
        m[8*n + i] = i == n - 1 ? 0.0f : -INFINITY; // row 8: one key left, in the vector tail
    }
    x[2*n + j] = NAN;                      // row 2: one NaN in x
    m[5*n + j] = NAN;
    x[7*n + n - 1] = NAN;                  // row 7: NaN in the last (tail) element
    x[8*n + 0] = NAN;                      // row 8: NaN under the -inf mask still poisons (NaN + -inf)
    x[9*n + 0] = -INFINITY;                // row 9: -inf logits among finite ones: fine
}

static double alibi_slope(double max_bias, int64_t n_head, int64_t h) {
    if (max_bias <= 0.0) {
        return 1.0;
    }
    const double n = pow(2.0, floor(log2((double) n_head)));
    return h < n ? pow(pow(2.0, -max_bias / n), (double)(h + 1)) : pow(pow(2.0, -max_bias / 2.0 / n), (double)(2*(h - n) + 1));
}

// the expected softmax of one row
static void softmax_ref_row(const float * x, const float * m, int64_t n, double scale, double slope, const float * sink, double * out) {
    bool nan = sink != NULL && isnan(*sink);
    double max = sink != NULL ? (double) *sink : -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        out[i] = (double) x[i] * scale + (m != NULL ? slope * (double) m[i] : 0.0);
        nan |= isnan(out[i]);
        max = out[i] > max ? out[i] : max;
    }
    if (nan || max == -INFINITY) {
        for (int64_t i = 0; i < n; i++) {
            out[i] = nan ? NAN : 0.0;
        }
        return;
    }
    double sum = sink != NULL ? exp((double) *sink - max) : 0.0;
    for (int64_t i = 0; i < n; i++) {
        out[i] = exp(out[i] - max);
        sum += out[i];
    }
    for (int64_t i = 0; i < n; i++) {
        out[i] /= sum;
    }
}

static void test_softmax(int64_t n, enum ggml_type mask_type, bool with_sinks, float max_bias) {
    const int64_t n_head = 3;
    const float scale = 0.7f;
    struct ggml_context * ctx = tt_ctx_new(16);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n, SM_ROWS, n_head);
    struct ggml_tensor * m = ggml_new_tensor_2d(ctx, mask_type, n, SM_ROWS);
    struct ggml_tensor * s = with_sinks ? ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n_head) : NULL;
    float * mv = (float *) malloc((size_t)(n * SM_ROWS) * sizeof(float));
    float * xv = (float *) x->data;
    for (int64_t h = 0; h < n_head; h++) {
        softmax_fill(xv + h*n*SM_ROWS, mv, n, h);
    }
    if (mask_type == GGML_TYPE_F16) {
        ggml_fp32_to_fp16_row(mv, (ggml_fp16_t *) m->data, n * SM_ROWS);
        ggml_fp16_to_fp32_row((const ggml_fp16_t *) m->data, mv, n * SM_ROWS); // the values the kernel sees
    } else {
        memcpy(m->data, mv, (size_t)(n * SM_ROWS) * sizeof(float));
    }
    if (s != NULL) {
        float * sv = (float *) s->data;
        sv[0] = 0.5f;
        sv[1] = NAN; // every row of head 1 NaN
        sv[2] = -INFINITY;
    }
    struct ggml_tensor * y = ggml_soft_max_ext(ctx, x, m, scale, max_bias);
    if (s != NULL) {
        ggml_soft_max_add_sinks(y, s);
    }

    double * ref = (double *) malloc((size_t)(n * SM_ROWS * n_head) * sizeof(double));
    for (int64_t h = 0; h < n_head; h++) {
        for (int64_t r = 0; r < SM_ROWS; r++) {
            softmax_ref_row(xv + (h*SM_ROWS + r)*n, mv + r*n, n, scale, alibi_slope(max_bias, n_head, h),
                            s != NULL ? (const float *) s->data + h : NULL, ref + (h*SM_ROWS + r)*n);
        }
    }
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        for (int nt = 1; nt <= 3; nt++) {
            memset(y->data, 0x5a, ggml_nbytes(y));
            compute(y, nt, use_ref);
            char what[128];
            snprintf(what, sizeof(what), "soft_max n=%lld mask %s%s max_bias %g, %s, %d threads", (long long) n,
                     ggml_type_name(mask_type), with_sinks ? " sinks" : "", (double) max_bias, use_ref ? "scalar" : "vector", nt);
            check_rows(what, (const float *) y->data, n, ref, SM_ROWS * n_head, n, 1e-6);
        }
    }
    free(ref);
    free(mv);
    ggml_free(ctx);
}

//
// FLASH_ATTN_EXT
//

// what each query row holds
enum fa_row_kind {
    FA_PLAIN, FA_Q_NAN, FA_MASK_ALL_NAN, FA_MASK_ALL_INF, FA_MASK_INF_ONE_NAN, FA_K_NAN_KEY, FA_V_NAN_KEY, FA_MASK_ONE_NAN,
    FA_KINDS
};

struct fa_inputs {
    int64_t DK, DV, n_kv, n_batch, n_head, n_head_kv;
    float scale, max_bias;
    bool sinks;
    int kind0; // query row i is of kind (i + kind0) % FA_KINDS
};


struct fa_graph {
    struct ggml_tensor * q, * k, * v, * m, * s;
};

// k_bad, v_bad: keys whose K or V row is NaN, masked in every row but the one of their kind
static void fa_fill(const struct fa_inputs * in, struct fa_graph * g, bool nan_kv) {
    uint64_t st = 4242;
    const int64_t k_bad = in->n_kv / 3, v_bad = in->n_kv / 2;
    float * q = (float *) g->q->data;
    for (int64_t i = 0; i < ggml_nelements(g->q); i++) {
        q[i] = (float) tt_rand_uniform(&st, -1.0, 1.0);
    }
    tt_fill_uniform(g->k, -1.0, 1.0, 11);
    tt_fill_uniform(g->v, -1.0, 1.0, 12);
    ggml_fp16_t * m = (ggml_fp16_t *) g->m->data;
    const int64_t mstride = g->m->ne[0];
    for (int64_t i = 0; i < g->m->ne[1]; i++) {
        const int64_t kind = (i + in->kind0) % FA_KINDS;
        for (int64_t j = 0; j < in->n_kv; j++) {
            float mv = (float) tt_rand_uniform(&st, -1.0, 0.0);
            const bool special = j == k_bad || j == v_bad || j == in->n_kv / 4 || j == in->n_kv - 1;
            if ((j % 5 == 3 && !special) || (j == k_bad && nan_kv && kind != FA_K_NAN_KEY) || (j == v_bad && nan_kv && kind != FA_V_NAN_KEY)) {
                mv = -INFINITY;
            }
            switch ((enum fa_row_kind) kind) {
                case FA_MASK_ALL_NAN:     mv = NAN; break;
                case FA_MASK_ALL_INF:     mv = -INFINITY; break;
                case FA_MASK_INF_ONE_NAN: mv = j == in->n_kv - 1 ? NAN : -INFINITY; break;
                case FA_MASK_ONE_NAN:     mv = j == in->n_kv / 4 ? NAN : mv; break;
                default: break;
            }
            m[i*mstride + j] = ggml_fp32_to_fp16(mv);
        }
    }
    for (int64_t h = 0; h < in->n_head; h += 2) {
        for (int64_t i = 0; i < in->n_batch; i++) {
            if ((i + in->kind0) % FA_KINDS == FA_Q_NAN) {
                q[(h*in->n_batch + i)*in->DK + in->DK / 2] = NAN; // q rows of even heads only
            }
        }
    }
    if (nan_kv) {
        for (int64_t hk = 0; hk < in->n_head_kv; hk++) {
            ggml_set_f32_nd(g->k, 1, (int) k_bad, (int) hk, 0, NAN);
            ggml_set_f32_nd(g->v, 2, (int) v_bad, (int) hk, 0, NAN);
        }
    }
    if (g->s != NULL) {
        float * s = (float *) g->s->data;
        for (int64_t h = 0; h < in->n_head; h++) {
            s[h] = h == 1 ? NAN : 0.25f * (float) h;
        }
    }
}

// the expected output of query row i of head h
static void fa_ref_row(const struct fa_inputs * in, const struct fa_graph * g, int64_t i, int64_t h, double * out) {
    const int64_t hk = h / (in->n_head / in->n_head_kv);
    const double slope = alibi_slope(in->max_bias, in->n_head, h);
    const float * q = (const float *) g->q->data + (h*in->n_batch + i)*in->DK;
    double * s = (double *) malloc((size_t) in->n_kv * sizeof(double));
    bool nan = g->s != NULL && isnan(((const float *) g->s->data)[h]);
    double max = g->s != NULL ? (double) ((const float *) g->s->data)[h] : -INFINITY;
    for (int64_t j = 0; j < in->n_kv; j++) {
        const double mv = slope * tt_get(g->m, j, i, 0, 0);
        s[j] = -INFINITY;
        if (mv == -INFINITY) {
            continue;
        }
        double dot = 0.0;
        for (int64_t d = 0; d < in->DK; d++) {
            dot += (double) q[d] * tt_get(g->k, d, j, hk, 0);
        }
        s[j] = in->scale * dot + mv;
        nan |= isnan(s[j]); // a NaN logit poisons the row; a NaN in V only its own column
        max = s[j] > max ? s[j] : max;
    }
    for (int64_t d = 0; d < in->DV; d++) {
        out[d] = nan ? NAN : 0.0;
    }
    if (!nan && max != -INFINITY) {
        double sum = g->s != NULL ? exp((double) ((const float *) g->s->data)[h] - max) : 0.0;
        for (int64_t j = 0; j < in->n_kv; j++) {
            if (s[j] == -INFINITY) {
                continue;
            }
            const double w = exp(s[j] - max);
            sum += w;
            for (int64_t d = 0; d < in->DV; d++) {
                out[d] += w * tt_get(g->v, d, j, hk, 0);
            }
        }
        for (int64_t d = 0; d < in->DV; d++) {
            out[d] /= sum;
        }
    }
    free(s);
}

static void test_attention(const struct fa_inputs * in, enum ggml_type tk, enum ggml_type tv, bool nan_kv, bool unfused) {
    struct ggml_context * ctx = tt_ctx_new(64);
    struct fa_graph g = {
        .q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, in->DK, in->n_batch, in->n_head),
        .k = ggml_new_tensor_3d(ctx, tk, in->DK, in->n_kv, in->n_head_kv),
        .v = ggml_new_tensor_3d(ctx, tv, in->DV, in->n_kv, in->n_head_kv),
        .m = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, in->n_kv, in->n_batch),
        .s = in->sinks ? ggml_new_tensor_1d(ctx, GGML_TYPE_F32, in->n_head) : NULL,
    };
    fa_fill(in, &g, nan_kv);

    struct ggml_tensor * out;
    int64_t stride_head, stride_row; // of the output, in floats
    if (unfused) {
        struct ggml_tensor * kq = ggml_mul_mat(ctx, g.k, g.q);                              // [n_kv, n_batch, n_head]
        struct ggml_tensor * p  = ggml_soft_max_ext(ctx, kq, g.m, in->scale, in->max_bias);
        if (g.s != NULL) {
            ggml_soft_max_add_sinks(p, g.s);
        }
        struct ggml_tensor * vt = ggml_cont(ctx, ggml_transpose(ctx, ggml_cast(ctx, g.v, GGML_TYPE_F32)));
        out = ggml_mul_mat(ctx, vt, p);                                                     // [DV, n_batch, n_head]
        stride_head = in->DV * in->n_batch;
        stride_row  = in->DV;
    } else {
        out = ggml_flash_attn_ext(ctx, g.q, g.k, g.v, g.m, in->scale, in->max_bias, 0.0f);   // [DV, n_head, n_batch]
        if (g.s != NULL) {
            ggml_flash_attn_ext_add_sinks(out, g.s);
        }
        stride_head = in->DV;
        stride_row  = in->DV * in->n_head;
    }

    const int64_t n_rows = in->n_batch * in->n_head;
    double * ref = (double *) malloc((size_t)(n_rows * in->DV) * sizeof(double));
    for (int64_t h = 0; h < in->n_head; h++) {
        for (int64_t i = 0; i < in->n_batch; i++) {
            fa_ref_row(in, &g, i, h, ref + (h*in->n_batch + i)*in->DV);
        }
    }
    float * got = (float *) malloc((size_t)(n_rows * in->DV) * sizeof(float));
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        for (int nt = 1; nt <= 3; nt++) {
            compute(out, nt, use_ref);
            for (int64_t h = 0; h < in->n_head; h++) {
                for (int64_t i = 0; i < in->n_batch; i++) {
                    memcpy(got + (h*in->n_batch + i)*in->DV, (const float *) out->data + h*stride_head + i*stride_row,
                           (size_t) in->DV * sizeof(float));
                }
            }
            char what[160];
            snprintf(what, sizeof(what), "%s K %s V %s n_kv %lld n_batch %lld%s%s, %s, %d threads",
                     unfused ? "unfused attention" : "flash_attn_ext", ggml_type_name(tk), ggml_type_name(tv),
                     (long long) in->n_kv, (long long) in->n_batch, in->sinks ? " sinks" : "", nan_kv ? " NaN K/V rows" : "",
                     use_ref ? "scalar" : "vector", nt);
            // unfused, mul_mat rounds q to F16 for F16 K
            check_rows(what, got, in->DV, ref, n_rows, in->DV, unfused ? 1e-3 : 1e-5);
        }
    }
    if (in->n_batch > 1 || in->kind0 == FA_Q_NAN) {
        CHECK(row_has_nan_f(got, n_rows * in->DV)); // the case does have NaN rows
    }
    free(got);
    free(ref);
    ggml_free(ctx);
}

int main(void) {
    const int64_t lens[] = { 7, 16, 37, 64, 100 };
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        test_softmax(lens[i], GGML_TYPE_F32, false, 0.0f);
        test_softmax(lens[i], GGML_TYPE_F16, false, 0.0f);
        test_softmax(lens[i], GGML_TYPE_F32, true, 0.0f);
        test_softmax(lens[i], GGML_TYPE_F16, true, 8.0f);
    }

    // prompt shape: tiles of several rows; 4 q heads on 2 K/V heads
    const struct fa_inputs prompt = { .DK = 40, .DV = 24, .n_kv = 150, .n_batch = 19, .n_head = 4, .n_head_kv = 2, .scale = 0.3f };
    // decode shape: one tile, the keys cut into chunks
    const struct fa_inputs decode = { .DK = 64, .DV = 64, .n_kv = 1024, .n_batch = FA_KINDS, .n_head = 1, .n_head_kv = 1, .scale = 0.125f };
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16 };
    for (int t = 0; t < 2; t++) {
        for (int with_sinks = 0; with_sinks <= 1; with_sinks++) {
            struct fa_inputs p = prompt, d = decode;
            p.sinks = d.sinks = with_sinks;
            p.max_bias = with_sinks ? 4.0f : 0.0f;
            test_attention(&p, types[t], types[t], true, false);
            test_attention(&p, types[t], GGML_TYPE_F16, false, true);
            test_attention(&d, types[t], types[t], true, false);
        }
    }
    // decode with one query row per graph, so that the chunks hold the NaN alone
    for (int kind = 0; kind < FA_KINDS; kind++) {
        struct fa_inputs d = decode;
        d.n_batch = 1;
        d.kind0 = kind;
        test_attention(&d, GGML_TYPE_F16, GGML_TYPE_F16, true, false);
    }
    return TEST_RESULT();
}
