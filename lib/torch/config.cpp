// config.json of a Hugging Face checkpoint: the fields every family shares
// (family.hpp reads the rest, rope.cpp the RoPE), and what they imply.
#include "checkpoint.hpp"
#include "config_json.hpp"
#include "family.hpp"
#include "rope.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace bosch_torch {
namespace {

using jsonu::JsonPtr;
using namespace cfgjson;

const size_t kConfigCap = 16u << 20; // config.json larger than this is not a config

// architectures: one of the families' names (family.cpp); *family is set.
std::string read_architecture(json_object *r, const std::string &P, ModelConfig &cfg,
                              const ModelFamily *&family) {
    family = nullptr;
    if (!present(r, "architectures"))
        return P + ": missing field architectures";
    json_object *arch = field(r, "architectures");
    if (!arch || json_object_get_type(arch) != json_type_array)
        return std::string(P + ": field architectures must be an array (got ") +
               jsonu::type_name(arch) + ")";
    std::string names;
    for (size_t i = 0; i < json_object_array_length(arch); i++) {
        json_object *a = json_object_array_get_idx(arch, i);
        if (!a || json_object_get_type(a) != json_type_string)
            return P + ": architectures must hold strings";
        const std::string s = json_object_get_string(a);
        names += (names.empty() ? "" : ", ") + s;
        const ModelFamily *f = find_family(s);
        if (f && family && f != family)
            return P + ": architectures names both " + family->architecture + " and " + s;
        family = f ? f : family;
    }
    if (!family)
        return P + ": unsupported architecture " +
               (names.empty() ? std::string("(none listed)") : names) + " (supported: " +
               supported_architectures() +
               "; bosch.hf runs any transformers model from Python)";
    cfg.architecture = family->architecture;
    return "";
}

// The layer stack's sizes with the family's defaults (head_dim from
// hidden_size / heads, intermediate_size), and rms_norm_eps.
std::string read_sizes(json_object *r, const std::string &P, const ModelFamily &fam,
                       ModelConfig &cfg) {
    std::string err;
    struct {
        const char *name;
        int64_t *dst;
    } ints[] = {
        {"vocab_size", &cfg.vocab_size},
        {"hidden_size", &cfg.hidden_size},
        {"intermediate_size", &cfg.intermediate_size},
        {"num_hidden_layers", &cfg.num_hidden_layers},
        {"num_attention_heads", &cfg.num_attention_heads},
        {"num_key_value_heads", &cfg.num_key_value_heads},
        {"head_dim", &cfg.head_dim},
    };
    for (auto &f : ints) {
        if (f.dst == &cfg.head_dim && !fam.head_dim_required && absent(r, f.name))
            continue;
        if (f.dst == &cfg.intermediate_size && fam.intermediate_default && !present(r, f.name)) {
            cfg.intermediate_size = fam.intermediate_default;
            continue;
        }
        err = get_int(r, f.name, *f.dst);
        if (!err.empty())
            return P + ": " + err;
    }
    if (cfg.head_dim == 0) {
        if (cfg.hidden_size % cfg.num_attention_heads != 0)
            return P + ": missing field head_dim (and hidden_size " +
                   std::to_string(cfg.hidden_size) + " is not a multiple of num_attention_heads " +
                   std::to_string(cfg.num_attention_heads) + ")";
        cfg.head_dim = cfg.hidden_size / cfg.num_attention_heads;
    }
    if (cfg.num_attention_heads % cfg.num_key_value_heads != 0)
        return P + ": num_attention_heads (" + std::to_string(cfg.num_attention_heads) +
               ") is not a multiple of num_key_value_heads (" +
               std::to_string(cfg.num_key_value_heads) + ")";
    if (cfg.head_dim % 2 != 0)
        return P + ": head_dim must be even for RoPE (got " + std::to_string(cfg.head_dim) + ")";

    if (!present(r, "rms_norm_eps"))
        return P + ": missing field rms_norm_eps";
    err = get_number(field(r, "rms_norm_eps"), "rms_norm_eps", cfg.rms_norm_eps);
    if (!err.empty())
        return P + ": " + err;
    return "";
}

// tie_word_embeddings, hidden_act (silu only), max_position_embeddings
// (the family's default when absent).
std::string read_flags(json_object *r, const std::string &P, const ModelFamily &fam,
                       ModelConfig &cfg) {
    std::string err = get_bool(r, "tie_word_embeddings", cfg.tie_word_embeddings);
    if (!err.empty())
        return P + ": " + err;
    if (json_object *a = field(r, "hidden_act")) {
        if (json_object_get_type(a) != json_type_string ||
            std::string(json_object_get_string(a)) != "silu")
            return std::string(P + ": unsupported hidden_act ") + json_object_to_json_string(a) +
                   " (only silu)";
    }
    cfg.max_position_embeddings = fam.max_position_default;
    if (json_object *m = field(r, "max_position_embeddings")) {
        if (json_object_get_type(m) != json_type_int || json_object_get_int64(m) < 1)
            return std::string(P + ": field max_position_embeddings must be a positive integer "
                                   "(got ") +
                   json_object_to_json_string(m) + ")";
        cfg.max_position_embeddings = json_object_get_int64(m);
    }
    return "";
}

} // namespace

