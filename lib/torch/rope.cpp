// RoPE's fields and tables, as transformers 5 (modeling_rope_utils.py).
#include "rope.hpp"

#include "config_json.hpp"

#include <cmath>
#include <cstdio>

namespace bosch_torch {
namespace {

using namespace cfgjson;

const double kDefaultTheta = 10000.0; // RotaryEmbeddingConfigMixin.default_theta

// The parameters' object as transformers resolves it: rope_scaling (the
// older name) when given and not empty, else rope_parameters; nullptr when
// neither is. Sets *name for messages.
std::string rope_object(json_object *r, json_object *&obj, std::string &name) {
    obj = nullptr;
    for (const char *key : {"rope_scaling", "rope_parameters"}) {
        json_object *o = field(r, key);
        if (!o || json_object_get_type(o) == json_type_null)
            continue;
        if (json_object_get_type(o) != json_type_object)
            return std::string("field ") + key + " must be an object or null (got " +
                   jsonu::type_name(o) + ")";
        if (!obj && json_object_object_length(o) > 0) {
            obj = o;
            name = key;
        }
    }
    return "";
}

std::string read_theta(json_object *r, json_object *P, const std::string &pname,
                       ModelConfig &cfg) {
    double top = 0, inner = 0;
    std::string err;
    const bool has_top = !absent(r, "rope_theta"), has_inner = P && !absent(P, "rope_theta");
    if (has_top && !(err = get_number(field(r, "rope_theta"), "rope_theta", top)).empty())
        return err;
    if (has_inner &&
        !(err = get_number(field(P, "rope_theta"), pname + ".rope_theta", inner)).empty())
        return err;
    if (has_top && has_inner && top != inner)
        return "rope_theta (" + num(top) + ") conflicts with " + pname + ".rope_theta (" +
               num(inner) + ")";
    cfg.rope_theta = has_inner ? inner : has_top ? top : kDefaultTheta;
    return "";
}

// A number of the parameters of rope_type `type`: required (dflt < 0
// means "must be given"), or dflt when absent or null.
std::string param(json_object *P, const std::string &pname, const std::string &type,
                  const char *key, double dflt, double &out) {
    if (absent(P, key)) {
        if (dflt < 0)
            return pname + " of rope_type \"" + type + "\" needs " + key;
        out = dflt;
        return "";
    }
    return get_number(field(P, key), pname + "." + key, out);
}

std::string factors(json_object *P, const std::string &pname, const char *key, int64_t n,
                    std::vector<double> &out) {
    json_object *a = field(P, key);
    if (!a || json_object_get_type(a) != json_type_array)
        return pname + "." + key + " must be a list of " + std::to_string(n) + " numbers";
    if (int64_t(json_object_array_length(a)) != n)
        return pname + "." + key + " has " + std::to_string(json_object_array_length(a)) +
               " entries, head_dim / 2 = " + std::to_string(n) + " expected";
    out.clear();
    for (size_t i = 0; i < size_t(n); i++) {
        double x = 0;
        std::string e = get_number(json_object_array_get_idx(a, i),
                                   pname + "." + key + "[" + std::to_string(i) + "]", x);
        if (!e.empty())
            return e;
        out.push_back(x);
    }
    return "";
}

std::string read_original_max(json_object *P, const std::string &pname, ModelConfig &cfg) {
    RopeScaling &s = cfg.rope;
    // transformers takes the parameters' own value, else max_position_embeddings
    // (a top-level original_max_position_embeddings is not read on load).
    s.original_max_position_embeddings = cfg.max_position_embeddings;
    if (absent(P, "original_max_position_embeddings"))
        return "";
    json_object *v = field(P, "original_max_position_embeddings");
    if (json_object_get_type(v) != json_type_int || json_object_get_int64(v) <= 0)
        return pname + ".original_max_position_embeddings must be a positive integer";
    s.original_max_position_embeddings = json_object_get_int64(v);
    return "";
}

double yarn_mscale(double scale, double mscale) {
    return scale <= 1 ? 1.0 : 0.1 * mscale * std::log(scale) + 1.0;
}

std::string read_type_params(json_object *P, const std::string &pn, ModelConfig &cfg) {
    RopeScaling &s = cfg.rope;
    const std::string &t = s.type;
    std::string e;
    if (t == "linear" || t == "dynamic")
        return param(P, pn, t, "factor", -1, s.factor);
    if (!(e = read_original_max(P, pn, cfg)).empty())
        return e;
    const double ratio =
        double(cfg.max_position_embeddings) / double(s.original_max_position_embeddings);
    if (t == "llama3") {
        if (!(e = param(P, pn, t, "factor", -1, s.factor)).empty() ||
            !(e = param(P, pn, t, "low_freq_factor", -1, s.low_freq_factor)).empty() ||
            !(e = param(P, pn, t, "high_freq_factor", -1, s.high_freq_factor)).empty())
            return e;
        if (s.high_freq_factor == s.low_freq_factor)
            return pn + ": high_freq_factor equals low_freq_factor";
        return "";
    }
    if (t == "yarn") {
        // transformers reads factor as a required key (null: the ratio).
        if (!present(P, "factor"))
            return pn + " of rope_type \"yarn\" needs factor";
        double attention = 0, mscale = 0, mscale_all = 0;
        if (!(e = param(P, pn, t, "factor", ratio, s.factor)).empty() ||
            !(e = param(P, pn, t, "attention_factor", 0, attention)).empty() ||
            !(e = param(P, pn, t, "mscale", 0, mscale)).empty() ||
            !(e = param(P, pn, t, "mscale_all_dim", 0, mscale_all)).empty() ||
            !(e = param(P, pn, t, "beta_fast", 32, s.beta_fast)).empty() ||
            !(e = param(P, pn, t, "beta_slow", 1, s.beta_slow)).empty() ||
            !(e = get_bool(P, "truncate", s.truncate)).empty())
            return e;
        s.attention_factor = attention > 0 ? attention
                             : mscale > 0 && mscale_all > 0
                                 ? yarn_mscale(s.factor, mscale) / yarn_mscale(s.factor, mscale_all)
                                 : yarn_mscale(s.factor, 1.0);
        return "";
    }
    if (t == "longrope") {
        double attention = 0;
        const int64_t half = cfg.head_dim / 2;
        if (!(e = param(P, pn, t, "factor", ratio, s.factor)).empty() ||
            !(e = param(P, pn, t, "attention_factor", 0, attention)).empty() ||
            !(e = factors(P, pn, "short_factor", half, s.short_factor)).empty() ||
            !(e = factors(P, pn, "long_factor", half, s.long_factor)).empty())
            return e;
        s.attention_factor =
            attention > 0 ? attention
            : s.factor <= 1.0
                ? 1.0
                : std::sqrt(1 + std::log(s.factor) /
                                    std::log(double(s.original_max_position_embeddings)));
        return "";
    }
    return pn + ".rope_type \"" + t +
           "\" is not supported (default, linear, dynamic, yarn, longrope, llama3)";
}

} // namespace

std::string read_rope(json_object *r, ModelConfig &cfg) {
    json_object *P = nullptr;
    std::string pname = "rope_parameters";
    std::string err = rope_object(r, P, pname);
    if (err.empty())
        err = read_theta(r, P, pname, cfg);
    if (!err.empty())
        return err;
    cfg.rope = RopeScaling();
    for (json_object *o : {P, r}) {
        if (!o || absent(o, "partial_rotary_factor"))
            continue;
        double f = 0;
        err = get_number(field(o, "partial_rotary_factor"), "partial_rotary_factor", f);
        if (!err.empty())
            return err;
        if (f != 1.0)
            return "partial_rotary_factor " + num(f) +
                   " is not supported (RoPE over the whole head_dim only)";
    }
    if (!P)
        return "";
    json_object *t = field(P, "rope_type");
    if (!t || json_object_get_type(t) == json_type_null)
        t = field(P, "type");
    if (t && json_object_get_type(t) != json_type_null) {
        if (json_object_get_type(t) != json_type_string)
            return pname + ".rope_type must be a string";
        cfg.rope.type = json_object_get_string(t);
    }
    if (cfg.rope.type == "default") {
        // transformers would take it as the default RoPE and drop the factor.
        if (!absent(P, "factor") && (!t || json_object_get_type(t) == json_type_null))
            return pname + " gives a factor but no rope_type";
        return "";
    }
    return read_type_params(P, pname, cfg);
}

namespace {

const double kPi = 3.141592653589793;

torch::TensorOptions f32_on(torch::Device d) {
    return torch::TensorOptions().dtype(torch::kFloat32).device(d);
}

// arange(0, dim, 2) / dim in fp32, the exponent every type starts from.
torch::Tensor exponents(int64_t dim, torch::Device d) {
    return torch::arange(0, dim, 2, torch::TensorOptions().dtype(torch::kInt64).device(d))
               .to(torch::kFloat32) /
           double(dim);
}

// 1.0 / (base ** e): Python's float / tensor is reciprocal() * 1.0.
torch::Tensor default_inv(double base, int64_t dim, torch::Device d) {
    return torch::pow(base, exponents(dim, d)).reciprocal();
}

torch::Tensor dynamic_inv(const ModelConfig &c, int64_t len, torch::Device d) {
    const int64_t dim = c.head_dim, maxp = c.max_position_embeddings;
    const double f = c.rope.factor, power = double(dim) / double(dim - 2);
    if (len <= maxp) // the table transformers builds at start-up, in Python floats
        return default_inv(c.rope_theta * std::pow(f * double(maxp) / double(maxp) - (f - 1), power),
                           dim, d);
    // dynamic_frequency_update: the same with seq_len a tensor, in fp32.
    torch::Tensor s = torch::full({}, len, torch::TensorOptions().dtype(torch::kInt64).device(d));
    torch::Tensor base = ((s * f) / double(maxp) - (f - 1)).pow(power) * c.rope_theta;
    return torch::pow(base, exponents(dim, d)).reciprocal();
}

torch::Tensor yarn_inv(const ModelConfig &c, torch::Device d) {
    const RopeScaling &s = c.rope;
    const int64_t dim = c.head_dim;
    const double base = c.rope_theta, omax = double(s.original_max_position_embeddings);
    torch::Tensor pos_freqs = torch::pow(base, exponents(dim, d));
    torch::Tensor extrapolation = pos_freqs.reciprocal();
    torch::Tensor interpolation = (pos_freqs * s.factor).reciprocal();
    auto correction_dim = [&](double rotations) {
        return (double(dim) * std::log(omax / (rotations * 2 * kPi))) / (2 * std::log(base));
    };
    double low = correction_dim(s.beta_fast), high = correction_dim(s.beta_slow);
    if (s.truncate) {
        low = std::floor(low);
        high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, double(dim - 1));
    if (low == high)
        high += 0.001;
    torch::Tensor ramp =
        ((torch::arange(dim / 2, f32_on(d)) - low) / (high - low)).clamp(0, 1);
    torch::Tensor extra_factor = 1 - ramp;
    return interpolation * (1 - extra_factor) + extrapolation * extra_factor;
}

torch::Tensor longrope_inv(const ModelConfig &c, int64_t len, torch::Device d) {
    const RopeScaling &s = c.rope;
    const std::vector<double> &ext =
        len > s.original_max_position_embeddings ? s.long_factor : s.short_factor;
    torch::Tensor e = torch::tensor(ext, torch::kFloat64).to(f32_on(d));
    return (e * torch::pow(c.rope_theta, exponents(c.head_dim, d))).reciprocal();
}

torch::Tensor llama3_inv(const ModelConfig &c, torch::Device d) {
    const RopeScaling &s = c.rope;
    const double old = double(s.original_max_position_embeddings);
    const double low_wl = old / s.low_freq_factor, high_wl = old / s.high_freq_factor;
    torch::Tensor inv = default_inv(c.rope_theta, c.head_dim, d);
    torch::Tensor wavelen = inv.reciprocal() * (2 * kPi);
    torch::Tensor scaled = torch::where(wavelen > low_wl, inv / s.factor, inv);
    torch::Tensor smooth =
        (wavelen.reciprocal() * old - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
    torch::Tensor smoothed = (1 - smooth) * scaled / s.factor + smooth * scaled;
    torch::Tensor medium = (wavelen < high_wl).logical_not() & (wavelen > low_wl).logical_not();
    return torch::where(medium, smoothed, scaled);
}

} // namespace

std::pair<torch::Tensor, double> rope_frequencies(const ModelConfig &c, int64_t len,
                                                  torch::Device d) {
    const std::string &t = c.rope.type;
    if (t == "linear")
        return {default_inv(c.rope_theta, c.head_dim, d) / c.rope.factor, 1.0};
    if (t == "dynamic")
        return {dynamic_inv(c, len, d), 1.0};
    if (t == "yarn")
        return {yarn_inv(c, d), c.rope.attention_factor};
    if (t == "longrope")
        return {longrope_inv(c, len, d), c.rope.attention_factor};
    if (t == "llama3")
        return {llama3_inv(c, d), 1.0};
    return {default_inv(c.rope_theta, c.head_dim, d), 1.0};
}

int64_t rope_length_key(const ModelConfig &c, int64_t len) {
    if (c.rope.type == "dynamic")
        return len > c.max_position_embeddings ? len : 0;
    if (c.rope.type == "longrope")
        return len > c.rope.original_max_position_embeddings ? 1 : 0;
    return 0;
}

std::string rope_description(const ModelConfig &c) {
    const RopeScaling &s = c.rope;
    if (s.type == "default")
        return "";
    char buf[256];
    std::snprintf(buf, sizeof buf, "rope %s %.17g %lld %.17g %.17g %.17g %.17g %.17g %d",
                  s.type.c_str(), s.factor, (long long)s.original_max_position_embeddings,
                  s.low_freq_factor, s.high_freq_factor, s.beta_fast, s.beta_slow,
                  s.attention_factor, int(s.truncate));
    std::string out = buf;
    for (const std::vector<double> *v : {&s.short_factor, &s.long_factor})
        for (double x : *v)
            out += " " + num(x);
    if (s.type == "dynamic")
        out += " " + std::to_string(c.max_position_embeddings);
    return out;
}

} // namespace bosch_torch
