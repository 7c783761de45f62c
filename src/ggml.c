// ggml.c: contexts and tensors.
//
// A context is an arena: objects (tensors, graphs, raw buffers) are placed one
// after another in its memory, each preceded by a small header, and freed all
// at once by ggml_reset or ggml_free. Tensor data lives in the arena too
// unless the context was created with no_alloc, in which case a backend
// buffer provides it later.

#include "ggml-impl.h"
#include "ggml-backend.h"

#include <stdarg.h>
#include <stdio.h>

// header in front of every object in a context (layout as upstream, so that
// ggml_tensor_overhead() and ggml_graph_overhead() give the same sizes)
struct ggml_object {
    size_t offs; // offset of the object's payload in the arena
    size_t size; // payload bytes, padded to GGML_MEM_ALIGN
    struct ggml_object * next;
    enum ggml_object_type type;
    char padding[4];
};

#define GGML_OBJECT_SIZE sizeof(struct ggml_object)

_Static_assert(sizeof(struct ggml_object) % GGML_MEM_ALIGN == 0, "object headers must keep payloads aligned");
_Static_assert(sizeof(struct ggml_tensor) % GGML_MEM_ALIGN == 0, "tensors must keep their data aligned");

struct ggml_context {
    size_t mem_size;
    void * mem_buffer;
    bool   mem_buffer_owned;
    bool   no_alloc;

    int    n_objects;

    struct ggml_object * objects_begin;
    struct ggml_object * objects_end;
};

//
// contexts
//

struct ggml_context * ggml_init(struct ggml_init_params params) {
    struct ggml_context * ctx = (struct ggml_context *) ggml_impl_malloc(sizeof(struct ggml_context));
    if (ctx == NULL) {
        GGML_LOG_ERROR("%s: failed to allocate the context\n", __func__);
        return NULL;
    }

    if (params.mem_size == 0) {
        params.mem_size = GGML_MEM_ALIGN;
    }
    const size_t mem_size = params.mem_buffer ? params.mem_size : GGML_PAD(params.mem_size, GGML_MEM_ALIGN);

    void * mem_buffer = params.mem_buffer;
    if (mem_buffer == NULL) {
        mem_buffer = ggml_aligned_malloc(mem_size);
        if (mem_buffer == NULL) {
            GGML_LOG_ERROR("%s: failed to allocate %zu bytes for the context\n", __func__, mem_size);
            free(ctx);
            return NULL;
        }
    }
    GGML_ASSERT(((uintptr_t) mem_buffer) % GGML_MEM_ALIGN == 0 && "mem_buffer must be aligned to GGML_MEM_ALIGN");

    *ctx = (struct ggml_context) {
        .mem_size         = mem_size,
        .mem_buffer       = mem_buffer,
        .mem_buffer_owned = params.mem_buffer == NULL,
        .no_alloc         = params.no_alloc,
        .n_objects        = 0,
        .objects_begin    = NULL,
        .objects_end      = NULL,
    };
    return ctx;
}

void ggml_reset(struct ggml_context * ctx) {
    if (ctx == NULL) {
        return;
    }
    ctx->n_objects     = 0;
    ctx->objects_begin = NULL;
    ctx->objects_end   = NULL;
}

void ggml_free(struct ggml_context * ctx) {
    if (ctx == NULL) {
        return;
    }
    if (ctx->mem_buffer_owned) {
        ggml_aligned_free(ctx->mem_buffer, ctx->mem_size);
    }
    free(ctx);
}

size_t ggml_used_mem(const struct ggml_context * ctx) {
    return ctx->objects_end == NULL ? 0 : ctx->objects_end->offs + ctx->objects_end->size;
}

bool ggml_get_no_alloc(struct ggml_context * ctx) {
    return ctx->no_alloc;
}

void ggml_set_no_alloc(struct ggml_context * ctx, bool no_alloc) {
    ctx->no_alloc = no_alloc;
}

void * ggml_get_mem_buffer(const struct ggml_context * ctx) {
    return ctx->mem_buffer;
}

