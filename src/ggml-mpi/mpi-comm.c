// mpi-comm.c: the MPI job as the backend sees it: starting and finishing
// MPI, and sends and receives that give up after a timeout.
//
// MPI is started only inside a job: when the launcher's environment says so
// (Open MPI's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK, MPICH's PMI_SIZE) or
// the program started MPI itself. Then this file also finishes it at exit:
// rank 0 first tells the workers to stop; after a worker failed it ends the
// whole job with MPI_Abort instead, since MPI_Finalize would wait for the
// failed rank and a hung worker would be left running.
//
// Waiting polls (MPI_Test, MPI_Iprobe) with a growing sleep between polls:
// Open MPI's blocking calls spin, which on a host with fewer cores than
// ranks takes the cores the ranks that compute need. The poll spins
// briefly first, so that a quick answer costs no sleep.

#include "mpi-impl.h"
#include "ggml-impl.h"

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct mpi_comm {
    bool   in_job;
    bool   owns_mpi;      // started here, so finished here
    bool   serialized;
    int    rank;
    int    size;
    double timeout;
    bool   failed;
    void (*shutdown)(void);
    pthread_mutex_t lock; // guards failed and shutdown
};

static struct mpi_comm g_comm = { .rank = 0, .size = 1, .timeout = 60.0, .lock = PTHREAD_MUTEX_INITIALIZER };

// bytes of the point-to-point messages this rank sent and received (any thread)
static _Atomic uint64_t g_bytes_sent;
static _Atomic uint64_t g_bytes_received;

void ggml_mpi_comm_traffic(uint64_t * sent, uint64_t * received) {
    *sent     = atomic_load(&g_bytes_sent);
    *received = atomic_load(&g_bytes_received);
}
static pthread_once_t  g_comm_once = PTHREAD_ONCE_INIT;

double ggml_mpi_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void comm_finish(void) {
    pthread_mutex_lock(&g_comm.lock);
    const bool failed = g_comm.failed;
    void (*shutdown)(void) = g_comm.shutdown;
    pthread_mutex_unlock(&g_comm.lock);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) {
        return;
    }
    if (failed) {
        GGML_LOG_ERROR("ggml-mpi: a worker failed: ending the MPI job\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
        return;
    }
    if (shutdown != NULL) {
        shutdown();
    }
    pthread_mutex_lock(&g_comm.lock);
    const bool failed_now = g_comm.failed;
    pthread_mutex_unlock(&g_comm.lock);
    if (failed_now) {
        MPI_Abort(MPI_COMM_WORLD, 1);
        return;
    }
    MPI_Finalize();
}

static bool env_says_mpi_job(void) {
    return getenv("OMPI_COMM_WORLD_SIZE") != NULL || getenv("PMIX_RANK") != NULL || getenv("PMI_SIZE") != NULL;
}

static void comm_init(void) {
    const char * timeout = getenv("GGML_MPI_TIMEOUT");
    if (timeout != NULL) {
        char * end = NULL;
        const double t = strtod(timeout, &end);
        if (end != timeout && *end == '\0' && t > 0) {
            g_comm.timeout = t;
        } else {
            GGML_LOG_WARN("ggml-mpi: ignoring GGML_MPI_TIMEOUT=%s (not a positive number of seconds)\n", timeout);
        }
    }
    int initialized = 0;
    MPI_Initialized(&initialized);
    int provided = MPI_THREAD_SINGLE;
    if (initialized) {
        MPI_Query_thread(&provided);
    } else {
        if (!env_says_mpi_job()) {
            return;
        }
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
            GGML_LOG_ERROR("ggml-mpi: MPI_Init_thread failed: no MPI devices\n");
            return;
        }
        g_comm.owns_mpi = true;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_comm.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_comm.size);
    g_comm.serialized = provided >= MPI_THREAD_SERIALIZED;
    g_comm.in_job     = true;
    if (g_comm.owns_mpi) {
        atexit(comm_finish);
    }
}

bool ggml_mpi_comm_start(void) {
    pthread_once(&g_comm_once, comm_init);
    return g_comm.in_job;
}

int ggml_mpi_comm_rank(void) {
    return ggml_mpi_comm_start() ? g_comm.rank : 0;
}

int ggml_mpi_comm_size(void) {
    return ggml_mpi_comm_start() ? g_comm.size : 1;
}

bool ggml_mpi_comm_serialized(void) {
    return ggml_mpi_comm_start() && g_comm.serialized;
}

double ggml_mpi_comm_timeout(void) {
    ggml_mpi_comm_start();
    return g_comm.timeout;
}

