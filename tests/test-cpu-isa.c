// test-cpu-isa.c: the CPU backend's kernel variants (cpu-variant.h).
//
//   - ggml_cpu_has_* agree with the compiler's own CPU detection
//     (__builtin_cpu_supports), not with what the build targets;
//   - with GGML_CPU_ISA unset, set to each level of the build and set to a
//     name that is no level, a child process of this test reports the variant
//     expected from the CPU's features and the cap (the registry's feature
//     list "ISA" and the device description), an unknown name gives a log
//     line listing the valid ones, and the variant computes matrix products
//     (F32, F16, BF16, Q8_0, Q4_0, Q4_K weights; one and several columns)
//     and softmax as a double-precision reference does;
//   - the weight streams' prefetch distance (the feature "STREAM_PREFETCH"):
//     none on Zen 4, 2048 bytes on other CPUs, what GGML_CPU_STREAM_AHEAD
//     says (rounded up to whole lines) when it is a byte count of 0 to 64 KiB,
//     and a warning and the CPU's default when it is not; the products
//     computed right with each;
//   - the lead of a waiting thread (the feature "STREAM_LEAD", stream-lead.c):
//     256 KiB, what GGML_CPU_STREAM_LEAD says when it is a byte count of 0
//     to 16 MiB, a warning and the default when it is not; a feed-forward
//     block (fused gate and up products, their GLU, the down product: a
//     barrier before each product) computed by 2 threads as by 1, bit for bit,
//     and within 1% of the terms' magnitude of a double-precision reference;
//     a generated token's attention (a product, flash attention over a KV
//     cache whose K and V rows the waiting thread asks for, a product), its
//     mask given or computed by a node after the first product, 2 threads as
//     1 bit for bit and the attention within 1e-5 of a double reference.
//
// TEST_CPU_VARIANTS is the build's list of variants, lowest first.

#include "cpu-testing.h"
#include "run-program.h"
#include "ggml-backend.h"

#ifndef TEST_CPU_VARIANTS
#error "TEST_CPU_VARIANTS: the variants of the build, space-separated"
#endif

//
// what the kernels in use are, from the registry
//

static const char * feature_value(const char * name) {
    ggml_backend_reg_t reg = ggml_backend_cpu_reg();
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_get_features");
    if (sym == NULL) {
        return NULL;
    }
    ggml_backend_get_features_t get_features;
    memcpy(&get_features, &sym, sizeof(sym));
    for (const struct ggml_backend_feature * f = get_features(reg); f->name != NULL; f++) {
        if (strcmp(f->name, name) == 0) {
            return f->value;
        }
    }
    return NULL;
}

static const char * active_isa(void) {
    return feature_value("ISA");
}

//
// child: report the variant, then compute
//

struct mm_ref {
    const struct ggml_tensor * w; // [k, m]
    const struct ggml_tensor * x; // [k, n]
};

static double mm_ref_at(int64_t i0, int64_t i1, int64_t i2, int64_t i3, void * user) {
    (void) i2; (void) i3;
    const struct mm_ref * r = (const struct mm_ref *) user;
    double sum = 0.0;
    for (int64_t k = 0; k < r->w->ne[0]; k++) {
        sum += tt_get(r->w, k, i0, 0, 0) * tt_get(r->x, k, i1, 0, 0);
    }
    return sum;
}

static double softmax_ref_at(int64_t i0, int64_t i1, int64_t i2, int64_t i3, void * user) {
    (void) i2; (void) i3;
    const struct ggml_tensor * a = (const struct ggml_tensor *) user;
    double mx = -INFINITY;
    for (int64_t j = 0; j < a->ne[0]; j++) {
        mx = fmax(mx, tt_get(a, j, i1, 0, 0));
    }
    double sum = 0.0;
    for (int64_t j = 0; j < a->ne[0]; j++) {
        sum += exp(tt_get(a, j, i1, 0, 0) - mx);
    }
    return exp(tt_get(a, i0, i1, 0, 0) - mx) / sum;
}

