// ggml-mpi.c: rank 0's side of the MPI backend: the registry entry, one
// device per device of each worker, their buffer types, buffers and
// streams, each a proxy that sends commands to its worker (mpi-worker.c).
//
// All MPI traffic of rank 0 goes through one lock, one command and its
// answer at a time. A graph computation is sent without waiting for its
// status: the worker computes while rank 0 goes on (to the next split on
// another worker); the status is collected before the next answer that
// worker owes, at the latest on synchronize. A failed status is returned by
// the next graph_compute of that stream.
//
// A worker that does not take or answer a command within the timeout is
// marked failed: from then on every operation on its devices fails at once
// (graph_compute returns GGML_STATUS_FAILED, get_tensor gives zeros), and at
// exit the job is ended with MPI_Abort (mpi-comm.c).
//
// The registry exports ggml_backend_comm_init / _allreduce_tensor / _free for
// the meta device: over streams of distinct workers, the partial sums are
// added by MPI_Allreduce among those workers, never through rank 0.

#include "mpi-impl.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// graphs kept per stream on the worker; the least recently used is forgotten
// past this (a meta device sends a few per layer and token)
#define MPI_GRAPH_CACHE 256

struct mpi_worker {
    int              rank;
    bool             failed;
    int              pending;        // graph computations whose status has not been read
    enum ggml_status pending_status; // the first failed one among them
    uint64_t         n_sent;         // graph computations sent, ever
    uint64_t         n_done;         // of them, those whose status has been read
};

// an event: done when the worker has finished the computations sent before it was recorded
struct mpi_event {
    struct mpi_worker * worker;      // NULL: never recorded (done)
    uint64_t            n_sent;
};

struct mpi_supports_cache {
    uint64_t * keys;   // hash of the op's description, 0: empty
    uint8_t  * values;
    size_t     size;   // a power of two
    size_t     n;
};

struct mpi_device {
    struct ggml_backend_device        device;
    struct ggml_backend_buffer_type   buft;
    struct mpi_worker               * worker;
    uint32_t                          remote_index;
    char                              name[96];
    char                              description[256];
    char                              buft_name[112];
    enum ggml_backend_dev_type        type;
    size_t                            memory_free;
    size_t                            memory_total;
    size_t                            alignment;
    size_t                            max_size;
    struct mpi_supports_cache         supports;
};

struct mpi_stream;

struct mpi_state {
    pthread_mutex_t          lock;
    struct mpi_stream      * streams;   // every stream, linked by next
    double                   wait_s;    // > 0: how long to wait for workers instead of GGML_MPI_TIMEOUT
    struct mpi_worker      * workers;
    int                      n_workers;
    struct mpi_device     ** devices;
    size_t                   n_devices;
    struct ggml_mpi_writer   msg;
    struct ggml_mpi_writer   reply;
    struct ggml_backend_reg  reg;
    uint64_t                 next_comm_id;
    uint64_t                 n_allreduce;       // done between workers, ever
    uint64_t                 allreduce_bytes;   // of one worker's tensors, summed over them
};

static struct mpi_state g_mpi = { .lock = PTHREAD_MUTEX_INITIALIZER };
static pthread_once_t   g_mpi_once = PTHREAD_ONCE_INIT;

//
// talking to a worker (with g_mpi.lock held)
//

// seconds to wait for a worker: GGML_MPI_TIMEOUT, but at least 120 while the
// job starts (a worker may first load modules and initialise its GPUs, on a busy host)
static double wait_s(void) {
    return g_mpi.wait_s > 0 ? g_mpi.wait_s : ggml_mpi_comm_timeout();
}

static void worker_fail(struct mpi_worker * w, const char * what) {
    if (!w->failed) {
        GGML_LOG_ERROR("ggml-mpi: worker rank %d failed (%s within %.0f s): its devices are unusable\n", w->rank, what,
                       wait_s());
    }
    w->failed = true;
    ggml_mpi_comm_set_failed();
}

static void msg_begin(enum ggml_mpi_cmd cmd) {
    ggml_mpi_writer_reset(&g_mpi.msg);
    ggml_mpi_put_u32(&g_mpi.msg, (uint32_t) cmd);
}

static bool msg_send(struct mpi_worker * w) {
    if (w->failed) {
        return false;
    }
    if (!g_mpi.msg.ok) {
        GGML_LOG_ERROR("ggml-mpi: out of memory for a message to rank %d\n", w->rank);
        return false;
    }
    if (!ggml_mpi_send_msg(g_mpi.msg.data, g_mpi.msg.size, w->rank, GGML_MPI_TAG_CMD, wait_s())) {
        worker_fail(w, "a command was not taken");
        return false;
    }
    return true;
}

// the next DONE answer of the worker into g_mpi.reply (keep-alives skipped), read past its kind
static bool reply_next(struct mpi_worker * w, struct ggml_mpi_reader * r) {
    for (;;) {
        if (!ggml_mpi_recv_msg(&g_mpi.reply, w->rank, GGML_MPI_TAG_REPLY, wait_s())) {
            worker_fail(w, "no answer");
            return false;
        }
        *r = ggml_mpi_reader_of(g_mpi.reply.data, g_mpi.reply.size);
        const uint32_t kind = ggml_mpi_get_u32(r);
        if (r->ok && kind == GGML_MPI_REPLY_KEEPALIVE) {
            continue;
        }
        if (!r->ok || kind != GGML_MPI_REPLY_DONE) {
            GGML_LOG_ERROR("ggml-mpi: refusing an answer of %zu bytes from rank %d\n", g_mpi.reply.size, w->rank);
            worker_fail(w, "a malformed answer");
            return false;
        }
        return true;
    }
}

// reads the statuses of the computations sent before, up to the n_sent-th
static bool worker_drain_to(struct mpi_worker * w, uint64_t n_sent) {
    while (w->pending > 0 && w->n_done < n_sent && !w->failed) {
        struct ggml_mpi_reader r;
        if (!reply_next(w, &r)) {
            break;
        }
        const enum ggml_status status = (enum ggml_status) (int32_t) ggml_mpi_get_u32(&r);
        if (!ggml_mpi_reader_done(&r)) {
            worker_fail(w, "a malformed status");
            break;
        }
        w->pending--;
        w->n_done++;
        if (status != GGML_STATUS_SUCCESS && w->pending_status == GGML_STATUS_SUCCESS) {
            w->pending_status = status;
        }
    }
    if (w->failed) {
        w->pending = 0;
        w->n_done  = w->n_sent;
    }
    return !w->failed;
}

