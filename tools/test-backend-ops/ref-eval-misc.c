// ref-eval-misc.c: the small ops of upstream's later additions in double
// precision (ADD_ID, CUMSUM, DIAG, FILL, TRI, SOLVE_TRI, GROUP_NORM), each
// written from its definition, on dense arrays in logical order.

#include "ref-eval.h"

#include <math.h>
#include <stdlib.h>

// a[:, i1, i2, i3] + b[:, ids[i1, i2]]
void ref_op_add_id(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * b = dst->src[1];
    const struct ggml_tensor * ids = dst->src[2];
    double * x  = ref_get(r, dst->src[0]);
    double * y  = ref_get(r, b);
    double * id = ref_get(r, ids);
    const int64_t * ne = dst->ne;
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                const int64_t row = (int64_t) id[ref_idx(ids->ne, i1, i2, 0, 0)];
                GGML_ASSERT(row >= 0 && row < b->ne[1]);
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    x[ref_idx(ne, i0, i1, i2, i3)] += y[ref_idx(b->ne, i0, row, 0, 0)];
                }
            }
        }
    }
    ref_put(r, dst, x);
    free(id);
    free(y);
    free(x);
}

void ref_op_cumsum(struct tbo_ref * r, const struct ggml_tensor * dst) {
    double * x = ref_get(r, dst->src[0]);
    const int64_t n = dst->ne[0];
    const int64_t rows = ggml_nrows(dst);
    for (int64_t row = 0; row < rows; row++) {
        for (int64_t i = 1; i < n; i++) {
            x[row*n + i] += x[row*n + i - 1];
        }
    }
    ref_put(r, dst, x);
    free(x);
}

void ref_op_diag(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    double * x = ref_get(r, src);
    double * y = tbo_calloc((size_t) ggml_nelements(dst), sizeof(double));
    const int64_t * ne = dst->ne;
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i = 0; i < ne[0]; i++) {
                y[ref_idx(ne, i, i, i2, i3)] = x[ref_idx(src->ne, i, 0, i2, i3)];
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(x);
}

void ref_op_fill(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const int64_t n = ggml_nelements(dst);
    double * y = tbo_malloc((size_t) n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        y[i] = ref_param_f32(dst, 0);
    }
    ref_put(r, dst, y);
    free(y);
}

void ref_op_tri(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const enum ggml_tri_type type = (enum ggml_tri_type) ref_param_i32(dst, 0);
    double * x = ref_get(r, dst->src[0]);
    const int64_t * ne = dst->ne;
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    bool keep = false;
                    switch (type) {
                        case GGML_TRI_TYPE_LOWER:      keep = i0 <  i1; break;
                        case GGML_TRI_TYPE_LOWER_DIAG: keep = i0 <= i1; break;
                        case GGML_TRI_TYPE_UPPER:      keep = i0 >  i1; break;
                        case GGML_TRI_TYPE_UPPER_DIAG: keep = i0 >= i1; break;
                    }
                    if (!keep) {
                        x[ref_idx(ne, i0, i1, i2, i3)] = 0.0;
                    }
                }
            }
        }
    }
    ref_put(r, dst, x);
    free(x);
}

// A X = B by forward substitution, one right-hand side (column c) at a time:
// A[i1 = row][i0 = column] is lower triangular, B and X [k columns, n rows]
void ref_op_solve_tri(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * A = dst->src[0];
    double * a = ref_get(r, A);
    double * b = ref_get(r, dst->src[1]);
    double * x = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    const int64_t * ne = dst->ne;
    const int64_t n = A->ne[0];
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t c = 0; c < ne[0]; c++) {
                for (int64_t i = 0; i < n; i++) {
                    double s = b[ref_idx(ne, c, i, i2, i3)];
                    for (int64_t t = 0; t < i; t++) {
                        s -= a[ref_idx(A->ne, t, i, i2, i3)] * x[ref_idx(ne, c, t, i2, i3)];
                    }
                    x[ref_idx(ne, c, i, i2, i3)] = s / a[ref_idx(A->ne, i, i, i2, i3)];
                }
            }
        }
    }
    ref_put(r, dst, x);
    free(x);
    free(b);
    free(a);
}

// groups of ceil(ne2 / n_groups) channels, each normalised over dims 0 and 1 and its channels
void ref_op_group_norm(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const int64_t n_groups = ref_param_i32(dst, 0);
    const double  eps      = ref_param_f32(dst, 1);
    double * x = ref_get(r, dst->src[0]);
    const int64_t * ne = dst->ne;
    const int64_t per_group = (ne[2] + n_groups - 1) / n_groups;
    const int64_t plane = ne[0] * ne[1];
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t c0 = 0; c0 < ne[2]; c0 += per_group) {
            const int64_t c1 = c0 + per_group < ne[2] ? c0 + per_group : ne[2];
            double * g = x + ref_idx(ne, 0, 0, c0, i3);
            const int64_t n = plane * (c1 - c0);
            double mean = 0.0;
            for (int64_t i = 0; i < n; i++) {
                mean += g[i];
            }
            mean /= (double) n;
            double var = 0.0;
            for (int64_t i = 0; i < n; i++) {
                var += (g[i] - mean) * (g[i] - mean);
            }
            var /= (double) n;
            for (int64_t i = 0; i < n; i++) {
                g[i] = (g[i] - mean) / sqrt(var + eps);
            }
        }
    }
    ref_put(r, dst, x);
    free(x);
}