void ggml_mpi_comm_set_failed(void) {
    pthread_mutex_lock(&g_comm.lock);
    g_comm.failed = true;
    pthread_mutex_unlock(&g_comm.lock);
}

bool ggml_mpi_comm_failed(void) {
    pthread_mutex_lock(&g_comm.lock);
    const bool failed = g_comm.failed;
    pthread_mutex_unlock(&g_comm.lock);
    return failed;
}

void ggml_mpi_comm_set_shutdown(void (*shutdown)(void)) {
    pthread_mutex_lock(&g_comm.lock);
    g_comm.shutdown = shutdown;
    pthread_mutex_unlock(&g_comm.lock);
}

//
// waiting
//

struct poll_state {
    double start;
    double yield_s;   // polled back to back (yielding the core) for this long before sleeping
    int    spins;
    long   sleep_ns;
    bool   last_look; // the timeout has passed: one more look, then give up
};

static struct poll_state poll_begin(double yield_s) {
    return (struct poll_state) { .start = ggml_mpi_now(), .yield_s = yield_s, .spins = 0, .sleep_ns = 2000, .last_look = false };
}

// false when timeout_s has passed and the caller has looked once more since:
// a process that was not scheduled for longer than the timeout (a loaded
// machine) still takes what arrived meanwhile instead of counting it lost
static bool poll_wait(struct poll_state * ps, double timeout_s) {
    const double waited = ggml_mpi_now() - ps->start;
    if (timeout_s >= 0 && waited > timeout_s) {
        if (ps->last_look) {
            return false;
        }
        ps->last_look = true;
        return true;
    }
    if (waited < ps->yield_s) {
        sched_yield();
    } else if (++ps->spins > 64) {
        struct timespec ts = { 0, ps->sleep_ns };
        nanosleep(&ts, NULL);
        ps->sleep_ns = ps->sleep_ns < 500000 ? ps->sleep_ns * 2 : 1000000;
    }
    return true;
}

static bool wait_request(MPI_Request * req, double timeout_s, double yield_s) {
    struct poll_state ps = poll_begin(yield_s);
    for (;;) {
        int done = 0;
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            return false;
        }
        if (done) {
            return true;
        }
        if (!poll_wait(&ps, timeout_s)) {
            // the peer may still take it later: the request is let go, not waited for
            MPI_Cancel(req);
            MPI_Request_free(req);
            return false;
        }
    }
}

