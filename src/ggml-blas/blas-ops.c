// blas-ops.c: MUL_MAT and OUT_PROD through cblas_sgemm.
//
// Both are one sgemm per matrix of the result (dims 2 and 3, with src0
// broadcast over src1 as ggml_mul_mat and ggml_out_prod allow). Weights
// (src0) of a type other than F32 are first converted to F32, all their
// matrices at once, into the backend's work buffer, the rows shared among the
// backend's threads. Row strides are handed to BLAS as leading dimensions, so
// any view whose rows are contiguous works: permuted or strided batches,
// rows further apart than their length, a transposed src1 of OUT_PROD.
//
// What the backend takes (supports_op) follows upstream's BLAS backend:
// MUL_MAT only when the product is large enough in all three sizes for BLAS
// to beat the CPU backend's kernels (a batch of at least 32 tokens); smaller
// ones, and the products of generation, stay on the CPU.

#include "blas-impl.h"
#include "ggml-impl.h"

#include <cblas.h>
#include <limits.h>
#include <stdint.h>

// the smallest product (rows, columns, inner size) that goes to BLAS, as upstream
#define BLAS_MIN_BATCH 32

// values converted per thread at least: fewer are not worth waking a thread
#define BLAS_MIN_CONVERT_PER_THREAD 32768

//
// which nodes
//

static bool fits_blas_int(int64_t v) {
    return v >= 1 && v <= INT_MAX;
}

// rows of t are contiguous and their stride, in floats, is a valid leading
// dimension for rows of n values
static bool f32_rows_ok(const struct ggml_tensor * t, int64_t n) {
    return t->type == GGML_TYPE_F32 && t->nb[0] == sizeof(float) && t->nb[1] % sizeof(float) == 0 &&
           (int64_t) (t->nb[1] / sizeof(float)) >= n && fits_blas_int((int64_t) (t->nb[1] / sizeof(float)));
}

// src0 as weights: F32 rows used in place, or any type with rows of blocks
// that converts to F32
static bool weights_ok(const struct ggml_tensor * w) {
    if (w->type == GGML_TYPE_F32) {
        return f32_rows_ok(w, w->ne[0]);
    }
    return ggml_get_type_traits(w->type)->to_float != NULL && w->nb[0] == ggml_type_size(w->type);
}

static bool all_dims_fit(const struct ggml_tensor * t) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (!fits_blas_int(t->ne[i])) {
            return false;
        }
    }
    return true;
}

static bool mul_mat_supported(const struct ggml_tensor * op) {
    const struct ggml_tensor * w = op->src[0];
    const struct ggml_tensor * x = op->src[1];
    // a Hadamard rotation has a fast path of its own on the CPU (upstream's rule)
    if (ggml_get_op_params_i32(op, 1) == GGML_HINT_SRC0_IS_HADAMARD) {
        return false;
    }
    if (op->ne[0] < BLAS_MIN_BATCH || op->ne[1] < BLAS_MIN_BATCH || x->ne[0] < BLAS_MIN_BATCH) {
        return false;
    }
    return op->type == GGML_TYPE_F32 && all_dims_fit(op) && all_dims_fit(w) && all_dims_fit(x) &&
           weights_ok(w) && f32_rows_ok(x, x->ne[0]) && f32_rows_ok(op, op->ne[0]);
}

static bool out_prod_supported(const struct ggml_tensor * op) {
    const struct ggml_tensor * w = op->src[0];
    const struct ggml_tensor * x = op->src[1];
    if (op->type != GGML_TYPE_F32 || x->type != GGML_TYPE_F32 || !all_dims_fit(op) || !all_dims_fit(w) ||
        !all_dims_fit(x) || !weights_ok(w) || !f32_rows_ok(op, op->ne[0])) {
        return false;
    }
    // src1 as stored (rows of ne10 values) or transposed (columns of ne11)
    if (x->nb[0] == sizeof(float)) {
        return x->nb[1] % sizeof(float) == 0 && (int64_t) (x->nb[1] / sizeof(float)) >= x->ne[0] &&
               fits_blas_int((int64_t) (x->nb[1] / sizeof(float)));
    }
    return x->nb[1] == sizeof(float) && x->nb[0] % sizeof(float) == 0 &&
           (int64_t) (x->nb[0] / sizeof(float)) >= x->ne[1] && fits_blas_int((int64_t) (x->nb[0] / sizeof(float)));
}

