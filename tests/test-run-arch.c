// test-run-arch: every architecture of ggml-run (tools/ggml-run/arch.c) on a
// tiny GGUF written here in llama.cpp's layout, against a naive
// double-precision forward pass written here from the architectures'
// definitions:
//
// - llama with RoPE frequency factors (Llama 3.1's rope_freqs) and linear
//   RoPE scaling; qwen2 (Q/K/V biases, NeoX RoPE, tied output); qwen3 (per
//   head Q/K norms, heads of key_length larger than embedding / heads);
//   qwen3moe (a router's softmax, the top 2 of 4 experts with their weights
//   normalised, MUL_MAT_ID); gemma3 (embeddings times sqrt(n_embd), Q/K
//   norms, post-norms, GELU, 5 sliding-window layers with their own RoPE
//   base then a global one with a scaled RoPE, tied output); phi3 (fused QKV
//   and fused gate-up);
// - the logits of a prompt and of 3 greedy steps, fused and unfused
//   attention, F32 and F16 caches, the prompt split over batches;
// - the synthetic model of each architecture (ggml-run --arch): it loads
//   and gives finite logits; the ggml-run program on each file prints text,
//   benchmarks it and holds a conversation with the file's chat template;
// - failures: a missing key of an architecture, LongRoPE, an unsupported
//   RoPE scaling, keys and values of different sizes: NULL and a message.
//
// With --vulkan the same comparisons run with the layers on the first Vulkan
// device, then with one layer there and the rest on the CPU (exit 77,
// skipped, when there is no such device).

#include "testing.h"
#include "run-program.h"

#include "context.h"
#include "model.h"
#include "sampling.h"
#include "synthetic.h"

#include "ggml-backend.h"
#include "gguf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

//
// the configurations
//

struct t_cfg {
    const char * arch;
    int  n_layer, n_embd, n_head, n_head_kv, head_dim, n_ff;
    int  n_expert, n_expert_used, n_ff_exp;
    int  n_swa, swa_pattern;
    bool neox, qkv_bias, qk_norm, fused_qkv, fused_gate_up, post_norms, gelu, embd_scale, tied, rope_freqs;
    float rope_base, rope_base_swa, rope_scale; // rope_scale: the linear factor (positions divided by it)
};

enum { T_N_VOCAB = 48, T_N_CTX = 64, T_N_PROMPT = 7, T_N_STEPS = 3, T_MAX_TOKENS = T_N_PROMPT + T_N_STEPS };

static const float T_RMS_EPS = 1e-6f;

static const struct t_cfg t_cfgs[] = {
    { .arch = "llama", .n_layer = 2, .n_embd = 32, .n_head = 4, .n_head_kv = 2, .head_dim = 8, .n_ff = 48,
      .rope_freqs = true, .rope_base = 500000.0f, .rope_scale = 2.0f },
    { .arch = "qwen2", .n_layer = 2, .n_embd = 32, .n_head = 4, .n_head_kv = 2, .head_dim = 8, .n_ff = 48,
      .neox = true, .qkv_bias = true, .tied = true, .rope_base = 1000000.0f },
    { .arch = "qwen3", .n_layer = 2, .n_embd = 32, .n_head = 4, .n_head_kv = 2, .head_dim = 16, .n_ff = 48,
      .neox = true, .qk_norm = true, .rope_base = 1000000.0f },
    { .arch = "qwen3moe", .n_layer = 2, .n_embd = 32, .n_head = 4, .n_head_kv = 1, .head_dim = 16, .n_ff = 0,
      .n_expert = 4, .n_expert_used = 2, .n_ff_exp = 16, .neox = true, .qk_norm = true, .rope_base = 1000000.0f },
    { .arch = "gemma3", .n_layer = 6, .n_embd = 32, .n_head = 2, .n_head_kv = 1, .head_dim = 16, .n_ff = 48,
      .n_swa = 3, .swa_pattern = 6, .neox = true, .qk_norm = true, .post_norms = true, .gelu = true,
      .embd_scale = true, .tied = true, .rope_base = 1000000.0f, .rope_base_swa = 10000.0f, .rope_scale = 4.0f },
    { .arch = "phi3", .n_layer = 2, .n_embd = 32, .n_head = 4, .n_head_kv = 4, .head_dim = 8, .n_ff = 40,
      .neox = true, .fused_qkv = true, .fused_gate_up = true, .rope_base = 10000.0f },
};

#define N_CFGS ((int) (sizeof(t_cfgs) / sizeof(t_cfgs[0])))

//
// weights: a bag of named F32 tensors, written to the GGUF and read by the reference
//

struct t_tensor {
    char    name[64];
    int64_t ne[3];
    float * data;
};

struct t_model {
    const struct t_cfg * cfg;
    struct t_tensor * t;
    int n;
};

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static float rng_uniform(void) { // [-1, 1)
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float) ((double) (g_rng >> 11) / 4503599627370496.0 - 1.0);
}

