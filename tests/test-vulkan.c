// test-vulkan: the Vulkan backend on the machine's Vulkan device (lavapipe
// where there is no GPU): buffers and their limits, the pinned host buffer
// type, asynchronous copies, events and copies between streams, matrix
// products against a double-precision reference, and the scheduler over
// Vulkan + CPU with pipeline parallelism, SOFT_MAX and FLASH_ATTN_EXT of
// fully masked rows (zeros, on Vulkan and the CPU alike). Exits 77 (skipped) when the
// registry lists no Vulkan device.
//
// The device it tests is the one GGML_VK_VISIBLE_DEVICES names (ctest sets 0):
// its type is IGPU for an integrated GPU, else GPU (lavapipe too), as upstream.
//
// test-vulkan --no-device: run with the driver hidden (VK_ICD_FILENAMES
// naming no driver): the registry lists no Vulkan device, says why once, and
// the CPU computes.
//
// test-vulkan --default-devices: the registry without GGML_VK_VISIBLE_DEVICES
// (unset by the test) lists upstream's default choice, compared with the
// physical devices the test enumerates itself through the Vulkan loader: no
// CPU driver (lavapipe) ever, all GPUs first, the driver's first non-CPU
// device where there is no GPU.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-vulkan.h"
#include "testing.h"

#include <math.h>
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

//
// log capture
//

static pthread_mutex_t g_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static int g_log_no_device = 0;
static int g_log_errors = 0;

static void capture_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    pthread_mutex_lock(&g_log_mutex);
    g_log_no_device += strstr(text, "no Vulkan device") != NULL;
    g_log_errors    += level == GGML_LOG_LEVEL_ERROR;
    pthread_mutex_unlock(&g_log_mutex);
    if (level != GGML_LOG_LEVEL_DEBUG) {
        fputs(text, stderr);
    }
}

static struct ggml_context * new_ctx(size_t n_tensors) {
    struct ggml_init_params p = { n_tensors * ggml_tensor_overhead() + 2 * ggml_graph_overhead(), NULL, true };
    return ggml_init(p);
}

