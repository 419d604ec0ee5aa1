// Scores unit masks on a task: K candidates x M samples per forward, a prefix
// activation cache, logits only at the scored positions.
#pragma once

#include "model.hpp"
#include "tasks.hpp"

#include <string>
#include <vector>

namespace bosch_torch {

enum class Metric { Exact = 0, Logprob = 1, Match = 2 };

// Checks that `task` can run on `m` with window `w` (window >= 1, sink >= 0,
// samples present, non-empty prompts and answers, tokens in [0, vocab));
// prompts may differ in length. Throws Failure(BOSCH_E_INVALID) naming the
// problem.
// Shared by the evaluator and the static scorers.
void check_task(const Model &m, const Task &task, const Window &w);

// The prefix cache's default budget on a device with `free` of `total`
// bytes left: the free memory less what one forward needs (forward_bytes)
// and a tenth of the device (the allocator's fragmentation, the scores'
// temporaries); 0 when nothing is left; -1 when the memory is not known
// (free < 0 or total <= 0).
int64_t prefix_cache_budget(int64_t free, int64_t total, int64_t forward_bytes);

class Evaluator {
public:
    // Throws Failure(BOSCH_E_INVALID) when a task token is >= the vocabulary,
    // window < 1 or the metric is unknown.
    Evaluator(Model &model, const Task &task, Window w, Metric metric);

    void set_batch(uint32_t candidates) { batch_ = candidates ? candidates : 1; }
    // Length buckets (torch.h, bosch_torch_evaluator_set_buckets): 0 = the
    // default (kDefaultBuckets), 1 = every sample right-padded to the
    // longest, n >= 2 = at most n buckets of similar length. Drops the cache.
    static constexpr uint32_t kDefaultBuckets = 8;
    void set_buckets(uint32_t n);
    uint32_t buckets_setting() const { return buckets_setting_; }
    // Buckets in use and their sizes (samples, padded length), for tests.
    std::vector<std::pair<int64_t, int64_t>> bucket_shapes() const;
    uint32_t batch() const { return batch_; }
    const Window &window() const { return w_; }
    Metric metric() const { return metric_; }
    const Task &task() const { return task_; }
    void set_prefix_cache(bool on);
    bool prefix_cache() const { return cache_on_; }
    // The mask whose hidden states the prefix cache holds (layers * kv_heads
    // bytes, nonzero = SWA; nullptr = all full, the default): a candidate
    // starts at the highest cached layer not above the first layer where it
    // differs from the reference. A host that sets it to the search's
    // incumbent lets neighbours of the incumbent skip the layers below their
    // first change. Drops the cache (rebuilt on the next evaluation).
    void set_reference(const uint8_t *mask);
    const std::vector<uint8_t> &reference() const { return reference_; } // empty = all full
    // Bytes the cache may hold. Default (-1): sized when the cache is built,
    // on CUDA to the device's free memory (prefix_cache_budget, with
    // forward_bytes()) where this libtorch reports it (PyTorch 2's
    // accelerator API), else 8 GiB; 2 GiB on the CPU. The environment
    // variable BOSCH_TORCH_CACHE_MB, read when the evaluator opens, fixes
    // it instead. When not every layer fits, evenly spaced layers are
    // cached and a candidate starts from the highest cached layer not above
    // its first SWA layer. If the device runs out of memory while the cache
    // is built, the evaluator continues without it.
    void set_cache_budget(int64_t bytes);
    int64_t cache_budget() const { return cache_budget_; }
    // The budget the last cache build used (0 before one).
    int64_t cache_budget_used() const { return cache_budget_used_; }
    // What one forward holds at its peak, estimated: kForwardCopies
    // activations of the forward's tokens (forward_tokens(), or the largest
    // bucket's batch when unbounded) at the model's widest projection, plus
    // one attention/MLP block (Model::block_bytes).
    static constexpr int64_t kForwardCopies = 16;
    int64_t forward_bytes() const;
    // Layers whose input hidden states are cached (empty until first use).
    std::vector<int64_t> cached_layers() const;
    // At most this many tokens (candidates x samples x padded length) per
    // forward: a bucket's samples are split into forwards of as many as fit
    // (at least one sample of every candidate of the group), so that 64
    // prompts of 32k tokens do not become one forward of 2M tokens. 0 = no
    // bound. Default: 2^18 tokens on CUDA, none on the CPU; the environment
    // variable BOSCH_TORCH_FORWARD_TOKENS overrides the default. Scores
    // equal those of unsplit forwards up to the kernels' rounding.
    void set_forward_tokens(int64_t tokens) { forward_tokens_ = std::max<int64_t>(0, tokens); }
    // At most `samples` samples per candidate in a forward (0: no bound but
    // forward_tokens_). 1: every sample alone, so its value is the same bit
    // for bit whichever samples a request is scored on (MPI parts).
    void set_forward_samples(int64_t samples);
    int64_t forward_samples() const { return forward_samples_; }
    int64_t forward_tokens() const { return forward_tokens_; }
    // Forwards run so far (tests: the bound splits).
    int64_t forwards() const { return forwards_; }
    // The last layer at the scored positions only (Model::last_layer_at):
    // the default; off (every position through the last layer, then the
    // scored rows taken) with the environment variable
    // BOSCH_TORCH_LAST_LAYER=all when the evaluator opens, or here (drops
    // the cache: with the lever on it holds layers below the last only).
    // Scores agree up to the kernels' rounding.
    void set_last_layer_at_rows(bool on);
    bool last_layer_at_rows() const { return last_at_rows_; }

