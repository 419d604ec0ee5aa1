/* Status codes to text. */
#include "bosch/bosch.h"

#include <stddef.h>

struct status_text {
    int code;
    const char *name;
    const char *text;
};

static const struct status_text table[] = {
    {BOSCH_OK, "BOSCH_OK", "success"},
    {BOSCH_E_INVALID, "BOSCH_E_INVALID", "invalid argument"},
    {BOSCH_E_NOMEM, "BOSCH_E_NOMEM", "out of memory"},
    {BOSCH_E_INFEASIBLE, "BOSCH_E_INFEASIBLE", "constraints admit no feasible mask"},
    {BOSCH_E_STATE, "BOSCH_E_STATE", "operation not allowed in the current state"},
    {BOSCH_E_BAD_SCORE, "BOSCH_E_BAD_SCORE", "score is NaN or infinite"},
    {BOSCH_E_EVALUATOR, "BOSCH_E_EVALUATOR", "the evaluator reported a failure"},
    {BOSCH_E_OPTION, "BOSCH_E_OPTION", "unknown option or unparsable option value"},
    {BOSCH_E_IO, "BOSCH_E_IO", "input/output error"},
    {BOSCH_E_STRATEGY, "BOSCH_E_STRATEGY", "search strategy failed"},
    {BOSCH_E_ANCHORS, "BOSCH_E_ANCHORS",
     "anchor scores cannot normalise: S_full must exceed S_allSWA"},
    {BOSCH_E_TOO_LARGE, "BOSCH_E_TOO_LARGE", "instance too large for this exact method"},
    {BOSCH_E_NOT_FOUND, "BOSCH_E_NOT_FOUND", "not found"},
    {BOSCH_E_CORRUPT, "BOSCH_E_CORRUPT", "journal is damaged or not a journal"},
    {BOSCH_E_MISMATCH, "BOSCH_E_MISMATCH",
     "journal was written with other settings or another version"},
    {BOSCH_DONE, "BOSCH_DONE", "search completed"},
    {BOSCH_BUDGET_REACHED, "BOSCH_BUDGET_REACHED", "stopped: evaluation budget reached"},
    {BOSCH_TIME_REACHED, "BOSCH_TIME_REACHED", "stopped: time limit reached"},
    {BOSCH_FORCED_STOP, "BOSCH_FORCED_STOP", "stopped: forced stop requested"},
};

static const struct status_text *find(int status)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].code == status)
            return &table[i];
    return NULL;
}

int bosch_is_error(int status)
{
    return status < 0;
}

const char *bosch_strerror(int status)
{
    const struct status_text *t = find(status);
    if (t)
        return t->text;
    return status < 0 ? "unknown error" : "unknown status";
}

const char *bosch_err_name(int status)
{
    const struct status_text *t = find(status);
    if (t)
        return t->name;
    return status < 0 ? "BOSCH_E_UNKNOWN" : "BOSCH_UNKNOWN";
}
