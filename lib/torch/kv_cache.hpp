// A hybrid KV cache and greedy decoding through it (issue 38): prefill once,
// then one token at a time, where each (sequence, layer, KV group) unit keeps
// either every position (full attention) or only its sink positions and a
// ring of its last `window` positions (sliding), so that the memory held is
// what the unit mask says. Every step computes the logits of the masked
// forward over the whole sequence (Model::forward with the same units and
// window), up to floating-point rounding: the same keys are visible (query
// t sees key s <= t when the unit is full, or s > t - window or s < sink
// when it slides; a layer the config makes sliding keeps the config's
// window and no sink).
#pragma once

#include "model.hpp"

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace bosch_torch {

class KvCache {
public:
    // B sequences of at most `capacity` tokens each (prompt + new ones);
    // units: bool [B, layers, kv_heads] on the model's device (true = SWA),
    // or undefined for all full.
    KvCache(Model &m, const torch::Tensor &units, const Window &w, int64_t batch,
            int64_t capacity);

    // Runs the prompts (each its own length, >= 1) through the model,
    // keeping their keys and values; returns the fp32 logits [B, V] at each
    // prompt's last position.
    torch::Tensor prefill(const std::vector<std::vector<int32_t>> &prompts);
    // Appends one token to each sequence (B ids) and returns the fp32
    // logits [B, V] at it. Throws when a sequence would exceed `capacity`.
    torch::Tensor step(const std::vector<int32_t> &ids);

    // Bytes of keys and values held (allocated), and what a full cache of
    // every unit at `capacity` positions would hold.
    int64_t bytes() const { return bytes_; }
    int64_t bytes_full() const { return bytes_full_; }
    const std::vector<int64_t> &lengths() const { return len_; }

private:
    struct Layer {
        // Full units: keys/values [Nf, capacity, D], their flat (b * G + g)
        // indices and sequences.
        torch::Tensor kf, vf, full_idx, full_seq;
        // Sliding units: [Ns, sink + window, D] (sink positions first, then
        // the ring), the position each slot holds (-1: empty).
        torch::Tensor ks, vs, pos, swa_idx, swa_seq;
        int64_t window = 0, sink = 0;
        bool config_slides = false; // the config makes the layer slide (its window, no sink)
        std::vector<int64_t> full_flat, swa_flat; // host copies of the indices
    };
    // Where position p of a sliding unit goes: its sink slot, or the ring.
    static int64_t ring_slot(const Layer &c, int64_t p) {
        return p < c.sink ? p : c.sink + p % c.window;
    }
    void fill(int64_t layer, const torch::Tensor &k, const torch::Tensor &v);
    void append(Layer &c, const torch::Tensor &k, const torch::Tensor &v,
                const std::vector<int64_t> &pos);
    torch::Tensor attend(const Layer &c, const torch::Tensor &q, const torch::Tensor &pos) const;

    Model &m_;
    int64_t B_, cap_, L_, G_, D_;
    std::vector<Layer> layers_;
    std::vector<int64_t> len_; // tokens held per sequence
    int64_t bytes_ = 0, bytes_full_ = 0;
};

} // namespace bosch_torch
