/* A text task in JSON Lines (bosch_text_task_read_jsonl: messages, text,
 * answers, answer_prefix, max_new_tokens). */
#include <bosch/text.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file("task.jsonl", data, size);
    if (path)
        bosch_text_task_free(bosch_text_task_read_jsonl(path));
    return 0;
}
