// A token-id task in JSON Lines (bosch_torch_task_read_jsonl:
// {"prompt": [ids], "answer": [ids]} per line).
#include <bosch/torch.h>

#include "fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("task.jsonl", data, size);
    if (path)
        bosch_torch_task_free(bosch_torch_task_read_jsonl(path));
    return 0;
}
