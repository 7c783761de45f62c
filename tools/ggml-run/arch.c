// arch.c: the table of architectures (their layer tensors and differences)
// and the hyperparameters read from a GGUF file's "<arch>.*" keys.

#include "arch.h"
#include "model.h"
#include "run-common.h"

#include "ggml.h"
#include "gguf.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

//
// layer tensors
//

#define L(field) offsetof(struct run_layer, field)
#define T1(a)       { RUN_DIM_##a, RUN_DIM_ONE, RUN_DIM_ONE }
#define T2(a, b)    { RUN_DIM_##a, RUN_DIM_##b, RUN_DIM_ONE }
#define T3(a, b, c) { RUN_DIM_##a, RUN_DIM_##b, RUN_DIM_##c }

// the attention of llama and most others: separate Q, K, V
#define ATTN_QKV_SEPARATE \
    { "attn_norm.weight",   L(attn_norm), T1(EMBD),     RUN_USE_SCALE,  true }, \
    { "attn_q.weight",      L(wq),        T2(EMBD, Q),  RUN_USE_MATMUL, true }, \
    { "attn_k.weight",      L(wk),        T2(EMBD, KV), RUN_USE_MATMUL, true }, \
    { "attn_v.weight",      L(wv),        T2(EMBD, KV), RUN_USE_MATMUL, true }, \
    { "attn_output.weight", L(wo),        T2(Q, EMBD),  RUN_USE_MATMUL, true }

#define ATTN_QK_NORM \
    { "attn_q_norm.weight", L(attn_q_norm), T1(HEAD), RUN_USE_SCALE, true }, \
    { "attn_k_norm.weight", L(attn_k_norm), T1(HEAD), RUN_USE_SCALE, true }

#define FFN_GATE_UP_SEPARATE \
    { "ffn_norm.weight", L(ffn_norm), T1(EMBD),     RUN_USE_SCALE,  true }, \
    { "ffn_gate.weight", L(ffn_gate), T2(EMBD, FF), RUN_USE_MATMUL, true }, \
    { "ffn_up.weight",   L(ffn_up),   T2(EMBD, FF), RUN_USE_MATMUL, true }, \
    { "ffn_down.weight", L(ffn_down), T2(FF, EMBD), RUN_USE_MATMUL, true }

static const struct run_tensor_desc llama_layer[] = {
    ATTN_QKV_SEPARATE,
    FFN_GATE_UP_SEPARATE,
};

static const struct run_tensor_desc qwen2_layer[] = {
    ATTN_QKV_SEPARATE,
    { "attn_q.bias", L(bq), T1(Q),  RUN_USE_ADD, true },
    { "attn_k.bias", L(bk), T1(KV), RUN_USE_ADD, true },
    { "attn_v.bias", L(bv), T1(KV), RUN_USE_ADD, true },
    FFN_GATE_UP_SEPARATE,
};

static const struct run_tensor_desc qwen3_layer[] = {
    ATTN_QKV_SEPARATE,
    ATTN_QK_NORM,
    FFN_GATE_UP_SEPARATE,
};

static const struct run_tensor_desc qwen3moe_layer[] = {
    ATTN_QKV_SEPARATE,
    ATTN_QK_NORM,
    { "ffn_norm.weight",      L(ffn_norm),      T1(EMBD),                 RUN_USE_SCALE,     true },
    { "ffn_gate_inp.weight",  L(ffn_gate_inp),  T2(EMBD, EXPERT),         RUN_USE_MATMUL,    true },
    { "ffn_gate_exps.weight", L(ffn_gate_exps), T3(EMBD, FF_EXP, EXPERT), RUN_USE_MATMUL_ID, true },
    { "ffn_up_exps.weight",   L(ffn_up_exps),   T3(EMBD, FF_EXP, EXPERT), RUN_USE_MATMUL_ID, true },
    { "ffn_down_exps.weight", L(ffn_down_exps), T3(FF_EXP, EMBD, EXPERT), RUN_USE_MATMUL_ID, true },
};

static const struct run_tensor_desc gemma3_layer[] = {
    ATTN_QKV_SEPARATE,
    ATTN_QK_NORM,
    { "post_attention_norm.weight", L(attn_post_norm), T1(EMBD), RUN_USE_SCALE, true },
    FFN_GATE_UP_SEPARATE,
    { "post_ffw_norm.weight",       L(ffn_post_norm),  T1(EMBD), RUN_USE_SCALE, true },
};

