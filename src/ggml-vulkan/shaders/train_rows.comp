#version 450
// train_rows.comp: the row-wise backward ops, one workgroup per row of the
// result (F32, rows contiguous); the sources are read with any strides
// (gradients often arrive transposed or permuted). op:
//   0 SILU_BACK                a dy, b x
//   1 RMS_NORM_BACK            a dy, b x, p0 eps
//   2 SOFT_MAX_BACK            a dy, b y = softmax(scale x), p0 scale
//   3 CROSS_ENTROPY_LOSS_BACK  a the loss gradient (one value), b logits,
//                              c labels, p0 1 / rows
#include "common.glsl"

#define WG 128
layout(local_size_x = WG) in;

layout(binding = 0) readonly  buffer A { float a[]; };
layout(binding = 1) readonly  buffer B { float b[]; };
layout(binding = 2) readonly  buffer C { float c[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;
    uint nba0, nba1, nba2, nba3;   // elements
    uint nbb0, nbb1, nbb2, nbb3;
    uint nbc0, nbc1, nbc2, nbc3;
    uint nb1, nb2, nb3;            // the result's rows
    uint a_off, b_off, c_off, d_off;
    uint op;
    float p0;
} p;

shared float red[WG];

// op 0 sums, op 1 takes the maximum, over the workgroup
float block_reduce(float v, uint op) {
    red[gl_LocalInvocationID.x] = v;
    barrier();
    [[unroll]] for (uint s = WG / 2; s > 0; s >>= 1) {
        if (gl_LocalInvocationID.x < s) {
            const float o = red[gl_LocalInvocationID.x + s];
            red[gl_LocalInvocationID.x] = op == 0 ? red[gl_LocalInvocationID.x] + o : max(red[gl_LocalInvocationID.x], o);
        }
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}

void main() {
    const uint row = group_index();
    if (row >= p.ne1 * p.ne2 * p.ne3) {
        return;
    }
    const uint i1 = row % p.ne1;
    const uint i2 = (row / p.ne1) % p.ne2;
    const uint i3 = row / (p.ne1 * p.ne2);
    const uint ra = p.a_off + i1 * p.nba1 + i2 * p.nba2 + i3 * p.nba3;
    const uint rb = p.b_off + i1 * p.nbb1 + i2 * p.nbb2 + i3 * p.nbb3;
    const uint rc = p.c_off + i1 * p.nbc1 + i2 * p.nbc2 + i3 * p.nbc3;
    const uint rd = p.d_off + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
    const uint tid = gl_LocalInvocationID.x;

    if (p.op == 0) {
        for (uint i = tid; i < p.ne0; i += WG) {
            const float x = b[rb + i * p.nbb0];
            const float s = 1.0 / (1.0 + exp(-x));
            d[rd + i] = a[ra + i * p.nba0] * s * (1.0 + x * (1.0 - s));
        }
    } else if (p.op == 1) {
        // r = sqrt(mean(x^2) + eps): dx = dy / r - x sum(dy x) / (n r^3)
        float sxx = 0.0;
        float sxg = 0.0;
        for (uint i = tid; i < p.ne0; i += WG) {
            const float x = b[rb + i * p.nbb0];
            sxx += x * x;
            sxg += x * a[ra + i * p.nba0];
        }
        sxx = block_reduce(sxx, 0);
        sxg = block_reduce(sxg, 0);
        const float mean_eps = sxx / float(p.ne0) + p.p0;
        const float rinv = inversesqrt(mean_eps);
        const float k = -sxg / (float(p.ne0) * mean_eps) * rinv;
        for (uint i = tid; i < p.ne0; i += WG) {
            d[rd + i] = a[ra + i * p.nba0] * rinv + b[rb + i * p.nbb0] * k;
        }
    } else if (p.op == 2) {
        // dx = scale y (dy - dot(y, dy))
        float dot_ = 0.0;
        for (uint i = tid; i < p.ne0; i += WG) {
            dot_ += a[ra + i * p.nba0] * b[rb + i * p.nbb0];
        }
        dot_ = block_reduce(dot_, 0);
        for (uint i = tid; i < p.ne0; i += WG) {
            d[rd + i] = p.p0 * b[rb + i * p.nbb0] * (a[ra + i * p.nba0] - dot_);
        }
    } else {
        // d logits = (softmax(logits) - labels) grad / rows
        float mx = -1.0 / 0.0;
        for (uint i = tid; i < p.ne0; i += WG) {
            mx = max(mx, b[rb + i * p.nbb0]);
        }
        mx = block_reduce(mx, 1);
        float se = 0.0;
        for (uint i = tid; i < p.ne0; i += WG) {
            se += exp(b[rb + i * p.nbb0] - mx);
        }
        se = block_reduce(se, 0);
        const float lse = log(se) + mx;
        const float g = a[p.a_off] * p.p0;
        for (uint i = tid; i < p.ne0; i += WG) {
            d[rd + i] = (exp(b[rb + i * p.nbb0] - lse) - c[rc + i * p.nbc0]) * g;
        }
    }
}
