/* bosch generate: greedy continuation of a prompt (--prompt TEXT, or a
 * sample of the task) through libbosch-torch's hybrid KV cache under a
 * saved mask (bosch_torch_generate), with the KV bytes held against a full
 * cache, what the selection's saving predicts, and the decode speed.
 * --check also continues by re-running the masked forward over the whole
 * sequence per token (bosch_torch_generate_reference) and compares the
 * tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "model_dir.h"
#include "options.h"
#include "output.h"
#ifdef BOSCH_CLI_TORCH
#include "backend.h"
#endif

#ifdef BOSCH_CLI_TORCH
/* What one run continues: the prompt's ids (owned when encoded here). */
struct prompt {
    const int32_t *ids;
    size_t n;
    int32_t *owned;                  /* bosch_text_free */
    const int32_t *answer;           /* the task sample's answer ids, or NULL */
    size_t n_answer;
    uint32_t max_new;                /* the sample's, or 0 */
    char what[160];
};

/* --prompt TEXT: one user turn in the chat format of the tokenizer's family
 * (bosch_chat_style_for; Qwen3's with the non-thinking generation prompt)
 * (--raw: the text as it is, after the BOS/EOS its post-processor adds). */
static int encode_prompt(const struct settings *s, const bosch_tokenizer *tok, struct prompt *p)
{
    char *text = NULL;
    size_t len = strlen(s->prompt);
    int rc;
    if (!tok) {
        errorf("generate: --prompt needs a tokenizer (the model directory has no "
               "tokenizer.json; give --tokenizer FILE)");
        return EXIT_ERROR;
    }
    if (!s->raw) {
        struct bosch_chat_message m = {"user", s->prompt};
        enum bosch_chat_style style = bosch_chat_style_for(tok);
        if (!style) {
            errorf("generate: the tokenizer has no chat format libbosch-text knows (Qwen3, "
                   "ChatML, Llama 3); --raw gives the prompt as it is");
            return EXIT_ERROR;
        }
        if ((rc = bosch_chat_format(style, &m, 1, BOSCH_CHAT_GENERATION_PROMPT, &text, &len))) {
            errorf("generate: rendering the prompt: %s", bosch_strerror(rc));
            return EXIT_ERROR;
        }
    }
    rc = bosch_tokenizer_encode(tok, text ? text : s->prompt, len,
                                s->raw ? BOSCH_TOKENIZE_ADD_SPECIAL : 0, &p->owned, &p->n);
    bosch_text_free(text);
    if (rc || p->n == 0) {
        /* A byte-level BPE drops the bytes it has no token for: a prompt of
         * such bytes alone is no empty one. */
        if (rc || !len)
            errorf("generate: %s", rc ? bosch_strerror(rc) : "the prompt is empty");
        else
            errorf("generate: the %s prompt (%zu bytes) encodes to no token: the tokenizer has "
                   "a token for none of its characters (it drops such bytes); give text in its "
                   "vocabulary, or the model's own tokenizer", s->raw ? "raw" : "chat", len);
        return EXIT_ERROR;
    }
    p->ids = p->owned;
    snprintf(p->what, sizeof p->what, "--prompt%s", s->raw ? " (raw)" : " (chat)");
    return 0;
}

static int task_prompt(const struct settings *s, const struct backend *b, struct prompt *p)
{
    size_t n = bosch_torch_task_samples(b->t);
    if (s->sample >= n) {
        errorf("generate: --sample %u: the task has %zu sample%s (0..%zu)", s->sample, n,
               n == 1 ? "" : "s", n - 1);
        return EXIT_ERROR;
    }
    bosch_torch_task_sample(b->t, s->sample, &p->ids, &p->n, &p->answer, &p->n_answer,
                            &p->max_new);
    snprintf(p->what, sizeof p->what, "sample %u of %s", s->sample, s->task ? s->task : "niah");
    return 0;
}

static void print_tokens(const char *label, const bosch_tokenizer *tok, const int32_t *ids,
                         size_t n)
{
    char *text = NULL;
    size_t len;
    printf("%s", label);
    if (tok && !bosch_tokenizer_decode(tok, ids, n, 0, &text, &len)) {
        printf(" \"");
        for (size_t i = 0; i < len; i++) {
            unsigned char c = (unsigned char)text[i];
            if (c == '"' || c == '\\')
                printf("\\%c", c);
            else if (c == '\n')
                printf("\\n");
            else if (c < 0x20)
                printf("\\u%04x", c);
            else
                putchar(c);
        }
        printf("\"");
        bosch_text_free(text);
    }
    printf(" [");
    for (size_t i = 0; i < n; i++)
        printf("%s%d", i ? ", " : "", ids[i]);
    printf("]\n");
}

