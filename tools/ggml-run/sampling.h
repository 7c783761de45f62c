#pragma once

// sampling.h: choosing the next token from logits.
//
// temp <= 0 picks the largest logit (greedy). Otherwise, in the order
// upstream's default sampler chain uses: keep the top_k largest logits
// (top_k <= 0: all), then the smallest set of the most likely tokens whose
// probabilities (at temperature 1) add up to at least top_p (top_p >= 1:
// all), then divide by temp and draw from the softmax with a seeded
// generator, so that a seed always gives the same text.

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct run_sampler_params {
    float    temp;
    int32_t  top_k;
    float    top_p;
    uint64_t seed;
};

struct run_sampler_params run_sampler_default_params(void);

struct run_candidate {
    int32_t id;
    float   logit;
    double  p;
};

struct run_sampler {
    struct run_sampler_params params;
    uint64_t                  state;  // generator state
    struct run_candidate    * cand;
    int64_t                   cap;
};

// NULL when memory runs out (reported)
struct run_sampler * run_sampler_new(const struct run_sampler_params * params);
void run_sampler_free(struct run_sampler * s);

// the next token, or -1 when memory runs out (reported)
int32_t run_sample(struct run_sampler * s, const float * logits, int64_t n_vocab);

// the index of the largest value (the first of equals); NaNs never win
int32_t run_argmax(const float * logits, int64_t n);

// a uniform double in [0, 1) from the generator
double run_rng_uniform(uint64_t * state);

#ifdef __cplusplus
}
#endif