static void child_check_mul_mat(enum ggml_type type, int64_t n) {
    struct ggml_context * ctx = tt_ctx_new(16);
    const int64_t k = 512, m = 37;
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, k, m);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, n);
    tt_fill_uniform(w, -1.0, 1.0, 11 + (uint64_t) type);
    tt_fill_uniform(x, -1.0, 1.0, 12 + (uint64_t) n);
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    CHECK(tt_compute(ctx, y, 2) == GGML_STATUS_SUCCESS);
    // the activations are rounded to the weights' dot type (F16, BF16, Q8)
    const double rtol = type == GGML_TYPE_F32 ? 1e-4 : 2e-2;
    struct mm_ref r = { w, x };
    const double err = tt_max_err(y, mm_ref_at, &r, rtol * 8.0, rtol);
    CHECK_MSG(err <= 1.0, "mul_mat %s, %d columns: error %.3g of tolerance", ggml_type_name(type), (int) n, err);
    ggml_free(ctx);
}

static void child_check_softmax(void) {
    struct ggml_context * ctx = tt_ctx_new(16);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1003, 3);
    tt_fill_uniform(a, -20.0, 20.0, 5);
    struct ggml_tensor * y = ggml_soft_max(ctx, a);
    CHECK(tt_compute(ctx, y, 2) == GGML_STATUS_SUCCESS);
    const double err = tt_max_err(y, softmax_ref_at, a, 1e-9, 1e-5);
    CHECK_MSG(err <= 1.0, "soft_max: error %.3g of tolerance", err);
    ggml_free(ctx);
}

// the feed-forward block of child_check_ffn in double, from the tensors'
// values (the weights dequantized): down (silu(gate h) * up h), h = x's RMS
// norm times norm; the worst error of y against it, relative to the sum of
// the last product's |terms| (the activations are rounded to Q8_K and Q8_0)
static double ffn_ref_err(const struct ggml_tensor * x, const struct ggml_tensor * norm, const struct ggml_tensor * gate,
                          const struct ggml_tensor * up, const struct ggml_tensor * down, const struct ggml_tensor * y) {
    const int64_t k = x->ne[0], f = gate->ne[1];
    double * h = (double *) malloc((size_t) k * sizeof(double));
    double * a = (double *) malloc((size_t) f * sizeof(double));
    if (h == NULL || a == NULL) {
        free(h);
        free(a);
        return INFINITY;
    }
    double ss = 0.0;
    for (int64_t i = 0; i < k; i++) {
        ss += tt_get(x, i, 0, 0, 0) * tt_get(x, i, 0, 0, 0);
    }
    const double rs = 1.0 / sqrt(ss / (double) k + 1e-6);
    for (int64_t i = 0; i < k; i++) {
        h[i] = tt_get(x, i, 0, 0, 0) * rs * tt_get(norm, i, 0, 0, 0);
    }
    for (int64_t j = 0; j < f; j++) {
        double g = 0.0, u = 0.0;
        for (int64_t i = 0; i < k; i++) {
            g += tt_get(gate, i, j, 0, 0) * h[i];
            u += tt_get(up, i, j, 0, 0) * h[i];
        }
        a[j] = g / (1.0 + exp(-g)) * u;
    }
    double worst = 0.0;
    for (int64_t i = 0; i < k; i++) {
        double ref = 0.0, scale = 0.0;
        for (int64_t j = 0; j < f; j++) {
            ref   += tt_get(down, j, i, 0, 0) * a[j];
            scale += fabs(tt_get(down, j, i, 0, 0) * a[j]);
        }
        worst = fmax(worst, fabs(tt_get(y, i, 0, 0, 0) - ref) / (scale + 1e-6));
    }
    free(h);
    free(a);
    return worst;
}

