/* Model directories of the bosch command: the default model, and the
 * settings a model suggests in its bosch.json. No libtorch needed. */
#ifndef BOSCH_CLI_MODEL_DIR_H
#define BOSCH_CLI_MODEL_DIR_H

#include "cli.h"

/* Resolves the model directory (--model, $BOSCH_DEFAULT_MODEL, the installed
 * default, the source tree's models/organism) into s->model, applies its
 * bosch.json suggestions (the task: "heldout" for eval, else "calib") and
 * makes NIAH the task when none is set. 0, or EXIT_ERROR after a message. */
int model_setup(struct settings *s, int for_eval);

#endif
