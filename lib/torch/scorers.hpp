// Static head-level scores (torch.h, "Static head-level scores"): attention
// statistics of each query head under full attention, and the Fisher
// sensitivity of each unit's full/SWA gate. One sample at a time, attention
// untiled (probabilities [heads, T, T] materialised per layer).
//
// Every function may throw: Failure(BOSCH_E_INVALID) for bad arguments or
// task data, Failure(BOSCH_E_BAD_SCORE) for a non-finite score, c10::Error
// from libtorch (the shim maps them).
#pragma once

#include "model.hpp"
#include "tasks.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace bosch_torch {

enum class Scorer { Locality = 0, Retrieval = 1, EchoInduction = 2, Fisher = 3, DuoOnTheFly = 4 };

// "locality", "retrieval", "echo-induction", "fisher", "duo-on-the-fly";
// nullptr for others.
const char *scorer_name(int scorer);

struct HeadScores {
    std::vector<double> head; // [layers * query_heads], head h of layer l at l * nH + h
    std::vector<double> unit; // [layers * kv_heads]: max over the unit's query heads
                              // (mean for DuoOnTheFly, as kvpress)
};

// Runs `scorer` on every sample of `task` (see torch.h and docs/torch.md for
// the definitions). Checks the window (>= 1), the task (non-empty, prompts
// of any length, non-empty prompts and answers, tokens in [0, vocab)) and
// that every score is finite. LOCALITY, RETRIEVAL and ECHO_INDUCTION run in
// inference mode; FISHER enables autograd for the gates only.
HeadScores compute_scores(Model &m, const Task &task, Scorer scorer, const Window &w);

// Full-attention forward of one sequence (tokens: int64 [T] or [1, T] on the
// model's device) through the model's own layers; before each layer's
// residual update, `f(layer, probs)` receives that layer's attention
// probabilities, fp32 [query_heads, T, T] (row t: query t; zero above the
// diagonal), computed as Model::attention does but untiled.
using ProbsFn = std::function<void(int64_t layer, const torch::Tensor &probs)>;
void for_each_layer_probs(Model &m, const torch::Tensor &tokens, const ProbsFn &f);

// ECHO_INDUCTION's input for sample `index` whose prompt has `len` tokens: n = len / 2 tokens uniform in [0, vocab) (splitmix64 seeded
// with 0x5eed + index), then the same n tokens again; when len is odd one
// more random token comes first, so the copies start at o = len - 2n and
// o + n.
std::vector<int32_t> echo_sequence(int64_t vocab, int64_t len, uint64_t index);

// FISHER's loss: the sum over the sample's answer tokens of -log p(token)
// (fp32; teacher-forced on prompt + answer[:-1]) when the attention output
// (before o_proj) of unit (l, g) is gates[l][g] * full + (1 - gates[l][g]) *
// SWA under window `w`. gates: fp32 [layers, kv_heads] on the model's device;
// when it requires grad the result carries the graph (weights never require
// grad; inference-mode weights are copied for the backward). Returns a 0-dim
// fp32 tensor. Gates of 1 give the model's full-attention loss.
torch::Tensor gated_nll(Model &m, const Sample &s, const torch::Tensor &gates, const Window &w);

} // namespace bosch_torch
