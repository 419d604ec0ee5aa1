/* Result files and terminal output of the bosch command, through
 * libbosch's bosch_selection (include/bosch/selection.h). */
#ifndef BOSCH_CLI_OUTPUT_H
#define BOSCH_CLI_OUTPUT_H

#include "cli.h"

/* "PREFIXSUFFIX", malloc'ed (NULL when out of memory). */
char *path_with(const char *prefix, const char *suffix);

/* Records what a run was made with: method, model directory, metric, KV
 * saving (context, window, sink) and the settings block. 0, or EXIT_ERROR
 * after a message. */
int record_run(bosch_selection *sel, const struct settings *s, const char *method);

/* Before any work: whether PREFIX's directory takes new files (a file is
 * made and removed there). 0, or -1 after a message with the system's
 * reason. */
int check_output_prefix(const char *prefix);

/* Writes PREFIX.json, .tsv, .svg (the history is written by the caller).
 * 0, or -1 after a message. */
int write_outputs(const bosch_selection *sel, const char *prefix);

/* The per-layer picture and the scores line. */
void print_picture(const bosch_selection *sel);
void print_scores(const bosch_selection *sel);

/* Reads PREFIX.json; NULL after a message. */
bosch_selection *read_mask(const char *path);

/* What a saved mask's settings say about the task (0 / "" when absent or
 * out of range): window (>= 1), sink (>= 0), the NIAH context, the metric. */
struct mask_settings {
    unsigned window, sink, context;
    int have_sink;
    char metric[16];
    char ruler_task[64];          /* "ruler:NAME" when the mask was searched on one */
    unsigned long long ruler_seed; /* its calibration seed */
};
void mask_settings(const bosch_selection *sel, struct mask_settings *ms);

/* What the command line left unsaid, taken from a saved mask: its window,
 * sink and metric, and its task (a RULER task on a held-out seed, its seed
 * + 1; a NIAH mask's context). */
void settings_from_mask(struct settings *s, const bosch_selection *sel);

/* The method to show ("mask" when the file names none). */
const char *shown_method(const bosch_selection *sel);

#endif
