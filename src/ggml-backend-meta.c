// ggml-backend-meta.c: the meta device (ggml_backend_meta_device) and its
// buffer type; see ggml-backend-meta-impl.h for how the files divide the work.
//
// One call with the same simple devices, callback and user data returns the
// same device, as upstream's does: programs compare devices by address. The
// devices live until the process ends, in a list that grows as needed.
// The axis names are upstream's, as they appear in its logs.

#include "ggml-backend-meta-impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char * ggml_backend_meta_split_axis_name(enum ggml_backend_meta_split_axis split_axis) {
    switch (split_axis) {
        case GGML_BACKEND_SPLIT_AXIS_0:        return "0";
        case GGML_BACKEND_SPLIT_AXIS_1:        return "1";
        case GGML_BACKEND_SPLIT_AXIS_2:        return "2";
        case GGML_BACKEND_SPLIT_AXIS_3:        return "3";
        case GGML_BACKEND_SPLIT_AXIS_MIRRORED: return "MIRRORED";
        case GGML_BACKEND_SPLIT_AXIS_PARTIAL:  return "PARTIAL";
        case GGML_BACKEND_SPLIT_AXIS_NONE:     return "NONE";
        case GGML_BACKEND_SPLIT_AXIS_UNKNOWN:  return "UNKNOWN";
    }
    GGML_ABORT("%s: invalid split axis %d", __func__, (int) split_axis);
}

//
// device
//

static struct ggml_backend_meta_device_context * meta_dev_ctx(ggml_backend_dev_t dev) {
    GGML_ASSERT(ggml_backend_dev_is_meta(dev));
    return (struct ggml_backend_meta_device_context *) dev->context;
}

static const char * ggml_backend_meta_device_get_name(ggml_backend_dev_t dev) {
    return meta_dev_ctx(dev)->name;
}

static const char * ggml_backend_meta_device_get_description(ggml_backend_dev_t dev) {
    return meta_dev_ctx(dev)->description;
}

// the sums over the simple devices
static void ggml_backend_meta_device_get_memory(ggml_backend_dev_t dev, size_t * free, size_t * total) {
    const struct ggml_backend_meta_device_context * ctx = meta_dev_ctx(dev);
    *free  = 0;
    *total = 0;
    for (size_t j = 0; j < ctx->n_devs; j++) {
        size_t f = 0, t = 0;
        ggml_backend_dev_memory(ctx->simple_devs[j], &f, &t);
        *free  += f;
        *total += t;
    }
}

static enum ggml_backend_dev_type ggml_backend_meta_device_get_type(ggml_backend_dev_t dev) {
    (void) dev;
    return GGML_BACKEND_DEVICE_TYPE_META;
}

// A capability is there when every simple device has it; host buffers,
// buffers from host pointers and events are not offered (as upstream).
static void ggml_backend_meta_device_get_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    const struct ggml_backend_meta_device_context * ctx = meta_dev_ctx(dev);
    memset(props, 0, sizeof(*props));
    props->name        = ctx->name;
    props->description = ctx->description;
    props->type        = GGML_BACKEND_DEVICE_TYPE_META;
    props->device_id   = NULL;
    ggml_backend_meta_device_get_memory(dev, &props->memory_free, &props->memory_total);
    props->caps.async                = true;
    props->caps.host_buffer          = false;
    props->caps.buffer_from_host_ptr = false;
    props->caps.events               = false;
    props->caps.mmap_support         = true;
    for (size_t j = 0; j < ctx->n_devs; j++) {
        struct ggml_backend_dev_props p;
        ggml_backend_dev_get_props(ctx->simple_devs[j], &p);
        props->caps.async        = props->caps.async        && p.caps.async;
        props->caps.mmap_support = props->caps.mmap_support && p.caps.mmap_support;
    }
}

static ggml_backend_buffer_type_t ggml_backend_meta_device_get_buffer_type(ggml_backend_dev_t dev) {
    return &meta_dev_ctx(dev)->buft;
}

