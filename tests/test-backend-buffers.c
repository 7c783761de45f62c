// test-backend-buffers: buffer types, buffers, tensor access and copies,
// events, multi-buffers, context allocation, graph copies.
//
// The "device" side is the test backend with non-host memory: its tensors'
// data pointers point to an inaccessible range, so every value read back
// has gone through get/set. The "CPU" side is ggml_backend_cpu_buffer_type().
// Expected values are computed here, with plain loops over host arrays.

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "graph-helpers.h"
#include "test-backend.h"
#include "testing.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

//
// helpers
//

// Under AddressSanitizer an impossible allocation must fail with NULL, as it
// does without, instead of ending the program.
const char * __asan_default_options(void);
const char * __asan_default_options(void) {
    return "allocator_may_return_null=1";
}

// log lines at error level since the last reset
static int g_error_lines = 0;

static void count_errors(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    if (level == GGML_LOG_LEVEL_ERROR) {
        g_error_lines++;
    }
    if (level != GGML_LOG_LEVEL_DEBUG) {
        fputs(text, stderr);
    }
}

// Run fn(arg) in a child process: true if the child did not come back from
// fn (it aborted, crashed, or a sanitizer ended it).
static bool dies(void (*fn)(void *), void * arg) {
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        const int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDERR_FILENO);
        }
        fn(arg);
        _exit(0);
    }
    if (pid < 0) {
        return false;
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static struct ggml_context * new_ctx(size_t n_tensors) {
    struct ggml_init_params params = {
        .mem_size   = n_tensors * ggml_tensor_overhead() + ggml_graph_overhead_custom(256, false) + 1024,
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    return ggml_init(params);
}

static ggml_backend_reg_t new_test_reg(const char * name, bool host_memory) {
    struct test_backend_config config = {
        .name        = name,
        .type        = GGML_BACKEND_DEVICE_TYPE_GPU,
        .host_memory = host_memory,
    };
    return test_backend_reg_new(&config);
}

static struct test_backend_counters counters_of(ggml_backend_reg_t reg) {
    struct test_backend_counters c;
    test_backend_get_counters(test_backend_device(reg), &c);
    return c;
}

static void fill_pattern(uint8_t * p, size_t n, unsigned seed) {
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (uint8_t)(x >> 24);
    }
}

static void fill_floats(float * p, size_t n, unsigned seed) {
    uint32_t x = seed * 2654435761u + 7;
    for (size_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        p[i] = (float)((int)(x >> 20) % 200 - 100) / 16.0f;
    }
}

//
// host buffer types
//

static void test_host_buffer_types(void) {
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_buffer_type();
    CHECK(strcmp(ggml_backend_buft_name(buft), "CPU") == 0);
    CHECK(ggml_backend_buft_is_host(buft));
    CHECK_EQ_INT(ggml_backend_buft_get_alignment(buft), 32);
    CHECK(ggml_backend_buft_get_max_size(buft) == SIZE_MAX);
    CHECK(ggml_backend_buft_get_device(buft) == NULL);

    struct ggml_context * ctx = new_ctx(4);
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 7, 3);
    CHECK_EQ_INT(ggml_backend_buft_get_alloc_size(buft, t), 84);

    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(buft, 1000);
    CHECK(buf != NULL);
    CHECK_EQ_INT(ggml_backend_buffer_get_size(buf), 1000);
    CHECK(strcmp(ggml_backend_buffer_name(buf), "CPU") == 0);
    CHECK(ggml_backend_buffer_is_host(buf));
    CHECK(ggml_backend_buffer_get_type(buf) == buft);
    CHECK(((uintptr_t) ggml_backend_buffer_get_base(buf)) % 32 == 0);
    CHECK(ggml_backend_buffer_get_usage(buf) == GGML_BACKEND_BUFFER_USAGE_ANY);
    ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    CHECK(ggml_backend_buffer_get_usage(buf) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    CHECK(!ggml_backend_buffer_is_multi_buffer(buf));

    ggml_backend_buffer_clear(buf, 0xAB);
    const uint8_t * bytes = (const uint8_t *) ggml_backend_buffer_get_base(buf);
    bool all_ab = true;
    for (int i = 0; i < 1000; i++) {
        all_ab = all_ab && bytes[i] == 0xAB;
    }
    CHECK(all_ab);

    // a host tensor's data is its memory
    CHECK(ggml_backend_tensor_alloc(buf, t, (char *) ggml_backend_buffer_get_base(buf) + 64) == GGML_STATUS_SUCCESS);
    float values[21];
    fill_floats(values, 21, 1);
    ggml_backend_tensor_set(t, values, 0, sizeof(values));
    CHECK(memcmp(t->data, values, sizeof(values)) == 0);
    ggml_backend_tensor_memset(t, 0, 8, 12);
    const uint8_t * tb = (const uint8_t *) t->data;
    CHECK(tb[7] == ((const uint8_t *) values)[7] && tb[8] == 0 && tb[19] == 0 && tb[20] == ((const uint8_t *) values)[20]);
    ggml_backend_buffer_free(buf);

    // a zero-sized request gives an empty buffer with no memory
    ggml_backend_buffer_t empty = ggml_backend_buft_alloc_buffer(buft, 0);
    CHECK(empty != NULL);
    CHECK_EQ_INT(ggml_backend_buffer_get_size(empty), 0);
    CHECK(ggml_backend_buffer_get_base(empty) == NULL);
    ggml_backend_buffer_clear(empty, 0);
    ggml_backend_buffer_free(empty);

    // over caller memory: not owned, not freed
    void * mem = NULL;
    CHECK(posix_memalign(&mem, 64, 256) == 0);
    ggml_backend_buffer_t mapped = ggml_backend_cpu_buffer_from_ptr(mem, 256);
    CHECK(strcmp(ggml_backend_buffer_name(mapped), "CPU_Mapped") == 0);
    CHECK(ggml_backend_buffer_is_host(mapped));
    CHECK(ggml_backend_buffer_get_base(mapped) == mem);
    ggml_backend_buffer_clear(mapped, 0x5A);
    CHECK(((uint8_t *) mem)[255] == 0x5A);
    ggml_backend_buffer_free(mapped);
    ((uint8_t *) mem)[0] = 1; // still ours
    free(mem);

    // an allocation the system cannot satisfy: NULL and a log line, no crash
    g_error_lines = 0;
    ggml_backend_buffer_t huge = ggml_backend_buft_alloc_buffer(buft, SIZE_MAX / 2);
    CHECK(huge == NULL);
    CHECK(g_error_lines >= 1);

    ggml_free(ctx);
}

static void test_failing_buffer_type(void) {
    struct test_backend_config config = { .name = "Failing", .fail_alloc = true };
    ggml_backend_reg_t reg = test_backend_reg_new(&config);
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(test_backend_device(reg));
    g_error_lines = 0;
    CHECK(ggml_backend_buft_alloc_buffer(buft, 4096) == NULL);
    CHECK_EQ_INT(g_error_lines, 1);
    // an empty request never reaches the buffer type
    ggml_backend_buffer_t empty = ggml_backend_buft_alloc_buffer(buft, 0);
    CHECK(empty != NULL);
    ggml_backend_buffer_free(empty);
    test_backend_reg_free(reg);
}

//
// tensor access on device memory
//

struct access_case {
    struct ggml_tensor * t;
    size_t offset;
    size_t size;
};

static void do_set(void * arg) {
    struct access_case * c = (struct access_case *) arg;
    uint8_t data[4096] = { 0 };
    ggml_backend_tensor_set(c->t, data, c->offset, c->size);
}

static void do_get(void * arg) {
    struct access_case * c = (struct access_case *) arg;
    uint8_t data[4096];
    ggml_backend_tensor_get(c->t, data, c->offset, c->size);
}

static void do_memset(void * arg) {
    struct access_case * c = (struct access_case *) arg;
    ggml_backend_tensor_memset(c->t, 0, c->offset, c->size);
}

static void do_set_2d(void * arg) {
    struct access_case * c = (struct access_case *) arg;
    uint8_t data[4096] = { 0 };
    // 3 blocks of c->size bytes, c->offset bytes apart in the tensor
    ggml_backend_tensor_set_2d(c->t, data, 0, c->size, 3, c->offset, c->size);
}

static void do_deref(void * arg) {
    struct access_case * c = (struct access_case *) arg;
    volatile float x = *(volatile float *) c->t->data;
    (void) x;
}

static void test_device_tensor_access(void) {
    ggml_backend_reg_t reg = new_test_reg("Dev", false);
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(test_backend_device(reg));
    CHECK(!ggml_backend_buft_is_host(buft));

    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 7);  // 924 bytes
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 257);     // 257 bytes
    struct ggml_tensor * unallocated = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);

    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(buft, 2048);
    CHECK(buf != NULL);
    struct ggml_tallocr talloc = ggml_tallocr_new(buf);
    CHECK(ggml_tallocr_alloc(&talloc, a) == GGML_STATUS_SUCCESS);
    CHECK(ggml_tallocr_alloc(&talloc, b) == GGML_STATUS_SUCCESS);
    CHECK(a->buffer == buf && b->buffer == buf);
    // packed one after the other, each at a multiple of the alignment
    CHECK((char *) a->data == (char *) ggml_backend_buffer_get_base(buf));
    CHECK((char *) b->data == (char *) a->data + 928);
    CHECK_EQ_INT(talloc.offset, 928 + 288);

    uint8_t pattern[924];
    uint8_t back[924];
    fill_pattern(pattern, sizeof(pattern), 3);
    ggml_backend_tensor_set(a, pattern, 0, sizeof(pattern));
    memset(back, 0, sizeof(back));
    ggml_backend_tensor_get(a, back, 0, sizeof(back));
    CHECK(memcmp(back, pattern, sizeof(back)) == 0);

    // partial access at an offset
    uint8_t part[100];
    ggml_backend_tensor_get(a, part, 300, 100);
    CHECK(memcmp(part, pattern + 300, 100) == 0);
    const uint8_t ones[17] = { 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    ggml_backend_tensor_set(a, ones, 907, 17); // the very end
    ggml_backend_tensor_get(a, back, 0, sizeof(back));
    memcpy(pattern + 907, ones, 17);
    CHECK(memcmp(back, pattern, sizeof(back)) == 0);

    // memset of a range leaves the rest
    ggml_backend_tensor_memset(a, 0x7F, 10, 20);
    ggml_backend_tensor_get(a, back, 0, sizeof(back));
    memset(pattern + 10, 0x7F, 20);
    CHECK(memcmp(back, pattern, sizeof(back)) == 0);

    // b is untouched by a's writes
    uint8_t bpat[257];
    uint8_t bback[257];
    fill_pattern(bpat, sizeof(bpat), 4);
    ggml_backend_tensor_set(b, bpat, 0, sizeof(bpat));
    ggml_backend_tensor_get(a, back, 0, sizeof(back));
    CHECK(memcmp(back, pattern, sizeof(back)) == 0);
    ggml_backend_tensor_get(b, bback, 0, sizeof(bback));
    CHECK(memcmp(bback, bpat, sizeof(bback)) == 0);

    // ggml_set_zero on a tensor in a buffer goes through the buffer
    ggml_set_zero(b);
    ggml_backend_tensor_get(b, bback, 0, sizeof(bback));
    bool zero = true;
    for (size_t i = 0; i < sizeof(bback); i++) {
        zero = zero && bback[i] == 0;
    }
    CHECK(zero);

    struct test_backend_counters c = counters_of(reg);
    CHECK(c.n_memset >= 2);
    CHECK(c.n_set >= 3);

    // zero-sized access does nothing, even at the end
    ggml_backend_tensor_set(a, pattern, 924, 0);
    ggml_backend_tensor_get(a, back, 924, 0);

    // out of bounds and unallocated tensors abort
    struct access_case over      = { .t = a, .offset = 900, .size = 25 };
    struct access_case far       = { .t = a, .offset = 925, .size = 1 };
    struct access_case wrap      = { .t = a, .offset = SIZE_MAX - 3, .size = 8 };
    struct access_case none      = { .t = unallocated, .offset = 0, .size = 4 };
    struct access_case fits      = { .t = a, .offset = 0, .size = 924 };
    struct access_case over_2d   = { .t = a, .offset = 400, .size = 200 }; // blocks end at 1000 > 924
    struct access_case inside_2d = { .t = a, .offset = 300, .size = 200 }; // blocks end at 800
    CHECK(dies(do_set, &over));
    CHECK(dies(do_get, &over));
    CHECK(dies(do_memset, &over));
    CHECK(dies(do_set, &far));
    CHECK(dies(do_get, &wrap));
    CHECK(dies(do_set, &none));
    CHECK(dies(do_get, &none));
    CHECK(dies(do_memset, &none));
    CHECK(dies(do_set_2d, &over_2d));
    CHECK(!dies(do_set, &fits));
    CHECK(!dies(do_get, &fits));
    CHECK(!dies(do_set_2d, &inside_2d));
    // the data pointer of device memory points to nothing
    CHECK(dies(do_deref, &fits));

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    test_backend_reg_free(reg);
}

