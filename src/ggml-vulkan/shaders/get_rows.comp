#version 450
// get_rows.comp: GET_ROWS, one thread per value of dst (F32):
// dst[i0, i10, i11, i12] = src0[i0, rows[i10, i11, i12], i11, i12], src0 in any
// type of types.glsl, rows I32.
#include "common.glsl"
#define A_BINDING 0
#include "types.glsl"

layout(local_size_x = 256) in;

layout(binding = 1) readonly  buffer R { int rows[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint ne00, ne10, ne11, ne12;
    uint nb01, nb02, nb03;  // bytes
    uint nb10, nb11, nb12;  // elements
    uint nb1, nb2, nb3;     // elements
    uint a_off, r_off, d_off;
} p;

void main() {
    const uint t = group_index() * 256u + gl_LocalInvocationID.x;
    if (t >= p.ne00 * p.ne10 * p.ne11 * p.ne12) {
        return;
    }
    const uint i0  = t % p.ne00;
    const uint i10 = (t / p.ne00) % p.ne10;
    const uint i11 = (t / (p.ne00 * p.ne10)) % p.ne11;
    const uint i12 = t / (p.ne00 * p.ne10 * p.ne11);
    const uint r = uint(rows[p.r_off + i10 * p.nb10 + i11 * p.nb11 + i12 * p.nb12]);
    const float v = a_elem(p.a_off + r * p.nb01 + i11 * p.nb02 + i12 * p.nb03, i0);
    d[p.d_off + i0 + i10 * p.nb1 + i11 * p.nb2 + i12 * p.nb3] = v;
}
