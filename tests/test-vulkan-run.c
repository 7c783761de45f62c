// test-vulkan-run: ggml-run's tiny synthetic model on the Vulkan device
// gives the CPU's greedy tokens and logits within tolerance: all layers on
// the device, half of them (the scheduler then splits the graph between
// Vulkan and the CPU), fused and unfused attention, F16 and F32 caches.
// With K-quant weights (Q4_K, Q6_K) the CPU rounds its activations to Q8_K
// and the device does not: the device decodes the CPU's tokens (teacher
// forcing) and its logits must stay within a tolerance of the CPU's.
// Exits 77 (skipped) when there is no Vulkan device.

#include "context.h"
#include "sampling.h"
#include "synthetic.h"
#include "ggml-vulkan.h"
#include "testing.h"

#include <stdlib.h>
#include <string.h>

enum { N_PROMPT = 9, N_GEN = 8 };

struct t_result {
    int32_t tokens[N_PROMPT + N_GEN];
    float * logits;  // [N_GEN][n_vocab]: the logits each generated token was chosen from
    int     n_splits;
};

// greedy generation, or with force the tokens of force (its logits still recorded)
static bool generate_forced(const struct run_model * model, int flash_attn, enum ggml_type kv_type, const int32_t * force,
                            struct t_result * out) {
    const int64_t n_vocab = model->hp.n_vocab;
    struct run_context_params cp = run_context_default_params();
    cp.n_ctx      = 64;
    cp.n_threads  = 2;
    cp.flash_attn = flash_attn;
    cp.kv_type    = kv_type;
    cp.n_batch    = 4; // the prompt in three graphs of up to four tokens
    struct run_context * rc = run_context_new(model, &cp);
    if (rc == NULL) {
        return false;
    }
    for (int i = 0; i < N_PROMPT; i++) {
        out->tokens[i] = (int32_t) (300 + 37 * i) % (int32_t) n_vocab;
    }
    bool ok = run_decode(rc, out->tokens, N_PROMPT);
    for (int step = 0; ok && step < N_GEN; step++) {
        const float * logits = run_get_logits(rc, rc->n_outputs - 1);
        memcpy(out->logits + step * n_vocab, logits, (size_t) n_vocab * sizeof(float));
        out->tokens[N_PROMPT + step] = force != NULL ? force[N_PROMPT + step] : run_argmax(logits, n_vocab);
        ok = run_decode(rc, &out->tokens[N_PROMPT + step], 1);
    }
    out->n_splits = rc->n_splits;
    run_context_free(rc);
    return ok;
}

static bool generate(const struct run_model * model, int flash_attn, enum ggml_type kv_type, struct t_result * out) {
    return generate_forced(model, flash_attn, kv_type, NULL, out);
}

// the K-quant weights of type wtype: the CPU's greedy run against the device's
// logits on the same tokens (the feed-forward length 768: a multiple of 256)
static void check_quant_weights(enum ggml_type wtype, double tol) {
    struct run_synth_params sp;
    CHECK(run_synth_preset("tiny", &sp));
    sp.n_threads = 2;
    sp.n_ff = 768;
    sp.wtype = wtype;
    struct run_weight_source src_cpu;
    struct run_weight_source src_dev;
    CHECK(run_synth_source(&sp, &src_cpu) && run_synth_source(&sp, &src_dev));
    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * cpu = run_model_from_source(&src_cpu, &mp);
    mp.devices = "Vulkan0";
    struct run_model * dev = run_model_from_source(&src_dev, &mp);
    CHECK(cpu != NULL && dev != NULL);
    if (cpu != NULL && dev != NULL) {
        const int64_t n_vocab = cpu->hp.n_vocab;
        struct t_result r_cpu;
        struct t_result r_dev;
        r_cpu.logits = (float *) malloc((size_t) (N_GEN * n_vocab) * sizeof(float));
        r_dev.logits = (float *) malloc((size_t) (N_GEN * n_vocab) * sizeof(float));
        CHECK(generate(cpu, 1, GGML_TYPE_F16, &r_cpu));
        CHECK(generate_forced(dev, 1, GGML_TYPE_F16, r_cpu.tokens, &r_dev));
        double worst = 0.0;
        double range = 0.0;
        int same = 0;
        for (int step = 0; step < N_GEN; step++) {
            const float * lc = r_cpu.logits + step * n_vocab;
            const float * ld = r_dev.logits + step * n_vocab;
            same += run_argmax(ld, n_vocab) == r_cpu.tokens[N_PROMPT + step];
            for (int64_t i = 0; i < n_vocab; i++) {
                worst = fmax(worst, fabs((double) lc[i] - (double) ld[i]));
                range = fmax(range, fabs((double) lc[i]));
            }
        }
        printf("%s weights on Vulkan0: largest logit difference %.3g (logits up to %.3g), %d of %d greedy tokens the CPU's\n",
               ggml_type_name(wtype), worst, range, same, N_GEN);
        CHECK_MSG(worst <= tol, "%s weights: logits differ by %g (tol %g)", ggml_type_name(wtype), worst, tol);
        CHECK(r_dev.n_splits >= 1);
        free(r_cpu.logits);
        free(r_dev.logits);
    }
    run_model_free(dev);
    run_model_free(cpu);
}

