/* RULER's NIAH tasks built by bosch_text_ruler_create with the real Qwen3
 * tokenizer (public API only).
 *   ruler_qwen3 TOKENIZER_JSON ESSAY_TXT
 * For every task name, contexts 1024 and 4096, 3 samples, seeds 1
 * (calibration) and 2 (held-out):
 *  - the rendered prompt (bosch_text_task_prompt, chat format, non-thinking)
 *    encodes to at most `context` tokens and to no fewer than context minus
 *    one haystack unit (the generator stops when the next unit would not
 *    fit; a unit is counted here with its separator, plus 2 tokens for BPE
 *    merges across its boundaries). The unit bound: RULER's noise line; for
 *    the distractor-needle haystack the longest needle line of the prompt
 *    plus 8 (another random key and value); for the essay the longest
 *    sentence of ESSAY_TXT, cut by the rule of docs/ruler.md;
 *  - every answer occurs in the prompt, in a needle ("is: ANSWER.");
 *  - each answer, after a space as the target puts it, encodes to 1..40
 *    ordinary tokens that decode back to it; the target too;
 *  - seeds 1 and 2 share no answer and no prompt;
 *  - the same parameters give the same prompts and answers again.
 * Prints one line per failure and exits 1 if any. */
#include <bosch/text.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define FAIL(...)                                                                                 \
    do {                                                                                          \
        printf("FAIL: " __VA_ARGS__);                                                             \
        putchar('\n');                                                                            \
        failures++;                                                                               \
    } while (0)

static const bosch_tokenizer *tok;

static size_t count(const char *s, size_t n)
{
    int32_t *ids = NULL;
    size_t k = 0;
    if (bosch_tokenizer_encode(tok, s, n, 0, &ids, &k) != BOSCH_OK) {
        FAIL("encode failed");
        k = 0;
    }
    bosch_text_free(ids);
    return k;
}

static size_t counts(const char *s) { return count(s, strlen(s)); }

/* The longest essay sentence in tokens, " " + sentence (docs/ruler.md:
 * whitespace collapsed, a sentence ends at . ? or ! and closing quotes or
 * brackets before a space). */
static size_t essay_max_unit(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        FAIL("cannot open %s", path);
        return 0;
    }
    char *d = NULL;
    size_t n = 0, cap = 0;
    for (int c; (c = getc(f)) != EOF;) {
        if (n + 2 >= cap && !(d = realloc(d, cap = cap ? 2 * cap : 1 << 20)))
            abort();
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
            if (n && d[n - 1] != ' ')
                d[n++] = ' ';
        } else
            d[n++] = (char)c;
    }
    fclose(f);
    size_t best = 0, start = 0;
    for (size_t i = 0; i < n; i++) {
        if (d[i] != '.' && d[i] != '?' && d[i] != '!')
            continue;
        size_t e = i + 1;
        while (e < n && (d[e] == '\'' || d[e] == '"' || d[e] == ')'))
            e++;
        if (e < n && d[e] != ' ')
            continue;
        d[start - (start > 0)] = ' '; /* " " + sentence */
        size_t k = count(d + start - (start > 0), e - start + (start > 0));
        best = k > best ? k : best;
        start = e + 1;
        i = e;
    }
    free(d);
    return best;
}

