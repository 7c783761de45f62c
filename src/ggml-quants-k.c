// ggml-quants-k.c: quantization of the K-quant formats (Q2_K .. Q6_K, Q8_K).
//
// A K-quant super-block of 256 values is cut into sub-blocks of 16 or 32;
// each sub-block gets a scale (and a minimum) found by a small search, and
// those are themselves quantized to 4, 6 or 8 bits against one or two fp16
// factors per super-block. Finally every value is quantized again against
// the scale it will be decoded with.
//
// Files must be interchangeable with upstream's, so the searches here are
// upstream's searches: the same candidates in the same order, the same float
// expressions evaluated in the same order, the same rounding (round half to
// even through the 1.5*2^23 trick) and the same integer narrowing. The build
// compiles without floating-point contraction (ISO C mode), as upstream's
// base library does, so that no fused multiply-add changes a sum.

#include "ggml-quants.h"

// below this magnitude a group counts as all zero
#define K_GROUP_EPS 1e-15f

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5*2^23 puts the
// integer in the low mantissa bits. Outside that range the result is what the
// same bit manipulation gives, which is what upstream's files hold there too.
static inline int k_round(float v) {
    const float t = v + 12582912.0f;
    int32_t bits;
    memcpy(&bits, &t, sizeof(bits));
    return (bits & 0x007fffff) - 0x00400000;
}

// the low byte of v as a signed byte (a cast to int8_t on the machines ggml runs on)
static inline int k_low_byte_s8(int v) {
    const int b = (int)((unsigned) v & 0xffu);
    return b >= 128 ? b - 256 : b;
}

static inline int k_clamp(int v, int lo, int hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

//
// scale searches
//

// Symmetric codes in [-nmax, nmax) (stored + nmax) for n values; weights w,
// or x^2 without them. Starts from the scale that maps the signed absmax to
// -nmax, then tries 18 nearby ones and keeps the best weighted fit; returns
// the least-squares scale of the codes kept.
float ggml_quant_search_symmetric(int n, int nmax, const float * x, int8_t * L, const float * w) {
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; i++) {
        const float ax = fabsf(x[i]);
        if (ax > amax) {
            amax = ax;
            max  = x[i];
        }
    }
    if (amax < K_GROUP_EPS) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    float iscale = (float)(-nmax) / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        const int l = k_clamp(k_round(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t)(l + nmax);
        const float wi = w ? w[i] : x[i]*x[i];
        sumlx += wi*x[i]*(float) l;
        suml2 += wi*(float) l*(float) l;
    }
    float scale = suml2 != 0.0f ? sumlx/suml2 : 0.0f;
    float best  = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) {
            continue;
        }
        iscale = -((float) nmax + 0.1f*(float) is) / max;
        sumlx = 0.0f;
        suml2 = 0.0f;
        for (int i = 0; i < n; i++) {
            const int l = k_clamp(k_round(iscale * x[i]), -nmax, nmax - 1);
            const float wi = w ? w[i] : x[i]*x[i];
            sumlx += wi*x[i]*(float) l;
            suml2 += wi*(float) l*(float) l;
        }
        if (suml2 > 0.0f && sumlx*sumlx > best*suml2) {
            for (int i = 0; i < n; i++) {
                L[i] = (int8_t)(nmax + k_clamp(k_round(iscale * x[i]), -nmax, nmax - 1));
            }
            scale = sumlx/suml2;
            best  = scale*sumlx;
        }
    }
    return scale;
}

