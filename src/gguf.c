// gguf.c: the GGUF context: creation and release, getters, setters and
// tensor infos. Reading files is in gguf-read.c, writing in gguf-write.c.
//
// Getters and setters treat a wrong key id, a wrong value type or a bad
// argument as API misuse and abort, as upstream does; only reading a file
// reports failure by returning NULL.

#include "gguf-impl.h"

#include <inttypes.h>
#include <stdio.h>

static const char * const GGUF_TYPE_NAMES[GGUF_TYPE_COUNT] = {
    [GGUF_TYPE_UINT8]   = "u8",
    [GGUF_TYPE_INT8]    = "i8",
    [GGUF_TYPE_UINT16]  = "u16",
    [GGUF_TYPE_INT16]   = "i16",
    [GGUF_TYPE_UINT32]  = "u32",
    [GGUF_TYPE_INT32]   = "i32",
    [GGUF_TYPE_FLOAT32] = "f32",
    [GGUF_TYPE_BOOL]    = "bool",
    [GGUF_TYPE_STRING]  = "str",
    [GGUF_TYPE_ARRAY]   = "arr",
    [GGUF_TYPE_UINT64]  = "u64",
    [GGUF_TYPE_INT64]   = "i64",
    [GGUF_TYPE_FLOAT64] = "f64",
};

static const size_t GGUF_TYPE_SIZES[GGUF_TYPE_COUNT] = {
    [GGUF_TYPE_UINT8]   = sizeof(uint8_t),
    [GGUF_TYPE_INT8]    = sizeof(int8_t),
    [GGUF_TYPE_UINT16]  = sizeof(uint16_t),
    [GGUF_TYPE_INT16]   = sizeof(int16_t),
    [GGUF_TYPE_UINT32]  = sizeof(uint32_t),
    [GGUF_TYPE_INT32]   = sizeof(int32_t),
    [GGUF_TYPE_FLOAT32] = sizeof(float),
    [GGUF_TYPE_BOOL]    = 1,
    [GGUF_TYPE_STRING]  = 0,
    [GGUF_TYPE_ARRAY]   = 0,
    [GGUF_TYPE_UINT64]  = sizeof(uint64_t),
    [GGUF_TYPE_INT64]   = sizeof(int64_t),
    [GGUF_TYPE_FLOAT64] = sizeof(double),
};

_Static_assert(GGUF_TYPE_COUNT == 13, "update the gguf type tables");
_Static_assert(sizeof(float) == 4 && sizeof(double) == 8, "GGUF stores IEEE-754 binary32 and binary64");

size_t gguf_type_size(enum gguf_type type) {
    return (int) type >= 0 && type < GGUF_TYPE_COUNT ? GGUF_TYPE_SIZES[type] : 0;
}

const char * gguf_type_name(enum gguf_type type) {
    return (int) type >= 0 && type < GGUF_TYPE_COUNT ? GGUF_TYPE_NAMES[type] : NULL;
}

//
// shared helpers
//

bool gguf_tensor_nbytes(enum ggml_type type, const int64_t * ne, size_t * nbytes, char * reason, size_t reason_size) {
    if ((int) type < 0 || type >= GGML_TYPE_COUNT) {
        snprintf(reason, reason_size, "type id %d is not a ggml type (0 to %d)", (int) type, GGML_TYPE_COUNT - 1);
        return false;
    }
    const int64_t blck = ggml_blck_size(type);
    if (blck <= 0) {
        snprintf(reason, reason_size, "type id %d (%s) was removed from ggml", (int) type, ggml_type_name(type));
        return false;
    }
    for (int j = 0; j < GGML_MAX_DIMS; j++) {
        if (ne[j] < 0) {
            snprintf(reason, reason_size, "dimension %d is negative (%" PRId64 ")", j, ne[j]);
            return false;
        }
    }
    if (ne[0] % blck != 0) {
        snprintf(reason, reason_size, "rows of %" PRId64 " elements are not whole %s blocks of %" PRId64,
                 ne[0], ggml_type_name(type), blck);
        return false;
    }

    // Zero dimensions are treated as 1 here so that the strides and row
    // counts a consumer computes from the other dimensions cannot overflow.
    uint64_t elements = 1;
    uint64_t bytes    = (uint64_t) ggml_type_size(type);
    bool     empty    = false;
    for (int j = 0; j < GGML_MAX_DIMS; j++) {
        const uint64_t d = ne[j] == 0 ? 1 : (uint64_t) ne[j];
        const uint64_t d_bytes = j == 0 ? d / (uint64_t) blck : d;
        empty = empty || ne[j] == 0;
        if (!gguf_mul_u64(elements, d, &elements) || elements > INT64_MAX ||
            !gguf_mul_u64(bytes, d_bytes == 0 ? 1 : d_bytes, &bytes) || bytes > SIZE_MAX) {
            snprintf(reason, reason_size, "shape (%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ") of type %s "
                     "overflows the element count or byte size", ne[0], ne[1], ne[2], ne[3], ggml_type_name(type));
            return false;
        }
    }
    *nbytes = empty ? 0 : (size_t) bytes;
    return true;
}

