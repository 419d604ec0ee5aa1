// Static head-level scores. The attention of one sequence is recomputed per
// layer exactly as Model::attention does it (same projections, q_norm/k_norm,
// RoPE tables, scale, fp32 softmax) but untiled, so that the probabilities of
// every head are available; the residual stream between layers is the
// model's own (Model::run_layers), except for FISHER, whose gated forward
// needs both attention branches of every unit.
#include "scorers.hpp"

#include "evaluator.hpp"
#include "failure.hpp"

#include "base/prng_steps.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace bosch_torch {

const char *scorer_name(int scorer) {
    switch (scorer) {
    case int(Scorer::Locality):
        return "locality";
    case int(Scorer::Retrieval):
        return "retrieval";
    case int(Scorer::EchoInduction):
        return "echo-induction";
    case int(Scorer::Fisher):
        return "fisher";
    case int(Scorer::DuoOnTheFly):
        return "duo-on-the-fly";
    default:
        return nullptr;
    }
}

namespace {

// Inference tensors (the C API loads models in inference mode) cannot be
// saved for backward: the gated forward uses copies of them.
torch::Tensor plain(const torch::Tensor &t) { return t.is_inference() ? t.clone() : t; }

// The weights and RoPE tables one forward reads.
struct Weights {
    std::vector<LayerWeights> layers;
    torch::Tensor final_norm, lm_head, cos, sin; // cos, sin: [len, D]
};

Weights weights_of(Model &m, int64_t len, bool for_backward) {
    auto pick = [&](const torch::Tensor &t) { return for_backward && t.defined() ? plain(t) : t; };
    Weights w;
    for (int64_t l = 0; l < m.layers(); l++) {
        const LayerWeights &s = m.layer(l);
        LayerWeights c;
        for (auto member : layer_members())
            c.*member = pick(s.*member);
        w.layers.push_back(c);
    }
    w.final_norm = pick(m.final_norm_weight());
    w.lm_head = pick(m.lm_head_weight());
    auto cs = m.rope(len);
    w.cos = pick(cs.first);
    w.sin = pick(cs.second);
    return w;
}

struct Qkv {
    torch::Tensor q, k, v; // q [1, nH, T, D]; k, v [1, G, T, D]
};

// Model::attention's projections, norms and RoPE for one sequence x [1, T, H].
Qkv project(const Model &m, const LayerWeights &L, const torch::Tensor &x, const torch::Tensor &cos,
            const torch::Tensor &sin) {
    const int64_t T = x.size(1);
    const int64_t G = m.kv_heads(), nH = m.config().num_attention_heads;
    Qkv p;
    p.q = m.project_heads(x, L.q_proj, L.q_bias, L.q_norm, nH).transpose(1, 2);
    p.k = m.project_heads(x, L.k_proj, L.k_bias, L.k_norm, G).transpose(1, 2);
    p.v = m.project_heads(x, L.v_proj, L.v_bias, torch::Tensor(), G).transpose(1, 2).contiguous();
    torch::Tensor c = cos.narrow(0, 0, T), s = sin.narrow(0, 0, T);
    p.q = (p.q * c + rotate_half(p.q) * s).contiguous();
    p.k = (p.k * c + rotate_half(p.k) * s).contiguous();
    return p;
}

// Scaled scores (dtype) [1, G, r, T, T]: query head g*r+i against KV head g.
torch::Tensor scores_of(const Model &m, const Qkv &p) {
    const int64_t T = p.q.size(2), D = p.q.size(3), G = m.kv_heads(), r = m.heads_per_group();
    const double scale = std::pow(double(D), -0.5);
    torch::Tensor q = p.q.view({1, G, r * T, D});
    return (torch::matmul(q, p.k.transpose(-1, -2)) * scale).view({1, G, r, T, T});
}

// fp32 probabilities [1, G, r, T, T] under `allowed` (bool [T, T]).
torch::Tensor probs_of(const torch::Tensor &scores, const torch::Tensor &allowed) {
    torch::Tensor s =
        scores.masked_fill(allowed.logical_not(), -std::numeric_limits<double>::infinity());
    return torch::softmax(s, -1, torch::kFloat32);
}

// Head outputs [1, G, r, T, D] in the model dtype, as Model::attention.
torch::Tensor heads_of(const torch::Tensor &probs, const torch::Tensor &v) {
    const int64_t G = probs.size(1), r = probs.size(2), T = probs.size(3), D = v.size(3);
    torch::Tensor pr = probs.to(v.scalar_type()).view({1, G, r * T, T});
    return torch::matmul(pr, v).view({1, G, r, T, D});
}

// x [1, T, H]. The experts' routing is differentiable as in transformers:
// gradients flow through the router's weights of the chosen experts, the
// choice itself (top-k) is piecewise constant.
torch::Tensor mlp(const Model &m, const LayerWeights &L, const torch::Tensor &x) {
    if (L.router.defined())
        return feed_forward(m.config(), L, x.reshape({-1, x.size(-1)}), m.block_bytes())
            .view(x.sizes());
    return torch::linear(torch::silu(torch::linear(x, L.gate_proj, L.gate_bias)) *
                             torch::linear(x, L.up_proj, L.up_bias),
                         L.down_proj, L.down_bias);
}

// bool [T, T]: causal; with `w`, the SWA region (s > t - window or s < sink).
torch::Tensor allowed_keys(int64_t T, torch::Device dev, const Window *w) {
    auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(dev);
    torch::Tensor qi = torch::arange(T, i64).unsqueeze(1), kj = torch::arange(T, i64).unsqueeze(0);
    torch::Tensor a = kj <= qi;
    if (w)
        a = a & ((kj > qi - w->window) | (kj < w->sink));
    return a;
}

// Prompt followed by the answer minus its last token (teacher forcing), int64 [1, T].
torch::Tensor fed_tokens(const Sample &s, torch::Device dev) {
    std::vector<int64_t> t(s.prompt.begin(), s.prompt.end());
    t.insert(t.end(), s.answer.begin(), s.answer.end() - 1);
    const int64_t T = int64_t(t.size());
    return torch::tensor(t, torch::kInt64).view({1, T}).to(dev);
}

torch::Tensor gated_nll_with(Model &m, const Weights &wt, const Sample &s,
                             const torch::Tensor &gates, const Window &w) {
    const torch::Device dev = m.device();
    torch::Tensor tok = fed_tokens(s, dev);
    const int64_t T = tok.size(1), P = int64_t(s.prompt.size()), A = int64_t(s.answer.size());
    const int64_t G = m.kv_heads(), nH = m.config().num_attention_heads, D = m.config().head_dim;
    torch::Tensor full = allowed_keys(T, dev, nullptr), swa = allowed_keys(T, dev, &w);
    // A window covering the sequence: SWA == full, and the gate has no effect.
    const bool same = torch::equal(full, swa);
    torch::Tensor h = m.embed(tok);
    for (int64_t l = 0; l < m.layers(); l++) {
        const LayerWeights &L = wt.layers[size_t(l)];
        Qkv p = project(m, L, m.rms_norm(h, L.input_norm), wt.cos, wt.sin);
        torch::Tensor sc = scores_of(m, p);
        torch::Tensor of = heads_of(probs_of(sc, full), p.v);
        torch::Tensor os = same ? of : heads_of(probs_of(sc, swa), p.v);
        torch::Tensor g = gates.select(0, l).to(m.dtype()).view({1, G, 1, 1, 1});
        torch::Tensor mixed = g * of + torch::rsub(g, 1.0) * os;
        torch::Tensor o = mixed.permute({0, 3, 1, 2, 4}).reshape({1, T, nH * D});
        h = h + torch::linear(o, L.o_proj, L.o_bias);
        h = h + mlp(m, L, m.rms_norm(h, L.post_norm));
    }
    // Answer token j is predicted at position P - 1 + j.
    torch::Tensor hs = h.narrow(1, P - 1, A);
    torch::Tensor logits =
        torch::linear(m.rms_norm(hs, wt.final_norm), wt.lm_head).to(torch::kFloat32);
    std::vector<int64_t> ans(s.answer.begin(), s.answer.end());
    torch::Tensor target = torch::tensor(ans, torch::kInt64).view({1, A, 1}).to(dev);
    return -torch::log_softmax(logits, -1).gather(-1, target).sum();
}

// Per-head sums and the count they are averaged over.
struct Accum {
    std::vector<double> sum;
    double count = 0;
    explicit Accum(int64_t heads) : sum(size_t(heads), 0.0) {}
    void add(const torch::Tensor &per_head) { // [nH], any dtype/device
        torch::Tensor c = per_head.to(torch::kCPU, torch::kFloat64).contiguous();
        const double *p = c.data_ptr<double>();
        for (size_t h = 0; h < sum.size(); h++)
            sum[h] += p[h];
    }
    std::vector<double> mean() const {
        std::vector<double> out(sum.size(), 0.0);
        if (count > 0)
            for (size_t h = 0; h < sum.size(); h++)
                out[h] = sum[h] / count;
        return out;
    }
};

// The per-layer means, layer after layer: head h of layer l at l * nH + h.
std::vector<double> means_of(const std::vector<Accum> &acc) {
    std::vector<double> out;
    for (const Accum &a : acc)
        for (double v : a.mean())
            out.push_back(v);
    return out;
}

// Mean over query positions t >= window of the mass outside the SWA region
// (= 1 - the share inside, probabilities summing to 1), computed directly so
// that small far masses keep their precision.
std::vector<double> locality(Model &m, const Task &task, const Window &w) {
    const int64_t nH = m.config().num_attention_heads;
    std::vector<Accum> acc(size_t(m.layers()), Accum(nH));
    for (const Sample &s : task.samples) {
        torch::Tensor tok = fed_tokens(s, m.device());
        const int64_t T = tok.size(1), n = T - w.window;
        if (n <= 0)
            continue; // no position t >= window
        torch::Tensor far =
            (allowed_keys(T, m.device(), nullptr) & allowed_keys(T, m.device(), &w).logical_not())
                .narrow(0, w.window, n)
                .to(torch::kFloat32);
        for_each_layer_probs(m, tok, [&](int64_t l, const torch::Tensor &probs) {
            acc[size_t(l)].add((probs.narrow(1, w.window, n) * far).sum({1, 2}));
            acc[size_t(l)].count += double(n);
        });
    }
    return means_of(acc);
}

// Share of answer tokens whose position before them puts its top-1 attention
// (lowest position among ties) on a prompt token equal to the answer token,
// outside the SWA region (sink <= s <= t - window).
std::vector<double> retrieval(Model &m, const Task &task, const Window &w) {
    const int64_t nH = m.config().num_attention_heads, L = m.layers();
    std::vector<double> hits(size_t(L * nH), 0.0);
    double answers = 0;
    for (const Sample &s : task.samples) {
        const int64_t P = int64_t(s.prompt.size()), A = int64_t(s.answer.size());
        answers += double(A);
        torch::Tensor tok = fed_tokens(s, m.device());
        for_each_layer_probs(m, tok, [&](int64_t l, const torch::Tensor &probs) {
            torch::Tensor rows = probs.narrow(1, P - 1, A).to(torch::kCPU).contiguous();
            const int64_t T = rows.size(2);
            const float *p = rows.data_ptr<float>();
            for (int64_t h = 0; h < nH; h++)
                for (int64_t j = 0; j < A; j++) {
                    const int64_t t = P - 1 + j;
                    const float *row = p + (h * A + j) * T;
                    int64_t best = 0;
                    bool finite = true;
                    for (int64_t k = 0; k <= t; k++) {
                        finite = finite && std::isfinite(row[k]);
                        if (row[k] > row[best])
                            best = k;
                    }
                    if (!finite) // no top-1 to speak of: a NaN score, reported as such
                        hits[size_t(l * nH + h)] = std::numeric_limits<double>::quiet_NaN();
                    else if (best < P && best >= w.sink && best <= t - w.window &&
                             s.prompt[size_t(best)] == s.answer[size_t(j)])
                        hits[size_t(l * nH + h)] += 1;
                }
        });
    }
    for (double &v : hits)
        v /= answers;
    return hits;
}

// Mean over queries t = o + n + k (k = 0 .. n-2) of the second copy of the
// attention on o + k (the same token's first occurrence: echo) plus o + k + 1
// (the token after it: induction).
std::vector<double> echo_induction(Model &m, const Task &task) {
    const int64_t nH = m.config().num_attention_heads;
    std::vector<Accum> acc(size_t(m.layers()), Accum(nH));
    for (size_t i = 0; i < task.samples.size(); i++) {
        // Each sample's own prompt length (prompts may differ).
        const int64_t len = int64_t(task.samples[i].prompt.size());
        const int64_t n = len / 2, o = len - 2 * n;
        if (n < 2)
            continue;
        std::vector<int32_t> seq = echo_sequence(m.vocab(), len, uint64_t(i));
        torch::Tensor tok =
            torch::tensor(std::vector<int64_t>(seq.begin(), seq.end()), torch::kInt64)
                .to(m.device());
        for_each_layer_probs(m, tok, [&](int64_t l, const torch::Tensor &probs) {
            torch::Tensor q = probs.narrow(1, o + n, n - 1); // [nH, n-1, T]
            torch::Tensor echo = q.narrow(2, o, n - 1).diagonal(0, 1, 2);
            torch::Tensor induction = q.narrow(2, o + 1, n - 1).diagonal(0, 1, 2);
            acc[size_t(l)].add((echo + induction).sum(1));
            acc[size_t(l)].count += double(n - 1);
        });
    }
    return means_of(acc);
}

// Mean over samples of (dLoss/dg)^2 per unit, copied to the unit's heads.
std::vector<double> fisher(Model &m, const Task &task, const Window &w) {
    c10::InferenceMode no_inference(false);
    torch::AutoGradMode grad_on(true);
    const int64_t L = m.layers(), G = m.kv_heads(), r = m.heads_per_group();
    int64_t len = 0;
    for (const Sample &s : task.samples)
        len = std::max<int64_t>(len, int64_t(s.prompt.size() + s.answer.size()) - 1);
    Weights wt = weights_of(m, len, /*for_backward=*/true);
    torch::Tensor gates =
        torch::ones({L, G}, torch::TensorOptions().dtype(torch::kFloat32).device(m.device()))
            .requires_grad_(true);
    torch::Tensor acc = torch::zeros({L, G}, torch::kFloat64);
    for (const Sample &s : task.samples) {
        torch::Tensor loss = gated_nll_with(m, wt, s, gates, w);
        torch::Tensor g = torch::autograd::grad({loss}, {gates})[0];
        acc += g.detach().to(torch::kCPU, torch::kFloat64).pow(2);
    }
    acc /= double(task.samples.size());
    const double *a = acc.data_ptr<double>();
    std::vector<double> out(size_t(L * G * r));
    for (int64_t u = 0; u < L * G; u++)
        for (int64_t i = 0; i < r; i++)
            out[size_t(u * r + i)] = a[u];
    return out;
}

// NVIDIA kvpress's DuoAttention on-the-fly score (duo_attention_on_the_fly in
// kvpress/presses/duo_attention_press.py), on the task's prompts instead of
// BookSum texts: per layer, each query head's normed query and each KV
// head's normed key averaged over the prompt's positions (before RoPE), both
// repeated over kDuoPositions positions with RoPE; the attention of the last
// query over those keys; the score is the mean over positions of its
// cumulative sum (the area under the cumulated attention curve: high when
// the mass sits on early, i.e. distant, positions), averaged over samples.
constexpr int64_t kDuoPositions = 500; // kvpress's q_len

std::vector<double> duo_on_the_fly(Model &m, const Task &task) {
    const int64_t L = m.layers(), G = m.kv_heads(), r = m.heads_per_group();
    const int64_t nH = G * r, D = m.config().head_dim, Q = kDuoPositions;
    auto cs = m.rope(Q);
    torch::Tensor cos = cs.first.to(torch::kFloat32), sin = cs.second.to(torch::kFloat32);
    torch::Tensor cl = cos.select(0, Q - 1), sl = sin.select(0, Q - 1); // [D]
    const double scale = std::pow(double(D), -0.5);
    std::vector<Accum> acc(static_cast<size_t>(L), Accum(nH));
    for (const Sample &s : task.samples) {
        const int64_t T = int64_t(s.prompt.size());
        std::vector<int64_t> t(s.prompt.begin(), s.prompt.end());
        torch::Tensor tok = torch::tensor(t, torch::kInt64).view({1, T}).to(m.device());
        torch::Tensor h = m.embed(tok);
        for (int64_t l = 0; l < L; l++) {
            const LayerWeights &W = m.layer(l);
            torch::Tensor x = m.rms_norm(h, W.input_norm);
            torch::Tensor q = m.project_heads(x, W.q_proj, W.q_bias, W.q_norm, nH)
                                  .to(torch::kFloat32)
                                  .mean(1)
                                  .view({G, r, D});
            torch::Tensor k = m.project_heads(x, W.k_proj, W.k_bias, W.k_norm, G)
                                  .to(torch::kFloat32)
                                  .mean(1)
                                  .view({G, 1, D});
            torch::Tensor qr = q * cl + rotate_half(q) * sl;  // [G, r, D] at position Q - 1
            torch::Tensor kr = k * cos + rotate_half(k) * sin; // [G, Q, D] at 0 .. Q - 1
            torch::Tensor p =
                torch::softmax(torch::matmul(qr, kr.transpose(-1, -2)) * scale, -1); // [G, r, Q]
            acc[size_t(l)].add(torch::cumsum(p, -1).mean(-1).reshape({nH}));
            acc[size_t(l)].count += 1;
            if (l + 1 < L)
                h = m.run_layers(h, torch::Tensor(), Window(), l, l + 1);
        }
    }
    return means_of(acc);
}

} // namespace

