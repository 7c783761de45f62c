#pragma once

// mix.h: the named type mixes of upstream's quantize tool (Q4_K_M and the
// like): a base type for the weight matrices, and per-tensor exceptions by
// role (the output and embedding matrices, attention V, FFN down, attention
// output, fused QKV), decided from the tensor names and the model's metadata
// as upstream's llama quantize decides them for llama-family models.

#include "ggml.h"
#include "gguf.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// upstream's llama_ftype values of the mixes
enum gq_mix_id {
    GQ_MIX_NONE   = 0,  // one type for every matrix (params.type)
    GQ_MIX_Q2_K   = 10,
    GQ_MIX_Q3_K_S = 11,
    GQ_MIX_Q3_K_M = 12,
    GQ_MIX_Q3_K_L = 13,
    GQ_MIX_Q4_K_S = 14,
    GQ_MIX_Q4_K_M = 15,
    GQ_MIX_Q5_K_S = 16,
    GQ_MIX_Q5_K_M = 17,
    GQ_MIX_Q6_K   = 18,
    GQ_MIX_IQ4_NL = 25,
    GQ_MIX_IQ4_XS = 30,
    GQ_MIX_MXFP4  = 38, // upstream's MXFP4_MOE: expert tensors MXFP4, the rest Q8_0
};

// the mix of a name (Q4_K_M, q4_k_m, ...); false for names that are no mix
bool gq_mix_parse(const char * name, enum gq_mix_id * mix);

// the base type of a mix
enum ggml_type gq_mix_base_type(enum gq_mix_id mix);

// The type of each of the n tensors of a model (tensors[i] is the i-th of
// in, in file order) under a mix: types[i] is the target of tensor i if it is
// a weight matrix, its own type otherwise. Weight matrices: F32/F16/BF16 or
// quantized (converted only with --allow-requantize), 2-D, or 3-D stacks of
// them (MoE experts); not the expert router (ffn_gate_inp).
// A target whose block does not divide the rows falls back as upstream's
// does (IQ4_NL, Q5_0, Q5_1, Q8_0, and F16 when even that does not divide).
void gq_mix_plan(const struct gguf_context * in, const struct ggml_tensor * const * tensors, int64_t n,
                 enum gq_mix_id mix, enum ggml_type * types);

#ifdef __cplusplus
}
#endif
