#pragma once

//
// ggml-quants-iq.h: shared pieces of the grid-based IQ types (IQ1_S, IQ1_M,
// IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), internal to the library.
//
// A group of 8 (IQ1, IQ2) or 4 (IQ3) values is one point of a fixed grid,
// stored by its index. The grids are listed in compact form in
// ggml-quants-iq-codes.c; ggml-quants-iq-grid.c expands them to the bytes the
// dequantizers read, and builds for the quantizers the map from every
// reachable code vector to its grid index or to its list of nearest points.
//

#include "ggml-quants.h"

#ifdef __cplusplus
extern "C" {
#endif

// the grids, one uint16 of packed codes per point (code i in bits [b*i, b*i+b))
extern const uint16_t ggml_iq2xxs_codes[256];
extern const uint16_t ggml_iq2xs_codes[512];
extern const uint16_t ggml_iq2s_codes[1024];
extern const uint16_t ggml_iq1s_codes[2048];
extern const uint16_t ggml_iq3xxs_codes[256];
extern const uint16_t ggml_iq3s_codes[512];

#define GGML_IQ1S_DELTA 0.125f

// The grids as dequantization values, one byte per value (8 per point for
// IQ1/IQ2, 4 for IQ3): IQ2 codes 0..2 -> 8, 25, 43; IQ3_XXS codes 0..7 ->
// 4, 12, ..., 52, 62; IQ3_S codes -> 1, 3, ..., 15; IQ1 codes -> -1, 0, 1.
// Built once, on first use, by whichever thread asks first.
struct ggml_iq_grids {
    const uint64_t * iq2xxs;
    const uint64_t * iq2xs;
    const uint64_t * iq2s;
    const uint64_t * iq1s;   // int8 values
    const uint32_t * iq3xxs;
    const uint32_t * iq3s;
};
GGML_API const struct ggml_iq_grids * ggml_iq_grids(void);

// the sign byte of 8 values from its 7 stored bits: the eighth sign makes
// the number of negative values even
static inline uint8_t ggml_iq_signs7(uint32_t s7) {
    s7 &= 127;
    uint32_t p = s7;
    p ^= p >> 4;
    p ^= p >> 2;
    p ^= p >> 1;
    return (uint8_t) (s7 | ((p & 1) << 7));
}

// What a quantizer searches: each grid point as `dim` levels 2*code + 1, the
// map from a packed code vector (code < max_code each) to its grid index
// (>= 0) or to -(1 + offset) of its neighbour list in `neighbours`: a count
// n, then n grid indices, the points at the n_nearest smallest distinct
// squared distances, by distance then index (upstream's lists).
struct ggml_iq_search {
    int              dim;
    int              bits;
    int              n_points;
    const int8_t   * points;
    const int32_t  * map;
    const uint16_t * neighbours;
};

// the search tables of type, built by ggml_quantize_init(type); NULL before
GGML_API const struct ggml_iq_search * ggml_iq_search_get(enum ggml_type type);
// build (once) / free all; called by ggml_quantize_init / ggml_quantize_free
// under their lock
void ggml_iq_search_init(enum ggml_type type);
void ggml_iq_search_free(void);

#ifdef __cplusplus
}
#endif
