// test-gguf-index: the GGUF context's name indices at the scale of a deep
// model: 200,000 tensors and 200,000 keys added, each found at its id,
// names that differ by one character or are prefixes of others told apart,
// keys removed and replaced (the ids after them move down, a replaced key
// moves to the end), a duplicate tensor name refused, and a context read
// back from memory found by name the same way.
//
// The counts make a linear search per add or lookup (2 x 10^10 name
// comparisons) run for minutes where the index needs well under a second:
// the test's ctest TIMEOUT is the guard against that regression (no time is
// measured or asserted in the program itself).

#define _GNU_SOURCE

#include "death-test.h"
#include "testing.h"

#include "ggml.h"
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_TENSORS = 200000, N_KEYS = 200000 };

static void tensor_name(char * buf, size_t size, int i) {
    snprintf(buf, size, "blk.%d.w", i);
}

static void key_name(char * buf, size_t size, int i) {
    snprintf(buf, size, "k.%d", i);
}

static void test_tensors(struct gguf_context * gguf, struct ggml_context * ctx) {
    char name[GGML_MAX_NAME];
    for (int i = 0; i < N_TENSORS; i++) {
        struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1 + i % 7);
        tensor_name(name, sizeof(name), i);
        ggml_set_name(t, name);
        gguf_add_tensor(gguf, t);
    }
    CHECK_EQ_INT(gguf_get_n_tensors(gguf), N_TENSORS);
    int wrong = 0;
    for (int i = 0; i < N_TENSORS; i++) {
        tensor_name(name, sizeof(name), i);
        wrong += gguf_find_tensor(gguf, name) != i;
        wrong += strcmp(gguf_get_tensor_name(gguf, i), name) != 0;
    }
    CHECK_EQ_INT(wrong, 0);
    // prefixes and near misses of names that exist
    CHECK_EQ_INT(gguf_find_tensor(gguf, "blk.1."), -1);
    CHECK_EQ_INT(gguf_find_tensor(gguf, "blk.1.ww"), -1);
    CHECK_EQ_INT(gguf_find_tensor(gguf, "blk.200000.w"), -1);
    CHECK_EQ_INT(gguf_find_tensor(gguf, ""), -1);
    // offsets stay packed: tensor i after tensor i - 1, padded to the alignment
    const size_t align = gguf_get_alignment(gguf);
    bool packed = gguf_get_tensor_offset(gguf, 0) == 0;
    for (int i = 1; i < N_TENSORS && packed; i++) {
        const size_t prev = (size_t) (4 * (1 + (i - 1) % 7));
        packed = gguf_get_tensor_offset(gguf, i) == gguf_get_tensor_offset(gguf, i - 1) + (prev + align - 1) / align * align;
    }
    CHECK(packed);

    // a duplicate name is API misuse
    struct ggml_tensor * dup = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    ggml_set_name(dup, "blk.123456.w");
    CHECK_ABORTS("duplicate tensor name", gguf_add_tensor(gguf, dup));
}

static void test_keys(struct gguf_context * gguf) {
    char name[64];
    for (int i = 0; i < N_KEYS; i++) {
        key_name(name, sizeof(name), i);
        gguf_set_val_i32(gguf, name, i);
    }
    CHECK_EQ_INT(gguf_get_n_kv(gguf), N_KEYS);
    int wrong = 0;
    for (int i = 0; i < N_KEYS; i++) {
        key_name(name, sizeof(name), i);
        const int64_t id = gguf_find_key(gguf, name);
        wrong += id != i || gguf_get_val_i32(gguf, id) != i;
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(gguf_find_key(gguf, "k."), -1);
    CHECK_EQ_INT(gguf_find_key(gguf, "k.2000000"), -1);

    // removing k.10 moves every later key down by one
    CHECK_EQ_INT(gguf_remove_key(gguf, "k.10"), 10);
    CHECK_EQ_INT(gguf_find_key(gguf, "k.10"), -1);
    CHECK_EQ_INT(gguf_find_key(gguf, "k.9"), 9);
    CHECK_EQ_INT(gguf_find_key(gguf, "k.11"), 10);
    CHECK_EQ_INT(gguf_find_key(gguf, "k.199999"), N_KEYS - 2);
    // a replaced key moves to the end with its new value
    gguf_set_val_i32(gguf, "k.0", -5);
    const int64_t id0 = gguf_find_key(gguf, "k.0");
    CHECK_EQ_INT(id0, N_KEYS - 2);
    CHECK_EQ_INT(gguf_get_val_i32(gguf, id0), -5);
    CHECK_EQ_INT(gguf_find_key(gguf, "k.1"), 0);
    CHECK_EQ_INT(gguf_get_n_kv(gguf), N_KEYS - 1);
    // and a key added after all that is found too
    gguf_set_val_str(gguf, "general.name", "index");
    CHECK_EQ_INT(gguf_find_key(gguf, "general.name"), N_KEYS - 1);
}

// the metadata written and read back: the reader's context is indexed as well
static void test_read_back(const struct gguf_context * gguf) {
    const size_t size = gguf_get_meta_size(gguf);
    void * meta = malloc(size);
    CHECK(meta != NULL);
    if (meta == NULL) {
        return;
    }
    gguf_get_meta_data(gguf, meta);
    // the metadata alone: the tensor data is absent, so read without a ggml context
    const struct gguf_init_params p = { .no_alloc = true, .ctx = NULL };
    struct gguf_context * back = gguf_init_from_buffer(meta, size, p);
    CHECK(back != NULL);
    if (back != NULL) {
        CHECK_EQ_INT(gguf_get_n_tensors(back), N_TENSORS);
        CHECK_EQ_INT(gguf_find_tensor(back, "blk.0.w"), 0);
        CHECK_EQ_INT(gguf_find_tensor(back, "blk.199999.w"), N_TENSORS - 1);
        CHECK_EQ_INT(gguf_find_key(back, "k.11"), 9); // after the removal of k.10 and the move of k.0
        CHECK_EQ_INT(gguf_find_key(back, "general.name"), N_KEYS - 1);
        gguf_free(back);
    }
    free(meta);
}

int main(void) {
    const struct ggml_init_params ip = {
        .mem_size   = (size_t) (N_TENSORS + 1) * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    test_tensors(gguf, ctx);
    test_keys(gguf);
    test_read_back(gguf);
    gguf_free(gguf);
    ggml_free(ctx);
    return TEST_RESULT();
}
