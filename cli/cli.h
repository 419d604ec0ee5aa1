/* Shared declarations of the bosch command (cli/): exit codes, messages,
 * the settings every command fills, the commands. See docs/cli.md. */
#ifndef BOSCH_CLI_H
#define BOSCH_CLI_H

#include <bosch/bosch.h>

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_STOPPED = 3 };

/* Prints "bosch: MESSAGE\n" on stderr ("bosch: rank R: MESSAGE" after
 * errorf_rank); last_errorf() is the last MESSAGE (up to 4095 bytes). */
void errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *last_errorf(void);
void errorf_rank(int rank);

/* Reports that the model commands need libbosch-torch; returns EXIT_ERROR. */
int no_backend(const char *cmd);

/* What the options of a command set (each command reads its own part). */
struct settings {
    const char *model;   /* --model (NULL = default) */
    const char *task;    /* --task JSONL (or the model's default task) */
    int niah;            /* --niah */
    int niah_given;
    int heldout;         /* the model's held-out task is the default (eval) */
    char task_buf[4096]; /* storage of a default task path */
    unsigned context, samples, needles, key_len, value_len;
    int context_given;
    double ratio;
    unsigned window, sink;
    int window_given, sink_given, metric_given;
    unsigned long long seed;
    int seed_given;
    unsigned eval_batch;
    unsigned forward_samples; /* 0: libbosch-torch's default; an MPI job's default: 1 */
    int forward_samples_given;
    /* search: the library's options given (lib_options.h), by table name,
     * in order; values are borrowed (argv, or lib_buf for a suggestion). */
    struct { const char *name, *value; } lib[64];
    size_t n_lib;
    char lib_buf[8][32];
    size_t n_lib_buf;
    const char *priors;            /* search: a saved selection whose unit_importance guides it */
    unsigned screen_length;        /* search --screen-length (0: none) */
    const char *screen_task;       /* search --screen-task FILE (NULL: none) */
    int no_prefix_cache;
    int cache_all_full; /* --cache-all-full: the prefix cache does not follow the incumbent */
    const char *metric;
    const char *out;
    const char *kind;    /* baseline */
    const char *mask;    /* eval, show */
    const char *device;
    const char *dtype;   /* auto|f32|bf16|f16 */
    char metric_buf[16]; /* storage of a metric read from a mask file (eval) */
    const char *tokenizer; /* tokenize */
    int decode, no_special, no_add_special, skip_special;
    const char *format;  /* export: duo|hf|trtllm */
    int config_only;     /* export --config-only */
    unsigned max_seq_len; /* export --max-seq-len (trtllm; 0: the model's) */
    const char *prompt;  /* generate --prompt TEXT */
    unsigned sample;     /* generate --sample I (of the task) */
    unsigned max_new;    /* generate --max-new N (0: the task's, else 64) */
    int raw;             /* generate --raw: the prompt as plain text, no chat markup */
    int check;           /* generate --check: the masked forward's greedy tokens too */
    int job_ranks;       /* search under an MPI launcher: the job's ranks (0: one process) */
    const char *job_devices; /* and where each evaluates, "HOST:DEVICE" in rank order */
};

void settings_default(struct settings *s);

/* Model commands: re-executes the command once with the CPU thread policy's
 * environment (thread_policy.c) unless the user set it or
 * BOSCH_THREAD_POLICY=0; returns only when it does not re-execute. */
void thread_policy_apply(char **argv);

/* The window used: --window, else 128, lowered to context/4 for a NIAH task
 * shorter than 512 tokens (so that SWA differs from full attention). */
unsigned effective_window(const struct settings *s);

/* The commands (argv[0] is the command's name). Each returns an exit code. */
int cmd_search(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_generate(int argc, char **argv);
int cmd_compare(int argc, char **argv);

#endif
