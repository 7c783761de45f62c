// ops-elementwise.c: registers the elementwise op family, whose kernels live
// in ops-binary.c (add, sub, mul, div, add1, acc), ops-unary.c (sqr ... exp,
// scale, clamp, leaky_relu, unary) and ops-glu.c (gated linear units).

#include "ops/elementwise.h"

void ggml_cpu_register_ops_elementwise(struct ggml_cpu_op_impl * table) {
    ggml_cpu_register_ops_binary(table);
    ggml_cpu_register_ops_unary(table);
    ggml_cpu_register_ops_glu(table);
}
