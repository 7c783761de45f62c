#pragma once

// quantize.h: converting the weights of a GGUF model to another type.
//
// Every 2-D tensor of type F32, F16 or BF16 whose rows are a whole number of
// blocks of the target type is converted with ggml_quantize_chunk (with a
// named mix, the type of each is chosen by its role, see mix.h); all other
// tensors (norms and other 1-D tensors, integer tensors, rows that do not
// divide) are copied unchanged, as is every metadata key. The output is
// written tensor by tensor, a few MB of rows at a time, so memory stays
// small whatever the model's size.

#include "ggml.h"
#include "mix.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gq_params {
    enum ggml_type type;       // target type of the converted tensors (without a mix)
    enum gq_mix_id mix;        // a named mix (Q4_K_M, ...) choosing the type per tensor, or GQ_MIX_NONE
    int            n_threads;  // threads quantizing rows
    bool           verbose;    // one line per tensor on stdout
};

struct gq_stats {
    int64_t n_converted;       // tensors converted
    int64_t n_kept;            // tensors copied as they were
    uint64_t bytes_in;         // tensor data read
    uint64_t bytes_out;        // tensor data written
};

// types the tool converts to
bool gq_type_supported(enum ggml_type type);

// the general.file_type value (upstream's llama_ftype) for a target type
uint32_t gq_file_type(enum ggml_type type);

// Converts in_path into out_path. False after reporting why (unreadable or
// corrupt input, unsupported type, write failure: the partial output is
// removed). stats may be NULL.
bool gq_quantize_file(const char * in_path, const char * out_path, const struct gq_params * params,
                      struct gq_stats * stats);

#ifdef __cplusplus
}
#endif
