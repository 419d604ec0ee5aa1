/* Text of the SVG heatmap: XML escaping, cleaning and width estimates. */
#include <string.h>

#include "selection/svg_text.h"

/* The next code point of *p, advancing *p past it; -1 (advancing one byte)
 * for a byte that starts no valid UTF-8 sequence or a code point XML 1.0
 * cannot hold (controls, surrogates, U+FFFE, U+FFFF). *len gets its byte
 * length. */
static long next_cp(const unsigned char **p, size_t *len)
{
    const unsigned char *s = *p;
    unsigned char b = s[0];
    size_t n = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3
                           : (b & 0xF8) == 0xF0 ? 4 : 0;
    static const long min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    long cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            n = 0;
            break;
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (n == 0 || cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) ||
        cp == 0xFFFE || cp == 0xFFFF || cp < 0x20 || cp == 0x7F) {
        *p = s + 1;
        *len = 1;
        return -1;
    }
    *p = s + n;
    *len = n;
    return cp;
}

void svg_put_text(FILE *f, const char *t)
{
    const unsigned char *p = (const unsigned char *)t;
    while (*p) {
        const unsigned char *start = p;
        size_t n;
        long cp = next_cp(&p, &n);
        switch (cp) {
        case -1: fputc('?', f); break;
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fwrite(start, 1, n, f);
        }
    }
}

/* Advance of one code point in em, at least DejaVu Sans's. */
static double em_width(long cp)
{
    if (cp < 0 || cp >= 0x80)
        return 1.0;
    if (strchr(" .,:;'|!il", (int)cp))
        return 0.36;
    if (strchr("ftrjI()[]{}/\\-\"`", (int)cp))
        return 0.5;
    if (strchr("mwMW%@", (int)cp))
        return 1.0;
    if ((cp >= 'a' && cp <= 'z') || (cp >= '0' && cp <= '9') || cp == '?' || cp == '_' ||
        cp == '*' || cp == '^')
        return 0.66;
    return 0.86; /* capitals, &, <, >, =, +, #, ~ */
}

double svg_text_width(const char *t, double size)
{
    const unsigned char *p = (const unsigned char *)t;
    double w = 0;
    while (*p) {
        size_t n;
        long cp = next_cp(&p, &n);
        w += em_width(cp < 0 ? '?' : cp);
    }
    return w * size;
}

void svg_clip(char *dst, size_t n, const char *src)
{
    size_t len = strlen(src);
    if (len < n) {
        memcpy(dst, src, len + 1);
        return;
    }
    size_t keep = n - 4;
    while (keep > 0 && ((unsigned char)src[keep] & 0xC0) == 0x80)
        keep--; /* do not cut a character */
    memcpy(dst, src, keep);
    memcpy(dst + keep, "...", 4);
}
