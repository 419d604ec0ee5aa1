// Prompts of mixed length: one batch right-padded to the longest prompt
// against length buckets (bosch_torch_evaluator_set_buckets), side by side,
// on a small random Qwen3 written on the fly, CPU. The task is a JSON Lines
// file of random prompts with lengths uniform in [--min, --max], read back
// with bosch_torch_task_read_jsonl (the path a user's task takes).
//
//   bench_buckets [--min T0] [--max T1] [--samples M] [--candidates N]
//                 [--batch K] [--window W] [--repeat R]
#include <bosch/bosch.h>
#include <bosch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
    unsigned tmin = 64, tmax = 1024, samples = 16, candidates = 16, batch = 4, window = 32,
             repeat = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i];
        unsigned v = (unsigned)std::strtoul(argv[i + 1], nullptr, 10);
        if (a == "--min")
            tmin = v;
        else if (a == "--max")
            tmax = v;
        else if (a == "--samples")
            samples = v;
        else if (a == "--candidates")
            candidates = v;
        else if (a == "--batch")
            batch = v;
        else if (a == "--window")
            window = v;
        else if (a == "--repeat")
            repeat = v;
        else
            die("unknown flag", argv[i]);
    }
    if (tmin < 2 || tmax < tmin || samples == 0 || candidates == 0 || batch == 0 || repeat == 0)
        die("arguments", "need 2 <= min <= max and positive counts");
    // bench_torch's model shape (the organism's).
    const bosch_torch_test::TinySpec spec = bosch_torch_test::organism_spec(256);
    const std::string tmp = bosch_torch_test::make_temp_dir("bench-buckets");
    const std::string dir = tmp + "/model", task_path = tmp + "/mixed.jsonl";
    std::string e = bosch_torch_test::write_tiny_qwen3(dir, spec);
    if (!e.empty())
        die("writing the model", e.c_str());

    uint64_t x = 88172645463325252ull;
    auto rnd = [&x]() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    std::vector<unsigned> lens(samples);
    uint64_t tokens = 0;
    FILE *f = std::fopen(task_path.c_str(), "w");
    if (!f)
        die("writing the task", task_path.c_str());
    for (unsigned i = 0; i < samples; i++) {
        lens[i] = tmin + unsigned(rnd() % (tmax - tmin + 1));
        tokens += lens[i] + 1;
        std::fputs("{\"prompt\":[", f);
        for (unsigned t = 0; t < lens[i]; t++)
            std::fprintf(f, t ? ",%u" : "%u", unsigned(rnd() % 256));
        std::fprintf(f, "],\"answer\":[%u,%u]}\n", unsigned(rnd() % 256), unsigned(rnd() % 256));
    }
    std::fclose(f);
    bosch_torch_model *m = bosch_torch_model_open_device(dir.c_str(), "cpu", BOSCH_TORCH_DTYPE_F32);
    if (!m)
        die("loading", bosch_torch_create_error());
    bosch_torch_task *task = bosch_torch_task_read_jsonl(task_path.c_str());
    if (!task)
        die("task", bosch_torch_create_error());
    uint32_t L, G;
    bosch_torch_model_shape(m, &L, &G, nullptr, nullptr);
    const size_t units = size_t(L) * G;
    std::vector<uint8_t> masks(candidates * units);
    for (auto &b : masks)
        b = uint8_t(rnd() & 1);
    const unsigned longest = *std::max_element(lens.begin(), lens.end());

    std::printf("# Mixed prompt lengths: full padding against length buckets (bench_buckets)\n\n");
    std::printf("Model: %u layers x %u KV heads, hidden 128, vocab 256, random weights, f32 on "
                "the CPU. Task: %u samples, prompt lengths uniform in [%u, %u] (longest %u; %llu "
                "real tokens, %llu with full padding), answers of 2 tokens, window %u. %u random "
                "candidate masks, %u per forward; the best of %u timed calls of "
                "bosch_torch_batch_eval over all of them, after one untimed call (it builds the "
                "prefix cache).\n\n",
                L, G, samples, tmin, tmax, longest, (unsigned long long)tokens,
                (unsigned long long)(uint64_t(samples) * (longest + 1)), window, candidates, batch,
                repeat);
    std::printf("| buckets | prefix cache | seconds | candidates/s | vs full padding |\n"
                "|---|---|---|---|---|\n");
    for (int cache : {1, 0}) {
        double base = 0;
        for (unsigned buckets : {1u, 2u, 4u, 8u, 16u}) {
            bosch_torch_evaluator *ev =
                bosch_torch_evaluator_open(m, task, window, 4, BOSCH_TORCH_METRIC_LOGPROB);
            if (!ev)
                die("evaluator", bosch_torch_create_error());
            bosch_torch_evaluator_set_batch(ev, batch);
            bosch_torch_evaluator_set_prefix_cache(ev, cache);
            if (bosch_torch_evaluator_set_buckets(ev, buckets))
                die("buckets", bosch_torch_evaluator_last_error(ev));
            std::vector<double> sc(candidates);
            if (bosch_torch_batch_eval(masks.data(), candidates, units, sc.data(), ev))
                die("eval", bosch_torch_evaluator_last_error(ev));
            double best = 1e300;
            for (unsigned r = 0; r < repeat; r++) {
                const double t0 = now();
                if (bosch_torch_batch_eval(masks.data(), candidates, units, sc.data(), ev))
                    die("eval", bosch_torch_evaluator_last_error(ev));
                best = std::min(best, now() - t0);
            }
            if (buckets == 1)
                base = best;
            std::printf("| %u%s | %s | %.3f | %.1f | %.2fx |\n", buckets,
                        buckets == 1 ? " (full padding)" : "", cache ? "on" : "off", best,
                        candidates / best, base / best);
            std::fflush(stdout);
            bosch_torch_evaluator_free(ev);
        }
    }
    bosch_torch_task_free(task);
    bosch_torch_model_free(m);
    bosch_torch_test::remove_tree(tmp);
    return 0;
}
