// vk-buffer.c: the buffer types of the Vulkan backend.
//
//   "Vulkan<N>"    device memory of device N (is_host false). A buffer is one
//                  VkBuffer of at most max_buffer_size bytes (the storage
//                  binding range and the allocation limit), so that any
//                  tensor in it can be bound as a storage buffer; the
//                  allocator splits larger requests into several buffers,
//                  and a direct request beyond the limit is refused with a
//                  log line. Tensor addresses are offsets from a fixed
//                  non-NULL base; nothing dereferences them.
//   "Vulkan_Host"  pinned host memory (mapped, host-coherent) of the first
//                  device: a host buffer for the CPU backend and for staging;
//                  the first device's asynchronous copies from and to it are
//                  single copy commands, without a staging buffer.

#include "vk-impl.h"

// tensor->data of a device buffer = this base + offset in the VkBuffer
#define GGML_VK_BASE ((char *) (uintptr_t) 0x1000)

struct vk_buffer {
    struct ggml_vk_device * d;
    struct ggml_vk_mem      mem;
};

//
// device buffers
//

static void vk_buffer_free(ggml_backend_buffer_t buffer) {
    struct vk_buffer * b = (struct vk_buffer *) buffer->context;
    ggml_vk_mem_free(b->d, &b->mem);
    free(b);
}

static void * vk_buffer_get_base(ggml_backend_buffer_t buffer) {
    GGML_UNUSED(buffer);
    return GGML_VK_BASE;
}

static size_t tensor_offset(const struct ggml_tensor * tensor) {
    return (size_t) ((const char *) tensor->data - GGML_VK_BASE);
}

static void vk_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    struct vk_buffer * b = (struct vk_buffer *) buffer->context;
    ggml_vk_fill(b->d, &b->mem, tensor_offset(tensor) + offset, value, size);
}

static void vk_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    struct vk_buffer * b = (struct vk_buffer *) buffer->context;
    ggml_vk_write(b->d, &b->mem, tensor_offset(tensor) + offset, data, size);
}

static void vk_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    struct vk_buffer * b = (struct vk_buffer *) buffer->context;
    ggml_vk_read(b->d, &b->mem, tensor_offset(tensor) + offset, data, size);
}

static bool vk_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    struct vk_buffer * b = (struct vk_buffer *) buffer->context;
    ggml_backend_buffer_t src_buf = src->view_src != NULL ? src->view_src->buffer : src->buffer;
    if (src_buf == NULL) {
        return false;
    }
    if (ggml_vk_buffer_is_device(src_buf)) {
        struct vk_buffer * sb = (struct vk_buffer *) src_buf->context;
        if (sb->d != b->d) {
            return false;
        }
        ggml_vk_copy(b->d, &sb->mem, tensor_offset(src), &b->mem, tensor_offset(dst), ggml_nbytes(src));
        return true;
    }
    if (ggml_backend_buffer_is_host(src_buf)) {
        ggml_vk_write(b->d, &b->mem, tensor_offset(dst), src->data, ggml_nbytes(src));
        return true;
    }
    return false;
}

static void vk_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct vk_buffer * b = (struct vk_buffer *) buffer->context;
    ggml_vk_fill(b->d, &b->mem, 0, value, b->mem.size);
}

static const struct ggml_backend_buffer_i vk_buffer_iface = {
    .free_buffer   = vk_buffer_free,
    .get_base      = vk_buffer_get_base,
    .init_tensor   = NULL,
    .memset_tensor = vk_buffer_memset_tensor,
    .set_tensor    = vk_buffer_set_tensor,
    .get_tensor    = vk_buffer_get_tensor,
    .set_tensor_2d = NULL,
    .get_tensor_2d = NULL,
    .cpy_tensor    = vk_buffer_cpy_tensor,
    .clear         = vk_buffer_clear,
    .reset         = NULL,
};

bool ggml_vk_buffer_is_device(ggml_backend_buffer_t buffer) {
    return buffer != NULL && buffer->iface.get_base == vk_buffer_get_base;
}

struct ggml_vk_device * ggml_vk_buffer_device(ggml_backend_buffer_t buffer) {
    return ggml_vk_buffer_is_device(buffer) ? ((struct vk_buffer *) buffer->context)->d : NULL;
}

