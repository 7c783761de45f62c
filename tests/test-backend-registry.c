// test-backend-registry: registration and enumeration (also from several
// threads at once), lookups, and backend modules: loading, refusing what is
// not a usable module, unloading, and the search of load_all.

#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "test-backend.h"
#include "testing.h"
#include "meta-testing.h"

#include <libgen.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

//
// log capture
//

static pthread_mutex_t g_log_mutex = PTHREAD_MUTEX_INITIALIZER;
static char   g_log_text[1 << 16];
static size_t g_log_len = 0;
static int    g_log_errors = 0;
static int    g_log_warnings = 0;

static void capture_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) user_data;
    pthread_mutex_lock(&g_log_mutex);
    const size_t n = strlen(text);
    if (g_log_len + n + 1 < sizeof(g_log_text)) {
        memcpy(g_log_text + g_log_len, text, n + 1);
        g_log_len += n;
    }
    g_log_errors   += level == GGML_LOG_LEVEL_ERROR;
    g_log_warnings += level == GGML_LOG_LEVEL_WARN;
    pthread_mutex_unlock(&g_log_mutex);
    if (level != GGML_LOG_LEVEL_DEBUG) {
        fputs(text, stderr);
    }
}

static void log_reset(void) {
    pthread_mutex_lock(&g_log_mutex);
    g_log_len = 0;
    g_log_text[0] = '\0';
    g_log_errors = 0;
    g_log_warnings = 0;
    pthread_mutex_unlock(&g_log_mutex);
}

static bool log_contains(const char * s) {
    pthread_mutex_lock(&g_log_mutex);
    const bool found = strstr(g_log_text, s) != NULL;
    pthread_mutex_unlock(&g_log_mutex);
    return found;
}

static size_t count_devices_of_type(enum ggml_backend_dev_type type) {
    size_t n = 0;
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        n += ggml_backend_dev_type(ggml_backend_dev_get(i)) == type;
    }
    return n;
}

static ggml_backend_reg_t make_reg(const char * name, enum ggml_backend_dev_type type) {
    struct test_backend_config config = { .name = name, .type = type };
    return test_backend_reg_new(&config);
}

//
// registration, enumeration, lookups
//

