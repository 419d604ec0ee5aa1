// The hybrid KV cache (lib/torch/kv_cache.cpp, issue 38): at every decode
// step its logits are those of the masked forward over the whole sequence
// (Model::forward with the same units and window; f32: max abs diff <=
// 1e-5) and its greedy tokens are the same, for all-full, all-sliding and
// mixed unit masks, with and without sink tokens, windows longer than the
// prompt, batches of prompts of different lengths with their own masks, and
// a hybrid config (layers the config makes sliding); the bytes it holds are
// what the mask says; a full cache refuses another token.
#include "expect.hpp"
#include "tiny_checkpoint.hpp"
#include "torch/kv_cache.hpp"
#include "torch/failure.hpp"

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace bosch_torch;
using namespace bosch_torch_test;

namespace {

ModelConfig config_of(const TinySpec &spec) {
    return tiny_config(spec);
}

// bool [B, L, G] from '0'/'1' strings, one per sequence (L * G each).
torch::Tensor units_of(const std::vector<std::string> &rows, int64_t L, int64_t G) {
    torch::Tensor u = torch::zeros({int64_t(rows.size()), L, G}, torch::kBool);
    for (size_t b = 0; b < rows.size(); b++)
        for (int64_t i = 0; i < L * G; i++)
            u[int64_t(b)][i / G][i % G] = rows[b][size_t(i)] == '1';
    return u;
}

struct Outcome {
    double worst = 0.0;
    bool same_tokens = true;
};

// Prefill + `steps` greedy steps; each step's logits against the forward of
// the whole sequence so far (each sequence alone, its own row of units).
Outcome run(Model &m, const std::vector<std::vector<int32_t>> &prompts, const torch::Tensor &units,
            const Window &w, int64_t steps, KvCache **keep = nullptr) {
    const int64_t B = int64_t(prompts.size());
    int64_t cap = 0;
    for (const auto &p : prompts)
        cap = std::max<int64_t>(cap, int64_t(p.size()) + steps);
    auto *kc = new KvCache(m, units, w, B, cap);
    std::vector<std::vector<int32_t>> seqs = prompts;
    torch::Tensor logits = kc->prefill(prompts);
    Outcome out;
    for (int64_t s = 0; s <= steps; s++) {
        std::vector<int32_t> next;
        for (int64_t b = 0; b < B; b++) {
            const std::vector<int32_t> &q = seqs[size_t(b)];
            const int64_t T = int64_t(q.size());
            torch::Tensor tok =
                torch::tensor(std::vector<int64_t>(q.begin(), q.end()), torch::kInt64).view({1, T});
            torch::Tensor u = units.defined() ? units.narrow(0, b, 1) : torch::Tensor();
            torch::Tensor ref = m.forward(tok, u, w, torch::tensor({T - 1}, torch::kInt64))
                                    .view({-1});
            torch::Tensor got = logits[b];
            const double d = (got - ref).abs().max().item<double>();
            out.worst = std::max(out.worst, std::isnan(d) ? INFINITY : d); // NaN: a failure
            const int64_t a = got.argmax().item<int64_t>(), r = ref.argmax().item<int64_t>();
            out.same_tokens = out.same_tokens && a == r;
            next.push_back(int32_t(r));
        }
        if (s == steps)
            break;
        for (int64_t b = 0; b < B; b++)
            seqs[size_t(b)].push_back(next[size_t(b)]);
        logits = kc->step(next);
    }
    if (keep)
        *keep = kc;
    else
        delete kc;
    return out;
}

void expect_parity(const char *name, const Outcome &o) {
    std::printf("kv cache %-34s max |cache - masked forward| %.3g, greedy tokens %s\n", name,
                o.worst, o.same_tokens ? "identical" : "DIFFER");
    EXPECT(o.worst <= 1e-5);
    EXPECT(o.same_tokens);
}

// bosch_torch_generate against a greedy loop over bosch_torch_model_forward
// (the whole sequence each step), as is bosch_torch_generate_reference: the
// same tokens; the bytes it reports; stop tokens; errors.
void test_c_api() {
    const std::string tmp = make_temp_dir("kvcache");
    const std::string dir = write_model(tmp, "gen", gqa_spec(9));
    bosch_torch_model *m = bosch_torch_model_open_device(dir.c_str(), "cpu", BOSCH_TORCH_DTYPE_F32);
    EXPECT(m != nullptr);
    if (!m) {
        remove_tree(tmp);
        return;
    }
    const uint8_t mask[6] = {1, 0, 0, 1, 1, 1};
    const std::vector<int32_t> prompt = random_tokens(9, 50, 21);
    const uint32_t n_new = 12;
    std::vector<int32_t> seq = prompt, want;
    for (uint32_t s = 0; s < n_new; s++) {
        std::vector<float> lg(50);
        const int32_t last = int32_t(seq.size()) - 1;
        EXPECT(bosch_torch_model_forward(m, seq.data(), 1, seq.size(), mask, 3, 1, &last, 1,
                                         lg.data()) == BOSCH_OK);
        const int32_t id = int32_t(std::max_element(lg.begin(), lg.end()) - lg.begin());
        want.push_back(id);
        seq.push_back(id);
    }
    std::vector<int32_t> got(n_new, -1);
    size_t n = 0;
    struct bosch_torch_generation info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    EXPECT(bosch_torch_generate(m, mask, 6, 3, 1, prompt.data(), prompt.size(), n_new, nullptr, 0,
                                got.data(), &n, &info) == BOSCH_OK);
    EXPECT(n == n_new && got == want);
    // 2 of 6 units full at capacity 9 + 12, 4 sliding at sink 1 + window 3;
    // head_dim 8, f32, keys and values.
    EXPECT(info.kv_bytes == uint64_t(2 * (2 * 21 + 4 * 4) * 8 * 4));
    EXPECT(info.kv_bytes_full == uint64_t(2 * 6 * 21 * 8 * 4));
    EXPECT(info.new_tokens == n_new && info.prefill_seconds >= 0 && info.decode_seconds >= 0);
    // bosch_torch_generate_reference is that loop.
    std::vector<int32_t> ref(n_new, -1);
    size_t nr = 0;
    EXPECT(bosch_torch_generate_reference(m, mask, 6, 3, 1, prompt.data(), prompt.size(), n_new,
                                          nullptr, 0, ref.data(), &nr) == BOSCH_OK);
    EXPECT(nr == n_new && ref == want);
    // A stop token ends it (kept), in both.
    EXPECT(bosch_torch_generate(m, mask, 6, 3, 1, prompt.data(), prompt.size(), n_new, &want[3], 1,
                                got.data(), &n, nullptr) == BOSCH_OK);
    EXPECT(n <= 4 && got[n - 1] == want[3]);
    EXPECT(bosch_torch_generate_reference(m, mask, 6, 3, 1, prompt.data(), prompt.size(), n_new,
                                          &want[3], 1, ref.data(), &nr) == BOSCH_OK);
    EXPECT(nr == n && std::equal(ref.begin(), ref.begin() + long(nr), got.begin()));
    EXPECT(bosch_torch_generate_reference(m, mask, 5, 3, 1, prompt.data(), prompt.size(), 4,
                                          nullptr, 0, ref.data(), &nr) == BOSCH_E_INVALID);
    EXPECT(std::strstr(bosch_torch_model_last_error(m), "units") != nullptr);
    EXPECT(bosch_torch_generate_reference(m, mask, 6, 0, 1, prompt.data(), prompt.size(), 4,
                                          nullptr, 0, ref.data(), &nr) == BOSCH_E_INVALID);
    EXPECT(bosch_torch_generate_reference(m, mask, 6, 3, 1, prompt.data(), 0, 4, nullptr, 0,
                                          ref.data(), &nr) == BOSCH_E_INVALID);
    // Errors: units, vocabulary, window 0, struct_size.
    EXPECT(bosch_torch_generate(m, mask, 5, 3, 1, prompt.data(), prompt.size(), 4, nullptr, 0,
                                got.data(), &n, nullptr) == BOSCH_E_INVALID);
    EXPECT(std::strstr(bosch_torch_model_last_error(m), "units") != nullptr);
    const int32_t bad[2] = {1, 50};
    EXPECT(bosch_torch_generate(m, nullptr, 0, 3, 1, bad, 2, 4, nullptr, 0, got.data(), &n,
                                nullptr) == BOSCH_E_INVALID);
    EXPECT(bosch_torch_generate(m, mask, 6, 0, 1, prompt.data(), prompt.size(), 4, nullptr, 0,
                                got.data(), &n, nullptr) == BOSCH_E_INVALID);
    info.struct_size = 8;
    EXPECT(bosch_torch_generate(m, mask, 6, 3, 1, prompt.data(), prompt.size(), 4, nullptr, 0,
                                got.data(), &n, &info) == BOSCH_E_INVALID);
    // A sink + window that cover the capacity (9 + 4 tokens) hide nothing:
    // the units are held as full ones (never more bytes than full), and the
    // tokens are those of full attention.
    std::vector<int32_t> full_tokens(4), wide(4);
    size_t nf = 0, nw = 0;
    info.struct_size = sizeof info;
    EXPECT(bosch_torch_generate(m, nullptr, 0, 3, 1, prompt.data(), prompt.size(), 4, nullptr, 0,
                                full_tokens.data(), &nf, nullptr) == BOSCH_OK);
    EXPECT(bosch_torch_generate(m, mask, 6, 12, 1, prompt.data(), prompt.size(), 4, nullptr, 0,
                                wide.data(), &nw, &info) == BOSCH_OK);
    EXPECT(nw == nf && wide == full_tokens);
    EXPECT(info.kv_bytes == info.kv_bytes_full && info.kv_bytes_full == uint64_t(2 * 6 * 13 * 8 * 4));
    // One token short of covering it: the sliding units shrink to sink + window.
    EXPECT(bosch_torch_generate(m, mask, 6, 11, 1, prompt.data(), prompt.size(), 4, nullptr, 0,
                                wide.data(), &nw, &info) == BOSCH_OK);
    EXPECT(info.kv_bytes == uint64_t(2 * (2 * 13 + 4 * 12) * 8 * 4));
    bosch_torch_model_free(m);
    remove_tree(tmp);
}

} // namespace

