// ggml-quants-iq.c: the 2- and 3-bit grid types IQ2_XXS, IQ2_XS, IQ2_S,
// IQ3_XXS and IQ3_S: quantizers and dequantizers.
//
// Every type quantizes a sub-block (32 or 16 values) the same way: signs
// apart, each group of 8 (IQ2) or 4 (IQ3) magnitudes is rounded to a code
// vector at a trial scale, moved to the best grid point among its
// neighbours when it is off the grid, and the scale is refitted by weighted
// least squares; the best of a few trial scales wins (iq_fit_subblock). The
// sub-block scales are then stored in 4 bits under one fp16 factor.
//
// As for the K-quants, these are upstream's searches (the same trial
// scales, the same float expressions in the same order, the same fudge
// factors on the stored scale), so that the bytes are upstream's. Where
// upstream's packing has a quirk (IQ3_S leaves no room for an all-zero
// sub-block: the next ones move up), it is kept: files must be upstream's.

#include "ggml-quants-iq.h"

#include <float.h>

#define IQ_GROUP_EPS        1e-15f
#define IQ_GROUP_EPS_IQ3XXS 1e-8f
#define IQ_GROUP_EPS_IQ2S   1e-8f

static inline int iq_round(float v) {
    const float t = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &t, sizeof(bits));
    return (bits & 0x007fffff) - 0x00400000;
}

