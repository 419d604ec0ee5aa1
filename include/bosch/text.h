/*
 * libbosch-text: text for real models. A BPE tokenizer that reads a Hugging
 * Face tokenizer.json (the Qwen2/Qwen3, Llama 3, Llama 2 / Mistral and
 * SmolLM2 families), their chat formats (Qwen3's, ChatML, Llama 3's), text
 * tasks in JSON Lines and RULER's needle-in-a-haystack tasks generated to a
 * target length in tokens.
 *
 * A separate library (libbosch-text.so.0). It depends on json-c, PCRE2 and
 * utf8proc only: neither on libtorch nor on the search core, so a host that
 * evaluates with its own engine can tokenize and build tasks with it alone.
 * libbosch-torch uses it to turn text tasks into token ids.
 *
 * Errors follow the core's conventions (bosch/bosch.h; only its status enum
 * is used, the header needs no libbosch at link time):
 *  - A function that creates a handle returns it, or NULL; then
 *    bosch_text_create_status() and bosch_text_create_error() say why, per
 *    thread ("<function>: <reason>").
 *  - Other functions return an int status (BOSCH_OK or a negative
 *    enum bosch_error): bad arguments or data BOSCH_E_INVALID, files
 *    BOSCH_E_IO, memory BOSCH_E_NOMEM.
 * Memory: what a function returns through a `char **` or `int32_t **`
 * argument is allocated by the library and released with bosch_text_free().
 * Strings returned as `const char *` belong to their handle.
 *
 * Threads: tokenizers, chat formats and tasks are immutable after creation;
 * every function taking a const handle may be called from any number of
 * threads at once.
 */
#ifndef BOSCH_TEXT_H
#define BOSCH_TEXT_H

#include "bosch/bosch.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef BOSCH_TEXT_API
#if defined(BOSCH_TEXT_BUILDING) && defined(__GNUC__)
#define BOSCH_TEXT_API __attribute__((visibility("default")))
#else
#define BOSCH_TEXT_API
#endif
#endif

/* The status and message of the last failing creator on this thread
 * (BOSCH_OK and "" when none failed yet; a success does not clear them). */
BOSCH_TEXT_API int bosch_text_create_status(void);
BOSCH_TEXT_API const char *bosch_text_create_error(void);
/* Releases what the library returned through a pointer argument. NULL is a
 * no-op. */
BOSCH_TEXT_API void bosch_text_free(void *p);

/* ------------------------------------------------------------------------ */
/* Tokenizer                                                                 */
/* ------------------------------------------------------------------------ */
typedef struct bosch_tokenizer bosch_tokenizer;

/* Reads a Hugging Face tokenizer.json: model BPE, either byte-level (a
 * ByteLevel pre-tokenizer and decoder: GPT-2, Qwen2/Qwen3, Llama 3,
 * SmolLM2) or SentencePiece-style (U+2581 for a space by a Prepend/Replace
 * normalizer or a Metaspace pre-tokenizer, <0xNN> byte fallback, an unknown
 * token: Llama 2, Mistral); NFC/NFD/NFKC/NFKD normalizers, Split and Digits
 * pre-tokenizers, merges as "a b" strings or [a, b] pairs, added and special
 * tokens, a TemplateProcessing post-processor (its `single` template:
 * BOSCH_TOKENIZE_ADD_SPECIAL). docs/tokenizer.md has the subset. Anything
 * else is refused by name. NULL on failure (BOSCH_E_IO: unreadable file;
 * BOSCH_E_INVALID: malformed JSON or an unsupported field, named with its
 * JSON path). */
BOSCH_TEXT_API bosch_tokenizer *bosch_tokenizer_open(const char *path);
/* The same from `len` bytes of JSON in memory. */
BOSCH_TEXT_API bosch_tokenizer *bosch_tokenizer_from_json(const char *json, size_t len);
BOSCH_TEXT_API void bosch_tokenizer_free(bosch_tokenizer *tok);

