// test-gguf-corrupt: the reader against damaged and hostile files.
//
// A valid file (built byte by byte here) is truncated at every length and
// has each byte of its metadata set to adversarial values; hand-crafted
// files attack every count, length, type id, shape, offset and the
// alignment. Every input must give NULL with exactly one error line, or,
// where the damage happens to be harmless, a context whose every getter
// works and whose tensors lie inside the input. Inputs live in buffers of
// exactly their size, so that AddressSanitizer sees any over-read.

#include "ggml.h"
#include "gguf.h"
#include "gguf-bytes.h"
#include "testing.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum read_mode {
    READ_DATA,     // ggml context with the tensor data
    READ_NO_ALLOC, // ggml context, tensor headers only
    READ_META,     // no ggml context
    N_READ_MODES,
};

static const char * MODE_NAMES[N_READ_MODES] = { "data", "no_alloc", "meta" };

// Touches everything a context exposes; the tensors must lie in the input
// (when their data was read) and in the blob of the ggml context.
static void walk_context(const struct gguf_context * ctx, struct ggml_context * gctx, size_t input_size, bool data_read) {
    volatile uint64_t sink = 0;
    for (int64_t i = 0; i < gguf_get_n_kv(ctx); i++) {
        sink += strlen(gguf_get_key(ctx, i));
        const enum gguf_type type = gguf_get_kv_type(ctx, i);
        CHECK(gguf_type_name(type) != NULL);
        if (type == GGUF_TYPE_ARRAY) {
            const enum gguf_type at = gguf_get_arr_type(ctx, i);
            const size_t n = gguf_get_arr_n(ctx, i);
            CHECK(at != GGUF_TYPE_ARRAY && gguf_type_name(at) != NULL);
            if (at == GGUF_TYPE_STRING) {
                for (size_t j = 0; j < n; j++) {
                    sink += strlen(gguf_get_arr_str(ctx, i, j));
                }
            } else if (n > 0) {
                const uint8_t * d = (const uint8_t *) gguf_get_arr_data(ctx, i);
                sink += d[0];
            }
        } else if (type == GGUF_TYPE_STRING) {
            sink += strlen(gguf_get_val_str(ctx, i));
        } else {
            sink += *(const uint8_t *) gguf_get_val_data(ctx, i);
        }
    }
    const size_t align = gguf_get_alignment(ctx);
    CHECK(align > 0 && (align & (align - 1)) == 0);
    for (int64_t i = 0; i < gguf_get_n_tensors(ctx); i++) {
        const size_t offset = gguf_get_tensor_offset(ctx, i);
        const size_t size   = gguf_get_tensor_size(ctx, i);
        CHECK(offset % align == 0);
        CHECK(strlen(gguf_get_tensor_name(ctx, i)) < GGML_MAX_NAME);
        CHECK(gguf_get_data_offset(ctx) <= input_size);
        if (data_read) {
            CHECK(offset + size <= input_size - gguf_get_data_offset(ctx));
        }
        const int64_t * ne = gguf_get_tensor_ne(ctx, i);
        CHECK(ne[0] >= 0 && ne[1] >= 0 && ne[2] >= 0 && ne[3] >= 0);
    }
    if (gctx != NULL) {
        struct ggml_tensor * t = ggml_get_first_tensor(gctx);
        const uint8_t * blob = NULL;
        size_t blob_size = 0;
        if (data_read && t != NULL) {
            blob      = (const uint8_t *) t->data;
            blob_size = (size_t) t->ne[0];
            t = ggml_get_next_tensor(gctx, t);
        }
        int64_t n = 0;
        for (; t != NULL; t = ggml_get_next_tensor(gctx, t), n++) {
            const size_t nbytes = ggml_nbytes(t);
            if (data_read && nbytes > 0) {
                const uint8_t * p = (const uint8_t *) t->data;
                CHECK(blob != NULL && p >= blob && nbytes <= blob_size && (size_t)(p - blob) <= blob_size - nbytes);
                sink += p[0] + p[nbytes - 1];
            } else if (!data_read) {
                CHECK(t->data == NULL);
            }
        }
        CHECK_EQ_INT(n, gguf_get_n_tensors(ctx));
    }
    (void) sink;
}

