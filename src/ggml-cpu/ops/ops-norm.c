// ops-norm.c: row normalisations (NORM, RMS_NORM, L2_NORM), DIAG_MASK_INF, DIAG_MASK_ZERO and
// SOFT_MAX with its ext parameters (scale, mask, ALiBi, sinks).
//
// All work one row at a time; the rows are split between threads in
// contiguous ranges, and each row is computed the same way whatever the
// split, so results do not depend on the thread count. Sums over a row are
// accumulated in double.

#include "simd/vec.h"
#include "simd/vec-math.h"
#include "ops/row-iter.h"

static size_t pad_to_cache_line(size_t bytes) {
    return (bytes + GGML_CPU_CACHE_LINE - 1) / GGML_CPU_CACHE_LINE * GGML_CPU_CACHE_LINE;
}

static bool rows_are_contiguous(const struct ggml_tensor * t) {
    return t->nb[0] == ggml_type_size(t->type);
}

//
// NORM, RMS_NORM, L2_NORM: op_params[0] is eps
//

static double row_sum(int64_t n, const float * x, bool use_ref) {
    return use_ref ? ggml_vec_sum_f32_ref(n, x) : ggml_vec_sum_f32(n, x);
}

static double row_sumsq(int64_t n, const float * x, bool use_ref) {
    return use_ref ? ggml_vec_sumsq_f32_ref(n, x) : ggml_vec_sumsq_f32(n, x);
}

// y = x * v (y may be x)
static void row_scale(int64_t n, const float * x, float * y, float v, bool use_ref) {
    if (x != y) {
        // one pass; an elementwise product rounds the same on every path
        for (int64_t i = 0; i < n; i++) {
            y[i] = x[i] * v;
        }
    } else if (use_ref) {
        ggml_vec_scale_f32_ref(n, y, v);
    } else {
        ggml_vec_scale_f32(n, y, v);
    }
}

// (x - mean) / sqrt(variance + eps)
static void norm_row(int64_t n, const float * x, float * y, float eps, bool use_ref) {
    const float mean = (float)(row_sum(n, x, use_ref) / (double) n);
    for (int64_t i = 0; i < n; i++) {
        y[i] = x[i] - mean;
    }
    const double variance = row_sumsq(n, y, use_ref) / (double) n;
    row_scale(n, y, y, (float)(1.0 / sqrt(variance + (double) eps)), use_ref);
}

// x / sqrt(mean(x^2) + eps)
static void rms_norm_row(int64_t n, const float * x, float * y, float eps, bool use_ref) {
    const double mean_sq = row_sumsq(n, x, use_ref) / (double) n;
    row_scale(n, x, y, (float)(1.0 / sqrt(mean_sq + (double) eps)), use_ref);
}

// x / max(|x|, eps)
static void l2_norm_row(int64_t n, const float * x, float * y, float eps, bool use_ref) {
    const double norm = sqrt(row_sumsq(n, x, use_ref));
    row_scale(n, x, y, (float)(1.0 / fmax(norm, (double) eps)), use_ref);
}

typedef void (*norm_row_fn)(int64_t n, const float * x, float * y, float eps, bool use_ref);

// strided rows are gathered into the thread's scratch row, normalised there and scattered
static size_t work_size_norm(const struct ggml_tensor * op, int n_threads) {
    if (rows_are_contiguous(op->src[0]) && rows_are_contiguous(op)) {
        return 0;
    }
    return pad_to_cache_line((size_t) op->ne[0] * sizeof(float)) * (size_t) n_threads;
}

