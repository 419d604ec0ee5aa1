/* Option table of the bosch command and its parser (getopt_long over the
 * options of one command). */
#include "options.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "lib_options.h"
#include "numbers.h"

/* The command's own options; the library's optimizer options are added to
 * search from the library's table (lib_options.h, ids from LIB_OPTION_ID). */
enum opt_id {
    O_MODEL = 256, O_TASK, O_NIAH, O_CONTEXT, O_SAMPLES, O_NEEDLES, O_KEYLEN, O_VALLEN,
    O_RATIO, O_WINDOW, O_SINK, O_SEED, O_METRIC, O_OUT, O_KIND, O_MASK, O_DEVICE, O_EVALBATCH,
    O_NOCACHE, O_CACHEFULL, O_TOKENIZER, O_DECODE, O_NOSPECIAL, O_NOADDSPECIAL, O_SKIPSPECIAL, O_DTYPE,
    O_FORMAT, O_CONFIGONLY, O_PRIORS, O_FWDSAMPLES, O_MAXSEQ, O_PROMPT, O_SAMPLE, O_MAXNEW,
    O_RAW, O_CHECK, O_SCREENLEN, O_SCREENTASK
};

#define MODEL_CMDS (CMD_SEARCH | CMD_BASELINE | CMD_EVAL)
/* The model and task options generate takes too (not those of scoring). */
#define MODEL_GEN_CMDS (MODEL_CMDS | CMD_GENERATE)

/* Sections of the general help, in order. */
enum section {
    SEC_MODEL, SEC_SEARCH_BASELINE, SEC_SEARCH, SEC_BASELINE, SEC_MASK, SEC_TOKENIZE, SEC_EXPORT,
    SEC_GENERATE, SEC_COUNT
};
static const char *const section_title[SEC_COUNT] = {
    "model and task (search, baseline, eval; generate: the model, task, window, sink)", "search and baseline:",
    "search:", "baseline:", "eval, show, export and generate:", "tokenize:", "export:",
    "generate:",
};

struct cli_option {
    const char *name;
    int has_arg;
    int id;
    unsigned commands; /* enum command bits */
    int section;
    const char *help;  /* help line(s) after the indent; NULL: on the line before */
};