// Q3_K's symmetric codes (nmax = 4): the absmax scale, then up to five
// passes that move single codes while the x^2-weighted fit improves.
static float k_search_q3(int n, int nmax, const float * x, int8_t * L) {
    float max = 0.0f, amax = 0.0f;
    for (int i = 0; i < n; i++) {
        const float ax = fabsf(x[i]);
        if (ax > amax) {
            amax = ax;
            max  = x[i];
        }
    }
    if (amax < K_GROUP_EPS) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    const float iscale = (float)(-nmax) / max;
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        const int l = k_clamp(k_round(iscale * x[i]), -nmax, nmax - 1);
        L[i] = (int8_t) l;
        const float w = x[i]*x[i];
        sumlx += w*x[i]*(float) l;
        suml2 += w*(float) l*(float) l;
    }
    for (int pass = 0; pass < 5; pass++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            const float w = x[i]*x[i];
            float slx = sumlx - w*x[i]*(float) L[i];
            if (slx > 0.0f) {
                float sl2 = suml2 - w*(float) L[i]*(float) L[i];
                const int nl = k_clamp(k_round(x[i] * sl2 / slx), -nmax, nmax - 1);
                if (nl != L[i]) {
                    slx += w*x[i]*(float) nl;
                    sl2 += w*(float) nl*(float) nl;
                    if (sl2 > 0.0f && slx*slx*suml2 > sumlx*sumlx*sl2) {
                        L[i]  = (int8_t) nl;
                        sumlx = slx;
                        suml2 = sl2;
                        changed++;
                    }
                }
            }
        }
        if (!changed) {
            break;
        }
    }
    for (int i = 0; i < n; i++) {
        L[i] = (int8_t)(L[i] + nmax);
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

// Affine codes in [0, nmax] with x ~ scale*L - the_min (the_min >= 0): the
// min/max fit, then nstep+1 scales (rmin + rdelta*is + nmax)/(max - min),
// each refitted by weighted least squares for scale and minimum; the one of
// least weighted error (absolute with use_mad, squared otherwise) is kept.
float ggml_quant_search_affine(int n, int nmax, const float * x, const float * w, uint8_t * L, float * the_min,
                               uint8_t * Laux, float rmin, float rdelta, int nstep, bool use_mad) {
    float min = x[0], max = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < min) {
            min = x[i];
        }
        if (x[i] > max) {
            max = x[i];
        }
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0.0f) {
        min = 0.0f;
    }
    if (max == min) {
        memset(L, 0, (size_t) n);
        *the_min = -min;
        return 0.0f;
    }
    float iscale = (float) nmax/(max - min);
    float scale  = 1.0f/iscale;
    float best_err = 0.0f;
    for (int i = 0; i < n; i++) {
        L[i] = (uint8_t) k_clamp(k_round(iscale*(x[i] - min)), 0, nmax);
        float diff = scale * (float) L[i] + min - x[i];
        diff = use_mad ? fabsf(diff) : diff * diff;
        best_err += w[i] * diff;
    }
    if (nstep < 1) {
        *the_min = -min;
        return scale;
    }
    for (int is = 0; is <= nstep; is++) {
        iscale = (rmin + rdelta*(float) is + (float) nmax)/(max - min);
        float sum_l = 0.0f, sum_l2 = 0.0f, sum_xl = 0.0f;
        for (int i = 0; i < n; i++) {
            const int l = k_clamp(k_round(iscale*(x[i] - min)), 0, nmax);
            Laux[i] = (uint8_t) l;
            sum_l  += w[i]*(float) l;
            sum_l2 += w[i]*(float) l*(float) l;
            sum_xl += w[i]*(float) l*x[i];
        }
        const float D = sum_w * sum_l2 - sum_l * sum_l;
        if (D > 0.0f) {
            float this_scale = (sum_w * sum_xl - sum_x * sum_l)/D;
            float this_min   = (sum_l2 * sum_x - sum_l * sum_xl)/D;
            if (this_min > 0.0f) {
                this_min   = 0.0f;
                this_scale = sum_xl / sum_l2;
            }
            float err = 0.0f;
            for (int i = 0; i < n; i++) {
                float diff = this_scale * (float) Laux[i] + this_min - x[i];
                diff = use_mad ? fabsf(diff) : diff * diff;
                err += w[i] * diff;
            }
            if (err < best_err) {
                memcpy(L, Laux, (size_t) n);
                best_err = err;
                scale    = this_scale;
                min      = this_min;
            }
        }
    }
    *the_min = -min;
    return scale;
}

// Non-negative codes in [0, nmax] for the (non-negative) sub-block scales or
// minimums x, weighted by w: the best of nine scales around nmax/max, then up
// to five passes of single-code moves. L is a byte: a code is stored modulo
// 256, as upstream stores it.
float ggml_quant_search_positive(int n, int nmax, const float * x, uint8_t * L, const float * w) {
    float max = 0.0f;
    for (int i = 0; i < n; i++) {
        max = max > x[i] ? max : x[i];
    }
    if (max < K_GROUP_EPS) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    float iscale = (float) nmax / max;
    for (int i = 0; i < n; i++) {
        L[i] = (uint8_t) k_round(iscale * x[i]);
    }
    const float scale = 1.0f/iscale;
    float best_mse = 0.0f;
    for (int i = 0; i < n; i++) {
        const float diff = x[i] - scale*(float) L[i];
        best_mse += w[i]*diff*diff;
    }
    for (int is = -4; is <= 4; is++) {
        if (is == 0) {
            continue;
        }
        const float iscale_is = (0.1f*(float) is + (float) nmax)/max;
        const float scale_is  = 1.0f/iscale_is;
        float mse = 0.0f;
        for (int i = 0; i < n; i++) {
            int l = k_round(iscale_is*x[i]);
            l = l < nmax ? l : nmax;
            const float diff = x[i] - scale_is*(float) l;
            mse += w[i]*diff*diff;
        }
        if (mse < best_mse) {
            best_mse = mse;
            iscale   = iscale_is;
        }
    }
    float sumlx = 0.0f, suml2 = 0.0f;
    for (int i = 0; i < n; i++) {
        int l = k_round(iscale * x[i]);
        l = l < nmax ? l : nmax;
        L[i] = (uint8_t) l;
        sumlx += w[i]*x[i]*(float) l;
        suml2 += w[i]*(float) l*(float) l;
    }
    for (int pass = 0; pass < 5; pass++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            float slx = sumlx - w[i]*x[i]*(float) L[i];
            float sl2 = suml2 - w[i]*(float) L[i]*(float) L[i];
            if (slx > 0.0f && sl2 > 0.0f) {
                int nl = k_round(x[i] * sl2 / slx);
                nl = nl < nmax ? nl : nmax;
                if (nl != L[i]) {
                    slx += w[i]*x[i]*(float) nl;
                    sl2 += w[i]*(float) nl*(float) nl;
                    if (slx*slx*suml2 > sumlx*sumlx*sl2) {
                        L[i]  = (uint8_t) nl;
                        sumlx = slx;
                        suml2 = sl2;
                        changed++;
                    }
                }
            }
        }
        if (!changed) {
            break;
        }
    }
    return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
}

