// run.c: one case on one backend, in test, perf or support mode.
//
// What is contained: a case whose tensors cannot be allocated, whose graph
// cannot be copied to the CPU backend, or whose computation returns an error
// status is reported as failed with the reason, and the run goes on. A crash
// or an abort inside a backend ends the process: console output prints the
// case name before the case runs and the abort callback names it, so the
// output shows which case it was.

#include "tbo-run.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    TBO_CTX_TENSORS     = 1024, // arena of one case: the largest case has well under 100 tensors
    TBO_TEST_GRAPH_SIZE = GGML_DEFAULT_GRAPH_SIZE,
    TBO_PERF_GRAPH_SIZE = 8192, // perf repeats the op in one graph up to this many nodes
};

// --quick: the cases whose reference evaluation takes at most this many
// multiply-adds or element visits (a few milliseconds), at most this many
// per op name and combination of types
static const double TBO_QUICK_MAX_COST      = 2e6;
static const size_t TBO_QUICK_MAX_PER_GROUP = 8;

enum case_status {
    CASE_SKIPPED,      // filtered out: nothing printed
    CASE_NOT_SUPPORTED,
    CASE_OK,
    CASE_FAIL,
};

static _Thread_local const char * g_current_case = NULL;

const char * tbo_current_case(void) {
    return g_current_case;
}

//
// filters
//

// -o: a comma separated list of op names ("ADD") or full case names
// ("ADD(type=f32,ne=[10,5,4,3],...)", whose commas sit inside the parentheses)
bool tbo_matches_op_filter(const char * filter, const char * op_name, const char * full_name) {
    if (filter == NULL) {
        return true;
    }
    const char * f = filter;
    while (*f != '\0') {
        const char * comma  = strchr(f, ',');
        const char * lparen = strchr(f, '(');
        size_t len;
        bool full = false;
        if (lparen != NULL && (comma == NULL || lparen < comma)) {
            const char * rparen = strchr(lparen, ')');
            comma = rparen != NULL ? strchr(rparen, ',') : NULL;
            full = true;
        }
        len = comma != NULL ? (size_t) (comma - f) : strlen(f);
        const char * name = full ? full_name : op_name;
        if (strlen(name) == len && strncmp(name, f, len) == 0) {
            return true;
        }
        if (comma == NULL) {
            break;
        }
        f = comma + 1;
    }
    return false;
}

//
// building a case
//

struct case_graph {
    struct ggml_context * ctx;
    bool                  in_arena; // ctx lives in this thread's arena (case_arena)
    struct tbo_build      b;
    struct ggml_tensor *  out;
    const char *          op_name;
    char *                full_name;
};

// The memory of a case's context, one per thread, reused by the cases that
// follow (a graph of its own where one is still alive): a fresh block of half
// a megabyte per case would cost a map and an unmap each under
// AddressSanitizer, some seconds over the thousands of cases --quick looks at.
// Kept to the end of the thread (reachable: no leak).
static _Thread_local struct {
    void * mem;
    size_t size;
    bool   busy;
} case_arena;

static void * case_arena_take(size_t size) {
    if (case_arena.busy) {
        return NULL;
    }
    if (case_arena.size < size) {
        void * grown = realloc(case_arena.mem, size);
        if (grown == NULL) {
            return NULL;
        }
        case_arena.mem  = grown;
        case_arena.size = size;
    }
    case_arena.busy = true;
    return case_arena.mem;
}

static bool case_graph_build(struct case_graph * g, const struct tbo_case * c, enum tbo_mode mode, size_t graph_size) {
    const size_t size = ggml_tensor_overhead() * TBO_CTX_TENSORS + ggml_graph_overhead_custom(graph_size, false);
    *g = (struct case_graph) { 0 };
    void * mem = case_arena_take(size);
    const struct ggml_init_params params = {
        .mem_size   = size,
        .mem_buffer = mem,
        .no_alloc   = true,
    };
    g->in_arena = mem != NULL;
    g->ctx = ggml_init(params);
    if (g->ctx == NULL && g->in_arena) {
        case_arena.busy = false;
    }
    if (g->ctx == NULL) {
        return false;
    }
    tbo_build_init(&g->b, g->ctx, mode);
    tbo_add_sentinel(&g->b); // before the graph
    g->out = c->cls->build(c, &g->b);
    g->op_name = tbo_case_op_desc(c, g->out);
    struct tbo_str s = { 0 };
    tbo_str_printf(&s, "%s(%s)", g->op_name, c->vars);
    g->full_name = s.s;
    return true;
}

static void case_graph_free(struct case_graph * g) {
    tbo_build_free(&g->b);
    free(g->full_name);
    if (g->ctx != NULL) {
        ggml_free(g->ctx);
        if (g->in_arena) {
            case_arena.busy = false;
        }
    }
    *g = (struct case_graph) { 0 };
}

