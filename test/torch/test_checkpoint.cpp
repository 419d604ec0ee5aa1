// Checkpoint loader of libbosch-torch: config.json, safetensors (single and
// sharded), weight checks; round trips and malformed input. Plain main:
// exits non-zero on failure.
#include "tiny_checkpoint.hpp"
#include "torch/checkpoint.hpp"

#include <json-c/json.h>

#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace bosch_torch;
using namespace bosch_torch_test;

#include "expect.hpp"

// err must be non-empty and contain every keyword.
static bool has_error(const std::string &err, std::initializer_list<const char *> words,
                      const char *what, int line) {
    static const bool verbose = std::getenv("BOSCH_TEST_VERBOSE") != nullptr;
    if (verbose)
        std::fprintf(stderr, "  [%d] %s\n", line, err.c_str());
    bool ok = !err.empty();
    for (const char *w : words)
        if (err.find(w) == std::string::npos)
            ok = false;
    if (!ok) {
        std::fprintf(stderr, "test_checkpoint.cpp:%d: %s: expected an error containing", line,
                     what);
        for (const char *w : words)
            std::fprintf(stderr, " '%s'", w);
        std::fprintf(stderr, ", got '%s'\n", err.c_str());
    }
    return ok;
}
#define EXPECT_ERR(expr, ...)                                                                      \
    do {                                                                                           \
        g_checks++;                                                                                \
        if (!has_error((expr), {__VA_ARGS__}, #expr, __LINE__))                                    \
            g_failures++;                                                                          \
    } while (0)
#define EXPECT_OK(expr)                                                                            \
    do {                                                                                           \
        g_checks++;                                                                                \
        std::string e_ = (expr);                                                                   \
        if (!e_.empty()) {                                                                         \
            g_failures++;                                                                          \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, e_.c_str()); \
        }                                                                                          \
    } while (0)

static std::string g_tmp;

static std::string subdir(const std::string &name) {
    std::string d = g_tmp + "/" + name;
    remove_tree(d);
    return d;
}

// A safetensors file from a header text and data bytes.
static std::string st_bytes(const std::string &header, const std::string &data, uint64_t n) {
    std::string out(8, '\0');
    for (int i = 0; i < 8; i++)
        out[i] = (char)(unsigned char)(n >> (8 * i));
    return out + header + data;
}
static std::string st_bytes(const std::string &header, const std::string &data) {
    return st_bytes(header, data, header.size());
}

static std::string read_st(const std::string &bytes, TensorMap *out = nullptr) {
    std::string p = g_tmp + "/raw.safetensors";
    std::string e = write_file(p, bytes);
    if (!e.empty())
        return "WRITE FAILED " + e;
    TensorMap m;
    e = read_safetensors(p, m);
    if (out)
        *out = m;
    if (!e.empty() && !m.empty())
        return e + " [BUG: map not empty after an error]";
    return e;
}

static bool same_maps(const TensorMap &a, const TensorMap &b) {
    if (a.size() != b.size())
        return false;
    for (const auto &kv : a) {
        auto it = b.find(kv.first);
        if (it == b.end() || it->second.scalar_type() != kv.second.scalar_type() ||
            !torch::equal(it->second, kv.second))
            return false;
    }
    return true;
}

// Full load as the model does it.
static std::string load_all(const std::string &dir, ModelConfig &cfg, TensorMap &w) {
    std::string e = load_config(dir, cfg);
    if (e.empty())
        e = load_weights(dir, w);
    if (e.empty())
        e = check_weights(cfg, w);
    return e;
}

static void test_round_trips() {
    const torch::ScalarType dts[] = {torch::kFloat32, torch::kBFloat16, torch::kFloat16};
    int k = 0;
    for (torch::ScalarType dt : dts) {
        for (int shards : {1, 3}) {
            for (bool tie : {false, true}) {
                TinySpec s;
                s.dtype = dt;
                s.shards = shards;
                s.tie = tie;
                s.seed = 100 + k;
                s.rope_style_new = (k % 2) == 1;
                s.layers = 1 + k % 3;
                s.rope_theta = 1000000.0;
                k++;
                std::string dir = subdir("rt" + std::to_string(k));
                TensorMap written, w;
                EXPECT_OK(write_tiny_qwen3(dir, s, &written));
                ModelConfig c;
                EXPECT_OK(load_all(dir, c, w));
                EXPECT(same_maps(written, w));
                EXPECT(w.count("lm_head.weight") == (tie ? 0u : 1u));
                for (const auto &kv : w)
                    EXPECT(kv.second.scalar_type() == dt);
                EXPECT(c.vocab_size == s.vocab && c.hidden_size == s.hidden &&
                       c.intermediate_size == s.intermediate && c.num_hidden_layers == s.layers &&
                       c.num_attention_heads == s.heads && c.num_key_value_heads == s.kv_heads &&
                       c.head_dim == s.head_dim && c.tie_word_embeddings == tie);
                EXPECT(c.rms_norm_eps == s.rms_norm_eps && c.rope_theta == s.rope_theta);
                if (shards > 1) {
                    EXPECT(read_file(dir + "/model.safetensors").empty());
                    EXPECT(!read_file(dir + "/model-00002-of-00003.safetensors").empty());
                }
            }
        }
    }
    // Determinism: same spec, same bytes; other seed, other bytes.
    TinySpec s;
    std::string a = subdir("det_a"), b = subdir("det_b"), c = subdir("det_c");
    EXPECT_OK(write_tiny_qwen3(a, s));
    EXPECT_OK(write_tiny_qwen3(b, s));
    s.seed = 2;
    EXPECT_OK(write_tiny_qwen3(c, s));
    EXPECT(read_file(a + "/model.safetensors") == read_file(b + "/model.safetensors"));
    EXPECT(read_file(a + "/model.safetensors") != read_file(c + "/model.safetensors"));

    // Bigger, non-square shapes (hidden != heads * head_dim, as in Qwen3-0.6B).
    TinySpec q;
    q.layers = 3;
    q.hidden = 48;
    q.heads = 6;
    q.kv_heads = 3;
    q.head_dim = 16;
    q.intermediate = 80;
    q.vocab = 101;
    q.dtype = torch::kBFloat16;
    std::string d = subdir("odd");
    TensorMap written, w;
    EXPECT_OK(write_tiny_qwen3(d, q, &written));
    ModelConfig cfg;
    EXPECT_OK(load_all(d, cfg, w));
    EXPECT(same_maps(written, w));
    EXPECT(w.at("model.layers.2.self_attn.q_proj.weight").sizes() == torch::IntArrayRef({96, 48}));
    EXPECT(w.at("model.layers.2.self_attn.o_proj.weight").sizes() == torch::IntArrayRef({48, 96}));
}

static void test_safetensors_basic() {
    // Empty header: no tensors, valid.
    TensorMap m;
    EXPECT_OK(read_st(st_bytes("{}", ""), &m));
    EXPECT(m.empty());
    // Metadata only, padding spaces, leading whitespace.
    EXPECT_OK(read_st(st_bytes(" {\"__metadata__\":{\"format\":\"pt\"}}   ", "")));
    // Overlapping tensors share bytes: allowed.
    std::string data(8, '\0');
    float one = 1.0f, two = 2.0f;
    std::memcpy(&data[0], &one, 4);
    std::memcpy(&data[4], &two, 4);
    EXPECT_OK(read_st(st_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                               "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]},"
                               "\"c\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]},"
                               "\"z\":{\"dtype\":\"BF16\",\"shape\":[0,7],\"data_offsets\":[8,8]}}",
                               data),
                      &m));
    EXPECT(m.size() == 4);
    if (m.size() == 4) {
        EXPECT(m["a"].sizes() == torch::IntArrayRef({2}) && m["a"][1].item<float>() == 2.0f);
        EXPECT(m["b"].item<float>() == 2.0f);
        EXPECT(m["c"].dim() == 0 && m["c"].item<float>() == 1.0f);
        EXPECT(m["z"].numel() == 0 && m["z"].sizes() == torch::IntArrayRef({0, 7}) &&
               m["z"].scalar_type() == torch::kBFloat16);
    }
    // Trailing bytes after the last tensor are tolerated.
    EXPECT_OK(read_st(st_bytes("{\"a\":{\"dtype\":\"F16\",\"shape\":[1],\"data_offsets\":[0,2]}}",
                               std::string(10, 'x'))));
    // BF16 bit pattern: 0x3f80 = 1.0.
    std::string bf("\x80\x3f", 2);
    EXPECT_OK(read_st(
        st_bytes("{\"x\":{\"dtype\":\"BF16\",\"shape\":[1],\"data_offsets\":[0,2]}}", bf), &m));
    EXPECT(m.count("x") && m["x"].scalar_type() == torch::kBFloat16 &&
           m["x"].to(torch::kFloat32).item<float>() == 1.0f);
    // Cross-check against bytes that torch itself produced.
    torch::Tensor t = torch::arange(12, torch::kFloat32).reshape({3, 4}).to(torch::kFloat16);
    std::string raw((const char *)t.data_ptr(), 24);
    EXPECT_OK(read_st(
        st_bytes("{\"t\":{\"dtype\":\"F16\",\"shape\":[3,4],\"data_offsets\":[0,24]}}", raw), &m));
    EXPECT(m.count("t") && torch::equal(m["t"], t));
}

