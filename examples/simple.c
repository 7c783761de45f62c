// simple: the README's example. Multiplies two small matrices on the best
// backend the registry offers and prints the result next to the values
// computed by hand.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <math.h>
#include <stdio.h>

int main(void) {
    ggml_backend_load_all();
    ggml_backend_t backend = ggml_backend_init_best();
    if (backend == NULL) {
        fprintf(stderr, "simple: no backend available\n");
        return 1;
    }

    // describe the computation: no data is allocated yet (no_alloc)
    struct ggml_init_params params = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2); // 2 rows of 4
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3); // 3 rows of 4
    struct ggml_tensor * c = ggml_mul_mat(ctx, a, b);                      // 3 rows of 2: b a^T
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);

    // place the tensors in the backend's memory and fill the inputs
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    const float av[8]  = { 1, 2, 3, 4,  5, 6, 7, 8 };
    const float bv[12] = { 1, 0, 0, 0,  0, 1, 0, 0,  1, 1, 1, 1 };
    ggml_backend_tensor_set(a, av, 0, sizeof(av));
    ggml_backend_tensor_set(b, bv, 0, sizeof(bv));

    const enum ggml_status status = ggml_backend_graph_compute(backend, gf);

    float cv[6];
    ggml_backend_tensor_get(c, cv, 0, sizeof(cv));
    const float expect[6] = { 1, 5,  2, 6,  10, 26 };
    int ok = status == GGML_STATUS_SUCCESS;
    printf("b a^T on %s:\n", ggml_backend_name(backend));
    for (int r = 0; r < 3; r++) {
        printf("  [ %5.1f %5.1f ]   expected [ %5.1f %5.1f ]\n",
               (double) cv[2*r], (double) cv[2*r + 1], (double) expect[2*r], (double) expect[2*r + 1]);
        ok &= fabsf(cv[2*r] - expect[2*r]) < 1e-6f && fabsf(cv[2*r + 1] - expect[2*r + 1]) < 1e-6f;
    }
    printf("%s\n", ok ? "ok" : "WRONG");

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(backend);
    return ok ? 0 : 1;
}
