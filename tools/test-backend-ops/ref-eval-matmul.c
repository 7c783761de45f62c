// ref-eval-matmul.c: matrix products in double precision, on the exact (dequantized)
// inputs: no rounding of the activations to the weights' dot product type.

#include "ref-eval.h"

#include <stdlib.h>

// dst[i0, i1, i2, i3] = sum_k a[k, i0, i2 / (ne2/ne02), i3 / (ne3/ne03)] * b[k, i1, i2, i3]
void ref_op_mul_mat(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int64_t k  = a->ne[0];
    const int64_t r2 = b->ne[2] / a->ne[2];
    const int64_t r3 = b->ne[3] / a->ne[3];
    double * xa = ref_get(r, a);
    double * xb = ref_get(r, b);
    const int64_t * ne = dst->ne;
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                const double * rb = xb + ref_idx(b->ne, 0, i1, i2, i3);
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    const double * ra = xa + ref_idx(a->ne, 0, i0, i2 / r2, i3 / r3);
                    double s = 0.0;
                    for (int64_t j = 0; j < k; j++) {
                        s += ra[j] * rb[j];
                    }
                    y[ref_idx(ne, i0, i1, i2, i3)] = s;
                }
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(xb);
    free(xa);
}

// as: [k, m, n_mats]; b: [k, 1 or n_used, n_tokens]; ids: [n_used, n_tokens];
// dst[:, e, t] = as[:, :, ids[e, t]] * b[:, e % b->ne[1], t]
void ref_op_mul_mat_id(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * as  = dst->src[0];
    const struct ggml_tensor * b   = dst->src[1];
    const struct ggml_tensor * ids = dst->src[2];
    const int64_t k = as->ne[0];
    const int64_t m = as->ne[1];
    double * xa = ref_get(r, as);
    double * xb = ref_get(r, b);
    double * xi = ref_get(r, ids);
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    for (int64_t t = 0; t < ids->ne[1]; t++) {
        for (int64_t e = 0; e < ids->ne[0]; e++) {
            const int64_t expert = (int64_t) xi[ref_idx(ids->ne, e, t, 0, 0)];
            GGML_ASSERT(expert >= 0 && expert < as->ne[2]);
            const double * rb = xb + ref_idx(b->ne, 0, e % b->ne[1], t, 0);
            for (int64_t i0 = 0; i0 < m; i0++) {
                const double * ra = xa + ref_idx(as->ne, 0, i0, expert, 0);
                double s = 0.0;
                for (int64_t j = 0; j < k; j++) {
                    s += ra[j] * rb[j];
                }
                y[ref_idx(dst->ne, i0, e, t, 0)] = s;
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(xi);
    free(xb);
    free(xa);
}

// dst[i0, i1, i2, i3] = sum_j a[i0, j, i2 / (ne2/ne02), i3 / (ne3/ne03)] * b[i1, j, i2, i3]
void ref_op_out_prod(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int64_t k  = a->ne[1];
    const int64_t r2 = dst->ne[2] / a->ne[2];
    const int64_t r3 = dst->ne[3] / a->ne[3];
    double * xa = ref_get(r, a);
    double * xb = ref_get(r, b);
    const int64_t * ne = dst->ne;
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    double s = 0.0;
                    for (int64_t j = 0; j < k; j++) {
                        s += xa[ref_idx(a->ne, i0, j, i2 / r2, i3 / r3)] * xb[ref_idx(b->ne, i1, j, i2, i3)];
                    }
                    y[ref_idx(ne, i0, i1, i2, i3)] = s;
                }
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(xb);
    free(xa);
}
