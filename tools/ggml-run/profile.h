#pragma once

// profile.h: where a generated token's time goes (ggml-run --bench --profile).
//
// While the benchmark generates, every CPU backend of the context adds the
// graphs it computes to one profile (src/ggml-cpu/cpu-profile.h: per kind of
// node, the time in the kernels, in waiting for the slowest thread and in the
// hand-off between nodes, and the bytes read and written). The report divides
// by the tokens generated and sets the weights read per token against the
// token's time: the bandwidth that generation reaches.

#include "context.h"
#include "cpu-profile.h"

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct run_profile {
    struct ggml_cpu_profile cpu;
    int                     n_cpu_backends; // that took the profile
};

// gives the profile (zeroed before its first use; what it holds is added to)
// to every CPU backend of rc; false (reported) when none takes it
bool run_profile_begin(struct run_context * rc, struct run_profile * prof);

// takes it back from them
void run_profile_end(struct run_context * rc, struct run_profile * prof);

// the report, for n_tokens generated in gen_ns nanoseconds; bw_before: the
// read bandwidth measured right before the generation (GB/s, 0: none), set
// beside the one measured when this is called
void run_profile_print(FILE * f, const struct run_context * rc, const struct run_profile * prof,
                       int64_t n_tokens, double gen_ns, double bw_before);

void run_profile_free(struct run_profile * prof);

#ifdef __cplusplus
}
#endif