// the simple devices' host buffer type, when they all have the same one
static ggml_backend_buffer_type_t ggml_backend_meta_device_get_host_buffer_type(ggml_backend_dev_t dev) {
    const struct ggml_backend_meta_device_context * ctx = meta_dev_ctx(dev);
    ggml_backend_buffer_type_t host_buft = NULL;
    for (size_t j = 0; j < ctx->n_devs; j++) {
        ggml_backend_buffer_type_t b = ggml_backend_dev_host_buffer_type(ctx->simple_devs[j]);
        if (b == NULL || (host_buft != NULL && b != host_buft)) {
            return NULL;
        }
        host_buft = b;
    }
    return host_buft;
}

// every simple device computes every node: the intersection
static bool ggml_backend_meta_device_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    const struct ggml_backend_meta_device_context * ctx = meta_dev_ctx(dev);
    for (size_t j = 0; j < ctx->n_devs; j++) {
        if (!ggml_backend_dev_supports_op(ctx->simple_devs[j], op)) {
            return false;
        }
    }
    return true;
}

// a meta buffer type over the same simple devices
static bool ggml_backend_meta_device_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    ggml_backend_dev_t other = ggml_backend_buft_get_device(buft);
    if (!ggml_backend_buft_is_meta(buft) || !ggml_backend_dev_is_meta(other)) {
        return false;
    }
    const struct ggml_backend_meta_device_context * a = meta_dev_ctx(dev);
    const struct ggml_backend_meta_device_context * b = meta_dev_ctx(other);
    return a->n_devs == b->n_devs && memcmp(a->simple_devs, b->simple_devs, a->n_devs*sizeof(a->simple_devs[0])) == 0;
}

static const struct ggml_backend_device_i ggml_backend_meta_device_iface = {
    /* .get_name             = */ ggml_backend_meta_device_get_name,
    /* .get_description      = */ ggml_backend_meta_device_get_description,
    /* .get_memory           = */ ggml_backend_meta_device_get_memory,
    /* .get_type             = */ ggml_backend_meta_device_get_type,
    /* .get_props            = */ ggml_backend_meta_device_get_props,
    /* .init_backend         = */ ggml_backend_meta_device_init_backend,
    /* .get_buffer_type      = */ ggml_backend_meta_device_get_buffer_type,
    /* .get_host_buffer_type = */ ggml_backend_meta_device_get_host_buffer_type,
    /* .buffer_from_host_ptr = */ NULL,
    /* .supports_op          = */ ggml_backend_meta_device_supports_op,
    /* .supports_buft        = */ ggml_backend_meta_device_supports_buft,
    /* .offload_op           = */ NULL,
    /* .event_new            = */ NULL,
    /* .event_free           = */ NULL,
    /* .event_synchronize    = */ NULL,
};

bool ggml_backend_dev_is_meta(ggml_backend_dev_t dev) {
    return dev != NULL && dev->iface.get_name == ggml_backend_meta_device_iface.get_name;
}

size_t ggml_backend_meta_dev_n_devs(ggml_backend_dev_t meta_dev) {
    return meta_dev_ctx(meta_dev)->n_devs;
}

ggml_backend_dev_t ggml_backend_meta_dev_simple_dev(ggml_backend_dev_t meta_dev, size_t index) {
    const struct ggml_backend_meta_device_context * ctx = meta_dev_ctx(meta_dev);
    GGML_ASSERT(index < ctx->n_devs);
    return ctx->simple_devs[index];
}

//
// buffer type
//

static const struct ggml_backend_meta_device_context * meta_buft_ctx(ggml_backend_buffer_type_t buft) {
    GGML_ASSERT(ggml_backend_buft_is_meta(buft));
    return (const struct ggml_backend_meta_device_context *) buft->context;
}

static const char * ggml_backend_meta_buffer_type_get_name(ggml_backend_buffer_type_t buft) {
    return meta_buft_ctx(buft)->buft_name;
}

// the largest of the simple alignments (they are powers of two, so it is a multiple of each)
static size_t ggml_backend_meta_buffer_type_get_alignment(ggml_backend_buffer_type_t buft) {
    const struct ggml_backend_meta_device_context * ctx = meta_buft_ctx(buft);
    size_t alignment = 1;
    for (size_t j = 0; j < ctx->n_devs; j++) {
        const size_t a = ggml_backend_buft_get_alignment(ctx->simple_bufts[j]);
        alignment = a > alignment ? a : alignment;
    }
    return alignment;
}