static bool worker_drain(struct mpi_worker * w) {
    return worker_drain_to(w, w->n_sent);
}

// sends the command and reads its answer
static bool worker_call(struct mpi_worker * w, struct ggml_mpi_reader * r) {
    return worker_drain(w) && msg_send(w) && reply_next(w, r);
}

//
// supports_op cache (open addressing on the 64-bit hash of the op's description)
//

static bool supports_cache_find(const struct mpi_supports_cache * c, uint64_t key, bool * value) {
    if (c->size == 0) {
        return false;
    }
    for (size_t i = key & (c->size - 1);; i = (i + 1) & (c->size - 1)) {
        if (c->keys[i] == 0) {
            return false;
        }
        if (c->keys[i] == key) {
            *value = c->values[i] != 0;
            return true;
        }
    }
}

static void supports_cache_put(struct mpi_supports_cache * c, uint64_t key, bool value) {
    if (2 * (c->n + 1) > c->size) {
        struct mpi_supports_cache grown = { .size = c->size == 0 ? 256 : 2 * c->size };
        grown.keys   = (uint64_t *) calloc(grown.size, sizeof(uint64_t));
        grown.values = (uint8_t *) calloc(grown.size, 1);
        if (grown.keys == NULL || grown.values == NULL) {
            free(grown.keys);
            free(grown.values);
            return; // not cached: asked again next time
        }
        for (size_t i = 0; i < c->size; i++) {
            if (c->keys[i] != 0) {
                supports_cache_put(&grown, c->keys[i], c->values[i] != 0);
            }
        }
        free(c->keys);
        free(c->values);
        *c = grown;
    }
    size_t i = key & (c->size - 1);
    while (c->keys[i] != 0 && c->keys[i] != key) {
        i = (i + 1) & (c->size - 1);
    }
    c->n     += c->keys[i] == 0;
    c->keys[i]   = key;
    c->values[i] = value;
}

//
// buffers
//

struct mpi_buffer {
    struct mpi_device * dev;
    uint64_t            handle;
    uintptr_t           base;   // the worker's address of the buffer: tensors' data pointers count from it
};

static struct mpi_device * buft_device(ggml_backend_buffer_type_t buft) {
    return (struct mpi_device *) buft->context;
}

static bool buffer_is_mpi(ggml_backend_buffer_t buffer);

// a buffer on the worker ctx
static bool mpi_buffer_ref(void * ctx, ggml_backend_buffer_t buffer, uint64_t * handle, uintptr_t * base) {
    if (!buffer_is_mpi(buffer)) {
        return false;
    }
    const struct mpi_buffer * b = (const struct mpi_buffer *) buffer->context;
    if (b->dev->worker != (struct mpi_worker *) ctx) {
        return false;
    }
    *handle = b->handle;
    *base   = b->base;
    return true;
}

static uint64_t tensor_offset(const struct ggml_tensor * tensor, size_t offset) {
    const struct mpi_buffer * b = (const struct mpi_buffer *) tensor->buffer->context;
    return (uint64_t) ((uintptr_t) tensor->data - b->base) + offset;
}

static void streams_forget_graphs(struct mpi_worker * w);

static void mpi_buffer_free(ggml_backend_buffer_t buffer) {
    struct mpi_buffer * b = (struct mpi_buffer *) buffer->context;
    pthread_mutex_lock(&g_mpi.lock);
    msg_begin(GGML_MPI_CMD_BUFFER_FREE);
    ggml_mpi_put_u64(&g_mpi.msg, b->handle);
    msg_send(b->dev->worker);
    // the worker forgets every graph it keeps when a buffer goes (a new buffer may get its handle)
    streams_forget_graphs(b->dev->worker);
    pthread_mutex_unlock(&g_mpi.lock);
    free(b);
}

static void * mpi_buffer_get_base(ggml_backend_buffer_t buffer) {
    return (void *) ((struct mpi_buffer *) buffer->context)->base;
}

static void mpi_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value, size_t offset,
                                     size_t size) {
    struct mpi_buffer * b = (struct mpi_buffer *) buffer->context;
    pthread_mutex_lock(&g_mpi.lock);
    msg_begin(GGML_MPI_CMD_MEMSET);
    ggml_mpi_put_u64(&g_mpi.msg, b->handle);
    ggml_mpi_put_u64(&g_mpi.msg, tensor_offset(tensor, offset));
    ggml_mpi_put_u64(&g_mpi.msg, size);
    ggml_mpi_put_u8(&g_mpi.msg, value);
    msg_send(b->dev->worker);
    pthread_mutex_unlock(&g_mpi.lock);
}

static void mpi_set(struct mpi_buffer * b, uint64_t offset, const void * data, size_t size) {
    struct mpi_worker * w = b->dev->worker;
    msg_begin(GGML_MPI_CMD_SET);
    ggml_mpi_put_u64(&g_mpi.msg, b->handle);
    ggml_mpi_put_u64(&g_mpi.msg, offset);
    ggml_mpi_put_u64(&g_mpi.msg, size);
    if (msg_send(w) && !ggml_mpi_send_data(data, size, w->rank, GGML_MPI_TAG_CMD, ggml_mpi_comm_timeout())) {
        worker_fail(w, "tensor data was not taken");
    }
}

static void mpi_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data, size_t offset,
                                  size_t size) {
    pthread_mutex_lock(&g_mpi.lock);
    mpi_set((struct mpi_buffer *) buffer->context, tensor_offset(tensor, offset), data, size);
    pthread_mutex_unlock(&g_mpi.lock);
}

static void mpi_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data, size_t offset,
                                  size_t size) {
    struct mpi_buffer * b = (struct mpi_buffer *) buffer->context;
    struct mpi_worker * w = b->dev->worker;
    bool ok = false;
    pthread_mutex_lock(&g_mpi.lock);
    msg_begin(GGML_MPI_CMD_GET);
    ggml_mpi_put_u64(&g_mpi.msg, b->handle);
    ggml_mpi_put_u64(&g_mpi.msg, tensor_offset(tensor, offset));
    ggml_mpi_put_u64(&g_mpi.msg, size);
    struct ggml_mpi_reader r;
    if (worker_call(w, &r)) {
        const uint8_t found = ggml_mpi_get_u8(&r);
        if (ggml_mpi_reader_done(&r) && found == 1) {
            ok = ggml_mpi_recv_data(data, size, w->rank, GGML_MPI_TAG_REPLY, ggml_mpi_comm_timeout());
            if (!ok) {
                worker_fail(w, "tensor data did not come");
            }
        }
    }
    pthread_mutex_unlock(&g_mpi.lock);
    if (!ok) {
        GGML_LOG_ERROR("ggml-mpi: cannot read %zu bytes of tensor '%s' from %s: zeros instead\n", size, tensor->name,
                       b->dev->name);
        memset(data, 0, size);
    }
}

