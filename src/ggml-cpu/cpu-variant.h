#pragma once

//
// cpu-variant.h: the CPU backend's kernels as one table per instruction-set
// level, and the choice among them at start-up.
//
// The kernel part of the backend (graph-compute.c, every ops-*.c, the dot
// products, GEMMs and conversions) is compiled once per level with that
// level's -m flags and partially linked into one object in which every symbol
// but the level's table, ggml_cpu_kernels_<level>, is made local (see
// CMakeLists.txt). Inside a variant, calls stay direct and inlined as before;
// only the entry points below cross from the host part (device, registry,
// thread pool, the public functions of ggml-cpu.h) to the chosen variant.
//
// A GGML_NATIVE=ON build has one variant, "native" (-march=native); a
// GGML_NATIVE=OFF build on x86-64 has sse2, avx2, avx2_vnni, avx512,
// avx512_vnni and avx512_vnni_bf16, in that order; elsewhere one "portable"
// variant. The order is a ranking, not a chain of subsets (avx512 lacks
// AVX-VNNI): the choice is the last one whose features the CPU has.
//

#include "cpu-impl.h"
#include "cpu-profile.h"

#ifdef __cplusplus
extern "C" {
#endif

// x86 features: what a variant was compiled to use, and what the CPU has
enum ggml_cpu_x86_feature {
    GGML_CPU_X86_SSE3        = 1u << 0,
    GGML_CPU_X86_SSSE3       = 1u << 1,
    GGML_CPU_X86_SSE4_1      = 1u << 2,
    GGML_CPU_X86_SSE4_2      = 1u << 3,
    GGML_CPU_X86_AVX         = 1u << 4,
    GGML_CPU_X86_AVX2        = 1u << 5,
    GGML_CPU_X86_FMA         = 1u << 6,
    GGML_CPU_X86_F16C        = 1u << 7,
    GGML_CPU_X86_BMI2        = 1u << 8,
    GGML_CPU_X86_AVX_VNNI    = 1u << 9,
    GGML_CPU_X86_AVX512F     = 1u << 10,
    GGML_CPU_X86_AVX512BW    = 1u << 11,
    GGML_CPU_X86_AVX512VL    = 1u << 12,
    GGML_CPU_X86_AVX512DQ    = 1u << 13,
    GGML_CPU_X86_AVX512CD    = 1u << 14,
    GGML_CPU_X86_AVX512_VBMI = 1u << 15,
    GGML_CPU_X86_AVX512_VNNI = 1u << 16,
    GGML_CPU_X86_AVX512_BF16 = 1u << 17,
    GGML_CPU_X86_AMX_TILE    = 1u << 18,
    GGML_CPU_X86_AMX_INT8    = 1u << 19,
    GGML_CPU_X86_AMX_BF16    = 1u << 20,
};

// the entry points of one variant (cpu-kernels.c)
struct ggml_cpu_kernels {
    const char * name;     // the level: "sse2", "avx2", ..., or "native" / "portable"
    uint32_t     features; // the GGML_CPU_X86_* the compiler was allowed to use (0 off x86)

    struct ggml_cplan (*graph_plan)(const struct ggml_cgraph * cgraph, int n_threads, struct ggml_threadpool * threadpool);
    enum ggml_status  (*graph_compute)(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan,
                                       struct ggml_cpu_profile * profile); // profile: NULL, or added to
    enum ggml_status  (*graph_compute_with_ctx)(struct ggml_context * ctx, struct ggml_cgraph * cgraph, int n_threads);
    bool              (*supports_op)(const struct ggml_tensor * op);
    const struct ggml_type_traits_cpu * (*get_type_traits)(enum ggml_type type);
    // fills the variant's kernel configuration (kernel-config.h); called once,
    // when the variant is chosen, before any other entry point
    void (*init_kernel_config)(void);
    // whether the variant has a kernel for weights of this type in the
    // panels of the CPU_REPACK buffer type (repack.h); after init_kernel_config
    bool (*reads_panels)(enum ggml_type type);

    void (*fp32_to_fp32)(const float * x, float * y, int64_t n);
    void (*fp32_to_i32) (const float * x, int32_t * y, int64_t n);
    void (*fp32_to_fp16)(const float * x, ggml_fp16_t * y, int64_t n);
    void (*fp16_to_fp32)(const ggml_fp16_t * x, float * y, int64_t n);
    void (*fp32_to_bf16)(const float * x, ggml_bf16_t * y, int64_t n);
    void (*bf16_to_fp32)(const ggml_bf16_t * x, float * y, int64_t n);
};

// ggml_graph_compute, adding the nodes' times to profile when not NULL
// (graph-compute.c in each variant; cpu-variant.c forwards to the active one)
enum ggml_status ggml_graph_compute_profiled(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan,
                                             struct ggml_cpu_profile * profile);

// The variant in use, chosen once (at ggml_cpu_init): the highest level of
// this build that the CPU supports, no higher than GGML_CPU_ISA names.
const struct ggml_cpu_kernels * ggml_cpu_kernels_active(void);

// makes that choice and returns it; called once, by ggml_cpu_init
const struct ggml_cpu_kernels * ggml_cpu_variant_select(void);

// the GGML_CPU_X86_* this CPU has, with the operating system's support for
// the register state (0 off x86-64); cpu-x86.c
uint32_t ggml_cpu_x86_features(void);

// the name of each GGML_CPU_X86_* bit ("AVX512_VNNI"), NULL for none
const char * ggml_cpu_x86_feature_name(uint32_t bit);

// the Zen generation of an AMD x86-64 CPU (2 for Zen to Zen 2, 3, 4, 5), 0
// for any other CPU; cpu-x86.c. For tuning only: features come from CPUID bits.
int ggml_cpu_x86_amd_zen(void);

#ifdef __cplusplus
}
#endif