enum bosch_tokenizer_flags {
    /* encode: treat added tokens that appear in the text as plain text
     * (default: they become their ids, as Hugging Face does). */
    BOSCH_TOKENIZE_NO_SPECIAL = 1u << 0,
    /* decode: leave out special tokens. */
    BOSCH_DECODE_SKIP_SPECIAL = 1u << 1,
    /* encode: add the special tokens of the post-processor's template
     * (TemplateProcessing's `single`: Llama 2's <s>, Llama 3's
     * <|begin_of_text|>), as Hugging Face's encode does by default
     * (add_special_tokens=True). Without it none is added: a prompt rendered
     * by a chat format already holds its BOS as text. */
    BOSCH_TOKENIZE_ADD_SPECIAL = 1u << 2
};

/* Encodes `len` bytes of UTF-8 `text` into *ids (*n of them; allocated,
 * bosch_text_free). Invalid UTF-8 is read as WHATWG's decoder reads it (each
 * maximal invalid subsequence becomes U+FFFD), so a byte string gives the
 * ids a browser or Node.js would; a leading BOM stays text (U+FEFF). No
 * BOS/EOS is added unless flags hold BOSCH_TOKENIZE_ADD_SPECIAL. Long input is cached per call, never
 * across calls (docs/tokenizer.md).
 * BOSCH_E_INVALID for NULL arguments (text may be NULL when len is 0). */
BOSCH_TEXT_API int bosch_tokenizer_encode(const bosch_tokenizer *tok, const char *text,
                                          size_t len, unsigned flags, int32_t **ids,
                                          size_t *n);
/* Decodes ids into *text (*len bytes plus a terminating NUL; allocated,
 * bosch_text_free). Byte sequences that are not valid UTF-8 (a token cut
 * inside a character) come out as U+FFFD, as Hugging Face's decoders do.
 * BOSCH_E_INVALID for an id outside the vocabulary. */
BOSCH_TEXT_API int bosch_tokenizer_decode(const bosch_tokenizer *tok, const int32_t *ids,
                                          size_t n, unsigned flags, char **text, size_t *len);
/* The special tokens BOSCH_TOKENIZE_ADD_SPECIAL puts before and after the
 * text (the post-processor's `single` template; none for Qwen3): pointers
 * into the tokenizer, counts possibly 0. BOSCH_E_INVALID for NULL
 * arguments. */
BOSCH_TEXT_API int bosch_tokenizer_template(const bosch_tokenizer *tok, const int32_t **before,
                                            size_t *n_before, const int32_t **after,
                                            size_t *n_after);
/* Number of ids: one past the largest id of the vocabulary and the added
 * tokens. */
BOSCH_TEXT_API uint32_t bosch_tokenizer_vocab_size(const bosch_tokenizer *tok);
/* The id of a token string (as stored in the vocabulary, byte-level
 * alphabet, or an added token's content); -1 when there is none. */
BOSCH_TEXT_API int32_t bosch_tokenizer_token_id(const bosch_tokenizer *tok, const char *token);
/* The stored string of an id, or NULL. Owned by the tokenizer. */
BOSCH_TEXT_API const char *bosch_tokenizer_token(const bosch_tokenizer *tok, int32_t id);
/* Non-zero for an added token marked "special" (<|im_start|>, ...). */
BOSCH_TEXT_API int bosch_tokenizer_is_special(const bosch_tokenizer *tok, int32_t id);
/* Non-zero for an id of the BPE vocabulary proper (not an added token):
 * the rows a random-token filler may use. */
BOSCH_TEXT_API int bosch_tokenizer_is_ordinary(const bosch_tokenizer *tok, int32_t id);
/* The ids among a model's first `rows` output rows that end a greedy
 * continuation, in increasing order: the special tokens, and the rows the
 * tokenizer has no token for (a model's untrained rows past the
 * vocabulary). RULER's match metric stops there (libbosch-torch); pass them
 * as bosch_torch_generate's stop list to continue as it does. Into *ids (*n
 * of them; allocated, bosch_text_free; NULL when *n is 0).
 * BOSCH_E_INVALID for NULL arguments, BOSCH_E_NOMEM. */
BOSCH_TEXT_API int bosch_tokenizer_stop_ids(const bosch_tokenizer *tok, uint32_t rows,
                                            int32_t **ids, size_t *n);

/* ------------------------------------------------------------------------ */
/* Chat formats (Qwen3, ChatML, Llama 3)                                     */
/* ------------------------------------------------------------------------ */
struct bosch_chat_message {
    const char *role;    /* "system", "user" or "assistant" */
    const char *content; /* UTF-8, NUL-terminated */
};

