// Tasks: the synthetic needle-in-a-haystack generator and JSON Lines I/O.
#include "tasks.hpp"

#include "failure.hpp"

#include "base/prng_steps.h"
#include "util/json_dup.h"
#include "util/read_file.h"

#include <json-c/json.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <set>

namespace bosch_torch {

namespace {

// Sanity caps: a prompt or answer longer than this is not a task for a
// language model of today, and the product samples x tokens must fit memory.
const uint64_t kMaxTokens = uint64_t(1) << 26;       // per prompt or answer
const uint64_t kMaxTaskTokens = uint64_t(1) << 32;   // whole task

// splitmix64: a small, portable generator so that a seed gives the same task
// on every platform and standard library (std:: distributions do not).
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next() { return bosch_splitmix64(&s); }
    // Uniform in [0, n), n >= 1, without modulo bias.
    uint64_t below(uint64_t n) {
        const uint64_t threshold = (0 - n) % n; // 2^64 mod n
        for (;;) {
            uint64_t r = next();
            if (r >= threshold)
                return r % n;
        }
    }
    // Uniform in [0, 1).
    double unit() { return bosch_unit_double(next()); }
};

} // namespace

// Layout of one NIAH sample (all counts in tokens):
//   filler = context - needles * (key_len + value_len + 2) - (key_len + 2)
// filler tokens, uniform in [3, vocab), with the needles "KEY k.. VAL v.."
// inserted between them, and the query "QRY k.. VAL" of one needle (chosen
// uniformly) at the end; the answer is that needle's value tokens. Needle i
// is placed after floor(d_i * filler) filler tokens, d_i uniform in
// [depth_min, depth_max]: its depth is that fraction of the haystack (the
// needles themselves not counted), so needles never overlap and their order
// follows their depths. The keys of one sample's needles are distinct (the
// query is never ambiguous); key and value tokens are uniform in [3, vocab).
// Random draws per sample, in order: the needles' keys then values, the
// depths, the filler tokens, the queried needle.
Task make_niah(const NiahParams &p) {
    const bool ids = !p.filler.empty();
    const int32_t KEY = ids ? p.key_marker : 0, VAL = ids ? p.value_marker : 1,
                  QRY = ids ? p.query_marker : 2;
    if (ids) {
        if (KEY < 0 || VAL < 0 || QRY < 0)
            invalid("niah: marker ids must not be negative");
        if (KEY == VAL || KEY == QRY || VAL == QRY)
            invalid("niah: the three marker ids must differ");
        std::vector<int32_t> sorted(p.filler);
        std::sort(sorted.begin(), sorted.end());
        if (sorted.front() < 0)
            invalid("niah: filler id " + std::to_string(sorted.front()) + " is negative");
        for (size_t i = 1; i < sorted.size(); i++)
            if (sorted[i] == sorted[i - 1])
                invalid("niah: filler id " + std::to_string(sorted[i]) + " is listed twice");
        for (int32_t m : {KEY, VAL, QRY})
            if (std::binary_search(sorted.begin(), sorted.end(), m))
                invalid("niah: marker id " + std::to_string(m) + " is also a filler id");
    } else if (p.vocab < 4 || p.vocab > uint32_t(INT32_MAX)) {
        invalid("niah: vocab must be in [4, 2^31-1] (ids 0..2 are markers, fillers need more)");
    }
    if (p.samples == 0 || p.needles == 0 || p.key_len == 0 || p.value_len == 0)
        invalid("niah: samples, needles, key_len and value_len must be positive");
    if (!(p.depth_min >= 0.0) || !(p.depth_max <= 1.0) || !(p.depth_min <= p.depth_max))
        invalid("niah: need 0 <= depth_min <= depth_max <= 1");
    const uint64_t needle_len = uint64_t(p.key_len) + p.value_len + 2;
    const uint64_t query_len = uint64_t(p.key_len) + 2;
    const uint64_t fixed = uint64_t(p.needles) * needle_len + query_len;
    if (fixed > p.context)
        invalid("niah: context " + std::to_string(p.context) + " is too short for " +
                std::to_string(p.needles) + " needles and the query (" + std::to_string(fixed) +
                " tokens)");
    if (uint64_t(p.context) > kMaxTokens ||
        uint64_t(p.context) * uint64_t(p.samples) > kMaxTaskTokens)
        invalid("niah: task too large");
    // Random tokens: uniform over the filler list, or over [3, vocab).
    const uint64_t alphabet = ids ? uint64_t(p.filler.size()) : uint64_t(p.vocab) - 3;
    // Distinct keys need alphabet^key_len >= needles.
    {
        uint64_t combos = 1;
        for (uint32_t i = 0; i < p.key_len && combos < p.needles; i++)
            combos *= alphabet;
        if (combos < p.needles)
            invalid("niah: not enough distinct keys for " + std::to_string(p.needles) +
                    (ids ? " needles (filler ids^key_len)" : " needles (vocab - 3)^key_len"));
    }
    const uint64_t filler = p.context - fixed;
    Rng rng(p.seed);
    auto draw = [&]() {
        const uint64_t r = rng.below(alphabet);
        return ids ? p.filler[size_t(r)] : int32_t(3 + r);
    };
    Task t;
    t.samples.resize(p.samples);
    for (uint32_t s = 0; s < p.samples; s++) {
        std::vector<std::vector<int32_t>> keys(p.needles), values(p.needles);
        std::set<std::vector<int32_t>> seen;
        for (uint32_t n = 0; n < p.needles; n++) {
            do {
                keys[n].assign(p.key_len, 0);
                for (auto &k : keys[n])
                    k = draw();
            } while (!seen.insert(keys[n]).second);
        }
        for (uint32_t n = 0; n < p.needles; n++) {
            values[n].assign(p.value_len, 0);
            for (auto &v : values[n])
                v = draw();
        }
        std::vector<uint64_t> at(p.needles);
        for (uint32_t n = 0; n < p.needles; n++) {
            double d = p.depth_min + (p.depth_max - p.depth_min) * rng.unit();
            uint64_t pos = uint64_t(std::floor(d * double(filler)));
            at[n] = std::min(pos, filler);
        }
        std::vector<uint32_t> order(p.needles);
        std::iota(order.begin(), order.end(), 0u);
        std::stable_sort(order.begin(), order.end(),
                         [&](uint32_t a, uint32_t b) { return at[a] < at[b]; });
        std::vector<int32_t> &prompt = t.samples[s].prompt;
        prompt.reserve(p.context);
        size_t next = 0;
        for (uint64_t f = 0; f <= filler; f++) {
            while (next < order.size() && at[order[next]] == f) {
                uint32_t n = order[next++];
                prompt.push_back(KEY);
                prompt.insert(prompt.end(), keys[n].begin(), keys[n].end());
                prompt.push_back(VAL);
                prompt.insert(prompt.end(), values[n].begin(), values[n].end());
            }
            if (f < filler)
                prompt.push_back(draw());
        }
        const uint32_t q = uint32_t(rng.below(p.needles));
        prompt.push_back(QRY);
        prompt.insert(prompt.end(), keys[q].begin(), keys[q].end());
        prompt.push_back(VAL);
        t.samples[s].answer = values[q];
        if (prompt.size() != p.context)
            throw Failure(BOSCH_E_STATE, "niah: internal error (prompt length)");
    }
    return t;
}