//
// 2-D access against a copy loop
//

// the bytes a 2-D write leaves in a tensor of n bytes, by a plain loop
static void reference_set_2d(uint8_t * tensor_bytes, const uint8_t * data, size_t offset, size_t size,
                             size_t n_copies, size_t stride_tensor, size_t stride_data) {
    for (size_t i = 0; i < n_copies; i++) {
        for (size_t k = 0; k < size; k++) {
            tensor_bytes[offset + i*stride_tensor + k] = data[i*stride_data + k];
        }
    }
}

static void check_2d(struct ggml_tensor * t, ggml_backend_t backend, const char * what) {
    const size_t n = ggml_nbytes(t);
    uint8_t * expected = (uint8_t *) malloc(n);
    uint8_t * actual   = (uint8_t *) malloc(n);
    uint8_t data[4096];
    fill_pattern(data, sizeof(data), 11);

    // geometry: odd block sizes, strides on both sides, several offsets
    const size_t cases[][5] = {
        // offset, size, n_copies, stride_tensor, stride_data
        {  0, 52, 7, 52, 52 }, // whole rows, packed
        {  8, 12, 5, 28, 16 },
        {  3,  1, 9, 33, 2 },
        { 40, 20, 1, 0, 0 },
        {  0,  0, 4, 10, 10 },  // empty blocks
        {  5,  7, 0, 13, 7 },   // no blocks
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const size_t offset = cases[c][0], size = cases[c][1], n_copies = cases[c][2];
        const size_t stride_tensor = cases[c][3], stride_data = cases[c][4];

        uint8_t initial[512];
        fill_pattern(initial, n, (unsigned) c + 20);
        ggml_backend_tensor_set(t, initial, 0, n);
        memcpy(expected, initial, n);
        reference_set_2d(expected, data, offset, size, n_copies, stride_tensor, stride_data);

        if (backend != NULL) {
            ggml_backend_tensor_set_2d_async(backend, t, data, offset, size, n_copies, stride_tensor, stride_data);
            ggml_backend_synchronize(backend);
        } else {
            ggml_backend_tensor_set_2d(t, data, offset, size, n_copies, stride_tensor, stride_data);
        }
        ggml_backend_tensor_get(t, actual, 0, n);
        CHECK_MSG(memcmp(actual, expected, n) == 0, "%s: set_2d case %zu", what, c);

        // read back the same blocks
        uint8_t got[4096];
        uint8_t want[4096];
        memset(got, 0xEE, sizeof(got));
        memset(want, 0xEE, sizeof(want));
        for (size_t i = 0; i < n_copies; i++) {
            memcpy(want + i*stride_data, expected + offset + i*stride_tensor, size);
        }
        if (backend != NULL) {
            ggml_backend_tensor_get_2d_async(backend, t, got, offset, size, n_copies, stride_tensor, stride_data);
            ggml_backend_synchronize(backend);
        } else {
            ggml_backend_tensor_get_2d(t, got, offset, size, n_copies, stride_tensor, stride_data);
        }
        CHECK_MSG(memcmp(got, want, sizeof(got)) == 0, "%s: get_2d case %zu", what, c);
    }
    free(expected);
    free(actual);
}

