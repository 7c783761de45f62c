#version 450
// cross_entropy.comp: CROSS_ENTROPY_LOSS, one workgroup for the whole loss:
// -sum over rows of sum(labels * log_softmax(logits)) / rows, a logits and
// b labels read with any strides, the result one F32 value. A label of 0
// adds nothing (0 log 0 is 0 here, not NaN), as on the CPU.
#include "common.glsl"

#define WG 256
layout(local_size_x = WG) in;

layout(binding = 0) readonly  buffer A { float a[]; };
layout(binding = 1) readonly  buffer B { float b[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;
    uint nba0, nba1, nba2, nba3;   // elements
    uint nbb0, nbb1, nbb2, nbb3;
    uint a_off, b_off, d_off;
} p;

shared float red[WG];

float block_reduce(float v, bool take_max) {
    red[gl_LocalInvocationID.x] = v;
    barrier();
    [[unroll]] for (uint s = WG / 2; s > 0; s >>= 1) {
        if (gl_LocalInvocationID.x < s) {
            const float o = red[gl_LocalInvocationID.x + s];
            red[gl_LocalInvocationID.x] = take_max ? max(red[gl_LocalInvocationID.x], o) : red[gl_LocalInvocationID.x] + o;
        }
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint nrows = p.ne1 * p.ne2 * p.ne3;
    float total = 0.0; // meaningful in thread 0 only
    for (uint row = 0; row < nrows; row++) {
        const uint i1 = row % p.ne1;
        const uint i2 = (row / p.ne1) % p.ne2;
        const uint i3 = row / (p.ne1 * p.ne2);
        const uint ra = p.a_off + i1 * p.nba1 + i2 * p.nba2 + i3 * p.nba3;
        const uint rb = p.b_off + i1 * p.nbb1 + i2 * p.nbb2 + i3 * p.nbb3;
        float mx = -1.0 / 0.0;
        for (uint i = tid; i < p.ne0; i += WG) {
            mx = max(mx, a[ra + i * p.nba0]);
        }
        mx = block_reduce(mx, true);
        float se = 0.0;
        for (uint i = tid; i < p.ne0; i += WG) {
            se += exp(a[ra + i * p.nba0] - mx);
        }
        const float lse = log(block_reduce(se, false)) + mx;
        float s = 0.0;
        for (uint i = tid; i < p.ne0; i += WG) {
            const float t = b[rb + i * p.nbb0];
            if (t != 0.0) {
                s += t * (a[ra + i * p.nba0] - lse);
            }
        }
        total += block_reduce(s, false);
    }
    if (tid == 0) {
        d[p.d_off] = -total / float(nrows);
    }
}
