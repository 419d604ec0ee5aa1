/* Evaluation history as JSON Lines (json-c builds and escapes the objects):
 * of a search result (bosch_result_write_history) and of evaluations made
 * without an optimizer (bosch_history_write, selection.h). One record
 * builder serves both, so the two write the same format. */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "session/result_impl.h"
#include "util/atomic_file.h"

/* One record; `normalized` NULL-json when have_norm is 0, `maskbuf` the
 * mask as '0'/'1' text. */
static json_object *record_json(size_t i, const char *stage, double score, int have_norm,
                                double normalized, size_t swa, double wall, double fidelity,
                                uint32_t draw, const char *maskbuf)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "eval", json_object_new_int64((int64_t)i));
    json_object_object_add(o, "stage", json_object_new_string(stage));
    json_object_object_add(o, "score", json_object_new_double(score));
    json_object_object_add(o, "normalized", have_norm ? json_object_new_double(normalized) : NULL);
    json_object_object_add(o, "swa_units", json_object_new_int64((int64_t)swa));
    json_object_object_add(o, "wall_s", isfinite(wall) ? json_object_new_double(wall) : NULL);
    if (!(fidelity == 1.0 && draw == 0)) { /* a screened score or a confirmation draw */
        json_object_object_add(o, "fidelity", json_object_new_double(fidelity));
        json_object_object_add(o, "draw", json_object_new_int64(draw));
    }
    json_object_object_add(o, "mask", json_object_new_string(maskbuf));
    return o;
}

static json_object *result_record(const bosch_result *r, size_t i, char *maskbuf)
{
    const uint64_t *m = store_mask(&r->hist, i);
    size_t swa = 0;
    for (size_t u = 0; u < r->units; u++) {
        int z = bitset_get(m, u);
        maskbuf[u] = z ? '1' : '0';
        swa += (size_t)z;
    }
    maskbuf[r->units] = '\0';
    double score = r->hist.scores[i];
    return record_json(i, bosch_stage_name(r->hist.stages[i]), score, r->anchors_known && !r->raw,
                       (score - r->s_swa) / (r->s_full - r->s_swa), swa, r->hist.walls[i],
                       r->hist.fidelity[i], r->hist.draws[i], maskbuf);
}

static int write_line(FILE *f, json_object *o)
{
    if (!o)
        return BOSCH_E_NOMEM;
    const char *line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
    int rc = fprintf(f, "%s\n", line) < 0 ? BOSCH_E_IO : BOSCH_OK;
    json_object_put(o);
    return rc;
}

/* Ends an atomic write: commits it when rc is BOSCH_OK, else discards it.
 * A failed commit is BOSCH_E_IO with errno set to the system's reason. */
static int finish(afile *a, int rc)
{
    if (rc != BOSCH_OK) {
        int err = errno;
        afile_discard(a);
        errno = err;
        return rc;
    }
    int err = afile_commit(a);
    if (err) {
        errno = err;
        return BOSCH_E_IO;
    }
    return BOSCH_OK;
}

int bosch_result_write_history(const bosch_result *r, const char *path)
{
    if (!r || !path)
        return BOSCH_E_INVALID;
    afile a;
    int err = afile_open(&a, path);
    if (err) {
        errno = err;
        return err == ENOMEM ? BOSCH_E_NOMEM : BOSCH_E_IO;
    }
    char *maskbuf = malloc(r->units + 1);
    if (!maskbuf)
        return finish(&a, BOSCH_E_NOMEM);
    int rc = BOSCH_OK;
    for (size_t i = 0; i < r->hist.n && rc == BOSCH_OK; i++)
        rc = write_line(a.f, result_record(r, i, maskbuf));
    free(maskbuf);
    return finish(&a, rc);
}

int bosch_history_write(const char *path, size_t units, size_t n, const uint8_t *masks,
                        const double *scores, const char *const *stages, double s_full,
                        double s_allswa)
{
    if (!path || !units || (n && (!masks || !scores || !stages)))
        return BOSCH_E_INVALID;
    for (size_t i = 0; i < n; i++)
        if (!stages[i])
            return BOSCH_E_INVALID;
    afile a;
    int err = afile_open(&a, path);
    if (err) {
        errno = err;
        return err == ENOMEM ? BOSCH_E_NOMEM : BOSCH_E_IO;
    }
    FILE *f = a.f;
    char *maskbuf = malloc(units + 1);
    if (!maskbuf)
        return finish(&a, BOSCH_E_NOMEM);
    int have_norm = s_full > s_allswa; /* false for NaN anchors */
    int rc = BOSCH_OK;
    for (size_t i = 0; i < n && rc == BOSCH_OK; i++) {
        const uint8_t *m = masks + i * units;
        size_t swa = 0;
        for (size_t u = 0; u < units; u++) {
            maskbuf[u] = m[u] ? '1' : '0';
            swa += m[u] != 0;
        }
        maskbuf[units] = '\0';
        rc = write_line(f, record_json(i, stages[i], scores[i], have_norm,
                                       (scores[i] - s_allswa) / (s_full - s_allswa), swa, NAN,
                                       1.0, 0, maskbuf));
    }
    free(maskbuf);
    return finish(&a, rc);
}
