// ops-ssm.c: the recurrent ops: SSM_CONV and SSM_SCAN (Mamba-1 and -2),
// RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7 and GATED_DELTA_NET.
//
// All are F32. The recurrences are sequential in the tokens, so threads take
// whole heads (or channels for SSM_CONV): every state and output value is
// computed by one thread in a fixed order, and no barrier is needed. Inner
// loops run over contiguous rows of the state (the dimension that upstream's
// layouts make contiguous), through the row helpers of vec.h (dot products,
// scale, multiply-add), and each head's state stays in cache from one token
// to the next. The portable path (use_ref) takes their scalar versions.

#include "cpu-impl.h"
#include "simd/vec.h"

#include <math.h>
#include <string.h>

static bool all_f32(const struct ggml_tensor * op, int n_src) {
    if (op->type != GGML_TYPE_F32) {
        return false;
    }
    for (int i = 0; i < n_src; i++) {
        if (op->src[i]->type != GGML_TYPE_F32) {
            return false;
        }
    }
    return true;
}

static const float * cf32(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (const float *) ((const char *) t->data + i1*t->nb[1] + i2*t->nb[2] + i3*t->nb[3]);
}

static inline float row_dot(bool ref, int64_t n, const float * x, const float * y) {
    return ref ? ggml_vec_dot_f32_ref(n, x, y) : ggml_vec_dot_f32(n, x, y);
}

static inline void row_mad(bool ref, int64_t n, float * y, const float * x, float v) {
    if (ref) {
        ggml_vec_mad_f32_ref(n, y, x, v);
    } else {
        ggml_vec_mad_f32(n, y, x, v);
    }
}

// log(1 + e^x), x itself above 20, as upstream's Mamba kernels use it
static inline float softplus(float x) {
    return x > 20.0f ? x : log1pf(expf(x));
}

//
// SSM_CONV: dst[c, t, s] = sum_i sx[t + i, c, s] * w[i, c]
//

static void forward_ssm_conv(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * sx = dst->src[0];
    const struct ggml_tensor * w  = dst->src[1];
    const int64_t d_conv = w->ne[0], n_t = dst->ne[1], n_s = dst->ne[2];

    int64_t c0, c1;
    ggml_cpu_split_range(dst->ne[0], params->ith, params->nth, &c0, &c1);
    for (int64_t s = 0; s < n_s; s++) {
        for (int64_t c = c0; c < c1; c++) {
            const float * x  = cf32(sx, c, s, 0);
            const float * wc = cf32(w, c, 0, 0);
            for (int64_t t = 0; t < n_t; t++) {
                float sum = 0.0f;
                for (int64_t i = 0; i < d_conv; i++) {
                    sum += x[t + i] * wc[i];
                }
                *(float *) ((char *) dst->data + c*dst->nb[0] + t*dst->nb[1] + s*dst->nb[2]) = sum;
            }
        }
    }
}

static bool supports_ssm_conv(const struct ggml_tensor * op) {
    return all_f32(op, 2) && op->src[0]->nb[0] == sizeof(float) && op->src[1]->nb[0] == sizeof(float);
}

//
// SSM_SCAN: per head h, channel d, state element n:
//   state = state * exp(softplus(dt) A) + B[n] x[d] softplus(dt),  y[d] = sum_n state C[n]
// with A per state element (Mamba-1) or per head (Mamba-2), B and C of group
// h / (n_head / n_group). The working state of sequence s is snapshot slot 0
// of the result; after token t it is copied to slot n_tokens - 1 - t when
// that slot is in 1..K-1.
//