void gguf_tensor_set_shape(struct ggml_tensor * t, enum ggml_type type, const int64_t * ne) {
    const int64_t blck = ggml_blck_size(type);
    t->type = type;
    for (int j = 0; j < GGML_MAX_DIMS; j++) {
        t->ne[j] = ne[j];
    }
    t->nb[0] = ggml_type_size(type);
    t->nb[1] = t->nb[0] * (size_t)(ne[0] / blck);
    for (int j = 2; j < GGML_MAX_DIMS; j++) {
        t->nb[j] = t->nb[j - 1] * (size_t) ne[j - 1];
    }
}

// grows *items (of item_size bytes, *capacity of them) to hold at least one more
static bool gguf_grow(void ** items, size_t * capacity, size_t count, size_t item_size) {
    if (count < *capacity) {
        return true;
    }
    const size_t new_capacity = *capacity == 0 ? 8 : *capacity * 2;
    if (new_capacity < *capacity || new_capacity > SIZE_MAX / item_size) {
        return false;
    }
    void * p = realloc(*items, new_capacity * item_size);
    if (p == NULL) {
        return false;
    }
    *items    = p;
    *capacity = new_capacity;
    return true;
}

//
// the name indices
//

static uint64_t gguf_hash_name(const char * s) {
    uint64_t h = 14695981039346656037u; // FNV-1a
    for (; *s != '\0'; s++) {
        h = (h ^ (uint8_t) *s) * 1099511628211u;
    }
    return h;
}

static const char * gguf_name_at(const struct gguf_context * ctx, const struct gguf_name_index * index, size_t i) {
    return index == &ctx->kv_index ? ctx->kv[i].key : ctx->info[i].t.name;
}

static void gguf_index_place(size_t * slots, size_t capacity, uint64_t hash, size_t entry) {
    size_t j = (size_t) hash & (capacity - 1);
    while (slots[j] != 0) {
        j = (j + 1) & (capacity - 1);
    }
    slots[j] = entry + 1;
}

// the entry named name, or -1
static int64_t gguf_index_find(const struct gguf_context * ctx, const struct gguf_name_index * index, const char * name) {
    if (index->capacity == 0) {
        return -1;
    }
    const size_t mask = index->capacity - 1;
    for (size_t j = (size_t) gguf_hash_name(name) & mask; index->slots[j] != 0; j = (j + 1) & mask) {
        if (strcmp(gguf_name_at(ctx, index, index->slots[j] - 1), name) == 0) {
            return (int64_t) (index->slots[j] - 1);
        }
    }
    return -1;
}

// room for one more entry: false if memory runs out (the index is unchanged)
static bool gguf_index_reserve(const struct gguf_context * ctx, struct gguf_name_index * index) {
    if ((index->count + 1) * 2 <= index->capacity) {
        return true;
    }
    const size_t capacity = index->capacity == 0 ? 16 : index->capacity * 2;
    if (capacity < index->capacity || capacity > SIZE_MAX / sizeof(size_t)) {
        return false;
    }
    size_t * slots = (size_t *) calloc(capacity, sizeof(size_t));
    if (slots == NULL) {
        return false;
    }
    for (size_t j = 0; j < index->capacity; j++) {
        if (index->slots[j] != 0) {
            const size_t entry = index->slots[j] - 1;
            gguf_index_place(slots, capacity, gguf_hash_name(gguf_name_at(ctx, index, entry)), entry);
        }
    }
    free(index->slots);
    index->slots    = slots;
    index->capacity = capacity;
    return true;
}

