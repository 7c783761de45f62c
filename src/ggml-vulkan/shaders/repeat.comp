#version 450
// repeat.comp: REPEAT, one thread per element of the F32 result: the source
// element it repeats (indices modulo the source's sizes), any strides.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(binding = 0) readonly  buffer A { float a[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;       // the result
    uint ne00, ne01, ne02, ne03;   // the source
    uint nba0, nba1, nba2, nba3;   // elements
    uint nb0, nb1, nb2, nb3;
    uint a_off, d_off;
} p;

void main() {
    const uint idx = group_index() * 256 + gl_LocalInvocationID.x;
    if (idx >= p.ne0 * p.ne1 * p.ne2 * p.ne3) {
        return;
    }
    const uint i0 = idx % p.ne0;
    const uint i1 = (idx / p.ne0) % p.ne1;
    const uint i2 = (idx / (p.ne0 * p.ne1)) % p.ne2;
    const uint i3 = idx / (p.ne0 * p.ne1 * p.ne2);
    d[p.d_off + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3] =
        a[p.a_off + (i0 % p.ne00) * p.nba0 + (i1 % p.ne01) * p.nba1 + (i2 % p.ne02) * p.nba2 + (i3 % p.ne03) * p.nba3];
}
