// panel-q4_K-avx512.c: the AVX-512 VNNI dot product of Q4_K panels
// (panels.h) and Q8_K activation rows. Per unit (block b of 16 rows, 2304
// bytes): the 16 rows' packed 6-bit scales and mins decoded byte-wise in
// three vectors (each row in its 32-bit lane), 32 loads of codes, their low
// and high nibbles, 64 VNNI steps against broadcast activation dwords (16
// rows each), one 32-bit multiply per sub-block by its scale; the mins meet
// the activations' sub-block sums (from the Q8_K block's bsums) in four
// 16-bit dot-product steps. Per row the blocks are summed in the order of
// q4_Kp_dot__scalar, with fused multiply-adds.
//
// Up to 4 panels are walked side by side, block by block (four sequential
// weight streams per thread, as panel-q4_0-avx512.c), every line prefetched
// GGML_CPU_STREAM_AHEAD bytes ahead as it is read.

#include "kernels/panels.h"
#include "kernels/kernel-config.h"
#include "simd/stream-prefetch.h"
#include "ggml-impl.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__) && defined(__F16C__)
#include <immintrin.h>

#define Q4KP_UNIT (GGML_QPANEL_ROWS * sizeof(block_q4_K))

static inline __m512i q4kp_bcast(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return _mm512_set1_epi32(v);
}

static inline __m512i q4kp_load(const uint8_t * p) {
    ggml_cpu_stream_prefetch(p, 64);
    return _mm512_loadu_si512(p);
}

// acc + unit u (16 rows) . activation block yb; ym: its sub-block sums as
// 16-bit pairs (0, 2), (1, 3), (4, 6), (5, 7)
static inline __m512 q4kp_unit(__m512 acc, const uint8_t * u, const block_q8_K * yb, const int32_t * ym) {
    const __m512i m4  = _mm512_set1_epi8(0x0F);
    const __m512i m6  = _mm512_set1_epi8(0x3F);
    const __m512i m30 = _mm512_set1_epi8(0x30);
    const __m512i lo8 = _mm512_set1_epi32(0xFF);
    const __m512i w16 = _mm512_set1_epi32(0x00FF00FF);

    // the 12 packed bytes of each row: words 0, 1, 2 of the block's words
    const __m512i v0 = q4kp_load(u + 64);
    const __m512i v1 = q4kp_load(u + 128);
    const __m512i v2 = q4kp_load(u + 192);
    // bytes: scales 0..3, scales 4..7, mins 0..3, mins 4..7 of each row
    const __m512i sc_lo = _mm512_and_si512(v0, m6);
    const __m512i sc_hi = _mm512_or_si512(_mm512_and_si512(v2, m4), _mm512_and_si512(_mm512_srli_epi32(v0, 2), m30));
    const __m512i mn_lo = _mm512_and_si512(v1, m6);
    const __m512i mn_hi = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi32(v2, 4), m4),
                                          _mm512_and_si512(_mm512_srli_epi32(v1, 2), m30));
    __m512i msum = _mm512_dpwssd_epi32(_mm512_setzero_si512(), _mm512_and_si512(mn_lo, w16), _mm512_set1_epi32(ym[0]));
    msum = _mm512_dpwssd_epi32(msum, _mm512_and_si512(_mm512_srli_epi32(mn_lo, 8), w16), _mm512_set1_epi32(ym[1]));
    msum = _mm512_dpwssd_epi32(msum, _mm512_and_si512(mn_hi, w16), _mm512_set1_epi32(ym[2]));
    msum = _mm512_dpwssd_epi32(msum, _mm512_and_si512(_mm512_srli_epi32(mn_hi, 8), w16), _mm512_set1_epi32(ym[3]));

    // sub-blocks 2p (low nibbles of qs[32p ..]) and 2p + 1 (high nibbles)
    __m512i isum = _mm512_setzero_si512();
    const uint8_t * qs = u + 256;
    for (int p = 0; p < 4; p++) {
        __m512i lo = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
        for (int e = 0; e < 8; e++) {
            const __m512i z = q4kp_load(qs + 64*(8*p + e));
            lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(z, m4), q4kp_bcast(yb->qs + 64*p + 4*e));
            hi = _mm512_dpbusd_epi32(hi, _mm512_and_si512(_mm512_srli_epi16(z, 4), m4), q4kp_bcast(yb->qs + 64*p + 32 + 4*e));
        }
        const __m512i sc = p < 2 ? sc_lo : sc_hi;
        __m512i sc_even, sc_odd;
        if (p % 2 == 0) {
            sc_even = _mm512_and_si512(sc, lo8);
            sc_odd  = _mm512_and_si512(_mm512_srli_epi32(sc, 8), lo8);
        } else {
            sc_even = _mm512_and_si512(_mm512_srli_epi32(sc, 16), lo8);
            sc_odd  = _mm512_srli_epi32(sc, 24);
        }
        isum = _mm512_add_epi32(isum, _mm512_add_epi32(_mm512_mullo_epi32(lo, sc_even), _mm512_mullo_epi32(hi, sc_odd)));
    }
    const __m512 dy   = _mm512_set1_ps(yb->d);
    const __m512 d    = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) u)), dy);
    const __m512 dmin = _mm512_mul_ps(_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(u + 32))), dy);
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), d, acc);
    return _mm512_fnmadd_ps(_mm512_cvtepi32_ps(msum), dmin, acc);
}

