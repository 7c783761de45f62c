// ggml-train-mlp: trains a small multilayer perceptron with ggml-opt on data
// it makes itself, reports loss, accuracy and speed, and saves the trained
// weights as GGUF.
//
// The data: points in the plane on three interleaved spiral arms (a classic
// problem no linear model solves), class = arm, with Gaussian noise. The
// network: 2 -> H -> H -> 3, ReLU, cross-entropy loss, AdamW. A fraction of
// the data is held out and the accuracy on it is the one reported and
// checked by --min-acc. With the defaults (8192 points, H = 64, 30 epochs)
// the held-out accuracy is above 95%.
//
// Written against the public headers only (ggml.h, ggml-backend.h,
// ggml-opt.h, gguf.h), so that the same source also builds against
// upstream ggml for a comparison of speed.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-opt.h"
#include "gguf.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N_CLASSES 3
#define N_INPUT   2

struct options {
    int64_t     ndata;      // points in the data set
    int64_t     nhidden;    // width of the two hidden layers
    int64_t     nbatch;     // points per batch (and per optimizer step)
    int64_t     nepoch;
    float       lr;         // AdamW learning rate
    float       val_split;  // fraction held out
    uint64_t    seed;
    int         n_threads;  // 0: the backend's default
    const char * device;    // NULL: the best device
    const char * out;       // GGUF file to write, NULL: none
    double      min_acc;    // exit with 1 if the held-out accuracy is lower
};

static void usage(const char * argv0) {
    fprintf(stderr,
            "usage: %s [options]\n"
            "  -o FILE        write the trained weights to FILE (GGUF)\n"
            "  -n N           points in the data set (default 8192)\n"
            "  -H N           hidden layer width (default 64)\n"
            "  -b N           batch size (default 128)\n"
            "  -e N           epochs (default 30)\n"
            "  --lr X         AdamW learning rate (default 0.01)\n"
            "  --val X        fraction of the data held out (default 0.25)\n"
            "  -s N           random seed (default 42)\n"
            "  -t N           CPU threads\n"
            "  -d NAME        device (default: the best one)\n"
            "  --min-acc X    fail (exit 1) if the held-out accuracy is below X (0..1)\n",
            argv0);
}

static bool parse_args(int argc, char ** argv, struct options * o) {
    for (int i = 1; i < argc; i += 2) { // options with a value
        const char * a = argv[i];
        const char * v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(argv[0]);
            exit(0);
        }
        if (v == NULL) {
            fprintf(stderr, "%s: %s needs a value\n", argv[0], a);
            return false;
        }
        char * end = NULL;
        if      (strcmp(a, "-o") == 0)        { o->out = v; }
        else if (strcmp(a, "-d") == 0)        { o->device = v; }
        else if (strcmp(a, "-n") == 0)        { o->ndata = strtoll(v, &end, 10); }
        else if (strcmp(a, "-H") == 0)        { o->nhidden = strtoll(v, &end, 10); }
        else if (strcmp(a, "-b") == 0)        { o->nbatch = strtoll(v, &end, 10); }
        else if (strcmp(a, "-e") == 0)        { o->nepoch = strtoll(v, &end, 10); }
        else if (strcmp(a, "-s") == 0)        { o->seed = strtoull(v, &end, 10); }
        else if (strcmp(a, "-t") == 0)        { o->n_threads = (int) strtol(v, &end, 10); }
        else if (strcmp(a, "--lr") == 0)      { o->lr = strtof(v, &end); }
        else if (strcmp(a, "--val") == 0)     { o->val_split = strtof(v, &end); }
        else if (strcmp(a, "--min-acc") == 0) { o->min_acc = strtod(v, &end); }
        else {
            fprintf(stderr, "%s: unknown option %s\n", argv[0], a);
            return false;
        }
        if (end != NULL && (*end != '\0' || end == v)) {
            fprintf(stderr, "%s: bad value for %s: %s\n", argv[0], a, v);
            return false;
        }
    }
    if (o->ndata <= 0 || o->nhidden <= 0 || o->nbatch <= 0 || o->nepoch <= 0 || o->lr <= 0.0f ||
        o->val_split < 0.0f || o->val_split >= 1.0f || o->n_threads < 0) {
        fprintf(stderr, "%s: sizes, epochs and the learning rate must be positive, --val in [0, 1)\n", argv[0]);
        return false;
    }
    // whole batches, and a held-out part of whole batches
    o->ndata -= o->ndata % o->nbatch;
    if (o->ndata < 2 * o->nbatch) {
        fprintf(stderr, "%s: need at least two batches of data\n", argv[0]);
        return false;
    }
    return true;
}

