/* A result file (bosch_selection_read_json: the JSON the bosch command and
 * the exports read back). */
#include <bosch/selection.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("result.json", data, size);
    if (path)
        bosch_selection_free(bosch_selection_read_json(path));
    return 0;
}