// a feed-forward block of one column, 2 threads against 1 (bit for bit) and
// against a double reference: the threads waiting at the barriers before
// the products ask for their weights
static void child_check_ffn(void) {
    const int64_t k = 512, f = 1024;
    float * out[2] = { NULL, NULL };
    for (int t = 0; t < 2; t++) {
        struct ggml_context * ctx = tt_ctx_new(16);
        struct ggml_tensor * norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, k);
        struct ggml_tensor * gate = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_K, k, f);
        struct ggml_tensor * up   = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_K, k, f);
        struct ggml_tensor * down = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, f, k);
        struct ggml_tensor * x    = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, 1);
        tt_fill_uniform(norm, 0.5, 1.5, 20);
        tt_fill_uniform(gate, -1.0, 1.0, 21);
        tt_fill_uniform(up, -1.0, 1.0, 22);
        tt_fill_uniform(down, -1.0, 1.0, 23);
        tt_fill_uniform(x, -1.0, 1.0, 24);
        struct ggml_tensor * h = ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-6f), norm);
        struct ggml_tensor * y = ggml_mul_mat(ctx, down, ggml_swiglu_split(ctx, ggml_mul_mat(ctx, gate, h), ggml_mul_mat(ctx, up, h)));
        CHECK(tt_compute(ctx, y, t + 1) == GGML_STATUS_SUCCESS);
        const double err = ffn_ref_err(x, norm, gate, up, down, y);
        CHECK_MSG(err <= 1e-2, "a feed-forward block, %d threads: error %.3g of the terms' magnitude", t + 1, err);
        out[t] = (float *) malloc((size_t) k * sizeof(float));
        if (out[t] != NULL) {
            memcpy(out[t], y->data, (size_t) k * sizeof(float));
        }
        ggml_free(ctx);
    }
    CHECK_MSG(out[0] != NULL && out[1] != NULL && memcmp(out[0], out[1], (size_t) k * sizeof(float)) == 0,
              "a feed-forward block: 2 threads differ from 1");
    free(out[0]);
    free(out[1]);
}

// the worst error of an attention's output (fa: [D, H, 1]) against a double
// reference from its inputs' values (q: [D, 1, H]; K and V rows of H/HKV heads
// each; the mask's first row: -INF keys take no part), relative to the row's
// largest |value| of V
static double attn_ref_err(const struct ggml_tensor * q, const struct ggml_tensor * k, const struct ggml_tensor * v,
                           const struct ggml_tensor * mask, const struct ggml_tensor * fa, double scale) {
    const int64_t D = q->ne[0], H = q->ne[2], n_kv = k->ne[1], G = H / k->ne[2];
    double * w = (double *) malloc((size_t) n_kv * sizeof(double));
    if (w == NULL) {
        return INFINITY;
    }
    double worst = 0.0;
    for (int64_t h = 0; h < H; h++) {
        double mx = -INFINITY;
        for (int64_t j = 0; j < n_kv; j++) {
            const double m = tt_get(mask, j, 0, 0, 0);
            double dot = 0.0;
            for (int64_t d = 0; d < D; d++) {
                dot += tt_get(q, d, 0, h, 0) * tt_get(k, d, j, h / G, 0);
            }
            w[j] = isinf(m) ? -INFINITY : dot * scale + m;
            mx = fmax(mx, w[j]);
        }
        double sum = 0.0;
        for (int64_t j = 0; j < n_kv; j++) {
            w[j] = isinf(w[j]) ? 0.0 : exp(w[j] - mx);
            sum += w[j];
        }
        for (int64_t d = 0; d < D; d++) {
            double ref = 0.0, vmax = 0.0;
            for (int64_t j = 0; j < n_kv; j++) {
                ref += w[j] / sum * tt_get(v, d, j, h / G, 0);
                vmax = fmax(vmax, fabs(tt_get(v, d, j, h / G, 0)));
            }
            worst = fmax(worst, fabs(tt_get(fa, d, h, 0, 0) - ref) / (vmax + 1e-6));
        }
    }
    free(w);
    return worst;
}

