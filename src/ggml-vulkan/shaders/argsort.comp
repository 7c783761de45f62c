#version 450
// argsort.comp: ARGSORT of F32 rows of up to 1024 values, one workgroup per
// row: a bitonic sort of the indices in shared memory (the row padded to a
// power of two with indices that sort last), comparing (value, index) so
// that equal values keep their order, as a stable sort does.
#include "common.glsl"

#define WG 256
#define MAX_COLS 1024
layout(local_size_x = WG) in;

layout(binding = 0) readonly  buffer A { float a[]; };
layout(binding = 5) writeonly buffer D { int d[]; };

layout(push_constant) uniform PC {
    uint ncols, ncols_pad, nrows;
    uint nb01, nb02, nb03;   // elements
    uint ne01, ne02;
    uint nb1, nb2, nb3;      // elements
    uint a_off, d_off;
    uint desc;
} p;

shared uint idx[MAX_COLS];

// true when the value at index x goes before the one at index y
bool before(uint x, uint y, uint row) {
    if (x >= p.ncols || y >= p.ncols) {
        return x < y; // padding last
    }
    const float vx = a[row + x];
    const float vy = a[row + y];
    if (vx == vy) {
        return x < y;
    }
    return p.desc != 0 ? vx > vy : vx < vy;
}

void main() {
    const uint r = group_index();
    if (r >= p.nrows) {
        return;
    }
    const uint i1 = r % p.ne01;
    const uint i2 = (r / p.ne01) % p.ne02;
    const uint i3 = r / (p.ne01 * p.ne02);
    const uint row = p.a_off + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
    for (uint i = gl_LocalInvocationID.x; i < p.ncols_pad; i += WG) {
        idx[i] = i;
    }
    barrier();
    for (uint k = 2; k <= p.ncols_pad; k <<= 1) {
        for (uint j = k >> 1; j > 0; j >>= 1) {
            for (uint i = gl_LocalInvocationID.x; i < p.ncols_pad; i += WG) {
                const uint l = i ^ j;
                if (l > i) {
                    const uint x = idx[i];
                    const uint y = idx[l];
                    const bool up = (i & k) == 0;
                    if (up ? before(y, x, row) : before(x, y, row)) {
                        idx[i] = y;
                        idx[l] = x;
                    }
                }
            }
            barrier();
        }
    }
    const uint dst = p.d_off + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
    for (uint i = gl_LocalInvocationID.x; i < p.ncols; i += WG) {
        d[dst + i] = int(idx[i]);
    }
}
