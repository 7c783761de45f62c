// test-quantize-k: the K-quant formats (Q2_K .. Q6_K, Q8_K), the 4-bit
// table formats (IQ4_NL, IQ4_XS, MXFP4, NVFP4), the ternary ones (TQ1_0,
// TQ2_0) and the small-block Q1_0 and Q2_0.
//
//   - block bytes of small inputs whose quantization is worked out by hand
//     (the comments give the derivation), and dequantization of hand-built
//     blocks against the layout written out here;
//   - round trips of random, constant and zero rows, with and without an
//     importance matrix;
//   - ggml_validate_row_data on non-finite scale factors and bad sizes;
//   - MUL_MAT and the traits' vec_dot against a double-precision sum over the
//     dequantized weights and the Q8_K activations, on both kernel families,
//     1 and 2 threads, odd shapes and a strided src1.
//
// Byte identity with upstream's quantizers is checked outside the test suite
// (against an upstream build), see the branch notes.

#include "ggml.h"
#include "ggml-cpu.h"
#include "ggml-quants.h"
#include "cpu-testing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const enum ggml_type k_types[] = {
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
    GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4,
    GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0,
    GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_NVFP4,
};
#define N_K_TYPES (int)(sizeof(k_types)/sizeof(k_types[0]))

static uint64_t g_rng = 0x1234567887654321ull;

static double rnd_uniform(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (double)(g_rng >> 11) / 9007199254740992.0;
}

static float rnd_gauss(void) {
    const double u = rnd_uniform() + 1e-12, v = rnd_uniform();
    return (float)(sqrt(-2.0*log(u)) * cos(6.283185307179586*v));
}

static uint16_t half_bits(float f) {
    return ggml_fp32_to_fp16(f);
}

//
// hand-checked bytes
//

// Q4_K of x[32j + i] = i % 16: every sub-block spans 0..15 with minimum 0,
// so the first fit (scale 1, minimum 0) has zero error and the search keeps
// it. All scales are 1: the 6-bit scale codes are 63 (d = 1/63), the minimum
// codes 0 (dmin = 0), and requantizing against 63 * fp16(1/63) ~ 1 gives the
// values back. Scale bytes: 0..3 hold 63 | (63 >> 4) << 6 = 255, 4..7 the
// minimums (0), 8..11 the low nibbles of scales 4..7 (15).
static void test_q4_K_bytes(void) {
    float x[QK_K];
    for (int i = 0; i < QK_K; i++) {
        x[i] = (float)(i % 16);
    }
    block_q4_K b;
    quantize_row_q4_K_ref(x, &b, QK_K);
    CHECK(b.d == half_bits(1.0f/63.0f));
    CHECK(b.dmin == 0);
    for (int j = 0; j < 4; j++) {
        CHECK(b.scales[j] == 255);
        CHECK(b.scales[j + 4] == 0);
        CHECK(b.scales[j + 8] == 15);
    }
    for (int j = 0; j < QK_K/2; j++) {
        const int v = j % 16;
        CHECK_MSG(b.qs[j] == (uint8_t)(v | (v << 4)), "qs[%d] = %d", j, b.qs[j]);
    }
}

// Q8_K of x[j] = j - 127 (j < 255), x[255] = 0: the value of largest
// magnitude is -127, so iscale = -127/-127 = 1, the codes are the values
// and d = 1; each group sum is the sum of its values.
static void test_q8_K_bytes(void) {
    float x[QK_K];
    for (int j = 0; j < QK_K; j++) {
        x[j] = j < 255 ? (float)(j - 127) : 0.0f;
    }
    block_q8_K b;
    quantize_row_q8_K_ref(x, &b, QK_K);
    CHECK(b.d == 1.0f);
    for (int j = 0; j < QK_K; j++) {
        CHECK(b.qs[j] == (int8_t) x[j]);
    }
    for (int g = 0; g < QK_K/16; g++) {
        int s = 0;
        for (int i = 0; i < 16; i++) {
            s += (int) x[16*g + i];
        }
        CHECK(b.bsums[g] == s);
    }
    // an all-zero block is all zero
    memset(x, 0, sizeof(x));
    memset(&b, 0x5a, sizeof(b));
    quantize_row_q8_K_ref(x, &b, QK_K);
    CHECK(b.d == 0.0f && b.qs[17] == 0 && b.bsums[3] == 0);
}

// MXFP4 of a block whose largest magnitude is 6: floor(log2 6) = 2, so
// e = 2 - 2 + 127 = 127 and the step is 2^(127-128) = 0.5; the levels are
// 0.5 * {0, 1, 2, 3, 4, 6, 8, 12} and their negatives, so 6 is code 7, -3
// code 13, 1 code 2, 0.5 code 1, 0.25 (a tie of 0 and 0.5) code 0 (the first
// of the nearest), 0 code 0, -0.75 (a tie of -0.5 and -1) code 9.
static void test_mxfp4_bytes(void) {
    float x[32] = { 0 };
    const float v[7] = { 6.0f, -3.0f, 1.0f, 0.5f, 0.25f, 0.0f, -0.75f };
    const int   c[7] = { 7, 13, 2, 1, 0, 0, 9 };
    for (int j = 0; j < 7; j++) {
        x[j] = v[j];
        x[16 + j] = v[6 - j];
    }
    block_mxfp4 b;
    quantize_row_mxfp4_ref(x, &b, 32);
    CHECK(b.e == 127);
    for (int j = 0; j < 16; j++) {
        const int lo = j < 7 ? c[j] : 0, hi = j < 7 ? c[6 - j] : 0;
        CHECK_MSG(b.qs[j] == (uint8_t)(lo | (hi << 4)), "mxfp4 qs[%d] = %d", j, b.qs[j]);
    }
}

