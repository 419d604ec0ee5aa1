// Attention as scores plus a mask over every causal key: the masked
// reference path (BOSCH_TORCH_ATTENTION=masked, and the noise
// measurement's other path), and the last layer at selected rows only
// (Model::last_layer_at), which computes its attention the same way.
#include "model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bosch_torch {

namespace {

// Which keys `kj` a query at position `qi` may attend (shapes broadcast):
// causal; within the config's window in a layer the config slides; within
// sink + window for the sliding units (swa_units, bool, broadcast over the
// leading dimensions; undefined = none). attend_masked and last_layer_at
// apply it alike.
torch::Tensor allowed_keys(const torch::Tensor &qi, const torch::Tensor &kj,
                           const torch::Tensor &swa_units, bool layer_slides,
                           int64_t config_window, const Window &w) {
    torch::Tensor allowed = kj <= qi;
    if (layer_slides)
        return allowed & (kj > qi - config_window);
    if (swa_units.defined())
        return torch::where(swa_units, allowed & ((kj > qi - w.window) | (kj < w.sink)), allowed);
    return allowed;
}

} // namespace

void Model::attend_masked(const torch::Tensor &q5, const torch::Tensor &k,
                          const torch::Tensor &v, torch::Tensor &out,
                          const torch::Tensor &swa_units, bool layer_slides, const Window &w) {
    const int64_t B = q5.size(0), G = q5.size(1), r = q5.size(2), T = q5.size(3),
                  D = q5.size(4), nH = G * r;
    const double scale = std::pow(double(D), -0.5);
    // The masked reference (BOSCH_TORCH_ATTENTION=masked): every unit over all
    // causal keys, the window applied as a mask; query tiling keeps the fp32
    // score block [B, G, r, n, T] under block_bytes_.
    const int64_t per_row = std::max<int64_t>(1, B * nH * T * 4);
    // At least 8 tiles for long sequences: keys beyond a tile's last query are
    // skipped (causal), which saves up to ~45% of the score work.
    const int64_t n_cap = std::max<int64_t>(128, (T + 7) / 8);
    const int64_t n_block =
        std::max<int64_t>(1, std::min({T, n_cap, block_bytes_ / per_row}));
    auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(device_);
    for (int64_t t0 = 0; t0 < T; t0 += n_block) {
        const int64_t n = std::min(n_block, T - t0), t1 = t0 + n; // keys 0..t1-1 suffice (causal)
        torch::Tensor qc = q5.narrow(3, t0, n).reshape({B, G, r * n, D});
        torch::Tensor kc = k.narrow(2, 0, t1), vc = v.narrow(2, 0, t1);
        torch::Tensor scores = torch::matmul(qc, kc.transpose(-1, -2)) * scale; // [B,G,r*n,t1]
        scores = scores.view({B, G, r, n, t1});

        torch::Tensor qi = torch::arange(t0, t1, i64).unsqueeze(1); // [n, 1]
        torch::Tensor kj = torch::arange(0, t1, i64).unsqueeze(0);  // [1, t1]
        // [n, t1], or [B, G, 1, n, t1] with sliding units
        torch::Tensor allowed =
            allowed_keys(qi, kj, swa_units, layer_slides, cfg_.sliding_window, w);
        scores.masked_fill_(allowed.logical_not(), -std::numeric_limits<double>::infinity());
        torch::Tensor probs = torch::softmax(scores, -1, torch::kFloat32).to(q5.scalar_type());
        torch::Tensor oc = torch::matmul(probs.view({B, G, r * n, t1}), vc); // [B,G,r*n,D]
        out.narrow(3, t0, n).copy_(oc.view({B, G, r, n, D}));
    }
}

