/* Unit tests of the tokenizer on small handmade tokenizer.json files, and of
 * every kind of malformed file the loader refuses (BOSCH_E_INVALID and a
 * message naming the problem). */
#include <bosch/text.h>

#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* é is C3 A9: the byte-level characters 'Ã' (U+00C3) and '©' (U+00A9). */
#define MODEL_OK                                                                          \
    "{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"c\":2,\"\\u0120\":3,\"ab\":4,"        \
    "\"abc\":5,\"\\u0120a\":6,\"1\":7,\"\\u00c3\":8,\"\\u00a9\":9},"                      \
    "\"merges\":[\"a b\",\"ab c\",[\"\\u0120\",\"a\"]]}"
#define ADDED_OK                                                                          \
    "[{\"id\":10,\"content\":\"<|end|>\",\"special\":true,\"lstrip\":false,"              \
    "\"rstrip\":false,\"single_word\":false,\"normalized\":false},"                       \
    "{\"id\":11,\"content\":\"<x>\",\"special\":false,\"normalized\":false,\"rstrip\":true}]"
#define PRE_OK                                                                            \
    "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":"          \
    "{\"Regex\":\" ?\\\\p{L}+|\\\\p{N}|\\\\s+\"},\"behavior\":\"Isolated\",\"invert\":false}," \
    "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"trim_offsets\":false,"          \
    "\"use_regex\":false}]}"

/* A tokenizer.json from its parts (each a JSON value). */
static char *make_json(const char *model, const char *added, const char *norm, const char *pre,
                       const char *dec)
{
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":%s,"
             "\"normalizer\":%s,\"pre_tokenizer\":%s,\"post_processor\":null,"
             "\"decoder\":%s,\"model\":%s}",
             added, norm, pre, dec, model);
    return buf;
}

static bosch_tokenizer *good(void)
{
    const char *j = make_json(MODEL_OK, ADDED_OK, "{\"type\":\"NFC\"}", PRE_OK,
                              "{\"type\":\"ByteLevel\"}");
    bosch_tokenizer *t = bosch_tokenizer_from_json(j, strlen(j));
    ck_assert_msg(t, "%s", bosch_text_create_error());
    return t;
}

/* Encodes s and checks the ids. */
static void expect_ids(const bosch_tokenizer *t, const char *s, size_t len, unsigned flags,
                       const int32_t *want, size_t nw)
{
    int32_t *ids = NULL;
    size_t n = 99;
    ck_assert_int_eq(bosch_tokenizer_encode(t, s, len, flags, &ids, &n), BOSCH_OK);
    ck_assert_ptr_nonnull(ids);
    ck_assert_msg(n == nw, "'%s': %zu ids, expected %zu", s, n, nw);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(ids[i] == want[i], "'%s': id %zu is %d, expected %d", s, i, ids[i], want[i]);
    bosch_text_free(ids);
}
#define IDS(t, s, flags, ...)                                                            \
    do {                                                                                 \
        const int32_t w_[] = {__VA_ARGS__};                                              \
        expect_ids(t, s, strlen(s), flags, w_, sizeof w_ / sizeof w_[0]);               \
    } while (0)

START_TEST(encode_merges_by_rank)
{
    bosch_tokenizer *t = good();
    IDS(t, "abc", 0, 5);
    IDS(t, "ab", 0, 4);
    IDS(t, "ba", 0, 1, 0);
    /* "a b" (rank 0) beats "Ġ a" (rank 2): Ġ ab c -> Ġ abc */
    IDS(t, " abc", 0, 3, 5);
    IDS(t, " a", 0, 6);
    IDS(t, "a1b", 0, 0, 7, 1);
    /* NFD input is normalized to NFC: e + U+0301 -> é -> C3 A9 */
    IDS(t, "e\xcc\x81", 0, 8, 9);
    bosch_tokenizer_free(t);
}
END_TEST