//
// packing
//

// four 2-bit codes per byte: code 128h + 32s + l at bits 2s of qs[32h + l]
static void k_pack_2bit(uint8_t * qs, const uint8_t * L) {
    for (int h = 0; h < QK_K/128; h++) {
        for (int l = 0; l < 32; l++) {
            const uint8_t * c = L + 128*h + l;
            qs[32*h + l] = (uint8_t)(c[0] | (c[32] << 2) | (c[64] << 4) | (c[96] << 6));
        }
    }
}

// the 6-bit scales ls[8] and minimums lm[8] of q4_K / q5_K (bytes as given:
// upstream does not mask codes over 63 here, so neither do we)
static void k_pack_scales_mins(uint8_t * scales, const uint8_t * ls, const uint8_t * lm) {
    for (int j = 0; j < QK_K/32; j++) {
        if (j < 4) {
            scales[j]     = ls[j];
            scales[j + 4] = lm[j];
        } else {
            scales[j + 4]  = (uint8_t)((ls[j] & 0x0F) | ((lm[j] & 0x0F) << 4));
            scales[j - 4] |= (uint8_t)((ls[j] >> 4) << 6);
            scales[j]     |= (uint8_t)((lm[j] >> 4) << 6);
        }
    }
}

// the 16 6-bit codes l[j] (0..63) of q3_K's scales
static void k_pack_q3_scales(uint8_t * scales, const int * l) {
    memset(scales, 0, 12);
    for (int j = 0; j < QK_K/16; j++) {
        if (j < 8) {
            scales[j] = (uint8_t)(l[j] & 0x0F);
        } else {
            scales[j - 8] |= (uint8_t)((l[j] & 0x0F) << 4);
        }
        scales[8 + j%4] |= (uint8_t)((l[j] >> 4) << (2*(j/4)));
    }
}

//
// Q2_K
//

// the codes of every sub-block against the scales and minimums as decoded
static void q2_K_requantize(const float * x, block_q2_K * y, uint8_t * L) {
    const float d    = GGML_FP16_TO_FP32(y->d);
    const float dmin = GGML_FP16_TO_FP32(y->dmin);
    for (int j = 0; j < QK_K/16; j++) {
        const float dl = d * (float)(y->scales[j] & 0x0F);
        if (dl == 0.0f) {
            continue;
        }
        const float ml = dmin * (float)(y->scales[j] >> 4);
        for (int i = 0; i < 16; i++) {
            L[16*j + i] = (uint8_t) k_clamp(k_round((x[16*j + i] + ml)/dl), 0, 3);
        }
    }
    k_pack_2bit(y->qs, L);
}

void quantize_row_q2_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    block_q2_K * y = (block_q2_K *) vy;
    uint8_t L[QK_K], Laux[16];
    float   w[16], mins[QK_K/16], scales[QK_K/16];

    for (int64_t b = 0; b < k / QK_K; b++, x += QK_K) {
        float max_scale = 0.0f, max_min = 0.0f;
        for (int j = 0; j < QK_K/16; j++) {
            for (int i = 0; i < 16; i++) {
                w[i] = fabsf(x[16*j + i]);
            }
            scales[j] = ggml_quant_search_affine(16, 3, x + 16*j, w, L + 16*j, &mins[j], Laux, -0.5f, 0.1f, 15, true);
            max_scale = scales[j] > max_scale ? scales[j] : max_scale;
            max_min   = mins[j]   > max_min   ? mins[j]   : max_min;
        }
        if (max_scale > 0.0f) {
            const float iscale = 15.0f/max_scale;
            for (int j = 0; j < QK_K/16; j++) {
                y[b].scales[j] = (uint8_t) k_round(iscale*scales[j]);
            }
            y[b].d = GGML_FP32_TO_FP16(max_scale/15.0f);
        } else {
            memset(y[b].scales, 0, sizeof(y[b].scales));
            y[b].d = GGML_FP32_TO_FP16(0.0f);
        }
        if (max_min > 0.0f) {
            const float iscale = 15.0f/max_min;
            for (int j = 0; j < QK_K/16; j++) {
                y[b].scales[j] |= (uint8_t)(k_round(iscale*mins[j]) << 4);
            }
            y[b].dmin = GGML_FP32_TO_FP16(max_min/15.0f);
        } else {
            y[b].dmin = GGML_FP32_TO_FP16(0.0f);
        }
        q2_K_requantize(x, &y[b], L);
    }
}