static float frand(unsigned * state) {
    *state = *state * 1664525u + 1013904223u;
    return (float) ((*state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

//
// no driver
//

static int test_no_device(void) {
    CHECK_EQ_INT(ggml_backend_vk_get_device_count(), 0);
    CHECK(ggml_backend_dev_by_name("Vulkan0") == NULL);
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("Vulkan");
    CHECK(reg != NULL && ggml_backend_reg_dev_count(reg) == 0);
    CHECK(ggml_backend_vk_init(0) == NULL);
    CHECK(ggml_backend_vk_host_buffer_type() == NULL);
    CHECK_EQ_INT(g_log_no_device, 1); // said once, however often asked

    ggml_backend_t backend = ggml_backend_init_best();
    CHECK(backend != NULL && ggml_backend_dev_type(ggml_backend_get_device(backend)) == GGML_BACKEND_DEVICE_TYPE_CPU);
    struct ggml_context * ctx = new_ctx(4);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    struct ggml_tensor * b = ggml_scale(ctx, a, 2.0f);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, b);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    const float av[3] = { 1, -2, 3 };
    float bv[3];
    ggml_backend_tensor_set(a, av, 0, sizeof(av));
    CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
    ggml_backend_tensor_get(b, bv, 0, sizeof(bv));
    CHECK(bv[0] == 2 && bv[1] == -4 && bv[2] == 6);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(backend);
    return TEST_RESULT();
}

//
// buffers
//

static void test_buffers(ggml_backend_dev_t dev) {
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(dev);
    CHECK(!ggml_backend_buft_is_host(buft));
    const size_t align = ggml_backend_buft_get_alignment(buft);
    const size_t max_size = ggml_backend_buft_get_max_size(buft);
    CHECK(align >= 16 && (align & (align - 1)) == 0);
    CHECK(max_size >= ((size_t) 1 << 20) && max_size % align == 0);

    // over the limit: refused with a log line, not corrupted
    const int errors = g_log_errors;
    CHECK(ggml_backend_buft_alloc_buffer(buft, max_size + 1) == NULL);
    CHECK(g_log_errors > errors);

    // a tensor at an odd place: partial writes and reads, memset, clear
    struct ggml_context * ctx = new_ctx(4);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 1001);
    struct ggml_tensor * u = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 1001);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    CHECK(buf != NULL && !ggml_backend_buffer_is_host(buf));
    uint8_t src[1001];
    uint8_t got[1001];
    for (int i = 0; i < 1001; i++) {
        src[i] = (uint8_t) (i * 7 + 3);
    }
    ggml_backend_buffer_clear(buf, 0x5a);
    ggml_backend_tensor_get(t, got, 0, sizeof(got));
    CHECK(got[0] == 0x5a && got[1000] == 0x5a);
    ggml_backend_tensor_set(t, src + 13, 13, 977);
    ggml_backend_tensor_memset(t, 0xee, 3, 7);
    ggml_backend_tensor_get(t, got, 0, sizeof(got));
    bool ok = true;
    for (int i = 0; i < 1001; i++) {
        const uint8_t want = i >= 3 && i < 10 ? 0xee : (i >= 13 && i < 990 ? src[i] : 0x5a);
        ok = ok && got[i] == want;
    }
    CHECK_MSG(ok, "partial set/get/memset");
    // device to device, and host to device
    ggml_backend_tensor_copy(t, u);
    uint8_t got2[1001];
    ggml_backend_tensor_get(u, got2, 0, sizeof(got2));
    CHECK(memcmp(got, got2, sizeof(got)) == 0);

    struct ggml_context * hctx = new_ctx(2);
    struct ggml_tensor * h = ggml_new_tensor_1d(hctx, GGML_TYPE_I8, 1001);
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors_from_buft(hctx, ggml_backend_dev_host_buffer_type(dev));
    CHECK(hbuf != NULL && ggml_backend_buffer_is_host(hbuf));
    memcpy(h->data, src, sizeof(src));
    ggml_backend_tensor_copy(h, u);
    ggml_backend_tensor_get(u, got2, 0, sizeof(got2));
    CHECK(memcmp(src, got2, sizeof(src)) == 0);
    ggml_backend_tensor_copy(t, h);
    CHECK(memcmp(h->data, got, sizeof(got)) == 0);

    ggml_backend_buffer_free(hbuf);
    ggml_free(hctx);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

//
// streams: asynchronous copies, events, copies between streams
//

static void test_streams(ggml_backend_dev_t dev) {
    ggml_backend_t s1 = ggml_backend_dev_init(dev, NULL);
    ggml_backend_t s2 = ggml_backend_dev_init(dev, NULL);
    CHECK(s1 != NULL && s2 != NULL && ggml_backend_is_vk(s1));

    enum { N = 300 };
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * y = ggml_scale(ctx, x, 2.0f);            // on s1
    struct ggml_tensor * z = ggml_scale_bias(ctx, y, 1.0f, 1.0f); // on s2, after s1
    struct ggml_tensor * w = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_cgraph * g1 = ggml_new_graph(ctx);
    ggml_build_forward_expand(g1, y);
    struct ggml_cgraph * g2 = ggml_new_graph(ctx);
    ggml_build_forward_expand(g2, z);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, s1);
    CHECK(buf != NULL);

    ggml_backend_event_t ev = ggml_backend_event_new(dev);
    CHECK(ev != NULL);
    float xv[N];
    float zv[N];
    float wv[N];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            xv[i] = (float) (i - 100 + round);
        }
        ggml_backend_tensor_set_async(s1, x, xv, 0, sizeof(xv));
        CHECK(ggml_backend_graph_compute_async(s1, g1) == GGML_STATUS_SUCCESS);
        ggml_backend_event_record(ev, s1);
        ggml_backend_event_wait(s2, ev);
        CHECK(ggml_backend_graph_compute_async(s2, g2) == GGML_STATUS_SUCCESS);
        // z into w on s2's queue, read back asynchronously
        ggml_backend_tensor_copy_async(s2, s2, z, w);
        memset(zv, 0, sizeof(zv));
        ggml_backend_tensor_get_async(s2, w, wv, 0, sizeof(wv));
        ggml_backend_tensor_get_async(s2, z, zv, 0, sizeof(zv));
        ggml_backend_synchronize(s2);
        ggml_backend_event_synchronize(ev);
        bool ok = true;
        for (int i = 0; i < N; i++) {
            ok = ok && zv[i] == 2.0f * xv[i] + 1.0f && wv[i] == zv[i];
        }
        CHECK_MSG(ok, "round %d: z = 2x + 1 through an event, copy and async reads", round);
    }
    // a copy on s2 of what s1 wrote: cpy_tensor_async orders the streams itself
    for (int i = 0; i < N; i++) {
        xv[i] = (float) (3 * i);
    }
    ggml_backend_tensor_set_async(s1, x, xv, 0, sizeof(xv));
    CHECK(ggml_backend_graph_compute_async(s1, g1) == GGML_STATUS_SUCCESS);
    ggml_backend_tensor_copy_async(s1, s2, y, w);
    ggml_backend_synchronize(s2);
    ggml_backend_synchronize(s1);
    ggml_backend_tensor_get(w, wv, 0, sizeof(wv));
    bool ok = true;
    for (int i = 0; i < N; i++) {
        ok = ok && wv[i] == 6.0f * (float) i;
    }
    CHECK_MSG(ok, "copy between streams");

    // asynchronous copies from and to pinned host memory (single copy
    // commands where device memory is not mapped: test-vulkan-staging)
    struct ggml_context * hctx = new_ctx(2);
    struct ggml_tensor * hin  = ggml_new_tensor_1d(hctx, GGML_TYPE_F32, N);
    struct ggml_tensor * hout = ggml_new_tensor_1d(hctx, GGML_TYPE_F32, N);
    ggml_backend_buffer_t hbuf = ggml_backend_alloc_ctx_tensors_from_buft(hctx, ggml_backend_dev_host_buffer_type(dev));
    CHECK(hbuf != NULL && ggml_backend_buffer_is_host(hbuf));
    float * pin_in = (float *) hin->data;
    float * pin_out = (float *) hout->data;
    for (int i = 0; i < N; i++) {
        pin_in[i] = (float) (i % 7) - 3.0f;
    }
    ggml_backend_tensor_set_async(s1, x, pin_in, 0, sizeof(float) * N);
    CHECK(ggml_backend_graph_compute_async(s1, g1) == GGML_STATUS_SUCCESS);
    ggml_backend_tensor_get_async(s1, y, pin_out + 1, sizeof(float), sizeof(float) * (N - 1));
    pin_out[0] = 42.0f;
    ggml_backend_synchronize(s1);
    ok = pin_out[0] == 42.0f;
    for (int i = 1; i < N; i++) {
        ok = ok && pin_out[i] == 2.0f * pin_in[i];
    }
    CHECK_MSG(ok, "asynchronous copies through pinned memory");
    ggml_backend_buffer_free(hbuf);
    ggml_free(hctx);

    ggml_backend_event_free(ev);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(s2);
    ggml_backend_free(s1);
}

