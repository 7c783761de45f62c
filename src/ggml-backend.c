// ggml-backend.c: the checked wrappers over the interfaces of
// ggml-backend-impl.h (buffer types, buffers, backends, events, devices and
// registry entries), tensor data access and copies between buffers, and the
// multi-buffer that joins several buffers of one type.
//
// Each wrapper supplies the documented default when an optional member is
// NULL. Tensor reads and writes check that the tensor is allocated and that
// the byte range lies inside it before the backend sees the call: backends
// may trust offset and size.
//
// Every call that uses a backend's stream (compute, plans, asynchronous and
// synchronizing transfers, events) holds that backend's lock
// (ggml-backend-lock.h): threads sharing one backend object take turns.

#include "ggml-backend-impl.h"
#include "ggml-backend-lock.h"
#include "ggml-impl.h"

#include <stdio.h>

//
// buffer type
//

const char * ggml_backend_buft_name(ggml_backend_buffer_type_t buft) {
    GGML_ASSERT(buft != NULL);
    return buft->iface.get_name(buft);
}

ggml_backend_buffer_t ggml_backend_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    GGML_ASSERT(buft != NULL);
    if (size == 0) {
        // a buffer type need not handle empty requests: a dummy buffer with no memory stands in
        const struct ggml_backend_buffer_i no_memory = { 0 };
        return ggml_backend_buffer_init(buft, no_memory, NULL, 0);
    }
    ggml_backend_buffer_t buffer = buft->iface.alloc_buffer(buft, size);
    if (buffer == NULL) {
        GGML_LOG_ERROR("%s: failed to allocate a %s buffer of %zu bytes (%.2f MiB)\n",
                       __func__, ggml_backend_buft_name(buft), size, (double) size / (1024.0 * 1024.0));
    }
    return buffer;
}

size_t ggml_backend_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    GGML_ASSERT(buft != NULL);
    return buft->iface.get_alignment(buft);
}

size_t ggml_backend_buft_get_max_size(ggml_backend_buffer_type_t buft) {
    GGML_ASSERT(buft != NULL);
    if (buft->iface.get_max_size != NULL) {
        return buft->iface.get_max_size(buft);
    }
    return SIZE_MAX;
}

size_t ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    GGML_ASSERT(buft != NULL);
    if (buft->iface.get_alloc_size != NULL) {
        const size_t size = buft->iface.get_alloc_size(buft, tensor);
        GGML_ASSERT(size >= ggml_nbytes(tensor) && "get_alloc_size must cover the tensor's bytes");
        return size;
    }
    return ggml_nbytes(tensor);
}

bool ggml_backend_buft_is_host(ggml_backend_buffer_type_t buft) {
    GGML_ASSERT(buft != NULL);
    if (buft->iface.is_host != NULL) {
        return buft->iface.is_host(buft);
    }
    return false;
}

ggml_backend_dev_t ggml_backend_buft_get_device(ggml_backend_buffer_type_t buft) {
    GGML_ASSERT(buft != NULL);
    return buft->device;
}

//
// buffer
//

ggml_backend_buffer_t ggml_backend_buffer_init(
               ggml_backend_buffer_type_t buft,
        struct ggml_backend_buffer_i      iface,
               void *                     context,
               size_t                     size) {
    ggml_backend_buffer_t buffer = (ggml_backend_buffer_t) malloc(sizeof(struct ggml_backend_buffer));
    if (buffer == NULL) {
        GGML_LOG_ERROR("%s: out of memory for a buffer handle\n", __func__);
        return NULL;
    }
    *buffer = (struct ggml_backend_buffer) {
        .iface   = iface,
        .buft    = buft,
        .context = context,
        .size    = size,
        .usage   = GGML_BACKEND_BUFFER_USAGE_ANY,
    };
    return buffer;
}

const char * ggml_backend_buffer_name(ggml_backend_buffer_t buffer) {
    return ggml_backend_buft_name(ggml_backend_buffer_get_type(buffer));
}

void ggml_backend_buffer_free(ggml_backend_buffer_t buffer) {
    if (buffer == NULL) {
        return;
    }
    if (buffer->iface.free_buffer != NULL) {
        buffer->iface.free_buffer(buffer);
    }
    free(buffer);
}

size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer) {
    GGML_ASSERT(buffer != NULL);
    return buffer->size;
}

void * ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer) {
    GGML_ASSERT(buffer != NULL);
    // an empty buffer has no memory, and a multi-buffer no single base
    if (buffer->size == 0 || buffer->iface.get_base == NULL) {
        return NULL;
    }
    void * base = buffer->iface.get_base(buffer);
    GGML_ASSERT(base != NULL && "backend buffer base cannot be NULL");
    return base;
}

enum ggml_status ggml_backend_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    GGML_ASSERT(buffer != NULL);
    if (buffer->iface.init_tensor != NULL) {
        return buffer->iface.init_tensor(buffer, tensor);
    }
    return GGML_STATUS_SUCCESS;
}

void ggml_backend_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    GGML_ASSERT(buffer != NULL);
    if (buffer->size == 0) {
        return;
    }
    buffer->iface.clear(buffer, value);
}

size_t ggml_backend_buffer_get_alignment(ggml_backend_buffer_t buffer) {
    return ggml_backend_buft_get_alignment(ggml_backend_buffer_get_type(buffer));
}

size_t ggml_backend_buffer_get_max_size(ggml_backend_buffer_t buffer) {
    return ggml_backend_buft_get_max_size(ggml_backend_buffer_get_type(buffer));
}

size_t ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor) {
    return ggml_backend_buft_get_alloc_size(ggml_backend_buffer_get_type(buffer), tensor);
}

bool ggml_backend_buffer_is_host(ggml_backend_buffer_t buffer) {
    return ggml_backend_buft_is_host(ggml_backend_buffer_get_type(buffer));
}

void ggml_backend_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage) {
    GGML_ASSERT(buffer != NULL);
    buffer->usage = usage;
    if (ggml_backend_buffer_is_multi_buffer(buffer)) {
        ggml_backend_multi_buffer_set_usage(buffer, usage);
    }
}

enum ggml_backend_buffer_usage ggml_backend_buffer_get_usage(ggml_backend_buffer_t buffer) {
    GGML_ASSERT(buffer != NULL);
    return buffer->usage;
}

ggml_backend_buffer_type_t ggml_backend_buffer_get_type(ggml_backend_buffer_t buffer) {
    GGML_ASSERT(buffer != NULL);
    return buffer->buft;
}

void ggml_backend_buffer_reset(ggml_backend_buffer_t buffer) {
    GGML_ASSERT(buffer != NULL);
    if (buffer->iface.reset != NULL) {
        buffer->iface.reset(buffer);
    }
}

// the buffer holding a tensor's bytes: a view's bytes belong to its source
static ggml_backend_buffer_t tensor_buffer(const struct ggml_tensor * tensor) {
    return tensor->view_src != NULL ? tensor->view_src->buffer : tensor->buffer;
}

bool ggml_backend_buffer_copy_tensor(const struct ggml_tensor * src, struct ggml_tensor * dst) {
    ggml_backend_buffer_t dst_buf = tensor_buffer(dst);
    GGML_ASSERT(dst_buf != NULL && "destination tensor has no buffer");
    if (dst_buf->iface.cpy_tensor != NULL) {
        return dst_buf->iface.cpy_tensor(dst_buf, src, dst);
    }
    return false;
}

//
// tensor data access
//

// The checks every access makes before the buffer sees it. A range of
// n_blocks blocks of size bytes, stride bytes apart, starting at offset must
// lie inside the tensor's ggml_nbytes; the sums are checked for overflow.
static ggml_backend_buffer_t tensor_check_access(const struct ggml_tensor * tensor, const char * what,
                                                 size_t offset, size_t size, size_t n_blocks, size_t stride) {
    GGML_ASSERT(tensor != NULL);
    ggml_backend_buffer_t buf = tensor_buffer(tensor);
    if (buf == NULL) {
        GGML_ABORT("%s of tensor '%s': the tensor has no buffer (not allocated)", what, tensor->name);
    }
    if (tensor->data == NULL) {
        GGML_ABORT("%s of tensor '%s': the tensor is not allocated", what, tensor->name);
    }
    const size_t nbytes = ggml_nbytes(tensor);
    size_t span = size;
    bool overflow = false;
    if (n_blocks > 1) {
        size_t steps;
        overflow = __builtin_mul_overflow(n_blocks - 1, stride, &steps) || __builtin_add_overflow(span, steps, &span);
    }
    size_t end;
    overflow = overflow || __builtin_add_overflow(offset, span, &end);
    if (overflow || end > nbytes) {
        GGML_ABORT("%s of tensor '%s' out of bounds: %zu block(s) of %zu bytes (stride %zu) at offset %zu, "
                   "the tensor has %zu bytes", what, tensor->name, n_blocks, size, stride, offset, nbytes);
    }
    return buf;
}