// IQ4_NL of x[j] = 0.5 * table[j % 16]: the value of largest magnitude is
// 0.5 * -127, so the first scale is 0.5, every value is a table level times
// it (codes j % 16), and the weighted least-squares refit gives 0.5 exactly
// (each x is q/2, a power-of-two multiple).
static void test_iq4_nl_bytes(void) {
    const int8_t table[16] = { -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113 };
    float x[32];
    for (int j = 0; j < 32; j++) {
        x[j] = 0.5f * (float) table[j % 16];
    }
    block_iq4_nl b;
    quantize_row_iq4_nl_ref(x, &b, 32);
    CHECK(b.d == half_bits(0.5f));
    for (int j = 0; j < 16; j++) {
        CHECK(b.qs[j] == (uint8_t)(j | (j << 4)));
    }
    float y[32];
    dequantize_row_iq4_nl(&b, y, 32);
    CHECK(memcmp(x, y, sizeof(x)) == 0);
}

// ternary inputs (2 * {-1, 0, 1}) come back exactly; TQ2_0 stores value
// 128h + 32n + m + 1 at bits 2n of qs[32h + m]
static void test_ternary_bytes(void) {
    float x[QK_K], y[QK_K];
    for (int p = 0; p < QK_K; p++) {
        x[p] = 2.0f * (float)((p * 7 % 3) - 1);
    }
    block_tq2_0 b2;
    quantize_row_tq2_0_ref(x, &b2, QK_K);
    CHECK(b2.d == half_bits(2.0f));
    for (int h = 0; h < 2; h++) {
        for (int m = 0; m < 32; m++) {
            unsigned want = 0;
            for (int n = 0; n < 4; n++) {
                want |= (unsigned)((128*h + 32*n + m) * 7 % 3) << (2*n);
            }
            CHECK_MSG(b2.qs[32*h + m] == want, "tq2_0 qs[%d] = %d, want %u", 32*h + m, b2.qs[32*h + m], want);
        }
    }
    dequantize_row_tq2_0(&b2, y, QK_K);
    CHECK(memcmp(x, y, sizeof(x)) == 0);
    block_tq1_0 b1;
    quantize_row_tq1_0_ref(x, &b1, QK_K);
    CHECK(b1.d == half_bits(2.0f));
    dequantize_row_tq1_0(&b1, y, QK_K);
    CHECK(memcmp(x, y, sizeof(x)) == 0);
    // the first byte holds values 0, 32, 64, 96, 128 as ceil(t * 256 / 243)
    unsigned t = 0;
    for (int n = 0; n < 5; n++) {
        t = 3*t + (unsigned)(32*n * 7 % 3);
    }
    CHECK(b1.qs[0] == (t * 256 + 242) / 243);
}

// Q1_0 of +-2 alternating: d = mean |x| = 2, a set bit for each value >= 0
// (the even ones: bytes 0x55). Q2_0 of -1, 0, 1, 2 repeated: d = absmax = 2,
// codes round(x/2) + 1 with halves away from zero: 0, 1, 2, 2 -> bits 0,
// 1 << 2, 2 << 4, 2 << 6 = 0xa4. NVFP4 of a sub-block with absmax 6: scale
// 6/6 = 1 = UE4M3 0x38 (exponent 7, mantissa 0), read as 0.5 against the
// doubled table (0, 1, 2, 3, 4, 6, 8, 12, then negated): 3 -> 6 (code 5),
// 6 -> 12 (code 7), -1 -> -2 (code 10), 0 -> code 0.
static void test_lowbit_bytes(void) {
    float x[128], y[128];
    for (int j = 0; j < 128; j++) {
        x[j] = j % 2 ? -2.0f : 2.0f;
    }
    block_q1_0 b1;
    quantize_row_q1_0_ref(x, &b1, 128);
    CHECK(b1.d == half_bits(2.0f));
    for (int i = 0; i < 16; i++) {
        CHECK(b1.qs[i] == 0x55);
    }
    dequantize_row_q1_0(&b1, y, 128);
    CHECK(memcmp(x, y, sizeof(x)) == 0);

    static const float levels[4] = { -1.0f, 0.0f, 1.0f, 2.0f };
    for (int j = 0; j < 64; j++) {
        x[j] = levels[j % 4];
    }
    block_q2_0 b2;
    quantize_row_q2_0_ref(x, &b2, 64);
    CHECK(b2.d == half_bits(2.0f));
    for (int i = 0; i < 16; i++) {
        CHECK(b2.qs[i] == 0xa4);
    }
    dequantize_row_q2_0(&b2, y, 64);
    CHECK(y[0] == -2.0f && y[1] == 0.0f && y[2] == 2.0f && y[3] == 2.0f);

    static const float nv[4] = { 3.0f, 6.0f, -1.0f, 0.0f };
    static const int codes[4] = { 5, 7, 10, 0 };
    for (int j = 0; j < 64; j++) {
        x[j] = nv[(j/4) % 4];
    }
    block_nvfp4 bn;
    quantize_row_nvfp4_ref(x, &bn, 64);
    for (int s = 0; s < 4; s++) {
        CHECK(bn.d[s] == 0x38);
        for (int j = 0; j < 8; j++) {
            const int lo = codes[((16*s + j)/4) % 4], hi = codes[((16*s + j + 8)/4) % 4];
            CHECK(bn.qs[8*s + j] == (lo | (hi << 4)));
        }
    }
    dequantize_row_nvfp4(&bn, y, 64);
    CHECK(memcmp(x, y, 64*sizeof(float)) == 0);
    CHECK(ggml_fp32_to_ue4m3(448.0f) == 0x7e && ggml_fp32_to_ue4m3(1e9f) == 0x7e && ggml_fp32_to_ue4m3(-1.0f) == 0);
    CHECK(ggml_ue4m3_to_fp32_half(0x7f) == 0.0f && ggml_ue4m3_to_fp32_half(0x01) == 0.5f/512);
}

