// test-core: contexts, tensor creation, strides and the context arena.

#include "ggml.h"
#include "testing.h"

#include <string.h>

int main(void) {
    struct ggml_init_params params = { 16*1024*1024, NULL, false };
    struct ggml_context * ctx = ggml_init(params);
    CHECK(ctx != NULL);

    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 7, 5, 3);
    CHECK_EQ_INT(a->nb[0], 4);
    CHECK_EQ_INT(a->nb[1], 28);
    CHECK_EQ_INT(a->nb[2], 140);
    CHECK_EQ_INT(a->nb[3], 420);
    CHECK_EQ_INT(ggml_nbytes(a), 420);
    CHECK_EQ_INT(ggml_nelements(a), 105);
    CHECK_EQ_INT(ggml_nrows(a), 15);
    CHECK(ggml_is_contiguous(a));
    CHECK(a->data != NULL);

    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 3);
    CHECK_EQ_INT(q->nb[0], 18);
    CHECK_EQ_INT(q->nb[1], 36);
    CHECK_EQ_INT(ggml_nbytes(q), 108);

    ggml_set_name(a, "a");
    CHECK(ggml_get_tensor(ctx, "a") == a);
    CHECK(ggml_get_first_tensor(ctx) == a);
    CHECK(ggml_get_next_tensor(ctx, a) == q);
    CHECK(ggml_get_next_tensor(ctx, q) == NULL);

    ggml_free(ctx);
    return TEST_RESULT();
}