void ggml_backend_tensor_set(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    GGML_ASSERT(tensor != NULL);
    GGML_ASSERT(tensor_buffer(tensor) != NULL && "tensor buffer not set");
    if (size == 0) {
        return;
    }
    ggml_backend_buffer_t buf = tensor_check_access(tensor, "write", offset, size, 1, 0);
    buf->iface.set_tensor(buf, tensor, data, offset, size);
}

void ggml_backend_tensor_get(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    GGML_ASSERT(tensor != NULL);
    GGML_ASSERT(tensor_buffer(tensor) != NULL && "tensor buffer not set");
    if (size == 0) {
        return;
    }
    ggml_backend_buffer_t buf = tensor_check_access(tensor, "read", offset, size, 1, 0);
    buf->iface.get_tensor(buf, tensor, data, offset, size);
}

void ggml_backend_tensor_set_2d(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data) {
    GGML_ASSERT(tensor != NULL);
    ggml_backend_buffer_t buf = tensor_buffer(tensor);
    GGML_ASSERT(buf != NULL && "tensor buffer not set");
    if (n_copies <= 1 || buf->iface.set_tensor_2d == NULL) {
        for (size_t i = 0; i < n_copies; i++) {
            ggml_backend_tensor_set(tensor, (const char *) data + i*stride_data, offset + i*stride_tensor, size);
        }
        return;
    }
    if (size == 0) {
        return;
    }
    tensor_check_access(tensor, "2-D write", offset, size, n_copies, stride_tensor);
    buf->iface.set_tensor_2d(buf, tensor, data, offset, size, n_copies, stride_tensor, stride_data);
}

void ggml_backend_tensor_get_2d(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size,
                                size_t n_copies, size_t stride_tensor, size_t stride_data) {
    GGML_ASSERT(tensor != NULL);
    ggml_backend_buffer_t buf = tensor_buffer(tensor);
    GGML_ASSERT(buf != NULL && "tensor buffer not set");
    if (n_copies <= 1 || buf->iface.get_tensor_2d == NULL) {
        for (size_t i = 0; i < n_copies; i++) {
            ggml_backend_tensor_get(tensor, (char *) data + i*stride_data, offset + i*stride_tensor, size);
        }
        return;
    }
    if (size == 0) {
        return;
    }
    tensor_check_access(tensor, "2-D read", offset, size, n_copies, stride_tensor);
    buf->iface.get_tensor_2d(buf, tensor, data, offset, size, n_copies, stride_tensor, stride_data);
}

void ggml_backend_tensor_memset(struct ggml_tensor * tensor, uint8_t value, size_t offset, size_t size) {
    GGML_ASSERT(tensor != NULL);
    if (size == 0) {
        return;
    }
    ggml_backend_buffer_t buf = tensor_check_access(tensor, "memset", offset, size, 1, 0);
    GGML_ASSERT(buf->iface.memset_tensor != NULL && "memset not implemented by backend buffer");
    buf->iface.memset_tensor(buf, tensor, value, offset, size);
}

//
// backend (stream)
//

ggml_guid_t ggml_backend_guid(ggml_backend_t backend) {
    if (backend == NULL) {
        return NULL;
    }
    return backend->guid;
}

const char * ggml_backend_name(ggml_backend_t backend) {
    if (backend == NULL) {
        return "NULL";
    }
    return backend->iface.get_name(backend);
}

void ggml_backend_free(ggml_backend_t backend) {
    if (backend == NULL) {
        return;
    }
    ggml_backend_stream_forget(backend);
    backend->iface.free(backend);
}

ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend) {
    GGML_ASSERT(backend != NULL);
    return ggml_backend_dev_buffer_type(backend->device);
}

ggml_backend_buffer_t ggml_backend_alloc_buffer(ggml_backend_t backend, size_t size) {
    return ggml_backend_buft_alloc_buffer(ggml_backend_get_default_buffer_type(backend), size);
}

size_t ggml_backend_get_alignment(ggml_backend_t backend) {
    return ggml_backend_buft_get_alignment(ggml_backend_get_default_buffer_type(backend));
}

