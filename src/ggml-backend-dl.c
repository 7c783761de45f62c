// ggml-backend-dl.c: shared libraries and the file system, for the registry.

#include "ggml-backend-dl.h"
#include "ggml-impl.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define MODULE_PREFIX "libggml-"
#define MODULE_SUFFIX ".so"

// dlsym gives an object pointer; ISO C has no conversion to a function pointer
_Static_assert(sizeof(void *) == sizeof(ggml_backend_init_t), "function and object pointers differ in size");

// Is sym defined by the library of handle itself? dlsym also searches the
// libraries it depends on, and a library linked against a module must not
// pass for that module.
static bool symbol_is_own(void * handle, void * sym) {
#ifdef RTLD_DI_LINKMAP
    struct link_map * map = NULL;
    Dl_info info;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL) {
        return true; // cannot tell: trust dlsym
    }
    return strcmp(info.dli_fname, map->l_name) == 0;
#else
    GGML_UNUSED(handle);
    GGML_UNUSED(sym);
    return true;
#endif
}

static void * own_symbol(void * handle, const char * name) {
    void * sym = dlsym(handle, name);
    return sym != NULL && symbol_is_own(handle, sym) ? sym : NULL;
}

enum backend_module_status backend_module_open(const char * path, struct backend_module * module, const char ** error) {
    *module = (struct backend_module) { .handle = NULL, .init = NULL, .score = NULL };
    void * handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        if (error != NULL) {
            const char * why = dlerror();
            *error = why != NULL ? why : "unknown dynamic loader error";
        }
        return BACKEND_MODULE_NOT_LOADABLE;
    }
    void * init = own_symbol(handle, "ggml_backend_init");
    if (init == NULL) {
        dlclose(handle);
        if (error != NULL) {
            *error = "it does not export ggml_backend_init";
        }
        return BACKEND_MODULE_NO_ENTRY;
    }
    void * score = own_symbol(handle, "ggml_backend_score");
    module->handle = handle;
    memcpy(&module->init, &init, sizeof(init));
    if (score != NULL) {
        memcpy(&module->score, &score, sizeof(score));
    }
    return BACKEND_MODULE_OK;
}

void backend_module_close(struct backend_module * module) {
    if (module->handle != NULL) {
        dlclose(module->handle);
    }
    *module = (struct backend_module) { .handle = NULL, .init = NULL, .score = NULL };
}

//
// paths
//

static char * dup_string(const char * s, size_t n) {
    char * copy = (char *) malloc(n + 1);
    if (copy != NULL) {
        memcpy(copy, s, n);
        copy[n] = '\0';
    }
    return copy;
}

static char * dir_of(const char * path) {
    const char * slash = strrchr(path, '/');
    if (slash == NULL) {
        return dup_string(".", 1);
    }
    if (slash == path) {
        return dup_string("/", 1);
    }
    return dup_string(path, (size_t)(slash - path));
}

// any object of this library: dladdr finds the file it was loaded from
static const char library_anchor = 0;

char * backend_dl_library_dir(void) {
    Dl_info info;
    if (dladdr(&library_anchor, &info) == 0 || info.dli_fname == NULL || info.dli_fname[0] == '\0') {
        return NULL;
    }
    return dir_of(info.dli_fname);
}

char * backend_dl_executable_dir(void) {
    size_t cap = 256;
    for (;;) {
        char * buf = (char *) malloc(cap);
        if (buf == NULL) {
            return NULL;
        }
        const ssize_t len = readlink("/proc/self/exe", buf, cap);
        if (len < 0) {
            free(buf);
            return NULL;
        }
        if ((size_t) len < cap) {
            buf[len] = '\0';
            char * dir = dir_of(buf);
            free(buf);
            return dir;
        }
        free(buf); // possibly truncated: try again with room to spare
        cap *= 2;
    }
}

bool backend_dl_is_dir(const char * path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool backend_dl_is_file(const char * path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

char * backend_dl_join(const char * dir, const char * file) {
    const size_t n_dir  = strlen(dir);
    const size_t n_file = strlen(file);
    const bool   slash  = n_dir > 0 && dir[n_dir - 1] != '/';
    char * path = (char *) malloc(n_dir + slash + n_file + 1);
    if (path == NULL) {
        return NULL;
    }
    memcpy(path, dir, n_dir);
    if (slash) {
        path[n_dir] = '/';
    }
    memcpy(path + n_dir + slash, file, n_file + 1);
    return path;
}

char * backend_dl_module_name(const char * file_name) {
    const size_t n        = strlen(file_name);
    const size_t n_prefix = strlen(MODULE_PREFIX);
    const size_t n_suffix = strlen(MODULE_SUFFIX);
    if (n <= n_prefix + n_suffix || strncmp(file_name, MODULE_PREFIX, n_prefix) != 0 ||
        strcmp(file_name + n - n_suffix, MODULE_SUFFIX) != 0) {
        return NULL;
    }
    // the name runs to the first '-' after the prefix (a variant follows) or to the suffix
    const char * begin = file_name + n_prefix;
    const char * end   = file_name + n - n_suffix;
    const char * dash  = memchr(begin, '-', (size_t)(end - begin));
    if (dash != NULL) {
        end = dash;
    }
    if (end == begin) {
        return NULL;
    }
    return dup_string(begin, (size_t)(end - begin));
}

static int compare_strings(const void * a, const void * b) {
    return strcmp(*(const char * const *) a, *(const char * const *) b);
}

void backend_dl_scan_dir(const char * dir, backend_dl_module_fn fn, void * user_data) {
    DIR * d = opendir(dir);
    if (d == NULL) {
        GGML_LOG_DEBUG("%s: cannot read directory %s: %s\n", __func__, dir, strerror(errno));
        return;
    }
    // in name order, so that the choice between equal candidates does not depend on the file system
    char ** files = NULL;
    size_t n_files = 0;
    size_t cap_files = 0;
    for (struct dirent * entry = readdir(d); entry != NULL; entry = readdir(d)) {
        char * name = backend_dl_module_name(entry->d_name);
        if (name == NULL) {
            continue;
        }
        free(name);
        if (n_files == cap_files) {
            const size_t cap = cap_files == 0 ? 16 : 2 * cap_files;
            char ** grown = (char **) realloc(files, cap * sizeof(char *));
            if (grown == NULL) {
                break;
            }
            files     = grown;
            cap_files = cap;
        }
        files[n_files] = dup_string(entry->d_name, strlen(entry->d_name));
        if (files[n_files] != NULL) {
            n_files++;
        }
    }
    closedir(d);

    if (n_files > 0) {
        qsort(files, n_files, sizeof(char *), compare_strings);
    }
    for (size_t i = 0; i < n_files; i++) {
        char * path = backend_dl_join(dir, files[i]);
        char * name = backend_dl_module_name(files[i]);
        if (path != NULL && name != NULL && backend_dl_is_file(path)) {
            fn(path, name, user_data);
        }
        free(path);
        free(name);
        free(files[i]);
    }
    free(files);
}
