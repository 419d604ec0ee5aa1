/* bosch compare A.json B.json [C.json ...]: how much the full units of
 * saved selections overlap (bosch_selection_overlap: Jaccard of the full
 * units), pair by pair, overall and per layer; no model needed. The paper
 * uses this to show that each SWA ratio needs its own search. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "output.h"

/* At most this many selections: 26 letters name them in the tables. */
#define MAX_FILES 26

static size_t full_units(const bosch_selection *s, uint32_t layer, const uint8_t *mask)
{
    const uint32_t G = bosch_selection_kv_groups(s);
    size_t n = 0;
    for (uint32_t g = 0; g < G; g++)
        n += !mask[(size_t)layer * G + g];
    return n;
}

static int compare(bosch_selection **sel, char **files, int n)
{
    const uint32_t L = bosch_selection_layers(sel[0]);
    const size_t units = bosch_selection_units(sel[0]);
    int pairs = n * (n - 1) / 2, status = EXIT_ERROR;
    double *overall = calloc((size_t)n * n, sizeof *overall);
    double *per = calloc((size_t)pairs * L, sizeof *per);
    uint8_t *masks = malloc((size_t)n * units);
    if (!overall || !per || !masks) {
        errorf("out of memory");
        goto out;
    }
    for (int i = 0; i < n; i++) {
        bosch_selection_mask(sel[i], masks + (size_t)i * units, units);
        for (int j = i + 1; j < n; j++) {
            int p = i * n - i * (i + 1) / 2 + (j - i - 1); /* pair (i, j), i < j */
            double o;
            if (bosch_selection_overlap(sel[i], sel[j], per + (size_t)p * L, L, &o)) {
                errorf("%s and %s: %s", files[i], files[j], bosch_selection_last_error(sel[i]));
                goto out;
            }
            overall[i * n + j] = overall[j * n + i] = o;
        }
        overall[i * n + i] = 1.0;
    }
    for (int i = 0; i < n; i++)
        printf("%c  %s  %.31s, SWA ratio %.4f, %zu of %zu units full\n", 'A' + i, files[i],
               shown_method(sel[i]), bosch_selection_ratio(sel[i]),
               units - bosch_selection_swa_units(sel[i]), units);
    printf("\nfull units' overlap (Jaccard |X & Y| / |X | Y| of the full units; 1 = the same "
           "units, 0 = none in common):\n   ");
    for (int j = 0; j < n; j++)
        printf("  %5c", 'A' + j);
    printf("\n");
    for (int i = 0; i < n; i++) {
        printf("%c  ", 'A' + i);
        for (int j = 0; j < n; j++)
            printf("  %.3f", overall[i * n + j]);
        printf("\n");
    }
    printf("\nper layer (full KV heads of each selection, then the overlap of each pair; a "
           "layer all SWA in both counts as 1):\nlayer");
    for (int i = 0; i < n; i++)
        printf("  full %c", 'A' + i);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            printf("    %c-%c", 'A' + i, 'A' + j);
    printf("\n");
    for (uint32_t l = 0; l < L; l++) {
        printf("%5u", l);
        for (int i = 0; i < n; i++)
            printf("  %6zu", full_units(sel[i], l, masks + (size_t)i * units));
        for (int p = 0; p < pairs; p++)
            printf("  %.3f", per[(size_t)p * L + l]);
        printf("\n");
    }
    status = EXIT_OK;
out:
    free(overall);
    free(per);
    free(masks);
    return status;
}

int cmd_compare(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    int first = argc;
    int rc = parse_command_files(CMD_COMPARE, argc, argv, &s, &first);
    if (rc)
        return rc;
    int n = argc - first;
    if (n < 2 || n > MAX_FILES) {
        errorf("compare: %s; usage: bosch compare A.json B.json [C.json ...]",
               n < 2 ? "give at least two saved selections" : "at most 26 selections");
        return EXIT_USAGE;
    }
    bosch_selection *sel[MAX_FILES] = {0};
    rc = EXIT_OK;
    for (int i = 0; i < n && rc == EXIT_OK; i++)
        if (!(sel[i] = read_mask(argv[first + i])))
            rc = EXIT_ERROR;
    for (int i = 1; i < n && rc == EXIT_OK; i++)
        if (bosch_selection_layers(sel[i]) != bosch_selection_layers(sel[0]) ||
            bosch_selection_kv_groups(sel[i]) != bosch_selection_kv_groups(sel[0]) ||
            bosch_selection_heads_per_group(sel[i]) != bosch_selection_heads_per_group(sel[0])) {
            errorf("compare: %s is %u x %u x %u, %s %u x %u x %u (layers x KV groups x "
                   "heads/group): selections of one model only",
                   argv[first + i], bosch_selection_layers(sel[i]),
                   bosch_selection_kv_groups(sel[i]), bosch_selection_heads_per_group(sel[i]),
                   argv[first], bosch_selection_layers(sel[0]), bosch_selection_kv_groups(sel[0]),
                   bosch_selection_heads_per_group(sel[0]));
            rc = EXIT_ERROR;
        }
    if (rc == EXIT_OK)
        rc = compare(sel, argv + first, n);
    for (int i = 0; i < n; i++)
        bosch_selection_free(sel[i]);
    return rc;
}
