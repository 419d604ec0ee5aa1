/*
 * Writes the SVG heatmap (bosch_selection_write_svg) and the JSON file
 * (bosch_selection_write_json) of selections of many shapes, with and
 * without the optional fields, into OUTDIR as NAME.svg and NAME.json;
 * check_svg.py renders every SVG and compares it with its JSON.
 * Usage: gen_svg OUTDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bosch/bosch.h>

enum { BARE = 0, FULL = 1, PARTIAL = 2, WIDE = 3 };

struct shape {
    const char *name;
    uint32_t layers, kv_groups, heads_per_group;
    int fields; /* BARE, FULL, PARTIAL or WIDE */
    int pattern; /* 0: mixed, 1: all SWA, 2: all full */
};

static const struct shape shapes[] = {
    {"1x1-bare", 1, 1, 1, BARE, 0},
    {"1x1-full", 1, 1, 1, FULL, 1},
    {"2x1-bare", 2, 1, 1, BARE, 0},
    {"2x1-full", 2, 1, 1, FULL, 0},
    {"4x2-partial", 4, 2, 4, PARTIAL, 0},
    {"1x64-bare", 1, 64, 1, BARE, 0},
    {"1x64-full", 1, 64, 1, FULL, 0},
    {"36x8-full", 36, 8, 2, FULL, 0},
    {"64x8-bare", 64, 8, 4, BARE, 0},
    {"64x8-full", 64, 8, 4, FULL, 0},
    {"128x32-full", 128, 32, 1, FULL, 0},
    {"3x4-allswa", 3, 4, 1, PARTIAL, 1},
    {"5x3-allfull", 5, 3, 1, BARE, 2},
    {"300x2-bare", 300, 2, 1, BARE, 0},
    {"2x200-full", 2, 200, 1, FULL, 0},
    {"12x1000-bare", 12, 1000, 1, BARE, 0},
    {"6x6-wide-text", 6, 6, 1, WIDE, 0},
};

static int fail(const char *what, const bosch_selection *s)
{
    fprintf(stderr, "gen_svg: %s: %s\n", what, s ? bosch_selection_last_error(s) : "");
    return 1;
}

/* A deterministic mixed mask: about a third of the units SWA, every row
 * different. */
static void fill_mask(uint8_t *mask, const struct shape *sh)
{
    size_t units = (size_t)sh->layers * sh->kv_groups;
    for (size_t u = 0; u < units; u++) {
        uint32_t x = (uint32_t)u * 2654435761u;
        x ^= x >> 15;
        mask[u] = sh->pattern == 1 ? 1 : sh->pattern == 2 ? 0 : (uint8_t)(x % 3 == 0);
    }
}

static void set_fields(bosch_selection *s, const struct shape *sh)
{
    size_t units = (size_t)sh->layers * sh->kv_groups;
    if (sh->fields == FULL) {
        bosch_selection_set_method(s, "bosch");
        bosch_selection_set_status(s, "BOSCH_DONE");
        bosch_selection_set_model_path(s, "/models/Qwen/Qwen3-0.6B/");
        bosch_selection_set_target_ratio(s, 0.5);
        bosch_selection_set_score(s, BOSCH_SCORE_RAW, 0.8125);
        bosch_selection_set_score(s, BOSCH_SCORE_NORMALIZED, 0.9);
        bosch_selection_set_score(s, BOSCH_SCORE_FULL, 0.85);
        bosch_selection_set_score(s, BOSCH_SCORE_ALL_SWA, 0.475);
        bosch_selection_set_metric(s, "logprob");
        bosch_selection_set_kv_saving(s, 32768, 4096, 4);
        uint64_t stages[BOSCH_STAGE_COUNT] = {0};
        stages[0] = 3;
        bosch_selection_set_evaluations(s, stages, 1234, 56);
        double *imp = malloc(units * sizeof *imp);
        if (imp) {
            for (size_t u = 0; u < units; u++)
                imp[u] = (double)(u % 97) / 97.0;
            bosch_selection_set_importance(s, imp, units);
            free(imp);
        }
    } else if (sh->fields == PARTIAL) {
        /* some fields only; text that needs escaping */
        bosch_selection_set_method(s, "baseline:<uniform> & \"more\"");
        bosch_selection_set_model_path(
            s, "/data/a&b <c>/Some-Model-With-A-Rather-Long-Name-v2 \"instruct\" & <chat>");
        bosch_selection_set_score(s, BOSCH_SCORE_RAW, 12.5);
        bosch_selection_set_kv_saving(s, 8192, 1024, 0);
    } else if (sh->fields == WIDE) {
        /* the widest characters and non-ASCII text */
        bosch_selection_set_method(s, "WWWMMM mmm %%% @@@ \xc3\x9cn\xc3\xaf" "c\xc3\xb6" "de "
                                      "\xe6\xa8\xa1\xe5\x9e\x8b \xe2\x9c\x93");
        bosch_selection_set_model_path(s, "/models/\xe6\xa8\xa1\xe5\x9e\x8b-\xc3\x84\xc3\x96"
                                          "\xc3\x9c-WWWWWWWWWWWWMMMMMMMMMMMM");
        bosch_selection_set_metric(s, "WWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWWW");
        bosch_selection_set_score(s, BOSCH_SCORE_NORMALIZED, -0.0625);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_svg OUTDIR\n");
        return 2;
    }
    char path[4096];
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const struct shape *sh = &shapes[i];
        bosch_selection *s = bosch_selection_create(sh->layers, sh->kv_groups, sh->heads_per_group);
        if (!s)
            return fail("bosch_selection_create", NULL);
        size_t units = bosch_selection_units(s);
        uint8_t *mask = malloc(units);
        if (!mask)
            return fail("out of memory", NULL);
        fill_mask(mask, sh);
        if (bosch_selection_set_mask(s, mask, units))
            return fail("set_mask", s);
        free(mask);
        set_fields(s, sh);
        snprintf(path, sizeof path, "%s/%s.svg", argv[1], sh->name);
        if (bosch_selection_write_svg(s, path))
            return fail(path, s);
        snprintf(path, sizeof path, "%s/%s.json", argv[1], sh->name);
        if (bosch_selection_write_json(s, path))
            return fail(path, s);
        printf("%s\n", sh->name);
        bosch_selection_free(s);
    }
    return 0;
}
