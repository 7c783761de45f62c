#pragma once

// membw.h: the read bandwidth of this machine, measured as ggml-run --bench
// --profile sets generation against it: n threads each read a buffer far
// larger than the caches (as a generated token reads the weights), best of a
// few passes.

#ifdef __cplusplus
extern "C" {
#endif

// GB/s read by n_threads threads; 0 (reported) when the buffers cannot be had
double run_read_bandwidth(int n_threads);

#ifdef __cplusplus
}
#endif
