// test-blas-pool.c: the BLAS backend's worker pool (src/ggml-blas/blas-pool.c),
// built on its own so that it runs in every configuration, ThreadSanitizer's
// included, with or without a BLAS library.
//
// Every job must run each share ith < nth exactly once, and what the shares
// wrote must be visible to the caller when ggml_blas_pool_run returns; jobs
// of different sizes follow each other on one pool, and pools are made and
// freed repeatedly.

#include "blas-impl.h"
#include "testing.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAX_THREADS 6
#define N_VALUES    1000

struct job {
    int        runs[MAX_THREADS];    // per share: written only by the thread running it
    int        seen_nth[MAX_THREADS];
    int64_t    values[N_VALUES];     // the shares fill disjoint ranges
    atomic_int calls;
    int        round;
};

static void fill_share(void * data, int ith, int nth) {
    struct job * j = (struct job *) data;
    j->runs[ith]++;
    j->seen_nth[ith] = nth;
    atomic_fetch_add(&j->calls, 1);
    for (int i = N_VALUES * ith / nth; i < N_VALUES * (ith + 1) / nth; i++) {
        j->values[i] = (int64_t) j->round * N_VALUES + i;
    }
}

static void check_pool(int n_threads) {
    struct ggml_blas_pool * pool = ggml_blas_pool_new(n_threads);
    CHECK(pool != NULL);
    if (pool == NULL) {
        return;
    }
    CHECK_EQ_INT(ggml_blas_pool_n_threads(pool), n_threads);
    static struct job j;
    for (int round = 0; round < 300; round++) {
        const int nth = 1 + round % n_threads; // every size up to the pool's, in turn
        memset(j.runs, 0, sizeof(j.runs));
        memset(j.values, 0xff, sizeof(j.values));
        atomic_store(&j.calls, 0);
        j.round = round;
        ggml_blas_pool_run(pool, fill_share, &j, nth);
        CHECK_EQ_INT(atomic_load(&j.calls), nth);
        for (int i = 0; i < MAX_THREADS; i++) {
            CHECK_EQ_INT(j.runs[i], i < nth ? 1 : 0);
            if (i < nth) {
                CHECK_EQ_INT(j.seen_nth[i], nth);
            }
        }
        bool all = true;
        for (int i = 0; i < N_VALUES; i++) {
            all = all && j.values[i] == (int64_t) round * N_VALUES + i;
        }
        CHECK_MSG(all, "round %d, %d of %d threads: values missing", round, nth, n_threads);
    }
    ggml_blas_pool_free(pool);
}

int main(void) {
    for (int n = 1; n <= MAX_THREADS; n++) {
        check_pool(n);
    }
    // made and freed at once, with workers perhaps not started waiting yet
    for (int i = 0; i < 50; i++) {
        ggml_blas_pool_free(ggml_blas_pool_new(1 + i % 4));
    }
    ggml_blas_pool_free(NULL);
    return TEST_RESULT();
}
