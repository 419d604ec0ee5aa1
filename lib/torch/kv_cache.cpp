// The hybrid KV cache (kv_cache.hpp). Decoding recomputes, for the one new
// position, what Model::attention computes for every position: projections,
// head norms and RoPE (at each sequence's own position), the attention of
// each unit over the keys its mask lets it see, o_proj, the MLP.
#include "kv_cache.hpp"

#include "failure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bosch_torch {

namespace {

torch::Tensor index_tensor(const std::vector<int64_t> &v, const torch::Device &dev) {
    return torch::tensor(v, torch::TensorOptions().dtype(torch::kInt64)).to(dev);
}

} // namespace

KvCache::KvCache(Model &m, const torch::Tensor &units, const Window &w, int64_t batch,
                 int64_t capacity)
    : m_(m), B_(batch), cap_(capacity), L_(m.layers()), G_(m.kv_heads()),
      D_(m.config().head_dim), len_(size_t(batch), 0) {
    if (batch < 1 || capacity < 1)
        invalid("KvCache: batch and capacity must be >= 1");
    if (w.window < 1)
        invalid("KvCache: window must be >= 1");
    const ModelConfig &cfg = m.config();
    torch::Tensor host = units.defined() ? units.to(torch::kCPU).contiguous() : torch::Tensor();
    if (host.defined() && (host.dim() != 3 || host.size(0) != batch || host.size(1) != L_ ||
                           host.size(2) != G_ || host.scalar_type() != torch::kBool))
        invalid("KvCache: units must be bool [batch, layers, kv_heads]");
    const bool *u = host.defined() ? host.data_ptr<bool>() : nullptr;
    const auto opts = torch::TensorOptions().dtype(m.dtype()).device(m.device());
    const int64_t elem = int64_t(c10::elementSize(m.dtype()));
    for (int64_t l = 0; l < L_; l++) {
        Layer c;
        c.config_slides = size_t(l) < cfg.layer_sliding.size() && cfg.layer_sliding[size_t(l)] != 0;
        c.window = c.config_slides ? cfg.sliding_window : w.window;
        c.sink = c.config_slides ? 0 : w.sink;
        // A window and sink that cover the capacity hide nothing from any
        // position the cache will hold: such units are kept as full ones,
        // never larger than a full unit.
        const bool can_hide = c.sink + c.window < cap_;
        std::vector<int64_t> fseq, sseq;
        for (int64_t b = 0; b < B_; b++)
            for (int64_t g = 0; g < G_; g++) {
                const bool slides =
                    can_hide && (c.config_slides || (u && u[(b * L_ + l) * G_ + g]));
                (slides ? c.swa_flat : c.full_flat).push_back(b * G_ + g);
                (slides ? sseq : fseq).push_back(b);
            }
        const int64_t nf = int64_t(c.full_flat.size()), ns = int64_t(c.swa_flat.size());
        const int64_t slots = c.sink + c.window;
        c.kf = torch::zeros({nf, cap_, D_}, opts);
        c.vf = torch::zeros({nf, cap_, D_}, opts);
        c.ks = torch::zeros({ns, slots, D_}, opts);
        c.vs = torch::zeros({ns, slots, D_}, opts);
        c.pos = torch::full({ns, slots}, -1,
                            torch::TensorOptions().dtype(torch::kInt64).device(m.device()));
        c.full_idx = index_tensor(c.full_flat, m.device());
        c.swa_idx = index_tensor(c.swa_flat, m.device());
        c.full_seq = index_tensor(fseq, m.device());
        c.swa_seq = index_tensor(sseq, m.device());
        bytes_ += 2 * (nf * cap_ + ns * slots) * D_ * elem;
        layers_.push_back(std::move(c));
    }
    bytes_full_ = 2 * B_ * G_ * L_ * cap_ * D_ * elem;
}

void KvCache::fill(int64_t layer, const torch::Tensor &k, const torch::Tensor &v) {
    Layer &c = layers_[size_t(layer)];
    // k, v [B, G, T, D]: positions < len_[b] are the prompt's.
    torch::Tensor kf = k.reshape({B_ * G_, k.size(2), D_}), vf = v.reshape({B_ * G_, v.size(2), D_});
    for (size_t s = 0; s < c.full_flat.size(); s++) {
        const int64_t f = c.full_flat[s], n = len_[size_t(f / G_)];
        c.kf[int64_t(s)].narrow(0, 0, n).copy_(kf[f].narrow(0, 0, n));
        c.vf[int64_t(s)].narrow(0, 0, n).copy_(vf[f].narrow(0, 0, n));
    }
    const auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(m_.device());
    for (size_t s = 0; s < c.swa_flat.size(); s++) {
        const int64_t f = c.swa_flat[s], n = len_[size_t(f / G_)];
        // The sink positions, and the last window - 1 (what the next query,
        // at position n, sees): each a contiguous run of ring slots.
        std::vector<std::pair<int64_t, int64_t>> runs; // [p0, p1)
        runs.push_back({0, std::min(c.sink, n)});
        int64_t p = std::max(c.sink, n - c.window + 1);
        while (p < n) {
            const int64_t end = p < c.sink ? c.sink : std::min(n, p + c.window - p % c.window);
            runs.push_back({p, end});
            p = end;
        }
        for (const auto &r : runs) {
            const int64_t cnt = r.second - r.first;
            if (cnt <= 0)
                continue;
            const int64_t at = ring_slot(c, r.first);
            c.ks[int64_t(s)].narrow(0, at, cnt).copy_(kf[f].narrow(0, r.first, cnt));
            c.vs[int64_t(s)].narrow(0, at, cnt).copy_(vf[f].narrow(0, r.first, cnt));
            c.pos[int64_t(s)].narrow(0, at, cnt).copy_(torch::arange(r.first, r.second, i64));
        }
    }
}

