// common.glsl: what every compute shader of the Vulkan backend shares.
//
// Buffers are bound per tensor at an offset aligned down to the device's
// storage-buffer alignment; the push constants carry the remainder (in
// elements of the array that reads it), so views at any offset work.
// Workgroups are numbered linearly: the host spreads a count over up to
// three dimensions of at most 65535 each.

#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_control_flow_attributes : enable

uint group_index() {
    return (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

float half_bits_to_float(uint h) {
    return unpackHalf2x16(h).x;
}

uint float_to_half_bits(float f) {
    return packHalf2x16(vec2(f, 0.0)) & 0xffffu;
}

float bf16_bits_to_float(uint h) {
    return uintBitsToFloat(h << 16);
}

// round to nearest even, NaN kept quiet (as ggml_fp32_to_bf16)
uint float_to_bf16_bits(float f) {
    uint u = floatBitsToUint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return (u >> 16) | 64u;
    }
    return (u + (0x7fffu + ((u >> 16) & 1u))) >> 16;
}

// erf by Abramowitz-Stegun 7.1.26 is too coarse; this one (W. J. Cody's
// rational fit as used widely, |error| < 1.2e-7) keeps GELU_ERF to float precision
float erf_approx(float x) {
    const float ax = abs(x);
    const float t = 1.0 / (1.0 + 0.5 * ax);
    const float y = 1.0 - t * exp(-ax * ax - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
                    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
                    t * (-0.82215223 + t * 0.17087277)))))))));
    return x >= 0.0 ? y : -y;
}