size_t ggml_get_mem_size(const struct ggml_context * ctx) {
    return ctx->mem_size;
}

size_t ggml_get_max_tensor_size(const struct ggml_context * ctx) {
    size_t max_size = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        max_size = MAX(max_size, ggml_nbytes(t));
    }
    return max_size;
}

//
// objects
//

// Append an object with a payload of size bytes. Running out of arena memory
// is a sizing error by the caller: it aborts, naming the sizes involved.
static struct ggml_object * ggml_new_object(struct ggml_context * ctx, enum ggml_object_type type, size_t size) {
    struct ggml_object * obj_cur = ctx->objects_end;
    const size_t cur_end = obj_cur == NULL ? 0 : obj_cur->offs + obj_cur->size;

    if (size > SIZE_MAX - GGML_MEM_ALIGN - GGML_OBJECT_SIZE - cur_end) {
        GGML_ABORT("ggml context: object of %zu bytes is too large", size);
    }
    const size_t size_needed = GGML_PAD(size, GGML_MEM_ALIGN);
    const size_t total       = cur_end + GGML_OBJECT_SIZE + size_needed;

    if (total > ctx->mem_size) {
        GGML_LOG_ERROR("%s: not enough space in the context's memory pool (needed %zu, available %zu)\n",
                       __func__, total, ctx->mem_size);
        GGML_ABORT("ggml context out of memory: needed %zu bytes, the context has %zu; "
                   "create it with a larger mem_size (ggml_tensor_overhead() per tensor, "
                   "ggml_graph_overhead() per graph, plus the data unless no_alloc)",
                   total, ctx->mem_size);
    }

    char * const mem_buffer = (char *) ctx->mem_buffer;
    struct ggml_object * const obj_new = (struct ggml_object *)(mem_buffer + cur_end);

    *obj_new = (struct ggml_object) {
        .offs = cur_end + GGML_OBJECT_SIZE,
        .size = size_needed,
        .next = NULL,
        .type = type,
    };

    if (obj_cur != NULL) {
        obj_cur->next = obj_new;
    } else {
        ctx->objects_begin = obj_new;
    }
    ctx->objects_end = obj_new;
    ctx->n_objects++;

    return obj_new;
}

void * ggml_new_buffer(struct ggml_context * ctx, size_t nbytes) {
    struct ggml_object * obj = ggml_new_object(ctx, GGML_OBJECT_TYPE_WORK_BUFFER, nbytes);
    return (uint8_t *) ctx->mem_buffer + obj->offs;
}

// internal: a graph object (see ggml-graph.c)
void * ggml_new_graph_object(struct ggml_context * ctx, size_t nbytes);

void * ggml_new_graph_object(struct ggml_context * ctx, size_t nbytes) {
    struct ggml_object * obj = ggml_new_object(ctx, GGML_OBJECT_TYPE_GRAPH, nbytes);
    return (uint8_t *) ctx->mem_buffer + obj->offs;
}

void ggml_print_object(const struct ggml_object * obj) {
    GGML_LOG_INFO(" - ggml_object: type = %d, offset = %zu, size = %zu, next = %p\n",
                  (int) obj->type, obj->offs, obj->size, (const void *) obj->next);
}

void ggml_print_objects(const struct ggml_context * ctx) {
    GGML_LOG_INFO("%s: objects in context %p:\n", __func__, (const void *) ctx);
    for (const struct ggml_object * obj = ctx->objects_begin; obj != NULL; obj = obj->next) {
        ggml_print_object(obj);
    }
    GGML_LOG_INFO("%s: --- end ---\n", __func__);
}

//
// tensors
//

static size_t checked_mul(size_t a, size_t b) {
    size_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        GGML_ABORT("tensor size overflows size_t (%zu * %zu)", a, b);
    }
    return r;
}

