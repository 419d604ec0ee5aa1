/* bench_ruler: RULER NIAH generation with the real tokenizer.
 *
 *   bench_ruler TOKENIZER_JSON [--contexts LIST] [--samples N] [--tasks LIST]
 *               [--write DIR]
 *
 * For each task (default niah_single_1, niah_single_2, niah_multikey_2) and
 * context (default 4096,32768,131072) generates N samples (default 2) with
 * bosch_text_ruler_create and reports the wall time per sample, then runs
 * the generator again through a counting wrapper of the same encoder
 * (lib/text/ruler.h) to report how many encode calls and bytes that took
 * (bytes encoded / bytes of the prompts). It also reports the encoder's
 * per-call cost on a short string and its throughput on a long one.
 * --write DIR writes each task as DIR/TASK-CONTEXT.jsonl (to compare the
 * generator's output across versions). */
#include "text/ruler.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct counted {
    const bosch_tokenizer *tok;
    size_t calls, bytes;
};

static int count_tokens(void *ctx, const char *s, size_t n, size_t *tokens)
{
    struct counted *c = ctx;
    int32_t *ids = NULL;
    size_t k = 0;
    int st = bosch_tokenizer_encode(c->tok, s, n, 0, &ids, &k);
    bosch_text_free(ids);
    c->calls++;
    c->bytes += n;
    *tokens = k;
    return st;
}

static size_t split(char *s, char **out, size_t max)
{
    size_t n = 0;
    for (char *t = strtok(s, ","); t && n < max; t = strtok(NULL, ","))
        out[n++] = t;
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_ruler TOKENIZER_JSON [--contexts LIST] [--samples N] "
                        "[--tasks LIST] [--write DIR]\n");
        return 2;
    }
    char ctx_list[256] = "4096,32768,131072", task_list[512] =
        "niah_single_1,niah_single_2,niah_multikey_2";
    unsigned samples = 2;
    const char *dir = NULL;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--contexts"))
            snprintf(ctx_list, sizeof ctx_list, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--tasks"))
            snprintf(task_list, sizeof task_list, "%s", argv[i + 1]);
        else if (!strcmp(argv[i], "--samples"))
            samples = (unsigned)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--write"))
            dir = argv[i + 1];
        else {
            fprintf(stderr, "bench_ruler: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    double t0 = now();
    bosch_tokenizer *tok = bosch_tokenizer_open(argv[1]);
    if (!tok) {
        fprintf(stderr, "bench_ruler: %s: %s\n", argv[1], bosch_text_create_error());
        return 1;
    }
    printf("# bench_ruler\n\ntokenizer %s loaded in %.3f s\n\n", argv[1], now() - t0);

    /* The encoder's fixed cost per call and its throughput. */
    struct counted c = {tok, 0, 0};
    size_t k;
    int reps = 20000;
    t0 = now();
    for (int i = 0; i < reps; i++)
        count_tokens(&c, " The sky is blue.", 17, &k);
    double per_call = (now() - t0) / reps;
    char *big = NULL;
    size_t big_len = 0;
    {
        struct bosch_text_ruler_params p;
        bosch_text_ruler_params_init(&p);
        p.task = "niah_single_2";
        p.context = 32768;
        p.samples = 1;
        bosch_text_task *t = bosch_text_ruler_create(tok, &p);
        if (!t || bosch_text_task_prompt(t, 0, 0, &big, &big_len) != BOSCH_OK) {
            fprintf(stderr, "bench_ruler: %s\n", bosch_text_create_error());
            return 1;
        }
        bosch_text_task_free(t);
    }
    t0 = now();
    count_tokens(&c, big, big_len, &k);
    double dt = now() - t0;
    printf("encoder: %.2f us per call on a 17-byte sentence (%d calls); %zu bytes -> %zu tokens "
           "in %.3f s (%.2f MB/s)\n\n", 1e6 * per_call, reps, big_len, k, dt,
           (double)big_len / dt / 1e6);
    bosch_text_free(big);

    printf("| task | context | samples | s/sample | prompt tokens (min..max) | encode calls/sample "
           "| bytes encoded / prompt bytes |\n| --- | --- | --- | --- | --- | --- | --- |\n");
    char *tasks[16], *ctxs[16];
    size_t nt = split(task_list, tasks, 16), nc = split(ctx_list, ctxs, 16);
    int rc = 0;
    for (size_t ti = 0; ti < nt; ti++)
        for (size_t ci = 0; ci < nc; ci++) {
            struct bosch_text_ruler_params p;
            bosch_text_ruler_params_init(&p);
            p.task = tasks[ti];
            p.context = (uint32_t)strtoul(ctxs[ci], NULL, 10);
            p.samples = samples;
            p.seed = 1;
            t0 = now();
            bosch_text_task *t = bosch_text_ruler_create(tok, &p);
            double per = (now() - t0) / samples;
            if (!t) {
                fprintf(stderr, "bench_ruler: %s\n", bosch_text_create_error());
                rc = 1;
                continue;
            }
            size_t lo = SIZE_MAX, hi = 0, pbytes = 0;
            for (size_t i = 0; i < samples; i++) {
                char *s;
                size_t n;
                if (bosch_text_task_prompt(t, i, 0, &s, &n) != BOSCH_OK)
                    return 1;
                count_tokens(&(struct counted){tok, 0, 0}, s, n, &k);
                lo = k < lo ? k : lo;
                hi = k > hi ? k : hi;
                pbytes += n;
                bosch_text_free(s);
            }
            if (dir) {
                char path[1024];
                snprintf(path, sizeof path, "%s/%s-%s.jsonl", dir, tasks[ti], ctxs[ci]);
                if (bosch_text_task_write_jsonl(t, path) != BOSCH_OK)
                    rc = 1;
            }
            bosch_text_task_free(t);
            /* The same generation, counted. */
            struct counted cc = {tok, 0, 0};
            struct ruler_counter rcnt = {count_tokens, &cc, BOSCH_CHAT_QWEN3};
            bosch_text_task *t2 = NULL;
            char err[256];
            if (ruler_generate(&rcnt, &p, &t2, NULL, err, sizeof err) != BOSCH_OK) {
                fprintf(stderr, "bench_ruler: %s\n", err);
                return 1;
            }
            bosch_text_task_free(t2);
            printf("| %s | %u | %u | %.3f | %zu..%zu | %.1f | %.2f |\n", p.task, p.context,
                   samples, per, lo, hi, (double)cc.calls / samples,
                   (double)cc.bytes / (double)pbytes);
            fflush(stdout);
        }
    bosch_tokenizer_free(tok);
    return rc;
}
