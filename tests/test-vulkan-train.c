// test-vulkan-train: training on the Vulkan device through ggml-opt. A small
// MLP (2-16-16-3, ReLU, cross-entropy, a broadcast bias) is trained from the
// same weights on the same batches, in the same order, once on Vulkan0 and
// once on the CPU, with AdamW and with SGD. Checked: the whole training
// graph (forward, backward, loss, accuracy, optimizer step) runs on the
// device in one split, nothing falls back to the CPU; the losses of every
// epoch and the trained weights agree with the CPU's (which test-train
// checks against double-precision references); the loss falls. Exits 77
// (skipped) when there is no Vulkan device.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-opt.h"
#include "testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N_IN     2
#define N_HIDDEN 16
#define N_OUT    3
#define N_DATA   384
#define N_BATCH  32
#define N_EPOCH  3

struct run_result {
    double loss[N_EPOCH];
    float  w[3][N_HIDDEN * N_HIDDEN];
    float  b[3][N_HIDDEN];
    int    n_splits;
    bool   ok;
};

static float frand(unsigned * state) {
    *state = *state * 1664525u + 1013904223u;
    return (float) ((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

// three classes by the angle of the point, a little overlapping
static void make_data(ggml_opt_dataset_t ds) {
    float * x = ggml_get_data_f32(ggml_opt_dataset_data(ds));
    float * y = ggml_get_data_f32(ggml_opt_dataset_labels(ds));
    unsigned s = 7;
    for (int i = 0; i < N_DATA; i++) {
        const float a = frand(&s), b = frand(&s);
        x[i * N_IN + 0] = a;
        x[i * N_IN + 1] = b;
        const double ang = atan2((double) b, (double) a) + 0.1 * (double) frand(&s);
        const int c = (int) floor((ang + 3.14159265358979323846) / (2.0 * 3.14159265358979323846 / N_OUT)) % N_OUT;
        for (int k = 0; k < N_OUT; k++) {
            y[i * N_OUT + k] = k == c ? 1.0f : 0.0f;
        }
    }
}

static struct ggml_opt_optimizer_params opt_pars(void * userdata) {
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.adamw.alpha = 0.01f;
    p.sgd.alpha   = 0.1f;
    (void) userdata;
    return p;
}

static void train(ggml_backend_t backend, ggml_backend_t cpu, enum ggml_opt_optimizer_type optimizer, struct run_result * r) {
    memset(r, 0, sizeof(*r));
    const int64_t sizes[4] = { N_IN, N_HIDDEN, N_HIDDEN, N_OUT };
    struct ggml_init_params ps = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_init_params pc = { 64 * ggml_tensor_overhead() + 3 * ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true), NULL, true };
    struct ggml_context * ctx_static  = ggml_init(ps);
    struct ggml_context * ctx_compute = ggml_init(pc);
    struct ggml_tensor * w[3], * b[3];
    for (int l = 0; l < 3; l++) {
        w[l] = ggml_new_tensor_2d(ctx_static, GGML_TYPE_F32, sizes[l], sizes[l + 1]);
        b[l] = ggml_new_tensor_1d(ctx_static, GGML_TYPE_F32, sizes[l + 1]);
        ggml_set_param(w[l]);
        ggml_set_param(b[l]);
    }
    struct ggml_tensor * input = ggml_new_tensor_2d(ctx_static, GGML_TYPE_F32, N_IN, N_BATCH);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx_static, backend);
    CHECK(buf != NULL);
    unsigned s = 1234;
    for (int l = 0; l < 3; l++) {
        float tmp[N_HIDDEN * N_HIDDEN];
        for (int64_t i = 0; i < ggml_nelements(w[l]); i++) {
            tmp[i] = frand(&s) * (float) sqrt(3.0 / (double) sizes[l]);
        }
        ggml_backend_tensor_set(w[l], tmp, 0, ggml_nbytes(w[l]));
        for (int64_t i = 0; i < ggml_nelements(b[l]); i++) {
            tmp[i] = 0.1f * frand(&s);
        }
        ggml_backend_tensor_set(b[l], tmp, 0, ggml_nbytes(b[l]));
    }
    struct ggml_tensor * h = input;
    for (int l = 0; l < 3; l++) {
        h = ggml_add(ctx_compute, ggml_mul_mat(ctx_compute, w[l], h), b[l]);
        if (l < 2) {
            h = ggml_relu(ctx_compute, h);
        }
    }
    ggml_backend_t backends[2] = { backend, cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backend == cpu ? &cpu : backends, NULL, backend == cpu ? 1 : 2,
                                                        GGML_DEFAULT_GRAPH_SIZE, false, true);
    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, N_IN, N_OUT, N_DATA, 1);
    make_data(ds);
    struct ggml_opt_params params = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    params.ctx_compute  = ctx_compute;
    params.inputs       = input;
    params.outputs      = h;
    params.get_opt_pars = opt_pars;
    params.optimizer    = optimizer;
    ggml_opt_context_t opt = ggml_opt_init(params);
    CHECK(opt != NULL);
    ggml_opt_result_t result = ggml_opt_result_init();
    for (int e = 0; e < N_EPOCH && opt != NULL; e++) {
        ggml_opt_result_reset(result);
        ggml_opt_epoch(opt, ds, result, NULL, N_DATA, NULL, NULL); // no shuffling: the same batches on both
        ggml_opt_result_loss(result, &r->loss[e], NULL);
    }
    r->n_splits = ggml_backend_sched_get_n_splits(sched);
    for (int l = 0; l < 3; l++) {
        ggml_backend_tensor_get(w[l], r->w[l], 0, ggml_nbytes(w[l]));
        ggml_backend_tensor_get(b[l], r->b[l], 0, ggml_nbytes(b[l]));
    }
    r->ok = opt != NULL && buf != NULL;
    ggml_opt_result_free(result);
    ggml_opt_free(opt);
    ggml_opt_dataset_free(ds);
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx_compute);
    ggml_free(ctx_static);
}

