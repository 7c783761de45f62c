// mpi-worker.c: a worker rank: serves the devices of its own registry to
// rank 0 until rank 0 says stop.
//
// The worker answers commands in the order they come. Buffers and backends
// are named by handles, indices into its own tables plus one, never by
// addresses, so that no message can make it touch memory it did not hand
// out: every offset and size is checked against the buffer first, and a
// refused command is logged and (when it expects an answer) answered with a
// failure. Graphs are kept per backend by the id rank 0 gave them, so that
// a graph of unchanged structure is sent once and computed by reference.
//
// While a graph computes, a second thread sends rank 0 a keep-alive every
// GGML_MPI_KEEPALIVE_S, so that rank 0 tells a long computation from a
// worker that stopped answering.
//
// Collectives with other workers (ALLREDUCE) send no keep-alives: a worker
// whose peer died waits in the collective for ever, and rank 0, hearing
// nothing within its timeout, reports the failure and ends the job. A
// refused ALLREDUCE is answered with a failure without joining the
// collective, so its peers wait in it too: rank 0 then fails them all alike.

#include "mpi-impl.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GGML_MPI_KEEPALIVE_S 0.25

struct worker_graph {
    uint64_t              id;
    struct ggml_context * ctx;
    struct ggml_cgraph  * graph;
};

struct worker_backend {
    ggml_backend_t        backend;   // NULL: free slot
    struct worker_graph * graphs;
    size_t                n_graphs;
};

struct worker_keepalive {
    pthread_t       thread;
    pthread_mutex_t lock;         // guards the fields below and every MPI call of the worker
    pthread_cond_t  cond;
    bool            computing;
    bool            quit;
    double          last_sent;
};

// a communicator of workers, by the id rank 0 gave it
struct worker_comm {
    uint64_t                id;      // 0: free slot
    struct ggml_mpi_group * group;
};

struct worker {
    ggml_backend_dev_t    * devices;
    size_t                  n_devices;
    ggml_backend_buffer_t * buffers;   // NULL: free slot
    size_t                  n_buffers;
    struct worker_backend * backends;
    size_t                  n_backends;
    struct worker_comm    * comms;
    size_t                  n_comms;
    int                     n_threads;
    struct ggml_mpi_writer  msg;       // the command being served
    struct ggml_mpi_writer  reply;
    struct worker_keepalive ka;
    bool                    keepalive;
};

// the devices a worker serves: its own, not helpers working on host memory (BLAS)
static bool worker_serves(ggml_backend_dev_t dev) {
    if (ggml_backend_dev_backend_reg(dev) == ggml_backend_mpi_reg()) {
        return false;
    }
    return ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_ACCEL ||
           !ggml_backend_buft_is_host(ggml_backend_dev_buffer_type(dev));
}

static bool worker_send_reply(struct worker * w) {
    if (!w->reply.ok) {
        GGML_LOG_ERROR("ggml-mpi worker: out of memory for an answer\n");
        return false;
    }
    pthread_mutex_lock(&w->ka.lock);
    const bool ok = ggml_mpi_send_msg(w->reply.data, w->reply.size, 0, GGML_MPI_TAG_REPLY, -1);
    pthread_mutex_unlock(&w->ka.lock);
    return ok;
}

static void reply_begin(struct worker * w) {
    ggml_mpi_writer_reset(&w->reply);
    ggml_mpi_put_u32(&w->reply, GGML_MPI_REPLY_DONE);
}

//
// tables
//

static ggml_backend_buffer_t worker_buffer(void * ctx, uint64_t handle) {
    struct worker * w = (struct worker *) ctx;
    return handle >= 1 && handle <= w->n_buffers ? w->buffers[handle - 1] : NULL;
}

static struct worker_backend * worker_backend(struct worker * w, uint64_t handle) {
    return handle >= 1 && handle <= w->n_backends && w->backends[handle - 1].backend != NULL ? &w->backends[handle - 1]
                                                                                            : NULL;
}

static ggml_backend_dev_t worker_device(struct worker * w, uint64_t index) {
    return index < w->n_devices ? w->devices[index] : NULL;
}

// a free slot of a table of n elements of elem_size (growing it), or SIZE_MAX
static size_t table_slot(void ** table, size_t * n, size_t elem_size, bool (*is_free)(const void *)) {
    for (size_t i = 0; i < *n; i++) {
        if (is_free((const uint8_t *) *table + i * elem_size)) {
            return i;
        }
    }
    void * grown = realloc(*table, (*n + 1) * elem_size);
    if (grown == NULL) {
        return SIZE_MAX;
    }
    *table = grown;
    memset((uint8_t *) grown + *n * elem_size, 0, elem_size);
    return (*n)++;
}

