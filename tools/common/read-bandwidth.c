// read-bandwidth.c: the read bandwidth (read-bandwidth.h).
//
// Each thread xors its buffer into 64-byte accumulators (GNU vector types:
// the widest loads the build targets; plain C elsewhere), 8 vectors a step,
// taken from 1, 2, 4 or 8 sequential streams (the buffer cut into that many
// parts, read in step), with or without a software prefetch of each line 1
// or 2 KiB ahead in its stream (the row dots read 2 or 4 streams and ask for
// the line 2 KiB ahead: src/ggml-cpu/simd/stream-prefetch.h). No one pattern
// reaches the memory's limit everywhere: on the 2-core Zen 5 build host one
// stream per thread read 56-63 GB/s and 8 streams 72-73 (2 threads); on a
// 2-core Zen 3 (EPYC family 25 model 1), 2 threads, 7 rounds alternated, the
// medians (highest) were 16.2 (18.2) GB/s for 1 stream, 18.4 (22.7) for 8,
// 20.5 (27.4) for 4 streams with the prefetch 1 KiB ahead and 19.1 (28.8)
// for 8 with it: its hardware prefetchers alone keep too few lines in
// flight. Every pattern runs twice, alternated; the best pass is the
// bandwidth.

#include "read-bandwidth.h"

#include "ggml.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#define READ_BYTES_PER_THREAD ((size_t) 256 << 20) // far beyond the last-level caches
#define READ_BYTES_MIN        ((size_t) 32 << 20)  // per thread, when many threads share the memory
#define READ_ROUNDS           2

#if defined(__GNUC__)
typedef uint64_t read_vec __attribute__((vector_size(64)));
#else
typedef uint64_t read_vec;
#endif

struct read_pattern {
    int    streams; // 1, 2, 4 or 8: divides the 8 vectors of a step
    size_t ahead;   // bytes: the prefetch distance in a stream, 0 for none
};

static const struct read_pattern k_patterns[] = {
    { 1, 0 }, { 8, 0 }, { 1, 1024 }, { 4, 1024 }, { 8, 1024 }, { 2, 2048 }, { 4, 2048 },
};
#define N_PATTERNS (int) (sizeof(k_patterns) / sizeof(k_patterns[0]))

struct read_job {
    const read_vec *    buf;
    size_t              n;       // vectors in buf (a multiple of 8)
    struct read_pattern pattern;
    uint64_t            result;  // kept so that the reads are not optimized away
};

static void * read_run(void * arg) {
    struct read_job * j = (struct read_job *) arg;
    const size_t streams = (size_t) j->pattern.streams;
    const size_t per     = 8 / streams;   // vectors per stream and step
    const size_t part    = j->n / streams; // vectors per stream (a multiple of per)
    const size_t ahead   = j->pattern.ahead / sizeof(read_vec);
    read_vec acc[8];
    memset(acc, 0, sizeof(acc));
    for (size_t i = 0; i < part; i += per) {
        for (size_t s = 0; s < streams; s++) {
            const read_vec * p = j->buf + s*part + i;
            for (size_t v = 0; v < per; v++) {
#if defined(__GNUC__)
                if (ahead > 0) {
                    // a prefetch never faults: past the end it is ignored
                    __builtin_prefetch(p + v + ahead, 0, 3);
                }
#endif
                acc[s*per + v] ^= p[v];
            }
        }
    }
    uint64_t r = 0;
    for (int k = 0; k < 8; k++) {
        const uint64_t * w = (const uint64_t *) &acc[k];
        for (size_t e = 0; e < sizeof(read_vec) / sizeof(uint64_t); e++) {
            r ^= w[e];
        }
    }
    j->result = r;
    return NULL;
}

static void set_err(char * err, size_t err_size, const char * msg) {
    if (err != NULL && err_size > 0) {
        snprintf(err, err_size, "%s", msg);
    }
}

struct tools_read_probe {
    int               n_threads;
    size_t            per_thread; // bytes
    struct read_job * jobs;
    pthread_t       * th;
};

int tools_read_n_patterns(void) {
    return N_PATTERNS;
}

void tools_read_pattern(int pattern, int * streams, size_t * ahead) {
    const struct read_pattern p = k_patterns[pattern >= 0 && pattern < N_PATTERNS ? pattern : 0];
    *streams = p.streams;
    *ahead   = p.ahead;
}

// A buffer of the measure: 2 MiB-aligned and, on Linux, advised
// MADV_HUGEPAGE as ggml's host buffers of weights are (ggml_aligned_malloc,
// GGML_NO_HUGEPAGES turns both off): the measure reads memory mapped the way
// the weights it is set against are. On 4 KiB pages the same reads ran at
// 0.88-0.92 of the speed (Zen 3 host, 2 threads, 4 streams with the
// prefetch, the medians of two runs of 60 alternated pairs), which set
// generation against a limit lower than the memory's.
static void * read_buffer_alloc(size_t size) {
    const size_t align = (size_t) 2 << 20;
    void * buf = aligned_alloc(align, (size + align - 1) / align * align);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (buf != NULL && getenv("GGML_NO_HUGEPAGES") == NULL) {
        (void) madvise(buf, size, MADV_HUGEPAGE);
    }
#endif
    return buf;
}

