// test-backend-ops-tool.c: the conformance tool (tools/test-backend-ops) finds what
// it should.
//
//  - the reference evaluator on small cases with values worked out by hand;
//  - a correct backend with device memory (the test backend) passes every case
//    it supports, compared with the reference;
//  - a backend whose ADD is off by 1e-3 fails exactly its ADD cases;
//  - a backend error and failed allocations are reported for their cases and
//    the run goes on;
//  - the command line: exit status 1 for the broken backend, 0 for the correct one,
//    1 for -b naming no device.

#include "testing.h"
#include "tbo-run.h"
#include "test-backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//
// the reference evaluator on hand-computed cases
//

struct ref_case {
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
};

static struct ggml_context * new_ctx(void) {
    const struct ggml_init_params params = {
        .mem_size   = 64 * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    return ggml_init(params);
}

// allocates ctx in host memory of the test backend, sets the given inputs, runs the
// reference on out (its sources first when they are ops) and returns out's values
static double * ref_run(struct ggml_context * ctx, ggml_backend_t backend, struct ggml_tensor ** inputs, const float * const * data,
                        int n_inputs, struct ggml_tensor * out, ggml_backend_buffer_t * buf) {
    *buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    CHECK(*buf != NULL);
    for (int i = 0; i < n_inputs; i++) {
        if (inputs[i]->type == GGML_TYPE_I32) {
            int32_t v[64];
            for (int64_t j = 0; j < ggml_nelements(inputs[i]); j++) {
                v[j] = (int32_t) data[i][j];
            }
            ggml_backend_tensor_set(inputs[i], v, 0, ggml_nbytes(inputs[i]));
        } else if (inputs[i]->type == GGML_TYPE_F16) {
            ggml_fp16_t v[64];
            ggml_fp32_to_fp16_row(data[i], v, ggml_nelements(inputs[i]));
            ggml_backend_tensor_set(inputs[i], v, 0, ggml_nbytes(inputs[i]));
        } else {
            ggml_backend_tensor_set(inputs[i], data[i], 0, ggml_nbytes(inputs[i]));
        }
    }
    struct tbo_ref * ref = tbo_ref_new(ctx);
    CHECK(ref != NULL);
    for (int s = 0; s < GGML_MAX_SRC; s++) {
        if (out->src[s] != NULL && out->src[s]->op != GGML_OP_NONE) {
            tbo_ref_compute(ref, out->src[s]);
        }
    }
    tbo_ref_compute(ref, out);
    double * v = tbo_ref_values(ref, out);
    tbo_ref_free(ref);
    return v;
}

static void test_reference(ggml_backend_t backend) {
    ggml_backend_buffer_t buf;

    // softmax of [0, ln 2, ln 4] is [1/7, 2/7, 4/7]; with scale 2 and a sink of ln 7 (one extra 7 in the sum)
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
        struct ggml_tensor * sinks = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
        struct ggml_tensor * out = ggml_soft_max_ext(ctx, a, NULL, 2.0f, 0.0f);
        ggml_soft_max_add_sinks(out, sinks);
        const float xa[3] = { 0.0f, 0.5f * logf(2.0f), 0.5f * logf(4.0f) };
        const float xs[1] = { logf(7.0f) };
        struct ggml_tensor * in[2] = { a, sinks };
        const float * d[2] = { xa, xs };
        double * v = ref_run(ctx, backend, in, d, 2, out, &buf);
        CHECK_NEAR(v[0], 1.0/14.0, 1e-6);
        CHECK_NEAR(v[1], 2.0/14.0, 1e-6);
        CHECK_NEAR(v[2], 4.0/14.0, 1e-6);
        free(v);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }

