// ggml-quants-iq4.c: the 4-bit table formats IQ4_NL, IQ4_XS and MXFP4.
//
// A code is an index into a table of 16 values (ggml-common.h): non-linear
// int8 levels for the IQ4 types, doubled E2M1 values for MXFP4. IQ4_NL has
// one fp16 scale per 32 values, IQ4_XS a 6-bit scale per 32 values under one
// fp16 factor per 256, MXFP4 a power-of-two scale per 32.
//
// As for the K-quants, the searches are upstream's (same candidates, same
// float expressions in the same order), so that the bytes are upstream's.

#include "ggml-quants.h"

#define IQ4_GROUP_EPS 1e-15f

static inline int iq4_round(float v) {
    const float t = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &t, sizeof(bits));
    return (bits & 0x007fffff) - 0x00400000;
}

// the index of the table value nearest to x (the lower one on ties),
// for an increasing table of n values
static int nearest_level(int n, const int8_t * val, float x) {
    if (x <= (float) val[0]) {
        return 0;
    }
    if (x >= (float) val[n - 1]) {
        return n - 1;
    }
    int lo = 0, hi = n - 1;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (x < (float) val[mid]) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return x - (float) val[hi - 1] < (float) val[hi] - x ? hi - 1 : hi;
}

// One super-block of sb values in sub-blocks of 32 (sb = 32: IQ4_NL, 256:
// IQ4_XS). For each sub-block the scale is fitted (weighted least squares on
// the codes) from the absmax scale and, with ntry > 0, 2*ntry+1 more around
// it. IQ4_XS then quantizes the sub-block scales to 6 bits and recomputes
// the codes. L carries the codes between calls: upstream leaves the codes
// of an all-zero IQ4_NL block (ntry <= 0) as they were, so do we.
static void iq4_superblock(int sb, const float * x, ggml_half * dh, uint8_t * q4, uint16_t * scales_h,
                           uint8_t * scales_l, float * scales, uint8_t * L, const float * qw, int ntry) {
    const int8_t * values = ggml_kvalues_iq4nl();
    float w[32];
    float sigma2 = 0.0f;
    for (int j = 0; j < sb; j++) {
        sigma2 += x[j]*x[j];
    }
    sigma2 *= 2.0f/(float) sb;

    memset(q4, 0, (size_t) sb/2);
    *dh = GGML_FP32_TO_FP16(0.0f);

    float max_scale = 0.0f, amax_scale = 0.0f;
    for (int ib = 0; ib < sb/32; ib++) {
        const float * xb = x + 32*ib;
        uint8_t * Lb = L + 32*ib;
        for (int j = 0; j < 32; j++) {
            w[j] = qw ? qw[32*ib + j] * sqrtf(sigma2 + xb[j]*xb[j]) : xb[j]*xb[j];
        }
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < 32; j++) {
            if (fabsf(xb[j]) > amax) {
                amax = fabsf(xb[j]);
                max  = xb[j];
            }
        }
        if (amax < IQ4_GROUP_EPS) {
            scales[ib] = 0.0f;
            continue;
        }
        float d  = ntry > 0 ? -max/(float) values[0] : max/(float) values[0];
        float id = 1.0f/d;
        float sumqx = 0.0f, sumq2 = 0.0f;
        for (int j = 0; j < 32; j++) {
            const int l = nearest_level(16, values, id*xb[j]);
            Lb[j] = (uint8_t) l;
            const float q = (float) values[l];
            sumqx += w[j]*q*xb[j];
            sumq2 += w[j]*q*q;
        }
        d = sumq2 > 0.0f ? sumqx/sumq2 : 0.0f;
        float best = d*sumqx;
        for (int itry = -ntry; itry <= ntry; itry++) {
            id = (float)(itry + values[0])/max;
            sumqx = 0.0f;
            sumq2 = 0.0f;
            for (int j = 0; j < 32; j++) {
                const float q = (float) values[nearest_level(16, values, id*xb[j])];
                sumqx += w[j]*q*xb[j];
                sumq2 += w[j]*q*q;
            }
            if (sumq2 > 0.0f && sumqx*sumqx > best*sumq2) {
                d    = sumqx/sumq2;
                best = d * sumqx;
            }
        }
        scales[ib] = d;
        if (fabsf(d) > amax_scale) {
            amax_scale = fabsf(d);
            max_scale  = d;
        }
    }

    if (sb > 32) {
        *scales_h = 0;
        const float d  = -max_scale/32.0f;
        *dh = GGML_FP32_TO_FP16(d);
        const float id = d != 0.0f ? 1.0f/d : 0.0f;
        for (int ib = 0; ib < sb/32; ib++) {
            int l = iq4_round(id*scales[ib]);
            l = l < -32 ? -32 : (l > 31 ? 31 : l);
            const float dl  = d * (float) l;
            const float idl = dl != 0.0f ? 1.0f/dl : 0.0f;
            for (int j = 0; j < 32; j++) {
                L[32*ib + j] = (uint8_t) nearest_level(16, values, idl*x[32*ib + j]);
            }
            l += 32;
            if (ib % 2 == 0) {
                scales_l[ib/2] = (uint8_t)(l & 0x0F);
            } else {
                scales_l[ib/2] |= (uint8_t)((l & 0x0F) << 4);
            }
            *scales_h |= (uint16_t)((l >> 4) << (2*ib));
        }
    } else {
        *dh = GGML_FP32_TO_FP16(scales[0]);
        if (ntry > 0) {
            const float id = scales[0] != 0.0f ? 1.0f/scales[0] : 0.0f;
            for (int j = 0; j < 32; j++) {
                L[j] = (uint8_t) nearest_level(16, values, id*x[j]);
            }
        }
    }

    for (int i = 0; i < sb/32; i++) {
        for (int j = 0; j < 16; j++) {
            q4[16*i + j] = (uint8_t)(L[32*i + j] | (L[32*i + 16 + j] << 4));
        }
    }
}

