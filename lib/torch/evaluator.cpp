// Mask scoring on a task. One sample's sequence is its prompt followed by
// answer[:-1] (teacher forcing), right-padded to the longest of its length
// bucket; the logits at prompt_len-1 .. prompt_len+len(answer)-2 predict the
// answer. Right padding never changes earlier positions (causal attention;
// the SWA mask is relative; RoPE positions start at 0 in every row), so no
// attention mask is needed and the scores equal those of unpadded,
// one-by-one evaluation.
//   EXACT: 1 when every answer position's argmax is the answer token (this is
//     exactly "greedy decoding reproduces the answer": at each step the
//     correct prefix is the greedy prefix), else 0.
//   LOGPROB: mean over the answer tokens of log softmax(logits)[token].
// The score of a mask is the mean over samples (or over a subset of them,
// score()'s `subset`: the multi-fidelity requests of the C API).
//
// This file: the scoring itself (candidates grouped by start layer, the
// forwards, the metrics at the scored rows) and the noise measurement; the
// length buckets are in evaluator_buckets.cpp, the prefix cache in
// evaluator_prefix_cache.cpp.
#include "evaluator.hpp"

#include "failure.hpp"
#include "generate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace bosch_torch {

namespace {

// The value of environment variable `name` when it is a whole number >= 0,
// else -1 (unset or unparsable: the caller's default).
int64_t env_count(const char *name) {
    const char *env = std::getenv(name);
    if (!env)
        return -1;
    char *end = nullptr;
    const long long n = std::strtoll(env, &end, 10);
    return end != env && *end == '\0' && n >= 0 ? int64_t(n) : -1;
}

// Evaluator::set_forward_tokens' default: on a GPU, 2^18 tokens per
// forward (8 prompts of 32k: an 8B model's hidden states are then 2 GiB per
// activation in bf16, and one such prompt already fills the device); on
// the CPU no bound (the tests' and the organism's forwards are small).
int64_t default_forward_tokens(const torch::Device &dev) {
    const int64_t n = env_count("BOSCH_TORCH_FORWARD_TOKENS");
    if (n >= 0)
        return n;
    return dev.is_cuda() ? int64_t(1) << 18 : 0;
}

} // namespace

void check_task(const Model &m, const Task &task, const Window &w) {
    if (w.window < 1)
        invalid("window must be at least 1");
    if (w.sink < 0)
        invalid("sink must not be negative");
    if (task.samples.empty())
        invalid("task has no samples");
    for (size_t i = 0; i < task.samples.size(); i++) {
        const Sample &s = task.samples[i];
        if (s.prompt.empty() || s.answer.empty())
            invalid("task has an empty prompt or answer");
        for (const auto *v : {&s.prompt, &s.answer})
            for (int32_t t : *v)
                if (t < 0 || int64_t(t) >= m.vocab())
                    invalid("task sample " + std::to_string(i) + " has token " + std::to_string(t) +
                            " outside the vocabulary [0, " + std::to_string(m.vocab()) + ")");
        // The forward sees prompt + answer - 1 positions (teacher forcing).
        const int64_t len = int64_t(s.prompt.size() + s.answer.size()) - 1;
        const int64_t cap = m.config().max_position_embeddings;
        if (cap > 0 && len > cap)
            invalid("task sample " + std::to_string(i) + " needs " + std::to_string(len) +
                    " positions, more than the model's max_position_embeddings (" +
                    std::to_string(cap) + ")");
    }
}

Evaluator::Evaluator(Model &model, const Task &task, Window w, Metric metric)
    : model_(model), w_(w), metric_(metric), task_(task) {
    if (metric != Metric::Exact && metric != Metric::Logprob && metric != Metric::Match)
        invalid("unknown metric");
    check_task(model, task, w);
    if (metric == Metric::Match)
        check_match_task(task);
    M_ = int64_t(task.samples.size());
    const int64_t mb = env_count("BOSCH_TORCH_CACHE_MB");
    cache_budget_ = mb >= 0 ? mb << 20 : -1; // -1: sized when the cache is built
    forward_tokens_ = default_forward_tokens(model.device());
    const char *last = std::getenv("BOSCH_TORCH_LAST_LAYER");
    last_at_rows_ = !(last && std::strcmp(last, "all") == 0);
    make_buckets();
}

void Evaluator::set_last_layer_at_rows(bool on) {
    if (on == last_at_rows_)
        return;
    last_at_rows_ = on;
    for (Bucket &b : buckets_) // its top layer follows the setting
        b.cache.clear();
    cache_built_ = false;
}

