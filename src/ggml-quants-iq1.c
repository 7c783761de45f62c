// ggml-quants-iq1.c: the 1.5- and 1.75-bit grid types IQ1_S and IQ1_M.
//
// Values are -1, 0, +1 shifted by +-1/8 (the shift's sign stored per 32
// values for IQ1_S, per 8 for IQ1_M); groups of 8 are points of a 2048-point
// grid. A sub-block (32 values for IQ1_S, 16 for IQ1_M) is fitted exactly:
// with values sorted, every pair of cut points splits them into the three
// levels, and the split and shift of largest weighted projection wins. Code
// vectors off the grid move to their nearest neighbour, and the scale is
// refitted. Sub-block scales are 3 bits under one fp16 factor.
//
// These are upstream's searches, float expression for float expression, with
// upstream's fudge factors, so that the bytes are upstream's. The sort is the
// C library's qsort over (value, index) pairs with upstream's comparison, so
// that equal values come out in the order upstream's come out.

#include "ggml-quants-iq.h"

#include <float.h>
#include <stdlib.h>

#define IQ1S_GROUP_EPS 1e-12f
#define IQ1M_GROUP_EPS 1e-7f

static inline int iq1_round(float v) {
    const float t = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &t, sizeof(bits));
    return (bits & 0x007fffff) - 0x00400000;
}