static bool buffer_slot_free(const void * p) {
    return *(const ggml_backend_buffer_t *) p == NULL;
}

static bool backend_slot_free(const void * p) {
    return ((const struct worker_backend *) p)->backend == NULL;
}

static void backend_forget_graphs(struct worker_backend * wb) {
    for (size_t i = 0; i < wb->n_graphs; i++) {
        ggml_free(wb->graphs[i].ctx);
    }
    free(wb->graphs);
    wb->graphs   = NULL;
    wb->n_graphs = 0;
}

// the range [offset, offset + size) of the buffer, or NULL (logged)
static ggml_backend_buffer_t checked_range(struct worker * w, uint64_t handle, uint64_t offset, uint64_t size,
                                           const char * what) {
    ggml_backend_buffer_t buffer = worker_buffer(w, handle);
    if (buffer == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: %s: unknown buffer %llu\n", what, (unsigned long long) handle);
        return NULL;
    }
    const size_t buf_size = ggml_backend_buffer_get_size(buffer);
    if (offset > buf_size || size > buf_size - offset) {
        GGML_LOG_ERROR("ggml-mpi worker: %s: bytes [%llu, +%llu) are outside the buffer of %zu bytes\n", what,
                       (unsigned long long) offset, (unsigned long long) size, buf_size);
        return NULL;
    }
    return buffer;
}

// a tensor of bytes over [offset, offset + size) of buffer, for the tensor functions
static struct ggml_tensor byte_view(ggml_backend_buffer_t buffer, uint64_t offset, uint64_t size) {
    struct ggml_tensor t;
    memset(&t, 0, sizeof(t));
    t.type   = GGML_TYPE_I8;
    t.ne[0]  = (int64_t) size;
    t.ne[1]  = t.ne[2] = t.ne[3] = 1;
    t.nb[0]  = 1;
    t.nb[1]  = t.nb[2] = t.nb[3] = (size_t) size;
    t.buffer = buffer;
    t.data   = (uint8_t *) ggml_backend_buffer_get_base(buffer) + offset;
    return t;
}

//
// commands
//

static void cmd_hello(struct worker * w) {
    reply_begin(w);
    ggml_mpi_put_u32(&w->reply, GGML_MPI_PROTO_VERSION);
    ggml_mpi_put_u32(&w->reply, (uint32_t) w->n_devices);
    for (size_t i = 0; i < w->n_devices; i++) {
        ggml_backend_dev_t dev = w->devices[i];
        ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(dev);
        size_t free_mem = 0, total = 0;
        ggml_backend_dev_memory(dev, &free_mem, &total);
        ggml_mpi_put_str(&w->reply, ggml_backend_dev_name(dev));
        ggml_mpi_put_str(&w->reply, ggml_backend_dev_description(dev));
        ggml_mpi_put_u32(&w->reply, (uint32_t) ggml_backend_dev_type(dev));
        ggml_mpi_put_u64(&w->reply, free_mem);
        ggml_mpi_put_u64(&w->reply, total);
        ggml_mpi_put_u64(&w->reply, ggml_backend_buft_get_alignment(buft));
        ggml_mpi_put_u64(&w->reply, ggml_backend_buft_get_max_size(buft));
    }
    worker_send_reply(w);
}

static void cmd_supports_op(struct worker * w, struct ggml_mpi_reader * r) {
    ggml_backend_dev_t dev = worker_device(w, ggml_mpi_get_u32(r));
    struct ggml_context * ctx = NULL;
    struct ggml_cgraph * graph = r->ok && dev != NULL ? ggml_mpi_get_graph(r, NULL, NULL, &ctx) : NULL;
    bool supported = false;
    if (graph != NULL && ggml_graph_n_nodes(graph) == 1) {
        supported = ggml_backend_dev_supports_op(dev, ggml_graph_node(graph, 0));
    } else {
        GGML_LOG_ERROR("ggml-mpi worker: refusing a malformed supports_op question\n");
    }
    ggml_free(ctx);
    reply_begin(w);
    ggml_mpi_put_u8(&w->reply, supported ? 1 : 0);
    worker_send_reply(w);
}

