/* bosch export --format duo|hf|trtllm --mask PREFIX.json --out DIR [--model DIR]:
 * a saved mask in the form inference code loads (docs/export.md); no model
 * backend needed.
 *   duo  DIR/full_attention_heads.tsv + DIR/config.json (DuoAttention, kvpress)
 *   hf   DIR/config.json: the model's config with a sliding window on the
 *        SWA layers (of the mask, or of its layer projection when the mask
 *        is head-level) where its family's config can say so (Qwen3, Qwen2
 *        per layer; Qwen3-MoE, Mistral all or none; Llama none; else
 *        refused before anything is written), DIR/bosch-mask.json (that layer-level mask) and a
 *        link to every other file of the model, so DIR loads as a model.
 *   trtllm FILE.yaml: TensorRT-LLM's per-layer max_attention_window of that
 *        layer-level mask (trtllm-serve --extra_llm_api_options). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "output.h"

/* "DIR/NAME" into buf; 0, or -1 after a message when it does not fit. */
static int join(char *buf, size_t n, const char *dir, const char *name)
{
    if (snprintf(buf, n, "%s/%s", dir, name) < (int)n)
        return 0;
    errorf("export: path too long: %s/%s", dir, name);
    return -1;
}

/* The library's message without its function name (it names the file). */
static const char *lib_error(const bosch_selection *sel)
{
    const char *m = bosch_selection_last_error(sel), *c = strstr(m, ": ");
    return !strncmp(m, "bosch_selection_", 16) && c ? c + 2 : m;
}