static inline void q4kp_store(float * out, __m512 acc, int rows) {
    if (rows >= GGML_QPANEL_ROWS) {
        _mm512_storeu_ps(out, acc);
    } else {
        _mm512_mask_storeu_ps(out, (__mmask16)((1u << rows) - 1), acc);
    }
}

// the sums of sub-blocks (0, 2), (1, 3), (4, 6), (5, 7) as 16-bit pairs
static inline void q4kp_min_pairs(const block_q8_K * yb, int32_t * ym) {
    int32_t ysum[8];
    for (int i = 0; i < 8; i++) {
        ysum[i] = yb->bsums[2*i] + yb->bsums[2*i + 1];
    }
    for (int i = 0; i < 4; i++) {
        const int a = (i / 2) * 4 + i % 2;
        ym[i] = (int32_t)((uint32_t)(uint16_t) ysum[a] | (uint32_t)(uint16_t) ysum[a + 2] << 16);
    }
}

// np (1 to 4) panels of one column, side by side; rows: of the last panel
static void q4kp_panels(int64_t nb, const uint8_t * grp, int np, const block_q8_K * yb, float * out, int rows) {
    const size_t gstride = (size_t) nb * Q4KP_UNIT;
    __m512 acc[4] = { _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps() };
    for (int64_t b = 0; b < nb; b++) {
        int32_t ym[4];
        q4kp_min_pairs(yb + b, ym);
        const uint8_t * u = grp + (size_t) b * Q4KP_UNIT;
        if (np == 4) {
            for (int p = 0; p < 4; p++) {
                acc[p] = q4kp_unit(acc[p], u + p*gstride, yb + b, ym);
            }
        } else {
            for (int p = 0; p < np; p++) {
                acc[p] = q4kp_unit(acc[p], u + p*gstride, yb + b, ym);
            }
        }
    }
    for (int p = 0; p < np; p++) {
        q4kp_store(out + p*GGML_QPANEL_ROWS, acc[p], p == np - 1 ? rows : GGML_QPANEL_ROWS);
    }
}

static void q4_Kp_dot__avx512vnni(int64_t nb, const void * GGML_RESTRICT panels, int64_t ng, int64_t nr,
                                  const void * const * y, const int32_t * const * ys, float * const * s, int64_t nc) {
    (void) ys;
    const size_t gstride = (size_t) nb * Q4KP_UNIT;
    for (int64_t g = 0; g < ng; g += 4) {
        const int np = (int) MIN((int64_t) 4, ng - g);
        const uint8_t * grp = (const uint8_t *) panels + (size_t) g * gstride;
        const int rows = (int) MIN((int64_t) GGML_QPANEL_ROWS, nr - (g + np - 1)*GGML_QPANEL_ROWS);
        for (int64_t c = 0; c < nc; c++) {
            q4kp_panels(nb, grp, np, (const block_q8_K *) y[c], s[c] + g*GGML_QPANEL_ROWS, rows);
        }
    }
}

void ggml_cpu_add_kernels_x86_panel_q4_K(struct ggml_cpu_kernel_config * cfg) {
    GGML_CPU_SET_KERNEL(cfg->fast, GGML_TYPE_Q4_K, dot_panels, q4_Kp_dot__avx512vnni, GGML_CPU_ISA_TAG);
}

#else

void ggml_cpu_add_kernels_x86_panel_q4_K(struct ggml_cpu_kernel_config * cfg) {
    (void) cfg;
}

#endif