static const struct run_tensor_desc phi3_layer[] = {
    { "attn_norm.weight",   L(attn_norm), T1(EMBD),       RUN_USE_SCALE,  true },
    { "attn_qkv.weight",    L(wqkv),      T2(EMBD, QKV),  RUN_USE_MATMUL, true },
    { "attn_output.weight", L(wo),        T2(Q, EMBD),    RUN_USE_MATMUL, true },
    { "ffn_norm.weight",    L(ffn_norm),  T1(EMBD),       RUN_USE_SCALE,  true },
    { "ffn_up.weight",      L(ffn_up),    T2(EMBD, FF2),  RUN_USE_MATMUL, true },
    { "ffn_down.weight",    L(ffn_down),  T2(FF, EMBD),   RUN_USE_MATMUL, true },
};

#undef L
#undef T1
#undef T2
#undef T3

#define N_OF(a) (int) (sizeof(a) / sizeof((a)[0]))

static const struct run_arch run_archs[] = {
    { .name = "llama",    .rope_type = GGML_ROPE_TYPE_NORMAL, .act = RUN_ACT_SILU, .layer = llama_layer,    .n_layer_tensors = N_OF(llama_layer) },
    { .name = "qwen2",    .rope_type = GGML_ROPE_TYPE_NEOX,   .act = RUN_ACT_SILU, .layer = qwen2_layer,    .n_layer_tensors = N_OF(qwen2_layer) },
    { .name = "qwen3",    .rope_type = GGML_ROPE_TYPE_NEOX,   .act = RUN_ACT_SILU, .layer = qwen3_layer,    .n_layer_tensors = N_OF(qwen3_layer) },
    { .name = "qwen3moe", .rope_type = GGML_ROPE_TYPE_NEOX,   .act = RUN_ACT_SILU, .moe = true,
      .layer = qwen3moe_layer, .n_layer_tensors = N_OF(qwen3moe_layer) },
    // Gemma 3: 5 local layers (window, RoPE base 10000) then a global one, as llama.cpp sets it
    { .name = "gemma3",   .rope_type = GGML_ROPE_TYPE_NEOX,   .act = RUN_ACT_GELU, .embd_scale = true,
      .swa_pattern = 6, .rope_base_swa = 10000.0f, .layer = gemma3_layer, .n_layer_tensors = N_OF(gemma3_layer) },
    { .name = "phi3",     .rope_type = GGML_ROPE_TYPE_NEOX,   .act = RUN_ACT_SILU, .layer = phi3_layer,     .n_layer_tensors = N_OF(phi3_layer) },
};

const struct run_arch * run_arch_find(const char * name) {
    for (int i = 0; i < N_OF(run_archs); i++) {
        if (strcmp(run_archs[i].name, name) == 0) {
            return &run_archs[i];
        }
    }
    return NULL;
}

const char * run_arch_names(void) {
    return "llama, qwen2, qwen3, qwen3moe, gemma3, phi3";
}

int64_t run_dim_size(const struct run_hparams * hp, enum run_dim dim) {
    switch (dim) {
        case RUN_DIM_ONE:    return 1;
        case RUN_DIM_EMBD:   return hp->n_embd;
        case RUN_DIM_Q:      return hp->n_head * hp->head_dim;
        case RUN_DIM_KV:     return hp->n_head_kv * hp->head_dim;
        case RUN_DIM_QKV:    return (hp->n_head + 2 * hp->n_head_kv) * hp->head_dim;
        case RUN_DIM_HEAD:   return hp->head_dim;
        case RUN_DIM_FF:     return hp->n_ff;
        case RUN_DIM_FF2:    return 2 * hp->n_ff;
        case RUN_DIM_EXPERT: return hp->n_expert;
        case RUN_DIM_FF_EXP: return hp->n_ff_exp;
    }
    return 0;
}

bool run_layer_is_swa(const struct run_hparams * hp, int64_t il) {
    const int pattern = hp->arch->swa_pattern;
    return hp->n_swa > 0 && pattern > 0 && il % pattern < pattern - 1;
}

//
// hyperparameters
//

