#pragma once

//
// gguf.h: reading and writing GGUF files (version 3, little-endian).
//
// Layout of a file:
//   1. magic "GGUF" (4 bytes)
//   2. version (uint32)
//   3. number of tensors (int64)
//   4. number of key/value pairs (int64)
//   5. each key/value pair: key (string), value type (int32 gguf_type), value;
//      an array value is its element type (int32), its length (uint64) and the elements
//   6. each tensor: name (string), n_dims (uint32), ne[n_dims] (int64 each),
//      type (int32 ggml_type), offset of its data in the data section (uint64)
//   7. padding to the alignment, then the data section (each tensor aligned)
//
// A string is its length (uint64) followed by that many bytes, no terminator.
// Booleans are one byte. The alignment is "general.alignment" (uint32) when
// present, else GGUF_DEFAULT_ALIGNMENT.
//
// The reader treats files as untrusted: every count, size, offset and type is
// checked, and a bad file gives a log line and NULL.
//

#include "ggml.h"

#include <stdbool.h>
#include <stdint.h>

#define GGUF_MAGIC   "GGUF"
#define GGUF_VERSION 3

#define GGUF_KEY_GENERAL_ALIGNMENT "general.alignment"

#define GGUF_DEFAULT_ALIGNMENT 32

#ifdef  __cplusplus
extern "C" {
#endif

    enum gguf_type {
        GGUF_TYPE_UINT8   = 0,
        GGUF_TYPE_INT8    = 1,
        GGUF_TYPE_UINT16  = 2,
        GGUF_TYPE_INT16   = 3,
        GGUF_TYPE_UINT32  = 4,
        GGUF_TYPE_INT32   = 5,
        GGUF_TYPE_FLOAT32 = 6,
        GGUF_TYPE_BOOL    = 7,
        GGUF_TYPE_STRING  = 8,
        GGUF_TYPE_ARRAY   = 9,
        GGUF_TYPE_UINT64  = 10,
        GGUF_TYPE_INT64   = 11,
        GGUF_TYPE_FLOAT64 = 12,
        GGUF_TYPE_COUNT,
    };

    struct gguf_context;

    struct gguf_init_params {
        bool no_alloc;

        // if not NULL, a ggml_context with one tensor per file tensor is created
        // here (holding the data too unless no_alloc)
        struct ggml_context ** ctx;
    };

    // reads up to len bytes at offset into output; returns the bytes read
    typedef size_t (*gguf_reader_callback_t)(void * userdata, void * output, uint64_t offset, size_t len);

    GGML_API struct gguf_context * gguf_init_empty(void);
    GGML_API struct gguf_context * gguf_init_from_file_ptr(FILE * file, struct gguf_init_params params);
    GGML_API struct gguf_context * gguf_init_from_file(const char * fname, struct gguf_init_params params);
    GGML_API struct gguf_context * gguf_init_from_buffer(const void * data, size_t size, struct gguf_init_params params);

    // max_chunk_read: the largest read asked of the callback (0: no limit);
    // max_expected_size: the size of the source, for bounds checks
    GGML_API struct gguf_context * gguf_init_from_callback(gguf_reader_callback_t callback, void * userdata, size_t max_chunk_read, uint64_t max_expected_size, struct gguf_init_params params);

    GGML_API void gguf_free(struct gguf_context * ctx);

    GGML_API const char * gguf_type_name(enum gguf_type type);

    GGML_API uint32_t gguf_get_version    (const struct gguf_context * ctx);
    GGML_API size_t   gguf_get_alignment  (const struct gguf_context * ctx);
    GGML_API size_t   gguf_get_data_offset(const struct gguf_context * ctx); // aligned iff there is at least one tensor

    GGML_API int64_t      gguf_get_n_kv(const struct gguf_context * ctx);
    GGML_API int64_t      gguf_find_key(const struct gguf_context * ctx, const char * key); // -1 if absent
    GGML_API const char * gguf_get_key (const struct gguf_context * ctx, int64_t key_id);

    GGML_API enum gguf_type gguf_get_kv_type (const struct gguf_context * ctx, int64_t key_id);
    GGML_API enum gguf_type gguf_get_arr_type(const struct gguf_context * ctx, int64_t key_id);

    // these abort if the value has another type
    GGML_API uint8_t      gguf_get_val_u8  (const struct gguf_context * ctx, int64_t key_id);
    GGML_API int8_t       gguf_get_val_i8  (const struct gguf_context * ctx, int64_t key_id);
    GGML_API uint16_t     gguf_get_val_u16 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API int16_t      gguf_get_val_i16 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API uint32_t     gguf_get_val_u32 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API int32_t      gguf_get_val_i32 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API float        gguf_get_val_f32 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API uint64_t     gguf_get_val_u64 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API int64_t      gguf_get_val_i64 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API double       gguf_get_val_f64 (const struct gguf_context * ctx, int64_t key_id);
    GGML_API bool         gguf_get_val_bool(const struct gguf_context * ctx, int64_t key_id);
    GGML_API const char * gguf_get_val_str (const struct gguf_context * ctx, int64_t key_id);
    GGML_API const void * gguf_get_val_data(const struct gguf_context * ctx, int64_t key_id);
    GGML_API size_t       gguf_get_arr_n   (const struct gguf_context * ctx, int64_t key_id);

    // the first element of an array value (bools are one byte each)
    GGML_API const void * gguf_get_arr_data(const struct gguf_context * ctx, int64_t key_id);

    // element i of a string array
    GGML_API const char * gguf_get_arr_str (const struct gguf_context * ctx, int64_t key_id, size_t i);

    GGML_API int64_t         gguf_get_n_tensors    (const struct gguf_context * ctx);
    GGML_API int64_t         gguf_find_tensor      (const struct gguf_context * ctx, const char * name); // -1 if absent
    GGML_API size_t          gguf_get_tensor_offset(const struct gguf_context * ctx, int64_t tensor_id);
    GGML_API const char *    gguf_get_tensor_name  (const struct gguf_context * ctx, int64_t tensor_id);
    GGML_API const int64_t * gguf_get_tensor_ne    (const struct gguf_context * ctx, int64_t tensor_id); // GGML_MAX_DIMS values, 1 past n_dims
    GGML_API enum ggml_type  gguf_get_tensor_type  (const struct gguf_context * ctx, int64_t tensor_id);
    GGML_API size_t          gguf_get_tensor_size  (const struct gguf_context * ctx, int64_t tensor_id);

    // returns the id the key had, or -1
    GGML_API int64_t gguf_remove_key(struct gguf_context * ctx, const char * key);

    // replace the value of key, or add key at the end
    GGML_API void gguf_set_val_u8  (struct gguf_context * ctx, const char * key, uint8_t      val);
    GGML_API void gguf_set_val_i8  (struct gguf_context * ctx, const char * key, int8_t       val);
    GGML_API void gguf_set_val_u16 (struct gguf_context * ctx, const char * key, uint16_t     val);
    GGML_API void gguf_set_val_i16 (struct gguf_context * ctx, const char * key, int16_t      val);
    GGML_API void gguf_set_val_u32 (struct gguf_context * ctx, const char * key, uint32_t     val);
    GGML_API void gguf_set_val_i32 (struct gguf_context * ctx, const char * key, int32_t      val);
    GGML_API void gguf_set_val_f32 (struct gguf_context * ctx, const char * key, float        val);
    GGML_API void gguf_set_val_u64 (struct gguf_context * ctx, const char * key, uint64_t     val);
    GGML_API void gguf_set_val_i64 (struct gguf_context * ctx, const char * key, int64_t      val);
    GGML_API void gguf_set_val_f64 (struct gguf_context * ctx, const char * key, double       val);
    GGML_API void gguf_set_val_bool(struct gguf_context * ctx, const char * key, bool         val);
    GGML_API void gguf_set_val_str (struct gguf_context * ctx, const char * key, const char * val);

    // an array of n elements of type, copied from data
    GGML_API void gguf_set_arr_data(struct gguf_context * ctx, const char * key, enum gguf_type type, const void * data, size_t n);

    // an array of n strings, copied
    GGML_API void gguf_set_arr_str (struct gguf_context * ctx, const char * key, const char ** data, size_t n);

    // copy every key/value pair of src into ctx
    GGML_API void gguf_set_kv(struct gguf_context * ctx, const struct gguf_context * src);

    // add a tensor (names must be unique); its data is referenced, not copied
    GGML_API void gguf_add_tensor(struct gguf_context * ctx, const struct ggml_tensor * tensor);

    // change a tensor's type; the offsets of the later tensors follow
    GGML_API void gguf_set_tensor_type(struct gguf_context * ctx, const char * name, enum ggml_type type);

    // data must hold gguf_get_tensor_size bytes
    GGML_API void gguf_set_tensor_data(struct gguf_context * ctx, const char * name, const void * data);

    // Writing: either the whole context at once, or the metadata alone
    // (only_meta) followed by the tensor data appended by the caller, or
    // gguf_get_meta_size/gguf_get_meta_data to place the metadata yourself.
    GGML_API bool gguf_write_to_file_ptr(const struct gguf_context * ctx, FILE * file, bool only_meta);
    GGML_API bool gguf_write_to_file(const struct gguf_context * ctx, const char * fname, bool only_meta);

    // bytes of the metadata (header, key/values, tensor infos, padding)
    GGML_API size_t gguf_get_meta_size(const struct gguf_context * ctx);

    GGML_API void   gguf_get_meta_data(const struct gguf_context * ctx, void * data);

    // (not upstream) Tensor data in a GGUF file is little-endian. On a big-endian
    // host, converts size bytes of a tensor's data of this type from file order to
    // host order in place (or back: the conversion is its own inverse), as the
    // reader does when it loads the data itself; does nothing on a little-endian
    // host. False, with a log line naming the tensor and type, for a type whose
    // layout cannot be converted (then the data must not be used).
    GGML_API bool   gguf_tensor_data_to_host(const char * name, enum ggml_type type, void * data, size_t size);

#ifdef  __cplusplus
}
#endif
