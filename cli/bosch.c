/* bosch: command-line front end of libbosch (and libbosch-torch when built).
 *
 *   bosch search   [options]            run BOSCH on a Qwen3 checkpoint
 *   bosch baseline --kind K [options]   a baseline selection (layer patterns, ablation,
 *                                       static head scores)
 *   bosch eval     --mask PREFIX.json   score a saved mask
 *   bosch show     PREFIX.json          print a saved mask
 *   bosch help | --help | --version
 *
 * See docs/cli.md. Exit codes: 0 success, 1 runtime error, 2 usage error,
 * 3 search stopped by a signal or the time limit (outputs still written).
 */
#include <bosch/bosch.h>
#ifdef BOSCH_CLI_TORCH
#include <bosch/torch.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "console.h"

#ifndef BOSCH_DEFAULT_MODEL_DIR
#define BOSCH_DEFAULT_MODEL_DIR "/usr/local/share/libbosch/organism"
#endif
#ifndef BOSCH_SOURCE_MODEL_DIR
#define BOSCH_SOURCE_MODEL_DIR ""
#endif

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_STOPPED = 3 };

static const char *prog = "bosch";

static void errorf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ------------------------------------------------------------------------ */
/* Settings                                                                  */
/* ------------------------------------------------------------------------ */
struct settings {
    const char *model;   /* --model (NULL = default) */
    const char *task;    /* --task JSONL (or the model's default task) */
    int niah;            /* --niah */
    int niah_given, budget_given;
    char task_buf[4096]; /* storage of a default task path */
    unsigned context, samples, needles, key_len, value_len;
    int context_given;
    double ratio;
    unsigned window, sink;
    int window_given, sink_given, metric_given;
    unsigned long long budget, seed;
    unsigned threads, eval_batch, batch_size;
    int no_prefix_cache;
    const char *journal;
    const char *strategy;
    const char *variant;
    const char *metric;
    const char *out;
    const char *kind;    /* baseline */
    const char *mask;    /* eval */
    const char *device;
    double time_limit;
};

static void settings_default(struct settings *s)
{
    memset(s, 0, sizeof *s);
    s->context = 1024;
    s->samples = 8;
    s->needles = 1;
    s->key_len = 2;
    s->value_len = 2;
    s->ratio = 0.5;
    s->window = 128;
    s->sink = 4;
    s->budget = 500;
    s->seed = 0;
    s->threads = 1;
    s->eval_batch = 8;
    s->strategy = "auto";
    s->variant = "full";
    s->metric = "exact";
    s->out = "bosch-mask";
    s->device = "auto";
}

/* The window used: --window, else 128, lowered to context/4 for a NIAH task
 * shorter than 512 tokens (so that SWA differs from full attention). */
static unsigned effective_window(const struct settings *s)
{
    if (s->window_given)
        return s->window;
    if (s->niah && s->context / 4 < s->window)
        return s->context / 4 ? s->context / 4 : 1;
    return s->window;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: bosch <command> [options]\n"
        "commands:\n"
        "  search     select SWA heads of a model with BOSCH\n"
        "  baseline   a baseline selection: --kind KIND (below)\n"
        "  eval       score a saved mask: --mask PREFIX.json\n"
        "  show       print a saved mask: bosch show PREFIX.json\n"
        "  help       this text;  --version  versions\n"
        "model and task (search, baseline, eval):\n"
        "  --model DIR        Qwen3 checkpoint (default $BOSCH_DEFAULT_MODEL, else the\n"
        "                     installed organism model)\n"
        "  --device D         auto|cpu|cuda (auto)\n"
        "  --task FILE        pre-tokenized JSONL task ({\"prompt\":[..],\"answer\":[..]})\n"
        "  --niah             synthetic needle-in-a-haystack task (default when no --task)\n"
        "  --context N        NIAH context length, and context of the KV saving (1024)\n"
        "  --samples N        NIAH samples (8)\n"
        "  --needles N        NIAH needles per prompt (1)\n"
        "  --key-len N, --value-len N   NIAH key/value tokens (2, 2)\n"
        "  --window W         sliding window (128; NIAH: at most context/4 unless given)\n"
        "  --sink S           sink tokens (4)\n"
        "  --metric M         exact|logprob (exact)\n"
        "  --seed S           search seed and NIAH task seed (0)\n"
        "  --eval-batch K     candidates per forward pass (8)\n"
        "  --no-prefix-cache  recompute the layers below the first SWA layer\n"
        "search and baseline:\n"
        "  --ratio R          target SWA ratio (0.5)\n"
        "  --budget N         evaluations, anchors included (500)\n"
        "  --threads N        optimizer threads (1)\n"
        "  --journal PATH     journal evaluations; resume PATH when it exists\n"
        "  --time-limit S     stop after S seconds (0 = none)\n"
        "  --strategy NAME    search strategy (auto)\n"
        "  --batch-size N     candidates the search proposes at once (library default 8)\n"
        "  --variant V        full|probe-only|group-only|layer-level (full)\n"
        "  --kind K           baseline: rand|intr|bme (layer patterns), ablation\n"
        "                     (single-unit SWA drops), locality|retrieval|\n"
        "                     echo-induction|fisher (static head scores)\n"
        "  --out PREFIX       write PREFIX.json, .tsv, .svg, .history.jsonl (bosch-mask)\n"
        "exit codes: 0 ok, 1 runtime error, 2 usage error, 3 stopped (signal/time limit)\n");
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_ull(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '\0')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    unsigned long long v;
    if (parse_ull(s, &v) || v < lo || v > hi)
        return -1;
    *out = (unsigned)v;
    return 0;
}

#define BASELINE_KINDS "rand|intr|bme|ablation|locality|retrieval|echo-induction|fisher"

static int baseline_kind_known(const char *k)
{
    static const char *const kinds[] = {"rand", "intr", "bme", "ablation", "locality",
                                        "retrieval", "echo-induction", "fisher"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(k, kinds[i]))
            return 1;
    return 0;
}