// hand-built blocks, decoded with the layout of ggml-common.h spelled out
static void test_dequantize_layouts(void) {
    float y[QK_K];

    // Q6_K: value p = d * scale[p/16] * (code - 32); code p is
    // ql nibble + 16 * (2 bits of qh), with the positions of the header
    block_q6_K b6;
    for (int i = 0; i < QK_K/2; i++) b6.ql[i] = (uint8_t)(i * 7 + 3);
    for (int i = 0; i < QK_K/4; i++) b6.qh[i] = (uint8_t)(i * 13 + 1);
    for (int i = 0; i < QK_K/16; i++) b6.scales[i] = (int8_t)(i * 9 - 70);
    b6.d = half_bits(0.5f);
    dequantize_row_q6_K(&b6, y, QK_K);
    for (int p = 0; p < QK_K; p++) {
        const int h = p / 128, s = (p % 128) / 32, l = p % 32;
        const int lo = (b6.ql[64*h + 32*(s % 2) + l] >> (s < 2 ? 0 : 4)) & 15;
        const int hi = (b6.qh[32*h + l] >> (2*s)) & 3;
        const double want = 0.5 * b6.scales[p/16] * (lo + 16*hi - 32);
        CHECK_MSG(y[p] == (float) want, "q6_K value %d: %g, want %g", p, y[p], want);
    }

    // Q2_K: value p = d * (scale & 15) * code - dmin * (scale >> 4), group p/16
    block_q2_K b2;
    for (int i = 0; i < QK_K/4; i++) b2.qs[i] = (uint8_t)(i * 29 + 5);
    for (int i = 0; i < QK_K/16; i++) b2.scales[i] = (uint8_t)(i * 37 + 11);
    b2.d = half_bits(0.25f);
    b2.dmin = half_bits(0.125f);
    dequantize_row_q2_K(&b2, y, QK_K);
    for (int p = 0; p < QK_K; p++) {
        const int code = (b2.qs[32*(p/128) + p%32] >> (2*((p%128)/32))) & 3;
        const int sc = b2.scales[p/16];
        const double want = 0.25 * (sc & 15) * code - 0.125 * (sc >> 4);
        CHECK_MSG(y[p] == (float) want, "q2_K value %d: %g, want %g", p, y[p], want);
    }

    // Q5_K: sub-block j of 32 has scale and min from the 12 bytes as in the
    // header; code = nibble (low for even j, high for odd) + 16 * bit j of qh[l]
    block_q5_K b5;
    for (int i = 0; i < QK_K/2; i++) b5.qs[i] = (uint8_t)(i * 11 + 2);
    for (int i = 0; i < QK_K/8; i++) b5.qh[i] = (uint8_t)(i * 53 + 7);
    for (int i = 0; i < K_SCALE_SIZE; i++) b5.scales[i] = (uint8_t)(i * 71 + 13);
    b5.d = half_bits(0.5f);
    b5.dmin = half_bits(2.0f);
    dequantize_row_q5_K(&b5, y, QK_K);
    for (int p = 0; p < QK_K; p++) {
        const int j = p / 32, l = p % 32;
        int sc, m;
        if (j < 4) {
            sc = b5.scales[j] & 63;
            m  = b5.scales[j + 4] & 63;
        } else {
            sc = (b5.scales[j + 4] & 15) | ((b5.scales[j - 4] >> 6) << 4);
            m  = (b5.scales[j + 4] >> 4) | ((b5.scales[j] >> 6) << 4);
        }
        const int nib = j % 2 ? b5.qs[32*(j/2) + l] >> 4 : b5.qs[32*(j/2) + l] & 15;
        const int code = nib + 16 * ((b5.qh[l] >> j) & 1);
        const double want = 0.5 * sc * code - 2.0 * m;
        CHECK_MSG(y[p] == (float) want, "q5_K value %d: %g, want %g", p, y[p], want);
    }
}

