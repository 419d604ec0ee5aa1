// A failure with the status the C API reports (enum bosch_error). Internal
// code throws it for errors it can classify; the shim maps every other
// exception: std::bad_alloc and c10 out-of-memory -> BOSCH_E_NOMEM, any other
// c10::Error / std::exception -> BOSCH_E_EVALUATOR (a libtorch failure during
// computation).
#pragma once

#include "bosch/bosch.h"

#include <stdexcept>
#include <string>

namespace bosch_torch {

struct Failure : std::runtime_error {
    int status;
    Failure(int st, const std::string &msg) : std::runtime_error(msg), status(st) {}
};

// Bad argument or bad input data (BOSCH_E_INVALID).
[[noreturn]] inline void invalid(const std::string &msg) { throw Failure(BOSCH_E_INVALID, msg); }
// File could not be opened, read or written (BOSCH_E_IO).
[[noreturn]] inline void io_error(const std::string &msg) { throw Failure(BOSCH_E_IO, msg); }

} // namespace bosch_torch
