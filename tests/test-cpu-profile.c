// test-cpu-profile.c: the CPU backend's profile (src/ggml-cpu/cpu-profile.h),
// through the proc address a program uses: every node of every graph counted
// once under its kind, bytes and weight bytes by closed form, the nodes'
// times adding up to at most the graphs' time, nothing added once the
// profile is taken back, a non-CPU backend refused, and the results of a
// profiled graph the same as without the profile. The table printer (through
// its proc address) and GGML_CPU_PROFILE, which prints a backend's profile to
// stderr when the backend is freed.

#define _POSIX_C_SOURCE 200809L // setenv, fileno, dup

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "cpu-profile.h"
#include "testing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ggml_backend_cpu_set_profile_t get_set_profile(void) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU));
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_set_profile");
    ggml_backend_cpu_set_profile_t fn = NULL;
    memcpy(&fn, &sym, sizeof(sym));
    return fn;
}

static const struct ggml_cpu_profile_row * find_row(const struct ggml_cpu_profile * p, enum ggml_op op, int32_t sub,
                                                    enum ggml_type t0) {
    for (size_t r = 0; r < p->n_rows; r++) {
        if (p->rows[r].op == op && p->rows[r].sub_op == sub && p->rows[r].src0_type == t0) {
            return &p->rows[r];
        }
    }
    return NULL;
}

// w [K, N] f16 weights (a buffer of usage WEIGHTS); x [K, M] f32;
// y = silu(w x) + b, twice (two MUL_MAT, two UNARY silu, two ADD), and a GET_ROWS of w
struct model {
    struct ggml_context * ctx_w;
    struct ggml_context * ctx_g;
    ggml_backend_buffer_t buf_w;
    ggml_backend_buffer_t buf_g;
    struct ggml_tensor *  w, * x, * b, * ids, * out, * rows;
    struct ggml_cgraph *  gf;
};

enum { K = 48, N = 64, M = 3 }; // N >= K: the second product takes a [K, M] view of the first's result

