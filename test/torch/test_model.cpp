// libbosch-torch model side: the Qwen3 forward with per-unit masks, the
// evaluator (batching, prefix cache, metrics), tasks and the C API's errors.
// Plain main: exits non-zero on failure. Tiny random checkpoints only (CPU).
#include "tiny_checkpoint.hpp"
#include "torch/evaluator.hpp"
#include "torch/model.hpp"
#include "torch/tasks.hpp"

#include "bosch/optimizer.h"
#include "bosch/torch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <json-c/json.h>
#include <random>
#include <string>
#include <vector>

using namespace bosch_torch;
using namespace bosch_torch_test;

#include "expect.hpp"
static std::string g_tmp;

static double max_diff(const float *a, const float *b, size_t n) {
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = std::max(m, double(std::fabs(a[i] - b[i])));
    return m;
}

static double max_diff(const torch::Tensor &a, const torch::Tensor &b) {
    return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

// Shape used by most tests: GQA with 3 query heads per KV head.
static TinySpec gqa_spec() { return bosch_torch_test::gqa_spec(7); }

static std::string write_model(const std::string &name, const TinySpec &spec) {
    return bosch_torch_test::write_model(g_tmp, name, spec);
}

static torch::Tensor to_i64(const std::vector<int32_t> &v, int64_t b, int64_t t) {
    return torch::tensor(std::vector<int64_t>(v.begin(), v.end()), torch::kInt64).view({b, t});
}

// bosch_torch_model_forward, with the model's last error copied into err.
static int forward(bosch_torch_model *m, const int32_t *tokens, size_t batch, size_t len,
                   const uint8_t *masks, uint32_t window, uint32_t sink, const int32_t *positions,
                   size_t npos, float *logits) {
    return model_st(bosch_torch_model_forward(m, tokens, batch, len, masks, window, sink,
                                              positions, npos, logits),
                    m);
}

// Sets (value) or unsets (nullptr) an environment variable for a scope and
// restores what it was, for the settings the model and evaluator read when
// they open.
struct ScopedEnv {
    const char *name;
    bool had;
    std::string saved;
    ScopedEnv(const char *n, const char *value) : name(n), had(std::getenv(n) != nullptr) {
        if (had)
            saved = std::getenv(n);
        if (value)
            ::setenv(name, value, 1);
        else
            ::unsetenv(name);
    }
    ~ScopedEnv() {
        if (had)
            ::setenv(name, saved.c_str(), 1);
        else
            ::unsetenv(name);
    }
};

// ---------------------------------------------------------------------------

static void test_load_and_errors(const std::string &dir) {
    bosch_torch_model *m = nullptr;
    EXPECT_ST(created(m = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_AUTO)),
              BOSCH_OK);
    if (!m)
        return;
    uint32_t L = 0, G = 0, r = 0, V = 0;
    EXPECT(bosch_torch_model_shape(m, &L, &G, &r, &V) == BOSCH_OK);
    EXPECT(L == 3 && G == 2 && r == 3 && V == 50);
    bosch_problem *p = bosch_torch_model_problem(m);
    EXPECT(p && bosch_problem_units(p) == 6 && bosch_problem_heads_per_group(p) == 3);
    bosch_problem_free(p);
    EXPECT(m->model->dtype() == torch::kFloat32);

    // Forward argument checks.
    std::vector<int32_t> tok = random_tokens(8, 50, 1);
    int32_t pos[2] = {0, 7};
    std::vector<float> lg(2 * 50);
    EXPECT_ST(forward(m, tok.data(), 1, 8, nullptr, 4, 0, pos, 2, lg.data()), BOSCH_OK);
    EXPECT(std::strlen(err) == 0);
    tok[3] = 50;
    EXPECT_ST(forward(m, tok.data(), 1, 8, nullptr, 4, 0, pos, 2, lg.data()), BOSCH_E_INVALID);
    EXPECT_MSG("vocabulary");
    tok[3] = -1;
    EXPECT_ST(forward(m, tok.data(), 1, 8, nullptr, 4, 0, pos, 2, lg.data()), BOSCH_E_INVALID);
    tok[3] = 1;
    pos[1] = 8;
    EXPECT_ST(forward(m, tok.data(), 1, 8, nullptr, 4, 0, pos, 2, lg.data()), BOSCH_E_INVALID);
    EXPECT_MSG("position");
    pos[1] = 7;
    EXPECT_ST(forward(m, tok.data(), 1, 8, nullptr, 0, 0, pos, 2, lg.data()), BOSCH_E_INVALID);
    EXPECT_MSG("window");
    // A NULL model: BOSCH_E_INVALID, no message anywhere ("" for NULL).
    EXPECT_ST(forward(nullptr, tok.data(), 1, 8, nullptr, 4, 0, pos, 2, lg.data()),
              BOSCH_E_INVALID);
    EXPECT(std::strcmp(bosch_torch_model_last_error(nullptr), "") == 0);
    // A success clears the model's last error.
    EXPECT_ST(forward(m, tok.data(), 1, 8, nullptr, 0, 0, pos, 2, lg.data()), BOSCH_E_INVALID);
    EXPECT(std::strlen(bosch_torch_model_last_error(m)) > 0);
    EXPECT_ST(forward(m, tok.data(), 1, 8, nullptr, 4, 0, pos, 2, lg.data()), BOSCH_OK);
    EXPECT(std::strcmp(bosch_torch_model_last_error(m), "") == 0);
    bosch_torch_model_free(m);

    // Devices and dtypes.
    bosch_torch_model *m2 = nullptr;
    if (!bosch_torch_cuda_available()) {
        EXPECT_ST(created(m2 = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CUDA,
                                                      BOSCH_TORCH_DTYPE_AUTO)),
                  BOSCH_E_INVALID);
        EXPECT_MSG("CUDA");
        EXPECT(m2 == nullptr);
    }
    EXPECT_ST(created(m2 = bosch_torch_model_open(dir.c_str(), 7, BOSCH_TORCH_DTYPE_AUTO)),
              BOSCH_E_INVALID);
    EXPECT_MSG("unknown device 7");
    EXPECT_ST(created(m2 = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU, 9)),
              BOSCH_E_INVALID);
    EXPECT_MSG("unknown dtype 9");
    EXPECT_ST(created(m2 = bosch_torch_model_open(nullptr, BOSCH_TORCH_DEVICE_CPU, 0)),
              BOSCH_E_INVALID);
    EXPECT_MSG("bosch_torch_model_open: dir must not be NULL");
    // Missing files: BOSCH_E_IO.
    EXPECT_ST(created(m2 = bosch_torch_model_open((g_tmp + "/nope").c_str(),
                                                  BOSCH_TORCH_DEVICE_CPU, 0)),
              BOSCH_E_IO);
    EXPECT_MSG("config.json");
    // Another architecture: refused by name, BOSCH_E_INVALID.
    std::string bad = g_tmp + "/llama";
    EXPECT(make_dirs(bad).empty());
    std::string cfg = tiny_config_json(gqa_spec());
    size_t at = cfg.find("Qwen3ForCausalLM");
    EXPECT(at != std::string::npos);
    cfg.replace(at, std::strlen("Qwen3ForCausalLM"), "GPT2LMHeadModel");
    write_file(bad + "/config.json", cfg);
    EXPECT(copy_file(dir + "/model.safetensors", bad + "/model.safetensors").empty());
    EXPECT_ST(created(m2 = bosch_torch_model_open(bad.c_str(), BOSCH_TORCH_DEVICE_CPU, 0)),
              BOSCH_E_INVALID);
    EXPECT_MSG("GPT2LMHeadModel");
    // A supported family whose layer reads less than the weights hold (Qwen3's
    // q_norm under a Llama config): refused naming the tensor, not dropped.
    cfg.replace(cfg.find("GPT2LMHeadModel"), std::strlen("GPT2LMHeadModel"), "LlamaForCausalLM");
    write_file(bad + "/config.json", cfg);
    EXPECT_ST(created(m2 = bosch_torch_model_open(bad.c_str(), BOSCH_TORCH_DEVICE_CPU, 0)),
              BOSCH_E_INVALID);
    EXPECT_MSG("self_attn.k_norm.weight is not read by LlamaForCausalLM");
    // Weights missing.
    std::string nowt = g_tmp + "/noweights";
    EXPECT(make_dirs(nowt).empty());
    write_file(nowt + "/config.json", tiny_config_json(gqa_spec()));
    EXPECT_ST(created(m2 = bosch_torch_model_open(nowt.c_str(), BOSCH_TORCH_DEVICE_CPU, 0)),
              BOSCH_E_IO);

    // bf16 on CPU: runs, finite, close to f32.
    bosch_torch_model *mf = nullptr, *mb = nullptr;
    EXPECT_ST(created(mf = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                  BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    EXPECT_ST(created(mb = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                  BOSCH_TORCH_DTYPE_BF16)),
              BOSCH_OK);
    if (mf && mb) {
        std::vector<int32_t> t2 = random_tokens(16, 50, 2);
        int32_t p2[3] = {0, 9, 15};
        std::vector<uint8_t> masks = {0, 1, 1, 0, 1, 1};
        std::vector<float> a(3 * 50), b(3 * 50);
        EXPECT_ST(forward(mf, t2.data(), 1, 16, masks.data(), 3, 1, p2, 3, a.data()), BOSCH_OK);
        EXPECT_ST(forward(mb, t2.data(), 1, 16, masks.data(), 3, 1, p2, 3, b.data()), BOSCH_OK);
        bool finite = true;
        for (float x : b)
            finite = finite && std::isfinite(x);
        EXPECT(finite);
        double d = max_diff(a.data(), b.data(), a.size());
        std::printf("bf16 vs f32 logits: max abs diff %.3g\n", d);
        EXPECT(d < 0.5);
    }
    bosch_torch_model_free(mf);
    bosch_torch_model_free(mb);
    // f16: refused at load where the device lacks f16 kernels (CPU, libtorch 1.x).
    bosch_torch_model *mh = nullptr;
    int st = created(mh = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_F16));
    EXPECT(st == BOSCH_OK || st == BOSCH_E_INVALID);
    if (st == BOSCH_E_INVALID) {
        EXPECT_MSG("f16");
    } else if (mh) {
        std::vector<int32_t> t3 = random_tokens(8, 50, 3);
        int32_t p3 = 7;
        std::vector<float> c3(50);
        EXPECT_ST(forward(mh, t3.data(), 1, 8, nullptr, 3, 0, &p3, 1, c3.data()), BOSCH_OK);
    }
    bosch_torch_model_free(mh);
}

