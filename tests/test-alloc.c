// test-alloc: the graph allocator.
//
// For every planned graph an independent checker recomputes each tensor's
// lifetime from the graph order (first definition to last use, views
// counting as uses of their source, inputs and outputs living throughout)
// and verifies that no two tensors alive at the same time share bytes,
// except where a node legally computes in place over its source. Small
// graphs compare the planned size with an optimum computed by hand in the
// comments; random graphs are also computed, with the planned (reused)
// memory and with separate memory for every tensor, and must agree bit for
// bit.

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "graph-helpers.h"
#include "test-backend.h"
#include "testing.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define LIVE_FOREVER INT_MAX

static struct ggml_context * new_ctx(size_t n_tensors) {
    struct ggml_init_params params = {
        .mem_size   = n_tensors * ggml_tensor_overhead() + 2 * ggml_graph_overhead_custom(1024, false),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    return ggml_init(params);
}

static struct ggml_cgraph * new_graph(struct ggml_context * ctx) {
    return ggml_new_graph_custom(ctx, 1024, false);
}

// an F32 tensor of the given number of bytes (a multiple of 4)
static struct ggml_tensor * leaf_bytes(struct ggml_context * ctx, size_t nbytes) {
    return ggml_new_tensor_1d(ctx, GGML_TYPE_F32, (int64_t)(nbytes / 4));
}

// a node that cannot be computed in place (MUL_MAT), of the given size
static struct ggml_tensor * op_bytes(struct ggml_context * ctx, size_t nbytes, struct ggml_tensor * s0, struct ggml_tensor * s1) {
    return th_node(ctx, GGML_OP_MUL_MAT, GGML_TYPE_F32, (int64_t)(nbytes / 4), 1, s0, s1);
}

static struct ggml_tensor * op3(struct ggml_context * ctx, size_t nbytes, struct ggml_tensor * s0, struct ggml_tensor * s1, struct ggml_tensor * s2) {
    struct ggml_tensor * t = op_bytes(ctx, nbytes, s0, s1);
    t->src[2] = s2;
    return t;
}

//
// the checker
//

// the ops this test expects to be computed in place (ggml_op_can_inplace says more)
static bool expected_inplace_op(enum ggml_op op) {
    return op == GGML_OP_ADD || op == GGML_OP_MUL || op == GGML_OP_SCALE;
}

struct tensor_life {
    struct ggml_tensor * t;
    int    start;        // -1: before the first node
    int    end;          // last node that reads it (or a view of it)
    int    reads_at_end; // source slots of node end that read it, directly or through a view
    size_t offset;
    size_t size;
};

struct plan_check {
    struct tensor_life * lives;
    int n;
    int violations;
    int inplace;   // legal in-place pairs found
    size_t peak;   // most bytes alive at one time (in-place pairs counted once)
};

static int find_life(struct plan_check * pc, const struct ggml_tensor * t) {
    for (int i = 0; i < pc->n; i++) {
        if (pc->lives[i].t == t) {
            return i;
        }
    }
    return -1;
}

// the tensors the allocator was to place: no memory and not a view, before allocation
struct owned_set {
    struct ggml_tensor ** items;
    int n;
};

static void owned_add(struct owned_set * os, struct ggml_tensor * t) {
    if (t == NULL || t->data != NULL || t->view_src != NULL) {
        return;
    }
    for (int i = 0; i < os->n; i++) {
        if (os->items[i] == t) {
            return;
        }
    }
    os->items = (struct ggml_tensor **) realloc(os->items, (size_t)(os->n + 1) * sizeof(*os->items));
    os->items[os->n++] = t;
}

static struct owned_set collect_owned(struct ggml_cgraph * g) {
    struct owned_set os = { NULL, 0 };
    for (int i = 0; i < g->n_leafs; i++) {
        owned_add(&os, g->leafs[i]);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            owned_add(&os, g->nodes[i]->src[j]);
        }
        owned_add(&os, g->nodes[i]);
    }
    return os;
}

static bool ranges_overlap(size_t a, size_t an, size_t b, size_t bn) {
    return a < b + bn && b < a + an;
}

// Can y legally be computed in the memory of x? y must be the last reader
// of x, read it once and directly, and x must not be pinned.
static bool legal_inplace(const struct tensor_life * x, const struct tensor_life * y) {
    const struct ggml_tensor * xt = x->t;
    const struct ggml_tensor * yt = y->t;
    bool is_src = false;
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        is_src = is_src || yt->src[j] == xt;
    }
    return is_src && expected_inplace_op(yt->op) && x->end == y->start && x->reads_at_end == 1 &&
           (xt->flags & (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT)) == 0 &&
           xt->buffer == yt->buffer && x->offset == y->offset && ggml_are_same_layout(xt, yt);
}

