/* The library's optimizer options as options of `bosch search`, from the
 * library's own table (bosch_option_count, _name, _type, _doc, _default,
 * _range, _choices): every option but seed (--seed also seeds the task) is
 * --NAME with '_' written '-', checked by the library itself, and listed in
 * the help with its documentation and default. An option added to the
 * library's table appears here with no change to the command. */
#ifndef BOSCH_CLI_LIB_OPTIONS_H
#define BOSCH_CLI_LIB_OPTIONS_H

#include <getopt.h>
#include <stdio.h>

#include "cli.h"

/* getopt ids of the library options: LIB_OPTION_ID + table index. */
#define LIB_OPTION_ID 1000

/* Appends the library options' getopt entries at lo (room for
 * lib_option_count() entries); returns how many. */
size_t lib_options_longopts(struct option *lo);
size_t lib_option_count(void);

/* Checks `arg` for the library option of getopt id `id` as bosch_set_option
 * would (on a scratch optimizer) and records it in s (a later value wins);
 * returns NULL, or the option and its valid values for the message. */
const char *lib_option_apply(struct settings *s, int id, const char *arg);

/* A model's suggestion (bosch.json): recorded unless the option was given. */
void lib_option_suggest(struct settings *s, const char *name, const char *value);

/* The value given for the library option `name` (its table name), or NULL. */
const char *lib_option_given(const struct settings *s, const char *name);

/* Applies every recorded option to opt; 0, or EXIT_ERROR after a message. */
int lib_options_configure(bosch_optimizer *opt, const struct settings *s);

/* The help lines of the library options (indented, with their defaults). */
void print_lib_options(FILE *f);

#endif
