// Tiny random Qwen3 checkpoints for tests; see tiny_checkpoint.hpp.
#include "tiny_checkpoint.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bosch_torch_test {
namespace {

// Shortest %g form that reads back as the same double.
std::string num(double x) {
    char buf[64];
    for (int prec = 6; prec <= 17; prec++) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (std::strtod(buf, nullptr) == x)
            break;
    }
    std::string s = buf;
    // Keep it a JSON float (1e+06 and 10000 are fine JSON, but mark floats as such).
    if (s.find_first_of(".eEn") == std::string::npos)
        s += ".0";
    return s;
}

const char *st_dtype(torch::ScalarType t) {
    switch (t) {
    case torch::kFloat32:
        return "F32";
    case torch::kBFloat16:
        return "BF16";
    case torch::kFloat16:
        return "F16";
    default:
        return nullptr;
    }
}

const char *hf_dtype(torch::ScalarType t) {
    switch (t) {
    case torch::kBFloat16:
        return "bfloat16";
    case torch::kFloat16:
        return "float16";
    default:
        return "float32";
    }
}

std::string json_escape(const std::string &s) {
    std::string r;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            r += '\\';
            r += c;
        } else if ((unsigned char)c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", (unsigned char)c);
            r += buf;
        } else {
            r += c;
        }
    }
    return r;
}

} // namespace

TinySpec gqa_spec(uint64_t seed) {
    TinySpec s;
    s.layers = 3;
    s.hidden = 32;
    s.heads = 6;
    s.kv_heads = 2;
    s.head_dim = 8;
    s.intermediate = 48;
    s.vocab = 50;
    s.seed = seed;
    return s;
}

TinySpec organism_spec(int64_t vocab) {
    TinySpec s;
    s.layers = 4;
    s.hidden = 128;
    s.heads = 8;
    s.kv_heads = 4;
    s.head_dim = 32;
    s.intermediate = 384;
    s.vocab = vocab;
    return s;
}

std::string write_model(const std::string &parent, const std::string &name,
                        const TinySpec &spec) {
    std::string dir = parent + "/" + name;
    std::string e = write_tiny_qwen3(dir, spec);
    if (!e.empty())
        throw std::runtime_error("write_tiny_qwen3: " + e);
    return dir;
}

std::vector<int32_t> random_tokens(size_t n, int32_t vocab, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> t(n);
    for (auto &x : t)
        x = int32_t(rng() % uint32_t(vocab));
    return t;
}

bool TinySpec::sparse(int64_t l) const {
    for (int64_t d : mlp_only_layers)
        if (d == l)
            return false;
    return experts > 0 && (l + 1) % sparse_step == 0;
}

bosch_torch::ModelConfig tiny_config(const TinySpec &spec) {
    bosch_torch::ModelConfig cfg;
    cfg.vocab_size = spec.vocab;
    cfg.hidden_size = spec.hidden;
    cfg.intermediate_size = spec.intermediate;
    cfg.num_hidden_layers = spec.layers;
    cfg.num_attention_heads = spec.heads;
    cfg.num_key_value_heads = spec.kv_heads;
    cfg.head_dim = spec.head_dim;
    cfg.rms_norm_eps = spec.rms_norm_eps;
    cfg.rope_theta = spec.rope_theta;
    cfg.tie_word_embeddings = spec.tie;
    cfg.qk_norm = spec.family == "qwen3";
    cfg.qkv_bias = spec.family == "llama" || spec.family == "qwen2";
    cfg.o_bias = cfg.mlp_bias = spec.family == "llama";
    return cfg;
}

