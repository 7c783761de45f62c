// test-vulkan-quants: the weight types of the K-quant era on the Vulkan
// device (Q2_K .. Q6_K, IQ4_NL, IQ4_XS, MXFP4): GET_ROWS of blocks of random
// bytes (every bit pattern of scales, signs, high bits and codes) against the
// CPU's dequantizer, and MUL_MAT (matrix-vector and tiled paths, broadcast
// batches, a transposed activation view) and MUL_MAT_ID against a
// double-precision reference on the dequantized weights. Exits 77 (skipped)
// when there is no Vulkan device.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-vulkan.h"
#include "testing.h"

#include <stdlib.h>
#include <string.h>

static const enum ggml_type k_types[] = {
    GGML_TYPE_Q4_K, GGML_TYPE_Q6_K, GGML_TYPE_Q5_K, GGML_TYPE_Q2_K,
    GGML_TYPE_Q3_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4,
};

static unsigned next(unsigned * s) {
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

static float frand(unsigned * s) {
    return (float) (next(s) & 0xffff) / 32768.0f - 1.0f;
}

// byte offsets of the F16 fields of a block (-1 ends the list)
static const int * half_fields(enum ggml_type t) {
    static const int q2k[] = { 80, 82, -1 }, q3k[] = { 108, -1 }, q45k[] = { 0, 2, -1 }, q6k[] = { 208, -1 },
                     d0[] = { 0, -1 }, none[] = { -1 };
    switch (t) {
        case GGML_TYPE_Q2_K: return q2k;
        case GGML_TYPE_Q3_K: return q3k;
        case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K: return q45k;
        case GGML_TYPE_Q6_K: return q6k;
        case GGML_TYPE_IQ4_NL: case GGML_TYPE_IQ4_XS: return d0;
        default: return none;
    }
}

static struct ggml_context * new_ctx(size_t n_tensors) {
    struct ggml_init_params ip = { n_tensors * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    return ggml_init(ip);
}

// GET_ROWS of rows of random blocks, in an order with repeats, against the
// CPU's to_float of the same bytes. F16 fields keep a clear top exponent bit
// (finite); a subnormal result may be flushed to zero by the device.
static void check_get_rows(ggml_backend_t backend, enum ggml_type type, int K) {
    const int M = 7, R = 9;
    struct ggml_context * ctx = new_ctx(4);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, type, K, M);
    struct ggml_tensor * rows = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, R);
    struct ggml_tensor * y = ggml_get_rows(ctx, w, rows);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    CHECK(buf != NULL);

    unsigned seed = 1234u + (unsigned) type;
    const size_t bs = ggml_type_size(type);
    const size_t nbytes = ggml_nbytes(w);
    uint8_t * wq = (uint8_t *) malloc(nbytes);
    for (size_t i = 0; i < nbytes; i++) {
        wq[i] = (uint8_t) next(&seed);
    }
    for (size_t b = 0; b < nbytes / bs; b++) {
        for (const int * f = half_fields(type); *f >= 0; f++) {
            wq[b * bs + (size_t) *f + 1] &= 0xbf;
        }
    }
    int32_t idx[9] = { 6, 0, 3, 3, 1, 5, 2, 6, 4 };
    ggml_backend_tensor_set(w, wq, 0, nbytes);
    ggml_backend_tensor_set(rows, idx, 0, sizeof(idx));
    CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
    float * got = (float *) malloc((size_t) (K * R) * sizeof(float));
    float * ref = (float *) malloc((size_t) K * sizeof(float));
    ggml_backend_tensor_get(y, got, 0, (size_t) (K * R) * sizeof(float));

    const struct ggml_type_traits * tr = ggml_get_type_traits(type);
    int bad = 0;
    for (int r = 0; r < R; r++) {
        tr->to_float(wq + (size_t) idx[r] * w->nb[1], ref, K);
        double amax = 0.0;
        for (int k = 0; k < K; k++) {
            amax = fmax(amax, fabs(ref[k]));
        }
        for (int k = 0; k < K; k++) {
            const double d = fabs((double) got[r * K + k] - (double) ref[k]);
            if (!(d <= 1e-6 * amax + 1e-30)) {
                if (bad++ < 3) {
                    printf("get_rows %s: row %d element %d: %.9g, expected %.9g\n", ggml_type_name(type), idx[r], k,
                           (double) got[r * K + k], (double) ref[k]);
                }
            }
        }
    }
    CHECK_MSG(bad == 0, "get_rows %s: %d values differ from the CPU's dequantization", ggml_type_name(type), bad);
    free(wq);
    free(got);
    free(ref);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

// the weights: random floats quantized, then dequantized for the reference
static void *make_weights(enum ggml_type type, int64_t n, int64_t K, unsigned * seed, float * wf) {
    for (int64_t i = 0; i < n; i++) {
        wf[i] = frand(seed);
    }
    void * wq = malloc(ggml_row_size(type, n));
    ggml_quantize_chunk(type, wf, wq, 0, n / K, K, NULL);
    ggml_get_type_traits(type)->to_float(wq, wf, n);
    return wq;
}

// W (type) [K, M, ne02] times X (F32) [K, N, ne12], X through a permuted view when transposed
static void check_mul_mat(ggml_backend_t backend, enum ggml_type type, int K, int M, int N, int ne02, int ne12,
                          bool transposed) {
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * w = ggml_new_tensor_3d(ctx, type, K, M, ne02);
    struct ggml_tensor * xs = transposed ? ggml_new_tensor_3d(ctx, GGML_TYPE_F32, N, K, ne12)
                                         : ggml_new_tensor_3d(ctx, GGML_TYPE_F32, K, N, ne12);
    struct ggml_tensor * x = transposed ? ggml_permute(ctx, xs, 1, 0, 2, 3) : xs;
    struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    CHECK(buf != NULL);

    unsigned seed = (unsigned) (K * 31 + M * 7 + N + (int) type);
    const int64_t nw = ggml_nelements(w);
    float * wf = (float *) malloc((size_t) nw * sizeof(float));
    void * wq = make_weights(type, nw, K, &seed, wf);
    ggml_backend_tensor_set(w, wq, 0, ggml_nbytes(w));
    const int64_t nx = ggml_nelements(xs);
    float * xf = (float *) malloc((size_t) nx * sizeof(float));
    for (int64_t i = 0; i < nx; i++) {
        xf[i] = frand(&seed);
    }
    ggml_backend_tensor_set(xs, xf, 0, (size_t) nx * sizeof(float));
    CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
    float * yf = (float *) malloc((size_t) ggml_nelements(y) * sizeof(float));
    ggml_backend_tensor_get(y, yf, 0, ggml_nbytes(y));

    double worst = 0.0;
    for (int i2 = 0; i2 < ne12; i2++) {
        const int w2 = i2 / (ne12 / ne02);
        for (int n = 0; n < N; n++) {
            for (int m = 0; m < M; m++) {
                double ref = 0.0, mag = 0.0;
                for (int k = 0; k < K; k++) {
                    const double a = wf[((int64_t) w2 * M + m) * K + k];
                    const double b = transposed ? xf[((int64_t) i2 * K + k) * N + n] : xf[((int64_t) i2 * N + n) * K + k];
                    ref += a * b;
                    mag += fabs(a * b);
                }
                worst = fmax(worst, fabs(yf[((int64_t) i2 * N + n) * M + m] - ref) / (mag + 1e-6));
            }
        }
    }
    CHECK_MSG(worst < 1e-5, "mul_mat %s K=%d M=%d N=%d batch %d/%d%s: relative error %g", ggml_type_name(type), K, M,
              N, ne02, ne12, transposed ? " (x transposed)" : "", worst);
    free(wf);
    free(wq);
    free(xf);
    free(yf);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

// MUL_MAT_ID: E experts [K, M, E], U used per token of T, one activation column per token
static void check_mul_mat_id(ggml_backend_t backend, enum ggml_type type) {
    const int K = 256, M = 19, E = 4, U = 2, T = 3;
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * as = ggml_new_tensor_3d(ctx, type, K, M, E);
    struct ggml_tensor * b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, K, 1, T);
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, U, T);
    struct ggml_tensor * y = ggml_mul_mat_id(ctx, as, b, ids);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    CHECK(buf != NULL);

    unsigned seed = 77u + (unsigned) type;
    float * wf = (float *) malloc((size_t) (K * M * E) * sizeof(float));
    void * wq = make_weights(type, (int64_t) K * M * E, K, &seed, wf);
    ggml_backend_tensor_set(as, wq, 0, ggml_nbytes(as));
    float xf[256 * 3];
    for (int i = 0; i < K * T; i++) {
        xf[i] = frand(&seed);
    }
    ggml_backend_tensor_set(b, xf, 0, sizeof(xf));
    const int32_t id[2 * 3] = { 3, 0, 1, 1, 2, 3 };
    ggml_backend_tensor_set(ids, id, 0, sizeof(id));
    CHECK(ggml_backend_graph_compute(backend, gf) == GGML_STATUS_SUCCESS);
    float yf[19 * 2 * 3];
    ggml_backend_tensor_get(y, yf, 0, sizeof(yf));

    double worst = 0.0;
    for (int t = 0; t < T; t++) {
        for (int u = 0; u < U; u++) {
            for (int m = 0; m < M; m++) {
                double ref = 0.0, mag = 0.0;
                for (int k = 0; k < K; k++) {
                    const double p = (double) wf[((int64_t) id[t * U + u] * M + m) * K + k] * xf[t * K + k];
                    ref += p;
                    mag += fabs(p);
                }
                worst = fmax(worst, fabs(yf[(t * U + u) * M + m] - ref) / (mag + 1e-6));
            }
        }
    }
    CHECK_MSG(worst < 1e-5, "mul_mat_id %s: relative error %g", ggml_type_name(type), worst);
    free(wf);
    free(wq);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

int main(void) {
    if (ggml_backend_vk_get_device_count() == 0) {
        printf("no Vulkan device: skipped\n");
        return 77;
    }
    ggml_backend_t vk = ggml_backend_vk_init(0);
    CHECK(vk != NULL);
    if (vk == NULL) {
        return TEST_RESULT();
    }
    for (size_t i = 0; i < sizeof(k_types) / sizeof(k_types[0]); i++) {
        const enum ggml_type t = k_types[i];
        check_get_rows(vk, t, 512);
        if (ggml_blck_size(t) == 32) {
            // rows of three blocks: 51 bytes for MXFP4 (odd row starts), 54 for IQ4_NL
            check_get_rows(vk, t, 96);
            check_mul_mat(vk, t, 96, 21, 2, 1, 3, false);
            check_mul_mat(vk, t, 96, 21, 9, 1, 1, true);
        }
        check_mul_mat(vk, t, 256, 33, 1, 1, 1, false);     // matrix-vector
        check_mul_mat(vk, t, 512, 19, 3, 2, 4, true);      // matrix-vector, broadcast, transposed x
        check_mul_mat(vk, t, 768, 70, 13, 1, 2, false);    // tiled, partial tiles
        check_mul_mat(vk, t, 256, 130, 65, 1, 1, true);    // tiled, several tiles, transposed x
        check_mul_mat_id(vk, t);
        printf("%-7s GET_ROWS, MUL_MAT, MUL_MAT_ID: done\n", ggml_type_name(t));
    }
    ggml_backend_free(vk);
    return TEST_RESULT();
}