static const float * t_find(const struct t_model * m, const char * name) {
    for (int i = 0; i < m->n; i++) {
        if (strcmp(m->t[i].name, name) == 0) {
            return m->t[i].data;
        }
    }
    fprintf(stderr, "the test's model has no tensor %s\n", name);
    abort();
}

static const float * t_layer(const struct t_model * m, int il, const char * name) {
    char full[64];
    snprintf(full, sizeof(full), "blk.%d.%s", il, name);
    return t_find(m, full);
}

// scale: uniform in +-scale around offset
static void t_add(struct t_model * m, const char * name, int64_t ne0, int64_t ne1, int64_t ne2, float scale, float offset) {
    m->t = realloc(m->t, (size_t) (m->n + 1) * sizeof(*m->t));
    struct t_tensor * t = &m->t[m->n++];
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->ne[0] = ne0;
    t->ne[1] = ne1;
    t->ne[2] = ne2;
    const int64_t n = ne0 * ne1 * ne2;
    t->data = malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        t->data[i] = offset + scale * rng_uniform();
    }
}

static void t_add_layer(struct t_model * m, int il, const char * name, int64_t ne0, int64_t ne1, int64_t ne2, float scale, float offset) {
    char full[64];
    snprintf(full, sizeof(full), "blk.%d.%s", il, name);
    t_add(m, full, ne0, ne1, ne2, scale, offset);
}

static void make_model(struct t_model * m, const struct t_cfg * c) {
    memset(m, 0, sizeof(*m));
    m->cfg = c;
    const int nq = c->n_head * c->head_dim, nkv = c->n_head_kv * c->head_dim;
    const float se = sqrtf(3.0f / (float) c->n_embd);
    t_add(m, "token_embd.weight", c->n_embd, T_N_VOCAB, 1, c->embd_scale ? 0.2f : 1.0f, 0.0f);
    t_add(m, "output_norm.weight", c->n_embd, 1, 1, 0.2f, 1.0f);
    if (!c->tied) {
        t_add(m, "output.weight", c->n_embd, T_N_VOCAB, 1, 2.0f * se, 0.0f);
    }
    if (c->rope_freqs) {
        t_add(m, "rope_freqs.weight", c->head_dim / 2, 1, 1, 0.5f, 1.5f);
    }
    for (int il = 0; il < c->n_layer; il++) {
        t_add_layer(m, il, "attn_norm.weight", c->n_embd, 1, 1, 0.2f, 1.0f);
        if (c->fused_qkv) {
            t_add_layer(m, il, "attn_qkv.weight", c->n_embd, nq + 2 * nkv, 1, 2.0f * se, 0.0f);
        } else {
            t_add_layer(m, il, "attn_q.weight", c->n_embd, nq, 1, 2.0f * se, 0.0f);
            t_add_layer(m, il, "attn_k.weight", c->n_embd, nkv, 1, 2.0f * se, 0.0f);
            t_add_layer(m, il, "attn_v.weight", c->n_embd, nkv, 1, se, 0.0f);
        }
        if (c->qkv_bias) {
            t_add_layer(m, il, "attn_q.bias", nq, 1, 1, 0.5f, 0.0f);
            t_add_layer(m, il, "attn_k.bias", nkv, 1, 1, 0.5f, 0.0f);
            t_add_layer(m, il, "attn_v.bias", nkv, 1, 1, 0.5f, 0.0f);
        }
        if (c->qk_norm) {
            t_add_layer(m, il, "attn_q_norm.weight", c->head_dim, 1, 1, 0.3f, 1.0f);
            t_add_layer(m, il, "attn_k_norm.weight", c->head_dim, 1, 1, 0.3f, 1.0f);
        }
        t_add_layer(m, il, "attn_output.weight", nq, c->n_embd, 1, sqrtf(3.0f / (float) nq), 0.0f);
        if (c->post_norms) {
            t_add_layer(m, il, "post_attention_norm.weight", c->n_embd, 1, 1, 0.2f, 1.0f);
        }
        t_add_layer(m, il, "ffn_norm.weight", c->n_embd, 1, 1, 0.2f, 1.0f);
        if (c->n_expert > 0) {
            t_add_layer(m, il, "ffn_gate_inp.weight", c->n_embd, c->n_expert, 1, 3.0f * se, 0.0f);
            t_add_layer(m, il, "ffn_gate_exps.weight", c->n_embd, c->n_ff_exp, c->n_expert, se, 0.0f);
            t_add_layer(m, il, "ffn_up_exps.weight", c->n_embd, c->n_ff_exp, c->n_expert, se, 0.0f);
            t_add_layer(m, il, "ffn_down_exps.weight", c->n_ff_exp, c->n_embd, c->n_expert, sqrtf(3.0f / (float) c->n_ff_exp), 0.0f);
        } else if (c->fused_gate_up) {
            t_add_layer(m, il, "ffn_up.weight", c->n_embd, 2 * c->n_ff, 1, se, 0.0f);
            t_add_layer(m, il, "ffn_down.weight", c->n_ff, c->n_embd, 1, sqrtf(3.0f / (float) c->n_ff), 0.0f);
        } else {
            t_add_layer(m, il, "ffn_gate.weight", c->n_embd, c->n_ff, 1, se, 0.0f);
            t_add_layer(m, il, "ffn_up.weight", c->n_embd, c->n_ff, 1, se, 0.0f);
            t_add_layer(m, il, "ffn_down.weight", c->n_ff, c->n_embd, 1, sqrtf(3.0f / (float) c->n_ff), 0.0f);
        }
        if (c->post_norms) {
            t_add_layer(m, il, "post_ffw_norm.weight", c->n_embd, 1, 1, 0.2f, 1.0f);
        }
    }
}

