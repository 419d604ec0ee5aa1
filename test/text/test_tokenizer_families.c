/* Unit tests of what the Llama 3, Llama 2 / Mistral and SmolLM2 families
 * need on small handmade tokenizer.json files: TemplateProcessing, the
 * SentencePiece-style BPE (Prepend/Replace, Metaspace, byte fallback,
 * unknown tokens), Digits, the (?i:...) group of Llama 3's regex; and each
 * refusal of what is left out. */
#include <bosch/text.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* SentencePiece-style: U+2581 is E2 96 81; é is C3 A9, ü is C3 BC (no
 * <0xBC>: unknown). */
#define SP "\\u2581"
#define SP_VOCAB                                                                            \
    "{\"<unk>\":0,\"<s>\":1,\"</s>\":2,\"<0x0A>\":3,\"<0xC3>\":4,\"<0xA9>\":5,\"" SP         \
    "\":6,\"a\":7,\"b\":8,\"" SP "a\":9,\"ab\":10,\"" SP "ab\":11}"
#define SP_MERGES "[\"" SP " a\",\"a b\",\"" SP "a b\"]"
#define SP_ADDED                                                                            \
    "[{\"id\":0,\"content\":\"<unk>\",\"special\":true,\"normalized\":false},"            \
    "{\"id\":1,\"content\":\"<s>\",\"special\":true,\"normalized\":false},"               \
    "{\"id\":2,\"content\":\"</s>\",\"special\":true,\"normalized\":false}]"
#define SP_NORM                                                                             \
    "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Prepend\",\"prepend\":\"" SP       \
    "\"},{\"type\":\"Replace\",\"pattern\":{\"String\":\" \"},\"content\":\"" SP "\"}]}"
