// A safetensors file (lib/torch/safetensors.cpp read_safetensors: the
// header length, the JSON header, dtypes, shapes and data offsets).
#include "torch/checkpoint.hpp"

#include "fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("model.safetensors", data, size);
    if (!path)
        return 0;
    bosch_torch::TensorMap m;
    (void)bosch_torch::read_safetensors(path, m);
    return 0;
}