/* The longest line of s that is a needle, "\n" + line, in tokens. */
static size_t needle_max_unit(const char *s)
{
    size_t best = 0;
    for (const char *p = s; (p = strstr(p, "\nOne of the special magic"));) {
        const char *e = strchr(p + 1, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        size_t k = count(p, n);
        best = k > best ? k : best;
        p += n;
    }
    return best;
}

static bosch_text_task *make(const char *task, uint32_t context, uint64_t seed)
{
    struct bosch_text_ruler_params p;
    bosch_text_ruler_params_init(&p);
    p.task = task;
    p.context = context;
    p.samples = 3;
    p.seed = seed;
    bosch_text_task *t = bosch_text_ruler_create(tok, &p);
    if (!t)
        FAIL("%s context %u seed %llu: %s", task, context, (unsigned long long)seed,
             bosch_text_create_error());
    else if (bosch_text_task_samples(t) != 3)
        FAIL("%s: %zu samples, not 3", task, bosch_text_task_samples(t));
    return t;
}

static char *prompt(const bosch_text_task *t, size_t i)
{
    char *s = NULL;
    size_t n;
    if (bosch_text_task_prompt(t, i, 0, &s, &n) != BOSCH_OK || strlen(s) != n)
        FAIL("prompt %zu", i);
    return s;
}

/* An answer string as the target puts it: after a space. */
static void check_answer(const char *task, const char *a)
{
    char buf[256];
    snprintf(buf, sizeof buf, " %s", a);
    int32_t *ids = NULL;
    size_t k = 0;
    if (bosch_tokenizer_encode(tok, buf, strlen(buf), 0, &ids, &k) != BOSCH_OK || !k || k > 40) {
        FAIL("%s: answer \"%s\" encodes to %zu tokens", task, a, k);
        bosch_text_free(ids);
        return;
    }
    for (size_t j = 0; j < k; j++)
        if (!bosch_tokenizer_is_ordinary(tok, ids[j]))
            FAIL("%s: answer \"%s\" has the non-ordinary token %d", task, a, (int)ids[j]);
    char *back = NULL;
    size_t len;
    if (bosch_tokenizer_decode(tok, ids, k, 0, &back, &len) != BOSCH_OK || strcmp(back, buf))
        FAIL("%s: answer \"%s\" decodes back as \"%s\"", task, a, back ? back : "(null)");
    bosch_text_free(back);
    bosch_text_free(ids);
}

static void check_task(const char *task, uint32_t context, size_t essay_unit, size_t *worst)
{
    bosch_text_task *t[2] = {make(task, context, 1), make(task, context, 2)};
    bosch_text_task *again = make(task, context, 1);
    if (!t[0] || !t[1] || !again)
        goto out;
    size_t noise_unit = counts("\nThe grass is green. The sky is blue. The sun is yellow. Here we "
                               "go. There and back again.");
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < 3; i++) {
            char *p = prompt(t[s], i);
            if (!p)
                continue;
            size_t n = counts(p);
            size_t unit = strstr(task, "single_1")   ? noise_unit
                          : strstr(task, "multikey_2") || strstr(task, "multikey_3")
                              ? needle_max_unit(p) + 8
                              : essay_unit;
            if (n > context)
                FAIL("%s context %u seed %d sample %zu: %zu tokens", task, context, s + 1, i, n);
            else if (context - n > unit + 2)
                FAIL("%s context %u seed %d sample %zu: %zu tokens, %zu short (one unit: %zu)",
                     task, context, s + 1, i, n, context - n, unit);
            if (n <= context && context - n > worst[0]) {
                worst[0] = context - n;
                worst[1] = unit;
            }
            size_t na = bosch_text_task_answers(t[s], i);
            if (!na)
                FAIL("%s: sample %zu has no answer", task, i);
            for (size_t j = 0; j < na; j++) {
                const char *a = bosch_text_task_answer(t[s], i, j);
                char needle[256];
                snprintf(needle, sizeof needle, "is: %s.", a);
                if (!strstr(p, needle))
                    FAIL("%s seed %d sample %zu: answer \"%s\" is not in a needle of the prompt",
                         task, s + 1, i, a);
                check_answer(task, a);
                /* Calibration and held-out sets share no answer. */
                for (size_t i2 = 0; s == 0 && i2 < 3; i2++)
                    for (size_t j2 = 0; j2 < bosch_text_task_answers(t[1], i2); j2++)
                        if (!strcmp(a, bosch_text_task_answer(t[1], i2, j2)))
                            FAIL("%s: answer \"%s\" in both seeds", task, a);
            }
            const char *target = bosch_text_task_target(t[s], i);
            if (!target || count(target, strlen(target)) < na)
                FAIL("%s: target \"%s\" encodes to too few tokens", task, target);
            if (s == 0) {
                char *q = prompt(t[1], i), *r = prompt(again, i);
                if (q && !strcmp(p, q))
                    FAIL("%s sample %zu: seeds 1 and 2 give the same prompt", task, i);
                if (r && strcmp(p, r))
                    FAIL("%s sample %zu: the same seed gives another prompt", task, i);
                if (bosch_text_task_answers(again, i) != na)
                    FAIL("%s sample %zu: the same seed gives other answers", task, i);
                for (size_t j = 0; j < na && j < bosch_text_task_answers(again, i); j++)
                    if (strcmp(bosch_text_task_answer(t[0], i, j),
                               bosch_text_task_answer(again, i, j)))
                        FAIL("%s sample %zu: the same seed gives other answers", task, i);
                bosch_text_free(q);
                bosch_text_free(r);
            }
            bosch_text_free(p);
        }
out:
    bosch_text_task_free(t[0]);
    bosch_text_task_free(t[1]);
    bosch_text_task_free(again);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: ruler_qwen3 TOKENIZER_JSON ESSAY_TXT\n");
        return 2;
    }
    bosch_tokenizer *tk = bosch_tokenizer_open(argv[1]);
    if (!tk) {
        printf("FAIL: %s: %s\n", argv[1], bosch_text_create_error());
        return 1;
    }
    tok = tk;
    size_t essay_unit = essay_max_unit(argv[2]);
    printf("longest essay sentence: %zu tokens\n", essay_unit);
    size_t names = 0;
    static const uint32_t contexts[] = {1024, 4096};
    for (const char *name; (name = bosch_text_ruler_task_name(names)); names++)
        for (size_t c = 0; c < 2; c++) {
            size_t worst[2] = {0, 0};
            check_task(name, contexts[c], essay_unit, worst);
            printf("%s context %u: at most %zu tokens short (one unit <= %zu)\n", name,
                   contexts[c], worst[0], worst[1]);
        }
    if (names != 8)
        FAIL("%zu task names, not 8", names);
    bosch_tokenizer_free(tk);
    printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