// A window at least as long as the sequence is full attention, bit for bit,
// on every libtorch and device: it is routed to the full kernel (on PyTorch
// 2 a fused one, which rounds differently from the banded tiles).
static void test_window_covering_is_full(bosch_torch_model *m) {
    const size_t B = 2, T = 12, V = 50;
    std::vector<int32_t> tok = random_tokens(B * T, 50, 3);
    std::vector<int32_t> pos(T);
    for (size_t i = 0; i < T; i++)
        pos[i] = int32_t(i);
    std::vector<uint8_t> all_swa(B * 6, 1);
    std::vector<float> full(B * T * V), a(B * T * V), b(B * T * V);
    EXPECT_ST(forward(m, tok.data(), B, T, nullptr, 1, 0, pos.data(), T, full.data()), BOSCH_OK);
    EXPECT_ST(forward(m, tok.data(), B, T, all_swa.data(), uint32_t(T), 0, pos.data(), T, a.data()),
              BOSCH_OK);
    EXPECT_ST(forward(m, tok.data(), B, T, all_swa.data(), 1000, 5, pos.data(), T, b.data()),
              BOSCH_OK);
    EXPECT(std::memcmp(full.data(), a.data(), full.size() * sizeof(float)) == 0);
    EXPECT(std::memcmp(full.data(), b.data(), full.size() * sizeof(float)) == 0);
    // Sinks covering the whole sequence: also full attention.
    EXPECT_ST(forward(m, tok.data(), B, T, all_swa.data(), 1, uint32_t(T), pos.data(), T, b.data()),
              BOSCH_OK);
    EXPECT(std::memcmp(full.data(), b.data(), full.size() * sizeof(float)) == 0);
    // A real window changes the logits (after position `window`).
    EXPECT_ST(forward(m, tok.data(), B, T, all_swa.data(), 2, 0, pos.data(), T, b.data()),
              BOSCH_OK);
    EXPECT(max_diff(full.data(), b.data(), full.size()) > 1e-3);
    // ... but never at positions 0 and 1 (they see everything within the
    // window), up to rounding: the banded and the full kernels differ there.
    EXPECT(max_diff(full.data(), b.data(), 2 * V) < 1e-5);
    // Window + sink covering the sequence (window 8 + sink 4 >= 12) is full.
    EXPECT_ST(forward(m, tok.data(), B, T, all_swa.data(), 8, 4, pos.data(), T, b.data()),
              BOSCH_OK);
    EXPECT(std::memcmp(full.data(), b.data(), full.size() * sizeof(float)) == 0);
}

// Per-head attention outputs of every layer, via the model's debug hook.
static std::vector<torch::Tensor> head_outputs(Model &m, const torch::Tensor &tokens,
                                               const torch::Tensor &units, Window w) {
    std::vector<torch::Tensor> out(size_t(m.layers()));
    m.hook = [&](int64_t l, const torch::Tensor &h) { out[size_t(l)] = h.clone(); };
    torch::InferenceMode guard;
    m.run_layers(m.embed(tokens), units, w, 0, m.layers());
    m.hook = nullptr;
    return out;
}

// Changing one unit's mask changes, at that layer, only the heads of its KV
// group; layers below are untouched. Within one batch, other elements are
// unaffected.
static void test_unit_locality(const std::string &dir) {
    auto model = Model::load(dir, torch::kCPU, torch::kFloat32);
    const int64_t T = 14, L = 3, G = 2, r = 3;
    torch::Tensor tok = to_i64(random_tokens(size_t(2 * T), 50, 4), 2, T);
    Window w;
    w.window = 3;
    w.sink = 1;
    for (int64_t ul = 0; ul < L; ul++)
        for (int64_t ug = 0; ug < G; ug++) {
            // Batch element 0: all full; element 1: only unit (ul, ug) SWA.
            torch::Tensor units = torch::zeros({2, L, G}, torch::kBool);
            units[1][ul][ug] = true;
            auto full = head_outputs(*model, tok, torch::zeros({2, L, G}, torch::kBool), w);
            auto one = head_outputs(*model, tok, units, w);
            for (int64_t l = 0; l < L; l++) {
                // Element 0 never changes.
                EXPECT(torch::equal(full[size_t(l)][0], one[size_t(l)][0]));
                for (int64_t h = 0; h < G * r; h++) {
                    torch::Tensor a = full[size_t(l)][1][h], b = one[size_t(l)][1][h];
                    if (l < ul)
                        EXPECT(torch::equal(a, b));
                    else if (l == ul) {
                        bool in_group = h / r == ug; // query head h uses KV head h / r
                        if (in_group)
                            EXPECT(max_diff(a, b) > 1e-4);
                        else
                            EXPECT(torch::equal(a, b));
                    }
                }
            }
        }
}

// GQA mapping: perturbing KV head j's key or value projection changes exactly
// query heads j*r .. j*r+r-1 of that layer.
static void test_gqa_mapping(const TinySpec &spec) {
    const int64_t T = 10, D = spec.head_dim, r = spec.heads / spec.kv_heads;
    ModelConfig cfg = tiny_config(spec);
    TensorMap base = tiny_qwen3_tensors(spec);
    auto copy = [&](const TensorMap &w) {
        TensorMap c;
        for (auto &kv : w)
            c[kv.first] = kv.second.clone();
        return c;
    };
    TensorMap w0 = copy(base);
    auto ref = Model::from_weights(cfg, w0, torch::kCPU, torch::kFloat32);
    torch::Tensor tok = to_i64(random_tokens(size_t(T), 50, 5), 1, T);
    Window w;
    auto out0 = head_outputs(*ref, tok, torch::Tensor(), w);
    for (const char *which : {"k_proj", "v_proj"})
        for (int64_t j = 0; j < spec.kv_heads; j++) {
            TensorMap wj = copy(base);
            std::string name = std::string("model.layers.1.self_attn.") + which + ".weight";
            wj[name].narrow(0, j * D, D).mul_(-1.5);
            auto mj = Model::from_weights(cfg, wj, torch::kCPU, torch::kFloat32);
            auto out = head_outputs(*mj, tok, torch::Tensor(), w);
            EXPECT(torch::equal(out0[0], out[0]));
            for (int64_t h = 0; h < spec.heads; h++) {
                bool mapped = h >= j * r && h < j * r + r;
                torch::Tensor a = out0[1][0][h], b = out[1][0][h];
                if (mapped)
                    EXPECT(max_diff(a, b) > 1e-4);
                else
                    EXPECT(torch::equal(a, b));
            }
        }
}

// A batch of sequences with different masks equals running them one by one;
// small blocks (query tiling, MLP row blocks) do not change the result.
static void test_batched_equals_sequential(bosch_torch_model *m) {
    const size_t B = 4, T = 13, V = 50, U = 6;
    std::vector<int32_t> tok = random_tokens(B * T, 50, 6);
    std::vector<uint8_t> masks = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
                                  0, 1, 1, 0, 0, 1, 1, 0, 0, 0, 1, 0};
    std::vector<int32_t> pos = {0, 3, 7, 12};
    const size_t P = pos.size();
    std::vector<float> batched(B * P * V), one(P * V);
    EXPECT_ST(forward(m, tok.data(), B, T, masks.data(), 4, 2, pos.data(), P, batched.data()),
              BOSCH_OK);
    double worst = 0;
    for (size_t b = 0; b < B; b++) {
        EXPECT_ST(forward(m, tok.data() + b * T, 1, T, masks.data() + b * U, 4, 2, pos.data(), P,
                          one.data()),
                  BOSCH_OK);
        worst = std::max(worst, max_diff(one.data(), batched.data() + b * P * V, P * V));
    }
    std::printf("batched vs sequential: max abs diff %.3g\n", worst);
    EXPECT(worst < 1e-5);
    // Tiny blocks: many query tiles and MLP row blocks.
    const int64_t saved = m->model->block_bytes();
    m->model->set_block_bytes(4096);
    std::vector<float> tiled(B * P * V);
    EXPECT_ST(forward(m, tok.data(), B, T, masks.data(), 4, 2, pos.data(), P, tiled.data()),
              BOSCH_OK);
    m->model->set_block_bytes(saved);
    double d = max_diff(tiled.data(), batched.data(), tiled.size());
    std::printf("tiled vs untiled: max abs diff %.3g\n", d);
    EXPECT(d < 1e-5);
}

// Log-softmax of one logits row at `target`, in double.
static double log_prob(const float *row, size_t V, int32_t target) {
    double mx = row[0];
    for (size_t i = 1; i < V; i++)
        mx = std::max(mx, double(row[i]));
    double s = 0;
    for (size_t i = 0; i < V; i++)
        s += std::exp(double(row[i]) - mx);
    return double(row[target]) - mx - std::log(s);
}

// Reference score of one mask, sample by sample through bosch_torch_model_forward.
static void manual_scores(bosch_torch_model *m, const Task &task, const uint8_t *mask,
                          uint32_t window, uint32_t sink, double *logprob, double *exact) {
    const size_t V = size_t(m->model->vocab());
    double lp_sum = 0, ex_sum = 0;
    for (const Sample &s : task.samples) {
        std::vector<int32_t> seq = s.prompt;
        seq.insert(seq.end(), s.answer.begin(), s.answer.end() - 1);
        std::vector<int32_t> pos;
        for (size_t j = 0; j < s.answer.size(); j++)
            pos.push_back(int32_t(s.prompt.size() - 1 + j));
        std::vector<float> lg(pos.size() * V);
        int st = forward(m, seq.data(), 1, seq.size(), mask, window, sink, pos.data(), pos.size(),
                         lg.data());
        EXPECT(st == BOSCH_OK);
        double lp = 0;
        bool ok = true;
        for (size_t j = 0; j < s.answer.size(); j++) {
            const float *row = lg.data() + j * V;
            lp += log_prob(row, V, s.answer[j]);
            size_t best = 0;
            for (size_t i = 1; i < V; i++)
                if (row[i] > row[best])
                    best = i;
            ok = ok && int32_t(best) == s.answer[j];
        }
        lp_sum += lp / double(s.answer.size());
        ex_sum += ok ? 1.0 : 0.0;
    }
    *logprob = lp_sum / double(task.samples.size());
    *exact = ex_sum / double(task.samples.size());
}

// Greedy continuation of `prompt` under full attention (n tokens).
static std::vector<int32_t> greedy(bosch_torch_model *m, std::vector<int32_t> seq, size_t n) {
    const size_t V = size_t(m->model->vocab());
    std::vector<int32_t> out;
    std::vector<float> lg(V);
    for (size_t i = 0; i < n; i++) {
        int32_t last = int32_t(seq.size() - 1);
        forward(m, seq.data(), 1, seq.size(), nullptr, 1, 0, &last, 1, lg.data());
        size_t best = 0;
        for (size_t v = 1; v < V; v++)
            if (lg[v] > lg[best])
                best = v;
        out.push_back(int32_t(best));
        seq.push_back(int32_t(best));
    }
    return out;
}

