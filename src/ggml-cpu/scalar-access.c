// scalar-access.c: reading and writing single elements of tensors in host
// memory (ggml_get_f32_1d, ggml_set_i32_nd, ...), for tests and small programs.
// Integer and float element types only; quantized types have no single elements.

#include "cpu-impl.h"

static void * element_ptr(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    GGML_ASSERT(t->data != NULL && "tensor data is not in host memory");
    return (char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3];
}

static double read_element(enum ggml_type type, const void * p) {
    switch (type) {
        case GGML_TYPE_I8:   return *(const int8_t  *) p;
        case GGML_TYPE_I16:  return *(const int16_t *) p;
        case GGML_TYPE_I32:  return *(const int32_t *) p;
        case GGML_TYPE_I64:  return (double) *(const int64_t *) p;
        case GGML_TYPE_F16:  return (double) ggml_compute_fp16_to_fp32(*(const ggml_fp16_t *) p);
        case GGML_TYPE_BF16: return (double) ggml_compute_bf16_to_fp32(*(const ggml_bf16_t *) p);
        case GGML_TYPE_F32:  return (double) *(const float *) p;
        case GGML_TYPE_F64:  return *(const double *) p;
        default: GGML_ABORT("element access is not possible for type %s", ggml_type_name(type));
    }
}

static void write_element_i32(enum ggml_type type, void * p, int32_t v) {
    switch (type) {
        case GGML_TYPE_I8:   *(int8_t  *) p = (int8_t)  v; break;
        case GGML_TYPE_I16:  *(int16_t *) p = (int16_t) v; break;
        case GGML_TYPE_I32:  *(int32_t *) p = v;           break;
        case GGML_TYPE_I64:  *(int64_t *) p = v;           break;
        case GGML_TYPE_F16:  *(ggml_fp16_t *) p = ggml_compute_fp32_to_fp16((float) v); break;
        case GGML_TYPE_BF16: *(ggml_bf16_t *) p = ggml_compute_fp32_to_bf16((float) v); break;
        case GGML_TYPE_F32:  *(float  *) p = (float) v;    break;
        case GGML_TYPE_F64:  *(double *) p = v;            break;
        default: GGML_ABORT("element access is not possible for type %s", ggml_type_name(type));
    }
}

static void write_element_f32(enum ggml_type type, void * p, float v) {
    switch (type) {
        case GGML_TYPE_I8:   *(int8_t  *) p = (int8_t)  v; break;
        case GGML_TYPE_I16:  *(int16_t *) p = (int16_t) v; break;
        case GGML_TYPE_I32:  *(int32_t *) p = (int32_t) v; break;
        case GGML_TYPE_I64:  *(int64_t *) p = (int64_t) v; break;
        case GGML_TYPE_F16:  *(ggml_fp16_t *) p = ggml_compute_fp32_to_fp16(v); break;
        case GGML_TYPE_BF16: *(ggml_bf16_t *) p = ggml_compute_fp32_to_bf16(v); break;
        case GGML_TYPE_F32:  *(float  *) p = v;            break;
        case GGML_TYPE_F64:  *(double *) p = (double) v;   break;
        default: GGML_ABORT("element access is not possible for type %s", ggml_type_name(type));
    }
}

static void unravel(const struct ggml_tensor * t, int i, int64_t id[4]) {
    GGML_ASSERT(i >= 0 && i < ggml_nelements(t) && "element index out of range");
    ggml_unravel_index(t, i, &id[0], &id[1], &id[2], &id[3]);
}

int32_t ggml_get_i32_1d(const struct ggml_tensor * tensor, int i) {
    int64_t id[4];
    unravel(tensor, i, id);
    return ggml_get_i32_nd(tensor, (int) id[0], (int) id[1], (int) id[2], (int) id[3]);
}

void ggml_set_i32_1d(const struct ggml_tensor * tensor, int i, int32_t value) {
    int64_t id[4];
    unravel(tensor, i, id);
    ggml_set_i32_nd(tensor, (int) id[0], (int) id[1], (int) id[2], (int) id[3], value);
}

float ggml_get_f32_1d(const struct ggml_tensor * tensor, int i) {
    int64_t id[4];
    unravel(tensor, i, id);
    return ggml_get_f32_nd(tensor, (int) id[0], (int) id[1], (int) id[2], (int) id[3]);
}

void ggml_set_f32_1d(const struct ggml_tensor * tensor, int i, float value) {
    int64_t id[4];
    unravel(tensor, i, id);
    ggml_set_f32_nd(tensor, (int) id[0], (int) id[1], (int) id[2], (int) id[3], value);
}

int32_t ggml_get_i32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3) {
    return (int32_t) read_element(tensor->type, element_ptr(tensor, i0, i1, i2, i3));
}

void ggml_set_i32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3, int32_t value) {
    write_element_i32(tensor->type, element_ptr(tensor, i0, i1, i2, i3), value);
}

float ggml_get_f32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3) {
    return (float) read_element(tensor->type, element_ptr(tensor, i0, i1, i2, i3));
}

void ggml_set_f32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3, float value) {
    write_element_f32(tensor->type, element_ptr(tensor, i0, i1, i2, i3), value);
}

struct ggml_tensor * ggml_set_i32(struct ggml_tensor * tensor, int32_t value) {
    for (int64_t i3 = 0; i3 < tensor->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < tensor->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < tensor->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < tensor->ne[0]; i0++) {
                    write_element_i32(tensor->type, element_ptr(tensor, i0, i1, i2, i3), value);
                }
            }
        }
    }
    return tensor;
}

struct ggml_tensor * ggml_set_f32(struct ggml_tensor * tensor, float value) {
    for (int64_t i3 = 0; i3 < tensor->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < tensor->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < tensor->ne[1]; i1++) {
                for (int64_t i0 = 0; i0 < tensor->ne[0]; i0++) {
                    write_element_f32(tensor->type, element_ptr(tensor, i0, i1, i2, i3), value);
                }
            }
        }
    }
    return tensor;
}

struct ggml_tensor * ggml_new_i32(struct ggml_context * ctx, int32_t value) {
    GGML_ASSERT(!ggml_get_no_alloc(ctx) && "ggml_new_i32 needs a context that holds tensor data");
    struct ggml_tensor * result = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    ggml_set_i32(result, value);
    return result;
}

struct ggml_tensor * ggml_new_f32(struct ggml_context * ctx, float value) {
    GGML_ASSERT(!ggml_get_no_alloc(ctx) && "ggml_new_f32 needs a context that holds tensor data");
    struct ggml_tensor * result = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    ggml_set_f32(result, value);
    return result;
}