static void cmd_buffer_alloc(struct worker * w, struct ggml_mpi_reader * r) {
    ggml_backend_dev_t dev  = worker_device(w, ggml_mpi_get_u32(r));
    const uint64_t     size = ggml_mpi_get_u64(r);
    uint64_t handle = 0;
    ggml_backend_buffer_t buffer = NULL;
    if (!ggml_mpi_reader_done(r) || dev == NULL || size > SIZE_MAX) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing a malformed buffer allocation\n");
    } else {
        buffer = ggml_backend_buft_alloc_buffer(ggml_backend_dev_buffer_type(dev), (size_t) size);
        const size_t slot = buffer != NULL ? table_slot((void **) &w->buffers, &w->n_buffers, sizeof(*w->buffers),
                                                        buffer_slot_free)
                                           : SIZE_MAX;
        if (buffer != NULL && slot == SIZE_MAX) {
            ggml_backend_buffer_free(buffer);
            buffer = NULL;
        }
        if (buffer != NULL) {
            w->buffers[slot] = buffer;
            handle           = slot + 1;
        }
    }
    reply_begin(w);
    ggml_mpi_put_u64(&w->reply, handle);
    ggml_mpi_put_u64(&w->reply, buffer != NULL ? (uint64_t) (uintptr_t) ggml_backend_buffer_get_base(buffer) : 0);
    ggml_mpi_put_u64(&w->reply, buffer != NULL ? ggml_backend_buffer_get_size(buffer) : 0);
    worker_send_reply(w);
}

static void cmd_buffer_free(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t handle = ggml_mpi_get_u64(r);
    ggml_backend_buffer_t buffer = worker_buffer(w, handle);
    if (!ggml_mpi_reader_done(r) || buffer == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing to free buffer %llu\n", (unsigned long long) handle);
        return;
    }
    // graphs that use it are stale now
    for (size_t i = 0; i < w->n_backends; i++) {
        backend_forget_graphs(&w->backends[i]);
    }
    ggml_backend_buffer_free(buffer);
    w->buffers[handle - 1] = NULL;
}

static void cmd_buffer_clear(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t handle = ggml_mpi_get_u64(r);
    const uint8_t  value  = ggml_mpi_get_u8(r);
    ggml_backend_buffer_t buffer = worker_buffer(w, handle);
    if (!ggml_mpi_reader_done(r) || buffer == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing to clear buffer %llu\n", (unsigned long long) handle);
        return;
    }
    ggml_backend_buffer_clear(buffer, value);
}

// data into the buffer, from rank 0 (SET) or from a peer (PEER_RECV):
// straight into host memory, else through a staging copy
static void cmd_set(struct worker * w, struct ggml_mpi_reader * r, bool from_peer) {
    const uint64_t handle = ggml_mpi_get_u64(r);
    const uint64_t offset = ggml_mpi_get_u64(r);
    const uint64_t size   = ggml_mpi_get_u64(r);
    const int      source = from_peer ? (int) ggml_mpi_get_u32(r) : 0;
    // the data comes whatever happens: a refused command still takes it, into scratch memory
    ggml_backend_buffer_t buffer = ggml_mpi_reader_done(r) ? checked_range(w, handle, offset, size, "set") : NULL;
    const int tag = from_peer ? GGML_MPI_TAG_PEER : GGML_MPI_TAG_CMD;
    if (source < 0 || source >= ggml_mpi_comm_size() || source == ggml_mpi_comm_rank() || (from_peer && source == 0)) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing a copy from rank %d\n", source);
        return;
    }
    if (buffer != NULL && ggml_backend_buffer_is_host(buffer)) {
        ggml_mpi_recv_data((uint8_t *) ggml_backend_buffer_get_base(buffer) + offset, (size_t) size, source, tag, -1);
        return;
    }
    if (buffer == NULL && size > GGML_MPI_CHUNK) {
        return; // nothing sane to take it into; the stream is out of step, which rank 0 will see
    }
    void * staging = malloc(size > 0 ? (size_t) size : 1);
    if (staging == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: out of memory for %llu bytes of tensor data\n", (unsigned long long) size);
        return;
    }
    if (ggml_mpi_recv_data(staging, (size_t) size, source, tag, -1) && buffer != NULL) {
        struct ggml_tensor t = byte_view(buffer, offset, size);
        ggml_backend_tensor_set(&t, staging, 0, (size_t) size);
    }
    free(staging);
}