static struct plan_check check_plan(struct ggml_cgraph * g, const struct owned_set * os) {
    struct plan_check pc = { 0 };
    pc.lives = (struct tensor_life *) calloc((size_t) os->n + 1, sizeof(struct tensor_life));
    pc.n = os->n;
    for (int i = 0; i < os->n; i++) {
        struct ggml_tensor * t = os->items[i];
        struct tensor_life * l = &pc.lives[i];
        l->t = t;
        l->start = LIVE_FOREVER;
        l->end = -1;
        if (t->data == NULL || t->buffer == NULL) {
            fprintf(stderr, "tensor %s was not allocated\n", t->name);
            pc.violations++;
            continue;
        }
        l->offset = (size_t)((uintptr_t) t->data - (uintptr_t) ggml_backend_buffer_get_base(t->buffer));
        l->size   = ggml_backend_buffer_get_alloc_size(t->buffer, t);
        if (l->offset + l->size > ggml_backend_buffer_get_size(t->buffer)) {
            fprintf(stderr, "tensor %s lies outside its buffer\n", t->name);
            pc.violations++;
        }
    }
    // lifetimes from the graph order
    for (int i = 0; i < g->n_leafs; i++) {
        const int k = find_life(&pc, g->leafs[i]);
        if (k >= 0) {
            pc.lives[k].start = -1;
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        struct ggml_tensor * node = g->nodes[i];
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * s = node->src[j];
            if (s == NULL) {
                continue;
            }
            const bool through_view = s->view_src != NULL;
            const int k = find_life(&pc, through_view ? s->view_src : s);
            if (k < 0) {
                continue;
            }
            struct tensor_life * l = &pc.lives[k];
            l->start = l->start == LIVE_FOREVER ? i : l->start; // a source outside the graph
            l->reads_at_end = l->end == i ? l->reads_at_end + 1 : 1;
            l->end = i;
        }
        const int k = find_life(&pc, node);
        if (k >= 0 && pc.lives[k].start == LIVE_FOREVER) {
            pc.lives[k].start = i;
        }
    }
    for (int i = 0; i < pc.n; i++) {
        struct tensor_life * l = &pc.lives[i];
        if (l->t->flags & GGML_TENSOR_FLAG_INPUT) {
            l->start = -1;
            l->end = LIVE_FOREVER;
        }
        if (l->t->flags & GGML_TENSOR_FLAG_OUTPUT) {
            l->end = LIVE_FOREVER;
        }
        if (l->end < l->start) {
            l->end = l->start; // never read: alive while it is computed
        }
    }
    // no two tensors alive together share bytes, unless in place
    for (int a = 0; a < pc.n; a++) {
        for (int b = 0; b < pc.n; b++) {
            const struct tensor_life * x = &pc.lives[a];
            const struct tensor_life * y = &pc.lives[b];
            if (a >= b || x->t->buffer != y->t->buffer || x->t->buffer == NULL) {
                continue;
            }
            const bool together = x->start <= y->end && y->start <= x->end;
            if (!together || !ranges_overlap(x->offset, x->size, y->offset, y->size)) {
                continue;
            }
            if (legal_inplace(x, y) || legal_inplace(y, x)) {
                pc.inplace++;
                continue;
            }
            fprintf(stderr, "overlap: %s [%d, %d] @%zu+%zu and %s [%d, %d] @%zu+%zu\n",
                    x->t->name, x->start, x->end, x->offset, x->size, y->t->name, y->start, y->end, y->offset, y->size);
            pc.violations++;
        }
    }
    // views share their source's memory
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * node = g->nodes[i];
        if (node->view_src != NULL && node->view_src->data != NULL &&
            (node->data != (char *) node->view_src->data + node->view_offs || node->buffer != node->view_src->buffer)) {
            fprintf(stderr, "view %s does not share its source's memory\n", node->name);
            pc.violations++;
        }
    }
    // the peak: bytes alive at each node (a tensor taken over in place ends where its successor starts)
    for (int i = -1; i < g->n_nodes; i++) {
        size_t live = 0;
        for (int k = 0; k < pc.n; k++) {
            const struct tensor_life * l = &pc.lives[k];
            if (l->start <= i && i <= l->end) {
                bool taken_over = false;
                for (int m = 0; m < pc.n && !taken_over; m++) {
                    taken_over = m != k && pc.lives[m].start == i && legal_inplace(l, &pc.lives[m]);
                }
                live += taken_over ? 0 : l->size;
            }
        }
        pc.peak = live > pc.peak ? live : pc.peak;
    }
    return pc;
}

// allocate g with galloc, check the plan, return the check (caller frees lives)
static struct plan_check alloc_and_check(ggml_gallocr_t galloc, struct ggml_cgraph * g) {
    struct owned_set os = collect_owned(g);
    CHECK(ggml_gallocr_alloc_graph(galloc, g));
    struct plan_check pc = check_plan(g, &os);
    CHECK_EQ_INT(pc.violations, 0);
    free(os.items);
    return pc;
}

static size_t sum_of_sizes(const struct plan_check * pc, size_t alignment) {
    size_t sum = 0;
    for (int i = 0; i < pc->n; i++) {
        sum += GGML_PAD(pc->lives[i].size, alignment);
    }
    return sum;
}

//
// small graphs with a known optimum (CPU buffer type, alignment 32)
//

static void test_optimum_chain(void) {
    // x(input, 256) -> n1(1024) -> n2(512) -> n3(n1, n2; 1024) -> n4(256, output)
    // alive at n3: x + n1 + n2 + n3 = 256 + 1024 + 512 + 1024 = 2816, the peak
    // (at n4: x + n3 + n4 = 1536), so the optimum is 2816; the sum of all is 3072.
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * x  = leaf_bytes(ctx, 256);
    ggml_set_input(x);
    struct ggml_tensor * n1 = op_bytes(ctx, 1024, x, NULL);
    struct ggml_tensor * n2 = op_bytes(ctx, 512, n1, NULL);
    struct ggml_tensor * n3 = op_bytes(ctx, 1024, n1, n2);
    struct ggml_tensor * n4 = op_bytes(ctx, 256, n3, NULL);
    ggml_set_output(n4);
    struct ggml_cgraph * g = new_graph(ctx);
    ggml_build_forward_expand(g, n4);

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    struct plan_check pc = alloc_and_check(galloc, g);
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 0), 2816);
    CHECK_EQ_INT(pc.peak, 2816);
    CHECK_EQ_INT(sum_of_sizes(&pc, 32), 3072);
    // n4 reuses the memory n1 had
    CHECK(n4->data == n1->data);
    free(pc.lives);
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
}