// dst is in this buffer; src in a host buffer, or in a buffer of an MPI device
static bool mpi_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    struct mpi_buffer * bd = (struct mpi_buffer *) buffer->context;
    const size_t size = ggml_nbytes(src);
    if (src->buffer != NULL && ggml_backend_buffer_is_host(src->buffer)) {
        pthread_mutex_lock(&g_mpi.lock);
        mpi_set(bd, tensor_offset(dst, 0), src->data, size);
        pthread_mutex_unlock(&g_mpi.lock);
        return true;
    }
    if (src->buffer == NULL || !buffer_is_mpi(src->buffer)) {
        return false;
    }
    struct mpi_buffer * bs = (struct mpi_buffer *) src->buffer->context;
    struct mpi_worker * ws = bs->dev->worker;
    struct mpi_worker * wd = bd->dev->worker;
    pthread_mutex_lock(&g_mpi.lock);
    if (ws == wd) {
        msg_begin(GGML_MPI_CMD_COPY);
        ggml_mpi_put_u64(&g_mpi.msg, bs->handle);
        ggml_mpi_put_u64(&g_mpi.msg, tensor_offset(src, 0));
        ggml_mpi_put_u64(&g_mpi.msg, bd->handle);
        ggml_mpi_put_u64(&g_mpi.msg, tensor_offset(dst, 0));
        ggml_mpi_put_u64(&g_mpi.msg, size);
        msg_send(wd);
    } else {
        // worker to worker: the sender goes first; each takes its part in the order rank 0 gave
        msg_begin(GGML_MPI_CMD_PEER_SEND);
        ggml_mpi_put_u64(&g_mpi.msg, bs->handle);
        ggml_mpi_put_u64(&g_mpi.msg, tensor_offset(src, 0));
        ggml_mpi_put_u64(&g_mpi.msg, size);
        ggml_mpi_put_u32(&g_mpi.msg, (uint32_t) wd->rank);
        if (msg_send(ws)) {
            msg_begin(GGML_MPI_CMD_PEER_RECV);
            ggml_mpi_put_u64(&g_mpi.msg, bd->handle);
            ggml_mpi_put_u64(&g_mpi.msg, tensor_offset(dst, 0));
            ggml_mpi_put_u64(&g_mpi.msg, size);
            ggml_mpi_put_u32(&g_mpi.msg, (uint32_t) ws->rank);
            msg_send(wd);
        }
    }
    pthread_mutex_unlock(&g_mpi.lock);
    return true;
}

static void mpi_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct mpi_buffer * b = (struct mpi_buffer *) buffer->context;
    pthread_mutex_lock(&g_mpi.lock);
    msg_begin(GGML_MPI_CMD_BUFFER_CLEAR);
    ggml_mpi_put_u64(&g_mpi.msg, b->handle);
    ggml_mpi_put_u8(&g_mpi.msg, value);
    msg_send(b->dev->worker);
    pthread_mutex_unlock(&g_mpi.lock);
}

static const struct ggml_backend_buffer_i mpi_buffer_i = {
    .free_buffer   = mpi_buffer_free,
    .get_base      = mpi_buffer_get_base,
    .init_tensor   = NULL,
    .memset_tensor = mpi_buffer_memset_tensor,
    .set_tensor    = mpi_buffer_set_tensor,
    .get_tensor    = mpi_buffer_get_tensor,
    .set_tensor_2d = NULL,
    .get_tensor_2d = NULL,
    .cpy_tensor    = mpi_buffer_cpy_tensor,
    .clear         = mpi_buffer_clear,
    .reset         = NULL,
};

static bool buffer_is_mpi(ggml_backend_buffer_t buffer) {
    return buffer->iface.get_base == mpi_buffer_get_base;
}

//
// buffer type
//

static const char * mpi_buft_get_name(ggml_backend_buffer_type_t buft) {
    return buft_device(buft)->buft_name;
}

static ggml_backend_buffer_t mpi_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    struct mpi_device * dev = buft_device(buft);
    struct mpi_buffer * b = (struct mpi_buffer *) calloc(1, sizeof(*b));
    if (b == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    uint64_t handle = 0, base = 0, got = 0;
    pthread_mutex_lock(&g_mpi.lock);
    msg_begin(GGML_MPI_CMD_BUFFER_ALLOC);
    ggml_mpi_put_u32(&g_mpi.msg, dev->remote_index);
    ggml_mpi_put_u64(&g_mpi.msg, size);
    struct ggml_mpi_reader r;
    if (worker_call(dev->worker, &r)) {
        handle = ggml_mpi_get_u64(&r);
        base   = ggml_mpi_get_u64(&r);
        got    = ggml_mpi_get_u64(&r);
        if (!ggml_mpi_reader_done(&r) || (handle != 0 && (base == 0 || got < size))) {
            worker_fail(dev->worker, "a malformed buffer");
            handle = 0;
        }
    }
    pthread_mutex_unlock(&g_mpi.lock);
    if (handle == 0) {
        GGML_LOG_ERROR("%s: %s cannot allocate a buffer of %zu bytes\n", __func__, dev->name, size);
        free(b);
        return NULL;
    }
    *b = (struct mpi_buffer) { .dev = dev, .handle = handle, .base = (uintptr_t) base };
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, mpi_buffer_i, b, size);
    if (buffer == NULL) {
        mpi_buffer_free(&(struct ggml_backend_buffer) { .context = b });
    }
    return buffer;
}

static size_t mpi_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    return buft_device(buft)->alignment;
}

static size_t mpi_buft_get_max_size(ggml_backend_buffer_type_t buft) {
    return buft_device(buft)->max_size;
}

//
// streams
//

struct mpi_sent_graph {
    uint64_t  id;
    uint64_t  hash;
    uint8_t * bytes;
    size_t    size;
};

struct mpi_stream {
    struct mpi_stream   * next;
    struct mpi_device   * dev;
    uint64_t              handle;
    struct mpi_sent_graph graphs[MPI_GRAPH_CACHE];
    size_t                n_graphs;
    uint64_t              next_id;
    struct ggml_mpi_writer graph_msg;
};

