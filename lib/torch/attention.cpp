// Attention kernels of the forward (see attention.hpp for shapes and the
// tiling rationale).
#include "attention.hpp"

#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <limits>

#if TORCH_VERSION_MAJOR >= 2
#define BOSCH_FUSED_SDPA 1
#endif

namespace bosch_torch {

torch::Tensor take(torch::Tensor &slot, int64_t numel, const torch::TensorOptions &opts) {
    if (!slot.defined() || slot.numel() < numel || slot.scalar_type() != opts.dtype() ||
        slot.device() != opts.device())
        slot = torch::empty({std::max<int64_t>(numel, 1)}, opts);
    return slot.narrow(0, 0, numel);
}

namespace {

constexpr int64_t kScoreBytes = 4; // budget every score as fp32 (softmax's type)

// Pairs per tile once the rows are fixed: what the budget leaves, 1..S.
int64_t fit_pairs(int64_t S, int64_t r, int64_t rows, int64_t keys, int64_t block_bytes) {
    const int64_t per_pair = std::max<int64_t>(1, r * rows * keys * kScoreBytes);
    return std::clamp<int64_t>(block_bytes / per_pair, 1, std::max<int64_t>(S, 1));
}

// Softmax over the last dimension of a score tile, returning probabilities
// in the scores' dtype. f32 on the CPU: in place (the workspace is the
// output). Other dtypes as Hugging Face's eager attention: fp32 softmax,
// cast back.
torch::Tensor softmax_tile(torch::Tensor &scores) {
    if (scores.scalar_type() != torch::kFloat32)
        return torch::softmax(scores, -1, torch::kFloat32).to(scores.scalar_type());
    if (scores.device().is_cpu())
        return at::_softmax_out(scores, scores, -1, false);
    return at::_softmax(scores, -1, false);
}

// One tile of `Sc` pairs: scores = scale * q k^T over the given keys, the
// positions in `blocked` ([n, m], broadcast over pairs and heads, covering
// the m key columns from `mask_from`) set to -inf, softmax, times values,
// written to out's rows [t0, t0 + n).
void attend(const torch::Tensor &qp, const torch::Tensor &kc, const torch::Tensor &vc,
            const torch::Tensor &blocked, int64_t mask_from, torch::Tensor &op, int64_t t0,
            int64_t n, double scale, Workspace &ws) {
    const int64_t Sc = qp.size(0), r = qp.size(1), D = qp.size(3), nk = kc.size(1);
    torch::Tensor qc = qp.narrow(2, t0, n).reshape({Sc, r * n, D});
    torch::Tensor sc = take(ws.scores, Sc * r * n * nk, qp.options()).view({Sc, r * n, nk});
    // HF's order (q k^T rounded, then scaled). Not baddbmm_out(sc, sc, ...,
    // beta 0): libtorch 1.13 reads the uninitialised workspace even at beta
    // 0 when the output is its input (NaN scores from a NaN left there, in
    // f32 as in bf16).
    at::bmm_out(sc, qc, kc.transpose(1, 2));
    sc.mul_(scale);
    sc.view({Sc, r, n, nk})
        .narrow(3, mask_from, blocked.size(1))
        .masked_fill_(blocked, -std::numeric_limits<double>::infinity());
    torch::Tensor probs = softmax_tile(sc);
    torch::Tensor ob = take(ws.out, Sc * r * n * D, qp.options()).view({Sc, r * n, D});
    at::bmm_out(ob, probs, vc);
    op.narrow(2, t0, n).copy_(ob.view({Sc, r, n, D}));
}

#ifdef BOSCH_FUSED_SDPA
// The fused kernel (flash / memory-efficient / CPU flash) for full causal
// attention; its default scale is head_dim^-0.5, the model's.
void causal_fused(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                  torch::Tensor &out) {
    const int64_t S = q.size(0), T = q.size(2), D = q.size(3);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
    torch::Tensor o = at::scaled_dot_product_attention(q, k.view({S, 1, T, D}), v.view({S, 1, T, D}),
                                                       {}, 0.0, true, c10::nullopt, true);
#else
    const int64_t r = q.size(1);
    torch::Tensor ke = k.view({S, 1, T, D}).expand({S, r, T, D}).contiguous();
    torch::Tensor ve = v.view({S, 1, T, D}).expand({S, r, T, D}).contiguous();
    torch::Tensor o = at::scaled_dot_product_attention(q, ke, ve, {}, 0.0, true);
#endif
    out.copy_(o);
}
#endif

// The tile a kernel uses for S pairs of r heads: `rows` query rows and
// `pairs` pairs per tile, so that pairs * r * rows * keys * 4 <= block_bytes
// for the widest tile's key count (as far as the rows allow: a tile has at
// least min(T, 16) rows and one pair).
struct TilePlan {
    int64_t rows = 1, pairs = 1;
};

TilePlan plan_causal(int64_t S, int64_t r, int64_t T, int64_t block_bytes) {
    TilePlan p;
    // ~1/8 of the sequence per tile, 64..256 rows: fewer rows waste work on
    // the keys past a tile's first query, more leave the scores far out of
    // cache without making the matmuls faster.
    const int64_t want = std::min(T, std::clamp<int64_t>(T / 8, 64, 256));
    const int64_t per_row = std::max<int64_t>(1, r * T * kScoreBytes);
    p.rows = std::max<int64_t>(std::min<int64_t>(T, 16), std::min(want, block_bytes / per_row));
    p.pairs = fit_pairs(S, r, p.rows, T, block_bytes);
    return p;
}

TilePlan plan_banded(int64_t S, int64_t r, int64_t T, int64_t win, int64_t snk,
                     int64_t block_bytes) {
    TilePlan p;
    // A tile of n rows multiplies n * (n + win - 1) band entries for about
    // n * win useful ones: n near half the window.
    const int64_t want = std::min(T, std::max<int64_t>(64, (win + 1) / 2));
    // n * (A + n) * r * 4 <= block_bytes, A = snk + win - 1.
    const double A = double(snk + win - 1);
    const double M = double(block_bytes) / double(std::max<int64_t>(1, r * kScoreBytes));
    const int64_t n_fit = int64_t((-A + std::sqrt(A * A + 4.0 * M)) / 2.0);
    p.rows = std::max<int64_t>(std::min<int64_t>(T, 16), std::min(want, n_fit));
    p.pairs = fit_pairs(S, r, p.rows, std::min(T, snk + win - 1 + p.rows), block_bytes);
    return p;
}

// Runs tile(qp, kp, vp, op, t0, n) over every tile of the plan: pairs in
// chunks of p.pairs (qp, kp, vp, op their slices), rows in chunks of p.rows.
template <class Tile>
void for_each_tile(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                   torch::Tensor &out, const TilePlan &p, Tile tile) {
    const int64_t S = q.size(0), T = q.size(2);
    for (int64_t p0 = 0; p0 < S; p0 += p.pairs) {
        const int64_t Sc = std::min(p.pairs, S - p0);
        torch::Tensor qp = q.narrow(0, p0, Sc), kp = k.narrow(0, p0, Sc), vp = v.narrow(0, p0, Sc);
        torch::Tensor op = out.narrow(0, p0, Sc);
        for (int64_t t0 = 0; t0 < T; t0 += p.rows)
            tile(qp, kp, vp, op, t0, std::min(p.rows, T - t0));
    }
}

// x's rows [0, ns) then [lo, lo + nb) ([Sc, T, D] -> [Sc, ns + nb, D]),
// gathered into a workspace slot; the band alone is a view (no copy).
torch::Tensor sink_and_band(torch::Tensor &slot, const torch::Tensor &x, int64_t ns, int64_t lo,
                            int64_t nb) {
    if (ns == 0)
        return x.narrow(1, lo, nb);
    const int64_t Sc = x.size(0), D = x.size(2);
    torch::Tensor g = take(slot, Sc * (ns + nb) * D, x.options()).view({Sc, ns + nb, D});
    g.narrow(1, 0, ns).copy_(x.narrow(1, 0, ns));
    g.narrow(1, ns, nb).copy_(x.narrow(1, lo, nb));
    return g;
}

#ifdef BOSCH_FUSED_SDPA
// The chunk plan of banded_fused: queries [0, head) attend causally (t <
// window + sink sees every earlier key), then `chunks` chunks of `C` queries
// from `head`, the last one padded past T.
struct ChunkPlan {
    int64_t head = 0, C = 1, chunks = 0;
};

ChunkPlan plan_chunks(int64_t T, int64_t win, int64_t snk) {
    ChunkPlan p;
    p.head = std::min(T, win + snk);
    if (p.head == T)
        return p;
    // Each query multiplies C - 1 keys beyond its window (the chunk's band is
    // C + window - 1 wide): a quarter window wastes a quarter of the work,
    // and rows in multiples of 16 suit the kernels' blocks.
    p.C = std::min(T - p.head, std::max<int64_t>(16, ((win + 3) / 4 + 15) / 16 * 16));
    p.chunks = (T - p.head + p.C - 1) / p.C;
    return p;
}

// Keys (or values) of every chunk c for every pair of x [S, Tp, D] (padded
// to the last chunk's end): the sink keys then the chunk's band
// [head + c * C - win + 1, head + (c + 1) * C), as [S * chunks, 1, snk + C +
// win - 1, D] in one copy.
torch::Tensor chunk_keys(const torch::Tensor &x, const ChunkPlan &p, int64_t win, int64_t snk) {
    const int64_t S = x.size(0), D = x.size(2), Kb = p.C + win - 1, n = p.chunks;
    torch::Tensor band = x.narrow(1, p.head - win + 1, n * p.C + win - 1)
                             .unfold(1, Kb, p.C) // [S, n, D, Kb], a view
                             .transpose(2, 3);
    if (snk == 0)
        return band.reshape({S * n, 1, Kb, D});
    torch::Tensor sinks = x.narrow(1, 0, snk).unsqueeze(1).expand({S, n, snk, D});
    return torch::cat({sinks, band}, 2).view({S * n, 1, snk + Kb, D});
}
#endif

} // namespace

bool fused_available() {
#ifdef BOSCH_FUSED_SDPA
    return true;
#else
    return false;
#endif
}

void banded_fused(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                  torch::Tensor out, int64_t window, int64_t sink, int64_t block_bytes) {
#ifdef BOSCH_FUSED_SDPA
    const int64_t S = q.size(0), r = q.size(1), T = q.size(2), D = q.size(3);
    const int64_t win = std::clamp<int64_t>(window, 1, T), snk = std::clamp<int64_t>(sink, 0, T);
    const ChunkPlan p = plan_chunks(T, win, snk);
    {
        torch::Tensor oh = out.narrow(2, 0, p.head);
        causal_fused(q.narrow(2, 0, p.head), k.narrow(1, 0, p.head), v.narrow(1, 0, p.head), oh);
    }
    if (p.chunks == 0)
        return;
    const int64_t C = p.C, Kb = C + win - 1, Kc = snk + Kb, Tp = p.head + p.chunks * C;
    // Padding past T: queries whose outputs are dropped, keys that only
    // they can see (query i of a chunk sees band columns i .. i + win - 1).
    torch::Tensor qp = q, kp = k, vp = v;
    if (Tp > T) {
        namespace F = torch::nn::functional;
        auto pad = F::PadFuncOptions({0, 0, 0, Tp - T});
        qp = F::pad(q, pad), kp = F::pad(k, pad), vp = F::pad(v, pad);
    }
    // Query i of every chunk sees all sink columns (its band starts after
    // them: t - win + 1 > sink - 1) and band columns i .. i + win - 1; the r
    // heads of a group are r row blocks against its one key head.
    auto bopts = torch::TensorOptions().dtype(torch::kBool).device(q.device());
    torch::Tensor i = torch::arange(C, bopts.dtype(torch::kInt64)).unsqueeze(1);
    torch::Tensor j = torch::arange(Kb, bopts.dtype(torch::kInt64)).unsqueeze(0);
    torch::Tensor allowed = (j >= i) & (j <= i + (win - 1));
    if (snk > 0)
        allowed = torch::cat({torch::ones({C, snk}, bopts), allowed}, 1);
    allowed = allowed.repeat({r, 1}).view({1, 1, r * C, Kc});
    // Pairs per call: their gathered keys and values, queries and outputs
    // under block_bytes (the fused kernels keep no score matrix).
    const int64_t per_pair =
        std::max<int64_t>(1, p.chunks * (2 * Kc + 2 * r * C) * D * int64_t(q.element_size()));
    const int64_t group = std::clamp<int64_t>(block_bytes / per_pair, 1, S);
    torch::Tensor tail = out.narrow(2, p.head, T - p.head);
    for (int64_t p0 = 0; p0 < S; p0 += group) {
        const int64_t Sc = std::min(group, S - p0), n = p.chunks;
        torch::Tensor kc = chunk_keys(kp.narrow(0, p0, Sc), p, win, snk);
        torch::Tensor vc = chunk_keys(vp.narrow(0, p0, Sc), p, win, snk);
        torch::Tensor qc = qp.narrow(0, p0, Sc)
                               .narrow(2, p.head, n * C)
                               .view({Sc, r, n, C, D})
                               .permute({0, 2, 1, 3, 4})
                               .reshape({Sc * n, 1, r * C, D});
        torch::Tensor o = at::scaled_dot_product_attention(qc, kc, vc, allowed);
        tail.narrow(0, p0, Sc).copy_(o.view({Sc, n, r, C, D})
                                         .permute({0, 2, 1, 3, 4})
                                         .reshape({Sc, r, n * C, D})
                                         .narrow(2, 0, T - p.head));
    }
#else
    (void)q, (void)k, (void)v, (void)out, (void)window, (void)sink, (void)block_bytes;
    TORCH_CHECK(false, "banded_fused: this libtorch has no fused attention kernel");
#endif
}

void causal_pairs(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                  torch::Tensor out, double scale, int64_t block_bytes, Workspace &ws,
                  bool tiled) {
    const int64_t S = q.size(0), r = q.size(1), T = q.size(2);
#ifdef BOSCH_FUSED_SDPA
    if (!tiled && std::abs(scale * std::sqrt(double(q.size(3))) - 1.0) < 1e-12) {
        causal_fused(q, k, v, out);
        return;
    }
#else
    (void)tiled;
#endif
    const TilePlan p = plan_causal(S, r, T, block_bytes);
    // Above the diagonal of a tile's last n keys (its own positions).
    torch::Tensor above = torch::ones({p.rows, p.rows}, torch::TensorOptions()
                                                            .dtype(torch::kBool)
                                                            .device(q.device()))
                              .triu(1);
    for_each_tile(q, k, v, out, p,
                  [&](const torch::Tensor &qp, const torch::Tensor &kp, const torch::Tensor &vp,
                      torch::Tensor &op, int64_t t0, int64_t n) {
                      // Keys before t0 are visible to every query of the tile:
                      // only the tile's own block needs the causal mask.
                      const int64_t t1 = t0 + n;
                      attend(qp, kp.narrow(1, 0, t1), vp.narrow(1, 0, t1),
                             above.narrow(0, 0, n).narrow(1, 0, n), t0, op, t0, n, scale, ws);
                  });
}

void banded_pairs(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                  torch::Tensor out, double scale, int64_t window, int64_t sink,
                  int64_t block_bytes, Workspace &ws) {
    const int64_t S = q.size(0), r = q.size(1), T = q.size(2);
    const int64_t win = std::clamp<int64_t>(window, 1, T), snk = std::clamp<int64_t>(sink, 0, T);
    const TilePlan p = plan_banded(S, r, T, win, snk, block_bytes);
    auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(q.device());
    for_each_tile(q, k, v, out, p,
                  [&](const torch::Tensor &qp, const torch::Tensor &kp, const torch::Tensor &vp,
                      torch::Tensor &op, int64_t t0, int64_t n) {
                      const int64_t t1 = t0 + n;
                      const int64_t lo = std::max<int64_t>(0, t0 - win + 1), ns = std::min(snk, lo);
                      const int64_t nb = t1 - lo;
                      torch::Tensor kc = sink_and_band(ws.keys, kp, ns, lo, nb);
                      torch::Tensor vc = sink_and_band(ws.values, vp, ns, lo, nb);
                      // The sink columns are visible to every query (s < sink,
                      // s < lo <= t); the band columns need the window and
                      // causal tests.
                      torch::Tensor kj = torch::arange(lo, t1, i64).unsqueeze(0); // [1, nb]
                      torch::Tensor qi = torch::arange(t0, t1, i64).unsqueeze(1); // [n, 1]
                      torch::Tensor blocked = (kj > qi) | ((kj <= qi - window) & (kj >= sink));
                      attend(qp, kc, vc, blocked, ns, op, t0, n, scale, ws);
                  });
}

} // namespace bosch_torch
