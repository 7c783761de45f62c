#version 450
// mul_mat_vec.comp: MUL_MAT for few columns of src1 (generation), one
// subgroup per output value, no shared memory and no barrier:
// dst[i0,i1,i2,i3] = sum_k A[k,i0,i2/r2,i3/r3] * B[k,i1,i2,i3].
// A workgroup computes ROWS consecutive outputs; its subgroups take them in
// turn, whatever the subgroup size (8 on lavapipe, 32 or 64 on GPUs).
// A (binding 0) in the type chosen by A_*; B (binding 1) F32 with any strides.
// With MUL_MAT_ID: MUL_MAT_ID, dst[i0, e, t] = A[:, i0, ids[e, t]] . B[:, e % ne11, t]
// (N is the number of experts used per token, ne12 the tokens; ids in binding 2).
#include "common.glsl"
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#define A_BINDING 0
#include "types.glsl"

#define ROWS 8
layout(local_size_x = 64) in;

layout(binding = 1) readonly  buffer B { float b[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint K, M, ne02, ne03;       // A: row length, rows, batch dims
    uint nb01, nb02, nb03;       // A strides in bytes
    uint N, ne12, ne13;          // B: columns, batch dims
    uint nb10, nb11, nb12, nb13; // B strides in floats
    uint nb1, nb2, nb3;          // dst strides in floats
    uint a_off, b_off, d_off;    // bytes (A), floats (B, dst)
    uint ne11, ids_nb0, ids_nb1, ids_off; // MUL_MAT_ID: B columns, ids strides and offset (elements)
} p;

#if defined(MUL_MAT_ID)
layout(binding = 2) readonly buffer IDS { int ids[]; };
#endif

void main() {
    const uint total = p.M * p.N * p.ne12 * p.ne13;
    for (uint r = gl_SubgroupID; r < ROWS; r += gl_NumSubgroups) {
        const uint g = group_index() * ROWS + r;
        if (g >= total) {
            break;
        }
        const uint i0 = g % p.M;
        const uint i1 = (g / p.M) % p.N;
        const uint i2 = (g / (p.M * p.N)) % p.ne12;
        const uint i3 = g / (p.M * p.N * p.ne12);
#if defined(MUL_MAT_ID)
        const uint expert = uint(ids[p.ids_off + i1 * p.ids_nb0 + i2 * p.ids_nb1]);
        const uint a_row = p.a_off + i0 * p.nb01 + expert * p.nb02;
        const uint b_col = p.b_off + (i1 % p.ne11) * p.nb11 + i2 * p.nb12;
#else
        const uint a_row = p.a_off + i0 * p.nb01 + (i2 / (p.ne12 / p.ne02)) * p.nb02 + (i3 / (p.ne13 / p.ne03)) * p.nb03;
        const uint b_col = p.b_off + i1 * p.nb11 + i2 * p.nb12 + i3 * p.nb13;
#endif
        float sum = 0.0;
#if defined(A_QUANTIZED)
        // quantized rows (K a multiple of 32): four consecutive values per invocation
        for (uint k = 4u * gl_SubgroupInvocationID; k < p.K; k += 4u * gl_SubgroupSize) {
            const vec4 a = a_elem4(a_row, k);
            const uint bk = b_col + k * p.nb10;
            sum += a.x * b[bk] + a.y * b[bk + p.nb10] + a.z * b[bk + 2u * p.nb10] + a.w * b[bk + 3u * p.nb10];
        }
#else
        for (uint k = gl_SubgroupInvocationID; k < p.K; k += gl_SubgroupSize) {
            sum += a_elem(a_row, k) * b[b_col + k * p.nb10];
        }
#endif
        sum = subgroupAdd(sum);
        if (subgroupElect()) {
            d[p.d_off + i0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3] = sum;
        }
    }
}
