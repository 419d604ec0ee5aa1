// RULER-style scoring: greedy continuation, then string match.
#pragma once

#include "model.hpp"
#include "tasks.hpp"

#include <cstdint>
#include <vector>

namespace bosch_torch {

// Scores n unit masks (n x layers*kv_heads bytes, nonzero = SWA): for each
// mask, every sample's prompt is continued greedily by up to its
// max_new_tokens (stopping at a special token, or at an id the tokenizer
// has no token for, which is not kept), the continuation is decoded
// with the task's tokenizer (special tokens left out) and scored by RULER's
// string_match_all against its answers, a value per sample (the score is
// their mean, which the caller takes).
// At most `batch` candidates x all samples per forward. The prompts run
// once and each new token is one step through the hybrid KV cache
// (BOSCH_TORCH_GENERATE=recompute: each token re-runs the whole sequence).
// `layer_rows` (may be null) accumulates batch rows x layers run.
// `samples` (task sample indices) scores on those samples only; empty =
// every sample. `values`: n x (samples scored), candidate-major.
// Throws Failure(BOSCH_E_INVALID) for a task without a tokenizer or answers.
void match_scores(Model &m, const Task &task, const Window &w, const uint8_t *masks, size_t n,
                  uint32_t batch, const std::vector<size_t> &samples, double *values,
                  int64_t *layer_rows);

// Throws Failure(BOSCH_E_INVALID) unless `task` can be scored by the match
// metric (made from text: a tokenizer and answer strings). The evaluator
// checks this when it opens; match_scores again on every call.
void check_match_task(const Task &task);

} // namespace bosch_torch