static void forward_ssm_scan(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * s0 = dst->src[0];
    const struct ggml_tensor * x  = dst->src[1];
    const struct ggml_tensor * dt = dst->src[2];
    const struct ggml_tensor * A  = dst->src[3];
    const struct ggml_tensor * B  = dst->src[4];
    const struct ggml_tensor * C  = dst->src[5];
    const int32_t * ids = (const int32_t *) dst->src[6]->data;

    const int64_t nc = s0->ne[0], nr = s0->ne[1], nh = x->ne[1], ng = B->ne[1];
    const int64_t nt = x->ne[2], ns = x->ne[3];
    const int64_t K  = ggml_get_op_params_i32(dst, 0);
    const bool per_head_A = A->ne[0] == 1;
    const bool ref = params->use_ref;

    float * y_base = (float *) dst->data;
    float * states = y_base + nr*nh*nt*ns;
    const int64_t head_size  = nc*nr;
    const int64_t state_size = head_size*nh;

    int64_t h0, h1;
    ggml_cpu_split_range(nh, params->ith, params->nth, &h0, &h1);
    for (int64_t s = 0; s < ns; s++) {
        GGML_ASSERT(ids[s] >= 0 && ids[s] < s0->ne[3]);
        for (int64_t h = h0; h < h1; h++) {
            float * st = states + s*state_size + h*head_size;
            memcpy(st, cf32(s0, 0, h, ids[s]), (size_t) head_size * sizeof(float));
            const int64_t g = h / (nh / ng);
            const float * a = cf32(A, h, 0, 0);
            for (int64_t t = 0; t < nt; t++) {
                const float   dsp = softplus(cf32(dt, t, s, 0)[h]);
                const float * xv  = cf32(x, h, t, s);
                const float * b   = cf32(B, g, t, s);
                const float * c   = cf32(C, g, t, s);
                float * y = y_base + ((s*nt + t)*nh + h)*nr;
                const float dA = per_head_A ? expf(dsp * a[0]) : 0.0f;
                for (int64_t d = 0; d < nr; d++) {
                    float * row = st + d*nc;
                    const float xdt = xv[d] * dsp;
                    if (per_head_A) {
                        for (int64_t n = 0; n < nc; n++) {
                            row[n] *= dA;
                        }
                    } else {
                        for (int64_t n = 0; n < nc; n++) {
                            row[n] *= expf(dsp * a[n]);
                        }
                    }
                    row_mad(ref, nc, row, b, xdt);
                    y[d] = row_dot(ref, nc, row, c);
                }
                const int64_t slot = nt - 1 - t;
                if (slot > 0 && slot < K) {
                    memcpy(states + (slot*ns + s)*state_size + h*head_size, st, (size_t) head_size * sizeof(float));
                }
            }
        }
    }
}

static bool supports_ssm_scan(const struct ggml_tensor * op) {
    for (int i = 0; i < 6; i++) {
        if (op->src[i]->nb[0] != sizeof(float)) {
            return false;
        }
    }
    return all_f32(op, 6) && op->src[6]->type == GGML_TYPE_I32 && ggml_is_contiguous(op->src[0]);
}

//
// RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7. Tokens [S, H, T] with T/n_seqs
// tokens per sequence; the state of a head is S x S, row i (key index) contiguous
// over j (value index) for WKV6 and GLA, row i (value index) over j for WKV7.
// The result holds the outputs [S*H, T], then the final states.
//

struct wkv_dims {
    int64_t S, H, T, n_seqs;
    float * out;   // [S*H, T]
    float * state; // [S*S*H, n_seqs]
};

static struct wkv_dims wkv_dims_of(struct ggml_tensor * dst, const struct ggml_tensor * state) {
    struct wkv_dims d;
    d.H      = dst->src[0]->ne[1];
    d.S      = dst->src[0]->ne[0];
    d.T      = dst->src[0]->ne[2];
    d.n_seqs = state->ne[1];
    d.out    = (float *) dst->data;
    d.state  = d.out + d.S*d.H*d.T;
    return d;
}

// the state to read for token t of head h: the input state at a sequence's first token
static const float * wkv_prev(const struct wkv_dims * d, const struct ggml_tensor * state, int64_t t, int64_t h) {
    const int64_t per_seq = d->T / d->n_seqs;
    const int64_t s = t / per_seq;
    const int64_t off = s*d->S*d->S*d->H + h*d->S*d->S;
    return t % per_seq == 0 ? (const float *) state->data + off : d->state + off;
}

