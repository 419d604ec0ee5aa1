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
// pre-1.0 functions, which are thin wrappers over the same code).
#include "bosch/torch.h"

#include "evaluator.hpp"
#include "failure.hpp"
#include "model.hpp"
#include "scorers.hpp"
#include "tasks.hpp"

#include <c10/util/Exception.h>
#include <xxhash.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <string>

using namespace bosch_torch;

namespace {

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
thread_local int t_create_status = BOSCH_OK;
thread_local std::string t_create_message;

// Records "fn: reason" with `status` and returns NULL, so that a creator can
// `return create_fail(...)`.
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

// The pre-1.0 functions' report: the reason (or "") into err; a failure is
// also recorded for bosch_torch_create_error under the function's name when
// `fn` is given (the creators).
int old_report(const char *fn, int status, const std::string &msg, char *err, size_t err_len) {
    set_err(err, err_len, status == BOSCH_OK ? std::string() : msg);
    if (status != BOSCH_OK && fn)
        create_fail(fn, status, msg.c_str());
    return status;
}

// Keeps `msg` ("" after a success) as the model's last error; written under
// the model's lock, like the evaluator's.
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

// The work of each entry point, shared by the current and the pre-1.0
// functions: a status, and the reason in `msg` ("" on success).

// `spec` (bosch_torch_model_open_device) wins over `device` when given.
int open_model(const char *dir, int device, const char *spec, int dtype,
               bosch_torch_model **out, std::string &msg) {
    return guarded(msg, [&] {
        if (!dir)
            invalid("dir must not be NULL");
        torch::Device dev = spec ? parse_device(spec) : pick_device(device);
        torch::ScalarType dt = pick_dtype(dtype, dev);
        torch::InferenceMode guard;
        std::unique_ptr<bosch_torch_model> h(new bosch_torch_model);
        h->model = Model::load(dir, dev, dt);
        *out = h.release();
    });
}

int open_model(const char *dir, int device, int dtype, bosch_torch_model **out,
               std::string &msg) {
    return open_model(dir, device, nullptr, dtype, out, msg);
}

int run_forward(bosch_torch_model *m, const int32_t *tokens, size_t batch, size_t len,
                const uint8_t *masks, uint32_t window, uint32_t sink, const int32_t *positions,
                size_t npos, float *logits, std::string &msg) {
    return guarded(msg, [&] {
        if (!m || !m->model || !tokens || batch == 0 || len == 0)
            invalid("model and tokens must not be NULL; batch and len must be positive");
        if (npos > 0 && (!positions || !logits))
            invalid("positions and logits must not be NULL");
        if (window < 1)
            invalid("window must be at least 1");
        Model &md = *m->model;
        const size_t cap = size_t(std::numeric_limits<int64_t>::max() / 8);
        if (len > cap / batch)
            invalid("batch x len too large");
        if (npos > 0 && size_t(md.vocab()) > cap / npos / batch)
            invalid("batch x npos x vocab too large");
        for (size_t i = 0; i < batch * len; i++)
            if (tokens[i] < 0 || int64_t(tokens[i]) >= md.vocab())
                invalid("token " + std::to_string(tokens[i]) + " at index " + std::to_string(i) +
                        " is outside the vocabulary [0, " + std::to_string(md.vocab()) + ")");
        for (size_t j = 0; j < npos; j++)
            if (positions[j] < 0 || size_t(positions[j]) >= len)
                invalid("position " + std::to_string(positions[j]) + " is outside [0, " +
                        std::to_string(len) + ")");
        if (npos == 0)
            return;
        std::lock_guard<std::mutex> lock(md.mutex);
        torch::InferenceMode guard;
        const torch::Device dev = md.device();
        const int64_t B = int64_t(batch), T = int64_t(len), P = int64_t(npos);
        const int64_t L = md.layers(), G = md.kv_heads();
        // from_blob only wraps the caller's arrays: .to() copies them (dtype
        // or device change) before anything could write.
        torch::Tensor tok =
            torch::from_blob(const_cast<int32_t *>(tokens), {B, T},
                             torch::TensorOptions().dtype(torch::kInt32))
                .to(dev, torch::kInt64);
        torch::Tensor units;
        if (masks)
            units = torch::from_blob(const_cast<uint8_t *>(masks), {B, L, G},
                                     torch::TensorOptions().dtype(torch::kUInt8))
                        .to(dev, torch::kBool);
        torch::Tensor pos = torch::from_blob(const_cast<int32_t *>(positions), {P},
                                             torch::TensorOptions().dtype(torch::kInt32))
                                .to(dev, torch::kInt64);
        Window w;
        w.window = int64_t(window);
        w.sink = int64_t(sink);
        torch::Tensor out = md.forward(tok, units, w, pos).to(torch::kCPU).contiguous();
        memcpy(logits, out.data_ptr<float>(), size_t(out.numel()) * sizeof(float));
    });
}

int read_task(const char *path, bosch_torch_task **out, std::string &msg) {
    return guarded(msg, [&] {
        if (!path)
            invalid("path must not be NULL");
        std::unique_ptr<bosch_torch_task> t(new bosch_torch_task);
        t->task = load_jsonl(path);
        *out = t.release();
    });
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

int niah_task(const NiahParams &p, bosch_torch_task **out, std::string &msg) {
    return guarded(msg, [&] {
        std::unique_ptr<bosch_torch_task> t(new bosch_torch_task);
        t->task = make_niah(p);
        *out = t.release();
    });
}

NiahParams niah_params(uint32_t vocab, uint32_t context, uint32_t samples, uint32_t needles,
                       uint32_t key_len, uint32_t value_len, double depth_min, double depth_max,
                       uint64_t seed) {
    NiahParams p;
    p.vocab = vocab;
    p.context = context;
    p.samples = samples;
    p.needles = needles;
    p.key_len = key_len;
    p.value_len = value_len;
    p.depth_min = depth_min;
    p.depth_max = depth_max;
    p.seed = seed;
    return p;
}

int open_evaluator(bosch_torch_model *m, const bosch_torch_task *t, uint32_t window,
                   uint32_t sink, int metric, bosch_torch_evaluator **out, std::string &msg) {
    return guarded(msg, [&] {
        if (!m || !m->model || !t)
            invalid("model and task must not be NULL");
        if (metric != BOSCH_TORCH_METRIC_EXACT && metric != BOSCH_TORCH_METRIC_LOGPROB &&
            metric != BOSCH_TORCH_METRIC_MATCH)
            invalid("unknown metric " + std::to_string(metric));
        Window w;
        w.window = int64_t(window);
        w.sink = int64_t(sink);
        std::lock_guard<std::mutex> lock(m->model->mutex);
        torch::InferenceMode guard;
        std::unique_ptr<bosch_torch_evaluator> e(new bosch_torch_evaluator);
        e->model = m;
        e->ev.reset(new Evaluator(*m->model, t->task, w, Metric(metric)));
        *out = e.release();
    });
}

// Static head-level scores (scorers.hpp). Outputs are written only on success.
int run_scores(bosch_torch_model *m, const bosch_torch_task *t, int scorer, uint32_t window,
               uint32_t sink, double *head_scores, double *unit_scores, std::string &msg) {
    return guarded(msg, [&] {
        if (!m || !m->model || !t)
            invalid("model and task must not be NULL");
        if (!scorer_name(scorer))
            invalid("unknown scorer " + std::to_string(scorer));
        Window w;
        w.window = int64_t(window);
        w.sink = int64_t(sink);
        Model &md = *m->model;
        std::lock_guard<std::mutex> lock(md.mutex);
        // No InferenceMode here: FISHER needs autograd (compute_scores sets
        // the mode per scorer).
        HeadScores s = compute_scores(md, t->task, Scorer(scorer), w);
        if (head_scores)
            memcpy(head_scores, s.head.data(), s.head.size() * sizeof(double));
        if (unit_scores)
            memcpy(unit_scores, s.unit.data(), s.unit.size() * sizeof(double));
    });
}

} // namespace

extern "C" {

BOSCH_TORCH_API int bosch_torch_cuda_available(void) {
    try {
        return torch::cuda::is_available() ? 1 : 0;
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

BOSCH_TORCH_API int bosch_torch_create_status(void) { return t_create_status; }

BOSCH_TORCH_API const char *bosch_torch_create_error(void) { return t_create_message.c_str(); }

// ---------------------------------------------------------------------------
// Model

BOSCH_TORCH_API bosch_torch_model *bosch_torch_model_open(const char *dir, int device,
                                                          int dtype) {
    bosch_torch_model *m = nullptr;
    std::string msg;
    int st = open_model(dir, device, dtype, &m, msg);
    if (st != BOSCH_OK)
        return create_fail("bosch_torch_model_open", st, msg.c_str());
    return m;
}

BOSCH_TORCH_API bosch_torch_model *bosch_torch_model_open_device(const char *dir,
                                                                 const char *device, int dtype) {
    bosch_torch_model *m = nullptr;
    std::string msg;
    int st = device ? open_model(dir, 0, device, dtype, &m, msg)
                    : (msg = "device must not be NULL", BOSCH_E_INVALID);
    if (st != BOSCH_OK)
        return create_fail("bosch_torch_model_open_device", st, msg.c_str());
    return m;
}

BOSCH_TORCH_API int bosch_torch_model_memory(const bosch_torch_model *m, uint64_t *param_bytes,
                                             int *dtype) {
    if (!m || !m->model)
        return BOSCH_E_INVALID;
    if (param_bytes)
        *param_bytes = uint64_t(m->model->param_bytes());
    if (dtype)
        *dtype = dtype_enum(m->model->dtype());
    return BOSCH_OK;
}

BOSCH_TORCH_API const char *bosch_torch_model_device(const bosch_torch_model *m) {
    return m && m->model ? m->model->device_name().c_str() : "";
}

BOSCH_TORCH_API const char *bosch_torch_dtype_name(int dtype) {
    switch (dtype) {
    case BOSCH_TORCH_DTYPE_AUTO:
        return "auto";
    case BOSCH_TORCH_DTYPE_F32:
        return "f32";
    case BOSCH_TORCH_DTYPE_BF16:
        return "bf16";
    case BOSCH_TORCH_DTYPE_F16:
        return "f16";
    default:
        return nullptr;
    }
}

BOSCH_TORCH_API void bosch_torch_model_free(bosch_torch_model *m) {
    try {
        delete m;
    } catch (...) {
    }
}

BOSCH_TORCH_API const char *bosch_torch_model_last_error(const bosch_torch_model *m) {
    return m ? m->last_error.c_str() : "";
}

BOSCH_TORCH_API int bosch_torch_model_shape(const bosch_torch_model *m, uint32_t *layers,
                                            uint32_t *kv_heads, uint32_t *heads_per_group,
                                            uint32_t *vocab) {
    if (!m || !m->model)
        return BOSCH_E_INVALID;
    const Model &md = *m->model;
    if (layers)
        *layers = uint32_t(md.layers());
    if (kv_heads)
        *kv_heads = uint32_t(md.kv_heads());
    if (heads_per_group)
        *heads_per_group = uint32_t(md.heads_per_group());
    if (vocab)
        *vocab = uint32_t(md.vocab());
    return BOSCH_OK;
}

BOSCH_TORCH_API bosch_problem *bosch_torch_model_problem(const bosch_torch_model *m) {
    if (!m || !m->model)
        return create_fail("bosch_torch_model_problem", BOSCH_E_INVALID, "model is NULL");
    const Model &md = *m->model;
    bosch_problem *p = bosch_problem_create(uint32_t(md.layers()), uint32_t(md.kv_heads()),
                                            uint32_t(md.heads_per_group()));
    if (!p)
        return create_fail("bosch_torch_model_problem",
                           bosch_create_status() != BOSCH_OK ? bosch_create_status()
                                                             : BOSCH_E_NOMEM,
                           bosch_create_error());
    // The config's sliding layers are SWA whatever the mask says.
    const Qwen3Config &c = md.config();
    for (size_t l = 0; l < c.layer_sliding.size(); l++)
        if (c.layer_sliding[l])
            for (uint32_t g = 0; g < uint32_t(md.kv_heads()); g++)
                bosch_problem_fix_unit(p, uint32_t(l), g, BOSCH_FIX_SWA);
    return p;
}

BOSCH_TORCH_API uint32_t bosch_torch_model_sliding_window(const bosch_torch_model *m) {
    return m && m->model ? uint32_t(m->model->config().sliding_window) : 0;
}

BOSCH_TORCH_API int bosch_torch_model_layer_sliding(const bosch_torch_model *m, uint32_t layer) {
    if (!m || !m->model || layer >= uint32_t(m->model->layers()))
        return BOSCH_E_INVALID;
    const std::vector<uint8_t> &ls = m->model->config().layer_sliding;
    return layer < ls.size() && ls[layer] ? 1 : 0;
}

BOSCH_TORCH_API int bosch_torch_model_experts(const bosch_torch_model *m, uint32_t *experts,
                                              uint32_t *per_token, uint32_t *sparse_layers) {
    if (!m || !m->model)
        return BOSCH_E_INVALID;
    const Qwen3Config &c = m->model->config();
    uint32_t n = 0;
    for (int64_t l = 0; l < c.num_hidden_layers; l++)
        n += c.sparse(l) ? 1 : 0;
    if (experts)
        *experts = n ? uint32_t(c.num_experts) : 0;
    if (per_token)
        *per_token = n ? uint32_t(c.num_experts_per_tok) : 0;
    if (sparse_layers)
        *sparse_layers = n;
    return BOSCH_OK;
}

BOSCH_TORCH_API int bosch_torch_model_forward(bosch_torch_model *m, const int32_t *tokens,
                                              size_t batch, size_t len, const uint8_t *masks,
                                              uint32_t window, uint32_t sink,
                                              const int32_t *positions, size_t npos,
                                              float *logits) {
    std::string msg;
    int st = run_forward(m, tokens, batch, len, masks, window, sink, positions, npos, logits, msg);
    note_model(m, msg);
    return st;
}

BOSCH_TORCH_API int bosch_torch_model_scores(bosch_torch_model *m, const bosch_torch_task *t,
                                             int scorer, uint32_t window, uint32_t sink,
                                             double *head_scores, double *unit_scores) {
    std::string msg;
    int st = run_scores(m, t, scorer, window, sink, head_scores, unit_scores, msg);
    note_model(m, msg);
    return st;
}

BOSCH_TORCH_API const char *bosch_torch_scorer_name(int scorer) { return scorer_name(scorer); }

// ---------------------------------------------------------------------------
// Tasks

BOSCH_TORCH_API bosch_torch_task *bosch_torch_task_read_jsonl(const char *path) {
    bosch_torch_task *t = nullptr;
    std::string msg;
    int st = read_task(path, &t, msg);
    if (st != BOSCH_OK)
        return create_fail("bosch_torch_task_read_jsonl", st, msg.c_str());
    return t;
}

BOSCH_TORCH_API bosch_torch_task *bosch_torch_task_from_text(const bosch_text_task *text,
                                                             const bosch_tokenizer *tok,
                                                             unsigned chat_flags) {
    bosch_torch_task *t = nullptr;
    std::string msg;
    int st = guarded(msg, [&] {
        std::unique_ptr<bosch_torch_task> h(new bosch_torch_task);
        h->task = from_text(text, tok, chat_flags);
        t = h.release();
    });
    if (st != BOSCH_OK)
        return create_fail("bosch_torch_task_from_text", st, msg.c_str());
    return t;
}

BOSCH_TORCH_API bosch_torch_task *bosch_torch_task_create_niah(
    uint32_t vocab, uint32_t context, uint32_t samples, uint32_t needles, uint32_t key_len,
    uint32_t value_len, double depth_min, double depth_max, uint64_t seed) {
    bosch_torch_task *t = nullptr;
    std::string msg;
    int st = niah_task(niah_params(vocab, context, samples, needles, key_len, value_len,
                                   depth_min, depth_max, seed),
                       &t, msg);
    if (st != BOSCH_OK)
        return create_fail("bosch_torch_task_create_niah", st, msg.c_str());
    return t;
}

BOSCH_TORCH_API bosch_torch_task *bosch_torch_task_create_niah_ids(
    const int32_t *filler, size_t n_filler, int32_t key_marker, int32_t value_marker,
    int32_t query_marker, uint32_t context, uint32_t samples, uint32_t needles, uint32_t key_len,
    uint32_t value_len, double depth_min, double depth_max, uint64_t seed) {
    bosch_torch_task *t = nullptr;
    std::string msg;
    int st = guarded(msg, [&] {
        if (!filler || n_filler == 0)
            invalid("filler must not be NULL or empty");
        NiahParams p = niah_params(0, context, samples, needles, key_len, value_len, depth_min,
                                   depth_max, seed);
        p.filler.assign(filler, filler + n_filler);
        p.key_marker = key_marker;
        p.value_marker = value_marker;
        p.query_marker = query_marker;
        std::unique_ptr<bosch_torch_task> h(new bosch_torch_task);
        h->task = make_niah(p);
        t = h.release();
    });
    if (st != BOSCH_OK)
        return create_fail("bosch_torch_task_create_niah_ids", st, msg.c_str());
    return t;
}

BOSCH_TORCH_API int bosch_torch_task_write_jsonl(const bosch_torch_task *t, const char *path) {
    std::string msg;
    return guarded(msg, [&] {
        if (!t || !path)
            invalid("task and path must not be NULL");
        write_jsonl(t->task, path);
    });
}

BOSCH_TORCH_API size_t bosch_torch_task_samples(const bosch_torch_task *t) {
    return t ? t->task.samples.size() : 0;
}

BOSCH_TORCH_API size_t bosch_torch_task_prompt_len(const bosch_torch_task *t) {
    size_t n = 0;
    if (t)
        for (const Sample &s : t->task.samples)
            n = std::max(n, s.prompt.size());
    return n;
}

BOSCH_TORCH_API size_t bosch_torch_task_prompt_len_of(const bosch_torch_task *t, size_t i) {
    return t && i < t->task.samples.size() ? t->task.samples[i].prompt.size() : 0;
}

BOSCH_TORCH_API void bosch_torch_task_free(bosch_torch_task *t) { delete t; }

// ---------------------------------------------------------------------------
// Evaluator

BOSCH_TORCH_API bosch_torch_evaluator *bosch_torch_evaluator_open(bosch_torch_model *m,
                                                                  const bosch_torch_task *t,
                                                                  uint32_t window, uint32_t sink,
                                                                  int metric) {
    bosch_torch_evaluator *e = nullptr;
    std::string msg;
    int st = open_evaluator(m, t, window, sink, metric, &e, msg);
    if (st != BOSCH_OK)
        return create_fail("bosch_torch_evaluator_open", st, msg.c_str());
    return e;
}

BOSCH_TORCH_API void bosch_torch_evaluator_free(bosch_torch_evaluator *e) {
    if (!e)
        return;
    try {
        std::lock_guard<std::mutex> lock(e->model->model->mutex);
        e->ev.reset();
    } catch (...) {
    }
    delete e;
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_batch(bosch_torch_evaluator *e,
                                                    uint32_t candidates) {
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    if (candidates == 0) {
        e->ev->last_error = "candidates must be at least 1";
        return BOSCH_E_INVALID;
    }
    e->ev->set_batch(candidates);
    return BOSCH_OK;
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_buckets(bosch_torch_evaluator *e,
                                                      uint32_t buckets) {
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    std::string msg;
    int st = guarded(msg, [&] {
        torch::InferenceMode guard;
        e->ev->set_buckets(buckets);
    });
    if (st != BOSCH_OK)
        e->ev->last_error = msg;
    return st;
}

BOSCH_TORCH_API const char *bosch_torch_model_identity(const bosch_torch_model *m) {
    return m && m->model ? m->model->identity().c_str() : "";
}

BOSCH_TORCH_API int bosch_torch_evaluator_identify(const bosch_torch_evaluator *e,
                                                   bosch_optimizer *opt) {
    if (!e || !opt)
        return BOSCH_E_INVALID;
    // The task: every sample's prompt and answer ids, answer strings and
    // continuation length, in order.
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        return BOSCH_E_NOMEM;
    XXH3_64bits_reset(st);
    const bosch_torch::Task &task = e->ev->task();
    for (const bosch_torch::Sample &s : task.samples) {
        const uint64_t lens[3] = {s.prompt.size(), s.answer.size(), uint64_t(s.max_new)};
        XXH3_64bits_update(st, lens, sizeof lens);
        XXH3_64bits_update(st, s.prompt.data(), s.prompt.size() * sizeof(int32_t));
        XXH3_64bits_update(st, s.answer.data(), s.answer.size() * sizeof(int32_t));
        for (const std::string &a : s.answers)
            XXH3_64bits_update(st, a.c_str(), a.size() + 1);
    }
    char task_id[40];
    std::snprintf(task_id, sizeof task_id, "xxh3:%016llx:%zu",
                  (unsigned long long)XXH3_64bits_digest(st), task.samples.size());
    XXH3_freeState(st);
    const bosch_torch::Model &m = *e->model->model;
    const bosch_torch::Window &w = e->ev->window();
    static const char *const metrics[] = {"exact", "logprob", "match"};
    const int mi = int(e->ev->metric());
    const std::string window = std::to_string(w.window), sink = std::to_string(w.sink);
    const struct {
        const char *key;
        const char *value;
    } ids[] = {{"torch.model", m.identity().c_str()},
               {"torch.task", task_id},
               {"torch.metric", mi >= 0 && mi < 3 ? metrics[mi] : "?"},
               {"torch.window", window.c_str()},
               {"torch.sink", sink.c_str()},
               {"torch.dtype", bosch_torch::dtype_name(m.dtype())}};
    for (const auto &id : ids) {
        const int rc = bosch_set_run_identity(opt, id.key, id.value);
        if (rc != BOSCH_OK)
            return rc;
    }
    return BOSCH_OK;
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_prefix_cache(bosch_torch_evaluator *e, int on) {
    if (!e)
        return BOSCH_E_INVALID;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    e->ev->set_prefix_cache(on != 0);
    return BOSCH_OK;
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_reference(bosch_torch_evaluator *e,
                                                        const uint8_t *mask, size_t units) {
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    const bosch_torch::Model &m = *e->model->model;
    const size_t want = size_t(m.layers() * m.kv_heads());
    if (mask && units != want) {
        e->ev->last_error = "reference has " + std::to_string(units) +
                            " units, the model has " + std::to_string(want);
        return BOSCH_E_INVALID;
    }
    e->ev->set_reference(mask);
    e->ev->last_error.clear();
    return BOSCH_OK;
}

// Runs `work` on the evaluator under its model's lock, after checking the
// unit count; returns BOSCH_OK, or a negative enum bosch_error (the optimizer
// reports it through bosch_evaluator_status()) with the message in
// bosch_torch_evaluator_last_error(). `evaluator` is not const: the message
// is written into it.
static int with_evaluator(void *evaluator, size_t units,
                          const std::function<void(Evaluator &)> &work) {
    auto *e = static_cast<bosch_torch_evaluator *>(evaluator);
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    Evaluator &ev = *e->ev;
    Model &md = *e->model->model;
    std::string msg;
    std::lock_guard<std::mutex> lock(md.mutex);
    int st = guarded(msg, [&] {
        if (units != size_t(md.layers() * md.kv_heads()))
            invalid("mask has " + std::to_string(units) + " units, the model has " +
                    std::to_string(md.layers() * md.kv_heads()) + " (layers x KV heads)");
        torch::InferenceMode guard;
        work(ev);
    });
    ev.last_error = msg;
    return st;
}

BOSCH_TORCH_API int bosch_torch_batch_eval(const uint8_t *masks, size_t n, size_t units,
                                           double *scores, void *evaluator) {
    return with_evaluator(evaluator, units, [&](Evaluator &ev) {
        if (n > 0 && (!masks || !scores))
            invalid("masks and scores must not be NULL");
        ev.score(masks, n, scores);
    });
}

BOSCH_TORCH_API int bosch_torch_evaluator_noise(bosch_torch_evaluator *e, double *noise) {
    if (!e || !noise)
        return BOSCH_E_INVALID;
    const size_t units = e->model && e->model->model
                             ? size_t(e->model->model->layers() * e->model->model->kv_heads())
                             : 0;
    return with_evaluator(e, units, [&](Evaluator &ev) { *noise = ev.noise(); });
}

// Requests (torch.h): request i at fidelity f is scored on
// k = max(1, ceil(f * samples)) samples, from (draw * k) mod samples on,
// cyclically. Requests on the same samples (every request with k = samples
// is on all of them) form one group, scored by one Evaluator::score call
// (batch, buckets and prefix cache as for bosch_torch_batch_eval); at
// k = samples that is exactly bosch_torch_batch_eval's computation.
BOSCH_TORCH_API int bosch_torch_request_batch_eval(const uint8_t *masks, const double *fidelity,
                                                   const uint32_t *draws, size_t n, size_t units,
                                                   double *scores, void *evaluator) {
    return with_evaluator(evaluator, units, [&](Evaluator &ev) {
        if (n > 0 && (!masks || !fidelity || !draws || !scores))
            invalid("masks, fidelity, draws and scores must not be NULL");
        const size_t S = ev.samples();
        // Group key: (first sample, k); every full-task request is (0, S).
        std::vector<std::pair<size_t, size_t>> keys;
        std::vector<std::vector<size_t>> members;
        for (size_t i = 0; i < n; i++) {
            const double f = fidelity[i];
            if (!(f > 0.0 && f <= 1.0)) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "%g", f);
                invalid("request " + std::to_string(i) + ": fidelity " + buf +
                        " is outside (0, 1]");
            }
            // A few ulps below f * S, so that f = 0.1 of 30 samples
            // (0.1 * 30 = 3.0000000000000004) takes 3 samples, not 4.
            const double x = f * double(S);
            size_t k = size_t(std::ceil(x * (1.0 - 1e-12)));
            k = std::min(S, std::max<size_t>(1, k));
            const size_t first =
                k == S ? 0 : size_t((uint64_t(draws[i] % S) * uint64_t(k)) % uint64_t(S));
            const std::pair<size_t, size_t> key(first, k);
            size_t g = 0;
            while (g < keys.size() && keys[g] != key)
                g++;
            if (g == keys.size()) {
                keys.push_back(key);
                members.emplace_back();
            }
            members[g].push_back(i);
        }
        std::vector<uint8_t> buf;
        std::vector<double> out;
        for (size_t g = 0; g < keys.size(); g++) {
            const std::vector<size_t> &idx = members[g];
            const size_t first = keys[g].first, k = keys[g].second;
            std::vector<size_t> subset;
            if (k < S) {
                for (size_t j = 0; j < k; j++)
                    subset.push_back((first + j) % S);
                std::sort(subset.begin(), subset.end());
            }
            buf.resize(idx.size() * units);
            for (size_t c = 0; c < idx.size(); c++)
                std::memcpy(buf.data() + c * units, masks + idx[c] * units, units);
            out.assign(idx.size(), 0.0);
            ev.score(buf.data(), idx.size(), out.data(), subset);
            for (size_t c = 0; c < idx.size(); c++)
                scores[idx[c]] = out[c];
        }
    });
}

BOSCH_TORCH_API const char *bosch_torch_evaluator_last_error(const bosch_torch_evaluator *e) {
    if (!e || !e->ev)
        return "";
    return e->ev->last_error.c_str();
}

// ---------------------------------------------------------------------------
// Pre-1.0 functions (torch.h, "kept until 1.0"): the same work, the reason
// into `err` as before.

BOSCH_TORCH_API int bosch_torch_model_load(const char *dir, int device, int dtype,
                                           bosch_torch_model **out, char *err, size_t err_len) {
    if (out)
        *out = nullptr;
    std::string msg;
    int st = BOSCH_E_INVALID;
    if (!dir || !out)
        msg = "dir and out must not be NULL";
    else
        st = open_model(dir, device, dtype, out, msg);
    return old_report("bosch_torch_model_load", st, msg, err, err_len);
}

BOSCH_TORCH_API int bosch_torch_forward(bosch_torch_model *m, const int32_t *tokens, size_t batch,
                                        size_t len, const uint8_t *masks, uint32_t window,
                                        uint32_t sink, const int32_t *positions, size_t npos,
                                        float *logits, char *err, size_t err_len) {
    std::string msg;
    int st = run_forward(m, tokens, batch, len, masks, window, sink, positions, npos, logits, msg);
    note_model(m, msg);
    return old_report(nullptr, st, msg, err, err_len);
}

BOSCH_TORCH_API int bosch_torch_task_load_jsonl(const char *path, bosch_torch_task **out,
                                                char *err, size_t err_len) {
    if (out)
        *out = nullptr;
    std::string msg;
    int st = BOSCH_E_INVALID;
    if (!path || !out)
        msg = "path and out must not be NULL";
    else
        st = read_task(path, out, msg);
    return old_report("bosch_torch_task_load_jsonl", st, msg, err, err_len);
}

BOSCH_TORCH_API int bosch_torch_task_niah(uint32_t vocab, uint32_t context, uint32_t samples,
                                          uint32_t needles, uint32_t key_len, uint32_t value_len,
                                          double depth_min, double depth_max, uint64_t seed,
                                          bosch_torch_task **out, char *err, size_t err_len) {
    if (out)
        *out = nullptr;
    std::string msg;
    int st = BOSCH_E_INVALID;
    if (!out)
        msg = "out must not be NULL";
    else
        st = niah_task(niah_params(vocab, context, samples, needles, key_len, value_len,
                                   depth_min, depth_max, seed),
                       out, msg);
    return old_report("bosch_torch_task_niah", st, msg, err, err_len);
}

BOSCH_TORCH_API int bosch_torch_evaluator_create(bosch_torch_model *m, const bosch_torch_task *t,
                                                 uint32_t window, uint32_t sink, int metric,
                                                 bosch_torch_evaluator **out, char *err,
                                                 size_t err_len) {
    if (out)
        *out = nullptr;
    std::string msg;
    int st = BOSCH_E_INVALID;
    if (!m || !m->model || !t || !out)
        msg = "model, task and out must not be NULL";
    else
        st = open_evaluator(m, t, window, sink, metric, out, msg);
    return old_report("bosch_torch_evaluator_create", st, msg, err, err_len);
}

BOSCH_TORCH_API int bosch_torch_scores(bosch_torch_model *m, const bosch_torch_task *t,
                                       int scorer, uint32_t window, uint32_t sink,
                                       double *head_scores, double *unit_scores, char *err,
                                       size_t err_len) {
    std::string msg;
    int st = run_scores(m, t, scorer, window, sink, head_scores, unit_scores, msg);
    note_model(m, msg);
    return old_report(nullptr, st, msg, err, err_len);
}

} // extern "C"
