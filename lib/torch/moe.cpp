// The feed-forward half of a layer: Qwen3's SwiGLU MLP, or Qwen3-MoE's block
// of experts, as transformers 5 computes them (modeling_qwen3_moe.py:
// Qwen3MoeTopKRouter, Qwen3MoeExperts), and the checkpoint's expert layout.
#include "model.hpp"

#include "failure.hpp"

#include <torch/version.h>

#include <cstdlib>
#include <string>

namespace bosch_torch {

torch::Tensor silu_rounded_once(const torch::Tensor &g) {
#if TORCH_VERSION_MAJOR < 2
    if (g.scalar_type() != torch::kFloat32)
        return torch::silu(g.to(torch::kFloat32)).to(g.scalar_type());
#endif
    return torch::silu(g);
}

namespace {

// SwiGLU; biases undefined where the layer has none (Llama's mlp_bias).
torch::Tensor swiglu(const torch::Tensor &x, const torch::Tensor &gate_w,
                     const torch::Tensor &up_w, const torch::Tensor &down_w,
                     const torch::Tensor &gate_b = {}, const torch::Tensor &up_b = {},
                     const torch::Tensor &down_b = {}) {
    torch::Tensor gate = silu_rounded_once(torch::linear(x, gate_w, gate_b));
    return torch::linear(gate * torch::linear(x, up_w, up_b), down_w, down_b);
}

// Routes each row of x [N, H] to its top-k experts and sums their outputs
// weighted by the router. The routes are grouped by expert (one stable sort)
// so that each expert runs one matmul over all its rows (in chunks whose
// temporaries stay under block_bytes), reading its weights once per layer
// whatever N; the outputs are added expert after expert in ascending order,
// as transformers adds them, and a row meets each expert at most once, so
// the sums round alike.
torch::Tensor experts(const ModelConfig &c, const LayerWeights &L, const torch::Tensor &x,
                      int64_t block_bytes) {
    const int64_t N = x.size(0), k = c.num_experts_per_tok, E = c.num_experts,
                  I = c.moe_intermediate_size;
    torch::Tensor probs = torch::softmax(torch::linear(x, L.router), -1, torch::kFloat32);
    auto top = torch::topk(probs, k, -1);
    torch::Tensor weight = std::get<0>(top), chosen = std::get<1>(top); // [N, k]
    if (c.norm_topk_prob)
        weight = weight / weight.sum(-1, true);
    weight = weight.to(x.scalar_type());

    auto sorted = torch::sort(chosen.reshape({N * k}), /*stable=*/true, 0, false);
    torch::Tensor order = std::get<1>(sorted);
    torch::Tensor rows_of = order.div(k, "floor");
    torch::Tensor weight_of = weight.reshape({N * k}).index_select(0, order).unsqueeze(1);
    // The only host synchronisation of the block: how many rows each expert has.
    torch::Tensor counts =
        torch::bincount(std::get<0>(sorted), {}, E).to(torch::kCPU, torch::kInt64).contiguous();
    const int64_t *n_of = counts.data_ptr<int64_t>();

    const int64_t chunk = std::max<int64_t>(
        1, block_bytes / std::max<int64_t>(1, (2 * x.size(1) + 3 * I) * int64_t(x.element_size())));
    torch::Tensor out = torch::zeros_like(x);
    int64_t start = 0;
    for (int64_t e = 0; e < E; e++) {
        const int64_t end = start + n_of[e];
        torch::Tensor gate_up = L.experts_gate_up.select(0, e);
        torch::Tensor gate_w = gate_up.narrow(0, 0, I), up_w = gate_up.narrow(0, I, I),
                      down_w = L.experts_down.select(0, e);
        for (int64_t r0 = start; r0 < end; r0 += chunk) {
            const int64_t n = std::min(chunk, end - r0);
            torch::Tensor rows = rows_of.narrow(0, r0, n);
            torch::Tensor y = swiglu(x.index_select(0, rows), gate_w, up_w, down_w);
            out.index_add_(0, rows, y * weight_of.narrow(0, r0, n));
        }
        start = end;
    }
    return out;
}

std::string expert_name(int64_t l, int64_t e, const char *proj) {
    return "model.layers." + std::to_string(l) + ".mlp.experts." + std::to_string(e) + "." +
           proj + ".weight";
}

} // namespace

torch::Tensor feed_forward(const ModelConfig &c, const LayerWeights &L, const torch::Tensor &x,
                           int64_t block_bytes) {
    if (L.router.defined())
        return experts(c, L, x, block_bytes);
    return swiglu(x, L.gate_proj, L.up_proj, L.down_proj, L.gate_bias, L.up_bias, L.down_bias);
}

std::string fuse_experts(const ModelConfig &cfg, TensorMap &w) {
    if (!cfg.moe)
        return "";
    const int64_t E = cfg.num_experts, I = cfg.moe_intermediate_size, H = cfg.hidden_size;
    for (int64_t l = 0; l < cfg.num_hidden_layers; l++) {
        const std::string p = "model.layers." + std::to_string(l) + ".mlp.experts.";
        // Every per-expert tensor of this layer, and the highest index named.
        int64_t found = 0, top = -1;
        for (auto it = w.lower_bound(p); it != w.end() && it->first.compare(0, p.size(), p) == 0;
             ++it) {
            const char *s = it->first.c_str() + p.size();
            char *end = nullptr;
            long long e = std::strtoll(s, &end, 10);
            if (end == s || *end != '.')
                continue;
            found++;
            top = std::max<int64_t>(top, e);
        }
        if (found == 0)
            continue;
        if (!cfg.sparse(l))
            return "tensor " + p + std::to_string(top) +
                   ".* belongs to a layer the config makes dense (mlp_only_layers, "
                   "decoder_sparse_step, num_experts)";
        if (w.count(p + "gate_up_proj") || w.count(p + "down_proj"))
            return "layer " + std::to_string(l) +
                   " holds its experts both apart (" + p + "E.*) and fused (" + p + "gate_up_proj)";
        if (top >= E)
            return "tensor " + p + std::to_string(top) + ".* names an expert beyond num_experts " +
                   std::to_string(E);
        std::vector<torch::Tensor> gate_up, down;
        for (int64_t e = 0; e < E; e++) {
            const char *projs[] = {"gate_proj", "up_proj", "down_proj"};
            torch::Tensor t[3];
            for (int i = 0; i < 3; i++) {
                const std::string n = expert_name(l, e, projs[i]);
                auto it = w.find(n);
                std::vector<int64_t> shape = i < 2 ? std::vector<int64_t>{I, H}
                                                   : std::vector<int64_t>{H, I};
                if (it == w.end())
                    return "missing tensor " + n + " (expected shape " +
                           c10::str(c10::IntArrayRef(shape)) + ")";
                if (it->second.sizes() != c10::IntArrayRef(shape))
                    return "tensor " + n + " has shape " + c10::str(it->second.sizes()) +
                           ", expected " + c10::str(c10::IntArrayRef(shape));
                if (e > 0 && it->second.scalar_type() != w.at(expert_name(l, 0, projs[i])).scalar_type())
                    return "tensor " + n + " is stored as " +
                           std::string(c10::toString(it->second.scalar_type())) +
                           ", expert 0 of the layer as " +
                           std::string(c10::toString(
                               w.at(expert_name(l, 0, projs[i])).scalar_type()));
                t[i] = it->second;
            }
            if (t[0].scalar_type() != t[1].scalar_type())
                return "tensors " + expert_name(l, e, "gate_proj") + " and up_proj differ in dtype";
            gate_up.push_back(torch::cat({t[0], t[1]}, 0));
            down.push_back(t[2]);
        }
        w[p + "gate_up_proj"] = torch::stack(gate_up);
        w[p + "down_proj"] = torch::stack(down);
        for (int64_t e = 0; e < E; e++)
            for (const char *proj : {"gate_proj", "up_proj", "down_proj"})
                w.erase(expert_name(l, e, proj));
    }
    return "";
}

} // namespace bosch_torch
