#pragma once

// cpu-sweep.h: run one kernel test case on every CPU path.
//
// sweep_run builds the case in a fresh context for each combination of
// use_ref (vector path, then scalar path) and 1, 2, 3 threads, computes it,
// passes every result to the case's check function (which compares with an
// independent reference), and checks that the results of one path are the
// same bytes whatever the thread count. Inputs are filled from fixed seeds,
// so a check function may compute its reference once and keep it.
//
// Include after testing.h / cpu-testing.h.

#include "cpu-testing.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ggml_tensor * (*sweep_build_fn)(struct ggml_context * ctx, void * user);
typedef void (*sweep_check_fn)(const struct ggml_tensor * out, void * user, const char * label);

// one thread pool per thread count, kept between cases (freed by sweep_end)
static struct ggml_threadpool * g_sweep_pools[4];

static inline void sweep_end(void) {
    for (int i = 0; i < 4; i++) {
        if (g_sweep_pools[i] != NULL) {
            ggml_threadpool_free(g_sweep_pools[i]);
            g_sweep_pools[i] = NULL;
        }
    }
}

static inline enum ggml_status sweep_compute(struct ggml_context * ctx, struct ggml_tensor * out, int n_threads, bool use_ref) {
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(gf, out);
    if (g_sweep_pools[n_threads] == NULL) {
        struct ggml_threadpool_params tpp = ggml_threadpool_params_default(n_threads);
        tpp.poll = 0; // idle workers sleep at once: the test does most of its work between computes
        g_sweep_pools[n_threads] = ggml_threadpool_new(&tpp);
    }
    struct ggml_cplan plan = ggml_graph_plan(gf, n_threads, g_sweep_pools[n_threads]);
    plan.use_ref = use_ref;
    void * work = NULL;
    if (plan.work_size > 0) {
        work = malloc(plan.work_size);
        plan.work_data = (uint8_t *) work;
    }
    const enum ggml_status status = ggml_graph_compute(gf, &plan);
    free(work);
    return status;
}

// the bytes of t's elements in order (i0 fastest), gaps of views left out
static inline void * sweep_element_bytes(const struct ggml_tensor * t) {
    const size_t es = ggml_type_size(t->type);
    char * out = (char *) malloc((size_t) ggml_nelements(t) * es + 1);
    char * p = out;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < t->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < t->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < t->ne[0]; i0++, p += es) {
        memcpy(p, (const char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3], es);
    }
    return out;
}

// n_elements: about how many elements the case's tensors hold in all (sizes the context)
static inline void sweep_run(const char * name, int64_t n_elements, sweep_build_fn build, sweep_check_fn check, void * user) {
    const size_t mem_mib = 1 + (size_t) n_elements * 32 / (1024 * 1024);
    for (int use_ref = 0; use_ref <= 1; use_ref++) {
        void * first = NULL;
        size_t first_size = 0;
        for (int n_threads = 1; n_threads <= 3; n_threads++) {
            char label[256];
            snprintf(label, sizeof(label), "%s [%s, %d thread%s]", name, use_ref ? "scalar" : "vector",
                     n_threads, n_threads > 1 ? "s" : "");
            struct ggml_context * ctx = tt_ctx_new(mem_mib);
            struct ggml_tensor * out = build(ctx, user);
            const enum ggml_status status = sweep_compute(ctx, out, n_threads, use_ref != 0);
            CHECK_MSG(status == GGML_STATUS_SUCCESS, "%s: status %d", label, (int) status);
            check(out, user, label);
            const size_t size = (size_t) ggml_nelements(out) * ggml_type_size(out->type);
            void * bytes = sweep_element_bytes(out);
            if (first == NULL) {
                first = bytes;
                first_size = size;
            } else {
                CHECK_MSG(size == first_size && memcmp(first, bytes, size) == 0,
                          "%s: result differs from the 1-thread result", label);
                free(bytes);
            }
            ggml_free(ctx);
        }
        free(first);
    }
}

// max over elements of |got - ref| / (atol + rtol*|ref|), ref holding the
// elements of got in order (i0 fastest); inf and NaN must match exactly
static inline double sweep_max_err(const struct ggml_tensor * got, const double * ref, double atol, double rtol) {
    double worst = 0.0;
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < got->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < got->ne[2]; i2++)
    for (int64_t i1 = 0; i1 < got->ne[1]; i1++)
    for (int64_t i0 = 0; i0 < got->ne[0]; i0++, k++) {
        const double r = ref[k];
        const double g = tt_get(got, i0, i1, i2, i3);
        double e;
        if (isnan(r) || isnan(g)) {
            e = isnan(r) && isnan(g) ? 0.0 : INFINITY;
        } else if (isinf(r) || isinf(g)) {
            e = r == g ? 0.0 : INFINITY;
        } else {
            e = fabs(g - r) / (atol + rtol * fabs(r));
        }
        worst = e > worst ? e : worst;
    }
    return worst;
}

// A source tensor of shape ne in one of three layouts, filled by the caller:
//   SWEEP_CONTIGUOUS  a new tensor
//   SWEEP_TRANSPOSED  dims 0 and 1 swapped in memory (element stride = row size)
//   SWEEP_OFFSET      a view into a larger tensor, starting one row and one
//                     element in, so that rows and planes have gaps
enum sweep_layout { SWEEP_CONTIGUOUS, SWEEP_TRANSPOSED, SWEEP_OFFSET };

static inline const char * sweep_layout_name(enum sweep_layout layout) {
    switch (layout) {
        case SWEEP_CONTIGUOUS: return "contiguous";
        case SWEEP_TRANSPOSED: return "transposed";
        default:               return "offset view";
    }
}

static inline struct ggml_tensor * sweep_new_source(struct ggml_context * ctx, enum ggml_type type, const int64_t ne[4],
                                                    enum sweep_layout layout) {
    switch (layout) {
        case SWEEP_CONTIGUOUS:
            return ggml_new_tensor(ctx, type, 4, ne);
        case SWEEP_TRANSPOSED: {
            struct ggml_tensor * base = ggml_new_tensor_4d(ctx, type, ne[1], ne[0], ne[2], ne[3]);
            return ggml_transpose(ctx, base);
        }
        default: {
            struct ggml_tensor * base = ggml_new_tensor_4d(ctx, type, ne[0] + 3, ne[1] + 1, ne[2] + 1, ne[3]);
            return ggml_view_4d(ctx, base, ne[0], ne[1], ne[2], ne[3], base->nb[1], base->nb[2], base->nb[3],
                                base->nb[1] + base->nb[0]);
        }
    }
}
