// test-gguf-endian.c: GGUF files are little-endian whatever the host. A file
// is built byte by byte as an x86 machine writes it (gguf-bytes.h), with
// metadata of every width and tensors of the plain and quantized types whose
// data the reader converts; on any host (on s390x under qemu in CI) reading it
// must give the values the bytes encode, computed here from the encodings,
// and writing it back must give the same bytes. Every type converts: a
// tensor of each loads and is written on any host.

#include "ggml.h"
#include "ggml-common.h"
#include "gguf.h"
#include "gguf-bytes.h"
#include "testing.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static bool host_is_little_endian(void) {
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static uint64_t f64_bits(double f) {
    uint64_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

#define ALIGN 32

static const float   F32_VALUES[3] = { 1.5f, -2.25f, 1e-3f };
static const int16_t I16_VALUES[3] = { -2, 300, 0x1234 };
static const int32_t I32_VALUES[2] = { -70000, 0x01020304 };
static const int64_t I64_VALUES[2] = { -5000000000000LL, 0x0102030405060708LL };
static const double  F64_VALUES[2] = { 0.1, -1e300 };
static const int8_t  I8_VALUES[3]  = { -128, 7, 127 };
// fp16 and bf16 encodings with their values
static const uint16_t F16_BITS[4]  = { 0x3c00, 0xc000, 0x3800, 0x7bff };
static const double   F16_VALUES[4] = { 1.0, -2.0, 0.5, 65504.0 };
static const uint16_t BF16_BITS[2] = { 0x3f80, 0xc040 };
static const double   BF16_VALUES[2] = { 1.0, -3.0 };

// one block each, with the little-endian bytes of its multi-byte fields
static void q4_1_block(struct bytes * b, double * v) {
    bytes_le(b, 0x3800, 2); // d = 0.5
    bytes_le(b, 0xc200, 2); // m = -3
    for (int j = 0; j < 16; j++) {
        bytes_u8(b, (uint8_t)(j | (15 - j) << 4));
        v[j]      = j * 0.5 - 3;
        v[j + 16] = (15 - j) * 0.5 - 3;
    }
}

static void q5_0_block(struct bytes * b, double * v) {
    bytes_le(b, 0x3c00, 2);     // d = 1
    bytes_le(b, 0x0000ffff, 4); // the fifth bit of elements 0..15
    for (int j = 0; j < 16; j++) {
        bytes_u8(b, (uint8_t)(j | j << 4));
        v[j]      = (j + 16) - 16;
        v[j + 16] = j - 16;
    }
}

static void q8_0_block(struct bytes * b, double * v) {
    bytes_le(b, 0x3400, 2); // d = 0.25
    for (int j = 0; j < 32; j++) {
        bytes_u8(b, (uint8_t)(int8_t)(j - 16));
        v[j] = 0.25 * (j - 16);
    }
}

// The types whose blocks hold 16- or 32-bit words besides bytes (grid
// indices, signs, packed scales): one block of random content is built twice
// from the same words, once as the x86 bytes of the file and once in host
// order, laid out as ggml-common.h documents and the kernels load it. Reading
// the file must give the values of the host-order block.
#define WORD_BLOCK_MAX 128

struct word_block {
    enum ggml_type type;
    uint8_t        le[WORD_BLOCK_MAX];   // as x86 writes it
    uint8_t        host[WORD_BLOCK_MAX]; // as this host's kernels read it
};

static uint32_t g_rng = 12345;

static uint32_t rnd(void) {
    g_rng = g_rng * 1664525u + 1013904223u;
    return g_rng >> 8;
}

static void put_word(struct word_block * w, size_t offset, uint32_t v, int width) {
    for (int k = 0; k < width; k++) {
        w->le[offset + (size_t) k] = (uint8_t) (v >> 8*k);
    }
    if (width == 2) {
        const uint16_t h = (uint16_t) v;
        memcpy(w->host + offset, &h, 2);
    } else {
        memcpy(w->host + offset, &v, 4);
    }
}

// count words of width bytes at offset, random in the bits of mask
static void put_words(struct word_block * w, size_t offset, int width, int count, uint32_t mask) {
    for (int i = 0; i < count; i++) {
        put_word(w, offset + (size_t) (i*width), rnd() & mask, width);
    }
}

// an fp16 scale in [1, 2)
static void put_scale(struct word_block * w, size_t offset) {
    put_word(w, offset, 0x3c00 | (rnd() & 0x3ff), 2);
}

static void make_word_block(struct word_block * w, enum ggml_type type) {
    w->type = type;
    const size_t size = ggml_type_size(type);
    for (size_t i = 0; i < size; i++) {
        w->le[i] = w->host[i] = (uint8_t) rnd();
    }
    switch (type) {
        case GGML_TYPE_IQ2_XXS:
            put_scale(w, offsetof(block_iq2_xxs, d));
            put_words(w, offsetof(block_iq2_xxs, qs), 4, QK_K/16, 0xffffffffu);
            break;
        case GGML_TYPE_IQ2_XS:
            put_scale(w, offsetof(block_iq2_xs, d));
            put_words(w, offsetof(block_iq2_xs, qs), 2, QK_K/8, 0xffff);
            break;
        case GGML_TYPE_IQ2_S:
            put_scale(w, offsetof(block_iq2_s, d));
            break;
        case GGML_TYPE_IQ3_XXS:
            put_scale(w, offsetof(block_iq3_xxs, d));
            put_words(w, offsetof(block_iq3_xxs, qs) + QK_K/4, 4, QK_K/32, 0xffffffffu);
            break;
        case GGML_TYPE_IQ3_S:
            put_scale(w, offsetof(block_iq3_s, d));
            break;
        case GGML_TYPE_IQ1_S:
            put_scale(w, offsetof(block_iq1_s, d));
            put_words(w, offsetof(block_iq1_s, qh), 2, QK_K/32, 0xffff);
            break;
        case GGML_TYPE_IQ1_M: {
            // the fp16 scale 0x3c00 (1.0) in the top nibbles of the four words
            const uint32_t top[4] = { 0x0, 0x0, 0xc, 0x3 };
            for (int i = 0; i < 4; i++) {
                put_word(w, offsetof(block_iq1_m, scales) + (size_t) (2*i), (rnd() & 0x0fff) | top[i] << 12, 2);
            }
            break;
        }
        case GGML_TYPE_Q1_0:
            put_scale(w, offsetof(block_q1_0, d));
            break;
        case GGML_TYPE_Q2_0:
            put_scale(w, offsetof(block_q2_0, d));
            break;
        case GGML_TYPE_NVFP4:
            for (int i = 0; i < QK_NVFP4/QK_NVFP4_SUB; i++) { // finite UE4M3 scales
                w->le[offsetof(block_nvfp4, d) + (size_t) i] = w->host[offsetof(block_nvfp4, d) + (size_t) i] =
                    (uint8_t) (0x30 + rnd() % 16);
            }
            break;
        default:
            CHECK_MSG(false, "no word block for %s", ggml_type_name(type));
    }
}

static const enum ggml_type WORD_TYPES[] = {
    GGML_TYPE_IQ2_XXS, GGML_TYPE_IQ2_XS, GGML_TYPE_IQ2_S, GGML_TYPE_IQ3_XXS, GGML_TYPE_IQ3_S,
    GGML_TYPE_IQ1_S,   GGML_TYPE_IQ1_M,  GGML_TYPE_Q1_0,  GGML_TYPE_Q2_0,    GGML_TYPE_NVFP4,
};
#define N_WORD_TYPES (sizeof(WORD_TYPES) / sizeof(WORD_TYPES[0]))

static struct word_block g_word_blocks[N_WORD_TYPES];

// data in host order holds the values of the host-order block of its type
static void check_word_block(const char * name, const void * data) {
    for (size_t i = 0; i < N_WORD_TYPES; i++) {
        const struct word_block * w = &g_word_blocks[i];
        if (strcmp(name, ggml_type_name(w->type)) != 0) {
            continue;
        }
        float want[QK_K], got[QK_K];
        const int64_t n = ggml_blck_size(w->type);
        ggml_get_type_traits(w->type)->to_float(w->host, want, n);
        ggml_get_type_traits(w->type)->to_float(data, got, n);
        int bad = 0, nonzero = 0;
        for (int64_t j = 0; j < n; j++) {
            nonzero += want[j] != 0;
            if ((!isfinite(want[j]) || memcmp(&want[j], &got[j], sizeof(float)) != 0) && bad++ == 0) {
                fprintf(stderr, "%s[%d] = %g, expected %g\n", name, (int) j, (double) got[j], (double) want[j]);
            }
        }
        CHECK_MSG(bad == 0, "%s: %d values differ", name, bad);
        CHECK_MSG(nonzero > n/2, "%s: only %d of %d values are not zero", name, nonzero, (int) n);
        return;
    }
    CHECK_MSG(false, "unexpected tensor %s", name);
}

struct fixture_tensor {
    const char *   name;
    enum ggml_type type;
    int64_t        ne;
};

static const struct fixture_tensor TENSORS[] = {
    { "f32",  GGML_TYPE_F32,  3 },
    { "f16",  GGML_TYPE_F16,  4 },
    { "bf16", GGML_TYPE_BF16, 2 },
    { "i8",   GGML_TYPE_I8,   3 },
    { "i16",  GGML_TYPE_I16,  3 },
    { "i32",  GGML_TYPE_I32,  2 },
    { "i64",  GGML_TYPE_I64,  2 },
    { "f64",  GGML_TYPE_F64,  2 },
    { "q4_1", GGML_TYPE_Q4_1, 32 },
    { "q5_0", GGML_TYPE_Q5_0, 32 },
    { "q8_0", GGML_TYPE_Q8_0, 32 },
    // one block of each type of WORD_TYPES, named for its type
    { "iq2_xxs", GGML_TYPE_IQ2_XXS, QK_K },
    { "iq2_xs",  GGML_TYPE_IQ2_XS,  QK_K },
    { "iq2_s",   GGML_TYPE_IQ2_S,   QK_K },
    { "iq3_xxs", GGML_TYPE_IQ3_XXS, QK_K },
    { "iq3_s",   GGML_TYPE_IQ3_S,   QK_K },
    { "iq1_s",   GGML_TYPE_IQ1_S,   QK_K },
    { "iq1_m",   GGML_TYPE_IQ1_M,   QK_K },
    { "q1_0",    GGML_TYPE_Q1_0,    QK1_0 },
    { "q2_0",    GGML_TYPE_Q2_0,    QK2_0 },
    { "nvfp4",   GGML_TYPE_NVFP4,   QK_NVFP4 },
};
#define N_TENSORS (sizeof(TENSORS) / sizeof(TENSORS[0]))

static double g_q4_1[32], g_q5_0[32], g_q8_0[32];

// the file as written on x86, in the order and layout of the writer
static void build_fixture(struct bytes * b) {
    bytes_header(b, 3, (int64_t) N_TENSORS, 5);
    bytes_str(b, "k.u16"); bytes_i32(b, GGUF_TYPE_UINT16); bytes_le(b, 0xbeef, 2);
    bytes_str(b, "k.i32"); bytes_i32(b, GGUF_TYPE_INT32);  bytes_i32(b, -123456789);
    bytes_str(b, "k.f32"); bytes_i32(b, GGUF_TYPE_FLOAT32); bytes_u32(b, f32_bits(-0.375f));
    bytes_str(b, "k.f64"); bytes_i32(b, GGUF_TYPE_FLOAT64); bytes_u64(b, f64_bits(3.0e-200));
    bytes_str(b, "k.arr"); bytes_i32(b, GGUF_TYPE_ARRAY); bytes_i32(b, GGUF_TYPE_INT16); bytes_u64(b, 3);
    for (int i = 0; i < 3; i++) {
        bytes_le(b, (uint16_t) I16_VALUES[i], 2);
    }
    uint64_t offset = 0;
    for (size_t i = 0; i < N_TENSORS; i++) {
        const int64_t ne[1] = { TENSORS[i].ne };
        bytes_tensor_info(b, TENSORS[i].name, 1, ne, TENSORS[i].type, offset);
        const size_t nbytes = ggml_row_size(TENSORS[i].type, TENSORS[i].ne);
        offset += (nbytes + ALIGN - 1) / ALIGN * ALIGN;
    }
    bytes_pad(b, ALIGN);

    for (int i = 0; i < 3; i++) { bytes_u32(b, f32_bits(F32_VALUES[i])); }
    bytes_pad(b, ALIGN);
    for (int i = 0; i < 4; i++) { bytes_le(b, F16_BITS[i], 2); }
    bytes_pad(b, ALIGN);
    for (int i = 0; i < 2; i++) { bytes_le(b, BF16_BITS[i], 2); }
    bytes_pad(b, ALIGN);
    for (int i = 0; i < 3; i++) { bytes_u8(b, (uint8_t) I8_VALUES[i]); }
    bytes_pad(b, ALIGN);
    for (int i = 0; i < 3; i++) { bytes_le(b, (uint16_t) I16_VALUES[i], 2); }
    bytes_pad(b, ALIGN);
    for (int i = 0; i < 2; i++) { bytes_i32(b, I32_VALUES[i]); }
    bytes_pad(b, ALIGN);
    for (int i = 0; i < 2; i++) { bytes_i64(b, I64_VALUES[i]); }
    bytes_pad(b, ALIGN);
    for (int i = 0; i < 2; i++) { bytes_u64(b, f64_bits(F64_VALUES[i])); }
    bytes_pad(b, ALIGN);
    q4_1_block(b, g_q4_1);
    bytes_pad(b, ALIGN);
    q5_0_block(b, g_q5_0);
    bytes_pad(b, ALIGN);
    q8_0_block(b, g_q8_0);
    bytes_pad(b, ALIGN);
    for (size_t i = 0; i < N_WORD_TYPES; i++) {
        make_word_block(&g_word_blocks[i], WORD_TYPES[i]);
        bytes_raw(b, g_word_blocks[i].le, ggml_type_size(WORD_TYPES[i]));
        bytes_pad(b, ALIGN);
    }
}

static void check_block_values(const char * name, enum ggml_type type, const void * data, const double * expected) {
    float y[32];
    ggml_get_type_traits(type)->to_float(data, y, 32);
    int bad = 0;
    for (int j = 0; j < 32; j++) {
        if ((double) y[j] != expected[j] && bad++ == 0) {
            fprintf(stderr, "%s[%d] = %g, expected %g\n", name, j, (double) y[j], expected[j]);
        }
    }
    CHECK_MSG(bad == 0, "%s: %d values differ", name, bad);
}

// the tensors' data in host order, wherever it came from
static void check_tensor_values(const char * name, const void * data) {
    if (strcmp(name, "f32") == 0) {
        const float * v = (const float *) data;
        for (int i = 0; i < 3; i++) {
            CHECK_MSG(v[i] == F32_VALUES[i], "f32[%d] = %g", i, (double) v[i]);
        }
    } else if (strcmp(name, "f16") == 0) {
        const ggml_fp16_t * v = (const ggml_fp16_t *) data;
        for (int i = 0; i < 4; i++) {
            CHECK_MSG((double) ggml_fp16_to_fp32(v[i]) == F16_VALUES[i], "f16[%d] = %g", i, (double) ggml_fp16_to_fp32(v[i]));
        }
    } else if (strcmp(name, "bf16") == 0) {
        const ggml_bf16_t * v = (const ggml_bf16_t *) data;
        for (int i = 0; i < 2; i++) {
            CHECK_MSG((double) ggml_bf16_to_fp32(v[i]) == BF16_VALUES[i], "bf16[%d] = %g", i, (double) ggml_bf16_to_fp32(v[i]));
        }
    } else if (strcmp(name, "i8") == 0) {
        CHECK(memcmp(data, I8_VALUES, sizeof(I8_VALUES)) == 0);
    } else if (strcmp(name, "i16") == 0) {
        const int16_t * v = (const int16_t *) data;
        for (int i = 0; i < 3; i++) {
            CHECK_EQ_INT(v[i], I16_VALUES[i]);
        }
    } else if (strcmp(name, "i32") == 0) {
        const int32_t * v = (const int32_t *) data;
        for (int i = 0; i < 2; i++) {
            CHECK_EQ_INT(v[i], I32_VALUES[i]);
        }
    } else if (strcmp(name, "i64") == 0) {
        const int64_t * v = (const int64_t *) data;
        for (int i = 0; i < 2; i++) {
            CHECK_EQ_INT(v[i], I64_VALUES[i]);
        }
    } else if (strcmp(name, "f64") == 0) {
        const double * v = (const double *) data;
        for (int i = 0; i < 2; i++) {
            CHECK_MSG(v[i] == F64_VALUES[i], "f64[%d] = %g", i, v[i]);
        }
    } else if (strcmp(name, "q4_1") == 0) {
        check_block_values(name, GGML_TYPE_Q4_1, data, g_q4_1);
    } else if (strcmp(name, "q5_0") == 0) {
        check_block_values(name, GGML_TYPE_Q5_0, data, g_q5_0);
    } else if (strcmp(name, "q8_0") == 0) {
        check_block_values(name, GGML_TYPE_Q8_0, data, g_q8_0);
    } else {
        check_word_block(name, data);
    }
}

static void check_metadata(const struct gguf_context * ctx) {
    CHECK_EQ_INT(gguf_get_n_kv(ctx), 5);
    CHECK_EQ_INT(gguf_get_val_u16(ctx, gguf_find_key(ctx, "k.u16")), 0xbeef);
    CHECK_EQ_INT(gguf_get_val_i32(ctx, gguf_find_key(ctx, "k.i32")), -123456789);
    CHECK(gguf_get_val_f32(ctx, gguf_find_key(ctx, "k.f32")) == -0.375f);
    CHECK(gguf_get_val_f64(ctx, gguf_find_key(ctx, "k.f64")) == 3.0e-200);
    const int64_t arr = gguf_find_key(ctx, "k.arr");
    CHECK_EQ_INT(gguf_get_arr_n(ctx, arr), 3);
    const int16_t * a = (const int16_t *) gguf_get_arr_data(ctx, arr);
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(a[i], I16_VALUES[i]);
    }
    CHECK_EQ_INT(gguf_get_n_tensors(ctx), N_TENSORS);
    for (size_t i = 0; i < N_TENSORS; i++) {
        CHECK_EQ_INT(gguf_get_tensor_type(ctx, (int64_t) i), TENSORS[i].type);
        CHECK_EQ_INT(gguf_get_tensor_size(ctx, (int64_t) i), ggml_row_size(TENSORS[i].type, TENSORS[i].ne));
    }
}