static void test_optimum_best_fit(void) {
    // x(input, 32); n0(x; 512) k1(x; 64) n2(x; 256) k3(x; 64) n4(n0, n2; 64)
    // n5(n4; 256) n6(n5, n4; 512) n7(n6, k1, k3; 64, output)
    // Offsets: x 0, n0 32, k1 544, n2 608, k3 864, n4 928 (high water 992).
    // n0 and n2 die at n4, leaving holes of 512 at 32 and 256 at 608.
    // n5 (256) fits the 256 hole exactly, n6 (512) the 512 hole, and n7 the
    // 64 bytes n4 leaves at 928: nothing grows, total 992 = the peak
    // (at n4 and at n6: 32 + 64 + 64 + 512 + 256 + 64). A first fit would
    // put n5 in the 512 hole and need 512 more for n6 (1504).
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * x = leaf_bytes(ctx, 32);
    ggml_set_input(x);
    struct ggml_tensor * n0 = op_bytes(ctx, 512, x, NULL);
    struct ggml_tensor * k1 = op_bytes(ctx, 64, x, NULL);
    struct ggml_tensor * n2 = op_bytes(ctx, 256, x, NULL);
    struct ggml_tensor * k3 = op_bytes(ctx, 64, x, NULL);
    struct ggml_tensor * n4 = op_bytes(ctx, 64, n0, n2);
    struct ggml_tensor * n5 = op_bytes(ctx, 256, n4, NULL);
    struct ggml_tensor * n6 = op_bytes(ctx, 512, n5, n4);
    struct ggml_tensor * n7 = op3(ctx, 64, n6, k1, k3);
    ggml_set_output(n7);
    struct ggml_cgraph * g = new_graph(ctx);
    // fix the order: n0 k1 n2 k3 first
    ggml_build_forward_expand(g, n0);
    ggml_build_forward_expand(g, k1);
    ggml_build_forward_expand(g, n2);
    ggml_build_forward_expand(g, k3);
    ggml_build_forward_expand(g, n7);
    CHECK(g->nodes[4] == n4 && g->nodes[5] == n5 && g->nodes[6] == n6 && g->nodes[7] == n7);

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    struct plan_check pc = alloc_and_check(galloc, g);
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 0), 992);
    CHECK_EQ_INT(pc.peak, 992);
    CHECK_EQ_INT(sum_of_sizes(&pc, 32), 1824);
    CHECK(n5->data == n2->data);
    CHECK(n6->data == n0->data);
    CHECK(n7->data == n4->data);
    free(pc.lives);
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
}

static void test_optimum_inplace(void) {
    // x(input, 256) -> a(x; 1024) -> b = scale(a) -> c = scale(b) -> out = scale(c) (output)
    // Each scale takes over its source: a, b, c and out share 1024 bytes,
    // total 256 + 1024 = 1280. Without in place two of them would be alive
    // at each step: 256 + 2048 = 2304. The sum of all is 4352.
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * x = leaf_bytes(ctx, 256);
    ggml_set_input(x);
    struct ggml_tensor * a   = op_bytes(ctx, 1024, x, NULL);
    struct ggml_tensor * b   = th_scale(ctx, a, 2.0f, 0.0f);
    struct ggml_tensor * c   = th_scale(ctx, b, 2.0f, 0.0f);
    struct ggml_tensor * out = th_scale(ctx, c, 2.0f, 0.0f);
    ggml_set_output(out);
    struct ggml_cgraph * g = new_graph(ctx);
    ggml_build_forward_expand(g, out);

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    struct plan_check pc = alloc_and_check(galloc, g);
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 0), 1280);
    CHECK_EQ_INT(pc.peak, 1280);
    CHECK_EQ_INT(pc.inplace, 3); // (a, b), (b, c), (c, out): each ends where the next starts
    CHECK_EQ_INT(sum_of_sizes(&pc, 32), 4352);
    CHECK(a->data == b->data && b->data == c->data && c->data == out->data);
    free(pc.lives);
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
}

//
// where in place must not happen
//

