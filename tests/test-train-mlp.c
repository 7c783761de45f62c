#define _POSIX_C_SOURCE 200809L
// test-train-mlp: runs the example trainer briefly (a few epochs on a small
// spiral data set), requires the loss to fall and the held-out accuracy to
// pass 90%, and reads the GGUF it wrote back: metadata, the six tensors with
// their shapes, finite values. Bad options must fail with exit status 2
// and leave no file behind.

#include "ggml.h"
#include "gguf.h"
#include "run-program.h"
#include "testing.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#ifndef TRAIN_MLP_PATH
#error "TRAIN_MLP_PATH must name the ggml-train-mlp program"
#endif

static void check_gguf(const char * path, int64_t nhidden) {
    struct ggml_context * ctx = NULL;
    struct gguf_init_params p = { false, &ctx };
    struct gguf_context * g = gguf_init_from_file(path, p);
    CHECK(g != NULL);
    if (g == NULL) {
        return;
    }
    const int64_t k = gguf_find_key(g, "mlp.n_hidden");
    CHECK(k >= 0);
    if (k >= 0) {
        CHECK_EQ_INT(gguf_get_val_u32(g, k), nhidden);
    }
    CHECK_EQ_INT(gguf_get_n_tensors(g), 6);
    const char * names[6] = { "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias" };
    const int64_t ne0[6] = { 2, nhidden, nhidden, nhidden, nhidden, 3 };
    const int64_t ne1[6] = { nhidden, 1, nhidden, 1, 3, 1 };
    for (int i = 0; i < 6; i++) {
        struct ggml_tensor * t = ggml_get_tensor(ctx, names[i]);
        CHECK_MSG(t != NULL, "tensor %s", names[i]);
        if (t == NULL) {
            continue;
        }
        CHECK(t->type == GGML_TYPE_F32);
        CHECK_EQ_INT(t->ne[0], ne0[i]);
        CHECK_EQ_INT(t->ne[1], ne1[i]);
        const float * v = (const float *) t->data;
        int finite = 1;
        double sum_abs = 0.0;
        for (int64_t j = 0; j < ggml_nelements(t); j++) {
            finite &= isfinite(v[j]) != 0;
            sum_abs += fabs((double) v[j]);
        }
        CHECK_MSG(finite, "%s has non-finite values", names[i]);
        if (i % 2 == 0) {
            CHECK_MSG(sum_abs > 0.0, "%s is all zero", names[i]); // weights start random and stay non-zero
        }
    }
    gguf_free(g);
    ggml_free(ctx);
}

int main(void) {
    char path[256];
    snprintf(path, sizeof(path), "test-train-mlp-%ld.gguf", (long) getpid());
    remove(path);

    struct program_result r;
    {
        char * argv[] = { (char *) TRAIN_MLP_PATH, "-n", "4096", "-e", "12", "-H", "64", "-t", "2",
                          "--min-acc", "0.9", "-o", path, NULL };
        CHECK(run_program(argv, 0, &r));
        char ending[64];
        CHECK_MSG(r.exited && r.status == 0, "ended by %s, output:\n%s", program_ending(&r, ending, sizeof(ending)), r.output);
        CHECK(strstr(r.output, "held-out accuracy") != NULL);
        CHECK(strstr(r.output, "samples/s") != NULL);
        check_gguf(path, 64);
        remove(path);
    }
    {
        char * argv[] = { (char *) TRAIN_MLP_PATH, "-e", "0", "-o", path, NULL };
        CHECK(run_program(argv, 0, &r));
        CHECK_MSG(r.exited && r.status == 2, "status %d", r.status);
        CHECK(access(path, F_OK) != 0);
    }
    {
        char * argv[] = { (char *) TRAIN_MLP_PATH, "--lr", "fast", NULL };
        CHECK(run_program(argv, 0, &r));
        CHECK_MSG(r.exited && r.status == 2, "status %d", r.status);
        CHECK(strstr(r.output, "bad value") != NULL);
    }
    return TEST_RESULT();
}
