/* Evaluation history as JSON Lines (json-c builds and escapes the objects). */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitset.h"
#include "session/result_impl.h"

static json_object *record_json(const bosch_result *r, size_t i, char *maskbuf)
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
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    json_object_object_add(o, "eval", json_object_new_int64((int64_t)i));
    json_object_object_add(o, "stage", json_object_new_string(bosch_stage_name(r->hist.stages[i])));
    json_object_object_add(o, "score", json_object_new_double(score));
    if (r->anchors_known)
        json_object_object_add(o, "normalized",
                               json_object_new_double((score - r->s_swa) / (r->s_full - r->s_swa)));
    else
        json_object_object_add(o, "normalized", NULL);
    json_object_object_add(o, "swa_units", json_object_new_int64((int64_t)swa));
    double wall = r->hist.walls[i];
    json_object_object_add(o, "wall_s", isfinite(wall) ? json_object_new_double(wall) : NULL);
    json_object_object_add(o, "mask", json_object_new_string(maskbuf));
    return o;
}

int bosch_result_write_history(const bosch_result *r, const char *path)
{
    if (!r || !path)
        return BOSCH_E_INVALID;
    FILE *f = fopen(path, "w");
    if (!f)
        return BOSCH_E_IO;
    char *maskbuf = malloc(r->units + 1);
    if (!maskbuf) {
        fclose(f);
        return BOSCH_E_NOMEM;
    }
    int rc = BOSCH_OK;
    for (size_t i = 0; i < r->hist.n && rc == BOSCH_OK; i++) {
        json_object *o = record_json(r, i, maskbuf);
        if (!o) {
            rc = BOSCH_E_NOMEM;
            break;
        }
        const char *line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        if (fprintf(f, "%s\n", line) < 0)
            rc = BOSCH_E_IO;
        json_object_put(o);
    }
    free(maskbuf);
    if (fclose(f) != 0 && rc == BOSCH_OK)
        rc = BOSCH_E_IO;
    return rc;
}
