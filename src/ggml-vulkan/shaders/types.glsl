// types.glsl: reading element k of a row of binding A_BINDING in any weight
// type (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, the K-quants Q2_K ..
// Q6_K, IQ4_NL, IQ4_XS, MXFP4), chosen by one define (A_F32, A_F16, ...).
// row is the row's byte offset in the binding; for the quantized types with
// F16 fields it must be even (every block size but MXFP4's 17 bytes is).
// Block layouts are ggml's (src/ggml-common.h): an F16 scale d (and minimum m
// for _1), then for _0/_1 the low nibbles hold elements 0..15 and the high
// ones 16..31; Q5 adds a 32-bit mask qh of fifth bits; Q8_0 holds 32 signed
// bytes. The K-quants are super-blocks of 256 values whose sub-blocks carry
// small integer scales; IQ4_NL/IQ4_XS/MXFP4 codes index a table of 16 values.
// Every element is decoded on its own (no state kept between calls).

layout(binding = A_BINDING) readonly buffer AF32 { float    a_f32[]; };
layout(binding = A_BINDING) readonly buffer AU16 { uint16_t a_u16[]; };
layout(binding = A_BINDING) readonly buffer AU8  { uint8_t  a_u8[];  };

float a_half(uint byte_off) {
    return half_bits_to_float(uint(a_u16[byte_off >> 1]));
}

uint a_byte(uint byte_off) {
    return uint(a_u8[byte_off]);
}

#if defined(A_F32)
#define A_BLOCK_SIZE 1u
#define A_BLOCK_BYTES 4u
#elif defined(A_F16) || defined(A_BF16)
#define A_BLOCK_SIZE 1u
#define A_BLOCK_BYTES 2u
#elif defined(A_Q4_0)
#define A_BLOCK_SIZE 32u
#define A_BLOCK_BYTES 18u
#elif defined(A_Q4_1)
#define A_BLOCK_SIZE 32u
#define A_BLOCK_BYTES 20u
#elif defined(A_Q5_0)
#define A_BLOCK_SIZE 32u
#define A_BLOCK_BYTES 22u
#elif defined(A_Q5_1)
#define A_BLOCK_SIZE 32u
#define A_BLOCK_BYTES 24u
#elif defined(A_Q8_0)
#define A_BLOCK_SIZE 32u
#define A_BLOCK_BYTES 34u
#elif defined(A_Q2_K)
#define A_QK_K
#define A_BLOCK_SIZE 256u
#define A_BLOCK_BYTES 84u
#elif defined(A_Q3_K)
#define A_QK_K
#define A_BLOCK_SIZE 256u
#define A_BLOCK_BYTES 110u
#elif defined(A_Q4_K)
#define A_QK_K
#define A_BLOCK_SIZE 256u
#define A_BLOCK_BYTES 144u
#elif defined(A_Q5_K)
#define A_QK_K
#define A_BLOCK_SIZE 256u
#define A_BLOCK_BYTES 176u
#elif defined(A_Q6_K)
#define A_QK_K
#define A_BLOCK_SIZE 256u
#define A_BLOCK_BYTES 210u
#elif defined(A_IQ4_NL)
#define A_BLOCK_SIZE 32u
#define A_BLOCK_BYTES 18u
#elif defined(A_IQ4_XS)
#define A_QK_K
#define A_BLOCK_SIZE 256u
#define A_BLOCK_BYTES 136u
#elif defined(A_MXFP4)
#define A_BLOCK_SIZE 32u
#define A_BLOCK_BYTES 17u
#else
#error "no A type"
#endif
#if !defined(A_F32) && !defined(A_F16) && !defined(A_BF16)
#define A_QUANTIZED
#endif

