// cpu-profile.c: printing a CPU profile (cpu-profile.h), for ggml-run's
// --profile and for GGML_CPU_PROFILE, which gives every CPU backend a profile
// of its own that is printed when the backend is freed.

#include "cpu-profile.h"
#include "ggml-impl.h"
#include "cpu-impl.h"

#include "read-bandwidth.h"   // tools/common: the read patterns of the bandwidth measure

#include <stdlib.h>
#include <string.h>
#include <time.h>

static int row_by_wall_desc(const void * a, const void * b) {
    const double wa = ((const struct ggml_cpu_profile_row *) a)->wall_ns;
    const double wb = ((const struct ggml_cpu_profile_row *) b)->wall_ns;
    return wa < wb ? 1 : wa > wb ? -1 : 0;
}

// in the host part: the kernel part keeps only its table global
const char * ggml_cpu_fusion_name(enum ggml_cpu_fusion kind) {
    switch (kind) {
        case GGML_CPU_FUSION_NONE:             return "";
        case GGML_CPU_FUSION_RMS_NORM_MUL:     return "RMS_NORM+MUL";
        case GGML_CPU_FUSION_ADD_RMS_NORM_MUL: return "ADD+RMS_NORM+MUL";
        case GGML_CPU_FUSION_MUL_MAT_GROUP:    return "MUL_MAT+MUL_MAT";
        case GGML_CPU_FUSION_MUL_MAT_GLU:      return "MUL_MAT+MUL_MAT+GLU";
    }
    return "?";
}

// "MUL_MAT q8_0", "UNARY SILU", "GLU SWIGLU", "RMS_NORM f32"
static void row_name(const struct ggml_cpu_profile_row * row, char * buf, size_t size) {
    const char * sub = NULL;
    if (row->op == GGML_OP_UNARY && row->sub_op >= 0) {
        sub = ggml_unary_op_name((enum ggml_unary_op) row->sub_op);
    } else if (row->op == GGML_OP_GLU && row->sub_op >= 0) {
        sub = ggml_glu_op_name((enum ggml_glu_op) row->sub_op);
    } else if (row->src0_type != GGML_TYPE_COUNT) {
        sub = ggml_type_name(row->src0_type);
    }
    if (row->fusion == GGML_CPU_FUSION_MUL_MAT_GLU) {
        // "MUL_MAT+MUL_MAT+SWIGLU q4_K" (sub_op: the GLU op; the type: of the weights)
        snprintf(buf, size, "%s+%s+%s %s", ggml_op_name(GGML_OP_MUL_MAT), ggml_op_name(GGML_OP_MUL_MAT),
                 row->sub_op >= 0 ? ggml_glu_op_name((enum ggml_glu_op) row->sub_op) : "GLU",
                 row->src0_type != GGML_TYPE_COUNT ? ggml_type_name(row->src0_type) : "");
        return;
    }
    if (row->fusion == GGML_CPU_FUSION_MUL_MAT_GROUP) {
        // "MUL_MAT+MUL_MAT q4_K", "MUL_MAT+MUL_MAT+MUL_MAT q4_K" (sub_op: the
        // products): the first product's weights
        size_t len = 0;
        buf[0] = '\0';
        for (int32_t k = 0; k < MAX(row->sub_op, 2) && len < size; k++) {
            len += (size_t) snprintf(buf + len, size - len, "%s%s", k > 0 ? "+" : "", ggml_op_name(GGML_OP_MUL_MAT));
        }
        if (len < size) {
            snprintf(buf + len, size - len, " %s", sub != NULL ? sub : "");
        }
        return;
    }
    if (row->fusion != GGML_CPU_FUSION_NONE) {
        snprintf(buf, size, "%s", ggml_cpu_fusion_name((enum ggml_cpu_fusion) row->fusion));
        return;
    }
    snprintf(buf, size, "%s%s%s", ggml_op_name(row->op), sub != NULL ? " " : "", sub != NULL ? sub : "");
}

