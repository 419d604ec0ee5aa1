// The evaluator handle of libbosch-torch's C API (shim.hpp), and the static
// head scores.
#include "shim.hpp"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using namespace bosch_torch;
using namespace bosch_torch::shim;

namespace bosch_torch::shim {

int open_evaluator(bosch_torch_model *m, const bosch_torch_task *t, uint32_t window,
                   uint32_t sink, int metric, bosch_torch_evaluator **out, std::string &msg) {
    return guarded(msg, [&] {
        if (!m || !m->model || !t)
            invalid("model and task must not be NULL");
        if (metric != BOSCH_TORCH_METRIC_EXACT && metric != BOSCH_TORCH_METRIC_LOGPROB &&
            metric != BOSCH_TORCH_METRIC_MATCH)
            invalid("unknown metric " + std::to_string(metric));
        Window w;
        w.window = int64_t(window);
        w.sink = int64_t(sink);
        std::lock_guard<std::mutex> lock(m->model->mutex);
        torch::InferenceMode guard;
        std::unique_ptr<bosch_torch_evaluator> e(new bosch_torch_evaluator);
        e->model = m;
        e->ev.reset(new Evaluator(*m->model, t->task, w, Metric(metric)));
        *out = e.release();
    });
}

// Static head-level scores (scorers.hpp). Outputs are written only on success.
int run_scores(bosch_torch_model *m, const bosch_torch_task *t, int scorer, uint32_t window,
               uint32_t sink, double *head_scores, double *unit_scores, std::string &msg) {
    return guarded(msg, [&] {
        if (!m || !m->model || !t)
            invalid("model and task must not be NULL");
        if (!scorer_name(scorer))
            invalid("unknown scorer " + std::to_string(scorer));
        Window w;
        w.window = int64_t(window);
        w.sink = int64_t(sink);
        Model &md = *m->model;
        std::lock_guard<std::mutex> lock(md.mutex);
        // No InferenceMode here: FISHER needs autograd (compute_scores sets
        // the mode per scorer).
        HeadScores s = compute_scores(md, t->task, Scorer(scorer), w);
        if (head_scores)
            memcpy(head_scores, s.head.data(), s.head.size() * sizeof(double));
        if (unit_scores)
            memcpy(unit_scores, s.unit.data(), s.unit.size() * sizeof(double));
    });
}

namespace {

// The task's digest: every sample's prompt and answer ids, answer strings
// and continuation length, in order, and the sample count.
std::string task_digest(const Task &task) {
    XXH3_state_t *st = XXH3_createState();
    if (!st)
        throw std::bad_alloc();
    XXH3_64bits_reset(st);
    for (const Sample &s : task.samples) {
        const uint64_t lens[3] = {s.prompt.size(), s.answer.size(), uint64_t(s.max_new)};
        XXH3_64bits_update(st, lens, sizeof lens);
        XXH3_64bits_update(st, s.prompt.data(), s.prompt.size() * sizeof(int32_t));
        XXH3_64bits_update(st, s.answer.data(), s.answer.size() * sizeof(int32_t));
        for (const std::string &a : s.answers)
            XXH3_64bits_update(st, a.c_str(), a.size() + 1);
    }
    char id[40];
    std::snprintf(id, sizeof id, "xxh3:%016llx:%zu", (unsigned long long)XXH3_64bits_digest(st),
                  task.samples.size());
    XXH3_freeState(st);
    return id;
}

} // namespace

// What a journal keys on (bosch_torch_evaluator_identify): what changes the
// scores of a run, whatever machine resumes it.
std::vector<std::pair<std::string, std::string>> run_identity(const bosch_torch_evaluator &e) {
    static const char *const metrics[] = {"exact", "logprob", "match"};
    const Model &m = *e.model->model;
    const Window &w = e.ev->window();
    const int mi = int(e.ev->metric());
    std::vector<std::pair<std::string, std::string>> ids = {
        {"torch.model", m.identity()},
        {"torch.task", task_digest(e.ev->task())},
        {"torch.metric", mi >= 0 && mi < 3 ? metrics[mi] : "?"},
        {"torch.window", std::to_string(w.window)},
        {"torch.sink", std::to_string(w.sink)},
        {"torch.dtype", dtype_name(m.dtype())}};
    if (e.screen) // only when set: the identities of runs without one stay as they were
        ids.push_back({"torch.screen_task", task_digest(e.screen->task())});
    return ids;
}

// What an MPI job's ranks must share (bosch_torch_evaluator_identity): the
// run identity, and the settings that decide how samples are grouped into
// forwards and which kernels run, which change a score's rounding. Not the
// device: ranks on other devices are one job.
std::string job_identity(const bosch_torch_evaluator &e) {
    const Evaluator &ev = *e.ev;
    const Model &m = *e.model->model;
    std::vector<std::pair<std::string, std::string>> ids = run_identity(e);
    ids.insert(ids.end(),
               {{"torch.forward_samples", std::to_string(ev.forward_samples())},
                {"torch.batch", std::to_string(ev.batch())},
                {"torch.buckets", std::to_string(ev.buckets_setting())},
                {"torch.prefix_cache", ev.prefix_cache() ? "on" : "off"},
                {"torch.last_layer", ev.last_layer_at_rows() ? "rows" : "all"},
                {"torch.attention", m.masked_attention() ? "masked"
                                    : m.fused_band()     ? "fused"
                                                         : "tiled"}});
    std::string text;
    for (const auto &id : ids)
        text += id.first + "=" + id.second + "\n";
    return text;
}

} // namespace bosch_torch::shim