int64_t max_new_tokens(const Sample &s) {
    return s.max_new > 0 ? s.max_new : int64_t(s.answer.size()) + 16;
}

namespace {

struct FileCloser {
    void operator()(FILE *f) const {
        if (f)
            fclose(f);
    }
};
struct TokDeleter {
    void operator()(json_tokener *t) const { json_tokener_free(t); }
};
struct ObjDeleter {
    void operator()(json_object *o) const { json_object_put(o); }
};

std::vector<int32_t> token_array(json_object *root, const char *key, const std::string &where) {
    json_object *a = nullptr;
    if (!json_object_object_get_ex(root, key, &a))
        invalid(where + ": missing \"" + key + "\"");
    if (!a || json_object_get_type(a) != json_type_array)
        invalid(where + ": \"" + key + "\" must be an array of token ids");
    const size_t n = json_object_array_length(a);
    if (n == 0)
        invalid(where + ": \"" + key + "\" is empty");
    if (n > kMaxTokens)
        invalid(where + ": \"" + key + "\" is too long (" + std::to_string(n) + " tokens)");
    std::vector<int32_t> out(n);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(a, i);
        if (!e || json_object_get_type(e) != json_type_int)
            invalid(where + ": \"" + key + "\"[" + std::to_string(i) + "] is not an integer");
        errno = 0;
        int64_t v = json_object_get_int64(e);
        if (v < 0 || v > INT32_MAX || errno != 0)
            invalid(where + ": \"" + key + "\"[" + std::to_string(i) + "] = " +
                    json_object_to_json_string(e) + " is not a token id in [0, 2^31-1]");
        out[i] = int32_t(v);
    }
    return out;
}