// data out of the buffer, to rank 0 (as an answer) or to a peer
static void send_range(struct worker * w, ggml_backend_buffer_t buffer, uint64_t offset, uint64_t size, int dest, int tag) {
    if (ggml_backend_buffer_is_host(buffer)) {
        pthread_mutex_lock(&w->ka.lock);
        ggml_mpi_send_data((const uint8_t *) ggml_backend_buffer_get_base(buffer) + offset, (size_t) size, dest, tag, -1);
        pthread_mutex_unlock(&w->ka.lock);
        return;
    }
    void * staging = malloc(size > 0 ? (size_t) size : 1);
    if (staging == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: out of memory for %llu bytes of tensor data\n", (unsigned long long) size);
        return;
    }
    struct ggml_tensor t = byte_view(buffer, offset, size);
    ggml_backend_tensor_get(&t, staging, 0, (size_t) size);
    pthread_mutex_lock(&w->ka.lock);
    ggml_mpi_send_data(staging, (size_t) size, dest, tag, -1);
    pthread_mutex_unlock(&w->ka.lock);
    free(staging);
}

static void cmd_get(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t handle = ggml_mpi_get_u64(r);
    const uint64_t offset = ggml_mpi_get_u64(r);
    const uint64_t size   = ggml_mpi_get_u64(r);
    ggml_backend_buffer_t buffer = ggml_mpi_reader_done(r) ? checked_range(w, handle, offset, size, "get") : NULL;
    reply_begin(w);
    ggml_mpi_put_u8(&w->reply, buffer != NULL ? 1 : 0);
    if (!worker_send_reply(w) || buffer == NULL) {
        return;
    }
    send_range(w, buffer, offset, size, 0, GGML_MPI_TAG_REPLY);
}

static void cmd_peer_send(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t handle = ggml_mpi_get_u64(r);
    const uint64_t offset = ggml_mpi_get_u64(r);
    const uint64_t size   = ggml_mpi_get_u64(r);
    const int      dest   = (int) ggml_mpi_get_u32(r);
    ggml_backend_buffer_t buffer = ggml_mpi_reader_done(r) ? checked_range(w, handle, offset, size, "peer send") : NULL;
    const bool dest_ok = r->ok && dest > 0 && dest < ggml_mpi_comm_size() && dest != ggml_mpi_comm_rank();
    if (buffer == NULL || !dest_ok) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing a copy to rank %d\n", dest);
        if (dest_ok) {
            // an empty message, which the peer refuses, rather than none, for which it would wait for ever
            pthread_mutex_lock(&w->ka.lock);
            ggml_mpi_send_msg(NULL, 0, dest, GGML_MPI_TAG_PEER, -1);
            pthread_mutex_unlock(&w->ka.lock);
        }
        return;
    }
    send_range(w, buffer, offset, size, dest, GGML_MPI_TAG_PEER);
}

static void cmd_memset(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t handle = ggml_mpi_get_u64(r);
    const uint64_t offset = ggml_mpi_get_u64(r);
    const uint64_t size   = ggml_mpi_get_u64(r);
    const uint8_t  value  = ggml_mpi_get_u8(r);
    ggml_backend_buffer_t buffer = ggml_mpi_reader_done(r) ? checked_range(w, handle, offset, size, "memset") : NULL;
    if (buffer != NULL && size > 0) {
        struct ggml_tensor t = byte_view(buffer, offset, size);
        ggml_backend_tensor_memset(&t, value, 0, (size_t) size);
    }
}

static void cmd_copy(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t src_handle = ggml_mpi_get_u64(r);
    const uint64_t src_offset = ggml_mpi_get_u64(r);
    const uint64_t dst_handle = ggml_mpi_get_u64(r);
    const uint64_t dst_offset = ggml_mpi_get_u64(r);
    const uint64_t size       = ggml_mpi_get_u64(r);
    if (!ggml_mpi_reader_done(r)) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing a malformed copy\n");
        return;
    }
    ggml_backend_buffer_t src = checked_range(w, src_handle, src_offset, size, "copy from");
    ggml_backend_buffer_t dst = checked_range(w, dst_handle, dst_offset, size, "copy to");
    if (src != NULL && dst != NULL && size > 0) {
        struct ggml_tensor ts = byte_view(src, src_offset, size);
        struct ggml_tensor td = byte_view(dst, dst_offset, size);
        ggml_backend_tensor_copy(&ts, &td);
    }
}

