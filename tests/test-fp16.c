// test-fp16: fp16 and bf16 conversions against independent double-precision
// definitions of the formats.
//
//   decode: every one of the 65536 bit patterns, from the definition of the
//           format (sign, biased exponent, mantissa);
//   encode: round to nearest, ties to even, computed in double with
//           nearbyint(), at and around every rounding boundary of the
//           format, at the overflow and underflow edges, and on random bits;
//   rows:   the row functions agree with the scalar ones.

#include "ggml.h"
#include "testing.h"

#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

static uint32_t rand_u32(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)(g_rng >> 16);
}

//
// independent definitions
//

// value of a binary16 bit pattern: sign * 2^(e-15) * (1 + m/1024), subnormals
// m * 2^-24, e = 31 is inf (m = 0) or NaN
static double ref_fp16_value(uint16_t h) {
    const int sign = h >> 15;
    const int e    = (h >> 10) & 0x1f;
    const int m    = h & 0x3ff;
    double v;
    if (e == 31) {
        v = m == 0 ? INFINITY : NAN;
    } else if (e == 0) {
        v = ldexp((double) m, -24);
    } else {
        v = ldexp(1.0 + m/1024.0, e - 15);
    }
    return sign ? -v : v;
}

// value of a bfloat16 bit pattern: sign * 2^(e-127) * (1 + m/128),
// subnormals m * 2^-133, e = 255 is inf or NaN
static double ref_bf16_value(uint16_t h) {
    const int sign = h >> 15;
    const int e    = (h >> 7) & 0xff;
    const int m    = h & 0x7f;
    double v;
    if (e == 255) {
        v = m == 0 ? INFINITY : NAN;
    } else if (e == 0) {
        v = ldexp((double) m, -133);
    } else {
        v = ldexp(1.0 + m/128.0, e - 127);
    }
    return sign ? -v : v;
}

// Encoding of the value nearest to f (ties to even) in a binary format with
// mant_bits stored mantissa bits, exponent bias `bias` and max exponent code
// `emax_code` (all ones = inf/NaN). The value is scaled to an integer
// significand in double (exact: f has 24 bits) and rounded with nearbyint(),
// which rounds to nearest even in the default rounding mode.
static uint16_t ref_encode(float f, int mant_bits, int bias, int emax_code, uint16_t quiet_nan) {
    const uint16_t sign = signbit(f) ? (uint16_t)(1u << 15) : 0;
    if (isnan(f)) {
        return sign | quiet_nan;
    }
    const double a = fabs((double) f);
    const uint16_t inf = (uint16_t)(emax_code << mant_bits);
    if (isinf(f)) {
        return sign | inf;
    }
    const int min_exp = 1 - bias; // exponent of the smallest normal
    int e;
    frexp(a, &e);
    e -= 1; // a = 1.x * 2^e
    if (a == 0.0 || e < min_exp) {
        // subnormal range: significand in units of 2^(min_exp - mant_bits);
        // a result of 2^mant_bits is the smallest normal, whose encoding is
        // that same integer
        const double m = nearbyint(ldexp(a, mant_bits - min_exp));
        return sign | (uint16_t) m;
    }
    double m = nearbyint(ldexp(a, mant_bits - e)); // in [2^mant_bits, 2^(mant_bits+1)]
    if (m == ldexp(1.0, mant_bits + 1)) {
        m /= 2;
        e += 1;
    }
    const int ecode = e + bias;
    if (ecode >= emax_code) {
        return sign | inf;
    }
    return sign | (uint16_t)((ecode << mant_bits) | ((int) m - (1 << mant_bits)));
}

static uint16_t ref_fp32_to_fp16(float f) {
    return ref_encode(f, 10, 15, 31, 0x7e00);
}

static uint16_t ref_fp32_to_bf16(float f) {
    return ref_encode(f, 7, 127, 255, 0x7fc0);
}

//
// fp16
//