// A key given twice in the line (json-c kept the last "prompt" or "answer").
void refuse_duplicate(const char *text, size_t len, const std::string &where) {
    util_json_dup dup;
    int twice = util_json_dup_find(text, len, &dup);
    if (twice < 0)
        throw std::bad_alloc();
    if (twice) {
        char what[160];
        util_json_dup_describe(&dup, what, sizeof what);
        invalid(where + ": " + what + " (give each key once)");
    }
}

} // namespace

Task load_jsonl(const std::string &path) {
    std::unique_ptr<FILE, FileCloser> f(fopen(path.c_str(), "rb"));
    if (!f)
        io_error("cannot open " + path + ": " + util_file_error(errno));
    std::unique_ptr<json_tokener, TokDeleter> tok(json_tokener_new());
    if (!tok)
        throw std::bad_alloc();
    json_tokener_set_flags(tok.get(), JSON_TOKENER_STRICT);
    Task t;
    struct LineBuf {
        char *p = nullptr;
        size_t cap = 0;
        ~LineBuf() { free(p); }
    } buf;
    uint64_t total = 0;
    for (size_t lineno = 1;; lineno++) {
        errno = 0;
        ssize_t len = getline(&buf.p, &buf.cap, f.get());
        char *line = buf.p;
        if (len < 0) {
            if (ferror(f.get()))
                io_error("cannot read " + path + ": " + strerror(errno ? errno : EIO));
            break;
        }
        const std::string where = path + ":" + std::to_string(lineno);
        // Trim whitespace (also "\r\n"); skip blank lines.
        size_t b = 0, e = size_t(len);
        while (b < e && strchr(" \t\r\n", line[b]))
            b++;
        while (e > b && strchr(" \t\r\n", line[e - 1]))
            e--;
        if (b == e)
            continue;
        if (memchr(line + b, '\0', e - b))
            invalid(where + ": NUL byte in line");
        if (e - b > size_t(INT32_MAX))
            invalid(where + ": line too long");
        json_tokener_reset(tok.get());
        std::unique_ptr<json_object, ObjDeleter> root(
            json_tokener_parse_ex(tok.get(), line + b, int(e - b)));
        json_tokener_error jerr = json_tokener_get_error(tok.get());
        if (jerr == json_tokener_continue)
            invalid(where + ": bad JSON (truncated)");
        if (jerr != json_tokener_success || !root)
            invalid(where + ": bad JSON (" + json_tokener_error_desc(jerr) + ")");
        if (json_tokener_get_parse_end(tok.get()) != e - b)
            invalid(where + ": bad JSON (trailing characters)");
        if (json_object_get_type(root.get()) != json_type_object)
            invalid(where + ": each line must be a JSON object {\"prompt\": [...], \"answer\": [...]}");
        refuse_duplicate(line + b, e - b, where);
        Sample s;
        s.prompt = token_array(root.get(), "prompt", where);
        s.answer = token_array(root.get(), "answer", where);
        total += s.prompt.size() + s.answer.size();
        if (total > kMaxTaskTokens)
            invalid(where + ": task too large");
        t.samples.push_back(std::move(s));
    }
    if (t.samples.empty())
        invalid(path + ": no samples");
    return t;
}

void write_jsonl(const Task &t, const std::string &path) {
    std::unique_ptr<FILE, FileCloser> f(fopen(path.c_str(), "wb"));
    if (!f)
        io_error("cannot create " + path + ": " + strerror(errno));
    auto put = [&](const std::vector<int32_t> &v) {
        for (size_t i = 0; i < v.size(); i++)
            fprintf(f.get(), i ? ",%d" : "%d", int(v[i]));
    };
    for (const Sample &s : t.samples) {
        fputs("{\"prompt\":[", f.get());
        put(s.prompt);
        fputs("],\"answer\":[", f.get());
        put(s.answer);
        fputs("]}\n", f.get());
    }
    if (ferror(f.get()))
        io_error("cannot write " + path);
    FILE *raw = f.release();
    if (fclose(raw) != 0)
        io_error("cannot write " + path + ": " + strerror(errno));
}

} // namespace bosch_torch
