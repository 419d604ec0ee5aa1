// libbosch-torch static head scores (bosch_torch_model_scores): LOCALITY against its
// closed form on uniform attention; LOCALITY, RETRIEVAL and ECHO_INDUCTION
// against brute force over the probabilities of an independent f64 forward
// written here; DUO_ON_THE_FLY against kvpress's steps written out in f64;
// FISHER against finite differences of the gated loss; errors.
// Plain main: exits non-zero on failure. Tiny random checkpoints only (CPU).
#include "tiny_checkpoint.hpp"
#include "torch/evaluator.hpp"
#include "torch/model.hpp"
#include "torch/scorers.hpp"
#include "torch/tasks.hpp"

#include "bosch/torch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <random>
#include <vector>

using namespace bosch_torch;
using namespace bosch_torch_test;

#include "expect.hpp"
static std::string g_tmp;

// GQA with 3 query heads per KV head.
static TinySpec gqa_spec() { return bosch_torch_test::gqa_spec(11); }

static ModelConfig config_of(const TinySpec &spec) {
    return tiny_config(spec);
}

static bosch_torch_model *wrap(std::unique_ptr<Model> m) {
    auto *h = new bosch_torch_model;
    h->model = std::move(m);
    return h;
}

static Sample sample(const std::vector<int32_t> &prompt, const std::vector<int32_t> &answer) {
    Sample s;
    s.prompt = prompt;
    s.answer = answer;
    return s;
}

static std::vector<int32_t> fed(const Sample &s) {
    std::vector<int32_t> t = s.prompt;
    t.insert(t.end(), s.answer.begin(), s.answer.end() - 1);
    return t;
}

// Scores through the C API; empty vectors on failure.
static int scores(bosch_torch_model *m, const bosch_torch_task *t, int scorer, uint32_t window,
                  uint32_t sink, std::vector<double> &head, std::vector<double> &unit) {
    uint32_t L = 0, G = 0, r = 0;
    bosch_torch_model_shape(m, &L, &G, &r, nullptr);
    head.assign(size_t(L * G * r), -1.0);
    unit.assign(size_t(L * G), -1.0);
    return model_st(
        bosch_torch_model_scores(m, t, scorer, window, sink, head.data(), unit.data()), m);
}

// bosch_torch_model_forward, with the model's last error copied into err.
static int forward(bosch_torch_model *m, const int32_t *tokens, size_t batch, size_t len,
                   const uint8_t *masks, uint32_t window, uint32_t sink, const int32_t *positions,
                   size_t npos, float *logits) {
    return model_st(bosch_torch_model_forward(m, tokens, batch, len, masks, window, sink,
                                              positions, npos, logits),
                    m);
}

static void expect_unit_max(const std::vector<double> &head, const std::vector<double> &unit,
                            size_t r) {
    for (size_t u = 0; u < unit.size(); u++) {
        double best = head[u * r];
        for (size_t i = 1; i < r; i++)
            best = std::max(best, head[u * r + i]);
        EXPECT(unit[u] == best);
    }
}

// ---------------------------------------------------------------------------
// An independent f64 forward: per-head loops, the half-split RoPE written out,
// RMSNorm as x / sqrt(mean(x^2) + eps) * w. Returns each layer's attention
// probabilities [heads, T, T]; with `means`, also each layer's normed
// queries [heads, D] and keys [kv_heads, D] before RoPE, averaged over the
// positions (what kvpress's on-the-fly DuoAttention score starts from).

struct RefMeans {
    std::vector<torch::Tensor> q, k;
};