static void forward_wkv6_gla(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const bool gla = dst->op == GGML_OP_GATED_LINEAR_ATTN;
    const struct ggml_tensor * state = dst->src[gla ? 4 : 5];
    const struct wkv_dims d = wkv_dims_of(dst, state);
    const float * k  = (const float *) dst->src[0]->data;
    const float * v  = (const float *) dst->src[1]->data;
    const float * rq = (const float *) dst->src[2]->data; // r (WKV6) or q (GLA)
    const float * tf = gla ? NULL : (const float *) dst->src[3]->data;
    const float * dg = (const float *) dst->src[gla ? 3 : 4]->data; // time decay (WKV6) or gate (GLA)
    const float scale = gla ? ggml_get_op_params_f32(dst, 0) : 1.0f;
    const int64_t S = d.S, C = d.S*d.H;

    int64_t h0, h1;
    ggml_cpu_split_range(d.H, params->ith, params->nth, &h0, &h1);
    for (int64_t t = 0; t < d.T; t++) {
        const int64_t per_seq = d.T / d.n_seqs;
        for (int64_t h = h0; h < h1; h++) {
            const float * prev = wkv_prev(&d, state, t, h);
            float * cur = d.state + (t / per_seq)*S*C + h*S*S;
            const int64_t o = t*C + h*S;
            float * out = d.out + o;
            memset(out, 0, (size_t) S * sizeof(float));
            for (int64_t i = 0; i < S; i++) {
                const float ki = k[o + i], ri = rq[o + i] * scale, di = dg[o + i];
                const float * pr = prev + i*S;
                float * cr = cur + i*S;
                const float * vv = v + o;
                if (gla) {
                    for (int64_t j = 0; j < S; j++) {
                        const float nsv = pr[j] * di + ki * vv[j];
                        out[j] += nsv * ri;
                        cr[j] = nsv;
                    }
                } else {
                    const float fi = tf[h*S + i];
                    for (int64_t j = 0; j < S; j++) {
                        const float kv = ki * vv[j];
                        out[j] += (kv * fi + pr[j]) * ri;
                        cr[j] = pr[j] * di + kv;
                    }
                }
            }
        }
    }
}

static void forward_wkv7(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * state = dst->src[6];
    struct wkv_dims d = wkv_dims_of(dst, state);
    const float * r = (const float *) dst->src[0]->data;
    const float * w = (const float *) dst->src[1]->data;
    const float * k = (const float *) dst->src[2]->data;
    const float * v = (const float *) dst->src[3]->data;
    const float * a = (const float *) dst->src[4]->data;
    const float * b = (const float *) dst->src[5]->data;
    const int64_t S = d.S, C = d.S*d.H;
    const bool ref = params->use_ref;

    int64_t h0, h1;
    ggml_cpu_split_range(d.H, params->ith, params->nth, &h0, &h1);
    for (int64_t t = 0; t < d.T; t++) {
        const int64_t per_seq = d.T / d.n_seqs;
        for (int64_t h = h0; h < h1; h++) {
            const float * prev = wkv_prev(&d, state, t, h);
            float * cur = d.state + (t / per_seq)*S*C + h*S*S;
            const int64_t o = t*C + h*S;
            for (int64_t i = 0; i < S; i++) {
                const float * pr = prev + i*S;
                float * cr = cur + i*S;
                const float sa = row_dot(ref, S, a + o, pr);
                const float vi = v[o + i];
                for (int64_t j = 0; j < S; j++) {
                    cr[j] = pr[j] * w[o + j] + vi * k[o + j] + sa * b[o + j];
                }
                d.out[o + i] = row_dot(ref, S, cr, r + o);
            }
        }
    }
}

static bool supports_wkv(const struct ggml_tensor * op) {
    int n_src = 0;
    while (n_src < GGML_MAX_SRC && op->src[n_src] != NULL) {
        n_src++;
    }
    for (int i = 0; i < n_src; i++) {
        if (!ggml_is_contiguous(op->src[i])) {
            return false;
        }
    }
    return all_f32(op, n_src);
}

//
// GATED_DELTA_NET: per value head h (q, k head h % H_k) and sequence, with
// the state kept as M[j][i] = S[i][j] (i key, j value; rows contiguous over i):
//   S *= exp(g) (KDA: row i of S by exp(g[i])),
//   delta[j] = beta (v[j] - sum_i S[i][j] k[i]),  S[i][j] += k[i] delta[j],
//   out[j] = sum_i S[i][j] q[i] / sqrt(S_v)
// The working state is snapshot slot 0; after token t it is copied to slot
// n_tokens - 1 - t when that slot is in 1..K-1. delta and the KDA gates
// exp(g[i]) live in the thread's scratch.
//

static size_t gdn_delta_stride(const struct ggml_tensor * op) {
    const size_t n = 2 * (size_t) op->src[2]->ne[0] * sizeof(float);
    return (n + GGML_CPU_CACHE_LINE - 1) / GGML_CPU_CACHE_LINE * GGML_CPU_CACHE_LINE;
}