//
// random numbers: splitmix64 and Box-Muller
//

static uint64_t rng_next(uint64_t * s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t * s) { // in (0, 1)
    return ((double) (rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static double rng_normal(uint64_t * s) {
    return sqrt(-2.0 * log(rng_uniform(s))) * cos(6.283185307179586 * rng_uniform(s));
}

// point i of the data set: arm c = i % 3 at radius r in [0.1, 1], turned by
// 1.75 turns over the radius, plus noise; one-hot label
static void make_data(ggml_opt_dataset_t ds, uint64_t seed) {
    float * x = (float *) ggml_opt_dataset_data(ds)->data;
    float * y = (float *) ggml_opt_dataset_labels(ds)->data;
    const int64_t n = ggml_opt_dataset_ndata(ds);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        const int    c     = (int) (rng_next(&s) % N_CLASSES);
        const double r     = 0.1 + 0.9 * rng_uniform(&s);
        const double angle = 2.0 * 3.141592653589793 * (1.75 * r + (double) c / N_CLASSES);
        x[i*N_INPUT + 0] = (float) (r * cos(angle) + 0.03 * rng_normal(&s));
        x[i*N_INPUT + 1] = (float) (r * sin(angle) + 0.03 * rng_normal(&s));
        for (int k = 0; k < N_CLASSES; k++) {
            y[i*N_CLASSES + k] = k == c ? 1.0f : 0.0f;
        }
    }
}

//
// the model
//

struct model {
    struct ggml_context * ctx_static;  // weights and input (allocated here)
    struct ggml_context * ctx_compute; // everything else (allocated by ggml-opt)
    ggml_backend_buffer_t buf;
    struct ggml_tensor  * w[3];
    struct ggml_tensor  * b[3];
    struct ggml_tensor  * input;
    struct ggml_tensor  * logits;
};

static bool model_init(struct model * m, const struct options * o, ggml_backend_t backend) {
    memset(m, 0, sizeof(*m));
    struct ggml_init_params ps = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_init_params pc = { 64 * ggml_tensor_overhead() + 3 * ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, true), NULL, true };
    m->ctx_static  = ggml_init(ps);
    m->ctx_compute = ggml_init(pc);
    if (m->ctx_static == NULL || m->ctx_compute == NULL) {
        fprintf(stderr, "ggml-train-mlp: out of memory\n");
        return false;
    }
    const int64_t sizes[4] = { N_INPUT, o->nhidden, o->nhidden, N_CLASSES };
    static const char * names_w[3] = { "fc1.weight", "fc2.weight", "fc3.weight" };
    static const char * names_b[3] = { "fc1.bias", "fc2.bias", "fc3.bias" };
    for (int l = 0; l < 3; l++) {
        m->w[l] = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, sizes[l], sizes[l + 1]);
        m->b[l] = ggml_new_tensor_1d(m->ctx_static, GGML_TYPE_F32, sizes[l + 1]);
        ggml_set_name(m->w[l], names_w[l]);
        ggml_set_name(m->b[l], names_b[l]);
        ggml_set_param(m->w[l]);
        ggml_set_param(m->b[l]);
    }
    m->input = ggml_new_tensor_2d(m->ctx_static, GGML_TYPE_F32, N_INPUT, o->nbatch);
    ggml_set_name(m->input, "input");

    m->buf = ggml_backend_alloc_ctx_tensors(m->ctx_static, backend);
    if (m->buf == NULL) {
        fprintf(stderr, "ggml-train-mlp: cannot allocate the weights on %s\n", ggml_backend_name(backend));
        return false;
    }

    // He initialisation: normal with variance 2 / fan_in, zero biases
    uint64_t s = o->seed ^ 0x5EEDull;
    for (int l = 0; l < 3; l++) {
        const int64_t n = ggml_nelements(m->w[l]);
        float * tmp = malloc((size_t) n * sizeof(float));
        if (tmp == NULL) {
            fprintf(stderr, "ggml-train-mlp: out of memory\n");
            return false;
        }
        const double sd = sqrt(2.0 / (double) sizes[l]);
        for (int64_t i = 0; i < n; i++) {
            tmp[i] = (float) (sd * rng_normal(&s));
        }
        ggml_backend_tensor_set(m->w[l], tmp, 0, ggml_nbytes(m->w[l]));
        free(tmp);
        ggml_backend_tensor_memset(m->b[l], 0, 0, ggml_nbytes(m->b[l]));
    }

    struct ggml_tensor * h = m->input;
    for (int l = 0; l < 3; l++) {
        h = ggml_add(m->ctx_compute, ggml_mul_mat(m->ctx_compute, m->w[l], h), m->b[l]);
        if (l < 2) {
            h = ggml_relu(m->ctx_compute, h);
        }
    }
    m->logits = h;
    ggml_set_name(m->logits, "logits");
    return true;
}