static void test_2d_access(void) {
    for (int mode = 0; mode < 4; mode++) {
        // 0: no 2-D entry points, 1: buffer 2-D, 2: async backend, 3: CPU buffer
        struct test_backend_config config = {
            .name      = "Dev2D",
            .buffer_2d = mode == 1,
            .async     = mode == 2,
        };
        ggml_backend_reg_t reg = test_backend_reg_new(&config);
        ggml_backend_buffer_type_t buft = mode == 3 ? ggml_backend_cpu_buffer_type() : ggml_backend_dev_buffer_type(test_backend_device(reg));
        ggml_backend_t backend = mode == 2 ? ggml_backend_dev_init(test_backend_device(reg), NULL) : NULL;

        struct ggml_context * ctx = new_ctx(2);
        struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 13, 7); // rows of 52 bytes
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
        CHECK(buf != NULL);

        test_backend_reset_counters(test_backend_device(reg));
        static const char * names[] = { "loop fallback", "buffer 2-D", "async 2-D", "CPU buffer" };
        check_2d(t, backend, names[mode]);

        const struct test_backend_counters c = counters_of(reg);
        if (mode == 0) {
            CHECK(c.n_set_2d == 0 && c.n_get_2d == 0);
            CHECK(c.n_set >= 7 + 5 + 9);
        } else if (mode == 1) {
            CHECK(c.n_set_2d >= 3 && c.n_get_2d >= 3);
        } else if (mode == 2) {
            CHECK(c.n_set_async >= 7 && c.n_get_async >= 7);
        }

        ggml_backend_buffer_free(buf);
        ggml_backend_free(backend);
        ggml_free(ctx);
        test_backend_reg_free(reg);
    }
}