static void free_model(struct t_model * m) {
    for (int i = 0; i < m->n; i++) {
        free(m->t[i].data);
    }
    free(m->t);
    memset(m, 0, sizeof(*m));
}

//
// writing the GGUF in llama.cpp's layout (with optional defects)
//

struct t_defect {
    bool omit_arch_key;      // drop the architecture's special key (expert_count, sliding_window)
    bool rope_factors_long;  // add Phi-3's LongRoPE factors
    bool yarn;               // rope.scaling.type "yarn"
    bool bad_value_length;   // attention.value_length unlike key_length
};

#define SP "\xe2\x96\x81"

static void set_vocab(struct gguf_context * gguf) {
    const char * text[T_N_VOCAB];
    float score[T_N_VOCAB];
    int32_t type[T_N_VOCAB];
    static char letters[26][2];
    static const char * const specials[] = { "<unk>", "<s>", "</s>", SP, "<|im_start|>", "<|im_end|>" };
    static const char * const words[] = {
        SP "hello", SP "world", SP "he", "ll", "lo", "or", "ld", SP "w", SP "the", "th", "er", "in", "an", "on", "at", "en",
    };
    int n = 0;
    for (int i = 0; i < 6; i++, n++) {
        text[n]  = specials[i];
        type[n]  = i == 0 ? 2 : i == 3 ? 1 : 3;
        score[n] = i == 3 ? -1.0f : 0.0f;
    }
    for (int i = 0; i < 26; i++, n++) {
        letters[i][0] = (char) ('a' + i);
        letters[i][1] = '\0';
        text[n]  = letters[i];
        type[n]  = 1;
        score[n] = -2.0f - (float) i;
    }
    for (int i = 0; i < 16; i++, n++) {
        text[n]  = words[i];
        type[n]  = 1;
        score[n] = -30.0f - (float) i;
    }
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(gguf, "tokenizer.ggml.tokens", text, T_N_VOCAB);
    gguf_set_arr_data(gguf, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, score, T_N_VOCAB);
    gguf_set_arr_data(gguf, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, type, T_N_VOCAB);
    gguf_set_val_u32(gguf, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_val_u32(gguf, "tokenizer.ggml.eos_token_id", 2);
    gguf_set_val_u32(gguf, "tokenizer.ggml.unknown_token_id", 0);
}

static void set_key_u32(struct gguf_context * gguf, const char * arch, const char * key, uint32_t v) {
    char full[128];
    snprintf(full, sizeof(full), "%s.%s", arch, key);
    gguf_set_val_u32(gguf, full, v);
}

static void set_key_f32(struct gguf_context * gguf, const char * arch, const char * key, float v) {
    char full[128];
    snprintf(full, sizeof(full), "%s.%s", arch, key);
    gguf_set_val_f32(gguf, full, v);
}

static void set_hparams(struct gguf_context * gguf, const struct t_cfg * c, const struct t_defect * d) {
    const char * a = c->arch;
    char key[128];
    gguf_set_val_str(gguf, "general.architecture", a);
    set_key_u32(gguf, a, "context_length", T_N_CTX);
    set_key_u32(gguf, a, "embedding_length", (uint32_t) c->n_embd);
    set_key_u32(gguf, a, "block_count", (uint32_t) c->n_layer);
    if (c->n_ff > 0) {
        set_key_u32(gguf, a, "feed_forward_length", (uint32_t) c->n_ff);
    }
    set_key_u32(gguf, a, "attention.head_count", (uint32_t) c->n_head);
    set_key_u32(gguf, a, "attention.head_count_kv", (uint32_t) c->n_head_kv);
    set_key_f32(gguf, a, "attention.layer_norm_rms_epsilon", T_RMS_EPS);
    set_key_f32(gguf, a, "rope.freq_base", c->rope_base);
    set_key_u32(gguf, a, "rope.dimension_count", (uint32_t) c->head_dim);
    if (c->head_dim != c->n_embd / c->n_head || d->bad_value_length) {
        set_key_u32(gguf, a, "attention.key_length", (uint32_t) c->head_dim);
        set_key_u32(gguf, a, "attention.value_length", (uint32_t) (d->bad_value_length ? 2 * c->head_dim : c->head_dim));
    }
    if (c->rope_scale > 0.0f || d->yarn) {
        snprintf(key, sizeof(key), "%s.rope.scaling.type", a);
        gguf_set_val_str(gguf, key, d->yarn ? "yarn" : "linear");
        set_key_f32(gguf, a, "rope.scaling.factor", c->rope_scale > 0.0f ? c->rope_scale : 2.0f);
    }
    if (c->n_expert > 0) {
        if (!d->omit_arch_key) {
            set_key_u32(gguf, a, "expert_count", (uint32_t) c->n_expert);
        }
        set_key_u32(gguf, a, "expert_used_count", (uint32_t) c->n_expert_used);
        set_key_u32(gguf, a, "expert_feed_forward_length", (uint32_t) c->n_ff_exp);
    }
    if (c->n_swa > 0 && !d->omit_arch_key) {
        set_key_u32(gguf, a, "attention.sliding_window", (uint32_t) c->n_swa);
    }
}

static bool write_model(const char * path, const struct t_model * m, const struct t_defect * d) {
    const struct ggml_init_params ip = { .mem_size = 4 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    set_hparams(gguf, m->cfg, d);
    set_vocab(gguf);
    gguf_set_val_str(gguf, "tokenizer.chat_template",
                     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}");
    for (int i = 0; i < m->n; i++) {
        const struct t_tensor * s = &m->t[i];
        struct ggml_tensor * t = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, s->ne[0], s->ne[1], s->ne[2]);
        ggml_set_name(t, s->name);
        memcpy(t->data, s->data, ggml_nbytes(t));
        gguf_add_tensor(gguf, t);
    }
    if (d->rope_factors_long) {
        struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, m->cfg->head_dim / 2);
        ggml_set_name(t, "rope_factors_long.weight");
        memset(t->data, 0, ggml_nbytes(t));
        gguf_add_tensor(gguf, t);
    }
    const bool ok = gguf_write_to_file(gguf, path, false);
    gguf_free(gguf);
    ggml_free(ctx);
    return ok;
}