static void model_init(struct model * m, ggml_backend_t be) {
    struct ggml_init_params pw = { 4 * ggml_tensor_overhead(), NULL, true };
    m->ctx_w = ggml_init(pw);
    m->w = ggml_new_tensor_2d(m->ctx_w, GGML_TYPE_F16, K, N);
    m->buf_w = ggml_backend_alloc_ctx_tensors(m->ctx_w, be);
    ggml_backend_buffer_set_usage(m->buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    struct ggml_init_params pg = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    m->ctx_g = ggml_init(pg);
    m->x   = ggml_new_tensor_2d(m->ctx_g, GGML_TYPE_F32, K, M);
    m->b   = ggml_new_tensor_1d(m->ctx_g, GGML_TYPE_F32, N);
    m->ids = ggml_new_tensor_1d(m->ctx_g, GGML_TYPE_I32, 2);
    struct ggml_tensor * h = ggml_add(m->ctx_g, ggml_silu(m->ctx_g, ggml_mul_mat(m->ctx_g, m->w, m->x)), m->b);
    struct ggml_tensor * h2 = ggml_cont(m->ctx_g, ggml_view_2d(m->ctx_g, h, K, M, h->nb[1], 0));
    m->out  = ggml_add(m->ctx_g, ggml_silu(m->ctx_g, ggml_mul_mat(m->ctx_g, m->w, h2)), m->b);
    m->rows = ggml_get_rows(m->ctx_g, m->w, m->ids);
    m->gf = ggml_new_graph(m->ctx_g);
    ggml_build_forward_expand(m->gf, m->out);
    ggml_build_forward_expand(m->gf, m->rows);
    m->buf_g = ggml_backend_alloc_ctx_tensors(m->ctx_g, be);

    uint16_t * wd = (uint16_t *) malloc(sizeof(uint16_t) * K * N);
    for (int i = 0; i < K * N; i++) {
        wd[i] = ggml_fp32_to_fp16((float) ((i * 37) % 101 - 50) / 200.0f);
    }
    ggml_backend_tensor_set(m->w, wd, 0, sizeof(uint16_t) * K * N);
    free(wd);
    float xd[K * M], bd[N];
    for (int i = 0; i < K * M; i++) {
        xd[i] = (float) ((i * 13) % 17 - 8) / 8.0f;
    }
    for (int i = 0; i < N; i++) {
        bd[i] = (float) (i % 5) / 10.0f;
    }
    const int32_t idd[2] = { 3, 40 };
    ggml_backend_tensor_set(m->x, xd, 0, sizeof(xd));
    ggml_backend_tensor_set(m->b, bd, 0, sizeof(bd));
    ggml_backend_tensor_set(m->ids, idd, 0, sizeof(idd));
}

static void model_free(struct model * m) {
    ggml_backend_buffer_free(m->buf_g);
    ggml_backend_buffer_free(m->buf_w);
    ggml_free(m->ctx_g);
    ggml_free(m->ctx_w);
}

// a CPU backend of n_threads with the model, and the model's result unprofiled in ref
static ggml_backend_t backend_with_model(int n_threads, struct model * m, float * ref) {
    ggml_backend_t be = ggml_backend_cpu_init();
    CHECK(be != NULL);
    ggml_backend_cpu_set_n_threads(be, n_threads);
    model_init(m, be);
    CHECK(ggml_backend_graph_compute(be, m->gf) == GGML_STATUS_SUCCESS);
    ggml_backend_tensor_get(m->out, ref, 0, sizeof(float) * N * M);
    return be;
}

static void test_profile(int n_threads) {
    ggml_backend_cpu_set_profile_t set_profile = get_set_profile();
    CHECK(set_profile != NULL);
    struct model m;
    float ref[N * M];
    ggml_backend_t be = backend_with_model(n_threads, &m, ref);

    struct ggml_cpu_profile prof;
    memset(&prof, 0, sizeof(prof));
    set_profile(be, &prof);
    const int64_t t0 = ggml_time_us();
    for (int rep = 0; rep < 3; rep++) {
        CHECK(ggml_backend_graph_compute(be, m.gf) == GGML_STATUS_SUCCESS);
    }
    const int64_t t1 = ggml_time_us();
    set_profile(be, NULL);
    CHECK(ggml_backend_graph_compute(be, m.gf) == GGML_STATUS_SUCCESS); // not counted

    float got[N * M];
    ggml_backend_tensor_get(m.out, got, 0, sizeof(got));
    CHECK(memcmp(got, ref, sizeof(got)) == 0);

    CHECK_EQ_INT(prof.n_graphs, 3);
    CHECK_EQ_INT(prof.n_threads, n_threads);
    CHECK_EQ_INT(prof.failed, 0);

    const struct ggml_cpu_profile_row * mm   = find_row(&prof, GGML_OP_MUL_MAT, -1, GGML_TYPE_F16);
    const struct ggml_cpu_profile_row * silu = find_row(&prof, GGML_OP_UNARY, GGML_UNARY_OP_SILU, GGML_TYPE_F32);
    const struct ggml_cpu_profile_row * add  = find_row(&prof, GGML_OP_ADD, -1, GGML_TYPE_F32);
    const struct ggml_cpu_profile_row * cont = find_row(&prof, GGML_OP_CONT, -1, GGML_TYPE_F32);
    const struct ggml_cpu_profile_row * gr   = find_row(&prof, GGML_OP_GET_ROWS, -1, GGML_TYPE_F16);
    CHECK(mm != NULL && silu != NULL && add != NULL && cont != NULL && gr != NULL);
    if (mm == NULL || silu == NULL || add == NULL || cont == NULL || gr == NULL) {
        goto done;
    }
    CHECK_EQ_INT(prof.n_rows, 5); // views and the graph's leaves are not nodes that compute
    CHECK_EQ_INT(mm->n_nodes, 6);
    CHECK_EQ_INT(silu->n_nodes, 6);
    CHECK_EQ_INT(add->n_nodes, 6);
    CHECK_EQ_INT(cont->n_nodes, 3);
    CHECK_EQ_INT(gr->n_nodes, 3);

    // bytes: operands and result; weight bytes: the f16 matrix only
    const double w_bytes = 2.0 * K * N, x_bytes = 4.0 * K * M, y_bytes = 4.0 * N * M;
    CHECK_NEAR(mm->bytes, 6 * (w_bytes + x_bytes + y_bytes), 0.5);
    CHECK_NEAR(mm->weight_bytes, 6 * w_bytes, 0.5);
    CHECK_NEAR(silu->bytes, 6 * 2 * y_bytes, 0.5);
    CHECK_NEAR(silu->weight_bytes, 0.0, 0.5);
    CHECK_NEAR(add->bytes, 6 * (2 * y_bytes + 4.0 * N), 0.5);
    // GET_ROWS: two rows of w read, two f32 rows written, two indices
    CHECK_NEAR(gr->bytes, 3 * (2 * 2.0 * K + 2 * 4.0 * K + 2 * 4.0), 0.5);
    CHECK_NEAR(gr->weight_bytes, 3 * 2 * 2.0 * K, 0.5);

    double wall = 0.0;
    for (size_t r = 0; r < prof.n_rows; r++) {
        const struct ggml_cpu_profile_row * row = &prof.rows[r];
        CHECK(row->compute_mean_ns >= 0.0 && row->compute_mean_ns <= row->compute_max_ns);
        CHECK(row->compute_max_ns > 0.0);
        wall += row->wall_ns;
    }
    CHECK(wall <= prof.graph_ns);
    CHECK(prof.graph_ns <= (double) (t1 - t0) * 1e3 + 1e3);

done:
    free(prof.rows);
    model_free(&m);
    ggml_backend_free(be);
}

// a backend that is not the CPU's is refused with an error, not a crash
static void test_not_cpu(void) {
    ggml_backend_cpu_set_profile_t set_profile = get_set_profile();
    struct ggml_cpu_profile prof;
    memset(&prof, 0, sizeof(prof));
    set_profile(NULL, &prof);
    CHECK_EQ_INT(prof.n_graphs, 0);
}

// the whole of a file (NUL-terminated; NULL if it cannot be read)
static char * slurp(FILE * f) {
    fflush(f);
    const long size = ftell(f);
    char * text = size >= 0 ? (char *) calloc((size_t) size + 1, 1) : NULL;
    if (text != NULL) {
        rewind(f);
        if (fread(text, 1, (size_t) size, f) != (size_t) size) {
            free(text);
            text = NULL;
        }
    }
    return text;
}

static void test_print_table(void) {
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU));
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_profile_print_table");
    CHECK(sym != NULL);
    ggml_backend_cpu_profile_print_table_t print_table = NULL;
    memcpy(&print_table, &sym, sizeof(sym));

    ggml_backend_t be = ggml_backend_cpu_init();
    struct model m;
    model_init(&m, be);
    struct ggml_cpu_profile prof;
    memset(&prof, 0, sizeof(prof));
    get_set_profile()(be, &prof);
    CHECK(ggml_backend_graph_compute(be, m.gf) == GGML_STATUS_SUCCESS);
    CHECK(ggml_backend_graph_compute(be, m.gf) == GGML_STATUS_SUCCESS);
    get_set_profile()(be, NULL);

    FILE * f = tmpfile();
    CHECK(f != NULL);
    if (f != NULL && print_table != NULL) {
        struct ggml_cpu_profile_totals t;
        print_table(f, &prof, 2.0, "graph", &t);
        char * text = slurp(f);
        CHECK(text != NULL && strstr(text, "ms/graph") != NULL && strstr(text, "MUL_MAT f16") != NULL &&
              strstr(text, "UNARY SILU") != NULL && strstr(text, "all CPU nodes") != NULL);
        // the totals: every node, per the profile's rows
        CHECK_NEAR(t.n_nodes, 2 * 8, 0.5); // 2 MUL_MAT, 2 silu, 2 ADD, CONT, GET_ROWS
        CHECK_NEAR(t.weight_bytes, 2 * (2 * 2.0 * K * N + 2 * 2.0 * K), 0.5);
        CHECK(t.wall_ns > 0.0 && t.wall_ns <= prof.graph_ns);
        free(text);
        fclose(f);
    }
    free(prof.rows);
    model_free(&m);
    ggml_backend_free(be);
}