// Reads data[0, size) (copied to a buffer of exactly that size) in a mode;
// returns whether a context came back, checking the one-line rule.
static bool try_read(const uint8_t * data, size_t size, enum read_mode mode) {
    uint8_t * copy = (uint8_t *) malloc(size == 0 ? 1 : size);
    if (size > 0) {
        memcpy(copy, data, size);
    }
    struct ggml_context * gctx = NULL;
    struct gguf_init_params params = {
        .no_alloc = mode == READ_NO_ALLOC,
        .ctx      = mode == READ_META ? NULL : &gctx,
    };
    g_log_errors = 0;
    struct gguf_context * ctx = gguf_init_from_buffer(copy, size, params);
    if (ctx == NULL) {
        CHECK_MSG(g_log_errors == 1, "%d error lines for one failure (size %zu, mode %s)", g_log_errors, size, MODE_NAMES[mode]);
        CHECK(gctx == NULL);
    } else {
        CHECK_MSG(g_log_errors == 0, "%d error lines for a success", g_log_errors);
        CHECK((gctx != NULL) == (mode != READ_META));
        walk_context(ctx, gctx, size, mode == READ_DATA);
    }
    const bool ok = ctx != NULL;
    gguf_free(ctx);
    ggml_free(gctx);
    free(copy);
    return ok;
}

//
// the valid file
//

// a: f32 5x3 (60 bytes), b: q4_0 32x2 (36), c: f16 7 (14), d: i8 1 (1); alignment 16
static const int64_t NE_A[2] = { 5, 3 };
static const int64_t NE_B[2] = { 32, 2 };
static const int64_t NE_C[1] = { 7 };
static const int64_t NE_D[1] = { 1 };
static const size_t  DATA_SIZE = 64 + 48 + 16 + 16;

struct valid_file {
    struct bytes b;
    size_t data_start; // where the data section starts
    size_t data_used;  // bytes of it holding tensor data (without the last padding)
};

static struct valid_file make_valid_file(void) {
    struct valid_file f = { .b = { NULL, 0, 0 }, .data_start = 0, .data_used = 0 };
    struct bytes * b = &f.b;
    bytes_header(b, 3, 4, 8);
    bytes_str(b, "general.alignment"); bytes_i32(b, GGUF_TYPE_UINT32); bytes_u32(b, 16);
    bytes_str(b, "name");      bytes_i32(b, GGUF_TYPE_STRING);  bytes_str(b, "corrupt");
    bytes_str(b, "arr.u16");   bytes_i32(b, GGUF_TYPE_ARRAY);   bytes_i32(b, GGUF_TYPE_UINT16); bytes_u64(b, 3);
    bytes_le(b, 1, 2); bytes_le(b, 2, 2); bytes_le(b, 3, 2);
    bytes_str(b, "arr.str");   bytes_i32(b, GGUF_TYPE_ARRAY);   bytes_i32(b, GGUF_TYPE_STRING); bytes_u64(b, 3);
    bytes_str(b, "x"); bytes_str(b, "yy"); bytes_str(b, "");
    bytes_str(b, "flag");      bytes_i32(b, GGUF_TYPE_BOOL);    bytes_u8(b, 1);
    bytes_str(b, "arr.bool");  bytes_i32(b, GGUF_TYPE_ARRAY);   bytes_i32(b, GGUF_TYPE_BOOL); bytes_u64(b, 2);
    bytes_u8(b, 1); bytes_u8(b, 0);
    bytes_str(b, "f64");       bytes_i32(b, GGUF_TYPE_FLOAT64); bytes_u64(b, 0x3FF8000000000000ull);
    bytes_str(b, "i64");       bytes_i32(b, GGUF_TYPE_INT64);   bytes_i64(b, -5);
    bytes_tensor_info(b, "a", 2, NE_A, GGML_TYPE_F32,  0);
    bytes_tensor_info(b, "b", 2, NE_B, GGML_TYPE_Q4_0, 64);
    bytes_tensor_info(b, "c", 1, NE_C, GGML_TYPE_F16,  112);
    bytes_tensor_info(b, "d", 1, NE_D, GGML_TYPE_I8,   128);
    bytes_pad(b, 16);
    f.data_start = b->n;
    for (size_t k = 0; k < DATA_SIZE; k++) {
        bytes_u8(b, (uint8_t)(k * 13 + 5));
    }
    f.data_used = 128 + 1;
    return f;
}

