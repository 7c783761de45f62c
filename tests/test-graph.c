// test-graph: contexts (arena sizes, user memory, no_alloc, reset, running out
// of memory), the layout predicates on hand-built strided tensors, names, and
// computation graphs: sizes and overheads, the order ggml_build_forward_expand
// produces, use counts, the COMPUTE flag, select, views, copies, printing.
//
// Expected values are worked out here: sizes from the struct layouts, orders
// from the dependency structure of hand-built graphs.

#define _POSIX_C_SOURCE 200809L

#include "ggml.h"
#include "ggml-impl.h"
#include "testing.h"
#include "death-test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_ASSERT_FAILS(cond_text, ...) CHECK_ABORTS("GGML_ASSERT(" cond_text ") failed", __VA_ARGS__)

// the object header in front of everything in a context: offs, size, next, type + padding
#define OBJECT_HEADER_SIZE (2*sizeof(size_t) + sizeof(void *) + 8)

static size_t pad16(size_t n) {
    return (n + 15) / 16 * 16;
}

// aligned user memory for a context; size bytes are usable
static void * user_memory(size_t size) {
    void * p = aligned_alloc(64, (size + 63) / 64 * 64);
    CHECK(p != NULL);
    return p;
}

//
// contexts
//

static void test_context_sizes(void) {
    // struct layouts shared with separately built backends (64-bit)
    if (sizeof(void *) == 8) {
        CHECK_EQ_INT(sizeof(struct ggml_tensor), 336);
        CHECK_EQ_INT(GGML_TENSOR_SIZE, 336);
        CHECK_EQ_INT(OBJECT_HEADER_SIZE, 32);
    }
    CHECK_EQ_INT(ggml_tensor_overhead(), OBJECT_HEADER_SIZE + sizeof(struct ggml_tensor));

    // internal memory: the size is rounded up to the alignment
    struct ggml_init_params p = { .mem_size = 1000, .mem_buffer = NULL, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(p);
    CHECK(ctx != NULL);
    CHECK_EQ_INT(ggml_get_mem_size(ctx), 1008);
    CHECK(((uintptr_t) ggml_get_mem_buffer(ctx)) % GGML_MEM_ALIGN == 0);
    CHECK_EQ_INT(ggml_used_mem(ctx), 0);
    CHECK(ggml_get_first_tensor(ctx) == NULL);
    CHECK(!ggml_get_no_alloc(ctx));

    // a tensor with data: header + tensor + data padded to 16
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    const size_t one = OBJECT_HEADER_SIZE + pad16(sizeof(struct ggml_tensor) + 40);
    CHECK_EQ_INT(ggml_used_mem(ctx), one);
    CHECK((char *) t->data == (char *) t + sizeof(struct ggml_tensor));
    CHECK((char *) t >= (char *) ggml_get_mem_buffer(ctx));

    // no_alloc: metadata only
    ggml_set_no_alloc(ctx, true);
    CHECK(ggml_get_no_alloc(ctx));
    struct ggml_tensor * u = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 100, 100);
    CHECK(u->data == NULL);
    CHECK_EQ_INT(ggml_used_mem(ctx), one + OBJECT_HEADER_SIZE + sizeof(struct ggml_tensor));
    ggml_set_no_alloc(ctx, false);

    // reset: empty again, the next tensor takes the first one's place
    ggml_reset(ctx);
    CHECK_EQ_INT(ggml_used_mem(ctx), 0);
    CHECK(ggml_get_first_tensor(ctx) == NULL);
    CHECK(ggml_get_tensor(ctx, "") == NULL);
    struct ggml_tensor * t2 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    CHECK(t2 == t);
    CHECK_EQ_INT(ggml_used_mem(ctx), one);
    ggml_free(ctx);

    // mem_size 0 still gives a usable (tiny) context
    struct ggml_init_params p0 = { .mem_size = 0, .mem_buffer = NULL, .no_alloc = false };
    ctx = ggml_init(p0);
    CHECK(ctx != NULL);
    CHECK_EQ_INT(ggml_get_mem_size(ctx), GGML_MEM_ALIGN);
    ggml_free(ctx);
}

static void test_context_user_memory(void) {
    const size_t size = 4096 + 8; // not a multiple of the alignment: used as given
    unsigned char * mem = (unsigned char *) user_memory(size);
    memset(mem, 0xAB, size);
    struct ggml_init_params p = { .mem_size = size, .mem_buffer = mem, .no_alloc = false };
    struct ggml_context * ctx = ggml_init(p);
    CHECK(ggml_get_mem_buffer(ctx) == mem);
    CHECK_EQ_INT(ggml_get_mem_size(ctx), size);

    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100);
    CHECK((unsigned char *) a == mem + OBJECT_HEADER_SIZE);
    CHECK((unsigned char *) a->data == mem + OBJECT_HEADER_SIZE + sizeof(struct ggml_tensor));

    // raw buffers live in the arena too, aligned, and are not tensors
    void * buf = ggml_new_buffer(ctx, 100);
    const size_t after_a = OBJECT_HEADER_SIZE + pad16(sizeof(struct ggml_tensor) + 400);
    CHECK((unsigned char *) buf == mem + after_a + OBJECT_HEADER_SIZE);
    CHECK(((uintptr_t) buf) % GGML_MEM_ALIGN == 0);
    CHECK_EQ_INT(ggml_used_mem(ctx), after_a + OBJECT_HEADER_SIZE + 112);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 3);
    CHECK(ggml_get_first_tensor(ctx) == a);
    CHECK(ggml_get_next_tensor(ctx, a) == b);
    CHECK(ggml_get_next_tensor(ctx, b) == NULL);

    // the largest tensor in bytes (a: 400, b: 3, and a view of a is no larger)
    ggml_view_1d(ctx, a, 50, 0);
    CHECK_EQ_INT(ggml_get_max_tensor_size(ctx), 400);
    struct ggml_tensor * c = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 33, 7);
    CHECK_EQ_INT(ggml_get_max_tensor_size(ctx), 462);
    (void) c;

    // freeing the context leaves the caller's memory alone (ASan would see a bad free)
    ggml_free(ctx);
    mem[0] = 1;
    free(mem);
}

