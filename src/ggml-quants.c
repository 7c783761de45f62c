// ggml-quants.c: quantization of the block formats.
//
// The reference quantizers (quantize_row_*_ref) define the formats: each picks
// the block scale the way upstream ggml does and rounds the same way, so that
// the bytes written are identical to upstream's for the same input. The
// quantize_* functions add upstream's weighted search for scales when an
// importance matrix is given (bytes identical to upstream's too). The rest is the public quantization API
// (ggml_quantize_chunk and friends) and row validation.

#include "ggml-quants.h"
#include "ggml-quants-iq.h"

#include <float.h>
#include <pthread.h>

// Codes of every type here are built in a scratch array of QK values and then
// packed; all the block sizes are 32.
#define QK_SMALL 32
_Static_assert(QK4_0 == QK_SMALL && QK4_1 == QK_SMALL && QK5_0 == QK_SMALL &&
               QK5_1 == QK_SMALL && QK8_0 == QK_SMALL && QK8_1 == QK_SMALL,
               "the packers below assume blocks of 32 values");

// The float -> integer conversion of a scaled value. Upstream converts with a
// plain cast, which C leaves undefined for NaN and out-of-range values; those
// occur when a block's scale is so small that 1/d overflows, or the input is
// not finite. On x86 such a cast yields INT32_MIN, whose low byte is 0; we give
// 0 on purpose, so that the bytes match upstream there too. Such a value comes
// from a block whose fp16 scale is 0 or not finite, or from a NaN input, so
// no meaningful code is lost.
static inline int quant_trunc(float v) {
    if (!(v > -2147483648.0f && v < 2147483648.0f)) {
        return 0;
    }
    return (int) v;
}

// the low byte of v as a signed byte: what a cast of an int to int8_t does on
// the machines ggml runs on, spelled out without implementation-defined behaviour
static inline int8_t low_byte_s8(int v) {
    const int b = (int)((unsigned) v & 0xffu);
    return (int8_t)(b >= 128 ? b - 256 : b);
}

static inline int clamp_int(int v, int lo, int hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

//
// packing of codes into blocks
//

// value j goes to the low nibble of qs[j], value j+16 to the high nibble
static void pack_nibbles(uint8_t * qs, const uint8_t * L) {
    for (int j = 0; j < QK_SMALL/2; j++) {
        qs[j] = (uint8_t)((L[j] & 0x0F) | ((L[j + QK_SMALL/2] & 0x0F) << 4));
    }
}

// bit 4 of value j is bit j of a host-order uint32 (as upstream stores it)
static void pack_fifth_bits(uint8_t * qh, const uint8_t * L) {
    uint32_t bits = 0;
    for (int j = 0; j < QK_SMALL; j++) {
        bits |= (uint32_t)((L[j] >> 4) & 1u) << j;
    }
    memcpy(qh, &bits, sizeof(bits));
}

static void pack_q4_0(void * vb, float d, float m, const uint8_t * L) {
    GGML_UNUSED(m);
    block_q4_0 * b = (block_q4_0 *) vb;
    b->d = GGML_FP32_TO_FP16(d);
    pack_nibbles(b->qs, L);
}

static void pack_q4_1(void * vb, float d, float m, const uint8_t * L) {
    block_q4_1 * b = (block_q4_1 *) vb;
    b->d = GGML_FP32_TO_FP16(d);
    b->m = GGML_FP32_TO_FP16(m);
    pack_nibbles(b->qs, L);
}

static void pack_q5_0(void * vb, float d, float m, const uint8_t * L) {
    GGML_UNUSED(m);
    block_q5_0 * b = (block_q5_0 *) vb;
    b->d = GGML_FP32_TO_FP16(d);
    pack_fifth_bits(b->qh, L);
    pack_nibbles(b->qs, L);
}

static void pack_q5_1(void * vb, float d, float m, const uint8_t * L) {
    block_q5_1 * b = (block_q5_1 *) vb;
    b->d = GGML_FP32_TO_FP16(d);
    b->m = GGML_FP32_TO_FP16(m);
    pack_fifth_bits(b->qh, L);
    pack_nibbles(b->qs, L);
}

//
// reference quantizers: fp32 -> blocks
//

// the value of largest magnitude, with its sign (the first one on ties)
static float signed_absmax(const float * x, int n) {
    float amax = 0.0f;
    float max  = 0.0f;
    for (int j = 0; j < n; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max  = x[j];
        }
    }
    return max;
}

