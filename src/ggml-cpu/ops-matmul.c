// ops-matmul.c: kernels of the matmul op family (see cpu-impl.h for the list).

#include "cpu-impl.h"

void ggml_cpu_register_ops_matmul(struct ggml_cpu_op_impl * table) {
    (void) table; // no ops of this family yet
}