static void test_evaluator(bosch_torch_model *m) {
    const uint32_t window = 3, sink = 1;
    const size_t U = 6;
    // Task: 5 prompts of 16 tokens; answers of lengths 1..3. Samples 0-2
    // take the model's own greedy continuation (EXACT = 1 under full
    // attention), samples 3-4 random tokens.
    bosch_torch_task *task = new bosch_torch_task;
    for (int i = 0; i < 5; i++) {
        Sample s;
        s.prompt = random_tokens(16, 50, 100 + uint32_t(i));
        size_t alen = size_t(1 + i % 3);
        s.answer = i < 3 ? greedy(m, s.prompt, alen) : random_tokens(alen, 50, 200 + uint32_t(i));
        task->task.samples.push_back(s);
    }
    std::vector<uint8_t> masks = {
        0, 0, 0, 0, 0, 0, // all full
        1, 1, 1, 1, 1, 1, // all SWA
        0, 0, 0, 0, 0, 1, // top layer, one unit
        0, 0, 1, 0, 0, 0, // from layer 1
        0, 1, 0, 0, 1, 1, // from layer 0
        0, 0, 0, 0, 1, 0, // top layer, other unit
        0, 0, 1, 1, 0, 0, // layer 1 only
    };
    const size_t n = masks.size() / U;

    for (int metric : {BOSCH_TORCH_METRIC_LOGPROB, BOSCH_TORCH_METRIC_EXACT}) {
        bosch_torch_evaluator *e = nullptr;
        EXPECT_ST(created(e = bosch_torch_evaluator_open(m, task, window, sink, metric)),
                  BOSCH_OK);
        if (!e)
            continue;
        // No cache, one candidate per forward: the plain reference.
        EXPECT(bosch_torch_evaluator_set_prefix_cache(e, 0) == BOSCH_OK);
        std::vector<double> plain(n), cached(n), batched(n), partial(n), batched_nc(n);
        EXPECT(bosch_torch_batch_eval(masks.data(), n, U, plain.data(), e) == BOSCH_OK);
        const int64_t work_plain = e->ev->layer_rows();
        // Against sample-by-sample forwards.
        for (size_t c = 0; c < n; c++) {
            double lp, ex;
            manual_scores(m, task->task, masks.data() + c * U, window, sink, &lp, &ex);
            double want = metric == BOSCH_TORCH_METRIC_LOGPROB ? lp : ex;
            EXPECT(std::fabs(plain[c] - want) < 1e-5);
            if (std::fabs(plain[c] - want) >= 1e-5)
                std::fprintf(stderr, "mask %zu: evaluator %.8f, manual %.8f\n", c, plain[c],
                             want);
        }
        if (metric == BOSCH_TORCH_METRIC_EXACT) {
            // Full attention reproduces the greedy answers of samples 0-2.
            EXPECT(plain[0] >= 0.6 - 1e-12);
            for (double s : plain)
                EXPECT(s >= 0 && s <= 1);
        } else {
            for (double s : plain)
                EXPECT(std::isfinite(s) && s < 0);
        }
        // Prefix cache: equal to recomputation, less work.
        EXPECT(bosch_torch_evaluator_set_prefix_cache(e, 1) == BOSCH_OK);
        const int64_t w0 = e->ev->layer_rows();
        EXPECT(bosch_torch_batch_eval(masks.data(), n, U, cached.data(), e) == BOSCH_OK);
        const int64_t w1 = e->ev->layer_rows();
        EXPECT(bosch_torch_batch_eval(masks.data(), n, U, cached.data(), e) == BOSCH_OK);
        const int64_t work_cached = e->ev->layer_rows() - w1; // second call: cache warm
        std::printf("metric %d: layer rows without cache %lld, with warm cache %lld "
                    "(first call incl. building %lld)\n",
                    metric, (long long)work_plain, (long long)work_cached, (long long)(w1 - w0));
        EXPECT(work_cached < work_plain);
        // The layers below the last (every mask's last layer runs at its
        // scored rows).
        EXPECT(e->ev->cached_layers() == (std::vector<int64_t>{1, 2}));
        // K candidates per forward, with and without the cache.
        EXPECT(bosch_torch_evaluator_set_batch(e, 3) == BOSCH_OK);
        EXPECT(bosch_torch_batch_eval(masks.data(), n, U, batched.data(), e) == BOSCH_OK);
        EXPECT(bosch_torch_evaluator_set_prefix_cache(e, 0) == BOSCH_OK);
        EXPECT(bosch_torch_batch_eval(masks.data(), n, U, batched_nc.data(), e) == BOSCH_OK);
        // A cache budget of one layer: starts from the nearest cached layer below.
        EXPECT(bosch_torch_evaluator_set_prefix_cache(e, 1) == BOSCH_OK);
        EXPECT(bosch_torch_evaluator_set_batch(e, 2) == BOSCH_OK);
        const int64_t per_layer = 5 * 18 * 32 * 4; // samples x T x hidden x f32
        e->ev->set_cache_budget(per_layer + 1);
        EXPECT(bosch_torch_batch_eval(masks.data(), n, U, partial.data(), e) == BOSCH_OK);
        EXPECT(e->ev->cached_layers() == (std::vector<int64_t>{1}));
        double worst = 0;
        for (size_t c = 0; c < n; c++) {
            worst = std::max(worst, std::fabs(plain[c] - cached[c]));
            worst = std::max(worst, std::fabs(plain[c] - batched[c]));
            worst = std::max(worst, std::fabs(plain[c] - batched_nc[c]));
            worst = std::max(worst, std::fabs(plain[c] - partial[c]));
        }
        std::printf("metric %d: cache/batch vs plain: max abs score diff %.3g\n", metric, worst);
        EXPECT(worst < 1e-4);
        // n = 0 is a no-op.
        EXPECT(bosch_torch_batch_eval(masks.data(), 0, U, nullptr, e) == BOSCH_OK);
        // Wrong unit count: BOSCH_E_INVALID, with a message.
        double s1;
        EXPECT(bosch_torch_batch_eval(masks.data(), 1, U + 1, &s1, e) == BOSCH_E_INVALID);
        EXPECT(std::strstr(bosch_torch_evaluator_last_error(e), "units") != nullptr);
        EXPECT(bosch_torch_batch_eval(masks.data(), 1, U, &s1, e) == BOSCH_OK);
        EXPECT(std::strlen(bosch_torch_evaluator_last_error(e)) == 0);
        EXPECT(bosch_torch_evaluator_set_batch(e, 0) == BOSCH_E_INVALID);
        EXPECT(std::strcmp(bosch_torch_evaluator_last_error(e),
                           "candidates must be at least 1") == 0);
        bosch_torch_evaluator_free(e);
    }

    // Creation errors.
    bosch_torch_evaluator *e = nullptr;
    EXPECT_ST(created(e = bosch_torch_evaluator_open(m, task, 0, 0, 0)), BOSCH_E_INVALID);
    EXPECT_MSG("window");
    EXPECT_ST(created(e = bosch_torch_evaluator_open(m, task, 4, 0, 5)), BOSCH_E_INVALID);
    EXPECT_MSG("bosch_torch_evaluator_open: unknown metric 5");
    EXPECT_ST(created(e = bosch_torch_evaluator_open(m, nullptr, 4, 0, 0)), BOSCH_E_INVALID);
    EXPECT_MSG("bosch_torch_evaluator_open: model and task must not be NULL");
    task->task.samples[2].prompt[5] = 50; // == vocab
    EXPECT_ST(created(e = bosch_torch_evaluator_open(m, task, 4, 0, 0)), BOSCH_E_INVALID);
    EXPECT_MSG("vocabulary");
    EXPECT(e == nullptr);
    bosch_torch_task_free(task);
}

// Scores of one evaluator configuration on `task` (n masks of U units).
// forward_tokens >= 0: Evaluator::set_forward_tokens (1: one sample of each
// candidate per forward); < 0: the device's default.
static std::vector<double> eval_scores(bosch_torch_model *m, bosch_torch_task *task, int metric,
                                       uint32_t buckets, bool cache, uint32_t batch,
                                       const std::vector<uint8_t> &masks, size_t U,
                                       int64_t forward_tokens = -1) {
    const size_t n = masks.size() / U;
    std::vector<double> out(n, std::nan(""));
    bosch_torch_evaluator *e = bosch_torch_evaluator_open(m, task, 3, 1, metric);
    EXPECT(e != nullptr);
    if (!e)
        return out;
    if (forward_tokens >= 0)
        e->ev->set_forward_tokens(forward_tokens);
    EXPECT(bosch_torch_evaluator_set_buckets(e, buckets) == BOSCH_OK);
    EXPECT(bosch_torch_evaluator_set_prefix_cache(e, cache) == BOSCH_OK);
    EXPECT(bosch_torch_evaluator_set_batch(e, batch) == BOSCH_OK);
    EXPECT(bosch_torch_batch_eval(masks.data(), n, U, out.data(), e) == BOSCH_OK);
    if (cache) // a second call runs from the warm cache
        EXPECT(bosch_torch_batch_eval(masks.data(), n, U, out.data(), e) == BOSCH_OK);
    // A bound of one token: a forward per sample of every candidate group
    // (and per sample for the cache), so more forwards than samples.
    if (forward_tokens == 1)
        EXPECT(e->ev->forwards() >= int64_t(task->task.samples.size()));
    bosch_torch_evaluator_free(e);
    return out;
}

// Prompts of different lengths: the task's score is the mean of each sample
// scored alone as a one-sample task, for both metrics, every bucket setting,
// with and without the prefix cache.
static void test_mixed_lengths(bosch_torch_model *m) {
    const size_t U = 6;
    const size_t lens[] = {9, 16, 12, 21, 9, 14, 5};
    bosch_torch_task *task = new bosch_torch_task;
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        Sample s;
        s.prompt = random_tokens(lens[i], 50, 300 + uint32_t(i));
        size_t alen = 1 + i % 3;
        s.answer = i % 2 ? greedy(m, s.prompt, alen) : random_tokens(alen, 50, 400 + uint32_t(i));
        task->task.samples.push_back(s);
    }
    const size_t M = task->task.samples.size();
    EXPECT(bosch_torch_task_prompt_len(task) == 21);
    EXPECT(bosch_torch_task_prompt_len_of(task, 0) == 9);
    EXPECT(bosch_torch_task_prompt_len_of(task, 6) == 5);
    EXPECT(bosch_torch_task_prompt_len_of(task, 7) == 0);
    {
        const int32_t *p = nullptr, *a = nullptr;
        size_t np = 0, na = 0;
        uint32_t mx = 0;
        EXPECT(bosch_torch_task_sample(task, 3, &p, &np, &a, &na, &mx) == BOSCH_OK);
        EXPECT(np == 21 && p == task->task.samples[3].prompt.data());
        EXPECT(na == 1 && a == task->task.samples[3].answer.data() && mx == 1 + 16);
        EXPECT(bosch_torch_task_sample(task, 7, &p, &np, &a, &na, &mx) == BOSCH_E_INVALID);
        EXPECT(bosch_torch_task_tokenizer(task) == nullptr);
    }
    std::vector<uint8_t> masks = {
        0, 0, 0, 0, 0, 0, //
        1, 1, 1, 1, 1, 1, //
        0, 0, 0, 0, 0, 1, //
        0, 0, 1, 0, 0, 0, //
        0, 1, 0, 0, 1, 1, //
    };
    const size_t n = masks.size() / U;
    for (int metric : {BOSCH_TORCH_METRIC_LOGPROB, BOSCH_TORCH_METRIC_EXACT}) {
        // Reference: each sample alone (a one-sample task, one bucket, no cache).
        std::vector<double> want(n, 0.0);
        for (size_t i = 0; i < M; i++) {
            bosch_torch_task one;
            one.task.samples.push_back(task->task.samples[i]);
            std::vector<double> si = eval_scores(m, &one, metric, 1, false, 1, masks, U);
            for (size_t c = 0; c < n; c++)
                want[c] += si[c] / double(M);
        }
        // And against plain forwards of each sample.
        for (size_t c = 0; c < n; c++) {
            double lp, ex;
            manual_scores(m, task->task, masks.data() + c * U, 3, 1, &lp, &ex);
            EXPECT(std::fabs(want[c] - (metric == BOSCH_TORCH_METRIC_LOGPROB ? lp : ex)) < 1e-5);
        }
        double worst = 0;
        for (uint32_t buckets : {1u, 2u, 3u, 0u, 100u})
            for (bool cache : {false, true})
                for (uint32_t batch : {1u, 4u})
                    for (int64_t tokens : {int64_t(-1), int64_t(1), int64_t(40)}) {
                    std::vector<double> got =
                        eval_scores(m, task, metric, buckets, cache, batch, masks, U, tokens);
                    for (size_t c = 0; c < n; c++) {
                        const double d = std::fabs(got[c] - want[c]);
                        worst = std::max(worst, std::isnan(d) ? 1e9 : d);
                        if (!(d < 1e-5))
                            std::fprintf(stderr,
                                         "mixed lengths: metric %d buckets %u cache %d batch %u "
                                         "forward tokens %lld mask %zu: %.8f, alone %.8f\n",
                                         metric, buckets, int(cache), batch, (long long)tokens,
                                         c, got[c], want[c]);
                    }
                }
        std::printf("mixed lengths, metric %d: max |task - mean of samples alone| %.3g\n", metric,
                    worst);
        EXPECT(worst < 1e-5);
    }
    // Bucket shapes: 1 = everything padded to the longest sequence;
    // the default separates these 6 distinct lengths; 2 minimises padding.
    bosch_torch_evaluator *e = bosch_torch_evaluator_open(m, task, 3, 1, 0);
    EXPECT(e != nullptr);
    if (e) {
        auto total = [&]() {
            int64_t rows = 0, padded = 0;
            for (auto &b : e->ev->bucket_shapes()) {
                rows += b.first;
                padded += b.first * b.second;
            }
            EXPECT(rows == int64_t(M));
            return padded;
        };
        EXPECT(bosch_torch_evaluator_set_buckets(e, 1) == BOSCH_OK);
        EXPECT(e->ev->bucket_shapes().size() == 1);
        EXPECT(e->ev->bucket_shapes()[0].second == 21); // the longest prompt + answer - 1
        const int64_t pad1 = total();
        EXPECT(bosch_torch_evaluator_set_buckets(e, 0) == BOSCH_OK);
        // sequence lengths 9,17,14,21,10,16,5: seven distinct, at most 8 buckets
        EXPECT(e->ev->bucket_shapes().size() == 7);
        EXPECT(bosch_torch_evaluator_set_buckets(e, 2) == BOSCH_OK);
        EXPECT(e->ev->bucket_shapes().size() == 2);
        const int64_t pad2 = total();
        EXPECT(pad2 < pad1);
        bosch_torch_evaluator_free(e);
    }
    // One length: one bucket whatever the setting.
    bosch_torch_task *same = nullptr;
    EXPECT_ST(created(same = bosch_torch_task_create_niah(50, 32, 4, 1, 2, 2, 0.0, 1.0, 5)),
              BOSCH_OK);
    if (same && (e = bosch_torch_evaluator_open(m, same, 3, 1, 0))) {
        EXPECT(e->ev->bucket_shapes().size() == 1);
        bosch_torch_evaluator_free(e);
    }
    bosch_torch_task_free(same);
    bosch_torch_task_free(task);
}

