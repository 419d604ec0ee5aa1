/* A journal from the input, resumed by an optimizer of a fixed small run:
 * the frame walker, the zstd payloads, the header comparison and the
 * record checks (lib/journal/journal.c). */
#include <stdio.h>
#include <stdlib.h>

#include <bosch/bosch.h>
#include <bosch/optimizer.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("journal", data, size);
    if (!path)
        return 0;
    bosch_problem *p = bosch_problem_create(2, 4, 1);
    if (!p)
        return 0;
    bosch_problem_set_target_ratio(p, 0.5);
    bosch_optimizer *o = bosch_optimizer_create(p);
    if (o && bosch_set_option(o, "budget", "40") == BOSCH_OK &&
        bosch_set_journal(o, path, BOSCH_JOURNAL_RESUME) == BOSCH_OK) {
        size_t n = 0;
        int st = bosch_ask(o, &n); /* opens, validates and replays the journal */
        if (getenv("BOSCH_FUZZ_VERBOSE")) /* is the seed corpus replayed? */
            fprintf(stderr, "journal of %zu bytes: %s\n", size, bosch_err_name(st));
    }
    bosch_optimizer_free(o);
    bosch_problem_free(p);
    return 0;
}
