// The text-task path of libbosch-torch: bosch_torch_task_from_text and the
// MATCH metric (RULER's scoring: greedy continuation, decoded, string match),
// on a tiny random checkpoint and a handmade byte-level BPE tokenizer whose
// vocabulary fits the model's (the rows past it have no token, so the stop
// rule for such ids is exercised too). The evaluator's MATCH scores are
// checked against an independent greedy loop over bosch_torch_model_forward
// (batch 1, no padding), for several masks and candidate batch sizes.
// Plain main: exits non-zero on failure. CPU only.

#include "bosch/bosch.h"
#include "bosch/text.h"
#include "bosch/torch.h"

#include "tiny_checkpoint.hpp"

#include <json-c/json.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace bosch_torch_test;

#include "expect.hpp"

namespace {

constexpr uint32_t kWindow = 4, kSink = 1;

TinySpec spec() {
    TinySpec s;
    s.layers = 2;
    s.hidden = 32;
    s.heads = 4;
    s.kv_heads = 2;
    s.head_dim = 8;
    s.intermediate = 48;
    s.vocab = 64;
    s.seed = 11;
    return s;
}

// Byte-level BPE: single bytes a-z, 0-9, space (Ġ), newline (Ċ), ". : < > /",
// six merges, and the two chat specials: ids 0..50 of the model's 64.
std::string tokenizer_json() {
    std::string vocab;
    int id = 0;
    auto add = [&](const std::string &tok) {
        if (!vocab.empty())
            vocab += ", ";
        vocab += "\"" + tok + "\": " + std::to_string(id++);
    };
    for (char c = 'a'; c <= 'z'; c++)
        add(std::string(1, c));
    for (char c = '0'; c <= '9'; c++)
        add(std::string(1, c));
    for (const char *t : {"\\u0120", "\\u010a", ".", ":", "<", ">", "/", "th", "\\u0120th", "er",
                          "in", "\\u0120a", "\\u010a\\u010a"})
        add(t);
    const int im_start = id, im_end = id + 1;
    return "{\"version\": \"1.0\", \"truncation\": null, \"padding\": null,\n"
           " \"added_tokens\": [\n"
           "  {\"id\": " +
           std::to_string(im_start) +
           ", \"content\": \"<|im_start|>\", \"special\": true, \"normalized\": false},\n"
           "  {\"id\": " +
           std::to_string(im_end) +
           ", \"content\": \"<|im_end|>\", \"special\": true, \"normalized\": false}],\n"
           " \"normalizer\": null,\n"
           " \"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [\n"
           "  {\"type\": \"Split\", \"pattern\": {\"Regex\": \" ?\\\\p{L}+|\\\\p{N}|\\\\s+\"},"
           " \"behavior\": \"Isolated\", \"invert\": false},\n"
           "  {\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"trim_offsets\": false,"
           " \"use_regex\": false}]},\n"
           " \"post_processor\": null,\n"
           " \"decoder\": {\"type\": \"ByteLevel\"},\n"
           " \"model\": {\"type\": \"BPE\", \"vocab\": {" +
           vocab +
           "},\n"
           "  \"merges\": [\"t h\", \"\\u0120 th\", \"e r\", \"i n\", \"\\u0120 a\","
           " \"\\u010a \\u010a\"]}}\n";
}

std::string json_str(const std::string &s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += char(c);
        } else if (c < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", c);
            o += b;
        } else {
            o += char(c);
        }
    }
    return o + "\"";
}

// The samples: prompts of different lengths, one in chat messages.
struct Spec {
    std::string head; // "\"text\": ..." or "\"messages\": [...]"
    int max_new;
};
const std::vector<Spec> &samples() {
    static const std::vector<Spec> v = {
        {"\"text\": \"the code is 42. the code is\"", 6},
        {"\"text\": \"in the inner hall there is a key: 7. a key: 7. what is the key:\"", 8},
        {"\"text\": \"abc\"", 5},
        {"\"messages\": [{\"role\": \"system\", \"content\": \"answer in digits.\"},"
         " {\"role\": \"user\", \"content\": \"the number is 315. what is the number\"}]",
         7},
        {"\"text\": \"zz 9 zz 9 zz 9 zz 9 zz 9 zz 9 zz 9 zz\"", 4},
    };
    return v;
}

std::string jsonl_line(const Spec &s, const std::vector<std::string> &answers) {
    std::string a;
    for (const std::string &x : answers)
        a += (a.empty() ? "" : ", ") + json_str(x);
    return "{" + s.head + ", \"answers\": [" + a + "], \"max_new_tokens\": " +
           std::to_string(s.max_new) + "}\n";
}