static std::vector<torch::Tensor> ref_probs(const TensorMap &w32, const TinySpec &spec,
                                            const std::vector<int32_t> &tokens,
                                            RefMeans *means = nullptr) {
    auto W = [&](const std::string &n) { return w32.at(n).to(torch::kFloat64); };
    auto lw = [&](int64_t l, const char *n) {
        return W("model.layers." + std::to_string(l) + "." + n);
    };
    const int64_t T = int64_t(tokens.size()), D = spec.head_dim, nH = spec.heads, G = spec.kv_heads,
                  r = nH / G, half = D / 2;
    const double eps = spec.rms_norm_eps;
    auto rms = [&](const torch::Tensor &x, const torch::Tensor &wt) {
        return x / torch::sqrt((x * x).mean(-1, true) + eps) * wt;
    };
    torch::Tensor cosv = torch::empty({T, half}, torch::kFloat64), sinv = torch::empty_like(cosv);
    for (int64_t t = 0; t < T; t++)
        for (int64_t i = 0; i < half; i++) {
            double a = double(t) * std::pow(spec.rope_theta, -2.0 * double(i) / double(D));
            cosv[t][i] = std::cos(a);
            sinv[t][i] = std::sin(a);
        }
    auto rope = [&](const torch::Tensor &x) { // [T, D]
        torch::Tensor x1 = x.narrow(1, 0, half), x2 = x.narrow(1, half, half);
        return torch::cat({x1 * cosv - x2 * sinv, x2 * cosv + x1 * sinv}, 1);
    };
    std::vector<int64_t> tk(tokens.begin(), tokens.end());
    torch::Tensor x = W("model.embed_tokens.weight").index_select(0, torch::tensor(tk));
    torch::Tensor causal = torch::ones({T, T}, torch::kBool).tril();
    std::vector<torch::Tensor> out;
    for (int64_t l = 0; l < spec.layers; l++) {
        torch::Tensor xn = rms(x, lw(l, "input_layernorm.weight"));
        torch::Tensor q = torch::matmul(xn, lw(l, "self_attn.q_proj.weight").t());
        torch::Tensor k = torch::matmul(xn, lw(l, "self_attn.k_proj.weight").t());
        torch::Tensor v = torch::matmul(xn, lw(l, "self_attn.v_proj.weight").t());
        torch::Tensor qn = lw(l, "self_attn.q_norm.weight"), kn = lw(l, "self_attn.k_norm.weight");
        torch::Tensor probs = torch::empty({nH, T, T}, torch::kFloat64);
        std::vector<torch::Tensor> heads;
        if (means) {
            torch::Tensor mq = torch::empty({nH, D}, torch::kFloat64);
            torch::Tensor mk = torch::empty({G, D}, torch::kFloat64);
            for (int64_t h = 0; h < nH; h++)
                mq[h] = rms(q.narrow(1, h * D, D), qn).mean(0);
            for (int64_t g = 0; g < G; g++)
                mk[g] = rms(k.narrow(1, g * D, D), kn).mean(0);
            means->q.push_back(mq);
            means->k.push_back(mk);
        }
        for (int64_t h = 0; h < nH; h++) {
            const int64_t g = h / r;
            torch::Tensor qh = rope(rms(q.narrow(1, h * D, D), qn));
            torch::Tensor kh = rope(rms(k.narrow(1, g * D, D), kn));
            torch::Tensor s = torch::matmul(qh, kh.t()) / std::sqrt(double(D));
            s = s.masked_fill(causal.logical_not(), -INFINITY);
            torch::Tensor p = torch::softmax(s, 1);
            probs[h] = p;
            heads.push_back(torch::matmul(p, v.narrow(1, g * D, D)));
        }
        out.push_back(probs);
        x = x + torch::matmul(torch::cat(heads, 1), lw(l, "self_attn.o_proj.weight").t());
        torch::Tensor xm = rms(x, lw(l, "post_attention_layernorm.weight"));
        torch::Tensor gt = torch::matmul(xm, lw(l, "mlp.gate_proj.weight").t());
        torch::Tensor up = torch::matmul(xm, lw(l, "mlp.up_proj.weight").t());
        x = x + torch::matmul(gt * torch::sigmoid(gt) * up, lw(l, "mlp.down_proj.weight").t());
    }
    return out;
}

static double prob(const torch::Tensor &p, int64_t h, int64_t t, int64_t s) {
    return p.accessor<double, 3>()[h][t][s];
}

// kvpress's duo_attention_on_the_fly written out in f64 from the reference's
// mean queries and keys: RoPE at explicit angles, position by position.
static std::vector<double> ref_duo(const TensorMap &w, const TinySpec &spec,
                                   const std::vector<std::vector<int32_t>> &prompts) {
    const int64_t nH = spec.heads, r = spec.heads / spec.kv_heads, D = spec.head_dim, Q = 500;
    std::vector<double> out(size_t(spec.layers * nH), 0.0);
    auto rot = [&](const double *x, int64_t pos, double *y) {
        for (int64_t i = 0; i < D / 2; i++) {
            double a = double(pos) * std::pow(spec.rope_theta, -2.0 * double(i) / double(D));
            y[i] = x[i] * std::cos(a) - x[i + D / 2] * std::sin(a);
            y[i + D / 2] = x[i + D / 2] * std::cos(a) + x[i] * std::sin(a);
        }
    };
    for (const auto &p : prompts) {
        RefMeans mean;
        ref_probs(w, spec, p, &mean);
        for (int64_t l = 0; l < spec.layers; l++)
            for (int64_t h = 0; h < nH; h++) {
                torch::Tensor qt = mean.q[size_t(l)][h].contiguous();
                torch::Tensor kt = mean.k[size_t(l)][h / r].contiguous();
                std::vector<double> q(static_cast<size_t>(D)), k(q), logit(static_cast<size_t>(Q));
                rot(qt.data_ptr<double>(), Q - 1, q.data());
                double top = -INFINITY, z = 0;
                for (int64_t j = 0; j < Q; j++) {
                    rot(kt.data_ptr<double>(), j, k.data());
                    double dot = 0;
                    for (int64_t i = 0; i < D; i++)
                        dot += q[size_t(i)] * k[size_t(i)];
                    logit[size_t(j)] = dot / std::sqrt(double(D));
                    top = std::max(top, logit[size_t(j)]);
                }
                for (double v : logit)
                    z += std::exp(v - top);
                double cum = 0, area = 0;
                for (double v : logit) {
                    cum += std::exp(v - top) / z;
                    area += cum;
                }
                out[size_t(l * nH + h)] += area / double(Q) / double(prompts.size());
            }
    }
    return out;
}