static void quantize_row_q2_K_weighted(const float * x, void * vy, int64_t n, const float * qw) {
    block_q2_K * y = (block_q2_K *) vy;
    uint8_t L[QK_K], Laux[16], Ls[QK_K/16], Lm[QK_K/16];
    float   w[16], sw[QK_K/16], mins[QK_K/16], scales[QK_K/16];

    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float sumx2 = 0.0f;
        for (int j = 0; j < QK_K; j++) {
            sumx2 += x[j]*x[j];
        }
        const float sigma2 = sumx2/(float) QK_K;
        for (int j = 0; j < QK_K/16; j++) {
            const float * q = qw + QK_K*b + 16*j;
            sw[j] = 0.0f;
            for (int i = 0; i < 16; i++) {
                w[i] = q[i] * sqrtf(sigma2 + x[16*j + i]*x[16*j + i]);
            }
            for (int i = 0; i < 16; i++) {
                sw[j] += w[i];
            }
            scales[j] = ggml_quant_search_affine(16, 3, x + 16*j, w, L + 16*j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
        }
        const float dm = ggml_quant_search_positive(QK_K/16, 15, scales, Ls, sw);
        const float mm = ggml_quant_search_positive(QK_K/16, 15, mins,   Lm, sw);
        y[b].d    = GGML_FP32_TO_FP16(dm);
        y[b].dmin = GGML_FP32_TO_FP16(mm);
        for (int j = 0; j < QK_K/16; j++) {
            y[b].scales[j] = (uint8_t)(Ls[j] | (Lm[j] << 4));
        }
        q2_K_requantize(x, &y[b], L);
    }
}

void dequantize_row_q2_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    const block_q2_K * x = (const block_q2_K *) vx;
    for (int64_t b = 0; b < k / QK_K; b++) {
        const float d    = GGML_FP16_TO_FP32(x[b].d);
        const float dmin = GGML_FP16_TO_FP32(x[b].dmin);
        for (int p = 0; p < QK_K; p++) {
            const int q  = (x[b].qs[32*(p/128) + p%32] >> (2*((p/32)%4))) & 3;
            const int sc = x[b].scales[p/16];
            y[b*QK_K + p] = d * (float)(sc & 0x0F) * (float) q - dmin * (float)(sc >> 4);
        }
    }
}

//
// Q3_K
//

static void q3_K_requantize(const float * x, block_q3_K * y, int8_t * L) {
    int sc[QK_K/16];
    ggml_q3_K_scales(y->scales, sc);
    const float d_all = GGML_FP16_TO_FP32(y->d);
    for (int j = 0; j < QK_K/16; j++) {
        const float d = d_all * (float) sc[j];
        if (d == 0.0f) {
            continue;
        }
        for (int i = 0; i < 16; i++) {
            L[16*j + i] = (int8_t)(k_clamp(k_round(x[16*j + i]/d), -4, 3) + 4);
        }
    }
    // bit 2 of code p goes to bit p/32 of hmask[p % 32]
    memset(y->hmask, 0, sizeof(y->hmask));
    uint8_t low[QK_K];
    for (int p = 0; p < QK_K; p++) {
        int l = L[p];
        if (l > 3) {
            y->hmask[p % 32] |= (uint8_t)(1u << (p/32));
            l -= 4;
        }
        low[p] = (uint8_t) l;
    }
    k_pack_2bit(y->qs, low);
}

void quantize_row_q3_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    block_q3_K * y = (block_q3_K *) vy;
    int8_t L[QK_K];
    float  scales[QK_K/16];

    for (int64_t b = 0; b < k / QK_K; b++, x += QK_K) {
        float max_scale = 0.0f, amax = 0.0f;
        for (int j = 0; j < QK_K/16; j++) {
            scales[j] = k_search_q3(16, 4, x + 16*j, L + 16*j);
            if (fabsf(scales[j]) > amax) {
                amax      = fabsf(scales[j]);
                max_scale = scales[j];
            }
        }
        if (max_scale != 0.0f) {
            const float iscale = -32.0f/max_scale;
            int l[QK_K/16];
            for (int j = 0; j < QK_K/16; j++) {
                // upstream narrows the rounded value to a signed byte first
                const int r = k_low_byte_s8(k_round(iscale*scales[j]));
                l[j] = k_clamp(r, -32, 31) + 32;
            }
            k_pack_q3_scales(y[b].scales, l);
            y[b].d = GGML_FP32_TO_FP16(1.0f/iscale);
        } else {
            memset(y[b].scales, 0, sizeof(y[b].scales));
            y[b].d = GGML_FP32_TO_FP16(0.0f);
        }
        q3_K_requantize(x, &y[b], L);
    }
}