static void test_inplace_forbidden(void) {
    struct ggml_context * ctx = new_ctx(64);
    struct ggml_tensor * x = leaf_bytes(ctx, 512);
    ggml_set_input(x);

    // the source is read again later
    struct ggml_tensor * a1 = op_bytes(ctx, 512, x, NULL);
    struct ggml_tensor * b1 = th_scale(ctx, a1, 3.0f, 0.0f);
    struct ggml_tensor * c1 = op_bytes(ctx, 512, a1, b1);
    // the source is an input
    struct ggml_tensor * b2 = th_scale(ctx, x, 3.0f, 0.0f);
    // the source is an output
    struct ggml_tensor * a3 = op_bytes(ctx, 512, x, NULL);
    ggml_set_output(a3);
    struct ggml_tensor * b3 = th_scale(ctx, a3, 3.0f, 0.0f);
    // the source is a view
    struct ggml_tensor * a4 = op_bytes(ctx, 1024, x, NULL);
    struct ggml_tensor * v4 = th_view_2d(ctx, a4, 128, 1, 512, 0);
    struct ggml_tensor * b4 = th_scale(ctx, v4, 3.0f, 0.0f);
    // the layouts differ
    struct ggml_tensor * a5 = th_node(ctx, GGML_OP_MUL_MAT, GGML_TYPE_F32, 16, 8, x, NULL);
    struct ggml_tensor * b5 = th_node(ctx, GGML_OP_SCALE, GGML_TYPE_F32, 8, 16, a5, NULL);
    // the op cannot work in place
    struct ggml_tensor * a6 = op_bytes(ctx, 512, x, NULL);
    struct ggml_tensor * b6 = th_cont(ctx, a6);
    // the source is read twice by the same node
    struct ggml_tensor * a7 = op_bytes(ctx, 512, x, NULL);
    struct ggml_tensor * b7 = th_like(ctx, GGML_OP_ADD, a7, a7);
    // allowed: the only reader, same layout
    struct ggml_tensor * a8 = op_bytes(ctx, 512, x, NULL);
    struct ggml_tensor * b8 = th_like(ctx, GGML_OP_MUL, a8, x);

    struct ggml_tensor * ends[] = { c1, b2, b3, b4, b5, b6, b7, b8 };
    struct ggml_tensor * all = ends[0];
    for (size_t i = 1; i < sizeof(ends) / sizeof(ends[0]); i++) {
        all = op3(ctx, 32, all, ends[i], NULL);
    }
    ggml_set_output(all);
    struct ggml_cgraph * g = new_graph(ctx);
    ggml_build_forward_expand(g, all);

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    struct plan_check pc = alloc_and_check(galloc, g);
    CHECK(b1->data != a1->data);
    CHECK(b2->data != x->data);
    CHECK(b3->data != a3->data);
    CHECK(b4->data != a4->data && b4->data != v4->data);
    CHECK(v4->data == a4->data);
    CHECK(b5->data != a5->data);
    CHECK(b6->data != a6->data);
    CHECK(b7->data != a7->data);
    CHECK(b8->data == a8->data);
    CHECK_EQ_INT(pc.inplace, 1);
    free(pc.lives);
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
}

//
// views, inputs, outputs
//

static void test_views_inputs_outputs(void) {
    // x(input, 32) -> a(1024) ; v = view of a (bytes 256..767) ; c = op(v; 512) ; d = op(c; 1024)
    // a must live until c has read v; after that d can take a's place.
    // Offsets: x 0, a 32, c 1056; then a is released ([32, 1056) free)
    // and d (1024) fits there exactly: total 32 + 1024 + 512 = 1568.
    struct ggml_context * ctx = new_ctx(64);
    struct ggml_tensor * x = leaf_bytes(ctx, 32);
    ggml_set_input(x);
    struct ggml_tensor * a = op_bytes(ctx, 1024, x, NULL);
    struct ggml_tensor * v = th_view_2d(ctx, a, 128, 1, 512, 256);
    struct ggml_tensor * c = op_bytes(ctx, 512, v, NULL);
    struct ggml_tensor * d = op_bytes(ctx, 1024, c, NULL);
    ggml_set_output(d);
    struct ggml_cgraph * g = new_graph(ctx);
    ggml_build_forward_expand(g, d);

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    struct plan_check pc = alloc_and_check(galloc, g);
    CHECK(v->data == (char *) a->data + 256 && v->buffer == a->buffer);
    CHECK(d->data == a->data);
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 0), 1568);
    free(pc.lives);
    ggml_gallocr_free(galloc);
    ggml_free(ctx);

    // inputs read early keep their memory; outputs made early are never overwritten
    ctx = new_ctx(64);
    struct ggml_tensor * in1 = leaf_bytes(ctx, 256);
    struct ggml_tensor * in2 = leaf_bytes(ctx, 128);
    struct ggml_tensor * in3 = leaf_bytes(ctx, 512);
    ggml_set_input(in1);
    ggml_set_input(in2);
    ggml_set_input(in3);
    struct ggml_tensor * early = op_bytes(ctx, 256, in1, in2); // last use of in1 and in2
    ggml_set_output(early);
    struct ggml_tensor * t = op_bytes(ctx, 512, early, NULL);
    for (int i = 0; i < 6; i++) {
        t = op_bytes(ctx, 128 + 128 * (size_t)(i % 3), t, i == 5 ? in3 : NULL);
    }
    ggml_set_output(t);
    g = new_graph(ctx);
    ggml_build_forward_expand(g, t);
    galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    pc = alloc_and_check(galloc, g);
    // the checker treats inputs and outputs as alive throughout: also check by hand
    const struct ggml_tensor * pinned[] = { in1, in2, in3, early };
    for (size_t p = 0; p < 4; p++) {
        for (int i = 0; i < g->n_nodes; i++) {
            const struct ggml_tensor * n = g->nodes[i];
            if (n == pinned[p]) {
                continue;
            }
            const uintptr_t a0 = (uintptr_t) pinned[p]->data, a1 = a0 + ggml_nbytes(pinned[p]);
            const uintptr_t b0 = (uintptr_t) n->data,         b1 = b0 + ggml_nbytes(n);
            CHECK_MSG(!(a0 < b1 && b0 < a1), "%s overlaps %s", n->name, pinned[p]->name);
        }
    }
    free(pc.lives);
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
}

//
// several buffers
//

