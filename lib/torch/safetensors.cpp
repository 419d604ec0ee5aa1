// safetensors reader (single file and sharded index) and the weight check.
//
// Format: 8-byte little-endian header length N, N bytes of JSON
//   {name: {"dtype": str, "shape": [int...], "data_offsets": [begin, end]},
//    "__metadata__": {str: str}?}
// then the data section; offsets are relative to its start. Every field is
// validated before a byte of data is read, and data are read with pread into
// freshly allocated tensors, so a malformed or truncated file yields an error
// and can never cause a read outside the file.
#include "checkpoint.hpp"
#include "json_util.hpp"
#include "model.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace bosch_torch {
namespace {

using jsonu::JsonPtr;

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data are little-endian; this reader assumes a little-endian host"
#endif

const uint64_t kHeaderCap = 100u << 20; // the reference implementation's limit (100 MB)
const size_t kIndexCap = 64u << 20;     // model.safetensors.index.json
const size_t kMaxRank = 16;

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0)
            ::close(fd);
    }
};

std::string pread_all(int fd, void *dst, uint64_t len, uint64_t off, const std::string &path) {
    char *p = static_cast<char *>(dst);
    while (len > 0) {
        size_t chunk = len > (uint64_t(1) << 30) ? (size_t(1) << 30) : (size_t)len;
        ssize_t r = ::pread(fd, p, chunk, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return "cannot read " + path + ": " + std::strerror(errno);
        if (r == 0)
            return path + ": unexpected end of file (file changed while reading?)";
        p += r;
        off += (uint64_t)r;
        len -= (uint64_t)r;
    }
    return "";
}

bool dtype_of(const std::string &s, torch::ScalarType &t, uint64_t &size) {
    if (s == "F32") {
        t = torch::kFloat32;
        size = 4;
    } else if (s == "BF16") {
        t = torch::kBFloat16;
        size = 2;
    } else if (s == "F16") {
        t = torch::kFloat16;
        size = 2;
    } else {
        return false;
    }
    return true;
}

std::string shape_str(const std::vector<int64_t> &s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); i++)
        r += (i ? ", " : "") + std::to_string(s[i]);
    return r + "]";
}

std::string shape_str(torch::IntArrayRef s) {
    return shape_str(std::vector<int64_t>(s.begin(), s.end()));
}

// Pre-validated description of one tensor.
struct Entry {
    std::string name;
    torch::ScalarType dtype;
    std::vector<int64_t> shape;
    uint64_t begin, end;
};

