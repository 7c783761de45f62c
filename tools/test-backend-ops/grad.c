// grad.c: grad mode: the gradients of the backward pass against finite
// differences of the forward pass, case by case, on one backend.
//
// As upstream's tool does: the loss is the case's output (summed if it is
// not a single value); the parameters are its F32 inputs; the gradient of
// each parameter element is estimated by central differences
//     (f(x + eps) - f(x - eps)) / 2 eps,  or with "precise"
//     (8 f(x + eps/2) + f(x - eps) - 8 f(x - eps/2) - f(x + eps)) / 6 eps
// (the loss summed in double by the tool, where upstream sums in float in
// the graph and loses small differences of large sums to rounding)
// and compared with the backward pass by the mean absolute asymmetry
// mean(|(a - b) / (a + b)|), skipping the elements whose estimate is none
// of the expected values where the function has kinks (ReLU, abs).
//
// Which inputs are parameters: upstream marks them in each case; here they
// are the F32 leaf inputs through which the backward pass is defined (not
// indices, positions, masks, frequency factors or labels: the sources that
// ggml_build_backward_expand ignores or has no rule for). A case whose
// graph has an op without a gradient rule, or whose output is not F32, is
// "not supported" instead of aborting. eps, the stencil, the threshold and
// the expected values are upstream's, by family and op (grad_settings_for).

#include "tbo-run.h"
#include "ggml-backward.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct grad_settings {
    float   eps;
    bool    precise;
    double  max_maa;
    float   expect[2];
    int     n_expect;
    int64_t nmax;     // more parameter elements than this: skipped (too slow)
};

static int64_t n_elements(const struct ggml_tensor * t) {
    return t != NULL ? ggml_nelements(t) : 0;
}

// The ops past upstream's enums (ops of this library only): upstream chose
// no cases for them, so every case of theirs is checked where the backward
// pass has a rule (ggml_backward_has_grad).
enum {
    TBO_UPSTREAM_OP_COUNT       = 101, // GGML_OP_GLU + 1
    TBO_UPSTREAM_UNARY_OP_COUNT = 22,  // GGML_UNARY_OP_TRUNC + 1
};

static bool beyond_upstream(const struct ggml_tensor * out) {
    return (int) out->op >= TBO_UPSTREAM_OP_COUNT ||
           (out->op == GGML_OP_UNARY && (int) ggml_get_unary_op(out) >= TBO_UPSTREAM_UNARY_OP_COUNT);
}