// multiply-adds of the reference evaluation, or element visits for the other ops
static double node_cost(const struct ggml_tensor * t) {
    const double n = (double) ggml_nelements(t);
    switch (t->op) {
        case GGML_OP_MUL_MAT:
        case GGML_OP_MUL_MAT_ID:
            return n * (double) t->src[0]->ne[0];
        case GGML_OP_OUT_PROD:
            return n * (double) t->src[0]->ne[1];
        case GGML_OP_FLASH_ATTN_EXT:
            return (double) ggml_nrows(t->src[0]) * (double) t->src[1]->ne[1] * (double) (t->src[0]->ne[0] + t->src[2]->ne[0]);
        // convolutions: every output (input, for the transposed ones) meets a kernel's worth of values
        case GGML_OP_CONV_2D:
            return n * (double) (t->src[0]->ne[0] * t->src[0]->ne[1] * t->src[0]->ne[2]);
        case GGML_OP_CONV_3D: {
            int32_t ic; // op_params[9]
            memcpy(&ic, (const char *) t->op_params + 9 * sizeof(int32_t), sizeof(ic));
            return n * (double) (t->src[0]->ne[0] * t->src[0]->ne[1] * t->src[0]->ne[2]) * ic;
        }
        case GGML_OP_CONV_2D_DW:
            return n * (double) (t->src[0]->ne[0] * t->src[0]->ne[1]);
        case GGML_OP_CONV_TRANSPOSE_1D:
        case GGML_OP_CONV_TRANSPOSE_2D:
            return (double) ggml_nelements(t->src[1]) * (double) ggml_nelements(t->src[0]) / (double) t->src[0]->ne[t->op == GGML_OP_CONV_TRANSPOSE_1D ? 2 : 3];
        default: {
            double c = n;
            for (int i = 0; i < GGML_MAX_SRC; i++) {
                if (t->src[i] != NULL) {
                    c += (double) ggml_nelements(t->src[i]);
                }
            }
            return c;
        }
    }
}

static double graph_cost(struct ggml_context * ctx) {
    double cost = 0.0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->op != GGML_OP_NONE && !tbo_is_view_op(t->op)) {
            cost += node_cost(t);
        }
    }
    return cost;
}

static uint64_t case_seed(uint64_t seed, size_t index) {
    return seed ^ ((uint64_t) (index + 1) * 0x9e3779b97f4a7c15ULL);
}

static void init_case(const struct tbo_case * c, struct ggml_context * ctx, uint64_t seed) {
    struct tbo_rng rng;
    tbo_rng_seed(&rng, seed);
    if (c->cls->init != NULL) {
        c->cls->init(c, ctx, &rng);
    } else {
        tbo_init_all_uniform(&rng, ctx, -1.0f, 1.0f);
    }
}

static const char * backend_label(ggml_backend_t backend) {
    return backend != NULL ? ggml_backend_name(backend) : "reference";
}

//
// comparing results
//

struct cmp {
    bool   ok;
    double worst_ratio; // the largest err / max_err of the nodes compared
    double worst_err;
    bool   ties;        // a quantized result passed as another rounding of ties
    char   detail[320];
};

static bool inf_or_max(double v) {
    return isinf(v) || fabs(v) >= (double) FLT_MAX;
}

static void cmp_fail(struct cmp * cmp, const char * fmt, const char * op, size_t i, const char * n1, double v1, const char * n2, double v2) {
    if (cmp->ok) {
        snprintf(cmp->detail, sizeof(cmp->detail), fmt, op, i, n1, v1, n2, v2);
    }
    cmp->ok = false;
}

// trusted: the CPU backend's or the reference's values; tested: the backend's
static void compare_values(struct cmp * cmp, const struct tbo_case * c, const struct tbo_build * b, const struct ggml_tensor * node,
                           const double * trusted, const double * tested, size_t n, const char * tested_name,
                           const char * trusted_name, bool vs_ref) {
    const char * op = ggml_op_desc(node);
    for (size_t i = 0; i < n; i++) {
        if (isnan(trusted[i]) || isnan(tested[i])) {
            cmp_fail(cmp, "[%s] NaN at index %zu: %s=%g %s=%g", op, i, tested_name, tested[i], trusted_name, trusted[i]);
            return;
        }
        if (inf_or_max(trusted[i]) || inf_or_max(tested[i])) {
            if (!inf_or_max(trusted[i]) || !inf_or_max(tested[i])) {
                cmp_fail(cmp, "[%s] inf mismatch at index %zu: %s=%g %s=%g", op, i, tested_name, tested[i], trusted_name, trusted[i]);
                return;
            }
            if (signbit(trusted[i]) != signbit(tested[i])) {
                cmp_fail(cmp, "[%s] inf sign mismatch at index %zu: %s=%g %s=%g", op, i, tested_name, tested[i], trusted_name, trusted[i]);
                return;
            }
        }
    }
    const double err = c->cls->err != NULL ? c->cls->err(c, b, trusted, tested, n) : tbo_nmse(trusted, tested, n);
    const double max_err = tbo_case_max_err(c);
    // against the reference, a quantized result may round ties the other way
    const bool ties_ok = vs_ref && node->src[0] != NULL && node->type != node->src[0]->type && tbo_ref_quant_ties_ok(node->type, trusted, tested, n);
    if (!(err <= max_err) && !ties_ok) {
        if (cmp->ok) {
            snprintf(cmp->detail, sizeof(cmp->detail), "[%s] err %.3e > %.3e", op, err, max_err);
        }
        cmp->ok = false;
        return;
    }
    cmp->ties = cmp->ties || (ties_ok && !(err <= max_err));
    const double ratio = max_err > 0.0 ? err / max_err : 0.0;
    if (ratio >= cmp->worst_ratio) {
        cmp->worst_ratio = ratio;
        cmp->worst_err   = err;
    }
}

