#pragma once

//
// spin-pause.h: the hint a spin-wait loop gives the CPU on each turn (x86
// PAUSE, arm64 YIELD), so that the waiting core yields its pipeline to a
// sibling hyper-thread and leaves the loop without a memory-order stall.
// Other targets get no hint: the loop is correct without one.
//

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
static inline void ggml_cpu_spin_pause(void) { _mm_pause(); }
#elif defined(__aarch64__) && defined(__GNUC__)
static inline void ggml_cpu_spin_pause(void) { __asm__ __volatile__("yield"); }
#else
static inline void ggml_cpu_spin_pause(void) { }
#endif
