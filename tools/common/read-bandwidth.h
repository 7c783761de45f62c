#pragma once

// read-bandwidth.h: the read bandwidth of this machine, as ggml-run --bench
// --profile and bench-matmul (and through it scripts/llama-bench-bandwidth.py)
// set generation against it: n threads each read a buffer far larger than
// the caches, as a generated token reads the weights, in the access patterns
// the matrix-vector kernels use (one and several sequential streams, with and
// without software prefetch); the best pass is the bandwidth.

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// GB/s read by n_threads threads; 0 when the buffers or the threads cannot
// be had, with the reason written to err (err_size bytes, may be 0)
double tools_read_bandwidth(int n_threads, char * err, size_t err_size);

#ifdef __cplusplus
}
#endif
