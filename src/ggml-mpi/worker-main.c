// worker-main.c: ggml-mpi-worker, a program that only serves its host's
// devices to rank 0 of an MPI job:
//
//     mpirun -np 1 app ... : -np 2 ggml-mpi-worker [-t N]
//
// It reaches the MPI backend through the registry, so it works the same
// whether the backend is built into libggml or loaded as a module.

#include "ggml-backend.h"
#include "ggml-mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char ** argv) {
    int n_threads = 0;
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "-t") == 0 || strcmp(argv[i], "--threads") == 0) && i + 1 < argc) {
            n_threads = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [-t threads]  (started by mpirun, on ranks other than 0)\n", argv[0]);
            return strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0 ? 0 : 1;
        }
    }
    ggml_backend_load_all();
    ggml_backend_reg_t reg = ggml_backend_reg_by_name("MPI");
    void * sym = reg != NULL ? ggml_backend_reg_get_proc_address(reg, "ggml_backend_mpi_worker") : NULL;
    ggml_backend_mpi_worker_t worker = NULL;
    // ISO C has no object-to-function pointer conversion; POSIX makes the bits agree
    memcpy(&worker, &sym, sizeof(sym));
    if (worker == NULL) {
        fprintf(stderr, "%s: this build of ggml has no MPI backend\n", argv[0]);
        return 1;
    }
    return worker(n_threads) == GGML_STATUS_SUCCESS ? 0 : 1;
}
