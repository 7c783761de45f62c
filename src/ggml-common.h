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
#include <string.h>

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

//
// K-quants: super-blocks of QK_K values made of sub-blocks of 16 or 32 values,
// each sub-block with its own small integer scale (and minimum), and one or
// two fp16 factors per super-block that turn those into floats.
//

#define QK_K 256
#define K_SCALE_SIZE 12

// value = d*(scale & 15)*q - dmin*(scale >> 4) per sub-block of 16; q in 0..3
typedef struct {
    uint8_t   scales[QK_K/16]; // 4-bit scale (low nibble) and 4-bit minimum (high nibble) per sub-block
    uint8_t   qs[QK_K/4];      // value 128h + 32s + l at bits 2s of qs[32h + l]
    ggml_half d;               // factor of the scales
    ggml_half dmin;            // factor of the minimums
} block_q2_K;
_Static_assert(sizeof(block_q2_K) == 2*sizeof(ggml_half) + QK_K/16 + QK_K/4, "wrong q2_K block size");

// value = d*(scale - 32)*(q - 4) per sub-block of 16; q in 0..7
typedef struct {
    uint8_t   hmask[QK_K/8];   // bit 2 of value p at bit p/32 of hmask[p % 32]
    uint8_t   qs[QK_K/4];      // low two bits, packed as in q2_K
    uint8_t   scales[12];      // 16 6-bit scales: low nibbles in bytes 0..7, top two bits in bytes 8..11
    ggml_half d;               // factor of the scales
} block_q3_K;
_Static_assert(sizeof(block_q3_K) == sizeof(ggml_half) + QK_K/4 + QK_K/8 + 12, "wrong q3_K block size");

// value = d*scale*q - dmin*min per sub-block of 32; q in 0..15
typedef struct {
    ggml_half d;                   // factor of the scales
    ggml_half dmin;                // factor of the minimums
    uint8_t   scales[K_SCALE_SIZE];// 8 6-bit scales and 8 6-bit minimums
    uint8_t   qs[QK_K/2];          // value 64h + l at the low nibble of qs[32h + l], 64h + 32 + l at the high one
} block_q4_K;
_Static_assert(sizeof(block_q4_K) == 2*sizeof(ggml_half) + K_SCALE_SIZE + QK_K/2, "wrong q4_K block size");

// as q4_K with a fifth bit: q in 0..31
typedef struct {
    ggml_half d;                   // factor of the scales
    ggml_half dmin;                // factor of the minimums
    uint8_t   scales[K_SCALE_SIZE];// as in q4_K
    uint8_t   qh[QK_K/8];          // bit 4 of value p at bit p/32 of qh[p % 32]
    uint8_t   qs[QK_K/2];          // low four bits, as in q4_K
} block_q5_K;
_Static_assert(sizeof(block_q5_K) == 2*sizeof(ggml_half) + K_SCALE_SIZE + QK_K/2 + QK_K/8, "wrong q5_K block size");

// value = d*scale*(q - 32) per sub-block of 16; q in 0..63
typedef struct {
    uint8_t   ql[QK_K/2];      // low four bits: value 128h + 32s + l in qs[64h + 32(s&1) + l], nibble s/2
    uint8_t   qh[QK_K/4];      // top two bits: value 128h + 32s + l at bits 2s of qh[32h + l]
    int8_t    scales[QK_K/16]; // signed 8-bit scales
    ggml_half d;               // factor of the scales
} block_q6_K;
_Static_assert(sizeof(block_q6_K) == sizeof(ggml_half) + QK_K/16 + 3*QK_K/4, "wrong q6_K block size");

// activations of the K-quant dot products (never stored in files)
typedef struct {
    float   d;                 // scale
    int8_t  qs[QK_K];          // values
    int16_t bsums[QK_K/16];    // sums of the values of each group of 16
} block_q8_K;
_Static_assert(sizeof(block_q8_K) == sizeof(float) + QK_K + QK_K/16*sizeof(int16_t), "wrong q8_K block size");

//
// non-linear 4-bit codes: a code is an index into a table of 16 int8 values
//

