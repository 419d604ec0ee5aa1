// Check macros shared by the torch tests (plain C++ executables: the exit
// status is the verdict). Each test file includes this once; the counters
// and the message buffer are per file.
#pragma once

#include "bosch/bosch.h"

#include <cstdio>
#include <cstring>

static int g_failures = 0, g_checks = 0;
// Message buffer the C API writes into (EXPECT_ST prints it, EXPECT_MSG reads it).
[[maybe_unused]] static char err[1024];

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        g_checks++;                                                                                \
        if (!(cond)) {                                                                             \
            g_failures++;                                                                          \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);          \
        }                                                                                          \
    } while (0)

#define EXPECT_ST(expr, status)                                                                    \
    do {                                                                                           \
        g_checks++;                                                                                \
        int st_ = (expr);                                                                          \
        if (st_ != (status)) {                                                                     \
            g_failures++;                                                                          \
            std::fprintf(stderr, "%s:%d: %s returned %s, expected %s (err: %s)\n", __FILE__,       \
                         __LINE__, #expr, bosch_err_name(st_), bosch_err_name(status), err);       \
        }                                                                                          \
    } while (0)

#define EXPECT_MSG(word)                                                                           \
    do {                                                                                           \
        g_checks++;                                                                                \
        if (!std::strstr(err, (word))) {                                                           \
            g_failures++;                                                                          \
            std::fprintf(stderr, "%s:%d: message '%s' lacks '%s'\n", __FILE__, __LINE__, err,      \
                         (word));                                                                  \
        }                                                                                          \
    } while (0)