static void streams_forget_graphs(struct mpi_worker * w) {
    for (struct mpi_stream * s = g_mpi.streams; s != NULL; s = s->next) {
        if (s->dev->worker != w) {
            continue;
        }
        for (size_t i = 0; i < s->n_graphs; i++) {
            free(s->graphs[i].bytes);
        }
        s->n_graphs = 0;
    }
}

static const char * mpi_backend_get_name(ggml_backend_t backend) {
    return ((struct mpi_stream *) backend->context)->dev->name;
}

static void mpi_backend_free(ggml_backend_t backend) {
    struct mpi_stream * s = (struct mpi_stream *) backend->context;
    pthread_mutex_lock(&g_mpi.lock);
    worker_drain(s->dev->worker);
    msg_begin(GGML_MPI_CMD_BACKEND_FREE);
    ggml_mpi_put_u64(&g_mpi.msg, s->handle);
    msg_send(s->dev->worker);
    for (struct mpi_stream ** p = &g_mpi.streams; *p != NULL; p = &(*p)->next) {
        if (*p == s) {
            *p = s->next;
            break;
        }
    }
    pthread_mutex_unlock(&g_mpi.lock);
    for (size_t i = 0; i < s->n_graphs; i++) {
        free(s->graphs[i].bytes);
    }
    ggml_mpi_writer_free(&s->graph_msg);
    free(s);
    free(backend);
}

static void mpi_backend_synchronize(ggml_backend_t backend) {
    struct mpi_stream * s = (struct mpi_stream *) backend->context;
    pthread_mutex_lock(&g_mpi.lock);
    worker_drain(s->dev->worker);
    pthread_mutex_unlock(&g_mpi.lock);
}

// the graph the worker has under this description, or NULL; a graph found
// becomes the most recently used (the last), so that the parts a meta device
// sends in turn every token stay while they are in use
static struct mpi_sent_graph * stream_find_graph(struct mpi_stream * s, uint64_t hash, const uint8_t * bytes, size_t size) {
    for (size_t i = 0; i < s->n_graphs; i++) {
        struct mpi_sent_graph * g = &s->graphs[i];
        if (g->hash == hash && g->size == size && memcmp(g->bytes, bytes, size) == 0) {
            const struct mpi_sent_graph found = *g;
            memmove(&s->graphs[i], &s->graphs[i + 1], (s->n_graphs - i - 1) * sizeof(s->graphs[0]));
            s->graphs[s->n_graphs - 1] = found;
            return &s->graphs[s->n_graphs - 1];
        }
    }
    return NULL;
}

// remembers a graph the worker is sent (forgetting the least recently used when full); its id, or 0 when not kept
static uint64_t stream_keep_graph(struct mpi_stream * s, uint64_t hash, const uint8_t * bytes, size_t size) {
    uint8_t * copy = (uint8_t *) malloc(size);
    if (copy == NULL) {
        return 0;
    }
    memcpy(copy, bytes, size);
    if (s->n_graphs == MPI_GRAPH_CACHE) {
        msg_begin(GGML_MPI_CMD_GRAPH_FORGET);
        ggml_mpi_put_u64(&g_mpi.msg, s->handle);
        ggml_mpi_put_u64(&g_mpi.msg, s->graphs[0].id);
        msg_send(s->dev->worker);
        free(s->graphs[0].bytes);
        memmove(&s->graphs[0], &s->graphs[1], (MPI_GRAPH_CACHE - 1) * sizeof(s->graphs[0]));
        s->n_graphs--;
    }
    const uint64_t id = ++s->next_id;
    s->graphs[s->n_graphs++] = (struct mpi_sent_graph) { .id = id, .hash = hash, .bytes = copy, .size = size };
    return id;
}

static enum ggml_status mpi_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct mpi_stream * s = (struct mpi_stream *) backend->context;
    struct mpi_worker * w = s->dev->worker;

    ggml_mpi_writer_reset(&s->graph_msg);
    if (!ggml_mpi_put_graph(&s->graph_msg, cgraph, mpi_buffer_ref, w)) {
        GGML_LOG_ERROR("%s: %s: cannot describe the graph\n", __func__, s->dev->name);
        return GGML_STATUS_FAILED;
    }
    const uint64_t hash = ggml_mpi_hash(s->graph_msg.data, s->graph_msg.size);

    pthread_mutex_lock(&g_mpi.lock);
    enum ggml_status status = GGML_STATUS_SUCCESS;
    if (w->failed) {
        status = GGML_STATUS_FAILED;
    } else if (w->pending_status != GGML_STATUS_SUCCESS) {
        status            = w->pending_status; // of a computation sent before
        w->pending_status = GGML_STATUS_SUCCESS;
    } else {
        struct mpi_sent_graph * sent = stream_find_graph(s, hash, s->graph_msg.data, s->graph_msg.size);
        if (sent != NULL) {
            msg_begin(GGML_MPI_CMD_GRAPH_RECOMPUTE);
            ggml_mpi_put_u64(&g_mpi.msg, s->handle);
            ggml_mpi_put_u64(&g_mpi.msg, sent->id);
        } else {
            const uint64_t id = stream_keep_graph(s, hash, s->graph_msg.data, s->graph_msg.size);
            msg_begin(GGML_MPI_CMD_GRAPH_COMPUTE);
            ggml_mpi_put_u64(&g_mpi.msg, s->handle);
            ggml_mpi_put_u64(&g_mpi.msg, id); // 0: computed once, not kept
            ggml_mpi_put_bytes(&g_mpi.msg, s->graph_msg.data, s->graph_msg.size);
        }
        if (msg_send(w)) {
            w->pending++;
            w->n_sent++;
        } else {
            status = GGML_STATUS_FAILED;
        }
    }
    pthread_mutex_unlock(&g_mpi.lock);
    if (status != GGML_STATUS_SUCCESS) {
        GGML_LOG_ERROR("%s: %s: %s\n", __func__, s->dev->name, w->failed ? "the worker failed" : ggml_status_to_string(status));
    }
    return status;
}

// Between two MPI buffers, no wait is needed: the source's worker sends the
// data after the computations sent to it before, and the destination's takes
// it before those sent to it after.
static bool mpi_backend_cpy_tensor_async(ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src,
                                         struct ggml_tensor * dst) {
    (void) backend_src;
    (void) backend_dst;
    if (src->buffer == NULL || dst->buffer == NULL || !buffer_is_mpi(src->buffer) || !buffer_is_mpi(dst->buffer)) {
        return false;
    }
    return mpi_buffer_cpy_tensor(dst->buffer, src, dst);
}