//
// IQ4_NL
//

// the reference: the absmax scale refitted once (upstream's ntry = -1)
void quantize_row_iq4_nl_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK4_NL == 0);
    block_iq4_nl * y = (block_iq4_nl *) vy;
    uint8_t  L[32] = { 0 };
    uint16_t unused_h;
    float    scale;
    for (int64_t b = 0; b < k / QK4_NL; b++) {
        iq4_superblock(QK4_NL, x + b*QK4_NL, &y[b].d, y[b].qs, &unused_h, NULL, &scale, L, NULL, -1);
    }
}

// quantize_iq4_nl searches 15 scales with or without an importance matrix
size_t quantize_iq4_nl(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_ASSERT(n_per_row % QK4_NL == 0);
    const int64_t nb = n_per_row / QK4_NL;
    block_iq4_nl * y = (block_iq4_nl *) dst;
    uint8_t  L[32] = { 0 };
    uint16_t unused_h;
    float    scale;
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t b = 0; b < nb; b++) {
            iq4_superblock(QK4_NL, src + r*n_per_row + b*QK4_NL, &y[r*nb + b].d, y[r*nb + b].qs, &unused_h, NULL,
                           &scale, L, imatrix ? imatrix + b*QK4_NL : NULL, 7);
        }
    }
    return (size_t)(nrows * nb) * sizeof(block_iq4_nl);
}

void dequantize_row_iq4_nl(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK4_NL == 0);
    const block_iq4_nl * x = (const block_iq4_nl *) vx;
    const int8_t * values = ggml_kvalues_iq4nl();
    for (int64_t b = 0; b < k / QK4_NL; b++) {
        const float d = GGML_FP16_TO_FP32(x[b].d);
        for (int j = 0; j < 16; j++) {
            y[b*QK4_NL + j]      = d * (float) values[x[b].qs[j] & 0x0F];
            y[b*QK4_NL + j + 16] = d * (float) values[x[b].qs[j] >> 4];
        }
    }
}

//
// IQ4_XS
//

