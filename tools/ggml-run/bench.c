// bench.c: prompt and generation throughput, with a progress bar.

#include "bench.h"
#include "ggml-backend.h"
#include "membw.h"
#include "profile.h"
#include "read-bandwidth.h"
#include "run-common.h"
#include "sampling.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_BAR_WIDTH 30

static void progress_draw(const char * label, int rep, int n_reps, int64_t done, int64_t total) {
    char bar[BENCH_BAR_WIDTH + 1];
    const int64_t filled = total > 0 ? done * BENCH_BAR_WIDTH / total : BENCH_BAR_WIDTH;
    for (int i = 0; i < BENCH_BAR_WIDTH; i++) {
        bar[i] = i < filled ? '#' : '.';
    }
    bar[BENCH_BAR_WIDTH] = '\0';
    printf("\r%-10s run %d/%d [%s] %lld/%lld", label, rep + 1, n_reps, bar, (long long) done, (long long) total);
    fflush(stdout);
}

static void progress_clear(void) {
    printf("\r\033[K");
    fflush(stdout);
}

static void bench_make_prompt(const struct run_context * rc, uint64_t seed, int32_t * tokens, int64_t n) {
    const struct run_vocab * vocab = &rc->model->vocab;
    uint64_t state = seed;
    for (int64_t i = 0; i < n; i++) {
        tokens[i] = (int32_t) (run_rng_uniform(&state) * (double) rc->model->hp.n_vocab);
    }
    if (n > 0 && vocab->bos >= 0) {
        tokens[0] = vocab->bos;
    }
}

// the prompt in batches of n_batch, so that the bar can move between them
static bool bench_prompt(struct run_context * rc, const struct run_bench_params * bp, const int32_t * tokens, int rep) {
    for (int64_t done = 0; done < bp->n_prompt;) {
        if (bp->progress) {
            progress_draw("prompt", rep, bp->n_reps, done, bp->n_prompt);
        }
        const int64_t n = bp->n_prompt - done < rc->params.n_batch ? bp->n_prompt - done : rc->params.n_batch;
        if (!run_decode(rc, tokens + done, n)) {
            return false;
        }
        done += n;
    }
    return true;
}

static bool bench_generate(struct run_context * rc, const struct run_bench_params * bp, int rep) {
    for (int64_t i = 0; i < bp->n_gen; i++) {
        if (bp->progress) {
            progress_draw("generate", rep, bp->n_reps, i, bp->n_gen);
        }
        const int32_t next = run_argmax(run_get_logits(rc, 0), rc->model->hp.n_vocab);
        if (!run_decode(rc, &next, 1)) {
            return false;
        }
    }
    return true;
}

// The paired phase of --profile (profile.h, struct run_paired): after the
// timed repetitions, the prompt again and n_gen tokens, each followed by one
// pass of the read measure over 64 MiB per thread (twice the last-level cache
// of the hosts measured; a token reads the weights once, which evicts them).
// The pattern is the fastest of one pass of each before the tokens. The CPU
// backends' pools are paused for each read (run_context_pause): after a graph
// their workers poll for the next one (up to 1 ms with the threadpool's
// default poll of 50) on the cores the read needs, and a read sharing them
// ran slower (each token's share 104-151% on the Zen 3 host). Paused, they
// sleep at once; the next token wakes them, which costs that token their
// wake-up: the share errs low, not high.
#define BENCH_PAIRED_BYTES ((size_t) 64 << 20)