void for_each_layer_probs(Model &m, const torch::Tensor &tokens, const ProbsFn &f) {
    torch::Tensor tok = tokens.dim() == 1 ? tokens.unsqueeze(0) : tokens;
    TORCH_CHECK(tok.dim() == 2 && tok.size(0) == 1, "for_each_layer_probs: one sequence");
    const int64_t T = tok.size(1), nH = m.config().num_attention_heads;
    auto cs = m.rope(T);
    torch::Tensor allowed = allowed_keys(T, m.device(), nullptr);
    torch::Tensor h = m.embed(tok);
    for (int64_t l = 0; l < m.layers(); l++) {
        const LayerWeights &L = m.layer(l);
        Qkv p = project(m, L, m.rms_norm(h, L.input_norm), cs.first, cs.second);
        f(l, probs_of(scores_of(m, p), allowed).view({nH, T, T}));
        if (l + 1 < m.layers())
            h = m.run_layers(h, torch::Tensor(), Window(), l, l + 1);
    }
}

std::vector<int32_t> echo_sequence(int64_t vocab, int64_t len, uint64_t index) {
    uint64_t state = 0x5eedULL + index;
    auto next = [&state]() { return bosch_splitmix64(&state); };
    const int64_t n = len / 2, o = len - 2 * n;
    std::vector<int32_t> seq(static_cast<size_t>(len));
    for (int64_t i = 0; i < o + n; i++)
        seq[size_t(i)] = int32_t(next() % uint64_t(vocab));
    for (int64_t k = 0; k < n; k++)
        seq[size_t(o + n + k)] = seq[size_t(o + k)];
    return seq;
}

