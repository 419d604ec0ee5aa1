// libbosch-torch's C API as a caller sees it: linked against the shared
// object (so every name used here, the pre-1.0 ones included, must be
// exported) and using <bosch/torch.h> only. Covers the error reporting:
// creators return NULL with bosch_torch_create_status()/_error() (per
// thread), functions on a handle keep their message in the handle, and the
// deprecated err/err_len functions still work with the same messages.
// Plain main: exits non-zero on failure. Tiny random checkpoints only (CPU).

// This file calls the deprecated names on purpose.
#define BOSCH_NO_DEPRECATION_WARNINGS 1

#include "bosch/bosch.h"
#include "bosch/torch.h"

#include "tiny_checkpoint.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace bosch_torch_test;

#include "expect.hpp"
static std::string g_tmp;

static bool starts_with(const char *s, const char *prefix) {
    return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

#define EXPECT_STR(got, want)                                                                      \
    do {                                                                                           \
        g_checks++;                                                                                \
        std::string g_ = (got), w_ = (want);                                                       \
        if (g_ != w_) {                                                                            \
            g_failures++;                                                                          \
            std::fprintf(stderr, "%s:%d: got '%s', expected '%s'\n", __FILE__, __LINE__,           \
                         g_.c_str(), w_.c_str());                                                  \
        }                                                                                          \
    } while (0)

// The reason in bosch_torch_create_error(), after "<fn>: " (checked).
static std::string create_reason(const char *fn) {
    const char *e = bosch_torch_create_error();
    std::string prefix = std::string(fn) + ": ";
    EXPECT(starts_with(e, prefix.c_str()));
    return starts_with(e, prefix.c_str()) ? std::string(e + prefix.size()) : std::string(e);
}

static TinySpec spec() {
    TinySpec s;
    s.layers = 2;
    s.hidden = 32;
    s.heads = 4;
    s.kv_heads = 2;
    s.head_dim = 8;
    s.intermediate = 48;
    s.vocab = 40;
    s.seed = 3;
    return s;
}

// ---------------------------------------------------------------------------
// Creators: NULL, a status and "<function>: <reason>", per thread.

static void test_create_status(const std::string &dir) {
    // Nothing failed yet on a fresh thread.
    int st0 = -99;
    std::string msg0 = "x";
    std::thread([&] {
        st0 = bosch_torch_create_status();
        msg0 = bosch_torch_create_error();
    }).join();
    EXPECT(st0 == BOSCH_OK);
    EXPECT_STR(msg0, "");

    // A missing directory: BOSCH_E_IO, naming config.json.
    const std::string nope = g_tmp + "/no-such-model";
    EXPECT(bosch_torch_model_open(nope.c_str(), BOSCH_TORCH_DEVICE_CPU, 0) == nullptr);
    EXPECT(bosch_torch_create_status() == BOSCH_E_IO);
    EXPECT_STR(bosch_torch_create_error(),
               "bosch_torch_model_open: cannot open " + nope + "/config.json");

    // A malformed config (no vocab_size): BOSCH_E_INVALID, naming the field.
    const std::string bad = g_tmp + "/bad-config";
    EXPECT(make_dirs(bad).empty());
    std::string cfg = tiny_config_json(spec());
    size_t at = cfg.find("\"vocab_size\"");
    EXPECT(at != std::string::npos);
    cfg.replace(at, std::strlen("\"vocab_size\""), "\"vocab_sizes\"");
    write_file(bad + "/config.json", cfg);
    EXPECT(copy_file(dir + "/model.safetensors", bad + "/model.safetensors").empty());
    EXPECT(bosch_torch_model_open(bad.c_str(), BOSCH_TORCH_DEVICE_CPU, 0) == nullptr);
    EXPECT(bosch_torch_create_status() == BOSCH_E_INVALID);
    EXPECT(std::strstr(create_reason("bosch_torch_model_open").c_str(), "vocab_size"));
    // Not JSON at all.
    write_file(bad + "/config.json", "{\"architectures\": [");
    EXPECT(bosch_torch_model_open(bad.c_str(), BOSCH_TORCH_DEVICE_CPU, 0) == nullptr);
    EXPECT(bosch_torch_create_status() == BOSCH_E_INVALID);
    EXPECT(std::strstr(create_reason("bosch_torch_model_open").c_str(), "config.json"));

    // A bad task file: the line number.
    const std::string task = g_tmp + "/bad.jsonl";
    write_file(task, "{\"prompt\":[1,2,3],\"answer\":[4]}\n{\"prompt\":[1,2],\"answer\":-4}\n");
    EXPECT(bosch_torch_task_read_jsonl(task.c_str()) == nullptr);
    EXPECT(bosch_torch_create_status() == BOSCH_E_INVALID);
    EXPECT(std::strstr(create_reason("bosch_torch_task_read_jsonl").c_str(),
                       ":2: \"answer\" must be an array"));
    write_file(task, "{\"prompt\":[1,2,3],\"answer\":[4]\n");
    EXPECT(bosch_torch_task_read_jsonl(task.c_str()) == nullptr);
    EXPECT(std::strstr(bosch_torch_create_error(), ":1: bad JSON"));
    EXPECT(bosch_torch_task_read_jsonl((g_tmp + "/none.jsonl").c_str()) == nullptr);
    EXPECT(bosch_torch_create_status() == BOSCH_E_IO);
    EXPECT(bosch_torch_task_read_jsonl(nullptr) == nullptr);
    EXPECT_STR(bosch_torch_create_error(), "bosch_torch_task_read_jsonl: path must not be NULL");

    // NIAH parameters.
    EXPECT(bosch_torch_task_create_niah(40, 9, 1, 1, 2, 3, 0, 1, 0) == nullptr);
    EXPECT(bosch_torch_create_status() == BOSCH_E_INVALID);
    EXPECT(std::strstr(create_reason("bosch_torch_task_create_niah").c_str(), "too short"));

    // Evaluator and problem.
    bosch_torch_model *m = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU, 0);
    bosch_torch_task *t = bosch_torch_task_create_niah(40, 32, 2, 1, 1, 1, 0, 1, 7);
    EXPECT(m && t);
    EXPECT(bosch_torch_evaluator_open(m, t, 4, 0, 5) == nullptr);
    EXPECT(bosch_torch_create_status() == BOSCH_E_INVALID);
    EXPECT_STR(bosch_torch_create_error(), "bosch_torch_evaluator_open: unknown metric 5");
    EXPECT(bosch_torch_evaluator_open(nullptr, t, 4, 0, 0) == nullptr);
    EXPECT_STR(bosch_torch_create_error(),
               "bosch_torch_evaluator_open: model and task must not be NULL");
    EXPECT(bosch_torch_evaluator_open(m, t, 0, 0, 0) == nullptr);
    EXPECT(std::strstr(create_reason("bosch_torch_evaluator_open").c_str(), "window"));
    EXPECT(bosch_torch_model_problem(nullptr) == nullptr);
    EXPECT(bosch_torch_create_status() == BOSCH_E_INVALID);
    EXPECT_STR(bosch_torch_create_error(), "bosch_torch_model_problem: model is NULL");

    // A success does not clear it; the pointer stays valid until the next failure.
    const char *kept = bosch_torch_create_error();
    bosch_torch_evaluator *e = bosch_torch_evaluator_open(m, t, 4, 0, BOSCH_TORCH_METRIC_LOGPROB);
    EXPECT(e != nullptr);
    bosch_problem *p = bosch_torch_model_problem(m);
    EXPECT(p != nullptr);
    EXPECT(bosch_torch_create_status() == BOSCH_E_INVALID);
    EXPECT(kept == bosch_torch_create_error());
    EXPECT_STR(kept, "bosch_torch_model_problem: model is NULL");
    // Functions on handles leave it alone.
    int32_t tok[4] = {1, 2, 3, 99};
    int32_t pos = 3;
    std::vector<float> lg(40);
    EXPECT(bosch_torch_model_forward(m, tok, 1, 4, nullptr, 2, 0, &pos, 1, lg.data()) ==
           BOSCH_E_INVALID);
    EXPECT_STR(bosch_torch_create_error(), "bosch_torch_model_problem: model is NULL");

    // Per thread: a failure elsewhere is not seen here, and the reverse.
    int other_st = 0;
    std::string other_msg;
    std::thread([&] {
        other_st = bosch_torch_create_status();
        EXPECT(bosch_torch_task_create_niah(3, 64, 1, 1, 1, 1, 0, 1, 0) == nullptr);
        other_msg = bosch_torch_create_error();
    }).join();
    EXPECT(other_st == BOSCH_OK);
    EXPECT(starts_with(other_msg.c_str(), "bosch_torch_task_create_niah: "));
    EXPECT_STR(bosch_torch_create_error(), "bosch_torch_model_problem: model is NULL");
    // Kept apart from the core's.
    EXPECT(bosch_create_status() == BOSCH_OK);

    bosch_problem_free(p);
    bosch_torch_evaluator_free(e);
    bosch_torch_task_free(t);
    bosch_torch_model_free(m);
}