static size_t ggml_backend_meta_buffer_type_get_max_size(ggml_backend_buffer_type_t buft) {
    const struct ggml_backend_meta_device_context * ctx = meta_buft_ctx(buft);
    size_t max_size = SIZE_MAX;
    for (size_t j = 0; j < ctx->n_devs; j++) {
        const size_t m = ggml_backend_buft_get_max_size(ctx->simple_bufts[j]);
        max_size = m < max_size ? m : max_size;
    }
    return max_size;
}

// Every simple buffer is as large as the meta buffer, so that a tensor has
// the same offset in each (its slices are never larger than the whole).
static size_t ggml_backend_meta_buffer_type_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    const struct ggml_backend_meta_device_context * ctx = meta_buft_ctx(buft);
    size_t size = 0;
    for (size_t j = 0; j < ctx->n_devs; j++) {
        const size_t s = ggml_backend_buft_get_alloc_size(ctx->simple_bufts[j], tensor);
        size = s > size ? s : size;
    }
    return size;
}

// Never host memory, unlike upstream (which says so when every simple buffer
// type is host memory): a meta tensor's data is not an address of its values,
// and code that takes host buffers for readable memory would read garbage.
static bool ggml_backend_meta_buffer_type_is_host(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return false;
}

static const struct ggml_backend_buffer_type_i ggml_backend_meta_buffer_type_iface = {
    /* .get_name       = */ ggml_backend_meta_buffer_type_get_name,
    /* .alloc_buffer   = */ ggml_backend_meta_buffer_type_alloc_buffer,
    /* .get_alignment  = */ ggml_backend_meta_buffer_type_get_alignment,
    /* .get_max_size   = */ ggml_backend_meta_buffer_type_get_max_size,
    /* .get_alloc_size = */ ggml_backend_meta_buffer_type_get_alloc_size,
    /* .is_host        = */ ggml_backend_meta_buffer_type_is_host,
};

bool ggml_backend_buft_is_meta(ggml_backend_buffer_type_t buft) {
    return buft != NULL && buft->iface.get_name == ggml_backend_meta_buffer_type_iface.get_name;
}

ggml_backend_buffer_type_t ggml_backend_meta_buft_simple_buft(ggml_backend_buffer_type_t meta_buft, size_t index) {
    const struct ggml_backend_meta_device_context * ctx = meta_buft_ctx(meta_buft);
    GGML_ASSERT(index < ctx->n_devs);
    return ctx->simple_bufts[index];
}

//
// the list of meta devices
//

struct meta_device_node {
    struct ggml_backend_device            dev;
    struct ggml_backend_meta_device_context ctx;
    struct meta_device_node             * next;
};

static pthread_mutex_t           meta_devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct meta_device_node * meta_devices      = NULL;

// "Meta(" + the parts joined by "," + ")", or NULL when out of memory
static char * meta_joined_name(size_t n, const char * (*part)(void *, size_t), void * arg) {
    size_t len = sizeof("Meta()");
    for (size_t j = 0; j < n; j++) {
        len += strlen(part(arg, j)) + 1;
    }
    char * s = malloc(len);
    if (s == NULL) {
        return NULL;
    }
    size_t at = (size_t) snprintf(s, len, "Meta(");
    for (size_t j = 0; j < n; j++) {
        at += (size_t) snprintf(s + at, len - at, "%s%s", j > 0 ? "," : "", part(arg, j));
    }
    snprintf(s + at, len - at, ")");
    return s;
}

static const char * part_dev_name(void * arg, size_t j)  { return ggml_backend_dev_name(((ggml_backend_dev_t *) arg)[j]); }
static const char * part_dev_desc(void * arg, size_t j)  { return ggml_backend_dev_description(((ggml_backend_dev_t *) arg)[j]); }
static const char * part_buft_name(void * arg, size_t j) { return ggml_backend_buft_name(((ggml_backend_buffer_type_t *) arg)[j]); }

static void meta_device_node_free(struct meta_device_node * node) {
    free(node->ctx.simple_devs);
    free(node->ctx.simple_bufts);
    free(node->ctx.name);
    free(node->ctx.description);
    free(node->ctx.buft_name);
    free(node);
}