int main() {
    auto t0 = std::chrono::steady_clock::now();
    try {
        TinySpec spec = gqa_spec(7); // 3 layers x 2 KV groups, vocabulary 50
        ModelConfig cfg = config_of(spec);
        TensorMap w0 = tiny_qwen3_tensors(spec);
        auto m = Model::from_weights(cfg, w0, torch::kCPU, torch::kFloat32);
        const int64_t L = cfg.num_hidden_layers, G = cfg.num_key_value_heads;
        const std::vector<int32_t> p10 = random_tokens(10, 50, 3);
        // One sequence: all full, all sliding, mixed; sinks; a window longer
        // than the prompt (it slides only once the sequence outgrows it).
        expect_parity("all full", run(*m, {p10}, units_of({"000000"}, L, G), Window{4, 0}, 12));
        expect_parity("all full (no units)", run(*m, {p10}, torch::Tensor(), Window{4, 0}, 6));
        expect_parity("all sliding, window 4", run(*m, {p10}, units_of({"111111"}, L, G),
                                                   Window{4, 0}, 12));
        expect_parity("all sliding, window 4 sink 2", run(*m, {p10}, units_of({"111111"}, L, G),
                                                          Window{4, 2}, 12));
        expect_parity("mixed, window 3 sink 1", run(*m, {p10}, units_of({"101001"}, L, G),
                                                    Window{3, 1}, 12));
        expect_parity("mixed, window 1 sink 0", run(*m, {p10}, units_of({"011010"}, L, G),
                                                    Window{1, 0}, 8));
        expect_parity("window 16 > prompt 10", run(*m, {p10}, units_of({"110011"}, L, G),
                                                   Window{16, 2}, 14));
        // A batch: prompts of 3, 10 and 7 tokens, each its own mask.
        expect_parity("batch of 3, own lengths and masks",
                      run(*m, {random_tokens(3, 50, 4), p10, random_tokens(7, 50, 5)},
                          units_of({"000000", "111111", "100110"}, L, G), Window{4, 1}, 10));
        // A hybrid config: layer 1 slides over 5 tokens whatever the units.
        ModelConfig hy = cfg;
        hy.layer_sliding = {0, 1, 0};
        hy.sliding_window = 5;
        TensorMap w1 = tiny_qwen3_tensors(spec);
        auto mh = Model::from_weights(hy, w1, torch::kCPU, torch::kFloat32);
        expect_parity("hybrid config + unit mask", run(*mh, {p10}, units_of({"100001"}, L, G),
                                                        Window{3, 1}, 12));
        // Memory: full units hold the capacity, sliding ones sink + window.
        KvCache *kc = nullptr;
        run(*m, {p10}, units_of({"101001"}, L, G), Window{3, 1}, 4, &kc);
        const int64_t cap = 14, D = cfg.head_dim, n_swa = 3, n_full = L * G - n_swa;
        EXPECT(kc->bytes() == 2 * (n_full * cap + n_swa * (1 + 3)) * D * 4);
        EXPECT(kc->bytes_full() == 2 * L * G * cap * D * 4);
        std::printf("kv cache bytes: %lld of %lld for a full cache (3 of 6 units sliding, "
                    "window 3 + sink 1, capacity 14)\n",
                    (long long)kc->bytes(), (long long)kc->bytes_full());
        // At capacity: another token is refused, nothing changes.
        bool refused = false;
        try {
            kc->step({1});
        } catch (const Failure &) {
            refused = true;
        }
        EXPECT(refused);
        EXPECT(kc->lengths()[0] == cap);
        delete kc;
        bool bad = false;
        try {
            KvCache wrong(*m, units_of({"1010"}, 2, 2), Window{3, 1}, 1, 8);
        } catch (const Failure &) {
            bad = true;
        }
        EXPECT(bad);
        test_c_api();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "exception: %s\n", e.what());
        g_failures++;
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("test_kv_cache: %d checks, %d failures, %.1f s\n", g_checks, g_failures, s);
    return g_failures ? 1 : 0;
}