static inline int iq_clamp(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

// the tables of type, built on first use (ggml_quantize_init is idempotent)
static const struct ggml_iq_search * iq_search(enum ggml_type type) {
    ggml_quantize_init(type);
    const struct ggml_iq_search * s = ggml_iq_search_get(type);
    GGML_ASSERT(s != NULL && "ggml_quantize_init could not build the search tables");
    return s;
}

// |x| of 8 values with their sign bits. With even_signs, only 7 bits are
// stored (the eighth makes the count of negatives even): for an odd count the
// value of least weighted magnitude takes the wrong sign instead.
static uint8_t iq_signs8(const float * x, const float * weight, float * xval, bool even_signs) {
    int nflip = 0;
    uint8_t s = 0;
    for (int i = 0; i < 8; i++) {
        if (x[i] >= 0) {
            xval[i] = x[i];
        } else {
            xval[i] = -x[i];
            nflip++;
            s |= (uint8_t) (1 << i);
        }
    }
    if (even_signs && nflip%2) {
        int imin = 0;
        float min = weight[0]*x[0]*x[0];
        for (int i = 1; i < 8; i++) {
            const float ax = weight[i]*x[i]*x[i];
            if (ax < min) {
                min  = ax;
                imin = i;
            }
        }
        xval[imin] = -xval[imin];
        s ^= (uint8_t) (1 << imin);
    }
    return even_signs ? s & 127 : s;
}

// the map index of dim codes; each code is taken modulo 2^bits, so that
// the index stays inside the map whatever L holds (iq_codes_on_grid puts
// stray codes back in range before they are stored)
static int iq_pack_codes(const int8_t * L, int dim, int bits) {
    const unsigned mask = (1u << bits) - 1;
    unsigned u = 0;
    for (int i = 0; i < dim; i++) {
        u |= ((unsigned) (uint8_t) L[i] & mask) << bits*i;
    }
    return (int) u;
}

// the grid point whose levels best fit scale*level ~ xval under weight,
// among the neighbours of the off-grid code vector u; its codes go to L
static int iq_best_neighbour(const struct ggml_iq_search * s, int u, const float * xval, const float * weight,
                             float scale, int8_t * L) {
    const uint16_t * nb = s->neighbours + (-s->map[u] - 1);
    const int dim = s->dim;
    float best_d2 = FLT_MAX;
    int best = -1;
    for (int j = 1; j <= nb[0]; j++) {
        const int8_t * pg = s->points + dim*nb[j];
        float d2 = 0;
        for (int i = 0; i < dim; i++) {
            const float q = pg[i];
            const float diff = scale*q - xval[i];
            d2 += weight[i]*diff*diff;
        }
        if (d2 < best_d2) {
            best_d2 = d2;
            best    = nb[j];
        }
    }
    if (best < 0) {
        // every distance overflowed the float (weights near 1e15 square past
        // FLT_MAX) or is NaN: the same search in double, which holds them,
        // and the first neighbour where nothing compares (NaN input)
        double best_d2d = DBL_MAX;
        best = nb[1];
        for (int j = 1; j <= nb[0]; j++) {
            const int8_t * pg = s->points + dim*nb[j];
            double d2 = 0;
            for (int i = 0; i < dim; i++) {
                const double diff = (double) scale*pg[i] - (double) xval[i];
                d2 += (double) weight[i]*diff*diff;
            }
            if (d2 < best_d2d) {
                best_d2d = d2;
                best     = nb[j];
            }
        }
    }
    const int8_t * pg = s->points + dim*best;
    for (int i = 0; i < dim; i++) {
        L[i] = (int8_t) ((pg[i] - 1)/2);
    }
    return best;
}

// codes of the n magnitudes xval at inverse scale id, each group on the grid
// (is_on_grid[k]: it was there before the neighbour search, which measures
// at `scale`: upstream passes 1/id in the trials and the fitted scale after)
static void iq_codes_at(const struct ggml_iq_search * s, int n, int kmax, const float * xval, const float * waux,
                        float id, float scale, int8_t * L, bool * is_on_grid) {
    const int dim = s->dim;
    for (int k = 0; k < n/dim; k++) {
        for (int i = 0; i < dim; i++) {
            const int l = iq_round(0.5f*(id*xval[dim*k + i] - 1));
            L[dim*k + i] = (int8_t) iq_clamp(l, 0, kmax - 1);
        }
        const int u = iq_pack_codes(L + dim*k, dim, s->bits);
        is_on_grid[k] = s->map[u] >= 0;
        if (!is_on_grid[k]) {
            iq_best_neighbour(s, u, xval + dim*k, waux + dim*k, scale, L + dim*k);
        }
    }
}

// Puts every group of L on the grid: codes clamped to 0 .. kmax-1, a group
// off the grid moved to its best neighbour. After a normal fit every group
// is on the grid already and nothing changes; this catches the fits where no
// trial scale compared (NaN or infinite sums), which would leave the codes of
// the initial guess, out of range or off the grid.
static void iq_codes_on_grid(const struct ggml_iq_search * s, int n, int kmax, const float * xval, const float * waux,
                             float scale, int8_t * L) {
    const int dim = s->dim;
    for (int k = 0; k < n/dim; k++) {
        for (int i = 0; i < dim; i++) {
            L[dim*k + i] = (int8_t) iq_clamp(L[dim*k + i], 0, kmax - 1);
        }
        const int u = iq_pack_codes(L + dim*k, dim, s->bits);
        if (s->map[u] < 0) {
            iq_best_neighbour(s, u, xval + dim*k, waux + dim*k, scale, L + dim*k);
        }
    }
}

static void iq_sums(int n, const float * xval, const float * weight, const int8_t * L, float * sumqx, float * sumq2) {
    float sx = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        const float w = weight[i];
        const float q = 2*L[i] + 1;
        sx += w*xval[i]*q;
        s2 += w*q*q;
    }
    *sumqx = sx;
    *sumq2 = s2;
}

// how a type searches the scale of a sub-block
struct iq_fit {
    int   kmax;         // codes 0 .. kmax-1, levels 1, 3, .., 2*kmax-1
    int   n_steps;      // trial inverse scales (2*kmax - 1 + is*step)/ref, is in [-n_steps, n_steps]
    float step;
    bool  refit_always; // after the trials, requantize at the best scale whatever the trials found
    bool  refit_all;    // ... every group, not only those that were off the grid
    bool  start_off;    // the groups count as off the grid until a trial wins
};

