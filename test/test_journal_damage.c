/*
 * Journal tests: damage. Bit flips anywhere in a frame, files that are not
 * journals, frames with good checksums but bad content: BOSCH_E_CORRUPT
 * (with the damaged frame's offset), nothing evaluated, the file untouched.
 */
#include <stdio.h>

#include "support/support.h"
#include "support/journal_files.h"
#include "support/journal_runs.h"

/* ------------------------------------------------------------------------ */
/* Bit flips                                                                 */
/* ------------------------------------------------------------------------ */
/* Bit flips in the header frame, the first record, a middle one and the last
 * one: BOSCH_E_CORRUPT (a crash cuts writes short, it never flips bits), the
 * file left alone. */
START_TEST(bitflip_inner_frames)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "flip.bin");
    cfg c = base_cfg();
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    uint8_t *buf = malloc(size);
    size_t js[] = {0, 1, fr.n / 2, fr.n - 1};
    size_t failures = 0;
    char first_fail[1024] = "";
    for (size_t k = 0; k < 4; k++) {
        const jframe *f = &fr.f[js[k]];
        for (size_t off = f->off; off < f->end; off++)
            for (int bit = 0; bit < 8; bit++) {
                /* Every bit of the 28-byte frame header (magic, kind, lengths,
                 * checksums); one bit (rotating) of each payload byte. */
                if (off >= f->off + JHDR && bit != (int)(off % 8))
                    continue;
                memcpy(buf, full, size);
                buf[off] ^= (uint8_t)(1u << bit);
                ck_assert_int_eq(j_spit(path, buf, size), 0);
                char msg[512];
                int rc = first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL);
                size_t n2 = 0;
                uint8_t *after = j_slurp(path, &n2);
                int unchanged = after && n2 == size && memcmp(after, buf, size) == 0;
                free(after);
                if (rc != BOSCH_E_CORRUPT || !unchanged) {
                    if (!failures++)
                        snprintf(first_fail, sizeof first_fail,
                                 "frame %zu (at %zu), byte %zu (+%zu), bit %d: %s, file %s; %.300s",
                                 js[k], f->off, off, off - f->off, bit, bosch_err_name(rc),
                                 unchanged ? "unchanged" : "MODIFIED", msg);
                }
            }
    }
    ck_assert_msg(failures == 0, "%zu bit flips not reported as BOSCH_E_CORRUPT; first: %s",
                  failures, first_fail);
    free(buf);
    j_frames_free(&fr);
    free(full);
    j_rmtree(dir);
}
END_TEST