std::string parse_entry(const std::string &name, json_object *v, uint64_t data_size, Entry &e) {
    const std::string where = "tensor " + name + ": ";
    if (json_object_get_type(v) != json_type_object)
        return where + "entry must be an object (got " + jsonu::type_name(v) + ")";
    json_object *dt = nullptr, *shape = nullptr, *offs = nullptr;
    if (!json_object_object_get_ex(v, "dtype", &dt))
        return where + "missing dtype";
    if (!json_object_object_get_ex(v, "shape", &shape))
        return where + "missing shape";
    if (!json_object_object_get_ex(v, "data_offsets", &offs))
        return where + "missing data_offsets";
    if (!dt || json_object_get_type(dt) != json_type_string)
        return where + "dtype must be a string";
    uint64_t esize = 0;
    std::string dts = json_object_get_string(dt);
    if (!dtype_of(dts, e.dtype, esize))
        return where + "unsupported dtype \"" + dts + "\" (only F32, BF16 and F16)";
    if (!shape || json_object_get_type(shape) != json_type_array)
        return where + "shape must be an array";
    size_t rank = json_object_array_length(shape);
    if (rank > kMaxRank)
        return where + "shape has too many dimensions (" + std::to_string(rank) + ")";
    // The product of the non-zero dimensions, in bytes, must fit int64 even when a zero
    // dimension makes the tensor empty: libtorch computes strides from the sizes.
    uint64_t prod = 1;
    bool overflow = false, empty = false;
    e.shape.clear();
    for (size_t i = 0; i < rank; i++) {
        uint64_t d = 0;
        if (!jsonu::get_u64(json_object_array_get_idx(shape, i), d))
            return where + "shape entries must be non-negative integers";
        if (d > (uint64_t)INT64_MAX)
            return where + "shape entry too large";
        e.shape.push_back((int64_t)d);
        if (d == 0)
            empty = true;
        else if (prod > (uint64_t)INT64_MAX / d)
            overflow = true;
        else
            prod *= d;
    }
    if (overflow || prod > (uint64_t)INT64_MAX / esize)
        return where + "shape " + shape_str(e.shape) +
               " overflows (byte size does not fit 64 bits)";
    const uint64_t numel = empty ? 0 : prod;
    uint64_t nbytes = numel * esize;
    if (!offs || json_object_get_type(offs) != json_type_array ||
        json_object_array_length(offs) != 2)
        return where + "data_offsets must be an array [begin, end]";
    if (!jsonu::get_u64(json_object_array_get_idx(offs, 0), e.begin) ||
        !jsonu::get_u64(json_object_array_get_idx(offs, 1), e.end))
        return where + "data_offsets must be non-negative integers";
    if (e.end < e.begin)
        return where + "data_offsets end " + std::to_string(e.end) + " < begin " +
               std::to_string(e.begin);
    if (e.end > data_size)
        return where + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
               "] beyond the data section (" + std::to_string(data_size) +
               " bytes; file truncated?)";
    if (e.end - e.begin != nbytes)
        return where + "byte size " + std::to_string(e.end - e.begin) + " does not match " + dts +
               " shape " + shape_str(e.shape) + " (" + std::to_string(nbytes) + " bytes)";
    return "";
}

// Lexically safe relative path: non-empty, not absolute, no "..", no NUL.
bool safe_relative(const std::string &p) {
    if (p.empty() || p[0] == '/' || p.find('\0') != std::string::npos ||
        p.find('\\') != std::string::npos)
        return false;
    size_t i = 0;
    while (i <= p.size()) {
        size_t j = p.find('/', i);
        if (j == std::string::npos)
            j = p.size();
        std::string comp = p.substr(i, j - i);
        if (comp == "..")
            return false;
        i = j + 1;
    }
    return true;
}

bool is_file(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool exists(const std::string &path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

} // namespace

std::string read_safetensors(const std::string &path, TensorMap &out) {
    out.clear();
    Fd f;
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0)
        return "cannot open " + path + ": " + std::strerror(errno);
    struct stat st;
    if (::fstat(f.fd, &st) != 0)
        return "cannot stat " + path + ": " + std::strerror(errno);
    if (!S_ISREG(st.st_mode))
        return path + " is not a regular file";
    const uint64_t size = (uint64_t)st.st_size;
    if (size < 8)
        return path + ": truncated safetensors file (" + std::to_string(size) +
               " bytes, no header length)";
    unsigned char lenb[8];
    std::string err = pread_all(f.fd, lenb, 8, 0, path);
    if (!err.empty())
        return err;
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--)
        n = (n << 8) | lenb[i];
    if (n > size - 8)
        return path + ": header length " + std::to_string(n) + " exceeds the file size (" +
               std::to_string(size) + " bytes; truncated or not a safetensors file)";
    if (n > kHeaderCap)
        return path + ": header length " + std::to_string(n) + " exceeds the " +
               std::to_string(kHeaderCap) + "-byte limit";
    if (n < 2)
        return path + ": header too short (" + std::to_string(n) + " bytes)";
    std::string header((size_t)n, '\0');
    err = pread_all(f.fd, &header[0], n, 8, path);
    if (!err.empty())
        return err;
    JsonPtr root;
    err = jsonu::parse(header.data(), header.size(), root);
    if (!err.empty())
        return path + ": header: " + err;
    if (json_object_get_type(root.get()) != json_type_object)
        return path + ": header is not a JSON object";

    const uint64_t data_start = 8 + n;
    const uint64_t data_size = size - data_start;
    std::vector<Entry> entries;
    json_object_object_foreach(root.get(), key, val) {
        std::string name = key;
        if (name == "__metadata__") {
            if (json_object_get_type(val) != json_type_object &&
                json_object_get_type(val) != json_type_null)
                return path + ": __metadata__ must be an object";
            continue;
        }
        Entry e;
        err = parse_entry(name, val, data_size, e);
        if (!err.empty())
            return path + ": " + err;
        e.name = name;
        entries.push_back(std::move(e));
    }

    TensorMap result;
    for (const Entry &e : entries) {
        torch::Tensor t;
        try {
            t = torch::empty(e.shape, torch::TensorOptions().dtype(e.dtype));
        } catch (const std::exception &ex) {
            return path + ": tensor " + e.name + ": cannot allocate " + shape_str(e.shape) + ": " +
                   ex.what();
        }
        uint64_t nbytes = e.end - e.begin;
        if (nbytes > 0) {
            err = pread_all(f.fd, t.data_ptr(), nbytes, data_start + e.begin, path);
            if (!err.empty())
                return err;
        }
        result.emplace(e.name, std::move(t));
    }
    out.swap(result);
    return "";
}

