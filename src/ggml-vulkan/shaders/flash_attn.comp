#version 450
// flash_attn.comp: FLASH_ATTN_EXT with F32 q, F16 K and V (KV_F32: F32), the
// optional F16 mask (broadcast over dims 2 and 3) and F32 sinks. One
// workgroup of 64 threads per (query row, head, i3); the keys are walked in
// blocks of 64 with an online softmax (running maximum M and sum S, the
// value accumulator rescaled when M grows). Keys whose mask is -inf take no
// part; a row with every key masked and no sink gives zeros (as the CPU).
// dst is stored permuted: dst[:, h, i, i3], contiguous.
#include "common.glsl"

#define WG 64
#define MAX_D 256
layout(local_size_x = WG) in;

layout(binding = 0) readonly  buffer Q  { float q[]; };
layout(binding = 1) readonly  buffer KH { uint16_t k_u16[]; };
layout(binding = 1) readonly  buffer KF { float k_f32[]; };
layout(binding = 2) readonly  buffer VH { uint16_t v_u16[]; };
layout(binding = 2) readonly  buffer VF { float v_f32[]; };
layout(binding = 3) readonly  buffer M  { uint16_t m_u16[]; };
layout(binding = 4) readonly  buffer S  { float sinks[]; };
layout(binding = 5) writeonly buffer D  { float d[]; };

layout(push_constant) uniform PC {
    uint Dk, Dv, n_q, n_head, n_kv, n_q3;
    uint nbq1, nbq2, nbq3;     // elements
    uint nbk1, nbk2, nbk3;
    uint nbv1, nbv2, nbv3;
    uint nbm1, nbm2, nbm3;
    uint nem2, nem3;
    uint rk2, rk3;             // q heads (and i3) per K/V head
    float scale, softcap, m0, m1;
    uint n_head_log2;
    uint flags;                // 1: mask, 2: sinks
    uint offs_qkvm;            // remainders in elements, 8 bits each: q, k, v, mask
    uint offs_sd;              // sinks, dst
} p;

shared float qs[MAX_D];
shared float ps[WG];
shared float red[WG];

float kv_read_k(uint i) {
#if defined(KV_F32)
    return k_f32[i];
#else
    return half_bits_to_float(uint(k_u16[i]));
#endif
}

float kv_read_v(uint i) {
#if defined(KV_F32)
    return v_f32[i];
#else
    return half_bits_to_float(uint(v_u16[i]));
#endif
}

float block_max(float v) {
    red[gl_LocalInvocationID.x] = v;
    barrier();
    [[unroll]] for (uint s = WG / 2; s > 0; s >>= 1) {
        if (gl_LocalInvocationID.x < s) {
            red[gl_LocalInvocationID.x] = max(red[gl_LocalInvocationID.x], red[gl_LocalInvocationID.x + s]);
        }
        barrier();
    }
    const float r = red[0];
    barrier();
    return r;
}

void main() {
    const uint g = group_index();
    if (g >= p.n_q * p.n_head * p.n_q3) {
        return;
    }
    const uint i  = g % p.n_q;
    const uint h  = (g / p.n_q) % p.n_head;
    const uint i3 = g / (p.n_q * p.n_head);
    const uint tid = gl_LocalInvocationID.x;
    const float NEG_INF = -1.0 / 0.0;

    const uint q_off = p.offs_qkvm & 255u;
    const uint k_off = (p.offs_qkvm >> 8) & 255u;
    const uint v_off = (p.offs_qkvm >> 16) & 255u;
    const uint m_off = p.offs_qkvm >> 24;
    const uint s_off = p.offs_sd & 255u;
    const uint d_off = p.offs_sd >> 8;

    const uint q_row = q_off + i * p.nbq1 + h * p.nbq2 + i3 * p.nbq3;
    for (uint c = tid; c < p.Dk; c += WG) {
        qs[c] = q[q_row + c];
    }
    barrier();

    const uint k_base = k_off + (h / p.rk2) * p.nbk2 + (i3 / p.rk3) * p.nbk3;
    const uint v_base = v_off + (h / p.rk2) * p.nbv2 + (i3 / p.rk3) * p.nbv3;
    const uint m_row  = m_off + i * p.nbm1 + (h % p.nem2) * p.nbm2 + (i3 % p.nem3) * p.nbm3;

    float slope = 1.0;
    if (p.m0 != 0.0 || p.m1 != 0.0) {
        slope = h < p.n_head_log2 ? pow(p.m0, float(h + 1)) : pow(p.m1, float(2 * (h - p.n_head_log2) + 1));
    }

    float acc[MAX_D / WG];
    [[unroll]] for (uint c = 0; c < MAX_D / WG; c++) {
        acc[c] = 0.0;
    }
    float Mx = NEG_INF;
    float Sm = 0.0;

    for (uint j0 = 0; j0 < p.n_kv; j0 += WG) {
        const uint j = j0 + tid;
        float s = NEG_INF;
        if (j < p.n_kv) {
            float mv = 0.0;
            if ((p.flags & 1u) != 0) {
                mv = half_bits_to_float(uint(m_u16[m_row + j]));
            }
            if (mv != NEG_INF) {
                const uint kr = k_base + j * p.nbk1;
                float dot = 0.0;
                for (uint c = 0; c < p.Dk; c++) {
                    dot += qs[c] * kv_read_k(kr + c);
                }
                s = dot * p.scale;
                if (p.softcap != 0.0) {
                    s = p.softcap * tanh(s);
                }
                s += slope * mv;
            }
        }
        const float bm = block_max(s);
        const float newM = max(Mx, bm);
        if (newM == NEG_INF) {
            continue; // every key so far masked
        }
        const float pj = s == NEG_INF ? 0.0 : exp(s - newM);
        const float f = Mx == NEG_INF ? 0.0 : exp(Mx - newM);
        ps[tid] = pj;
        barrier();
        float bsum = 0.0;
        const uint nj = min(uint(WG), p.n_kv - j0);
        for (uint t = 0; t < nj; t++) {
            bsum += ps[t];
        }
        [[unroll]] for (uint c = 0; c < MAX_D / WG; c++) {
            const uint dd = tid + c * WG;
            if (dd < p.Dv) {
                float a = acc[c] * f;
                for (uint t = 0; t < nj; t++) {
                    const float pt = ps[t];
                    if (pt != 0.0) {
                        a += pt * kv_read_v(v_base + (j0 + t) * p.nbv1 + dd);
                    }
                }
                acc[c] = a;
            }
        }
        Sm = Sm * f + bsum;
        Mx = newM;
        barrier();
    }

    if ((p.flags & 2u) != 0) {
        const float sink = sinks[s_off + h];
        const float newM = max(Mx, sink);
        const float f = Mx == NEG_INF ? 0.0 : exp(Mx - newM);
        [[unroll]] for (uint c = 0; c < MAX_D / WG; c++) {
            acc[c] *= f;
        }
        Sm = Sm * f + exp(sink - newM);
    }
    const float inv = Sm == 0.0 ? 0.0 : 1.0 / Sm;
    const uint out_row = d_off + (h + p.n_head * (i + p.n_q * i3)) * p.Dv;
    [[unroll]] for (uint c = 0; c < MAX_D / WG; c++) {
        const uint dd = tid + c * WG;
        if (dd < p.Dv) {
            d[out_row + dd] = acc[c] * inv;
        }
    }
}
