#version 450
// concat.comp: CONCAT along dimension dim, one thread per value of dst; the
// values are copied bit for bit (E16: 16-bit types, else 32-bit ones).
#include "common.glsl"

layout(local_size_x = 256) in;

#if defined(E16)
#define ELEM uint16_t
#else
#define ELEM uint
#endif
layout(binding = 0) readonly  buffer A { ELEM a[]; };
layout(binding = 1) readonly  buffer B { ELEM b[]; };
layout(binding = 5) writeonly buffer D { ELEM d[]; };

layout(push_constant) uniform PC {
    uint ne0, ne1, ne2, ne3;     // dst
    uint nb00, nb01, nb02, nb03; // elements
    uint nb10, nb11, nb12, nb13;
    uint nb0, nb1, nb2, nb3;
    uint a_len, dim;             // a's extent along dim
    uint a_off, b_off, d_off;
} p;

void main() {
    const uint t = group_index() * 256u + gl_LocalInvocationID.x;
    if (t >= p.ne0 * p.ne1 * p.ne2 * p.ne3) {
        return;
    }
    uint i[4];
    i[0] = t % p.ne0;
    i[1] = (t / p.ne0) % p.ne1;
    i[2] = (t / (p.ne0 * p.ne1)) % p.ne2;
    i[3] = t / (p.ne0 * p.ne1 * p.ne2);
    const uint dst = p.d_off + i[0] * p.nb0 + i[1] * p.nb1 + i[2] * p.nb2 + i[3] * p.nb3;
    if (i[p.dim] < p.a_len) {
        d[dst] = a[p.a_off + i[0] * p.nb00 + i[1] * p.nb01 + i[2] * p.nb02 + i[3] * p.nb03];
    } else {
        i[p.dim] -= p.a_len;
        d[dst] = b[p.b_off + i[0] * p.nb10 + i[1] * p.nb11 + i[2] * p.nb12 + i[3] * p.nb13];
    }
}
