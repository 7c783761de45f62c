#version 450
// mul_mat_tiled.comp: MUL_MAT by 64x64 tiles of dst (the path for prompts),
// 256 threads each computing 4x4 values; A and B go through shared memory in
// slices of TK along k, A dequantized once per slice. Same bindings and push
// constants as mul_mat_vec.comp.
#include "common.glsl"
#define A_BINDING 0
#include "types.glsl"

#define TM 64
#define TN 64
#define TK 16
layout(local_size_x = 256) in;

layout(binding = 1) readonly  buffer B { float b[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint K, M, ne02, ne03;
    uint nb01, nb02, nb03;
    uint N, ne12, ne13;
    uint nb10, nb11, nb12, nb13;
    uint nb1, nb2, nb3;
    uint a_off, b_off, d_off;
    uint ne11, ids_nb0, ids_nb1, ids_off; // MUL_MAT_ID only (mul_mat_vec.comp)
} p;

shared float sa[TK][TM + 1];
shared float sb[TK][TN + 1];

void main() {
    const uint tiles_m = (p.M + TM - 1) / TM;
    const uint tiles_n = (p.N + TN - 1) / TN;
    const uint g = group_index();
    if (g >= tiles_m * tiles_n * p.ne12 * p.ne13) {
        return;
    }
    const uint m0 = (g % tiles_m) * TM;
    const uint n0 = ((g / tiles_m) % tiles_n) * TN;
    const uint i2 = (g / (tiles_m * tiles_n)) % p.ne12;
    const uint i3 = g / (tiles_m * tiles_n * p.ne12);
    const uint a_base = p.a_off + (i2 / (p.ne12 / p.ne02)) * p.nb02 + (i3 / (p.ne13 / p.ne03)) * p.nb03;
    const uint b_base = p.b_off + i2 * p.nb12 + i3 * p.nb13;

    const uint tid = gl_LocalInvocationID.x;
    const uint tx = tid % 16u; // 4 rows of A: m0 + tx + 16*r
    const uint ty = tid / 16u; // 4 columns of B: n0 + ty + 16*c

    float acc[4][4];
    [[unroll]] for (uint r = 0; r < 4; r++) {
        [[unroll]] for (uint c = 0; c < 4; c++) {
            acc[r][c] = 0.0;
        }
    }

    for (uint k0 = 0; k0 < p.K; k0 += TK) {
        // each thread loads 4 values of the A slice and 4 of the B slice
        [[unroll]] for (uint l = 0; l < 4; l++) {
            const uint idx = tid + 256u * l;  // 0 .. TK*TM-1
            const uint kk = idx % TK;
            const uint mm = idx / TK;
            const uint m = m0 + mm;
            const uint k = k0 + kk;
            sa[kk][mm] = (m < p.M && k < p.K) ? a_elem(a_base + m * p.nb01, k) : 0.0;
            const uint n = n0 + mm;
            sb[kk][mm] = (n < p.N && k < p.K) ? b[b_base + n * p.nb11 + k * p.nb10] : 0.0;
        }
        barrier();
        [[unroll]] for (uint kk = 0; kk < TK; kk++) {
            float av[4];
            float bv[4];
            [[unroll]] for (uint r = 0; r < 4; r++) {
                av[r] = sa[kk][tx + 16u * r];
                bv[r] = sb[kk][ty + 16u * r];
            }
            [[unroll]] for (uint r = 0; r < 4; r++) {
                [[unroll]] for (uint c = 0; c < 4; c++) {
                    acc[r][c] += av[r] * bv[c];
                }
            }
        }
        barrier();
    }

    [[unroll]] for (uint r = 0; r < 4; r++) {
        [[unroll]] for (uint c = 0; c < 4; c++) {
            const uint m = m0 + tx + 16u * r;
            const uint n = n0 + ty + 16u * c;
            if (m < p.M && n < p.N) {
                d[p.d_off + m + n * p.nb1 + i2 * p.nb2 + i3 * p.nb3] = acc[r][c];
            }
        }
    }
}
