// test-run-llama: the model runner (tools/ggml-run) and the quantizer
// (tools/ggml-quantize) on a tiny llama GGUF written here.
//
// - the SentencePiece tokenizer on strings whose tokens were derived by hand
//   from the vocabulary below (merge order by score, stale pairs, byte
//   fallback, unknown characters, spaces), and token pieces;
// - the logits of a prompt and of 3 greedy steps against a naive
//   double-precision llama written here (RMSNorm, adjacent-pair RoPE,
//   grouped-query causal attention, SwiGLU, residuals), with fused and
//   unfused attention, F32 and F16 caches, prompts split over batches, 1 and
//   2 threads, tied output embeddings, and layers on a second device with
//   its own memory (the test backend);
// - the model quantized to Q8_0 by ggml-quantize's code: types and metadata
//   of the output file, logits close to the reference;
// - the model converted to BF16: its matrices in the CPU's extra buffer type
//   (CPU_REPACK) where the CPU has one, and not with repack off; logits close
//   to the reference either way;
// - layers spread over devices by -ngl and --tensor-split, devices chosen by name;
// - the sampler's choices against their definitions, top-p's cutoff reached exactly;
// - the ggml-run program itself: a prompt that fills the context exactly, -n 0,
//   --verbose-prompt with special tokens parsed or not;
// - the synthetic model: the same bytes whatever the thread count;
// - failures: missing, corrupt and truncated files, another architecture, a
//   missing tensor or key, a wrong shape: NULL and a message, no crash.

#include "testing.h"
#include "run-program.h"

#include "context.h"
#include "model.h"
#include "quantize.h"
#include "sampling.h"
#include "synthetic.h"
#include "tokenizer.h"

#include "test-backend.h"

#include "ggml-backend.h"
#include "gguf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

//
// the tiny model
//

enum {
    T_N_VOCAB   = 40,
    T_N_EMBD    = 32,
    T_N_LAYER   = 2,
    T_N_HEAD    = 4,
    T_N_HEAD_KV = 2,
    T_HEAD_DIM  = T_N_EMBD / T_N_HEAD,
    T_N_EMBD_KV = T_N_HEAD_KV * T_HEAD_DIM,
    T_N_FF      = 64,
    T_N_CTX     = 64,
};

static const float T_RMS_EPS   = 1e-5f;
static const float T_ROPE_BASE = 10000.0f;

#define SP "\xe2\x96\x81" // U+2581, SentencePiece's space

// piece, score, type (1 normal, 2 unknown, 3 control, 6 byte)
static const struct { const char * text; float score; int32_t type; } t_vocab[T_N_VOCAB] = {
    { "<unk>", 0, 2 }, { "<s>", 0, 3 }, { "</s>", 0, 3 },
    { "<0x21>", 0, 6 }, { "<0xC3>", 0, 6 }, { "<0xA9>", 0, 6 }, { "<0x0A>", 0, 6 },
    { SP, -1, 1 }, { "h", -2, 1 }, { "e", -3, 1 }, { "l", -4, 1 }, { "o", -5, 1 }, { "w", -6, 1 },
    { "r", -7, 1 }, { "d", -8, 1 }, { "a", -9, 1 }, { "c", -10, 1 }, { "t", -11, 1 },
    { "he", -20, 1 },            // 18
    { "ll", -19, 1 },            // 19
    { SP "h", -21, 1 },          // 20
    { "llo", -22, 1 },           // 21
    { SP "he", -23, 1 },         // 22
    { "hell", -24, 1 },          // 23
    { "hello", -25, 1 },         // 24
    { "lo", -30, 1 },            // 25
    { SP "w", -26, 1 },          // 26
    { "or", -27, 1 },            // 27
    { SP "wor", -28, 1 },        // 28
    { "ld", -29, 1 },            // 29
    { SP "world", -31, 1 },      // 30
    { "at", -32, 1 },            // 31
    { "ca", -33, 1 },            // 32
    { SP "c", -34, 1 },          // 33
    { SP "cat", -35, 1 },        // 34
    { "cat", -36, 1 },           // 35
    { SP SP, -40, 1 },           // 36
    { "x", -50, 1 }, { "y", -51, 1 }, { "z", -52, 1 },
};

struct t_layer {
    float attn_norm[T_N_EMBD];
    float wq[T_N_EMBD * T_N_EMBD];       // ggml layout: ne0 = input, ne1 = output (row o: weights of output o)
    float wk[T_N_EMBD_KV * T_N_EMBD];
    float wv[T_N_EMBD_KV * T_N_EMBD];
    float wo[T_N_EMBD * T_N_EMBD];
    float ffn_norm[T_N_EMBD];
    float ffn_gate[T_N_FF * T_N_EMBD];
    float ffn_up[T_N_FF * T_N_EMBD];
    float ffn_down[T_N_EMBD * T_N_FF];
};

struct t_weights {
    float tok_embd[T_N_VOCAB * T_N_EMBD];
    float output_norm[T_N_EMBD];
    float output[T_N_VOCAB * T_N_EMBD];
    struct t_layer layers[T_N_LAYER];
    bool tied;  // no output.weight: the output uses tok_embd
};

static uint64_t g_rng = 0x1234567887654321ull;

static float rng_uniform(void) { // [-1, 1)
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float) ((double) (g_rng >> 11) / 4503599627370496.0 - 1.0);
}

static void fill(float * w, int n, float scale, float offset) {
    for (int i = 0; i < n; i++) {
        w[i] = offset + scale * rng_uniform();
    }
}

static void make_weights(struct t_weights * w, bool tied) {
    const float s_embd = sqrtf(3.0f / T_N_EMBD), s_ff = sqrtf(3.0f / T_N_FF);
    fill(w->tok_embd, T_N_VOCAB * T_N_EMBD, 1.0f, 0.0f);
    fill(w->output_norm, T_N_EMBD, 0.2f, 1.0f);
    fill(w->output, T_N_VOCAB * T_N_EMBD, 2.0f * s_embd, 0.0f);
    for (int il = 0; il < T_N_LAYER; il++) {
        struct t_layer * l = &w->layers[il];
        fill(l->attn_norm, T_N_EMBD, 0.2f, 1.0f);
        fill(l->wq, T_N_EMBD * T_N_EMBD, 2.0f * s_embd, 0.0f); // larger q/k: attention that is not uniform
        fill(l->wk, T_N_EMBD_KV * T_N_EMBD, 2.0f * s_embd, 0.0f);
        fill(l->wv, T_N_EMBD_KV * T_N_EMBD, s_embd, 0.0f);
        fill(l->wo, T_N_EMBD * T_N_EMBD, s_embd, 0.0f);
        fill(l->ffn_norm, T_N_EMBD, 0.2f, 1.0f);
        fill(l->ffn_gate, T_N_FF * T_N_EMBD, s_embd, 0.0f);
        fill(l->ffn_up, T_N_FF * T_N_EMBD, s_embd, 0.0f);
        fill(l->ffn_down, T_N_EMBD * T_N_FF, s_ff, 0.0f);
    }
    w->tied = tied;
}

//
// writing the GGUF (with optional defects)
//