static void min_max(const float * x, int n, float * pmin, float * pmax) {
    float min =  FLT_MAX;
    float max = -FLT_MAX;
    for (int j = 0; j < n; j++) {
        min = x[j] < min ? x[j] : min;
        max = x[j] > max ? x[j] : max;
    }
    *pmin = min;
    *pmax = max;
}

// Symmetric formats (q4_0, q5_0): the value of largest magnitude maps to code
// 0, i.e. to -nmax*d, so d takes the opposite sign of that value; code
// q stands for (q - nmax)*d.
static float quantize_block_symmetric_ref(const float * x, int nmax, uint8_t * L) {
    const float max = signed_absmax(x, QK_SMALL);
    const float d   = max / (float) -nmax;
    const float id  = d != 0.0f ? 1.0f/d : 0.0f;
    for (int j = 0; j < QK_SMALL; j++) {
        L[j] = (uint8_t) clamp_int(quant_trunc(x[j]*id + ((float) nmax + 0.5f)), 0, 2*nmax - 1);
    }
    return d;
}

// Affine formats (q4_1, q5_1): code q stands for q*d + min, with
// d = (max - min)/qmax.
static float quantize_block_affine_ref(const float * x, int qmax, uint8_t * L, float * pmin) {
    float min, max;
    min_max(x, QK_SMALL, &min, &max);
    const float d  = (max - min) / (float) qmax;
    const float id = d != 0.0f ? 1.0f/d : 0.0f;
    for (int j = 0; j < QK_SMALL; j++) {
        L[j] = (uint8_t) clamp_int(quant_trunc((x[j] - min)*id + 0.5f), 0, qmax);
    }
    *pmin = min;
    return d;
}

void quantize_row_q4_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK4_0 == 0);
    block_q4_0 * y = (block_q4_0 *) vy;
    uint8_t L[QK4_0];
    for (int64_t i = 0; i < k / QK4_0; i++) {
        const float d = quantize_block_symmetric_ref(x + i*QK4_0, 8, L);
        pack_q4_0(&y[i], d, 0.0f, L);
    }
}

void quantize_row_q4_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK4_1 == 0);
    block_q4_1 * y = (block_q4_1 *) vy;
    uint8_t L[QK4_1];
    for (int64_t i = 0; i < k / QK4_1; i++) {
        float min;
        const float d = quantize_block_affine_ref(x + i*QK4_1, 15, L, &min);
        pack_q4_1(&y[i], d, min, L);
    }
}

void quantize_row_q5_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK5_0 == 0);
    block_q5_0 * y = (block_q5_0 *) vy;
    uint8_t L[QK5_0];
    for (int64_t i = 0; i < k / QK5_0; i++) {
        const float d = quantize_block_symmetric_ref(x + i*QK5_0, 16, L);
        pack_q5_0(&y[i], d, 0.0f, L);
    }
}

void quantize_row_q5_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK5_1 == 0);
    block_q5_1 * y = (block_q5_1 *) vy;
    uint8_t L[QK5_1];
    for (int64_t i = 0; i < k / QK5_1; i++) {
        float min;
        const float d = quantize_block_affine_ref(x + i*QK5_1, 31, L, &min);
        pack_q5_1(&y[i], d, min, L);
    }
}

