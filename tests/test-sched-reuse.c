#define _POSIX_C_SOURCE 200809L
// test-sched-reuse: a new graph of the last graph's shape after
// ggml_backend_sched_reset, as an inference engine makes one per token.
//
// The scheduler may then skip its assignment passes and reuse the last
// graph's splits. What must hold, checked against a double-precision
// reference and against a fresh scheduler given the same graph:
//   - results, the backend of every node and the number of splits are those
//     of a fresh scheduler, token after token, with and without pipelining;
//   - the passes really are skipped: no backend is asked about any op
//     (supports_op) for a graph of the last one's shape;
//   - a graph that differs in anything (token count, an op parameter, where a
//     weight lives, one node more, a pin) is split afresh and is right;
//   - the same graph object given again after a reset is right, is not
//     asked about again, and is split afresh when it was changed in place
//     (an op parameter, a flag).
//
// Backends (tests/backend-test): GPU with device memory that has MUL_MAT,
// ADD and copies but not SCALE, and a CPU-typed one with host memory. Each
// layer is x' = scale(w x, s) + b with w and b in GPU memory for even layers
// and in host memory for odd ones: SCALE runs on the CPU, so every layer
// crosses between the two.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "testing.h"
#include "backend-test/test-backend.h"

#include <stdlib.h>
#include <string.h>

enum { N_EMBD = 8, N_LAYER = 4, MAX_TOKENS = 6 };

static const enum ggml_op k_gpu_ops[] = {
    GGML_OP_NONE, GGML_OP_VIEW, GGML_OP_RESHAPE, GGML_OP_PERMUTE, GGML_OP_TRANSPOSE,
    GGML_OP_ADD, GGML_OP_MUL, GGML_OP_MUL_MAT, GGML_OP_CPY, GGML_OP_DUP, GGML_OP_CONT,
};

// every supports_op question the GPU is asked
static int g_gpu_questions;
static bool count_question(const struct ggml_tensor * op, void * user_data) {
    (void) op;
    (void) user_data;
    g_gpu_questions++;
    return true;
}

struct env {
    ggml_backend_reg_t reg_gpu, reg_cpu;
    ggml_backend_t gpu, cpu;
    struct ggml_context * ctx_gpu, * ctx_cpu;
    ggml_backend_buffer_t buf_gpu, buf_cpu;
    struct ggml_tensor * w[N_LAYER], * b[N_LAYER];       // layer weights as placed
    struct ggml_tensor * w_alt[N_LAYER], * b_alt[N_LAYER]; // the same values in the other memory
    double wv[N_LAYER][N_EMBD * N_EMBD], bv[N_LAYER][N_EMBD];
};

static void set_values(struct ggml_tensor * t, const double * v, int n) {
    float f[N_EMBD * N_EMBD];
    for (int i = 0; i < n; i++) {
        f[i] = (float) v[i];
    }
    ggml_backend_tensor_set(t, f, 0, sizeof(float) * (size_t) n);
}

