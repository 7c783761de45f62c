// app.c: built against the installed package; computes a small graph on the
// best available backend through the scheduler-free backend API and checks it.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "gguf.h"

#include <math.h>
#include <stdio.h>

int main(void) {
    ggml_backend_t backend = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_CPU, NULL);
    if (backend == NULL) {
        fprintf(stderr, "no CPU backend\n");
        return 1;
    }

    struct ggml_init_params params = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);

    // y = W x + b with W = [[1, 2], [3, 4]] (rows), x = [5, 6], b = [0.5, -0.5]
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 2);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2);
    struct ggml_tensor * y = ggml_add(ctx, ggml_mul_mat(ctx, w, x), b);

    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    const float wv[4] = { 1, 2, 3, 4 }, xv[2] = { 5, 6 }, bv[2] = { 0.5f, -0.5f };
    ggml_backend_tensor_set(w, wv, 0, sizeof(wv));
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    ggml_backend_tensor_set(b, bv, 0, sizeof(bv));

    if (ggml_backend_graph_compute(backend, gf) != GGML_STATUS_SUCCESS) {
        fprintf(stderr, "compute failed\n");
        return 1;
    }
    float out[2];
    ggml_backend_tensor_get(y, out, 0, sizeof(out));
    const int ok = fabsf(out[0] - 17.5f) < 1e-5f && fabsf(out[1] - 38.5f) < 1e-5f;
    printf("app: y = [%g, %g] on %s (ggml %s): %s\n", (double) out[0], (double) out[1],
           ggml_backend_name(backend), ggml_version(), ok ? "ok" : "WRONG");

    // gguf is part of the package too
    struct gguf_context * g = gguf_init_empty();
    gguf_set_val_u32(g, "test.answer", 42);
    const int gguf_ok = gguf_get_val_u32(g, gguf_find_key(g, "test.answer")) == 42;
    gguf_free(g);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(backend);
    return ok && gguf_ok ? 0 : 1;
}
