// ourcpu-shim.c: a backend module that presents our CPU device to upstream
// ggml's test-backend-ops as an ACCEL device named "OURCPU".
//
// Upstream's test-backend-ops skips devices of type CPU and compares every
// other device, op by op, with its own CPU backend. Loaded into that program
// (GGML_BACKEND_PATH=/path/to/libggml-ourcpu-shim.so, which upstream's
// ggml_backend_load_all loads), this module puts our CPU backend under test
// with upstream's CPU as the reference, in one process.
//
// Two builds of ggml in one process export the same symbol names, so our
// libraries must not bind to upstream's: the shim is linked against nothing
// of ggml and calls nothing of ggml by name (only through the vtables our
// backend hands out), and it dlopens our libggml-cpu with RTLD_DEEPBIND so
// that our libggml-cpu and our libggml-base it needs resolve ggml_* in
// themselves first. Copies of our two libraries must carry their own sonames
// (otherwise the loader takes upstream's already loaded libggml-base.so for
// ours): scripts/compare-upstream-cpu.sh makes those copies with patchelf.
// Which library to open: $OURCPU_LIB, else libggml-ours-cpu.so next to this
// module.
//
// Our backend keeps its own device pointer (of type CPU) inside: only the
// device the registry lists is wrapped, and the backend's name reads
// "OURCPU" so that the two backends are told apart in the output.
//
// Build: cc -std=c11 -shared -fPIC -I<our include> scripts/ourcpu-shim.c -ldl -o libggml-ourcpu-shim.so

#define _GNU_SOURCE
#include "ggml-backend-impl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHIM_NAME "OURCPU"

struct shim {
    ggml_backend_dev_t          inner;     // our CPU device
    ggml_backend_reg_t          inner_reg; // our CPU registry
    struct ggml_backend_device  dev;
    struct ggml_backend_reg     reg;
    bool                        ok;
};

static struct shim     shim_state;
static pthread_once_t  shim_once = PTHREAD_ONCE_INIT;

static const char * shim_dev_name(ggml_backend_dev_t dev) {
    (void) dev;
    return SHIM_NAME;
}

static const char * shim_dev_description(ggml_backend_dev_t dev) {
    (void) dev;
    return shim_state.inner->iface.get_description(shim_state.inner);
}

static void shim_dev_memory(ggml_backend_dev_t dev, size_t * free, size_t * total) {
    (void) dev;
    shim_state.inner->iface.get_memory(shim_state.inner, free, total);
}

static enum ggml_backend_dev_type shim_dev_type(ggml_backend_dev_t dev) {
    (void) dev;
    return GGML_BACKEND_DEVICE_TYPE_ACCEL;
}

static void shim_dev_props(ggml_backend_dev_t dev, struct ggml_backend_dev_props * props) {
    (void) dev;
    shim_state.inner->iface.get_props(shim_state.inner, props);
    props->name = SHIM_NAME;
    props->type = GGML_BACKEND_DEVICE_TYPE_ACCEL;
}

static const char * shim_backend_name(ggml_backend_t backend) {
    (void) backend;
    return SHIM_NAME;
}

static ggml_backend_t shim_dev_init(ggml_backend_dev_t dev, const char * params) {
    (void) dev;
    ggml_backend_t b = shim_state.inner->iface.init_backend(shim_state.inner, params);
    if (b != NULL) {
        b->iface.get_name = shim_backend_name;
    }
    return b;
}

static ggml_backend_buffer_type_t shim_dev_buft(ggml_backend_dev_t dev) {
    (void) dev;
    return shim_state.inner->iface.get_buffer_type(shim_state.inner);
}

static ggml_backend_buffer_type_t shim_dev_host_buft(ggml_backend_dev_t dev) {
    (void) dev;
    return shim_state.inner->iface.get_host_buffer_type(shim_state.inner);
}

static ggml_backend_buffer_t shim_dev_from_host_ptr(ggml_backend_dev_t dev, void * ptr, size_t size, size_t max_tensor_size) {
    (void) dev;
    return shim_state.inner->iface.buffer_from_host_ptr(shim_state.inner, ptr, size, max_tensor_size);
}

static bool shim_dev_supports_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    (void) dev;
    return shim_state.inner->iface.supports_op(shim_state.inner, op);
}

static bool shim_dev_supports_buft(ggml_backend_dev_t dev, ggml_backend_buffer_type_t buft) {
    (void) dev;
    return shim_state.inner->iface.supports_buft(shim_state.inner, buft);
}