//
// copies
//

static void test_copies(void) {
    struct test_backend_config dev_config   = { .name = "DevA", .async = true };
    struct test_backend_config other_config = { .name = "DevB" };
    struct test_backend_config plain_config = { .name = "DevC", .no_buffer_cpy = true };
    ggml_backend_reg_t reg_a = test_backend_reg_new(&dev_config);
    ggml_backend_reg_t reg_b = test_backend_reg_new(&other_config);
    ggml_backend_reg_t reg_c = test_backend_reg_new(&plain_config);

    struct ggml_context * ctx_cpu = new_ctx(4);
    struct ggml_context * ctx_a   = new_ctx(4);
    struct ggml_context * ctx_b   = new_ctx(4);
    struct ggml_context * ctx_c   = new_ctx(4);
    struct ggml_tensor * h  = ggml_new_tensor_2d(ctx_cpu, GGML_TYPE_F32, 17, 9);
    struct ggml_tensor * h2 = ggml_new_tensor_2d(ctx_cpu, GGML_TYPE_F32, 17, 9);
    struct ggml_tensor * a  = ggml_new_tensor_2d(ctx_a,   GGML_TYPE_F32, 17, 9);
    struct ggml_tensor * a2 = ggml_new_tensor_2d(ctx_a,   GGML_TYPE_F32, 17, 9);
    struct ggml_tensor * b  = ggml_new_tensor_2d(ctx_b,   GGML_TYPE_F32, 17, 9);
    struct ggml_tensor * c  = ggml_new_tensor_2d(ctx_c,   GGML_TYPE_F32, 17, 9);
    ggml_backend_buffer_t buf_cpu = ggml_backend_alloc_ctx_tensors_from_buft(ctx_cpu, ggml_backend_cpu_buffer_type());
    ggml_backend_buffer_t buf_a   = ggml_backend_alloc_ctx_tensors_from_buft(ctx_a, ggml_backend_dev_buffer_type(test_backend_device(reg_a)));
    ggml_backend_buffer_t buf_b   = ggml_backend_alloc_ctx_tensors_from_buft(ctx_b, ggml_backend_dev_buffer_type(test_backend_device(reg_b)));
    ggml_backend_buffer_t buf_c   = ggml_backend_alloc_ctx_tensors_from_buft(ctx_c, ggml_backend_dev_buffer_type(test_backend_device(reg_c)));
    CHECK(buf_cpu && buf_a && buf_b && buf_c);

    float src[17*9];
    float got[17*9];
    fill_floats(src, 17*9, 5);
    const size_t n = sizeof(src);
    memcpy(h->data, src, n);

    // CPU -> device: a set on the destination
    test_backend_reset_counters(test_backend_device(reg_a));
    ggml_backend_tensor_copy(h, a);
    CHECK_EQ_INT(counters_of(reg_a).bytes_set, n);
    ggml_backend_tensor_get(a, got, 0, n);
    CHECK(memcmp(got, src, n) == 0);

    // device -> device of another backend: the destination buffer copies
    test_backend_reset_counters(test_backend_device(reg_b));
    ggml_backend_tensor_copy(a, b);
    CHECK_EQ_INT(counters_of(reg_b).n_cpy_tensor, 1);
    memset(got, 0, n);
    ggml_backend_tensor_get(b, got, 0, n);
    CHECK(memcmp(got, src, n) == 0);

    // device -> device whose buffer cannot copy: staged through the host
    test_backend_reset_counters(test_backend_device(reg_b));
    test_backend_reset_counters(test_backend_device(reg_c));
    ggml_backend_tensor_copy(b, c);
    CHECK_EQ_INT(counters_of(reg_b).bytes_get, n);
    CHECK_EQ_INT(counters_of(reg_c).bytes_set, n);
    memset(got, 0, n);
    ggml_backend_tensor_get(c, got, 0, n);
    CHECK(memcmp(got, src, n) == 0);

    // device -> CPU: a get from the source
    ggml_backend_tensor_copy(c, h2);
    CHECK(memcmp(h2->data, src, n) == 0);

    // within one device
    ggml_backend_tensor_copy(a, a2);
    memset(got, 0, n);
    ggml_backend_tensor_get(a2, got, 0, n);
    CHECK(memcmp(got, src, n) == 0);

    // async copies: a backend with cpy_tensor_async does it itself...
    ggml_backend_t be_a = ggml_backend_dev_init(test_backend_device(reg_a), NULL);
    ggml_backend_t be_b = ggml_backend_dev_init(test_backend_device(reg_b), NULL);
    float src2[17*9];
    fill_floats(src2, 17*9, 6);
    ggml_backend_tensor_set(b, src2, 0, n);
    test_backend_reset_counters(test_backend_device(reg_a));
    ggml_backend_tensor_copy_async(be_b, be_a, b, a);
    ggml_backend_synchronize(be_a);
    CHECK_EQ_INT(counters_of(reg_a).n_cpy_async, 1);
    ggml_backend_tensor_get(a, got, 0, n);
    CHECK(memcmp(got, src2, n) == 0);
    // ...one without synchronizes both streams and copies
    test_backend_reset_counters(test_backend_device(reg_a));
    test_backend_reset_counters(test_backend_device(reg_b));
    ggml_backend_tensor_copy_async(be_a, be_b, h, b);
    CHECK(counters_of(reg_a).n_synchronize >= 1);
    CHECK(counters_of(reg_b).n_synchronize >= 1);
    ggml_backend_tensor_get(b, got, 0, n);
    CHECK(memcmp(got, src, n) == 0);

    // async set/get: through the backend when it has them, else synchronous
    test_backend_reset_counters(test_backend_device(reg_a));
    ggml_backend_tensor_set_async(be_a, a, src2, 0, n);
    ggml_backend_tensor_get_async(be_a, a, got, 0, n);
    ggml_backend_synchronize(be_a);
    CHECK_EQ_INT(counters_of(reg_a).n_set_async, 1);
    CHECK_EQ_INT(counters_of(reg_a).n_get_async, 1);
    CHECK(memcmp(got, src2, n) == 0);
    test_backend_reset_counters(test_backend_device(reg_b));
    ggml_backend_tensor_set_async(be_b, b, src2, 0, n);
    memset(got, 0, n);
    ggml_backend_tensor_get_async(be_b, b, got, 0, n);
    CHECK_EQ_INT(counters_of(reg_b).n_set_async, 0);
    CHECK_EQ_INT(counters_of(reg_b).n_set, 1);
    CHECK(counters_of(reg_b).n_synchronize >= 2);
    CHECK(memcmp(got, src2, n) == 0);

    ggml_backend_free(be_a);
    ggml_backend_free(be_b);
    ggml_backend_buffer_free(buf_cpu);
    ggml_backend_buffer_free(buf_a);
    ggml_backend_buffer_free(buf_b);
    ggml_backend_buffer_free(buf_c);
    ggml_free(ctx_cpu);
    ggml_free(ctx_a);
    ggml_free(ctx_b);
    ggml_free(ctx_c);
    test_backend_reg_free(reg_a);
    test_backend_reg_free(reg_b);
    test_backend_reg_free(reg_c);
}