static struct gguf_context * read_fixture(const struct bytes * file, struct ggml_context ** gctx, bool no_alloc) {
    const struct gguf_init_params p = { .no_alloc = no_alloc, .ctx = gctx };
    return gguf_init_from_buffer(file->data, file->n, p);
}

// the reader converts the data it loads
static void test_read_with_data(const struct bytes * file) {
    struct ggml_context * gctx = NULL;
    struct gguf_context * ctx  = read_fixture(file, &gctx, false);
    CHECK(ctx != NULL && gctx != NULL);
    if (ctx == NULL || gctx == NULL) {
        return;
    }
    check_metadata(ctx);
    for (size_t i = 0; i < N_TENSORS; i++) {
        struct ggml_tensor * t = ggml_get_tensor(gctx, TENSORS[i].name);
        CHECK(t != NULL && t->type == TENSORS[i].type);
        if (t != NULL) {
            check_tensor_values(t->name, t->data);
        }
    }
    ggml_free(gctx);
    gguf_free(ctx);
}

// a caller reading the data itself (as a memory-mapping loader does) converts it
// with gguf_tensor_data_to_host
static void test_read_metadata_only(const struct bytes * file) {
    struct ggml_context * gctx = NULL;
    struct gguf_context * ctx  = read_fixture(file, &gctx, true);
    CHECK(ctx != NULL);
    if (ctx == NULL) {
        return;
    }
    check_metadata(ctx);
    for (int64_t i = 0; i < gguf_get_n_tensors(ctx); i++) {
        const size_t off  = gguf_get_data_offset(ctx) + gguf_get_tensor_offset(ctx, i);
        const size_t size = gguf_get_tensor_size(ctx, i);
        uint8_t copy[WORD_BLOCK_MAX];
        CHECK(size <= sizeof(copy) && off + size <= file->n);
        memcpy(copy, file->data + off, size);
        CHECK(gguf_tensor_data_to_host(gguf_get_tensor_name(ctx, i), gguf_get_tensor_type(ctx, i), copy, size));
        check_tensor_values(gguf_get_tensor_name(ctx, i), copy);
    }
    ggml_free(gctx);
    gguf_free(ctx);
}

