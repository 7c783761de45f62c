// gguf-read.c: reading GGUF files from a file, a FILE *, memory or a callback.
//
// The input is untrusted. Every count, length, type id, shape and offset is
// checked before it is used, all arithmetic on them is overflow-checked, no
// read goes past the end of the input, and memory is allocated in proportion
// to the bytes actually present: a count is checked against the bytes left
// before anything is sized from it, and large values are read in growing
// chunks. Any failure logs one line naming what was wrong and where, frees
// everything and returns NULL.

#include "gguf-impl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#ifdef _WIN32
#    define gguf_ftell _ftelli64
#    define gguf_fseek _fseeki64
#else
#    define gguf_ftell ftello
#    define gguf_fseek fseeko
#endif

// upstream's limits on a single string and a single array
#define GGUF_MAX_STRING_LENGTH  ((uint64_t) 1 << 30)
#define GGUF_MAX_ARRAY_ELEMENTS ((uint64_t) 1 << 30)

// the fewest bytes a key/value pair (key of one byte, one u8 value) and a
// tensor info (empty name, no dimensions) can take
#define GGUF_MIN_KV_BYTES     (8 + 1 + 4 + 1)
#define GGUF_MIN_TENSOR_BYTES (8 + 4 + 4 + 8)

// where_at of a check that concerns no single place in the file
#define GGUF_NOWHERE UINT64_MAX

// the first allocation when reading a large value; it doubles as data arrives
#define GGUF_READ_STEP ((size_t) 1 << 20)

struct gguf_reader {
    gguf_reader_callback_t callback;
    void *                 userdata;
    size_t                 max_chunk; // > 0

    uint64_t start; // source offset of the first byte of the GGUF
    uint64_t pos;   // source offset of the next byte to read
    uint64_t end;   // source offset past the last byte that may be read

    char     where[GGML_MAX_NAME + 64]; // what is being read, for error messages
    uint64_t where_at;                  // its offset in the GGUF, or GGUF_NOWHERE
    bool     failed;                    // the error line has been logged
};

// Keys and names come from the file: control characters in them (terminal
// escape sequences, newlines) must not reach the log.
static void gguf_make_printable(char * s) {
    for (; *s != '\0'; s++) {
        if ((unsigned char) *s < 0x20 || *s == 0x7f) {
            *s = '?';
        }
    }
}

GGML_ATTRIBUTE_FORMAT(2, 3)
static bool gguf_fail(struct gguf_reader * r, const char * fmt, ...) {
    if (r->failed) {
        return false;
    }
    char msg[256];
    va_list args;
    va_start(args, fmt);
    vsnprintf(msg, sizeof(msg), fmt, args);
    va_end(args);
    gguf_make_printable(msg);
    gguf_make_printable(r->where);
    if (r->where_at == GGUF_NOWHERE) {
        GGML_LOG_ERROR("gguf: invalid file: %s: %s\n", r->where, msg);
    } else {
        GGML_LOG_ERROR("gguf: invalid file: %s at byte %" PRIu64 ": %s\n", r->where, r->where_at, msg);
    }
    r->failed = true;
    return false;
}

GGML_ATTRIBUTE_FORMAT(2, 3)
static void gguf_set_where(struct gguf_reader * r, const char * fmt, ...) {
    r->where_at = r->pos - r->start;
    va_list args;
    va_start(args, fmt);
    vsnprintf(r->where, sizeof(r->where), fmt, args);
    va_end(args);
}

static uint64_t gguf_bytes_left(const struct gguf_reader * r) {
    return r->end - r->pos;
}

//
// primitive reads
//

