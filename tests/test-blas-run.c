// test-blas-run.c: ggml-run with the BLAS backend beside the CPU.
//
// - device choice: BLAS (an accelerator on host memory) helps the CPU when
//   named (-dev BLAS) and by default, holds no layers, and "none" leaves it
//   out;
// - a synthetic llama model generates the same greedy tokens with BLAS as
//   with the CPU alone, the prompt's matrix products going to BLAS (more
//   than one split) and the one-token graphs staying on the CPU. With F32
//   weights both paths compute in F32, so the tokens must be the same; with
//   Q8_0 weights the CPU rounds activations to 8 bits and BLAS does not, so
//   the logits are compared within that rounding and a token only where the
//   best two differ by more than it.

#include "context.h"
#include "devices.h"
#include "model.h"
#include "sampling.h"
#include "synthetic.h"
#include "testing.h"

#include <math.h>
#include <string.h>

#define N_PROMPT 40
#define N_GEN    8
#define N_VOCAB  400

static void test_device_choice(void) {
    ggml_backend_dev_t blas = ggml_backend_dev_by_name("BLAS");
    ggml_backend_dev_t cpu  = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    CHECK(blas != NULL && cpu != NULL);

    struct run_devices devs;
    const char * choices[] = { "BLAS", "blas", NULL };
    for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
        CHECK(run_devices_select(choices[i], &devs));
        CHECK_EQ_INT(devs.n_layer, 1);
        CHECK(devs.layer[0] == cpu);
        CHECK_EQ_INT(devs.n_helper, 1);
        CHECK(devs.n_helper == 1 && devs.helper[0] == blas);
        run_devices_free(&devs);
    }
    CHECK(run_devices_select("none", &devs));
    CHECK_EQ_INT(devs.n_layer, 1);
    CHECK_EQ_INT(devs.n_helper, 0);
    run_devices_free(&devs);
}

struct gen_result {
    int32_t tokens[N_GEN];
    float   logits[N_GEN][N_VOCAB]; // before each generated token
    int     prompt_splits;
    int     gen_splits;
};

// greedy generation after a 40-token prompt; forced: feed these tokens
// instead of the argmax (NULL: free-running)
static bool generate(enum ggml_type wtype, const char * devices, const int32_t * forced, struct gen_result * out) {
    const struct run_synth_params sp = {
        .n_embd = 64, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 128, .n_vocab = N_VOCAB,
        .n_ctx = 128, .wtype = wtype, .seed = 5, .n_threads = 1,
    };
    struct run_weight_source src;
    if (!run_synth_source(&sp, &src)) {
        return false;
    }
    struct run_model_params mp = run_model_default_params();
    mp.devices = devices;
    struct run_model * model = run_model_from_source(&src, &mp);
    if (model == NULL) {
        return false;
    }
    CHECK_EQ_INT(model->devs.n_helper, strcmp(devices, "none") == 0 ? 0 : 1);
    struct run_context_params cp = run_context_default_params();
    cp.n_ctx     = 64;
    cp.n_threads = 2;
    struct run_context * rc = run_context_new(model, &cp);
    bool ok = rc != NULL;

    int32_t prompt[N_PROMPT];
    for (int i = 0; i < N_PROMPT; i++) {
        prompt[i] = 260 + (i * 37) % 140;
    }
    ok = ok && run_decode(rc, prompt, N_PROMPT);
    if (ok) {
        out->prompt_splits = rc->n_splits;
    }
    for (int step = 0; ok && step < N_GEN; step++) {
        const float * logits = run_get_logits(rc, rc->n_outputs - 1);
        memcpy(out->logits[step], logits, sizeof(out->logits[step]));
        out->tokens[step] = run_argmax(logits, N_VOCAB);
        const int32_t next = forced != NULL ? forced[step] : out->tokens[step];
        ok = run_decode(rc, &next, 1);
        out->gen_splits = ok ? rc->n_splits : 0;
    }
    run_context_free(rc);
    run_model_free(model);
    return ok;
}

static void test_same_tokens_f32(void) {
    static struct gen_result cpu, blas;
    CHECK(generate(GGML_TYPE_F32, "none", NULL, &cpu));
    CHECK(generate(GGML_TYPE_F32, "BLAS", NULL, &blas));
    CHECK_EQ_INT(cpu.prompt_splits, 1);
    CHECK_MSG(blas.prompt_splits > 1, "the prompt graph has %d splits: BLAS took nothing", blas.prompt_splits);
    CHECK_EQ_INT(blas.gen_splits, 1); // one-token products stay on the CPU
    for (int i = 0; i < N_GEN; i++) {
        CHECK_MSG(cpu.tokens[i] == blas.tokens[i], "token %d: CPU %d, BLAS %d", i, cpu.tokens[i], blas.tokens[i]);
    }
    double worst = 0.0;
    for (int v = 0; v < N_VOCAB; v++) {
        worst = fmax(worst, fabs((double) cpu.logits[0][v] - (double) blas.logits[0][v]));
    }
    CHECK_MSG(worst <= 1e-3, "prompt logits differ by %g", worst);
}

static void test_close_q8_0(void) {
    static struct gen_result cpu, blas;
    CHECK(generate(GGML_TYPE_Q8_0, "none", NULL, &cpu));
    CHECK(generate(GGML_TYPE_Q8_0, "BLAS", cpu.tokens, &blas));
    CHECK(blas.prompt_splits > 1);
    int compared = 0;
    for (int i = 0; i < N_GEN; i++) {
        double worst = 0.0, scale = 0.0;
        for (int v = 0; v < N_VOCAB; v++) {
            worst = fmax(worst, fabs((double) cpu.logits[i][v] - (double) blas.logits[i][v]));
            scale = fmax(scale, fabs((double) cpu.logits[i][v]));
        }
        // 8-bit activations through two layers: a few percent of the logits' size
        const double tol = 0.05 * scale;
        CHECK_MSG(worst <= tol, "step %d: logits differ by %g (tol %g)", i, worst, tol);
        double second = -INFINITY;
        for (int v = 0; v < N_VOCAB; v++) {
            if (v != cpu.tokens[i]) {
                second = fmax(second, (double) cpu.logits[i][v]);
            }
        }
        if ((double) cpu.logits[i][cpu.tokens[i]] - second > 2.0 * tol) {
            CHECK_MSG(blas.tokens[i] == cpu.tokens[i], "step %d: CPU %d, BLAS %d", i, cpu.tokens[i], blas.tokens[i]);
            compared++;
        }
    }
    printf("q8_0: %d of %d tokens clear of the rounding, all the same\n", compared, N_GEN);
}

int main(void) {
    ggml_backend_load_all(); // the BLAS module, where it is one
    test_device_choice();
    test_same_tokens_f32();
    test_close_q8_0();
    return TEST_RESULT();
}