//
// the reference, in double precision
//

static void ref_matvec(const float * w, const double * x, double * y, int n_in, int n_out) {
    for (int o = 0; o < n_out; o++) {
        double s = 0.0;
        for (int i = 0; i < n_in; i++) {
            s += (double) w[(size_t) o * (size_t) n_in + (size_t) i] * x[i];
        }
        y[o] = s;
    }
}

static void ref_rms_norm(double * x, const float * w, int n) {
    double ss = 0.0;
    for (int i = 0; i < n; i++) {
        ss += x[i] * x[i];
    }
    const double r = 1.0 / sqrt(ss / n + (double) T_RMS_EPS);
    for (int i = 0; i < n; i++) {
        x[i] = x[i] * r * (double) w[i];
    }
}

static bool ref_is_swa(const struct t_cfg * c, int il) {
    return c->n_swa > 0 && il % c->swa_pattern < c->swa_pattern - 1;
}

// Rotates the pairs of every head: adjacent (2i, 2i + 1), or NeoX's (i, i +
// d/2), by the angle pos / scale * base^(-2i / d) / factor_i.
static void ref_rope(const struct t_model * m, double * x, int n_heads, int pos, int il) {
    const struct t_cfg * c = m->cfg;
    const int d = c->head_dim;
    const bool swa = ref_is_swa(c, il);
    const double base  = swa ? c->rope_base_swa : c->rope_base;
    const double scale = swa || c->rope_scale <= 0.0f ? 1.0 : c->rope_scale;
    const float * factors = c->rope_freqs ? t_find(m, "rope_freqs.weight") : NULL;
    for (int h = 0; h < n_heads; h++) {
        for (int i = 0; i < d / 2; i++) {
            double theta = pos / scale * pow(base, -2.0 * i / d);
            if (factors != NULL) {
                theta /= factors[i];
            }
            double * a = x + h * d + (c->neox ? i : 2 * i);
            double * b = x + h * d + (c->neox ? i + d / 2 : 2 * i + 1);
            const double va = *a, vb = *b;
            *a = va * cos(theta) - vb * sin(theta);
            *b = va * sin(theta) + vb * cos(theta);
        }
    }
}

static double ref_act(const struct t_cfg * c, double x) {
    if (c->gelu) { // the tanh approximation
        return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    }
    return x / (1.0 + exp(-x));
}

// down · (act(gate · m) * (up · m)) for matrices of n_ff rows
static void ref_glu_ffn(const struct t_cfg * c, const float * gate, const float * up, const float * down, int n_ff,
                        const double * m, double * out) {
    double * g = calloc((size_t) n_ff, sizeof(double));
    double * u = calloc((size_t) n_ff, sizeof(double));
    ref_matvec(gate, m, g, c->n_embd, n_ff);
    ref_matvec(up, m, u, c->n_embd, n_ff);
    for (int i = 0; i < n_ff; i++) {
        g[i] = ref_act(c, g[i]) * u[i];
    }
    ref_matvec(down, g, out, n_ff, c->n_embd);
    free(g);
    free(u);
}