static void compare_sentinel(struct cmp * cmp, const struct ggml_tensor * s, const uint8_t * expected) {
    const size_t nbytes = ggml_nbytes(s);
    uint8_t * now = tbo_malloc(nbytes);
    ggml_backend_tensor_get(s, now, 0, nbytes);
    if (memcmp(now, expected, nbytes) != 0) {
        if (cmp->ok) {
            snprintf(cmp->detail, sizeof(cmp->detail), "sentinel %s overwritten: an op wrote out of bounds", s->name);
        }
        cmp->ok = false;
    }
    free(now);
}

static uint8_t * tensor_bytes(const struct ggml_tensor * t) {
    const size_t nbytes = ggml_nbytes(t);
    uint8_t * bytes = tbo_malloc(nbytes);
    ggml_backend_tensor_get(t, bytes, 0, nbytes);
    return bytes;
}

// the other side of a comparison: the CPU backend running a copy of the graph, or the reference
struct trusted_side {
    ggml_backend_t                 cpu;
    struct ggml_backend_graph_copy copy;
    struct tbo_ref *               ref;
    uint8_t **                     sentinel_bytes; // reference mode: the sentinels as initialised
};

static bool is_sentinel(const struct tbo_build * b, const struct ggml_tensor * t, int * index) {
    for (int i = 0; i < b->n_sentinels; i++) {
        if (b->sentinels[i] == t) {
            *index = i;
            return true;
        }
    }
    return false;
}

static void compare_node(struct cmp * cmp, const struct tbo_case * c, const struct tbo_build * b, struct trusted_side * side,
                         struct ggml_cgraph * gf, int i, const char * tested_name) {
    struct ggml_tensor * t1 = ggml_graph_node(gf, i);
    int si;
    if (is_sentinel(b, t1, &si)) {
        if (side->cpu != NULL) {
            uint8_t * expected = tensor_bytes(ggml_graph_node(side->copy.graph, i));
            compare_sentinel(cmp, t1, expected);
            free(expected);
        } else {
            compare_sentinel(cmp, t1, side->sentinel_bytes[si]);
        }
        return;
    }
    double * tested = tbo_tensor_to_double(t1);
    double * trusted = side->cpu != NULL ? tbo_tensor_to_double(ggml_graph_node(side->copy.graph, i)) : tbo_ref_values(side->ref, t1);
    compare_values(cmp, c, b, t1, trusted, tested, (size_t) ggml_nelements(t1), tested_name, backend_label(side->cpu),
                   side->cpu == NULL);
    free(trusted);
    free(tested);
}

static void ref_compute(const struct tbo_case * c, struct tbo_ref * ref, const struct ggml_tensor * node) {
    if (c->cls->ref_supports != NULL && c->cls->ref_supports(c, node)) {
        c->cls->ref_compute(c, ref, node);
    } else {
        tbo_ref_compute(ref, node);
    }
}

static bool is_test_node(const struct tbo_build * b, const struct ggml_tensor * out, const struct ggml_tensor * t) {
    if (b->n_test_nodes == 0) {
        return t == out;
    }
    for (int i = 0; i < b->n_test_nodes; i++) {
        if (b->test_nodes[i] == t) {
            return true;
        }
    }
    return false;
}

