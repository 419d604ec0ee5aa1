// Logits of libbosch-torch against tools/ref_qwen3.py, an independent plain
// PyTorch implementation of Qwen3, on tiny checkpoints with per-unit masks
// that differ per batch element. f32: max abs diff < 1e-4. Exit 77 (skip)
// when the Python interpreter ($BOSCH_PYTHON, default /usr/bin/python3)
// cannot import torch or the script ($BOSCH_REF_QWEN3) is missing.
#include "tiny_checkpoint.hpp"

#include "bosch/torch.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <sys/stat.h>

using namespace bosch_torch_test;

static int g_failures = 0;

static std::string make_dir(const std::string &d) {
    return ::mkdir(d.c_str(), 0700) == 0 ? "" : "cannot create " + d;
}

static std::string shell_quote(const std::string &s) {
    std::string o = "'";
    for (char c : s) {
        if (c == '\'')
            o += "'\\''";
        else
            o += c;
    }
    return o + "'";
}

struct Case {
    const char *name;
    TinySpec spec;
    int dtype; // BOSCH_TORCH_DTYPE_*
    const char *py_dtype;
    double tol;
    size_t batch, len;
    uint32_t window, sink;
};

// existing: a checkpoint directory to use instead of writing c.spec's.
static void run_case(const Case &c, const std::string &tmp, const std::string &python,
                     const std::string &script, const std::string &existing = "") {
    const std::string dir = tmp + "/" + c.name;
    std::string e = existing.empty() ? write_tiny_qwen3(dir, c.spec) : make_dir(dir);
    const std::string ckpt = existing.empty() ? dir : existing;
    if (!e.empty()) {
        std::fprintf(stderr, "%s: write_tiny_qwen3: %s\n", c.name, e.c_str());
        g_failures++;
        return;
    }
    bosch_torch_model *m = bosch_torch_model_open(ckpt.c_str(), BOSCH_TORCH_DEVICE_CPU, c.dtype);
    if (!m) {
        std::fprintf(stderr, "%s: load: %s\n", c.name, bosch_torch_create_error());
        g_failures++;
        return;
    }
    uint32_t L, G, r, V;
    bosch_torch_model_shape(m, &L, &G, &r, &V);
    const size_t U = size_t(L) * G, B = c.batch, T = c.len;
    std::mt19937 rng(1234);
    std::vector<int32_t> tok(B * T);
    for (auto &t : tok)
        t = int32_t(rng() % V);
    // Element 0 all full, the last all SWA, the others random.
    std::vector<uint8_t> masks(B * U);
    for (size_t b = 0; b < B; b++)
        for (size_t u = 0; u < U; u++)
            masks[b * U + u] = b == 0 ? 0 : b == B - 1 ? 1 : uint8_t(rng() % 2);
    std::vector<int32_t> pos(T);
    for (size_t i = 0; i < T; i++)
        pos[i] = int32_t(i);
    std::vector<float> ours(B * T * V);
    if (bosch_torch_model_forward(m, tok.data(), B, T, masks.data(), c.window, c.sink, pos.data(),
                                  T, ours.data()) != BOSCH_OK) {
        std::fprintf(stderr, "%s: forward: %s\n", c.name, bosch_torch_model_last_error(m));
        g_failures++;
        bosch_torch_model_free(m);
        return;
    }
    bosch_torch_model_free(m);

    std::string in = "{\"tokens\":[";
    for (size_t b = 0; b < B; b++) {
        in += b ? ",[" : "[";
        for (size_t t = 0; t < T; t++)
            in += (t ? "," : "") + std::to_string(tok[b * T + t]);
        in += "]";
    }
    in += "],\"masks\":[";
    for (size_t b = 0; b < B; b++) {
        in += b ? ",[" : "[";
        for (size_t u = 0; u < U; u++)
            in += (u ? "," : "") + std::to_string(int(masks[b * U + u]));
        in += "]";
    }
    in += "],\"window\":" + std::to_string(c.window) + ",\"sink\":" + std::to_string(c.sink) +
          ",\"dtype\":\"" + c.py_dtype + "\"}";
    const std::string in_path = dir + "/input.json", out_path = dir + "/ref.bin";
    write_file(in_path, in);
    std::string cmd = shell_quote(python) + " " + shell_quote(script) + " " + shell_quote(ckpt) +
                      " " + shell_quote(in_path) + " " + shell_quote(out_path);
    if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr, "%s: reference failed: %s\n", c.name, cmd.c_str());
        g_failures++;
        return;
    }
    std::string bytes = read_file(out_path);
    if (bytes.size() != ours.size() * sizeof(float)) {
        std::fprintf(stderr, "%s: reference wrote %zu bytes, expected %zu\n", c.name,
                     bytes.size(), ours.size() * sizeof(float));
        g_failures++;
        return;
    }
    std::vector<float> ref(ours.size());
    std::memcpy(ref.data(), bytes.data(), bytes.size());
    double worst = 0, scale = 0;
    for (size_t i = 0; i < ref.size(); i++) {
        worst = std::max(worst, double(std::fabs(ref[i] - ours[i])));
        scale = std::max(scale, double(std::fabs(ref[i])));
    }
    // The masks matter: element 0 (full) vs the last (all SWA) differ.
    double mask_effect = 0;
    for (size_t i = (c.window + 1) * V; i < T * V; i++)
        mask_effect = std::max(mask_effect,
                               double(std::fabs(ref[i] - ref[(B - 1) * T * V + i])));
    const bool ok = worst < c.tol && std::isfinite(worst);
    std::printf("%-16s dtype %-4s B=%zu T=%zu window=%u sink=%u: max abs diff %.3g "
                "(max |logit| %.3g, mask effect %.3g) %s\n",
                c.name, c.py_dtype, B, T, c.window, c.sink, worst, scale, mask_effect,
                ok ? "ok" : "FAIL");
    if (!ok)
        g_failures++;
}

