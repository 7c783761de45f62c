#pragma once

//
// kernel-config.h: the kernels a matrix product uses, chosen once per CPU
// variant.
//
// Every kernel variant (cpu-variant.h) fills one configuration when it is
// chosen at start-up (ggml_cpu_kernel_config_init, called by
// ggml_cpu_variant_select) and never changes it: for each weight type, the
// row dot product, the quantizer of its activations, and the packer and tile
// kernel of the int8 GEMM; and which float tile kernels run. The kernel files
// add their entries through one function each, ggml_cpu_add_kernels_<file>,
// lowest first (portable C in kernels/, then arch/x86 and arch/arm), so a
// later file overrides an earlier one; CPU features beyond what the variant
// was compiled for (arm64 dot-product and int8 matrix instructions, the
// run-time BF16 kernel) are read here, once, and never on the hot path.
//
// Names: <weight type>_<op>__<isa>[_<rows>x<cols>], e.g. q4_0_dot__avx2,
// q4_K_pack__avx2, q8p_gemm__neon_i8mm_2x4. A kernel function is named so
// after its file's instruction set (q4_0_dot__avx2 in arch/x86/*-avx2.c,
// q4_0_dot__scalar in kernels/, f32_dot__vf for the kernels written on
// simd-f32.h); each entry holds the <isa>[_<tile>] part of the variant in use,
// which GGML_CPU_KERNELS=1 (at start-up) and bench-matmul --list-kernels print
// (q4_0_dot__avx512vnni: the avx2 file compiled for that variant).
//

#include "kernels/quants-dot.h"
#include "kernels/panels.h"

