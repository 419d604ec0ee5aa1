/* A tokenizer.json (bosch_tokenizer_open: the model, vocabulary, merges,
 * normalizer, pre-tokenizer, added tokens). */
#include <bosch/text.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("tokenizer.json", data, size);
    if (!path)
        return 0;
    bosch_tokenizer *t = bosch_tokenizer_open(path);
    bosch_tokenizer_free(t);
    return 0;
}
