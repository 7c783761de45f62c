// threadpool.c: the CPU backend's persistent pool of worker threads.
//
// The caller of a job is thread 0; workers 1..n-1 wait between jobs. A worker
// first spins on the job counter for a while (params.poll: 0 = not at all,
// 50 = about a millisecond, 100 = about two), which keeps the latency of
// back-to-back graphs low, then sleeps on a condition variable so that an
// idle pool costs no CPU. Inside a job, threads meet at barriers: a counter
// they spin on briefly and then sleep on. Sleeping matters when the machine
// is busy or oversubscribed: a waiter that keeps its core lets the scheduler
// leave the thread it waits for queued behind other work. A pool of more
// threads than the CPUs the process may run on (whisper.cpp starts 4 on any
// machine) does not spin at all: there a spinning waiter holds the core that
// the thread it waits for needs (whisper.cpp's VAD test: 3.9 s -> 0.7 s on 2
// CPUs, upstream's library 0.5-0.7 s).
//
// Lost wake-ups are excluded by ordering: a worker announces that it is
// going to sleep (n_sleeping, under the mutex) before re-checking the job
// counter; the caller publishes the job before reading n_sleeping, and
// signals under the mutex only if someone may be asleep. With sequentially
// consistent atomics one of the two always sees the other. Barriers use the
// same scheme with their own mutex, condition and sleeper count.

#include "cpu-impl.h"
#include "cpu-features.h"
#include "simd/spin-pause.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <unistd.h>

struct ggml_worker {
    struct ggml_threadpool * pool;
    pthread_t thread;
    int ith;
};

struct ggml_threadpool {
    pthread_mutex_t mutex;
    pthread_cond_t  cond;
    pthread_mutex_t run_mutex; // one job at a time: a pool may be lent to several backends

    struct ggml_worker * workers; // [n_threads_max], workers[0] is the caller's slot
    int n_threads_max;

    struct ggml_threadpool_params params;

    // the current job
    atomic_int     job_id;        // incremented for every new job
    atomic_int     job_n_threads; // threads taking part in the current job
    ggml_cpu_job_t job_fn;
    void *         job_arg;
    atomic_int     n_done;        // workers that finished the current job

    atomic_int n_sleeping;
    atomic_bool stop;
    atomic_bool paused;

    // barrier and chunk counter of the current job
    atomic_int n_barrier;
    atomic_int n_barrier_passed;
    atomic_int n_barrier_sleeping;
    pthread_mutex_t barrier_mutex;
    pthread_cond_t  barrier_cond;
    atomic_int current_chunk;

    // the number of CPUs this process may run on, when the pool was made: a
    // job of more threads than that (whisper.cpp's default of 4 on 2 cores)
    // waits without spinning, since a spinning waiter holds the core that
    // the thread it waits for needs
    int n_cpus;
};

// A barrier waiter spins a few microseconds (the common case: the others are
// running and arrive soon), then yields a few times (hands the core to a
// thread of ours queued on it, as when there are more threads than cores),
// then sleeps (lets the scheduler move a thread of ours queued behind other
// work onto the core it frees).
#define BARRIER_SPINS  512
#define BARRIER_YIELDS 16

//
// barrier
//

void ggml_cpu_barrier(struct ggml_threadpool * tp) {
    ggml_cpu_barrier_busy(tp, NULL, NULL);
}