#ifdef __cplusplus
extern "C" {
#endif

// fp32 -> rows of an activation type (Q8_0, Q8_1, Q8_K), k a multiple of the block size
typedef void (*ggml_cpu_quantize_act_t)(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k);

// one weight row of k values -> its q8 panel (gemm.h)
typedef void (*ggml_cpu_q8p_pack_t)(const void * row, int64_t k, void * panel);

// C[j][i] (+)= A row i . B[j] over nsb superblocks of q8 panels (gemm.h)
typedef void (*ggml_cpu_q8p_gemm_t)(int64_t nrows, int64_t ncols, int64_t nsb, const void * A, size_t lda,
                                    const void * const * B, float * const * C, bool accumulate);

// the kernels of one weight type; a NULL kernel: the type has none of that kind
struct ggml_cpu_type_kernels {
    ggml_cpu_dot_rows_t     dot_rows;      // weight rows . activation rows (generation, few columns)
    ggml_cpu_quantize_act_t quantize_act;  // F32 activations -> rows of the type's vec_dot_type
    ggml_cpu_q8p_pack_t     pack_weights;  // weight row -> q8 panel of this kernel family (with gemm)
    ggml_cpu_q8p_gemm_t     gemm;          // tile kernel on those panels (prompt, many columns)
    ggml_cpu_dot_panels_t   dot_panels;    // weights in 16-row panels (panels.h) . activation rows
    const char * dot_rows_isa;             // the <isa>[_<tile>] part of each kernel's name
    const char * quantize_act_isa;
    const char * pack_weights_isa;
    const char * gemm_isa;
    const char * dot_panels_isa;
};

struct ggml_cpu_kernel_config {
    const char * variant;                                  // the variant that filled it
    struct ggml_cpu_type_kernels fast[GGML_TYPE_COUNT];    // the variant's kernels
    struct ggml_cpu_type_kernels ref[GGML_TYPE_COUNT];     // the portable ones (use_ref)
    ggml_cpu_quantize_act_t act_fast[GGML_TYPE_COUNT];     // quantizers per activation type
    ggml_cpu_quantize_act_t act_ref[GGML_TYPE_COUNT];
    const char * act_fast_isa[GGML_TYPE_COUNT];
    bool gemm_f32_packed;  // the packed float tile (gemm.h, ggml_gemm_f32p) runs
    bool gemm_bf16;        // the BF16 tile (gemm-bf16.h) runs: built, the CPU and the variant have it, not turned off
};

// the configuration, filled (once) by ggml_cpu_kernel_config_init
extern struct ggml_cpu_kernel_config ggml_cpu_kconf;

static inline const struct ggml_cpu_type_kernels * ggml_cpu_type_kernels(enum ggml_type type, bool use_ref) {
    return use_ref ? &ggml_cpu_kconf.ref[type] : &ggml_cpu_kconf.fast[type];
}

// fills the configuration of this variant; prints it to stderr when the
// environment sets GGML_CPU_KERNELS (to anything but 0). Called once, at start-up.
void ggml_cpu_kernel_config_init(void);

// the table, one line per weight type that has a kernel
void ggml_cpu_kernel_config_print(void);

// sets the kernel of kind `field` of `type` in `tab` (fast or ref), with its <isa> name part
#define GGML_CPU_SET_KERNEL(tab, type, field, fn, isa) \
    do { (tab)[type].field = (fn); (tab)[type].field##_isa = (isa); } while (0)

// the <isa> part of the names of the kernels that this variant's flags
// compile (arch/x86's avx2 files, the ggml_vf_* kernels)
#if defined(GGML_VEC_AVX512) && defined(__AVX512VNNI__)
#define GGML_CPU_ISA_TAG "avx512vnni"
#elif defined(GGML_VEC_AVX512)
#define GGML_CPU_ISA_TAG "avx512"
#elif defined(GGML_VEC_AVX2) && defined(__AVXVNNI__)
#define GGML_CPU_ISA_TAG "avxvnni"
#elif defined(GGML_VEC_AVX2)
#define GGML_CPU_ISA_TAG "avx2"
#elif defined(GGML_VEC_NEON)
#define GGML_CPU_ISA_TAG "neon"
#else
#define GGML_CPU_ISA_TAG "scalar"
#endif


// One per kernel file, in the order ggml_cpu_kernel_config_init calls them:
// ggml_cpu_add_kernels_[<arch>_]<file>.
void ggml_cpu_add_kernels_quants_dot        (struct ggml_cpu_kernel_config * cfg); // kernels/quants-dot.c: Q4_0..Q8_0, F32/F16/BF16, Q8 quantizers
void ggml_cpu_add_kernels_quants_dot_k      (struct ggml_cpu_kernel_config * cfg); // kernels/quants-dot-k.c: Q2_K..Q6_K
void ggml_cpu_add_kernels_quants_dot_iq4    (struct ggml_cpu_kernel_config * cfg); // kernels/quants-dot-iq4.c: IQ4_NL, IQ4_XS, MXFP4
void ggml_cpu_add_kernels_quants_dot_tq     (struct ggml_cpu_kernel_config * cfg); // kernels/quants-dot-tq.c: TQ1_0, TQ2_0
void ggml_cpu_add_kernels_quants_dot_iq     (struct ggml_cpu_kernel_config * cfg); // kernels/quants-dot-iq.c: IQ1/IQ2/IQ3 grids
void ggml_cpu_add_kernels_quants_dot_lowbit (struct ggml_cpu_kernel_config * cfg); // kernels/quants-dot-lowbit.c: Q1_0, Q2_0, NVFP4
void ggml_cpu_add_kernels_gemm_q8           (struct ggml_cpu_kernel_config * cfg); // kernels/gemm-q8.c: q8 panel packers and tiles
void ggml_cpu_add_kernels_panel_q4_0        (struct ggml_cpu_kernel_config * cfg); // kernels/panel-q4_0.c: Q4_0 in 16-row panels
void ggml_cpu_add_kernels_x86_quants_dot    (struct ggml_cpu_kernel_config * cfg); // arch/x86/quants-dot-avx2.c (each: empty without AVX2)
void ggml_cpu_add_kernels_x86_quants_dot_k  (struct ggml_cpu_kernel_config * cfg); // arch/x86/quants-dot-k-avx2.c
void ggml_cpu_add_kernels_x86_quants_dot_iq4(struct ggml_cpu_kernel_config * cfg); // arch/x86/quants-dot-iq4-avx2.c
void ggml_cpu_add_kernels_x86_quants_dot_iq (struct ggml_cpu_kernel_config * cfg); // arch/x86/quants-dot-iq-avx2.c
void ggml_cpu_add_kernels_x86_gemm_q8       (struct ggml_cpu_kernel_config * cfg); // arch/x86/gemm-q8-avx2.c
void ggml_cpu_add_kernels_x86_panel_q4_0    (struct ggml_cpu_kernel_config * cfg); // arch/x86/panel-q4_0-avx512.c (empty without AVX-512 VNNI)
void ggml_cpu_add_kernels_x86_panel_q4_0_avx2(struct ggml_cpu_kernel_config * cfg); // arch/x86/panel-q4_0-avx2.c (below AVX-512 VNNI)
void ggml_cpu_add_kernels_arm_quants_dot    (struct ggml_cpu_kernel_config * cfg); // arch/arm/quants-dot-neon.c (each: empty off arm64)
void ggml_cpu_add_kernels_arm_quants_dot_k  (struct ggml_cpu_kernel_config * cfg); // arch/arm/quants-dot-k-neon.c
void ggml_cpu_add_kernels_arm_gemm_q8       (struct ggml_cpu_kernel_config * cfg); // arch/arm/gemm-q8-neon.c

#ifdef __cplusplus
}
#endif
