// test-mpi-proto: the MPI backend's messages without an MPI job.
//
// - fields written and read back; reads past the end, over-long strings and
//   trailing bytes leave the reader failed;
// - the bytes a tensor spans: ggml_nbytes for contiguous, permuted and
//   quantized tensors; shapes and strides that would overflow are refused;
// - a graph described and read back into another context over the same CPU
//   buffer computes the same values as a double-precision reference;
// - every truncation of that message, thousands of corrupted copies of it,
//   and hand-made hostile descriptions (unknown buffer, data past the end of
//   the buffer, a source that comes later, an invalid type, a view away from
//   its source, a custom op (its parameters are a function address of rank
//   0), a count the message cannot hold) are refused, or accepted only with
//   every tensor inside its buffer.

#include "testing.h"

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"

#include "ggml-mpi/mpi-proto.h"

#include <stdlib.h>
#include <string.h>

static void quiet_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    (void) user_data;
}

static void test_fields(void) {
    struct ggml_mpi_writer w;
    ggml_mpi_writer_init(&w);
    ggml_mpi_put_u8(&w, 0xfe);
    ggml_mpi_put_u32(&w, 0x12345678u);
    ggml_mpi_put_u64(&w, 0x0123456789abcdefull);
    ggml_mpi_put_str(&w, "MPI1:CPU");
    CHECK(w.ok && w.size == 1 + 4 + 8 + 4 + 8);
    struct ggml_mpi_reader r = ggml_mpi_reader_of(w.data, w.size);
    CHECK_EQ_INT(ggml_mpi_get_u8(&r), 0xfe);
    CHECK(ggml_mpi_get_u32(&r) == 0x12345678u);
    CHECK(ggml_mpi_get_u64(&r) == 0x0123456789abcdefull);
    char s[16];
    CHECK(ggml_mpi_get_str(&r, s, sizeof(s)) && strcmp(s, "MPI1:CPU") == 0);
    CHECK(ggml_mpi_reader_done(&r));
    ggml_mpi_get_u8(&r); // past the end
    CHECK(!r.ok && !ggml_mpi_reader_done(&r));

    // a string longer than the room for it
    r = ggml_mpi_reader_of(w.data, w.size);
    ggml_mpi_get_bytes(&r, s, 13);
    char small[8];
    CHECK(!ggml_mpi_get_str(&r, small, sizeof(small)) && small[0] == '\0' && !r.ok);
    // a string length past the end
    const uint8_t bad_len[6] = { 0xff, 0xff, 0xff, 0x7f, 'a', 'b' };
    r = ggml_mpi_reader_of(bad_len, sizeof(bad_len));
    CHECK(!ggml_mpi_get_str(&r, s, sizeof(s)));
    // trailing bytes
    r = ggml_mpi_reader_of(w.data, w.size);
    ggml_mpi_get_u8(&r);
    CHECK(r.ok && !ggml_mpi_reader_done(&r));
    ggml_mpi_writer_free(&w);
}

static void test_extent(void) {
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * ts[4];
    ts[0] = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 3, 5, 7, 2);
    ts[1] = ggml_permute(ctx, ts[0], 2, 0, 3, 1);
    ts[2] = ggml_new_tensor_3d(ctx, GGML_TYPE_Q4_0, 64, 3, 2);
    ts[3] = ggml_view_2d(ctx, ts[0], 2, 4, ts[0]->nb[1], 4);
    for (int i = 0; i < 4; i++) {
        size_t extent = 0;
        CHECK(ggml_mpi_tensor_extent(ts[i]->type, ts[i]->ne, ts[i]->nb, &extent));
        CHECK_EQ_INT(extent, ggml_nbytes(ts[i]));
    }
    size_t extent = 1;
    const size_t nb[4] = { 4, 12, 60, 420 };
    const int64_t empty[4] = { 3, 0, 7, 2 };
    CHECK(ggml_mpi_tensor_extent(GGML_TYPE_F32, empty, nb, &extent) && extent == 0);
    const int64_t negative[4] = { 3, -1, 7, 2 };
    CHECK(!ggml_mpi_tensor_extent(GGML_TYPE_F32, negative, nb, &extent));
    const int64_t huge[4] = { (int64_t) 1 << 40, (int64_t) 1 << 40, 1, 1 };
    CHECK(!ggml_mpi_tensor_extent(GGML_TYPE_F32, huge, nb, &extent));
    const int64_t odd_blocks[4] = { 33, 1, 1, 1 };
    CHECK(!ggml_mpi_tensor_extent(GGML_TYPE_Q4_0, odd_blocks, nb, &extent));
    const size_t huge_nb[4] = { 4, (size_t) 1 << 50, 1, 1 };
    const int64_t ne[4] = { 3, 5, 1, 1 };
    CHECK(!ggml_mpi_tensor_extent(GGML_TYPE_F32, ne, huge_nb, &extent));
    CHECK(!ggml_mpi_tensor_extent((enum ggml_type) 1000, ne, nb, &extent));
    ggml_free(ctx);
}

