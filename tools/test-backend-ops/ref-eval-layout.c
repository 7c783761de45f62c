// ref-eval-layout.c: ops that move values: copies, rows, repeat, concat, set/acc,
// padding, arange and the causal mask.

#include "ref-eval.h"

#include <math.h>
#include <stdlib.h>

// DUP, CONT, CPY: the values in logical order into the destination's logical order
// (the shapes may differ; the counts are equal)
void ref_op_copy(struct tbo_ref * r, const struct ggml_tensor * dst) {
    GGML_ASSERT(ggml_nelements(dst) == ggml_nelements(dst->src[0]));
    if (ggml_is_quantized(dst->type) && dst->type == dst->src[0]->type) {
        ref_copy_blocks(r, dst, dst->src[0]);
        return;
    }
    double * x = ref_get(r, dst->src[0]);
    ref_put(r, dst, x);
    free(x);
}

// dst[:, i10, i11, i12] = src0[:, rows[i10, i11, i12], i11, i12]
void ref_op_get_rows(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    double * x    = ref_get(r, src0);
    double * rows = ref_get(r, src1);
    const int64_t nc = src0->ne[0];
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    for (int64_t i12 = 0; i12 < src1->ne[2]; i12++) {
        for (int64_t i11 = 0; i11 < src1->ne[1]; i11++) {
            for (int64_t i10 = 0; i10 < src1->ne[0]; i10++) {
                const int64_t row = (int64_t) rows[ref_idx(src1->ne, i10, i11, i12, 0)];
                GGML_ASSERT(row >= 0 && row < src0->ne[1]);
                memcpy(y + ref_idx(dst->ne, 0, i10, i11, i12), x + ref_idx(src0->ne, 0, row, i11, i12), (size_t) nc * sizeof(double));
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(rows);
    free(x);
}

// row i01 of src (batch i02, i03) goes to row ids[i01, i02 % ne11, i03 % ne12] of dst;
// the other rows of dst keep their values
void ref_op_set_rows(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const struct ggml_tensor * ids = dst->src[1];
    double * x   = ref_get(r, src);
    double * idx = ref_get(r, ids);
    for (int64_t i03 = 0; i03 < src->ne[3]; i03++) {
        for (int64_t i02 = 0; i02 < src->ne[2]; i02++) {
            for (int64_t i01 = 0; i01 < src->ne[1]; i01++) {
                const int64_t row = (int64_t) idx[ref_idx(ids->ne, i01, i02 % ids->ne[1], i03 % ids->ne[2], 0)];
                GGML_ASSERT(row >= 0 && row < dst->ne[1]);
                ref_put_row(r, dst, row, i02, i03, x + ref_idx(src->ne, 0, i01, i02, i03));
            }
        }
    }
    free(idx);
    free(x);
}

void ref_op_repeat(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    double * x = ref_get(r, src);
    const int64_t * ne = dst->ne;
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    y[ref_idx(ne, i0, i1, i2, i3)] =
                        x[ref_idx(src->ne, i0 % src->ne[0], i1 % src->ne[1], i2 % src->ne[2], i3 % src->ne[3])];
                }
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(x);
}

// a quantized concat moves whole blocks
static void concat_blocks(struct tbo_ref * r, const struct ggml_tensor * dst, int dim) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int64_t bs = ggml_blck_size(dst->type);
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0 += bs) {
                    const int64_t d[4] = { i0, i1, i2, i3 };
                    int64_t s[4] = { i0, i1, i2, i3 };
                    if (s[dim] < a->ne[dim]) {
                        ref_copy_block(r, dst, d, a, s);
                    } else {
                        s[dim] -= a->ne[dim];
                        ref_copy_block(r, dst, d, b, s);
                    }
                }
            }
        }
    }
}

