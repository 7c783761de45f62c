// types.glsl: reading element k of a row of binding A_BINDING in any weight
// type (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0), chosen by one define
// (A_F32, A_F16, ...). row is the row's byte offset in the binding; for the
// quantized types it must be even (block starts are: 18, 20, 22, 24, 34 bytes).
// Block layouts are ggml's: an F16 scale d (and minimum m for _1), then for
// _0/_1 the low nibbles hold elements 0..15 and the high ones 16..31; Q5
// adds a 32-bit mask qh of fifth bits; Q8_0 holds 32 signed bytes.

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
#else
#error "no A type"
#endif

float a_elem(uint row, uint k) {
#if defined(A_F32)
    return a_f32[(row >> 2) + k];
#elif defined(A_F16)
    return half_bits_to_float(uint(a_u16[(row >> 1) + k]));
#elif defined(A_BF16)
    return bf16_bits_to_float(uint(a_u16[(row >> 1) + k]));
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
#endif
#endif
}