// computes the graph on both sides, whole or node by node, comparing as it goes;
// false with a message in cmp->detail when a side reports an error
static bool compute_and_compare(struct cmp * cmp, const struct tbo_case * c, struct case_graph * g, ggml_backend_t backend,
                                struct trusted_side * side, struct ggml_cgraph * gf) {
    const int n_nodes = ggml_graph_n_nodes(gf);
    const char * tested_name = ggml_backend_name(backend);

    if (tbo_case_run_whole_graph(c)) {
        enum ggml_status st = ggml_backend_graph_compute(backend, gf);
        if (st != GGML_STATUS_SUCCESS) {
            snprintf(cmp->detail, sizeof(cmp->detail), "%s error: %s", tested_name, ggml_status_to_string(st));
            return false;
        }
        if (side->cpu != NULL) {
            st = ggml_backend_graph_compute(side->cpu, side->copy.graph);
            if (st != GGML_STATUS_SUCCESS) {
                snprintf(cmp->detail, sizeof(cmp->detail), "%s error: %s", ggml_backend_name(side->cpu), ggml_status_to_string(st));
                return false;
            }
        } else {
            for (int i = 0; i < n_nodes; i++) {
                ref_compute(c, side->ref, ggml_graph_node(gf, i));
            }
        }
        for (int i = 0; i < n_nodes; i++) {
            struct ggml_tensor * t = ggml_graph_node(gf, i);
            int si;
            if (is_test_node(&g->b, g->out, t) || is_sentinel(&g->b, t, &si)) {
                compare_node(cmp, c, &g->b, side, gf, i, tested_name);
            }
        }
        return true;
    }

    // node by node, through one-node graphs (the graph internals are not public)
    const struct ggml_init_params params = {
        .mem_size   = 2 * ggml_graph_overhead_custom(1, false),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    struct ggml_context * one = ggml_init(params);
    if (one == NULL) {
        snprintf(cmp->detail, sizeof(cmp->detail), "cannot create a context for one-node graphs");
        return false;
    }
    struct ggml_cgraph * g1 = ggml_new_graph_custom(one, 1, false);
    struct ggml_cgraph * g2 = ggml_new_graph_custom(one, 1, false);
    bool ok = true;
    for (int i = 0; i < n_nodes && ok; i++) {
        struct ggml_tensor * t = ggml_graph_node(gf, i);
        ggml_graph_clear(g1);
        ggml_graph_add_node(g1, t);
        enum ggml_status st = ggml_backend_graph_compute(backend, g1);
        if (st != GGML_STATUS_SUCCESS) {
            snprintf(cmp->detail, sizeof(cmp->detail), "%s error in %s: %s", tested_name, ggml_op_desc(t), ggml_status_to_string(st));
            ok = false;
            break;
        }
        if (side->cpu != NULL) {
            ggml_graph_clear(g2);
            ggml_graph_add_node(g2, ggml_graph_node(side->copy.graph, i));
            st = ggml_backend_graph_compute(side->cpu, g2);
            if (st != GGML_STATUS_SUCCESS) {
                snprintf(cmp->detail, sizeof(cmp->detail), "%s error in %s: %s", ggml_backend_name(side->cpu), ggml_op_desc(t),
                         ggml_status_to_string(st));
                ok = false;
                break;
            }
        } else {
            ref_compute(c, side->ref, t);
        }
        if (!tbo_is_view_op(t->op)) {
            compare_node(cmp, c, &g->b, side, gf, i, tested_name);
        }
    }
    ggml_free(one);
    return ok;
}

//
// test mode
//

// "MUL_MAT(q4_0, f16 -> f32)": an op with the types of its sources and result
static void describe_node(char * buf, size_t size, const struct ggml_tensor * t) {
    size_t len = (size_t) snprintf(buf, size, "%s(", ggml_op_desc(t));
    bool first = true;
    for (int i = 0; i < GGML_MAX_SRC && len < size; i++) {
        if (t->src[i] != NULL) {
            len += (size_t) snprintf(buf + len, size - len, "%s%s", first ? "" : ", ", ggml_type_name(t->src[i]->type));
            first = false;
        }
    }
    if (len < size) {
        snprintf(buf + len, size - len, "%s%s)", first ? "" : " -> ", ggml_type_name(t->type));
    }
}

static void report(const struct tbo_printer * p, const char * backend_name, const struct case_graph * g, const struct tbo_case * c,
                   enum tbo_mode mode, bool supported, bool passed, const char * error, const char * detail) {
    const struct tbo_result r = {
        .backend_name  = backend_name,
        .op_name       = g->op_name,
        .op_params     = c->vars,
        .mode          = mode,
        .supported     = supported,
        .passed        = passed,
        .error_message = error,
        .detail        = detail,
    };
    tbo_print_result(p, &r);
}

static bool ref_can_compute(const struct tbo_case * c, const struct ggml_tensor * t) {
    const char * why = NULL;
    return tbo_ref_supports(t, &why) || (c->cls->ref_supports != NULL && c->cls->ref_supports(c, t));
}

// Which side a case is compared with: the CPU backend where it supports every
// tensor of the case, else the reference where it does (*trusted NULL). False,
// with who lacks support and for which node, if the tested backend or both lack it.
static bool choose_trusted_side(const struct tbo_case * c, struct ggml_context * ctx, ggml_backend_t backend, ggml_backend_t cpu,
                                ggml_backend_t * trusted, char * who, size_t who_size, char * reason, size_t reason_size) {
    const struct ggml_tensor * no_backend = NULL;
    const struct ggml_tensor * no_cpu     = NULL;
    const struct ggml_tensor * no_ref     = NULL;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (no_backend == NULL && !ggml_backend_supports_op(backend, t)) {
            no_backend = t;
        }
        if (cpu != NULL && no_cpu == NULL && !ggml_backend_supports_op(cpu, t)) {
            no_cpu = t;
        }
        if (no_ref == NULL && !ref_can_compute(c, t)) {
            no_ref = t;
        }
    }
    if (no_backend != NULL) {
        snprintf(who, who_size, "%s", ggml_backend_name(backend));
        describe_node(reason, reason_size, no_backend);
        return false;
    }
    if (cpu != NULL && no_cpu == NULL) {
        *trusted = cpu;
        return true;
    }
    if (no_ref == NULL) {
        *trusted = NULL;
        return true;
    }
    snprintf(who, who_size, "%s%s", cpu != NULL ? ggml_backend_name(cpu) : "", cpu != NULL ? ", reference" : "reference");
    describe_node(reason, reason_size, no_ref);
    return false;
}