//
// matrix products against a double-precision reference
//

// W (type) [K, M, ne02, ne03] times X (F32) [K, N, ne12, ne13]; X read
// through a permuted view when transposed_x
static void check_mul_mat(ggml_backend_t backend, enum ggml_type type, int K, int M, int N, int ne02, int ne03,
                          int ne12, int ne13, bool transposed_x) {
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * w = ggml_new_tensor_4d(ctx, type, K, M, ne02, ne03);
    struct ggml_tensor * x;
    if (transposed_x) {
        struct ggml_tensor * xt = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, N, K, ne12, ne13);
        x = ggml_permute(ctx, xt, 1, 0, 2, 3); // [K, N, ...] with stride nb0 = N floats
    } else {
        x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, K, N, ne12, ne13);
    }
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    CHECK(buf != NULL);

    unsigned seed = (unsigned) (K * 31 + M * 7 + N + type);
    const int64_t nw = ggml_nelements(w);
    float * wf = (float *) malloc((size_t) nw * sizeof(float));
    for (int64_t i = 0; i < nw; i++) {
        wf[i] = frand(&seed);
    }
    // the weights as stored, and back to float by the type's own converter
    const size_t wbytes = ggml_nbytes(w);
    void * wq = malloc(wbytes);
    ggml_quantize_chunk(type, wf, wq, 0, nw / K, K, NULL);
    const struct ggml_type_traits * tr = ggml_get_type_traits(type);
    if (tr->to_float != NULL) {
        tr->to_float(wq, wf, nw);
    }
    ggml_backend_tensor_set(w, wq, 0, wbytes);

    struct ggml_tensor * xs = transposed_x ? x->view_src : x;
    const int64_t nx = ggml_nelements(xs);
    float * xf = (float *) malloc((size_t) nx * sizeof(float));
    for (int64_t i = 0; i < nx; i++) {
        xf[i] = frand(&seed);
    }
    ggml_backend_tensor_set(xs, xf, 0, (size_t) nx * sizeof(float));
    CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
    const int64_t ny = ggml_nelements(y);
    float * yf = (float *) malloc((size_t) ny * sizeof(float));
    ggml_backend_tensor_get(y, yf, 0, (size_t) ny * sizeof(float));

    double worst = 0.0;
    for (int i3 = 0; i3 < ne13; i3++) {
        for (int i2 = 0; i2 < ne12; i2++) {
            for (int n = 0; n < N; n++) {
                for (int m = 0; m < M; m++) {
                    const int w2 = i2 / (ne12 / ne02);
                    const int w3 = i3 / (ne13 / ne03);
                    double ref = 0.0;
                    double mag = 0.0;
                    for (int k = 0; k < K; k++) {
                        const double a = wf[(((int64_t) w3 * ne02 + w2) * M + m) * K + k];
                        const int64_t xi = transposed_x ? (((int64_t) i3 * ne12 + i2) * K + k) * N + n
                                                        : (((int64_t) i3 * ne12 + i2) * N + n) * K + k;
                        ref += a * xf[xi];
                        mag += fabs(a * xf[xi]);
                    }
                    const double got = yf[(((int64_t) i3 * ne12 + i2) * N + n) * M + m];
                    worst = fmax(worst, fabs(got - ref) / (mag + 1e-6));
                }
            }
        }
    }
    CHECK_MSG(worst < 1e-5, "mul_mat %s K=%d M=%d N=%d batch [%d,%d]x[%d,%d]%s: relative error %g", ggml_type_name(type),
              K, M, N, ne02, ne03, ne12, ne13, transposed_x ? " (x transposed)" : "", worst);
    free(wf);
    free(wq);
    free(xf);
    free(yf);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

