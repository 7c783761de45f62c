// profile.c: the per-token breakdown of generation (profile.h).

#include "profile.h"
#include "membw.h"
#include "run-common.h"

#include <stdlib.h>
#include <string.h>

static ggml_backend_cpu_set_profile_t cpu_set_profile_fn(ggml_backend_t backend) {
    ggml_backend_dev_t dev = ggml_backend_get_device(backend);
    if (dev == NULL || ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU) {
        return NULL;
    }
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
    void * sym = reg != NULL ? ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_set_profile") : NULL;
    if (sym == NULL) {
        return NULL;
    }
    // ISO C has no object-to-function pointer conversion; POSIX makes the bits agree
    ggml_backend_cpu_set_profile_t fn;
    memcpy(&fn, &sym, sizeof(sym));
    return fn;
}

bool run_profile_begin(struct run_context * rc, struct run_profile * prof) {
    prof->n_cpu_backends = 0;
    for (int i = 0; i < rc->n_backends; i++) {
        ggml_backend_cpu_set_profile_t fn = cpu_set_profile_fn(rc->backends[i]);
        if (fn != NULL) {
            fn(rc->backends[i], &prof->cpu);
            prof->n_cpu_backends++;
        }
    }
    if (prof->n_cpu_backends == 0) {
        run_error("--profile: no CPU backend of this run can be profiled");
        return false;
    }
    return true;
}

void run_profile_end(struct run_context * rc, struct run_profile * prof) {
    (void) prof;
    for (int i = 0; i < rc->n_backends; i++) {
        ggml_backend_cpu_set_profile_t fn = cpu_set_profile_fn(rc->backends[i]);
        if (fn != NULL) {
            fn(rc->backends[i], NULL);
        }
    }
}

void run_profile_free(struct run_profile * prof) {
    free(prof->cpu.rows);
    memset(prof, 0, sizeof(*prof));
}

// the CPU backend's table printer (cpu-profile.h), through its registry
static ggml_backend_cpu_profile_print_table_t cpu_print_table_fn(const struct run_context * rc) {
    for (int i = 0; i < rc->n_backends; i++) {
        ggml_backend_dev_t dev = ggml_backend_get_device(rc->backends[i]);
        if (dev == NULL || ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU) {
            continue;
        }
        ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
        void * sym = reg != NULL ? ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_profile_print_table") : NULL;
        if (sym != NULL) {
            ggml_backend_cpu_profile_print_table_t fn;
            memcpy(&fn, &sym, sizeof(sym));
            return fn;
        }
    }
    return NULL;
}

static int cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

// the median and quartiles of v[0, n) (sorted in place)
static void quartiles(double * v, int n, double * q1, double * med, double * q3) {
    qsort(v, (size_t) n, sizeof(double), cmp_double);
    *q1  = v[n / 4];
    *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    *q3  = v[(3 * n) / 4 < n ? (3 * n) / 4 : n - 1];
}

static void print_paired(FILE * f, const struct run_paired * pr, double weights) {
    double * share = (double *) malloc((size_t) pr->n * sizeof(double));
    double * reads = (double *) malloc((size_t) pr->n * sizeof(double));
    if (share == NULL || reads == NULL) {
        free(share);
        free(reads);
        return;
    }
    for (int i = 0; i < pr->n; i++) {
        share[i] = 100.0 * weights / pr->token_s[i] * 1e-9 / pr->read_gbs[i];
        reads[i] = pr->read_gbs[i];
    }
    double s1, sm, s3, r1, rm, r3;
    quartiles(share, pr->n, &s1, &sm, &s3);
    quartiles(reads, pr->n, &r1, &rm, &r3);
    fprintf(f, "paired: %d tokens, each followed by a read of %zu MiB (%d threads, %d streams each, prefetch %zu B ahead)\n"
               "        at %.2f GB/s (median; quartiles %.2f-%.2f): each token reads the weights at %.1f%% of the read "
               "after it (median; quartiles %.1f-%.1f%%)\n",
            pr->n, pr->bytes >> 20, pr->n_threads, pr->streams, pr->ahead, rm, r1, r3, sm, s1, s3);
    free(share);
    free(reads);
}

void run_profile_print(FILE * f, const struct run_context * rc, const struct run_profile * prof,
                       int64_t n_tokens, double gen_ns, double bw_before, const struct run_paired * paired) {
    const struct ggml_cpu_profile * p = &prof->cpu;
    ggml_backend_cpu_profile_print_table_t print_table = cpu_print_table_fn(rc);
    if (n_tokens <= 0 || p->n_graphs == 0 || print_table == NULL) {
        fprintf(f, "profile: no CPU graph was computed while generating\n");
        return;
    }
    const double tok = (double) n_tokens;
    const double token_ms = gen_ns / tok * 1e-6;
    double n_nodes = 0.0;
    for (size_t r = 0; r < p->n_rows; r++) {
        n_nodes += (double) p->rows[r].n_nodes;
    }
    fprintf(f, "\ngeneration profile: %lld tokens, %d threads, %.3f ms per token, %.1f nodes and %.2f CPU graphs per token%s\n",
            (long long) n_tokens, p->n_threads, token_ms, n_nodes / tok, (double) p->n_graphs / tok,
            p->failed ? " (incomplete: out of memory)" : "");
    struct ggml_cpu_profile_totals t;
    print_table(f, p, tok, "tok", &t);
    const double graphs_ms = p->graph_ns / tok * 1e-6;
    fprintf(f, "  %-*s %7s %8.3f %6.1f   (scheduler, other devices, copies, logits, sampling)\n", t.name_width,
            "outside the CPU graphs", "",
            token_ms - graphs_ms, 100.0 * (token_ms - graphs_ms) / token_ms);
    const double weights = t.weight_bytes / tok;
    fprintf(f, "weights read: %.2f MB per token (of %.2f MB); at %.3f ms per token that is %.2f GB/s "
               "(in the kernels alone, %.3f ms: %.2f GB/s)\n",
            weights * 1e-6, (double) run_model_weight_bytes(rc->model) * 1e-6, token_ms, weights / (gen_ns / tok),
            t.compute_mean_ns / tok * 1e-6, t.compute_mean_ns > 0 ? weights / (t.compute_mean_ns / tok) : 0.0);
    // the limit, measured now with as many threads (the weights no longer in
    // use) and before the generation: a shared host's bandwidth moves by
    // half within minutes, so the run is set against the higher of the two
    // measures that bracket it
    const double bw_after = run_read_bandwidth(p->n_threads);
    const double bw = bw_after > bw_before ? bw_after : bw_before;
    if (bw > 0.0 && gen_ns > 0.0) {
        fprintf(f, "read bandwidth measured before / after: %.2f / %.2f GB/s (%d threads): generation reads the "
                   "weights at %.1f%% of the higher\n",
                bw_before, bw_after, p->n_threads, 100.0 * weights / (gen_ns / tok) / bw);
    }
    if (paired != NULL && paired->n > 0) {
        print_paired(f, paired, weights);
    }
}