// writing what was read gives the x86 bytes back
static void test_write_back(const struct bytes * file) {
    struct ggml_context * gctx = NULL;
    struct gguf_context * in   = read_fixture(file, &gctx, false);
    CHECK(in != NULL);
    if (in == NULL) {
        return;
    }
    struct gguf_context * out = gguf_init_empty();
    gguf_set_kv(out, in);
    for (size_t i = 0; i < N_TENSORS; i++) {
        gguf_add_tensor(out, ggml_get_tensor(gctx, TENSORS[i].name));
    }
    FILE * f = tmpfile();
    CHECK(f != NULL);
    if (f != NULL) {
        CHECK(gguf_write_to_file_ptr(out, f, false));
        const long n = ftell(f);
        CHECK_EQ_INT(n, file->n);
        uint8_t * written = (uint8_t *) malloc(file->n);
        rewind(f);
        CHECK(written != NULL && fread(written, 1, file->n, f) == file->n);
        size_t first = file->n;
        for (size_t i = 0; written != NULL && i < file->n; i++) {
            if (written[i] != file->data[i]) {
                first = i;
                break;
            }
        }
        CHECK_MSG(first == file->n, "the written file differs from the x86 bytes at byte %zu", first);
        free(written);
        fclose(f);
    }
    // the data the writer converted is left as it was
    check_tensor_values("f32", ggml_get_tensor(gctx, "f32")->data);
    check_tensor_values("q5_0", ggml_get_tensor(gctx, "q5_0")->data);
    gguf_free(out);
    ggml_free(gctx);
    gguf_free(in);
}