void Evaluator::score(const uint8_t *masks, size_t n, double *scores,
                      const std::vector<size_t> &subset, double *values) {
    if (n == 0)
        return;
    if (!masks || !scores)
        invalid("masks and scores must not be NULL");
    for (size_t i = 0; i < subset.size(); i++)
        if (subset[i] >= size_t(M_) || (i > 0 && subset[i] <= subset[i - 1]))
            invalid("sample subset must be ascending, distinct and below " + std::to_string(M_));
    const bool all = subset.empty() || subset.size() == size_t(M_);
    const int64_t count = all ? M_ : int64_t(subset.size());
    std::vector<double> own;
    if (!values) {
        own.resize(n * size_t(count));
        values = own.data();
    }
    if (metric_ == Metric::Match) { // generation: no teacher-forced rows, no cache
        match_scores(model_, task_, w_, masks, n, batch_, subset, values, &layer_rows_);
    } else {
        score_forward(masks, n, all ? std::vector<size_t>() : subset, count, values);
    }
    // The samples' values added in sample order: a summation that does not
    // depend on which samples shared a forward (buckets, forward_tokens_,
    // MPI parts).
    for (size_t c = 0; c < n; c++) {
        double sum = 0.0;
        for (int64_t j = 0; j < count; j++)
            sum += values[c * size_t(count) + size_t(j)];
        scores[c] = sum / double(count);
    }
}

void Evaluator::score_forward(const uint8_t *masks, size_t n, const std::vector<size_t> &subset,
                              int64_t count, double *values) {
    const size_t units = size_t(model_.layers() * model_.kv_heads());
    if (cache_on_ && !cache_built_)
        build_cache();
    const bool all = subset.empty();
    std::vector<Bucket> sub;
    if (!all)
        sub = subset_buckets(subset);
    const std::vector<Bucket> &bks = all ? buckets_ : sub;
    // Each task sample's position among the scored ones.
    std::vector<int64_t> pos(static_cast<size_t>(M_), -1);
    for (int64_t j = 0; j < count; j++)
        pos[all ? size_t(j) : subset[size_t(j)]] = j;
    std::vector<int64_t> start(n);
    for (size_t i = 0; i < n; i++)
        start[i] = start_layer(masks + i * units);
    // Candidates grouped by start layer (so that no forward recomputes layers
    // the cache holds), each group cut into forwards of at most `batch_`
    // candidates x all samples. Without the cache every start is 0: plain
    // chunks of `batch_`. A subset is scored the same way on its buckets.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return start[a] < start[b]; });
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && j - i < size_t(batch_) && start[order[j]] == start[order[i]])
            j++;
        std::vector<size_t> idx(order.begin() + long(i), order.begin() + long(j));
        score_group(masks, idx, start[order[i]], bks, pos, count, values);
        i = j;
    }
}

void Evaluator::score_group(const uint8_t *masks, const std::vector<size_t> &idx, int64_t start,
                            const std::vector<Bucket> &bks, const std::vector<int64_t> &pos,
                            int64_t count, double *values) {
    const int64_t L = model_.layers(), G = model_.kv_heads(), H = model_.hidden();
    const int64_t k = int64_t(idx.size()), units = L * G;
    const torch::Device dev = model_.device();

    std::vector<uint8_t> um(size_t(k * units));
    for (int64_t c = 0; c < k; c++)
        for (int64_t u = 0; u < units; u++)
            um[size_t(c * units + u)] = masks[idx[size_t(c)] * size_t(units) + size_t(u)] != 0;
    torch::Tensor cand =
        torch::from_blob(um.data(), {k, 1, L, G}, torch::TensorOptions().dtype(torch::kUInt8))
            .to(dev, torch::kBool); // a copy, also on CPU

    // Per-sample values [k, count] on the device, bucket by bucket: forwards
    // of k candidates x as many of the bucket's samples as forward_tokens_
    // allows (all when unbounded); one copy to the host at the end.
    torch::Tensor vals =
        torch::zeros({k, count}, torch::TensorOptions().dtype(torch::kFloat64).device(dev));
    for (const Bucket &whole : bks) {
        const int64_t per = samples_per_forward(whole, k);
        for (int64_t m0 = 0; m0 < whole.M; m0 += per) {
            const Bucket b = slice(whole, m0, std::min(per, whole.M - m0));
            const int64_t B = k * b.M;
            torch::Tensor unit_masks = cand.expand({k, b.M, L, G}).reshape({B, L, G});
            torch::Tensor h;
            if (start == 0) {
                h = model_.embed(k == 1 ? b.tokens : b.tokens.repeat({k, 1}));
            } else {
                const torch::Tensor c = cached_input(b, start);
                h = k == 1 ? c : c.unsqueeze(0).expand({k, b.M, b.T, H}).reshape({B, b.T, H});
            }
            const torch::Tensor hr = scored_hidden(b, k, h, unit_masks, start);
            layer_rows_ += B * (L - start);
            forwards_++;
            std::vector<int64_t> at(static_cast<size_t>(b.M));
            for (int64_t r = 0; r < b.M; r++)
                at[size_t(r)] = pos[b.members[size_t(r)]];
            vals.index_copy_(1, torch::tensor(at).to(dev), sample_scores(b, k, hr));
        }
    }
    torch::Tensor v = vals.to(torch::kCPU).contiguous();
    const double *vp = v.data_ptr<double>();
    for (int64_t c = 0; c < k; c++)
        std::memcpy(values + idx[size_t(c)] * size_t(count), vp + c * count,
                    size_t(count) * sizeof(double));
}

