#pragma once

//
// ggml-mpi.h: the MPI backend. Devices of other processes of an MPI job,
// usually on other hosts, used as if they were local.
//
// Rank 0 of the job is the application. Every other rank runs a worker
// (ggml_backend_mpi_worker(), or the ggml-mpi-worker program) that serves the
// devices of its own registry (its CPU, its GPUs). In rank 0's registry the
// backend "MPI" lists one device per worker device, named by rank and
// device: "MPI1:CPU", "MPI2:Vulkan0". Their buffers live on the worker;
// tensor data, graphs and copies between two workers travel over MPI.
//
// Outside an MPI job (no mpirun), and on the workers themselves, the
// backend lists no devices and MPI is not started.
//
// A worker that dies or stops answering for GGML_MPI_TIMEOUT seconds
// (default 60) fails the operation that waits for it (GGML_STATUS_FAILED
// from a graph computation); the job is then ended with MPI_Abort when
// rank 0 exits, so that no process is left behind.
//

#include "ggml.h"
#include "ggml-backend.h"

#ifdef  __cplusplus
extern "C" {
#endif

    GGML_BACKEND_API ggml_backend_reg_t ggml_backend_mpi_reg(void);

    // this process's rank in the job (0 outside an MPI job)
    GGML_BACKEND_API int ggml_backend_mpi_rank(void);

    // Serves this rank's devices to rank 0 until rank 0 shuts the job down.
    // n_threads: threads of the CPU backend (<= 0: the default). Returns
    // GGML_STATUS_SUCCESS after a clean shutdown, GGML_STATUS_FAILED (with a
    // log line) when called on rank 0 or outside an MPI job.
    GGML_BACKEND_API enum ggml_status ggml_backend_mpi_worker(int n_threads);

    GGML_BACKEND_API bool ggml_backend_is_mpi(ggml_backend_t backend);

    // true when a worker failed (died, stopped answering, or refused a message)
    GGML_BACKEND_API bool ggml_backend_mpi_failed(void);

    // The collectives between workers that the registry exports to the meta
    // device (ggml_backend_comm_*): allreduces done by MPI among the workers,
    // and the bytes of one worker's tensor summed over them, since the start.
    GGML_BACKEND_API void ggml_backend_mpi_allreduce_stats(uint64_t * n_allreduce, uint64_t * n_bytes);

    // The bytes of the backend's messages (commands, tensor data, graphs,
    // answers) this rank has sent to and received from the other ranks since
    // the start; the collectives' traffic among the workers is not in them.
    GGML_BACKEND_API void ggml_backend_mpi_traffic_stats(uint64_t * sent, uint64_t * received);

    // for the registry's get_proc_address, by these names
    typedef int              (*ggml_backend_mpi_rank_t)  (void);
    typedef enum ggml_status (*ggml_backend_mpi_worker_t)(int n_threads);
    typedef void             (*ggml_backend_mpi_stats_t) (uint64_t * a, uint64_t * b);

#ifdef  __cplusplus
}
#endif