static struct grad_settings grad_settings_for(const struct tbo_case * c, const struct ggml_tensor * out) {
    struct grad_settings s = { .eps = 1e-1f, .precise = false, .max_maa = 1e-4, .n_expect = 0, .nmax = 10000 };
    const char * cls = c->cls->name;
    if (strcmp(cls, "unary") == 0 && beyond_upstream(out)) {
        // smooth functions (upstream's eps of 15 is for piecewise linear
        // ones); the inputs span [-150, 150], where f32 rounding of the
        // outputs limits the agreement as for SIN and COS
        s.eps = 1.0f;
        s.precise = true;
        s.max_maa = 1e-3;
    } else if (strcmp(cls, "unary") == 0) {
        s.eps = 15.0f;
        if (out->op == GGML_OP_UNARY) {
            switch (ggml_get_unary_op(out)) {
                case GGML_UNARY_OP_ABS:  s.expect[0] = -1.0f; s.expect[1] = 1.0f; s.n_expect = 2; break;
                case GGML_UNARY_OP_SGN:
                case GGML_UNARY_OP_STEP: s.expect[0] = 0.0f; s.n_expect = 1; break;
                case GGML_UNARY_OP_RELU: s.expect[0] = 0.0f; s.expect[1] = 1.0f; s.n_expect = 2; break;
                default: break;
            }
        }
    } else if (strcmp(cls, "bin_bcast") == 0) {
        s.eps     = 0.1f * (out->op == GGML_OP_MUL ? (float) n_elements(out->src[1]) : 1.0f);
        s.precise = out->op == GGML_OP_DIV;
        s.max_maa = out->op == GGML_OP_ADD ? 1e-4 : 1e-3;
    } else if (strcmp(cls, "rms_norm") == 0 || strcmp(cls, "rms_norm_mul_add") == 0 || strcmp(cls, "add_rms_norm") == 0) {
        s.eps     = 1.0f;
        s.precise = true;
    } else if (strcmp(cls, "mul_mat") == 0) {
        s.nmax = 20000;
    } else if (strcmp(cls, "simple") == 0) {
        const int64_t n = n_elements(out);
        switch (out->op) {
            case GGML_OP_SQR:  s.eps = 0.1f * 0.25f * (float) n; break;
            case GGML_OP_SQRT: s.eps = 20.0f; s.precise = true; break;
            case GGML_OP_LOG:  s.precise = true; break;
            case GGML_OP_SIN:
            case GGML_OP_COS:  s.max_maa = 1e-3; s.eps = 0.2f; s.precise = true; break;
            default: break;
        }
    } else if (strcmp(cls, "clamp") == 0) {
        s.eps = 1e-2f;
        s.expect[0] = 0.0f;
        s.expect[1] = 1.0f;
        s.n_expect = 2;
    } else if (strcmp(cls, "soft_max") == 0 || strcmp(cls, "flash_attn_ext") == 0 || strcmp(cls, "silu_back") == 0 ||
               strcmp(cls, "opt_step_sgd") == 0) {
        s.precise = true;
    } else if (strcmp(cls, "rope") == 0) {
        s.max_maa = 1e-3;
        s.precise = true;
    } else if (strcmp(cls, "sum") == 0) {
        s.eps = 0.1f * sqrtf((float) n_elements(out->src[0]));
    } else if (strcmp(cls, "mean") == 0) {
        s.eps = 0.1f * (float) n_elements(out->src[0]);
    } else if (strcmp(cls, "cross_entropy_loss") == 0) {
        s.eps     = 1.0f;
        s.precise = true;
    }
    return s;
}

// sources of a node that get no gradient through it
static bool src_is_constant(const struct ggml_tensor * t, int j) {
    switch (t->op) {
        case GGML_OP_GET_ROWS: case GGML_OP_GET_ROWS_BACK: case GGML_OP_CPY:
        case GGML_OP_CROSS_ENTROPY_LOSS:
            return j == 1;
        case GGML_OP_SOFT_MAX: case GGML_OP_ROPE:
            return j >= 1;
        case GGML_OP_IM2COL: case GGML_OP_IM2COL_BACK:
            return j == 0;
        default:
            return false;
    }
}

// the families whose inputs upstream marks as parameters (with upstream's
// conditions below); for the others a case has no parameters
static const char * const g_param_families[] = {
    "unary", "glu_split", "swiglu_oai", "get_rows", "repeat", "dup", "set", "cpy", "cont", "bin_bcast", "scale",
    "softcap", "norm_mul_add", "rms_norm", "rms_norm_mul_add", "add_rms_norm", "mul_mat", "simple", "diag_mask_inf",
    "soft_max", "rope", "pool2d", "pool1d", "im2col", "im2col_3d", "sum", "sum_rows", "mean", "group_norm_mul_add",
    "acc", "cross_entropy_loss", "xielu", "misc_unary", "solve_tri", "lightning_indexer",
};