// GGML_CPU_PROFILE=1: a backend made then prints its profile when freed;
// =paired: with the pairs' summary
static void test_env_profile(const char * value) {
    FILE * f = tmpfile();
    CHECK(f != NULL);
    if (f == NULL) {
        return;
    }
    const bool paired = strcmp(value, "paired") == 0;
    setenv("GGML_CPU_PROFILE", value, 1);
    ggml_backend_t be = ggml_backend_cpu_init();
    unsetenv("GGML_CPU_PROFILE");
    struct model m;
    model_init(&m, be);
    for (int rep = 0; rep < 4; rep++) {
        CHECK(ggml_backend_graph_compute(be, m.gf) == GGML_STATUS_SUCCESS);
    }
    model_free(&m);

    fflush(stderr);
    const int saved = dup(fileno(stderr));
    CHECK(saved >= 0 && dup2(fileno(f), fileno(stderr)) >= 0);
    ggml_backend_free(be);
    fflush(stderr);
    dup2(saved, fileno(stderr));
    close(saved);

    fseek(f, 0, SEEK_END);
    char * text = slurp(f);
    CHECK_MSG(text != NULL && strstr(text, "CPU profile of a CPU backend (GGML_CPU_PROFILE): 4 graphs") != NULL &&
              strstr(text, "MUL_MAT f16") != NULL && strstr(text, "GET_ROWS f16") != NULL &&
              (strstr(text, "paired: 4 graphs that read weights") != NULL) == paired,
              "printed: %s", text != NULL ? text : "(nothing)");
    free(text);
    fclose(f);

    // without the variable: nothing printed, no profile kept
    ggml_backend_t quiet = ggml_backend_cpu_init();
    ggml_backend_free(quiet);
}

