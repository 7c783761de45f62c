// ggml-backend-meta-buffer.c: meta buffers, the simple tensors that hold each
// device's slice of a meta tensor, and get/set of split tensors (gathering
// and scattering the slices).
//
// A meta buffer of size S is one buffer of size S on every simple device; a
// tensor at offset o of the meta buffer has its slices at offset o of each
// simple buffer (a slice is never larger than the tensor, and the buffer type
// plans with the largest simple alloc size). The meta buffer's base is an
// address that is not memory: nothing may read a meta tensor's data directly.
//
// Layout of a tensor split along dimension a (contiguous): for every index of
// the dimensions above a, the full tensor has one "chunk" of nb[a+1] bytes;
// it is cut, segment by segment and repeat by repeat, into one piece per
// device, and device j's chunk is its pieces in that order.

#include "ggml-backend-meta-impl.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static _Atomic uint64_t g_slices_generation = 1;

uint64_t ggml_backend_meta_slices_generation(void) {
    return atomic_load(&g_slices_generation);
}

// not memory (non-canonical on x86-64), aligned for every buffer type
#define META_FAKE_BASE ((uintptr_t) 1 << (sizeof(void *)*8 - 4))

//
// the address map
//

static size_t ptr_hash(uintptr_t key, size_t cap) {
    uint64_t h = (uint64_t) key * 0x9E3779B97F4A7C15ull;
    return (size_t) (h >> 17) & (cap - 1);
}

void * ggml_meta_ptr_map_get(const struct ggml_meta_ptr_map * map, uintptr_t key) {
    if (map->cap == 0) {
        return NULL;
    }
    for (size_t i = ptr_hash(key, map->cap);; i = (i + 1) & (map->cap - 1)) {
        if (map->keys[i] == key) {
            return map->vals[i];
        }
        if (map->keys[i] == 0) {
            return NULL;
        }
    }
}

static bool ptr_map_grow(struct ggml_meta_ptr_map * map) {
    const size_t cap = map->cap == 0 ? 64 : 2*map->cap;
    uintptr_t * keys = calloc(cap, sizeof(keys[0]));
    void     ** vals = calloc(cap, sizeof(vals[0]));
    if (keys == NULL || vals == NULL) {
        free(keys);
        free(vals);
        return false;
    }
    for (size_t i = 0; i < map->cap; i++) {
        if (map->keys[i] != 0) {
            size_t k = ptr_hash(map->keys[i], cap);
            while (keys[k] != 0) {
                k = (k + 1) & (cap - 1);
            }
            keys[k] = map->keys[i];
            vals[k] = map->vals[i];
        }
    }
    free(map->keys);
    free(map->vals);
    map->keys = keys;
    map->vals = vals;
    map->cap  = cap;
    return true;
}

bool ggml_meta_ptr_map_put(struct ggml_meta_ptr_map * map, uintptr_t key, void * val) {
    GGML_ASSERT(key != 0);
    if (2*(map->count + 1) > map->cap && !ptr_map_grow(map)) {
        return false;
    }
    size_t i = ptr_hash(key, map->cap);
    while (map->keys[i] != 0 && map->keys[i] != key) {
        i = (i + 1) & (map->cap - 1);
    }
    if (map->keys[i] == 0) {
        map->count++;
    }
    map->keys[i] = key;
    map->vals[i] = val;
    return true;
}

void ggml_meta_ptr_map_clear(struct ggml_meta_ptr_map * map, void (*free_val)(void *)) {
    for (size_t i = 0; i < map->cap; i++) {
        if (map->keys[i] != 0 && free_val != NULL) {
            free_val(map->vals[i]);
        }
        map->keys[i] = 0;
        map->vals[i] = NULL;
    }
    map->count = 0;
}

void ggml_meta_ptr_map_free(struct ggml_meta_ptr_map * map, void (*free_val)(void *)) {
    ggml_meta_ptr_map_clear(map, free_val);
    free(map->keys);
    free(map->vals);
    memset(map, 0, sizeof(*map));
}

//
// the stores of simple tensors
//

