// The extern "C" API of libbosch-torch (include/bosch/torch.h). No C++
// exception crosses this boundary: every entry point catches and maps
//   Failure                    -> its status (BOSCH_E_INVALID: bad argument or
//                                 bad input data such as a malformed checkpoint
//                                 or task; BOSCH_E_IO: a file could not be
//                                 opened, read or written)
//   std::bad_alloc, c10 OOM    -> BOSCH_E_NOMEM
//   other c10::Error / std::exception / anything else
//                              -> BOSCH_E_EVALUATOR (libtorch failed while
//                                 computing: a device error, an unsupported
//                                 dtype on this device, ...)
// and keeps the message: for bosch_torch_create_error (creators, per thread),
// in the model or the evaluator (functions on a handle), or in `err` (the
#include "shim.hpp"
#include "shim_c.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace bosch_torch;

namespace bosch_torch::shim {

void set_err(char *err, size_t len, const std::string &msg) {
    if (!err || len == 0)
        return;
    size_t n = std::min(msg.size(), len - 1);
    memcpy(err, msg.data(), n);
    err[n] = '\0';
}

// c10 messages carry a C++ backtrace after the first line; keep the first
// line (the reason) only.
std::string first_line(const char *what) {
    std::string s = what ? what : "";
    size_t nl = s.find('\n');
    if (nl != std::string::npos)
        s.resize(nl);
    return s;
}

thread_local int t_create_status = BOSCH_OK;
thread_local std::string t_create_message;

std::nullptr_t create_fail(const char *fn, int status, const char *reason) noexcept {
    t_create_status = status;
    try {
        std::string m = std::string(fn) + ": " + reason;
        t_create_message.swap(m);
    } catch (...) {
        t_create_message.clear(); // no memory for the text; the status stands
    }
    return nullptr;
}

int old_report(const char *fn, int status, const std::string &msg, char *err, size_t err_len) {
    set_err(err, err_len, status == BOSCH_OK ? std::string() : msg);
    if (status != BOSCH_OK && fn)
        create_fail(fn, status, msg.c_str());
    return status;
}

void note_model(bosch_torch_model *m, const std::string &msg) noexcept {
    if (!m)
        return;
    try {
        if (m->model) {
            std::lock_guard<std::mutex> lock(m->model->mutex);
            m->last_error = msg;
        } else {
            m->last_error = msg;
        }
    } catch (...) {
        m->last_error.clear();
    }
}

torch::Device pick_device(int device) {
    switch (device) {
    case BOSCH_TORCH_DEVICE_AUTO:
        return torch::cuda::is_available() ? torch::Device(torch::kCUDA, 0)
                                           : torch::Device(torch::kCPU);
    case BOSCH_TORCH_DEVICE_CPU:
        return torch::Device(torch::kCPU);
    case BOSCH_TORCH_DEVICE_CUDA:
        if (!torch::cuda::is_available())
            invalid("CUDA requested but not available (CPU-only libtorch, or no visible device)");
        return torch::Device(torch::kCUDA, 0);
    default:
        invalid("unknown device " + std::to_string(device));
    }
}

// "auto", "cpu", "cuda", "cuda:N" (N decimal, a visible device).
torch::Device parse_device(const char *spec) {
    if (!spec)
        invalid("device must not be NULL");
    const std::string d = spec;
    if (d == "auto")
        return pick_device(BOSCH_TORCH_DEVICE_AUTO);
    if (d == "cpu")
        return torch::Device(torch::kCPU);
    if (d == "cuda")
        return pick_device(BOSCH_TORCH_DEVICE_CUDA);
    const std::string bad = "device \"" + d + "\" is not auto, cpu, cuda or cuda:N";
    if (d.compare(0, 5, "cuda:") != 0 || d.size() == 5 || d.size() > 5 + 4)
        invalid(bad);
    int n = 0;
    for (size_t i = 5; i < d.size(); i++) {
        if (d[i] < '0' || d[i] > '9')
            invalid(bad);
        n = n * 10 + (d[i] - '0');
    }
    if (!torch::cuda::is_available())
        invalid(d + " requested but CUDA is not available (CPU-only libtorch, or no visible "
                    "device)");
    const int count = int(torch::cuda::device_count());
    if (n >= count)
        invalid(d + " requested but only " + std::to_string(count) +
                " CUDA device(s) are visible");
    return torch::Device(torch::kCUDA, c10::DeviceIndex(n));
}

torch::ScalarType pick_dtype(int dtype, const torch::Device &dev) {
    switch (dtype) {
    case BOSCH_TORCH_DTYPE_AUTO:
        return dev.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
    case BOSCH_TORCH_DTYPE_F32:
        return torch::kFloat32;
    case BOSCH_TORCH_DTYPE_BF16:
        return torch::kBFloat16;
    case BOSCH_TORCH_DTYPE_F16:
        return torch::kFloat16;
    default:
        invalid("unknown dtype " + std::to_string(dtype));
    }
}

int dtype_enum(torch::ScalarType t) {
    switch (t) {
    case torch::kFloat32:
        return BOSCH_TORCH_DTYPE_F32;
    case torch::kBFloat16:
        return BOSCH_TORCH_DTYPE_BF16;
    case torch::kFloat16:
        return BOSCH_TORCH_DTYPE_F16;
    default:
        return BOSCH_TORCH_DTYPE_AUTO;
    }
}

} // namespace bosch_torch::shim

using namespace bosch_torch::shim;

extern "C" {

BOSCH_TORCH_API int bosch_torch_cuda_available(void) {
    try {
        return torch::cuda::is_available() ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

BOSCH_TORCH_API uint32_t bosch_torch_cuda_device_count(void) {
    try {
        return torch::cuda::is_available() ? (uint32_t)torch::cuda::device_count() : 0;
    } catch (...) {
        return 0;
    }
}

BOSCH_TORCH_API int bosch_torch_set_threads(uint32_t threads) {
    if (threads == 0 || threads > 4096)
        return BOSCH_E_INVALID;
    try {
        at::set_num_threads(int(threads));
    } catch (...) {
        return BOSCH_E_STATE; // libtorch refused (e.g. its pool already runs)
    }
    return BOSCH_OK;
}

BOSCH_TORCH_API uint32_t bosch_torch_threads(void) {
    try {
        return uint32_t(std::max(1, at::get_num_threads()));
    } catch (...) {
        return 1;
    }
}

// shim_c.h: the C files' way to the same record.
void bt_create_fail(const char *fn, int status, const char *reason) {
    create_fail(fn, status, reason);
}

BOSCH_TORCH_API int bosch_torch_create_status(void) { return t_create_status; }

BOSCH_TORCH_API const char *bosch_torch_create_error(void) { return t_create_message.c_str(); }

} // extern "C"
