// test-mpi-fail: a worker that stops answering or dies in the middle of a
// run, or during an allreduce, and one that computes for longer than the
// timeout. Run by tests/mpi/run-fail.sh under mpirun -np 3 with a short
// GGML_MPI_TIMEOUT:
//     test-mpi-fail stop|kill|slow|allreduce-stop|allreduce-kill DIR
// Every rank writes its pid to DIR/rank<r>.pid (the script checks that none
// is left running afterwards). Rank 0 computes a graph on MPI1:CPU and
// MPI2:CPU a few times, then stops (SIGSTOP) or kills (SIGKILL) rank 1 and
// computes on until the backend reports the failure, which it prints with
// the time it took; it then exits non-zero, and the MPI backend ends the
// job (MPI_Abort) so that the stopped worker does not stay behind. (After a
// SIGKILL, Open MPI's mpirun itself usually ends the job first.)
// slow: a graph of products that takes rank 1 several timeouts; its
// keep-alives must keep it from counting as failed, and the job ends with 0.
// allreduce-stop, allreduce-kill: an allreduce of the MPI backend's
// ggml_backend_comm_* (the meta device's) over MPI1:CPU and MPI2:CPU, once
// while both answer, then with rank 2 stopped or killed: rank 1 waits in the
// collective for ever, and rank 0 must report the failure within its
// timeout and end the job.

#define _POSIX_C_SOURCE 200809L

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-mpi.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void write_pid(const char * dir, int rank) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/rank%d.pid", dir, rank);
    FILE * f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "%d\n", (int) getpid());
        fclose(f);
    }
}

static int read_pid(const char * dir, int rank) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/rank%d.pid", dir, rank);
    FILE * f = fopen(path, "r");
    int pid = 0;
    if (f != NULL) {
        if (fscanf(f, "%d", &pid) != 1) {
            pid = 0;
        }
        fclose(f);
    }
    return pid;
}

// 24 products of 1024 x 1024 matrices (about 50 GFLOP) in one graph on one thread
static bool compute_long(ggml_backend_t backend) {
    struct ggml_init_params ip = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1024, 1024);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1024, 1024);
    for (int i = 0; i < 24; i++) {
        x = ggml_mul_mat(ctx, w, x);
    }
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, x);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (buf == NULL) {
        return false;
    }
    ggml_backend_buffer_clear(buf, 0);
    const double t0 = now_s();
    enum ggml_status status = ggml_backend_graph_compute(backend, g);
    ggml_backend_synchronize(backend);
    float v = 1;
    ggml_backend_tensor_get(x, &v, 0, sizeof(v));
    const bool ok = status == GGML_STATUS_SUCCESS && !ggml_backend_mpi_failed() && v == 0.0f;
    printf("rank 0: a computation of %.1f s on rank 1 (timeout %s s): %s\n", now_s() - t0,
           getenv("GGML_MPI_TIMEOUT") ? getenv("GGML_MPI_TIMEOUT") : "-", ok ? "done" : "failed");
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return ok;
}

// ISO C has no cast from void * to a function pointer: copy the bits
static void * proc_address(ggml_backend_dev_t dev, const char * name) {
    return ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(dev), name);
}

// an allreduce of 1 Mi floats over b1 and b2, then with rank 2 stopped or killed; 3 when the failure was reported
static int allreduce_fail(ggml_backend_dev_t d1, ggml_backend_t b1, ggml_backend_t b2, bool stop, const char * dir) {
    ggml_backend_comm_init_t             comm_init = NULL;
    ggml_backend_comm_allreduce_tensor_t allreduce = NULL;
    void * p_init      = proc_address(d1, "ggml_backend_comm_init");
    void * p_allreduce = proc_address(d1, "ggml_backend_comm_allreduce_tensor");
    memcpy(&comm_init, &p_init, sizeof(p_init));
    memcpy(&allreduce, &p_allreduce, sizeof(p_allreduce));
    const int pid2 = read_pid(dir, 2);
    ggml_backend_t backends[2] = { b1, b2 };
    void * comm = comm_init != NULL && allreduce != NULL ? comm_init(backends, 2) : NULL;
    if (comm == NULL || pid2 <= 0) {
        fprintf(stderr, "rank 0: no collective of MPI1:CPU and MPI2:CPU, or no pid of rank 2\n");
        return 1;
    }
    struct ggml_init_params ip = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx1 = ggml_init(ip);
    struct ggml_context * ctx2 = ggml_init(ip);
    struct ggml_tensor * t[2] = { ggml_new_tensor_1d(ctx1, GGML_TYPE_F32, 1 << 20), ggml_new_tensor_1d(ctx2, GGML_TYPE_F32, 1 << 20) };
    ggml_backend_buffer_t buf1 = ggml_backend_alloc_ctx_tensors(ctx1, b1);
    ggml_backend_buffer_t buf2 = ggml_backend_alloc_ctx_tensors(ctx2, b2);
    if (buf1 == NULL || buf2 == NULL) {
        fprintf(stderr, "rank 0: cannot set up the workers\n");
        return 1;
    }
    const float one = 1.0f, two = 2.0f;
    ggml_backend_tensor_set(t[0], &one, 0, sizeof(one));
    ggml_backend_tensor_set(t[1], &two, 0, sizeof(two));
    float sum = 0;
    const bool ok = allreduce(comm, t);
    ggml_backend_tensor_get(t[0], &sum, 0, sizeof(sum));
    if (!ok || sum != 3.0f) {
        fprintf(stderr, "rank 0: the allreduce failed (%d) or summed to %g before any worker was touched\n", ok, sum);
        return 1;
    }
    printf("rank 0: %s rank 2 (pid %d), then an allreduce\n", stop ? "stopping" : "killing", pid2);
    fflush(stdout);
    kill(pid2, stop ? SIGSTOP : SIGKILL);
    const double t0 = now_s();
    const bool ok_after = allreduce(comm, t);
    const bool failed = !ok_after && ggml_backend_mpi_failed();
    printf("rank 0: worker failure reported after %.1f s (the allreduce %s), exiting\n", now_s() - t0,
           ok_after ? "succeeded" : "failed");
    fflush(stdout);
    // the communicator, buffers and contexts are left to the job's end: its workers are stuck or gone
    return failed ? 3 : 1;
}