static const struct cli_option options[] = {
    {"model", required_argument, O_MODEL, MODEL_GEN_CMDS, SEC_MODEL,
     "--model DIR        a Qwen3, Qwen3-MoE, Qwen2, Llama or Mistral checkpoint\n"
     "                     (default $BOSCH_DEFAULT_MODEL, else the installed organism\n"
     "                     model)"},
    {"device", required_argument, O_DEVICE, MODEL_GEN_CMDS, SEC_MODEL,
     "--device D         auto|cpu|cuda|cuda:N (auto: CUDA when available)"},
    {"dtype", required_argument, O_DTYPE, MODEL_GEN_CMDS, SEC_MODEL,
     "--dtype T          auto|f32|bf16|f16 weights and compute (auto: bf16 on CUDA,\n"
     "                     f32 on the CPU)"},
    {"task", required_argument, O_TASK, MODEL_GEN_CMDS, SEC_MODEL,
     "--task T           ruler:NAME (RULER's needle tasks as text, generated to\n"
     "                     --context tokens: ruler:niah_single_1..3, niah_multikey_1..3,\n"
     "                     niah_multivalue, niah_multiquery), or a JSONL file of\n"
     "                     token ids ({\"prompt\":[..],\"answer\":[..]}) or of text\n"
     "                     ({\"text\"|\"messages\":..,\"answers\":[..]})"},
    {"tokenizer", required_argument, O_TOKENIZER, MODEL_GEN_CMDS | CMD_TOKENIZE, SEC_MODEL,
     "--tokenizer FILE   a Hugging Face tokenizer.json (default: the model's, if any)"},
    {"niah", no_argument, O_NIAH, MODEL_GEN_CMDS, SEC_MODEL,
     "--niah             synthetic needle-in-a-haystack task (default when no --task)"},
    {"context", required_argument, O_CONTEXT, MODEL_GEN_CMDS, SEC_MODEL,
     "--context N        NIAH/RULER prompt length in tokens, and context of the KV\n"
     "                     saving (1024)"},
    {"samples", required_argument, O_SAMPLES, MODEL_GEN_CMDS, SEC_MODEL,
     "--samples N        NIAH/RULER samples (8)"},
    {"needles", required_argument, O_NEEDLES, MODEL_GEN_CMDS, SEC_MODEL,
     "--needles N        NIAH needles per prompt (1)"},
    {"key-len", required_argument, O_KEYLEN, MODEL_GEN_CMDS, SEC_MODEL,
     "--key-len N, --value-len N   NIAH key/value tokens (2, 2)"},
    {"value-len", required_argument, O_VALLEN, MODEL_GEN_CMDS, SEC_MODEL, NULL},
    {"window", required_argument, O_WINDOW, MODEL_GEN_CMDS, SEC_MODEL,
     "--window W         sliding window (128; NIAH: at most context/4 unless given)"},
    {"sink", required_argument, O_SINK, MODEL_GEN_CMDS, SEC_MODEL, "--sink S           sink tokens (4)"},
    {"metric", required_argument, O_METRIC, MODEL_CMDS, SEC_MODEL,
     "--metric M         exact|logprob|match (exact; match: RULER's string match of\n"
     "                     a greedy continuation, text tasks only)"},
    {"seed", required_argument, O_SEED, MODEL_GEN_CMDS, SEC_MODEL,
     "--seed S           search seed and NIAH/RULER task seed (0; eval of a RULER\n"
     "                     mask: its seed + 1, a held-out set)"},
    {"eval-batch", required_argument, O_EVALBATCH, MODEL_CMDS, SEC_MODEL,
     "--eval-batch K     candidates per forward pass (1)"},
    {"forward-samples", required_argument, O_FWDSAMPLES, MODEL_CMDS, SEC_MODEL,
     "--forward-samples N  samples of a candidate per forward pass (0: a length\n"
     "                     bucket; an MPI job: 1, so that a request cut over ranks\n"
     "                     scores exactly as whole)"},
    {"no-prefix-cache", no_argument, O_NOCACHE, MODEL_CMDS, SEC_MODEL,
     "--no-prefix-cache  recompute the layers below the first SWA layer"},
    {"cache-all-full", no_argument, O_CACHEFULL, CMD_SEARCH, SEC_SEARCH,
     "--cache-all-full   prefix cache of the all-full hidden states, not of the\n"
     "                     incumbent's (candidates start at their first SWA layer)"},
    {"ratio", required_argument, O_RATIO, CMD_SEARCH | CMD_BASELINE, SEC_SEARCH_BASELINE,
     "--ratio R          target SWA ratio (0.5)"},
    {"out", required_argument, O_OUT, CMD_SEARCH | CMD_BASELINE, SEC_SEARCH_BASELINE,
     "--out PREFIX       write PREFIX.json, .tsv, .svg, .history.jsonl (bosch-mask)"},
    {"priors", required_argument, O_PRIORS, CMD_SEARCH, SEC_SEARCH,
     "--priors FILE      per-unit priors: the unit_importance saved by a static\n"
     "                     baseline (e.g. fisher) guides the search"},
    {"screen-length", required_argument, O_SCREENLEN, CMD_SEARCH, SEC_SEARCH,
     "--screen-length N  length as a fidelity: screened candidates (screen_fidelity)\n"
     "                     are scored on the same RULER samples rendered at N\n"
     "                     tokens (ruler:NAME tasks only; N < --context); the\n"
     "                     option screen_fidelity is its share of the prompt\n"
     "                     tokens (about N/context) unless given"},
    {"screen-task", required_argument, O_SCREENTASK, CMD_SEARCH, SEC_SEARCH,
     "--screen-task FILE the same as --screen-length for a task file: FILE holds\n"
     "                     the task's samples rendered shorter (checked: as many,\n"
     "                     the same answers, shorter prompts); the option\n"
     "                     screen_fidelity is its share of the tokens unless given"},
    {"kind", required_argument, O_KIND, CMD_BASELINE, SEC_BASELINE,
     "--kind K           baseline: rand|intr|bme (layer patterns), ablation\n"
     "                     (single-unit SWA drops), layer-probe (each layer alone\n"
     "                     SWA; with --metric logprob the NLL probe),\n"
     "                     locality|retrieval|echo-induction|fisher|duo-on-the-fly\n"
     "                     (static head scores; duo-on-the-fly is kvpress's)"},
    {"mask", required_argument, O_MASK, CMD_EVAL | CMD_SHOW | CMD_EXPORT | CMD_GENERATE, SEC_MASK,
     "--mask FILE        the saved mask (PREFIX.json; show and export also take it as\n"
     "                     argument)"},
    {"decode", no_argument, O_DECODE, CMD_TOKENIZE, SEC_TOKENIZE,
     "--decode           read a JSON array of ids, print their text"},
    {"no-special", no_argument, O_NOSPECIAL, CMD_TOKENIZE, SEC_TOKENIZE,
     "--no-special       encode special tokens in the text as plain text"},
    {"no-add-special", no_argument, O_NOADDSPECIAL, CMD_TOKENIZE, SEC_TOKENIZE,
     "--no-add-special   add no BOS/EOS (by default those of the tokenizer's\n"
     "                     post-processor are added, as Hugging Face's encode does)"},
    {"skip-special", no_argument, O_SKIPSPECIAL, CMD_TOKENIZE, SEC_TOKENIZE,
     "--skip-special     with --decode: leave special tokens out"},
    {"format", required_argument, O_FORMAT, CMD_EXPORT, SEC_EXPORT,
     "--format F         duo: DIR/full_attention_heads.tsv + config.json (DuoAttention,\n"
     "                     kvpress); hf: DIR/config.json with per-layer sliding windows\n"
     "                     (a head-level mask: its layer projection) + links to the\n"
     "                     model's other files; trtllm: FILE.yaml, TensorRT-LLM's\n"
     "                     per-layer max_attention_window (--extra_llm_api_options)"},
    {"out", required_argument, O_OUT, CMD_EXPORT, SEC_EXPORT,
     "--out DIR          the directory to write (made when missing; the files written\n"
     "                     there are replaced); trtllm: the file"},
    {"model", required_argument, O_MODEL, CMD_EXPORT, SEC_EXPORT,
     "--model DIR        hf: the model whose config.json to extend; trtllm: whose\n"
     "                     max_position_embeddings is max_seq_len (default: the\n"
     "                     mask's model.path); its shape must be the mask's"},
    {"max-seq-len", required_argument, O_MAXSEQ, CMD_EXPORT, SEC_EXPORT,
     "--max-seq-len N    trtllm: the engine's max_seq_len, the full layers' window\n"
     "                     (default: the model's max_position_embeddings)"},
    {"config-only", no_argument, O_CONFIGONLY, CMD_EXPORT, SEC_EXPORT,
     "--config-only      hf: write config.json (and bosch-mask.json), link nothing"},
    {"prompt", required_argument, O_PROMPT, CMD_GENERATE, SEC_GENERATE,
     "--prompt TEXT      the prompt (needs the model's tokenizer): one user turn in\n"
     "                     the chat format of the tokenizer's family (Qwen3's:\n"
     "                     non-thinking; ChatML; Llama 3's) (default: the task's sample)"},
    {"raw", no_argument, O_RAW, CMD_GENERATE, SEC_GENERATE,
     "--raw              --prompt as plain text, without chat markup"},
    {"sample", required_argument, O_SAMPLE, CMD_GENERATE, SEC_GENERATE,
     "--sample I         which sample of the task to continue (0)"},
    {"max-new", required_argument, O_MAXNEW, CMD_GENERATE, SEC_GENERATE,
     "--max-new N        new tokens at most (default: the sample's max_new_tokens, or\n"
     "                     its answer's length + 16; --prompt: 64; cut to what the\n"
     "                     model's max_position_embeddings leaves); a special token ends\n"
     "                     the continuation earlier"},
    {"check", no_argument, O_CHECK, CMD_GENERATE, SEC_GENERATE,
     "--check            also continue greedily by re-running the masked forward over\n"
     "                     the whole sequence per token; exit 1 unless the tokens agree"},
};
#define N_OPTIONS (sizeof options / sizeof options[0])