size_t quantize_iq4_xs(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_ASSERT(n_per_row % QK_K == 0);
    const int64_t nb = n_per_row / QK_K;
    block_iq4_xs * y = (block_iq4_xs *) dst;
    uint8_t L[QK_K];
    float   scales[QK_K/32];
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t b = 0; b < nb; b++) {
            block_iq4_xs * yb = &y[r*nb + b];
            iq4_superblock(QK_K, src + r*n_per_row + b*QK_K, &yb->d, yb->qs, &yb->scales_h, yb->scales_l,
                           scales, L, imatrix ? imatrix + b*QK_K : NULL, 7);
        }
    }
    return (size_t)(nrows * nb) * sizeof(block_iq4_xs);
}

void quantize_row_iq4_xs_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    quantize_iq4_xs(x, y, 1, k, NULL);
}

void dequantize_row_iq4_xs(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    const block_iq4_xs * x = (const block_iq4_xs *) vx;
    const int8_t * values = ggml_kvalues_iq4nl();
    for (int64_t b = 0; b < k / QK_K; b++) {
        const float d = GGML_FP16_TO_FP32(x[b].d);
        for (int ib = 0; ib < QK_K/32; ib++) {
            const int ls = ggml_iq4_xs_scale(&x[b], ib);
            const float dl = d * (float)(ls - 32);
            const uint8_t * qs = x[b].qs + 16*ib;
            for (int j = 0; j < 16; j++) {
                y[b*QK_K + 32*ib + j]      = dl * (float) values[qs[j] & 0x0F];
                y[b*QK_K + 32*ib + j + 16] = dl * (float) values[qs[j] >> 4];
            }
        }
    }
}

//
// MXFP4
//

static int nearest_fp4(float x, float d) {
    const int8_t * values = ggml_kvalues_mxfp4();
    int   best = 0;
    float best_err = fabsf((float) values[0]*d - x);
    for (int i = 1; i < 16; i++) {
        const float err = fabsf((float) values[i]*d - x);
        if (err < best_err) {
            best     = i;
            best_err = err;
        }
    }
    return best;
}

void quantize_row_mxfp4_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_MXFP4 == 0);
    block_mxfp4 * y = (block_mxfp4 *) vy;
    for (int64_t b = 0; b < k / QK_MXFP4; b++) {
        const float * xb = x + b*QK_MXFP4;
        float amax = 0.0f;
        for (int j = 0; j < QK_MXFP4; j++) {
            if (amax < fabsf(xb[j])) {
                amax = fabsf(xb[j]);
            }
        }
        // the exponent that puts amax in [4, 8) (the top of the table is 6);
        // below 2^-125 the value leaves the byte, and like upstream on the
        // machines it runs on, the byte is the low byte of the integer
        uint8_t e = 0;
        if (amax > 0.0f) {
            const int ie = (int)(floorf(log2f(amax)) - 2.0f + 127.0f);
            e = (uint8_t)((unsigned) ie & 0xffu);
        }
        const float d = ggml_e8m0_to_fp32_half(e);
        y[b].e = e;
        for (int j = 0; j < QK_MXFP4/2; j++) {
            const int c0 = nearest_fp4(xb[j], d);
            const int c1 = nearest_fp4(xb[j + QK_MXFP4/2], d);
            y[b].qs[j] = (uint8_t)(c0 | (c1 << 4));
        }
    }
}

size_t quantize_mxfp4(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_UNUSED(imatrix);
    quantize_row_mxfp4_ref(src, dst, nrows*n_per_row);
    return (size_t) nrows * ggml_row_size(GGML_TYPE_MXFP4, n_per_row);
}

void dequantize_row_mxfp4(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_MXFP4 == 0);
    const block_mxfp4 * x = (const block_mxfp4 *) vx;
    const int8_t * values = ggml_kvalues_mxfp4();
    for (int64_t b = 0; b < k / QK_MXFP4; b++) {
        const float d = ggml_e8m0_to_fp32_half(x[b].e);
        for (int j = 0; j < 16; j++) {
            y[b*QK_MXFP4 + j]      = (float) values[x[b].qs[j] & 0x0F] * d;
            y[b*QK_MXFP4 + j + 16] = (float) values[x[b].qs[j] >> 4] * d;
        }
    }
}