torch::Tensor KvCache::prefill(const std::vector<std::vector<int32_t>> &prompts) {
    if (int64_t(prompts.size()) != B_)
        invalid("KvCache::prefill: " + std::to_string(prompts.size()) + " prompts for a batch of " +
                std::to_string(B_));
    int64_t T = 0;
    for (size_t b = 0; b < prompts.size(); b++) {
        const int64_t n = int64_t(prompts[b].size());
        if (n < 1 || n > cap_)
            invalid("KvCache::prefill: prompt " + std::to_string(b) + " has " +
                    std::to_string(n) + " tokens (1.." + std::to_string(cap_) + ")");
        len_[b] = n;
        T = std::max(T, n);
    }
    // Right-padded: under causal attention a pad never precedes a real token.
    std::vector<int64_t> tok(size_t(B_ * T), 0);
    std::vector<int64_t> last(static_cast<size_t>(B_));
    for (int64_t b = 0; b < B_; b++) {
        std::copy(prompts[size_t(b)].begin(), prompts[size_t(b)].end(), tok.begin() + long(b * T));
        last[size_t(b)] = b * T + len_[size_t(b)] - 1;
    }
    const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
    torch::Tensor tokens = torch::from_blob(tok.data(), {B_, T}, i64).to(m_.device()).clone();
    torch::Tensor rows = torch::from_blob(last.data(), {B_}, i64).to(m_.device()).clone();
    // The units the forward needs: the per-unit masks are in the cache's
    // layout already; rebuild [B, L, G] from it (a layer the config makes
    // sliding is slid by the forward itself), and the window and sink of
    // the layers the mask decides.
    torch::Tensor units = torch::zeros({B_, L_, G_}, torch::TensorOptions().dtype(torch::kBool));
    bool any = false;
    Window w{1, 0};
    bool have_w = false;
    for (int64_t l = 0; l < L_; l++) {
        const Layer &c = layers_[size_t(l)];
        if (c.config_slides)
            continue;
        if (!have_w) {
            w = Window{c.window, c.sink};
            have_w = true;
        }
        for (int64_t f : c.swa_flat) {
            units[f / G_][l][f % G_] = true;
            any = true;
        }
    }
    units = any ? units.to(m_.device()) : torch::Tensor();
    m_.kv_hook = [this](int64_t layer, const torch::Tensor &k, const torch::Tensor &v) {
        fill(layer, k, v);
    };
    torch::Tensor h;
    try {
        h = m_.run_layers(m_.embed(tokens), units, w, 0, L_);
    } catch (...) {
        m_.kv_hook = nullptr;
        throw;
    }
    m_.kv_hook = nullptr;
    return m_.logits(h.reshape({B_ * T, h.size(2)}).index_select(0, rows));
}

void KvCache::append(Layer &c, const torch::Tensor &k, const torch::Tensor &v,
                     const std::vector<int64_t> &pos) {
    // k, v [B, G, D] at each sequence's position pos[b].
    torch::Tensor kf = k.reshape({B_ * G_, D_}), vf = v.reshape({B_ * G_, D_});
    const torch::Device dev = m_.device();
    if (!c.full_flat.empty()) {
        std::vector<int64_t> at;
        for (int64_t f : c.full_flat)
            at.push_back(pos[size_t(f / G_)]);
        torch::Tensor slot = torch::arange(int64_t(c.full_flat.size()),
                                           torch::TensorOptions().dtype(torch::kInt64).device(dev));
        torch::Tensor t = index_tensor(at, dev);
        c.kf.index_put_({slot, t}, kf.index_select(0, c.full_idx));
        c.vf.index_put_({slot, t}, vf.index_select(0, c.full_idx));
    }
    if (!c.swa_flat.empty()) {
        std::vector<int64_t> at, p;
        for (int64_t f : c.swa_flat) {
            p.push_back(pos[size_t(f / G_)]);
            at.push_back(ring_slot(c, p.back()));
        }
        torch::Tensor slot = torch::arange(int64_t(c.swa_flat.size()),
                                           torch::TensorOptions().dtype(torch::kInt64).device(dev));
        torch::Tensor t = index_tensor(at, dev);
        c.ks.index_put_({slot, t}, kf.index_select(0, c.swa_idx));
        c.vs.index_put_({slot, t}, vf.index_select(0, c.swa_idx));
        c.pos.index_put_({slot, t}, index_tensor(p, dev));
    }
}

