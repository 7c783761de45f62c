// ggml-backend-host.c: the host memory buffer types every backend can use.
//
//   "CPU"         ggml_backend_cpu_buffer_type(): buffers of memory from
//                 ggml_aligned_malloc, owned and freed by the buffer
//   "CPU_Mapped"  ggml_backend_cpu_buffer_from_ptr(): a buffer over memory the
//                 caller owns (a memory-mapped model file, for instance)
//
// Both live in ggml-base so that any backend, and the allocator, can place
// tensors in host memory without the CPU backend. Their device is NULL: the
// CPU device names them as its buffer types, not the other way round.

#include "ggml-backend-impl.h"
#include "ggml-impl.h"

//
// buffer
//

static void * host_buffer_get_base(ggml_backend_buffer_t buffer) {
    // both constructors guarantee TENSOR_ALIGNMENT already
    return buffer->context;
}

static void host_buffer_free(ggml_backend_buffer_t buffer) {
    ggml_aligned_free(buffer->context, buffer->size);
}

static void host_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    memset((char *) tensor->data + offset, value, size);
}

static void host_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    memcpy((char *) tensor->data + offset, data, size);
}

static void host_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    memcpy(data, (const char *) tensor->data + offset, size);
}

// dst is in this host buffer: any source in host memory is one memcpy away
static bool host_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    GGML_UNUSED(buffer);
    ggml_backend_buffer_t src_buf = src->view_src != NULL ? src->view_src->buffer : src->buffer;
    if (src_buf != NULL && ggml_backend_buffer_is_host(src_buf)) {
        memcpy(dst->data, src->data, ggml_nbytes(src));
        return true;
    }
    return false;
}

static void host_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    memset(buffer->context, value, buffer->size);
}

static const struct ggml_backend_buffer_i host_buffer_iface = {
    .free_buffer   = host_buffer_free,
    .get_base      = host_buffer_get_base,
    .init_tensor   = NULL,
    .memset_tensor = host_buffer_memset_tensor,
    .set_tensor    = host_buffer_set_tensor,
    .get_tensor    = host_buffer_get_tensor,
    .set_tensor_2d = NULL,
    .get_tensor_2d = NULL,
    .cpy_tensor    = host_buffer_cpy_tensor,
    .clear         = host_buffer_clear,
    .reset         = NULL,
};

// the same, except that the memory belongs to the caller
static const struct ggml_backend_buffer_i host_mapped_buffer_iface = {
    .free_buffer   = NULL,
    .get_base      = host_buffer_get_base,
    .init_tensor   = NULL,
    .memset_tensor = host_buffer_memset_tensor,
    .set_tensor    = host_buffer_set_tensor,
    .get_tensor    = host_buffer_get_tensor,
    .set_tensor_2d = NULL,
    .get_tensor_2d = NULL,
    .cpy_tensor    = host_buffer_cpy_tensor,
    .clear         = host_buffer_clear,
    .reset         = NULL,
};

//
// buffer types
//

static const char * host_buft_get_name(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return "CPU";
}

static const char * host_mapped_buft_get_name(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return "CPU_Mapped";
}

static ggml_backend_buffer_t host_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    // ggml_aligned_malloc logs why it failed; the caller's wrapper logs which buffer
    void * data = ggml_aligned_malloc(size);
    if (data == NULL) {
        return NULL;
    }
    GGML_ASSERT((uintptr_t) data % TENSOR_ALIGNMENT == 0);
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, host_buffer_iface, data, size);
    if (buffer == NULL) {
        ggml_aligned_free(data, size);
    }
    return buffer;
}

static size_t host_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return TENSOR_ALIGNMENT;
}

static bool host_buft_is_host(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return true;
}

// Immutable after initialisation: the static initialisers make them safe to
// hand out from any thread.
static struct ggml_backend_buffer_type host_buft = {
    .iface = {
        .get_name       = host_buft_get_name,
        .alloc_buffer   = host_buft_alloc_buffer,
        .get_alignment  = host_buft_get_alignment,
        .get_max_size   = NULL,
        .get_alloc_size = NULL,
        .is_host        = host_buft_is_host,
    },
    .device  = NULL,
    .context = NULL,
};

static struct ggml_backend_buffer_type host_mapped_buft = {
    .iface = {
        .get_name       = host_mapped_buft_get_name,
        .alloc_buffer   = host_buft_alloc_buffer,
        .get_alignment  = host_buft_get_alignment,
        .get_max_size   = NULL,
        .get_alloc_size = NULL,
        .is_host        = host_buft_is_host,
    },
    .device  = NULL,
    .context = NULL,
};

ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void) {
    return &host_buft;
}

ggml_backend_buffer_t ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size) {
    GGML_ASSERT(ptr != NULL || size == 0);
    GGML_ASSERT((uintptr_t) ptr % TENSOR_ALIGNMENT == 0 && "buffer pointer must be aligned to TENSOR_ALIGNMENT");
    return ggml_backend_buffer_init(&host_mapped_buft, host_mapped_buffer_iface, ptr, size);
}