static void test_valid_file(const struct valid_file * f) {
    for (int m = 0; m < N_READ_MODES; m++) {
        CHECK_MSG(try_read(f->b.data, f->b.n, (enum read_mode) m), "the valid file must be read in mode %s", MODE_NAMES[m]);
    }
    struct gguf_context * ctx = gguf_init_from_buffer(f->b.data, f->b.n, (struct gguf_init_params) { .no_alloc = false, .ctx = NULL });
    CHECK(ctx != NULL);
    if (ctx != NULL) {
        CHECK_EQ_INT(gguf_get_n_kv(ctx), 8);
        CHECK_EQ_INT(gguf_get_n_tensors(ctx), 4);
        CHECK_EQ_INT(gguf_get_alignment(ctx), 16);
        CHECK_EQ_INT(gguf_get_data_offset(ctx), f->data_start);
        CHECK(gguf_get_val_f64(ctx, gguf_find_key(ctx, "f64")) == 1.5);
    }
    gguf_free(ctx);
}

// (a) every truncation: the metadata must be whole (with the padding before
// the data) for a context, and the tensor data too when it is read
static void test_truncation(const struct valid_file * f) {
    for (size_t len = 0; len < f->b.n; len++) {
        const bool meta_whole = len >= f->data_start;
        const bool data_whole = len >= f->data_start + f->data_used;
        CHECK_MSG(try_read(f->b.data, len, READ_DATA) == data_whole, "truncated to %zu, with data", len);
        CHECK_MSG(try_read(f->b.data, len, READ_NO_ALLOC) == meta_whole, "truncated to %zu, no_alloc", len);
        CHECK_MSG(try_read(f->b.data, len, READ_META) == meta_whole, "truncated to %zu, meta", len);
    }
}

// a callback over a truncated copy that claims the full size (or no limit)
struct short_source {
    const uint8_t * data;
    size_t          size;
};

static size_t short_read(void * userdata, void * output, uint64_t offset, size_t len) {
    const struct short_source * src = (const struct short_source *) userdata;
    if (offset >= src->size) {
        return 0;
    }
    const size_t n = len < src->size - offset ? len : src->size - (size_t) offset;
    memcpy(output, src->data + offset, n);
    return n;
}

static void test_truncation_lying_callback(const struct valid_file * f) {
    for (size_t len = 0; len < f->b.n; len += 3) {
        uint8_t * copy = (uint8_t *) malloc(len == 0 ? 1 : len);
        memcpy(copy, f->b.data, len);
        struct short_source src = { .data = copy, .size = len };
        const uint64_t claims[2] = { f->b.n, UINT64_MAX };
        for (int c = 0; c < 2; c++) {
            struct ggml_context * gctx = NULL;
            g_log_errors = 0;
            struct gguf_context * ctx = gguf_init_from_callback(short_read, &src, 5, claims[c],
                                                                (struct gguf_init_params) { .no_alloc = false, .ctx = &gctx });
            const bool expect = len >= f->data_start + f->data_used;
            CHECK_MSG((ctx != NULL) == expect, "callback over %zu bytes claiming %llu", len, (unsigned long long) claims[c]);
            CHECK(ctx != NULL || g_log_errors == 1);
            gguf_free(ctx);
            ggml_free(gctx);
        }
        free(copy);
    }
}

// (b) every metadata byte set to adversarial values, then random multi-byte damage
static void test_byte_flips(const struct valid_file * f) {
    static const uint8_t VALUES[4] = { 0x00, 0xFF, 0x7F, 0x80 };
    uint8_t * mutated = (uint8_t *) malloc(f->b.n);
    int accepted = 0, rejected = 0;
    for (size_t pos = 0; pos < f->data_start; pos++) {
        for (int v = 0; v < 4; v++) {
            if (f->b.data[pos] == VALUES[v]) {
                continue;
            }
            memcpy(mutated, f->b.data, f->b.n);
            mutated[pos] = VALUES[v];
            for (int m = 0; m < N_READ_MODES; m++) {
                if (try_read(mutated, f->b.n, (enum read_mode) m)) {
                    accepted++;
                } else {
                    rejected++;
                }
            }
        }
    }
    // a fixed-seed generator, so that a failure can be reproduced
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int iter = 0; iter < 3000; iter++) {
        memcpy(mutated, f->b.data, f->b.n);
        for (int k = 0; k < 1 + iter % 4; k++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            const size_t pos = (size_t)(state >> 33) % f->data_start;
            mutated[pos] = (uint8_t)(state >> 17);
        }
        for (int m = 0; m < N_READ_MODES; m++) {
            if (try_read(mutated, f->b.n, (enum read_mode) m)) {
                accepted++;
            } else {
                rejected++;
            }
        }
    }
    printf("byte flips: %d reads accepted, %d rejected\n", accepted, rejected);
    CHECK(rejected > 0 && accepted > 0);
    free(mutated);
}

