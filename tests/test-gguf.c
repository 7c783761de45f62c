// test-gguf: GGUF reading and writing.
//
// Hand-made byte fixtures must parse to exactly the values written into
// them, and the writer must reproduce their bytes; contexts holding every
// value type, arrays of every element type and tensors of several types must
// survive round trips through a file, a FILE *, memory and a callback; the
// editing functions (replace-or-append, remove, copy, retyping, alignment)
// must give the offsets and orders computed here by hand.

#define _GNU_SOURCE

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "gguf.h"
#include "gguf-bytes.h"
#include "mapped-pages.h"
#include "test-backend.h"
#include "testing.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char * TMP_FILE = "test-gguf-tmp.gguf";

static size_t pad_to(size_t x, size_t align) {
    return (x + align - 1) / align * align;
}

static struct gguf_init_params params_with(struct ggml_context ** ctx, bool no_alloc) {
    struct gguf_init_params p = { .no_alloc = no_alloc, .ctx = ctx };
    return p;
}

static const struct gguf_init_params NO_CTX = { .no_alloc = false, .ctx = NULL };

//
// fixture 1: the smallest useful file, one key/value pair and one tensor
//

static const uint8_t FIXTURE_MIN[128] = {
    // 0: magic "GGUF"
    0x47, 0x47, 0x55, 0x46,
    // 4: version 3 (u32)
    0x03, 0x00, 0x00, 0x00,
    // 8: one tensor (i64)
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 16: one key/value pair (i64)
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 24: key length 5 (u64)
    0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 32: key "k.u32"
    'k', '.', 'u', '3', '2',
    // 37: value type 4 = GGUF_TYPE_UINT32 (i32)
    0x04, 0x00, 0x00, 0x00,
    // 41: value 0x12345678 (u32)
    0x78, 0x56, 0x34, 0x12,
    // 45: tensor name length 1 (u64)
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 53: tensor name "w"
    'w',
    // 54: two dimensions (u32)
    0x02, 0x00, 0x00, 0x00,
    // 58: ne[0] = 3 (i64)
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 66: ne[1] = 2 (i64)
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 74: type 0 = GGML_TYPE_F32 (i32)
    0x00, 0x00, 0x00, 0x00,
    // 78: data offset 0 (u64)
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 86: 10 bytes of padding: the data section starts at 96, a multiple of 32
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 96: the six f32 of w: 1.0, -2.0, 0.5, 3.0, 0.25, -1.5
    0x00, 0x00, 0x80, 0x3F,  0x00, 0x00, 0x00, 0xC0,  0x00, 0x00, 0x00, 0x3F,
    0x00, 0x00, 0x40, 0x40,  0x00, 0x00, 0x80, 0x3E,  0x00, 0x00, 0xC0, 0xBF,
    // 120: 8 bytes of padding after the tensor, to 128
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static void check_fixture_min_ctx(const struct gguf_context * ctx, uint32_t version) {
    CHECK_EQ_INT(gguf_get_version(ctx), version);
    CHECK_EQ_INT(gguf_get_alignment(ctx), 32);
    CHECK_EQ_INT(gguf_get_data_offset(ctx), 96);
    CHECK_EQ_INT(gguf_get_n_kv(ctx), 1);
    CHECK(strcmp(gguf_get_key(ctx, 0), "k.u32") == 0);
    CHECK_EQ_INT(gguf_find_key(ctx, "k.u32"), 0);
    CHECK_EQ_INT(gguf_find_key(ctx, "k.u3"), -1);
    CHECK_EQ_INT(gguf_get_kv_type(ctx, 0), GGUF_TYPE_UINT32);
    CHECK_EQ_INT(gguf_get_val_u32(ctx, 0), 0x12345678);
    CHECK_EQ_INT(gguf_get_arr_n(ctx, 0), 1);
    CHECK_EQ_INT(gguf_get_n_tensors(ctx), 1);
    CHECK_EQ_INT(gguf_find_tensor(ctx, "w"), 0);
    CHECK_EQ_INT(gguf_find_tensor(ctx, "v"), -1);
    CHECK(strcmp(gguf_get_tensor_name(ctx, 0), "w") == 0);
    CHECK_EQ_INT(gguf_get_tensor_type(ctx, 0), GGML_TYPE_F32);
    CHECK_EQ_INT(gguf_get_tensor_offset(ctx, 0), 0);
    CHECK_EQ_INT(gguf_get_tensor_size(ctx, 0), 24);
    const int64_t * ne = gguf_get_tensor_ne(ctx, 0);
    CHECK(ne[0] == 3 && ne[1] == 2 && ne[2] == 1 && ne[3] == 1);
}

static void test_fixture_min(void) {
    // with the data: the ggml context holds the blob, then w pointing into it
    struct ggml_context * gctx = NULL;
    struct gguf_context * ctx = gguf_init_from_buffer(FIXTURE_MIN, sizeof(FIXTURE_MIN), params_with(&gctx, false));
    CHECK(ctx != NULL && gctx != NULL);
    if (ctx == NULL || gctx == NULL) {
        return;
    }
    check_fixture_min_ctx(ctx, 3);

    struct ggml_tensor * blob = ggml_get_first_tensor(gctx);
    CHECK(blob != NULL && strcmp(blob->name, "GGUF tensor data binary blob") == 0);
    CHECK(blob != NULL && blob->type == GGML_TYPE_I8 && blob->ne[0] == 32);
    struct ggml_tensor * w = blob ? ggml_get_next_tensor(gctx, blob) : NULL;
    CHECK(w != NULL && w == ggml_get_tensor(gctx, "w"));
    if (w != NULL) {
        CHECK(w->type == GGML_TYPE_F32 && w->ne[0] == 3 && w->ne[1] == 2 && w->ne[2] == 1 && w->ne[3] == 1);
        CHECK(w->data == blob->data);
        const float expect[6] = { 1.0f, -2.0f, 0.5f, 3.0f, 0.25f, -1.5f };
        const float * got = (const float *) w->data;
        for (int i = 0; i < 6; i++) {
            CHECK_MSG(got[i] == expect[i], "w[%d] = %g, expected %g", i, (double) got[i], (double) expect[i]);
        }
        CHECK(ggml_get_next_tensor(gctx, w) == NULL);
    }
    // sized exactly: two tensor headers and the 32-byte blob
    CHECK_EQ_INT(ggml_get_mem_size(gctx), 2 * ggml_tensor_overhead() + 32);
    CHECK_EQ_INT(ggml_used_mem(gctx), ggml_get_mem_size(gctx));

    // the writer reproduces the metadata byte for byte ...
    CHECK_EQ_INT(gguf_get_meta_size(ctx), 96);
    uint8_t meta[96];
    gguf_get_meta_data(ctx, meta);
    CHECK(memcmp(meta, FIXTURE_MIN, sizeof(meta)) == 0);

    // ... and the whole file, once the tensor data is attached
    gguf_set_tensor_data(ctx, "w", w->data);
    CHECK(gguf_write_to_file(ctx, TMP_FILE, false));
    FILE * f = fopen(TMP_FILE, "rb");
    uint8_t file[256];
    const size_t n = f ? fread(file, 1, sizeof(file), f) : 0;
    if (f) {
        fclose(f);
    }
    CHECK_EQ_INT(n, sizeof(FIXTURE_MIN));
    CHECK(n == sizeof(FIXTURE_MIN) && memcmp(file, FIXTURE_MIN, n) == 0);
    gguf_free(ctx);
    ggml_free(gctx);

    // without the data: tensors have no memory and the context only their headers
    ctx = gguf_init_from_buffer(FIXTURE_MIN, sizeof(FIXTURE_MIN), params_with(&gctx, true));
    CHECK(ctx != NULL && gctx != NULL);
    if (ctx != NULL && gctx != NULL) {
        struct ggml_tensor * t = ggml_get_first_tensor(gctx);
        CHECK(t != NULL && strcmp(t->name, "w") == 0 && t->data == NULL && ggml_get_next_tensor(gctx, t) == NULL);
        CHECK_EQ_INT(ggml_get_mem_size(gctx), ggml_tensor_overhead());
    }
    gguf_free(ctx);
    ggml_free(gctx);

    // metadata only, from a file and without ggml context
    ctx = gguf_init_from_file(TMP_FILE, NO_CTX);
    CHECK(ctx != NULL);
    if (ctx != NULL) {
        check_fixture_min_ctx(ctx, 3);
    }
    gguf_free(ctx);

    // version 2 has the same layout and is still read; it is written back as 2
    uint8_t v2[sizeof(FIXTURE_MIN)];
    memcpy(v2, FIXTURE_MIN, sizeof(v2));
    v2[4] = 2;
    ctx = gguf_init_from_buffer(v2, sizeof(v2), NO_CTX);
    CHECK(ctx != NULL);
    if (ctx != NULL) {
        check_fixture_min_ctx(ctx, 2);
        gguf_get_meta_data(ctx, meta);
        CHECK(memcmp(meta, v2, sizeof(meta)) == 0);
    }
    gguf_free(ctx);
}

//
// fixture 2: alignment from general.alignment, bool and string arrays, a Q8_0 block
//

static const uint8_t FIXTURE_ARRAYS[208] = {
    // 0: magic "GGUF", version 3 (u32), one tensor (i64), three key/value pairs (i64)
    0x47, 0x47, 0x55, 0x46,  0x03, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 24: key length 17 (u64), key "general.alignment"
    0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    'g', 'e', 'n', 'e', 'r', 'a', 'l', '.', 'a', 'l', 'i', 'g', 'n', 'm', 'e', 'n', 't',
    // 49: type 4 = u32 (i32), value 8 (u32)
    0x04, 0x00, 0x00, 0x00,  0x08, 0x00, 0x00, 0x00,
    // 57: key length 1, key "b"
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  'b',
    // 66: type 9 = array (i32), element type 7 = bool (i32), 3 elements (u64)
    0x09, 0x00, 0x00, 0x00,  0x07, 0x00, 0x00, 0x00,
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 82: true, false, and 2 (any non-zero byte is true)
    0x01, 0x00, 0x02,
    // 85: key length 1, key "s"
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  's',
    // 94: type 9 = array, element type 8 = string, 2 elements
    0x09, 0x00, 0x00, 0x00,  0x08, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 110: the empty string (length 0), then "hi" (length 2)
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  'h', 'i',
    // 128: tensor name length 1, name "q"
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  'q',
    // 137: one dimension (u32), ne[0] = 32 (i64)
    0x01, 0x00, 0x00, 0x00,
    0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 149: type 8 = GGML_TYPE_Q8_0 (i32), data offset 0 (u64)
    0x08, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 161: 7 bytes of padding to 168, a multiple of the alignment 8
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    // 168: one Q8_0 block: scale d = 0.5 as f16 (0x3800), then qs[i] = i - 16 as int8
    0x00, 0x38,
    0xF0, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F,
    // 202: 6 bytes of padding after the tensor, to 208
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

static void test_fixture_arrays(void) {
    struct ggml_context * gctx = NULL;
    struct gguf_context * ctx = gguf_init_from_buffer(FIXTURE_ARRAYS, sizeof(FIXTURE_ARRAYS), params_with(&gctx, false));
    CHECK(ctx != NULL && gctx != NULL);
    if (ctx == NULL || gctx == NULL) {
        return;
    }
    CHECK_EQ_INT(gguf_get_alignment(ctx), 8);
    CHECK_EQ_INT(gguf_get_data_offset(ctx), 168);
    CHECK_EQ_INT(gguf_get_n_kv(ctx), 3);
    CHECK_EQ_INT(gguf_get_val_u32(ctx, 0), 8);

    CHECK_EQ_INT(gguf_find_key(ctx, "b"), 1);
    CHECK_EQ_INT(gguf_get_kv_type(ctx, 1), GGUF_TYPE_ARRAY);
    CHECK_EQ_INT(gguf_get_arr_type(ctx, 1), GGUF_TYPE_BOOL);
    CHECK_EQ_INT(gguf_get_arr_n(ctx, 1), 3);
    const uint8_t * b = (const uint8_t *) gguf_get_arr_data(ctx, 1);
    CHECK(b[0] == 1 && b[1] == 0 && b[2] == 1);

    CHECK_EQ_INT(gguf_get_kv_type(ctx, 2), GGUF_TYPE_ARRAY);
    CHECK_EQ_INT(gguf_get_arr_type(ctx, 2), GGUF_TYPE_STRING);
    CHECK_EQ_INT(gguf_get_arr_n(ctx, 2), 2);
    CHECK(strcmp(gguf_get_arr_str(ctx, 2, 0), "") == 0);
    CHECK(strcmp(gguf_get_arr_str(ctx, 2, 1), "hi") == 0);

    CHECK_EQ_INT(gguf_get_n_tensors(ctx), 1);
    CHECK_EQ_INT(gguf_get_tensor_type(ctx, 0), GGML_TYPE_Q8_0);
    CHECK_EQ_INT(gguf_get_tensor_size(ctx, 0), 34);
    struct ggml_tensor * q = ggml_get_tensor(gctx, "q");
    CHECK(q != NULL);
    if (q != NULL) {
        const uint8_t * raw = (const uint8_t *) q->data;
        uint16_t d; // the scale, in host order once loaded
        memcpy(&d, raw, sizeof(d));
        CHECK(d == 0x3800);
        for (int i = 0; i < 32; i++) {
            CHECK_EQ_INT((int8_t) raw[2 + i], i - 16);
        }
        // the block decodes to 0.5 * (i - 16)
        float deq[32];
        ggml_get_type_traits(GGML_TYPE_Q8_0)->to_float(q->data, deq, 32);
        for (int i = 0; i < 32; i++) {
            CHECK_NEAR(deq[i], 0.5 * (i - 16), 0.0);
        }
    }

    // written back: the same bytes, but the bool 2 comes out as 1
    uint8_t expect[168];
    memcpy(expect, FIXTURE_ARRAYS, sizeof(expect));
    expect[84] = 0x01;
    CHECK_EQ_INT(gguf_get_meta_size(ctx), 168);
    uint8_t meta[168];
    gguf_get_meta_data(ctx, meta);
    CHECK(memcmp(meta, expect, sizeof(meta)) == 0);

    gguf_free(ctx);
    ggml_free(gctx);
}

// an empty context is a 24-byte header padded to 32; read back, its data section starts at 24
static void test_empty_context(void) {
    struct gguf_context * ctx = gguf_init_empty();
    CHECK_EQ_INT(gguf_get_version(ctx), 3);
    CHECK_EQ_INT(gguf_get_alignment(ctx), 32);
    CHECK_EQ_INT(gguf_get_n_kv(ctx), 0);
    CHECK_EQ_INT(gguf_get_n_tensors(ctx), 0);
    CHECK_EQ_INT(gguf_get_meta_size(ctx), 32);
    uint8_t meta[32];
    gguf_get_meta_data(ctx, meta);
    static const uint8_t expect[32] = {
        'G', 'G', 'U', 'F',  3, 0, 0, 0,  0, 0, 0, 0, 0, 0, 0, 0,  0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, // padding
    };
    CHECK(memcmp(meta, expect, sizeof(meta)) == 0);
    gguf_free(ctx);

    struct ggml_context * gctx = NULL;
    ctx = gguf_init_from_buffer(expect, 24, params_with(&gctx, false));
    CHECK(ctx != NULL && gctx != NULL);
    if (ctx != NULL) {
        CHECK_EQ_INT(gguf_get_data_offset(ctx), 24);
        CHECK_EQ_INT(gguf_get_n_tensors(ctx), 0);
    }
    gguf_free(ctx);
    ggml_free(gctx);
}

//
// round trips of every value type and of tensors
//

enum { N_FIXED_TYPES = 11 };

static const enum gguf_type FIXED_TYPES[N_FIXED_TYPES] = {
    GGUF_TYPE_UINT8, GGUF_TYPE_INT8, GGUF_TYPE_UINT16, GGUF_TYPE_INT16, GGUF_TYPE_UINT32, GGUF_TYPE_INT32,
    GGUF_TYPE_FLOAT32, GGUF_TYPE_BOOL, GGUF_TYPE_UINT64, GGUF_TYPE_INT64, GGUF_TYPE_FLOAT64,
};

static const size_t FIXED_SIZES[N_FIXED_TYPES] = { 1, 1, 2, 2, 4, 4, 4, 1, 8, 8, 8 };

static const size_t ARRAY_LENGTHS[] = { 0, 1, 7, 33 };
#define N_ARRAY_LENGTHS (sizeof(ARRAY_LENGTHS) / sizeof(ARRAY_LENGTHS[0]))

// deterministic element bytes for array (t, l); bools are 0 or 1
static void array_bytes(int t, size_t l, uint8_t * out, size_t nbytes) {
    for (size_t k = 0; k < nbytes; k++) {
        out[k] = FIXED_TYPES[t] == GGUF_TYPE_BOOL ? (uint8_t)((k + l) % 3 == 0) : (uint8_t)(k * 131 + (size_t) t * 7 + l + 1);
    }
}

static const char * STRINGS[] = { "", "a", "a longer string, with spaces", "\xc3\xbcn\xc3\xaf\x63\xc3\xb8\x64\xc3\xa9", "x" };

struct tensor_spec {
    const char *   name;
    enum ggml_type type;
    int64_t        ne[4];
    size_t         nbytes; // computed by hand from the block layout
};

static const struct tensor_spec TENSORS[] = {
    { "t.f32",  GGML_TYPE_F32,  { 7, 5, 3, 1 },  7 * 5 * 3 * 4 },
    { "t.f16",  GGML_TYPE_F16,  { 33, 1, 1, 1 }, 33 * 2 },
    { "t.bf16", GGML_TYPE_BF16, { 1, 1, 1, 1 },  2 },
    { "t.q4_0", GGML_TYPE_Q4_0, { 64, 3, 1, 1 }, 2 * 3 * 18 },
    { "t.q8_0", GGML_TYPE_Q8_0, { 32, 7, 2, 1 }, 7 * 2 * 34 },
    { "t.i32",  GGML_TYPE_I32,  { 257, 1, 1, 1 }, 257 * 4 },
    { "t.i8",   GGML_TYPE_I8,   { 5, 1, 1, 2 },  10 },
    { "t.q4_k", GGML_TYPE_Q4_K, { 256, 2, 1, 1 }, 2 * 144 },
    { "t.f64",  GGML_TYPE_F64,  { 3, 1, 1, 1 },  24 },
};
#define N_TENSORS (sizeof(TENSORS) / sizeof(TENSORS[0]))

static uint8_t tensor_byte(size_t i, size_t k) {
    return (uint8_t)(k * 17 + i * 29 + 3);
}

static void key_name(char * buf, size_t size, const char * what, int t, size_t l) {
    snprintf(buf, size, "test.%s.%d.%zu", what, t, l);
}

// the scalar values, one per type, at the extremes of their ranges
static const uint8_t  V_U8   = 255;
static const int8_t   V_I8   = -128;
static const uint16_t V_U16  = 65535;
static const int16_t  V_I16  = -32768;
static const uint32_t V_U32  = 4000000000u;
static const int32_t  V_I32  = INT32_MIN;
static const float    V_F32  = -3.25f;
static const uint64_t V_U64  = UINT64_MAX - 1;
static const int64_t  V_I64  = INT64_MIN + 1;
static const double   V_F64  = 3.141592653589793;
static const char *   V_STR  = "h\xc3\xa9llo w\xc3\xb6rld";

static void fill_context(struct gguf_context * ctx) {
    gguf_set_val_u8  (ctx, "s.u8",  V_U8);
    gguf_set_val_i8  (ctx, "s.i8",  V_I8);
    gguf_set_val_u16 (ctx, "s.u16", V_U16);
    gguf_set_val_i16 (ctx, "s.i16", V_I16);
    gguf_set_val_u32 (ctx, "s.u32", V_U32);
    gguf_set_val_i32 (ctx, "s.i32", V_I32);
    gguf_set_val_f32 (ctx, "s.f32", V_F32);
    gguf_set_val_u64 (ctx, "s.u64", V_U64);
    gguf_set_val_i64 (ctx, "s.i64", V_I64);
    gguf_set_val_f64 (ctx, "s.f64", V_F64);
    gguf_set_val_bool(ctx, "s.true",  true);
    gguf_set_val_bool(ctx, "s.false", false);
    gguf_set_val_str (ctx, "s.str",   V_STR);
    gguf_set_val_str (ctx, "s.empty", "");

    for (int t = 0; t < N_FIXED_TYPES; t++) {
        for (size_t li = 0; li < N_ARRAY_LENGTHS; li++) {
            const size_t l = ARRAY_LENGTHS[li];
            uint8_t data[33 * 8];
            array_bytes(t, l, data, l * FIXED_SIZES[t]);
            char key[64];
            key_name(key, sizeof(key), "arr", t, l);
            gguf_set_arr_data(ctx, key, FIXED_TYPES[t], data, l);
        }
    }
    for (size_t l = 0; l <= 5; l++) {
        char key[64];
        key_name(key, sizeof(key), "strs", 0, l);
        gguf_set_arr_str(ctx, key, STRINGS, l);
    }
}

#define N_KEYS_FILLED (14 + N_FIXED_TYPES * N_ARRAY_LENGTHS + 6)

// where fill_context's keys are: from first on, n_kv keys in all
struct key_layout {
    int64_t first;
    int64_t n_kv;
};

static void check_context_values(const struct gguf_context * ctx, struct key_layout keys) {
    CHECK_EQ_INT(gguf_get_n_kv(ctx), keys.n_kv);
    int64_t id = keys.first;
    CHECK(gguf_find_key(ctx, "s.u8") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_UINT8 && gguf_get_val_u8(ctx, id) == V_U8); id++;
    CHECK(gguf_find_key(ctx, "s.i8") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_INT8 && gguf_get_val_i8(ctx, id) == V_I8); id++;
    CHECK(gguf_find_key(ctx, "s.u16") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_UINT16 && gguf_get_val_u16(ctx, id) == V_U16); id++;
    CHECK(gguf_find_key(ctx, "s.i16") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_INT16 && gguf_get_val_i16(ctx, id) == V_I16); id++;
    CHECK(gguf_find_key(ctx, "s.u32") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_UINT32 && gguf_get_val_u32(ctx, id) == V_U32); id++;
    CHECK(gguf_find_key(ctx, "s.i32") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_INT32 && gguf_get_val_i32(ctx, id) == V_I32); id++;
    CHECK(gguf_find_key(ctx, "s.f32") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_FLOAT32 && gguf_get_val_f32(ctx, id) == V_F32); id++;
    CHECK(gguf_find_key(ctx, "s.u64") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_UINT64 && gguf_get_val_u64(ctx, id) == V_U64); id++;
    CHECK(gguf_find_key(ctx, "s.i64") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_INT64 && gguf_get_val_i64(ctx, id) == V_I64); id++;
    CHECK(gguf_find_key(ctx, "s.f64") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_FLOAT64 && gguf_get_val_f64(ctx, id) == V_F64); id++;
    CHECK(gguf_find_key(ctx, "s.true") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_BOOL && gguf_get_val_bool(ctx, id)); id++;
    CHECK(gguf_find_key(ctx, "s.false") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_BOOL && !gguf_get_val_bool(ctx, id)); id++;
    CHECK(gguf_find_key(ctx, "s.str") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_STRING && strcmp(gguf_get_val_str(ctx, id), V_STR) == 0); id++;
    CHECK(gguf_find_key(ctx, "s.empty") == id && gguf_get_kv_type(ctx, id) == GGUF_TYPE_STRING && strcmp(gguf_get_val_str(ctx, id), "") == 0); id++;

    // the value bytes behind gguf_get_val_data
    const uint64_t u64 = V_U64;
    CHECK(memcmp(gguf_get_val_data(ctx, gguf_find_key(ctx, "s.u64")), &u64, 8) == 0);

    for (int t = 0; t < N_FIXED_TYPES; t++) {
        for (size_t li = 0; li < N_ARRAY_LENGTHS; li++, id++) {
            const size_t l = ARRAY_LENGTHS[li];
            char key[64];
            key_name(key, sizeof(key), "arr", t, l);
            uint8_t expect[33 * 8];
            array_bytes(t, l, expect, l * FIXED_SIZES[t]);
            CHECK_MSG(gguf_find_key(ctx, key) == id, "%s", key);
            CHECK(strcmp(gguf_get_key(ctx, id), key) == 0);
            CHECK(gguf_get_kv_type(ctx, id) == GGUF_TYPE_ARRAY);
            CHECK(gguf_get_arr_type(ctx, id) == FIXED_TYPES[t]);
            CHECK_EQ_INT(gguf_get_arr_n(ctx, id), l);
            CHECK_MSG(l == 0 || memcmp(gguf_get_arr_data(ctx, id), expect, l * FIXED_SIZES[t]) == 0, "%s", key);
        }
    }
    for (size_t l = 0; l <= 5; l++, id++) {
        char key[64];
        key_name(key, sizeof(key), "strs", 0, l);
        CHECK_MSG(gguf_find_key(ctx, key) == id, "%s", key);
        CHECK(gguf_get_kv_type(ctx, id) == GGUF_TYPE_ARRAY && gguf_get_arr_type(ctx, id) == GGUF_TYPE_STRING);
        CHECK_EQ_INT(gguf_get_arr_n(ctx, id), l);
        for (size_t i = 0; i < l && i < gguf_get_arr_n(ctx, id); i++) {
            CHECK(strcmp(gguf_get_arr_str(ctx, id, i), STRINGS[i]) == 0);
        }
    }
}

// tensors of TENSORS in a ggml context, filled with tensor_byte
static struct ggml_context * make_tensors(void) {
    struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * gctx = ggml_init(ip);
    for (size_t i = 0; i < N_TENSORS; i++) {
        struct ggml_tensor * t = ggml_new_tensor(gctx, TENSORS[i].type, 4, TENSORS[i].ne);
        ggml_set_name(t, TENSORS[i].name);
        CHECK_EQ_INT(ggml_nbytes(t), TENSORS[i].nbytes);
        for (size_t k = 0; k < TENSORS[i].nbytes; k++) {
            ((uint8_t *) t->data)[k] = tensor_byte(i, k);
        }
    }
    return gctx;
}

static void add_tensors(struct gguf_context * ctx, struct ggml_context * gctx) {
    for (struct ggml_tensor * t = ggml_get_first_tensor(gctx); t != NULL; t = ggml_get_next_tensor(gctx, t)) {
        gguf_add_tensor(ctx, t);
    }
}

// offset of tensor i for this alignment, from the hand-computed sizes
static size_t expected_offset(size_t i, size_t align) {
    size_t offset = 0;
    for (size_t j = 0; j < i; j++) {
        offset += pad_to(TENSORS[j].nbytes, align);
    }
    return offset;
}

static void check_tensor_infos(const struct gguf_context * ctx, size_t align) {
    CHECK_EQ_INT(gguf_get_n_tensors(ctx), N_TENSORS);
    for (size_t i = 0; i < N_TENSORS && (int64_t) i < gguf_get_n_tensors(ctx); i++) {
        CHECK_EQ_INT(gguf_find_tensor(ctx, TENSORS[i].name), i);
        CHECK(strcmp(gguf_get_tensor_name(ctx, i), TENSORS[i].name) == 0);
        CHECK_EQ_INT(gguf_get_tensor_type(ctx, i), TENSORS[i].type);
        CHECK_EQ_INT(gguf_get_tensor_size(ctx, i), TENSORS[i].nbytes);
        CHECK_EQ_INT(gguf_get_tensor_offset(ctx, i), expected_offset(i, align));
        const int64_t * ne = gguf_get_tensor_ne(ctx, i);
        for (int j = 0; j < 4; j++) {
            CHECK_EQ_INT(ne[j], TENSORS[i].ne[j]);
        }
    }
}

static void check_tensor_data(struct ggml_context * gctx, size_t align) {
    struct ggml_tensor * blob = ggml_get_first_tensor(gctx);
    CHECK(blob != NULL && strcmp(blob->name, "GGUF tensor data binary blob") == 0);
    if (blob == NULL) {
        return;
    }
    CHECK_EQ_INT(blob->ne[0], expected_offset(N_TENSORS, align));
    size_t i = 0;
    for (struct ggml_tensor * t = ggml_get_next_tensor(gctx, blob); t != NULL; t = ggml_get_next_tensor(gctx, t), i++) {
        CHECK(i < N_TENSORS);
        if (i >= N_TENSORS) {
            break;
        }
        CHECK(strcmp(t->name, TENSORS[i].name) == 0 && t->type == TENSORS[i].type);
        CHECK_EQ_INT(ggml_nbytes(t), TENSORS[i].nbytes);
        CHECK((uint8_t *) t->data == (uint8_t *) blob->data + expected_offset(i, align));
        bool same = true;
        for (size_t k = 0; k < TENSORS[i].nbytes; k++) {
            same = same && ((const uint8_t *) t->data)[k] == tensor_byte(i, k);
        }
        CHECK_MSG(same, "data of %s", TENSORS[i].name);
    }
    CHECK_EQ_INT(i, N_TENSORS);
    CHECK_EQ_INT(ggml_get_mem_size(gctx), (N_TENSORS + 1) * ggml_tensor_overhead() + pad_to(expected_offset(N_TENSORS, align), 16));
    CHECK_EQ_INT(ggml_used_mem(gctx), ggml_get_mem_size(gctx));
}

static void check_read(struct gguf_context * ctx, struct ggml_context * gctx, size_t align, struct key_layout keys,
                       const char * how) {
    CHECK_MSG(ctx != NULL && gctx != NULL, "reading %s", how);
    if (ctx == NULL || gctx == NULL) {
        return;
    }
    CHECK_EQ_INT(gguf_get_alignment(ctx), align);
    CHECK_EQ_INT(gguf_get_data_offset(ctx) % align, 0);
    check_context_values(ctx, keys);
    check_tensor_infos(ctx, align);
    check_tensor_data(gctx, align);
}

// the whole file in memory: the metadata, then the data as laid out by hand
// tensor i's data as a file holds it: tensor_byte is the data in host order,
// and files are little-endian (a big-endian host converts); malloc'ed
static uint8_t * tensor_file_bytes(size_t i) {
    uint8_t * b = (uint8_t *) malloc(TENSORS[i].nbytes + 1);
    for (size_t k = 0; k < TENSORS[i].nbytes; k++) {
        b[k] = tensor_byte(i, k);
    }
    CHECK(gguf_tensor_data_to_host(TENSORS[i].name, TENSORS[i].type, b, TENSORS[i].nbytes));
    return b;
}

static uint8_t * file_in_memory(const struct gguf_context * ctx, size_t align, size_t * size) {
    const size_t meta = gguf_get_meta_size(ctx);
    const size_t data = expected_offset(N_TENSORS, align);
    uint8_t * buf = (uint8_t *) calloc(1, meta + data);
    gguf_get_meta_data(ctx, buf);
    for (size_t i = 0; i < N_TENSORS; i++) {
        uint8_t * bytes = tensor_file_bytes(i);
        memcpy(buf + meta + expected_offset(i, align), bytes, TENSORS[i].nbytes);
        free(bytes);
    }
    *size = meta + data;
    return buf;
}

struct chunked_source {
    const uint8_t * data;
    size_t size;
    size_t max_len; // the largest read seen
};

static size_t chunked_read(void * userdata, void * output, uint64_t offset, size_t len) {
    struct chunked_source * src = (struct chunked_source *) userdata;
    if (len > src->max_len) {
        src->max_len = len;
    }
    if (offset >= src->size) {
        return 0;
    }
    const size_t n = len < src->size - offset ? len : src->size - (size_t) offset;
    memcpy(output, src->data + offset, n);
    return n;
}

static size_t file_size(const char * name) {
    FILE * f = fopen(name, "rb");
    if (f == NULL) {
        return 0;
    }
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fclose(f);
    return n < 0 ? 0 : (size_t) n;
}

// align_first: general.alignment is set before anything else, otherwise
// last, after the tensors, whose offsets must then follow
static void roundtrip(size_t align, bool align_first) {
    struct ggml_context * src_tensors = make_tensors();
    struct gguf_context * ctx = gguf_init_empty();
    const bool custom = align != GGUF_DEFAULT_ALIGNMENT;
    if (custom && align_first) {
        gguf_set_val_u32(ctx, GGUF_KEY_GENERAL_ALIGNMENT, (uint32_t) align);
    }
    fill_context(ctx);
    add_tensors(ctx, src_tensors);
    if (custom && !align_first) {
        gguf_set_val_u32(ctx, GGUF_KEY_GENERAL_ALIGNMENT, (uint32_t) align);
    }
    const struct key_layout keys = {
        .first = custom && align_first ? 1 : 0,
        .n_kv  = (int64_t) N_KEYS_FILLED + (custom ? 1 : 0),
    };
    CHECK_EQ_INT(gguf_get_alignment(ctx), align);
    check_context_values(ctx, keys);
    check_tensor_infos(ctx, align);

    // a file, read by name, by FILE *, and for its metadata alone
    CHECK(gguf_write_to_file(ctx, TMP_FILE, false));
    const size_t meta_size = gguf_get_meta_size(ctx);
    CHECK_EQ_INT(meta_size % align, 0);
    CHECK_EQ_INT(file_size(TMP_FILE), meta_size + expected_offset(N_TENSORS, align));

    struct ggml_context * gctx = NULL;
    struct gguf_context * back = gguf_init_from_file(TMP_FILE, params_with(&gctx, false));
    check_read(back, gctx, align, keys, "a file");
    CHECK(back == NULL || gguf_get_data_offset(back) == meta_size);
    gguf_free(back);
    ggml_free(gctx);

    FILE * f = fopen(TMP_FILE, "rb");
    back = gguf_init_from_file_ptr(f, params_with(&gctx, false));
    check_read(back, gctx, align, keys, "a FILE *");
    fclose(f);
    gguf_free(back);
    ggml_free(gctx);

    back = gguf_init_from_file(TMP_FILE, NO_CTX);
    CHECK(back != NULL);
    if (back != NULL) {
        check_context_values(back, keys);
        check_tensor_infos(back, align);
    }
    gguf_free(back);

    // the metadata with the data appended by hand, from memory and through a callback
    size_t size;
    uint8_t * buf = file_in_memory(ctx, align, &size);
    back = gguf_init_from_buffer(buf, size, params_with(&gctx, false));
    check_read(back, gctx, align, keys, "memory");
    gguf_free(back);
    ggml_free(gctx);

    struct chunked_source src = { .data = buf, .size = size, .max_len = 0 };
    back = gguf_init_from_callback(chunked_read, &src, 7, size, params_with(&gctx, false));
    check_read(back, gctx, align, keys, "a callback");
    CHECK_EQ_INT(src.max_len, 7);
    gguf_free(back);
    ggml_free(gctx);

    // the same bytes as the file
    f = fopen(TMP_FILE, "rb");
    uint8_t * file = (uint8_t *) malloc(size);
    CHECK(f != NULL && fread(file, 1, size, f) == size && memcmp(file, buf, size) == 0);
    if (f) {
        fclose(f);
    }
    free(file);

    // only the tensor headers in a no_alloc context, sized exactly
    back = gguf_init_from_buffer(buf, size, params_with(&gctx, true));
    CHECK(back != NULL && gctx != NULL);
    if (gctx != NULL) {
        size_t i = 0;
        for (struct ggml_tensor * t = ggml_get_first_tensor(gctx); t != NULL; t = ggml_get_next_tensor(gctx, t), i++) {
            CHECK(i < N_TENSORS && strcmp(t->name, TENSORS[i].name) == 0 && t->data == NULL);
        }
        CHECK_EQ_INT(i, N_TENSORS);
        CHECK_EQ_INT(ggml_get_mem_size(gctx), N_TENSORS * ggml_tensor_overhead());
    }
    gguf_free(back);
    ggml_free(gctx);
    free(buf);

    // only_meta, then the data appended to the file by hand
    CHECK(gguf_write_to_file(ctx, TMP_FILE, true));
    CHECK_EQ_INT(file_size(TMP_FILE), meta_size);
    f = fopen(TMP_FILE, "ab");
    for (size_t i = 0; i < N_TENSORS; i++) {
        uint8_t * bytes = tensor_file_bytes(i);
        for (size_t k = 0; k < pad_to(TENSORS[i].nbytes, align); k++) {
            fputc(k < TENSORS[i].nbytes ? bytes[k] : 0, f);
        }
        free(bytes);
    }
    fclose(f);
    back = gguf_init_from_file(TMP_FILE, params_with(&gctx, false));
    check_read(back, gctx, align, keys, "only_meta + appended data");
    gguf_free(back);
    ggml_free(gctx);

    gguf_free(ctx);
    ggml_free(src_tensors);
}

//
// editing
//

static void test_replace_and_remove(void) {
    struct gguf_context * ctx = gguf_init_empty();
    gguf_set_val_u8(ctx, "k", 1);
    gguf_set_val_u8(ctx, "j", 2);
    gguf_set_val_u8(ctx, "i", 3);
    gguf_set_val_f32(ctx, "k", 0.5f); // replaced: now last, with its new type
    CHECK_EQ_INT(gguf_get_n_kv(ctx), 3);
    CHECK(strcmp(gguf_get_key(ctx, 0), "j") == 0 && strcmp(gguf_get_key(ctx, 1), "i") == 0);
    CHECK(strcmp(gguf_get_key(ctx, 2), "k") == 0 && gguf_get_kv_type(ctx, 2) == GGUF_TYPE_FLOAT32);
    CHECK(gguf_get_val_f32(ctx, 2) == 0.5f);

    // a key given by a pointer into the context itself
    gguf_set_val_str(ctx, gguf_get_key(ctx, 0), "now a string");
    CHECK(strcmp(gguf_get_key(ctx, 2), "j") == 0 && strcmp(gguf_get_val_str(ctx, 2), "now a string") == 0);
    gguf_set_val_str(ctx, "j", gguf_get_val_str(ctx, 2));
    CHECK(strcmp(gguf_get_val_str(ctx, 2), "now a string") == 0);

    CHECK_EQ_INT(gguf_remove_key(ctx, "i"), 0);
    CHECK_EQ_INT(gguf_remove_key(ctx, "i"), -1);
    CHECK_EQ_INT(gguf_remove_key(ctx, "absent"), -1);
    CHECK_EQ_INT(gguf_get_n_kv(ctx), 2);
    CHECK(strcmp(gguf_get_key(ctx, 0), "k") == 0 && strcmp(gguf_get_key(ctx, 1), "j") == 0);
    CHECK_EQ_INT(gguf_find_key(ctx, "j"), 1);
    gguf_free(ctx);
}

static void test_set_kv(void) {
    struct gguf_context * src = gguf_init_empty();
    gguf_set_val_u32(src, "x", 7);
    gguf_set_val_str(src, "y", "from src");
    const float f[3] = { 1.5f, -2.5f, 4.0f };
    gguf_set_arr_data(src, "z", GGUF_TYPE_FLOAT32, f, 3);
    const char * strs[2] = { "p", "qq" };
    gguf_set_arr_str(src, "v", strs, 2);

    struct gguf_context * dst = gguf_init_empty();
    gguf_set_val_i8(dst, "y", -1);
    gguf_set_val_bool(dst, "w", true);
    gguf_set_kv(dst, src);
    gguf_free(src); // the values were copied

    // w stays first; x, y, z, v follow in the order of src
    CHECK_EQ_INT(gguf_get_n_kv(dst), 5);
    const char * order[5] = { "w", "x", "y", "z", "v" };
    for (int i = 0; i < 5; i++) {
        CHECK_MSG(strcmp(gguf_get_key(dst, i), order[i]) == 0, "key %d", i);
    }
    CHECK(gguf_get_val_bool(dst, 0));
    CHECK_EQ_INT(gguf_get_val_u32(dst, 1), 7);
    CHECK(gguf_get_kv_type(dst, 2) == GGUF_TYPE_STRING && strcmp(gguf_get_val_str(dst, 2), "from src") == 0);
    CHECK(gguf_get_arr_type(dst, 3) == GGUF_TYPE_FLOAT32 && gguf_get_arr_n(dst, 3) == 3);
    CHECK(memcmp(gguf_get_arr_data(dst, 3), f, sizeof(f)) == 0);
    CHECK(gguf_get_arr_n(dst, 4) == 2 && strcmp(gguf_get_arr_str(dst, 4, 1), "qq") == 0);

    gguf_set_kv(dst, dst); // copying a context into itself changes nothing
    CHECK_EQ_INT(gguf_get_n_kv(dst), 5);
    CHECK(strcmp(gguf_get_key(dst, 0), "w") == 0);
    gguf_free(dst);
}

// retyping a tensor moves the offsets of those after it
static void test_set_tensor_type(void) {
    struct ggml_init_params ip = { .mem_size = 1 << 16, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * gctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, 64, 3);  // 768 bytes
    struct ggml_tensor * b = ggml_new_tensor_1d(gctx, GGML_TYPE_F32, 64);     // 256 bytes
    struct ggml_tensor * c = ggml_new_tensor_1d(gctx, GGML_TYPE_F32, 33);     // 132 bytes
    ggml_set_name(a, "a");
    ggml_set_name(b, "b");
    ggml_set_name(c, "c");
    struct gguf_context * ctx = gguf_init_empty();
    gguf_add_tensor(ctx, a);
    gguf_add_tensor(ctx, b);
    gguf_add_tensor(ctx, c);
    CHECK(gguf_get_tensor_offset(ctx, 0) == 0 && gguf_get_tensor_offset(ctx, 1) == 768 && gguf_get_tensor_offset(ctx, 2) == 1024);

    // a as Q8_0: 3 rows of 2 blocks of 34 bytes = 204, padded to 224
    gguf_set_tensor_type(ctx, "a", GGML_TYPE_Q8_0);
    CHECK_EQ_INT(gguf_get_tensor_type(ctx, 0), GGML_TYPE_Q8_0);
    CHECK_EQ_INT(gguf_get_tensor_size(ctx, 0), 204);
    CHECK_EQ_INT(gguf_get_tensor_offset(ctx, 1), 224);
    CHECK_EQ_INT(gguf_get_tensor_offset(ctx, 2), 224 + 256);

    // b as Q4_0: 2 blocks of 18 bytes = 36, padded to 64
    gguf_set_tensor_type(ctx, "b", GGML_TYPE_Q4_0);
    CHECK_EQ_INT(gguf_get_tensor_size(ctx, 1), 36);
    CHECK_EQ_INT(gguf_get_tensor_offset(ctx, 1), 224);
    CHECK_EQ_INT(gguf_get_tensor_offset(ctx, 2), 288);

    // a larger alignment moves everything: 204 -> 256, 36 -> 64
    gguf_set_val_u32(ctx, GGUF_KEY_GENERAL_ALIGNMENT, 64);
    CHECK_EQ_INT(gguf_get_alignment(ctx), 64);
    CHECK_EQ_INT(gguf_get_tensor_offset(ctx, 1), 256);
    CHECK_EQ_INT(gguf_get_tensor_offset(ctx, 2), 320);
    // and removing the key restores the default
    CHECK_EQ_INT(gguf_remove_key(ctx, GGUF_KEY_GENERAL_ALIGNMENT), 0);
    CHECK_EQ_INT(gguf_get_alignment(ctx), 32);
    CHECK_EQ_INT(gguf_get_tensor_offset(ctx, 2), 288);

    // new data of the new sizes, written and read back
    uint8_t qa[204], qb[36];
    for (size_t k = 0; k < sizeof(qa); k++) {
        qa[k] = (uint8_t)(k * 7 + 1);
    }
    for (size_t k = 0; k < sizeof(qb); k++) {
        qb[k] = (uint8_t)(k * 5 + 2);
    }
    for (int k = 0; k < 33; k++) {
        ((float *) c->data)[k] = (float) k - 16.5f;
    }
    gguf_set_tensor_data(ctx, "a", qa);
    gguf_set_tensor_data(ctx, "b", qb);
    CHECK(gguf_write_to_file(ctx, TMP_FILE, false));
    CHECK_EQ_INT(file_size(TMP_FILE), gguf_get_meta_size(ctx) + 288 + 160);

    struct ggml_context * rctx = NULL;
    struct gguf_context * back = gguf_init_from_file(TMP_FILE, params_with(&rctx, false));
    CHECK(back != NULL && rctx != NULL);
    if (rctx != NULL) {
        struct ggml_tensor * ra = ggml_get_tensor(rctx, "a");
        struct ggml_tensor * rb = ggml_get_tensor(rctx, "b");
        struct ggml_tensor * rc = ggml_get_tensor(rctx, "c");
        CHECK(ra && ra->type == GGML_TYPE_Q8_0 && memcmp(ra->data, qa, sizeof(qa)) == 0);
        CHECK(rb && rb->type == GGML_TYPE_Q4_0 && memcmp(rb->data, qb, sizeof(qb)) == 0);
        CHECK(rc && rc->type == GGML_TYPE_F32 && ((float *) rc->data)[32] == 15.5f);
    }
    gguf_free(back);
    ggml_free(rctx);
    gguf_free(ctx);
    ggml_free(gctx);
}

// An empty tensor keeps its trailing zero dimensions when written (ggml_n_dims
// would drop them, and the tensor would read back with 8 elements).
static void test_empty_tensor(void) {
    struct ggml_init_params ip = { .mem_size = 1 << 12, .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * gctx = ggml_init(ip);
    struct ggml_tensor * e = ggml_new_tensor_3d(gctx, GGML_TYPE_F32, 8, 0, 0);
    struct ggml_tensor * f = ggml_new_tensor_1d(gctx, GGML_TYPE_F32, 2);
    ggml_set_name(e, "e");
    ggml_set_name(f, "f");
    struct gguf_context * ctx = gguf_init_empty();
    gguf_add_tensor(ctx, e);
    gguf_add_tensor(ctx, f);
    CHECK_EQ_INT(gguf_get_tensor_size(ctx, 0), 0);
    CHECK_EQ_INT(gguf_get_tensor_offset(ctx, 1), 0);

    struct bytes expect = { NULL, 0, 0 };
    bytes_header(&expect, 3, 2, 0);
    const int64_t ne_e[3] = { 8, 0, 0 };
    const int64_t ne_f[1] = { 2 };
    bytes_tensor_info(&expect, "e", 3, ne_e, GGML_TYPE_F32, 0);
    bytes_tensor_info(&expect, "f", 1, ne_f, GGML_TYPE_F32, 0);
    bytes_pad(&expect, 32);
    CHECK_EQ_INT(gguf_get_meta_size(ctx), expect.n);
    uint8_t * meta = (uint8_t *) malloc(gguf_get_meta_size(ctx));
    gguf_get_meta_data(ctx, meta);
    CHECK(gguf_get_meta_size(ctx) == expect.n && memcmp(meta, expect.data, expect.n) == 0);

    struct gguf_context * back = gguf_init_from_buffer(meta, gguf_get_meta_size(ctx), NO_CTX);
    CHECK(back != NULL);
    if (back != NULL) {
        const int64_t * ne = gguf_get_tensor_ne(back, 0);
        CHECK(ne[0] == 8 && ne[1] == 0 && ne[2] == 0 && ne[3] == 1);
        CHECK_EQ_INT(gguf_get_tensor_size(back, 0), 0);
        CHECK_EQ_INT(gguf_get_tensor_offset(back, 1), 0);
    }
    gguf_free(back);
    free(meta);
    bytes_free(&expect);
    gguf_free(ctx);
    ggml_free(gctx);
}

// Tensors in a buffer of device memory (whose tensor->data cannot be
// dereferenced) are written through the buffer interface.
static void test_device_tensors(void) {
    struct test_backend_config config = { .name = "GgufDevice", .host_memory = false };
    ggml_backend_reg_t reg = test_backend_reg_new(&config);
    ggml_backend_dev_t dev = test_backend_device(reg);

    struct ggml_init_params ip = { .mem_size = 4 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * gctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, 7, 3);
    struct ggml_tensor * b = ggml_new_tensor_1d(gctx, GGML_TYPE_Q8_0, 64);
    ggml_set_name(a, "a");
    ggml_set_name(b, "b");
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(gctx, ggml_backend_dev_buffer_type(dev));
    CHECK(buf != NULL);
    uint8_t da[84], db[68];
    for (size_t k = 0; k < sizeof(da); k++) {
        da[k] = (uint8_t)(k * 3 + 1);
    }
    for (size_t k = 0; k < sizeof(db); k++) {
        db[k] = (uint8_t)(k * 5 + 2);
    }
    ggml_backend_tensor_set(a, da, 0, sizeof(da));
    ggml_backend_tensor_set(b, db, 0, sizeof(db));

    struct gguf_context * ctx = gguf_init_empty();
    gguf_add_tensor(ctx, a);
    gguf_add_tensor(ctx, b);
    test_backend_reset_counters(dev);
    CHECK(gguf_write_to_file(ctx, TMP_FILE, false));
    struct test_backend_counters counters;
    test_backend_get_counters(dev, &counters);
    CHECK_EQ_INT(counters.bytes_get, sizeof(da) + sizeof(db));

    struct ggml_context * rctx = NULL;
    struct gguf_context * back = gguf_init_from_file(TMP_FILE, params_with(&rctx, false));
    CHECK(back != NULL && rctx != NULL);
    if (rctx != NULL) {
        struct ggml_tensor * ra = ggml_get_tensor(rctx, "a");
        struct ggml_tensor * rb = ggml_get_tensor(rctx, "b");
        CHECK(ra != NULL && memcmp(ra->data, da, sizeof(da)) == 0);
        CHECK(rb != NULL && memcmp(rb->data, db, sizeof(db)) == 0);
    }
    gguf_free(back);
    ggml_free(rctx);
    gguf_free(ctx);
    ggml_backend_buffer_free(buf);
    ggml_free(gctx);
    test_backend_reg_free(reg);
}

static void test_type_names(void) {
    static const char * names[GGUF_TYPE_COUNT] = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64",
    };
    for (int t = 0; t < GGUF_TYPE_COUNT; t++) {
        CHECK(gguf_type_name((enum gguf_type) t) != NULL && strcmp(gguf_type_name((enum gguf_type) t), names[t]) == 0);
    }
    CHECK(gguf_type_name(GGUF_TYPE_COUNT) == NULL);
    CHECK(gguf_type_name((enum gguf_type) -1) == NULL);
}

// a GGUF inside a larger file, read from where the FILE * stands: the padding
// counts from the start of the GGUF, the data offset from the start of the file
static void test_embedded_file(void) {
    FILE * f = fopen(TMP_FILE, "wb");
    CHECK(f != NULL);
    if (f == NULL) {
        return;
    }
    fwrite("0123456789abc", 1, 13, f);
    fwrite(FIXTURE_MIN, 1, sizeof(FIXTURE_MIN), f);
    fclose(f);
    f = fopen(TMP_FILE, "rb");
    fseek(f, 13, SEEK_SET);
    struct ggml_context * gctx = NULL;
    struct gguf_context * ctx = gguf_init_from_file_ptr(f, params_with(&gctx, false));
    fclose(f);
    CHECK(ctx != NULL && gctx != NULL);
    if (ctx != NULL && gctx != NULL) {
        CHECK_EQ_INT(gguf_get_data_offset(ctx), 13 + 96);
        struct ggml_tensor * w = ggml_get_tensor(gctx, "w");
        CHECK(w != NULL && ((const float *) w->data)[5] == -1.5f);
    }
    gguf_free(ctx);
    ggml_free(gctx);
}

// gguf_write_to_file writes through a 4 MiB buffer, in whole pieces at
// multiples of 4 MiB, so that a file just written and mapped lies in 2 MiB
// pages. Tensors of 1.5 MiB, each written by one fwrite of less than 2 MiB,
// left the whole file in 4 KiB folios before. Skipped where a probe file shows
// that new files do not get large folios (mapped-pages.h).
static void test_written_in_large_folios(void) {
    if (!large_folios_here(".")) {
        printf("test_written_in_large_folios: skipped (no large folios for new files here)\n");
        return;
    }
    enum { N_PIECES = 12, NE0 = 384, NE1 = 1024 };
    const struct ggml_init_params ip = {
        .mem_size = N_PIECES * (NE0 * NE1 * sizeof(float) + ggml_tensor_overhead()) + (1 << 16),
        .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * gctx = ggml_init(ip);
    struct gguf_context * ctx = gguf_init_empty();
    for (int t = 0; t < (int) N_PIECES; t++) {
        struct ggml_tensor * w = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, NE0, NE1);
        ggml_format_name(w, "w%d", t);
        for (int i = 0; i < NE0 * NE1; i++) {
            ((float *) w->data)[i] = (float) (t + i % 97);
        }
        gguf_add_tensor(ctx, w);
    }
    CHECK(gguf_write_to_file(ctx, TMP_FILE, false));
    long long size;
    const long kib = mapped_in_pmds_kib(TMP_FILE, &size);
    const long full = (long) (size >> 21) * 2048; // the whole 2 MiB ranges of the file
    CHECK_MSG(full >= 16384 && kib >= full / 2, "a file of %lld bytes is mapped with %ld KiB of 2 MiB pages of %ld",
              size, kib, full);
    gguf_free(ctx);
    ggml_free(gctx);
}

static void test_failures(void) {
    struct ggml_context * gctx = (struct ggml_context *) &gctx; // must be reset to NULL
    int before = g_log_errors;
    CHECK(gguf_init_from_file("this-file-does-not-exist.gguf", params_with(&gctx, false)) == NULL);
    CHECK(gctx == NULL);
    CHECK_EQ_INT(g_log_errors - before, 1);

    struct gguf_context * ctx = gguf_init_empty();
    gguf_set_val_str(ctx, "k", "v");
    before = g_log_errors;
    CHECK(!gguf_write_to_file(ctx, "no-such-directory/x.gguf", false));
    CHECK_EQ_INT(g_log_errors - before, 1);

    // a device that is always full (where there is one)
    FILE * full = fopen("/dev/full", "wb");
    if (full != NULL) {
        before = g_log_errors;
        CHECK(!gguf_write_to_file_ptr(ctx, full, false));
        CHECK_EQ_INT(g_log_errors - before, 1);
        fclose(full);
    }
    gguf_free(ctx);
}

int main(void) {
    ggml_log_set(count_log, NULL);

    test_fixture_min();
    test_fixture_arrays();
    test_empty_context();
    test_type_names();
    test_empty_tensor();
    test_device_tensors();
    test_replace_and_remove();
    test_set_kv();
    test_set_tensor_type();
    roundtrip(32, true);
    roundtrip(64, true);
    roundtrip(64, false);
    roundtrip(8, true);
    test_embedded_file();
    test_written_in_large_folios();
    CHECK_EQ_INT(g_log_errors, 0); // nothing valid was reported as an error
    test_failures();

    remove(TMP_FILE);
    ggml_log_set(NULL, NULL);
    return TEST_RESULT();
}
