// ref-eval-train.c: the reference of the training ops, from their
// definitions: REPEAT_BACK (sum over the repetitions), SILU_BACK, RMS_NORM_BACK
// and SOFT_MAX_BACK (the derivatives of SiLU, RMS norm and softmax applied to
// dy), GET_ROWS_BACK (rows summed by index), CROSS_ENTROPY_LOSS(_BACK)
// (mean over rows of -sum(labels * log softmax(logits)), and its gradient)
// and the AdamW and SGD steps (which also update the moments in place).

#include "ref-eval.h"

#include <math.h>
#include <stdlib.h>

static int64_t n_rows(const struct ggml_tensor * t) {
    return t->ne[1] * t->ne[2] * t->ne[3];
}

static void repeat_back(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    double * s = ref_get(r, src);
    double * d = tbo_calloc((size_t) ggml_nelements(dst), sizeof(double));
    for (int64_t i3 = 0; i3 < src->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < src->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < src->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < src->ne[0]; i0++) {
        d[ref_idx(dst->ne, i0 % dst->ne[0], i1 % dst->ne[1], i2 % dst->ne[2], i3 % dst->ne[3])] += s[ref_idx(src->ne, i0, i1, i2, i3)];
    }
    ref_put(r, dst, d);
    free(s);
    free(d);
}

// the row functions: n values of row k of each source, result into y
static void rows_backward(struct tbo_ref * r, const struct ggml_tensor * dst) {
    double * a = ref_get(r, dst->src[0]);
    double * b = ref_get(r, dst->src[1]);
    const int64_t n = dst->ne[0];
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    for (int64_t k = 0; k < n_rows(dst); k++) {
        const double * g = a + k * n; // src0: dy
        const double * x = b + k * n; // src1: x (SOFT_MAX_BACK: the softmax's output)
        double * o = y + k * n;
        switch (dst->op) {
            case GGML_OP_SILU_BACK:
                // ggml_silu_back(a = dy, b = x)
                for (int64_t i = 0; i < n; i++) {
                    const double s = 1.0 / (1.0 + exp(-x[i]));
                    o[i] = g[i] * s * (1.0 + x[i] * (1.0 - s));
                }
                break;
            case GGML_OP_RMS_NORM_BACK: {
                // ggml_rms_norm_back(a = dy, b = x): dx = dy / r - x sum(x dy) / (n r^3)
                const double eps = ref_param_f32(dst, 0);
                double sxx = 0.0, sxg = 0.0;
                for (int64_t i = 0; i < n; i++) {
                    sxx += x[i] * x[i];
                    sxg += x[i] * g[i];
                }
                const double rr = sqrt(sxx / (double) n + eps);
                for (int64_t i = 0; i < n; i++) {
                    o[i] = g[i] / rr - x[i] * sxg / ((double) n * rr * rr * rr);
                }
            } break;
            case GGML_OP_SOFT_MAX_BACK: {
                // a = dy, b = y = softmax(scale x): dx = scale y (dy - sum(y dy))
                const double scale = ref_param_f32(dst, 0);
                double dot = 0.0;
                for (int64_t i = 0; i < n; i++) {
                    dot += x[i] * g[i];
                }
                for (int64_t i = 0; i < n; i++) {
                    o[i] = scale * x[i] * (g[i] - dot);
                }
            } break;
            default:
                GGML_ABORT("reference: %s is not a row backward op", ggml_op_desc(dst));
        }
    }
    ref_put(r, dst, y);
    free(a);
    free(b);
    free(y);
}

static void get_rows_back(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * g = dst->src[0];
    double * gv  = ref_get(r, g);
    double * idx = ref_get(r, dst->src[1]);
    double * d = tbo_calloc((size_t) ggml_nelements(dst), sizeof(double));
    for (int64_t k = 0; k < dst->src[1]->ne[0]; k++) {
        const int64_t row = (int64_t) idx[k];
        for (int64_t i = 0; i < g->ne[0]; i++) {
            d[row * dst->ne[0] + i] += gv[k * g->ne[0] + i];
        }
    }
    ref_put(r, dst, d);
    free(gv);
    free(idx);
    free(d);
}