// A generated token's attention: q from a product, flash attention over a KV
// cache (the heads of a key side by side; 21 of 64 keys live, the rest -INF),
// the output product: 2 threads against 1 (bit for bit), the attention
// against a double reference. The thread waiting after the q product asks
// for the live K and V rows (and the output product's weights). With
// mask_in_graph the F16 mask is a node computed after the q product (a cast
// of an F32 mask, as llama.cpp makes it): the waiting thread then must not
// read it, and asks for nothing of the attention.
static void child_check_attention(bool mask_in_graph) {
    const int64_t E = 256, D = 64, H = 4, HKV = 2, n_kv = 64, live = 21;
    const float scale = 0.125f;
    float * out[2] = { NULL, NULL };
    for (int t = 0; t < 2; t++) {
        struct ggml_context * ctx = tt_ctx_new(16);
        struct ggml_tensor * x  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, E, 1);
        struct ggml_tensor * wq = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, E, D * H);
        struct ggml_tensor * wo = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_K, D * H, E);
        struct ggml_tensor * kc = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, D * HKV, n_kv);
        struct ggml_tensor * vc = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, D * HKV, n_kv);
        struct ggml_tensor * m32 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_kv, 64);
        tt_fill_uniform(x, -1.0, 1.0, 30);
        tt_fill_uniform(wq, -1.0, 1.0, 31);
        tt_fill_uniform(wo, -1.0, 1.0, 32);
        tt_fill_uniform(kc, -1.0, 1.0, 33);
        tt_fill_uniform(vc, -1.0, 1.0, 34);
        for (int64_t i1 = 0; i1 < m32->ne[1]; i1++) {
            for (int64_t j = 0; j < n_kv; j++) {
                ((float *) m32->data)[i1 * n_kv + j] = j < live ? 0.0f : -INFINITY;
            }
        }
        struct ggml_tensor * mask;
        if (mask_in_graph) {
            mask = ggml_cast(ctx, m32, GGML_TYPE_F16);
        } else {
            mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, n_kv, 64);
            ggml_cpu_fp32_to_fp16((const float *) m32->data, (ggml_fp16_t *) mask->data, ggml_nelements(m32));
        }
        struct ggml_tensor * k = ggml_view_3d(ctx, kc, D, n_kv, HKV, kc->nb[1], ggml_row_size(GGML_TYPE_F16, D), 0);
        struct ggml_tensor * v = ggml_view_3d(ctx, vc, D, n_kv, HKV, vc->nb[1], ggml_row_size(GGML_TYPE_F16, D), 0);
        struct ggml_tensor * q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, wq, x), D, 1, H);
        struct ggml_tensor * fa = ggml_flash_attn_ext(ctx, q, k, v, mask, scale, 0.0f, 0.0f);
        struct ggml_tensor * y = ggml_mul_mat(ctx, wo, ggml_reshape_2d(ctx, fa, D * H, 1));
        CHECK(tt_compute(ctx, y, t + 1) == GGML_STATUS_SUCCESS);
        const double err = attn_ref_err(q, k, v, mask, fa, scale);
        CHECK_MSG(err <= 1e-5, "an attention (mask %s), %d threads: error %.3g of V's magnitude",
                  mask_in_graph ? "computed" : "given", t + 1, err);
        out[t] = (float *) malloc((size_t) E * sizeof(float));
        if (out[t] != NULL) {
            memcpy(out[t], y->data, (size_t) E * sizeof(float));
        }
        ggml_free(ctx);
    }
    CHECK_MSG(out[0] != NULL && out[1] != NULL && memcmp(out[0], out[1], (size_t) E * sizeof(float)) == 0,
              "an attention (mask %s): 2 threads differ from 1", mask_in_graph ? "computed" : "given");
    free(out[0]);
    free(out[1]);
}

