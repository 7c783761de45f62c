// ggml-backend-reg.c: the backend registry (libggml).
//
// The registry lists the registry entries (backend families) and their
// devices. The backends compiled into libggml register themselves the first
// time any registry function runs; others come from modules.
//
// Thread safety: built-in registration runs once (pthread_once); the lists
// are guarded by one recursive mutex, so a backend's callbacks that the
// registry calls with the lock held (device enumeration, names) may
// themselves use the registry. A built-in registry function must not.
//
// Modules. ggml_backend_load(path) opens a shared library (RTLD_NOW |
// RTLD_LOCAL) and refuses it, with one log line and nothing left loaded,
// when
//   - the dynamic loader cannot open it (not a shared library, missing
//     dependencies),
//   - it does not itself export ggml_backend_init,
//   - it exports ggml_backend_score and that returns 0 (not supported on
//     this system),
//   - ggml_backend_init returns NULL or a registry entry whose api_version
//     is not GGML_BACKEND_API_VERSION.
// ggml_backend_unload unregisters an entry and its devices, and closes the
// module if it came from one.
//
// What an entry hands over is checked before anything of it is listed, for
// modules and for ggml_backend_register alike (see reg_check_locked): the
// interface members every caller relies on, a name that no other entry has
// (compared case-insensitively: "CPU" cannot come twice), and a device for
// every index below the device count, each distinct, complete and pointing
// back to the entry, with the count the same when asked again. An entry that
// fails is refused with one log line and nothing of it is registered.
// Registering the very same entry again is no error and changes nothing.
//
// ggml_backend_load_all_from_path(dir_path) looks for module files named
// libggml-<name>.so or libggml-<name>-<variant>.so (so <name> has no '-')
// in, in this order:
//   1. dir_path if given, otherwise the directory of libggml itself and the
//      directory of the executable;
//   2. each entry of GGML_BACKEND_PATH (colon-separated): a directory is
//      searched like the others, a file is loaded directly.
// The candidates are grouped by <name>. Names already registered (compared
// case-insensitively with the registry entries' names) are skipped; files
// without ggml_backend_init of their own (libggml-base.so, for one) are
// passed over quietly. Of each remaining name, the variant with the highest
// ggml_backend_score (1 when it exports none; 0 means unusable) is loaded;
// among equal scores, the first found.

#include "ggml-backend-dl.h"
#include "ggml-impl.h"

#ifdef GGML_USE_CPU
#include "ggml-cpu.h"
#endif
#ifdef GGML_USE_VULKAN
#include "ggml-vulkan.h"
#endif

#ifdef GGML_USE_BLAS
#include "ggml-blas.h"
#endif
#ifdef GGML_USE_MPI
#include "ggml-mpi.h"
#endif

#include <ctype.h>
#include <pthread.h>
#include <stdio.h>

struct reg_entry {
    ggml_backend_reg_t reg;
    void *             handle; // the module it was loaded from, or NULL
};

struct registry {
    pthread_mutex_t      mutex;
    struct reg_entry   * entries;
    size_t               n_entries;
    size_t               cap_entries;
    ggml_backend_dev_t * devices;
    size_t               n_devices;
    size_t               cap_devices;
};

static struct registry g_registry;
static pthread_once_t  g_registry_once = PTHREAD_ONCE_INIT;

// grow an array to hold at least n + extra elements; false when out of memory
static bool reserve_more(void ** array, size_t * cap, size_t n, size_t extra, size_t elem_size) {
    if (extra <= *cap - n) {
        return true;
    }
    const size_t limit = SIZE_MAX / elem_size / 2;
    if (n > limit || extra > limit - n) {
        return false;
    }
    size_t new_cap = *cap == 0 ? 8 : *cap;
    while (new_cap < n + extra) {
        new_cap *= 2;
    }
    void * grown = realloc(*array, new_cap * elem_size);
    if (grown == NULL) {
        return false;
    }
    *array = grown;
    *cap   = new_cap;
    return true;
}

static bool reserve_one_more(void ** array, size_t * cap, size_t n, size_t elem_size) {
    return reserve_more(array, cap, n, 1, elem_size);
}