static void quantize_row_q3_K_weighted(const float * x, void * vy, int64_t n, const float * qw) {
    block_q3_K * y = (block_q3_K *) vy;
    int8_t L[QK_K], Ls[QK_K/16];
    float  scales[QK_K/16], w[16], sw[QK_K/16];

    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float sumx2 = 0.0f;
        for (int j = 0; j < QK_K; j++) {
            sumx2 += x[j]*x[j];
        }
        const float sigma2 = 2.0f*sumx2/(float) QK_K;
        for (int j = 0; j < QK_K/16; j++) {
            const float * q = qw + QK_K*b + 16*j;
            for (int i = 0; i < 16; i++) {
                w[i] = q[i] * sqrtf(sigma2 + x[16*j + i]*x[16*j + i]);
            }
            float sumw = 0.0f;
            for (int i = 0; i < 16; i++) {
                sumw += w[i];
            }
            sw[j] = sumw;
            scales[j] = ggml_quant_search_symmetric(16, 4, x + 16*j, L + 16*j, w);
        }
        const float d_block = ggml_quant_search_symmetric(QK_K/16, 32, scales, Ls, sw);
        int l[QK_K/16];
        for (int j = 0; j < QK_K/16; j++) {
            l[j] = Ls[j];
        }
        k_pack_q3_scales(y[b].scales, l);
        y[b].d = GGML_FP32_TO_FP16(d_block);
        q3_K_requantize(x, &y[b], L);
    }
}

void dequantize_row_q3_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    const block_q3_K * x = (const block_q3_K *) vx;
    for (int64_t b = 0; b < k / QK_K; b++) {
        int sc[QK_K/16];
        ggml_q3_K_scales(x[b].scales, sc);
        const float d_all = GGML_FP16_TO_FP32(x[b].d);
        for (int p = 0; p < QK_K; p++) {
            const int low = (x[b].qs[32*(p/128) + p%32] >> (2*((p/32)%4))) & 3;
            const int hi  = (x[b].hmask[p%32] >> (p/32)) & 1;
            const float dl = d_all * (float) sc[p/16];
            y[b*QK_K + p] = dl * (float)(low - (hi ? 0 : 4));
        }
    }
}

//
// Q4_K and Q5_K
//

// codes of every sub-block of 32 against the scales as decoded, in 0..nmax
static void q45_K_requantize(const float * x, ggml_half hd, ggml_half hdmin, const uint8_t * scales, int nmax, uint8_t * L) {
    const float d_all = GGML_FP16_TO_FP32(hd);
    const float m_all = GGML_FP16_TO_FP32(hdmin);
    for (int j = 0; j < QK_K/32; j++) {
        int sc, m;
        ggml_k_scale_min(j, scales, &sc, &m);
        const float d = d_all * (float) sc;
        if (d == 0.0f) {
            continue;
        }
        const float dm = m_all * (float) m;
        for (int i = 0; i < 32; i++) {
            L[32*j + i] = (uint8_t) k_clamp(k_round((x[32*j + i] + dm)/d), 0, nmax);
        }
    }
}

// the sub-block scales and minimums of the reference quantizers
static void q45_K_ref_scales(const float * x, int nmax, float rmin, float rdelta, int nstep,
                             uint8_t * L, float * scales, float * mins, float * pmax_scale, float * pmax_min) {
    uint8_t Laux[32];
    float   w[32];
    float   max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < QK_K/32; j++) {
        float sum_x2 = 0.0f;
        for (int i = 0; i < 32; i++) {
            sum_x2 += x[32*j + i] * x[32*j + i];
        }
        const float av_x = sqrtf(sum_x2/32.0f);
        for (int i = 0; i < 32; i++) {
            w[i] = av_x + fabsf(x[32*j + i]);
        }
        scales[j] = ggml_quant_search_affine(32, nmax, x + 32*j, w, L + 32*j, &mins[j], Laux, rmin, rdelta, nstep, false);
        max_scale = scales[j] > max_scale ? scales[j] : max_scale;
        max_min   = mins[j]   > max_min   ? mins[j]   : max_min;
    }
    *pmax_scale = max_scale;
    *pmax_min   = max_min;
}

// the 6-bit codes of the reference quantizers' scales and minimums
static void q45_K_ref_codes(const float * scales, const float * mins, float max_scale, float max_min,
                            uint8_t * ls, uint8_t * lm) {
    const float inv_scale = max_scale > 0.0f ? 63.0f/max_scale : 0.0f;
    const float inv_min   = max_min   > 0.0f ? 63.0f/max_min   : 0.0f;
    for (int j = 0; j < QK_K/32; j++) {
        const uint8_t s = (uint8_t) k_round(inv_scale*scales[j]);
        const uint8_t m = (uint8_t) k_round(inv_min*mins[j]);
        ls[j] = s < 63 ? s : 63;
        lm[j] = m < 63 ? m : 63;
    }
}

