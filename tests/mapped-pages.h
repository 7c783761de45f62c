#pragma once

// mapped-pages.h: how much of a file a mapping of it holds in 2 MiB pages
// (FilePmdMapped in /proc/self/smaps), for the tests of the writers that lay
// a new file out so that the page cache keeps it in 2 MiB folios.
//
// Linux only; needs _GNU_SOURCE before the first include. Elsewhere
// large_folios_here() is false and the tests skip.

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// FilePmdMapped (KiB) of the mapping holding addr; -1 where it cannot be read
static inline long mapped_pages_pmd_kib(const void * addr) {
    FILE * f = fopen("/proc/self/smaps", "r");
    if (f == NULL) {
        return -1;
    }
    char line[512];
    bool inside = false;
    long kib = -1;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { // a mapping's first line
            if (inside) {
                break;
            }
            inside = (uintptr_t) addr >= lo && (uintptr_t) addr < hi;
            continue;
        }
        if (inside && sscanf(line, "FilePmdMapped: %ld kB", &kib) == 1) {
            break;
        }
    }
    fclose(f);
    return kib;
}
#endif

// Maps the file, reads every page, and returns how much of it (KiB) the
// mapping holds in 2 MiB pages, or -1; *size_out gets the file's size.
static inline long mapped_in_pmds_kib(const char * path, long long * size_out) {
    long kib = -1;
    *size_out = 0;
#if defined(__linux__)
    const int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        *size_out = (long long) st.st_size;
        void * p = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            volatile unsigned char sum = 0;
            for (off_t i = 0; i < st.st_size; i += 4096) {
                sum += ((const unsigned char *) p)[i];
            }
            (void) sum;
            kib = mapped_pages_pmd_kib(p);
            munmap(p, (size_t) st.st_size);
        }
    }
    close(fd);
#else
    (void) path;
#endif
    return kib;
}

// A file written in dir in two aligned pieces of 4 MiB is mapped in 2 MiB
// pages: the kernel and the file system keep new files in large folios
// (ext4 and XFS on recent kernels), and smaps says so.
static inline bool large_folios_here(const char * dir) {
    bool yes = false;
#if defined(__linux__)
    char probe[512];
    snprintf(probe, sizeof(probe), "%s/mapped-pages-probe-%ld.bin", dir, (long) getpid());
    const size_t piece = (size_t) 4 << 20;
    char * buf = (char *) malloc(piece);
    const int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    bool written = buf != NULL && fd >= 0;
    if (buf != NULL) {
        memset(buf, 1, piece);
    }
    for (int i = 0; written && i < 2; i++) {
        written = write(fd, buf, piece) == (ssize_t) piece;
    }
    free(buf);
    if (fd >= 0) {
        close(fd);
        long long size;
        yes = written && mapped_in_pmds_kib(probe, &size) >= 2048;
        remove(probe);
    }
#else
    (void) dir;
#endif
    return yes;
}