static void model_free(struct model * m) {
    ggml_backend_buffer_free(m->buf);
    ggml_free(m->ctx_static);
    ggml_free(m->ctx_compute);
}

// writes the weights to path through a temporary file renamed into place
static bool model_save(const struct model * m, const struct options * o, const char * path) {
    struct ggml_init_params p = { 8 * ggml_tensor_overhead(), NULL, false };
    size_t bytes = 0;
    for (int l = 0; l < 3; l++) {
        bytes += ggml_nbytes(m->w[l]) + ggml_nbytes(m->b[l]) + 2 * GGML_MEM_ALIGN;
    }
    p.mem_size += bytes;
    struct ggml_context * ctx = ggml_init(p);
    struct gguf_context * gguf = gguf_init_empty();
    if (ctx == NULL || gguf == NULL) {
        fprintf(stderr, "ggml-train-mlp: out of memory\n");
        ggml_free(ctx);
        gguf_free(gguf);
        return false;
    }
    gguf_set_val_str(gguf, "general.architecture", "mlp");
    gguf_set_val_u32(gguf, "mlp.n_input", N_INPUT);
    gguf_set_val_u32(gguf, "mlp.n_hidden", (uint32_t) o->nhidden);
    gguf_set_val_u32(gguf, "mlp.n_classes", N_CLASSES);
    for (int l = 0; l < 3; l++) {
        struct ggml_tensor * src[2] = { m->w[l], m->b[l] };
        for (int k = 0; k < 2; k++) {
            struct ggml_tensor * t = ggml_dup_tensor(ctx, src[k]);
            ggml_set_name(t, ggml_get_name(src[k]));
            ggml_backend_tensor_get(src[k], t->data, 0, ggml_nbytes(t));
            gguf_add_tensor(gguf, t);
        }
    }
    const size_t len = strlen(path) + 16;
    char * tmp = malloc(len);
    bool ok = tmp != NULL;
    if (ok) {
        snprintf(tmp, len, "%s.tmp", path);
        ok = gguf_write_to_file(gguf, tmp, false);
        if (ok && rename(tmp, path) != 0) {
            perror("ggml-train-mlp: rename");
            ok = false;
        }
        if (!ok) {
            remove(tmp);
        }
    }
    if (!ok) {
        fprintf(stderr, "ggml-train-mlp: could not write %s\n", path);
    }
    free(tmp);
    gguf_free(gguf);
    ggml_free(ctx);
    return ok;
}

static struct ggml_opt_optimizer_params get_opt_pars(void * userdata) {
    struct ggml_opt_optimizer_params p = ggml_opt_get_default_optimizer_params(NULL);
    p.adamw.alpha = *(const float *) userdata;
    return p;
}

static ggml_backend_t pick_backend(const struct options * o) {
    if (o->device == NULL) {
        return ggml_backend_init_best();
    }
    ggml_backend_dev_t dev = ggml_backend_dev_by_name(o->device);
    if (dev == NULL) {
        fprintf(stderr, "ggml-train-mlp: no device %s\n", o->device);
        return NULL;
    }
    return ggml_backend_dev_init(dev, NULL);
}

