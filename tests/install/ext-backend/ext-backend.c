// ext-backend.c: a backend written outside the ggml tree, against the
// installed ggml-backend-impl.h only (as the zDNN backend is written). Its
// device "EXT" keeps tensors in memory of its own (not host-visible as far as
// ggml knows: is_host is false) and computes matrix products of F32 matrices.

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define EXT_ALIGN 64

static atomic_long g_matmuls; // products computed, for the test program

//
// buffer
//

struct ext_buffer {
    void * base;
    size_t size;
};

static void ext_buffer_free(ggml_backend_buffer_t buffer) {
    struct ext_buffer * b = (struct ext_buffer *) buffer->context;
    free(b->base);
    free(b);
}

static void * ext_buffer_get_base(ggml_backend_buffer_t buffer) {
    return ((struct ext_buffer *) buffer->context)->base;
}

static void ext_buffer_memset(ggml_backend_buffer_t buffer, struct ggml_tensor * t, uint8_t v, size_t off, size_t size) {
    (void) buffer;
    memset((char *) t->data + off, v, size);
}

static void ext_buffer_set(ggml_backend_buffer_t buffer, struct ggml_tensor * t, const void * data, size_t off, size_t size) {
    (void) buffer;
    memcpy((char *) t->data + off, data, size);
}

static void ext_buffer_get(ggml_backend_buffer_t buffer, const struct ggml_tensor * t, void * data, size_t off, size_t size) {
    (void) buffer;
    memcpy(data, (const char *) t->data + off, size);
}

static void ext_buffer_clear(ggml_backend_buffer_t buffer, uint8_t v) {
    struct ext_buffer * b = (struct ext_buffer *) buffer->context;
    memset(b->base, v, b->size);
}

static const struct ggml_backend_buffer_i ext_buffer_i = {
    .free_buffer   = ext_buffer_free,
    .get_base      = ext_buffer_get_base,
    .init_tensor   = NULL,
    .memset_tensor = ext_buffer_memset,
    .set_tensor    = ext_buffer_set,
    .get_tensor    = ext_buffer_get,
    .set_tensor_2d = NULL,
    .get_tensor_2d = NULL,
    .cpy_tensor    = NULL,
    .clear         = ext_buffer_clear,
    .reset         = NULL,
};

//
// buffer type
//

static const char * ext_buft_name(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "EXT";
}

static ggml_backend_buffer_t ext_buft_alloc(ggml_backend_buffer_type_t buft, size_t size) {
    struct ext_buffer * b = (struct ext_buffer *) malloc(sizeof(*b));
    if (b == NULL) {
        return NULL;
    }
    b->size = (size + EXT_ALIGN - 1) / EXT_ALIGN * EXT_ALIGN;
    b->base = aligned_alloc(EXT_ALIGN, b->size);
    if (b->base == NULL) {
        free(b);
        return NULL;
    }
    return ggml_backend_buffer_init(buft, ext_buffer_i, b, size);
}

static size_t ext_buft_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return EXT_ALIGN;
}

static struct ggml_backend_device ext_device;

static struct ggml_backend_buffer_type ext_buft = {
    .iface = {
        .get_name       = ext_buft_name,
        .alloc_buffer   = ext_buft_alloc,
        .get_alignment  = ext_buft_alignment,
        .get_max_size   = NULL,
        .get_alloc_size = NULL,
        .is_host        = NULL, // ggml must not touch this memory directly
    },
    .device  = &ext_device,
    .context = NULL,
};

//
// backend: F32 matrix products, rows of a times rows of b
//

static void ext_mul_mat(struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++)
    for (int64_t i2 = 0; i2 < dst->ne[2]; i2++)
    for (int64_t j = 0; j < dst->ne[1]; j++) {
        const char * brow = (const char *) b->data + j*b->nb[1] + i2*b->nb[2] + i3*b->nb[3];
        for (int64_t i = 0; i < dst->ne[0]; i++) {
            const char * arow = (const char *) a->data + i*a->nb[1] + (i2 / (b->ne[2] / a->ne[2]))*a->nb[2] +
                                (i3 / (b->ne[3] / a->ne[3]))*a->nb[3];
            double s = 0;
            for (int64_t k = 0; k < a->ne[0]; k++) {
                s += (double) *(const float *)(arow + k*a->nb[0]) * (double) *(const float *)(brow + k*b->nb[0]);
            }
            *(float *)((char *) dst->data + i*dst->nb[0] + j*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3]) = (float) s;
        }
    }
    atomic_fetch_add(&g_matmuls, 1);
}

static const char * ext_backend_name(ggml_backend_t backend) {
    (void) backend;
    return "EXT";
}

static void ext_backend_free(ggml_backend_t backend) {
    free(backend);
}

