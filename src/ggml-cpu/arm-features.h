#pragma once

//
// arm-features.h: the arm64 extensions the CPU running the program has,
// from the kernel's hardware capabilities (getauxval: thread-safe, no
// state of ours). An arm64 build runs on every arm64 CPU, so kernels that
// use an extension beyond the base NEON check it here at run time.
//

#include <stdbool.h>

#if defined(__aarch64__) && defined(__linux__)

#include <sys/auxv.h>

// bit numbers of the Linux arm64 ABI (asm/hwcap.h), for older headers
#define GGML_ARM_HWCAP_ASIMDDP (1ul << 20) // SDOT / UDOT
#define GGML_ARM_HWCAP2_I8MM   (1ul << 13) // SMMLA / UMMLA / USDOT

static inline bool ggml_arm_has_dotprod(void) {
    return (getauxval(AT_HWCAP) & GGML_ARM_HWCAP_ASIMDDP) != 0;
}

static inline bool ggml_arm_has_i8mm(void) {
    return (getauxval(AT_HWCAP2) & GGML_ARM_HWCAP2_I8MM) != 0;
}

#elif defined(__aarch64__)

// elsewhere (macOS, Windows): what the compiler was told the target has
static inline bool ggml_arm_has_dotprod(void) {
#if defined(__ARM_FEATURE_DOTPROD)
    return true;
#else
    return false;
#endif
}

static inline bool ggml_arm_has_i8mm(void) {
#if defined(__ARM_FEATURE_MATMUL_INT8)
    return true;
#else
    return false;
#endif
}

#endif
