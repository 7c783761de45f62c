#pragma once

// mpi-proto.h: the wire protocol between rank 0 and the workers.
//
// Every exchange is a command from rank 0 (tag GGML_MPI_TAG_CMD), a header
// message of little-endian fields built with a ggml_mpi_writer, optionally
// followed by raw data chunks of at most GGML_MPI_CHUNK bytes on the same tag
// (MPI keeps messages between two ranks on one tag in order). Answers go back
// on GGML_MPI_TAG_REPLY the same way; copies between two workers go directly
// from one to the other on GGML_MPI_TAG_PEER. A ggml_mpi_reader checks every
// field against the message's length: a short, long or inconsistent message
// leaves the reader failed, and its receiver refuses the message.
//
// Tensors travel as descriptions (type, op, shape, strides, op params,
// sources by index, the remote buffer's handle and the offset in it); a graph
// is its tensors, sources before users, and the indices of its nodes.
//
// Collectives between workers (the meta device's allreduce) run on a
// communicator of the participating workers, made once per comm context by
// COMM_CREATE sent to each of them; ALLREDUCE then sums a range of each
// worker's buffer in place, with MPI's own collective among the workers.

#include "ggml.h"
#include "ggml-backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GGML_MPI_PROTO_VERSION 2u
#define GGML_MPI_CHUNK         ((size_t) 1 << 28)
// the largest header message a receiver takes (a graph of ~100k tensors)
#define GGML_MPI_MAX_HEADER    ((size_t) 1 << 28)

enum ggml_mpi_tag {
    GGML_MPI_TAG_CMD   = 1,
    GGML_MPI_TAG_REPLY = 2,
    GGML_MPI_TAG_PEER  = 3,
};

enum ggml_mpi_cmd {
    GGML_MPI_CMD_HELLO = 1,      // -> version, devices
    GGML_MPI_CMD_SHUTDOWN,       // (no answer)
    GGML_MPI_CMD_SUPPORTS_OP,    // dev, graph of one node -> u8
    GGML_MPI_CMD_BUFFER_ALLOC,   // dev, size -> handle (0: failed), base, size
    GGML_MPI_CMD_BUFFER_FREE,    // handle
    GGML_MPI_CMD_BUFFER_CLEAR,   // handle, value
    GGML_MPI_CMD_SET,            // handle, offset, size, then the data
    GGML_MPI_CMD_GET,            // handle, offset, size -> u8 ok, then the data
    GGML_MPI_CMD_MEMSET,         // handle, offset, size, value
    GGML_MPI_CMD_COPY,           // src handle, offset, dst handle, offset, size (one worker)
    GGML_MPI_CMD_PEER_SEND,      // handle, offset, size, peer rank: data to the peer
    GGML_MPI_CMD_PEER_RECV,      // handle, offset, size, peer rank: data from the peer
    GGML_MPI_CMD_BACKEND_INIT,   // dev -> handle (0: failed)
    GGML_MPI_CMD_BACKEND_FREE,   // handle
    GGML_MPI_CMD_GRAPH_COMPUTE,  // backend, graph id, graph -> keep-alives, then status
    GGML_MPI_CMD_GRAPH_RECOMPUTE,// backend, graph id (one sent before) -> keep-alives, then status
    GGML_MPI_CMD_GRAPH_FORGET,   // backend, graph id
    GGML_MPI_CMD_COMM_CREATE,    // comm id, n, n worker ranks (this one among them) -> status
    GGML_MPI_CMD_COMM_FREE,      // comm id
    GGML_MPI_CMD_ALLREDUCE,      // comm id, handle, offset, type, count -> status
    GGML_MPI_CMD_COUNT,
};

enum ggml_mpi_reply {
    GGML_MPI_REPLY_DONE = 1,
    GGML_MPI_REPLY_KEEPALIVE,    // still computing: wait on
};

// a growing message
struct ggml_mpi_writer {
    uint8_t * data;
    size_t    size;
    size_t    cap;
    bool      ok;   // false once memory ran out
};

void ggml_mpi_writer_init (struct ggml_mpi_writer * w);
void ggml_mpi_writer_reset(struct ggml_mpi_writer * w);
void ggml_mpi_writer_free (struct ggml_mpi_writer * w);
void ggml_mpi_put_u8  (struct ggml_mpi_writer * w, uint8_t v);
void ggml_mpi_put_u32 (struct ggml_mpi_writer * w, uint32_t v);
void ggml_mpi_put_u64 (struct ggml_mpi_writer * w, uint64_t v);
void ggml_mpi_put_bytes(struct ggml_mpi_writer * w, const void * p, size_t n);
void ggml_mpi_put_str (struct ggml_mpi_writer * w, const char * s);

// a received message, read front to back
struct ggml_mpi_reader {
    const uint8_t * data;
    size_t          size;
    size_t          pos;
    bool            ok;   // false once a read went past the end or a value was invalid
};

struct ggml_mpi_reader ggml_mpi_reader_of(const void * data, size_t size);
uint8_t  ggml_mpi_get_u8 (struct ggml_mpi_reader * r);
uint32_t ggml_mpi_get_u32(struct ggml_mpi_reader * r);
uint64_t ggml_mpi_get_u64(struct ggml_mpi_reader * r);
bool     ggml_mpi_get_bytes(struct ggml_mpi_reader * r, void * p, size_t n);
// a string of at most cap - 1 bytes, terminated; false (and r failed) when longer
bool     ggml_mpi_get_str(struct ggml_mpi_reader * r, char * s, size_t cap);
// every byte read and nothing invalid
bool     ggml_mpi_reader_done(const struct ggml_mpi_reader * r);

// rank 0: the remote handle of a buffer and the base its tensors' data pointers count from
typedef bool (*ggml_mpi_buffer_ref_t)(void * ctx, ggml_backend_buffer_t buffer, uint64_t * handle, uintptr_t * base);

// Appends the tensors of graph (nodes, what they read, what views view)
// and its nodes. A tensor that is not a node is described without its
// sources: to the worker it is data. buffer_ref NULL: descriptions without
// data (for supports_op). False (with a log line) when a tensor's buffer is
// not one buffer_ref knows.
bool ggml_mpi_put_graph(struct ggml_mpi_writer * w, const struct ggml_cgraph * graph, ggml_mpi_buffer_ref_t buffer_ref,
                        void * ref_ctx);

// worker: the buffer of a handle (NULL: unknown)
typedef ggml_backend_buffer_t (*ggml_mpi_buffer_find_t)(void * ctx, uint64_t handle);

// Reads a graph into a new context (returned in *ctx_out, the caller frees
// it). find_buffer NULL: tensors must have no data (supports_op). Every
// field is checked: types, ops, sizes, source indices, and the bytes each
// tensor spans against its buffer. NULL (with a log line) when refused.
struct ggml_cgraph * ggml_mpi_get_graph(struct ggml_mpi_reader * r, ggml_mpi_buffer_find_t find_buffer, void * find_ctx,
                                        struct ggml_context ** ctx_out);

// bytes a tensor of this type, shape and strides spans from its data
// pointer; false when the description is out of any sane range
bool ggml_mpi_tensor_extent(enum ggml_type type, const int64_t ne[4], const size_t nb[4], size_t * extent);

// Ops whose parameters hold addresses in rank 0's memory (the functions of
// MAP_CUSTOM1..3 and CUSTOM): never computed on a worker, and refused there.
bool ggml_mpi_op_is_local_only(enum ggml_op op);

// 64-bit FNV-1a
uint64_t ggml_mpi_hash(const void * data, size_t size);