//
// round trips
//

// relative RMS error bound of each type on gaussian rows (a few times what
// upstream's formats reach: about 0.36, 0.18, 0.09, 0.045, 0.022)
static double rms_bound(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_Q2_K: return 0.50;
        case GGML_TYPE_Q3_K: return 0.26;
        case GGML_TYPE_Q4_K: return 0.13;
        case GGML_TYPE_Q5_K: return 0.065;
        case GGML_TYPE_IQ4_NL:
        case GGML_TYPE_IQ4_XS: return 0.13;
        case GGML_TYPE_MXFP4:  return 0.25;
        case GGML_TYPE_TQ1_0:
        case GGML_TYPE_TQ2_0:  return 0.9; // -1, 0, 1 times the absmax: little survives of gaussian data
        case GGML_TYPE_Q1_0:   return 0.65; // sign times mean |x|: sqrt(1 - 2/pi) = 0.60 for gaussian data
        case GGML_TYPE_Q2_0:   return 0.9;  // steps of the absmax
        case GGML_TYPE_NVFP4:  return 0.25;
        default:             return 0.035;
    }
}

static void test_round_trips(void) {
    enum { NR = 64, NPR = 3*QK_K };
    float * x  = malloc(sizeof(float) * NR * NPR);
    float * y  = malloc(sizeof(float) * NR * NPR);
    float * im = malloc(sizeof(float) * NPR);
    char  * q  = malloc(NR * ggml_row_size(GGML_TYPE_Q6_K, NPR) * 2);
    for (int i = 0; i < NR*NPR; i++) {
        x[i] = rnd_gauss();
    }
    for (int i = 0; i < NPR; i++) {
        im[i] = (float)(rnd_uniform() < 0.25 ? 20.0 : 0.5 + rnd_uniform());
    }
    for (int ti = 0; ti < N_K_TYPES; ti++) {
        const enum ggml_type t = k_types[ti];
        const size_t rs = ggml_row_size(t, NPR);
        double werr[2] = { 0, 0 };
        for (int with_im = 0; with_im < 2; with_im++) {
            const size_t got = ggml_quantize_chunk(t, x, q, 0, NR, NPR, with_im ? im : NULL);
            CHECK(got == NR * rs);
            CHECK(ggml_validate_row_data(t, q, got));
            ggml_get_type_traits(t)->to_float(q, y, NR*NPR);
            double e2 = 0, x2 = 0;
            for (int i = 0; i < NR*NPR; i++) {
                const double d = (double) y[i] - x[i];
                e2 += d*d;
                x2 += (double) x[i]*x[i];
                werr[with_im] += im[i % NPR] * d*d;
            }
            const double rel = sqrt(e2 / x2);
            CHECK_MSG(rel < rms_bound(t), "%s imatrix %d: relative rms error %.4f", ggml_type_name(t), with_im, rel);
        }
        // the importance matrix lowers the error where it is weighted (mxfp4 ignores it)
        const bool ignores_imatrix = t == GGML_TYPE_MXFP4 || t == GGML_TYPE_TQ1_0 || t == GGML_TYPE_TQ2_0 ||
                                     t == GGML_TYPE_Q1_0 || t == GGML_TYPE_Q2_0 || t == GGML_TYPE_NVFP4;
        CHECK_MSG(ignores_imatrix ? werr[1] == werr[0] : werr[1] < werr[0], "%s: weighted error %.4g with imatrix, %.4g without",
                  ggml_type_name(t), werr[1], werr[0]);

        // rows of zeros decode to zeros; a constant row to about that constant
        for (int kind = 0; kind < 2; kind++) {
            const float c = kind == 0 ? 0.0f : -3.25f;
            for (int i = 0; i < NPR; i++) {
                x[i] = c;
            }
            ggml_quantize_chunk(t, x, q, 0, 1, NPR, NULL);
            ggml_get_type_traits(t)->to_float(q, y, NPR);
            const float tol = t == GGML_TYPE_MXFP4 || t == GGML_TYPE_NVFP4 ? 0.1f : 0.02f; // fp4: levels 3 and 4 around 3.25 at step 0.25
            for (int i = 0; i < NPR; i++) {
                CHECK_MSG(fabsf(y[i] - c) <= tol * fabsf(c), "%s constant %g: value %d is %g", ggml_type_name(t), c, i, y[i]);
                if (fabsf(y[i] - c) > tol * fabsf(c)) {
                    break;
                }
            }
        }
        for (int i = 0; i < NR*NPR; i++) {
            x[i] = rnd_gauss();
        }
    }
    free(x); free(y); free(im); free(q);
}

//
// row validation
//

struct log_count {
    int errors;
};

static void count_log(enum ggml_log_level level, const char * text, void * user) {
    (void) text;
    if (level == GGML_LOG_LEVEL_ERROR) {
        ((struct log_count *) user)->errors++;
    }
}

