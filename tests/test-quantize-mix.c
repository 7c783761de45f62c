// test-quantize-mix: the per-tensor types of ggml-quantize's named mixes.
//
// A llama-shaped model of 8 layers (tensors only, no data) goes through
// gq_mix_plan; the expected types are written out here from upstream's
// rules: the output matrix Q6_K; attention V and FFN down of Q4_K_M / Q5_K_M
// Q6_K in layers 0, 3, 6 and 7 (the first and last eighths and every third
// layer between: i < 1, i >= 7, (i - 1) % 3 == 2); Q3_K_M's attention V Q5_K
// in the first two layers and Q4_K after, its attention output Q4_K; and the
// fallbacks for rows that are no whole number of blocks.

#include "ggml.h"
#include "gguf.h"
#include "mix.h"
#include "testing.h"

#include <stdio.h>
#include <string.h>

#define N_LAYER 8

struct model {
    struct ggml_context * meta;
    struct gguf_context * gguf;
};

static void add(struct model * m, const char * name, int64_t ne0, int64_t ne1) {
    struct ggml_tensor * t = ne1 > 0 ? ggml_new_tensor_2d(m->meta, GGML_TYPE_F16, ne0, ne1)
                                     : ggml_new_tensor_1d(m->meta, GGML_TYPE_F32, ne0);
    ggml_set_name(t, name);
    gguf_add_tensor(m->gguf, t);
}

// the mix's types for the model's tensors, in file order (the order of meta)
static void plan(const struct model * m, enum gq_mix_id mix, enum ggml_type * types) {
    const struct ggml_tensor * tensors[256];
    int64_t n = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(m->meta); t != NULL && n < 256;
         t = ggml_get_next_tensor(m->meta, t)) {
        tensors[n++] = t;
    }
    gq_mix_plan(m->gguf, tensors, n, mix, types);
}

static struct model make_model(bool with_output, int n_head_kv) {
    struct ggml_init_params ip = { 256 * ggml_tensor_overhead(), NULL, true };
    struct model m = { ggml_init(ip), gguf_init_empty() };
    gguf_set_val_str(m.gguf, "general.architecture", "llama");
    gguf_set_val_u32(m.gguf, "llama.attention.head_count", 8);
    gguf_set_val_u32(m.gguf, "llama.attention.head_count_kv", (uint32_t) n_head_kv);
    add(&m, "token_embd.weight", 512, 1000);
    for (int il = 0; il < N_LAYER; il++) {
        char name[64];
        const char * mats[] = { "attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down" };
        snprintf(name, sizeof(name), "blk.%d.attn_norm.weight", il);
        add(&m, name, 512, 0);
        for (int k = 0; k < 7; k++) {
            snprintf(name, sizeof(name), "blk.%d.%s.weight", il, mats[k]);
            add(&m, name, k == 6 ? 1024 : 512, k == 4 || k == 5 ? 1024 : 512);
        }
    }
    add(&m, "output_norm.weight", 512, 0);
    if (with_output) {
        add(&m, "output.weight", 512, 1000);
    }
    add(&m, "odd.weight", 96, 4);   // rows of 96: 3 blocks of 32, no K-quant block
    add(&m, "odder.weight", 48, 4); // rows of 48: not even a block of 32
    return m;
}

static enum ggml_type type_of(const struct model * m, const enum ggml_type * types, const char * name) {
    const int64_t i = gguf_find_tensor(m->gguf, name);
    CHECK_MSG(i >= 0, "no tensor %s", name);
    return i >= 0 ? types[i] : GGML_TYPE_COUNT;
}

static bool more_bits(int il) {
    return il == 0 || il == 3 || il == 6 || il == 7;
}

static void check_layer(const struct model * m, const enum ggml_type * types, int il, const char * mat, enum ggml_type want,
                        const char * mix) {
    char name[64];
    snprintf(name, sizeof(name), "blk.%d.%s.weight", il, mat);
    const enum ggml_type got = type_of(m, types, name);
    CHECK_MSG(got == want, "%s: %s is %s, want %s", mix, name, ggml_type_name(got), ggml_type_name(want));
}