int main() {
    const char *py = std::getenv("BOSCH_PYTHON");
    const std::string python = py && *py ? py : "/usr/bin/python3";
    const char *sc = std::getenv("BOSCH_REF_QWEN3");
    const std::string script = sc && *sc ? sc : "tools/ref_qwen3.py";
    if (read_file(script).empty()) {
        std::printf("SKIP: reference script %s not found\n", script.c_str());
        return 77;
    }
    std::string probe = shell_quote(python) + " -c 'import torch' >/dev/null 2>&1";
    if (std::system(probe.c_str()) != 0) {
        std::printf("SKIP: %s cannot import torch\n", python.c_str());
        return 77;
    }
    const std::string tmp = make_temp_dir("ref");

    std::vector<Case> cases;
    {
        Case c{"gqa_r3", TinySpec(), BOSCH_TORCH_DTYPE_F32, "f32", 1e-4, 4, 19, 4, 2};
        c.spec.layers = 3;
        c.spec.hidden = 48;
        c.spec.heads = 6;
        c.spec.kv_heads = 2;
        c.spec.head_dim = 8;
        c.spec.intermediate = 64;
        c.spec.vocab = 70;
        c.spec.seed = 3;
        cases.push_back(c);
    }
    {
        Case c{"mha_tied_bf16st", TinySpec(), BOSCH_TORCH_DTYPE_F32, "f32", 1e-4, 3, 16, 3, 0};
        c.spec.layers = 2;
        c.spec.hidden = 32;
        c.spec.heads = 4;
        c.spec.kv_heads = 4;
        c.spec.head_dim = 16;
        c.spec.intermediate = 40;
        c.spec.vocab = 64;
        c.spec.tie = true;
        c.spec.dtype = torch::kBFloat16; // stored bf16, computed in f32
        c.spec.rope_style_new = true;
        c.spec.rope_theta = 1000000.0;
        c.spec.seed = 4;
        cases.push_back(c);
    }
    {
        Case c{"gqa_r2_sharded", TinySpec(), BOSCH_TORCH_DTYPE_F32, "f32", 1e-4, 3, 24, 5, 1};
        c.spec.layers = 4;
        c.spec.hidden = 32;
        c.spec.heads = 4;
        c.spec.kv_heads = 2;
        c.spec.head_dim = 16;
        c.spec.intermediate = 48;
        c.spec.vocab = 80;
        c.spec.shards = 3;
        c.spec.dtype = torch::kFloat16;
        c.spec.rms_norm_eps = 1e-5;
        c.spec.seed = 5;
        cases.push_back(c);
    }
    {
        // bf16 compute on both sides: same operation order, so close, but
        // kernels may round differently; a loose bound.
        Case c = cases[0];
        c.name = "gqa_r3_bf16";
        c.dtype = BOSCH_TORCH_DTYPE_BF16;
        c.py_dtype = "bf16";
        c.tol = 0.1;
        cases.push_back(c);
    }
    // Banded SWA boundaries (the backend multiplies only the sink keys and
    // the band [t0 - window + 1, t1) of a query tile; tiles of 64 queries
    // here): T == window, T == window + 1, T < window, window 1, a sink that
    // overlaps the band of later tiles, sink 0, several tiles with sink keys
    // gathered apart from the band. Element 0 of each batch is all full, the
    // last all SWA, the others mixed.
    {
        const struct {
            const char *name;
            size_t batch, len;
            uint32_t window, sink;
        } edges[] = {
            {"swa_T_eq_w", 3, 8, 8, 2},       {"swa_T_eq_w1", 3, 9, 8, 0},
            {"swa_short", 3, 5, 8, 3},        {"swa_short_s0", 4, 3, 16, 0},
            {"swa_w1", 3, 70, 1, 0},          {"swa_w1_sink", 3, 100, 1, 3},
            {"swa_sink_band", 4, 100, 40, 30}, {"swa_sink_far", 3, 100, 4, 7},
            {"swa_w_eq_tile", 3, 130, 64, 0}, {"swa_sink_gt_T", 3, 20, 4, 50},
        };
        for (const auto &e : edges) {
            Case c = cases[0];
            c.name = e.name;
            c.batch = e.batch;
            c.len = e.len;
            c.window = e.window;
            c.sink = e.sink;
            c.spec.seed = 6;
            cases.push_back(c);
        }
    }
    // A trained checkpoint too (the organism), when given.
    // A reference limited to f32 (the organism's training forward).
    const char *f32 = std::getenv("BOSCH_REF_F32_ONLY");
    size_t ran = 0;
    for (const Case &c : cases)
        if (!(f32 && *f32 == '1' && std::strcmp(c.py_dtype, "f32") != 0)) {
            run_case(c, tmp, python, script);
            ran++;
        }
    // A trained checkpoint too (the organism), when present.
    const char *md = std::getenv("BOSCH_REF_MODEL_DIR");
    if (md && *md && !read_file(std::string(md) + "/config.json").empty()) {
        Case c{"model_dir", TinySpec(), BOSCH_TORCH_DTYPE_F32, "f32", 1e-4, 3, 96, 16, 4};
        run_case(c, tmp, python, script, md);
        ran++;
    }
    remove_tree(tmp);
    std::printf("test_ref: %zu cases, %d failures\n", ran, g_failures);
    return g_failures == 0 ? 0 : 1;
}