static void trusted_side_free(struct trusted_side * side, int n_sentinels) {
    if (side->sentinel_bytes != NULL) {
        for (int i = 0; i < n_sentinels; i++) {
            free(side->sentinel_bytes[i]);
        }
        free(side->sentinel_bytes);
    }
    tbo_ref_free(side->ref);
    if (side->cpu != NULL && side->copy.buffer != NULL) {
        ggml_backend_graph_copy_free(side->copy);
    }
}

// the trusted side's copy of the inputs: the graph copied to the CPU backend, or the reference's images
static bool trusted_side_init(struct trusted_side * side, struct case_graph * g, struct ggml_cgraph * gf, char * detail, size_t size) {
    if (side->cpu != NULL) {
        side->copy = ggml_backend_graph_copy(side->cpu, gf);
        if (side->copy.buffer == NULL) {
            snprintf(detail, size, "failed to copy the graph to %s", ggml_backend_name(side->cpu));
            return false;
        }
        return true;
    }
    side->ref = tbo_ref_new(g->ctx);
    if (side->ref == NULL) {
        snprintf(detail, size, "the reference cannot read the inputs");
        return false;
    }
    side->sentinel_bytes = tbo_calloc((size_t) g->b.n_sentinels, sizeof(uint8_t *));
    for (int i = 0; i < g->b.n_sentinels; i++) {
        side->sentinel_bytes[i] = tensor_bytes(g->b.sentinels[i]);
    }
    return true;
}

// allocates, initialises, computes and compares one supported case
static enum case_status run_test(const struct tbo_case * c, size_t index, struct case_graph * g, ggml_backend_t backend,
                                 ggml_backend_t trusted, bool fell_back, uint64_t seed, char * detail, size_t size) {
    enum case_status status = CASE_FAIL;
    struct trusted_side side = { .cpu = trusted };
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(g->ctx, backend);
    if (buf == NULL) {
        snprintf(detail, size, "failed to allocate tensors [%s]", ggml_backend_name(backend));
        return CASE_FAIL;
    }

    struct ggml_cgraph * gf = ggml_new_graph_custom(g->ctx, TBO_TEST_GRAPH_SIZE, false);
    ggml_build_forward_expand(gf, g->out);
    for (int i = 0; i < g->b.n_sentinels; i++) {
        ggml_graph_add_node(gf, g->b.sentinels[i]);
    }
    init_case(c, g->ctx, case_seed(seed, index));

    struct cmp cmp = { .ok = true };
    if (!trusted_side_init(&side, g, gf, detail, size)) {
        // detail says why
    } else if (!compute_and_compare(&cmp, c, g, backend, &side, gf) || !cmp.ok) {
        snprintf(detail, size, "%s", cmp.detail);
    } else {
        const char * vs = fell_back ? ", against the reference" : "";
        if (cmp.ties) {
            snprintf(detail, size, "err %.2e, max %.2e: rounding ties only%s", cmp.worst_err, tbo_case_max_err(c), vs);
        } else {
            snprintf(detail, size, "err %.2e <= %.2e%s", cmp.worst_err, tbo_case_max_err(c), vs);
        }
        status = CASE_OK;
    }
    trusted_side_free(&side, g->b.n_sentinels);
    ggml_backend_buffer_free(buf);
    return status;
}

static enum case_status eval_test(const struct tbo_case * c, size_t index, ggml_backend_t backend, ggml_backend_t cpu,
                                  const struct tbo_run_opts * opts, const struct tbo_printer * p) {
    struct case_graph g;
    if (!case_graph_build(&g, c, TBO_MODE_TEST, TBO_TEST_GRAPH_SIZE)) {
        fprintf(stderr, "test-backend-ops: cannot create a context for case %zu\n", index);
        return CASE_FAIL;
    }
    if (!tbo_matches_op_filter(opts->op_filter, g.op_name, g.full_name)) {
        case_graph_free(&g);
        return CASE_SKIPPED;
    }
    g_current_case = g.full_name;
    tbo_print_case_start(p, TBO_MODE_TEST, g.op_name, c->vars);

    enum case_status status;
    ggml_backend_t trusted = NULL;
    char who[128] = "";
    char detail[320] = "";
    if (!choose_trusted_side(c, g.ctx, backend, cpu, &trusted, who, sizeof(who), detail, sizeof(detail))) {
        report(p, who, &g, c, TBO_MODE_TEST, false, false, "not supported", detail);
        status = CASE_NOT_SUPPORTED;
    } else {
        tbo_add_sentinel(&g.b); // after the graph
        status = run_test(c, index, &g, backend, trusted, cpu != NULL && trusted == NULL, opts->seed, detail, sizeof(detail));
        report(p, ggml_backend_name(backend), &g, c, TBO_MODE_TEST, true, status == CASE_OK, status == CASE_OK ? "" : detail, detail);
    }
    case_graph_free(&g);
    g_current_case = NULL;
    return status;
}

//
// perf mode: the op repeated in one graph, timed for at least a second
//

static size_t node_op_size(const struct ggml_tensor * t) {
    size_t size = ggml_nbytes(t);
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (t->src[i] != NULL) {
            size += ggml_nbytes(t->src[i]);
        }
    }
    return size;
}

