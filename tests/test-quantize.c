// test-quantize: the block formats q4_0, q4_1, q5_0, q5_1, q8_0, q8_1.
//
//   - blocks whose bytes were computed by hand (the arithmetic is in the
//     comments) must come out of the reference quantizers byte for byte;
//   - hand-made blocks dequantize to the values the format defines;
//   - on random rows the round-trip error stays within the bound the format
//     allows: half a step, plus the fp16 rounding of the scale and minimum,
//     plus the clipped end of the symmetric formats;
//   - with an importance matrix, the symmetric formats store the weighted
//     least-squares scale of their codes (upstream's fit), and all do better
//     than the reference quantizer under the weighted error on random data;
//   - ggml_quantize_chunk writes only its rows, at the right offset;
//   - ggml_validate_row_data accepts good rows and rejects bad ones with one
//     log line; unsupported types abort with a message.

#include "ggml.h"
#include "ggml-quants.h"
#include "testing.h"

#include <float.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#    include <signal.h>
#    include <sys/wait.h>
#    include <unistd.h>
#    define HAVE_FORK 1
#endif

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;

static uint32_t rand_u32(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

static float rand_uniform(void) { // [0, 1)
    return (float)(rand_u32() >> 8) * (1.0f / 16777216.0f);
}

static float rand_normal(void) {
    const float u = rand_uniform() + 1e-7f;
    const float v = rand_uniform();
    return sqrtf(-2.0f * logf(u)) * cosf(6.28318531f * v);
}

// value of an fp16 bit pattern from the definition of the format (finite only)
static double fp16_value(uint16_t h) {
    const int e = (h >> 10) & 0x1f;
    const int m = h & 0x3ff;
    const double v = e == 0 ? ldexp(m, -24) : ldexp(1.0 + m/1024.0, e - 15);
    return (h & 0x8000) ? -v : v;
}

static uint16_t read_u16(const uint8_t * p) { // the blocks are host order, as upstream writes them
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

static void check_bytes(const char * what, const uint8_t * got, const uint8_t * expected, size_t n) {
    size_t first = n;
    for (size_t i = 0; i < n; i++) {
        if (got[i] != expected[i]) {
            first = i;
            break;
        }
    }
    CHECK_MSG(first == n, "%s: byte %zu is 0x%02x, expected 0x%02x", what, first,
              first < n ? got[first] : 0, first < n ? expected[first] : 0);
}

//
// hand-computed blocks
//
// fp16 encodings used below: 2.0 = 0x4000, 1.0 = 0x3c00, 0.5 = 0x3800,
// 0.25 = 0x3400, 0.125 = 0x3000, -0.5 = 0xb800, -3.0 = 0xc200,
// -2.5 = 0xc100, 10.0 = 0x4900, 2^-6 = 0x2400. Blocks are stored host order;
// the bytes are written for a little-endian host and converted (blocks_le_to_host).
//

static bool host_is_little_endian(void) {
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

// The bytes below are written as on a little-endian host; on a big-endian one
// the n_halves fp16 fields at the start of each block and the 32-bit qh field
// at qh_offset (if >= 0) are reversed in place, giving the host-order block.
static void blocks_le_to_host(uint8_t * b, size_t n_blocks, size_t block_size, int n_halves, int qh_offset) {
    if (host_is_little_endian()) {
        return;
    }
    for (size_t i = 0; i < n_blocks; i++, b += block_size) {
        for (int k = 0; k < n_halves; k++) {
            const uint8_t t = b[2*k];
            b[2*k]     = b[2*k + 1];
            b[2*k + 1] = t;
        }
        if (qh_offset >= 0) {
            uint8_t * q = b + qh_offset;
            uint8_t t = q[0]; q[0] = q[3]; q[3] = t;
            t = q[1]; q[1] = q[2]; q[2] = t;
        }
    }
}

static void test_q4_0_by_hand(void) {
    float x[3*32];
    // block A: x[j] = j - 16. The largest magnitude is x[0] = -16, so
    // d = -16/-8 = 2, id = 0.5 and code(j) = min(15, trunc((j-16)*0.5 + 8.5))
    // = min(15, trunc(j/2 + 0.5)): 0,1,1,2,2,3,3,4,4,5,5,6,6,7,7,8, 8,9,9,10,10,
    // 11,11,12,12,13,13,14,14,15,15,15 (j=30: 15.5 -> 15; j=31: 16 -> clipped).
    // byte j = code(j) | code(j+16) << 4.
    for (int j = 0; j < 32; j++) {
        x[j] = (float)(j - 16);
    }
    // block B: all zero -> max = 0, d = 0/-8 = -0 (fp16 0x8000), id = 0,
    // every code trunc(8.5) = 8.
    for (int j = 0; j < 32; j++) {
        x[32 + j] = 0.0f;
    }
    // block C: x0 = 4, x1 = -1, x2 = 1, x3 = 2.5, x20 = -4, rest 0. 4 and -4 tie
    // in magnitude; the first (4) sets d = 4/-8 = -0.5, id = -2. Codes
    // trunc(-2x + 8.5): x0 0.5 -> 0, x1 10.5 -> 10, x2 6.5 -> 6, x3 3.5 -> 3,
    // x20 16.5 -> 15 (clipped), zeros 8.
    for (int j = 0; j < 32; j++) {
        x[64 + j] = 0.0f;
    }
    x[64 + 0] = 4.0f; x[64 + 1] = -1.0f; x[64 + 2] = 1.0f; x[64 + 3] = 2.5f; x[64 + 20] = -4.0f;

    uint8_t expected[3*18] = {
        0x00, 0x40, 0x80, 0x91, 0x91, 0xa2, 0xa2, 0xb3, 0xb3, 0xc4, 0xc4, 0xd5, 0xd5, 0xe6, 0xe6, 0xf7, 0xf7, 0xf8,
        0x00, 0x80, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,
        0x00, 0xb8, 0x80, 0x8a, 0x86, 0x83, 0xf8, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,
    };
    uint8_t got[sizeof(expected)];
    quantize_row_q4_0_ref(x, got, 96);
    blocks_le_to_host(expected, 3, 18, 1, -1);
    check_bytes("q4_0 by hand", got, expected, sizeof(expected));
}

static void test_q4_1_by_hand(void) {
    float x[2*32];
    // block A: min = -3, max = 4.5, d = 7.5/15 = 0.5, id = 2, m = -3.
    // code = min(15, trunc((x + 3)*2 + 0.5)):
    //   x0 = -3     -> 0.5  -> 0       x1 = 4.5  -> 15.5 -> 15
    //   x2 = -2.75  -> 1.0  -> 1 (tie rounds up)
    //   x3 = -2.875 -> 0.75 -> 0       x4 = 0    -> 6.5  -> 6
    //   x5 = 1.25   -> 9.0  -> 9 (tie) x17 = 4.25 -> 15.0 -> 15 (tie)
    //   x20 = -1    -> 4.5  -> 4       others -3 -> 0
    for (int j = 0; j < 32; j++) {
        x[j] = -3.0f;
    }
    x[1] = 4.5f; x[2] = -2.75f; x[3] = -2.875f; x[4] = 0.0f; x[5] = 1.25f; x[17] = 4.25f; x[20] = -1.0f;
    // block B: x[j] = 10 + (j%16)*0.5: min 10, max 17.5, d = 0.5, m = 10,
    // code(j) = j%16, so byte j = j | j << 4.
    for (int j = 0; j < 32; j++) {
        x[32 + j] = 10.0f + (float)(j % 16) * 0.5f;
    }
    uint8_t expected[2*20] = {
        0x00, 0x38, 0x00, 0xc2, 0x00, 0xff, 0x01, 0x00, 0x46, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x38, 0x00, 0x49, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
    };
    uint8_t got[sizeof(expected)];
    quantize_row_q4_1_ref(x, got, 64);
    blocks_le_to_host(expected, 2, 20, 2, -1);
    check_bytes("q4_1 by hand", got, expected, sizeof(expected));
}

static void test_q5_0_by_hand(void) {
    float x[2*32];
    // block A: x[j] = j - 16, max = -16, d = 1, id = 1, code = trunc(j - 16 + 16.5) = j.
    // qs[j] = (j & 15) | ((j+16) & 15) << 4 = j | j << 4; the fifth bit is set
    // for j >= 16: qh = 0xffff0000.
    for (int j = 0; j < 32; j++) {
        x[j] = (float)(j - 16);
    }
    // block B: x0 = 8, x1 = -7.75, x2 = 0.25, x3 = -0.25, rest 0. d = 8/-16 = -0.5,
    // id = -2, code = min(31, trunc(-2x + 16.5)): x0 0.5 -> 0, x1 32 -> 31
    // (clipped), x2 16 -> 16, x3 17 -> 17, zeros 16.5 -> 16.
    // low nibbles: 0, 15, 0, 1, then 0; the high nibbles (codes 16) are 0.
    // fifth bits: all but j = 0 -> qh = 0xfffffffe.
    for (int j = 0; j < 32; j++) {
        x[32 + j] = 0.0f;
    }
    x[32 + 0] = 8.0f; x[32 + 1] = -7.75f; x[32 + 2] = 0.25f; x[32 + 3] = -0.25f;
    uint8_t expected[2*22] = {
        0x00, 0x3c, 0x00, 0x00, 0xff, 0xff,
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
        0x00, 0xb8, 0xfe, 0xff, 0xff, 0xff,
        0x00, 0x0f, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    uint8_t got[sizeof(expected)];
    quantize_row_q5_0_ref(x, got, 64);
    blocks_le_to_host(expected, 2, 22, 1, 2);
    check_bytes("q5_0 by hand", got, expected, sizeof(expected));
}

static void test_q5_1_by_hand(void) {
    float x[3*32];
    // block A: x[j] = 1 + j/4: min 1, max 8.75, d = 7.75/31 = 0.25, id = 4, m = 1,
    // code = trunc(j + 0.5) = j: qs[j] = j | j << 4, qh = 0xffff0000.
    for (int j = 0; j < 32; j++) {
        x[j] = 1.0f + (float) j * 0.25f;
    }
    // block B: constant -2.5: d = 0, id = 0, m = -2.5, every code trunc(0.5) = 0.
    for (int j = 0; j < 32; j++) {
        x[32 + j] = -2.5f;
    }
    // block C: min 0, max x1 = 3.875 = 31/8, d = 0.125, id = 8, m = 0.
    // code = trunc(8x + 0.5): x1 -> 31, x2 = 0.0625 -> 1.0 -> 1 (tie),
    // x3 = x18 = 1.9375 -> 16.0 -> 16 (tie), zeros 0.
    // low nibbles: qs[1] = 15, qs[2] = 1 | (16 & 15) << 4 = 0x01, qs[3] = 0.
    // fifth bits: j = 1, 3, 18 -> qh = 0x0004000a.
    for (int j = 0; j < 32; j++) {
        x[64 + j] = 0.0f;
    }
    x[64 + 1] = 3.875f; x[64 + 2] = 0.0625f; x[64 + 3] = 1.9375f; x[64 + 18] = 1.9375f;
    uint8_t expected[3*24] = {
        0x00, 0x34, 0x00, 0x3c, 0x00, 0x00, 0xff, 0xff,
        0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff,
        0x00, 0x00, 0x00, 0xc1, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x30, 0x00, 0x00, 0x0a, 0x00, 0x04, 0x00,
        0x00, 0x0f, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    };
    uint8_t got[sizeof(expected)];
    quantize_row_q5_1_ref(x, got, 96);
    blocks_le_to_host(expected, 3, 24, 2, 4);
    check_bytes("q5_1 by hand", got, expected, sizeof(expected));
}

// block A of q8_0 and q8_1: amax = 127/64, d = (127/64)/127 = 2^-6 exactly
// (fp16 0x2400), id = 64, code = round(64x), halves away from zero:
//   x0 = -127/64 -> -127 (0x81)   x1 = 127/64 -> 127 (0x7f)
//   x2 = 2.5/64  -> 3 (tie)       x3 = -2.5/64 -> -3 (0xfd, tie)
//   x4 = 0.375/64 -> 0            x5 = 100.75/64 -> 101 (0x65)
//   x[j] = (j-16)/64 -> j - 16 for j = 6..31: -10 (0xf6) .. 15 (0x0f)
// block B: all 1.0 but x5 = -1: d = 1/127 = 2^-7 * 1.0079, whose fp16
// mantissa 1032.06 rounds to 1032: 0x2008; codes round(1*127) = 127 (0x7f), x5 -127.
static void fill_q8_blocks(float * x) {
    for (int j = 0; j < 32; j++) {
        x[j] = (float)(j - 16) / 64.0f;
    }
    x[0] = -127.0f/64; x[1] = 127.0f/64; x[2] = 2.5f/64; x[3] = -2.5f/64; x[4] = 0.375f/64; x[5] = 100.75f/64;
    for (int j = 0; j < 32; j++) {
        x[32 + j] = 1.0f;
    }
    x[32 + 5] = -1.0f;
}

static const uint8_t Q8_CODES_A[32] = {
    0x81, 0x7f, 0x03, 0xfd, 0x00, 0x65, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
};

static void q8_codes_b(uint8_t * codes) {
    memset(codes, 0x7f, 32);
    codes[5] = 0x81;
}

static void test_q8_0_by_hand(void) {
    float x[2*32];
    fill_q8_blocks(x);
    uint8_t expected[2*34] = { 0x00, 0x24 };
    memcpy(expected + 2, Q8_CODES_A, 32);
    expected[34] = 0x08;
    expected[35] = 0x20;
    q8_codes_b(expected + 36);
    uint8_t got[sizeof(expected)];
    quantize_row_q8_0_ref(x, got, 64);
    blocks_le_to_host(expected, 2, 34, 1, -1);
    check_bytes("q8_0 by hand", got, expected, sizeof(expected));
}

static void test_q8_1_by_hand(void) {
    float x[2*32];
    fill_q8_blocks(x);
    // s = fp16(d * sum(codes)).
    // block A: sum = -127 + 127 + 3 - 3 + 0 + 101 + (-10 + ... + 15 = 65) = 166,
    //          s = 166/64 = 2.59375 = 2 * 1.296875, mantissa 304: 0x4130.
    // block B: sum = 31*127 - 127 = 3810, s = 3810/127 = 30 = 16 * 1.875: 0x4f80.
    uint8_t expected[2*36] = { 0x00, 0x24, 0x30, 0x41 };
    memcpy(expected + 4, Q8_CODES_A, 32);
    expected[36] = 0x08; expected[37] = 0x20; expected[38] = 0x80; expected[39] = 0x4f;
    q8_codes_b(expected + 40);
    uint8_t got[sizeof(expected)];
    quantize_row_q8_1_ref(x, got, 64);
    blocks_le_to_host(expected, 2, 36, 2, -1);
    check_bytes("q8_1 by hand", got, expected, sizeof(expected));
}

//
// dequantization of hand-made blocks
//

static void check_values(const char * what, const float * got, const double * expected, int n) {
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if ((double) got[i] != expected[i]) {
            if (bad++ == 0) {
                fprintf(stderr, "%s: value %d is %.9g, expected %.9g\n", what, i, (double) got[i], expected[i]);
            }
        }
    }
    CHECK_MSG(bad == 0, "%s: %d values differ", what, bad);
}

static void test_dequantize_by_hand(void) {
    float  y[32];
    double e[32];

    // q4_0, d = -0.25 (0xb400), qs[j] = j | (15-j) << 4: y[j] = (j-8)*d, y[j+16] = (7-j)*d
    uint8_t q4_0[18] = { 0x00, 0xb4 };
    for (int j = 0; j < 16; j++) {
        q4_0[2 + j] = (uint8_t)(j | (15 - j) << 4);
        e[j]      = (j - 8) * -0.25;
        e[j + 16] = (7 - j) * -0.25;
    }
    blocks_le_to_host(q4_0, 1, sizeof(q4_0), 1, -1);
    dequantize_row_q4_0(q4_0, y, 32);
    check_values("dequantize q4_0", y, e, 32);

    // q4_1, d = 0.5, m = -3: y[j] = j*0.5 - 3, y[j+16] = (15-j)*0.5 - 3
    uint8_t q4_1[20] = { 0x00, 0x38, 0x00, 0xc2 };
    for (int j = 0; j < 16; j++) {
        q4_1[4 + j] = (uint8_t)(j | (15 - j) << 4);
        e[j]      = j * 0.5 - 3;
        e[j + 16] = (15 - j) * 0.5 - 3;
    }
    blocks_le_to_host(q4_1, 1, sizeof(q4_1), 2, -1);
    dequantize_row_q4_1(q4_1, y, 32);
    check_values("dequantize q4_1", y, e, 32);

    // q5_0, d = 1, qh bytes 0xaa (fifth bit of every odd j), qs[j] = j | (15-j) << 4:
    // y[j] = (j + 16*(j odd)) - 16, y[j+16] = (15 - j + 16*(j odd)) - 16
    uint8_t q5_0[22] = { 0x00, 0x3c, 0xaa, 0xaa, 0xaa, 0xaa };
    for (int j = 0; j < 16; j++) {
        q5_0[6 + j] = (uint8_t)(j | (15 - j) << 4);
        e[j]      = j + 16*(j & 1) - 16;
        e[j + 16] = 15 - j + 16*(j & 1) - 16;
    }
    blocks_le_to_host(q5_0, 1, sizeof(q5_0), 1, 2);
    dequantize_row_q5_0(q5_0, y, 32);
    check_values("dequantize q5_0", y, e, 32);

    // q5_1, d = 0.25, m = 1, qh bytes ff ff 00 00 (fifth bit of j < 16), qs[j] = j | j << 4:
    // y[j] = (16 + j)*0.25 + 1, y[j+16] = j*0.25 + 1
    uint8_t q5_1[24] = { 0x00, 0x34, 0x00, 0x3c, 0xff, 0xff, 0x00, 0x00 };
    for (int j = 0; j < 16; j++) {
        q5_1[8 + j] = (uint8_t)(j | j << 4);
        e[j]      = (16 + j) * 0.25 + 1;
        e[j + 16] = j * 0.25 + 1;
    }
    blocks_le_to_host(q5_1, 1, sizeof(q5_1), 2, 4);
    dequantize_row_q5_1(q5_1, y, 32);
    check_values("dequantize q5_1", y, e, 32);

    // q8_0, d = 2, qs[j] = 8j - 128 (two's complement): y[j] = 2*(8j - 128)
    uint8_t q8_0[34] = { 0x00, 0x40 };
    for (int j = 0; j < 32; j++) {
        q8_0[2 + j] = (uint8_t)(8*j + 128);
        e[j] = 2.0 * (8*j - 128);
    }
    blocks_le_to_host(q8_0, 1, sizeof(q8_0), 1, -1);
    dequantize_row_q8_0(q8_0, y, 32);
    check_values("dequantize q8_0", y, e, 32);

    // q8_1, d = 0.5, s ignored by the values: y[j] = 0.5*(8j - 128)
    uint8_t q8_1[36] = { 0x00, 0x38, 0x12, 0x34 };
    for (int j = 0; j < 32; j++) {
        q8_1[4 + j] = (uint8_t)(8*j + 128);
        e[j] = 0.5 * (8*j - 128);
    }
    blocks_le_to_host(q8_1, 1, sizeof(q8_1), 2, -1);
    dequantize_row_q8_1(q8_1, y, 32);
    check_values("dequantize q8_1", y, e, 32);
}

//
// round-trip error bounds on random rows
//

typedef void (*quantize_ref_fn)(const float * GGML_RESTRICT, void * GGML_RESTRICT, int64_t);
typedef void (*dequantize_fn)(const void * GGML_RESTRICT, float * GGML_RESTRICT, int64_t);

struct qtype {
    const char *    name;
    enum ggml_type  type;
    size_t          block_bytes;
    int             kind;  // 0: symmetric (q4_0, q5_0), 1: affine (q4_1, q5_1), 2: q8
    int             nmax;  // symmetric: 8 or 16; affine: 15 or 31; q8: 127
    quantize_ref_fn quantize;
    dequantize_fn   dequantize;
};

static const struct qtype QTYPES[] = {
    { "q4_0", GGML_TYPE_Q4_0, 18, 0,   8, quantize_row_q4_0_ref, dequantize_row_q4_0 },
    { "q4_1", GGML_TYPE_Q4_1, 20, 1,  15, quantize_row_q4_1_ref, dequantize_row_q4_1 },
    { "q5_0", GGML_TYPE_Q5_0, 22, 0,  16, quantize_row_q5_0_ref, dequantize_row_q5_0 },
    { "q5_1", GGML_TYPE_Q5_1, 24, 1,  31, quantize_row_q5_1_ref, dequantize_row_q5_1 },
    { "q8_0", GGML_TYPE_Q8_0, 34, 2, 127, quantize_row_q8_0_ref, dequantize_row_q8_0 },
    { "q8_1", GGML_TYPE_Q8_1, 36, 2, 127, quantize_row_q8_1_ref, dequantize_row_q8_1 },
};
enum { N_QTYPES = sizeof(QTYPES)/sizeof(QTYPES[0]) };

// the largest error rounding v to fp16 can make (half an ulp; 2^-25 for subnormals)
static double fp16_half_ulp(double v) {
    return fmax(fabs(v) * 0x1p-11, 0x1p-25) * (1 + 0x1p-20);
}

// Check one block of x against its quantized bytes q and dequantized values y;
// returns the number of violations.
static int check_block_bound(const struct qtype * t, const float * x, const uint8_t * q, const float * y) {
    double amax = 0, smax = 0, min = INFINITY, max = -INFINITY;
    for (int j = 0; j < 32; j++) {
        if (fabs(x[j]) > amax) {
            amax = fabs(x[j]);
            smax = x[j];
        }
        min = fmin(min, x[j]);
        max = fmax(max, x[j]);
    }
    const double d16  = fp16_value(read_u16(q));
    const double slop = 1e-6 * fmax(amax, 1e-30); // float arithmetic in the quantizer
    int bad = 0;

    if (t->kind == 2) {
        const double d = amax / 127;
        bad += fabs(d16 - d) > fp16_half_ulp(d);
        for (int j = 0; j < 32; j++) {
            const double bound = 0.5*d + 127*fabs(d16 - d) + slop;
            bad += fabs((double) x[j] - (double) y[j]) > bound;
        }
        if (t->type == GGML_TYPE_Q8_1) {
            // s = fp16(d * sum of codes)
            int sum = 0;
            for (int j = 0; j < 32; j++) {
                sum += (int8_t) q[4 + j];
            }
            const double s = (double) sum * fp16_value(read_u16(q)) ;
            bad += fabs(fp16_value(read_u16(q + 2)) - s) > fp16_half_ulp(s) + 127*32*fabs(d16 - d) + 32*slop;
        }
    } else if (t->kind == 0) {
        // codes -nmax .. nmax-1 in units of d = smax/-nmax; x/d lies in
        // [-nmax, nmax]; above nmax - 1/2 the value is clipped to nmax - 1
        const double d = smax / -t->nmax;
        bad += fabs(d16 - d) > fp16_half_ulp(d);
        for (int j = 0; j < 32; j++) {
            const double r      = d != 0 ? x[j] / d : 0;
            const double excess = r - (t->nmax - 0.5);
            const double bound  = (excess > 0 ? 0.5 + excess : 0.5) * fabs(d) + t->nmax*fabs(d16 - d) + slop;
            bad += fabs((double) x[j] - (double) y[j]) > bound;
        }
    } else {
        const double d   = (max - min) / t->nmax;
        const double m16 = fp16_value(read_u16(q + 2));
        bad += fabs(d16 - d)   > fp16_half_ulp(d);
        bad += fabs(m16 - min) > fp16_half_ulp(min);
        for (int j = 0; j < 32; j++) {
            const double bound = 0.5*d + t->nmax*fabs(d16 - d) + fabs(m16 - min) + slop * (1 + fabs(min)/fmax(amax, 1e-30));
            bad += fabs((double) x[j] - (double) y[j]) > bound;
        }
    }
    return bad;
}

static void fill_random_row(float * x, int64_t n, float scale) {
    for (int64_t i = 0; i < n; i++) {
        x[i] = rand_normal() * scale;
        if (rand_u32() % 37 == 0) {
            x[i] *= 8.0f; // outliers
        }
    }
}

static void test_round_trip_bounds(void) {
    const int64_t lengths[] = { 32, 64, 7*32, 4096 };
    const float   scales[]  = { 1e-3f, 0.05f, 1.0f, 30.0f, 1000.0f };
    for (int ti = 0; ti < N_QTYPES; ti++) {
        const struct qtype * t = &QTYPES[ti];
        int bad = 0, blocks = 0;
        for (size_t li = 0; li < sizeof(lengths)/sizeof(lengths[0]); li++) {
            const int64_t n = lengths[li];
            float   * x = malloc(sizeof(float) * (size_t) n);
            float   * y = malloc(sizeof(float) * (size_t) n);
            uint8_t * q = malloc(t->block_bytes * (size_t)(n / 32));
            for (size_t si = 0; si < sizeof(scales)/sizeof(scales[0]); si++) {
                fill_random_row(x, n, scales[si]);
                if (si == 0 && n >= 64) {
                    // a constant block and a zero block
                    for (int j = 0; j < 32; j++) {
                        x[j] = x[0];
                        x[32 + j] = 0.0f;
                    }
                }
                t->quantize(x, q, n);
                t->dequantize(q, y, n);
                for (int64_t b = 0; b < n / 32; b++) {
                    bad += check_block_bound(t, x + 32*b, q + t->block_bytes*(size_t) b, y + 32*b);
                    blocks++;
                }
            }
            free(x); free(y); free(q);
        }
        CHECK_MSG(bad == 0, "%s: %d bound violations in %d blocks", t->name, bad, blocks);
    }
}

// Blocks at the edges of float: values so small that 1/d overflows, values
// whose scale overflows fp16, NaN and inf. The quantizers must not misbehave
// (the sanitizer builds check the conversions), tiny blocks must come back as
// zeros, and blocks whose scale is not finite must fail validation.
static void log_nothing(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    (void) user_data;
}

static void test_degenerate_blocks(void) {
    ggml_log_set(log_nothing, NULL); // the rejections below log, as they should
    float x[32], y[32];
    uint8_t q[36];
    for (int ti = 0; ti < N_QTYPES; ti++) {
        const struct qtype * t = &QTYPES[ti];

        // fp32 subnormals: d is ~1e-41, 1/d is inf, fp16(d) is 0
        for (int j = 0; j < 32; j++) {
            x[j] = (float)(j - 15) * 1e-40f;
        }
        t->quantize(x, q, 32);
        t->dequantize(q, y, 32);
        int nonzero = 0;
        for (int j = 0; j < 32; j++) {
            nonzero += y[j] != 0.0f;
        }
        CHECK_MSG(nonzero == 0, "%s: subnormal block dequantizes to %d non-zero values", t->name, nonzero);

        // a scale beyond fp16's range: 1e6/8, 1e6/127, ... are all > 65504
        for (int j = 0; j < 32; j++) {
            x[j] = (float) j;
        }
        x[7] = t->kind == 1 ? 1e8f : -1e8f;
        t->quantize(x, q, 32);
        if (t->type != GGML_TYPE_Q8_1) {
            CHECK_MSG(!ggml_validate_row_data(t->type, q, t->block_bytes), "%s: fp16 scale overflow not rejected", t->name);
        }

        // NaN and inf inputs: defined output, rejected by validation where the scale is not finite
        for (int j = 0; j < 32; j++) {
            x[j] = (float) j;
        }
        x[3] = NAN;
        t->quantize(x, q, 32);
        x[3] = INFINITY;
        t->quantize(x, q, 32);
        if (t->type != GGML_TYPE_Q8_1) {
            CHECK_MSG(!ggml_validate_row_data(t->type, q, t->block_bytes), "%s: inf input not rejected", t->name);
        }
        x[3] = FLT_MAX;
        x[4] = -FLT_MAX;
        t->quantize(x, q, 32);
    }
    ggml_log_set(NULL, NULL);
}

//
// importance matrix
//

typedef size_t (*quantize_fn)(const float * GGML_RESTRICT, void * GGML_RESTRICT, int64_t, int64_t, const float *);

// the weights upstream's search fits under: importance * sqrt(sigma2 + x^2),
// sigma2 the mean square of the row
static void effective_weights(const float * x, const float * w, int64_t n, double * ew) {
    double s2 = 0;
    for (int64_t i = 0; i < n; i++) {
        s2 += (double) x[i] * x[i];
    }
    for (int64_t i = 0; i < n; i++) {
        ew[i] = w[i] * sqrt(s2 / (double) n + (double) x[i] * x[i]);
    }
}

static void test_imatrix(void) {
    const quantize_fn fns[] = { quantize_q4_0, quantize_q4_1, quantize_q5_0, quantize_q5_1 };
    const int64_t lengths[] = { 32, 64, 4096 };
    for (int ti = 0; ti < 4; ti++) {
        const struct qtype * t = &QTYPES[ti];
        const bool symmetric = ti == 0 || ti == 2;
        const int  offset = ti == 0 ? 8 : 16;
        double total_ref = 0, total_im = 0;
        int not_fitted = 0, blocks = 0;
        for (size_t li = 0; li < sizeof(lengths)/sizeof(lengths[0]); li++) {
            const int64_t n = lengths[li], nrows = 3;
            float   * x  = malloc(sizeof(float) * (size_t)(n*nrows));
            float   * w  = malloc(sizeof(float) * (size_t) n);
            double  * ew = malloc(sizeof(double) * (size_t) n);
            float   * y  = malloc(sizeof(float) * (size_t) n);
            uint8_t * qr = malloc(t->block_bytes * (size_t)(n*nrows/32));
            uint8_t * qi = malloc(t->block_bytes * (size_t)(n*nrows/32));
            fill_random_row(x, n*nrows, 1.0f);
            for (int64_t i = 0; i < n; i++) {
                w[i] = rand_u32() % 11 == 0 ? 0.0f : expf(2.0f * rand_normal());
            }
            const size_t row_size = t->block_bytes * (size_t)(n/32);
            CHECK_EQ_INT(fns[ti](x, qr, nrows, n, NULL), nrows*row_size);
            CHECK_EQ_INT(fns[ti](x, qi, nrows, n, w),    nrows*row_size);
            for (int64_t r = 0; r < nrows; r++) {
                const float * xr = x + r*n;
                // without imatrix: the reference bytes
                uint8_t ref[4096/32*24];
                t->quantize(xr, ref, n);
                CHECK(memcmp(ref, qr + r*row_size, row_size) == 0);

                effective_weights(xr, w, n, ew);
                t->dequantize(qr + r*row_size, y, n);
                for (int64_t i = 0; i < n; i++) {
                    total_ref += ew[i] * ((double) xr[i] - y[i]) * ((double) xr[i] - y[i]);
                }
                t->dequantize(qi + r*row_size, y, n);
                for (int64_t i = 0; i < n; i++) {
                    total_im += ew[i] * ((double) xr[i] - y[i]) * ((double) xr[i] - y[i]);
                }
                if (!symmetric) {
                    continue;
                }
                // The symmetric formats keep the weighted least-squares scale
                // of the codes they store (upstream's make_qx_quants returns
                // sum w*x*q / sum w*q^2): the stored fp16 scale is that value
                // rounded. The codes come back from the values: q = y/d.
                for (int64_t b = 0; b < n/32; b++) {
                    const uint8_t * blk = qi + r*row_size + b*t->block_bytes;
                    ggml_fp16_t dh;
                    memcpy(&dh, blk, sizeof(dh));
                    const double d = ggml_fp16_to_fp32(dh);
                    double sxq = 0, sqq = 0;
                    for (int j = 0; j < 32; j++) {
                        int q;
                        if (ti == 0) {
                            q = (j < 16 ? blk[2 + j] & 0x0F : blk[2 + j - 16] >> 4) - offset;
                        } else {
                            uint32_t qh;
                            memcpy(&qh, blk + 2, sizeof(qh));
                            q = ((j < 16 ? blk[6 + j] & 0x0F : blk[6 + j - 16] >> 4) | (int)(((qh >> j) & 1u) << 4)) - offset;
                        }
                        sxq += ew[32*b + j] * xr[32*b + j] * q;
                        sqq += ew[32*b + j] * q * q;
                    }
                    const double d_ls = sqq > 0 ? sxq / sqq : 0.0;
                    not_fitted += fabs(d - d_ls) > fabs(d_ls) * (1.0/1024) + 1e-30;
                    blocks++;
                }
            }
            free(x); free(w); free(ew); free(y); free(qr); free(qi);
        }
        CHECK_MSG(not_fitted == 0, "%s: %d of %d blocks do not store the weighted least-squares scale",
                  t->name, not_fitted, blocks);
        // the search has room on random data; a search that does nothing fails here
        CHECK_MSG(total_im < 0.9 * total_ref, "%s: weighted error %g with imatrix, %g without",
                  t->name, total_im, total_ref);
    }

    // weights all zero: every fit is as good as any, and the least-squares
    // scale of no weight is 0 (upstream's 0/0 rule): q4_0 stores d = 0
    {
        float x[64], w[64];
        uint8_t a[2*18];
        fill_random_row(x, 64, 1.0f);
        memset(w, 0, sizeof(w));
        quantize_q4_0(x, a, 1, 64, w);
        CHECK(a[0] == 0 && a[1] == 0 && a[18] == 0 && a[19] == 0);
    }

    // q8_0 ignores the importance matrix
    {
        float x[128], w[128];
        uint8_t a[4*34], b[4*34];
        fill_random_row(x, 128, 1.0f);
        for (int i = 0; i < 128; i++) {
            w[i] = rand_uniform();
        }
        CHECK_EQ_INT(quantize_q8_0(x, a, 2, 64, w), sizeof(a));
        quantize_row_q8_0_ref(x, b, 128);
        CHECK(memcmp(a, b, sizeof(a)) == 0);
    }
}

//
// ggml_quantize_chunk
//

static void test_quantize_chunk(void) {
    enum { NROWS = 6, NPR = 96, START_ROW = 2, CHUNK_ROWS = 3 };
    float src[NROWS*NPR], w[NPR];
    fill_random_row(src, NROWS*NPR, 2.0f);
    for (int i = 0; i < NPR; i++) {
        w[i] = rand_uniform();
    }

    const enum ggml_type types[] = {
        GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16,
        GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
    };
    for (size_t ti = 0; ti < sizeof(types)/sizeof(types[0]); ti++) {
        const enum ggml_type type = types[ti];
        const size_t row_size = ggml_row_size(type, NPR);
        for (int with_imatrix = 0; with_imatrix < 2; with_imatrix++) {
            uint8_t dst[NROWS*NPR*4];
            uint8_t expected[NROWS*NPR*4];
            memset(dst, 0xee, sizeof(dst));
            memset(expected, 0xee, sizeof(expected));

            const size_t n = ggml_quantize_chunk(type, src, dst, START_ROW*NPR, CHUNK_ROWS, NPR, with_imatrix ? w : NULL);
            CHECK_EQ_INT(n, CHUNK_ROWS*row_size);

            // what the rows must hold, from the per-type functions
            const float * s = src + START_ROW*NPR;
            uint8_t     * e = expected + START_ROW*row_size;
            switch (type) {
                case GGML_TYPE_F32:
                    memcpy(e, s, CHUNK_ROWS*row_size);
                    break;
                case GGML_TYPE_F16:
                    for (int i = 0; i < CHUNK_ROWS*NPR; i++) {
                        const ggml_fp16_t h = ggml_fp32_to_fp16(s[i]);
                        memcpy(e + 2*i, &h, 2);
                    }
                    break;
                case GGML_TYPE_BF16:
                    for (int i = 0; i < CHUNK_ROWS*NPR; i++) {
                        const ggml_bf16_t h = ggml_fp32_to_bf16(s[i]);
                        memcpy(e + 2*i, &h, 2);
                    }
                    break;
                case GGML_TYPE_Q4_0: quantize_q4_0(s, e, CHUNK_ROWS, NPR, with_imatrix ? w : NULL); break;
                case GGML_TYPE_Q4_1: quantize_q4_1(s, e, CHUNK_ROWS, NPR, with_imatrix ? w : NULL); break;
                case GGML_TYPE_Q5_0: quantize_q5_0(s, e, CHUNK_ROWS, NPR, with_imatrix ? w : NULL); break;
                case GGML_TYPE_Q5_1: quantize_q5_1(s, e, CHUNK_ROWS, NPR, with_imatrix ? w : NULL); break;
                case GGML_TYPE_Q8_0: quantize_row_q8_0_ref(s, e, CHUNK_ROWS*NPR); break;
                default: CHECK(false); break;
            }
            CHECK_MSG(memcmp(dst, expected, sizeof(dst)) == 0, "ggml_quantize_chunk %s (imatrix %d)",
                      ggml_type_name(type), with_imatrix);
        }
    }

    // without imatrix the quantized rows are the reference quantizer's
    uint8_t a[NROWS*NPR], b[NROWS*NPR];
    ggml_quantize_chunk(GGML_TYPE_Q5_1, src, a, 0, NROWS, NPR, NULL);
    quantize_row_q5_1_ref(src, b, NROWS*NPR);
    CHECK(memcmp(a, b, ggml_row_size(GGML_TYPE_Q5_1, NPR)*NROWS) == 0);

    CHECK(ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_XXS));
    CHECK(ggml_quantize_requires_imatrix(GGML_TYPE_IQ2_XS));
    CHECK(ggml_quantize_requires_imatrix(GGML_TYPE_IQ1_S));
    CHECK(!ggml_quantize_requires_imatrix(GGML_TYPE_IQ1_M));
    CHECK(!ggml_quantize_requires_imatrix(GGML_TYPE_Q4_0));
    CHECK(!ggml_quantize_requires_imatrix(GGML_TYPE_F16));
}

// init, chunk and free from several threads at once
static void * quantize_thread(void * arg) {
    const enum ggml_type type = *(const enum ggml_type *) arg;
    float src[4*64];
    uint8_t dst[4*64*4];
    for (int i = 0; i < 4*64; i++) {
        src[i] = (float)((i * 7919) % 101) - 50.0f;
    }
    for (int it = 0; it < 50; it++) {
        ggml_quantize_init(type);
        ggml_quantize_chunk(type, src, dst, 64, 3, 64, NULL);
    }
    return NULL;
}

static void test_quantize_threads(void) {
    enum ggml_type types[4] = { GGML_TYPE_Q4_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_F16 };
    pthread_t threads[4];
    for (int i = 0; i < 4; i++) {
        CHECK(pthread_create(&threads[i], NULL, quantize_thread, &types[i]) == 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(threads[i], NULL);
    }
    ggml_quantize_free();
    ggml_quantize_free(); // twice is fine
}

//
// aborts
//

#ifdef HAVE_FORK
static int g_abort_fd = -1;

static void abort_to_pipe(const char * message) {
    const ssize_t r = write(g_abort_fd, message, strlen(message));
    (void) r;
}

// runs quantize_chunk(type, ...) in a child; true if it aborted with a
// message containing `expect`
static bool chunk_aborts(enum ggml_type type, int64_t start, const float * imatrix, const char * expect) {
    int fds[2];
    if (pipe(fds) != 0) {
        return false;
    }
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        g_abort_fd = fds[1];
        ggml_set_abort_callback(abort_to_pipe);
        static float src[4*256];
        static uint8_t dst[4*256*4];
        ggml_quantize_chunk(type, src, dst, start, 2, 256, imatrix);
        _exit(0);
    }
    close(fds[1]);
    char message[1024] = { 0 };
    size_t len = 0;
    ssize_t r;
    while (len < sizeof(message) - 1 && (r = read(fds[0], message + len, sizeof(message) - 1 - len)) > 0) {
        len += (size_t) r;
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const bool aborted = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
    CHECK_MSG(aborted && strstr(message, expect) != NULL, "type %s start %lld: aborted %d, message '%s'",
              ggml_type_name(type), (long long) start, aborted, message);
    return aborted;
}

static void test_aborts(void) {
    chunk_aborts(GGML_TYPE_Q8_K,    0,   NULL, "q8_K is not supported");
    chunk_aborts(GGML_TYPE_Q8_1,    0,   NULL, "q8_1 is not supported");
    chunk_aborts(GGML_TYPE_IQ2_XXS, 0,   NULL, "importance matrix");
    chunk_aborts(GGML_TYPE_IQ1_S,   0,   NULL, "importance matrix");
    chunk_aborts((enum ggml_type) 4, 0,  NULL, "not supported");
    chunk_aborts(GGML_TYPE_Q4_0,    64,  NULL, "start % n_per_row");
    chunk_aborts(GGML_TYPE_Q4_0,    16,  NULL, "start % ggml_blck_size");
}
#endif

//
// ggml_validate_row_data
//

struct log_count {
    int errors;
    int debug;
};

static void count_log(enum ggml_log_level level, const char * text, void * user_data) {
    struct log_count * c = (struct log_count *) user_data;
    if (level == GGML_LOG_LEVEL_ERROR) {
        c->errors++;
    } else if (level == GGML_LOG_LEVEL_DEBUG) {
        c->debug++;
    }
    (void) text;
}

// validate and count the log lines it wrote
static bool validate(struct log_count * c, enum ggml_type type, const void * data, size_t nbytes) {
    c->errors = 0;
    c->debug  = 0;
    return ggml_validate_row_data(type, data, nbytes);
}

static void test_validate(void) {
    struct log_count c = { 0, 0 };
    ggml_log_set(count_log, &c);

    enum { N = 256 };
    float    f32[N];
    double   f64[N];
    uint16_t f16[N];
    ggml_bf16_t bf16[N];
    uint8_t  q[N*2];
    fill_random_row(f32, N, 1.0f);
    for (int i = 0; i < N; i++) {
        f64[i]  = f32[i];
        f16[i]  = ggml_fp32_to_fp16(f32[i]);
        bf16[i] = ggml_fp32_to_bf16(f32[i]);
    }

    // good rows
    CHECK(validate(&c, GGML_TYPE_F32,  f32,  sizeof(f32)) && c.errors == 0);
    CHECK(validate(&c, GGML_TYPE_F64,  f64,  sizeof(f64)) && c.errors == 0);
    CHECK(validate(&c, GGML_TYPE_F16,  f16,  sizeof(f16)) && c.errors == 0);
    CHECK(validate(&c, GGML_TYPE_BF16, bf16, sizeof(bf16)) && c.errors == 0);
    for (int ti = 0; ti < 5; ti++) {
        const struct qtype * t = &QTYPES[ti];
        t->quantize(f32, q, N);
        const size_t nbytes = t->block_bytes * (N/32);
        CHECK_MSG(validate(&c, t->type, q, nbytes) && c.errors == 0, "good %s row", t->name);

        // a NaN scale, an inf scale, in the last block
        uint8_t bad[N*2];
        memcpy(bad, q, nbytes);
        const uint16_t nan16 = 0x7e00, inf16 = 0xfc00;
        memcpy(bad + nbytes - t->block_bytes, &nan16, 2);
        CHECK_MSG(!validate(&c, t->type, bad, nbytes) && c.errors == 1, "%s with a NaN scale", t->name);
        memcpy(bad + nbytes - t->block_bytes, &inf16, 2);
        CHECK_MSG(!validate(&c, t->type, bad, nbytes) && c.errors == 1, "%s with an inf scale", t->name);
        if (t->kind == 1) {
            // a NaN minimum
            memcpy(bad, q, nbytes);
            memcpy(bad + 2, &nan16, 2);
            CHECK_MSG(!validate(&c, t->type, bad, nbytes) && c.errors == 1, "%s with a NaN min", t->name);
        }
        // a size that is not a whole number of blocks
        CHECK_MSG(!validate(&c, t->type, q, nbytes - 1) && c.errors == 1, "%s with a bad size", t->name);
        // codes are never invalid: random bytes with a finite scale pass
        for (size_t i = 0; i < nbytes; i++) {
            bad[i] = (uint8_t) rand_u32();
        }
        for (int b = 0; b < N/32; b++) {
            const uint16_t one = 0x3c00;
            memcpy(bad + (size_t) b*t->block_bytes, &one, 2);
            if (t->kind == 1) {
                memcpy(bad + (size_t) b*t->block_bytes + 2, &one, 2);
            }
        }
        CHECK_MSG(validate(&c, t->type, bad, nbytes), "%s with random codes", t->name);
    }

    // bad float rows
    f32[17] = INFINITY;
    CHECK(!validate(&c, GGML_TYPE_F32, f32, sizeof(f32)) && c.errors == 1);
    f32[17] = NAN;
    CHECK(!validate(&c, GGML_TYPE_F32, f32, sizeof(f32)) && c.errors == 1);
    f32[17] = 1.0f;
    CHECK(validate(&c, GGML_TYPE_F32, f32, sizeof(f32)));
    CHECK(!validate(&c, GGML_TYPE_F32, f32, sizeof(f32) - 2) && c.errors == 1);
    f64[3] = -INFINITY;
    CHECK(!validate(&c, GGML_TYPE_F64, f64, sizeof(f64)) && c.errors == 1);
    f16[N-1] = 0x7c01; // NaN
    CHECK(!validate(&c, GGML_TYPE_F16, f16, sizeof(f16)) && c.errors == 1);
    f16[N-1] = 0xfc00; // -inf
    CHECK(!validate(&c, GGML_TYPE_F16, f16, sizeof(f16)) && c.errors == 1);
    f16[N-1] = 0x7bff; // 65504: fine
    CHECK(validate(&c, GGML_TYPE_F16, f16, sizeof(f16)));
    bf16[5].bits = 0x7f80; // inf
    CHECK(!validate(&c, GGML_TYPE_BF16, bf16, sizeof(bf16)) && c.errors == 1);
    bf16[5].bits = 0xffc1; // NaN
    CHECK(!validate(&c, GGML_TYPE_BF16, bf16, sizeof(bf16)) && c.errors == 1);
    bf16[5].bits = 0x7f7f; // largest finite
    CHECK(validate(&c, GGML_TYPE_BF16, bf16, sizeof(bf16)));

    // integers are always valid, whatever their bits
    memset(q, 0xff, sizeof(q));
    CHECK(validate(&c, GGML_TYPE_I8,  q, sizeof(q)) && c.errors == 0);
    CHECK(validate(&c, GGML_TYPE_I32, q, sizeof(q)) && c.errors == 0);
    CHECK(!validate(&c, GGML_TYPE_I32, q, 7) && c.errors == 1);

    // q8_1 is no storage type (as upstream); removed and invalid types fail
    CHECK(!validate(&c, GGML_TYPE_Q8_1, q, 36) && c.errors == 1);
    CHECK(!validate(&c, (enum ggml_type) 4, q, 18) && c.errors == 1);
    CHECK(!validate(&c, GGML_TYPE_COUNT, q, 18) && c.errors == 1);

    // nvfp4: every UE4M3 scale byte is a value (as upstream); the size is checked
    memset(q, 0xff, 36);
    CHECK(validate(&c, GGML_TYPE_NVFP4, q, 36) && c.errors == 0);
    CHECK(!validate(&c, GGML_TYPE_NVFP4, q, 37) && c.errors == 1);

    ggml_log_set(NULL, NULL);
}

int main(void) {
    test_q4_0_by_hand();
    test_q4_1_by_hand();
    test_q5_0_by_hand();
    test_q5_1_by_hand();
    test_q8_0_by_hand();
    test_q8_1_by_hand();
    test_dequantize_by_hand();
    test_round_trip_bounds();
    test_degenerate_blocks();
    test_imatrix();
    test_quantize_chunk();
    test_quantize_threads();
#ifdef HAVE_FORK
    test_aborts();
#endif
    test_validate();
    return TEST_RESULT();
}