/* Parses argv (argv[0] = the command). Returns 0, or EXIT_USAGE after a message. */
static int parse_args(int argc, char **argv, struct settings *s, const char **positional)
{
    enum { O_MODEL = 256, O_TASK, O_NIAH, O_CONTEXT, O_SAMPLES, O_NEEDLES, O_KEYLEN, O_VALLEN,
           O_RATIO, O_WINDOW, O_SINK, O_BUDGET, O_THREADS, O_JOURNAL, O_SEED, O_STRATEGY,
           O_VARIANT, O_METRIC, O_OUT, O_KIND, O_MASK, O_DEVICE, O_EVALBATCH, O_TIME,
           O_BATCHSIZE, O_NOCACHE };
    static const struct option longopts[] = {
        {"model", required_argument, NULL, O_MODEL},
        {"task", required_argument, NULL, O_TASK},
        {"niah", no_argument, NULL, O_NIAH},
        {"context", required_argument, NULL, O_CONTEXT},
        {"samples", required_argument, NULL, O_SAMPLES},
        {"needles", required_argument, NULL, O_NEEDLES},
        {"key-len", required_argument, NULL, O_KEYLEN},
        {"value-len", required_argument, NULL, O_VALLEN},
        {"ratio", required_argument, NULL, O_RATIO},
        {"window", required_argument, NULL, O_WINDOW},
        {"sink", required_argument, NULL, O_SINK},
        {"budget", required_argument, NULL, O_BUDGET},
        {"threads", required_argument, NULL, O_THREADS},
        {"journal", required_argument, NULL, O_JOURNAL},
        {"seed", required_argument, NULL, O_SEED},
        {"strategy", required_argument, NULL, O_STRATEGY},
        {"variant", required_argument, NULL, O_VARIANT},
        {"metric", required_argument, NULL, O_METRIC},
        {"out", required_argument, NULL, O_OUT},
        {"kind", required_argument, NULL, O_KIND},
        {"mask", required_argument, NULL, O_MASK},
        {"device", required_argument, NULL, O_DEVICE},
        {"eval-batch", required_argument, NULL, O_EVALBATCH},
        {"time-limit", required_argument, NULL, O_TIME},
        {"batch-size", required_argument, NULL, O_BATCHSIZE},
        {"no-prefix-cache", no_argument, NULL, O_NOCACHE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        const char *bad = NULL;
        switch (c) {
        case O_MODEL: s->model = optarg; break;
        case O_TASK: s->task = optarg; break;
        case O_NIAH: s->niah = s->niah_given = 1; break;
        case O_CONTEXT:
            if (parse_uint(optarg, 8, 1u << 24, &s->context)) bad = "--context (8..16777216)";
            s->context_given = 1;
            break;
        case O_SAMPLES:
            if (parse_uint(optarg, 1, 1u << 20, &s->samples)) bad = "--samples (>= 1)";
            break;
        case O_NEEDLES:
            if (parse_uint(optarg, 1, 1024, &s->needles)) bad = "--needles (1..1024)";
            break;
        case O_KEYLEN:
            if (parse_uint(optarg, 1, 64, &s->key_len)) bad = "--key-len (1..64)";
            break;
        case O_VALLEN:
            if (parse_uint(optarg, 1, 64, &s->value_len)) bad = "--value-len (1..64)";
            break;
        case O_RATIO:
            if (parse_double(optarg, &s->ratio) || s->ratio < 0 || s->ratio > 1)
                bad = "--ratio (0..1)";
            break;
        case O_WINDOW:
            if (parse_uint(optarg, 1, 1u << 30, &s->window)) bad = "--window (>= 1)";
            s->window_given = 1;
            break;
        case O_SINK:
            if (parse_uint(optarg, 0, 1u << 30, &s->sink)) bad = "--sink (>= 0)";
            s->sink_given = 1;
            break;
        case O_BUDGET:
            if (parse_ull(optarg, &s->budget) || s->budget < 2) bad = "--budget (>= 2)";
            s->budget_given = 1;
            break;
        case O_THREADS:
            if (parse_uint(optarg, 1, 256, &s->threads)) bad = "--threads (1..256)";
            break;
        case O_JOURNAL: s->journal = optarg; break;
        case O_SEED:
            if (parse_ull(optarg, &s->seed)) bad = "--seed";
            break;
        case O_STRATEGY: s->strategy = optarg; break;
        case O_VARIANT:
            s->variant = optarg;
            if (strcmp(optarg, "full") && strcmp(optarg, "probe-only") &&
                strcmp(optarg, "group-only") && strcmp(optarg, "layer-level"))
                bad = "--variant (full|probe-only|group-only|layer-level)";
            break;
        case O_METRIC:
            s->metric = optarg;
            s->metric_given = 1;
            if (strcmp(optarg, "exact") && strcmp(optarg, "logprob"))
                bad = "--metric (exact|logprob)";
            break;
        case O_OUT:
            s->out = optarg;
            if (!*optarg) bad = "--out";
            break;
        case O_KIND:
            s->kind = optarg;
            if (!baseline_kind_known(optarg))
                bad = "--kind (" BASELINE_KINDS ")";
            break;
        case O_MASK: s->mask = optarg; break;
        case O_DEVICE:
            s->device = optarg;
            if (strcmp(optarg, "auto") && strcmp(optarg, "cpu") && strcmp(optarg, "cuda"))
                bad = "--device (auto|cpu|cuda)";
            break;
        case O_EVALBATCH:
            if (parse_uint(optarg, 1, 4096, &s->eval_batch)) bad = "--eval-batch (1..4096)";
            break;
        case O_BATCHSIZE:
            if (parse_uint(optarg, 1, 4096, &s->batch_size)) bad = "--batch-size (1..4096)";
            break;
        case O_NOCACHE: s->no_prefix_cache = 1; break;
        case O_TIME:
            if (parse_double(optarg, &s->time_limit) || s->time_limit < 0)
                bad = "--time-limit (>= 0)";
            break;
        case 'h': usage(stdout); exit(EXIT_OK);
        case ':':
            errorf("%s: option '%s' needs a value (see 'bosch help')", argv[0], argv[optind - 1]);
            return EXIT_USAGE;
        default:
            errorf("%s: unknown option '%s' (see 'bosch help')", argv[0], argv[optind - 1]);
            return EXIT_USAGE;
        }
        if (bad) {
            errorf("%s: bad value '%s' for %s", argv[0], optarg, bad);
            return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        if (!positional || optind + 1 < argc) {
            errorf("%s: unexpected argument '%s'", argv[0], argv[positional ? optind + 1 : optind]);
            return EXIT_USAGE;
        }
        *positional = argv[optind];
    }
    if (s->task && s->niah) {
        errorf("%s: --task and --niah exclude each other", argv[0]);
        return EXIT_USAGE;
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Outcome: what is written to PREFIX.json and shown                         */
/* ------------------------------------------------------------------------ */
struct outcome {
    char method[64];
    char model[4096];
    uint32_t L, G, H;
    uint8_t *mask;            /* L*G units, 1 = SWA */
    double score, normalized, s_full, s_swa, objective, target_ratio;
    const char *status;
    uint64_t evals[BOSCH_STAGE_COUNT + 1]; /* per stage, then total */
    uint64_t replayed;
    int stage_counts;         /* evals[] per stage meaningful */
    /* read back from settings (eval defaults); 0 / "" when absent */
    unsigned window, sink, context;
    int have_sink;
    char metric[16];
    const double *unit_scores; /* baseline importance per unit (written when set) */
};

static double layer_ratio(const struct outcome *o, uint32_t l)
{
    unsigned n = 0;
    for (uint32_t g = 0; g < o->G; g++)
        n += o->mask[(size_t)l * o->G + g] != 0;
    return (double)n / o->G;
}

static size_t swa_units(const struct outcome *o)
{
    size_t n = 0;
    for (size_t u = 0; u < (size_t)o->L * o->G; u++)
        n += o->mask[u] != 0;
    return n;
}

static json_object *jdouble(double v)
{
    return isfinite(v) ? json_object_new_double(v) : NULL;
}

static int write_json(const char *path, const struct outcome *o, const struct settings *s)
{
    size_t units = (size_t)o->L * o->G;
    json_object *root = json_object_new_object();
    json_object_object_add(root, "format", json_object_new_string("bosch-mask"));
    json_object_object_add(root, "format_version", json_object_new_int(1));
    json_object_object_add(root, "library_version", json_object_new_string(bosch_version_string()));
    json_object_object_add(root, "method", json_object_new_string(o->method));
    json_object_object_add(root, "status", json_object_new_string(o->status));
    json_object *m = json_object_new_object();
    json_object_object_add(m, "path", json_object_new_string(o->model));
    json_object_object_add(m, "layers", json_object_new_int64(o->L));
    json_object_object_add(m, "kv_groups", json_object_new_int64(o->G));
    json_object_object_add(m, "heads_per_group", json_object_new_int64(o->H));
    json_object_object_add(root, "model", m);
    json_object_object_add(root, "units", json_object_new_int64((int64_t)units));
    char *str = malloc(units + 1);
    if (!str) {
        json_object_put(root);
        return -1;
    }
    for (size_t u = 0; u < units; u++)
        str[u] = o->mask[u] ? '1' : '0';
    str[units] = '\0';
    json_object_object_add(root, "unit_mask", json_object_new_string(str));
    free(str);
    json_object *hm = json_object_new_array();
    for (uint32_t l = 0; l < o->L; l++) {
        json_object *row = json_object_new_array();
        for (uint32_t h = 0; h < o->G * o->H; h++)
            json_object_array_add(row, json_object_new_int(o->mask[(size_t)l * o->G + h / o->H] ? 1 : 0));
        json_object_array_add(hm, row);
    }
    json_object_object_add(root, "head_mask", hm);
    json_object *lr = json_object_new_array();
    for (uint32_t l = 0; l < o->L; l++)
        json_object_array_add(lr, json_object_new_double(layer_ratio(o, l)));
    json_object_object_add(root, "layer_ratios", lr);
    if (o->unit_scores) {
        json_object *us = json_object_new_array();
        for (size_t u = 0; u < units; u++)
            json_object_array_add(us, jdouble(o->unit_scores[u]));
        json_object_object_add(root, "unit_importance", us);
    }
    json_object_object_add(root, "swa_units", json_object_new_int64((int64_t)swa_units(o)));
    json_object_object_add(root, "ratio", json_object_new_double((double)swa_units(o) / units));
    json_object_object_add(root, "target_ratio", json_object_new_double(o->target_ratio));
    json_object *sc = json_object_new_object();
    json_object_object_add(sc, "metric", json_object_new_string(s->metric));
    json_object_object_add(sc, "raw", jdouble(o->score));
    json_object_object_add(sc, "normalized", jdouble(o->normalized));
    json_object_object_add(sc, "objective", jdouble(o->objective));
    json_object_object_add(sc, "full", jdouble(o->s_full));
    json_object_object_add(sc, "all_swa", jdouble(o->s_swa));
    json_object_object_add(root, "score", sc);
    unsigned w = effective_window(s);
    json_object *kv = json_object_new_object();
    json_object_object_add(kv, "context", json_object_new_int64(s->context));
    json_object_object_add(kv, "window", json_object_new_int64(w));
    json_object_object_add(kv, "sink", json_object_new_int64(s->sink));
    json_object_object_add(kv, "fraction",
                           json_object_new_double(bosch_kv_saving((double)swa_units(o) / units,
                                                                  s->context, w, s->sink)));
    json_object_object_add(root, "kv_saving", kv);
    json_object *st = json_object_new_object();
    if (s->task)
        json_object_object_add(st, "task", json_object_new_string(s->task));
    else {
        json_object *n = json_object_new_object();
        json_object_object_add(n, "context", json_object_new_int64(s->context));
        json_object_object_add(n, "samples", json_object_new_int64(s->samples));
        json_object_object_add(n, "needles", json_object_new_int64(s->needles));
        json_object_object_add(n, "key_len", json_object_new_int64(s->key_len));
        json_object_object_add(n, "value_len", json_object_new_int64(s->value_len));
        json_object_object_add(n, "seed", json_object_new_int64((int64_t)s->seed));
        json_object_object_add(st, "niah", n);
    }
    json_object_object_add(st, "window", json_object_new_int64(w));
    json_object_object_add(st, "sink", json_object_new_int64(s->sink));
    json_object_object_add(st, "metric", json_object_new_string(s->metric));
    json_object_object_add(st, "ratio", json_object_new_double(s->ratio));
    json_object_object_add(st, "budget", json_object_new_int64((int64_t)s->budget));
    json_object_object_add(st, "seed", json_object_new_int64((int64_t)s->seed));
    json_object_object_add(st, "strategy", json_object_new_string(s->strategy));
    json_object_object_add(st, "variant", json_object_new_string(s->variant));
    json_object_object_add(st, "threads", json_object_new_int64(s->threads));
    json_object_object_add(st, "eval_batch", json_object_new_int64(s->eval_batch));
    if (s->batch_size)
        json_object_object_add(st, "batch_size", json_object_new_int64(s->batch_size));
    json_object_object_add(st, "prefix_cache", json_object_new_boolean(!s->no_prefix_cache));
    json_object_object_add(st, "device", json_object_new_string(s->device));
    if (s->kind)
        json_object_object_add(st, "kind", json_object_new_string(s->kind));
    if (s->journal)
        json_object_object_add(st, "journal", json_object_new_string(s->journal));
    json_object_object_add(root, "settings", st);
    json_object *ev = json_object_new_object();
    if (o->stage_counts)
        for (int i = 0; i < BOSCH_STAGE_COUNT; i++)
            json_object_object_add(ev, bosch_stage_name(i), json_object_new_int64((int64_t)o->evals[i]));
    json_object_object_add(ev, "total", json_object_new_int64((int64_t)o->evals[BOSCH_STAGE_COUNT]));
    json_object_object_add(ev, "replayed", json_object_new_int64((int64_t)o->replayed));
    json_object_object_add(root, "evaluations", ev);
    int rc = json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
    json_object_put(root);
    return rc;
}

static int write_tsv(const char *path, const struct outcome *o)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    for (uint32_t l = 0; l < o->L; l++)
        for (uint32_t h = 0; h < o->G * o->H; h++)
            fprintf(f, "%d%c", o->mask[(size_t)l * o->G + h / o->H] ? 0 : 1,
                    h + 1 == o->G * o->H ? '\n' : '\t');
    return fclose(f) ? -1 : 0;
}

static int write_svg(const char *path, const struct outcome *o)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const int cell = 16, left = 48, top = 40;
    int w = left + (int)o->G * cell + 20, h = top + (int)o->L * cell + 40;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"10\">\n", w, h);
    fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%d\" y=\"14\" font-size=\"12\">%s: SWA ratio %.3f</text>\n", left,
            o->method, (double)swa_units(o) / ((size_t)o->L * o->G));
    fprintf(f, "<text x=\"%d\" y=\"30\">KV group &#8594;</text>\n", left);
    for (uint32_t l = 0; l < o->L; l++) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">L%u</text>\n", left - 4,
                top + (int)l * cell + 12, l);
        for (uint32_t g = 0; g < o->G; g++) {
            int swa = o->mask[(size_t)l * o->G + g] != 0;
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                       "stroke=\"white\"><title>layer %u group %u: %s</title></rect>\n",
                    left + (int)g * cell, top + (int)l * cell, cell, cell,
                    swa ? "#d95f02" : "#1b9e77", l, g, swa ? "SWA" : "full");
        }
    }
    int y = top + (int)o->L * cell + 16;
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#1b9e77\"/>"
               "<text x=\"%d\" y=\"%d\">full</text>\n", left, y, left + 14, y + 9);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"#d95f02\"/>"
               "<text x=\"%d\" y=\"%d\">SWA</text>\n</svg>\n", left + 50, y, left + 64, y + 9);
    return fclose(f) ? -1 : 0;
}

