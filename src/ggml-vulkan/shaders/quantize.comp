#version 450
// quantize.comp: F32 values into Q8_0 or Q4_0 blocks (D_Q8_0 / D_Q4_0), one
// thread per block of 32, for CPY/CONT/DUP into a quantized tensor and (with
// SET_ROWS defined) SET_ROWS into quantized rows. The rounding is ggml's
// reference: Q8_0 d = max|x|/127, q = round(x/d); Q4_0 d = m/-8 where m is
// the value of largest magnitude, q = min(15, int(x/d + 8.5)).
// CPY: element i (row-major) of src0, any strides, goes to element i of dst.
// SET_ROWS: src0 row (i01, i02, i03) goes to dst row idx[i01, i02 % ne11, i03 % ne12], I64 indices.
#include "common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly  buffer A  { float a[]; };
layout(binding = 1) readonly  buffer I  { int idx[]; };
layout(binding = 5) writeonly buffer D8 { uint8_t d8[]; };
layout(binding = 5) writeonly buffer DH { uint16_t d16[]; };

layout(push_constant) uniform PC {
    uint ne00, ne01, ne02, ne03;
    uint nb00, nb01, nb02, nb03;  // floats
    uint ne0, ne1, ne2;           // dst
    uint nb1, nb2, nb3;           // bytes
    uint ne11, ne12;
    uint nb10, nb11, nb12;        // elements of the index type
    uint a_off, i_off, d_off;     // floats, index elements, bytes
    uint idx64;
} p;

#if defined(D_Q8_0)
#define BLOCK_BYTES 34u
#else
#define BLOCK_BYTES 18u
#endif

void main() {
    const uint b = group_index() * 64u + gl_LocalInvocationID.x;
    if (b >= p.ne00 * p.ne01 * p.ne02 * p.ne03 / 32u) {
        return;
    }
    float x[32];
    uint dst;
#if defined(SET_ROWS)
    const uint blocks_per_row = p.ne00 / 32u;
    const uint j  = b % blocks_per_row;
    const uint r  = b / blocks_per_row;
    const uint i1 = r % p.ne01;
    const uint i2 = (r / p.ne01) % p.ne02;
    const uint i3 = r / (p.ne01 * p.ne02);
    uint k = p.i_off + i1 * p.nb10 + (i2 % p.ne11) * p.nb11 + (i3 % p.ne12) * p.nb12;
    if (p.idx64 != 0) {
        k *= 2u;
    }
    const uint row = uint(idx[k]);
    const uint src = p.a_off + 32u * j * p.nb00 + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
    [[unroll]] for (uint l = 0; l < 32u; l++) {
        x[l] = a[src + l * p.nb00];
    }
    dst = p.d_off + j * BLOCK_BYTES + row * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
#else
    const uint e0 = 32u * b;
    [[unroll]] for (uint l = 0; l < 32u; l++) {
        const uint e = e0 + l;
        const uint i00 = e % p.ne00;
        const uint i01 = (e / p.ne00) % p.ne01;
        const uint i02 = (e / (p.ne00 * p.ne01)) % p.ne02;
        const uint i03 = e / (p.ne00 * p.ne01 * p.ne02);
        x[l] = a[p.a_off + i00 * p.nb00 + i01 * p.nb01 + i02 * p.nb02 + i03 * p.nb03];
    }
    const uint j  = (e0 % p.ne0) / 32u;
    const uint r  = e0 / p.ne0;
    dst = p.d_off + j * BLOCK_BYTES + (r % p.ne1) * p.nb1 + ((r / p.ne1) % p.ne2) * p.nb2 + (r / (p.ne1 * p.ne2)) * p.nb3;
#endif

#if defined(D_Q8_0)
    float amax = 0.0;
    [[unroll]] for (uint l = 0; l < 32u; l++) {
        amax = max(amax, abs(x[l]));
    }
    const float dd = amax / 127.0;
    const float id = dd != 0.0 ? 1.0 / dd : 0.0;
    d16[dst >> 1] = uint16_t(float_to_half_bits(dd));
    [[unroll]] for (uint l = 0; l < 32u; l++) {
        const float v = x[l] * id; // rounded half away from zero, as roundf
        d8[dst + 2u + l] = uint8_t(uint(int(sign(v) * floor(abs(v) + 0.5))) & 255u);
    }
#else
    float amax = 0.0;
    float mx = 0.0;
    [[unroll]] for (uint l = 0; l < 32u; l++) {
        if (abs(x[l]) > amax) {
            amax = abs(x[l]);
            mx = x[l];
        }
    }
    const float dd = mx / -8.0;
    const float id = dd != 0.0 ? 1.0 / dd : 0.0;
    d16[dst >> 1] = uint16_t(float_to_half_bits(dd));
    [[unroll]] for (uint l = 0; l < 16u; l++) {
        const uint q0 = min(15u, uint(int(x[l] * id + 8.5)));
        const uint q1 = min(15u, uint(int(x[l + 16u] * id + 8.5)));
        d8[dst + 2u + l] = uint8_t(q0 | (q1 << 4));
    }
#endif
}