struct t_file_opts {
    const char * arch;          // general.architecture
    bool omit_block_count;      // no llama.block_count
    bool omit_ffn_up_1;         // no blk.1.ffn_up.weight
    bool bad_wk_shape;          // blk.0.attn_k.weight with the wrong output size
};

static const struct t_file_opts t_good = { .arch = "llama", .omit_block_count = false, .omit_ffn_up_1 = false, .bad_wk_shape = false };

static void add_tensor(struct ggml_context * ctx, struct gguf_context * gguf, const char * name,
                       const float * data, int64_t ne0, int64_t ne1) {
    struct ggml_tensor * t = ne1 > 1 ? ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, ne1) : ggml_new_tensor_1d(ctx, GGML_TYPE_F32, ne0);
    ggml_set_name(t, name);
    memcpy(t->data, data, ggml_nbytes(t));
    gguf_add_tensor(gguf, t);
}

static void set_vocab_keys(struct gguf_context * gguf) {
    const char * text[T_N_VOCAB];
    float score[T_N_VOCAB];
    int32_t type[T_N_VOCAB];
    for (int i = 0; i < T_N_VOCAB; i++) {
        text[i]  = t_vocab[i].text;
        score[i] = t_vocab[i].score;
        type[i]  = t_vocab[i].type;
    }
    gguf_set_val_str(gguf, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(gguf, "tokenizer.ggml.tokens", text, T_N_VOCAB);
    gguf_set_arr_data(gguf, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, score, T_N_VOCAB);
    gguf_set_arr_data(gguf, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, type, T_N_VOCAB);
    gguf_set_val_u32(gguf, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_val_u32(gguf, "tokenizer.ggml.eos_token_id", 2);
    gguf_set_val_u32(gguf, "tokenizer.ggml.unknown_token_id", 0);
}

static void set_hparam_keys(struct gguf_context * gguf, const struct t_file_opts * o) {
    gguf_set_val_str(gguf, "general.architecture", o->arch);
    gguf_set_val_u32(gguf, "llama.context_length", T_N_CTX);
    gguf_set_val_u32(gguf, "llama.embedding_length", T_N_EMBD);
    if (!o->omit_block_count) {
        gguf_set_val_u32(gguf, "llama.block_count", T_N_LAYER);
    }
    gguf_set_val_u32(gguf, "llama.feed_forward_length", T_N_FF);
    gguf_set_val_u32(gguf, "llama.attention.head_count", T_N_HEAD);
    gguf_set_val_u32(gguf, "llama.attention.head_count_kv", T_N_HEAD_KV);
    gguf_set_val_f32(gguf, "llama.attention.layer_norm_rms_epsilon", T_RMS_EPS);
    gguf_set_val_f32(gguf, "llama.rope.freq_base", T_ROPE_BASE);
    gguf_set_val_u32(gguf, "llama.rope.dimension_count", T_HEAD_DIM);
}

static void add_layer_tensors(struct ggml_context * ctx, struct gguf_context * gguf, const struct t_layer * l, int il,
                              const struct t_file_opts * o) {
    char name[64];
#define T_ADD(suffix, field, ne0, ne1) \
    snprintf(name, sizeof(name), "blk.%d." suffix ".weight", il); \
    add_tensor(ctx, gguf, name, l->field, ne0, ne1)
    T_ADD("attn_norm", attn_norm, T_N_EMBD, 1);
    T_ADD("attn_q", wq, T_N_EMBD, T_N_EMBD);
    if (o->bad_wk_shape && il == 0) {
        T_ADD("attn_k", wk, T_N_EMBD, T_N_EMBD_KV / 2);
    } else {
        T_ADD("attn_k", wk, T_N_EMBD, T_N_EMBD_KV);
    }
    T_ADD("attn_v", wv, T_N_EMBD, T_N_EMBD_KV);
    T_ADD("attn_output", wo, T_N_EMBD, T_N_EMBD);
    T_ADD("ffn_norm", ffn_norm, T_N_EMBD, 1);
    T_ADD("ffn_gate", ffn_gate, T_N_EMBD, T_N_FF);
    if (!(o->omit_ffn_up_1 && il == 1)) {
        T_ADD("ffn_up", ffn_up, T_N_EMBD, T_N_FF);
    }
    T_ADD("ffn_down", ffn_down, T_N_FF, T_N_EMBD);
#undef T_ADD
}

static bool write_model(const char * path, const struct t_weights * w, const struct t_file_opts * o) {
    const struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    set_hparam_keys(gguf, o);
    set_vocab_keys(gguf);
    add_tensor(ctx, gguf, "token_embd.weight", w->tok_embd, T_N_EMBD, T_N_VOCAB);
    add_tensor(ctx, gguf, "output_norm.weight", w->output_norm, T_N_EMBD, 1);
    if (!w->tied) {
        add_tensor(ctx, gguf, "output.weight", w->output, T_N_EMBD, T_N_VOCAB);
    }
    for (int il = 0; il < T_N_LAYER; il++) {
        add_layer_tensors(ctx, gguf, &w->layers[il], il, o);
    }
    const bool ok = gguf_write_to_file(gguf, path, false);
    gguf_free(gguf);
    ggml_free(ctx);
    return ok;
}

//
// the reference: a naive llama in double precision
//

static void ref_matvec(const float * w, const double * x, double * y, int n_in, int n_out) {
    for (int o = 0; o < n_out; o++) {
        double s = 0.0;
        for (int i = 0; i < n_in; i++) {
            s += (double) w[o * n_in + i] * x[i];
        }
        y[o] = s;
    }
}

static void ref_rms_norm(const double * x, const float * w, double * y, int n) {
    double ss = 0.0;
    for (int i = 0; i < n; i++) {
        ss += x[i] * x[i];
    }
    const double r = 1.0 / sqrt(ss / n + (double) T_RMS_EPS);
    for (int i = 0; i < n; i++) {
        y[i] = x[i] * r * (double) w[i];
    }
}

// rotates adjacent pairs (2i, 2i + 1) of every head by pos * base^(-2i / head_dim)
static void ref_rope(double * x, int n_heads, int pos) {
    for (int h = 0; h < n_heads; h++) {
        for (int i = 0; i < T_HEAD_DIM / 2; i++) {
            const double theta = pos * pow((double) T_ROPE_BASE, -2.0 * i / T_HEAD_DIM);
            double * p = x + h * T_HEAD_DIM + 2 * i;
            const double a = p[0], b = p[1];
            p[0] = a * cos(theta) - b * sin(theta);
            p[1] = a * sin(theta) + b * cos(theta);
        }
    }
}

// logits[n][T_N_VOCAB] of every position of tokens[0 .. n)
static void ref_forward(const struct t_weights * w, const int32_t * tokens, int n, double * logits) {
    double (*x)[T_N_EMBD] = calloc((size_t) n, sizeof(*x));
    double (*k)[T_N_EMBD_KV] = calloc((size_t) n, sizeof(*k));
    double (*v)[T_N_EMBD_KV] = calloc((size_t) n, sizeof(*v));
    double (*q)[T_N_EMBD] = calloc((size_t) n, sizeof(*q));
    double nrm[T_N_EMBD], att[T_N_EMBD], tmp[T_N_EMBD], gate[T_N_FF], up[T_N_FF];
    double * score = calloc((size_t) n, sizeof(double));
    for (int t = 0; t < n; t++) {
        for (int i = 0; i < T_N_EMBD; i++) {
            x[t][i] = w->tok_embd[tokens[t] * T_N_EMBD + i];
        }
    }
    for (int il = 0; il < T_N_LAYER; il++) {
        const struct t_layer * l = &w->layers[il];
        for (int t = 0; t < n; t++) {
            ref_rms_norm(x[t], l->attn_norm, nrm, T_N_EMBD);
            ref_matvec(l->wq, nrm, q[t], T_N_EMBD, T_N_EMBD);
            ref_matvec(l->wk, nrm, k[t], T_N_EMBD, T_N_EMBD_KV);
            ref_matvec(l->wv, nrm, v[t], T_N_EMBD, T_N_EMBD_KV);
            ref_rope(q[t], T_N_HEAD, t);
            ref_rope(k[t], T_N_HEAD_KV, t);
        }
        for (int t = 0; t < n; t++) {
            for (int h = 0; h < T_N_HEAD; h++) {
                const int g = h / (T_N_HEAD / T_N_HEAD_KV);
                double max = -INFINITY, sum = 0.0;
                for (int j = 0; j <= t; j++) { // causal
                    double s = 0.0;
                    for (int d = 0; d < T_HEAD_DIM; d++) {
                        s += q[t][h * T_HEAD_DIM + d] * k[j][g * T_HEAD_DIM + d];
                    }
                    score[j] = s / sqrt((double) T_HEAD_DIM);
                    max = score[j] > max ? score[j] : max;
                }
                for (int j = 0; j <= t; j++) {
                    score[j] = exp(score[j] - max);
                    sum += score[j];
                }
                for (int d = 0; d < T_HEAD_DIM; d++) {
                    double o = 0.0;
                    for (int j = 0; j <= t; j++) {
                        o += score[j] / sum * v[j][g * T_HEAD_DIM + d];
                    }
                    att[h * T_HEAD_DIM + d] = o;
                }
            }
            ref_matvec(l->wo, att, tmp, T_N_EMBD, T_N_EMBD);
            for (int i = 0; i < T_N_EMBD; i++) {
                tmp[i] += x[t][i];
            }
            ref_rms_norm(tmp, l->ffn_norm, nrm, T_N_EMBD);
            ref_matvec(l->ffn_gate, nrm, gate, T_N_EMBD, T_N_FF);
            ref_matvec(l->ffn_up, nrm, up, T_N_EMBD, T_N_FF);
            for (int i = 0; i < T_N_FF; i++) {
                gate[i] = gate[i] / (1.0 + exp(-gate[i])) * up[i]; // silu(gate) * up
            }
            ref_matvec(l->ffn_down, gate, att, T_N_FF, T_N_EMBD);
            for (int i = 0; i < T_N_EMBD; i++) {
                x[t][i] = tmp[i] + att[i];
            }
        }
    }
    for (int t = 0; t < n; t++) {
        ref_rms_norm(x[t], w->output_norm, nrm, T_N_EMBD);
        ref_matvec(w->tied ? w->tok_embd : w->output, nrm, logits + t * T_N_VOCAB, T_N_EMBD, T_N_VOCAB);
    }
    free(x);
    free(k);
    free(v);
    free(q);
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
    const char * what;
    int64_t n_batch;
    int     n_threads;
    enum ggml_type kv_type;
    int     flash_attn;
    double  tol;
};

// the prompt of "hello world", then 3 greedy tokens; every step's logits against the reference
static void check_generation(const struct run_model * model, const struct t_weights * w, const struct t_run * r) {
    struct run_context_params cp = run_context_default_params();
    cp.n_ctx      = 16;
    cp.n_batch    = r->n_batch;
    cp.n_threads  = r->n_threads;
    cp.kv_type    = r->kv_type;
    cp.flash_attn = r->flash_attn;
    cp.all_logits = true;
    struct run_context * rc = run_context_new(model, &cp);
    CHECK_MSG(rc != NULL, "%s: no context", r->what);
    if (rc == NULL) {
        return;
    }
    CHECK_MSG(r->flash_attn < 0 || rc->flash_attn == (r->flash_attn == 1), "%s: attention kind", r->what);

    int32_t tokens[8];
    const int64_t n_prompt = run_tokenize(&model->vocab, "hello world", 11, true, tokens, 8);
    CHECK_EQ_INT(n_prompt, 4);
    double ref[8 * T_N_VOCAB];
    ref_forward(w, tokens, (int) n_prompt, ref);
    CHECK_MSG(run_decode(rc, tokens, n_prompt), "%s: prompt", r->what);
    CHECK_EQ_INT(rc->n_outputs, n_prompt);
    for (int t = 0; t < n_prompt && rc->n_outputs == n_prompt; t++) {
        const double d = max_abs_diff(run_get_logits(rc, t), ref + t * T_N_VOCAB, T_N_VOCAB);
        CHECK_MSG(d <= r->tol, "%s: prompt position %d: logits differ by %g (tol %g)", r->what, t, d, r->tol);
    }
    int64_t n = n_prompt;
    for (int step = 0; step < 3 && rc->n_outputs > 0; step++) {
        const int32_t next = run_argmax(run_get_logits(rc, rc->n_outputs - 1), T_N_VOCAB);
        CHECK_EQ_INT(next, ref_argmax(ref + (n - 1) * T_N_VOCAB));
        tokens[n++] = next;
        ref_forward(w, tokens, (int) n, ref);
        const bool ok = run_decode(rc, &next, 1);
        CHECK_MSG(ok, "%s: step %d", r->what, step);
        if (!ok) {
            break;
        }
        const double d = max_abs_diff(run_get_logits(rc, 0), ref + (n - 1) * T_N_VOCAB, T_N_VOCAB);
        CHECK_MSG(d <= r->tol, "%s: step %d: logits differ by %g (tol %g)", r->what, step, d, r->tol);
    }
    CHECK_EQ_INT(rc->n_past, n_prompt + 3);

    // a new sequence gives the prompt's logits again
    run_context_reset(rc);
    CHECK(run_decode(rc, tokens, 2));
    ref_forward(w, tokens, 2, ref);
    CHECK(max_abs_diff(run_get_logits(rc, 1), ref + T_N_VOCAB, T_N_VOCAB) <= r->tol);
    run_context_free(rc);
}

// Graph reuse (context.h): a prompt, then 40 greedy tokens in a context of
// 48 cells, with the last graph computed again for a batch of its shape and
// with a new graph for every batch: the same logits, bit for bit, at every
// step. Reusing, 3 graphs are built (the prompt's; single tokens reading 32
// cells; then 48), unless a layer writes its cache by a copy into a view at
// the position (a graph per token then too).
static void check_graph_reuse(const struct run_model * model, const char * what, bool kv_offload) {
    struct run_context * rc[2] = { NULL, NULL };
    for (int i = 0; i < 2; i++) {
        struct run_context_params cp = run_context_default_params();
        cp.n_ctx       = 48;
        cp.n_threads   = 2;
        cp.kv_offload  = kv_offload;
        cp.graph_reuse = i == 0;
        rc[i] = run_context_new(model, &cp);
    }
    CHECK_MSG(rc[0] != NULL && rc[1] != NULL, "%s: no context", what);
    if (rc[0] != NULL && rc[1] != NULL) {
        int32_t tokens[8];
        const int64_t n_prompt = run_tokenize(&model->vocab, "hello world", 11, true, tokens, 8);
        bool same = run_decode(rc[0], tokens, n_prompt) && run_decode(rc[1], tokens, n_prompt);
        const size_t row = (size_t) model->hp.n_vocab * sizeof(float);
        int step = 0;
        for (; same && step < 40; step++) {
            same = memcmp(run_get_logits(rc[0], 0), run_get_logits(rc[1], 0), row) == 0;
            const int32_t next = run_argmax(run_get_logits(rc[0], 0), (int) model->hp.n_vocab);
            same = same && run_decode(rc[0], &next, 1) && run_decode(rc[1], &next, 1);
        }
        same = same && memcmp(run_get_logits(rc[0], 0), run_get_logits(rc[1], 0), row) == 0;
        CHECK_MSG(same, "%s: reusing the graph, the logits differ (or a decode failed) at step %d", what, step);
        bool copies = false;
        for (int64_t il = 0; il < rc[0]->kv.n_layer; il++) {
            copies = copies || rc[0]->kv.write[il] != RUN_KV_WRITE_SET_ROWS;
        }
        CHECK_MSG(rc[0]->n_graph_builds == (copies ? 41 : 3) && rc[1]->n_graph_builds == 41,
                  "%s: %lld graphs built reusing, %lld not", what, (long long) rc[0]->n_graph_builds,
                  (long long) rc[1]->n_graph_builds);
    }
    run_context_free(rc[0]);
    run_context_free(rc[1]);
}

static void test_model_cpu(const char * path, const struct t_weights * w) {
    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * model = run_model_load(path, &mp);
    CHECK(model != NULL);
    if (model == NULL) {
        return;
    }
    CHECK_EQ_INT(model->hp.n_layer, T_N_LAYER);
    CHECK_EQ_INT(model->hp.n_head_kv, T_N_HEAD_KV);
    CHECK_EQ_INT(model->hp.n_vocab, T_N_VOCAB);
    CHECK((model->output == model->tok_embd) == w->tied);
    // logits are of magnitude 5 to 8; the F32 paths agree with the reference
    // to about 1e-6, an F16 cache (11-bit mantissas) to a few 1e-3
    const struct t_run runs[] = {
        { "cpu unfused f32",          512, 1, GGML_TYPE_F32, 0, 1e-4 },
        { "cpu fused f32",            512, 2, GGML_TYPE_F32, 1, 1e-4 },
        { "cpu fused f16",            512, 2, GGML_TYPE_F16, -1, 2e-2 },
        { "cpu unfused f16",          512, 1, GGML_TYPE_F16, 0, 2e-2 },
        { "cpu unfused f32 batch 3",  3,   2, GGML_TYPE_F32, 0, 1e-4 },
        { "cpu fused f16 batch 1",    1,   1, GGML_TYPE_F16, 1, 2e-2 },
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        check_generation(model, w, &runs[i]);
    }
    check_graph_reuse(model, "cpu", true);
    run_model_free(model);

    // read into memory instead of mapped
    mp.use_mmap = false;
    model = run_model_load(path, &mp);
    CHECK(model != NULL);
    if (model != NULL) {
        check_generation(model, w, &runs[0]);
        run_model_free(model);
    }
}

// Layers on a second device with its own memory: their weights are copied
// there, and so is their KV cache, written with ggml_cpy (the test device
// has no SET_ROWS); with -nkvo the cache stays in host memory.
static void test_model_device(const char * path, const struct t_weights * w) {
    const struct test_backend_config cfg = {
        .name = "TestGPU", .description = "test device", .type = GGML_BACKEND_DEVICE_TYPE_GPU, .host_memory = false,
    };
    ggml_backend_reg_t reg = test_backend_reg_new(&cfg);
    ggml_backend_register(reg);
    ggml_backend_dev_t dev = test_backend_device(reg);
    const int64_t ngl[] = { 3, 1, 0 }; // all layers and output, the output only, nothing
    for (size_t i = 0; i < sizeof(ngl) / sizeof(ngl[0]); i++) {
        struct run_model_params mp = run_model_default_params();
        mp.n_gpu_layers = ngl[i];
        struct run_model * model = run_model_load(path, &mp);
        CHECK(model != NULL);
        if (model == NULL) {
            continue;
        }
        CHECK_EQ_INT(model->devs.n_layer, 2);
        CHECK(model->devs.layer[0] == dev);
        CHECK_EQ_INT(model->layer_dev[0], ngl[i] == 3 ? 0 : 1);
        CHECK_EQ_INT(model->layer_dev[T_N_LAYER], ngl[i] >= 1 ? 0 : 1);
        CHECK((model->weight_bytes[0] > 0) == (ngl[i] > 0));
        for (int offload = 0; offload <= 1; offload++) {
            struct run_context_params cp = run_context_default_params();
            cp.n_ctx = 16;
            cp.kv_offload = offload;
            struct run_context * rc = run_context_new(model, &cp);
            CHECK(rc != NULL);
            if (rc != NULL) {
                const bool on_dev = offload && ngl[i] == 3; // layers 0 and 1 are on the device only with -ngl 3
                CHECK_EQ_INT(rc->kv.dev[0], on_dev ? 0 : 1);
                CHECK_EQ_INT(rc->kv.write[0], on_dev ? RUN_KV_WRITE_COPY : RUN_KV_WRITE_SET_ROWS);
                CHECK((rc->kv.bytes[0] > 0) == on_dev);
                CHECK(rc->flash_attn == !on_dev); // the test device has no fused attention
            }
            run_context_free(rc);
        }
        test_backend_reset_counters(dev);
        const struct t_run run = { ngl[i] == 3 ? "device all layers" : "device output", 512, 2, GGML_TYPE_F32, -1, 1e-3 };
        check_generation(model, w, &run);
        const struct t_run run_batch = { "device batch 3 f16", 3, 2, GGML_TYPE_F16, -1, 2e-2 };
        check_generation(model, w, &run_batch);
        check_graph_reuse(model, run.what, true); // -ngl 3: the device's layers write their cache by copies
        check_graph_reuse(model, "device, cache in host memory", false);
        struct test_backend_counters counters;
        test_backend_get_counters(dev, &counters);
        CHECK((counters.n_nodes_computed > 0) == (ngl[i] > 0));
        run_model_free(model);
    }
    ggml_backend_unload(reg);
    test_backend_reg_free(reg);
}

// layers spread over devices in proportion, the last ones first; the
// output layer counts as one
static void check_split(const struct run_devices * devs, int64_t n_layer, int64_t ngl, const char * split,
                        const int * want) {
    int got[8];
    const bool ok = run_devices_assign_layers(devs, n_layer, ngl, split, got);
    bool same = ok;
    for (int64_t il = 0; same && il <= n_layer; il++) {
        same = got[il] == want[il];
    }
    CHECK_MSG(same, "layers of %lld with -ngl %lld -ts %s", (long long) n_layer, (long long) ngl, split ? split : "(none)");
}

static void test_layer_split(void) {
    ggml_backend_reg_t reg_a = test_backend_reg_new(&(struct test_backend_config) { .name = "SplitA", .type = GGML_BACKEND_DEVICE_TYPE_GPU });
    ggml_backend_reg_t reg_b = test_backend_reg_new(&(struct test_backend_config) { .name = "SplitB", .type = GGML_BACKEND_DEVICE_TYPE_GPU });
    ggml_backend_dev_t list[3] = { test_backend_device(reg_a), test_backend_device(reg_b), ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU) };
    const struct run_devices devs = { .layer = list, .n_layer = 3, .helper = NULL, .n_helper = 0 };
    // 5 layers at 0, 0.8, 1.6, 2.4, 3.2 of 4 shares: device A holds [0, 3)
    check_split(&devs, 4, -1, "3,1", (const int[]) { 0, 0, 0, 0, 1 });
    check_split(&devs, 4, -1, "1,1", (const int[]) { 0, 0, 0, 1, 1 });
    check_split(&devs, 4, -1, "0,1", (const int[]) { 1, 1, 1, 1, 1 });
    // the last 3 (layer 3, layer 4... the output) go to devices, the first 2 to the CPU
    check_split(&devs, 4, 3, "1,2", (const int[]) { 2, 2, 0, 1, 1 });
    check_split(&devs, 4, 0, "1,1", (const int[]) { 2, 2, 2, 2, 2 });
    check_split(&devs, 4, 100, "1,0", (const int[]) { 0, 0, 0, 0, 0 });
    // the test devices report 1 GiB each: equal shares by default
    check_split(&devs, 3, -1, NULL, (const int[]) { 0, 0, 1, 1 });
    int out[8];
    CHECK(!run_devices_assign_layers(&devs, 4, -1, "1", out));
    CHECK(!run_devices_assign_layers(&devs, 4, -1, "1,2,3", out));
    CHECK(!run_devices_assign_layers(&devs, 4, -1, "0,0", out));
    CHECK(!run_devices_assign_layers(&devs, 4, -1, "a,b", out));
    CHECK(!run_devices_assign_layers(&devs, 4, -1, "-1,2", out));

    // choosing devices by name from the registry
    ggml_backend_register(reg_a);
    struct run_devices chosen;
    CHECK(run_devices_select("SplitA", &chosen));
    CHECK(chosen.n_layer == 2 && chosen.layer[0] == list[0] && chosen.layer[1] == list[2]);
    run_devices_free(&chosen);
    CHECK(run_devices_select(NULL, &chosen)); // every GPU: SplitA
    CHECK(chosen.n_layer == 2 && chosen.layer[0] == list[0]);
    run_devices_free(&chosen);
    CHECK(run_devices_select("none", &chosen));
    CHECK(chosen.n_layer == 1 && chosen.layer[0] == list[2]);
    run_devices_free(&chosen);
    CHECK(!run_devices_select("SplitA,splita", &chosen)); // named twice (names are case-insensitive)
    CHECK(!run_devices_select("SplitB", &chosen));        // not registered
    CHECK(!run_devices_select("SplitA,,", &chosen));
    ggml_backend_unload(reg_a);
    test_backend_reg_free(reg_a);
    test_backend_reg_free(reg_b);
}

//
// the tokenizer
//

static void check_tokens(const struct run_vocab * vocab, const char * text, bool bos, const int32_t * want, int64_t n_want) {
    int32_t got[32];
    const int64_t n = run_tokenize(vocab, text, strlen(text), bos, got, 32);
    bool same = n == n_want;
    for (int64_t i = 0; same && i < n; i++) {
        same = got[i] == want[i];
    }
    CHECK_MSG(same, "tokens of '%s' (%lld of them)", text, (long long) n);
}

static void check_piece(const struct run_vocab * vocab, int32_t token, const char * want) {
    char buf[32];
    const size_t n = run_token_to_piece(vocab, token, buf, sizeof(buf));
    CHECK_MSG(n == strlen(want) && memcmp(buf, want, n) == 0, "piece of token %d", (int) token);
}

static void test_tokenizer(const struct run_vocab * vocab) {
    // merges by score: ll, he, llo, ▁he; "hello" and "hell" come too late
    check_tokens(vocab, "hello", true, (const int32_t[]) { 1, 22, 21 }, 3);
    check_tokens(vocab, "hello", false, (const int32_t[]) { 22, 21 }, 2);
    check_tokens(vocab, "hell", true, (const int32_t[]) { 1, 22, 19 }, 3);
    check_tokens(vocab, "hello world", true, (const int32_t[]) { 1, 22, 21, 30 }, 4);
    // ▁c + at after "ca" went stale
    check_tokens(vocab, "cat", true, (const int32_t[]) { 1, 34 }, 2);
    // two spaces: ▁▁ loses to ▁cat
    check_tokens(vocab, "a  cat", true, (const int32_t[]) { 1, 7, 15, 7, 34 }, 5);
    // byte fallback: é is C3 A9, ! only exists as a byte token
    check_tokens(vocab, "h\xc3\xa9!", true, (const int32_t[]) { 1, 20, 4, 5, 3 }, 5);
    check_tokens(vocab, "\n", true, (const int32_t[]) { 1, 7, 6 }, 3);
    // no piece and no byte token: unknown
    check_tokens(vocab, "q", true, (const int32_t[]) { 1, 7, 0 }, 3);
    check_tokens(vocab, "", true, (const int32_t[]) { 1 }, 1);
    check_tokens(vocab, "", false, NULL, 0);
    // too small an output: the count is still right
    int32_t one[1];
    CHECK_EQ_INT(run_tokenize(vocab, "hello world", 11, true, one, 1), 4);
    CHECK_EQ_INT(one[0], 1);

    check_piece(vocab, 22, " he");
    check_piece(vocab, 36, "  ");
    check_piece(vocab, 3, "!");
    check_piece(vocab, 4, "\xc3");
    check_piece(vocab, 1, "");
    check_piece(vocab, 0, "\xe2\x96\x85");
    check_piece(vocab, 21, "llo");
    check_piece(vocab, 99, "");
}

//
// quantization
//

static void test_quantize(const char * path, const struct t_weights * w) {
    char qpath[300];
    temp_path(qpath, sizeof(qpath), "tiny-q8_0.gguf");
    const struct gq_params qp = { .type = GGML_TYPE_Q8_0, .n_threads = 2, .verbose = false };
    struct gq_stats stats;
    CHECK(gq_quantize_file(path, qpath, &qp, &stats));
    const int64_t n_matrices = 7 * T_N_LAYER + (w->tied ? 1 : 2);
    CHECK_EQ_INT(stats.n_converted, n_matrices);
    CHECK_EQ_INT(stats.n_kept, 2 * T_N_LAYER + 1);

    // the file: matrices in Q8_0, norms as they were, every key kept
    struct ggml_context * meta = NULL;
    struct gguf_context * gguf = gguf_init_from_file(qpath, (struct gguf_init_params) { .no_alloc = true, .ctx = &meta });
    CHECK(gguf != NULL);
    if (gguf != NULL) {
        CHECK(ggml_get_tensor(meta, "blk.1.ffn_down.weight")->type == GGML_TYPE_Q8_0);
        CHECK(ggml_get_tensor(meta, "token_embd.weight")->type == GGML_TYPE_Q8_0);
        CHECK(ggml_get_tensor(meta, "blk.0.attn_norm.weight")->type == GGML_TYPE_F32);
        CHECK(ggml_get_tensor(meta, "output_norm.weight")->type == GGML_TYPE_F32);
        const int64_t k = gguf_find_key(gguf, "llama.attention.head_count_kv");
        CHECK(k >= 0 && gguf_get_val_u32(gguf, k) == T_N_HEAD_KV);
        const int64_t ft = gguf_find_key(gguf, "general.file_type");
        CHECK(ft >= 0 && gguf_get_val_u32(gguf, ft) == 7);
        const int64_t toks = gguf_find_key(gguf, "tokenizer.ggml.tokens");
        CHECK(toks >= 0 && gguf_get_arr_n(gguf, toks) == T_N_VOCAB && strcmp(gguf_get_arr_str(gguf, toks, 30), SP "world") == 0);
        gguf_free(gguf);
        ggml_free(meta);
    }

    // Q8_0 rounds each weight (and, in the CPU's dot products, each
    // activation) to 1/127 of its block's largest: relative errors of about
    // 1% through two layers, on logits of magnitude 5 to 8 (seen: up to 0.14)
    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * model = run_model_load(qpath, &mp);
    CHECK(model != NULL);
    if (model != NULL) {
        CHECK(model->ftype == GGML_TYPE_Q8_0);
        const struct t_run runs[] = {
            { "q8_0 unfused", 512, 2, GGML_TYPE_F32, 0, 0.4 },
            { "q8_0 fused",   512, 2, GGML_TYPE_F16, 1, 0.4 },
        };
        check_generation(model, w, &runs[0]);
        check_generation(model, w, &runs[1]);
        run_model_free(model);
    }

    // refusals leave no output and the input as it was
    remove(qpath);
    struct gq_params bad = qp;
    bad.type = GGML_TYPE_I32;
    CHECK(!gq_quantize_file(path, qpath, &bad, NULL));
    char missing[300], no_dir[300];
    temp_path(missing, sizeof(missing), "no-such-file.gguf");
    CHECK(!gq_quantize_file(missing, qpath, &qp, NULL));
    CHECK(access(qpath, F_OK) != 0);
    temp_path(no_dir, sizeof(no_dir), "no-such-dir/out.gguf");
    CHECK(!gq_quantize_file(path, no_dir, &qp, NULL));
    struct stat before, after;
    CHECK(stat(path, &before) == 0);
    CHECK(!gq_quantize_file(path, path, &qp, NULL));
    CHECK(stat(path, &after) == 0 && after.st_size == before.st_size && after.st_mtime == before.st_mtime);
}

// BF16 weights, repacked for the CPU's kernels (where it has the buffer type) and not
static void test_bf16_repack(const char * path, const struct t_weights * w) {
    char bpath[300];
    temp_path(bpath, sizeof(bpath), "tiny-bf16.gguf");
    const struct gq_params qp = { .type = GGML_TYPE_BF16, .n_threads = 2, .verbose = false };
    CHECK(gq_quantize_file(path, bpath, &qp, NULL));

    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    void * sym = cpu != NULL ? ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(cpu), "ggml_backend_dev_get_extra_bufts") : NULL;
    bool has_extra = false;
    if (sym != NULL) {
        ggml_backend_dev_get_extra_bufts_t fn;
        memcpy(&fn, &sym, sizeof(sym));
        has_extra = fn(cpu)[0] != NULL;
    }
    // the extra type holds BF16 where the kernels in use have AVX512_BF16 (it may be there for Q4_0 alone)
    if (has_extra) {
        bool bf16 = false;
        void * fsym = ggml_backend_reg_get_proc_address(ggml_backend_dev_backend_reg(cpu), "ggml_backend_get_features");
        if (fsym != NULL) {
            ggml_backend_get_features_t features;
            memcpy(&features, &fsym, sizeof(fsym));
            for (const struct ggml_backend_feature * f = features(ggml_backend_dev_backend_reg(cpu)); f->name != NULL; f++) {
                bf16 = bf16 || strcmp(f->name, "AVX512_BF16") == 0;
            }
        }
        has_extra = bf16 && getenv("GGML_CPU_NO_BF16_DOT") == NULL;
    }

    for (int repack = 0; repack <= 1; repack++) {
        struct run_model_params mp = run_model_default_params();
        mp.devices = "none";
        mp.repack  = repack == 1;
        struct run_model * model = run_model_load(bpath, &mp);
        CHECK(model != NULL);
        if (model == NULL) {
            continue;
        }
        CHECK(model->ftype == GGML_TYPE_BF16);
        // every matrix but the token embeddings (GET_ROWS)
        CHECK_MSG((model->repack_bytes > 0) == (repack == 1 && has_extra), "repack %d: %zu bytes repacked", repack, model->repack_bytes);
        // BF16 keeps 8 bits of each weight and activation: about 0.4% through two layers
        const struct t_run runs[] = {
            { repack ? "bf16 repacked, 2 threads" : "bf16, 2 threads", 512, 2, GGML_TYPE_F32, 0, 0.2 },
            { repack ? "bf16 repacked, batches of 3" : "bf16, batches of 3", 3, 1, GGML_TYPE_F16, 1, 0.2 },
        };
        check_generation(model, w, &runs[0]);
        check_generation(model, w, &runs[1]);
        run_model_free(model);
    }
    remove(bpath);
}

