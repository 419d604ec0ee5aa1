// Mask scoring on a task. One sample's sequence is its prompt followed by
// answer[:-1] (teacher forcing), right-padded to the task's longest; the
// logits at prompt_len-1 .. prompt_len+len(answer)-2 predict the answer.
// Right padding never changes earlier positions (causal attention), so the
// scores equal those of unpadded, one-by-one evaluation.
//   EXACT: 1 when every answer position's argmax is the answer token (this is
//     exactly "greedy decoding reproduces the answer": at each step the
//     correct prefix is the greedy prefix), else 0.
//   LOGPROB: mean over the answer tokens of log softmax(logits)[token].
// The score of a mask is the mean over samples.
#include "evaluator.hpp"

#include "failure.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>

namespace bosch_torch {

namespace {

int64_t default_cache_budget(const torch::Device &dev) {
    if (const char *env = std::getenv("BOSCH_TORCH_CACHE_MB")) {
        char *end = nullptr;
        long long mb = std::strtoll(env, &end, 10);
        if (end != env && *end == '\0' && mb >= 0)
            return int64_t(mb) << 20;
    }
    return dev.is_cuda() ? int64_t(8) << 30 : int64_t(2) << 30;
}

} // namespace

void check_task(const Model &m, const Task &task, const Window &w) {
    if (w.window < 1)
        invalid("window must be at least 1");
    if (w.sink < 0)
        invalid("sink must not be negative");
    if (task.samples.empty())
        invalid("task has no samples");
    const size_t P = task.samples[0].prompt.size();
    for (size_t i = 0; i < task.samples.size(); i++) {
        const Sample &s = task.samples[i];
        if (s.prompt.size() != P)
            invalid("task prompts differ in length");
        if (s.prompt.empty() || s.answer.empty())
            invalid("task has an empty prompt or answer");
        for (const auto *v : {&s.prompt, &s.answer})
            for (int32_t t : *v)
                if (t < 0 || int64_t(t) >= m.vocab())
                    invalid("task sample " + std::to_string(i) + " has token " + std::to_string(t) +
                            " outside the vocabulary [0, " + std::to_string(m.vocab()) + ")");
    }
}

Evaluator::Evaluator(Model &model, const Task &task, Window w, Metric metric)
    : model_(model), w_(w), metric_(metric) {
    if (metric != Metric::Exact && metric != Metric::Logprob)
        invalid("unknown metric");
    check_task(model, task, w);
    M_ = int64_t(task.samples.size());
    const int64_t P = int64_t(task.samples[0].prompt.size());
    A_ = 0;
    for (const Sample &s : task.samples)
        A_ = std::max<int64_t>(A_, int64_t(s.answer.size()));
    T_ = P + A_ - 1;
    std::vector<int64_t> tok(size_t(M_ * T_), 0), rows(size_t(M_ * A_)), tgt(size_t(M_ * A_), 0);
    std::vector<uint8_t> valid(size_t(M_ * A_), 0);
    std::vector<float> lens(static_cast<size_t>(M_));
    for (int64_t b = 0; b < M_; b++) {
        const Sample &s = task.samples[size_t(b)];
        const int64_t a = int64_t(s.answer.size());
        for (int64_t t = 0; t < P; t++)
            tok[size_t(b * T_ + t)] = s.prompt[size_t(t)];
        for (int64_t j = 0; j + 1 < a; j++)
            tok[size_t(b * T_ + P + j)] = s.answer[size_t(j)];
        for (int64_t j = 0; j < A_; j++) {
            const bool in = j < a;
            rows[size_t(b * A_ + j)] = b * T_ + P - 1 + (in ? j : 0);
            tgt[size_t(b * A_ + j)] = in ? s.answer[size_t(j)] : 0;
            valid[size_t(b * A_ + j)] = in;
        }
        lens[size_t(b)] = float(a);
    }
    const torch::Device dev = model.device();
    auto i64 = torch::TensorOptions().dtype(torch::kInt64);
    tokens_ = torch::from_blob(tok.data(), {M_, T_}, i64).to(dev);
    rows_ = torch::from_blob(rows.data(), {M_, A_}, i64).to(dev);
    targets_ = torch::from_blob(tgt.data(), {M_, A_}, i64).to(dev);
    valid_ = torch::from_blob(valid.data(), {M_, A_}, torch::TensorOptions().dtype(torch::kUInt8))
                 .to(dev)
                 .to(torch::kBool);
    lengths_ = torch::from_blob(lens.data(), {M_}, torch::TensorOptions().dtype(torch::kFloat32))
                   .to(dev);
    if (dev.is_cpu()) { // from_blob does not own: detach from the local vectors
        tokens_ = tokens_.clone();
        rows_ = rows_.clone();
        targets_ = targets_.clone();
        lengths_ = lengths_.clone();
    }
    cache_budget_ = default_cache_budget(dev);
}

void Evaluator::set_prefix_cache(bool on) {
    cache_on_ = on;
    if (!on) {
        cache_.clear();
        cache_built_ = false;
    }
}

void Evaluator::set_cache_budget(int64_t bytes) {
    cache_budget_ = std::max<int64_t>(0, bytes);
    cache_.clear();
    cache_built_ = false;
}

std::vector<int64_t> Evaluator::cached_layers() const {
    std::vector<int64_t> out;
    for (size_t l = 0; l < cache_.size(); l++)
        if (cache_[l].defined())
            out.push_back(int64_t(l));
    return out;
}

// Caches the all-full hidden states entering layers 1..L (as many as the
// budget allows, evenly spaced; layer 0's input is the embedding lookup).
void Evaluator::build_cache() {
    const int64_t L = model_.layers();
    cache_.assign(size_t(L + 1), torch::Tensor());
    cache_built_ = true;
    const int64_t per_layer = M_ * T_ * model_.hidden() *
                              int64_t(c10::elementSize(model_.dtype()));
    const int64_t fit = per_layer > 0 ? cache_budget_ / per_layer : 0;
    std::vector<bool> want(size_t(L + 1), false);
    int64_t top = 0;
    if (fit >= L) {
        for (int64_t l = 1; l <= L; l++)
            want[size_t(l)] = true;
        top = L;
    } else {
        for (int64_t i = 1; i <= fit; i++) {
            int64_t l = i * L / (fit + 1);
            if (l >= 1) {
                want[size_t(l)] = true;
                top = std::max(top, l);
            }
        }
    }
    if (top == 0)
        return;
    try {
        torch::Tensor h = model_.embed(tokens_);
        for (int64_t l = 0; l < top; l++) {
            h = model_.run_layers(h, torch::Tensor(), w_, l, l + 1);
            layer_rows_ += M_;
            if (want[size_t(l + 1)])
                cache_[size_t(l + 1)] = h;
        }
    } catch (const c10::OutOfMemoryError &) {
        // Device memory too small for this budget: run without the cache
        // rather than fail (set BOSCH_TORCH_CACHE_MB lower to keep one).
        cache_.assign(size_t(L + 1), torch::Tensor());
    }
}

int64_t Evaluator::start_layer(const uint8_t *mask) const {
    if (!cache_on_)
        return 0;
    const int64_t L = model_.layers(), G = model_.kv_heads();
    int64_t first = L;
    for (int64_t i = 0; i < L * G; i++)
        if (mask[i]) {
            first = i / G;
            break;
        }
    for (int64_t l = std::min<int64_t>(first, int64_t(cache_.size()) - 1); l > 0; l--)
        if (cache_[size_t(l)].defined())
            return l;
    return 0;
}

void Evaluator::score(const uint8_t *masks, size_t n, double *scores) {
    if (n == 0)
        return;
    if (!masks || !scores)
        invalid("masks and scores must not be NULL");
    const size_t units = size_t(model_.layers() * model_.kv_heads());
    if (cache_on_ && !cache_built_)
        build_cache();
    std::vector<int64_t> start(n);
    for (size_t i = 0; i < n; i++)
        start[i] = start_layer(masks + i * units);
    // Candidates grouped by start layer (so that no forward recomputes layers
    // the cache holds), each group cut into forwards of at most `batch_`
    // candidates x all samples. Without the cache every start is 0: plain
    // chunks of `batch_`.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return start[a] < start[b]; });
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && j - i < size_t(batch_) && start[order[j]] == start[order[i]])
            j++;
        std::vector<size_t> idx(order.begin() + long(i), order.begin() + long(j));
        score_group(masks, idx, start[order[i]], scores);
        i = j;
    }
}

