// stream-prefetch.c: how far ahead the matrix-vector kernels ask for their
// weight streams (simd/stream-prefetch.h), chosen once per process.
//
// The prefetch helps where the hardware prefetchers alone run too little
// ahead of a few long streams, and costs where they do not: measured on the
// hosts of this project, 2 threads,
//   Zen 5 (the build host of the prefetch): llama 2048x8 Q8_0 generation
//     92-99 tokens/s without it, 111-121 with it 2 KiB ahead (ggml-run --bench);
//   Zen 3 (EPYC family 19h model 01h): the row dots' pattern read 15-25% faster
//     than plain reads (tools/common/read-bandwidth.c), so it stays; its AVX2
//     Q4_0 panel kernel reads faster without and issues none;
//   Zen 4 (EPYC family 19h model 11h): the kernels stream as fast or faster
//     without it (one-column products of [2048 x 5632] alternated with a
//     plain read, 61 rounds a run, 5 runs: Q4_0 panels 98-103% -> 104-110% of
//     the read, Q6_K 92-97% -> 101-105%, F16 97-100% -> 109-111%, Q8_0
//     101-107% -> 103-109%, Q4_K 95-103% -> 93-106%; neither 1
//     nor 4 KiB ahead, nor the T2 or NTA hints, did as well as none) and so does a model
//     (ggml-run --bench --profile, 2048x8, weights against the read after
//     each token, 3 rounds alternated: 11 of 12 runs faster without, F16
//     85-97% -> 101-114%, Q4_K_M 77-89% -> 92-101%).
// So: off on Zen 4, GGML_CPU_STREAM_AHEAD bytes (2 KiB unless the build sets
// it) elsewhere; the environment's GGML_CPU_STREAM_AHEAD (bytes, 0 for none,
// at most 64 KiB) overrides either.
//
// The lead (stream-lead.c: what a thread waiting at a barrier asks for of
// the next product's weights) is GGML_CPU_STREAM_LEAD bytes (256 KiB unless
// the build sets it) on every CPU (measured on Zen 4 only); the environment's
// GGML_CPU_STREAM_LEAD (bytes, 0 for none, at most 16 MiB) overrides it.

#include "cpu-impl.h"
#include "cpu-variant.h"
#include "simd/stream-prefetch.h"

#include <errno.h>
#include <stdlib.h>

#ifndef GGML_CPU_STREAM_AHEAD
#define GGML_CPU_STREAM_AHEAD 2048
#endif

#ifndef GGML_CPU_STREAM_LEAD
#define GGML_CPU_STREAM_LEAD (256 * 1024)
#endif

#define STREAM_AHEAD_MAX ((size_t) 64 << 10)
#define STREAM_LEAD_MAX  ((size_t) 16 << 20)

_Atomic size_t ggml_cpu_stream_ahead = GGML_CPU_STREAM_AHEAD;
_Atomic size_t ggml_cpu_stream_lead  = GGML_CPU_STREAM_LEAD;

// the bytes the environment's variable name asks for, up to max; false
// (with a warning) when it names none
static bool stream_bytes_from_env(const char * name, const char * s, size_t max, size_t * out) {
    char * end = NULL;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != '\0' || errno != 0 || s[0] == '-' || v > max) {
        GGML_LOG_WARN("%s=%s: not a byte count of 0 to %zu; ignored\n", name, s, max);
        return false;
    }
    // whole lines: the kernels ask for one line per 64 bytes they read
    *out = (size_t)((v + 63) / 64 * 64);
    return true;
}

void ggml_cpu_stream_prefetch_init(void) {
    size_t ahead = GGML_CPU_STREAM_AHEAD;
    if (ggml_cpu_x86_amd_zen() == 4) {
        ahead = 0;
    }
    const char * env = getenv("GGML_CPU_STREAM_AHEAD");
    if (env != NULL && env[0] != '\0') {
        size_t v;
        if (stream_bytes_from_env("GGML_CPU_STREAM_AHEAD", env, STREAM_AHEAD_MAX, &v)) {
            ahead = v;
        }
    }
    atomic_store(&ggml_cpu_stream_ahead, ahead);

    size_t lead = GGML_CPU_STREAM_LEAD;
    env = getenv("GGML_CPU_STREAM_LEAD");
    if (env != NULL && env[0] != '\0') {
        size_t v;
        if (stream_bytes_from_env("GGML_CPU_STREAM_LEAD", env, STREAM_LEAD_MAX, &v)) {
            lead = v;
        }
    }
    atomic_store(&ggml_cpu_stream_lead, lead);
}