struct ggml_tensor * ggml_new_tensor_impl(
        struct ggml_context * ctx,
        enum   ggml_type      type,
        int                   n_dims,
        const int64_t       * ne,
        struct ggml_tensor  * view_src,
        size_t                view_offs) {
    GGML_ASSERT(type >= 0 && type < GGML_TYPE_COUNT);
    GGML_ASSERT(ggml_blck_size(type) > 0 && "this tensor type was removed from ggml");
    GGML_ASSERT(n_dims >= 1 && n_dims <= GGML_MAX_DIMS);

    int64_t shape[GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    for (int i = 0; i < n_dims; i++) {
        GGML_ASSERT(ne[i] >= 0 && "tensor dimensions must not be negative");
        shape[i] = ne[i];
    }

    // a view of a view aliases the original tensor
    if (view_src != NULL && view_src->view_src != NULL) {
        view_offs += view_src->view_offs;
        view_src   = view_src->view_src;
    }

    size_t data_size = ggml_row_size(type, shape[0]);
    for (int i = 1; i < GGML_MAX_DIMS; i++) {
        data_size = checked_mul(data_size, (size_t) shape[i]);
    }

    GGML_ASSERT(view_src == NULL || data_size == 0 || data_size + view_offs <= ggml_nbytes(view_src));

    void * data = view_src != NULL && view_src->data != NULL ? (char *) view_src->data + view_offs : NULL;

    const size_t obj_alloc_size = view_src == NULL && !ctx->no_alloc ? data_size : 0;

    struct ggml_object * const obj_new = ggml_new_object(ctx, GGML_OBJECT_TYPE_TENSOR, GGML_TENSOR_SIZE + obj_alloc_size);

    struct ggml_tensor * const result = (struct ggml_tensor *)((char *) ctx->mem_buffer + obj_new->offs);

    // A view gets its buffer from ggml_backend_view_init (ggml-alloc calls it
    // when the buffer is NULL), which also lets the buffer set up the view
    // (init_tensor): it must not be inherited here.
    *result = (struct ggml_tensor) {
        .type      = type,
        .buffer    = NULL,
        .ne        = { shape[0], shape[1], shape[2], shape[3] },
        .op        = GGML_OP_NONE,
        .flags     = 0,
        .view_src  = view_src,
        .view_offs = view_offs,
        .data      = obj_alloc_size > 0 ? (void *)(result + 1) : data,
    };

    result->nb[0] = ggml_type_size(type);
    result->nb[1] = result->nb[0] * (size_t)(shape[0] / ggml_blck_size(type));
    for (int i = 2; i < GGML_MAX_DIMS; i++) {
        result->nb[i] = result->nb[i - 1] * (size_t) result->ne[i - 1];
    }

    return result;
}

struct ggml_tensor * ggml_new_tensor(struct ggml_context * ctx, enum ggml_type type, int n_dims, const int64_t * ne) {
    return ggml_new_tensor_impl(ctx, type, n_dims, ne, NULL, 0);
}

struct ggml_tensor * ggml_new_tensor_1d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0) {
    return ggml_new_tensor(ctx, type, 1, &ne0);
}

struct ggml_tensor * ggml_new_tensor_2d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = { ne0, ne1 };
    return ggml_new_tensor(ctx, type, 2, ne);
}

struct ggml_tensor * ggml_new_tensor_3d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return ggml_new_tensor(ctx, type, 3, ne);
}

struct ggml_tensor * ggml_new_tensor_4d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return ggml_new_tensor(ctx, type, 4, ne);
}

struct ggml_tensor * ggml_dup_tensor(struct ggml_context * ctx, const struct ggml_tensor * src) {
    return ggml_new_tensor(ctx, src->type, GGML_MAX_DIMS, src->ne);
}

struct ggml_tensor * ggml_view_tensor(struct ggml_context * ctx, struct ggml_tensor * src) {
    struct ggml_tensor * result = ggml_new_tensor_impl(ctx, src->type, GGML_MAX_DIMS, src->ne, src, 0);
    ggml_format_name(result, "%s (view)", src->name);
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        result->nb[i] = src->nb[i];
    }
    return result;
}