// The scale of n magnitudes xval (weights weight, sqrt-weights waux) and
// their on-grid codes L: trials around `ref`, starting from `scale`.
static float iq_fit_subblock(const struct ggml_iq_search * s, const struct iq_fit * fit, int n, const float * xval,
                             const float * weight, const float * waux, float scale, float ref, int8_t * L) {
    int8_t Laux[32];
    bool is_on_grid[8], is_on_grid_aux[8];
    const int dim = s->dim, ngroups = n/dim;
    for (int k = 0; k < ngroups; k++) {
        is_on_grid[k] = !fit->start_off;
    }
    float best = 0;
    for (int is = -fit->n_steps; is <= fit->n_steps; is++) {
        const float id = (2*fit->kmax - 1 + is*fit->step)/ref;
        iq_codes_at(s, n, fit->kmax, xval, waux, id, 1/id, Laux, is_on_grid_aux);
        float sumqx, sumq2;
        iq_sums(n, xval, weight, Laux, &sumqx, &sumq2);
        if (sumq2 > 0 && sumqx*sumqx > best*sumq2) {
            scale = sumqx/sumq2;
            best  = scale*sumqx;
            memcpy(L, Laux, (size_t) n);
            memcpy(is_on_grid, is_on_grid_aux, sizeof(is_on_grid));
        }
    }
    int n_off = 0;
    for (int k = 0; k < ngroups; k++) {
        n_off += !is_on_grid[k];
    }
    if ((fit->refit_always || n_off > 0) && scale > 0) {
        const float id = 1/scale;
        for (int k = 0; k < ngroups; k++) {
            if (!fit->refit_all && is_on_grid[k]) {
                continue;
            }
            bool on;
            iq_codes_at(s, dim, fit->kmax, xval + dim*k, waux + dim*k, id, scale, Laux, &on);
            memcpy(L + dim*k, Laux, (size_t) dim);
        }
        float sumqx, sumq2;
        iq_sums(n, xval, weight, L, &sumqx, &sumq2);
        if (sumq2 > 0) {
            scale = sumqx/sumq2;
        }
    }
    iq_codes_on_grid(s, n, fit->kmax, xval, waux, scale, L);
    return scale;
}

// the grid index of the codes of group k of L (on the grid by construction)
static int iq_grid_index(const struct ggml_iq_search * s, const int8_t * L) {
    const int idx = s->map[iq_pack_codes(L, s->dim, s->bits)];
    GGML_ASSERT(idx >= 0 && "code vector off the grid");
    return idx;
}

// 4-bit sub-block scale l with scale ~ d*(2l + 1)
static int iq_scale4(float id, float scale) {
    return iq_clamp(iq_round(0.5f*(id*scale - 1)), 0, 15);
}

static float iq_sumx2(const float * x) {
    float sumx2 = 0;
    for (int i = 0; i < QK_K; i++) {
        sumx2 += x[i]*x[i];
    }
    return sumx2;
}

static float iq_max(int n, const float * v) {
    float max = v[0];
    for (int i = 1; i < n; i++) {
        max = max > v[i] ? max : v[i];
    }
    return max;
}

//
// IQ2_XXS: 32-value sub-blocks, 256-point grid, an imatrix is required
//

