#version 450
// count_equal.comp: COUNT_EQUAL, one workgroup: the number of positions
// where two I32 tensors (any strides) hold the same value, written as the
// I64 result (low word the count, high word 0: counts fit 32 bits, since
// element counts do).
#include "common.glsl"

#define WG 256
layout(local_size_x = WG) in;

layout(binding = 0) readonly  buffer A { int a[]; };
layout(binding = 1) readonly  buffer B { int b[]; };
layout(binding = 5) writeonly buffer D { uint d[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;
    uint nba0, nba1, nba2, nba3;   // elements
    uint nbb0, nbb1, nbb2, nbb3;
    uint a_off, b_off, d_off;
} p;

shared uint red[WG];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint n = p.ne0 * p.ne1 * p.ne2 * p.ne3;
    uint count = 0;
    for (uint e = tid; e < n; e += WG) {
        const uint i0 = e % p.ne0;
        const uint i1 = (e / p.ne0) % p.ne1;
        const uint i2 = (e / (p.ne0 * p.ne1)) % p.ne2;
        const uint i3 = e / (p.ne0 * p.ne1 * p.ne2);
        const int va = a[p.a_off + i0 * p.nba0 + i1 * p.nba1 + i2 * p.nba2 + i3 * p.nba3];
        const int vb = b[p.b_off + i0 * p.nbb0 + i1 * p.nbb1 + i2 * p.nbb2 + i3 * p.nbb3];
        count += va == vb ? 1u : 0u;
    }
    red[tid] = count;
    barrier();
    [[unroll]] for (uint s = WG / 2; s > 0; s >>= 1) {
        if (tid < s) {
            red[tid] += red[tid + s];
        }
        barrier();
    }
    if (tid == 0) {
        d[p.d_off]     = red[0];
        d[p.d_off + 1] = 0u;
    }
}