std::string load_config(const std::string &dir, ModelConfig &cfg) {
    cfg = ModelConfig();
    const std::string path = dir + "/config.json";
    const std::string &P = path;
    std::string text;
    std::string err = jsonu::read_file(path, kConfigCap, text);
    if (!err.empty())
        return err;
    JsonPtr root;
    err = jsonu::parse(text.data(), text.size(), root);
    if (!err.empty())
        return P + ": " + err;
    json_object *r = root.get();
    if (json_object_get_type(r) != json_type_object)
        return std::string(P + ": top level must be an object (got ") + jsonu::type_name(r) + ")";
    const ModelFamily *fam = nullptr;
    if (!(err = read_architecture(r, P, cfg, fam)).empty() ||
        !(err = read_sizes(r, P, *fam, cfg)).empty() ||
        !(err = read_flags(r, P, *fam, cfg)).empty())
        return err;
    if (!(err = fam->read(r, cfg)).empty() || !(err = read_rope(r, cfg)).empty())
        return P + ": " + err;
    return "";
}

namespace {
// The parameters of the layer stack and of the embedding + lm_head tables.
struct ParameterTerms {
    double layers, tables, total;
};

ParameterTerms parameter_terms(const ModelConfig &c) {
    const double H = double(c.hidden_size), I = double(c.intermediate_size),
                 D = double(c.head_dim), q = double(c.num_attention_heads) * D,
                 kv = double(c.num_key_value_heads) * D;
    const double attention = 2 * q * H + 2 * kv * H + 2 * H + (c.qk_norm ? 2 * D : 0) +
                             (c.qkv_bias ? q + 2 * kv : 0) + (c.o_bias ? H : 0);
    const double dense = 3 * I * H + (c.mlp_bias ? 2 * I + H : 0),
                 experts = double(c.num_experts) *
                           (3 * double(c.moe_intermediate_size) * H + H); // + the router
    ParameterTerms t;
    t.layers = 0;
    for (int64_t l = 0; l < c.num_hidden_layers; l++)
        t.layers += attention + (c.sparse(l) ? experts : dense);
    t.tables = double(c.vocab_size) * H * (c.tie_word_embeddings ? 1 : 2);
    t.total = t.layers + t.tables + H; // + the final norm
    return t;
}
} // namespace

double implied_parameters(const ModelConfig &c) { return parameter_terms(c).total; }

std::string check_memory(const ModelConfig &c, double memory_bytes) {
    const ParameterTerms t = parameter_terms(c);
    const double params = t.total, bytes = 2 * params; // 16-bit: the smallest
    if (!(bytes > memory_bytes))
        return "";
    const double layers = t.layers, table = double(c.vocab_size) * double(c.hidden_size);
    char buf[640];
    std::string moe_terms;
    if (c.moe)
        moe_terms = ", num_experts " + std::to_string(c.num_experts) +
                    ", moe_intermediate_size " + std::to_string(c.moe_intermediate_size);
    if (layers >= table)
        std::snprintf(buf, sizeof buf,
                      "config.json implies %.3g parameters, mostly num_hidden_layers %lld x %.3g "
                      "per layer (hidden_size %lld, intermediate_size %lld, "
                      "num_attention_heads %lld, num_key_value_heads %lld, head_dim %lld%s)",
                      params, (long long)c.num_hidden_layers, layers / double(c.num_hidden_layers),
                      (long long)c.hidden_size, (long long)c.intermediate_size,
                      (long long)c.num_attention_heads, (long long)c.num_key_value_heads,
                      (long long)c.head_dim, moe_terms.c_str());
    else
        std::snprintf(buf, sizeof buf,
                      "config.json implies %.3g parameters, mostly vocab_size %lld x "
                      "hidden_size %lld",
                      params, (long long)c.vocab_size, (long long)c.hidden_size);
    char lim[160];
    std::snprintf(lim, sizeof lim,
                  ": at least %.3g GiB even in 16-bit weights, more than the %.3g GiB of memory "
                  "of this machine",
                  bytes / double(1 << 30), memory_bytes / double(1 << 30));
    return std::string(buf) + lim;
}

} // namespace bosch_torch
