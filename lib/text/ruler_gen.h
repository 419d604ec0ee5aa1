/* The parts of RULER's NIAH generator (lib/text/ruler*.c) and what they
 * share: the task table, the state of a generation and of one sample. */
#ifndef TEXT_RULER_GEN_H
#define TEXT_RULER_GEN_H

#include "text/ruler.h"
#include "text/common.h"
#include "text/rng.h"

#include <stddef.h>

enum haystack { HAY_NOISE, HAY_ESSAY, HAY_NEEDLE };
enum kind { K_WORDS, K_NUMBERS, K_UUIDS };

/* A row of scripts/synthetic.yaml (ruler_spec.c). */
struct spec {
    const char *name;
    enum haystack hay;
    enum kind k, v;
    unsigned nk, nv, nq;
};
extern const struct spec ruler_specs[];
extern const size_t ruler_n_specs;
extern const char ruler_template[], ruler_answer_prefix[], ruler_noise[];
extern const char *const ruler_kind_names[];
/* tokens_to_generate of niah. */
#define RULER_MAX_NEW_TOKENS 128
/* niah.py: DEPTHS = np.round(np.linspace(0, 100, num=40)). */
#define RULER_DEPTHS 40

struct span {
    const char *s;
    size_t n;
};

struct spans {
    struct span *v;
    size_t n, cap;
};

struct gen {
    const struct ruler_counter *c;
    const struct bosch_text_ruler_params *p;
    const struct spec *sp;
    struct spans adjs, nouns, sents;
    char *essay;
    size_t *sent_tokens; /* per essay sentence, counted lazily (SIZE_MAX: not yet) */
    size_t noise_tokens;
    char *err;
    size_t errlen;
};

/* Up to 36 characters and a NUL (a UUID). */
#define VAL_MAX 64
#define NEEDLE_MAX (3 * VAL_MAX + 64)

struct sample {
    char keys[RULER_MAX_NEEDLES][VAL_MAX];
    char values[RULER_MAX_NEEDLES][VAL_MAX]; /* key i's values: i*nv .. */
    char needles[RULER_MAX_NEEDLES][NEEDLE_MAX];
    size_t n_needles;
    double frac[RULER_MAX_NEEDLES]; /* depths, ascending */
    const char *answers[RULER_MAX_NEEDLES];
    size_t n_answers;
    char *head, *tail, *prefix; /* the template around {context}, the answer prefix */
    /* The needle haystack's distractor lines and their counts, made as the
     * search reaches them (a separate stream: unit i is the same for any
     * haystack length). */
    struct text_rng pool_rng;
    char (*pool)[NEEDLE_MAX];
    size_t *pool_tokens;
    size_t pool_n, pool_cap;
    struct text_buf input, prompt;
    size_t offset[RULER_MAX_NEEDLES];
};

/* ruler_spec.c: p checked, its row of the table into *sp. */
int ruler_check_params(const struct bosch_text_ruler_params *p, const struct spec **sp, char *err,
                       size_t errlen);
/* ruler_haystack.c: the word lists and essay sentences of the compiled-in
 * data; unit i of a sample's haystack and (tokens not NULL) its count with
 * its separator, cached; the counter's call, reporting failures in g->err. */
int ruler_split_lines(const unsigned char *data, size_t len, struct spans *out);
int ruler_essay_sentences(char **flat, struct spans *out);
int ruler_unit(struct gen *g, struct sample *s, size_t i, struct span *u, size_t *tokens);
int ruler_count(struct gen *g, const char *s, size_t n, size_t *tokens);
/* ruler_needle.c: a random key or value (niah.py generate_random), a
 * needle sentence, the template or answer prefix of a sample. */
void ruler_random_value(struct gen *g, struct text_rng *r, enum kind k, char out[VAL_MAX]);
void ruler_format_needle(char *out, const char *type_v, const char *key, const char *value);
char *ruler_render_template(const char *tmpl, int singular, const char *type_v,
                            const char *query);
/* ruler_fit.c: where needle k goes in a haystack of n units; the largest
 * haystack whose prompt fits `target` tokens (s->input, s->prompt built). */
size_t ruler_needle_pos(const struct sample *s, size_t k, size_t n);
int ruler_search(struct gen *g, struct sample *s, size_t target, size_t *best,
                 size_t *best_tokens);
/* ruler_sample.c: one sample, drawn from r and fitted, appended to task. */
int ruler_make_sample(struct gen *g, struct sample *s, struct text_rng *r, size_t index,
                      bosch_text_task *task, struct ruler_info *info);
void ruler_sample_clear(struct sample *s);

#endif
