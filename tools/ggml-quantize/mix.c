// mix.c: the named type mixes (see mix.h).
//
// The rules are upstream's for llama-family models: the output matrix (or
// the embedding when it doubles as the output) gets Q6_K; attention V and FFN
// down get more bits in the layers where errors cost most (the first and
// last eighths and every third layer between, "use_more_bits"); attention
// output and fused QKV a step more in the M and L mixes. The counters of
// attention V and FFN down run in file order, as upstream's do. MXFP4_MOE
// (upstream's LLAMA_FTYPE_MOSTLY_MXFP4_MOE, for MoE models) gives the stacks
// of expert matrices (3-D, ne[2] > 1) MXFP4 and every other matrix Q8_0,
// the output included. As upstream's, no mix converts the expert router
// (ffn_gate_inp), which stays as it is.

#include "mix.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *   name;
    enum gq_mix_id id;
    enum ggml_type base;
} k_mixes[] = {
    { "Q2_K",   GQ_MIX_Q2_K,   GGML_TYPE_Q2_K   },
    { "Q3_K_S", GQ_MIX_Q3_K_S, GGML_TYPE_Q3_K   },
    { "Q3_K_M", GQ_MIX_Q3_K_M, GGML_TYPE_Q3_K   },
    { "Q3_K_L", GQ_MIX_Q3_K_L, GGML_TYPE_Q3_K   },
    { "Q4_K_S", GQ_MIX_Q4_K_S, GGML_TYPE_Q4_K   },
    { "Q4_K_M", GQ_MIX_Q4_K_M, GGML_TYPE_Q4_K   },
    { "Q5_K_S", GQ_MIX_Q5_K_S, GGML_TYPE_Q5_K   },
    { "Q5_K_M", GQ_MIX_Q5_K_M, GGML_TYPE_Q5_K   },
    { "Q6_K",   GQ_MIX_Q6_K,   GGML_TYPE_Q6_K   },
    { "IQ4_NL", GQ_MIX_IQ4_NL, GGML_TYPE_IQ4_NL },
    { "IQ4_XS", GQ_MIX_IQ4_XS, GGML_TYPE_IQ4_XS },
    { "MXFP4_MOE", GQ_MIX_MXFP4, GGML_TYPE_MXFP4 },
};

#define N_MIXES (int)(sizeof(k_mixes)/sizeof(k_mixes[0]))

bool gq_mix_parse(const char * name, enum gq_mix_id * mix) {
    for (int i = 0; i < N_MIXES; i++) {
        if (strcasecmp(name, k_mixes[i].name) == 0) {
            *mix = k_mixes[i].id;
            return true;
        }
    }
    return false;
}

enum ggml_type gq_mix_base_type(enum gq_mix_id mix) {
    for (int i = 0; i < N_MIXES; i++) {
        if (k_mixes[i].id == mix) {
            return k_mixes[i].base;
        }
    }
    return GGML_TYPE_COUNT;
}

enum tensor_role { ROLE_OTHER, ROLE_OUTPUT, ROLE_TOKEN_EMBD, ROLE_ATTN_V, ROLE_ATTN_OUTPUT, ROLE_ATTN_QKV, ROLE_FFN_DOWN };

static enum tensor_role role_of(const char * name) {
    if (strcmp(name, "output.weight") == 0)       return ROLE_OUTPUT;
    if (strcmp(name, "token_embd.weight") == 0)   return ROLE_TOKEN_EMBD;
    if (strstr(name, "attn_v.weight") != NULL)      return ROLE_ATTN_V;
    if (strstr(name, "attn_output.weight") != NULL) return ROLE_ATTN_OUTPUT;
    if (strstr(name, "attn_qkv.weight") != NULL)    return ROLE_ATTN_QKV;
    if (strstr(name, "ffn_down") != NULL)           return ROLE_FFN_DOWN;
    return ROLE_OTHER;
}

// layers whose errors matter most: the first and last eighths, and every third between
static bool use_more_bits(int i, int n) {
    return i < n/8 || i >= 7*n/8 || (i - n/8) % 3 == 2;
}

// the weight matrices, or stacks of them (MoE experts): float, or quantized
// ones that --allow-requantize converts; not the expert router
static bool converts(const struct ggml_tensor * t) {
    const bool weight = t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16 || t->type == GGML_TYPE_BF16 ||
                        ggml_is_quantized(t->type);
    return weight && t->ne[0] > 0 && t->ne[1] > 1 && t->ne[3] == 1 && strstr(t->name, "ffn_gate_inp") == NULL;
}

static uint32_t meta_u32(const struct gguf_context * in, const char * arch, const char * key, uint32_t def) {
    char full[256];
    snprintf(full, sizeof(full), "%s.%s", arch, key);
    const int64_t id = gguf_find_key(in, full);
    if (id < 0) {
        return def;
    }
    switch (gguf_get_kv_type(in, id)) {
        case GGUF_TYPE_UINT32: return gguf_get_val_u32(in, id);
        case GGUF_TYPE_INT32:  return (uint32_t) gguf_get_val_i32(in, id);
        default:               return def;
    }
}

// upstream's fallback for rows that are no whole number of blocks
static enum ggml_type fallback(enum ggml_type t, int64_t ne0) {
    if (ne0 % ggml_blck_size(t) == 0) {
        return t;
    }
    switch (t) {
        case GGML_TYPE_Q2_K:
        case GGML_TYPE_Q3_K:
        case GGML_TYPE_IQ4_XS: t = GGML_TYPE_IQ4_NL; break;
        case GGML_TYPE_Q4_K:   t = GGML_TYPE_Q5_0;   break;
        case GGML_TYPE_Q5_K:   t = GGML_TYPE_Q5_1;   break;
        case GGML_TYPE_Q6_K:   t = GGML_TYPE_Q8_0;   break;
        default: break;
    }
    return ne0 % ggml_blck_size(t) == 0 ? t : GGML_TYPE_F16;
}

