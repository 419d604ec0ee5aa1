/* Journal frames: 28-byte header (magic, kind, clen, rawlen, XXH32 of the
 * first 16 bytes, XXH64 of the payload) then a zstd frame. */
#include "journal/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "bosch/bosch.h"
#include "util/json_dup.h"
#include "util/read_file.h"

#define FRAME_HEADER 28
#define KIND_HEADER 1u
#define KIND_RECORD 2u
#define MAX_PAYLOAD (64u << 20)
static const unsigned char MAGIC[4] = {'B', 'S', 'H', 'J'};

struct journal {
    int fd;
    int sync;
    int error; /* errno of the last failed write or sync, 0 if none */
    ZSTD_CCtx *cctx;
    unsigned char *buf; /* frame under construction */
    size_t cap;
};

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return BOSCH_E_IO;
        }
        p += w;
        n -= (size_t)w;
    }
    return BOSCH_OK;
}

static int write_frame(journal *j, uint32_t kind, const void *raw, size_t rawlen)
{
    size_t bound = ZSTD_compressBound(rawlen);
    if (FRAME_HEADER + bound > j->cap) {
        unsigned char *b = realloc(j->buf, FRAME_HEADER + bound);
        if (!b)
            return BOSCH_E_NOMEM;
        j->buf = b;
        j->cap = FRAME_HEADER + bound;
    }
    size_t clen = ZSTD_compress2(j->cctx, j->buf + FRAME_HEADER, bound, raw, rawlen);
    if (ZSTD_isError(clen))
        return BOSCH_E_NOMEM;
    memcpy(j->buf, MAGIC, 4);
    put32(j->buf + 4, kind);
    put32(j->buf + 8, (uint32_t)clen);
    put32(j->buf + 12, (uint32_t)rawlen);
    put32(j->buf + 16, XXH32(j->buf, 16, 0));
    put64(j->buf + 20, XXH64(j->buf + FRAME_HEADER, clen, 0));
    /* One write() per frame: a killed process leaves whole frames plus at
     * most a prefix of the last one. */
    int rc = write_all(j->fd, j->buf, FRAME_HEADER + clen);
    if (rc == BOSCH_OK && j->sync && fdatasync(j->fd) != 0)
        rc = BOSCH_E_IO;
    if (rc == BOSCH_E_IO)
        j->error = errno ? errno : EIO;
    return rc;
}

/* A record: stage (1 byte), score, wall (8 bytes each), the packed mask;
 * a request other than (fidelity 1, draw 0) adds its fidelity (8 bytes)
 * and draw (4 bytes) after the mask, so plain records keep the first
 * format's size. */
#define RECORD_FIXED 17
#define RECORD_REQUEST 12

int journal_append(journal *j, int stage, double score, double wall, double fidelity,
                   uint32_t draw, const uint64_t *packed, size_t words)
{
    int request = !(fidelity == 1.0 && draw == 0);
    size_t rawlen = RECORD_FIXED + 8 * words + (request ? RECORD_REQUEST : 0);
    unsigned char stackbuf[RECORD_FIXED + 8 * 64 + RECORD_REQUEST];
    unsigned char *raw = rawlen <= sizeof stackbuf ? stackbuf : malloc(rawlen);
    if (!raw)
        return BOSCH_E_NOMEM;
    uint64_t bits;
    raw[0] = (unsigned char)stage;
    memcpy(&bits, &score, 8);
    put64(raw + 1, bits);
    memcpy(&bits, &wall, 8);
    put64(raw + 9, bits);
    for (size_t w = 0; w < words; w++)
        put64(raw + RECORD_FIXED + 8 * w, packed[w]);
    if (request) {
        unsigned char *q = raw + RECORD_FIXED + 8 * words;
        memcpy(&bits, &fidelity, 8);
        put64(q, bits);
        put32(q + 8, draw);
    }
    int rc = write_frame(j, KIND_RECORD, raw, rawlen);
    if (raw != stackbuf)
        free(raw);
    return rc;
}