// DUO_ON_THE_FLY against ref_duo on prompts of two lengths; the unit score
// is the mean of its heads; window and sink do not change it.
static void test_duo(bosch_torch_model *m, const TensorMap &w, const TinySpec &spec) {
    bosch_torch_task task;
    std::vector<std::vector<int32_t>> prompts;
    for (uint64_t i = 0; i < 2; i++) {
        std::vector<int32_t> seq = echo_sequence(spec.vocab, 11 + 6 * int64_t(i), 40 + i);
        prompts.push_back(seq);
        task.task.samples.push_back(sample(seq, {int32_t(i + 1)}));
    }
    std::vector<double> want = ref_duo(w, spec, prompts), head, unit, head2, unit2;
    EXPECT_ST(scores(m, &task, BOSCH_TORCH_SCORER_DUO_ON_THE_FLY, 3, 1, head, unit), BOSCH_OK);
    EXPECT_ST(scores(m, &task, BOSCH_TORCH_SCORER_DUO_ON_THE_FLY, 7, 0, head2, unit2), BOSCH_OK);
    double d = 0, spread = 0;
    for (size_t k = 0; k < want.size(); k++) {
        d = std::max(d, std::fabs(head[k] - want[k]));
        spread = std::max(spread, std::fabs(want[k] - want[0]));
    }
    std::printf("duo-on-the-fly vs f64 kvpress reference: max abs diff %.3g (spread %.3g)\n", d,
                spread);
    EXPECT(d < 1e-5);
    EXPECT(spread > 1e-3); // the heads differ: the comparison can fail
    EXPECT(head == head2 && unit == unit2);
    const size_t r = size_t(spec.heads / spec.kv_heads);
    for (size_t u = 0; u < unit.size(); u++) {
        double sum = 0;
        for (size_t i = 0; i < r; i++)
            sum += head[u * r + i];
        EXPECT(std::fabs(unit[u] - sum / double(r)) < 1e-12);
    }
}

// ---------------------------------------------------------------------------

static void test_names() {
    EXPECT(std::strcmp(bosch_torch_scorer_name(BOSCH_TORCH_SCORER_LOCALITY), "locality") == 0);
    EXPECT(std::strcmp(bosch_torch_scorer_name(BOSCH_TORCH_SCORER_RETRIEVAL), "retrieval") == 0);
    EXPECT(std::strcmp(bosch_torch_scorer_name(BOSCH_TORCH_SCORER_ECHO_INDUCTION),
                       "echo-induction") == 0);
    EXPECT(std::strcmp(bosch_torch_scorer_name(BOSCH_TORCH_SCORER_FISHER), "fisher") == 0);
    EXPECT(std::strcmp(bosch_torch_scorer_name(BOSCH_TORCH_SCORER_DUO_ON_THE_FLY),
                       "duo-on-the-fly") == 0);
    EXPECT(bosch_torch_scorer_name(99) == nullptr);
    EXPECT(bosch_torch_scorer_name(-1) == nullptr);
    EXPECT(bosch_torch_scorer_name(5) == nullptr);
}

