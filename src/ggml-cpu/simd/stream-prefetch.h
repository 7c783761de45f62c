#pragma once

//
// stream-prefetch.h: software prefetch for the weight streams of the
// matrix-vector kernels (generation: every weight read once per token, the
// speed limit is the memory's).
//
// The row dots read a few long sequential streams (4 rows of a step, each
// from its own quarter of the chunk of rows a call gets) and spend enough instructions
// per byte that the out-of-order window alone keeps too few lines in flight:
// the hardware prefetchers follow the streams but do not run far enough
// ahead. Asking for the line GGML_CPU_STREAM_AHEAD bytes further on in each
// stream at every step does. On the 2-core Zen 5 build host, 2 threads,
// llama 2048x8 Q8_0 through ggml-run --bench: 92-99 tokens/s without,
// 102-105 at 256 bytes, 106-110 at 768, 111-121 at 2048, 99-107 at 4096 and
// 8192 (alternated runs). A prefetch never faults: the lines past the end of
// a block are asked for and ignored.
//

#include <stddef.h>

#ifndef GGML_CPU_STREAM_AHEAD
#define GGML_CPU_STREAM_AHEAD 2048
#endif

// the lines of [p + AHEAD, p + AHEAD + span): span is the bytes the caller
// reads from p in this step (a constant once inlined)
static inline void ggml_cpu_stream_prefetch(const void * p, size_t span) {
#if defined(__GNUC__)
    for (size_t off = 0; off < span; off += 64) {
        __builtin_prefetch((const char *) p + GGML_CPU_STREAM_AHEAD + off, 0, 3);
    }
#else
    (void) p;
    (void) span;
#endif
}
