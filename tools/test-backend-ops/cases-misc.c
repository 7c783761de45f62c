// cases-misc.c: the cases of the small ops of upstream's later additions
// (CUMSUM, TRI, FILL, DIAG, SOLVE_TRI, ...) and their place in the list.

#include "tbo.h"

#define NE(...) ((const int64_t[]) { __VA_ARGS__ })

void tbo_list_misc_after_leaky_relu(struct tbo_case_list * l) {
    tbo_add_xielu(l, GGML_TYPE_F32, NE(10, 5, 4, 3));
    tbo_add_xielu(l, GGML_TYPE_F16, NE(10, 5, 4, 3));
    tbo_add_xielu(l, GGML_TYPE_F32, NE(512, 16, 1, 1));
    tbo_add_xielu(l, GGML_TYPE_F16, NE(512, 16, 1, 1));
}