static char *path_with(const char *prefix, const char *suffix)
{
    size_t n = strlen(prefix) + strlen(suffix) + 1;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s%s", prefix, suffix);
    return p;
}

/* Writes PREFIX.json, .tsv, .svg; the history is written by the caller. */
static int write_outputs(const struct outcome *o, const struct settings *s)
{
    static const char *sfx[3] = {".json", ".tsv", ".svg"};
    for (int i = 0; i < 3; i++) {
        char *p = path_with(s->out, sfx[i]);
        if (!p)
            return -1;
        int rc = i == 0 ? write_json(p, o, s) : i == 1 ? write_tsv(p, o) : write_svg(p, o);
        if (rc) {
            errorf("cannot write %s: %s", p, strerror(errno));
            free(p);
            return -1;
        }
        free(p);
    }
    return 0;
}

static void print_picture(const struct outcome *o)
{
    printf("layer  units (# = sliding window, . = full)  SWA ratio\n");
    for (uint32_t l = 0; l < o->L; l++) {
        printf("%5u  ", l);
        for (uint32_t g = 0; g < o->G; g++)
            putchar(o->mask[(size_t)l * o->G + g] ? '#' : '.');
        printf("  %.3f\n", layer_ratio(o, l));
    }
}

static void print_scores(const struct outcome *o)
{
    printf("%s: %u layers x %u KV groups x %u query heads/group, SWA units %zu/%zu (ratio %.4f)\n",
           o->method, o->L, o->G, o->H, swa_units(o), (size_t)o->L * o->G,
           (double)swa_units(o) / ((size_t)o->L * o->G));
    if (isfinite(o->score))
        printf("score: raw %.6g", o->score);
    else
        printf("score: raw n/a");
    if (isfinite(o->normalized))
        printf(", normalised %.4f", o->normalized);
    if (isfinite(o->s_full) && isfinite(o->s_swa))
        printf(" (full %.6g, all-SWA %.6g)", o->s_full, o->s_swa);
    printf("\n");
}

