// Greedy generation through the hybrid KV cache (lib/torch/kv_cache.cpp)
// against re-running the whole sequence per token (the match metric's
// earlier path), side by side on one random Qwen3: by default of the
// organism's shape (4 layers, 8 query / 4 KV heads of dim 32, hidden 128,
// vocabulary 128) on the CPU in f32; the flags give a real model's layer
// shapes, CUDA and bf16 (tools/cuda/check.sh: Qwen3-8B's). For each prompt
// length and number of new tokens: the recomputing path's seconds
// (measured over at most --max-recompute steps; beyond, the rest is the
// last measured step's time times the steps left, said so), the cache's
// (prefill + steps), the speed-up, and whether both produced the same
// tokens over the measured steps. Then, per SWA share rho of a random unit
// mask: the KV bytes the cache holds against a full cache and the decode
// tokens per second. `bench_generate --help` lists the flags.
#include "torch/kv_cache.hpp"

#include "tiny_checkpoint.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace bosch_torch;
using namespace bosch_torch_test;

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static std::vector<int64_t> list(const char *s) {
    std::vector<int64_t> v;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        v.push_back(std::strtoll(item.c_str(), nullptr, 10));
    return v;
}

static torch::Tensor random_units(int64_t L, int64_t G, double rho, uint32_t seed) {
    std::vector<int64_t> idx(size_t(L * G));
    for (size_t i = 0; i < idx.size(); i++)
        idx[i] = int64_t(i);
    std::mt19937 rng(seed);
    std::shuffle(idx.begin(), idx.end(), rng);
    torch::Tensor u = torch::zeros({1, L, G}, torch::kBool);
    const int64_t k = int64_t(rho * double(L * G) + 0.5);
    for (int64_t i = 0; i < k; i++)
        u[0][idx[size_t(i)] / G][idx[size_t(i)] % G] = true;
    return u;
}

static const char usage[] =
    "usage: bench_generate [--prompts 1024,4096,16384] [--new 32,128] [--window 32] [--sink 4]\n"
    "                      [--max-recompute 16] [--decode-contexts 8192] [--device cpu|cuda]\n"
    "                      [--dtype f32|bf16] [--layers 4] [--hidden 128] [--heads 8]\n"
    "                      [--kv-heads 4] [--head-dim 32] [--intermediate 384] [--vocab 128]\n";

