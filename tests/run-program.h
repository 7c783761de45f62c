#pragma once

// run-program.h: runs a program of the build (a tool under test) in a child
// process and reports how it ended, with what it wrote to stdout and stderr.
// Tests of a tool's command line use it to check exit statuses, messages and
// deaths by signal (a crash is a result here, not the end of the test).
//
// Needs _GNU_SOURCE or _POSIX_C_SOURCE (fork, execv, pipe) before the first include.

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

struct program_result {
    bool exited;     // ended by exit(): status holds the exit status
    int  status;     // the exit status, or the signal that ended it
    char output[8192]; // stdout and stderr together, the first bytes of them
};

// In a cross build the programs run under an emulator (qemu-user), which
// ctest names in GGML_TEST_EMULATOR ("qemu-s390x-static -L /usr/s390x-linux-gnu"):
// the child execs the emulator (searched in PATH) with the program after its
// own words. Returns only if the exec failed.
static void run_program_exec(char * const * argv) {
    const char * emulator = getenv("GGML_TEST_EMULATOR");
    if (emulator == NULL || emulator[0] == '\0') {
        execv(argv[0], argv);
        return;
    }
    size_t n_args = 0;
    while (argv[n_args] != NULL) {
        n_args++;
    }
    char * words = strdup(emulator);
    char ** full = (char **) calloc(strlen(emulator) + n_args + 1, sizeof(char *));
    if (words == NULL || full == NULL) {
        return;
    }
    size_t n = 0;
    for (char * w = strtok(words, " "); w != NULL; w = strtok(NULL, " ")) {
        full[n++] = w;
    }
    for (size_t i = 0; i <= n_args; i++) {
        full[n + i] = argv[i];
    }
    execvp(full[0], full);
}

// Runs argv[0] with argv (NULL-terminated). file_size_limit > 0 limits the
// size of the files the program may write (RLIMIT_FSIZE, with SIGXFSZ
// ignored: writes beyond it fail with EFBIG). False if it could not start.
static bool run_program(char * const * argv, long file_size_limit, struct program_result * r) {
    memset(r, 0, sizeof(*r));
    int fds[2];
    if (pipe(fds) != 0) {
        return false;
    }
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (file_size_limit > 0) {
            const struct rlimit lim = { .rlim_cur = (rlim_t) file_size_limit, .rlim_max = (rlim_t) file_size_limit };
            signal(SIGXFSZ, SIG_IGN);
            setrlimit(RLIMIT_FSIZE, &lim);
        }
        run_program_exec(argv);
        _exit(127);
    }
    close(fds[1]);
    size_t n = 0;
    for (;;) {
        char chunk[4096];
        const ssize_t got = read(fds[0], chunk, sizeof(chunk));
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            break;
        }
        const size_t keep = (size_t) got < sizeof(r->output) - 1 - n ? (size_t) got : sizeof(r->output) - 1 - n;
        memcpy(r->output + n, chunk, keep);
        n += keep;
    }
    r->output[n] = '\0';
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return false;
        }
    }
    r->exited = WIFEXITED(status);
    r->status = r->exited ? WEXITSTATUS(status) : WIFSIGNALED(status) ? WTERMSIG(status) : -1;
    return true;
}

// "exit status 1", "signal 8": for messages
static const char * program_ending(const struct program_result * r, char * buf, size_t size) {
    snprintf(buf, size, "%s %d", r->exited ? "exit status" : "signal", r->status);
    return buf;
}