static bool equals_ignoring_case(const char * a, const char * b) {
    for (; *a != '\0' && *b != '\0'; a++, b++) {
        if (tolower((unsigned char) *a) != tolower((unsigned char) *b)) {
            return false;
        }
    }
    return *a == *b;
}

// The interface members of a device that the wrappers of ggml-backend.c call
// without a check: NULL when all are there, else the name of one missing.
static const char * device_missing_member(ggml_backend_dev_t device) {
    const struct ggml_backend_device_i * d = &device->iface;
    if (d->get_name == NULL)        { return "get_name"; }
    if (d->get_description == NULL) { return "get_description"; }
    if (d->get_memory == NULL)      { return "get_memory"; }
    if (d->get_type == NULL)        { return "get_type"; }
    if (d->get_props == NULL)       { return "get_props"; }
    if (d->init_backend == NULL)    { return "init_backend"; }
    if (d->get_buffer_type == NULL) { return "get_buffer_type"; }
    if (d->supports_op == NULL)     { return "supports_op"; }
    if (d->supports_buft == NULL)   { return "supports_buft"; }
    if (d->event_new != NULL && d->event_free == NULL) {
        return "event_free (it has event_new)";
    }
    return NULL;
}

// false, with the reason in why, when device cannot be listed
static bool device_check(ggml_backend_dev_t device, char * why, size_t why_len) {
    const char * missing = device_missing_member(device);
    if (missing != NULL) {
        snprintf(why, why_len, "its interface has no %s", missing);
        return false;
    }
    if (device->iface.get_name(device) == NULL) {
        snprintf(why, why_len, "it has no name");
        return false;
    }
    return true;
}

// Is the entry fit to be listed? False, with the reason in why, when not.
static bool reg_check_locked(ggml_backend_reg_t reg, char * why, size_t why_len) {
    const struct ggml_backend_reg_i * r = &reg->iface;
    const char * missing = r->get_name == NULL ? "get_name" : r->get_device_count == NULL ? "get_device_count"
                         : r->get_device == NULL ? "get_device" : NULL;
    if (missing != NULL) {
        snprintf(why, why_len, "its interface has no %s", missing);
        return false;
    }
    const char * name = r->get_name(reg);
    if (name == NULL || name[0] == '\0') {
        snprintf(why, why_len, "it has no name");
        return false;
    }
    for (size_t i = 0; i < g_registry.n_entries; i++) {
        if (equals_ignoring_case(ggml_backend_reg_name(g_registry.entries[i].reg), name)) {
            snprintf(why, why_len, "a backend named %s is registered already", ggml_backend_reg_name(g_registry.entries[i].reg));
            return false;
        }
    }
    const size_t n_devices = r->get_device_count(reg);
    for (size_t i = 0; i < n_devices; i++) {
        ggml_backend_dev_t device = r->get_device(reg, i);
        char dev_why[160];
        if (device == NULL) {
            snprintf(why, why_len, "%s: device %zu of the %zu it counts is NULL", name, i, n_devices);
            return false;
        }
        if (device->reg != reg) {
            snprintf(why, why_len, "%s: device %zu belongs to another backend (its reg is %p)", name, i, (void *) device->reg);
            return false;
        }
        if (!device_check(device, dev_why, sizeof(dev_why))) {
            snprintf(why, why_len, "%s: device %zu: %s", name, i, dev_why);
            return false;
        }
        for (size_t j = 0; j < i; j++) {
            if (r->get_device(reg, j) == device) {
                snprintf(why, why_len, "%s: it counts %zu devices, but device %zu is device %zu again", name, n_devices, i, j);
                return false;
            }
        }
    }
    const size_t n_again = r->get_device_count(reg);
    if (n_again != n_devices) {
        snprintf(why, why_len, "%s: its device count changed from %zu to %zu", name, n_devices, n_again);
        return false;
    }
    return true;
}

static bool device_is_registered_locked(ggml_backend_dev_t device) {
    for (size_t i = 0; i < g_registry.n_devices; i++) {
        if (g_registry.devices[i] == device) {
            return true;
        }
    }
    return false;
}

