/* UTF-8 as WHATWG's decoder reads it, and GPT-2's byte-level alphabet. */
#include "text/tokenizer.h"

/* Length of a valid sequence at s[0..n), or 0 with *bad = the length of the
 * maximal invalid subsequence (at least 1) that WHATWG replaces by one
 * U+FFFD. */
static size_t seq_len(const unsigned char *s, size_t n, size_t *bad)
{
    unsigned char c = s[0];
    size_t need;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
        need = 2;
        if (c == 0xe0)
            lo = 0xa0;
        if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i <= need; i++) {
        if (i >= n || s[i] < lo || s[i] > hi) {
            *bad = i;
            return 0;
        }
        lo = 0x80;
        hi = 0xbf;
    }
    return need + 1;
}

size_t tok_utf8_valid_prefix(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, bad;
    while (i < n) {
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        size_t l = seq_len(s + i, n - i, &bad);
        if (!l)
            break;
        i += l;
    }
    return i;
}

int tok_utf8_sanitize(struct text_buf *b, const char *str, size_t n)
{
    static const char fffd[] = "\xef\xbf\xbd";
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < n) {
        size_t ok = tok_utf8_valid_prefix(str + i, n - i);
        if (ok && text_buf_add(b, str + i, ok))
            return BOSCH_E_NOMEM;
        i += ok;
        if (i >= n)
            break;
        size_t bad = 1;
        seq_len(s + i, n - i, &bad);
        if (text_buf_add(b, fffd, 3))
            return BOSCH_E_NOMEM;
        i += bad;
    }
    if (!b->data && text_buf_add(b, "", 0))
        return BOSCH_E_NOMEM;
    return BOSCH_OK;
}

size_t tok_utf8_next(const unsigned char *s, uint32_t *cp)
{
    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] < 0xe0) {
        *cp = (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
        return 2;
    }
    if (s[0] < 0xf0) {
        *cp = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
        return 3;
    }
    *cp = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12 |
          (uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
    return 4;
}

size_t tok_utf8_put(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* GPT-2: printable bytes ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) stand for
 * themselves; the others, in order, for U+0100, U+0101, ... */
static int printable(unsigned b)
{
    return (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
}

uint32_t tok_byte_to_cp(unsigned char b)
{
    if (printable(b))
        return b;
    unsigned n = 0;
    for (unsigned i = 0; i < b; i++)
        n += !printable(i);
    return 256 + n;
}

int tok_cp_to_byte(uint32_t cp)
{
    if (cp < 256)
        return printable(cp) ? (int)cp : -1;
    if (cp >= 256 + 68)
        return -1;
    unsigned n = 0;
    for (unsigned b = 0; b < 256; b++)
        if (!printable(b) && n++ == cp - 256)
            return (int)b;
    return -1;
}