static void test_validate(void) {
    struct log_count c = { 0 };
    ggml_log_set(count_log, &c);
    static const struct { enum ggml_type type; size_t off; } halves[] = {
        { GGML_TYPE_Q2_K, offsetof(block_q2_K, d) },    { GGML_TYPE_Q2_K, offsetof(block_q2_K, dmin) },
        { GGML_TYPE_Q3_K, offsetof(block_q3_K, d) },
        { GGML_TYPE_Q4_K, offsetof(block_q4_K, d) },    { GGML_TYPE_Q4_K, offsetof(block_q4_K, dmin) },
        { GGML_TYPE_Q5_K, offsetof(block_q5_K, d) },    { GGML_TYPE_Q5_K, offsetof(block_q5_K, dmin) },
        { GGML_TYPE_Q6_K, offsetof(block_q6_K, d) },
        { GGML_TYPE_IQ4_NL, offsetof(block_iq4_nl, d) }, { GGML_TYPE_IQ4_XS, offsetof(block_iq4_xs, d) },
        { GGML_TYPE_TQ1_0, offsetof(block_tq1_0, d) },   { GGML_TYPE_TQ2_0, offsetof(block_tq2_0, d) },
    };
    uint8_t buf[3 * sizeof(block_q8_K)];
    for (int i = 0; i < (int)(sizeof(halves)/sizeof(halves[0])); i++) {
        const enum ggml_type t = halves[i].type;
        const size_t bs = ggml_type_size(t);
        for (int bad = 0; bad < 2; bad++) {
            memset(buf, 0, sizeof(buf));
            CHECK(ggml_validate_row_data(t, buf, 3*bs));
            const uint16_t h = bad ? 0x7e00 : 0x7c00; // nan, inf
            memcpy(buf + 2*bs + halves[i].off, &h, sizeof(h));
            c.errors = 0;
            CHECK_MSG(!ggml_validate_row_data(t, buf, 3*bs) && c.errors == 1, "%s: non-finite half at %zu not found",
                      ggml_type_name(t), halves[i].off);
            // other bytes are codes: any value is valid
            memset(buf, 0xff, sizeof(buf));
            for (size_t b = 0; b < 3; b++) {
                const uint16_t one = 0x3c00;
                memcpy(buf + b*bs + halves[i].off, &one, sizeof(one));
                if (t == GGML_TYPE_Q2_K || t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q5_K) {
                    const size_t other = halves[i].off ^ 2; // d and dmin are adjacent halves
                    memcpy(buf + b*bs + other, &one, sizeof(one));
                }
            }
            c.errors = 0;
            CHECK(ggml_validate_row_data(t, buf, 3*bs) && c.errors == 0);
        }
        c.errors = 0;
        CHECK(!ggml_validate_row_data(t, buf, 3*bs - 1) && c.errors == 1);
    }
    // MXFP4: the exponent 0xff is NaN
    memset(buf, 0, sizeof(buf));
    CHECK(ggml_validate_row_data(GGML_TYPE_MXFP4, buf, 3*sizeof(block_mxfp4)));
    buf[2*sizeof(block_mxfp4)] = 0xff;
    c.errors = 0;
    CHECK(!ggml_validate_row_data(GGML_TYPE_MXFP4, buf, 3*sizeof(block_mxfp4)) && c.errors == 1);

    // Q8_K: an fp32 scale
    memset(buf, 0, sizeof(buf));
    const float nan = NAN;
    memcpy(buf + sizeof(block_q8_K) + offsetof(block_q8_K, d), &nan, sizeof(nan));
    c.errors = 0;
    CHECK(!ggml_validate_row_data(GGML_TYPE_Q8_K, buf, sizeof(buf)) && c.errors == 1);
    ggml_log_set(NULL, NULL);
}

//
// matrix products on the CPU
//