    // softmax rows: one NaN, all NaN, a NaN mask, masked entirely to -inf
    // (zeros), and a plain row [0, ln 3] -> [1/4, 3/4]
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 5);
        struct ggml_tensor * m = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 5);
        struct ggml_tensor * out = ggml_soft_max_ext(ctx, a, m, 1.0f, 0.0f);
        const float xa[10] = { 1, NAN,  NAN, NAN,  1, 2,  1, 2,  0, logf(3.0f) };
        const float xm[10] = { 0, 0,  0, 0,  NAN, 0,  -INFINITY, -INFINITY,  0, 0 };
        struct ggml_tensor * in[2] = { a, m };
        const float * d[2] = { xa, xm };
        double * v = ref_run(ctx, backend, in, d, 2, out, &buf);
        for (int i = 0; i < 6; i++) {
            CHECK_MSG(isnan(v[i]), "softmax reference: value %d is %g, want NaN", i, v[i]);
        }
        CHECK(v[6] == 0.0 && v[7] == 0.0);
        CHECK_NEAR(v[8], 0.25, 1e-7);
        CHECK_NEAR(v[9], 0.75, 1e-7);
        free(v);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }

    // flash attention, two keys, four queries: q NaN; the mask of the only key
    // left NaN; every key masked (zeros); the NaN K row masked (not read)
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 4, 1, 1);
        struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 1, 1);
        struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 2, 1, 1);
        struct ggml_tensor * m = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 2, 4, 1, 1);
        struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, m, 1.0f, 0.0f, 0.0f);
        const float xq[8] = { NAN, 1,  1, 1,  1, 1,  1, 1 };
        const float xk[4] = { 1, 0,  NAN, 5 };
        const float xv[4] = { 0.25f, -2,  7, 7 };
        const float xm[8] = { 0, -INFINITY,  NAN, -INFINITY,  -INFINITY, -INFINITY,  0, -INFINITY };
        struct ggml_tensor * in[4] = { q, k, v, m };
        const float * d[4] = { xq, xk, xv, xm };
        double * r = ref_run(ctx, backend, in, d, 4, out, &buf);
        CHECK(isnan(r[0]) && isnan(r[1]));
        CHECK(isnan(r[2]) && isnan(r[3]));
        CHECK(r[4] == 0.0 && r[5] == 0.0);
        CHECK_NEAR(r[6], 0.25, 0);
        CHECK_NEAR(r[7], -2, 0);
        free(r);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }

    // rope, normal mode, 4 dims, position 3: pair 0 turns by 3 rad, pair 1 by 3/100 rad (base 10000, n_dims 4)
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 1, 1);
        struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
        struct ggml_tensor * out = ggml_rope(ctx, a, pos, 4, GGML_ROPE_TYPE_NORMAL);
        const float xa[4] = { 1.0f, 0.0f, 0.0f, 2.0f };
        const float xp[1] = { 3.0f };
        struct ggml_tensor * in[2] = { a, pos };
        const float * d[2] = { xa, xp };
        double * v = ref_run(ctx, backend, in, d, 2, out, &buf);
        CHECK_NEAR(v[0], cos(3.0), 1e-6);
        CHECK_NEAR(v[1], sin(3.0), 1e-6);
        CHECK_NEAR(v[2], -2.0 * sin(0.03), 1e-6);
        CHECK_NEAR(v[3],  2.0 * cos(0.03), 1e-6);
        free(v);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }

    // matrix product: [[1,2],[3,4]] (rows of a) times the columns [5,6] and [7,8] of b
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 2);
        struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 2);
        struct ggml_tensor * out = ggml_mul_mat(ctx, a, b);
        const float xa[4] = { 1, 2, 3, 4 };
        const float xb[4] = { 5, 6, 7, 8 };
        struct ggml_tensor * in[2] = { a, b };
        const float * d[2] = { xa, xb };
        double * v = ref_run(ctx, backend, in, d, 2, out, &buf);
        CHECK_NEAR(v[0], 17, 0); // row 0 . col 0
        CHECK_NEAR(v[1], 39, 0); // row 1 . col 0
        CHECK_NEAR(v[2], 23, 0);
        CHECK_NEAR(v[3], 53, 0);
        free(v);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }

    // rms_norm of [3, 4] with eps 0: divided by sqrt(12.5)
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
        struct ggml_tensor * out = ggml_rms_norm(ctx, a, 0.0f);
        const float xa[2] = { 3, 4 };
        struct ggml_tensor * in[1] = { a };
        const float * d[1] = { xa };
        double * v = ref_run(ctx, backend, in, d, 1, out, &buf);
        CHECK_NEAR(v[0], 3.0 / sqrt(12.5), 1e-7);
        CHECK_NEAR(v[1], 4.0 / sqrt(12.5), 1e-7);
        free(v);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }

    // argsort, descending
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
        struct ggml_tensor * out = ggml_argsort(ctx, a, GGML_SORT_ORDER_DESC);
        const float xa[4] = { 0.5f, 3.0f, -1.0f, 2.0f };
        struct ggml_tensor * in[1] = { a };
        const float * d[1] = { xa };
        double * v = ref_run(ctx, backend, in, d, 1, out, &buf);
        CHECK_EQ_INT(v[0], 1);
        CHECK_EQ_INT(v[1], 3);
        CHECK_EQ_INT(v[2], 0);
        CHECK_EQ_INT(v[3], 2);
        free(v);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }

    // flash attention with two keys, the second masked (-inf): the output is the first value row
    {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 2, 1, 1, 1);
        struct ggml_tensor * k = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 2, 2, 1, 1);
        struct ggml_tensor * v = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 2, 2, 1, 1);
        struct ggml_tensor * m = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 2, 1, 1, 1);
        struct ggml_tensor * out = ggml_flash_attn_ext(ctx, q, k, v, m, 1.0f, 0.0f, 0.0f);
        const float xq[2] = { 1, 1 };
        const float xk[4] = { 1, 0, 5, 5 };
        const float xv[4] = { 0.25f, -2, 7, 7 };
        const float xm[2] = { 0, -INFINITY };
        struct ggml_tensor * in[4] = { q, k, v, m };
        const float * d[4] = { xq, xk, xv, xm };
        double * r = ref_run(ctx, backend, in, d, 4, out, &buf);
        CHECK_NEAR(r[0], 0.25, 0);
        CHECK_NEAR(r[1], -2, 0);
        free(r);
        ggml_backend_buffer_free(buf);
        ggml_free(ctx);
    }
}

