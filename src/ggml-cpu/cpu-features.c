// cpu-features.c: the instruction sets this build of the CPU backend uses
// (ggml_cpu_has_*, the registry's feature list), a start-up check that the
// CPU provides them, and NUMA detection and thread placement.
//
// The answers are what the kernels were compiled for: a build made with
// GGML_NATIVE=OFF uses the portable paths and reports no extensions.

#include "cpu-features.h"
#include "arm-features.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>

int ggml_cpu_has_sse3(void) {
#if defined(__SSE3__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_ssse3(void) {
#if defined(__SSSE3__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_avx(void) {
#if defined(__AVX__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_avx_vnni(void) {
#if defined(__AVXVNNI__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_avx2(void) {
#if defined(__AVX2__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_bmi2(void) {
#if defined(__BMI2__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_f16c(void) {
#if defined(__F16C__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_fma(void) {
#if defined(__FMA__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_avx512(void) {
#if defined(__AVX512F__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_avx512_vbmi(void) {
#if defined(__AVX512VBMI__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_avx512_vnni(void) {
#if defined(__AVX512VNNI__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_avx512_bf16(void) {
#if defined(__AVX512BF16__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_amx_int8(void) {
    return 0; // no AMX kernels
}

int ggml_cpu_has_neon(void) {
#if defined(__ARM_NEON)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_arm_fma(void) {
#if defined(__ARM_FEATURE_FMA)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_fp16_va(void) {
#if defined(__ARM_FEATURE_FP16_VECTOR_ARITHMETIC)
    return 1;
#else
    return 0;
#endif
}

// arm64: what the CPU has (checked at run time: the kernels that use it do too)
int ggml_cpu_has_dotprod(void) {
#if defined(__aarch64__)
    return ggml_arm_has_dotprod();
#elif defined(__ARM_FEATURE_DOTPROD)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_matmul_int8(void) {
#if defined(__aarch64__)
    return ggml_arm_has_i8mm();
#elif defined(__ARM_FEATURE_MATMUL_INT8)
    return 1;
#else
    return 0;
#endif
}

// the feature list names what the kernels use: no kernel uses i8mm yet
static int ggml_cpu_uses_matmul_int8(void) {
    return 0;
}

int ggml_cpu_has_sve(void) {
#if defined(__ARM_FEATURE_SVE)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_get_sve_cnt(void) {
    return 0;
}

int ggml_cpu_has_sme(void) {
    return 0;
}

int ggml_cpu_has_sme2(void) {
    return 0;
}

int ggml_cpu_has_riscv_v(void) {
#if defined(__riscv_v_intrinsic)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_get_rvv_vlen(void) {
    return 0;
}

int ggml_cpu_has_vsx(void) {
#if defined(__POWER9_VECTOR__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_vxe(void) {
#if defined(__VXE__) || defined(__VXE2__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_wasm_simd(void) {
#if defined(__wasm_simd128__)
    return 1;
#else
    return 0;
#endif
}

int ggml_cpu_has_llamafile(void) {
    return 0;
}

//
// instructions chosen at run time: kernels compiled for them in files of
// their own, used where the CPU has them
//

#include "gemm-bf16.h"

#if defined(GGML_CPU_BF16_KERNEL)
#include <cpuid.h>

static bool           g_bf16_dot;
static pthread_once_t g_bf16_dot_once = PTHREAD_ONCE_INIT;

// AVX512_BF16 with AVX-512 F, BW and VL, and an OS that saves the AVX-512 registers
static void bf16_dot_detect(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c >> 27 & 1)) { // OSXSAVE
        return;
    }
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    (void) hi;
    // XCR0: SSE, AVX, opmask, upper halves of ZMM0-15, ZMM16-31
    if ((lo & 0xE6u) != 0xE6u) {
        return;
    }
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || a < 1) {
        return;
    }
    const bool f = b >> 16 & 1, bw = b >> 30 & 1, vl = b >> 31 & 1;
    if (!__get_cpuid_count(7, 1, &a, &b, &c, &d)) {
        return;
    }
    const bool bf16 = a >> 5 & 1;
    g_bf16_dot = f && bw && vl && bf16 && getenv("GGML_CPU_NO_BF16_DOT") == NULL;
}
#endif