std::string tiny_config_json(const TinySpec &s) {
    std::ostringstream o;
    const std::string arch = s.experts               ? "Qwen3MoeForCausalLM"
                             : s.family == "llama"   ? "LlamaForCausalLM"
                             : s.family == "mistral" ? "MistralForCausalLM"
                             : s.family == "qwen2"   ? "Qwen2ForCausalLM"
                                                     : "Qwen3ForCausalLM";
    const std::string type = s.experts ? "qwen3_moe" : s.family;
    o << "{\n"
      << "  \"architectures\": [\"" << arch << "\"],\n";
    if (s.family == "llama")
        o << "  \"mlp_bias\": true,\n";
    if (s.experts) {
        o << "  \"num_experts\": " << s.experts << ",\n"
          << "  \"num_experts_per_tok\": " << s.experts_per_tok << ",\n"
          << "  \"moe_intermediate_size\": " << s.moe_intermediate << ",\n"
          << "  \"norm_topk_prob\": " << (s.norm_topk ? "true" : "false") << ",\n"
          << "  \"decoder_sparse_step\": " << s.sparse_step << ",\n"
          << "  \"router_aux_loss_coef\": 0.001,\n"
          << "  \"mlp_only_layers\": [";
        for (size_t i = 0; i < s.mlp_only_layers.size(); i++)
            o << (i ? ", " : "") << s.mlp_only_layers[i];
        o << "],\n";
    }
    o
      << "  \"attention_bias\": " << (s.family == "llama" ? "true" : "false") << ",\n"
      << "  \"attention_dropout\": 0.0,\n"
      << "  \"bos_token_id\": 0,\n"
      << "  \"eos_token_id\": 1,\n"
      << "  \"head_dim\": " << s.head_dim << ",\n"
      << "  \"hidden_act\": \"silu\",\n"
      << "  \"hidden_size\": " << s.hidden << ",\n"
      << "  \"initializer_range\": 0.02,\n"
      << "  \"intermediate_size\": " << s.intermediate << ",\n"
      << "  \"max_position_embeddings\": 40960,\n"
      << "  \"max_window_layers\": " << s.layers << ",\n"
      << "  \"model_type\": \"" << type << "\",\n"
      << "  \"num_attention_heads\": " << s.heads << ",\n"
      << "  \"num_hidden_layers\": " << s.layers << ",\n"
      << "  \"num_key_value_heads\": " << s.kv_heads << ",\n"
      << "  \"rms_norm_eps\": " << num(s.rms_norm_eps) << ",\n";
    if (s.rope_style_new) {
        o << "  \"rope_parameters\": {\"rope_theta\": " << num(s.rope_theta)
          << ", \"rope_type\": \"default\"},\n"
          << "  \"dtype\": \"" << hf_dtype(s.dtype) << "\",\n";
    } else {
        o << "  \"rope_scaling\": null,\n"
          << "  \"rope_theta\": " << num(s.rope_theta) << ",\n"
          << "  \"torch_dtype\": \"" << hf_dtype(s.dtype) << "\",\n";
    }
    o << "  \"sliding_window\": null,\n"
      << "  \"tie_word_embeddings\": " << (s.tie ? "true" : "false") << ",\n"
      << "  \"transformers_version\": \"" << (s.rope_style_new ? "5.0.0" : "4.51.0") << "\",\n"
      << "  \"use_cache\": true,\n"
      << "  \"use_sliding_window\": false,\n"
      << "  \"vocab_size\": " << s.vocab << "\n"
      << "}\n";
    return o.str();
}

