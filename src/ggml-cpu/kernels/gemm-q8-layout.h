#pragma once

//
// gemm-q8-layout.h: the byte layout of the q8 panels (gemm.h) as the packers
// and tile kernels of kernels/gemm-q8.c (portable) and arch/*/gemm-q8-*.c
// (vector) share it: sizes, where the scales of a superblock go, the
// weights' code offset of the halves form, and the panel forms the tiles meet.
//

#include "kernels/gemm.h"

#define Q8P_LANES GGML_Q8P_LANES
#define Q8P_SB    GGML_Q8P_SB_BYTES
#define Q8P_CODES (Q8P_LANES * 32)  // bytes of codes in a superblock
#define Q8P_W     (Q8P_LANES * 4)   // bytes of one group of codes

#define Q8P2_SB   GGML_Q8P2_SB_BYTES

static inline void q8p_store_scales(uint8_t * sb, const float * d, const float * c) {
    memcpy(sb + Q8P_CODES,                         d, Q8P_LANES * sizeof(float));
    memcpy(sb + Q8P_CODES + Q8P_LANES*sizeof(float), c, Q8P_LANES * sizeof(float));
}

// halves form: d[h][l], c[h][l]
static inline void q8p2_store_scales(uint8_t * sb, const float * d, const float * c) {
    memcpy(sb + Q8P_CODES,                           d, 2 * Q8P_LANES * sizeof(float));
    memcpy(sb + Q8P_CODES + 2*Q8P_LANES*sizeof(float), c, 2 * Q8P_LANES * sizeof(float));
}

// the offset o of the unsigned codes u = v + o of a halves type without
// minima (0: Q2_K, whose codes are unsigned and whose minima are float terms)
static inline int32_t q8p2_offset(enum ggml_type type) {
    return type == GGML_TYPE_Q6_K ? 32 : type == GGML_TYPE_Q3_K ? 4 : 0;
}

// the panel forms the kernels meet
enum q8p_form {
    Q8P_PLAIN,       // one scale and constant term per block
    Q8P_HALVES,      // halves form, float constant terms (Q2_K: the minima)
    Q8P_HALVES_OFS,  // halves form, the weights' offset o (Q3_K, Q6_K):
                     // activation panels hold the integers -o * (sum of the
                     // half's codes) in c, where the unsigned kernels start
                     // their integer sums; weight panels hold no c
};
