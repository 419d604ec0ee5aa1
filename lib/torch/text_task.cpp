// Text tasks (libbosch-text) as token tasks: the rendered prompt and the
// teacher-forcing target are encoded with the model's tokenizer (the prompt
// with the tokenizer's leading special tokens); the answer strings stay for
// the match metric.
#include "tasks.hpp"

#include "failure.hpp"

#include "bosch/text.h"

#include <algorithm>

namespace bosch_torch {

namespace {

std::vector<int32_t> encode(const bosch_tokenizer *tok, const char *s, size_t len, unsigned flags,
                            const std::string &what) {
    int32_t *ids = nullptr;
    size_t n = 0;
    const int rc = bosch_tokenizer_encode(tok, s, len, flags, &ids, &n);
    if (rc != BOSCH_OK)
        throw Failure(rc, "cannot encode " + what);
    std::vector<int32_t> out(ids, ids + n);
    bosch_text_free(ids);
    return out;
}

// The special tokens the tokenizer's template puts before a text (Llama 2's
// <s>, Llama 3's <|begin_of_text|>; none for Qwen3), as Hugging Face's
// encode adds them, unless the prompt already starts with them (a chat
// format that writes its BOS as text). Its end tokens are not added: the
// model continues the prompt.
void with_leading_specials(const bosch_tokenizer *tok, std::vector<int32_t> &prompt) {
    const int32_t *before = nullptr, *after = nullptr;
    size_t nb = 0, na = 0;
    if (bosch_tokenizer_template(tok, &before, &nb, &after, &na) != BOSCH_OK || nb == 0)
        return;
    if (prompt.size() >= nb && std::equal(before, before + nb, prompt.begin()))
        return;
    prompt.insert(prompt.begin(), before, before + nb);
}

} // namespace

Task from_text(const bosch_text_task *tt, const bosch_tokenizer *tok, unsigned chat_flags) {
    if (!tt || !tok)
        invalid("the text task and the tokenizer must not be NULL");
    Task t;
    t.tokenizer = tok;
    const size_t n = bosch_text_task_samples(tt);
    if (n == 0)
        invalid("the text task has no samples");
    for (size_t i = 0; i < n; i++) {
        const std::string where = "sample " + std::to_string(i);
        char *text = nullptr;
        size_t len = 0;
        const int rc = bosch_text_task_prompt(tt, i, chat_flags, &text, &len);
        if (rc != BOSCH_OK)
            throw Failure(rc, "cannot render the prompt of " + where);
        Sample s;
        try {
            // The chat markup (<|im_start|>, ...) must become its special ids.
            s.prompt = encode(tok, text, len, 0, "the prompt of " + where);
            with_leading_specials(tok, s.prompt);
        } catch (...) {
            bosch_text_free(text);
            throw;
        }
        bosch_text_free(text);
        const char *target = bosch_text_task_target(tt, i);
        // Answers are data: never special tokens.
        s.answer = encode(tok, target, std::char_traits<char>::length(target),
                          BOSCH_TOKENIZE_NO_SPECIAL, "the target of " + where);
        for (size_t j = 0; j < bosch_text_task_answers(tt, i); j++)
            s.answers.emplace_back(bosch_text_task_answer(tt, i, j));
        s.max_new = int64_t(bosch_text_task_max_new_tokens(tt, i));
        if (s.prompt.empty() || s.answer.empty())
            invalid(where + " encodes to an empty prompt or target");
        t.samples.push_back(std::move(s));
    }
    return t;
}

} // namespace bosch_torch