static void ref_ffn(const struct t_model * m, int il, const double * x, double * out) {
    const struct t_cfg * c = m->cfg;
    const int ne = c->n_embd;
    if (c->n_expert > 0) {
        double probs[16], sum = 0.0, max = -INFINITY;
        ref_matvec(t_layer(m, il, "ffn_gate_inp.weight"), x, probs, ne, c->n_expert);
        for (int e = 0; e < c->n_expert; e++) {
            max = fmax(max, probs[e]);
        }
        for (int e = 0; e < c->n_expert; e++) {
            probs[e] = exp(probs[e] - max);
            sum += probs[e];
        }
        bool used[16] = { false };
        int chosen[16];
        double wsum = 0.0;
        for (int k = 0; k < c->n_expert_used; k++) {
            int best = -1;
            for (int e = 0; e < c->n_expert; e++) {
                best = !used[e] && (best < 0 || probs[e] > probs[best]) ? e : best;
            }
            used[best] = true;
            chosen[k] = best;
            wsum += probs[best] / sum;
        }
        const float * gate = t_layer(m, il, "ffn_gate_exps.weight");
        const float * up   = t_layer(m, il, "ffn_up_exps.weight");
        const float * down = t_layer(m, il, "ffn_down_exps.weight");
        const size_t per_in = (size_t) ne * (size_t) c->n_ff_exp;
        double * y = calloc((size_t) ne, sizeof(double));
        memset(out, 0, (size_t) ne * sizeof(double));
        for (int k = 0; k < c->n_expert_used; k++) {
            const int e = chosen[k];
            ref_glu_ffn(c, gate + e * per_in, up + e * per_in, down + e * per_in, c->n_ff_exp, x, y);
            for (int i = 0; i < ne; i++) {
                out[i] += probs[e] / sum / wsum * y[i];
            }
        }
        free(y);
    } else if (c->fused_gate_up) {
        const float * up = t_layer(m, il, "ffn_up.weight"); // rows 0 .. n_ff - 1: the gate
        ref_glu_ffn(c, up, up + (size_t) c->n_ff * (size_t) ne, t_layer(m, il, "ffn_down.weight"), c->n_ff, x, out);
    } else {
        ref_glu_ffn(c, t_layer(m, il, "ffn_gate.weight"), t_layer(m, il, "ffn_up.weight"), t_layer(m, il, "ffn_down.weight"),
                    c->n_ff, x, out);
    }
    if (c->post_norms) {
        ref_rms_norm(out, t_layer(m, il, "post_ffw_norm.weight"), ne);
    }
}

// q, k, v of one token from the normed input
static void ref_qkv(const struct t_model * m, int il, const double * nrm, double * q, double * k, double * v) {
    const struct t_cfg * c = m->cfg;
    const int nq = c->n_head * c->head_dim, nkv = c->n_head_kv * c->head_dim;
    if (c->fused_qkv) {
        const float * w = t_layer(m, il, "attn_qkv.weight");
        ref_matvec(w, nrm, q, c->n_embd, nq);
        ref_matvec(w + (size_t) nq * (size_t) c->n_embd, nrm, k, c->n_embd, nkv);
        ref_matvec(w + (size_t) (nq + nkv) * (size_t) c->n_embd, nrm, v, c->n_embd, nkv);
    } else {
        ref_matvec(t_layer(m, il, "attn_q.weight"), nrm, q, c->n_embd, nq);
        ref_matvec(t_layer(m, il, "attn_k.weight"), nrm, k, c->n_embd, nkv);
        ref_matvec(t_layer(m, il, "attn_v.weight"), nrm, v, c->n_embd, nkv);
    }
    if (c->qkv_bias) {
        const float * bq = t_layer(m, il, "attn_q.bias"), * bk = t_layer(m, il, "attn_k.bias"), * bv = t_layer(m, il, "attn_v.bias");
        for (int i = 0; i < nq; i++) {
            q[i] += bq[i];
        }
        for (int i = 0; i < nkv; i++) {
            k[i] += bk[i];
            v[i] += bv[i];
        }
    }
    if (c->qk_norm) {
        for (int h = 0; h < c->n_head; h++) {
            ref_rms_norm(q + h * c->head_dim, t_layer(m, il, "attn_q_norm.weight"), c->head_dim);
        }
        for (int h = 0; h < c->n_head_kv; h++) {
            ref_rms_norm(k + h * c->head_dim, t_layer(m, il, "attn_k_norm.weight"), c->head_dim);
        }
    }
}