//
// events
//

static void test_events(void) {
    struct test_backend_config with_events = { .name = "Ev", .events = true };
    ggml_backend_reg_t reg = test_backend_reg_new(&with_events);
    ggml_backend_reg_t reg_none = new_test_reg("NoEv", false);
    ggml_backend_dev_t dev = test_backend_device(reg);

    struct ggml_backend_dev_props props;
    ggml_backend_dev_get_props(dev, &props);
    CHECK(props.caps.events);
    CHECK(strcmp(props.name, "Ev") == 0);
    CHECK(props.device_id == NULL); // left alone by the device: zeroed by the wrapper
    ggml_backend_dev_get_props(test_backend_device(reg_none), &props);
    CHECK(!props.caps.events);

    CHECK(ggml_backend_event_new(test_backend_device(reg_none)) == NULL);
    CHECK(ggml_backend_event_new(NULL) == NULL);

    ggml_backend_t s1 = ggml_backend_dev_init(dev, NULL);
    ggml_backend_t s2 = ggml_backend_dev_init(dev, NULL);
    ggml_backend_event_t ev = ggml_backend_event_new(dev);
    CHECK(ev != NULL);
    ggml_backend_event_record(ev, s1);
    ggml_backend_event_wait(s2, ev);
    ggml_backend_event_synchronize(ev);
    const struct test_backend_counters c = counters_of(reg);
    CHECK_EQ_INT(c.n_event_record, 1);
    CHECK_EQ_INT(c.n_event_wait, 1);
    CHECK_EQ_INT(c.n_event_synchronize, 1);
    ggml_backend_event_free(ev);
    ggml_backend_event_free(NULL);
    ggml_backend_free(s1);
    ggml_backend_free(s2);
    test_backend_reg_free(reg);
    test_backend_reg_free(reg_none);
}

//
// multi-buffer and context allocation
//