static void test_fp16_decode_all(void) {
    int bad_value = 0, bad_roundtrip = 0, bad_nan = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        const uint16_t h   = (uint16_t) i;
        const double   ref = ref_fp16_value(h);
        const float    f   = ggml_fp16_to_fp32(h);
        if (isnan(ref)) {
            // NaN stays NaN with its sign and payload, and comes out quiet
            const uint32_t u = f32_bits(f);
            bad_nan += !isnan(f) || (u >> 31) != (uint32_t)(h >> 15) || ((u >> 13) & 0x3ff) != ((h & 0x3ffu) | 0x200u);
            const uint16_t back = ggml_fp32_to_fp16(f);
            bad_nan += (back & 0x7c00) != 0x7c00 || (back & 0x3ff) == 0 || (back >> 15) != (h >> 15);
            continue;
        }
        bad_value     += (double) f != ref || !signbit(f) != !signbit(ref);
        bad_roundtrip += ggml_fp32_to_fp16(f) != h;
    }
    CHECK_EQ_INT(bad_value, 0);
    CHECK_EQ_INT(bad_roundtrip, 0);
    CHECK_EQ_INT(bad_nan, 0);
}

static int check_fp16_encode(float f) {
    const uint16_t got = ggml_fp32_to_fp16(f);
    const uint16_t ref = ref_fp32_to_fp16(f);
    if (got != ref) {
        fprintf(stderr, "fp32 %a (0x%08x) -> fp16 0x%04x, expected 0x%04x\n", (double) f, f32_bits(f), got, ref);
        return 1;
    }
    return 0;
}

// every fp16 value, the midpoints to its neighbours (exact in fp32: 12
// significant bits) and the fp32 values 1 and 2 ulps either side of each
static void test_fp16_encode_boundaries(void) {
    int bad = 0;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        const double lo  = ref_fp16_value((uint16_t) h);
        const double hi  = h + 1 < 0x7c00 ? ref_fp16_value((uint16_t)(h + 1)) : 65536.0;
        const float  mid = (float)((lo + hi) / 2);
        CHECK((double) mid == (lo + hi) / 2);
        const float pts[] = {
            (float) lo,
            mid,
            nextafterf(mid, 0.0f), nextafterf(mid, INFINITY),
            nextafterf(nextafterf(mid, 0.0f), 0.0f), nextafterf(nextafterf(mid, INFINITY), INFINITY),
        };
        for (size_t k = 0; k < sizeof(pts)/sizeof(pts[0]); k++) {
            bad += check_fp16_encode(pts[k]);
            bad += check_fp16_encode(-pts[k]);
        }
    }
    CHECK_EQ_INT(bad, 0);
}

static void test_fp16_encode_edges(void) {
    // ties go to the even neighbour
    CHECK_EQ_INT(ggml_fp32_to_fp16(1.0f + 0x1p-11f), 0x3c00);            // 1 + half ulp -> 1
    CHECK_EQ_INT(ggml_fp32_to_fp16(1.0f + 3*0x1p-11f), 0x3c02);          // 1 + 1.5 ulp -> 1 + 2 ulp
    CHECK_EQ_INT(ggml_fp32_to_fp16(nextafterf(1.0f + 0x1p-11f, 2.0f)), 0x3c01);
    // overflow: 65504 is the largest finite; 65520 (the midpoint to 2^16) rounds to inf
    CHECK_EQ_INT(ggml_fp32_to_fp16(65504.0f), 0x7bff);
    CHECK_EQ_INT(ggml_fp32_to_fp16(nextafterf(65520.0f, 0.0f)), 0x7bff);
    CHECK_EQ_INT(ggml_fp32_to_fp16(65520.0f), 0x7c00);
    CHECK_EQ_INT(ggml_fp32_to_fp16(-65520.0f), 0xfc00);
    CHECK_EQ_INT(ggml_fp32_to_fp16(FLT_MAX), 0x7c00);
    CHECK_EQ_INT(ggml_fp32_to_fp16(INFINITY), 0x7c00);
    CHECK_EQ_INT(ggml_fp32_to_fp16(-INFINITY), 0xfc00);
    // smallest subnormal 2^-24; 2^-25 is the tie with 0 and goes to 0 (even)
    CHECK_EQ_INT(ggml_fp32_to_fp16(0x1p-24f), 0x0001);
    CHECK_EQ_INT(ggml_fp32_to_fp16(0x1p-25f), 0x0000);
    CHECK_EQ_INT(ggml_fp32_to_fp16(nextafterf(0x1p-25f, 1.0f)), 0x0001);
    CHECK_EQ_INT(ggml_fp32_to_fp16(3*0x1p-25f), 0x0002);                 // 1.5 units -> 2
    CHECK_EQ_INT(ggml_fp32_to_fp16(5*0x1p-25f), 0x0002);                 // 2.5 units -> 2
    // below half the smallest subnormal: signed zero
    CHECK_EQ_INT(ggml_fp32_to_fp16(0x1p-26f), 0x0000);
    CHECK_EQ_INT(ggml_fp32_to_fp16(-0x1p-26f), 0x8000);
    CHECK_EQ_INT(ggml_fp32_to_fp16(FLT_MIN), 0x0000);
    CHECK_EQ_INT(ggml_fp32_to_fp16(f32_from_bits(0x80000001u)), 0x8000); // fp32 subnormal
    CHECK_EQ_INT(ggml_fp32_to_fp16(-0.0f), 0x8000);
    // largest subnormal rounding up into the smallest normal 2^-14
    CHECK_EQ_INT(ggml_fp32_to_fp16(0x1p-14f - 0x1p-26f), 0x0400);
    // NaN: a NaN with the sign kept
    const uint16_t n  = ggml_fp32_to_fp16(NAN);
    const uint16_t nn = ggml_fp32_to_fp16(-NAN);
    CHECK((n & 0x7c00) == 0x7c00 && (n & 0x3ff) != 0 && !(n & 0x8000));
    CHECK((nn & 0x7c00) == 0x7c00 && (nn & 0x3ff) != 0 && (nn & 0x8000));
    const uint16_t sn = ggml_fp32_to_fp16(f32_from_bits(0x7f800001u)); // signalling, payload below fp16's
    CHECK((sn & 0x7c00) == 0x7c00 && (sn & 0x3ff) != 0);
}

