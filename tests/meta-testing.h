#pragma once

// meta-testing.h: what the meta device's tests share: split states of one
// segment, a case's graph, a double-precision matrix product to check
// results against, and the largest difference of two results.

#include "ggml.h"
#include "ggml-backend.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

// one segment: device j gets ne[j] along axis (ne NULL: nothing given, as for MIRRORED)
static inline struct ggml_backend_meta_split_state mt_split(int axis, size_t n_devs, const int64_t * ne) {
    struct ggml_backend_meta_split_state ss;
    memset(&ss, 0, sizeof(ss));
    ss.axis       = (enum ggml_backend_meta_split_axis) axis;
    ss.nr[0]      = 1;
    ss.n_segments = 1;
    for (size_t j = 0; j < n_devs && ne != NULL; j++) {
        ss.ne[j] = ne[j];
    }
    return ss;
}

static inline struct ggml_backend_meta_split_state mt_split_mirrored(void) {
    return mt_split(GGML_BACKEND_SPLIT_AXIS_MIRRORED, 0, NULL);
}

// the graph computing out, named "out" and marked as an output
static inline struct ggml_cgraph * mt_output_graph(struct ggml_context * ctx, struct ggml_tensor * out) {
    ggml_set_name(out, "out");
    ggml_set_output(out);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    return gf;
}

// out[t][r] = sum_k w[r][k] * x[t][k], summed in double (ggml_mul_mat: w [K, R], x [K, T] -> [R, T])
static inline void mt_ref_mul_mat(const float * w, const float * x, int64_t K, int64_t R, int64_t T, float * out) {
    for (int64_t t = 0; t < T; t++) {
        for (int64_t r = 0; r < R; r++) {
            double s = 0.0;
            for (int64_t k = 0; k < K; k++) {
                s += (double) w[r*K + k] * (double) x[t*K + k];
            }
            out[t*R + r] = (float) s;
        }
    }
}

// the largest |a - b| (a NaN counts as infinitely large)
static inline double mt_max_abs_diff(const float * a, const float * b, int64_t n) {
    double m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double d = fabs((double) a[i] - (double) b[i]);
        m = d > m || isnan(d) ? d : m;
    }
    return m;
}
