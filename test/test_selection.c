/*
 * bosch_selection (selection.h): fields, settings, the bosch-mask JSON
 * reader and writer (round trip, every malformed input), the TSV (per KV
 * head) and SVG writers, bosch_selection_from_result, bosch_history_write.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "support/scratch.h"
#include "support/support.h"

/* ------------------------------------------------------------------------ */
/* Files                                                                     */
/* ------------------------------------------------------------------------ */
static void setup(void)
{
    scratch_setup("bosch-selection");
}


static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

/* A selection as `bosch search` fills it: 2 layers x 2 groups x 2 heads. */
static bosch_selection *sample(void)
{
    bosch_selection *s = bosch_selection_create(2, 2, 2);
    ck_assert_ptr_nonnull(s);
    const uint8_t mask[4] = {0, 1, 1, 1};
    const uint64_t stages[BOSCH_STAGE_COUNT] = {2, 8, 1, 19};
    ck_assert_int_eq(bosch_selection_set_mask(s, mask, 4), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_method(s, "bosch"), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_status(s, "BOSCH_DONE"), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_model_path(s, "/models/x"), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_target_ratio(s, 0.75), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_metric(s, "logprob"), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_score(s, BOSCH_SCORE_RAW, -4.5), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_score(s, BOSCH_SCORE_NORMALIZED, 0.25), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_score(s, BOSCH_SCORE_OBJECTIVE, NAN), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_score(s, BOSCH_SCORE_FULL, -4.0), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_score(s, BOSCH_SCORE_ALL_SWA, -6.0), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_kv_saving(s, 64, 16, 4), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_int(s, "niah.context", 64), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_int(s, "niah.samples", 2), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_int(s, "window", 16), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_string(s, "metric", "logprob"), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_double(s, "ratio", 0.75), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_bool(s, "prefix_cache", 1), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_evaluations(s, stages, 30, 3), BOSCH_OK);
    return s;
}

/* The file sample() gives, byte for byte (json-c's pretty printer; the
 * key order and the number formats of the bosch command's PREFIX.json). */
static const char sample_json[] =
    "{\n"
    "  \"format\":\"bosch-mask\",\n"
    "  \"format_version\":1,\n"
    "  \"library_version\":\"" BOSCH_VERSION_STRING "\",\n"
    "  \"method\":\"bosch\",\n"
    "  \"status\":\"BOSCH_DONE\",\n"
    "  \"model\":{\n"
    "    \"path\":\"/models/x\",\n"
    "    \"layers\":2,\n"
    "    \"kv_groups\":2,\n"
    "    \"heads_per_group\":2\n"
    "  },\n"
    "  \"units\":4,\n"
    "  \"unit_mask\":\"0111\",\n"
    "  \"head_mask\":[\n"
    "    [\n"
    "      0,\n"
    "      0,\n"
    "      1,\n"
    "      1\n"
    "    ],\n"
    "    [\n"
    "      1,\n"
    "      1,\n"
    "      1,\n"
    "      1\n"
    "    ]\n"
    "  ],\n"
    "  \"layer_ratios\":[\n"
    "    0.5,\n"
    "    1.0\n"
    "  ],\n"
    "  \"swa_units\":3,\n"
    "  \"ratio\":0.75,\n"
    "  \"target_ratio\":0.75,\n"
    "  \"score\":{\n"
    "    \"metric\":\"logprob\",\n"
    "    \"raw\":-4.5,\n"
    "    \"normalized\":0.25,\n"
    "    \"objective\":null,\n"
    "    \"full\":-4.0,\n"
    "    \"all_swa\":-6.0\n"
    "  },\n"
    "  \"kv_saving\":{\n"
    "    \"context\":64,\n"
    "    \"window\":16,\n"
    "    \"sink\":4,\n"
    "    \"fraction\":0.515625\n"
    "  },\n"
    "  \"settings\":{\n"
    "    \"niah\":{\n"
    "      \"context\":64,\n"
    "      \"samples\":2\n"
    "    },\n"
    "    \"window\":16,\n"
    "    \"metric\":\"logprob\",\n"
    "    \"ratio\":0.75,\n"
    "    \"prefix_cache\":true\n"
    "  },\n"
    "  \"evaluations\":{\n"
    "    \"anchors\":2,\n"
    "    \"probe\":8,\n"
    "    \"alloc\":1,\n"
    "    \"group\":19,\n"
    "    \"total\":30,\n"
    "    \"replayed\":3\n"
    "  }\n"
    "}";

/* ------------------------------------------------------------------------ */
/* Creation, NULL arguments                                                  */
/* ------------------------------------------------------------------------ */
START_TEST(create_shapes)
{
    ck_assert_ptr_null(bosch_selection_create(0, 2, 2));
    ck_assert_int_eq(bosch_create_status(), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_create_error(), "bosch_selection_create"));
    ck_assert_ptr_null(bosch_selection_create(2, 0, 2));
    ck_assert_ptr_null(bosch_selection_create(2, 2, 0));
    ck_assert_ptr_null(bosch_selection_create(1u << 13, 1u << 12, 1));
    ck_assert_ptr_nonnull(strstr(bosch_create_error(), "2^24"));
    bosch_selection *s = bosch_selection_create(4, 2, 4);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(bosch_selection_layers(s), 4);
    ck_assert_uint_eq(bosch_selection_kv_groups(s), 2);
    ck_assert_uint_eq(bosch_selection_heads_per_group(s), 4);
    ck_assert_uint_eq(bosch_selection_units(s), 8);
    ck_assert_uint_eq(bosch_selection_swa_units(s), 0);
    ck_assert_double_eq(bosch_selection_ratio(s), 0.0);
    ck_assert_ptr_null(bosch_selection_method(s));
    ck_assert_ptr_null(bosch_selection_status(s));
    ck_assert_ptr_null(bosch_selection_model_path(s));
    ck_assert_ptr_null(bosch_selection_library_version(s));
    ck_assert_ptr_null(bosch_selection_metric(s));
    ck_assert(isnan(bosch_selection_target_ratio(s)));
    ck_assert(isnan(bosch_selection_score(s, BOSCH_SCORE_RAW)));
    ck_assert_uint_eq(bosch_selection_setting_count(s), 0);
    ck_assert_str_eq(bosch_selection_last_error(s), "");
    bosch_selection_free(s);
    bosch_selection_free(NULL);
}
END_TEST