static void test_multi_buffer(void) {
    ggml_backend_reg_t reg = new_test_reg("Multi", false);
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(test_backend_device(reg));
    ggml_backend_buffer_t parts[3] = {
        ggml_backend_buft_alloc_buffer(buft, 100),
        ggml_backend_buft_alloc_buffer(buft, 200),
        ggml_backend_buft_alloc_buffer(buft, 300),
    };
    ggml_backend_buffer_t multi = ggml_backend_multi_buffer_alloc_buffer(parts, 3);
    CHECK(multi != NULL);
    CHECK(ggml_backend_buffer_is_multi_buffer(multi));
    CHECK_EQ_INT(ggml_backend_buffer_get_size(multi), 600);
    CHECK(ggml_backend_buffer_get_type(multi) == buft);
    CHECK(ggml_backend_buffer_get_base(multi) == NULL);
    ggml_backend_buffer_set_usage(multi, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    for (int i = 0; i < 3; i++) {
        CHECK(ggml_backend_buffer_get_usage(parts[i]) == GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    }
    test_backend_reset_counters(test_backend_device(reg));
    ggml_backend_buffer_clear(multi, 0);
    CHECK_EQ_INT(counters_of(reg).n_clear, 3);
    ggml_backend_buffer_free(multi); // frees the parts (the leak checker would say otherwise)
    test_backend_reg_free(reg);
}

static void test_alloc_ctx_tensors(void) {
    // max 1024 bytes per buffer, alignment 32
    struct test_backend_config config = { .name = "Small", .max_buffer_size = 1024 };
    ggml_backend_reg_t reg = test_backend_reg_new(&config);
    ggml_backend_buffer_type_t buft = ggml_backend_dev_buffer_type(test_backend_device(reg));

    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * t300  = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 300);  // padded 320
    struct ggml_tensor * t500  = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 500);  // 512
    struct ggml_tensor * view  = th_view_2d(ctx, t500, 10, 2, 10, 100);       // no memory of its own
    struct ggml_tensor * t400  = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 400);  // 416
    struct ggml_tensor * t1500 = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 1500); // 1504: alone, over the max
    struct ggml_tensor * t100  = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, 100);  // 128
    // packing in order, starting a new buffer when the next tensor would pass 1024:
    //   [320 + 512 = 832] [416] [1504] [128]  ->  total 2880 in 4 buffers
    CHECK_EQ_INT(ggml_backend_alloc_ctx_tensors_from_buft_size(ctx, buft), 2880);
    CHECK(t300->data == NULL); // sizing allocates nothing

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    CHECK(buf != NULL);
    CHECK(ggml_backend_buffer_is_multi_buffer(buf));
    CHECK_EQ_INT(ggml_backend_buffer_get_size(buf), 2880);
    CHECK_EQ_INT(counters_of(reg).n_buffers_alloc, 4);
    CHECK(t300->buffer == t500->buffer);
    CHECK(t400->buffer != t500->buffer && t1500->buffer != t400->buffer && t100->buffer != t1500->buffer);
    CHECK_EQ_INT(ggml_backend_buffer_get_size(t300->buffer), 832);
    CHECK_EQ_INT(ggml_backend_buffer_get_size(t400->buffer), 416);
    CHECK_EQ_INT(ggml_backend_buffer_get_size(t1500->buffer), 1504);
    CHECK_EQ_INT(ggml_backend_buffer_get_size(t100->buffer), 128);
    CHECK(view->buffer == t500->buffer && (char *) view->data == (char *) t500->data + 100);

    // the view and its source share bytes
    uint8_t pattern[500];
    fill_pattern(pattern, sizeof(pattern), 9);
    ggml_backend_tensor_set(t500, pattern, 0, sizeof(pattern));
    uint8_t row[10];
    ggml_backend_tensor_get(view, row, 10, 10); // second row: bytes 110..119 of t500
    CHECK(memcmp(row, pattern + 110, 10) == 0);

    // a context with everything allocated already gives NULL
    CHECK(ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft) == NULL);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);

    // a failing init_tensor: NULL, nothing left pointing into freed memory
    struct test_backend_config failing = { .name = "FailInit", .fail_init_tensor = true };
    ggml_backend_reg_t reg_fail = test_backend_reg_new(&failing);
    ctx = new_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    g_error_lines = 0;
    CHECK(ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_dev_buffer_type(test_backend_device(reg_fail))) == NULL);
    CHECK(g_error_lines >= 1);
    CHECK(x->buffer == NULL && x->data == NULL);
    ggml_free(ctx);

    // a failing buffer type: NULL as well
    struct test_backend_config no_memory = { .name = "NoMem", .fail_alloc = true };
    ggml_backend_reg_t reg_nomem = test_backend_reg_new(&no_memory);
    ctx = new_ctx(4);
    x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10);
    CHECK(ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_dev_buffer_type(test_backend_device(reg_nomem))) == NULL);
    CHECK(x->buffer == NULL && x->data == NULL);
    ggml_free(ctx);

    test_backend_reg_free(reg);
    test_backend_reg_free(reg_fail);
    test_backend_reg_free(reg_nomem);
}

struct place_case {
    ggml_backend_buffer_t buffer;
    struct ggml_tensor * t;
    size_t offset;
};

static void do_tensor_alloc(void * arg) {
    struct place_case * c = (struct place_case *) arg;
    ggml_backend_tensor_alloc(c->buffer, c->t, (char *) ggml_backend_buffer_get_base(c->buffer) + c->offset);
}

static void test_tensor_alloc_and_view_init(void) {
    ggml_backend_reg_t reg = new_test_reg("Place", false);
    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(ggml_backend_dev_buffer_type(test_backend_device(reg)), 512);
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64); // 256 bytes
    struct ggml_tensor * v = th_view_2d(ctx, t, 4, 3, 32, 16);         // rows of 4 floats, 32 bytes apart, 16 bytes in
    struct ggml_tensor * u = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);

    test_backend_reset_counters(test_backend_device(reg));
    CHECK(ggml_backend_tensor_alloc(buf, t, (char *) ggml_backend_buffer_get_base(buf) + 64) == GGML_STATUS_SUCCESS);
    CHECK(t->buffer == buf && (char *) t->data == (char *) ggml_backend_buffer_get_base(buf) + 64);
    CHECK(ggml_backend_view_init(v) == GGML_STATUS_SUCCESS);
    CHECK(v->buffer == buf && (char *) v->data == (char *) t->data + 16);
    CHECK_EQ_INT(counters_of(reg).n_init_tensor, 2);

    float values[64];
    fill_floats(values, 64, 8);
    ggml_backend_tensor_set(t, values, 0, sizeof(values));
    float row[4];
    ggml_backend_tensor_get(v, row, 2 * 32, sizeof(row)); // row 2 starts at t byte 16 + 64 = float 20
    CHECK(memcmp(row, values + 20, sizeof(row)) == 0);

    // placements past the end, or of a tensor placed already, abort
    struct place_case past    = { .buffer = buf, .t = u, .offset = 512 - 128 };
    struct place_case again   = { .buffer = buf, .t = t, .offset = 0 };
    struct place_case exactly = { .buffer = buf, .t = u, .offset = 512 - 256 };
    CHECK(dies(do_tensor_alloc, &past));
    CHECK(dies(do_tensor_alloc, &again));
    CHECK(!dies(do_tensor_alloc, &exactly));

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    test_backend_reg_free(reg);
}

//
// graph copy and comparison
//

struct compare_state {
    int calls;
    int mismatches;
    const struct ggml_tensor * last;
};

static bool compare_nodes(int node_index, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user_data) {
    (void) node_index;
    struct compare_state * st = (struct compare_state *) user_data;
    st->calls++;
    st->last = t1;
    const size_t n = ggml_nbytes(t1);
    float * x = (float *) malloc(n);
    float * y = (float *) malloc(n);
    ggml_backend_tensor_get(t1, x, 0, n);
    ggml_backend_tensor_get(t2, y, 0, n);
    if (memcmp(x, y, n) != 0) {
        st->mismatches++;
    }
    free(x);
    free(y);
    return true;
}