// Weights held in the requested dtype, the memory reported, devices by name.
static void test_memory_and_devices(const std::string &dir) {
    bosch_torch_model *mf = nullptr, *mb = nullptr, *m = nullptr;
    EXPECT_ST(created(mf = bosch_torch_model_open_device(dir.c_str(), "cpu", BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    EXPECT_ST(created(mb = bosch_torch_model_open_device(dir.c_str(), "auto",
                                                         BOSCH_TORCH_DTYPE_BF16)),
              BOSCH_OK);
    if (mf && mb) {
        uint64_t bf = 0, bb = 0;
        int df = -1, db = -1;
        EXPECT(bosch_torch_model_memory(mf, &bf, &df) == BOSCH_OK);
        EXPECT(bosch_torch_model_memory(mb, &bb, &db) == BOSCH_OK);
        EXPECT(df == BOSCH_TORCH_DTYPE_F32 && db == BOSCH_TORCH_DTYPE_BF16);
        // gqa_spec: every parameter counted once.
        const TinySpec sp = gqa_spec();
        const uint64_t q = uint64_t(sp.heads) * sp.head_dim, kv = uint64_t(sp.kv_heads) * sp.head_dim;
        uint64_t per_layer = 2 * sp.hidden + q * sp.hidden * 2 + kv * sp.hidden * 2 +
                             2 * uint64_t(sp.head_dim) + 3 * uint64_t(sp.intermediate) * sp.hidden;
        uint64_t params = uint64_t(sp.vocab) * sp.hidden * (sp.tie ? 1 : 2) + sp.hidden +
                          per_layer * uint64_t(sp.layers);
        EXPECT(bf == params * 4);
        EXPECT(bb == params * 2);
        // No f32 copy behind the bf16 weights.
        EXPECT(mb->model->layer(0).q_proj.scalar_type() == torch::kBFloat16);
        EXPECT(mb->model->lm_head_weight().scalar_type() == torch::kBFloat16);
        EXPECT(std::strcmp(bosch_torch_model_device(mf), "cpu") == 0);
        EXPECT(std::strcmp(bosch_torch_dtype_name(db), "bf16") == 0);
    }
    EXPECT(bosch_torch_model_memory(nullptr, nullptr, nullptr) == BOSCH_E_INVALID);
    EXPECT(bosch_torch_dtype_name(7) == nullptr);
    EXPECT(std::strcmp(bosch_torch_model_device(nullptr), "") == 0);
    bosch_torch_model_free(mf);
    bosch_torch_model_free(mb);
    for (const char *bad : {"gpu", "cuda:", "cuda:x", "cuda:-1", "cuda:12345", "CPU", ""}) {
        EXPECT_ST(created(m = bosch_torch_model_open_device(dir.c_str(), bad, 0)),
                  BOSCH_E_INVALID);
        EXPECT_MSG("is not auto, cpu, cuda or cuda:N");
        EXPECT(m == nullptr);
    }
    EXPECT_ST(created(m = bosch_torch_model_open_device(dir.c_str(), nullptr, 0)), BOSCH_E_INVALID);
    EXPECT_MSG("bosch_torch_model_open_device: device must not be NULL");
    if (!bosch_torch_cuda_available())
        for (const char *cuda : {"cuda", "cuda:0", "cuda:3"}) {
            EXPECT_ST(created(m = bosch_torch_model_open_device(dir.c_str(), cuda, 0)),
                      BOSCH_E_INVALID);
            EXPECT_MSG("not available");
        }
}

// The NIAH over a list of vocabulary rows.
static void test_niah_ids() {
    const uint32_t V = 40, ctx = 64;
    // The list {3..V-1} with markers 0, 1, 2 is the classic task exactly.
    std::vector<int32_t> all;
    for (int32_t i = 3; i < int32_t(V); i++)
        all.push_back(i);
    bosch_torch_task *a = nullptr, *b = nullptr, *c = nullptr;
    EXPECT_ST(created(a = bosch_torch_task_create_niah(V, ctx, 4, 2, 2, 3, 0.0, 1.0, 9)), BOSCH_OK);
    EXPECT_ST(created(b = bosch_torch_task_create_niah_ids(all.data(), all.size(), 0, 1, 2, ctx, 4,
                                                           2, 2, 3, 0.0, 1.0, 9)),
              BOSCH_OK);
    if (a && b)
        for (size_t i = 0; i < 4; i++) {
            EXPECT(a->task.samples[i].prompt == b->task.samples[i].prompt);
            EXPECT(a->task.samples[i].answer == b->task.samples[i].answer);
        }
    // A sparse list and other markers: only those ids occur.
    std::vector<int32_t> some = {7, 11, 12, 30, 31, 38};
    EXPECT_ST(created(c = bosch_torch_task_create_niah_ids(some.data(), some.size(), 20, 21, 22,
                                                           ctx, 4, 2, 2, 3, 0.0, 1.0, 9)),
              BOSCH_OK);
    if (c) {
        size_t markers = 0;
        bool only = true;
        for (const Sample &s : c->task.samples) {
            for (int32_t t : s.prompt) {
                const bool mk = t == 20 || t == 21 || t == 22;
                markers += mk;
                only = only && (mk || std::count(some.begin(), some.end(), t) == 1);
            }
            for (int32_t t : s.answer)
                only = only && std::count(some.begin(), some.end(), t) == 1;
            EXPECT(s.prompt[s.prompt.size() - 1] == 21 && s.prompt[s.prompt.size() - 4] == 22);
        }
        EXPECT(only);
        EXPECT(markers == 4 * (2 * 2 + 2)); // per sample: 2 needles (KEY, VAL) + QRY, VAL
    }
    bosch_torch_task_free(a);
    bosch_torch_task_free(b);
    bosch_torch_task_free(c);
    bosch_torch_task *t = nullptr;
    struct {
        std::vector<int32_t> filler;
        int32_t k, v, q;
        const char *word;
    } bad[] = {
        {{}, 0, 1, 2, "filler must not be NULL or empty"},
        {{5, 6, 5}, 0, 1, 2, "filler id 5 is listed twice"},
        {{5, 6, -1}, 0, 1, 2, "filler id -1 is negative"},
        {{5, 6, 7}, 6, 1, 2, "marker id 6 is also a filler id"},
        {{5, 6, 7}, 1, 1, 2, "marker ids must differ"},
        {{5, 6, 7}, -3, 1, 2, "must not be negative"},
        {{5}, 0, 1, 2, "not enough distinct keys"},
    };
    for (auto &c2 : bad) {
        EXPECT_ST(created(t = bosch_torch_task_create_niah_ids(
                              c2.filler.empty() ? nullptr : c2.filler.data(), c2.filler.size(),
                              c2.k, c2.v, c2.q, ctx, 2, 3, 1, 1, 0.0, 1.0, 1)),
                  BOSCH_E_INVALID);
        EXPECT_MSG(c2.word);
        EXPECT_MSG("bosch_torch_task_create_niah_ids: ");
        EXPECT(t == nullptr);
    }
}

// The evaluator as the optimizer's batch evaluator. Answers are the model's
// own greedy continuations under full attention, so that full attention
// scores above all-SWA (the anchors) and the whole search runs.
// bosch_torch_request_batch_eval: request i at fidelity f is scored on
// k = max(1, ceil(f * S)) samples from (draw * k) mod S on, cyclically.
static int requests(const std::vector<uint8_t> &masks, const std::vector<double> &fid,
                    const std::vector<uint32_t> &draws, size_t U, std::vector<double> &out,
                    bosch_torch_evaluator *e) {
    out.assign(fid.size(), std::nan(""));
    return bosch_torch_request_batch_eval(masks.data(), fid.data(), draws.data(), fid.size(), U,
                                          out.data(), e);
}

// The prefix cache's reference (bosch_torch_evaluator_set_reference): the
// scores are those without a cache whatever the reference, and a candidate
// that shares the reference's first two layers runs only the third.
static void test_reference(bosch_torch_model *m) {
    const size_t U = 6; // 3 layers x 2 groups
    bosch_torch_task *task = nullptr;
    EXPECT_ST(created(task = bosch_torch_task_create_niah(50, 24, 3, 1, 2, 2, 0.0, 1.0, 9)),
              BOSCH_OK);
    if (!task)
        return;
    const std::vector<uint8_t> masks = {
        0, 0, 0, 0, 0, 0, //
        1, 1, 1, 1, 1, 1, //
        0, 1, 1, 0, 0, 0, //
        0, 1, 1, 0, 1, 1, //
        1, 0, 0, 0, 1, 0, //
    };
    const size_t n = masks.size() / U;
    const std::vector<double> want =
        eval_scores(m, task, BOSCH_TORCH_METRIC_LOGPROB, 0, false, 1, masks, U);
    const uint8_t refs[][6] = {{0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}, {0, 1, 1, 0, 1, 0},
                               {1, 0, 0, 0, 0, 0}};
    double worst = 0;
    for (int r = -1; r < 4; r++) { // -1: NULL, the default
        bosch_torch_evaluator *e = bosch_torch_evaluator_open(m, task, 3, 1,
                                                              BOSCH_TORCH_METRIC_LOGPROB);
        EXPECT(e != nullptr);
        if (!e)
            continue;
        EXPECT_ST(bosch_torch_evaluator_set_reference(e, r < 0 ? nullptr : refs[r], U), BOSCH_OK);
        EXPECT(e->ev->reference().empty() == (r <= 0)); // all full is the default
        std::vector<double> got(n);
        for (int pass = 0; pass < 2; pass++) { // cold, then from the warm cache
            EXPECT_ST(bosch_torch_batch_eval(masks.data(), n, U, got.data(), e), BOSCH_OK);
            for (size_t c = 0; c < n; c++)
                worst = std::max(worst, std::isnan(got[c]) ? 1e9 : std::fabs(got[c] - want[c]));
        }
        if (r == 2) {
            // masks[3] equals reference 2 in layers 0 and 1: one layer per
            // sample (3 samples); masks[4] differs in layer 0: all three.
            int64_t w0 = e->ev->layer_rows();
            EXPECT_ST(bosch_torch_batch_eval(masks.data() + 3 * U, 1, U, got.data(), e), BOSCH_OK);
            EXPECT(e->ev->layer_rows() - w0 == 3);
            w0 = e->ev->layer_rows();
            EXPECT_ST(bosch_torch_batch_eval(masks.data() + 4 * U, 1, U, got.data(), e), BOSCH_OK);
            EXPECT(e->ev->layer_rows() - w0 == 9);
        }
        if (r == 3) { // units other than the model's: refused, reference kept
            EXPECT_ST(bosch_torch_evaluator_set_reference(e, refs[0], U + 1), BOSCH_E_INVALID);
            EXPECT(std::strstr(bosch_torch_evaluator_last_error(e), "units") != nullptr);
            EXPECT(!e->ev->reference().empty());
        }
        bosch_torch_evaluator_free(e);
    }
    EXPECT_ST(bosch_torch_evaluator_set_reference(nullptr, nullptr, 0), BOSCH_E_INVALID);
    std::printf("prefix-cache reference: max |score - uncached| %.3g\n", worst);
    EXPECT(worst < 1e-5);
    bosch_torch_task_free(task);
}

// The prefix cache's budget: the policy sizing it to a device's free
// memory, and the CPU's default (no memory to ask: 2 GiB) or the
// environment's fixed value, as the cache build uses them.
static void test_cache_budget(bosch_torch_model *m) {
    const int64_t G = int64_t(1) << 30;
    EXPECT(prefix_cache_budget(-1, 80 * G, G) == -1);      // not known
    EXPECT(prefix_cache_budget(40 * G, 0, G) == -1);
    EXPECT(prefix_cache_budget(100 * G, 140 * G, 26 * G) == 60 * G); // 100 - 26 - 14
    EXPECT(prefix_cache_budget(10 * G, 140 * G, 2 * G) == 0);        // the margin eats it
    bosch_torch_task *task = nullptr;
    EXPECT_ST(created(task = bosch_torch_task_create_niah(50, 24, 3, 1, 2, 2, 0.0, 1.0, 9)),
              BOSCH_OK);
    if (!task)
        return;
    const std::vector<uint8_t> mask = {0, 0, 0, 1, 0, 0};
    double score = 0;
    for (const char *env : {(const char *)nullptr, "1", "0"}) {
        const ScopedEnv budget("BOSCH_TORCH_CACHE_MB", env);
        bosch_torch_evaluator *e = bosch_torch_evaluator_open(m, task, 3, 1,
                                                              BOSCH_TORCH_METRIC_LOGPROB);
        EXPECT(e != nullptr);
        if (!e)
            continue;
        const bool on_cpu = e->ev->forward_tokens() == 0;
        EXPECT(e->ev->cache_budget() == (env ? std::atoll(env) << 20 : -1));
        EXPECT(e->ev->cache_budget_used() == 0); // no build yet
        // Unbounded forwards: the largest bucket's (3 samples x 25
        // positions, batch 1) at the widest projection, 16 copies, plus one
        // block.
        const ModelConfig &c = m->model->config();
        const int64_t width =
            std::max<int64_t>(c.hidden_size, c.num_attention_heads * c.head_dim);
        if (on_cpu)
            EXPECT(e->ev->forward_bytes() ==
                   16 * 75 * width * 4 + m->model->block_bytes());
        EXPECT_ST(bosch_torch_batch_eval(mask.data(), 1, mask.size(), &score, e), BOSCH_OK);
        if (!env && on_cpu)
            EXPECT(e->ev->cache_budget_used() == 2 * G);
        if (env)
            EXPECT(e->ev->cache_budget_used() == std::atoll(env) << 20);
        // A few KiB per cached layer here: 1 MiB holds them all, 0 none.
        EXPECT(e->ev->cached_layers().empty() == (env && std::atoll(env) == 0));
        bosch_torch_evaluator_free(e);
    }
    bosch_torch_task_free(task);
}

static void test_request_eval(bosch_torch_model *m) {
    const size_t U = 6;
    const size_t lens[] = {9, 16, 12, 21, 9, 14, 5};
    const size_t S = sizeof lens / sizeof lens[0];
    bosch_torch_task *task = new bosch_torch_task;
    for (size_t i = 0; i < S; i++) {
        Sample s;
        s.prompt = random_tokens(lens[i], 50, 500 + uint32_t(i));
        size_t alen = 1 + i % 3;
        s.answer = i % 2 ? greedy(m, s.prompt, alen) : random_tokens(alen, 50, 600 + uint32_t(i));
        task->task.samples.push_back(s);
    }
    const std::vector<uint8_t> masks = {
        0, 0, 0, 0, 0, 0, //
        1, 1, 1, 1, 1, 1, //
        0, 0, 0, 0, 0, 1, //
        0, 1, 0, 0, 1, 1, //
    };
    const size_t n = masks.size() / U;
    // The masks repeated `times` times, and fidelity/draws of that length.
    auto rep = [&](size_t times) {
        std::vector<uint8_t> r;
        for (size_t t = 0; t < times; t++)
            r.insert(r.end(), masks.begin(), masks.end());
        return r;
    };
    for (int metric : {BOSCH_TORCH_METRIC_LOGPROB, BOSCH_TORCH_METRIC_EXACT}) {
        // alone[i][c]: mask c on sample i as a one-sample task.
        std::vector<std::vector<double>> alone;
        for (size_t i = 0; i < S; i++) {
            bosch_torch_task one;
            one.task.samples.push_back(task->task.samples[i]);
            alone.push_back(eval_scores(m, &one, metric, 1, false, 1, masks, U));
        }
        double worst_alone = 0, worst_mean = 0, worst_mixed = 0;
        // tokens 1: every forward split to one sample (subsets included),
        // bosch_torch_evaluator_set_forward_samples(e, 1).
        for (int64_t tokens : {int64_t(-1), int64_t(1)})
        for (bool cache : {false, true})
            for (uint32_t batch : {1u, 3u}) {
                bosch_torch_evaluator *e = bosch_torch_evaluator_open(m, task, 3, 1, metric);
                EXPECT(e != nullptr);
                if (!e)
                    continue;
                if (tokens >= 0) // one sample per forward, as MPI parts need
                    EXPECT(bosch_torch_evaluator_set_forward_samples(e, uint32_t(tokens)) ==
                           BOSCH_OK);
                EXPECT(bosch_torch_evaluator_set_prefix_cache(e, cache) == BOSCH_OK);
                EXPECT(bosch_torch_evaluator_set_batch(e, batch) == BOSCH_OK);
                std::vector<double> full(n), got;
                EXPECT(bosch_torch_batch_eval(masks.data(), n, U, full.data(), e) == BOSCH_OK);
                // (1) Fidelity 1: every draw is bosch_torch_batch_eval, bit for bit.
                for (uint32_t d : {0u, 3u}) {
                    EXPECT(requests(masks, std::vector<double>(n, 1.0),
                                    std::vector<uint32_t>(n, d), U, got, e) == BOSCH_OK);
                    EXPECT(std::memcmp(got.data(), full.data(), n * sizeof(double)) == 0);
                }
                // (2) Fidelity 1/S: draw d is sample d mod S alone; the mean over
                // d = 0..S-1 is the full score.
                std::vector<double> mean(n, 0.0);
                for (uint32_t d = 0; d < S + 2; d++) {
                    const int64_t w0 = e->ev->layer_rows();
                    EXPECT(requests(masks, std::vector<double>(n, 1.0 / double(S)),
                                    std::vector<uint32_t>(n, d), U, got, e) == BOSCH_OK);
                    if (cache && d > 0) // one sample's rows only (cache warm)
                        EXPECT(e->ev->layer_rows() - w0 <= int64_t(n) * 3);
                    for (size_t c = 0; c < n; c++) {
                        const double dd = std::fabs(got[c] - alone[d % S][c]);
                        worst_alone = std::max(worst_alone, std::isnan(dd) ? 1e9 : dd);
                        if (d < S)
                            mean[c] += got[c] / double(S);
                    }
                }
                for (size_t c = 0; c < n; c++)
                    worst_mean = std::max(worst_mean, std::fabs(mean[c] - full[c]));
                // Wrapping and k = ceil(f * S): f = 0.5 -> 4 samples, draw 1 ->
                // samples 4, 5, 6, 0; f = 2/7 -> 2 samples, draw 1 -> 2, 3.
                EXPECT(requests(masks, std::vector<double>(n, 0.5), std::vector<uint32_t>(n, 1),
                                U, got, e) == BOSCH_OK);
                for (size_t c = 0; c < n; c++) {
                    const double want =
                        (alone[4][c] + alone[5][c] + alone[6][c] + alone[0][c]) / 4.0;
                    worst_alone = std::max(worst_alone, std::fabs(got[c] - want));
                }
                EXPECT(requests(masks, std::vector<double>(n, 2.0 / 7.0),
                                std::vector<uint32_t>(n, 1), U, got, e) == BOSCH_OK);
                for (size_t c = 0; c < n; c++)
                    worst_alone = std::max(worst_alone,
                                           std::fabs(got[c] - (alone[2][c] + alone[3][c]) / 2.0));
                // (3) Mixed fidelities and draws in one call = one request at a time.
                const size_t times = 4;
                const std::vector<uint8_t> all = rep(times);
                std::vector<double> fid, single;
                std::vector<uint32_t> draws;
                const double fs[] = {1.0, 0.5, 1.0 / 7.0, 0.3, 0.5, 1.0, 0.9, 1.0 / 7.0};
                const uint32_t ds[] = {0, 2, 5, 1, 2, 7, 4000000000u, 5};
                for (size_t i = 0; i < times * n; i++) {
                    fid.push_back(fs[i % 8]);
                    draws.push_back(ds[(i / 3) % 8]);
                }
                EXPECT(requests(all, fid, draws, U, got, e) == BOSCH_OK);
                for (size_t i = 0; i < fid.size(); i++) {
                    double one = std::nan("");
                    EXPECT(bosch_torch_request_batch_eval(all.data() + i * U, &fid[i], &draws[i],
                                                          1, U, &one, e) == BOSCH_OK);
                    const double dd = std::fabs(got[i] - one);
                    worst_mixed = std::max(worst_mixed, std::isnan(dd) ? 1e9 : dd);
                    single.push_back(one);
                }
                // One candidate per forward: the same forwards in another order,
                // bit for bit. Several: other batch shapes, equal up to rounding.
                if (batch == 1)
                    EXPECT(std::memcmp(got.data(), single.data(), got.size() * sizeof(double)) ==
                           0);
                // (5) A request in parts (bosch_torch_sample_eval, as MPI ranks
                // score it): the values of every split, added in order and
                // divided by k, are the request's score.
                for (size_t i = 0; i < fid.size(); i += 3) {
                    const size_t k = bosch_torch_request_samples(fid[i], e);
                    EXPECT(k >= 1 && k <= S);
                    for (size_t parts : {size_t(1), size_t(2), k}) {
                        std::vector<double> v(k, std::nan(""));
                        for (size_t p = 0, first = 0; p < parts; p++) {
                            const size_t cnt = (k * (p + 1)) / parts - first;
                            EXPECT(bosch_torch_sample_eval(all.data() + i * U, fid[i], draws[i],
                                                           first, cnt, U, v.data() + first,
                                                           e) == BOSCH_OK);
                            first += cnt;
                        }
                        double sum = 0.0;
                        for (double x : v)
                            sum += x;
                        const double score = sum / double(k);
                        // Bit for bit with one sample per forward; else up to
                        // the rounding of forwards of other sizes.
                        if (tokens == 1)
                            EXPECT(std::memcmp(&score, &single[i], sizeof score) == 0);
                        else
                            EXPECT(std::fabs(score - single[i]) < 1e-5);
                        if (std::memcmp(&score, &single[i], sizeof score) != 0)
                            std::printf("request %zu in %zu parts: %.17g, whole %.17g\n", i,
                                        parts, score, single[i]);
                    }
                    double v1 = 0;
                    EXPECT(bosch_torch_sample_eval(all.data() + i * U, fid[i], draws[i], k, 1, U,
                                                   &v1, e) == BOSCH_E_INVALID);
                    EXPECT(std::strstr(bosch_torch_evaluator_last_error(e), "of a request of") !=
                           nullptr);
                }
                EXPECT(bosch_torch_request_samples(0.0, e) == 0);
                EXPECT(bosch_torch_request_samples(1.0, nullptr) == 0);
                EXPECT(bosch_torch_request_samples(1.0, e) == S);
                // (4) Fidelity outside (0, 1]: BOSCH_E_INVALID with a message.
                for (double bad : {0.0, 1.5, std::nan(""), -0.25}) {
                    std::vector<double> f(n, 1.0);
                    f[n - 1] = bad;
                    EXPECT(requests(masks, f, std::vector<uint32_t>(n, 0), U, got, e) ==
                           BOSCH_E_INVALID);
                    EXPECT(std::strstr(bosch_torch_evaluator_last_error(e), "fidelity") !=
                           nullptr);
                }
                // Other argument errors; n = 0 is a no-op; success clears the message.
                EXPECT(bosch_torch_request_batch_eval(masks.data(), nullptr, nullptr, 1, U,
                                                      got.data(), e) == BOSCH_E_INVALID);
                EXPECT(std::strlen(bosch_torch_evaluator_last_error(e)) > 0);
                EXPECT(requests(masks, std::vector<double>(n, 1.0), std::vector<uint32_t>(n, 0),
                                U + 1, got, e) == BOSCH_E_INVALID);
                EXPECT(std::strstr(bosch_torch_evaluator_last_error(e), "units") != nullptr);
                EXPECT(bosch_torch_request_batch_eval(nullptr, nullptr, nullptr, 0, U, nullptr,
                                                      e) == BOSCH_OK);
                EXPECT(std::strlen(bosch_torch_evaluator_last_error(e)) == 0);
                EXPECT(bosch_torch_request_batch_eval(masks.data(), nullptr, nullptr, 0, U,
                                                      nullptr, nullptr) == BOSCH_E_INVALID);
                bosch_torch_evaluator_free(e);
            }
        std::printf("requests, metric %d: max |1/S draw - sample alone| %.3g, |mean of draws - "
                    "full| %.3g, |mixed batch - one at a time| %.3g\n",
                    metric, worst_alone, worst_mean, worst_mixed);
        EXPECT(worst_alone < 1e-5);
        EXPECT(worst_mean < 1e-9);
        EXPECT(worst_mixed < 1e-5);
    }
    bosch_torch_task_free(task);
}

static void test_optimizer(bosch_torch_model *m) {
    bosch_torch_task *t = new bosch_torch_task;
    for (uint32_t i = 0; i < 4; i++) {
        Sample s;
        s.prompt = random_tokens(24, 50, 300 + i);
        s.answer = greedy(m, s.prompt, 2);
        t->task.samples.push_back(s);
    }
    bosch_torch_evaluator *e = nullptr;
    EXPECT_ST(created(e = bosch_torch_evaluator_open(m, t, 4, 1, BOSCH_TORCH_METRIC_LOGPROB)),
              BOSCH_OK);
    bosch_problem *p = bosch_torch_model_problem(m);
    bosch_optimizer *opt = bosch_optimizer_create(p);
    EXPECT(opt && e);
    if (opt && e) {
        bosch_torch_evaluator_set_batch(e, 4);
        EXPECT(bosch_set_batch_evaluator(opt, bosch_torch_batch_eval, e) == BOSCH_OK);
        EXPECT(bosch_set_budget(opt, 24) == BOSCH_OK);
        int st = bosch_optimize(opt);
        std::printf("bosch_optimize with bosch_torch_batch_eval: %s\n", bosch_err_name(st));
        EXPECT(st > 0);
        bosch_result *res = nullptr;
        EXPECT(bosch_get_result(opt, &res) == BOSCH_OK);
        if (res) {
            EXPECT(std::isfinite(bosch_result_score(res)));
            EXPECT(bosch_result_feasible(res));
            bosch_result_free(res);
        }
        if (st <= 0)
            std::fprintf(stderr, "bosch_optimize: %s: %s / %s\n", bosch_err_name(st),
                         bosch_optimizer_last_error(opt), bosch_torch_evaluator_last_error(e));
    }
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_torch_evaluator_free(e);
    bosch_torch_task_free(t);
}

// ---------------------------------------------------------------------------
// Tasks

static void test_niah() {
    bosch_torch_task *a = nullptr, *b = nullptr, *c = nullptr;
    const uint32_t V = 40, ctx = 64, K = 2, Vl = 3, N = 3;
    EXPECT_ST(created(a = bosch_torch_task_create_niah(V, ctx, 6, N, K, Vl, 0.0, 1.0, 42)),
              BOSCH_OK);
    EXPECT_ST(created(b = bosch_torch_task_create_niah(V, ctx, 6, N, K, Vl, 0.0, 1.0, 42)),
              BOSCH_OK);
    EXPECT_ST(created(c = bosch_torch_task_create_niah(V, ctx, 6, N, K, Vl, 0.0, 1.0, 43)),
              BOSCH_OK);
    if (!a || !b || !c)
        return;
    EXPECT(bosch_torch_task_samples(a) == 6);
    bool same = true, differ = false;
    for (size_t i = 0; i < 6; i++) {
        same = same && a->task.samples[i].prompt == b->task.samples[i].prompt &&
               a->task.samples[i].answer == b->task.samples[i].answer;
        differ = differ || a->task.samples[i].prompt != c->task.samples[i].prompt;
    }
    EXPECT(same);
    EXPECT(differ);
    for (const Sample &s : a->task.samples) {
        const auto &p = s.prompt;
        EXPECT(p.size() == ctx);
        EXPECT(s.answer.size() == Vl);
        size_t keys = 0, vals = 0, qry = 0;
        for (int32_t x : p) {
            EXPECT(x >= 0 && x < int32_t(V));
            keys += x == 0;
            vals += x == 1;
            qry += x == 2;
        }
        EXPECT(keys == N && vals == N + 1 && qry == 1);
        // Ends with QRY k1 k2 VAL.
        EXPECT(p[ctx - K - 2] == 2 && p[ctx - 1] == 1);
        std::vector<int32_t> key(p.end() - K - 1, p.end() - 1);
        // Exactly one needle has that key, and its value is the answer.
        size_t hits = 0;
        for (size_t i = 0; i + K + Vl + 2 <= ctx - K - 2; i++) {
            if (p[i] != 0)
                continue;
            std::vector<int32_t> k(p.begin() + long(i) + 1, p.begin() + long(i) + 1 + K);
            EXPECT(p[i + 1 + K] == 1);
            if (k == key) {
                hits++;
                std::vector<int32_t> v(p.begin() + long(i) + 2 + K,
                                       p.begin() + long(i) + 2 + K + Vl);
                EXPECT(v == s.answer);
            }
        }
        EXPECT(hits == 1);
    }
    // Depth: one needle at depth 0.5 sits in the middle of the filler.
    bosch_torch_task *d = nullptr;
    EXPECT_ST(created(d = bosch_torch_task_create_niah(V, 100, 3, 1, 1, 1, 0.5, 0.5, 1)),
              BOSCH_OK);
    if (d) {
        const uint32_t filler = 100 - 4 - 3;
        for (const Sample &s : d->task.samples)
            EXPECT(s.prompt[filler / 2] == 0);
    }
    bosch_torch_task_free(d);
    // JSONL round trip.
    std::string path = g_tmp + "/niah.jsonl";
    EXPECT(bosch_torch_task_write_jsonl(a, path.c_str()) == BOSCH_OK);
    bosch_torch_task *r = nullptr;
    EXPECT_ST(created(r = bosch_torch_task_read_jsonl(path.c_str())), BOSCH_OK);
    if (r) {
        EXPECT(r->task.samples.size() == a->task.samples.size());
        for (size_t i = 0; i < r->task.samples.size() && i < a->task.samples.size(); i++)
            EXPECT(r->task.samples[i].prompt == a->task.samples[i].prompt &&
                   r->task.samples[i].answer == a->task.samples[i].answer);
    }
    bosch_torch_task_free(r);
    EXPECT(bosch_torch_task_write_jsonl(a, (g_tmp + "/no/such/dir/x.jsonl").c_str()) ==
           BOSCH_E_IO);
    EXPECT(bosch_torch_task_write_jsonl(nullptr, path.c_str()) == BOSCH_E_INVALID);
    bosch_torch_task_free(a);
    bosch_torch_task_free(b);
    bosch_torch_task_free(c);

    // Argument errors.
    bosch_torch_task *t = nullptr;
    EXPECT_ST(created(t = bosch_torch_task_create_niah(3, 64, 1, 1, 1, 1, 0, 1, 0)),
              BOSCH_E_INVALID);
    EXPECT_ST(created(t = bosch_torch_task_create_niah(40, 9, 1, 1, 2, 3, 0, 1, 0)),
              BOSCH_E_INVALID);
    EXPECT_MSG("too short");
    EXPECT_ST(created(t = bosch_torch_task_create_niah(40, 64, 1, 1, 1, 1, 0.7, 0.2, 0)),
              BOSCH_E_INVALID);
    EXPECT_ST(created(t = bosch_torch_task_create_niah(40, 64, 1, 1, 1, 1, -0.1, 0.2, 0)),
              BOSCH_E_INVALID);
    EXPECT_ST(created(t = bosch_torch_task_create_niah(40, 64, 0, 1, 1, 1, 0, 1, 0)),
              BOSCH_E_INVALID);
    EXPECT_ST(created(t = bosch_torch_task_create_niah(5, 64, 1, 3, 1, 1, 0, 1, 0)),
              BOSCH_E_INVALID); // 2 possible keys for 3 needles
    EXPECT_MSG("distinct keys");
    EXPECT(t == nullptr);
    // The reason names the creator.
    EXPECT_MSG("bosch_torch_task_create_niah: ");
}

static void test_jsonl_errors() {
    struct Case {
        const char *text;
        int status;
        const char *word;
    } cases[] = {
        {"{\"prompt\":[1,2,3],\"answer\":[4]}\n{\"prompt\":[1,2,3],\"answer\":[5,6]}\n", BOSCH_OK,
         nullptr},
        {"\n  {\"prompt\":[1,2],\"answer\":[4]}  \r\n\n", BOSCH_OK, nullptr},
        {"{\"prompt\":[1,2],\"answer\":[4],\"id\":\"x\"}\n", BOSCH_OK, nullptr},
        {"{\"prompt\":[1,2,3],\"answer\":[4]}\n{\"prompt\":[1,2],\"answer\":[4]}\n",
         BOSCH_OK, nullptr}, // prompts of different lengths
        {"{\"prompt\":[1,2,3],\"answer\":[4]\n", BOSCH_E_INVALID, ":1: bad JSON"},
        {"{\"prompt\":[1,2,3],\"answer\":[4]} x\n", BOSCH_E_INVALID, "bad JSON"},
        {"{\"prompt\":[1,2.5],\"answer\":[4]}\n", BOSCH_E_INVALID, "not an integer"},
        {"{\"prompt\":[1,\"2\"],\"answer\":[4]}\n", BOSCH_E_INVALID, "not an integer"},
        {"{\"prompt\":[1,-2],\"answer\":[4]}\n", BOSCH_E_INVALID, "not a token id"},
        {"{\"prompt\":[1,2],\"answer\":[4294967296]}\n", BOSCH_E_INVALID, "not a token id"},
        {"{\"prompt\":[1,2],\"answer\":[99999999999999999999999]}\n", BOSCH_E_INVALID, ""},
        {"{\"prompt\":[1,2]}\n", BOSCH_E_INVALID, "missing \"answer\""},
        {"{\"prompt\":[1,2],\"answer\":[]}\n", BOSCH_E_INVALID, "empty"},
        {"{\"prompt\":[],\"answer\":[1]}\n", BOSCH_E_INVALID, "empty"},
        {"{\"prompt\":7,\"answer\":[1]}\n", BOSCH_E_INVALID, "array"},
        {"[1,2,3]\n", BOSCH_E_INVALID, "object"},
        {"", BOSCH_E_INVALID, "no samples"},
        {"\n\n", BOSCH_E_INVALID, "no samples"},
    };
    int i = 0;
    for (const Case &c : cases) {
        std::string path = g_tmp + "/case" + std::to_string(i++) + ".jsonl";
        write_file(path, c.text);
        bosch_torch_task *t = nullptr;
        err[0] = '\0';
        int st = created(t = bosch_torch_task_read_jsonl(path.c_str()));
        g_checks++;
        if (st != c.status || (c.word && !std::strstr(err, c.word))) {
            g_failures++;
            std::fprintf(stderr, "jsonl case %d: got %s '%s', expected %s '%s'\n", i - 1,
                         bosch_err_name(st), err, bosch_err_name(c.status),
                         c.word ? c.word : "");
        }
        EXPECT((st == BOSCH_OK) == (t != nullptr));
        bosch_torch_task_free(t);
    }
    bosch_torch_task *t = nullptr;
    EXPECT_ST(created(t = bosch_torch_task_read_jsonl((g_tmp + "/missing.jsonl").c_str())),
              BOSCH_E_IO);
    EXPECT_MSG("bosch_torch_task_read_jsonl: ");
    EXPECT_MSG("missing.jsonl");
    EXPECT_ST(created(t = bosch_torch_task_read_jsonl(nullptr)), BOSCH_E_INVALID);
    EXPECT_MSG("bosch_torch_task_read_jsonl: path must not be NULL");
}

// A tiny checkpoint (gqa_spec) whose config makes layer 1 of 3 slide over 3
// tokens in every group (use_sliding_window, layer_types).
static std::string write_hybrid_model(const std::string &name,
                                      std::vector<const char *> types = {
                                          "full_attention", "sliding_attention",
                                          "full_attention"}) {
    const TinySpec spec = gqa_spec();
    const std::string dir = write_model(name, spec);
    json_object *r = json_tokener_parse(tiny_config_json(spec).c_str());
    json_object_object_add(r, "use_sliding_window", json_object_new_boolean(1));
    json_object_object_add(r, "sliding_window", json_object_new_int(3));
    json_object *lt = json_object_new_array();
    for (const char *t : types)
        json_object_array_add(lt, json_object_new_string(t));
    json_object_object_add(r, "layer_types", lt);
    EXPECT(write_file(dir + "/config.json", json_object_to_json_string(r)).empty());
    json_object_put(r);
    return dir;
}

// A hybrid config (layer 1 of 3 sliding over 3 tokens) runs that layer as a
// plain model runs it with its units SWA, window 3 and no sink, whatever
// mask, window and sink the forward is given; the problem fixes its units.
static void test_hybrid(const std::string &plain_dir) {
    const std::string dir = write_hybrid_model("hybrid");

    bosch_torch_model *h = nullptr, *p = nullptr;
    EXPECT_ST(created(h = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    EXPECT_ST(created(p = bosch_torch_model_open(plain_dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    if (!h || !p) {
        bosch_torch_model_free(h);
        bosch_torch_model_free(p);
        return;
    }
    EXPECT(bosch_torch_model_sliding_window(h) == 3);
    EXPECT(bosch_torch_model_sliding_window(p) == 0);
    EXPECT(bosch_torch_model_layer_sliding(h, 0) == 0);
    EXPECT(bosch_torch_model_layer_sliding(h, 1) == 1);
    EXPECT(bosch_torch_model_layer_sliding(h, 2) == 0);
    EXPECT(bosch_torch_model_layer_sliding(h, 3) == BOSCH_E_INVALID);
    EXPECT(bosch_torch_model_layer_sliding(nullptr, 0) == BOSCH_E_INVALID);
    EXPECT(bosch_torch_model_sliding_window(nullptr) == 0);
    bosch_problem *pr = bosch_torch_model_problem(h);
    EXPECT(pr != nullptr);
    if (pr) {
        for (uint32_t l = 0; l < 3; l++)
            for (uint32_t g = 0; g < 2; g++)
                EXPECT(bosch_problem_unit_fix(pr, l, g) ==
                       (l == 1 ? BOSCH_FIX_SWA : BOSCH_FIX_NONE));
        bosch_problem_free(pr);
    }

    const size_t B = 1, T = 10, V = 50;
    std::vector<int32_t> tok = random_tokens(B * T, 50, 11);
    std::vector<int32_t> pos(T);
    for (size_t i = 0; i < T; i++)
        pos[i] = int32_t(i);
    std::vector<float> ref(T * V), full(T * V), a(T * V), b(T * V);
    const uint8_t layer1[6] = {0, 0, 1, 1, 0, 0};
    EXPECT_ST(forward(p, tok.data(), B, T, layer1, 3, 0, pos.data(), T, ref.data()), BOSCH_OK);
    EXPECT_ST(forward(p, tok.data(), B, T, nullptr, 1, 0, pos.data(), T, full.data()), BOSCH_OK);
    EXPECT(max_diff(ref.data(), full.data(), ref.size()) > 1e-4); // the window matters here
    // All full, and other windows, sinks and masks of layer 1: the config decides.
    EXPECT_ST(forward(h, tok.data(), B, T, nullptr, 1, 0, pos.data(), T, a.data()), BOSCH_OK);
    EXPECT(std::memcmp(ref.data(), a.data(), ref.size() * sizeof(float)) == 0);
    const uint8_t mixed[6] = {0, 0, 1, 0, 0, 0};
    EXPECT_ST(forward(h, tok.data(), B, T, mixed, 100, 4, pos.data(), T, b.data()), BOSCH_OK);
    EXPECT(std::memcmp(ref.data(), b.data(), ref.size() * sizeof(float)) == 0);
    // Units of the other layers still follow the mask.
    const uint8_t layer0[6] = {1, 1, 0, 0, 0, 0};
    EXPECT_ST(forward(h, tok.data(), B, T, layer0, 2, 0, pos.data(), T, b.data()), BOSCH_OK);
    EXPECT(max_diff(ref.data(), b.data(), ref.size()) > 1e-4);
    bosch_torch_model_free(h);
    bosch_torch_model_free(p);
}

// Banded SWA attention (the default) against the all-masked reference
// (BOSCH_TORCH_ATTENTION=masked, read when a model is built): two models of
// one checkpoint in one process, same logits within 1e-5 (f32) for windows,
// sinks and prompt lengths at the band's edges (T == window, window + 1,
// T < window, window 1, sinks overlapping the band or beyond T), mixed
// per-element masks (an all-full and an all-SWA element in one batch), tiny
// and default tiles, and a hybrid config (a layer the config makes sliding).
static void test_banded_equals_masked(const std::string &dir) {
    // mode: "masked", "fused" or "tiled"; "" = the device's default.
    auto load = [&](const std::string &d, const char *mode) {
        const ScopedEnv attention("BOSCH_TORCH_ATTENTION", *mode ? mode : nullptr);
        return Model::load(d, torch::Device(test_device()), torch::kFloat32);
    };
    // The hybrid checkpoint: layer 1 slides over 3 tokens in every group.
    const std::string hdir = write_hybrid_model("hybrid_banded");
    struct Geo {
        int64_t T, window, sink;
    };
    const Geo geos[] = {{1, 1, 0},   {5, 8, 3},   {8, 8, 0},    {8, 8, 2},   {9, 8, 0},
                        {9, 8, 2},   {40, 1, 0},  {40, 1, 3},   {70, 16, 20}, {70, 4, 7},
                        {130, 64, 0}, {130, 64, 5}, {20, 4, 50}, {66, 65, 1},
                        {300, 17, 3}, {100, 40, 0}};
    const int64_t blocks[] = {0, 4096}; // 0: the model's default; 4096: tiles of a few queries
    int compared = 0, mattered = 0, others = 0;
    for (const std::string &d : {dir, hdir}) {
        auto banded = load(d, ""), masked = load(d, "masked");
        EXPECT(!banded->masked_attention());
        EXPECT(masked->masked_attention());
        EXPECT(banded->fused_band() == fused_available());
        // The other SWA kernel of this libtorch (the tiles where the fused
        // one is the default), checked the same way; none where there is no
        // fused one.
        std::unique_ptr<Model> other;
        if (fused_available()) {
            other = load(d, banded->fused_band() ? "tiled" : "fused");
            EXPECT(other->fused_band() != banded->fused_band());
        }
        const int64_t L = banded->layers(), G = banded->kv_heads(), V = banded->vocab();
        const int64_t def = banded->block_bytes();
        std::mt19937 rng(21);
        for (const Geo &geo : geos)
            for (int64_t B : {int64_t(1), int64_t(4)})
                for (int64_t bb : blocks) {
                    const int64_t T = geo.T;
                    torch::Tensor tok = to_i64(random_tokens(size_t(B * T), int32_t(V),
                                                             uint32_t(rng())),
                                               B, T);
                    // B == 4: element 0 all full, 1 all SWA, 2 and 3 mixed
                    // (3: layer-wise different groups); B == 1: all SWA.
                    torch::Tensor units = torch::zeros({B, L, G}, torch::kBool);
                    auto acc = units.accessor<bool, 3>();
                    for (int64_t b = 0; b < B; b++)
                        for (int64_t l = 0; l < L; l++)
                            for (int64_t g = 0; g < G; g++)
                                acc[b][l][g] = B == 1 || b == 1 ||
                                               (b == 2 && rng() % 2) ||
                                               (b == 3 && (l + g) % 2 == 0);
                    Window w;
                    w.window = geo.window;
                    w.sink = geo.sink;
                    torch::Tensor pos = torch::arange(T, torch::kInt64);
                    const torch::Device dev(test_device());
                    tok = tok.to(dev), units = units.to(dev), pos = pos.to(dev);
                    banded->set_block_bytes(bb ? bb : def);
                    masked->set_block_bytes(bb ? bb : def);
                    torch::Tensor a = banded->forward(tok, units, w, pos);
                    torch::Tensor m = masked->forward(tok, units, w, pos);
                    double diff = max_diff(a, m);
                    if (other) {
                        other->set_block_bytes(bb ? bb : def);
                        const double od = max_diff(other->forward(tok, units, w, pos), m);
                        if (!(od < 1e-5))
                            std::fprintf(stderr, "%s kernel: ",
                                         other->fused_band() ? "fused" : "tiled");
                        diff = std::max(diff, od);
                        others++;
                    }
                    if (bb == 0) {
                        torch::Tensor f = masked->forward(tok, torch::Tensor(), w, pos);
                        compared++;
                        if (max_diff(a, f) > 1e-3)
                            mattered++;
                    }
                    if (!(diff < 1e-5)) {
                        std::fprintf(stderr,
                                     "banded vs masked (%s): B=%lld T=%lld window=%lld "
                                     "sink=%lld block=%lld: max abs diff %.3g\n",
                                     d == dir ? "plain" : "hybrid", (long long)B, (long long)T,
                                     (long long)geo.window, (long long)geo.sink,
                                     (long long)(bb ? bb : def), diff);
                    }
                    EXPECT(diff < 1e-5);
                }
    }
    // The windows matter in most of these forwards (else the test is vacuous).
    EXPECT(mattered >= compared / 3);
    EXPECT(others == (fused_available() ? 2 * compared : 0));
    std::printf("banded vs masked: %d forwards compared, %d where the mask matters, %d through "
                "the other SWA kernel\n",
                compared, mattered, others);
}

// Model::last_layer_at (the evaluator's last layer at the scored rows only)
// equals the whole last layer gathered at those rows, on the plain and the
// hybrid checkpoint (whose last layer the config slides), for full, sliding
// and mixed units per batch element, sinks, windows at and beyond the
// sequence, rows at both ends and repeated, and row tiles of one row; then
// the evaluator's scores with the lever on and off.
static void test_last_layer_at(const std::string &dir) {
    const torch::Device dev(test_device());
    // The hybrid checkpoint whose last layer slides over 3 tokens.
    const std::string hdir = write_hybrid_model(
        "hybrid_last", {"full_attention", "full_attention", "sliding_attention"});
    struct Geo {
        int64_t T, window, sink;
    };
    const Geo geos[] = {{1, 1, 0},   {9, 8, 2},  {40, 1, 3}, {70, 16, 20},
                        {20, 4, 50}, {66, 65, 1}, {50, 5, 0}, {33, 8, 1}};
    std::mt19937 rng(5);
    double worst = 0;
    int mattered = 0, compared = 0;
    for (const std::string &d : {dir, hdir}) {
        auto m = Model::load(d, dev, torch::kFloat32);
        const int64_t L = m->layers(), G = m->kv_heads(), V = m->vocab(), B = 4;
        for (const Geo &geo : geos)
            for (int64_t bb : {int64_t(0), int64_t(4096)}) {
                const int64_t T = geo.T;
                torch::Tensor tok =
                    to_i64(random_tokens(size_t(B * T), int32_t(V), uint32_t(rng())), B, T);
                torch::Tensor units = torch::zeros({B, L, G}, torch::kBool);
                auto acc = units.accessor<bool, 3>();
                for (int64_t b = 0; b < B; b++)
                    for (int64_t l = 0; l < L; l++)
                        for (int64_t g = 0; g < G; g++)
                            acc[b][l][g] = b == 1 || (b == 2 && rng() % 2) ||
                                           (b == 3 && (l + g) % 2 == 0);
                // Rows per element: the last position, the first, a repeat,
                // and random ones.
                const int64_t R = 5;
                torch::Tensor rows = torch::empty({B, R}, torch::kInt64);
                auto ra = rows.accessor<int64_t, 2>();
                for (int64_t b = 0; b < B; b++) {
                    ra[b][0] = T - 1, ra[b][1] = 0, ra[b][2] = T - 1;
                    for (int64_t j = 3; j < R; j++)
                        ra[b][j] = int64_t(rng() % uint32_t(T));
                }
                Window w;
                w.window = geo.window;
                w.sink = geo.sink;
                tok = tok.to(dev), units = units.to(dev), rows = rows.to(dev);
                const int64_t def = m->block_bytes();
                m->set_block_bytes(bb ? bb : def);
                torch::Tensor h = m->run_layers(m->embed(tok), units, w, 0, L - 1);
                torch::Tensor whole = m->run_layers(h, units, w, L - 1, L);
                torch::Tensor want =
                    whole.gather(1, rows.unsqueeze(2).expand({B, R, whole.size(2)}));
                torch::Tensor got = m->last_layer_at(h, units, w, rows);
                m->set_block_bytes(def);
                EXPECT(got.sizes() == want.sizes());
                const double diff = max_diff(got, want);
                if (!(diff < 1e-5))
                    std::fprintf(stderr, "last_layer_at (%s): T=%lld window=%lld sink=%lld "
                                         "block=%lld: max abs diff %.3g\n",
                                 d == dir ? "plain" : "hybrid", (long long)T,
                                 (long long)geo.window, (long long)geo.sink, (long long)bb, diff);
                EXPECT(diff < 1e-5);
                worst = std::max(worst, diff);
                // The plain model's last-layer units matter here (else
                // vacuous; the hybrid's last layer slides whatever they say).
                if (d == dir) {
                    torch::Tensor full = m->run_layers(h, torch::Tensor(), w, L - 1, L);
                    compared++;
                    if (max_diff(full, whole) > 1e-3)
                        mattered++;
                }
            }
        bool refused = false; // rows of another batch size
        try {
            m->last_layer_at(torch::zeros({1, 3, m->hidden()}).to(dev), torch::Tensor(), Window(),
                             torch::zeros({2, 1}, torch::kInt64).to(dev));
        } catch (const std::exception &) {
            refused = true;
        }
        EXPECT(refused);
    }
    EXPECT(mattered >= compared / 3);

    // The evaluator, lever on (the default) and off, on answers of two
    // tokens, with and without the cache.
    bosch_torch_task *task = nullptr;
    EXPECT_ST(created(task = bosch_torch_task_create_niah(50, 24, 5, 3, 2, 2, 0.5, 1.0, 4)),
              BOSCH_OK);
    bosch_torch_model *cm = nullptr;
    EXPECT_ST(created(cm = bosch_torch_model_open_device(dir.c_str(), test_device(),
                                                         BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    if (task && cm) {
        const size_t U = 6;
        const std::vector<uint8_t> masks = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1,
                                            0, 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1};
        for (int metric : {BOSCH_TORCH_METRIC_LOGPROB, BOSCH_TORCH_METRIC_EXACT})
            for (int cache : {0, 1}) {
                std::vector<double> on(4), off(4);
                for (bool lever : {true, false}) {
                    bosch_torch_evaluator *e = bosch_torch_evaluator_open(cm, task, 3, 1, metric);
                    EXPECT(e != nullptr);
                    if (!e)
                        continue;
                    EXPECT(e->ev->last_layer_at_rows()); // the default
                    e->ev->set_last_layer_at_rows(lever);
                    EXPECT_ST(bosch_torch_evaluator_set_prefix_cache(e, cache), BOSCH_OK);
                    EXPECT_ST(bosch_torch_batch_eval(masks.data(), 4, U, (lever ? on : off).data(),
                                                     e),
                              BOSCH_OK);
                    bosch_torch_evaluator_free(e);
                }
                for (size_t c = 0; c < 4; c++)
                    EXPECT(std::fabs(on[c] - off[c]) < 1e-5);
            }
    }
    bosch_torch_model_free(cm);
    bosch_torch_task_free(task);
    std::printf("last layer at scored rows: max |diff| %.3g over %zu forwards (%d of the plain "
                "model's %d where the last layer's units matter)\n",
                worst, 2 * std::size(geos) * 2, mattered, compared);
}

// Prompts longer than the model's max_position_embeddings are refused when
// the evaluator opens, naming the sample and both lengths.
static void test_max_positions() {
    TinySpec spec = gqa_spec();
    const std::string dir = write_model("maxpos", spec);
    std::string cfg = read_file(dir + "/config.json");
    const std::string from = "\"max_position_embeddings\": 40960";
    const size_t at = cfg.find(from);
    EXPECT(at != std::string::npos);
    if (at == std::string::npos)
        return;
    cfg.replace(at, from.size(), "\"max_position_embeddings\": 40");
    EXPECT(write_file(dir + "/config.json", cfg).empty());
    bosch_torch_model *m = nullptr;
    EXPECT_ST(created(m = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                 BOSCH_TORCH_DTYPE_F32)),
              BOSCH_OK);
    bosch_torch_task *fits = nullptr, *longer = nullptr;
    EXPECT_ST(created(fits = bosch_torch_task_create_niah(50, 38, 2, 1, 2, 2, 0.0, 1.0, 5)),
              BOSCH_OK);
    EXPECT_ST(created(longer = bosch_torch_task_create_niah(50, 48, 2, 1, 2, 2, 0.0, 1.0, 5)),
              BOSCH_OK);
    bosch_torch_evaluator *e = nullptr;
    EXPECT_ST(created(e = bosch_torch_evaluator_open(m, fits, 8, 0, 0)), BOSCH_OK);
    bosch_torch_evaluator_free(e);
    EXPECT_ST(created(e = bosch_torch_evaluator_open(m, longer, 8, 0, 0)), BOSCH_E_INVALID);
    EXPECT_MSG("task sample 0 needs");
    EXPECT_MSG("more than the model's max_position_embeddings (40)");
    bosch_torch_evaluator_free(e);
    bosch_torch_task_free(fits);
    bosch_torch_task_free(longer);
    bosch_torch_model_free(m);
}

// Results do not depend on libtorch's thread count (torch.h): logits of a
// model large enough for libtorch to split its element-wise ops and softmax
// (tensors above its grain size) are bit-identical at 1 and 2 threads.
static void test_threads_same_result() {
    TinySpec spec;
    spec.layers = 2;
    spec.hidden = 128;
    spec.heads = 4;
    spec.kv_heads = 2;
    spec.head_dim = 32;
    spec.intermediate = 256;
    spec.vocab = 300;
    spec.seed = 11;
    auto m = Model::load(write_model("threads", spec), torch::Device(test_device()),
                         torch::kFloat32);
    const int64_t B = 2, T = 600;
    torch::Tensor tok = to_i64(random_tokens(size_t(B * T), 300, 4), B, T);
    torch::Tensor units = torch::zeros({B, 2, 2}, torch::kBool);
    units[0][1][0] = true; // element 0 mixed, element 1 all full
    Window w;
    w.window = 64;
    w.sink = 4;
    torch::Tensor pos = torch::arange(T, torch::kInt64);
    const torch::Device dev(test_device());
    tok = tok.to(dev), units = units.to(dev), pos = pos.to(dev);
    const int before = at::get_num_threads();
    at::set_num_threads(1);
    torch::Tensor one = m->forward(tok, units, w, pos);
    at::set_num_threads(2);
    torch::Tensor two = m->forward(tok, units, w, pos);
    at::set_num_threads(before);
    EXPECT(torch::equal(one, two));
    EXPECT(one.abs().max().item<double>() > 0);
}

int main() {
    auto t0 = std::chrono::steady_clock::now();
    torch::manual_seed(0);
    g_tmp = make_temp_dir("model");
    try {
        const std::string dir = write_model("gqa", gqa_spec());
        test_load_and_errors(dir);
        bosch_torch_model *m = nullptr;
        // The checks on a model handle run on BOSCH_TEST_DEVICE (the CPU
        // unless tools/cuda/check.sh asks for CUDA).
        std::printf("test_model: device-portable checks on %s\n", test_device());
        EXPECT_ST(created(m = bosch_torch_model_open_device(dir.c_str(), test_device(),
                                                            BOSCH_TORCH_DTYPE_F32)),
                  BOSCH_OK);
        if (m) {
            test_window_covering_is_full(m);
            test_batched_equals_sequential(m);
            test_evaluator(m);
            test_mixed_lengths(m);
            test_reference(m);
            test_cache_budget(m);
            test_request_eval(m);
            test_optimizer(m);
        }
        bosch_torch_model_free(m);
        test_unit_locality(dir);
        test_hybrid(dir);
        test_banded_equals_masked(dir);
        test_last_layer_at(dir);
        test_threads_same_result();
        test_max_positions();
        test_gqa_mapping(gqa_spec());
        test_niah();
        test_niah_ids();
        test_memory_and_devices(dir);
        test_jsonl_errors();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "exception: %s\n", e.what());
        g_failures++;
    }
    remove_tree(g_tmp);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("test_model: %d checks, %d failures, %.1f s\n", g_checks, g_failures, s);
    return g_failures == 0 ? 0 : 1;
}
