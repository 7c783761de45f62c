// ggml-alloc-ctx.c: the linear allocator (ggml_tallocr) and the allocation
// of every tensor of a context in new buffers
// (ggml_backend_alloc_ctx_tensors[_from_buft][_size]).
//
// A context's tensors are packed in order. When the next tensor would take
// a buffer past its type's max size, a new buffer is started; several
// buffers are handed back joined in one multi-buffer. A tensor larger than
// the max size gets a buffer of its own, which the buffer type may refuse.

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"

//
// ggml_tallocr
//

static bool is_power_of_two(size_t x) {
    return x != 0 && (x & (x - 1)) == 0;
}

struct ggml_tallocr ggml_tallocr_new(ggml_backend_buffer_t buffer) {
    void * base = ggml_backend_buffer_get_base(buffer);
    const size_t align = ggml_backend_buffer_get_alignment(buffer);
    GGML_ASSERT(is_power_of_two(align) && "buffer alignment must be a power of two");

    // the first aligned address at or after base
    const size_t misalign = (size_t)((uintptr_t) base % align);
    return (struct ggml_tallocr) {
        .buffer    = buffer,
        .base      = base,
        .alignment = align,
        .offset    = misalign == 0 ? 0 : align - misalign,
    };
}

enum ggml_status ggml_tallocr_alloc(struct ggml_tallocr * talloc, struct ggml_tensor * tensor) {
    const size_t size     = GGML_PAD(ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor), talloc->alignment);
    const size_t capacity = ggml_backend_buffer_get_size(talloc->buffer);

    // the buffer was sized by the caller: running out is a sizing error
    if (talloc->offset > capacity || size > capacity - talloc->offset) {
        GGML_LOG_ERROR("%s: not enough space in the buffer to allocate %s (needed %zu, available %zu)\n",
                       __func__, tensor->name, size, capacity - MIN(capacity, talloc->offset));
        GGML_ABORT("ggml_tallocr: not enough space in the %s buffer for tensor '%s'",
                   ggml_backend_buffer_name(talloc->buffer), tensor->name);
    }

    void * addr = (char *) talloc->base + talloc->offset;
    talloc->offset += size;
    return ggml_backend_tensor_alloc(talloc->buffer, tensor, addr);
}

//
// all the tensors of a context
//

// bytes a tensor of the context takes in a new buffer (0: nothing to allocate)
static size_t ctx_tensor_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * t, size_t alignment) {
    if (t->data != NULL || t->view_src != NULL) {
        return 0;
    }
    return GGML_PAD(ggml_backend_buft_get_alloc_size(buft, t), alignment);
}

struct buffer_list {
    ggml_backend_buffer_t * buffers;
    size_t n_buffers;
};

static bool buffer_list_owns(const struct buffer_list * list, ggml_backend_buffer_t buffer) {
    for (size_t i = 0; i < list->n_buffers; i++) {
        if (list->buffers[i] == buffer) {
            return true;
        }
    }
    return false;
}

// undo a partial allocation: no tensor may keep pointing into freed memory
static void buffer_list_release(struct buffer_list * list, struct ggml_context * ctx) {
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->buffer != NULL && buffer_list_owns(list, t->buffer)) {
            t->buffer = NULL;
            t->data   = NULL;
        }
    }
    for (size_t i = 0; i < list->n_buffers; i++) {
        ggml_backend_buffer_free(list->buffers[i]);
    }
    free(list->buffers);
    list->buffers   = NULL;
    list->n_buffers = 0;
}