torch::Tensor gated_nll(Model &m, const Sample &s, const torch::Tensor &gates, const Window &w) {
    if (s.prompt.empty() || s.answer.empty())
        invalid("gated_nll: empty prompt or answer");
    TORCH_CHECK(gates.dim() == 2 && gates.size(0) == m.layers() && gates.size(1) == m.kv_heads(),
                "gated_nll: gates must be [layers, kv_heads]");
    const int64_t len = int64_t(s.prompt.size() + s.answer.size()) - 1;
    Weights wt = weights_of(m, len, gates.requires_grad());
    return gated_nll_with(m, wt, s, gates, w);
}

HeadScores compute_scores(Model &m, const Task &task, Scorer scorer, const Window &w) {
    const char *name = scorer_name(int(scorer));
    if (!name)
        invalid("unknown scorer " + std::to_string(int(scorer)));
    check_task(m, task, w);
    const int64_t L = m.layers(), G = m.kv_heads(), r = m.heads_per_group(), nH = G * r;
    HeadScores out;
    if (scorer == Scorer::Fisher) {
        out.head = fisher(m, task, w);
    } else {
        torch::InferenceMode guard;
        if (scorer == Scorer::Locality)
            out.head = locality(m, task, w);
        else if (scorer == Scorer::Retrieval)
            out.head = retrieval(m, task, w);
        else if (scorer == Scorer::EchoInduction)
            out.head = echo_induction(m, task);
        else
            out.head = duo_on_the_fly(m, task);
    }
    for (size_t i = 0; i < out.head.size(); i++)
        if (!std::isfinite(out.head[i]))
            throw Failure(BOSCH_E_BAD_SCORE, std::string(name) + " score of layer " +
                                                 std::to_string(int64_t(i) / nH) + " head " +
                                                 std::to_string(int64_t(i) % nH) +
                                                 " is not finite (the model produced NaN or inf)");
    // A unit can go SWA only if none of its heads needs the far past: the
    // maximum over its heads; kvpress averages them for its own score.
    out.unit.assign(size_t(L * G), 0.0);
    for (int64_t u = 0; u < L * G; u++) {
        double best = out.head[size_t(u * r)], sum = best;
        for (int64_t i = 1; i < r; i++) {
            best = std::max(best, out.head[size_t(u * r + i)]);
            sum += out.head[size_t(u * r + i)];
        }
        out.unit[size_t(u)] = scorer == Scorer::DuoOnTheFly ? sum / double(r) : best;
    }
    return out;
}

} // namespace bosch_torch