void ggml_cpu_barrier_busy(struct ggml_threadpool * tp, ggml_cpu_wait_work_t work, void * arg) {
    const int n = atomic_load(&tp->job_n_threads);
    if (n <= 1) {
        // alone: nothing to wait for, but the chunk count restarts as promised
        atomic_store(&tp->current_chunk, 0);
        return;
    }
    const int passed = atomic_load(&tp->n_barrier_passed);
    if (atomic_fetch_add(&tp->n_barrier, 1) == n - 1) {
        // last to arrive: reset for the next barrier, then release the others
        atomic_store(&tp->n_barrier, 0);
        atomic_store(&tp->current_chunk, 0);
        atomic_fetch_add(&tp->n_barrier_passed, 1);
        if (atomic_load(&tp->n_barrier_sleeping) > 0) {
            pthread_mutex_lock(&tp->barrier_mutex);
            pthread_cond_broadcast(&tp->barrier_cond);
            pthread_mutex_unlock(&tp->barrier_mutex);
        }
        return;
    }
    const int n_spins = n > tp->n_cpus ? 0 : BARRIER_SPINS;
    // the waiter's work first, a piece between looks at the barrier
    while (work != NULL && n_spins > 0) {
        if (atomic_load(&tp->n_barrier_passed) != passed) {
            return;
        }
        if (!work(arg)) {
            work = NULL;
        }
    }
    for (int spins = 0; spins < n_spins; spins++) {
        if (atomic_load(&tp->n_barrier_passed) != passed) {
            return;
        }
        ggml_cpu_spin_pause();
    }
    for (int yields = 0; yields < BARRIER_YIELDS; yields++) {
        if (atomic_load(&tp->n_barrier_passed) != passed) {
            return;
        }
        sched_yield();
    }
    pthread_mutex_lock(&tp->barrier_mutex);
    atomic_fetch_add(&tp->n_barrier_sleeping, 1);
    while (atomic_load(&tp->n_barrier_passed) == passed) {
        pthread_cond_wait(&tp->barrier_cond, &tp->barrier_mutex);
    }
    atomic_fetch_sub(&tp->n_barrier_sleeping, 1);
    pthread_mutex_unlock(&tp->barrier_mutex);
}

int ggml_cpu_next_chunk(const struct ggml_compute_params * params) {
    if (params->threadpool == NULL) {
        // single-threaded run without a pool: a private counter is not possible,
        // so the caller's loop must not rely on this (ggml_graph_compute always
        // provides a pool)
        GGML_ABORT("ggml_cpu_next_chunk needs a thread pool");
    }
    return atomic_fetch_add(&params->threadpool->current_chunk, 1);
}

//
// workers
//

static void set_thread_priority(enum ggml_sched_priority prio) {
    if (prio == GGML_SCHED_PRIO_NORMAL) {
        return;
    }
    // niceness: lower is more urgent; raising priority needs privileges
    int nice_value = 0;
    switch (prio) {
        case GGML_SCHED_PRIO_LOW:      nice_value =   5; break;
        case GGML_SCHED_PRIO_NORMAL:   nice_value =   0; break;
        case GGML_SCHED_PRIO_MEDIUM:   nice_value =  -5; break;
        case GGML_SCHED_PRIO_HIGH:     nice_value = -10; break;
        case GGML_SCHED_PRIO_REALTIME: nice_value = -20; break;
    }
    if (setpriority(PRIO_PROCESS, 0, nice_value) != 0) {
        GGML_LOG_WARN("%s: could not set thread priority %d: %s\n", __func__, (int) prio, strerror(errno));
    }
}