static void test_context_out_of_memory(void) {
    // room for exactly one tensor without data
    const size_t one = OBJECT_HEADER_SIZE + sizeof(struct ggml_tensor);
    unsigned char * mem = (unsigned char *) user_memory(one);
    struct ggml_init_params p = { .mem_size = one, .mem_buffer = mem, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(p);
    ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1000000);
    CHECK_EQ_INT(ggml_used_mem(ctx), one);

    char expected[128];
    snprintf(expected, sizeof(expected), "needed %zu bytes, the context has %zu", 2*one, one);
    CHECK_ABORTS(expected, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1));
    snprintf(expected, sizeof(expected), "needed %zu bytes, the context has %zu", one + OBJECT_HEADER_SIZE + 16, one);
    CHECK_ABORTS(expected, ggml_new_buffer(ctx, 9));
    ggml_free(ctx);
    free(mem);

    // with data: the data counts
    struct ggml_init_params pa = { .mem_size = 1024, .mem_buffer = NULL, .no_alloc = false };
    ctx = ggml_init(pa);
    snprintf(expected, sizeof(expected), "needed %zu bytes, the context has 1024",
             OBJECT_HEADER_SIZE + pad16(sizeof(struct ggml_tensor) + 4000));
    CHECK_ABORTS(expected, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1000));
    ggml_free(ctx);
}

//
// predicates on hand-built tensors
//

static struct ggml_tensor make(enum ggml_type type, const int64_t ne[4], const size_t nb[4]) {
    struct ggml_tensor t;
    memset(&t, 0, sizeof(t));
    t.type = type;
    for (int i = 0; i < 4; i++) {
        t.ne[i] = ne[i];
        t.nb[i] = nb[i];
    }
    return t;
}

struct layout_case {
    const char * what;
    enum ggml_type type;
    int64_t ne[4];
    size_t  nb[4];
    // expected: contiguous _0 _1 _2, to_1 to_2 to_3, allocated, rows, transposed, permuted, channels
    bool c0, c1, c2, t1, t2, t3, alloc, rows, transposed, permuted, channels;
    size_t nbytes;
};

