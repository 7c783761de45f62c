#pragma once

// blas-impl.h: the parts of the BLAS backend and what they share.
//
//   blas-pool.c    a small pool of worker threads (weight conversion)
//   blas-vendor.c  which BLAS library is linked, and its thread count
//   blas-ops.c     MUL_MAT and OUT_PROD through cblas_sgemm, and which of
//                  them the backend takes (supports_op)
//   ggml-blas.c    the backend (stream), device and registry entry

#include "ggml.h"
#include "ggml-backend.h"

#include <stdbool.h>
#include <stddef.h>

//
// thread pool: n_threads - 1 workers sleeping on a condition variable; the
// caller of ggml_blas_pool_run is thread 0. Workers never spin, so an idle
// pool costs nothing beside the CPU backend's threads.
//

struct ggml_blas_pool;

typedef void (*ggml_blas_task_fn)(void * data, int ith, int nth);

// NULL with a log line when threads or memory cannot be had
struct ggml_blas_pool * ggml_blas_pool_new(int n_threads);
void                    ggml_blas_pool_free(struct ggml_blas_pool * pool);
int                     ggml_blas_pool_n_threads(const struct ggml_blas_pool * pool);

// runs fn(data, ith, nth) for ith = 0 .. nth - 1 (nth at most the pool's
// thread count) and returns when all have returned
void ggml_blas_pool_run(struct ggml_blas_pool * pool, ggml_blas_task_fn fn, void * data, int nth);

//
// the BLAS library, found at run time from the library that provides
// cblas_sgemm (so a module loaded with RTLD_LOCAL finds its own)
//

// "OpenBLAS", "BLIS", "MKL" or "BLAS" (unknown, e.g. the reference BLAS)
const char * ggml_blas_vendor_name(void);

// whether the library's thread count can be set
bool ggml_blas_vendor_can_set_threads(void);

// sets the library's thread count (a process-wide setting of the library);
// a no-op where it cannot be set
void ggml_blas_vendor_set_threads(int n_threads);

//
// ops
//

// scratch memory and threads of one backend, lent to the kernels
struct ggml_blas_exec {
    struct ggml_blas_pool * pool;       // NULL: one thread
    void *                  work;       // F32 copy of non-F32 weights
    size_t                  work_size;
    int                     n_threads;
};

bool ggml_blas_supports_op(const struct ggml_tensor * op);

// F32 bytes of scratch memory a node needs (0 for F32 weights)
size_t ggml_blas_work_size(const struct ggml_tensor * node);

// computes a supported MUL_MAT or OUT_PROD node; exec->work holds at least
// ggml_blas_work_size(node) bytes
void ggml_blas_compute_node(struct ggml_blas_exec * exec, struct ggml_tensor * node);
