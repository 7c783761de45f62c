#pragma once

//
// quants-neon.h: the int8 vocabulary of the arm64 kernels (quants-dot-neon.c,
// quants-dot-k-neon.c, gemm-q8-neon.c).
//
// One operation carries them all: the dot products of the four 4-byte groups
// of two int8x16 registers, as four int32 lanes. The SDOT instruction does it
// in one step where the CPU has the dotprod extension; every arm64 CPU can do
// it with widening multiplies and pairwise adds. An arm64 build runs on both,
// so a kernel is compiled twice, once with each, and the CPU's capabilities
// (arm-features.h) choose at run time. SMMLA (i8mm) multiplies 2x8 by 8x2
// int8 matrices; the tile kernel of gemm-q8-neon.c uses it where present.
//

#include "simd/vec.h"

#if defined(GGML_VEC_NEON)

#include "arm-features.h"

// gcc declares the dotprod and i8mm intrinsics for functions that target the
// extension; clang (up to 15 at least) only when the whole build does, so
// there those kernels need -march=armv8.2-a+dotprod (+i8mm) or later
#if !defined(__clang__)
#define GGML_NEON_DOTPROD 1
#define GGML_NEON_TARGET_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#define GGML_NEON_I8MM 1
#define GGML_NEON_TARGET_I8MM __attribute__((target("arch=armv8.2-a+dotprod+i8mm")))
#else
#if defined(__ARM_FEATURE_DOTPROD)
#define GGML_NEON_DOTPROD 1
#define GGML_NEON_TARGET_DOTPROD
#endif
#if defined(__ARM_FEATURE_MATMUL_INT8)
#define GGML_NEON_I8MM 1
#define GGML_NEON_TARGET_I8MM
#endif
#endif

// lane i: sum over t < 4 of a[4i + t] * b[4i + t], by widening multiplies
// (int8 products fit int16; the pairwise adds widen before they sum)
static inline int32x4_t ggml_neon_dot4_widen(int8x16_t a, int8x16_t b) {
    const int32x4_t lo = vpaddlq_s16(vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    const int32x4_t hi = vpaddlq_s16(vmull_high_s8(a, b));
    return vpaddq_s32(lo, hi);
}

#if defined(GGML_NEON_DOTPROD)
// the same lanes with SDOT
GGML_NEON_TARGET_DOTPROD
static inline int32x4_t ggml_neon_dot4_sdot(int8x16_t a, int8x16_t b) {
    return vdotq_s32(vdupq_n_s32(0), a, b);
}
#endif

// the 32 values of 16 bytes of 4-bit codes looked up in a table of 16 int8:
// low nibbles (values 0..15) in lo, high nibbles (16..31) in hi
static inline void ggml_neon_lookup_nibbles(const uint8_t * qs, int8x16_t table, int8x16_t * lo, int8x16_t * hi) {
    const uint8x16_t q = vld1q_u8(qs);
    *lo = vqtbl1q_s8(table, vandq_u8(q, vdupq_n_u8(0x0F)));
    *hi = vqtbl1q_s8(table, vshrq_n_u8(q, 4));
}

#endif