bool ggml_mpi_send_msg(const void * data, size_t size, int rank, int tag, double timeout_s) {
    if (size > (size_t) INT32_MAX) {
        return false;
    }
    MPI_Request req;
    if (MPI_Isend(data, (int) size, MPI_BYTE, rank, tag, MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
        return false;
    }
    if (!wait_request(&req, timeout_s, 0)) {
        return false;
    }
    atomic_fetch_add(&g_bytes_sent, (uint64_t) size);
    return true;
}

bool ggml_mpi_send_data(const void * data, size_t size, int rank, int tag, double timeout_s) {
    const uint8_t * p = (const uint8_t *) data;
    for (size_t done = 0; done < size;) {
        const size_t n = size - done < GGML_MPI_CHUNK ? size - done : GGML_MPI_CHUNK;
        if (!ggml_mpi_send_msg(p + done, n, rank, tag, timeout_s)) {
            return false;
        }
        done += n;
    }
    return true;
}

// waits for a message and returns its size
static bool probe(int rank, int tag, double timeout_s, size_t * size) {
    struct poll_state ps = poll_begin(0);
    for (;;) {
        int        found = 0;
        MPI_Status status;
        if (MPI_Iprobe(rank, tag, MPI_COMM_WORLD, &found, &status) != MPI_SUCCESS) {
            return false;
        }
        if (found) {
            int count = 0;
            if (MPI_Get_count(&status, MPI_BYTE, &count) != MPI_SUCCESS || count < 0) {
                return false;
            }
            *size = (size_t) count;
            return true;
        }
        if (!poll_wait(&ps, timeout_s)) {
            return false;
        }
    }
}

// takes the probed message of size bytes into dst (which holds at least size)
static bool take(void * dst, size_t size, int rank, int tag) {
    if (MPI_Recv(dst, (int) size, MPI_BYTE, rank, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        return false;
    }
    atomic_fetch_add(&g_bytes_received, (uint64_t) size);
    return true;
}

// takes and drops a message of a size that was not expected, keeping the stream in order
static void drop(size_t size, int rank, int tag) {
    void * scratch = malloc(size > 0 ? size : 1);
    if (scratch != NULL) {
        take(scratch, size, rank, tag);
        free(scratch);
    }
}

bool ggml_mpi_recv_msg(struct ggml_mpi_writer * msg, int rank, int tag, double timeout_s) {
    ggml_mpi_writer_reset(msg);
    size_t size = 0;
    if (!probe(rank, tag, timeout_s, &size)) {
        return false;
    }
    if (size > GGML_MPI_MAX_HEADER) {
        GGML_LOG_ERROR("ggml-mpi: refusing a message of %zu bytes from rank %d (at most %zu)\n", size, rank,
                       GGML_MPI_MAX_HEADER);
        drop(size, rank, tag);
        return false;
    }
    // grow to size (the writer keeps its memory between messages)
    if (size > msg->cap) {
        uint8_t * grown = (uint8_t *) realloc(msg->data, size);
        if (grown == NULL) {
            GGML_LOG_ERROR("ggml-mpi: out of memory for a message of %zu bytes\n", size);
            drop(size, rank, tag);
            return false;
        }
        msg->data = grown;
        msg->cap  = size;
    }
    if (!take(msg->data, size, rank, tag)) {
        return false;
    }
    msg->size = size;
    return true;
}

bool ggml_mpi_recv_data(void * data, size_t size, int rank, int tag, double timeout_s) {
    uint8_t * p = (uint8_t *) data;
    for (size_t done = 0; done < size;) {
        const size_t n = size - done < GGML_MPI_CHUNK ? size - done : GGML_MPI_CHUNK;
        size_t got = 0;
        if (!probe(rank, tag, timeout_s, &got)) {
            return false;
        }
        if (got != n) {
            GGML_LOG_ERROR("ggml-mpi: refusing a data chunk of %zu bytes from rank %d (expected %zu)\n", got, rank, n);
            drop(got, rank, tag);
            return false;
        }
        if (!take(p + done, n, rank, tag)) {
            return false;
        }
        done += n;
    }
    return true;
}

//
// groups of workers
//

struct ggml_mpi_group {
    MPI_Comm comm;
};

struct ggml_mpi_group * ggml_mpi_group_create(const int * ranks, int n, int tag) {
    struct ggml_mpi_group * group = (struct ggml_mpi_group *) calloc(1, sizeof(*group));
    if (group == NULL) {
        GGML_LOG_ERROR("ggml-mpi: out of memory for a group of %d ranks\n", n);
        return NULL;
    }
    MPI_Group world_group = MPI_GROUP_NULL;
    MPI_Group members     = MPI_GROUP_NULL;
    bool ok = MPI_Comm_group(MPI_COMM_WORLD, &world_group) == MPI_SUCCESS &&
              MPI_Group_incl(world_group, n, ranks, &members) == MPI_SUCCESS &&
              MPI_Comm_create_group(MPI_COMM_WORLD, members, tag, &group->comm) == MPI_SUCCESS &&
              group->comm != MPI_COMM_NULL;
    if (ok) {
        MPI_Comm_set_errhandler(group->comm, MPI_ERRORS_RETURN);
    }
    if (members != MPI_GROUP_NULL) {
        MPI_Group_free(&members);
    }
    if (world_group != MPI_GROUP_NULL) {
        MPI_Group_free(&world_group);
    }
    if (!ok) {
        GGML_LOG_ERROR("ggml-mpi: rank %d: MPI cannot make a communicator of %d ranks\n", g_comm.rank, n);
        free(group);
        return NULL;
    }
    return group;
}

void ggml_mpi_group_free(struct ggml_mpi_group * group) {
    if (group != NULL) {
        MPI_Comm_free(&group->comm);
        free(group);
    }
}

// A collective advances only while its ranks call into MPI: the growing
// sleeps of a transfer's wait would leave a large one idle most of the time
// (4 MiB at 0.04 GB/s against 0.6 on a 2-core host), so it is polled back to
// back, yielding the core (its peers, on an oversubscribed host, need it);
// only after a second without completion (a peer late, stopped or gone)
// does it sleep between polls.
bool ggml_mpi_group_allreduce_f32(struct ggml_mpi_group * group, float * data, size_t n) {
    // Pieces of 4 MiB: Open MPI's algorithm for one large reduction ran far
    // slower here (64 MiB in one: 0.1 GB/s; in pieces of 4 MiB: 1-3 GB/s on
    // the 2-core build host), and MPI counts are ints anyway
    const size_t piece = (size_t) 1 << 20; // floats
    for (size_t done = 0; done < n;) {
        const size_t k = n - done < piece ? n - done : piece;
        MPI_Request req;
        if (MPI_Iallreduce(MPI_IN_PLACE, data + done, (int) k, MPI_FLOAT, MPI_SUM, group->comm, &req) != MPI_SUCCESS ||
            !wait_request(&req, -1, 1.0)) {
            return false;
        }
        done += k;
    }
    return true;
}