std::vector<int32_t> encode(const bosch_tokenizer *tok, const std::string &s, unsigned flags) {
    int32_t *ids = nullptr;
    size_t n = 0;
    EXPECT_ST(bosch_tokenizer_encode(tok, s.data(), s.size(), flags, &ids, &n), BOSCH_OK);
    std::vector<int32_t> v(ids, ids + n);
    bosch_text_free(ids);
    return v;
}

std::string decode_skip(const bosch_tokenizer *tok, const std::vector<int32_t> &ids) {
    char *text = nullptr;
    size_t len = 0;
    EXPECT_ST(bosch_tokenizer_decode(tok, ids.data(), ids.size(), BOSCH_DECODE_SKIP_SPECIAL, &text,
                                     &len),
              BOSCH_OK);
    std::string s(text ? text : "", len);
    bosch_text_free(text);
    return s;
}

// Independent greedy continuation: one batch-1 forward per new token, the
// logits at the last position, argmax; an id without a token stops (not
// kept), a special id stops (kept), as does reaching max_new.
// How the independent loop's continuations ended.
int g_stop_no_token = 0, g_stop_special = 0, g_stop_max = 0;

std::vector<int32_t> greedy(bosch_torch_model *m, const bosch_tokenizer *tok,
                            std::vector<int32_t> seq, const uint8_t *mask, uint32_t max_new,
                            uint32_t vocab) {
    const size_t prompt = seq.size();
    std::vector<float> logits(vocab);
    while (seq.size() - prompt < max_new) {
        const int32_t pos = int32_t(seq.size() - 1);
        EXPECT_ST(model_st(bosch_torch_model_forward(m, seq.data(), 1, seq.size(), mask, kWindow,
                                                     kSink, &pos, 1, logits.data()),
                           m),
                  BOSCH_OK);
        const int32_t id = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
        if (!bosch_tokenizer_token(tok, id)) {
            g_stop_no_token++;
            break;
        }
        seq.push_back(id);
        if (bosch_tokenizer_is_special(tok, id)) {
            g_stop_special++;
            break;
        }
        if (seq.size() - prompt >= max_new)
            g_stop_max++;
    }
    return std::vector<int32_t>(seq.begin() + long(prompt), seq.end());
}

// The prompts of a torch task, through bosch_torch_task_write_jsonl.
std::vector<std::vector<int32_t>> task_ids(const bosch_torch_task *t, const std::string &path,
                                           const char *key) {
    std::vector<std::vector<int32_t>> out;
    EXPECT_ST(bosch_torch_task_write_jsonl(t, path.c_str()), BOSCH_OK);
    const std::string all = read_file(path);
    size_t p = 0;
    while (p < all.size()) {
        size_t e = all.find('\n', p);
        if (e == std::string::npos)
            e = all.size();
        const std::string line = all.substr(p, e - p);
        p = e + 1;
        if (line.empty())
            continue;
        json_object *o = json_tokener_parse(line.c_str());
        EXPECT(o != nullptr);
        json_object *arr = nullptr;
        std::vector<int32_t> v;
        if (o && json_object_object_get_ex(o, key, &arr))
            for (size_t i = 0; i < json_object_array_length(arr); i++)
                v.push_back(int32_t(json_object_get_int(json_object_array_get_idx(arr, i))));
        json_object_put(o);
        out.push_back(v);
    }
    return out;
}

struct Setup {
    bosch_text_task *text = nullptr;
    bosch_torch_task *task = nullptr;
};

Setup load(const std::string &path, const bosch_tokenizer *tok) {
    Setup s;
    s.text = bosch_text_task_read_jsonl(path.c_str());
    EXPECT(s.text != nullptr);
    if (!s.text) {
        std::fprintf(stderr, "read_jsonl: %s\n", bosch_text_create_error());
        return s;
    }
    s.task = bosch_torch_task_from_text(s.text, tok, 0);
    EXPECT_ST(created(s.task), BOSCH_OK);
    return s;
}

void unload(Setup &s) {
    bosch_torch_task_free(s.task);
    bosch_text_task_free(s.text);
    s = Setup{};
}

} // namespace

