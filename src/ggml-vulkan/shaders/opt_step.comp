#version 450
// opt_step.comp: the optimizer steps, in place on the parameter w with its
// gradient g, one thread per element of contiguous F32 tensors.
// AdamW (default): m, v the moments, hp the 7 hyperparameters alpha, beta1,
// beta2, eps, wd, beta1h, beta2h (see ggml_opt_step_adamw); the weight decay
// acts on w directly. SGD (-DSGD): hp holds alpha and the weight decay.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(binding = 0) buffer W { float w[]; };
layout(binding = 1) readonly buffer G { float g[]; };
#ifdef SGD
layout(binding = 2) readonly buffer H { float hp[]; };
#else
layout(binding = 2) buffer M { float m[]; };
layout(binding = 3) buffer V { float v[]; };
layout(binding = 4) readonly buffer H { float hp[]; };
#endif

layout(push_constant) uniform PC {
    uint n;
    uint w_off, g_off, m_off, v_off, h_off;
} p;

void main() {
    const uint i = group_index() * 256 + gl_LocalInvocationID.x;
    if (i >= p.n) {
        return;
    }
    const float gi = g[p.g_off + i];
#ifdef SGD
    const float alpha = hp[p.h_off];
    const float keep = 1.0 - alpha * hp[p.h_off + 1];
    w[p.w_off + i] = w[p.w_off + i] * keep - alpha * gi;
#else
    const float alpha = hp[p.h_off], beta1 = hp[p.h_off + 1], beta2 = hp[p.h_off + 2], eps = hp[p.h_off + 3];
    const float wd = hp[p.h_off + 4], beta1h = hp[p.h_off + 5], beta2h = hp[p.h_off + 6];
    const float mi = m[p.m_off + i] * beta1 + gi * (1.0 - beta1);
    const float vi = v[p.v_off + i] * beta2 + gi * gi * (1.0 - beta2);
    m[p.m_off + i] = mi;
    v[p.v_off + i] = vi;
    const float mh = mi * beta1h;
    const float vh = sqrt(vi * beta2h) + eps;
    w[p.w_off + i] = w[p.w_off + i] * (1.0 - alpha * wd) - alpha * mh / vh;
#endif
}