START_TEST(encode_long_text)
{
    /* long input goes through the per-call word cache: same ids */
    bosch_tokenizer *t = good();
    char s[4 * 600 + 1];
    int32_t want[2 * 600];
    for (int i = 0; i < 600; i++) {
        memcpy(s + 4 * i, i % 2 ? " abc" : " ab ", 4);
        if (i % 2) { /* the second Ġ of "  ", then abc */
            want[2 * i] = 3;
            want[2 * i + 1] = 5;
        } else {
            want[2 * i] = 3; /* " ab": Ġ a b -> Ġ ab (no merge makes Ġab) */
            want[2 * i + 1] = 4;
        }
    }
    s[sizeof s - 1] = '\0';
    int32_t *ids;
    size_t n;
    ck_assert_int_eq(bosch_tokenizer_encode(t, s, strlen(s), 0, &ids, &n), BOSCH_OK);
    /* " ab" + " abc" splits as " ab", "  ", "abc": Ġ ab, Ġ Ġ, abc, i.e. the
     * pairs above with one more Ġ between them */
    size_t k = 0;
    for (int i = 0; i < 600; i++) {
        ck_assert_uint_lt(k + 1, n + 1);
        ck_assert_int_eq(ids[k++], want[2 * i]);
        ck_assert_int_eq(ids[k++], want[2 * i + 1]);
        if (i % 2 == 0 && i + 1 < 600)
            ck_assert_int_eq(ids[k++], 3);
    }
    ck_assert_uint_eq(k, n);
    bosch_text_free(ids);
    bosch_tokenizer_free(t);
}
END_TEST

