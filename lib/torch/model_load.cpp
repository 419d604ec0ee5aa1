// A model (family.hpp) from a checkpoint directory or from tensors in memory: the
// config's and weights' checks, the memory check before reading, the
// weights moved to the device and dtype, the model's identity (a hash of
// what its scores depend on), the forward's settings from the environment.
#include "model.hpp"

#include "attention.hpp"
#include "failure.hpp"
#include "rope.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>
#include <xxhash.h>

namespace bosch_torch {

const char *dtype_name(torch::ScalarType t) {
    switch (t) {
    case torch::kFloat32:
        return "f32";
    case torch::kBFloat16:
        return "bf16";
    case torch::kFloat16:
        return "f16";
    default:
        return "?";
    }
}

namespace {

std::string layer_name(int64_t l, const char *suffix) {
    return "model.layers." + std::to_string(l) + "." + suffix;
}

// Moves a tensor out of the map (so its CPU copy can be freed early) and
// converts it to the model's device and dtype.
torch::Tensor take(TensorMap &w, const std::string &name, torch::Device dev,
                   torch::ScalarType dt) {
    auto it = w.find(name);
    if (it == w.end())
        invalid("checkpoint: missing tensor " + name);
    torch::Tensor t = it->second.to(dev, dt).contiguous();
    w.erase(it);
    return t;
}

void expect_shape(const torch::Tensor &t, const std::string &name, c10::IntArrayRef shape) {
    if (t.sizes() != shape)
        invalid("checkpoint: tensor " + name + " has shape " + c10::str(t.sizes()) +
                ", expected " + c10::str(shape));
}

// Refuses a dtype the device's kernels lack (f16 matmul / silu on CPU in
// libtorch 1.x) at load time rather than failing in the first forward.
void probe_dtype(torch::Device dev, torch::ScalarType dt) {
    try {
        torch::Tensor a = torch::ones({2, 2}, torch::TensorOptions().dtype(dt).device(dev));
        torch::Tensor b = torch::silu(torch::linear(a, a));
        (void)torch::softmax(b, -1, torch::kFloat32);
    } catch (const c10::Error &) {
        invalid(std::string("dtype ") + dtype_name(dt) + " is not supported on " + dev.str() +
                " by this libtorch (use f32 or bf16)");
    }
}

// Model::identity(): the config fields the forward reads, then every
// tensor (name, dtype, shape, bytes) in name order, each hashed with XXH3.
std::string model_identity(const ModelConfig &c, const TensorMap &w) {
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, "%lld %lld %lld %lld %lld %lld %lld %.17g %.17g %d %lld ",
                          (long long)c.vocab_size, (long long)c.hidden_size,
                          (long long)c.intermediate_size, (long long)c.num_hidden_layers,
                          (long long)c.num_attention_heads, (long long)c.num_key_value_heads,
                          (long long)c.head_dim, c.rms_norm_eps, c.rope_theta,
                          int(c.tie_word_embeddings), (long long)c.sliding_window);
    std::string cfg(buf, size_t(std::max(n, 0)));
    for (uint8_t l : c.layer_sliding)
        cfg += char('0' + l);
    // What later families and features add, only where they differ from
    // Qwen3's plain layer: Qwen3 checkpoints keep the identity (and their
    // journals) they had before.
    if (!c.architecture.empty() && c.architecture != "Qwen3ForCausalLM" &&
        c.architecture != "Qwen3MoeForCausalLM")
        cfg += " arch " + c.architecture;
    if (!c.qk_norm || c.qkv_bias || c.o_bias || c.mlp_bias)
        cfg += std::string(" layer ") + char('0' + c.qk_norm) + char('0' + c.qkv_bias) +
               char('0' + c.o_bias) + char('0' + c.mlp_bias);
    const std::string rope = rope_description(c);
    if (!rope.empty())
        cfg += " " + rope;
    if (c.moe) { // dense models keep the identity they had before MoE support
        n = std::snprintf(buf, sizeof buf, " moe %lld %lld %lld %d ", (long long)c.num_experts,
                          (long long)c.num_experts_per_tok, (long long)c.moe_intermediate_size,
                          int(c.norm_topk_prob));
        cfg.append(buf, size_t(std::max(n, 0)));
        for (uint8_t l : c.layer_sparse)
            cfg += char('0' + l);
    }
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        throw std::bad_alloc();
    XXH3_64bits_reset(st);
    for (const auto &kv : w) {
        const torch::Tensor t = kv.second.contiguous();
        std::string head = kv.first + ":" + dtype_name(t.scalar_type()) + ":" + c10::str(t.sizes());
        XXH3_64bits_update(st, head.data(), head.size() + 1);
        XXH3_64bits_update(st, t.data_ptr(), t.nbytes());
    }
    const unsigned long long wh = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    std::snprintf(buf, sizeof buf, "xxh3:%016llx-%016llx",
                  (unsigned long long)XXH3_64bits(cfg.data(), cfg.size()), wh);
    return buf;
}

} // namespace

