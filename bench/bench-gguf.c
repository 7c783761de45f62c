// bench-gguf: the cost of building a large GGUF context in memory.
//
// Adds n tensors (default 100,000, named as the layers of a deep model
// name them) and n keys to an empty context, then looks each up by name,
// and sizes the metadata as a writer would. Each figure is the minimum over
// the repetitions: the machine's other work only ever adds time. A context
// that searched its names linearly would take time quadratic in n here.
//
// usage: bench-gguf [n=100000] [reps=3]

#include "ggml.h"
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>

struct timings {
    double add_tensors, find_tensors, set_keys, find_keys, meta_size;
};

static double seconds_since(int64_t t0) {
    return (double) (ggml_time_us() - t0) * 1e-6;
}

static const char * const SUFFIXES[] = {
    "attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up", "ffn_down",
};
enum { N_SUFFIXES = sizeof(SUFFIXES) / sizeof(SUFFIXES[0]) };

static void tensor_name(char * buf, size_t size, int64_t i) {
    snprintf(buf, size, "blk.%lld.%s.weight", (long long) (i / N_SUFFIXES), SUFFIXES[i % N_SUFFIXES]);
}

static bool run_once(int64_t n, struct timings * t) {
    const struct ggml_init_params ip = {
        .mem_size   = (size_t) n * ggml_tensor_overhead(),
        .mem_buffer = NULL,
        .no_alloc   = true,
    };
    struct ggml_context * ctx = ggml_init(ip);
    struct gguf_context * gguf = gguf_init_empty();
    if (ctx == NULL || gguf == NULL) {
        fprintf(stderr, "bench-gguf: out of memory\n");
        gguf_free(gguf);
        if (ctx != NULL) {
            ggml_free(ctx);
        }
        return false;
    }
    struct ggml_tensor ** tensors = (struct ggml_tensor **) malloc((size_t) n * sizeof(*tensors));
    char name[GGML_MAX_NAME];
    for (int64_t i = 0; i < n; i++) {
        tensors[i] = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 64, 64);
        tensor_name(name, sizeof(name), i);
        ggml_set_name(tensors[i], name);
    }

    int64_t t0 = ggml_time_us();
    for (int64_t i = 0; i < n; i++) {
        gguf_add_tensor(gguf, tensors[i]);
    }
    t->add_tensors = seconds_since(t0);

    bool found = true;
    t0 = ggml_time_us();
    for (int64_t i = 0; i < n; i++) {
        found = found && gguf_find_tensor(gguf, tensors[i]->name) == i;
    }
    t->find_tensors = seconds_since(t0);

    t0 = ggml_time_us();
    for (int64_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "bench.layer.%lld.value", (long long) i);
        gguf_set_val_u32(gguf, name, (uint32_t) i);
    }
    t->set_keys = seconds_since(t0);

    t0 = ggml_time_us();
    for (int64_t i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "bench.layer.%lld.value", (long long) i);
        found = found && gguf_find_key(gguf, name) == i;
    }
    t->find_keys = seconds_since(t0);

    t0 = ggml_time_us();
    const size_t meta = gguf_get_meta_size(gguf);
    t->meta_size = seconds_since(t0);

    free(tensors);
    gguf_free(gguf);
    ggml_free(ctx);
    if (!found || meta == 0) {
        fprintf(stderr, "bench-gguf: a lookup found the wrong entry\n");
        return false;
    }
    return true;
}

static double min2(double a, double b) {
    return a < b ? a : b;
}

int main(int argc, char ** argv) {
    const int64_t n    = argc > 1 ? atoll(argv[1]) : 100000;
    const int     reps = argc > 2 ? atoi(argv[2]) : 3;
    if (n < 1 || reps < 1) {
        fprintf(stderr, "usage: %s [n=100000] [reps=3]\n", argv[0]);
        return 1;
    }
    ggml_time_init();
    struct timings best = { 1e30, 1e30, 1e30, 1e30, 1e30 };
    for (int r = 0; r < reps; r++) {
        struct timings t;
        if (!run_once(n, &t)) {
            return 1;
        }
        best.add_tensors  = min2(best.add_tensors, t.add_tensors);
        best.find_tensors = min2(best.find_tensors, t.find_tensors);
        best.set_keys     = min2(best.set_keys, t.set_keys);
        best.find_keys    = min2(best.find_keys, t.find_keys);
        best.meta_size    = min2(best.meta_size, t.meta_size);
    }
    printf("gguf context of %lld tensors and %lld keys (best of %d):\n", (long long) n, (long long) n, reps);
    printf("  gguf_add_tensor   x %lld  %9.3f s  %8.3f us each\n", (long long) n, best.add_tensors, best.add_tensors * 1e6 / (double) n);
    printf("  gguf_find_tensor  x %lld  %9.3f s  %8.3f us each\n", (long long) n, best.find_tensors, best.find_tensors * 1e6 / (double) n);
    printf("  gguf_set_val_u32  x %lld  %9.3f s  %8.3f us each\n", (long long) n, best.set_keys, best.set_keys * 1e6 / (double) n);
    printf("  gguf_find_key     x %lld  %9.3f s  %8.3f us each\n", (long long) n, best.find_keys, best.find_keys * 1e6 / (double) n);
    printf("  gguf_get_meta_size    %9.3f s\n", best.meta_size);
    return 0;
}
