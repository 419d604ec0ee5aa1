// Inside libbosch-torch's extern "C" API (the shim, include/bosch/torch.h),
// split by handle: shim.cpp (the exception policy, creator errors, devices
// and dtypes, the calls on no handle), shim_model.cpp, shim_task.cpp,
// shim_evaluator.cpp, and shim_pre1.cpp (the pre-1.0 functions, thin
// wrappers over the same work). No C++ exception crosses the boundary:
// every entry point runs its work in guarded().
#pragma once

#include "bosch/torch.h"

#include "evaluator.hpp"
#include "failure.hpp"
#include "model.hpp"
#include "scorers.hpp"
#include "tasks.hpp"

#include <c10/util/Exception.h>
#include <torch/torch.h>

#include <cstddef>
#include <new>
#include <string>
#include <utility>
#include <vector>

namespace bosch_torch::shim {

// Copies msg into err (truncated, NUL-terminated); nothing when err is NULL.
void set_err(char *err, size_t len, const std::string &msg);
// c10 messages carry a C++ backtrace after the first line; keep the first
// line (the reason) only.
std::string first_line(const char *what);

// Runs f, mapping exceptions to a status and message.
template <class F> int guarded(std::string &msg, F &&f) {
    try {
        f();
        msg.clear();
        return BOSCH_OK;
    } catch (const Failure &e) {
        msg = e.what();
        return e.status;
    } catch (const std::bad_alloc &) {
        msg = "out of memory";
        return BOSCH_E_NOMEM;
    } catch (const c10::OutOfMemoryError &e) {
        msg = "out of device memory: " + first_line(e.what_without_backtrace());
        return BOSCH_E_NOMEM;
    } catch (const c10::Error &e) {
        std::string w = first_line(e.what_without_backtrace());
        msg = "libtorch: " + w;
        if (w.find("out of memory") != std::string::npos)
            return BOSCH_E_NOMEM;
        return BOSCH_E_EVALUATOR;
    } catch (const std::exception &e) {
        msg = first_line(e.what());
        return BOSCH_E_EVALUATOR;
    } catch (...) {
        msg = "unknown C++ exception";
        return BOSCH_E_EVALUATOR;
    }
}

// Why the last creator returned NULL, per thread (bosch_torch_create_status
// and bosch_torch_create_error; the core's create_fail is its model).
extern thread_local int t_create_status;
extern thread_local std::string t_create_message;

// Records "fn: reason" with `status` and returns NULL, so that a creator can
// `return create_fail(...)`.
std::nullptr_t create_fail(const char *fn, int status, const char *reason) noexcept;
// The pre-1.0 functions' report: the reason (or "") into err; a failure is
// also recorded for bosch_torch_create_error under the function's name when
// `fn` is given (the creators).
int old_report(const char *fn, int status, const std::string &msg, char *err, size_t err_len);
// Keeps `msg` ("" after a success) as the model's last error; written under
// the model's lock, like the evaluator's.
void note_model(bosch_torch_model *m, const std::string &msg) noexcept;

torch::Device pick_device(int device);
// "auto", "cpu", "cuda", "cuda:N" (N decimal, a visible device).
torch::Device parse_device(const char *spec);
torch::ScalarType pick_dtype(int dtype, const torch::Device &dev);
int dtype_enum(torch::ScalarType t);

// The work of each entry point, shared by the current and the pre-1.0
// functions: a status, and the reason in `msg` ("" on success).

// shim_model.cpp. `spec` (bosch_torch_model_open_device) wins over `device`
// when given.
int open_model(const char *dir, int device, const char *spec, int dtype,
               bosch_torch_model **out, std::string &msg);
int open_model(const char *dir, int device, int dtype, bosch_torch_model **out,
               std::string &msg);
int run_forward(bosch_torch_model *m, const int32_t *tokens, size_t batch, size_t len,
                const uint8_t *masks, uint32_t window, uint32_t sink, const int32_t *positions,
                size_t npos, float *logits, std::string &msg);

// shim_task.cpp.
int read_task(const char *path, bosch_torch_task **out, std::string &msg);
int niah_task(const NiahParams &p, bosch_torch_task **out, std::string &msg);
NiahParams niah_params(uint32_t vocab, uint32_t context, uint32_t samples, uint32_t needles,
                       uint32_t key_len, uint32_t value_len, double depth_min, double depth_max,
                       uint64_t seed);

// shim_evaluator.cpp.
int open_evaluator(bosch_torch_model *m, const bosch_torch_task *t, uint32_t window,
                   uint32_t sink, int metric, bosch_torch_evaluator **out, std::string &msg);
// What changes an evaluator's scores: the journal's keys and values
// (bosch_torch_evaluator_identify), and an MPI job's "key=value" lines
// (bosch_torch_evaluator_identity). Call under the model's lock.
std::vector<std::pair<std::string, std::string>> run_identity(const bosch_torch_evaluator &e);
std::string job_identity(const bosch_torch_evaluator &e);
// Static head-level scores (scorers.hpp). Outputs are written only on success.
int run_scores(bosch_torch_model *m, const bosch_torch_task *t, int scorer, uint32_t window,
               uint32_t sink, double *head_scores, double *unit_scores, std::string &msg);

} // namespace bosch_torch::shim