// Contexts come in pages of one context per device, filled in step; a new
// page is added when the last is full (twice the size of the one before).
static bool store_add_page(struct ggml_meta_tensor_store * st, size_t n_tensors) {
    struct ggml_context ** ctxs = realloc(st->ctxs, (st->n_ctxs + 1)*st->n_devs*sizeof(ctxs[0]));
    if (ctxs == NULL) {
        return false;
    }
    st->ctxs = ctxs;
    const struct ggml_init_params params = {
        /*.mem_size   =*/ n_tensors*ggml_tensor_overhead(),
        /*.mem_buffer =*/ NULL,
        /*.no_alloc   =*/ true,
    };
    for (size_t j = 0; j < st->n_devs; j++) {
        ctxs[st->n_ctxs*st->n_devs + j] = ggml_init(params);
        if (ctxs[st->n_ctxs*st->n_devs + j] == NULL) {
            for (size_t k = 0; k < j; k++) {
                ggml_free(ctxs[st->n_ctxs*st->n_devs + k]);
            }
            return false;
        }
    }
    st->n_ctxs++;
    return true;
}

static void store_init(struct ggml_meta_tensor_store * st, size_t n_devs) {
    memset(st, 0, sizeof(*st));
    st->n_devs = n_devs;
}

// the context of device j that has room for one more tensor (NULL: out of memory)
static struct ggml_context * store_ctx_with_room(struct ggml_meta_tensor_store * st, size_t j) {
    if (st->n_ctxs > 0) {
        struct ggml_context * last = st->ctxs[(st->n_ctxs - 1)*st->n_devs + j];
        if (ggml_get_mem_size(last) - ggml_used_mem(last) >= ggml_tensor_overhead()) {
            return last;
        }
    }
    size_t n = 256;
    if (st->n_ctxs > 0) {
        n = 2*ggml_get_mem_size(st->ctxs[(st->n_ctxs - 1)*st->n_devs]) / ggml_tensor_overhead();
    }
    if (!store_add_page(st, n)) {
        return NULL;
    }
    return st->ctxs[(st->n_ctxs - 1)*st->n_devs + j];
}

void ggml_meta_tensor_store_reset(struct ggml_meta_tensor_store * st) {
    ggml_meta_ptr_map_clear(&st->map, free);
    for (size_t i = 0; i < st->n_ctxs*st->n_devs; i++) {
        ggml_reset(st->ctxs[i]);
    }
}

static void store_free(struct ggml_meta_tensor_store * st) {
    ggml_meta_ptr_map_free(&st->map, free);
    for (size_t i = 0; i < st->n_ctxs*st->n_devs; i++) {
        ggml_free(st->ctxs[i]);
    }
    free(st->ctxs);
    st->ctxs   = NULL;
    st->n_ctxs = 0;
}

//
// buffer
//

static struct ggml_backend_meta_buffer_context * meta_buf_ctx(ggml_backend_buffer_t buffer) {
    GGML_ASSERT(ggml_backend_buffer_is_meta(buffer));
    return (struct ggml_backend_meta_buffer_context *) buffer->context;
}

size_t ggml_backend_meta_buffer_n_bufs(ggml_backend_buffer_t meta_buf) {
    return meta_buf_ctx(meta_buf)->n_bufs;
}

ggml_backend_buffer_t ggml_backend_meta_buffer_simple_buffer(ggml_backend_buffer_t meta_buf, size_t index) {
    struct ggml_backend_meta_buffer_context * ctx = meta_buf_ctx(meta_buf);
    GGML_ASSERT(index < ctx->n_bufs);
    return ctx->bufs[index];
}

// the store a tensor's simple tensors are in (or go into)
static struct ggml_meta_tensor_store * store_of(struct ggml_backend_meta_buffer_context * ctx, const struct ggml_tensor * tensor) {
    if (ggml_meta_ptr_map_get(&ctx->stc_static.map, (uintptr_t) tensor) != NULL) {
        return &ctx->stc_static;
    }
    return &ctx->stc_compute[ctx->stc_compute_index];
}

