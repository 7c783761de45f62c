#pragma once

// cpu-features.h: what the CPU has and what the CPU backend's kernels use;
// NUMA placement.

#include "cpu-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_cpu_kernels;

// once, by ggml_cpu_init: the feature list for the kernel variant in use
void ggml_cpu_features_init(const struct ggml_cpu_kernels * active);

// the features the build uses, as {name, "1"} pairs ending with {NULL, NULL}
struct ggml_backend_feature * ggml_cpu_features_list(void);

#ifdef __cplusplus
}
#endif

#if defined(__linux__)
#include <sched.h>
// The cpus thread ith of a pool should run on under the NUMA strategy given to
// ggml_numa_init; false when no placement applies (one node, or disabled).
bool ggml_cpu_numa_placement(int ith, cpu_set_t * set);
#endif