bool ggml_vk_tensor_mem(const struct ggml_tensor * t, const struct ggml_vk_mem ** mem, size_t * offset) {
    ggml_backend_buffer_t buffer = t->view_src != NULL ? t->view_src->buffer : t->buffer;
    if (!ggml_vk_buffer_is_device(buffer) || t->data == NULL) {
        return false;
    }
    *mem    = &((struct vk_buffer *) buffer->context)->mem;
    *offset = tensor_offset(t);
    return true;
}

//
// device buffer type
//

static const char * vk_buft_get_name(ggml_backend_buffer_type_t buft) {
    return ((struct ggml_vk_device *) buft->context)->name;
}

static ggml_backend_buffer_t vk_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    struct ggml_vk_device * d = (struct ggml_vk_device *) buft->context;
    if (size > d->max_buffer_size) {
        GGML_LOG_ERROR("ggml_vulkan: %s: a buffer of %zu bytes is over the device's limit of %zu (storage binding range "
                       "and allocation size); allocate several\n", d->name, size, d->max_buffer_size);
        return NULL;
    }
    if (!ggml_vk_device_ready(d)) {
        return NULL;
    }
    struct vk_buffer * b = (struct vk_buffer *) calloc(1, sizeof(struct vk_buffer));
    if (b == NULL) {
        GGML_LOG_ERROR("ggml_vulkan: out of host memory\n");
        return NULL;
    }
    b->d = d;
    if (!ggml_vk_mem_alloc(d, size, false, &b->mem)) {
        free(b);
        return NULL;
    }
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, vk_buffer_iface, b, size);
    if (buffer == NULL) {
        ggml_vk_mem_free(d, &b->mem);
        free(b);
    }
    return buffer;
}

static size_t vk_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    return ((struct ggml_vk_device *) buft->context)->min_align;
}

static size_t vk_buft_get_max_size(ggml_backend_buffer_type_t buft) {
    return ((struct ggml_vk_device *) buft->context)->max_buffer_size;
}

static bool vk_buft_is_host(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return false;
}

void ggml_vk_buft_init(struct ggml_vk_device * d) {
    d->buft = (struct ggml_backend_buffer_type) {
        .iface = {
            .get_name       = vk_buft_get_name,
            .alloc_buffer   = vk_buft_alloc_buffer,
            .get_alignment  = vk_buft_get_alignment,
            .get_max_size   = vk_buft_get_max_size,
            .get_alloc_size = NULL,
            .is_host        = vk_buft_is_host,
        },
        .device  = &d->dev,
        .context = d,
    };
}

bool ggml_vk_buft_is_device(ggml_backend_buffer_type_t buft) {
    return buft != NULL && buft->iface.alloc_buffer == vk_buft_alloc_buffer;
}

//
// pinned host buffers
//

static bool pinned_add(struct ggml_vk_device * d, const struct ggml_vk_mem * mem) {
    pthread_mutex_lock(&d->pinned_mutex);
    bool ok = true;
    if (d->n_pinned == d->cap_pinned) {
        const size_t cap = d->cap_pinned == 0 ? 8 : 2 * d->cap_pinned;
        const struct ggml_vk_mem ** grown = (const struct ggml_vk_mem **) realloc((void *) d->pinned, cap * sizeof(*grown));
        if (grown != NULL) {
            d->pinned = grown;
            d->cap_pinned = cap;
        }
        ok = grown != NULL;
    }
    if (ok) {
        d->pinned[d->n_pinned++] = mem;
    }
    pthread_mutex_unlock(&d->pinned_mutex);
    return ok;
}

static void pinned_remove(struct ggml_vk_device * d, const struct ggml_vk_mem * mem) {
    pthread_mutex_lock(&d->pinned_mutex);
    for (size_t i = 0; i < d->n_pinned; i++) {
        if (d->pinned[i] == mem) {
            d->pinned[i] = d->pinned[--d->n_pinned];
            break;
        }
    }
    pthread_mutex_unlock(&d->pinned_mutex);
}

bool ggml_vk_pinned_find(struct ggml_vk_device * d, const void * ptr, size_t size, VkBuffer * buffer, size_t * offset) {
    bool found = false;
    pthread_mutex_lock(&d->pinned_mutex);
    for (size_t i = 0; i < d->n_pinned && !found; i++) {
        const char * base = (const char *) d->pinned[i]->mapped;
        const char * p = (const char *) ptr;
        if (p >= base && p < base + d->pinned[i]->size && size <= (size_t) (base + d->pinned[i]->size - p)) {
            *buffer = d->pinned[i]->buffer;
            *offset = (size_t) (p - base);
            found = true;
        }
    }
    pthread_mutex_unlock(&d->pinned_mutex);
    return found;
}