struct ggml_tensor * ggml_backend_meta_buffer_simple_tensor(const struct ggml_tensor * tensor, size_t index) {
    struct ggml_backend_meta_buffer_context * ctx = meta_buf_ctx(tensor->buffer);
    GGML_ASSERT(index < ctx->n_bufs);
    struct ggml_tensor ** simple = ggml_meta_ptr_map_get(&store_of(ctx, tensor)->map, (uintptr_t) tensor);
    return simple != NULL ? simple[index] : NULL;
}

static void ggml_backend_meta_buffer_free_buffer(ggml_backend_buffer_t buffer) {
    struct ggml_backend_meta_buffer_context * ctx = meta_buf_ctx(buffer);
    for (size_t j = 0; j < ctx->n_bufs; j++) {
        if (ctx->bufs[j] != NULL) {
            ggml_backend_buffer_free(ctx->bufs[j]);
        }
    }
    store_free(&ctx->stc_static);
    store_free(&ctx->stc_compute[0]);
    store_free(&ctx->stc_compute[1]);
    ggml_meta_ptr_map_free(&ctx->split_state_cache, free);
    free(ctx->bufs);
    free(ctx);
}

static void * ggml_backend_meta_buffer_get_base(ggml_backend_buffer_t buffer) {
    (void) buffer;
    return (void *) META_FAKE_BASE;
}

// Whether device j's copy of a view starts at a scaled offset: an offset
// that steps over whole split blocks shrinks with the slice, one inside
// the first block (a column offset within a row) does not.
static bool view_offset_is_internal(const struct ggml_tensor * tensor, int split_dim) {
    const int src_axis = ggml_backend_meta_get_split_state(tensor->view_src, true).axis;
    if (!ggml_meta_axis_is_dim((enum ggml_backend_meta_split_axis) src_axis)) {
        GGML_ABORT("meta backend: view '%s' is split but its source '%s' is not", tensor->name, tensor->view_src->name);
    }
    if (tensor->view_offs <= tensor->view_src->nb[src_axis]) {
        return true;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        const size_t dim_size = (size_t) tensor->ne[i] * tensor->nb[i];
        if (tensor->view_offs <= dim_size && dim_size < tensor->nb[split_dim]) {
            return true;
        }
    }
    return false;
}

// makes tensor's simple tensors in store st
static enum ggml_status meta_init_simple_tensors(struct ggml_meta_tensor_store * st, struct ggml_tensor * tensor) {
    struct ggml_backend_meta_buffer_context * ctx = meta_buf_ctx(tensor->buffer);
    const size_t n = ctx->n_bufs;
    const struct ggml_backend_meta_split_state ss = ggml_backend_meta_get_split_state(tensor, true);
    const int split_dim = ggml_meta_axis_is_dim(ss.axis) ? (int) ss.axis : -1;

