#pragma once

// output-file.h: a file written beside its destination and renamed into place.
//
// gq_output_open checks the destination (a new name, or an existing regular
// file, reached through symbolic links) and creates a new temporary file in
// the same directory with O_EXCL, so that nothing of that name is touched.
// gq_output_commit flushes it to the disk and renames it over the
// destination; gq_output_abort removes the temporary file and only it. Until
// the commit the destination is exactly as it was, whatever fails.
//
// The object is owned by the caller; one of commit or abort ends it.
//
// A signal that ends the process (gq_output_catch_signals: SIGINT, SIGTERM,
// SIGHUP, and the crashes SIGABRT, SIGSEGV, SIGBUS, SIGFPE) removes the
// temporary files of every output still open, and only those, then ends the
// process by the same signal. The handler does only async-signal-safe
// things: it walks a list of slots that is never freed (a slot is reused
// by the next output once its own has ended), unlinks, and re-raises.

#include <stdbool.h>
#include <stdio.h>

#define GQ_OUTPUT_BUFFER_BYTES ((size_t) 4 << 20)

struct gq_temp_slot;

struct gq_output {
    FILE * file;      // the temporary file, open for writing
    char * dest;      // the path renamed over (symbolic links resolved)
    char * tmp;       // the temporary file's path
    struct gq_temp_slot * slot; // where the signal handler finds tmp
    void * buf;       // the stream's buffer (see gq_output_open), or NULL
};

// Installs the handlers that remove the temporary files on a fatal signal
// (the program calls it once, before converting). False after printing why.
bool gq_output_catch_signals(void);

// False after printing why: the destination is a directory, not a regular
// file, a dangling link, or the temporary file cannot be created.
//
// The stream writes through a buffer of GQ_OUTPUT_BUFFER_BYTES, so that the
// file is written in whole, aligned 4 MiB pieces: the page cache then keeps
// the new file in 2 MiB folios, and a program mapping it right after (ggml-run,
// llama.cpp) maps its weights with 2 MiB pages instead of 4 KiB ones
// (pieces of a few MiB at unaligned offsets leave it almost all in 4 KiB).
bool gq_output_open(struct gq_output * out, const char * path);

// Flushes, syncs, closes and renames into place. False after printing why
// (the temporary file is removed then, the destination left as it was).
bool gq_output_commit(struct gq_output * out);

// Closes and removes the temporary file; the destination is not touched.
void gq_output_abort(struct gq_output * out);
