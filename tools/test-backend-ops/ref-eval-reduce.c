// ref-eval-reduce.c: reductions, sorting and the row normalisations.

#include "ref-eval.h"

#include <math.h>
#include <stdlib.h>

void ref_op_sum(struct tbo_ref * r, const struct ggml_tensor * dst) {
    double * x = ref_get(r, dst->src[0]);
    const int64_t n = ggml_nelements(dst->src[0]);
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += x[i];
    }
    ref_put(r, dst, &s);
    free(x);
}

// SUM_ROWS and MEAN: one value per row
void ref_op_sum_rows(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    double * x = ref_get(r, src);
    const int64_t nc = src->ne[0];
    const int64_t nr = ggml_nrows(src);
    double * y = tbo_malloc((size_t) nr * sizeof(double));
    for (int64_t row = 0; row < nr; row++) {
        double s = 0.0;
        for (int64_t i = 0; i < nc; i++) {
            s += x[row*nc + i];
        }
        y[row] = dst->op == GGML_OP_MEAN ? s / (double) nc : s;
    }
    ref_put(r, dst, y);
    free(y);
    free(x);
}

// the index of the first largest value of each row
void ref_op_argmax(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    double * x = ref_get(r, src);
    const int64_t nc = src->ne[0];
    const int64_t nr = ggml_nrows(src);
    double * y = tbo_malloc((size_t) nr * sizeof(double));
    for (int64_t row = 0; row < nr; row++) {
        int64_t best = 0;
        for (int64_t i = 1; i < nc; i++) {
            if (x[row*nc + i] > x[row*nc + best]) {
                best = i;
            }
        }
        y[row] = (double) best;
    }
    ref_put(r, dst, y);
    free(y);
    free(x);
}

void ref_op_count_equal(struct tbo_ref * r, const struct ggml_tensor * dst) {
    double * a = ref_get(r, dst->src[0]);
    double * b = ref_get(r, dst->src[1]);
    const int64_t n = ggml_nelements(dst->src[0]);
    double count = 0.0;
    for (int64_t i = 0; i < n; i++) {
        count += a[i] == b[i] ? 1.0 : 0.0;
    }
    ref_put(r, dst, &count);
    free(b);
    free(a);
}

//
// ARGSORT (every index, in the requested order) and TOP_K (the indices of the k
// largest values, in descending order; backends may return them in any order)
//

struct sort_item {
    double  v;
    int64_t i;
};

// ties keep the index order, so that the result is defined
static int cmp_asc(const void * pa, const void * pb) {
    const struct sort_item * a = pa;
    const struct sort_item * b = pb;
    if (a->v != b->v) {
        return a->v < b->v ? -1 : 1;
    }
    return a->i < b->i ? -1 : a->i > b->i ? 1 : 0;
}

static int cmp_desc(const void * pa, const void * pb) {
    const struct sort_item * a = pa;
    const struct sort_item * b = pb;
    if (a->v != b->v) {
        return a->v > b->v ? -1 : 1;
    }
    return a->i < b->i ? -1 : a->i > b->i ? 1 : 0;
}

void ref_op_argsort(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const bool desc = dst->op == GGML_OP_TOP_K || ref_param_i32(dst, 0) == GGML_SORT_ORDER_DESC;
    const int64_t nc = src->ne[0];
    const int64_t nr = ggml_nrows(src);
    const int64_t k  = dst->ne[0];
    double * x = ref_get(r, src);
    double * y = tbo_malloc((size_t) (nr * k) * sizeof(double));
    struct sort_item * items = tbo_malloc((size_t) nc * sizeof(struct sort_item));
    for (int64_t row = 0; row < nr; row++) {
        for (int64_t i = 0; i < nc; i++) {
            items[i] = (struct sort_item) { .v = x[row*nc + i], .i = i };
        }
        qsort(items, (size_t) nc, sizeof(items[0]), desc ? cmp_desc : cmp_asc);
        for (int64_t i = 0; i < k; i++) {
            y[row*k + i] = (double) items[i].i;
        }
    }
    ref_put(r, dst, y);
    free(items);
    free(y);
    free(x);
}

//
// NORM: (x - mean) / sqrt(var + eps); RMS_NORM: x / sqrt(mean(x^2) + eps);
// L2_NORM: x / max(|x|, eps)
//

void ref_op_norm(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const double eps = ref_param_f32(dst, 0);
    double * x = ref_get(r, src);
    const int64_t nc = src->ne[0];
    const int64_t nr = ggml_nrows(src);
    for (int64_t row = 0; row < nr; row++) {
        double * v = x + row*nc;
        switch (dst->op) {
            case GGML_OP_NORM: {
                double mean = 0.0;
                for (int64_t i = 0; i < nc; i++) {
                    mean += v[i];
                }
                mean /= (double) nc;
                double var = 0.0;
                for (int64_t i = 0; i < nc; i++) {
                    var += (v[i] - mean) * (v[i] - mean);
                }
                var /= (double) nc;
                const double scale = 1.0 / sqrt(var + eps);
                for (int64_t i = 0; i < nc; i++) {
                    v[i] = (v[i] - mean) * scale;
                }
            } break;
            case GGML_OP_RMS_NORM: {
                double ss = 0.0;
                for (int64_t i = 0; i < nc; i++) {
                    ss += v[i] * v[i];
                }
                const double scale = 1.0 / sqrt(ss / (double) nc + eps);
                for (int64_t i = 0; i < nc; i++) {
                    v[i] *= scale;
                }
            } break;
            case GGML_OP_L2_NORM: {
                double ss = 0.0;
                for (int64_t i = 0; i < nc; i++) {
                    ss += v[i] * v[i];
                }
                const double scale = 1.0 / fmax(sqrt(ss), eps);
                for (int64_t i = 0; i < nc; i++) {
                    v[i] *= scale;
                }
            } break;
            default:
                GGML_ABORT("reference: op %s is not a norm", ggml_op_desc(dst));
        }
    }
    ref_put(r, dst, x);
    free(x);
}
