/* Fitting a sample to the target length: the prompt built with n haystack
 * units, and the search for the largest n that fits. */
#include "text/ruler_gen.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *separator(const struct gen *g) { return g->sp->hay == HAY_ESSAY ? " " : "\n"; }
/* Needle k goes before unit pos(k) (after that many units): the depth as
 * a share of the haystack, floored as niah.py's int(len * depth). */
size_t ruler_needle_pos(const struct sample *s, size_t k, size_t n)
{
    size_t pos = (size_t)floor(s->frac[k] * (double)n);
    return pos > n ? n : pos;
}

/* The input (template with the context of n units) into s->input, the
 * rendered prompt into s->prompt, its tokens into *tokens. */
static int build(struct gen *g, struct sample *s, size_t n, size_t *tokens)
{
    struct text_buf *b = &s->input;
    const char *sep = separator(g);
    b->len = 0;
    int st = text_buf_adds(b, s->head);
    size_t start = b->len, k = 0;
    for (size_t i = 0; st == BOSCH_OK && i <= n; i++) {
        for (; st == BOSCH_OK && k < s->n_needles && ruler_needle_pos(s, k, n) == i; k++) {
            if (b->len > start)
                st = text_buf_adds(b, sep);
            s->offset[k] = b->len;
            if (st == BOSCH_OK)
                st = text_buf_adds(b, s->needles[k]);
        }
        if (i == n || st != BOSCH_OK)
            break;
        struct span u;
        st = ruler_unit(g, s, i, &u, NULL);
        if (st == BOSCH_OK && b->len > start)
            st = text_buf_adds(b, sep);
        if (st == BOSCH_OK)
            st = text_buf_add(b, u.s, u.n);
    }
    if (st == BOSCH_OK)
        st = text_buf_adds(b, s->tail);
    if (st != BOSCH_OK)
        return st;
    s->prompt.len = 0;
    if (g->p->chat) {
        struct bosch_chat_message m = {"user", b->data};
        char *chat = NULL;
        size_t len = 0;
        st = bosch_chat_format(ruler_chat_style(g->c), &m, 1, BOSCH_CHAT_GENERATION_PROMPT,
                               &chat, &len);
        if (st == BOSCH_OK)
            st = text_buf_add(&s->prompt, chat, len);
        free(chat);
    } else
        st = text_buf_add(&s->prompt, b->data, b->len);
    if (st == BOSCH_OK)
        st = text_buf_adds(&s->prompt, s->prefix);
    if (st == BOSCH_OK)
        st = ruler_count(g, s->prompt.data, s->prompt.len, tokens);
    return st;
}

/* The largest haystack whose prompt fits the context. f(n), the count of
 * the prompt with n units, grows with n; the units' own counts predict it
 * (a secant corrects their bias), so a sample costs a few full counts
 * instead of niah.py's binary search from scratch. */
int ruler_search(struct gen *g, struct sample *s, size_t target, size_t *best, size_t *best_tokens)
{
    size_t lo = 0, flo = 0, hi = SIZE_MAX, fhi = 0;
    int st = build(g, s, 0, &flo);
    if (st != BOSCH_OK)
        return st;
    if (flo > target) {
        snprintf(g->err, g->errlen, "context %zu is too short for %s: the template and needles "
                 "alone take %zu tokens", target, g->sp->name, flo);
        return BOSCH_E_INVALID;
    }
    double ratio = 1.0;
    for (int iter = 0; hi == SIZE_MAX || hi - lo > 1; iter++) {
        size_t guess = lo, acc = 0, t;
        double budget = (double)(target - flo) / ratio;
        for (;;) {
            if (hi != SIZE_MAX && guess + 1 >= hi)
                break;
            if ((st = ruler_unit(g, s, guess, &(struct span){0}, &t)) != BOSCH_OK)
                return st;
            if ((double)(acc + (t ? t : 1)) > budget)
                break;
            acc += t ? t : 1;
            guess++;
        }
        if (iter >= 8 && hi != SIZE_MAX) /* the prediction misleads: bisect */
            guess = lo + (hi - lo) / 2;
        if (guess <= lo)
            guess = lo + 1;
        if (hi != SIZE_MAX && guess >= hi)
            guess = hi - 1;
        size_t v;
        if ((st = build(g, s, guess, &v)) != BOSCH_OK)
            return st;
        if (v <= target) {
            lo = guess;
            flo = v;
        } else {
            hi = guess;
            fhi = v;
        }
        if (hi != SIZE_MAX && hi > lo + 1) {
            size_t est = 0;
            for (size_t i = lo; i < hi; i++) {
                if ((st = ruler_unit(g, s, i, &(struct span){0}, &t)) != BOSCH_OK)
                    return st;
                est += t ? t : 1;
            }
            ratio = fhi > flo && est ? (double)(fhi - flo) / (double)est : 1.0;
            if (ratio < 0.25)
                ratio = 0.25;
            if (ratio > 4.0)
                ratio = 4.0;
        }
    }
    *best = lo;
    return build(g, s, lo, best_tokens);
}