static void test_fp16_encode_random(void) {
    int bad = 0;
    for (int i = 0; i < 1 << 21; i++) {
        bad += check_fp16_encode(f32_from_bits(rand_u32()));
    }
    // values in fp16's range, where the rounding matters most
    for (int i = 0; i < 1 << 21; i++) {
        const uint32_t u = (rand_u32() & 0x87ffffffu) | 0x30000000u; // exponents 2^-31 .. 2^16
        bad += check_fp16_encode(f32_from_bits(u));
    }
    CHECK_EQ_INT(bad, 0);
}

//
// bf16
//

static void test_bf16_decode_all(void) {
    int bad_value = 0, bad_roundtrip = 0, bad_nan = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        const ggml_bf16_t h = { .bits = (uint16_t) i };
        const double ref = ref_bf16_value(h.bits);
        const float  f   = ggml_bf16_to_fp32(h);
        if (isnan(ref)) {
            bad_nan += !isnan(f);
            // back to bf16: NaN, quiet, sign and payload kept
            const ggml_bf16_t back = ggml_fp32_to_bf16(f);
            bad_nan += back.bits != (h.bits | 0x40);
            continue;
        }
        bad_value     += (double) f != ref || !signbit(f) != !signbit(ref);
        bad_roundtrip += ggml_fp32_to_bf16(f).bits != h.bits;
    }
    CHECK_EQ_INT(bad_value, 0);
    CHECK_EQ_INT(bad_roundtrip, 0);
    CHECK_EQ_INT(bad_nan, 0);
}

static int check_bf16_encode(float f) {
    const uint16_t got = ggml_fp32_to_bf16(f).bits;
    uint16_t ref;
    if (isnan(f)) {
        ref = (uint16_t)((f32_bits(f) >> 16) | 0x40); // payload kept, made quiet
    } else {
        ref = ref_fp32_to_bf16(f);
    }
    if (got != ref) {
        fprintf(stderr, "fp32 %a (0x%08x) -> bf16 0x%04x, expected 0x%04x\n", (double) f, f32_bits(f), got, ref);
        return 1;
    }
    return 0;
}