torch::Tensor Evaluator::scored_hidden(const Bucket &b, int64_t k, torch::Tensor h,
                                       const torch::Tensor &units, int64_t start) {
    const int64_t L = model_.layers(), H = model_.hidden(), B = k * b.M;
    if (last_at_rows_ && start < L) {
        h = model_.run_layers(h, units, w_, start, L - 1);
        // Each sample's scored positions within its sequence, per candidate.
        torch::Tensor seq = torch::arange(b.M, b.rows.options()).mul_(b.T).unsqueeze(1);
        torch::Tensor at = (b.rows - seq).repeat({k, 1}); // [B, A]
        return model_.last_layer_at(h, units, w_, at).reshape({B * b.A, H});
    }
    h = model_.run_layers(h, units, w_, start, L);
    torch::Tensor offs =
        torch::arange(k, b.rows.options()) * (b.M * b.T);
    torch::Tensor rows = (b.rows.unsqueeze(0) + offs.view({k, 1, 1})).reshape({-1}); // [B*A]
    return h.reshape({B * b.T, H}).index_select(0, rows);
}

torch::Tensor Evaluator::sample_scores(const Bucket &b, int64_t k, const torch::Tensor &hr) {
    // Logits at the scored rows only, in row blocks that bound the fp32
    // logits buffer.
    torch::Tensor tg = b.targets.unsqueeze(0).expand({k, b.M, b.A}).reshape({-1});
    const int64_t R = k * b.M * b.A;
    const int64_t block =
        std::max<int64_t>(1, model_.block_bytes() / std::max<int64_t>(1, model_.vocab() * 4));
    std::vector<torch::Tensor> parts;
    for (int64_t r0 = 0; r0 < R; r0 += block) {
        const int64_t nr = std::min(block, R - r0);
        torch::Tensor lg = model_.logits(hr.narrow(0, r0, nr)); // [nr,V]
        torch::Tensor t = tg.narrow(0, r0, nr).unsqueeze(1);
        if (metric_ == Metric::Exact)
            parts.push_back((lg.argmax(-1) == t.squeeze(1)).to(torch::kFloat32));
        else
            parts.push_back(lg.gather(1, t).squeeze(1) - torch::logsumexp(lg, -1));
    }
    torch::Tensor per = torch::cat(parts).view({k, b.M, b.A});
    torch::Tensor invalid_rows = b.valid.unsqueeze(0).logical_not();
    if (metric_ == Metric::Exact)
        return (per.to(torch::kBool) | invalid_rows).all(-1).to(torch::kFloat64);
    return per.masked_fill(invalid_rows, 0.0).to(torch::kFloat64).sum(-1) /
           b.lengths.unsqueeze(0);
}

double Evaluator::noise() {
    if (noise_ >= 0)
        return noise_;
    const size_t units = size_t(model_.layers() * model_.kv_heads());
    std::vector<uint8_t> masks(2 * units, 0); // all full, all SWA
    std::fill(masks.begin() + std::ptrdiff_t(units), masks.end(), uint8_t(1));
    double fast[2], other[2];
    score(masks.data(), 2, fast);
    // The same anchors through the other attention path, every layer run
    // (the prefix cache holds the first path's hidden states: bypassed, kept).
    // Both settings come back when the scope ends, by return or by throw.
    struct OtherPath {
        Model &model;
        bool &cache_on;
        const bool masked, cache;
        OtherPath(Model &m, bool &c)
            : model(m), cache_on(c), masked(m.masked_attention()), cache(c) {
            model.set_masked_attention(!masked);
            cache_on = false;
        }
        ~OtherPath() {
            model.set_masked_attention(masked);
            cache_on = cache;
        }
    };
    {
        OtherPath guard(model_, cache_on_);
        score(masks.data(), 2, other);
    }
    // One draw of each disagreement can understate the rounding spread:
    // twice their sum, and never below a few ulps of an f32 score.
    const double ulps = 4.0 * std::ldexp(1.0, -23) * std::max(std::fabs(fast[0]), std::fabs(fast[1]));
    const double n = 2.0 * (std::fabs(fast[0] - other[0]) + std::fabs(fast[1] - other[1])) + ulps;
    if (!std::isfinite(n))
        throw Failure(BOSCH_E_BAD_SCORE, "the anchors' scores are not finite");
    noise_ = n;
    return noise_;
}

} // namespace bosch_torch
