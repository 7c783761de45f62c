#version 450
// soft_max.comp: SOFT_MAX of F32 rows, one workgroup per row:
// y = softmax(x*scale + slope*mask) with the optional mask (F32 or F16 by
// M_F16, broadcast over dims 2 and 3), ALiBi slopes when max_bias > 0, and
// the optional per-head sink logit that joins the normalisation only. A row
// whose logits are all -inf (and sink, if any, too) gives zeros.
#include "common.glsl"

#define WG 128
layout(local_size_x = WG) in;

layout(binding = 0) readonly  buffer A  { float a[]; };
layout(binding = 1) readonly  buffer MF { float m_f32[]; };
layout(binding = 1) readonly  buffer MH { uint16_t m_u16[]; };
layout(binding = 2) readonly  buffer S  { float sinks[]; };
layout(binding = 5)           buffer D  { float d[]; };

layout(push_constant) uniform PC {
    uint ne00, ne01, ne02, ne03;
    uint nb01, nb02, nb03;
    uint ne11, ne12, ne13;
    uint nb11, nb12, nb13;
    uint nb1, nb2, nb3;
    uint a_off, m_off, s_off, d_off;
    uint has_mask, has_sinks;
    float scale, max_bias, m0, m1;
    uint n_head_log2;
} p;

shared float red[WG];

float block_reduce(float v, bool is_max) {
    red[gl_LocalInvocationID.x] = v;
    barrier();
    [[unroll]] for (uint s = WG / 2; s > 0; s >>= 1) {
        if (gl_LocalInvocationID.x < s) {
            const float o = red[gl_LocalInvocationID.x + s];
            red[gl_LocalInvocationID.x] = is_max ? max(red[gl_LocalInvocationID.x], o) : red[gl_LocalInvocationID.x] + o;
        }
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}

float mask_at(uint i) {
#if defined(M_F16)
    return half_bits_to_float(uint(m_u16[i]));
#else
    return m_f32[i];
#endif
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
    const uint mrow = p.m_off + i1 * p.nb11 + (i2 % p.ne12) * p.nb12 + (i3 % p.ne13) * p.nb13;
    const uint tid = gl_LocalInvocationID.x;

    float slope = 1.0;
    if (p.max_bias > 0.0) {
        slope = i2 < p.n_head_log2 ? pow(p.m0, float(i2 + 1)) : pow(p.m1, float(2 * (i2 - p.n_head_log2) + 1));
    }

    const float NEG_INF = -1.0 / 0.0;
    float mx = NEG_INF;
    for (uint i = tid; i < p.ne00; i += WG) {
        float v = a[src + i] * p.scale;
        if (p.has_mask != 0) {
            v += slope * mask_at(mrow + i);
        }
        d[dst + i] = v;
        mx = max(mx, v);
    }
    mx = block_reduce(mx, true);
    float sink = 0.0;
    if (p.has_sinks != 0) {
        sink = sinks[p.s_off + i2];
        mx = max(mx, sink);
    }
    // every logit -inf (a fully masked row) and no finite sink: zeros, as
    // the CPU gives, rather than exp(-inf - -inf) = NaN. mx is the workgroup's
    // reduction, the same in every invocation, so all of them return here.
    if (mx == NEG_INF) {
        for (uint i = tid; i < p.ne00; i += WG) {
            d[dst + i] = 0.0;
        }
        return;
    }
    float sum = 0.0;
    for (uint i = tid; i < p.ne00; i += WG) {
        const float e = exp(d[dst + i] - mx);
        d[dst + i] = e;
        sum += e;
    }
    sum = block_reduce(sum, false);
    if (p.has_sinks != 0) {
        sum += exp(sink - mx);
    }
    const float inv = 1.0 / sum;
    for (uint i = tid; i < p.ne00; i += WG) {
        d[dst + i] *= inv;
    }
}