// q8: d = amax/127, codes round half away from zero. A NaN input can make
// amax forget earlier values (as upstream's MAX does), and then codes out of
// range keep their low byte, as upstream's cast does on x86.
static float quantize_block_q8_ref(const float * x, int8_t * qs) {
    float amax = 0.0f;
    for (int j = 0; j < QK_SMALL; j++) {
        amax = MAX(amax, fabsf(x[j]));
    }
    const float d  = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f/d : 0.0f;
    for (int j = 0; j < QK_SMALL; j++) {
        qs[j] = low_byte_s8(quant_trunc(roundf(x[j]*id)));
    }
    return d;
}

void quantize_row_q8_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK8_0 == 0);
    block_q8_0 * y = (block_q8_0 *) vy;
    for (int64_t i = 0; i < k / QK8_0; i++) {
        const float d = quantize_block_q8_ref(x + i*QK8_0, y[i].qs);
        y[i].d = GGML_FP32_TO_FP16(d);
    }
}

void quantize_row_q8_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int64_t k) {
    GGML_ASSERT(k % QK8_1 == 0);
    block_q8_1 * y = (block_q8_1 *) vy;
    for (int64_t i = 0; i < k / QK8_1; i++) {
        const float d = quantize_block_q8_ref(x + i*QK8_1, y[i].qs);
        int sum = 0;
        for (int j = 0; j < QK8_1; j++) {
            sum += y[i].qs[j];
        }
        y[i].d = GGML_FP32_TO_FP16(d);
        y[i].s = GGML_FP32_TO_FP16((float) sum * d);
    }
}

//
// dequantize: blocks -> fp32
//

void dequantize_row_q4_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK4_0 == 0);
    const block_q4_0 * x = (const block_q4_0 *) vx;
    const int64_t nb = k / QK4_0;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int j = 0; j < QK4_0/2; j++) {
            const int q0 = (x[i].qs[j] & 0x0F) - 8;
            const int q1 = (x[i].qs[j] >>   4) - 8;
            y[i*QK4_0 + j]           = (float) q0 * d;
            y[i*QK4_0 + j + QK4_0/2] = (float) q1 * d;
        }
    }
}

void dequantize_row_q4_1(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK4_1 == 0);
    const block_q4_1 * x = (const block_q4_1 *) vx;
    const int64_t nb = k / QK4_1;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        const float m = GGML_FP16_TO_FP32(x[i].m);
        for (int j = 0; j < QK4_1/2; j++) {
            const int q0 = x[i].qs[j] & 0x0F;
            const int q1 = x[i].qs[j] >>   4;
            y[i*QK4_1 + j]           = (float) q0 * d + m;
            y[i*QK4_1 + j + QK4_1/2] = (float) q1 * d + m;
        }
    }
}

void dequantize_row_q5_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK5_0 == 0);
    const block_q5_0 * x = (const block_q5_0 *) vx;
    const int64_t nb = k / QK5_0;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < QK5_0/2; j++) {
            const int h0 = (int)((qh >> j)             & 1u) << 4;
            const int h1 = (int)((qh >> (j + QK5_0/2)) & 1u) << 4;
            const int q0 = ((x[i].qs[j] & 0x0F) | h0) - 16;
            const int q1 = ((x[i].qs[j] >>   4) | h1) - 16;
            y[i*QK5_0 + j]           = (float) q0 * d;
            y[i*QK5_0 + j + QK5_0/2] = (float) q1 * d;
        }
    }
}

void dequantize_row_q5_1(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK5_1 == 0);
    const block_q5_1 * x = (const block_q5_1 *) vx;
    const int64_t nb = k / QK5_1;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        const float m = GGML_FP16_TO_FP32(x[i].m);
        uint32_t qh;
        memcpy(&qh, x[i].qh, sizeof(qh));
        for (int j = 0; j < QK5_1/2; j++) {
            const int h0 = (int)((qh >> j)             & 1u) << 4;
            const int h1 = (int)((qh >> (j + QK5_1/2)) & 1u) << 4;
            const int q0 = (x[i].qs[j] & 0x0F) | h0;
            const int q1 = (x[i].qs[j] >>   4) | h1;
            y[i*QK5_1 + j]           = (float) q0 * d + m;
            y[i*QK5_1 + j + QK5_1/2] = (float) q1 * d + m;
        }
    }
}

