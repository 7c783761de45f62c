// bench-mpi-allreduce: the meta device's reduction of partial sums over two
// worker ranks, run in a job of 3 ranks:
//
//     mpirun --oversubscribe -np 3 bench-mpi-allreduce [-t seconds per size]
//
// For F32 tensors of 4 KiB to 64 MiB, one on MPI1:CPU and one on MPI2:CPU,
// both summed so that each holds the sum: by the MPI backend's collective
// (ggml_backend_comm_allreduce_tensor: MPI_Iallreduce between the workers,
// rank 0 only orders it), and by the host fallback the meta device uses
// without one (each tensor read to rank 0, added there, the sum written back
// to each). GB/s is the tensor's size over the time of one reduction (as
// nccl-tests' "algbw").

#define _POSIX_C_SOURCE 200809L // clock_gettime

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
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

struct partial {
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor  * t;
};

static bool partial_on(ggml_backend_t backend, int64_t n, struct partial * p) {
    struct ggml_init_params ip = { 2 * ggml_tensor_overhead(), NULL, true };
    p->ctx = ggml_init(ip);
    p->t   = ggml_new_tensor_1d(p->ctx, GGML_TYPE_F32, n);
    p->buf = ggml_backend_alloc_ctx_tensors(p->ctx, backend);
    return p->buf != NULL;
}

static void partial_free(struct partial * p) {
    ggml_backend_buffer_free(p->buf);
    ggml_free(p->ctx);
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

int main(int argc, char ** argv) {
    double seconds = 0.5;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "-t") == 0) {
            seconds = atof(argv[i + 1]);
        }
    }
    ggml_backend_load_all();
    if (ggml_backend_mpi_rank() != 0) {
        return ggml_backend_mpi_worker(1) == GGML_STATUS_SUCCESS ? 0 : 1;
    }
    ggml_backend_dev_t d1 = ggml_backend_dev_by_name("MPI1:CPU");
    ggml_backend_dev_t d2 = ggml_backend_dev_by_name("MPI2:CPU");
    ggml_backend_t b[2] = { d1 != NULL ? ggml_backend_dev_init(d1, NULL) : NULL, d2 != NULL ? ggml_backend_dev_init(d2, NULL) : NULL };
    if (b[0] == NULL || b[1] == NULL) {
        fprintf(stderr, "bench-mpi-allreduce: needs MPI1:CPU and MPI2:CPU (mpirun -np 3)\n");
        return 1;
    }
    // ISO C has no cast from void * to a function pointer: copy the bits
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(d1);
    void * p_init      = ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_init");
    void * p_allreduce = ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_allreduce_tensor");
    void * p_free      = ggml_backend_reg_get_proc_address(reg, "ggml_backend_comm_free");
    ggml_backend_comm_init_t             comm_init = NULL;
    ggml_backend_comm_allreduce_tensor_t allreduce = NULL;
    ggml_backend_comm_free_t             comm_free = NULL;
    memcpy(&comm_init, &p_init, sizeof(p_init));
    memcpy(&allreduce, &p_allreduce, sizeof(p_allreduce));
    memcpy(&comm_free, &p_free, sizeof(p_free));
    void * comm = comm_init != NULL ? comm_init(b, 2) : NULL;
    if (comm == NULL || allreduce == NULL || comm_free == NULL) {
        fprintf(stderr, "bench-mpi-allreduce: the MPI registry has no collective of MPI1:CPU and MPI2:CPU\n");
        return 1;
    }

    printf("allreduce of f32 over MPI1:CPU and MPI2:CPU (GB/s = size / time of one reduction)\n");
    printf("| %10s | %12s | %10s | %12s | %10s | %7s |\n", "size", "MPI us", "MPI GB/s", "host us", "host GB/s", "speedup");
    for (size_t size = 4 << 10; size <= (size_t) 64 << 20; size *= 4) {
        const int64_t n = (int64_t) (size / sizeof(float));
        struct partial p[2];
        if (!partial_on(b[0], n, &p[0]) || !partial_on(b[1], n, &p[1])) {
            fprintf(stderr, "bench-mpi-allreduce: cannot allocate %zu bytes on the workers\n", size);
            return 1;
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
                } else if (!allreduce(comm, t)) {
                    fprintf(stderr, "bench-mpi-allreduce: the collective failed\n");
                    return 1;
                }
                if (++reps == 0) {
                    t0 = now();
                }
                t1 = now();
            }
            us[path] = (t1 - t0) / reps * 1e6;
        }
        char size_text[32];
        snprintf(size_text, sizeof(size_text), size >= (1 << 20) ? "%zu MiB" : "%zu KiB", size >= (1 << 20) ? size >> 20 : size >> 10);
        printf("| %10s | %12.1f | %10.3f | %12.1f | %10.3f | %6.2fx |\n", size_text, us[0], (double) size / us[0] / 1e3,
               us[1], (double) size / us[1] / 1e3, us[1] / us[0]);
        free(ha);
        free(hb);
        partial_free(&p[0]);
        partial_free(&p[1]);
    }
    comm_free(comm);
    ggml_backend_free(b[0]);
    ggml_backend_free(b[1]);
    return ggml_backend_mpi_failed() ? 1 : 0;
}