const char *journal_strerror(const journal *j)
{
    return j && j->error ? strerror(j->error) : "no error";
}

void journal_close(journal *j)
{
    if (!j)
        return;
    if (j->fd >= 0)
        close(j->fd);
    ZSTD_freeCCtx(j->cctx);
    free(j->buf);
    free(j);
}

/* ---- reading ------------------------------------------------------------ */

/* Compares the file's header with this run's; lists every differing field. */
static int compare_headers(const char *file_json, const char *run_json, char *err, size_t errlen)
{
    /* A field given twice would pass the comparison on its last value alone. */
    struct util_json_dup dup;
    int twice = util_json_dup_find(file_json, strlen(file_json), &dup);
    if (twice < 0)
        return BOSCH_E_NOMEM;
    if (twice) {
        char what[160];
        util_json_dup_describe(&dup, what, sizeof what);
        snprintf(err, errlen, "journal header: %s (a damaged or edited journal)", what);
        return BOSCH_E_CORRUPT;
    }
    json_object *a = json_tokener_parse(file_json), *b = json_tokener_parse(run_json);
    int rc = BOSCH_OK;
    if (!a || !json_object_is_type(a, json_type_object) || !b) {
        snprintf(err, errlen, "journal header is not a JSON object");
        rc = BOSCH_E_CORRUPT;
        goto out;
    }
    json_object *fa, *fb, *la, *lb;
    if (!json_object_object_get_ex(a, "format", &fa) || !json_object_object_get_ex(a, "library", &la)) {
        snprintf(err, errlen, "journal header lacks its format or library version");
        rc = BOSCH_E_CORRUPT;
        goto out;
    }
    json_object_object_get_ex(b, "format", &fb);
    json_object_object_get_ex(b, "library", &lb);
    if (!json_object_equal(fa, fb) || !json_object_equal(la, lb)) {
        snprintf(err, errlen,
                 "journal written by libbosch %s (journal format %s); this is libbosch %s "
                 "(format %s): resume with the version that wrote it",
                 json_object_to_json_string(la), json_object_to_json_string(fa),
                 json_object_to_json_string(lb), json_object_to_json_string(fb));
        rc = BOSCH_E_MISMATCH;
        goto out;
    }
    size_t used = (size_t)snprintf(err, errlen, "journal settings differ from this run:");
    int differ = 0;
    json_object_object_foreach(b, key, vb)
    {
        json_object *va = NULL;
        if (json_object_object_get_ex(a, key, &va) && json_object_equal(va, vb))
            continue;
        differ = 1;
        if (used < errlen)
            used += (size_t)snprintf(err + used, errlen - used, " %s (journal %s, now %s);", key,
                                     va ? json_object_to_json_string(va) : "missing",
                                     json_object_to_json_string(vb));
    }
    json_object_object_foreach(a, akey, va2)
    {
        (void)va2;
        if (json_object_object_get_ex(b, akey, NULL))
            continue;
        differ = 1;
        if (used < errlen)
            used += (size_t)snprintf(err + used, errlen - used, " %s (unknown field);", akey);
    }
    if (used > 0 && used < errlen && err[used - 1] == ';')
        err[used - 1] = '\0';
    rc = differ ? BOSCH_E_MISMATCH : BOSCH_OK;
out:
    json_object_put(a);
    json_object_put(b);
    return rc;
}

/* Walks the frames of data[0..size). On success *valid is the length of the
 * complete frames (a cut-short last frame excluded). */
