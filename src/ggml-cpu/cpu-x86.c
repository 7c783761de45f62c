// cpu-x86.c: what the x86-64 CPU the process runs on supports, from CPUID,
// counting an extension only when the operating system also saves its
// registers (XGETBV): AVX needs the YMM state, AVX-512 the opmask and ZMM
// states, AMX the tile states. Compiled for the baseline, like the rest of
// the host part: it runs before any variant is chosen.

#include "cpu-variant.h"

#if defined(__x86_64__) && defined(__GNUC__)

#include <cpuid.h>

// XCR0 bits: x87, SSE, AVX (YMM high halves), AVX-512 (opmask, ZMM_Hi256,
// Hi16_ZMM), AMX (tile config, tile data)
#define XCR0_SSE_AVX    0x06u
#define XCR0_AVX512     0xE0u
#define XCR0_AMX        0x60000u

static uint64_t read_xcr0(void) {
    uint32_t lo, hi;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t) hi << 32) | lo;
}

static uint32_t detect_features(void) {
    unsigned int a, b, c, d;
    const unsigned int max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf < 1) {
        return 0;
    }
    __cpuid_count(1, 0, a, b, c, d);
    const unsigned int c1 = c;

    uint32_t f = 0;
    if (c1 & (1u <<  0)) f |= GGML_CPU_X86_SSE3;
    if (c1 & (1u <<  9)) f |= GGML_CPU_X86_SSSE3;
    if (c1 & (1u << 19)) f |= GGML_CPU_X86_SSE4_1;
    if (c1 & (1u << 20)) f |= GGML_CPU_X86_SSE4_2;

    // everything from AVX on needs the OS to save the YMM registers
    const bool osxsave = (c1 & (1u << 27)) != 0;
    const uint64_t xcr0 = osxsave ? read_xcr0() : 0;
    const bool ymm  = (xcr0 & XCR0_SSE_AVX) == XCR0_SSE_AVX;
    const bool zmm  = ymm && (xcr0 & XCR0_AVX512) == XCR0_AVX512;
    const bool tile = (xcr0 & XCR0_AMX) == XCR0_AMX;
    if (!ymm) {
        return f;
    }
    if (c1 & (1u << 28)) f |= GGML_CPU_X86_AVX;
    if (c1 & (1u << 12)) f |= GGML_CPU_X86_FMA;
    if (c1 & (1u << 29)) f |= GGML_CPU_X86_F16C;

    if (max_leaf < 7) {
        return f;
    }
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned int max_sub7 = a, b7 = b, c7 = c, d7 = d;
    if (b7 & (1u <<  5)) f |= GGML_CPU_X86_AVX2;
    if (b7 & (1u <<  8)) f |= GGML_CPU_X86_BMI2;
    if (zmm) {
        if (b7 & (1u << 16)) f |= GGML_CPU_X86_AVX512F;
        if (b7 & (1u << 17)) f |= GGML_CPU_X86_AVX512DQ;
        if (b7 & (1u << 28)) f |= GGML_CPU_X86_AVX512CD;
        if (b7 & (1u << 30)) f |= GGML_CPU_X86_AVX512BW;
        if (b7 & (1u << 31)) f |= GGML_CPU_X86_AVX512VL;
        if (c7 & (1u <<  1)) f |= GGML_CPU_X86_AVX512_VBMI;
        if (c7 & (1u << 11)) f |= GGML_CPU_X86_AVX512_VNNI;
    }
    if (tile) {
        if (d7 & (1u << 24)) f |= GGML_CPU_X86_AMX_TILE;
        if (d7 & (1u << 25)) f |= GGML_CPU_X86_AMX_INT8;
        if (d7 & (1u << 22)) f |= GGML_CPU_X86_AMX_BF16;
    }
    if (max_sub7 >= 1) {
        __cpuid_count(7, 1, a, b, c, d);
        if (a & (1u << 4)) f |= GGML_CPU_X86_AVX_VNNI;
        if (zmm && (a & (1u << 5))) f |= GGML_CPU_X86_AVX512_BF16;
    }
    return f;
}

