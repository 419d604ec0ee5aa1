// Check macros shared by the torch tests (plain C++ executables: the exit
// status is the verdict). Each test file includes this once; the counters
// and the message buffer are per file.
#pragma once

#include "bosch/bosch.h"
#include "bosch/torch.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

static int g_failures = 0, g_checks = 0;

// The device of the device-portable checks: BOSCH_TEST_DEVICE ("cpu",
// "cuda", "cuda:N"; tools/cuda/check.sh sets "cuda"), else the CPU.
[[maybe_unused]] static const char *test_device() {
    const char *d = std::getenv("BOSCH_TEST_DEVICE");
    return d && *d ? d : "cpu";
}
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

// For a creator's result: BOSCH_OK when `h` is not NULL, else
// bosch_torch_create_status(), with bosch_torch_create_error() copied into
// err (so that EXPECT_ST shows it and EXPECT_MSG reads it).
[[maybe_unused]] static int created(const void *h) {
    if (h) {
        err[0] = '\0';
        return BOSCH_OK;
    }
    std::snprintf(err, sizeof err, "%s", bosch_torch_create_error());
    return bosch_torch_create_status();
}

// For a function on a model: its status, with the model's last error copied
// into err ("" for a NULL model).
[[maybe_unused]] static int model_st(int status, const bosch_torch_model *m) {
    std::snprintf(err, sizeof err, "%s", bosch_torch_model_last_error(m));
    return status;
}