void gq_mix_plan(const struct gguf_context * in, const struct ggml_tensor * const * tensors, int64_t n,
                 enum gq_mix_id mix, enum ggml_type * types) {
    const enum ggml_type base = gq_mix_base_type(mix);
    const int64_t arch_id = gguf_find_key(in, "general.architecture");
    const char * arch = arch_id >= 0 && gguf_get_kv_type(in, arch_id) == GGUF_TYPE_STRING ? gguf_get_val_str(in, arch_id) : "llama";
    const uint32_t n_head    = meta_u32(in, arch, "attention.head_count", 1);
    const uint32_t n_head_kv = meta_u32(in, arch, "attention.head_count_kv", n_head);
    const uint32_t n_gqa     = n_head_kv > 0 ? n_head / n_head_kv : 1;

    // counts of the roles that go by layer, and whether the embedding is also the output
    int n_attn_v = 0, n_ffn_down = 0;
    bool has_output = false;
    for (int64_t i = 0; i < n; i++) {
        const enum tensor_role r = role_of(tensors[i]->name);
        n_attn_v   += r == ROLE_ATTN_V;
        n_ffn_down += r == ROLE_FFN_DOWN;
        has_output  = has_output || r == ROLE_OUTPUT;
    }

    int i_attn_v = 0, i_ffn_down = 0;
    for (int64_t i = 0; i < n; i++) {
        const struct ggml_tensor * t = tensors[i];
        if (!converts(t)) {
            types[i] = t->type;
            continue;
        }
        enum tensor_role r = role_of(t->name);
        if (r == ROLE_TOKEN_EMBD && !has_output) {
            r = ROLE_OUTPUT; // tied embeddings: the output's rule
        }
        enum ggml_type type = base;
        if (mix == GQ_MIX_MXFP4) {
            // upstream's order: the output rule first (Q8_0), then by shape
            type = r != ROLE_OUTPUT && t->ne[2] > 1 ? GGML_TYPE_MXFP4 : GGML_TYPE_Q8_0;
            types[i] = fallback(type, t->ne[0]);
            continue;
        }
        switch (r) {
            case ROLE_OUTPUT:
                type = t->ne[0] % ggml_blck_size(base) != 0 ? GGML_TYPE_Q8_0 : GGML_TYPE_Q6_K;
                break;
            case ROLE_ATTN_V:
                switch (mix) {
                    case GQ_MIX_Q2_K:   type = n_gqa >= 4 ? GGML_TYPE_Q4_K : GGML_TYPE_Q3_K; break;
                    case GQ_MIX_Q3_K_M: type = i_attn_v < 2 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K; break;
                    case GQ_MIX_Q3_K_L: type = GGML_TYPE_Q5_K; break;
                    case GQ_MIX_IQ4_NL:
                    case GQ_MIX_IQ4_XS: type = n_gqa >= 4 ? GGML_TYPE_Q5_K : base; break;
                    case GQ_MIX_Q4_K_M:
                    case GQ_MIX_Q5_K_M: type = use_more_bits(i_attn_v, n_attn_v) ? GGML_TYPE_Q6_K : base; break;
                    case GQ_MIX_Q4_K_S: type = i_attn_v < 4 ? GGML_TYPE_Q5_K : base; break;
                    default: break;
                }
                i_attn_v++;
                break;
            case ROLE_FFN_DOWN: {
                const int il = i_ffn_down, nl = n_ffn_down;
                switch (mix) {
                    case GQ_MIX_Q2_K:   type = GGML_TYPE_Q3_K; break;
                    case GQ_MIX_Q3_K_M: type = il < nl/16 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K; break;
                    case GQ_MIX_Q3_K_L: type = GGML_TYPE_Q5_K; break;
                    case GQ_MIX_Q4_K_M:
                    case GQ_MIX_Q5_K_M: type = use_more_bits(il, nl) ? GGML_TYPE_Q6_K : base; break;
                    case GQ_MIX_IQ4_NL:
                    case GQ_MIX_IQ4_XS: type = il < nl/8 ? GGML_TYPE_Q5_K : base; break; // without an imatrix
                    case GQ_MIX_Q4_K_S: type = il < nl/8 ? GGML_TYPE_Q5_K : base; break;
                    default: break;
                }
                i_ffn_down++;
            } break;
            case ROLE_ATTN_OUTPUT:
                switch (mix) {
                    case GQ_MIX_Q2_K:   type = GGML_TYPE_Q3_K; break;
                    case GQ_MIX_Q3_K_M: type = GGML_TYPE_Q4_K; break;
                    case GQ_MIX_Q3_K_L: type = GGML_TYPE_Q5_K; break;
                    default: break;
                }
                break;
            case ROLE_ATTN_QKV:
                switch (mix) {
                    case GQ_MIX_Q3_K_M:
                    case GQ_MIX_Q3_K_L: type = GGML_TYPE_Q4_K; break;
                    case GQ_MIX_Q4_K_M: type = GGML_TYPE_Q5_K; break;
                    case GQ_MIX_Q5_K_M: type = GGML_TYPE_Q6_K; break;
                    default: break;
                }
                break;
            default:
                break;
        }
        types[i] = fallback(type, t->ne[0]);
    }
}
