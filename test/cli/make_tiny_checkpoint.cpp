// Writes a tiny random Qwen3 checkpoint into argv[1] (for the cli tests),
// with test/torch's helper; argv[2], when given, is the vocabulary size
// (151936: Qwen3's, for the real tokenizer).
#include "../torch/tiny_checkpoint.hpp"

#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        std::fprintf(stderr, "usage: %s DIR [VOCAB]\n", argv[0]);
        return 2;
    }
    bosch_torch_test::TinySpec spec;
    spec.layers = 4;
    spec.heads = 4;
    spec.kv_heads = 2;
    spec.seed = 7;
    if (argc == 3)
        spec.vocab = std::atoll(argv[2]);
    if (spec.vocab < 8) {
        std::fprintf(stderr, "bad vocabulary size %s\n", argv[2]);
        return 2;
    }
    std::string err = bosch_torch_test::write_tiny_qwen3(argv[1], spec);
    if (!err.empty()) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return 1;
    }
    return 0;
}