// the capacity for it must have been reserved
static void add_device_locked(ggml_backend_dev_t device) {
    if (device_is_registered_locked(device)) {
        return;
    }
    g_registry.devices[g_registry.n_devices++] = device;
    GGML_LOG_DEBUG("%s: registered device %s (%s)\n", __func__, ggml_backend_dev_name(device), ggml_backend_dev_description(device));
}

static bool is_registered_locked(ggml_backend_reg_t reg) {
    for (size_t i = 0; i < g_registry.n_entries; i++) {
        if (g_registry.entries[i].reg == reg) {
            return true;
        }
    }
    return false;
}

enum register_result {
    REGISTER_ADDED,
    REGISTER_KNOWN,   // this very entry is registered already
    REGISTER_REFUSED, // why says why
};

static enum register_result register_backend_locked(ggml_backend_reg_t reg, void * handle, char * why, size_t why_len) {
    if (is_registered_locked(reg)) {
        return REGISTER_KNOWN;
    }
    if (!reg_check_locked(reg, why, why_len)) {
        return REGISTER_REFUSED;
    }
    const size_t n_devices = ggml_backend_reg_dev_count(reg);
    // room for all of it first: an entry is listed with all its devices or not at all
    if (!reserve_one_more((void **) &g_registry.entries, &g_registry.cap_entries, g_registry.n_entries, sizeof(struct reg_entry)) ||
        !reserve_more((void **) &g_registry.devices, &g_registry.cap_devices, g_registry.n_devices, n_devices, sizeof(ggml_backend_dev_t))) {
        snprintf(why, why_len, "out of memory");
        return REGISTER_REFUSED;
    }
    g_registry.entries[g_registry.n_entries++] = (struct reg_entry) { .reg = reg, .handle = handle };
    GGML_LOG_DEBUG("%s: registered backend %s (%zu devices)\n", __func__, ggml_backend_reg_name(reg), n_devices);
    for (size_t i = 0; i < n_devices; i++) {
        add_device_locked(ggml_backend_reg_dev_get(reg, i));
    }
    return REGISTER_ADDED;
}

static void registry_init(void) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_registry.mutex, &attr);
    pthread_mutexattr_destroy(&attr);

    // the backends compiled in, most capable first
    pthread_mutex_lock(&g_registry.mutex);
#ifdef GGML_USE_MPI
    {
        char mpi_why[256];
        if (register_backend_locked(ggml_backend_mpi_reg(), NULL, mpi_why, sizeof(mpi_why)) == REGISTER_REFUSED) {
            GGML_LOG_ERROR("%s: the MPI backend is not registered: %s\n", __func__, mpi_why);
        }
    }
#endif
#ifdef GGML_USE_VULKAN
    {
        char vk_why[256];
        if (register_backend_locked(ggml_backend_vk_reg(), NULL, vk_why, sizeof(vk_why)) == REGISTER_REFUSED) {
            GGML_LOG_ERROR("%s: the Vulkan backend is not registered: %s\n", __func__, vk_why);
        }
    }
#endif
#ifdef GGML_USE_BLAS
    {
        char blas_why[256];
        if (register_backend_locked(ggml_backend_blas_reg(), NULL, blas_why, sizeof(blas_why)) == REGISTER_REFUSED) {
            GGML_LOG_ERROR("%s: the BLAS backend is not registered: %s\n", __func__, blas_why);
        }
    }
#endif
#ifdef GGML_USE_CPU
    char why[256];
    if (register_backend_locked(ggml_backend_cpu_reg(), NULL, why, sizeof(why)) == REGISTER_REFUSED) {
        GGML_LOG_ERROR("%s: the CPU backend is not registered: %s\n", __func__, why);
    }
#endif
    pthread_mutex_unlock(&g_registry.mutex);
}

static void registry_lock(void) {
    pthread_once(&g_registry_once, registry_init);
    pthread_mutex_lock(&g_registry.mutex);
}

static void registry_unlock(void) {
    pthread_mutex_unlock(&g_registry.mutex);
}

void ggml_backend_register(ggml_backend_reg_t reg) {
    if (reg == NULL) {
        GGML_LOG_ERROR("%s: refusing a NULL backend\n", __func__);
        return;
    }
    char why[256];
    registry_lock();
    const enum register_result result = register_backend_locked(reg, NULL, why, sizeof(why));
    registry_unlock();
    if (result == REGISTER_REFUSED) {
        GGML_LOG_ERROR("%s: refusing backend %p: %s\n", __func__, (void *) reg, why);
    }
}