// indexes entries [0, n) again, after entries moved (no allocation: the count only shrinks)
static void gguf_index_rebuild(const struct gguf_context * ctx, struct gguf_name_index * index, size_t n) {
    if (index->capacity > 0) {
        memset(index->slots, 0, index->capacity * sizeof(size_t));
    }
    GGML_ASSERT(n * 2 <= index->capacity);
    for (size_t i = 0; i < n; i++) {
        gguf_index_place(index->slots, index->capacity, gguf_hash_name(gguf_name_at(ctx, index, i)), i);
    }
    index->count = n;
}

bool gguf_push_kv(struct gguf_context * ctx, struct gguf_kv kv) {
    void * items = ctx->kv;
    if (!gguf_grow(&items, &ctx->kv_capacity, ctx->n_kv, sizeof(struct gguf_kv))) {
        return false;
    }
    ctx->kv = (struct gguf_kv *) items;
    if (!gguf_index_reserve(ctx, &ctx->kv_index)) {
        return false;
    }
    ctx->kv[ctx->n_kv] = kv;
    gguf_index_place(ctx->kv_index.slots, ctx->kv_index.capacity, gguf_hash_name(kv.key), ctx->n_kv);
    ctx->kv_index.count++;
    ctx->n_kv++;
    return true;
}

bool gguf_push_info(struct gguf_context * ctx, const struct gguf_tensor_info * info) {
    void * items = ctx->info;
    if (!gguf_grow(&items, &ctx->info_capacity, ctx->n_info, sizeof(struct gguf_tensor_info))) {
        return false;
    }
    ctx->info = (struct gguf_tensor_info *) items;
    if (!gguf_index_reserve(ctx, &ctx->info_index)) {
        return false;
    }
    ctx->info[ctx->n_info] = *info;
    gguf_index_place(ctx->info_index.slots, ctx->info_index.capacity, gguf_hash_name(info->t.name), ctx->n_info);
    ctx->info_index.count++;
    ctx->n_info++;
    return true;
}

void gguf_kv_release(struct gguf_kv * kv) {
    if (kv->type == GGUF_TYPE_STRING && kv->data != NULL) {
        struct gguf_str * strs = (struct gguf_str *) kv->data;
        for (size_t i = 0; i < kv->n; i++) {
            free(strs[i].data);
        }
    }
    free(kv->data);
    free(kv->key);
    kv->data = NULL;
    kv->key  = NULL;
}

void gguf_update_offsets(struct gguf_context * ctx, size_t first) {
    for (size_t i = first; i < ctx->n_info; i++) {
        if (i == 0) {
            ctx->info[i].offset = 0;
            continue;
        }
        const struct gguf_tensor_info * prev = &ctx->info[i - 1];
        uint64_t padded;
        uint64_t offset;
        GGML_ASSERT(gguf_pad_u64(ggml_nbytes(&prev->t), ctx->alignment, &padded) &&
                    gguf_add_u64(prev->offset, padded, &offset) && offset <= SIZE_MAX &&
                    "the tensor data of the context exceeds SIZE_MAX bytes");
        ctx->info[i].offset = offset;
    }
}

//
// context
//

struct gguf_context * gguf_init_empty(void) {
    struct gguf_context * ctx = (struct gguf_context *) calloc(1, sizeof(struct gguf_context));
    if (ctx == NULL) {
        GGML_LOG_ERROR("%s: failed to allocate a gguf context\n", __func__);
        return NULL;
    }
    ctx->version   = GGUF_VERSION;
    ctx->alignment = GGUF_DEFAULT_ALIGNMENT;
    return ctx;
}

void gguf_free(struct gguf_context * ctx) {
    if (ctx == NULL) {
        return;
    }
    for (size_t i = 0; i < ctx->n_kv; i++) {
        gguf_kv_release(&ctx->kv[i]);
    }
    free(ctx->kv);
    free(ctx->info);
    free(ctx->kv_index.slots);
    free(ctx->info_index.slots);
    free(ctx);
}

uint32_t gguf_get_version(const struct gguf_context * ctx) {
    return ctx->version;
}

size_t gguf_get_alignment(const struct gguf_context * ctx) {
    return ctx->alignment;
}

size_t gguf_get_data_offset(const struct gguf_context * ctx) {
    return ctx->offset;
}

//
// key/value getters
//

