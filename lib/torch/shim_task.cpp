// The task handle of libbosch-torch's C API (shim.hpp): read, build NIAH,
// inspect, identity, free.
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

int read_task(const char *path, bosch_torch_task **out, std::string &msg) {
    return guarded(msg, [&] {
        if (!path)
            invalid("path must not be NULL");
        std::unique_ptr<bosch_torch_task> t(new bosch_torch_task);
        t->task = load_jsonl(path);
        *out = t.release();
    });
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

} // namespace bosch_torch::shim

extern "C" {

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

BOSCH_TORCH_API int bosch_torch_task_sample(const bosch_torch_task *t, size_t i,
                                            const int32_t **prompt, size_t *n_prompt,
                                            const int32_t **answer, size_t *n_answer,
                                            uint32_t *max_new) {
    if (!t || i >= t->task.samples.size())
        return BOSCH_E_INVALID;
    const Sample &s = t->task.samples[i];
    if (prompt)
        *prompt = s.prompt.data();
    if (n_prompt)
        *n_prompt = s.prompt.size();
    if (answer)
        *answer = s.answer.data();
    if (n_answer)
        *n_answer = s.answer.size();
    if (max_new)
        *max_new = uint32_t(std::min<int64_t>(max_new_tokens(s), UINT32_MAX));
    return BOSCH_OK;
}

BOSCH_TORCH_API const bosch_tokenizer *bosch_torch_task_tokenizer(const bosch_torch_task *t) {
    return t ? t->task.tokenizer : nullptr;
}

BOSCH_TORCH_API void bosch_torch_task_free(bosch_torch_task *t) { delete t; }

} // extern "C"