bool ggml_blas_supports_op(const struct ggml_tensor * op) {
    switch (op->op) {
        case GGML_OP_NONE:
        case GGML_OP_RESHAPE:
        case GGML_OP_VIEW:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE:
            return true;
        case GGML_OP_MUL_MAT:
            return mul_mat_supported(op);
        case GGML_OP_OUT_PROD:
            return out_prod_supported(op);
        default:
            return false;
    }
}

size_t ggml_blas_work_size(const struct ggml_tensor * node) {
    if (node->op != GGML_OP_MUL_MAT && node->op != GGML_OP_OUT_PROD) {
        return 0;
    }
    const struct ggml_tensor * w = node->src[0];
    if (w->type == GGML_TYPE_F32) {
        return 0;
    }
    return (size_t) ggml_nelements(w) * sizeof(float);
}

//
// weights to F32
//

struct convert_job {
    const struct ggml_tensor * w;
    float *                    out;    // all matrices of w, rows of ne[0] values back to back
    ggml_to_float_t            to_float;
};

static void convert_rows(void * data, int ith, int nth) {
    const struct convert_job * job = (const struct convert_job *) data;
    const struct ggml_tensor * w = job->w;
    const int64_t n_rows = w->ne[1] * w->ne[2] * w->ne[3];
    const int64_t first = n_rows * ith / nth;
    const int64_t last  = n_rows * (ith + 1) / nth;
    for (int64_t r = first; r < last; r++) {
        const int64_t i1 = r % w->ne[1];
        const int64_t i2 = (r / w->ne[1]) % w->ne[2];
        const int64_t i3 = r / (w->ne[1] * w->ne[2]);
        const char * row = (const char *) w->data + i1*w->nb[1] + i2*w->nb[2] + i3*w->nb[3];
        job->to_float(row, job->out + r*w->ne[0], w->ne[0]);
    }
}

static void convert_weights(struct ggml_blas_exec * exec, const struct ggml_tensor * w) {
    GGML_ASSERT(exec->work_size >= (size_t) ggml_nelements(w) * sizeof(float));
    struct convert_job job = {
        .w        = w,
        .out      = (float *) exec->work,
        .to_float = ggml_get_type_traits(w->type)->to_float,
    };
    const int64_t n_values = ggml_nelements(w);
    int nth = (int) MIN((int64_t) exec->n_threads, n_values / BLAS_MIN_CONVERT_PER_THREAD);
    nth = MIN(MAX(nth, 1), (int) MIN(w->ne[1] * w->ne[2] * w->ne[3], (int64_t) INT_MAX));
    if (exec->pool == NULL || nth == 1) {
        convert_rows(&job, 0, 1);
    } else {
        ggml_blas_pool_run(exec->pool, convert_rows, &job, MIN(nth, ggml_blas_pool_n_threads(exec->pool)));
    }
}

// matrix (i2, i3) of the weights, F32, and its leading dimension
static const float * weights_matrix(const struct ggml_blas_exec * exec, const struct ggml_tensor * w,
                                    int64_t i2, int64_t i3, int * ld) {
    if (w->type == GGML_TYPE_F32) {
        *ld = (int) (w->nb[1] / sizeof(float));
        return (const float *) ((const char *) w->data + i2*w->nb[2] + i3*w->nb[3]);
    }
    *ld = (int) w->ne[0];
    return (const float *) exec->work + (i2 + i3*w->ne[2]) * w->ne[1] * w->ne[0];
}