// False only when a decode fails; without the probe's memory or threads the
// pairing is left out with a warning (pr->n = 0), as the measures before and
// after are
static bool bench_paired(struct run_context * rc, const struct run_bench_params * bp, const int32_t * tokens,
                         struct run_paired * pr) {
    char err[256] = "";
    const int n_threads = rc->params.n_threads;
    struct tools_read_probe * probe = tools_read_probe_init(n_threads, BENCH_PAIRED_BYTES, err, sizeof(err));
    pr->token_s  = probe != NULL ? (double *) run_calloc((size_t) bp->n_gen, sizeof(double), "the paired reads") : NULL;
    pr->read_gbs = probe != NULL ? (double *) run_calloc((size_t) bp->n_gen, sizeof(double), "the paired reads") : NULL;
    bool probing = pr->token_s != NULL && pr->read_gbs != NULL;
    int pattern = 0;
    double best = 0.0;
    run_context_pause(rc, true);
    for (int i = 0; probing && i < tools_read_n_patterns(); i++) {
        const double gbs = tools_read_probe_pass(probe, i, err, sizeof(err));
        probing = gbs > 0.0;
        if (gbs > best) {
            best    = gbs;
            pattern = i;
        }
    }
    run_context_pause(rc, false);
    tools_read_pattern(pattern, &pr->streams, &pr->ahead);
    bool ok = true;
    if (probing) {
        run_context_reset(rc);
        ok = bench_prompt(rc, bp, tokens, bp->n_reps - 1);
    }
    for (int64_t i = 0; probing && ok && i < bp->n_gen; i++) {
        const int64_t t0 = ggml_time_us();
        const int32_t next = run_argmax(run_get_logits(rc, 0), rc->model->hp.n_vocab);
        ok = run_decode(rc, &next, 1);
        const int64_t t1 = ggml_time_us();
        run_context_pause(rc, true);
        const double gbs = ok ? tools_read_probe_pass(probe, pattern, err, sizeof(err)) : 0.0;
        run_context_pause(rc, false);
        probing = gbs > 0.0;
        if (ok && probing) {
            pr->token_s[i]  = (double) (t1 > t0 ? t1 - t0 : 1) * 1e-6;
            pr->read_gbs[i] = gbs;
            pr->n = (int) i + 1;
        }
    }
    if (ok && !probing) {
        run_warn("--profile: no reads paired with the tokens%s%s", err[0] != '\0' ? ": " : "", err);
        pr->n = 0;
    }
    pr->n_threads = n_threads;
    pr->bytes     = probe != NULL ? tools_read_probe_bytes(probe) : 0;
    tools_read_probe_free(probe);
    return ok;
}

// the MPI backend's counters (ggml-mpi.h), read through its registry: the
// bytes rank 0 sent and received, the allreduces among the workers and the
// bytes of one worker's partial sums they added
struct bench_mpi_traffic {
    bool     have;
    uint64_t sent, received, n_allreduce, allreduce_bytes;
};

typedef void (*bench_mpi_stats_t)(uint64_t * a, uint64_t * b);

static bench_mpi_stats_t bench_mpi_fn(const char * name) {
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("MPI");
    void * sym = reg != NULL ? ggml_backend_reg_get_proc_address(reg, name) : NULL;
    bench_mpi_stats_t fn = NULL;
    if (sym != NULL) {
        memcpy(&fn, &sym, sizeof(sym)); // POSIX: object and function pointers agree
    }
    return fn;
}

static struct bench_mpi_traffic bench_mpi_read(void) {
    struct bench_mpi_traffic t = { 0 };
    bench_mpi_stats_t traffic   = bench_mpi_fn("ggml_backend_mpi_traffic_stats");
    bench_mpi_stats_t allreduce = bench_mpi_fn("ggml_backend_mpi_allreduce_stats");
    if (traffic != NULL && allreduce != NULL) {
        t.have = true;
        traffic(&t.sent, &t.received);
        allreduce(&t.n_allreduce, &t.allreduce_bytes);
    }
    return t;
}

static void bench_mpi_add(struct bench_mpi_traffic * sum, const struct bench_mpi_traffic * a, const struct bench_mpi_traffic * b) {
    sum->have             = a->have && b->have;
    sum->sent            += b->sent - a->sent;
    sum->received        += b->received - a->received;
    sum->n_allreduce     += b->n_allreduce - a->n_allreduce;
    sum->allreduce_bytes += b->allreduce_bytes - a->allreduce_bytes;
}

static void mean_std(const double * v, int n, double * mean, double * std) {
    double sum = 0.0, sq = 0.0;
    for (int i = 0; i < n; i++) {
        sum += v[i];
    }
    *mean = n > 0 ? sum / n : 0.0;
    for (int i = 0; i < n; i++) {
        sq += (v[i] - *mean) * (v[i] - *mean);
    }
    *std = n > 1 ? sqrt(sq / (n - 1)) : 0.0;
}

