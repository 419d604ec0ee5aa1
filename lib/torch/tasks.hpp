// Tasks: prompts (token ids, of any length) with answer spans.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bosch_torch {

struct Sample {
    std::vector<int32_t> prompt, answer;
};

struct Task {
    std::vector<Sample> samples; // checked against a model by check_task (evaluator.hpp)
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

} // namespace bosch_torch

// The opaque handle of the C API.
struct bosch_torch_task {
    bosch_torch::Task task;
};
