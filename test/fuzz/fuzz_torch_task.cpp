// A token-id task in JSON Lines (lib/torch/tasks.cpp load_jsonl, what
// bosch_torch_task_read_jsonl runs: {"prompt": [ids], "answer": [ids]} per
// line). A bad file throws Failure (the C API turns it into a status, as
// it turns bad_alloc into BOSCH_E_NOMEM); anything else escaping is a
// finding.
#include "torch/failure.hpp"
#include "torch/tasks.hpp"

#include "fuzz.h"

#include <new>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("task.jsonl", data, size);
    if (!path)
        return 0;
    try {
        (void)bosch_torch::load_jsonl(path);
    } catch (const bosch_torch::Failure &) {
    } catch (const std::bad_alloc &) { // BOSCH_E_NOMEM through the C API
    }
    return 0;
}
