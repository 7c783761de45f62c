// kernel-config.c: filling and printing the kernel configuration of this
// variant (see kernel-config.h).

#include "kernels/kernel-config.h"
#include "kernels/gemm.h"
#include "kernels/gemm-bf16.h"
#include "cpu-variant.h"

#include <stdio.h>
#include <stdlib.h>

struct ggml_cpu_kernel_config ggml_cpu_kconf;

// the BF16 tile runs where it is built, the variant may use it (GGML_CPU_ISA
// caps it like every other kernel family), the CPU has it and
// GGML_CPU_NO_BF16_DOT does not turn it off. (ggml_gemm_bf16_available says
// the same for the host part, but asks for the active variant, which is
// being chosen while this runs.)
static bool kconf_bf16_tile_runs(void) {
#if defined(GGML_CPU_BF16_KERNEL) && defined(__AVX512BF16__)
    return (ggml_cpu_x86_features() & GGML_CPU_X86_AVX512_BF16) != 0 && getenv("GGML_CPU_NO_BF16_DOT") == NULL;
#else
    return false;
#endif
}

void ggml_cpu_kernel_config_init(void) {
    struct ggml_cpu_kernel_config * cfg = &ggml_cpu_kconf;
    memset(cfg, 0, sizeof(*cfg));
    cfg->variant = GGML_CPU_VARIANT_NAME;

    ggml_cpu_add_kernels_quants_dot(cfg);
    ggml_cpu_add_kernels_quants_dot_k(cfg);
    ggml_cpu_add_kernels_quants_dot_iq4(cfg);
    ggml_cpu_add_kernels_quants_dot_tq(cfg);
    ggml_cpu_add_kernels_quants_dot_iq(cfg);
    ggml_cpu_add_kernels_quants_dot_lowbit(cfg);
    ggml_cpu_add_kernels_gemm_q8(cfg);
    ggml_cpu_add_kernels_panel_q4_0(cfg);
    ggml_cpu_add_kernels_x86_quants_dot(cfg);
    ggml_cpu_add_kernels_x86_quants_dot_k(cfg);
    ggml_cpu_add_kernels_x86_quants_dot_iq4(cfg);
    ggml_cpu_add_kernels_x86_quants_dot_iq(cfg);
    ggml_cpu_add_kernels_x86_gemm_q8(cfg);
    ggml_cpu_add_kernels_x86_panel_q4_0_avx2(cfg);
    ggml_cpu_add_kernels_x86_panel_q4_0(cfg);
    ggml_cpu_add_kernels_arm_quants_dot(cfg);
    ggml_cpu_add_kernels_arm_quants_dot_k(cfg);
    ggml_cpu_add_kernels_arm_gemm_q8(cfg);

    // each quantized type's activations: the quantizer of its vec_dot_type
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const struct ggml_type_traits_cpu * tr = ggml_get_type_traits_cpu((enum ggml_type) t);
        if (cfg->fast[t].dot_rows == NULL || tr == NULL) {
            continue;
        }
        const enum ggml_type vdt = tr->vec_dot_type;
        if (cfg->act_fast[vdt] != NULL) {
            GGML_CPU_SET_KERNEL(cfg->fast, t, quantize_act, cfg->act_fast[vdt], cfg->act_fast_isa[vdt]);
            GGML_CPU_SET_KERNEL(cfg->ref,  t, quantize_act, cfg->act_ref[vdt],  "scalar");
        }
    }

    cfg->gemm_f32_packed = ggml_gemm_f32p_available();
    cfg->gemm_bf16       = kconf_bf16_tile_runs();

    const char * env = getenv("GGML_CPU_KERNELS");
    if (env != NULL && env[0] != '\0' && strcmp(env, "0") != 0) {
        ggml_cpu_kernel_config_print();
    }
}

// "<prefix>_<op>__<isa>" into buf, or "-" without a kernel
static const char * kconf_name(char * buf, size_t size, const char * prefix, const char * op, bool has, const char * isa) {
    if (!has) {
        return "-";
    }
    snprintf(buf, size, "%s_%s__%s", prefix, op, isa);
    return buf;
}

void ggml_cpu_kernel_config_print(void) {
    const struct ggml_cpu_kernel_config * cfg = &ggml_cpu_kconf;
    fprintf(stderr, "CPU kernels of variant %s (use_ref: the *__scalar kernels of kernels/):\n", cfg->variant);
    fprintf(stderr, "  %-8s %-24s %-27s %-25s %s\n", "type", "row dot", "activations", "gemm pack", "gemm tile");
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const struct ggml_cpu_type_kernels * k = &cfg->fast[t];
        if (k->dot_rows == NULL) {
            continue;
        }
        const char * tn = ggml_type_name((enum ggml_type) t);
        const struct ggml_type_traits_cpu * tr = ggml_get_type_traits_cpu((enum ggml_type) t);
        const bool halves = ggml_q8p_has_halves((enum ggml_type) t);
        char dot[64], act[64], pack[64], gemm[64];
        fprintf(stderr, "  %-8s %-24s %-27s %-25s %s\n", tn,
                kconf_name(dot,  sizeof(dot),  tn, "dot", k->dot_rows != NULL, k->dot_rows_isa),
                kconf_name(act,  sizeof(act),  ggml_type_name(tr->vec_dot_type), "quantize", k->quantize_act != NULL, k->quantize_act_isa),
                kconf_name(pack, sizeof(pack), tn, "pack", k->pack_weights != NULL, k->pack_weights_isa),
                kconf_name(gemm, sizeof(gemm), halves ? "q8p2" : "q8p", "gemm", k->gemm != NULL, k->gemm_isa));
    }
    fprintf(stderr, "  float tiles: f32 %s, bf16 %s\n",
            cfg->gemm_f32_packed ? "f32p_gemm__avx512_64x6 (packed)" : "f32_gemm__" GGML_CPU_ISA_TAG " (dot-product tile)",
            cfg->gemm_bf16 ? "bf16p_gemm__avx512bf16_64x6" : "- (F32 rows)");
    // the row panels of the CPU_REPACK buffer type (repack.h), where a vector kernel reads them
    fprintf(stderr, "  repacked panels:");
    int n_panels = 0;
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const struct ggml_cpu_type_kernels * k = &cfg->fast[t];
        if (k->dot_panels != NULL) {
            fprintf(stderr, " %sp_dot__%s", ggml_type_name((enum ggml_type) t), k->dot_panels_isa);
            n_panels++;
        }
    }
    fprintf(stderr, "%s\n", n_panels == 0 ? " - (none)" : "");
}