    struct ggml_tensor ** simple = calloc(n, sizeof(simple[0]));
    if (simple == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return GGML_STATUS_ALLOC_FAILED;
    }
    for (size_t j = 0; j < n; j++) {
        int64_t ne[GGML_MAX_DIMS];
        size_t  nb[GGML_MAX_DIMS];
        for (int d = 0; d < GGML_MAX_DIMS; d++) {
            ne[d] = tensor->ne[d];
            nb[d] = tensor->nb[d];
        }
        if (split_dim >= 0) {
            ne[split_dim] = ggml_meta_split_extent(&ss, n, j);
            for (int d = 0; d < GGML_MAX_DIMS; d++) {
                if (tensor->nb[d] > tensor->nb[split_dim]) {
                    nb[d] = tensor->nb[d] * (size_t) ne[split_dim] / (size_t) tensor->ne[split_dim];
                }
            }
        }
        struct ggml_context * sctx = store_ctx_with_room(st, j);
        if (sctx == NULL) {
            free(simple);
            GGML_LOG_ERROR("%s: out of memory for the slices of '%s'\n", __func__, tensor->name);
            return GGML_STATUS_ALLOC_FAILED;
        }
        struct ggml_tensor * t = ggml_new_tensor(sctx, tensor->type, GGML_MAX_DIMS, ne);
        for (int d = 0; d < GGML_MAX_DIMS; d++) {
            t->nb[d] = nb[d];
        }
        t->op    = tensor->op;
        t->flags = tensor->flags;
        memcpy(t->op_params, tensor->op_params, sizeof(t->op_params));
        ggml_set_name(t, tensor->name);
        t->extra = tensor->extra;

        // placed like the meta tensor: a view of the slice of its source, or at
        // the same offset in the simple buffer (left unplaced when the meta
        // tensor has no offset yet: ggml_backend_meta_alloc_ctx_tensors_from_buft)
        if (tensor->view_src != NULL) {
            t->view_src  = tensor->view_src;
            t->view_offs = tensor->view_offs;
            if (ggml_backend_buffer_is_meta(tensor->view_src->buffer)) {
                t->view_src = ggml_backend_meta_buffer_simple_tensor(tensor->view_src, j);
                if (t->view_src == NULL) {
                    free(simple);
                    GGML_LOG_ERROR("%s: the source of view '%s' has no slices\n", __func__, tensor->name);
                    return GGML_STATUS_FAILED;
                }
                if (t->view_offs > 0 && split_dim >= 0 && !view_offset_is_internal(tensor, split_dim)) {
                    t->view_offs = t->view_offs * (size_t) ne[split_dim] / (size_t) tensor->ne[split_dim];
                }
                // an empty view has no split: keep it inside the (smaller) slice of its source
                if (ggml_nelements(tensor) == 0 && t->view_offs > ggml_nbytes(t->view_src)) {
                    t->view_offs = ggml_nbytes(t->view_src);
                }
            }
            if (t->view_src->data != NULL) {
                t->buffer = t->view_src->buffer;
                t->data   = (char *) t->view_src->data + t->view_offs;
            }
        } else if (tensor->data != NULL && ctx->bufs[j] != NULL) {
            t->buffer = ctx->bufs[j];
            t->data   = (char *) ggml_backend_buffer_get_base(ctx->bufs[j]) + ((uintptr_t) tensor->data - META_FAKE_BASE);
        }
        if (t->buffer != NULL && t->data != NULL && ggml_nbytes(t) > 0) {
            const uintptr_t base = (uintptr_t) ggml_backend_buffer_get_base(t->buffer);
            const uintptr_t at   = (uintptr_t) t->data;
            if (at < base || at - base + ggml_nbytes(t) > ggml_backend_buffer_get_size(t->buffer)) {
                GGML_LOG_ERROR("%s: slice %zu of '%s' (%s, view of '%s' at %zu) runs past its buffer: [%zu, %zu) of %zu\n", __func__, j,
                               tensor->name, ggml_op_desc(tensor), tensor->view_src ? tensor->view_src->name : "-", t->view_offs,
                               (size_t) (at - base), (size_t) (at - base) + ggml_nbytes(t), ggml_backend_buffer_get_size(t->buffer));
            }
        }
        for (int i = 0; i < GGML_MAX_SRC; i++) {
            struct ggml_tensor * src = tensor->src[i];
            t->src[i] = src;
            if (src == tensor) {
                t->src[i] = t;
            } else if (src != NULL && ggml_backend_buffer_is_meta(src->buffer)) {
                t->src[i] = ggml_backend_meta_buffer_simple_tensor(src, j);
            }
        }
        simple[j] = t;
    }

    // a device with an empty slice of a source computes nothing for this node
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const struct ggml_tensor * src = tensor->src[i];
        if (src == NULL || src == tensor || !ggml_backend_buffer_is_meta(src->buffer) || ggml_nelements(src) == 0 ||
                ggml_backend_meta_src_gathered(tensor, i)) {
            continue;
        }
        const struct ggml_backend_meta_split_state sss = ggml_backend_meta_get_split_state(src, true);
        if (!ggml_meta_axis_is_dim(sss.axis)) {
            continue;
        }
        for (size_t j = 0; j < n; j++) {
            if (ggml_meta_split_extent(&sss, n, j) == 0) {
                simple[j]->flags &= ~GGML_TENSOR_FLAG_COMPUTE;
            }
        }
    }

    atomic_fetch_add(&g_slices_generation, 1);
    free(ggml_meta_ptr_map_get(&st->map, (uintptr_t) tensor));
    if (!ggml_meta_ptr_map_put(&st->map, (uintptr_t) tensor, simple)) {
        free(simple);
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return GGML_STATUS_ALLOC_FAILED;
    }
    return GGML_STATUS_SUCCESS;
}