static bool gguf_read_raw(struct gguf_reader * r, void * dst, size_t n) {
    if (n > gguf_bytes_left(r)) {
        return gguf_fail(r, "needs %zu bytes but the input has only %" PRIu64 " left", n, gguf_bytes_left(r));
    }
    uint8_t * out  = (uint8_t *) dst;
    size_t    done = 0;
    while (done < n) {
        const size_t chunk = MIN(r->max_chunk, n - done);
        const size_t got   = r->callback(r->userdata, out + done, r->pos, chunk);
        if (got == 0 || got > chunk) {
            return gguf_fail(r, "the input ends early: %zu of %zu bytes could be read", done, n);
        }
        done   += got;
        r->pos += got;
    }
    return true;
}

static bool gguf_read_u32(struct gguf_reader * r, uint32_t * v) {
    uint8_t b[4];
    if (!gguf_read_raw(r, b, sizeof(b))) {
        return false;
    }
    *v = gguf_load_u32(b);
    return true;
}

static bool gguf_read_u64(struct gguf_reader * r, uint64_t * v) {
    uint8_t b[8];
    if (!gguf_read_raw(r, b, sizeof(b))) {
        return false;
    }
    *v = gguf_load_u64(b);
    return true;
}

static bool gguf_read_i32(struct gguf_reader * r, int32_t * v) {
    uint32_t u;
    if (!gguf_read_u32(r, &u)) {
        return false;
    }
    memcpy(v, &u, sizeof(*v));
    return true;
}

static bool gguf_read_i64(struct gguf_reader * r, int64_t * v) {
    uint64_t u;
    if (!gguf_read_u64(r, &u)) {
        return false;
    }
    memcpy(v, &u, sizeof(*v));
    return true;
}

// Reads n bytes into a new buffer with extra bytes to spare after them. The
// buffer grows as the data arrives, so a source that claims more than it has
// never causes more than twice the bytes it delivered to be allocated.
static void * gguf_read_alloc(struct gguf_reader * r, uint64_t n, size_t extra) {
    if (n > gguf_bytes_left(r)) {
        gguf_fail(r, "needs %" PRIu64 " bytes but the input has only %" PRIu64 " left", n, gguf_bytes_left(r));
        return NULL;
    }
    if (n > SIZE_MAX - extra) {
        gguf_fail(r, "%" PRIu64 " bytes do not fit in memory", n);
        return NULL;
    }
    size_t    capacity = (size_t) MIN(n, GGUF_READ_STEP);
    size_t    done     = 0;
    uint8_t * buf      = (uint8_t *) malloc(capacity + extra == 0 ? 1 : capacity + extra);
    while (buf != NULL) {
        if (!gguf_read_raw(r, buf + done, capacity - done)) {
            free(buf);
            return NULL;
        }
        done = capacity;
        if (done == n) {
            return buf;
        }
        capacity = (size_t) MIN(n, (uint64_t) capacity * 2);
        uint8_t * grown = (uint8_t *) realloc(buf, capacity + extra);
        if (grown == NULL) {
            free(buf);
            buf = NULL;
        } else {
            buf = grown;
        }
    }
    gguf_fail(r, "out of memory reading %" PRIu64 " bytes", n);
    return NULL;
}

// what names the string in error messages ("key", "tensor name", ...)
static bool gguf_read_str(struct gguf_reader * r, struct gguf_str * s, const char * what) {
    uint64_t n;
    if (!gguf_read_u64(r, &n)) {
        return false;
    }
    if (n > GGUF_MAX_STRING_LENGTH) {
        return gguf_fail(r, "%s length %" PRIu64 " exceeds the limit of %" PRIu64, what, n, GGUF_MAX_STRING_LENGTH);
    }
    if (n > gguf_bytes_left(r)) {
        return gguf_fail(r, "%s length %" PRIu64 " exceeds the %" PRIu64 " bytes left", what, n, gguf_bytes_left(r));
    }
    char * data = (char *) gguf_read_alloc(r, n, 1);
    if (data == NULL) {
        return false;
    }
    data[n] = '\0';
    *s = (struct gguf_str) { .data = data, .n = (size_t) n };
    return true;
}