static const char *kOneF32 = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}}";

static void test_safetensors_malformed() {
    const std::string data16(16, '\x01');
    // Missing / non-regular file.
    TensorMap m;
    EXPECT_ERR(read_safetensors(g_tmp + "/does-not-exist.safetensors", m), "cannot open");
    EXPECT_ERR(read_safetensors(g_tmp, m), "not a regular file");

    // Too short for a header length.
    for (size_t n = 0; n < 8; n++)
        EXPECT_ERR(read_st(std::string(n, '\0')), "truncated");

    // Header length lying.
    for (uint64_t len :
         {UINT64_MAX, (uint64_t)INT64_MAX + 1, (uint64_t)INT64_MAX, (uint64_t)1 << 40,
          (uint64_t)1 << 32, (uint64_t)std::string(kOneF32).size() + 17})
        EXPECT_ERR(read_st(st_bytes(kOneF32, data16, len)), "header length", "exceeds");
    EXPECT_ERR(read_st(st_bytes(kOneF32, data16, 0)), "header");
    EXPECT_ERR(read_st(st_bytes(kOneF32, data16, 1)), "header");
    // Header length shorter than the JSON: cut JSON.
    EXPECT_ERR(read_st(st_bytes(kOneF32, data16, 10)), "invalid JSON");
    // Over the 100 MB cap (file really that large is not needed: cap is checked after size,
    // so emulate with a sparse file).
    {
        std::string p = g_tmp + "/big.safetensors";
        std::FILE *f = std::fopen(p.c_str(), "wb");
        uint64_t n = (uint64_t)200 << 20;
        unsigned char len[8];
        for (int i = 0; i < 8; i++)
            len[i] = (unsigned char)(n >> (8 * i));
        std::fwrite(len, 1, 8, f);
        std::fseek(f, (long)n + 8 - 1, SEEK_SET);
        std::fputc(0, f);
        std::fclose(f);
        EXPECT_ERR(read_safetensors(p, m), "header length", "limit");
        remove_tree(p);
    }

    // JSON problems.
    EXPECT_ERR(read_st(st_bytes("{\"w\":", data16)), "invalid JSON");
    EXPECT_ERR(read_st(st_bytes("[1,2]", data16)), "not a JSON object");
    EXPECT_ERR(read_st(st_bytes("{} {}", data16)), "trailing");
    EXPECT_ERR(read_st(st_bytes(std::string("{\"w\"\0:1}", 8), data16)), "NUL");
    EXPECT_ERR(read_st(st_bytes(std::string(200, '[') + std::string(200, ']'), "")), "JSON");
    EXPECT_ERR(read_st(st_bytes("{\"__metadata__\":5}", "")), "__metadata__");
    EXPECT_ERR(read_st(st_bytes("{\"w\":5}", data16)), "tensor w", "object");

    auto one = [&](const std::string &dtype, const std::string &shape, const std::string &offs) {
        return "{\"w\":{\"dtype\":" + dtype + ",\"shape\":" + shape + ",\"data_offsets\":" + offs +
               "}}";
    };
    // Data offsets beyond the data section.
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[2,2]", "[0,16]"), std::string(15, 'a'))),
               "tensor w", "beyond the data");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[2,2]", "[8,24]"), data16)), "beyond the data");
    EXPECT_ERR(read_st(st_bytes(
                   one("\"F32\"", "[1]", "[18446744073709551612,18446744073709551615]"), data16)),
               "beyond the data");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[1]", "[9223372036854775808,9223372036854775812]"),
                                data16)),
               "beyond the data");
    // end < begin, bad offsets arrays.
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[0]", "[8,4]"), data16)), "end", "begin");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[1]", "[0,4,8]"), data16)), "data_offsets");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[1]", "[-4,0]"), data16)), "data_offsets");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[1]", "[0.0,4.0]"), data16)), "data_offsets");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[1]", "\"0,4\""), data16)), "data_offsets");
    // Byte size vs shape/dtype.
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[2,2]", "[0,12]"), data16)), "byte size", "[2, 2]");
    EXPECT_ERR(read_st(st_bytes(one("\"BF16\"", "[2,2]", "[0,16]"), data16)), "byte size");
    EXPECT_ERR(read_st(st_bytes(one("\"F16\"", "[]", "[0,4]"), data16)), "byte size");
    // Shape problems.
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[-1,4]", "[0,16]"), data16)), "shape",
               "non-negative");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[2.0,2]", "[0,16]"), data16)), "shape");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "4", "[0,16]"), data16)), "shape");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[4294967296,4294967296]", "[0,16]"), data16)),
               "overflow");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[4611686018427387904]", "[0,16]"), data16)),
               "overflow");
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[18446744073709551615]", "[0,16]"), data16)),
               "shape");
    EXPECT_ERR(
        read_st(st_bytes(one("\"F32\"", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]", "[0,4]"), data16)),
        "dimensions");
    // A zero dimension makes an empty tensor (0 bytes)...
    EXPECT_OK(read_st(st_bytes(one("\"F32\"", "[3,0,5]", "[16,16]"), data16)));
    // ...but the other dimensions must still fit (libtorch derives strides from them).
    EXPECT_ERR(read_st(st_bytes(one("\"F32\"", "[0,4294967296,4294967296]", "[0,0]"), data16)),
               "overflow");
    // Unsupported dtypes, named.
    for (const char *dt : {"F64", "I64", "I8", "U8", "BOOL", "F8_E4M3", "Q4_K", ""})
        EXPECT_ERR(read_st(st_bytes(one(std::string("\"") + dt + "\"", "[1]", "[0,1]"), data16)),
                   "unsupported dtype", dt);
    EXPECT_ERR(read_st(st_bytes(one("32", "[1]", "[0,4]"), data16)), "dtype");
    // Missing keys.
    EXPECT_ERR(read_st(st_bytes("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", data16)),
               "missing dtype");
    EXPECT_ERR(read_st(st_bytes("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", data16)),
               "missing shape");
    EXPECT_ERR(read_st(st_bytes("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", data16)),
               "missing data_offsets");
    // One bad tensor among good ones: whole file refused, nothing returned.
    EXPECT_ERR(read_st(st_bytes("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
                                "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,40]}}",
                                data16)),
               "tensor b");
}

// A valid checkpoint file cut at many offsets, and bytes flipped at random:
// never a crash, never a read outside the file (run under ASan).
static void test_truncation_and_fuzz() {
    TinySpec s;
    s.layers = 1;
    s.dtype = torch::kBFloat16;
    std::string dir = subdir("trunc");
    EXPECT_OK(write_tiny_qwen3(dir, s));
    const std::string good = read_file(dir + "/model.safetensors");
    EXPECT(good.size() > 1000);
    TensorMap ref;
    EXPECT_OK(read_st(good, &ref));
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--)
        hlen = (hlen << 8) | (unsigned char)good[i];
    std::vector<size_t> cuts;
    for (size_t c = 0; c < 8 + hlen + 64 && c < good.size(); c++)
        cuts.push_back(c); // every byte of the length and header, and the first data bytes
    for (size_t c = 8 + hlen; c < good.size(); c += 97)
        cuts.push_back(c);
    for (size_t c = good.size() - 16; c < good.size(); c++)
        cuts.push_back(c);
    int bad = 0;
    for (size_t c : cuts) {
        std::string e = read_st(good.substr(0, c));
        if (e.empty()) {
            bad++;
            std::fprintf(stderr, "truncation at %zu of %zu was accepted\n", c, good.size());
        } else if (e.find("BUG") != std::string::npos) {
            bad++;
        }
    }
    EXPECT(bad == 0);
    // Cut inside the data section: the error names the data section.
    EXPECT_ERR(read_st(good.substr(0, good.size() - 1)), "beyond the data");

    // Random mutations of the length and header (and a few data bytes).
    std::mt19937_64 rng(7);
    int accepted = 0, rejected = 0;
    for (int it = 0; it < 600; it++) {
        std::string b = good;
        int flips = 1 + (int)(rng() % 4);
        for (int f = 0; f < flips; f++) {
            size_t pos = rng() % (8 + hlen + 8);
            switch (rng() % 4) {
            case 0:
                b[pos] = (char)(rng() & 0xff);
                break;
            case 1:
                b[pos] = "0123456789[]{},:\"-."[rng() % 19];
                break;
            case 2:
                b[pos] ^= (char)(1u << (rng() % 8));
                break;
            default:
                b.erase(pos, 1 + rng() % 8);
                break;
            }
        }
        TensorMap out;
        std::string e = read_st(b, &out);
        (e.empty() ? accepted : rejected)++;
        EXPECT(e.find("BUG") == std::string::npos);
        if (e.empty()) {
            // Whatever was accepted lies inside the file.
            for (const auto &kv : out)
                EXPECT((uint64_t)kv.second.numel() * kv.second.element_size() <= b.size());
        }
    }
    EXPECT(rejected > 0);
    std::fprintf(stderr, "fuzz: %d mutated files accepted, %d rejected\n", accepted, rejected);
}