// upstream's conditions within the families
static bool family_has_params(const struct tbo_case * c, const struct ggml_tensor * out) {
    const char * cls = c->cls->name;
    if (beyond_upstream(out)) {
        return ggml_backward_has_grad(out);
    }
    bool listed = false;
    for (size_t i = 0; i < sizeof(g_param_families) / sizeof(g_param_families[0]); i++) {
        listed = listed || strcmp(cls, g_param_families[i]) == 0;
    }
    if (!listed) {
        return false;
    }
    if (strcmp(cls, "bin_bcast") == 0) {
        // broadcasting only for ADD, one operand, no permutation
        return out->op == GGML_OP_ADD && out->src[1] != NULL && ggml_are_same_shape(out->src[0], out->src[1]) &&
               out->src[1]->op == GGML_OP_NONE && out->src[0]->op == GGML_OP_NONE;
    }
    if (strcmp(cls, "unary") == 0 && out->op == GGML_OP_UNARY) {
        switch (ggml_get_unary_op(out)) {
            case GGML_UNARY_OP_ABS: case GGML_UNARY_OP_SGN: case GGML_UNARY_OP_NEG: case GGML_UNARY_OP_STEP:
            case GGML_UNARY_OP_RELU: case GGML_UNARY_OP_SILU: case GGML_UNARY_OP_EXPM1: case GGML_UNARY_OP_SOFTPLUS:
                return true;
            default:
                return false;
        }
    }
    if (strcmp(cls, "get_rows") == 0) {
        return ggml_is_matrix(out->src[0]) && ggml_is_vector(out->src[1]);
    }
    if (strcmp(cls, "rope") == 0) {
        int32_t n_offs; // op_params[15]: the offset of partial rotation, which has no gradient rule upstream
        memcpy(&n_offs, (const char *) out->op_params + 15 * sizeof(int32_t), sizeof(n_offs));
        return out->op == GGML_OP_ROPE && n_offs == 0;
    }
    return true;
}

static bool is_leaf_input(const struct ggml_tensor * t) {
    return t->op == GGML_OP_NONE && t->view_src == NULL && strncmp(t->name, "sent", 4) != 0;
}

// marks the parameters among the graph's leaves (through views to their
// sources); false with *why if the graph has an op without a gradient rule
static bool mark_params(const struct tbo_case * c, struct ggml_tensor * out, struct ggml_cgraph * gf, const char ** why) {
    *why = NULL;
    const bool marks = family_has_params(c, out);
    // the F32 leaves that reach the output through sources that carry a gradient
    // (not the labels of a loss, even if computed by a softmax)
    const int n = ggml_graph_n_nodes(gf);
    struct ggml_tensor ** stack = tbo_malloc((size_t) (n + 1) * sizeof(struct ggml_tensor *));
    struct ggml_tensor ** seen  = tbo_malloc((size_t) (n + 1) * sizeof(struct ggml_tensor *));
    int n_stack = 0, n_seen = 0;
    bool non_f32 = false;
    if (marks) {
        stack[n_stack++] = out;
    }
    while (n_stack > 0) {
        struct ggml_tensor * t = stack[--n_stack];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * s = t->src[j];
            if (s == NULL || src_is_constant(t, j)) {
                continue;
            }
            // upstream: the matrix of a product only without batches in dim 3, none of quantized data
            if (t->op == GGML_OP_MUL_MAT && j == 0) {
                const struct ggml_tensor * base = s->view_src != NULL ? s->view_src : s;
                non_f32 = non_f32 || base->type != GGML_TYPE_F32;
                if (t->src[0]->ne[3] != 1 || t->src[1]->ne[3] != 1) {
                    continue;
                }
            }
            if (s->op == GGML_OP_NONE) {
                if (is_leaf_input(s) && s->type == GGML_TYPE_F32) {
                    ggml_set_param(s);
                } else if (is_leaf_input(s)) {
                    // upstream marks it and reports "not F32": differences of F16 or quantized data say nothing
                    non_f32 = true;
                }
                continue;
            }
            bool done = false;
            for (int k = 0; k < n_seen && !done; k++) {
                done = seen[k] == s;
            }
            if (!done && n_seen < n) {
                seen[n_seen++] = s;
                stack[n_stack++] = s;
            }
        }
    }
    free(stack);
    free(seen);
    if (non_f32) {
        *why = "an input that is not F32";
        return false;
    }
    // every node that depends on a parameter needs a gradient rule
    struct ggml_tensor ** dep = tbo_malloc((size_t) (n + 1) * sizeof(struct ggml_tensor *));
    int n_dep = 0;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        struct ggml_tensor * t = ggml_graph_node(gf, i);
        bool depends = false;
        for (int j = 0; j < GGML_MAX_SRC && !depends; j++) {
            const struct ggml_tensor * s = t->src[j];
            if (s == NULL || src_is_constant(t, j)) {
                continue;
            }
            depends = (s->flags & GGML_TENSOR_FLAG_PARAM) != 0;
            for (int k = 0; k < n_dep && !depends; k++) {
                depends = dep[k] == s;
            }
        }
        if (!depends) {
            continue;
        }
        dep[n_dep++] = t;
        // in place: the backward pass would read values the node overwrote
        const bool inplace = t->view_src != NULL && t->op != GGML_OP_CPY && t->op != GGML_OP_VIEW && t->op != GGML_OP_RESHAPE &&
                             t->op != GGML_OP_PERMUTE && t->op != GGML_OP_TRANSPOSE;
        if (inplace) {
            *why = "an in-place op";
            ok = false;
            continue;
        }
        // SUB and DIV have no rule for a broadcast second operand
        const bool bcast = (t->op == GGML_OP_SUB || t->op == GGML_OP_DIV) && !ggml_are_same_shape(t->src[0], t->src[1]);
        if (!ggml_backward_has_grad(t) || bcast) {
            *why = ggml_op_desc(t);
            ok = false;
        }
    }
    free(dep);
    return ok;
}