// dst[c][r] of w (nr rows of k values of type t) times the columns x, with
// both kernel families, against double sums over the dequantized weights and
// the Q8_K activations the product meets. extreme: weights alternating 0 and
// 1 (every code at an end of its range, the largest scales) against
// activations of -1 (Q8_K codes of -128): the integer sums at their largest
static void check_mul_mat_data(enum ggml_type t, int64_t k, int64_t nr, int64_t nc, bool strided, bool extreme) {
    struct ggml_init_params ip = { 64*1024*1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, t, k, nr);
    // strided: every other column of a wider tensor
    struct ggml_tensor * xs = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, strided ? 2*nc : nc);
    struct ggml_tensor * x = strided ? ggml_view_2d(ctx, xs, k, nc, 2*xs->nb[1], 0) : xs;

    float * wf = malloc(sizeof(float) * (size_t)(k * nr));
    for (int64_t i = 0; i < k*nr; i++) {
        wf[i] = extreme ? (float)((i + i/k) % 2) : rnd_gauss();
    }
    ggml_quantize_chunk(t, wf, w->data, 0, nr, k, NULL);
    ggml_get_type_traits(t)->to_float(w->data, wf, k*nr);
    for (int64_t i = 0; i < ggml_nelements(xs); i++) {
        ((float *) xs->data)[i] = extreme ? -1.0f : rnd_gauss();
    }

    struct ggml_tensor * out = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);

    // the activations as the product meets them: Q8_K or Q8_0 rows
    const bool act_k = ggml_get_type_traits_cpu(t)->vec_dot_type == GGML_TYPE_Q8_K;
    void (*act_quantize)(const float *, void *, int64_t)   = act_k ? quantize_row_q8_K_ref : quantize_row_q8_0_ref;
    void (*act_dequantize)(const void *, float *, int64_t) = act_k ? dequantize_row_q8_K : dequantize_row_q8_0;
    float * xq = malloc(sizeof(float) * (size_t) k);
    void  * yq = malloc(sizeof(block_q8_K) * (size_t)(k / QK_K + 1));
    float * first = malloc(sizeof(float) * (size_t)(nr * nc));
    for (int run = 0; run < 4; run++) {
        const bool use_ref = run >= 2;
        const int  nth = run % 2 + 1;
        struct ggml_cplan plan = ggml_graph_plan(gf, nth, NULL);
        plan.use_ref = use_ref;
        void * work = malloc(plan.work_size + 1);
        plan.work_data = work;
        CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
        free(work);
        double worst = 0;
        for (int64_t c = 0; c < nc; c++) {
            const float * xc = (const float *)((const char *) x->data + c*x->nb[1]);
            act_quantize(xc, yq, k);
            act_dequantize(yq, xq, k);
            for (int64_t r = 0; r < nr; r++) {
                double ref = 0, mag = 0;
                for (int64_t i = 0; i < k; i++) {
                    ref += (double) wf[r*k + i] * xq[i];
                    mag += fabs((double) wf[r*k + i] * xq[i]);
                }
                const float got = ((const float *) out->data)[c*nr + r];
                // float sums of integer block sums: a few units of the last place of the magnitude
                const double e = fabs(got - ref) / (mag * 4e-6 + 1e-30);
                worst = e > worst ? e : worst;
                if (nth == 2) {
                    CHECK(got == first[c*nr + r]);
                } else {
                    first[c*nr + r] = got;
                }
            }
        }
        CHECK_MSG(worst <= 1.0, "%s k=%lld nr=%lld nc=%lld%s%s %s: error %.3g of the tolerance", ggml_type_name(t),
                  (long long) k, (long long) nr, (long long) nc, strided ? " strided" : "", extreme ? " extreme" : "",
                  use_ref ? "portable" : "vector", worst);
    }

    // the traits' vec_dot on one row
    const struct ggml_type_traits_cpu * tc = ggml_get_type_traits_cpu(t);
    CHECK(tc->vec_dot_type == (act_k ? GGML_TYPE_Q8_K : GGML_TYPE_Q8_0));
    act_quantize((const float *) x->data, yq, k);
    act_dequantize(yq, xq, k);
    float s = 0;
    tc->vec_dot((int) k, &s, 0, w->data, 0, yq, 0, 1);
    double ref = 0, mag = 0;
    for (int64_t i = 0; i < k; i++) {
        ref += (double) wf[i] * xq[i];
        mag += fabs((double) wf[i] * xq[i]);
    }
    CHECK_NEAR(s, ref, mag * 4e-6);

    free(first); free(yq); free(xq); free(wf);
    ggml_free(ctx);
}

static void check_mul_mat(enum ggml_type t, int64_t k, int64_t nr, int64_t nc, bool strided) {
    check_mul_mat_data(t, k, nr, nc, strided, false);
}

// MUL_MAT_ID: n_tok tokens, each using 2 of 3 experts (ids chosen so that
// the experts get many, a few and one column: both kernel families run);
// against double sums over the dequantized experts and the activations as
// the product meets them
static void check_mul_mat_id(enum ggml_type t, int64_t k, int64_t nr, int64_t n_tok) {
    const int64_t n_as = 3, n_used = 2;
    struct ggml_init_params ip = { 64*1024*1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * w   = ggml_new_tensor_3d(ctx, t, k, nr, n_as);
    struct ggml_tensor * x   = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, k, 1, n_tok);
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_used, n_tok);
    float * wf = malloc(sizeof(float) * (size_t)(k * nr * n_as));
    for (int64_t i = 0; i < k*nr*n_as; i++) {
        wf[i] = rnd_gauss();
    }
    ggml_quantize_chunk(t, wf, w->data, 0, nr*n_as, k, NULL);
    ggml_get_type_traits(t)->to_float(w->data, wf, k*nr*n_as);
    for (int64_t i = 0; i < ggml_nelements(x); i++) {
        ((float *) x->data)[i] = rnd_gauss();
    }
    for (int64_t tk = 0; tk < n_tok; tk++) {
        // expert 0 every token, expert 2 once, expert 1 otherwise
        ((int32_t *) ids->data)[2*tk]     = tk == 3 ? 2 : 1;
        ((int32_t *) ids->data)[2*tk + 1] = 0;
    }
    struct ggml_tensor * out = ggml_mul_mat_id(ctx, w, x, ids);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);

    const bool act_k = ggml_get_type_traits_cpu(t)->vec_dot_type == GGML_TYPE_Q8_K;
    void (*act_quantize)(const float *, void *, int64_t)   = act_k ? quantize_row_q8_K_ref : quantize_row_q8_0_ref;
    void (*act_dequantize)(const void *, float *, int64_t) = act_k ? dequantize_row_q8_K : dequantize_row_q8_0;
    float * xq = malloc(sizeof(float) * (size_t) k);
    void  * yq = malloc(sizeof(block_q8_K) * (size_t)(k / QK_K + 1));
    for (int run = 0; run < 2; run++) {
        struct ggml_cplan plan = ggml_graph_plan(gf, 2, NULL);
        plan.use_ref = run == 1;
        void * work = malloc(plan.work_size + 1);
        plan.work_data = work;
        CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
        free(work);
        double worst = 0;
        for (int64_t tk = 0; tk < n_tok; tk++) {
            act_quantize((const float *) x->data + tk*k, yq, k);
            act_dequantize(yq, xq, k);
            for (int64_t u = 0; u < n_used; u++) {
                const int64_t e = ((const int32_t *) ids->data)[2*tk + u];
                for (int64_t r = 0; r < nr; r++) {
                    const float * wr = wf + (e*nr + r)*k;
                    double ref = 0, mag = 0;
                    for (int64_t i = 0; i < k; i++) {
                        ref += (double) wr[i] * xq[i];
                        mag += fabs((double) wr[i] * xq[i]);
                    }
                    const float got = *(const float *)((const char *) out->data + r*out->nb[0] + u*out->nb[1] + tk*out->nb[2]);
                    const double err = fabs(got - ref) / (mag * 4e-6 + 1e-30);
                    worst = err > worst ? err : worst;
                }
            }
        }
        CHECK_MSG(worst <= 1.0, "mul_mat_id %s k=%lld nr=%lld tokens=%lld %s: error %.3g of the tolerance", ggml_type_name(t),
                  (long long) k, (long long) nr, (long long) n_tok, run == 1 ? "portable" : "vector", worst);
    }
    free(yq); free(xq); free(wf);
    ggml_free(ctx);
}