static void quantize_block_iq2_xxs(const struct ggml_iq_search * s, const float * x, const float * qw, block_iq2_xxs * y) {
    static const struct iq_fit fit = { .kmax = 3, .n_steps = 6, .step = 0.1f, .refit_always = true, .refit_all = true };
    float scales[QK_K/32], weight[32], waux[32], xval[32];
    int8_t L[32];
    uint8_t signs[4];
    uint32_t q2[2*(QK_K/32)] = { 0 };
    const float sigma2 = iq_sumx2(x)/QK_K;
    float max_scale = 0;
    y->d = GGML_FP32_TO_FP16(0.f);

    for (int ib = 0; ib < QK_K/32; ib++) {
        const float * xb = x + 32*ib;
        for (int i = 0; i < 32; i++) weight[i] = qw[32*ib + i] * sqrtf(sigma2 + xb[i]*xb[i]);
        for (int i = 0; i < 32; i++) waux[i] = sqrtf(weight[i]);
        for (int k = 0; k < 4; k++) {
            signs[k] = iq_signs8(xb + 8*k, weight + 8*k, xval + 8*k, true);
        }
        if (iq_max(32, xval) < IQ_GROUP_EPS) {
            scales[ib] = 0;
            continue;
        }
        float scale = ggml_quant_search_positive(32, fit.kmax + 1, xval, (uint8_t *) L, weight);
        const float eff_max = scale*fit.kmax;
        if (eff_max <= 0) {
            scales[ib] = 0;
            continue;
        }
        scale = iq_fit_subblock(s, &fit, 32, xval, weight, waux, scale, eff_max, L);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 4; k++) signs[k] = (uint8_t) (~signs[k] & 127);
        }
        for (int k = 0; k < 4; k++) {
            q2[2*ib + 0] |= (uint32_t) iq_grid_index(s, L + 8*k) << 8*k;
            q2[2*ib + 1] |= (uint32_t) signs[k] << 7*k;
        }
        scales[ib] = scale;
        max_scale  = max_scale > scale ? max_scale : scale;
    }
    if (!max_scale) {
        memset(y->qs, 0, sizeof(y->qs));
        return;
    }
    const float d = max_scale/31;
    y->d = GGML_FP32_TO_FP16(d);
    const float id = 1/d;
    for (int ib = 0; ib < QK_K/32; ib++) {
        q2[2*ib + 1] |= (uint32_t) iq_scale4(id, scales[ib]) << 28;
    }
    memcpy(y->qs, q2, sizeof(y->qs));
}

//
// IQ2_XS: 16-value sub-blocks, 512-point grid, an imatrix is required
//

static void quantize_block_iq2_xs(const struct ggml_iq_search * s, const float * x, const float * qw, block_iq2_xs * y) {
    static const struct iq_fit fit = { .kmax = 3, .n_steps = 9, .step = 0.1f };
    float scales[QK_K/16], weight[16], waux[16], xval[16];
    int8_t L[16];
    uint8_t signs[2];
    uint16_t q2[QK_K/8] = { 0 };
    const float sigma2 = iq_sumx2(x)/QK_K;
    float max_scale = 0;
    y->d = GGML_FP32_TO_FP16(0.f);
    memset(y->scales, 0, sizeof(y->scales));

    for (int ib = 0; ib < QK_K/16; ib++) {
        const float * xb = x + 16*ib;
        for (int i = 0; i < 16; i++) weight[i] = qw[16*ib + i] * sqrtf(sigma2 + xb[i]*xb[i]);
        for (int i = 0; i < 16; i++) waux[i] = sqrtf(weight[i]);
        for (int k = 0; k < 2; k++) {
            signs[k] = iq_signs8(xb + 8*k, weight + 8*k, xval + 8*k, true);
        }
        const float max = iq_max(16, xval);
        memset(L, 0, sizeof(L));
        if (max < IQ_GROUP_EPS) {
            scales[ib] = 0;
            continue;
        }
        float scale = iq_fit_subblock(s, &fit, 16, xval, weight, waux, max/(2*fit.kmax - 1), max, L);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 2; k++) signs[k] = (uint8_t) (~signs[k] & 127);
        }
        for (int k = 0; k < 2; k++) {
            q2[2*ib + k] = (uint16_t) (iq_grid_index(s, L + 8*k) | (signs[k] << 9));
        }
        scales[ib] = scale;
        max_scale  = max_scale > scale ? max_scale : scale;
    }
    if (!max_scale) {
        memset(y->qs, 0, sizeof(y->qs));
        return;
    }
    const float d = max_scale/31;
    y->d = GGML_FP32_TO_FP16(d);
    const float id = 1/d;
    for (int ib = 0; ib < QK_K/16; ib++) {
        y->scales[ib/2] |= (uint8_t) (iq_scale4(id, scales[ib]) << 4*(ib%2));
    }
    memcpy(y->qs, q2, sizeof(y->qs));
}