//
// events: a worker computes in the order it is sent graphs, so an event is
// the count of computations sent to it when recorded; waiting for it reads
// statuses up to that one. Another device's stream that must wait for it
// waits on rank 0 (the data it needs is copied by rank 0's order anyway).
//

static void mpi_backend_event_record(ggml_backend_t backend, ggml_backend_event_t event) {
    struct mpi_stream * s = (struct mpi_stream *) backend->context;
    struct mpi_event * e = (struct mpi_event *) event->context;
    pthread_mutex_lock(&g_mpi.lock);
    e->worker = s->dev->worker;
    e->n_sent = s->dev->worker->n_sent;
    pthread_mutex_unlock(&g_mpi.lock);
}

static void mpi_event_wait_done(struct mpi_event * e) {
    pthread_mutex_lock(&g_mpi.lock);
    if (e->worker != NULL) {
        worker_drain_to(e->worker, e->n_sent);
    }
    pthread_mutex_unlock(&g_mpi.lock);
}

static void mpi_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event) {
    struct mpi_stream * s = (struct mpi_stream *) backend->context;
    struct mpi_event * e = (struct mpi_event *) event->context;
    // the same worker runs its commands in order: nothing to wait for
    if (e->worker != s->dev->worker) {
        mpi_event_wait_done(e);
    }
}

static ggml_guid_t mpi_guid(void) {
    static ggml_guid guid = { 0x4d, 0x50, 0x49, 0x2d, 0x67, 0x67, 0x6d, 0x6c, 0x2d, 0x63, 0x31, 0x31, 0x2d, 0x72, 0x6b, 0x30 };
    return &guid;
}

static const struct ggml_backend_i mpi_backend_i = {
    .get_name            = mpi_backend_get_name,
    .free                = mpi_backend_free,
    .set_tensor_async    = NULL,
    .get_tensor_async    = NULL,
    .set_tensor_2d_async = NULL,
    .get_tensor_2d_async = NULL,
    .cpy_tensor_async    = mpi_backend_cpy_tensor_async,
    .synchronize         = mpi_backend_synchronize,
    .graph_plan_create   = NULL,
    .graph_plan_free     = NULL,
    .graph_plan_update   = NULL,
    .graph_plan_compute  = NULL,
    .graph_compute       = mpi_backend_graph_compute,
    .event_record        = mpi_backend_event_record,
    .event_wait          = mpi_backend_event_wait,
    .graph_optimize      = NULL,
};

bool ggml_backend_is_mpi(ggml_backend_t backend) {
    return backend != NULL && ggml_guid_matches(backend->guid, mpi_guid());
}

//
// devices
//

static struct mpi_device * dev_ctx(ggml_backend_dev_t dev) {
    return (struct mpi_device *) dev->context;
}

static const char * mpi_dev_get_name(ggml_backend_dev_t dev) {
    return dev_ctx(dev)->name;
}

static const char * mpi_dev_get_description(ggml_backend_dev_t dev) {
    return dev_ctx(dev)->description;
}

// as the worker reported it when the job started
static void mpi_dev_get_memory(ggml_backend_dev_t dev, size_t * free_mem, size_t * total) {
    *free_mem = dev_ctx(dev)->memory_free;
    *total    = dev_ctx(dev)->memory_total;
}

static enum ggml_backend_dev_type mpi_dev_get_type(ggml_backend_dev_t dev) {
    return dev_ctx(dev)->type;
}

static void mpi_dev_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    props->name        = mpi_dev_get_name(dev);
    props->description = mpi_dev_get_description(dev);
    props->type        = mpi_dev_get_type(dev);
    props->device_id   = NULL;
    mpi_dev_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps = (struct ggml_backend_dev_caps) {
        .async                = true,
        .host_buffer          = false,
        .buffer_from_host_ptr = false,
        .events               = true,
        .mmap_support         = false,
    };
}

static ggml_backend_t mpi_dev_init_backend(ggml_backend_dev_t dev, const char * params) {
    (void) params;
    struct mpi_device * d = dev_ctx(dev);
    struct mpi_stream * s = (struct mpi_stream *) calloc(1, sizeof(*s));
    ggml_backend_t backend = (ggml_backend_t) calloc(1, sizeof(*backend));
    if (s == NULL || backend == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        free(s);
        free(backend);
        return NULL;
    }
    uint64_t handle = 0;
    pthread_mutex_lock(&g_mpi.lock);
    msg_begin(GGML_MPI_CMD_BACKEND_INIT);
    ggml_mpi_put_u32(&g_mpi.msg, d->remote_index);
    struct ggml_mpi_reader r;
    if (worker_call(d->worker, &r)) {
        handle = ggml_mpi_get_u64(&r);
        if (!ggml_mpi_reader_done(&r)) {
            worker_fail(d->worker, "a malformed answer");
            handle = 0;
        }
    }
    pthread_mutex_unlock(&g_mpi.lock);
    if (handle == 0) {
        GGML_LOG_ERROR("%s: %s cannot start a backend\n", __func__, d->name);
        free(s);
        free(backend);
        return NULL;
    }
    s->dev    = d;
    s->handle = handle;
    ggml_mpi_writer_init(&s->graph_msg);
    pthread_mutex_lock(&g_mpi.lock);
    s->next       = g_mpi.streams;
    g_mpi.streams = s;
    pthread_mutex_unlock(&g_mpi.lock);
    *backend = (struct ggml_backend) { .guid = mpi_guid(), .iface = mpi_backend_i, .device = dev, .context = s };
    return backend;
}

static ggml_backend_buffer_type_t mpi_dev_get_buffer_type(ggml_backend_dev_t dev) {
    return &dev_ctx(dev)->buft;
}