int main(void) {
    enum gq_mix_id mix;
    CHECK(gq_mix_parse("Q4_K_M", &mix) && mix == GQ_MIX_Q4_K_M);
    CHECK(gq_mix_parse("q3_k_l", &mix) && mix == GQ_MIX_Q3_K_L);
    CHECK(!gq_mix_parse("Q4_K_X", &mix));
    CHECK(gq_mix_base_type(GQ_MIX_Q5_K_S) == GGML_TYPE_Q5_K);

    enum ggml_type types[256];
    {
        struct model m = make_model(true, 8);
        plan(&m, GQ_MIX_Q4_K_M, types);
        CHECK(type_of(&m, types, "output.weight") == GGML_TYPE_Q6_K);
        CHECK(type_of(&m, types, "token_embd.weight") == GGML_TYPE_Q4_K);
        CHECK(type_of(&m, types, "output_norm.weight") == GGML_TYPE_F32);
        CHECK(type_of(&m, types, "odd.weight") == GGML_TYPE_Q5_0);
        CHECK(type_of(&m, types, "odder.weight") == GGML_TYPE_F16);
        for (int il = 0; il < N_LAYER; il++) {
            const enum ggml_type more = more_bits(il) ? GGML_TYPE_Q6_K : GGML_TYPE_Q4_K;
            check_layer(&m, types, il, "attn_v", more, "Q4_K_M");
            check_layer(&m, types, il, "ffn_down", more, "Q4_K_M");
            check_layer(&m, types, il, "attn_q", GGML_TYPE_Q4_K, "Q4_K_M");
            check_layer(&m, types, il, "attn_output", GGML_TYPE_Q4_K, "Q4_K_M");
            check_layer(&m, types, il, "ffn_up", GGML_TYPE_Q4_K, "Q4_K_M");
            check_layer(&m, types, il, "attn_norm", GGML_TYPE_F32, "Q4_K_M");
        }

        plan(&m, GQ_MIX_Q3_K_M, types);
        for (int il = 0; il < N_LAYER; il++) {
            check_layer(&m, types, il, "attn_v", il < 2 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K, "Q3_K_M");
            check_layer(&m, types, il, "ffn_down", GGML_TYPE_Q4_K, "Q3_K_M"); // 8/16 = 0 layers of Q5_K
            check_layer(&m, types, il, "attn_output", GGML_TYPE_Q4_K, "Q3_K_M");
            check_layer(&m, types, il, "attn_k", GGML_TYPE_Q3_K, "Q3_K_M");
        }
        CHECK(type_of(&m, types, "odd.weight") == GGML_TYPE_IQ4_NL);

        plan(&m, GQ_MIX_Q4_K_S, types);
        for (int il = 0; il < N_LAYER; il++) {
            check_layer(&m, types, il, "attn_v", il < 4 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K, "Q4_K_S");
            check_layer(&m, types, il, "ffn_down", il < 1 ? GGML_TYPE_Q5_K : GGML_TYPE_Q4_K, "Q4_K_S");
        }

        plan(&m, GQ_MIX_Q2_K, types);
        check_layer(&m, types, 5, "attn_v", GGML_TYPE_Q3_K, "Q2_K"); // no grouped-query attention here
        check_layer(&m, types, 5, "ffn_down", GGML_TYPE_Q3_K, "Q2_K");
        check_layer(&m, types, 5, "ffn_gate", GGML_TYPE_Q2_K, "Q2_K");
        gguf_free(m.gguf);
        ggml_free(m.meta);
    }
    {
        // grouped-query attention (8 heads on 2): Q2_K's attention V gets Q4_K;
        // no output matrix: the embedding is the output and gets its rule
        struct model m = make_model(false, 2);
        plan(&m, GQ_MIX_Q2_K, types);
        check_layer(&m, types, 5, "attn_v", GGML_TYPE_Q4_K, "Q2_K gqa");
        CHECK(type_of(&m, types, "token_embd.weight") == GGML_TYPE_Q6_K);
        plan(&m, GQ_MIX_IQ4_XS, types);
        check_layer(&m, types, 5, "attn_v", GGML_TYPE_Q5_K, "IQ4_XS gqa");
        check_layer(&m, types, 0, "ffn_down", GGML_TYPE_Q5_K, "IQ4_XS");
        check_layer(&m, types, 1, "ffn_down", GGML_TYPE_IQ4_XS, "IQ4_XS");
        gguf_free(m.gguf);
        ggml_free(m.meta);
    }
    {
        // MXFP4_MOE: expert stacks MXFP4, every other matrix Q8_0 (the output
        // too), the router kept, rows of 48 F16
        struct ggml_init_params ip = { 16 * ggml_tensor_overhead(), NULL, true };
        struct model m = { ggml_init(ip), gguf_init_empty() };
        gguf_set_val_str(m.gguf, "general.architecture", "llama");
        add(&m, "token_embd.weight", 512, 1000);
        add(&m, "blk.0.attn_v.weight", 512, 512);
        add(&m, "blk.0.ffn_gate_inp.weight", 512, 8);
        const char * exps[] = { "blk.0.ffn_down_exps.weight", "blk.0.ffn_up_exps.weight", "blk.0.odd_exps.weight" };
        for (int i = 0; i < 3; i++) {
            struct ggml_tensor * t = ggml_new_tensor_3d(m.meta, GGML_TYPE_BF16, i == 2 ? 48 : 512, 256, 8);
            ggml_set_name(t, exps[i]);
            gguf_add_tensor(m.gguf, t);
        }
        add(&m, "output.weight", 512, 1000);
        CHECK(gq_mix_parse("MXFP4_MOE", &mix) && mix == GQ_MIX_MXFP4 && (int) mix == 38);
        CHECK(gq_mix_base_type(mix) == GGML_TYPE_MXFP4);
        plan(&m, mix, types);
        CHECK(type_of(&m, types, "token_embd.weight") == GGML_TYPE_Q8_0);
        CHECK(type_of(&m, types, "blk.0.attn_v.weight") == GGML_TYPE_Q8_0);
        CHECK(type_of(&m, types, "blk.0.ffn_gate_inp.weight") == GGML_TYPE_F16);
        CHECK(type_of(&m, types, "blk.0.ffn_down_exps.weight") == GGML_TYPE_MXFP4);
        CHECK(type_of(&m, types, "blk.0.ffn_up_exps.weight") == GGML_TYPE_MXFP4);
        CHECK(type_of(&m, types, "blk.0.odd_exps.weight") == GGML_TYPE_F16);
        CHECK(type_of(&m, types, "output.weight") == GGML_TYPE_Q8_0);
        // Q4_K_M on the same model: the experts take the base type, the router stays
        plan(&m, GQ_MIX_Q4_K_M, types);
        CHECK(type_of(&m, types, "blk.0.ffn_up_exps.weight") == GGML_TYPE_Q4_K);
        CHECK(type_of(&m, types, "blk.0.ffn_gate_inp.weight") == GGML_TYPE_F16);
        gguf_free(m.gguf);
        ggml_free(m.meta);
    }
    return TEST_RESULT();
}
