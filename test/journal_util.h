/*
 * Test-side reader and writer of the libbosch journal format (docs/journal.md),
 * independent of the library: frames are parsed, checksummed (XXH32 and XXH64, seed 0)
 * and decompressed (zstd) here, so the tests can check what the library wrote
 * and craft damaged or foreign journals. Plus temp-dir and file helpers.
 *
 * Frame: magic "BSHJ" | kind u32 | clen u32 | rawlen u32 | XXH32 u32 of bytes
 * 0..15 | XXH64 u64 of the payload | payload (one zstd frame). Little-endian.
 */
#ifndef BOSCH_TEST_JOURNAL_UTIL_H
#define BOSCH_TEST_JOURNAL_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>
#include <zstd.h>

#include "common.h"

#define JHDR 28u
#define JKIND_HEADER 1u
#define JKIND_RECORD 2u

static inline void j_sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static inline double j_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------------------ */
/* Little-endian fields                                                      */
/* ------------------------------------------------------------------------ */
static inline uint32_t j_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t j_get64(const uint8_t *p)
{
    return (uint64_t)j_get32(p) | (uint64_t)j_get32(p + 4) << 32;
}

static inline void j_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void j_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline double j_getd(const uint8_t *p)
{
    uint64_t u = j_get64(p);
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Header checksum: XXH32 (seed 0) of bytes 0..15. */
static inline uint32_t j_hsum(const uint8_t *hdr16)
{
    return XXH32(hdr16, 16, 0);
}

/* Payload checksum: XXH64 (seed 0). */
static inline uint64_t j_psum(const uint8_t *payload, size_t clen)
{
    return XXH64(clen ? payload : (const uint8_t *)"", clen, 0);
}

/* ------------------------------------------------------------------------ */
/* Files and temp dirs                                                       */
/* ------------------------------------------------------------------------ */
/* Whole file into a malloc'ed buffer (NULL when it cannot be read). A
 * zero-length file gives a non-NULL buffer and *n = 0. */
static inline uint8_t *j_slurp(const char *path, size_t *n)
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

static inline int j_spit(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = n == 0 || fwrite(b, 1, n, f) == n;
    ok &= fclose(f) == 0;
    return ok ? 0 : -1;
}

static inline long j_fsize(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    return (long)st.st_size;
}

static inline int j_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* mkdtemp under /tmp; `dir` has room for 64 bytes. */
static inline void j_mkdtemp(char *dir)
{
    strcpy(dir, "/tmp/bosch-test-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
}

static inline void j_path(char *out, size_t n, const char *dir, const char *name)
{
    snprintf(out, n, "%s/%s", dir, name);
}

/* Removes the files in `dir` (one level) and the directory. */
static inline void j_rmtree(const char *dir)
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
typedef struct {
    size_t off; /* start of the frame */
    size_t end; /* one past its last byte */
    uint32_t kind, clen, rawlen;
} jframe;

typedef struct {
    jframe *f;
    size_t n;         /* complete, valid frames from the start of the file */
    size_t valid_end; /* end of the last valid frame */
    int tail;         /* 1 when bytes follow valid_end */
} jframes;

/* Strict parse: every frame must have the magic, a known kind, a good header
 * XXH32, a length that fits, a good payload XXH64 and a zstd payload that
 * decompresses to rawlen bytes.
 * Stops at the first frame that is not all of these. */
static inline jframes j_parse(const uint8_t *b, size_t n)
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

static inline void j_frames_free(jframes *fr)
{
    free(fr->f);
    fr->f = NULL;
    fr->n = 0;
}

/* Parses the file at `path`; a missing file gives no frames. */
static inline jframes j_parse_file(const char *path, size_t *size)
{
    size_t n = 0;
    uint8_t *b = j_slurp(path, &n);
    jframes r = j_parse(b ? b : (const uint8_t *)"", b ? n : 0);
    free(b);
    if (size)
        *size = n;
    return r;
}

/* Number of evaluation records that are complete and valid in `path`. */
static inline size_t j_count_records(const char *path)
{
    jframes fr = j_parse_file(path, NULL);
    size_t c = 0;
    for (size_t i = 0; i < fr.n; i++)
        c += fr.f[i].kind == JKIND_RECORD;
    j_frames_free(&fr);
    return c;
}

/* Decompressed payload of a frame (malloc'ed, NUL-terminated; NULL on error). */
static inline char *j_payload(const uint8_t *b, const jframe *f)
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

#define J_MAXU 256

typedef struct {
    int stage;
    double score, wall;
    uint8_t mask[J_MAXU];
} jrecord;

/* Decodes an evaluation record for `units` units; 0 on success. */
static inline int j_record(const uint8_t *b, const jframe *f, size_t units, jrecord *r)
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

/* A frame around an arbitrary payload, with correct checksums; `rawlen` is
 * written as given. Returns the frame size; *out is malloc'ed. */
static inline size_t j_frame_raw(uint32_t kind, const void *payload, size_t clen, uint32_t rawlen,
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

/* A well-formed frame: `raw` compressed into one zstd frame with its content
 * checksum, correct lengths and checksums. */
static inline size_t j_frame(uint32_t kind, const void *raw, size_t rawlen, uint8_t **out)
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

/* An evaluation record payload for `units` units (raw, not compressed). */
static inline size_t j_record_raw(int stage, double score, double wall, const uint8_t *mask,
                                  size_t units, uint8_t *raw /* >= 17 + 8*words */)
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

/* Buffer concatenation: dst (malloc'ed) = a[0..na) + b[0..nb) + c[0..nc). */
static inline uint8_t *j_cat3(const uint8_t *a, size_t na, const uint8_t *b, size_t nb,
                              const uint8_t *c, size_t nc)
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

/* ------------------------------------------------------------------------ */
/* Results                                                                   */
/* ------------------------------------------------------------------------ */
static inline void history_entry(const bosch_result *r, size_t i, uint8_t *mask, double *score,
                          int *stage)
{
    ck_assert_int_eq(bosch_result_history_entry(r, i, mask, score, stage), BOSCH_OK);
}

/* Same status, best mask, scores, counts and history (in order). */
static inline void assert_same(const bosch_result *a, const bosch_result *b, const char *what)
{
    size_t U = bosch_result_units(a);
    ck_assert_uint_eq(U, bosch_result_units(b));
    uint8_t ma[J_MAXU], mb[J_MAXU];
    ck_assert_msg(bosch_result_status(a) == bosch_result_status(b), "%s: status %s vs %s", what,
                  bosch_err_name(bosch_result_status(a)), bosch_err_name(bosch_result_status(b)));
    ck_assert_int_eq(bosch_result_feasible(a), bosch_result_feasible(b));
    ck_assert_int_eq(bosch_result_mask(a, ma, U), BOSCH_OK);
    ck_assert_int_eq(bosch_result_mask(b, mb, U), BOSCH_OK);
    ck_assert_msg(memcmp(ma, mb, U) == 0, "%s: best masks differ", what);
    ck_assert_msg(bosch_result_score(a) == bosch_result_score(b) ||
                      (isnan(bosch_result_score(a)) && isnan(bosch_result_score(b))),
                  "%s: score %.17g vs %.17g", what, bosch_result_score(a), bosch_result_score(b));
    for (int st = -1; st < BOSCH_STAGE_COUNT; st++)
        ck_assert_msg(bosch_result_evaluations(a, st) == bosch_result_evaluations(b, st),
                      "%s: evaluations(stage %d) %lu vs %lu", what, st,
                      (unsigned long)bosch_result_evaluations(a, st),
                      (unsigned long)bosch_result_evaluations(b, st));
    size_t n = bosch_result_history_size(a);
    ck_assert_msg(n == bosch_result_history_size(b), "%s: history %zu vs %zu", what, n,
                  bosch_result_history_size(b));
    for (size_t i = 0; i < n; i++) {
        double sa, sb;
        int ta, tb;
        history_entry(a, i, ma, &sa, &ta);
        history_entry(b, i, mb, &sb, &tb);
        ck_assert_msg(memcmp(ma, mb, U) == 0, "%s: history %zu: masks differ", what, i);
        ck_assert_msg(sa == sb, "%s: history %zu: score %.17g vs %.17g", what, i, sa, sb);
        ck_assert_msg(ta == tb, "%s: history %zu: stage %d vs %d", what, i, ta, tb);
    }
}

#endif /* BOSCH_TEST_JOURNAL_UTIL_H */
