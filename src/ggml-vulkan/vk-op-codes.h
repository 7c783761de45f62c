#pragma once

// vk-op-codes.h: the op codes of eltwise.comp and glu.comp, numbered from the
// lists of ggml-op-list.h. The C side (vk-ops-record.c) passes them in the
// push constants; the shaders get the same numbers, and the GLSL expression
// of each op, from a header that vk-gen-ops.c writes at build time from these
// enums and the lists, so that the two cannot disagree.

#include "ggml-op-list.h"

// eltwise.comp: a copy (CPY/DUP/CONT), the binary list, then the unary list
enum ggml_vk_elt_op {
    GGML_VK_ELT_COPY,
#define X(NAME, ...) GGML_VK_ELT_##NAME,
    GGML_OP_LIST_BINARY(X)
    GGML_OP_LIST_UNARY(X)
#undef X
    GGML_VK_ELT_COUNT,
};

// the binary ops have the codes 1..GGML_VK_ELT_LAST_BINARY
enum {
    GGML_VK_ELT_LAST_BINARY = GGML_VK_ELT_COPY
#define X(NAME, ...) + 1
    GGML_OP_LIST_BINARY(X)
#undef X
};

// glu.comp: the GLU list, whose order is enum ggml_glu_op's
enum ggml_vk_glu_op {
#define X(NAME, ...) GGML_VK_GLU_##NAME,
    GGML_OP_LIST_GLU(X)
#undef X
    GGML_VK_GLU_COUNT,
};
