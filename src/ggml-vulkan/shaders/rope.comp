#version 450
// rope.comp: ROPE, one thread per rotated pair or copied value, F32 or F16
// data (A_F16 for both). Pair i of a token at position pos turns by
// theta = pos * theta_scale^e_i / ff_i with the YaRN correction (see
// ops-rope.c of the CPU backend for the formulas); values beyond the rotated
// range are copied. mode: 0 NORMAL (pairs 2i, 2i+1), 1 NEOX (i, i + n_dims/2),
// 2 MROPE and 3 IMROPE (as NEOX, the position of pair i is one of four by
// section of i, consecutive or interleaved), 4 VISION (pairs i, i + n_dims,
// e_i restarting at each section). Single-position modes: e_i = i.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(binding = 0) readonly  buffer AF { float a_f32[]; };
layout(binding = 0) readonly  buffer AH { uint16_t a_u16[]; };
layout(binding = 1) readonly  buffer P  { int pos[]; };
layout(binding = 2) readonly  buffer FF { float ff[]; };
layout(binding = 5) writeonly buffer DF { float d_f32[]; };
layout(binding = 5) writeonly buffer DH { uint16_t d_u16[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;
    uint nb01, nb02, nb03; // elements
    uint nb1, nb2, nb3;    // elements
    uint a_off, p_off, f_off, d_off;
    uint n_dims, mode, has_ff;
    uint s0, s1, s2, s3;       // sections of the multi-position modes
    float theta_scale, freq_scale, ext_factor, attn_factor, corr0, corr1;
} p;

float read_a(uint i) {
#if defined(A_F16)
    return half_bits_to_float(uint(a_u16[i]));
#else
    return a_f32[i];
#endif
}

void write_d(uint i, float v) {
#if defined(A_F16)
    d_u16[i] = uint16_t(float_to_half_bits(v));
#else
    d_f32[i] = v;
#endif
}

void main() {
    // pairs per row: the rotated ones, then the copied tail value by value
    const uint n_pairs = p.mode == 4 ? p.n_dims : p.n_dims / 2u;
    const uint rot_end = p.mode == 4 ? 2u * p.n_dims : p.n_dims;
    const uint per_row = n_pairs + (p.ne0 - rot_end);
    const uint t = group_index() * 256u + gl_LocalInvocationID.x;
    if (t >= per_row * p.ne1 * p.ne2 * p.ne3) {
        return;
    }
    const uint j  = t % per_row;
    const uint r  = t / per_row;
    const uint i1 = r % p.ne1;
    const uint i2 = (r / p.ne1) % p.ne2;
    const uint i3 = r / (p.ne1 * p.ne2);
    const uint src = p.a_off + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
    const uint dst = p.d_off + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;

    if (j >= n_pairs) {
        const uint k = rot_end + (j - n_pairs);
        write_d(dst + k, read_a(src + k));
        return;
    }
    const uint ia = p.mode == 0 ? 2u * j : j;
    const uint ib = p.mode == 0 ? 2u * j + 1u : j + n_pairs;

    // which of the four positions, and the exponent
    uint comp = 0;
    uint expo = j;
    if (p.mode >= 2) {
        const uint sect_dims = p.s0 + p.s1 + p.s2 + p.s3;
        const uint sec_w = p.s0 + p.s1;
        const uint sec_e = sec_w + p.s2;
        const uint sector = j % sect_dims;
        if (p.mode == 3) {
            if (sector % 3u == 1u && sector < 3u * p.s1) {
                comp = 1;
            } else if (sector % 3u == 2u && sector < 3u * p.s2) {
                comp = 2;
            } else if (sector % 3u == 0u && sector < 3u * p.s0) {
                comp = 0;
            } else {
                comp = 3;
            }
        } else {
            comp = sector >= sec_e ? 3u : sector >= sec_w ? 2u : sector >= p.s0 ? 1u : 0u;
        }
        if (p.mode == 4) {
            const uint start = comp == 0 ? 0u : comp == 1 ? p.s0 : comp == 2 ? sec_w : sec_e;
            expo = sector - start;
        }
    }
    const float f = p.has_ff != 0 ? ff[p.f_off + j] : 1.0;
    const float theta_extrap = float(pos[p.p_off + comp * p.ne2 + i2]) * pow(p.theta_scale, float(expo)) / f;
    float theta = p.freq_scale * theta_extrap;
    float mscale = p.attn_factor;
    if (p.ext_factor != 0.0) {
        const float y = (float(j) - p.corr0) / max(0.001, p.corr1 - p.corr0);
        const float mix = (1.0 - min(1.0, max(0.0, y))) * p.ext_factor;
        theta = theta * (1.0 - mix) + theta_extrap * mix;
        mscale *= 1.0 + 0.1 * log(1.0 / p.freq_scale);
    }
    const float c = cos(theta) * mscale;
    const float s = sin(theta) * mscale;
    const float x0 = read_a(src + ia);
    const float x1 = read_a(src + ib);
    write_d(dst + ia, x0 * c - x1 * s);
    write_d(dst + ib, x0 * s + x1 * c);
}