struct ggml_tensor * ggml_get_first_tensor(const struct ggml_context * ctx) {
    for (struct ggml_object * obj = ctx->objects_begin; obj != NULL; obj = obj->next) {
        if (obj->type == GGML_OBJECT_TYPE_TENSOR) {
            return (struct ggml_tensor *)((char *) ctx->mem_buffer + obj->offs);
        }
    }
    return NULL;
}

struct ggml_tensor * ggml_get_next_tensor(const struct ggml_context * ctx, struct ggml_tensor * tensor) {
    struct ggml_object * obj = (struct ggml_object *)((char *) tensor - GGML_OBJECT_SIZE);
    for (obj = obj->next; obj != NULL; obj = obj->next) {
        if (obj->type == GGML_OBJECT_TYPE_TENSOR) {
            return (struct ggml_tensor *)((char *) ctx->mem_buffer + obj->offs);
        }
    }
    return NULL;
}

struct ggml_tensor * ggml_get_tensor(struct ggml_context * ctx, const char * name) {
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (strcmp(t->name, name) == 0) {
            return t;
        }
    }
    return NULL;
}

size_t ggml_tensor_overhead(void) {
    return GGML_OBJECT_SIZE + GGML_TENSOR_SIZE;
}

//
// sizes and layout predicates
//

int64_t ggml_nelements(const struct ggml_tensor * tensor) {
    return tensor->ne[0] * tensor->ne[1] * tensor->ne[2] * tensor->ne[3];
}

int64_t ggml_nrows(const struct ggml_tensor * tensor) {
    return tensor->ne[1] * tensor->ne[2] * tensor->ne[3];
}

// bytes from the first element to the end of the last one
size_t ggml_nbytes(const struct ggml_tensor * tensor) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (tensor->ne[i] <= 0) {
            return 0;
        }
    }
    const int64_t blck = ggml_blck_size(tensor->type);
    size_t nbytes;
    if (blck == 1) {
        nbytes = ggml_type_size(tensor->type);
        for (int i = 0; i < GGML_MAX_DIMS; i++) {
            nbytes += (size_t)(tensor->ne[i] - 1) * tensor->nb[i];
        }
    } else {
        nbytes = (size_t) tensor->ne[0] * tensor->nb[0] / (size_t) blck;
        for (int i = 1; i < GGML_MAX_DIMS; i++) {
            nbytes += (size_t)(tensor->ne[i] - 1) * tensor->nb[i];
        }
    }
    return nbytes;
}

size_t ggml_nbytes_pad(const struct ggml_tensor * tensor) {
    return GGML_PAD(ggml_nbytes(tensor), GGML_MEM_ALIGN);
}

size_t ggml_element_size(const struct ggml_tensor * tensor) {
    return ggml_type_size(tensor->type);
}

bool ggml_is_scalar(const struct ggml_tensor * t) {
    return t->ne[0] == 1 && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1;
}

bool ggml_is_vector(const struct ggml_tensor * t) {
    return t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1;
}

bool ggml_is_matrix(const struct ggml_tensor * t) {
    return t->ne[2] == 1 && t->ne[3] == 1;
}

bool ggml_is_3d(const struct ggml_tensor * t) {
    return t->ne[3] == 1;
}

int ggml_n_dims(const struct ggml_tensor * t) {
    for (int i = GGML_MAX_DIMS - 1; i >= 1; i--) {
        if (t->ne[i] > 1) {
            return i + 1;
        }
    }
    return 1;
}

bool ggml_is_transposed(const struct ggml_tensor * t) {
    return t->nb[0] > t->nb[1];
}

bool ggml_is_permuted(const struct ggml_tensor * t) {
    return t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3];
}

// Dimensions [1, m] may have any stride; dimensions (m, n) must be packed
// right after the ones below them. Dimension 0 must always be packed (or be
// a single block).
static bool is_contiguous_between(const struct ggml_tensor * t, int m, int n) {
    size_t next_nb = ggml_type_size(t->type);
    if (t->ne[0] != ggml_blck_size(t->type) && t->nb[0] != next_nb) {
        return false;
    }
    next_nb *= (size_t)(t->ne[0] / ggml_blck_size(t->type));
    for (int i = 1; i < n; i++) {
        if (i > m) {
            if (t->ne[i] != 1 && t->nb[i] != next_nb) {
                return false;
            }
            next_nb *= (size_t) t->ne[i];
        } else {
            next_nb = (size_t) t->ne[i] * t->nb[i];
        }
    }
    return true;
}

