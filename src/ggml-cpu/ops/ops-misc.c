// ops-misc.c: the small ops of upstream's later additions: ADD_ID, CUMSUM,
// DIAG, FILL, TRI, SOLVE_TRI, GROUP_NORM, LIGHTNING_INDEXER and the DeepSeek
// V4 hyper-connection ops DSV4_HC_COMB/PRE/POST (DIAG_MASK_ZERO shares the
// kernel of DIAG_MASK_INF in ops-norm.c).
//
// F32 throughout (FILL also F16; the indexer's K any type with to_float, its
// mask F16), as upstream's CPU backend. Work is split
// between threads by whole rows, matrices or groups, so that every result
// is computed by one thread in a fixed order, whatever the thread count.
// Sums that run over many elements (CUMSUM, GROUP_NORM) accumulate in double.

#include "cpu-impl.h"
#include "ops/row-iter.h"

#include <math.h>
#include <string.h>

static bool all_f32(const struct ggml_tensor * op, int n_src) {
    if (op->type != GGML_TYPE_F32) {
        return false;
    }
    for (int i = 0; i < n_src; i++) {
        if (op->src[i]->type != GGML_TYPE_F32) {
            return false;
        }
    }
    return true;
}

static float * f32_at(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (float *) ((char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3]);
}

//
// ADD_ID: dst[:, i1, i2] = a[:, i1, i2] + b[:, ids[i1, i2]]
//

static void forward_add_id(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * a   = dst->src[0];
    const struct ggml_tensor * b   = dst->src[1];
    const struct ggml_tensor * ids = dst->src[2];
    const int64_t n = dst->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(dst, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        const int32_t row = *(const int32_t *) ((const char *) ids->data + it.i1*ids->nb[0] + it.i2*ids->nb[1]);
        GGML_ASSERT(row >= 0 && row < b->ne[1]);
        const float * x = (const float *) cpu_row_iter_ptr(&it, a);
        const float * y = (const float *) ((const char *) b->data + row*b->nb[1]);
        float * z = (float *) cpu_row_iter_ptr(&it, dst);
        for (int64_t i = 0; i < n; i++) {
            z[i] = x[i] + y[i];
        }
    }
}

static bool supports_add_id(const struct ggml_tensor * op) {
    const struct ggml_tensor * a = op->src[0];
    const struct ggml_tensor * b = op->src[1];
    return all_f32(op, 2) && op->src[2]->type == GGML_TYPE_I32 && a->nb[0] == sizeof(float) &&
           b->nb[0] == sizeof(float) && op->nb[0] == sizeof(float);
}

//
// CUMSUM: running sums along each row
//

static void forward_cumsum(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t n = dst->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(dst, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        const char * x = cpu_row_iter_ptr(&it, src);
        char * z = cpu_row_iter_ptr(&it, dst);
        double sum = 0.0;
        for (int64_t i = 0; i < n; i++) {
            sum += (double) *(const float *) (x + i*src->nb[0]);
            *(float *) (z + i*dst->nb[0]) = (float) sum;
        }
    }
}

static bool supports_f32_1(const struct ggml_tensor * op) {
    return all_f32(op, 1);
}

//
// DIAG: [n, 1, ne2, ne3] -> [n, n, ne2, ne3]
//

static void forward_diag(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t n = dst->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(dst, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        for (int64_t i = 0; i < n; i++) {
            *f32_at(dst, i, it.i1, it.i2, it.i3) = i == it.i1 ? *f32_at(src, i, 0, it.i2, it.i3) : 0.0f;
        }
    }
}

//
// FILL: every element c (op_params[0])
//

static void forward_fill(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const float c = ggml_get_op_params_f32(dst, 0);
    const ggml_fp16_t h = ggml_fp32_to_fp16(c);
    const int64_t n = dst->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(dst, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        char * z = cpu_row_iter_ptr(&it, dst);
        if (dst->type == GGML_TYPE_F32) {
            for (int64_t i = 0; i < n; i++) {
                *(float *) (z + i*dst->nb[0]) = c;
            }
        } else {
            for (int64_t i = 0; i < n; i++) {
                *(ggml_fp16_t *) (z + i*dst->nb[0]) = h;
            }
        }
    }
}

