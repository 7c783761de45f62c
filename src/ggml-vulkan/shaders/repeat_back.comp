#version 450
// repeat_back.comp: REPEAT_BACK, one thread per element of the result: the
// sum of the source over the copies that ggml_repeat made of it (the source
// is nr0 x nr1 x nr2 x nr3 times the result). F32, any strides.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(binding = 0) readonly  buffer A { float a[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;       // the result
    uint nr0, nr1, nr2, nr3;
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
    float sum = 0.0;
    for (uint k3 = 0; k3 < p.nr3; k3++) {
        for (uint k2 = 0; k2 < p.nr2; k2++) {
            for (uint k1 = 0; k1 < p.nr1; k1++) {
                const uint base = p.a_off + (i1 + k1 * p.ne1) * p.nba1 + (i2 + k2 * p.ne2) * p.nba2 + (i3 + k3 * p.ne3) * p.nba3;
                for (uint k0 = 0; k0 < p.nr0; k0++) {
                    sum += a[base + (i0 + k0 * p.ne0) * p.nba0];
                }
            }
        }
    }
    d[p.d_off + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3] = sum;
}
