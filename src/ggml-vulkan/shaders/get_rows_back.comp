#version 450
// get_rows_back.comp: GET_ROWS_BACK: row j of the result (contiguous F32,
// nc x nr) is the sum of the gradient rows k whose index idx[k] is j. One
// thread per element of the result scans the indices: no two threads write
// one element, and the sums are made in index order, as on the CPU. The
// cost is elements x indices: fine for the gradients of small tables.
#include "common.glsl"

layout(local_size_x = 64) in;

layout(binding = 0) readonly buffer G { float g[]; };
layout(binding = 1) readonly buffer I { int idx[]; };
layout(binding = 5) writeonly buffer D { float d[]; };

layout(push_constant) uniform PC {
    uint nc, nr, n_idx;
    uint nbg0, nbg1;    // elements
    uint nbi0;
    uint g_off, i_off, d_off;
} p;

void main() {
    const uint e = group_index() * 64 + gl_LocalInvocationID.x;
    if (e >= p.nc * p.nr) {
        return;
    }
    const uint col = e % p.nc;
    const uint row = e / p.nc;
    float sum = 0.0;
    for (uint k = 0; k < p.n_idx; k++) {
        if (idx[p.i_off + k * p.nbi0] == int(row)) {
            sum += g[p.g_off + k * p.nbg1 + col * p.nbg0];
        }
    }
    d[p.d_off + e] = sum;
}