enum bosch_chat_flags {
    /* Append the assistant prefix "<|im_start|>assistant\n". */
    BOSCH_CHAT_GENERATION_PROMPT = 1u << 0,
    /* With the generation prompt: leave the model to think (Qwen3's
     * enable_thinking=true). Without this flag the prefix carries the empty
     * think block "<think>\n\n</think>\n\n" (non-thinking mode). */
    BOSCH_CHAT_THINKING = 1u << 1
};

/* Renders a conversation in Qwen3's chat format into *text (allocated,
 * bosch_text_free; *len bytes plus a NUL), as the chat_template of Qwen3's
 * tokenizer_config.json renders it for messages without tools.
 * BOSCH_E_INVALID for an unknown role or NULL arguments. */
BOSCH_TEXT_API int bosch_chat_format_qwen3(const struct bosch_chat_message *messages, size_t n,
                                           unsigned flags, char **text, size_t *len);

/* The chat formats libbosch-text renders, as each family's chat_template
 * renders system/user/assistant messages without tools. */
enum bosch_chat_style {
    BOSCH_CHAT_NONE = 0,   /* none known (Llama 2, a base GPT-2) */
    BOSCH_CHAT_QWEN3 = 1,  /* Qwen3's: ChatML with think blocks (bosch_chat_format_qwen3) */
    BOSCH_CHAT_CHATML = 2, /* "<|im_start|>ROLE\nCONTENT<|im_end|>\n" (Qwen2, SmolLM2);
                            * generation prompt "<|im_start|>assistant\n"; no default
                            * system message (give one) */
    BOSCH_CHAT_LLAMA3 = 3  /* Llama 3's: "<|begin_of_text|>" before the first message,
                            * "<|start_header_id|>ROLE<|end_header_id|>\n\n" + CONTENT
                            * trimmed + "<|eot_id|>"; generation prompt
                            * "<|start_header_id|>assistant<|end_header_id|>\n\n" */
};
/* The format of a tokenizer's family, recognised by its added tokens:
 * <|start_header_id|>, <|end_header_id|>, <|eot_id|> and <|begin_of_text|>:
 * Llama 3; <|im_start|> and <|im_end|> with <think> and </think>: Qwen3;
 * without them: ChatML. BOSCH_CHAT_NONE otherwise (or for NULL). */
BOSCH_TEXT_API enum bosch_chat_style bosch_chat_style_for(const bosch_tokenizer *tok);
/* "qwen3", "chatml", "llama3"; NULL for BOSCH_CHAT_NONE or an unknown value. */
BOSCH_TEXT_API const char *bosch_chat_style_name(enum bosch_chat_style style);
/* The style of a name above; BOSCH_CHAT_NONE for any other (or NULL). */
BOSCH_TEXT_API enum bosch_chat_style bosch_chat_style_parse(const char *name);
/* Renders a conversation in `style` (as bosch_chat_format_qwen3 for
 * BOSCH_CHAT_QWEN3; BOSCH_CHAT_THINKING applies to Qwen3 only, the others
 * have no think block). BOSCH_E_INVALID for BOSCH_CHAT_NONE or an unknown
 * style, an unknown role, NULL arguments. */
BOSCH_TEXT_API int bosch_chat_format(enum bosch_chat_style style,
                                     const struct bosch_chat_message *messages, size_t n,
                                     unsigned flags, char **text, size_t *len);

/* ------------------------------------------------------------------------ */
/* Text tasks                                                                */
/* ------------------------------------------------------------------------ */
/* A sample is a prompt (plain text, or chat messages rendered in the
 * sample's chat format, Qwen3's unless given, with the generation prompt,
 * Qwen3's non-thinking one) followed by an optional answer prefix, and the
 * answer strings that a correct continuation holds. JSON Lines, one object
 * per line:
 *   {"text": "...", "answers": ["...", ...]}
 *   {"messages": [{"role": "user", "content": "..."}, ...], "answers": [...]}
 * with optional "answer_prefix" (string, appended after the prompt, default
 * "") and "max_new_tokens" (int > 0, default: enough for the answers), and
 * for messages "chat_format" ("qwen3" (default), "chatml", "llama3"). */
typedef struct bosch_text_task bosch_text_task;

