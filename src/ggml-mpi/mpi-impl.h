#pragma once

// mpi-impl.h: what the parts of the MPI backend share: the job (mpi-comm.c),
// rank 0's side (ggml-mpi.c) and the worker (mpi-worker.c).

#include "ggml-mpi.h"
#include "mpi-proto.h"

#include <stdbool.h>
#include <stddef.h>

// Starts MPI once when this process is part of an MPI job (started by
// mpirun, or the program initialised MPI itself). False outside a job.
bool ggml_mpi_comm_start(void);
int  ggml_mpi_comm_rank(void);
int  ggml_mpi_comm_size(void);
// whether another thread may send while this one computes (MPI_THREAD_SERIALIZED or better)
bool ggml_mpi_comm_serialized(void);

// seconds rank 0 waits for a worker (GGML_MPI_TIMEOUT, default 60)
double ggml_mpi_comm_timeout(void);

// bytes of the point-to-point messages this rank has sent and received
void ggml_mpi_comm_traffic(uint64_t * sent, uint64_t * received);

// Point-to-point transfers. timeout_s < 0 waits for ever (the workers,
// which rank 0's MPI_Abort ends); otherwise false when the peer has not
// taken or sent the message within timeout_s, or MPI reports an error.
bool ggml_mpi_send_msg (const void * data, size_t size, int rank, int tag, double timeout_s);
bool ggml_mpi_send_data(const void * data, size_t size, int rank, int tag, double timeout_s);
// one message of at most GGML_MPI_MAX_HEADER bytes, into msg (reset first)
bool ggml_mpi_recv_msg (struct ggml_mpi_writer * msg, int rank, int tag, double timeout_s);
// exactly size bytes in chunks of GGML_MPI_CHUNK; false when a chunk has another size
bool ggml_mpi_recv_data(void * data, size_t size, int rank, int tag, double timeout_s);

// rank 0: a worker failed; at exit the job is ended with MPI_Abort
void ggml_mpi_comm_set_failed(void);
bool ggml_mpi_comm_failed(void);
// rank 0: called at exit before MPI is finished (tells the workers to stop)
void ggml_mpi_comm_set_shutdown(void (*shutdown)(void));

double ggml_mpi_now(void);

// workers: a communicator of some worker ranks (this one among them), for
// collectives between them. Creating it waits until every one of them has
// asked (MPI_Comm_create_group); NULL (logged) when MPI refuses.
struct ggml_mpi_group;
struct ggml_mpi_group * ggml_mpi_group_create(const int * ranks, int n, int tag);
void ggml_mpi_group_free(struct ggml_mpi_group * group);
// sums n floats of data across the group, in place, on every member (polling, as the transfers)
bool ggml_mpi_group_allreduce_f32(struct ggml_mpi_group * group, float * data, size_t n);