//
// the tool on test backends
//

static ggml_backend_t new_test_backend(const struct test_backend_config * config, ggml_backend_reg_t * reg) {
    *reg = test_backend_reg_new(config);
    CHECK(*reg != NULL);
    ggml_backend_t backend = ggml_backend_dev_init(test_backend_device(*reg), NULL);
    CHECK(backend != NULL);
    return backend;
}

static void free_test_backend(ggml_backend_t backend, ggml_backend_reg_t reg) {
    ggml_backend_free(backend);
    test_backend_reg_free(reg);
}

static const struct tbo_printer quiet = { .format = TBO_OUTPUT_CSV, .color = false };

static bool all_start_with(char * const * names, size_t n, const char * prefix) {
    for (size_t i = 0; i < n; i++) {
        if (strncmp(names[i], prefix, strlen(prefix)) != 0) {
            fprintf(stderr, "unexpected failure: %s\n", names[i]);
            return false;
        }
    }
    return true;
}

// against the reference, and against the CPU backend (the reference where the CPU lacks an op)
static void test_correct_backend(const struct tbo_case_list * cases) {
    const struct test_backend_config config = { .name = "TestDev", .type = GGML_BACKEND_DEVICE_TYPE_GPU, .host_memory = false };
    ggml_backend_reg_t reg;
    ggml_backend_t backend = new_test_backend(&config, &reg);
#ifdef TEST_HAVE_CPU
    ggml_backend_t cpu = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    CHECK(cpu != NULL);
    const int n_modes = 2;
#else
    ggml_backend_t cpu = NULL; // built without the CPU backend: the reference only
    const int n_modes = 1;
#endif

    const struct tbo_run_opts opts = {
        .mode      = TBO_MODE_TEST,
        .op_filter = "ADD,MUL,SCALE,CPY,CONT,DUP,MUL_MAT,GET_ROWS",
        .seed      = 7,
    };
    for (int with_cpu = 0; with_cpu < n_modes; with_cpu++) {
        struct tbo_run_counts counts;
        const bool ok = tbo_run_backend(backend, with_cpu ? cpu : NULL, cases, &opts, &quiet, &counts);
        CHECK(ok);
        CHECK_EQ_INT(counts.failed, 0);
        CHECK_MSG(counts.passed >= 50, "only %zu cases passed", counts.passed);
        CHECK(counts.not_supported > 0); // quantized types, for one
        tbo_run_counts_free(&counts);
    }
    if (cpu != NULL) {
        ggml_backend_free(cpu);
    }
    free_test_backend(backend, reg);
}

static void test_broken_add(const struct tbo_case_list * cases) {
    const struct test_backend_config config = { .name = "Broken", .add_error = 1e-3f };
    ggml_backend_reg_t reg;
    ggml_backend_t backend = new_test_backend(&config, &reg);

    const struct tbo_run_opts opts = { .mode = TBO_MODE_TEST, .op_filter = "ADD,MUL", .seed = 7 };
    struct tbo_run_counts counts;
    const bool ok = tbo_run_backend(backend, NULL, cases, &opts, &quiet, &counts);
    CHECK(!ok);
    CHECK(counts.failed > 0);
    CHECK(all_start_with(counts.failed_names, counts.n_failed_names, "ADD("));
    CHECK(counts.passed > 0); // the MUL cases

    // every ADD case is found: none of them passes
    const struct tbo_run_opts add_only = { .mode = TBO_MODE_TEST, .op_filter = "ADD", .seed = 7 };
    struct tbo_run_counts add_counts;
    tbo_run_backend(backend, NULL, cases, &add_only, &quiet, &add_counts);
    CHECK(add_counts.failed > 0);
    CHECK_EQ_INT(add_counts.passed, 0);
    CHECK_EQ_INT(add_counts.failed, counts.failed);

    tbo_run_counts_free(&add_counts);
    tbo_run_counts_free(&counts);
    free_test_backend(backend, reg);
}