static enum case_status eval_perf(const struct tbo_case * c, size_t index, ggml_backend_t backend, const struct tbo_run_opts * opts,
                                  const struct tbo_printer * p) {
    struct case_graph g;
    if (!case_graph_build(&g, c, TBO_MODE_PERF, TBO_PERF_GRAPH_SIZE)) {
        fprintf(stderr, "test-backend-ops: cannot create a context for case %zu\n", index);
        return CASE_FAIL;
    }
    if (!tbo_matches_op_filter(opts->op_filter, g.op_name, g.full_name)) {
        case_graph_free(&g);
        return CASE_SKIPPED;
    }
    g_current_case = g.full_name;
    struct tbo_result r = {
        .backend_name = ggml_backend_name(backend),
        .op_name      = g.op_name,
        .op_params    = c->vars,
        .mode         = TBO_MODE_PERF,
    };
    if (!ggml_backend_supports_op(backend, g.out)) {
        r.error_message = "not supported";
        tbo_print_result(p, &r);
        case_graph_free(&g);
        g_current_case = NULL;
        return CASE_NOT_SUPPORTED;
    }
    r.supported = true;

    enum case_status status = CASE_FAIL;
    char detail[256] = "";
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(g.ctx, backend);
    if (buf == NULL) {
        snprintf(detail, sizeof(detail), "failed to allocate tensors");
        goto done;
    }
    init_case(c, g.ctx, case_seed(opts->seed, index));

    struct ggml_cgraph * gf = ggml_new_graph_custom(g.ctx, TBO_PERF_GRAPH_SIZE, false);
    ggml_build_forward_expand(gf, g.out);

    enum ggml_status st = ggml_backend_graph_compute(backend, gf); // warm-up
    if (st != GGML_STATUS_SUCCESS) {
        snprintf(detail, sizeof(detail), "graph compute failed: %s", ggml_status_to_string(st));
        goto done;
    }

    // enough repetitions for about 8 GFLOP or 8 GB on a CPU, 100 GFLOP or 32 GB on other devices
    const bool is_cpu = ggml_backend_dev_type(ggml_backend_get_device(backend)) == GGML_BACKEND_DEVICE_TYPE_CPU;
    const uint64_t flops   = tbo_case_flops(c, g.out);
    const size_t   op_size = tbo_case_op_size(c, g.out);
    const int64_t  room    = ggml_graph_size(gf) - ggml_graph_n_nodes(gf);
    int64_t n_runs;
    if (flops > 0) {
        const uint64_t target = (is_cpu ? 8ULL : 100ULL) * 1000 * 1000 * 1000;
        const int64_t want = (int64_t) (target / flops);
        n_runs = (want < room ? want : room) + 1;
    } else {
        const size_t target = (is_cpu ? (size_t) 8 : (size_t) 32) << 30;
        const int64_t want = (int64_t) (target / (op_size > 0 ? op_size : 1));
        n_runs = (want < room ? want : room) + 1;
    }
    for (int64_t i = 1; i < n_runs; i++) {
        ggml_graph_add_node(gf, g.out);
    }

    size_t mem = (size_t) n_runs * op_size;
    for (int i = 0; i < ggml_graph_n_nodes(gf); ++i) {
        struct ggml_tensor * t = ggml_graph_node(gf, i);
        if (!tbo_is_view_op(t->op) && t != g.out) {
            mem += node_op_size(t);
        }
    }

    int64_t total_time_us = 0;
    double  total_mem = 0.0;
    int64_t total_runs = 0;
    do {
        const int64_t t0 = ggml_time_us();
        st = ggml_backend_graph_compute(backend, gf);
        if (st != GGML_STATUS_SUCCESS) {
            snprintf(detail, sizeof(detail), "graph compute failed: %s", ggml_status_to_string(st));
            goto done;
        }
        total_time_us += ggml_time_us() - t0;
        total_mem     += (double) mem;
        total_runs    += n_runs;
    } while (total_time_us < 1000*1000);

    r.passed         = true;
    r.time_us        = (double) total_time_us / (double) total_runs;
    r.flops          = flops > 0 ? (double) flops * (double) total_runs / ((double) total_time_us / 1e6) : 0.0;
    r.bandwidth_gb_s = flops == 0 ? total_mem / ((double) total_time_us / 1e6) / 1024.0 / 1024.0 / 1024.0 : 0.0;
    r.memory_kb      = op_size / 1024;
    r.n_runs         = (int) total_runs;
    status = CASE_OK;

done:
    if (status != CASE_OK) {
        r.error_message = detail;
        r.detail        = detail;
    }
    tbo_print_result(p, &r);
    if (buf != NULL) {
        ggml_backend_buffer_free(buf);
    }
    case_graph_free(&g);
    g_current_case = NULL;
    return status;
}

//
// support mode: whether the backend supports each case's output op
//