torch::Tensor KvCache::attend(const Layer &c, const torch::Tensor &q,
                              const torch::Tensor &pos) const {
    // q [B, G, r, D]; pos [B] (int64): each sequence's new position.
    const int64_t r = q.size(2);
    const double scale = std::pow(double(D_), -0.5);
    const double neg = -std::numeric_limits<double>::infinity();
    torch::Tensor qf = q.reshape({B_ * G_, r, D_});
    torch::Tensor out = torch::empty_like(qf);
    auto run = [&](const torch::Tensor &idx, const torch::Tensor &k, const torch::Tensor &v,
                   const torch::Tensor &valid_of) {
        torch::Tensor qs = qf.index_select(0, idx);
        torch::Tensor sc = torch::matmul(qs, k.transpose(1, 2)) * scale; // [N, r, K]
        sc.masked_fill_(valid_of.logical_not().unsqueeze(1), neg);
        torch::Tensor p = torch::softmax(sc, -1, torch::kFloat32).to(q.scalar_type());
        out.index_copy_(0, idx, torch::matmul(p, v));
    };
    if (!c.full_flat.empty()) {
        const int64_t upto = pos.max().item<int64_t>() + 1; // keys beyond every query: none
        torch::Tensor t = pos.index_select(0, c.full_seq).unsqueeze(1);   // [Nf, 1]
        torch::Tensor j = torch::arange(upto, pos.options()).unsqueeze(0); // [1, upto]
        run(c.full_idx, c.kf.narrow(1, 0, upto), c.vf.narrow(1, 0, upto), j <= t);
    }
    if (!c.swa_flat.empty()) {
        torch::Tensor t = pos.index_select(0, c.swa_seq).unsqueeze(1); // [Ns, 1]
        torch::Tensor valid = (c.pos >= 0) & (c.pos <= t) &
                              ((c.pos > t - c.window) | (c.pos < c.sink));
        run(c.swa_idx, c.ks, c.vs, valid);
    }
    return out.view({B_, G_, r, D_});
}

torch::Tensor KvCache::step(const std::vector<int32_t> &ids) {
    if (int64_t(ids.size()) != B_)
        invalid("KvCache::step: " + std::to_string(ids.size()) + " tokens for a batch of " +
                std::to_string(B_));
    std::vector<int64_t> pos(len_);
    for (int64_t b = 0; b < B_; b++)
        if (pos[size_t(b)] >= cap_)
            invalid("KvCache::step: sequence " + std::to_string(b) + " is at its capacity of " +
                    std::to_string(cap_) + " tokens");
    const ModelConfig &cfg = m_.config();
    const torch::Device dev = m_.device();
    const int64_t H = m_.hidden(), nH = cfg.num_attention_heads, r = nH / G_;
    std::vector<int64_t> tok(ids.begin(), ids.end());
    torch::Tensor h = m_.embed(index_tensor(tok, dev).view({B_, 1})); // [B, 1, H]
    torch::Tensor post = index_tensor(pos, dev);
    const auto rope = m_.rope(*std::max_element(pos.begin(), pos.end()) + 1);
    torch::Tensor cs = rope.first.index_select(0, post).view({B_, 1, 1, D_});
    torch::Tensor sn = rope.second.index_select(0, post).view({B_, 1, 1, D_});
    for (int64_t l = 0; l < L_; l++) {
        const LayerWeights &W = m_.layer(l);
        torch::Tensor x = m_.rms_norm(h, W.input_norm);
        torch::Tensor q = m_.project_heads(x, W.q_proj, W.q_bias, W.q_norm, nH).transpose(1, 2);
        torch::Tensor k = m_.project_heads(x, W.k_proj, W.k_bias, W.k_norm, G_).transpose(1, 2);
        torch::Tensor v =
            m_.project_heads(x, W.v_proj, W.v_bias, torch::Tensor(), G_).transpose(1, 2);
        q = q * cs + rotate_half(q) * sn; // [B, nH, 1, D]
        k = k * cs + rotate_half(k) * sn; // [B, G, 1, D]
        Layer &c = layers_[size_t(l)];
        append(c, k.reshape({B_, G_, D_}), v.reshape({B_, G_, D_}), pos);
        torch::Tensor o = attend(c, q.reshape({B_, G_, r, D_}), post); // heads g * r + i
        h = h + torch::linear(o.reshape({B_, 1, nH * D_}), W.o_proj, W.o_bias);
        torch::Tensor y = m_.rms_norm(h, W.post_norm).reshape({B_, H});
        h = h + feed_forward(cfg, W, y, m_.block_bytes()).view({B_, 1, H});
    }
    for (int64_t b = 0; b < B_; b++)
        len_[size_t(b)]++;
    return m_.logits(h.view({B_, H}));
}

} // namespace bosch_torch