//
// the sampler
//

static void test_sampler(void) {
    const float logits[5] = { 1.0f, 3.0f, 2.0f, 3.0f, -1.0f };
    CHECK_EQ_INT(run_argmax(logits, 5), 1); // the first of equal maxima

    // against a plain scan (the first id of the largest non-NaN logit, 0 when
    // every logit is NaN), over lengths around the 16-value lanes, with NaNs,
    // -INF, +INF and ties placed in the lanes and in the tail
    {
        float v[70];
        uint32_t x = 12345;
        for (int n = 1; n <= 70; n++) {
            for (int trial = 0; trial < 40; trial++) {
                for (int i = 0; i < n; i++) {
                    x = x * 1664525u + 1013904223u;
                    const uint32_t k = x >> 24;
                    v[i] = k < 20 ? NAN : k < 40 ? -INFINITY : k < 44 ? INFINITY : (float)((x >> 8) % 7) - 3.0f;
                    if (trial % 5 == 0) {
                        v[i] = trial % 10 == 0 ? NAN : -INFINITY; // all NaN, all -INF
                    }
                }
                int32_t want = 0;
                for (int i = 1; i < n; i++) {
                    if (v[i] > v[want] || (isnan(v[want]) && !isnan(v[i]))) {
                        want = i;
                    }
                }
                CHECK_EQ_INT(run_argmax(v, n), want);
            }
        }
    }

    struct run_sampler_params sp = { .temp = 0.0f, .top_k = 0, .top_p = 1.0f, .seed = 5 };
    struct run_sampler * s = run_sampler_new(&sp);
    CHECK_EQ_INT(run_sample(s, logits, 5), 1);
    run_sampler_free(s);

    // top_k 1 leaves the best (equal logits ordered by id)
    sp = (struct run_sampler_params) { .temp = 1.0f, .top_k = 1, .top_p = 1.0f, .seed = 5 };
    s = run_sampler_new(&sp);
    for (int i = 0; i < 20; i++) {
        CHECK_EQ_INT(run_sample(s, logits, 5), 1);
    }
    run_sampler_free(s);

    // top_k 3, temperature 2: frequencies follow softmax(logits / 2) over {1, 3, 2}
    sp = (struct run_sampler_params) { .temp = 2.0f, .top_k = 3, .top_p = 1.0f, .seed = 11 };
    s = run_sampler_new(&sp);
    int count[5] = { 0 };
    const int n = 20000;
    for (int i = 0; i < n; i++) {
        count[run_sample(s, logits, 5)]++;
    }
    const double e3 = exp(1.5), e2 = exp(1.0);
    CHECK_EQ_INT(count[0] + count[4], 0);
    CHECK_NEAR((double) count[1] / n, e3 / (2 * e3 + e2), 0.015);
    CHECK_NEAR((double) count[3] / n, e3 / (2 * e3 + e2), 0.015);
    CHECK_NEAR((double) count[2] / n, e2 / (2 * e3 + e2), 0.015);
    run_sampler_free(s);

    // top_p: p at temperature 1 is {0.05, 0.40, 0.15, 0.40, 0.01} (rounded); 0.5 keeps tokens 1 and 3
    sp = (struct run_sampler_params) { .temp = 1.0f, .top_k = 0, .top_p = 0.5f, .seed = 3 };
    s = run_sampler_new(&sp);
    int kept[5] = { 0 };
    for (int i = 0; i < 2000; i++) {
        kept[run_sample(s, logits, 5)]++;
    }
    CHECK(kept[1] > 800 && kept[3] > 800 && kept[0] + kept[2] + kept[4] == 0);
    run_sampler_free(s);

    // top_p reached exactly: four equal logits weigh exactly 1/4 each, and
    // the running sum meets 0.25, 0.5 and 0.75 with no rounding. The smallest
    // set whose probability is at least top_p is kept: 1, 2, 3 tokens
    const float equal[4] = { 3.0f, 3.0f, 3.0f, 3.0f };
    const float cutoffs[3] = { 0.25f, 0.5f, 0.75f };
    for (int c = 0; c < 3; c++) {
        sp = (struct run_sampler_params) { .temp = 1.0f, .top_k = 0, .top_p = cutoffs[c], .seed = 17 };
        s = run_sampler_new(&sp);
        int seen[4] = { 0 };
        for (int i = 0; i < 400; i++) {
            seen[run_sample(s, equal, 4)]++;
        }
        for (int id = 0; id < 4; id++) {
            // each kept token has probability 1/(c+1): at 400 draws, never below 100 for a fair one
            CHECK_MSG(id <= c ? seen[id] >= 100 : seen[id] == 0, "top_p %.2f: token %d drawn %d times of 400",
                      (double) cutoffs[c], id, seen[id]);
        }
        run_sampler_free(s);
    }

    // the same seed gives the same draws
    sp = (struct run_sampler_params) { .temp = 1.0f, .top_k = 0, .top_p = 1.0f, .seed = 99 };
    struct run_sampler * a = run_sampler_new(&sp);
    struct run_sampler * b = run_sampler_new(&sp);
    bool same = true;
    for (int i = 0; i < 100; i++) {
        same = same && run_sample(a, logits, 5) == run_sample(b, logits, 5);
    }
    CHECK(same);
    run_sampler_free(a);
    run_sampler_free(b);
}