/* The overlap of the full units: by hand on a 4 x 2 case (1 = SWA). */
START_TEST(overlap)
{
    bosch_selection *a = bosch_selection_create(4, 2, 2), *b = bosch_selection_create(4, 2, 2);
    const uint8_t ma[8] = {1, 0, 0, 1, 1, 1, 0, 0}, mb[8] = {1, 0, 1, 0, 1, 1, 0, 1};
    ck_assert_int_eq(bosch_selection_set_mask(a, ma, 8), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_set_mask(b, mb, 8), BOSCH_OK);
    double per[4], all = -1;
    /* full units: a {0.1} {1.0} {} {3.0, 3.1}; b {0.1} {1.1} {} {3.0} */
    ck_assert_int_eq(bosch_selection_overlap(a, b, per, 4, &all), BOSCH_OK);
    ck_assert_double_eq(per[0], 1.0);
    ck_assert_double_eq(per[1], 0.0);
    ck_assert_double_eq(per[2], 1.0); /* both all SWA: the same (empty) set */
    ck_assert_double_eq(per[3], 0.5);
    ck_assert_double_eq(all, 2.0 / 5.0);
    double back = -1;
    ck_assert_int_eq(bosch_selection_overlap(b, a, NULL, 0, &back), BOSCH_OK);
    ck_assert_double_eq(back, all);
    ck_assert_int_eq(bosch_selection_overlap(a, a, per, 4, &all), BOSCH_OK);
    ck_assert_double_eq(all, 1.0);
    /* errors: NULL, another shape, a per-layer array of another length */
    ck_assert_int_eq(bosch_selection_overlap(NULL, b, NULL, 0, &all), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_overlap(a, NULL, NULL, 0, &all), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(a), "NULL"));
    bosch_selection *c = bosch_selection_create(4, 2, 4);
    ck_assert_int_eq(bosch_selection_overlap(a, c, NULL, 0, &all), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(a), "shapes differ"));
    ck_assert_int_eq(bosch_selection_overlap(a, b, per, 3, &all), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(a), "per_layer has 3"));
    bosch_selection_free(a);
    bosch_selection_free(b);
    bosch_selection_free(c);
}
END_TEST

