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
#include "evaluator.hpp"

#include "failure.hpp"
#include "generate.hpp"

#ifdef BOSCH_TORCH_MEMORY_INFO
#include <ATen/DeviceAccelerator.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
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

// The fixed budget where the device's memory is not known: 2 GiB on the
// CPU, 8 GiB on CUDA (a libtorch without the accelerator memory API).
int64_t fixed_cache_budget(const torch::Device &dev) {
    return dev.is_cuda() ? int64_t(8) << 30 : int64_t(2) << 30;
}

// Bytes a CUDA device can still give this process: what the driver reports
// free plus what PyTorch's caching allocator holds unused; -1 where this
// libtorch cannot tell (or on the CPU).
int64_t device_free_bytes(const torch::Device &dev, int64_t *total) {
#ifdef BOSCH_TORCH_MEMORY_INFO
    if (dev.is_cuda()) {
        const c10::DeviceIndex i = dev.has_index() ? dev.index() : c10::DeviceIndex(0);
        const auto info = at::accelerator::getMemoryInfo(i);
        const auto stats = at::accelerator::getDeviceStats(i);
        *total = int64_t(info.second);
        return int64_t(info.first) + std::max<int64_t>(0, stats.reserved_bytes[0].current -
                                                              stats.allocated_bytes[0].current);
    }
#else
    (void)dev;
#endif
    *total = -1;
    return -1;
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

// Splits lengths sorted ascending into at most n contiguous groups that
// minimise the padded tokens sum(count x longest); the fewest groups among
// the optimal ones (no forward is split off for nothing). Returns the end
// index of each group.
std::vector<size_t> partition(const std::vector<int64_t> &len, size_t n) {
    const size_t M = len.size();
    n = std::max<size_t>(1, std::min(n, M));
    // Exact DP while it is cheap; beyond, equal-count groups.
    if (double(M) * double(M) * double(n) > 2e8) {
        std::vector<size_t> ends;
        for (size_t g = 1; g <= n; g++)
            ends.push_back(g * M / n);
        ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
        return ends;
    }
    const int64_t inf = std::numeric_limits<int64_t>::max() / 4;
    // cost[g][j]: best padding of the first j lengths in g groups.
    std::vector<std::vector<int64_t>> cost(n + 1, std::vector<int64_t>(M + 1, inf));
    std::vector<std::vector<size_t>> cut(n + 1, std::vector<size_t>(M + 1, 0));
    cost[0][0] = 0;
    for (size_t g = 1; g <= n; g++)
        for (size_t j = 1; j <= M; j++)
            for (size_t i = g - 1; i < j; i++) {
                if (cost[g - 1][i] >= inf)
                    continue;
                const int64_t c = cost[g - 1][i] + int64_t(j - i) * len[j - 1];
                if (c < cost[g][j]) {
                    cost[g][j] = c;
                    cut[g][j] = i;
                }
            }
    size_t best = n;
    for (size_t g = 1; g <= n; g++)
        if (cost[g][M] == cost[n][M]) {
            best = g;
            break;
        }
    std::vector<size_t> ends(best);
    for (size_t g = best, j = M; g > 0; g--) {
        ends[g - 1] = j;
        j = cut[g][j];
    }
    return ends;
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

Evaluator::Bucket Evaluator::make_bucket(const std::vector<size_t> &members,
                                         int64_t pad_to) const {
    Bucket bk;
    bk.M = int64_t(members.size());
    bk.T = pad_to;
    bk.members = members;
    for (size_t i : members) {
        const Sample &s = task_.samples[i];
        bk.A = std::max<int64_t>(bk.A, int64_t(s.answer.size()));
        bk.T = std::max<int64_t>(bk.T, int64_t(s.prompt.size() + s.answer.size()) - 1);
    }
    const int64_t M = bk.M, T = bk.T, A = bk.A;
    std::vector<int64_t> tok(size_t(M * T), 0), rows(size_t(M * A)), tgt(size_t(M * A), 0);
    std::vector<uint8_t> valid(size_t(M * A), 0);
    std::vector<double> lens(static_cast<size_t>(M));
    for (int64_t b = 0; b < M; b++) {
        const Sample &s = task_.samples[members[size_t(b)]];
        const int64_t P = int64_t(s.prompt.size()), a = int64_t(s.answer.size());
        for (int64_t t = 0; t < P; t++)
            tok[size_t(b * T + t)] = s.prompt[size_t(t)];
        for (int64_t j = 0; j + 1 < a; j++)
            tok[size_t(b * T + P + j)] = s.answer[size_t(j)];
        for (int64_t j = 0; j < A; j++) {
            const bool in = j < a;
            rows[size_t(b * A + j)] = b * T + P - 1 + (in ? j : 0);
            tgt[size_t(b * A + j)] = in ? s.answer[size_t(j)] : 0;
            valid[size_t(b * A + j)] = in;
        }
        lens[size_t(b)] = double(a);
    }
    const torch::Device dev = model_.device();
    auto i64 = torch::TensorOptions().dtype(torch::kInt64);
    // clone(): from_blob does not own the local vectors (.to() may not copy).
    bk.tokens = torch::from_blob(tok.data(), {M, T}, i64).clone().to(dev);
    bk.rows = torch::from_blob(rows.data(), {M, A}, i64).clone().to(dev);
    bk.targets = torch::from_blob(tgt.data(), {M, A}, i64).clone().to(dev);
    bk.valid = torch::from_blob(valid.data(), {M, A}, torch::TensorOptions().dtype(torch::kUInt8))
                   .to(dev, torch::kBool);
    bk.lengths =
        torch::from_blob(lens.data(), {M}, torch::TensorOptions().dtype(torch::kFloat64))
            .clone()
            .to(dev);
    return bk;
}

void Evaluator::make_buckets() {
    const size_t n = buckets_setting_ ? buckets_setting_ : kDefaultBuckets;
    std::vector<size_t> order(static_cast<size_t>(M_));
    std::iota(order.begin(), order.end(), size_t(0));
    auto seq_len = [&](size_t i) {
        const Sample &s = task_.samples[i];
        return int64_t(s.prompt.size() + s.answer.size()) - 1;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return seq_len(a) < seq_len(b); });
    std::vector<int64_t> len(order.size());
    for (size_t i = 0; i < order.size(); i++)
        len[i] = seq_len(order[i]);
    buckets_.clear();
    size_t from = 0;
    for (size_t end : partition(len, n)) {
        buckets_.push_back(make_bucket(
            std::vector<size_t>(order.begin() + long(from), order.begin() + long(end))));
        from = end;
    }
    cache_built_ = false;
}

std::vector<Evaluator::Bucket> Evaluator::subset_buckets(const std::vector<size_t> &subset) const {
    std::vector<uint8_t> in(static_cast<size_t>(M_), 0);
    for (size_t i : subset)
        in[i] = 1;
    std::vector<Bucket> out;
    for (const Bucket &b : buckets_) {
        std::vector<size_t> members;
        std::vector<int64_t> pick;
        for (size_t r = 0; r < b.members.size(); r++)
            if (in[b.members[r]]) {
                members.push_back(b.members[r]);
                pick.push_back(int64_t(r));
            }
        if (members.empty())
            continue;
        if (members.size() == b.members.size()) {
            out.push_back(b); // shares the bucket's tensors and cache
            continue;
        }
        // Padded as its parent: a sample's rows have the shape they have in
        // the whole task's forwards, so one sample per forward gives the
        // same values bit for bit whichever samples are scored.
        Bucket sb = make_bucket(members, b.T);
        sb.from = &b;
        sb.pick = torch::tensor(pick, torch::TensorOptions().dtype(torch::kInt64))
                      .to(model_.device());
        out.push_back(std::move(sb));
    }
    return out;
}

int64_t Evaluator::samples_per_forward(const Bucket &b, int64_t candidates) const {
    int64_t per = b.M;
    if (forward_tokens_ > 0)
        per = std::clamp<int64_t>(forward_tokens_ / std::max<int64_t>(1, candidates * b.T), 1, b.M);
    if (forward_samples_ > 0)
        per = std::min(per, forward_samples_);
    return per;
}

void Evaluator::set_forward_samples(int64_t samples) {
    forward_samples_ = std::max<int64_t>(0, samples);
    cache_built_ = false; // the cache's forwards follow the same cut
}

Evaluator::Bucket Evaluator::slice(const Bucket &b, int64_t m0, int64_t mc) {
    if (m0 == 0 && mc == b.M)
        return b;
    Bucket s;
    s.M = mc, s.T = b.T, s.A = b.A;
    s.tokens = b.tokens.narrow(0, m0, mc);
    s.rows = b.rows.narrow(0, m0, mc) - m0 * b.T; // scored positions within the slice
    s.targets = b.targets.narrow(0, m0, mc);
    s.valid = b.valid.narrow(0, m0, mc);
    s.lengths = b.lengths.narrow(0, m0, mc);
    s.members.assign(b.members.begin() + long(m0), b.members.begin() + long(m0 + mc));
    if (b.from) {
        s.from = b.from;
        s.pick = b.pick.narrow(0, m0, mc);
    } else {
        s.cache.resize(b.cache.size());
        for (size_t l = 0; l < b.cache.size(); l++)
            if (b.cache[l].defined())
                s.cache[l] = b.cache[l].narrow(0, m0, mc);
    }
    return s;
}

torch::Tensor Evaluator::cached_input(const Bucket &b, int64_t l) const {
    if (!b.from)
        return b.cache[size_t(l)];
    // A subset's bucket is padded as its parent: the parent's rows as they are.
    return b.from->cache[size_t(l)].index_select(0, b.pick).contiguous();
}

void Evaluator::set_buckets(uint32_t n) {
    buckets_setting_ = n;
    make_buckets();
}

std::vector<std::pair<int64_t, int64_t>> Evaluator::bucket_shapes() const {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const Bucket &b : buckets_)
        out.push_back({b.M, b.T});
    return out;
}