static bool shim_dev_offload_op(ggml_backend_dev_t dev, const struct ggml_tensor * op) {
    (void) dev;
    return shim_state.inner->iface.offload_op(shim_state.inner, op);
}

static const char * shim_reg_name(ggml_backend_reg_t reg) {
    (void) reg;
    return SHIM_NAME;
}

static size_t shim_reg_count(ggml_backend_reg_t reg) {
    (void) reg;
    return 1;
}

static ggml_backend_dev_t shim_reg_dev(ggml_backend_reg_t reg, size_t index) {
    (void) reg;
    return index == 0 ? &shim_state.dev : NULL;
}

static void * shim_reg_proc(ggml_backend_reg_t reg, const char * name) {
    (void) reg;
    return shim_state.inner_reg->iface.get_proc_address(shim_state.inner_reg, name);
}

// the path of our libggml-cpu: $OURCPU_LIB, else next to this module
static void shim_lib_path(char * path, size_t size) {
    const char * env = getenv("OURCPU_LIB");
    if (env != NULL && env[0] != '\0') {
        snprintf(path, size, "%s", env);
        return;
    }
    Dl_info info;
    if (dladdr((void *) shim_lib_path, &info) != 0 && info.dli_fname != NULL) {
        const char * slash = strrchr(info.dli_fname, '/');
        if (slash != NULL) {
            snprintf(path, size, "%.*s/libggml-ours-cpu.so", (int)(slash - info.dli_fname), info.dli_fname);
            return;
        }
    }
    snprintf(path, size, "libggml-ours-cpu.so");
}

static void shim_init(void) {
    char path[4096];
    shim_lib_path(path, sizeof(path));
    void * lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (lib == NULL) {
        fprintf(stderr, "ourcpu-shim: cannot load %s: %s\n", path, dlerror());
        return;
    }
    ggml_backend_reg_t (*cpu_reg)(void) = (ggml_backend_reg_t (*)(void)) dlsym(lib, "ggml_backend_cpu_reg");
    if (cpu_reg == NULL) {
        fprintf(stderr, "ourcpu-shim: %s has no ggml_backend_cpu_reg\n", path);
        return;
    }
    ggml_backend_reg_t inner_reg = cpu_reg();
    if (inner_reg == NULL || inner_reg->iface.get_device_count(inner_reg) < 1) {
        fprintf(stderr, "ourcpu-shim: %s lists no CPU device\n", path);
        return;
    }
    struct shim * s = &shim_state;
    s->inner_reg = inner_reg;
    s->inner     = inner_reg->iface.get_device(inner_reg, 0);

    const struct ggml_backend_device_i * in = &s->inner->iface;
    s->dev = (struct ggml_backend_device) {
        .iface = {
            .get_name             = shim_dev_name,
            .get_description      = shim_dev_description,
            .get_memory           = shim_dev_memory,
            .get_type             = shim_dev_type,
            .get_props            = shim_dev_props,
            .init_backend         = shim_dev_init,
            .get_buffer_type      = shim_dev_buft,
            .get_host_buffer_type = in->get_host_buffer_type ? shim_dev_host_buft : NULL,
            .buffer_from_host_ptr = in->buffer_from_host_ptr ? shim_dev_from_host_ptr : NULL,
            .supports_op          = shim_dev_supports_op,
            .supports_buft        = shim_dev_supports_buft,
            .offload_op           = in->offload_op ? shim_dev_offload_op : NULL,
            // events are optional: our CPU device has none to forward
            .event_new            = NULL,
            .event_free           = NULL,
            .event_synchronize    = NULL,
        },
        .reg     = &s->reg,
        .context = NULL,
    };
    s->reg = (struct ggml_backend_reg) {
        .api_version = GGML_BACKEND_API_VERSION,
        .iface = {
            .get_name         = shim_reg_name,
            .get_device_count = shim_reg_count,
            .get_device       = shim_reg_dev,
            .get_proc_address = inner_reg->iface.get_proc_address ? shim_reg_proc : NULL,
        },
        .context = NULL,
    };
    s->ok = true;
}

__attribute__((visibility("default"))) ggml_backend_reg_t ggml_backend_init(void);

ggml_backend_reg_t ggml_backend_init(void) {
    pthread_once(&shim_once, shim_init);
    return shim_state.ok ? &shim_state.reg : NULL;
}