/* The default --max-new (the sample's, else 64), cut to what the model's
 * max_position_embeddings leaves after the prompt (*cut: the default it
 * replaced, else 0); a --max-new given is kept (bosch_torch_generate
 * refuses it when it does not fit). 0, or EXIT_ERROR after a message when
 * not one new token fits. */
static int fit_max_new(const struct settings *s, const struct backend *b, const struct prompt *p,
                       uint32_t *max_new, uint32_t *cut)
{
    *max_new = s->max_new ? s->max_new : p->max_new ? p->max_new : 64;
    *cut = 0;
    uint64_t cap = bosch_torch_model_max_positions(b->m);
    if (s->max_new || !cap || p->n + *max_new <= cap)
        return 0;
    if (p->n >= cap) {
        errorf("generate: the prompt's %zu tokens leave no position for a new token within the "
               "model's max_position_embeddings (%llu)", p->n, (unsigned long long)cap);
        return EXIT_ERROR;
    }
    *cut = *max_new;
    *max_new = (uint32_t)(cap - p->n);
    return 0;
}

/* The KV units the model's config makes sliding (every KV group of such a
 * layer): the cache keeps the config's window and no sink there, whatever
 * the mask says. */
static size_t config_sliding_units(const struct backend *b)
{
    size_t n = 0;
    for (uint32_t l = 0; l < b->L; l++)
        n += bosch_torch_model_layer_sliding(b->m, l) == 1 ? b->G : 0;
    return n;
}

/* The saving the cache should hold at `capacity` tokens: bosch_kv_saving
 * of the mask's own SWA units (window + sink) plus that of the config's
 * sliding units (its window, no sink); the formula is linear in the ratio. */
static double predicted_saving(const struct backend *b, const uint8_t *mask, uint64_t capacity,
                               unsigned window, unsigned sink)
{
    size_t units = (size_t)b->L * b->G, own = 0, fixed = 0;
    for (uint32_t l = 0; l < b->L; l++) {
        int slides = bosch_torch_model_layer_sliding(b->m, l) == 1;
        for (uint32_t g = 0; g < b->G; g++) {
            fixed += slides;
            own += !slides && mask[(size_t)l * b->G + g];
        }
    }
    return bosch_kv_saving((double)own / (double)units, capacity, window, sink) +
           bosch_kv_saving((double)fixed / (double)units, capacity,
                           bosch_torch_model_sliding_window(b->m), 0);
}