// A tensor placed in a buffer the program keeps (not a compute buffer of a
// graph allocator) keeps its slices for the buffer's life.
static enum ggml_status ggml_backend_meta_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    struct ggml_backend_meta_buffer_context * ctx = meta_buf_ctx(buffer);
    ctx->stc_compute_index = ctx->stc_compute_index_next;
    struct ggml_meta_tensor_store * st = store_of(ctx, tensor);
    if (st != &ctx->stc_static && ggml_backend_buffer_get_usage(buffer) != GGML_BACKEND_BUFFER_USAGE_COMPUTE && tensor->view_src == NULL) {
        st = &ctx->stc_static;
    }
    return meta_init_simple_tensors(st, tensor);
}

//
// get/set
//

// where a transfer of split tensor data goes: the simple tensors themselves,
// or a meta backend's simple streams (async)
struct meta_xfer {
    ggml_backend_t meta_backend; // NULL: synchronous
    bool           set;
};

static void xfer_2d(const struct meta_xfer * x, size_t j, struct ggml_tensor * t, char * data, size_t offset, size_t size,
                    size_t n_copies, size_t stride_tensor, size_t stride_data) {
    if (size == 0 || n_copies == 0) {
        return;
    }
    if (x->meta_backend != NULL) {
        ggml_backend_t b = ggml_backend_meta_simple_backend(x->meta_backend, j);
        if (x->set) {
            ggml_backend_tensor_set_2d_async(b, t, data, offset, size, n_copies, stride_tensor, stride_data);
        } else {
            ggml_backend_tensor_get_2d_async(b, t, data, offset, size, n_copies, stride_tensor, stride_data);
        }
    } else if (x->set) {
        ggml_backend_tensor_set_2d(t, data, offset, size, n_copies, stride_tensor, stride_data);
    } else {
        ggml_backend_tensor_get_2d(t, data, offset, size, n_copies, stride_tensor, stride_data);
    }
}

// bytes of n elements along dimension axis
static size_t axis_bytes(const struct ggml_tensor * tensor, int axis, int64_t n) {
    if (axis == 0) {
        return (size_t) (n / ggml_blck_size(tensor->type)) * tensor->nb[0];
    }
    return (size_t) n * tensor->nb[axis];
}

static size_t chunk_bytes(const struct ggml_tensor * t, int axis) {
    return axis + 1 < GGML_MAX_DIMS ? t->nb[axis + 1] : ggml_nbytes(t);
}

// scatter (set) or gather (get) bytes [offset, offset + size) of a tensor split along a dimension
static void meta_xfer_split(const struct meta_xfer * x, const struct ggml_tensor * tensor,
                            const struct ggml_backend_meta_split_state * ss, char * data, size_t offset, size_t size) {
    const size_t n    = ggml_backend_meta_buffer_n_bufs(tensor->buffer);
    const int    axis = (int) ss->axis;
    if (!ggml_is_contiguous(tensor)) {
        GGML_ABORT("meta backend: %s of '%s', split along %d, which is not contiguous", x->set ? "set" : "get", tensor->name, axis);
    }
    const size_t chunk = chunk_bytes(tensor, axis);
    if (offset % chunk != 0 || size % chunk != 0) {
        GGML_ABORT("meta backend: %s of '%s' at [%zu, %zu) cuts a block of %zu bytes split along %d",
                   x->set ? "set" : "get", tensor->name, offset, offset + size, chunk, axis);
    }
    const size_t i_start = offset / chunk;
    const size_t n_rows  = size / chunk;

    size_t * simple_off = calloc(n, sizeof(simple_off[0]));
    GGML_ASSERT(simple_off != NULL);
    size_t data_off = 0;
    for (uint32_t s = 0; s < ss->n_segments; s++) {
        for (uint32_t r = 0; r < ss->nr[s]; r++) {
            for (size_t j = 0; j < n; j++) {
                struct ggml_tensor * t = ggml_backend_meta_buffer_simple_tensor(tensor, j);
                const size_t piece = axis_bytes(tensor, axis, ss->ne[s*n + j]);
                if (piece > 0) {
                    const size_t simple_chunk = chunk_bytes(t, axis);
                    xfer_2d(x, j, t, data + data_off, i_start*simple_chunk + simple_off[j], piece, n_rows, simple_chunk, chunk);
                }
                data_off      += piece;
                simple_off[j] += piece;
            }
        }
    }
    free(simple_off);
    GGML_ASSERT(data_off == chunk);
}