static void test_enumeration(void) {
    const size_t n_regs = ggml_backend_reg_count();
    const size_t n_devs = ggml_backend_dev_count();
    // the backends compiled in are registered already, each with its devices
    size_t devs_of_regs = 0;
    for (size_t i = 0; i < n_regs; i++) {
        ggml_backend_reg_t reg = ggml_backend_reg_get(i);
        CHECK(ggml_backend_reg_by_name(ggml_backend_reg_name(reg)) == reg);
        devs_of_regs += ggml_backend_reg_dev_count(reg);
    }
    CHECK_EQ_INT(devs_of_regs, n_devs);

    const bool had_gpu  = count_devices_of_type(GGML_BACKEND_DEVICE_TYPE_GPU) > 0;
    const bool had_igpu = count_devices_of_type(GGML_BACKEND_DEVICE_TYPE_IGPU) > 0;

    ggml_backend_reg_t accel = make_reg("TestAccel", GGML_BACKEND_DEVICE_TYPE_ACCEL);
    ggml_backend_reg_t igpu  = make_reg("TestIGPU", GGML_BACKEND_DEVICE_TYPE_IGPU);
    ggml_backend_reg_t gpu   = make_reg("TestGPU", GGML_BACKEND_DEVICE_TYPE_GPU);
    ggml_backend_register(accel);
    ggml_backend_register(igpu);
    ggml_backend_register(accel); // twice: still once
    ggml_backend_device_register(test_backend_device(accel)); // its device too
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs + 2);
    CHECK_EQ_INT(ggml_backend_dev_count(), n_devs + 2);
    CHECK(ggml_backend_reg_get(n_regs) == accel);
    CHECK(ggml_backend_reg_get(n_regs + 1) == igpu);
    CHECK(ggml_backend_dev_get(n_devs) == test_backend_device(accel));
    CHECK(ggml_backend_dev_backend_reg(ggml_backend_dev_get(n_devs + 1)) == igpu);

    // names compare without regard to case
    CHECK(ggml_backend_reg_by_name("TestAccel") == accel);
    CHECK(ggml_backend_reg_by_name("testaccel") == accel);
    CHECK(ggml_backend_reg_by_name("TESTIGPU") == igpu);
    CHECK(ggml_backend_reg_by_name("TestIGP") == NULL);
    CHECK(ggml_backend_reg_by_name("TestIGPUx") == NULL);
    CHECK(ggml_backend_dev_by_name("tEsTaCcEl") == test_backend_device(accel));
    CHECK(ggml_backend_dev_by_name("nothing") == NULL);
    CHECK(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_ACCEL) == test_backend_device(accel) ||
          count_devices_of_type(GGML_BACKEND_DEVICE_TYPE_ACCEL) > 1);
    if (!had_igpu) {
        CHECK(ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_IGPU) == test_backend_device(igpu));
    }

    ggml_backend_t be = ggml_backend_init_by_name("testaccel", NULL);
    CHECK(be != NULL && ggml_backend_get_device(be) == test_backend_device(accel));
    CHECK(strcmp(ggml_backend_name(be), "TestAccel") == 0);
    ggml_backend_free(be);
    CHECK(ggml_backend_init_by_name("missing", NULL) == NULL);
    be = ggml_backend_init_by_type(GGML_BACKEND_DEVICE_TYPE_IGPU, NULL);
    CHECK(be != NULL);
    ggml_backend_free(be);

    // the best: a GPU, else an integrated GPU, else the CPU
    if (!had_gpu) {
        be = ggml_backend_init_best();
        if (!had_igpu) {
            CHECK(be != NULL && ggml_backend_get_device(be) == test_backend_device(igpu));
        }
        ggml_backend_free(be);
        ggml_backend_register(gpu);
        be = ggml_backend_init_best();
        CHECK(be != NULL && ggml_backend_get_device(be) == test_backend_device(gpu));
        ggml_backend_free(be);
        ggml_backend_unload(gpu);
    }

    ggml_backend_unload(accel);
    CHECK(ggml_backend_reg_by_name("TestAccel") == NULL);
    CHECK(ggml_backend_dev_by_name("TestAccel") == NULL);
    CHECK(ggml_backend_reg_get(n_regs) == igpu); // the later entries move up
    ggml_backend_unload(igpu);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
    CHECK_EQ_INT(ggml_backend_dev_count(), n_devs);

    // unloading what is not registered: a log line, nothing else
    log_reset();
    ggml_backend_unload(igpu);
    CHECK_EQ_INT(g_log_errors, 1);
    CHECK(log_contains("is not registered"));
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);

    test_backend_reg_free(accel);
    test_backend_reg_free(igpu);
    test_backend_reg_free(gpu);
}

//
// many threads at once
//

enum { N_THREADS = 8, N_ROUNDS = 200 };

struct thread_args {
    int id;
    size_t stable_regs; // entries that stay registered throughout
    int failures;
};

static void * register_worker(void * arg) {
    struct thread_args * ta = (struct thread_args *) arg;
    char name[64];
    for (int round = 0; round < N_ROUNDS; round++) {
        snprintf(name, sizeof(name), "Thread%dRound%d", ta->id, round);
        ggml_backend_reg_t reg = make_reg(name, GGML_BACKEND_DEVICE_TYPE_ACCEL);
        ggml_backend_register(reg);
        ta->failures += ggml_backend_reg_by_name(name) != reg;
        ta->failures += ggml_backend_dev_by_name(name) != test_backend_device(reg);
        ta->failures += ggml_backend_reg_count() < ta->stable_regs + 1;
        // the entries before ours never move
        for (size_t i = 0; i < ta->stable_regs; i++) {
            ta->failures += ggml_backend_reg_get(i) == NULL;
        }
        ggml_backend_unload(reg);
        ta->failures += ggml_backend_reg_by_name(name) != NULL;
        ta->failures += ggml_backend_dev_by_name(name) != NULL;
        test_backend_reg_free(reg);
    }
    return NULL;
}