static void test_graph_copy(void) {
    // the host-memory test backend computes on CPU buffers, the other on device memory
    ggml_backend_reg_t reg_host = new_test_reg("HostTest", true);
    ggml_backend_reg_t reg_dev  = new_test_reg("DevTest", false);
    ggml_backend_t host = ggml_backend_dev_init(test_backend_device(reg_host), NULL);
    ggml_backend_t dev  = ggml_backend_dev_init(test_backend_device(reg_dev), NULL);
    CHECK(ggml_backend_supports_buft(host, ggml_backend_cpu_buffer_type()));
    CHECK(!ggml_backend_supports_buft(dev, ggml_backend_cpu_buffer_type()));

    enum { K = 17, N = 5, M = 7 };
    struct ggml_context * ctx = new_ctx(32);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, 1); // broadcast over rows
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, M);
    ggml_set_name(a, "a");
    ggml_set_name(b, "b");
    ggml_set_name(w, "w");
    // inputs keep their memory: the graph copy reads them after the computation
    ggml_set_input(a);
    ggml_set_input(b);
    ggml_set_input(w);
    struct ggml_tensor * sum  = th_like(ctx, GGML_OP_ADD, a, b);              // a + b
    struct ggml_tensor * prod = th_like(ctx, GGML_OP_MUL, sum, a);            // (a + b) * a
    struct ggml_tensor * rows = th_view_2d(ctx, prod, K, 3, prod->nb[1], prod->nb[1]); // rows 1..3
    struct ggml_tensor * sc   = th_scale(ctx, rows, 0.5f, 1.0f);              // 0.5 x + 1
    struct ggml_tensor * mm   = th_mul_mat(ctx, w, sc);                       // [M, 3]
    struct ggml_tensor * tr   = th_transpose(ctx, mm);                        // [3, M] view
    struct ggml_tensor * out  = th_cont(ctx, tr);
    ggml_set_name(out, "out");
    ggml_set_output(out);

    struct ggml_cgraph * graph = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(graph, out);
    CHECK_EQ_INT(graph->n_leafs, 3);
    CHECK_EQ_INT(graph->n_nodes, 7);

    ggml_gallocr_t galloc = ggml_gallocr_new(ggml_backend_cpu_buffer_type());
    CHECK(ggml_gallocr_alloc_graph(galloc, graph));

    float va[K*N], vb[K], vw[K*M];
    fill_floats(va, K*N, 1);
    fill_floats(vb, K, 2);
    fill_floats(vw, K*M, 3);
    ggml_backend_tensor_set(a, va, 0, sizeof(va));
    ggml_backend_tensor_set(b, vb, 0, sizeof(vb));
    ggml_backend_tensor_set(w, vw, 0, sizeof(vw));
    CHECK(ggml_backend_graph_compute(host, graph) == GGML_STATUS_SUCCESS);

    // reference: out[j][i] = sum_k w[i][k] * (0.5 * ((a[1+j][k] + b[k]) * a[1+j][k]) + 1)
    double expected[3][M];
    for (int j = 0; j < 3; j++) {
        for (int i = 0; i < M; i++) {
            double s = 0.0;
            for (int k = 0; k < K; k++) {
                const double x = va[(1 + j)*K + k];
                const double y = (double)(float)((float)(x + vb[k]) * (float) x);
                s += (double) vw[i*K + k] * (double)(0.5f * (float) y + 1.0f);
            }
            expected[j][i] = s;
        }
    }
    float host_out[3*M];
    ggml_backend_tensor_get(out, host_out, 0, sizeof(host_out));
    for (int j = 0; j < 3; j++) {
        for (int i = 0; i < M; i++) {
            CHECK_NEAR(host_out[i*3 + j], expected[j][i], 1e-3);
        }
    }

    // the copy: same structure, data copied, in the device's memory
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(dev, graph);
    CHECK(copy.buffer != NULL && copy.graph != NULL);
    CHECK_EQ_INT(copy.graph->n_nodes, graph->n_nodes);
    CHECK_EQ_INT(copy.graph->n_leafs, graph->n_leafs);
    CHECK(ggml_backend_buffer_get_type(copy.buffer) == ggml_backend_dev_buffer_type(test_backend_device(reg_dev)));
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct ggml_tensor * n1 = graph->nodes[i];
        const struct ggml_tensor * n2 = copy.graph->nodes[i];
        CHECK(n1->op == n2->op && ggml_are_same_layout(n1, n2) && strcmp(n1->name, n2->name) == 0);
        CHECK(n1->flags == n2->flags);
        CHECK((n1->view_src == NULL) == (n2->view_src == NULL));
        CHECK(n2->buffer != NULL && ggml_backend_buffer_get_type(n2->buffer) == ggml_backend_dev_buffer_type(test_backend_device(reg_dev)));
    }
    struct ggml_tensor * a2 = ggml_graph_get_tensor(copy.graph, "a");
    CHECK(a2 != NULL && a2 != a);
    float back[K*N];
    ggml_backend_tensor_get(a2, back, 0, sizeof(back));
    CHECK(memcmp(back, va, sizeof(back)) == 0);

    test_backend_reset_counters(test_backend_device(reg_dev));
    CHECK(ggml_backend_graph_compute(dev, copy.graph) == GGML_STATUS_SUCCESS);
    CHECK_EQ_INT(counters_of(reg_dev).n_nodes_computed, 5); // add, mul, scale, mul_mat, cont
    float dev_out[3*M];
    ggml_backend_tensor_get(ggml_graph_get_tensor(copy.graph, "out"), dev_out, 0, sizeof(dev_out));
    CHECK(memcmp(dev_out, host_out, sizeof(dev_out)) == 0);
    ggml_backend_graph_copy_free(copy);

    // node by node: a callback for each node that is not a view
    struct compare_state st = { 0, 0, NULL };
    CHECK(ggml_backend_compare_graph_backend(host, dev, graph, compare_nodes, &st, NULL, 0));
    CHECK_EQ_INT(st.calls, 5);
    CHECK_EQ_INT(st.mismatches, 0);

    // only the nodes asked for
    struct compare_state st2 = { 0, 0, NULL };
    const struct ggml_tensor * test_nodes[1] = { out };
    CHECK(ggml_backend_compare_graph_backend(host, dev, graph, compare_nodes, &st2, test_nodes, 1));
    CHECK_EQ_INT(st2.calls, 1);
    CHECK(st2.last == out);
    CHECK_EQ_INT(st2.mismatches, 0);

    ggml_gallocr_free(galloc);
    ggml_free(ctx);
    ggml_backend_free(host);
    ggml_backend_free(dev);
    test_backend_reg_free(reg_host);
    test_backend_reg_free(reg_dev);
}