static void test_predicates(void) {
    static const struct layout_case cases[] = {
        // 4 x 3 x 2 x 5 floats packed
        { "packed", GGML_TYPE_F32, { 4, 3, 2, 5 }, { 4, 16, 48, 96 },
          true, true, true, true, true, true, true, true, false, false, false, 480 },
        // rows padded to 8 floats: only dims >= 1 are packed relative to each other
        { "padded rows", GGML_TYPE_F32, { 4, 3, 2, 5 }, { 4, 32, 96, 192 },
          false, true, true, true, false, false, false, true, false, false, false, 4 + 3*4 + 2*32 + 96 + 4*192 },
        // each 3x4 matrix padded to 16 floats
        { "padded matrices", GGML_TYPE_F32, { 4, 3, 2, 5 }, { 4, 16, 64, 128 },
          false, false, true, true, true, false, false, true, false, false, false, 4 + 3*4 + 2*16 + 64 + 4*128 },
        // a transposed 4 x 3 matrix, batched
        { "transposed", GGML_TYPE_F32, { 3, 4, 2, 5 }, { 16, 4, 48, 96 },
          false, false, false, false, false, false, true, false, true, true, false, 480 },
        // stored C x W x H x N, seen as W x H x C x N
        { "channels", GGML_TYPE_F32, { 4, 3, 2, 5 }, { 8, 32, 4, 96 },
          false, false, false, false, false, false, true, false, false, true, true, 480 },
        // quantized rows of two blocks
        { "q4_0", GGML_TYPE_Q4_0, { 64, 3, 1, 1 }, { 18, 36, 108, 108 },
          true, true, true, true, true, true, true, true, false, false, false, 108 },
        // one block per row: its "stride" is meaningless
        { "q4_0 one block", GGML_TYPE_Q4_0, { 32, 3, 1, 1 }, { 999, 18, 54, 54 },
          true, true, true, true, true, true, false, true, true, true, false, 999 + 2*18 },
        // half of each row
        { "half rows", GGML_TYPE_F16, { 5, 4, 1, 1 }, { 2, 20, 80, 80 },
          false, true, true, true, false, false, false, true, false, false, false, 10 + 3*20 },
    };
    for (size_t k = 0; k < sizeof(cases)/sizeof(cases[0]); k++) {
        const struct layout_case * c = &cases[k];
        const struct ggml_tensor t = make(c->type, c->ne, c->nb);
        CHECK_MSG(ggml_is_contiguous(&t)   == c->c0, "%s: contiguous", c->what);
        CHECK_MSG(ggml_is_contiguous_0(&t) == c->c0, "%s: contiguous_0", c->what);
        CHECK_MSG(ggml_is_contiguous_1(&t) == c->c1, "%s: contiguous_1", c->what);
        CHECK_MSG(ggml_is_contiguous_2(&t) == c->c2, "%s: contiguous_2", c->what);
        CHECK_MSG(ggml_is_contiguous_to_1(&t) == c->t1, "%s: contiguous_to_1", c->what);
        CHECK_MSG(ggml_is_contiguous_to_2(&t) == c->t2, "%s: contiguous_to_2", c->what);
        CHECK_MSG(ggml_is_contiguous_to_3(&t) == c->t3, "%s: contiguous_to_3", c->what);
        CHECK_MSG(ggml_is_contiguously_allocated(&t) == c->alloc, "%s: contiguously_allocated", c->what);
        CHECK_MSG(ggml_is_contiguous_rows(&t) == c->rows, "%s: contiguous_rows", c->what);
        CHECK_MSG(ggml_is_transposed(&t) == c->transposed, "%s: transposed", c->what);
        CHECK_MSG(ggml_is_permuted(&t) == c->permuted, "%s: permuted", c->what);
        CHECK_MSG(ggml_is_contiguous_channels(&t) == c->channels, "%s: channels", c->what);
        CHECK_MSG(ggml_nbytes(&t) == c->nbytes, "%s: nbytes %zu, expected %zu", c->what, ggml_nbytes(&t), c->nbytes);
        CHECK_MSG(ggml_nbytes_pad(&t) == pad16(c->nbytes), "%s: nbytes_pad", c->what);
        CHECK(!ggml_is_empty(&t));
        CHECK(!ggml_is_view(&t));
    }

    // dimensionality
    static const struct { int64_t ne[4]; bool scalar, vector, matrix, is3d; int n_dims; } dims[] = {
        { { 1, 1, 1, 1 }, true,  true,  true,  true,  1 },
        { { 5, 1, 1, 1 }, false, true,  true,  true,  1 },
        { { 1, 5, 1, 1 }, false, false, true,  true,  2 },
        { { 5, 3, 1, 1 }, false, false, true,  true,  2 },
        { { 5, 1, 3, 1 }, false, false, false, true,  3 },
        { { 1, 1, 1, 2 }, false, false, false, false, 4 },
    };
    for (size_t k = 0; k < sizeof(dims)/sizeof(dims[0]); k++) {
        const size_t nb[4] = { 4, 4*(size_t) dims[k].ne[0], 4*(size_t)(dims[k].ne[0]*dims[k].ne[1]),
                               4*(size_t)(dims[k].ne[0]*dims[k].ne[1]*dims[k].ne[2]) };
        const struct ggml_tensor t = make(GGML_TYPE_F32, dims[k].ne, nb);
        CHECK_MSG(ggml_is_scalar(&t) == dims[k].scalar, "case %zu: scalar", k);
        CHECK_MSG(ggml_is_vector(&t) == dims[k].vector, "case %zu: vector", k);
        CHECK_MSG(ggml_is_matrix(&t) == dims[k].matrix, "case %zu: matrix", k);
        CHECK_MSG(ggml_is_3d(&t) == dims[k].is3d, "case %zu: 3d", k);
        CHECK_MSG(ggml_n_dims(&t) == dims[k].n_dims, "case %zu: n_dims %d", k, ggml_n_dims(&t));
        CHECK_EQ_INT(ggml_nelements(&t), dims[k].ne[0]*dims[k].ne[1]*dims[k].ne[2]*dims[k].ne[3]);
        CHECK_EQ_INT(ggml_nrows(&t), dims[k].ne[1]*dims[k].ne[2]*dims[k].ne[3]);
    }

    // empty tensors: no bytes; repeat only onto empty
    const int64_t ne_e[4] = { 4, 0, 2, 1 };
    const size_t  nb_e[4] = { 4, 16, 0, 0 };
    const struct ggml_tensor e = make(GGML_TYPE_F32, ne_e, nb_e);
    CHECK(ggml_is_empty(&e));
    CHECK_EQ_INT(ggml_nbytes(&e), 0);
    const int64_t ne_a[4] = { 4, 3, 2, 1 };
    const size_t  nb_a[4] = { 4, 16, 48, 96 };
    const struct ggml_tensor a = make(GGML_TYPE_F32, ne_a, nb_a);
    CHECK(ggml_can_repeat(&e, &e));
    CHECK(!ggml_can_repeat(&e, &a));

    // shapes, strides, repetition
    const int64_t ne_b[4] = { 8, 3, 6, 5 };
    const size_t  nb_b[4] = { 4, 32, 96, 576 };
    const struct ggml_tensor b = make(GGML_TYPE_F32, ne_b, nb_b);
    const struct ggml_tensor a_t = make(GGML_TYPE_F16, ne_a, nb_a);
    CHECK(ggml_are_same_shape(&a, &a_t));
    CHECK(ggml_are_same_stride(&a, &a_t));
    CHECK(!ggml_are_same_shape(&a, &b));
    CHECK(!ggml_are_same_stride(&a, &b));
    CHECK(ggml_can_repeat(&a, &b));
    CHECK(!ggml_can_repeat(&b, &a));
    const int64_t ne_c[4] = { 3, 3, 2, 1 };
    const struct ggml_tensor c = make(GGML_TYPE_F32, ne_c, nb_a);
    CHECK(!ggml_can_repeat(&c, &b));
}

static void test_unravel_index(void) {
    struct ggml_init_params p = { .mem_size = ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 4, 5, 7);
    bool all_ok = true;
    for (int64_t i = 0; i < 3*4*5*7; i++) {
        int64_t i0 = -1, i1 = -1, i2 = -1, i3 = -1;
        ggml_unravel_index(t, i, &i0, &i1, &i2, &i3);
        all_ok = all_ok && i0 == i % 3 && i1 == (i / 3) % 4 && i2 == (i / 12) % 5 && i3 == i / 60;
        all_ok = all_ok && i0 + 3*(i1 + 4*(i2 + 5*i3)) == i;
    }
    CHECK(all_ok);
    // outputs may be left out
    int64_t only2 = -1;
    ggml_unravel_index(t, 3*4*2 + 3*1 + 2, NULL, NULL, &only2, NULL);
    CHECK_EQ_INT(only2, 2);
    ggml_free(ctx);
}