// the Zen generation of an AMD CPU from its family and model (CPUID leaf 1:
// the base family plus the extended one, the extended model above the base
// one); 0 for any other CPU
static int detect_amd_zen(void) {
    unsigned int a, b, c, d;
    if (__get_cpuid_max(0, NULL) < 1) {
        return 0;
    }
    __cpuid_count(0, 0, a, b, c, d);
    // "AuthenticAMD": ebx, edx, ecx
    if (b != 0x68747541u || d != 0x69746e65u || c != 0x444d4163u) {
        return 0;
    }
    __cpuid_count(1, 0, a, b, c, d);
    const unsigned int base_family = (a >> 8) & 0xF;
    const unsigned int family = base_family == 0xF ? base_family + ((a >> 20) & 0xFF) : base_family;
    const unsigned int model  = ((a >> 4) & 0xF) | (base_family == 0xF ? ((a >> 16) & 0xF) << 4 : 0);
    switch (family) {
        case 0x17: return 2;   // Zen, Zen+ and Zen 2 alike
        case 0x19:
            // Zen 4: Genoa (10h-1Fh), Raphael and Phoenix (60h-7Fh), Bergamo and Siena (A0h-AFh);
            // the other models of the family are Zen 3
            return (model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F) ||
                   (model >= 0xA0 && model <= 0xAF) ? 4 : 3;
        case 0x1A: return 5;
        default:   return 0;
    }
}

#else

static uint32_t detect_features(void) {
    return 0;
}

static int detect_amd_zen(void) {
    return 0;
}

#endif

int ggml_cpu_x86_amd_zen(void) {
    // the same every time: computed in a race at worst, kept atomic as above
    static _Atomic int cached = -1;
    int v = cached;
    if (v < 0) {
        v = detect_amd_zen();
        cached = v;
    }
    return v;
}

uint32_t ggml_cpu_x86_features(void) {
    // CPUID answers the same every time: computing it twice in a race is harmless,
    // but the cached value is kept atomic so that the race is not undefined
    static _Atomic uint32_t cached = 0;
    static _Atomic int      known  = 0;
    if (!known) {
        cached = detect_features();
        known  = 1;
    }
    return cached;
}

const char * ggml_cpu_x86_feature_name(uint32_t bit) {
    switch (bit) {
        case GGML_CPU_X86_SSE3:        return "SSE3";
        case GGML_CPU_X86_SSSE3:       return "SSSE3";
        case GGML_CPU_X86_SSE4_1:      return "SSE4_1";
        case GGML_CPU_X86_SSE4_2:      return "SSE4_2";
        case GGML_CPU_X86_AVX:         return "AVX";
        case GGML_CPU_X86_AVX2:        return "AVX2";
        case GGML_CPU_X86_FMA:         return "FMA";
        case GGML_CPU_X86_F16C:        return "F16C";
        case GGML_CPU_X86_BMI2:        return "BMI2";
        case GGML_CPU_X86_AVX_VNNI:    return "AVX_VNNI";
        case GGML_CPU_X86_AVX512F:     return "AVX512";
        case GGML_CPU_X86_AVX512BW:    return "AVX512BW";
        case GGML_CPU_X86_AVX512VL:    return "AVX512VL";
        case GGML_CPU_X86_AVX512DQ:    return "AVX512DQ";
        case GGML_CPU_X86_AVX512CD:    return "AVX512CD";
        case GGML_CPU_X86_AVX512_VBMI: return "AVX512_VBMI";
        case GGML_CPU_X86_AVX512_VNNI: return "AVX512_VNNI";
        case GGML_CPU_X86_AVX512_BF16: return "AVX512_BF16";
        case GGML_CPU_X86_AMX_TILE:    return "AMX_TILE";
        case GGML_CPU_X86_AMX_INT8:    return "AMX_INT8";
        case GGML_CPU_X86_AMX_BF16:    return "AMX_BF16";
        default:                       return NULL;
    }
}
