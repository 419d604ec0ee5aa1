/* RULER's needle-in-a-haystack tasks as text, generated to a target length
 * in tokens. A C rendition of NVIDIA/RULER scripts/data/synthetic/niah.py
 * (generate_input_output, generate_samples), with the task table of
 * scripts/synthetic.yaml and the niah template and answer prefix of
 * scripts/data/synthetic/constants.py; where it differs is in
 * docs/ruler.md. */
#include "text/ruler.h"

#include "text/common.h"
#include "text/rng.h"
#include "text/ruler_data.h"
#include "text/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum haystack { HAY_NOISE, HAY_ESSAY, HAY_NEEDLE };
enum kind { K_WORDS, K_NUMBERS, K_UUIDS };

/* scripts/synthetic.yaml. */
static const struct spec {
    const char *name;
    enum haystack hay;
    enum kind k, v;
    unsigned nk, nv, nq;
} specs[] = {
    {"niah_single_1", HAY_NOISE, K_WORDS, K_NUMBERS, 1, 1, 1},
    {"niah_single_2", HAY_ESSAY, K_WORDS, K_NUMBERS, 1, 1, 1},
    {"niah_single_3", HAY_ESSAY, K_WORDS, K_UUIDS, 1, 1, 1},
    {"niah_multikey_1", HAY_ESSAY, K_WORDS, K_NUMBERS, 4, 1, 1},
    {"niah_multikey_2", HAY_NEEDLE, K_WORDS, K_NUMBERS, 1, 1, 1},
    {"niah_multikey_3", HAY_NEEDLE, K_UUIDS, K_UUIDS, 1, 1, 1},
    {"niah_multivalue", HAY_ESSAY, K_WORDS, K_NUMBERS, 1, 4, 1},
    {"niah_multiquery", HAY_ESSAY, K_WORDS, K_NUMBERS, 1, 1, 4},
};
#define N_SPECS (sizeof specs / sizeof specs[0])

/* constants.py TASKS['niah'] and niah.py's needle and noise haystack. */
static const char TEMPLATE[] =
    "Some special magic {type_needle_v} are hidden within the following text. Make sure to "
    "memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are "
    "all the special magic {type_needle_v} for {query} mentioned in the provided text?";
static const char ANSWER_PREFIX[] =
    " The special magic {type_needle_v} for {query} mentioned in the provided text are";
static const char NOISE[] = "The grass is green. The sky is blue. The sun is yellow. Here we go. "
                            "There and back again.";
/* tokens_to_generate of niah. */
#define RULER_MAX_NEW_TOKENS 128
/* niah.py: DEPTHS = np.round(np.linspace(0, 100, num=40)). */
#define RULER_DEPTHS 40

static const char *const kind_names[] = {"words", "numbers", "uuids"};

BOSCH_TEXT_API const char *bosch_text_ruler_task_name(size_t i)
{
    return i < N_SPECS ? specs[i].name : NULL;
}

BOSCH_TEXT_API void bosch_text_ruler_params_init(struct bosch_text_ruler_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->task = "niah_single_1";
    p->context = 4096;
    p->samples = 10;
    p->seed = 0;
    p->depth_min = 0.0;
    p->depth_max = 1.0;
    p->chat = 1;
}

/* ---------------------------------------------------------------------- */
/* Data: word lists and essay sentences                                    */
/* ---------------------------------------------------------------------- */

struct span {
    const char *s;
    size_t n;
};

struct spans {
    struct span *v;
    size_t n, cap;
};

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

static int split_lines(const unsigned char *data, size_t len, struct spans *out)
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
static int essay_sentences(char **flat, struct spans *out)
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

/* ---------------------------------------------------------------------- */
/* Random keys and values (niah.py generate_random)                        */
/* ---------------------------------------------------------------------- */

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

static void random_value(struct gen *g, struct text_rng *r, enum kind k, char out[VAL_MAX])
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

