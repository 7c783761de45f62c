// ref-eval-ssm.c: the recurrent ops in double precision (SSM_CONV, SSM_SCAN,
// RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7, GATED_DELTA_NET), each written
// from its recurrence with the state as a plain matrix S[i][j] (i the key or
// state index, j the value index), and laid out in the op's result at the end.

#include "ref-eval.h"

#include <math.h>
#include <stdlib.h>

static double softplus(double x) {
    return x > 20.0 ? x : log1p(exp(x));
}

// out[c, t, s] = sum_i sx[t + i, c, s] w[i, c]
void ref_op_ssm_conv(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * sx = dst->src[0];
    const struct ggml_tensor * w  = dst->src[1];
    double * x = ref_get(r, sx);
    double * c = ref_get(r, w);
    double * y = tbo_malloc((size_t) ggml_nelements(dst) * sizeof(double));
    const int64_t * ne = dst->ne;
    for (int64_t s = 0; s < ne[2]; s++) {
        for (int64_t t = 0; t < ne[1]; t++) {
            for (int64_t ch = 0; ch < ne[0]; ch++) {
                double sum = 0.0;
                for (int64_t i = 0; i < w->ne[0]; i++) {
                    sum += x[ref_idx(sx->ne, t + i, ch, s, 0)] * c[ref_idx(w->ne, i, ch, 0, 0)];
                }
                y[ref_idx(ne, ch, t, s, 0)] = sum;
            }
        }
    }
    ref_put(r, dst, y);
    free(y);
    free(c);
    free(x);
}

// y, then K snapshots of the states (slot 0 the final one, slot k the state k tokens back)
void ref_op_ssm_scan(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * S0 = dst->src[0], * X = dst->src[1], * DT = dst->src[2];
    const struct ggml_tensor * A = dst->src[3], * B = dst->src[4], * C = dst->src[5];
    double * s0  = ref_get(r, S0);
    double * x   = ref_get(r, X);
    double * dt  = ref_get(r, DT);
    double * a   = ref_get(r, A);
    double * b   = ref_get(r, B);
    double * c   = ref_get(r, C);
    double * ids = ref_get(r, dst->src[6]);
    const int64_t n_state = S0->ne[0], head_dim = X->ne[0], n_head = X->ne[1];
    const int64_t n_tok = X->ne[2], n_seqs = X->ne[3], n_group = B->ne[1];
    const int64_t K = ref_param_i32(dst, 0);
    const int64_t n_y = ggml_nelements(X);
    const int64_t state_n = n_state * head_dim * n_head;
    double * out = tbo_calloc((size_t) ggml_nelements(dst), sizeof(double));
    double * st  = tbo_malloc((size_t) state_n * sizeof(double));
    for (int64_t s = 0; s < n_seqs; s++) {
        const int64_t src_row = (int64_t) ids[s];
        for (int64_t i = 0; i < state_n; i++) {
            st[i] = s0[src_row * state_n + i];
        }
        for (int64_t t = 0; t < n_tok; t++) {
            for (int64_t h = 0; h < n_head; h++) {
                const double delta = softplus(dt[ref_idx(DT->ne, h, t, s, 0)]);
                const int64_t g = h / (n_head / n_group);
                for (int64_t d = 0; d < head_dim; d++) {
                    const double xv = x[ref_idx(X->ne, d, h, t, s)];
                    double y = 0.0;
                    for (int64_t n = 0; n < n_state; n++) {
                        const double an = A->ne[0] == 1 ? a[ref_idx(A->ne, 0, h, 0, 0)] : a[ref_idx(A->ne, n, h, 0, 0)];
                        double * sv = &st[ref_idx(S0->ne, n, d, h, 0)];
                        *sv = *sv * exp(delta * an) + b[ref_idx(B->ne, n, g, t, s)] * xv * delta;
                        y += *sv * c[ref_idx(C->ne, n, g, t, s)];
                    }
                    out[ref_idx(X->ne, d, h, t, s)] = y;
                }
            }
            const int64_t slot = n_tok - 1 - t;
            if (slot >= 0 && slot < K) {
                for (int64_t i = 0; i < state_n; i++) {
                    out[n_y + (slot * n_seqs + s) * state_n + i] = st[i];
                }
            }
        }
    }
    ref_put(r, dst, out);
    free(st);
    free(out);
    free(ids);
    free(c);
    free(b);
    free(a);
    free(dt);
    free(x);
    free(s0);
}