#define SP_DEC                                                                              \
    "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\",\"pattern\":{\"String\":\"" \
    SP "\"},\"content\":\" \"},{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"},"            \
    "{\"type\":\"Strip\",\"content\":\" \",\"start\":1,\"stop\":0}]}"
#define TEMPLATE(tok, id)                                                                   \
    "{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"" tok         \
    "\",\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"pair\":[],"          \
    "\"special_tokens\":{\"" tok "\":{\"id\":\"" tok "\",\"ids\":[" #id "],\"tokens\":[\"" \
    tok "\"]}}}"
#define SP_MODEL_(fallback, fuse, extra)                                                    \
    "{\"type\":\"BPE\",\"vocab\":" SP_VOCAB ",\"merges\":" SP_MERGES                         \
    ",\"byte_fallback\":" fallback ",\"fuse_unk\":" fuse ",\"unk_token\":\"<unk>\"" extra "}"
#define SP_MODEL(extra) SP_MODEL_("true", "true", extra)
#define METASPACE(scheme)                                                                   \
    "{\"type\":\"Metaspace\",\"replacement\":\"" SP "\",\"prepend_scheme\":\"" scheme      \
    "\",\"split\":false}"

/* Byte-level: the alphabet's 'Ġ' is a space. */
#define BL_MODEL                                                                            \
    "{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2,\"\\u0120\":3,\"<|bos|>\":4,"    \
    "\"1\":5,\"2\":6,\"12\":7},\"merges\":[\"a b\",\"1 2\"]}"
#define BL_ADDED "[{\"id\":4,\"content\":\"<|bos|>\",\"special\":true,\"normalized\":false}]"
#define BL_PRE "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}"
#define BL_DEC "{\"type\":\"ByteLevel\"}"

static char *json(const char *model, const char *added, const char *norm, const char *pre,
                  const char *post, const char *dec)
{
    static char buf[16384];
    snprintf(buf, sizeof buf,
             "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":%s,"
             "\"normalizer\":%s,\"pre_tokenizer\":%s,\"post_processor\":%s,"
             "\"decoder\":%s,\"model\":%s}",
             added, norm, pre, post, dec, model);
    return buf;
}

static bosch_tokenizer *load(const char *j)
{
    bosch_tokenizer *t = bosch_tokenizer_from_json(j, strlen(j));
    ck_assert_msg(t, "%s", bosch_text_create_error());
    return t;
}

static void expect(const bosch_tokenizer *t, const char *s, unsigned flags, const int32_t *want,
                   size_t nw)
{
    int32_t *ids;
    size_t n;
    ck_assert_int_eq(bosch_tokenizer_encode(t, s, strlen(s), flags, &ids, &n), BOSCH_OK);
    ck_assert_msg(n == nw, "\"%s\": %zu ids, expected %zu", s, n, nw);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(ids[i] == want[i], "\"%s\": id %zu is %d, expected %d", s, i, ids[i],
                      want[i]);
    bosch_text_free(ids);
}
#define EXPECT(t, s, flags, ...)                                                            \
    do {                                                                                    \
        const int32_t w_[] = {__VA_ARGS__};                                                 \
        expect(t, s, flags, w_, sizeof w_ / sizeof w_[0]);                                  \
    } while (0)

static void expect_decode(const bosch_tokenizer *t, const int32_t *ids, size_t n, unsigned flags,
                          const char *want)
{
    char *s;
    size_t len;
    ck_assert_int_eq(bosch_tokenizer_decode(t, ids, n, flags, &s, &len), BOSCH_OK);
    ck_assert_str_eq(s, want);
    bosch_text_free(s);
}

static void refused(const char *j, const char *what)
{
    bosch_tokenizer *t = bosch_tokenizer_from_json(j, strlen(j));
    ck_assert_msg(!t, "accepted; expected a refusal naming '%s'", what);
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    ck_assert_msg(strstr(bosch_text_create_error(), what), "message '%s' does not name '%s'",
                  bosch_text_create_error(), what);
}

#define ADD BOSCH_TOKENIZE_ADD_SPECIAL

START_TEST(template_adds_bos)
{
    bosch_tokenizer *t = load(json(BL_MODEL, BL_ADDED, "null", BL_PRE,
                                   TEMPLATE("<|bos|>", 4), BL_DEC));
    EXPECT(t, "ab", 0, 2);
    EXPECT(t, "ab", ADD, 4, 2);
    EXPECT(t, "", ADD, 4);
    const int32_t *pre, *post;
    size_t np, nq;
    ck_assert_int_eq(bosch_tokenizer_template(t, &pre, &np, &post, &nq), BOSCH_OK);
    ck_assert_uint_eq(np, 1);
    ck_assert_int_eq(pre[0], 4);
    ck_assert_uint_eq(nq, 0);
    ck_assert_int_eq(bosch_tokenizer_template(t, NULL, &np, &post, &nq), BOSCH_E_INVALID);
    bosch_tokenizer_free(t);
    /* Llama 3's: a Sequence of ByteLevel and the template; and one that
     * adds nothing (as transformers 5 writes for Qwen-style files) */
    t = load(json(BL_MODEL, BL_ADDED, "null", BL_PRE,
                  "{\"type\":\"Sequence\",\"processors\":[{\"type\":\"ByteLevel\"},"
                  TEMPLATE("<|bos|>", 4) "]}", BL_DEC));
    EXPECT(t, "ab", ADD, 4, 2);
    bosch_tokenizer_free(t);
    t = load(json(BL_MODEL, BL_ADDED, "null", BL_PRE,
                  "{\"type\":\"TemplateProcessing\",\"single\":[{\"Sequence\":{\"id\":\"A\","
                  "\"type_id\":0}},{\"SpecialToken\":{\"id\":\"<|bos|>\",\"type_id\":0}}],"
                  "\"special_tokens\":{\"<|bos|>\":{\"id\":\"<|bos|>\",\"ids\":[4]}}}", BL_DEC));
    EXPECT(t, "ab", ADD, 2, 4); /* after the text: an EOS */
    bosch_tokenizer_free(t);
    t = load(json(BL_MODEL, BL_ADDED, "null", BL_PRE,
                  "{\"type\":\"TemplateProcessing\",\"single\":[{\"Sequence\":{\"id\":\"A\","
                  "\"type_id\":0}}],\"pair\":[],\"special_tokens\":{}}", BL_DEC));
    EXPECT(t, "ab", ADD, 2);
    bosch_tokenizer_free(t);
}
END_TEST

START_TEST(template_refusals)
{
    const char *pre = "{\"type\":\"TemplateProcessing\",\"single\":";
    char p[1024];
#define TP(single, specials, what)                                                          \
    (snprintf(p, sizeof p, "%s%s,\"special_tokens\":%s}", pre, single, specials),           \
     refused(json(BL_MODEL, BL_ADDED, "null", BL_PRE, p, BL_DEC), what))
    TP("[]", "{}", "post_processor.single: the sequence \"A\" is missing");
    TP("{}", "{}", "post_processor.single: expected array");
    TP("[{\"Sequence\":{\"id\":\"B\"}}]", "{}", "single[0]: the single template takes the sequence");
    TP("[{\"Sequence\":{\"id\":\"A\"}},{\"Sequence\":{\"id\":\"A\"}}]", "{}",
       "single[1]: the single template takes the sequence \"A\" once");
    TP("[{\"Other\":{\"id\":\"A\"}}]", "{}", "single[0]: expected {\"SpecialToken\"");
    TP("[{\"SpecialToken\":{\"id\":\"<|bos|>\"}},{\"Sequence\":{\"id\":\"A\"}}]", "{}",
       "single[0]: \"<|bos|>\" is not in special_tokens");
    TP("[{\"SpecialToken\":{\"id\":\"<|bos|>\"}},{\"Sequence\":{\"id\":\"A\"}}]",
       "{\"<|bos|>\":{\"ids\":[4,4]}}", "special_tokens[\"<|bos|>\"].ids must hold one id");
    TP("[{\"SpecialToken\":{\"id\":\"<|bos|>\"}},{\"Sequence\":{\"id\":\"A\"}}]",
       "{\"<|bos|>\":{\"ids\":[0]}}", "ids is not the id of the token \"<|bos|>\"");
    TP("[{\"SpecialToken\":{\"id\":\"<none>\"}},{\"Sequence\":{\"id\":\"A\"}}]",
       "{\"<none>\":{\"ids\":[0]}}", "ids is not the id of the token \"<none>\"");
#undef TP
    refused(json(BL_MODEL, BL_ADDED, "null", BL_PRE, "{\"type\":\"RobertaProcessing\"}", BL_DEC),
            "post_processor.type: \"RobertaProcessing\" is not supported");
    refused(json(BL_MODEL, BL_ADDED, "null", BL_PRE,
                 "{\"type\":\"Sequence\",\"processors\":[" TEMPLATE("<|bos|>", 4) ","
                 TEMPLATE("<|bos|>", 4) "]}", BL_DEC),
            "processors[1]: a second TemplateProcessing is not supported");
    refused(json(BL_MODEL, BL_ADDED, "null", BL_PRE,
                 "{\"type\":\"Sequence\",\"processors\":[{\"type\":\"Sequence\","
                 "\"processors\":[]}]}", BL_DEC),
            "post_processor.processors[0].type: \"Sequence\" is not supported");
    refused(json(BL_MODEL, BL_ADDED, "null", BL_PRE,
                 "{\"type\":\"TemplateProcessing\",\"single\":[{\"Sequence\":{\"id\":\"A\"}}],"
                 "\"pair\":{}}", BL_DEC), "post_processor.pair: expected array");
}
END_TEST

START_TEST(sentencepiece_llama2)
{
    bosch_tokenizer *t = load(json(SP_MODEL(""), SP_ADDED, SP_NORM, "null",
                                   TEMPLATE("<s>", 1), SP_DEC));
    EXPECT(t, "ab", 0, 11);
    EXPECT(t, "ab", ADD, 1, 11);
    EXPECT(t, "a b", 0, 9, 6, 8);
    EXPECT(t, "\xc3\xa9", 0, 6, 4, 5);      /* é: byte fallback */
    EXPECT(t, "\n", 0, 6, 3);
    EXPECT(t, "\xc3\xbc\xc3\xbc", 0, 6, 0); /* üü: no <0xBC>, one fused <unk> */
    EXPECT(t, "\xc3\xbc" "a\xc3\xbc", 0, 6, 0, 7, 0);
    EXPECT(t, "x<s>y", 0, 6, 0, 1, 6, 0); /* the prefix of each section */
    EXPECT(t, "x<s>y", BOSCH_TOKENIZE_NO_SPECIAL, 6, 0);
    EXPECT(t, "", ADD, 1);
    int32_t a[] = {1, 11}, b[] = {6, 4, 5}, c[] = {9, 6, 8, 2};
    expect_decode(t, a, 2, 0, "<s> ab");
    expect_decode(t, a, 2, BOSCH_DECODE_SKIP_SPECIAL, "ab");
    expect_decode(t, b, 3, 0, "\xc3\xa9");
    expect_decode(t, c, 4, BOSCH_DECODE_SKIP_SPECIAL, "a b");
    ck_assert(!bosch_tokenizer_is_ordinary(t, 1));
    ck_assert(bosch_tokenizer_is_special(t, 1));
    bosch_tokenizer_free(t);
    /* without fuse_unk each unknown is one <unk>; without byte fallback too */
    t = load(json(SP_MODEL_("false", "false", ""), SP_ADDED, SP_NORM,
                  "null", "null", SP_DEC));
    EXPECT(t, "\xc3\xbc\xc3\xbc", 0, 6, 0, 0);
    EXPECT(t, "\xc3\xa9", 0, 6, 0);
    bosch_tokenizer_free(t);
}
END_TEST

START_TEST(sentencepiece_metaspace)
{
    const char *dec = "{\"type\":\"Metaspace\",\"replacement\":\"" SP "\",\"prepend_scheme\":"
                      "\"first\",\"split\":false}";
    bosch_tokenizer *t = load(json(SP_MODEL(""), SP_ADDED, "null", METASPACE("first"), "null",
                                   dec));
    EXPECT(t, "a b", 0, 9, 6, 8);
    EXPECT(t, "<s>a b", 0, 1, 7, 6, 8); /* not the first section: no prefix */
    EXPECT(t, " ab", 0, 11);
    int32_t a[] = {9, 6, 8};
    expect_decode(t, a, 3, 0, "a b");
    bosch_tokenizer_free(t);
    t = load(json(SP_MODEL(""), SP_ADDED, "null", METASPACE("always"), "null", dec));
    EXPECT(t, "<s>a b", 0, 1, 9, 6, 8);
    bosch_tokenizer_free(t);
    t = load(json(SP_MODEL(""), SP_ADDED, "null", METASPACE("never"), "null", dec));
    EXPECT(t, "a b", 0, 7, 6, 8);
    bosch_tokenizer_free(t);
    /* the older add_prefix_space: true reads as "always" */
    t = load(json(SP_MODEL(""), SP_ADDED, "null",
                  "{\"type\":\"Metaspace\",\"replacement\":\"" SP "\",\"add_prefix_space\":true}",
                  "null", dec));
    EXPECT(t, "<s>a", 0, 1, 9);
    bosch_tokenizer_free(t);
}
END_TEST

START_TEST(sentencepiece_refusals)
{
    const char *m = SP_MODEL("");
    refused(json(m, SP_ADDED, "{\"type\":\"Replace\",\"pattern\":{\"Regex\":\" \"},\"content\":\"x\"}",
                 "null", "null", SP_DEC),
            "normalizer.pattern.Regex: a Replace by regex is not supported");
    refused(json(m, SP_ADDED, "{\"type\":\"Prepend\"}", "null", "null", SP_DEC),
            "normalizer.prepend: missing");
    refused(json(m, SP_ADDED, "{\"type\":\"Replace\",\"pattern\":{\"String\":\"\"},\"content\":\"x\"}",
                 "null", "null", SP_DEC), "normalizer.pattern.String: a string of 1..63 bytes");
    refused(json(m, SP_ADDED, "null", "{\"type\":\"Metaspace\",\"split\":true}", "null", SP_DEC),
            "pre_tokenizer.split: true is not supported");
    refused(json(m, SP_ADDED, "null", "{\"type\":\"Metaspace\",\"replacement\":\"_\"}", "null",
                 SP_DEC), "pre_tokenizer.replacement: only");
    refused(json(m, SP_ADDED, "null", "{\"type\":\"Metaspace\",\"prepend_scheme\":\"sometimes\"}",
                 "null", SP_DEC), "prepend_scheme: \"sometimes\" is not supported");
    refused(json(m, SP_ADDED, "null", "{\"type\":\"Metaspace\",\"add_prefix_space\":false}",
                 "null", SP_DEC), "add_prefix_space: false without prepend_scheme");
    refused(json(m, SP_ADDED, "null", "{\"type\":\"Sequence\",\"pretokenizers\":["
                 METASPACE("first") ",{\"type\":\"ByteLevel\"}]}", "null", BL_DEC),
            "Metaspace does not go with ByteLevel");
    refused(json(SP_MODEL(",\"ignore_merges\":true"), SP_ADDED, SP_NORM, "null", "null", SP_DEC),
            "model.ignore_merges: true is supported with ByteLevel only");
    refused(json(m, SP_ADDED, SP_NORM, "null", "null", "null"),
            "decoder: missing (Metaspace or Sequence needed)");
    refused(json(m, SP_ADDED, SP_NORM, "null", "null",
                 "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Fuse\"}]}"),
            "decoder.decoders: a Replace of");
    refused(json(m, SP_ADDED, SP_NORM, "null", "null",
                 "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Strip\",\"content\":\" \","
                 "\"start\":1,\"stop\":1}]}"), "decoder.decoders[0]: only Strip");
    refused(json(m, SP_ADDED, SP_NORM, "null", "null",
                 "{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"CTC\"}]}"),
            "decoder.decoders[0].type: decoder \"CTC\" is not supported here");
    refused(json(m, SP_ADDED, SP_NORM, "null", "null", "{\"type\":\"WordPiece\"}"),
            "decoder.type: \"WordPiece\" is not supported without ByteLevel");
}
END_TEST

/* (?i:...) folds ASCII only, as the reference's rewrite does: "'S" is a
 * contraction, "'\u017f" (long s) is not. */
START_TEST(regex_ascii_fold_and_digits)
{
    const char *model = "{\"type\":\"BPE\",\"vocab\":{\"'\":0,\"s\":1,\"S\":2,\"\\u00c5\":3,"
                        "\"\\u00bf\":4,\"'s\":5,\"'S\":6,\"'\\u00c5\":7},"
                        "\"merges\":[\"' s\",\"' S\",\"' \\u00c5\"]}";
    const char *pre = "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":"
                      "{\"Regex\":\"(?i:'s)|\\\\p{L}+\"},\"behavior\":\"Isolated\"},"
                      "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":false}]}";
    bosch_tokenizer *t = load(json(model, "[]", "null", pre, "null", BL_DEC));
    EXPECT(t, "'s", 0, 5);
    EXPECT(t, "'S", 0, 6);
    EXPECT(t, "'\xc5\xbf", 0, 0, 3, 4);
    bosch_tokenizer_free(t);
    const char *bad[] = {"(?x)a", "(?i:[a])", "(?s:a)"};
    const char *why[] = {"inline options other than (?i:...)", "a character class inside (?i:",
                         "inline options other than (?i:...)"};
    for (int i = 0; i < 3; i++) {
        char p[512];
        snprintf(p, sizeof p, "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\","
                 "\"pattern\":{\"Regex\":\"%s\"},\"behavior\":\"Isolated\"},{\"type\":"
                 "\"ByteLevel\"}]}", bad[i]);
        refused(json(model, "[]", "null", p, "null", BL_DEC), why[i]);
    }
    /* Digits before GPT-2's ByteLevel (SmolLM2's layout) */
    const char *dig = "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\","
                      "\"individual_digits\":%s}," BL_PRE "]}";
    char p[512];
    snprintf(p, sizeof p, dig, "true");
    t = load(json(BL_MODEL, BL_ADDED, "null", p, "null", BL_DEC));
    EXPECT(t, "12ab", 0, 5, 6, 2);
    bosch_tokenizer_free(t);
    snprintf(p, sizeof p, dig, "false");
    t = load(json(BL_MODEL, BL_ADDED, "null", p, "null", BL_DEC));
    EXPECT(t, "12ab", 0, 7, 2);
    bosch_tokenizer_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tokenizer-families");
    TCase *tc = tcase_create("families");
    tcase_add_test(tc, template_adds_bos);
    tcase_add_test(tc, template_refusals);
    tcase_add_test(tc, sentencepiece_llama2);
    tcase_add_test(tc, sentencepiece_metaspace);
    tcase_add_test(tc, sentencepiece_refusals);
    tcase_add_test(tc, regex_ascii_fold_and_digits);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