BOSCH_TEXT_API bosch_text_task *bosch_text_task_read_jsonl(const char *path);
BOSCH_TEXT_API int bosch_text_task_write_jsonl(const bosch_text_task *t, const char *path);
BOSCH_TEXT_API size_t bosch_text_task_samples(const bosch_text_task *t);
/* The full prompt of sample i as the model reads it (chat messages
 * rendered, then the answer prefix), into *text (allocated, bosch_text_free).
 * `chat_flags` (enum bosch_chat_flags) apply to samples given as messages. */
BOSCH_TEXT_API int bosch_text_task_prompt(const bosch_text_task *t, size_t i,
                                          unsigned chat_flags, char **text, size_t *len);
/* The chat format of sample i (BOSCH_CHAT_NONE for a plain-text sample or
 * an index out of range). */
BOSCH_TEXT_API enum bosch_chat_style bosch_text_task_chat_style(const bosch_text_task *t,
                                                               size_t i);
/* Sets the chat format of every sample given as messages (a task read from
 * JSON Lines without "chat_format", for another family's model: e.g.
 * bosch_chat_style_for(tok)). Not while other threads use the task.
 * BOSCH_E_INVALID for NULL or BOSCH_CHAT_NONE / an unknown style. */
BOSCH_TEXT_API int bosch_text_task_set_chat_style(bosch_text_task *t,
                                                  enum bosch_chat_style style);
/* Answers of sample i; the strings belong to the task. */
BOSCH_TEXT_API size_t bosch_text_task_answers(const bosch_text_task *t, size_t i);
BOSCH_TEXT_API const char *bosch_text_task_answer(const bosch_text_task *t, size_t i, size_t j);
/* The continuation scored under teacher forcing: the answers joined by
 * ", " after a space (" 1234, 5678"); belongs to the task. */
BOSCH_TEXT_API const char *bosch_text_task_target(const bosch_text_task *t, size_t i);
/* max_new_tokens of sample i (0: not given). */
BOSCH_TEXT_API uint32_t bosch_text_task_max_new_tokens(const bosch_text_task *t, size_t i);
BOSCH_TEXT_API void bosch_text_task_free(bosch_text_task *t);

/* RULER's string match (string_match_all): the share of `answers` that
 * occur in `output`, ignoring ASCII case. 0 for no answers. */
BOSCH_TEXT_API double bosch_text_match_all(const char *output, const char *const *answers,
                                           size_t n);

/* ------------------------------------------------------------------------ */
/* RULER's needle-in-a-haystack tasks                                        */
/* ------------------------------------------------------------------------ */
/* Names: "niah_single_1", "niah_single_2", "niah_single_3",
 * "niah_multikey_1", "niah_multikey_2", "niah_multikey_3",
 * "niah_multivalue", "niah_multiquery" (RULER's synthetic.yaml). The i-th
 * name for i = 0, 1, ...; NULL past the end. */
BOSCH_TEXT_API const char *bosch_text_ruler_task_name(size_t i);

struct bosch_text_ruler_params {
    size_t struct_size;   /* sizeof(struct bosch_text_ruler_params) */
    const char *task;     /* a name above */
    uint32_t context;     /* target prompt length in tokens (the rendered prompt) */
    uint32_t samples;
    uint64_t seed;        /* calibration and held-out sets: different seeds */
    double depth_min;     /* needle depths spread over [depth_min, depth_max] */
    double depth_max;     /*   (fractions of the haystack; default 0 and 1) */
    int chat;             /* non-zero (default): one user turn in the chat format of the
                           * tokenizer's family (bosch_chat_style_for; refused when it has
                           * none); 0: plain text */
};
/* Fills the defaults (task "niah_single_1", context 4096, 10 samples, seed
 * 0, depths 0..1, chat on). */
BOSCH_TEXT_API void bosch_text_ruler_params_init(struct bosch_text_ruler_params *p);
/* Generates a task with `tok`: each prompt, rendered, is at most `context`
 * tokens and as close to it as the haystack's granularity allows (a
 * sentence or a line). NULL on failure (BOSCH_E_INVALID: unknown task,
 * a context too short for the template and needles). */
BOSCH_TEXT_API bosch_text_task *bosch_text_ruler_create(const bosch_tokenizer *tok,
                                                        const struct bosch_text_ruler_params *p);

#ifdef __cplusplus
}
#endif

#endif /* BOSCH_TEXT_H */