static bool supports_fill(const struct ggml_tensor * op) {
    return (op->type == GGML_TYPE_F32 || op->type == GGML_TYPE_F16) && op->src[0]->type == op->type;
}

//
// TRI: zeros outside the triangle that op_params[0] names
//

// the kept elements [*lo, *hi) of row i1 of n
static void tri_range(enum ggml_tri_type type, int64_t i1, int64_t n, int64_t * lo, int64_t * hi) {
    switch (type) {
        case GGML_TRI_TYPE_LOWER:      *lo = 0;      *hi = i1;     break;
        case GGML_TRI_TYPE_LOWER_DIAG: *lo = 0;      *hi = i1 + 1; break;
        case GGML_TRI_TYPE_UPPER:      *lo = i1 + 1; *hi = n;      break;
        case GGML_TRI_TYPE_UPPER_DIAG: *lo = i1;     *hi = n;      break;
        default: GGML_ABORT("invalid tri type %d", (int) type);
    }
    *lo = MIN(*lo, n);
    *hi = MIN(*hi, n);
}

static void forward_tri(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const enum ggml_tri_type type = (enum ggml_tri_type) ggml_get_op_params_i32(dst, 0);
    const int64_t n = dst->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(dst, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        const float * x = (const float *) cpu_row_iter_ptr(&it, src);
        float * y = (float *) cpu_row_iter_ptr(&it, dst);
        int64_t lo, hi;
        tri_range(type, it.i1, n, &lo, &hi);
        memset(y, 0, (size_t) lo * sizeof(float));
        if (hi > lo) {
            memmove(y + lo, x + lo, (size_t) (hi - lo) * sizeof(float)); // x may be y (in place)
        }
        memset(y + MAX(lo, hi), 0, (size_t) (n - MAX(lo, hi)) * sizeof(float));
    }
}

static bool supports_tri(const struct ggml_tensor * op) {
    return all_f32(op, 1) && op->src[0]->nb[0] == sizeof(float) && op->nb[0] == sizeof(float);
}

//
// SOLVE_TRI: A X = B by forward substitution, A [n, n] lower triangular,
// B and X [k, n]. Row i of X is (B_i - sum_{t<i} A_it X_t) / A_ii: whole rows
// of X at a time, so the inner loop runs over contiguous columns. Threads
// take (matrix, block of columns) units.
//

#define SOLVE_TRI_COLS 64

static void forward_solve_tri(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * A = dst->src[0];
    const struct ggml_tensor * B = dst->src[1];
    const int64_t n = A->ne[0];
    const int64_t k = B->ne[0];
    const int64_t n_blk = (k + SOLVE_TRI_COLS - 1) / SOLVE_TRI_COLS;
    const int64_t n_mat = dst->ne[2] * dst->ne[3];

    int64_t u0, u1;
    ggml_cpu_split_range(n_mat * n_blk, params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t m  = u / n_blk;
        const int64_t i2 = m % dst->ne[2], i3 = m / dst->ne[2];
        const int64_t c0 = (u % n_blk) * SOLVE_TRI_COLS;
        const int64_t nc = MIN(SOLVE_TRI_COLS, k - c0);
        for (int64_t i = 0; i < n; i++) {
            float acc[SOLVE_TRI_COLS];
            const float * b = f32_at(B, c0, i, i2, i3);
            for (int64_t c = 0; c < nc; c++) {
                acc[c] = b[c];
            }
            const float * a = f32_at(A, 0, i, i2, i3);
            for (int64_t t = 0; t < i; t++) {
                const float at = a[t];
                const float * x = f32_at(dst, c0, t, i2, i3);
                for (int64_t c = 0; c < nc; c++) {
                    acc[c] -= at * x[c];
                }
            }
            const float d = a[i];
            float * x = f32_at(dst, c0, i, i2, i3);
            for (int64_t c = 0; c < nc; c++) {
                x[c] = acc[c] / d;
            }
        }
    }
}

