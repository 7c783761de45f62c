#pragma once

// bench.h: timing prompt processing and generation.
//
// One repetition: the cache is emptied, a prompt of n_prompt tokens (bos
// and seeded pseudo-random tokens) is decoded in batches of the context's
// n_batch, then n_gen tokens are generated greedily one at a time. Prompt
// tokens/s = n_prompt / prompt time, generation tokens/s = n_gen /
// generation time. A first, untimed decode warms up the backends. With
// progress, a bar on stdout shows how far each phase is (for terminals).
// With profile, the CPU backends time every node while generating and the
// per-token breakdown is printed to stdout (profile.h).

#include "context.h"

#ifdef __cplusplus
extern "C" {
#endif

struct run_bench_params {
    int64_t  n_prompt;
    int64_t  n_gen;
    int      n_reps;
    bool     progress;
    bool     profile;
    uint64_t seed;
};

struct run_bench_result {
    double pp_mean;   // prompt tokens/s
    double pp_std;
    double tg_mean;   // generation tokens/s
    double tg_std;
};

// False (reported) when a decode fails or the context is too small.
bool run_bench(struct run_context * rc, const struct run_bench_params * params, struct run_bench_result * result);

#ifdef __cplusplus
}
#endif