#ifdef TEST_MODULES_DIR
static void * module_worker(void * arg) {
    struct thread_args * ta = (struct thread_args *) arg;
    for (int round = 0; round < N_ROUNDS / 10; round++) {
        ggml_backend_reg_t reg = ggml_backend_load(TEST_MODULES_DIR "/good/libggml-testdl-lo.so");
        ta->failures += reg == NULL;
        if (reg != NULL) {
            ta->failures += ggml_backend_reg_by_name("testdl") != reg;
            ggml_backend_unload(reg);
        }
    }
    return NULL;
}
#endif

static void test_threads(void) {
    const size_t n_regs = ggml_backend_reg_count();
    const size_t n_devs = ggml_backend_dev_count();
    ggml_backend_reg_t stable = make_reg("Stable", GGML_BACKEND_DEVICE_TYPE_ACCEL);
    ggml_backend_register(stable);

    pthread_t threads[N_THREADS];
    struct thread_args args[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        args[i] = (struct thread_args) { .id = i, .stable_regs = n_regs + 1, .failures = 0 };
#ifdef TEST_MODULES_DIR
        void * (*fn)(void *) = i == 0 ? module_worker : register_worker;
#else
        void * (*fn)(void *) = register_worker;
#endif
        CHECK(pthread_create(&threads[i], NULL, fn, &args[i]) == 0);
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(threads[i], NULL);
        CHECK_MSG(args[i].failures == 0, "thread %d: %d failures", i, args[i].failures);
    }
    CHECK(ggml_backend_reg_get(n_regs) == stable);
    ggml_backend_unload(stable);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
    CHECK_EQ_INT(ggml_backend_dev_count(), n_devs);
    test_backend_reg_free(stable);
}


//
// entries that hand over something broken: refused with one log line each
//

static ggml_backend_dev_t broken_get_null_device(ggml_backend_reg_t reg, size_t index) {
    (void) reg;
    (void) index;
    return NULL;
}

static size_t broken_count_two(ggml_backend_reg_t reg) {
    (void) reg;
    return 2;
}

static ggml_backend_dev_t broken_get_first_device(ggml_backend_reg_t reg, size_t index) {
    (void) index;
    return test_backend_device(reg);
}

static _Atomic int g_count_asked = 0;

static size_t broken_growing_count(ggml_backend_reg_t reg) {
    (void) reg;
    return g_count_asked++ == 0 ? 1 : 2;
}

static const char * broken_null_name(ggml_backend_dev_t dev) {
    (void) dev;
    return NULL;
}

static ggml_backend_event_t broken_event_new(ggml_backend_dev_t dev) {
    (void) dev;
    return NULL;
}

enum breakage {
    BREAK_NULL_DEVICE, BREAK_NO_GET_NAME, BREAK_NO_GET_DEVICE_COUNT, BREAK_NO_GET_DEVICE, BREAK_EMPTY_NAME,
    BREAK_NO_SUPPORTS_OP, BREAK_NO_INIT_BACKEND, BREAK_NO_GET_PROPS, BREAK_EVENT_NEW_ONLY, BREAK_DEVICE_NULL_NAME,
    BREAK_FOREIGN_DEVICE, BREAK_COUNT_MISMATCH, BREAK_UNSTABLE_COUNT,
    BREAK_COUNT
};

struct breakage_case {
    enum breakage what;
    const char *  expected_text;
};

static void break_entry(ggml_backend_reg_t reg, enum breakage what) {
    ggml_backend_dev_t dev = test_backend_device(reg);
    switch (what) {
        case BREAK_NULL_DEVICE:         reg->iface.get_device = broken_get_null_device; break;
        case BREAK_NO_GET_NAME:         reg->iface.get_name = NULL; break;
        case BREAK_NO_GET_DEVICE_COUNT: reg->iface.get_device_count = NULL; break;
        case BREAK_NO_GET_DEVICE:       reg->iface.get_device = NULL; break;
        case BREAK_EMPTY_NAME:          break; // made with the name ""
        case BREAK_NO_SUPPORTS_OP:      dev->iface.supports_op = NULL; break;
        case BREAK_NO_INIT_BACKEND:     dev->iface.init_backend = NULL; break;
        case BREAK_NO_GET_PROPS:        dev->iface.get_props = NULL; break;
        case BREAK_EVENT_NEW_ONLY:      dev->iface.event_new = broken_event_new; dev->iface.event_free = NULL; break;
        case BREAK_DEVICE_NULL_NAME:    dev->iface.get_name = broken_null_name; break;
        case BREAK_FOREIGN_DEVICE:      dev->reg = NULL; break;
        case BREAK_COUNT_MISMATCH:
            reg->iface.get_device_count = broken_count_two;
            reg->iface.get_device       = broken_get_first_device;
            break;
        case BREAK_UNSTABLE_COUNT:
            g_count_asked = 0;
            reg->iface.get_device_count = broken_growing_count;
            reg->iface.get_device       = broken_get_first_device;
            break;
        case BREAK_COUNT:
            break;
    }
}

