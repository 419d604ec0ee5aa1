/* Text of the SVG heatmap (svg_text.c): escaped for XML, cleaned of what
 * XML 1.0 cannot hold, and its width estimated conservatively. */
#ifndef LIBBOSCH_SVG_TEXT_H
#define LIBBOSCH_SVG_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Writes `t` as XML text: &, <, >, " escaped; a byte that starts no valid
 * UTF-8 sequence, a control character or a code point XML 1.0 excludes
 * written as '?'. */
void svg_put_text(FILE *f, const char *t);

/* An upper bound of the advance of `t` in pixels in a sans-serif font of
 * `size` pixels (per-character widths at least those of DejaVu Sans, the
 * widest common sans-serif; 1 em for anything outside ASCII). */
double svg_text_width(const char *t, double size);

/* Copies `src` into dst (n > 4 bytes); when it does not fit, cuts it at a
 * character boundary and ends it with "...". */
void svg_clip(char *dst, size_t n, const char *src);

#endif
