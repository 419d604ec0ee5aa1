/* A model directory's bosch.json (cli/model_dir.c: the settings a model
 * suggests to the bosch command), read as search/baseline and as eval read
 * it. Messages about bad files go to stderr, as in the command. */
#include "cli.h"
#include "model_dir.h"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_file("bosch.json", data, size))
        return 0;
    for (int for_eval = 0; for_eval < 2; for_eval++) {
        struct settings s;
        settings_default(&s);
        s.model = fuzz_dir();
        model_setup(&s, for_eval);
    }
    return 0;
}
