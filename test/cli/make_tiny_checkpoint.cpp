// Writes a random Qwen3 checkpoint into DIR with test/torch's helper: by
// default the tiny one of the cli tests (4 layers, hidden 32, 4 / 2 heads);
// VOCAB, when given, is the vocabulary size (151936: Qwen3's, for the real
// tokenizer). The options give a real model's layer shapes (the CUDA check,
// tools/cuda/check.sh, times Qwen3-1.7B and 8B shapes with them).
//
//   cli_make_tiny_checkpoint DIR [VOCAB] [--layers N] [--hidden H]
//       [--heads Q] [--kv-heads K] [--head-dim D] [--intermediate I]
//       [--dtype f32|bf16] [--tie] [--seed S] [--family qwen3|llama|mistral|qwen2]
//       [--experts E [--experts-per-tok K] [--moe-intermediate I]
//        [--sparse-step N] [--mlp-only L,L,...] [--fused-experts]]
// --experts E > 0 writes a Qwen3MoeForCausalLM (one tensor per expert, the
// hub's layout, unless --fused-experts); --family another family's layer
// (test/torch/tiny_checkpoint.hpp).
#include "../torch/tiny_checkpoint.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t &out)
{
    char *end = nullptr;
    long long v = std::strtoll(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi)
        return false;
    out = v;
    return true;
}

int main(int argc, char **argv)
{
    bosch_torch_test::TinySpec spec;
    spec.layers = 4;
    spec.heads = 4;
    spec.kv_heads = 2;
    spec.seed = 7;
    const char *dir = nullptr;
    bool vocab_given = false;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        struct {
            const char *name;
            int64_t *dst;
            int64_t lo, hi;
        } ints[] = {{"--layers", &spec.layers, 1, 1024},
                    {"--hidden", &spec.hidden, 1, 1 << 16},
                    {"--heads", &spec.heads, 1, 1024},
                    {"--kv-heads", &spec.kv_heads, 1, 1024},
                    {"--head-dim", &spec.head_dim, 2, 1024},
                    {"--intermediate", &spec.intermediate, 1, 1 << 18},
                    {"--experts", &spec.experts, 0, 4096},
                    {"--experts-per-tok", &spec.experts_per_tok, 1, 4096},
                    {"--moe-intermediate", &spec.moe_intermediate, 1, 1 << 18},
                    {"--sparse-step", &spec.sparse_step, 1, 1024}};
        bool done = false;
        for (auto &o : ints)
            if (a == o.name) {
                if (!v || !parse_int(v, o.lo, o.hi, *o.dst)) {
                    std::fprintf(stderr, "%s: bad value for %s\n", argv[0], o.name);
                    return 2;
                }
                i++, done = true;
            }
        if (done)
            continue;
        if (a == "--dtype" && v && (!std::strcmp(v, "f32") || !std::strcmp(v, "bf16"))) {
            spec.dtype = !std::strcmp(v, "bf16") ? torch::kBFloat16 : torch::kFloat32;
            i++;
        } else if (a == "--seed" && v) {
            int64_t s = 0;
            if (!parse_int(v, 0, INT64_MAX, s)) {
                std::fprintf(stderr, "%s: bad value for --seed\n", argv[0]);
                return 2;
            }
            spec.seed = uint64_t(s);
            i++;
        } else if (a == "--family" && v &&
                   (!std::strcmp(v, "qwen3") || !std::strcmp(v, "llama") ||
                    !std::strcmp(v, "mistral") || !std::strcmp(v, "qwen2"))) {
            spec.family = v;
            i++;
        } else if (a == "--tie") {
            spec.tie = true;
        } else if (a == "--fused-experts") {
            spec.fused_experts = true;
        } else if (a == "--mlp-only" && v) {
            std::string list = v;
            for (size_t at = 0; at <= list.size();) {
                size_t comma = list.find(',', at);
                std::string item = list.substr(at, comma == std::string::npos ? std::string::npos
                                                                               : comma - at);
                int64_t l = 0;
                if (!parse_int(item.c_str(), 0, 1023, l)) {
                    std::fprintf(stderr, "%s: bad value for --mlp-only\n", argv[0]);
                    return 2;
                }
                spec.mlp_only_layers.push_back(l);
                if (comma == std::string::npos)
                    break;
                at = comma + 1;
            }
            i++;
        } else if (a[0] != '-' && !dir) {
            dir = argv[i];
        } else if (a[0] != '-' && !vocab_given) {
            if (!parse_int(argv[i], 8, int64_t(1) << 24, spec.vocab)) {
                std::fprintf(stderr, "bad vocabulary size %s\n", argv[i]);
                return 2;
            }
            vocab_given = true;
        } else {
            std::fprintf(stderr,
                         "usage: %s DIR [VOCAB] [--layers N] [--hidden H] [--heads Q] "
                         "[--kv-heads K] [--head-dim D] [--intermediate I] [--dtype f32|bf16] "
                         "[--tie] [--seed S] [--family qwen3|llama|mistral|qwen2] "
                         "[--experts E] [--experts-per-tok K] "
                         "[--moe-intermediate I] [--sparse-step N] [--mlp-only L,...] "
                         "[--fused-experts]\n",
                         argv[0]);
            return 2;
        }
    }
    if (!dir || spec.heads % spec.kv_heads != 0 || spec.head_dim % 2 != 0 ||
        (spec.experts && spec.experts_per_tok > spec.experts)) {
        std::fprintf(stderr,
                     "%s: need DIR, heads divisible by kv-heads, an even head-dim, "
                     "experts-per-tok <= experts\n",
                     argv[0]);
        return 2;
    }
    std::string err = bosch_torch_test::write_tiny_qwen3(dir, spec);
    if (!err.empty()) {
        std::fprintf(stderr, "%s\n", err.c_str());
        return 1;
    }
    return 0;
}