// logits[n][T_N_VOCAB] of every position of tokens[0 .. n)
static void ref_forward(const struct t_model * m, const int32_t * tokens, int n, double * logits) {
    const struct t_cfg * c = m->cfg;
    const int ne = c->n_embd, d = c->head_dim, nq = c->n_head * d, nkv = c->n_head_kv * d;
    double * x   = calloc((size_t) (n * ne), sizeof(double));
    double * q   = calloc((size_t) (n * nq), sizeof(double));
    double * k   = calloc((size_t) (n * nkv), sizeof(double));
    double * v   = calloc((size_t) (n * nkv), sizeof(double));
    double * att = calloc((size_t) nq, sizeof(double));
    double * tmp = calloc((size_t) ne, sizeof(double));
    double * h   = calloc((size_t) ne, sizeof(double));
    double * score = calloc((size_t) n, sizeof(double));
    const float * embd = t_find(m, "token_embd.weight");
    for (int t = 0; t < n; t++) {
        for (int i = 0; i < ne; i++) {
            x[t * ne + i] = embd[tokens[t] * ne + i] * (c->embd_scale ? sqrt((double) ne) : 1.0);
        }
    }
    for (int il = 0; il < c->n_layer; il++) {
        for (int t = 0; t < n; t++) {
            memcpy(tmp, x + t * ne, (size_t) ne * sizeof(double));
            ref_rms_norm(tmp, t_layer(m, il, "attn_norm.weight"), ne);
            ref_qkv(m, il, tmp, q + t * nq, k + t * nkv, v + t * nkv);
            ref_rope(m, q + t * nq, c->n_head, t, il);
            ref_rope(m, k + t * nkv, c->n_head_kv, t, il);
        }
        for (int t = 0; t < n; t++) {
            for (int hd = 0; hd < c->n_head; hd++) {
                const int g = hd / (c->n_head / c->n_head_kv);
                const int first = ref_is_swa(c, il) && t - c->n_swa + 1 > 0 ? t - c->n_swa + 1 : 0;
                double max = -INFINITY, sum = 0.0;
                for (int j = first; j <= t; j++) {
                    double s = 0.0;
                    for (int e = 0; e < d; e++) {
                        s += q[t * nq + hd * d + e] * k[j * nkv + g * d + e];
                    }
                    score[j] = s / sqrt((double) d);
                    max = fmax(max, score[j]);
                }
                for (int j = first; j <= t; j++) {
                    score[j] = exp(score[j] - max);
                    sum += score[j];
                }
                for (int e = 0; e < d; e++) {
                    double o = 0.0;
                    for (int j = first; j <= t; j++) {
                        o += score[j] / sum * v[j * nkv + g * d + e];
                    }
                    att[hd * d + e] = o;
                }
            }
            ref_matvec(t_layer(m, il, "attn_output.weight"), att, h, nq, ne);
            if (c->post_norms) {
                ref_rms_norm(h, t_layer(m, il, "post_attention_norm.weight"), ne);
            }
            for (int i = 0; i < ne; i++) {
                h[i] += x[t * ne + i];
            }
            memcpy(tmp, h, (size_t) ne * sizeof(double));
            ref_rms_norm(tmp, t_layer(m, il, "ffn_norm.weight"), ne);
            double * f = calloc((size_t) ne, sizeof(double));
            ref_ffn(m, il, tmp, f);
            for (int i = 0; i < ne; i++) {
                x[t * ne + i] = h[i] + f[i];
            }
            free(f);
        }
    }
    const float * out = c->tied ? embd : t_find(m, "output.weight");
    for (int t = 0; t < n; t++) {
        ref_rms_norm(x + t * ne, t_find(m, "output_norm.weight"), ne);
        ref_matvec(out, x + t * ne, logits + t * T_N_VOCAB, ne, T_N_VOCAB);
    }
    free(x);
    free(q);
    free(k);
    free(v);
    free(att);
    free(tmp);
    free(h);
    free(score);
}

//
// running the model
//

static char g_dir[256];

static void temp_path(char * out, size_t size, const char * name) {
    snprintf(out, size, "%s/%s", g_dir, name);
}

static double max_abs_diff(const float * got, const double * want, int n) {
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        const double d = fabs((double) got[i] - want[i]);
        m = d > m || isnan(d) ? d : m;
    }
    return m;
}

static int ref_argmax(const double * logits) {
    int best = 0;
    for (int i = 1; i < T_N_VOCAB; i++) {
        best = logits[i] > logits[best] ? i : best;
    }
    return best;
}

struct t_run {
    const char   * what;
    int64_t        n_batch;
    enum ggml_type kv_type;
    int            flash_attn;
    double         tol;
};