// ---------------------------------------------------------------------------
// Functions on a handle: the message stays in the handle.

static void test_handle_errors(const std::string &dir) {
    bosch_torch_model *m = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU, 0);
    EXPECT(m != nullptr);
    if (!m)
        return;
    EXPECT_STR(bosch_torch_model_last_error(m), "");
    int32_t tok[6] = {5, 6, 7, 40, 9, 10}; // 40 == vocab
    int32_t pos[2] = {0, 5};
    std::vector<float> lg(2 * 40);
    EXPECT(bosch_torch_model_forward(m, tok, 1, 6, nullptr, 2, 0, pos, 2, lg.data()) ==
           BOSCH_E_INVALID);
    EXPECT_STR(bosch_torch_model_last_error(m),
               "token 40 at index 3 is outside the vocabulary [0, 40)");
    tok[3] = 8;
    EXPECT(bosch_torch_model_forward(m, tok, 1, 6, nullptr, 2, 0, pos, 2, lg.data()) == BOSCH_OK);
    EXPECT_STR(bosch_torch_model_last_error(m), "");
    EXPECT(bosch_torch_model_forward(m, tok, 1, 6, nullptr, 0, 0, pos, 2, lg.data()) ==
           BOSCH_E_INVALID);
    EXPECT_STR(bosch_torch_model_last_error(m), "window must be at least 1");
    EXPECT(bosch_torch_model_forward(nullptr, tok, 1, 6, nullptr, 2, 0, pos, 2, lg.data()) ==
           BOSCH_E_INVALID);
    EXPECT_STR(bosch_torch_model_last_error(nullptr), "");

    // Scores: the message in the model; the task is only read.
    bosch_torch_task *t = bosch_torch_task_create_niah(40, 24, 2, 1, 1, 1, 0, 1, 5);
    EXPECT(t != nullptr);
    const std::string before = g_tmp + "/before.jsonl", after = g_tmp + "/after.jsonl";
    EXPECT(bosch_torch_task_write_jsonl(t, before.c_str()) == BOSCH_OK);
    std::vector<double> unit(4, -1.0);
    EXPECT(bosch_torch_model_scores(m, t, 9, 4, 0, nullptr, unit.data()) == BOSCH_E_INVALID);
    EXPECT_STR(bosch_torch_model_last_error(m), "unknown scorer 9");
    EXPECT(unit[0] == -1.0);
    EXPECT(bosch_torch_model_scores(m, t, BOSCH_TORCH_SCORER_LOCALITY, 4, 0, nullptr,
                                    unit.data()) == BOSCH_OK);
    EXPECT_STR(bosch_torch_model_last_error(m), "");
    EXPECT(unit[0] >= 0.0);

    // Evaluator: setters and batch eval.
    bosch_torch_evaluator *e = bosch_torch_evaluator_open(m, t, 4, 0, BOSCH_TORCH_METRIC_LOGPROB);
    EXPECT(e != nullptr);
    if (e) {
        EXPECT_STR(bosch_torch_evaluator_last_error(e), "");
        EXPECT(bosch_torch_evaluator_set_batch(e, 0) == BOSCH_E_INVALID);
        EXPECT_STR(bosch_torch_evaluator_last_error(e), "candidates must be at least 1");
        EXPECT(bosch_torch_evaluator_set_batch(e, 2) == BOSCH_OK);
        std::vector<uint8_t> masks = {0, 0, 0, 0, 1, 1, 1, 1};
        double s[2];
        EXPECT(bosch_torch_batch_eval(masks.data(), 2, 5, s, e) == BOSCH_E_INVALID);
        EXPECT_STR(bosch_torch_evaluator_last_error(e),
                   "mask has 5 units, the model has 4 (layers x KV heads)");
        EXPECT(bosch_torch_batch_eval(masks.data(), 2, 4, s, e) == BOSCH_OK);
        EXPECT_STR(bosch_torch_evaluator_last_error(e), "");
        EXPECT(bosch_torch_evaluator_set_prefix_cache(e, 0) == BOSCH_OK);
        // The model's own message is separate.
        EXPECT_STR(bosch_torch_model_last_error(m), "");
    }
    EXPECT(bosch_torch_evaluator_set_batch(nullptr, 1) == BOSCH_E_INVALID);
    EXPECT_STR(bosch_torch_evaluator_last_error(nullptr), "");
    bosch_torch_evaluator_free(e);
    EXPECT(bosch_torch_task_write_jsonl(t, after.c_str()) == BOSCH_OK);
    EXPECT(read_file(before) == read_file(after) && !read_file(before).empty());
    // write_jsonl: status only (the task is read-only).
    EXPECT(bosch_torch_task_write_jsonl(t, (g_tmp + "/no/dir/x.jsonl").c_str()) == BOSCH_E_IO);
    EXPECT(bosch_torch_task_write_jsonl(nullptr, after.c_str()) == BOSCH_E_INVALID);
    bosch_torch_task_free(t);
    bosch_torch_model_free(m);
}