bool ggml_gemm_bf16_available(void) {
#if defined(GGML_CPU_BF16_KERNEL)
    pthread_once(&g_bf16_dot_once, bf16_dot_detect);
    return g_bf16_dot;
#else
    return false;
#endif
}

//
// feature list and start-up check
//

struct cpu_feature {
    const char * name;
    int (*built_with)(void);
    const char * cpuid_name; // for __builtin_cpu_supports, or NULL
};

static const struct cpu_feature g_features[] = {
    { "SSE3",        ggml_cpu_has_sse3,        "sse3"        },
    { "SSSE3",       ggml_cpu_has_ssse3,       "ssse3"       },
    { "AVX",         ggml_cpu_has_avx,         "avx"         },
    { "AVX_VNNI",    ggml_cpu_has_avx_vnni,    NULL          },
    { "AVX2",        ggml_cpu_has_avx2,        "avx2"        },
    { "F16C",        ggml_cpu_has_f16c,        NULL          },
    { "FMA",         ggml_cpu_has_fma,         "fma"         },
    { "BMI2",        ggml_cpu_has_bmi2,        "bmi2"        },
    { "AVX512",      ggml_cpu_has_avx512,      "avx512f"     },
    { "AVX512_VBMI", ggml_cpu_has_avx512_vbmi, "avx512vbmi"  },
    { "AVX512_VNNI", ggml_cpu_has_avx512_vnni, "avx512vnni"  },
    { "AVX512_BF16", ggml_cpu_has_avx512_bf16, NULL          },
    { "NEON",        ggml_cpu_has_neon,        NULL          },
    { "ARM_FMA",     ggml_cpu_has_arm_fma,     NULL          },
    { "FP16_VA",     ggml_cpu_has_fp16_va,     NULL          },
    { "DOTPROD",     ggml_cpu_has_dotprod,     NULL          },
    { "MATMUL_INT8", ggml_cpu_uses_matmul_int8, NULL         },
    { "SVE",         ggml_cpu_has_sve,         NULL          },
    { "RISCV_V",     ggml_cpu_has_riscv_v,     NULL          },
    { "VSX",         ggml_cpu_has_vsx,         NULL          },
    { "WASM_SIMD",   ggml_cpu_has_wasm_simd,   NULL          },
};

#define N_FEATURES (sizeof(g_features) / sizeof(g_features[0]))

static struct ggml_backend_feature g_feature_list[N_FEATURES + 1];

void ggml_cpu_features_init(void) {
    size_t n = 0;
    for (size_t i = 0; i < N_FEATURES; i++) {
        if (!g_features[i].built_with()) {
            continue;
        }
        g_feature_list[n].name  = g_features[i].name;
        g_feature_list[n].value = "1";
        n++;
#if defined(__x86_64__) && defined(__GNUC__)
        // __builtin_cpu_supports wants a literal, so check the common ones by name
        const char * c = g_features[i].cpuid_name;
        int present = 1;
        if (c == NULL)                         { present = 1; }
        else if (strcmp(c, "sse3") == 0)       { present = __builtin_cpu_supports("sse3"); }
        else if (strcmp(c, "ssse3") == 0)      { present = __builtin_cpu_supports("ssse3"); }
        else if (strcmp(c, "avx") == 0)        { present = __builtin_cpu_supports("avx"); }
        else if (strcmp(c, "avx2") == 0)       { present = __builtin_cpu_supports("avx2"); }
        else if (strcmp(c, "fma") == 0)        { present = __builtin_cpu_supports("fma"); }
        else if (strcmp(c, "bmi2") == 0)       { present = __builtin_cpu_supports("bmi2"); }
        else if (strcmp(c, "avx512f") == 0)    { present = __builtin_cpu_supports("avx512f"); }
        else if (strcmp(c, "avx512vbmi") == 0) { present = __builtin_cpu_supports("avx512vbmi"); }
        else if (strcmp(c, "avx512vnni") == 0) { present = __builtin_cpu_supports("avx512vnni"); }
        if (!present) {
            GGML_LOG_ERROR("%s: this build of the CPU backend uses %s, which this CPU does not have; "
                           "rebuild with -DGGML_NATIVE=OFF or on this machine\n", __func__, g_features[i].name);
        }
#endif
    }
    g_feature_list[n].name  = NULL;
    g_feature_list[n].value = NULL;
}

struct ggml_backend_feature * ggml_cpu_features_list(void) {
    ggml_cpu_init();
    return g_feature_list;
}