#if defined(A_IQ4_NL) || defined(A_IQ4_XS)
// kvalues_iq4nl
const float A_KVALUES[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                                      1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
#elif defined(A_MXFP4)
// kvalues_mxfp4: twice the E2M1 values
const float A_KVALUES[16] = float[16](0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0,
                                      0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);
#endif

#if defined(A_Q4_K) || defined(A_Q5_K)
// 6-bit scale and minimum of sub-block j (0..7) from the 12 bytes at sc
uvec2 a_scale_min_k4(uint sc, uint j) {
    if (j < 4u) {
        return uvec2(a_byte(sc + j) & 63u, a_byte(sc + j + 4u) & 63u);
    }
    return uvec2((a_byte(sc + j + 4u) & 15u) | ((a_byte(sc + j - 4u) >> 6) << 4),
                 (a_byte(sc + j + 4u) >> 4)  | ((a_byte(sc + j) >> 6) << 4));
}
#endif

float a_elem(uint row, uint k) {
#if defined(A_F32)
    return a_f32[(row >> 2) + k];
#elif defined(A_F16)
    return half_bits_to_float(uint(a_u16[(row >> 1) + k]));
#elif defined(A_BF16)
    return bf16_bits_to_float(uint(a_u16[(row >> 1) + k]));
#elif defined(A_QK_K)
    const uint blk = row + (k / 256u) * A_BLOCK_BYTES;
    const uint p = k % 256u;
    const uint l = p % 32u;
#if defined(A_Q2_K)
    // scales 0..15, qs 16..79, d 80, dmin 82
    const uint q = (a_byte(blk + 16u + 32u * (p / 128u) + l) >> (2u * ((p / 32u) % 4u))) & 3u;
    const uint sc = a_byte(blk + p / 16u);
    return a_half(blk + 80u) * float(sc & 15u) * float(q) - a_half(blk + 82u) * float(sc >> 4);
#elif defined(A_Q3_K)
    // hmask 0..31, qs 32..95, scales 96..107, d 108
    const uint j = p / 16u;
    const uint lo = j < 8u ? a_byte(blk + 96u + j) & 15u : a_byte(blk + 88u + j) >> 4;
    const uint hi = (a_byte(blk + 104u + j % 4u) >> (2u * (j / 4u))) & 3u;
    const int sc = int(lo | (hi << 4)) - 32;
    const int q = int((a_byte(blk + 32u + 32u * (p / 128u) + l) >> (2u * ((p / 32u) % 4u))) & 3u) -
                  (((a_byte(blk + l) >> (p / 32u)) & 1u) != 0u ? 0 : 4);
    return a_half(blk + 108u) * float(sc) * float(q);
#elif defined(A_Q4_K) || defined(A_Q5_K)
    // d 0, dmin 2, scales 4..15, (Q5_K: qh 16..47), qs
    const uint j = p / 32u;
    const uvec2 sm = a_scale_min_k4(blk + 4u, j);
#if defined(A_Q4_K)
    const uint q = (a_byte(blk + 16u + 32u * (j / 2u) + l) >> (4u * (j % 2u))) & 15u;
#else
    const uint q = ((a_byte(blk + 48u + 32u * (j / 2u) + l) >> (4u * (j % 2u))) & 15u) |
                   (((a_byte(blk + 16u + l) >> j) & 1u) << 4);
#endif
    return a_half(blk) * float(sm.x) * float(q) - a_half(blk + 2u) * float(sm.y);
#elif defined(A_Q6_K)
    // ql 0..127, qh 128..191, scales (int8) 192..207, d 208
    const uint h = p / 128u;
    const uint s = (p / 32u) % 4u;
    const uint lo = (a_byte(blk + 64u * h + 32u * (s & 1u) + l) >> (4u * (s / 2u))) & 15u;
    const uint hi = (a_byte(blk + 128u + 32u * h + l) >> (2u * s)) & 3u;
    const int sc = int(a_byte(blk + 192u + p / 16u) << 24) >> 24;
    return a_half(blk + 208u) * float(sc) * float(int(lo | (hi << 4)) - 32);
#elif defined(A_IQ4_XS)
    // d 0, scales_h (16 bits) 2, scales_l 4..7, qs 8..135
    const uint ib = p / 32u;
    const uint ls = ((a_byte(blk + 4u + ib / 2u) >> (4u * (ib % 2u))) & 15u) |
                    (((uint(a_u16[(blk >> 1) + 1u]) >> (2u * ib)) & 3u) << 4);
    const uint q = (a_byte(blk + 8u + 16u * ib + l % 16u) >> (l < 16u ? 0u : 4u)) & 15u;
    return a_half(blk) * float(int(ls) - 32) * A_KVALUES[q];
#endif
#else
    const uint blk = row + (k / 32u) * A_BLOCK_BYTES;
    const uint j   = k % 32u;
    const uint jl  = j % 16u;
    const uint sh  = j < 16u ? 0u : 4u;
#if defined(A_Q4_0)
    const uint q = (a_byte(blk + 2u + jl) >> sh) & 15u;
    return (float(q) - 8.0) * a_half(blk);
#elif defined(A_Q4_1)
    const uint q = (a_byte(blk + 4u + jl) >> sh) & 15u;
    return float(q) * a_half(blk) + a_half(blk + 2u);
#elif defined(A_Q5_0)
    const uint qh = a_byte(blk + 2u + j / 8u) >> (j % 8u);
    const uint q = ((a_byte(blk + 6u + jl) >> sh) & 15u) | ((qh & 1u) << 4);
    return (float(q) - 16.0) * a_half(blk);
#elif defined(A_Q5_1)
    const uint qh = a_byte(blk + 4u + j / 8u) >> (j % 8u);
    const uint q = ((a_byte(blk + 8u + jl) >> sh) & 15u) | ((qh & 1u) << 4);
    return float(q) * a_half(blk) + a_half(blk + 2u);
#elif defined(A_Q8_0)
    const int q = int(a_byte(blk + 2u + j) << 24) >> 24;
    return float(q) * a_half(blk);
#elif defined(A_IQ4_NL)
    return A_KVALUES[(a_byte(blk + 2u + jl) >> sh) & 15u] * a_half(blk);
#elif defined(A_MXFP4)
    // 2^(e - 128), e < 2 giving the subnormals (as ggml_e8m0_to_fp32_half)
    const uint e = a_byte(blk);
    const float scale = uintBitsToFloat(e < 2u ? 0x00200000u << e : (e - 1u) << 23);
    return A_KVALUES[(a_byte(blk + 1u + jl) >> sh) & 15u] * scale;
#endif
#endif
}

#if defined(A_QUANTIZED)
// elements k .. k+3 of a row (k a multiple of 4: they share a sub-block and
// its scale), for the matrix-vector kernel; Q4_K, Q5_K and Q6_K decode the
// scale once
vec4 a_elem4(uint row, uint k) {
#if defined(A_Q4_K) || defined(A_Q5_K)
    const uint blk = row + (k / 256u) * A_BLOCK_BYTES;
    const uint p = k % 256u;
    const uint j = p / 32u;
    const uvec2 sm = a_scale_min_k4(blk + 4u, j);
    const float dl = a_half(blk) * float(sm.x);
    const float ml = a_half(blk + 2u) * float(sm.y);
    const uint sh = 4u * (j % 2u);
#if defined(A_Q4_K)
    const uint q = blk + 16u + 32u * (j / 2u) + p % 32u;
    return vec4(dl * float((a_byte(q) >> sh) & 15u) - ml, dl * float((a_byte(q + 1u) >> sh) & 15u) - ml,
                dl * float((a_byte(q + 2u) >> sh) & 15u) - ml, dl * float((a_byte(q + 3u) >> sh) & 15u) - ml);
#else
    const uint q = blk + 48u + 32u * (j / 2u) + p % 32u;
    const uint qh = blk + 16u + p % 32u;
    vec4 v;
    [[unroll]] for (uint i = 0; i < 4u; i++) {
        v[i] = dl * float(((a_byte(q + i) >> sh) & 15u) | (((a_byte(qh + i) >> j) & 1u) << 4)) - ml;
    }
    return v;
#endif
#elif defined(A_Q6_K)
    const uint blk = row + (k / 256u) * A_BLOCK_BYTES;
    const uint p = k % 256u;
    const uint h = p / 128u;
    const uint s = (p / 32u) % 4u;
    const uint l = p % 32u;
    const float dl = a_half(blk + 208u) * float(int(a_byte(blk + 192u + p / 16u) << 24) >> 24);
    const uint ql = blk + 64u * h + 32u * (s & 1u) + l;
    const uint qh = blk + 128u + 32u * h + l;
    const uint sl = 4u * (s / 2u);
    const uint sh = 2u * s;
    vec4 v;
    [[unroll]] for (uint i = 0; i < 4u; i++) {
        v[i] = dl * float(int(((a_byte(ql + i) >> sl) & 15u) | (((a_byte(qh + i) >> sh) & 3u) << 4)) - 32);
    }
    return v;
#else
    return vec4(a_elem(row, k), a_elem(row, k + 1u), a_elem(row, k + 2u), a_elem(row, k + 3u));
#endif
}
#endif
