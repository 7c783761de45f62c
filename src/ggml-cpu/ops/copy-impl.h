#pragma once

//
// copy-impl.h: what the files of the copy op family share.
//
//   copy-engine.c  element conversions between types, row conversions and the
//                  strided copy engine behind DUP, CPY, CONT (and SET)
//   ops-rows.c     GET_ROWS, SET_ROWS
//   ops-copy.c     SET, REPEAT, CONCAT, PAD, ARANGE and the registration
//
// A "strided tensor" below is a tensor's memory seen through its type, shape
// and byte strides. Quantized tensors are addressed in elements along dim 0
// like the others, but only at block boundaries, and nb[0] is the stride of
// one block.
//

#include "cpu-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_cpu_strided {
    char *         data;
    enum ggml_type type;
    int64_t        ne[GGML_MAX_DIMS];
    size_t         nb[GGML_MAX_DIMS];
};

static inline struct ggml_cpu_strided ggml_cpu_strided_of(const struct ggml_tensor * t) {
    struct ggml_cpu_strided s = {
        .data = (char *) t->data,
        .type = t->type,
        .ne   = { t->ne[0], t->ne[1], t->ne[2], t->ne[3] },
        .nb   = { t->nb[0], t->nb[1], t->nb[2], t->nb[3] },
    };
    return s;
}

// Elements staged through F32 scratch at a time by the conversions that need
// it (to and from quantized types, pairs without a direct converter). A
// multiple of every block size.
#define GGML_CPU_CVT_CHUNK 1024

// scratch bytes for n_threads threads that each stage GGML_CPU_CVT_CHUNK floats
size_t ggml_cpu_cvt_work_size(int n_threads);

// this thread's staging buffer of GGML_CPU_CVT_CHUNK floats in params->wdata
float * ggml_cpu_cvt_scratch(const struct ggml_compute_params * params);

// n elements from src (stride ss bytes) to dst (stride ds bytes), converted
typedef void (*ggml_cpu_run_cvt_t)(const char * GGML_RESTRICT src, size_t ss, char * GGML_RESTRICT dst, size_t ds,
                                   int64_t n, bool use_ref);

// n elements of size bytes each from src (stride ss) to dst (stride ds), unconverted
void ggml_cpu_copy_run_bytes(const char * src, size_t ss, char * dst, size_t ds, int64_t n, size_t size);

// the converter of a pair of non-quantized types (same type included), or NULL
ggml_cpu_run_cvt_t ggml_cpu_run_converter(enum ggml_type src, enum ggml_type dst);

// true if ggml_cpu_convert_row converts rows of type src into rows of type dst
bool ggml_cpu_can_convert_row(enum ggml_type src, enum ggml_type dst);

// One row of n elements from src (element stride ss) to dst (element stride
// ds). A quantized side must hold whole blocks contiguously (its stride is
// ignored) and n must be a multiple of its block size. tmp: a staging buffer
// of GGML_CPU_CVT_CHUNK floats, used when no direct converter exists.
void ggml_cpu_convert_row(enum ggml_type st, const char * src, size_t ss,
                          enum ggml_type dt, char * dst, size_t ds,
                          int64_t n, float * tmp, bool use_ref);

// True if ggml_cpu_copy can copy src into dst. Both must have the same number
// of elements; element k of src in row-major order lands at element k of dst.
bool ggml_cpu_copy_supported(const struct ggml_cpu_strided * src, const struct ggml_cpu_strided * dst);

// Thread params->ith's share of the copy of src into dst (see
// ggml_cpu_copy_supported). tmp: this thread's staging buffer, needed only
// when one side is quantized and the other is not.
void ggml_cpu_copy(const struct ggml_compute_params * params,
                   const struct ggml_cpu_strided * src, const struct ggml_cpu_strided * dst, float * tmp);

// true if src and dst hold the same bytes in the same layout (an in-place copy)
bool ggml_cpu_copy_is_noop(const struct ggml_cpu_strided * src, const struct ggml_cpu_strided * dst);

// op entries (DUP, CPY and CONT share one; GET_ROWS and SET_ROWS in ops-rows.c)
void   ggml_cpu_forward_dup     (const struct ggml_compute_params * params, struct ggml_tensor * dst);
bool   ggml_cpu_supports_dup    (const struct ggml_tensor * op);
size_t ggml_cpu_work_size_dup   (const struct ggml_tensor * op, int n_threads);

void   ggml_cpu_forward_get_rows  (const struct ggml_compute_params * params, struct ggml_tensor * dst);
bool   ggml_cpu_supports_get_rows (const struct ggml_tensor * op);
size_t ggml_cpu_work_size_get_rows(const struct ggml_tensor * op, int n_threads);

void   ggml_cpu_forward_set_rows  (const struct ggml_compute_params * params, struct ggml_tensor * dst);
bool   ggml_cpu_supports_set_rows (const struct ggml_tensor * op);
size_t ggml_cpu_work_size_set_rows(const struct ggml_tensor * op, int n_threads);

#ifdef __cplusplus
}
#endif