static bool supports_solve_tri(const struct ggml_tensor * op) {
    return all_f32(op, 2) && ggml_is_contiguous(op->src[0]) && ggml_is_contiguous(op->src[1]) && ggml_is_contiguous(op);
}

//
// GROUP_NORM: op_params [0] n_groups, [1] eps. Threads take (group, i3) pairs.
//

static void forward_group_norm(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t n_groups = ggml_get_op_params_i32(dst, 0);
    const float   eps      = ggml_get_op_params_f32(dst, 1);
    const int64_t ne0 = src->ne[0], ne1 = src->ne[1], ne2 = src->ne[2];
    const int64_t per_group = (ne2 + n_groups - 1) / n_groups;

    int64_t u0, u1;
    ggml_cpu_split_range(n_groups * src->ne[3], params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t g = u % n_groups, i3 = u / n_groups;
        const int64_t c0 = g * per_group, c1 = MIN(ne2, c0 + per_group);
        if (c0 >= c1) {
            continue;
        }
        const double count = (double) (ne0 * ne1 * (c1 - c0));
        double sum = 0.0;
        for (int64_t i2 = c0; i2 < c1; i2++) {
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    sum += (double) *f32_at(src, i0, i1, i2, i3);
                }
            }
        }
        const double mean = sum / count;
        double sum2 = 0.0;
        for (int64_t i2 = c0; i2 < c1; i2++) {
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    const double v = (double) *f32_at(src, i0, i1, i2, i3) - mean;
                    sum2 += v * v;
                }
            }
        }
        const double scale = 1.0 / sqrt(sum2 / count + (double) eps);
        for (int64_t i2 = c0; i2 < c1; i2++) {
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    *f32_at(dst, i0, i1, i2, i3) = (float) (((double) *f32_at(src, i0, i1, i2, i3) - mean) * scale);
                }
            }
        }
    }
}

static bool supports_group_norm(const struct ggml_tensor * op) {
    return all_f32(op, 1) && ggml_are_same_shape(op, op->src[0]) && ggml_get_op_params_i32(op, 0) > 0;
}

//
// LIGHTNING_INDEXER: threads take rows of K (key positions); a K row of another
// type than F32 is converted once into the thread's scratch and used for every
// query token and head
//

static size_t indexer_row_stride(const struct ggml_tensor * op) {
    const size_t n = (size_t) op->src[0]->ne[0] * sizeof(float);
    return (n + GGML_CPU_CACHE_LINE - 1) / GGML_CPU_CACHE_LINE * GGML_CPU_CACHE_LINE;
}

static size_t work_size_indexer(const struct ggml_tensor * op, int n_threads) {
    return indexer_row_stride(op) * (size_t) n_threads;
}

static void forward_lightning_indexer(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0], * k = dst->src[1], * w = dst->src[2], * m = dst->src[3];
    const int64_t n_embd = q->ne[0], n_head = q->ne[1], n_tok = q->ne[2], n_stream = q->ne[3], n_kv = k->ne[2];
    const ggml_to_float_t to_float = ggml_get_type_traits(k->type)->to_float;
    float * kbuf = (float *) ((char *) params->wdata + indexer_row_stride(dst) * (size_t) params->ith);

    int64_t j0, j1;
    ggml_cpu_split_range(n_kv, params->ith, params->nth, &j0, &j1);
    for (int64_t s = 0; s < n_stream; s++) {
        for (int64_t j = j0; j < j1; j++) {
            const char * krow = (const char *) k->data + j*k->nb[2] + s*k->nb[3];
            const float * kv = (const float *) krow;
            if (k->type != GGML_TYPE_F32) {
                to_float(krow, kbuf, n_embd);
                kv = kbuf;
            }
            for (int64_t t = 0; t < n_tok; t++) {
                const float * wr = f32_at(w, 0, t, 0, s);
                float score = 0.0f;
                for (int64_t h = 0; h < n_head; h++) {
                    const float * qr = f32_at(q, 0, h, t, s);
                    float dot = 0.0f;
                    for (int64_t i = 0; i < n_embd; i++) {
                        dot += qr[i] * kv[i];
                    }
                    score += (dot > 0.0f ? dot : 0.0f) * wr[h];
                }
                const ggml_fp16_t mv = *(const ggml_fp16_t *) ((const char *) m->data + j*m->nb[0] + t*m->nb[1] +
                                                              (s % m->ne[3])*m->nb[3]);
                *f32_at(dst, j, t, 0, s) = score + ggml_fp16_to_fp32(mv);
            }
        }
    }
}