// A paired profile: after each graph that reads weights, one read on the
// backend's pool, kept with the graph's time and weight bytes; the results
// the same; the read's buffers gone when the profile is taken back; a graph
// of no weights (the same graph with the weights' buffer of another usage)
// not paired
static void test_paired(int n_threads) {
    ggml_backend_cpu_set_profile_t set_profile = get_set_profile();
    struct model m;
    float ref[N * M];
    ggml_backend_t be = backend_with_model(n_threads, &m, ref);

    struct ggml_cpu_profile prof;
    memset(&prof, 0, sizeof(prof));
    prof.paired = 1;
    set_profile(be, &prof);
    for (int rep = 0; rep < 3; rep++) {
        CHECK(ggml_backend_graph_compute(be, m.gf) == GGML_STATUS_SUCCESS);
    }
    CHECK(prof.probe != NULL);
    ggml_backend_buffer_set_usage(m.buf_w, GGML_BACKEND_BUFFER_USAGE_ANY);
    CHECK(ggml_backend_graph_compute(be, m.gf) == GGML_STATUS_SUCCESS); // no weights: no read
    ggml_backend_buffer_set_usage(m.buf_w, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    set_profile(be, NULL);
    CHECK(prof.probe == NULL);

    float got[N * M];
    ggml_backend_tensor_get(m.out, got, 0, sizeof(got));
    CHECK(memcmp(got, ref, sizeof(got)) == 0);
    CHECK_EQ_INT(prof.n_graphs, 4);
    CHECK_EQ_INT(prof.n_pairs, 3);
    const double w_graph = 2 * 2.0 * K * N + 2 * 2.0 * K;   // two products and two rows of w
    for (size_t i = 0; i < prof.n_pairs && i < 3; i++) {
        const struct ggml_cpu_profile_pair * q = &prof.pairs[i];
        CHECK_NEAR(q->weight_bytes, w_graph, 0.5);
        CHECK(q->graph_ns > 0.0 && q->read_gbs > 0.0 && q->read_gbs < 1e4);
        // after the first: from the end of the read before it, which took longer than the graph
        CHECK(q->token_ns >= q->graph_ns);
    }

    // the summary
    FILE * f = tmpfile();
    CHECK(f != NULL);
    ggml_backend_reg_t reg = ggml_backend_dev_backend_reg(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU));
    void * sym = ggml_backend_reg_get_proc_address(reg, "ggml_backend_cpu_profile_print_pairs");
    CHECK(sym != NULL);
    ggml_backend_cpu_profile_print_pairs_t print_pairs = NULL;
    memcpy(&print_pairs, &sym, sizeof(sym));
    if (f != NULL && print_pairs != NULL) {
        print_pairs(f, &prof);
        char * text = slurp(f);
        CHECK_MSG(text != NULL && strstr(text, "paired: 3 graphs that read weights") != NULL &&
                  strstr(text, "of the read after it") != NULL, "printed: %s", text != NULL ? text : "(nothing)");
        free(text);
        fclose(f);
    }
    free(prof.rows);
    free(prof.pairs);
    model_free(&m);
    ggml_backend_free(be);
}

int main(void) {
    test_paired(1);
    test_paired(2);
    test_print_table();
    test_env_profile("1");
    test_env_profile("paired");
    test_profile(1);
    test_profile(2);
    test_profile(3);
    test_not_cpu();
    return TEST_RESULT();
}