// names are unique: a duplicate is reported with the index of the first
static bool gguf_check_unique(struct gguf_reader * r, int64_t other, const char * name, const char * what) {
    if (other >= 0) {
        return gguf_fail(r, "duplicate %s '%s' (also %s %" PRId64 ")", what, name, what, other);
    }
    return true;
}

//
// header and key/value pairs
//

static bool gguf_read_header(struct gguf_reader * r, struct gguf_context * ctx, int64_t * n_tensors, int64_t * n_kv) {
    gguf_set_where(r, "header");
    char magic[4];
    if (!gguf_read_raw(r, magic, sizeof(magic))) {
        return false;
    }
    if (memcmp(magic, GGUF_MAGIC, sizeof(magic)) != 0) {
        return gguf_fail(r, "bad magic %02x %02x %02x %02x, expected 'GGUF'",
                         (uint8_t) magic[0], (uint8_t) magic[1], (uint8_t) magic[2], (uint8_t) magic[3]);
    }
    if (!gguf_read_u32(r, &ctx->version)) {
        return false;
    }
    if (ctx->version != 2 && ctx->version != GGUF_VERSION) {
        if (ctx->version != 0 && (ctx->version & 0xFFFF) == 0) {
            return gguf_fail(r, "version %" PRIu32 " is not supported (a file of the other byte order?)", ctx->version);
        }
        return gguf_fail(r, "version %" PRIu32 " is not supported (2 and 3 are)", ctx->version);
    }
    if (!gguf_read_i64(r, n_tensors) || !gguf_read_i64(r, n_kv)) {
        return false;
    }
    // The counts are believed only as far as the bytes left could hold them.
    const uint64_t left = gguf_bytes_left(r);
    if (*n_tensors < 0 || (uint64_t) *n_tensors > left / GGUF_MIN_TENSOR_BYTES) {
        return gguf_fail(r, "%" PRId64 " tensors claimed, but the %" PRIu64 " bytes left hold at most %" PRIu64,
                         *n_tensors, left, left / GGUF_MIN_TENSOR_BYTES);
    }
    if (*n_kv < 0 || (uint64_t) *n_kv > left / GGUF_MIN_KV_BYTES) {
        return gguf_fail(r, "%" PRId64 " key/value pairs claimed, but the %" PRIu64 " bytes left hold at most %" PRIu64,
                         *n_kv, left, left / GGUF_MIN_KV_BYTES);
    }
    return true;
}

static bool gguf_read_type_id(struct gguf_reader * r, enum gguf_type * type, bool element) {
    int32_t id;
    if (!gguf_read_i32(r, &id)) {
        return false;
    }
    if (id < 0 || id >= GGUF_TYPE_COUNT || (element && id == GGUF_TYPE_ARRAY)) {
        return gguf_fail(r, "invalid %s type id %" PRId32, element ? "array element" : "value", id);
    }
    *type = (enum gguf_type) id;
    return true;
}

static bool gguf_read_fixed_values(struct gguf_reader * r, struct gguf_kv * kv) {
    const size_t type_size = gguf_type_size(kv->type);
    uint64_t nbytes;
    if (!gguf_mul_u64(kv->n, type_size, &nbytes) || nbytes > gguf_bytes_left(r)) {
        return gguf_fail(r, "%zu values of type %s do not fit in the %" PRIu64 " bytes left",
                         kv->n, gguf_type_name(kv->type), gguf_bytes_left(r));
    }
    uint8_t * data = (uint8_t *) gguf_read_alloc(r, nbytes, 0);
    if (data == NULL) {
        return false;
    }
    gguf_swap_to_host(data, kv->n, type_size);
    if (kv->type == GGUF_TYPE_BOOL) {
        for (size_t i = 0; i < kv->n; i++) {
            data[i] = data[i] != 0;
        }
    }
    kv->data = data;
    return true;
}