// one CPU buffer, handle 1
static ggml_backend_buffer_t g_buffer;

static bool ref_cpu(void * ctx, ggml_backend_buffer_t buffer, uint64_t * handle, uintptr_t * base) {
    (void) ctx;
    if (buffer != g_buffer) {
        return false;
    }
    *handle = 1;
    *base   = (uintptr_t) ggml_backend_buffer_get_base(buffer);
    return true;
}

static ggml_backend_buffer_t find_cpu(void * ctx, uint64_t handle) {
    (void) ctx;
    return handle == 1 ? g_buffer : NULL;
}

// every tensor of an accepted graph lies inside the buffer
static bool graph_in_bounds(struct ggml_cgraph * g) {
    const uint8_t * lo = (const uint8_t *) ggml_backend_buffer_get_base(g_buffer);
    const uint8_t * hi = lo + ggml_backend_buffer_get_size(g_buffer);
    for (int i = 0; i < ggml_graph_n_nodes(g); i++) {
        const struct ggml_tensor * t = ggml_graph_node(g, i);
        for (int s = -1; s < GGML_MAX_SRC; s++) {
            const struct ggml_tensor * u = s < 0 ? t : t->src[s];
            if (u == NULL || u->data == NULL) {
                continue;
            }
            if ((const uint8_t *) u->data < lo || (const uint8_t *) u->data + ggml_nbytes(u) > hi) {
                return false;
            }
        }
    }
    return true;
}