static enum ggml_status ext_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    (void) backend;
    for (int i = 0; i < ggml_graph_n_nodes(cgraph); i++) {
        struct ggml_tensor * node = ggml_graph_node(cgraph, i);
        if ((node->flags & GGML_TENSOR_FLAG_COMPUTE) == 0) {
            continue;
        }
        switch (node->op) {
            case GGML_OP_MUL_MAT: ext_mul_mat(node); break;
            case GGML_OP_NONE: case GGML_OP_VIEW: case GGML_OP_RESHAPE:
            case GGML_OP_PERMUTE: case GGML_OP_TRANSPOSE: break;
            default: return GGML_STATUS_FAILED;
        }
    }
    return GGML_STATUS_SUCCESS;
}

static ggml_guid_t ext_guid(void) {
    static ggml_guid guid = { 'o', 'u', 't', '-', 'o', 'f', '-', 't', 'r', 'e', 'e', '-', 'e', 'x', 't', '!' };
    return &guid;
}

static const struct ggml_backend_i ext_backend_i = {
    .get_name = ext_backend_name,
    .free     = ext_backend_free,
    .graph_compute = ext_graph_compute,
};

//
// device and registry entry
//

static const char * ext_dev_name(ggml_backend_dev_t dev) { (void) dev; return "EXT"; }
static const char * ext_dev_description(ggml_backend_dev_t dev) { (void) dev; return "out-of-tree matrix unit"; }
static void ext_dev_memory(ggml_backend_dev_t dev, size_t * free_mem, size_t * total) { (void) dev; *free_mem = 0; *total = 0; }
static enum ggml_backend_dev_type ext_dev_type(ggml_backend_dev_t dev) { (void) dev; return GGML_BACKEND_DEVICE_TYPE_ACCEL; }

static void ext_dev_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    props->name        = ext_dev_name(dev);
    props->description = ext_dev_description(dev);
    props->type        = ext_dev_type(dev);
    ext_dev_memory(dev, &props->memory_free, &props->memory_total);
}

static ggml_backend_t ext_dev_init(ggml_backend_dev_t dev, const char * params) {
    (void) params;
    ggml_backend_t b = (ggml_backend_t) malloc(sizeof(*b));
    if (b != NULL) {
        *b = (struct ggml_backend) { .guid = ext_guid(), .iface = ext_backend_i, .device = dev, .context = NULL };
    }
    return b;
}

static ggml_backend_buffer_type_t ext_dev_buft(ggml_backend_dev_t dev) { (void) dev; return &ext_buft; }

static bool ext_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    (void) dev;
    switch (op->op) {
        case GGML_OP_NONE: case GGML_OP_VIEW: case GGML_OP_RESHAPE: case GGML_OP_PERMUTE: case GGML_OP_TRANSPOSE:
            return true;
        case GGML_OP_MUL_MAT:
            return op->src[0]->type == GGML_TYPE_F32 && op->src[1]->type == GGML_TYPE_F32;
        default:
            return false;
    }
}

static bool ext_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    (void) dev;
    return buft == &ext_buft;
}

static const char * ext_reg_name(ggml_backend_reg_t reg) { (void) reg; return "EXT"; }
static size_t ext_reg_count(ggml_backend_reg_t reg) { (void) reg; return 1; }
static ggml_backend_dev_t ext_reg_device(ggml_backend_reg_t reg, size_t i) { (void) reg; (void) i; return &ext_device; }

static long ext_matmuls(void) {
    return atomic_load(&g_matmuls);
}

// the one extra function the test program looks up by name
static void * ext_reg_proc(ggml_backend_reg_t reg, const char * name) {
    (void) reg;
    if (strcmp(name, "ext_matmuls") == 0) {
        void * p;
        long (*fn)(void) = ext_matmuls;
        memcpy(&p, &fn, sizeof(p));
        return p;
    }
    return NULL;
}

static struct ggml_backend_reg ext_reg = {
    .api_version = GGML_BACKEND_API_VERSION,
    .iface = {
        .get_name         = ext_reg_name,
        .get_device_count = ext_reg_count,
        .get_device       = ext_reg_device,
        .get_proc_address = ext_reg_proc,
    },
    .context = NULL,
};

static struct ggml_backend_device ext_device = {
    .iface = {
        .get_name        = ext_dev_name,
        .get_description = ext_dev_description,
        .get_memory      = ext_dev_memory,
        .get_type        = ext_dev_type,
        .get_props       = ext_dev_props,
        .init_backend    = ext_dev_init,
        .get_buffer_type = ext_dev_buft,
        .supports_op     = ext_dev_supports_op,
        .supports_buft   = ext_dev_supports_buft,
    },
    .reg     = &ext_reg,
    .context = NULL,
};

static ggml_backend_reg_t ext_backend_reg(void) {
    return &ext_reg;
}

GGML_BACKEND_DL_IMPL(ext_backend_reg)