bool ggml_is_contiguous(const struct ggml_tensor * t) {
    return ggml_is_contiguous_0(t);
}

bool ggml_is_contiguous_0(const struct ggml_tensor * t) {
    return is_contiguous_between(t, 0, GGML_MAX_DIMS);
}

bool ggml_is_contiguous_1(const struct ggml_tensor * t) {
    return is_contiguous_between(t, 1, GGML_MAX_DIMS);
}

bool ggml_is_contiguous_2(const struct ggml_tensor * t) {
    return is_contiguous_between(t, 2, GGML_MAX_DIMS);
}

bool ggml_is_contiguous_to_1(const struct ggml_tensor * t) {
    return is_contiguous_between(t, 0, 1);
}

bool ggml_is_contiguous_to_2(const struct ggml_tensor * t) {
    return is_contiguous_between(t, 0, 2);
}

bool ggml_is_contiguous_to_3(const struct ggml_tensor * t) {
    return is_contiguous_between(t, 0, 3);
}

bool ggml_is_contiguously_allocated(const struct ggml_tensor * t) {
    return ggml_nbytes(t) == (size_t) ggml_nelements(t) * ggml_type_size(t->type) / (size_t) ggml_blck_size(t->type);
}

bool ggml_is_contiguous_channels(const struct ggml_tensor * t) {
    return t->nb[0] > t->nb[2] && t->nb[1] > t->nb[0] && t->nb[2] == ggml_type_size(t->type);
}

bool ggml_is_contiguous_rows(const struct ggml_tensor * t) {
    return t->ne[0] == ggml_blck_size(t->type) || t->nb[0] == ggml_type_size(t->type);
}

bool ggml_is_empty(const struct ggml_tensor * t) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (t->ne[i] == 0) {
            return true;
        }
    }
    return false;
}

bool ggml_is_view(const struct ggml_tensor * t) {
    return ggml_impl_is_view(t);
}

bool ggml_are_same_shape(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return t0->ne[0] == t1->ne[0] && t0->ne[1] == t1->ne[1] &&
           t0->ne[2] == t1->ne[2] && t0->ne[3] == t1->ne[3];
}

bool ggml_are_same_stride(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return t0->nb[0] == t1->nb[0] && t0->nb[1] == t1->nb[1] &&
           t0->nb[2] == t1->nb[2] && t0->nb[3] == t1->nb[3];
}

bool ggml_can_repeat(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    if (ggml_is_empty(t0)) {
        return ggml_is_empty(t1);
    }
    return t1->ne[0] % t0->ne[0] == 0 && t1->ne[1] % t0->ne[1] == 0 &&
           t1->ne[2] % t0->ne[2] == 0 && t1->ne[3] % t0->ne[3] == 0;
}

void ggml_unravel_index(const struct ggml_tensor * tensor, int64_t i, int64_t * i0, int64_t * i1, int64_t * i2, int64_t * i3) {
    const int64_t ne0 = tensor->ne[0];
    const int64_t ne1 = tensor->ne[1];
    const int64_t ne2 = tensor->ne[2];

    const int64_t c3 = i / (ne2 * ne1 * ne0);
    const int64_t c2 = (i - c3 * ne2 * ne1 * ne0) / (ne1 * ne0);
    const int64_t c1 = (i - c3 * ne2 * ne1 * ne0 - c2 * ne1 * ne0) / ne0;
    const int64_t c0 = i - c3 * ne2 * ne1 * ne0 - c2 * ne1 * ne0 - c1 * ne0;

    if (i0) { *i0 = c0; }
    if (i1) { *i1 = c1; }
    if (i2) { *i2 = c2; }
    if (i3) { *i3 = c3; }
}