static size_t work_size_gdn(const struct ggml_tensor * op, int n_threads) {
    return gdn_delta_stride(op) * (size_t) n_threads;
}

static void forward_gated_delta_net(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0], * k = dst->src[1], * v = dst->src[2];
    const struct ggml_tensor * g = dst->src[3], * beta = dst->src[4], * state = dst->src[5];
    const int64_t S = v->ne[0], H = v->ne[1], nt = v->ne[2], ns = v->ne[3];
    const int64_t K = ggml_get_op_params_i32(dst, 0);
    const bool kda = g->ne[0] == S;
    const float scale = 1.0f / sqrtf((float) S);
    const bool ref = params->use_ref;

    float * out_base   = (float *) dst->data;
    float * state_base = out_base + S*H*nt*ns;
    const int64_t snap = S*S*H*ns;
    float * delta = (float *) ((char *) params->wdata + gdn_delta_stride(dst) * (size_t) params->ith);
    float * decay = delta + S;

    int64_t u0, u1;
    ggml_cpu_split_range(H*ns, params->ith, params->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t h = u % H, s = u / H;
        const int64_t hq = h % q->ne[1], hk = h % k->ne[1];
        const int64_t sq = s / (ns / q->ne[3]), sk = s / (ns / k->ne[3]);
        float * M = state_base + (s*H + h)*S*S;
        memcpy(M, (const char *) state->data + s*state->nb[3] + h*state->nb[2], (size_t) (S*S) * sizeof(float));
        for (int64_t t = 0; t < nt; t++) {
            const float * qv = cf32(q, hq, t, sq);
            const float * kv = cf32(k, hk, t, sk);
            const float * vv = cf32(v, h, t, s);
            const float * gv = cf32(g, h, t, s);
            const float   bv = *cf32(beta, h, t, s);
            for (int64_t i = 0; i < S; i++) {
                decay[i] = expf(kda ? gv[i] : gv[0]);
            }
            for (int64_t j = 0; j < S; j++) {
                float * row = M + j*S;
                for (int64_t i = 0; i < S; i++) {
                    row[i] *= decay[i];
                }
                delta[j] = (vv[j] - row_dot(ref, S, row, kv)) * bv;
            }
            float * out = out_base + ((s*nt + t)*H + h)*S;
            for (int64_t j = 0; j < S; j++) {
                float * row = M + j*S;
                row_mad(ref, S, row, kv, delta[j]);
                out[j] = row_dot(ref, S, row, qv) * scale;
            }
            const int64_t slot = nt - 1 - t;
            if (slot > 0 && slot < K) {
                memcpy(state_base + slot*snap + (s*H + h)*S*S, M, (size_t) (S*S) * sizeof(float));
            }
        }
    }
}

static bool supports_gated_delta_net(const struct ggml_tensor * op) {
    return all_f32(op, 6) && op->src[0]->nb[0] == sizeof(float) && op->src[1]->nb[0] == sizeof(float) &&
           op->src[2]->nb[0] == sizeof(float);
}

void ggml_cpu_register_ops_ssm(struct ggml_cpu_op_impl * table) {
    table[GGML_OP_SSM_CONV]          = (struct ggml_cpu_op_impl) { .forward = forward_ssm_conv, .supports = supports_ssm_conv };
    table[GGML_OP_SSM_SCAN]          = (struct ggml_cpu_op_impl) { .forward = forward_ssm_scan, .supports = supports_ssm_scan };
    table[GGML_OP_RWKV_WKV6]         = (struct ggml_cpu_op_impl) { .forward = forward_wkv6_gla, .supports = supports_wkv };
    table[GGML_OP_GATED_LINEAR_ATTN] = (struct ggml_cpu_op_impl) { .forward = forward_wkv6_gla, .supports = supports_wkv };
    table[GGML_OP_RWKV_WKV7]         = (struct ggml_cpu_op_impl) { .forward = forward_wkv7,     .supports = supports_wkv };
    table[GGML_OP_GATED_DELTA_NET]   = (struct ggml_cpu_op_impl) {
        .forward = forward_gated_delta_net, .supports = supports_gated_delta_net, .work_size = work_size_gdn,
    };
}