static bool supports_lightning_indexer(const struct ggml_tensor * op) {
    const struct ggml_tensor * q = op->src[0], * k = op->src[1], * w = op->src[2], * m = op->src[3];
    const bool k_ok = k->type == GGML_TYPE_F32 ||
                      (ggml_get_type_traits(k->type)->to_float != NULL && ggml_is_contiguous_rows(k));
    return op->type == GGML_TYPE_F32 && q->type == GGML_TYPE_F32 && w->type == GGML_TYPE_F32 && m->type == GGML_TYPE_F16 &&
           k_ok && q->nb[0] == sizeof(float) && k->nb[0] == ggml_type_size(k->type) && w->nb[0] == sizeof(float);
}

//
// DSV4_HC_COMB: per token, the hc x hc matrix comb[d + hc*s] (d the
// destination stream, s the source): a softmax over d of the scaled logits
// plus eps, then alternating normalisations (sums with eps) over s and d
//

#define DSV4_HC 4

static void hc_normalise(float * comb, float eps, bool over_src) {
    for (int a = 0; a < DSV4_HC; a++) {
        float sum = eps;
        for (int b = 0; b < DSV4_HC; b++) {
            sum += over_src ? comb[a + DSV4_HC*b] : comb[b + DSV4_HC*a];
        }
        for (int b = 0; b < DSV4_HC; b++) {
            float * v = over_src ? &comb[a + DSV4_HC*b] : &comb[b + DSV4_HC*a];
            *v /= sum;
        }
    }
}

static void forward_dsv4_hc_comb(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * mixes = dst->src[0], * scale = dst->src[1], * base = dst->src[2];
    const float   eps    = ggml_get_op_params_f32(dst, 0);
    const int32_t n_iter = ggml_get_op_params_i32(dst, 1);
    const float   sc     = *f32_at(scale, 2, 0, 0, 0);
    const int64_t off    = 2 * DSV4_HC;

    int64_t t0, t1;
    ggml_cpu_split_range(mixes->ne[1], params->ith, params->nth, &t0, &t1);
    for (int64_t t = t0; t < t1; t++) {
        float comb[DSV4_HC * DSV4_HC];
        for (int s = 0; s < DSV4_HC; s++) {
            float mx = -INFINITY;
            for (int d = 0; d < DSV4_HC; d++) {
                const int i = d + DSV4_HC*s;
                comb[i] = *f32_at(mixes, off + i, t, 0, 0) * sc + *f32_at(base, off + i, 0, 0, 0);
                mx = comb[i] > mx ? comb[i] : mx;
            }
            float sum = 0.0f;
            for (int d = 0; d < DSV4_HC; d++) {
                comb[d + DSV4_HC*s] = expf(comb[d + DSV4_HC*s] - mx);
                sum += comb[d + DSV4_HC*s];
            }
            for (int d = 0; d < DSV4_HC; d++) {
                comb[d + DSV4_HC*s] = comb[d + DSV4_HC*s] / sum + eps;
            }
        }
        hc_normalise(comb, eps, true);
        for (int32_t it = 1; it < n_iter; it++) {
            hc_normalise(comb, eps, false);
            hc_normalise(comb, eps, true);
        }
        for (int s = 0; s < DSV4_HC; s++) {
            for (int d = 0; d < DSV4_HC; d++) {
                *f32_at(dst, d, s, t, 0) = comb[d + DSV4_HC*s];
            }
        }
    }
}

