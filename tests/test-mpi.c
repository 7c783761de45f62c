// test-mpi: the MPI backend in a real job, run by ctest as
//     mpirun --oversubscribe -np 2|3 test-mpi
// Ranks other than 0 are workers (ggml_backend_mpi_worker); rank 0 checks:
//
// - the devices: MPI<rank>:CPU for every worker, typed GPU, the rank in the
//   description; a worker's integrated GPU (a test device typed IGPU,
//   registered by the worker) is a GPU on rank 0 too, as upstream's RPC
//   devices are, whatever they are on their host;
// - buffers: set/get at odd offsets and sizes, memset, clear, a buffer too
//   large for the worker (NULL, not a crash);
// - copies: within a worker, worker to worker (not through rank 0), host to
//   worker and back;
// - graphs: a product, a broadcast add, a non-contiguous view made
//   contiguous and a softmax against a double-precision reference; computed
//   again with new data (the graph sent once, then by reference), and a
//   graph of another structure on the same stream;
// - supports_op answered by the worker;
// - the scheduler in pipeline mode (events, worker-to-worker input copies);
// - hostile messages sent to a worker with raw MPI (garbage, a command of an
//   unknown kind, out-of-range offsets, a graph naming a buffer it does not
//   have, malformed communicators, an allreduce on an unknown one): refused,
//   and the worker still answers correctly afterwards;
// - the tiny synthetic llama: logits of a prompt and of two more tokens on
//   MPI1:CPU (and MPI1:CPU + MPI2:CPU with 3 ranks, with -ts 1,3 too, by
//   layers and by tensors: --split-mode tensor, the partial sums added by
//   MPI between the workers) against the one-process run on the CPU, fused
//   and unfused attention.

#include "testing.h"

#include "context.h"
#include "model.h"
#include "synthetic.h"

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-mpi.h"

#include "ggml-mpi/mpi-proto.h"
#include "backend-test/test-backend.h"