static void forward_norm_rows(const struct ggml_compute_params * params, struct ggml_tensor * dst, norm_row_fn fn) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t n = src->ne[0];
    const float eps = ggml_get_op_params_f32(dst, 0);
    const bool contiguous = rows_are_contiguous(src) && rows_are_contiguous(dst);

    float * tmp = NULL;
    if (!contiguous) {
        const size_t stride = pad_to_cache_line((size_t) n * sizeof(float));
        GGML_ASSERT(params->wsize >= stride * (size_t) params->nth);
        tmp = (float *)((char *) params->wdata + stride * (size_t) params->ith);
    }

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(src), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(src, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        const char * x = cpu_row_iter_ptr(&it, src);
        char * y = cpu_row_iter_ptr(&it, dst);
        if (contiguous) {
            fn(n, (const float *) x, (float *) y, eps, params->use_ref);
            continue;
        }
        for (int64_t i = 0; i < n; i++) {
            tmp[i] = *(const float *)(x + i*src->nb[0]);
        }
        fn(n, tmp, tmp, eps, params->use_ref);
        for (int64_t i = 0; i < n; i++) {
            *(float *)(y + i*dst->nb[0]) = tmp[i];
        }
    }
}

static void forward_norm(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    forward_norm_rows(params, dst, norm_row);
}

static void forward_rms_norm(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    forward_norm_rows(params, dst, rms_norm_row);
}

static void forward_l2_norm(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    forward_norm_rows(params, dst, l2_norm_row);
}

// RMS_NORM fused with the MUL by a weight that follows it, and with the ADD
// before it when add is not NULL (graph-fusion.c checked the pattern, types
// and memory): add = a + b is written out, norm's result is not, and
// mul = norm(x) * w with w's rows repeated. Every value is computed by the
// same operations in the same order as by the three nodes one after the
// other, so the results are the same, bit for bit.
void ggml_cpu_forward_rms_norm_mul(const struct ggml_compute_params * params, struct ggml_tensor * add,
                                   const struct ggml_tensor * norm, struct ggml_tensor * mul) {
    const struct ggml_tensor * x = norm->src[0];
    const struct ggml_tensor * w = mul->src[0] == norm ? mul->src[1] : mul->src[0];
    const int64_t n   = mul->ne[0];
    const int64_t ne1 = mul->ne[1], ne2 = mul->ne[2];
    const float   eps = ggml_get_op_params_f32(norm, 0);
    const bool    ref = params->use_ref;

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(mul), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const float * xr;
        if (add != NULL) {
            const struct ggml_tensor * a = add->src[0];
            const struct ggml_tensor * b = add->src[1];
            const float * ar = (const float *)((const char *) a->data + i1*a->nb[1] + i2*a->nb[2] + i3*a->nb[3]);
            const float * br = (const float *)((const char *) b->data + i1*b->nb[1] + i2*b->nb[2] + i3*b->nb[3]);
            float * sr = (float *)((char *) add->data + i1*add->nb[1] + i2*add->nb[2] + i3*add->nb[3]);
            for (int64_t i = 0; i < n; i++) {
                sr[i] = ar[i] + br[i];
            }
            xr = sr;
        } else {
            xr = (const float *)((const char *) x->data + i1*x->nb[1] + i2*x->nb[2] + i3*x->nb[3]);
        }
        const float * wr = (const float *)((const char *) w->data + (i1 % w->ne[1])*w->nb[1] +
                                           (i2 % w->ne[2])*w->nb[2] + (i3 % w->ne[3])*w->nb[3]);
        float * yr = (float *)((char *) mul->data + i1*mul->nb[1] + i2*mul->nb[2] + i3*mul->nb[3]);

        const double mean_sq = row_sumsq(n, xr, ref) / (double) n;
        const float  scale   = (float)(1.0 / sqrt(mean_sq + (double) eps));
        for (int64_t i = 0; i < n; i++) {
            yr[i] = (xr[i] * scale) * wr[i];
        }
    }
}

static bool supports_f32(const struct ggml_tensor * op) {
    return op->src[0]->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32;
}

//
// DIAG_MASK_INF, DIAG_MASK_ZERO: element (i0, i1) becomes -inf (0) where
// i0 > n_past + i1 (op_params[0] n_past)
//