// every type converts: a one-block tensor of each loads and is written on
// any host without a log line (zero blocks: their values do not matter here)
static void test_every_type_converts(void) {
    ggml_log_set(count_log, NULL);
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const enum ggml_type type = (enum ggml_type) t;
        if (ggml_type_size(type) == 0 || ggml_blck_size(type) == 0) {
            continue; // a removed type
        }
        struct bytes b = { 0 };
        bytes_header(&b, 3, 1, 0);
        const int64_t ne[1] = { ggml_blck_size(type) };
        bytes_tensor_info(&b, "w", 1, ne, type, 0);
        bytes_pad(&b, ALIGN);
        for (size_t i = 0; i < ggml_type_size(type); i++) {
            bytes_u8(&b, 0);
        }
        bytes_pad(&b, ALIGN);

        g_log_errors = 0;
        struct ggml_context * gctx = NULL;
        struct gguf_context * ctx  = read_fixture(&b, &gctx, false);
        CHECK_MSG(ctx != NULL, "%s: not loaded", ggml_type_name(type));
        if (ctx != NULL) {
            struct gguf_context * out = gguf_init_empty();
            gguf_add_tensor(out, ggml_get_tensor(gctx, "w"));
            FILE * f = tmpfile();
            CHECK(f != NULL);
            if (f != NULL) {
                CHECK_MSG(gguf_write_to_file_ptr(out, f, false), "%s: not written", ggml_type_name(type));
                fclose(f);
            }
            gguf_free(out);
            gguf_free(ctx);
            ggml_free(gctx);
        }
        CHECK_MSG(g_log_errors == 0, "%s: %d error lines", ggml_type_name(type), g_log_errors);
        bytes_free(&b);
    }
    ggml_log_set(NULL, NULL);
}

int main(void) {
    struct bytes file = { 0 };
    build_fixture(&file);
    printf("host: %s-endian\n", host_is_little_endian() ? "little" : "big");
    test_read_with_data(&file);
    test_read_metadata_only(&file);
    test_write_back(&file);
    test_every_type_converts();
    bytes_free(&file);
    return TEST_RESULT();
}