static double mean_abs_asymm(const float * a, const float * b, int64_t n, const struct grad_settings * s) {
    double sum = 0.0;
    int64_t nvalid = 0;
    for (int64_t i = 0; i < n; i++) {
        if (s->n_expect > 0) {
            bool match = false;
            for (int k = 0; k < s->n_expect; k++) {
                match = match || fabsf(a[i] - s->expect[k]) < 1e-3f;
            }
            if (!match) {
                continue;
            }
        }
        sum += fabs((double) (a[i] - b[i]) / (double) (a[i] + b[i]));
        nvalid++;
    }
    return sum / (double) nvalid;
}

static float * tensor_f32(const struct ggml_tensor * t) {
    double * d = tbo_tensor_to_double(t);
    const int64_t n = ggml_nelements(t);
    float * f = tbo_malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        f[i] = (float) d[i];
    }
    free(d);
    return f;
}

struct grad_run {
    ggml_backend_t        backend;
    struct ggml_cgraph *  gf;
    struct ggml_tensor *  out;
    char                  detail[256];
};

// the loss with element i of t set to v
static bool loss_at(struct grad_run * r, struct ggml_tensor * t, int64_t i, float v, double * f) {
    ggml_backend_tensor_set(t, &v, (size_t) i * sizeof(float), sizeof(float));
    if (ggml_backend_graph_compute(r->backend, r->gf) != GGML_STATUS_SUCCESS) {
        snprintf(r->detail, sizeof(r->detail), "the forward graph failed to compute");
        return false;
    }
    // the loss summed here in double: the elements a step does not change
    // cancel exactly, so the difference is not lost to the rounding of a
    // large float sum (upstream sums in the graph, in float)
    double * vals = tbo_tensor_to_double(r->out);
    double sum = 0.0;
    for (int64_t k = 0; k < ggml_nelements(r->out); k++) {
        sum += vals[k];
    }
    free(vals);
    *f = sum;
    return true;
}

