/* Keys, values and needles (niah.py generate_random), and the template and
 * answer prefix of a sample. */
#include "text/ruler_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ruler_random_value(struct gen *g, struct text_rng *r, enum kind k, char out[VAL_MAX])
{
    if (k == K_NUMBERS) {
        /* random.randint(10**6, 10**7 - 1) */
        snprintf(out, VAL_MAX, "%u", (unsigned)(1000000 + text_rng_below(r, 9000000)));
    } else if (k == K_WORDS) {
        /* random.choice of the adjective-noun pairs */
        const struct span *a = &g->adjs.v[text_rng_below(r, g->adjs.n)];
        const struct span *n = &g->nouns.v[text_rng_below(r, g->nouns.n)];
        snprintf(out, VAL_MAX, "%.*s-%.*s", (int)a->n, a->s, (int)n->n, n->s);
    } else {
        /* uuid.UUID(int=random.getrandbits(128), version=4) */
        uint64_t hi = text_rng_next(r), lo = text_rng_next(r);
        hi = (hi & ~UINT64_C(0xf000)) | UINT64_C(0x4000);
        lo = (lo & ~(UINT64_C(3) << 62)) | (UINT64_C(2) << 62);
        snprintf(out, VAL_MAX, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(hi >> 32),
                 (unsigned)(hi >> 16) & 0xffffu, (unsigned)hi & 0xffffu,
                 (unsigned)(lo >> 48), (unsigned long long)(lo & UINT64_C(0xffffffffffff)));
    }
}

void ruler_format_needle(char *out, const char *type_v, const char *key, const char *value)
{
    /* Through a local: key and value may live in the same sample. */
    char tmp[NEEDLE_MAX];
    snprintf(tmp, sizeof tmp, "One of the special magic %s for %s is: %s.", type_v, key, value);
    memcpy(out, tmp, sizeof tmp);
}

/* Python's str.replace(from, to) into a new string, or NULL. */
static char *replace_all(const char *s, const char *from, const char *to)
{
    struct text_buf b = {0};
    size_t fn = strlen(from);
    int st = text_buf_add(&b, "", 0);
    for (const char *p = s; st == BOSCH_OK && *p;) {
        const char *q = strstr(p, from);
        if (!q) {
            st = text_buf_adds(&b, p);
            break;
        }
        st = text_buf_add(&b, p, (size_t)(q - p));
        if (st == BOSCH_OK)
            st = text_buf_adds(&b, to);
        p = q + fn;
    }
    if (st != BOSCH_OK) {
        text_buf_free(&b);
        return NULL;
    }
    return b.data;
}

/* The template (or answer prefix) of a sample: niah.py turns it singular
 * when there is one value to find, then formats it. */
char *ruler_render_template(const char *tmpl, int singular, const char *type_v,
                             const char *query)
{
    static const char *const sing[][2] = {
        {"Some", "A"}, {"are all", "is"}, {"are", "is"}, {"answers", "answer"}};
    char *s = malloc(strlen(tmpl) + 1);
    if (!s)
        return NULL;
    strcpy(s, tmpl);
    for (size_t i = 0; singular && i < sizeof sing / sizeof sing[0]; i++) {
        char *t = replace_all(s, sing[i][0], sing[i][1]);
        free(s);
        if (!(s = t))
            return NULL;
    }
    char *t = replace_all(s, "{type_needle_v}", type_v);
    free(s);
    if (!t)
        return NULL;
    s = replace_all(t, "{query}", query);
    free(t);
    return s;
}