void dequantize_row_q8_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK8_0 == 0);
    const block_q8_0 * x = (const block_q8_0 *) vx;
    const int64_t nb = k / QK8_0;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int j = 0; j < QK8_0; j++) {
            y[i*QK8_0 + j] = (float) x[i].qs[j] * d;
        }
    }
}

void dequantize_row_q8_1(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int64_t k) {
    GGML_ASSERT(k % QK8_1 == 0);
    const block_q8_1 * x = (const block_q8_1 *) vx;
    const int64_t nb = k / QK8_1;

    for (int64_t i = 0; i < nb; i++) {
        const float d = GGML_FP16_TO_FP32(x[i].d);
        for (int j = 0; j < QK8_1; j++) {
            y[i*QK8_1 + j] = (float) x[i].qs[j] * d;
        }
    }
}

//
// quantization with an importance matrix
//
// Upstream's weighted quantizers: each block's weights are the importance
// times sqrt(sigma2 + x^2), sigma2 the mean square of the row; the symmetric
// formats take the scale search of make_qx_quants, the affine ones that of
// make_qkx3_quants (both in ggml-quants-k.c, where the K-quants use them too).
//

static void quantize_row_weighted(enum ggml_type type, const float * x, void * y, int64_t n_per_row, const float * qw) {
    float sum_x2 = 0.0f;
    for (int64_t j = 0; j < n_per_row; j++) {
        sum_x2 += x[j]*x[j];
    }
    const float sigma2 = sum_x2/(float) n_per_row;
    const size_t bs = ggml_type_size(type);
    for (int64_t ib = 0; ib < n_per_row / QK_SMALL; ib++) {
        const float * xb = x + ib*QK_SMALL;
        float w[QK_SMALL];
        for (int j = 0; j < QK_SMALL; j++) {
            w[j] = qw[ib*QK_SMALL + j] * sqrtf(sigma2 + xb[j]*xb[j]);
        }
        void * block = (char *) y + ib*bs;
        if (type == GGML_TYPE_Q4_0 || type == GGML_TYPE_Q5_0) {
            const int nmax = type == GGML_TYPE_Q4_0 ? 8 : 16;
            int8_t  Ls[QK_SMALL];
            uint8_t L[QK_SMALL];
            const float d = ggml_quant_search_symmetric(QK_SMALL, nmax, xb, Ls, w);
            for (int j = 0; j < QK_SMALL; j++) {
                L[j] = (uint8_t) Ls[j];
            }
            (type == GGML_TYPE_Q4_0 ? pack_q4_0 : pack_q5_0)(block, d, 0.0f, L);
        } else {
            const int qmax = type == GGML_TYPE_Q4_1 ? 15 : 31;
            uint8_t L[QK_SMALL], Laux[QK_SMALL];
            float the_min;
            const float d = ggml_quant_search_affine(QK_SMALL, qmax, xb, w, L, &the_min, Laux, -0.9f, 0.05f, 36, false);
            (type == GGML_TYPE_Q4_1 ? pack_q4_1 : pack_q5_1)(block, d, -the_min, L);
        }
    }
}

static size_t quantize_rows(enum ggml_type type, void (*quantize_ref)(const float *, void *, int64_t),
                            const float * src, void * dst, int64_t nrows, int64_t n_per_row,
                            const float * imatrix) {
    const size_t row_size = ggml_row_size(type, n_per_row);
    for (int64_t r = 0; r < nrows; r++) {
        const float * x = src + r*n_per_row;
        void        * y = (char *) dst + (size_t) r*row_size;
        if (imatrix) {
            quantize_row_weighted(type, x, y, n_per_row, imatrix);
        } else {
            quantize_ref(x, y, n_per_row);
        }
    }
    return (size_t) nrows * row_size;
}