static int child_main(void) {
    const char * isa = active_isa();
    const char * ahead = feature_value("STREAM_PREFETCH");
    const char * lead = feature_value("STREAM_LEAD");
    printf("ISA=%s\n", isa ? isa : "(none)");
    printf("STREAM_PREFETCH=%s\n", ahead ? ahead : "(none)");
    printf("STREAM_LEAD=%s\n", lead ? lead : "(none)");
    printf("DESCRIPTION=%s\n", ggml_backend_dev_description(ggml_backend_reg_dev_get(ggml_backend_cpu_reg(), 0)));
    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        child_check_mul_mat(types[i], 1);
        child_check_mul_mat(types[i], 7);
    }
    child_check_softmax();
    child_check_ffn();
    child_check_attention(false);
    child_check_attention(true);
    return TEST_RESULT();
}

//
// parent: what the CPU has, and each level in a child
//

#define MAX_VARIANTS 16

static int split_variants(char * list, char ** names) {
    int n = 0;
    for (char * tok = strtok(list, " "); tok != NULL && n < MAX_VARIANTS; tok = strtok(NULL, " ")) {
        names[n++] = tok;
    }
    return n;
}

#if defined(__x86_64__) && defined(__GNUC__)

#include <cpuid.h>

// AVX-VNNI: CPUID leaf 7 subleaf 1, EAX bit 4 (clang 14's __builtin_cpu_supports
// does not know it); AVX2 already says the OS saves the YMM registers
static bool cpu_has_avx_vnni(void) {
    unsigned int a, b, c, d;
    if (__get_cpuid_max(0, NULL) < 7) {
        return false;
    }
    __cpuid_count(7, 0, a, b, c, d);
    if (a < 1) {
        return false;
    }
    __cpuid_count(7, 1, a, b, c, d);
    return (a & (1u << 4)) != 0 && __builtin_cpu_supports("avx2");
}

// Zen 4: AMD family 19h, models 10h-1Fh, 60h-7Fh, A0h-AFh (CPUID leaf 1)
static bool cpu_is_zen4(void) {
    __builtin_cpu_init();
    if (!__builtin_cpu_is("amd")) {
        return false;
    }
    unsigned int a, b, c, d;
    __cpuid(1, a, b, c, d);
    const unsigned int family = ((a >> 8) & 0xF) + ((a >> 20) & 0xFF);
    const unsigned int model  = ((a >> 4) & 0xF) | ((a >> 12) & 0xF0);
    return family == 0x19 && ((model >= 0x10 && model <= 0x1F) || (model >= 0x60 && model <= 0x7F) ||
                              (model >= 0xA0 && model <= 0xAF));
}

static void check_has_matches_cpu(void) {
    __builtin_cpu_init();
    CHECK_EQ_INT(ggml_cpu_has_sse3(),        __builtin_cpu_supports("sse3")       != 0);
    CHECK_EQ_INT(ggml_cpu_has_ssse3(),       __builtin_cpu_supports("ssse3")      != 0);
    CHECK_EQ_INT(ggml_cpu_has_avx(),         __builtin_cpu_supports("avx")        != 0);
    CHECK_EQ_INT(ggml_cpu_has_avx2(),        __builtin_cpu_supports("avx2")       != 0);
    CHECK_EQ_INT(ggml_cpu_has_fma(),         __builtin_cpu_supports("fma")        != 0);
    CHECK_EQ_INT(ggml_cpu_has_bmi2(),        __builtin_cpu_supports("bmi2")       != 0);
    CHECK_EQ_INT(ggml_cpu_has_avx512(),      __builtin_cpu_supports("avx512f")    != 0);
    CHECK_EQ_INT(ggml_cpu_has_avx512_vbmi(), __builtin_cpu_supports("avx512vbmi") != 0);
    CHECK_EQ_INT(ggml_cpu_has_avx512_vnni(), __builtin_cpu_supports("avx512vnni") != 0);
    CHECK_EQ_INT(ggml_cpu_has_avx512_bf16(), __builtin_cpu_supports("avx512bf16") != 0);
    CHECK_EQ_INT(ggml_cpu_has_avx_vnni(),    cpu_has_avx_vnni());
}