static void test_mul_mat(ggml_backend_t backend) {
    // matrix-vector (N < 8) and tiled paths, odd sizes, broadcast over dims 2 and 3
    check_mul_mat(backend, GGML_TYPE_F32, 37, 19, 1, 1, 1, 1, 1, false);
    check_mul_mat(backend, GGML_TYPE_F32, 37, 19, 3, 2, 1, 4, 3, true);
    check_mul_mat(backend, GGML_TYPE_F32, 67, 70, 13, 2, 3, 4, 3, false);
    check_mul_mat(backend, GGML_TYPE_F32, 67, 130, 65, 1, 1, 1, 1, true);
    const enum ggml_type types[] = { GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
                                     GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0 };
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        check_mul_mat(backend, types[i], 96, 33, 1, 1, 2, 3, 2, false);
        check_mul_mat(backend, types[i], 160, 67, 9, 2, 1, 2, 1, false);
    }
}

//
// scheduler: Vulkan + CPU, pipeline parallelism
//

// h = sin(W x) + b: W x and + b on the device, sin on the CPU (the device has no SIN)
static void test_sched(ggml_backend_t vk) {
    enum { K = 48, M = 20 };
    ggml_backend_t cpu = ggml_backend_cpu_init();

    struct ggml_context * wctx = new_ctx(4);
    struct ggml_tensor * w = ggml_new_tensor_2d(wctx, GGML_TYPE_F32, K, M);
    struct ggml_tensor * b = ggml_new_tensor_1d(wctx, GGML_TYPE_F32, M);
    ggml_backend_buffer_t wbuf = ggml_backend_alloc_ctx_tensors(wctx, vk);
    float wv[K * M];
    float bv[M];
    unsigned seed = 7;
    for (int i = 0; i < K * M; i++) {
        wv[i] = frand(&seed);
    }
    for (int i = 0; i < M; i++) {
        bv[i] = frand(&seed);
    }
    ggml_backend_tensor_set(w, wv, 0, sizeof(wv));
    ggml_backend_tensor_set(b, bv, 0, sizeof(bv));

    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, K);
    ggml_set_input(x);
    struct ggml_tensor * h = ggml_add(ctx, ggml_sin(ctx, ggml_mul_mat(ctx, w, x)), b);
    struct ggml_tensor * out = ggml_add(ctx, ggml_mul_mat(ctx, w, ggml_scale(ctx, x, 0.5f)), h);
    ggml_set_output(out);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);

    CHECK(!ggml_backend_supports_op(vk, h->src[0])); // the SIN node goes to the CPU
    ggml_backend_t backends[2] = { vk, cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256, true, true);
    CHECK(ggml_backend_sched_get_n_copies(sched) > 1);

    // serial results of each input, then the same inputs with the graphs
    // queued back to back (the input stays on the CPU, the scheduler copies
    // it into one of its n_copies slots; outputs are read on their stream)
    float serial[6][M];
    float inflight[6][M];
    for (int pass = 0; pass < 2; pass++) {
        for (int run = 0; run < 6; run++) {
            ggml_backend_sched_reset(sched);
            ggml_backend_sched_set_tensor_backend(sched, x, cpu);
            CHECK(ggml_backend_sched_alloc_graph(sched, gf));
            float xv[K];
            for (int i = 0; i < K; i++) {
                xv[i] = (float) ((i * 3 + run) % 13) / 6.0f - 1.0f;
            }
            ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
            CHECK(ggml_backend_sched_graph_compute_async(sched, gf) == GGML_STATUS_SUCCESS);
            if (pass == 1) {
                ggml_backend_tensor_get_async(ggml_backend_sched_get_tensor_backend(sched, out), out, inflight[run], 0, sizeof(inflight[run]));
                continue;
            }
            ggml_backend_sched_synchronize(sched);
            ggml_backend_tensor_get(out, serial[run], 0, sizeof(serial[run]));
            double worst = 0.0;
            for (int m = 0; m < M; m++) {
                double wx = 0.0;
                double wxh = 0.0;
                for (int k = 0; k < K; k++) {
                    wx += (double) wv[m * K + k] * xv[k];
                    wxh += (double) wv[m * K + k] * (double) (xv[k] * 0.5f);
                }
                const double ref = wxh + sin(wx) + bv[m];
                worst = fmax(worst, fabs(serial[run][m] - ref) / (1.0 + fabs(ref)));
            }
            CHECK_MSG(worst < 1e-5, "run %d: error %g", run, worst);
        }
    }
    ggml_backend_sched_synchronize(sched);
    for (int run = 0; run < 6; run++) {
        CHECK_MSG(memcmp(inflight[run], serial[run], sizeof(serial[run])) == 0, "run %d in flight differs from the serial run", run);
    }
    CHECK(ggml_backend_sched_get_tensor_backend(sched, out) == vk);
    CHECK(ggml_backend_sched_get_n_splits(sched) >= 2);

    ggml_backend_sched_free(sched);
    ggml_free(ctx);
    ggml_backend_buffer_free(wbuf);
    ggml_free(wctx);
    ggml_backend_free(cpu);
}