int64_t gguf_get_n_kv(const struct gguf_context * ctx) {
    return (int64_t) ctx->n_kv;
}

int64_t gguf_find_key(const struct gguf_context * ctx, const char * key) {
    GGML_ASSERT(key != NULL);
    return gguf_index_find(ctx, &ctx->kv_index, key);
}

static const struct gguf_kv * gguf_kv_at(const struct gguf_context * ctx, int64_t key_id) {
    if (key_id < 0 || (uint64_t) key_id >= ctx->n_kv) {
        GGML_ABORT("gguf: key id %" PRId64 " out of range (the context has %zu keys)", key_id, ctx->n_kv);
    }
    return &ctx->kv[key_id];
}

// the single value of key_id, which must be of this type
static const void * gguf_scalar_at(const struct gguf_context * ctx, int64_t key_id, enum gguf_type type) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    if (kv->type != type || kv->n != 1) {
        GGML_ABORT("gguf: key '%s' holds %s%s of %zu element(s), not one %s", kv->key,
                   kv->is_array ? "an array of " : "", gguf_type_name(kv->type), kv->n, gguf_type_name(type));
    }
    return kv->data;
}

const char * gguf_get_key(const struct gguf_context * ctx, int64_t key_id) {
    return gguf_kv_at(ctx, key_id)->key;
}

enum gguf_type gguf_get_kv_type(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    return kv->is_array ? GGUF_TYPE_ARRAY : kv->type;
}

enum gguf_type gguf_get_arr_type(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    if (!kv->is_array) {
        GGML_ABORT("gguf: key '%s' is not an array", kv->key);
    }
    return kv->type;
}

#define GGUF_SCALAR_GETTER(suffix, ctype, gtype)                                         \
    ctype gguf_get_val_##suffix(const struct gguf_context * ctx, int64_t key_id) {       \
        ctype v;                                                                         \
        memcpy(&v, gguf_scalar_at(ctx, key_id, gtype), sizeof(v));                       \
        return v;                                                                        \
    }

GGUF_SCALAR_GETTER(u8,  uint8_t,  GGUF_TYPE_UINT8)
GGUF_SCALAR_GETTER(i8,  int8_t,   GGUF_TYPE_INT8)
GGUF_SCALAR_GETTER(u16, uint16_t, GGUF_TYPE_UINT16)
GGUF_SCALAR_GETTER(i16, int16_t,  GGUF_TYPE_INT16)
GGUF_SCALAR_GETTER(u32, uint32_t, GGUF_TYPE_UINT32)
GGUF_SCALAR_GETTER(i32, int32_t,  GGUF_TYPE_INT32)
GGUF_SCALAR_GETTER(f32, float,    GGUF_TYPE_FLOAT32)
GGUF_SCALAR_GETTER(u64, uint64_t, GGUF_TYPE_UINT64)
GGUF_SCALAR_GETTER(i64, int64_t,  GGUF_TYPE_INT64)
GGUF_SCALAR_GETTER(f64, double,   GGUF_TYPE_FLOAT64)

#undef GGUF_SCALAR_GETTER

bool gguf_get_val_bool(const struct gguf_context * ctx, int64_t key_id) {
    return *(const uint8_t *) gguf_scalar_at(ctx, key_id, GGUF_TYPE_BOOL) != 0;
}

const char * gguf_get_val_str(const struct gguf_context * ctx, int64_t key_id) {
    return ((const struct gguf_str *) gguf_scalar_at(ctx, key_id, GGUF_TYPE_STRING))->data;
}

const void * gguf_get_val_data(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    if (kv->n != 1 || kv->type == GGUF_TYPE_STRING) {
        GGML_ABORT("gguf: key '%s' does not hold a single fixed-size value", kv->key);
    }
    return kv->data;
}

size_t gguf_get_arr_n(const struct gguf_context * ctx, int64_t key_id) {
    return gguf_kv_at(ctx, key_id)->n;
}

const void * gguf_get_arr_data(const struct gguf_context * ctx, int64_t key_id) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    if (kv->type == GGUF_TYPE_STRING) {
        GGML_ABORT("gguf: key '%s' holds strings: use gguf_get_arr_str", kv->key);
    }
    return kv->data;
}