static void test_contained_faults(const struct tbo_case_list * cases) {
    // graph_compute fails on MUL: those cases fail, the ADD cases still run and pass
    {
        const struct test_backend_config config = { .name = "Failing", .fail_op = GGML_OP_MUL };
        ggml_backend_reg_t reg;
        ggml_backend_t backend = new_test_backend(&config, &reg);
        const struct tbo_run_opts opts = { .mode = TBO_MODE_TEST, .op_filter = "ADD,MUL", .seed = 7 };
        struct tbo_run_counts counts;
        CHECK(!tbo_run_backend(backend, NULL, cases, &opts, &quiet, &counts));
        CHECK(counts.failed > 0);
        CHECK(all_start_with(counts.failed_names, counts.n_failed_names, "MUL("));
        CHECK(counts.passed > 0);
        tbo_run_counts_free(&counts);
        free_test_backend(backend, reg);
    }
    // every allocation fails: every supported case fails, none crashes
    {
        const struct test_backend_config config = { .name = "NoMemory", .fail_alloc = true };
        ggml_backend_reg_t reg;
        ggml_backend_t backend = new_test_backend(&config, &reg);
        const struct tbo_run_opts opts = { .mode = TBO_MODE_TEST, .op_filter = "ADD,SCALE", .seed = 7 };
        struct tbo_run_counts counts;
        CHECK(!tbo_run_backend(backend, NULL, cases, &opts, &quiet, &counts));
        CHECK(counts.failed > 0);
        CHECK_EQ_INT(counts.passed, 0);
        tbo_run_counts_free(&counts);
        free_test_backend(backend, reg);
    }
}

// the command line, with the test backends in the registry
static void test_command_line(void) {
    const struct test_backend_config good = { .name = "TestDev" };
    const struct test_backend_config bad  = { .name = "Broken", .add_error = 1e-3f };
    ggml_backend_reg_t reg_good = test_backend_reg_new(&good);
    ggml_backend_reg_t reg_bad  = test_backend_reg_new(&bad);
    ggml_backend_register(reg_good);
    ggml_backend_register(reg_bad);

    char * argv_good[] = { "test-backend-ops", "test", "--quick", "-b", "TestDev", "-o", "ADD,MUL", NULL };
    char * argv_bad[]  = { "test-backend-ops", "test", "--quick", "-b", "Broken", "-o", "ADD", NULL };
    char * argv_bad_mul[] = { "test-backend-ops", "test", "--quick", "-b", "Broken", "-o", "MUL", NULL };
    char * argv_usage[] = { "test-backend-ops", "--no-such-option", NULL };
    // a name no device has is an error, not every device skipped and passed
    char * argv_unknown[] = { "test-backend-ops", "test", "--quick", "-b", "Nope", "-o", "ADD", NULL };
    char * argv_prefix[]  = { "test-backend-ops", "test", "--quick", "-b", "TestDe", "-o", "ADD", NULL };
    CHECK_EQ_INT(tbo_main(7, argv_unknown), 1);
    CHECK_EQ_INT(tbo_main(7, argv_prefix), 1);
    CHECK_EQ_INT(tbo_main(7, argv_good), 0);
    CHECK_EQ_INT(tbo_main(7, argv_bad), 1);
    CHECK_EQ_INT(tbo_main(7, argv_bad_mul), 0);
    CHECK_EQ_INT(tbo_main(2, argv_usage), 1);

    ggml_backend_unload(reg_bad);
    ggml_backend_unload(reg_good);
    test_backend_reg_free(reg_bad);
    test_backend_reg_free(reg_good);
}

int main(void) {
    {
        const struct test_backend_config host = { .name = "RefHost", .host_memory = true };
        ggml_backend_reg_t reg;
        ggml_backend_t backend = new_test_backend(&host, &reg);
        test_reference(backend);
        free_test_backend(backend, reg);
    }

    struct tbo_case_list cases = { 0 };
    tbo_make_cases_eval(&cases);
    tbo_select_quick(&cases);
    CHECK(cases.n > 1000);

    test_correct_backend(&cases);
    test_broken_add(&cases);
    test_contained_faults(&cases);
    tbo_case_list_free(&cases);

    test_command_line();
    ggml_quantize_free();
    return TEST_RESULT();
}