// a column's products do not depend on the columns computed with it: the
// row kernels meet up to 4 columns per pass and the generation path one, and
// each row and column must get the same bits either way (generation and a
// batch of a few tokens agree; a fused pair of products equals the two)
static void check_columns_alone(enum ggml_type t, int64_t k, int64_t nr, int64_t nc) {
    struct ggml_init_params ip = { 16*1024*1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, t, k, nr);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, nc);
    float * wf = malloc(sizeof(float) * (size_t)(k * nr));
    for (int64_t i = 0; i < k*nr; i++) {
        wf[i] = rnd_gauss();
    }
    ggml_quantize_chunk(t, wf, w->data, 0, nr, k, NULL);
    for (int64_t i = 0; i < k*nc; i++) {
        ((float *) x->data)[i] = rnd_gauss();
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    struct ggml_tensor * all = ggml_mul_mat(ctx, w, x);
    ggml_build_forward_expand(gf, all);
    struct ggml_tensor ** one = malloc(sizeof(*one) * (size_t) nc);
    for (int64_t c = 0; c < nc; c++) {
        one[c] = ggml_mul_mat(ctx, w, ggml_view_1d(ctx, x, k, c*x->nb[1]));
        ggml_build_forward_expand(gf, one[c]);
    }
    for (int nth = 1; nth <= 2; nth++) {
        struct ggml_cplan plan = ggml_graph_plan(gf, nth, NULL);
        void * work = malloc(plan.work_size + 1);
        plan.work_data = work;
        CHECK(ggml_graph_compute(gf, &plan) == GGML_STATUS_SUCCESS);
        free(work);
        for (int64_t c = 0; c < nc; c++) {
            const float * a = (const float *) all->data + c*nr;
            const float * b = (const float *) one[c]->data;
            CHECK_MSG(memcmp(a, b, sizeof(float) * (size_t) nr) == 0, "%s k=%lld nr=%lld: column %lld of %lld differs alone (%d threads)",
                      ggml_type_name(t), (long long) k, (long long) nr, (long long) c, (long long) nc, nth);
        }
    }
    free(one);
    free(wf);
    ggml_free(ctx);
}

