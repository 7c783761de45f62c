#pragma once

//
// ref-ops.h: the element-wise ops of ggml-op-list.h as scalar functions in
// double precision, from their definitions (part of the library ggml-ref).
// The reference evaluator applies them to whole tensors; the tests of the
// CPU kernels (tests/test-cpu-elementwise.c) check each value against them.
//
// Forms chosen for accuracy where the textbook one cancels: the sigmoid
// family as x / (1 + e^-t) or x e^t / (1 + e^t), 1 + erf(z) as erfc(-z);
// GELU's constants are ggml's binary32 ones, widened.
//

#include "ggml.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

// whether the list holds a unary function of this op (uop: for GGML_OP_UNARY)
bool ggml_ref_has_unary(enum ggml_op op, enum ggml_unary_op uop);

// f(x) of op; p: the node's op_params[0..4] read as floats, widened
double ggml_ref_unary(enum ggml_op op, enum ggml_unary_op uop, const double p[5], double x);

// whether op is one of the list's binary ops (ADD1 is not)
bool ggml_ref_has_binary(enum ggml_op op);

// x op y
double ggml_ref_binary(enum ggml_op op, double x, double y);

// the GLU op's value for x and gate g (alpha, limit: SWIGLU_OAI's parameters)
double ggml_ref_glu(enum ggml_glu_op op, double alpha, double limit, double x, double g);

#ifdef __cplusplus
}
#endif