// SOFT_MAX and FLASH_ATTN_EXT of rows whose every logit is -inf (a fully
// masked query): zeros on every backend, as the CPU (upstream's CPU gives
// zeros with a sink and in FLASH_ATTN_EXT; its SOFT_MAX without a sink
// computes exp(-inf - -inf) = NaN, where its debug build asserts: no result
// to keep). The other rows against a double-precision softmax.
enum { MR_N = 20, MR_ROWS = 4, MR_HEADS = 2, MR_D = 16, MR_KV = 8 };

static const float k_neg_inf = -1.0f / 0.0f;

// mask value of row r (of MR_ROWS), column c: row 1 all -inf, row 3 every other one
static float masked_at(int r, int c) {
    return r == 1 || (r == 3 && c % 2 == 0) ? k_neg_inf : 0.0f;
}

// the softmax of n logits (each * scale + mask), with an optional sink; zeros if all are -inf
static void ref_softmax(const double * logits, int n, const double * sink, double * out) {
    double mx = -INFINITY;
    for (int i = 0; i < n; i++) {
        mx = fmax(mx, logits[i]);
    }
    if (sink != NULL) {
        mx = fmax(mx, *sink);
    }
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        out[i] = mx == -INFINITY ? 0.0 : exp(logits[i] - mx);
        sum += out[i];
    }
    if (sink != NULL && mx != -INFINITY) {
        sum += exp(*sink - mx);
    }
    for (int i = 0; i < n; i++) {
        out[i] = sum > 0.0 ? out[i] / sum : 0.0;
    }
}

// worst relative error of got against want; infinite for any non-finite value
static double worst_error(const float * got, const double * want, int n) {
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(got[i])) {
            return INFINITY;
        }
        worst = fmax(worst, fabs(got[i] - want[i]) / (1.0 + fabs(want[i])));
    }
    return worst;
}