static bool gguf_read_string_values(struct gguf_reader * r, struct gguf_kv * kv) {
    const size_t n = kv->n;
    if (n > gguf_bytes_left(r) / sizeof(uint64_t)) {
        return gguf_fail(r, "%zu strings do not fit in the %" PRIu64 " bytes left", n, gguf_bytes_left(r));
    }
    // kv->n counts the strings read so far, so that a failure frees exactly those
    kv->n = 0;
    size_t capacity = 0;
    while (kv->n < n) {
        if (kv->n == capacity) {
            capacity = MIN(n, capacity == 0 ? 64 : capacity * 2);
            void * grown = realloc(kv->data, capacity * sizeof(struct gguf_str));
            if (grown == NULL) {
                return gguf_fail(r, "out of memory reading %zu strings", n);
            }
            kv->data = grown;
        }
        if (!gguf_read_str(r, &((struct gguf_str *) kv->data)[kv->n], "string")) {
            return false;
        }
        kv->n++;
    }
    if (kv->data == NULL) {
        kv->data = malloc(1); // an empty array still has a data pointer
        if (kv->data == NULL) {
            return gguf_fail(r, "out of memory");
        }
    }
    return true;
}

static bool gguf_read_kv_value(struct gguf_reader * r, struct gguf_kv * kv) {
    if (!gguf_read_type_id(r, &kv->type, false)) {
        return false;
    }
    kv->n = 1;
    if (kv->type == GGUF_TYPE_ARRAY) {
        uint64_t n;
        kv->is_array = true;
        if (!gguf_read_type_id(r, &kv->type, true) || !gguf_read_u64(r, &n)) {
            return false;
        }
        if (n > GGUF_MAX_ARRAY_ELEMENTS) {
            return gguf_fail(r, "array length %" PRIu64 " exceeds the limit of %" PRIu64, n, GGUF_MAX_ARRAY_ELEMENTS);
        }
        kv->n = (size_t) n;
    }
    return kv->type == GGUF_TYPE_STRING ? gguf_read_string_values(r, kv) : gguf_read_fixed_values(r, kv);
}

static bool gguf_read_kvs(struct gguf_reader * r, struct gguf_context * ctx, int64_t n_kv) {
    bool ok = true;
    for (int64_t i = 0; ok && i < n_kv; i++) {
        gguf_set_where(r, "key/value pair %" PRId64, i);
        const uint64_t kv_at = r->where_at;
        struct gguf_str key = { .data = NULL, .n = 0 };
        if (!gguf_read_str(r, &key, "key")) {
            ok = false;
            break;
        }
        struct gguf_kv kv = { .key = key.data, .type = GGUF_TYPE_UINT8, .is_array = false, .n = 0, .data = NULL };
        if (key.n == 0 || strlen(key.data) != key.n) {
            ok = gguf_fail(r, "the key is empty or holds a NUL byte");
        } else {
            gguf_set_where(r, "key/value pair %" PRId64 " ('%.*s')", i, GGML_MAX_NAME, key.data);
            r->where_at = kv_at;
            ok = gguf_read_kv_value(r, &kv);
        }
        ok = ok && gguf_check_unique(r, gguf_find_key(ctx, kv.key), kv.key, "key");
        if (ok && !gguf_push_kv(ctx, kv)) {
            ok = gguf_fail(r, "out of memory");
        }
        if (!ok) {
            gguf_kv_release(&kv);
            break;
        }
    }
    return ok;
}

static bool gguf_read_alignment(struct gguf_reader * r, struct gguf_context * ctx) {
    gguf_set_where(r, "key '%s'", GGUF_KEY_GENERAL_ALIGNMENT);
    r->where_at = GGUF_NOWHERE;
    const int64_t id = gguf_find_key(ctx, GGUF_KEY_GENERAL_ALIGNMENT);
    if (id < 0) {
        ctx->alignment = GGUF_DEFAULT_ALIGNMENT;
        return true;
    }
    const struct gguf_kv * kv = &ctx->kv[id];
    if (kv->is_array || kv->type != GGUF_TYPE_UINT32) {
        return gguf_fail(r, "must be of type u32, not %s%s", kv->is_array ? "an array of " : "", gguf_type_name(kv->type));
    }
    const uint32_t alignment = gguf_get_val_u32(ctx, id);
    if (!gguf_is_pow2(alignment)) {
        return gguf_fail(r, "%" PRIu32 " is not a power of 2", alignment);
    }
    ctx->alignment = alignment;
    return true;
}