static void env_init(struct env * e) {
    struct test_backend_config gpu = {
        .name = "GPU", .type = GGML_BACKEND_DEVICE_TYPE_GPU, .host_memory = false, .events = true,
        .ops = k_gpu_ops, .n_ops = sizeof(k_gpu_ops) / sizeof(k_gpu_ops[0]),
        .supports_op_extra = count_question,
    };
    struct test_backend_config cpu = {
        .name = "CPUT", .type = GGML_BACKEND_DEVICE_TYPE_CPU, .host_memory = true, .events = true,
    };
    e->reg_gpu = test_backend_reg_new(&gpu);
    e->reg_cpu = test_backend_reg_new(&cpu);
    e->gpu = ggml_backend_dev_init(test_backend_device(e->reg_gpu), NULL);
    e->cpu = ggml_backend_dev_init(test_backend_device(e->reg_cpu), NULL);

    // GPU memory: even layers' weights and odd layers' alternates; host: the rest
    struct ggml_init_params p = { 8 * N_LAYER * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx_gpu = e->ctx_gpu = ggml_init(p);
    struct ggml_context * ctx_cpu = e->ctx_cpu = ggml_init(p);
    for (int l = 0; l < N_LAYER; l++) {
        struct ggml_context * home  = l % 2 == 0 ? ctx_gpu : ctx_cpu;
        struct ggml_context * other = l % 2 == 0 ? ctx_cpu : ctx_gpu;
        e->w[l]     = ggml_new_tensor_2d(home, GGML_TYPE_F32, N_EMBD, N_EMBD);
        e->b[l]     = ggml_new_tensor_1d(home, GGML_TYPE_F32, N_EMBD);
        e->w_alt[l] = ggml_new_tensor_2d(other, GGML_TYPE_F32, N_EMBD, N_EMBD);
        e->b_alt[l] = ggml_new_tensor_1d(other, GGML_TYPE_F32, N_EMBD);
        for (int i = 0; i < N_EMBD * N_EMBD; i++) {
            e->wv[l][i] = (double)((i * 37 + l * 11) % 17 - 8) / 16.0;
        }
        for (int i = 0; i < N_EMBD; i++) {
            e->bv[l][i] = (double)((i * 5 + l * 3) % 7 - 3) / 8.0;
        }
    }
    e->buf_gpu = ggml_backend_alloc_ctx_tensors(ctx_gpu, e->gpu);
    e->buf_cpu = ggml_backend_alloc_ctx_tensors_from_buft(ctx_cpu, ggml_backend_get_default_buffer_type(e->cpu));
    ggml_backend_buffer_set_usage(e->buf_gpu, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    ggml_backend_buffer_set_usage(e->buf_cpu, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    for (int l = 0; l < N_LAYER; l++) {
        set_values(e->w[l], e->wv[l], N_EMBD * N_EMBD);
        set_values(e->w_alt[l], e->wv[l], N_EMBD * N_EMBD);
        set_values(e->b[l], e->bv[l], N_EMBD);
        set_values(e->b_alt[l], e->bv[l], N_EMBD);
    }
}

static void env_free(struct env * e) {
    ggml_backend_buffer_free(e->buf_gpu);
    ggml_backend_buffer_free(e->buf_cpu);
    ggml_free(e->ctx_gpu);
    ggml_free(e->ctx_cpu);
    ggml_backend_free(e->gpu);
    ggml_backend_free(e->cpu);
    test_backend_reg_free(e->reg_gpu);
    test_backend_reg_free(e->reg_cpu);
}

// what a token's graph looks like
struct variant {
    int   n_tokens;
    float scale;         // of layer 1
    bool  moved_weight;  // layer 2 reads its weights from the other memory
    bool  extra_node;    // one more ADD at the end
};

struct token_graph {
    struct ggml_context * ctx;
    struct ggml_cgraph * gf;
    struct ggml_tensor * x, * out;
};

static float layer_scale(const struct variant * v, int l) {
    return l == 1 ? v->scale : 0.5f;
}

static void token_graph_build(struct token_graph * g, struct env * e, const struct variant * v) {
    struct ggml_init_params p = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    g->ctx = ggml_init(p);
    g->x = ggml_new_tensor_2d(g->ctx, GGML_TYPE_F32, N_EMBD, v->n_tokens);
    ggml_set_name(g->x, "x");
    ggml_set_input(g->x);
    struct ggml_tensor * cur = g->x;
    for (int l = 0; l < N_LAYER; l++) {
        const bool alt = v->moved_weight && l == 2;
        cur = ggml_mul_mat(g->ctx, alt ? e->w_alt[l] : e->w[l], cur);
        ggml_format_name(cur, "mm%d", l);
        cur = ggml_scale(g->ctx, cur, layer_scale(v, l));
        ggml_format_name(cur, "sc%d", l);
        cur = ggml_add(g->ctx, cur, alt ? e->b_alt[l] : e->b[l]);
        ggml_format_name(cur, "add%d", l);
    }
    if (v->extra_node) {
        cur = ggml_add(g->ctx, cur, cur);
        ggml_set_name(cur, "extra");
    }
    ggml_set_output(cur);
    g->out = cur;
    g->gf = ggml_new_graph(g->ctx);
    ggml_build_forward_expand(g->gf, cur);
}

static void token_input(const struct variant * v, int token, double * xv) {
    for (int i = 0; i < N_EMBD * v->n_tokens; i++) {
        xv[i] = (double)((i * 13 + token * 7) % 19 - 9) / 9.0;
    }
}

// the layers in double precision
static void reference(const struct env * e, const struct variant * v, const double * xv, double * out) {
    double cur[N_EMBD * MAX_TOKENS], next[N_EMBD * MAX_TOKENS];
    memcpy(cur, xv, sizeof(double) * N_EMBD * (size_t) v->n_tokens);
    for (int l = 0; l < N_LAYER; l++) {
        for (int t = 0; t < v->n_tokens; t++) {
            for (int i = 0; i < N_EMBD; i++) {
                double s = 0;
                for (int k = 0; k < N_EMBD; k++) {
                    s += e->wv[l][i * N_EMBD + k] * cur[t * N_EMBD + k];
                }
                next[t * N_EMBD + i] = s * (double) layer_scale(v, l) + e->bv[l][i];
            }
        }
        memcpy(cur, next, sizeof(double) * N_EMBD * (size_t) v->n_tokens);
    }
    for (int i = 0; i < N_EMBD * v->n_tokens; i++) {
        out[i] = v->extra_node ? 2 * cur[i] : cur[i];
    }
}

static const char * backend_of(ggml_backend_sched_t sched, struct ggml_tensor * t) {
    ggml_backend_t b = ggml_backend_sched_get_tensor_backend(sched, t);
    return b ? ggml_backend_name(b) : "NULL";
}

// a graph of this variant on a fresh scheduler: the assignment to expect
struct expected {
    int  n_splits;
    int  n_nodes;
    char backend[64][16];
};

static void expected_of(struct env * e, const struct variant * v, bool parallel, struct expected * x) {
    ggml_backend_t backends[2] = { e->gpu, e->cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, parallel, true);
    struct token_graph g;
    token_graph_build(&g, e, v);
    CHECK(ggml_backend_sched_alloc_graph(sched, g.gf));
    x->n_splits = ggml_backend_sched_get_n_splits(sched);
    x->n_nodes  = ggml_graph_n_nodes(g.gf);
    for (int i = 0; i < x->n_nodes && i < 64; i++) {
        snprintf(x->backend[i], sizeof(x->backend[i]), "%s", backend_of(sched, ggml_graph_node(g.gf, i)));
    }
    ggml_backend_sched_free(sched);
    ggml_free(g.ctx);
}

// reset, allocate and compute one token's graph on sched; check it against
// the reference and a fresh scheduler; the GPU's supports_op questions asked
static int run_token(ggml_backend_sched_t sched, struct env * e, const struct variant * v, bool parallel, int token,
                     struct token_graph * keep) {
    struct expected want;
    expected_of(e, v, parallel, &want);

    struct token_graph g;
    token_graph_build(&g, e, v);
    ggml_backend_sched_reset(sched);
    g_gpu_questions = 0;
    CHECK(ggml_backend_sched_alloc_graph(sched, g.gf));
    const int questions = g_gpu_questions;

    double xv[N_EMBD * MAX_TOKENS], ref[N_EMBD * MAX_TOKENS];
    float xf[N_EMBD * MAX_TOKENS], got[N_EMBD * MAX_TOKENS];
    token_input(v, token, xv);
    for (int i = 0; i < N_EMBD * v->n_tokens; i++) {
        xf[i] = (float) xv[i];
    }
    ggml_backend_tensor_set(g.x, xf, 0, sizeof(float) * N_EMBD * (size_t) v->n_tokens);
    CHECK(ggml_backend_sched_graph_compute_async(sched, g.gf) == GGML_STATUS_SUCCESS);
    ggml_backend_sched_synchronize(sched);
    ggml_backend_tensor_get(g.out, got, 0, sizeof(float) * N_EMBD * (size_t) v->n_tokens);
    reference(e, v, xv, ref);
    double worst = 0;
    for (int i = 0; i < N_EMBD * v->n_tokens; i++) {
        worst = fmax(worst, fabs(got[i] - ref[i]) / (1e-3 + fabs(ref[i])));
    }
    CHECK_MSG(worst < 1e-5, "token %d: relative error %g", token, worst);

    CHECK_EQ_INT(ggml_backend_sched_get_n_splits(sched), want.n_splits);
    CHECK_EQ_INT(ggml_graph_n_nodes(g.gf), want.n_nodes);
    for (int i = 0; i < want.n_nodes && i < 64; i++) {
        struct ggml_tensor * node = ggml_graph_node(g.gf, i);
        CHECK_MSG(strcmp(backend_of(sched, node), want.backend[i]) == 0, "token %d: %s on %s, a fresh scheduler says %s",
                  token, node->name, backend_of(sched, node), want.backend[i]);
    }
    // every node reads its sources (input copies by now) from memory its backend can use
    for (int i = 0; i < ggml_graph_n_nodes(g.gf); i++) {
        struct ggml_tensor * node = ggml_graph_node(g.gf, i);
        ggml_backend_t backend = ggml_backend_sched_get_tensor_backend(sched, node);
        for (int j = 0; j < GGML_MAX_SRC && backend != NULL && node->op != GGML_OP_NONE; j++) {
            const struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                continue;
            }
            ggml_backend_buffer_t buf = src->view_src ? src->view_src->buffer : src->buffer;
            CHECK_MSG(buf != NULL && ggml_backend_supports_buft(backend, ggml_backend_buffer_get_type(buf)),
                      "token %d: %s on %s reads %s from %s", token, node->name, ggml_backend_name(backend), src->name,
                      buf ? ggml_backend_buffer_name(buf) : "no buffer");
        }
    }
    if (keep != NULL) {
        *keep = g;
    } else {
        ggml_free(g.ctx);
    }
    return questions;
}

static void test_tokens(bool parallel) {
    struct env e;
    env_init(&e);
    ggml_backend_t backends[2] = { e.gpu, e.cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, parallel, true);
    const struct variant v = { .n_tokens = 3, .scale = 0.5f };
    CHECK(run_token(sched, &e, &v, parallel, 0, NULL) > 0);
    // the splits of the first graph serve every later one: nothing is asked
    for (int token = 1; token < 9; token++) {
        CHECK_EQ_INT(run_token(sched, &e, &v, parallel, token, NULL), 0);
    }
    ggml_backend_sched_free(sched);
    env_free(&e);
}

// every difference from the last graph is split afresh (questions asked),
// and a return to the old shape after it is right again
static void test_changes(void) {
    struct env e;
    env_init(&e);
    ggml_backend_t backends[2] = { e.gpu, e.cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, false, true);
    const struct variant base = { .n_tokens = 3, .scale = 0.5f };
    const struct variant changed[] = {
        { .n_tokens = 5, .scale = 0.5f },                        // sizes
        { .n_tokens = 3, .scale = -2.0f },                       // an op parameter
        { .n_tokens = 3, .scale = 0.5f, .moved_weight = true },  // a weight in the other memory
        { .n_tokens = 3, .scale = 0.5f, .extra_node = true },    // one node more
    };
    int token = 0;
    CHECK(run_token(sched, &e, &base, false, token++, NULL) > 0);
    for (size_t k = 0; k < sizeof(changed) / sizeof(changed[0]); k++) {
        CHECK_MSG(run_token(sched, &e, &changed[k], false, token++, NULL) > 0, "change %zu: not split afresh", k);
        CHECK_EQ_INT(run_token(sched, &e, &changed[k], false, token++, NULL), 0);
        CHECK_MSG(run_token(sched, &e, &base, false, token++, NULL) > 0, "change %zu: back not split afresh", k);
    }
    ggml_backend_sched_free(sched);
    env_free(&e);
}

// a pin made after the reset holds on a graph of the last one's shape, and
// the same graph object given again after a reset is right
static void test_pin_and_same_graph(void) {
    struct env e;
    env_init(&e);
    ggml_backend_t backends[2] = { e.gpu, e.cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, false, true);
    const struct variant v = { .n_tokens = 2, .scale = 0.5f };
    CHECK(run_token(sched, &e, &v, false, 0, NULL) > 0);

    struct token_graph g;
    token_graph_build(&g, &e, &v);
    ggml_backend_sched_reset(sched);
    struct ggml_tensor * add0 = ggml_graph_get_tensor(g.gf, "add0"); // GPU by its bias
    ggml_backend_sched_set_tensor_backend(sched, add0, e.cpu);
    CHECK(ggml_backend_sched_alloc_graph(sched, g.gf));
    CHECK(strcmp(backend_of(sched, add0), "CPUT") == 0);
    ggml_free(g.ctx);

    struct token_graph kept;
    run_token(sched, &e, &v, false, 1, &kept);
    for (int again = 0; again < 3; again++) {
        double xv[N_EMBD * MAX_TOKENS], ref[N_EMBD * MAX_TOKENS];
        float xf[N_EMBD * MAX_TOKENS], got[N_EMBD * MAX_TOKENS];
        ggml_backend_sched_reset(sched);
        CHECK(ggml_backend_sched_alloc_graph(sched, kept.gf));
        token_input(&v, 10 + again, xv);
        for (int i = 0; i < N_EMBD * v.n_tokens; i++) {
            xf[i] = (float) xv[i];
        }
        ggml_backend_tensor_set(kept.x, xf, 0, sizeof(float) * N_EMBD * (size_t) v.n_tokens);
        CHECK(ggml_backend_sched_graph_compute(sched, kept.gf) == GGML_STATUS_SUCCESS);
        ggml_backend_tensor_get(kept.out, got, 0, sizeof(float) * N_EMBD * (size_t) v.n_tokens);
        reference(&e, &v, xv, ref);
        for (int i = 0; i < N_EMBD * v.n_tokens; i++) {
            CHECK_NEAR(got[i], ref[i], 1e-5 * (1e-3 + fabs(ref[i])));
        }
    }
    ggml_free(kept.ctx);
    ggml_backend_sched_free(sched);
    env_free(&e);
}

// one graph object allocated again and again: unchanged it is not asked
// about; changed in place (the scheduler keeps a byte image of its tensors
// to know it unchanged) it is split afresh and right
static void compute_kept(ggml_backend_sched_t sched, struct env * e, struct token_graph * g, const struct variant * v,
                         int token, int * questions) {
    double xv[N_EMBD * MAX_TOKENS], ref[N_EMBD * MAX_TOKENS];
    float xf[N_EMBD * MAX_TOKENS], got[N_EMBD * MAX_TOKENS];
    ggml_backend_sched_reset(sched);
    g_gpu_questions = 0;
    CHECK(ggml_backend_sched_alloc_graph(sched, g->gf));
    *questions = g_gpu_questions;
    token_input(v, token, xv);
    for (int i = 0; i < N_EMBD * v->n_tokens; i++) {
        xf[i] = (float) xv[i];
    }
    ggml_backend_tensor_set(g->x, xf, 0, sizeof(float) * N_EMBD * (size_t) v->n_tokens);
    CHECK(ggml_backend_sched_graph_compute(sched, g->gf) == GGML_STATUS_SUCCESS);
    ggml_backend_tensor_get(g->out, got, 0, sizeof(float) * N_EMBD * (size_t) v->n_tokens);
    reference(e, v, xv, ref);
    for (int i = 0; i < N_EMBD * v->n_tokens; i++) {
        CHECK_NEAR(got[i], ref[i], 1e-5 * (1e-3 + fabs(ref[i])));
    }
    struct expected want;
    expected_of(e, v, false, &want);
    CHECK_EQ_INT(ggml_backend_sched_get_n_splits(sched), want.n_splits);
    for (int i = 0; i < want.n_nodes && i < 64; i++) {
        struct ggml_tensor * node = ggml_graph_node(g->gf, i);
        CHECK_MSG(strcmp(backend_of(sched, node), want.backend[i]) == 0, "token %d: %s on %s, a fresh scheduler says %s",
                  token, node->name, backend_of(sched, node), want.backend[i]);
    }
}

static void test_same_graph_changed_in_place(void) {
    struct env e;
    env_init(&e);
    ggml_backend_t backends[2] = { e.gpu, e.cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, false, true);
    struct variant v = { .n_tokens = 3, .scale = 0.5f };
    struct token_graph g;
    token_graph_build(&g, &e, &v);
    int questions = 0;
    compute_kept(sched, &e, &g, &v, 0, &questions);
    CHECK(questions > 0);
    for (int again = 1; again < 4; again++) {
        compute_kept(sched, &e, &g, &v, again, &questions);
        CHECK_EQ_INT(questions, 0);
    }
    // an op parameter: layer 1's scale
    struct ggml_tensor * sc1 = ggml_graph_get_tensor(g.gf, "sc1");
    v.scale = -2.0f;
    memcpy(sc1->op_params, &v.scale, sizeof(float));
    compute_kept(sched, &e, &g, &v, 10, &questions);
    CHECK_MSG(questions > 0, "a scale changed in place was not split afresh");
    compute_kept(sched, &e, &g, &v, 11, &questions);
    CHECK_EQ_INT(questions, 0);
    // a flag: layer 1's sum becomes an output (its memory is then kept)
    ggml_set_output(ggml_graph_get_tensor(g.gf, "add1"));
    compute_kept(sched, &e, &g, &v, 12, &questions);
    CHECK_MSG(questions > 0, "an output flag set in place was not split afresh");
    compute_kept(sched, &e, &g, &v, 13, &questions);
    CHECK_EQ_INT(questions, 0);
    ggml_free(g.ctx);
    ggml_backend_sched_free(sched);
    env_free(&e);
}

int main(void) {
    test_tokens(false);
    test_tokens(true);
    test_changes();
    test_pin_and_same_graph();
    test_same_graph_changed_in_place();
    return TEST_RESULT();
}