// config.json variations, built by editing the tiny config with json-c.
static std::string config_with(const TinySpec &s, const std::function<void(json_object *)> &edit,
                               const std::string &name, ModelConfig *loaded = nullptr) {
    std::string dir = subdir(name);
    std::string e = write_tiny_qwen3(dir, s);
    if (!e.empty())
        return e;
    json_object *root = json_tokener_parse(tiny_config_json(s).c_str());
    edit(root);
    e = write_file(dir + "/config.json", json_object_to_json_string(root));
    json_object_put(root);
    if (!e.empty())
        return e;
    ModelConfig c;
    e = load_config(dir, c);
    if (loaded)
        *loaded = c;
    return e;
}

// Loads a config edited by `edit`; the sliding layers and window it gives.
static std::string hybrid(const TinySpec &s, const std::function<void(json_object *)> &edit,
                          std::vector<uint8_t> &layers, int64_t &window) {
    ModelConfig c;
    std::string e = config_with(s, edit, "cfg_hybrid", &c);
    layers = c.layer_sliding;
    window = c.sliding_window;
    return e;
}

static json_object *types(std::initializer_list<const char *> t) {
    json_object *a = json_object_new_array();
    for (const char *x : t)
        json_object_array_add(a, x ? json_object_new_string(x) : json_object_new_int(7));
    return a;
}