bool run_bench(struct run_context * rc, const struct run_bench_params * bp, struct run_bench_result * result) {
    if (bp->n_prompt <= 0 || bp->n_gen < 0 || bp->n_reps <= 0) {
        run_error("the benchmark needs a prompt of at least one token and at least one repetition");
        return false;
    }
    if (bp->n_prompt + bp->n_gen > rc->kv.n_ctx) {
        run_error("a prompt of %lld and %lld generated tokens do not fit a context of %lld",
                  (long long) bp->n_prompt, (long long) bp->n_gen, (long long) rc->kv.n_ctx);
        return false;
    }
    int32_t * tokens = (int32_t *) run_malloc((size_t) bp->n_prompt * sizeof(int32_t), "the benchmark prompt");
    double  * pp     = (double *)  run_calloc((size_t) bp->n_reps, sizeof(double), "the benchmark");
    double  * tg     = (double *)  run_calloc((size_t) bp->n_reps, sizeof(double), "the benchmark");
    bool ok = tokens != NULL && pp != NULL && tg != NULL;
    struct run_profile prof;
    memset(&prof, 0, sizeof(prof));
    double gen_ns = 0.0;
    struct bench_mpi_traffic gen_mpi = { 0 };
    if (ok) {
        bench_make_prompt(rc, bp->seed, tokens, bp->n_prompt);
        run_context_reset(rc);
        ok = run_decode(rc, tokens, 1); // warm-up: first use of the backends and weights
    }
    // the read bandwidth right before, for the profile's share (it measures again after)
    const double bw_before = ok && bp->profile && bp->n_gen > 0 ? run_read_bandwidth(rc->params.n_threads) : 0.0;
    for (int rep = 0; ok && rep < bp->n_reps; rep++) {
        run_context_reset(rc);
        const int64_t t0 = ggml_time_us();
        ok = bench_prompt(rc, bp, tokens, rep);
        const int64_t t1 = ggml_time_us();
        if (ok && bp->profile) {
            ok = run_profile_begin(rc, &prof);
        }
        const struct bench_mpi_traffic mpi0 = bench_mpi_read();
        ok = ok && bench_generate(rc, bp, rep);
        const int64_t t2 = ggml_time_us();
        const struct bench_mpi_traffic mpi1 = bench_mpi_read();
        bench_mpi_add(&gen_mpi, &mpi0, &mpi1);
        if (bp->profile) {
            run_profile_end(rc, &prof);
            gen_ns += (double) (t2 - t1) * 1e3;
        }
        pp[rep] = (double) bp->n_prompt * 1e6 / (double) (t1 > t0 ? t1 - t0 : 1);
        tg[rep] = bp->n_gen > 0 ? (double) bp->n_gen * 1e6 / (double) (t2 > t1 ? t2 - t1 : 1) : 0.0;
    }
    if (bp->progress) {
        progress_clear();
    }
    struct run_paired paired;
    memset(&paired, 0, sizeof(paired));
    if (ok && bp->profile && bp->n_gen > 0) {
        ok = bench_paired(rc, bp, tokens, &paired);
    }
    if (ok) {
        mean_std(pp, bp->n_reps, &result->pp_mean, &result->pp_std);
        mean_std(tg, bp->n_reps, &result->tg_mean, &result->tg_std);
        if (bp->profile) {
            run_profile_print(stdout, rc, &prof, bp->n_gen * bp->n_reps, gen_ns, bw_before, &paired);
        }
        const double n_tok = (double) bp->n_gen * bp->n_reps;
        if (gen_mpi.have && n_tok > 0 && (gen_mpi.sent > 0 || gen_mpi.received > 0)) {
            printf("MPI per generated token: rank 0 sent %.1f KiB and received %.1f KiB; %.1f allreduces among the "
                   "workers of %.1f KiB of partial sums each worker holds\n",
                   (double) gen_mpi.sent / n_tok / 1024.0, (double) gen_mpi.received / n_tok / 1024.0,
                   (double) gen_mpi.n_allreduce / n_tok, (double) gen_mpi.allreduce_bytes / n_tok / 1024.0);
        }
    }
    run_profile_free(&prof);
    free(paired.token_s);
    free(paired.read_gbs);
    free(tokens);
    free(pp);
    free(tg);
    return ok;
}