//
// tensor attributes
//

enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * tensor) {
    GGML_ASSERT(tensor->op == GGML_OP_UNARY);
    return (enum ggml_unary_op) ggml_get_op_params_i32(tensor, 0);
}

enum ggml_glu_op ggml_get_glu_op(const struct ggml_tensor * tensor) {
    GGML_ASSERT(tensor->op == GGML_OP_GLU);
    return (enum ggml_glu_op) ggml_get_op_params_i32(tensor, 0);
}

void * ggml_get_data(const struct ggml_tensor * tensor) {
    return tensor->data;
}

float * ggml_get_data_f32(const struct ggml_tensor * tensor) {
    GGML_ASSERT(tensor->type == GGML_TYPE_F32);
    return (float *) tensor->data;
}

const char * ggml_get_name(const struct ggml_tensor * tensor) {
    return tensor->name;
}

struct ggml_tensor * ggml_set_name(struct ggml_tensor * tensor, const char * name) {
    size_t i;
    for (i = 0; i < sizeof(tensor->name) - 1 && name[i] != '\0'; i++) {
        tensor->name[i] = name[i];
    }
    tensor->name[i] = '\0';
    return tensor;
}

struct ggml_tensor * ggml_format_name(struct ggml_tensor * tensor, const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(tensor->name, sizeof(tensor->name), fmt, args);
    va_end(args);
    return tensor;
}

void ggml_set_input(struct ggml_tensor * tensor) {
    tensor->flags |= GGML_TENSOR_FLAG_INPUT;
}

void ggml_set_output(struct ggml_tensor * tensor) {
    tensor->flags |= GGML_TENSOR_FLAG_OUTPUT;
}

void ggml_set_param(struct ggml_tensor * tensor) {
    GGML_ASSERT(tensor->op == GGML_OP_NONE && "only leaf tensors can be parameters");
    tensor->flags |= GGML_TENSOR_FLAG_PARAM;
}

void ggml_set_loss(struct ggml_tensor * tensor) {
    GGML_ASSERT(ggml_is_scalar(tensor) && "a loss must be a scalar");
    GGML_ASSERT(tensor->type == GGML_TYPE_F32);
    tensor->flags |= GGML_TENSOR_FLAG_LOSS;
}

struct ggml_tensor * ggml_set_zero(struct ggml_tensor * tensor) {
    if (ggml_is_empty(tensor)) {
        return tensor;
    }
    const bool in_buffer = tensor->buffer != NULL || (tensor->view_src != NULL && tensor->view_src->buffer != NULL);
    if (in_buffer) {
        // the memory may be a device's: only the buffer can write it
        ggml_backend_tensor_memset(tensor, 0, 0, ggml_nbytes(tensor));
    } else {
        GGML_ASSERT(tensor->data != NULL && "ggml_set_zero: the tensor is not allocated");
        memset(tensor->data, 0, ggml_nbytes(tensor));
    }
    return tensor;
}

//
// thread pool parameters (the pool itself belongs to the CPU backend)
//

void ggml_threadpool_params_init(struct ggml_threadpool_params * p, int n_threads) {
    memset(p, 0, sizeof(*p)); // an all-zero cpumask keeps the inherited affinity
    p->n_threads  = n_threads;
    p->prio       = GGML_SCHED_PRIO_NORMAL;
    p->poll       = 50;
    p->strict_cpu = false;
    p->paused     = false;
}

struct ggml_threadpool_params ggml_threadpool_params_default(int n_threads) {
    struct ggml_threadpool_params p;
    ggml_threadpool_params_init(&p, n_threads);
    return p;
}

bool ggml_threadpool_params_match(const struct ggml_threadpool_params * p0, const struct ggml_threadpool_params * p1) {
    return p0->n_threads  == p1->n_threads &&
           p0->prio       == p1->prio &&
           p0->poll       == p1->poll &&
           p0->strict_cpu == p1->strict_cpu &&
           memcmp(p0->cpumask, p1->cpumask, GGML_MAX_N_THREADS) == 0;
}
