/* The haystacks: word lists and essay sentences cut from the compiled-in
 * data, and the units of a sample's haystack with their token counts. */
#include "text/ruler_gen.h"
#include "text/ruler_data.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int spans_add(struct spans *a, const char *s, size_t n)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 1024;
        struct span *v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return BOSCH_E_NOMEM;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n].s = s;
    a->v[a->n++].n = n;
    return BOSCH_OK;
}

int ruler_split_lines(const unsigned char *data, size_t len, struct spans *out)
{
    const char *s = (const char *)data, *end = s + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        if (n && spans_add(out, s, n) != BOSCH_OK)
            return BOSCH_E_NOMEM;
        s += n + 1;
    }
    return BOSCH_OK;
}

static int is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

/* niah.py collapses the essay's whitespace (re.sub(r'\s+', " ")) and cuts
 * it into sentences with NLTK's sent_tokenize; here a sentence ends at
 * . ? or ! (and closing quotes or brackets) before a space. */
int ruler_essay_sentences(char **flat, struct spans *out)
{
    const char *src = (const char *)text_data_essay;
    char *d = malloc(text_data_essay_len + 1);
    if (!d)
        return BOSCH_E_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < text_data_essay_len; i++) {
        if (is_space(src[i])) {
            if (n && d[n - 1] != ' ')
                d[n++] = ' ';
        } else
            d[n++] = src[i];
    }
    while (n && d[n - 1] == ' ')
        n--;
    d[n] = '\0';
    *flat = d;
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        if (d[i] != '.' && d[i] != '?' && d[i] != '!')
            continue;
        size_t e = i + 1;
        while (e < n && (d[e] == '\'' || d[e] == '"' || d[e] == ')'))
            e++;
        if (e < n && d[e] != ' ')
            continue;
        if (spans_add(out, d + start, e - start) != BOSCH_OK)
            return BOSCH_E_NOMEM;
        start = e + 1;
        i = e;
    }
    if (start < n && spans_add(out, d + start, n - start) != BOSCH_OK)
        return BOSCH_E_NOMEM;
    return BOSCH_OK;
}

int ruler_count(struct gen *g, const char *s, size_t n, size_t *tokens)
{
    int st = g->c->count(g->c->ctx, s, n, tokens);
    if (st != BOSCH_OK)
        snprintf(g->err, g->errlen, "counting tokens failed (status %d)", st);
    return st;
}

/* Unit i of the haystack (cyclic for the essay, as niah.py repeats it). */
int ruler_unit(struct gen *g, struct sample *s, size_t i, struct span *u, size_t *tokens)
{
    char buf[3 * VAL_MAX + 72];
    if (g->sp->hay == HAY_NOISE) {
        u->s = ruler_noise;
        u->n = strlen(ruler_noise);
        if (tokens) {
            if (g->noise_tokens == SIZE_MAX) {
                snprintf(buf, sizeof buf, "\n%s", ruler_noise);
                int st = ruler_count(g, buf, strlen(buf), &g->noise_tokens);
                if (st != BOSCH_OK)
                    return st;
            }
            *tokens = g->noise_tokens;
        }
        return BOSCH_OK;
    }
    if (g->sp->hay == HAY_ESSAY) {
        size_t k = i % g->sents.n;
        *u = g->sents.v[k];
        if (tokens) {
            if (g->sent_tokens[k] == SIZE_MAX) {
                struct text_buf b = {0};
                int st = text_buf_add(&b, " ", 1);
                if (st == BOSCH_OK)
                    st = text_buf_add(&b, u->s, u->n);
                if (st == BOSCH_OK)
                    st = ruler_count(g, b.data, b.len, &g->sent_tokens[k]);
                text_buf_free(&b);
                if (st != BOSCH_OK)
                    return st;
            }
            *tokens = g->sent_tokens[k];
        }
        return BOSCH_OK;
    }
    while (s->pool_n <= i) {
        if (s->pool_n == s->pool_cap) {
            size_t cap = s->pool_cap ? 2 * s->pool_cap : 256;
            void *p = realloc(s->pool, cap * sizeof *s->pool);
            if (!p)
                return BOSCH_E_NOMEM;
            s->pool = p;
            size_t *t = realloc(s->pool_tokens, cap * sizeof *t);
            if (!t)
                return BOSCH_E_NOMEM;
            s->pool_tokens = t;
            s->pool_cap = cap;
        }
        char key[VAL_MAX], value[VAL_MAX];
        /* A distractor never carries a key of the sample's needles. */
        for (int again = 1; again;) {
            ruler_random_value(g, &s->pool_rng, g->sp->k, key);
            again = 0;
            for (size_t j = 0; j < g->sp->nk && !again; j++)
                again = !strcmp(key, s->keys[j]);
        }
        ruler_random_value(g, &s->pool_rng, g->sp->v, value);
        ruler_format_needle(s->pool[s->pool_n], ruler_kind_names[g->sp->v], key, value);
        s->pool_tokens[s->pool_n++] = SIZE_MAX;
    }
    u->s = s->pool[i];
    u->n = strlen(s->pool[i]);
    if (tokens) {
        if (s->pool_tokens[i] == SIZE_MAX) {
            snprintf(buf, sizeof buf, "\n%s", s->pool[i]);
            int st = ruler_count(g, buf, strlen(buf), &s->pool_tokens[i]);
            if (st != BOSCH_OK)
                return st;
        }
        *tokens = s->pool_tokens[i];
    }
    return BOSCH_OK;
}

