// The model handle of libbosch-torch's C API (shim.hpp): open, shape, memory,
// forward, free.
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

namespace bosch_torch::shim {

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

} // namespace bosch_torch::shim

extern "C" {

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
    const ModelConfig &c = md.config();
    for (size_t l = 0; l < c.layer_sliding.size(); l++)
        if (c.layer_sliding[l])
            for (uint32_t g = 0; g < uint32_t(md.kv_heads()); g++)
                bosch_problem_fix_unit(p, uint32_t(l), g, BOSCH_FIX_SWA);
    return p;
}

BOSCH_TORCH_API uint32_t bosch_torch_model_sliding_window(const bosch_torch_model *m) {
    return m && m->model ? uint32_t(m->model->config().sliding_window) : 0;
}

BOSCH_TORCH_API uint64_t bosch_torch_model_max_positions(const bosch_torch_model *m) {
    return m && m->model ? uint64_t(std::max<int64_t>(0, m->model->config().max_position_embeddings))
                         : 0;
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
    const ModelConfig &c = m->model->config();
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

} // extern "C"
