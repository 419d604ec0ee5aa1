/* Number parsing of the command-line programs (the bosch command and
 * examples/bosch-testbed-search): a whole argument or nothing. */
#ifndef BOSCH_CLI_NUMBERS_H
#define BOSCH_CLI_NUMBERS_H

/* A finite double (strtod syntax) filling all of `s`; 0, or -1 (*out unchanged). */
int parse_double(const char *s, double *out);
/* A decimal unsigned integer filling all of `s` (no sign, no overflow); 0 or -1. */
int parse_ull(const char *s, unsigned long long *out);
/* parse_ull within [lo, hi]; 0 or -1. */
int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out);

#endif