size_t quantize_q4_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows(GGML_TYPE_Q4_0, quantize_row_q4_0_ref, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_q4_1(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows(GGML_TYPE_Q4_1, quantize_row_q4_1_ref, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_q5_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows(GGML_TYPE_Q5_0, quantize_row_q5_0_ref, src, dst, nrows, n_per_row, imatrix);
}

size_t quantize_q5_1(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows(GGML_TYPE_Q5_1, quantize_row_q5_1_ref, src, dst, nrows, n_per_row, imatrix);
}

// 8 bits leave little for a search to gain; like upstream, the importance
// matrix is not used
size_t quantize_q8_0(const float * GGML_RESTRICT src, void * GGML_RESTRICT dst, int64_t nrows, int64_t n_per_row, const float * imatrix) {
    GGML_UNUSED(imatrix);
    const size_t row_size = ggml_row_size(GGML_TYPE_Q8_0, n_per_row);
    quantize_row_q8_0_ref(src, dst, nrows*n_per_row);
    return (size_t) nrows * row_size;
}

//
// public API
//

// The grid types (IQ1_S, IQ1_M, IQ2_*, IQ3_*) quantize through search tables
// (ggml-quants-iq-grid.c), built for a type once, whichever thread asks
// first, and freed together by ggml_quantize_free; the lock orders both.
static pthread_mutex_t g_quantize_tables_mutex = PTHREAD_MUTEX_INITIALIZER;

void ggml_quantize_init(enum ggml_type type) {
    GGML_ASSERT(type >= 0 && type < GGML_TYPE_COUNT);
    pthread_mutex_lock(&g_quantize_tables_mutex);
    ggml_iq_search_init(type);
    pthread_mutex_unlock(&g_quantize_tables_mutex);
}

void ggml_quantize_free(void) {
    pthread_mutex_lock(&g_quantize_tables_mutex);
    ggml_iq_search_free();
    pthread_mutex_unlock(&g_quantize_tables_mutex);
}

bool ggml_quantize_requires_imatrix(enum ggml_type type) {
    return type == GGML_TYPE_IQ2_XXS ||
           type == GGML_TYPE_IQ2_XS  ||
           type == GGML_TYPE_IQ1_S;
}

size_t ggml_quantize_chunk(
        enum ggml_type   type,
           const float * src,
                  void * dst,
               int64_t   start,
               int64_t   nrows,
               int64_t   n_per_row,
           const float * imatrix) {
    if (type < 0 || type >= GGML_TYPE_COUNT) {
        GGML_ABORT("ggml_quantize_chunk: invalid type %d", (int) type);
    }
    if (ggml_quantize_requires_imatrix(type) && imatrix == NULL) {
        GGML_ABORT("ggml_quantize_chunk: type %s cannot be quantized without an importance matrix",
                   ggml_type_name(type));
    }

    size_t (*quantize)(const float *, void *, int64_t, int64_t, const float *) = NULL;
    switch (type) {
        case GGML_TYPE_Q4_0: quantize = quantize_q4_0; break;
        case GGML_TYPE_Q4_1: quantize = quantize_q4_1; break;
        case GGML_TYPE_Q5_0: quantize = quantize_q5_0; break;
        case GGML_TYPE_Q5_1: quantize = quantize_q5_1; break;
        case GGML_TYPE_Q8_0: quantize = quantize_q8_0; break;
        case GGML_TYPE_Q2_K: quantize = quantize_q2_K; break;
        case GGML_TYPE_Q3_K: quantize = quantize_q3_K; break;
        case GGML_TYPE_Q4_K: quantize = quantize_q4_K; break;
        case GGML_TYPE_Q5_K: quantize = quantize_q5_K; break;
        case GGML_TYPE_Q6_K: quantize = quantize_q6_K; break;
        case GGML_TYPE_IQ4_NL: quantize = quantize_iq4_nl; break;
        case GGML_TYPE_IQ4_XS: quantize = quantize_iq4_xs; break;
        case GGML_TYPE_MXFP4:  quantize = quantize_mxfp4;  break;
        case GGML_TYPE_TQ1_0:  quantize = quantize_tq1_0;  break;
        case GGML_TYPE_TQ2_0:  quantize = quantize_tq2_0;  break;
        case GGML_TYPE_IQ2_XXS: quantize = quantize_iq2_xxs; break;
        case GGML_TYPE_IQ2_XS:  quantize = quantize_iq2_xs;  break;
        case GGML_TYPE_IQ2_S:   quantize = quantize_iq2_s;   break;
        case GGML_TYPE_IQ3_XXS: quantize = quantize_iq3_xxs; break;
        case GGML_TYPE_IQ3_S:   quantize = quantize_iq3_s;   break;
        case GGML_TYPE_IQ1_S:   quantize = quantize_iq1_s;   break;
        case GGML_TYPE_IQ1_M:   quantize = quantize_iq1_m;   break;
        case GGML_TYPE_Q1_0:    quantize = quantize_q1_0;    break;
        case GGML_TYPE_Q2_0:    quantize = quantize_q2_0;    break;
        case GGML_TYPE_NVFP4:   quantize = quantize_nvfp4;   break;
        case GGML_TYPE_F32:
        case GGML_TYPE_F16:
        case GGML_TYPE_BF16:
            break;
        default:
            GGML_ABORT("ggml_quantize_chunk: quantizing to type %s is not supported "
                       "(supported: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq4_nl, iq4_xs, mxfp4, tq1_0, tq2_0, "
                       "iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, iq1_s, iq1_m, q1_0, q2_0, nvfp4)", ggml_type_name(type));
    }

    GGML_ASSERT(nrows >= 0 && n_per_row > 0);
    GGML_ASSERT(start % ggml_blck_size(type) == 0);
    GGML_ASSERT(start % n_per_row == 0);

    ggml_quantize_init(type);

    const int64_t n         = nrows * n_per_row;
    const size_t  row_size  = ggml_row_size(type, n_per_row);
    char        * dst_rows  = (char *) dst + (size_t)(start / n_per_row) * row_size;
    size_t        result    = 0;

    switch (type) {
        case GGML_TYPE_F32:
            memcpy(dst_rows, src + start, (size_t) n * sizeof(float));
            result = (size_t) n * sizeof(float);
            break;
        case GGML_TYPE_F16:
            ggml_fp32_to_fp16_row(src + start, (ggml_fp16_t *) dst_rows, n);
            result = (size_t) n * sizeof(ggml_fp16_t);
            break;
        case GGML_TYPE_BF16:
            ggml_fp32_to_bf16_row_ref(src + start, (ggml_bf16_t *) dst_rows, n);
            result = (size_t) n * sizeof(ggml_bf16_t);
            break;
        default:
            result = quantize(src + start, dst_rows, nrows, n_per_row, imatrix);
            break;
    }

    GGML_ASSERT(result == (size_t) nrows * row_size);
    return result;
}

//
// row validation
//

static bool fp16_is_finite(ggml_fp16_t h) {
    return (h & 0x7c00) != 0x7c00;
}

// one log line for the first non-finite value; what it is, and where
static void log_non_finite(const char * what, bool is_nan, size_t index, enum ggml_type type) {
    GGML_LOG_ERROR("ggml_validate_row_data: found %s %s at %s %zu of %s data\n",
                   is_nan ? "nan" : "inf", what,
                   ggml_is_quantized(type) ? "block" : "element", index, ggml_type_name(type));
}

static bool validate_f32(const void * data, size_t n) {
    const uint32_t * u = (const uint32_t *) data;
    for (size_t i = 0; i < n; i++) {
        if ((u[i] & 0x7f800000u) == 0x7f800000u) {
            log_non_finite("value", (u[i] & 0x007fffffu) != 0, i, GGML_TYPE_F32);
            return false;
        }
    }
    return true;
}

static bool validate_f64(const void * data, size_t n) {
    const double * f = (const double *) data;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(f[i])) {
            log_non_finite("value", isnan(f[i]), i, GGML_TYPE_F64);
            return false;
        }
    }
    return true;
}

