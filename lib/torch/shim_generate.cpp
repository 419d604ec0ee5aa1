// bosch_torch_generate (torch.h): greedy continuation of one prompt through
// the hybrid KV cache (kv_cache.hpp), with the bytes it holds and its time.
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

} // namespace

extern "C" {

BOSCH_TORCH_API int bosch_torch_generate(bosch_torch_model *m, const uint8_t *mask, size_t units,
                                         uint32_t window, uint32_t sink, const int32_t *prompt,
                                         size_t n_prompt, uint32_t max_new, const int32_t *stop,
                                         size_t n_stop, int32_t *out, size_t *n_out,
                                         struct bosch_torch_generation *info) {
    std::string msg;
    int st = guarded(msg, [&] {
        if (!m || !m->model || !prompt || n_prompt == 0 || (max_new && !out) || !n_out ||
            (n_stop && !stop))
            invalid("model, prompt, out and n_out must not be NULL; the prompt not empty");
        if (info && info->struct_size < sizeof(struct bosch_torch_generation))
            invalid("struct bosch_torch_generation: struct_size not set");
        if (window < 1)
            invalid("window must be at least 1");
        Model &md = *m->model;
        const int64_t L = md.layers(), G = md.kv_heads();
        if (mask && units != size_t(L * G))
            invalid("mask has " + std::to_string(units) + " units, the model has " +
                    std::to_string(L * G) + " (layers x KV heads)");
        if (n_prompt > size_t(std::numeric_limits<int32_t>::max()) - max_new)
            invalid("prompt + max_new too long");
        for (size_t i = 0; i < n_prompt; i++)
            if (prompt[i] < 0 || int64_t(prompt[i]) >= md.vocab())
                invalid("token " + std::to_string(prompt[i]) + " at index " + std::to_string(i) +
                        " is outside the vocabulary [0, " + std::to_string(md.vocab()) + ")");
        *n_out = 0;
        std::lock_guard<std::mutex> lock(md.mutex);
        torch::InferenceMode guard;
        torch::Tensor u;
        if (mask)
            u = torch::from_blob(const_cast<uint8_t *>(mask), {1, L, G},
                                 torch::TensorOptions().dtype(torch::kUInt8))
                    .to(md.device(), torch::kBool);
        const double t0 = now();
        KvCache kc(md, u, Window{int64_t(window), int64_t(sink)}, 1,
                   int64_t(n_prompt) + std::max<int64_t>(1, max_new));
        torch::Tensor lg = kc.prefill({std::vector<int32_t>(prompt, prompt + n_prompt)});
        const double t1 = now();
        size_t n = 0;
        while (n < max_new) {
            const int32_t id = int32_t(lg.view({-1}).argmax().item<int64_t>());
            out[n++] = id;
            if (std::find(stop, stop + n_stop, id) != stop + n_stop || n == max_new)
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

} // extern "C"