    // masks: n x (layers * kv_heads) bytes, nonzero = SWA. Writes n scores
    // (mean over samples of the metric). Candidates are grouped by start
    // layer (with the cache: the highest cached layer not above the
    // candidate's first SWA layer; without: 0) and each group is run in
    // forwards of at most batch() candidates x all samples. Throws on failure.
    // `subset` (ascending, distinct, each < samples()) scores on those
    // samples only (their mean); empty or every sample = the whole task, by
    // the same computation. A subset keeps the buckets: each bucket's chosen
    // samples form a bucket of their own, padded as the whole bucket,
    // reading the prefix cache's rows of those samples. A score is the sum
    // of its samples' values in `subset` order (ascending sample index),
    // added one by one in double, divided by their count: a sum that does
    // not depend on which samples shared a forward, so that a request split
    // over MPI ranks and summed in that order gives the same score when the
    // values do (one sample per forward, set_forward_samples(1); else they
    // differ by the rounding of forwards of other sizes). `values` (may be
    // null): n x count per-sample values (count = subset size, or samples()
    // for the whole task), candidate-major.
    void score(const uint8_t *masks, size_t n, double *scores,
               const std::vector<size_t> &subset = {}, double *values = nullptr);
    size_t samples() const { return size_t(M_); }

    // The evaluator's numerical noise (torch.h, bosch_torch_evaluator_noise):
    // the anchors scored through the model's kernels and through the other
    // attention path (masked reference <-> banded/fused kernels), every layer
    // recomputed; 2 x the sum of their disagreements plus 4 f32 ulps of the
    // larger anchor. Measured on the first call, then kept. Throws on failure.
    double noise();

    // Work counter for tests: sum over forwards of batch rows x layers run.
    int64_t layer_rows() const { return layer_rows_; }