static void test_hybrid_config(TinySpec s) {
    s.layers = 3;
    std::vector<uint8_t> L;
    int64_t W = -1;
    auto set = [](json_object *r, const char *k, json_object *v) {
        json_object_object_del(r, k);
        json_object_object_add(r, k, v);
    };
    // The tiny config (use_sliding_window false, as real Qwen3 checkpoints): no sliding layer.
    EXPECT_OK(hybrid(s, [](json_object *) {}, L, W));
    EXPECT(L == std::vector<uint8_t>({0, 0, 0}) && W == 0);
    // layer_types + sliding_window.
    auto lt = [&](json_object *r) {
        set(r, "use_sliding_window", json_object_new_boolean(1));
        set(r, "sliding_window", json_object_new_int(5));
        set(r, "layer_types", types({"full_attention", "sliding_attention", "sliding_attention"}));
    };
    EXPECT_OK(hybrid(s, lt, L, W));
    EXPECT(L == std::vector<uint8_t>({0, 1, 1}) && W == 5);
    // All full layer_types (what newer transformers write for a plain model).
    EXPECT_OK(hybrid(
        s,
        [&](json_object *r) {
            set(r, "layer_types", types({"full_attention", "full_attention", "full_attention"}));
        },
        L, W));
    EXPECT(L == std::vector<uint8_t>({0, 0, 0}) && W == 0);
    // No layer_types: layers from max_window_layers on slide.
    EXPECT_OK(hybrid(
        s,
        [&](json_object *r) {
            set(r, "use_sliding_window", json_object_new_boolean(1));
            set(r, "sliding_window", json_object_new_int(7));
            set(r, "max_window_layers", json_object_new_int(2));
        },
        L, W));
    EXPECT(L == std::vector<uint8_t>({0, 0, 1}) && W == 7);
    // ... with transformers' default max_window_layers (28): none of 3 layers.
    EXPECT_OK(hybrid(
        s,
        [&](json_object *r) {
            set(r, "use_sliding_window", json_object_new_boolean(1));
            set(r, "sliding_window", json_object_new_int(7));
            json_object_object_del(r, "max_window_layers");
        },
        L, W));
    EXPECT(L == std::vector<uint8_t>({0, 0, 0}) && W == 0);
    // use_sliding_window false: sliding_window and max_window_layers do nothing.
    EXPECT_OK(hybrid(
        s,
        [&](json_object *r) {
            set(r, "sliding_window", json_object_new_int(7));
            set(r, "max_window_layers", json_object_new_int(0));
        },
        L, W));
    EXPECT(L == std::vector<uint8_t>({0, 0, 0}) && W == 0);
    // Refused, each by name.
    EXPECT_ERR(hybrid(
                   s,
                   [&](json_object *r) {
                       lt(r);
                       set(r, "use_sliding_window", json_object_new_boolean(0));
                   },
                   L, W),
               "sliding_attention", "use_sliding_window");
    EXPECT_ERR(hybrid(
                   s,
                   [&](json_object *r) {
                       lt(r);
                       set(r, "layer_types", types({"full_attention", "chunked_attention",
                                                    "full_attention"}));
                   },
                   L, W),
               "layer_types[1]", "chunked_attention");
    EXPECT_ERR(hybrid(
                   s,
                   [&](json_object *r) {
                       lt(r);
                       set(r, "layer_types", types({"full_attention", nullptr, "full_attention"}));
                   },
                   L, W),
               "layer_types[1]", "7");
    EXPECT_ERR(hybrid(
                   s,
                   [&](json_object *r) {
                       lt(r);
                       set(r, "layer_types", types({"full_attention", "sliding_attention"}));
                   },
                   L, W),
               "layer_types has 2 entries", "3 layers");
    EXPECT_ERR(hybrid(
                   s,
                   [&](json_object *r) {
                       lt(r);
                       set(r, "layer_types", json_object_new_string("sliding_attention"));
                   },
                   L, W),
               "layer_types", "array");
    EXPECT_ERR(hybrid(
                   s,
                   [&](json_object *r) {
                       lt(r);
                       set(r, "sliding_window", nullptr);
                   },
                   L, W),
               "sliding_window", "not set");
    EXPECT_ERR(hybrid(
                   s,
                   [&](json_object *r) {
                       lt(r);
                       set(r, "sliding_window", json_object_new_int(0));
                   },
                   L, W),
               "sliding_window", "positive");
    EXPECT_ERR(hybrid(
                   s,
                   [&](json_object *r) {
                       lt(r);
                       set(r, "use_sliding_window", json_object_new_string("yes"));
                   },
                   L, W),
               "use_sliding_window", "boolean");
    EXPECT_ERR(hybrid(
                   s,
                   [&](json_object *r) {
                       set(r, "use_sliding_window", json_object_new_boolean(1));
                       set(r, "sliding_window", json_object_new_int(4));
                       set(r, "max_window_layers", json_object_new_int(-1));
                   },
                   L, W),
               "max_window_layers", "non-negative");
}

// The families beyond Qwen3 (family_*.cpp), read from the tiny config with
// its architecture replaced: the layer flags, transformers' defaults, the
// windows; and the RoPE parameters of each type (rope.cpp).
static void set_field(json_object *r, const char *k, json_object *v) {
    json_object_object_del(r, k);
    json_object_object_add(r, k, v);
}

static std::function<void(json_object *)> as_family(const char *arch,
                                                    std::function<void(json_object *)> more) {
    return [=](json_object *r) {
        set_field(r, "architectures", types({arch}));
        if (more)
            more(r);
    };
}

