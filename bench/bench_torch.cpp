// Evaluation speed of the libtorch backend: candidates per second for the
// naive evaluator (one candidate per forward, no prefix cache) against the
// batched + prefix-cached one, on a small random Qwen3 written on the fly
// (or a checkpoint directory given on the command line), CPU.
//
//   bench_torch [--model DIR] [--context T] [--samples M] [--candidates N]
//               [--batch K] [--window W]
#include <bosch/bosch.h>
#include <bosch/torch.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tiny_checkpoint.hpp"

static double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

static void die(const char *what, const char *err)
{
    std::fprintf(stderr, "%s: %s\n", what, err);
    std::exit(1);
}

int main(int argc, char **argv)
{
    std::string model_dir;
    unsigned context = 512, samples = 8, candidates = 32, batch = 8, window = 32;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        unsigned v = (unsigned)std::strtoul(argv[i + 1], nullptr, 10);
        if (a == "--model")
            model_dir = argv[i + 1];
        else if (a == "--context")
            context = v;
        else if (a == "--samples")
            samples = v;
        else if (a == "--candidates")
            candidates = v;
        else if (a == "--batch")
            batch = v;
        else if (a == "--window")
            window = v;
        else
            die("unknown flag", argv[i]);
    }
    std::string tmp;
    bosch_torch_test::TinySpec spec;
    if (model_dir.empty()) {
        spec = bosch_torch_test::organism_spec(256);
        tmp = bosch_torch_test::make_temp_dir("bench-torch");
        model_dir = tmp + "/model";
        std::string e = bosch_torch_test::write_tiny_qwen3(model_dir, spec);
        if (!e.empty())
            die("writing the model", e.c_str());
    }
    bosch_torch_model *m =
        bosch_torch_model_open(model_dir.c_str(), BOSCH_TORCH_DEVICE_CPU, BOSCH_TORCH_DTYPE_F32);
    if (!m)
        die("loading", bosch_torch_create_error());
    uint32_t L, G, H, V;
    bosch_torch_model_shape(m, &L, &G, &H, &V);
    bosch_torch_task *task = bosch_torch_task_create_niah(V, context, samples, 1, 2, 2, 0.1, 0.9, 1);
    if (!task)
        die("task", bosch_torch_create_error());
    size_t units = (size_t)L * G;

    /* Candidates as a search would make them: half of the units SWA, drawn
     * at random, so most candidates differ from all-full from layer 0 or 1. */
    std::vector<uint8_t> masks(candidates * units);
    uint64_t x = 88172645463325252ull;
    for (size_t c = 0; c < candidates; c++)
        for (size_t u = 0; u < units; u++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            masks[c * units + u] = (uint8_t)(x & 1);
        }
    /* A stage-3-like set: only the top half of the layers varies. */
    std::vector<uint8_t> upper(masks);
    for (size_t c = 0; c < candidates; c++)
        for (size_t u = 0; u < units / 2; u++)
            upper[c * units + u] = 0;

    std::printf("# libbosch-torch evaluation speed (bench_torch)\n\n");
    std::printf("Model: %u layers x %u KV heads (%u q/kv), vocab %u, f32 on CPU (%s). Task: NIAH, "
                "%u samples of %u tokens, window %u. %u candidate masks per configuration; "
                "wall clock of bosch_torch_batch_eval over all of them.\n\n",
                L, G, H, V, model_dir == tmp + "/model" ? "random weights" : model_dir.c_str(),
                samples, context, window, candidates);
    std::printf("| masks | evaluator | candidates/s | tokens/s | speed-up |\n|---|---|---|---|---|\n");
    const char *names[2] = {"random over all layers", "top half of the layers only"};
    for (int set = 0; set < 2; set++) {
        const uint8_t *ms = set == 0 ? masks.data() : upper.data();
        double base = 0.0;
        std::vector<double> ref(candidates);
        for (int fast = 0; fast < 2; fast++) {
            bosch_torch_evaluator *e =
                bosch_torch_evaluator_open(m, task, window, 0, BOSCH_TORCH_METRIC_LOGPROB);
            if (!e)
                die("evaluator", bosch_torch_create_error());
            bosch_torch_evaluator_set_batch(e, fast ? batch : 1);
            bosch_torch_evaluator_set_prefix_cache(e, fast);
            std::vector<double> scores(candidates);
            /* One warm-up candidate (allocations, prefix cache fill). */
            bosch_torch_batch_eval(ms, 1, units, scores.data(), e);
            double t = now();
            if (bosch_torch_batch_eval(ms, candidates, units, scores.data(), e) != BOSCH_OK)
                die("evaluating", bosch_torch_evaluator_last_error(e));
            double dt = now() - t;
            double rate = candidates / dt;
            if (!fast) {
                base = rate;
                ref = scores;
            } else {
                double maxdiff = 0.0;
                for (size_t c = 0; c < candidates; c++)
                    maxdiff = std::fmax(maxdiff, std::fabs(scores[c] - ref[c]));
                std::fprintf(stderr, "%s: max |score difference| naive vs fast = %.3g\n",
                             names[set], maxdiff);
            }
            std::printf("| %s | %s | %.2f | %.0f | %.2fx |\n", names[set],
                        fast ? "batched + prefix cache" : "naive (1 per forward, no cache)", rate,
                        rate * samples * context, rate / base);
            bosch_torch_evaluator_free(e);
        }
    }
    bosch_torch_task_free(task);
    bosch_torch_model_free(m);
    if (!tmp.empty())
        bosch_torch_test::remove_tree(tmp);
    return 0;
}