static void cmd_backend_init(struct worker * w, struct ggml_mpi_reader * r) {
    ggml_backend_dev_t dev = worker_device(w, ggml_mpi_get_u32(r));
    uint64_t handle = 0;
    if (!ggml_mpi_reader_done(r) || dev == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing a malformed backend request\n");
    } else {
        ggml_backend_t backend = ggml_backend_dev_init(dev, NULL);
        const size_t slot = backend != NULL ? table_slot((void **) &w->backends, &w->n_backends, sizeof(*w->backends),
                                                         backend_slot_free)
                                            : SIZE_MAX;
        if (backend != NULL && slot == SIZE_MAX) {
            ggml_backend_free(backend);
            backend = NULL;
        }
        if (backend != NULL) {
            if (w->n_threads > 0) {
                ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(dev);
                void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
                ggml_backend_set_n_threads_t set_n_threads = NULL;
                // ISO C has no object-to-function pointer conversion; POSIX makes the bits agree
                memcpy(&set_n_threads, &sym, sizeof(sym));
                if (set_n_threads != NULL) {
                    set_n_threads(backend, w->n_threads);
                }
            }
            w->backends[slot] = (struct worker_backend) { .backend = backend };
            handle            = slot + 1;
        }
    }
    reply_begin(w);
    ggml_mpi_put_u64(&w->reply, handle);
    worker_send_reply(w);
}

static void cmd_backend_free(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t handle = ggml_mpi_get_u64(r);
    struct worker_backend * wb = worker_backend(w, handle);
    if (!ggml_mpi_reader_done(r) || wb == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing to free backend %llu\n", (unsigned long long) handle);
        return;
    }
    backend_forget_graphs(wb);
    ggml_backend_free(wb->backend);
    wb->backend = NULL;
}

static struct worker_graph * backend_graph(struct worker_backend * wb, uint64_t id) {
    for (size_t i = 0; i < wb->n_graphs; i++) {
        if (wb->graphs[i].id == id) {
            return &wb->graphs[i];
        }
    }
    return NULL;
}

static void backend_drop_graph(struct worker_backend * wb, uint64_t id) {
    struct worker_graph * g = backend_graph(wb, id);
    if (g != NULL) {
        ggml_free(g->ctx);
        *g = wb->graphs[--wb->n_graphs];
    }
}

static enum ggml_status compute_with_keepalive(struct worker * w, ggml_backend_t backend, struct ggml_cgraph * graph) {
    pthread_mutex_lock(&w->ka.lock);
    w->ka.computing = true;
    w->ka.last_sent = ggml_mpi_now();
    pthread_mutex_unlock(&w->ka.lock);
    enum ggml_status status = ggml_backend_graph_compute(backend, graph);
    pthread_mutex_lock(&w->ka.lock);
    w->ka.computing = false;
    pthread_mutex_unlock(&w->ka.lock);
    return status;
}

// GRAPH_COMPUTE (with the graph) and GRAPH_RECOMPUTE (by id)
static void cmd_graph(struct worker * w, struct ggml_mpi_reader * r, bool with_graph) {
    struct worker_backend * wb = worker_backend(w, ggml_mpi_get_u64(r));
    const uint64_t id = ggml_mpi_get_u64(r);
    enum ggml_status status = GGML_STATUS_FAILED;
    struct worker_graph * g = NULL;
    if (!r->ok || wb == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing a graph for an unknown backend\n");
    } else if (with_graph) {
        struct ggml_context * ctx = NULL;
        struct ggml_cgraph * graph = ggml_mpi_get_graph(r, worker_buffer, w, &ctx);
        if (graph != NULL) {
            backend_drop_graph(wb, id); // an id sent again replaces its graph
        }
        struct worker_graph * grown = graph != NULL ? (struct worker_graph *) realloc(wb->graphs, (wb->n_graphs + 1) * sizeof(*grown)) : NULL;
        if (graph != NULL && grown == NULL) {
            GGML_LOG_ERROR("ggml-mpi worker: out of memory keeping a graph\n");
        }
        if (grown == NULL) {
            ggml_free(ctx);
        } else {
            wb->graphs = grown;
            wb->graphs[wb->n_graphs] = (struct worker_graph) { .id = id, .ctx = ctx, .graph = graph };
            g = &wb->graphs[wb->n_graphs++];
        }
    } else {
        g = ggml_mpi_reader_done(r) ? backend_graph(wb, id) : NULL;
        if (g == NULL) {
            GGML_LOG_ERROR("ggml-mpi worker: refusing to compute graph %llu, which it does not have\n", (unsigned long long) id);
        }
    }
    if (g != NULL) {
        status = compute_with_keepalive(w, wb->backend, g->graph);
    }
    reply_begin(w);
    ggml_mpi_put_u32(&w->reply, (uint32_t) (int32_t) status);
    worker_send_reply(w);
}