static bool mpi_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    struct mpi_device * d = dev_ctx(dev);
    if (ggml_mpi_op_is_local_only(op->op)) {
        return false;
    }
    // the question: this node alone, its sources as leaves without data
    struct ggml_tensor node = *op;
    struct ggml_tensor srcs[GGML_MAX_SRC];
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (op->src[i] != NULL) {
            srcs[i] = *op->src[i];
            memset(srcs[i].src, 0, sizeof(srcs[i].src));
            srcs[i].view_src = NULL;
            srcs[i].data     = NULL;
            srcs[i].name[0]  = '\0';
            node.src[i]      = &srcs[i];
        }
    }
    node.view_src = NULL;
    node.data     = NULL;
    node.name[0]  = '\0'; // names do not change the answer, and would defeat the cache
    struct ggml_tensor * nodes[1] = { &node };
    struct ggml_cgraph graph = { .size = 1, .n_nodes = 1, .nodes = nodes };

    struct ggml_mpi_writer w;
    ggml_mpi_writer_init(&w);
    ggml_mpi_put_u32(&w, GGML_MPI_CMD_SUPPORTS_OP);
    ggml_mpi_put_u32(&w, d->remote_index);
    const size_t question_at = w.size;
    bool supported = false;
    if (ggml_mpi_put_graph(&w, &graph, NULL, NULL)) {
        const uint64_t key = ggml_mpi_hash(w.data + question_at, w.size - question_at) | 1;
        pthread_mutex_lock(&g_mpi.lock);
        if (!supports_cache_find(&d->supports, key, &supported)) {
            struct ggml_mpi_writer saved = g_mpi.msg;
            g_mpi.msg = w;
            struct ggml_mpi_reader r;
            if (worker_call(d->worker, &r)) {
                supported = ggml_mpi_get_u8(&r) == 1 && ggml_mpi_reader_done(&r);
                supports_cache_put(&d->supports, key, supported);
            }
            w         = g_mpi.msg;
            g_mpi.msg = saved;
        }
        pthread_mutex_unlock(&g_mpi.lock);
    }
    ggml_mpi_writer_free(&w);
    return supported;
}

static ggml_backend_event_t mpi_dev_event_new(ggml_backend_dev_t dev) {
    struct mpi_event * e = (struct mpi_event *) calloc(1, sizeof(*e));
    ggml_backend_event_t event = (ggml_backend_event_t) calloc(1, sizeof(*event));
    if (e == NULL || event == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        free(e);
        free(event);
        return NULL;
    }
    *event = (struct ggml_backend_event) { .device = dev, .context = e };
    return event;
}

static void mpi_dev_event_free(ggml_backend_dev_t dev, ggml_backend_event_t event) {
    (void) dev;
    free(event->context);
    free(event);
}

static void mpi_dev_event_synchronize(ggml_backend_dev_t dev, ggml_backend_event_t event) {
    (void) dev;
    mpi_event_wait_done((struct mpi_event *) event->context);
}

static bool mpi_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    return buft == &dev_ctx(dev)->buft;
}

//
// collectives between workers (the meta device's ggml_backend_comm_*)
//
// An allreduce is synchronous on rank 0: first the statuses of the graphs
// each worker was sent are read (those computed the partial sums; a worker
// serves its commands in order, so the allreduce could not overtake them
// anyway, but waiting here keeps the time of the graphs out of the
// allreduce's timeout), then every worker is sent the command, then every
// answer is read. A worker that does not answer within the timeout fails,
// and with it every worker of the collective: those may be waiting in it
// for ever, which MPI cannot interrupt; the job is ended at exit.
//

struct mpi_comm_ctx {
    uint64_t             id;
    size_t               n;
    struct mpi_worker ** workers;   // n, the j-th backend's
    bool                 warned;    // about a type it leaves to the host
};

static void comm_fail_all(struct mpi_comm_ctx * c, const char * what) {
    for (size_t j = 0; j < c->n; j++) {
        worker_fail(c->workers[j], what);
    }
}

static bool comm_healthy(const struct mpi_comm_ctx * c) {
    for (size_t j = 0; j < c->n; j++) {
        if (c->workers[j]->failed) {
            return false;
        }
    }
    return true;
}

// reads every worker's status of the collective `what`; false (all failed) when one is missing or failed
static bool comm_collect(struct mpi_comm_ctx * c, const char * what) {
    char failure[64];
    snprintf(failure, sizeof(failure), "no answer to %s", what);
    for (size_t j = 0; j < c->n; j++) {
        struct ggml_mpi_reader r;
        if (!reply_next(c->workers[j], &r)) {
            comm_fail_all(c, failure);
            return false;
        }
        const enum ggml_status status = (enum ggml_status) (int32_t) ggml_mpi_get_u32(&r);
        if (!ggml_mpi_reader_done(&r) || status != GGML_STATUS_SUCCESS) {
            GGML_LOG_ERROR("ggml-mpi: rank %d failed %s\n", c->workers[j]->rank, what);
            comm_fail_all(c, failure);
            return false;
        }
    }
    return true;
}

static void * mpi_comm_init(ggml_backend_t * backends, size_t n_backends) {
    if (n_backends < 2) {
        return NULL;
    }
    for (size_t j = 0; j < n_backends; j++) {
        if (!ggml_backend_is_mpi(backends[j])) {
            return NULL;
        }
        const struct mpi_worker * w = ((struct mpi_stream *) backends[j]->context)->dev->worker;
        for (size_t k = 0; k < j; k++) {
            if (((struct mpi_stream *) backends[k]->context)->dev->worker == w) {
                GGML_LOG_INFO("ggml-mpi: two devices of rank %d: partial sums added through the host\n", w->rank);
                return NULL;
            }
        }
    }
    struct mpi_comm_ctx * c = (struct mpi_comm_ctx *) calloc(1, sizeof(*c));
    if (c == NULL || (c->workers = (struct mpi_worker **) calloc(n_backends, sizeof(*c->workers))) == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        free(c);
        return NULL;
    }
    c->n = n_backends;
    for (size_t j = 0; j < n_backends; j++) {
        c->workers[j] = ((struct mpi_stream *) backends[j]->context)->dev->worker;
    }
    pthread_mutex_lock(&g_mpi.lock);
    c->id = ++g_mpi.next_comm_id;
    bool ok = true;
    for (size_t j = 0; j < c->n && ok; j++) {
        ok = worker_drain(c->workers[j]);
    }
    for (size_t j = 0; j < c->n && ok; j++) {
        msg_begin(GGML_MPI_CMD_COMM_CREATE);
        ggml_mpi_put_u64(&g_mpi.msg, c->id);
        ggml_mpi_put_u32(&g_mpi.msg, (uint32_t) c->n);
        for (size_t k = 0; k < c->n; k++) {
            ggml_mpi_put_u32(&g_mpi.msg, (uint32_t) c->workers[k]->rank);
        }
        if (!msg_send(c->workers[j])) {
            comm_fail_all(c, "a communicator was not made");
            ok = false;
        }
    }
    ok = ok && comm_collect(c, "making a communicator");
    pthread_mutex_unlock(&g_mpi.lock);
    if (!ok) {
        GGML_LOG_ERROR("%s: no communicator of %zu workers: partial sums added through the host\n", __func__, c->n);
        free(c->workers);
        free(c);
        return NULL;
    }
    return c;
}