void Evaluator::set_prefix_cache(bool on) {
    cache_on_ = on;
    if (!on) {
        for (Bucket &b : buckets_)
            b.cache.clear();
        cache_built_ = false;
    }
}

void Evaluator::set_reference(const uint8_t *mask) {
    reference_.clear();
    if (mask) {
        const size_t units = size_t(model_.layers() * model_.kv_heads());
        bool any = false;
        for (size_t u = 0; u < units; u++)
            any = any || mask[u] != 0;
        if (any) // an all-full reference is the default's
            for (size_t u = 0; u < units; u++)
                reference_.push_back(mask[u] != 0);
    }
    for (Bucket &b : buckets_)
        b.cache.clear();
    cache_built_ = false;
}

void Evaluator::set_last_layer_at_rows(bool on) {
    if (on == last_at_rows_)
        return;
    last_at_rows_ = on;
    for (Bucket &b : buckets_) // its top layer follows the setting
        b.cache.clear();
    cache_built_ = false;
}

int64_t prefix_cache_budget(int64_t free, int64_t total, int64_t forward_bytes) {
    if (free < 0 || total <= 0)
        return -1;
    return std::max<int64_t>(0, free - forward_bytes - total / 10);
}

int64_t Evaluator::forward_bytes() const {
    int64_t tokens = forward_tokens_;
    if (tokens <= 0) // unbounded: the largest bucket's forward of a batch
        for (const Bucket &b : buckets_)
            tokens = std::max<int64_t>(tokens, b.M * b.T * int64_t(batch_));
    const int64_t width = std::max<int64_t>(
        model_.hidden(), model_.config().num_attention_heads * model_.config().head_dim);
    return kForwardCopies * tokens * width * int64_t(c10::elementSize(model_.dtype())) +
           model_.block_bytes();
}

