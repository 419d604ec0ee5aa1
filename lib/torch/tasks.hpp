// Tasks: prompts (token ids, of any length) with answer spans.
#pragma once

#include "bosch/text.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bosch_torch {

struct Sample {
    std::vector<int32_t> prompt, answer;
    // Tasks made from text only: the answer strings the match metric looks
    // for, and the continuation length (0: answer tokens + 16).
    std::vector<std::string> answers;
    int64_t max_new = 0;
};

struct Task {
    std::vector<Sample> samples; // checked against a model by check_task (evaluator.hpp)
    // The tokenizer a text task was encoded with (borrowed; decodes the
    // match metric's continuations). NULL for id tasks.
    const bosch_tokenizer *tokenizer = nullptr;
};

struct NiahParams {
    uint32_t vocab = 0, context = 0, samples = 0, needles = 0, key_len = 0, value_len = 0;
    double depth_min = 0.0, depth_max = 1.0;
    uint64_t seed = 0;
    // Empty: markers 0, 1, 2 and filler/key/value tokens uniform in
    // [3, vocab) (bosch_torch_task_create_niah). Else tokens uniform over
    // `filler` and these markers (bosch_torch_task_create_niah_ids; vocab
    // unused).
    std::vector<int32_t> filler;
    int32_t key_marker = 0, value_marker = 1, query_marker = 2;
};

// Each throws Failure (BOSCH_E_INVALID for bad arguments or data, BOSCH_E_IO
// for files) with a message naming the problem (and the line, for JSONL).
Task make_niah(const NiahParams &p);
Task load_jsonl(const std::string &path);
void write_jsonl(const Task &t, const std::string &path);
// A text task encoded with `tok` (text_task.cpp): the prompt rendered with
// `chat_flags` (enum bosch_chat_flags), special tokens recognised; the
// target encoded as plain text. Keeps `tok` by reference.
Task from_text(const bosch_text_task *tt, const bosch_tokenizer *tok, unsigned chat_flags);
// The tokens the match metric generates for a sample at most: its
// max_new, else room for the answer tokens plus a short preamble.
int64_t max_new_tokens(const Sample &s);

} // namespace bosch_torch

// The opaque handle of the C API.
struct bosch_torch_task {
    bosch_torch::Task task;
};