static void test_names(void) {
    struct ggml_init_params p = { .mem_size = 4*ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    CHECK(t->name[0] == '\0');

    char long_name[2*GGML_MAX_NAME];
    for (size_t i = 0; i < sizeof(long_name) - 1; i++) {
        long_name[i] = (char) ('a' + i % 26);
    }
    long_name[sizeof(long_name) - 1] = '\0';

    CHECK(ggml_set_name(t, long_name) == t);
    CHECK_EQ_INT(strlen(t->name), GGML_MAX_NAME - 1);
    CHECK(strncmp(t->name, long_name, GGML_MAX_NAME - 1) == 0);

    // exactly GGML_MAX_NAME - 1 characters fit
    long_name[GGML_MAX_NAME - 1] = '\0';
    ggml_set_name(t, long_name);
    CHECK(strcmp(t->name, long_name) == 0);
    ggml_set_name(t, "short");
    CHECK(strcmp(t->name, "short") == 0);
    CHECK(strcmp(ggml_get_name(t), "short") == 0);
    CHECK(ggml_get_tensor(ctx, "short") == t);
    CHECK(ggml_get_tensor(ctx, "shor") == NULL);

    CHECK(ggml_format_name(t, "layer_%d.%s", 17, "attn") == t);
    CHECK(strcmp(t->name, "layer_17.attn") == 0);
    ggml_format_name(t, "%s%s", long_name, "xyz");
    CHECK_EQ_INT(strlen(t->name), GGML_MAX_NAME - 1);
    CHECK(strncmp(t->name, long_name, GGML_MAX_NAME - 1) == 0);
    ggml_free(ctx);
}

//
// graphs
//

static struct ggml_context * graph_context(size_t n_tensors, size_t graph_size, bool grads) {
    struct ggml_init_params p = {
        .mem_size   = n_tensors*ggml_tensor_overhead() + 2*ggml_graph_overhead_custom(graph_size, grads),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    return ggml_init(p);
}

static int32_t use_count(const struct ggml_cgraph * g, const struct ggml_tensor * t) {
    const size_t i = ggml_hash_find(&g->visited_hash_set, t);
    if (i == GGML_HASHSET_FULL || !ggml_bitset_get(g->visited_hash_set.used, i)) {
        return -1;
    }
    return g->use_counts[i];
}

static int node_index(struct ggml_cgraph * g, const struct ggml_tensor * t) {
    for (int i = 0; i < ggml_graph_n_nodes(g); i++) {
        if (ggml_graph_node(g, i) == t) {
            return i;
        }
    }
    return -1;
}

static int leaf_index(const struct ggml_cgraph * g, const struct ggml_tensor * t) {
    for (int i = 0; i < g->n_leafs; i++) {
        if (g->leafs[i] == t) {
            return i;
        }
    }
    return -1;
}

// every source of every node comes earlier (as a node) or is a leaf
static bool sources_come_first(struct ggml_cgraph * g) {
    for (int i = 0; i < g->n_nodes; i++) {
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            const struct ggml_tensor * s = g->nodes[i]->src[j];
            if (s == NULL) {
                continue;
            }
            const int k = node_index(g, s);
            if (!((k >= 0 && k < i) || (k < 0 && leaf_index(g, s) >= 0))) {
                return false;
            }
        }
    }
    return true;
}

static void test_graph_sizes(void) {
    CHECK(ggml_graph_overhead() == ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, false));
    const size_t ptr = sizeof(void *);
    const size_t sizes[] = { 1, 7, 100, 2048, 5000 };
    for (size_t k = 0; k < sizeof(sizes)/sizeof(sizes[0]); k++) {
        const size_t n = sizes[k];
        // at least: nodes and leafs, and a hash table of >= 2n keys with use counts
        const size_t lower = OBJECT_HEADER_SIZE + 2*n*ptr + 2*n*(ptr + sizeof(int32_t));
        const size_t o  = ggml_graph_overhead_custom(n, false);
        const size_t og = ggml_graph_overhead_custom(n, true);
        CHECK_MSG(o >= lower, "size %zu: overhead %zu < %zu", n, o, lower);
        CHECK_MSG(og >= o + 2*2*n*ptr, "size %zu: no room for gradients", n);
        CHECK(o % GGML_MEM_ALIGN == OBJECT_HEADER_SIZE % GGML_MEM_ALIGN);
    }

    struct ggml_context * ctx = graph_context(0, GGML_DEFAULT_GRAPH_SIZE, true);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    CHECK_EQ_INT(ggml_graph_size(g), GGML_DEFAULT_GRAPH_SIZE);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 0);
    CHECK_EQ_INT(g->n_leafs, 0);
    CHECK(g->grads == NULL && g->grad_accs == NULL);
    CHECK(g->visited_hash_set.size >= 2*GGML_DEFAULT_GRAPH_SIZE);
    CHECK_EQ_INT(ggml_used_mem(ctx), ggml_graph_overhead());
    struct ggml_cgraph * gg = ggml_new_graph_custom(ctx, 300, true);
    CHECK_EQ_INT(ggml_graph_size(gg), 300);
    CHECK(gg->grads != NULL && gg->grad_accs != NULL);
    CHECK_EQ_INT(ggml_used_mem(ctx), ggml_graph_overhead() + ggml_graph_overhead_custom(300, true));
    ggml_free(ctx);
}

// A context of exactly n tensor overheads plus one graph overhead holds a chain
// of n tensors and its graph; one byte less does not.
static void build_exact(size_t mem_size, int n, size_t graph_size, bool grads) {
    unsigned char * mem = (unsigned char *) user_memory(mem_size + 1);
    struct ggml_init_params p = { .mem_size = mem_size, .mem_buffer = mem, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 3);
    for (int i = 1; i < n; i++) {
        t = ggml_sqr(ctx, t);
    }
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, graph_size, grads);
    ggml_build_forward_expand(g, t);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), n - 1);
    CHECK_EQ_INT(ggml_used_mem(ctx), mem_size);
    ggml_free(ctx);
    free(mem);
}

static void test_graph_overhead_exact(void) {
    static const struct { int n; size_t size; bool grads; } cases[] = {
        { 2, 1, false }, { 8, 7, true }, { 100, 2048, false }, { 33, 33, true },
    };
    for (size_t k = 0; k < sizeof(cases)/sizeof(cases[0]); k++) {
        const size_t exact = (size_t) cases[k].n*ggml_tensor_overhead() + ggml_graph_overhead_custom(cases[k].size, cases[k].grads);
        build_exact(exact, cases[k].n, cases[k].size, cases[k].grads);
        char expected[96];
        snprintf(expected, sizeof(expected), "needed %zu bytes, the context has %zu", exact, exact - 1);
        CHECK_ABORTS(expected, build_exact(exact - 1, cases[k].n, cases[k].size, cases[k].grads));
    }
}

