#version 450
// out_prod.comp: OUT_PROD, one thread per element of the F32 result:
// d[i0, i1, i2, i3] = sum over k of a[i0, k, i2 / r2, i3 / r3] b[i1, k, i2, i3]
// (a broadcast over dims 2 and 3), F32 sources of any strides.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(binding = 0) readonly  buffer A { float a[]; };
layout(binding = 1) readonly  buffer B { float b[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;       // the result
    uint K, r2, r3;
    uint nba0, nba1, nba2, nba3;   // elements
    uint nbb0, nbb1, nbb2, nbb3;
    uint nb0, nb1, nb2, nb3;
    uint a_off, b_off, d_off;
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
    const uint ra = p.a_off + i0 * p.nba0 + (i2 / p.r2) * p.nba2 + (i3 / p.r3) * p.nba3;
    const uint rb = p.b_off + i1 * p.nbb0 + i2 * p.nbb2 + i3 * p.nbb3;
    float sum = 0.0;
    for (uint k = 0; k < p.K; k++) {
        sum += a[ra + k * p.nba1] * b[rb + k * p.nbb1];
    }
    d[p.d_off + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3] = sum;
}