//
// the ggml-run program
//

static void run_cli(const char * const * args, struct program_result * r) {
    char * argv[24];
    int n = 0;
    argv[n++] = (char *) GGML_RUN_BIN;
    for (; args[n - 1] != NULL && n < 23; n++) {
        argv[n] = (char *) args[n - 1];
    }
    argv[n] = NULL;
    if (!run_program(argv, 0, r)) {
        r->exited = false;
        r->status = -1;
    }
}

static void test_cli(const char * path) {
    // the context a prompt and n tokens need
    CHECK_EQ_INT(run_generation_length(4, 4, 0), 0);
    CHECK_EQ_INT(run_generation_length(4, 4, 5), 0);
    CHECK_EQ_INT(run_generation_length(3, 4, 0), -1);
    CHECK_EQ_INT(run_generation_length(10, 4, 3), 3);
    CHECK_EQ_INT(run_generation_length(10, 4, 100), 6);

    // "hello" is 3 tokens with bos: -n 0 makes a context of exactly 3
    struct program_result r;
    char ending[32];
    const char * no_gen[] = { "-m", path, "-p", "hello", "-n", "0", "-dev", "none", "-t", "1", NULL };
    run_cli(no_gen, &r);
    CHECK_MSG(r.exited && r.status == 0, "ggml-run -n 0 ended by %s:\n%s", program_ending(&r, ending, sizeof(ending)), r.output);
    const char * gen[] = { "-m", path, "-p", "hello", "-n", "2", "-dev", "none", "-t", "1", NULL };
    run_cli(gen, &r);
    CHECK_MSG(r.exited && r.status == 0, "ggml-run -n 2 ended by %s:\n%s", program_ending(&r, ending, sizeof(ending)), r.output);
    // a synthetic model whose sizes the weight type cannot hold (tiny's feed-forward
    // of 704 is no multiple of Q4_K's 256): an error, not an assertion (it aborted)
    const char * odd_type[] = { "--size", "tiny", "--type", "q4_K", "-p", "hi", "-n", "1", "-dev", "none", "-t", "1", NULL };
    run_cli(odd_type, &r);
    CHECK_MSG(r.exited && r.status == 1 && strstr(r.output, "multiples of 256") != NULL,
              "ggml-run --size tiny --type q4_K ended by %s:\n%s", program_ending(&r, ending, sizeof(ending)), r.output);
    // --verbose-prompt: the ids on one line, and with -n 0 nothing else is done (no context);
    // "</s>" written in the prompt is the eos token, or plain text (each character unknown)
    const char * verbose[] = { "-m", path, "-p", "hello</s>", "--verbose-prompt", "-n", "0", "-dev", "none", "-t", "1", NULL };
    run_cli(verbose, &r);
    CHECK_MSG(r.exited && r.status == 0 && strstr(r.output, "prompt tokens: 1 22 21 2\n") != NULL &&
              strstr(r.output, "buffers:") == NULL,
              "ggml-run --verbose-prompt -n 0 ended by %s:\n%s", program_ending(&r, ending, sizeof(ending)), r.output);
    const char * plain[] = { "-m", path, "-p", "hello</s>", "--verbose-prompt", "--no-parse-special", "-n", "0",
                             "-dev", "none", "-t", "1", NULL };
    run_cli(plain, &r);
    CHECK_MSG(r.exited && r.status == 0 && strstr(r.output, "prompt tokens: 1 22 21 0 0 0 0\n") != NULL,
              "ggml-run --no-parse-special ended by %s:\n%s", program_ending(&r, ending, sizeof(ending)), r.output);
    // "<s>" written first: two bos tokens, with a warning; the text after a special token gets its space
    const char * two_bos[] = { "-m", path, "-p", "<s>hello", "--verbose-prompt", "-n", "0", "-dev", "none", "-t", "1", NULL };
    run_cli(two_bos, &r);
    CHECK_MSG(r.exited && r.status == 0 && strstr(r.output, "prompt tokens: 1 1 22 21\n") != NULL &&
              strstr(r.output, "two bos tokens") != NULL,
              "ggml-run -p '<s>hello' ended by %s:\n%s", program_ending(&r, ending, sizeof(ending)), r.output);
    // a prompt longer than the context is still refused, with a message
    const char * too_long[] = { "-m", path, "-p", "hello world", "-c", "2", "-n", "1", "-dev", "none", "-t", "1", NULL };
    run_cli(too_long, &r);
    CHECK_MSG(r.exited && r.status == 1 && strstr(r.output, "does not fit") != NULL,
              "a prompt longer than the context: %s:\n%s", program_ending(&r, ending, sizeof(ending)), r.output);
}