// Zero query projections: every head attends uniformly to keys 0..t, so the
// share inside the window + sink at t is (window + min(sink, t - window + 1)) /
// (t + 1). Positions t >= window of both fed sequences are pooled.
static void test_locality_uniform(const TinySpec &spec) {
    TensorMap w = tiny_qwen3_tensors(spec);
    for (int64_t l = 0; l < spec.layers; l++)
        w["model.layers." + std::to_string(l) + ".self_attn.q_proj.weight"].zero_();
    bosch_torch_model *m =
        wrap(Model::from_weights(config_of(spec), w, torch::kCPU, torch::kFloat32));
    bosch_torch_task task;
    task.task.samples = {sample({5, 9, 1, 4, 4, 7, 30, 2, 8, 8, 3, 6}, {7, 8, 9}),
                         sample({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {13})};
    struct Case {
        uint32_t window, sink;
    } cases[] = {{4, 2}, {4, 0}, {1, 0}, {3, 20}, {13, 1}, {14, 0}, {40, 0}};
    for (const Case &c : cases) {
        double sum = 0;
        int64_t n = 0;
        for (const Sample &s : task.task.samples) {
            const int64_t T = int64_t(fed(s).size()), W = c.window, S = c.sink;
            for (int64_t t = W; t < T; t++, n++)
                sum += double(W + std::min(S, t - W + 1)) / double(t + 1);
        }
        const double want = n ? 1.0 - sum / double(n) : 0.0;
        std::vector<double> head, unit;
        EXPECT_ST(scores(m, &task, BOSCH_TORCH_SCORER_LOCALITY, c.window, c.sink, head, unit),
                  BOSCH_OK);
        double worst = 0;
        for (double v : head)
            worst = std::max(worst, std::fabs(v - want));
        if (worst > 1e-6)
            std::fprintf(stderr, "locality window %u sink %u: want %.9f, off by %.3g\n", c.window,
                         c.sink, want, worst);
        EXPECT(worst <= 1e-6);
        expect_unit_max(head, unit, size_t(spec.heads / spec.kv_heads));
        if (n == 0)
            EXPECT(head[0] == 0.0);
    }
    bosch_torch_model_free(m);
}

// The probabilities the scorers see, and LOCALITY, RETRIEVAL and
// ECHO_INDUCTION, against brute force over the f64 reference's probabilities.
static void test_against_reference(bosch_torch_model *m, const TensorMap &w, const TinySpec &spec,
                                   int64_t prompt_len) {
    Model &md = *m->model;
    const int64_t nH = spec.heads, L = spec.layers;
    const size_t r = size_t(spec.heads / spec.kv_heads);
    // Prompts from a 4-token alphabet, so that copies of the answer tokens
    // lie in and out of the window.
    bosch_torch_task task;
    for (uint64_t i = 0; i < 3; i++) {
        std::vector<int32_t> seq = echo_sequence(4, prompt_len + 3, 100 + i);
        std::vector<int32_t> p(seq.begin(), seq.begin() + prompt_len);
        std::vector<int32_t> a(seq.begin() + prompt_len, seq.begin() + prompt_len + 1 + long(i));
        for (auto &x : p)
            x += 3;
        for (auto &x : a)
            x += 3;
        task.task.samples.push_back(sample(p, a));
    }
    const int64_t W = 3, S = 1;

    // Probabilities: the scorers' path against the reference.
    double worst = 0;
    std::vector<std::vector<torch::Tensor>> probs; // [sample][layer], f64
    for (const Sample &s : task.task.samples) {
        std::vector<int32_t> tok = fed(s);
        std::vector<torch::Tensor> ref = ref_probs(w, spec, tok);
        torch::InferenceMode guard;
        std::vector<int64_t> t64(tok.begin(), tok.end());
        for_each_layer_probs(md, torch::tensor(t64), [&](int64_t l, const torch::Tensor &p) {
            worst = std::max(worst,
                             (p.to(torch::kFloat64) - ref[size_t(l)]).abs().max().item<double>());
        });
        probs.push_back(ref);
    }
    std::printf("probabilities vs f64 reference: max abs diff %.3g\n", worst);
    EXPECT(worst < 1e-5);

    // LOCALITY by brute force.
    std::vector<double> want(size_t(L * nH), 0.0), head, unit;
    double count = 0;
    for (size_t i = 0; i < probs.size(); i++) {
        const int64_t T = int64_t(fed(task.task.samples[i]).size());
        for (int64_t l = 0; l < L; l++)
            for (int64_t h = 0; h < nH; h++)
                for (int64_t t = W; t < T; t++) {
                    double in = 0;
                    for (int64_t s = 0; s <= t; s++)
                        if (s > t - W || s < S)
                            in += prob(probs[i][size_t(l)], h, t, s);
                    want[size_t(l * nH + h)] += 1.0 - in;
                }
        count += double(T - W);
    }
    EXPECT_ST(scores(m, &task, BOSCH_TORCH_SCORER_LOCALITY, W, S, head, unit), BOSCH_OK);
    double d = 0;
    for (size_t k = 0; k < want.size(); k++)
        d = std::max(d, std::fabs(head[k] - want[k] / count));
    std::printf("locality vs brute force: max abs diff %.3g\n", d);
    EXPECT(d < 1e-5);
    expect_unit_max(head, unit, r);

    // RETRIEVAL by brute force: top-1 key (lowest among ties) of the position
    // before each answer token.
    std::fill(want.begin(), want.end(), 0.0);
    double answers = 0;
    for (size_t i = 0; i < probs.size(); i++) {
        const Sample &s = task.task.samples[i];
        const int64_t P = int64_t(s.prompt.size());
        for (size_t j = 0; j < s.answer.size(); j++) {
            const int64_t t = P - 1 + int64_t(j);
            answers += 1;
            for (int64_t l = 0; l < L; l++)
                for (int64_t h = 0; h < nH; h++) {
                    int64_t best = 0;
                    for (int64_t k = 1; k <= t; k++)
                        if (prob(probs[i][size_t(l)], h, t, k) >
                            prob(probs[i][size_t(l)], h, t, best))
                            best = k;
                    if (best <= t - W && best >= S && best < P &&
                        s.prompt[size_t(best)] == s.answer[j])
                        want[size_t(l * nH + h)] += 1;
                }
        }
    }
    EXPECT_ST(scores(m, &task, BOSCH_TORCH_SCORER_RETRIEVAL, W, S, head, unit), BOSCH_OK);
    double top = 0;
    for (size_t k = 0; k < want.size(); k++) {
        EXPECT(head[k] == want[k] / answers);
        top = std::max(top, want[k] / answers);
    }
    std::printf("retrieval: best head %.3f\n", top);
    EXPECT(top > 0); // the check above is not vacuous
    expect_unit_max(head, unit, r);

    // ECHO_INDUCTION by brute force on the documented sequences.
    const int64_t n = prompt_len / 2, o = prompt_len - 2 * n;
    std::fill(want.begin(), want.end(), 0.0);
    count = 0;
    for (size_t i = 0; i < task.task.samples.size(); i++) {
        std::vector<int32_t> seq = echo_sequence(spec.vocab, prompt_len, i);
        EXPECT(int64_t(seq.size()) == prompt_len);
        for (int64_t k = 0; k < n; k++)
            EXPECT(seq[size_t(o + k)] == seq[size_t(o + n + k)]);
        for (int32_t x : seq)
            EXPECT(x >= 0 && x < spec.vocab);
        std::vector<torch::Tensor> p = ref_probs(w, spec, seq);
        for (int64_t k = 0; k + 1 < n; k++) {
            const int64_t t = o + n + k;
            for (int64_t l = 0; l < L; l++)
                for (int64_t h = 0; h < nH; h++)
                    want[size_t(l * nH + h)] +=
                        prob(p[size_t(l)], h, t, o + k) + prob(p[size_t(l)], h, t, o + k + 1);
            count += 1;
        }
    }
    EXPECT_ST(scores(m, &task, BOSCH_TORCH_SCORER_ECHO_INDUCTION, W, S, head, unit), BOSCH_OK);
    d = 0;
    for (size_t k = 0; k < want.size(); k++)
        d = std::max(d, std::fabs(head[k] - want[k] / count));
    std::printf("echo-induction (prompt %lld) vs brute force: max abs diff %.3g\n",
                (long long)prompt_len, d);
    EXPECT(d < 1e-5);
    expect_unit_max(head, unit, r);
    // Independent of the window; deterministic.
    std::vector<double> again, unit2;
    EXPECT_ST(scores(m, &task, BOSCH_TORCH_SCORER_ECHO_INDUCTION, 7, 0, again, unit2), BOSCH_OK);
    EXPECT(again == head);
}

// Sum over the answer of -log softmax(logits row j)[answer j], in double.
static double answer_nll(const std::vector<float> &logits, const std::vector<int32_t> &answer,
                         int64_t vocab) {
    double nll = 0;
    for (size_t j = 0; j < answer.size(); j++) {
        const float *row = logits.data() + j * size_t(vocab);
        double mx = row[0], z = 0;
        for (int64_t v = 0; v < vocab; v++)
            mx = std::max(mx, double(row[v]));
        for (int64_t v = 0; v < vocab; v++)
            z += std::exp(double(row[v]) - mx);
        nll -= double(row[answer[j]]) - mx - std::log(z);
    }
    return nll;
}

// FISHER: the score of a one-sample task is the square of dL/dg, checked
// against central differences of gated_nll; samples average; a window that
// covers the sequence gives exactly 0.
static void test_fisher(bosch_torch_model *m) {
    Model &md = *m->model;
    const int64_t L = md.layers(), G = md.kv_heads(), r = md.heads_per_group();
    const Sample s0 = sample({4, 17, 9, 33, 2, 8, 41, 17, 5, 12, 27, 3}, {9, 33, 6});
    const Sample s1 = sample({7, 7, 1, 19, 44, 8, 2, 30, 16, 16, 5, 49}, {44, 21});
    Window w;
    w.window = 3;
    w.sink = 1;
    bosch_torch_task one, two;
    one.task.samples = {s0};
    two.task.samples = {s0, s1};
    std::vector<double> head, unit;
    EXPECT_ST(scores(m, &one, BOSCH_TORCH_SCORER_FISHER, 3, 1, head, unit), BOSCH_OK);
    expect_unit_max(head, unit, size_t(r));
    for (int64_t u = 0; u < L * G; u++)
        for (int64_t i = 0; i < r; i++)
            EXPECT(head[size_t(u * r + i)] == unit[size_t(u)]);

    // gated_nll at g = 1 is the model's teacher-forced loss.
    torch::NoGradGuard no_grad;
    torch::Tensor ones = torch::ones({L, G}, torch::kFloat32);
    const double l1 = gated_nll(md, s0, ones, w).item<double>();
    std::vector<int32_t> tok = fed(s0);
    std::vector<int32_t> pos = {11, 12, 13};
    std::vector<float> logits(3 * size_t(md.vocab()));
    EXPECT_ST(forward(m, tok.data(), 1, tok.size(), nullptr, 3, 1, pos.data(), 3, logits.data()),
              BOSCH_OK);
    EXPECT(std::fabs(l1 - answer_nll(logits, s0.answer, md.vocab())) < 1e-4);
    // Gates of 0 are the model's SWA units (mask 1 where the gate is 0).
    for (const std::vector<uint8_t> &mask :
         {std::vector<uint8_t>(size_t(L * G), 1), std::vector<uint8_t>{0, 1, 1, 0, 0, 1}}) {
        torch::Tensor gates = torch::ones({L, G}, torch::kFloat32);
        for (int64_t u = 0; u < L * G; u++)
            if (mask[size_t(u)])
                gates.view({-1})[u] = 0.0f;
        EXPECT_ST(forward(m, tok.data(), 1, tok.size(), mask.data(), 3, 1, pos.data(), 3,
                          logits.data()),
                  BOSCH_OK);
        const double want = answer_nll(logits, s0.answer, md.vocab());
        const double got = gated_nll(md, s0, gates, w).item<double>();
        EXPECT(std::fabs(got - want) < 1e-4);
        EXPECT(std::fabs(got - l1) > 1e-3); // SWA matters here
    }

    // Central differences, unit by unit.
    const double eps = 1e-2;
    int significant = 0;
    for (int64_t u = 0; u < L * G; u++) {
        torch::Tensor gp = ones.clone(), gm = ones.clone();
        gp.view({-1})[u] = float(1 + eps);
        gm.view({-1})[u] = float(1 - eps);
        const double fd =
            (gated_nll(md, s0, gp, w).item<double>() - gated_nll(md, s0, gm, w).item<double>()) /
            (2 * eps);
        const double g = std::sqrt(unit[size_t(u)]);
        std::printf("fisher unit %lld: |dL/dg| %.6f, finite difference %.6f\n", (long long)u, g,
                    fd);
        EXPECT(std::fabs(g - std::fabs(fd)) <= 0.02 * std::fabs(fd) + 2e-4);
        significant += std::fabs(fd) > 1e-2;
    }
    EXPECT(significant > 0);

    // Mean over samples.
    std::vector<double> h1, u1, h2, u2;
    EXPECT_ST(scores(m, &one, BOSCH_TORCH_SCORER_FISHER, 3, 1, h1, u1), BOSCH_OK);
    EXPECT(u1 == unit); // deterministic
    bosch_torch_task other;
    other.task.samples = {s1};
    EXPECT_ST(scores(m, &other, BOSCH_TORCH_SCORER_FISHER, 3, 1, h2, u2), BOSCH_OK);
    std::vector<double> hb, ub;
    EXPECT_ST(scores(m, &two, BOSCH_TORCH_SCORER_FISHER, 3, 1, hb, ub), BOSCH_OK);
    for (size_t u = 0; u < ub.size(); u++)
        EXPECT(std::fabs(ub[u] - (u1[u] + u2[u]) / 2) <= 1e-12 * (1 + ub[u]));

    // SWA == full (window or sink covering the sequence): exactly 0.
    for (uint32_t win : {14u, 100u}) {
        EXPECT_ST(scores(m, &two, BOSCH_TORCH_SCORER_FISHER, win, 0, hb, ub), BOSCH_OK);
        for (double v : hb)
            EXPECT(v == 0.0);
    }
    EXPECT_ST(scores(m, &two, BOSCH_TORCH_SCORER_FISHER, 1, 13, hb, ub), BOSCH_OK);
    for (double v : hb)
        EXPECT(v == 0.0);
    // The weights are left alone, and the model still runs in inference mode.
    EXPECT(!md.layer(0).q_proj.requires_grad());
    EXPECT(md.layer(0).q_proj.is_inference()); // loaded through the C API
    EXPECT_ST(forward(m, tok.data(), 1, tok.size(), nullptr, 3, 1, pos.data(), 3, logits.data()),
              BOSCH_OK);
}

// f32 and bf16 give finite, close statistics.
static void test_bf16(bosch_torch_model *mf, bosch_torch_model *mb) {
    bosch_torch_task task;
    task.task.samples = {sample({4, 17, 9, 33, 2, 8, 41, 17, 5, 12, 27, 3, 9, 33}, {9, 33, 6}),
                         sample({7, 7, 1, 19, 44, 8, 2, 30, 16, 16, 5, 49, 44, 1}, {44, 21})};
    for (int sc = 0; sc < 4; sc++) {
        std::vector<double> hf, uf, hb, ub;
        EXPECT_ST(scores(mf, &task, sc, 4, 1, hf, uf), BOSCH_OK);
        EXPECT_ST(scores(mb, &task, sc, 4, 1, hb, ub), BOSCH_OK);
        double d = 0, mx = 0;
        bool finite = true;
        for (size_t k = 0; k < hf.size(); k++) {
            finite = finite && std::isfinite(hb[k]) && hb[k] >= 0;
            d = std::max(d, std::fabs(hf[k] - hb[k]));
            mx = std::max(mx, std::fabs(hf[k]));
        }
        std::printf("bf16 vs f32 %s: max abs diff %.3g (max score %.3g)\n",
                    bosch_torch_scorer_name(sc), d, mx);
        EXPECT(finite);
        if (sc == BOSCH_TORCH_SCORER_LOCALITY || sc == BOSCH_TORCH_SCORER_ECHO_INDUCTION)
            EXPECT(d < 0.05);
        if (sc == BOSCH_TORCH_SCORER_FISHER)
            EXPECT(d <= 0.25 * mx + 1e-3);
    }
}

// Bad arguments: the status, a message, the outputs untouched.
static void test_errors(bosch_torch_model *m, const TinySpec &spec) {
    bosch_torch_task task, empty, ragged, big, neg;
    task.task.samples = {sample({1, 2, 3, 4, 5, 6}, {7, 8})};
    ragged.task.samples = {sample({1, 2, 3, 4, 5, 6}, {7}), sample({1, 2, 3}, {7})};
    big.task.samples = {sample({1, 2, 3, 4, 5, 6}, {7, int32_t(spec.vocab)})};
    neg.task.samples = {sample({1, 2, -3, 4, 5, 6}, {7})};
    const size_t nh = size_t(spec.layers * spec.heads), nu = size_t(spec.layers * spec.kv_heads);
    std::vector<double> head(nh, 123.0), unit(nu, 456.0);
    auto untouched = [&] {
        for (double v : head)
            if (v != 123.0)
                return false;
        for (double v : unit)
            if (v != 456.0)
                return false;
        return true;
    };
    auto call = [&](bosch_torch_model *mm, const bosch_torch_task *t, int sc, uint32_t win) {
        err[0] = '\0';
        return model_st(bosch_torch_model_scores(mm, t, sc, win, 0, head.data(), unit.data()),
                        mm);
    };
    EXPECT_ST(call(m, &task, 5, 2), BOSCH_E_INVALID);
    EXPECT_MSG("scorer");
    EXPECT_ST(call(m, &task, -1, 2), BOSCH_E_INVALID);
    EXPECT_MSG("scorer");
    for (int sc = 0; sc < 5; sc++) {
        EXPECT_ST(call(m, &task, sc, 0), BOSCH_E_INVALID);
        EXPECT_MSG("window");
        EXPECT_ST(call(m, &big, sc, 2), BOSCH_E_INVALID);
        EXPECT_MSG("vocabulary");
        EXPECT_ST(call(m, &neg, sc, 2), BOSCH_E_INVALID);
        EXPECT_MSG("vocabulary");
        EXPECT_ST(call(m, &empty, sc, 2), BOSCH_E_INVALID);
        EXPECT_MSG("no samples");
        EXPECT_ST(call(m, &ragged, sc, 2), BOSCH_OK); // prompts may differ in length
        std::fill(head.begin(), head.end(), 123.0);
        std::fill(unit.begin(), unit.end(), 456.0);
        // A NULL model has no room for a message (the deprecated
        // bosch_torch_scores still writes it into err: test_api.cpp).
        EXPECT_ST(call(nullptr, &task, sc, 2), BOSCH_E_INVALID);
        EXPECT_ST(call(m, nullptr, sc, 2), BOSCH_E_INVALID);
        EXPECT_MSG("model and task must not be NULL");
    }
    EXPECT(untouched());
    // Either output may be NULL.
    EXPECT_ST(model_st(bosch_torch_model_scores(m, &task, 0, 2, 0, nullptr, unit.data()), m),
              BOSCH_OK);
    EXPECT(unit[0] != 456.0);
    // A success clears the model's last error.
    EXPECT(std::strcmp(bosch_torch_model_last_error(m), "") == 0);
    EXPECT_ST(bosch_torch_model_scores(m, &task, 0, 2, 0, nullptr, nullptr), BOSCH_OK);

    // Prompts too short for a query with echo and induction keys: 0.
    bosch_torch_task shorty;
    shorty.task.samples = {sample({1, 2, 3}, {4, 5})};
    std::vector<double> hs, us;
    EXPECT_ST(scores(m, &shorty, BOSCH_TORCH_SCORER_ECHO_INDUCTION, 2, 0, hs, us), BOSCH_OK);
    for (double v : hs)
        EXPECT(v == 0.0);
    shorty.task.samples = {sample({1, 2, 3, 4}, {5})};
    EXPECT_ST(scores(m, &shorty, BOSCH_TORCH_SCORER_ECHO_INDUCTION, 2, 0, hs, us), BOSCH_OK);
    EXPECT(*std::max_element(hs.begin(), hs.end()) > 0);

    // A model producing NaN: BOSCH_E_BAD_SCORE, outputs untouched.
    TensorMap w = tiny_qwen3_tensors(spec);
    w["model.layers.1.self_attn.k_proj.weight"][0][0] = NAN;
    bosch_torch_model *bad =
        wrap(Model::from_weights(config_of(spec), w, torch::kCPU, torch::kFloat32));
    std::fill(unit.begin(), unit.end(), 456.0);
    for (int sc = 0; sc < 4; sc++) {
        EXPECT_ST(call(bad, &task, sc, 2), BOSCH_E_BAD_SCORE);
        EXPECT_MSG("not finite");
    }
    EXPECT(untouched());
    bosch_torch_model_free(bad);
}

// Prompts of different lengths: every scorer equals the per-sample
// computation pooled as documented (LOCALITY over query positions t >=
// window, RETRIEVAL over answer tokens, ECHO_INDUCTION over second-copy
// queries of each sample's own length, FISHER the mean over samples).
static void test_mixed_lengths(bosch_torch_model *m) {
    const uint32_t window = 3, sink = 1;
    std::mt19937 rng(21);
    std::uniform_int_distribution<int32_t> tok(0, 49);
    bosch_torch_task mixed;
    for (size_t P : {9, 16, 12, 7}) {
        std::vector<int32_t> p(P), a(1 + P % 3);
        for (auto &t : p)
            t = tok(rng);
        for (auto &t : a)
            t = p[size_t(tok(rng)) % P]; // copies, so RETRIEVAL can hit
        mixed.task.samples.push_back(sample(p, a));
    }
    const size_t M = mixed.task.samples.size();
    for (int sc = 0; sc < 4; sc++) {
        std::vector<double> head, unit;
        EXPECT_ST(scores(m, &mixed, sc, window, sink, head, unit), BOSCH_OK);
        std::vector<double> want(head.size(), 0.0);
        double weight_sum = 0;
        for (size_t i = 0; i < M; i++) {
            const Sample &s = mixed.task.samples[i];
            const double T = double(s.prompt.size() + s.answer.size() - 1);
            const double n = double(s.prompt.size() / 2);
            const double w = sc == 0 ? std::max(0.0, T - window)
                             : sc == 1 ? double(s.answer.size())
                             : sc == 2 ? std::max(0.0, n - 1)
                                       : 1.0;
            weight_sum += w;
            if (w == 0)
                continue;
            // ECHO_INDUCTION seeds by sample index: keep it with leading samples.
            bosch_torch_task one;
            if (sc == 2)
                for (size_t j = 0; j < i; j++)
                    one.task.samples.push_back(sample({0}, {0})); // too short: no positions
            one.task.samples.push_back(s);
            std::vector<double> h1, u1;
            EXPECT_ST(scores(m, &one, sc, window, sink, h1, u1), BOSCH_OK);
            for (size_t h = 0; h < want.size(); h++)
                want[h] += w * h1[h];
        }
        double worst = 0;
        for (size_t h = 0; h < want.size(); h++)
            worst = std::max(worst, std::fabs(head[h] - want[h] / weight_sum));
        std::printf("mixed lengths, %s: max |task - pooled per-sample| %.3g\n",
                    bosch_torch_scorer_name(sc), worst);
        EXPECT(worst < 1e-9 * std::max(1.0, std::fabs(want[0] / weight_sum)) + 1e-12);
    }
}

int main() {
    auto t0 = std::chrono::steady_clock::now();
    g_tmp = make_temp_dir("scorers");
    try {
        test_names();
        const TinySpec spec = gqa_spec();
        test_locality_uniform(spec);
        TensorMap w;
        const std::string dir = g_tmp + "/gqa";
        std::string e = write_tiny_qwen3(dir, spec, &w);
        if (!e.empty())
            throw std::runtime_error("write_tiny_qwen3: " + e);
        bosch_torch_model *m = nullptr, *mb = nullptr;
        EXPECT_ST(created(m = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                     BOSCH_TORCH_DTYPE_F32)),
                  BOSCH_OK);
        EXPECT_ST(created(mb = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU,
                                                      BOSCH_TORCH_DTYPE_BF16)),
                  BOSCH_OK);
        if (m) {
            test_against_reference(m, w, spec, 16);
            test_against_reference(m, w, spec, 15); // odd: one leading random token
            test_fisher(m);
            test_duo(m, w, spec);
            test_errors(m, spec);
            test_mixed_lengths(m);
            if (mb)
                test_bf16(m, mb);
        }
        bosch_torch_model_free(m);
        bosch_torch_model_free(mb);
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "exception: %s\n", ex.what());
        g_failures++;
    }
    remove_tree(g_tmp);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("test_scorers: %d checks, %d failures, %.1f s\n", g_checks, g_failures, s);
    return g_failures == 0 ? 0 : 1;
}
