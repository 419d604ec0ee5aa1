// The evaluator's length buckets: samples of similar length right-padded
// together (the partition that minimises padding), their tensors, the
// buckets of a subset of the samples, and the cut of a bucket into
// forwards under forward_tokens / forward_samples.
#include "evaluator.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace bosch_torch {

namespace {

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

} // namespace bosch_torch
