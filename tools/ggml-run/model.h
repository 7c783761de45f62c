#pragma once

// model.h: a decoder of one of the architectures of arch.h: its
// hyperparameters, vocabulary and weights, and where the weights live.
//
// The weights come from a "weight source": a GGUF context describing the
// tensors plus the memory holding their bytes (the memory-mapped file, or a
// synthetic model built in memory). The CPU uses that memory in place,
// through a buffer made with ggml_backend_dev_buffer_from_host_ptr; layers
// given to devices with their own memory get a buffer there and a copy.
// A run_model owns its source, buffers and devices; run_model_free releases
// everything.

#include "arch.h"
#include "devices.h"
#include "tokenizer.h"

#include "ggml.h"
#include "ggml-backend.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gguf_context;

// The tensors of a layer; those the architecture does not have, or the file
// leaves out where they are optional, are NULL.
struct run_layer {
    struct ggml_tensor * attn_norm;
    struct ggml_tensor * wq;
    struct ggml_tensor * wk;
    struct ggml_tensor * wv;
    struct ggml_tensor * wqkv;          // Q, K and V in one matrix (instead of wq, wk, wv)
    struct ggml_tensor * bq;            // biases of Q, K, V
    struct ggml_tensor * bk;
    struct ggml_tensor * bv;
    struct ggml_tensor * attn_q_norm;   // RMS norms of each head of Q and K, before RoPE
    struct ggml_tensor * attn_k_norm;
    struct ggml_tensor * wo;
    struct ggml_tensor * attn_post_norm; // norm of the attention output, before the residual
    struct ggml_tensor * ffn_norm;
    struct ggml_tensor * ffn_gate;
    struct ggml_tensor * ffn_up;        // [n_embd, 2 n_ff]: gate and up in one matrix when ffn_gate is NULL
    struct ggml_tensor * ffn_down;
    struct ggml_tensor * ffn_post_norm; // norm of the feed-forward output, before the residual
    struct ggml_tensor * ffn_gate_inp;  // the router: [n_embd, n_expert]
    struct ggml_tensor * ffn_gate_exps; // [n_embd, n_ff_exp, n_expert]
    struct ggml_tensor * ffn_up_exps;
    struct ggml_tensor * ffn_down_exps; // [n_ff_exp, n_embd, n_expert]
};

// What a model is made from. base[0, size) holds the bytes of every tensor,
// tensor i at base + data_offset + gguf_get_tensor_offset(gguf, i); base is
// page-aligned. release(base, size) gives the memory back.
struct run_weight_source {
    struct gguf_context * gguf;
    struct ggml_context * meta;        // one tensor per GGUF tensor, no data
    struct ggml_tensor ** tensors;     // tensors[id]: meta's tensor of GGUF tensor id
    void   * base;
    size_t   size;
    size_t   data_offset;
    void  (* release)(void * base, size_t size);
    const char * name;                 // for messages: the file name or "synthetic"
};

struct run_model_params {
    const char * devices;       // see run_devices_select (NULL: default devices)
    int64_t      n_gpu_layers;  // layers on devices other than the CPU (< 0: all)
    const char * tensor_split;  // see run_devices_assign_layers (NULL: by free memory)
    bool         split_tensor;  // --split-mode tensor: the layer devices one meta device (split-tensor.h)
    bool         use_mmap;      // map the file (else read it into memory)
    bool         repack;        // CPU matrices in the CPU's extra buffer type (its kernels' layout) where it takes them
};

struct run_model_params run_model_default_params(void);

struct run_model {
    struct run_hparams   hp;
    struct run_vocab     vocab;
    struct ggml_tensor * tok_embd;
    struct ggml_tensor * output_norm;
    struct ggml_tensor * output;       // tok_embd when the model ties them
    struct ggml_tensor * rope_freqs;   // RoPE frequency factors, or NULL
    struct run_layer   * layers;

    struct run_devices   devs;
    struct run_split_plan * split_plan; // --split-mode tensor: the shares of the meta device's devices, else NULL
    int                * layer_dev;    // device of each layer, n_layer + 1 entries (output last)
    size_t             * weight_bytes; // per layer device: bytes of the weights placed there
    size_t               repack_bytes; // of the CPU's: bytes copied into its extra buffer type (--no-repack: 0)
    ggml_backend_buffer_type_t repack_buft; // that extra buffer type, NULL when none took a weight
    enum ggml_type       ftype;        // the type of most matrix weights (for display)

    struct run_weight_source src;
    ggml_backend_buffer_t * buffers;
    int                     n_buffers;
};

// Loads a GGUF model file. Returns NULL after reporting why: the file is
// missing or not GGUF, the architecture is not one of arch.h's, a key or tensor is
// missing or has the wrong shape, memory runs out.
struct run_model * run_model_load(const char * path, const struct run_model_params * params);

// Builds a model from a source (taking it over, also on failure).
struct run_model * run_model_from_source(struct run_weight_source * src, const struct run_model_params * params);

void run_model_free(struct run_model * model);

// the device of layer il (il == n_layer: the output layer)
static inline ggml_backend_dev_t run_model_layer_device(const struct run_model * model, int64_t il) {
    return model->devs.layer[model->layer_dev[il]];
}

// total bytes of the weights
size_t run_model_weight_bytes(const struct run_model * model);

// frees a source that was not handed to run_model_from_source
void run_weight_source_free(struct run_weight_source * src);

// Fills src->tensors once gguf and meta hold the same tensors, so that a
// tensor is found by name through the GGUF's hash index rather than by a
// search of meta (quadratic over a model of many layers). False (reported)
// when memory runs out.
bool run_source_index_tensors(struct run_weight_source * src);

// meta's tensor named name, or NULL
struct ggml_tensor * run_source_tensor(const struct run_weight_source * src, const char * name);

#ifdef __cplusplus
}
#endif