static struct meta_device_node * meta_device_node_new(ggml_backend_dev_t * devs, size_t n_devs,
        ggml_backend_meta_get_split_state_t get_split_state, void * ud) {
    struct meta_device_node * node = calloc(1, sizeof(*node));
    if (node == NULL) {
        return NULL;
    }
    struct ggml_backend_meta_device_context * ctx = &node->ctx;
    ctx->n_devs             = n_devs;
    ctx->get_split_state    = get_split_state;
    ctx->get_split_state_ud = ud;
    ctx->simple_devs        = malloc(n_devs*sizeof(ctx->simple_devs[0]));
    ctx->simple_bufts       = malloc(n_devs*sizeof(ctx->simple_bufts[0]));
    if (ctx->simple_devs == NULL || ctx->simple_bufts == NULL) {
        meta_device_node_free(node);
        return NULL;
    }
    for (size_t j = 0; j < n_devs; j++) {
        ctx->simple_devs[j]  = devs[j];
        ctx->simple_bufts[j] = ggml_backend_dev_buffer_type(devs[j]);
        if (ctx->simple_bufts[j] == NULL) {
            GGML_LOG_ERROR("%s: device %s has no buffer type\n", __func__, ggml_backend_dev_name(devs[j]));
            meta_device_node_free(node);
            return NULL;
        }
    }
    ctx->name        = meta_joined_name(n_devs, part_dev_name,  ctx->simple_devs);
    ctx->description = meta_joined_name(n_devs, part_dev_desc,  ctx->simple_devs);
    ctx->buft_name   = meta_joined_name(n_devs, part_buft_name, ctx->simple_bufts);
    if (ctx->name == NULL || ctx->description == NULL || ctx->buft_name == NULL) {
        meta_device_node_free(node);
        return NULL;
    }
    node->dev = (struct ggml_backend_device) {
        .iface   = ggml_backend_meta_device_iface,
        .reg     = NULL,
        .context = ctx,
    };
    ctx->buft = (struct ggml_backend_buffer_type) {
        .iface   = ggml_backend_meta_buffer_type_iface,
        .device  = &node->dev,
        .context = ctx,
    };
    return node;
}

ggml_backend_dev_t ggml_backend_meta_device(ggml_backend_dev_t * devs, size_t n_devs,
                                            ggml_backend_meta_get_split_state_t get_split_state, void * get_split_state_ud) {
    // the split state holds GGML_BACKEND_META_MAX_DEVICES slices per segment
    if (devs == NULL || n_devs == 0 || n_devs > GGML_BACKEND_META_MAX_DEVICES || get_split_state == NULL) {
        GGML_LOG_ERROR("%s: a meta device needs 1 to %d simple devices and a split-state callback (got %zu devices%s)\n",
                       __func__, GGML_BACKEND_META_MAX_DEVICES, n_devs, get_split_state == NULL ? ", no callback" : "");
        return NULL;
    }
    for (size_t j = 0; j < n_devs; j++) {
        if (devs[j] == NULL || ggml_backend_dev_is_meta(devs[j])) {
            GGML_LOG_ERROR("%s: simple device %zu is %s\n", __func__, j, devs[j] == NULL ? "NULL" : "a meta device");
            return NULL;
        }
    }

    pthread_mutex_lock(&meta_devices_lock);
    struct meta_device_node * node = meta_devices;
    for (; node != NULL; node = node->next) {
        const struct ggml_backend_meta_device_context * ctx = &node->ctx;
        if (ctx->n_devs == n_devs && ctx->get_split_state == get_split_state && ctx->get_split_state_ud == get_split_state_ud &&
                memcmp(ctx->simple_devs, devs, n_devs*sizeof(devs[0])) == 0) {
            break;
        }
    }
    if (node == NULL) {
        node = meta_device_node_new(devs, n_devs, get_split_state, get_split_state_ud);
        if (node != NULL) {
            node->next   = meta_devices;
            meta_devices = node;
        }
    }
    pthread_mutex_unlock(&meta_devices_lock);

    if (node == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    return &node->dev;
}
