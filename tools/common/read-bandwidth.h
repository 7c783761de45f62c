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

// the same, and the index of the pattern of the best pass (best_pattern may be NULL)
double tools_read_bandwidth_best(int n_threads, int * best_pattern, char * err, size_t err_size);

// The patterns: pattern i reads *streams sequential streams per thread and
// asks for each line *ahead bytes ahead (0: no prefetch).
int  tools_read_n_patterns(void);
void tools_read_pattern(int pattern, int * streams, size_t * ahead);

// A probe: the buffers of n_threads threads (bytes_per_thread each, fewer
// where together they would exceed half the memory), allocated and touched
// once, for single passes between other work (ggml-run --bench --profile
// reads once after each generated token). NULL, with the reason in err, when
// they cannot be had.
struct tools_read_probe;
struct tools_read_probe * tools_read_probe_init(int n_threads, size_t bytes_per_thread, char * err, size_t err_size);
// one pass of a pattern: GB/s, 0 (reason in err) when the threads cannot start
double tools_read_probe_pass(struct tools_read_probe * probe, int pattern, char * err, size_t err_size);
// thread i's part of one pass of a pattern (0 <= i < the probe's threads),
// for threads the caller provides and times together (the CPU backend's
// pool: GGML_CPU_PROFILE=paired, src/ggml-cpu/cpu-profile.h)
void tools_read_probe_part(struct tools_read_probe * probe, int pattern, int i);
// bytes one pass reads (all threads)
size_t tools_read_probe_bytes(const struct tools_read_probe * probe);
void   tools_read_probe_free(struct tools_read_probe * probe);

#ifdef __cplusplus
}
#endif
