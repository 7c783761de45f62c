// test-backend-module.c: the test backend as a loadable module.
//
// Built once per variant with these definitions:
//   TEST_MODULE_NAME         registry entry name ("testdl")
//   TEST_MODULE_VARIANT      shown in the device description ("test module <variant>")
//   TEST_MODULE_SCORE        what ggml_backend_score returns; leave undefined for no score
//   TEST_MODULE_API_VERSION  the api_version reported (default: GGML_BACKEND_API_VERSION)
// The registry entry lives until the module is unloaded.

#include "test-backend.h"

#include <pthread.h>

#ifndef TEST_MODULE_API_VERSION
#define TEST_MODULE_API_VERSION GGML_BACKEND_API_VERSION
#endif

static ggml_backend_reg_t module_reg  = NULL;
static pthread_once_t     module_once = PTHREAD_ONCE_INIT;

static void module_create(void) {
    const struct test_backend_config config = {
        .name        = TEST_MODULE_NAME,
        .description = "test module " TEST_MODULE_VARIANT,
        .type        = GGML_BACKEND_DEVICE_TYPE_ACCEL,
        .events      = true,
    };
    module_reg = test_backend_reg_new(&config);
    if (module_reg != NULL) {
        module_reg->api_version = TEST_MODULE_API_VERSION;
    }
}

static ggml_backend_reg_t module_reg_get(void) {
    pthread_once(&module_once, module_create);
    return module_reg;
}

GGML_BACKEND_DL_IMPL(module_reg_get)

#ifdef TEST_MODULE_SCORE
static int module_score(void) {
    return TEST_MODULE_SCORE;
}

GGML_BACKEND_DL_SCORE_IMPL(module_score)
#endif

// runs when the module is unloaded: the entry must not outlive the code it points to
__attribute__((destructor)) static void module_destroy(void) {
    test_backend_reg_free(module_reg);
    module_reg = NULL;
}
