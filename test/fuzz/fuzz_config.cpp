// A config.json (lib/torch/config.cpp load_config: architectures, sizes,
// RoPE fields, hybrid layer_types / sliding_window, max_position_embeddings).
#include "torch/checkpoint.hpp"

#include "fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!fuzz_file("config.json", data, size))
        return 0;
    bosch_torch::ModelConfig cfg;
    (void)bosch_torch::load_config(fuzz_dir(), cfg);
    return 0;
}