static void test_graph_order(void) {
    struct ggml_context * ctx = graph_context(32, 64, false);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * y = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * w = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4), "weight");
    ggml_set_param(w);

    struct ggml_tensor * a = ggml_add(ctx, x, y);                          // x, y
    struct ggml_tensor * b = ggml_mul(ctx, a, x);                          // a, x
    struct ggml_tensor * c = ggml_set_name(ggml_sqr(ctx, b), "squared");   // b
    struct ggml_tensor * d = ggml_add(ctx, c, a);                          // c, a
    struct ggml_tensor * e = ggml_mul(ctx, d, w);                          // d, w

    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(g, e);

    // depth-first through src[0] before src[1]: a, b, c, d, then w (a parameter is a node), e
    const struct ggml_tensor * expected_nodes[] = { a, b, c, d, w, e };
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 6);
    for (int i = 0; i < 6 && i < ggml_graph_n_nodes(g); i++) {
        CHECK_MSG(ggml_graph_node(g, i) == expected_nodes[i], "node %d", i);
    }
    CHECK(ggml_graph_nodes(g) == g->nodes);
    CHECK_EQ_INT(g->n_leafs, 2);
    CHECK(g->leafs[0] == x && g->leafs[1] == y);
    CHECK(sources_come_first(g));
    CHECK(ggml_graph_node(g, -1) == e);
    CHECK(ggml_graph_node(g, -6) == a);

    // names only for tensors without one, numbered by position
    CHECK(strcmp(x->name, "leaf_0") == 0);
    CHECK(strcmp(y->name, "leaf_1") == 0);
    CHECK(strcmp(a->name, "node_0") == 0);
    CHECK(strcmp(b->name, "node_1") == 0);
    CHECK(strcmp(c->name, "squared") == 0);
    CHECK(strcmp(d->name, "node_3") == 0);
    CHECK(strcmp(w->name, "weight") == 0);
    CHECK(strcmp(e->name, "node_5") == 0);

    // uses within the graph
    CHECK_EQ_INT(use_count(g, x), 2);
    CHECK_EQ_INT(use_count(g, y), 1);
    CHECK_EQ_INT(use_count(g, a), 2);
    CHECK_EQ_INT(use_count(g, b), 1);
    CHECK_EQ_INT(use_count(g, c), 1);
    CHECK_EQ_INT(use_count(g, d), 1);
    CHECK_EQ_INT(use_count(g, w), 1);
    CHECK_EQ_INT(use_count(g, e), 0);

    // expanding again adds nothing; a new output adds only what is new
    ggml_build_forward_expand(g, e);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 6);
    struct ggml_tensor * f = ggml_sub(ctx, b, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1));
    ggml_build_forward_expand(g, f);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 7);
    CHECK(ggml_graph_node(g, -1) == f);
    CHECK_EQ_INT(g->n_leafs, 3);
    CHECK_EQ_INT(use_count(g, b), 2);
    CHECK(strcmp(f->name, "node_6") == 0);
    CHECK(strcmp(g->leafs[2]->name, "leaf_2") == 0);

    // lookup by name, nodes and leafs
    CHECK(ggml_graph_get_tensor(g, "squared") == c);
    CHECK(ggml_graph_get_tensor(g, "weight") == w);
    CHECK(ggml_graph_get_tensor(g, "leaf_1") == y);
    CHECK(ggml_graph_get_tensor(g, "node_6") == f);
    CHECK(ggml_graph_get_tensor(g, "nothing") == NULL);
    CHECK(ggml_graph_get_grad(g, a) == NULL);
    CHECK(ggml_graph_get_grad_acc(g, a) == NULL);

    CHECK_ASSERT_FAILS("i < cgraph->n_nodes", ggml_graph_node(g, 7));
    CHECK_ASSERT_FAILS("cgraph->n_nodes + i >= 0", ggml_graph_node(g, -8));

    // clear: empty, and the same build gives the same graph
    ggml_graph_clear(g);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 0);
    CHECK_EQ_INT(g->n_leafs, 0);
    CHECK_EQ_INT(use_count(g, a), -1);
    ggml_build_forward_expand(g, e);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 6);
    for (int i = 0; i < 6 && i < ggml_graph_n_nodes(g); i++) {
        CHECK_MSG(ggml_graph_node(g, i) == expected_nodes[i], "node %d after clear", i);
    }
    CHECK_EQ_INT(use_count(g, a), 2);

    // views are nodes, their sources before them
    ggml_graph_clear(g);
    struct ggml_tensor * v = ggml_view_1d(ctx, x, 2, 4);
    struct ggml_tensor * r = ggml_reshape_2d(ctx, ggml_scale(ctx, v, 2.0f), 1, 2);
    ggml_build_forward_expand(g, r);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 3);
    CHECK(ggml_graph_node(g, 0) == v);
    CHECK(ggml_graph_node(g, 2) == r);
    CHECK_EQ_INT(g->n_leafs, 1);
    CHECK(sources_come_first(g));
    ggml_free(ctx);
}

static void test_graph_compute_flag(void) {
    struct ggml_context * ctx = graph_context(32, 64, false);
    struct ggml_tensor * x  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * s1 = ggml_sqr(ctx, x);
    struct ggml_tensor * s2 = ggml_neg(ctx, s1);
    struct ggml_tensor * t1 = ggml_sqrt(ctx, x);
    const int32_t C = GGML_TENSOR_FLAG_COMPUTE;

    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_order(g, s2);
    ggml_build_forward_order(g, t1);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 3);
    CHECK(ggml_graph_node(g, 0) == s1 && ggml_graph_node(g, 1) == s2 && ggml_graph_node(g, 2) == t1);
    CHECK((s1->flags & C) == 0 && (s2->flags & C) == 0 && (t1->flags & C) == 0);

    // a user of an ordered node: it and what it needs become computed, t1 stays as it is
    struct ggml_tensor * u = ggml_add(ctx, s2, x);
    ggml_build_forward_expand(g, u);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 4);
    CHECK(ggml_graph_node(g, 3) == u);
    CHECK((u->flags & C) && (s2->flags & C) && (s1->flags & C));
    CHECK((t1->flags & C) == 0);
    CHECK((x->flags & C) == 0); // leafs are never computed
    CHECK_EQ_INT(use_count(g, s2), 1);
    CHECK_EQ_INT(use_count(g, x), 3);

    // expanding an ordered node directly
    ggml_build_forward_expand(g, t1);
    CHECK((t1->flags & C) != 0);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 4);

    // select: every alternative is in the graph, only the chosen one is computed
    struct ggml_tensor * p  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * alts[3] = { ggml_relu(ctx, p), ggml_gelu(ctx, p), ggml_silu(ctx, ggml_abs(ctx, p)) };
    struct ggml_cgraph * gs = ggml_new_graph_custom(ctx, 64, false);
    CHECK(ggml_build_forward_select(gs, alts, 3, 2) == alts[2]);
    CHECK_EQ_INT(ggml_graph_n_nodes(gs), 4);
    CHECK(ggml_graph_node(gs, 0) == alts[0] && ggml_graph_node(gs, 1) == alts[1]);
    CHECK(ggml_graph_node(gs, 2) == alts[2]->src[0] && ggml_graph_node(gs, 3) == alts[2]);
    CHECK((alts[0]->flags & C) == 0 && (alts[1]->flags & C) == 0);
    CHECK((alts[2]->flags & C) != 0 && (alts[2]->src[0]->flags & C) != 0);
    CHECK_ASSERT_FAILS("idx >= 0 && idx < n_tensors", ggml_build_forward_select(gs, alts, 3, 3));
    ggml_free(ctx);
}

