#version 450
// glu.comp: GLU (SWIGLU, GEGLU, REGLU, GEGLU_ERF, GEGLU_QUICK), F32 or F16
// (f16: sources and dst alike), one thread per value of dst:
// dst = act(a) * b, a and b either the two halves of a src0 row (swapped
// picks which half is a) or rows of src0 and src1.
// op: 0 REGLU, 1 GEGLU, 2 SWIGLU, 3 GEGLU_ERF, 4 GEGLU_QUICK.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(binding = 0) readonly  buffer A  { float a_f32[]; };
layout(binding = 0) readonly  buffer AH { uint16_t a_u16[]; };
layout(binding = 1) readonly  buffer B  { float b_f32[]; };
layout(binding = 1) readonly  buffer BH { uint16_t b_u16[]; };
layout(binding = 5) writeonly buffer D  { float d_f32[]; };
layout(binding = 5) writeonly buffer DH { uint16_t d_u16[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;   // dst
    uint nb01, nb02, nb03;     // elements
    uint nb11, nb12, nb13;
    uint nb1, nb2, nb3;
    uint a_off, b_off, d_off;
    uint op, swapped, has_b, f16;
} p;

float a(uint i) {
    return p.f16 != 0 ? half_bits_to_float(uint(a_u16[i])) : a_f32[i];
}

float b(uint i) {
    return p.f16 != 0 ? half_bits_to_float(uint(b_u16[i])) : b_f32[i];
}

void main() {
    const uint t = group_index() * 256u + gl_LocalInvocationID.x;
    if (t >= p.ne0 * p.ne1 * p.ne2 * p.ne3) {
        return;
    }
    const uint i0 = t % p.ne0;
    const uint i1 = (t / p.ne0) % p.ne1;
    const uint i2 = (t / (p.ne0 * p.ne1)) % p.ne2;
    const uint i3 = t / (p.ne0 * p.ne1 * p.ne2);
    const uint ra = p.a_off + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
    float x;
    float g;
    if (p.has_b != 0) {
        const float u = a(ra + i0);
        const float v = b(p.b_off + i1 * p.nb11 + i2 * p.nb12 + i3 * p.nb13 + i0);
        x = p.swapped != 0 ? v : u;
        g = p.swapped != 0 ? u : v;
    } else {
        x = a(ra + i0 + (p.swapped != 0 ? p.ne0 : 0u));
        g = a(ra + i0 + (p.swapped != 0 ? 0u : p.ne0));
    }
    float y;
    if (p.op == 0) {
        y = max(x, 0.0);
    } else if (p.op == 1) {
        const float t3 = tanh(clamp(0.7978845608028654 * x * (1.0 + 0.044715 * x * x), -15.0, 15.0));
        y = 0.5 * x * (1.0 + t3);
    } else if (p.op == 2) {
        y = x / (1.0 + exp(-x));
    } else if (p.op == 3) {
        y = 0.5 * x * (1.0 + erf_approx(x * 0.7071067811865476));
    } else {
        y = x / (1.0 + exp(-1.702 * x));
    }
    const uint di = p.d_off + i0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
    if (p.f16 != 0) {
        d_u16[di] = uint16_t(float_to_half_bits(y * g));
    } else {
        d_f32[di] = y * g;
    }
}