static inline int iq1_clamp(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

// the levels of the three codes with a positive and a negative shift
static const float iq1_shift_p[3] = { -1 + GGML_IQ1S_DELTA,  GGML_IQ1S_DELTA, 1 + GGML_IQ1S_DELTA };
static const float iq1_shift_m[3] = { -1 - GGML_IQ1S_DELTA, -GGML_IQ1S_DELTA, 1 - GGML_IQ1S_DELTA };

struct iq1_pair {
    float value;
    int   index;
};

static int iq1_compare_pairs(const void * left, const void * right) {
    const float l = ((const struct iq1_pair *) left)->value;
    const float r = ((const struct iq1_pair *) right)->value;
    return l < r ? -1 : l > r ? 1 : 0;
}

// the values of xb in increasing order, as indices
static void iq1_sort(int n, const float * xb, int * order) {
    struct iq1_pair pairs[32];
    _Static_assert(sizeof(struct iq1_pair) == 2*sizeof(float), "upstream sorts 8-byte (value, index) pairs");
    for (int j = 0; j < n; j++) {
        pairs[j].value = xb[j];
        pairs[j].index = j;
    }
    qsort(pairs, (size_t) n, sizeof(pairs[0]), iq1_compare_pairs);
    for (int j = 0; j < n; j++) {
        order[j] = pairs[j].index;
    }
}

// The grid point nearest (weighted) to xb at scale with levels xx, among
// the neighbours of the off-grid code vector u; its codes go to L.
static int iq1_best_neighbour(const struct ggml_iq_search * s, int u, const float * xb, const float * weight,
                              float scale, const float * xx, int8_t * L) {
    const uint16_t * nb = s->neighbours + (-s->map[u] - 1);
    float best = FLT_MAX;
    int best_index = -1;
    for (int j = 1; j <= nb[0]; j++) {
        const int8_t * pg = s->points + 8*nb[j];
        float d2 = 0;
        for (int i = 0; i < 8; i++) {
            const float q = xx[(pg[i] - 1)/2];
            const float w = weight[i];
            const float diff = scale*q - xb[i];
            d2 += w*diff*diff;
        }
        if (d2 < best) {
            best = d2;
            best_index = nb[j];
        }
    }
    if (best_index < 0) {
        // no finite distance among the neighbours (non-finite input): any point
        for (int j = 0; j < s->n_points && best_index < 0; j++) {
            best_index = j;
        }
    }
    const int8_t * pg = s->points + 8*best_index;
    for (int i = 0; i < 8; i++) {
        L[i] = (int8_t) ((pg[i] - 1)/2);
    }
    return best_index;
}

// the grid index of the codes of 8 values, or the nearest neighbour's
static int iq1_grid_point(const struct ggml_iq_search * s, const float * xb, const float * weight, float scale,
                          const float * xx, int8_t * L, bool * on_grid) {
    int u = 0;
    for (int j = 0; j < 8; j++) {
        u |= L[j] << 2*j;
    }
    if (s->map[u] >= 0) {
        return s->map[u];
    }
    *on_grid = false;
    return iq1_best_neighbour(s, u, xb, weight, scale, xx, L);
}

static float iq1_sumx2(const float * x) {
    float sumx2 = 0;
    for (int i = 0; i < QK_K; i++) {
        sumx2 += x[i]*x[i];
    }
    return sumx2;
}

static float iq1_absmax(int n, const float * x) {
    float max = fabsf(x[0]);
    for (int i = 1; i < n; i++) {
        max = max > fabsf(x[i]) ? max : fabsf(x[i]);
    }
    return max;
}

static const struct ggml_iq_search * iq1_search(void) {
    ggml_quantize_init(GGML_TYPE_IQ1_S);
    const struct ggml_iq_search * s = ggml_iq_search_get(GGML_TYPE_IQ1_S);
    GGML_ASSERT(s != NULL && "ggml_quantize_init could not build the search tables");
    return s;
}

//
// IQ1_S: 32-value sub-blocks, one shift sign each; an imatrix is required
//

static void quantize_block_iq1_s(const struct ggml_iq_search * s, const float * x, const float * qw, block_iq1_s * y) {
    float scales[QK_K/32], weight[32], sumx[33], sumw[33];
    int8_t L[32];
    int order[32];
    int8_t shifts[QK_K/32];
    uint16_t index[4];
    const float sigma2 = 2*iq1_sumx2(x)/QK_K;
    float max_scale = 0;
    y->d = GGML_FP32_TO_FP16(0.f);
    memset(y->qs, 0, sizeof(y->qs));
    memset(y->qh, 0, sizeof(y->qh));

    for (int ib = 0; ib < QK_K/32; ib++) {
        const float * xb = x + 32*ib;
        for (int i = 0; i < 32; i++) weight[i] = qw[32*ib + i] * sqrtf(sigma2 + xb[i]*xb[i]);
        if (iq1_absmax(32, xb) < IQ1S_GROUP_EPS) {
            scales[ib] = 0;
            shifts[ib] = 1;
            continue;
        }
        iq1_sort(32, xb, order);
        sumx[0] = sumw[0] = 0;
        for (int j = 0; j < 32; j++) {
            const int i = order[j];
            sumx[j + 1] = sumx[j] + weight[i]*xb[i];
            sumw[j + 1] = sumw[j] + weight[i];
        }
        float best_score = -FLT_MAX, scale = iq1_absmax(32, xb);
        int besti1 = -1, besti2 = -1, best_shift = 0;
        for (int i1 = 0; i1 <= 32; i1++) {
            for (int i2 = i1; i2 <= 32; i2++) {
                for (int sh = 0; sh < 2; sh++) {
                    const float * xs = sh == 0 ? iq1_shift_p : iq1_shift_m;
                    const float sumqx = (sumx[i1] - sumx[0])*xs[0] + (sumx[i2] - sumx[i1])*xs[1] + (sumx[32] - sumx[i2])*xs[2];
                    const float sumq2 = (sumw[i1] - sumw[0])*xs[0]*xs[0] + (sumw[i2] - sumw[i1])*xs[1]*xs[1] +
                                        (sumw[32] - sumw[i2])*xs[2]*xs[2];
                    if (sumq2 > 0 && sumqx*sumqx > best_score*sumq2) {
                        scale = sumqx/sumq2;
                        best_score = scale*sumqx;
                        besti1 = i1;
                        besti2 = i2;
                        best_shift = sh == 0 ? 1 : -1;
                    }
                }
            }
        }
        if (besti1 < 0 || besti2 < 0 || best_shift == 0) {
            scales[ib] = 0;
            shifts[ib] = 1;
            continue;
        }
        for (int j = 0; j < 32; j++) {
            L[order[j]] = (int8_t) (j < besti1 ? 0 : j < besti2 ? 1 : 2);
        }
        if (scale < 0) {
            for (int j = 0; j < 32; j++) L[j] = (int8_t) (2 - L[j]);
            scale = -scale;
            best_shift = -best_shift;
        }
        const float * xx = best_shift == 1 ? iq1_shift_p : iq1_shift_m;
        bool all_on_grid = true;
        for (int k = 0; k < 4; k++) {
            index[k] = (uint16_t) iq1_grid_point(s, xb + 8*k, weight + 8*k, scale, xx, L + 8*k, &all_on_grid);
        }
        if (!all_on_grid) {
            float sumqx = 0, sumq2 = 0;
            for (int k = 0; k < 4; k++) {
                const int8_t * pg = s->points + 8*index[k];
                for (int j = 0; j < 8; j++) {
                    const float w = weight[8*k + j];
                    const float q = xx[(pg[j] - 1)/2];
                    sumqx += w*q*xb[8*k + j];
                    sumq2 += w*q*q;
                }
            }
            if (sumqx > 0 && sumq2 > 0) scale = sumqx/sumq2;
        }
        uint16_t h = 0;
        for (int k = 0; k < 4; k++) {
            y->qs[4*ib + k] = (uint8_t) (index[k] & 255);
            h |= (uint16_t) ((index[k] >> 8) << 3*k);
        }
        y->qh[ib]  = h;
        scales[ib] = scale;
        shifts[ib] = (int8_t) best_shift;
        max_scale  = max_scale > scale ? max_scale : scale;
    }
    if (!max_scale) {
        return;
    }
    const float d = max_scale/15;
    y->d = GGML_FP32_TO_FP16(d*1.125f);
    const float id = 1/d;
    for (int ib = 0; ib < QK_K/32; ib++) {
        int l = iq1_clamp(iq1_round(0.5f*(id*scales[ib] - 1)), 0, 7);
        if (shifts[ib] == -1) {
            l |= 8;
        }
        y->qh[ib] |= (uint16_t) (l << 12);
    }
}

//
// IQ1_M: 16-value sub-blocks, one shift sign per 8 values
//

// the level of value i (of 16) under shift choice k: bit 1 of k flips the
// shift of the first 8 values, bit 0 that of the last 8
static const float * iq1m_levels(int k, int i) {
    return i < 8 ? (k < 2 ? iq1_shift_p : iq1_shift_m) : (k%2 == 0 ? iq1_shift_p : iq1_shift_m);
}

static void iq1m_weights(const float * xb, const float * qw, float sigma2, float * weight) {
    if (qw) {
        for (int i = 0; i < 16; i++) weight[i] = qw[i] * sqrtf(sigma2 + xb[i]*xb[i]);
    } else {
        for (int i = 0; i < 16; i++) weight[i] = xb[i]*xb[i];
    }
}

static void quantize_block_iq1_m(const struct ggml_iq_search * s, const float * x, const float * qw, block_iq1_m * y) {
    static const uint8_t masks[4] = { 0x00, 0x80, 0x08, 0x88 };
    float scales[QK_K/16], weight[16];
    int8_t L[16];
    int order[16];
    int8_t shifts[QK_K/16];
    uint16_t index[2];
    const float sigma2 = 2*iq1_sumx2(x)/QK_K;
    float max_scale = 0;
    memset(y, 0, sizeof(*y));

    for (int ib = 0; ib < QK_K/16; ib++) {
        const float * xb = x + 16*ib;
        iq1m_weights(xb, qw ? qw + 16*ib : NULL, sigma2, weight);
        if (iq1_absmax(16, xb) < IQ1M_GROUP_EPS) {
            scales[ib] = 0;
            shifts[ib] = 0;
            continue;
        }
        iq1_sort(16, xb, order);
        float best_score = -FLT_MAX, scale = iq1_absmax(16, xb);
        int besti1 = -1, besti2 = -1, best_k = -1;
        for (int i1 = 0; i1 <= 16; i1++) {
            for (int i2 = i1; i2 <= 16; i2++) {
                float sumqx[4] = { 0 }, sumq2[4] = { 0 };
                for (int j = 0; j < 16; j++) {
                    const int i = order[j];
                    const int level = j < i1 ? 0 : j < i2 ? 1 : 2;
                    for (int k = 0; k < 4; k++) {
                        const float q = iq1m_levels(k, i)[level];
                        sumqx[k] += weight[i]*q*xb[i];
                        sumq2[k] += weight[i]*q*q;
                    }
                }
                for (int k = 0; k < 4; k++) {
                    if (sumq2[k] > 0 && sumqx[k]*sumqx[k] > best_score*sumq2[k]) {
                        scale = sumqx[k]/sumq2[k];
                        best_score = scale*sumqx[k];
                        besti1 = i1;
                        besti2 = i2;
                        best_k = k;
                    }
                }
            }
        }
        if (besti1 < 0 || besti2 < 0 || best_k < 0) {
            scales[ib] = 0;
            shifts[ib] = 0;
            continue;
        }
        for (int j = 0; j < 16; j++) {
            L[order[j]] = (int8_t) (j < besti1 ? 0 : j < besti2 ? 1 : 2);
        }
        if (scale < 0) {
            for (int j = 0; j < 16; j++) L[j] = (int8_t) (2 - L[j]);
            scale  = -scale;
            best_k = 3 - best_k;
        }
        bool all_on_grid = true;
        for (int k = 0; k < 2; k++) {
            index[k] = (uint16_t) iq1_grid_point(s, xb + 8*k, weight + 8*k, scale, iq1m_levels(best_k, 8*k), L + 8*k, &all_on_grid);
        }
        if (!all_on_grid) {
            float sumqx = 0, sumq2 = 0;
            for (int k = 0; k < 2; k++) {
                const float * xx = iq1m_levels(best_k, 8*k);
                const int8_t * pg = s->points + 8*index[k];
                for (int j = 0; j < 8; j++) {
                    const float w = weight[8*k + j];
                    const float q = xx[(pg[j] - 1)/2];
                    sumqx += w*q*xb[8*k + j];
                    sumq2 += w*q*q;
                }
            }
            if (sumqx > 0 && sumq2 > 0) scale = sumqx/sumq2;
        }
        y->qs[2*ib + 0] = (uint8_t) (index[0] & 255);
        y->qs[2*ib + 1] = (uint8_t) (index[1] & 255);
        y->qh[ib] = (uint8_t) ((index[0] >> 8) | ((index[1] >> 8) << 4));
        scales[ib] = scale;
        shifts[ib] = (int8_t) best_k;
        max_scale  = max_scale > scale ? max_scale : scale;
    }
    if (!max_scale) {
        return;
    }

    // the 3-bit scales, then the super-block scale refitted to them (over
    // every sub-block, the empty ones included, as upstream does)
    uint16_t sc[4] = { 0 };
    float d = max_scale/15;
    const float id = 1/d;
    float sumqx = 0, sumq2 = 0;
    for (int ib = 0; ib < QK_K/16; ib++) {
        const int l = iq1_clamp(iq1_round(0.5f*(id*scales[ib] - 1)), 0, 7);
        sc[ib/4] |= (uint16_t) (l << 3*(ib%4));
        y->qh[ib] |= masks[shifts[ib]];
        const float * xb = x + 16*ib;
        iq1m_weights(xb, qw ? qw + 16*ib : NULL, sigma2, weight);
        for (int k = 0; k < 2; k++) {
            const float * xx = iq1m_levels(shifts[ib], 8*k);
            const int8_t * pg = s->points + 8*(y->qs[2*ib + k] + ((y->qh[ib] << (8 - 4*k)) & 0x700));
            for (int j = 0; j < 8; j++) {
                const float w = weight[8*k + j];
                const float q = xx[(pg[j] - 1)/2]*(2*l + 1);
                sumqx += w*q*xb[8*k + j];
                sumq2 += w*q*q;
            }
        }
    }
    if (sumq2 > 0) {
        d = sumqx/sumq2;
    }
    const ggml_half h = GGML_FP32_TO_FP16(d*1.1125f);
    sc[0] |= (uint16_t) ((h & 0x000f) << 12);
    sc[1] |= (uint16_t) ((h & 0x00f0) <<  8);
    sc[2] |= (uint16_t) ((h & 0x0f00) <<  4);
    sc[3] |= (uint16_t) ((h & 0xf000) <<  0);
    memcpy(y->scales, sc, sizeof(sc));
}

size_t quantize_iq1_s(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_ASSERT(imatrix && "iq1_s needs an importance matrix");
    GGML_ASSERT(n_per_row % QK_K == 0);
    const struct ggml_iq_search * s = iq1_search();
    block_iq1_s * y = dst;
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t b = 0; b < n_per_row/QK_K; b++) {
            quantize_block_iq1_s(s, src + r*n_per_row + b*QK_K, imatrix + b*QK_K, y++);
        }
    }
    return (size_t) nrows * ggml_row_size(GGML_TYPE_IQ1_S, n_per_row);
}

