#version 450
// argmax.comp: ARGMAX, one workgroup per row of F32 values (any strides):
// the I32 index of the row's largest value, the first one on ties (as the
// CPU: a later value must be strictly larger).
#include "common.glsl"

#define WG 128
layout(local_size_x = WG) in;

layout(binding = 0) readonly  buffer A { float a[]; };
layout(binding = 5) writeonly buffer D { int d[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;
    uint nba0, nba1, nba2, nba3;   // elements
    uint a_off, d_off;
} p;

shared float red_v[WG];
shared uint  red_i[WG];

void main() {
    const uint row = group_index();
    if (row >= p.ne1 * p.ne2 * p.ne3) {
        return;
    }
    const uint i1 = row % p.ne1;
    const uint i2 = (row / p.ne1) % p.ne2;
    const uint i3 = row / (p.ne1 * p.ne2);
    const uint ra = p.a_off + i1 * p.nba1 + i2 * p.nba2 + i3 * p.nba3;
    const uint tid = gl_LocalInvocationID.x;

    float best = -1.0 / 0.0;
    uint best_i = 0xffffffffu;
    for (uint i = tid; i < p.ne0; i += WG) {
        const float v = a[ra + i * p.nba0];
        if (best_i == 0xffffffffu || v > best) {
            best = v;
            best_i = i;
        }
    }
    red_v[tid] = best;
    red_i[tid] = best_i;
    barrier();
    [[unroll]] for (uint s = WG / 2; s > 0; s >>= 1) {
        if (tid < s) {
            const float ov = red_v[tid + s];
            const uint  oi = red_i[tid + s];
            // take the other one when it holds a larger value, or an equal value at a smaller index
            if (oi != 0xffffffffu && (red_i[tid] == 0xffffffffu || ov > red_v[tid] || (ov == red_v[tid] && oi < red_i[tid]))) {
                red_v[tid] = ov;
                red_i[tid] = oi;
            }
        }
        barrier();
    }
    if (tid == 0) {
        d[p.d_off + row] = int(red_i[0]);
    }
}