/* ---------------------------------------------------------------------- */
/* Strings                                                                 */
/* ---------------------------------------------------------------------- */

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
static char *render_template(const char *tmpl, int singular, const char *type_v,
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

/* ---------------------------------------------------------------------- */
/* One sample                                                              */
/* ---------------------------------------------------------------------- */

struct sample {
    char keys[RULER_MAX_NEEDLES][VAL_MAX];
    char values[RULER_MAX_NEEDLES][VAL_MAX]; /* key i's values: i*nv .. */
    char needles[RULER_MAX_NEEDLES][3 * VAL_MAX + 64];
    size_t n_needles;
    double frac[RULER_MAX_NEEDLES]; /* depths, ascending */
    const char *answers[RULER_MAX_NEEDLES];
    size_t n_answers;
    char *head, *tail, *prefix; /* the template around {context}, the answer prefix */
    /* The needle haystack's distractor lines and their counts, made as the
     * search reaches them (a separate stream: unit i is the same for any
     * haystack length). */
    struct text_rng pool_rng;
    char (*pool)[3 * VAL_MAX + 64];
    size_t *pool_tokens;
    size_t pool_n, pool_cap;
    struct text_buf input, prompt;
    size_t offset[RULER_MAX_NEEDLES];
};

static void sample_clear(struct sample *s)
{
    free(s->head);
    free(s->tail);
    free(s->prefix);
    free(s->pool);
    free(s->pool_tokens);
    text_buf_free(&s->input);
    text_buf_free(&s->prompt);
}

static void format_needle(char *out, const char *type_v, const char *key, const char *value)
{
    /* Through a local: key and value may live in the same sample. */
    char tmp[3 * VAL_MAX + 64];
    snprintf(tmp, sizeof tmp, "One of the special magic %s for %s is: %s.", type_v, key, value);
    memcpy(out, tmp, sizeof tmp);
}

static int count(struct gen *g, const char *s, size_t n, size_t *tokens)
{
    int st = g->c->count(g->c->ctx, s, n, tokens);
    if (st != BOSCH_OK)
        snprintf(g->err, g->errlen, "counting tokens failed (status %d)", st);
    return st;
}

static const char *separator(const struct gen *g) { return g->sp->hay == HAY_ESSAY ? " " : "\n"; }

/* Unit i of the haystack (cyclic for the essay, as niah.py repeats it). */
static int unit(struct gen *g, struct sample *s, size_t i, struct span *u, size_t *tokens)
{
    char buf[3 * VAL_MAX + 72];
    if (g->sp->hay == HAY_NOISE) {
        u->s = NOISE;
        u->n = sizeof NOISE - 1;
        if (tokens) {
            if (g->noise_tokens == SIZE_MAX) {
                snprintf(buf, sizeof buf, "\n%s", NOISE);
                int st = count(g, buf, strlen(buf), &g->noise_tokens);
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
                    st = count(g, b.data, b.len, &g->sent_tokens[k]);
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
            random_value(g, &s->pool_rng, g->sp->k, key);
            again = 0;
            for (size_t j = 0; j < g->sp->nk && !again; j++)
                again = !strcmp(key, s->keys[j]);
        }
        random_value(g, &s->pool_rng, g->sp->v, value);
        format_needle(s->pool[s->pool_n], kind_names[g->sp->v], key, value);
        s->pool_tokens[s->pool_n++] = SIZE_MAX;
    }
    u->s = s->pool[i];
    u->n = strlen(s->pool[i]);
    if (tokens) {
        if (s->pool_tokens[i] == SIZE_MAX) {
            snprintf(buf, sizeof buf, "\n%s", s->pool[i]);
            int st = count(g, buf, strlen(buf), &s->pool_tokens[i]);
            if (st != BOSCH_OK)
                return st;
        }
        *tokens = s->pool_tokens[i];
    }
    return BOSCH_OK;
}

/* Needle k goes before unit pos(k) (after that many units): the depth as
 * a share of the haystack, floored as niah.py's int(len * depth). */
static size_t needle_pos(const struct sample *s, size_t k, size_t n)
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
        for (; st == BOSCH_OK && k < s->n_needles && needle_pos(s, k, n) == i; k++) {
            if (b->len > start)
                st = text_buf_adds(b, sep);
            s->offset[k] = b->len;
            if (st == BOSCH_OK)
                st = text_buf_adds(b, s->needles[k]);
        }
        if (i == n || st != BOSCH_OK)
            break;
        struct span u;
        st = unit(g, s, i, &u, NULL);
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
        st = bosch_chat_format_qwen3(&m, 1, BOSCH_CHAT_GENERATION_PROMPT, &chat, &len);
        if (st == BOSCH_OK)
            st = text_buf_add(&s->prompt, chat, len);
        free(chat);
    } else
        st = text_buf_add(&s->prompt, b->data, b->len);
    if (st == BOSCH_OK)
        st = text_buf_adds(&s->prompt, s->prefix);
    if (st == BOSCH_OK)
        st = count(g, s->prompt.data, s->prompt.len, tokens);
    return st;
}

