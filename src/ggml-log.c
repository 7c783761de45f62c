// ggml-log.c: logging, fatal errors, clocks, aligned host memory, and other
// process-wide services of ggml-base.
//
// The log and abort callbacks are process-wide settings; they are read and
// written under a lock (log) or atomically (abort) so that any thread may
// log or fail at any time.

#include "ggml-impl.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__) && defined(__GLIBC__)
#include <execinfo.h>
#define GGML_HAVE_BACKTRACE 1
#endif

#if defined(__linux__)
#include <sys/mman.h>
#endif

//
// logging
//

static pthread_mutex_t   g_log_mutex    = PTHREAD_MUTEX_INITIALIZER;
static ggml_log_callback g_log_callback = ggml_log_callback_default;
static void *            g_log_user     = NULL;

// Debug messages are printed by the default logger only when asked for with
// GGML_LOG_DEBUG=1 or GGML_SCHED_DEBUG (upstream compiles most of its debug
// lines out of release builds; ours are always there). A CONT line follows
// the fate of the line it continues, per thread.
static bool           g_log_debug_enabled;
static pthread_once_t g_log_debug_once = PTHREAD_ONCE_INIT;
static _Thread_local enum ggml_log_level g_log_last_level = GGML_LOG_LEVEL_INFO;

static void log_debug_init(void) {
    const char * d = getenv("GGML_LOG_DEBUG");
    const char * s = getenv("GGML_SCHED_DEBUG");
    g_log_debug_enabled = (d != NULL && atoi(d) != 0) || (s != NULL && atoi(s) != 0);
}

void ggml_log_callback_default(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    if (level != GGML_LOG_LEVEL_CONT) {
        g_log_last_level = level;
    }
    if (g_log_last_level == GGML_LOG_LEVEL_DEBUG) {
        pthread_once(&g_log_debug_once, log_debug_init);
        if (!g_log_debug_enabled) {
            return;
        }
    }
    fputs(text, stderr);
    fflush(stderr);
}

void ggml_log_get(ggml_log_callback * log_callback, void ** user_data) {
    pthread_mutex_lock(&g_log_mutex);
    if (log_callback) {
        *log_callback = g_log_callback;
    }
    if (user_data) {
        *user_data = g_log_user;
    }
    pthread_mutex_unlock(&g_log_mutex);
}

void ggml_log_set(ggml_log_callback log_callback, void * user_data) {
    pthread_mutex_lock(&g_log_mutex);
    g_log_callback = log_callback ? log_callback : ggml_log_callback_default;
    g_log_user     = user_data;
    pthread_mutex_unlock(&g_log_mutex);
}

static void log_vprintf(enum ggml_log_level level, const char * format, va_list args) {
    ggml_log_callback cb;
    void * user;
    ggml_log_get(&cb, &user);

    char small[256];
    va_list copy;
    va_copy(copy, args);
    const int len = vsnprintf(small, sizeof(small), format, args);
    if (len < 0) {
        va_end(copy);
        return;
    }
    if ((size_t) len < sizeof(small)) {
        cb(level, small, user);
    } else {
        char * big = (char *) malloc((size_t) len + 1);
        if (big) {
            vsnprintf(big, (size_t) len + 1, format, copy);
            cb(level, big, user);
            free(big);
        } else {
            cb(level, small, user); // truncated, but something
        }
    }
    va_end(copy);
}

void ggml_log_internal(enum ggml_log_level level, const char * format, ...) {
    va_list args;
    va_start(args, format);
    log_vprintf(level, format, args);
    va_end(args);
}

//
// fatal errors
//

// zero-initialised (no callback): static atomics start in a valid zero state,
// and clang rejects NULL (a void *) as the initialiser of a function pointer
static _Atomic(ggml_abort_callback_t) g_abort_callback;

ggml_abort_callback_t ggml_set_abort_callback(ggml_abort_callback_t callback) {
    return atomic_exchange(&g_abort_callback, callback);
}

void ggml_print_backtrace(void) {
#ifdef GGML_HAVE_BACKTRACE
    void * frames[64];
    const int n = backtrace(frames, (int)(sizeof(frames) / sizeof(frames[0])));
    fprintf(stderr, "backtrace:\n");
    fflush(stderr);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
#endif
}

void ggml_abort(const char * file, int line, const char * fmt, ...) {
    fflush(stdout);

    char message[2048];
    int offset = snprintf(message, sizeof(message), "%s:%d: ", file, line);
    if (offset < 0 || (size_t) offset >= sizeof(message)) {
        offset = 0;
    }
    va_list args;
    va_start(args, fmt);
    vsnprintf(message + offset, sizeof(message) - (size_t) offset, fmt, args);
    va_end(args);

    ggml_abort_callback_t cb = atomic_load(&g_abort_callback);
    if (cb) {
        cb(message);
    } else {
        fprintf(stderr, "%s\n", message);
        ggml_print_backtrace();
    }
    abort();
}

