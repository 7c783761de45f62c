// output-file.c: the output written to a temporary file beside the
// destination and renamed over it when complete (see output-file.h).

#include "output-file.h"
#include "quantize.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// tells apart the temporary files of several conversions in one process
static atomic_uint g_output_serial;

//
// the temporary files a fatal signal removes
//

// One open output's temporary file. Slots are pushed on g_temp_slots and
// never freed, so the signal handler can walk the list while threads open
// and close outputs; a slot whose output ended is claimed again by the next.
struct gq_temp_slot {
    _Atomic(char *)       path;   // the temporary file, NULL while none is open
    char                * owned;  // the last path stored, freed by the next owner of the slot
    atomic_bool           in_use; // held by an open output
    struct gq_temp_slot * next;   // set before the slot is published, then fixed
};

static _Atomic(struct gq_temp_slot *) g_temp_slots;

// a slot holding a copy of tmp (the handler may read it while the output frees its own)
static struct gq_temp_slot * temp_slot_claim(const char * tmp) {
    char * copy = strdup(tmp);
    if (copy == NULL) {
        return NULL;
    }
    struct gq_temp_slot * slot = atomic_load(&g_temp_slots);
    for (; slot != NULL; slot = slot->next) {
        bool free_slot = false;
        if (atomic_compare_exchange_strong(&slot->in_use, &free_slot, true)) {
            break;
        }
    }
    if (slot == NULL) {
        slot = (struct gq_temp_slot *) calloc(1, sizeof(*slot));
        if (slot == NULL) {
            free(copy);
            return NULL;
        }
        atomic_init(&slot->path, NULL);
        atomic_init(&slot->in_use, true);
        slot->next = atomic_load(&g_temp_slots);
        while (!atomic_compare_exchange_weak(&g_temp_slots, &slot->next, slot)) {
        }
    }
    // the previous path has not been published since its output ended, a
    // whole conversion ago: no handler can be reading it now
    free(slot->owned);
    slot->owned = copy;
    atomic_store(&slot->path, copy);
    return slot;
}

static void temp_slot_release(struct gq_temp_slot * slot) {
    if (slot == NULL) {
        return;
    }
    // a handler that read the path before this unlinks a file that is
    // already gone or renamed away (ENOENT): the name holds our pid and a
    // serial that no other file has. The string stays (slot->owned) for such
    // a handler; the slot's next owner frees it.
    atomic_store(&slot->path, NULL);
    atomic_store(&slot->in_use, false);
}

static const int k_fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE };

// async-signal-safe: atomic loads, unlink, raise, _exit
static void on_fatal_signal(int sig) {
    for (struct gq_temp_slot * slot = atomic_load(&g_temp_slots); slot != NULL; slot = slot->next) {
        char * path = atomic_load(&slot->path);
        if (path != NULL) {
            unlink(path);
        }
    }
    // SA_RESETHAND put the default action back and SA_NODEFER leaves the
    // signal unblocked: this ends the process by sig, as without the handler
    raise(sig);
    _exit(128 + sig);
}

bool gq_output_catch_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags   = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(k_fatal_signals)/sizeof(k_fatal_signals[0]); i++) {
        struct sigaction old;
        if (sigaction(k_fatal_signals[i], NULL, &old) != 0) {
            gq_error("cannot install a handler for signal %d: %s", k_fatal_signals[i], strerror(errno));
            return false;
        }
        if (old.sa_handler == SIG_IGN) {
            continue; // ignored by who started us (nohup): it stays so
        }
        if (sigaction(k_fatal_signals[i], &sa, NULL) != 0) {
            gq_error("cannot install a handler for signal %d: %s", k_fatal_signals[i], strerror(errno));
            return false;
        }
    }
    return true;
}

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

// the fatal signals blocked (block) or the mask of before put back
static void temp_signals_block(bool block, sigset_t * old) {
    if (block) {
        sigset_t set;
        sigemptyset(&set);
        for (size_t i = 0; i < sizeof(k_fatal_signals)/sizeof(k_fatal_signals[0]); i++) {
            sigaddset(&set, k_fatal_signals[i]);
        }
        pthread_sigmask(SIG_BLOCK, &set, old);
    } else {
        pthread_sigmask(SIG_SETMASK, old, NULL);
    }
}

// a new file of a name no one holds, in the destination's directory, and
// the slot through which a fatal signal removes it. The slot is filled once
// the file is ours: a name that existed (EEXIST) is someone else's. The
// fatal signals wait while the file exists and its slot does not: one that
// came in between would leave the file behind.
static int output_create_temp(const char * dest, char ** tmp_out, struct gq_temp_slot ** slot_out) {
    const size_t size = strlen(dest) + 64;
    char * tmp = (char *) malloc(size);
    if (tmp == NULL) {
        gq_error("out of memory");
        return -1;
    }
    for (;;) {
        const unsigned serial = atomic_fetch_add(&g_output_serial, 1u);
        snprintf(tmp, size, "%s.%ld-%u.tmp", dest, (long) getpid(), serial);
        sigset_t mask;
        temp_signals_block(true, &mask);
        const int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        const int open_errno = errno;
        struct gq_temp_slot * slot = fd >= 0 ? temp_slot_claim(tmp) : NULL;
        temp_signals_block(false, &mask); // a signal that came meanwhile is handled here
        errno = open_errno;
        if (fd >= 0) {
            if (slot == NULL) {
                gq_error("out of memory");
                close(fd);
                unlink(tmp);
                free(tmp);
                return -1;
            }
            *tmp_out  = tmp;
            *slot_out = slot;
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
    *out = (struct gq_output) { .file = NULL, .dest = NULL, .tmp = NULL, .slot = NULL, .buf = NULL };
    char * dest = output_resolve(path);
    if (dest == NULL) {
        return false;
    }
    char * tmp = NULL;
    struct gq_temp_slot * slot = NULL;
    const int fd = output_create_temp(dest, &tmp, &slot);
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
        temp_slot_release(slot);
        free(tmp);
        free(dest);
        return false;
    }
    FILE * f = fdopen(fd, "wb");
    if (f == NULL) {
        gq_error("cannot write %s: %s", tmp, strerror(errno));
        close(fd);
        unlink(tmp);
        temp_slot_release(slot);
        free(tmp);
        free(dest);
        return false;
    }
    // whole buffers reach the file at multiples of their size (see the
    // header); without the memory the stream keeps its own small buffer
    void * buf = malloc(GQ_OUTPUT_BUFFER_BYTES);
    if (buf != NULL && setvbuf(f, (char *) buf, _IOFBF, GQ_OUTPUT_BUFFER_BYTES) != 0) {
        free(buf);
        buf = NULL;
    }
    *out = (struct gq_output) { .file = f, .dest = dest, .tmp = tmp, .slot = slot, .buf = buf };
    return true;
}

static void output_release(struct gq_output * out) {
    temp_slot_release(out->slot);
    free(out->dest);
    free(out->tmp);
    free(out->buf); // the stream is closed: nothing uses it any more
    *out = (struct gq_output) { .file = NULL, .dest = NULL, .tmp = NULL, .slot = NULL, .buf = NULL };
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