static int load_frames(const unsigned char *data, size_t size, const char *run_json,
                       eval_store *replay, size_t *valid, int *have_header, char *err,
                       size_t errlen)
{
    size_t off = 0;
    size_t words = replay->words;
    unsigned char *raw = NULL;
    int rc = BOSCH_OK;
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (!dctx)
        return BOSCH_E_NOMEM;
    *have_header = 0;
    if (size >= 4 && memcmp(data, MAGIC, 4) != 0) {
        snprintf(err, errlen, "not a libbosch journal (bad magic at offset 0)");
        ZSTD_freeDCtx(dctx);
        return BOSCH_E_CORRUPT;
    }
    while (off < size) {
        if (size - off < FRAME_HEADER)
            break; /* cut short */
        const unsigned char *h = data + off;
        if (XXH32(h, 16, 0) != get32(h + 16) || memcmp(h, MAGIC, 4) != 0) {
            snprintf(err, errlen, "journal frame at offset %zu: damaged frame header", off);
            rc = BOSCH_E_CORRUPT;
            break;
        }
        uint32_t kind = get32(h + 4), clen = get32(h + 8), rawlen = get32(h + 12);
        if (clen > MAX_PAYLOAD || rawlen > MAX_PAYLOAD ||
            (off == 0) != (kind == KIND_HEADER) || (kind != KIND_HEADER && kind != KIND_RECORD)) {
            snprintf(err, errlen, "journal frame at offset %zu: invalid kind %u or sizes", off,
                     kind);
            rc = BOSCH_E_CORRUPT;
            break;
        }
        if (size - off - FRAME_HEADER < clen)
            break; /* payload cut short */
        const unsigned char *payload = h + FRAME_HEADER;
        if (XXH64(payload, clen, 0) != get64(h + 20)) {
            snprintf(err, errlen, "journal frame at offset %zu: payload checksum mismatch", off);
            rc = BOSCH_E_CORRUPT;
            break;
        }
        unsigned char *r = realloc(raw, rawlen + 1);
        if (!r) {
            rc = BOSCH_E_NOMEM;
            break;
        }
        raw = r;
        size_t got = ZSTD_decompressDCtx(dctx, raw, rawlen, payload, clen);
        if (ZSTD_isError(got) || got != rawlen) {
            snprintf(err, errlen, "journal frame at offset %zu: bad zstd data", off);
            rc = BOSCH_E_CORRUPT;
            break;
        }
        if (kind == KIND_HEADER) {
            raw[rawlen] = '\0';
            rc = compare_headers((const char *)raw, run_json, err, errlen);
            if (rc != BOSCH_OK)
                break;
            *have_header = 1;
        } else {
            size_t plain_len = RECORD_FIXED + 8 * words;
            if ((rawlen != plain_len && rawlen != plain_len + RECORD_REQUEST) || raw[0] > 3) {
                snprintf(err, errlen, "journal frame at offset %zu: record of the wrong size",
                         off);
                rc = BOSCH_E_CORRUPT;
                break;
            }
            uint64_t packed[64], *pk = words <= 64 ? packed : malloc(words * 8);
            if (!pk) {
                rc = BOSCH_E_NOMEM;
                break;
            }
            double score, wall;
            uint64_t bits = get64(raw + 1);
            memcpy(&score, &bits, 8);
            bits = get64(raw + 9);
            memcpy(&wall, &bits, 8);
            for (size_t w = 0; w < words; w++)
                pk[w] = get64(raw + RECORD_FIXED + 8 * w);
            double fidelity = 1.0;
            uint32_t draw = 0;
            if (rawlen > plain_len) {
                bits = get64(raw + plain_len);
                memcpy(&fidelity, &bits, 8);
                draw = get32(raw + plain_len + 8);
            }
            /* Padding bits beyond the last unit must be clear. */
            if (replay->units % 64 && (pk[words - 1] >> (replay->units % 64)) != 0) {
                snprintf(err, errlen, "journal frame at offset %zu: mask has bits past the last unit",
                         off);
                rc = BOSCH_E_CORRUPT;
            } else if (!(fidelity > 0.0 && fidelity <= 1.0)) {
                snprintf(err, errlen, "journal frame at offset %zu: fidelity %g is outside (0, 1]",
                         off, fidelity);
                rc = BOSCH_E_CORRUPT;
            } else if (store_find_request(replay, pk, fidelity, draw) < 0 &&
                       store_add_request(replay, pk, score, raw[0], 0, wall, fidelity, draw) < 0) {
                rc = BOSCH_E_NOMEM;
            }
            if (pk != packed)
                free(pk);
            if (rc != BOSCH_OK)
                break;
        }
        off += FRAME_HEADER + clen;
    }
    free(raw);
    ZSTD_freeDCtx(dctx);
    *valid = off;
    return rc;
}