size_t ggml_backend_get_max_size(ggml_backend_t backend) {
    return ggml_backend_buft_get_max_size(ggml_backend_get_default_buffer_type(backend));
}

void ggml_backend_tensor_set_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    GGML_ASSERT(backend != NULL);
    tensor_check_access(tensor, "async write", offset, size, 1, 0);
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    if (backend->iface.set_tensor_async == NULL) {
        // the write must come after the work already queued
        ggml_backend_synchronize(backend);
        ggml_backend_tensor_set(tensor, data, offset, size);
    } else {
        backend->iface.set_tensor_async(backend, tensor, data, offset, size);
    }
    ggml_backend_stream_unlock(lock);
}

void ggml_backend_tensor_get_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    GGML_ASSERT(backend != NULL);
    tensor_check_access(tensor, "async read", offset, size, 1, 0);
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    if (backend->iface.get_tensor_async == NULL) {
        ggml_backend_synchronize(backend);
        ggml_backend_tensor_get(tensor, data, offset, size);
    } else {
        backend->iface.get_tensor_async(backend, tensor, data, offset, size);
    }
    ggml_backend_stream_unlock(lock);
}

void ggml_backend_tensor_set_2d_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size,
                                      size_t n_copies, size_t stride_tensor, size_t stride_data) {
    GGML_ASSERT(backend != NULL);
    GGML_ASSERT(tensor != NULL);
    if (n_copies <= 1 || backend->iface.set_tensor_2d_async == NULL) {
        for (size_t i = 0; i < n_copies; i++) {
            ggml_backend_tensor_set_async(backend, tensor, (const char *) data + i*stride_data, offset + i*stride_tensor, size);
        }
        return;
    }
    if (size == 0) {
        return;
    }
    tensor_check_access(tensor, "async 2-D write", offset, size, n_copies, stride_tensor);
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    backend->iface.set_tensor_2d_async(backend, tensor, data, offset, size, n_copies, stride_tensor, stride_data);
    ggml_backend_stream_unlock(lock);
}

void ggml_backend_tensor_get_2d_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size,
                                      size_t n_copies, size_t stride_tensor, size_t stride_data) {
    GGML_ASSERT(backend != NULL);
    GGML_ASSERT(tensor != NULL);
    if (n_copies <= 1 || backend->iface.get_tensor_2d_async == NULL) {
        for (size_t i = 0; i < n_copies; i++) {
            ggml_backend_tensor_get_async(backend, tensor, (char *) data + i*stride_data, offset + i*stride_tensor, size);
        }
        return;
    }
    if (size == 0) {
        return;
    }
    tensor_check_access(tensor, "async 2-D read", offset, size, n_copies, stride_tensor);
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    backend->iface.get_tensor_2d_async(backend, tensor, data, offset, size, n_copies, stride_tensor, stride_data);
    ggml_backend_stream_unlock(lock);
}

void ggml_backend_synchronize(ggml_backend_t backend) {
    GGML_ASSERT(backend != NULL);
    if (backend->iface.synchronize != NULL) {
        pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
        backend->iface.synchronize(backend);
        ggml_backend_stream_unlock(lock);
    }
}

ggml_backend_graph_plan_t ggml_backend_graph_plan_create(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    GGML_ASSERT(backend != NULL);
    GGML_ASSERT(backend->iface.graph_plan_create != NULL && "this backend has no graph plans");
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    ggml_backend_graph_plan_t plan = backend->iface.graph_plan_create(backend, cgraph);
    ggml_backend_stream_unlock(lock);
    return plan;
}

void ggml_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    GGML_ASSERT(backend != NULL);
    GGML_ASSERT(backend->iface.graph_plan_free != NULL && "this backend has no graph plans");
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    backend->iface.graph_plan_free(backend, plan);
    ggml_backend_stream_unlock(lock);
}

enum ggml_status ggml_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    GGML_ASSERT(backend != NULL);
    GGML_ASSERT(backend->iface.graph_plan_compute != NULL && "this backend has no graph plans");
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    const enum ggml_status status = backend->iface.graph_plan_compute(backend, plan);
    ggml_backend_stream_unlock(lock);
    return status;
}

enum ggml_status ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    GGML_ASSERT(backend != NULL);
    // one lock for both: another thread's graph cannot slip in before the wait
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    const enum ggml_status status = backend->iface.graph_compute(backend, cgraph);
    if (backend->iface.synchronize != NULL) {
        backend->iface.synchronize(backend);
    }
    ggml_backend_stream_unlock(lock);
    return status;
}

