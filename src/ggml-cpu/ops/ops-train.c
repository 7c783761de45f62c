// ops-train.c: the CPU kernels of training: the backward ops REPEAT_BACK,
// SILU_BACK, RMS_NORM_BACK, GET_ROWS_BACK and SOFT_MAX_BACK, the loss
// CROSS_ENTROPY_LOSS with its gradient, and the optimizer steps
// OPT_STEP_ADAMW and OPT_STEP_SGD (ROPE_BACK is in ops-rope.c).
//
// Everything is F32. Results have rows contiguous in memory (nb[0] == 4);
// the sources of the backward ops and the loss may have any strides
// (gradients often arrive transposed or permuted), the optimizer steps'
// tensors need contiguous rows. Row sums are accumulated in double, so
// that a long row or a large batch does not lose the loss to rounding. The
// work is split by rows, except where noted.

#include "cpu-impl.h"
#include "simd/vec.h"

#include <math.h>

static bool rows_f32(const struct ggml_tensor * t) {
    return t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float);
}

static float * row_f32(const struct ggml_tensor * t, int64_t r) {
    const int64_t i1 = r % t->ne[1];
    const int64_t i2 = (r / t->ne[1]) % t->ne[2];
    const int64_t i3 = r / (t->ne[1] * t->ne[2]);
    return (float *) ((char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3]);
}

static bool supports_f32_rows_all(const struct ggml_tensor * op) {
    if (!rows_f32(op)) {
        return false;
    }
    for (int j = 0; j < GGML_MAX_SRC && op->src[j] != NULL; j++) {
        if (!rows_f32(op->src[j])) {
            return false;
        }
    }
    return true;
}

// F32 everywhere; the sources may have any strides (gradients often come
// transposed or permuted), the result has contiguous rows
static bool supports_f32_strided(const struct ggml_tensor * op) {
    if (!rows_f32(op)) {
        return false;
    }
    for (int j = 0; j < GGML_MAX_SRC && op->src[j] != NULL; j++) {
        if (op->src[j]->type != GGML_TYPE_F32) {
            return false;
        }
    }
    return true;
}

// element i of row r of an F32 tensor of any strides
static inline float ld(const struct ggml_tensor * t, const float * row, int64_t i) {
    return *(const float *) ((const char *) row + i*t->nb[0]);
}

//
// REPEAT_BACK: dst[i] = sum of src over the copies that ggml_repeat made of i
//

static bool supports_repeat_back(const struct ggml_tensor * op) {
    return op->type == GGML_TYPE_F32 && op->src[0]->type == GGML_TYPE_F32;
}

static void forward_repeat_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    int64_t nr[4];
    for (int d = 0; d < 4; d++) {
        nr[d] = src->ne[d] / dst->ne[d];
    }
    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        char * out = (char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            double sum = 0.0;
            for (int64_t k3 = 0; k3 < nr[3]; k3++) {
                for (int64_t k2 = 0; k2 < nr[2]; k2++) {
                    for (int64_t k1 = 0; k1 < nr[1]; k1++) {
                        const char * in = (const char *) src->data + (i1 + k1*dst->ne[1])*src->nb[1] +
                                          (i2 + k2*dst->ne[2])*src->nb[2] + (i3 + k3*dst->ne[3])*src->nb[3];
                        for (int64_t k0 = 0; k0 < nr[0]; k0++) {
                            sum += (double) *(const float *) (in + (i0 + k0*dst->ne[0])*src->nb[0]);
                        }
                    }
                }
            }
            *(float *) (out + i0*dst->nb[0]) = (float) sum;
        }
    }
}

//
// SILU_BACK: src0 dy, src1 x; dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x)
//

static void forward_silu_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const struct ggml_tensor * x  = dst->src[1];
    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * g = row_f32(dy, r);
        const float * v = row_f32(x, r);
        float * out = row_f32(dst, r);
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            const float xv = ld(x, v, i);
            const float s  = 1.0f / (1.0f + expf(-xv));
            out[i] = ld(dy, g, i) * s * (1.0f + xv * (1.0f - s));
        }
    }
}

//
// RMS_NORM_BACK: src0 dy, src1 x; with r = sqrt(mean(x^2) + eps),
// dx = dy / r - x * sum(dy * x) / (n r^3)
//

static void forward_rms_norm_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const struct ggml_tensor * x  = dst->src[1];
    const float eps = ggml_get_op_params_f32(dst, 0);
    const int64_t n = dst->ne[0];
    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * g = row_f32(dy, r);
        const float * v = row_f32(x, r);
        float * out = row_f32(dst, r);
        double sum_xx = 0.0, sum_xg = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const double xv = (double) ld(x, v, i);
            sum_xx += xv * xv;
            sum_xg += xv * (double) ld(dy, g, i);
        }
        const double mean_eps = sum_xx / (double) n + (double) eps;
        const double rinv     = 1.0 / sqrt(mean_eps);
        const float  a        = (float) rinv;
        const float  b        = (float) (-sum_xg / ((double) n * mean_eps) * rinv);
        for (int64_t i = 0; i < n; i++) {
            out[i] = ld(dy, g, i) * a + ld(x, v, i) * b;
        }
    }
}