static void test_families_config(TinySpec s) {
    s.layers = 3;
    ModelConfig c;
    // Llama: no q/k norm, biases as the config says, head_dim and
    // max_position_embeddings from LlamaConfig's defaults, no window.
    EXPECT_OK(config_with(s, as_family("LlamaForCausalLM", [](json_object *r) {
                              json_object_object_del(r, "head_dim");
                              json_object_object_del(r, "max_position_embeddings");
                              set_field(r, "attention_bias", json_object_new_boolean(1));
                              set_field(r, "mlp_bias", json_object_new_boolean(1));
                              set_field(r, "sliding_window", json_object_new_int(4));
                          }),
                          "cfg_fam", &c));
    EXPECT(c.architecture == "LlamaForCausalLM" && !c.qk_norm && c.qkv_bias && c.o_bias &&
           c.mlp_bias);
    EXPECT(c.head_dim == s.hidden / s.heads && c.max_position_embeddings == 2048);
    EXPECT(c.sliding_window == 0);
    {
        TensorMap w;
        EXPECT_OK(load_weights(g_tmp + "/cfg_fam", w));
        EXPECT_ERR(check_weights(c, w), "missing tensor model.layers.0.self_attn.q_proj.bias");
    }
    EXPECT_ERR(config_with(s, as_family("LlamaForCausalLM", [](json_object *r) {
                               set_field(r, "mlp_bias", json_object_new_string("yes"));
                           }),
                           "cfg_fam"),
               "mlp_bias", "boolean");
    // Mistral: its window on every layer, 4096 when absent, none when null.
    EXPECT_OK(config_with(s, as_family("MistralForCausalLM", [](json_object *r) {
                              json_object_object_del(r, "sliding_window");
                              json_object_object_del(r, "max_position_embeddings");
                          }),
                          "cfg_fam", &c));
    EXPECT(c.sliding_window == 4096 && c.layer_sliding == std::vector<uint8_t>({1, 1, 1}));
    EXPECT(!c.qk_norm && !c.qkv_bias && !c.o_bias && c.max_position_embeddings == 4096 * 32);
    EXPECT_OK(config_with(s, as_family("MistralForCausalLM", [](json_object *r) {
                              set_field(r, "sliding_window", json_object_new_int(7));
                              // Mistral reads no layer_types (transformers ignores them).
                              set_field(r, "layer_types",
                                        types({"full_attention", "full_attention",
                                               "full_attention"}));
                          }),
                          "cfg_fam", &c));
    EXPECT(c.sliding_window == 7 && c.layer_sliding == std::vector<uint8_t>({1, 1, 1}));
    EXPECT_OK(config_with(s, as_family("MistralForCausalLM", [](json_object *r) {
                              set_field(r, "sliding_window", nullptr);
                          }),
                          "cfg_fam", &c));
    EXPECT(c.sliding_window == 0 && c.layer_sliding == std::vector<uint8_t>({0, 0, 0}));
    // Qwen2: q/k/v biases (always), the hybrid layers as Qwen3's.
    EXPECT_OK(config_with(s, as_family("Qwen2ForCausalLM", [](json_object *r) {
                              set_field(r, "use_sliding_window", json_object_new_boolean(1));
                              set_field(r, "sliding_window", json_object_new_int(5));
                              set_field(r, "max_window_layers", json_object_new_int(1));
                              json_object_object_del(r, "layer_types");
                          }),
                          "cfg_fam", &c));
    EXPECT(!c.qk_norm && c.qkv_bias && !c.o_bias && !c.mlp_bias);
    EXPECT(c.sliding_window == 5 && c.layer_sliding == std::vector<uint8_t>({0, 1, 1}));
    // Two families at once.
    EXPECT_ERR(config_with(s, [](json_object *r) {
                   set_field(r, "architectures", types({"LlamaForCausalLM", "Qwen2ForCausalLM"}));
               },
               "cfg_fam"),
               "architectures names both", "LlamaForCausalLM");
}

static void test_rope_config(TinySpec s) {
    ModelConfig c;
    auto rope = [&](const char *json) {
        return as_family("LlamaForCausalLM", [=](json_object *r) {
            json_object_object_del(r, "rope_theta");
            set_field(r, "max_position_embeddings", json_object_new_int(256));
            set_field(r, "rope_parameters", json_tokener_parse(json));
        });
    };
    EXPECT_OK(config_with(s, rope(R"({"rope_type": "llama3", "factor": 8.0,
        "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 64, "rope_theta": 500000.0})"),
                          "cfg_rope", &c));
    EXPECT(c.rope.type == "llama3" && c.rope.factor == 8.0 && c.rope_theta == 500000.0 &&
           c.rope.original_max_position_embeddings == 64);
    // yarn: factor null = max_position_embeddings / original; attention
    // factor 0.1 ln(factor) + 1 unless given.
    EXPECT_OK(config_with(s, rope(R"({"rope_type": "yarn", "factor": null,
        "original_max_position_embeddings": 64})"),
                          "cfg_rope", &c));
    EXPECT(c.rope.factor == 4.0 && std::abs(c.rope.attention_factor - (0.1 * std::log(4.0) + 1)) <
                                        1e-15);
    EXPECT(c.rope.original_max_position_embeddings == 64 && c.rope.beta_fast == 32);
    // original_max_position_embeddings defaults to max_position_embeddings.
    EXPECT_OK(config_with(s, rope(R"({"rope_type": "yarn", "factor": 2.0})"), "cfg_rope", &c));
    EXPECT(c.rope.original_max_position_embeddings == 256);
    // longrope: a factor per frequency (head_dim / 2 of each).
    const int64_t half = s.head_dim / 2;
    std::string f = "[";
    for (int64_t i = 0; i < half; i++)
        f += (i ? ", " : "") + std::to_string(1 + i);
    f += "]";
    const std::string lr = R"({"rope_type": "longrope", "original_max_position_embeddings": 64,
        "short_factor": )" + f + R"(, "long_factor": )" + f + "}";
    EXPECT_OK(config_with(s, rope(lr.c_str()), "cfg_rope", &c));
    EXPECT(int64_t(c.rope.short_factor.size()) == half && c.rope.factor == 4.0);
    EXPECT(std::abs(c.rope.attention_factor - std::sqrt(1 + std::log(4.0) / std::log(64.0))) <
           1e-15);
    EXPECT_ERR(config_with(s, rope(R"({"rope_type": "longrope", "short_factor": [1.0],
        "long_factor": [1.0]})"),
                           "cfg_rope"),
               "short_factor", "head_dim / 2");
    EXPECT_ERR(config_with(s, rope(R"({"rope_type": "linear", "factor": -2})"), "cfg_rope"),
               "factor", "positive");
    EXPECT_ERR(config_with(s, rope(R"({"rope_type": "llama3", "factor": 8.0,
        "low_freq_factor": 2.0, "high_freq_factor": 2.0})"),
                           "cfg_rope"),
               "high_freq_factor equals low_freq_factor");
    EXPECT_ERR(config_with(s, rope(R"({"rope_type": 3})"), "cfg_rope"), "rope_type",
               "must be a string");
    EXPECT_ERR(config_with(s, rope(R"({"rope_type": "default", "partial_rotary_factor": 0.5})"),
                           "cfg_rope"),
               "partial_rotary_factor", "not supported");
    // rope_scaling (the older name) is what transformers takes when both are given.
    EXPECT_OK(config_with(s, as_family("LlamaForCausalLM", [](json_object *r) {
                              set_field(r, "rope_scaling",
                                        json_tokener_parse(R"({"type": "linear", "factor": 3})"));
                          }),
                          "cfg_rope", &c));
    EXPECT(c.rope.type == "linear" && c.rope.factor == 3.0);
}