static void cross_entropy(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const bool back = dst->op == GGML_OP_CROSS_ENTROPY_LOSS_BACK;
    const struct ggml_tensor * lt = dst->src[back ? 1 : 0];
    double * x = ref_get(r, lt);
    double * t = ref_get(r, dst->src[back ? 2 : 1]);
    double * dl = back ? ref_get(r, dst->src[0]) : NULL;
    const int64_t n = lt->ne[0], nr = n_rows(lt);
    double * y = tbo_malloc((size_t) (back ? ggml_nelements(dst) : 1) * sizeof(double));
    double loss = 0.0;
    for (int64_t k = 0; k < nr; k++) {
        const double * xr = x + k * n;
        double mx = -(double) INFINITY, z = 0.0;
        for (int64_t i = 0; i < n; i++) {
            mx = fmax(mx, xr[i]);
        }
        for (int64_t i = 0; i < n; i++) {
            z += exp(xr[i] - mx);
        }
        const double lse = log(z) + mx;
        for (int64_t i = 0; i < n; i++) {
            const double ti = t[k * n + i];
            if (back) {
                y[k * n + i] = (exp(xr[i] - lse) - ti) * dl[0] / (double) nr;
            } else if (ti != 0.0) {
                loss -= ti * (xr[i] - lse);
            }
        }
    }
    if (!back) {
        y[0] = loss / (double) nr;
    }
    ref_put(r, dst, y);
    free(x);
    free(t);
    free(dl);
    free(y);
}

static void opt_step(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const bool adamw = dst->op == GGML_OP_OPT_STEP_ADAMW;
    const struct ggml_tensor * wt = dst->src[0];
    double * w  = ref_get(r, wt);
    double * g  = ref_get(r, dst->src[1]);
    double * hp = ref_get(r, dst->src[adamw ? 4 : 2]);
    double * m  = adamw ? ref_get(r, dst->src[2]) : NULL;
    double * v  = adamw ? ref_get(r, dst->src[3]) : NULL;
    const int64_t n = ggml_nelements(wt);
    for (int64_t i = 0; i < n; i++) {
        if (adamw) {
            // hp: alpha, beta1, beta2, eps, wd, 1/(1 - beta1^t), 1/(1 - beta2^t)
            m[i] = hp[1] * m[i] + (1.0 - hp[1]) * g[i];
            v[i] = hp[2] * v[i] + (1.0 - hp[2]) * g[i] * g[i];
            w[i] = w[i] * (1.0 - hp[0] * hp[4]) - hp[0] * m[i] * hp[5] / (sqrt(v[i] * hp[6]) + hp[3]);
        } else {
            // hp: alpha, wd
            w[i] = w[i] * (1.0 - hp[0] * hp[1]) - hp[0] * g[i];
        }
    }
    if (adamw) {
        ref_put(r, dst->src[2], m);
        ref_put(r, dst->src[3], v);
    }
    ref_put(r, dst, w); // a view of the parameter
    free(w);
    free(g);
    free(hp);
    free(m);
    free(v);
}

void ref_op_train(struct tbo_ref * r, const struct ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_REPEAT_BACK:             repeat_back(r, dst); break;
        case GGML_OP_SILU_BACK:
        case GGML_OP_RMS_NORM_BACK:
        case GGML_OP_SOFT_MAX_BACK:           rows_backward(r, dst); break;
        case GGML_OP_GET_ROWS_BACK:           get_rows_back(r, dst); break;
        case GGML_OP_CROSS_ENTROPY_LOSS:
        case GGML_OP_CROSS_ENTROPY_LOSS_BACK: cross_entropy(r, dst); break;
        case GGML_OP_OPT_STEP_ADAMW:
        case GGML_OP_OPT_STEP_SGD:            opt_step(r, dst); break;
        default:
            GGML_ABORT("reference: %s is not a training op", ggml_op_desc(dst));
    }
}
