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

static int row_by_wall_desc(const void * a, const void * b) {
    const double wa = ((const struct ggml_cpu_profile_row *) a)->wall_ns;
    const double wb = ((const struct ggml_cpu_profile_row *) b)->wall_ns;
    return wa < wb ? 1 : wa > wb ? -1 : 0;
}

// "MUL_MAT q8_0", "UNARY silu", "GLU swiglu", "RMS_NORM f32"
static void row_name(const struct ggml_cpu_profile_row * row, char * buf, size_t size) {
    const char * sub = NULL;
    if (row->op == GGML_OP_UNARY && row->sub_op >= 0) {
        sub = ggml_unary_op_name((enum ggml_unary_op) row->sub_op);
    } else if (row->op == GGML_OP_GLU && row->sub_op >= 0) {
        sub = ggml_glu_op_name((enum ggml_glu_op) row->sub_op);
    } else if (row->src0_type != GGML_TYPE_COUNT) {
        sub = ggml_type_name(row->src0_type);
    }
    snprintf(buf, size, "%s%s%s", ggml_op_name(row->op), sub != NULL ? " " : "", sub != NULL ? sub : "");
}

void run_profile_print(FILE * f, const struct run_context * rc, const struct run_profile * prof,
                       int64_t n_tokens, double gen_ns) {
    const struct ggml_cpu_profile * p = &prof->cpu;
    if (n_tokens <= 0 || p->n_graphs == 0) {
        fprintf(f, "profile: no CPU graph was computed while generating\n");
        return;
    }
    const double tok = (double) n_tokens;
    struct ggml_cpu_profile_row * rows = NULL;
    if (p->n_rows > 0) {
        rows = (struct ggml_cpu_profile_row *) run_malloc(p->n_rows * sizeof(*rows), "the profile");
        if (rows == NULL) {
            return;
        }
        memcpy(rows, p->rows, p->n_rows * sizeof(*rows));
        qsort(rows, p->n_rows, sizeof(*rows), row_by_wall_desc);
    }

    double wall = 0.0, kmax = 0.0, kmean = 0.0, bytes = 0.0, wbytes = 0.0, nodes = 0.0;
    for (size_t r = 0; r < p->n_rows; r++) {
        wall  += rows[r].wall_ns;
        kmax  += rows[r].compute_max_ns;
        kmean += rows[r].compute_mean_ns;
        bytes += rows[r].bytes;
        wbytes += rows[r].weight_bytes;
        nodes += (double) rows[r].n_nodes;
    }
    const double token_ms = gen_ns / tok * 1e-6;
    const double weights  = wbytes / tok;

    fprintf(f, "\ngeneration profile: %lld tokens, %d threads, %.3f ms per token, %.1f nodes and %.2f CPU graphs per token%s\n",
            (long long) n_tokens, p->n_threads, token_ms, nodes / tok, (double) p->n_graphs / tok,
            p->failed ? " (incomplete: out of memory)" : "");
    fprintf(f, "  %-24s %7s %8s %6s %8s %8s %8s %9s %8s\n",
            "node kind", "n/tok", "ms/tok", "%", "kernel", "waiting", "hand-off", "MB/tok", "GB/s");
    for (size_t r = 0; r < p->n_rows; r++) {
        const struct ggml_cpu_profile_row * row = &rows[r];
        char name[64];
        row_name(row, name, sizeof(name));
        const double ms = row->wall_ns / tok * 1e-6;
        fprintf(f, "  %-24s %7.1f %8.3f %6.1f %8.3f %8.3f %8.3f %9.2f %8.2f\n",
                name, (double) row->n_nodes / tok, ms, 100.0 * ms / token_ms,
                row->compute_mean_ns / tok * 1e-6,
                (row->compute_max_ns - row->compute_mean_ns) / tok * 1e-6,
                (row->wall_ns - row->compute_max_ns) / tok * 1e-6,
                row->bytes / tok * 1e-6, row->wall_ns > 0 ? row->bytes / row->wall_ns : 0.0);
    }
    const double graphs_ms = p->graph_ns / tok * 1e-6;
    fprintf(f, "  %-24s %7.1f %8.3f %6.1f %8.3f %8.3f %8.3f %9.2f %8.2f\n", "all CPU nodes",
            nodes / tok, wall / tok * 1e-6, 100.0 * wall / tok * 1e-6 / token_ms, kmean / tok * 1e-6,
            (kmax - kmean) / tok * 1e-6, (wall - kmax) / tok * 1e-6, bytes / tok * 1e-6, wall > 0 ? bytes / wall : 0.0);
    fprintf(f, "  %-24s %7s %8.3f %6.1f   (starting and ending the CPU graphs)\n", "CPU graph start/end", "",
            graphs_ms - wall / tok * 1e-6, 100.0 * (graphs_ms - wall / tok * 1e-6) / token_ms);
    fprintf(f, "  %-24s %7s %8.3f %6.1f   (scheduler, other devices, copies, logits, sampling)\n", "outside the CPU graphs", "",
            token_ms - graphs_ms, 100.0 * (token_ms - graphs_ms) / token_ms);
    fprintf(f, "weights read: %.2f MB per token (of %.2f MB); at %.3f ms per token that is %.2f GB/s "
               "(in the kernels alone, %.3f ms: %.2f GB/s)\n",
            weights * 1e-6, (double) run_model_weight_bytes(rc->model) * 1e-6, token_ms, weights / (gen_ns / tok),
            kmean / tok * 1e-6, kmean > 0 ? weights / (kmean / tok) : 0.0);
    // the limit, measured now with as many threads (the weights no longer in use)
    const double bw = run_read_bandwidth(p->n_threads);
    if (bw > 0.0 && gen_ns > 0.0) {
        fprintf(f, "read bandwidth measured here: %.2f GB/s (%d threads): generation reads the weights at %.1f%% of it\n",
                bw, p->n_threads, 100.0 * weights / (gen_ns / tok) / bw);
    }
    free(rows);
}
