// devices.c: choosing devices from the registry and spreading layers over them.

#include "devices.h"
#include "run-common.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool devices_push(ggml_backend_dev_t ** list, int * n, ggml_backend_dev_t dev) {
    for (int i = 0; i < *n; i++) {
        if ((*list)[i] == dev) {
            run_error("device %s is named twice", ggml_backend_dev_name(dev));
            return false;
        }
    }
    ggml_backend_dev_t * grown = (ggml_backend_dev_t *) realloc(*list, (size_t) (*n + 1) * sizeof(*grown));
    if (grown == NULL) {
        run_error("out of memory listing devices");
        return false;
    }
    grown[(*n)++] = dev;
    *list = grown;
    return true;
}

// an accelerator working on host memory (BLAS, ...): it holds no layers
// and takes the ops it is best at from the CPU's
static bool device_is_host_helper(ggml_backend_dev_t dev) {
    return ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_ACCEL &&
           ggml_backend_buft_is_host(ggml_backend_dev_buffer_type(dev));
}

static bool devices_add_named(const char * names, struct run_devices * devs) {
    const char * p = names;
    while (*p != '\0') {
        const char * end = strchr(p, ',');
        const size_t n = end != NULL ? (size_t) (end - p) : strlen(p);
        char name[256];
        if (n == 0 || n >= sizeof(name)) {
            run_error("invalid device list '%s'", names);
            return false;
        }
        memcpy(name, p, n);
        name[n] = '\0';
        ggml_backend_dev_t dev = ggml_backend_dev_by_name(name);
        if (dev == NULL) {
            run_error("no device named '%s' (run with --list-devices to see them%s)", name,
                      strncmp(name, "Vulkan", 6) == 0 ? "; a Vulkan CPU driver such as lavapipe is listed only where GGML_VK_VISIBLE_DEVICES names it" : "");
            return false;
        }
        // the CPU is always there; accelerators on host memory help it (below)
        if (ggml_backend_dev_type(dev) != GGML_BACKEND_DEVICE_TYPE_CPU && !device_is_host_helper(dev) &&
            !devices_push(&devs->layer, &devs->n_layer, dev)) {
            return false;
        }
        p += n;
        if (*p == ',') {
            p++;
        }
    }
    return true;
}

static bool devices_add_default(struct run_devices * devs) {
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        const enum ggml_backend_dev_type type = ggml_backend_dev_type(dev);
        if ((type == GGML_BACKEND_DEVICE_TYPE_GPU || type == GGML_BACKEND_DEVICE_TYPE_IGPU) &&
            !devices_push(&devs->layer, &devs->n_layer, dev)) {
            return false;
        }
    }
    return true;
}

// accelerators on host memory help the CPU whether named or not (as
// upstream's llama.cpp adds them); others only where named
static bool devices_add_helpers(struct run_devices * devs) {
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        if (device_is_host_helper(dev) && !devices_push(&devs->helper, &devs->n_helper, dev)) {
            return false;
        }
    }
    return true;
}

bool run_devices_select(const char * names, struct run_devices * devs) {
    memset(devs, 0, sizeof(*devs));
    ggml_backend_dev_t cpu = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    if (cpu == NULL) {
        run_error("the registry has no CPU device");
        return false;
    }
    bool ok;
    if (names == NULL) {
        ok = devices_add_default(devs) && devices_add_helpers(devs);
    } else if (strcmp(names, "none") == 0) {
        ok = true; // the CPU alone, without helpers
    } else {
        ok = devices_add_named(names, devs) && devices_add_helpers(devs);
    }
    ok = ok && devices_push(&devs->layer, &devs->n_layer, cpu);
    if (!ok) {
        run_devices_free(devs);
    }
    return ok;
}

void run_devices_free(struct run_devices * devs) {
    free(devs->layer);
    free(devs->helper);
    memset(devs, 0, sizeof(*devs));
}

