/* The data compiled into libbosch-text (lib/text/gen_data.py): the essay
 * haystack and the key words of the RULER tasks (data/haystack,
 * data/words; licences in their README.md). Each array ends with a NUL not
 * counted in its _len. */
#ifndef TEXT_RULER_DATA_H
#define TEXT_RULER_DATA_H

#include <stddef.h>

extern const unsigned char text_data_essay[];
extern const size_t text_data_essay_len;
extern const unsigned char text_data_adjectives[];
extern const size_t text_data_adjectives_len;
extern const unsigned char text_data_nouns[];
extern const size_t text_data_nouns_len;

#endif
