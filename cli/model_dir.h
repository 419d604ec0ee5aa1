/* Model directories of the bosch command: which directory a command uses.
 * No libtorch needed; the directory's files are read by libbosch-torch
 * (bosch_torch_checkpoint_open, through backend.c). */
#ifndef BOSCH_CLI_MODEL_DIR_H
#define BOSCH_CLI_MODEL_DIR_H

#include "cli.h"

/* Resolves the model directory (--model, $BOSCH_DEFAULT_MODEL, the installed
 * default, the source tree's models/organism) into s->model, and records
 * which of its bosch.json tasks is the default (heldout for eval, else
 * calib). 0, or EXIT_ERROR after a message. */
int model_setup(struct settings *s, int for_eval);

#endif
