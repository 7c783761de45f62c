#pragma once

// gguf-impl.h: the in-memory form of a GGUF context, shared by the API
// (gguf.c), the reader (gguf-read.c) and the writer (gguf-write.c).
//
// A gguf_context owns everything it points to: keys, values, and the tensor
// infos (copies of ggml_tensor headers). Tensor data is never owned: for a
// context being written it is referenced through each info's t.data or
// t.buffer; for a context that was read it lives in the ggml_context the
// reader created (if any).

#include "ggml-impl.h"
#include "gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// A string value: data is NUL-terminated; n excludes the terminator and may
// count embedded NUL bytes, so that values are written back byte for byte.
struct gguf_str {
    char * data;
    size_t n;
};

struct gguf_kv {
    char *         key;      // non-empty, NUL-terminated, no embedded NUL
    enum gguf_type type;     // element type, never GGUF_TYPE_ARRAY
    bool           is_array;
    size_t         n;        // number of elements (1 for a scalar)
    void *         data;     // n * gguf_type_size(type) bytes, or n struct gguf_str;
                             // bools are one byte each, 0 or 1
};

struct gguf_tensor_info {
    struct ggml_tensor t;      // name, type, ne, nb; data/buffer only when writing
    uint64_t           offset; // from the start of the data section, a multiple of the alignment
};

// An open-addressing hash index (linear probing) of the names of the
// context's keys or tensor infos: it holds indices into those arrays, not
// pointers, because the arrays move as they grow. Capacity is a power of two
// at least twice the count, so that every probe sequence ends at an empty slot.
struct gguf_name_index {
    size_t * slots;    // entry index + 1, or 0 for an empty slot
    size_t   capacity; // 0 or a power of two
    size_t   count;
};

struct gguf_context {
    uint32_t version;

    struct gguf_kv * kv;
    size_t           n_kv;
    size_t           kv_capacity;
    struct gguf_name_index kv_index;   // by key

    struct gguf_tensor_info * info;
    size_t                    n_info;
    size_t                    info_capacity;
    struct gguf_name_index    info_index; // by tensor name

    size_t alignment; // a power of two, follows general.alignment
    size_t offset;    // of the data section from the start of the file (0 until read)
    size_t size;      // of the data section, every tensor padded to the alignment
};

// bytes of one element of a fixed-size type; 0 for strings, arrays and invalid ids
size_t gguf_type_size(enum gguf_type type);

// overflow-checked arithmetic: false (and *r untouched) if the result does not fit
static inline bool gguf_add_u64(uint64_t a, uint64_t b, uint64_t * r) {
    if (a > UINT64_MAX - b) {
        return false;
    }
    *r = a + b;
    return true;
}

static inline bool gguf_mul_u64(uint64_t a, uint64_t b, uint64_t * r) {
    if (a != 0 && b > UINT64_MAX / a) {
        return false;
    }
    *r = a * b;
    return true;
}

// x rounded up to a multiple of align (a power of two), checked
static inline bool gguf_pad_u64(uint64_t x, uint64_t align, uint64_t * r) {
    uint64_t t;
    if (!gguf_add_u64(x, align - 1, &t)) {
        return false;
    }
    *r = t & ~(align - 1);
    return true;
}

static inline bool gguf_is_pow2(uint64_t x) {
    return x != 0 && (x & (x - 1)) == 0;
}

// Computes the byte size of a tensor of this type and shape (ne has
// GGML_MAX_DIMS entries). Fails for removed or invalid types, negative
// dimensions, rows that are not whole blocks, and sizes beyond SIZE_MAX;
// why is written to reason (at least 128 bytes).
bool gguf_tensor_nbytes(enum ggml_type type, const int64_t * ne, size_t * nbytes, char * reason, size_t reason_size);

// Sets type, ne and the contiguous strides nb of t (checked by gguf_tensor_nbytes first).
void gguf_tensor_set_shape(struct ggml_tensor * t, enum ggml_type type, const int64_t * ne);

// Appends entries and indexes their names; false if memory runs out (the
// context is unchanged). The name must not be in the context yet
// (gguf_find_key / gguf_find_tensor), as names are unique.
bool gguf_push_kv  (struct gguf_context * ctx, struct gguf_kv kv);
bool gguf_push_info(struct gguf_context * ctx, const struct gguf_tensor_info * info);

// Frees what a kv owns.
void gguf_kv_release(struct gguf_kv * kv);

// Recomputes the offsets of tensors [first, n_info) so that the data stays one
// block with each tensor padded to the alignment.
void gguf_update_offsets(struct gguf_context * ctx, size_t first);

// Little-endian loads and stores, independent of the host's byte order.
static inline uint16_t gguf_load_u16(const uint8_t * p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t gguf_load_u32(const uint8_t * p) {
    return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

static inline uint64_t gguf_load_u64(const uint8_t * p) {
    return (uint64_t) gguf_load_u32(p) | ((uint64_t) gguf_load_u32(p + 4) << 32);
}

static inline void gguf_store_u32(uint8_t * p, uint32_t v) {
    p[0] = (uint8_t) v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void gguf_store_u64(uint8_t * p, uint64_t v) {
    gguf_store_u32(p, (uint32_t) v);
    gguf_store_u32(p + 4, (uint32_t)(v >> 32));
}

static inline bool gguf_host_is_little_endian(void) {
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

// Converts n elements of elem_size bytes between little-endian and host order, in place.
static inline void gguf_swap_to_host(void * data, size_t n, size_t elem_size) {
    if (elem_size <= 1 || gguf_host_is_little_endian()) {
        return;
    }
    uint8_t * p = (uint8_t *) data;
    for (size_t i = 0; i < n; i++, p += elem_size) {
        for (size_t a = 0, b = elem_size - 1; a < b; a++, b--) {
            const uint8_t tmp = p[a];
            p[a] = p[b];
            p[b] = tmp;
        }
    }
}

// Converts tensor data (size bytes, whole blocks of type) between little-endian
// and the other byte order, in place, whatever the host's order; false with a
// log line naming the tensor when the type's layout is not known to convert
// (gguf-byteswap.c). gguf_byteswap_supported says so without a log line.
bool gguf_byteswap_tensor_data(const char * name, enum ggml_type type, void * data, size_t size);
bool gguf_byteswap_supported(enum ggml_type type);