static void test_config() {
    TinySpec s;
    const char *required[] = {"architectures",       "vocab_size",        "hidden_size",
                              "intermediate_size",   "num_hidden_layers", "num_attention_heads",
                              "num_key_value_heads", "head_dim",          "rms_norm_eps"};
    for (const char *f : required)
        EXPECT_ERR(config_with(
                       s, [&](json_object *r) { json_object_object_del(r, f); }, "cfg"),
                   "missing field", f);
    // Ill-typed.
    const char *ints[] = {"vocab_size", "hidden_size", "num_hidden_layers", "head_dim"};
    for (const char *f : ints) {
        EXPECT_ERR(
            config_with(
                s,
                [&](json_object *r) { json_object_object_add(r, f, json_object_new_string("32")); },
                "cfg"),
            f, "integer");
        EXPECT_ERR(
            config_with(
                s,
                [&](json_object *r) { json_object_object_add(r, f, json_object_new_double(32.0)); },
                "cfg"),
            f, "integer");
        EXPECT_ERR(config_with(
                       s, [&](json_object *r) { json_object_object_add(r, f, nullptr); }, "cfg"),
                   f, "integer");
        EXPECT_ERR(
            config_with(
                s, [&](json_object *r) { json_object_object_add(r, f, json_object_new_int(0)); },
                "cfg"),
            f, "positive");
        EXPECT_ERR(
            config_with(
                s, [&](json_object *r) { json_object_object_add(r, f, json_object_new_int(-3)); },
                "cfg"),
            f, "positive");
    }
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object_object_add(r, "hidden_size", json_object_new_int64(INT64_MAX));
                   },
                   "cfg"),
               "hidden_size", "large");
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object_object_add(r, "rms_norm_eps", json_object_new_string("1e-6"));
                   },
                   "cfg"),
               "rms_norm_eps", "number");
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object_object_add(r, "rms_norm_eps", json_object_new_double(-1e-6));
                   },
                   "cfg"),
               "rms_norm_eps", "positive");
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object_object_add(r, "tie_word_embeddings", json_object_new_int(1));
                   },
                   "cfg"),
               "tie_word_embeddings", "boolean");
    // Integer-valued rms_norm_eps / rope_theta are numbers too.
    EXPECT_OK(config_with(
        s,
        [&](json_object *r) {
            json_object_object_add(r, "rope_theta", json_object_new_int(10000));
        },
        "cfg"));
    // Sanity.
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object_object_add(r, "num_key_value_heads", json_object_new_int(3));
                   },
                   "cfg"),
               "num_attention_heads", "multiple", "num_key_value_heads");
    EXPECT_ERR(
        config_with(
            s,
            [&](json_object *r) { json_object_object_add(r, "head_dim", json_object_new_int(7)); },
            "cfg"),
        "head_dim", "even");
    // Architecture.
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object *a = json_object_new_array();
                       json_object_array_add(a, json_object_new_string("GPT2LMHeadModel"));
                       json_object_object_add(r, "architectures", a);
                   },
                   "cfg"),
               "unsupported architecture", "GPT2LMHeadModel", "bosch.hf");
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object *a = json_object_new_array();
                       json_object_array_add(a, json_object_new_string("Qwen2MoeForCausalLM"));
                       json_object_object_add(r, "architectures", a);
                   },
                   "cfg"),
               "Qwen2MoeForCausalLM",
               "supported: Qwen3ForCausalLM, Qwen3MoeForCausalLM, Qwen2ForCausalLM, "
               "LlamaForCausalLM, MistralForCausalLM");
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object_object_add(r, "architectures",
                                              json_object_new_string("Qwen3ForCausalLM"));
                   },
                   "cfg"),
               "architectures", "array");
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object_object_add(r, "architectures", json_object_new_array());
                   },
                   "cfg"),
               "unsupported architecture");
    // tie_word_embeddings absent: false.
    {
        std::string dir = subdir("cfg_tie");
        TinySpec t;
        t.tie = true;
        EXPECT_OK(write_tiny_qwen3(dir, t));
        ModelConfig c;
        EXPECT_OK(load_config(dir, c));
        EXPECT(c.tie_word_embeddings);
        EXPECT_OK(config_with(
            t, [&](json_object *r) { json_object_object_del(r, "tie_word_embeddings"); }, "cfg"));
        std::string d2 = g_tmp + "/cfg";
        EXPECT_OK(load_config(d2, c));
        EXPECT(!c.tie_word_embeddings);
        // ...and then lm_head is required.
        TensorMap w;
        EXPECT_OK(load_weights(d2, w));
        EXPECT_ERR(check_weights(c, w), "missing tensor lm_head.weight", "[64, 32]");
    }
    // RoPE styles.
    TinySpec n;
    n.rope_style_new = true;
    n.rope_theta = 5e5;
    {
        std::string dir = subdir("cfg_new");
        EXPECT_OK(write_tiny_qwen3(dir, n));
        ModelConfig c;
        EXPECT_OK(load_config(dir, c));
        EXPECT(c.rope_theta == 5e5);
    }
    EXPECT_ERR(config_with(
                   n,
                   [&](json_object *r) {
                       json_object_object_add(r, "rope_theta", json_object_new_double(10000.0));
                   },
                   "cfg"),
               "rope_theta", "conflicts");
    EXPECT_OK(config_with(
        n,
        [&](json_object *r) {
            json_object_object_add(r, "rope_theta", json_object_new_double(5e5));
        },
        "cfg"));
    // No rope_theta anywhere: transformers' default_theta, 10000.
    {
        ModelConfig c;
        EXPECT_OK(config_with(
            n,
            [&](json_object *r) {
                json_object *p = nullptr;
                json_object_object_get_ex(r, "rope_parameters", &p);
                json_object_object_del(p, "rope_theta");
            },
            "cfg"));
        EXPECT_OK(load_config(g_tmp + "/cfg", c));
        EXPECT(c.rope_theta == 10000.0);
    }
    // yarn reads its factor (null: the positions' ratio).
    EXPECT_ERR(config_with(
                   n,
                   [&](json_object *r) {
                       json_object *p = nullptr;
                       json_object_object_get_ex(r, "rope_parameters", &p);
                       json_object_object_add(p, "rope_type", json_object_new_string("yarn"));
                   },
                   "cfg"),
               "rope_parameters", "yarn", "needs factor");
    EXPECT_ERR(config_with(
                   n,
                   [&](json_object *r) {
                       json_object_object_add(r, "rope_parameters", json_object_new_int(3));
                   },
                   "cfg"),
               "rope_parameters", "object");
    // rope_scaling: null / default accepted, others refused by name.
    auto scaling = [&](const char *key, const char *type) {
        return [=](json_object *r) {
            json_object *o = json_object_new_object();
            json_object_object_add(o, key, json_object_new_string(type));
            json_object_object_add(o, "factor", json_object_new_double(4.0));
            json_object_object_add(r, "rope_scaling", o);
        };
    };
    EXPECT_OK(config_with(s, scaling("rope_type", "default"), "cfg"));
    EXPECT_OK(config_with(s, scaling("type", "default"), "cfg"));
    // The types transformers implements (rope.cpp) are read with their
    // parameters; a missing one is named; other types are refused by name.
    for (const char *t : {"yarn", "linear", "dynamic"}) {
        EXPECT_OK(config_with(s, scaling("rope_type", t), "cfg"));
        EXPECT_OK(config_with(s, scaling("type", t), "cfg"));
        ModelConfig c;
        EXPECT_OK(load_config(g_tmp + "/cfg", c));
        EXPECT(c.rope.type == t && c.rope.factor == 4.0);
    }
    EXPECT_ERR(config_with(s, scaling("rope_type", "llama3"), "cfg"), "rope_scaling", "llama3",
               "low_freq_factor");
    EXPECT_ERR(config_with(s, scaling("type", "longrope"), "cfg"), "rope_scaling",
               "short_factor");
    for (const char *t : {"proportional", "su", "mrope"})
        EXPECT_ERR(config_with(s, scaling("rope_type", t), "cfg"), "rope_scaling", t,
                   "not supported");
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object *o = json_object_new_object();
                       json_object_object_add(o, "factor", json_object_new_double(4.0));
                       json_object_object_add(r, "rope_scaling", o);
                   },
                   "cfg"),
               "rope_scaling");
    // Unimplemented features.
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object_object_add(r, "hidden_act", json_object_new_string("gelu"));
                   },
                   "cfg"),
               "hidden_act", "gelu");
    // Qwen3's attention_bias: biases on q, k, v and o, which the weights must then hold.
    {
        ModelConfig c;
        EXPECT_OK(config_with(
            s,
            [&](json_object *r) {
                json_object_object_add(r, "attention_bias", json_object_new_boolean(1));
            },
            "cfg"));
        EXPECT_OK(load_config(g_tmp + "/cfg", c));
        EXPECT(c.qk_norm && c.qkv_bias && c.o_bias && !c.mlp_bias);
        TensorMap w;
        EXPECT_OK(load_weights(g_tmp + "/cfg", w));
        EXPECT_ERR(check_weights(c, w), "missing tensor model.layers.0.self_attn.q_proj.bias");
    }
    EXPECT_ERR(config_with(
                   s,
                   [&](json_object *r) {
                       json_object_object_add(r, "attention_bias", json_object_new_int(1));
                   },
                   "cfg"),
               "attention_bias", "boolean");
    // Hybrid configs as transformers' Qwen3Config reads them.
    test_hybrid_config(s);
    test_families_config(s);
    test_rope_config(s);
    // Not JSON / not an object / absent.
    {
        std::string dir = subdir("cfg_bad");
        EXPECT_OK(write_tiny_qwen3(dir, s));
        ModelConfig c;
        EXPECT_OK(write_file(dir + "/config.json", "{\"architectures\": [\"Qwen3ForCausalLM\"],"));
        EXPECT_ERR(load_config(dir, c), "config.json", "invalid JSON");
        EXPECT_OK(write_file(dir + "/config.json", "[]"));
        EXPECT_ERR(load_config(dir, c), "config.json", "object");
        EXPECT_OK(write_file(dir + "/config.json", ""));
        EXPECT_ERR(load_config(dir, c), "config.json", "invalid JSON");
        remove_tree(dir + "/config.json");
        EXPECT_ERR(load_config(dir, c), "config.json");
    }
}