bosch_torch::TensorMap tiny_qwen3_tensors(const TinySpec &s) {
    at::Generator gen = at::detail::createCPUGenerator(s.seed);
    auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
    bosch_torch::TensorMap m;
    auto put = [&](const std::string &name, torch::Tensor t) {
        m[name] = t.to(s.dtype).contiguous();
    };
    auto linear = [&](const std::string &name, int64_t out, int64_t in) {
        put(name, torch::randn({out, in}, gen, f32) / std::sqrt((double)in));
    };
    auto norm = [&](const std::string &name, int64_t n) {
        put(name, 1.0 + 0.1 * torch::randn({n}, gen, f32));
    };
    auto bias = [&](const std::string &name, int64_t n) {
        put(name, 0.1 * torch::randn({n}, gen, f32));
    };
    const int64_t H = s.hidden, hd = s.head_dim;
    put("model.embed_tokens.weight", torch::randn({s.vocab, H}, gen, f32));
    for (int64_t l = 0; l < s.layers; l++) {
        const std::string p = "model.layers." + std::to_string(l) + ".";
        norm(p + "input_layernorm.weight", H);
        linear(p + "self_attn.q_proj.weight", s.heads * hd, H);
        linear(p + "self_attn.k_proj.weight", s.kv_heads * hd, H);
        linear(p + "self_attn.v_proj.weight", s.kv_heads * hd, H);
        linear(p + "self_attn.o_proj.weight", H, s.heads * hd);
        if (s.family == "qwen3") {
            norm(p + "self_attn.q_norm.weight", hd);
            norm(p + "self_attn.k_norm.weight", hd);
        }
        if (s.family == "llama" || s.family == "qwen2") {
            bias(p + "self_attn.q_proj.bias", s.heads * hd);
            bias(p + "self_attn.k_proj.bias", s.kv_heads * hd);
            bias(p + "self_attn.v_proj.bias", s.kv_heads * hd);
        }
        if (s.family == "llama")
            bias(p + "self_attn.o_proj.bias", H);
        norm(p + "post_attention_layernorm.weight", H);
        if (!s.sparse(l)) {
            linear(p + "mlp.gate_proj.weight", s.intermediate, H);
            linear(p + "mlp.up_proj.weight", s.intermediate, H);
            linear(p + "mlp.down_proj.weight", H, s.intermediate);
            if (s.family == "llama") {
                bias(p + "mlp.gate_proj.bias", s.intermediate);
                bias(p + "mlp.up_proj.bias", s.intermediate);
                bias(p + "mlp.down_proj.bias", H);
            }
            continue;
        }
        const int64_t E = s.experts, I = s.moe_intermediate;
        linear(p + "mlp.gate.weight", E, H);
        std::vector<torch::Tensor> gate_up, down;
        for (int64_t e = 0; e < E; e++) {
            const std::string x = p + "mlp.experts." + std::to_string(e) + ".";
            linear(x + "gate_proj.weight", I, H);
            linear(x + "up_proj.weight", I, H);
            linear(x + "down_proj.weight", H, I);
            if (!s.fused_experts)
                continue;
            gate_up.push_back(torch::cat({m[x + "gate_proj.weight"], m[x + "up_proj.weight"]}, 0));
            down.push_back(m[x + "down_proj.weight"]);
            for (const char *n : {"gate_proj.weight", "up_proj.weight", "down_proj.weight"})
                m.erase(x + n);
        }
        if (s.fused_experts) {
            put(p + "mlp.experts.gate_up_proj", torch::stack(gate_up));
            put(p + "mlp.experts.down_proj", torch::stack(down));
        }
    }
    norm("model.norm.weight", H);
    if (!s.tie)
        linear("lm_head.weight", s.vocab, H);
    return m;
}

std::string write_safetensors(const std::string &path, const bosch_torch::TensorMap &tensors) {
    std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
    std::vector<torch::Tensor> data;
    uint64_t off = 0;
    for (const auto &kv : tensors) {
        torch::Tensor t = kv.second.to(torch::kCPU).contiguous();
        const char *dt = st_dtype(t.scalar_type());
        if (!dt)
            return "write_safetensors: tensor " + kv.first + " has unsupported dtype";
        uint64_t nbytes = (uint64_t)t.numel() * (uint64_t)t.element_size();
        header += ",\"" + json_escape(kv.first) + "\":{\"dtype\":\"" + dt + "\",\"shape\":[";
        for (int64_t i = 0; i < t.dim(); i++)
            header += (i ? "," : "") + std::to_string(t.size(i));
        header += "],\"data_offsets\":[" + std::to_string(off) + "," +
                  std::to_string(off + nbytes) + "]}";
        off += nbytes;
        data.push_back(t);
    }
    header += "}";
    while (header.size() % 8 != 0)
        header += ' ';
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f)
        return "cannot create " + path + ": " + std::strerror(errno);
    unsigned char len[8];
    uint64_t n = header.size();
    for (int i = 0; i < 8; i++)
        len[i] = (unsigned char)(n >> (8 * i));
    bool ok = std::fwrite(len, 1, 8, f) == 8 &&
              std::fwrite(header.data(), 1, header.size(), f) == header.size();
    for (const torch::Tensor &t : data) {
        size_t nbytes = (size_t)t.numel() * (size_t)t.element_size();
        if (ok && nbytes)
            ok = std::fwrite(t.data_ptr(), 1, nbytes, f) == nbytes;
    }
    if (std::fclose(f) != 0)
        ok = false;
    return ok ? "" : "cannot write " + path;
}

