#pragma once

//
// ggml-blas.h: the BLAS backend. Matrix products (MUL_MAT, OUT_PROD) through
// the system's BLAS library (OpenBLAS, BLIS, ...), on tensors in host memory;
// every other op is left to the CPU backend by the scheduler. Its device,
// "BLAS", is of type GGML_BACKEND_DEVICE_TYPE_ACCEL and uses the CPU's buffer
// types, so the scheduler copies nothing between it and the CPU.
//

#include "ggml.h"
#include "ggml-backend.h"

#ifdef  __cplusplus
extern "C" {
#endif

    // a new BLAS backend (stream); NULL with a log line on failure
    GGML_BACKEND_API ggml_backend_t ggml_backend_blas_init(void);

    GGML_BACKEND_API bool ggml_backend_is_blas(ggml_backend_t backend);

    // Threads that convert weights to F32 before a product; for OpenBLAS and
    // BLIS also the threads of the BLAS library itself during the backend's
    // products.
    GGML_BACKEND_API void ggml_backend_blas_set_n_threads(ggml_backend_t backend_blas, int n_threads);

    GGML_BACKEND_API ggml_backend_reg_t ggml_backend_blas_reg(void);

#ifdef  __cplusplus
}
#endif
