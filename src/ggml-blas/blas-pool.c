// blas-pool.c: the BLAS backend's own worker threads.
//
// The backend converts weights to F32 before handing them to the BLAS
// library; the rows are shared among these threads. A job is published under
// the mutex with a new generation number; each worker runs its share once per
// generation and the last one to finish wakes the caller. Workers wait on a
// condition variable (no spinning): between products the BLAS library's
// threads or the CPU backend's pool have the cores to themselves.

#include "blas-impl.h"
#include "ggml-impl.h"

#include <pthread.h>
#include <stdlib.h>

struct ggml_blas_pool {
    pthread_mutex_t   mutex;
    pthread_cond_t    work_ready;   // a new generation, or stop
    pthread_cond_t    work_done;    // n_running reached 0
    pthread_t *       workers;      // n_threads - 1
    int               n_threads;
    int               n_started;    // workers created (all of them unless creation failed)
    unsigned          generation;
    bool              stop;
    ggml_blas_task_fn fn;
    void *            data;
    int               nth;
    int               n_running;    // workers of this generation not finished yet
};

struct worker_arg {
    struct ggml_blas_pool * pool;
    int                     ith;
};

static void * pool_worker(void * p) {
    struct worker_arg arg = *(struct worker_arg *) p;
    free(p);
    struct ggml_blas_pool * pool = arg.pool;
    unsigned seen = 0;
    pthread_mutex_lock(&pool->mutex);
    for (;;) {
        while (!pool->stop && pool->generation == seen) {
            pthread_cond_wait(&pool->work_ready, &pool->mutex);
        }
        if (pool->stop) {
            break;
        }
        seen = pool->generation;
        if (arg.ith >= pool->nth) {
            continue;
        }
        const ggml_blas_task_fn fn = pool->fn;
        void * data = pool->data;
        const int nth = pool->nth;
        pthread_mutex_unlock(&pool->mutex);
        fn(data, arg.ith, nth);
        pthread_mutex_lock(&pool->mutex);
        if (--pool->n_running == 0) {
            pthread_cond_signal(&pool->work_done);
        }
    }
    pthread_mutex_unlock(&pool->mutex);
    return NULL;
}

static void pool_stop_workers(struct ggml_blas_pool * pool) {
    pthread_mutex_lock(&pool->mutex);
    pool->stop = true;
    pthread_cond_broadcast(&pool->work_ready);
    pthread_mutex_unlock(&pool->mutex);
    for (int i = 0; i < pool->n_started; i++) {
        pthread_join(pool->workers[i], NULL);
    }
}

struct ggml_blas_pool * ggml_blas_pool_new(int n_threads) {
    GGML_ASSERT(n_threads >= 1);
    struct ggml_blas_pool * pool = (struct ggml_blas_pool *) calloc(1, sizeof(*pool));
    pthread_t * workers = (pthread_t *) calloc((size_t) n_threads, sizeof(pthread_t));
    if (pool == NULL || workers == NULL) {
        GGML_LOG_ERROR("%s: out of memory for a pool of %d threads\n", __func__, n_threads);
        free(pool);
        free(workers);
        return NULL;
    }
    pthread_mutex_init(&pool->mutex, NULL);
    pthread_cond_init(&pool->work_ready, NULL);
    pthread_cond_init(&pool->work_done, NULL);
    pool->workers   = workers;
    pool->n_threads = n_threads;

    for (int i = 1; i < n_threads; i++) {
        struct worker_arg * arg = (struct worker_arg *) malloc(sizeof(*arg));
        if (arg == NULL) {
            GGML_LOG_ERROR("%s: out of memory starting thread %d of %d\n", __func__, i, n_threads);
            ggml_blas_pool_free(pool);
            return NULL;
        }
        *arg = (struct worker_arg) { .pool = pool, .ith = i };
        const int rc = pthread_create(&pool->workers[pool->n_started], NULL, pool_worker, arg);
        if (rc != 0) {
            GGML_LOG_ERROR("%s: cannot start thread %d of %d (error %d)\n", __func__, i, n_threads, rc);
            free(arg);
            ggml_blas_pool_free(pool);
            return NULL;
        }
        pool->n_started++;
    }
    return pool;
}

void ggml_blas_pool_free(struct ggml_blas_pool * pool) {
    if (pool == NULL) {
        return;
    }
    pool_stop_workers(pool);
    pthread_cond_destroy(&pool->work_done);
    pthread_cond_destroy(&pool->work_ready);
    pthread_mutex_destroy(&pool->mutex);
    free(pool->workers);
    free(pool);
}

int ggml_blas_pool_n_threads(const struct ggml_blas_pool * pool) {
    return pool->n_threads;
}

void ggml_blas_pool_run(struct ggml_blas_pool * pool, ggml_blas_task_fn fn, void * data, int nth) {
    GGML_ASSERT(nth >= 1 && nth <= pool->n_threads);
    if (nth == 1) {
        fn(data, 0, 1);
        return;
    }
    pthread_mutex_lock(&pool->mutex);
    pool->fn        = fn;
    pool->data      = data;
    pool->nth       = nth;
    pool->n_running = nth - 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->work_ready);
    pthread_mutex_unlock(&pool->mutex);

    fn(data, 0, nth);

    pthread_mutex_lock(&pool->mutex);
    while (pool->n_running > 0) {
        pthread_cond_wait(&pool->work_done, &pool->mutex);
    }
    pthread_mutex_unlock(&pool->mutex);
}