// whether the CPU runs the variant of that level (the levels of CMakeLists.txt)
static bool cpu_runs_level(const char * level) {
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512cd");
    const bool avx512_vnni = avx512 && __builtin_cpu_supports("avx512vnni");
    if (strcmp(level, "sse2") == 0)             return true;
    if (strcmp(level, "avx2") == 0)             return avx2;
    if (strcmp(level, "avx2_vnni") == 0)        return avx2 && cpu_has_avx_vnni();
    if (strcmp(level, "avx512") == 0)           return avx512;
    if (strcmp(level, "avx512_vnni") == 0)      return avx512_vnni;
    if (strcmp(level, "avx512_vnni_bf16") == 0) {
        return avx512_vnni && __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512vbmi");
    }
    return true; // native, portable: the only variant of their builds
}

#else

static bool cpu_is_zen4(void) {
    return false;
}

static void check_has_matches_cpu(void) {
}

static bool cpu_runs_level(const char * level) {
    (void) level;
    return true;
}

#endif

// the variant expected under the cap (index into names; n: no cap)
static const char * expected_variant(char ** names, int n, int cap) {
    const char * best = names[0];
    for (int i = 0; i < n && i <= cap; i++) {
        if (cpu_runs_level(names[i])) {
            best = names[i];
        }
    }
    return best;
}

// runs the child with the environment's var = value (NULL: unset), into r;
// false when it could not start
static bool run_child_with(const char * self, const char * var, const char * value, struct program_result * r) {
    if (value != NULL) {
        setenv(var, value, 1);
    } else {
        unsetenv(var);
    }
    char * argv[] = { (char *) self, (char *) "--child", NULL };
    const bool started = run_program(argv, 0, r);
    unsetenv(var);
    CHECK_MSG(started, "%s=%s: the child did not start", var, value ? value : "(unset)");
    return started;
}

// runs the child with GGML_CPU_ISA = isa (NULL: unset); checks it computed
// right and reported the expected variant
static void run_child(const char * self, const char * isa, const char * expect, const char * expect_in_output) {
    static struct program_result r;
    if (!run_child_with(self, "GGML_CPU_ISA", isa, &r)) {
        return;
    }
    char line[128];
    snprintf(line, sizeof(line), "ISA=%s\n", expect);
    char desc[128];
    snprintf(desc, sizeof(desc), "(%s)\n", expect);
    const char * d = strstr(r.output, "DESCRIPTION=");
    CHECK_MSG(r.exited && r.status == 0, "GGML_CPU_ISA=%s: the child failed:\n%s", isa ? isa : "(unset)", r.output);
    CHECK_MSG(strstr(r.output, line) != NULL, "GGML_CPU_ISA=%s: expected %s:\n%s", isa ? isa : "(unset)", expect, r.output);
    CHECK_MSG(d != NULL && strstr(d, desc) != NULL, "GGML_CPU_ISA=%s: the description does not name %s:\n%s",
              isa ? isa : "(unset)", expect, r.output);
    if (expect_in_output != NULL) {
        CHECK_MSG(strstr(r.output, expect_in_output) != NULL, "GGML_CPU_ISA=%s: no \"%s\" in:\n%s",
                  isa ? isa : "(unset)", expect_in_output, r.output);
    }
    char ending[64];
    printf("GGML_CPU_ISA=%-17s -> %s (%s)\n", isa ? isa : "(unset)", expect, program_ending(&r, ending, sizeof(ending)));
}

