#pragma once

// death-test.h: CHECK_ABORTS(expected, statements) runs the statements in a
// forked child and checks that they end the child through ggml_abort() with
// a message containing `expected`, by SIGABRT.
//
// The child installs an abort callback that exits with status 3 when the
// message lacks `expected`; otherwise the callback returns and ggml_abort()
// calls abort(). A child whose statements return exits with status 0. Either
// way the parent sees no SIGABRT and counts a failure.
//
// Needs _POSIX_C_SOURCE (fork, waitpid) defined before the first include.

#include "ggml.h"
#include "testing.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char * g_death_expected = "";

static void death_abort_callback(const char * message) {
    if (strstr(message, g_death_expected) == NULL) {
        fprintf(stderr, "abort message \"%s\" lacks \"%s\"\n", message, g_death_expected);
        fflush(stderr);
        _exit(3);
    }
}

static void death_quiet_log(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level;
    (void) text;
    (void) user_data;
}

static int death_wait(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            return 0; // no child to wait for: reads as "exited normally", a failure
        }
    }
    return status;
}

#define CHECK_ABORTS(expected, ...) do { \
        fflush(stdout); \
        fflush(stderr); \
        const pid_t pid_ = fork(); \
        CHECK(pid_ >= 0); \
        if (pid_ == 0) { \
            g_death_expected = (expected); \
            ggml_log_set(death_quiet_log, NULL); \
            ggml_set_abort_callback(death_abort_callback); \
            { __VA_ARGS__; } \
            _exit(0); \
        } \
        const int status_ = death_wait(pid_); \
        CHECK_MSG(WIFSIGNALED(status_) && WTERMSIG(status_) == SIGABRT, \
                  "{ %s } did not abort with \"%s\" (%s %d)", #__VA_ARGS__, (expected), \
                  WIFSIGNALED(status_) ? "signal" : "exit status", \
                  WIFSIGNALED(status_) ? WTERMSIG(status_) : WEXITSTATUS(status_)); \
    } while (0)