// DSV4_HC_PRE: out[:, t] = sum_h x[:, h, t] w[h, t]
static void forward_dsv4_hc_pre(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0], * w = dst->src[1];
    const int64_t n = x->ne[0], hc = x->ne[1];

    int64_t t0, t1;
    ggml_cpu_split_range(x->ne[2], params->ith, params->nth, &t0, &t1);
    for (int64_t t = t0; t < t1; t++) {
        float * y = f32_at(dst, 0, t, 0, 0);
        for (int64_t i = 0; i < n; i++) {
            float sum = 0.0f;
            for (int64_t h = 0; h < hc; h++) {
                sum += *f32_at(x, i, h, t, 0) * *f32_at(w, h, t, 0, 0);
            }
            y[i] = sum;
        }
    }
}

// DSV4_HC_POST: out[:, d, t] = x[:, t] post[d, t] + sum_s residual[:, s, t] comb[d, s, t]
static void forward_dsv4_hc_post(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0], * res = dst->src[1], * post = dst->src[2], * comb = dst->src[3];
    const int64_t n = x->ne[0], hc = res->ne[1];

    int64_t u0, u1;
    ggml_cpu_split_range(hc * x->ne[1], params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t d = u % hc, t = u / hc;
        const float pd = *f32_at(post, d, t, 0, 0);
        float * y = f32_at(dst, 0, d, t, 0);
        for (int64_t i = 0; i < n; i++) {
            float sum = *f32_at(x, i, t, 0, 0) * pd;
            for (int64_t s = 0; s < hc; s++) {
                sum += *f32_at(res, i, s, t, 0) * *f32_at(comb, d, s, t, 0);
            }
            y[i] = sum;
        }
    }
}

static bool supports_f32_rows(const struct ggml_tensor * op) {
    int n_src = 0;
    while (n_src < GGML_MAX_SRC && op->src[n_src] != NULL) {
        n_src++;
    }
    return all_f32(op, n_src) && op->nb[0] == sizeof(float);
}

void ggml_cpu_register_ops_misc(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_ADD_ID] = (struct ggml_cpu_op_impl) { .forward = forward_add_id, .supports = supports_add_id };
    table[GGML_OP_CUMSUM] = (struct ggml_cpu_op_impl) { .forward = forward_cumsum, .supports = supports_f32_1 };
    table[GGML_OP_DIAG]   = (struct ggml_cpu_op_impl) { .forward = forward_diag,   .supports = supports_f32_1 };
    table[GGML_OP_FILL]   = (struct ggml_cpu_op_impl) { .forward = forward_fill,   .supports = supports_fill };
    table[GGML_OP_TRI]    = (struct ggml_cpu_op_impl) { .forward = forward_tri,    .supports = supports_tri };
    table[GGML_OP_SOLVE_TRI]  = (struct ggml_cpu_op_impl) { .forward = forward_solve_tri,  .supports = supports_solve_tri };
    table[GGML_OP_GROUP_NORM] = (struct ggml_cpu_op_impl) { .forward = forward_group_norm, .supports = supports_group_norm };
    table[GGML_OP_LIGHTNING_INDEXER] = (struct ggml_cpu_op_impl) {
        .forward = forward_lightning_indexer, .supports = supports_lightning_indexer, .work_size = work_size_indexer,
    };
    table[GGML_OP_DSV4_HC_COMB] = (struct ggml_cpu_op_impl) { .forward = forward_dsv4_hc_comb, .supports = supports_f32_rows };
    table[GGML_OP_DSV4_HC_PRE]  = (struct ggml_cpu_op_impl) { .forward = forward_dsv4_hc_pre,  .supports = supports_f32_rows };
    table[GGML_OP_DSV4_HC_POST] = (struct ggml_cpu_op_impl) { .forward = forward_dsv4_hc_post, .supports = supports_f32_rows };
}