struct command_help {
    enum command cmd;
    const char *usage, *what;
};
static const struct command_help helps[] = {
    {CMD_SEARCH, "bosch search [options]", "select SWA heads of a model with BOSCH"},
    {CMD_BASELINE, "bosch baseline --kind KIND [options]",
     "a baseline selection at --ratio, scored on the task"},
    {CMD_EVAL, "bosch eval --mask PREFIX.json [options]",
     "score a saved mask (and the all-full and all-SWA anchors)"},
    {CMD_SHOW, "bosch show PREFIX.json", "print a saved mask (no model needed)"},
    {CMD_TOKENIZE, "bosch tokenize --tokenizer FILE [--decode] < INPUT",
     "UTF-8 text on stdin to one JSON array of ids on stdout (--decode: the reverse)"},
    {CMD_EXPORT, "bosch export --format duo|hf --mask PREFIX.json --out DIR [--model DIR]",
     "a saved mask as inference code loads it (no model backend needed; docs/export.md)"},
    {CMD_COMPARE, "bosch compare A.json B.json [C.json ...]",
     "the overlap of the selections' full units (Jaccard), per layer and overall; no model\n"
     "needed"},
    {CMD_GENERATE, "bosch generate [--mask PREFIX.json] [--prompt TEXT | --task T] [options]",
     "greedy continuation through a KV cache that keeps what the mask lets each KV head\n"
     "see (no --mask: full attention), with the KV bytes held and decode speed"},
};