static void check_soft_max_masked(ggml_backend_t backend, enum ggml_type mask_type, bool with_sinks) {
    const float scale = 0.5f;
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, MR_N, MR_ROWS, MR_HEADS);
    struct ggml_tensor * m = ggml_new_tensor_2d(ctx, mask_type, MR_N, MR_ROWS);
    struct ggml_tensor * sk = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, MR_HEADS);
    struct ggml_tensor * y = ggml_soft_max_ext(ctx, x, m, scale, 0.0f);
    if (with_sinks) {
        ggml_soft_max_add_sinks(y, sk);
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    CHECK(buf != NULL);

    float xv[MR_N * MR_ROWS * MR_HEADS], mv[MR_N * MR_ROWS], skv[MR_HEADS] = { 0.25f, -1.5f };
    ggml_fp16_t mh[MR_N * MR_ROWS];
    unsigned seed = 11;
    for (int i = 0; i < MR_N * MR_ROWS * MR_HEADS; i++) {
        xv[i] = 4.0f * frand(&seed);
    }
    for (int r = 0; r < MR_ROWS; r++) {
        for (int c = 0; c < MR_N; c++) {
            mv[r * MR_N + c] = masked_at(r, c);
        }
    }
    // head 1, row 2: every logit -inf itself, with no mask in the way
    for (int c = 0; c < MR_N; c++) {
        xv[(MR_ROWS + 2) * MR_N + c] = k_neg_inf;
    }
    ggml_fp32_to_fp16_row(mv, mh, MR_N * MR_ROWS);
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    ggml_backend_tensor_set(m, mask_type == GGML_TYPE_F16 ? (const void *) mh : (const void *) mv, 0, ggml_nbytes(m));
    ggml_backend_tensor_set(sk, skv, 0, sizeof(skv));
    CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
    float yv[MR_N * MR_ROWS * MR_HEADS];
    ggml_backend_tensor_get(y, yv, 0, sizeof(yv));

    for (int h = 0; h < MR_HEADS; h++) {
        for (int r = 0; r < MR_ROWS; r++) {
            double logits[MR_N], want[MR_N];
            const double sink = skv[h];
            for (int c = 0; c < MR_N; c++) {
                logits[c] = (double) xv[(h * MR_ROWS + r) * MR_N + c] * scale + masked_at(r, c);
            }
            ref_softmax(logits, MR_N, with_sinks ? &sink : NULL, want);
            const double err = worst_error(yv + (h * MR_ROWS + r) * MR_N, want, MR_N);
            CHECK_MSG(err < 1e-5, "%s SOFT_MAX, %s mask%s, head %d row %d: error %g (first value %g)",
                      ggml_backend_name(backend), ggml_type_name(mask_type), with_sinks ? ", sinks" : "", h, r, err,
                      (double) yv[(h * MR_ROWS + r) * MR_N]);
        }
    }
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

static void check_flash_attn_masked(ggml_backend_t backend, bool with_sinks) {
    const float scale = 0.25f;
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, MR_D, MR_ROWS, MR_HEADS);
    struct ggml_tensor * k = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, MR_D, MR_KV, MR_HEADS);
    struct ggml_tensor * v = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, MR_D, MR_KV, MR_HEADS);
    struct ggml_tensor * m = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, MR_KV, MR_ROWS);
    struct ggml_tensor * sk = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, MR_HEADS);
    struct ggml_tensor * y = ggml_flash_attn_ext(ctx, q, k, v, m, scale, 0.0f, 0.0f);
    if (with_sinks) {
        ggml_flash_attn_ext_add_sinks(y, sk);
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    CHECK(buf != NULL);

    float qv[MR_D * MR_ROWS * MR_HEADS], kv[MR_D * MR_KV * MR_HEADS], vv[MR_D * MR_KV * MR_HEADS];
    float mv[MR_KV * MR_ROWS], skv[MR_HEADS] = { 0.5f, -2.0f };
    ggml_fp16_t kh[MR_D * MR_KV * MR_HEADS], vh[MR_D * MR_KV * MR_HEADS], mh[MR_KV * MR_ROWS];
    unsigned seed = 23;
    for (int i = 0; i < MR_D * MR_ROWS * MR_HEADS; i++) {
        qv[i] = frand(&seed);
    }
    for (int i = 0; i < MR_D * MR_KV * MR_HEADS; i++) {
        kv[i] = ggml_fp16_to_fp32(ggml_fp32_to_fp16(frand(&seed)));
        vv[i] = ggml_fp16_to_fp32(ggml_fp32_to_fp16(frand(&seed)));
    }
    for (int r = 0; r < MR_ROWS; r++) {
        for (int c = 0; c < MR_KV; c++) {
            mv[r * MR_KV + c] = masked_at(r, c);
        }
    }
    ggml_fp32_to_fp16_row(kv, kh, MR_D * MR_KV * MR_HEADS);
    ggml_fp32_to_fp16_row(vv, vh, MR_D * MR_KV * MR_HEADS);
    ggml_fp32_to_fp16_row(mv, mh, MR_KV * MR_ROWS);
    ggml_backend_tensor_set(q, qv, 0, sizeof(qv));
    ggml_backend_tensor_set(k, kh, 0, sizeof(kh));
    ggml_backend_tensor_set(v, vh, 0, sizeof(vh));
    ggml_backend_tensor_set(m, mh, 0, sizeof(mh));
    ggml_backend_tensor_set(sk, skv, 0, sizeof(skv));
    CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
    // the result is [D, heads, rows]
    float yv[MR_D * MR_HEADS * MR_ROWS];
    ggml_backend_tensor_get(y, yv, 0, sizeof(yv));

    for (int h = 0; h < MR_HEADS; h++) {
        for (int r = 0; r < MR_ROWS; r++) {
            double logits[MR_KV], p[MR_KV], want[MR_D];
            const double sink = skv[h];
            for (int j = 0; j < MR_KV; j++) {
                double dot = 0.0;
                for (int d = 0; d < MR_D; d++) {
                    // Q is rounded to F16 for the product on every backend, as upstream
                    dot += (double) ggml_fp16_to_fp32(ggml_fp32_to_fp16(qv[(h * MR_ROWS + r) * MR_D + d])) *
                           kv[(h * MR_KV + j) * MR_D + d];
                }
                logits[j] = dot * scale + masked_at(r, j);
            }
            ref_softmax(logits, MR_KV, with_sinks ? &sink : NULL, p);
            for (int d = 0; d < MR_D; d++) {
                want[d] = 0.0;
                for (int j = 0; j < MR_KV; j++) {
                    want[d] += p[j] * vv[(h * MR_KV + j) * MR_D + d];
                }
            }
            const double err = worst_error(yv + (r * MR_HEADS + h) * MR_D, want, MR_D);
            CHECK_MSG(err < 2e-3, "%s FLASH_ATTN_EXT%s, head %d row %d: error %g (first value %g)", ggml_backend_name(backend),
                      with_sinks ? ", sinks" : "", h, r, err, (double) yv[(r * MR_HEADS + h) * MR_D]);
        }
    }
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

static void test_masked_rows(ggml_backend_t vk) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_t backends[2] = { cpu, vk };
    for (int b = 0; b < 2; b++) {
        for (int sinks = 0; sinks < 2; sinks++) {
            check_soft_max_masked(backends[b], GGML_TYPE_F32, sinks);
            check_soft_max_masked(backends[b], GGML_TYPE_F16, sinks);
            check_flash_attn_masked(backends[b], sinks);
        }
    }
    ggml_backend_free(cpu);
}