// an unsigned integer key (any integer type), or def when absent and not required
static bool hp_get_int(const struct gguf_context * gguf, const char * key, bool required, int64_t def, int64_t * out) {
    *out = def;
    const int64_t id = gguf_find_key(gguf, key);
    if (id < 0) {
        if (required) {
            run_error("key %s is missing", key);
        }
        return !required;
    }
    int64_t v;
    switch (gguf_get_kv_type(gguf, id)) {
        case GGUF_TYPE_UINT8:  v = gguf_get_val_u8(gguf, id);  break;
        case GGUF_TYPE_INT8:   v = gguf_get_val_i8(gguf, id);  break;
        case GGUF_TYPE_UINT16: v = gguf_get_val_u16(gguf, id); break;
        case GGUF_TYPE_INT16:  v = gguf_get_val_i16(gguf, id); break;
        case GGUF_TYPE_UINT32: v = gguf_get_val_u32(gguf, id); break;
        case GGUF_TYPE_INT32:  v = gguf_get_val_i32(gguf, id); break;
        case GGUF_TYPE_INT64:  v = gguf_get_val_i64(gguf, id); break;
        case GGUF_TYPE_UINT64: {
            const uint64_t u = gguf_get_val_u64(gguf, id);
            v = u > (uint64_t) INT32_MAX ? -1 : (int64_t) u;
            break;
        }
        case GGUF_TYPE_ARRAY:
            run_error("key %s holds an array (per-layer values are not supported)", key);
            return false;
        default:
            run_error("key %s must be an integer, not %s", key, gguf_type_name(gguf_get_kv_type(gguf, id)));
            return false;
    }
    if (v < 0 || v > INT32_MAX) {
        run_error("key %s has the invalid value %lld", key, (long long) v);
        return false;
    }
    *out = v;
    return true;
}

// A float key within [min, max] (0 also allowed when zero_ok: "none"), or
// def when absent and not required. Values a float computation cannot use
// are refused naming the key: not finite, subnormal (as a float: a float64
// key is checked before it is narrowed), out of the range.
static bool hp_get_float(const struct gguf_context * gguf, const char * key, bool required, float def,
                         double min, double max, bool zero_ok, float * out) {
    *out = def;
    const int64_t id = gguf_find_key(gguf, key);
    if (id < 0) {
        if (required) {
            run_error("key %s is missing", key);
        }
        return !required;
    }
    double v;
    switch (gguf_get_kv_type(gguf, id)) {
        case GGUF_TYPE_FLOAT32: v = (double) gguf_get_val_f32(gguf, id); break;
        case GGUF_TYPE_FLOAT64: v = gguf_get_val_f64(gguf, id); break;
        default:
            run_error("key %s must be a float, not %s", key, gguf_type_name(gguf_get_kv_type(gguf, id)));
            return false;
    }
    if (!isfinite(v) || fabs(v) > (double) FLT_MAX) {
        run_error("key %s is %g: not a finite float", key, v);
        return false;
    }
    if (v == 0.0 && zero_ok) {
        *out = 0.0f;
        return true;
    }
    if (v != 0.0 && fabs(v) < (double) FLT_MIN) {
        run_error("key %s is %g: a subnormal float, too small to compute with", key, v);
        return false;
    }
    if (!(v >= min && v <= max)) {
        run_error("key %s is %g: out of the range [%g, %g]", key, v, min, max);
        return false;
    }
    *out = (float) v;
    return true;
}

// a string key, or NULL when absent (or not a string)
static const char * hp_get_str(const struct gguf_context * gguf, const char * key) {
    const int64_t id = gguf_find_key(gguf, key);
    return id >= 0 && gguf_get_kv_type(gguf, id) == GGUF_TYPE_STRING ? gguf_get_val_str(gguf, id) : NULL;
}

static const struct run_arch * hp_find_arch(const struct gguf_context * gguf) {
    const int64_t id = gguf_find_key(gguf, "general.architecture");
    if (id < 0) {
        run_error("key general.architecture is missing");
        return NULL;
    }
    if (gguf_get_kv_type(gguf, id) != GGUF_TYPE_STRING) {
        run_error("key general.architecture must be a string");
        return NULL;
    }
    const char * name = gguf_get_val_str(gguf, id);
    const struct run_arch * arch = run_arch_find(name);
    if (arch == NULL) {
        run_error("architecture '%s' is not supported (ggml-run runs %s)", name, run_arch_names());
    }
    return arch;
}