static enum case_status eval_support(const struct tbo_case * c, size_t index, ggml_backend_t backend, const struct tbo_run_opts * opts,
                                     const struct tbo_printer * p) {
    if (tbo_case_run_whole_graph(c)) {
        return CASE_SKIPPED; // fusion cases: the support of each op is listed by the other cases
    }
    struct case_graph g;
    if (!case_graph_build(&g, c, TBO_MODE_SUPPORT, TBO_TEST_GRAPH_SIZE)) {
        fprintf(stderr, "test-backend-ops: cannot create a context for case %zu\n", index);
        return CASE_FAIL;
    }
    if (!tbo_matches_op_filter(opts->op_filter, g.op_name, g.full_name)) {
        case_graph_free(&g);
        return CASE_SKIPPED;
    }
    tbo_print_case_start(p, TBO_MODE_SUPPORT, g.op_name, c->vars);
    const bool supported = ggml_backend_supports_op(backend, g.out);
    ggml_backend_dev_t dev = ggml_backend_get_device(backend);
    const struct tbo_result r = {
        .backend_name       = ggml_backend_name(backend),
        .op_name            = g.op_name,
        .op_params          = c->vars,
        .mode               = TBO_MODE_SUPPORT,
        .supported          = supported,
        .passed             = supported,
        .error_message      = supported ? "yes" : "no",
        .device_description = ggml_backend_dev_description(dev),
        .backend_reg_name   = ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev)),
    };
    tbo_print_result(p, &r);
    case_graph_free(&g);
    return supported ? CASE_OK : CASE_NOT_SUPPORTED;
}

//
// --quick
//

// Cases --quick always keeps (the first of each prefix), whatever the thinning
// of their group: each reaches a path of the kernels that a few evenly spaced
// cases miss, and that a deliberate bug there was seen to survive without it.
static const struct {
    const char * op;
    const char * vars_prefix;
} g_quick_always[] = {
    // rope: 20 rotated dims of 80, a SIMD tail in normal and NEOX order
    { "ROPE", "type=f32,ne_a=[80,32,2,1],n_dims=20,mode=0," },
    { "ROPE", "type=f32,ne_a=[80,32,2,1],n_dims=20,mode=2," },
    // multi-section rope: sections covering part of the rotated dims, VISION
    // restarts, and sections of several sizes (every bound of the walk reached)
    { "ROPE", "type=f32,ne_a=[128,12,2,1],n_dims=20,mode=8," },
    { "ROPE", "type=f32,ne_a=[128,12,2,1],n_dims=20,mode=40," },
    { "ROPE", "type=f32,ne_a=[80,16,2,1],n_dims=80,mode=24," },
    { "ROPE", "type=f32,ne_a=[24,5,3,1],n_dims=20,mode=8,sections=[2,3,1,4]" },
    { "ROPE", "type=f32,ne_a=[24,5,3,1],n_dims=20,mode=8,sections=[3,1,2,1]" },
    { "ROPE", "type=f32,ne_a=[24,5,3,1],n_dims=20,mode=40,sections=[2,3,1,4]" },
    { "ROPE", "type=f32,ne_a=[24,5,3,1],n_dims=20,mode=40,sections=[3,1,2,1]" },
    // ALiBi with 3 heads: the slopes past the largest power of 2 (m1)
    { "SOFT_MAX", "type=f32,ne=[16,16,1,3],mask=1,sinks=0,m_prec=f32,nr23=[3,1],scale=1.000000,max_bias=8.000000," },
    { "SOFT_MAX", "type=f32,ne=[16,16,1,3],mask=1,sinks=1,m_prec=f16,nr23=[3,1],scale=0.100000,max_bias=8.000000," },
    { "FLASH_ATTN_EXT", "hsk=64,hsv=64,nh=3,nr23=[1,1],kv=113,nb=3,mask=1,sinks=0,max_bias=8.000000," },
    // the GELU family over [-3, 3] to a strict threshold: the constants of the formulas
    { "GELU", "type=f32,ne_a=[5,7,11,13],v=0,narrow=1" },
    { "GELU_ERF", "type=f32,ne_a=[5,7,11,13],v=0,narrow=1" },
    { "GELU_QUICK", "type=f32,ne_a=[5,7,11,13],v=0,narrow=1" },
    // Q8_0 rounding ties
    { "CPY", "type_src=f32,type_dst=q8_0,ne_src=[96,5,1,1],ties=1" },
};

static bool quick_always(const char * op_name, const char * vars, bool * used) {
    for (size_t i = 0; i < sizeof(g_quick_always) / sizeof(g_quick_always[0]); i++) {
        if (!used[i] && strcmp(op_name, g_quick_always[i].op) == 0 &&
            strncmp(vars, g_quick_always[i].vars_prefix, strlen(g_quick_always[i].vars_prefix)) == 0) {
            used[i] = true;
            return true;
        }
    }
    return false;
}

// the group of a case: its op name and the values of its type parameters ("type", "type_a", ...)
static char * quick_group(const char * op_name, const char * vars) {
    struct tbo_str s = { 0 };
    tbo_str_printf(&s, "%s", op_name);
    for (const char * v = vars; *v != '\0'; ) {
        const char * end = strchr(v, ',');
        const size_t len = end != NULL ? (size_t) (end - v) : strlen(v);
        const char * eq = memchr(v, '=', len);
        if (strncmp(v, "type", 4) == 0 && eq != NULL) {
            tbo_str_printf(&s, "|%.*s", (int) (len - (size_t) (eq + 1 - v)), eq + 1);
        }
        if (end == NULL) {
            break;
        }
        v = end + 1;
    }
    return s.s;
}