static void mpi_comm_free(void * comm_ctx) {
    struct mpi_comm_ctx * c = (struct mpi_comm_ctx *) comm_ctx;
    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&g_mpi.lock);
    // a failed worker may be stuck in a collective of it: the others keep it (the job is ended anyway)
    if (comm_healthy(c)) {
        for (size_t j = 0; j < c->n; j++) {
            msg_begin(GGML_MPI_CMD_COMM_FREE);
            ggml_mpi_put_u64(&g_mpi.msg, c->id);
            msg_send(c->workers[j]);
        }
    }
    pthread_mutex_unlock(&g_mpi.lock);
    free(c->workers);
    free(c);
}

// whether the tensors are one contiguous F32 tensor per worker, each in a buffer of its worker
static bool comm_tensors_fit(struct mpi_comm_ctx * c, struct ggml_tensor ** tensors) {
    for (size_t j = 0; j < c->n; j++) {
        const struct ggml_tensor * t = tensors[j];
        if (t == NULL || t->buffer == NULL || !buffer_is_mpi(t->buffer) || !ggml_is_contiguous(t) ||
            ggml_nelements(t) != ggml_nelements(tensors[0]) ||
            ((struct mpi_buffer *) t->buffer->context)->dev->worker != c->workers[j]) {
            return false;
        }
        if (t->type != GGML_TYPE_F32) {
            if (!c->warned) {
                GGML_LOG_WARN("ggml-mpi: partial sums of type %s are added through the host (MPI adds f32 only)\n",
                              ggml_type_name(t->type));
                c->warned = true;
            }
            return false;
        }
    }
    return true;
}

static bool mpi_comm_allreduce_tensor(void * comm_ctx, struct ggml_tensor ** tensors) {
    struct mpi_comm_ctx * c = (struct mpi_comm_ctx *) comm_ctx;
    if (c == NULL || !comm_tensors_fit(c, tensors)) {
        return false;
    }
    const int64_t count = ggml_nelements(tensors[0]);
    if (count == 0) {
        return true;
    }
    pthread_mutex_lock(&g_mpi.lock);
    bool ok = true;
    for (size_t j = 0; j < c->n && ok; j++) {
        ok = worker_drain(c->workers[j]);
    }
    for (size_t j = 0; j < c->n && ok; j++) {
        const struct mpi_buffer * b = (const struct mpi_buffer *) tensors[j]->buffer->context;
        msg_begin(GGML_MPI_CMD_ALLREDUCE);
        ggml_mpi_put_u64(&g_mpi.msg, c->id);
        ggml_mpi_put_u64(&g_mpi.msg, b->handle);
        ggml_mpi_put_u64(&g_mpi.msg, tensor_offset(tensors[j], 0));
        ggml_mpi_put_u32(&g_mpi.msg, (uint32_t) tensors[j]->type);
        ggml_mpi_put_u64(&g_mpi.msg, (uint64_t) count);
        if (!msg_send(c->workers[j])) {
            comm_fail_all(c, "an allreduce was not taken");
            ok = false;
        }
    }
    ok = ok && comm_collect(c, "an allreduce");
    if (ok) {
        g_mpi.n_allreduce++;
        g_mpi.allreduce_bytes += ggml_nbytes(tensors[0]);
    }
    pthread_mutex_unlock(&g_mpi.lock);
    return ok;
}

void ggml_backend_mpi_allreduce_stats(uint64_t * n_allreduce, uint64_t * n_bytes) {
    pthread_mutex_lock(&g_mpi.lock);
    *n_allreduce = g_mpi.n_allreduce;
    *n_bytes     = g_mpi.allreduce_bytes;
    pthread_mutex_unlock(&g_mpi.lock);
}

void ggml_backend_mpi_traffic_stats(uint64_t * sent, uint64_t * received) {
    ggml_mpi_comm_traffic(sent, received);
}

//
// registry entry
//

static const char * mpi_reg_get_name(ggml_backend_reg_t reg) {
    (void) reg;
    return "MPI";
}

static size_t mpi_reg_get_device_count(ggml_backend_reg_t reg) {
    (void) reg;
    return g_mpi.n_devices;
}

static ggml_backend_dev_t mpi_reg_get_device(ggml_backend_reg_t reg, size_t index) {
    (void) reg;
    GGML_ASSERT(index < g_mpi.n_devices);
    return &g_mpi.devices[index]->device;
}

static void * mpi_reg_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    (void) reg;
    if (strcmp(name, "ggml_backend_mpi_worker") == 0) {
        ggml_backend_mpi_worker_t fn = ggml_backend_mpi_worker;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_mpi_rank") == 0) {
        ggml_backend_mpi_rank_t fn = ggml_backend_mpi_rank;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_mpi_allreduce_stats") == 0) {
        ggml_backend_mpi_stats_t fn = ggml_backend_mpi_allreduce_stats;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_mpi_traffic_stats") == 0) {
        ggml_backend_mpi_stats_t fn = ggml_backend_mpi_traffic_stats;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_comm_init") == 0) {
        ggml_backend_comm_init_t fn = mpi_comm_init;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_comm_allreduce_tensor") == 0) {
        ggml_backend_comm_allreduce_tensor_t fn = mpi_comm_allreduce_tensor;
        return GGML_FN_TO_PTR(fn);
    }
    if (strcmp(name, "ggml_backend_comm_free") == 0) {
        ggml_backend_comm_free_t fn = mpi_comm_free;
        return GGML_FN_TO_PTR(fn);
    }
    return NULL;
}

static const struct ggml_backend_device_i mpi_device_i = {
    .get_name             = mpi_dev_get_name,
    .get_description      = mpi_dev_get_description,
    .get_memory           = mpi_dev_get_memory,
    .get_type             = mpi_dev_get_type,
    .get_props            = mpi_dev_get_props,
    .init_backend         = mpi_dev_init_backend,
    .get_buffer_type      = mpi_dev_get_buffer_type,
    .get_host_buffer_type = NULL,
    .buffer_from_host_ptr = NULL,
    .supports_op          = mpi_dev_supports_op,
    .supports_buft        = mpi_dev_supports_buft,
    .offload_op           = NULL,
    .event_new            = mpi_dev_event_new,
    .event_free           = mpi_dev_event_free,
    .event_synchronize    = mpi_dev_event_synchronize,
};

