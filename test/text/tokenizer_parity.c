/* C side of the tokenizer parity test: encodes each document of corpus.bin
 * (written by reference/tokenize.mjs) with libbosch-text and compares with
 * the reference's ids.txt, document by document; checks that decode gives
 * back every document that is valid UTF-8, as Qwen3's NFC normalizer leaves
 * it (nfc.bin, normalized by node's String.normalize).
 * Encodes with BOSCH_TOKENIZE_ADD_SPECIAL, as the reference encodes by
 * default (add_special_tokens: the post-processor's template).
 *   tokenizer_parity TOKENIZER.json CORPUS.bin IDS.txt [NFC.bin]
 * (without NFC.bin: ids only, for a variant whose decode is not the input). */
#include <bosch/text.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)sz + 1);
    if (b && fread(b, 1, (size_t)sz, f) != (size_t)sz) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b)
        b[sz] = '\0';
    *n = (size_t)sz;
    return b;
}

/* Strict UTF-8 check (the round trip is only defined for valid text). */
static int valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i], need, lo = 0x80, hi = 0xbf;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xc2 && c <= 0xdf) need = 1;
        else if (c >= 0xe0 && c <= 0xef) { need = 2; lo = c == 0xe0 ? 0xa0 : lo; hi = c == 0xed ? 0x9f : hi; }
        else if (c >= 0xf0 && c <= 0xf4) { need = 3; lo = c == 0xf0 ? 0x90 : lo; hi = c == 0xf4 ? 0x8f : hi; }
        else return 0;
        for (unsigned k = 1; k <= need; k++) {
            if (i + k >= n || s[i + k] < lo || s[i + k] > hi)
                return 0;
            lo = 0x80;
            hi = 0xbf;
        }
        i += need + 1;
    }
    return 1;
}

static void show_ids(const char *what, const bosch_tokenizer *tok, const int32_t *v, size_t n,
                     size_t at)
{
    size_t from = at > 3 ? at - 3 : 0, to = at + 4 < n ? at + 4 : n;
    fprintf(stderr, "  %s[%zu..%zu):", what, from, to);
    for (size_t i = from; i < to; i++)
        fprintf(stderr, " %d(%s)", v[i], bosch_tokenizer_token(tok, v[i]) ? bosch_tokenizer_token(tok, v[i]) : "?");
    fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s TOKENIZER.json CORPUS.bin IDS.txt [NFC.bin]\n", argv[0]);
        return 2;
    }
    bosch_tokenizer *tok = bosch_tokenizer_open(argv[1]);
    if (!tok) {
        fprintf(stderr, "%s\n", bosch_text_create_error());
        return 1;
    }
    size_t cn, in, nn, npos = 0;
    char *corpus = slurp(argv[2], &cn), *ref = slurp(argv[3], &in);
    char *nfc = argc == 5 ? slurp(argv[4], &nn) : NULL;
    if (!corpus || !ref || (argc == 5 && !nfc)) {
        fprintf(stderr, "cannot read %s, %s or %s\n", argv[2], argv[3], argc == 5 ? argv[4] : "");
        return 1;
    }
    size_t docs = 0, bytes = 0, tokens = 0, bad = 0, trips = 0, trip_bad = 0, invalid = 0;
    size_t pos = 0;
    char *line = ref;
    int32_t *want = NULL;
    size_t want_cap = 0;
    while (pos + 4 <= cn) {
        size_t len = (unsigned char)corpus[pos] | (unsigned char)corpus[pos + 1] << 8 |
                     (size_t)(unsigned char)corpus[pos + 2] << 16 |
                     (size_t)(unsigned char)corpus[pos + 3] << 24;
        pos += 4;
        if (pos + len > cn || !line || !*line) {
            fprintf(stderr, "corpus and ids.txt do not match in length\n");
            return 1;
        }
        const char *doc = corpus + pos;
        pos += len;
        if (nfc && npos + 4 > nn) {
            fprintf(stderr, "corpus and nfc.bin do not match in length\n");
            return 1;
        }
        size_t rlen = 0;
        const char *rdoc = NULL;
        if (nfc) {
            rlen = (unsigned char)nfc[npos] | (unsigned char)nfc[npos + 1] << 8 |
                   (size_t)(unsigned char)nfc[npos + 2] << 16 |
                   (size_t)(unsigned char)nfc[npos + 3] << 24;
            rdoc = nfc + npos + 4;
            npos += 4 + rlen;
        }
        if (nfc && npos > nn) {
            fprintf(stderr, "nfc.bin: truncated\n");
            return 1;
        }
        char *eol = strchr(line, '\n');
        if (!eol) {
            fprintf(stderr, "ids.txt: line %zu has no end\n", docs + 1);
            return 1;
        }
        *eol = '\0';
        size_t nw = 0;
        for (char *p = line; *p;) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            if (nw == want_cap) {
                want_cap = want_cap ? want_cap * 2 : 1024;
                want = realloc(want, want_cap * sizeof *want);
            }
            want[nw++] = (int32_t)v;
            p = end;
        }
        line = eol + 1;
        int32_t *ids;
        size_t n;
        if (bosch_tokenizer_encode(tok, doc, len, BOSCH_TOKENIZE_ADD_SPECIAL, &ids, &n) != BOSCH_OK) {
            fprintf(stderr, "document %zu: encode failed\n", docs);
            return 1;
        }
        size_t d = 0;
        while (d < n && d < nw && ids[d] == want[d])
            d++;
        if (d < n || d < nw) {
            if (bad++ < 10) {
                fprintf(stderr, "MISMATCH document %zu (%zu bytes): first difference at token %zu"
                        " (%zu ids here, %zu in the reference)\n", docs, len, d, n, nw);
                show_ids("libbosch-text", tok, ids, n, d);
                show_ids("reference    ", tok, want, nw, d);
            }
        }
        /* invalid UTF-8 too: the decoded text is the WHATWG reading, normalized */
        if (nfc) {
            char *back;
            size_t bl;
            trips++;
            invalid += !valid_utf8((const unsigned char *)doc, len);
            if (bosch_tokenizer_decode(tok, ids, n, 0, &back, &bl) != BOSCH_OK || bl != rlen ||
                memcmp(back, rdoc, rlen)) {
                if (trip_bad++ < 10)
                    fprintf(stderr, "ROUND TRIP document %zu: decode(encode(x)) != x\n", docs);
            }
            bosch_text_free(back);
        }
        bosch_text_free(ids);
        docs++;
        bytes += len;
        tokens += n;
    }
    if (!nfc) {
        printf("parity (%s): %zu documents, %zu bytes, %zu tokens; %zu mismatching documents\n",
               argv[1], docs, bytes, tokens, bad);
        free(want);
        free(corpus);
        free(ref);
        bosch_tokenizer_free(tok);
        return bad || docs == 0 ? 1 : 0;
    }
    printf("parity: %zu documents, %zu bytes, %zu tokens; %zu mismatching documents; "
           "decode(encode(x)) == NFC(x) for %zu/%zu documents (%zu of them invalid UTF-8, "
           "read as WHATWG's decoder reads it)\n", docs, bytes, tokens, bad, trips - trip_bad, trips, invalid);
    free(want);
    free(corpus);
    free(ref);
    free(nfc);
    bosch_tokenizer_free(tok);
    return bad || trip_bad || docs == 0 ? 1 : 0;
}