// the three RWKV-style ops: inputs [S, H, T] (T/n_seqs tokens per sequence),
// state S*S per head per sequence with element (i, j) at i*S + j
void ref_op_wkv(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const enum ggml_op op = dst->op;
    const int n_src = op == GGML_OP_RWKV_WKV6 ? 6 : op == GGML_OP_GATED_LINEAR_ATTN ? 5 : 7;
    double * in[7] = { 0 };
    for (int i = 0; i < n_src; i++) {
        in[i] = ref_get(r, dst->src[i]);
    }
    const struct ggml_tensor * st_t = dst->src[n_src - 1];
    const int64_t S = dst->src[0]->ne[0], H = dst->src[0]->ne[1], T = dst->src[0]->ne[2];
    const int64_t n_seqs = st_t->ne[1], per_seq = T / n_seqs, C = S * H;
    double * out = tbo_calloc((size_t) ggml_nelements(dst), sizeof(double));
    double * st  = tbo_malloc((size_t) (S * S) * sizeof(double));
    double * sa  = tbo_malloc((size_t) S * sizeof(double));
    const double scale = op == GGML_OP_GATED_LINEAR_ATTN ? ref_param_f32(dst, 0) : 1.0;
    for (int64_t s = 0; s < n_seqs; s++) {
        for (int64_t h = 0; h < H; h++) {
            const double * s_in = in[n_src - 1] + s * S * C + h * S * S;
            for (int64_t i = 0; i < S * S; i++) {
                st[i] = s_in[i];
            }
            for (int64_t t = s * per_seq; t < (s + 1) * per_seq; t++) {
                const int64_t o = t * C + h * S;
                double * y = out + o;
                if (op == GGML_OP_RWKV_WKV6) {
                    // y_j = sum_i r_i (u_i k_i v_j + S_ij); S_ij = w_i S_ij + k_i v_j
                    const double * k = in[0], * v = in[1], * rr = in[2], * u = in[3], * w = in[4];
                    for (int64_t j = 0; j < S; j++) {
                        for (int64_t i = 0; i < S; i++) {
                            y[j] += rr[o + i] * (u[h * S + i] * k[o + i] * v[o + j] + st[i * S + j]);
                        }
                    }
                    for (int64_t i = 0; i < S; i++) {
                        for (int64_t j = 0; j < S; j++) {
                            st[i * S + j] = w[o + i] * st[i * S + j] + k[o + i] * v[o + j];
                        }
                    }
                } else if (op == GGML_OP_GATED_LINEAR_ATTN) {
                    // S_ij = g_i S_ij + k_i v_j; y_j = scale sum_i q_i S_ij
                    const double * k = in[0], * v = in[1], * q = in[2], * g = in[3];
                    for (int64_t i = 0; i < S; i++) {
                        for (int64_t j = 0; j < S; j++) {
                            st[i * S + j] = g[o + i] * st[i * S + j] + k[o + i] * v[o + j];
                        }
                    }
                    for (int64_t j = 0; j < S; j++) {
                        for (int64_t i = 0; i < S; i++) {
                            y[j] += scale * q[o + i] * st[i * S + j];
                        }
                    }
                } else {
                    // row i (value): S_ij = w_j S_ij + v_i k_j + (sum_l a_l S_il) b_j; y_i = sum_j r_j S_ij
                    const double * rr = in[0], * w = in[1], * k = in[2], * v = in[3], * a = in[4], * b = in[5];
                    for (int64_t i = 0; i < S; i++) {
                        sa[i] = 0.0;
                        for (int64_t l = 0; l < S; l++) {
                            sa[i] += a[o + l] * st[i * S + l];
                        }
                    }
                    for (int64_t i = 0; i < S; i++) {
                        for (int64_t j = 0; j < S; j++) {
                            st[i * S + j] = w[o + j] * st[i * S + j] + v[o + i] * k[o + j] + sa[i] * b[o + j];
                            y[i] += rr[o + j] * st[i * S + j];
                        }
                    }
                }
            }
            double * s_out = out + T * C + s * S * C + h * S * S;
            for (int64_t i = 0; i < S * S; i++) {
                s_out[i] = st[i];
            }
        }
    }
    ref_put(r, dst, out);
    free(sa);
    free(st);
    free(out);
    for (int i = 0; i < n_src; i++) {
        free(in[i]);
    }
}

