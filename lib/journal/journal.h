/* The evaluation journal: an append-only file of checksummed zstd frames
 * (format in docs/journal.md). Opening for resume validates the header and
 * loads every record into a replay store. */
#ifndef BOSCH_JOURNAL_JOURNAL_H
#define BOSCH_JOURNAL_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/cache.h"

typedef struct journal journal;

/* Opens `path` in `mode` (enum bosch_journal_mode). `header_json` describes
 * this run; on resume it must match the file's header (else
 * BOSCH_E_MISMATCH naming the differing fields in `err`). The file is
 * locked (flock, exclusive) until journal_close: BOSCH_E_BUSY when another
 * open journal holds it, in this process or another. Journaled records
 * go into `replay` (initialised by the caller for `units`). Returns
 * BOSCH_OK, BOSCH_E_IO, BOSCH_E_BUSY, BOSCH_E_CORRUPT, BOSCH_E_MISMATCH or
 * BOSCH_E_NOMEM;
 * `err` explains any failure. *dropped_tail is set when a cut-short last
 * frame was removed. */
int journal_open(journal **out, const char *path, int mode, int sync, const char *header_json,
                 eval_store *replay, int *dropped_tail, char *err, size_t errlen);
/* Appends one evaluation record with a single write(). Thread-compatible:
 * callers serialise. */
int journal_append(journal *j, int stage, double score, double wall, double fidelity,
                   uint32_t draw, const uint64_t *packed, size_t words);
/* The system's reason for the last failed append ("No space left on
 * device"), or "no error". */
const char *journal_strerror(const journal *j);
/* Closes the file (releasing its lock). */
void journal_close(journal *j);

#endif