static void forward_diag_mask_inf(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const float masked = dst->op == GGML_OP_DIAG_MASK_ZERO ? 0.0f : -INFINITY;
    const int64_t n = src->ne[0];
    const int64_t n_past = ggml_get_op_params_i32(dst, 0);
    const bool contiguous = rows_are_contiguous(src) && rows_are_contiguous(dst);

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(src), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(src, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        const char * x = cpu_row_iter_ptr(&it, src);
        char * y = cpu_row_iter_ptr(&it, dst);
        // elements [0, keep) are kept, the rest masked
        const int64_t keep = MAX(0, MIN(n, n_past + it.i1 + 1));
        if (contiguous) {
            if (x != y) {
                memcpy(y, x, (size_t) keep * sizeof(float));
            }
            for (int64_t i = keep; i < n; i++) {
                ((float *) y)[i] = masked;
            }
            continue;
        }
        for (int64_t i = 0; i < n; i++) {
            *(float *)(y + i*dst->nb[0]) = i < keep ? *(const float *)(x + i*src->nb[0]) : masked;
        }
    }
}

//
// SOFT_MAX: softmax(x*scale + slope*mask) along rows, with op_params
// [0] scale, [1] max_bias (float). The mask (F16 or F32, src[1]) has at least
// as many rows as x and broadcasts over dims 2 and 3. With max_bias > 0, head
// h (dim 2) has the ALiBi slope of upstream: with n = the largest power of 2
// not above the head count, m0 = 2^(-max_bias/n), m1 = 2^(-max_bias/(2n)),
// slope = m0^(h+1) for h < n, else m1^(2(h-n)+1). Sinks (src[2], F32, one per
// head) join each row's normalisation as an extra logit that is not output.
//
// A row whose logits are all -inf and that has no finite sink is all zeros
// (upstream's CPU backend gives NaN there: 0/0). A NaN among a row's inputs
// (x, its mask row, its sink) makes the whole row NaN, on every path.
//

struct alibi {
    uint32_t n_head_log2;
    float    max_bias;
    float    m0;
    float    m1;
};

// y[i] = exp(x[i] - max) (y may be x); returns the sum of the y[i] in double
static double soft_max_exp_row(int64_t n, float * y, const float * x, float max, bool use_ref) {
#if defined(GGML_VF_WIDTH)
    if (!use_ref) {
        const ggml_vf mv = ggml_vf_set1(max);
        int64_t i = 0;
        for (; i + GGML_VF_WIDTH <= n; i += GGML_VF_WIDTH) {
            ggml_vf_store(y + i, ggml_vf_exp(ggml_vf_sub(ggml_vf_load(x + i), mv)));
        }
        if (i < n) {
            const int m = (int)(n - i);
            ggml_vf_store_part(y + i, ggml_vf_exp(ggml_vf_sub(ggml_vf_load_part(x + i, m), mv)), m);
        }
        return ggml_vec_sum_f32(n, y);
    }
#else
    (void) use_ref; // the scalar loop is the only path
#endif
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        y[i] = expf(x[i] - max);
        sum += (double) y[i];
    }
    return sum;
}

static struct alibi alibi_init(float max_bias, int64_t n_head) {
    const uint32_t n_head_log2 = 1u << (uint32_t) floor(log2((double) n_head));
    struct alibi a = {
        .n_head_log2 = n_head_log2,
        .max_bias    = max_bias,
        .m0          = powf(2.0f, -max_bias / (float) n_head_log2),
        .m1          = powf(2.0f, -(max_bias / 2.0f) / (float) n_head_log2),
    };
    return a;
}

static float alibi_slope(const struct alibi * a, uint32_t h) {
    if (a->max_bias <= 0.0f) {
        return 1.0f;
    }
    return h < a->n_head_log2 ? powf(a->m0, (float)(h + 1)) : powf(a->m1, (float)(2*(h - a->n_head_log2) + 1));
}

