#version 450
// norm.comp: one workgroup per row of F32 values (contiguous within the row):
// NORM (mean and variance), RMS_NORM, L2_NORM, SUM_ROWS and MEAN (the sum alone).
// op: 0 NORM, 1 RMS_NORM, 2 L2_NORM, 3 SUM_ROWS, 4 MEAN.
#include "common.glsl"

#define WG 128
layout(local_size_x = WG) in;

layout(binding = 0) readonly  buffer A { float a[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint ne00, ne01, ne02, ne03;
    uint nb01, nb02, nb03;     // elements
    uint nb1, nb2, nb3;        // elements
    uint a_off, d_off;
    uint op;
    float eps;
} p;

shared float red[WG];

float block_sum(float v) {
    red[gl_LocalInvocationID.x] = v;
    barrier();
    [[unroll]] for (uint s = WG / 2; s > 0; s >>= 1) {
        if (gl_LocalInvocationID.x < s) {
            red[gl_LocalInvocationID.x] += red[gl_LocalInvocationID.x + s];
        }
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}

void main() {
    const uint row = group_index();
    if (row >= p.ne01 * p.ne02 * p.ne03) {
        return;
    }
    const uint i1 = row % p.ne01;
    const uint i2 = (row / p.ne01) % p.ne02;
    const uint i3 = row / (p.ne01 * p.ne02);
    const uint src = p.a_off + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
    const uint dst = p.d_off + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
    const uint tid = gl_LocalInvocationID.x;

    float s = 0.0;
    for (uint i = tid; i < p.ne00; i += WG) {
        s += a[src + i];
    }
    if (p.op >= 3) {
        s = block_sum(s);
        if (tid == 0) {
            d[dst] = p.op == 4 ? s / float(p.ne00) : s;
        }
        return;
    }
    float mean = 0.0;
    if (p.op == 0) {
        mean = block_sum(s) / float(p.ne00);
    }
    float sq = 0.0;
    for (uint i = tid; i < p.ne00; i += WG) {
        const float v = a[src + i] - mean;
        sq += v * v;
    }
    sq = block_sum(sq);
    float scale;
    if (p.op == 2) {
        scale = 1.0 / max(sqrt(sq), p.eps);
    } else {
        scale = inversesqrt(sq / float(p.ne00) + p.eps);
    }
    for (uint i = tid; i < p.ne00; i += WG) {
        d[dst + i] = (a[src + i] - mean) * scale;
    }
}