//
// GET_ROWS_BACK: src0 the gradient rows, src1 their I32 indices; dst row j is
// the sum of the gradient rows whose index is j. Each thread owns a range of
// destination rows and scans all indices, so no two threads add to one row.
//

static bool supports_get_rows_back(const struct ggml_tensor * op) {
    return rows_f32(op) && ggml_is_contiguous(op) && op->src[1]->type == GGML_TYPE_I32 &&
           (op->src[0]->type == GGML_TYPE_F32 || op->src[0]->type == GGML_TYPE_F16);
}

static void forward_get_rows_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * g   = dst->src[0];
    const struct ggml_tensor * idx = dst->src[1];
    const int64_t nc = dst->ne[0];
    int64_t j0, j1;
    ggml_cpu_split_range(dst->ne[1], params->ith, params->nth, &j0, &j1);
    for (int64_t j = j0; j < j1; j++) {
        float * out = (float *) ((char *) dst->data + j*dst->nb[1]);
        for (int64_t i = 0; i < nc; i++) {
            out[i] = 0.0f;
        }
    }
    for (int64_t k = 0; k < idx->ne[0]; k++) {
        const int64_t j = *(const int32_t *) ((const char *) idx->data + k*idx->nb[0]);
        GGML_ASSERT(j >= 0 && j < dst->ne[1]);
        if (j < j0 || j >= j1) {
            continue;
        }
        float * out = (float *) ((char *) dst->data + j*dst->nb[1]);
        const char * in = (const char *) g->data + k*g->nb[1];
        for (int64_t i = 0; i < nc; i++) {
            out[i] += g->type == GGML_TYPE_F32 ? *(const float *) (in + i*g->nb[0])
                                               : GGML_FP16_TO_FP32(*(const ggml_fp16_t *) (in + i*g->nb[0]));
        }
    }
}

//
// SOFT_MAX_BACK: src0 dy, src1 y = softmax(scale * x); dx = scale * y * (dy - dot(y, dy))
//

static bool supports_soft_max_back(const struct ggml_tensor * op) {
    return supports_f32_strided(op) && ggml_get_op_params_f32(op, 1) == 0.0f; // no ALiBi, as upstream
}

static void forward_soft_max_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const struct ggml_tensor * y  = dst->src[1];
    const float scale = ggml_get_op_params_f32(dst, 0);
    const int64_t n = dst->ne[0];
    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * g = row_f32(dy, r);
        const float * p = row_f32(y, r);
        float * out = row_f32(dst, r);
        double dot = 0.0;
        for (int64_t i = 0; i < n; i++) {
            dot += (double) ld(dy, g, i) * (double) ld(y, p, i);
        }
        for (int64_t i = 0; i < n; i++) {
            out[i] = scale * ld(y, p, i) * (ld(dy, g, i) - (float) dot);
        }
    }
}

//
// CROSS_ENTROPY_LOSS: src0 logits, src1 labels;
// loss = -sum over rows of sum(labels * log_softmax(logits)) / rows
//

// log(sum(exp(x - max))) + max
static double row_logsumexp(const struct ggml_tensor * t, int64_t n, const float * x) {
    float max = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        max = MAX(max, ld(t, x, i));
    }
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        sum += exp((double) ld(t, x, i) - (double) max);
    }
    return log(sum) + (double) max;
}

static size_t work_size_cross_entropy(const struct ggml_tensor * op, int n_threads) {
    (void) op;
    return (size_t) n_threads * GGML_CPU_CACHE_LINE;
}

static bool supports_cross_entropy(const struct ggml_tensor * op) {
    return supports_f32_strided(op) && ggml_nelements(op) == 1;
}

static void forward_cross_entropy_loss(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * logits = dst->src[0];
    const struct ggml_tensor * labels = dst->src[1];
    const int64_t n  = logits->ne[0];
    const int64_t nr = ggml_nrows(logits);
    GGML_ASSERT(params->wsize >= (size_t) params->nth * GGML_CPU_CACHE_LINE);
    int64_t r0, r1;
    ggml_cpu_split_range(nr, params->ith, params->nth, &r0, &r1);
    double sum = 0.0;
    for (int64_t r = r0; r < r1; r++) {
        const float * x = row_f32(logits, r);
        const float * t = row_f32(labels, r);
        const double lse = row_logsumexp(logits, n, x);
        for (int64_t i = 0; i < n; i++) {
            const float ti = ld(labels, t, i);
            if (ti != 0.0f) { // 0 * log(0) is 0 here, not NaN
                sum += (double) ti * ((double) ld(logits, x, i) - lse);
            }
        }
    }
    *(double *) ((char *) params->wdata + (size_t) params->ith * GGML_CPU_CACHE_LINE) = sum;

    ggml_cpu_barrier(params->threadpool);

    if (params->ith == 0) {
        double total = 0.0;
        for (int t = 0; t < params->nth; t++) {
            total += *(const double *) ((const char *) params->wdata + (size_t) t * GGML_CPU_CACHE_LINE);
        }
        *(float *) dst->data = (float) (-total / (double) nr);
    }
}

