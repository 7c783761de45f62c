#pragma once

// ggml-backward.h: what the backward pass (ggml-backward.c) can differentiate,
// for the tools that must know it before building a backward graph
// (test-backend-ops's grad mode). Internal: not installed.

#include "ggml.h"

#ifdef __cplusplus
extern "C" {
#endif

// whether ggml_build_backward_expand has a gradient rule for node's op (for
// UNARY its unary op, for GLU its op and form); false means it would abort
GGML_API bool ggml_backward_has_grad(const struct ggml_tensor * node);

#ifdef __cplusplus
}
#endif