#define QK4_NL 32
// value j = d * kvalues_iq4nl[code j]; codes packed as in q4_0
typedef struct {
    ggml_half d;
    uint8_t   qs[QK4_NL/2];
} block_iq4_nl;
_Static_assert(sizeof(block_iq4_nl) == sizeof(ggml_half) + QK4_NL/2, "wrong iq4_nl block size");

// sub-block ib of 32: d * (ls - 32) * kvalues_iq4nl[code], ls the 6-bit scale:
// low nibble ib%2 of scales_l[ib/2], top two bits at bits 2ib of scales_h;
// codes of sub-block ib packed as in q4_0 in qs[16ib .. 16ib + 16)
typedef struct {
    ggml_half d;
    uint16_t  scales_h;
    uint8_t   scales_l[QK_K/64];
    uint8_t   qs[QK_K/2];
} block_iq4_xs;
_Static_assert(sizeof(block_iq4_xs) == sizeof(ggml_half) + sizeof(uint16_t) + QK_K/64 + QK_K/2, "wrong iq4_xs block size");

// value j = 2^(e - 128) * kvalues_mxfp4[code j] (the table holds twice the
// E2M1 values); codes packed as in q4_0
#define QK_MXFP4 32
typedef struct {
    uint8_t e;             // E8M0 exponent
    uint8_t qs[QK_MXFP4/2];
} block_mxfp4;
_Static_assert(sizeof(block_mxfp4) == 1 + QK_MXFP4/2, "wrong mxfp4 block size");

// Q1_0: value j = d * (bit j of qs ? 1 : -1)
#define QK1_0 128
typedef struct {
    ggml_half d;
    uint8_t   qs[QK1_0/8];
} block_q1_0;
_Static_assert(sizeof(block_q1_0) == sizeof(ggml_half) + QK1_0/8, "wrong q1_0 block size");

// Q2_0: value j = d * (q - 1), q the 2-bit field j of qs (bits 2*(j%4) of byte j/4)
#define QK2_0 64
typedef struct {
    ggml_half d;
    uint8_t   qs[QK2_0/4];
} block_q2_0;
_Static_assert(sizeof(block_q2_0) == sizeof(ggml_half) + QK2_0/4, "wrong q2_0 block size");

// NVFP4: four sub-blocks of 16, each with a UE4M3 scale; within a sub-block
// codes packed as in q4_0 (value j low nibble, j + 8 high): d * kvalues_mxfp4[code] / 2
#define QK_NVFP4     64
#define QK_NVFP4_SUB 16
typedef struct {
    uint8_t d[QK_NVFP4/QK_NVFP4_SUB];
    uint8_t qs[QK_NVFP4/2];
} block_nvfp4;
_Static_assert(sizeof(block_nvfp4) == QK_NVFP4/QK_NVFP4_SUB + QK_NVFP4/2, "wrong nvfp4 block size");

// The grid types: groups of 8 (IQ1, IQ2) or 4 (IQ3) values are one point of
// a grid (ggml-quants-iq.h), stored by index, with signs and small scales.

// per 32 values, two uint32: four 8-bit grid indices; four 7-bit sign groups
// (bits 0..27) and a 4-bit scale s (bits 28..31): d * (0.5 + s) * 0.25
typedef struct {
    ggml_half d;
    uint16_t  qs[QK_K/8];
} block_iq2_xxs;
_Static_assert(sizeof(block_iq2_xxs) == sizeof(ggml_half) + QK_K/8*sizeof(uint16_t), "wrong iq2_xxs block size");

// per 8 values a uint16: 9-bit grid index, 7 sign bits; a 4-bit scale per 16
typedef struct {
    ggml_half d;
    uint16_t  qs[QK_K/8];
    uint8_t   scales[QK_K/32];
} block_iq2_xs;
_Static_assert(sizeof(block_iq2_xs) == sizeof(ggml_half) + QK_K/8*sizeof(uint16_t) + QK_K/32, "wrong iq2_xs block size");

// qs: 32 low bytes of the 10-bit grid indices, then 32 sign bytes; qh: the
// 2 high bits of four indices per byte; a 4-bit scale per 16
typedef struct {
    ggml_half d;
    uint8_t   qs[QK_K/4];
    uint8_t   qh[QK_K/32];
    uint8_t   scales[QK_K/32];
} block_iq2_s;
_Static_assert(sizeof(block_iq2_s) == sizeof(ggml_half) + QK_K/4 + QK_K/16, "wrong iq2_s block size");