// The evaluator's numerical noise: finite, positive, small, the same on a
// second call, far below a real window's effect. A window covering the
// prompts ties the anchors bit for bit (routed to the full kernel), and a
// search given the noise as anchor tolerance refuses them.
static void test_noise(const std::string &dir) {
    bosch_torch_model *m = bosch_torch_model_open(dir.c_str(), BOSCH_TORCH_DEVICE_CPU, 0);
    bosch_torch_task *t = bosch_torch_task_create_niah(40, 24, 2, 1, 1, 1, 0, 1, 5);
    EXPECT(m != nullptr && t != nullptr);
    if (!m || !t) {
        bosch_torch_task_free(t);
        bosch_torch_model_free(m);
        return;
    }
    const std::vector<uint8_t> anchors = {0, 0, 0, 0, 1, 1, 1, 1};
    bosch_torch_evaluator *e = bosch_torch_evaluator_open(m, t, 4, 0, BOSCH_TORCH_METRIC_LOGPROB);
    double n1 = -1, n2 = -2, s[2] = {0, 0};
    EXPECT(bosch_torch_evaluator_noise(e, &n1) == BOSCH_OK);
    EXPECT(bosch_torch_evaluator_noise(e, &n2) == BOSCH_OK);
    std::printf("evaluator noise (f32, logprob, window 4): %.3g\n", n1);
    EXPECT(std::isfinite(n1) && n1 > 0 && n1 < 1e-4 && n2 == n1);
    EXPECT(bosch_torch_batch_eval(anchors.data(), 2, 4, s, e) == BOSCH_OK);
    EXPECT(std::fabs(s[0] - s[1]) > 100 * n1);
    EXPECT(bosch_torch_evaluator_noise(nullptr, &n1) == BOSCH_E_INVALID);
    EXPECT(bosch_torch_evaluator_noise(e, nullptr) == BOSCH_E_INVALID);
    bosch_torch_evaluator_free(e);

    e = bosch_torch_evaluator_open(m, t, 1000, 0, BOSCH_TORCH_METRIC_LOGPROB);
    EXPECT(bosch_torch_batch_eval(anchors.data(), 2, 4, s, e) == BOSCH_OK);
    EXPECT(s[0] == s[1]);
    EXPECT(bosch_torch_evaluator_noise(e, &n1) == BOSCH_OK);
    bosch_problem *p = bosch_torch_model_problem(m);
    bosch_optimizer *opt = p ? bosch_optimizer_create(p) : nullptr;
    EXPECT(opt != nullptr);
    if (opt) {
        EXPECT(bosch_set_budget(opt, 20) == BOSCH_OK);
        EXPECT(bosch_set_anchor_tolerance(opt, n1) == BOSCH_OK);
        EXPECT(bosch_set_batch_evaluator(opt, bosch_torch_batch_eval, e) == BOSCH_OK);
        EXPECT(bosch_optimize(opt) == BOSCH_E_ANCHORS);
    }
    bosch_optimizer_free(opt);
    bosch_problem_free(p);
    bosch_torch_evaluator_free(e);
    bosch_torch_task_free(t);
    bosch_torch_model_free(m);
}