//
// (c) hand-crafted attacks
//

// reading must fail in every mode
static void expect_reject(const char * what, struct bytes * b) {
    for (int m = 0; m < N_READ_MODES; m++) {
        CHECK_MSG(!try_read(b->data, b->n, (enum read_mode) m), "%s: accepted in mode %s", what, MODE_NAMES[m]);
    }
    bytes_free(b);
}

// the metadata is valid but the tensor data is not all there
static void expect_meta_only(const char * what, struct bytes * b) {
    CHECK_MSG(!try_read(b->data, b->n, READ_DATA), "%s: accepted with data", what);
    CHECK_MSG(try_read(b->data, b->n, READ_NO_ALLOC), "%s: rejected in mode no_alloc", what);
    CHECK_MSG(try_read(b->data, b->n, READ_META), "%s: rejected in mode meta", what);
    bytes_free(b);
}

static void expect_accept(const char * what, struct bytes * b) {
    for (int m = 0; m < N_READ_MODES; m++) {
        CHECK_MSG(try_read(b->data, b->n, (enum read_mode) m), "%s: rejected in mode %s", what, MODE_NAMES[m]);
    }
    bytes_free(b);
}

// one key/value pair whose value bytes follow, after a header claiming it
static struct bytes one_kv(const char * key, int32_t type) {
    struct bytes b = { NULL, 0, 0 };
    bytes_header(&b, 3, 0, 1);
    bytes_str(&b, key);
    bytes_i32(&b, type);
    return b;
}

static void test_header_attacks(void) {
    struct bytes b = { NULL, 0, 0 };
    bytes_header(&b, 3, (int64_t) 1 << 60, 0);
    expect_reject("2^60 tensors", &b);
    bytes_header(&b, 3, 0, (int64_t) 1 << 60);
    expect_reject("2^60 key/value pairs", &b);
    bytes_header(&b, 3, -1, 0);
    expect_reject("-1 tensors", &b);
    bytes_header(&b, 3, 0, INT64_MIN);
    expect_reject("INT64_MIN key/value pairs", &b);
    bytes_header(&b, 3, INT64_MAX, INT64_MAX);
    expect_reject("INT64_MAX of both", &b);
    bytes_header(&b, 3, 1, 0);
    expect_reject("a tensor claimed, none there", &b);

    static const uint32_t BAD_VERSIONS[] = { 0, 1, 4, 0x00030000u, 0xFFFFFFFFu };
    for (size_t i = 0; i < sizeof(BAD_VERSIONS) / sizeof(BAD_VERSIONS[0]); i++) {
        bytes_header(&b, BAD_VERSIONS[i], 0, 0);
        expect_reject("bad version", &b);
    }
    bytes_header(&b, 2, 0, 0);
    expect_accept("version 2", &b);
    bytes_header(&b, 3, 0, 0);
    expect_accept("header only", &b);

    bytes_raw(&b, "GGUG", 4); bytes_u32(&b, 3); bytes_i64(&b, 0); bytes_i64(&b, 0);
    expect_reject("wrong magic", &b);
    bytes_raw(&b, "ggml", 4); bytes_u32(&b, 3); bytes_i64(&b, 0); bytes_i64(&b, 0);
    expect_reject("old magic", &b);
    bytes_raw(&b, "GGU", 3);
    expect_reject("truncated magic", &b);

    // sources that are not there
    struct ggml_context * gctx = NULL;
    g_log_errors = 0;
    CHECK(gguf_init_from_buffer(NULL, 100, (struct gguf_init_params) { .no_alloc = false, .ctx = &gctx }) == NULL && gctx == NULL);
    CHECK(gguf_init_from_callback(NULL, NULL, 0, 100, (struct gguf_init_params) { .no_alloc = false, .ctx = NULL }) == NULL);
    static const uint8_t header[24] = { 'G', 'G', 'U', 'F', 3 };
    struct short_source src = { .data = header, .size = sizeof(header) };
    CHECK(gguf_init_from_callback(short_read, &src, 0, 0, (struct gguf_init_params) { .no_alloc = false, .ctx = NULL }) == NULL);
    struct gguf_context * ctx = gguf_init_from_callback(short_read, &src, 0, 24, (struct gguf_init_params) { .no_alloc = false, .ctx = NULL });
    CHECK(ctx != NULL);
    gguf_free(ctx);
    CHECK_EQ_INT(g_log_errors, 3);
}