// place the tensors [first, last) in one new buffer of size bytes
static bool alloc_tensor_range(struct ggml_context * ctx, struct ggml_tensor * first, struct ggml_tensor * last,
                               ggml_backend_buffer_type_t buft, size_t size, struct buffer_list * list) {
    ggml_backend_buffer_t * grown = (ggml_backend_buffer_t *) realloc(list->buffers, (list->n_buffers + 1) * sizeof(*grown));
    if (grown == NULL) {
        GGML_LOG_ERROR("%s: out of memory for the buffer list\n", __func__);
        return false;
    }
    list->buffers = grown;

    ggml_backend_buffer_t buffer = ggml_backend_buft_alloc_buffer(buft, size);
    if (buffer == NULL) {
        return false;
    }
    list->buffers[list->n_buffers++] = buffer;

    struct ggml_tallocr tallocr = ggml_tallocr_new(buffer);
    for (struct ggml_tensor * t = first; t != last; t = ggml_get_next_tensor(ctx, t)) {
        enum ggml_status status = GGML_STATUS_SUCCESS;
        if (t->view_src == NULL) {
            if (t->data == NULL) {
                status = ggml_tallocr_alloc(&tallocr, t);
            }
        } else if (t->buffer == NULL && t->view_src->buffer != NULL) {
            // a view of a tensor placed here or earlier, or of a pre-allocated one
            status = ggml_backend_view_init(t);
        }
        if (status != GGML_STATUS_SUCCESS) {
            GGML_LOG_ERROR("%s: failed to initialize tensor '%s' in a %s buffer: %s\n",
                           __func__, t->name, ggml_backend_buft_name(buft), ggml_status_to_string(status));
            return false;
        }
    }
    return true;
}

// Plan (and unless size_only, make) the buffers; *nbytes_total receives the
// bytes they take. Returns the buffer, or NULL when nothing was allocated.
static ggml_backend_buffer_t alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_buffer_type_t buft,
                                               size_t * nbytes_total, bool size_only) {
    GGML_ASSERT(ggml_get_no_alloc(ctx) && "the context must be created with no_alloc = true");

    const size_t alignment = ggml_backend_buft_get_alignment(buft);
    const size_t max_size  = ggml_backend_buft_get_max_size(buft);

    struct buffer_list list = { .buffers = NULL, .n_buffers = 0 };
    *nbytes_total = 0;

    size_t cur_size = 0;
    struct ggml_tensor * first = ggml_get_first_tensor(ctx);
    for (struct ggml_tensor * t = first; t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        const size_t this_size = ctx_tensor_size(buft, t, alignment);
        if (cur_size > 0 && this_size > max_size - MIN(max_size, cur_size)) {
            if (!size_only && !alloc_tensor_range(ctx, first, t, buft, cur_size, &list)) {
                buffer_list_release(&list, ctx);
                return NULL;
            }
            *nbytes_total += cur_size;
            first    = t;
            cur_size = this_size;
        } else {
            cur_size += this_size;
        }
    }
    if (cur_size > 0) {
        if (!size_only && !alloc_tensor_range(ctx, first, NULL, buft, cur_size, &list)) {
            buffer_list_release(&list, ctx);
            return NULL;
        }
        *nbytes_total += cur_size;
    }

    if (size_only || list.n_buffers == 0) {
        if (!size_only) {
            GGML_LOG_DEBUG("%s: all tensors in the context are already allocated\n", __func__);
        }
        free(list.buffers);
        return NULL;
    }

    ggml_backend_buffer_t buffer = list.n_buffers == 1
        ? list.buffers[0]
        : ggml_backend_multi_buffer_alloc_buffer(list.buffers, list.n_buffers);
    if (buffer == NULL) {
        buffer_list_release(&list, ctx);
        return NULL;
    }
    free(list.buffers);
    return buffer;
}

size_t ggml_backend_alloc_ctx_tensors_from_buft_size(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    size_t nbytes_total = 0;
    ggml_backend_buffer_t buffer = alloc_ctx_tensors(ctx, buft, &nbytes_total, true);
    GGML_ASSERT(buffer == NULL);
    return nbytes_total;
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    if (ggml_backend_buft_is_meta(buft)) {
        // each simple device gets only its slices
        return ggml_backend_meta_alloc_ctx_tensors_from_buft(ctx, buft);
    }
    size_t nbytes_total = 0;
    return alloc_ctx_tensors(ctx, buft, &nbytes_total, false);
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend) {
    return ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_get_default_buffer_type(backend));
}
