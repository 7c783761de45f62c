#pragma once

// run-common.h: what every part of ggml-run shares: error reporting and a
// few helpers. The runner is built as a static library (ggml-run-core) that
// the ggml-run program and the tests link; it uses only the public API.
//
// Failures users can cause (a bad file, a model the runner cannot run, an
// allocation that fails) are reported with one line on stderr through
// run_error() and an error return, never a crash.

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RUN_PRINTF(fmt_idx, args_idx) __attribute__((format(printf, fmt_idx, args_idx)))
#else
#define RUN_PRINTF(fmt_idx, args_idx)
#endif

// "ggml-run: error: <message>\n" on stderr (a final newline is added if missing)
void run_error(const char * fmt, ...) RUN_PRINTF(1, 2);

// "ggml-run: warning: <message>\n" on stderr
void run_warn(const char * fmt, ...) RUN_PRINTF(1, 2);

// malloc/calloc that report a failure with run_error (and return NULL)
void * run_malloc(size_t size, const char * what);
void * run_calloc(size_t n, size_t size, const char * what);

// a malloc'd copy of s, or NULL (reported)
char * run_strdup(const char * s);

// the largest bytes of a human-readable size: "1.50 GiB", "12.00 MiB", "512 B"
const char * run_fmt_size(size_t bytes, char * buf, size_t buf_size);

#ifdef __cplusplus
}
#endif