void ggml_backend_device_register(ggml_backend_dev_t device) {
    char why[160];
    if (device == NULL || !device_check(device, why, sizeof(why))) {
        GGML_LOG_ERROR("%s: refusing device %p: %s\n", __func__, (void *) device, device == NULL ? "it is NULL" : why);
        return;
    }
    registry_lock();
    const bool ok = device_is_registered_locked(device) ||
                    reserve_one_more((void **) &g_registry.devices, &g_registry.cap_devices, g_registry.n_devices, sizeof(ggml_backend_dev_t));
    if (ok) {
        add_device_locked(device);
    }
    registry_unlock();
    if (!ok) {
        GGML_LOG_ERROR("%s: out of memory: device %s not registered\n", __func__, ggml_backend_dev_name(device));
    }
}

//
// enumeration
//

size_t ggml_backend_reg_count(void) {
    registry_lock();
    const size_t n = g_registry.n_entries;
    registry_unlock();
    return n;
}

ggml_backend_reg_t ggml_backend_reg_get(size_t index) {
    registry_lock();
    const size_t n = g_registry.n_entries;
    ggml_backend_reg_t reg = index < n ? g_registry.entries[index].reg : NULL;
    registry_unlock();
    if (reg == NULL) {
        GGML_ABORT("%s: index %zu out of range (%zu backends registered)", __func__, index, n);
    }
    return reg;
}

ggml_backend_reg_t ggml_backend_reg_by_name(const char * name) {
    GGML_ASSERT(name != NULL);
    ggml_backend_reg_t found = NULL;
    registry_lock();
    for (size_t i = 0; i < g_registry.n_entries && found == NULL; i++) {
        if (equals_ignoring_case(ggml_backend_reg_name(g_registry.entries[i].reg), name)) {
            found = g_registry.entries[i].reg;
        }
    }
    registry_unlock();
    return found;
}

size_t ggml_backend_dev_count(void) {
    registry_lock();
    const size_t n = g_registry.n_devices;
    registry_unlock();
    return n;
}

ggml_backend_dev_t ggml_backend_dev_get(size_t index) {
    registry_lock();
    const size_t n = g_registry.n_devices;
    ggml_backend_dev_t dev = index < n ? g_registry.devices[index] : NULL;
    registry_unlock();
    if (dev == NULL) {
        GGML_ABORT("%s: index %zu out of range (%zu devices registered)", __func__, index, n);
    }
    return dev;
}

ggml_backend_dev_t ggml_backend_dev_by_name(const char * name) {
    GGML_ASSERT(name != NULL);
    ggml_backend_dev_t found = NULL;
    registry_lock();
    for (size_t i = 0; i < g_registry.n_devices && found == NULL; i++) {
        if (equals_ignoring_case(ggml_backend_dev_name(g_registry.devices[i]), name)) {
            found = g_registry.devices[i];
        }
    }
    registry_unlock();
    return found;
}

ggml_backend_dev_t ggml_backend_dev_by_type(enum ggml_backend_dev_type type) {
    ggml_backend_dev_t found = NULL;
    registry_lock();
    for (size_t i = 0; i < g_registry.n_devices && found == NULL; i++) {
        if (ggml_backend_dev_type(g_registry.devices[i]) == type) {
            found = g_registry.devices[i];
        }
    }
    registry_unlock();
    return found;
}

ggml_backend_t ggml_backend_init_by_name(const char * name, const char * params) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_name(name);
    if (dev == NULL) {
        return NULL;
    }
    return ggml_backend_dev_init(dev, params);
}

ggml_backend_t ggml_backend_init_by_type(enum ggml_backend_dev_type type, const char * params) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(type);
    if (dev == NULL) {
        return NULL;
    }
    return ggml_backend_dev_init(dev, params);
}

ggml_backend_t ggml_backend_init_best(void) {
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_GPU);
    if (dev == NULL) {
        dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_IGPU);
    }
    if (dev == NULL) {
        dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    }
    if (dev == NULL) {
        return NULL;
    }
    return ggml_backend_dev_init(dev, NULL);
}