static void test_graph_view_copy(void) {
    struct ggml_context * ctx = graph_context(64, 4096, true);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * t = x;
    for (int i = 0; i < 10; i++) {
        t = ggml_add(ctx, t, x);
    }
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, t);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 10);

    // a view of nodes [3, 7): the same node array and hash set, no leafs
    struct ggml_cgraph v = ggml_graph_view(g, 3, 7);
    CHECK_EQ_INT(v.n_nodes, 4);
    CHECK_EQ_INT(v.n_leafs, 0);
    CHECK(v.nodes == g->nodes + 3);
    CHECK(ggml_graph_node(&v, 0) == ggml_graph_node(g, 3));
    CHECK(ggml_graph_node(&v, -1) == ggml_graph_node(g, 6));
    CHECK(v.use_counts == g->use_counts);
    CHECK_EQ_INT(use_count(&v, x), 11); // both sources of the first add, then one per add
    CHECK(v.grads == NULL);

    // dup: same size, nodes, leafs, use counts
    struct ggml_cgraph * d = ggml_graph_dup(ctx, g, false);
    CHECK_EQ_INT(ggml_graph_size(d), 16);
    CHECK_EQ_INT(ggml_graph_n_nodes(d), 10);
    CHECK_EQ_INT(d->n_leafs, 1);
    CHECK(d->grads == NULL);
    bool same = true;
    for (int i = 0; i < 10; i++) {
        same = same && ggml_graph_node(d, i) == ggml_graph_node(g, i);
        same = same && use_count(d, ggml_graph_node(d, i)) == use_count(g, ggml_graph_node(g, i));
    }
    CHECK(same);
    CHECK(d->leafs[0] == x && use_count(d, x) == 11);
    struct ggml_cgraph * dg = ggml_graph_dup(ctx, g, true);
    CHECK(dg->grads != NULL && dg->grad_accs != NULL);
    CHECK(ggml_graph_get_grad(dg, t) == NULL);

    // copy into a larger graph: a different hash table, the same contents; it keeps growing
    struct ggml_cgraph * big = ggml_new_graph_custom(ctx, 4096, false);
    ggml_graph_cpy(g, big);
    CHECK_EQ_INT(ggml_graph_size(big), 4096);
    CHECK_EQ_INT(ggml_graph_n_nodes(big), 10);
    CHECK(big->visited_hash_set.size > g->visited_hash_set.size);
    same = true;
    for (int i = 0; i < 10; i++) {
        same = same && ggml_graph_node(big, i) == ggml_graph_node(g, i);
        same = same && use_count(big, ggml_graph_node(big, i)) == use_count(g, ggml_graph_node(g, i));
    }
    CHECK(same);
    CHECK_EQ_INT(use_count(big, x), 11);
    ggml_build_forward_expand(big, t); // already there
    CHECK_EQ_INT(ggml_graph_n_nodes(big), 10);
    struct ggml_tensor * more = ggml_neg(ctx, t);
    ggml_build_forward_expand(big, more);
    CHECK_EQ_INT(ggml_graph_n_nodes(big), 11);
    CHECK_EQ_INT(use_count(big, t), 1);
    CHECK(ggml_graph_get_tensor(big, ggml_get_name(t)) == t);

    // a smaller graph cannot take it
    struct ggml_cgraph * small = ggml_new_graph_custom(ctx, 5, false);
    CHECK_ASSERT_FAILS("dst->size >= src->n_nodes", ggml_graph_cpy(g, small));
    ggml_free(ctx);
}

static void test_graph_add_node_and_limits(void) {
    struct ggml_context * ctx = graph_context(32, 64, false);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 4, false);
    struct ggml_tensor * n1 = ggml_sqr(ctx, x);
    struct ggml_tensor * n2 = ggml_sqr(ctx, x);
    ggml_graph_add_node(g, n1);
    ggml_graph_add_node(g, n2);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 2);
    CHECK(ggml_graph_node(g, 0) == n1 && ggml_graph_node(g, 1) == n2);
    CHECK_EQ_INT(g->n_leafs, 0); // added as they are, sources not followed
    ggml_graph_add_node(g, n1);
    ggml_graph_add_node(g, n2);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 4);
    CHECK_ABORTS("cgraph->size > cgraph->n_nodes", ggml_graph_add_node(g, n1));

    // a chain of 5 nodes does not fit a graph of 4
    struct ggml_tensor * t = x;
    for (int i = 0; i < 5; i++) {
        t = ggml_neg(ctx, t);
    }
    struct ggml_cgraph * g4 = ggml_new_graph_custom(ctx, 4, false);
    CHECK_ABORTS("graph has more than 4 nodes", ggml_build_forward_expand(g4, t));
    // nor do 5 leafs
    struct ggml_tensor * s = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    for (int i = 0; i < 4; i++) {
        s = ggml_add(ctx, s, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4));
    }
    struct ggml_cgraph * g5 = ggml_new_graph_custom(ctx, 4, false);
    CHECK_ABORTS("graph has more than 4 leafs", ggml_build_forward_expand(g5, s));
    ggml_free(ctx);
}

