// ops-pool.c: POOL_1D, POOL_2D and POOL_2D_BACK (max and average pooling).
//
// Positions of a window outside the input (padding) are skipped. POOL_1D's
// average divides by the number of values inside the input, POOL_2D's by the
// whole window k0*k1 (upstream's definitions); a window entirely outside the
// input gives 0 (average) or -FLT_MAX (max). Each output row is written by
// one thread; POOL_2D_BACK splits the planes, whose windows may overlap only
// within a plane.

#include "cpu-impl.h"

#include <float.h>

static inline float pool_load(enum ggml_type type, const char * p) {
    return type == GGML_TYPE_F32 ? *(const float *) p : GGML_FP16_TO_FP32(*(const ggml_fp16_t *) p);
}

static bool supports_pool(const struct ggml_tensor * op) {
    const enum ggml_op_pool kind = (enum ggml_op_pool) ggml_get_op_params_i32(op, 0);
    const struct ggml_tensor * src = op->src[0];
    return (kind == GGML_OP_POOL_MAX || kind == GGML_OP_POOL_AVG) &&
           (src->type == GGML_TYPE_F32 || src->type == GGML_TYPE_F16) && op->type == GGML_TYPE_F32;
}

static void forward_pool_1d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const enum ggml_op_pool kind = (enum ggml_op_pool) ggml_get_op_params_i32(dst, 0);
    const int k = ggml_get_op_params_i32(dst, 1);
    const int s = ggml_get_op_params_i32(dst, 2);
    const int p = ggml_get_op_params_i32(dst, 3);

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        const char * in = (const char *) src->data + i1*src->nb[1] + i2*src->nb[2] + i3*src->nb[3];
        char * out = (char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];
        for (int64_t o = 0; o < dst->ne[0]; o++) {
            float acc = kind == GGML_OP_POOL_MAX ? -FLT_MAX : 0.0f;
            int count = 0;
            for (int64_t j = o*s - p; j < o*s - p + k; j++) {
                if (j < 0 || j >= src->ne[0]) {
                    continue;
                }
                const float v = pool_load(src->type, in + j*src->nb[0]);
                acc = kind == GGML_OP_POOL_MAX ? MAX(acc, v) : acc + v;
                count++;
            }
            if (kind == GGML_OP_POOL_AVG) {
                acc = count > 0 ? acc / (float) count : 0.0f;
            }
            *(float *)(out + o*dst->nb[0]) = acc;
        }
    }
}

struct pool2d_params {
    enum ggml_op_pool kind;
    int k0, k1, s0, s1, p0, p1;
};

static struct pool2d_params pool2d_params_of(const struct ggml_tensor * dst) {
    return (struct pool2d_params) {
        .kind = (enum ggml_op_pool) ggml_get_op_params_i32(dst, 0),
        .k0 = ggml_get_op_params_i32(dst, 1), .k1 = ggml_get_op_params_i32(dst, 2),
        .s0 = ggml_get_op_params_i32(dst, 3), .s1 = ggml_get_op_params_i32(dst, 4),
        .p0 = ggml_get_op_params_i32(dst, 5), .p1 = ggml_get_op_params_i32(dst, 6),
    };
}

static void forward_pool_2d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const struct pool2d_params q = pool2d_params_of(dst);

    int64_t r0, r1;
    ggml_cpu_split_range(ggml_nrows(dst), params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t oy = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        const char * plane = (const char *) src->data + i2*src->nb[2] + i3*src->nb[3];
        char * out = (char *) dst->data + oy*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];
        for (int64_t ox = 0; ox < dst->ne[0]; ox++) {
            float acc = q.kind == GGML_OP_POOL_MAX ? -FLT_MAX : 0.0f;
            for (int64_t y = oy*q.s1 - q.p1; y < oy*q.s1 - q.p1 + q.k1; y++) {
                if (y < 0 || y >= src->ne[1]) {
                    continue;
                }
                for (int64_t x = ox*q.s0 - q.p0; x < ox*q.s0 - q.p0 + q.k0; x++) {
                    if (x < 0 || x >= src->ne[0]) {
                        continue;
                    }
                    const float v = pool_load(src->type, plane + x*src->nb[0] + y*src->nb[1]);
                    acc = q.kind == GGML_OP_POOL_MAX ? MAX(acc, v) : acc + v;
                }
            }
            if (q.kind == GGML_OP_POOL_AVG) {
                acc /= (float) (q.k0 * q.k1);
            }
            *(float *)(out + ox*dst->nb[0]) = acc;
        }
    }
}