static bool comm_slot_free(const void * p) {
    return ((const struct worker_comm *) p)->id == 0;
}

static struct worker_comm * worker_comm(struct worker * w, uint64_t id) {
    for (size_t i = 0; i < w->n_comms && id != 0; i++) {
        if (w->comms[i].id == id) {
            return &w->comms[i];
        }
    }
    return NULL;
}

// MPI_Comm_create_group's tag: one of its own per comm, above the protocol's tags
static int comm_tag(uint64_t id) {
    return 64 + (int) (id % 16384);
}

static void cmd_comm_create(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t id = ggml_mpi_get_u64(r);
    const uint32_t n  = ggml_mpi_get_u32(r);
    const int size = ggml_mpi_comm_size();
    int * ranks = r->ok && n >= 2 && n < (uint32_t) size ? (int *) calloc(n, sizeof(int)) : NULL;
    bool ok = ranks != NULL && id != 0 && worker_comm(w, id) == NULL;
    bool self = false;
    for (uint32_t i = 0; i < n && ok; i++) {
        const uint32_t rank = ggml_mpi_get_u32(r);
        ok = r->ok && rank >= 1 && rank < (uint32_t) size;
        for (uint32_t k = 0; k < i && ok; k++) {
            ok = ranks[k] != (int) rank;
        }
        ranks[i] = (int) rank;
        self = self || (int) rank == ggml_mpi_comm_rank();
    }
    ok = ok && self && ggml_mpi_reader_done(r);
    struct ggml_mpi_group * group = NULL;
    if (!ok) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing a malformed communicator of %u ranks\n", n);
    } else {
        pthread_mutex_lock(&w->ka.lock);
        group = ggml_mpi_group_create(ranks, (int) n, comm_tag(id));
        pthread_mutex_unlock(&w->ka.lock);
        const size_t slot = group != NULL ? table_slot((void **) &w->comms, &w->n_comms, sizeof(*w->comms), comm_slot_free)
                                          : SIZE_MAX;
        if (slot != SIZE_MAX) {
            w->comms[slot] = (struct worker_comm) { .id = id, .group = group };
        } else if (group != NULL) {
            GGML_LOG_ERROR("ggml-mpi worker: out of memory keeping a communicator\n");
            pthread_mutex_lock(&w->ka.lock);
            ggml_mpi_group_free(group);
            pthread_mutex_unlock(&w->ka.lock);
            group = NULL;
        }
    }
    free(ranks);
    reply_begin(w);
    ggml_mpi_put_u32(&w->reply, (uint32_t) (int32_t) (group != NULL ? GGML_STATUS_SUCCESS : GGML_STATUS_FAILED));
    worker_send_reply(w);
}

static void comm_free(struct worker * w, struct worker_comm * c) {
    pthread_mutex_lock(&w->ka.lock);
    ggml_mpi_group_free(c->group);
    pthread_mutex_unlock(&w->ka.lock);
    *c = (struct worker_comm) { .id = 0, .group = NULL };
}

static void cmd_comm_free(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t id = ggml_mpi_get_u64(r);
    struct worker_comm * c = ggml_mpi_reader_done(r) ? worker_comm(w, id) : NULL;
    if (c == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing to free communicator %llu\n", (unsigned long long) id);
        return;
    }
    comm_free(w, c);
}