static void test_several_buffers(void) {
    struct test_backend_config config = { .name = "Dev", .alignment = 64 };
    ggml_backend_reg_t reg = test_backend_reg_new(&config);
    ggml_backend_buffer_type_t dev_buft = ggml_backend_dev_buffer_type(test_backend_device(reg));
    ggml_backend_buffer_type_t bufts[2] = { ggml_backend_cpu_buffer_type(), dev_buft };

    struct ggml_context * ctx = new_ctx(64);
    struct ggml_tensor * x = leaf_bytes(ctx, 100);
    ggml_set_input(x);
    struct ggml_tensor * t = x;
    for (int i = 0; i < 10; i++) {
        t = op_bytes(ctx, 100 + 40 * (size_t) i, t, NULL);
    }
    ggml_set_output(t);
    struct ggml_cgraph * g = new_graph(ctx);
    ggml_build_forward_expand(g, t);
    int node_ids[10];
    for (int i = 0; i < 10; i++) {
        node_ids[i] = i % 2; // alternate: CPU, device, CPU, ...
    }
    const int leaf_ids[1] = { 1 };

    ggml_gallocr_t galloc = ggml_gallocr_new_n(bufts, 2);
    size_t sizes[2];
    test_backend_reset_counters(test_backend_device(reg));
    ggml_gallocr_reserve_n_size(galloc, g, node_ids, leaf_ids, sizes);
    struct test_backend_counters c;
    test_backend_get_counters(test_backend_device(reg), &c);
    CHECK_EQ_INT(c.n_buffers_alloc, 0); // sizing allocates nothing
    CHECK(ggml_gallocr_reserve_n(galloc, g, node_ids, leaf_ids));
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 0), sizes[0]);
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 1), sizes[1]);

    struct owned_set os = collect_owned(g);
    CHECK(ggml_gallocr_alloc_graph(galloc, g));
    for (int i = 0; i < g->n_nodes; i++) {
        CHECK(ggml_backend_buffer_get_type(g->nodes[i]->buffer) == bufts[node_ids[i]]);
    }
    CHECK(ggml_backend_buffer_get_type(x->buffer) == dev_buft);
    struct plan_check pc = check_plan(g, &os);
    CHECK_EQ_INT(pc.violations, 0);
    free(pc.lives);
    free(os.items);

    // Node i has 100 + 40 i bytes and reads node i - 1 only, so each node dies
    // one step after it is made, and the nodes of one buffer never meet.
    // Device (alignment 64): x (input, kept) 128 at 0, then nodes 1, 3, 5, 7, 9
    // (192, 256, 320, 384, 512 padded) each at 128: 128 + 512 = 640.
    // CPU (alignment 32): nodes 0, 2, 4, 6, 8 (128 ... 448 padded) each at 0: 448.
    CHECK_EQ_INT(sizes[1], 640);
    CHECK_EQ_INT(sizes[0], 448);

    // a graph of another shape: with several buffers the caller must reserve again
    struct ggml_tensor * t2 = op_bytes(ctx, 64, t, NULL);
    ggml_set_output(t2);
    struct ggml_cgraph * g2 = new_graph(ctx);
    ggml_build_forward_expand(g2, t2);
    // t and its chain are allocated now: reset them so that the allocator places them again
    for (int i = 0; i < g->n_nodes; i++) {
        g->nodes[i]->data = NULL;
        g->nodes[i]->buffer = NULL;
    }
    x->data = NULL;
    x->buffer = NULL;
    CHECK(!ggml_gallocr_alloc_graph(galloc, g2));
    int node_ids2[11];
    for (int i = 0; i < 11; i++) {
        node_ids2[i] = i % 2;
    }
    CHECK(ggml_gallocr_reserve_n(galloc, g2, node_ids2, leaf_ids));
    CHECK(ggml_gallocr_alloc_graph(galloc, g2));
    ggml_gallocr_free(galloc);

    // the same buffer type twice: one buffer, counted once
    ggml_backend_buffer_type_t same[2] = { dev_buft, dev_buft };
    for (int i = 0; i < g2->n_nodes; i++) {
        g2->nodes[i]->data = NULL;
        g2->nodes[i]->buffer = NULL;
    }
    x->data = NULL;
    x->buffer = NULL;
    galloc = ggml_gallocr_new_n(same, 2);
    CHECK(ggml_gallocr_reserve_n(galloc, g2, node_ids2, leaf_ids));
    CHECK(ggml_gallocr_alloc_graph(galloc, g2));
    CHECK(ggml_gallocr_get_buffer_size(galloc, 0) > 0);
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 1), 0);
    CHECK(g2->nodes[0]->buffer == g2->nodes[1]->buffer);
    ggml_gallocr_free(galloc);

    ggml_free(ctx);
    test_backend_reg_free(reg);
}

//
// a buffer type with a small max size: several chunks
//

static void test_max_size_chunks(void) {
    struct test_backend_config config = { .name = "Small", .max_buffer_size = 1024 };
    ggml_backend_reg_t reg = test_backend_reg_new(&config);
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(test_backend_device(reg));

    // four tensors of 512 alive together, then one of 2000 (over the max on its own)
    struct ggml_context * ctx = new_ctx(32);
    struct ggml_tensor * x = leaf_bytes(ctx, 32);
    ggml_set_input(x);
    struct ggml_tensor * p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = op_bytes(ctx, 512, x, NULL);
    }
    struct ggml_tensor * all = op3(ctx, 256, p[0], p[1], p[2]);
    all->src[3] = p[3];
    struct ggml_tensor * big = op_bytes(ctx, 2000, all, NULL);
    ggml_set_output(big);
    struct ggml_cgraph * g = new_graph(ctx);
    ggml_build_forward_expand(g, big);

    ggml_gallocr_t galloc = ggml_gallocr_new(buft);
    struct plan_check pc = alloc_and_check(galloc, g);
    struct test_backend_counters c;
    test_backend_get_counters(test_backend_device(reg), &c);
    CHECK(c.n_buffers_alloc >= 3); // 32 + 4*512 + 256 + 2000 cannot fit two buffers of 1024
    size_t total = 0;
    ggml_backend_buffer_t seen[16];
    int n_seen = 0;
    for (int i = 0; i < pc.n; i++) {
        ggml_backend_buffer_t b = pc.lives[i].t->buffer;
        bool known = false;
        for (int k = 0; k < n_seen; k++) {
            known = known || seen[k] == b;
        }
        if (!known && n_seen < 16) {
            seen[n_seen++] = b;
            total += ggml_backend_buffer_get_size(b);
            // only a buffer holding one tensor larger than the max may exceed it
            CHECK(ggml_backend_buffer_get_size(b) <= 1024 || b == big->buffer);
        }
    }
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 0), total);
    CHECK(ggml_backend_buffer_get_size(big->buffer) >= 2016);
    free(pc.lives);
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
    test_backend_reg_free(reg);
}