// the prompt, then 3 greedy steps (the reference's choice): every step's
// logits against the reference
static void check_generation(const struct run_model * model, const struct t_model * m, const struct t_run * r) {
    const char * arch = m->cfg->arch;
    struct run_context_params cp = run_context_default_params();
    cp.n_ctx      = 32;
    cp.n_batch    = r->n_batch;
    cp.n_threads  = 2;
    cp.kv_type    = r->kv_type;
    cp.flash_attn = r->flash_attn;
    cp.all_logits = true;
    struct run_context * rc = run_context_new(model, &cp);
    CHECK_MSG(rc != NULL, "%s %s: no context", arch, r->what);
    if (rc == NULL) {
        return;
    }
    int32_t tokens[T_MAX_TOKENS] = { 1, 40, 10, 33, 7, 45, 20 };
    double ref[T_MAX_TOKENS * T_N_VOCAB];
    ref_forward(m, tokens, T_N_PROMPT, ref);
    bool ok = run_decode(rc, tokens, T_N_PROMPT);
    CHECK_MSG(ok && rc->n_outputs == T_N_PROMPT, "%s %s: prompt", arch, r->what);
    double worst = 0.0;
    for (int t = 0; ok && t < T_N_PROMPT; t++) {
        worst = fmax(worst, max_abs_diff(run_get_logits(rc, t), ref + t * T_N_VOCAB, T_N_VOCAB));
    }
    int n = T_N_PROMPT;
    for (int step = 0; ok && step < T_N_STEPS; step++) {
        const int32_t next = ref_argmax(ref + (n - 1) * T_N_VOCAB);
        tokens[n++] = next;
        ref_forward(m, tokens, n, ref);
        ok = run_decode(rc, &next, 1);
        CHECK_MSG(ok, "%s %s: step %d", arch, r->what, step);
        if (ok) {
            worst = fmax(worst, max_abs_diff(run_get_logits(rc, 0), ref + (n - 1) * T_N_VOCAB, T_N_VOCAB));
        }
    }
    CHECK_MSG(worst <= r->tol, "%s %s: logits differ from the reference by %g (tol %g)", arch, r->what, worst, r->tol);
    printf("%-9s %-22s %2d splits, largest logit difference %.3g\n", arch, r->what, rc->n_splits, worst);
    run_context_free(rc);
}

static void test_arch(const struct t_model * m, const char * path, const char * devices) {
    struct run_model_params mp = run_model_default_params();
    mp.devices = devices;
    struct run_model * model = run_model_load(path, &mp);
    CHECK_MSG(model != NULL, "%s: not loaded", m->cfg->arch);
    if (model == NULL) {
        return;
    }
    CHECK(strcmp(model->hp.arch->name, m->cfg->arch) == 0);
    CHECK_EQ_INT(model->hp.head_dim, m->cfg->head_dim);
    CHECK_EQ_INT(model->hp.n_expert, m->cfg->n_expert);
    CHECK((model->output == model->tok_embd) == m->cfg->tied);
    // logits are of magnitude 1 to 10; F32 paths agree with the reference to
    // about 1e-5, an F16 cache (11-bit mantissas) to a few 1e-3
    const struct t_run runs[] = {
        { "unfused f32",             512, GGML_TYPE_F32, 0, 1e-3 },
        { "fused f32 batch 3",       3,   GGML_TYPE_F32, 1, 1e-3 },
        { "auto f16",                512, GGML_TYPE_F16, -1, 3e-2 },
        { "unfused f16 batch 1",     1,   GGML_TYPE_F16, 0, 3e-2 },
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        check_generation(model, m, &runs[i]);
    }
    run_model_free(model);
    if (strcmp(devices, "none") == 0) {
        return;
    }
    // one layer on the device, the others and the output on the CPU: the scheduler splits the graph
    mp.n_gpu_layers = 1;
    model = run_model_load(path, &mp);
    CHECK_MSG(model != NULL, "%s: not loaded with one layer on %s", m->cfg->arch, devices);
    if (model != NULL) {
        const struct t_run split = { "one layer on the device", 2, GGML_TYPE_F32, -1, 1e-3 };
        check_generation(model, m, &split);
        run_model_free(model);
    }
}

//
// the synthetic models and the program
//

static void test_synthetic(const char * arch) {
    struct run_synth_params p;
    CHECK(run_synth_preset("tiny", &p));
    p.arch      = arch;
    p.n_embd    = 64;
    p.n_layer   = strcmp(arch, "gemma3") == 0 ? 6 : 2;
    p.n_head    = 4;
    p.n_head_kv = 2;
    p.n_ff      = 128;
    p.n_vocab   = 400;
    p.n_threads = 2;
    struct run_weight_source src;
    CHECK_MSG(run_synth_source(&p, &src), "synthetic %s", arch);
    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * model = run_model_from_source(&src, &mp);
    CHECK_MSG(model != NULL, "synthetic %s: not loaded", arch);
    if (model == NULL) {
        return;
    }
    CHECK(strcmp(model->hp.arch->name, arch) == 0);
    struct run_context_params cp = run_context_default_params();
    cp.n_ctx = 32;
    cp.n_threads = 2;
    struct run_context * rc = run_context_new(model, &cp);
    const int32_t prompt[5] = { 1, 300, 301, 302, 303 };
    const bool ok = rc != NULL && run_decode(rc, prompt, 5);
    CHECK_MSG(ok, "synthetic %s: decode", arch);
    bool finite = ok;
    for (int i = 0; finite && i < model->hp.n_vocab; i++) {
        finite = isfinite(run_get_logits(rc, 0)[i]);
    }
    CHECK_MSG(finite, "synthetic %s: logits not finite", arch);
    run_context_free(rc);
    run_model_free(model);
}