/* ------------------------------------------------------------------------ */
/* Reading a mask back                                                       */
/* ------------------------------------------------------------------------ */
static int get_uint(json_object *o, const char *key, uint32_t *out)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int))
        return -1;
    int64_t x = json_object_get_int64(v);
    if (x < 1 || x > (1 << 24))
        return -1;
    *out = (uint32_t)x;
    return 0;
}

static double get_num(json_object *o, const char *key)
{
    json_object *v;
    if (!o || !json_object_object_get_ex(o, key, &v))
        return NAN;
    if (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int))
        return json_object_get_double(v);
    return NAN;
}

/* Loads PREFIX.json; returns 0 or EXIT_ERROR after a message. */
static int read_outcome(const char *path, struct outcome *o)
{
    memset(o, 0, sizeof *o);
    struct stat st;
    if (stat(path, &st) != 0) {
        errorf("%s: %s", path, strerror(errno));
        return EXIT_ERROR;
    }
    json_object *root = json_object_from_file(path);
    if (!root || !json_object_is_type(root, json_type_object)) {
        errorf("%s: not a JSON object (malformed mask file)", path);
        json_object_put(root);
        return EXIT_ERROR;
    }
    json_object *v, *model;
    const char *why = NULL;
    if (!json_object_object_get_ex(root, "format", &v) ||
        !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), "bosch-mask"))
        why = "\"format\" is not \"bosch-mask\"";
    else if (!json_object_object_get_ex(root, "model", &model) ||
             !json_object_is_type(model, json_type_object))
        why = "no \"model\" object";
    else if (get_uint(model, "layers", &o->L) || get_uint(model, "kv_groups", &o->G) ||
             get_uint(model, "heads_per_group", &o->H))
        why = "\"model\" lacks positive integers layers, kv_groups, heads_per_group";
    else if (!json_object_object_get_ex(root, "unit_mask", &v) ||
             !json_object_is_type(v, json_type_string))
        why = "no \"unit_mask\" string";
    else if ((size_t)json_object_get_string_len(v) != (size_t)o->L * o->G)
        why = "\"unit_mask\" length differs from layers x kv_groups";
    if (!why) {
        const char *m = json_object_get_string(v);
        size_t units = (size_t)o->L * o->G;
        o->mask = malloc(units);
        if (!o->mask)
            why = "out of memory";
        for (size_t u = 0; !why && u < units; u++) {
            if (m[u] != '0' && m[u] != '1')
                why = "\"unit_mask\" holds characters other than 0 and 1";
            else
                o->mask[u] = m[u] == '1';
        }
    }
    if (why) {
        errorf("%s: malformed mask file: %s", path, why);
        json_object_put(root);
        free(o->mask);
        o->mask = NULL;
        return EXIT_ERROR;
    }
    if (json_object_object_get_ex(root, "method", &v) && json_object_is_type(v, json_type_string))
        snprintf(o->method, sizeof o->method, "%s", json_object_get_string(v));
    else
        snprintf(o->method, sizeof o->method, "mask");
    if (json_object_object_get_ex(model, "path", &v) && json_object_is_type(v, json_type_string))
        snprintf(o->model, sizeof o->model, "%s", json_object_get_string(v));
    json_object *sc = NULL;
    json_object_object_get_ex(root, "score", &sc);
    o->score = get_num(sc, "raw");
    o->normalized = get_num(sc, "normalized");
    o->s_full = get_num(sc, "full");
    o->s_swa = get_num(sc, "all_swa");
    o->objective = get_num(sc, "objective");
    o->target_ratio = get_num(root, "target_ratio");
    json_object *sj = NULL, *n = NULL;
    if (json_object_object_get_ex(root, "settings", &sj) && json_object_is_type(sj, json_type_object)) {
        double w = get_num(sj, "window"), k = get_num(sj, "sink");
        if (w >= 1 && w < 1e9)
            o->window = (unsigned)w;
        if (k >= 0 && k < 1e9) {
            o->sink = (unsigned)k;
            o->have_sink = 1;
        }
        if (json_object_object_get_ex(sj, "metric", &v) && json_object_is_type(v, json_type_string) &&
            (!strcmp(json_object_get_string(v), "exact") || !strcmp(json_object_get_string(v), "logprob")))
            snprintf(o->metric, sizeof o->metric, "%s", json_object_get_string(v));
        if (json_object_object_get_ex(sj, "niah", &n)) {
            double c = get_num(n, "context");
            if (c >= 8 && c <= (1 << 24))
                o->context = (unsigned)c;
        }
    }
    json_object_put(root);
    return 0;
}