#include <mpi.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static float frand(unsigned * state) {
    *state = *state * 1664525u + 1013904223u;
    return (float) ((*state >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static ggml_backend_dev_t dev_named(const char * name) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_name(name);
    CHECK_MSG(dev != NULL, "no device %s", name);
    return dev;
}

static void test_devices(int n_ranks) {
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("MPI");
    CHECK(reg != NULL);
    CHECK(ggml_backend_reg_dev_count(reg) >= (size_t) (n_ranks - 1));
    for (int r = 1; r < n_ranks; r++) {
        char name[32];
        snprintf(name, sizeof(name), "MPI%d:CPU", r);
        ggml_backend_dev_t dev = dev_named(name);
        if (dev == NULL) {
            continue;
        }
        CHECK(ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_GPU);
        char rank_text[32];
        snprintf(rank_text, sizeof(rank_text), "(rank %d)", r);
        CHECK(strstr(ggml_backend_dev_description(dev), rank_text) != NULL);
        size_t free_mem = 0, total = 0;
        ggml_backend_dev_memory(dev, &free_mem, &total);
        CHECK(total > 0 && free_mem <= total);
        CHECK(!ggml_backend_buft_is_host(ggml_backend_dev_buffer_type(dev)));
        snprintf(name, sizeof(name), "MPI%d:TestIGPU", r);
        dev = dev_named(name);
        if (dev != NULL) {
            CHECK_MSG(ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_GPU, "%s has type %d", name,
                      (int) ggml_backend_dev_type(dev));
        }
    }
}

// a context of tensors of bytes in a buffer of dev
struct bytes_on {
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor  * t;
};

static struct bytes_on bytes_on(ggml_backend_dev_t dev, int64_t n) {
    struct bytes_on b;
    struct ggml_init_params ip = { 4 * ggml_tensor_overhead(), NULL, true };
    b.ctx = ggml_init(ip);
    b.t   = ggml_new_tensor_1d(b.ctx, GGML_TYPE_I8, n);
    b.buf = ggml_backend_alloc_ctx_tensors_from_buft(b.ctx, ggml_backend_dev_buffer_type(dev));
    CHECK(b.buf != NULL);
    return b;
}

static void bytes_free(struct bytes_on * b) {
    ggml_backend_buffer_free(b->buf);
    ggml_free(b->ctx);
}

static void test_buffers(void) {
    ggml_backend_dev_t dev = dev_named("MPI1:CPU");
    if (dev == NULL) {
        return;
    }
    enum { N = 1001 };
    struct bytes_on b = bytes_on(dev, N);
    if (b.buf == NULL) {
        return;
    }
    uint8_t data[N], back[N], want[N];
    for (int i = 0; i < N; i++) {
        data[i] = (uint8_t) (i * 7 + 3);
    }
    ggml_backend_tensor_set(b.t, data, 0, N);
    memcpy(want, data, N);
    ggml_backend_tensor_set(b.t, data + 5, 333, 77);            // odd offset and size
    memcpy(want + 333, data + 5, 77);
    ggml_backend_tensor_memset(b.t, 0xab, 999, 2);
    memset(want + 999, 0xab, 2);
    ggml_backend_tensor_get(b.t, back, 0, N);
    CHECK(memcmp(back, want, N) == 0);
    memset(back, 0, N);
    ggml_backend_tensor_get(b.t, back + 1, 1, 17);
    CHECK(memcmp(back + 1, want + 1, 17) == 0);
    ggml_backend_buffer_clear(b.buf, 0x5a);
    ggml_backend_tensor_get(b.t, back, 0, N);
    bool all = true;
    for (int i = 0; i < N; i++) {
        all = all && back[i] == 0x5a;
    }
    CHECK(all);
    bytes_free(&b);

    // more than the worker can have: NULL and a log line (AddressSanitizer
    // aborts on such a request instead of failing it)
#if defined(__has_feature)
#    if __has_feature(address_sanitizer)
#        define TEST_MPI_ASAN 1
#    endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(TEST_MPI_ASAN)
    ggml_backend_buffer_t huge = ggml_backend_buft_alloc_buffer(ggml_backend_dev_buffer_type(dev), (size_t) 1 << 50);
    CHECK(huge == NULL);
#endif
}

static void test_copies(int n_ranks) {
    ggml_backend_dev_t d1 = dev_named("MPI1:CPU");
    ggml_backend_dev_t d2 = n_ranks >= 3 ? dev_named("MPI2:CPU") : d1;
    if (d1 == NULL || d2 == NULL) {
        return;
    }
    enum { N = 4099 };
    struct bytes_on a = bytes_on(d1, N), b = bytes_on(d1, N), c = bytes_on(d2, N);
    struct bytes_on h = bytes_on(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU), N);
    if (a.buf == NULL || b.buf == NULL || c.buf == NULL || h.buf == NULL) {
        return;
    }
    uint8_t data[N], back[N];
    for (int i = 0; i < N; i++) {
        data[i] = (uint8_t) (i * 13 + 1);
    }
    memcpy(h.t->data, data, N);
    ggml_backend_tensor_copy(h.t, a.t);   // host -> worker 1
    ggml_backend_tensor_copy(a.t, b.t);   // within worker 1
    ggml_backend_tensor_copy(b.t, c.t);   // worker 1 -> worker 2 (or within 1)
    memset(h.t->data, 0, N);
    ggml_backend_tensor_copy(c.t, h.t);   // back to the host
    CHECK(memcmp(h.t->data, data, N) == 0);
    ggml_backend_tensor_get(b.t, back, 0, N);
    CHECK(memcmp(back, data, N) == 0);
    bytes_free(&a);
    bytes_free(&b);
    bytes_free(&c);
    bytes_free(&h);
}

// c = softmax(a^T b + bias) in double precision; a [k, m], b [k, n], bias [m]
static void reference(const float * a, const float * b, const float * bias, int k, int m, int n, double * out) {
    for (int j = 0; j < n; j++) {
        double row[64];
        double mx = -INFINITY;
        for (int i = 0; i < m; i++) {
            double s = bias[i];
            for (int l = 0; l < k; l++) {
                s += (double) a[i * k + l] * (double) b[j * k + l];
            }
            row[i] = s;
            mx     = s > mx ? s : mx;
        }
        double sum = 0;
        for (int i = 0; i < m; i++) {
            sum += exp(row[i] - mx);
        }
        for (int i = 0; i < m; i++) {
            out[j * m + i] = exp(row[i] - mx) / sum;
        }
    }
}