//
// tensor infos
//

static bool gguf_read_tensor_name(struct gguf_reader * r, struct gguf_tensor_info * info) {
    struct gguf_str name = { .data = NULL, .n = 0 };
    if (!gguf_read_str(r, &name, "tensor name")) {
        return false;
    }
    bool ok = true;
    if (name.n >= GGML_MAX_NAME) {
        ok = gguf_fail(r, "tensor name of %zu bytes is too long (the limit is %d)", name.n, GGML_MAX_NAME - 1);
    } else if (strlen(name.data) != name.n) {
        ok = gguf_fail(r, "tensor name holds a NUL byte");
    } else {
        memcpy(info->t.name, name.data, name.n + 1);
    }
    free(name.data);
    return ok;
}

static bool gguf_read_tensor_shape(struct gguf_reader * r, int64_t * ne, enum ggml_type * type) {
    uint32_t n_dims;
    if (!gguf_read_u32(r, &n_dims)) {
        return false;
    }
    if (n_dims > GGML_MAX_DIMS) {
        return gguf_fail(r, "%" PRIu32 " dimensions, at most %d are supported", n_dims, GGML_MAX_DIMS);
    }
    for (uint32_t j = 0; j < GGML_MAX_DIMS; j++) {
        ne[j] = 1;
        if (j < n_dims && !gguf_read_i64(r, &ne[j])) {
            return false;
        }
    }
    int32_t type_id;
    if (!gguf_read_i32(r, &type_id)) {
        return false;
    }
    *type = (enum ggml_type) type_id;
    if (type_id < 0 || type_id >= GGML_TYPE_COUNT) {
        *type = GGML_TYPE_COUNT; // an id outside the enum is not stored in it
    }
    char   reason[200];
    size_t nbytes;
    if (!gguf_tensor_nbytes(*type, ne, &nbytes, reason, sizeof(reason))) {
        if (*type == GGML_TYPE_COUNT) {
            snprintf(reason, sizeof(reason), "type id %" PRId32 " is not a ggml type (0 to %d)", type_id, GGML_TYPE_COUNT - 1);
        }
        return gguf_fail(r, "%s", reason);
    }
    return true;
}

static bool gguf_read_tensor_infos(struct gguf_reader * r, struct gguf_context * ctx, int64_t n_tensors) {
    if ((uint64_t) n_tensors > gguf_bytes_left(r) / GGUF_MIN_TENSOR_BYTES) {
        gguf_set_where(r, "tensor infos");
        return gguf_fail(r, "%" PRId64 " tensors claimed, but the %" PRIu64 " bytes left hold at most %" PRIu64,
                         n_tensors, gguf_bytes_left(r), gguf_bytes_left(r) / GGUF_MIN_TENSOR_BYTES);
    }
    bool ok = true;
    for (int64_t i = 0; ok && i < n_tensors; i++) {
        gguf_set_where(r, "tensor info %" PRId64, i);
        const uint64_t info_at = r->where_at;
        struct gguf_tensor_info info;
        memset(&info, 0, sizeof(info));
        if (!gguf_read_tensor_name(r, &info)) {
            ok = false;
            break;
        }
        gguf_set_where(r, "tensor info %" PRId64 " ('%s')", i, info.t.name);
        r->where_at = info_at;

        int64_t        ne[GGML_MAX_DIMS];
        enum ggml_type type = GGML_TYPE_COUNT;
        ok = gguf_read_tensor_shape(r, ne, &type) && gguf_read_u64(r, &info.offset);
        if (ok) {
            gguf_tensor_set_shape(&info.t, type, ne);
            ok = gguf_check_unique(r, gguf_find_tensor(ctx, info.t.name), info.t.name, "tensor name") &&
                 (gguf_push_info(ctx, &info) ? true : gguf_fail(r, "out of memory"));
        }
    }
    return ok;
}

