// fuzz-gguf: libFuzzer target for the GGUF reader.
//
// Each input is read from memory without a ggml context, with one holding
// the tensor data, with one holding headers only, and through a callback
// that serves at most 3 bytes per read. A context that comes back must be
// consistent: every getter works, tensors lie inside the input, and the
// metadata the writer produces from it reads back to the same counts.
// Properties that fail trap, so that libFuzzer reports them as crashes.
//
// Build: cmake -S . -B build-fuzz -DGGML_FUZZ=ON -DCMAKE_C_COMPILER=clang -DBUILD_SHARED_LIBS=OFF
//        cmake --build build-fuzz --target fuzz-gguf fuzz-gguf-seeds
// Run:   build-fuzz/bin/fuzz-gguf-seeds corpus && build-fuzz/bin/fuzz-gguf corpus

#include "ggml.h"
#include "gguf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size);

#define REQUIRE(cond) do { if (!(cond)) { __builtin_trap(); } } while (0)

static void quiet_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    (void) user_data;
}

struct source {
    const uint8_t * data;
    size_t          size;
};

static size_t source_read(void * userdata, void * output, uint64_t offset, size_t len) {
    const struct source * src = (const struct source *) userdata;
    REQUIRE(len <= 3);
    if (offset >= src->size) {
        return 0;
    }
    const size_t n = len < src->size - offset ? len : src->size - (size_t) offset;
    memcpy(output, src->data + offset, n);
    return n;
}

static void check_context(const struct gguf_context * ctx, struct ggml_context * gctx, size_t size, bool data_read) {
    volatile size_t sink = 0;
    for (int64_t i = 0; i < gguf_get_n_kv(ctx); i++) {
        sink += strlen(gguf_get_key(ctx, i));
        const enum gguf_type type = gguf_get_kv_type(ctx, i);
        if (type == GGUF_TYPE_ARRAY) {
            const size_t n = gguf_get_arr_n(ctx, i);
            if (gguf_get_arr_type(ctx, i) == GGUF_TYPE_STRING) {
                for (size_t j = 0; j < n; j++) {
                    sink += strlen(gguf_get_arr_str(ctx, i, j));
                }
            } else if (n > 0) {
                sink += ((const uint8_t *) gguf_get_arr_data(ctx, i))[0];
            }
        } else if (type == GGUF_TYPE_STRING) {
            sink += strlen(gguf_get_val_str(ctx, i));
        } else {
            sink += *(const uint8_t *) gguf_get_val_data(ctx, i);
        }
    }
    const size_t align = gguf_get_alignment(ctx);
    REQUIRE(align != 0 && (align & (align - 1)) == 0);
    REQUIRE(gguf_get_data_offset(ctx) <= size);
    for (int64_t i = 0; i < gguf_get_n_tensors(ctx); i++) {
        const size_t offset = gguf_get_tensor_offset(ctx, i);
        REQUIRE(offset % align == 0);
        REQUIRE(strlen(gguf_get_tensor_name(ctx, i)) < GGML_MAX_NAME);
        if (data_read) {
            REQUIRE(offset + gguf_get_tensor_size(ctx, i) <= size - gguf_get_data_offset(ctx));
        }
    }
    if (gctx != NULL && data_read) {
        struct ggml_tensor * blob = ggml_get_first_tensor(gctx);
        REQUIRE(blob != NULL);
        for (struct ggml_tensor * t = ggml_get_next_tensor(gctx, blob); t != NULL; t = ggml_get_next_tensor(gctx, t)) {
            const size_t nbytes = ggml_nbytes(t);
            if (nbytes > 0) {
                REQUIRE((const uint8_t *) t->data + nbytes <= (const uint8_t *) blob->data + ggml_nbytes(blob));
                sink += ((const uint8_t *) t->data)[nbytes - 1];
            }
        }
    }
    (void) sink;
}

// the writer's metadata for a context read back must give the same context
static void check_rewrite(const struct gguf_context * ctx) {
    const size_t meta_size = gguf_get_meta_size(ctx);
    uint8_t * meta = (uint8_t *) malloc(meta_size);
    REQUIRE(meta != NULL);
    gguf_get_meta_data(ctx, meta);
    struct gguf_init_params params = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * back = gguf_init_from_buffer(meta, meta_size, params);
    REQUIRE(back != NULL);
    REQUIRE(gguf_get_n_kv(back) == gguf_get_n_kv(ctx));
    REQUIRE(gguf_get_n_tensors(back) == gguf_get_n_tensors(ctx));
    REQUIRE(gguf_get_alignment(back) == gguf_get_alignment(ctx));
    for (int64_t i = 0; i < gguf_get_n_kv(ctx); i++) {
        REQUIRE(strcmp(gguf_get_key(back, i), gguf_get_key(ctx, i)) == 0);
        REQUIRE(gguf_get_kv_type(back, i) == gguf_get_kv_type(ctx, i));
        REQUIRE(gguf_get_arr_n(back, i) == gguf_get_arr_n(ctx, i));
    }
    for (int64_t i = 0; i < gguf_get_n_tensors(ctx); i++) {
        REQUIRE(gguf_get_tensor_offset(back, i) == gguf_get_tensor_offset(ctx, i));
        REQUIRE(gguf_get_tensor_type(back, i) == gguf_get_tensor_type(ctx, i));
        REQUIRE(strcmp(gguf_get_tensor_name(back, i), gguf_get_tensor_name(ctx, i)) == 0);
        REQUIRE(memcmp(gguf_get_tensor_ne(back, i), gguf_get_tensor_ne(ctx, i), 4 * sizeof(int64_t)) == 0);
    }
    // a copy of every key/value pair
    struct gguf_context * copy = gguf_init_empty();
    gguf_set_kv(copy, back);
    REQUIRE(gguf_get_n_kv(copy) == gguf_get_n_kv(ctx));
    gguf_free(copy);
    gguf_free(back);
    free(meta);
}

int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    ggml_log_set(quiet_log, NULL);

    for (int mode = 0; mode < 4; mode++) {
        struct ggml_context * gctx = NULL;
        struct gguf_init_params params = {
            .no_alloc = mode == 2,
            .ctx      = mode == 0 ? NULL : &gctx,
        };
        struct gguf_context * ctx;
        if (mode == 3) {
            struct source src = { .data = data, .size = size };
            ctx = gguf_init_from_callback(source_read, &src, 3, size, params);
        } else {
            ctx = gguf_init_from_buffer(data, size, params);
        }
        if (ctx == NULL) {
            REQUIRE(gctx == NULL);
            continue;
        }
        REQUIRE((gctx != NULL) == (mode != 0));
        check_context(ctx, gctx, size, mode == 1 || mode == 3);
        // (a large alignment pads the metadata to as much, which the rewrite would allocate)
        if (mode == 0 && gguf_get_alignment(ctx) <= 4096) {
            check_rewrite(ctx);
        }
        gguf_free(ctx);
        ggml_free(gctx);
    }
    return 0;
}
