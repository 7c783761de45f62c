// test-sched-undo: a graph built where a freed graph was must not inherit
// the scheduler's bookkeeping of the freed one.
//
// The scheduler undoes what it wrote into a graph (redirected sources, the
// tensors it placed) when the same graph is split again. ggml-opt frees the
// copy of each graph it allocates and makes the next copy in a new context,
// which malloc usually puts at the same address: the scheduler took the new
// graph for the old one and cleared the data of tensors the caller had
// placed (the loss, the parameters), so training computed into scratch
// memory. Here both graphs live in one caller-provided buffer, so that the
// second is at exactly the address of the first.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "testing.h"

#include <stdlib.h>
#include <string.h>

int main(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    CHECK(cpu != NULL);
    ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, 64, false, true);

    // w: a weight placed by the caller
    struct ggml_init_params pw = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx_w = ggml_init(pw);
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx_w, GGML_TYPE_F32, 4);
    ggml_backend_buffer_t buf_w = ggml_backend_alloc_ctx_tensors(ctx_w, cpu);
    const float wv[4] = { 1, 2, 3, 4 };
    ggml_backend_tensor_set(w, wv, 0, sizeof(wv));

    const size_t mem_size = 8 * ggml_tensor_overhead() + ggml_graph_overhead_custom(64, false);
    void * mem = malloc(mem_size);

    // graph A: y = 2 w, y placed by the scheduler
    {
        struct ggml_init_params p = { mem_size, mem, true };
        struct ggml_context * ctx = ggml_init(p);
        struct ggml_tensor * y = ggml_scale(ctx, w, 2.0f);
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
        ggml_build_forward_expand(g, y);
        CHECK(ggml_backend_sched_alloc_graph(sched, g));
        CHECK(ggml_backend_sched_graph_compute(sched, g) == GGML_STATUS_SUCCESS);
        ggml_backend_sched_reset(sched);
        ggml_free(ctx);
    }

    // graph B at the same addresses: z = 3 w, z placed by the caller in its own buffer
    {
        memset(mem, 0, mem_size);
        struct ggml_init_params p = { mem_size, mem, true };
        struct ggml_context * ctx = ggml_init(p);
        struct ggml_tensor * z = ggml_scale(ctx, w, 3.0f);
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
        ggml_build_forward_expand(g, z);

        ggml_backend_buffer_t buf_z = ggml_backend_alloc_buffer(cpu, ggml_nbytes(z) + 64);
        void * base = ggml_backend_buffer_get_base(buf_z);
        CHECK(ggml_backend_tensor_alloc(buf_z, z, base) == GGML_STATUS_SUCCESS);

        CHECK(ggml_backend_sched_alloc_graph(sched, g));
        CHECK_MSG(z->data == base, "the caller's tensor was moved to %p from %p", z->data, base);
        CHECK(z->buffer == buf_z);
        CHECK(ggml_backend_sched_graph_compute(sched, g) == GGML_STATUS_SUCCESS);

        float zv[4] = { 0 };
        memcpy(zv, base, sizeof(zv)); // read the caller's memory itself
        for (int i = 0; i < 4; i++) {
            CHECK_NEAR(zv[i], 3.0 * wv[i], 0.0);
        }
        ggml_backend_sched_reset(sched);
        ggml_free(ctx);
        ggml_backend_buffer_free(buf_z);
    }

    free(mem);
    ggml_backend_buffer_free(buf_w);
    ggml_free(ctx_w);
    ggml_backend_sched_free(sched);
    ggml_backend_free(cpu);
    return TEST_RESULT();
}
