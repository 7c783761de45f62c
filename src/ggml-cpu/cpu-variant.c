// cpu-variant.c: choosing the kernel variant at start-up, and the public
// functions of ggml-cpu.h that the variants implement, forwarded to the one
// in use.
//
// The variants of the build are listed, lowest level first, in the generated
// header ggml-cpu-variants.h (one GGML_CPU_VARIANT(name) per variant). The
// choice is the highest whose features the CPU has, capped by the level that
// the environment variable GGML_CPU_ISA names; it is made once, in
// ggml_cpu_init, and never changes in the life of the process; the chosen
// variant then fills its kernel configuration (and prints it when
// GGML_CPU_KERNELS is set: kernels/kernel-config.h).

#include "cpu-variant.h"
#include "cpu-features.h"

#include <stdio.h>
#include <stdlib.h>

#define GGML_CPU_VARIANT(name) extern const struct ggml_cpu_kernels ggml_cpu_kernels_##name;
#include "ggml-cpu-variants.h"
#undef GGML_CPU_VARIANT

static const struct ggml_cpu_kernels * const g_variants[] = {
#define GGML_CPU_VARIANT(name) &ggml_cpu_kernels_##name,
#include "ggml-cpu-variants.h"
#undef GGML_CPU_VARIANT
};

#define N_VARIANTS ((int) (sizeof(g_variants) / sizeof(g_variants[0])))

// written once inside ggml_cpu_init's pthread_once, read after it
static const struct ggml_cpu_kernels * g_active = NULL;

static bool variant_runs_here(const struct ggml_cpu_kernels * v, uint32_t cpu) {
    return (v->features & ~cpu) == 0;
}

// the names of the features v uses that the CPU lacks, space-separated
static void missing_features(const struct ggml_cpu_kernels * v, uint32_t cpu, char * buf, size_t size) {
    buf[0] = '\0';
    size_t len = 0;
    for (uint32_t bit = 1; bit != 0; bit <<= 1) {
        const char * name = (v->features & ~cpu & bit) ? ggml_cpu_x86_feature_name(bit) : NULL;
        if (name != NULL && len < size) {
            len += (size_t) snprintf(buf + len, size - len, "%s%s", len ? " " : "", name);
        }
    }
}

// the index of the level GGML_CPU_ISA names, the highest if it is unset or
// names no level of this build
static int variant_cap_from_env(void) {
    const char * env = getenv("GGML_CPU_ISA");
    if (env == NULL || env[0] == '\0') {
        return N_VARIANTS - 1;
    }
    for (int i = 0; i < N_VARIANTS; i++) {
        if (strcmp(env, g_variants[i]->name) == 0) {
            return i;
        }
    }
    char valid[256] = "";
    size_t len = 0;
    for (int i = 0; i < N_VARIANTS && len < sizeof(valid); i++) {
        len += (size_t) snprintf(valid + len, sizeof(valid) - len, "%s%s", i ? ", " : "", g_variants[i]->name);
    }
    GGML_LOG_ERROR("%s: GGML_CPU_ISA=%s is not a level of this build (valid: %s); ignored\n", __func__, env, valid);
    return N_VARIANTS - 1;
}

const struct ggml_cpu_kernels * ggml_cpu_variant_select(void) {
    const uint32_t cpu = ggml_cpu_x86_features();
    const int cap = variant_cap_from_env();

    int best = -1;
    for (int i = 0; i <= cap; i++) {
        if (variant_runs_here(g_variants[i], cpu)) {
            best = i;
        }
    }
    if (best < 0) {
        // only a build with one variant made for another machine gets here
        // (GGML_NATIVE=ON): run it anyway, as that is all there is, but say why
        // it may die
        char missing[256];
        missing_features(g_variants[0], cpu, missing, sizeof(missing));
        GGML_LOG_ERROR("%s: this build of the CPU backend uses %s, which this CPU does not have; "
                       "rebuild with -DGGML_NATIVE=OFF or on this machine\n", __func__, missing);
        best = 0;
    }
    g_active = g_variants[best];
    g_active->init_kernel_config();

    if (getenv("GGML_CPU_ISA") != NULL) {
        GGML_LOG_INFO("%s: CPU kernels: %s (GGML_CPU_ISA=%s)\n", __func__, g_active->name, getenv("GGML_CPU_ISA"));
    } else {
        GGML_LOG_DEBUG("%s: CPU kernels: %s\n", __func__, g_active->name);
    }
    return g_active;
}

const struct ggml_cpu_kernels * ggml_cpu_kernels_active(void) {
    ggml_cpu_init();
    return g_active;
}

//
// the public functions the variants implement
//

struct ggml_cplan ggml_graph_plan(const struct ggml_cgraph * cgraph, int n_threads, struct ggml_threadpool * threadpool) {
    return ggml_cpu_kernels_active()->graph_plan(cgraph, n_threads, threadpool);
}

enum ggml_status ggml_graph_compute(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan) {
    return ggml_cpu_kernels_active()->graph_compute(cgraph, cplan, NULL);
}

enum ggml_status ggml_graph_compute_profiled(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan,
                                             struct ggml_cpu_profile * profile) {
    return ggml_cpu_kernels_active()->graph_compute(cgraph, cplan, profile);
}

enum ggml_status ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * cgraph, int n_threads) {
    return ggml_cpu_kernels_active()->graph_compute_with_ctx(ctx, cgraph, n_threads);
}

bool ggml_cpu_supports_op(const struct ggml_tensor * op) {
    return ggml_cpu_kernels_active()->supports_op(op);
}

const struct ggml_type_traits_cpu * ggml_get_type_traits_cpu(enum ggml_type type) {
    return ggml_cpu_kernels_active()->get_type_traits(type);
}

void ggml_cpu_fp32_to_fp32(const float * x, float * y, int64_t n) {
    ggml_cpu_kernels_active()->fp32_to_fp32(x, y, n);
}

void ggml_cpu_fp32_to_i32(const float * x, int32_t * y, int64_t n) {
    ggml_cpu_kernels_active()->fp32_to_i32(x, y, n);
}

void ggml_cpu_fp32_to_fp16(const float * x, ggml_fp16_t * y, int64_t n) {
    ggml_cpu_kernels_active()->fp32_to_fp16(x, y, n);
}

void ggml_cpu_fp16_to_fp32(const ggml_fp16_t * x, float * y, int64_t n) {
    ggml_cpu_kernels_active()->fp16_to_fp32(x, y, n);
}

void ggml_cpu_fp32_to_bf16(const float * x, ggml_bf16_t * y, int64_t n) {
    ggml_cpu_kernels_active()->fp32_to_bf16(x, y, n);
}

void ggml_cpu_bf16_to_fp32(const ggml_bf16_t * x, float * y, int64_t n) {
    ggml_cpu_kernels_active()->bf16_to_fp32(x, y, n);
}