static const char exit_codes[] =
    "exit codes: 0 ok, 1 runtime error, 2 usage error, 3 stopped (signal/time limit)\n";

static const char lib_title[] =
    "search, the library's optimizer options (bosch_set_option; default in parentheses):";

void print_all_options(FILE *f)
{
    for (int sec = 0; sec < SEC_COUNT; sec++) {
        fprintf(f, "%s\n", section_title[sec]);
        for (size_t i = 0; i < N_OPTIONS; i++)
            if (options[i].section == sec && options[i].help)
                fprintf(f, "  %s\n", options[i].help);
        if (sec == SEC_SEARCH) {
            fprintf(f, "%s\n", lib_title);
            print_lib_options(f);
        }
    }
    fputs(exit_codes, f);
}

static void print_command_help(FILE *f, enum command cmd)
{
    const struct command_help *h = NULL;
    for (size_t i = 0; i < sizeof helps / sizeof helps[0]; i++)
        if (helps[i].cmd == cmd)
            h = &helps[i];
    fprintf(f, "usage: %s\n%s\n", h->usage, h->what);
    for (int model = 1; model >= 0; model--) {
        int header = 0;
        for (size_t i = 0; i < N_OPTIONS; i++) {
            if (!(options[i].commands & cmd) || (options[i].section == SEC_MODEL) != model ||
                !options[i].help)
                continue;
            if (!header++)
                fprintf(f, "%s\n", model ? "model and task:" : "options:");
            fprintf(f, "  %s\n", options[i].help);
        }
        if (!model && !header)
            fprintf(f, "options:\n");
    }
    fprintf(f, "  -h, --help         this text\n");
    if (cmd == CMD_SEARCH) {
        fprintf(f, "%s\n", lib_title);
        print_lib_options(f);
    }
    fputs(exit_codes, f);
}