static int run_generate(struct settings *s, const bosch_selection *sel)
{
    struct backend b;
    struct prompt p;
    int status = EXIT_ERROR;
    uint8_t *mask = NULL;
    int32_t *stop = NULL, *out = NULL, *again = NULL;
    memset(&p, 0, sizeof p);
    if (backend_open_model(s, &b))
        goto done;
    fprintf(stderr, "model %s: %s\n", b.dir, backend_describe(&b));
    size_t units = (size_t)b.L * b.G;
    if (sel && backend_check_mask(&b, sel, s->mask))
        goto done;
    if (!(mask = calloc(units, 1))) {
        errorf("out of memory");
        goto done;
    }
    if (sel)
        bosch_selection_mask(sel, mask, units);
    const bosch_tokenizer *tok = bosch_torch_checkpoint_tokenizer(b.ck);
    if (s->prompt ? encode_prompt(s, tok, &p) : task_prompt(s, &b, &p))
        goto done;
    uint32_t max_new, cut;
    if (fit_max_new(s, &b, &p, &max_new, &cut))
        goto done;
    /* With a tokenizer, stop where RULER's match metric stops. */
    size_t n_stop = 0;
    if ((tok && bosch_tokenizer_stop_ids(tok, b.V, &stop, &n_stop)) ||
        !(out = malloc(max_new * sizeof *out))) {
        errorf("out of memory");
        goto done;
    }
    if (s->prompt)
        s->niah = 0; /* the checkpoint's stand-in task says nothing of the window */
    unsigned window = effective_window(s), sink = s->sink;
    size_t swa = 0;
    for (size_t u = 0; u < units; u++)
        swa += mask[u] != 0;
    printf("mask %s (%.63s), SWA ratio %.4f, window %u, sink %u",
           sel ? s->mask : "none", sel ? shown_method(sel) : "full attention",
           (double)swa / (double)units, window, sink);
    size_t fixed = config_sliding_units(&b);
    if (fixed)
        printf("; the config fixes %zu of %zu units as sliding (window %u, no sink)", fixed,
               units, bosch_torch_model_sliding_window(b.m));
    printf("\n");
    printf("prompt: %s, %zu tokens\n", p.what, p.n);
    if (cut)
        printf("max-new %u (not %u): what the model's max_position_embeddings leaves after the "
               "prompt\n", max_new, cut);

    struct bosch_torch_generation info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    size_t n_out = 0;
    int rc = bosch_torch_generate(b.m, mask, units, window, sink, p.ids, p.n, max_new, stop,
                                  n_stop, out, &n_out, &info);
    if (rc) {
        errorf("generate: %s: %s", bosch_strerror(rc), bosch_torch_model_last_error(b.m));
        goto done;
    }
    print_tokens("continuation:", tok, out, n_out);
    if (p.answer) {
        int same = n_out >= p.n_answer && !memcmp(out, p.answer, p.n_answer * sizeof *out);
        print_tokens(same ? "answer (reproduced):" : "answer (not reproduced):", tok, p.answer,
                     p.n_answer);
    }
    /* The saving at this run's context (prompt + max_new, the cache's
     * capacity), of what slides: the mask's units and the config's. */
    uint64_t capacity = p.n + max_new;
    double predicted = predicted_saving(&b, mask, capacity, window, sink);
    double held = info.kv_bytes_full ? (double)info.kv_bytes / (double)info.kv_bytes_full : 1;
    printf("KV cache: %llu bytes held of %llu for full attention (%.4f) at %llu tokens of "
           "capacity: saving %.4f, %s %.4f\n",
           (unsigned long long)info.kv_bytes, (unsigned long long)info.kv_bytes_full, held,
           (unsigned long long)capacity, 1 - held,
           fixed ? "bosch_kv_saving of the mask's and the config's sliding units"
                 : "the selection's bosch_kv_saving",
           predicted);
    double steps = n_out > 1 ? (double)(n_out - 1) : 0;
    printf("prefill %zu tokens in %.3f s; decode %zu tokens in %.3f s", p.n,
           info.prefill_seconds, n_out, info.decode_seconds);
    if (steps > 0 && info.decode_seconds > 0)
        printf(" (%.1f tokens/s)", steps / info.decode_seconds);
    printf("\n");
    if (s->check) {
        size_t n_again = 0;
        if (!(again = malloc(max_new * sizeof *again))) {
            errorf("out of memory");
            goto done;
        }
        if (bosch_torch_generate_reference(b.m, mask, units, window, sink, p.ids, p.n, max_new,
                                           stop, n_stop, again, &n_again)) {
            errorf("generate --check: %s", bosch_torch_model_last_error(b.m));
            goto done;
        }
        if (n_again != n_out || memcmp(again, out, n_out * sizeof *out)) {
            print_tokens("masked forward:", tok, again, n_again);
            errorf("generate --check: the cache's continuation differs from the masked "
                   "forward's");
            goto done;
        }
        printf("check: the masked forward over the whole sequence gives the same %zu tokens\n",
               n_out);
    }
    status = EXIT_OK;
done:
    free(again);
    free(out);
    bosch_text_free(stop);
    bosch_text_free(p.owned);
    free(mask);
    backend_free(&b);
    return status;
}
#endif

int cmd_generate(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    int rc = parse_command(CMD_GENERATE, argc, argv, &s, NULL);
    if (rc)
        return rc;
#ifndef BOSCH_CLI_TORCH
    return no_backend(argv[0]);
#else
    bosch_selection *sel = NULL;
    if (s.mask && !(sel = read_mask(s.mask)))
        return EXIT_ERROR;
    if (sel)
        settings_from_mask(&s, sel);
    if (s.prompt) {
        /* The checkpoint always makes a task; a one-sample NIAH costs nothing.
         * (Not counted as a NIAH run: the window stays the mask's, bosch.json's
         * or the default.) */
        s.task = NULL;
        s.niah_given = 1;
        s.samples = 1;
    }
    rc = model_setup(&s, 1) ? EXIT_ERROR : run_generate(&s, sel);
    bosch_selection_free(sel);
    return rc;
#endif
}