enum ggml_status ggml_backend_graph_compute_async(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    GGML_ASSERT(backend != NULL);
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    const enum ggml_status status = backend->iface.graph_compute(backend, cgraph);
    ggml_backend_stream_unlock(lock);
    return status;
}

bool ggml_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    GGML_ASSERT(backend != NULL);
    return ggml_backend_dev_supports_op(backend->device, op);
}

bool ggml_backend_supports_buft(ggml_backend_t backend, ggml_backend_buffer_type_t buft) {
    GGML_ASSERT(backend != NULL);
    return ggml_backend_dev_supports_buft(backend->device, buft);
}

bool ggml_backend_offload_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    GGML_ASSERT(backend != NULL);
    return ggml_backend_dev_offload_op(backend->device, op);
}

ggml_backend_dev_t ggml_backend_get_device(ggml_backend_t backend) {
    GGML_ASSERT(backend != NULL);
    return backend->device;
}

//
// copies between buffers
//

void ggml_backend_tensor_copy(const struct ggml_tensor * src, struct ggml_tensor * dst) {
    GGML_ASSERT(src != NULL && dst != NULL);
    GGML_ASSERT(ggml_are_same_layout(src, dst) && "cannot copy tensors with different layouts");
    if (src == dst) {
        return;
    }
    const size_t nbytes = ggml_nbytes(src);
    if (nbytes == 0) {
        return;
    }
    ggml_backend_buffer_t src_buf = tensor_buffer(src);
    ggml_backend_buffer_t dst_buf = tensor_buffer(dst);
    GGML_ASSERT(src_buf != NULL && "source tensor has no buffer");
    GGML_ASSERT(dst_buf != NULL && "destination tensor has no buffer");

    if (ggml_backend_buffer_is_host(src_buf)) {
        ggml_backend_tensor_set(dst, src->data, 0, nbytes);
    } else if (ggml_backend_buffer_is_host(dst_buf)) {
        ggml_backend_tensor_get(src, dst->data, 0, nbytes);
    } else if (!ggml_backend_buffer_copy_tensor(src, dst)) {
        // neither side is host memory and dst's buffer cannot copy: stage through the host
        GGML_LOG_DEBUG("%s: slow copy of %zu bytes from %s to %s through host memory\n",
                       __func__, nbytes, ggml_backend_buffer_name(src_buf), ggml_backend_buffer_name(dst_buf));
        void * staging = malloc(nbytes);
        if (staging == NULL) {
            GGML_ABORT("%s: out of memory for a %zu-byte staging copy of tensor '%s'", __func__, nbytes, src->name);
        }
        ggml_backend_tensor_get(src, staging, 0, nbytes);
        ggml_backend_tensor_set(dst, staging, 0, nbytes);
        free(staging);
    }
}

void ggml_backend_tensor_copy_async(ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    GGML_ASSERT(ggml_are_same_layout(src, dst) && "cannot copy tensors with different layouts");
    if (src == dst) {
        return;
    }
    GGML_ASSERT(backend_src != NULL && backend_dst != NULL);
    if (backend_dst->iface.cpy_tensor_async != NULL) {
        // the copy is queued on dst's stream after work of src's: both are used
        pthread_mutex_t * locks[2];
        ggml_backend_stream_lock2(backend_src, backend_dst, locks);
        const bool done = backend_dst->iface.cpy_tensor_async(backend_src, backend_dst, src, dst);
        ggml_backend_stream_unlock2(locks);
        if (done) {
            return;
        }
    }
    // what an asynchronous copy promises (after the queued work of both
    // streams) a synchronous one gives by waiting for both first
    ggml_backend_synchronize(backend_src);
    ggml_backend_synchronize(backend_dst);
    ggml_backend_tensor_copy(src, dst);
}

//
// events
//

ggml_backend_event_t ggml_backend_event_new(ggml_backend_dev_t device) {
    if (device == NULL || device->iface.event_new == NULL) {
        return NULL;
    }
    return device->iface.event_new(device);
}

void ggml_backend_event_free(ggml_backend_event_t event) {
    if (event == NULL) {
        return;
    }
    GGML_ASSERT(event->device != NULL && event->device->iface.event_free != NULL);
    event->device->iface.event_free(event->device, event);
}

