/* The options of the bosch command: one table, a separate set per command.
 * `bosch COMMAND --help` lists the command's own set; `bosch help` all. */
#ifndef BOSCH_CLI_OPTIONS_H
#define BOSCH_CLI_OPTIONS_H

#include <stdio.h>

#include "cli.h"

/* Commands, as bits of an option's set of commands. */
enum command {
    CMD_SEARCH = 1 << 0,
    CMD_BASELINE = 1 << 1,
    CMD_EVAL = 1 << 2,
    CMD_SHOW = 1 << 3,
    CMD_TOKENIZE = 1 << 4,
    CMD_EXPORT = 1 << 5,
    CMD_GENERATE = 1 << 6,
    CMD_COMPARE = 1 << 7
};

#define BASELINE_KINDS                                                                             \
    "rand|intr|bme|ablation|layer-probe|locality|retrieval|echo-induction|fisher|duo-on-the-fly"

/* Parses argv (argv[0] = the command) with the options of `cmd` into s.
 * `positional` (may be NULL: none allowed) receives the one positional
 * argument. --help prints the command's help and exits 0. Returns 0, or
 * EXIT_USAGE after a message. */
int parse_command(enum command cmd, int argc, char **argv, struct settings *s,
                  const char **positional);

/* The same for a command of several positional arguments: *first is the
 * index in argv of the first (argc when none); they follow the options. */
int parse_command_files(enum command cmd, int argc, char **argv, struct settings *s, int *first);

/* Every option, grouped by the commands that take them (general help). */
void print_all_options(FILE *f);

#endif
