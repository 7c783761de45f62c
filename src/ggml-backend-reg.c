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

#include <ctype.h>
#include <pthread.h>

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

// grow an array to hold n + 1 elements; false when out of memory
static bool reserve_one_more(void ** array, size_t * cap, size_t n, size_t elem_size) {
    if (n < *cap) {
        return true;
    }
    const size_t new_cap = *cap == 0 ? 8 : 2 * *cap;
    void * grown = realloc(*array, new_cap * elem_size);
    if (grown == NULL) {
        return false;
    }
    *array = grown;
    *cap   = new_cap;
    return true;
}

static void register_device_locked(ggml_backend_dev_t device) {
    for (size_t i = 0; i < g_registry.n_devices; i++) {
        if (g_registry.devices[i] == device) {
            return;
        }
    }
    if (!reserve_one_more((void **) &g_registry.devices, &g_registry.cap_devices, g_registry.n_devices, sizeof(ggml_backend_dev_t))) {
        GGML_LOG_ERROR("%s: out of memory: device %s not registered\n", __func__, ggml_backend_dev_name(device));
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

// false when reg was registered already, or memory ran out
static bool register_backend_locked(ggml_backend_reg_t reg, void * handle) {
    if (is_registered_locked(reg)) {
        return false;
    }
    if (!reserve_one_more((void **) &g_registry.entries, &g_registry.cap_entries, g_registry.n_entries, sizeof(struct reg_entry))) {
        GGML_LOG_ERROR("%s: out of memory: backend %s not registered\n", __func__, ggml_backend_reg_name(reg));
        return false;
    }
    g_registry.entries[g_registry.n_entries++] = (struct reg_entry) { .reg = reg, .handle = handle };
    const size_t n_devices = ggml_backend_reg_dev_count(reg);
    GGML_LOG_DEBUG("%s: registered backend %s (%zu devices)\n", __func__, ggml_backend_reg_name(reg), n_devices);
    for (size_t i = 0; i < n_devices; i++) {
        register_device_locked(ggml_backend_reg_dev_get(reg, i));
    }
    return true;
}

static void registry_init(void) {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&g_registry.mutex, &attr);
    pthread_mutexattr_destroy(&attr);

    // the backends compiled in, most capable first
    pthread_mutex_lock(&g_registry.mutex);
#ifdef GGML_USE_VULKAN
    register_backend_locked(ggml_backend_vk_reg(), NULL);
#endif
#ifdef GGML_USE_CPU
    register_backend_locked(ggml_backend_cpu_reg(), NULL);
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
        return;
    }
    registry_lock();
    register_backend_locked(reg, NULL);
    registry_unlock();
}

void ggml_backend_device_register(ggml_backend_dev_t device) {
    if (device == NULL) {
        return;
    }
    registry_lock();
    register_device_locked(device);
    registry_unlock();
}

//
// enumeration
//

static bool equals_ignoring_case(const char * a, const char * b) {
    for (; *a != '\0' && *b != '\0'; a++, b++) {
        if (tolower((unsigned char) *a) != tolower((unsigned char) *b)) {
            return false;
        }
    }
    return *a == *b;
}

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

    registry_lock();
    const bool added = register_backend_locked(reg, module.handle);
    const bool known = added || is_registered_locked(reg);
    registry_unlock();
    if (!added) {
        // loaded before: the dynamic loader handed out the same library again
        backend_module_close(&module);
        return known ? reg : NULL;
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