size_t tools_read_probe_bytes(const struct tools_read_probe * probe) {
    return (size_t) probe->n_threads * probe->per_thread;
}

void tools_read_probe_free(struct tools_read_probe * probe) {
    if (probe == NULL) {
        return;
    }
    for (int i = 0; probe->jobs != NULL && i < probe->n_threads; i++) {
        free((void *) probe->jobs[i].buf);
    }
    free(probe->jobs);
    free(probe->th);
    free(probe);
}

struct tools_read_probe * tools_read_probe_init(int n_threads, size_t bytes_per_thread, char * err, size_t err_size) {
    if (n_threads < 1) {
        n_threads = 1;
    }
    set_err(err, err_size, "");
    const size_t step = 8 * sizeof(read_vec);
    // many threads: together no more than half the memory (a measure must not
    // push the machine into swap or the OOM killer); each still reads well
    // beyond the caches
    size_t per_thread = bytes_per_thread / step * step;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
        const double half = 0.5 * (double) pages * (double) page;
        if ((double) per_thread * n_threads > half) {
            per_thread = (size_t) (half / n_threads) / step * step;
        }
    }
#endif
    if (per_thread < READ_BYTES_MIN) {
        char msg[160];
        snprintf(msg, sizeof(msg), "%d threads: too many for the bandwidth measure (%zu MiB each would exceed half the memory)",
                 n_threads, READ_BYTES_MIN >> 20);
        set_err(err, err_size, msg);
        return NULL;
    }
    struct tools_read_probe * probe = (struct tools_read_probe *) calloc(1, sizeof(*probe));
    if (probe != NULL) {
        probe->n_threads  = n_threads;
        probe->per_thread = per_thread;
        probe->jobs       = (struct read_job *) calloc((size_t) n_threads, sizeof(*probe->jobs));
        probe->th         = (pthread_t *) calloc((size_t) n_threads, sizeof(*probe->th));
    }
    if (probe == NULL || probe->jobs == NULL || probe->th == NULL) {
        set_err(err, err_size, "out of memory for the bandwidth measure's threads");
        tools_read_probe_free(probe);
        return NULL;
    }
    for (int i = 0; i < n_threads; i++) {
        read_vec * buf = (read_vec *) read_buffer_alloc(per_thread);
        if (buf == NULL) {
            char msg[128];
            snprintf(msg, sizeof(msg), "cannot allocate the %zu MiB buffers of the bandwidth measure",
                     (per_thread >> 20) * (size_t) n_threads);
            set_err(err, err_size, msg);
            tools_read_probe_free(probe);
            return NULL;
        }
        memset(buf, i + 1, per_thread); // touched: no page faults while timed
        probe->jobs[i] = (struct read_job) { .buf = buf, .n = per_thread / sizeof(read_vec), .pattern = k_patterns[0], .result = 0 };
    }
    return probe;
}

void tools_read_probe_part(struct tools_read_probe * probe, int pattern, int i) {
    if (i < 0 || i >= probe->n_threads) {
        return;
    }
    probe->jobs[i].pattern = k_patterns[pattern >= 0 && pattern < N_PATTERNS ? pattern : 0];
    read_run(&probe->jobs[i]);
}

double tools_read_probe_pass(struct tools_read_probe * probe, int pattern, char * err, size_t err_size) {
    const struct read_pattern pat = k_patterns[pattern >= 0 && pattern < N_PATTERNS ? pattern : 0];
    for (int i = 0; i < probe->n_threads; i++) {
        probe->jobs[i].pattern = pat;
    }
    const int64_t t0 = ggml_time_us();
    int started = 0;
    for (; started < probe->n_threads; started++) {
        if (pthread_create(&probe->th[started], NULL, read_run, &probe->jobs[started]) != 0) {
            break;
        }
    }
    for (int i = 0; i < started; i++) {
        pthread_join(probe->th[i], NULL);
    }
    const int64_t t1 = ggml_time_us();
    if (started < probe->n_threads) {
        set_err(err, err_size, "cannot start the threads of the bandwidth measure");
        return 0.0;
    }
    return (double) probe->n_threads * (double) probe->per_thread / (double) (t1 > t0 ? t1 - t0 : 1) * 1e-3;
}

double tools_read_bandwidth_best(int n_threads, int * best_pattern, char * err, size_t err_size) {
    struct tools_read_probe * probe = tools_read_probe_init(n_threads, READ_BYTES_PER_THREAD, err, err_size);
    double best = 0.0;
    int best_p = 0;
    for (int pass = 0; probe != NULL && pass < READ_ROUNDS * N_PATTERNS; pass++) {
        const double gbs = tools_read_probe_pass(probe, pass % N_PATTERNS, err, err_size);
        if (gbs <= 0.0) {
            best = 0.0;
            break;
        }
        if (gbs > best) {
            best   = gbs;
            best_p = pass % N_PATTERNS;
        }
    }
    tools_read_probe_free(probe);
    if (best_pattern != NULL) {
        *best_pattern = best_p;
    }
    return best;
}

double tools_read_bandwidth(int n_threads, char * err, size_t err_size) {
    return tools_read_bandwidth_best(n_threads, NULL, err, err_size);
}