static void vk_host_buffer_free(ggml_backend_buffer_t buffer) {
    struct vk_buffer * b = (struct vk_buffer *) buffer->context;
    pinned_remove(b->d, &b->mem);
    ggml_vk_mem_free(b->d, &b->mem);
    free(b);
}

static void * vk_host_buffer_get_base(ggml_backend_buffer_t buffer) {
    return ((struct vk_buffer *) buffer->context)->mem.mapped;
}

static void vk_host_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    memset((char *) tensor->data + offset, value, size);
}

static void vk_host_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    memcpy((char *) tensor->data + offset, data, size);
}

static void vk_host_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    memcpy(data, (const char *) tensor->data + offset, size);
}

static bool vk_host_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    GGML_UNUSED(buffer);
    ggml_backend_buffer_t src_buf = src->view_src != NULL ? src->view_src->buffer : src->buffer;
    if (src_buf != NULL && ggml_backend_buffer_is_host(src_buf)) {
        memcpy(dst->data, src->data, ggml_nbytes(src));
        return true;
    }
    return false;
}

static void vk_host_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct vk_buffer * b = (struct vk_buffer *) buffer->context;
    memset(b->mem.mapped, value, b->mem.size);
}

static const struct ggml_backend_buffer_i vk_host_buffer_iface = {
    .free_buffer   = vk_host_buffer_free,
    .get_base      = vk_host_buffer_get_base,
    .init_tensor   = NULL,
    .memset_tensor = vk_host_buffer_memset_tensor,
    .set_tensor    = vk_host_buffer_set_tensor,
    .get_tensor    = vk_host_buffer_get_tensor,
    .set_tensor_2d = NULL,
    .get_tensor_2d = NULL,
    .cpy_tensor    = vk_host_buffer_cpy_tensor,
    .clear         = vk_host_buffer_clear,
    .reset         = NULL,
};

static const char * vk_host_buft_get_name(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return GGML_VK_NAME "_Host";
}

static ggml_backend_buffer_t vk_host_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    struct ggml_vk_device * d = ggml_vk_device_get(0);
    struct vk_buffer * b = d != NULL && ggml_vk_device_ready(d) ? (struct vk_buffer *) calloc(1, sizeof(struct vk_buffer)) : NULL;
    if (b != NULL) {
        b->d = d;
        if (ggml_vk_mem_alloc(d, size, true, &b->mem)) {
            ggml_backend_buffer_t buffer = pinned_add(d, &b->mem) ? ggml_backend_buffer_init(buft, vk_host_buffer_iface, b, size) : NULL;
            if (buffer != NULL) {
                return buffer;
            }
            pinned_remove(d, &b->mem);
            ggml_vk_mem_free(d, &b->mem);
        }
        free(b);
    }
    // pinned memory is an optimisation: plain host memory serves as well
    GGML_LOG_WARN("ggml_vulkan: no pinned host memory of %zu bytes; using ordinary host memory\n", size);
    return ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), size);
}

static size_t vk_host_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    struct ggml_vk_device * d = ggml_vk_device_get(0);
    return d != NULL && d->min_align > TENSOR_ALIGNMENT ? d->min_align : TENSOR_ALIGNMENT;
}

static bool vk_host_buft_is_host(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return true;
}

static pthread_once_t g_host_buft_once = PTHREAD_ONCE_INIT;
static struct ggml_backend_buffer_type g_host_buft;

static void host_buft_init(void) {
    struct ggml_vk_device * d = ggml_vk_device_get(0);
    g_host_buft = (struct ggml_backend_buffer_type) {
        .iface = {
            .get_name       = vk_host_buft_get_name,
            .alloc_buffer   = vk_host_buft_alloc_buffer,
            .get_alignment  = vk_host_buft_get_alignment,
            .get_max_size   = NULL,
            .get_alloc_size = NULL,
            .is_host        = vk_host_buft_is_host,
        },
        .device  = d != NULL ? &d->dev : NULL,
        .context = NULL,
    };
}

ggml_backend_buffer_type_t ggml_vk_host_buft(void) {
    pthread_once(&g_host_buft_once, host_buft_init);
    return &g_host_buft;
}