static void test_kv_attacks(void) {
    struct bytes b = { NULL, 0, 0 };

    bytes_header(&b, 3, 0, 1); bytes_u64(&b, (uint64_t) 1 << 62); bytes_raw(&b, "key", 3);
    expect_reject("key of 2^62 bytes", &b);
    bytes_header(&b, 3, 0, 1); bytes_u64(&b, ((uint64_t) 1 << 30) + 1); bytes_raw(&b, "key", 3);
    expect_reject("key over the string limit", &b);
    bytes_header(&b, 3, 0, 1); bytes_u64(&b, 4); bytes_raw(&b, "key", 3);
    expect_reject("key one byte short", &b);
    bytes_header(&b, 3, 0, 1); bytes_u64(&b, UINT64_MAX);
    expect_reject("key of 2^64-1 bytes", &b);
    b = one_kv("", GGUF_TYPE_UINT8); bytes_u8(&b, 1);
    expect_reject("empty key", &b);
    bytes_header(&b, 3, 0, 1); bytes_u64(&b, 3); bytes_raw(&b, "a\0b", 3); bytes_i32(&b, GGUF_TYPE_UINT8); bytes_u8(&b, 1);
    expect_reject("key with a NUL byte", &b);

    b = one_kv("s", GGUF_TYPE_STRING); bytes_u64(&b, (uint64_t) 1 << 62); bytes_raw(&b, "abc", 3);
    expect_reject("string of 2^62 bytes", &b);
    b = one_kv("s", GGUF_TYPE_STRING); bytes_u64(&b, 1000);
    expect_reject("string past the end", &b);

    static const int32_t BAD_TYPES[] = { GGUF_TYPE_COUNT, 13, 100, -1, INT32_MAX, INT32_MIN };
    for (size_t i = 0; i < sizeof(BAD_TYPES) / sizeof(BAD_TYPES[0]); i++) {
        b = one_kv("t", BAD_TYPES[i]); bytes_u64(&b, 0);
        expect_reject("invalid value type", &b);
        b = one_kv("t", GGUF_TYPE_ARRAY); bytes_i32(&b, BAD_TYPES[i]); bytes_u64(&b, 0);
        expect_reject("invalid array element type", &b);
    }
    b = one_kv("t", GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_ARRAY); bytes_u64(&b, 1);
    bytes_i32(&b, GGUF_TYPE_UINT8); bytes_u64(&b, 0);
    expect_reject("array of arrays", &b);

    b = one_kv("a", GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_UINT8); bytes_u64(&b, (uint64_t) 1 << 60);
    expect_reject("2^60 u8", &b);
    b = one_kv("a", GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_UINT64); bytes_u64(&b, (uint64_t) 1 << 29);
    expect_reject("2^29 u64 (4 GiB) in a tiny file", &b);
    b = one_kv("a", GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_UINT64); bytes_u64(&b, ((uint64_t) 1 << 61) + 1);
    expect_reject("u64 array whose byte size overflows", &b);
    b = one_kv("a", GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_STRING); bytes_u64(&b, (uint64_t) 1 << 29);
    bytes_str(&b, "one");
    expect_reject("2^29 strings in a tiny file", &b);
    b = one_kv("a", GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_STRING); bytes_u64(&b, 2);
    bytes_str(&b, "one"); bytes_u64(&b, (uint64_t) 1 << 40);
    expect_reject("second string of 2^40 bytes", &b);
    b = one_kv("a", GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_UINT32); bytes_u64(&b, 3); bytes_u32(&b, 1); bytes_u32(&b, 2);
    expect_reject("array one element short", &b);
    b = one_kv("a", GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_UINT8); bytes_u64(&b, 0);
    expect_accept("empty array", &b);
    b = one_kv("a", GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_STRING); bytes_u64(&b, 0);
    expect_accept("empty string array", &b);

    bytes_header(&b, 3, 0, 3);
    bytes_str(&b, "k"); bytes_i32(&b, GGUF_TYPE_UINT8); bytes_u8(&b, 1);
    bytes_str(&b, "l"); bytes_i32(&b, GGUF_TYPE_UINT8); bytes_u8(&b, 1);
    bytes_str(&b, "k"); bytes_i32(&b, GGUF_TYPE_STRING); bytes_str(&b, "again");
    expect_reject("duplicate key", &b);
    bytes_header(&b, 3, 0, 1); bytes_str(&b, "k"); bytes_i32(&b, GGUF_TYPE_UINT8);
    expect_reject("value missing", &b);
}