static void test_bf16_encode(void) {
    int bad = 0;
    // every finite bf16 value, the midpoints to the next one (exact in fp32:
    // 9 significant bits) and 1 ulp either side
    for (uint32_t h = 0; h < 0x7f80; h++) {
        const double lo  = ref_bf16_value((uint16_t) h);
        const double hi  = h + 1 < 0x7f80 ? ref_bf16_value((uint16_t)(h + 1)) : ldexp(1.0, 128);
        const double mid = (lo + hi) / 2;
        const float pts[] = {
            (float) lo,
            mid < (double) FLT_MAX ? (float) mid : FLT_MAX,
            nextafterf((float) mid, 0.0f),
            mid < (double) FLT_MAX ? nextafterf((float) mid, INFINITY) : FLT_MAX,
        };
        for (size_t k = 0; k < sizeof(pts)/sizeof(pts[0]); k++) {
            bad += check_bf16_encode(pts[k]);
            bad += check_bf16_encode(-pts[k]);
        }
    }
    for (int i = 0; i < 1 << 21; i++) {
        bad += check_bf16_encode(f32_from_bits(rand_u32()));
    }
    CHECK_EQ_INT(bad, 0);

    // ties to even, overflow of FLT_MAX, subnormals kept, NaN quiet
    CHECK_EQ_INT(ggml_fp32_to_bf16(f32_from_bits(0x3f808000u)).bits, 0x3f80); // 1 + half ulp -> 1
    CHECK_EQ_INT(ggml_fp32_to_bf16(f32_from_bits(0x3f818000u)).bits, 0x3f82); // 1 + 1.5 ulp -> up
    CHECK_EQ_INT(ggml_fp32_to_bf16(FLT_MAX).bits, 0x7f80);
    CHECK_EQ_INT(ggml_fp32_to_bf16(-FLT_MAX).bits, 0xff80);
    CHECK_EQ_INT(ggml_fp32_to_bf16(f32_from_bits(0x00010000u)).bits, 0x0001); // subnormal kept
    CHECK_EQ_INT(ggml_fp32_to_bf16(f32_from_bits(0x80008000u)).bits, 0x8000); // tie -> even (zero)
    CHECK_EQ_INT(ggml_fp32_to_bf16(f32_from_bits(0x7f800001u)).bits, 0x7fc0); // signalling NaN -> quiet
    CHECK_EQ_INT(ggml_fp32_to_bf16(f32_from_bits(0xff812345u)).bits, 0xffc1);
}

//
// rows
//

static void test_rows(void) {
    const int64_t lengths[] = { 1, 7, 33, 257, 4099 };
    for (size_t li = 0; li < sizeof(lengths)/sizeof(lengths[0]); li++) {
        const int64_t n = lengths[li];
        float       * x   = malloc(sizeof(float) * (size_t) n);
        float       * y   = malloc(sizeof(float) * (size_t) n);
        ggml_fp16_t * h   = malloc(sizeof(ggml_fp16_t) * (size_t) n);
        ggml_bf16_t * b   = malloc(sizeof(ggml_bf16_t) * (size_t) n);
        ggml_bf16_t * b2  = malloc(sizeof(ggml_bf16_t) * (size_t) n);
        for (int64_t i = 0; i < n; i++) {
            // random bits in half the cases, values in fp16's range in the rest
            x[i] = (i & 1) ? f32_from_bits(rand_u32()) : ldexpf((float)(int)(rand_u32() % 2001) - 1000.0f, (int)(rand_u32() % 40) - 30);
        }
        int bad = 0;

        ggml_fp32_to_fp16_row(x, h, n);
        for (int64_t i = 0; i < n; i++) {
            bad += h[i] != ggml_fp32_to_fp16(x[i]);
        }
        ggml_fp16_to_fp32_row(h, y, n);
        for (int64_t i = 0; i < n; i++) {
            bad += f32_bits(y[i]) != f32_bits(ggml_fp16_to_fp32(h[i]));
        }

        ggml_fp32_to_bf16_row(x, b, n);
        ggml_fp32_to_bf16_row_ref(x, b2, n);
        for (int64_t i = 0; i < n; i++) {
            bad += b[i].bits  != ggml_fp32_to_bf16(x[i]).bits;
            bad += b2[i].bits != ggml_fp32_to_bf16(x[i]).bits;
        }
        ggml_bf16_to_fp32_row(b, y, n);
        for (int64_t i = 0; i < n; i++) {
            bad += f32_bits(y[i]) != f32_bits(ggml_bf16_to_fp32(b[i]));
        }
        CHECK_MSG(bad == 0, "row length %lld: %d mismatches", (long long) n, bad);

        free(x); free(y); free(h); free(b); free(b2);
    }
}

int main(void) {
    test_fp16_decode_all();
    test_fp16_encode_boundaries();
    test_fp16_encode_edges();
    test_fp16_encode_random();
    test_bf16_decode_all();
    test_bf16_encode();
    test_rows();
    return TEST_RESULT();
}