const char * gguf_get_arr_str(const struct gguf_context * ctx, int64_t key_id, size_t i) {
    const struct gguf_kv * kv = gguf_kv_at(ctx, key_id);
    if (kv->type != GGUF_TYPE_STRING) {
        GGML_ABORT("gguf: key '%s' holds %s, not strings", kv->key, gguf_type_name(kv->type));
    }
    if (i >= kv->n) {
        GGML_ABORT("gguf: index %zu out of range for key '%s' of %zu strings", i, kv->key, kv->n);
    }
    return ((const struct gguf_str *) kv->data)[i].data;
}

//
// tensor getters
//

int64_t gguf_get_n_tensors(const struct gguf_context * ctx) {
    return (int64_t) ctx->n_info;
}

int64_t gguf_find_tensor(const struct gguf_context * ctx, const char * name) {
    GGML_ASSERT(name != NULL);
    return gguf_index_find(ctx, &ctx->info_index, name);
}

static const struct gguf_tensor_info * gguf_info_at(const struct gguf_context * ctx, int64_t tensor_id) {
    if (tensor_id < 0 || (uint64_t) tensor_id >= ctx->n_info) {
        GGML_ABORT("gguf: tensor id %" PRId64 " out of range (the context has %zu tensors)", tensor_id, ctx->n_info);
    }
    return &ctx->info[tensor_id];
}

size_t gguf_get_tensor_offset(const struct gguf_context * ctx, int64_t tensor_id) {
    return (size_t) gguf_info_at(ctx, tensor_id)->offset;
}

const char * gguf_get_tensor_name(const struct gguf_context * ctx, int64_t tensor_id) {
    return gguf_info_at(ctx, tensor_id)->t.name;
}

const int64_t * gguf_get_tensor_ne(const struct gguf_context * ctx, int64_t tensor_id) {
    return gguf_info_at(ctx, tensor_id)->t.ne;
}

enum ggml_type gguf_get_tensor_type(const struct gguf_context * ctx, int64_t tensor_id) {
    return gguf_info_at(ctx, tensor_id)->t.type;
}

size_t gguf_get_tensor_size(const struct gguf_context * ctx, int64_t tensor_id) {
    return ggml_nbytes(&gguf_info_at(ctx, tensor_id)->t);
}

//
// key/value setters
//

static void * gguf_xmalloc(size_t size) {
    void * p = malloc(size == 0 ? 1 : size);
    if (p == NULL) {
        GGML_ABORT("gguf: out of memory allocating %zu bytes", size);
    }
    return p;
}

static struct gguf_str gguf_str_copy(const char * s, size_t n) {
    GGML_ASSERT(n < SIZE_MAX);
    char * data = (char *) gguf_xmalloc(n + 1);
    memcpy(data, s, n);
    data[n] = '\0';
    return (struct gguf_str) { .data = data, .n = n };
}

// general.alignment may only be set as a u32 power of two (checked before anything changes)
static void gguf_check_reserved_key(const char * key, enum gguf_type type, bool is_array, const void * val) {
    if (strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) != 0) {
        return;
    }
    if (type != GGUF_TYPE_UINT32 || is_array) {
        GGML_ABORT(GGUF_KEY_GENERAL_ALIGNMENT " must be type u32");
    }
    uint32_t alignment;
    memcpy(&alignment, val, sizeof(alignment));
    if (!gguf_is_pow2(alignment)) {
        GGML_ABORT(GGUF_KEY_GENERAL_ALIGNMENT " must be a power of 2, not %" PRIu32, alignment);
    }
}

// The alignment follows general.alignment, and with it every tensor offset.
static void gguf_sync_alignment(struct gguf_context * ctx) {
    const int64_t id = gguf_find_key(ctx, GGUF_KEY_GENERAL_ALIGNMENT);
    const size_t alignment = id < 0 ? GGUF_DEFAULT_ALIGNMENT : gguf_get_val_u32(ctx, id);
    if (alignment != ctx->alignment) {
        ctx->alignment = alignment;
        gguf_update_offsets(ctx, 0);
    }
}

int64_t gguf_remove_key(struct gguf_context * ctx, const char * key) {
    const int64_t key_id = gguf_find_key(ctx, key);
    if (key_id < 0) {
        return -1;
    }
    const bool was_alignment = strcmp(key, GGUF_KEY_GENERAL_ALIGNMENT) == 0;
    gguf_kv_release(&ctx->kv[key_id]);
    memmove(&ctx->kv[key_id], &ctx->kv[key_id + 1], (ctx->n_kv - (size_t) key_id - 1) * sizeof(struct gguf_kv));
    ctx->n_kv--;
    gguf_index_rebuild(ctx, &ctx->kv_index, ctx->n_kv); // the keys after it moved down
    if (was_alignment) {
        gguf_sync_alignment(ctx);
    }
    return key_id;
}

