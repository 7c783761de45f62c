// upstream-style.c: a program written the way programs for upstream ggml are
// written (context holding the data, graph computed with
// ggml_graph_compute_with_ctx), using only the first op set. It must compile
// against the installed headers unchanged, link, and give the right numbers.

#include "ggml.h"
#include "ggml-cpu.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    struct ggml_init_params params = {
        .mem_size   = 16*1024*1024,
        .mem_buffer = NULL,
    };
    struct ggml_context * ctx = ggml_init(params);

    // A: 3 columns, 2 rows; B: 3 columns, 4 rows; C = A B^T: 2 columns, 4 rows
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 2);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 4);
    const float av[6]  = { 1, 0, 2,   -1, 3, 1 };
    const float bv[12] = { 1, 1, 1,   0, 1, 0,   2, 0, -1,   4, 2, 1 };
    memcpy(a->data, av, sizeof(av));
    memcpy(b->data, bv, sizeof(bv));

    struct ggml_tensor * c = ggml_mul_mat(ctx, a, b);
    struct ggml_tensor * d = ggml_soft_max(ctx, ggml_scale(ctx, c, 0.5f));
    struct ggml_tensor * e = ggml_sum_rows(ctx, ggml_silu(ctx, c));

    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, d);
    ggml_build_forward_expand(gf, e);
    ggml_graph_compute_with_ctx(ctx, gf, 2);

    // C[j][i] = dot(B row j, A row i), computed by hand:
    const float expect_c[8] = { 3, 3,   0, 3,   0, -3,   6, 3 };
    int ok = 1;
    for (int i = 0; i < 8; i++) {
        ok &= fabsf(ggml_get_f32_1d(c, i) - expect_c[i]) < 1e-5f;
    }
    // softmax of each row of 0.5*C: row sums are 1, and equal entries stay equal
    for (int r = 0; r < 4; r++) {
        const float p0 = ggml_get_f32_1d(d, 2*r), p1 = ggml_get_f32_1d(d, 2*r + 1);
        ok &= fabsf(p0 + p1 - 1.0f) < 1e-5f;
    }
    ok &= fabsf(ggml_get_f32_1d(d, 0) - 0.5f) < 1e-6f;
    // silu(3) + silu(3) = 2 * 3 / (1 + e^-3)
    ok &= fabsf(ggml_get_f32_1d(e, 0) - 6.0f / (1.0f + expf(-3.0f))) < 1e-5f;

    printf("upstream-style: %s\n", ok ? "ok" : "WRONG");
    ggml_free(ctx);
    return ok ? 0 : 1;
}
