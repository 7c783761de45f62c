#pragma once

//
// stream-prefetch.h: software prefetch for the weight streams of the
// matrix-vector kernels (generation: every weight read once per token, the
// speed limit is the memory's).
//
// The row dots read a few long sequential streams (4 rows of a step, each
// from its own quarter of the chunk of rows a call gets) and spend enough
// instructions per byte that, on some CPUs, the out-of-order window and the
// hardware prefetchers keep too few lines in flight. Asking for the line
// ggml_cpu_stream_ahead bytes further on in each stream at every step does
// there. On the 2-core Zen 5 build host, 2 threads, llama 2048x8 Q8_0
// through ggml-run --bench: 92-99 tokens/s without, 102-105 at 256 bytes,
// 106-110 at 768, 111-121 at 2048, 99-107 at 4096 and 8192 (alternated
// runs). On other CPUs the hardware prefetchers do better alone and the
// prefetch instructions cost: the distance is chosen once per process
// (stream-prefetch.c), 0 turning the prefetch off. A prefetch never faults:
// the lines past the end of a block are asked for and ignored.
//

#include <stdatomic.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// The bytes ahead, or 0: GGML_CPU_STREAM_AHEAD (2048 unless the build
// defines it) until ggml_cpu_init chooses (stream-prefetch.c); read-only
// afterwards. Atomic so that a kernel called before ggml_cpu_init, in
// another thread, reads it without a data race.
extern _Atomic size_t ggml_cpu_stream_ahead;

// The bytes a thread waiting at a barrier asks for of the next product's
// weights (stream-lead.c), or 0: GGML_CPU_STREAM_LEAD (256 KiB unless the
// build defines it), or the environment's, set by ggml_cpu_init.
extern _Atomic size_t ggml_cpu_stream_lead;

// once, by ggml_cpu_init: the distance for this CPU, or GGML_CPU_STREAM_AHEAD
// from the environment; the lead, or GGML_CPU_STREAM_LEAD from it
void ggml_cpu_stream_prefetch_init(void);

// The distance as a plain value, for a kernel to read once before its loops
// and pass to ggml_cpu_stream_prefetch: an atomic load inside a loop is
// one the compiler may not move or merge, and GCC then keeps the loop's
// other values in memory across it (the 4-row Q4_K step spilled its sums
// to the stack at every superblock: a third more instructions).
static inline size_t ggml_cpu_stream_ahead_now(void) {
    return atomic_load_explicit(&ggml_cpu_stream_ahead, memory_order_relaxed);
}

static inline size_t ggml_cpu_stream_lead_now(void) {
    return atomic_load_explicit(&ggml_cpu_stream_lead, memory_order_relaxed);
}

// the lines of [p + ahead, p + ahead + span), nothing when ahead is 0: span
// is the bytes the caller reads from p in this step (a constant once
// inlined), ahead the value of ggml_cpu_stream_ahead_now
static inline void ggml_cpu_stream_prefetch(const void * p, size_t span, size_t ahead) {
#if defined(__GNUC__)
    if (ahead == 0) {
        return;
    }
    for (size_t off = 0; off < span; off += 64) {
        __builtin_prefetch((const char *) p + ahead + off, 0, 3);
    }
#else
    (void) p;
    (void) span;
    (void) ahead;
#endif
}

#ifdef __cplusplus
}
#endif