// Replaces key (or appends it) with kv, whose key and data are already owned copies.
static void gguf_replace_kv(struct gguf_context * ctx, struct gguf_kv kv) {
    gguf_remove_key(ctx, kv.key);
    if (!gguf_push_kv(ctx, kv)) {
        GGML_ABORT("gguf: out of memory adding key '%s'", kv.key);
    }
    if (strcmp(kv.key, GGUF_KEY_GENERAL_ALIGNMENT) == 0) {
        gguf_sync_alignment(ctx);
    }
}

static char * gguf_key_copy(const char * key) {
    GGML_ASSERT(key != NULL && key[0] != '\0' && "gguf keys must be non-empty");
    return gguf_str_copy(key, strlen(key)).data;
}

// a fixed-size value or array: n elements of type copied from data
static void gguf_set_fixed(struct gguf_context * ctx, const char * key, enum gguf_type type, bool is_array,
                           const void * data, size_t n) {
    const size_t type_size = gguf_type_size(type);
    if (type_size == 0) {
        GGML_ABORT("gguf: key '%s': type %d is not a fixed-size gguf type", key, (int) type);
    }
    GGML_ASSERT(n <= SIZE_MAX / type_size);
    GGML_ASSERT(n == 0 || data != NULL);
    gguf_check_reserved_key(key, type, is_array, data);

    uint8_t * copy = (uint8_t *) gguf_xmalloc(n * type_size);
    if (n > 0) {
        memcpy(copy, data, n * type_size);
    }
    if (type == GGUF_TYPE_BOOL) {
        for (size_t i = 0; i < n; i++) {
            copy[i] = copy[i] != 0;
        }
    }
    gguf_replace_kv(ctx, (struct gguf_kv) {
        .key      = gguf_key_copy(key),
        .type     = type,
        .is_array = is_array,
        .n        = n,
        .data     = copy,
    });
}

// strings (n of them, each of lengths[i] bytes, or strlen when lengths is NULL)
static void gguf_set_strings(struct gguf_context * ctx, const char * key, bool is_array,
                             const char * const * strs, const size_t * lengths, size_t n) {
    gguf_check_reserved_key(key, GGUF_TYPE_STRING, is_array, NULL);
    GGML_ASSERT(n <= SIZE_MAX / sizeof(struct gguf_str));
    GGML_ASSERT(n == 0 || strs != NULL);

    struct gguf_str * copy = (struct gguf_str *) gguf_xmalloc(n * sizeof(struct gguf_str));
    for (size_t i = 0; i < n; i++) {
        GGML_ASSERT(strs[i] != NULL);
        copy[i] = gguf_str_copy(strs[i], lengths != NULL ? lengths[i] : strlen(strs[i]));
    }
    gguf_replace_kv(ctx, (struct gguf_kv) {
        .key      = gguf_key_copy(key),
        .type     = GGUF_TYPE_STRING,
        .is_array = is_array,
        .n        = n,
        .data     = copy,
    });
}

void gguf_set_val_u8(struct gguf_context * ctx, const char * key, uint8_t val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_UINT8, false, &val, 1);
}

void gguf_set_val_i8(struct gguf_context * ctx, const char * key, int8_t val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_INT8, false, &val, 1);
}

void gguf_set_val_u16(struct gguf_context * ctx, const char * key, uint16_t val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_UINT16, false, &val, 1);
}

void gguf_set_val_i16(struct gguf_context * ctx, const char * key, int16_t val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_INT16, false, &val, 1);
}

void gguf_set_val_u32(struct gguf_context * ctx, const char * key, uint32_t val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_UINT32, false, &val, 1);
}

void gguf_set_val_i32(struct gguf_context * ctx, const char * key, int32_t val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_INT32, false, &val, 1);
}

void gguf_set_val_f32(struct gguf_context * ctx, const char * key, float val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_FLOAT32, false, &val, 1);
}

void gguf_set_val_u64(struct gguf_context * ctx, const char * key, uint64_t val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_UINT64, false, &val, 1);
}