/* The largest haystack whose prompt fits the context. f(n), the count of
 * the prompt with n units, grows with n; the units' own counts predict it
 * (a secant corrects their bias), so a sample costs a few full counts
 * instead of niah.py's binary search from scratch. */
static int search(struct gen *g, struct sample *s, size_t target, size_t *best, size_t *best_tokens)
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
            if ((st = unit(g, s, guess, &(struct span){0}, &t)) != BOSCH_OK)
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
                if ((st = unit(g, s, i, &(struct span){0}, &t)) != BOSCH_OK)
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int make_sample(struct gen *g, struct sample *s, struct text_rng *r, size_t index,
                       bosch_text_task *task, struct ruler_info *info)
{
    const struct spec *sp = g->sp;
    const struct bosch_text_ruler_params *p = g->p;
    unsigned nk = sp->nk > sp->nq ? sp->nk : sp->nq; /* niah.py: max(num_needle_k, num_needle_q) */
    text_rng_seed(&s->pool_rng, text_rng_next(r));

    /* Keys and values, distinct within the sample so that each query has
     * one answer (niah.py leaves collisions to chance). */
    s->n_needles = 0;
    for (unsigned i = 0; i < nk; i++) {
        for (int again = 1; again;) {
            random_value(g, r, sp->k, s->keys[i]);
            again = 0;
            for (unsigned j = 0; j < i && !again; j++)
                again = !strcmp(s->keys[i], s->keys[j]);
        }
        for (unsigned j = 0; j < sp->nv; j++) {
            char *v = s->values[i * sp->nv + j];
            for (int again = 1; again;) {
                random_value(g, r, sp->v, v);
                again = 0;
                for (unsigned q = 0; q < i * sp->nv + j && !again; q++)
                    again = !strcmp(v, s->values[q]);
            }
            format_needle(s->needles[s->n_needles++], kind_names[sp->v], s->keys[i], v);
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
    snprintf(type_v, sizeof type_v, "%s", kind_names[sp->v]);
    if (singular)
        type_v[strlen(type_v) - 1] = '\0'; /* remove "s" */
    char *full = render_template(TEMPLATE, singular, type_v, query.data);
    s->prefix = render_template(ANSWER_PREFIX, singular, type_v, query.data);
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

    size_t n = 0, tokens = 0;
    if ((st = search(g, s, p->context, &n, &tokens)) != BOSCH_OK)
        return st;
    if (info) {
        info->units = n;
        info->tokens = tokens;
        info->n_needles = s->n_needles;
        for (size_t k = 0; k < s->n_needles; k++) {
            info->depth[k] = n ? (double)needle_pos(s, k, n) / (double)n : s->frac[k];
            info->offset[k] = s->offset[k];
        }
    }
    if (p->chat) {
        struct bosch_chat_message m = {"user", s->input.data};
        st = text_task_add(task, NULL, &m, 1, s->answers, s->n_answers, s->prefix,
                           RULER_MAX_NEW_TOKENS);
    } else
        st = text_task_add(task, s->input.data, NULL, 0, s->answers, s->n_answers, s->prefix,
                           RULER_MAX_NEW_TOKENS);
    return st;
}

/* ---------------------------------------------------------------------- */
/* The task                                                                */
/* ---------------------------------------------------------------------- */

static int check_params(const struct bosch_text_ruler_params *p, const struct spec **sp, char *err,
                        size_t errlen)
{
    if (!p) {
        snprintf(err, errlen, "params is NULL");
        return BOSCH_E_INVALID;
    }
    if (p->struct_size != sizeof *p) {
        snprintf(err, errlen, "struct_size %zu is not sizeof(struct bosch_text_ruler_params) "
                 "(%zu): call bosch_text_ruler_params_init", p->struct_size, sizeof *p);
        return BOSCH_E_INVALID;
    }
    *sp = NULL;
    for (size_t i = 0; p->task && i < N_SPECS; i++)
        if (!strcmp(p->task, specs[i].name))
            *sp = &specs[i];
    if (!*sp) {
        snprintf(err, errlen, "unknown task \"%.64s\" (niah_single_1..3, niah_multikey_1..3, "
                 "niah_multivalue, niah_multiquery)", p->task ? p->task : "(null)");
        return BOSCH_E_INVALID;
    }
    if (!p->samples) {
        snprintf(err, errlen, "samples is 0");
        return BOSCH_E_INVALID;
    }
    if (!p->context) {
        snprintf(err, errlen, "context is 0");
        return BOSCH_E_INVALID;
    }
    if (!(p->depth_min >= 0.0 && p->depth_min <= p->depth_max && p->depth_max <= 1.0)) {
        snprintf(err, errlen, "depths [%g, %g] are not within 0 <= depth_min <= depth_max <= 1",
                 p->depth_min, p->depth_max);
        return BOSCH_E_INVALID;
    }
    return BOSCH_OK;
}

int ruler_generate(const struct ruler_counter *c, const struct bosch_text_ruler_params *p,
                   bosch_text_task **out, struct ruler_info **info, char *err, size_t errlen)
{
    struct gen g = {.c = c, .p = p, .noise_tokens = SIZE_MAX, .err = err, .errlen = errlen};
    err[0] = '\0';
    int st = check_params(p, &g.sp, err, errlen);
    if (st != BOSCH_OK)
        return st;
    bosch_text_task *task = text_task_new();
    struct ruler_info *inf = info ? calloc(p->samples, sizeof *inf) : NULL;
    struct sample *s = calloc(1, sizeof *s);
    if (!task || (info && !inf) || !s)
        st = BOSCH_E_NOMEM;
    if (st == BOSCH_OK)
        st = split_lines(text_data_adjectives, text_data_adjectives_len, &g.adjs);
    if (st == BOSCH_OK)
        st = split_lines(text_data_nouns, text_data_nouns_len, &g.nouns);
    if (st == BOSCH_OK && g.sp->hay == HAY_ESSAY) {
        st = essay_sentences(&g.essay, &g.sents);
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
        sample_clear(s);
        memset(s, 0, sizeof *s);
        st = make_sample(&g, s, &r, i, task, inf ? &inf[i] : NULL);
    }
    sample_clear(s);
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
    struct ruler_counter c = {tokenizer_count, (void *)tok};
    bosch_text_task *t = NULL;
    char err[256];
    int st = ruler_generate(&c, p, &t, NULL, err, sizeof err);
    if (st != BOSCH_OK) {
        text_create_fail(st, "bosch_text_ruler_create: %s", err);
        return NULL;
    }
    return t;
}