int main(int argc, char ** argv) {
    struct options o = {
        .ndata = 8192, .nhidden = 64, .nbatch = 128, .nepoch = 30, .lr = 0.01f, .val_split = 0.25f,
        .seed = 42, .n_threads = 0, .device = NULL, .out = NULL, .min_acc = 0.0,
    };
    if (!parse_args(argc, argv, &o)) {
        usage(argv[0]);
        return 2;
    }

    ggml_backend_load_all();
    ggml_backend_t backend = pick_backend(&o);
    ggml_backend_dev_t cpu_dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ggml_backend_t cpu = cpu_dev != NULL ? ggml_backend_dev_init(cpu_dev, NULL) : NULL;
    if (backend == NULL || cpu == NULL) {
        fprintf(stderr, "ggml-train-mlp: no backend (a CPU backend is needed for the optimizer's parameters)\n");
        return 1;
    }
    if (o.n_threads > 0) {
        ggml_backend_t both[2] = { backend, cpu };
        for (int i = 0; i < 2; i++) {
            ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(ggml_backend_get_device(both[i]));
            void * proc = ggml_backend_reg_get_proc_address(reg, "ggml_backend_set_n_threads");
            if (proc != NULL) {
                // ISO C has no conversion from object to function pointers; POSIX guarantees the representation
                ggml_backend_set_n_threads_t set;
                memcpy(&set, &proc, sizeof(set));
                set(both[i], o.n_threads);
            }
        }
    }
    // the device first; the CPU takes what the device cannot do
    ggml_backend_t backends[2] = { backend, cpu };
    const int n_backends = backend == cpu ? 1 : 2;
    ggml_backend_sched_t sched = ggml_backend_sched_new(backend == cpu ? &cpu : backends, NULL, n_backends,
                                                        GGML_DEFAULT_GRAPH_SIZE, false, true);

    ggml_opt_dataset_t ds = ggml_opt_dataset_init(GGML_TYPE_F32, GGML_TYPE_F32, N_INPUT, N_CLASSES, o.ndata, 1);
    struct model m;
    if (sched == NULL || ds == NULL || !model_init(&m, &o, backend)) {
        return 1;
    }
    make_data(ds, o.seed);

    struct ggml_opt_params params = ggml_opt_default_params(sched, GGML_OPT_LOSS_TYPE_CROSS_ENTROPY);
    params.ctx_compute     = m.ctx_compute;
    params.inputs          = m.input;
    params.outputs         = m.logits;
    params.get_opt_pars    = get_opt_pars;
    params.get_opt_pars_ud = &o.lr;
    ggml_opt_context_t opt = ggml_opt_init(params);
    if (opt == NULL) {
        return 1;
    }

    const int64_t nbatches    = o.ndata / o.nbatch;
    const int64_t idata_split = (int64_t) ((1.0f - o.val_split) * (float) nbatches) * o.nbatch;
    printf("ggml-train-mlp: %s, %" PRId64 " points (%" PRId64 " for training), MLP 2-%" PRId64 "-%" PRId64 "-3, batch %" PRId64 "\n",
           ggml_backend_name(backend), o.ndata, idata_split, o.nhidden, o.nhidden, o.nbatch);

    ggml_opt_result_t train = ggml_opt_result_init();
    ggml_opt_result_t val   = ggml_opt_result_init();
    double first_loss = NAN, loss = NAN, loss_unc = NAN, acc_train = NAN, acc = NAN, acc_unc = NAN;
    int64_t t_train_us = 0;
    for (int64_t epoch = 1; epoch <= o.nepoch; epoch++) {
        ggml_opt_dataset_shuffle(opt, ds, idata_split);
        ggml_opt_result_reset(train);
        ggml_opt_result_reset(val);
        // the training part with backward passes, then the held-out part forward only
        const int64_t t0 = ggml_time_us();
        ggml_opt_epoch(opt, ds, train, val, idata_split, NULL, NULL);
        t_train_us += ggml_time_us() - t0;
        ggml_opt_result_loss(train, &loss, &loss_unc);
        ggml_opt_result_accuracy(train, &acc_train, NULL);
        ggml_opt_result_accuracy(val, &acc, &acc_unc);
        if (epoch == 1) {
            first_loss = loss;
        }
        printf("epoch %3" PRId64 ": train loss %.5f +- %.5f, train acc %6.2f%%, held-out acc %6.2f +- %.2f%%\n",
               epoch, loss, loss_unc, 100.0 * acc_train, 100.0 * acc, 100.0 * acc_unc);
        fflush(stdout);
    }
    const double samples_per_s = (double) (idata_split * o.nepoch) / ((double) t_train_us * 1e-6);
    printf("training: %.0f samples/s (%" PRId64 " epochs of %" PRId64 " points in %.2f s, held-out passes included)\n",
           samples_per_s, o.nepoch, idata_split, (double) t_train_us * 1e-6);
    printf("loss %.5f -> %.5f, held-out accuracy %.2f%%\n", first_loss, loss, 100.0 * acc);

    int rc = 0;
    if (o.out != NULL) {
        if (model_save(&m, &o, o.out)) {
            printf("weights written to %s\n", o.out);
        } else {
            rc = 1;
        }
    }
    if (!(loss < first_loss)) {
        fprintf(stderr, "ggml-train-mlp: the loss did not decrease\n");
        rc = 1;
    }
    if (o.min_acc > 0.0 && !(acc >= o.min_acc)) {
        fprintf(stderr, "ggml-train-mlp: held-out accuracy %.4f below %.4f\n", acc, o.min_acc);
        rc = 1;
    }

    ggml_opt_result_free(train);
    ggml_opt_result_free(val);
    ggml_opt_free(opt);
    model_free(&m);
    ggml_opt_dataset_free(ds);
    ggml_backend_sched_free(sched);
    if (backend != cpu) {
        ggml_backend_free(backend);
    }
    ggml_backend_free(cpu);
    return rc;
}