START_TEST(encode_added_tokens)
{
    bosch_tokenizer *t = good();
    IDS(t, "a<|end|>b", 0, 0, 10, 1);
    IDS(t, "<|end|><|end|>", 0, 10, 10);
    /* rstrip: the whitespace after <x> goes */
    IDS(t, "<x>   ab", 0, 11, 4);
    /* as plain text: '<', '|', ... are not in the vocabulary and vanish */
    int32_t *ids;
    size_t n;
    ck_assert_int_eq(bosch_tokenizer_encode(t, "a<|end|>b", 9, BOSCH_TOKENIZE_NO_SPECIAL, &ids, &n),
                     BOSCH_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_ne(ids[i], 10);
    bosch_text_free(ids);
    bosch_tokenizer_free(t);
}
END_TEST

START_TEST(encode_edge_cases)
{
    bosch_tokenizer *t = good();
    int32_t *ids = NULL;
    size_t n = 5;
    ck_assert_int_eq(bosch_tokenizer_encode(t, NULL, 0, 0, &ids, &n), BOSCH_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_nonnull(ids);
    bosch_text_free(ids);
    ck_assert_int_eq(bosch_tokenizer_encode(t, NULL, 3, 0, &ids, &n), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_tokenizer_encode(NULL, "a", 1, 0, &ids, &n), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_tokenizer_encode(t, "a", 1, 0, NULL, &n), BOSCH_E_INVALID);
    /* invalid UTF-8 reads as U+FFFD (EF BF BD: not in this vocabulary), the
     * valid rest as it is */
    IDS(t, "a\xff" "b", 0, 0, 1);
    expect_ids(t, "\xc3", 1, 0, NULL, 0); /* a lone lead byte: U+FFFD, not é */
    bosch_tokenizer_free(t);
}
END_TEST

START_TEST(decode_and_lookups)
{
    bosch_tokenizer *t = good();
    const int32_t ids[] = {5, 10, 3, 0, 8, 9};
    char *s;
    size_t len, n;
    ck_assert_int_eq(bosch_tokenizer_decode(t, ids, 6, 0, &s, &len), BOSCH_OK);
    ck_assert_str_eq(s, "abc<|end|> a\xc3\xa9");
    ck_assert_uint_eq(len, strlen(s));
    bosch_text_free(s);
    ck_assert_int_eq(bosch_tokenizer_decode(t, ids, 6, BOSCH_DECODE_SKIP_SPECIAL, &s, &len),
                     BOSCH_OK);
    ck_assert_str_eq(s, "abc a\xc3\xa9");
    bosch_text_free(s);
    /* a token cut inside a character */
    ck_assert_int_eq(bosch_tokenizer_decode(t, ids + 4, 1, 0, &s, &len), BOSCH_OK);
    ck_assert_str_eq(s, "\xef\xbf\xbd");
    bosch_text_free(s);
    const int32_t bad[] = {0, 12};
    ck_assert_int_eq(bosch_tokenizer_decode(t, bad, 2, 0, &s, &len), BOSCH_E_INVALID);
    const int32_t neg[] = {-1};
    ck_assert_int_eq(bosch_tokenizer_decode(t, neg, 1, 0, &s, &len), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_tokenizer_decode(t, NULL, 0, 0, &s, &len), BOSCH_OK);
    ck_assert_str_eq(s, "");
    bosch_text_free(s);

    ck_assert_uint_eq(bosch_tokenizer_vocab_size(t), 12);
    ck_assert_int_eq(bosch_tokenizer_token_id(t, "abc"), 5);
    ck_assert_int_eq(bosch_tokenizer_token_id(t, "<|end|>"), 10);
    ck_assert_int_eq(bosch_tokenizer_token_id(t, "zzz"), -1);
    ck_assert_str_eq(bosch_tokenizer_token(t, 3), "\xc4\xa0");
    ck_assert_ptr_null(bosch_tokenizer_token(t, 12));
    ck_assert_ptr_null(bosch_tokenizer_token(t, -1));
    ck_assert(bosch_tokenizer_is_special(t, 10));
    ck_assert(!bosch_tokenizer_is_special(t, 11));
    ck_assert(!bosch_tokenizer_is_special(t, 5));
    ck_assert(bosch_tokenizer_is_ordinary(t, 5));
    ck_assert(!bosch_tokenizer_is_ordinary(t, 10));
    ck_assert(!bosch_tokenizer_is_ordinary(t, 11));
    ck_assert(!bosch_tokenizer_is_ordinary(t, 99));
    /* stop ids: the special token, then the rows past the vocabulary */
    int32_t *stop = NULL;
    ck_assert_int_eq(bosch_tokenizer_stop_ids(t, 14, &stop, &n), BOSCH_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(stop[0], 10);
    ck_assert_int_eq(stop[1], 12);
    ck_assert_int_eq(stop[2], 13);
    bosch_text_free(stop);
    ck_assert_int_eq(bosch_tokenizer_stop_ids(t, 10, &stop, &n), BOSCH_OK);
    ck_assert_uint_eq(n, 0);
    ck_assert_ptr_null(stop);
    ck_assert_int_eq(bosch_tokenizer_stop_ids(NULL, 10, &stop, &n), BOSCH_E_INVALID);
    ck_assert_int_eq(bosch_tokenizer_stop_ids(t, 10, NULL, &n), BOSCH_E_INVALID);
    bosch_tokenizer_free(t);
}
END_TEST

START_TEST(normalized_added_token)
{
    /* content "e" + U+0301 (NFD), normalized: matched as NFC é in the
     * normalized text, so NFD and NFC input both give its id */
    const char *j = make_json(MODEL_OK, "[{\"id\":12,\"content\":\"e\\u0301\","
                              "\"normalized\":true}]", "{\"type\":\"NFC\"}", PRE_OK,
                              "{\"type\":\"ByteLevel\"}");
    bosch_tokenizer *t = bosch_tokenizer_from_json(j, strlen(j));
    ck_assert_msg(t, "%s", bosch_text_create_error());
    IDS(t, "ae\xcc\x81", 0, 0, 12);
    IDS(t, "a\xc3\xa9", 0, 0, 12);
    bosch_tokenizer_free(t);
}
END_TEST

START_TEST(gpt2_byte_level_regex)
{
    /* ByteLevel with use_regex (GPT-2) and add_prefix_space, no Split */
    const char *j = make_json(MODEL_OK, "[]", "null",
                              "{\"type\":\"ByteLevel\",\"add_prefix_space\":true,"
                              "\"use_regex\":true}", "{\"type\":\"ByteLevel\"}");
    bosch_tokenizer *t = bosch_tokenizer_from_json(j, strlen(j));
    ck_assert_msg(t, "%s", bosch_text_create_error());
    IDS(t, "abc", 0, 3, 5); /* the prefix space */
    IDS(t, "ab abc", 0, 3, 4, 3, 5);
    /* long enough that the prefix space moves the work buffer */
    char s[2 + 3 * 999 + 1];
    strcpy(s, "ab");
    for (int i = 0; i < 999; i++)
        strcat(s, " ab");
    int32_t *ids;
    size_t n;
    ck_assert_int_eq(bosch_tokenizer_encode(t, s, strlen(s), 0, &ids, &n), BOSCH_OK);
    ck_assert_uint_eq(n, 2000);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(ids[i], i % 2 ? 4 : 3);
    bosch_text_free(ids);
    bosch_tokenizer_free(t);
}
END_TEST

static void *encode_many(void *arg)
{
    const bosch_tokenizer *t = arg;
    for (int i = 0; i < 2000; i++) {
        int32_t *ids;
        size_t n;
        if (bosch_tokenizer_encode(t, " abc<|end|>ba e\xcc\x81", 16, 0, &ids, &n) != BOSCH_OK ||
            n != 6 || ids[0] != 3 || ids[1] != 5 || ids[2] != 10) {
            bosch_text_free(ids);
            return (void *)1;
        }
        bosch_text_free(ids);
    }
    return NULL;
}

START_TEST(threads_share_a_tokenizer)
{
    bosch_tokenizer *t = good();
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, encode_many, t), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        ck_assert_ptr_null(r);
    }
    bosch_tokenizer_free(t);
}
END_TEST

/* Loading fails with BOSCH_E_INVALID and a message that contains `what`. */
static void refused(const char *json, size_t len, const char *what)
{
    bosch_tokenizer *t = bosch_tokenizer_from_json(json, len);
    ck_assert_msg(!t, "accepted; expected a refusal naming '%s'", what);
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    ck_assert_msg(strstr(bosch_text_create_error(), what), "message '%s' does not name '%s'",
                  bosch_text_create_error(), what);
    ck_assert_msg(!strncmp(bosch_text_create_error(), "bosch_tokenizer_from_json: ", 27), "%s",
                  bosch_text_create_error());
}
#define REFUSED_MODEL(model, what)                                                       \
    do {                                                                                 \
        const char *j_ = make_json(model, ADDED_OK, "null", PRE_OK, "{\"type\":\"ByteLevel\"}"); \
        refused(j_, strlen(j_), what);                                                   \
    } while (0)

START_TEST(malformed_json)
{
    const char *j = make_json(MODEL_OK, ADDED_OK, "null", PRE_OK, "{\"type\":\"ByteLevel\"}");
    size_t n = strlen(j);
    refused(j, n / 2, "truncated JSON");
    refused(j, 0, "truncated JSON");
    refused("{\"model\": nope}", 15, "malformed JSON at byte");
    refused("{} {}", 5, "data after the document");
    refused("[1,2]", 5, "(root): expected object");
    char deep[400];
    memset(deep, '[', 200);
    memset(deep + 200, ']', 200);
    refused(deep, sizeof deep, "malformed JSON");
    /* a huge file is refused before it is read */
    refused("{}", (size_t)1 << 40, "bytes of JSON (at most");
}
END_TEST

START_TEST(malformed_model)
{
    REFUSED_MODEL("{\"type\":\"WordPiece\",\"vocab\":{}}", "model.type: \"WordPiece\" is not supported");
    REFUSED_MODEL("{\"type\":\"Unigram\",\"vocab\":[]}", "\"Unigram\" is not supported");
    REFUSED_MODEL("{\"type\":7}", "model.type: expected string");
    REFUSED_MODEL("[]", "model: expected object");
    REFUSED_MODEL("{\"type\":\"BPE\",\"merges\":[]}", "model.vocab: missing");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":[\"a\"],\"merges\":[]}", "model.vocab: expected object");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":\"0\"},\"merges\":[]}",
                  "model.vocab[\"a\"]: id must be an integer");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":1.5},\"merges\":[]}", "id must be an integer");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":-1},\"merges\":[]}", "id -1 out of range");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":99999999999},\"merges\":[]}", "out of range");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":0},\"merges\":[]}",
                  "model.vocab[\"b\"]: id 0 is also the id of \"a\"");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":{}}", "model.merges: expected array");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b\",5]}",
                  "model.merges[1]: expected a string");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[[\"a\"]]}",
                  "model.merges[0]: expected a string");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"ab\"]}",
                  "model.merges[0]: expected \"A B\"");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[\"a b\",\"a z\"]}",
                  "model.merges[1]: \"z\" is not in model.vocab");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1},\"merges\":[\"a b\"]}",
                  "model.merges[0]: the merged token \"ab\" is not in model.vocab");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"byte_fallback\":true}",
                  "model.byte_fallback: true is not supported with ByteLevel");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"dropout\":0.1}", "model.dropout");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"unk_token\":\"a\"}",
                  "model.unk_token: not supported with ByteLevel");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"unk_token\":\"<unk>\"}",
                  "model.unk_token: \"<unk>\" is not in model.vocab");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"ignore_merges\":1}",
                  "model.ignore_merges: expected boolean");
}
END_TEST