size_t quantize_iq1_m(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_ASSERT(n_per_row % QK_K == 0);
    const struct ggml_iq_search * s = iq1_search();
    block_iq1_m * y = dst;
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t b = 0; b < n_per_row/QK_K; b++) {
            quantize_block_iq1_m(s, src + r*n_per_row + b*QK_K, imatrix ? imatrix + b*QK_K : NULL, y++);
        }
    }
    return (size_t) nrows * ggml_row_size(GGML_TYPE_IQ1_M, n_per_row);
}

//
// dequantization
//

void dequantize_row_iq1_s(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_iq1_s * x = vx;
    const uint64_t * grid = ggml_iq_grids()->iq1s;
    for (int64_t i = 0; i < k/QK_K; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ib++) {
            const uint16_t qh = x[i].qh[ib];
            const float dl    = d * (2*((qh >> 12) & 7) + 1);
            const float delta = qh & 0x8000 ? -GGML_IQ1S_DELTA : GGML_IQ1S_DELTA;
            for (int l = 0; l < 4; l++) {
                const int8_t * g = (const int8_t *) (grid + (x[i].qs[4*ib + l] | (((qh >> 3*l) & 7) << 8)));
                for (int j = 0; j < 8; j++) {
                    y[j] = dl * (g[j] + delta);
                }
                y += 8;
            }
        }
    }
}

