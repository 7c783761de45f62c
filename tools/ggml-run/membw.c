// membw.c: the read bandwidth (membw.h).
//
// Each thread xors its buffer into 64-byte accumulators, the widest vector
// loads the build targets (GNU vector types, plain C elsewhere), reading it
// as 1 and as 8 sequential streams at once (the buffer cut into that many
// parts, read in step): one stream alone does not reach the memory's limit
// on every machine (the 2-core Zen 5 build host: 56-63 GB/s with 1 per
// thread, 72-73 with 8, 2 threads). The best pass is the bandwidth.

#include "membw.h"
#include "run-common.h"

#include "ggml.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MEMBW_BYTES_PER_THREAD ((size_t) 256 << 20) // far beyond the last-level caches
#define MEMBW_PASSES           4 // 1, 8, 1, 8 streams

#if defined(__GNUC__)
typedef uint64_t membw_vec __attribute__((vector_size(64)));
#else
typedef uint64_t membw_vec;
#endif

struct membw_job {
    const membw_vec * buf;
    size_t            n;       // vectors in buf (a multiple of 8)
    size_t            streams; // read at once: 1 or 8
    uint64_t          result;  // kept so that the reads are not optimized away
};

static void * membw_read(void * arg) {
    struct membw_job * j = (struct membw_job *) arg;
    membw_vec acc[8];
    memset(acc, 0, sizeof(acc));
    if (j->streams == 8) {
        const size_t part = j->n / 8;
        for (size_t i = 0; i < part; i++) {
            for (int k = 0; k < 8; k++) {
                acc[k] ^= j->buf[k*part + i];
            }
        }
    } else {
        for (size_t i = 0; i < j->n; i += 8) {
            for (int k = 0; k < 8; k++) {
                acc[k] ^= j->buf[i + k];
            }
        }
    }
    uint64_t r = 0;
    for (int k = 0; k < 8; k++) {
        const uint64_t * w = (const uint64_t *) &acc[k];
        for (size_t e = 0; e < sizeof(membw_vec) / sizeof(uint64_t); e++) {
            r ^= w[e];
        }
    }
    j->result = r;
    return NULL;
}

double run_read_bandwidth(int n_threads) {
    if (n_threads < 1) {
        n_threads = 1;
    }
    const size_t n = MEMBW_BYTES_PER_THREAD / sizeof(membw_vec);
    struct membw_job * jobs = (struct membw_job *) run_calloc((size_t) n_threads, sizeof(*jobs), "the bandwidth measure");
    pthread_t        * th   = (pthread_t *) run_calloc((size_t) n_threads, sizeof(*th), "the bandwidth measure");
    bool ok = jobs != NULL && th != NULL;
    for (int i = 0; ok && i < n_threads; i++) {
        membw_vec * buf = (membw_vec *) aligned_alloc(64, MEMBW_BYTES_PER_THREAD);
        if (buf == NULL) {
            run_error("cannot allocate the %zu MiB buffers of the bandwidth measure",
                      (MEMBW_BYTES_PER_THREAD >> 20) * (size_t) n_threads);
            ok = false;
            break;
        }
        memset(buf, i + 1, MEMBW_BYTES_PER_THREAD); // touched: no page faults while timed
        jobs[i] = (struct membw_job) { .buf = buf, .n = n, .streams = 1, .result = 0 };
    }
    double best = 0.0;
    for (int pass = 0; ok && pass < MEMBW_PASSES; pass++) {
        for (int i = 0; i < n_threads; i++) {
            jobs[i].streams = pass % 2 == 0 ? 1 : 8;
        }
        const int64_t t0 = ggml_time_us();
        int started = 0;
        for (; started < n_threads; started++) {
            if (pthread_create(&th[started], NULL, membw_read, &jobs[started]) != 0) {
                break;
            }
        }
        for (int i = 0; i < started; i++) {
            pthread_join(th[i], NULL);
        }
        const int64_t t1 = ggml_time_us();
        if (started < n_threads) {
            run_error("cannot start the threads of the bandwidth measure");
            ok = false;
            break;
        }
        const double gbs = (double) n_threads * (double) MEMBW_BYTES_PER_THREAD / (double) (t1 > t0 ? t1 - t0 : 1) * 1e-3;
        best = gbs > best ? gbs : best;
    }
    for (int i = 0; jobs != NULL && i < n_threads; i++) {
        free((void *) jobs[i].buf);
    }
    free(jobs);
    free(th);
    return ok ? best : 0.0;
}