//
// IQ2_S: 16-value sub-blocks, 1024-point grid, all 8 signs stored
//

static void quantize_block_iq2_s(const struct ggml_iq_search * s, const float * x, const float * qw, block_iq2_s * y) {
    static const struct iq_fit fit = { .kmax = 3, .n_steps = 9, .step = 0.1f };
    float scales[QK_K/16], weight[16], waux[16], xval[16];
    int8_t L[16];
    uint8_t signs[2];
    const float sigma2 = 2*iq_sumx2(x)/QK_K;
    float max_scale = 0;
    memset(y, 0, sizeof(*y));

    for (int ib = 0; ib < QK_K/16; ib++) {
        const float * xb = x + 16*ib;
        if (qw) {
            for (int i = 0; i < 16; i++) weight[i] = qw[16*ib + i] * sqrtf(sigma2 + xb[i]*xb[i]);
        } else {
            for (int i = 0; i < 16; i++) weight[i] = 0.25f*sigma2 + xb[i]*xb[i];
        }
        for (int i = 0; i < 16; i++) waux[i] = sqrtf(weight[i]);
        for (int k = 0; k < 2; k++) {
            signs[k] = iq_signs8(xb + 8*k, weight + 8*k, xval + 8*k, false);
        }
        const float max = iq_max(16, xval);
        memset(L, 0, sizeof(L));
        if (max < IQ_GROUP_EPS_IQ2S) {
            scales[ib] = 0;
            continue;
        }
        float scale = iq_fit_subblock(s, &fit, 16, xval, weight, waux, max/(2*fit.kmax - 1), max, L);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 2; k++) signs[k] = (uint8_t) ~signs[k];
        }
        for (int k = 0; k < 2; k++) {
            const int idx = iq_grid_index(s, L + 8*k);
            const int i8  = 2*ib + k;
            y->qs[i8]          = (uint8_t) (idx & 255);
            y->qh[i8/4]       |= (uint8_t) ((idx >> 8) << 2*(i8%4));
            y->qs[QK_K/8 + i8] = signs[k];
        }
        scales[ib] = scale;
        max_scale  = max_scale > scale ? max_scale : scale;
    }
    if (!max_scale) {
        return;
    }
    const float d = max_scale/31;
    y->d = GGML_FP32_TO_FP16(d * 0.9875f);
    const float id = 1/d;
    for (int ib = 0; ib < QK_K/16; ib++) {
        y->scales[ib/2] |= (uint8_t) (iq_scale4(id, scales[ib]) << 4*(ib%2));
    }
}

//
// IQ3_XXS: 32-value sub-blocks, 256-point grid of 4 values, 7 sign bits per 8
//