//
// the synthetic model
//

static void test_synthetic(void) {
    struct run_synth_params p = {
        .n_embd = 64, .n_layer = 2, .n_head = 4, .n_head_kv = 2, .n_ff = 96, .n_vocab = 400,
        .n_ctx = 128, .wtype = GGML_TYPE_Q8_0, .seed = 3, .n_threads = 1,
    };
    struct run_weight_source a, b;
    CHECK(run_synth_source(&p, &a));
    p.n_threads = 3;
    CHECK(run_synth_source(&p, &b));
    CHECK(a.size == b.size && memcmp(a.base, b.base, a.size) == 0);
    CHECK(a.size >= run_synth_weight_bytes(&p));
    run_weight_source_free(&b);

    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * model = run_model_from_source(&a, &mp);
    CHECK(model != NULL);
    if (model != NULL) {
        // 400 tokens: specials and bytes (259), ▁ (259), a-z (260-285), syllables
        // ba.. (286-365), ▁ba.. (366-399): "ba" merges first, then "ka", then
        // "▁ka" (366 + 30); "kaba" and "▁kaba" are no tokens
        int32_t tok[4];
        CHECK_EQ_INT(run_tokenize(&model->vocab, "kaba", 4, false, tok, 4), 2);
        CHECK_EQ_INT(tok[0], 396);
        CHECK_EQ_INT(tok[1], 286);
        struct run_context_params cp = run_context_default_params();
        cp.n_ctx = 32;
        cp.n_threads = 2;
        struct run_context * rc = run_context_new(model, &cp);
        CHECK(rc != NULL);
        const int32_t prompt[3] = { 1, 300, 301 };
        CHECK(rc != NULL && run_decode(rc, prompt, 3));
        bool finite = rc != NULL && rc->n_outputs == 1;
        for (int i = 0; finite && i < p.n_vocab; i++) {
            finite = isfinite(run_get_logits(rc, 0)[i]);
        }
        CHECK(finite);
        // out of the vocabulary, past the context: refused
        const int32_t bad = 400;
        CHECK(rc != NULL && !run_decode(rc, &bad, 1));
        int32_t many[40] = { 0 };
        CHECK(rc != NULL && !run_decode(rc, many, 40));
        run_context_free(rc);
        run_model_free(model);
    }

    struct run_synth_params bad = p;
    bad.n_head = 5; // 64 is no multiple of 5
    struct run_weight_source c;
    CHECK(!run_synth_source(&bad, &c));
}

