// cpu-kernels.c: the table of one kernel variant, compiled into every variant
// with that variant's instruction-set flags (see cpu-variant.h).
//
// The build names the variant (GGML_CPU_VARIANT_NAME) and its table's symbol
// (GGML_CPU_KERNELS_SYMBOL); the features the variant needs are read here
// from the compiler's own macros, so that they are exactly what the flags
// allowed the compiler to use.

#include "cpu-variant.h"
#include "kernels/kernel-config.h"

#if !defined(GGML_CPU_VARIANT_NAME) || !defined(GGML_CPU_KERNELS_SYMBOL)
#error "cpu-kernels.c is compiled once per variant, with GGML_CPU_VARIANT_NAME and GGML_CPU_KERNELS_SYMBOL defined"
#endif

#if defined(__SSE3__)
#define KV_SSE3 GGML_CPU_X86_SSE3
#else
#define KV_SSE3 0
#endif
#if defined(__SSSE3__)
#define KV_SSSE3 GGML_CPU_X86_SSSE3
#else
#define KV_SSSE3 0
#endif
#if defined(__SSE4_1__)
#define KV_SSE4_1 GGML_CPU_X86_SSE4_1
#else
#define KV_SSE4_1 0
#endif
#if defined(__SSE4_2__)
#define KV_SSE4_2 GGML_CPU_X86_SSE4_2
#else
#define KV_SSE4_2 0
#endif
#if defined(__AVX__)
#define KV_AVX GGML_CPU_X86_AVX
#else
#define KV_AVX 0
#endif
#if defined(__AVX2__)
#define KV_AVX2 GGML_CPU_X86_AVX2
#else
#define KV_AVX2 0
#endif
#if defined(__FMA__)
#define KV_FMA GGML_CPU_X86_FMA
#else
#define KV_FMA 0
#endif
#if defined(__F16C__)
#define KV_F16C GGML_CPU_X86_F16C
#else
#define KV_F16C 0
#endif
#if defined(__BMI2__)
#define KV_BMI2 GGML_CPU_X86_BMI2
#else
#define KV_BMI2 0
#endif
#if defined(__AVXVNNI__)
#define KV_AVX_VNNI GGML_CPU_X86_AVX_VNNI
#else
#define KV_AVX_VNNI 0
#endif
#if defined(__AVX512F__)
#define KV_AVX512F GGML_CPU_X86_AVX512F
#else
#define KV_AVX512F 0
#endif
#if defined(__AVX512BW__)
#define KV_AVX512BW GGML_CPU_X86_AVX512BW
#else
#define KV_AVX512BW 0
#endif
#if defined(__AVX512VL__)
#define KV_AVX512VL GGML_CPU_X86_AVX512VL
#else
#define KV_AVX512VL 0
#endif
#if defined(__AVX512DQ__)
#define KV_AVX512DQ GGML_CPU_X86_AVX512DQ
#else
#define KV_AVX512DQ 0
#endif
#if defined(__AVX512CD__)
#define KV_AVX512CD GGML_CPU_X86_AVX512CD
#else
#define KV_AVX512CD 0
#endif
#if defined(__AVX512VBMI__)
#define KV_AVX512_VBMI GGML_CPU_X86_AVX512_VBMI
#else
#define KV_AVX512_VBMI 0
#endif
#if defined(__AVX512VNNI__)
#define KV_AVX512_VNNI GGML_CPU_X86_AVX512_VNNI
#else
#define KV_AVX512_VNNI 0
#endif
#if defined(__AVX512BF16__)
#define KV_AVX512_BF16 GGML_CPU_X86_AVX512_BF16
#else
#define KV_AVX512_BF16 0
#endif
#if defined(__AMXTILE__)
#define KV_AMX_TILE GGML_CPU_X86_AMX_TILE
#else
#define KV_AMX_TILE 0
#endif
#if defined(__AMXINT8__)
#define KV_AMX_INT8 GGML_CPU_X86_AMX_INT8
#else
#define KV_AMX_INT8 0
#endif
#if defined(__AMXBF16__)
#define KV_AMX_BF16 GGML_CPU_X86_AMX_BF16
#else
#define KV_AMX_BF16 0
#endif

#define KV_FEATURES (KV_SSE3 | KV_SSSE3 | KV_SSE4_1 | KV_SSE4_2 | KV_AVX | KV_AVX2 | KV_FMA | KV_F16C | KV_BMI2 |   \
                     KV_AVX_VNNI | KV_AVX512F | KV_AVX512BW | KV_AVX512VL | KV_AVX512DQ | KV_AVX512CD |            \
                     KV_AVX512_VBMI | KV_AVX512_VNNI | KV_AVX512_BF16 | KV_AMX_TILE | KV_AMX_INT8 | KV_AMX_BF16)

// the weight types whose CPU_REPACK panel layout (repack.h) this variant reads
static bool kv_reads_panels(enum ggml_type type) {
    return type >= 0 && type < GGML_TYPE_COUNT && ggml_cpu_kconf.fast[type].dot_panels != NULL;
}

// the only symbol of the variant left global after the partial link (hidden
// in a shared library: nothing outside libggml-cpu sees it)
extern const struct ggml_cpu_kernels GGML_CPU_KERNELS_SYMBOL;

const struct ggml_cpu_kernels GGML_CPU_KERNELS_SYMBOL = {
    .name                   = GGML_CPU_VARIANT_NAME,
    .features               = (uint32_t) (KV_FEATURES),
    .graph_plan             = ggml_graph_plan,
    .graph_compute          = ggml_graph_compute_profiled,
    .graph_compute_with_ctx = ggml_graph_compute_with_ctx,
    .supports_op            = ggml_cpu_supports_op,
    .get_type_traits        = ggml_get_type_traits_cpu,
    .init_kernel_config     = ggml_cpu_kernel_config_init,
    .reads_panels           = kv_reads_panels,
    .fp32_to_fp32           = ggml_cpu_fp32_to_fp32,
    .fp32_to_i32            = ggml_cpu_fp32_to_i32,
    .fp32_to_fp16           = ggml_cpu_fp32_to_fp16,
    .fp16_to_fp32           = ggml_cpu_fp16_to_fp32,
    .fp32_to_bf16           = ggml_cpu_fp32_to_bf16,
    .bf16_to_fp32           = ggml_cpu_bf16_to_fp32,
};
