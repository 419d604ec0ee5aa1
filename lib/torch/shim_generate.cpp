// bosch_torch_generate (torch.h): greedy continuation of one prompt through
// the hybrid KV cache (kv_cache.hpp), with the bytes it holds and its time;
// bosch_torch_generate_reference: the same by the masked forward over the
// whole sequence per token, what the cache must reproduce.
#include "shim.hpp"

#include "kv_cache.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

using namespace bosch_torch;
using namespace bosch_torch::shim;

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The checks both continuations make; the mask as [1, L, G] bool on the
// model's device (undefined: all full).
torch::Tensor checked_units(bosch_torch_model *m, const uint8_t *mask, size_t units,
                            uint32_t window, const int32_t *prompt, size_t n_prompt,
                            uint32_t max_new, const int32_t *stop, size_t n_stop, int32_t *out,
                            size_t *n_out) {
    if (!m || !m->model || !prompt || n_prompt == 0 || (max_new && !out) || !n_out ||
        (n_stop && !stop))
        invalid("model, prompt, out and n_out must not be NULL; the prompt not empty");
    if (window < 1)
        invalid("window must be at least 1");
    Model &md = *m->model;
    const int64_t L = md.layers(), G = md.kv_heads();
    if (mask && units != size_t(L * G))
        invalid("mask has " + std::to_string(units) + " units, the model has " +
                std::to_string(L * G) + " (layers x KV heads)");
    if (n_prompt > size_t(std::numeric_limits<int32_t>::max()) - max_new)
        invalid("prompt + max_new too long");
    // As the evaluator's task check, before any forward: the sequence
    // (prompt + new tokens, as serving engines count it) within the
    // model's positions.
    const int64_t cap = md.config().max_position_embeddings;
    const int64_t len = int64_t(n_prompt) + int64_t(max_new);
    if (cap > 0 && len > cap)
        invalid("the prompt's " + std::to_string(n_prompt) + " tokens + max_new " +
                std::to_string(max_new) + " = " + std::to_string(len) +
                " positions, more than the model's max_position_embeddings (" +
                std::to_string(cap) + ")");
    for (size_t i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || int64_t(prompt[i]) >= md.vocab())
            invalid("token " + std::to_string(prompt[i]) + " at index " + std::to_string(i) +
                    " is outside the vocabulary [0, " + std::to_string(md.vocab()) + ")");
    *n_out = 0;
    if (!mask)
        return torch::Tensor();
    return torch::from_blob(const_cast<uint8_t *>(mask), {1, L, G},
                            torch::TensorOptions().dtype(torch::kUInt8))
        .to(md.device(), torch::kBool);
}

bool stops(const int32_t *stop, size_t n_stop, int32_t id) {
    return std::find(stop, stop + n_stop, id) != stop + n_stop;
}

} // namespace

extern "C" {

BOSCH_TORCH_API int bosch_torch_generate(bosch_torch_model *m, const uint8_t *mask, size_t units,
                                         uint32_t window, uint32_t sink, const int32_t *prompt,
                                         size_t n_prompt, uint32_t max_new, const int32_t *stop,
                                         size_t n_stop, int32_t *out, size_t *n_out,
                                         struct bosch_torch_generation *info) {
    std::string msg;
    int st = guarded(msg, [&] {
        if (info && info->struct_size < sizeof(struct bosch_torch_generation))
            invalid("struct bosch_torch_generation: struct_size not set");
        torch::Tensor u =
            checked_units(m, mask, units, window, prompt, n_prompt, max_new, stop, n_stop, out, n_out);
        Model &md = *m->model;
        std::lock_guard<std::mutex> lock(md.mutex);
        torch::InferenceMode guard;
        const double t0 = now();
        KvCache kc(md, u, Window{int64_t(window), int64_t(sink)}, 1,
                   int64_t(n_prompt) + std::max<int64_t>(1, max_new));
        torch::Tensor lg = kc.prefill({std::vector<int32_t>(prompt, prompt + n_prompt)});
        const double t1 = now();
        size_t n = 0;
        while (n < max_new) {
            const int32_t id = int32_t(lg.view({-1}).argmax().item<int64_t>());
            out[n++] = id;
            if (stops(stop, n_stop, id) || n == max_new)
                break;
            lg = kc.step({id});
        }
        *n_out = n;
        if (info) {
            info->kv_bytes = uint64_t(kc.bytes());
            info->kv_bytes_full = uint64_t(kc.bytes_full());
            info->prefill_seconds = t1 - t0;
            info->decode_seconds = now() - t1;
            info->new_tokens = uint32_t(n);
        }
    });
    note_model(m, msg);
    return st;
}

BOSCH_TORCH_API int bosch_torch_generate_reference(bosch_torch_model *m, const uint8_t *mask,
                                                   size_t units, uint32_t window, uint32_t sink,
                                                   const int32_t *prompt, size_t n_prompt,
                                                   uint32_t max_new, const int32_t *stop,
                                                   size_t n_stop, int32_t *out, size_t *n_out) {
    std::string msg;
    int st = guarded(msg, [&] {
        torch::Tensor u =
            checked_units(m, mask, units, window, prompt, n_prompt, max_new, stop, n_stop, out, n_out);
        Model &md = *m->model;
        std::lock_guard<std::mutex> lock(md.mutex);
        torch::InferenceMode guard;
        const Window w{int64_t(window), int64_t(sink)};
        std::vector<int64_t> seq(prompt, prompt + n_prompt);
        size_t n = 0;
        while (n < max_new) {
            // The whole sequence again, the masked forward's own path.
            const int64_t T = int64_t(seq.size());
            // One copy (seq grows, so the tensor must not alias it).
            torch::Tensor tokens =
                torch::from_blob(seq.data(), {1, T}, torch::TensorOptions().dtype(torch::kInt64))
                    .to(md.device(), torch::kInt64, /*non_blocking=*/false, /*copy=*/true);
            torch::Tensor last = torch::full({1}, T - 1, torch::TensorOptions()
                                                             .dtype(torch::kInt64)
                                                             .device(md.device()));
            const int32_t id = int32_t(md.forward(tokens, u, w, last).argmax().item<int64_t>());
            out[n++] = id;
            seq.push_back(id);
            if (stops(stop, n_stop, id))
                break;
        }
        *n_out = n;
    });
    note_model(m, msg);
    return st;
}

} // extern "C"
