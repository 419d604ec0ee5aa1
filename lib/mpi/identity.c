/* The job's identity: every rank says what its evaluator evaluates
 * ("key=value" lines), and the root refuses a job whose ranks would mix
 * scores of different settings (another window, metric, task, weights),
 * naming the rank and the first field that differs. */
#include "bosch/bosch.h"

#include <stdio.h>
#include <string.h>

#include "mpi/protocol.h"

/* Values quoted in a message are cut here: a digest is shorter. */
#define QUOTE_LEN 96

/* How much of a value of `n` bytes a message quotes. */
static int quoted(int n)
{
    return n < QUOTE_LEN ? n : QUOTE_LEN;
}

int mpi_hello_identity(struct hello *h, const struct bosch_mpi_evaluator *ev)
{
    h->identity[0] = '\0';
    const char *id = ev && ev->identity ? ev->identity(ev->user) : NULL;
    if (!id)
        return 0;
    const size_t n = strlen(id);
    if (n >= sizeof h->identity) {
        snprintf(h->why, sizeof h->why,
                 "the evaluator's identity has %zu bytes, more than the %d a rank may send", n,
                 BOSCH_MPI_IDENTITY_MAX - 1);
        return -1;
    }
    memcpy(h->identity, id, n + 1);
    return 0;
}

/* One "key=value" line of an identity (a line without '=' is a key whose
 * value is empty). */
struct field {
    const char *key, *value;
    int klen, vlen;
};

/* The field of the line at *p, moving *p past it; 0 at the end. Blank
 * lines are skipped. */
static int next_field(const char **p, struct field *f)
{
    while (**p == '\n')
        (*p)++;
    if (!**p)
        return 0;
    const char *line = *p, *end = strchr(line, '\n');
    if (!end)
        end = line + strlen(line);
    const char *eq = memchr(line, '=', (size_t)(end - line));
    f->key = line;
    f->klen = (int)((eq ? eq : end) - line);
    f->value = eq ? eq + 1 : end;
    f->vlen = (int)(end - f->value);
    *p = end;
    return 1;
}

/* The field of `id` with `key`; 0 when it has none. */
static int find_field(const char *id, const struct field *key, struct field *out)
{
    for (const char *p = id; next_field(&p, out);)
        if (out->klen == key->klen && !memcmp(out->key, key->key, (size_t)key->klen))
            return 1;
    return 0;
}

/* The first field in which rank b's identity differs from rank a's (a's
 * order, then the keys only b has); 0 when they agree. */
static int first_difference(const char *a, int ra, const char *b, int rb, char *why, size_t len)
{
    struct field fa, fb;
    for (const char *p = a; next_field(&p, &fa);) {
        if (!find_field(b, &fa, &fb)) {
            snprintf(why, len, "rank %d evaluates another job than rank %d: %.*s is not given on "
                     "rank %d, %.*s on rank %d", rb, ra, fa.klen, fa.key, rb,
                     quoted(fa.vlen), fa.value, ra);
            return 1;
        }
        if (fa.vlen != fb.vlen || memcmp(fa.value, fb.value, (size_t)fa.vlen)) {
            snprintf(why, len, "rank %d evaluates another job than rank %d: %.*s is %.*s on rank "
                     "%d, %.*s on rank %d", rb, ra, fa.klen, fa.key, quoted(fb.vlen), fb.value,
                     rb, quoted(fa.vlen), fa.value, ra);
            return 1;
        }
    }
    for (const char *p = b; next_field(&p, &fb);)
        if (!find_field(a, &fb, &fa)) {
            snprintf(why, len, "rank %d evaluates another job than rank %d: %.*s is %.*s on rank "
                     "%d, not given on rank %d", rb, ra, fb.klen, fb.key,
                     quoted(fb.vlen), fb.value, rb, ra);
            return 1;
        }
    return 0;
}

int mpi_identities_agree(const struct hello *all, int size, int root_evaluates, int waive,
                         char *why_out, size_t why_len)
{
    int ref = -1;
    for (int r = 0; r < size && ref < 0; r++)
        if (all[r].identity[0])
            ref = r;
    for (int r = 0; r < size; r++) {
        const int evaluates = r > 0 || root_evaluates;
        if (!all[r].identity[0]) {
            if (evaluates && !waive) {
                snprintf(why_out, why_len,
                         "rank %d cannot say what it evaluates (its evaluator gives no "
                         "identity), so the job cannot check that its ranks agree; give every "
                         "evaluator an identity, or waive the check (BOSCH_MPI_NO_IDENTITY)",
                         r);
                return -1;
            }
            continue;
        }
        if (r != ref && first_difference(all[ref].identity, ref, all[r].identity, r, why_out,
                                         why_len))
            return -1;
    }
    return 0;
}
