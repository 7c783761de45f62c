#version 450
// eltwise.comp: one thread per element, dst = f(src0[, src1]) for the
// element-wise ops: copies and conversions (CPY/CONT/DUP: src0 and dst may
// differ in shape, not in element count), binary ops with src1 broadcast
// over every dimension, SCALE, CLAMP and the unary activations. Element i
// (in row-major order) of src0 goes to element i of dst. Types: src0 by
// A_F32/A_F16/A_BF16, dst by D_F32/D_F16/D_BF16, src1 by b_type (0 F32,
// 1 F16, 2 BF16).
// The op codes are enum ggml_vk_eltwise_op in vk-ops.c.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(binding = 0) readonly  buffer AF { float    a_f32[]; };
layout(binding = 0) readonly  buffer AH { uint16_t a_u16[]; };
layout(binding = 1) readonly  buffer BF { float    b_f32[]; };
layout(binding = 1) readonly  buffer BH { uint16_t b_u16[]; };
layout(binding = 5) writeonly buffer DF { float    d_f32[]; };
layout(binding = 5) writeonly buffer DH { uint16_t d_u16[]; };

layout(push_constant) uniform PC {
    uint ne00, ne01, ne02, ne03;
    uint nb00, nb01, nb02, nb03; // elements
    uint ne10, ne11, ne12, ne13;
    uint nb10, nb11, nb12, nb13;
    uint ne0, ne1, ne2, ne3;
    uint nb0, nb1, nb2, nb3;
    uint a_off, b_off, d_off;
    uint op;
    float p0, p1;
    uint b_type;
} p;

float read_b(uint i) {
    if (p.b_type == 1) {
        return half_bits_to_float(uint(b_u16[i]));
    }
    if (p.b_type == 2) {
        return bf16_bits_to_float(uint(b_u16[i]));
    }
    return b_f32[i];
}

float read_a(uint i) {
#if defined(A_F32)
    return a_f32[i];
#elif defined(A_F16)
    return half_bits_to_float(uint(a_u16[i]));
#else
    return bf16_bits_to_float(uint(a_u16[i]));
#endif
}

void write_d(uint i, float v) {
#if defined(D_F32)
    d_f32[i] = v;
#elif defined(D_F16)
    d_u16[i] = uint16_t(float_to_half_bits(v));
#else
    d_u16[i] = uint16_t(float_to_bf16_bits(v));
#endif
}

float gelu_tanh(float x) {
    const float c = 0.7978845608028654; // sqrt(2/pi)
    const float t = tanh(clamp(c * x * (1.0 + 0.044715 * x * x), -15.0, 15.0));
    return 0.5 * x * (1.0 + t);
}

float apply(float a, float b) {
    switch (p.op) {
        case 0:  return a;                                  // copy / convert
        case 1:  return a + b;                              // ADD, ADD1
        case 2:  return a - b;                              // SUB
        case 3:  return a * b;                              // MUL
        case 4:  return a / b;                              // DIV
        case 5:  return a * p.p0 + p.p1;                    // SCALE
        case 6:  return clamp(a, p.p0, p.p1);               // CLAMP
        case 7:  return a / (1.0 + exp(-a));                // SILU
        case 8:  return gelu_tanh(a);                       // GELU
        case 9:  return a / (1.0 + exp(-1.702 * a));        // GELU_QUICK
        case 10: return 0.5 * a * (1.0 + erf_approx(a * 0.7071067811865476)); // GELU_ERF
        case 11: return max(a, 0.0);                        // RELU
        case 12: return tanh(clamp(a, -15.0, 15.0));        // TANH
        case 13: return 1.0 / (1.0 + exp(-a));              // SIGMOID
        case 14: return -a;                                 // NEG
        case 15: return exp(a);                             // EXP
        case 16: return a > 0.0 ? 1.0 : 0.0;                // STEP (the gradient of RELU)
        case 17: return a * a;                              // SQR
        case 18: return sqrt(a);                            // SQRT
    }
    return a;
}

void main() {
    const uint n = p.ne00 * p.ne01 * p.ne02 * p.ne03;
    const uint i = group_index() * 256u + gl_LocalInvocationID.x;
    if (i >= n) {
        return;
    }
    const uint i00 = i % p.ne00;
    const uint i01 = (i / p.ne00) % p.ne01;
    const uint i02 = (i / (p.ne00 * p.ne01)) % p.ne02;
    const uint i03 = i / (p.ne00 * p.ne01 * p.ne02);
    const float a = read_a(p.a_off + i00 * p.nb00 + i01 * p.nb01 + i02 * p.nb02 + i03 * p.nb03);

    float b = 0.0;
    if (p.op >= 1 && p.op <= 4) {
        b = read_b(p.b_off + (i00 % p.ne10) * p.nb10 + (i01 % p.ne11) * p.nb11 + (i02 % p.ne12) * p.nb12 + (i03 % p.ne13) * p.nb13);
    }

    const uint i0 = i % p.ne0;
    const uint i1 = (i / p.ne0) % p.ne1;
    const uint i2 = (i / (p.ne0 * p.ne1)) % p.ne2;
    const uint i3 = i / (p.ne0 * p.ne1 * p.ne2);
    write_d(p.d_off + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3, apply(a, b));
}