//
// modules
//

ggml_backend_reg_t ggml_backend_load(const char * path) {
    GGML_ASSERT(path != NULL);
    pthread_once(&g_registry_once, registry_init);

    struct backend_module module;
    const char * error = NULL;
    if (backend_module_open(path, &module, &error) != BACKEND_MODULE_OK) {
        GGML_LOG_ERROR("%s: cannot load backend module %s: %s\n", __func__, path, error);
        return NULL;
    }
    if (module.score != NULL && module.score() == 0) {
        GGML_LOG_WARN("%s: backend module %s is not supported on this system\n", __func__, path);
        backend_module_close(&module);
        return NULL;
    }
    ggml_backend_reg_t reg = module.init();
    if (reg == NULL) {
        GGML_LOG_ERROR("%s: backend module %s failed to initialise: ggml_backend_init returned NULL\n", __func__, path);
        backend_module_close(&module);
        return NULL;
    }
    if (reg->api_version != GGML_BACKEND_API_VERSION) {
        GGML_LOG_ERROR("%s: backend module %s was built for backend API version %d, this ggml implements version %d\n",
                       __func__, path, reg->api_version, GGML_BACKEND_API_VERSION);
        backend_module_close(&module);
        return NULL;
    }

    char why[256];
    registry_lock();
    const enum register_result result = register_backend_locked(reg, module.handle, why, sizeof(why));
    registry_unlock();
    if (result == REGISTER_REFUSED) {
        GGML_LOG_ERROR("%s: refusing backend module %s: %s\n", __func__, path, why);
        backend_module_close(&module);
        return NULL;
    }
    if (result == REGISTER_KNOWN) {
        // loaded before: the dynamic loader handed out the same library again
        backend_module_close(&module);
        return reg;
    }
    GGML_LOG_INFO("%s: loaded %s backend from %s\n", __func__, ggml_backend_reg_name(reg), path);
    return reg;
}

void ggml_backend_unload(ggml_backend_reg_t reg) {
    if (reg == NULL) {
        return;
    }
    void * handle = NULL;
    bool found = false;
    registry_lock();
    for (size_t i = 0; i < g_registry.n_entries; i++) {
        if (g_registry.entries[i].reg == reg) {
            handle = g_registry.entries[i].handle;
            memmove(&g_registry.entries[i], &g_registry.entries[i + 1], (g_registry.n_entries - i - 1) * sizeof(struct reg_entry));
            g_registry.n_entries--;
            found = true;
            break;
        }
    }
    if (found) {
        size_t kept = 0;
        for (size_t i = 0; i < g_registry.n_devices; i++) {
            if (ggml_backend_dev_backend_reg(g_registry.devices[i]) != reg) {
                g_registry.devices[kept++] = g_registry.devices[i];
            }
        }
        g_registry.n_devices = kept;
    }
    registry_unlock();

    if (!found) {
        GGML_LOG_ERROR("%s: backend %p is not registered\n", __func__, (void *) reg);
        return;
    }
    if (handle != NULL) {
        struct backend_module module = { .handle = handle, .init = NULL, .score = NULL };
        backend_module_close(&module);
    }
}

//
// discovery
//

struct module_candidate {
    char * path;
    char * name;
};

struct candidate_list {
    struct module_candidate * items;
    size_t n;
    size_t cap;
};

static void add_candidate(const char * path, const char * name, void * user_data) {
    struct candidate_list * list = (struct candidate_list *) user_data;
    if (!reserve_one_more((void **) &list->items, &list->cap, list->n, sizeof(struct module_candidate))) {
        return;
    }
    char * p = strdup(path);
    char * n = strdup(name);
    if (p == NULL || n == NULL) {
        free(p);
        free(n);
        return;
    }
    list->items[list->n++] = (struct module_candidate) { .path = p, .name = n };
}

static void free_candidates(struct candidate_list * list) {
    for (size_t i = 0; i < list->n; i++) {
        free(list->items[i].path);
        free(list->items[i].name);
    }
    free(list->items);
}

static bool name_is_registered(const char * name) {
    return ggml_backend_reg_by_name(name) != NULL;
}