static void compare(const char * what, const struct t_result * cpu, const struct t_result * dev, int64_t n_vocab, double tol) {
    CHECK_MSG(memcmp(cpu->tokens, dev->tokens, sizeof(cpu->tokens)) == 0, "%s: tokens differ from the CPU's", what);
    double worst = 0.0;
    for (int64_t i = 0; i < N_GEN * n_vocab; i++) {
        worst = fmax(worst, fabs((double) cpu->logits[i] - (double) dev->logits[i]));
    }
    CHECK_MSG(worst <= tol, "%s: logits differ by %g (tol %g)", what, worst, tol);
    printf("%s: %d splits, largest logit difference %.3g\n", what, dev->n_splits, worst);
}

int main(void) {
    if (ggml_backend_vk_get_device_count() == 0) {
        printf("no Vulkan device: skipped\n");
        return 77;
    }
    struct run_synth_params sp;
    CHECK(run_synth_preset("tiny", &sp));
    sp.n_threads = 2;
    // F32 weights: with Q8_0 weights the CPU rounds its activations to Q8_0
    // too (the device does not), and a random model amplifies that
    // difference by the output layer to logits apart by several units
    sp.wtype = GGML_TYPE_F32;
    struct run_weight_source src_cpu;
    struct run_weight_source src_dev;
    struct run_weight_source src_half;
    CHECK(run_synth_source(&sp, &src_cpu) && run_synth_source(&sp, &src_dev) && run_synth_source(&sp, &src_half));

    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * cpu = run_model_from_source(&src_cpu, &mp);
    mp.devices = "Vulkan0";
    struct run_model * dev = run_model_from_source(&src_dev, &mp);
    mp.n_gpu_layers = (sp.n_layer + 1) / 2;
    struct run_model * half = run_model_from_source(&src_half, &mp);
    CHECK(cpu != NULL && dev != NULL && half != NULL);
    if (cpu == NULL || dev == NULL || half == NULL) {
        return TEST_RESULT();
    }
    const int64_t n_vocab = cpu->hp.n_vocab;
    struct t_result r_cpu;
    struct t_result r_dev;
    r_cpu.logits = (float *) malloc((size_t) (N_GEN * n_vocab) * sizeof(float));
    r_dev.logits = (float *) malloc((size_t) (N_GEN * n_vocab) * sizeof(float));

    // with F32 weights and cache the devices differ in summation order only
    // (measured: 2e-6 apart); with an F16 cache the CPU also rounds q to F16
    // for the K product (measured: 2e-3)
    const struct { const char * what; int fa; enum ggml_type kv; double tol; } runs[] = {
        { "fused attention, f16 cache",   1, GGML_TYPE_F16, 1e-2 },
        { "unfused attention, f16 cache", 0, GGML_TYPE_F16, 1e-2 },
        { "unfused attention, f32 cache", 0, GGML_TYPE_F32, 1e-4 },
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        CHECK(generate(cpu, runs[i].fa, runs[i].kv, &r_cpu));
        CHECK(generate(dev, runs[i].fa, runs[i].kv, &r_dev));
        char what[128];
        snprintf(what, sizeof(what), "Vulkan0, all layers, %s", runs[i].what);
        compare(what, &r_cpu, &r_dev, n_vocab, runs[i].tol);
        CHECK(generate(half, runs[i].fa, runs[i].kv, &r_dev));
        snprintf(what, sizeof(what), "Vulkan0, -ngl %d, %s", (int) mp.n_gpu_layers, runs[i].what);
        compare(what, &r_cpu, &r_dev, n_vocab, runs[i].tol);
        CHECK(r_dev.n_splits >= 2);
    }
    free(r_cpu.logits);
    free(r_dev.logits);
    check_quant_weights(GGML_TYPE_Q4_K, 0.3); // measured: 0.115 (logits up to 3.9)
    check_quant_weights(GGML_TYPE_Q6_K, 0.3); // measured: 0.094
    run_model_free(half);
    run_model_free(dev);
    run_model_free(cpu);
    return TEST_RESULT();
}