static void quantize_block_iq3_xxs(const struct ggml_iq_search * s, const float * x, const float * qw, block_iq3_xxs * y) {
    static const struct iq_fit fit = { .kmax = 8, .n_steps = 15, .step = 0.2f };
    float scales[QK_K/32], weight[32], waux[32], xval[32];
    int8_t L[32];
    uint8_t signs[4];
    uint8_t  q3[QK_K/4];
    uint32_t scales_and_signs[QK_K/32] = { 0 };
    const float sigma2 = 2*iq_sumx2(x)/QK_K;
    float max_scale = 0;
    y->d = GGML_FP32_TO_FP16(0.f);
    memset(q3, 0, sizeof(q3));

    for (int ib = 0; ib < QK_K/32; ib++) {
        const float * xb = x + 32*ib;
        if (qw) {
            for (int i = 0; i < 32; i++) weight[i] = qw[32*ib + i] * sqrtf(sigma2 + xb[i]*xb[i]);
        } else {
            for (int i = 0; i < 32; i++) weight[i] = xb[i]*xb[i];
        }
        for (int i = 0; i < 32; i++) waux[i] = sqrtf(weight[i]);
        for (int k = 0; k < 4; k++) {
            signs[k] = iq_signs8(xb + 8*k, weight + 8*k, xval + 8*k, true);
        }
        const float max = iq_max(32, xval);
        memset(L, 0, sizeof(L));
        if (max < IQ_GROUP_EPS_IQ3XXS) {
            scales[ib] = 0;
            continue;
        }
        float scale = iq_fit_subblock(s, &fit, 32, xval, weight, waux, max/(2*fit.kmax - 1), max, L);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 4; k++) signs[k] = (uint8_t) (~signs[k] & 127);
        }
        for (int k = 0; k < 8; k++) {
            q3[8*ib + k] = (uint8_t) iq_grid_index(s, L + 4*k);
        }
        scales_and_signs[ib] = signs[0] | (signs[1] << 7) | (signs[2] << 14) | ((uint32_t) signs[3] << 21);
        scales[ib] = scale;
        max_scale  = max_scale > scale ? max_scale : scale;
    }
    if (!max_scale) {
        memset(y->qs, 0, sizeof(y->qs));
        return;
    }
    const float d = max_scale/31;
    y->d = GGML_FP32_TO_FP16(d * 1.0125f);
    const float id = 1/d;
    for (int ib = 0; ib < QK_K/32; ib++) {
        scales_and_signs[ib] |= (uint32_t) iq_scale4(id, scales[ib]) << 28;
    }
    memcpy(y->qs, q3, sizeof(q3));
    memcpy(y->qs + QK_K/4, scales_and_signs, sizeof(scales_and_signs));
}

//
// IQ3_S: 32-value sub-blocks, 512-point grid of 4 values, all signs stored
//

static void quantize_block_iq3_s(const struct ggml_iq_search * s, const float * x, const float * qw, block_iq3_s * y) {
    static const struct iq_fit fit = { .kmax = 8, .n_steps = 9, .step = 0.2f, .refit_all = true, .start_off = true };
    float scales[QK_K/32], weight[32], waux[32], xval[32];
    int8_t L[32];
    uint8_t signs[4];
    const float sigma2 = 2*iq_sumx2(x)/QK_K;
    float max_scale = 0;
    memset(y, 0, sizeof(*y));
    // upstream advances these only past sub-blocks it stores (see the file comment)
    uint8_t * qs = y->qs;
    uint8_t * sg = y->signs;

    for (int ib = 0; ib < QK_K/32; ib++) {
        const float * xb = x + 32*ib;
        if (qw) {
            for (int i = 0; i < 32; i++) weight[i] = qw[32*ib + i] * sqrtf(sigma2 + xb[i]*xb[i]);
        } else {
            for (int i = 0; i < 32; i++) weight[i] = xb[i]*xb[i];
        }
        for (int i = 0; i < 32; i++) waux[i] = sqrtf(weight[i]);
        for (int k = 0; k < 4; k++) {
            signs[k] = iq_signs8(xb + 8*k, weight + 8*k, xval + 8*k, false);
        }
        const float max = iq_max(32, xval);
        memset(L, 0, sizeof(L));
        if (!max) {
            scales[ib] = 0;
            continue;
        }
        float scale = iq_fit_subblock(s, &fit, 32, xval, weight, waux, max/(2*fit.kmax - 1), max, L);
        if (scale < 0) {
            scale = -scale;
            for (int k = 0; k < 4; k++) signs[k] = (uint8_t) ~signs[k];
        }
        for (int k = 0; k < 8; k++) {
            const int idx = iq_grid_index(s, L + 4*k);
            qs[k] = (uint8_t) (idx & 255);
            y->qh[(8*ib + k)/8] |= (uint8_t) ((idx >> 8) << ((8*ib + k)%8));
        }
        qs += 8;
        memcpy(sg, signs, 4);
        sg += 4;
        scales[ib] = scale;
        max_scale  = max_scale > scale ? max_scale : scale;
    }
    if (!max_scale) {
        return;
    }
    const float d = max_scale/31;
    y->d = GGML_FP32_TO_FP16(d * 1.033f);
    const float id = 1/d;
    for (int ib = 0; ib < QK_K/32; ib += 2) {
        y->scales[ib/2] = (uint8_t) (iq_scale4(id, scales[ib]) | (iq_scale4(id, scales[ib + 1]) << 4));
    }
}

