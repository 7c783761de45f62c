// gguf-write.c: writing a GGUF context to a file or to memory.
//
// One writer serves three destinations: a FILE *, a caller's buffer (for
// gguf_get_meta_data) and none at all, only counting bytes (for
// gguf_get_meta_size), so that the size and the bytes cannot disagree.
// Numbers and tensor data are written little-endian whatever the host's byte
// order (gguf-byteswap.c converts the data; types it cannot convert fail).

#include "gguf-impl.h"
#include "ggml-backend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

struct gguf_writer {
    FILE *    file; // written to when not NULL
    uint8_t * buf;  // else written to when not NULL (the caller sized it)
    size_t    pos;  // bytes written so far
    bool      ok;   // false after a failed write; later writes do nothing
    int       err;  // errno of the failed write
};

static void gguf_write_bytes(struct gguf_writer * w, const void * data, size_t n) {
    if (!w->ok || n == 0) {
        return;
    }
    if (w->file != NULL) {
        if (fwrite(data, 1, n, w->file) != n) {
            w->ok  = false;
            w->err = errno;
            return;
        }
    } else if (w->buf != NULL) {
        memcpy(w->buf + w->pos, data, n);
    }
    w->pos += n;
}

static void gguf_write_u32(struct gguf_writer * w, uint32_t v) {
    uint8_t b[4];
    gguf_store_u32(b, v);
    gguf_write_bytes(w, b, sizeof(b));
}

static void gguf_write_u64(struct gguf_writer * w, uint64_t v) {
    uint8_t b[8];
    gguf_store_u64(b, v);
    gguf_write_bytes(w, b, sizeof(b));
}

static void gguf_write_i32(struct gguf_writer * w, int32_t v) {
    uint32_t u;
    memcpy(&u, &v, sizeof(u));
    gguf_write_u32(w, u);
}

static void gguf_write_i64(struct gguf_writer * w, int64_t v) {
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    gguf_write_u64(w, u);
}

static void gguf_write_str(struct gguf_writer * w, const char * s, size_t n) {
    gguf_write_u64(w, n);
    gguf_write_bytes(w, s, n);
}

static void gguf_write_zeros(struct gguf_writer * w, size_t n) {
    static const uint8_t zeros[4096] = { 0 };
    while (n > 0) {
        const size_t chunk = MIN(n, sizeof(zeros));
        gguf_write_bytes(w, zeros, chunk);
        n -= chunk;
    }
}

static void gguf_write_padding(struct gguf_writer * w, size_t alignment) {
    gguf_write_zeros(w, GGML_PAD(w->pos, alignment) - w->pos);
}

// n elements of elem_size bytes from host order to little-endian
static void gguf_write_elements(struct gguf_writer * w, const void * data, size_t n, size_t elem_size) {
    if (gguf_host_is_little_endian()) {
        gguf_write_bytes(w, data, n * elem_size);
        return;
    }
    const uint8_t * p = (const uint8_t *) data;
    for (size_t i = 0; i < n; i++, p += elem_size) {
        uint8_t tmp[8];
        memcpy(tmp, p, elem_size);
        gguf_swap_to_host(tmp, 1, elem_size);
        gguf_write_bytes(w, tmp, elem_size);
    }
}

static void gguf_write_kv(struct gguf_writer * w, const struct gguf_kv * kv) {
    gguf_write_str(w, kv->key, strlen(kv->key));
    if (kv->is_array) {
        gguf_write_i32(w, GGUF_TYPE_ARRAY);
        gguf_write_i32(w, kv->type);
        gguf_write_u64(w, kv->n);
    } else {
        gguf_write_i32(w, kv->type);
    }
    if (kv->type == GGUF_TYPE_STRING) {
        const struct gguf_str * strs = (const struct gguf_str *) kv->data;
        for (size_t i = 0; i < kv->n; i++) {
            gguf_write_str(w, strs[i].data, strs[i].n);
        }
    } else {
        gguf_write_elements(w, kv->data, kv->n, gguf_type_size(kv->type));
    }
}

// As ggml_n_dims, but a trailing dimension of 0 counts too: dropping it
// would turn an empty tensor into a non-empty one when read back.
static int gguf_tensor_n_dims(const struct ggml_tensor * t) {
    for (int j = GGML_MAX_DIMS - 1; j >= 1; j--) {
        if (t->ne[j] != 1) {
            return j + 1;
        }
    }
    return 1;
}

static void gguf_write_tensor_info(struct gguf_writer * w, const struct gguf_tensor_info * info) {
    const int n_dims = gguf_tensor_n_dims(&info->t);
    gguf_write_str(w, info->t.name, strlen(info->t.name));
    gguf_write_u32(w, (uint32_t) n_dims);
    for (int j = 0; j < n_dims; j++) {
        gguf_write_i64(w, info->t.ne[j]);
    }
    gguf_write_i32(w, info->t.type);
    gguf_write_u64(w, info->offset);
}

static void gguf_write_meta(struct gguf_writer * w, const struct gguf_context * ctx) {
    gguf_write_bytes(w, GGUF_MAGIC, 4);
    gguf_write_u32(w, ctx->version);
    gguf_write_i64(w, (int64_t) ctx->n_info);
    gguf_write_i64(w, (int64_t) ctx->n_kv);
    for (size_t i = 0; i < ctx->n_kv; i++) {
        gguf_write_kv(w, &ctx->kv[i]);
    }
    for (size_t i = 0; i < ctx->n_info; i++) {
        gguf_write_tensor_info(w, &ctx->info[i]);
    }
    gguf_write_padding(w, ctx->alignment);
}