// CROSS_ENTROPY_LOSS_BACK: src0 the loss gradient (1 value), src1 logits,
// src2 labels; d logits = (softmax(logits) - labels) * grad / rows
static void forward_cross_entropy_loss_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * logits = dst->src[1];
    const struct ggml_tensor * labels = dst->src[2];
    const int64_t n  = logits->ne[0];
    const int64_t nr = ggml_nrows(logits);
    const float d_by_nr = *(const float *) dst->src[0]->data / (float) nr;
    int64_t r0, r1;
    ggml_cpu_split_range(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const float * x = row_f32(logits, r);
        const float * t = row_f32(labels, r);
        float * out = row_f32(dst, r);
        const double lse = row_logsumexp(logits, n, x);
        for (int64_t i = 0; i < n; i++) {
            out[i] = ((float) exp((double) ld(logits, x, i) - lse) - ld(labels, t, i)) * d_by_nr;
        }
    }
}

static bool supports_cross_entropy_back(const struct ggml_tensor * op) {
    return supports_f32_strided(op) && ggml_nelements(op->src[0]) == 1;
}

//
// optimizer steps, in place on the parameter src0 with its gradient src1
//

static bool supports_opt_step(const struct ggml_tensor * op) {
    return supports_f32_rows_all(op) && ggml_is_contiguous(op->src[op->op == GGML_OP_OPT_STEP_ADAMW ? 4 : 2]);
}

// AdamW: src2 m, src3 v, src4 the 7 hyperparameters (see ggml_opt_step_adamw);
// the weight decay acts on w directly, not through the moments
static void forward_opt_step_adamw(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * w = dst->src[0];
    const float * hp = (const float *) dst->src[4]->data;
    const float alpha = hp[0], beta1 = hp[1], beta2 = hp[2], eps = hp[3], wd = hp[4], beta1h = hp[5], beta2h = hp[6];
    const float keep = 1.0f - alpha * wd;
    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(w), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        float * x = row_f32(w, r);
        const float * g = row_f32(dst->src[1], r);
        float * m = row_f32(dst->src[2], r);
        float * v = row_f32(dst->src[3], r);
        for (int64_t i = 0; i < w->ne[0]; i++) {
            m[i] = m[i] * beta1 + g[i] * (1.0f - beta1);
            v[i] = v[i] * beta2 + g[i] * g[i] * (1.0f - beta2);
            const float mh = m[i] * beta1h;
            const float vh = sqrtf(v[i] * beta2h) + eps;
            x[i] = x[i] * keep - alpha * mh / vh;
        }
    }
}

// SGD: src2 holds alpha and the weight decay
static void forward_opt_step_sgd(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * w = dst->src[0];
    const float * hp = (const float *) dst->src[2]->data;
    const float alpha = hp[0];
    const float keep  = 1.0f - alpha * hp[1];
    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(w), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        float * x = row_f32(w, r);
        const float * g = row_f32(dst->src[1], r);
        for (int64_t i = 0; i < w->ne[0]; i++) {
            x[i] = x[i] * keep - alpha * g[i];
        }
    }
}

void ggml_cpu_register_ops_train(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_REPEAT_BACK]   = (struct ggml_cpu_op_impl) { forward_repeat_back,   supports_repeat_back,   NULL };
    table[GGML_OP_SILU_BACK]     = (struct ggml_cpu_op_impl) { forward_silu_back,     supports_f32_strided,   NULL };
    table[GGML_OP_RMS_NORM_BACK] = (struct ggml_cpu_op_impl) { forward_rms_norm_back, supports_f32_strided,   NULL };
    table[GGML_OP_GET_ROWS_BACK] = (struct ggml_cpu_op_impl) { forward_get_rows_back, supports_get_rows_back, NULL };
    table[GGML_OP_SOFT_MAX_BACK] = (struct ggml_cpu_op_impl) { forward_soft_max_back, supports_soft_max_back, NULL };
    table[GGML_OP_CROSS_ENTROPY_LOSS] = (struct ggml_cpu_op_impl) {
        forward_cross_entropy_loss, supports_cross_entropy, work_size_cross_entropy,
    };
    table[GGML_OP_CROSS_ENTROPY_LOSS_BACK] = (struct ggml_cpu_op_impl) {
        forward_cross_entropy_loss_back, supports_cross_entropy_back, NULL,
    };
    table[GGML_OP_OPT_STEP_ADAMW] = (struct ggml_cpu_op_impl) { forward_opt_step_adamw, supports_opt_step, NULL };
    table[GGML_OP_OPT_STEP_SGD]   = (struct ggml_cpu_op_impl) { forward_opt_step_sgd,   supports_opt_step, NULL };
}