//
// row drivers
//

typedef void (*iq_block_fn)(const struct ggml_iq_search * s, const float * x, const float * qw, void * y);

static size_t iq_quantize_rows(enum ggml_type type, iq_block_fn block, const float * src, void * dst,
                               int64_t nrows, int64_t n_per_row, const float * qw) {
    GGML_ASSERT(n_per_row % QK_K == 0);
    const struct ggml_iq_search * s = iq_search(type);
    const size_t bsize = ggml_type_size(type);
    char * out = (char *) dst;
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t b = 0; b < n_per_row/QK_K; b++) {
            block(s, src + r*n_per_row + b*QK_K, qw ? qw + b*QK_K : NULL, out);
            out += bsize;
        }
    }
    return (size_t) nrows * ggml_row_size(type, n_per_row);
}

size_t quantize_iq2_xxs(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_ASSERT(imatrix && "iq2_xxs needs an importance matrix");
    return iq_quantize_rows(GGML_TYPE_IQ2_XXS, (iq_block_fn) quantize_block_iq2_xxs, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_iq2_xs(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_ASSERT(imatrix && "iq2_xs needs an importance matrix");
    return iq_quantize_rows(GGML_TYPE_IQ2_XS, (iq_block_fn) quantize_block_iq2_xs, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_iq2_s(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return iq_quantize_rows(GGML_TYPE_IQ2_S, (iq_block_fn) quantize_block_iq2_s, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_iq3_xxs(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return iq_quantize_rows(GGML_TYPE_IQ3_XXS, (iq_block_fn) quantize_block_iq3_xxs, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_iq3_s(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return iq_quantize_rows(GGML_TYPE_IQ3_S, (iq_block_fn) quantize_block_iq3_s, src, dst, nrows, n_per_row, imatrix);
}

void quantize_row_iq2_s_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    quantize_iq2_s(x, y, 1, k, NULL);
}

void quantize_row_iq3_xxs_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    quantize_iq3_xxs(x, y, 1, k, NULL);
}

void quantize_row_iq3_s_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    quantize_iq3_s(x, y, 1, k, NULL);
}

//
// dequantization
//

static inline float iq_sign(uint8_t signs, int j) {
    return signs & (1u << j) ? -1.f : 1.f;
}

void dequantize_row_iq2_xxs(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_iq2_xxs * x = vx;
    const uint64_t * grid = ggml_iq_grids()->iq2xxs;
    for (int64_t i = 0; i < k/QK_K; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ib++) {
            uint32_t aux[2];
            memcpy(aux, x[i].qs + 4*ib, sizeof(aux));
            const float db = d * (0.5f + (aux[1] >> 28)) * 0.25f;
            for (int l = 0; l < 4; l++) {
                const uint8_t * g = (const uint8_t *) (grid + ((aux[0] >> 8*l) & 255));
                const uint8_t signs = ggml_iq_signs7(aux[1] >> 7*l);
                for (int j = 0; j < 8; j++) {
                    y[j] = db * g[j] * iq_sign(signs, j);
                }
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_xs(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_iq2_xs * x = vx;
    const uint64_t * grid = ggml_iq_grids()->iq2xs;
    for (int64_t i = 0; i < k/QK_K; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ib++) {
            for (int l = 0; l < 4; l++) {
                const float db = d * (0.5f + ((x[i].scales[ib] >> 4*(l/2)) & 15)) * 0.25f;
                const uint16_t q = x[i].qs[4*ib + l];
                const uint8_t * g = (const uint8_t *) (grid + (q & 511));
                const uint8_t signs = ggml_iq_signs7(q >> 9);
                for (int j = 0; j < 8; j++) {
                    y[j] = db * g[j] * iq_sign(signs, j);
                }
                y += 8;
            }
        }
    }
}

void dequantize_row_iq2_s(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_iq2_s * x = vx;
    const uint64_t * grid = ggml_iq_grids()->iq2s;
    for (int64_t i = 0; i < k/QK_K; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        const uint8_t * signs = x[i].qs + QK_K/8;
        for (int ib = 0; ib < QK_K/32; ib++) {
            for (int l = 0; l < 4; l++) {
                const float dl = d * (0.5f + ((x[i].scales[ib] >> 4*(l/2)) & 15)) * 0.25f;
                const int idx = x[i].qs[4*ib + l] | (((x[i].qh[ib] >> 2*l) & 3) << 8);
                const uint8_t * g = (const uint8_t *) (grid + idx);
                for (int j = 0; j < 8; j++) {
                    y[j] = dl * g[j] * iq_sign(signs[4*ib + l], j);
                }
                y += 8;
            }
        }
    }
}

void dequantize_row_iq3_xxs(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_iq3_xxs * x = vx;
    const uint32_t * grid = ggml_iq_grids()->iq3xxs;
    for (int64_t i = 0; i < k/QK_K; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        const uint8_t * qs = x[i].qs;
        for (int ib = 0; ib < QK_K/32; ib++) {
            uint32_t aux;
            memcpy(&aux, x[i].qs + QK_K/4 + 4*ib, sizeof(aux));
            const float db = d * (0.5f + (aux >> 28)) * 0.5f;
            for (int l = 0; l < 4; l++) {
                const uint8_t signs = ggml_iq_signs7(aux >> 7*l);
                const uint8_t * g1 = (const uint8_t *) (grid + qs[8*ib + 2*l + 0]);
                const uint8_t * g2 = (const uint8_t *) (grid + qs[8*ib + 2*l + 1]);
                for (int j = 0; j < 4; j++) {
                    y[j + 0] = db * g1[j] * iq_sign(signs, j + 0);
                    y[j + 4] = db * g2[j] * iq_sign(signs, j + 4);
                }
                y += 8;
            }
        }
    }
}

void dequantize_row_iq3_s(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    const block_iq3_s * x = vx;
    const uint32_t * grid = ggml_iq_grids()->iq3s;
    for (int64_t i = 0; i < k/QK_K; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int ib = 0; ib < QK_K/32; ib++) {
            const float db = d * (1 + 2*((x[i].scales[ib/2] >> 4*(ib%2)) & 15));
            const uint8_t * qs = x[i].qs + 8*ib;
            const uint8_t qh = x[i].qh[ib];
            for (int l = 0; l < 4; l++) {
                const uint8_t signs = x[i].signs[4*ib + l];
                const uint8_t * g1 = (const uint8_t *) (grid + (qs[2*l + 0] | (((qh >> (2*l + 0)) & 1) << 8)));
                const uint8_t * g2 = (const uint8_t *) (grid + (qs[2*l + 1] | (((qh >> (2*l + 1)) & 1) << 8)));
                for (int j = 0; j < 4; j++) {
                    y[j + 0] = db * g1[j] * iq_sign(signs, j + 0);
                    y[j + 4] = db * g2[j] * iq_sign(signs, j + 4);
                }
                y += 8;
            }
        }
    }
}