// POOL_2D_BACK: src0 the gradient of the pooled output, src1 the forward
// input; the max gradient goes to the first position holding the window's maximum
static bool supports_pool_2d_back(const struct ggml_tensor * op) {
    const enum ggml_op_pool kind = (enum ggml_op_pool) ggml_get_op_params_i32(op, 0);
    return (kind == GGML_OP_POOL_MAX || kind == GGML_OP_POOL_AVG) && op->src[0]->type == GGML_TYPE_F32 &&
           op->src[1]->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32;
}

static void pool_2d_back_plane(const struct pool2d_params * q, const struct ggml_tensor * grad, const struct ggml_tensor * af,
                               struct ggml_tensor * dst, int64_t i2, int64_t i3) {
    char * out = (char *) dst->data + i2*dst->nb[2] + i3*dst->nb[3];
    const char * fwd = (const char *) af->data + i2*af->nb[2] + i3*af->nb[3];
    for (int64_t y = 0; y < dst->ne[1]; y++) {
        for (int64_t x = 0; x < dst->ne[0]; x++) {
            *(float *)(out + x*dst->nb[0] + y*dst->nb[1]) = 0.0f;
        }
    }
    for (int64_t oy = 0; oy < grad->ne[1]; oy++) {
        for (int64_t ox = 0; ox < grad->ne[0]; ox++) {
            const float g = *(const float *)((const char *) grad->data + ox*grad->nb[0] + oy*grad->nb[1] + i2*grad->nb[2] + i3*grad->nb[3]);
            int64_t best_x = -1, best_y = -1;
            float best = -FLT_MAX;
            for (int64_t y = oy*q->s1 - q->p1; y < oy*q->s1 - q->p1 + q->k1; y++) {
                if (y < 0 || y >= dst->ne[1]) {
                    continue;
                }
                for (int64_t x = ox*q->s0 - q->p0; x < ox*q->s0 - q->p0 + q->k0; x++) {
                    if (x < 0 || x >= dst->ne[0]) {
                        continue;
                    }
                    float * o = (float *)(out + x*dst->nb[0] + y*dst->nb[1]);
                    if (q->kind == GGML_OP_POOL_AVG) {
                        *o += g / (float) (q->k0 * q->k1);
                        continue;
                    }
                    const float v = *(const float *)(fwd + x*af->nb[0] + y*af->nb[1]);
                    if (v > best) {
                        best = v;
                        best_x = x;
                        best_y = y;
                    }
                }
            }
            if (q->kind == GGML_OP_POOL_MAX && best_x >= 0) {
                *(float *)(out + best_x*dst->nb[0] + best_y*dst->nb[1]) += g;
            }
        }
    }
}

static void forward_pool_2d_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct pool2d_params q = pool2d_params_of(dst);
    int64_t r0, r1;
    ggml_cpu_split_range(dst->ne[2] * dst->ne[3], params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        pool_2d_back_plane(&q, dst->src[0], dst->src[1], dst, r % dst->ne[2], r / dst->ne[2]);
    }
}

void ggml_cpu_register_ops_pool(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_POOL_1D]      = (struct ggml_cpu_op_impl) { forward_pool_1d,      supports_pool,         NULL };
    table[GGML_OP_POOL_2D]      = (struct ggml_cpu_op_impl) { forward_pool_2d,      supports_pool,         NULL };
    table[GGML_OP_POOL_2D_BACK] = (struct ggml_cpu_op_impl) { forward_pool_2d_back, supports_pool_2d_back, NULL };
}