void ggml_backend_event_record(ggml_backend_event_t event, ggml_backend_t backend) {
    GGML_ASSERT(event != NULL);
    GGML_ASSERT(backend != NULL);
    GGML_ASSERT(backend->iface.event_record != NULL && "this backend cannot record events");
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    backend->iface.event_record(backend, event);
    ggml_backend_stream_unlock(lock);
}

void ggml_backend_event_synchronize(ggml_backend_event_t event) {
    GGML_ASSERT(event != NULL);
    GGML_ASSERT(event->device->iface.event_synchronize != NULL && "this device cannot wait for events");
    event->device->iface.event_synchronize(event->device, event);
}

void ggml_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event) {
    GGML_ASSERT(event != NULL);
    GGML_ASSERT(backend != NULL);
    GGML_ASSERT(backend->iface.event_wait != NULL && "this backend cannot wait for events");
    pthread_mutex_t * lock = ggml_backend_stream_lock(backend);
    backend->iface.event_wait(backend, event);
    ggml_backend_stream_unlock(lock);
}

//
// device
//

const char * ggml_backend_dev_name(ggml_backend_dev_t device) {
    GGML_ASSERT(device != NULL);
    return device->iface.get_name(device);
}

const char * ggml_backend_dev_description(ggml_backend_dev_t device) {
    GGML_ASSERT(device != NULL);
    return device->iface.get_description(device);
}

void ggml_backend_dev_memory(ggml_backend_dev_t device, size_t * free, size_t * total) {
    GGML_ASSERT(device != NULL);
    device->iface.get_memory(device, free, total);
}

enum ggml_backend_dev_type ggml_backend_dev_type(ggml_backend_dev_t device) {
    GGML_ASSERT(device != NULL);
    return device->iface.get_type(device);
}

void ggml_backend_dev_get_props(ggml_backend_dev_t device, struct ggml_backend_dev_props * props) {
    GGML_ASSERT(device != NULL);
    // members a device leaves alone read as zero / NULL / false
    memset(props, 0, sizeof(*props));
    device->iface.get_props(device, props);
}

ggml_backend_reg_t ggml_backend_dev_backend_reg(ggml_backend_dev_t device) {
    GGML_ASSERT(device != NULL);
    return device->reg;
}

ggml_backend_t ggml_backend_dev_init(ggml_backend_dev_t device, const char * params) {
    GGML_ASSERT(device != NULL);
    return device->iface.init_backend(device, params);
}

ggml_backend_buffer_type_t ggml_backend_dev_buffer_type(ggml_backend_dev_t device) {
    GGML_ASSERT(device != NULL);
    return device->iface.get_buffer_type(device);
}

ggml_backend_buffer_type_t ggml_backend_dev_host_buffer_type(ggml_backend_dev_t device) {
    GGML_ASSERT(device != NULL);
    if (device->iface.get_host_buffer_type == NULL) {
        return NULL;
    }
    return device->iface.get_host_buffer_type(device);
}

ggml_backend_buffer_t ggml_backend_dev_buffer_from_host_ptr(ggml_backend_dev_t device, void * ptr, size_t size, size_t max_tensor_size) {
    GGML_ASSERT(device != NULL);
    if (device->iface.buffer_from_host_ptr == NULL) {
        GGML_LOG_ERROR("%s: device %s cannot make buffers over host memory\n", __func__, ggml_backend_dev_name(device));
        return NULL;
    }
    return device->iface.buffer_from_host_ptr(device, ptr, size, max_tensor_size);
}

bool ggml_backend_dev_supports_op(ggml_backend_dev_t device, const struct ggml_tensor * op) {
    GGML_ASSERT(device != NULL);
    return device->iface.supports_op(device, op);
}

bool ggml_backend_dev_supports_buft(ggml_backend_dev_t device, ggml_backend_buffer_type_t buft) {
    GGML_ASSERT(device != NULL);
    return device->iface.supports_buft(device, buft);
}

bool ggml_backend_dev_offload_op(ggml_backend_dev_t device, const struct ggml_tensor * op) {
    GGML_ASSERT(device != NULL);
    if (device->iface.offload_op != NULL) {
        return device->iface.offload_op(device, op);
    }
    return false;
}

//
// registry entry
//

const char * ggml_backend_reg_name(ggml_backend_reg_t reg) {
    GGML_ASSERT(reg != NULL);
    return reg->iface.get_name(reg);
}