//
// the physical devices, as the test sees them through the loader itself
//

struct phys_list {
    VkPhysicalDeviceProperties * props;
    uint32_t                     n;
};

// false when there is no loader or no driver (then there is nothing to compare)
static bool phys_list_get(struct phys_list * out) {
    memset(out, 0, sizeof(*out));
    void * lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        return false;
    }
    // dlsym gives a void *: to a function pointer through memcpy (ISO C)
    void * sym = dlsym(lib, "vkGetInstanceProcAddr");
    PFN_vkGetInstanceProcAddr gipa = NULL;
    if (sym != NULL) {
        memcpy(&gipa, &sym, sizeof(gipa));
    }
    PFN_vkCreateInstance create = gipa != NULL ? (PFN_vkCreateInstance) gipa(VK_NULL_HANDLE, "vkCreateInstance") : NULL;
    VkInstance inst = VK_NULL_HANDLE;
    const VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2 };
    const VkInstanceCreateInfo ci = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
    if (create == NULL || create(&ci, NULL, &inst) != VK_SUCCESS) {
        dlclose(lib);
        return false;
    }
    PFN_vkEnumeratePhysicalDevices enumerate = (PFN_vkEnumeratePhysicalDevices) gipa(inst, "vkEnumeratePhysicalDevices");
    PFN_vkGetPhysicalDeviceProperties get_props = (PFN_vkGetPhysicalDeviceProperties) gipa(inst, "vkGetPhysicalDeviceProperties");
    PFN_vkDestroyInstance destroy = (PFN_vkDestroyInstance) gipa(inst, "vkDestroyInstance");
    uint32_t n = 0;
    if (enumerate(inst, &n, NULL) == VK_SUCCESS && n > 0) {
        VkPhysicalDevice * pd = (VkPhysicalDevice *) calloc(n, sizeof(*pd));
        out->props = (VkPhysicalDeviceProperties *) calloc(n, sizeof(*out->props));
        if (pd != NULL && out->props != NULL && enumerate(inst, &n, pd) == VK_SUCCESS) {
            for (uint32_t i = 0; i < n; i++) {
                get_props(pd[i], &out->props[i]);
            }
            out->n = n;
        }
        free(pd);
    }
    destroy(inst, NULL);
    dlclose(lib);
    return out->n > 0;
}

static bool is_gpu(VkPhysicalDeviceType t) {
    return t == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU || t == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU;
}

// the physical device a registry device stands for, by name (-1: none)
static int phys_by_name(const struct phys_list * pl, const char * name) {
    for (uint32_t i = 0; i < pl->n; i++) {
        if (strcmp(pl->props[i].deviceName, name) == 0) {
            return (int) i;
        }
    }
    return -1;
}

