// sampling.c: greedy and temperature / top-k / top-p sampling.

#include "sampling.h"
#include "run-common.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

struct run_sampler_params run_sampler_default_params(void) {
    return (struct run_sampler_params) {
        .temp  = 0.0f,
        .top_k = 40,
        .top_p = 0.95f,
        .seed  = 42,
    };
}

// splitmix64: a full-period generator whose every seed is good
static uint64_t rng_next(uint64_t * state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double run_rng_uniform(uint64_t * state) {
    return (double) (rng_next(state) >> 11) * (1.0 / 9007199254740992.0); // 53 bits
}

struct run_sampler * run_sampler_new(const struct run_sampler_params * params) {
    struct run_sampler * s = (struct run_sampler *) run_calloc(1, sizeof(*s), "the sampler");
    if (s != NULL) {
        s->params = *params;
        s->state  = params->seed;
    }
    return s;
}

void run_sampler_free(struct run_sampler * s) {
    if (s != NULL) {
        free(s->cand);
        free(s);
    }
}

// The first id of the largest logit, NaNs skipped (0 when every logit is
// NaN). Two passes the compiler vectorises: the largest value in 16 lanes,
// then its first id (a scan with the best logit reloaded every step took
// about 20 us for a 32000-token vocabulary, 0.25% of a small model's token).
#define ARGMAX_LANES 16

int32_t run_argmax(const float * logits, int64_t n) {
    float lane[ARGMAX_LANES];
    for (int l = 0; l < ARGMAX_LANES; l++) {
        lane[l] = -INFINITY;
    }
    int64_t i = 0;
    for (; i + ARGMAX_LANES <= n; i += ARGMAX_LANES) {
        for (int l = 0; l < ARGMAX_LANES; l++) {
            // a NaN is never greater: it leaves the lane as it was
            lane[l] = logits[i + l] > lane[l] ? logits[i + l] : lane[l];
        }
    }
    float max = -INFINITY;
    for (int l = 0; l < ARGMAX_LANES; l++) {
        max = lane[l] > max ? lane[l] : max;
    }
    for (; i < n; i++) {
        max = logits[i] > max ? logits[i] : max;
    }
    for (int64_t j = 0; j < n; j++) {
        if (logits[j] == max) {
            return (int32_t) j;
        }
    }
    return 0; // every logit NaN
}

// larger logits first; equal ones by id, so that the order is total
static int cand_cmp(const void * a, const void * b) {
    const struct run_candidate * x = (const struct run_candidate *) a;
    const struct run_candidate * y = (const struct run_candidate *) b;
    if (x->logit != y->logit) {
        return x->logit > y->logit ? -1 : 1;
    }
    return x->id < y->id ? -1 : (x->id > y->id);
}

// p of the first n candidates (sorted) at temperature temp; returns their sum
static double softmax(struct run_candidate * c, int64_t n, double temp) {
    const double max = (double) c[0].logit;
    double sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        // equal to the largest (infinite ones included) weighs exp(0)
        c[i].p = c[i].logit == c[0].logit ? 1.0 : exp(((double) c[i].logit - max) / temp);
        sum += c[i].p;
    }
    for (int64_t i = 0; i < n; i++) {
        c[i].p /= sum;
    }
    return sum;
}

static bool sampler_fill(struct run_sampler * s, const float * logits, int64_t n_vocab, int64_t * n) {
    if (s->cap < n_vocab) {
        struct run_candidate * grown = (struct run_candidate *) realloc(s->cand, (size_t) n_vocab * sizeof(*grown));
        if (grown == NULL) {
            run_error("out of memory sampling from %lld tokens", (long long) n_vocab);
            return false;
        }
        s->cand = grown;
        s->cap  = n_vocab;
    }
    int64_t k = 0;
    for (int64_t i = 0; i < n_vocab; i++) {
        if (!isnan(logits[i])) {
            s->cand[k++] = (struct run_candidate) { .id = (int32_t) i, .logit = logits[i], .p = 0.0 };
        }
    }
    *n = k;
    return true;
}

int32_t run_sample(struct run_sampler * s, const float * logits, int64_t n_vocab) {
    const struct run_sampler_params * p = &s->params;
    if (p->temp <= 0.0f) {
        return run_argmax(logits, n_vocab);
    }
    int64_t n = 0;
    if (!sampler_fill(s, logits, n_vocab, &n)) {
        return -1;
    }
    if (n == 0) {
        return run_argmax(logits, n_vocab); // every logit is NaN: nothing to weigh
    }
    qsort(s->cand, (size_t) n, sizeof(*s->cand), cand_cmp);
    if (p->top_k > 0 && p->top_k < n) {
        n = p->top_k;
    }
    if (p->top_p < 1.0f) {
        softmax(s->cand, n, 1.0);
        double cum = 0.0;
        int64_t keep = n;
        for (int64_t i = 0; i < n; i++) {
            cum += s->cand[i].p;
            if (cum >= (double) p->top_p) {
                keep = i + 1;
                break;
            }
        }
        n = keep;
    }
    softmax(s->cand, n, (double) p->temp);
    const double r = run_rng_uniform(&s->state);
    double cum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        cum += s->cand[i].p;
        if (r < cum) {
            return s->cand[i].id;
        }
    }
    return s->cand[n - 1].id; // rounding left r above the last sum
}
