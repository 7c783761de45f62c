// test-hostile-module.c: backend modules that hand the registry something
// broken; the registry must refuse each with one log line, not crash.
//
// Built once per defect, chosen by TEST_HOSTILE_KIND:
//   HOSTILE_NULL_DEVICE     get_device returns NULL
//   HOSTILE_NO_GET_NAME     the registry interface has no get_name
//   HOSTILE_NO_SUPPORTS_OP  the device interface has no supports_op
//   HOSTILE_FOREIGN_DEVICE  the device does not point back to the entry
//   HOSTILE_COUNT_MISMATCH  it counts two devices but has one (handed out twice)
//   HOSTILE_UNSTABLE_COUNT  the device count grows each time it is asked
//   HOSTILE_CPU_NAME        a backend named "cpu", as the CPU backend is
// Each starts from a working test backend and breaks one thing.

#include "test-backend.h"

#include <pthread.h>

#define HOSTILE_NULL_DEVICE    1
#define HOSTILE_NO_GET_NAME    2
#define HOSTILE_NO_SUPPORTS_OP 3
#define HOSTILE_FOREIGN_DEVICE 4
#define HOSTILE_COUNT_MISMATCH 5
#define HOSTILE_UNSTABLE_COUNT 6
#define HOSTILE_CPU_NAME       7

#ifndef TEST_HOSTILE_KIND
#error "define TEST_HOSTILE_KIND"
#endif

static ggml_backend_reg_t module_reg  = NULL;
static pthread_once_t     module_once = PTHREAD_ONCE_INIT;
static struct ggml_backend_reg_i module_good_iface; // to restore before freeing

#if TEST_HOSTILE_KIND == HOSTILE_NULL_DEVICE
static ggml_backend_dev_t hostile_get_device(ggml_backend_reg_t reg, size_t index) {
    (void) reg;
    (void) index;
    return NULL;
}
#elif TEST_HOSTILE_KIND == HOSTILE_COUNT_MISMATCH
static size_t hostile_get_device_count(ggml_backend_reg_t reg) {
    (void) reg;
    return 2;
}
#elif TEST_HOSTILE_KIND == HOSTILE_UNSTABLE_COUNT
static size_t hostile_get_device_count(ggml_backend_reg_t reg) {
    (void) reg;
    static _Atomic size_t n_asked = 0;
    return n_asked++ == 0 ? 1 : 2; // one device at first, two when asked again
}
#endif

#if TEST_HOSTILE_KIND == HOSTILE_COUNT_MISMATCH || TEST_HOSTILE_KIND == HOSTILE_UNSTABLE_COUNT
// the one device, whatever the index
static ggml_backend_dev_t hostile_get_device(ggml_backend_reg_t reg, size_t index) {
    (void) index;
    return test_backend_device(reg);
}
#endif

static void module_create(void) {
    const struct test_backend_config config = {
        .name        = TEST_HOSTILE_KIND == HOSTILE_CPU_NAME ? "cpu" : "hostile",
        .description = "hostile test module",
        .type        = GGML_BACKEND_DEVICE_TYPE_ACCEL,
    };
    module_reg = test_backend_reg_new(&config);
    if (module_reg == NULL) {
        return;
    }
    module_good_iface = module_reg->iface;
    ggml_backend_dev_t dev = test_backend_device(module_reg);
    (void) dev;
#if TEST_HOSTILE_KIND == HOSTILE_NULL_DEVICE
    module_reg->iface.get_device = hostile_get_device;
#elif TEST_HOSTILE_KIND == HOSTILE_NO_GET_NAME
    module_reg->iface.get_name = NULL;
#elif TEST_HOSTILE_KIND == HOSTILE_NO_SUPPORTS_OP
    dev->iface.supports_op = NULL;
#elif TEST_HOSTILE_KIND == HOSTILE_FOREIGN_DEVICE
    dev->reg = NULL;
#elif TEST_HOSTILE_KIND == HOSTILE_COUNT_MISMATCH || TEST_HOSTILE_KIND == HOSTILE_UNSTABLE_COUNT
    module_reg->iface.get_device_count = hostile_get_device_count;
    module_reg->iface.get_device       = hostile_get_device;
#endif
}

static ggml_backend_reg_t module_reg_get(void) {
    pthread_once(&module_once, module_create);
    return module_reg;
}

GGML_BACKEND_DL_IMPL(module_reg_get)

__attribute__((destructor)) static void module_destroy(void) {
    if (module_reg != NULL) {
        module_reg->iface = module_good_iface;
    }
    test_backend_reg_free(module_reg);
    module_reg = NULL;
}