// The tensor dimensions made of several keys must fit an int32 as each key
// does; computed in int64, where they cannot overflow (every key is at most
// INT32_MAX, checked), and refused naming the keys.
static bool hp_check_dim(const struct run_hparams * hp, int64_t size, const char * what, const char * keys) {
    if (size > INT32_MAX) {
        run_error("the %s size %lld (%s of %s.*) is more than a tensor dimension may be (%d)", what, (long long) size,
                  keys, hp->arch->name, INT32_MAX);
        return false;
    }
    return true;
}

static bool hp_check_dims(const struct run_hparams * hp) {
    const int64_t q  = hp->n_head * hp->head_dim;
    const int64_t kv = hp->n_head_kv * hp->head_dim;
    return hp_check_dim(hp, q, "query", "attention.head_count x attention.key_length") &&
           hp_check_dim(hp, kv, "key/value", "attention.head_count_kv x attention.key_length") &&
           hp_check_dim(hp, q + 2 * kv, "fused query/key/value",
                        "(attention.head_count + 2 x attention.head_count_kv) x attention.key_length") &&
           hp_check_dim(hp, 2 * hp->n_ff, "fused gate/up", "2 x feed_forward_length");
}

static bool hp_check(const struct run_hparams * hp) {
    if (hp->n_embd <= 0 || hp->n_layer <= 0 || hp->n_ff <= 0 || hp->n_head <= 0 || hp->n_ctx_train <= 0) {
        run_error("the model's sizes are invalid (embedding %lld, layers %lld, feed-forward %lld, heads %lld, context %lld)",
                  (long long) hp->n_embd, (long long) hp->n_layer, (long long) hp->n_ff, (long long) hp->n_head,
                  (long long) hp->n_ctx_train);
        return false;
    }
    if (hp->head_dim <= 0) {
        run_error("the head size is invalid: embedding %lld, %lld heads", (long long) hp->n_embd, (long long) hp->n_head);
        return false;
    }
    if (hp->n_head_kv <= 0 || hp->n_head % hp->n_head_kv != 0) {
        run_error("%lld heads cannot share %lld key/value heads", (long long) hp->n_head, (long long) hp->n_head_kv);
        return false;
    }
    if (!hp_check_dims(hp)) {
        return false;
    }
    if (hp->n_rot <= 0 || hp->n_rot > hp->head_dim || hp->n_rot % 2 != 0) {
        run_error("RoPE dimension count %lld does not fit heads of %lld", (long long) hp->n_rot, (long long) hp->head_dim);
        return false;
    }
    if (!(hp->rms_eps > 0.0f) || !(hp->rope_freq_base > 0.0f) || !(hp->rope_freq_scale > 0.0f)) {
        run_error("the model's RMS epsilon or RoPE frequency parameters are invalid");
        return false;
    }
    if (hp->arch->moe && (hp->n_expert <= 0 || hp->n_expert_used <= 0 || hp->n_expert_used > hp->n_expert || hp->n_ff_exp <= 0)) {
        run_error("invalid experts: %lld used of %lld, feed-forward length %lld", (long long) hp->n_expert_used,
                  (long long) hp->n_expert, (long long) hp->n_ff_exp);
        return false;
    }
    return true;
}

// "<arch>.<suffix>" in buf
static const char * arch_key(char * buf, size_t size, const char * arch, const char * suffix) {
    snprintf(buf, size, "%s.%s", arch, suffix);
    return buf;
}

// the linear RoPE factors taken: beyond any model's, and their inverses normal floats
static const double RUN_ROPE_FACTOR_MIN = 1.0 / 65536.0;
static const double RUN_ROPE_FACTOR_MAX = 65536.0;

// RoPE scaling: linear is a frequency scale; the kinds that change the
// frequencies otherwise (YaRN, LongRoPE) are refused rather than run wrong
static bool hp_load_rope_scale(struct run_hparams * hp, const struct gguf_context * gguf, const char * arch) {
    char key[128];
    float factor = 0.0f;
    // a factor of 0 means none; others, and their inverse (the frequency scale), are normal floats
    if (!hp_get_float(gguf, arch_key(key, sizeof(key), arch, "rope.scale_linear"), false, 0.0f, RUN_ROPE_FACTOR_MIN,
                      RUN_ROPE_FACTOR_MAX, true, &factor)) {
        return false;
    }
    const char * type = hp_get_str(gguf, arch_key(key, sizeof(key), arch, "rope.scaling.type"));
    if (type != NULL && strcmp(type, "none") != 0 && strcmp(type, "linear") != 0) {
        run_error("RoPE scaling '%s' is not supported (none and linear are)", type);
        return false;
    }
    if (type != NULL && strcmp(type, "linear") == 0) {
        if (!hp_get_float(gguf, arch_key(key, sizeof(key), arch, "rope.scaling.factor"), false, 0.0f, RUN_ROPE_FACTOR_MIN,
                          RUN_ROPE_FACTOR_MAX, true, &factor)) {
            return false;
        }
    }
    hp->rope_freq_scale = factor > 0.0f ? 1.0f / factor : 1.0f;
    return true;
}