size_t tbo_select_quick(struct tbo_case_list * cases) {
    const size_t n = cases->n;
    double * cost = tbo_malloc(n * sizeof(double));
    char ** group = tbo_calloc(n, sizeof(char *));
    bool * always = tbo_calloc(n, sizeof(bool));
    bool used[sizeof(g_quick_always) / sizeof(g_quick_always[0])] = { false };
    for (size_t i = 0; i < n; i++) {
        struct case_graph g;
        cost[i] = (double) INFINITY;
        if (case_graph_build(&g, &cases->v[i], TBO_MODE_SUPPORT, TBO_TEST_GRAPH_SIZE)) {
            always[i] = quick_always(g.op_name, cases->v[i].vars, used);
            group[i] = quick_group(g.op_name, cases->v[i].vars);
            cost[i] = graph_cost(g.ctx);
            case_graph_free(&g);
        } else {
            group[i] = tbo_strdup("");
        }
    }

    // per group: the cheap cases, thinned to evenly spaced ones where there are too many
    bool * keep = tbo_calloc(n, sizeof(bool));
    bool * done = tbo_calloc(n, sizeof(bool));
    size_t * idx = tbo_malloc(n * sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        if (done[i]) {
            continue;
        }
        size_t m = 0;
        for (size_t j = i; j < n; j++) {
            if (!done[j] && strcmp(group[j], group[i]) == 0) {
                done[j] = true;
                if (cost[j] <= TBO_QUICK_MAX_COST) {
                    idx[m++] = j;
                }
            }
        }
        const size_t k = m < TBO_QUICK_MAX_PER_GROUP ? m : TBO_QUICK_MAX_PER_GROUP;
        for (size_t s = 0; s < k; s++) {
            keep[idx[s * m / k]] = true;
        }
    }

    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (keep[i] || always[i]) {
            cases->v[kept++] = cases->v[i];
        } else {
            free(cases->v[i].vars);
            free(cases->v[i].p);
        }
        free(group[i]);
    }
    cases->n = kept;
    free(idx);
    free(done);
    free(keep);
    free(always);
    free(group);
    free(cost);
    return n - kept;
}

//
// all cases on one backend
//

void tbo_run_counts_free(struct tbo_run_counts * counts) {
    for (size_t i = 0; i < counts->n_failed_names; i++) {
        free(counts->failed_names[i]);
    }
    free(counts->failed_names);
    *counts = (struct tbo_run_counts) { 0 };
}

bool tbo_run_backend(ggml_backend_t backend, ggml_backend_t cpu, const struct tbo_case_list * cases,
                     const struct tbo_run_opts * opts, const struct tbo_printer * printer, struct tbo_run_counts * counts) {
    *counts = (struct tbo_run_counts) { 0 };
    size_t cap_failed = 0;
    for (size_t i = 0; i < cases->n; i++) {
        const struct tbo_case * c = &cases->v[i];
        enum case_status st = CASE_SKIPPED;
        switch (opts->mode) {
            case TBO_MODE_TEST:    st = eval_test(c, i, backend, cpu, opts, printer); break;
            case TBO_MODE_PERF:    st = eval_perf(c, i, backend, opts, printer);      break;
            case TBO_MODE_SUPPORT: st = eval_support(c, i, backend, opts, printer);   break;
            case TBO_MODE_GRAD: {
                static const enum case_status from_grad[] = {
                    [TBO_GRAD_SKIPPED] = CASE_SKIPPED, [TBO_GRAD_NOT_SUPPORTED] = CASE_NOT_SUPPORTED,
                    [TBO_GRAD_OK] = CASE_OK, [TBO_GRAD_FAIL] = CASE_FAIL,
                };
                st = from_grad[tbo_eval_grad(c, i, backend, opts, printer, init_case)];
            } break;
        }
        switch (st) {
            case CASE_SKIPPED:       break;
            case CASE_NOT_SUPPORTED: counts->not_supported++; break;
            case CASE_OK:            counts->passed++; break;
            case CASE_FAIL: {
                counts->failed++;
                if (counts->n_failed_names == cap_failed) {
                    cap_failed = cap_failed > 0 ? 2 * cap_failed : 16;
                    counts->failed_names = tbo_realloc(counts->failed_names, cap_failed * sizeof(char *));
                }
                struct tbo_str s = { 0 };
                struct case_graph g;
                if (case_graph_build(&g, c, opts->mode, TBO_TEST_GRAPH_SIZE)) {
                    tbo_str_printf(&s, "%s", g.full_name);
                    case_graph_free(&g);
                } else {
                    tbo_str_printf(&s, "case %zu", i);
                }
                counts->failed_names[counts->n_failed_names++] = s.s;
            } break;
        }
    }
    if (opts->mode == TBO_MODE_TEST || opts->mode == TBO_MODE_GRAD) {
        tbo_print_summary(printer, counts->passed, counts->passed + counts->failed, counts->not_supported);
        tbo_print_failed_tests(printer, counts->failed_names, counts->n_failed_names);
    }
    return counts->failed == 0;
}