// the sub-block scales and minimums of the weighted quantizers
static void q45_K_weighted_scales(const float * x, const float * qw, int nmax, uint8_t * L,
                                  float * scales, float * mins, float * sw) {
    uint8_t Laux[32];
    float   w[32];
    float sum_x2 = 0.0f;
    for (int i = 0; i < QK_K; i++) {
        sum_x2 += x[i] * x[i];
    }
    const float sigma2 = 2.0f*sum_x2/(float) QK_K;
    const float av_x   = sqrtf(sigma2);
    for (int j = 0; j < QK_K/32; j++) {
        if (qw) {
            for (int i = 0; i < 32; i++) {
                w[i] = qw[32*j + i] * sqrtf(sigma2 + x[32*j + i]*x[32*j + i]);
            }
        } else {
            for (int i = 0; i < 32; i++) {
                w[i] = av_x + fabsf(x[32*j + i]);
            }
        }
        float sumw = 0.0f;
        for (int i = 0; i < 32; i++) {
            sumw += w[i];
        }
        sw[j] = sumw;
        scales[j] = ggml_quant_search_affine(32, nmax, x + 32*j, w, L + 32*j, &mins[j], Laux, -0.9f, 0.05f, 36, false);
    }
}

static void q4_K_pack(block_q4_K * y, const uint8_t * L) {
    for (int h = 0; h < QK_K/64; h++) {
        for (int l = 0; l < 32; l++) {
            y->qs[32*h + l] = (uint8_t)(L[64*h + l] | (L[64*h + 32 + l] << 4));
        }
    }
}

static void q5_K_pack(block_q5_K * y, const uint8_t * L) {
    memset(y->qh, 0, sizeof(y->qh));
    for (int h = 0; h < QK_K/64; h++) {
        for (int l = 0; l < 32; l++) {
            int l1 = L[64*h + l];
            int l2 = L[64*h + 32 + l];
            if (l1 > 15) {
                l1 -= 16;
                y->qh[l] |= (uint8_t)(1u << (2*h));
            }
            if (l2 > 15) {
                l2 -= 16;
                y->qh[l] |= (uint8_t)(2u << (2*h));
            }
            y->qs[32*h + l] = (uint8_t)(l1 | (l2 << 4));
        }
    }
}

void quantize_row_q4_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    block_q4_K * y = (block_q4_K *) vy;
    uint8_t L[QK_K], ls[QK_K/32], lm[QK_K/32];
    float   scales[QK_K/32], mins[QK_K/32];
    for (int64_t b = 0; b < k / QK_K; b++, x += QK_K) {
        float max_scale, max_min;
        q45_K_ref_scales(x, 15, -1.0f, 0.1f, 20, L, scales, mins, &max_scale, &max_min);
        q45_K_ref_codes(scales, mins, max_scale, max_min, ls, lm);
        k_pack_scales_mins(y[b].scales, ls, lm);
        y[b].d    = GGML_FP32_TO_FP16(max_scale/63.0f);
        y[b].dmin = GGML_FP32_TO_FP16(max_min/63.0f);
        q45_K_requantize(x, y[b].d, y[b].dmin, y[b].scales, 15, L);
        q4_K_pack(&y[b], L);
    }
}

void quantize_row_q5_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    block_q5_K * y = (block_q5_K *) vy;
    uint8_t L[QK_K], ls[QK_K/32], lm[QK_K/32];
    float   scales[QK_K/32], mins[QK_K/32];
    for (int64_t b = 0; b < k / QK_K; b++, x += QK_K) {
        float max_scale, max_min;
        q45_K_ref_scales(x, 31, -0.5f, 0.1f, 15, L, scales, mins, &max_scale, &max_min);
        q45_K_ref_codes(scales, mins, max_scale, max_min, ls, lm);
        k_pack_scales_mins(y[b].scales, ls, lm);
        y[b].d    = GGML_FP32_TO_FP16(max_scale/63.0f);
        y[b].dmin = GGML_FP32_TO_FP16(max_min/63.0f);
        q45_K_requantize(x, y[b].d, y[b].dmin, y[b].scales, 31, L);
        q5_K_pack(&y[b], L);
    }
}

static void quantize_row_q4_K_weighted(const float * x, void * vy, int64_t n, const float * qw) {
    block_q4_K * y = (block_q4_K *) vy;
    uint8_t L[QK_K], Ls[QK_K/32], Lm[QK_K/32];
    float   scales[QK_K/32], mins[QK_K/32], sw[QK_K/32];
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        q45_K_weighted_scales(x, qw + QK_K*b, 15, L, scales, mins, sw);
        const float d_block = ggml_quant_search_positive(QK_K/32, 63, scales, Ls, sw);
        const float m_block = ggml_quant_search_positive(QK_K/32, 63, mins,   Lm, sw);
        k_pack_scales_mins(y[b].scales, Ls, Lm);
        y[b].d    = GGML_FP32_TO_FP16(d_block);
        y[b].dmin = GGML_FP32_TO_FP16(m_block);
        q45_K_requantize(x, y[b].d, y[b].dmin, y[b].scales, 15, L);
        q4_K_pack(&y[b], L);
    }
}