static void forward_soft_max(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src   = dst->src[0];
    const struct ggml_tensor * mask  = dst->src[1];
    const struct ggml_tensor * sinks = dst->src[2];
    const int64_t n = src->ne[0];
    const float scale = ggml_get_op_params_f32(dst, 0);
    const struct alibi alibi = alibi_init(ggml_get_op_params_f32(dst, 1), src->ne[2]);
    const bool use_ref = params->use_ref;

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(src), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(src, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        const int64_t i1 = it.i1;
        const int64_t i2 = it.i2;
        const int64_t i3 = it.i3;
        const float * x = (const float *) cpu_row_iter_ptr(&it, src);
        float * y = (float *) cpu_row_iter_ptr(&it, dst);

        for (int64_t i = 0; i < n; i++) {
            y[i] = x[i] * scale;
        }
        if (mask != NULL) {
            const char * m = (const char *) mask->data + i1*mask->nb[1] + (i2 % mask->ne[2])*mask->nb[2] +
                             (i3 % mask->ne[3])*mask->nb[3];
            const float slope = alibi_slope(&alibi, (uint32_t) i2);
            if (mask->type == GGML_TYPE_F16) {
                if (use_ref) {
                    ggml_vec_mad_f16_ref(n, y, (const ggml_fp16_t *) m, slope);
                } else {
                    ggml_vec_mad_f16(n, y, (const ggml_fp16_t *) m, slope);
                }
            } else {
                if (use_ref) {
                    ggml_vec_mad_f32_ref(n, y, (const float *) m, slope);
                } else {
                    ggml_vec_mad_f32(n, y, (const float *) m, slope);
                }
            }
        }

        float max = use_ref ? ggml_vec_max_f32_ref(n, y) : ggml_vec_max_f32(n, y);
        float sink = -INFINITY;
        if (sinks != NULL) {
            sink = *(const float *)((const char *) sinks->data + i2*sinks->nb[0]);
            max = MAX(max, sink);
        }
        if (max == -INFINITY) {
            // every logit -inf or NaN (max skips NaN): zeros only without a NaN
            const float fill = ggml_vec_has_nan_f32(n, y) ? NAN : 0.0f;
            for (int64_t i = 0; i < n; i++) {
                y[i] = fill;
            }
            continue;
        }

        double sum = soft_max_exp_row(n, y, y, max, use_ref);
        if (sinks != NULL) {
            sum += (double) expf(sink - max);
        }
        const float inv = (float)(1.0 / sum);
        if (use_ref) {
            ggml_vec_scale_f32_ref(n, y, inv);
        } else {
            ggml_vec_scale_f32(n, y, inv);
        }
    }
}

static bool supports_soft_max(const struct ggml_tensor * op) {
    const struct ggml_tensor * mask  = op->src[1];
    const struct ggml_tensor * sinks = op->src[2];
    if (!supports_f32(op) || !rows_are_contiguous(op->src[0]) || !rows_are_contiguous(op)) {
        return false;
    }
    if (mask != NULL && ((mask->type != GGML_TYPE_F32 && mask->type != GGML_TYPE_F16) || !rows_are_contiguous(mask))) {
        return false;
    }
    return sinks == NULL || sinks->type == GGML_TYPE_F32;
}

void ggml_cpu_register_ops_norm(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_NORM] = (struct ggml_cpu_op_impl) {
        .forward = forward_norm, .supports = supports_f32, .work_size = work_size_norm,
    };
    table[GGML_OP_RMS_NORM] = (struct ggml_cpu_op_impl) {
        .forward = forward_rms_norm, .supports = supports_f32, .work_size = work_size_norm,
    };
    table[GGML_OP_L2_NORM] = (struct ggml_cpu_op_impl) {
        .forward = forward_l2_norm, .supports = supports_f32, .work_size = work_size_norm,
    };
    table[GGML_OP_DIAG_MASK_INF] = (struct ggml_cpu_op_impl) {
        .forward = forward_diag_mask_inf, .supports = supports_f32, .work_size = NULL,
    };
    table[GGML_OP_DIAG_MASK_ZERO] = table[GGML_OP_DIAG_MASK_INF];
    table[GGML_OP_SOFT_MAX] = (struct ggml_cpu_op_impl) {
        .forward = forward_soft_max, .supports = supports_soft_max, .work_size = NULL,
    };
}