static void test_alignment_attacks(void) {
    static const uint32_t BAD[] = { 0, 3, 48, 0xFFFFFFFFu, 0x80000001u };
    struct bytes b;
    for (size_t i = 0; i < sizeof(BAD) / sizeof(BAD[0]); i++) {
        b = one_kv(GGUF_KEY_GENERAL_ALIGNMENT, GGUF_TYPE_UINT32); bytes_u32(&b, BAD[i]);
        expect_reject("alignment not a power of 2", &b);
    }
    b = one_kv(GGUF_KEY_GENERAL_ALIGNMENT, GGUF_TYPE_UINT64); bytes_u64(&b, 32);
    expect_reject("alignment as u64", &b);
    b = one_kv(GGUF_KEY_GENERAL_ALIGNMENT, GGUF_TYPE_INT32); bytes_i32(&b, 32);
    expect_reject("alignment as i32", &b);
    b = one_kv(GGUF_KEY_GENERAL_ALIGNMENT, GGUF_TYPE_STRING); bytes_str(&b, "32");
    expect_reject("alignment as a string", &b);
    b = one_kv(GGUF_KEY_GENERAL_ALIGNMENT, GGUF_TYPE_ARRAY); bytes_i32(&b, GGUF_TYPE_UINT32); bytes_u64(&b, 1); bytes_u32(&b, 32);
    expect_reject("alignment as an array", &b);
    b = one_kv(GGUF_KEY_GENERAL_ALIGNMENT, GGUF_TYPE_UINT32); bytes_u32(&b, 1);
    expect_accept("alignment 1", &b);
    b = one_kv(GGUF_KEY_GENERAL_ALIGNMENT, GGUF_TYPE_UINT32); bytes_u32(&b, 0x80000000u);
    expect_accept("alignment 2^31 without tensors", &b);
}

// one tensor info with the given fields, its data (data_size bytes) after padding to 32
static struct bytes one_tensor(const char * name, uint32_t n_dims, const int64_t * ne, int32_t type, uint64_t offset,
                               size_t data_size) {
    struct bytes b = { NULL, 0, 0 };
    bytes_header(&b, 3, 1, 0);
    bytes_tensor_info(&b, name, n_dims, ne, type, offset);
    bytes_pad(&b, 32);
    for (size_t k = 0; k < data_size; k++) {
        bytes_u8(&b, (uint8_t) k);
    }
    return b;
}