START_TEST(null_arguments)
{
    uint8_t m[8] = {0};
    double d[8];
    uint64_t c;
    int64_t i;
    int b;
    ck_assert_ptr_null(bosch_selection_read_json(NULL));
    ck_assert_int_eq(bosch_create_status(), BOSCH_E_INVALID);
    ck_assert_ptr_null(bosch_selection_from_result(NULL, NULL));
    ck_assert_int_eq(bosch_create_status(), BOSCH_E_INVALID);
    ck_assert_str_eq(bosch_selection_last_error(NULL), "");
    ck_assert_uint_eq(bosch_selection_layers(NULL), 0);
    ck_assert_uint_eq(bosch_selection_kv_groups(NULL), 0);
    ck_assert_uint_eq(bosch_selection_heads_per_group(NULL), 0);
    ck_assert_uint_eq(bosch_selection_units(NULL), 0);
    ck_assert_uint_eq(bosch_selection_swa_units(NULL), 0);
    ck_assert(isnan(bosch_selection_ratio(NULL)));
    ck_assert_int_eq(bosch_selection_set_mask(NULL, m, 8), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_mask(NULL, m, 8), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_layer_ratios(NULL, d, 4), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_method(NULL, "x"), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_status(NULL, "x"), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_model_path(NULL, "x"), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_metric(NULL, "x"), BOSCH_E_INVALID);
    ck_assert_ptr_null(bosch_selection_method(NULL));
    ck_assert_ptr_null(bosch_selection_status(NULL));
    ck_assert_ptr_null(bosch_selection_model_path(NULL));
    ck_assert_ptr_null(bosch_selection_metric(NULL));
    ck_assert_ptr_null(bosch_selection_library_version(NULL));
    ck_assert_int_eq(bosch_selection_set_target_ratio(NULL, 0.5), BOSCH_E_INVALID);
    ck_assert(isnan(bosch_selection_target_ratio(NULL)));
    ck_assert_int_eq(bosch_selection_set_importance(NULL, d, 8), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_importance(NULL, d, 8), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_score(NULL, 0, 1.0), BOSCH_E_INVALID);
    ck_assert(isnan(bosch_selection_score(NULL, 0)));
    ck_assert_int_eq(bosch_selection_set_kv_saving(NULL, 1, 1, 1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_kv_saving(NULL, &c, &c, &c, d), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_set_string(NULL, "k", "v"), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_set_int(NULL, "k", 1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_set_double(NULL, "k", 1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_set_bool(NULL, "k", 1), BOSCH_E_INVALID);
    ck_assert_uint_eq(bosch_selection_setting_count(NULL), 0);
    ck_assert_ptr_null(bosch_selection_setting_key(NULL, 0));
    ck_assert_int_eq(bosch_selection_setting_type(NULL, "k"), BOSCH_E_INVALID);
    ck_assert_ptr_null(bosch_selection_setting_string(NULL, "k"));
    ck_assert_int_eq(bosch_selection_setting_int(NULL, "k", &i), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_double(NULL, "k", d), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_bool(NULL, "k", &b), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_evaluations(NULL, NULL, 1, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_evaluations(NULL, -1, &c), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_replayed(NULL, &c), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_write_json(NULL, scratch_path("n.json")), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_write_tsv(NULL, scratch_path("n.tsv")), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_write_svg(NULL, scratch_path("n.svg")), BOSCH_E_INVALID);

    /* NULL outputs and paths on a valid handle */
    bosch_selection *s = bosch_selection_create(4, 2, 1);
    ck_assert_int_eq(bosch_selection_set_mask(s, NULL, 8), BOSCH_E_INVALID);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "NULL"));
    ck_assert_int_eq(bosch_selection_mask(s, NULL, 8), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_layer_ratios(s, NULL, 4), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_importance(s, NULL, 8), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_set_string(s, "k", NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_set_int(s, NULL, 1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_type(s, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_int(s, "k", NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_evaluations(s, -1, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_replayed(s, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_write_json(s, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_write_tsv(s, NULL), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_write_svg(s, NULL), BOSCH_E_INVALID);
    /* unset fields */
    ck_assert_int_eq(bosch_selection_importance(s, d, 8), BOSCH_E_NOT_FOUND);
    ck_assert_int_eq(bosch_selection_kv_saving(s, NULL, NULL, NULL, NULL), BOSCH_E_NOT_FOUND);
    ck_assert_int_eq(bosch_selection_evaluations(s, -1, &c), BOSCH_E_NOT_FOUND);
    ck_assert_int_eq(bosch_selection_replayed(s, &c), BOSCH_E_NOT_FOUND);
    ck_assert_int_eq(bosch_selection_setting_type(s, "k"), BOSCH_E_NOT_FOUND);
    ck_assert_int_eq(bosch_selection_setting_int(s, "k", &i), BOSCH_E_NOT_FOUND);
    bosch_selection_free(s);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Fields                                                                    */
/* ------------------------------------------------------------------------ */
START_TEST(fields)
{
    bosch_selection *s = bosch_selection_create(4, 2, 4);
    uint8_t in[8] = {0, 7, 1, 1, 0, 0, 255, 0}, out[8];
    ck_assert_int_eq(bosch_selection_set_mask(s, in, 7), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_mask(s, in, 8), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_mask(s, out, 8), BOSCH_OK);
    const uint8_t want[8] = {0, 1, 1, 1, 0, 0, 1, 0};
    ck_assert_mem_eq(out, want, 8);
    ck_assert_uint_eq(bosch_selection_swa_units(s), 4);
    ck_assert_double_eq(bosch_selection_ratio(s), 0.5);
    double lr[4];
    ck_assert_int_eq(bosch_selection_layer_ratios(s, lr, 3), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_layer_ratios(s, lr, 4), BOSCH_OK);
    ck_assert_double_eq(lr[0], 0.5);
    ck_assert_double_eq(lr[1], 1.0);
    ck_assert_double_eq(lr[2], 0.0);
    ck_assert_double_eq(lr[3], 0.5);
    /* text fields are copied; NULL unsets */
    char name[16] = "bosch";
    ck_assert_int_eq(bosch_selection_set_method(s, name), BOSCH_OK);
    name[0] = 'X';
    ck_assert_str_eq(bosch_selection_method(s), "bosch");
    ck_assert_int_eq(bosch_selection_set_method(s, NULL), BOSCH_OK);
    ck_assert_ptr_null(bosch_selection_method(s));
    /* target ratio */
    ck_assert_int_eq(bosch_selection_set_target_ratio(s, 1.5), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_target_ratio(s, -0.1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_target_ratio(s, INFINITY), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_target_ratio(s, 0.25), BOSCH_OK);
    ck_assert_double_eq(bosch_selection_target_ratio(s), 0.25);
    ck_assert_int_eq(bosch_selection_set_target_ratio(s, NAN), BOSCH_OK);
    ck_assert(isnan(bosch_selection_target_ratio(s)));
    /* importance */
    double imp[8] = {1, 2, 3, 4, 5, 6, 7, NAN}, got[8];
    ck_assert_int_eq(bosch_selection_set_importance(s, imp, 7), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_importance(s, imp, 8), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_importance(s, got, 8), BOSCH_OK);
    ck_assert_double_eq(got[6], 7.0);
    ck_assert(isnan(got[7]));
    ck_assert_int_eq(bosch_selection_set_importance(s, NULL, 0), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_importance(s, got, 8), BOSCH_E_NOT_FOUND);
    /* scores */
    ck_assert_int_eq(bosch_selection_set_score(s, BOSCH_SCORE_COUNT, 1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_score(s, -1, 1.0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_score(s, BOSCH_SCORE_FULL, INFINITY), BOSCH_OK);
    ck_assert(isnan(bosch_selection_score(s, BOSCH_SCORE_FULL)));
    ck_assert(isnan(bosch_selection_score(s, 99)));
    /* KV saving, derived from the mask */
    uint64_t ctx, win, sink;
    double frac;
    ck_assert_int_eq(bosch_selection_set_kv_saving(s, (uint64_t)INT64_MAX + 1, 1, 1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_kv_saving(s, 1024, 128, 4), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_kv_saving(s, &ctx, &win, &sink, &frac), BOSCH_OK);
    ck_assert_uint_eq(ctx, 1024);
    ck_assert_uint_eq(win, 128);
    ck_assert_uint_eq(sink, 4);
    ck_assert_double_eq(frac, bosch_kv_saving(0.5, 1024, 128, 4));
    /* evaluations */
    uint64_t c;
    const uint64_t stages[BOSCH_STAGE_COUNT] = {2, 3, 4, 5};
    ck_assert_int_eq(bosch_selection_set_evaluations(s, NULL, 9, 1), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_evaluations(s, -1, &c), BOSCH_OK);
    ck_assert_uint_eq(c, 9);
    ck_assert_int_eq(bosch_selection_evaluations(s, BOSCH_STAGE_PROBE, &c), BOSCH_E_NOT_FOUND);
    ck_assert_int_eq(bosch_selection_evaluations(s, BOSCH_STAGE_COUNT, &c), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_evaluations(s, -2, &c), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_set_evaluations(s, stages, 14, 0), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_evaluations(s, BOSCH_STAGE_GROUP, &c), BOSCH_OK);
    ck_assert_uint_eq(c, 5);
    ck_assert_int_eq(bosch_selection_replayed(s, &c), BOSCH_OK);
    ck_assert_uint_eq(c, 0);
    ck_assert_int_eq(bosch_selection_set_evaluations(s, NULL, (uint64_t)INT64_MAX + 1, 0),
                     BOSCH_E_INVALID);
    bosch_selection_free(s);
}
END_TEST

START_TEST(settings)
{
    bosch_selection *s = bosch_selection_create(1, 1, 1);
    int64_t i;
    double d;
    int b;
    ck_assert_int_eq(bosch_selection_setting_set_int(s, "window", 16), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_int(s, "niah.context", 64), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_string(s, "metric", "exact"), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_double(s, "ratio", 0.5), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_setting_set_bool(s, "prefix_cache", 5), BOSCH_OK);
    ck_assert_uint_eq(bosch_selection_setting_count(s), 5);
    ck_assert_str_eq(bosch_selection_setting_key(s, 1), "niah.context");
    ck_assert_ptr_null(bosch_selection_setting_key(s, 5));
    ck_assert_int_eq(bosch_selection_setting_type(s, "window"), BOSCH_SETTING_INT);
    ck_assert_int_eq(bosch_selection_setting_type(s, "metric"), BOSCH_SETTING_STRING);
    ck_assert_int_eq(bosch_selection_setting_type(s, "ratio"), BOSCH_SETTING_DOUBLE);
    ck_assert_int_eq(bosch_selection_setting_type(s, "prefix_cache"), BOSCH_SETTING_BOOL);
    ck_assert_int_eq(bosch_selection_setting_int(s, "niah.context", &i), BOSCH_OK);
    ck_assert_int_eq(i, 64);
    ck_assert_int_eq(bosch_selection_setting_double(s, "window", &d), BOSCH_OK); /* int -> double */
    ck_assert_double_eq(d, 16.0);
    ck_assert_int_eq(bosch_selection_setting_int(s, "ratio", &i), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_bool(s, "prefix_cache", &b), BOSCH_OK);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(bosch_selection_setting_bool(s, "metric", &b), BOSCH_E_INVALID);
    ck_assert_str_eq(bosch_selection_setting_string(s, "metric"), "exact");
    ck_assert_ptr_null(bosch_selection_setting_string(s, "window"));
    ck_assert_ptr_null(bosch_selection_setting_string(s, "absent"));
    /* replacing keeps the place and takes the new type */
    ck_assert_int_eq(bosch_selection_setting_set_string(s, "window", "wide"), BOSCH_OK);
    ck_assert_str_eq(bosch_selection_setting_key(s, 0), "window");
    ck_assert_str_eq(bosch_selection_setting_string(s, "window"), "wide");
    ck_assert_uint_eq(bosch_selection_setting_count(s), 5);
    /* bad keys and values */
    const char *bad[] = {"", ".a", "a.", "a.b.c", "niah", "metric.x"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_msg(bosch_selection_setting_set_int(s, bad[k], 1) == BOSCH_E_INVALID, "%s", bad[k]);
        ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "bosch_selection_setting_set_int"));
    }
    char longkey[300];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    ck_assert_int_eq(bosch_selection_setting_set_bool(s, longkey, 1), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_set_double(s, "x", NAN), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_selection_setting_set_double(s, "x", INFINITY), BOSCH_E_INVALID);
    ck_assert_uint_eq(bosch_selection_setting_count(s), 5);
    bosch_selection_free(s);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */
START_TEST(json_exact_bytes)
{
    bosch_selection *s = sample();
    const char *p = scratch_path("exact.json");
    ck_assert_int_eq(bosch_selection_write_json(s, p), BOSCH_OK);
    char *text = scratch_read_text(p);
    ck_assert_str_eq(text, sample_json);
    free(text);
    bosch_selection_free(s);
}
END_TEST

static void assert_same_selection(const bosch_selection *a, const bosch_selection *b)
{
    size_t n = bosch_selection_units(a);
    ck_assert_uint_eq(n, bosch_selection_units(b));
    ck_assert_uint_eq(bosch_selection_heads_per_group(a), bosch_selection_heads_per_group(b));
    uint8_t ma[64], mb[64];
    ck_assert_int_eq(bosch_selection_mask(a, ma, n), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_mask(b, mb, n), BOSCH_OK);
    ck_assert_mem_eq(ma, mb, n);
    ck_assert_str_eq(bosch_selection_method(a), bosch_selection_method(b));
    ck_assert_str_eq(bosch_selection_status(a), bosch_selection_status(b));
    ck_assert_str_eq(bosch_selection_model_path(a), bosch_selection_model_path(b));
    ck_assert_str_eq(bosch_selection_metric(a), bosch_selection_metric(b));
    ck_assert_double_eq(bosch_selection_target_ratio(a), bosch_selection_target_ratio(b));
    for (int k = 0; k < BOSCH_SCORE_COUNT; k++) {
        double x = bosch_selection_score(a, k), y = bosch_selection_score(b, k);
        ck_assert(isnan(x) ? isnan(y) : x == y);
    }
    ck_assert_uint_eq(bosch_selection_setting_count(a), bosch_selection_setting_count(b));
    for (size_t i = 0; i < bosch_selection_setting_count(a); i++) {
        const char *k = bosch_selection_setting_key(a, i);
        ck_assert_str_eq(k, bosch_selection_setting_key(b, i));
        ck_assert_int_eq(bosch_selection_setting_type(a, k), bosch_selection_setting_type(b, k));
    }
    for (int st = -1; st < BOSCH_STAGE_COUNT; st++) {
        uint64_t x = 0, y = 0;
        ck_assert_int_eq(bosch_selection_evaluations(a, st, &x), bosch_selection_evaluations(b, st, &y));
        ck_assert_uint_eq(x, y);
    }
}

START_TEST(json_round_trip)
{
    bosch_selection *s = sample();
    double imp[4] = {0.5, NAN, -1.25, 3.0};
    ck_assert_int_eq(bosch_selection_set_importance(s, imp, 4), BOSCH_OK);
    const char *p1 = scratch_path("rt1.json"), *p2 = scratch_path("rt2.json");
    ck_assert_int_eq(bosch_selection_write_json(s, p1), BOSCH_OK);
    bosch_selection *r = bosch_selection_read_json(p1);
    ck_assert_msg(r != NULL, "%s", bosch_create_error());
    assert_same_selection(s, r);
    ck_assert_str_eq(bosch_selection_library_version(r), bosch_version_string());
    double got[4];
    ck_assert_int_eq(bosch_selection_importance(r, got, 4), BOSCH_OK);
    ck_assert_double_eq(got[0], 0.5);
    ck_assert(isnan(got[1]));
    ck_assert_double_eq(got[2], -1.25);
    uint64_t ctx, win, sink, c;
    ck_assert_int_eq(bosch_selection_kv_saving(r, &ctx, &win, &sink, NULL), BOSCH_OK);
    ck_assert_uint_eq(ctx, 64);
    ck_assert_uint_eq(win, 16);
    ck_assert_uint_eq(sink, 4);
    ck_assert_int_eq(bosch_selection_replayed(r, &c), BOSCH_OK);
    ck_assert_uint_eq(c, 3);
    int b;
    ck_assert_int_eq(bosch_selection_setting_bool(r, "prefix_cache", &b), BOSCH_OK);
    ck_assert_int_eq(b, 1);
    /* written again: the same bytes */
    ck_assert_int_eq(bosch_selection_write_json(r, p2), BOSCH_OK);
    char *t1 = scratch_read_text(p1), *t2 = scratch_read_text(p2);
    ck_assert_str_eq(t1, t2);
    free(t1);
    free(t2);
    bosch_selection_free(r);
    bosch_selection_free(s);
}
END_TEST

/* The smallest file read back: only the required members. */
START_TEST(json_minimal)
{
    const char *p = scratch_path("min.json");
    scratch_write_text(p, "{\"format\":\"bosch-mask\",\"model\":{\"layers\":2,\"kv_groups\":1,"
                  "\"heads_per_group\":3},\"unit_mask\":\"10\"}");
    bosch_selection *s = bosch_selection_read_json(p);
    ck_assert_msg(s != NULL, "%s", bosch_create_error());
    ck_assert_uint_eq(bosch_selection_heads_per_group(s), 3);
    ck_assert_uint_eq(bosch_selection_swa_units(s), 1);
    ck_assert_ptr_null(bosch_selection_method(s));
    ck_assert_ptr_null(bosch_selection_model_path(s));
    ck_assert(isnan(bosch_selection_score(s, BOSCH_SCORE_RAW)));
    uint64_t c;
    ck_assert_int_eq(bosch_selection_evaluations(s, -1, &c), BOSCH_E_NOT_FOUND);
    /* written: only the members it has, and the derived ones */
    ck_assert_int_eq(bosch_selection_write_json(s, p), BOSCH_OK);
    char *t = scratch_read_text(p);
    ck_assert_ptr_nonnull(strstr(t, "\"head_mask\""));
    ck_assert_ptr_null(strstr(t, "\"method\""));
    ck_assert_ptr_null(strstr(t, "\"score\""));
    ck_assert_ptr_null(strstr(t, "\"settings\""));
    ck_assert_ptr_null(strstr(t, "\"evaluations\""));
    ck_assert_ptr_null(strstr(t, "\"path\""));
    free(t);
    bosch_selection_free(s);
}
END_TEST

/* Every malformed input: the status and the reason. */
static const struct {
    const char *json; /* NULL: no file */
    int code;
    const char *why;
} malformed[] = {
    {NULL, BOSCH_E_IO, "No such file"},
    {"", BOSCH_E_CORRUPT, "not a JSON object (malformed mask file)"},
    {"{\"format\": ", BOSCH_E_CORRUPT, "not a JSON object (malformed mask file)"},
    {"[1, 2]", BOSCH_E_CORRUPT, "not a JSON object (malformed mask file)"},
#define SHAPE "\"model\":{\"layers\":2,\"kv_groups\":2,\"heads_per_group\":1}"
#define OK_HEAD "{\"format\":\"bosch-mask\"," SHAPE ",\"unit_mask\":\"0110\""
    {"{\"model\":{}}", BOSCH_E_CORRUPT, "malformed mask file: \"format\" is not \"bosch-mask\""},
    {"{\"format\":\"other\"}", BOSCH_E_CORRUPT, "\"format\" is not \"bosch-mask\""},
    {"{\"format\":1}", BOSCH_E_CORRUPT, "\"format\" is not \"bosch-mask\""},
    {"{\"format\":\"bosch-mask\",\"format_version\":\"1\"}", BOSCH_E_CORRUPT,
     "\"format_version\" is not a positive integer"},
    {"{\"format\":\"bosch-mask\",\"format_version\":0}", BOSCH_E_CORRUPT,
     "\"format_version\" is not a positive integer"},
    {"{\"format\":\"bosch-mask\",\"format_version\":2}", BOSCH_E_MISMATCH,
     "unsupported format_version 2 (this libbosch reads up to 1)"},
    {"{\"format\":\"bosch-mask\"}", BOSCH_E_CORRUPT, "no \"model\" object"},
    {"{\"format\":\"bosch-mask\",\"model\":[]}", BOSCH_E_CORRUPT, "no \"model\" object"},
    {"{\"format\":\"bosch-mask\",\"model\":{\"layers\":\"2\",\"kv_groups\":2,\"heads_per_group\":1}}",
     BOSCH_E_CORRUPT, "\"model\" lacks positive integers layers, kv_groups, heads_per_group"},
    {"{\"format\":\"bosch-mask\",\"model\":{\"layers\":2,\"kv_groups\":0,\"heads_per_group\":1}}",
     BOSCH_E_CORRUPT, "\"model\" lacks positive integers"},
    {"{\"format\":\"bosch-mask\",\"model\":{\"layers\":2,\"kv_groups\":2}}", BOSCH_E_CORRUPT,
     "\"model\" lacks positive integers"},
    {"{\"format\":\"bosch-mask\",\"model\":{\"layers\":2.0,\"kv_groups\":2,\"heads_per_group\":1}}",
     BOSCH_E_CORRUPT, "\"model\" lacks positive integers"},
    {"{\"format\":\"bosch-mask\"," SHAPE "}", BOSCH_E_CORRUPT, "no \"unit_mask\" string"},
    {"{\"format\":\"bosch-mask\"," SHAPE ",\"unit_mask\":[0,1,1,0]}", BOSCH_E_CORRUPT,
     "no \"unit_mask\" string"},
    {"{\"format\":\"bosch-mask\"," SHAPE ",\"unit_mask\":\"011\"}", BOSCH_E_CORRUPT,
     "\"unit_mask\" length differs from layers x kv_groups"},
    {"{\"format\":\"bosch-mask\"," SHAPE ",\"unit_mask\":\"01100\"}", BOSCH_E_CORRUPT,
     "\"unit_mask\" length differs from layers x kv_groups"},
    {"{\"format\":\"bosch-mask\"," SHAPE ",\"unit_mask\":\"01x0\"}", BOSCH_E_CORRUPT,
     "\"unit_mask\" holds characters other than 0 and 1"},
    {OK_HEAD ",\"units\":5}", BOSCH_E_CORRUPT, "\"units\" differs from layers x kv_groups"},
    {OK_HEAD ",\"units\":\"4\"}", BOSCH_E_CORRUPT, "\"units\" differs from layers x kv_groups"},
    {"{\"format\":\"bosch-mask\",\"model\":{\"path\":7,\"layers\":2,\"kv_groups\":2,"
     "\"heads_per_group\":1},\"unit_mask\":\"0110\"}", BOSCH_E_CORRUPT, "\"model.path\" is not a string"},
    {OK_HEAD ",\"method\":1}", BOSCH_E_CORRUPT, "\"method\" is not a string"},
    {OK_HEAD ",\"status\":null}", BOSCH_E_CORRUPT, "\"status\" is not a string"},
    {OK_HEAD ",\"library_version\":[]}", BOSCH_E_CORRUPT, "\"library_version\" is not a string"},
    {OK_HEAD ",\"target_ratio\":\"0.5\"}", BOSCH_E_CORRUPT, "\"target_ratio\" is not a number in [0, 1]"},
    {OK_HEAD ",\"target_ratio\":1.5}", BOSCH_E_CORRUPT, "\"target_ratio\" is not a number in [0, 1]"},
    {OK_HEAD ",\"unit_importance\":[1,2,3]}", BOSCH_E_CORRUPT,
     "\"unit_importance\" is not an array of layers x kv_groups numbers"},
    {OK_HEAD ",\"unit_importance\":{}}", BOSCH_E_CORRUPT, "\"unit_importance\" is not an array"},
    {OK_HEAD ",\"unit_importance\":[1,2,\"3\",4]}", BOSCH_E_CORRUPT,
     "\"unit_importance\" holds a value that is not a number or null"},
    {OK_HEAD ",\"head_mask\":\"x\"}", BOSCH_E_CORRUPT, "\"head_mask\" is not an array"},
    {OK_HEAD ",\"layer_ratios\":1}", BOSCH_E_CORRUPT, "\"layer_ratios\" is not an array"},
    {OK_HEAD ",\"swa_units\":2.5}", BOSCH_E_CORRUPT, "\"swa_units\" is not an integer"},
    {OK_HEAD ",\"ratio\":\"half\"}", BOSCH_E_CORRUPT, "\"ratio\" is not a number"},
    {OK_HEAD ",\"score\":[]}", BOSCH_E_CORRUPT, "\"score\" is not an object"},
    {OK_HEAD ",\"score\":{\"metric\":1}}", BOSCH_E_CORRUPT, "\"score.metric\" is not a string"},
    {OK_HEAD ",\"score\":{\"raw\":\"x\"}}", BOSCH_E_CORRUPT, "\"score.raw\" is not a number or null"},
    {OK_HEAD ",\"score\":{\"all_swa\":true}}", BOSCH_E_CORRUPT,
     "\"score.all_swa\" is not a number or null"},
    {OK_HEAD ",\"kv_saving\":{\"context\":64,\"window\":16}}", BOSCH_E_CORRUPT,
     "\"kv_saving\" lacks non-negative integers context, window, sink"},
    {OK_HEAD ",\"kv_saving\":{\"context\":-1,\"window\":16,\"sink\":4}}", BOSCH_E_CORRUPT,
     "\"kv_saving\" lacks non-negative integers"},
    {OK_HEAD ",\"kv_saving\":{\"context\":64,\"window\":16,\"sink\":4,\"fraction\":\"x\"}}",
     BOSCH_E_CORRUPT, "\"kv_saving.fraction\" is not a number"},
    {OK_HEAD ",\"settings\":[]}", BOSCH_E_CORRUPT, "\"settings\" is not an object"},
    {OK_HEAD ",\"settings\":{\"window\":null}}", BOSCH_E_CORRUPT,
     "\"settings.window\" is not a string, finite number or boolean"},
    {OK_HEAD ",\"settings\":{\"list\":[1]}}", BOSCH_E_CORRUPT,
     "\"settings.list\" is not a string, finite number or boolean"},
    {OK_HEAD ",\"settings\":{\"niah\":{\"deep\":{}}}}", BOSCH_E_CORRUPT,
     "\"settings.niah.deep\" is not a string, finite number or boolean"},
    {OK_HEAD ",\"settings\":{\"a.b\":1}}", BOSCH_E_CORRUPT, "\"settings\" key \"a.b\" contains a dot"},
    {OK_HEAD ",\"settings\":{\"\":1}}", BOSCH_E_CORRUPT, "\"settings.\": a key must have 1 to 255 bytes"},
    {OK_HEAD ",\"evaluations\":7}", BOSCH_E_CORRUPT, "\"evaluations\" is not an object"},
    {OK_HEAD ",\"evaluations\":{\"total\":-3}}", BOSCH_E_CORRUPT,
     "\"evaluations.total\" is not a non-negative integer"},
    {OK_HEAD ",\"evaluations\":{\"probe\":\"8\"}}", BOSCH_E_CORRUPT,
     "\"evaluations.probe\" is not a non-negative integer"},
    /* A key given twice (json-c would keep the last): refused, named decoded. */
    {OK_HEAD ",\n\"unit_mask\":\"1111\"}", BOSCH_E_CORRUPT,
     "malformed mask file: line 2: key \"unit_mask\" is given twice (give each key once)"},
    {OK_HEAD ",\"unit_\\u006dask\":\"1111\"}", BOSCH_E_CORRUPT, "key \"unit_mask\" is given twice"},
    {"{\"format\":\"bosch-mask\",\"model\":{\"layers\":2,\"kv_groups\":2,\"layers\":4,"
     "\"heads_per_group\":1},\"unit_mask\":\"0110\"}", BOSCH_E_CORRUPT, "key \"layers\" is given twice"},
    {OK_HEAD ",\"settings\":{\"window\":8,\"window\":16}}", BOSCH_E_CORRUPT,
     "key \"window\" is given twice"},
};

START_TEST(json_malformed)
{
    const char *p = scratch_path("bad.json");
    char want[512];
    size_t i = (size_t)_i;
    unlink(p);
    if (malformed[i].json)
        scratch_write_text(p, malformed[i].json);
    bosch_selection *s = bosch_selection_read_json(p);
    ck_assert_msg(s == NULL, "case %zu accepted", i);
    ck_assert_msg(bosch_create_status() == malformed[i].code, "case %zu: %s", i,
                  bosch_err_name(bosch_create_status()));
    snprintf(want, sizeof want, "bosch_selection_read_json: %s: ", p);
    ck_assert_msg(!strncmp(bosch_create_error(), want, strlen(want)), "case %zu: %s", i,
                  bosch_create_error());
    ck_assert_msg(strstr(bosch_create_error(), malformed[i].why), "case %zu: '%s' lacks '%s'", i,
                  bosch_create_error(), malformed[i].why);
}
END_TEST

/* A directory is no JSON file; a path that cannot be written is BOSCH_E_IO. */
START_TEST(json_io_errors)
{
    ck_assert_ptr_null(bosch_selection_read_json(scratch_dir()));
    ck_assert_int_eq(bosch_create_status(), BOSCH_E_CORRUPT);
    bosch_selection *s = sample();
    const char *p = scratch_path("no-such-dir/x.json");
    errno = 0;
    ck_assert_int_eq(bosch_selection_write_json(s, p), BOSCH_E_IO);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), p));
    errno = 0;
    ck_assert_int_eq(bosch_selection_write_tsv(s, p), BOSCH_E_IO);
    ck_assert_int_eq(errno, ENOENT);
    errno = 0;
    ck_assert_int_eq(bosch_selection_write_svg(s, p), BOSCH_E_IO);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_ptr_nonnull(strstr(bosch_selection_last_error(s), "bosch_selection_write_svg"));
    bosch_selection_free(s);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* TSV and SVG                                                               */
/* ------------------------------------------------------------------------ */
START_TEST(tsv_per_kv_head)
{
    /* GQA: 4 layers x 2 KV groups x 4 query heads -> 4 rows x 2 columns */
    bosch_selection *s = bosch_selection_create(4, 2, 4);
    const uint8_t mask[8] = {1, 0, 0, 0, 1, 1, 0, 1};
    ck_assert_int_eq(bosch_selection_set_mask(s, mask, 8), BOSCH_OK);
    const char *p = scratch_path("m.tsv");
    ck_assert_int_eq(bosch_selection_write_tsv(s, p), BOSCH_OK);
    char *t = scratch_read_text(p);
    ck_assert_str_eq(t, "0\t1\n1\t1\n0\t0\n1\t0\n"); /* 1 = full, 0 = SWA */
    ck_assert_uint_eq(count_lines(t), 4);
    free(t);
    bosch_selection_free(s);
    /* MHA, one KV group: one column */
    s = bosch_selection_create(3, 1, 1);
    ck_assert_int_eq(bosch_selection_write_tsv(s, p), BOSCH_OK);
    t = scratch_read_text(p);
    ck_assert_str_eq(t, "1\n1\n1\n");
    free(t);
    bosch_selection_free(s);
}
END_TEST

START_TEST(svg_heatmap)
{
    bosch_selection *s = bosch_selection_create(2, 3, 1);
    const uint8_t mask[6] = {1, 0, 0, 0, 0, 1};
    bosch_selection_set_mask(s, mask, 6);
    const char *p = scratch_path("m.svg");
    ck_assert_int_eq(bosch_selection_write_svg(s, p), BOSCH_OK);
    char *t = scratch_read_text(p);
    int w = 0, h = 0, vw = -1, vh = -1;
    const char *root = strstr(t, "<svg ");
    ck_assert_ptr_nonnull(root);
    ck_assert_int_eq(sscanf(root, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                                  "height=\"%d\" viewBox=\"0 0 %d %d\"", &w, &h, &vw, &vh), 4);
    ck_assert_int_eq(w, vw);
    ck_assert_int_eq(h, vh);
    ck_assert_int_gt(w, 200); /* room for the title and the legend */
    ck_assert_ptr_nonnull(strstr(t, ">mask: SWA ratio 0.333</text>")); /* no method: "mask" */
    ck_assert_ptr_nonnull(strstr(t, ">2 layers x 3 KV groups x 1 query head per group, 2 of 6 "
                                    "units SWA</text>"));
    ck_assert_ptr_nonnull(strstr(t, "<title>layer 0 group 0: SWA</title>"));
    ck_assert_ptr_nonnull(strstr(t, "<title>layer 1 group 2: SWA</title>"));
    ck_assert_ptr_nonnull(strstr(t, "<title>layer 1 group 1: full</title>"));
    ck_assert_ptr_nonnull(strstr(t, "class=\"layer-label\" text-anchor=\"end\">1</text>"));
    ck_assert_ptr_nonnull(strstr(t, "class=\"group-label\" text-anchor=\"middle\">2</text>"));
    ck_assert_ptr_nonnull(strstr(t, "class=\"ratio-label\">0.33</text>"));
    /* nothing recorded, nothing shown */
    ck_assert_ptr_null(strstr(t, "model:"));
    ck_assert_ptr_null(strstr(t, "window"));
    ck_assert_ptr_null(strstr(t, "metric"));
    ck_assert_ptr_null(strstr(t, "evaluations"));
    ck_assert_ptr_nonnull(strstr(t, "</svg>\n"));
    free(t);
    /* the method, model and metric are XML text; the full path a tooltip */
    bosch_selection_set_method(s, "a<b&\"c\"");
    bosch_selection_set_model_path(s, "/m/x&y/<Model>\x01\xff/");
    bosch_selection_set_metric(s, "logprob");
    bosch_selection_set_score(s, BOSCH_SCORE_RAW, 0.25);
    bosch_selection_set_score(s, BOSCH_SCORE_NORMALIZED, 0.5);
    bosch_selection_set_target_ratio(s, 0.25);
    bosch_selection_set_kv_saving(s, 1000, 100, 4);
    const double imp[6] = {0.5, 1, 2, 3, 4, 5};
    bosch_selection_set_importance(s, imp, 6);
    ck_assert_int_eq(bosch_selection_set_evaluations(s, NULL, 42, 2), BOSCH_OK);
    ck_assert_int_eq(bosch_selection_write_svg(s, p), BOSCH_OK);
    t = scratch_read_text(p);
    ck_assert_ptr_nonnull(strstr(t, ">a&lt;b&amp;&quot;c&quot;: SWA ratio 0.333 (target 0.250)<"));
    ck_assert_ptr_nonnull(strstr(t, "<title>/m/x&amp;y/&lt;Model&gt;?\?/</title>"));
    ck_assert_ptr_nonnull(strstr(t, ">model: &lt;Model&gt;?\?</text>"));
    ck_assert_ptr_nonnull(strstr(t, ">window 100, sink 4, context 1000, KV saving 29.9%</text>"));
    ck_assert_ptr_nonnull(strstr(t, ">metric logprob, score 0.25, normalized 0.5000</text>"));
    ck_assert_ptr_nonnull(strstr(t, ">evaluations 42 (2 replayed)</text>"));
    ck_assert_ptr_nonnull(strstr(t, "<title>layer 0 group 0: SWA, importance 0.5</title>"));
    free(t);
    bosch_selection_free(s);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* From a search result; history                                             */
/* ------------------------------------------------------------------------ */
static bosch_result *search_result(bosch_problem **prob, bosch_testbed **tb)
{
    *tb = make_testbed(4, 2, 5, 0.0, 0.0);
    *prob = bosch_problem_create(4, 2, 4);
    ck_assert_int_eq(bosch_problem_set_target_ratio(*prob, 0.5), BOSCH_OK);
    bosch_optimizer *opt = bosch_optimizer_create(*prob);
    ck_assert_int_eq(bosch_set_budget(opt, 40), BOSCH_OK);
    ck_assert_int_eq(bosch_set_batch_evaluator(opt, bosch_testbed_batch_eval, *tb), BOSCH_OK);
    ck_assert_int_gt(bosch_optimize(opt), 0);
    bosch_result *r = get_result(opt);
    bosch_optimizer_free(opt);
    return r;
}

START_TEST(from_result)
{
    bosch_problem *prob;
    bosch_testbed *tb;
    bosch_result *r = search_result(&prob, &tb);
    bosch_selection *s = bosch_selection_from_result(r, prob);
    ck_assert_msg(s != NULL, "%s", bosch_create_error());
    ck_assert_uint_eq(bosch_selection_heads_per_group(s), 4);
    uint8_t a[8], b[8];
    bosch_result_mask(r, a, 8);
    bosch_selection_mask(s, b, 8);
    ck_assert_mem_eq(a, b, 8);
    ck_assert_str_eq(bosch_selection_method(s), "bosch");
    ck_assert_str_eq(bosch_selection_status(s), bosch_err_name(bosch_result_status(r)));
    ck_assert_double_eq(bosch_selection_score(s, BOSCH_SCORE_RAW), bosch_result_score(r));
    ck_assert_double_eq(bosch_selection_score(s, BOSCH_SCORE_NORMALIZED),
                        bosch_result_normalized_score(r));
    ck_assert_double_eq(bosch_selection_score(s, BOSCH_SCORE_OBJECTIVE), bosch_result_objective(r));
    ck_assert_double_eq(bosch_selection_score(s, BOSCH_SCORE_FULL), bosch_result_anchor(r, 0));
    ck_assert_double_eq(bosch_selection_score(s, BOSCH_SCORE_ALL_SWA), bosch_result_anchor(r, 1));
    ck_assert_double_eq(bosch_selection_target_ratio(s), 0.5);
    ck_assert_ptr_null(bosch_selection_metric(s));
    uint64_t c;
    for (int st = -1; st < BOSCH_STAGE_COUNT; st++) {
        ck_assert_int_eq(bosch_selection_evaluations(s, st, &c), BOSCH_OK);
        ck_assert_uint_eq(c, bosch_result_evaluations(r, st));
    }
    bosch_selection_free(s);
    /* another problem's shape */
    bosch_problem *other = bosch_problem_create(2, 4, 4);
    ck_assert_ptr_null(bosch_selection_from_result(r, other));
    ck_assert_int_eq(bosch_create_status(), BOSCH_E_INVALID);
    ck_assert_ptr_null(bosch_selection_from_result(r, NULL));
    bosch_problem_free(other);
    bosch_result_free(r);
    bosch_problem_free(prob);
    bosch_testbed_free(tb);
}
END_TEST

/* bosch_history_write writes bosch_result_write_history's records: the
 * same lines up to wall_s (null: no wall times without an optimizer). */
START_TEST(history_same_format)
{
    bosch_problem *prob;
    bosch_testbed *tb;
    bosch_result *r = search_result(&prob, &tb);
    size_t n = bosch_result_history_size(r);
    uint8_t *masks = malloc(n * 8);
    double *scores = malloc(n * sizeof *scores);
    const char **stages = malloc(n * sizeof *stages);
    for (size_t i = 0; i < n; i++) {
        int st;
        history_entry(r, i, masks + i * 8, &scores[i], &st);
        stages[i] = bosch_stage_name(st);
    }
    const char *pa = scratch_path("a.jsonl"), *pb = scratch_path("b.jsonl");
    ck_assert_int_eq(bosch_result_write_history(r, pa), BOSCH_OK);
    ck_assert_int_eq(bosch_history_write(pb, 8, n, masks, scores, stages, bosch_result_anchor(r, 0),
                                         bosch_result_anchor(r, 1)), BOSCH_OK);
    char *ta = scratch_read_text(pa), *tb_ = scratch_read_text(pb);
    ck_assert_uint_eq(count_lines(ta), n);
    ck_assert_uint_eq(count_lines(tb_), n);
    char *la = ta, *lb = tb_;
    for (size_t i = 0; i < n; i++) {
        char *wa = strstr(la, "\"wall_s\":"), *wb = strstr(lb, "\"wall_s\":");
        ck_assert_ptr_nonnull(wa);
        ck_assert_int_eq(wa - la, wb - lb);
        ck_assert_int_eq(strncmp(la, lb, (size_t)(wa - la)), 0);
        ck_assert_int_eq(strncmp(wb, "\"wall_s\":null,\"mask\":\"", 22), 0);
        la = strchr(la, '\n') + 1;
        lb = strchr(lb, '\n') + 1;
    }
    free(ta);
    free(tb_);
    free(masks);
    free(scores);
    free(stages);
    bosch_result_free(r);
    bosch_problem_free(prob);
    bosch_testbed_free(tb);
}
END_TEST

START_TEST(history_write)
{
    const uint8_t masks[6] = {0, 0, 0, 1, 1, 1};
    const double scores[2] = {1.0, 0.25};
    const char *stages[2] = {"anchors", "baseline"};
    const char *p = scratch_path("h.jsonl");
    ck_assert_int_eq(bosch_history_write(p, 3, 2, masks, scores, stages, 1.0, 0.0), BOSCH_OK);
    char *t = scratch_read_text(p);
    ck_assert_str_eq(t,
        "{\"eval\":0,\"stage\":\"anchors\",\"score\":1.0,\"normalized\":1.0,\"swa_units\":0,"
        "\"wall_s\":null,\"mask\":\"000\"}\n"
        "{\"eval\":1,\"stage\":\"baseline\",\"score\":0.25,\"normalized\":0.25,\"swa_units\":3,"
        "\"wall_s\":null,\"mask\":\"111\"}\n");
    free(t);
    /* anchors that cannot normalise: null */
    ck_assert_int_eq(bosch_history_write(p, 3, 1, masks, scores, stages, 0.0, 0.5), BOSCH_OK);
    t = scratch_read_text(p);
    ck_assert_ptr_nonnull(strstr(t, "\"normalized\":null"));
    free(t);
    ck_assert_int_eq(bosch_history_write(p, 3, 1, masks, scores, stages, NAN, NAN), BOSCH_OK);
    /* no records: an empty file */
    ck_assert_int_eq(bosch_history_write(p, 3, 0, NULL, NULL, NULL, NAN, NAN), BOSCH_OK);
    t = scratch_read_text(p);
    ck_assert_str_eq(t, "");
    free(t);
    const char *nul[1] = {NULL};
    ck_assert_int_eq(bosch_history_write(NULL, 3, 1, masks, scores, stages, 1, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_history_write(p, 0, 1, masks, scores, stages, 1, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_history_write(p, 3, 1, NULL, scores, stages, 1, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_history_write(p, 3, 1, masks, NULL, stages, 1, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_history_write(p, 3, 1, masks, scores, NULL, 1, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_history_write(p, 3, 1, masks, scores, nul, 1, 0), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_history_write(scratch_path("no-such-dir/h"), 3, 1, masks, scores, stages, 1, 0),
                     BOSCH_E_IO);
}
END_TEST

static Suite *selection_suite(void)
{
    Suite *s = suite_create("selection");
    TCase *tc = tcase_new(s, "fields");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_test(tc, create_shapes);
    tcase_add_test(tc, null_arguments);
    tcase_add_test(tc, fields);
    tcase_add_test(tc, settings);
    tc = tcase_new(s, "json");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_test(tc, json_exact_bytes);
    tcase_add_test(tc, json_round_trip);
    tcase_add_test(tc, json_minimal);
    tcase_add_loop_test(tc, json_malformed, 0, (int)(sizeof malformed / sizeof malformed[0]));
    tcase_add_test(tc, json_io_errors);
    tc = tcase_new(s, "text");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_test(tc, tsv_per_kv_head);
    tcase_add_test(tc, overlap);
    tcase_add_test(tc, svg_heatmap);
    tc = tcase_new(s, "result");
    tcase_add_unchecked_fixture(tc, setup, NULL);
    tcase_add_test(tc, from_result);
    tcase_add_test(tc, history_same_format);
    tcase_add_test(tc, history_write);
    return s;
}

/* Removes the files of the tests (and the directory). */
static void remove_tmpdir(void)
{
    DIR *d = opendir(scratch_dir());
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(scratch_path(e->d_name));
    closedir(d);
    rmdir(scratch_dir());
}

int main(void)
{
    int rc = run_suite(selection_suite());
    remove_tmpdir();
    return rc;
}