torch::Tensor Model::last_layer_at(const torch::Tensor &h, const torch::Tensor &units,
                                   const Window &w, const torch::Tensor &rows) {
    const int64_t l = layers() - 1;
    const LayerWeights &L = layers_[size_t(l)];
    const int64_t B = h.size(0), T = h.size(1), H = h.size(2), R = rows.size(1);
    const int64_t D = cfg_.head_dim, G = cfg_.num_key_value_heads;
    const int64_t nH = cfg_.num_attention_heads, r = nH / G;
    TORCH_CHECK(rows.dim() == 2 && rows.size(0) == B && rows.scalar_type() == torch::kInt64,
                "last_layer_at: rows must be int64 [B, R]");
    if (units.defined())
        TORCH_CHECK(units.dim() == 3 && units.size(0) == B && units.size(1) == layers() &&
                        units.size(2) == G && units.scalar_type() == torch::kBool,
                    "last_layer_at: units must be bool [B, layers, kv_heads]");
    const torch::Tensor x = rms_norm(h, L.input_norm);
    torch::Tensor k, v; // of every position
    project_kv(L, x, k, v);
    torch::Tensor cos = cos_.narrow(0, 0, T), sin = sin_.narrow(0, 0, T);
    // Queries at the rows only, each rotated by its own position.
    const torch::Tensor flat_rows =
        (rows + torch::arange(B, rows.options()).mul_(T).unsqueeze(1)).reshape({-1});
    const torch::Tensor hr = h.reshape({B * T, H}).index_select(0, flat_rows).view({B, R, H});
    const torch::Tensor xr = x.reshape({B * T, H}).index_select(0, flat_rows).view({B, R, H});
    torch::Tensor q = project_heads(xr, L.q_proj, L.q_bias, L.q_norm, nH);
    const torch::Tensor pos = rows.reshape({-1});
    const torch::Tensor cr = cos.index_select(0, pos).view({B, R, 1, D});
    const torch::Tensor sr = sin.index_select(0, pos).view({B, R, 1, D});
    q = (q * cr + rotate_half(q) * sr).permute({0, 2, 1, 3}).contiguous(); // [B, nH, R, D]
    torch::Tensor q5 = q.view({B, G, r, R, D});

    // Which keys each row sees, as attention() decides it.
    bool layer_slides = false;
    const torch::Tensor swa_units = sliding_units(l, units, w, T, &layer_slides);
    // The masked reference's arithmetic (attend_masked) over tiles of batch
    // elements x rows that keep the fp32 scores under block_bytes_.
    const double scale = std::pow(double(D), -0.5);
    const int64_t per_row = std::max<int64_t>(1, nH * T * 4);
    const int64_t n_rows = std::max<int64_t>(1, std::min(R, block_bytes_ / per_row));
    const int64_t n_b = std::max<int64_t>(1, std::min(B, block_bytes_ / (per_row * n_rows)));
    torch::Tensor out = torch::empty({B, G, r, R, D}, q.options());
    const torch::Tensor kj = torch::arange(T, rows.options()); // [T]
    for (int64_t b0 = 0; b0 < B; b0 += n_b) {
        const int64_t nb = std::min(n_b, B - b0);
        for (int64_t r0 = 0; r0 < R; r0 += n_rows) {
            const int64_t nr = std::min(n_rows, R - r0);
            const torch::Tensor qc = q5.narrow(0, b0, nb).narrow(3, r0, nr).reshape({nb, G, r * nr, D});
            const torch::Tensor kc = k.narrow(0, b0, nb), vc = v.narrow(0, b0, nb);
            torch::Tensor scores = torch::matmul(qc, kc.transpose(-1, -2)) * scale;
            scores = scores.view({nb, G, r, nr, T});
            // [nb, 1, 1, nr, 1]: the rows' positions against the keys [T]
            const torch::Tensor qi = rows.narrow(0, b0, nb).narrow(1, r0, nr).view({nb, 1, 1, nr, 1});
            const torch::Tensor allowed = allowed_keys(
                qi, kj, swa_units.defined() ? swa_units.narrow(0, b0, nb) : swa_units, layer_slides,
                cfg_.sliding_window, w); // [nb, 1 or G, 1, nr, T]
            scores.masked_fill_(allowed.logical_not(), -std::numeric_limits<double>::infinity());
            torch::Tensor probs = torch::softmax(scores, -1, torch::kFloat32).to(q.scalar_type());
            torch::Tensor oc = torch::matmul(probs.view({nb, G, r * nr, T}), vc);
            out.narrow(0, b0, nb).narrow(3, r0, nr).copy_(oc.view({nb, G, r, nr, D}));
        }
    }
    // [B, G, r, R, D] -> [B, R, nH * D] (head g*r + i), as attention().
    torch::Tensor o = out.permute({0, 3, 1, 2, 4}).reshape({B, R, nH * D});
    torch::Tensor y = hr + torch::linear(o, L.o_proj, L.o_bias);
    return y + mlp(l, rms_norm(y, L.post_norm));
}

} // namespace bosch_torch