    std::string last_error;

private:
    // Samples of similar length, right-padded to the bucket's longest.
    struct Bucket {
        int64_t M = 0, T = 0, A = 0; // samples, sequence length, longest answer
        torch::Tensor tokens;        // int64 [M, T]: prompt + answer[:-1], right-padded
        torch::Tensor rows;          // int64 [M, A]: scored positions (b*T + t)
        torch::Tensor targets;       // int64 [M, A]: answer tokens (0 where padded)
        torch::Tensor valid;         // bool [M, A]
        torch::Tensor lengths;       // f64 [M]: answer lengths
        std::vector<torch::Tensor> cache; // [layers + 1]; defined = cached input of that layer
        std::vector<size_t> members;      // task sample of each row
        // A subset's bucket (subset_buckets): no cache of its own; its rows
        // are rows `pick` (int64 [M]) of bucket `from`, whose cache it reads.
        const Bucket *from = nullptr;
        torch::Tensor pick;
    };
    void make_buckets();
    // The bucket of `members`, padded to their longest or to `pad_to`.
    Bucket make_bucket(const std::vector<size_t> &members, int64_t pad_to = 0) const;
    // The buckets of a proper subset of the samples (ascending, distinct).
    std::vector<Bucket> subset_buckets(const std::vector<size_t> &subset) const;
    // Samples [m0, m0 + mc) of a bucket as a bucket of their own: views of
    // its tensors and of its cache (or of its parent's picks).
    static Bucket slice(const Bucket &b, int64_t m0, int64_t mc);
    // Samples of b per forward of `candidates` candidates under
    // forward_tokens_ (at least one; all of them when unbounded).
    int64_t samples_per_forward(const Bucket &b, int64_t candidates) const;
    // The cached all-full input of layer l for the rows of b [M, T, H].
    torch::Tensor cached_input(const Bucket &b, int64_t l) const;
    void build_cache();
    int64_t start_layer(const uint8_t *mask) const;
    // Scores candidates idx of `masks` on the samples of `bks` (`count` in
    // all), writing scores[idx[c]].
    // The teacher-forced metrics' per-sample values (score()'s `values`);
    // `subset` empty for the whole task.
    void score_forward(const uint8_t *masks, size_t n, const std::vector<size_t> &subset,
                       int64_t count, double *values);
    // Scores candidates idx (all starting at layer `start`) on buckets bks:
    // writes each candidate's per-sample values into row idx[c] of `values`
    // (count per row, at the sample's position `pos[sample]`).
    void score_group(const uint8_t *masks, const std::vector<size_t> &idx, int64_t start,
                     const std::vector<Bucket> &bks, const std::vector<int64_t> &pos,
                     int64_t count, double *values);
    // Per-sample scores [k, M] (f64) of one bucket from the hidden states
    // leaving the last layer at its scored rows, hr [k*M*A, H] in (candidate,
    // sample, answer position) order. A metric that scores a greedy
    // continuation of N tokens would add its branch here (it decodes from
    // the bucket's prompts instead of reading teacher-forced rows).
    torch::Tensor sample_scores(const Bucket &b, int64_t k, const torch::Tensor &hr);
    // The rest of a forward of k candidates x b's samples from h entering
    // layer `start` (units: their masks [k*M, L, G]) to the hidden states
    // at the scored rows, hr as sample_scores reads them.
    torch::Tensor scored_hidden(const Bucket &b, int64_t k, torch::Tensor h,
                                const torch::Tensor &units, int64_t start);

    Model &model_;
    Window w_;
    Metric metric_;
    uint32_t batch_ = 1;
    bool cache_on_ = true;
    int64_t cache_budget_ = -1; // -1: sized when the cache is built
    int64_t cache_budget_used_ = 0;
    int64_t effective_cache_budget() const;
    const Task &task_;
    int64_t M_ = 0; // samples
    uint32_t buckets_setting_ = 0;
    std::vector<Bucket> buckets_;
    bool cache_built_ = false;
    int64_t layer_rows_ = 0;
    int64_t forward_tokens_ = 0;
    int64_t forward_samples_ = 0;
    bool last_at_rows_ = true;
    std::vector<uint8_t> reference_; // empty = all full
    int64_t forwards_ = 0;
    double noise_ = -1; // < 0: not measured yet
};

} // namespace bosch_torch

struct bosch_torch_model {
    std::unique_ptr<bosch_torch::Model> model;
    // bosch_torch_model_last_error: the last forward's or scorer's message.
    std::string last_error;
};

struct bosch_torch_evaluator {
    std::unique_ptr<bosch_torch::Evaluator> ev;
    // Length as a fidelity (bosch_torch_evaluator_set_screen_task): requests
    // below fidelity 1 are scored on every sample of this evaluator of the
    // screen task, which has ev's settings; NULL = none.
    std::unique_ptr<bosch_torch::Evaluator> screen;
    bosch_torch_model *model = nullptr;
    std::string job_identity; // bosch_torch_evaluator_identity's last text
};