// ---------------------------------------------------------------------------
// The pre-1.0 functions: same results, same messages in err, "" on success.

static void test_deprecated(const std::string &dir) {
    char e1[512];
    // model_load: success, then failures with the messages callers saw before.
    bosch_torch_model *m = nullptr;
    std::strcpy(e1, "junk");
    EXPECT(bosch_torch_model_load(dir.c_str(), BOSCH_TORCH_DEVICE_CPU, 0, &m, e1, sizeof e1) ==
           BOSCH_OK);
    EXPECT(m != nullptr);
    EXPECT_STR(e1, "");
    if (!m)
        return;
    bosch_torch_model *m2 = m;
    const std::string nope = g_tmp + "/nope";
    EXPECT(bosch_torch_model_load(nope.c_str(), BOSCH_TORCH_DEVICE_CPU, 0, &m2, e1, sizeof e1) ==
           BOSCH_E_IO);
    EXPECT(m2 == nullptr);
    EXPECT_STR(e1, "cannot open " + nope + "/config.json");
    // The same reason as the new function's, and recorded under the old name.
    EXPECT_STR(bosch_torch_create_error(), "bosch_torch_model_load: " + std::string(e1));
    EXPECT(bosch_torch_model_open(nope.c_str(), BOSCH_TORCH_DEVICE_CPU, 0) == nullptr);
    EXPECT_STR(create_reason("bosch_torch_model_open"), e1);
    EXPECT(bosch_torch_model_load(nullptr, 0, 0, &m2, e1, sizeof e1) == BOSCH_E_INVALID);
    EXPECT_STR(e1, "dir and out must not be NULL");
    EXPECT(bosch_torch_model_load(dir.c_str(), 0, 0, nullptr, e1, sizeof e1) == BOSCH_E_INVALID);
    EXPECT_STR(e1, "dir and out must not be NULL");
    EXPECT(bosch_torch_model_load(dir.c_str(), 7, 0, &m2, e1, sizeof e1) == BOSCH_E_INVALID);
    EXPECT_STR(e1, "unknown device 7");
    EXPECT(bosch_torch_model_load(dir.c_str(), 7, 0, &m2, nullptr, 0) == BOSCH_E_INVALID);

    // forward: logits equal to the new function's; messages; truncation.
    int32_t tok[6] = {5, 6, 7, 8, 9, 10};
    int32_t pos[2] = {0, 5};
    std::vector<float> a(2 * 40), b(2 * 40);
    EXPECT(bosch_torch_forward(m, tok, 1, 6, nullptr, 2, 0, pos, 2, a.data(), e1, sizeof e1) ==
           BOSCH_OK);
    EXPECT_STR(e1, "");
    EXPECT(bosch_torch_model_forward(m, tok, 1, 6, nullptr, 2, 0, pos, 2, b.data()) == BOSCH_OK);
    EXPECT(a == b);
    tok[3] = 40;
    EXPECT(bosch_torch_forward(m, tok, 1, 6, nullptr, 2, 0, pos, 2, a.data(), e1, sizeof e1) ==
           BOSCH_E_INVALID);
    EXPECT_STR(e1, "token 40 at index 3 is outside the vocabulary [0, 40)");
    EXPECT_STR(bosch_torch_model_last_error(m), e1);
    tok[3] = 8;
    EXPECT(bosch_torch_forward(nullptr, tok, 1, 6, nullptr, 2, 0, pos, 2, a.data(), e1,
                               sizeof e1) == BOSCH_E_INVALID);
    EXPECT_STR(e1, "model and tokens must not be NULL; batch and len must be positive");
    char small[8];
    EXPECT(bosch_torch_forward(m, tok, 1, 6, nullptr, 0, 0, pos, 2, a.data(), small,
                               sizeof small) == BOSCH_E_INVALID);
    EXPECT_STR(small, "window ");
    EXPECT(bosch_torch_forward(m, tok, 1, 6, nullptr, 0, 0, pos, 2, a.data(), nullptr, 0) ==
           BOSCH_E_INVALID);

    // Tasks.
    bosch_torch_task *t = nullptr, *t2 = nullptr;
    EXPECT(bosch_torch_task_niah(40, 24, 2, 1, 1, 1, 0, 1, 5, &t, e1, sizeof e1) == BOSCH_OK);
    EXPECT_STR(e1, "");
    EXPECT(t != nullptr);
    t2 = t;
    EXPECT(bosch_torch_task_niah(40, 9, 1, 1, 2, 3, 0, 1, 0, &t2, e1, sizeof e1) ==
           BOSCH_E_INVALID);
    EXPECT(t2 == nullptr);
    EXPECT(std::strstr(e1, "too short"));
    EXPECT(!starts_with(e1, "bosch_torch"));
    EXPECT_STR(bosch_torch_create_error(), "bosch_torch_task_niah: " + std::string(e1));
    EXPECT(bosch_torch_task_niah(40, 64, 1, 1, 1, 1, 0, 1, 0, nullptr, e1, sizeof e1) ==
           BOSCH_E_INVALID);
    EXPECT_STR(e1, "out must not be NULL");
    const std::string path = g_tmp + "/old.jsonl";
    EXPECT(bosch_torch_task_write_jsonl(t, path.c_str()) == BOSCH_OK);
    EXPECT(bosch_torch_task_load_jsonl(path.c_str(), &t2, e1, sizeof e1) == BOSCH_OK);
    EXPECT_STR(e1, "");
    EXPECT(t2 != nullptr && bosch_torch_task_samples(t2) == 2);
    bosch_torch_task_free(t2);
    write_file(path, "[1,2,3]\n");
    EXPECT(bosch_torch_task_load_jsonl(path.c_str(), &t2, e1, sizeof e1) == BOSCH_E_INVALID);
    EXPECT(t2 == nullptr);
    EXPECT_STR(e1, path + ":1: each line must be a JSON object {\"prompt\": [...], \"answer\": "
                          "[...]}");
    EXPECT(bosch_torch_task_read_jsonl(path.c_str()) == nullptr);
    EXPECT_STR(create_reason("bosch_torch_task_read_jsonl"), e1);
    EXPECT(bosch_torch_task_load_jsonl(nullptr, &t2, e1, sizeof e1) == BOSCH_E_INVALID);
    EXPECT_STR(e1, "path and out must not be NULL");
    EXPECT(bosch_torch_task_load_jsonl(path.c_str(), nullptr, e1, sizeof e1) == BOSCH_E_INVALID);
    EXPECT_STR(e1, "path and out must not be NULL");

    // Evaluator: scores equal to the new one's.
    bosch_torch_evaluator *e = nullptr, *e2 = nullptr;
    EXPECT(bosch_torch_evaluator_create(m, t, 4, 0, BOSCH_TORCH_METRIC_LOGPROB, &e, e1,
                                        sizeof e1) == BOSCH_OK);
    EXPECT_STR(e1, "");
    e2 = bosch_torch_evaluator_open(m, t, 4, 0, BOSCH_TORCH_METRIC_LOGPROB);
    EXPECT(e && e2);
    if (e && e2) {
        std::vector<uint8_t> masks = {0, 0, 0, 0, 0, 1, 1, 0};
        double s1[2], s2[2];
        EXPECT(bosch_torch_batch_eval(masks.data(), 2, 4, s1, e) == BOSCH_OK);
        EXPECT(bosch_torch_batch_eval(masks.data(), 2, 4, s2, e2) == BOSCH_OK);
        EXPECT(s1[0] == s2[0] && s1[1] == s2[1]);
    }
    bosch_torch_evaluator_free(e);
    bosch_torch_evaluator_free(e2);
    e = e2;
    EXPECT(bosch_torch_evaluator_create(m, t, 4, 0, 5, &e, e1, sizeof e1) == BOSCH_E_INVALID);
    EXPECT(e == nullptr);
    EXPECT_STR(e1, "unknown metric 5");
    EXPECT_STR(bosch_torch_create_error(), "bosch_torch_evaluator_create: unknown metric 5");
    EXPECT(bosch_torch_evaluator_create(m, t, 4, 0, 0, nullptr, e1, sizeof e1) ==
           BOSCH_E_INVALID);
    EXPECT_STR(e1, "model, task and out must not be NULL");
    EXPECT(bosch_torch_evaluator_create(m, nullptr, 4, 0, 0, &e, e1, sizeof e1) ==
           BOSCH_E_INVALID);
    EXPECT_STR(e1, "model, task and out must not be NULL");

    // Scores.
    std::vector<double> h1(8), h2(8), u1(4), u2(4);
    EXPECT(bosch_torch_scores(m, t, BOSCH_TORCH_SCORER_RETRIEVAL, 4, 1, h1.data(), u1.data(), e1,
                              sizeof e1) == BOSCH_OK);
    EXPECT_STR(e1, "");
    EXPECT(bosch_torch_model_scores(m, t, BOSCH_TORCH_SCORER_RETRIEVAL, 4, 1, h2.data(),
                                    u2.data()) == BOSCH_OK);
    EXPECT(h1 == h2 && u1 == u2);
    EXPECT(bosch_torch_scores(m, t, -1, 4, 1, h1.data(), u1.data(), e1, sizeof e1) ==
           BOSCH_E_INVALID);
    EXPECT_STR(e1, "unknown scorer -1");
    EXPECT_STR(bosch_torch_model_last_error(m), e1);
    EXPECT(bosch_torch_scores(nullptr, t, 0, 4, 1, h1.data(), u1.data(), e1, sizeof e1) ==
           BOSCH_E_INVALID);
    EXPECT_STR(e1, "model and task must not be NULL");
    EXPECT(bosch_torch_scores(m, t, 0, 4, 1, nullptr, nullptr, nullptr, 0) == BOSCH_OK);

    bosch_torch_task_free(t);
    bosch_torch_model_free(m);
}

// Process-wide libtorch threads through the C API.
static void test_threads() {
    const uint32_t before = bosch_torch_threads();
    EXPECT(before >= 1);
    EXPECT(bosch_torch_set_threads(0) == BOSCH_E_INVALID);
    EXPECT(bosch_torch_threads() == before);
    EXPECT(bosch_torch_set_threads(1) == BOSCH_OK);
    EXPECT(bosch_torch_threads() == 1);
    EXPECT(bosch_torch_set_threads(before) == BOSCH_OK);
    EXPECT(bosch_torch_threads() == before);
}

int main() {
    auto t0 = std::chrono::steady_clock::now();
    g_tmp = make_temp_dir("api");
    try {
        const std::string dir = g_tmp + "/model";
        std::string e = write_tiny_qwen3(dir, spec());
        if (!e.empty())
            throw std::runtime_error("write_tiny_qwen3: " + e);
        test_create_status(dir);
        test_handle_errors(dir);
        test_noise(dir);
        test_deprecated(dir);
        test_threads();
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "exception: %s\n", ex.what());
        g_failures++;
    }
    remove_tree(g_tmp);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("test_api: %d checks, %d failures, %.1f s\n", g_checks, g_failures, s);
    return g_failures == 0 ? 0 : 1;
}