std::string load_weights(const std::string &dir, TensorMap &out) {
    out.clear();
    const std::string single = dir + "/model.safetensors";
    const std::string index = dir + "/model.safetensors.index.json";
    // As transformers does: a single model.safetensors wins over an index.
    if (exists(single))
        return read_safetensors(single, out);
    if (!exists(index))
        return "no model.safetensors or model.safetensors.index.json in " + dir;

    std::string text;
    std::string err = jsonu::read_file(index, kIndexCap, text);
    if (!err.empty())
        return err;
    JsonPtr root;
    err = jsonu::parse(text.data(), text.size(), root);
    if (!err.empty())
        return index + ": " + err;
    json_object *wm = nullptr;
    if (json_object_get_type(root.get()) != json_type_object ||
        !json_object_object_get_ex(root.get(), "weight_map", &wm) ||
        json_object_get_type(wm) != json_type_object)
        return index + ": missing or ill-typed weight_map (an object "
                       "{tensor: shard file})";

    // shard file -> tensor names, in a stable order.
    std::map<std::string, std::vector<std::string>> shards;
    json_object_object_foreach(wm, key, val) {
        if (json_object_get_type(val) != json_type_string)
            return index + ": weight_map entry for " + key + " must be a file name";
        std::string file = json_object_get_string(val);
        if (!safe_relative(file))
            return index + ": shard path \"" + file + "\" (for " + key +
                   ") is not a plain relative path inside the checkpoint directory "
                   "(absolute or '..' paths are refused)";
        shards[file].push_back(key);
    }
    if (shards.empty())
        return index + ": weight_map is empty";
    for (const auto &s : shards)
        if (!is_file(dir + "/" + s.first))
            return index + ": shard " + s.first + " (holding " + s.second.front() + ") is missing";

    TensorMap result;
    for (const auto &s : shards) {
        TensorMap part;
        err = read_safetensors(dir + "/" + s.first, part);
        if (!err.empty())
            return err;
        for (const std::string &name : s.second) {
            auto it = part.find(name);
            if (it == part.end())
                return "tensor " + name + " is listed in model.safetensors.index.json but " +
                       "missing from shard " + s.first;
            result[name] = std::move(it->second);
        }
    }
    out.swap(result);
    return "";
}