static int cmd_show(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    const char *file = NULL;
    int rc = parse_args(argc, argv, &s, &file);
    if (rc)
        return rc;
    if (!file)
        file = s.mask;
    if (!file) {
        errorf("show: which mask? usage: bosch show PREFIX.json");
        return EXIT_USAGE;
    }
    struct outcome o;
    if ((rc = read_outcome(file, &o)))
        return rc;
    print_picture(&o);
    print_scores(&o);
    if (*o.model)
        printf("model: %s\n", o.model);
    if (o.window)
        printf("settings: window %u, sink %u, metric %s\n", o.window, o.sink,
               *o.metric ? o.metric : "?");
    free(o.mask);
    return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* Model commands                                                            */
/* ------------------------------------------------------------------------ */
static int is_dir(const char *p)
{
    struct stat st;
    return p && *p && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The model directory: --model, $BOSCH_DEFAULT_MODEL, the installed default,
 * the source tree's models/organism. NULL after a message. */
static const char *resolve_model(const struct settings *s)
{
    if (s->model) {
        if (!is_dir(s->model)) {
            errorf("model directory '%s' does not exist", s->model);
            return NULL;
        }
        return s->model;
    }
    const char *env = getenv("BOSCH_DEFAULT_MODEL");
    if (env && *env) {
        if (!is_dir(env)) {
            errorf("BOSCH_DEFAULT_MODEL='%s' is not a directory", env);
            return NULL;
        }
        return env;
    }
    if (is_dir(BOSCH_DEFAULT_MODEL_DIR))
        return BOSCH_DEFAULT_MODEL_DIR;
    if (is_dir(BOSCH_SOURCE_MODEL_DIR))
        return BOSCH_SOURCE_MODEL_DIR;
    errorf("no model: give --model DIR or set BOSCH_DEFAULT_MODEL (the default model is "
           "looked for in %s%s%s, not found)",
           BOSCH_DEFAULT_MODEL_DIR, *BOSCH_SOURCE_MODEL_DIR ? " and " : "", BOSCH_SOURCE_MODEL_DIR);
    return NULL;
}

#ifndef BOSCH_CLI_TORCH

static int no_backend(const char *cmd)
{
    errorf("%s: this bosch was built without the libtorch backend (libbosch-torch); "
           "rebuild libbosch with libtorch available (meson setup -Dtorch=enabled)", cmd);
    return EXIT_ERROR;
}

static int cmd_model(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    int rc = parse_args(argc, argv, &s, NULL);
    if (rc)
        return rc;
    (void)write_outputs; /* used by the torch commands only */
    (void)resolve_model;
    return no_backend(argv[0]);
}

#else /* BOSCH_CLI_TORCH */

struct backend {
    bosch_torch_model *m;
    bosch_torch_task *t;
    bosch_torch_evaluator *e;
    uint32_t L, G, H, V;
    const char *dir;
};

static void backend_free(struct backend *b)
{
    bosch_torch_evaluator_free(b->e);
    bosch_torch_task_free(b->t);
    bosch_torch_model_free(b->m);
}

static int backend_open(struct settings *s, struct backend *b)
{
    char err[1024] = "";
    memset(b, 0, sizeof *b);
    b->dir = resolve_model(s);
    if (!b->dir)
        return EXIT_ERROR;
    int dev = !strcmp(s->device, "cpu") ? BOSCH_TORCH_DEVICE_CPU
              : !strcmp(s->device, "cuda") ? BOSCH_TORCH_DEVICE_CUDA : BOSCH_TORCH_DEVICE_AUTO;
    int rc = bosch_torch_model_load(b->dir, dev, BOSCH_TORCH_DTYPE_AUTO, &b->m, err, sizeof err);
    if (rc) {
        errorf("cannot load the model in %s: %s", b->dir, *err ? err : bosch_strerror(rc));
        return EXIT_ERROR;
    }
    bosch_torch_model_shape(b->m, &b->L, &b->G, &b->H, &b->V);
    if (s->task)
        rc = bosch_torch_task_load_jsonl(s->task, &b->t, err, sizeof err);
    else
        rc = bosch_torch_task_niah(b->V, s->context, s->samples, s->needles, s->key_len,
                                   s->value_len, 0.0, 1.0, s->seed, &b->t, err, sizeof err);
    if (rc) {
        errorf("task %s: %s", s->task ? s->task : "niah", *err ? err : bosch_strerror(rc));
        return EXIT_ERROR;
    }
    /* The KV saving is reported at the task's context. */
    if (s->task)
        s->context = (unsigned)bosch_torch_task_prompt_len(b->t);
    int metric = !strcmp(s->metric, "logprob") ? BOSCH_TORCH_METRIC_LOGPROB : BOSCH_TORCH_METRIC_EXACT;
    rc = bosch_torch_evaluator_create(b->m, b->t, effective_window(s), s->sink, metric, &b->e, err,
                                      sizeof err);
    if (rc) {
        errorf("evaluator: %s", *err ? err : bosch_strerror(rc));
        return EXIT_ERROR;
    }
    bosch_torch_evaluator_set_batch(b->e, s->eval_batch);
    if (s->no_prefix_cache)
        bosch_torch_evaluator_set_prefix_cache(b->e, 0);
    return 0;
}

/* Scores n masks; 0 or EXIT_ERROR after a message. */
static int score_masks(struct backend *b, const uint8_t *masks, size_t n, double *scores)
{
    size_t units = (size_t)b->L * b->G;
    int rc = bosch_torch_batch_eval(masks, n, units, scores, b->e);
    if (rc) {
        errorf("evaluation failed: %s", bosch_torch_evaluator_last_error(b->e));
        return EXIT_ERROR;
    }
    return 0;
}

/* History line in bosch_result_write_history's format. */
static void history_line(FILE *f, size_t i, const char *stage, double score, double s_full,
                         double s_swa, const uint8_t *mask, size_t units)
{
    size_t n = 0;
    for (size_t u = 0; u < units; u++)
        n += mask[u] != 0;
    fprintf(f, "{\"eval\":%zu,\"stage\":\"%s\",\"score\":%.17g,", i, stage, score);
    if (s_full > s_swa)
        fprintf(f, "\"normalized\":%.17g,", (score - s_swa) / (s_full - s_swa));
    else
        fprintf(f, "\"normalized\":null,");
    fprintf(f, "\"swa_units\":%zu,\"wall_s\":null,\"mask\":\"", n);
    for (size_t u = 0; u < units; u++)
        fputc(mask[u] ? '1' : '0', f);
    fprintf(f, "\"}\n");
}

static int opt_fail(int rc, const char *what, const bosch_optimizer *opt)
{
    const char *msg = opt && *bosch_optimizer_last_error(opt) ? bosch_optimizer_last_error(opt) : bosch_strerror(rc);
    errorf("%s: %s: %s", what, bosch_err_name(rc), msg);
    if (rc == BOSCH_E_ANCHORS)
        errorf("hint: the task does not separate full from SWA attention; try --metric logprob, "
               "a smaller --window or a longer --context");
    return EXIT_ERROR;
}

static int cmd_search(struct settings *s)
{
    struct backend b;
    int status = EXIT_ERROR;
    bosch_problem *prob = NULL;
    bosch_optimizer *opt = NULL;
    bosch_result *res = NULL;
    struct outcome o;
    memset(&o, 0, sizeof o);
    if (backend_open(s, &b))
        goto out;
    prob = bosch_torch_model_problem(b.m);
    if (!prob) {
        errorf("out of memory");
        goto out;
    }
    int rc = bosch_problem_set_target_ratio(prob, s->ratio);
    if (rc) {
        status = opt_fail(rc, "ratio", NULL);
        goto out;
    }
    opt = bosch_optimizer_create(prob);
    if (!opt) {
        errorf("out of memory");
        goto out;
    }
    char buf[64];
    struct { const char *name, *value; } opts[] = {
        {"budget", NULL}, {"seed", NULL}, {"strategy", s->strategy}, {"variant", s->variant},
    };
    static char bbuf[32], sbuf[32];
    snprintf(bbuf, sizeof bbuf, "%llu", s->budget);
    snprintf(sbuf, sizeof sbuf, "%llu", s->seed);
    opts[0].value = bbuf;
    opts[1].value = sbuf;
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if ((rc = bosch_set_option(opt, opts[i].name, opts[i].value))) {
            snprintf(buf, sizeof buf, "--%s %s", opts[i].name, opts[i].value);
            status = opt_fail(rc, buf, opt);
            goto out;
        }
    if (s->batch_size) {
        snprintf(bbuf, sizeof bbuf, "%u", s->batch_size);
        if ((rc = bosch_set_option(opt, "batch_size", bbuf))) {
            status = opt_fail(rc, "--batch-size", opt);
            goto out;
        }
    }
    if ((rc = bosch_set_threads(opt, s->threads))) {
        status = opt_fail(rc, "--threads", opt);
        goto out;
    }
    if (s->time_limit > 0 && (rc = bosch_set_time_limit(opt, s->time_limit))) {
        status = opt_fail(rc, "--time-limit", opt);
        goto out;
    }
    if (s->journal && (rc = bosch_set_journal(opt, s->journal, BOSCH_JOURNAL_AUTO))) {
        status = opt_fail(rc, "--journal", opt);
        goto out;
    }
    bosch_set_batch_evaluator(opt, bosch_torch_batch_eval, b.e);
    struct console_progress pr;
    console_progress_init(&pr);
    bosch_set_progress(opt, console_on_progress, &pr);
    fprintf(stderr, "model %s: %u layers x %u KV groups x %u heads/group; task %s; window %u, sink %u\n",
            b.dir, b.L, b.G, b.H, s->task ? s->task : "niah", effective_window(s), s->sink);
    rc = console_run(opt, &pr, EXIT_STOPPED);
    const int search_rc = rc;
    if (rc == INT32_MIN) {
        errorf("cannot start the search thread");
        goto out;
    }
    if (bosch_is_error(rc)) {
        status = opt_fail(rc, "search", opt);
        if (rc == BOSCH_E_EVALUATOR)
            errorf("evaluator: %s", bosch_torch_evaluator_last_error(b.e));
        goto out;
    }
    if ((rc = bosch_get_result(opt, &res))) {
        status = opt_fail(rc, "result", opt);
        goto out;
    }
    if (!bosch_result_feasible(res)) {
        errorf("the search stopped before any mask with the target ratio was evaluated; "
               "nothing written");
        status = search_rc == BOSCH_FORCED_STOP || search_rc == BOSCH_TIME_REACHED ? EXIT_STOPPED
                                                                                 : EXIT_ERROR;
        goto out;
    }
    int stop = bosch_result_status(res);
    snprintf(o.method, sizeof o.method, "bosch");
    snprintf(o.model, sizeof o.model, "%s", b.dir);
    o.L = b.L;
    o.G = b.G;
    o.H = b.H;
    o.mask = malloc((size_t)b.L * b.G);
    if (!o.mask) {
        errorf("out of memory");
        goto out;
    }
    bosch_result_mask(res, o.mask, (size_t)b.L * b.G);
    o.score = bosch_result_score(res);
    o.normalized = bosch_result_normalized_score(res);
    o.objective = bosch_result_objective(res);
    o.s_full = bosch_result_anchor(res, 0);
    o.s_swa = bosch_result_anchor(res, 1);
    o.target_ratio = bosch_problem_target_ratio(prob);
    o.status = bosch_err_name(stop);
    for (int i = 0; i < BOSCH_STAGE_COUNT; i++)
        o.evals[i] = bosch_result_evaluations(res, i);
    o.evals[BOSCH_STAGE_COUNT] = bosch_result_evaluations(res, -1);
    o.replayed = bosch_result_replayed(res);
    o.stage_counts = 1;
    if (write_outputs(&o, s))
        goto out;
    char *hp = path_with(s->out, ".history.jsonl");
    if (!hp || (rc = bosch_result_write_history(res, hp))) {
        errorf("cannot write %s.history.jsonl", s->out);
        free(hp);
        goto out;
    }
    free(hp);
    print_picture(&o);
    print_scores(&o);
    printf("evaluations %llu (anchors %llu, probe %llu, alloc %llu, group %llu; replayed %llu), "
           "status %s\nwrote %s.json, %s.tsv, %s.svg, %s.history.jsonl\n",
           (unsigned long long)o.evals[BOSCH_STAGE_COUNT], (unsigned long long)o.evals[0],
           (unsigned long long)o.evals[1], (unsigned long long)o.evals[2],
           (unsigned long long)o.evals[3], (unsigned long long)o.replayed, o.status, s->out,
           s->out, s->out, s->out);
    if (search_rc == BOSCH_FORCED_STOP || search_rc == BOSCH_TIME_REACHED ||
        stop == BOSCH_FORCED_STOP || stop == BOSCH_TIME_REACHED) {
        if (s->journal)
            fprintf(stderr, "stopped; rerun with --journal %s to resume\n", s->journal);
        status = EXIT_STOPPED;
    } else {
        status = EXIT_OK;
    }
out:
    free(o.mask);
    bosch_result_free(res);
    bosch_optimizer_free(opt);
    bosch_problem_free(prob);
    backend_free(&b);
    return status;
}

/* The backend scorer behind a static-score baseline kind, or -1. */
static int scorer_of(const char *kind)
{
    for (int k = BOSCH_TORCH_SCORER_LOCALITY; k <= BOSCH_TORCH_SCORER_FISHER; k++)
        if (!strcmp(kind, bosch_torch_scorer_name(k)))
            return k;
    return -1;
}

static int cmd_baseline(struct settings *s)
{
    struct backend b;
    int status = EXIT_ERROR;
    bosch_problem *prob = NULL;
    uint8_t *masks = NULL;
    double *scores = NULL, *importance = NULL, *unit_scores = NULL;
    FILE *hist = NULL;
    char *hp = NULL;
    struct outcome o;
    memset(&o, 0, sizeof o);
    if (backend_open(s, &b))
        goto out;
    size_t units = (size_t)b.L * b.G;
    prob = bosch_torch_model_problem(b.m);
    masks = calloc(units + 2, units);
    scores = calloc(units + 2, sizeof *scores);
    importance = calloc(units, sizeof *importance);
    o.mask = calloc(units, 1);
    hp = path_with(s->out, ".history.jsonl");
    if (!prob || !masks || !scores || !importance || !o.mask || !hp) {
        errorf("out of memory");
        goto out;
    }
    int rc = bosch_problem_set_target_ratio(prob, s->ratio);
    if (rc) {
        status = opt_fail(rc, "ratio", NULL);
        goto out;
    }
    hist = fopen(hp, "w");
    if (!hist) {
        errorf("cannot write %s: %s", hp, strerror(errno));
        goto out;
    }
    /* anchors: all full (mask 0), all SWA (mask 1) */
    memset(masks + units, 1, units);
    if (score_masks(&b, masks, 2, scores))
        goto out;
    o.s_full = scores[0];
    o.s_swa = scores[1];
    history_line(hist, 0, "anchors", scores[0], o.s_full, o.s_swa, masks, units);
    history_line(hist, 1, "anchors", scores[1], o.s_full, o.s_swa, masks + units, units);
    size_t nevals = 2;
    if (!strcmp(s->kind, "ablation")) {
        memset(masks, 0, units * units);
        for (size_t u = 0; u < units; u++)
            masks[u * units + u] = 1;
        if (score_masks(&b, masks, units, scores))
            goto out;
        for (size_t u = 0; u < units; u++) {
            importance[u] = o.s_full - scores[u];
            history_line(hist, nevals++, "ablation", scores[u], o.s_full, o.s_swa,
                         masks + u * units, units);
        }
        rc = bosch_baseline_static(prob, importance, o.mask);
    } else if (scorer_of(s->kind) >= 0) {
        char err[1024] = "";
        unit_scores = calloc(units, sizeof *unit_scores);
        if (!unit_scores) {
            errorf("out of memory");
            goto out;
        }
        rc = bosch_torch_scores(b.m, b.t, scorer_of(s->kind), effective_window(s), s->sink, NULL,
                                unit_scores, err, sizeof err);
        if (rc) {
            errorf("%s scores: %s", s->kind, *err ? err : bosch_strerror(rc));
            goto out;
        }
        rc = bosch_baseline_static(prob, unit_scores, o.mask);
    } else {
        int pat = !strcmp(s->kind, "rand") ? BOSCH_LAYERS_RAND
                  : !strcmp(s->kind, "intr") ? BOSCH_LAYERS_INTR : BOSCH_LAYERS_BME;
        rc = bosch_baseline_layers(prob, pat, s->seed, o.mask);
    }
    if (rc) {
        status = opt_fail(rc, "baseline", NULL);
        goto out;
    }
    if (score_masks(&b, o.mask, 1, scores))
        goto out;
    o.score = scores[0];
    history_line(hist, nevals++, "baseline", o.score, o.s_full, o.s_swa, o.mask, units);
    if (fclose(hist)) {
        hist = NULL;
        errorf("cannot write %s", hp);
        goto out;
    }
    hist = NULL;
    snprintf(o.method, sizeof o.method, "baseline:%s", s->kind);
    snprintf(o.model, sizeof o.model, "%s", b.dir);
    o.L = b.L;
    o.G = b.G;
    o.H = b.H;
    o.normalized = o.s_full > o.s_swa ? (o.score - o.s_swa) / (o.s_full - o.s_swa) : NAN;
    o.objective = NAN;
    o.target_ratio = bosch_problem_target_ratio(prob);
    o.status = "BOSCH_DONE";
    o.evals[BOSCH_STAGE_COUNT] = nevals;
    o.unit_scores = unit_scores ? unit_scores : !strcmp(s->kind, "ablation") ? importance : NULL;
    if (write_outputs(&o, s))
        goto out;
    print_picture(&o);
    print_scores(&o);
    printf("evaluations %zu\nwrote %s.json, %s.tsv, %s.svg, %s.history.jsonl\n", nevals, s->out,
           s->out, s->out, s->out);
    status = EXIT_OK;
out:
    if (hist)
        fclose(hist);
    free(hp);
    free(o.mask);
    free(masks);
    free(scores);
    free(importance);
    free(unit_scores);
    bosch_problem_free(prob);
    backend_free(&b);
    return status;
}

static int cmd_eval(struct settings *s, struct outcome *o_)
{
    struct outcome o = *o_;
    struct backend b;
    int status = EXIT_ERROR;
    uint8_t *masks = NULL;
    if (backend_open(s, &b))
        goto out;
    if (b.L != o.L || b.G != o.G || b.H != o.H) {
        errorf("%s: mask shape %u x %u x %u differs from the model's %u x %u x %u "
               "(layers x KV groups x heads/group)",
               s->mask, o.L, o.G, o.H, b.L, b.G, b.H);
        goto out;
    }
    size_t units = (size_t)b.L * b.G;
    masks = calloc(3, units);
    if (!masks) {
        errorf("out of memory");
        goto out;
    }
    memcpy(masks, o.mask, units);
    memset(masks + 2 * units, 1, units);
    double sc[3];
    if (score_masks(&b, masks, 3, sc))
        goto out;
    printf("mask %s (%s), SWA ratio %.4f, task %s, metric %s, window %u, sink %u\n", s->mask,
           o.method, (double)swa_units(&o) / units, s->task ? s->task : "niah", s->metric,
           effective_window(s), s->sink);
    printf("score %.6g (full %.6g, all-SWA %.6g)", sc[0], sc[1], sc[2]);
    if (sc[1] > sc[2])
        printf(", normalised %.4f", (sc[0] - sc[2]) / (sc[1] - sc[2]));
    printf("\n");
    status = EXIT_OK;
out:
    free(masks);
    free(o.mask);
    backend_free(&b);
    return status;
}

/* Settings a model directory may suggest in bosch.json (all optional):
 *   {"calib": "calib.jsonl", "heldout": "heldout.jsonl", "window": 32,
 *    "sink": 4, "metric": "exact", "budget": 300}
 * calib is the default task of search and baseline, heldout that of eval
 * (paths relative to the directory). Command-line options win. 0 or
 * EXIT_ERROR after a message. */
static int apply_model_defaults(struct settings *s, const char *dir, int for_eval)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/bosch.json", dir) >= (int)sizeof path) {
        errorf("model path too long");
        return EXIT_ERROR;
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return 0; /* no suggestions: plain checkpoint */
    json_object *root = json_object_from_file(path);
    if (!root || !json_object_is_type(root, json_type_object)) {
        errorf("%s: not a JSON object (%s)", path, json_util_get_last_err());
        json_object_put(root);
        return EXIT_ERROR;
    }
    int status = EXIT_ERROR;
    json_object *v;
    const char *key = for_eval ? "heldout" : "calib";
    if (!s->task && !s->niah_given && json_object_object_get_ex(root, key, &v)) {
        if (!json_object_is_type(v, json_type_string) || !*json_object_get_string(v)) {
            errorf("%s: \"%s\" must be a file name", path, key);
            goto out;
        }
        const char *f = json_object_get_string(v);
        int n = f[0] == '/' ? snprintf(s->task_buf, sizeof s->task_buf, "%s", f)
                            : snprintf(s->task_buf, sizeof s->task_buf, "%s/%s", dir, f);
        if (n >= (int)sizeof s->task_buf) {
            errorf("%s: path of \"%s\" too long", path, key);
            goto out;
        }
        s->task = s->task_buf;
    }
    struct { const char *name; unsigned *dst; int *given; unsigned lo; } nums[] = {
        {"window", &s->window, &s->window_given, 1},
        {"sink", &s->sink, &s->sink_given, 0},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        if (!json_object_object_get_ex(root, nums[i].name, &v))
            continue;
        int64_t x = json_object_get_int64(v);
        if (!json_object_is_type(v, json_type_int) || x < nums[i].lo || x > (1 << 30)) {
            errorf("%s: \"%s\" must be an integer >= %u", path, nums[i].name, nums[i].lo);
            goto out;
        }
        if (!*nums[i].given) {
            *nums[i].dst = (unsigned)x;
            *nums[i].given = 1;
        }
    }
    if (json_object_object_get_ex(root, "budget", &v)) {
        int64_t x = json_object_get_int64(v);
        if (!json_object_is_type(v, json_type_int) || x < 2) {
            errorf("%s: \"budget\" must be an integer >= 2", path);
            goto out;
        }
        if (!s->budget_given)
            s->budget = (unsigned long long)x;
    }
    if (json_object_object_get_ex(root, "metric", &v)) {
        const char *m = json_object_get_string(v);
        if (!json_object_is_type(v, json_type_string) ||
            (strcmp(m, "exact") && strcmp(m, "logprob"))) {
            errorf("%s: \"metric\" must be \"exact\" or \"logprob\"", path);
            goto out;
        }
        if (!s->metric_given)
            s->metric = !strcmp(m, "exact") ? "exact" : "logprob";
    }
    status = 0;
out:
    json_object_put(root);
    return status;
}

static int cmd_model(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    int rc = parse_args(argc, argv, &s, NULL);
    if (rc)
        return rc;
    int eval = !strcmp(argv[0], "eval");
    if (!strcmp(argv[0], "baseline") && !s.kind) {
        errorf("baseline: --kind " BASELINE_KINDS " is required");
        return EXIT_USAGE;
    }
    if (eval && !s.mask) {
        errorf("eval: --mask PREFIX.json is required");
        return EXIT_USAGE;
    }
    struct outcome o;
    memset(&o, 0, sizeof o);
    if (eval) {
        if ((rc = read_outcome(s.mask, &o)))
            return rc;
        /* Window, sink, metric (and a NIAH mask's context) default to the mask's settings. */
        if (!s.window_given && o.window) {
            s.window = o.window;
            s.window_given = 1;
        }
        if (!s.sink_given && o.have_sink) {
            s.sink = o.sink;
            s.sink_given = 1;
        }
        if (!s.metric_given && *o.metric) {
            s.metric = o.metric; /* o outlives the command */
            s.metric_given = 1;
        }
        if (!s.task && o.context) {
            s.niah = 1;
            if (!s.context_given)
                s.context = o.context;
        }
    }
    const char *dir = resolve_model(&s);
    if (!dir || apply_model_defaults(&s, dir, eval)) {
        free(o.mask);
        return EXIT_ERROR;
    }
    s.model = dir;
    if (!s.task)
        s.niah = 1;
    if (eval)
        return cmd_eval(&s, &o);
    if (!strcmp(argv[0], "search"))
        return cmd_search(&s);
    return cmd_baseline(&s);
}

#endif /* BOSCH_CLI_TORCH */

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        printf("bosch %s (libbosch %s, libtorch backend: %s)\n", BOSCH_VERSION_STRING,
               bosch_version_string(),
#ifdef BOSCH_CLI_TORCH
               "yes"
#else
               "not built"
#endif
        );
        return EXIT_OK;
    }
    if (!strcmp(cmd, "show"))
        return cmd_show(argc - 1, argv + 1);
    if (!strcmp(cmd, "search") || !strcmp(cmd, "baseline") || !strcmp(cmd, "eval"))
        return cmd_model(argc - 1, argv + 1);
    errorf("unknown command '%s' (commands: search, baseline, eval, show, help)", cmd);
    return EXIT_USAGE;
}
