// The pre-1.0 functions of libbosch-torch's C API (torch.h, "kept until
// 1.0"): the same work as the current ones, the reason into `err`.
#include "shim.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>

using namespace bosch_torch;
using namespace bosch_torch::shim;

extern "C" {

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