static void test_refused_entries(void) {
    const size_t n_regs = ggml_backend_reg_count();
    const size_t n_devs = ggml_backend_dev_count();

    const struct breakage_case cases[] = {
        { BREAK_NULL_DEVICE,         "device 0 of the 1 it counts is NULL" },
        { BREAK_NO_GET_NAME,         "its interface has no get_name" },
        { BREAK_NO_GET_DEVICE_COUNT, "its interface has no get_device_count" },
        { BREAK_NO_GET_DEVICE,       "its interface has no get_device" },
        { BREAK_EMPTY_NAME,          "it has no name" },
        { BREAK_NO_SUPPORTS_OP,      "device 0: its interface has no supports_op" },
        { BREAK_NO_INIT_BACKEND,     "device 0: its interface has no init_backend" },
        { BREAK_NO_GET_PROPS,        "device 0: its interface has no get_props" },
        { BREAK_EVENT_NEW_ONLY,      "device 0: its interface has no event_free" },
        { BREAK_DEVICE_NULL_NAME,    "device 0: it has no name" },
        { BREAK_FOREIGN_DEVICE,      "device 0 belongs to another backend" },
        { BREAK_COUNT_MISMATCH,      "it counts 2 devices, but device 1 is device 0 again" },
        { BREAK_UNSTABLE_COUNT,      "its device count changed from 1 to 2" },
    };
    _Static_assert(sizeof(cases) / sizeof(cases[0]) == BREAK_COUNT, "a case per breakage");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        ggml_backend_reg_t reg = make_reg(cases[i].what == BREAK_EMPTY_NAME ? "" : "Broken", GGML_BACKEND_DEVICE_TYPE_ACCEL);
        break_entry(reg, cases[i].what);
        log_reset();
        ggml_backend_register(reg);
        CHECK_MSG(g_log_errors == 1, "case %zu: %d errors", i, g_log_errors);
        CHECK_MSG(log_contains("ggml_backend_register: refusing backend"), "case %zu: log was: %s", i, g_log_text);
        CHECK_MSG(log_contains(cases[i].expected_text), "case %zu: log was: %s", i, g_log_text);
        CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
        CHECK_EQ_INT(ggml_backend_dev_count(), n_devs);
        CHECK(ggml_backend_reg_by_name("Broken") == NULL);
        CHECK(ggml_backend_dev_by_name("Broken") == NULL);
        test_backend_reg_free(reg);
    }

    // NULL
    log_reset();
    ggml_backend_register(NULL);
    ggml_backend_device_register(NULL);
    CHECK_EQ_INT(g_log_errors, 2);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
    CHECK_EQ_INT(ggml_backend_dev_count(), n_devs);

    // a device registered on its own is checked the same way
    ggml_backend_reg_t reg = make_reg("LoneDevice", GGML_BACKEND_DEVICE_TYPE_ACCEL);
    test_backend_device(reg)->iface.supports_buft = NULL;
    log_reset();
    ggml_backend_device_register(test_backend_device(reg));
    CHECK_EQ_INT(g_log_errors, 1);
    CHECK(log_contains("its interface has no supports_buft"));
    CHECK_EQ_INT(ggml_backend_dev_count(), n_devs);
    test_backend_reg_free(reg);

    // a second entry with a name registered already (names compare without regard to case)
    ggml_backend_reg_t first  = make_reg("TwiceNamed", GGML_BACKEND_DEVICE_TYPE_ACCEL);
    ggml_backend_reg_t second = make_reg("twicenamed", GGML_BACKEND_DEVICE_TYPE_ACCEL);
    ggml_backend_register(first);
    log_reset();
    ggml_backend_register(second);
    CHECK_EQ_INT(g_log_errors, 1);
    CHECK(log_contains("a backend named TwiceNamed is registered already"));
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs + 1);
    CHECK_EQ_INT(ggml_backend_dev_count(), n_devs + 1);
    CHECK(ggml_backend_reg_by_name("TWICENAMED") == first);
    ggml_backend_unload(first);
    test_backend_reg_free(first);
    test_backend_reg_free(second);

    // ... "CPU" twice, when the CPU backend is built in
    if (ggml_backend_reg_by_name("CPU") != NULL) {
        ggml_backend_reg_t cpu = ggml_backend_reg_by_name("CPU");
        ggml_backend_reg_t fake = make_reg("CPU", GGML_BACKEND_DEVICE_TYPE_CPU);
        log_reset();
        ggml_backend_register(fake);
        CHECK_EQ_INT(g_log_errors, 1);
        CHECK(log_contains("a backend named CPU is registered already"));
        CHECK(ggml_backend_reg_by_name("cpu") == cpu);
        CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
        test_backend_reg_free(fake);
    }
}

