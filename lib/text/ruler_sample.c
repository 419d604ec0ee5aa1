/* One sample: keys, values, needles, depths and queries drawn from the
 * sample's stream, then fitted to the context and added to the task. */
#include "text/ruler_gen.h"
#include "text/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ruler_sample_clear(struct sample *s)
{
    free(s->head);
    free(s->tail);
    free(s->prefix);
    free(s->pool);
    free(s->pool_tokens);
    text_buf_free(&s->input);
    text_buf_free(&s->prompt);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The needles: keys and values drawn, then shuffled. */
static void draw_needles(struct gen *g, struct sample *s, struct text_rng *r, unsigned nk)
{
    const struct spec *sp = g->sp;
    /* Keys and values, distinct within the sample so that each query has
     * one answer (niah.py leaves collisions to chance). */
    s->n_needles = 0;
    for (unsigned i = 0; i < nk; i++) {
        for (int again = 1; again;) {
            ruler_random_value(g, r, sp->k, s->keys[i]);
            again = 0;
            for (unsigned j = 0; j < i && !again; j++)
                again = !strcmp(s->keys[i], s->keys[j]);
        }
        for (unsigned j = 0; j < sp->nv; j++) {
            char *v = s->values[i * sp->nv + j];
            for (int again = 1; again;) {
                ruler_random_value(g, r, sp->v, v);
                again = 0;
                for (unsigned q = 0; q < i * sp->nv + j && !again; q++)
                    again = !strcmp(v, s->values[q]);
            }
            ruler_format_needle(s->needles[s->n_needles++], ruler_kind_names[sp->v], s->keys[i], v);
        }
    }
    /* random.shuffle(needles) */
    for (size_t i = s->n_needles; i > 1; i--) {
        size_t j = (size_t)text_rng_below(r, i);
        char tmp[sizeof s->needles[0]];
        memcpy(tmp, s->needles[i - 1], sizeof tmp);
        memcpy(s->needles[i - 1], s->needles[j], sizeof tmp);
        memcpy(s->needles[j], tmp, sizeof tmp);
    }
}

/* The needles' depths, sorted. */
static void draw_depths(struct gen *g, struct sample *s, struct text_rng *r, size_t index)
{
    const struct spec *sp = g->sp;
    const struct bosch_text_ruler_params *p = g->p;
    /* Depths. One needle: the samples' depths spread evenly over
     * [depth_min, depth_max]. Several: the essay draws distinct depths of
     * niah.py's 40-point grid (random.sample(DEPTHS, n)), the line
     * haystacks uniform ones (random.sample(range(num_haystack), n)). */
    double span = p->depth_max - p->depth_min;
    if (s->n_needles == 1)
        s->frac[0] = p->depth_min + (p->samples > 1 ? span * (double)index / (double)(p->samples - 1)
                                                    : span / 2);
    else if (sp->hay == HAY_ESSAY) {
        unsigned grid[RULER_DEPTHS];
        for (unsigned i = 0; i < RULER_DEPTHS; i++)
            grid[i] = i;
        for (size_t k = 0; k < s->n_needles; k++) {
            size_t j = k + (size_t)text_rng_below(r, RULER_DEPTHS - k);
            unsigned tmp = grid[k];
            grid[k] = grid[j];
            grid[j] = tmp;
            s->frac[k] = p->depth_min + span * (double)grid[k] / (RULER_DEPTHS - 1);
        }
    } else
        for (size_t k = 0; k < s->n_needles; k++)
            s->frac[k] = p->depth_min + span * text_rng_unit(r);
    qsort(s->frac, s->n_needles, sizeof s->frac[0], cmp_double);
}

/* The queried keys, their answers, and the template rendered around them
 * (head and tail of the prompt, answer prefix). */
static int draw_queries(struct gen *g, struct sample *s, struct text_rng *r, unsigned nk)
{
    const struct spec *sp = g->sp;
    /* Queries: random.sample(range(num_needle_k), num_needle_q). */
    unsigned idx[RULER_MAX_NEEDLES];
    for (unsigned i = 0; i < nk; i++)
        idx[i] = i;
    for (unsigned i = 0; i < sp->nq; i++) {
        unsigned j = i + (unsigned)text_rng_below(r, nk - i);
        unsigned tmp = idx[i];
        idx[i] = idx[j];
        idx[j] = tmp;
    }
    struct text_buf query = {0};
    int st = text_buf_add(&query, "", 0);
    s->n_answers = 0;
    for (unsigned i = 0; i < sp->nq && st == BOSCH_OK; i++) {
        if (i)
            st = text_buf_adds(&query, i + 1 == sp->nq ? ", and " : ", ");
        if (st == BOSCH_OK)
            st = text_buf_adds(&query, s->keys[idx[i]]);
        for (unsigned j = 0; j < sp->nv; j++)
            s->answers[s->n_answers++] = s->values[idx[i] * sp->nv + j];
    }
    if (st != BOSCH_OK) {
        text_buf_free(&query);
        return st;
    }
    int singular = sp->nq * sp->nv == 1;
    char type_v[16];
    snprintf(type_v, sizeof type_v, "%s", ruler_kind_names[sp->v]);
    if (singular)
        type_v[strlen(type_v) - 1] = '\0'; /* remove "s" */
    char *full = ruler_render_template(ruler_template, singular, type_v, query.data);
    s->prefix = ruler_render_template(ruler_answer_prefix, singular, type_v, query.data);
    text_buf_free(&query);
    if (!full || !s->prefix) {
        free(full);
        return BOSCH_E_NOMEM;
    }
    char *ctx = strstr(full, "{context}");
    s->tail = malloc(strlen(ctx + 9) + 1);
    if (s->tail)
        strcpy(s->tail, ctx + 9);
    *ctx = '\0';
    s->head = full;
    if (!s->tail)
        return BOSCH_E_NOMEM;
    return BOSCH_OK;
}

int ruler_make_sample(struct gen *g, struct sample *s, struct text_rng *r, size_t index,
                       bosch_text_task *task, struct ruler_info *info)
{
    const struct spec *sp = g->sp;
    const struct bosch_text_ruler_params *p = g->p;
    unsigned nk = sp->nk > sp->nq ? sp->nk : sp->nq; /* niah.py: max(num_needle_k, num_needle_q) */
    text_rng_seed(&s->pool_rng, text_rng_next(r));
    draw_needles(g, s, r, nk);
    draw_depths(g, s, r, index);
    int st = draw_queries(g, s, r, nk);
    if (st != BOSCH_OK)
        return st;

    size_t n = 0, tokens = 0;
    if ((st = ruler_search(g, s, p->context, &n, &tokens)) != BOSCH_OK)
        return st;
    if (info) {
        info->units = n;
        info->tokens = tokens;
        info->n_needles = s->n_needles;
        for (size_t k = 0; k < s->n_needles; k++) {
            info->depth[k] = n ? (double)ruler_needle_pos(s, k, n) / (double)n : s->frac[k];
            info->offset[k] = s->offset[k];
        }
    }
    if (p->chat) {
        struct bosch_chat_message m = {"user", s->input.data};
        st = text_task_add(task, NULL, &m, 1, ruler_chat_style(g->c), s->answers, s->n_answers,
                           s->prefix,
                           RULER_MAX_NEW_TOKENS);
    } else
        st = text_task_add(task, s->input.data, NULL, 0, 0, s->answers, s->n_answers, s->prefix,
                           RULER_MAX_NEW_TOKENS);
    return st;
}
