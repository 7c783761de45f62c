#pragma once

//
// ggml-backend-dl.h: backend modules on disk, for the registry (libggml).
//
// Opening a shared library and finding its entry points, the directories
// to search for modules, and the module file name convention
// (libggml-<name>.so or libggml-<name>-<variant>.so). Not installed.
//

#include "ggml-backend-impl.h"

#include <stdbool.h>

struct backend_module {
    void *               handle;
    ggml_backend_init_t  init;  // the module's own ggml_backend_init
    ggml_backend_score_t score; // its ggml_backend_score, or NULL
};

enum backend_module_status {
    BACKEND_MODULE_OK,
    BACKEND_MODULE_NOT_LOADABLE, // not a shared library the dynamic loader accepts
    BACKEND_MODULE_NO_ENTRY,     // a shared library without ggml_backend_init of its own
};

// Open path. On BACKEND_MODULE_OK *module holds an open handle; otherwise
// nothing is left open and *error (if not NULL) points to a reason valid
// until the next call.
enum backend_module_status backend_module_open(const char * path, struct backend_module * module, const char ** error);
void                       backend_module_close(struct backend_module * module);

// malloc'd directory names, NULL when unknown
char * backend_dl_library_dir(void);    // the directory of the library holding the registry
char * backend_dl_executable_dir(void); // the directory of the running program

bool backend_dl_is_dir(const char * path);
bool backend_dl_is_file(const char * path);

// "<dir>/<file>", malloc'd (NULL when out of memory)
char * backend_dl_join(const char * dir, const char * file);

// The backend name in a module file name (libggml-<name>[-<variant>].so),
// malloc'd; NULL if the name does not follow the convention.
char * backend_dl_module_name(const char * file_name);

// call fn for every regular file in dir whose name follows the convention
typedef void (*backend_dl_module_fn)(const char * path, const char * name, void * user_data);
void backend_dl_scan_dir(const char * dir, backend_dl_module_fn fn, void * user_data);