//
// the products
//

// dst[i1, i0] = sum_k src0[i0, k] * src1[i1, k]: per matrix, D = X W^T
static void mul_mat(struct ggml_blas_exec * exec, struct ggml_tensor * dst) {
    const struct ggml_tensor * w = dst->src[0];
    const struct ggml_tensor * x = dst->src[1];
    GGML_ASSERT(dst->ne[0] == w->ne[1] && dst->ne[1] == x->ne[1] && w->ne[0] == x->ne[0]);
    GGML_ASSERT(dst->ne[2] == x->ne[2] && dst->ne[3] == x->ne[3]);
    const int64_t r2 = x->ne[2] / w->ne[2];
    const int64_t r3 = x->ne[3] / w->ne[3];
    const int ldx = (int) (x->nb[1] / sizeof(float));
    const int ldd = (int) (dst->nb[1] / sizeof(float));

    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++) {
            int ldw;
            const float * wm = weights_matrix(exec, w, i2 / r2, i3 / r3, &ldw);
            const float * xm = (const float *) ((const char *) x->data + i2*x->nb[2] + i3*x->nb[3]);
            float * dm = (float *) ((char *) dst->data + i2*dst->nb[2] + i3*dst->nb[3]);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans,
                        (int) dst->ne[1], (int) dst->ne[0], (int) w->ne[0],
                        1.0f, xm, ldx, wm, ldw, 0.0f, dm, ldd);
        }
    }
}

// dst[i1, i0] = sum_k src0[i0, k] * src1[i1, k] with k along dim 1 of both:
// per matrix, D = X^T W with X = src1 as stored (k rows), or as transposed
static void out_prod(struct ggml_blas_exec * exec, struct ggml_tensor * dst) {
    const struct ggml_tensor * w = dst->src[0];
    const struct ggml_tensor * x = dst->src[1];
    GGML_ASSERT(dst->ne[0] == w->ne[0] && dst->ne[1] == x->ne[0] && w->ne[1] == x->ne[1]);
    GGML_ASSERT(dst->ne[2] == x->ne[2] && dst->ne[3] == x->ne[3]);
    const int64_t r2 = dst->ne[2] / w->ne[2];
    const int64_t r3 = dst->ne[3] / w->ne[3];
    const bool x_rows = x->nb[0] == sizeof(float);
    const enum CBLAS_TRANSPOSE trans_x = x_rows ? CblasTrans : CblasNoTrans;
    const int ldx = (int) ((x_rows ? x->nb[1] : x->nb[0]) / sizeof(float));
    const int ldd = (int) (dst->nb[1] / sizeof(float));

    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++) {
            int ldw;
            const float * wm = weights_matrix(exec, w, i2 / r2, i3 / r3, &ldw);
            const float * xm = (const float *) ((const char *) x->data + i2*x->nb[2] + i3*x->nb[3]);
            float * dm = (float *) ((char *) dst->data + i2*dst->nb[2] + i3*dst->nb[3]);
            cblas_sgemm(CblasRowMajor, trans_x, CblasNoTrans,
                        (int) dst->ne[1], (int) dst->ne[0], (int) w->ne[1],
                        1.0f, xm, ldx, wm, ldw, 0.0f, dm, ldd);
        }
    }
}

void ggml_blas_compute_node(struct ggml_blas_exec * exec, struct ggml_tensor * node) {
    if (node->src[0]->type != GGML_TYPE_F32) {
        convert_weights(exec, node->src[0]);
    }
    ggml_blas_vendor_set_threads(exec->n_threads);
    switch (node->op) {
        case GGML_OP_MUL_MAT:
            mul_mat(exec, node);
            break;
        case GGML_OP_OUT_PROD:
            out_prod(exec, node);
            break;
        default:
            GGML_ABORT("%s: %s is not a BLAS op", __func__, ggml_op_name(node->op));
    }
}