//
// re-planning
//

// a chain of n nodes of the given size after input x
static struct ggml_tensor * chain(struct ggml_context * ctx, struct ggml_tensor * x, int n, size_t nbytes) {
    struct ggml_tensor * t = x;
    for (int i = 0; i < n; i++) {
        t = op_bytes(ctx, nbytes, t, i == n - 1 ? x : NULL);
    }
    ggml_set_output(t);
    return t;
}

static void test_replanning(void) {
    ggml_backend_reg_t reg = test_backend_reg_new(&(struct test_backend_config) { .name = "Re" });
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(test_backend_device(reg));
    ggml_gallocr_t galloc = ggml_gallocr_new(buft);
    struct test_backend_counters c;

    // small graph: x(64) -> 3 x 256 : two alive at a time + x, output last
    struct ggml_context * ctx1 = new_ctx(32);
    struct ggml_tensor * x1 = leaf_bytes(ctx1, 64);
    ggml_set_input(x1);
    struct ggml_tensor * o1 = chain(ctx1, x1, 3, 256);
    struct ggml_cgraph * g1 = new_graph(ctx1);
    ggml_build_forward_expand(g1, o1);
    struct plan_check pc = alloc_and_check(galloc, g1);
    free(pc.lives);
    const size_t size1 = ggml_gallocr_get_buffer_size(galloc, 0);
    CHECK_EQ_INT(size1, 64 + 2*256);

    // a larger graph: planned again, the buffer grows
    struct ggml_context * ctx2 = new_ctx(64);
    struct ggml_tensor * x2 = leaf_bytes(ctx2, 64);
    ggml_set_input(x2);
    struct ggml_tensor * o2 = chain(ctx2, x2, 8, 1024);
    struct ggml_cgraph * g2 = new_graph(ctx2);
    ggml_build_forward_expand(g2, o2);
    pc = alloc_and_check(galloc, g2);
    free(pc.lives);
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 0), 64 + 2*1024);

    // the same structure with smaller tensors fits the plan: no new buffer
    struct ggml_context * ctx3 = new_ctx(64);
    struct ggml_tensor * x3 = leaf_bytes(ctx3, 64);
    ggml_set_input(x3);
    struct ggml_tensor * o3 = chain(ctx3, x3, 8, 512);
    struct ggml_cgraph * g3 = new_graph(ctx3);
    ggml_build_forward_expand(g3, o3);
    test_backend_get_counters(test_backend_device(reg), &c);
    const uint64_t n_alloc_before = c.n_buffers_alloc;
    pc = alloc_and_check(galloc, g3);
    free(pc.lives);
    test_backend_get_counters(test_backend_device(reg), &c);
    CHECK_EQ_INT(c.n_buffers_alloc, n_alloc_before);
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 0), 64 + 2*1024);

    // same node count and sizes, other structure: every node reads x, so all
    // stay alive until the last; a plan made for the chain would overlap them
    struct ggml_context * ctx4 = new_ctx(64);
    struct ggml_tensor * x4 = leaf_bytes(ctx4, 64);
    ggml_set_input(x4);
    struct ggml_tensor * nodes4[8];
    for (int i = 0; i < 7; i++) {
        nodes4[i] = op_bytes(ctx4, 512, x4, NULL);
    }
    nodes4[7] = op3(ctx4, 512, nodes4[0], nodes4[1], nodes4[2]);
    for (int i = 3; i < 7; i++) {
        nodes4[7]->src[i] = nodes4[i];
    }
    ggml_set_output(nodes4[7]);
    struct ggml_cgraph * g4 = new_graph(ctx4);
    ggml_build_forward_expand(g4, nodes4[7]);
    CHECK_EQ_INT(g4->n_nodes, g3->n_nodes);
    CHECK_EQ_INT(g4->n_leafs, g3->n_leafs);
    pc = alloc_and_check(galloc, g4);
    free(pc.lives);
    CHECK_EQ_INT(ggml_gallocr_get_buffer_size(galloc, 0), 64 + 8*512);

    // reserving for the worst case first: later graphs fit without reallocation
    ggml_gallocr_free(galloc);
    galloc = ggml_gallocr_new(buft);
    struct ggml_context * ctx5 = new_ctx(64);
    struct ggml_tensor * x5 = leaf_bytes(ctx5, 64);
    ggml_set_input(x5);
    struct ggml_tensor * o5 = chain(ctx5, x5, 8, 2048);
    struct ggml_cgraph * g5 = new_graph(ctx5);
    ggml_build_forward_expand(g5, o5);
    CHECK(ggml_gallocr_reserve(galloc, g5));
    CHECK(o5->data == NULL); // reserving places nothing
    test_backend_get_counters(test_backend_device(reg), &c);
    const uint64_t n_alloc_reserved = c.n_buffers_alloc;
    for (int i = 0; i < g3->n_nodes; i++) {
        g3->nodes[i]->data = NULL;
        g3->nodes[i]->buffer = NULL;
    }
    x3->data = NULL;
    x3->buffer = NULL;
    pc = alloc_and_check(galloc, g3);
    free(pc.lives);
    test_backend_get_counters(test_backend_device(reg), &c);
    CHECK_EQ_INT(c.n_buffers_alloc, n_alloc_reserved);

    ggml_gallocr_free(galloc);
    ggml_free(ctx1);
    ggml_free(ctx2);
    ggml_free(ctx3);
    ggml_free(ctx4);
    ggml_free(ctx5);
    test_backend_reg_free(reg);
}