static const struct ggml_backend_buffer_type_i mpi_buft_i = {
    .get_name       = mpi_buft_get_name,
    .alloc_buffer   = mpi_buft_alloc_buffer,
    .get_alignment  = mpi_buft_get_alignment,
    .get_max_size   = mpi_buft_get_max_size,
    .get_alloc_size = NULL,
    .is_host        = NULL,
};

// the devices of one worker, from its answer to HELLO
static bool add_worker_devices(struct mpi_worker * w, struct ggml_mpi_reader * r) {
    const uint32_t version   = ggml_mpi_get_u32(r);
    const uint32_t n_devices = ggml_mpi_get_u32(r);
    if (!r->ok || version != GGML_MPI_PROTO_VERSION || n_devices > 4096) {
        GGML_LOG_ERROR("ggml-mpi: rank %d speaks protocol %u (this is %u) or lists %u devices: not used\n", w->rank,
                       version, GGML_MPI_PROTO_VERSION, n_devices);
        return false;
    }
    for (uint32_t i = 0; i < n_devices; i++) {
        struct mpi_device * d = (struct mpi_device *) calloc(1, sizeof(*d));
        struct mpi_device ** grown = d != NULL ? (struct mpi_device **) realloc(g_mpi.devices, (g_mpi.n_devices + 1) * sizeof(*grown)) : NULL;
        if (grown == NULL) {
            free(d);
            GGML_LOG_ERROR("ggml-mpi: out of memory listing the devices of rank %d\n", w->rank);
            return false;
        }
        g_mpi.devices = grown;
        char name[64];
        char description[128];
        ggml_mpi_get_str(r, name, sizeof(name));
        ggml_mpi_get_str(r, description, sizeof(description));
        const uint32_t type = ggml_mpi_get_u32(r);
        d->memory_free  = (size_t) ggml_mpi_get_u64(r);
        d->memory_total = (size_t) ggml_mpi_get_u64(r);
        d->alignment    = (size_t) ggml_mpi_get_u64(r);
        d->max_size     = (size_t) ggml_mpi_get_u64(r);
        if (!r->ok || type > GGML_BACKEND_DEVICE_TYPE_ACCEL || d->alignment == 0 || (d->alignment & (d->alignment - 1)) != 0) {
            GGML_LOG_ERROR("ggml-mpi: refusing the device list of rank %d: device %u is malformed\n", w->rank, i);
            free(d);
            return false;
        }
        d->worker       = w;
        d->remote_index = i;
        // memory of its own, away from this host: whatever it is there (a CPU, an
        // integrated GPU), here it is a GPU, as upstream types its RPC devices
        d->type = GGML_BACKEND_DEVICE_TYPE_GPU;
        snprintf(d->name, sizeof(d->name), "MPI%d:%s", w->rank, name);
        snprintf(d->description, sizeof(d->description), "%s (rank %d)", description, w->rank);
        snprintf(d->buft_name, sizeof(d->buft_name), "%s", d->name);
        d->buft   = (struct ggml_backend_buffer_type) { .iface = mpi_buft_i, .device = &d->device, .context = d };
        d->device = (struct ggml_backend_device) { .iface = mpi_device_i, .reg = &g_mpi.reg, .context = d };
        g_mpi.devices[g_mpi.n_devices++] = d;
    }
    if (!ggml_mpi_reader_done(r)) {
        GGML_LOG_WARN("ggml-mpi: %zu unread bytes after the device list of rank %d\n", r->size - r->pos, w->rank);
    }
    return true;
}

// at exit (from mpi-comm.c): every worker that still answers stops
static void mpi_shutdown_workers(void) {
    pthread_mutex_lock(&g_mpi.lock);
    for (int i = 0; i < g_mpi.n_workers; i++) {
        struct mpi_worker * w = &g_mpi.workers[i];
        worker_drain(w);
        msg_begin(GGML_MPI_CMD_SHUTDOWN);
        msg_send(w);
    }
    pthread_mutex_unlock(&g_mpi.lock);
}

static void mpi_reg_init(void) {
    g_mpi.reg = (struct ggml_backend_reg) {
        .api_version = GGML_BACKEND_API_VERSION,
        .iface       = {
            .get_name         = mpi_reg_get_name,
            .get_device_count = mpi_reg_get_device_count,
            .get_device       = mpi_reg_get_device,
            .get_proc_address = mpi_reg_get_proc_address,
        },
        .context = NULL,
    };
    ggml_mpi_writer_init(&g_mpi.msg);
    ggml_mpi_writer_init(&g_mpi.reply);
    if (!ggml_mpi_comm_start() || ggml_mpi_comm_rank() != 0 || ggml_mpi_comm_size() < 2) {
        return;
    }
    const int n = ggml_mpi_comm_size() - 1;
    g_mpi.workers = (struct mpi_worker *) calloc((size_t) n, sizeof(*g_mpi.workers));
    if (g_mpi.workers == NULL) {
        GGML_LOG_ERROR("ggml-mpi: out of memory: no MPI devices\n");
        return;
    }
    g_mpi.n_workers = n;
    ggml_mpi_comm_set_shutdown(mpi_shutdown_workers);
    pthread_mutex_lock(&g_mpi.lock);
    g_mpi.wait_s = ggml_mpi_comm_timeout() > 120 ? ggml_mpi_comm_timeout() : 120;
    for (int i = 0; i < n; i++) {
        struct mpi_worker * w = &g_mpi.workers[i];
        w->rank = i + 1;
        msg_begin(GGML_MPI_CMD_HELLO);
        struct ggml_mpi_reader r;
        if (worker_call(w, &r)) {
            add_worker_devices(w, &r);
        }
    }
    g_mpi.wait_s = 0;
    pthread_mutex_unlock(&g_mpi.lock);
}

ggml_backend_reg_t ggml_backend_mpi_reg(void) {
    pthread_once(&g_mpi_once, mpi_reg_init);
    return &g_mpi.reg;
}

int ggml_backend_mpi_rank(void) {
    return ggml_mpi_comm_rank();
}

bool ggml_backend_mpi_failed(void) {
    return ggml_mpi_comm_failed();
}

GGML_BACKEND_DL_IMPL(ggml_backend_mpi_reg)
