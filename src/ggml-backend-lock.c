// ggml-backend-lock.c: the per-backend stream locks of ggml-backend-lock.h.
//
// A hash table from backend address to a recursive mutex, with chaining, and
// its own mutex held only for the lookup. Measured cost (bench-threadpool,
// see the closing note of issue 10): two uncontended mutex operations per
// locked call: 20-30 ns per graph (bench-threadpool 20 20000 1: 1.40 -> 1.42 us;
// with its default 2000 nodes, 142 us either way).

#include "ggml-backend-lock.h"
#include "ggml-impl.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

struct stream_lock {
    ggml_backend_t       backend;
    pthread_mutex_t      mutex;
    struct stream_lock * next;
};

static pthread_mutex_t       g_table_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct stream_lock ** g_buckets;   // [g_n_buckets]
static size_t                g_n_buckets;
static size_t                g_n_locks;

// the lock of backends for which none could be made
static pthread_mutex_t g_fallback;
static pthread_once_t  g_fallback_once = PTHREAD_ONCE_INIT;

static void recursive_mutex_init(pthread_mutex_t * m) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(m, &attr);
    pthread_mutexattr_destroy(&attr);
}

static void fallback_init(void) {
    recursive_mutex_init(&g_fallback);
}

static size_t bucket_of(ggml_backend_t backend, size_t n_buckets) {
    uintptr_t h = (uintptr_t) backend;
    h ^= h >> 17;
    h *= (uintptr_t) 0x9E3779B97F4A7C15ULL;
    h ^= h >> 29;
    return (size_t) h & (n_buckets - 1);
}

// doubles the table when it is full; false (table unchanged) when out of memory
static bool table_grow(void) {
    const size_t n = g_n_buckets == 0 ? 16 : g_n_buckets * 2;
    struct stream_lock ** buckets = (struct stream_lock **) calloc(n, sizeof(*buckets));
    if (buckets == NULL) {
        return false;
    }
    for (size_t i = 0; i < g_n_buckets; i++) {
        for (struct stream_lock * l = g_buckets[i], * next; l != NULL; l = next) {
            next = l->next;
            const size_t b = bucket_of(l->backend, n);
            l->next = buckets[b];
            buckets[b] = l;
        }
    }
    free(g_buckets);
    g_buckets   = buckets;
    g_n_buckets = n;
    return true;
}

static pthread_mutex_t * stream_mutex(ggml_backend_t backend) {
    pthread_mutex_t * m = NULL;
    pthread_mutex_lock(&g_table_mutex);
    if (g_n_buckets > 0) {
        for (struct stream_lock * l = g_buckets[bucket_of(backend, g_n_buckets)]; l != NULL; l = l->next) {
            if (l->backend == backend) {
                m = &l->mutex;
                break;
            }
        }
    }
    if (m == NULL && (g_n_locks < g_n_buckets || table_grow())) {
        struct stream_lock * l = (struct stream_lock *) malloc(sizeof(*l));
        if (l != NULL) {
            l->backend = backend;
            recursive_mutex_init(&l->mutex);
            const size_t b = bucket_of(backend, g_n_buckets);
            l->next = g_buckets[b];
            g_buckets[b] = l;
            g_n_locks++;
            m = &l->mutex;
        }
    }
    pthread_mutex_unlock(&g_table_mutex);
    if (m == NULL) {
        GGML_LOG_WARN("%s: out of memory for the lock of backend %p: using a shared one\n", __func__, (void *) backend);
        pthread_once(&g_fallback_once, fallback_init);
        m = &g_fallback;
    }
    return m;
}

pthread_mutex_t * ggml_backend_stream_lock(ggml_backend_t backend) {
    pthread_mutex_t * m = stream_mutex(backend);
    pthread_mutex_lock(m);
    return m;
}

void ggml_backend_stream_unlock(pthread_mutex_t * lock) {
    pthread_mutex_unlock(lock);
}

void ggml_backend_stream_lock2(ggml_backend_t a, ggml_backend_t b, pthread_mutex_t * locks[2]) {
    if (a == b) {
        locks[0] = ggml_backend_stream_lock(a);
        locks[1] = NULL;
        return;
    }
    // by address: two threads locking the same pair lock it in the same order
    const bool a_first = (uintptr_t) a < (uintptr_t) b;
    locks[0] = ggml_backend_stream_lock(a_first ? a : b);
    locks[1] = ggml_backend_stream_lock(a_first ? b : a);
}

void ggml_backend_stream_unlock2(pthread_mutex_t * locks[2]) {
    if (locks[1] != NULL) {
        pthread_mutex_unlock(locks[1]);
    }
    pthread_mutex_unlock(locks[0]);
}

void ggml_backend_stream_forget(ggml_backend_t backend) {
    pthread_mutex_lock(&g_table_mutex);
    if (g_n_buckets > 0) {
        for (struct stream_lock ** p = &g_buckets[bucket_of(backend, g_n_buckets)]; *p != NULL; p = &(*p)->next) {
            if ((*p)->backend == backend) {
                struct stream_lock * l = *p;
                *p = l->next;
                pthread_mutex_destroy(&l->mutex);
                free(l);
                g_n_locks--;
                break;
            }
        }
    }
    pthread_mutex_unlock(&g_table_mutex);
}