static void set_thread_affinity(const struct ggml_threadpool_params * p, int ith) {
#if defined(__linux__)
    bool any = false;
    for (int i = 0; i < GGML_MAX_N_THREADS; i++) {
        any |= p->cpumask[i];
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    if (!any) {
        // no mask given: follow the NUMA strategy, if any
        if (ggml_cpu_numa_placement(ith, &set)) {
            pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
        }
        return;
    }
    if (p->strict_cpu) {
        // the ith enabled cpu of the mask (wrapping around)
        int n_enabled = 0;
        for (int i = 0; i < GGML_MAX_N_THREADS; i++) {
            n_enabled += p->cpumask[i];
        }
        int want = ith % n_enabled;
        for (int i = 0; i < GGML_MAX_N_THREADS; i++) {
            if (p->cpumask[i] && want-- == 0) {
                CPU_SET(i, &set);
                break;
            }
        }
    } else {
        for (int i = 0; i < GGML_MAX_N_THREADS && i < CPU_SETSIZE; i++) {
            if (p->cpumask[i]) {
                CPU_SET(i, &set);
            }
        }
    }
    const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (rc != 0) {
        GGML_LOG_WARN("%s: could not set thread affinity: %s\n", __func__, strerror(rc));
    }
#else
    (void) p;
    (void) ith;
#endif
}

// spin for a new job for up to poll * 20 us; true if one arrived
static bool spin_for_job(struct ggml_threadpool * tp, int last_job) {
    const uint32_t poll = tp->params.poll;
    if (poll == 0 || atomic_load(&tp->paused) || tp->n_threads_max > tp->n_cpus) {
        return false;
    }
    const int64_t limit_us = (int64_t) MIN(poll, 100u) * 20;
    const int64_t t0 = ggml_time_us();
    for (int i = 1; ; i++) {
        if (atomic_load(&tp->job_id) != last_job || atomic_load(&tp->stop)) {
            return true;
        }
        if (atomic_load(&tp->paused)) {
            return false; // paused while polling: sleep now, not at the end of the poll
        }
        ggml_cpu_spin_pause();
        if ((i & 255) == 0 && ggml_time_us() - t0 > limit_us) {
            return false;
        }
    }
}

// spin: whether to spin before sleeping (not before the first job: a pool
// of many threads being started would spend its cores spinning)
static void wait_for_job(struct ggml_threadpool * tp, int last_job, bool spin) {
    if (spin && spin_for_job(tp, last_job)) {
        return;
    }
    pthread_mutex_lock(&tp->mutex);
    atomic_fetch_add(&tp->n_sleeping, 1);
    while (atomic_load(&tp->job_id) == last_job && !atomic_load(&tp->stop)) {
        pthread_cond_wait(&tp->cond, &tp->mutex);
    }
    atomic_fetch_sub(&tp->n_sleeping, 1);
    pthread_mutex_unlock(&tp->mutex);
}

static void * worker_main(void * arg) {
    struct ggml_worker * w = (struct ggml_worker *) arg;
    struct ggml_threadpool * tp = w->pool;

    set_thread_priority(tp->params.prio);
    set_thread_affinity(&tp->params, w->ith);

    int last_job = 0;
    for (;;) {
        wait_for_job(tp, last_job, last_job != 0);
        if (atomic_load(&tp->stop)) {
            break;
        }
        last_job = atomic_load(&tp->job_id);
        const int n = atomic_load(&tp->job_n_threads);
        if (w->ith < n) {
            tp->job_fn(tp->job_arg, w->ith, n);
            atomic_fetch_add(&tp->n_done, 1);
        }
    }
    return NULL;
}

//
// pool
//

// the CPUs this process may run on (its affinity mask, which containers and
// taskset narrow), or the online CPUs where that cannot be read
static int available_cpus(void) {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
        return CPU_COUNT(&set);
    }
#endif
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < INT_MAX ? (int) n : 1;
}

struct ggml_threadpool * ggml_threadpool_new(struct ggml_threadpool_params * params) {
    // no upper limit: as many threads as the system lets us start (cpumask,
    // of GGML_MAX_N_THREADS entries, names cpus, not threads)
    if (params == NULL || params->n_threads < 1) {
        GGML_LOG_ERROR("%s: invalid number of threads %d (at least 1)\n", __func__, params ? params->n_threads : 0);
        return NULL;
    }

    struct ggml_threadpool * tp = (struct ggml_threadpool *) calloc(1, sizeof(*tp));
    struct ggml_worker * workers = (struct ggml_worker *) calloc((size_t) params->n_threads, sizeof(*workers));
    if (tp == NULL || workers == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        free(tp);
        free(workers);
        return NULL;
    }

