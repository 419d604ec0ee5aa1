/* bosch: command-line front end of libbosch (and libbosch-torch when built).
 *
 *   bosch search   [options]            run BOSCH on a checkpoint (Qwen3, Qwen2, Llama, Mistral)
 *   bosch baseline --kind K [options]   a baseline selection (layer patterns, ablation,
 *                                       static head scores)
 *   bosch eval     --mask PREFIX.json   score a saved mask
 *   bosch show     PREFIX.json          print a saved mask
 *   bosch tokenize --tokenizer FILE      text to token ids (--decode: ids to text)
 *   bosch export   --format duo|hf ...   a saved mask as inference code loads it
 *   bosch generate --mask PREFIX.json   greedy continuation through the hybrid KV cache
 *   bosch compare  A.json B.json ...    overlap of the selections' full units
 *   bosch help | --help | --version;  bosch COMMAND --help
 *
 * One file per command (cmd_*.c) with its own option set (options.c); the
 * libtorch glue in backend.c, model directories and bosch.json in
 * model_dir.c, result files through libbosch's bosch_selection (output.c).
 * See docs/cli.md. Exit codes: 0 success, 1 runtime error, 2 usage error,
 * 3 search stopped by a signal or the time limit (outputs still written).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "options.h"

static void usage(FILE *f)
{
    fprintf(f,
        "usage: bosch <command> [options]\n"
        "commands:\n"
        "  search     select SWA heads of a model with BOSCH\n"
        "  baseline   a baseline selection: --kind KIND (below)\n"
        "  eval       score a saved mask: --mask PREFIX.json\n"
        "  show       print a saved mask: bosch show PREFIX.json\n"
        "  tokenize   text on stdin to token ids: --tokenizer tokenizer.json\n"
        "  export     a saved mask for inference code: --format duo|hf --mask PREFIX.json\n"
        "             --out DIR\n"
        "  generate   continue a prompt through the KV cache a mask leaves: --mask\n"
        "             PREFIX.json (--prompt TEXT | --task T)\n"
        "  compare    overlap of saved selections' full units: bosch compare A.json B.json\n"
        "  help       this text;  --version  versions\n"
        "'bosch <command> --help' lists the options of one command.\n");
    print_all_options(f);
}

static int version(void)
{
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

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    int model; /* runs a forward: the thread policy applies */
} commands[] = {
    {"search", cmd_search, 1},
    {"baseline", cmd_baseline, 1},
    {"eval", cmd_eval, 1},
    {"show", cmd_show, 0},
    {"tokenize", cmd_tokenize, 0},
    {"export", cmd_export, 0},
    {"generate", cmd_generate, 1},
    {"compare", cmd_compare, 0},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    /* A file size limit (ulimit -f) then fails writes with EFBIG, reported
     * like a full disk, instead of killing the process mid-run. */
    signal(SIGXFSZ, SIG_IGN);
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version"))
        return version();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(cmd, commands[i].name)) {
            if (commands[i].model)
                thread_policy_apply(argv);
            return commands[i].run(argc - 1, argv + 1);
        }
    errorf("unknown command '%s' (commands: search, baseline, eval, show, tokenize, export, generate, "
           "compare, help)", cmd);
    return EXIT_USAGE;
}