//
// ggml_graph_reset on gradients in device memory
//

static void test_graph_reset(void) {
    ggml_backend_reg_t reg = new_test_reg("Grad", false);
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * x    = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    struct ggml_tensor * y    = th_scale(ctx, x, 2.0f, 0.0f);
    struct ggml_tensor * loss = th_node(ctx, GGML_OP_SUM, GGML_TYPE_F32, 1, 1, y, NULL);
    ggml_set_loss(loss);
    struct ggml_tensor * gy    = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 5);
    struct ggml_tensor * gloss = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_dev_buffer_type(test_backend_device(reg)));
    CHECK(buf != NULL);

    struct ggml_cgraph * graph = ggml_new_graph_custom(ctx, 16, true);
    ggml_build_forward_expand(graph, loss);
    // gradient accumulators by hand (the backward pass is not under test here)
    graph->grad_accs[ggml_hash_find(&graph->visited_hash_set, y)]    = gy;
    graph->grad_accs[ggml_hash_find(&graph->visited_hash_set, loss)] = gloss;

    const float junk[5] = { 3, 4, 5, 6, 7 };
    ggml_backend_tensor_set(gy, junk, 0, sizeof(junk));
    ggml_backend_tensor_set(gloss, junk, 0, sizeof(float));
    ggml_graph_reset(graph);
    float g[5];
    ggml_backend_tensor_get(gy, g, 0, sizeof(g));
    CHECK(g[0] == 0.0f && g[1] == 0.0f && g[2] == 0.0f && g[3] == 0.0f && g[4] == 0.0f);
    float gl;
    ggml_backend_tensor_get(gloss, &gl, 0, sizeof(gl));
    CHECK(gl == 1.0f);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    test_backend_reg_free(reg);
}

// Host buffers of 4 MiB and more are advised as wanting transparent huge
// pages (Linux): the mapping that holds a large CPU buffer carries the "hg"
// flag in /proc/self/smaps, and not with GGML_NO_HUGEPAGES set. 40 MiB: above
// glibc's largest mmap threshold, so each buffer is a fresh mapping.
#if defined(__linux__) && defined(MADV_HUGEPAGE)
// the VmFlags of the mapping holding p: "hg" present (1), absent (0), not found (-1)
static int mapping_has_hg(const void * p) {
    FILE * f = fopen("/proc/self/smaps", "r");
    if (f == NULL) {
        return -1;
    }
    char line[512];
    bool inside = false;
    int result = -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { // a mapping's first line
            inside = (uintptr_t) p >= lo && (uintptr_t) p < hi;
            continue;
        }
        if (inside && strncmp(line, "VmFlags:", 8) == 0) {
            result = strstr(line, " hg") != NULL ? 1 : 0;
            break;
        }
    }
    fclose(f);
    return result;
}
#endif

static void test_host_hugepages(void) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    FILE * f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char mode[128] = "";
    if (f != NULL) {
        if (fgets(mode, sizeof(mode), f) == NULL) {
            mode[0] = 0;
        }
        fclose(f);
    }
    // and a kernel that takes the advice and shows it (not a sandbox that
    // refuses it, nor an emulator that drops it)
    bool advisable = false;
    void * probe = mmap(NULL, (size_t) 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe != MAP_FAILED) {
        advisable = madvise(probe, (size_t) 4 << 20, MADV_HUGEPAGE) == 0 && mapping_has_hg(probe) == 1;
        munmap(probe, (size_t) 4 << 20);
    }
    if (mode[0] == 0 || strstr(mode, "[never]") != NULL || !advisable) {
        printf("test_host_hugepages: skipped (no transparent huge pages here)\n");
        return;
    }
    const size_t size = (size_t) 40 << 20;
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_buffer_type();
    for (int off = 0; off < 2; off++) {
        if (off) {
            setenv("GGML_NO_HUGEPAGES", "1", 1);
        }
        ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(buft, size);
        CHECK(buf != NULL);
        if (buf == NULL) {
            break;
        }
        char * base = (char *) ggml_backend_buffer_get_base(buf);
        memset(base, 0x5a, size);
        CHECK(base[0] == 0x5a && base[size - 1] == 0x5a);
        CHECK_EQ_INT(mapping_has_hg(base + size / 2), off ? 0 : 1);
        ggml_backend_buffer_free(buf);
    }
    unsetenv("GGML_NO_HUGEPAGES");
#endif
}

int main(void) {
    ggml_log_set(count_errors, NULL);

    test_host_buffer_types();
    test_host_hugepages();
    test_failing_buffer_type();
    test_device_tensor_access();
    test_2d_access();
    test_copies();
    test_events();
    test_multi_buffer();
    test_alloc_ctx_tensors();
    test_tensor_alloc_and_view_init();
    test_graph_copy();
    test_graph_reset();

    return TEST_RESULT();
}