static int new_writer(journal **out, int fd, int sync)
{
    journal *j = calloc(1, sizeof *j);
    if (!j) {
        close(fd);
        return BOSCH_E_NOMEM;
    }
    j->fd = fd;
    j->sync = sync;
    j->cctx = ZSTD_createCCtx();
    if (!j->cctx || ZSTD_isError(ZSTD_CCtx_setParameter(j->cctx, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(j->cctx, ZSTD_c_compressionLevel, 3))) {
        journal_close(j);
        return BOSCH_E_NOMEM;
    }
    *out = j;
    return BOSCH_OK;
}

int journal_open(journal **out, const char *path, int mode, int sync, const char *header_json,
                 eval_store *replay, int *dropped_tail, char *err, size_t errlen)
{
    *out = NULL;
    *dropped_tail = 0;
    err[0] = '\0';
    struct stat st;
    int exists = stat(path, &st) == 0;
    if (mode == BOSCH_JOURNAL_RESUME && !exists) {
        if (errno == ENOENT)
            snprintf(err, errlen, "cannot resume: journal '%s' does not exist", path);
        else
            snprintf(err, errlen, "cannot resume: journal '%s': %s", path, util_file_error(errno));
        return BOSCH_E_IO;
    }
    int resume = exists && mode != BOSCH_JOURNAL_CREATE;
    /* Opened (never truncated yet) and locked before anything is read: a
     * second run on the same file is refused at once instead of computing
     * everything twice into one file. */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open journal '%s': %s", path, util_file_error(errno));
        return BOSCH_E_IO;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        /* Filesystems without flock (some network mounts): run unlocked. */
        if (e == EWOULDBLOCK || (e != ENOLCK && e != EOPNOTSUPP && e != ENOSYS && e != EINVAL)) {
            if (e == EWOULDBLOCK)
                snprintf(err, errlen,
                         "journal '%s' is in use by another run (locked): wait for it to end "
                         "or use another journal", path);
            else
                snprintf(err, errlen, "cannot lock journal '%s': %s", path, strerror(e));
            close(fd);
            return e == EWOULDBLOCK ? BOSCH_E_BUSY : BOSCH_E_IO;
        }
    }
    size_t valid = 0;
    int have_header = 0;
    if (resume) {
        char *data = NULL;
        size_t size = 0;
        int e = util_read_file(path, 0, &data, &size);
        if (e) {
            snprintf(err, errlen, "cannot read journal '%s': %s", path, strerror(e));
            close(fd);
            return e == ENOMEM ? BOSCH_E_NOMEM : BOSCH_E_IO;
        }
        int rc = load_frames((const unsigned char *)data, size, header_json, replay, &valid,
                             &have_header, err, errlen);
        free(data);
        if (rc != BOSCH_OK) {
            close(fd);
            return rc;
        }
        *dropped_tail = valid < size;
    }
    /* Drop a cut-short tail (or everything, for a new journal), then append
     * after the last complete frame. */
    off_t keep = resume && have_header ? (off_t)valid : 0;
    if (ftruncate(fd, keep) != 0 || lseek(fd, 0, SEEK_END) < 0) {
        snprintf(err, errlen, "cannot truncate journal '%s': %s", path, strerror(errno));
        close(fd);
        return BOSCH_E_IO;
    }
    journal *j;
    int rc = new_writer(&j, fd, sync);
    if (rc != BOSCH_OK)
        return rc;
    if (!(resume && have_header)) {
        /* New journal (or one whose header never made it to disk). */
        rc = write_frame(j, KIND_HEADER, header_json, strlen(header_json));
        if (rc != BOSCH_OK) {
            snprintf(err, errlen, "cannot write journal '%s': %s", path, journal_strerror(j));
            journal_close(j);
            return rc;
        }
    }
    *out = j;
    return BOSCH_OK;
}
