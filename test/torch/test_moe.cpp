// libbosch-torch on Qwen3-MoE (Qwen3MoeForCausalLM): the config fields and
// their refusals, both expert layouts (one identity, identical logits), the
// experts block against a per-token reference written here, dense layers
// kept by mlp_only_layers / decoder_sparse_step, the memory check, per-unit
// SWA masks, the evaluator and the static scorers on an MoE model.
// transformers' own Qwen3MoeForCausalLM is the reference in tools/hf_parity.py
// (suite parity). Plain main: exits non-zero on failure.
#include "tiny_checkpoint.hpp"
#include "torch/checkpoint.hpp"
#include "torch/model.hpp"

#include "bosch/torch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace bosch_torch;
using namespace bosch_torch_test;

#include "expect.hpp"
static std::string g_tmp;

#define EXPECT_ERR(expr, w1, w2)                                                                   \
    do {                                                                                           \
        g_checks++;                                                                                \
        std::string e_ = (expr), w1_ = (w1), w2_ = (w2);                                           \
        if (e_.empty() || e_.find(w1_) == std::string::npos || e_.find(w2_) == std::string::npos) {\
            g_failures++;                                                                          \
            std::fprintf(stderr, "%s:%d: %s gave '%s', expected '%s' ... '%s'\n", __FILE__,        \
                         __LINE__, #expr, e_.c_str(), w1_.c_str(), w2_.c_str());                   \
        }                                                                                          \
    } while (0)

// Three layers: 0 and 2 sparse, 1 dense (mlp_only_layers); GQA 3:1, hidden
// 48 (a multiple of the 6 heads: head_dim may be left out of config.json).
static TinySpec moe_spec() {
    TinySpec s = gqa_spec(11);
    s.hidden = 48;
    s.experts = 6;
    s.experts_per_tok = 2;
    s.moe_intermediate = 12;
    s.mlp_only_layers = {1};
    return s;
}

static std::string write_model(const std::string &name, const TinySpec &spec) {
    return bosch_torch_test::write_model(g_tmp, name, spec);
}

static double max_diff(const std::vector<float> &a, const std::vector<float> &b) {
    double m = 0;
    for (size_t i = 0; i < a.size(); i++)
        m = std::max(m, double(std::fabs(a[i] - b[i])));
    return m;
}

// All-position logits of one forward through the C API.
static std::vector<float> logits_of(bosch_torch_model *m, const std::vector<int32_t> &tok,
                                    size_t B, const uint8_t *masks, uint32_t window,
                                    uint32_t sink) {
    const size_t T = tok.size() / B;
    uint32_t L = 0, G = 0, r = 0, V = 0;
    bosch_torch_model_shape(m, &L, &G, &r, &V);
    std::vector<int32_t> pos(T);
    std::iota(pos.begin(), pos.end(), 0);
    std::vector<float> out(B * T * V);
    int st = bosch_torch_model_forward(m, tok.data(), B, T, masks, window, sink, pos.data(), T,
                                       out.data());
    std::snprintf(err, sizeof err, "%s", bosch_torch_model_last_error(m));
    EXPECT_ST(st, BOSCH_OK);
    return out;
}

// ---------------------------------------------------------------------------

// The experts block against a per-token reference in f64: softmax over the
// router's logits, the k most probable experts (renormalised or not), their
// SwiGLU outputs summed with those weights.
static void test_experts_per_token() {
    for (bool norm : {true, false}) {
        TinySpec s = moe_spec();
        s.norm_topk = norm;
        s.experts_per_tok = norm ? 2 : 3;
        ModelConfig cfg;
        std::string dir = write_model(norm ? "experts-norm" : "experts-raw", s);
        EXPECT(load_config(dir, cfg).empty());
        TensorMap w = tiny_qwen3_tensors(s);
        EXPECT(fuse_experts(cfg, w).empty());
        const std::string p = "model.layers.0.mlp.";
        LayerWeights L;
        L.router = w.at(p + "gate.weight");
        L.experts_gate_up = w.at(p + "experts.gate_up_proj");
        L.experts_down = w.at(p + "experts.down_proj");
        const int64_t N = 37, H = s.hidden, E = s.experts, I = s.moe_intermediate,
                      k = s.experts_per_tok;
        torch::manual_seed(3);
        torch::Tensor x = torch::randn({N, H});
        torch::Tensor got = feed_forward(cfg, L, x, int64_t(16) << 20);
        // Chunks of one row per expert: the same sums (up to the rounding
        // of one-row products).
        torch::Tensor small = feed_forward(cfg, L, x, 1);
        EXPECT((got - small).abs().max().item<double>() < 1e-5);
        torch::Tensor xd = x.to(torch::kFloat64), want = torch::zeros({N, H}, torch::kFloat64);
        torch::Tensor R = L.router.to(torch::kFloat64), GU = L.experts_gate_up.to(torch::kFloat64),
                      D = L.experts_down.to(torch::kFloat64);
        for (int64_t t = 0; t < N; t++) {
            torch::Tensor pr = torch::softmax(torch::mv(R, xd[t]), 0);
            std::vector<std::pair<double, int64_t>> order;
            for (int64_t e = 0; e < E; e++)
                order.push_back({pr[e].item<double>(), e});
            std::sort(order.begin(), order.end(), [](auto a, auto b) { return a.first > b.first; });
            double total = 0;
            for (int64_t j = 0; j < k; j++)
                total += order[size_t(j)].first;
            for (int64_t j = 0; j < k; j++) {
                const int64_t e = order[size_t(j)].second;
                torch::Tensor gu = torch::mv(GU[e], xd[t]);
                torch::Tensor g = gu.narrow(0, 0, I), u = gu.narrow(0, I, I);
                torch::Tensor y = torch::mv(D[e], g * torch::sigmoid(g) * u);
                want[t] += y * (norm ? order[size_t(j)].first / total : order[size_t(j)].first);
            }
        }
        const double d = (got.to(torch::kFloat64) - want).abs().max().item<double>();
        EXPECT(d < 1e-5);
        if (!(d < 1e-5))
            std::fprintf(stderr, "experts (norm_topk %d): max abs diff %.3g\n", int(norm), d);
    }
}

// config.json's MoE fields and their refusals.
static void test_config() {
    TinySpec s = moe_spec();
    const std::string dir = g_tmp + "/config";
    EXPECT(make_dirs(dir).empty());
    const std::string base = tiny_config_json(s);
    auto with = [&](const std::string &from, const std::string &to) {
        std::string t = base;
        size_t at = t.find(from);
        if (at == std::string::npos)
            throw std::runtime_error("test_config: no '" + from + "' in config");
        t.replace(at, from.size(), to);
        EXPECT(write_file(dir + "/config.json", t).empty());
        ModelConfig c;
        return load_config(dir, c);
    };
    auto cfg_of = [&](const std::string &from, const std::string &to) {
        with(from, to);
        ModelConfig c;
        std::string e = load_config(dir, c);
        EXPECT(e.empty());
        return c;
    };
    ModelConfig c = cfg_of("\"num_experts\": 6", "\"num_experts\": 6");
    EXPECT(c.moe && c.num_experts == 6 && c.num_experts_per_tok == 2 &&
           c.moe_intermediate_size == 12 && c.norm_topk_prob);
    EXPECT(c.layer_sparse == std::vector<uint8_t>({1, 0, 1}));
    EXPECT(c.any_dense_mlp());
    // transformers 5 writes num_local_experts; both agree or are refused.
    c = cfg_of("\"num_experts\": 6", "\"num_local_experts\": 6");
    EXPECT(c.num_experts == 6);
    EXPECT_ERR(with("\"num_experts\": 6", "\"num_experts\": 6, \"num_local_experts\": 8"),
               "num_experts (6)", "num_local_experts (8)");
    // decoder_sparse_step 2: layer 1 (the second) is the only sparse one,
    // and mlp_only_layers [1] makes it dense too.
    c = cfg_of("\"decoder_sparse_step\": 1", "\"decoder_sparse_step\": 2");
    EXPECT(c.layer_sparse == std::vector<uint8_t>({0, 0, 0}));
    c = cfg_of("\"mlp_only_layers\": [1]", "\"mlp_only_layers\": []");
    EXPECT(c.layer_sparse == std::vector<uint8_t>({1, 1, 1}));
    EXPECT(!c.any_dense_mlp());
    c = cfg_of("\"num_experts\": 6", "\"num_experts\": 0"); // transformers: every layer dense
    EXPECT(c.layer_sparse == std::vector<uint8_t>({0, 0, 0}));
    // Defaults of Qwen3MoeConfig for absent fields.
    c = cfg_of("\"norm_topk_prob\": true,", "");
    EXPECT(!c.norm_topk_prob);
    c = cfg_of("\"head_dim\": 8,", ""); // transformers: hidden_size / num_attention_heads
    EXPECT(c.head_dim == 8);
    {
        std::string u = base;
        u.erase(u.find("\"head_dim\": 8,"), 14);
        u.replace(u.find("\"num_attention_heads\": 6"), 24, "\"num_attention_heads\": 5");
        EXPECT(write_file(dir + "/config.json", u).empty());
        ModelConfig v;
        EXPECT_ERR(load_config(dir, v), "head_dim", "not a multiple of num_attention_heads 5");
    }
    EXPECT_ERR(with("\"decoder_sparse_step\": 1", "\"decoder_sparse_step\": 0"),
               "decoder_sparse_step", "positive");
    EXPECT_ERR(with("\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 7"),
               "num_experts_per_tok (7)", "num_experts (6)");
    EXPECT_ERR(with("\"mlp_only_layers\": [1]", "\"mlp_only_layers\": [3]"), "mlp_only_layers[0]",
               "0..2");
    EXPECT_ERR(with("\"mlp_only_layers\": [1]", "\"mlp_only_layers\": 1"), "mlp_only_layers",
               "array");
    EXPECT_ERR(with("\"norm_topk_prob\": true", "\"norm_topk_prob\": 1"), "norm_topk_prob",
               "boolean");
    EXPECT_ERR(with("\"moe_intermediate_size\": 12", "\"moe_intermediate_size\": -1"),
               "moe_intermediate_size", "non-negative");
    EXPECT_ERR(with("[\"Qwen3MoeForCausalLM\"]", "[\"Qwen3MoeForCausalLM\", \"Qwen3ForCausalLM\"]"),
               "both", "Qwen3MoeForCausalLM");
    EXPECT_ERR(with("[\"Qwen3MoeForCausalLM\"]", "[\"MixtralForCausalLM\"]"), "MixtralForCausalLM",
               "Qwen3MoeForCausalLM");
    // The sliding window is all layers or none, as transformers applies it.
    EXPECT_ERR(with("\"use_sliding_window\": false", "\"use_sliding_window\": true"),
               "use_sliding_window is true", "sliding_window is not set");
    std::string t = base;
    t.replace(t.find("\"sliding_window\": null"), 22, "\"sliding_window\": 4");
    t.replace(t.find("\"use_sliding_window\": false"), 27, "\"use_sliding_window\": true");
    EXPECT(write_file(dir + "/config.json", t).empty());
    EXPECT(load_config(dir, c).empty());
    EXPECT(c.sliding_window == 4 && c.layer_sliding == std::vector<uint8_t>({1, 1, 1}));
}

// The hub layout (a tensor per expert) and the fused one load alike: one
// identity, bit-identical logits; a dense checkpoint of the same seed is
// another model.
static void test_layouts() {
    TinySpec s = moe_spec();
    const std::string hub = write_model("hub", s);
    s.shards = 3; // sharded safetensors (model.safetensors.index.json), as published
    const std::string sharded = write_model("sharded", s);
    s.shards = 1;
    s.fused_experts = true;
    const std::string fused = write_model("fused", s);
    bosch_torch_model *a = nullptr, *b = nullptr, *sh = nullptr;
    EXPECT_ST(created(sh = bosch_torch_model_open(sharded.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    EXPECT_ST(created(a = bosch_torch_model_open(hub.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    EXPECT_ST(created(b = bosch_torch_model_open(fused.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    if (a && b) {
        uint32_t e = 0, k = 0, n = 0;
        EXPECT_ST(bosch_torch_model_experts(a, &e, &k, &n), BOSCH_OK);
        EXPECT(e == 6 && k == 2 && n == 2); // layer 1 dense
        EXPECT_ST(bosch_torch_model_experts(b, nullptr, nullptr, &n), BOSCH_OK);
        EXPECT(n == 2);
        EXPECT_ST(bosch_torch_model_experts(nullptr, &e, &k, &n), BOSCH_E_INVALID);
        EXPECT(std::strcmp(bosch_torch_model_identity(a), bosch_torch_model_identity(b)) == 0);
        EXPECT(sh && std::strcmp(bosch_torch_model_identity(a), bosch_torch_model_identity(sh)) == 0);
        std::vector<int32_t> tok = random_tokens(2 * 19, 50, 5);
        const uint8_t mixed[12] = {1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0};
        std::vector<float> x = logits_of(a, tok, 2, mixed, 4, 1),
                           y = logits_of(b, tok, 2, mixed, 4, 1);
        EXPECT(x == y);
        uint64_t bytes = 0;
        EXPECT(bosch_torch_model_memory(a, &bytes, nullptr) == BOSCH_OK);
        EXPECT(double(bytes) == 4 * implied_parameters([&] {
                   ModelConfig c;
                   load_config(hub, c);
                   return c;
               }()));
    }
    bosch_torch_model_free(a);
    bosch_torch_model_free(b);
    bosch_torch_model_free(sh);
    TinySpec dense = moe_spec();
    dense.experts = 0;
    bosch_torch_model *d = nullptr;
    const std::string dense_dir = write_model("dense", dense);
    EXPECT_ST(created(d = bosch_torch_model_open(dense_dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    if (d) {
        uint32_t e = 9, k = 9, n = 9;
        EXPECT_ST(bosch_torch_model_experts(d, &e, &k, &n), BOSCH_OK);
        EXPECT(e == 0 && k == 0 && n == 0);
    }
    bosch_torch_model_free(d);

    // implied_parameters counts exactly the tensors written.
    TinySpec t = moe_spec();
    TensorMap w = tiny_qwen3_tensors(t);
    double n = 0;
    for (const auto &kv : w)
        n += double(kv.second.numel());
    ModelConfig c;
    EXPECT(load_config(hub, c).empty());
    EXPECT(implied_parameters(c) == n);
    EXPECT(check_memory(c, 2 * n).empty());
    EXPECT_ERR(check_memory(c, 2 * n - 1), "num_experts 6", "moe_intermediate_size 12");
}

// Broken expert tensors: each named, nothing loaded.
static void test_weight_errors() {
    TinySpec s = moe_spec();
    ModelConfig c;
    EXPECT(load_config(write_model("errors", s), c).empty());
    const std::string p = "model.layers.2.mlp.experts.";
    {
        TensorMap w = tiny_qwen3_tensors(s);
        w.erase(p + "4.up_proj.weight");
        EXPECT_ERR(fuse_experts(c, w), "missing tensor " + p + "4.up_proj.weight", "[12, 48]");
    }
    {
        TensorMap w = tiny_qwen3_tensors(s);
        w[p + "6.up_proj.weight"] = torch::zeros({12, 48});
        EXPECT_ERR(fuse_experts(c, w), p + "6", "beyond num_experts 6");
    }
    {
        TensorMap w = tiny_qwen3_tensors(s);
        w[p + "3.down_proj.weight"] = torch::zeros({48, 13});
        EXPECT_ERR(fuse_experts(c, w), p + "3.down_proj.weight", "expected [48, 12]");
    }
    {
        TensorMap w = tiny_qwen3_tensors(s);
        w[p + "3.gate_proj.weight"] = w[p + "3.gate_proj.weight"].to(torch::kBFloat16);
        EXPECT_ERR(fuse_experts(c, w), p + "3.gate_proj.weight", "expert 0");
    }
    {
        TensorMap w = tiny_qwen3_tensors(s);
        w[p + "gate_up_proj"] = torch::zeros({6, 24, 48});
        EXPECT_ERR(fuse_experts(c, w), "both apart", "fused");
    }
    {
        TensorMap w = tiny_qwen3_tensors(s);
        w["model.layers.1.mlp.experts.0.up_proj.weight"] = torch::zeros({12, 48});
        EXPECT_ERR(fuse_experts(c, w), "model.layers.1.mlp.experts.0", "dense");
    }
    {
        TensorMap w = tiny_qwen3_tensors(s);
        EXPECT(fuse_experts(c, w).empty());
        w.erase("model.layers.0.mlp.gate.weight");
        EXPECT_ERR(check_weights(c, w), "missing tensor model.layers.0.mlp.gate.weight", "[6, 48]");
    }
    {
        TensorMap w = tiny_qwen3_tensors(s);
        EXPECT(fuse_experts(c, w).empty());
        w["model.layers.2.mlp.experts.down_proj"] = torch::zeros({6, 48, 11});
        EXPECT_ERR(check_weights(c, w), "model.layers.2.mlp.experts.down_proj", "[6, 48, 12]");
    }
    {
        // A config that makes layer 1 sparse against weights with a dense layer 1.
        TinySpec d = s;
        d.mlp_only_layers = {};
        ModelConfig all;
        EXPECT(load_config(write_model("all-sparse", d), all).empty());
        TensorMap w = tiny_qwen3_tensors(s);
        EXPECT(fuse_experts(all, w).empty());
        EXPECT_ERR(check_weights(all, w), "missing tensor model.layers.1.mlp.gate.weight",
                   "more");
    }
    // Through the C API: refused with the message, BOSCH_E_INVALID.
    TinySpec bad = s;
    bad.mlp_only_layers = {};
    const std::string dir = write_model("mismatch", bad);
    EXPECT(write_file(dir + "/config.json", tiny_config_json(s)).empty());
    EXPECT_ST(created(bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                             BOSCH_TORCH_DTYPE_F32)),
              BOSCH_E_INVALID);
    EXPECT_MSG("model.layers.1.mlp.experts.");
}

// Per-unit masks on an MoE model: a window covering the sequence is full
// attention bit for bit, a narrow one changes the logits, batching changes
// nothing (routing is per token), bf16 stays near f32.
static void test_masks_and_batching() {
    const std::string dir = write_model("masks", moe_spec());
    bosch_torch_model *m = nullptr, *h = nullptr;
    EXPECT_ST(created(m = bosch_torch_model_open_device(dir.c_str(), test_device(),
                                                        BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    EXPECT_ST(created(h = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_BF16)),
              BOSCH_OK);
    if (!m || !h) {
        bosch_torch_model_free(m);
        bosch_torch_model_free(h);
        return;
    }
    const size_t T = 23;
    std::vector<int32_t> tok = random_tokens(2 * T, 50, 9);
    const uint8_t all[12] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const uint8_t mixed[12] = {0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0};
    std::vector<float> full = logits_of(m, tok, 2, nullptr, 1, 0);
    std::vector<float> cover = logits_of(m, tok, 2, all, uint32_t(T), 0);
    EXPECT(full == cover);
    std::vector<float> narrow = logits_of(m, tok, 2, mixed, 3, 1);
    EXPECT(max_diff(full, narrow) > 1e-3);
    // Each sequence alone.
    const size_t V = 50;
    for (size_t b = 0; b < 2; b++) {
        std::vector<int32_t> one(tok.begin() + long(b * T), tok.begin() + long((b + 1) * T));
        std::vector<float> alone = logits_of(m, one, 1, mixed + 6 * b, 3, 1);
        std::vector<float> part(narrow.begin() + long(b * T * V),
                                narrow.begin() + long((b + 1) * T * V));
        EXPECT(max_diff(alone, part) < 1e-5);
    }
    std::vector<float> low = logits_of(h, tok, 2, mixed, 3, 1);
    double scale = 0;
    for (float v : narrow)
        scale = std::max(scale, double(std::fabs(v)));
    EXPECT(max_diff(low, narrow) < 0.05 * scale);
    bosch_torch_model_free(m);
    bosch_torch_model_free(h);
}

// The evaluator and the static scorers run on an MoE model; FISHER's
// gradients flow through the router's weights (non-zero, finite).
static void test_evaluator_and_scorers() {
    const std::string dir = write_model("eval", moe_spec());
    bosch_torch_model *m = nullptr;
    EXPECT_ST(created(m = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    bosch_torch_task *t = bosch_torch_task_create_niah(50, 40, 3, 1, 2, 2, 0.1, 0.5, 4);
    EXPECT(t != nullptr);
    if (!m || !t) {
        bosch_torch_model_free(m);
        bosch_torch_task_free(t);
        return;
    }
    bosch_torch_evaluator *ev = bosch_torch_evaluator_open(m, t, 4, 1, BOSCH_TORCH_METRIC_LOGPROB);
    EXPECT_ST(created(ev), BOSCH_OK);
    if (ev) {
        // Two candidates plus both anchors, the prefix cache on (layer 0 full
        // in the second: it starts after the cached layer).
        const uint8_t masks[4 * 6] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
                                      1, 0, 0, 1, 1, 0, 0, 0, 1, 1, 0, 1};
        double sc[4] = {0, 0, 0, 0}, again[4] = {0, 0, 0, 0};
        EXPECT_ST(bosch_torch_batch_eval(masks, 4, 6, sc, ev), BOSCH_OK);
        EXPECT_ST(bosch_torch_evaluator_set_prefix_cache(ev, 0), BOSCH_OK);
        EXPECT_ST(bosch_torch_batch_eval(masks, 4, 6, again, ev), BOSCH_OK);
        for (int i = 0; i < 4; i++) {
            EXPECT(std::isfinite(sc[i]));
            EXPECT(std::fabs(sc[i] - again[i]) < 1e-5);
        }
        EXPECT(sc[0] != sc[1]);
        bosch_torch_evaluator_free(ev);
    }
    for (int scorer : {BOSCH_TORCH_SCORER_LOCALITY, BOSCH_TORCH_SCORER_RETRIEVAL,
                       BOSCH_TORCH_SCORER_ECHO_INDUCTION, BOSCH_TORCH_SCORER_FISHER,
                       BOSCH_TORCH_SCORER_DUO_ON_THE_FLY}) {
        double units[6];
        std::fill(units, units + 6, NAN);
        int st = model_st(bosch_torch_model_scores(m, t, scorer, 4, 1, nullptr, units), m);
        EXPECT_ST(st, BOSCH_OK);
        bool finite = true, nonzero = false;
        for (double u : units) {
            finite = finite && std::isfinite(u);
            nonzero = nonzero || u != 0;
        }
        EXPECT(finite);
        EXPECT(nonzero);
    }
    bosch_torch_task_free(t);
    bosch_torch_model_free(m);
}

int main() {
    auto t0 = std::chrono::steady_clock::now();
    g_tmp = make_temp_dir("moe");
    try {
        test_config();
        test_experts_per_token();
        test_layouts();
        test_weight_errors();
        test_masks_and_batching();
        test_evaluator_and_scorers();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "exception: %s\n", e.what());
        g_failures++;
    }
    remove_tree(g_tmp);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("test_moe: %d checks, %d failures, %.1f s\n", g_checks, g_failures, s);
    return g_failures == 0 ? 0 : 1;
}