// compares the gradient of parameter t; false with r->detail on a mismatch or error
static bool check_param(struct grad_run * r, struct ggml_cgraph * gb, struct ggml_tensor * t, const struct grad_settings * s) {
    const int64_t ne = ggml_nelements(t);
    struct ggml_tensor * grad = ggml_graph_get_grad(gb, t);
    float * ga = grad != NULL ? tensor_f32(grad) : tbo_calloc((size_t) ne, sizeof(float));
    float * x0 = tensor_f32(t);
    float * gn = tbo_malloc((size_t) ne * sizeof(float));
    bool ok = true;
    for (int64_t i = 0; i < ne && ok; i++) {
        if (!isfinite(ga[i])) {
            snprintf(r->detail, sizeof(r->detail), "%s: gradient %lld is %g", t->name, (long long) i, (double) ga[i]);
            ok = false;
        }
    }
    for (int64_t i = 0; i < ne && ok; i++) {
        const float eps = s->eps;
        double fu = 0.0, fd = 0.0, fuh = 0.0, fdh = 0.0;
        ok = loss_at(r, t, i, x0[i] + eps, &fu) && loss_at(r, t, i, x0[i] - eps, &fd);
        if (ok && s->precise) {
            ok = loss_at(r, t, i, x0[i] + 0.5f * eps, &fuh) && loss_at(r, t, i, x0[i] - 0.5f * eps, &fdh);
        }
        gn[i] = (float) (s->precise ? (8.0 * fuh + fd - (8.0 * fdh + fu)) / (6.0 * (double) eps)
                                    : (fu - fd) / (2.0 * (double) eps));
        ggml_backend_tensor_set(t, &x0[i], (size_t) i * sizeof(float), sizeof(float));
    }
    // a zero gradient (the sum of a softmax over its row) has no relative error
    // to measure: it passes when the estimate is zero within rounding too
    double max_ga = 0.0, max_gn = 0.0;
    for (int64_t i = 0; i < ne; i++) {
        max_ga = fmax(max_ga, fabs((double) ga[i]));
        max_gn = fmax(max_gn, fabs((double) gn[i]));
    }
    if (ok && max_ga < 1e-6 && max_gn < 1e-4) {
        free(ga);
        free(x0);
        free(gn);
        return true;
    }
    if (ok) {
        const double err = mean_abs_asymm(gn, ga, ne, s);
        if (err > s->max_maa) { // as upstream: NaN (all 0/0, e.g. STEP) passes
            snprintf(r->detail, sizeof(r->detail), "%s: mean abs asymmetry %.3e > %.3e", t->name, err, s->max_maa);
            ok = false;
        }
    }
    free(ga);
    free(x0);
    free(gn);
    return ok;
}

static enum tbo_grad_status report(const struct tbo_printer * p, ggml_backend_t backend, const char * op_name, const char * vars,
                                   bool supported, bool passed, const char * detail) {
    ggml_backend_dev_t dev = ggml_backend_get_device(backend);
    const struct tbo_result res = {
        .backend_name       = ggml_backend_name(backend),
        .op_name            = op_name,
        .op_params          = vars,
        .mode               = TBO_MODE_GRAD,
        .supported          = supported,
        .passed             = passed,
        .error_message      = detail,
        .device_description = ggml_backend_dev_description(dev),
        .backend_reg_name   = ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev)),
        .detail             = detail,
    };
    tbo_print_result(p, &res);
    return !supported ? TBO_GRAD_NOT_SUPPORTED : passed ? TBO_GRAD_OK : TBO_GRAD_FAIL;
}