void gguf_set_val_i64(struct gguf_context * ctx, const char * key, int64_t val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_INT64, false, &val, 1);
}

void gguf_set_val_f64(struct gguf_context * ctx, const char * key, double val) {
    gguf_set_fixed(ctx, key, GGUF_TYPE_FLOAT64, false, &val, 1);
}

void gguf_set_val_bool(struct gguf_context * ctx, const char * key, bool val) {
    const uint8_t byte = val ? 1 : 0;
    gguf_set_fixed(ctx, key, GGUF_TYPE_BOOL, false, &byte, 1);
}

void gguf_set_val_str(struct gguf_context * ctx, const char * key, const char * val) {
    gguf_set_strings(ctx, key, false, &val, NULL, 1);
}

void gguf_set_arr_data(struct gguf_context * ctx, const char * key, enum gguf_type type, const void * data, size_t n) {
    gguf_set_fixed(ctx, key, type, true, data, n);
}

void gguf_set_arr_str(struct gguf_context * ctx, const char * key, const char ** data, size_t n) {
    gguf_set_strings(ctx, key, true, data, NULL, n);
}

// copies one kv of another context (strings keep their exact bytes)
static void gguf_copy_kv(struct gguf_context * ctx, const struct gguf_kv * kv) {
    if (kv->type != GGUF_TYPE_STRING) {
        gguf_set_fixed(ctx, kv->key, kv->type, kv->is_array, kv->data, kv->n);
        return;
    }
    const struct gguf_str * src = (const struct gguf_str *) kv->data;
    const char ** strs    = (const char **) gguf_xmalloc(kv->n * sizeof(char *));
    size_t      * lengths = (size_t *) gguf_xmalloc(kv->n * sizeof(size_t));
    for (size_t i = 0; i < kv->n; i++) {
        strs[i]    = src[i].data;
        lengths[i] = src[i].n;
    }
    gguf_set_strings(ctx, kv->key, kv->is_array, strs, lengths, kv->n);
    free(strs);
    free(lengths);
}

void gguf_set_kv(struct gguf_context * ctx, const struct gguf_context * src) {
    if (ctx == src) {
        return; // every key would be replaced by itself
    }
    for (size_t i = 0; i < src->n_kv; i++) {
        gguf_copy_kv(ctx, &src->kv[i]);
    }
}

//
// tensor setters
//

void gguf_add_tensor(struct gguf_context * ctx, const struct ggml_tensor * tensor) {
    GGML_ASSERT(tensor != NULL);
    if (gguf_find_tensor(ctx, tensor->name) != -1) {
        GGML_ABORT("gguf: duplicate tensor name: %s", tensor->name);
    }
    struct gguf_tensor_info info = {
        .t      = *tensor,
        .offset = 0,
    };
    if (!gguf_push_info(ctx, &info)) {
        GGML_ABORT("gguf: out of memory adding tensor '%s'", tensor->name);
    }
    gguf_update_offsets(ctx, ctx->n_info - 1);
}

static struct gguf_tensor_info * gguf_info_by_name(struct gguf_context * ctx, const char * name) {
    const int64_t tensor_id = gguf_find_tensor(ctx, name);
    if (tensor_id < 0) {
        GGML_ABORT("gguf: tensor not found: %s", name);
    }
    return &ctx->info[tensor_id];
}

void gguf_set_tensor_type(struct gguf_context * ctx, const char * name, enum ggml_type type) {
    struct gguf_tensor_info * info = gguf_info_by_name(ctx, name);
    char   reason[160];
    size_t nbytes;
    if (!gguf_tensor_nbytes(type, info->t.ne, &nbytes, reason, sizeof(reason))) {
        GGML_ABORT("gguf: cannot give tensor '%s' type %d: %s", name, (int) type, reason);
    }
    gguf_tensor_set_shape(&info->t, type, info->t.ne);
    gguf_update_offsets(ctx, (size_t)(info - ctx->info) + 1);
}

void gguf_set_tensor_data(struct gguf_context * ctx, const char * name, const void * data) {
    struct gguf_tensor_info * info = gguf_info_by_name(ctx, name);
    // the data now lives in host memory, not in the backend buffer the tensor came from
    info->t.data     = (void *)(uintptr_t) data;
    info->t.buffer   = NULL;
    info->t.view_src = NULL;
}
