// Greedy decoding for the MATCH metric, through the hybrid KV cache
// (kv_cache.hpp: the prompts once, then a token per step), or, with
// BOSCH_TORCH_GENERATE=recompute, re-running every sequence per token.
// Sequences of one forward have different lengths; they are right-padded,
// which is exact under causal attention (a pad never precedes a real
// token), and each sequence reads its next token from the logits at its own
// last position.
#include "generate.hpp"

#include "failure.hpp"
#include "kv_cache.hpp"

#include "bosch/text.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace bosch_torch {

namespace {

struct Seq {
    std::vector<int32_t> ids; // prompt + generated so far
    size_t prompt = 0;
    int64_t max_new = 0;
    bool done = false;
};

// The stop rule of a continuation: a row the tokenizer has no token for (an
// untrained embedding row past the vocabulary) ends it like a special token,
// but cannot be decoded, so it is not kept; a special token or max_new
// tokens end it too. Returns whether `id` was kept.
bool take_token(const Task &task, Seq &s, int32_t id) {
    if (!bosch_tokenizer_token(task.tokenizer, id)) {
        s.done = true;
        return false;
    }
    s.ids.push_back(id);
    if (bosch_tokenizer_is_special(task.tokenizer, id) ||
        int64_t(s.ids.size() - s.prompt) >= s.max_new)
        s.done = true;
    return true;
}

// Continues every sequence of `seqs` greedily; `units` [B, L, G] bool or
// undefined (all full).
void run_greedy(Model &m, const Task &task, const Window &w, std::vector<Seq> &seqs,
                const torch::Tensor &units, int64_t *layer_rows) {
    const int64_t B = int64_t(seqs.size()), L = m.layers(), H = m.hidden();
    const torch::Device dev = m.device();
    int64_t steps = 0;
    for (const Seq &s : seqs)
        steps = std::max(steps, s.max_new);
    for (int64_t step = 0; step < steps; step++) {
        std::vector<int64_t> active;
        for (int64_t b = 0; b < B; b++)
            if (!seqs[size_t(b)].done)
                active.push_back(b);
        if (active.empty())
            break;
        int64_t T = 0;
        for (int64_t b : active)
            T = std::max<int64_t>(T, int64_t(seqs[size_t(b)].ids.size()));
        const int64_t A = int64_t(active.size());
        std::vector<int64_t> tok(size_t(A * T), 0);
        std::vector<int64_t> last(static_cast<size_t>(A));
        for (int64_t i = 0; i < A; i++) {
            const Seq &s = seqs[size_t(active[size_t(i)])];
            std::copy(s.ids.begin(), s.ids.end(), tok.begin() + long(i * T));
            last[size_t(i)] = i * T + int64_t(s.ids.size()) - 1;
        }
        auto i64 = torch::TensorOptions().dtype(torch::kInt64);
        torch::Tensor tokens = torch::from_blob(tok.data(), {A, T}, i64).to(dev).clone();
        torch::Tensor rows = torch::from_blob(last.data(), {A}, i64).to(dev).clone();
        torch::Tensor u;
        if (units.defined())
            u = units.index_select(0, torch::from_blob(active.data(), {A}, i64).to(dev).clone());
        torch::Tensor h = m.run_layers(m.embed(tokens), u, w, 0, L);
        if (layer_rows)
            *layer_rows += A * L;
        torch::Tensor next = m.logits(h.reshape({A * T, H}).index_select(0, rows))
                                 .argmax(-1)
                                 .to(torch::kCPU)
                                 .contiguous();
        const int64_t *np = next.data_ptr<int64_t>();
        for (int64_t i = 0; i < A; i++)
            take_token(task, seqs[size_t(active[size_t(i)])], int32_t(np[i]));
    }
}

// run_greedy through the hybrid KV cache (kv_cache.hpp): the prompts once,
// then one token per step; a finished row is fed a placeholder (its logits
// are not read) until every row is done.
void run_greedy_cached(Model &m, const Task &task, const Window &w, std::vector<Seq> &seqs,
                       const torch::Tensor &units, int64_t *layer_rows) {
    const int64_t B = int64_t(seqs.size()), L = m.layers();
    int64_t longest = 0, steps = 0;
    std::vector<std::vector<int32_t>> prompts;
    for (const Seq &s : seqs) {
        longest = std::max<int64_t>(longest, int64_t(s.ids.size()));
        steps = std::max(steps, s.max_new);
        prompts.push_back(s.ids);
    }
    KvCache cache(m, units, w, B, longest + steps);
    torch::Tensor logits = cache.prefill(prompts);
    if (layer_rows)
        *layer_rows += B * L;
    for (int64_t step = 0; step < steps; step++) {
        torch::Tensor next = logits.argmax(-1).to(torch::kCPU).contiguous();
        const int64_t *np = next.data_ptr<int64_t>();
        std::vector<int32_t> feed(size_t(B), 0);
        bool active = false;
        for (int64_t b = 0; b < B; b++) {
            Seq &s = seqs[size_t(b)];
            if (s.done)
                continue;
            if (take_token(task, s, int32_t(np[b])))
                feed[size_t(b)] = int32_t(np[b]);
            active = active || !s.done;
        }
        if (!active)
            break;
        logits = cache.step(feed);
        if (layer_rows)
            *layer_rows += B * L;
    }
}

double match_of(const Task &task, const Sample &sm, const Seq &s) {
    char *text = nullptr;
    size_t len = 0;
    const int rc = bosch_tokenizer_decode(task.tokenizer, s.ids.data() + s.prompt,
                                          s.ids.size() - s.prompt, BOSCH_DECODE_SKIP_SPECIAL,
                                          &text, &len);
    if (rc != BOSCH_OK)
        throw Failure(rc == BOSCH_E_NOMEM ? BOSCH_E_NOMEM : BOSCH_E_EVALUATOR,
                      "cannot decode a generated continuation");
    std::vector<const char *> ans;
    for (const std::string &a : sm.answers)
        ans.push_back(a.c_str());
    const double v = bosch_text_match_all(text, ans.data(), ans.size());
    bosch_text_free(text);
    return v;
}

} // namespace