// Tensor data is one block after the padded metadata: each tensor at the
// running size of those before it, padded to the alignment.
static bool gguf_check_tensor_offsets(struct gguf_reader * r, struct gguf_context * ctx) {
    uint64_t size = 0;
    for (size_t i = 0; i < ctx->n_info; i++) {
        const struct gguf_tensor_info * info = &ctx->info[i];
        gguf_set_where(r, "tensor info %zu ('%s')", i, info->t.name);
        r->where_at = GGUF_NOWHERE;
        if (info->offset != size) {
            return gguf_fail(r, "data offset %" PRIu64 ", expected %" PRIu64 " (tensor data is packed in order, "
                             "each tensor aligned to %zu bytes)", info->offset, size, ctx->alignment);
        }
        uint64_t padded;
        if (!gguf_pad_u64(ggml_nbytes(&info->t), ctx->alignment, &padded) || !gguf_add_u64(size, padded, &size) ||
            size > SIZE_MAX) {
            return gguf_fail(r, "the tensor data overflows the address space");
        }
    }
    ctx->size = (size_t) size;
    return true;
}

//
// tensor data
//

// bytes of the data section holding tensor data (the last tensor's padding may be absent)
static uint64_t gguf_data_used(const struct gguf_context * ctx) {
    if (ctx->n_info == 0) {
        return 0;
    }
    const struct gguf_tensor_info * last = &ctx->info[ctx->n_info - 1];
    return last->offset + ggml_nbytes(&last->t);
}

// Checks that the data section is present before memory is sized from it; a
// one-byte read at its end also catches a callback whose size was overstated.
static bool gguf_check_data_present(struct gguf_reader * r, const struct gguf_context * ctx) {
    gguf_set_where(r, "tensor data");
    const uint64_t used = gguf_data_used(ctx);
    if (used > gguf_bytes_left(r)) {
        return gguf_fail(r, "the data section needs %" PRIu64 " bytes but the input has only %" PRIu64 " left",
                         used, gguf_bytes_left(r));
    }
    uint8_t last;
    if (used > 0 && r->callback(r->userdata, &last, r->pos + used - 1, 1) != 1) {
        return gguf_fail(r, "the input ends before the %" PRIu64 " bytes of the data section", used);
    }
    return true;
}

static struct ggml_context * gguf_new_ggml_context(struct gguf_reader * r, const struct gguf_context * ctx, bool no_alloc) {
    const uint64_t n_objects = ctx->n_info + (no_alloc ? 0 : 1);
    uint64_t mem_size;
    uint64_t data_size = 0;
    if (!no_alloc && !gguf_pad_u64(ctx->size, GGML_MEM_ALIGN, &data_size)) {
        data_size = UINT64_MAX;
    }
    if (!gguf_mul_u64(n_objects, ggml_tensor_overhead(), &mem_size) || !gguf_add_u64(mem_size, data_size, &mem_size) ||
        mem_size > SIZE_MAX - GGML_MEM_ALIGN || ctx->size > INT64_MAX) {
        gguf_fail(r, "the ggml context for %zu tensors of %zu bytes is too large", ctx->n_info, ctx->size);
        return NULL;
    }
    const struct ggml_init_params params = {
        .mem_size   = (size_t) mem_size,
        .mem_buffer = NULL,
        .no_alloc   = no_alloc,
    };
    struct ggml_context * gctx = ggml_init(params);
    if (gctx == NULL) {
        r->failed = true; // ggml_init has logged the failed allocation, with its size
    }
    return gctx;
}

