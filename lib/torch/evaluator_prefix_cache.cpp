// The evaluator's prefix cache: the reference mask's hidden states entering
// evenly spaced layers, kept per bucket, so that a candidate starts at the
// highest cached layer below its first difference from the reference; its
// budget (fixed, or sized to the device's free memory) and its settings.
#include "evaluator.hpp"

#ifdef BOSCH_TORCH_MEMORY_INFO
#include <ATen/DeviceAccelerator.h>
#endif

#include <algorithm>

namespace bosch_torch {

namespace {

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

} // namespace

torch::Tensor Evaluator::cached_input(const Bucket &b, int64_t l) const {
    if (!b.from)
        return b.cache[size_t(l)];
    // A subset's bucket is padded as its parent: the parent's rows as they are.
    return b.from->cache[size_t(l)].index_select(0, b.pick).contiguous();
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

} // namespace bosch_torch