static void quantize_row_q5_K_weighted(const float * x, void * vy, int64_t n, const float * qw) {
    block_q5_K * y = (block_q5_K *) vy;
    uint8_t L[QK_K], Ls[QK_K/32], Lm[QK_K/32];
    float   scales[QK_K/32], mins[QK_K/32], sw[QK_K/32];
    for (int64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        q45_K_weighted_scales(x, qw + QK_K*b, 31, L, scales, mins, sw);
        const float d_block = ggml_quant_search_positive(QK_K/32, 63, scales, Ls, sw);
        const float m_block = ggml_quant_search_positive(QK_K/32, 63, mins,   Lm, sw);
        // unlike q4_K, upstream caps the codes at 63 here
        for (int j = 0; j < QK_K/32; j++) {
            Ls[j] = Ls[j] < 63 ? Ls[j] : 63;
            Lm[j] = Lm[j] < 63 ? Lm[j] : 63;
        }
        k_pack_scales_mins(y[b].scales, Ls, Lm);
        y[b].d    = GGML_FP32_TO_FP16(d_block);
        y[b].dmin = GGML_FP32_TO_FP16(m_block);
        q45_K_requantize(x, y[b].d, y[b].dmin, y[b].scales, 31, L);
        q5_K_pack(&y[b], L);
    }
}

void dequantize_row_q4_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    const block_q4_K * x = (const block_q4_K *) vx;
    for (int64_t b = 0; b < k / QK_K; b++) {
        const float d    = GGML_FP16_TO_FP32(x[b].d);
        const float dmin = GGML_FP16_TO_FP32(x[b].dmin);
        for (int j = 0; j < QK_K/32; j++) {
            int sc, m;
            ggml_k_scale_min(j, x[b].scales, &sc, &m);
            const float dl = d * (float) sc;
            const float ml = dmin * (float) m;
            const uint8_t * q = x[b].qs + 32*(j/2);
            for (int l = 0; l < 32; l++) {
                const int v = (j % 2) ? q[l] >> 4 : q[l] & 0x0F;
                y[b*QK_K + 32*j + l] = dl * (float) v - ml;
            }
        }
    }
}

void dequantize_row_q5_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    const block_q5_K * x = (const block_q5_K *) vx;
    for (int64_t b = 0; b < k / QK_K; b++) {
        const float d    = GGML_FP16_TO_FP32(x[b].d);
        const float dmin = GGML_FP16_TO_FP32(x[b].dmin);
        for (int j = 0; j < QK_K/32; j++) {
            int sc, m;
            ggml_k_scale_min(j, x[b].scales, &sc, &m);
            const float dl = d * (float) sc;
            const float ml = dmin * (float) m;
            const uint8_t * q = x[b].qs + 32*(j/2);
            for (int l = 0; l < 32; l++) {
                const int v = ((j % 2) ? q[l] >> 4 : q[l] & 0x0F) + (((x[b].qh[l] >> j) & 1) ? 16 : 0);
                y[b*QK_K + 32*j + l] = dl * (float) v - ml;
            }
        }
    }
}

//
// Q6_K
//

static void q6_K_block(const float * x, block_q6_K * y, const float * qw) {
    int8_t L[QK_K];
    float  scales[QK_K/16];
    float  max_scale = 0.0f, max_abs_scale = 0.0f;
    for (int j = 0; j < QK_K/16; j++) {
        scales[j] = ggml_quant_search_symmetric(16, 32, x + 16*j, L + 16*j, qw ? qw + 16*j : NULL);
        if (fabsf(scales[j]) > max_abs_scale) {
            max_abs_scale = fabsf(scales[j]);
            max_scale     = scales[j];
        }
    }
    if (max_abs_scale < K_GROUP_EPS) {
        memset(y, 0, sizeof(*y));
        return;
    }
    const float iscale = -128.0f/max_scale;
    y->d = GGML_FP32_TO_FP16(1.0f/iscale);
    for (int j = 0; j < QK_K/16; j++) {
        const int l = k_round(iscale*scales[j]);
        y->scales[j] = (int8_t)(l < 127 ? l : 127);
    }
    const float d_all = GGML_FP16_TO_FP32(y->d);
    for (int j = 0; j < QK_K/16; j++) {
        const float d = d_all * (float) y->scales[j];
        if (d == 0.0f) {
            continue;
        }
        for (int i = 0; i < 16; i++) {
            L[16*j + i] = (int8_t)(k_clamp(k_round(x[16*j + i]/d), -32, 31) + 32);
        }
    }
    for (int h = 0; h < QK_K/128; h++) {
        for (int l = 0; l < 32; l++) {
            const int8_t * c = L + 128*h + l;
            y->ql[64*h + l]      = (uint8_t)((c[0]  & 0x0F) | ((c[64] & 0x0F) << 4));
            y->ql[64*h + 32 + l] = (uint8_t)((c[32] & 0x0F) | ((c[96] & 0x0F) << 4));
            y->qh[32*h + l]      = (uint8_t)((c[0] >> 4) | ((c[32] >> 4) << 2) | ((c[64] >> 4) << 4) | ((c[96] >> 4) << 6));
        }
    }
}

