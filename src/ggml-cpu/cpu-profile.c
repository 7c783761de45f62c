// cpu-profile.c: printing a CPU profile (cpu-profile.h), for ggml-run's
// --profile and for GGML_CPU_PROFILE, which gives every CPU backend a profile
// of its own that is printed when the backend is freed.

#include "cpu-profile.h"
#include "ggml-impl.h"
#include "cpu-impl.h"

#include <stdlib.h>
#include <string.h>

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
    return (struct ggml_cpu_profile *) calloc(1, sizeof(struct ggml_cpu_profile));
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
    }
    free(p->rows);
    free(p);
}