static bool validate_f16(const void * data, size_t n) {
    const ggml_fp16_t * h = (const ggml_fp16_t *) data;
    for (size_t i = 0; i < n; i++) {
        if (!fp16_is_finite(h[i])) {
            log_non_finite("value", (h[i] & 0x03ff) != 0, i, GGML_TYPE_F16);
            return false;
        }
    }
    return true;
}

static bool validate_bf16(const void * data, size_t n) {
    const ggml_bf16_t * h = (const ggml_bf16_t *) data;
    for (size_t i = 0; i < n; i++) {
        if ((h[i].bits & 0x7f80) == 0x7f80) {
            log_non_finite("value", (h[i].bits & 0x007f) != 0, i, GGML_TYPE_BF16);
            return false;
        }
    }
    return true;
}

// n_halves fp16 values from byte `offset` of every block are its scale (and min)
static bool validate_block_halves_at(enum ggml_type type, const void * data, size_t nblocks, size_t offset, int n_halves) {
    const size_t block_size = ggml_type_size(type);
    for (size_t i = 0; i < nblocks; i++) {
        for (int k = 0; k < n_halves; k++) {
            ggml_fp16_t h;
            memcpy(&h, (const char *) data + i*block_size + offset + (size_t) k*sizeof(h), sizeof(h));
            if (!fp16_is_finite(h)) {
                log_non_finite(k == 0 ? "scale" : "min", (h & 0x03ff) != 0, i, type);
                return false;
            }
        }
    }
    return true;
}