// Creates the ggml context: with data, a blob tensor holding the data section
// (as upstream, named "GGUF tensor data binary blob") and one tensor per
// file tensor pointing into it; without, the tensors alone.
static struct ggml_context * gguf_load_tensors(struct gguf_reader * r, const struct gguf_context * ctx, bool no_alloc) {
    if (!no_alloc && !gguf_check_data_present(r, ctx)) {
        return NULL;
    }
    struct ggml_context * gctx = gguf_new_ggml_context(r, ctx, no_alloc);
    if (gctx == NULL) {
        return NULL;
    }
    uint8_t * blob = NULL;
    if (!no_alloc) {
        struct ggml_tensor * t = ggml_new_tensor_1d(gctx, GGML_TYPE_I8, (int64_t) ctx->size);
        ggml_set_name(t, "GGUF tensor data binary blob");
        blob = (uint8_t *) t->data;
        const uint64_t used = gguf_data_used(ctx);
        if (!gguf_read_raw(r, blob, (size_t) used)) {
            ggml_free(gctx);
            return NULL;
        }
        if (ctx->size > used) {
            memset(blob + used, 0, ctx->size - (size_t) used); // the last tensor's padding may be absent
        }
        // the data is little-endian: a big-endian host converts it or refuses the file
        // (an empty data section has no blob: nothing to convert)
        for (size_t i = 0; blob != NULL && i < ctx->n_info; i++) {
            const struct gguf_tensor_info * info = &ctx->info[i];
            if (!gguf_tensor_data_to_host(info->t.name, info->t.type, blob + info->offset, ggml_nbytes(&info->t))) {
                ggml_free(gctx);
                return NULL;
            }
        }
    }
    ggml_set_no_alloc(gctx, true);
    for (size_t i = 0; i < ctx->n_info; i++) {
        const struct gguf_tensor_info * info = &ctx->info[i];
        struct ggml_tensor * t = ggml_new_tensor(gctx, info->t.type, GGML_MAX_DIMS, info->t.ne);
        ggml_set_name(t, info->t.name);
        if (blob != NULL) {
            t->data = blob + info->offset;
        }
    }
    ggml_set_no_alloc(gctx, no_alloc);
    return gctx;
}

//
// entry points
//

static struct gguf_context * gguf_read(struct gguf_reader * r, struct gguf_init_params params) {
    if (params.ctx != NULL) {
        *params.ctx = NULL;
    }
    struct gguf_context * ctx = gguf_init_empty();
    if (ctx == NULL) {
        return NULL;
    }
    int64_t n_tensors = 0;
    int64_t n_kv      = 0;
    bool ok = gguf_read_header(r, ctx, &n_tensors, &n_kv) &&
              gguf_read_kvs(r, ctx, n_kv) &&
              gguf_read_alignment(r, ctx) &&
              gguf_read_tensor_infos(r, ctx, n_tensors);

    // the data section starts aligned (relative to the start of the GGUF) when there are tensors
    if (ok && n_tensors > 0) {
        gguf_set_where(r, "padding before the tensor data");
        uint64_t data_start;
        if (!gguf_pad_u64(r->pos - r->start, ctx->alignment, &data_start) || data_start > r->end - r->start) {
            ok = gguf_fail(r, "the input ends in the padding before the tensor data");
        } else {
            r->pos = r->start + data_start;
        }
    }
    ok = ok && gguf_check_tensor_offsets(r, ctx);
    if (ok && r->pos > SIZE_MAX) {
        ok = gguf_fail(r, "the data section starts beyond the address space");
    }
    ctx->offset = (size_t) r->pos;

    if (ok && params.ctx != NULL) {
        *params.ctx = gguf_load_tensors(r, ctx, params.no_alloc);
        ok = *params.ctx != NULL;
    }
    if (!ok) {
        gguf_free(ctx);
        return NULL;
    }
    return ctx;
}