//
// failures
//

static void check_load_fails(const char * path, const char * what) {
    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * model = run_model_load(path, &mp);
    CHECK_MSG(model == NULL, "%s: loaded", what);
    run_model_free(model);
}

static void write_bytes(const char * path, const void * data, size_t n) {
    FILE * f = fopen(path, "wb");
    if (f != NULL) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static void test_failures(const char * good_path, const struct t_weights * w) {
    char path[300];
    temp_path(path, sizeof(path), "does-not-exist.gguf");
    check_load_fails(path, "missing file");

    check_load_fails(g_dir, "a directory");

    temp_path(path, sizeof(path), "garbage.gguf");
    write_bytes(path, "", 0);
    check_load_fails(path, "empty file");
    write_bytes(path, "this is not a gguf file at all", 30);
    check_load_fails(path, "garbage");

    // truncated: the header is whole, the tensor data is not
    FILE * f = fopen(good_path, "rb");
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char * bytes = malloc((size_t) size);
    CHECK(fread(bytes, 1, (size_t) size, f) == (size_t) size);
    fclose(f);
    temp_path(path, sizeof(path), "truncated.gguf");
    write_bytes(path, bytes, (size_t) size - 4096);
    check_load_fails(path, "truncated data");
    write_bytes(path, bytes, 100);
    check_load_fails(path, "truncated header");
    free(bytes);

    struct t_file_opts o = t_good;
    o.arch = "gpt2";
    temp_path(path, sizeof(path), "gpt2.gguf");
    CHECK(write_model(path, w, &o));
    check_load_fails(path, "architecture gpt2");

    o = t_good;
    o.omit_block_count = true;
    temp_path(path, sizeof(path), "no-key.gguf");
    CHECK(write_model(path, w, &o));
    check_load_fails(path, "missing key");

    o = t_good;
    o.omit_ffn_up_1 = true;
    temp_path(path, sizeof(path), "no-tensor.gguf");
    CHECK(write_model(path, w, &o));
    check_load_fails(path, "missing tensor");

    o = t_good;
    o.bad_wk_shape = true;
    temp_path(path, sizeof(path), "bad-shape.gguf");
    CHECK(write_model(path, w, &o));
    check_load_fails(path, "wrong shape");

    // an unknown device name
    struct run_model_params mp = run_model_default_params();
    mp.devices = "NoSuchDevice";
    CHECK(run_model_load(good_path, &mp) == NULL);
}

static void remove_temp_files(void) {
    const char * names[] = {
        "tiny.gguf", "tiny-tied.gguf", "tiny-q8_0.gguf", "garbage.gguf", "truncated.gguf", "gpt2.gguf",
        "no-key.gguf", "no-tensor.gguf", "bad-shape.gguf",
    };
    char path[300];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        temp_path(path, sizeof(path), names[i]);
        remove(path);
    }
    rmdir(g_dir);
}