std::string write_file(const std::string &path, const std::string &bytes) {
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f)
        return "cannot create " + path + ": " + std::strerror(errno);
    bool ok = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    if (std::fclose(f) != 0)
        ok = false;
    return ok ? "" : "cannot write " + path;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream o;
    o << in.rdbuf();
    return o.str();
}

std::string write_tiny_qwen3(const std::string &dir, const TinySpec &s,
                             bosch_torch::TensorMap *written) {
    if (!st_dtype(s.dtype))
        return "write_tiny_qwen3: dtype must be kFloat32, kBFloat16 or kFloat16";
    if (s.shards < 1)
        return "write_tiny_qwen3: shards must be >= 1";
    std::string err = make_dirs(dir);
    if (!err.empty())
        return err;
    err = write_file(dir + "/config.json", tiny_config_json(s));
    if (!err.empty())
        return err;
    bosch_torch::TensorMap m = tiny_qwen3_tensors(s);
    if (s.shards == 1) {
        err = write_safetensors(dir + "/model.safetensors", m);
    } else {
        // Contiguous runs of tensors (in name order) per shard, as HF does.
        std::vector<bosch_torch::TensorMap> parts((size_t)s.shards);
        std::string weight_map;
        uint64_t total = 0;
        size_t i = 0, n = m.size();
        char name[64];
        for (const auto &kv : m) {
            size_t k = i++ * (size_t)s.shards / n;
            parts[k].insert(kv);
            std::snprintf(name, sizeof name, "model-%05zu-of-%05d.safetensors", k + 1, s.shards);
            weight_map += std::string(weight_map.empty() ? "" : ",\n") + "    \"" +
                          json_escape(kv.first) + "\": \"" + name + "\"";
            total += (uint64_t)kv.second.numel() * (uint64_t)kv.second.element_size();
        }
        for (size_t k = 0; k < parts.size() && err.empty(); k++) {
            std::snprintf(name, sizeof name, "model-%05zu-of-%05d.safetensors", k + 1, s.shards);
            err = write_safetensors(dir + "/" + name, parts[k]);
        }
        if (err.empty())
            err = write_file(dir + "/model.safetensors.index.json",
                             "{\n  \"metadata\": {\"total_size\": " + std::to_string(total) +
                                 "},\n  \"weight_map\": {\n" + weight_map + "\n  }\n}\n");
    }
    if (err.empty() && written)
        *written = std::move(m);
    return err;
}

std::string make_temp_dir(const std::string &tag) {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/bosch-" + tag + "-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data()))
        throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
    return std::string(buf.data());
}

namespace {
int remove_entry(const char *path, const struct stat *, int, struct FTW *) {
    ::remove(path); // files and (emptied, depth-first) directories
    return 0;
}
} // namespace

void remove_tree(const std::string &path) {
    ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

std::string make_dirs(const std::string &path) {
    for (size_t i = 1; i <= path.size(); i++) {
        if (i < path.size() && path[i] != '/')
            continue;
        const std::string part = path.substr(0, i);
        struct stat st;
        if (::mkdir(part.c_str(), 0777) != 0 && errno != EEXIST)
            return "cannot create " + part + ": " + std::strerror(errno);
        if (::stat(part.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return "cannot create " + part + ": not a directory";
    }
    return "";
}

std::string copy_file(const std::string &from, const std::string &to) {
    std::ifstream in(from, std::ios::binary);
    if (!in)
        return "cannot read " + from;
    std::ofstream out(to, std::ios::binary | std::ios::trunc);
    if (!out)
        return "cannot write " + to;
    out << in.rdbuf();
    out.flush();
    return out ? "" : "cannot write " + to;
}

} // namespace bosch_torch_test