enum tbo_grad_status tbo_eval_grad(const struct tbo_case * c, size_t index, ggml_backend_t backend, const struct tbo_run_opts * opts,
                                   const struct tbo_printer * p, void (*init)(const struct tbo_case *, struct ggml_context *, uint64_t)) {
    if (tbo_case_run_whole_graph(c)) {
        return TBO_GRAD_SKIPPED; // fusion cases, as upstream
    }
    const size_t graph_size = GGML_DEFAULT_GRAPH_SIZE;
    const struct ggml_init_params params = {
        .mem_size   = ggml_tensor_overhead() * 1024 + 2 * ggml_graph_overhead_custom(graph_size, true),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    struct ggml_context * ctx = ggml_init(params);
    if (ctx == NULL) {
        return TBO_GRAD_FAIL;
    }
    struct tbo_build b;
    tbo_build_init(&b, ctx, TBO_MODE_GRAD);
    struct ggml_tensor * out = c->cls->build(c, &b);
    const char * op_name = tbo_case_op_desc(c, out);
    struct tbo_str full = { 0 };
    tbo_str_printf(&full, "%s(%s)", op_name, c->vars);
    enum tbo_grad_status st = TBO_GRAD_SKIPPED;
    struct grad_run r = { .backend = backend, .detail = "" };
    struct ggml_backend_buffer * buf = NULL;

    if (!tbo_matches_op_filter(opts->op_filter, op_name, full.s) || out->op == GGML_OP_OPT_STEP_ADAMW) {
        goto done;
    }
    tbo_print_case_start(p, TBO_MODE_GRAD, op_name, c->vars);
    if (out->type != GGML_TYPE_F32) {
        st = report(p, backend, op_name, c->vars, false, false, "the output is not F32");
        goto done;
    }
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, graph_size, true);
    ggml_build_forward_expand(gf, out);
    const char * why = NULL;
    if (!mark_params(c, out, gf, &why)) {
        snprintf(r.detail, sizeof(r.detail), strncmp(why, "an ", 3) == 0 ? "%s" : "no gradient rule for %s", why);
        st = report(p, backend, op_name, c->vars, false, false, r.detail);
        goto done;
    }
    // parameters must be nodes of the graph, not leaves: walk it again
    ggml_graph_clear(gf);
    ggml_build_forward_expand(gf, out);
    int64_t ngrads = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (!ggml_backend_supports_op(backend, t)) {
            st = report(p, backend, op_name, c->vars, false, false, "");
            goto done;
        }
        ngrads += (t->flags & GGML_TENSOR_FLAG_PARAM) ? ggml_nelements(t) : 0;
    }
    if (ngrads == 0) {
        st = report(p, backend, op_name, c->vars, false, false, "no parameters (upstream checks no gradient here)");
        goto done;
    }
    const struct grad_settings s = grad_settings_for(c, out);
    if (ngrads > s.nmax) {
        st = report(p, backend, op_name, c->vars, true, true, "skipped: too many parameter elements");
        goto done;
    }

    r.out = out; // the finite differences sum it themselves
    if (!ggml_is_scalar(out)) {
        out = ggml_sum(ctx, out);
        ggml_set_name(out, "sum_of_out");
    }
    ggml_set_loss(out);
    ggml_build_forward_expand(gf, out);
    struct ggml_cgraph * gb = ggml_graph_dup(ctx, gf, true);
    ggml_build_backward_expand(ctx, gb, NULL);
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (!ggml_backend_supports_op(backend, t)) {
            snprintf(r.detail, sizeof(r.detail), "the backward pass needs %s", ggml_op_desc(t));
            st = report(p, backend, op_name, c->vars, false, false, r.detail);
            goto done;
        }
    }

    buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (buf == NULL) {
        st = report(p, backend, op_name, c->vars, true, false, "allocation failed");
        goto done;
    }
    init(c, ctx, opts->seed ^ ((uint64_t) (index + 1) * 0x9e3779b97f4a7c15ULL));
    ggml_graph_reset(gb);
    r.gf = gf;
    if (ggml_backend_graph_compute(backend, gf) != GGML_STATUS_SUCCESS ||
        ggml_backend_graph_compute(backend, gb) != GGML_STATUS_SUCCESS) {
        st = report(p, backend, op_name, c->vars, true, false, "the graph failed to compute");
        goto done;
    }
    float loss0;
    ggml_backend_tensor_get(out, &loss0, 0, sizeof(loss0));
    if (!isfinite(loss0)) {
        // finite differences of inf are meaningless (EXPM1 over upstream's inputs up to 150)
        st = report(p, backend, op_name, c->vars, false, false, "the output is not finite at these inputs");
        goto done;
    }
    bool ok = true;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL && ok; t = ggml_get_next_tensor(ctx, t)) {
        if (t->flags & GGML_TENSOR_FLAG_PARAM) {
            ok = check_param(&r, gb, t, &s);
        }
    }
    st = report(p, backend, op_name, c->vars, true, ok, r.detail);

done:
    ggml_backend_buffer_free(buf);
    tbo_build_free(&b);
    free(full.s);
    ggml_free(ctx);
    return st;
}