struct gguf_context * gguf_init_from_callback(gguf_reader_callback_t callback, void * userdata, size_t max_chunk_read,
                                              uint64_t max_expected_size, struct gguf_init_params params) {
    if (callback == NULL) {
        GGML_LOG_ERROR("%s: no callback given\n", __func__);
        return NULL;
    }
    struct gguf_reader r = {
        .callback  = callback,
        .userdata  = userdata,
        .max_chunk = max_chunk_read == 0 ? SIZE_MAX : max_chunk_read,
        .start     = 0,
        .pos       = 0,
        .end       = max_expected_size,
        .where     = "",
        .where_at  = 0,
        .failed    = false,
    };
    return gguf_read(&r, params);
}

struct gguf_buffer_source {
    const uint8_t * data;
    size_t          size;
};

static size_t gguf_buffer_read(void * userdata, void * output, uint64_t offset, size_t len) {
    const struct gguf_buffer_source * src = (const struct gguf_buffer_source *) userdata;
    if (offset >= src->size) {
        return 0;
    }
    const size_t n = MIN(len, src->size - (size_t) offset);
    memcpy(output, src->data + offset, n);
    return n;
}

struct gguf_context * gguf_init_from_buffer(const void * data, size_t size, struct gguf_init_params params) {
    if (data == NULL || size == 0) {
        GGML_LOG_ERROR("%s: empty buffer\n", __func__);
        if (params.ctx != NULL) {
            *params.ctx = NULL;
        }
        return NULL;
    }
    struct gguf_buffer_source src = {
        .data = (const uint8_t *) data,
        .size = size,
    };
    return gguf_init_from_callback(gguf_buffer_read, &src, 0, size, params);
}

struct gguf_file_source {
    FILE *   file;
    uint64_t pos; // where the file is positioned, to seek only when needed
    bool     pos_known;
};

static size_t gguf_file_read(void * userdata, void * output, uint64_t offset, size_t len) {
    struct gguf_file_source * src = (struct gguf_file_source *) userdata;
    if (!src->pos_known || src->pos != offset) {
        if (offset > INT64_MAX || gguf_fseek(src->file, (int64_t) offset, SEEK_SET) != 0) {
            src->pos_known = false;
            return 0;
        }
        src->pos       = offset;
        src->pos_known = true;
    }
    const size_t n = fread(output, 1, len, src->file);
    src->pos += n;
    return n;
}

struct gguf_context * gguf_init_from_file_ptr(FILE * file, struct gguf_init_params params) {
    if (params.ctx != NULL) {
        *params.ctx = NULL;
    }
    if (file == NULL) {
        GGML_LOG_ERROR("%s: no file given\n", __func__);
        return NULL;
    }
    const int64_t cur = gguf_ftell(file);
    int64_t end = -1;
    if (cur >= 0 && gguf_fseek(file, 0, SEEK_END) == 0) {
        end = gguf_ftell(file);
    }
    if (cur < 0 || end < cur || gguf_fseek(file, cur, SEEK_SET) != 0) {
        GGML_LOG_ERROR("%s: the file is not seekable\n", __func__);
        return NULL;
    }
    struct gguf_file_source src = {
        .file      = file,
        .pos       = (uint64_t) cur,
        .pos_known = true,
    };
    struct gguf_reader r = {
        .callback  = gguf_file_read,
        .userdata  = &src,
        .max_chunk = SIZE_MAX,
        .start     = (uint64_t) cur,
        .pos       = (uint64_t) cur,
        .end       = (uint64_t) end,
        .where     = "",
        .where_at  = 0,
        .failed    = false,
    };
    return gguf_read(&r, params);
}

struct gguf_context * gguf_init_from_file(const char * fname, struct gguf_init_params params) {
    FILE * file = ggml_fopen(fname, "rb");
    if (file == NULL) {
        GGML_LOG_ERROR("%s: failed to open GGUF file '%s' (%s)\n", __func__, fname, strerror(errno));
        if (params.ctx != NULL) {
            *params.ctx = NULL;
        }
        return NULL;
    }
    struct gguf_context * ctx = gguf_init_from_file_ptr(file, params);
    fclose(file);
    return ctx;
}
