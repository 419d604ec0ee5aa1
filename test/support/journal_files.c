#include "journal_files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <xxhash.h>
#include <zstd.h>

/* ------------------------------------------------------------------------ */
/* Little-endian fields, checksums                                           */
/* ------------------------------------------------------------------------ */
uint32_t j_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

uint64_t j_get64(const uint8_t *p)
{
    return (uint64_t)j_get32(p) | (uint64_t)j_get32(p + 4) << 32;
}

void j_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void j_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

double j_getd(const uint8_t *p)
{
    uint64_t u = j_get64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

uint32_t j_hsum(const uint8_t *hdr16)
{
    return XXH32(hdr16, 16, 0);
}

uint64_t j_psum(const uint8_t *payload, size_t clen)
{
    return XXH64(clen ? payload : (const uint8_t *)"", clen, 0);
}

/* ------------------------------------------------------------------------ */
/* Files and temp dirs                                                       */
/* ------------------------------------------------------------------------ */
uint8_t *j_slurp(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (len == cap) {
            cap *= 2;
            b = realloc(b, cap);
        }
        size_t k = fread(b + len, 1, cap - len, f);
        if (k == 0)
            break;
        len += k;
    }
    fclose(f);
    *n = len;
    return b;
}

int j_spit(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = n == 0 || fwrite(b, 1, n, f) == n;
    ok &= fclose(f) == 0;
    return ok ? 0 : -1;
}

long j_fsize(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (long)st.st_size;
}

int j_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void j_mkdtemp(char *dir)
{
    strcpy(dir, "/tmp/bosch-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
}

void j_path(char *out, size_t n, const char *dir, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

void j_rmtree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                    */
/* ------------------------------------------------------------------------ */
jframes j_parse(const uint8_t *b, size_t n)
{
    jframes r = {NULL, 0, 0, 0};
    size_t cap = 64, off = 0;
    r.f = malloc(cap * sizeof *r.f);
    while (off + JHDR <= n) {
        const uint8_t *h = b + off;
        if (memcmp(h, "BSHJ", 4) != 0)
            break;
        uint32_t kind = j_get32(h + 4), clen = j_get32(h + 8), rawlen = j_get32(h + 12);
        if (kind != JKIND_HEADER && kind != JKIND_RECORD)
            break;
        if (j_hsum(h) != j_get32(h + 16))
            break;
        if ((uint64_t)clen > n - off - JHDR)
            break;
        if (j_psum(h + JHDR, clen) != j_get64(h + 20))
            break;
        void *raw = malloc(rawlen ? rawlen : 1);
        size_t d = ZSTD_decompress(raw, rawlen, h + JHDR, clen);
        free(raw);
        if (ZSTD_isError(d) || d != rawlen)
            break;
        if (r.n == cap) {
            cap *= 2;
            r.f = realloc(r.f, cap * sizeof *r.f);
        }
        r.f[r.n++] = (jframe){off, off + JHDR + clen, kind, clen, rawlen};
        off += JHDR + clen;
    }
    r.valid_end = off;
    r.tail = off < n;
    return r;
}

void j_frames_free(jframes *fr)
{
    free(fr->f);
    fr->f = NULL;
    fr->n = 0;
}

jframes j_parse_file(const char *path, size_t *size)
{
    size_t n = 0;
    uint8_t *b = j_slurp(path, &n);
    jframes r = j_parse(b ? b : (const uint8_t *)"", b ? n : 0);
    free(b);
    if (size)
        *size = n;
    return r;
}

size_t j_count_records(const char *path)
{
    jframes fr = j_parse_file(path, NULL);
    size_t c = 0;
    for (size_t i = 0; i < fr.n; i++)
        c += fr.f[i].kind == JKIND_RECORD;
    j_frames_free(&fr);
    return c;
}

char *j_payload(const uint8_t *b, const jframe *f)
{
    char *raw = malloc((size_t)f->rawlen + 1);
    size_t d = ZSTD_decompress(raw, f->rawlen, b + f->off + JHDR, f->clen);
    if (ZSTD_isError(d) || d != f->rawlen) {
        free(raw);
        return NULL;
    }
    raw[f->rawlen] = 0;
    return raw;
}

int j_record(const uint8_t *b, const jframe *f, size_t units, jrecord *r)
{
    size_t words = (units + 63) / 64;
    if (f->kind != JKIND_RECORD || f->rawlen != 17 + 8 * words || units > J_MAXU)
        return -1;
    char *raw = j_payload(b, f);
    if (!raw)
        return -1;
    const uint8_t *p = (const uint8_t *)raw;
    r->stage = p[0];
    r->score = j_getd(p + 1);
    r->wall = j_getd(p + 9);
    for (size_t u = 0; u < units; u++)
        r->mask[u] = (uint8_t)((j_get64(p + 17 + 8 * (u / 64)) >> (u % 64)) & 1);
    free(raw);
    return 0;
}

size_t j_frame_raw(uint32_t kind, const void *payload, size_t clen, uint32_t rawlen,
                   uint8_t **out)
{
    uint8_t *f = malloc(JHDR + clen);
    memcpy(f, "BSHJ", 4);
    j_put32(f + 4, kind);
    j_put32(f + 8, (uint32_t)clen);
    j_put32(f + 12, rawlen);
    if (clen)
        memcpy(f + JHDR, payload, clen);
    j_put32(f + 16, j_hsum(f));
    j_put64(f + 20, j_psum(f + JHDR, clen));
    *out = f;
    return JHDR + clen;
}

size_t j_frame(uint32_t kind, const void *raw, size_t rawlen, uint8_t **out)
{
    size_t cap = ZSTD_compressBound(rawlen);
    uint8_t *c = malloc(cap);
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
    ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
    size_t clen = ZSTD_compress2(cc, c, cap, raw, rawlen);
    ZSTD_freeCCtx(cc);
    if (ZSTD_isError(clen))
        abort();
    size_t n = j_frame_raw(kind, c, clen, (uint32_t)rawlen, out);
    free(c);
    return n;
}

size_t j_record_raw(int stage, double score, double wall, const uint8_t *mask, size_t units,
                    uint8_t *raw)
{
    size_t words = (units + 63) / 64;
    memset(raw, 0, 17 + 8 * words);
    raw[0] = (uint8_t)stage;
    uint64_t u;
    memcpy(&u, &score, 8);
    j_put64(raw + 1, u);
    memcpy(&u, &wall, 8);
    j_put64(raw + 9, u);
    for (size_t i = 0; i < units; i++)
        if (mask[i])
            raw[17 + 8 * (i / 64) + (i % 64) / 8] |= (uint8_t)(1u << (i % 8));
    return 17 + 8 * words;
}

uint8_t *j_cat3(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, const uint8_t *c,
                size_t nc)
{
    uint8_t *d = malloc(na + nb + nc + 1);
    if (na)
        memcpy(d, a, na);
    if (nb)
        memcpy(d + na, b, nb);
    if (nc)
        memcpy(d + na + nb, c, nc);
    return d;
}