// PARTIAL: set gives every device value/n, get sums the devices' values
static void meta_xfer_partial(const struct meta_xfer * x, const struct ggml_tensor * tensor, char * data, size_t offset, size_t size) {
    const size_t n = ggml_backend_meta_buffer_n_bufs(tensor->buffer);
    if (tensor->type != GGML_TYPE_F32 || offset % sizeof(float) != 0 || size % sizeof(float) != 0) {
        GGML_ABORT("meta backend: %s of '%s', a partial sum of type %s (only f32)", x->set ? "set" : "get", tensor->name,
                   ggml_type_name(tensor->type));
    }
    const size_t n_el = size / sizeof(float);
    float * tmp = malloc(size > 0 ? size : 1);
    GGML_ASSERT(tmp != NULL);
    if (x->meta_backend != NULL) {
        ggml_backend_synchronize(x->meta_backend);
    }
    if (x->set) {
        const float * src = (const float *) data;
        for (size_t i = 0; i < n_el; i++) {
            tmp[i] = src[i] / (float) n;
        }
        for (size_t j = 0; j < n; j++) {
            ggml_backend_tensor_set(ggml_backend_meta_buffer_simple_tensor(tensor, j), tmp, offset, size);
        }
    } else {
        float * dst = (float *) data;
        memset(dst, 0, size);
        for (size_t j = 0; j < n; j++) {
            ggml_backend_tensor_get(ggml_backend_meta_buffer_simple_tensor(tensor, j), tmp, offset, size);
            for (size_t i = 0; i < n_el; i++) {
                dst[i] += tmp[i];
            }
        }
    }
    free(tmp);
}

void ggml_backend_meta_xfer(ggml_backend_t meta_backend, bool set, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    const struct meta_xfer x = { meta_backend, set };
    const size_t n = ggml_backend_meta_buffer_n_bufs(tensor->buffer);
    // as the graph leaves it: a product over a split K has been summed
    const struct ggml_backend_meta_split_state ss = ggml_backend_meta_get_split_state(tensor, true);
    switch (ss.axis) {
        case GGML_BACKEND_SPLIT_AXIS_0:
        case GGML_BACKEND_SPLIT_AXIS_1:
        case GGML_BACKEND_SPLIT_AXIS_2:
        case GGML_BACKEND_SPLIT_AXIS_3:
            meta_xfer_split(&x, tensor, &ss, (char *) data, offset, size);
            break;
        case GGML_BACKEND_SPLIT_AXIS_MIRRORED:
            // every device gets the values; any device has them all
            for (size_t j = 0; j < (set ? n : 1); j++) {
                struct ggml_tensor * t = ggml_backend_meta_buffer_simple_tensor(tensor, j);
                xfer_2d(&x, j, t, (char *) data, offset, size, 1, 0, 0);
            }
            break;
        case GGML_BACKEND_SPLIT_AXIS_PARTIAL:
            meta_xfer_partial(&x, tensor, (char *) data, offset, size);
            break;
        default:
            GGML_ABORT("meta backend: %s of '%s', which has no split (%s)", set ? "set" : "get", tensor->name,
                       ggml_backend_meta_split_axis_name(ss.axis));
    }
}

static void ggml_backend_meta_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data,
                                                size_t offset, size_t size) {
    (void) buffer;
    ggml_backend_meta_xfer(NULL, true, tensor, (void *) data, offset, size);
}

static void ggml_backend_meta_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data,
                                                size_t offset, size_t size) {
    (void) buffer;
    ggml_backend_meta_xfer(NULL, false, tensor, data, offset, size);
}