static void test_mul_mat(void) {
    for (int ti = 0; ti < N_K_TYPES; ti++) {
        const enum ggml_type t = k_types[ti];
        check_mul_mat(t, QK_K,   1,  1, false);
        check_mul_mat(t, 3*QK_K, 7,  1, false);
        check_mul_mat(t, 2*QK_K, 13, 3, true);
        check_mul_mat(t, 4*QK_K, 33, 9, false);
        // the row kernels meet 1..4 rows and 1..4 columns per pass: row
        // counts that are no multiple of those, one superblock, 2, 4, 5 columns
        check_mul_mat(t, QK_K,   9,  2, false);
        check_mul_mat(t, 2*QK_K, 38, 4, true);
        check_mul_mat(t, QK_K,   17, 5, false);
        check_mul_mat_data(t, 2*QK_K, 7, 1, false, true);
        check_mul_mat_data(t, QK_K,   6, 3, false, true);
        // many columns: the tile kernels for the types with a q8 panel form
        // (edge tiles in rows and columns, a partial last superblock of lanes)
        check_mul_mat(t, 5*QK_K, 19, 7, true);
        check_mul_mat(t, QK_K,   6,  16, false);
        if (t == GGML_TYPE_IQ4_NL || t == GGML_TYPE_MXFP4) {
            check_mul_mat(t, 11*32, 9, 8, true);
        }
        // one superblock, rows not a multiple of any tile, an odd column count
        check_mul_mat(t, QK_K, 21, 9, true);
        if (t == GGML_TYPE_Q1_0 || t == GGML_TYPE_Q2_0 || t == GGML_TYPE_NVFP4 || t == GGML_TYPE_TQ1_0 || t == GGML_TYPE_TQ2_0) {
            // 1..9 columns: one block decode shared by up to 8 columns, then the rest
            for (int nc = 1; nc <= 9; nc++) {
                check_mul_mat(t, QK_K, 3, nc, nc % 3 == 0);
            }
            if (ggml_blck_size(t) < QK_K) {
                check_mul_mat(t, 3*128, 5, 2, false); // Q1_0: an odd count of 128-value blocks
            }
        }
        check_mul_mat_id(t, 2*QK_K, 11, 20);
        for (int64_t nc = 2; nc <= 5; nc++) {
            check_columns_alone(t, 3*QK_K, 9 + 2*nc, nc);
        }
        // GET_ROWS goes through to_float: one row picked twice
        struct ggml_init_params ip = { 4*1024*1024, NULL, false };
        struct ggml_context * ctx = ggml_init(ip);
        struct ggml_tensor * w = ggml_new_tensor_2d(ctx, t, 2*QK_K, 3);
        struct ggml_tensor * ids = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 2);
        float wf[3*2*QK_K], want[2*QK_K];
        for (int i = 0; i < 3*2*QK_K; i++) {
            wf[i] = rnd_gauss();
        }
        ggml_quantize_chunk(t, wf, w->data, 0, 3, 2*QK_K, NULL);
        ((int32_t *) ids->data)[0] = 2;
        ((int32_t *) ids->data)[1] = 2;
        struct ggml_tensor * g = ggml_get_rows(ctx, w, ids);
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, g);
        CHECK(ggml_graph_compute_with_ctx(ctx, gf, 1) == GGML_STATUS_SUCCESS);
        ggml_get_type_traits(t)->to_float((const char *) w->data + 2*w->nb[1], want, 2*QK_K);
        CHECK(memcmp(g->data, want, sizeof(want)) == 0);
        CHECK(memcmp((const char *) g->data + g->nb[1], want, sizeof(want)) == 0);
        ggml_free(ctx);
    }
}

// Q1_0, Q2_0, NVFP4, TQ1_0, TQ2_0 blocks of random bytes through the traits' vec_dot
// against a double sum over their dequantized values; NVFP4 once with each
// UE4M3 scale byte in all its sub-blocks (subnormals, 0x7f and bit 7 set
// included: a scale's error shows against the sum of its own products)
static void test_lowbit_random_blocks(void) {
    enum { K = 512 };
    static uint8_t w[K];           // more than the bytes of K values of any of the three
    static block_q8_K yq[K/QK_K];  // more than the bytes of K/32 Q8_0 blocks
    static float x[K], wf[K], xq[K];
    const enum ggml_type types[] = { GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_NVFP4, GGML_TYPE_TQ1_0, GGML_TYPE_TQ2_0 };
    for (int ti = 0; ti < 5; ti++) {
        const enum ggml_type t = types[ti];
        const bool act_k = ggml_get_type_traits_cpu(t)->vec_dot_type == GGML_TYPE_Q8_K;
        const size_t bs = ggml_type_size(t);
        const int64_t nb = K / ggml_blck_size(t);
        const int trials = t == GGML_TYPE_NVFP4 ? 256 : 16;
        for (int trial = 0; trial < trials; trial++) {
            for (size_t i = 0; i < (size_t) nb*bs; i++) {
                w[i] = (uint8_t) (rnd_uniform() * 256.0);
            }
            for (int64_t b = 0; b < nb; b++) {
                if (t == GGML_TYPE_NVFP4) {
                    for (int j = 0; j < 4; j++) {
                        ((block_nvfp4 *) w)[b].d[j] = (uint8_t) trial;
                    }
                } else {
                    // the fp16 scale: first in Q1_0 and Q2_0, last in the ternary blocks
                    const ggml_fp16_t d = ggml_fp32_to_fp16((float) (0.01 + rnd_uniform()));
                    memcpy(w + b*bs + (act_k ? bs - sizeof(d) : 0), &d, sizeof(d));
                }
            }
            for (int i = 0; i < K; i++) {
                x[i] = rnd_gauss();
            }
            if (act_k) {
                quantize_row_q8_K_ref(x, yq, K);
                dequantize_row_q8_K(yq, xq, K);
            } else {
                quantize_row_q8_0_ref(x, yq, K);
                dequantize_row_q8_0(yq, xq, K);
            }
            tt_check_vec_dot(t, K, w, yq, xq, wf);
        }
    }
}

int main(void) {
    test_q4_K_bytes();
    test_q8_K_bytes();
    test_mxfp4_bytes();
    test_iq4_nl_bytes();
    test_ternary_bytes();
    test_lowbit_bytes();
    test_dequantize_layouts();
    test_round_trips();
    test_validate();
    test_mul_mat();
    test_lowbit_random_blocks();
    return TEST_RESULT();
}