// one proportion per non-CPU layer device; zeros everywhere are refused
static bool devices_parse_split(const char * text, int n, float * split) {
    const char * p = text;
    for (int i = 0; i < n; i++) {
        char * end = NULL;
        const double v = strtod(p, &end);
        if (end == p || !(v >= 0.0) || v > 1e9) {
            run_error("invalid --tensor-split '%s': expected %d non-negative numbers", text, n);
            return false;
        }
        split[i] = (float) v;
        p = end;
        if (i + 1 < n) {
            if (*p != ',') {
                run_error("--tensor-split '%s' names fewer than the %d devices in use", text, n);
                return false;
            }
            p++;
        }
    }
    while (isspace((unsigned char) *p)) {
        p++;
    }
    if (*p != '\0') {
        run_error("--tensor-split '%s' names more than the %d devices in use", text, n);
        return false;
    }
    return true;
}

static void devices_split_by_memory(const struct run_devices * devs, int n, float * split) {
    for (int i = 0; i < n; i++) {
        size_t free_mem = 0, total = 0;
        ggml_backend_dev_memory(devs->layer[i], &free_mem, &total);
        split[i] = (float) (free_mem > 0 ? free_mem : 1);
    }
}

bool run_devices_shares(const struct run_devices * devs, const char * tensor_split, float * share, double * total) {
    const int n_gpu = devs->n_layer - 1;
    if (tensor_split != NULL) {
        if (!devices_parse_split(tensor_split, n_gpu, share)) {
            return false;
        }
    } else {
        devices_split_by_memory(devs, n_gpu, share);
    }
    *total = 0.0;
    for (int i = 0; i < n_gpu; i++) {
        *total += (double) share[i];
    }
    return true;
}

bool run_devices_assign_layers(const struct run_devices * devs, int64_t n_layer, int64_t n_gpu_layers,
                               const char * tensor_split, int * layer_dev) {
    const int n_gpu   = devs->n_layer - 1;
    const int cpu     = run_devices_cpu(devs);
    const int64_t n_all = n_layer + 1;
    const int64_t n_off = n_gpu == 0 ? 0 : (n_gpu_layers < 0 || n_gpu_layers > n_all ? n_all : n_gpu_layers);
    if (n_gpu == 0 && tensor_split != NULL) {
        run_error("--tensor-split needs devices besides the CPU");
        return false;
    }
    float * split = (float *) run_calloc((size_t) (n_gpu > 0 ? n_gpu : 1), sizeof(float), "the layer split");
    if (split == NULL) {
        return false;
    }
    double total = 0.0;
    if (!run_devices_shares(devs, tensor_split, split, &total)) {
        free(split);
        return false;
    }
    if (n_off > 0 && !(total > 0.0)) {
        run_error("--tensor-split gives no device a share");
        free(split);
        return false;
    }
    const int64_t first_off = n_all - n_off;
    for (int64_t il = 0; il < n_all; il++) {
        if (il < first_off) {
            layer_dev[il] = cpu;
            continue;
        }
        // the device whose cumulative share first exceeds the layer's place
        const double at = (double) (il - first_off) / (double) n_off * total;
        double acc = 0.0;
        int dev = n_gpu - 1;
        for (int i = 0; i < n_gpu; i++) {
            acc += (double) split[i];
            if (at < acc) {
                dev = i;
                break;
            }
        }
        layer_dev[il] = dev;
    }
    free(split);
    return true;
}

bool run_devices_make_meta(struct run_devices * devs, ggml_backend_meta_get_split_state_t get_split_state, void * user_data) {
    const int n_gpu = devs->n_layer - 1;
    if (n_gpu < 2) {
        run_error("--split-mode tensor needs two or more devices besides the CPU (-dev), not %d", n_gpu);
        return false;
    }
    ggml_backend_dev_t meta = ggml_backend_meta_device(devs->layer, (size_t) n_gpu, get_split_state, user_data);
    if (meta == NULL) {
        run_error("cannot make one device of the %d layer devices", n_gpu);
        return false;
    }
    devs->layer[0] = meta;
    devs->layer[1] = devs->layer[n_gpu];
    devs->n_layer  = 2;
    return true;
}
