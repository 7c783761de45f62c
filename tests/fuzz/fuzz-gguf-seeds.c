// fuzz-gguf-seeds: writes a few small valid GGUF files into a directory, as
// the starting corpus of fuzz-gguf. Usage: fuzz-gguf-seeds DIR

#include "ggml.h"
#include "gguf.h"

#include <stdio.h>
#include <string.h>

static struct ggml_context * g_tensors;

static struct ggml_tensor * new_tensor(enum ggml_type type, int64_t ne0, int64_t ne1, const char * name) {
    struct ggml_tensor * t = ggml_new_tensor_2d(g_tensors, type, ne0, ne1);
    ggml_set_name(t, name);
    for (size_t k = 0; k < ggml_nbytes(t); k++) {
        ((unsigned char *) t->data)[k] = (unsigned char)(k * 7 + 1);
    }
    return t;
}

static int write_seed(const struct gguf_context * ctx, const char * dir, int n) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/seed-%d.gguf", dir, n);
    if (!gguf_write_to_file(ctx, path, false)) {
        fprintf(stderr, "failed to write %s\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char ** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    const char * dir = argv[1];
    struct ggml_init_params ip = { .mem_size = 1 << 20, .mem_buffer = NULL, .no_alloc = false };
    g_tensors = ggml_init(ip);
    int failures = 0;

    // one key, one tensor
    struct gguf_context * ctx = gguf_init_empty();
    gguf_set_val_u32(ctx, "k", 7);
    gguf_add_tensor(ctx, new_tensor(GGML_TYPE_F32, 3, 2, "w"));
    failures += write_seed(ctx, dir, 0);
    gguf_free(ctx);

    // every value type and array element type, no tensors
    ctx = gguf_init_empty();
    gguf_set_val_u8(ctx, "u8", 1);
    gguf_set_val_i8(ctx, "i8", -1);
    gguf_set_val_u16(ctx, "u16", 2);
    gguf_set_val_i16(ctx, "i16", -2);
    gguf_set_val_u32(ctx, "u32", 3);
    gguf_set_val_i32(ctx, "i32", -3);
    gguf_set_val_f32(ctx, "f32", 0.5f);
    gguf_set_val_u64(ctx, "u64", 4);
    gguf_set_val_i64(ctx, "i64", -4);
    gguf_set_val_f64(ctx, "f64", 0.25);
    gguf_set_val_bool(ctx, "bool", true);
    gguf_set_val_str(ctx, "str", "text");
    const unsigned char bytes[8] = { 1, 0, 1, 1, 0, 2, 3, 4 };
    const enum gguf_type types[] = { GGUF_TYPE_UINT8, GGUF_TYPE_INT16, GGUF_TYPE_UINT32, GGUF_TYPE_FLOAT32,
                                     GGUF_TYPE_BOOL, GGUF_TYPE_INT64, GGUF_TYPE_FLOAT64 };
    const size_t counts[] = { 8, 4, 2, 2, 8, 1, 0 }; // 8 bytes of each, the last array empty
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        char key[32];
        snprintf(key, sizeof(key), "arr.%zu", i);
        gguf_set_arr_data(ctx, key, types[i], bytes, counts[i]);
    }
    const char * strs[3] = { "a", "", "bc" };
    gguf_set_arr_str(ctx, "strs", strs, 3);
    failures += write_seed(ctx, dir, 1);
    gguf_free(ctx);

    // custom alignment, quantized tensors
    ctx = gguf_init_empty();
    gguf_set_val_u32(ctx, GGUF_KEY_GENERAL_ALIGNMENT, 64);
    gguf_set_val_str(ctx, "general.name", "seed");
    gguf_add_tensor(ctx, new_tensor(GGML_TYPE_F32, 5, 3, "a"));
    gguf_add_tensor(ctx, new_tensor(GGML_TYPE_Q4_0, 32, 2, "b"));
    gguf_add_tensor(ctx, new_tensor(GGML_TYPE_Q8_0, 64, 1, "c"));
    gguf_add_tensor(ctx, new_tensor(GGML_TYPE_F16, 7, 1, "d"));
    failures += write_seed(ctx, dir, 2);
    gguf_free(ctx);

    // small alignment, empty tensor, bool array
    ctx = gguf_init_empty();
    gguf_set_val_u32(ctx, GGUF_KEY_GENERAL_ALIGNMENT, 8);
    gguf_set_arr_data(ctx, "flags", GGUF_TYPE_BOOL, bytes, 5);
    gguf_add_tensor(ctx, new_tensor(GGML_TYPE_I8, 0, 4, "empty"));
    gguf_add_tensor(ctx, new_tensor(GGML_TYPE_I32, 1, 1, "one"));
    failures += write_seed(ctx, dir, 3);
    gguf_free(ctx);

    // nothing at all
    ctx = gguf_init_empty();
    failures += write_seed(ctx, dir, 4);
    gguf_free(ctx);

    ggml_free(g_tensors);
    return failures == 0 ? 0 : 1;
}