void Evaluator::score_group(const uint8_t *masks, const std::vector<size_t> &idx, int64_t start,
                            double *scores) {
    const int64_t L = model_.layers(), G = model_.kv_heads(), H = model_.hidden();
    const int64_t k = int64_t(idx.size()), B = k * M_, units = L * G;
    const torch::Device dev = model_.device();

    std::vector<uint8_t> um(size_t(k * units));
    for (int64_t c = 0; c < k; c++)
        for (int64_t u = 0; u < units; u++)
            um[size_t(c * units + u)] = masks[idx[size_t(c)] * size_t(units) + size_t(u)] != 0;
    torch::Tensor unit_masks =
        torch::from_blob(um.data(), {k, 1, L, G}, torch::TensorOptions().dtype(torch::kUInt8))
            .to(dev, torch::kBool) // a copy, also on CPU
            .expand({k, M_, L, G})
            .reshape({B, L, G});

    torch::Tensor h;
    if (start == 0) {
        torch::Tensor tok = k == 1 ? tokens_ : tokens_.repeat({k, 1});
        h = model_.embed(tok);
    } else {
        torch::Tensor c = cache_[size_t(start)];
        h = k == 1 ? c : c.unsqueeze(0).expand({k, M_, T_, H}).reshape({B, T_, H});
    }
    h = model_.run_layers(h, unit_masks, w_, start, L);
    layer_rows_ += B * (L - start);

    // Logits at the scored rows only, in row blocks that bound the fp32
    // logits buffer.
    torch::Tensor offs =
        torch::arange(k, torch::TensorOptions().dtype(torch::kInt64).device(dev)) * (M_ * T_);
    torch::Tensor rows = (rows_.unsqueeze(0) + offs.view({k, 1, 1})).reshape({-1}); // [B*A]
    torch::Tensor tg = targets_.unsqueeze(0).expand({k, M_, A_}).reshape({-1});
    torch::Tensor flat = h.reshape({B * T_, H});
    const int64_t R = B * A_;
    const int64_t block =
        std::max<int64_t>(1, model_.block_bytes() / std::max<int64_t>(1, model_.vocab() * 4));
    std::vector<torch::Tensor> parts;
    for (int64_t r0 = 0; r0 < R; r0 += block) {
        const int64_t nr = std::min(block, R - r0);
        torch::Tensor lg = model_.logits(flat.index_select(0, rows.narrow(0, r0, nr))); // [nr,V]
        torch::Tensor t = tg.narrow(0, r0, nr).unsqueeze(1);
        if (metric_ == Metric::Exact)
            parts.push_back((lg.argmax(-1) == t.squeeze(1)).to(torch::kFloat32));
        else
            parts.push_back(lg.gather(1, t).squeeze(1) - torch::logsumexp(lg, -1));
    }
    torch::Tensor per = torch::cat(parts).view({k, M_, A_});
    torch::Tensor valid = valid_.unsqueeze(0);
    torch::Tensor sample; // [k, M]
    if (metric_ == Metric::Exact)
        sample = (per.to(torch::kBool) | valid.logical_not()).all(-1).to(torch::kFloat64);
    else
        sample = per.masked_fill(valid.logical_not(), 0.0).to(torch::kFloat64).sum(-1) /
                 lengths_.to(torch::kFloat64).unsqueeze(0);
    torch::Tensor s = sample.mean(1).to(torch::kCPU).contiguous();
    const double *sp = s.data_ptr<double>();
    for (int64_t c = 0; c < k; c++)
        scores[idx[size_t(c)]] = sp[c];
}

} // namespace bosch_torch