int main(int argc, char **argv) {
    std::vector<int64_t> prompts = {1024, 4096, 16384}, news = {32, 128},
                         contexts = {8192};
    int64_t window = 32, sink = 4, max_recompute = 16;
    std::string device = "cpu", dtype = "f32";
    // The organism's layer shapes by default; a real model's with the flags.
    TinySpec spec = organism_spec(128);
    const std::map<std::string, int64_t *> ints = {
        {"--window", &window},         {"--sink", &sink},
        {"--max-recompute", &max_recompute}, {"--layers", &spec.layers},
        {"--hidden", &spec.hidden},    {"--heads", &spec.heads},
        {"--kv-heads", &spec.kv_heads}, {"--head-dim", &spec.head_dim},
        {"--intermediate", &spec.intermediate}, {"--vocab", &spec.vocab}};
    for (int i = 1; i < argc; i++)
        if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
            std::fputs(usage, stdout);
            return 0;
        }
    if (argc % 2 == 0) {
        std::fputs(usage, stderr);
        return 1;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--prompts")
            prompts = list(argv[i + 1]);
        else if (a == "--new")
            news = list(argv[i + 1]);
        else if (a == "--decode-contexts")
            contexts = list(argv[i + 1]);
        else if (a == "--device")
            device = argv[i + 1];
        else if (a == "--dtype")
            dtype = argv[i + 1];
        else if (ints.count(a))
            *ints.at(a) = std::atoll(argv[i + 1]);
        else {
            std::fprintf(stderr, "unknown flag %s\n%s", argv[i], usage);
            return 1;
        }
    }
    if ((device != "cpu" && device != "cuda") || (dtype != "f32" && dtype != "bf16") ||
        spec.heads % std::max<int64_t>(1, spec.kv_heads) != 0) {
        std::fputs(usage, stderr);
        return 1;
    }
    torch::InferenceMode guard;
    const torch::Device dev(device == "cuda" ? torch::kCUDA : torch::kCPU);
    const torch::ScalarType dt = dtype == "bf16" ? torch::kBFloat16 : torch::kFloat32;
    const ModelConfig cfg = tiny_config(spec);
    TensorMap w = tiny_qwen3_tensors(spec);
    auto m = Model::from_weights(cfg, w, dev, dt);
    auto sync = [&] {
        if (dev.is_cuda())
            torch::cuda::synchronize();
    };
    const Window win{window, sink};
    const torch::Tensor units = random_units(spec.layers, spec.kv_heads, 0.75, 1).to(dev);
    std::printf("# bench_generate: random Qwen3 (%lld layers, %lld/%lld heads of %lld, hidden %lld, "
                "vocab %lld), %s %s, %d CPU threads; rho 0.75 unit mask, window %lld, sink %lld\n\n",
                (long long)spec.layers, (long long)spec.heads, (long long)spec.kv_heads,
                (long long)spec.head_dim, (long long)spec.hidden, (long long)spec.vocab,
                device.c_str(), dtype.c_str(), torch::get_num_threads(), (long long)window,
                (long long)sink);
    std::printf("| prompt | new tokens | recompute s | KV cache s | speed-up | same tokens |\n"
                "|---|---|---|---|---|---|\n");
    for (int64_t P : prompts)
        for (int64_t N : news) {
            const std::vector<int32_t> prompt = random_tokens(size_t(P), int32_t(spec.vocab), 11);
            // Recompute: the whole sequence per token, logits at its last row.
            std::vector<int32_t> seq = prompt, rec;
            const int64_t measured = std::min(N, max_recompute);
            double t0 = now(), last_step = 0.0;
            for (int64_t s = 0; s < measured; s++) {
                const double ts = now();
                torch::Tensor tok =
                    torch::tensor(std::vector<int64_t>(seq.begin(), seq.end()), torch::kInt64)
                        .view({1, int64_t(seq.size())})
                        .to(dev);
                torch::Tensor lg = m->forward(tok, units, win,
                                              torch::tensor({int64_t(seq.size()) - 1}, torch::kInt64).to(dev));
                const int32_t id = int32_t(lg.view({-1}).argmax().item<int64_t>());
                rec.push_back(id);
                seq.push_back(id);
                last_step = now() - ts;
            }
            double t_rec = now() - t0;
            const bool extrapolated = measured < N;
            if (extrapolated) // later steps are a token longer each: the last one's time
                t_rec += last_step * double(N - measured);
            // The cache: prefill, then N - 1 steps (the first token comes
            // from the prefill's logits).
            sync();
            t0 = now();
            KvCache kc(*m, units, win, 1, P + N);
            torch::Tensor lg = kc.prefill({prompt});
            std::vector<int32_t> got;
            for (int64_t s = 0; s < N; s++) {
                const int32_t id = int32_t(lg.view({-1}).argmax().item<int64_t>());
                got.push_back(id);
                if (s + 1 < N)
                    lg = kc.step({id});
            }
            const double t_kv = now() - t0;
            const bool same = std::equal(rec.begin(), rec.end(), got.begin());
            char rs[96];
            std::snprintf(rs, sizeof rs, extrapolated ? "%.2f (%lld of %lld steps measured)" : "%.2f",
                          t_rec, (long long)measured, (long long)N);
            std::printf("| %lld | %lld | %s | %.3f | %.1fx | %s |\n", (long long)P, (long long)N, rs,
                        t_kv, t_rec / t_kv, same ? "yes" : "NO");
            std::fflush(stdout);
        }
    std::printf("\n| context | rho | KV bytes held | full cache | held/full | decode tokens/s |\n"
                "|---|---|---|---|---|---|\n");
    for (int64_t C : contexts)
        for (double rho : {0.0, 0.5, 0.875}) {
            const torch::Tensor u = random_units(spec.layers, spec.kv_heads, rho, 2).to(dev);
            const int64_t steps = 64;
            KvCache kc(*m, u, win, 1, C);
            torch::Tensor lg = kc.prefill({random_tokens(size_t(C - steps), int32_t(spec.vocab), 5)});
            sync(); // the prefill's kernels are not the decode's time
            const double t0 = now();
            for (int64_t s = 0; s < steps; s++)
                lg = kc.step({int32_t(lg.view({-1}).argmax().item<int64_t>())});
            const double dt = now() - t0;
            std::printf("| %lld | %.3f | %lld | %lld | %.3f | %.0f |\n", (long long)C, rho,
                        (long long)kc.bytes(), (long long)kc.bytes_full(),
                        double(kc.bytes()) / double(kc.bytes_full()), double(steps) / dt);
            std::fflush(stdout);
        }
    return 0;
}