// qs: 64 8-bit grid indices (4 values each), then per 32 values a uint32 of
// four 7-bit sign groups and a 4-bit scale s: d * (0.5 + s) * 0.5
typedef struct {
    ggml_half d;
    uint8_t   qs[3*QK_K/8];
} block_iq3_xxs;
_Static_assert(sizeof(block_iq3_xxs) == sizeof(ggml_half) + 3*(QK_K/8), "wrong iq3_xxs block size");

// 9-bit grid indices (low bytes in qs, high bits in qh), 8 sign bits per 8
// values, a 4-bit scale s per 32 values: d * (1 + 2s)
#define IQ3S_N_SCALE (QK_K/64)
typedef struct {
    ggml_half d;
    uint8_t   qs[QK_K/4];
    uint8_t   qh[QK_K/32];
    uint8_t   signs[QK_K/8];
    uint8_t   scales[IQ3S_N_SCALE];
} block_iq3_s;
_Static_assert(sizeof(block_iq3_s) == sizeof(ggml_half) + 13*(QK_K/32) + IQ3S_N_SCALE, "wrong iq3_s block size");

// 11-bit grid indices of values -1, 0, 1: low bytes in qs; per 32 values a
// uint16 qh: the three high bits of four indices (bits 0..11), a 3-bit scale
// s (12..14) and the sign of the shift (15): d * (2s + 1) * (v +- 0.125)
typedef struct {
    ggml_half d;
    uint8_t   qs[QK_K/8];
    uint16_t  qh[QK_K/32];
} block_iq1_s;
_Static_assert(sizeof(block_iq1_s) == sizeof(ggml_half) + QK_K/8 + QK_K/16, "wrong iq1_s block size");

// as iq1_s with a 3-bit scale per 16 values and the shift sign per 8 values
// (bit 3 of each nibble of qh); the fp16 super-block scale is spread over
// the top 4 bits of the four uint16 of scales
typedef struct {
    uint8_t qs[QK_K/8];
    uint8_t qh[QK_K/16];
    uint8_t scales[QK_K/32];
} block_iq1_m;
_Static_assert(sizeof(block_iq1_m) == QK_K/8 + QK_K/16 + QK_K/32, "wrong iq1_m block size");

// the code tables (functions, so that files which do not use them carry no copy)
static inline const int8_t * ggml_kvalues_iq4nl(void) {
    static const int8_t values[16] = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };
    return values;
}

static inline const int8_t * ggml_kvalues_mxfp4(void) {
    static const int8_t values[16] = { 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12 };
    return values;
}

// 2^(e - 128): half the E8M0 scale (the table values are doubled)
static inline float ggml_e8m0_to_fp32_half(uint8_t e) {
    // e < 2 gives subnormal floats: 2^-128 and 2^-127
    const uint32_t bits = e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23;
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

//
// ternary formats: values -1, 0, 1 times one fp16 scale per 256
//

// values 0..159: trit n (most significant first) of qs[m], value m + 32n (m < 32);
// values 160..239: trit n of qs[32 + m], value 160 + m + 16n (m < 16);
// values 240..255: trit m of qh[j], value 240 + j + 4m. A byte holds its trits
// as ceil(t * 256 / 243), t the base-3 number they form (5 trits; qh: 4 and a 0).
typedef struct {
    uint8_t   qs[(QK_K - 4*QK_K/64)/5];
    uint8_t   qh[QK_K/64];
    ggml_half d;
} block_tq1_0;
_Static_assert(sizeof(block_tq1_0) == sizeof(ggml_half) + QK_K/64 + (QK_K - 4*QK_K/64)/5, "wrong tq1_0 block size");

// value 128h + 32n + m at bits 2n of qs[32h + m], stored + 1
typedef struct {
    uint8_t   qs[QK_K/4];
    ggml_half d;
} block_tq2_0;
_Static_assert(sizeof(block_tq2_0) == sizeof(ggml_half) + QK_K/4, "wrong tq2_0 block size");