bool run_hparams_load(struct run_hparams * hp, const struct gguf_context * gguf) {
    memset(hp, 0, sizeof(*hp));
    hp->arch = hp_find_arch(gguf);
    if (hp->arch == NULL) {
        return false;
    }
    const char * a = hp->arch->name;
    const bool moe = hp->arch->moe;
    char key[128];
    // KEY(...) fills the one buffer: each call is used before the next (the && are sequence points)
#define KEY(suffix) arch_key(key, sizeof(key), a, suffix)
    int64_t value_length = 0;
    bool ok = hp_get_int(gguf, KEY("context_length"), true, 0, &hp->n_ctx_train) &&
              hp_get_int(gguf, KEY("embedding_length"), true, 0, &hp->n_embd) &&
              hp_get_int(gguf, KEY("block_count"), true, 0, &hp->n_layer) &&
              hp_get_int(gguf, KEY("feed_forward_length"), !moe, 0, &hp->n_ff) &&
              hp_get_int(gguf, KEY("attention.head_count"), true, 0, &hp->n_head) &&
              hp_get_int(gguf, KEY("attention.head_count_kv"), false, hp->n_head, &hp->n_head_kv) &&
              hp_get_float(gguf, KEY("attention.layer_norm_rms_epsilon"), true, 0.0f, (double) FLT_MIN, 1.0, false, &hp->rms_eps) &&
              hp_get_float(gguf, KEY("rope.freq_base"), false, 10000.0f, 1.0, (double) FLT_MAX, false, &hp->rope_freq_base) &&
              hp_get_int(gguf, KEY("attention.key_length"), false, hp->n_head > 0 ? hp->n_embd / hp->n_head : 0, &hp->head_dim) &&
              hp_get_int(gguf, KEY("attention.value_length"), false, hp->head_dim, &value_length) &&
              hp_get_int(gguf, KEY("rope.dimension_count"), false, hp->head_dim, &hp->n_rot) &&
              hp_get_int(gguf, KEY("expert_count"), moe, 0, &hp->n_expert) &&
              hp_get_int(gguf, KEY("expert_used_count"), moe, 0, &hp->n_expert_used) &&
              hp_get_int(gguf, KEY("expert_feed_forward_length"), moe, 0, &hp->n_ff_exp) &&
              hp_get_int(gguf, KEY("attention.sliding_window"), hp->arch->swa_pattern > 0, 0, &hp->n_swa) &&
              hp_load_rope_scale(hp, gguf, a);
#undef KEY
    if (!ok) {
        return false;
    }
    if (value_length != hp->head_dim) {
        run_error("keys of %lld and values of %lld per head are not supported (they must be equal)",
                  (long long) hp->head_dim, (long long) value_length);
        return false;
    }
    if (moe && hp->n_ff == 0) {
        hp->n_ff = hp->n_ff_exp; // only checked for being positive: no dense block uses it
    }
    if (!moe) {
        hp->n_expert = hp->n_expert_used = hp->n_ff_exp = 0;
    }
    if (hp->arch->swa_pattern == 0) {
        hp->n_swa = 0; // phi3 files name a window that llama.cpp does not use either
    }
    hp->attn_scale = hp->head_dim > 0 ? 1.0f / sqrtf((float) hp->head_dim) : 0.0f;
    // Gemma 3 27B (62 layers) scales queries by the embedding per head, as llama.cpp does
    if (strcmp(a, "gemma3") == 0 && hp->n_layer == 62 && hp->n_head > 0) {
        hp->attn_scale = 1.0f / sqrtf((float) (hp->n_embd / hp->n_head));
    }
    return hp_check(hp);
}
