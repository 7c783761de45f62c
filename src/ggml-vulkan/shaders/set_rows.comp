#version 450
// set_rows.comp: SET_ROWS, one thread per value of src0 (F32):
// dst[i0, idx[i01, i02 % ne11, i03 % ne12], i02, i03] = src0[i0, i01, i02, i03],
// idx I64 (I_I64, the low word read) or I32, dst F32/F16/BF16 by D_*.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(binding = 0) readonly  buffer A  { float a[]; };
layout(binding = 1) readonly  buffer I  { int idx[]; };
layout(binding = 5) writeonly buffer DF { float d_f32[]; };
layout(binding = 5) writeonly buffer DH { uint16_t d_u16[]; };

layout(push_constant) uniform PC {
    uint ne00, ne01, ne02, ne03;
    uint nb01, nb02, nb03;  // elements
    uint ne11, ne12;
    uint nb10, nb11, nb12;  // elements of idx's type
    uint nb1, nb2, nb3;     // elements of dst
    uint a_off, i_off, d_off;
} p;

void write_d(uint i, float v) {
#if defined(D_F32)
    d_f32[i] = v;
#elif defined(D_F16)
    d_u16[i] = uint16_t(float_to_half_bits(v));
#else
    d_u16[i] = uint16_t(float_to_bf16_bits(v));
#endif
}

void main() {
    const uint t = group_index() * 256u + gl_LocalInvocationID.x;
    if (t >= p.ne00 * p.ne01 * p.ne02 * p.ne03) {
        return;
    }
    const uint i0 = t % p.ne00;
    const uint i1 = (t / p.ne00) % p.ne01;
    const uint i2 = (t / (p.ne00 * p.ne01)) % p.ne02;
    const uint i3 = t / (p.ne00 * p.ne01 * p.ne02);
    uint k = p.i_off + i1 * p.nb10 + (i2 % p.ne11) * p.nb11 + (i3 % p.ne12) * p.nb12;
#if defined(I_I64)
    k *= 2u;
#endif
    const uint r = uint(idx[k]);
    write_d(p.d_off + i0 + r * p.nb1 + i2 * p.nb2 + i3 * p.nb3, a[p.a_off + i0 + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03]);
}
