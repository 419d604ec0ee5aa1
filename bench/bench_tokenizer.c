/* Encode speed of libbosch-text's tokenizer on the parity corpus (corpus.bin
 * of test/text/reference/tokenize.mjs), best of 3 passes on one thread, each
 * document encoded on its own as the reference does. Run through
 * bench/tokenizer_bench.sh, which times the JS reference on the same bytes.
 *   bench_tokenizer TOKENIZER.json CORPUS.bin */
#include <bosch/text.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s TOKENIZER.json CORPUS.bin\n", argv[0]);
        return 2;
    }
    double t0 = now();
    bosch_tokenizer *tok = bosch_tokenizer_open(argv[1]);
    if (!tok) {
        fprintf(stderr, "%s\n", bosch_text_create_error());
        return 1;
    }
    double load = now() - t0;
    FILE *f = fopen(argv[2], "rb");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *c = malloc((size_t)sz);
    if (!c || fread(c, 1, (size_t)sz, f) != (size_t)sz)
        return 1;
    fclose(f);
    double best = 1e30;
    size_t bytes = 0, tokens = 0, docs = 0;
    for (int rep = 0; rep < 3; rep++) {
        bytes = tokens = docs = 0;
        t0 = now();
        for (size_t p = 0; p + 4 <= (size_t)sz;) {
            size_t len = c[p] | c[p + 1] << 8 | (size_t)c[p + 2] << 16 | (size_t)c[p + 3] << 24;
            p += 4;
            int32_t *ids;
            size_t n;
            if (bosch_tokenizer_encode(tok, (const char *)c + p, len, 0, &ids, &n))
                return 1;
            bosch_text_free(ids);
            p += len;
            bytes += len;
            tokens += n;
            docs++;
        }
        double s = now() - t0;
        best = s < best ? s : best;
    }
    printf("libbosch-text: %zu documents, %zu bytes, %zu tokens; %.2f MB/s (best of 3 passes, "
           "%.3f s, one thread; tokenizer.json loaded in %.3f s)\n", docs, bytes, tokens,
           (double)bytes / 1e6 / best, best, load);
    free(c);
    bosch_tokenizer_free(tok);
    return 0;
}