static bool validate_block_scales(enum ggml_type type, const void * data, size_t nblocks, int n_halves) {
    return validate_block_halves_at(type, data, nblocks, 0, n_halves);
}

// q8_K blocks carry an fp32 scale
static bool validate_q8_K(const void * data, size_t nblocks) {
    for (size_t i = 0; i < nblocks; i++) {
        float d;
        memcpy(&d, (const char *) data + i*sizeof(block_q8_K) + offsetof(block_q8_K, d), sizeof(d));
        if (!isfinite(d)) {
            log_non_finite("scale", isnan(d), i, GGML_TYPE_Q8_K);
            return false;
        }
    }
    return true;
}

// mxfp4 blocks carry an E8M0 exponent, whose 0xff is NaN
static bool validate_mxfp4(const void * data, size_t nblocks) {
    const block_mxfp4 * b = (const block_mxfp4 *) data;
    for (size_t i = 0; i < nblocks; i++) {
        if (b[i].e == 0xff) {
            log_non_finite("scale", true, i, GGML_TYPE_MXFP4);
            return false;
        }
    }
    return true;
}

// iq1_m blocks carry their fp16 scale in the top bits of their sub-block scales
static bool validate_iq1_m(const void * data, size_t nblocks) {
    const block_iq1_m * b = (const block_iq1_m *) data;
    for (size_t i = 0; i < nblocks; i++) {
        const float d = ggml_iq1_m_scale(&b[i]);
        if (!isfinite(d)) {
            log_non_finite("scale", isnan(d), i, GGML_TYPE_IQ1_M);
            return false;
        }
    }
    return true;
}