size_t ggml_backend_reg_dev_count(ggml_backend_reg_t reg) {
    GGML_ASSERT(reg != NULL);
    return reg->iface.get_device_count(reg);
}

ggml_backend_dev_t ggml_backend_reg_dev_get(ggml_backend_reg_t reg, size_t index) {
    GGML_ASSERT(reg != NULL);
    GGML_ASSERT(index < ggml_backend_reg_dev_count(reg) && "device index out of range");
    return reg->iface.get_device(reg, index);
}

void * ggml_backend_reg_get_proc_address(ggml_backend_reg_t reg, const char * name) {
    GGML_ASSERT(reg != NULL);
    if (reg->iface.get_proc_address == NULL) {
        return NULL;
    }
    return reg->iface.get_proc_address(reg, name);
}

//
// multi-buffer: several buffers of one type freed, cleared and tagged as one.
// It has no memory of its own; its tensors live in the parts.
//

struct multi_buffer_context {
    ggml_backend_buffer_t * buffers;
    size_t n_buffers;
};

static void multi_buffer_free(ggml_backend_buffer_t buffer) {
    struct multi_buffer_context * ctx = (struct multi_buffer_context *) buffer->context;
    for (size_t i = 0; i < ctx->n_buffers; i++) {
        ggml_backend_buffer_free(ctx->buffers[i]);
    }
    free(ctx->buffers);
    free(ctx);
}

static void multi_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct multi_buffer_context * ctx = (struct multi_buffer_context *) buffer->context;
    for (size_t i = 0; i < ctx->n_buffers; i++) {
        ggml_backend_buffer_clear(ctx->buffers[i], value);
    }
}

static void multi_buffer_reset(ggml_backend_buffer_t buffer) {
    struct multi_buffer_context * ctx = (struct multi_buffer_context *) buffer->context;
    for (size_t i = 0; i < ctx->n_buffers; i++) {
        ggml_backend_buffer_reset(ctx->buffers[i]);
    }
}

static const struct ggml_backend_buffer_i multi_buffer_iface = {
    .free_buffer   = multi_buffer_free,
    .get_base      = NULL,
    .init_tensor   = NULL,
    .memset_tensor = NULL,
    .set_tensor    = NULL,
    .get_tensor    = NULL,
    .set_tensor_2d = NULL,
    .get_tensor_2d = NULL,
    .cpy_tensor    = NULL,
    .clear         = multi_buffer_clear,
    .reset         = multi_buffer_reset,
};

ggml_backend_buffer_t ggml_backend_multi_buffer_alloc_buffer(ggml_backend_buffer_t * buffers, size_t n_buffers) {
    GGML_ASSERT(n_buffers > 0 && buffers != NULL);
    struct multi_buffer_context * ctx = (struct multi_buffer_context *) malloc(sizeof(*ctx));
    ggml_backend_buffer_t * parts = (ggml_backend_buffer_t *) malloc(n_buffers * sizeof(*parts));
    if (ctx == NULL || parts == NULL) {
        GGML_LOG_ERROR("%s: out of memory for a multi-buffer of %zu parts\n", __func__, n_buffers);
        free(ctx);
        free(parts);
        return NULL;
    }
    size_t total_size = 0;
    for (size_t i = 0; i < n_buffers; i++) {
        GGML_ASSERT(buffers[i]->buft == buffers[0]->buft && "the parts of a multi-buffer must have one buffer type");
        parts[i] = buffers[i];
        total_size += ggml_backend_buffer_get_size(buffers[i]);
    }
    *ctx = (struct multi_buffer_context) {
        .buffers   = parts,
        .n_buffers = n_buffers,
    };
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buffers[0]->buft, multi_buffer_iface, ctx, total_size);
    if (buffer == NULL) {
        free(parts);
        free(ctx);
    }
    return buffer;
}

bool ggml_backend_buffer_is_multi_buffer(ggml_backend_buffer_t buffer) {
    GGML_ASSERT(buffer != NULL);
    return buffer->iface.free_buffer == multi_buffer_free;
}

void ggml_backend_multi_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage) {
    GGML_ASSERT(ggml_backend_buffer_is_multi_buffer(buffer));
    struct multi_buffer_context * ctx = (struct multi_buffer_context *) buffer->context;
    for (size_t i = 0; i < ctx->n_buffers; i++) {
        ggml_backend_buffer_set_usage(ctx->buffers[i], usage);
    }
}