// sum_h relu(q[:, h, t, s] . k[:, 0, j, s]) w[h, t, 0, s] + mask[j, t, 0, s % ne33]
void ref_op_lightning_indexer(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * Q = dst->src[0], * K = dst->src[1], * W = dst->src[2], * M = dst->src[3];
    double * q = ref_get(r, Q), * k = ref_get(r, K), * w = ref_get(r, W), * m = ref_get(r, M);
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    for (int64_t s = 0; s < Q->ne[3]; s++) {
        for (int64_t t = 0; t < Q->ne[2]; t++) {
            for (int64_t j = 0; j < K->ne[2]; j++) {
                double score = 0.0;
                for (int64_t h = 0; h < Q->ne[1]; h++) {
                    double dot = 0.0;
                    for (int64_t i = 0; i < Q->ne[0]; i++) {
                        dot += q[ref_idx(Q->ne, i, h, t, s)] * k[ref_idx(K->ne, i, 0, j, s)];
                    }
                    score += fmax(dot, 0.0) * w[ref_idx(W->ne, h, t, 0, s)];
                }
                y[ref_idx(dst->ne, j, t, 0, s)] = score + m[ref_idx(M->ne, j, t, 0, s % M->ne[3])];
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(m);
    free(w);
    free(k);
    free(q);
}

// DSV4_HC_COMB, DSV4_HC_PRE, DSV4_HC_POST (hc streams; comb[d, s] with d the destination)
void ref_op_dsv4_hc(struct tbo_ref * r, const struct ggml_tensor * dst) {
    double * a = ref_get(r, dst->src[0]);
    double * b = ref_get(r, dst->src[1]);
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    if (dst->op == GGML_OP_DSV4_HC_COMB) {
        const struct ggml_tensor * mixes = dst->src[0];
        double * base = ref_get(r, dst->src[2]);
        const double eps = ref_param_f32(dst, 0);
        const int n_iter = ref_param_i32(dst, 1);
        const int64_t hc = dst->ne[0];
        double c[64];
        GGML_ASSERT(hc * hc <= 64);
        for (int64_t t = 0; t < mixes->ne[1]; t++) {
            for (int64_t s = 0; s < hc; s++) {
                double mx = -(double) INFINITY, sum = 0.0;
                for (int64_t d = 0; d < hc; d++) {
                    const int64_t i = 2*hc + d + hc*s;
                    c[d + hc*s] = a[t*mixes->ne[0] + i] * b[2] + base[i];
                    mx = fmax(mx, c[d + hc*s]);
                }
                for (int64_t d = 0; d < hc; d++) {
                    sum += exp(c[d + hc*s] - mx);
                }
                for (int64_t d = 0; d < hc; d++) {
                    c[d + hc*s] = exp(c[d + hc*s] - mx) / sum + eps;
                }
            }
            for (int it = 0; it < 2*n_iter - 1; it++) {
                const bool over_src = it % 2 == 0; // first over the sources, then alternating
                for (int64_t x = 0; x < hc; x++) {
                    double sum = eps;
                    for (int64_t z = 0; z < hc; z++) {
                        sum += over_src ? c[x + hc*z] : c[z + hc*x];
                    }
                    for (int64_t z = 0; z < hc; z++) {
                        if (over_src) {
                            c[x + hc*z] /= sum;
                        } else {
                            c[z + hc*x] /= sum;
                        }
                    }
                }
            }
            for (int64_t i = 0; i < hc*hc; i++) {
                y[t*hc*hc + i] = c[i];
            }
        }
        free(base);
    } else if (dst->op == GGML_OP_DSV4_HC_PRE) {
        const struct ggml_tensor * x = dst->src[0];
        for (int64_t t = 0; t < x->ne[2]; t++) {
            for (int64_t i = 0; i < x->ne[0]; i++) {
                double sum = 0.0;
                for (int64_t h = 0; h < x->ne[1]; h++) {
                    sum += a[ref_idx(x->ne, i, h, t, 0)] * b[t*x->ne[1] + h];
                }
                y[t*x->ne[0] + i] = sum;
            }
        }
    } else {
        const struct ggml_tensor * x = dst->src[0], * res = dst->src[1];
        double * post = ref_get(r, dst->src[2]);
        double * comb = ref_get(r, dst->src[3]);
        const int64_t n = x->ne[0], hc = res->ne[1];
        for (int64_t t = 0; t < x->ne[1]; t++) {
            for (int64_t d = 0; d < hc; d++) {
                for (int64_t i = 0; i < n; i++) {
                    double sum = a[t*n + i] * post[t*hc + d];
                    for (int64_t s = 0; s < hc; s++) {
                        sum += b[ref_idx(res->ne, i, s, t, 0)] * comb[(t*hc + s)*hc + d];
                    }
                    y[ref_idx(dst->ne, i, d, t, 0)] = sum;
                }
            }
        }
        free(comb);
        free(post);
    }
    ref_put(r, dst, y);
    free(y);
    free(b);
    free(a);
}