bool ggml_validate_row_data(enum ggml_type type, const void * data, size_t nbytes) {
    if (type < 0 || type >= GGML_TYPE_COUNT) {
        GGML_LOG_ERROR("ggml_validate_row_data: invalid type %d\n", (int) type);
        return false;
    }
    const size_t type_size = ggml_type_size(type);
    if (type_size == 0) {
        GGML_LOG_ERROR("ggml_validate_row_data: type %d (%s) was removed from ggml\n", (int) type, ggml_type_name(type));
        return false;
    }
    if (nbytes % type_size != 0) {
        GGML_LOG_ERROR("ggml_validate_row_data: invalid size %zu for type %s (type size = %zu)\n",
                       nbytes, ggml_type_name(type), type_size);
        return false;
    }

    const size_t n = nbytes / type_size;
    _Static_assert(offsetof(block_q4_1, m) == sizeof(ggml_half) && offsetof(block_q5_1, m) == sizeof(ggml_half),
                   "validate_block_scales reads d and m as the first two halves");
    _Static_assert(offsetof(block_q4_K, dmin) == sizeof(ggml_half) && offsetof(block_q5_K, dmin) == sizeof(ggml_half) &&
                   offsetof(block_q2_K, dmin) == offsetof(block_q2_K, d) + sizeof(ggml_half),
                   "the K-quant scale factors are adjacent halves");

    switch (type) {
        case GGML_TYPE_F32:  return validate_f32(data, n);
        case GGML_TYPE_F64:  return validate_f64(data, n);
        case GGML_TYPE_F16:  return validate_f16(data, n);
        case GGML_TYPE_BF16: return validate_bf16(data, n);
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q8_0: return validate_block_scales(type, data, n, 1);
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_1: return validate_block_scales(type, data, n, 2);
        case GGML_TYPE_Q2_K: return validate_block_halves_at(type, data, n, offsetof(block_q2_K, d), 2);
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K: return validate_block_scales(type, data, n, 2);
        case GGML_TYPE_Q3_K: return validate_block_halves_at(type, data, n, offsetof(block_q3_K, d), 1);
        case GGML_TYPE_Q6_K: return validate_block_halves_at(type, data, n, offsetof(block_q6_K, d), 1);
        case GGML_TYPE_Q8_K: return validate_q8_K(data, n);
        case GGML_TYPE_IQ4_NL:
        case GGML_TYPE_IQ4_XS: return validate_block_scales(type, data, n, 1);
        case GGML_TYPE_TQ1_0:  return validate_block_halves_at(type, data, n, offsetof(block_tq1_0, d), 1);
        case GGML_TYPE_TQ2_0:  return validate_block_halves_at(type, data, n, offsetof(block_tq2_0, d), 1);
        case GGML_TYPE_MXFP4:  return validate_mxfp4(data, n);
        case GGML_TYPE_IQ2_XXS:
        case GGML_TYPE_IQ2_XS:
        case GGML_TYPE_IQ2_S:
        case GGML_TYPE_IQ3_XXS:
        case GGML_TYPE_IQ3_S:
        case GGML_TYPE_IQ1_S:  return validate_block_scales(type, data, n, 1);
        case GGML_TYPE_IQ1_M:  return validate_iq1_m(data, n);
        case GGML_TYPE_Q1_0:
        case GGML_TYPE_Q2_0:   return validate_block_scales(type, data, n, 1);
        case GGML_TYPE_NVFP4:  return true; // as upstream: every UE4M3 byte is a value
        case GGML_TYPE_I8:
        case GGML_TYPE_I16:
        case GGML_TYPE_I32:
        case GGML_TYPE_I64:  return true;
        case GGML_TYPE_Q8_1:
            // as upstream: q8_1 holds activations inside the CPU backend, never stored data
            GGML_LOG_ERROR("ggml_validate_row_data: type q8_1 is not a storage type\n");
            return false;
        default:
            GGML_LOG_DEBUG("ggml_validate_row_data: size of %s data checked, contents not checked "
                           "(block layout not implemented)\n", ggml_type_name(type));
            return true;
    }
}