// sums count floats at [offset, ...) of the buffer across the communicator, in
// place; a buffer outside host memory through a staging copy
static void cmd_allreduce(struct worker * w, struct ggml_mpi_reader * r) {
    const uint64_t id     = ggml_mpi_get_u64(r);
    const uint64_t handle = ggml_mpi_get_u64(r);
    const uint64_t offset = ggml_mpi_get_u64(r);
    const uint32_t type   = ggml_mpi_get_u32(r);
    const uint64_t count  = ggml_mpi_get_u64(r);
    struct worker_comm * c = ggml_mpi_reader_done(r) ? worker_comm(w, id) : NULL;
    const bool sane = c != NULL && type == GGML_TYPE_F32 && offset % sizeof(float) == 0 &&
                      count <= (uint64_t) (SIZE_MAX / sizeof(float));
    ggml_backend_buffer_t buffer = sane ? checked_range(w, handle, offset, count * sizeof(float), "allreduce") : NULL;
    enum ggml_status status = GGML_STATUS_FAILED;
    if (buffer == NULL) {
        GGML_LOG_ERROR("ggml-mpi worker: refusing an allreduce of %llu elements of type %u on communicator %llu\n",
                       (unsigned long long) count, type, (unsigned long long) id);
    } else {
        const size_t n = (size_t) count;
        const bool host = ggml_backend_buffer_is_host(buffer);
        float * data = host ? (float *) (void *) ((uint8_t *) ggml_backend_buffer_get_base(buffer) + offset)
                            : (float *) malloc(n > 0 ? n * sizeof(float) : 1);
        struct ggml_tensor t = byte_view(buffer, offset, n * sizeof(float));
        if (data == NULL) {
            GGML_LOG_ERROR("ggml-mpi worker: out of memory for an allreduce of %zu floats\n", n);
        } else {
            if (!host) {
                ggml_backend_tensor_get(&t, data, 0, n * sizeof(float));
            }
            pthread_mutex_lock(&w->ka.lock);
            const bool ok = ggml_mpi_group_allreduce_f32(c->group, data, n);
            pthread_mutex_unlock(&w->ka.lock);
            if (ok && !host) {
                ggml_backend_tensor_set(&t, data, 0, n * sizeof(float));
            }
            status = ok ? GGML_STATUS_SUCCESS : GGML_STATUS_FAILED;
            if (!ok) {
                GGML_LOG_ERROR("ggml-mpi worker: MPI failed an allreduce of %zu floats\n", n);
            }
        }
        if (!host) {
            free(data);
        }
    }
    reply_begin(w);
    ggml_mpi_put_u32(&w->reply, (uint32_t) (int32_t) status);
    worker_send_reply(w);
}

static void cmd_graph_forget(struct worker * w, struct ggml_mpi_reader * r) {
    struct worker_backend * wb = worker_backend(w, ggml_mpi_get_u64(r));
    const uint64_t id = ggml_mpi_get_u64(r);
    if (ggml_mpi_reader_done(r) && wb != NULL) {
        backend_drop_graph(wb, id);
    }
}

//
// keep-alives
//

static void * keepalive_main(void * arg) {
    struct worker * w = (struct worker *) arg;
    struct worker_keepalive * ka = &w->ka;
    pthread_mutex_lock(&ka->lock);
    while (!ka->quit) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        const long long wait_ns = (long long) (GGML_MPI_KEEPALIVE_S * 1e9);
        until.tv_sec  += (time_t) (wait_ns / 1000000000LL);
        until.tv_nsec += (long) (wait_ns % 1000000000LL);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec  += 1;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&ka->cond, &ka->lock, &until);
        if (ka->computing && !ka->quit && ggml_mpi_now() - ka->last_sent >= GGML_MPI_KEEPALIVE_S) {
            uint8_t msg[4] = { GGML_MPI_REPLY_KEEPALIVE, 0, 0, 0 };
            ggml_mpi_send_msg(msg, sizeof(msg), 0, GGML_MPI_TAG_REPLY, -1);
            ka->last_sent = ggml_mpi_now();
        }
    }
    pthread_mutex_unlock(&ka->lock);
    return NULL;
}

//
// the loop
//

static bool worker_init(struct worker * w, int n_threads) {
    memset(w, 0, sizeof(*w));
    w->n_threads = n_threads;
    ggml_mpi_writer_init(&w->msg);
    ggml_mpi_writer_init(&w->reply);
    pthread_mutex_init(&w->ka.lock, NULL);
    pthread_cond_init(&w->ka.cond, NULL);
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (!worker_serves(dev)) {
            continue;
        }
        ggml_backend_dev_t * grown = (ggml_backend_dev_t *) realloc(w->devices, (w->n_devices + 1) * sizeof(*grown));
        if (grown == NULL) {
            GGML_LOG_ERROR("ggml-mpi worker: out of memory\n");
            return false;
        }
        w->devices = grown;
        w->devices[w->n_devices++] = dev;
    }
    if (!ggml_mpi_comm_serialized()) {
        GGML_LOG_WARN("ggml-mpi worker: MPI allows calls from one thread only: no keep-alives during long computations\n");
        return true;
    }
    w->keepalive = pthread_create(&w->ka.thread, NULL, keepalive_main, w) == 0;
    return true;
}