//
// modules
//

#ifdef TEST_MODULES_DIR

#define GOOD_DIR  TEST_MODULES_DIR "/good"
#define BAD_DIR   TEST_MODULES_DIR "/bad"
#define ENV_DIR   TEST_MODULES_DIR "/env"
#define FILE_DIR  TEST_MODULES_DIR "/file"
#define EMPTY_DIR TEST_MODULES_DIR "/empty"
#define HOSTILE_DIR TEST_MODULES_DIR "/hostile"
#define TIE_DIR     TEST_MODULES_DIR "/tie"
#define TIE_ENV_DIR TEST_MODULES_DIR "/tie-env"

// a module's backend works like any other; its counters come through get_proc_address
static void exercise_module(ggml_backend_reg_t reg) {
    CHECK_EQ_INT(ggml_backend_reg_dev_count(reg), 1);
    ggml_backend_dev_t dev = ggml_backend_reg_dev_get(reg, 0);
    CHECK(ggml_backend_dev_type(dev) == GGML_BACKEND_DEVICE_TYPE_ACCEL);
    void * sym = ggml_backend_reg_get_proc_address(reg, "test_backend_get_counters");
    CHECK(sym != NULL);
    CHECK(ggml_backend_reg_get_proc_address(reg, "no_such_function") == NULL);
    if (sym == NULL) {
        return;
    }
    test_backend_get_counters_t get_counters;
    memcpy(&get_counters, &sym, sizeof(sym));

    ggml_backend_t backend = ggml_backend_dev_init(dev, NULL);
    CHECK(backend != NULL);
    struct ggml_init_params params = { .mem_size = 4 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 33);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    CHECK(buf != NULL);
    float v[33];
    float w[33];
    for (int i = 0; i < 33; i++) {
        v[i] = (float) i * 0.25f - 3.0f;
    }
    ggml_backend_tensor_set(t, v, 0, sizeof(v));
    ggml_backend_tensor_get(t, w, 0, sizeof(w));
    CHECK(memcmp(v, w, sizeof(v)) == 0);
    struct test_backend_counters c;
    get_counters(dev, &c);
    CHECK_EQ_INT(c.bytes_set, sizeof(v));
    CHECK_EQ_INT(c.bytes_get, sizeof(w));
    ggml_backend_event_t ev = ggml_backend_event_new(dev);
    CHECK(ev != NULL);
    ggml_backend_event_record(ev, backend);
    ggml_backend_event_synchronize(ev);
    ggml_backend_event_free(ev);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(backend);
}

