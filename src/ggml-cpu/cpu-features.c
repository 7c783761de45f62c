// cpu-features.c: the instruction sets of the CPU and of the CPU backend's
// kernels (ggml_cpu_has_*, the registry's feature list), and NUMA detection
// and thread placement.
//
// On x86-64, ggml_cpu_has_* say what the CPU has (CPUID, cpu-x86.c); the
// feature list says what the kernel variant in use was compiled for, and
// which variant that is ("ISA"). Elsewhere both say what the build uses.

#include "cpu-features.h"
#include "cpu-variant.h"
#include "arm-features.h"
#include "simd/stream-prefetch.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>

int ggml_cpu_has_sse3(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_SSE3) != 0;
}

int ggml_cpu_has_ssse3(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_SSSE3) != 0;
}

int ggml_cpu_has_avx(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_AVX) != 0;
}

int ggml_cpu_has_avx_vnni(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_AVX_VNNI) != 0;
}

int ggml_cpu_has_avx2(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_AVX2) != 0;
}

int ggml_cpu_has_bmi2(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_BMI2) != 0;
}

int ggml_cpu_has_f16c(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_F16C) != 0;
}

int ggml_cpu_has_fma(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_FMA) != 0;
}

int ggml_cpu_has_avx512(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_AVX512F) != 0;
}

int ggml_cpu_has_avx512_vbmi(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_AVX512_VBMI) != 0;
}

int ggml_cpu_has_avx512_vnni(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_AVX512_VNNI) != 0;
}

int ggml_cpu_has_avx512_bf16(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_AVX512_BF16) != 0;
}

int ggml_cpu_has_amx_int8(void) {
    return (ggml_cpu_x86_features() & GGML_CPU_X86_AMX_INT8) != 0;
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

#include "kernels/gemm-bf16.h"

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
    // the kernel level in use must include the instruction too: GGML_CPU_ISA
    // caps it (avx2 means no vdpbf16ps), as it caps every other kernel family
    const bool level = (ggml_cpu_kernels_active()->features & GGML_CPU_X86_AVX512_BF16) != 0;
    g_bf16_dot = f && bw && vl && bf16 && level && getenv("GGML_CPU_NO_BF16_DOT") == NULL;
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
// feature list
//

// the x86 features the list names, upstream's names
static const uint32_t g_x86_listed[] = {
    GGML_CPU_X86_SSE3, GGML_CPU_X86_SSSE3, GGML_CPU_X86_AVX, GGML_CPU_X86_AVX_VNNI, GGML_CPU_X86_AVX2,
    GGML_CPU_X86_F16C, GGML_CPU_X86_FMA, GGML_CPU_X86_BMI2, GGML_CPU_X86_AVX512F, GGML_CPU_X86_AVX512_VBMI,
    GGML_CPU_X86_AVX512_VNNI, GGML_CPU_X86_AVX512_BF16, GGML_CPU_X86_AMX_INT8,
};

// the other architectures: what the build uses
struct cpu_feature {
    const char * name;
    int (*built_with)(void);
};

static const struct cpu_feature g_other_features[] = {
    { "NEON",        ggml_cpu_has_neon        },
    { "ARM_FMA",     ggml_cpu_has_arm_fma     },
    { "FP16_VA",     ggml_cpu_has_fp16_va     },
    { "DOTPROD",     ggml_cpu_has_dotprod     },
    { "MATMUL_INT8", ggml_cpu_uses_matmul_int8 },
    { "SVE",         ggml_cpu_has_sve         },
    { "RISCV_V",     ggml_cpu_has_riscv_v     },
    { "VSX",         ggml_cpu_has_vsx         },
    { "WASM_SIMD",   ggml_cpu_has_wasm_simd   },
};

#define N_X86   (sizeof(g_x86_listed) / sizeof(g_x86_listed[0]))
#define N_OTHER (sizeof(g_other_features) / sizeof(g_other_features[0]))

// the features, the variant in use, the stream prefetch distance, the lead and the {NULL, NULL} end
static struct ggml_backend_feature g_feature_list[N_X86 + N_OTHER + 4];
static char g_stream_ahead_value[24];
static char g_stream_lead_value[24];

// called once by ggml_cpu_init, after the variant is chosen
void ggml_cpu_features_init(const struct ggml_cpu_kernels * k) {
    size_t n = 0;
    for (size_t i = 0; i < N_X86; i++) {
        if (k->features & g_x86_listed[i]) {
            g_feature_list[n].name  = ggml_cpu_x86_feature_name(g_x86_listed[i]);
            g_feature_list[n].value = "1";
            n++;
        }
    }
    for (size_t i = 0; i < N_OTHER; i++) {
        if (g_other_features[i].built_with()) {
            g_feature_list[n].name  = g_other_features[i].name;
            g_feature_list[n].value = "1";
            n++;
        }
    }
    g_feature_list[n].name  = "ISA";
    g_feature_list[n].value = k->name;
    n++;
    // the bytes ahead the matrix-vector kernels prefetch their weights (0: none; stream-prefetch.c)
    snprintf(g_stream_ahead_value, sizeof(g_stream_ahead_value), "%zu", (size_t) atomic_load(&ggml_cpu_stream_ahead));
    g_feature_list[n].name  = "STREAM_PREFETCH";
    g_feature_list[n].value = g_stream_ahead_value;
    n++;
    // the bytes of the next product's weights a thread waiting at a barrier asks for (0: none; stream-lead.c)
    snprintf(g_stream_lead_value, sizeof(g_stream_lead_value), "%zu", (size_t) atomic_load(&ggml_cpu_stream_lead));
    g_feature_list[n].name  = "STREAM_LEAD";
    g_feature_list[n].value = g_stream_lead_value;
    n++;
    g_feature_list[n].name  = NULL;
    g_feature_list[n].value = NULL;
}

struct ggml_backend_feature * ggml_cpu_features_list(void) {
    ggml_cpu_init();
    return g_feature_list;
}
