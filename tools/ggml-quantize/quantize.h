#pragma once

// quantize.h: converting the weights of a GGUF model to another type.
//
// Every non-empty 2-D tensor (or 3-D stack of them: MoE experts) of type
// F32, F16 or BF16 whose rows are a whole
// number of blocks of the target type is converted with ggml_quantize_chunk;
// all other tensors (norms and other 1-D tensors, empty tensors, integer
// tensors, rows that do not divide) are copied unchanged, as is every
// metadata key but general.file_type, which is set to the type that most
// weights of the output have. A 2-D tensor that is already quantized to
// another type is refused, unless allow_requantize: then it is dequantized
// and converted like a float one. The output is written tensor by tensor, a
// few MB of rows at a time, so memory stays small whatever the model's size,
// to a temporary file that replaces the output path only when complete.

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
    bool           allow_requantize; // convert quantized weights too (dequantized first)
    const char   * imatrix_path;     // importance matrix (GGUF, imatrix.h) for every converted matrix it has, or NULL
};

struct gq_stats {
    int64_t n_converted;       // tensors converted
    int64_t n_kept;            // tensors copied as they were
    uint64_t bytes_in;         // tensor data read
    uint64_t bytes_out;        // tensor data written
};

// types the tool converts to
bool gq_type_supported(enum ggml_type type);

// the general.file_type value (upstream's llama_ftype) of a model whose
// weights are mostly of this type; false for types without one
bool gq_file_type(enum ggml_type type, uint32_t * file_type);

// Converts in_path into out_path. Where an importance matrix is given, the
// matrices it has an entry for are quantized with it (the types that need
// one refuse matrices it lacks, as upstream's tool does). False after
// reporting why (unreadable or corrupt input or importance matrix, an entry
// of the wrong length or with a NaN, infinite or negative importance, a NaN
// or infinite weight in a matrix converted to a quantized type, unsupported type, quantized weights without
// allow_requantize, an output path that is a directory or not a regular
// file, write failure); out_path is then left as it was. stats may be NULL.
bool gq_quantize_file(const char * in_path, const char * out_path, const struct gq_params * params,
                      struct gq_stats * stats);

// prints "ggml-quantize: error: " and the message on stderr
#if defined(__GNUC__)
void gq_error(const char * fmt, ...) __attribute__((format(printf, 1, 2)));
#else
void gq_error(const char * fmt, ...);
#endif

#ifdef __cplusplus
}
#endif
