// Cost of one forward against the SWA share (issue 13): a Qwen3-0.6B-shaped
// model (hidden 1024, 16 query / 8 KV heads, head_dim 128, MLP 3072; random
// weights, a few layers) at long contexts, banded SWA attention (the default)
// and the all-masked reference (BOSCH_TORCH_ATTENTION=masked) side by side in
// one process, with a cost model from the shapes and the machine's rates
// measured in the same run.
//
//   bench_attention [--layers N] [--contexts 4096,16384] [--window W] [--sink S]
//                   [--reps R] [--no-masked]
//
// FLOPs counted (multiply-add = 2): q/k/v/o projections and the MLP on every
// token; attention QK^T and PV over the keys each query may see (causal: t+1,
// sliding: min(t+1, window) plus the sink tokens before the window); the LM
// head on the last position only (the evaluator scores answer positions).
//
// The cost model: time = dense FLOPs / dense rate + full-unit attention FLOPs
// / causal rate + SWA-unit attention FLOPs / banded rate, the three rates
// measured at each context on their own (the layer's seven projection GEMMs
// in sequence; the attention core of one layer, all units full, then all
// SWA), not fitted to the forwards it predicts. What it leaves out (norms,
// RoPE, residual adds, the gathers of a mixed layer) shows as measured /
// model above 1.
#include "tiny_checkpoint.hpp"
#include "torch/attention.hpp"
#include "torch/model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace bosch_torch;
using namespace bosch_torch_test;

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Best time of `reps` runs of f (after one warm-up run).
template <class F> static double best_of(int reps, F f) {
    f();
    double best = 1e300;
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        f();
        best = std::min(best, now() - t0);
    }
    return best;
}

static const char *env_or(const char *name) {
    const char *v = std::getenv(name);
    return v ? v : "unset";
}

// Keys a query at position t sees: causal t + 1; sliding min(t + 1, window)
// plus the sink tokens before the window.
static double keys_seen(int64_t T, int64_t window, int64_t sink, bool sliding) {
    double s = 0;
    for (int64_t t = 0; t < T; t++) {
        if (!sliding) {
            s += double(t + 1);
            continue;
        }
        int64_t band = std::min<int64_t>(t + 1, window);
        int64_t lo = t + 1 - band; // first key of the band
        s += double(band + std::min<int64_t>(sink, lo));
    }
    return s;
}