static void test_cli(const char * arch, const char * path) {
    char * argv[] = { (char *) GGML_RUN_BIN, (char *) "-m", (char *) path, (char *) "-p", (char *) "hello world",
                      (char *) "-n", (char *) "4", (char *) "--ignore-eos", (char *) "-dev", (char *) "none",
                      (char *) "-t", (char *) "2", NULL };
    struct program_result r;
    CHECK(run_program(argv, 0, &r));
    char ending[32];
    CHECK_MSG(r.exited && r.status == 0, "ggml-run -m (%s) ended by %s:\n%s", arch, program_ending(&r, ending, sizeof(ending)), r.output);
    // the prompt, then 4 pieces of text (single letters or words of the vocabulary)
    const char * gen = strstr(r.output, "hello world");
    CHECK_MSG(gen != NULL && strstr(r.output, arch) != NULL, "ggml-run -m (%s) printed:\n%s", arch, r.output);
    // a conversation with the file's template (chatml), the input a file of two messages
    char input[400];
    temp_path(input, sizeof(input), "messages.txt");
    FILE * f = fopen(input, "w");
    CHECK(f != NULL);
    if (f != NULL) {
        fputs("hello world\nthe end\n", f);
        fclose(f);
        const int saved = dup(STDIN_FILENO);
        const int fd = open(input, O_RDONLY);
        dup2(fd, STDIN_FILENO);
        char * chat[] = { (char *) GGML_RUN_BIN, (char *) "-m", (char *) path, (char *) "-cnv", (char *) "-n", (char *) "3",
                          (char *) "-dev", (char *) "none", (char *) "-t", (char *) "2", NULL };
        CHECK(run_program(chat, 0, &r));
        dup2(saved, STDIN_FILENO);
        close(fd);
        close(saved);
        remove(input);
        CHECK_MSG(r.exited && r.status == 0 && strstr(r.output, "template chatml") != NULL && strstr(r.output, "\n> \n") != NULL,
                  "ggml-run -cnv (%s):\n%s", arch, r.output);
    }
    char * bench[] = { (char *) GGML_RUN_BIN, (char *) "-m", (char *) path, (char *) "--bench", (char *) "-pp", (char *) "8",
                       (char *) "-tg", (char *) "4", (char *) "-dev", (char *) "none", (char *) "-t", (char *) "2", NULL };
    CHECK(run_program(bench, 0, &r));
    CHECK_MSG(r.exited && r.status == 0 && strstr(r.output, "prompt:") != NULL && strstr(r.output, "generation:") != NULL,
              "ggml-run --bench (%s):\n%s", arch, r.output);
}

//
// failures
//

static void check_load_fails(const struct t_model * m, const struct t_defect * d, const char * what) {
    char path[400];
    temp_path(path, sizeof(path), "defect.gguf");
    CHECK(write_model(path, m, d));
    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * model = run_model_load(path, &mp);
    CHECK_MSG(model == NULL, "%s %s: loaded", m->cfg->arch, what);
    run_model_free(model);
    remove(path);
}

static void test_failures(const struct t_model * models) {
    // the names messages list are those of the table
    for (int i = 0; i < N_CFGS; i++) {
        CHECK(run_arch_find(t_cfgs[i].arch) != NULL && strstr(run_arch_names(), t_cfgs[i].arch) != NULL);
    }
    CHECK(run_arch_find("gpt2") == NULL && run_arch_find("") == NULL);
    for (int i = 0; i < N_CFGS; i++) {
        const struct t_model * m = &models[i];
        if (m->cfg->n_expert > 0 || m->cfg->n_swa > 0) {
            check_load_fails(m, &(struct t_defect) { .omit_arch_key = true }, "without its architecture's key");
        }
    }
    check_load_fails(&models[5], &(struct t_defect) { .rope_factors_long = true }, "LongRoPE");
    check_load_fails(&models[1], &(struct t_defect) { .yarn = true }, "YaRN");
    check_load_fails(&models[2], &(struct t_defect) { .bad_value_length = true }, "value_length");
}

int main(int argc, char ** argv) {
    const bool vulkan = argc > 1 && strcmp(argv[1], "--vulkan") == 0;
    ggml_backend_load_all();
    const char * devices = "none";
    if (vulkan) {
        ggml_backend_dev_t dev = ggml_backend_dev_by_name("Vulkan0");
        if (dev == NULL) {
            printf("no Vulkan device: skipped\n");
            return 77;
        }
        devices = "Vulkan0";
    }
    const char * tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof(g_dir), "%s/test-run-arch-XXXXXX", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(g_dir) == NULL) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    static struct t_model models[N_CFGS];
    for (int i = 0; i < N_CFGS; i++) {
        make_model(&models[i], &t_cfgs[i]);
        char path[400], name[32];
        snprintf(name, sizeof(name), "%s.gguf", t_cfgs[i].arch);
        temp_path(path, sizeof(path), name);
        CHECK(write_model(path, &models[i], &(struct t_defect) { 0 }));
        test_arch(&models[i], path, devices);
        if (!vulkan) {
            test_synthetic(t_cfgs[i].arch);
            test_cli(t_cfgs[i].arch, path);
        }
        remove(path);
    }
    if (!vulkan) {
        test_failures(models);
    }
    for (int i = 0; i < N_CFGS; i++) {
        free_model(&models[i]);
    }
    rmdir(g_dir);
    return TEST_RESULT();
}