/* The message gives the damaged frame's offset. */
START_TEST(corrupt_message_offset)
{
    char dir[64], src[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    cfg c = base_cfg();
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    const jframe *f = &fr.f[fr.n / 2];
    full[f->off + JHDR + 3] ^= 0x10;
    ck_assert_int_eq(j_spit(src, full, size), 0);
    char msg[512], dec[32], hex[32];
    ck_assert_int_eq(first_ask(&c, src, BOSCH_JOURNAL_AUTO, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    snprintf(dec, sizeof dec, "%zu", f->off);
    snprintf(hex, sizeof hex, "%zx", f->off);
    ck_assert_msg(contains(msg, dec) || contains(msg, hex), "message lacks offset %zu: \"%s\"",
                  f->off, msg);
    /* Also through bosch_optimize(). */
    jrec r;
    jrec_init(&r, 48, NULL);
    int st;
    bosch_result *res = run_cb(&c, src, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_int_eq(st, BOSCH_E_CORRUPT);
    ck_assert_int_eq(bosch_result_status(res), BOSCH_E_CORRUPT);
    ck_assert_uint_eq(r.calls, 0);
    bosch_result_free(res);
    jrec_free(&r);
    j_frames_free(&fr);
    free(full);
    j_rmtree(dir);
}
END_TEST

/* Not a journal: BOSCH_E_CORRUPT "not a libbosch journal", file untouched. */
START_TEST(not_a_journal)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "x.bin");
    cfg c = base_cfg();
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    uint8_t *buf = malloc(size);
    char msg[512];
    for (size_t off = 0; off < 4; off++)
        for (int bit = 0; bit < 8; bit++) {
            memcpy(buf, full, size);
            buf[off] ^= (uint8_t)(1u << bit);
            ck_assert_int_eq(j_spit(path, buf, size), 0);
            for (int mode = BOSCH_JOURNAL_RESUME; mode <= BOSCH_JOURNAL_AUTO; mode++) {
                int rc = first_ask(&c, path, mode, msg, sizeof msg, NULL);
                ck_assert_msg(rc == BOSCH_E_CORRUPT, "magic byte %zu bit %d: %s", off, bit,
                              bosch_err_name(rc));
                ck_assert_msg(contains(msg, "not a libbosch journal"), "message: \"%s\"", msg);
                assert_file_eq(path, buf, size, "bad magic");
            }
        }
    /* A file shorter than a header frame that does not start with the magic
     * is not ours: reported, not overwritten as a new journal. */
    ck_assert_int_eq(j_spit(path, (const uint8_t *)"hello world", 11), 0);
    for (int mode = BOSCH_JOURNAL_RESUME; mode <= BOSCH_JOURNAL_AUTO; mode++) {
        int rc = first_ask(&c, path, mode, msg, sizeof msg, NULL);
        ck_assert_msg(rc == BOSCH_E_CORRUPT, "11-byte text file, mode %d: %s", mode,
                      bosch_err_name(rc));
        assert_file_eq(path, (const uint8_t *)"hello world", 11, "short text file");
    }
    /* A text file, and random bytes. */
    const char *text = "seed=3\nbudget=120\nthis is a config file, not a journal\n";
    ck_assert_int_eq(j_spit(path, (const uint8_t *)text, strlen(text)), 0);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_AUTO, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    assert_file_eq(path, (const uint8_t *)text, strlen(text), "text file");
    trng g = {12345};
    uint8_t *rnd = malloc(65536);
    for (size_t i = 0; i < 65536; i++)
        rnd[i] = (uint8_t)trng_next(&g);
    rnd[0] = 'X';
    ck_assert_int_eq(j_spit(path, rnd, 65536), 0);
    jrec r;
    jrec_init(&r, 48, NULL);
    int st;
    bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_AUTO, &r, 0, &st, NULL);
    ck_assert_int_eq(st, BOSCH_E_CORRUPT);
    ck_assert_uint_eq(r.calls, 0);
    assert_file_eq(path, rnd, 65536, "random file");
    bosch_result_free(res);
    jrec_free(&r);
    /* The magic followed by random frames. */
    memcpy(rnd, "BSHJ", 4);
    ck_assert_int_eq(j_spit(path, rnd, 65536), 0);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_AUTO, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    free(rnd);
    free(buf);
    free(full);
    j_rmtree(dir);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Crafted frames                                                           */
/* ------------------------------------------------------------------------ */

/* Frames with good checksums but bad content (kinds, sizes, zstd data):
 * BOSCH_E_CORRUPT, in the middle and at the end. */
START_TEST(crafted_bad_frames)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "c.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    size_t j = fr.n / 2;
    const jframe *f = &fr.f[j];
    jrecord rec;
    ck_assert_int_eq(j_record(full, f, 48, &rec), 0);
    uint8_t raw[64];
    size_t rawlen = j_record_raw(rec.stage, rec.score, rec.wall, rec.mask, 48, raw);
    ck_assert_uint_eq(rawlen, f->rawlen);

    /* Sanity: a re-encoded copy of the record is accepted in place. */
    uint8_t *good;
    size_t gn = j_frame(JKIND_RECORD, raw, rawlen, &good);
    struct badf {
        const char *what;
        uint8_t *frame;
        size_t n;
    } bad[7];
    size_t nb = 0;
    uint8_t *fb;
    size_t fn;
    /* kind 3, kind 1 (a second header), kind 0 */
    for (uint32_t kind = 0; kind < 4; kind++) {
        if (kind == JKIND_RECORD)
            continue;
        fn = j_frame(kind, raw, rawlen, &fb);
        bad[nb++] = (struct badf){kind == 1 ? "second header" : "unknown kind", fb, fn};
    }
    /* rawlen that is not a record's size (payload consistent with it) */
    fn = j_frame(JKIND_RECORD, raw, rawlen - 8, &fb);
    bad[nb++] = (struct badf){"short record", fb, fn};
    uint8_t big[128] = {0};
    memcpy(big, raw, rawlen);
    fn = j_frame(JKIND_RECORD, big, rawlen + 40, &fb);
    bad[nb++] = (struct badf){"long record", fb, fn};
    /* payload that is not zstd, rawlen right */
    static const uint8_t notzstd[] = "definitely not a zstd frame at all";
    fn = j_frame_raw(JKIND_RECORD, notzstd, sizeof notzstd, (uint32_t)rawlen, &fb);
    bad[nb++] = (struct badf){"not zstd", fb, fn};
    /* zstd frame whose content is longer than rawlen says */
    uint8_t *tmp;
    size_t tn = j_frame(JKIND_RECORD, big, rawlen + 40, &tmp);
    fn = j_frame_raw(JKIND_RECORD, tmp + JHDR, tn - JHDR, (uint32_t)rawlen, &fb);
    free(tmp);
    bad[nb++] = (struct badf){"rawlen lies", fb, fn};

    uint8_t *out = j_cat3(full, f->off, good, gn, full + f->end, size - f->end);
    ck_assert_int_eq(j_spit(path, out, f->off + gn + size - f->end), 0);
    free(out);
    jrec r;
    jrec_init(&r, 48, NULL);
    int st;
    bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_msg(st == ref_st && r.calls == 0, "re-encoded record: %s, %zu calls",
                  bosch_err_name(st), r.calls);
    bosch_result_free(res);
    jrec_free(&r);

    for (size_t i = 0; i < nb; i++) {
        /* in the middle */
        size_t on = f->off + bad[i].n + size - f->end;
        out = j_cat3(full, f->off, bad[i].frame, bad[i].n, full + f->end, size - f->end);
        ck_assert_int_eq(j_spit(path, out, on), 0);
        char msg[512];
        int rc = first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL);
        ck_assert_msg(rc == BOSCH_E_CORRUPT, "%s in the middle: %s (%s)", bad[i].what,
                      bosch_err_name(rc), msg);
        assert_file_eq(path, out, on, bad[i].what);
        free(out);
        /* as the last frame: still damage, not a cut-short write */
        const jframe *lf = &fr.f[fr.n - 1];
        on = lf->off + bad[i].n;
        out = j_cat3(full, lf->off, bad[i].frame, bad[i].n, NULL, 0);
        ck_assert_int_eq(j_spit(path, out, on), 0);
        rc = first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL);
        ck_assert_msg(rc == BOSCH_E_CORRUPT, "%s as the last frame: %s (%s)", bad[i].what,
                      bosch_err_name(rc), msg);
        assert_file_eq(path, out, on, bad[i].what);
        free(out);
        free(bad[i].frame);
    }
    /* The header frame with kind 2. */
    char *json = j_payload(full, &fr.f[0]);
    fn = j_frame(JKIND_RECORD, json, strlen(json), &fb);
    out = j_cat3(fb, fn, full + fr.f[0].end, size - fr.f[0].end, NULL, 0);
    ck_assert_int_eq(j_spit(path, out, fn + size - fr.f[0].end), 0);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, NULL, 0, NULL), BOSCH_E_CORRUPT);
    free(out);
    free(fb);
    free(json);
    free(good);
    j_frames_free(&fr);
    free(full);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

static Suite *journal_damage_suite(void)
{
    Suite *s = suite_create("journal_damage");
    TCase *tc = tcase_new(s, "damage");
    tcase_add_test(tc, bitflip_inner_frames);
    tcase_add_test(tc, corrupt_message_offset);
    tcase_add_test(tc, not_a_journal);
    tcase_add_test(tc, crafted_bad_frames);
    return s;
}

int main(void)
{
    return run_journal_suite(journal_damage_suite());
}
