// The attention core of the forward: full causal and banded sliding-window
// attention over S (batch element, KV group) pairs, GQA without repeat_kv
// (the r query heads of a group are r row blocks against its one key head).
//
// Shapes: q [S, r, T, D], k and v [S, T, D], out [S, r, T, D] (written);
// all contiguous, on one device, in one dtype. Softmax over fp32 scores for
// f32 models; other dtypes keep Hugging Face's order (scores in the dtype,
// softmax in fp32, probabilities cast back).
//
// Tiling (why it looks like this): a tile is n query rows of `pairs` pairs
// at once. n is chosen first, as large as the work per tile wants (256 for
// causal, about half the window for banded), and the pairs per tile fill
// what is left of the score budget, so a batch of candidates shares the
// budget by running fewer pairs per tile instead of shrinking every tile
// to a few rows (8-row tiles ran the attention matmuls at ~4 GFLOP/s).
// Scores, gathered keys and outputs live in a Workspace reused across
// tiles, pairs and layers instead of being allocated per tile.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace bosch_torch {

// Scratch tensors of the attention tiles (scores, keys, values, out) and of
// the f32 CPU head projections (proj, sq, q, k, v), grown on demand and
// kept. One per model; used under the model's mutex.
struct Workspace {
    torch::Tensor scores, keys, values, out;
    torch::Tensor proj, sq, q, k, v;
};

// The first `numel` elements of a workspace slot, grown (never shrunk) when
// too small or of another dtype or device.
torch::Tensor take(torch::Tensor &slot, int64_t numel, const torch::TensorOptions &opts);

// Full causal attention: query t sees keys 0..t. Keys beyond a tile's last
// query are never multiplied. On torch >= 2 the fused
// scaled_dot_product_attention kernel is used unless `tiled` is set.
void causal_pairs(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                  torch::Tensor out, double scale, int64_t block_bytes, Workspace &ws,
                  bool tiled = false);

// Sliding window plus sink: query t sees key s iff s <= t and
// (s > t - window or s < sink). A tile [t0, t1) multiplies only the sink
// keys [0, min(sink, lo)) and the band [lo, t1), lo = max(0, t0 - window +
// 1): memory and work O(T * (window + sink)) per pair.
void banded_pairs(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                  torch::Tensor out, double scale, int64_t window, int64_t sink,
                  int64_t block_bytes, Workspace &ws);

// Whether this libtorch has the fused kernel (scaled_dot_product_attention
// with grouped-query heads, PyTorch >= 2.5) that causal_pairs and
// banded_fused use.
bool fused_available();

// The same attention as banded_pairs through the fused kernel, for the GPU,
// where host-driven tiles cost more than the work they save: queries t <
// window + sink see every earlier key (one causal call), the rest run in
// chunks of C queries against the sink keys and their band of C + window -
// 1 keys, all chunks of all pairs in one call with one [C, sink + C +
// window - 1] mask (the same for every chunk). Work per query: sink + C +
// window - 1 keys, C = window / 4 (rounded up to 16). Pairs go in groups
// whose gathered keys, values and queries stay under block_bytes. Requires
// fused_available() and scale == head_dim^-0.5 (the kernel's default).
void banded_fused(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                  torch::Tensor out, int64_t window, int64_t sink, int64_t block_bytes);

} // namespace bosch_torch
