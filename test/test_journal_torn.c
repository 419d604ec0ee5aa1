/*
 * Journal tests: torn tails. A journal cut at any byte of its last frame (or
 * inside an earlier one), a few bytes of junk after it, or a header frame cut
 * short: the valid prefix is replayed, the rest is evaluated again, the file
 * is truncated to the valid prefix before the first evaluation.
 */
#include "support/support.h"
#include "support/journal_files.h"
#include "support/journal_runs.h"

/* ------------------------------------------------------------------------ */
/* Torn tails                                                                */
/* ------------------------------------------------------------------------ */
/* Resumes `path` (holding a copy of `full` cut at `cut`, inside frame j of
 * `fr`) and checks: the records before j replayed, the evaluator called for
 * record j first and then for the following ones in order, the file
 * truncated to frame j's start before the first evaluation, and the final
 * result equal to `ref`. */
static void check_torn(const cfg *c, const char *path, const uint8_t *full, const jframes *fr,
                       size_t j, const bosch_result *ref, int ref_st, const char *what, size_t cut)
{
    size_t total = fr->n - 1;
    jrec r;
    jrec_init(&r, 48, NULL);
    r.jpath = path;
    r.jbase = j - 1;
    int st;
    bosch_result *res = run_cb(c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
    ck_assert_msg(st == ref_st, "%s at %zu (frame %zu at %zu): %s", what, cut, j, fr->f[j].off,
                  bosch_err_name(st));
    ck_assert_msg(r.calls == total - (j - 1), "%s at %zu: %zu evaluations redone, expected %zu",
                  what, cut, r.calls, total - (j - 1));
    ck_assert_msg(r.size_at_first == (long)fr->f[j].off,
                  "%s at %zu: journal size %ld at the first evaluation, expected %zu", what, cut,
                  r.size_at_first, fr->f[j].off);
    for (size_t i = 0; i < r.calls; i++) {
        jrecord rec;
        ck_assert_int_eq(j_record(full, &fr->f[j + i], 48, &rec), 0);
        ck_assert_msg(memcmp(rec.mask, r.log + i * J_MAXU, 48) == 0,
                      "%s at %zu: evaluation %zu after resume is not the lost record %zu", what,
                      cut, i, j - 1 + i);
    }
    ck_assert_msg(!r.jbad, "%s at %zu: journal record count wrong at call %zu", what, cut,
                  r.jbad_call);
    ck_assert_uint_eq(bosch_result_replayed(res), j - 1);
    assert_same(ref, res, what);
    /* The file: the valid prefix kept byte for byte, then the redone records. */
    size_t n2 = 0;
    uint8_t *b2 = j_slurp(path, &n2);
    ck_assert_msg(n2 >= fr->f[j].off && memcmp(b2, full, fr->f[j].off) == 0,
                  "%s at %zu: the valid prefix changed", what, cut);
    jframes f2 = j_parse(b2, n2);
    ck_assert_msg(!f2.tail && f2.n == fr->n, "%s at %zu: %zu valid frames after resume, tail %d",
                  what, cut, f2.n, f2.tail);
    j_frames_free(&f2);
    free(b2);
    bosch_result_free(res);
    jrec_free(&r);
}

START_TEST(torn_last_frame_every_byte)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "cut.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    ck_assert(!fr.tail);
    ck_assert_uint_eq(fr.n, bosch_result_evaluations(ref, -1) + 1);
    size_t last = fr.n - 1;
    for (size_t cut = fr.f[last].off; cut < size; cut++) {
        ck_assert_int_eq(j_spit(path, full, cut), 0);
        check_torn(&c, path, full, &fr, last, ref, ref_st, "cut in the last frame", cut);
    }
    /* Cuts inside earlier frames (then the last one): the rest is redone. */
    size_t js[] = {1, 2, fr.n / 2, fr.n - 2};
    for (size_t k = 0; k < 4; k++) {
        size_t j = js[k];
        size_t cuts[] = {fr.f[j].off + 1, fr.f[j].off + 12, fr.f[j].off + JHDR,
                         fr.f[j].end - 1};
        for (size_t q = 0; q < 4; q++) {
            ck_assert_int_eq(j_spit(path, full, cuts[q]), 0);
            check_torn(&c, path, full, &fr, j, ref, ref_st, "cut in an earlier frame", cuts[q]);
        }
    }
    /* Ask/tell: the first ask hands out exactly the lost candidate, after
     * truncating the file. */
    for (size_t cut = fr.f[last].off + 1; cut < size; cut += 9) {
        ck_assert_int_eq(j_spit(path, full, cut), 0);
        bosch_optimizer *o = cfg_opt(&c, path, BOSCH_JOURNAL_RESUME);
        size_t n = 0;
        ck_assert_int_eq(bosch_ask(o, &n), BOSCH_OK);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(j_fsize(path), (long)fr.f[last].off);
        n = 0; /* asking again before telling: the same batch */
        ck_assert_int_eq(bosch_ask(o, &n), BOSCH_OK);
        ck_assert_uint_eq(n, 1);
        uint8_t m[J_MAXU];
        jrecord rec;
        ck_assert_int_eq(j_record(full, &fr.f[last], 48, &rec), 0);
        ck_assert_int_eq(bosch_candidate(o, 0, m), BOSCH_OK);
        ck_assert_mem_eq(m, rec.mask, 48);
        ck_assert_int_eq(bosch_candidate_stage(o), rec.stage);
        ck_assert_int_eq(bosch_tell(o, 0, any_score(m, 48)), BOSCH_OK);
        ck_assert_int_eq(bosch_ask(o, &n), ref_st);
        bosch_result *res = get_result(o);
        assert_same(ref, res, "ask/tell after a torn tail");
        bosch_result_free(res);
        bosch_optimizer_free(o);
    }
    j_frames_free(&fr);
    free(full);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* Bytes after a complete journal: fewer than a frame header's worth is a
 * torn tail (dropped, nothing redone); a full frame header's worth of junk is
 * damage (BOSCH_E_CORRUPT). */
START_TEST(junk_after_last_frame)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "junk.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    static const uint8_t junk1[] = {'B', 'S', 'H', 'J', 2, 0, 0, 0, 0xff, 0xff, 0, 0, 7};
    static const uint8_t junk2[] = "hello";
    static const uint8_t junk3[JHDR - 1] = {'B', 'S', 'H', 'J', 2, 0, 0, 0, 9};
    const uint8_t *torn[] = {junk1, junk2, junk3};
    size_t tn[] = {sizeof junk1, 5, sizeof junk3};
    for (int k = 0; k < 3; k++) {
        uint8_t *ext = j_cat3(full, size, torn[k], tn[k], NULL, 0);
        ck_assert_int_eq(j_spit(path, ext, size + tn[k]), 0);
        jrec r;
        jrec_init(&r, 48, NULL);
        int st;
        bosch_result *res = run_cb(&c, path, BOSCH_JOURNAL_RESUME, &r, 0, &st, NULL);
        ck_assert_msg(st == ref_st, "%zu junk bytes: %s", tn[k], bosch_err_name(st));
        ck_assert_uint_eq(r.calls, 0);
        assert_same(ref, res, "junk tail");
        assert_file_eq(path, full, size, "torn junk tail truncated away");
        bosch_result_free(res);
        jrec_free(&r);
        free(ext);
    }
    /* A whole frame header of junk (bad header checksum), and a complete
     * frame header whose checksum is right but whose magic is not. */
    uint8_t junk4[JHDR + 10];
    trng g = {99};
    for (size_t i = 0; i < sizeof junk4; i++)
        junk4[i] = (uint8_t)trng_next(&g);
    memcpy(junk4, "BSHJ", 4);
    uint8_t *ext = j_cat3(full, size, junk4, sizeof junk4, NULL, 0);
    ck_assert_int_eq(j_spit(path, ext, size + sizeof junk4), 0);
    char msg[512];
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    assert_file_eq(path, ext, size + sizeof junk4, "junk frame");
    free(ext);
    uint8_t *fb;
    uint8_t raw[32] = {0};
    size_t fn = j_frame(JKIND_RECORD, raw, 25, &fb);
    memcpy(fb, "BSHX", 4);
    j_put32(fb + 16, j_hsum(fb));
    ext = j_cat3(full, size, fb, fn, NULL, 0);
    ck_assert_int_eq(j_spit(path, ext, size + fn), 0);
    ck_assert_int_eq(first_ask(&c, path, BOSCH_JOURNAL_RESUME, msg, sizeof msg, NULL),
                     BOSCH_E_CORRUPT);
    free(ext);
    free(fb);
    free(full);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

/* An empty file or a header frame cut short: a new journal. */
START_TEST(header_cut_short)
{
    char dir[64], src[128], path[128];
    j_mkdtemp(dir);
    j_path(src, sizeof src, dir, "full.bin");
    j_path(path, sizeof path, dir, "cut.bin");
    cfg c = base_cfg();
    int ref_st;
    bosch_result *ref = reference(&c, &ref_st);
    uint64_t total = bosch_result_evaluations(ref, -1);
    bosch_result_free(make_journal(&c, src));
    size_t size = 0;
    uint8_t *full = j_slurp(src, &size);
    jframes fr = j_parse(full, size);
    size_t hend = fr.f[0].end;
    for (size_t cut = 0; cut <= hend; cut++) {
        if (cut > 40 && cut < hend - 8 && cut % 5 != 0)
            continue; /* every byte of the frame header and the ends; every 5th in between */
        int mode = cut % 2 ? BOSCH_JOURNAL_RESUME : BOSCH_JOURNAL_AUTO;
        ck_assert_int_eq(j_spit(path, full, cut), 0);
        jrec r;
        jrec_init(&r, 48, NULL);
        int st;
        bosch_result *res = run_cb(&c, path, mode, &r, 0, &st, NULL);
        ck_assert_msg(st == ref_st, "header cut at %zu of %zu: %s", cut, hend, bosch_err_name(st));
        ck_assert_msg(r.calls == total, "header cut at %zu: %zu evaluations, expected %lu", cut,
                      r.calls, (unsigned long)total);
        ck_assert_uint_eq(bosch_result_replayed(res), 0);
        assert_same(ref, res, "header cut short");
        assert_journal_matches(path, res, 1);
        bosch_result_free(res);
        jrec_free(&r);
    }
    j_frames_free(&fr);
    free(full);
    bosch_result_free(ref);
    j_rmtree(dir);
}
END_TEST

static Suite *journal_torn_suite(void)
{
    Suite *s = suite_create("journal_torn");
    TCase *tc = tcase_new(s, "torn");
    tcase_add_test(tc, torn_last_frame_every_byte);
    tcase_add_test(tc, junk_after_last_frame);
    tcase_add_test(tc, header_cut_short);
    return s;
}

int main(void)
{
    return run_journal_suite(journal_torn_suite());
}