static int test_default_devices(void) {
    struct phys_list pl;
    if (!phys_list_get(&pl)) {
        printf("no Vulkan driver: skipped\n");
        return 77;
    }
    uint32_t n_gpu = 0;
    uint32_t n_other = 0; // neither a GPU nor a CPU driver
    for (uint32_t i = 0; i < pl.n; i++) {
        printf("physical device %u: %s (type %d)\n", i, pl.props[i].deviceName, (int) pl.props[i].deviceType);
        n_gpu   += is_gpu(pl.props[i].deviceType);
        n_other += !is_gpu(pl.props[i].deviceType) && pl.props[i].deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    }
    const int n = ggml_backend_vk_get_device_count();
    printf("the registry lists %d Vulkan devices\n", n);
    // only CPU drivers: nothing listed, and the log says so
    if (n_gpu + n_other == 0) {
        CHECK_EQ_INT(n, 0);
        CHECK_EQ_INT(g_log_no_device, 1);
    }
    // GPUs (those usable, a GPU once) where there are any, else at most one other device
    CHECK(n <= (int) (n_gpu > 0 ? n_gpu : (n_other > 0 ? 1 : 0)));
    for (int i = 0; i < n; i++) {
        char desc[256];
        ggml_backend_vk_get_device_description(i, desc, sizeof(desc));
        const int k = phys_by_name(&pl, desc);
        CHECK_MSG(k >= 0, "Vulkan%d (%s) is no physical device", i, desc);
        if (k >= 0) {
            CHECK_MSG(pl.props[k].deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU, "Vulkan%d is the CPU driver %s", i, desc);
            CHECK_MSG(n_gpu == 0 || is_gpu(pl.props[k].deviceType), "Vulkan%d (%s) is not a GPU", i, desc);
        }
    }
    free(pl.props);
    return TEST_RESULT();
}

// the device tested is what GGML_VK_VISIBLE_DEVICES names first, with upstream's type
static void test_named_device(ggml_backend_dev_t dev) {
    const char * env = getenv("GGML_VK_VISIBLE_DEVICES");
    struct phys_list pl;
    if (env == NULL || !phys_list_get(&pl)) {
        return;
    }
    const long k = strtol(env, NULL, 10);
    CHECK(k >= 0 && k < (long) pl.n);
    if (k >= 0 && k < (long) pl.n) {
        CHECK(strcmp(ggml_backend_dev_description(dev), pl.props[k].deviceName) == 0);
        const enum ggml_backend_dev_type want = pl.props[k].deviceType == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU
            ? GGML_BACKEND_DEVICE_TYPE_IGPU : GGML_BACKEND_DEVICE_TYPE_GPU;
        CHECK_MSG(ggml_backend_dev_type(dev) == want, "Vulkan0 (%s, Vulkan type %d) has type %d, not %d",
                  pl.props[k].deviceName, (int) pl.props[k].deviceType, (int) ggml_backend_dev_type(dev), (int) want);
    }
    free(pl.props);
}

int main(int argc, char ** argv) {
    ggml_log_set(capture_log, NULL);
    if (argc > 1 && strcmp(argv[1], "--no-device") == 0) {
        return test_no_device();
    }
    if (argc > 1 && strcmp(argv[1], "--default-devices") == 0) {
        unsetenv("GGML_VK_VISIBLE_DEVICES"); // before the registry is made
        return test_default_devices();
    }
    if (ggml_backend_vk_get_device_count() == 0) {
        printf("no Vulkan device: skipped\n");
        return 77;
    }
    ggml_backend_dev_t dev = ggml_backend_dev_by_name("Vulkan0");
    CHECK(dev != NULL);
    char desc[256];
    ggml_backend_vk_get_device_description(0, desc, sizeof(desc));
    size_t free_mem = 0;
    size_t total_mem = 0;
    ggml_backend_vk_get_device_memory(0, &free_mem, &total_mem);
    printf("Vulkan0: %s, %zu of %zu MiB free\n", desc, free_mem >> 20, total_mem >> 20);
    CHECK(total_mem > 0 && free_mem <= total_mem);
    test_named_device(dev);

    test_buffers(dev);
    test_streams(dev);
    ggml_backend_t vk = ggml_backend_vk_init(0);
    CHECK(vk != NULL);
    test_mul_mat(vk);
    test_sched(vk);
    test_masked_rows(vk);
    ggml_backend_free(vk);
    return TEST_RESULT();
}