int main(int argc, char ** argv) {
    const char * modes[] = { "stop", "kill", "slow", "allreduce-stop", "allreduce-kill" };
    bool known = false;
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]) && argc == 3; i++) {
        known = known || strcmp(argv[1], modes[i]) == 0;
    }
    if (!known) {
        fprintf(stderr, "usage: %s stop|kill|slow|allreduce-stop|allreduce-kill DIR\n", argv[0]);
        return 1;
    }
    const bool stop = strcmp(argv[1], "stop") == 0 || strcmp(argv[1], "allreduce-stop") == 0;
    const bool slow = strcmp(argv[1], "slow") == 0;
    const int rank = ggml_backend_mpi_rank();
    write_pid(argv[2], rank);
    ggml_backend_load_all(); // rank 0: waits for every worker's device list
    if (rank != 0) {
        return ggml_backend_mpi_worker(1) == GGML_STATUS_SUCCESS ? 0 : 1;
    }
    ggml_backend_dev_t d1 = ggml_backend_dev_by_name("MPI1:CPU");
    ggml_backend_dev_t d2 = ggml_backend_dev_by_name("MPI2:CPU");
    const int pid1 = read_pid(argv[2], 1);
    if (d1 == NULL || d2 == NULL || pid1 <= 0) {
        fprintf(stderr, "rank 0: no MPI1:CPU and MPI2:CPU, or no pid of rank 1\n");
        return 1;
    }
    ggml_backend_t b1 = ggml_backend_dev_init(d1, NULL);
    ggml_backend_t b2 = ggml_backend_dev_init(d2, NULL);
    if (strncmp(argv[1], "allreduce-", 10) == 0) {
        return b1 != NULL && b2 != NULL ? allreduce_fail(d1, b1, b2, stop, argv[2]) : 1;
    }
    if (slow) {
        const bool ok = b1 != NULL && compute_long(b1);
        ggml_backend_free(b1);
        ggml_backend_free(b2);
        return ok ? 0 : 1;
    }
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx1 = ggml_init(ip);
    struct ggml_context * ctx2 = ggml_init(ip);
    struct ggml_tensor * a1 = ggml_new_tensor_2d(ctx1, GGML_TYPE_F32, 256, 256);
    struct ggml_tensor * a2 = ggml_new_tensor_2d(ctx2, GGML_TYPE_F32, 256, 256);
    struct ggml_cgraph * g1 = ggml_new_graph(ctx1);
    struct ggml_cgraph * g2 = ggml_new_graph(ctx2);
    ggml_build_forward_expand(g1, ggml_mul_mat(ctx1, a1, a1));
    ggml_build_forward_expand(g2, ggml_mul_mat(ctx2, a2, a2));
    ggml_backend_buffer_t buf1 = ggml_backend_alloc_ctx_tensors(ctx1, b1);
    ggml_backend_buffer_t buf2 = ggml_backend_alloc_ctx_tensors(ctx2, b2);
    if (b1 == NULL || b2 == NULL || buf1 == NULL || buf2 == NULL) {
        fprintf(stderr, "rank 0: cannot set up the workers\n");
        return 1;
    }
    ggml_backend_buffer_clear(buf1, 0);
    ggml_backend_buffer_clear(buf2, 0);
    for (int i = 0; i < 3; i++) {
        if (ggml_backend_graph_compute(b1, g1) != GGML_STATUS_SUCCESS ||
            ggml_backend_graph_compute(b2, g2) != GGML_STATUS_SUCCESS) {
            fprintf(stderr, "rank 0: a computation failed before any worker was touched\n");
            return 1;
        }
    }
    printf("rank 0: %s rank 1 (pid %d)\n", stop ? "stopping" : "killing", pid1);
    fflush(stdout);
    kill(pid1, stop ? SIGSTOP : SIGKILL);
    const double t0 = now_s();
    enum ggml_status status = GGML_STATUS_SUCCESS;
    // a failure shows at the latest on the second computation: the first may only be sent
    for (int i = 0; i < 1000 && status == GGML_STATUS_SUCCESS; i++) {
        status = ggml_backend_graph_compute(b2, g2);
        if (status == GGML_STATUS_SUCCESS) {
            status = ggml_backend_graph_compute(b1, g1);
        }
        ggml_backend_synchronize(b1);
    }
    printf("rank 0: worker failure reported after %.1f s (%s), exiting\n", now_s() - t0, ggml_status_to_string(status));
    fflush(stdout);
    return status == GGML_STATUS_SUCCESS ? 1 : 3;
}
