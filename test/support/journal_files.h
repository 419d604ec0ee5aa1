/*
 * Test-side reader and writer of the libbosch journal format (docs/journal.md),
 * independent of the library: frames are parsed, checksummed (XXH32 and XXH64, seed 0)
 * and decompressed (zstd) here, so the tests can check what the library wrote
 * and craft damaged or foreign journals. Plus temp-dir and file helpers.
 *
 * Frame: magic "BSHJ" | kind u32 | clen u32 | rawlen u32 | XXH32 u32 of bytes
 * 0..15 | XXH64 u64 of the payload | payload (one zstd frame). Little-endian.
 */
#ifndef BOSCH_TEST_JOURNAL_FILES_H
#define BOSCH_TEST_JOURNAL_FILES_H

#include <stddef.h>
#include <stdint.h>

#define JHDR 28u
#define JKIND_HEADER 1u
#define JKIND_RECORD 2u

/* ------------------------------------------------------------------------ */
/* Little-endian fields, checksums                                           */
/* ------------------------------------------------------------------------ */
uint32_t j_get32(const uint8_t *p);
uint64_t j_get64(const uint8_t *p);
void j_put32(uint8_t *p, uint32_t v);
void j_put64(uint8_t *p, uint64_t v);
double j_getd(const uint8_t *p);

/* Header checksum: XXH32 (seed 0) of bytes 0..15. */
uint32_t j_hsum(const uint8_t *hdr16);

/* Payload checksum: XXH64 (seed 0). */
uint64_t j_psum(const uint8_t *payload, size_t clen);

/* ------------------------------------------------------------------------ */
/* Files and temp dirs                                                       */
/* ------------------------------------------------------------------------ */
/* Whole file into a malloc'ed buffer (NULL when it cannot be read). A
 * zero-length file gives a non-NULL buffer and *n = 0. */
uint8_t *j_slurp(const char *path, size_t *n);

/* Writes b[0..n) to path (replacing it); 0 on success. */
int j_spit(const char *path, const uint8_t *b, size_t n);

/* Size of the file (-1 when missing). */
long j_fsize(const char *path);

int j_exists(const char *path);

/* mkdtemp under /tmp; `dir` has room for 64 bytes. */
void j_mkdtemp(char *dir);

/* out = dir/name */
void j_path(char *out, size_t n, const char *dir, const char *name);

/* Removes the files in `dir` (one level) and the directory. */
void j_rmtree(const char *dir);

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
jframes j_parse(const uint8_t *b, size_t n);

void j_frames_free(jframes *fr);

/* Parses the file at `path`; a missing file gives no frames. */
jframes j_parse_file(const char *path, size_t *size);

/* Number of evaluation records that are complete and valid in `path`. */
size_t j_count_records(const char *path);

/* Decompressed payload of a frame (malloc'ed, NUL-terminated; NULL on error). */
char *j_payload(const uint8_t *b, const jframe *f);

#define J_MAXU 256

typedef struct {
    int stage;
    double score, wall;
    uint8_t mask[J_MAXU];
} jrecord;

/* Decodes an evaluation record for `units` units; 0 on success. */
int j_record(const uint8_t *b, const jframe *f, size_t units, jrecord *r);

/* A frame around an arbitrary payload, with correct checksums; `rawlen` is
 * written as given. Returns the frame size; *out is malloc'ed. */
size_t j_frame_raw(uint32_t kind, const void *payload, size_t clen, uint32_t rawlen,
                   uint8_t **out);

/* A well-formed frame: `raw` compressed into one zstd frame with its content
 * checksum, correct lengths and checksums. */
size_t j_frame(uint32_t kind, const void *raw, size_t rawlen, uint8_t **out);

/* An evaluation record payload for `units` units (raw, not compressed). */
size_t j_record_raw(int stage, double score, double wall, const uint8_t *mask, size_t units,
                    uint8_t *raw /* >= 17 + 8*words */);

/* Buffer concatenation: dst (malloc'ed) = a[0..na) + b[0..nb) + c[0..nc). */
uint8_t *j_cat3(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, const uint8_t *c,
                size_t nc);

#endif /* BOSCH_TEST_JOURNAL_FILES_H */