std::unique_ptr<Model> Model::load(const std::string &dir, torch::Device device,
                                   torch::ScalarType dtype) {
    {
        std::ifstream f(dir + "/config.json");
        if (!f)
            io_error("cannot open " + dir + "/config.json");
    }
    {
        std::ifstream a(dir + "/model.safetensors"), b(dir + "/model.safetensors.index.json");
        if (!a && !b)
            io_error("cannot open " + dir + "/model.safetensors (nor " + dir +
                     "/model.safetensors.index.json)");
    }
    ModelConfig cfg;
    std::string err = load_config(dir, cfg);
    if (!err.empty())
        invalid(err);
    // The memory the config implies, before reading anything: every
    // device's weights pass through host memory first.
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
        err = check_memory(cfg, double(pages) * double(page));
        if (!err.empty())
            throw Failure(BOSCH_E_NOMEM, err);
    }
    probe_dtype(device, dtype); // before reading gigabytes
    TensorMap w;
    err = load_weights(dir, w);
    if (!err.empty())
        invalid(err);
    err = fuse_experts(cfg, w);
    if (!err.empty())
        invalid(err);
    err = check_weights(cfg, w);
    if (!err.empty())
        invalid(err);
    return from_weights(cfg, w, device, dtype);
}

std::unique_ptr<Model> Model::from_weights(const ModelConfig &cfg, TensorMap &w,
                                           torch::Device device, torch::ScalarType dtype) {
    if (cfg.num_hidden_layers <= 0 || cfg.num_key_value_heads <= 0 ||
        cfg.num_attention_heads % cfg.num_key_value_heads != 0 || cfg.head_dim <= 0 ||
        cfg.head_dim % 2 != 0 || cfg.vocab_size <= 0 || cfg.hidden_size <= 0 ||
        (cfg.intermediate_size <= 0 && cfg.any_dense_mlp()) ||
        (cfg.moe && cfg.layer_sparse.size() != size_t(cfg.num_hidden_layers)))
        invalid("checkpoint: inconsistent config");
    probe_dtype(device, dtype);
    {
        std::string err = fuse_experts(cfg, w); // the experts' layout, before the identity
        if (!err.empty())
            invalid("checkpoint: " + err);
    }
    std::unique_ptr<Model> m(new Model(cfg, device, dtype));
    m->identity_ = model_identity(cfg, w); // before the tensors leave the map
    // Tiles of the attention scores / MLP intermediates: larger on a GPU
    // (fewer kernel launches). On the CPU, 16 MB keeps every temporary below
    // glibc's mmap threshold (32 MB at most): larger tiles are mmap'd and
    // page-faulted afresh on every allocation, which measured 1.7x slower on
    // the organism (sys time as large as user time). BOSCH_TORCH_BLOCK_MB
    // overrides.
    m->block_bytes_ = device.is_cuda() ? int64_t(2) << 30 : int64_t(16) << 20;
    if (const char *env = std::getenv("BOSCH_TORCH_BLOCK_MB")) {
        char *end = nullptr;
        long long mb = std::strtoll(env, &end, 10);
        if (end != env && *end == '\0' && mb > 0)
            m->block_bytes_ = int64_t(mb) << 20;
    }
    // BOSCH_TORCH_ATTENTION=masked: the all-masked reference attention (SWA
    // units cost as much as full ones); =tiled: the project's own tiles for
    // every unit, never the fused kernel of torch >= 2; =fused, or anything
    // else: the fused kernel for every unit where this libtorch has it (on a
    // GPU a host-driven tile costs more than the work it saves, and on the
    // CPU bench_attention measured the fused band as fast as the tiles at
    // window 128 and 1.5x as fast at window 1024, 8k tokens).
    m->fused_band_ = fused_available();
    if (const char *env = std::getenv("BOSCH_TORCH_ATTENTION")) {
        m->masked_attention_ = std::strcmp(env, "masked") == 0;
        m->tiled_attention_ = std::strcmp(env, "tiled") == 0;
        if (m->tiled_attention_)
            m->fused_band_ = false;
    }
    const int64_t H = cfg.hidden_size;
    m->embed_ = take(w, "model.embed_tokens.weight", device, dtype);
    expect_shape(m->embed_, "model.embed_tokens.weight", {cfg.vocab_size, H});
    m->final_norm_ = take(w, "model.norm.weight", device, dtype);
    expect_shape(m->final_norm_, "model.norm.weight", {H});
    // Hugging Face ties lm_head to the embeddings when tie_word_embeddings is
    // set (a stored lm_head.weight is then ignored).
    if (cfg.tie_word_embeddings) {
        m->lm_head_ = m->embed_;
        w.erase("lm_head.weight");
    } else {
        m->lm_head_ = take(w, "lm_head.weight", device, dtype);
        expect_shape(m->lm_head_, "lm_head.weight", {cfg.vocab_size, H});
    }
    m->layers_.resize(size_t(cfg.num_hidden_layers));
    for (int64_t l = 0; l < cfg.num_hidden_layers; l++) {
        LayerWeights &L = m->layers_[size_t(l)];
        for (const LayerTensor &t : layer_tensors(cfg, l)) {
            const std::string name = layer_name(l, t.name.c_str());
            L.*t.member = take(w, name, device, dtype);
            expect_shape(L.*t.member, name, t.shape);
        }
    }
    return m;
}

int64_t Model::param_bytes() const {
    auto bytes = [](const torch::Tensor &t) { return t.defined() ? t.nbytes() : size_t(0); };
    size_t n = bytes(embed_) + bytes(final_norm_);
    if (!lm_head_.is_same(embed_))
        n += bytes(lm_head_);
    const auto members = layer_members();
    for (const LayerWeights &L : layers_)
        for (auto member : members)
            n += bytes(L.*member);
    return int64_t(n);
}

} // namespace bosch_torch
