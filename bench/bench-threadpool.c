#define _POSIX_C_SOURCE 200809L
// bench-threadpool: the CPU backend's cost per node, with nodes too small to
// matter (an ADD of 16 floats), so what is timed is the dispatch: the thread
// pool waking, one barrier per node, the abort-callback poll.
//
//   usage: bench-threadpool [n_nodes=2000] [reps=200] [threads=1,2,4]
// Prints the best time per graph and per node for each thread count, and
// the same graph computed back to back versus after the workers fell asleep.
// Times are taken in ns, so that small graphs show fixed costs per graph
// (such as the backend's lock) too.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// the best time of reps computations, in ns
static int64_t best_of(ggml_backend_t cpu, struct ggml_cgraph * gf, int reps, int sleep_us) {
    int64_t best = INT64_MAX;
    for (int r = 0; r < reps; r++) {
        if (sleep_us > 0) {
            struct timespec ts = { 0, (long) sleep_us * 1000 };
            nanosleep(&ts, NULL);
        }
        const int64_t t0 = now_ns();
        ggml_backend_graph_compute(cpu, gf);
        const int64_t dt = now_ns() - t0;
        best = dt < best ? dt : best;
    }
    return best;
}

int main(int argc, char ** argv) {
    const int n_nodes = argc > 1 ? atoi(argv[1]) : 2000;
    const int reps    = argc > 2 ? atoi(argv[2]) : 200;
    const char * list = argc > 3 ? argv[3] : "1,2,4";

    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_init_params params = { ((size_t) n_nodes + 16) * ggml_tensor_overhead() + ggml_graph_overhead_custom((size_t) n_nodes + 16, false), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    struct ggml_tensor * cur = x;
    for (int i = 0; i < n_nodes; i++) {
        cur = ggml_add(ctx, cur, x);
    }
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, (size_t) n_nodes + 16, false);
    ggml_build_forward_expand(gf, cur);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    ggml_backend_buffer_clear(buf, 0);

    printf("%d ADD nodes of 16 floats, best of %d\n", n_nodes, reps);
    for (const char * p = list; *p != '\0'; ) {
        char * end = NULL;
        const long n_threads = strtol(p, &end, 10);
        if (end == p || n_threads < 1) {
            fprintf(stderr, "bench-threadpool: bad thread list '%s'\n", list);
            return 1;
        }
        p = *end == ',' ? end + 1 : end;
        ggml_backend_cpu_set_n_threads(cpu, (int) n_threads);
        ggml_backend_graph_compute(cpu, gf); // warm: creates the pool
        const int64_t hot  = best_of(cpu, gf, reps, 0);
        const int64_t cold = best_of(cpu, gf, reps / 10 + 1, 20000); // workers asleep after 20 ms
        printf("threads %ld: %10.2f us per graph, %6.3f us per node (back to back); %8.1f us after the workers slept\n",
               n_threads, hot / 1e3, hot / 1e3 / n_nodes, cold / 1e3);
    }

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(cpu);
    return 0;
}