/* The shortest text that reads back as `v` (what Python's repr prints). */
static void shortest(char *buf, size_t n, double v)
{
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void print_saving(const char *what, const bosch_selection *sel, const char *count)
{
    uint64_t ctx, win, sink;
    double frac;
    printf("%-17s SWA ratio %.4f (%s), ", what, bosch_selection_ratio(sel), count);
    if (bosch_selection_kv_saving(sel, &ctx, &win, &sink, &frac) == BOSCH_OK)
        printf("KV saving %.4f (context %llu, window %llu, sink %llu)\n", frac,
               (unsigned long long)ctx, (unsigned long long)win, (unsigned long long)sink);
    else
        printf("KV saving unknown\n");
}

/* ------------------------------------------------------------------------ */
/* duo                                                                       */
/* ------------------------------------------------------------------------ */
static int export_duo(const bosch_selection *sel, const char *out)
{
    if (bosch_selection_export_duo(sel, out) != BOSCH_OK) {
        errorf("export: %s", lib_error(sel));
        return EXIT_ERROR;
    }
    uint32_t L = bosch_selection_layers(sel), G = bosch_selection_kv_groups(sel);
    uint64_t win = 0, sink = 0;
    bosch_selection_kv_saving(sel, NULL, &win, &sink, NULL);
    char r[32];
    shortest(r, sizeof r, bosch_selection_ratio(sel));
    printf("wrote %s/full_attention_heads.tsv (%u layers x %u KV heads, 1 = full, 0 = streaming)\n",
           out, L, G);
    printf("wrote %s/config.json (sink_size %llu, recent_size %llu)\n", out,
           (unsigned long long)sink, (unsigned long long)win);
    char count[64];
    snprintf(count, sizeof count, "%zu of %zu KV heads", bosch_selection_swa_units(sel),
             bosch_selection_units(sel));
    print_saving("streaming heads:", sel, count);
    printf("DuoAttention: load_attn_pattern(\"%s\"), then sparsify_attention_heads(heads, "
           "sparsity=%s)\n", out, r);
    printf("kvpress: DuoAttentionPress(head_compression_ratio=%s) on this pattern\n", r);
    /* np.loadtxt squeezes a single row or column (docs/export.md). */
    if (L == 1 || G == 1)
        fprintf(stderr, "bosch: export: warning: with %s np.loadtxt gives a 1-D array, which %s "
                        "index%s wrongly; load the file with np.loadtxt(..., ndmin=2)\n",
                L == 1 ? "1 layer" : "1 KV head per layer",
                L == 1 ? "DuoAttention's and kvpress's loaders" : "kvpress's DuoAttentionPress",
                L == 1 ? "" : "es");
    return EXIT_OK;
}

/* ------------------------------------------------------------------------ */
/* hf                                                                        */
/* ------------------------------------------------------------------------ */
/* The side-by-side line of a head-level mask and its projection, and what
 * the export does for each layer; `out` (NULL: no such hint): the
 * directory whose bosch-mask.json measures what is served. */
static void report_layers(const bosch_selection *sel, const bosch_selection *lsel,
                          const char *engine, const char *out)
{
    uint32_t L = bosch_selection_layers(lsel), G = bosch_selection_kv_groups(lsel);
    uint8_t *m = malloc(bosch_selection_units(lsel));
    if (!m || bosch_selection_mask(lsel, m, bosch_selection_units(lsel))) {
        free(m);
        return;
    }
    uint32_t sliding = 0, first = L, suffix = 1;
    for (uint32_t l = 0; l < L; l++) {
        int swa = m[(size_t)l * G] != 0;
        sliding += swa;
        if (swa && first == L)
            first = l;
        if (first < l && !swa)
            suffix = 0;
    }
    char count[64];
    int head_level = !bosch_selection_is_layer_level(sel);
    if (head_level) {
        snprintf(count, sizeof count, "%zu of %zu KV heads", bosch_selection_swa_units(sel),
                 bosch_selection_units(sel));
        print_saving("head-level mask:", sel, count);
    }
    snprintf(count, sizeof count, "%u of %u layers", sliding, L);
    if (!head_level && sel != lsel)
        print_saving("layer-level mask:", sel, count);
    print_saving(head_level ? "layer projection:" : sel != lsel ? "served (no sink):"
                                                                : "layer-level mask:",
                 lsel, count);
    printf("sliding layers:");
    for (uint32_t l = 0; l < L; l++)
        if (m[(size_t)l * G])
            printf(" %u", l);
    printf("%s\n", sliding ? "" : " none");
    free(m);
    uint64_t sink = 0;
    bosch_selection_kv_saving(sel, NULL, NULL, &sink, NULL);
    if (head_level && out)
        printf("the projection's score is unmeasured; measure it with: bosch eval --model %s "
               "--mask %s/bosch-mask.json\n", out, out);
    else if (head_level)
        printf("the projection's score is unmeasured (bosch export --format hf writes it as "
               "bosch-mask.json, to measure with bosch eval)\n");
    else if (sink && out)
        printf("the mask was scored with %llu sink tokens; %s sliding layers keep none: measure "
               "it with bosch eval --model %s --mask %s/bosch-mask.json\n",
               (unsigned long long)sink, engine, out, out);
    else if (sink)
        printf("the mask was scored with %llu sink tokens; %s sliding layers keep none (a "
               "different attention: measure it)\n", (unsigned long long)sink, engine);
    if (sliding && !suffix && out)
        printf("note: the sliding layers are not the last ones; a reader that ignores "
               "layer_types and slides every layer from max_window_layers (%u) on would slide "
               "more\n", first);
}

static const char *hf_model_dir(const struct settings *s, const bosch_selection *sel,
                                char *config, size_t n)
{
    const char *model = s->model ? s->model : bosch_selection_model_path(sel);
    if (!model || !*model) {
        errorf("export: --format %s needs the model's config.json: give --model DIR%s (the "
               "mask names no model)", s->format,
               strcmp(s->format, "trtllm") ? "" : " or --max-seq-len N");
        return NULL;
    }
    if (join(config, n, model, "config.json"))
        return NULL;
    if (access(config, R_OK) != 0) {
        errorf("export: cannot read %s: %s%s", config, strerror(errno),
               s->model ? "" : " (the mask's model; give --model DIR)");
        return NULL;
    }
    return model;
}

/* What an engine serves: the projection (sink 0, unmeasured), or the mask
 * itself when it is layer-level and was scored without sink tokens already.
 * *proj holds what to free; NULL after a message. */
static const bosch_selection *served(const bosch_selection *sel, bosch_selection **proj)
{
    uint64_t sink = 0;
    bosch_selection_kv_saving(sel, NULL, NULL, &sink, NULL);
    *proj = NULL;
    if (bosch_selection_is_layer_level(sel) && !sink)
        return sel;
    if (!(*proj = bosch_selection_project_layers(sel)))
        errorf("export: %s", bosch_create_error());
    return *proj;
}

static int export_hf(const struct settings *s, const bosch_selection *sel)
{
    char config[PATH_MAX];
    const char *model = hf_model_dir(s, sel, config, sizeof config);
    if (!model)
        return EXIT_ERROR;
    bosch_selection *proj;
    const bosch_selection *lsel = served(sel, &proj);
    if (!lsel)
        return EXIT_ERROR;
    size_t links = 0, kept = 0;
    int rc = EXIT_OK;
    if (bosch_selection_export_hf_dir(lsel, model, s->out,
                                      s->config_only ? BOSCH_EXPORT_CONFIG_ONLY : 0, &links,
                                      &kept) != BOSCH_OK) {
        errorf("export: %s", lib_error(lsel));
        rc = EXIT_ERROR;
    }
    if (!rc && kept)
        fprintf(stderr, "bosch: export: kept %zu file%s of %s that %s not a link (remove %s "
                        "to link the model's)\n",
                kept, kept == 1 ? "" : "s", s->out, kept == 1 ? "is" : "are",
                kept == 1 ? "it" : "them");
    if (!rc) {
        printf("wrote %s/config.json (from %s, with the window members its family reads: "
               "docs/export.md)\n", s->out, config);
        printf("wrote %s/bosch-mask.json (the served layer-level mask%s)\n", s->out,
               lsel == sel ? "" : ", sink 0, score unmeasured");
        if (!s->config_only)
            printf("linked %zu file%s of %s into %s\n", links, links == 1 ? "" : "s", model,
                   s->out);
        report_layers(sel, lsel, "Hugging Face's", s->out);
    }
    bosch_selection_free(proj);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* trtllm                                                                    */
/* ------------------------------------------------------------------------ */
static int export_trtllm(const struct settings *s, const bosch_selection *sel)
{
    /* A model given is read (its shape checked) even with --max-seq-len. */
    char config[PATH_MAX] = "";
    if ((s->model || !s->max_seq_len) && !hf_model_dir(s, sel, config, sizeof config))
        return EXIT_ERROR;
    bosch_selection *proj;
    const bosch_selection *lsel = served(sel, &proj);
    if (!lsel)
        return EXIT_ERROR;
    int rc = EXIT_OK;
    if (bosch_selection_export_trtllm(lsel, *config ? config : NULL, s->max_seq_len, s->out) !=
        BOSCH_OK) {
        errorf("export: %s", lib_error(lsel));
        rc = EXIT_ERROR;
    } else {
        printf("wrote %s (kv_cache_config.max_attention_window, one per layer; max_seq_len %s%s; "
               "trtllm-serve --extra_llm_api_options %s)\n",
               s->out, s->max_seq_len ? "as given" : "from ", s->max_seq_len ? "" : config,
               s->out);
        report_layers(sel, lsel, "TensorRT-LLM's", NULL);
    }
    bosch_selection_free(proj);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    s.out = NULL;
    const char *file = NULL;
    int rc = parse_command(CMD_EXPORT, argc, argv, &s, &file);
    if (rc)
        return rc;
    if (file && s.mask) {
        errorf("export: the mask given twice (--mask and '%s')", file);
        return EXIT_USAGE;
    }
    if (!file)
        file = s.mask;
    if (!s.format || !file || !s.out) {
        errorf("export: missing %s; usage: bosch export --format duo|hf|trtllm --mask "
               "PREFIX.json --out DIR|FILE [--model DIR] [--max-seq-len N]",
               !s.format ? "--format" : !file ? "--mask" : "--out");
        return EXIT_USAGE;
    }
    if (s.config_only && strcmp(s.format, "hf")) {
        errorf("export: --config-only goes with --format hf");
        return EXIT_USAGE;
    }
    if (s.model && !strcmp(s.format, "duo")) {
        errorf("export: --model goes with --format hf or trtllm");
        return EXIT_USAGE;
    }
    if (s.max_seq_len && strcmp(s.format, "trtllm")) {
        errorf("export: --max-seq-len goes with --format trtllm");
        return EXIT_USAGE;
    }
    bosch_selection *sel = read_mask(file);
    if (!sel)
        return EXIT_ERROR;
    if (bosch_selection_kv_saving(sel, NULL, NULL, NULL, NULL) != BOSCH_OK) {
        errorf("export: %s records no KV saving (kv_saving: context, window, sink), which "
               "gives the window%s; masks of bosch search and baseline have it", file,
               strcmp(s.format, "duo") ? "" : " and the sink");
        bosch_selection_free(sel);
        return EXIT_ERROR;
    }
    rc = !strcmp(s.format, "duo")  ? export_duo(sel, s.out)
         : !strcmp(s.format, "hf") ? export_hf(&s, sel)
                                   : export_trtllm(&s, sel);
    bosch_selection_free(sel);
    return rc;
}