//
// clocks
//

void ggml_time_init(void) {
    // CLOCK_MONOTONIC needs no set-up; kept for API compatibility
}

int64_t ggml_time_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + (int64_t) ts.tv_nsec / 1000000;
}

int64_t ggml_time_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000 + (int64_t) ts.tv_nsec / 1000;
}

int64_t ggml_cycles(void) {
    return (int64_t) clock();
}

int64_t ggml_cycles_per_ms(void) {
    return CLOCKS_PER_SEC / 1000;
}

//
// host memory
//

// 64 bytes covers every SIMD width in use and a cache line
#define GGML_HOST_ALIGNMENT 64

// the failure-injection point of the tests (ggml_impl_test_fail_alloc): per
// thread, so a test arming it never disturbs another thread
static _Thread_local int t_alloc_fail_at = 0;
static _Thread_local int t_alloc_count   = 0;

void ggml_impl_test_fail_alloc(int n) {
    t_alloc_fail_at = n > 0 ? n : 0;
    t_alloc_count   = 0;
}

int ggml_impl_test_alloc_count(void) {
    return t_alloc_count;
}

// counts the allocation; true if it is the one a test asked to fail
static bool alloc_injected_failure(void) {
    if (t_alloc_fail_at == 0) {
        return false;
    }
    return ++t_alloc_count == t_alloc_fail_at;
}

void * ggml_impl_malloc(size_t size) {
    return alloc_injected_failure() ? NULL : malloc(size);
}

void * ggml_impl_calloc(size_t n, size_t size) {
    return alloc_injected_failure() ? NULL : calloc(n, size);
}

void * ggml_impl_realloc(void * ptr, size_t size) {
    return alloc_injected_failure() ? NULL : realloc(ptr, size);
}

// Large host buffers (weights, KV caches) are asked to be backed by
// transparent huge pages where the kernel leaves that to the program
// (/sys/kernel/mm/transparent_hugepage/enabled = madvise, the common
// default): generation streams every weight once per token, and on 4 KiB
// pages every 4 KiB of a stream is another TLB entry to fill. Zen 3, 2048x8
// Q4_K_M in allocated memory (llama.cpp's llama-bench -mmp 0, 3 rounds
// alternated): 102.6-106.2 -> 108.2-112.1 tokens/s. Advice only: a kernel
// without THP, or a failed madvise, leaves the buffer as it was.
// GGML_NO_HUGEPAGES (any value) turns it off.
#define GGML_HUGEPAGE_MIN_BYTES ((size_t) 4 << 20)

static void aligned_advise_hugepages(void * ptr, size_t size) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (size < GGML_HUGEPAGE_MIN_BYTES || getenv("GGML_NO_HUGEPAGES") != NULL) {
        return;
    }
    const long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) {
        return;
    }
    // the whole pages inside the buffer (malloc's large blocks start just past a header)
    const uintptr_t begin = ((uintptr_t) ptr + (uintptr_t) page - 1) & ~((uintptr_t) page - 1);
    const uintptr_t end   = ((uintptr_t) ptr + size) & ~((uintptr_t) page - 1);
    if (end > begin) {
        (void) madvise((void *) begin, end - begin, MADV_HUGEPAGE);
    }
#else
    (void) ptr;
    (void) size;
#endif
}

void * ggml_aligned_malloc(size_t size) {
    if (size == 0) {
        GGML_LOG_WARN("%s: zero-byte allocation requested\n", __func__);
        return NULL;
    }
    if (alloc_injected_failure()) {
        GGML_LOG_ERROR("%s: failed to allocate %.2f MiB: out of memory (injected by a test)\n", __func__,
                       (double) size / (1024.0 * 1024.0));
        return NULL;
    }
    void * ptr = NULL;
    const int rc = posix_memalign(&ptr, GGML_HOST_ALIGNMENT, size);
    if (rc != 0) {
        GGML_LOG_ERROR("%s: failed to allocate %.2f MiB: %s\n", __func__,
                       (double) size / (1024.0 * 1024.0), rc == ENOMEM ? "out of memory" : "invalid size");
        return NULL;
    }
    aligned_advise_hugepages(ptr, size);
    return ptr;
}

void ggml_aligned_free(void * ptr, size_t size) {
    (void) size;
    free(ptr);
}

//
// misc
//

FILE * ggml_fopen(const char * fname, const char * mode) {
    return fopen(fname, mode);
}

bool ggml_guid_matches(ggml_guid_t guid_a, ggml_guid_t guid_b) {
    return memcmp(guid_a, guid_b, sizeof(ggml_guid)) == 0;
}

const char * ggml_version(void) {
    return GGML_VERSION;
}

const char * ggml_commit(void) {
    return GGML_COMMIT;
}
