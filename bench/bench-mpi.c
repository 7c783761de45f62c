// bench-mpi: the cost of the MPI backend, run in a job of 3 ranks:
//
//     mpirun --oversubscribe -np 3 bench-mpi [-s MiB] [-n splits] [-t seconds per allreduce size]
//
// Copies: rank 0 to a worker (tensor_set), a worker to rank 0 (tensor_get)
// and worker to worker (tensor_copy from MPI1:CPU to MPI2:CPU, which rank 0
// only orders), in GB/s for a tensor of -s MiB (default 64).
// Per-split overhead: a graph of one tiny node (an ADD of 16 floats)
// computed and waited for, -n times (default 2000), in microseconds per
// computation: on the local CPU backend, on MPI1:CPU with the graph
// already on the worker (sent by reference), and with a graph of a new
// structure each time (sent whole). The difference between the first two is
// what a split on another rank costs.
// Allreduce: the meta device's reduction of partial sums, for F32 tensors of
// 4 KiB to 64 MiB, one on MPI1:CPU and one on MPI2:CPU: by the MPI backend's
// collective (ggml_backend_comm_allreduce_tensor: MPI_Iallreduce between the
// workers, rank 0 only orders it) and by the host fallback the meta device
// uses without one (each read to rank 0, added there, the sum written back to
// each), each for -t seconds (default 0.5). GB/s is the tensor's size over
// the time of one reduction (as nccl-tests' "algbw").
// ggml-run's tokens/s over 1, 2 and 3 ranks come from ggml-run itself (see
// the README).

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

// n bytes of the type on the device
static bool bytes_on(ggml_backend_dev_t dev, enum ggml_type type, size_t n, struct bytes_on * b) {
    struct ggml_init_params ip = { 2 * ggml_tensor_overhead(), NULL, true };
    b->ctx = ggml_init(ip);
    b->t   = ggml_new_tensor_1d(b->ctx, type, (int64_t) (n / ggml_type_size(type)));
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
    if (d1 == NULL || d2 == NULL || !bytes_on(d1, GGML_TYPE_I8, size, &a) || !bytes_on(d2, GGML_TYPE_I8, size, &b)) {
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

// the meta device's fallback: both read to the host, added, the sum written to both
static void allreduce_on_host(struct ggml_tensor ** t, float * a, float * b) {
    const size_t nbytes = ggml_nbytes(t[0]);
    const int64_t n = ggml_nelements(t[0]);
    ggml_backend_tensor_get(t[0], a, 0, nbytes);
    ggml_backend_tensor_get(t[1], b, 0, nbytes);
    for (int64_t i = 0; i < n; i++) {
        a[i] += b[i];
    }
    ggml_backend_tensor_set(t[0], a, 0, nbytes);
    ggml_backend_tensor_set(t[1], a, 0, nbytes);
}

// the MPI registry's collective: ggml_backend_comm_* by name (ISO C has no cast from void * to a function pointer)
struct mpi_collective {
    ggml_backend_comm_init_t             init;
    ggml_backend_comm_allreduce_tensor_t allreduce;
    ggml_backend_comm_free_t             free;
};

static struct mpi_collective mpi_collective(ggml_backend_reg_t reg) {
    struct mpi_collective c = { NULL, NULL, NULL };
    void * p[3] = { ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_init"),
                    ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_allreduce_tensor"),
                    ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_free") };
    memcpy(&c.init, &p[0], sizeof(p[0]));
    memcpy(&c.allreduce, &p[1], sizeof(p[1]));
    memcpy(&c.free, &p[2], sizeof(p[2]));
    return c;
}

static void bench_allreduce(double seconds) {
    ggml_backend_dev_t d[2] = { ggml_backend_dev_by_name("MPI1:CPU"), ggml_backend_dev_by_name("MPI2:CPU") };
    ggml_backend_t b[2] = { ggml_backend_dev_init(d[0], NULL), ggml_backend_dev_init(d[1], NULL) };
    const struct mpi_collective coll = mpi_collective(ggml_backend_dev_backend_reg(d[0]));
    void * comm = b[0] != NULL && b[1] != NULL && coll.init != NULL ? coll.init(b, 2) : NULL;
    if (comm == NULL || coll.allreduce == NULL || coll.free == NULL) {
        fprintf(stderr, "bench-mpi: the MPI registry has no collective of MPI1:CPU and MPI2:CPU\n");
        exit(1);
    }
    printf("allreduce of f32 over MPI1:CPU and MPI2:CPU (GB/s = size / time of one reduction):\n");
    printf("| %10s | %12s | %10s | %12s | %10s | %7s |\n", "size", "MPI us", "MPI GB/s", "host us", "host GB/s", "speedup");
    for (size_t size = 4 << 10; size <= (size_t) 64 << 20; size *= 4) {
        struct bytes_on p[2];
        if (!bytes_on(d[0], GGML_TYPE_F32, size, &p[0]) || !bytes_on(d[1], GGML_TYPE_F32, size, &p[1])) {
            fprintf(stderr, "bench-mpi: cannot allocate %zu bytes on the workers\n", size);
            exit(1);
        }
        ggml_backend_buffer_clear(p[0].buf, 0);
        ggml_backend_buffer_clear(p[1].buf, 0);
        struct ggml_tensor * t[2] = { p[0].t, p[1].t };
        float * ha = (float *) malloc(size);
        float * hb = (float *) malloc(size);
        double us[2];
        for (int path = 0; path < 2; path++) {
            // the first is not timed: pages touched, staging memory grown
            int reps = -1;
            double t0 = now();
            double t1 = t0;
            while (reps < 3 || t1 - t0 < seconds) {
                if (path == 1) {
                    allreduce_on_host(t, ha, hb);
                } else if (!coll.allreduce(comm, t)) {
                    fprintf(stderr, "bench-mpi: the collective failed\n");
                    exit(1);
                }
                if (++reps == 0) {
                    t0 = now();
                }
                t1 = now();
            }
            us[path] = (t1 - t0) / reps * 1e6;
        }
        const bool mib = size >= (1 << 20);
        printf("| %6zu %s | %12.1f | %10.3f | %12.1f | %10.3f | %6.2fx |\n", mib ? size >> 20 : size >> 10, mib ? "MiB" : "KiB",
               us[0], (double) size / us[0] / 1e3, us[1], (double) size / us[1] / 1e3, us[1] / us[0]);
        free(ha);
        free(hb);
        bytes_free(&p[0]);
        bytes_free(&p[1]);
    }
    coll.free(comm);
    ggml_backend_free(b[0]);
    ggml_backend_free(b[1]);
}

int main(int argc, char ** argv) {
    size_t mib = 64;
    int n = 2000;
    double seconds = 0.5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-s") == 0) {
            mib = (size_t) atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "-n") == 0) {
            n = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "-t") == 0) {
            seconds = atof(argv[i + 1]);
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
    bench_allreduce(seconds);
    return ggml_backend_mpi_failed() ? 1 : 0;
}