void ref_op_concat(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int dim = ref_param_i32(dst, 0);
    if (ggml_is_quantized(dst->type)) {
        concat_blocks(r, dst, dim);
        return;
    }
    double * xa = ref_get(r, a);
    double * xb = ref_get(r, b);
    const int64_t * ne = dst->ne;
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    int64_t i[4] = { i0, i1, i2, i3 };
                    double v;
                    if (i[dim] < a->ne[dim]) {
                        v = xa[ref_idx(a->ne, i[0], i[1], i[2], i[3])];
                    } else {
                        i[dim] -= a->ne[dim];
                        v = xb[ref_idx(b->ne, i[0], i[1], i[2], i[3])];
                    }
                    y[ref_idx(ne, i0, i1, i2, i3)] = v;
                }
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(xb);
    free(xa);
}

// SET and ACC: src1 written into (SET) or added to (ACC) the window of the
// contiguous src0 given in bytes by op_params nb1, nb2, nb3 and offset
void ref_op_set_acc(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    GGML_ASSERT(ggml_is_contiguous(a));
    const size_t nb1    = (size_t) ref_param_i32(dst, 0);
    const size_t nb2    = (size_t) ref_param_i32(dst, 1);
    const size_t nb3    = (size_t) ref_param_i32(dst, 2);
    const size_t offset = (size_t) ref_param_i32(dst, 3);
    const size_t es     = ggml_element_size(a);

    double * y  = ref_get(r, a);
    double * xb = ref_get(r, b);
    const int64_t n = ggml_nelements(a);
    for (int64_t i3 = 0; i3 < b->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < b->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < b->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < b->ne[0]; i0++) {
                    const size_t byte = offset + (size_t) i0*es + (size_t) i1*nb1 + (size_t) i2*nb2 + (size_t) i3*nb3;
                    GGML_ASSERT(byte % es == 0 && (int64_t) (byte / es) < n);
                    const int64_t k = (int64_t) (byte / es);
                    const double v = xb[ref_idx(b->ne, i0, i1, i2, i3)];
                    y[k] = dst->op == GGML_OP_ACC ? y[k] + v : v;
                }
            }
        }
    }
    ref_put(r, dst, y);
    free(xb);
    free(y);
}

// zeros around the source: op_params lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3
void ref_op_pad(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const bool circular = ref_param_i32(dst, 8) != 0; // every index taken modulo the source's size
    int64_t lp[4];
    for (int d = 0; d < 4; d++) {
        lp[d] = ref_param_i32(dst, 2*d);
    }
    double * x = ref_get(r, src);
    const int64_t * ne = dst->ne;
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    int64_t j[4] = { i0 - lp[0], i1 - lp[1], i2 - lp[2], i3 - lp[3] };
                    bool inside = true;
                    for (int d = 0; d < 4; d++) {
                        if (circular) {
                            j[d] = ((j[d] % src->ne[d]) + src->ne[d]) % src->ne[d];
                        }
                        inside = inside && j[d] >= 0 && j[d] < src->ne[d];
                    }
                    y[ref_idx(ne, i0, i1, i2, i3)] = inside ? x[ref_idx(src->ne, j[0], j[1], j[2], j[3])] : 0.0;
                }
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(x);
}

void ref_op_arange(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const double start = ref_param_f32(dst, 0);
    const double step  = ref_param_f32(dst, 2);
    const int64_t n = ggml_nelements(dst);
    double * y = tbo_malloc((size_t) n * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        y[i] = start + (double) i * step;
    }
    ref_put(r, dst, y);
    free(y);
}

// -inf (DIAG_MASK_INF) or 0 (DIAG_MASK_ZERO) above the diagonal shifted right by n_past
void ref_op_diag_mask_inf(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const int64_t n_past = ref_param_i32(dst, 0);
    const double masked = dst->op == GGML_OP_DIAG_MASK_ZERO ? 0.0 : -(double) INFINITY;
    double * x = ref_get(r, dst->src[0]);
    const int64_t * ne = dst->ne;
    for (int64_t i3 = 0; i3 < ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < ne[0]; i0++) {
                    if (i0 > n_past + i1) {
                        x[ref_idx(ne, i0, i1, i2, i3)] = masked;
                    }
                }
            }
        }
    }
    ref_put(r, dst, x);
    free(x);
}