static void custom_negate(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    (void) dst; (void) a; (void) ith; (void) nth; (void) userdata;
}

// one pass: tensors in a new buffer, a graph computed in rounds
static void graph_pass(ggml_backend_dev_t dev, ggml_backend_t backend, unsigned seed) {
    enum { K = 13, M = 7, N = 5 };
    struct ggml_init_params ip = { 64 * ggml_tensor_overhead() + 2 * ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a    = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor * b    = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * bias = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, M);
    struct ggml_tensor * p    = ggml_mul_mat(ctx, a, b);                        // [M, N]
    // through a transposed (non-contiguous) view and back
    struct ggml_tensor * pt   = ggml_cont(ctx, ggml_transpose(ctx, p));         // [N, M]
    struct ggml_tensor * q    = ggml_cont(ctx, ggml_transpose(ctx, pt));        // [M, N]
    struct ggml_tensor * out  = ggml_soft_max(ctx, ggml_add(ctx, q, bias));
    struct ggml_cgraph * gf   = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    CHECK(buf != NULL);

    for (int round = 0; round < 3 && buf != NULL; round++) {
        float av[K * M], bv[K * N], biasv[M], got[M * N];
        for (int i = 0; i < K * M; i++) av[i] = frand(&seed);
        for (int i = 0; i < K * N; i++) bv[i] = frand(&seed);
        for (int i = 0; i < M; i++) biasv[i] = frand(&seed);
        ggml_backend_tensor_set(a, av, 0, sizeof(av));
        ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
        ggml_backend_tensor_set(bias, biasv, 0, sizeof(biasv));
        // rounds 1 and 2 send the same structure: computed by reference
        CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
        ggml_backend_tensor_get(out, got, 0, sizeof(got));
        double want[M * N];
        reference(av, bv, biasv, K, M, N, want);
        double err = 0;
        for (int i = 0; i < M * N; i++) {
            err = fmax(err, fabs(got[i] - want[i]));
        }
        CHECK_MSG(err < 1e-5, "round %d: max error %g", round, err);
    }

    // another structure on the same stream: the product alone, then the first graph again
    struct ggml_cgraph * g2 = ggml_new_graph(ctx);
    ggml_build_forward_expand(g2, p);
    CHECK(ggml_backend_graph_compute(backend, g2) == GGML_STATUS_SUCCESS);
    CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
    float got[M * N];
    ggml_backend_tensor_get(out, got, 0, sizeof(got));
    double sum = 0;
    for (int i = 0; i < M * N; i++) {
        sum += got[i];
    }
    CHECK_NEAR(sum, (double) N, 1e-5); // each softmax row sums to 1

    // supports_op, answered by the worker's CPU
    CHECK(ggml_backend_dev_supports_op(dev, out));
    CHECK(ggml_backend_dev_supports_op(dev, p));
    // a custom op's parameters are a function of this process: never run elsewhere
    struct ggml_tensor * custom = ggml_map_custom1(ctx, a, custom_negate, 1, NULL);
    CHECK(!ggml_backend_dev_supports_op(dev, custom));
    CHECK(ggml_backend_dev_supports_buft(dev, ggml_backend_dev_buffer_type(dev)));
    CHECK(!ggml_backend_dev_supports_buft(dev, ggml_backend_cpu_buffer_type()));

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

static void test_graphs(void) {
    ggml_backend_dev_t dev = dev_named("MPI1:CPU");
    if (dev == NULL) {
        return;
    }
    ggml_backend_t backend = ggml_backend_dev_init(dev, NULL);
    CHECK(backend != NULL && ggml_backend_is_mpi(backend));
    if (backend == NULL) {
        return;
    }
    // the second pass's buffer may get the first's handle and address, so the
    // same description: the graph must be sent again, not named by a stale id
    graph_pass(dev, backend, 7);
    graph_pass(dev, backend, 8);
    ggml_backend_free(backend);
}

// The scheduler in pipeline mode (parallel, 3 copies: events, copies
// between workers without a wait): y = W2 (W1 x) with W1 on the first worker
// and W2 on the last, x on the CPU, computed several times with new inputs.
static void test_sched_pipeline(int n_ranks) {
    char name2[32];
    snprintf(name2, sizeof(name2), "MPI%d:CPU", n_ranks - 1);
    ggml_backend_dev_t d1 = dev_named("MPI1:CPU");
    ggml_backend_dev_t d2 = dev_named(name2);
    if (d1 == NULL || d2 == NULL) {
        return;
    }
    enum { K = 33, H = 17, O = 9 };
    ggml_backend_t backends[3] = { ggml_backend_dev_init(d1, NULL), d2 != d1 ? ggml_backend_dev_init(d2, NULL) : NULL,
                                   ggml_backend_cpu_init() };
    ggml_backend_t list[3];
    int n_backends = 0;
    for (int i = 0; i < 3; i++) {
        if (backends[i] != NULL) {
            list[n_backends++] = backends[i];
        }
    }
    struct ggml_init_params wp = { 4 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * wctx1 = ggml_init(wp);
    struct ggml_context * wctx2 = ggml_init(wp);
    struct ggml_tensor * w1 = ggml_new_tensor_2d(wctx1, GGML_TYPE_F32, K, H);
    struct ggml_tensor * w2 = ggml_new_tensor_2d(wctx2, GGML_TYPE_F32, H, O);
    ggml_backend_buffer_t wb1 = ggml_backend_alloc_ctx_tensors_from_buft(wctx1, ggml_backend_dev_buffer_type(d1));
    ggml_backend_buffer_t wb2 = ggml_backend_alloc_ctx_tensors_from_buft(wctx2, ggml_backend_dev_buffer_type(d2));
    float w1v[K * H], w2v[H * O];
    unsigned seed = 99;
    for (int i = 0; i < K * H; i++) w1v[i] = frand(&seed);
    for (int i = 0; i < H * O; i++) w2v[i] = frand(&seed);
    ggml_backend_tensor_set(w1, w1v, 0, sizeof(w1v));
    ggml_backend_tensor_set(w2, w2v, 0, sizeof(w2v));
    ggml_backend_buffer_set_usage(wb1, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    ggml_backend_buffer_set_usage(wb2, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    ggml_backend_sched_t sched = ggml_backend_sched_new(list, NULL, n_backends, 64, true, true);
    for (int round = 0; round < 5; round++) {
        struct ggml_init_params gp = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
        struct ggml_context * ctx = ggml_init(gp);
        struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, K);
        ggml_set_input(x);
        struct ggml_tensor * h = ggml_relu(ctx, ggml_mul_mat(ctx, w1, x));
        struct ggml_tensor * y = ggml_mul_mat(ctx, w2, h);
        ggml_set_output(y);
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, y);
        CHECK(ggml_backend_sched_alloc_graph(sched, gf));
        float xv[K], yv[O];
        for (int i = 0; i < K; i++) xv[i] = frand(&seed);
        ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
        CHECK(ggml_backend_sched_graph_compute_async(sched, gf) == GGML_STATUS_SUCCESS);
        ggml_backend_sched_synchronize(sched);
        ggml_backend_tensor_get(y, yv, 0, sizeof(yv));
        double err = 0;
        for (int o = 0; o < O; o++) {
            double acc = 0;
            for (int j = 0; j < H; j++) {
                double hj = 0;
                for (int k = 0; k < K; k++) {
                    hj += (double) w1v[j * K + k] * xv[k];
                }
                acc += (double) w2v[o * H + j] * (hj > 0 ? hj : 0);
            }
            err = fmax(err, fabs(acc - yv[o]));
        }
        CHECK_MSG(err < 1e-4, "round %d: max error %g", round, err);
        CHECK(ggml_backend_sched_get_tensor_backend(sched, ggml_graph_node(gf, 0)) == list[0]);
        ggml_backend_sched_reset(sched);
        ggml_free(ctx);
    }
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(wb1);
    ggml_backend_buffer_free(wb2);
    ggml_free(wctx1);
    ggml_free(wctx2);
    for (int i = 0; i < n_backends; i++) {
        ggml_backend_free(list[i]);
    }
}

// raw messages to worker `rank`, as a hostile or broken rank 0 could send
static void send_raw(int rank, const void * data, size_t size) {
    MPI_Send(data, (int) size, MPI_BYTE, rank, GGML_MPI_TAG_CMD, MPI_COMM_WORLD);
}

// the worker's answer to a refused command: a failed status
static void recv_failed_status(int rank, const char * what) {
    uint8_t reply[64];
    MPI_Status status;
    MPI_Recv(reply, (int) sizeof(reply), MPI_BYTE, rank, GGML_MPI_TAG_REPLY, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    struct ggml_mpi_reader r = ggml_mpi_reader_of(reply, (size_t) count);
    CHECK_MSG(ggml_mpi_get_u32(&r) == GGML_MPI_REPLY_DONE, "%s: not a DONE answer", what);
    CHECK_MSG((int32_t) ggml_mpi_get_u32(&r) == GGML_STATUS_FAILED, "%s: not refused", what);
    CHECK(ggml_mpi_reader_done(&r));
}

static void test_hostile_messages(int n_ranks) {
    const int rank = n_ranks - 1;
    char name[32];
    snprintf(name, sizeof(name), "MPI%d:CPU", rank);
    ggml_backend_dev_t dev = dev_named(name);
    if (dev == NULL) {
        return;
    }
    enum { N = 64 };
    struct bytes_on b = bytes_on(dev, N);
    if (b.buf == NULL) {
        return;
    }
    uint8_t data[N];
    for (int i = 0; i < N; i++) {
        data[i] = (uint8_t) (200 - i);
    }
    ggml_backend_tensor_set(b.t, data, 0, N);

    const uint8_t garbage[3] = { 1, 2, 3 };
    send_raw(rank, garbage, sizeof(garbage));           // shorter than a command
    struct ggml_mpi_writer w;
    ggml_mpi_writer_init(&w);
    ggml_mpi_put_u32(&w, 9999);                          // an unknown command
    send_raw(rank, w.data, w.size);
    // a set far past the end of buffer 1 and of a buffer that does not exist, each with its data
    for (uint64_t handle = 1; handle <= 1000; handle += 999) {
        ggml_mpi_writer_reset(&w);
        ggml_mpi_put_u32(&w, GGML_MPI_CMD_SET);
        ggml_mpi_put_u64(&w, handle);
        ggml_mpi_put_u64(&w, UINT64_MAX - 3);
        ggml_mpi_put_u64(&w, 8);
        send_raw(rank, w.data, w.size);
        send_raw(rank, garbage, 8 > sizeof(garbage) ? sizeof(garbage) : 8);
    }
    // a memset with an offset that wraps around
    ggml_mpi_writer_reset(&w);
    ggml_mpi_put_u32(&w, GGML_MPI_CMD_MEMSET);
    ggml_mpi_put_u64(&w, 1);
    ggml_mpi_put_u64(&w, 16);
    ggml_mpi_put_u64(&w, UINT64_MAX - 8);
    ggml_mpi_put_u8(&w, 0);
    send_raw(rank, w.data, w.size);
    // a copy to a peer that is rank 0 itself, and to a rank that does not exist
    for (uint32_t peer = 0; peer < 2; peer++) {
        ggml_mpi_writer_reset(&w);
        ggml_mpi_put_u32(&w, GGML_MPI_CMD_PEER_SEND);
        ggml_mpi_put_u64(&w, 1);
        ggml_mpi_put_u64(&w, 0);
        ggml_mpi_put_u64(&w, 8);
        ggml_mpi_put_u32(&w, peer == 0 ? 0u : 12345u);
        send_raw(rank, w.data, w.size);
    }
    // a graph for a backend that does not exist, and one for a buffer it does not have
    ggml_mpi_writer_reset(&w);
    ggml_mpi_put_u32(&w, GGML_MPI_CMD_GRAPH_RECOMPUTE);
    ggml_mpi_put_u64(&w, 77);
    ggml_mpi_put_u64(&w, 1);
    send_raw(rank, w.data, w.size);
    recv_failed_status(rank, "a graph of an unknown backend");
    // communicators of one rank, of ranks without this one, of a rank twice:
    // refused before any collective (which would wait for ever)
    const uint32_t members[3][3] = { { 1, (uint32_t) rank }, { 2, 0, 1 }, { 2, (uint32_t) rank, (uint32_t) rank } };
    for (int m = 0; m < 3; m++) {
        ggml_mpi_writer_reset(&w);
        ggml_mpi_put_u32(&w, GGML_MPI_CMD_COMM_CREATE);
        ggml_mpi_put_u64(&w, 1000 + (uint64_t) m);
        for (uint32_t k = 0; k <= members[m][0]; k++) {
            ggml_mpi_put_u32(&w, members[m][k]);
        }
        send_raw(rank, w.data, w.size);
        recv_failed_status(rank, "a malformed communicator");
    }
    // an allreduce on a communicator it does not have, and freeing one (no answer)
    ggml_mpi_writer_reset(&w);
    ggml_mpi_put_u32(&w, GGML_MPI_CMD_ALLREDUCE);
    ggml_mpi_put_u64(&w, 4242);
    ggml_mpi_put_u64(&w, 1);
    ggml_mpi_put_u64(&w, 0);
    ggml_mpi_put_u32(&w, GGML_TYPE_F32);
    ggml_mpi_put_u64(&w, 4);
    send_raw(rank, w.data, w.size);
    recv_failed_status(rank, "an allreduce on an unknown communicator");
    ggml_mpi_writer_reset(&w);
    ggml_mpi_put_u32(&w, GGML_MPI_CMD_COMM_FREE);
    ggml_mpi_put_u64(&w, 4242);
    send_raw(rank, w.data, w.size);
    ggml_mpi_writer_free(&w);

    // the worker still serves, and the data is as it was
    uint8_t back[N];
    ggml_backend_tensor_get(b.t, back, 0, N);
    CHECK(memcmp(back, data, N) == 0);
    bytes_free(&b);
}

//
// the tiny synthetic model
//

struct logits {
    float * v;
    int64_t n;
};

enum { T_PROMPT = 9, T_STEPS = 2 };

// logits of a prompt (every token) and of T_STEPS more tokens, one at a time
static bool model_logits(const char * devices, const char * split, bool split_tensor, int flash_attn, struct logits * out) {
    struct run_synth_params sp;
    run_synth_preset("tiny", &sp);
    sp.n_threads = 1;
    struct run_weight_source src;
    if (!run_synth_source(&sp, &src)) {
        return false;
    }
    struct run_model_params mp = run_model_default_params();
    mp.devices      = devices;
    mp.tensor_split = split;
    mp.split_tensor = split_tensor;
    struct run_model * model = run_model_from_source(&src, &mp);
    if (model == NULL) {
        return false;
    }
    if (split_tensor) {
        // one meta device over those named
        CHECK(strncmp(ggml_backend_dev_name(run_model_layer_device(model, 0)), "Meta(MPI1:CPU,MPI2:CPU)", 23) == 0);
    } else if (strcmp(devices, "none") != 0) {
        // the first layer is on the first device named
        CHECK(strncmp(ggml_backend_dev_name(run_model_layer_device(model, 0)), devices, strlen("MPI1:CPU")) == 0);
    }
    struct run_context_params cp = run_context_default_params();
    cp.n_ctx      = 32;
    cp.n_threads  = 1;
    cp.flash_attn = flash_attn;
    cp.all_logits = true;
    struct run_context * rc = run_context_new(model, &cp);
    bool ok = rc != NULL;
    const int64_t n_vocab = model->hp.n_vocab;
    out->n = (T_PROMPT + T_STEPS) * n_vocab;
    out->v = (float *) calloc((size_t) out->n, sizeof(float));
    int32_t tokens[T_PROMPT + T_STEPS];
    for (int i = 0; i < T_PROMPT + T_STEPS; i++) {
        tokens[i] = (int32_t) ((i * 37 + 11) % n_vocab);
    }
    ok = ok && out->v != NULL && run_decode(rc, tokens, T_PROMPT);
    for (int i = 0; ok && i < T_PROMPT; i++) {
        memcpy(out->v + i * n_vocab, run_get_logits(rc, i), (size_t) n_vocab * sizeof(float));
    }
    for (int s = 0; ok && s < T_STEPS; s++) {
        ok = run_decode(rc, tokens + T_PROMPT + s, 1);
        if (ok) {
            memcpy(out->v + (T_PROMPT + s) * n_vocab, run_get_logits(rc, 0), (size_t) n_vocab * sizeof(float));
        }
    }
    run_context_free(rc);
    run_model_free(model);
    return ok;
}

static void test_model(int n_ranks) {
    const struct { const char * devices; const char * split; bool tensor; } configs[] = {
        { "MPI1:CPU", NULL, false },
        { "MPI1:CPU,MPI2:CPU", NULL, false },
        { "MPI1:CPU,MPI2:CPU", "1,3", false },
        // every layer split over both workers, the partial sums added by MPI between them
        { "MPI1:CPU,MPI2:CPU", NULL, true },
        { "MPI1:CPU,MPI2:CPU", "1,3", true },
    };
    for (int fa = 0; fa <= 1; fa++) {
        struct logits local = { 0 };
        CHECK(model_logits("none", NULL, false, fa, &local));
        for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
            if (c > 0 && n_ranks < 3) {
                continue;
            }
            struct logits remote = { 0 };
            uint64_t n0 = 0, n1 = 0, bytes = 0;
            ggml_backend_mpi_allreduce_stats(&n0, &bytes);
            const bool ok = model_logits(configs[c].devices, configs[c].split, configs[c].tensor, fa, &remote);
            ggml_backend_mpi_allreduce_stats(&n1, &bytes);
            const char * mode = configs[c].tensor ? "tensor" : "layer";
            CHECK_MSG(ok, "%s -sm %s -ts %s fa %d", configs[c].devices, mode, configs[c].split ? configs[c].split : "-", fa);
            // two partial sums a layer (attention output, feed-forward down) per graph
            CHECK_MSG(configs[c].tensor ? n1 > n0 : n1 == n0, "%s -sm %s: %llu allreduces between the workers", configs[c].devices,
                      mode, (unsigned long long) (n1 - n0));
            if (ok && local.v != NULL) {
                double err = 0, scale = 0;
                for (int64_t i = 0; i < local.n; i++) {
                    err   = fmax(err, fabs((double) remote.v[i] - (double) local.v[i]));
                    scale = fmax(scale, fabs((double) local.v[i]));
                }
                printf("logits on %s (-sm %s -ts %s, %s attention): max |difference| %g (largest logit %g), %llu allreduces\n",
                       configs[c].devices, mode, configs[c].split ? configs[c].split : "-", fa ? "fused" : "unfused", err, scale,
                       (unsigned long long) (n1 - n0));
                // the same kernels on the same host, only split differently: equal up to rounding
                CHECK_MSG(err <= 1e-4 * scale, "max difference %g", err);
            }
            free(remote.v);
        }
        free(local.v);
    }
}

int main(void) {
    ggml_backend_load_all();
    if (ggml_backend_mpi_rank() != 0) {
        // an integrated GPU of the worker's host, in device memory of its own there
        struct test_backend_config igpu = { .name = "TestIGPU", .type = GGML_BACKEND_DEVICE_TYPE_IGPU };
        ggml_backend_register(test_backend_reg_new(&igpu));
        return ggml_backend_mpi_worker(1) == GGML_STATUS_SUCCESS ? 0 : 1;
    }
    int n_ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
    CHECK(n_ranks >= 2);
    if (n_ranks < 2) {
        return TEST_RESULT();
    }
    test_devices(n_ranks);
    test_buffers();
    test_copies(n_ranks);
    test_graphs();
    test_sched_pipeline(n_ranks);
    test_hostile_messages(n_ranks);
    test_model(n_ranks);
    CHECK(!ggml_backend_mpi_failed());
    return TEST_RESULT();
}