static void test_weights_check() {
    TinySpec s;
    s.layers = 2;
    std::string dir = subdir("chk");
    TensorMap w;
    EXPECT_OK(write_tiny_qwen3(dir, s, &w));
    ModelConfig c;
    EXPECT_OK(load_config(dir, c));
    EXPECT_OK(check_weights(c, w));
    // Missing tensor.
    TensorMap m = w;
    m.erase("model.layers.1.mlp.up_proj.weight");
    EXPECT_ERR(check_weights(c, m), "missing tensor model.layers.1.mlp.up_proj.weight", "[64, 32]");
    m.erase("model.norm.weight");
    EXPECT_ERR(check_weights(c, m), "and 1 more");
    // Wrong shape.
    m = w;
    m["model.layers.0.self_attn.k_proj.weight"] = torch::zeros({8, 32});
    EXPECT_ERR(check_weights(c, m), "model.layers.0.self_attn.k_proj.weight", "[8, 32]",
               "expected [16, 32]");
    m = w;
    m["model.layers.1.self_attn.q_norm.weight"] = torch::zeros({8, 1});
    EXPECT_ERR(check_weights(c, m), "q_norm", "[8, 1]", "expected [8]");
    // Tied: lm_head optional, but a present one must have the right shape.
    ModelConfig ct = c;
    ct.tie_word_embeddings = true;
    m = w;
    m.erase("lm_head.weight");
    EXPECT_OK(check_weights(ct, m));
    EXPECT_ERR(check_weights(c, m), "lm_head.weight");
    m["lm_head.weight"] = torch::zeros({32, 64});
    EXPECT_ERR(check_weights(ct, m), "lm_head.weight", "expected [64, 32]");
    // A config with more layers than the weights.
    ModelConfig c3 = c;
    c3.num_hidden_layers = 3;
    EXPECT_ERR(check_weights(c3, w), "model.layers.2.");
    // A config claiming millions of layers is refused at once, without a
    // list of the tensors it would need.
    ModelConfig huge = c;
    huge.num_hidden_layers = 16777216;
    EXPECT_ERR(check_weights(huge, w), "num_hidden_layers 16777216", "model.layers.2.* is missing");
    // The parameters a config implies equal the tensors' elements; a config
    // implying more than the memory is refused before any tensor is read,
    // naming the fields of its largest term and the limit.
    {
        double elements = 0;
        for (const auto &kv : w)
            elements += double(kv.second.numel());
        EXPECT(implied_parameters(c) == elements);
        EXPECT_OK(check_memory(c, 2 * elements));
        EXPECT_ERR(check_memory(c, 2 * elements - 1), "parameters", "GiB of memory");
        EXPECT_ERR(check_memory(huge, 64.0 * (1 << 30)), "num_hidden_layers 16777216",
                   "more than the 64 GiB");
        ModelConfig wide = c;
        wide.vocab_size = int64_t(1) << 24;
        wide.hidden_size = int64_t(1) << 20;
        EXPECT_ERR(check_memory(wide, 64.0 * (1 << 30)), "vocab_size 16777216 x hidden_size");
    }
    // A config with fewer layers than the weights contradicts them.
    ModelConfig c1 = c;
    c1.num_hidden_layers = 1;
    EXPECT_ERR(check_weights(c1, w), "num_hidden_layers 1", "model.layers.1",
               "contradicts the checkpoint");
    // Non-finite weights are named at load.
    for (float bad : {NAN, INFINITY, -INFINITY}) {
        m = w;
        m["model.layers.1.mlp.down_proj.weight"] = m["model.layers.1.mlp.down_proj.weight"].clone();
        m["model.layers.1.mlp.down_proj.weight"][3][5] = bad;
        EXPECT_ERR(check_weights(c, m), "tensor model.layers.1.mlp.down_proj.weight",
                   "NaN or infinite");
    }
    // Extra tensors are ignored.
    m = w;
    m["model.layers.0.self_attn.rotary_emb.inv_freq"] = torch::zeros({4});
    EXPECT_OK(check_weights(c, m));
    // Non-float tensor.
    m = w;
    m["model.norm.weight"] = torch::zeros({32}, torch::kInt64);
    EXPECT_ERR(check_weights(c, m), "model.norm.weight", "floating");

    // Through load_weights: a file with a wrong shape is caught by check_weights.
    m = w;
    m["model.embed_tokens.weight"] = torch::zeros({63, 32});
    EXPECT_OK(write_safetensors(dir + "/model.safetensors", m));
    TensorMap lw;
    EXPECT_OK(load_weights(dir, lw));
    EXPECT_ERR(check_weights(c, lw), "model.embed_tokens.weight", "[63, 32]", "[64, 32]");
}