std::string check_weights(const ModelConfig &cfg, const TensorMap &w) {
    const int64_t V = cfg.vocab_size, H = cfg.hidden_size;
    static const std::string pre = "model.layers.";
    // The layer count against the weights first (before the list below,
    // which a config claiming millions of layers would make huge): weights
    // of layers the config lacks would be dropped silently, layers the
    // weights lack cannot run.
    int64_t top = -1;
    for (const auto &kv : w) {
        const std::string &n = kv.first;
        if (n.compare(0, pre.size(), pre) != 0)
            continue;
        char *end = nullptr;
        long long l = std::strtoll(n.c_str() + pre.size(), &end, 10);
        if (end != n.c_str() + pre.size() && *end == '.' && l > top)
            top = l;
    }
    if (top + 1 != cfg.num_hidden_layers)
        return "config.json says num_hidden_layers " + std::to_string(cfg.num_hidden_layers) +
               " but the weights hold " +
               (top < 0 ? std::string("no layers")
                        : "layers up to model.layers." + std::to_string(top)) +
               (top + 1 < cfg.num_hidden_layers
                    ? " (model.layers." + std::to_string(top + 1) + ".* is missing)"
                    : std::string(" (the config contradicts the checkpoint)"));
    std::vector<std::pair<std::string, std::vector<int64_t>>> need;
    need.push_back({"model.embed_tokens.weight", {V, H}});
    for (int64_t l = 0; l < cfg.num_hidden_layers; l++) {
        const std::string p = pre + std::to_string(l) + ".";
        for (const LayerTensor &t : layer_tensors(cfg, l))
            need.push_back({p + t.name, t.shape});
    }
    need.push_back({"model.norm.weight", {H}});
    // Tied checkpoints usually omit lm_head; if one is present it must still have the right shape.
    if (!cfg.tie_word_embeddings || w.count("lm_head.weight"))
        need.push_back({"lm_head.weight", {V, H}});

    size_t missing = 0;
    std::string first_missing, first_missing_shape;
    for (const auto &n : need) {
        auto it = w.find(n.first);
        if (it == w.end()) {
            if (missing++ == 0) {
                first_missing = n.first;
                first_missing_shape = shape_str(n.second);
            }
            continue;
        }
        const torch::Tensor &t = it->second;
        if (!t.defined())
            return "tensor " + n.first + " is undefined";
        if (t.sizes() != torch::IntArrayRef(n.second))
            return "tensor " + n.first + " has shape " + shape_str(t.sizes()) + ", expected " +
                   shape_str(n.second);
        if (!t.is_floating_point())
            return "tensor " + n.first + " is not floating point (" +
                   std::string(c10::toString(t.scalar_type())) + ")";
    }
    if (missing)
        return "missing tensor " + first_missing + " (expected shape " + first_missing_shape + ")" +
               (missing > 1 ? " and " + std::to_string(missing - 1) + " more" : std::string());
    // A layer tensor the config does not read: the checkpoint is of another
    // family (Qwen3's q_norm under a Llama config) or another layout, and
    // dropping it would run another model than the one trained. RoPE's
    // stored inv_freq buffers (older Llama checkpoints) are recomputed, as
    // transformers ignores them.
    {
        std::set<std::string> known;
        for (const auto &n : need)
            known.insert(n.first);
        for (const auto &kv : w) {
            const std::string &n = kv.first;
            static const std::string inv = "rotary_emb.inv_freq";
            if (n.compare(0, pre.size(), pre) != 0 || known.count(n) ||
                (n.size() > inv.size() && n.compare(n.size() - inv.size(), inv.size(), inv) == 0))
                continue;
            return "tensor " + n + " is not read by " +
                   (cfg.architecture.empty() ? std::string("this config") : cfg.architecture) +
                   " as config.json describes it (is the architecture the checkpoint's?)";
        }
    }

    // Non-finite weights, named now rather than as a NaN score later. A sum
    // in f64 is non-finite exactly when a NaN or an infinity is in it (the
    // magnitudes of real weights cannot overflow it) and needs no temporary
    // of the tensor's size.
    for (const auto &n : need) {
        const torch::Tensor &t = w.at(n.first);
        if (t.numel() && !std::isfinite(t.sum(torch::kFloat64).item<double>()))
            return "tensor " + n.first + " holds NaN or infinite values";
    }
    return "";
}

} // namespace bosch_torch
