/* Exhaustive: every feasible candidate once, in lexicographic order of the
 * per-block subsets (last block fastest). Finishes when all were proposed. */
#include <stdlib.h>
#include <string.h>

#include "strategies/builtin.h"

struct state {
    size_t n, nb;
    uint32_t **sub;   /* per block: current k-subset as positions in the block */
    size_t **vars;    /* per block: its variables */
    int done;
};

static void destroy(void *st, void *user)
{
    struct state *s = st;
    if (!s)
        return;
    for (size_t b = 0; b < s->nb; b++) {
        free(s->sub ? s->sub[b] : NULL);
        free(s->vars ? s->vars[b] : NULL);
    }
    free(s->sub);
    free(s->vars);
    free(s);
}

static int init(void **out, const bosch_subproblem *sp, void *user)
{
    struct state *s = calloc(1, sizeof *s);
    if (!s)
        return -1;
    s->n = bosch_subproblem_vars(sp);
    s->nb = bosch_subproblem_blocks(sp);
    s->sub = calloc(s->nb, sizeof *s->sub);
    s->vars = calloc(s->nb, sizeof *s->vars);
    if (!s->sub || !s->vars) {
        destroy(s, user);
        return -1;
    }
    for (size_t b = 0; b < s->nb; b++) {
        uint32_t size = bosch_subproblem_block_size(sp, b);
        s->sub[b] = calloc(size + 1, sizeof **s->sub);
        s->vars[b] = calloc(size + 1, sizeof **s->vars);
        if (!s->sub[b] || !s->vars[b]) {
            destroy(s, user);
            return -1;
        }
        for (uint32_t i = 0; i < bosch_subproblem_block_count(sp, b); i++)
            s->sub[b][i] = i;
        size_t m = 0;
        for (size_t v = 0; v < s->n; v++)
            if (bosch_subproblem_block_of(sp, v) == b)
                s->vars[b][m++] = v;
    }
    *out = s;
    return 0;
}

/* Advances the mixed-radix counter of subsets; returns 0 after the last. */
static int advance(struct state *s, const bosch_subproblem *sp)
{
    for (size_t b = s->nb; b-- > 0;) {
        uint32_t k = bosch_subproblem_block_count(sp, b);
        uint32_t size = bosch_subproblem_block_size(sp, b);
        int32_t i = (int32_t)k - 1;
        while (i >= 0 && s->sub[b][i] == size - k + (uint32_t)i)
            i--;
        if (i >= 0) {
            s->sub[b][i]++;
            for (uint32_t j = (uint32_t)i + 1; j < k; j++)
                s->sub[b][j] = s->sub[b][j - 1] + 1;
            return 1;
        }
        for (uint32_t j = 0; j < k; j++) /* wrap this block, carry left */
            s->sub[b][j] = j;
    }
    return 0;
}

static int propose(void *st, const bosch_subproblem *sp, uint8_t *cands, size_t max, size_t *n)
{
    struct state *s = st;
    size_t m = 0;
    while (m < max && !s->done) {
        uint8_t *x = cands + m * s->n;
        memset(x, 0, s->n);
        for (size_t b = 0; b < s->nb; b++)
            for (uint32_t i = 0; i < bosch_subproblem_block_count(sp, b); i++)
                x[s->vars[b][s->sub[b][i]]] = 1;
        m++;
        if (!advance(s, sp))
            s->done = 1;
    }
    *n = m;
    return 0;
}

const struct builtin_strategy strategy_exhaustive = {"exhaustive", init, propose, NULL, destroy};
