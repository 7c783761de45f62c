// blas-vendor.c: which BLAS library the backend runs on, and its threads.
//
// The library is the one that provides cblas_sgemm to this code: dladdr
// names its file, and a handle to that file (and, through dlsym, to its
// dependencies) gives the library's own thread setting:
//   OpenBLAS  openblas_set_num_threads(int)
//   BLIS      bli_thread_set_num_threads(dim_t), dim_t 64-bit on LP64 systems
//   MKL       MKL_Set_Num_Threads(int)
// Looking the setters up at run time, rather than by the vendor chosen at
// build time, keeps it right when GGML_BLAS_VENDOR=Generic links libblas.so
// and the system's alternatives point it at OpenBLAS or BLIS, and when the
// backend is in a module loaded with RTLD_LOCAL. A library with none of these
// (the reference BLAS) runs single-threaded and the setting is a no-op.

#include "blas-impl.h"
#include "ggml-impl.h"

#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

struct blas_vendor {
    const char * name;
    void (*set_threads_int)(int);       // OpenBLAS, MKL
    void (*set_threads_dim)(int64_t);   // BLIS
};

static struct blas_vendor g_vendor = { .name = "BLAS", .set_threads_int = NULL, .set_threads_dim = NULL };
static pthread_once_t     g_vendor_once = PTHREAD_ONCE_INIT;

// the library's symbol, or NULL
static void * vendor_symbol(void * handle, const char * name) {
    void * sym = handle != NULL ? dlsym(handle, name) : NULL;
    return sym != NULL ? sym : dlsym(RTLD_DEFAULT, name);
}

static void vendor_init(void) {
    void * handle = NULL;
    Dl_info info;
    if (dladdr(GGML_FN_TO_PTR(cblas_sgemm), &info) != 0 && info.dli_fname != NULL) {
        // already loaded: RTLD_NOLOAD only takes a reference
        handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    }

    void * sym;
    if ((sym = vendor_symbol(handle, "openblas_set_num_threads")) != NULL) {
        g_vendor.name = "OpenBLAS";
        memcpy(&g_vendor.set_threads_int, &sym, sizeof(sym));
    } else if ((sym = vendor_symbol(handle, "bli_thread_set_num_threads")) != NULL) {
        g_vendor.name = "BLIS";
        memcpy(&g_vendor.set_threads_dim, &sym, sizeof(sym));
    } else if ((sym = vendor_symbol(handle, "MKL_Set_Num_Threads")) != NULL) {
        g_vendor.name = "MKL";
        memcpy(&g_vendor.set_threads_int, &sym, sizeof(sym));
    }
    GGML_LOG_DEBUG("%s: cblas_sgemm from %s (%s)\n", __func__,
                   handle != NULL ? info.dli_fname : "an unknown library", g_vendor.name);
    // the handle is kept: the library stays loaded as long as this code does
}

static const struct blas_vendor * vendor_get(void) {
    pthread_once(&g_vendor_once, vendor_init);
    return &g_vendor;
}

const char * ggml_blas_vendor_name(void) {
    return vendor_get()->name;
}

bool ggml_blas_vendor_can_set_threads(void) {
    const struct blas_vendor * v = vendor_get();
    return v->set_threads_int != NULL || v->set_threads_dim != NULL;
}

void ggml_blas_vendor_set_threads(int n_threads) {
    const struct blas_vendor * v = vendor_get();
    if (v->set_threads_int != NULL) {
        v->set_threads_int(n_threads);
    } else if (v->set_threads_dim != NULL) {
        v->set_threads_dim((int64_t) n_threads);
    }
}
