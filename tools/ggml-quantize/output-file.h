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

#include <stdbool.h>
#include <stdio.h>

struct gq_output {
    FILE * file;      // the temporary file, open for writing
    char * dest;      // the path renamed over (symbolic links resolved)
    char * tmp;       // the temporary file's path
};

// False after printing why: the destination is a directory, not a regular
// file, a dangling link, or the temporary file cannot be created.
bool gq_output_open(struct gq_output * out, const char * path);

// Flushes, syncs, closes and renames into place. False after printing why
// (the temporary file is removed then, the destination left as it was).
bool gq_output_commit(struct gq_output * out);

// Closes and removes the temporary file; the destination is not touched.
void gq_output_abort(struct gq_output * out);
