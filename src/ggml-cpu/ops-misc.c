// ops-misc.c: the small ops of upstream's later additions: ADD_ID, CUMSUM,
// DIAG, FILL, TRI, SOLVE_TRI and GROUP_NORM (DIAG_MASK_ZERO shares the
// kernel of DIAG_MASK_INF in ops-norm.c).
//
// F32 throughout (FILL also F16), as upstream's CPU backend. Work is split
// between threads by whole rows, matrices or groups, so that every result
// is computed by one thread in a fixed order, whatever the thread count.
// Sums that run over many elements (CUMSUM, GROUP_NORM) accumulate in double.

#include "cpu-impl.h"
#include "row-iter.h"

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
        for (int64_t i = 0; i < n; i++) {
            if (dst->type == GGML_TYPE_F32) {
                *(float *) (z + i*dst->nb[0]) = c;
            } else {
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

static bool tri_keeps(enum ggml_tri_type type, int64_t i0, int64_t i1) {
    switch (type) {
        case GGML_TRI_TYPE_LOWER:      return i0 <  i1;
        case GGML_TRI_TYPE_LOWER_DIAG: return i0 <= i1;
        case GGML_TRI_TYPE_UPPER:      return i0 >  i1;
        case GGML_TRI_TYPE_UPPER_DIAG: return i0 >= i1;
    }
    GGML_ABORT("invalid tri type %d", (int) type);
}

static void forward_tri(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const enum ggml_tri_type type = (enum ggml_tri_type) ggml_get_op_params_i32(dst, 0);
    const int64_t n = dst->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    struct cpu_row_iter it = cpu_row_iter_at(dst, r0);
    for (int64_t r = r0; r < r1; r++, cpu_row_iter_next(&it)) {
        for (int64_t i = 0; i < n; i++) {
            *f32_at(dst, i, it.i1, it.i2, it.i3) = tri_keeps(type, i, it.i1) ? *f32_at(src, i, it.i1, it.i2, it.i3) : 0.0f;
        }
    }
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

void ggml_cpu_register_ops_misc(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_ADD_ID] = (struct ggml_cpu_op_impl) { .forward = forward_add_id, .supports = supports_add_id };
    table[GGML_OP_CUMSUM] = (struct ggml_cpu_op_impl) { .forward = forward_cumsum, .supports = supports_f32_1 };
    table[GGML_OP_DIAG]   = (struct ggml_cpu_op_impl) { .forward = forward_diag,   .supports = supports_f32_1 };
    table[GGML_OP_FILL]   = (struct ggml_cpu_op_impl) { .forward = forward_fill,   .supports = supports_fill };
    table[GGML_OP_TRI]    = (struct ggml_cpu_op_impl) { .forward = forward_tri,    .supports = supports_f32_1 };
    table[GGML_OP_SOLVE_TRI]  = (struct ggml_cpu_op_impl) { .forward = forward_solve_tri,  .supports = supports_solve_tri };
    table[GGML_OP_GROUP_NORM] = (struct ggml_cpu_op_impl) { .forward = forward_group_norm, .supports = supports_group_norm };
}