static void worker_free(struct worker * w) {
    if (w->keepalive) {
        pthread_mutex_lock(&w->ka.lock);
        w->ka.quit = true;
        pthread_cond_signal(&w->ka.cond);
        pthread_mutex_unlock(&w->ka.lock);
        pthread_join(w->ka.thread, NULL);
    }
    for (size_t i = 0; i < w->n_backends; i++) {
        if (w->backends[i].backend != NULL) {
            backend_forget_graphs(&w->backends[i]);
            ggml_backend_free(w->backends[i].backend);
        }
    }
    for (size_t i = 0; i < w->n_buffers; i++) {
        if (w->buffers[i] != NULL) {
            ggml_backend_buffer_free(w->buffers[i]);
        }
    }
    for (size_t i = 0; i < w->n_comms; i++) {
        if (w->comms[i].id != 0) {
            comm_free(w, &w->comms[i]);
        }
    }
    free(w->comms);
    free(w->backends);
    free(w->buffers);
    free(w->devices);
    ggml_mpi_writer_free(&w->msg);
    ggml_mpi_writer_free(&w->reply);
    pthread_cond_destroy(&w->ka.cond);
    pthread_mutex_destroy(&w->ka.lock);
}

// serves one command; false on SHUTDOWN
static bool worker_serve(struct worker * w) {
    struct ggml_mpi_reader r = ggml_mpi_reader_of(w->msg.data, w->msg.size);
    const uint32_t cmd = ggml_mpi_get_u32(&r);
    switch (r.ok ? cmd : 0) {
        case GGML_MPI_CMD_HELLO:           cmd_hello(w);                break;
        case GGML_MPI_CMD_SHUTDOWN:        return false;
        case GGML_MPI_CMD_SUPPORTS_OP:     cmd_supports_op(w, &r);      break;
        case GGML_MPI_CMD_BUFFER_ALLOC:    cmd_buffer_alloc(w, &r);     break;
        case GGML_MPI_CMD_BUFFER_FREE:     cmd_buffer_free(w, &r);      break;
        case GGML_MPI_CMD_BUFFER_CLEAR:    cmd_buffer_clear(w, &r);     break;
        case GGML_MPI_CMD_SET:             cmd_set(w, &r, false);       break;
        case GGML_MPI_CMD_GET:             cmd_get(w, &r);              break;
        case GGML_MPI_CMD_MEMSET:          cmd_memset(w, &r);           break;
        case GGML_MPI_CMD_COPY:            cmd_copy(w, &r);             break;
        case GGML_MPI_CMD_PEER_SEND:       cmd_peer_send(w, &r);        break;
        case GGML_MPI_CMD_PEER_RECV:       cmd_set(w, &r, true);        break;
        case GGML_MPI_CMD_BACKEND_INIT:    cmd_backend_init(w, &r);     break;
        case GGML_MPI_CMD_BACKEND_FREE:    cmd_backend_free(w, &r);     break;
        case GGML_MPI_CMD_GRAPH_COMPUTE:   cmd_graph(w, &r, true);      break;
        case GGML_MPI_CMD_GRAPH_RECOMPUTE: cmd_graph(w, &r, false);     break;
        case GGML_MPI_CMD_GRAPH_FORGET:    cmd_graph_forget(w, &r);     break;
        case GGML_MPI_CMD_COMM_CREATE:     cmd_comm_create(w, &r);      break;
        case GGML_MPI_CMD_COMM_FREE:       cmd_comm_free(w, &r);        break;
        case GGML_MPI_CMD_ALLREDUCE:       cmd_allreduce(w, &r);        break;
        default:
            GGML_LOG_ERROR("ggml-mpi worker: refusing a message of %zu bytes: unknown command %u\n", w->msg.size, cmd);
            break;
    }
    return true;
}

enum ggml_status ggml_backend_mpi_worker(int n_threads) {
    if (!ggml_mpi_comm_start() || ggml_mpi_comm_rank() == 0) {
        GGML_LOG_ERROR("%s: not a worker: this process is %s\n", __func__,
                       ggml_mpi_comm_start() ? "rank 0 of its MPI job" : "not part of an MPI job");
        return GGML_STATUS_FAILED;
    }
    struct worker w;
    if (!worker_init(&w, n_threads)) {
        worker_free(&w);
        return GGML_STATUS_FAILED;
    }
    for (;;) {
        // commands come only from rank 0; nothing else is read on this tag
        if (!ggml_mpi_recv_msg(&w.msg, 0, GGML_MPI_TAG_CMD, -1)) {
            GGML_LOG_ERROR("%s: rank %d: cannot receive from rank 0: stopping\n", __func__, ggml_mpi_comm_rank());
            worker_free(&w);
            return GGML_STATUS_FAILED;
        }
        if (!worker_serve(&w)) {
            break;
        }
    }
    worker_free(&w);
    return GGML_STATUS_SUCCESS;
}