START_TEST(huge_parts)
{
    /* a merges list far longer than the vocabulary could use */
    size_t n = 2000;
    char *m = malloc(n * 6 + 256);
    ck_assert_ptr_nonnull(m);
    strcpy(m, "{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"ab\":2},\"merges\":[");
    for (size_t i = 0; i < n; i++)
        strcat(m, i ? ",\"a b\"" : "\"a b\"");
    strcat(m, "]}");
    const char *pre = PRE_OK;
    char *j = malloc(strlen(m) + 1024);
    ck_assert_ptr_nonnull(j);
    sprintf(j, "{\"added_tokens\":[],\"normalizer\":null,\"pre_tokenizer\":%s,"
               "\"decoder\":{\"type\":\"ByteLevel\"},\"model\":%s}", pre, m);
    refused(j, strlen(j), "model.merges: 2000 merges for 3 vocabulary tokens");
    /* a token longer than any real one */
    char *big = malloc(10000);
    ck_assert_ptr_nonnull(big);
    strcpy(big, "{\"type\":\"BPE\",\"vocab\":{\"");
    size_t l = strlen(big);
    memset(big + l, 'x', 5000);
    strcpy(big + l + 5000, "\":0},\"merges\":[]}");
    sprintf(j, "{\"added_tokens\":[],\"pre_tokenizer\":%s,\"decoder\":{\"type\":\"ByteLevel\"},"
               "\"model\":", pre);
    char *j2 = malloc(strlen(j) + strlen(big) + 2);
    ck_assert_ptr_nonnull(j2);
    sprintf(j2, "%s%s}", j, big);
    refused(j2, strlen(j2), "token of 5000 bytes");
    free(j2);
    free(big);
    free(j);
    free(m);
}
END_TEST

