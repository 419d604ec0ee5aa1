// config.json of a Hugging Face Qwen3ForCausalLM checkpoint.
#include "checkpoint.hpp"
#include "json_util.hpp"

#include <cmath>
#include <cstdio>
#include <string>

namespace bosch_torch {
namespace {

using jsonu::JsonPtr;

const size_t kConfigCap = 16u << 20;      // config.json larger than this is not a config
const int64_t kMaxDim = int64_t(1) << 24; // sanity cap on every size field

json_object *field(json_object *root, const char *name) {
    json_object *v = nullptr;
    if (!json_object_object_get_ex(root, name, &v))
        return nullptr;
    return v;
}

bool present(json_object *root, const char *name) {
    return json_object_object_get_ex(root, name, nullptr);
}

std::string get_int(json_object *root, const char *name, int64_t &out) {
    if (!present(root, name))
        return std::string("missing field ") + name;
    json_object *v = field(root, name);
    if (!v || json_object_get_type(v) != json_type_int)
        return std::string("field ") + name + " must be an integer (got " + jsonu::type_name(v) +
               ")";
    int64_t x = json_object_get_int64(v);
    if (x <= 0)
        return std::string("field ") + name + " must be positive (got " + std::to_string(x) + ")";
    if (x > kMaxDim)
        return std::string("field ") + name + " is implausibly large (" + std::to_string(x) + ")";
    out = x;
    return "";
}

std::string get_number(json_object *v, const std::string &name, double &out) {
    if (!v ||
        (json_object_get_type(v) != json_type_double && json_object_get_type(v) != json_type_int))
        return "field " + name + " must be a number (got " + jsonu::type_name(v) + ")";
    double x = json_object_get_double(v);
    if (!std::isfinite(x) || x <= 0)
        return "field " + name + " must be positive and finite";
    out = x;
    return "";
}

// rope_scaling / rope_parameters: only plain RoPE (no scaling) is implemented.
std::string check_rope_type(json_object *obj, const char *what) {
    if (!obj || json_object_get_type(obj) == json_type_null)
        return "";
    if (json_object_get_type(obj) != json_type_object)
        return std::string("field ") + what + " must be an object or null (got " +
               jsonu::type_name(obj) + ")";
    json_object *t = field(obj, "rope_type");
    if (!t)
        t = field(obj, "type");
    if (!t || json_object_get_type(t) == json_type_null) {
        // rope_parameters may carry only rope_theta; a rope_scaling without a type is unknown.
        if (std::string(what) == "rope_scaling")
            return "rope_scaling without rope_type is not supported";
        return "";
    }
    if (json_object_get_type(t) != json_type_string)
        return std::string(what) + ".rope_type must be a string";
    std::string type = json_object_get_string(t);
    if (type != "default")
        return std::string("unsupported ") + what + " type \"" + type +
               "\" (only plain RoPE, rope_type \"default\", is supported)";
    return "";
}

std::string num(double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
}

// Hybrid attention as transformers' Qwen3Config reads it: sliding_window
// counts only when use_sliding_window is true; layer_types (when given)
// names each layer, else layers from max_window_layers (default 28) on
// slide. A sliding layer then attends to the last sliding_window tokens,
// itself included, with no sink tokens (masking_utils' sliding window).
std::string read_sliding_layers(json_object *r, Qwen3Config &cfg) {
    const size_t L = size_t(cfg.num_hidden_layers);
    cfg.layer_sliding.assign(L, 0);
    cfg.sliding_window = 0;
    bool use = false;
    if (json_object *u = field(r, "use_sliding_window")) {
        if (json_object_get_type(u) != json_type_boolean)
            return std::string("field use_sliding_window must be a boolean (got ") +
                   jsonu::type_name(u) + ")";
        use = json_object_get_boolean(u) != 0;
    }
    int64_t window = 0; // 0 = None, as transformers has it when use_sliding_window is false
    json_object *w = field(r, "sliding_window");
    if (use) {
        if (!w || json_object_get_type(w) == json_type_null)
            return "use_sliding_window is true but sliding_window is not set";
        std::string e = get_int(r, "sliding_window", window);
        if (!e.empty())
            return e;
    }
    json_object *lt = field(r, "layer_types");
    if (lt && json_object_get_type(lt) != json_type_null) {
        if (json_object_get_type(lt) != json_type_array)
            return std::string("field layer_types must be an array (got ") +
                   jsonu::type_name(lt) + ")";
        if (json_object_array_length(lt) != L)
            return "layer_types has " + std::to_string(json_object_array_length(lt)) +
                   " entries for " + std::to_string(L) + " layers";
        for (size_t i = 0; i < L; i++) {
            json_object *e = json_object_array_get_idx(lt, i);
            std::string t = e && json_object_get_type(e) == json_type_string
                                ? json_object_get_string(e)
                                : std::string();
            if (t == "sliding_attention")
                cfg.layer_sliding[i] = 1;
            else if (t != "full_attention")
                return "layer_types[" + std::to_string(i) + "] is " +
                       (e ? json_object_to_json_string(e) : "null") +
                       " (only \"full_attention\" and \"sliding_attention\" are supported)";
        }
    } else if (window > 0) {
        int64_t first = 28; // transformers' default max_window_layers
        json_object *m = field(r, "max_window_layers");
        if (m && json_object_get_type(m) != json_type_null) {
            if (json_object_get_type(m) != json_type_int || json_object_get_int64(m) < 0)
                return std::string("field max_window_layers must be a non-negative integer (got ") +
                       json_object_to_json_string(m) + ")";
            first = json_object_get_int64(m);
        }
        for (size_t i = 0; i < L; i++)
            cfg.layer_sliding[i] = int64_t(i) >= first;
    }
    size_t n = 0;
    for (uint8_t v : cfg.layer_sliding)
        n += v;
    if (n && window == 0)
        return "layer_types names sliding_attention layers but use_sliding_window is not true "
               "(transformers then has no sliding_window and refuses the model)";
    if (n)
        cfg.sliding_window = window;
    return "";
}

// An optional non-negative integer field; `dflt` when absent or null.
std::string get_count(json_object *r, const char *name, int64_t dflt, int64_t &out) {
    json_object *v = field(r, name);
    if (!v || json_object_get_type(v) == json_type_null) {
        out = dflt;
        return "";
    }
    if (json_object_get_type(v) != json_type_int || json_object_get_int64(v) < 0 ||
        json_object_get_int64(v) > kMaxDim)
        return std::string("field ") + name + " must be a non-negative integer (got " +
               json_object_to_json_string(v) + ")";
    out = json_object_get_int64(v);
    return "";
}

// Qwen3MoeForCausalLM's fields, with Qwen3MoeConfig's defaults. Its sliding
// window is all or nothing, as transformers applies it: with
// use_sliding_window every layer slides over sliding_window (Qwen3MoeConfig
// has no layer_types or max_window_layers, and transformers ignores them).
std::string read_moe(json_object *r, Qwen3Config &cfg) {
    const int64_t L = cfg.num_hidden_layers;
    int64_t experts = 0, local = 0, step = 0, moe_i = 0, k = 0;
    std::string e;
    if (!(e = get_count(r, "num_experts", -1, experts)).empty() ||
        !(e = get_count(r, "num_local_experts", -1, local)).empty() ||
        !(e = get_count(r, "decoder_sparse_step", 1, step)).empty() ||
        !(e = get_count(r, "moe_intermediate_size", 768, moe_i)).empty() ||
        !(e = get_count(r, "num_experts_per_tok", 8, k)).empty())
        return e;
    // transformers 5 writes num_local_experts (its attribute_map), the
    // published checkpoints num_experts.
    if (experts >= 0 && local >= 0 && experts != local)
        return "num_experts (" + std::to_string(experts) + ") conflicts with num_local_experts (" +
               std::to_string(local) + ")";
    cfg.num_experts = experts >= 0 ? experts : local >= 0 ? local : 128;
    if (step == 0)
        return "field decoder_sparse_step must be positive (got 0)";
    cfg.moe_intermediate_size = moe_i;
    cfg.num_experts_per_tok = k;
    if (json_object *n = field(r, "norm_topk_prob")) {
        if (json_object_get_type(n) != json_type_boolean)
            return std::string("field norm_topk_prob must be a boolean (got ") +
                   jsonu::type_name(n) + ")";
        cfg.norm_topk_prob = json_object_get_boolean(n) != 0;
    }
    std::vector<uint8_t> mlp_only(size_t(L), 0);
    json_object *m = field(r, "mlp_only_layers");
    if (m && json_object_get_type(m) != json_type_null) {
        if (json_object_get_type(m) != json_type_array)
            return std::string("field mlp_only_layers must be an array (got ") +
                   jsonu::type_name(m) + ")";
        for (size_t i = 0; i < json_object_array_length(m); i++) {
            json_object *x = json_object_array_get_idx(m, i);
            if (!x || json_object_get_type(x) != json_type_int || json_object_get_int64(x) < 0 ||
                json_object_get_int64(x) >= L)
                return "mlp_only_layers[" + std::to_string(i) + "] is " +
                       (x ? json_object_to_json_string(x) : "null") + " (layers are 0.." +
                       std::to_string(L - 1) + ")";
            mlp_only[size_t(json_object_get_int64(x))] = 1;
        }
    }
    cfg.layer_sparse.assign(size_t(L), 0);
    for (int64_t l = 0; l < L; l++)
        cfg.layer_sparse[size_t(l)] =
            !mlp_only[size_t(l)] && cfg.num_experts > 0 && (l + 1) % step == 0;
    bool sparse = false;
    for (uint8_t s : cfg.layer_sparse)
        sparse = sparse || s;
    if (sparse && (cfg.moe_intermediate_size == 0 || cfg.num_experts_per_tok == 0))
        return std::string("field ") +
               (cfg.moe_intermediate_size == 0 ? "moe_intermediate_size" : "num_experts_per_tok") +
               " must be positive";
    if (sparse && cfg.num_experts_per_tok > cfg.num_experts)
        return "num_experts_per_tok (" + std::to_string(cfg.num_experts_per_tok) +
               ") exceeds num_experts (" + std::to_string(cfg.num_experts) + ")";

    cfg.layer_sliding.assign(size_t(L), 0);
    cfg.sliding_window = 0;
    if (json_object *u = field(r, "use_sliding_window")) {
        if (json_object_get_type(u) != json_type_boolean)
            return std::string("field use_sliding_window must be a boolean (got ") +
                   jsonu::type_name(u) + ")";
        if (json_object_get_boolean(u)) {
            json_object *w = field(r, "sliding_window");
            if (!w || json_object_get_type(w) == json_type_null)
                return "use_sliding_window is true but sliding_window is not set";
            e = get_int(r, "sliding_window", cfg.sliding_window);
            if (!e.empty())
                return e;
            cfg.layer_sliding.assign(size_t(L), 1);
        }
    }
    return "";
}

} // namespace

namespace {

// architectures: Qwen3ForCausalLM (dense) or Qwen3MoeForCausalLM (sets cfg.moe).
std::string read_architecture(json_object *r, const std::string &P, Qwen3Config &cfg) {
    if (!present(r, "architectures"))
        return P + ": missing field architectures";
    json_object *arch = field(r, "architectures");
    if (!arch || json_object_get_type(arch) != json_type_array)
        return std::string(P + ": field architectures must be an array (got ") +
               jsonu::type_name(arch) + ")";
    size_t narch = json_object_array_length(arch);
    bool dense = false, moe = false;
    std::string names;
    for (size_t i = 0; i < narch; i++) {
        json_object *a = json_object_array_get_idx(arch, i);
        if (!a || json_object_get_type(a) != json_type_string)
            return P + ": architectures must hold strings";
        std::string s = json_object_get_string(a);
        dense = dense || s == "Qwen3ForCausalLM";
        moe = moe || s == "Qwen3MoeForCausalLM";
        names += (names.empty() ? "" : ", ") + s;
    }
    if (dense && moe)
        return P + ": architectures names both Qwen3ForCausalLM and Qwen3MoeForCausalLM";
    if (!dense && !moe)
        return P + ": unsupported architecture " +
               (names.empty() ? std::string("(none listed)") : names) +
               " (supported: Qwen3ForCausalLM, Qwen3MoeForCausalLM)";
    cfg.moe = moe;
    return "";
}

// The layer stack's sizes, head_dim derived where Qwen3MoeConfig omits it,
// and rms_norm_eps.
std::string read_sizes(json_object *r, const std::string &P, Qwen3Config &cfg) {
    const bool moe = cfg.moe;
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
        // Qwen3MoeConfig has defaults for these two (head_dim: hidden_size /
        // num_attention_heads, as its attention reads it; intermediate_size
        // 6144) and does not write head_dim into config.json.
        if (moe && !present(r, f.name) && f.dst == &cfg.head_dim)
            continue;
        if (moe && !present(r, f.name) && f.dst == &cfg.intermediate_size) {
            cfg.intermediate_size = 6144;
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

// RoPE: top-level rope_theta (transformers < 5) or rope_parameters.rope_theta
// (newer), and only the default rope type.
std::string read_rope(json_object *r, const std::string &P, Qwen3Config &cfg) {
    std::string err;
    bool has_top = present(r, "rope_theta");
    json_object *params = field(r, "rope_parameters");
    if (params && json_object_get_type(params) != json_type_null &&
        json_object_get_type(params) != json_type_object)
        return std::string(P + ": field rope_parameters must be an object (got ") +
               jsonu::type_name(params) + ")";
    bool has_new =
        params && json_object_get_type(params) == json_type_object && present(params, "rope_theta");
    if (!has_top && !has_new)
        return P + ": missing field rope_theta (top level or in rope_parameters)";
    double top = 0, inner = 0;
    if (has_top) {
        err = get_number(field(r, "rope_theta"), "rope_theta", top);
        if (!err.empty())
            return P + ": " + err;
    }
    if (has_new) {
        err = get_number(field(params, "rope_theta"), "rope_parameters.rope_theta", inner);
        if (!err.empty())
            return P + ": " + err;
    }
    if (has_top && has_new && top != inner)
        return P + ": rope_theta (" + num(top) + ") conflicts with rope_parameters.rope_theta (" +
               num(inner) + ")";
    cfg.rope_theta = has_new ? inner : top;
    err = check_rope_type(field(r, "rope_scaling"), "rope_scaling");
    if (!err.empty())
        return P + ": " + err;
    err = check_rope_type(params, "rope_parameters");
    if (!err.empty())
        return P + ": " + err;
    return "";
}

// tie_word_embeddings, and the features the forward does not implement:
// refused rather than computing the wrong model.
std::string read_flags(json_object *r, const std::string &P, Qwen3Config &cfg) {
    if (present(r, "tie_word_embeddings")) {
        json_object *t = field(r, "tie_word_embeddings");
        if (!t || json_object_get_type(t) != json_type_boolean)
            return std::string(P + ": field tie_word_embeddings must be a boolean (got ") +
                   jsonu::type_name(t) + ")";
        cfg.tie_word_embeddings = json_object_get_boolean(t) != 0;
    }
    if (json_object *a = field(r, "hidden_act")) {
        if (json_object_get_type(a) != json_type_string ||
            std::string(json_object_get_string(a)) != "silu")
            return std::string(P + ": unsupported hidden_act ") + json_object_to_json_string(a) +
                   " (only silu)";
    }
    if (json_object *b = field(r, "attention_bias")) {
        if (json_object_get_type(b) != json_type_boolean)
            return std::string(P + ": field attention_bias must be a boolean (got ") +
                   jsonu::type_name(b) + ")";
        if (json_object_get_boolean(b))
            return P + ": attention_bias = true is not supported";
    }
    return "";
}

std::string read_max_position(json_object *r, const std::string &P, Qwen3Config &cfg) {
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

std::string load_config(const std::string &dir, Qwen3Config &cfg) {
    cfg = Qwen3Config();
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
    for (auto read : {read_architecture, read_sizes, read_rope, read_flags}) {
        err = read(r, P, cfg);
        if (!err.empty())
            return err;
    }
    err = cfg.moe ? read_moe(r, cfg) : read_sliding_layers(r, cfg);
    if (!err.empty())
        return P + ": " + err;
    return read_max_position(r, P, cfg);
}

namespace {
// The parameters of the layer stack and of the embedding + lm_head tables.
struct ParameterTerms {
    double layers, tables, total;
};

ParameterTerms parameter_terms(const Qwen3Config &c) {
    const double H = double(c.hidden_size), I = double(c.intermediate_size),
                 D = double(c.head_dim), q = double(c.num_attention_heads) * D,
                 kv = double(c.num_key_value_heads) * D;
    const double attention = 2 * q * H + 2 * kv * H + 2 * H + 2 * D;
    const double dense = 3 * I * H,
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

double implied_parameters(const Qwen3Config &c) { return parameter_terms(c).total; }

std::string check_memory(const Qwen3Config &c, double memory_bytes) {
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