// runs the child with the byte count var (GGML_CPU_STREAM_AHEAD or
// GGML_CPU_STREAM_LEAD) = value (NULL: unset); checks that it computed right,
// reported the bytes expected as the feature named and, where warn is given,
// logged it
static void run_child_bytes(const char * self, const char * var, const char * feature, const char * value,
                            const char * expect, const char * warn) {
    static struct program_result r;
    if (!run_child_with(self, var, value, &r)) {
        return;
    }
    const char * v = value ? value : "(unset)";
    char line[64];
    snprintf(line, sizeof(line), "%s=%s\n", feature, expect);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "%s=", var);
    CHECK_MSG(r.exited && r.status == 0, "%s=%s: the child failed:\n%s", var, v, r.output);
    CHECK_MSG(strstr(r.output, line) != NULL, "%s=%s: expected %s:\n%s", var, v, expect, r.output);
    const bool warned = strstr(r.output, prefix) != NULL;
    CHECK_MSG(warned == (warn != NULL) && (warn == NULL || strstr(r.output, warn) != NULL),
              "%s=%s: %s:\n%s", var, v, warn ? "no warning" : "a warning", r.output);
    char ending[64];
    printf("%s=%-9s -> %s (%s)\n", var, v, expect, program_ending(&r, ending, sizeof(ending)));
}

static void run_child_ahead(const char * self, const char * value, const char * expect, const char * warn) {
    run_child_bytes(self, "GGML_CPU_STREAM_AHEAD", "STREAM_PREFETCH", value, expect, warn);
}

static void run_child_lead(const char * self, const char * value, const char * expect, const char * warn) {
    run_child_bytes(self, "GGML_CPU_STREAM_LEAD", "STREAM_LEAD", value, expect, warn);
}

int main(int argc, char ** argv) {
    if (argc > 1 && strcmp(argv[1], "--child") == 0) {
        return child_main();
    }

    check_has_matches_cpu();

    char list[256];
    snprintf(list, sizeof(list), "%s", TEST_CPU_VARIANTS);
    char * names[MAX_VARIANTS];
    const int n = split_variants(list, names);
    CHECK(n > 0);
    if (n == 0) {
        return TEST_RESULT();
    }

    // the valid names, as the log line lists them
    char valid[256] = "valid: ";
    for (int i = 0; i < n; i++) {
        strncat(valid, names[i], sizeof(valid) - strlen(valid) - 3);
        if (i + 1 < n) {
            strncat(valid, ", ", sizeof(valid) - strlen(valid) - 1);
        }
    }

    run_child(argv[0], NULL, expected_variant(names, n, n), NULL);
    for (int i = 0; i < n; i++) {
        run_child(argv[0], names[i], expected_variant(names, n, i), NULL);
    }
    run_child(argv[0], "avx9000", expected_variant(names, n, n), valid);
    run_child(argv[0], "", expected_variant(names, n, n), NULL);

    const char * ahead = cpu_is_zen4() ? "0" : "2048";
    run_child_ahead(argv[0], NULL, ahead, NULL);
    run_child_ahead(argv[0], "", ahead, NULL);
    run_child_ahead(argv[0], "0", "0", NULL);
    run_child_ahead(argv[0], "4096", "4096", NULL);
    run_child_ahead(argv[0], "100", "128", NULL);
    run_child_ahead(argv[0], "65536", "65536", NULL);
    run_child_ahead(argv[0], "65537", ahead, "not a byte count");
    run_child_ahead(argv[0], "-64", ahead, "not a byte count");
    run_child_ahead(argv[0], "2k", ahead, "not a byte count");
    run_child_ahead(argv[0], "99999999999999999999999", ahead, "not a byte count");

    run_child_lead(argv[0], NULL, "262144", NULL);
    run_child_lead(argv[0], "0", "0", NULL);
    run_child_lead(argv[0], "100", "128", NULL);
    run_child_lead(argv[0], "16777216", "16777216", NULL);
    run_child_lead(argv[0], "16777217", "262144", "not a byte count");
    run_child_lead(argv[0], "1M", "262144", "not a byte count");
    return TEST_RESULT();
}
