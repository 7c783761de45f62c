#pragma once

// gguf-bytes.h: building GGUF files byte by byte in the tests, independently
// of the writer under test, and counting the error lines the library logs.

#include "ggml.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bytes {
    uint8_t * data;
    size_t    n;
    size_t    cap;
};

static inline void bytes_raw(struct bytes * b, const void * p, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap == 0 ? 256 : b->cap;
        while (cap < b->n + n) {
            cap *= 2;
        }
        uint8_t * grown = (uint8_t *) realloc(b->data, cap);
        if (grown == NULL) {
            fprintf(stderr, "out of memory\n");
            abort();
        }
        b->data = grown;
        b->cap  = cap;
    }
    if (n > 0) {
        memcpy(b->data + b->n, p, n);
    }
    b->n += n;
}

static inline void bytes_u8(struct bytes * b, uint8_t v) {
    bytes_raw(b, &v, 1);
}

// little-endian, byte by byte, whatever the host order
static inline void bytes_le(struct bytes * b, uint64_t v, int size) {
    for (int i = 0; i < size; i++) {
        bytes_u8(b, (uint8_t)(v >> (8 * i)));
    }
}

static inline void bytes_u32(struct bytes * b, uint32_t v) { bytes_le(b, v, 4); }
static inline void bytes_i32(struct bytes * b, int32_t v)  { bytes_le(b, (uint32_t) v, 4); }
static inline void bytes_u64(struct bytes * b, uint64_t v) { bytes_le(b, v, 8); }
static inline void bytes_i64(struct bytes * b, int64_t v)  { bytes_le(b, (uint64_t) v, 8); }

static inline void bytes_str(struct bytes * b, const char * s) {
    bytes_u64(b, strlen(s));
    bytes_raw(b, s, strlen(s));
}

static inline void bytes_pad(struct bytes * b, size_t align) {
    while (b->n % align != 0) {
        bytes_u8(b, 0);
    }
}

// GGUF header: magic, version, tensor count, key/value count
static inline void bytes_header(struct bytes * b, uint32_t version, int64_t n_tensors, int64_t n_kv) {
    bytes_raw(b, "GGUF", 4);
    bytes_u32(b, version);
    bytes_i64(b, n_tensors);
    bytes_i64(b, n_kv);
}

// a tensor info with n_dims dimensions from ne
static inline void bytes_tensor_info(struct bytes * b, const char * name, uint32_t n_dims, const int64_t * ne,
                              int32_t type, uint64_t offset) {
    bytes_str(b, name);
    bytes_u32(b, n_dims);
    for (uint32_t j = 0; j < n_dims; j++) {
        bytes_i64(b, ne[j]);
    }
    bytes_i32(b, type);
    bytes_u64(b, offset);
}

static inline void bytes_free(struct bytes * b) {
    free(b->data);
    b->data = NULL;
    b->n = b->cap = 0;
}

// error lines logged since the last reset; other levels are dropped
static int g_log_errors = 0;

static inline void count_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR) {
        g_log_errors++;
        if (getenv("GGUF_TEST_VERBOSE") != NULL) {
            fputs(text, stderr);
        }
    }
}