int64_t Evaluator::effective_cache_budget() const {
    if (cache_budget_ >= 0)
        return cache_budget_;
    int64_t total = 0;
    const int64_t free = device_free_bytes(model_.device(), &total);
    const int64_t sized = prefix_cache_budget(free, total, forward_bytes());
    return sized >= 0 ? sized : fixed_cache_budget(model_.device());
}

void Evaluator::set_cache_budget(int64_t bytes) {
    cache_budget_ = std::max<int64_t>(0, bytes);
    for (Bucket &b : buckets_)
        b.cache.clear();
    cache_built_ = false;
}

std::vector<int64_t> Evaluator::cached_layers() const {
    std::vector<int64_t> out;
    const std::vector<torch::Tensor> &c = buckets_.front().cache; // the same layers in every bucket
    for (size_t l = 0; l < c.size(); l++)
        if (c[l].defined())
            out.push_back(int64_t(l));
    return out;
}

// Caches the hidden states of the reference mask (all full by default)
// entering layers 1..top (as many as the budget allows, evenly spaced, the
// same layers for every bucket; layer 0's input is the embedding lookup).
// top = L - 1 with the last layer at the scored rows: every candidate then
// runs its last layer through Model::last_layer_at, the reference's own
// mask too, so that its score has the same arithmetic (rounding) as any
// other mask's; else top = L (the model's output).
void Evaluator::build_cache() {
    const int64_t L = model_.layers(), top_layer = last_at_rows_ ? L - 1 : L;
    for (Bucket &b : buckets_)
        b.cache.assign(size_t(L + 1), torch::Tensor());
    cache_built_ = true;
    int64_t rows = 0;
    for (const Bucket &b : buckets_)
        rows += b.M * b.T;
    const int64_t per_layer = rows * model_.hidden() * int64_t(c10::elementSize(model_.dtype()));
    cache_budget_used_ = effective_cache_budget();
    const int64_t fit = per_layer > 0 ? cache_budget_used_ / per_layer : 0;
    std::vector<bool> want(size_t(L + 1), false);
    int64_t top = 0;
    if (fit >= top_layer) {
        for (int64_t l = 1; l <= top_layer; l++)
            want[size_t(l)] = true;
        top = top_layer;
    } else {
        for (int64_t i = 1; i <= fit; i++) {
            int64_t l = i * top_layer / (fit + 1);
            if (l >= 1) {
                want[size_t(l)] = true;
                top = std::max(top, l);
            }
        }
    }
    if (top == 0)
        return;
    try {
        // The reference's units [1, L, G] on the device, or undefined for all full.
        torch::Tensor ref_units;
        if (!reference_.empty())
            ref_units = torch::from_blob(const_cast<uint8_t *>(reference_.data()),
                                         {1, L, model_.kv_heads()},
                                         torch::TensorOptions().dtype(torch::kUInt8))
                            .to(model_.device(), torch::kBool);
        for (Bucket &b : buckets_) {
            // In forwards of at most forward_tokens_ tokens, as scoring runs.
            const int64_t per = samples_per_forward(b, 1);
            for (int64_t m0 = 0; m0 < b.M; m0 += per) {
                const int64_t mc = std::min(per, b.M - m0);
                torch::Tensor h = model_.embed(b.tokens.narrow(0, m0, mc));
                const torch::Tensor units =
                    ref_units.defined() ? ref_units.expand({mc, L, model_.kv_heads()})
                                        : torch::Tensor();
                for (int64_t l = 0; l < top; l++) {
                    h = model_.run_layers(h, units, w_, l, l + 1);
                    layer_rows_ += mc;
                    torch::Tensor &slot = b.cache[size_t(l + 1)];
                    if (!want[size_t(l + 1)])
                        continue;
                    if (mc == b.M) {
                        slot = h;
                        continue;
                    }
                    if (!slot.defined())
                        slot = torch::empty({b.M, b.T, h.size(2)}, h.options());
                    slot.narrow(0, m0, mc).copy_(h);
                }
                forwards_++;
            }
        }
    } catch (const c10::OutOfMemoryError &) {
        // Device memory too small for this budget: run without the cache
        // rather than fail (set BOSCH_TORCH_CACHE_MB lower to keep one).
        for (Bucket &b : buckets_)
            b.cache.assign(size_t(L + 1), torch::Tensor());
    }
}

int64_t Evaluator::start_layer(const uint8_t *mask) const {
    if (!cache_on_)
        return 0;
    const int64_t L = model_.layers(), G = model_.kv_heads();
    // The first layer where the mask differs from the reference (all full:
    // its first SWA layer); the layers below it see the reference's states.
    int64_t first = L;
    for (int64_t i = 0; i < L * G; i++)
        if ((mask[i] != 0) != (!reference_.empty() && reference_[size_t(i)] != 0)) {
            first = i / G;
            break;
        }
    const std::vector<torch::Tensor> &cache = buckets_.front().cache;
    for (int64_t l = std::min<int64_t>(first, int64_t(cache.size()) - 1); l > 0; l--)
        if (cache[size_t(l)].defined())
            return l;
    return 0;
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
