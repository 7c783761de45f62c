#pragma once

//
// ggml-common.h: block layouts of the quantized types.
//
// A quantized row is a sequence of blocks; each block holds QK values as small
// integers with one or two fp16 scale factors. These layouts are part of the
// GGUF file format and must match upstream ggml byte for byte.
//

#include "ggml.h"

#include <stdint.h>

typedef uint16_t ggml_half;

#define QK4_0 32
typedef struct {
    ggml_half d;           // scale
    uint8_t   qs[QK4_0/2]; // value j in the low nibble of qs[j], value j+16 in the high nibble; q - 8
} block_q4_0;
_Static_assert(sizeof(block_q4_0) == sizeof(ggml_half) + QK4_0/2, "wrong q4_0 block size");

#define QK4_1 32
typedef struct {
    ggml_half d;           // scale
    ggml_half m;           // minimum
    uint8_t   qs[QK4_1/2]; // nibbles as in q4_0, unsigned
} block_q4_1;
_Static_assert(sizeof(block_q4_1) == 2*sizeof(ggml_half) + QK4_1/2, "wrong q4_1 block size");

#define QK5_0 32
typedef struct {
    ggml_half d;           // scale
    uint8_t   qh[4];       // fifth bits: bit j of the little-endian uint32 is the high bit of value j
    uint8_t   qs[QK5_0/2]; // low four bits, as in q4_0; q - 16
} block_q5_0;
_Static_assert(sizeof(block_q5_0) == sizeof(ggml_half) + 4 + QK5_0/2, "wrong q5_0 block size");

#define QK5_1 32
typedef struct {
    ggml_half d;           // scale
    ggml_half m;           // minimum
    uint8_t   qh[4];       // fifth bits, as in q5_0
    uint8_t   qs[QK5_1/2]; // low four bits, unsigned
} block_q5_1;
_Static_assert(sizeof(block_q5_1) == 2*sizeof(ggml_half) + 4 + QK5_1/2, "wrong q5_1 block size");

#define QK8_0 32
typedef struct {
    ggml_half d;           // scale
    int8_t    qs[QK8_0];   // values
} block_q8_0;
_Static_assert(sizeof(block_q8_0) == sizeof(ggml_half) + QK8_0, "wrong q8_0 block size");

#define QK8_1 32
typedef struct {
    ggml_half d;           // scale
    ggml_half s;           // d * sum(qs)
    int8_t    qs[QK8_1];   // values
} block_q8_1;
_Static_assert(sizeof(block_q8_1) == 2*sizeof(ggml_half) + QK8_1, "wrong q8_1 block size");

// block sizes of the other types, for sizing rows of files that contain them
#define QK_K 256
