// output-file.c: the output written to a temporary file beside the
// destination and renamed over it when complete (see output-file.h).

#include "output-file.h"
#include "quantize.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// tells apart the temporary files of several conversions in one process
static atomic_uint g_output_serial;

// the path written to: an existing file reached through links is replaced in
// its own directory, so that the links keep pointing at it
static char * output_resolve(const char * path) {
    struct stat lst, st;
    if (lstat(path, &lst) != 0) {
        if (errno != ENOENT) {
            gq_error("cannot use %s as the output: %s", path, strerror(errno));
            return NULL;
        }
        char * copy = strdup(path); // a new file
        if (copy == NULL) {
            gq_error("out of memory");
        }
        return copy;
    }
    if (stat(path, &st) != 0) {
        gq_error("cannot use %s as the output: it is a symbolic link to nothing (%s)", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        gq_error("cannot use %s as the output: it is a directory", path);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        gq_error("cannot use %s as the output: it exists and is not a regular file", path);
        return NULL;
    }
    char * dest = realpath(path, NULL);
    if (dest == NULL) {
        gq_error("cannot use %s as the output: %s", path, strerror(errno));
    }
    return dest;
}

// a new file of a name no one holds, in the destination's directory
static int output_create_temp(const char * dest, char ** tmp_out) {
    const size_t size = strlen(dest) + 64;
    char * tmp = (char *) malloc(size);
    if (tmp == NULL) {
        gq_error("out of memory");
        return -1;
    }
    for (;;) {
        const unsigned serial = atomic_fetch_add(&g_output_serial, 1u);
        snprintf(tmp, size, "%s.%ld-%u.tmp", dest, (long) getpid(), serial);
        const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) {
            *tmp_out = tmp;
            return fd;
        }
        if (errno != EEXIST) {
            gq_error("cannot create a temporary file beside %s: %s", dest, strerror(errno));
            free(tmp);
            return -1;
        }
    }
}

bool gq_output_open(struct gq_output * out, const char * path) {
    *out = (struct gq_output) { .file = NULL, .dest = NULL, .tmp = NULL };
    char * dest = output_resolve(path);
    if (dest == NULL) {
        return false;
    }
    char * tmp = NULL;
    const int fd = output_create_temp(dest, &tmp);
    if (fd < 0) {
        free(dest);
        return false;
    }
    // a file replaced keeps its permissions
    struct stat st;
    if (stat(dest, &st) == 0 && fchmod(fd, st.st_mode & 07777) != 0) {
        gq_error("cannot give %s the permissions of %s: %s", tmp, dest, strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        free(dest);
        return false;
    }
    FILE * f = fdopen(fd, "wb");
    if (f == NULL) {
        gq_error("cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        free(tmp);
        free(dest);
        return false;
    }
    *out = (struct gq_output) { .file = f, .dest = dest, .tmp = tmp };
    return true;
}

static void output_release(struct gq_output * out) {
    free(out->dest);
    free(out->tmp);
    *out = (struct gq_output) { .file = NULL, .dest = NULL, .tmp = NULL };
}

void gq_output_abort(struct gq_output * out) {
    if (out->file != NULL) {
        fclose(out->file);
    }
    if (out->tmp != NULL) {
        unlink(out->tmp);
    }
    output_release(out);
}

// the rename itself reaches the disk with the directory
static void output_sync_dir(const char * dest) {
    const char * slash = strrchr(dest, '/');
    char * dir = slash == NULL ? strdup(".") : strndup(dest, slash == dest ? 1 : (size_t) (slash - dest));
    if (dir == NULL) {
        return;
    }
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd); // best effort: the file is in place already
        close(fd);
    }
    free(dir);
}

bool gq_output_commit(struct gq_output * out) {
    FILE * f = out->file;
    out->file = NULL;
    int err = 0;
    if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
        err = errno;
    }
    if (fclose(f) != 0 && err == 0) {
        err = errno;
    }
    if (err != 0) {
        gq_error("cannot write %s: %s", out->tmp, strerror(err));
        gq_output_abort(out);
        return false;
    }
    if (rename(out->tmp, out->dest) != 0) {
        gq_error("cannot rename %s to %s: %s", out->tmp, out->dest, strerror(errno));
        gq_output_abort(out);
        return false;
    }
    output_sync_dir(out->dest);
    output_release(out);
    return true;
}