// No limit but the size asked for: a chain of 100000 nodes, each using the one before.
static void test_graph_large(void) {
    const int n = 100000;
    struct ggml_init_params p = {
        .mem_size   = (size_t)(n + 1)*ggml_tensor_overhead() + ggml_graph_overhead_custom((size_t) n, false),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * t = x;
    for (int i = 0; i < n; i++) {
        t = ggml_scale(ctx, t, 0.5f);
    }
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, (size_t) n, false);
    ggml_build_forward_expand(g, t);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), n);
    CHECK_EQ_INT(g->n_leafs, 1);
    bool chain = ggml_graph_node(g, 0)->src[0] == x;
    for (int i = 1; i < n; i++) {
        chain = chain && ggml_graph_node(g, i)->src[0] == ggml_graph_node(g, i - 1);
    }
    CHECK(chain);
    CHECK(ggml_graph_node(g, -1) == t);
    CHECK(strcmp(ggml_graph_node(g, n - 1)->name, "node_99999") == 0);
    CHECK_EQ_INT(use_count(g, ggml_graph_node(g, n / 2)), 1);
    CHECK_EQ_INT(ggml_used_mem(ctx), ggml_get_mem_size(ctx));
    ggml_free(ctx);

    // and wide: one node using many others
    struct ggml_init_params pw = { .mem_size = 3*2000*ggml_tensor_overhead() + ggml_graph_overhead_custom(4000, false),
                                   .mem_buffer = NULL, .no_alloc = true };
    ctx = ggml_init(pw);
    struct ggml_tensor * acc = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    for (int i = 0; i < 1999; i++) {
        acc = ggml_add(ctx, acc, ggml_sqr(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4)));
    }
    struct ggml_cgraph * gw = ggml_new_graph_custom(ctx, 4000, false);
    ggml_build_forward_expand(gw, acc);
    CHECK_EQ_INT(ggml_graph_n_nodes(gw), 2*1999);
    CHECK_EQ_INT(gw->n_leafs, 2000);
    CHECK(sources_come_first(gw));
    ggml_free(ctx);
}


//
// random graphs against a recursive reference of the documented build order
//

#define REF_MAX 96

struct ref_graph {
    struct ggml_tensor * t[REF_MAX]; // every tensor of the test, by id
    int  n;
    bool visited[REF_MAX];
    bool computed[REF_MAX];
    int  uses[REF_MAX];
    int  nodes[REF_MAX], n_nodes;
    int  leafs[REF_MAX], n_leafs;
    bool right_to_left;
};

static int ref_id(const struct ref_graph * r, const struct ggml_tensor * t) {
    for (int i = 0; i < r->n; i++) {
        if (r->t[i] == t) {
            return i;
        }
    }
    return -1;
}

// visit(node): with compute, flag it (ops only); first time: sources in order,
// one use each, then append; seen before with compute: sources not yet flagged
static void ref_visit(struct ref_graph * r, int id, bool compute) {
    struct ggml_tensor * t = r->t[id];
    if (compute && t->op != GGML_OP_NONE) {
        r->computed[id] = true;
    }
    if (r->visited[id]) {
        if (compute) {
            for (int i = 0; i < GGML_MAX_SRC; i++) {
                const int s = t->src[i] ? ref_id(r, t->src[i]) : -1;
                if (s >= 0 && !r->computed[s]) {
                    ref_visit(r, s, true);
                }
            }
        }
        return;
    }
    r->visited[id] = true;
    r->uses[id] = 0;
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        const int k = r->right_to_left ? GGML_MAX_SRC - 1 - i : i;
        const int s = t->src[k] ? ref_id(r, t->src[k]) : -1;
        if (s >= 0) {
            ref_visit(r, s, compute);
            r->uses[s]++;
        }
    }
    if (t->op == GGML_OP_NONE && !(t->flags & GGML_TENSOR_FLAG_PARAM)) {
        r->leafs[r->n_leafs++] = id;
    } else {
        r->nodes[r->n_nodes++] = id;
    }
}

