#include "numbers.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int parse_ull(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    if (*s == '-' || *s == '\0')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end)
        return -1;
    *out = v;
    return 0;
}

int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
    unsigned long long v;
    if (parse_ull(s, &v) || v < lo || v > hi)
        return -1;
    *out = (unsigned)v;
    return 0;
}