// the fp16 super-block scale of an iq1_m block, spread over its scales
float ggml_iq1_m_scale(const block_iq1_m * b) {
    uint16_t sc[4];
    memcpy(sc, b->scales, sizeof(sc));
    const ggml_half h = (ggml_half) ((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
    return GGML_FP16_TO_FP32(h);
}

void dequantize_row_iq1_m(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_iq1_m * x = vx;
    const uint64_t * grid = ggml_iq_grids()->iq1s;
    for (int64_t i = 0; i < k/QK_K; i++) {
        uint16_t sc[4];
        memcpy(sc, x[i].scales, sizeof(sc));
        const float d = ggml_iq1_m_scale(&x[i]);
        for (int ib = 0; ib < QK_K/16; ib++) {
            const float dl = d * (2*((sc[ib/4] >> 3*(ib%4)) & 7) + 1);
            const uint8_t qh = x[i].qh[ib];
            for (int l = 0; l < 2; l++) {
                const int idx = x[i].qs[2*ib + l] | (((qh >> 4*l) & 7) << 8);
                const float delta = (qh >> 4*l) & 0x08 ? -GGML_IQ1S_DELTA : GGML_IQ1S_DELTA;
                const int8_t * g = (const int8_t *) (grid + idx);
                for (int j = 0; j < 8; j++) {
                    y[j] = dl * (g[j] + delta);
                }
                y += 8;
            }
        }
    }
}