int main(void) {
    const char * tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof(g_dir), "%s/test-run-llama-XXXXXX", tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
    if (mkdtemp(g_dir) == NULL) {
        fprintf(stderr, "cannot create a temporary directory\n");
        return 1;
    }
    ggml_backend_load_all();

    static struct t_weights w, w_tied;
    make_weights(&w, false);
    make_weights(&w_tied, true);
    char path[300], path_tied[300];
    temp_path(path, sizeof(path), "tiny.gguf");
    temp_path(path_tied, sizeof(path_tied), "tiny-tied.gguf");
    CHECK(write_model(path, &w, &t_good));
    CHECK(write_model(path_tied, &w_tied, &t_good));

    struct run_model_params mp = run_model_default_params();
    mp.devices = "none";
    struct run_model * model = run_model_load(path, &mp);
    CHECK(model != NULL);
    if (model != NULL) {
        test_tokenizer(&model->vocab);
        run_model_free(model);
    }
    test_model_cpu(path, &w);
    test_model_cpu(path_tied, &w_tied);
    test_model_device(path, &w);
    test_layer_split();
    test_quantize(path, &w);
    test_bf16_repack(path, &w);
    test_sampler();
    test_cli(path);
    test_synthetic();
    test_failures(path, &w);

    remove_temp_files();
    return TEST_RESULT();
}