static uint32_t rng_next(uint32_t * state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

static bool ref_matches(const struct ref_graph * r, struct ggml_cgraph * g) {
    bool ok = g->n_nodes == r->n_nodes && g->n_leafs == r->n_leafs;
    for (int i = 0; ok && i < r->n_nodes; i++) {
        ok = g->nodes[i] == r->t[r->nodes[i]];
    }
    for (int i = 0; ok && i < r->n_leafs; i++) {
        ok = g->leafs[i] == r->t[r->leafs[i]];
    }
    for (int i = 0; ok && i < r->n; i++) {
        ok = (use_count(g, r->t[i]) == (r->visited[i] ? r->uses[i] : -1)) &&
             (((r->t[i]->flags & GGML_TENSOR_FLAG_COMPUTE) != 0) == r->computed[i]);
    }
    return ok;
}

static void ggml_custom3_noop(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                              const struct ggml_tensor * c, int ith, int nth, void * userdata) {
    (void) dst; (void) a; (void) b; (void) c; (void) ith; (void) nth; (void) userdata;
}

static void test_graph_random_reference(void) {
    uint32_t rng = 12345;
    for (int trial = 0; trial < 200; trial++) {
        struct ggml_context * ctx = graph_context(REF_MAX, REF_MAX, false);
        static struct ref_graph r;
        memset(&r, 0, sizeof(r));
        r.right_to_left = trial % 3 == 2;

        const int n_leafs = 2 + (int)(rng_next(&rng) % 5);
        for (int i = 0; i < n_leafs; i++) {
            struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
            if (rng_next(&rng) % 4 == 0) {
                ggml_set_param(t);
            }
            r.t[r.n++] = t;
        }
        const int n_ops = 5 + (int)(rng_next(&rng) % 40);
        for (int i = 0; i < n_ops; i++) {
            struct ggml_tensor * a = r.t[rng_next(&rng) % (uint32_t) r.n];
            struct ggml_tensor * b = r.t[rng_next(&rng) % (uint32_t) r.n];
            struct ggml_tensor * c = r.t[rng_next(&rng) % (uint32_t) r.n];
            struct ggml_tensor * t;
            switch (rng_next(&rng) % 3) {
                case 0:  t = ggml_sqr(ctx, a); break;
                case 1:  t = ggml_add(ctx, a, b); break;
                default: t = ggml_map_custom3(ctx, a, b, c, ggml_custom3_noop, 1, NULL); break;
            }
            r.t[r.n++] = t;
        }

        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, REF_MAX, false);
        g->order = r.right_to_left ? GGML_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT : GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT;
        bool ok = true;
        for (int step = 0; step < 6 && ok; step++) {
            const int id = (int)(rng_next(&rng) % (uint32_t) r.n);
            switch (rng_next(&rng) % 3) {
                case 0:
                    ggml_build_forward_expand(g, r.t[id]);
                    ref_visit(&r, id, true);
                    break;
                case 1:
                    ggml_build_forward_order(g, r.t[id]);
                    ref_visit(&r, id, false);
                    break;
                default: {
                    const int ids[3] = { id, (int)(rng_next(&rng) % (uint32_t) r.n), (int)(rng_next(&rng) % (uint32_t) r.n) };
                    struct ggml_tensor * alts[3] = { r.t[ids[0]], r.t[ids[1]], r.t[ids[2]] };
                    const int idx = (int)(rng_next(&rng) % 3);
                    ggml_build_forward_select(g, alts, 3, idx);
                    for (int k = 0; k < 3; k++) {
                        ref_visit(&r, ids[k], k == idx);
                    }
                    break;
                }
            }
            ok = ref_matches(&r, g) && sources_come_first(g);
        }
        CHECK_MSG(ok, "trial %d differs from the reference", trial);
        ggml_free(ctx);
    }
}

//
// printing
//

struct text_buffer {
    char * text;
    size_t len;
};

static void capture_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    struct text_buffer * b = (struct text_buffer *) user_data;
    const size_t n = strlen(text);
    char * grown = (char *) realloc(b->text, b->len + n + 1);
    if (grown == NULL) {
        return;
    }
    b->text = grown;
    memcpy(b->text + b->len, text, n + 1);
    b->len += n;
}

static int count_occurrences(const char * text, const char * what) {
    int n = 0;
    for (const char * p = strstr(text, what); p != NULL; p = strstr(p + 1, what)) {
        n++;
    }
    return n;
}

static void test_graph_print_and_dot(void) {
    struct ggml_context * ctx = graph_context(16, 16, false);
    struct ggml_tensor * x = ggml_set_name(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3), "input<x>");
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 4, 5);
    struct ggml_tensor * h = ggml_mul_mat(ctx, w, x);
    struct ggml_tensor * o = ggml_soft_max(ctx, ggml_relu(ctx, h));
    ggml_set_output(o);
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 16, false);
    ggml_build_forward_expand(g, o);
    CHECK_EQ_INT(ggml_graph_n_nodes(g), 3);
    CHECK_EQ_INT(g->n_leafs, 2);

    struct text_buffer log = { NULL, 0 };
    ggml_log_callback old_cb;
    void * old_ud;
    ggml_log_get(&old_cb, &old_ud);
    ggml_log_set(capture_log, &log);
    ggml_graph_print(g);
    ggml_log_set(old_cb, old_ud);
    CHECK(log.text != NULL);
    if (log.text) {
        CHECK(strstr(log.text, "n_nodes = 3") != NULL);
        CHECK(strstr(log.text, "n_leafs = 2") != NULL);
        CHECK(strstr(log.text, "MUL_MAT") != NULL);
        CHECK(strstr(log.text, "SOFT_MAX") != NULL);
        CHECK(strstr(log.text, "RELU") != NULL);
        CHECK(strstr(log.text, "input<x>") != NULL);
    }
    free(log.text);
    log = (struct text_buffer) { NULL, 0 };

    char path[] = "/tmp/test-graph-dot-XXXXXX";
    const int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    ggml_log_set(capture_log, &log); // the dump logs a hint line
    ggml_graph_dump_dot(g, NULL, path);
    ggml_log_set(old_cb, old_ud);
    free(log.text);
    log = (struct text_buffer) { NULL, 0 };

    FILE * f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f) {
        char text[8192];
        const size_t n = fread(text, 1, sizeof(text) - 1, f);
        text[n] = '\0';
        fclose(f);
        CHECK(strncmp(text, "digraph G {\n", 12) == 0);
        CHECK(n >= 2 && strcmp(text + n - 2, "}\n") == 0);
        // one record per node and leaf, one edge per source
        CHECK_EQ_INT(count_occurrences(text, "shape = record"), 3 + 2);
        CHECK_EQ_INT(count_occurrences(text, "fillcolor = pink"), 2);
        CHECK_EQ_INT(count_occurrences(text, " -> "), 2 + 1 + 1);
        CHECK(strstr(text, "input\\<x\\>") != NULL); // dot record metacharacters escaped
    }
    remove(path);

    // an unwritable path is reported, not fatal
    ggml_log_set(capture_log, &log);
    ggml_graph_dump_dot(g, g, "/nonexistent-dir/graph.dot");
    ggml_log_set(old_cb, old_ud);
    CHECK(log.text != NULL && strstr(log.text, "/nonexistent-dir/graph.dot") != NULL);
    free(log.text);
    ggml_free(ctx);
}

int main(void) {
    test_context_sizes();
    test_context_user_memory();
    test_context_out_of_memory();
    test_predicates();
    test_unravel_index();
    test_names();
    test_graph_sizes();
    test_graph_overhead_exact();
    test_graph_order();
    test_graph_compute_flag();
    test_graph_view_copy();
    test_graph_add_node_and_limits();
    test_graph_large();
    test_graph_random_reference();
    test_graph_print_and_dot();
    return TEST_RESULT();
}
