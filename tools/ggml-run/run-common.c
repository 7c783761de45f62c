// run-common.c: error reporting and small helpers of ggml-run.

#include "run-common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void run_vreport(const char * level, const char * fmt, va_list args) {
    char line[1024];
    vsnprintf(line, sizeof(line), fmt, args);
    const size_t n = strlen(line);
    fprintf(stderr, "ggml-run: %s: %s%s", level, line, n > 0 && line[n - 1] == '\n' ? "" : "\n");
}

void run_error(const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    run_vreport("error", fmt, args);
    va_end(args);
}

void run_warn(const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    run_vreport("warning", fmt, args);
    va_end(args);
}

void * run_malloc(size_t size, const char * what) {
    void * p = malloc(size > 0 ? size : 1);
    if (p == NULL) {
        run_error("out of memory allocating %zu bytes for %s", size, what);
    }
    return p;
}

void * run_calloc(size_t n, size_t size, const char * what) {
    void * p = calloc(n > 0 ? n : 1, size > 0 ? size : 1);
    if (p == NULL) {
        run_error("out of memory allocating %zu x %zu bytes for %s", n, size, what);
    }
    return p;
}

char * run_strdup(const char * s) {
    const size_t n = strlen(s) + 1;
    char * d = (char *) run_malloc(n, "a string");
    if (d != NULL) {
        memcpy(d, s, n);
    }
    return d;
}

const char * run_fmt_size(size_t bytes, char * buf, size_t buf_size) {
    const double b = (double) bytes;
    if (bytes >= ((size_t) 1 << 30)) {
        snprintf(buf, buf_size, "%.2f GiB", b / (double) (1 << 30));
    } else if (bytes >= ((size_t) 1 << 20)) {
        snprintf(buf, buf_size, "%.2f MiB", b / (double) (1 << 20));
    } else if (bytes >= ((size_t) 1 << 10)) {
        snprintf(buf, buf_size, "%.2f KiB", b / (double) (1 << 10));
    } else {
        snprintf(buf, buf_size, "%zu B", bytes);
    }
    return buf;
}