// score of a candidate: 0 when it cannot be used here, -1 when it is no module
static int probe_candidate(const char * path) {
    struct backend_module module;
    const char * error = NULL;
    const enum backend_module_status status = backend_module_open(path, &module, &error);
    if (status == BACKEND_MODULE_NOT_LOADABLE) {
        GGML_LOG_WARN("%s: skipping %s: %s\n", __func__, path, error);
        return -1;
    }
    if (status == BACKEND_MODULE_NO_ENTRY) {
        GGML_LOG_DEBUG("%s: skipping %s: %s\n", __func__, path, error);
        return -1;
    }
    const int score = module.score != NULL ? module.score() : 1;
    GGML_LOG_DEBUG("%s: %s scores %d\n", __func__, path, score);
    backend_module_close(&module);
    return score;
}

static void load_best_of_each_name(struct candidate_list * list) {
    for (size_t i = 0; i < list->n; i++) {
        const char * name = list->items[i].name;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            seen = strcmp(list->items[j].name, name) == 0;
        }
        if (seen) {
            continue;
        }
        if (name_is_registered(name)) {
            GGML_LOG_DEBUG("%s: backend %s is already registered\n", __func__, name);
            continue;
        }
        const char * best_path = NULL;
        int best_score = 0;
        for (size_t j = i; j < list->n; j++) {
            if (strcmp(list->items[j].name, name) != 0) {
                continue;
            }
            const int score = probe_candidate(list->items[j].path);
            if (score > best_score) {
                best_score = score;
                best_path  = list->items[j].path;
            }
        }
        if (best_path != NULL) {
            ggml_backend_load(best_path);
        } else {
            GGML_LOG_DEBUG("%s: no usable module for backend %s\n", __func__, name);
        }
    }
}

static void scan_dir_once(char ** scanned, size_t n_scanned, const char * dir, struct candidate_list * list) {
    for (size_t i = 0; i < n_scanned; i++) {
        if (scanned[i] != NULL && strcmp(scanned[i], dir) == 0) {
            return;
        }
    }
    GGML_LOG_DEBUG("%s: searching %s for backend modules\n", __func__, dir);
    backend_dl_scan_dir(dir, add_candidate, list);
}

void ggml_backend_load_all(void) {
    ggml_backend_load_all_from_path(NULL);
}

void ggml_backend_load_all_from_path(const char * dir_path) {
    pthread_once(&g_registry_once, registry_init);

    struct candidate_list list = { .items = NULL, .n = 0, .cap = 0 };
    char * dirs[2] = { NULL, NULL };
    if (dir_path != NULL) {
        scan_dir_once(dirs, 0, dir_path, &list);
    } else {
        dirs[0] = backend_dl_library_dir();
        dirs[1] = backend_dl_executable_dir();
        if (dirs[0] != NULL) {
            scan_dir_once(dirs, 0, dirs[0], &list);
        }
        if (dirs[1] != NULL) {
            scan_dir_once(dirs, 1, dirs[1], &list);
        }
    }

    // GGML_BACKEND_PATH: directories are searched, files are loaded as given
    const char * env = getenv("GGML_BACKEND_PATH");
    char * env_copy = env != NULL ? strdup(env) : NULL;
    if (env_copy != NULL) {
        for (char * entry = env_copy; entry != NULL; ) {
            char * colon = strchr(entry, ':');
            if (colon != NULL) {
                *colon = '\0';
            }
            if (entry[0] != '\0' && backend_dl_is_dir(entry)) {
                scan_dir_once(dirs, 2, entry, &list);
            }
            entry = colon != NULL ? colon + 1 : NULL;
        }
    }

    load_best_of_each_name(&list);

    if (env_copy != NULL) {
        // the separators are NUL now: walk the entries again
        const size_t len = strlen(env);
        for (size_t pos = 0; pos < len; pos += strlen(env_copy + pos) + 1) {
            const char * entry = env_copy + pos;
            if (entry[0] != '\0' && backend_dl_is_file(entry)) {
                ggml_backend_load(entry);
            }
        }
    }

    free(env_copy);
    free(dirs[0]);
    free(dirs[1]);
    free_candidates(&list);
}