static void test_tensor_attacks(void) {
    const int64_t ne4[4] = { 4, 1, 1, 1 };
    struct bytes b = { NULL, 0, 0 };

    b = one_tensor("t", 1, ne4, GGML_TYPE_F32, 0, 16);
    expect_accept("a valid tensor", &b);
    b = one_tensor("t", 0, ne4, GGML_TYPE_F32, 0, 4);
    expect_accept("no dimensions (a scalar)", &b);
    const int64_t ne_zero[2] = { 0, 5 };
    b = one_tensor("t", 2, ne_zero, GGML_TYPE_F32, 0, 0);
    expect_accept("zero elements", &b);

    // the shape
    const int64_t ne5[5] = { 1, 1, 1, 1, 1 };
    b = one_tensor("t", 5, ne5, GGML_TYPE_F32, 0, 4);
    expect_reject("5 dimensions", &b);
    bytes_header(&b, 3, 1, 0); bytes_str(&b, "t"); bytes_u32(&b, 0xFFFFFFFFu);
    for (int k = 0; k < 8; k++) {
        bytes_i64(&b, 1);
    }
    expect_reject("2^32-1 dimensions", &b);
    const int64_t BAD_SHAPES[][4] = {
        { -1, 1, 1, 1 },
        { 4, INT64_MIN, 1, 1 },
        { (int64_t) 1 << 32, (int64_t) 1 << 32, 1, 1 },         // 2^64 elements
        { (int64_t) 1 << 62, 1, 1, 1 },                         // 2^64 bytes of f32
        { INT64_MAX, 1, 1, 1 },
        { 0, (int64_t) 1 << 62, (int64_t) 1 << 62, 1 },         // empty, but its rows overflow
        { 1 << 20, 1 << 20, 1 << 20, 1 << 20 },                 // 2^80 elements
        { 3, 3, 3, (int64_t) 1 << 61 },
    };
    for (size_t i = 0; i < sizeof(BAD_SHAPES) / sizeof(BAD_SHAPES[0]); i++) {
        b = one_tensor("t", 4, BAD_SHAPES[i], GGML_TYPE_F32, 0, 64);
        expect_reject("bad shape", &b);
    }

    // the type
    static const int32_t BAD_TYPES[] = { GGML_TYPE_COUNT, GGML_TYPE_COUNT + 1, 1000, -1, INT32_MIN, 4, 5, 31, 32, 33, 36, 37, 38 };
    const int64_t ne256[1] = { 256 };
    for (size_t i = 0; i < sizeof(BAD_TYPES) / sizeof(BAD_TYPES[0]); i++) {
        b = one_tensor("t", 1, ne256, BAD_TYPES[i], 0, 1024);
        expect_reject("invalid or removed type", &b);
    }
    const int64_t ne33[1] = { 33 };
    b = one_tensor("t", 1, ne33, GGML_TYPE_Q4_0, 0, 64);
    expect_reject("q4_0 row of 33 elements", &b);

    // the name
    char long_name[GGML_MAX_NAME + 1];
    memset(long_name, 'n', GGML_MAX_NAME);
    long_name[GGML_MAX_NAME] = '\0';
    b = one_tensor(long_name, 1, ne4, GGML_TYPE_F32, 0, 16);
    expect_reject("name of 64 bytes", &b);
    long_name[GGML_MAX_NAME - 1] = '\0';
    b = one_tensor(long_name, 1, ne4, GGML_TYPE_F32, 0, 16);
    expect_accept("name of 63 bytes", &b);
    bytes_header(&b, 3, 1, 0); bytes_u64(&b, 3); bytes_raw(&b, "a\0b", 3);
    bytes_u32(&b, 1); bytes_i64(&b, 4); bytes_i32(&b, GGML_TYPE_F32); bytes_u64(&b, 0); bytes_pad(&b, 32);
    bytes_raw(&b, long_name, 16);
    expect_reject("name with a NUL byte", &b);
    bytes_header(&b, 3, 1, 0); bytes_u64(&b, (uint64_t) 1 << 62);
    expect_reject("name of 2^62 bytes", &b);

    // the offset and the data
    b = one_tensor("t", 1, ne4, GGML_TYPE_F32, 4, 32);
    expect_reject("unaligned offset", &b);
    b = one_tensor("t", 1, ne4, GGML_TYPE_F32, 32, 64);
    expect_reject("offset after a gap", &b);
    b = one_tensor("t", 1, ne4, GGML_TYPE_F32, (uint64_t) 1 << 63, 16);
    expect_reject("offset 2^63", &b);
    b = one_tensor("t", 1, ne4, GGML_TYPE_F32, 0, 15);
    expect_meta_only("data one byte short", &b);
    const int64_t ne_big[1] = { 1 << 18 };
    b = one_tensor("t", 1, ne_big, GGML_TYPE_F32, 0, 100);
    expect_meta_only("1 MiB of data claimed, 100 bytes there", &b);
    b = one_tensor("t", 1, ne4, GGML_TYPE_F32, 0, 0);
    expect_meta_only("no data at all", &b);
    b = one_tensor("t", 1, ne4, GGML_TYPE_F32, 0, 16);
    b.n -= 20; // into the padding before the data
    expect_reject("the padding before the data cut", &b);
    b = one_tensor("t", 1, ne4, GGML_TYPE_F32, 0, 16 + 100);
    expect_accept("bytes after the data", &b);

    // two tensors: overlapping, swapped, duplicate names
    struct {
        const char * what;
        const char * name2;
        uint64_t     off1, off2;
        bool         ok;
    } pairs[] = {
        { "packed",            "u", 0,  32, true  },
        { "overlapping",       "u", 0,  0,  false },
        { "overlapping part",  "u", 0,  16, false },
        { "swapped",           "u", 32, 0,  false },
        { "duplicate name",    "t", 0,  32, false },
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        const int64_t ne8[1] = { 8 };
        b = (struct bytes) { NULL, 0, 0 };
        bytes_header(&b, 3, 2, 0);
        bytes_tensor_info(&b, "t", 1, ne8, GGML_TYPE_F32, pairs[i].off1);
        bytes_tensor_info(&b, pairs[i].name2, 1, ne8, GGML_TYPE_F32, pairs[i].off2);
        bytes_pad(&b, 32);
        for (int k = 0; k < 64; k++) {
            bytes_u8(&b, (uint8_t) k);
        }
        if (pairs[i].ok) {
            expect_accept(pairs[i].what, &b);
        } else {
            expect_reject(pairs[i].what, &b);
        }
    }
}