//
// a part of a graph (as the scheduler's splits): sources from the other
// part are placed at their first use
//

static void test_graph_view(void) {
    struct ggml_context * ctx = new_ctx(64);
    struct ggml_tensor * x = leaf_bytes(ctx, 64);
    ggml_set_input(x);
    struct ggml_tensor * a = op_bytes(ctx, 256, x, NULL);
    struct ggml_tensor * b = op_bytes(ctx, 256, a, NULL);
    struct ggml_tensor * c = op_bytes(ctx, 512, a, b);  // first node of the part
    struct ggml_tensor * v = th_view_2d(ctx, b, 32, 1, 128, 64);
    struct ggml_tensor * d = op_bytes(ctx, 128, c, v);
    struct ggml_tensor * e = th_scale(ctx, d, 2.0f, 0.0f);
    ggml_set_output(e);
    struct ggml_cgraph * g = new_graph(ctx);
    ggml_build_forward_expand(g, e);
    CHECK(g->nodes[2] == c);

    struct ggml_cgraph part = ggml_graph_view(g, 2, g->n_nodes);
    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    struct plan_check pc = alloc_and_check(galloc, &part);
    CHECK(a->data != NULL && b->data != NULL && c->data != NULL);
    CHECK(v->data == (char *) b->data + 64);
    CHECK(e->data == d->data);
    free(pc.lives);
    ggml_gallocr_free(galloc);
    ggml_free(ctx);
}

//
// random graphs: checked plans, and the same values as without reuse
//

struct rng {
    uint64_t s;
};

static uint32_t rng_next(struct rng * r) {
    r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(r->s >> 33);
}

static int rng_int(struct rng * r, int n) {
    return (int)(rng_next(r) % (uint32_t) n);
}

enum { RG_COLS = 8, RG_MAX_TENSORS = 64 };

struct random_graph {
    struct ggml_context * ctx;
    struct ggml_cgraph  * graph;
    struct ggml_tensor  * inputs[4];
    int n_inputs;
    struct ggml_tensor  * outputs[8];
    int n_outputs;
};

// The same seed builds the same graph: F32 tensors of RG_COLS columns, ops
// ADD, MUL, SCALE (in place candidates), CONT, MUL_MAT with a weight, row views.
static struct random_graph build_random_graph(uint64_t seed) {
    struct random_graph rg = { 0 };
    struct rng r = { seed };
    rg.ctx = new_ctx(RG_MAX_TENSORS * 2);
    struct ggml_tensor * pool[RG_MAX_TENSORS];
    int n_pool = 0;

    rg.n_inputs = 1 + rng_int(&r, 3);
    for (int i = 0; i < rg.n_inputs; i++) {
        struct ggml_tensor * in = ggml_new_tensor_2d(rg.ctx, GGML_TYPE_F32, RG_COLS, 1 + rng_int(&r, 5));
        ggml_set_input(in);
        ggml_format_name(in, "in%d", i);
        rg.inputs[i] = in;
        pool[n_pool++] = in;
    }
    struct ggml_tensor * w = ggml_new_tensor_2d(rg.ctx, GGML_TYPE_F32, RG_COLS, RG_COLS);
    ggml_set_input(w);
    ggml_set_name(w, "w");
    rg.inputs[rg.n_inputs++] = w;

    const int n_ops = 4 + rng_int(&r, 24);
    for (int i = 0; i < n_ops && n_pool < RG_MAX_TENSORS; i++) {
        // prefer recent tensors, so that chains form and old ones die
        struct ggml_tensor * a = pool[n_pool - 1 - rng_int(&r, n_pool < 4 ? n_pool : 4)];
        struct ggml_tensor * b = pool[rng_int(&r, n_pool)];
        struct ggml_tensor * t = NULL;
        switch (rng_int(&r, 7)) {
            case 0:
            case 1: {
                // b must repeat onto a: same rows, or a single row
                if (b->ne[1] != a->ne[1] && b->ne[1] != 1) {
                    b = th_view_2d(rg.ctx, b, RG_COLS, 1, b->nb[1], 0);
                    pool[n_pool++] = b;
                }
                t = th_like(rg.ctx, rng_int(&r, 2) ? GGML_OP_ADD : GGML_OP_MUL, a, b);
            } break;
            case 2:
            case 3:
                t = th_scale(rg.ctx, a, 0.5f + (float) rng_int(&r, 4), (float) rng_int(&r, 3));
                break;
            case 4:
                t = th_mul_mat(rg.ctx, w, a);
                break;
            case 5: {
                // a view of some of a's rows, then a copy of it
                const int64_t rows = 1 + rng_int(&r, (int) a->ne[1]);
                const int64_t first = rng_int(&r, (int)(a->ne[1] - rows + 1));
                struct ggml_tensor * v = th_view_2d(rg.ctx, a, RG_COLS, rows, a->nb[1], (size_t) first * a->nb[1]);
                pool[n_pool++] = v;
                t = th_cont(rg.ctx, v);
            } break;
            default:
                t = th_cont(rg.ctx, a);
                break;
        }
        ggml_format_name(t, "t%d", i);
        pool[n_pool++] = t;
        if (rng_int(&r, 5) == 0 && rg.n_outputs < 7) {
            ggml_set_output(t);
            rg.outputs[rg.n_outputs++] = t;
        }
    }
    struct ggml_tensor * last = pool[n_pool - 1];
    if (last->view_src != NULL) {
        last = th_cont(rg.ctx, last);
    }
    if ((last->flags & GGML_TENSOR_FLAG_OUTPUT) == 0) {
        ggml_set_output(last);
        rg.outputs[rg.n_outputs++] = last;
    }
    rg.graph = new_graph(rg.ctx);
    for (int i = 0; i < rg.n_outputs; i++) {
        ggml_build_forward_expand(rg.graph, rg.outputs[i]);
    }
    return rg;
}

