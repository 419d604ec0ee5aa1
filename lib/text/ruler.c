/* RULER's needle-in-a-haystack tasks as text, generated to a target length
 * in tokens. A C rendition of NVIDIA/RULER scripts/data/synthetic/niah.py
 * (generate_input_output, generate_samples), with the task table of
 * scripts/synthetic.yaml and the niah template and answer prefix of
 * scripts/data/synthetic/constants.py; where it differs is in
 * docs/ruler.md. */
#include "text/ruler_gen.h"
#include "text/ruler_data.h"
#include "text/task.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ruler_chat_style(const struct ruler_counter *c)
{
    return c->chat_style ? c->chat_style : BOSCH_CHAT_QWEN3;
}

int ruler_generate(const struct ruler_counter *c, const struct bosch_text_ruler_params *p,
                   bosch_text_task **out, struct ruler_info **info, char *err, size_t errlen)
{
    struct gen g = {.c = c, .p = p, .noise_tokens = SIZE_MAX, .err = err, .errlen = errlen};
    err[0] = '\0';
    int st = ruler_check_params(p, &g.sp, err, errlen);
    if (st != BOSCH_OK)
        return st;
    bosch_text_task *task = text_task_new();
    struct ruler_info *inf = info ? calloc(p->samples, sizeof *inf) : NULL;
    struct sample *s = calloc(1, sizeof *s);
    if (!task || (info && !inf) || !s)
        st = BOSCH_E_NOMEM;
    if (st == BOSCH_OK)
        st = ruler_split_lines(text_data_adjectives, text_data_adjectives_len, &g.adjs);
    if (st == BOSCH_OK)
        st = ruler_split_lines(text_data_nouns, text_data_nouns_len, &g.nouns);
    if (st == BOSCH_OK && g.sp->hay == HAY_ESSAY) {
        st = ruler_essay_sentences(&g.essay, &g.sents);
        if (st == BOSCH_OK && !(g.sent_tokens = malloc(g.sents.n * sizeof *g.sent_tokens)))
            st = BOSCH_E_NOMEM;
        for (size_t i = 0; st == BOSCH_OK && i < g.sents.n; i++)
            g.sent_tokens[i] = SIZE_MAX;
    }
    struct text_rng master;
    text_rng_seed(&master, p->seed);
    for (uint32_t i = 0; st == BOSCH_OK && i < p->samples; i++) {
        struct text_rng r;
        text_rng_seed(&r, text_rng_next(&master));
        ruler_sample_clear(s);
        memset(s, 0, sizeof *s);
        st = ruler_make_sample(&g, s, &r, i, task, inf ? &inf[i] : NULL);
    }
    ruler_sample_clear(s);
    free(s);
    free(g.adjs.v);
    free(g.nouns.v);
    free(g.sents.v);
    free(g.essay);
    free(g.sent_tokens);
    if (st != BOSCH_OK) {
        if (st == BOSCH_E_NOMEM && !err[0])
            snprintf(err, errlen, "out of memory");
        bosch_text_task_free(task);
        free(inf);
        return st;
    }
    *out = task;
    if (info)
        *info = inf;
    return BOSCH_OK;
}

/* Counts with the tokenizer as the model reads the prompt (special tokens
 * as their ids). */
static int tokenizer_count(void *ctx, const char *s, size_t n, size_t *tokens)
{
    int32_t *ids = NULL;
    size_t k = 0;
    int st = bosch_tokenizer_encode(ctx, s, n, 0, &ids, &k);
    bosch_text_free(ids);
    *tokens = k;
    return st;
}

BOSCH_TEXT_API bosch_text_task *bosch_text_ruler_create(const bosch_tokenizer *tok,
                                                        const struct bosch_text_ruler_params *p)
{
    if (!tok) {
        text_create_fail(BOSCH_E_INVALID, "bosch_text_ruler_create: tokenizer is NULL");
        return NULL;
    }
    struct ruler_counter c = {tokenizer_count, (void *)tok, bosch_chat_style_for(tok)};
    bosch_text_task *t = NULL;
    char err[256];
    if (p && p->chat && !c.chat_style) {
        text_create_fail(BOSCH_E_INVALID, "bosch_text_ruler_create: the tokenizer has no chat "
                         "format libbosch-text knows (Qwen3, ChatML, Llama 3: its added tokens "
                         "name none); set chat = 0 for a plain-text prompt");
        return NULL;
    }
    int st = ruler_generate(&c, p, &t, NULL, err, sizeof err);
    if (st != BOSCH_OK) {
        text_create_fail(st, "bosch_text_ruler_create: %s", err);
        return NULL;
    }
    return t;
}