int main() {
    const std::string tmp = make_temp_dir("torch-text");
    const TinySpec sp = spec();
    const std::string dir = tmp + "/model";
    std::string werr = write_tiny_qwen3(dir, sp);
    EXPECT(werr.empty());
    bosch_torch_model *m = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU, 0);
    EXPECT_ST(created(m), BOSCH_OK);
    const std::string tj = tokenizer_json();
    bosch_tokenizer *tok = bosch_tokenizer_from_json(tj.data(), tj.size());
    EXPECT(tok != nullptr);
    if (!m || !tok || !werr.empty()) {
        std::fprintf(stderr, "setup failed: %s / %s\n", werr.c_str(), bosch_text_create_error());
        return 1;
    }
    uint32_t layers = 0, groups = 0, vocab = 0;
    EXPECT_ST(model_st(bosch_torch_model_shape(m, &layers, &groups, nullptr, &vocab), m), BOSCH_OK);
    const size_t units = size_t(layers) * groups;
    EXPECT(units == 4 && vocab == 64);
    EXPECT(bosch_tokenizer_vocab_size(tok) == 51);
    const int32_t im_end = bosch_tokenizer_token_id(tok, "<|im_end|>");
    EXPECT(im_end == 50 && bosch_tokenizer_is_special(tok, im_end));
    // The merges are used.
    EXPECT(encode(tok, " the", 0) == std::vector<int32_t>({44, 4}));

    // Masks: all full, all SWA, mixed.
    const std::vector<uint8_t> masks = {0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1};
    const size_t nmask = masks.size() / units;
    const auto &ss = samples();
    const size_t M = ss.size();

    // Phase 1: placeholder answers, to find what the model continues with
    // under full attention, so that the answers of the task proper are
    // partly produced (scores strictly between 0 and 1 are possible).
    const std::string p1 = tmp + "/phase1.jsonl";
    {
        std::string s;
        for (const Spec &x : ss)
            s += jsonl_line(x, {"x"});
        EXPECT(write_file(p1, s).empty());
    }
    std::vector<std::vector<std::string>> answers(M);
    {
        Setup st = load(p1, tok);
        if (!st.task)
            return 1;
        for (size_t i = 0; i < M; i++) {
            char *text = nullptr;
            size_t len = 0;
            EXPECT_ST(bosch_text_task_prompt(st.text, i, 0, &text, &len), BOSCH_OK);
            const std::vector<int32_t> prompt = encode(tok, std::string(text, len), 0);
            bosch_text_free(text);
            const std::string out =
                decode_skip(tok, greedy(m, tok, prompt, masks.data(), uint32_t(ss[i].max_new), vocab));
            std::printf("sample %zu: prompt %zu tokens, full continuation '%s'\n", i,
                        prompt.size(), out.c_str());
            // A piece of the full-attention continuation, and one unlikely string.
            answers[i] = {out.empty() ? std::string("q") : out.substr(0, 2), "zq9"};
        }
        unload(st);
    }

    const std::string path = tmp + "/task.jsonl";
    {
        std::string s;
        for (size_t i = 0; i < M; i++)
            s += jsonl_line(ss[i], answers[i]);
        EXPECT(write_file(path, s).empty());
    }
    Setup st = load(path, tok);
    if (!st.task)
        return 1;
    const bosch_text_task *tt = st.text;
    const bosch_torch_task *t = st.task;
    EXPECT(bosch_torch_task_samples(t) == M);

    // (1) Prompt ids = encode(bosch_text_task_prompt(flags 0)); answers =
    // the target encoded as plain text; lengths through _prompt_len_of.
    std::vector<std::vector<int32_t>> prompts(M);
    {
        const auto got = task_ids(t, tmp + "/task_ids.jsonl", "prompt");
        const auto got_ans = task_ids(t, tmp + "/task_ids.jsonl", "answer");
        EXPECT(got.size() == M && got_ans.size() == M);
        size_t longest = 0;
        std::vector<size_t> lens;
        for (size_t i = 0; i < M; i++) {
            char *text = nullptr;
            size_t len = 0;
            EXPECT_ST(bosch_text_task_prompt(tt, i, 0, &text, &len), BOSCH_OK);
            const std::string ptxt(text, len);
            bosch_text_free(text);
            prompts[i] = encode(tok, ptxt, 0);
            if (i < got.size())
                EXPECT(got[i] == prompts[i]);
            if (i < got_ans.size())
                EXPECT(got_ans[i] == encode(tok, bosch_text_task_target(tt, i),
                                            BOSCH_TOKENIZE_NO_SPECIAL));
            EXPECT(bosch_torch_task_prompt_len_of(t, i) == prompts[i].size());
            // The sample as lent: the same ids, the target's, the text task's
            // max_new_tokens (or the answer's length + 16).
            const int32_t *sp = nullptr, *sa = nullptr;
            size_t np = 0, na = 0;
            uint32_t mx = 0;
            EXPECT_ST(bosch_torch_task_sample(t, i, &sp, &np, &sa, &na, &mx), BOSCH_OK);
            EXPECT(np == prompts[i].size() && std::equal(sp, sp + np, prompts[i].begin()));
            if (i < got_ans.size())
                EXPECT(na == got_ans[i].size() && std::equal(sa, sa + na, got_ans[i].begin()));
            const uint32_t tmx = bosch_text_task_max_new_tokens(tt, i);
            EXPECT(mx == (tmx ? tmx : uint32_t(na + 16)));
            longest = std::max(longest, prompts[i].size());
            lens.push_back(prompts[i].size());
            if (ss[i].head.find("messages") != std::string::npos) {
                // Chat markup became the special ids.
                EXPECT(ptxt.find("<|im_start|>") != std::string::npos);
                EXPECT(std::count(prompts[i].begin(), prompts[i].end(), im_end) == 2);
            }
        }
        EXPECT(bosch_torch_task_prompt_len(t) == longest);
        EXPECT(bosch_torch_task_prompt_len_of(t, M) == 0);
        EXPECT_ST(bosch_torch_task_sample(t, M, nullptr, nullptr, nullptr, nullptr, nullptr),
                  BOSCH_E_INVALID);
        EXPECT_ST(bosch_torch_task_sample(nullptr, 0, nullptr, nullptr, nullptr, nullptr,
                                          nullptr), BOSCH_E_INVALID);
        EXPECT(bosch_torch_task_tokenizer(t) == tok);
        std::sort(lens.begin(), lens.end());
        EXPECT(std::unique(lens.begin(), lens.end()) == lens.end()); // all different
        EXPECT(longest > kWindow + kSink);
    }

    // (2) MATCH: the evaluator against the independent loop.
    std::vector<double> want(nmask);
    std::vector<std::vector<double>> per(nmask, std::vector<double>(M)); // [mask][sample]
    for (size_t k = 0; k < nmask; k++) {
        double sum = 0.0;
        for (size_t i = 0; i < M; i++) {
            const std::string out = decode_skip(
                tok, greedy(m, tok, prompts[i], masks.data() + k * units,
                            bosch_text_task_max_new_tokens(tt, i), vocab));
            std::vector<const char *> a;
            for (size_t j = 0; j < bosch_text_task_answers(tt, i); j++)
                a.push_back(bosch_text_task_answer(tt, i, j));
            const double v = bosch_text_match_all(out.c_str(), a.data(), a.size());
            std::printf("mask %zu sample %zu: '%s' -> %g\n", k, i, out.c_str(), v);
            per[k][i] = v;
            sum += v;
        }
        want[k] = sum / double(M);
        EXPECT(want[k] >= 0.0 && want[k] <= 1.0);
    }
    EXPECT(want[0] > 0.0); // the answers hold pieces of the full continuation
    // With this seed the window changes the score (so a mask ignored would
    // show), and both the id-without-token and the max_new stops occur.
    EXPECT(want[0] != want[1]);
    std::printf("loop stops: no token %d, special %d, max_new %d\n", g_stop_no_token,
                g_stop_special, g_stop_max);
    EXPECT(g_stop_no_token > 0 && g_stop_max > 0);
    std::printf("independent MATCH scores: %g %g %g\n", want[0], want[1], want[2]);
    {
        bosch_torch_evaluator *e =
            bosch_torch_evaluator_open(m, t, kWindow, kSink, BOSCH_TORCH_METRIC_MATCH);
        EXPECT_ST(created(e), BOSCH_OK);
        for (uint32_t batch : {1u, 3u, 2u}) {
            EXPECT_ST(bosch_torch_evaluator_set_batch(e, batch), BOSCH_OK);
            std::vector<double> got(nmask, -1.0);
            EXPECT_ST(bosch_torch_batch_eval(masks.data(), nmask, units, got.data(), e), BOSCH_OK);
            for (size_t k = 0; k < nmask; k++) {
                EXPECT(got[k] == want[k]);
                if (got[k] != want[k])
                    std::fprintf(stderr, "batch %u mask %zu: evaluator %.17g, loop %.17g (%s)\n",
                                 batch, k, got[k], want[k], bosch_torch_evaluator_last_error(e));
            }
        }
        // Requests (bosch_torch_request_batch_eval): fidelity 1/M at draw d is
        // sample d mod M; fidelity 1 is the whole task.
        for (uint32_t d = 0; d <= M; d++) {
            std::vector<double> fid(nmask, 1.0 / double(M)), got(nmask, -1.0);
            std::vector<uint32_t> draws(nmask, d);
            if (d == M)
                fid.assign(nmask, 1.0);
            EXPECT_ST(bosch_torch_request_batch_eval(masks.data(), fid.data(), draws.data(), nmask,
                                                     units, got.data(), e),
                      BOSCH_OK);
            for (size_t k = 0; k < nmask; k++)
                EXPECT(got[k] == (d == M ? want[k] : per[k][d % M]));
        }
        bosch_torch_evaluator_free(e);
    }

    // (3) MATCH on an id task is refused, naming the match metric.
    {
        bosch_torch_task *niah = bosch_torch_task_create_niah(64, 32, 2, 1, 2, 2, 0.0, 1.0, 1);
        EXPECT_ST(created(niah), BOSCH_OK);
        bosch_torch_evaluator *e =
            bosch_torch_evaluator_open(m, niah, kWindow, kSink, BOSCH_TORCH_METRIC_MATCH);
        EXPECT(e == nullptr);
        EXPECT_ST(created(e), BOSCH_E_INVALID);
        EXPECT_MSG("match metric");
        EXPECT_MSG("bosch_torch_evaluator_open");
        bosch_torch_evaluator_free(e);
        bosch_torch_task_free(niah);
    }

    // (4) NULL arguments.
    {
        EXPECT(bosch_torch_task_from_text(nullptr, tok, 0) == nullptr);
        EXPECT_ST(created(nullptr), BOSCH_E_INVALID);
        EXPECT(std::strlen(err) > 0);
        EXPECT_MSG("bosch_torch_task_from_text");
        EXPECT(bosch_torch_task_from_text(tt, nullptr, 0) == nullptr);
        EXPECT_ST(created(nullptr), BOSCH_E_INVALID);
        EXPECT_MSG("NULL");
    }

    // (5) LOGPROB on the mixed-length task = mean over one-sample tasks.
    {
        bosch_torch_evaluator *e =
            bosch_torch_evaluator_open(m, t, kWindow, kSink, BOSCH_TORCH_METRIC_LOGPROB);
        EXPECT_ST(created(e), BOSCH_OK);
        std::vector<double> all(nmask, 1.0);
        EXPECT_ST(bosch_torch_evaluator_set_batch(e, 3), BOSCH_OK);
        EXPECT_ST(bosch_torch_batch_eval(masks.data(), nmask, units, all.data(), e), BOSCH_OK);
        bosch_torch_evaluator_free(e);
        std::vector<double> mean(nmask, 0.0);
        for (size_t i = 0; i < M; i++) {
            const std::string one = tmp + "/one" + std::to_string(i) + ".jsonl";
            EXPECT(write_file(one, jsonl_line(ss[i], answers[i])).empty());
            Setup s1 = load(one, tok);
            if (!s1.task)
                continue;
            EXPECT(bosch_torch_task_samples(s1.task) == 1);
            EXPECT(bosch_torch_task_prompt_len(s1.task) == prompts[i].size());
            bosch_torch_evaluator *e1 =
                bosch_torch_evaluator_open(m, s1.task, kWindow, kSink, BOSCH_TORCH_METRIC_LOGPROB);
            EXPECT_ST(created(e1), BOSCH_OK);
            std::vector<double> sc(nmask, 1.0);
            EXPECT_ST(bosch_torch_batch_eval(masks.data(), nmask, units, sc.data(), e1), BOSCH_OK);
            for (size_t k = 0; k < nmask; k++) {
                EXPECT(std::isfinite(sc[k]) && sc[k] <= 0.0);
                mean[k] += sc[k] / double(M);
            }
            bosch_torch_evaluator_free(e1);
            unload(s1);
        }
        for (size_t k = 0; k < nmask; k++) {
            std::printf("LOGPROB mask %zu: task %.9g, mean of one-sample tasks %.9g\n", k, all[k],
                        mean[k]);
            EXPECT(std::isfinite(all[k]) && all[k] <= 0.0);
            EXPECT(std::fabs(all[k] - mean[k]) <= 1e-5 * std::max(1.0, std::fabs(mean[k])));
        }
        EXPECT(all[0] != all[1]); // the window matters
    }

    unload(st);
    bosch_tokenizer_free(tok);
    bosch_torch_model_free(m);
    remove_tree(tmp);
    std::printf("%d checks, %d failures\n", g_checks, g_failures);
    return g_failures ? 1 : 0;
}