static void set_random_inputs(struct random_graph * rg, uint64_t seed) {
    struct rng r = { seed ^ 0x9e3779b97f4a7c15ull };
    for (int i = 0; i < rg->n_inputs; i++) {
        struct ggml_tensor * in = rg->inputs[i];
        const int64_t n = ggml_nelements(in);
        float * v = (float *) malloc((size_t) n * sizeof(float));
        for (int64_t k = 0; k < n; k++) {
            v[k] = (float)(rng_int(&r, 17) - 8) / 4.0f;
        }
        if (in->data != NULL) { // else not reachable from an output
            ggml_backend_tensor_set(in, v, 0, (size_t) n * sizeof(float));
        }
        free(v);
    }
}

static void test_random_graphs(void) {
    // reference: every tensor in memory of its own, computed by the host test backend
    ggml_backend_reg_t reg_host = test_backend_reg_new(&(struct test_backend_config) { .name = "HostRef", .host_memory = true });
    // under test: device memory with odd settings (alignment 64, padded sizes, small buffers)
    ggml_backend_reg_t reg_dev = test_backend_reg_new(&(struct test_backend_config) {
        .name = "DevAlloc", .alignment = 64, .alloc_padding = 16, .max_buffer_size = 512,
    });
    ggml_backend_t host = ggml_backend_dev_init(test_backend_device(reg_host), NULL);
    ggml_backend_t dev  = ggml_backend_dev_init(test_backend_device(reg_dev), NULL);
    ggml_backend_buffer_type_t dev_buft = ggml_backend_dev_buffer_type(test_backend_device(reg_dev));

    int n_graphs = 0;
    int n_inplace = 0;
    int n_smaller = 0;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        // planned on the CPU buffer type and on the device
        for (int target = 0; target < 2; target++) {
            struct random_graph rg  = build_random_graph(seed);
            struct random_graph ref = build_random_graph(seed);
            CHECK_EQ_INT(rg.graph->n_nodes, ref.graph->n_nodes);

            ggml_gallocr_t galloc = ggml_gallocr_new(target == 0 ? ggml_backend_cpu_buffer_type() : dev_buft);
            struct owned_set os = collect_owned(rg.graph);
            CHECK(ggml_gallocr_alloc_graph(galloc, rg.graph));
            struct plan_check pc = check_plan(rg.graph, &os);
            CHECK_MSG(pc.violations == 0, "seed %llu target %d", (unsigned long long) seed, target);
            const size_t align = target == 0 ? 32 : 64;
            const size_t planned = ggml_gallocr_get_buffer_size(galloc, 0);
            // at least what is alive at once, at most every tensor apart
            CHECK(planned >= pc.peak);
            CHECK(planned <= sum_of_sizes(&pc, align));
            n_inplace += pc.inplace;
            n_smaller += planned < sum_of_sizes(&pc, align);

            ggml_backend_buffer_t ref_buf = ggml_backend_alloc_ctx_tensors_from_buft(ref.ctx, ggml_backend_cpu_buffer_type());
            set_random_inputs(&rg, seed);
            set_random_inputs(&ref, seed);
            CHECK(ggml_backend_graph_compute(target == 0 ? host : dev, rg.graph) == GGML_STATUS_SUCCESS);
            CHECK(ggml_backend_graph_compute(host, ref.graph) == GGML_STATUS_SUCCESS);
            for (int i = 0; i < rg.n_outputs; i++) {
                const size_t n = ggml_nbytes(rg.outputs[i]);
                float * x = (float *) malloc(n);
                float * y = (float *) malloc(n);
                ggml_backend_tensor_get(rg.outputs[i], x, 0, n);
                ggml_backend_tensor_get(ref.outputs[i], y, 0, n);
                CHECK_MSG(memcmp(x, y, n) == 0, "seed %llu target %d output %s", (unsigned long long) seed, target, rg.outputs[i]->name);
                free(x);
                free(y);
            }
            n_graphs++;

            free(pc.lives);
            free(os.items);
            ggml_backend_buffer_free(ref_buf);
            ggml_gallocr_free(galloc);
            ggml_free(rg.ctx);
            ggml_free(ref.ctx);
        }
    }
    // the random graphs exercised what they are for
    CHECK(n_inplace > 20);
    CHECK(n_smaller > n_graphs / 2);
    printf("random graphs: %d planned, %d in-place pairs, %d smaller than the sum of their tensors\n", n_graphs, n_inplace, n_smaller);

    ggml_backend_free(host);
    ggml_backend_free(dev);
    test_backend_reg_free(reg_host);
    test_backend_reg_free(reg_dev);
}

int main(void) {
    test_optimum_chain();
    test_optimum_best_fit();
    test_optimum_inplace();
    test_inplace_forbidden();
    test_views_inputs_outputs();
    test_several_buffers();
    test_max_size_chunks();
    test_replanning();
    test_graph_view();
    test_random_graphs();
    return TEST_RESULT();
}