    pthread_mutex_init(&tp->mutex, NULL);
    pthread_cond_init(&tp->cond, NULL);
    pthread_mutex_init(&tp->run_mutex, NULL);
    pthread_mutex_init(&tp->barrier_mutex, NULL);
    pthread_cond_init(&tp->barrier_cond, NULL);
    tp->workers       = workers;
    tp->n_threads_max = params->n_threads;
    tp->params        = *params;
    tp->n_cpus        = available_cpus();
    atomic_init(&tp->job_id, 0);
    atomic_init(&tp->job_n_threads, 1);
    atomic_init(&tp->n_done, 0);
    atomic_init(&tp->n_sleeping, 0);
    atomic_init(&tp->stop, false);
    atomic_init(&tp->paused, params->paused);
    atomic_init(&tp->n_barrier, 0);
    atomic_init(&tp->n_barrier_passed, 0);
    atomic_init(&tp->n_barrier_sleeping, 0);
    atomic_init(&tp->current_chunk, 0);

    for (int i = 0; i < params->n_threads; i++) {
        workers[i].pool = tp;
        workers[i].ith  = i;
    }

    // the caller runs as thread 0: apply its placement when asked for strictly
    if (params->strict_cpu) {
        set_thread_affinity(params, 0);
    }

    for (int i = 1; i < params->n_threads; i++) {
        const int rc = pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
        if (rc != 0) {
            GGML_LOG_ERROR("%s: failed to create thread %d of %d: %s\n", __func__, i, params->n_threads, strerror(rc));
            // stop and join the threads already running
            tp->n_threads_max = i;
            ggml_threadpool_free(tp);
            return NULL;
        }
    }
    return tp;
}

struct ggml_threadpool * ggml_threadpool_new_default(int n_threads) {
    struct ggml_threadpool_params params = ggml_threadpool_params_default(n_threads);
    return ggml_threadpool_new(&params);
}

void ggml_threadpool_free(struct ggml_threadpool * tp) {
    if (tp == NULL) {
        return;
    }
    pthread_mutex_lock(&tp->mutex);
    atomic_store(&tp->stop, true);
    pthread_cond_broadcast(&tp->cond);
    pthread_mutex_unlock(&tp->mutex);

    for (int i = 1; i < tp->n_threads_max; i++) {
        pthread_join(tp->workers[i].thread, NULL);
    }
    pthread_cond_destroy(&tp->cond);
    pthread_mutex_destroy(&tp->mutex);
    pthread_mutex_destroy(&tp->run_mutex);
    pthread_cond_destroy(&tp->barrier_cond);
    pthread_mutex_destroy(&tp->barrier_mutex);
    free(tp->workers);
    free(tp);
}

int ggml_threadpool_get_n_threads(struct ggml_threadpool * tp) {
    return tp->n_threads_max;
}

void ggml_threadpool_pause(struct ggml_threadpool * tp) {
    // workers stop spinning and sleep until the next job or resume
    atomic_store(&tp->paused, true);
}

void ggml_threadpool_resume(struct ggml_threadpool * tp) {
    atomic_store(&tp->paused, false);
}

void ggml_threadpool_run(struct ggml_threadpool * tp, int n_threads, ggml_cpu_job_t job, void * arg) {
    GGML_ASSERT(n_threads >= 1 && n_threads <= tp->n_threads_max);

    pthread_mutex_lock(&tp->run_mutex);
    tp->job_fn  = job;
    tp->job_arg = arg;
    atomic_store(&tp->job_n_threads, n_threads);
    atomic_store(&tp->n_done, 0);
    atomic_store(&tp->n_barrier, 0);
    atomic_store(&tp->current_chunk, 0);

    if (tp->n_threads_max > 1) {
        // publish the job, then wake sleepers (see the comment at the top)
        atomic_fetch_add(&tp->job_id, 1);
        if (atomic_load(&tp->n_sleeping) > 0) {
            pthread_mutex_lock(&tp->mutex);
            pthread_cond_broadcast(&tp->cond);
            pthread_mutex_unlock(&tp->mutex);
        }
    }

    job(arg, 0, n_threads);

    // the job's data lives with the caller: wait until every worker is done with it
    for (int spins = 0; atomic_load(&tp->n_done) < n_threads - 1; spins++) {
        if (spins < 1024) {
            ggml_cpu_spin_pause();
        } else {
            sched_yield();
        }
    }
    pthread_mutex_unlock(&tp->run_mutex);
}