// A setting of the evaluator applies to its screen evaluator too, so that
// screened and full scores are computed alike.
template <class F> static void each_evaluator(bosch_torch_evaluator &e, F &&f) {
    f(*e.ev);
    if (e.screen)
        f(*e.screen);
}

extern "C" {

// ---------------------------------------------------------------------------
// Evaluator

BOSCH_TORCH_API bosch_torch_evaluator *bosch_torch_evaluator_open(bosch_torch_model *m,
                                                                  const bosch_torch_task *t,
                                                                  uint32_t window, uint32_t sink,
                                                                  int metric) {
    bosch_torch_evaluator *e = nullptr;
    std::string msg;
    int st = open_evaluator(m, t, window, sink, metric, &e, msg);
    if (st != BOSCH_OK)
        return create_fail("bosch_torch_evaluator_open", st, msg.c_str());
    return e;
}

BOSCH_TORCH_API void bosch_torch_evaluator_free(bosch_torch_evaluator *e) {
    if (!e)
        return;
    try {
        std::lock_guard<std::mutex> lock(e->model->model->mutex);
        e->ev.reset();
    } catch (...) {
    }
    delete e;
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_batch(bosch_torch_evaluator *e,
                                                    uint32_t candidates) {
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    if (candidates == 0) {
        e->ev->last_error = "candidates must be at least 1";
        return BOSCH_E_INVALID;
    }
    each_evaluator(*e, [&](Evaluator &ev) { ev.set_batch(candidates); });
    return BOSCH_OK;
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_buckets(bosch_torch_evaluator *e,
                                                      uint32_t buckets) {
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    std::string msg;
    int st = guarded(msg, [&] {
        torch::InferenceMode guard;
        each_evaluator(*e, [&](Evaluator &ev) { ev.set_buckets(buckets); });
    });
    if (st != BOSCH_OK)
        e->ev->last_error = msg;
    return st;
}

BOSCH_TORCH_API const char *bosch_torch_model_identity(const bosch_torch_model *m) {
    return m && m->model ? m->model->identity().c_str() : "";
}

BOSCH_TORCH_API int bosch_torch_evaluator_identify(const bosch_torch_evaluator *e,
                                                   bosch_optimizer *opt) {
    if (!e || !e->ev || !opt)
        return BOSCH_E_INVALID;
    std::vector<std::pair<std::string, std::string>> ids;
    try {
        ids = run_identity(*e);
    } catch (const std::bad_alloc &) {
        return BOSCH_E_NOMEM;
    }
    for (const auto &id : ids) {
        const int rc = bosch_set_run_identity(opt, id.first.c_str(), id.second.c_str());
        if (rc != BOSCH_OK)
            return rc;
    }
    return BOSCH_OK;
}

BOSCH_TORCH_API const char *bosch_torch_evaluator_identity(void *evaluator) {
    bosch_torch_evaluator *e = static_cast<bosch_torch_evaluator *>(evaluator);
    if (!e || !e->ev)
        return nullptr;
    try {
        std::lock_guard<std::mutex> lock(e->model->model->mutex);
        e->job_identity = job_identity(*e);
        return e->job_identity.c_str();
    } catch (...) {
        return nullptr;
    }
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_prefix_cache(bosch_torch_evaluator *e, int on) {
    if (!e)
        return BOSCH_E_INVALID;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    each_evaluator(*e, [&](Evaluator &ev) { ev.set_prefix_cache(on != 0); });
    return BOSCH_OK;
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_reference(bosch_torch_evaluator *e,
                                                        const uint8_t *mask, size_t units) {
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    const bosch_torch::Model &m = *e->model->model;
    const size_t want = size_t(m.layers() * m.kv_heads());
    if (mask && units != want) {
        e->ev->last_error = "reference has " + std::to_string(units) +
                            " units, the model has " + std::to_string(want);
        return BOSCH_E_INVALID;
    }
    each_evaluator(*e, [&](Evaluator &ev) { ev.set_reference(mask); });
    e->ev->last_error.clear();
    return BOSCH_OK;
}

// The screen task must be the evaluator's samples rendered shorter: as many,
// each with the same answers, none longer and all together fewer tokens.
static void check_screen_task(const Task &task, const Task &screen) {
    const size_t n = task.samples.size();
    if (screen.samples.size() != n)
        invalid("the screen task has " + std::to_string(screen.samples.size()) +
                " samples, the evaluator's task " + std::to_string(n) +
                ": a screen task is the same samples rendered shorter");
    size_t full = 0, short_ = 0;
    for (size_t i = 0; i < n; i++) {
        const Sample &a = task.samples[i], &b = screen.samples[i];
        const bool same = !a.answers.empty() || !b.answers.empty() ? a.answers == b.answers
                                                                   : a.answer == b.answer;
        if (!same)
            invalid("sample " + std::to_string(i) +
                    " has other answers in the screen task than in the evaluator's task: "
                    "not the same samples (render the same task, seed and samples at a "
                    "shorter context)");
        if (b.prompt.size() > a.prompt.size())
            invalid("sample " + std::to_string(i) + " of the screen task has " +
                    std::to_string(b.prompt.size()) + " prompt tokens, the evaluator's " +
                    std::to_string(a.prompt.size()) + ": a screen task is shorter");
        full += a.prompt.size();
        short_ += b.prompt.size();
    }
    if (short_ >= full)
        invalid("the screen task's prompts hold " + std::to_string(short_) +
                " tokens, the evaluator's " + std::to_string(full) +
                ": a screen task is shorter");
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_screen_task(bosch_torch_evaluator *e,
                                                          const bosch_torch_task *t) {
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    Model &md = *e->model->model;
    std::lock_guard<std::mutex> lock(md.mutex);
    std::string msg;
    int st = guarded(msg, [&] {
        if (!t) {
            e->screen.reset();
            return;
        }
        const Evaluator &ev = *e->ev;
        check_screen_task(ev.task(), t->task);
        torch::InferenceMode guard;
        std::unique_ptr<Evaluator> s(new Evaluator(md, t->task, ev.window(), ev.metric()));
        s->set_batch(ev.batch());
        s->set_buckets(ev.buckets_setting());
        s->set_prefix_cache(ev.prefix_cache());
        s->set_reference(ev.reference().empty() ? nullptr : ev.reference().data());
        s->set_cache_budget(ev.cache_budget());
        s->set_forward_tokens(ev.forward_tokens());
        s->set_forward_samples(ev.forward_samples());
        s->set_last_layer_at_rows(ev.last_layer_at_rows());
        e->screen = std::move(s);
    });
    e->ev->last_error = msg;
    return st;
}

// Runs `work` on the evaluator under its model's lock, after checking the
// unit count; returns BOSCH_OK, or a negative enum bosch_error (the optimizer
// reports it through bosch_evaluator_status()) with the message in
// bosch_torch_evaluator_last_error(). `evaluator` is not const: the message
// is written into it.
static int with_handle(void *evaluator, size_t units,
                       const std::function<void(bosch_torch_evaluator &)> &work) {
    auto *e = static_cast<bosch_torch_evaluator *>(evaluator);
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    Evaluator &ev = *e->ev;
    Model &md = *e->model->model;
    std::string msg;
    std::lock_guard<std::mutex> lock(md.mutex);
    int st = guarded(msg, [&] {
        if (units != size_t(md.layers() * md.kv_heads()))
            invalid("mask has " + std::to_string(units) + " units, the model has " +
                    std::to_string(md.layers() * md.kv_heads()) + " (layers x KV heads)");
        torch::InferenceMode guard;
        work(*e);
    });
    ev.last_error = msg;
    return st;
}

static int with_evaluator(void *evaluator, size_t units,
                          const std::function<void(Evaluator &)> &work) {
    return with_handle(evaluator, units, [&](bosch_torch_evaluator &e) { work(*e.ev); });
}

// Length as a fidelity: the evaluator a request at fidelity `f` is scored on,
// with f set to the fidelity it is scored at there (a screened request takes
// every sample of the screen task).
static Evaluator &request_evaluator(bosch_torch_evaluator &e, double &f) {
    if (e.screen && f > 0.0 && f < 1.0) {
        f = 1.0;
        return *e.screen;
    }
    return *e.ev;
}

BOSCH_TORCH_API int bosch_torch_batch_eval(const uint8_t *masks, size_t n, size_t units,
                                           double *scores, void *evaluator) {
    return with_evaluator(evaluator, units, [&](Evaluator &ev) {
        if (n > 0 && (!masks || !scores))
            invalid("masks and scores must not be NULL");
        ev.score(masks, n, scores);
    });
}

BOSCH_TORCH_API int bosch_torch_evaluator_noise(bosch_torch_evaluator *e, double *noise) {
    if (!e || !noise)
        return BOSCH_E_INVALID;
    const size_t units = e->model && e->model->model
                             ? size_t(e->model->model->layers() * e->model->model->kv_heads())
                             : 0;
    return with_evaluator(e, units, [&](Evaluator &ev) { *noise = ev.noise(); });
}

// Requests (torch.h): request i at fidelity f is scored on
// k = max(1, ceil(f * samples)) samples, from (draw * k) mod samples on,
// cyclically: (first, k), first 0 when k = samples. Throws for a fidelity
// outside (0, 1].
static std::pair<size_t, size_t> request_span(size_t S, double f, uint32_t draw,
                                              const std::string &what) {
    if (!(f > 0.0 && f <= 1.0)) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%g", f);
        invalid(what + "fidelity " + buf + " is outside (0, 1]");
    }
    // A few ulps below f * S, so that f = 0.1 of 30 samples
    // (0.1 * 30 = 3.0000000000000004) takes 3 samples, not 4.
    const double x = f * double(S);
    size_t k = size_t(std::ceil(x * (1.0 - 1e-12)));
    k = std::min(S, std::max<size_t>(1, k));
    const size_t first = k == S ? 0 : size_t((uint64_t(draw % S) * uint64_t(k)) % uint64_t(S));
    return {first, k};
}

// The samples of a span, ascending; empty for all S of them (the whole task).
static std::vector<size_t> span_samples(size_t S, std::pair<size_t, size_t> span) {
    std::vector<size_t> subset;
    if (span.second == S)
        return subset;
    for (size_t j = 0; j < span.second; j++)
        subset.push_back((span.first + j) % S);
    std::sort(subset.begin(), subset.end());
    return subset;
}

// Requests on the same samples (every request with k = samples is on all
// of them) form one group, scored by one Evaluator::score call (batch,
// buckets and prefix cache as for bosch_torch_batch_eval); at k = samples
// that is exactly bosch_torch_batch_eval's computation.
BOSCH_TORCH_API int bosch_torch_request_batch_eval(const uint8_t *masks, const double *fidelity,
                                                   const uint32_t *draws, size_t n, size_t units,
                                                   double *scores, void *evaluator) {
    return with_handle(evaluator, units, [&](bosch_torch_evaluator &e) {
        if (n > 0 && (!masks || !fidelity || !draws || !scores))
            invalid("masks, fidelity, draws and scores must not be NULL");
        // Group key: (evaluator, first sample, k); every full-task request
        // is (the task's, 0, S).
        std::vector<std::pair<Evaluator *, std::pair<size_t, size_t>>> keys;
        std::vector<std::vector<size_t>> members;
        for (size_t i = 0; i < n; i++) {
            double f = fidelity[i];
            Evaluator &ev = request_evaluator(e, f);
            const std::pair<Evaluator *, std::pair<size_t, size_t>> key = {
                &ev, request_span(ev.samples(), f, draws[i],
                                  "request " + std::to_string(i) + ": ")};
            size_t g = 0;
            while (g < keys.size() && keys[g] != key)
                g++;
            if (g == keys.size()) {
                keys.push_back(key);
                members.emplace_back();
            }
            members[g].push_back(i);
        }
        std::vector<uint8_t> buf;
        std::vector<double> out;
        for (size_t g = 0; g < keys.size(); g++) {
            const std::vector<size_t> &idx = members[g];
            buf.resize(idx.size() * units);
            for (size_t c = 0; c < idx.size(); c++)
                std::memcpy(buf.data() + c * units, masks + idx[c] * units, units);
            out.assign(idx.size(), 0.0);
            Evaluator &ev = *keys[g].first;
            ev.score(buf.data(), idx.size(), out.data(),
                     span_samples(ev.samples(), keys[g].second));
            for (size_t c = 0; c < idx.size(); c++)
                scores[idx[c]] = out[c];
        }
    });
}

BOSCH_TORCH_API int bosch_torch_evaluator_set_forward_samples(bosch_torch_evaluator *e,
                                                              uint32_t samples) {
    if (!e || !e->ev)
        return BOSCH_E_INVALID;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    each_evaluator(*e, [&](Evaluator &ev) { ev.set_forward_samples(int64_t(samples)); });
    e->ev->last_error.clear();
    return BOSCH_OK;
}

BOSCH_TORCH_API size_t bosch_torch_request_samples(double fidelity, void *evaluator) {
    auto *e = static_cast<bosch_torch_evaluator *>(evaluator);
    if (!e || !e->ev || !(fidelity > 0.0 && fidelity <= 1.0))
        return 0;
    std::lock_guard<std::mutex> lock(e->model->model->mutex);
    Evaluator &ev = request_evaluator(*e, fidelity);
    return request_span(ev.samples(), fidelity, 0, "").second;
}

BOSCH_TORCH_API int bosch_torch_sample_eval(const uint8_t *mask, double fidelity, uint32_t draw,
                                            size_t first, size_t count, size_t units,
                                            double *values, void *evaluator) {
    return with_handle(evaluator, units, [&](bosch_torch_evaluator &e) {
        if (!mask || (count && !values))
            invalid("mask and values must not be NULL");
        double f = fidelity;
        Evaluator &ev = request_evaluator(e, f);
        std::vector<size_t> all =
            span_samples(ev.samples(), request_span(ev.samples(), f, draw, ""));
        if (all.empty()) {
            all.resize(ev.samples());
            std::iota(all.begin(), all.end(), size_t(0));
        }
        if (first > all.size() || count > all.size() - first)
            invalid("samples [" + std::to_string(first) + ", " + std::to_string(first + count) +
                    ") of a request of " + std::to_string(all.size()));
        if (count == 0)
            return;
        const std::vector<size_t> part(all.begin() + long(first),
                                       all.begin() + long(first + count));
        double score = 0.0;
        ev.score(mask, 1, &score, part, values);
    });
}

BOSCH_TORCH_API const char *bosch_torch_evaluator_last_error(const bosch_torch_evaluator *e) {
    if (!e || !e->ev)
        return "";
    return e->ev->last_error.c_str();
}

} // extern "C"