// Tensor data goes out in bounded pieces: data in a backend buffer is fetched
// piece by piece, so that a large tensor does not need a host copy at once,
// and on a big-endian host every piece is converted to little-endian in a
// copy. Pieces are whole blocks of the type, as the conversion needs.
static void gguf_write_data_pieces(struct gguf_writer * w, const struct ggml_tensor * t, size_t nbytes, bool swap) {
    const size_t block = ggml_type_size(t->type);
    const size_t step  = MIN(nbytes, (((size_t) 1 << 22) / block + 1) * block);
    uint8_t *    piece = (uint8_t *) malloc(step);
    if (piece == NULL) {
        w->ok  = false;
        w->err = ENOMEM;
        return;
    }
    for (size_t done = 0; done < nbytes && w->ok; done += step) {
        const size_t n = MIN(step, nbytes - done);
        if (t->buffer != NULL) {
            ggml_backend_tensor_get(t, piece, done, n);
        } else {
            memcpy(piece, (const uint8_t *) t->data + done, n);
        }
        if (swap && !gguf_byteswap_tensor_data(t->name, t->type, piece, n)) {
            w->ok  = false;
            w->err = ENOTSUP;
            break;
        }
        gguf_write_bytes(w, piece, n);
    }
    free(piece);
}

static void gguf_write_tensor_data(struct gguf_writer * w, const struct gguf_context * ctx, size_t data_start) {
    const bool swap = !gguf_host_is_little_endian();
    for (size_t i = 0; i < ctx->n_info && w->ok; i++) {
        const struct gguf_tensor_info * info = &ctx->info[i];
        GGML_ASSERT(w->pos - data_start == info->offset);
        if (!ggml_is_contiguous(&info->t)) {
            GGML_ABORT("gguf: tensor '%s' is not contiguous and cannot be written", info->t.name);
        }
        const size_t nbytes = ggml_nbytes(&info->t);
        if (nbytes > 0 && info->t.buffer == NULL && info->t.data == NULL) {
            GGML_ABORT("gguf: tensor '%s' has no data: set it with gguf_set_tensor_data", info->t.name);
        }
        if (info->t.buffer == NULL && !swap) {
            gguf_write_bytes(w, info->t.data, nbytes);
        } else if (nbytes > 0) {
            gguf_write_data_pieces(w, &info->t, nbytes, swap);
        }
        gguf_write_padding(w, ctx->alignment);
    }
}

bool gguf_write_to_file_ptr(const struct gguf_context * ctx, FILE * file, bool only_meta) {
    GGML_ASSERT(file != NULL);
    struct gguf_writer w = { .file = file, .buf = NULL, .pos = 0, .ok = true, .err = 0 };
    gguf_write_meta(&w, ctx);
    if (!only_meta) {
        gguf_write_tensor_data(&w, ctx, w.pos);
    }
    if (w.ok && fflush(file) != 0) {
        w.ok  = false;
        w.err = errno;
    }
    if (!w.ok) {
        GGML_LOG_ERROR("%s: failed to write GGUF data after %zu bytes (%s)\n", __func__, w.pos, strerror(w.err));
    }
    return w.ok;
}

// The file is written through a buffer of this size, so that it reaches the
// file in whole pieces at multiples of 4 MiB: the page cache then keeps a
// file just written in 2 MiB folios, and a program mapping it right after
// maps its tensors with 2 MiB pages (pieces of a few MiB at unaligned offsets
// leave it in 4 KiB ones). Without the memory the stream's own buffer serves.
#define GGUF_WRITE_BUFFER_BYTES ((size_t) 4 << 20)

bool gguf_write_to_file(const struct gguf_context * ctx, const char * fname, bool only_meta) {
    FILE * file = ggml_fopen(fname, "wb");
    if (file == NULL) {
        GGML_LOG_ERROR("%s: failed to open '%s' for writing (%s)\n", __func__, fname, strerror(errno));
        return false;
    }
    char * buf = only_meta ? NULL : (char *) malloc(GGUF_WRITE_BUFFER_BYTES);
    if (buf != NULL && setvbuf(file, buf, _IOFBF, GGUF_WRITE_BUFFER_BYTES) != 0) {
        free(buf);
        buf = NULL;
    }
    bool ok = gguf_write_to_file_ptr(ctx, file, only_meta);
    if (fclose(file) != 0 && ok) {
        GGML_LOG_ERROR("%s: failed to close '%s' (%s)\n", __func__, fname, strerror(errno));
        ok = false;
    }
    free(buf); // after fclose: the stream used it until then
    return ok;
}

size_t gguf_get_meta_size(const struct gguf_context * ctx) {
    struct gguf_writer w = { .file = NULL, .buf = NULL, .pos = 0, .ok = true, .err = 0 };
    gguf_write_meta(&w, ctx);
    return w.pos;
}

void gguf_get_meta_data(const struct gguf_context * ctx, void * data) {
    GGML_ASSERT(data != NULL);
    struct gguf_writer w = { .file = NULL, .buf = (uint8_t *) data, .pos = 0, .ok = true, .err = 0 };
    gguf_write_meta(&w, ctx);
}