static void test_load_module(void) {
    const size_t n_regs = ggml_backend_reg_count();
    const size_t n_devs = ggml_backend_dev_count();

    log_reset();
    ggml_backend_reg_t reg = ggml_backend_load(GOOD_DIR "/libggml-testdl-hi.so");
    CHECK(reg != NULL);
    CHECK_EQ_INT(g_log_errors, 0);
    if (reg == NULL) {
        return;
    }
    CHECK_EQ_INT(reg->api_version, GGML_BACKEND_API_VERSION);
    CHECK(strcmp(ggml_backend_reg_name(reg), "testdl") == 0);
    CHECK(ggml_backend_reg_by_name("TESTDL") == reg);
    CHECK(strcmp(ggml_backend_dev_description(ggml_backend_reg_dev_get(reg, 0)), "test module hi") == 0);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs + 1);
    CHECK_EQ_INT(ggml_backend_dev_count(), n_devs + 1);
    // the module's entry is its own: not the test program's copy of the test backend
    CHECK(!test_backend_is_test_device(ggml_backend_reg_dev_get(reg, 0)));
    exercise_module(reg);

    // loading it again gives the same entry, once
    CHECK(ggml_backend_load(GOOD_DIR "/libggml-testdl-hi.so") == reg);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs + 1);

    ggml_backend_unload(reg);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
    CHECK_EQ_INT(ggml_backend_dev_count(), n_devs);
    CHECK(ggml_backend_reg_by_name("testdl") == NULL);

    // and after unloading it can come back
    reg = ggml_backend_load(GOOD_DIR "/libggml-testdl-lo.so");
    CHECK(reg != NULL && strcmp(ggml_backend_dev_description(ggml_backend_reg_dev_get(reg, 0)), "test module lo") == 0);
    ggml_backend_unload(reg);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
}

struct refusal {
    const char * path;
    const char * expected_text; // in the one log line
    bool         is_error;      // logged as an error (else a warning)
};

static void test_refused_modules(void) {
    const size_t n_regs = ggml_backend_reg_count();
    const struct refusal cases[] = {
        { BAD_DIR "/libggml-badapi.so",       "API version 1, this ggml implements version 2", true },
        { BAD_DIR "/libggml-notamodule.so",   "cannot load backend module",                    true },
        { BAD_DIR "/libggml-noinit.so",       "does not export ggml_backend_init",             true },
        { TEST_MODULES_DIR "/missing.so",     "cannot load backend module",                    true },
        { GOOD_DIR "/libggml-testdl-zero.so", "not supported on this system",                  false },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        log_reset();
        CHECK_MSG(ggml_backend_load(cases[i].path) == NULL, "%s", cases[i].path);
        CHECK_MSG(log_contains(cases[i].expected_text), "%s: log was: %s", cases[i].path, g_log_text);
        CHECK_MSG(log_contains(cases[i].path), "%s: the log line names the file", cases[i].path);
        CHECK_EQ_INT(g_log_errors, cases[i].is_error ? 1 : 0);
        CHECK_EQ_INT(g_log_warnings, cases[i].is_error ? 0 : 1);
        CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
    }
}