static void test_index() {
    TinySpec s;
    s.shards = 3;
    s.dtype = torch::kFloat16;
    std::string dir = subdir("idx");
    EXPECT_OK(write_tiny_qwen3(dir, s));
    const std::string index = read_file(dir + "/model.safetensors.index.json");
    EXPECT(index.find("model-00003-of-00003.safetensors") != std::string::npos);
    TensorMap w;
    ModelConfig c;
    EXPECT_OK(load_all(dir, c, w));

    auto with_index = [&](const std::string &text) {
        EXPECT_OK(write_file(dir + "/model.safetensors.index.json", text));
        TensorMap out;
        std::string e = load_weights(dir, out);
        if (!e.empty() && !out.empty())
            e += " [BUG: map not empty after an error]";
        return e;
    };
    auto replace = [&](std::string text, const std::string &from, const std::string &to) {
        size_t p = text.find(from);
        if (p != std::string::npos)
            text.replace(p, from.size(), to);
        return text;
    };
    // Shard missing on disk.
    EXPECT_ERR(with_index(replace(index, "model-00002-of-00003", "model-00009-of-00003")),
               "model-00009-of-00003.safetensors", "missing");
    // Paths escaping the directory.
    EXPECT_ERR(with_index(replace(index, "model-00002-of-00003", "../idx/model-00002-of-00003")),
               "..", "refused");
    EXPECT_ERR(with_index(replace(index, "model-00002-of-00003", "sub/../../x")), "refused");
    EXPECT_ERR(
        with_index(replace(index, "\"model-00002-of-00003", "\"" + dir + "/model-00002-of-00003")),
        "absolute");
    EXPECT_ERR(with_index(replace(index, "\"model-00002-of-00003.safetensors\"", "\"\"")),
               "refused");
    EXPECT_ERR(with_index(replace(index, "\"model-00002-of-00003.safetensors\"", "7")),
               "file name");
    // A subdirectory inside the checkpoint is fine.
    {
        std::string sub = dir + "/sub";
        EXPECT(make_dirs(sub).empty());
        EXPECT(copy_file(dir + "/model-00002-of-00003.safetensors",
                                   sub + "/model-00002-of-00003.safetensors").empty());
        std::string t = index;
        for (;;) {
            size_t p = t.find("\"model-00002-of-00003");
            if (p == std::string::npos)
                break;
            t.replace(p, 1, "\"sub/");
        }
        EXPECT_OK(with_index(t));
    }
    // Tensor listed in the index but absent from its shard.
    EXPECT_ERR(with_index(replace(index, "\"weight_map\": {",
                                  "\"weight_map\": {\n    \"model.extra.weight\": "
                                  "\"model-00001-of-00003.safetensors\",")),
               "model.extra.weight", "missing from shard model-00001-of-00003.safetensors");
    // Malformed index.
    EXPECT_ERR(with_index("{\"metadata\": {}}"), "weight_map");
    EXPECT_ERR(with_index("{\"weight_map\": []}"), "weight_map");
    EXPECT_ERR(with_index("{\"weight_map\": {}}"), "empty");
    EXPECT_ERR(with_index("{\"weight_map\": {"), "index.json", "invalid JSON");
    // A corrupt shard is reported with its path.
    EXPECT_OK(with_index(index));
    EXPECT_OK(write_file(dir + "/model-00003-of-00003.safetensors",
                         std::string("\x10\0\0\0\0\0\0\0{}", 10)));
    EXPECT_ERR(with_index(index), "model-00003-of-00003.safetensors", "header length");
    // Neither file.
    std::string empty = subdir("idx_none");
    EXPECT(make_dirs(empty).empty());
    TensorMap out;
    EXPECT_ERR(load_weights(empty, out), "no model.safetensors");
}

// A key given twice (json-c alone keeps the last value): config.json, a
// safetensors header, the index's weight_map; named with its line, also
// when the two spellings differ but decode alike.
static void test_duplicate_keys() {
    TinySpec s;
    std::string dir = subdir("dup");
    EXPECT_OK(write_tiny_qwen3(dir, s));
    std::string cfg = tiny_config_json(s);
    EXPECT(cfg.size() > 2 && cfg[0] == '{');
    EXPECT_OK(write_file(dir + "/config.json", "{\"head_dim\": 4,\n" + cfg.substr(1)));
    ModelConfig c;
    EXPECT_ERR(load_config(dir, c), "config.json: line ", "key \"head_dim\" is given twice",
               "(give each key once)");
    EXPECT_OK(write_file(dir + "/config.json", "{\"\\u0068ead_dim\": 4,\n" + cfg.substr(1)));
    EXPECT_ERR(load_config(dir, c), "key \"head_dim\" is given twice");

    const std::string data16(16, '\x01');
    const std::string twice = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                              "\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}";
    EXPECT_ERR(read_st(st_bytes(twice, data16)), "header: line 1: key \"w\" is given twice");

    TinySpec sh;
    sh.shards = 2;
    std::string idx = subdir("dup_idx");
    EXPECT_OK(write_tiny_qwen3(idx, sh));
    std::string index = read_file(idx + "/model.safetensors.index.json");
    size_t at = index.find("\"weight_map\": {");
    EXPECT(at != std::string::npos);
    index.insert(at + 15, "\n    \"model.norm.weight\": \"model-00001-of-00002.safetensors\",");
    EXPECT_OK(write_file(idx + "/model.safetensors.index.json", index));
    TensorMap w;
    EXPECT_ERR(load_weights(idx, w), "model.safetensors.index.json: line ",
               "key \"model.norm.weight\" is given twice");
}

int main() {
    g_tmp = make_temp_dir("ckpt");
    try {
        test_round_trips();
        test_safetensors_basic();
        test_safetensors_malformed();
        test_truncation_and_fuzz();
        test_config();
        test_weights_check();
        test_index();
        test_duplicate_keys();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "exception: %s\n", e.what());
        g_failures++;
    }
    remove_tree(g_tmp);
    std::printf("test_checkpoint: %d checks, %d failures\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
}