static void test_graph(void) {
    enum { K = 9, M = 4, N = 3 };
    struct ggml_init_params ip = { 32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor * b   = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * p   = ggml_mul_mat(ctx, a, b);
    struct ggml_tensor * out = ggml_scale(ctx, ggml_cont(ctx, ggml_transpose(ctx, p)), 0.5f);
    ggml_set_name(out, "out");
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    g_buffer = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    float av[K * M], bv[K * N];
    for (int i = 0; i < K * M; i++) av[i] = (float) (i % 7) - 3.0f;
    for (int i = 0; i < K * N; i++) bv[i] = (float) (i % 5) * 0.25f;
    ggml_backend_tensor_set(a, av, 0, sizeof(av));
    ggml_backend_tensor_set(b, bv, 0, sizeof(bv));

    struct ggml_mpi_writer w;
    ggml_mpi_writer_init(&w);
    CHECK(ggml_mpi_put_graph(&w, gf, ref_cpu, NULL));

    struct ggml_mpi_reader r = ggml_mpi_reader_of(w.data, w.size);
    struct ggml_context * gctx = NULL;
    struct ggml_cgraph * g = ggml_mpi_get_graph(&r, find_cpu, NULL, &gctx);
    CHECK(g != NULL && ggml_graph_n_nodes(g) == ggml_graph_n_nodes(gf));
    if (g != NULL) {
        ggml_backend_t cpu = ggml_backend_cpu_init();
        CHECK(ggml_backend_graph_compute(cpu, g) == GGML_STATUS_SUCCESS);
        ggml_backend_free(cpu);
        struct ggml_tensor * gout = ggml_graph_node(g, -1);
        CHECK(strcmp(gout->name, "out") == 0 && gout->data == out->data);
        float got[M * N];
        ggml_backend_tensor_get(gout, got, 0, sizeof(got));
        double err = 0;
        for (int j = 0; j < N; j++) {
            for (int i = 0; i < M; i++) {
                double s = 0;
                for (int l = 0; l < K; l++) {
                    s += (double) av[i * K + l] * bv[j * K + l];
                }
                err = fmax(err, fabs(got[i * N + j] - 0.5 * s)); // transposed: [N, M] -> row i holds column i
            }
        }
        CHECK_MSG(err < 1e-5, "max error %g", err);
    }
    ggml_free(gctx);

    // without a buffer table, data is refused; without data, a buffer is refused
    r = ggml_mpi_reader_of(w.data, w.size);
    CHECK(ggml_mpi_get_graph(&r, NULL, NULL, &gctx) == NULL && gctx == NULL);

    // every truncation
    for (size_t n = 0; n < w.size; n++) {
        r = ggml_mpi_reader_of(w.data, n);
        CHECK_MSG(ggml_mpi_get_graph(&r, find_cpu, NULL, &gctx) == NULL, "truncated to %zu bytes", n);
        ggml_free(gctx);
    }
    // corrupted copies: refused, or inside the buffer
    uint8_t * copy = (uint8_t *) malloc(w.size);
    unsigned state = 12345;
    int accepted = 0, out_of_bounds = 0;
    for (int trial = 0; trial < 4000; trial++) {
        memcpy(copy, w.data, w.size);
        for (int f = 0; f < 1 + trial % 3; f++) {
            state = state * 1664525u + 1013904223u;
            const size_t at = (state >> 8) % w.size;
            state = state * 1664525u + 1013904223u;
            copy[at] = trial % 2 ? (uint8_t) (copy[at] ^ (1u << ((state >> 12) % 8))) : (uint8_t) (state >> 16);
        }
        r = ggml_mpi_reader_of(copy, w.size);
        struct ggml_cgraph * cg = ggml_mpi_get_graph(&r, find_cpu, NULL, &gctx);
        if (cg != NULL) {
            accepted++;
            out_of_bounds += !graph_in_bounds(cg);
        }
        ggml_free(gctx);
    }
    printf("corrupted graphs: %d of 4000 accepted, %d of them out of bounds\n", accepted, out_of_bounds);
    CHECK_EQ_INT(out_of_bounds, 0);
    free(copy);
    ggml_mpi_writer_free(&w);

    // hand-made descriptions of one tensor: each field wrong in turn
    struct {
        const char * what;
        uint32_t type, op, src0, view_src;
        uint64_t handle, offset, ne0;
        uint32_t n_tensors;
    } cases[] = {
        { "valid",                 GGML_TYPE_F32, GGML_OP_NONE, UINT32_MAX, UINT32_MAX, 1, 0, 4, 1 },
        { "unknown buffer",        GGML_TYPE_F32, GGML_OP_NONE, UINT32_MAX, UINT32_MAX, 7, 0, 4, 1 },
        { "past the buffer's end", GGML_TYPE_F32, GGML_OP_NONE, UINT32_MAX, UINT32_MAX, 1, ggml_backend_buffer_get_size(g_buffer) - 8, 4, 1 },
        { "offset wraps",          GGML_TYPE_F32, GGML_OP_NONE, UINT32_MAX, UINT32_MAX, 1, UINT64_MAX - 3, 4, 1 },
        { "a later source",        GGML_TYPE_F32, GGML_OP_NONE, 0,          UINT32_MAX, 1, 0, 4, 1 },
        { "a view of itself",      GGML_TYPE_F32, GGML_OP_NONE, UINT32_MAX, 0,          1, 0, 4, 1 },
        { "invalid type",          999, GGML_OP_NONE,           UINT32_MAX, UINT32_MAX, 1, 0, 4, 1 },
        { "huge shape",            GGML_TYPE_F32, GGML_OP_NONE, UINT32_MAX, UINT32_MAX, 1, 0, (uint64_t) 1 << 62, 1 },
        { "a custom function",     GGML_TYPE_F32, GGML_OP_MAP_CUSTOM1, UINT32_MAX, UINT32_MAX, 1, 0, 4, 1 },
        { "count too large",       GGML_TYPE_F32, GGML_OP_NONE, UINT32_MAX, UINT32_MAX, 1, 0, 4, 1000000 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct ggml_mpi_writer h;
        ggml_mpi_writer_init(&h);
        ggml_mpi_put_u32(&h, cases[c].n_tensors);
        ggml_mpi_put_u32(&h, cases[c].type);
        ggml_mpi_put_u32(&h, cases[c].op);
        ggml_mpi_put_u32(&h, 0);
        const uint64_t ne[4] = { cases[c].ne0, 1, 1, 1 };
        for (int k = 0; k < 4; k++) ggml_mpi_put_u64(&h, ne[k]);
        const uint64_t nb[4] = { 4, 4 * cases[c].ne0, 4 * cases[c].ne0, 4 * cases[c].ne0 };
        for (int k = 0; k < 4; k++) ggml_mpi_put_u64(&h, nb[k]);
        uint8_t params[GGML_MAX_OP_PARAMS] = { 0 };
        ggml_mpi_put_bytes(&h, params, sizeof(params));
        for (int k = 0; k < GGML_MAX_SRC; k++) ggml_mpi_put_u32(&h, k == 0 ? cases[c].src0 : UINT32_MAX);
        ggml_mpi_put_u32(&h, cases[c].view_src);
        ggml_mpi_put_u64(&h, 0);
        ggml_mpi_put_u64(&h, cases[c].handle);
        ggml_mpi_put_u64(&h, cases[c].offset);
        ggml_mpi_put_str(&h, "t");
        ggml_mpi_put_u32(&h, 1);
        ggml_mpi_put_u32(&h, 0);
        r = ggml_mpi_reader_of(h.data, h.size);
        struct ggml_cgraph * hg = ggml_mpi_get_graph(&r, find_cpu, NULL, &gctx);
        CHECK_MSG((hg != NULL) == (c == 0), "%s: %s", cases[c].what, hg != NULL ? "accepted" : "refused");
        ggml_free(gctx);
        ggml_mpi_writer_free(&h);
    }

    ggml_backend_buffer_free(g_buffer);
    ggml_free(ctx);
}

// ggml_cast is a CPY that is its own destination (src[1] is the node itself):
// it travels, and the worker's copy names itself too and computes
static void test_graph_cast(void) {
    struct ggml_init_params ip = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    struct ggml_tensor * c = ggml_cast(ctx, ggml_scale(ctx, a, 2.0f), GGML_TYPE_F16);
    ggml_set_name(c, "c");
    CHECK(c->src[1] == c);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);
    g_buffer = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cpu_buffer_type());
    const float av[5] = { 1.0f, -0.5f, 0.25f, 3.0f, -2.0f };
    ggml_backend_tensor_set(a, av, 0, sizeof(av));

    struct ggml_mpi_writer w;
    ggml_mpi_writer_init(&w);
    CHECK(ggml_mpi_put_graph(&w, gf, ref_cpu, NULL));
    struct ggml_mpi_reader r = ggml_mpi_reader_of(w.data, w.size);
    struct ggml_context * gctx = NULL;
    struct ggml_cgraph * g = ggml_mpi_get_graph(&r, find_cpu, NULL, &gctx);
    CHECK(g != NULL);
    if (g != NULL) {
        struct ggml_tensor * gc = ggml_graph_node(g, -1);
        CHECK(gc->op == GGML_OP_CPY && gc->src[1] == gc && gc->data == c->data);
        ggml_backend_t cpu = ggml_backend_cpu_init();
        CHECK(ggml_backend_graph_compute(cpu, g) == GGML_STATUS_SUCCESS);
        ggml_backend_free(cpu);
        ggml_fp16_t got[5];
        ggml_backend_tensor_get(gc, got, 0, sizeof(got));
        for (int i = 0; i < 5; i++) {
            CHECK_NEAR(ggml_fp16_to_fp32(got[i]), 2.0 * av[i], 1e-6);
        }
    }
    ggml_free(gctx);
    ggml_mpi_writer_free(&w);
    ggml_backend_buffer_free(g_buffer);
    g_buffer = NULL;
    ggml_free(ctx);
}

int main(void) {
    test_fields();
    test_extent();
    test_graph_cast();
    ggml_log_set(quiet_log, NULL); // the refusals below log one line each
    test_graph();
    ggml_log_set(NULL, NULL);
    return TEST_RESULT();
}