void ggml_cpu_profile_print_table(FILE * f, const struct ggml_cpu_profile * p, double n_units, const char * unit,
                                  struct ggml_cpu_profile_totals * totals) {
    struct ggml_cpu_profile_totals t;
    memset(&t, 0, sizeof(t));
    t.name_width = 24;
    struct ggml_cpu_profile_row * rows = NULL;
    if (p->n_rows > 0) {
        rows = (struct ggml_cpu_profile_row *) malloc(p->n_rows * sizeof(*rows));
        if (rows == NULL) {
            fprintf(f, "profile: out of memory for its table\n");
            if (totals != NULL) {
                *totals = t;
            }
            return;
        }
        memcpy(rows, p->rows, p->n_rows * sizeof(*rows));
        qsort(rows, p->n_rows, sizeof(*rows), row_by_wall_desc);
    }
    for (size_t r = 0; r < p->n_rows; r++) {
        t.wall_ns         += rows[r].wall_ns;
        t.compute_max_ns  += rows[r].compute_max_ns;
        t.compute_mean_ns += rows[r].compute_mean_ns;
        t.bytes           += rows[r].bytes;
        t.weight_bytes    += rows[r].weight_bytes;
        t.n_nodes         += (double) rows[r].n_nodes;
    }
    const double per_ms = n_units > 0 ? 1e-6 / n_units : 0.0;
    const double unit_ms = p->graph_ns * per_ms;
    char h_n[32], h_ms[32], h_mb[32];
    snprintf(h_n,  sizeof(h_n),  "n/%s", unit);
    snprintf(h_ms, sizeof(h_ms), "ms/%s", unit);
    snprintf(h_mb, sizeof(h_mb), "MB/%s", unit);
    // the name column as wide as the longest name (24 at least)
    int w = 24;
    for (size_t r = 0; r < p->n_rows; r++) {
        char name[64];
        row_name(&rows[r], name, sizeof(name));
        w = MAX(w, (int) strlen(name));
    }
    fprintf(f, "  %-*s %7s %8s %6s %8s %8s %8s %9s %8s\n",
            w, "node kind", h_n, h_ms, "%", "kernel", "waiting", "hand-off", h_mb, "GB/s");
    for (size_t r = 0; r < p->n_rows; r++) {
        const struct ggml_cpu_profile_row * row = &rows[r];
        char name[64];
        row_name(row, name, sizeof(name));
        const double ms = row->wall_ns * per_ms;
        fprintf(f, "  %-*s %7.1f %8.3f %6.1f %8.3f %8.3f %8.3f %9.2f %8.2f\n",
                w, name, (double) row->n_nodes / n_units, ms, unit_ms > 0 ? 100.0 * ms / unit_ms : 0.0,
                row->compute_mean_ns * per_ms, (row->compute_max_ns - row->compute_mean_ns) * per_ms,
                (row->wall_ns - row->compute_max_ns) * per_ms, row->bytes / n_units * 1e-6,
                row->wall_ns > 0 ? row->bytes / row->wall_ns : 0.0);
    }
    fprintf(f, "  %-*s %7.1f %8.3f %6.1f %8.3f %8.3f %8.3f %9.2f %8.2f\n", w, "all CPU nodes",
            t.n_nodes / n_units, t.wall_ns * per_ms, unit_ms > 0 ? 100.0 * t.wall_ns * per_ms / unit_ms : 0.0,
            t.compute_mean_ns * per_ms, (t.compute_max_ns - t.compute_mean_ns) * per_ms, (t.wall_ns - t.compute_max_ns) * per_ms,
            t.bytes / n_units * 1e-6, t.wall_ns > 0 ? t.bytes / t.wall_ns : 0.0);
    fprintf(f, "  %-*s %7s %8.3f   (starting and ending the CPU graphs)\n", w, "CPU graph start/end", "",
            (p->graph_ns - t.wall_ns) * per_ms);
    free(rows);
    t.name_width = w;
    if (totals != NULL) {
        *totals = t;
    }
}

