#pragma once

// testing.h: minimal checks for the test programs. A failed check prints the
// expression, file and line and counts a failure; main returns
// TEST_RESULT() so that ctest sees a non-zero exit.

#include <math.h>
#include <stdio.h>

static int g_test_failures = 0;
static int g_test_checks   = 0;

#define CHECK(cond) do { \
        g_test_checks++; \
        if (!(cond)) { \
            g_test_failures++; \
            fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
        } \
    } while (0)

#define CHECK_MSG(cond, ...) do { \
        g_test_checks++; \
        if (!(cond)) { \
            g_test_failures++; \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
        } \
    } while (0)

#define CHECK_EQ_INT(a, b) do { \
        const long long va_ = (long long)(a), vb_ = (long long)(b); \
        CHECK_MSG(va_ == vb_, "%s = %lld, %s = %lld", #a, va_, #b, vb_); \
    } while (0)

#define CHECK_NEAR(a, b, tol) do { \
        const double va_ = (double)(a), vb_ = (double)(b); \
        CHECK_MSG(fabs(va_ - vb_) <= (tol), "%s = %.9g, %s = %.9g, tol %.3g", #a, va_, #b, vb_, (double)(tol)); \
    } while (0)

#define TEST_RESULT() (printf("%d checks, %d failures\n", g_test_checks, g_test_failures), g_test_failures == 0 ? 0 : 1)