// A mirrored tensor is set alike everywhere; a split one only as a whole
// (every slice), and a partial sum only to zero (the sum of zeros).
static void ggml_backend_meta_buffer_memset_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, uint8_t value,
                                                   size_t offset, size_t size) {
    const size_t n = ggml_backend_meta_buffer_n_bufs(buffer);
    const struct ggml_backend_meta_split_state ss = ggml_backend_meta_get_split_state(tensor, true);
    if (ss.axis == GGML_BACKEND_SPLIT_AXIS_MIRRORED) {
        for (size_t j = 0; j < n; j++) {
            ggml_backend_tensor_memset(ggml_backend_meta_buffer_simple_tensor(tensor, j), value, offset, size);
        }
        return;
    }
    if (offset != 0 || size != ggml_nbytes(tensor) || (ss.axis == GGML_BACKEND_SPLIT_AXIS_PARTIAL && value != 0)) {
        GGML_ABORT("meta backend: memset of '%s' (split %s) to %u at [%zu, %zu): only whole split tensors, partial sums only to 0",
                   tensor->name, ggml_backend_meta_split_axis_name(ss.axis), (unsigned) value, offset, offset + size);
    }
    for (size_t j = 0; j < n; j++) {
        struct ggml_tensor * t = ggml_backend_meta_buffer_simple_tensor(tensor, j);
        if (ggml_nbytes(t) > 0) {
            ggml_backend_tensor_memset(t, value, 0, ggml_nbytes(t));
        }
    }
}

static void ggml_backend_meta_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct ggml_backend_meta_buffer_context * ctx = meta_buf_ctx(buffer);
    for (size_t j = 0; j < ctx->n_bufs; j++) {
        ggml_backend_buffer_clear(ctx->bufs[j], value);
    }
}

static void ggml_backend_meta_buffer_reset(ggml_backend_buffer_t buffer) {
    struct ggml_backend_meta_buffer_context * ctx = meta_buf_ctx(buffer);
    for (size_t j = 0; j < ctx->n_bufs; j++) {
        ggml_backend_buffer_reset(ctx->bufs[j]);
    }
}

static const struct ggml_backend_buffer_i ggml_backend_meta_buffer_iface = {
    /* .free_buffer   = */ ggml_backend_meta_buffer_free_buffer,
    /* .get_base      = */ ggml_backend_meta_buffer_get_base,
    /* .init_tensor   = */ ggml_backend_meta_buffer_init_tensor,
    /* .memset_tensor = */ ggml_backend_meta_buffer_memset_tensor,
    /* .set_tensor    = */ ggml_backend_meta_buffer_set_tensor,
    /* .get_tensor    = */ ggml_backend_meta_buffer_get_tensor,
    /* .set_tensor_2d = */ NULL,
    /* .get_tensor_2d = */ NULL,
    /* .cpy_tensor    = */ NULL,
    /* .clear         = */ ggml_backend_meta_buffer_clear,
    /* .reset         = */ ggml_backend_meta_buffer_reset,
};

bool ggml_backend_buffer_is_meta(ggml_backend_buffer_t buf) {
    return buf != NULL && buf->iface.free_buffer == ggml_backend_meta_buffer_iface.free_buffer;
}

static struct ggml_backend_meta_buffer_context * meta_buf_ctx_new(size_t n) {
    struct ggml_backend_meta_buffer_context * ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        return NULL;
    }
    ctx->n_bufs = n;
    ctx->bufs   = calloc(n, sizeof(ctx->bufs[0]));
    if (ctx->bufs == NULL) {
        free(ctx);
        return NULL;
    }
    store_init(&ctx->stc_static, n);
    store_init(&ctx->stc_compute[0], n);
    store_init(&ctx->stc_compute[1], n);
    return ctx;
}

static void meta_buf_ctx_free(struct ggml_backend_meta_buffer_context * ctx) {
    for (size_t j = 0; j < ctx->n_bufs; j++) {
        if (ctx->bufs[j] != NULL) {
            ggml_backend_buffer_free(ctx->bufs[j]);
        }
    }
    store_free(&ctx->stc_static);
    free(ctx->bufs);
    free(ctx);
}