struct ggml_cpu_profile * ggml_cpu_profile_from_env(void) {
    const char * env = getenv("GGML_CPU_PROFILE");
    if (env == NULL || env[0] == '\0' || strcmp(env, "0") == 0) {
        return NULL;
    }
    struct ggml_cpu_profile * p = (struct ggml_cpu_profile *) calloc(1, sizeof(struct ggml_cpu_profile));
    if (p != NULL) {
        p->paired = strcmp(env, "paired") == 0;
    }
    return p;
}

//
// pairing
//

// 64 MiB a thread: twice the last-level cache of the hosts measured (as
// ggml-run's pairing): a token reads the weights once, which evicts them
#define PAIR_BYTES_PER_THREAD ((size_t) 64 << 20)

struct ggml_cpu_profile_probe {
    struct tools_read_probe * probe;
    int                       n_threads;
    int                       pattern;
};

struct pair_read_job {
    struct tools_read_probe * probe;
    int                       pattern;
};

static void pair_read_run(void * arg, int ith, int nth) {
    (void) nth;
    const struct pair_read_job * job = (const struct pair_read_job *) arg;
    tools_read_probe_part(job->probe, job->pattern, ith);
}

static double pair_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e9 + (double) ts.tv_nsec;
}

// one pass of the pattern on the pool: GB/s
static double pair_read(struct ggml_threadpool * tp, const struct ggml_cpu_profile_probe * pr, int pattern) {
    struct pair_read_job job = { pr->probe, pattern };
    const double t0 = pair_now_ns();
    ggml_threadpool_run(tp, pr->n_threads, pair_read_run, &job);
    const double t1 = pair_now_ns();
    return (double) tools_read_probe_bytes(pr->probe) / (t1 > t0 ? t1 - t0 : 1.0);
}

void ggml_cpu_profile_release_probe(struct ggml_cpu_profile * p) {
    if (p == NULL || p->probe == NULL) {
        return;
    }
    tools_read_probe_free(p->probe->probe);
    free(p->probe);
    p->probe = NULL;
}

void ggml_cpu_profile_pair_graph(struct ggml_cpu_profile * p, struct ggml_threadpool * tp, int n_threads,
                                 double t_start_ns, double t_end_ns, double weight_bytes) {
    if (p == NULL || !p->paired || tp == NULL || weight_bytes <= 0.0) {
        return;
    }
    if (p->probe != NULL && p->probe->n_threads != n_threads) {
        ggml_cpu_profile_release_probe(p);
    }
    if (p->probe == NULL) {
        // the buffers, once per thread count, and the fastest pattern of one pass each
        char err[256] = "";
        struct ggml_cpu_profile_probe * pr = (struct ggml_cpu_profile_probe *) calloc(1, sizeof(*pr));
        if (pr != NULL) {
            pr->probe     = tools_read_probe_init(n_threads, PAIR_BYTES_PER_THREAD, err, sizeof(err));
            pr->n_threads = n_threads;
        }
        if (pr == NULL || pr->probe == NULL) {
            GGML_LOG_WARN("%s: no reads paired with the graphs: %s\n", __func__, pr == NULL ? "out of memory" : err);
            free(pr);
            p->paired = 0;
            return;
        }
        double best = 0.0;
        for (int i = 0; i < tools_read_n_patterns(); i++) {
            const double gbs = pair_read(tp, pr, i);
            if (gbs > best) {
                best        = gbs;
                pr->pattern = i;
            }
        }
        p->probe = pr;
    }
    if (p->n_pairs == p->cap_pairs) {
        const size_t cap = p->cap_pairs > 0 ? 2 * p->cap_pairs : 64;
        struct ggml_cpu_profile_pair * pairs = (struct ggml_cpu_profile_pair *) realloc(p->pairs, cap * sizeof(*pairs));
        if (pairs == NULL) {
            p->failed = 1;
            return;
        }
        p->pairs     = pairs;
        p->cap_pairs = cap;
    }
    const double gbs = pair_read(tp, p->probe, p->probe->pattern);
    p->pairs[p->n_pairs++] = (struct ggml_cpu_profile_pair) {
        .graph_ns     = t_end_ns - t_start_ns,
        .token_ns     = p->pair_end_ns > 0.0 && p->pair_end_ns < t_start_ns ? t_end_ns - p->pair_end_ns : t_end_ns - t_start_ns,
        .weight_bytes = weight_bytes,
        .read_gbs     = gbs,
    };
    p->pair_end_ns = pair_now_ns();
}

