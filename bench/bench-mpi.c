// bench-mpi: the cost of the MPI backend, run in a job of 3 ranks:
//
//     mpirun --oversubscribe -np 3 bench-mpi [-s MiB] [-n splits]
//
// Copies: rank 0 to a worker (tensor_set), a worker to rank 0 (tensor_get)
// and worker to worker (tensor_copy from MPI1:CPU to MPI2:CPU, which rank 0
// only orders), in GB/s for a tensor of -s MiB (default 64).
// Per-split overhead: a graph of one tiny node (an ADD of 16 floats)
// computed and waited for, -n times (default 2000), in microseconds per
// computation: on the local CPU backend, on MPI1:CPU with the graph
// already on the worker (sent by reference), and with a graph of a new
// structure each time (sent whole). The difference between the first two is
// what a split on another rank costs. ggml-run's tokens/s over 1, 2 and 3
// ranks come from ggml-run itself (see the README).

#define _POSIX_C_SOURCE 200809L // clock_gettime

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

struct bytes_on {
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor  * t;
};

static bool bytes_on(ggml_backend_dev_t dev, size_t n, struct bytes_on * b) {
    struct ggml_init_params ip = { 2 * ggml_tensor_overhead(), NULL, true };
    b->ctx = ggml_init(ip);
    b->t   = ggml_new_tensor_1d(b->ctx, GGML_TYPE_I8, (int64_t) n);
    b->buf = ggml_backend_alloc_ctx_tensors_from_buft(b->ctx, ggml_backend_dev_buffer_type(dev));
    return b->buf != NULL;
}

static void bytes_free(struct bytes_on * b) {
    ggml_backend_buffer_free(b->buf);
    ggml_free(b->ctx);
}

static void bench_copies(size_t size) {
    ggml_backend_dev_t d1 = ggml_backend_dev_by_name("MPI1:CPU");
    ggml_backend_dev_t d2 = ggml_backend_dev_by_name("MPI2:CPU");
    struct bytes_on a, b;
    if (d1 == NULL || d2 == NULL || !bytes_on(d1, size, &a) || !bytes_on(d2, size, &b)) {
        fprintf(stderr, "bench-mpi: needs MPI1:CPU and MPI2:CPU with %zu bytes each (mpirun -np 3)\n", size);
        exit(1);
    }
    uint8_t * host = (uint8_t *) malloc(size);
    memset(host, 1, size);
    const int reps = 5;
    uint8_t probe;
    // one of each first, so that pages are touched
    ggml_backend_tensor_set(a.t, host, 0, size);
    ggml_backend_tensor_get(a.t, host, 0, size);
    ggml_backend_tensor_copy(a.t, b.t);
    ggml_backend_tensor_get(b.t, &probe, 0, 1);

    double t0 = now();
    for (int i = 0; i < reps; i++) {
        ggml_backend_tensor_set(a.t, host, 0, size);
    }
    ggml_backend_tensor_get(a.t, &probe, 0, 1); // ordered after the sets
    const double t_set = (now() - t0) / reps;
    t0 = now();
    for (int i = 0; i < reps; i++) {
        ggml_backend_tensor_get(a.t, host, 0, size);
    }
    const double t_get = (now() - t0) / reps;
    t0 = now();
    for (int i = 0; i < reps; i++) {
        ggml_backend_tensor_copy(a.t, b.t);
    }
    ggml_backend_tensor_get(b.t, &probe, 0, 1); // ordered after the copies
    const double t_copy = (now() - t0) / reps;
    printf("copies of %.0f MiB:\n", (double) size / (1 << 20));
    printf("  rank 0 -> MPI1:CPU (set)         %7.2f GB/s\n", (double) size / t_set / 1e9);
    printf("  MPI1:CPU -> rank 0 (get)         %7.2f GB/s\n", (double) size / t_get / 1e9);
    printf("  MPI1:CPU -> MPI2:CPU (copy)      %7.2f GB/s\n", (double) size / t_copy / 1e9);
    free(host);
    bytes_free(&a);
    bytes_free(&b);
}

// microseconds per compute + synchronize of a one-node graph; fresh: a new structure each time
static double per_compute_us(ggml_backend_t backend, int n, bool fresh) {
    struct ggml_init_params ip = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    struct ggml_tensor * y = ggml_add(ctx, x, x);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    ggml_backend_buffer_clear(buf, 0);
    ggml_backend_graph_compute(backend, g);
    double t0 = now();
    for (int i = 0; i < n; i++) {
        if (fresh) {
            // another op parameter: the description differs, so the graph is sent whole
            y->op_params[0] = i + 1;
        }
        if (ggml_backend_graph_compute(backend, g) != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "bench-mpi: a computation failed\n");
            exit(1);
        }
        ggml_backend_synchronize(backend);
    }
    const double us = (now() - t0) / n * 1e6;
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return us;
}

int main(int argc, char ** argv) {
    size_t mib = 64;
    int n = 2000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-s") == 0) {
            mib = (size_t) atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "-n") == 0) {
            n = atoi(argv[i + 1]);
        }
    }
    ggml_backend_load_all();
    if (ggml_backend_mpi_rank() != 0) {
        return ggml_backend_mpi_worker(1) == GGML_STATUS_SUCCESS ? 0 : 1;
    }
    bench_copies(mib << 20);

    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 1);
    ggml_backend_dev_t d1 = ggml_backend_dev_by_name("MPI1:CPU");
    ggml_backend_t remote = d1 != NULL ? ggml_backend_dev_init(d1, NULL) : NULL;
    if (remote == NULL) {
        fprintf(stderr, "bench-mpi: no MPI1:CPU\n");
        return 1;
    }
    const double us_cpu    = per_compute_us(cpu, n, false);
    const double us_cached = per_compute_us(remote, n, false);
    const double us_fresh  = per_compute_us(remote, n / 4 > 0 ? n / 4 : 1, true);
    printf("one-node graph, computed and waited for (%d times):\n", n);
    printf("  local CPU backend                %8.1f us\n", us_cpu);
    printf("  MPI1:CPU, graph by reference     %8.1f us\n", us_cached);
    printf("  MPI1:CPU, graph sent whole       %8.1f us\n", us_fresh);
    printf("per-split overhead of a remote rank: %.1f us\n", us_cached - us_cpu);
    ggml_backend_free(remote);
    ggml_backend_free(cpu);
    return 0;
}