// modules that hand over something broken (test-hostile-module.c)
static void test_hostile_modules(void) {
    const size_t n_regs = ggml_backend_reg_count();
    const size_t n_devs = ggml_backend_dev_count();
    const bool has_cpu = ggml_backend_reg_by_name("CPU") != NULL;
    const struct refusal cases[] = {
        { HOSTILE_DIR "/libggml-nulldevice.so",    "device 0 of the 1 it counts is NULL",                 true },
        { HOSTILE_DIR "/libggml-nogetname.so",     "its interface has no get_name",                       true },
        { HOSTILE_DIR "/libggml-nosupportsop.so",  "device 0: its interface has no supports_op",          true },
        { HOSTILE_DIR "/libggml-foreigndevice.so", "device 0 belongs to another backend",                 true },
        { HOSTILE_DIR "/libggml-countmismatch.so", "it counts 2 devices, but device 1 is device 0 again", true },
        { HOSTILE_DIR "/libggml-unstablecount.so", "its device count changed from 1 to 2",                true },
        { HOSTILE_DIR "/libggml-cpuname.so",       "a backend named CPU is registered already",           true },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const bool is_cpu_case = strstr(cases[i].path, "cpuname") != NULL;
        log_reset();
        ggml_backend_reg_t reg = ggml_backend_load(cases[i].path);
        if (is_cpu_case && !has_cpu) {
            // without the CPU backend the name is free: nothing wrong with it then
            CHECK(reg != NULL);
            ggml_backend_unload(reg);
            continue;
        }
        CHECK_MSG(reg == NULL, "%s", cases[i].path);
        CHECK_MSG(log_contains(cases[i].expected_text), "%s: log was: %s", cases[i].path, g_log_text);
        CHECK_MSG(log_contains("refusing backend module"), "%s: log was: %s", cases[i].path, g_log_text);
        CHECK_MSG(log_contains(cases[i].path), "%s: the log line names the file", cases[i].path);
        CHECK_EQ_INT(g_log_errors, 1);
        CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
        CHECK_EQ_INT(ggml_backend_dev_count(), n_devs);
    }
    // the search refuses them the same way
    log_reset();
    ggml_backend_load_all_from_path(HOSTILE_DIR);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs + (has_cpu ? 0 : 1));
    CHECK_EQ_INT(g_log_errors, has_cpu ? 7 : 6);
    if (!has_cpu) {
        ggml_backend_unload(ggml_backend_reg_by_name("cpu"));
    }

    // a second module of a name registered already
    ggml_backend_reg_t hi = ggml_backend_load(GOOD_DIR "/libggml-testdl-hi.so");
    CHECK(hi != NULL);
    log_reset();
    CHECK(ggml_backend_load(GOOD_DIR "/libggml-testdl-lo.so") == NULL);
    CHECK_EQ_INT(g_log_errors, 1);
    CHECK(log_contains("a backend named testdl is registered already"));
    CHECK(ggml_backend_reg_by_name("testdl") == hi);
    ggml_backend_unload(hi);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
}

static const char * loaded_variant(const char * name) {
    ggml_backend_reg_t reg = ggml_backend_reg_by_name(name);
    return reg != NULL ? ggml_backend_dev_description(ggml_backend_reg_dev_get(reg, 0)) : "(none)";
}

// equal scores: the first found is loaded
static void test_load_all_tie(void) {
    const size_t n_regs = ggml_backend_reg_count();
    // a and b score 3, c scores 2; a comes first in name order
    ggml_backend_load_all_from_path(TIE_DIR);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs + 1);
    CHECK_MSG(strcmp(loaded_variant("testtie"), "test module a") == 0, "loaded %s", loaded_variant("testtie"));
    ggml_backend_unload(ggml_backend_reg_by_name("testtie"));

    // 0 (also 3) sorts before a, but is found later: in GGML_BACKEND_PATH
    setenv("GGML_BACKEND_PATH", TIE_ENV_DIR, 1);
    ggml_backend_load_all_from_path(TIE_DIR);
    CHECK_MSG(strcmp(loaded_variant("testtie"), "test module a") == 0, "loaded %s", loaded_variant("testtie"));
    ggml_backend_unload(ggml_backend_reg_by_name("testtie"));
    unsetenv("GGML_BACKEND_PATH");
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
}