START_TEST(malformed_parts)
{
    const char *bl = "{\"type\":\"ByteLevel\"}";
    const char *j;
#define R(json, what) (j = (json), refused(j, strlen(j), what))
    R(make_json(MODEL_OK, "{}", "null", PRE_OK, bl), "added_tokens: expected array");
    R(make_json(MODEL_OK, "[{\"id\":\"10\",\"content\":\"<s>\"}]", "null", PRE_OK, bl),
      "added_tokens[0].id: id must be an integer");
    R(make_json(MODEL_OK, "[{\"id\":12,\"content\":5}]", "null", PRE_OK, bl),
      "added_tokens[0].content: expected string");
    R(make_json(MODEL_OK, "[{\"id\":1,\"content\":\"<s>\"}]", "null", PRE_OK, bl),
      "added_tokens[0].id: id 1 is already \"b\"");
    R(make_json(MODEL_OK, "[{\"id\":12,\"content\":\"<s>\"},{\"id\":13,\"content\":\"<s>\"}]",
                "null", PRE_OK, bl), "added_tokens[1].content: \"<s>\" is added twice");
    R(make_json(MODEL_OK, "[{\"id\":12,\"content\":\"<s>\",\"special\":\"yes\"}]", "null", PRE_OK, bl),
      "added_tokens[0].special: expected boolean");
    R(make_json(MODEL_OK, ADDED_OK, "{\"type\":\"Lowercase\"}", PRE_OK, bl),
      "normalizer.type: normalizer \"Lowercase\" is not supported");
    R(make_json(MODEL_OK, ADDED_OK, "{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"NFC\"},"
                "{\"type\":\"Strip\"}]}", PRE_OK, bl),
      "normalizer.normalizers[1].type: normalizer \"Strip\"");
    R(make_json(MODEL_OK, ADDED_OK, "null", "{\"type\":\"Whitespace\"}", bl),
      "pre_tokenizer.type: pre-tokenizer \"Whitespace\" is not supported");
    R(make_json(MODEL_OK, ADDED_OK, "null", "{\"type\":\"Sequence\",\"pretokenizers\":["
                "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a\"},\"behavior\":"
                "\"MergedWithPrevious\"},{\"type\":\"ByteLevel\"}]}", bl),
      "pre_tokenizer.pretokenizers[0].behavior: \"MergedWithPrevious\" is not supported");
    R(make_json(MODEL_OK, ADDED_OK, "null", "{\"type\":\"Sequence\",\"pretokenizers\":["
                "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(a\"},\"behavior\":\"Isolated\"},"
                "{\"type\":\"ByteLevel\"}]}", bl),
      "pre_tokenizer.pretokenizers[0].pattern.Regex: regex does not compile");
    R(make_json(MODEL_OK, ADDED_OK, "null", "{\"type\":\"Sequence\",\"pretokenizers\":["
                "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a\"},\"behavior\":\"Isolated\","
                "\"invert\":true},{\"type\":\"ByteLevel\"}]}", bl),
      "pretokenizers[0].invert: true is not supported");
    R(make_json(MODEL_OK, ADDED_OK, "null", "{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a\"},"
                "\"behavior\":\"Isolated\"}", bl),
      "pre_tokenizer: without ByteLevel (a SentencePiece-style BPE) only null or Metaspace");
    R(make_json(MODEL_OK, ADDED_OK, "null", "{\"type\":\"Sequence\",\"pretokenizers\":["
                "{\"type\":\"ByteLevel\"},{\"type\":\"Split\",\"pattern\":{\"Regex\":\"a\"},"
                "\"behavior\":\"Isolated\"}]}", bl), "pre_tokenizer: must end with ByteLevel");
    /* no pre-tokenizer: SentencePiece-style, which GPT-2's decoder does not fit */
    R(make_json(MODEL_OK, ADDED_OK, "null", "null", bl),
      "decoder.type: \"ByteLevel\" is not supported without ByteLevel");
    R(make_json(MODEL_OK, ADDED_OK, "null", PRE_OK, "{\"type\":\"WordPiece\"}"),
      "decoder.type: \"WordPiece\" is not supported");
    R(make_json(MODEL_OK, ADDED_OK, "null", PRE_OK, "null"), "decoder: missing");
    R(make_json(MODEL_OK, ADDED_OK, "null", PRE_OK, "{\"kind\":1}"), "decoder.type: expected string");
#undef R
}
END_TEST