void check_match_task(const Task &task) {
    if (!task.tokenizer)
        invalid("the match metric needs a task made from text (bosch_torch_task_from_text)");
    for (size_t i = 0; i < task.samples.size(); i++)
        if (task.samples[i].answers.empty())
            invalid("task sample " + std::to_string(i) + " has no answer strings");
}

void match_scores(Model &m, const Task &task, const Window &w, const uint8_t *masks, size_t n,
                  uint32_t batch, const std::vector<size_t> &samples, double *values,
                  int64_t *layer_rows) {
    check_match_task(task);
    std::vector<size_t> pick = samples;
    if (pick.empty()) {
        pick.resize(task.samples.size());
        for (size_t i = 0; i < pick.size(); i++)
            pick[i] = i;
    }
    const int64_t L = m.layers(), G = m.kv_heads(), M = int64_t(pick.size());
    const size_t units = size_t(L * G);
    const size_t per = std::max<uint32_t>(1, batch);
    for (size_t c0 = 0; c0 < n; c0 += per) {
        const size_t k = std::min(per, n - c0);
        std::vector<Seq> seqs;
        std::vector<uint8_t> um(size_t(k) * size_t(M) * units);
        for (size_t c = 0; c < k; c++)
            for (int64_t b = 0; b < M; b++) {
                const Sample &sm = task.samples[pick[size_t(b)]];
                seqs.push_back(Seq{sm.prompt, sm.prompt.size(), max_new_tokens(sm), false});
                for (size_t u = 0; u < units; u++)
                    um[(c * size_t(M) + size_t(b)) * units + u] =
                        masks[(c0 + c) * units + u] != 0;
            }
        torch::Tensor ut = torch::from_blob(um.data(), {int64_t(k) * M, L, G},
                                            torch::TensorOptions().dtype(torch::kUInt8))
                               .to(m.device(), torch::kBool);
        // Through the hybrid KV cache; BOSCH_TORCH_GENERATE=recompute re-runs
        // the whole sequence per token instead (the earlier path, kept to
        // compare and to measure against).
        const char *how = std::getenv("BOSCH_TORCH_GENERATE");
        if (how && std::strcmp(how, "recompute") == 0)
            run_greedy(m, task, w, seqs, ut, layer_rows);
        else
            run_greedy_cached(m, task, w, seqs, ut, layer_rows);
        for (size_t c = 0; c < k; c++)
            for (int64_t b = 0; b < M; b++)
                values[(c0 + c) * size_t(M) + size_t(b)] =
                    match_of(task, task.samples[pick[size_t(b)]], seqs[c * size_t(M) + size_t(b)]);
    }
}

} // namespace bosch_torch