static int baseline_kind_known(const char *k)
{
    static const char *const kinds[] = {"rand",      "intr",           "bme",
                                        "ablation",  "layer-probe",    "locality",
                                        "retrieval", "echo-induction", "fisher",
                                        "duo-on-the-fly"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (!strcmp(k, kinds[i]))
            return 1;
    return 0;
}

/* auto, cpu, cuda or cuda:N (N: 1 to 4 digits); whether N is a visible
 * device is the backend's check. */
static int device_known(const char *d)
{
    if (!strcmp(d, "auto") || !strcmp(d, "cpu") || !strcmp(d, "cuda"))
        return 1;
    if (strncmp(d, "cuda:", 5))
        return 0;
    size_t n = strlen(d + 5);
    return n >= 1 && n <= 4 && strspn(d + 5, "0123456789") == n;
}

/* Model and task options; the problem with the value, or NULL. */
static const char *apply_model_option(struct settings *s, int id, const char *arg)
{
    switch (id) {
    case O_MODEL: s->model = arg; return NULL;
    case O_TASK: s->task = arg; return NULL;
    case O_NIAH: s->niah = s->niah_given = 1; return NULL;
    case O_CONTEXT:
        s->context_given = 1;
        return parse_uint(arg, 8, 1u << 24, &s->context) ? "--context (8..16777216)" : NULL;
    case O_SAMPLES: return parse_uint(arg, 1, 1u << 16, &s->samples) ? "--samples (1..65536)" : NULL;
    case O_NEEDLES: return parse_uint(arg, 1, 1024, &s->needles) ? "--needles (1..1024)" : NULL;
    case O_KEYLEN: return parse_uint(arg, 1, 64, &s->key_len) ? "--key-len (1..64)" : NULL;
    case O_VALLEN: return parse_uint(arg, 1, 64, &s->value_len) ? "--value-len (1..64)" : NULL;
    case O_WINDOW:
        s->window_given = 1;
        return parse_uint(arg, 1, 1u << 30, &s->window) ? "--window (>= 1)" : NULL;
    case O_SINK:
        s->sink_given = 1;
        return parse_uint(arg, 0, 1u << 30, &s->sink) ? "--sink (>= 0)" : NULL;
    case O_SEED:
        s->seed_given = 1;
        return parse_ull(arg, &s->seed) ? "--seed" : NULL;
    case O_METRIC:
        s->metric = arg;
        s->metric_given = 1;
        return strcmp(arg, "exact") && strcmp(arg, "logprob") && strcmp(arg, "match")
                   ? "--metric (exact|logprob|match)" : NULL;
    case O_DEVICE:
        s->device = arg;
        return device_known(arg) ? NULL : "--device (auto|cpu|cuda|cuda:N)";
    case O_DTYPE:
        s->dtype = arg;
        return strcmp(arg, "auto") && strcmp(arg, "f32") && strcmp(arg, "bf16") &&
                       strcmp(arg, "f16")
                   ? "--dtype (auto|f32|bf16|f16)" : NULL;
    case O_EVALBATCH:
        return parse_uint(arg, 1, 4096, &s->eval_batch) ? "--eval-batch (1..4096)" : NULL;
    case O_FWDSAMPLES:
        s->forward_samples_given = 1;
        return parse_uint(arg, 0, 1u << 16, &s->forward_samples) ? "--forward-samples (0..65536)"
                                                                  : NULL;
    case O_NOCACHE: s->no_prefix_cache = 1; return NULL;
    case O_CACHEFULL: s->cache_all_full = 1; return NULL;
    }
    return NULL;
}

/* The other options; the problem with the value, or NULL. */
static const char *apply_run_option(struct settings *s, int id, const char *arg)
{
    switch (id) {
    case O_RATIO:
        return parse_double(arg, &s->ratio) || s->ratio < 0 || s->ratio > 1 ? "--ratio (0..1)" : NULL;
    case O_OUT: s->out = arg; return *arg ? NULL : "--out";
    case O_KIND: s->kind = arg; return baseline_kind_known(arg) ? NULL : "--kind (" BASELINE_KINDS ")";
    case O_MASK: s->mask = arg; return NULL;
    case O_PRIORS: s->priors = arg; return *arg ? NULL : "--priors";
    case O_SCREENTASK: s->screen_task = arg; return *arg ? NULL : "--screen-task";
    case O_SCREENLEN:
        return parse_uint(arg, 8, 1u << 24, &s->screen_length) ? "--screen-length (8..16777216)"
                                                               : NULL;
    case O_TOKENIZER: s->tokenizer = arg; return *arg ? NULL : "--tokenizer";
    case O_DECODE: s->decode = 1; return NULL;
    case O_NOSPECIAL: s->no_special = 1; return NULL;
    case O_NOADDSPECIAL: s->no_add_special = 1; return NULL;
    case O_SKIPSPECIAL: s->skip_special = 1; return NULL;
    case O_FORMAT:
        s->format = arg;
        return strcmp(arg, "duo") && strcmp(arg, "hf") && strcmp(arg, "trtllm")
                   ? "--format (duo|hf|trtllm)" : NULL;
    case O_MAXSEQ:
        return parse_uint(arg, 1, 0x7fffffffu, &s->max_seq_len) ? "--max-seq-len (1..2^31-1)"
                                                                 : NULL;
    case O_CONFIGONLY: s->config_only = 1; return NULL;
    case O_PROMPT: s->prompt = arg; return NULL;
    case O_RAW: s->raw = 1; return NULL;
    case O_SAMPLE: return parse_uint(arg, 0, 1u << 16, &s->sample) ? "--sample (0..65536)" : NULL;
    case O_MAXNEW:
        return parse_uint(arg, 1, 1u << 20, &s->max_new) ? "--max-new (1..1048576)" : NULL;
    case O_CHECK: s->check = 1; return NULL;
    }
    return apply_model_option(s, id, arg);
}

/* getopt_long's table of the options of `cmd` (and --help). */
static void build_longopts(enum command cmd, struct option *lo)
{
    size_t n = 0;
    for (size_t i = 0; i < N_OPTIONS; i++)
        if (options[i].commands & cmd)
            lo[n++] = (struct option){options[i].name, options[i].has_arg, NULL, options[i].id};
    if (cmd == CMD_SEARCH)
        n += lib_options_longopts(lo + n);
    lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
    lo[n] = (struct option){NULL, 0, NULL, 0};
}

/* The positional argument, then the checks across options. */
static int finish_args(int argc, char **argv, struct settings *s, const char **positional)
{
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
    if (s->prompt && (s->task || s->niah)) {
        errorf("%s: --prompt and --task/--niah exclude each other", argv[0]);
        return EXIT_USAGE;
    }
    return 0;
}

/* The options of `cmd` (getopt_long, which moves the positional arguments
 * after them: optind is the first). 0, or an exit code after a message. */
static int parse_options(enum command cmd, int argc, char **argv, struct settings *s);

int parse_command(enum command cmd, int argc, char **argv, struct settings *s,
                  const char **positional)
{
    int rc = parse_options(cmd, argc, argv, s);
    return rc ? rc : finish_args(argc, argv, s, positional);
}

int parse_command_files(enum command cmd, int argc, char **argv, struct settings *s, int *first)
{
    int rc = parse_options(cmd, argc, argv, s);
    *first = optind;
    return rc;
}

static int parse_options(enum command cmd, int argc, char **argv, struct settings *s)
{
    struct option *longopts = malloc((N_OPTIONS + lib_option_count() + 2) * sizeof *longopts);
    if (!longopts) {
        errorf("out of memory");
        return EXIT_ERROR;
    }
    build_longopts(cmd, longopts);
    int c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        if (c == 'h') {
            free(longopts);
            print_command_help(stdout, cmd);
            exit(EXIT_OK);
        }
        int status = 0;
        if (c == ':') {
            errorf("%s: option '%s' needs a value (see 'bosch help')", argv[0], argv[optind - 1]);
            status = EXIT_USAGE;
        } else if (c == '?') {
            errorf("%s: unknown option '%s' (see 'bosch help')", argv[0], argv[optind - 1]);
            status = EXIT_USAGE;
        } else {
            const char *bad = c >= LIB_OPTION_ID ? lib_option_apply(s, c, optarg)
                                                 : apply_run_option(s, c, optarg);
            if (bad) {
                errorf("%s: bad value '%s' for %s", argv[0], optarg, bad);
                status = EXIT_USAGE;
            }
        }
        if (status) {
            free(longopts);
            return status;
        }
    }
    free(longopts);
    return 0;
}