/* A key given twice, which json-c would read as its last value: a vocab
 * entry (also when the two spellings decode alike), an added token's
 * field, a top-level part. The file's name is in the message. */
START_TEST(duplicate_keys)
{
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"b\":1,\"a\":2},\"merges\":[]}",
                  "bosch_tokenizer_from_json: line 1: key \"a\" is given twice (give each key once)");
    REFUSED_MODEL("{\"type\":\"BPE\",\"vocab\":{\"a\":0,\"\\u0061\":1},\"merges\":[]}",
                  "key \"a\" is given twice");
    const char *added = "[{\"id\":10,\"content\":\"<|end|>\",\"special\":true,"
                        "\"content\":\"<|x|>\",\"normalized\":false}]";
    const char *j = make_json(MODEL_OK, added, "null", PRE_OK, "{\"type\":\"ByteLevel\"}");
    refused(j, strlen(j), "key \"content\" is given twice");
    char twice[8192];
    j = make_json(MODEL_OK, ADDED_OK, "null", PRE_OK, "{\"type\":\"ByteLevel\"}");
    snprintf(twice, sizeof twice, "%.*s,\n\"decoder\":null}", (int)strlen(j) - 1, j);
    refused(twice, strlen(twice), "line 2: key \"decoder\" is given twice");

    char path[] = "/tmp/bosch-tok-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(twice, f);
    fclose(f);
    ck_assert_ptr_null(bosch_tokenizer_open(path));
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    char want[256];
    snprintf(want, sizeof want, "bosch_tokenizer_open: %s: line 2: key \"decoder\" is given twice",
             path);
    ck_assert_msg(strstr(bosch_text_create_error(), want), "%s", bosch_text_create_error());
    remove(path);
}
END_TEST

START_TEST(open_errors)
{
    ck_assert_ptr_null(bosch_tokenizer_open("/nonexistent/tokenizer.json"));
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_IO);
    ck_assert(strstr(bosch_text_create_error(), "bosch_tokenizer_open: /nonexistent/tokenizer.json"));
    ck_assert_ptr_null(bosch_tokenizer_open(NULL));
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    char path[] = "/tmp/bosch-tok-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"model\":{\"type\":\"WordPiece\"}}", f);
    fclose(f);
    ck_assert_ptr_null(bosch_tokenizer_open(path));
    ck_assert_int_eq(bosch_text_create_status(), BOSCH_E_INVALID);
    ck_assert(strstr(bosch_text_create_error(), "bosch_tokenizer_open: model.type"));
    remove(path);
    bosch_tokenizer_free(NULL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tokenizer");
    TCase *tc = tcase_create("tokenizer");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, encode_merges_by_rank);
    tcase_add_test(tc, encode_added_tokens);
    tcase_add_test(tc, encode_long_text);
    tcase_add_test(tc, encode_edge_cases);
    tcase_add_test(tc, decode_and_lookups);
    tcase_add_test(tc, normalized_added_token);
    tcase_add_test(tc, gpt2_byte_level_regex);
    tcase_add_test(tc, threads_share_a_tokenizer);
    tcase_add_test(tc, malformed_json);
    tcase_add_test(tc, malformed_model);
    tcase_add_test(tc, huge_parts);
    tcase_add_test(tc, malformed_parts);
    tcase_add_test(tc, duplicate_keys);
    tcase_add_test(tc, open_errors);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