static int double_asc(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y ? 1 : 0;
}

// the median and quartiles of v[0..n) (sorted in place)
static void quartiles(double * v, size_t n, double * q1, double * med, double * q3) {
    qsort(v, n, sizeof(double), double_asc);
    *q1  = v[n / 4];
    *med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    *q3  = v[(3 * n) / 4];
}

void ggml_cpu_profile_print_pairs(FILE * f, const struct ggml_cpu_profile * p) {
    if (p == NULL || !p->paired || p->n_pairs == 0) {
        return;
    }
    const size_t n = p->n_pairs;
    double * v = (double *) malloc(n * sizeof(double));
    if (v == NULL) {
        return;
    }
    double q1, med, q3, wb, tok;
    for (size_t i = 0; i < n; i++) {
        v[i] = p->pairs[i].weight_bytes;
    }
    quartiles(v, n, &q1, &wb, &q3);
    for (size_t i = 0; i < n; i++) {
        v[i] = p->pairs[i].token_ns;
    }
    quartiles(v, n, &q1, &tok, &q3);
    for (size_t i = 0; i < n; i++) {
        v[i] = p->pairs[i].read_gbs;
    }
    quartiles(v, n, &q1, &med, &q3);
    int streams = 0;
    size_t ahead = 0;
    tools_read_pattern(p->probe != NULL ? p->probe->pattern : 0, &streams, &ahead);
    char how[64];
    if (ahead > 0) {
        snprintf(how, sizeof(how), "prefetch %zu B ahead", ahead);
    } else {
        snprintf(how, sizeof(how), "no prefetch");
    }
    fprintf(f, "paired: %zu graphs that read weights, each followed by a read of %zu MiB on the pool's %d threads "
               "(%d stream%s each, %s)\n", n, p->probe != NULL ? tools_read_probe_bytes(p->probe->probe) >> 20 : 0,
            p->probe != NULL ? p->probe->n_threads : 0, streams, streams == 1 ? "" : "s", how);
    fprintf(f, "  the read after each: %.2f GB/s (median; quartiles %.2f-%.2f); weights %.2f MB a graph (median), "
               "%.3f ms a graph with the program's work before it (median)\n", med, q1, q3, wb * 1e-6, tok * 1e-6);
    for (int with_work = 0; with_work < 2; with_work++) {
        for (size_t i = 0; i < n; i++) {
            const struct ggml_cpu_profile_pair * q = &p->pairs[i];
            const double ns = with_work ? q->token_ns : q->graph_ns;
            v[i] = 100.0 * (q->weight_bytes / (ns > 0.0 ? ns : 1.0)) / (q->read_gbs > 0.0 ? q->read_gbs : 1e-9);
        }
        quartiles(v, n, &q1, &med, &q3);
        fprintf(f, "  %s: the weights at %.1f%% of the read after it (median; quartiles %.1f-%.1f%%)\n",
                with_work ? "each graph with the program's work before it" : "each graph", med, q1, q3);
    }
    free(v);
}

void ggml_cpu_profile_finish(struct ggml_cpu_profile * p, const char * who) {
    if (p == NULL) {
        return;
    }
    if (p->n_graphs > 0) {
        fprintf(stderr, "\nCPU profile of %s (GGML_CPU_PROFILE): %lld graphs, %d threads, %.3f ms per graph%s\n", who,
                (long long) p->n_graphs, p->n_threads, p->graph_ns * 1e-6 / (double) p->n_graphs,
                p->failed ? " (incomplete: out of memory)" : "");
        ggml_cpu_profile_print_table(stderr, p, (double) p->n_graphs, "graph", NULL);
        ggml_cpu_profile_print_pairs(stderr, p);
    }
    ggml_cpu_profile_release_probe(p);
    free(p->rows);
    free(p->pairs);
    free(p);
}