// Values much larger than the input, served by a callback that claims to be
// endless: the reader must fail when the data stops, having allocated in
// proportion to what arrived rather than to what was claimed.
static void test_endless_callback(void) {
    struct bytes b = one_kv("s", GGUF_TYPE_STRING);
    bytes_u64(&b, (uint64_t) 1 << 29);
    bytes_raw(&b, "abc", 3);
    struct short_source src = { .data = b.data, .size = b.n };
    g_log_errors = 0;
    CHECK(gguf_init_from_callback(short_read, &src, 0, UINT64_MAX, (struct gguf_init_params) { .no_alloc = false, .ctx = NULL }) == NULL);
    CHECK_EQ_INT(g_log_errors, 1);
    bytes_free(&b);

    b = one_kv("a", GGUF_TYPE_ARRAY);
    bytes_i32(&b, GGUF_TYPE_STRING);
    bytes_u64(&b, (uint64_t) 1 << 30);
    bytes_str(&b, "x");
    src = (struct short_source) { .data = b.data, .size = b.n };
    g_log_errors = 0;
    CHECK(gguf_init_from_callback(short_read, &src, 0, UINT64_MAX, (struct gguf_init_params) { .no_alloc = false, .ctx = NULL }) == NULL);
    CHECK_EQ_INT(g_log_errors, 1);
    bytes_free(&b);

    // a tensor of 2^40 bytes: the data section is probed before any memory is sized from it
    const int64_t ne[1] = { (int64_t) 1 << 38 };
    b = one_tensor("t", 1, ne, GGML_TYPE_F32, 0, 64);
    src = (struct short_source) { .data = b.data, .size = b.n };
    struct ggml_context * gctx = NULL;
    g_log_errors = 0;
    CHECK(gguf_init_from_callback(short_read, &src, 0, UINT64_MAX, (struct gguf_init_params) { .no_alloc = false, .ctx = &gctx }) == NULL);
    CHECK(gctx == NULL);
    CHECK_EQ_INT(g_log_errors, 1);
    bytes_free(&b);
}

int main(void) {
    ggml_log_set(count_log, NULL);

    struct valid_file f = make_valid_file();
    test_valid_file(&f);
    test_truncation(&f);
    test_truncation_lying_callback(&f);
    test_byte_flips(&f);
    test_header_attacks();
    test_kv_attacks();
    test_alignment_attacks();
    test_tensor_attacks();
    test_endless_callback();
    bytes_free(&f.b);

    ggml_log_set(NULL, NULL);
    return TEST_RESULT();
}