int main(int argc, char **argv) {
    int64_t layers = 2, window = 256, sink = 4;
    int reps = 1;
    bool masked = true;
    std::vector<int64_t> contexts = {4096, 16384};
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
        if (a == "--layers" && v)
            layers = std::atoll(v), i++;
        else if (a == "--window" && v)
            window = std::atoll(v), i++;
        else if (a == "--sink" && v)
            sink = std::atoll(v), i++;
        else if (a == "--reps" && v)
            reps = std::atoi(v), i++;
        else if (a == "--no-masked")
            masked = false;
        else if (a == "--contexts" && v) {
            contexts.clear();
            for (const char *p = v; *p;) {
                contexts.push_back(std::atoll(p));
                const char *c = std::strchr(p, ',');
                if (!c)
                    break;
                p = c + 1;
            }
            i++;
        } else {
            std::fprintf(stderr,
                         "usage: bench_attention [--layers N] [--contexts T1,T2] [--window W] "
                         "[--sink S] [--reps R] [--no-masked]\n");
            return 2;
        }
    }
    torch::NoGradGuard no_grad;
    TinySpec s;
    s.layers = layers;
    s.hidden = 1024;
    s.heads = 16;
    s.kv_heads = 8;
    s.head_dim = 128;
    s.intermediate = 3072;
    s.vocab = 4096;
    s.seed = 1;
    const std::string dir = make_temp_dir("bench-attention");
    std::string e = write_tiny_qwen3(dir + "/m", s);
    if (!e.empty()) {
        std::fprintf(stderr, "bench_attention: %s\n", e.c_str());
        return 1;
    }
    ::unsetenv("BOSCH_TORCH_ATTENTION");
    auto banded = Model::load(dir + "/m", torch::kCPU, torch::kFloat32);
    ::setenv("BOSCH_TORCH_ATTENTION", "masked", 1);
    auto ref = masked ? Model::load(dir + "/m", torch::kCPU, torch::kFloat32) : nullptr;
    ::unsetenv("BOSCH_TORCH_ATTENTION");

    // The machine's sgemm rate now (f32, 2048^3, best of 5).
    torch::Tensor a = torch::randn({2048, 2048}), b = torch::randn({2048, 2048});
    const double peak = 2.0 * 2048.0 * 2048.0 * 2048.0 / best_of(5, [&] { (void)torch::mm(a, b); });

    const int64_t H = s.hidden, D = s.head_dim, nH = s.heads, G = s.kv_heads, r = nH / G;
    const int64_t I = s.intermediate, U = layers * G;
    std::printf("# One forward against the SWA share (bench_attention)\n\n");
    std::printf("Qwen3-0.6B-shaped layers (hidden %lld, %lld query / %lld KV heads, head_dim "
                "%lld, MLP %lld), %lld layers, random weights, f32, CPU, batch 1, %d "
                "intra-op threads (OMP_WAIT_POLICY=%s, OPENBLAS_THREAD_TIMEOUT=%s); window "
                "%lld, sink %lld; best of %d after a warm-up. sgemm (2048^3, f32) in the same "
                "run: %.1f GFLOP/s.\n\n",
                (long long)H, (long long)nH, (long long)G, (long long)D, (long long)I,
                (long long)layers, torch::get_num_threads(), env_or("OMP_WAIT_POLICY"),
                env_or("OPENBLAS_THREAD_TIMEOUT"), (long long)window, (long long)sink,
                reps, peak / 1e9);
    std::printf("| tokens | rho | SWA units | GFLOP | banded s | of rho 0 | banded GFLOP/s | "
                "of sgemm | model s | banded / model | masked s | masked / banded |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int64_t T : contexts) {
        torch::Tensor tok = torch::randint(0, s.vocab, {1, T}, torch::kInt64);
        torch::Tensor pos = torch::tensor({T - 1}, torch::kInt64);
        Window w;
        w.window = window;
        w.sink = sink;
        const double dense = 2.0 * double(T) * double(H) * double(2 * nH * D + 2 * G * D) +
                             2.0 * double(T) * 3.0 * double(H) * double(I);
        const double per_full = 4.0 * double(r) * double(D) * keys_seen(T, window, sink, false);
        const double per_swa = 4.0 * double(r) * double(D) * keys_seen(T, window, sink, true);
        // The model's three rates at this context, each measured alone.
        double rate_dense, rate_causal, rate_banded, rate_fused;
        {
            torch::Tensor x = torch::randn({T, H}) * 0.1;
            std::vector<torch::Tensor> proj;
            for (auto shape : {std::pair<int64_t, int64_t>{nH * D, H}, {G * D, H}, {G * D, H},
                               {H, nH * D}, {I, H}, {I, H}, {H, I}})
                proj.push_back(torch::randn({shape.first, shape.second}) * 0.03);
            torch::Tensor xa = torch::randn({T, nH * D}) * 0.1, xi = torch::randn({T, I}) * 0.1;
            const double t_dense = best_of(reps, [&] {
                for (size_t j = 0; j < proj.size(); j++)
                    (void)torch::linear(j == 3 ? xa : j == 6 ? xi : x, proj[j]);
            });
            rate_dense = dense / t_dense;
            torch::Tensor q = torch::randn({G, r, T, D}), kk = torch::randn({G, T, D}),
                          vv = torch::randn({G, T, D}), o = torch::empty({G, r, T, D});
            Workspace ws;
            const double scale = 1.0 / std::sqrt(double(D));
            const int64_t block = banded->block_bytes();
            rate_causal = double(G) * per_full /
                          best_of(reps, [&] { causal_pairs(q, kk, vv, o, scale, block, ws); });
            rate_banded = double(G) * per_swa / best_of(reps, [&] {
                              banded_pairs(q, kk, vv, o, scale, window, sink, block, ws);
                          });
            // The GPU's SWA kernel (banded_fused) on this CPU, for the
            // choice of the CPU's default (model_load.cpp).
            rate_fused = fused_available()
                             ? double(G) * per_swa / best_of(reps, [&] {
                                   banded_fused(q, kk, vv, o, window, sink, block);
                               })
                             : 0.0;
        }
        std::printf("| %lld | rates measured alone: dense GEMMs %.1f GFLOP/s (%.0f%% of sgemm), "
                    "causal attention %.1f (%.0f%%), banded attention %.1f (%.0f%%), fused "
                    "banded %.1f (%.0f%%) |||||||||||\n",
                    (long long)T, rate_dense / 1e9, 100.0 * rate_dense / peak,
                    rate_causal / 1e9, 100.0 * rate_causal / peak, rate_banded / 1e9,
                    100.0 * rate_banded / peak, rate_fused / 1e9, 100.0 * rate_fused / peak);
        double t_rho0 = 0;
        for (double rho : {0.0, 0.5, 0.875}) {
            const int64_t k = int64_t(rho * double(U) + 0.5);
            // SWA units spread over layers and groups (every (U/k)-th unit).
            torch::Tensor units = torch::zeros({1, layers, G}, torch::kBool);
            auto acc = units.accessor<bool, 3>();
            for (int64_t i = 0; i < k; i++) {
                int64_t u = (i * U) / k;
                acc[0][u / G][u % G] = true;
            }
            const double flops = double(layers) * dense + double(U - k) * per_full +
                                 double(k) * per_swa + 2.0 * double(H) * double(s.vocab);
            const double tb = best_of(reps, [&] { (void)banded->forward(tok, units, w, pos); });
            if (rho == 0.0)
                t_rho0 = tb;
            const double model_s = (double(layers) * dense + 2.0 * double(H) * double(s.vocab)) /
                                       rate_dense +
                                   double(U - k) * per_full / rate_causal +
                                   double(k) * per_swa / rate_banded;
            double tm = NAN;
            if (ref)
                tm = best_of(reps, [&] { (void)ref->forward(tok, units, w, pos); });
            std::printf("| %lld | %.3f | %lld/%lld | %.1f | %.3f | %.2f | %.1f | %.0f%% | %.3f | "
                        "%.2f | %.3f | %.2f |\n",
                        (long long)T, rho, (long long)k, (long long)U, flops / 1e9, tb,
                        tb / t_rho0, flops / tb / 1e9, 100.0 * flops / tb / peak, model_s,
                        tb / model_s, tm, tm / tb);
            std::fflush(stdout);
        }
    }
    std::printf("\nmodel s = dense GFLOP / dense rate + full-unit attention GFLOP / causal "
                "rate + SWA-unit attention GFLOP / banded rate, with the rates of that context "
                "measured alone (the rows above each table part); norms, RoPE and residuals "
                "are not in it.\n");
    remove_tree(dir);
    return 0;
}