static void compare(enum ggml_opt_optimizer_type optimizer, ggml_backend_t vk, ggml_backend_t cpu) {
    static struct run_result on_vk, on_cpu;
    train(vk, cpu, optimizer, &on_vk);
    train(cpu, cpu, optimizer, &on_cpu);
    CHECK(on_vk.ok && on_cpu.ok);
    CHECK_MSG(on_vk.n_splits == 1, "%d splits: some training op ran on the CPU", on_vk.n_splits);
    CHECK_MSG(on_vk.loss[N_EPOCH - 1] < on_vk.loss[0], "loss %g -> %g", on_vk.loss[0], on_vk.loss[N_EPOCH - 1]);
    for (int e = 0; e < N_EPOCH; e++) {
        CHECK_MSG(fabs(on_vk.loss[e] - on_cpu.loss[e]) < 1e-5 * (1.0 + fabs(on_cpu.loss[e])),
                  "epoch %d: loss %.7f on Vulkan, %.7f on the CPU", e, on_vk.loss[e], on_cpu.loss[e]);
    }
    double worst = 0.0;
    for (int l = 0; l < 3; l++) {
        for (int i = 0; i < N_HIDDEN * N_HIDDEN; i++) {
            worst = fmax(worst, fabs((double) on_vk.w[l][i] - (double) on_cpu.w[l][i]));
        }
        for (int i = 0; i < N_HIDDEN; i++) {
            worst = fmax(worst, fabs((double) on_vk.b[l][i] - (double) on_cpu.b[l][i]));
        }
    }
    printf("%s: losses %.5f -> %.5f, weights within %.2e of the CPU's\n", optimizer == GGML_OPT_OPTIMIZER_TYPE_SGD ? "SGD" : "AdamW",
           on_vk.loss[0], on_vk.loss[N_EPOCH - 1], worst);
    CHECK_MSG(worst < 1e-5, "%s: trained weights differ from the CPU's by %g",
              optimizer == GGML_OPT_OPTIMIZER_TYPE_SGD ? "SGD" : "AdamW", worst);
}

int main(void) {
    ggml_backend_load_all();
    ggml_backend_dev_t vk_dev  = ggml_backend_dev_by_name("Vulkan0");
    ggml_backend_dev_t cpu_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (vk_dev == NULL || cpu_dev == NULL) {
        fprintf(stderr, "test-vulkan-train: no Vulkan device (or no CPU backend): skipped\n");
        return 77;
    }
    ggml_backend_t vk  = ggml_backend_dev_init(vk_dev, NULL);
    ggml_backend_t cpu = ggml_backend_dev_init(cpu_dev, NULL);
    CHECK(vk != NULL && cpu != NULL);
    if (vk != NULL && cpu != NULL) {
        compare(GGML_OPT_OPTIMIZER_TYPE_ADAMW, vk, cpu);
        compare(GGML_OPT_OPTIMIZER_TYPE_SGD, vk, cpu);
    }
    ggml_backend_free(vk);
    ggml_backend_free(cpu);
    return TEST_RESULT();
}