static void test_load_all(void) {
    const size_t n_regs = ggml_backend_reg_count();

    // of the four variants of testdl, the highest score wins
    log_reset();
    ggml_backend_load_all_from_path(GOOD_DIR);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs + 1);
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("testdl");
    CHECK(reg != NULL);
    if (reg != NULL) {
        CHECK(strcmp(ggml_backend_dev_description(ggml_backend_reg_dev_get(reg, 0)), "test module hi") == 0);
    }
    CHECK_EQ_INT(g_log_errors, 0);
    // a name registered already is not loaded twice
    ggml_backend_load_all_from_path(GOOD_DIR);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs + 1);
    ggml_backend_unload(reg);

    // nothing usable, nothing crashes
    log_reset();
    ggml_backend_load_all_from_path(BAD_DIR);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);
    CHECK(log_contains("libggml-notamodule.so"));
    CHECK(log_contains("API version 1"));
    ggml_backend_load_all_from_path(EMPTY_DIR);
    ggml_backend_load_all_from_path(TEST_MODULES_DIR "/does-not-exist");
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);

    // GGML_BACKEND_PATH: a directory is searched
    setenv("GGML_BACKEND_PATH", ENV_DIR, 1);
    ggml_backend_load_all_from_path(EMPTY_DIR);
    reg = ggml_backend_reg_by_name("testenv");
    CHECK(reg != NULL);
    ggml_backend_unload(reg);

    // ... a file is loaded, whatever its name
    setenv("GGML_BACKEND_PATH", FILE_DIR "/custom-testfile-module.so", 1);
    ggml_backend_load_all_from_path(EMPTY_DIR);
    reg = ggml_backend_reg_by_name("testfile");
    CHECK(reg != NULL);
    ggml_backend_unload(reg);

    // ... and both, with empty entries and missing ones in between
    setenv("GGML_BACKEND_PATH", "::" TEST_MODULES_DIR "/nowhere:" FILE_DIR "/custom-testfile-module.so:" ENV_DIR ":", 1);
    ggml_backend_load_all_from_path(EMPTY_DIR);
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs + 2);
    ggml_backend_reg_t r1 = ggml_backend_reg_by_name("testenv");
    ggml_backend_reg_t r2 = ggml_backend_reg_by_name("testfile");
    CHECK(r1 != NULL && r2 != NULL);
    ggml_backend_unload(r1);
    ggml_backend_unload(r2);
    unsetenv("GGML_BACKEND_PATH");
    CHECK_EQ_INT(ggml_backend_reg_count(), n_regs);

    // without a path: the library's directory and the program's
    char exe[4096];
    const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    CHECK(len > 0);
    exe[len > 0 ? len : 0] = '\0';
    log_reset();
    ggml_backend_load_all();
    char expected[4200];
    snprintf(expected, sizeof(expected), "searching %s for backend modules", dirname(exe));
    CHECK_MSG(log_contains(expected), "log was: %s", g_log_text);
    CHECK_EQ_INT(g_log_errors, 0);
}

#endif // TEST_MODULES_DIR

static struct ggml_backend_meta_split_state mirror_all(const struct ggml_tensor * tensor, void * user_data) {
    (void) tensor;
    (void) user_data;
    return mt_split_mirrored();
}

// The meta device over any listed device (the same one twice will do); it
// refuses a missing callback with one error line. The axis names are upstream's.
// (tests/test-backend-meta.c tests what it computes.)
static void test_meta_device(void) {
    CHECK(strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_0), "0") == 0);
    CHECK(strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_3), "3") == 0);
    CHECK(strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_MIRRORED), "MIRRORED") == 0);
    CHECK(strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_PARTIAL), "PARTIAL") == 0);
    CHECK(strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_NONE), "NONE") == 0);
    CHECK(strcmp(ggml_backend_meta_split_axis_name(GGML_BACKEND_SPLIT_AXIS_UNKNOWN), "UNKNOWN") == 0);

    // any device will do (a build without the CPU backend may have none: a
    // CPU Vulkan driver is not listed unless named)
    ggml_backend_dev_t dev = ggml_backend_dev_count() > 0 ? ggml_backend_dev_get(0) : NULL;
    ggml_backend_dev_t devs[2] = { dev, dev };
    log_reset();
    CHECK(ggml_backend_meta_device(devs, 2, NULL, NULL) == NULL);
    CHECK_EQ_INT(g_log_errors, 1);
    CHECK(log_contains("split-state callback"));
    if (dev == NULL) {
        return;
    }
    ggml_backend_dev_t meta = ggml_backend_meta_device(devs, 2, mirror_all, NULL);
    CHECK(meta != NULL);
    CHECK(ggml_backend_dev_type(meta) == GGML_BACKEND_DEVICE_TYPE_META);
    CHECK(ggml_backend_meta_device(devs, 2, mirror_all, NULL) == meta);
    // not a registry's device: the registry lists the same devices as before
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        CHECK(ggml_backend_dev_get(i) != meta);
    }
}

int main(void) {
    ggml_log_set(capture_log, NULL);

    test_enumeration();
    test_threads();
    test_refused_entries();
    test_meta_device();
#ifdef TEST_MODULES_DIR
    test_load_module();
    test_refused_modules();
    test_hostile_modules();
    test_load_all();
    test_load_all_tie();
#else
    printf("modules not built (static libraries): module tests skipped\n");
#endif

    ggml_log_set(NULL, NULL);
    return TEST_RESULT();
}
