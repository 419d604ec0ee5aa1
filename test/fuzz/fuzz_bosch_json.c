/* A model directory's bosch.json, through libbosch-torch's own reader
 * (lib/torch/model_dir.c, which bosch_torch_checkpoint_open uses): every
 * input is read or refused with a message, and what is read is consistent
 * (numbers in their ranges, task files resolved against the directory). */
#include "torch/model_dir.h"

#include "bosch/torch.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fuzz_file("bosch.json", data, size))
        return 0;
    struct bt_suggestions s;
    char msg[8192];
    msg[0] = '\0';
    int rc = bt_suggestions_read(fuzz_dir(), &s, msg, sizeof msg);
    if (rc != BOSCH_OK) {
        if (!*msg || (rc != BOSCH_E_INVALID && rc != BOSCH_E_NOMEM))
            abort(); /* a refusal always says why */
        return 0;
    }
    if ((s.has[BT_WINDOW] && s.number[BT_WINDOW] < 1) || (s.has[BT_SINK] && s.number[BT_SINK] < 0) ||
        (s.has[BT_BUDGET] && s.number[BT_BUDGET] < 2) ||
        (s.has[BT_METRIC] && s.number[BT_METRIC] != BOSCH_TORCH_METRIC_EXACT &&
         s.number[BT_METRIC] != BOSCH_TORCH_METRIC_LOGPROB))
        abort();
    for (int i = 0; i < BT_FILES; i++)
        if (s.file[i] && s.file[i][0] != '/' && strncmp(s.file[i], fuzz_dir(), strlen(fuzz_dir())))
            abort();
    bt_suggestions_free(&s);
    return 0;
}
