/* Added tokens in text: the leftmost, then longest, occurrence (as the
 * reference's trie and HF's Aho-Corasick find them), and the whitespace
 * that lstrip/rstrip remove. */
#include "text/tokenizer.h"

#include <string.h>
#include <utf8proc.h>

static int word_char(uint32_t cp)
{
    if (cp < 0x80)
        return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
               cp == '_';
    utf8proc_category_t c = utf8proc_category((utf8proc_int32_t)cp);
    return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT ||
           c == UTF8PROC_CATEGORY_LM || c == UTF8PROC_CATEGORY_LO || c == UTF8PROC_CATEGORY_ND ||
           c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC || c == UTF8PROC_CATEGORY_PC;
}

/* The code point that ends at text[end) (valid UTF-8). */
static uint32_t cp_before(const char *text, size_t end)
{
    size_t i = end - 1;
    while (i > 0 && ((unsigned char)text[i] & 0xc0) == 0x80)
        i--;
    uint32_t cp;
    tok_utf8_next((const unsigned char *)text + i, &cp);
    return cp;
}

/* single_word: not inside a word (HF's rule; the JS port ignores it). */
static int word_ok(const char *text, size_t n, size_t at, size_t len)
{
    uint32_t cp;
    if (at > 0 && word_char(cp_before(text, at)))
        return 0;
    if (at + len < n) {
        tok_utf8_next((const unsigned char *)text + at + len, &cp);
        if (word_char(cp))
            return 0;
    }
    return 1;
}

long tok_added_find(const bosch_tokenizer *tok, const char *text, size_t from, size_t n,
                    int normalized, size_t *at)
{
    if (!tok->n_added)
        return -1;
    for (size_t i = from; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (!tok->added_first[c])
            continue;
        long best = -1;
        for (size_t k = 0; k < tok->n_added; k++) {
            const struct tok_added *a = &tok->added[k];
            if (a->normalized != normalized || (unsigned char)a->content[0] != c ||
                a->len > n - i || (best >= 0 && a->len <= tok->added[best].len))
                continue;
            if (!memcmp(text + i, a->content, a->len) &&
                (!a->single_word || word_ok(text, n, i, a->len)))
                best = (long)k;
        }
        if (best >= 0) {
            *at = i;
            return best;
        }
    }
    return -1;
}

/* JavaScript's trim(): WhiteSpace and LineTerminator (with U+FEFF, without
 * U+0085). */
static int js_space(uint32_t cp)
{
    return (cp >= 9 && cp <= 13) || cp == 0x20 || cp == 0xa0 || cp == 0x1680 ||
           (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f ||
           cp == 0x205f || cp == 0x3000 || cp == 0xfeff;
}

size_t tok_trim_end(const char *s, size_t n)
{
    while (n > 0 && js_space(cp_before(s, n))) {
        n--;
        while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
            n--;
    }
    return n;
}

size_t tok_trim_start(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t l = tok_utf8_next((const unsigned char *)s + i, &cp);
        if (!js_space(cp))
            break;
        i += l;
    }
    return i;
}
