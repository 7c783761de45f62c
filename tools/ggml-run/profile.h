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

// Generation paired with reads (bench.c): tokens generated one at a time,
// each followed by one pass of the read measure (tools/common/read-bandwidth.h)
// over buffers far larger than the caches. A shared host's bandwidth moves by
// half within seconds; a token and the read right after it see the same
// machine, so the share of each token is set against its own read.
struct run_paired {
    int      n;             // tokens paired
    double * token_s;       // each token's time (s)
    double * read_gbs;      // the read after it (GB/s)
    int      streams;       // the read's pattern: streams per thread,
    size_t   ahead;         // prefetch distance (bytes, 0: none),
    size_t   bytes;         // bytes read per pass (all threads)
    int      n_threads;
};

// the report, for n_tokens generated in gen_ns nanoseconds; bw_before: the
// read bandwidth measured right before the generation (GB/s, 0: none), set
// beside the one measured when this is called; paired: NULL, or the tokens
// paired with reads
void run_profile_print(FILE * f, const struct run_context * rc, const struct run_profile * prof,
                       int64_t n_tokens, double gen_ns, double bw_before, const struct run_paired * paired);

void run_profile_free(struct run_profile * prof);

#ifdef __cplusplus
}
#endif