void quantize_row_q6_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    block_q6_K * y = (block_q6_K *) vy;
    for (int64_t b = 0; b < k / QK_K; b++) {
        q6_K_block(x + b*QK_K, &y[b], NULL);
    }
}

void dequantize_row_q6_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    const block_q6_K * x = (const block_q6_K *) vx;
    for (int64_t b = 0; b < k / QK_K; b++) {
        const float d = GGML_FP16_TO_FP32(x[b].d);
        for (int p = 0; p < QK_K; p++) {
            const int h = p/128, s = (p/32)%4, l = p%32;
            const int lo = (x[b].ql[64*h + 32*(s & 1) + l] >> (4*(s/2))) & 0x0F;
            const int hi = (x[b].qh[32*h + l] >> (2*s)) & 3;
            y[b*QK_K + p] = d * (float) x[b].scales[p/16] * (float)((lo | (hi << 4)) - 32);
        }
    }
}

//
// Q8_K
//

void quantize_row_q8_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    block_q8_K * y = (block_q8_K *) vy;
    for (int64_t b = 0; b < k / QK_K; b++, x += QK_K) {
        float max = 0.0f, amax = 0.0f;
        for (int j = 0; j < QK_K; j++) {
            if (fabsf(x[j]) > amax) {
                amax = fabsf(x[j]);
                max  = x[j];
            }
        }
        if (amax == 0.0f) {
            memset(&y[b], 0, sizeof(y[b]));
            continue;
        }
        // -127 rather than -128 keeps every code within int8 after negation
        const float iscale = -127.0f/max;
        for (int j = 0; j < QK_K; j++) {
            const int v = k_round(iscale*x[j]);
            y[b].qs[j] = (int8_t)(v < 127 ? v : 127);
        }
        for (int g = 0; g < QK_K/16; g++) {
            int sum = 0;
            for (int i = 0; i < 16; i++) {
                sum += y[b].qs[16*g + i];
            }
            y[b].bsums[g] = (int16_t) sum;
        }
        y[b].d = 1.0f/iscale;
    }
}

void dequantize_row_q8_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK_K == 0);
    const block_q8_K * x = (const block_q8_K *) vx;
    for (int64_t b = 0; b < k / QK_K; b++) {
        for (int j = 0; j < QK_K; j++) {
            y[b*QK_K + j] = x[b].d * (float) x[b].qs[j];
        }
    }
}

//
// row quantizers with an optional importance matrix
//

static void quantize_row_q6_K_weighted(const float * x, void * vy, int64_t n, const float * qw) {
    block_q6_K * y = (block_q6_K *) vy;
    for (int64_t b = 0; b < n / QK_K; b++) {
        q6_K_block(x + b*QK_K, &y[b], qw + b*QK_K);
    }
}

// nrows rows of n_per_row values of `type`: the reference quantizer ref over
// all of them without an importance matrix, else weighted row by row
static inline size_t k_quantize(enum ggml_type type, void (*ref)(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int64_t k),
                                void (*weighted)(const float * x, void * y, int64_t n, const float * qw),
                                const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows,
                                int64_t n_per_row, const float * imatrix) {
    const size_t row_size = ggml_row_size(type, n_per_row);
    if (imatrix == NULL) {
        ref(src, dst, nrows*n_per_row);
    } else {
        for (int64_t r = 0; r < nrows; r++) {
            weighted(src + r*n_per_row, (char *) dst + r*row_size, n_per_row, imatrix);
        }
    }
    return (size_t) nrows * row_size;
}

size_t quantize_q2_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return k_quantize(GGML_TYPE_Q2_K, quantize_row_q2_K_ref, quantize_row_q2_K_weighted, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_q3_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return k_quantize(GGML_TYPE_Q3_K, quantize_row_q3_K_ref, quantize_row_q3_K_weighted, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_q4_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return k_quantize(GGML_TYPE_Q4_K, quantize_row_q4_K_ref, quantize_row_q4_K_weighted, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_q5_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return k_quantize(GGML_TYPE_Q5_K, quantize_row_q5_K_ref, quantize_row_q5_K_weighted, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_q6_K(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return k_quantize(GGML_TYPE_Q6_K, quantize_row_q6_K_ref, quantize_row_q6_K_weighted, src, dst, nrows, n_per_row, imatrix);
}