ggml_backend_buffer_t ggml_backend_meta_buffer_type_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    const size_t n = ggml_backend_meta_dev_n_devs(ggml_backend_buft_get_device(buft));
    struct ggml_backend_meta_buffer_context * ctx = meta_buf_ctx_new(n);
    if (ctx == NULL) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        return NULL;
    }
    size_t max_size = 0;
    for (size_t j = 0; j < n; j++) {
        ctx->bufs[j] = ggml_backend_buft_alloc_buffer(ggml_backend_meta_buft_simple_buft(buft, j), size);
        if (ctx->bufs[j] == NULL) {
            GGML_LOG_ERROR("%s: failed to allocate %zu bytes on %s\n", __func__, size,
                           ggml_backend_buft_name(ggml_backend_meta_buft_simple_buft(buft, j)));
            meta_buf_ctx_free(ctx);
            return NULL;
        }
        const size_t s = ggml_backend_buffer_get_size(ctx->bufs[j]);
        max_size = s > max_size ? s : max_size;
    }
    return ggml_backend_buffer_init(buft, ggml_backend_meta_buffer_iface, ctx, max_size);
}

// Each device gets only its slices: the simple tensors of the context's
// tensors are allocated together in one buffer per device.
ggml_backend_buffer_t ggml_backend_meta_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    GGML_ASSERT(ggml_backend_buft_is_meta(buft));
    const size_t n = ggml_backend_meta_dev_n_devs(ggml_backend_buft_get_device(buft));
    size_t n_tensors = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        n_tensors += t->buffer == NULL && t->data == NULL ? 1 : 0;
    }
    if (n_tensors == 0) {
        GGML_LOG_DEBUG("%s: all tensors in the context are already allocated\n", __func__);
        return NULL;
    }
    struct ggml_backend_meta_buffer_context * mctx = meta_buf_ctx_new(n);
    if (mctx == NULL || !store_add_page(&mctx->stc_static, n_tensors)) {
        GGML_LOG_ERROR("%s: out of memory\n", __func__);
        if (mctx != NULL) {
            meta_buf_ctx_free(mctx);
        }
        return NULL;
    }
    ggml_backend_buffer_t meta_buf = ggml_backend_buffer_init(buft, ggml_backend_meta_buffer_iface, mctx, 0);

    // the meta tensors point at the fake base: their data is never read
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->buffer != NULL || t->data != NULL || (t->view_src != NULL && !ggml_backend_buffer_is_meta(t->view_src->buffer))) {
            continue;
        }
        t->buffer = meta_buf;
        if (meta_init_simple_tensors(&mctx->stc_static, t) != GGML_STATUS_SUCCESS) {
            t->buffer = NULL;
            ggml_backend_buffer_free(meta_buf);
            return NULL;
        }
        t->data = t->view_src != NULL ? (char *) t->view_src->data + t->view_offs : (void *) META_FAKE_BASE;
    }
    for (size_t j = 0; j < n; j++) {
        ggml_backend_buffer_type_t simple_buft = ggml_backend_meta_buft_simple_buft(buft, j);
        struct ggml_context * sctx = mctx->stc_static.ctxs[j];
        bool any_elements = false;
        for (struct ggml_tensor * t = ggml_get_first_tensor(sctx); t != NULL; t = ggml_get_next_tensor(sctx, t)) {
            any_elements = any_elements || (ggml_nelements(t) > 0 && t->view_src == NULL);
        }
        // a device whose slices are all empty gets an empty buffer
        mctx->bufs[j] = any_elements ? ggml_backend_alloc_ctx_tensors_from_buft(sctx, simple_buft)
                                     : ggml_backend_buft_alloc_buffer(simple_buft, 0);
        if (mctx->bufs[j] == NULL) {
            GGML_LOG_ERROR("%s: failed to allocate the slices on %s\n", __func__, ggml_backend_buft_name(simple_buft));
            ggml_backend_buffer_free(meta_buf);
            return NULL;
        }
        if (!any_elements) {
            for (struct ggml_tensor * t = ggml_get_first_tensor(sctx); t != NULL; t = ggml_get_next_tensor(sctx, t)) {
                t->buffer = mctx->bufs[j];
            }
        }
        const size_t s = ggml_backend_buffer_get_size(mctx->bufs[j]);
        meta_buf->size = s > meta_buf->size ? s : meta_buf->size;
    }
    return meta_buf;
}