// Gated DeltaNet / KDA with S[i][j] (i key, j value); the state tensors hold
// element (i0 = i, i1 = j) of S
void ref_op_gated_delta_net(struct tbo_ref * r, const struct ggml_tensor * dst) {
    const struct ggml_tensor * Q = dst->src[0], * Kt = dst->src[1], * V = dst->src[2];
    const struct ggml_tensor * G = dst->src[3], * Bt = dst->src[4], * ST = dst->src[5];
    double * q = ref_get(r, Q), * k = ref_get(r, Kt), * v = ref_get(r, V);
    double * g = ref_get(r, G), * beta = ref_get(r, Bt), * s0 = ref_get(r, ST);
    const int64_t S = V->ne[0], H = V->ne[1], nt = V->ne[2], ns = V->ne[3];
    const int64_t K = ref_param_i32(dst, 0);
    const int64_t n_out = S * H * nt * ns, snap = S * S * H * ns;
    double * out = tbo_calloc((size_t) ggml_nelements(dst), sizeof(double));
    double * st = tbo_malloc((size_t) (S * S) * sizeof(double));
    double * delta = tbo_malloc((size_t) S * sizeof(double));
    for (int64_t s = 0; s < ns; s++) {
        for (int64_t h = 0; h < H; h++) {
            const int64_t hq = h % Q->ne[1], hk = h % Kt->ne[1];
            const int64_t sq = s / (ns / Q->ne[3]), sk = s / (ns / Kt->ne[3]);
            for (int64_t i = 0; i < S; i++) {
                for (int64_t j = 0; j < S; j++) {
                    st[i * S + j] = s0[ref_idx(ST->ne, i, j, h, s)];
                }
            }
            for (int64_t t = 0; t < nt; t++) {
                for (int64_t i = 0; i < S; i++) {
                    const double gi = G->ne[0] == 1 ? g[ref_idx(G->ne, 0, h, t, s)] : g[ref_idx(G->ne, i, h, t, s)];
                    for (int64_t j = 0; j < S; j++) {
                        st[i * S + j] *= exp(gi);
                    }
                }
                const double b = beta[ref_idx(Bt->ne, 0, h, t, s)];
                for (int64_t j = 0; j < S; j++) {
                    double kS = 0.0;
                    for (int64_t i = 0; i < S; i++) {
                        kS += st[i * S + j] * k[ref_idx(Kt->ne, i, hk, t, sk)];
                    }
                    delta[j] = b * (v[ref_idx(V->ne, j, h, t, s)] - kS);
                }
                for (int64_t i = 0; i < S; i++) {
                    for (int64_t j = 0; j < S; j++) {
                        st[i * S + j] += k[ref_idx(Kt->ne, i, hk, t, sk)] * delta[j];
                    }
                }
                for (int64_t j = 0; j < S; j++) {
                    double y = 0.0;
                    for (int64_t i = 0; i < S; i++) {
                        y += st[i * S + j] * q[ref_idx(Q->ne, i, hq, t, sq)];
                    }
                    out[((s * nt + t) * H + h) * S + j] = y / sqrt((double) S);
                }
                const int64_t slot = nt - 1 - t;
                if (slot >= 0 && slot < K) {
                    double * so = out + n_out + slot * snap + (s * H + h) * S * S;
                    for (int64_t i = 0; i < S; i++) {
                        for (int64_t j = 0; j < S; j++) {
                            so[j * S + i] = st[i * S + j];
                        }
                    }
                }
            }
        }
    }
    ref_put(r, dst, out);
    free(delta);
    free(st);
    free(out);
    free(s0);
    free(beta);
    free(g);
    free(v);
    free(k);
    free(q);
}
