/* The library's optimizer options as options of `bosch search`
 * (lib_options.h). */
#include "lib_options.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Room for the library's table; options past it are not offered (the
 * table holds 25 today, and test/cli/lib_options_cli.py checks every one
 * is). */
#define MAX_LIB 64

static char spelled[MAX_LIB][40]; /* "time-limit" for "time_limit" */
static size_t table_index[MAX_LIB];
static size_t n_offered;
static int loaded;

static void load(void)
{
    if (loaded)
        return;
    loaded = 1;
    for (size_t i = 0; i < bosch_option_count() && n_offered < MAX_LIB; i++) {
        const char *name = bosch_option_name(i);
        if (!strcmp(name, "seed") || strlen(name) >= sizeof spelled[0])
            continue; /* --seed is the command's: it also seeds the task */
        char *d = spelled[n_offered];
        for (size_t k = 0; name[k]; k++)
            d[k] = name[k] == '_' ? '-' : name[k];
        d[strlen(name)] = '\0';
        table_index[n_offered++] = i;
    }
}

size_t lib_option_count(void)
{
    load();
    return n_offered;
}

size_t lib_options_longopts(struct option *lo)
{
    load();
    for (size_t k = 0; k < n_offered; k++)
        lo[k] = (struct option){spelled[k], required_argument, NULL, LIB_OPTION_ID + (int)k};
    return n_offered;
}

/* "N", "X", ... : how the help names an option's value. */
static const char *value_name(int type)
{
    switch (type) {
    case BOSCH_OPTION_UINT: return "N";
    case BOSCH_OPTION_DOUBLE: return "X";
    case BOSCH_OPTION_BOOL: return "0|1";
    case BOSCH_OPTION_CHOICE: return "V";
    case BOSCH_OPTION_STRATEGY: return "NAME";
    default: return "PATH";
    }
}

/* The valid values of an option, as "(0..1)", "(>= 1)", "(a|b|c)". */
static void valid_values(const char *name, char *buf, size_t len)
{
    int type = bosch_option_type(name);
    double lo, hi;
    if (type == BOSCH_OPTION_STRATEGY) {
        size_t n = (size_t)snprintf(buf, len, "(");
        for (size_t i = 0; bosch_strategy_builtin_name(i) && n < len; i++)
            n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "",
                                  bosch_strategy_builtin_name(i));
        if (n < len)
            snprintf(buf + n, len - n, ")");
    } else if (bosch_option_choices(name)) {
        snprintf(buf, len, "(%s)", bosch_option_choices(name));
    } else if (bosch_option_range(name, &lo, &hi) == BOSCH_OK) {
        if (isinf(hi) || hi >= 1.8e19)
            snprintf(buf, len, "(>= %.15g)", lo);
        else
            snprintf(buf, len, "(%.15g..%.15g)", lo, hi);
    } else {
        snprintf(buf, len, "(a file path)");
    }
}

static const char *table_name(int id)
{
    size_t k = (size_t)(id - LIB_OPTION_ID);
    return k < n_offered ? bosch_option_name(table_index[k]) : NULL;
}

/* The index of `name` among the options given, or n_lib. */
static size_t given_index(const struct settings *s, const char *name)
{
    size_t i = 0;
    while (i < s->n_lib && strcmp(s->lib[i].name, name))
        i++;
    return i;
}

static void record(struct settings *s, const char *name, const char *value)
{
    size_t i = given_index(s, name);
    if (i < s->n_lib) {
        s->lib[i].value = value; /* a later value wins */
        return;
    }
    if (s->n_lib < sizeof s->lib / sizeof s->lib[0]) {
        s->lib[s->n_lib].name = name;
        s->lib[s->n_lib++].value = value;
    }
}

const char *lib_option_apply(struct settings *s, int id, const char *arg)
{
    static char why[512];
    load();
    const char *name = table_name(id);
    if (!name)
        return "an unknown library option";
    /* The library's own check: a scratch optimizer takes the value as the
     * search's will (nothing is opened or started). */
    bosch_problem *p = bosch_problem_create(1, 1, 1);
    bosch_optimizer *o = p ? bosch_optimizer_create(p) : NULL;
    int rc = o ? bosch_set_option(o, name, arg) : BOSCH_E_NOMEM;
    bosch_optimizer_free(o);
    bosch_problem_free(p);
    if (rc == BOSCH_E_NOMEM)
        return "(out of memory checking it)";
    if (rc != BOSCH_OK) {
        char values[256];
        valid_values(name, values, sizeof values);
        snprintf(why, sizeof why, "--%s %s", spelled[id - LIB_OPTION_ID], values);
        return why;
    }
    record(s, name, arg);
    return NULL;
}

const char *lib_option_given(const struct settings *s, const char *name)
{
    size_t i = given_index(s, name);
    return i < s->n_lib ? s->lib[i].value : NULL;
}

void lib_option_suggest(struct settings *s, const char *name, const char *value)
{
    if (lib_option_given(s, name) || s->n_lib_buf == sizeof s->lib_buf / sizeof s->lib_buf[0])
        return;
    char *copy = s->lib_buf[s->n_lib_buf++];
    snprintf(copy, sizeof s->lib_buf[0], "%s", value);
    /* the table's own spelling of the name, which outlives s */
    for (size_t i = 0; i < bosch_option_count(); i++)
        if (!strcmp(bosch_option_name(i), name))
            record(s, bosch_option_name(i), copy);
}

int lib_options_configure(bosch_optimizer *opt, const struct settings *s)
{
    for (size_t i = 0; i < s->n_lib; i++) {
        int rc = bosch_set_option(opt, s->lib[i].name, s->lib[i].value);
        if (rc != BOSCH_OK) {
            const char *msg = *bosch_optimizer_last_error(opt) ? bosch_optimizer_last_error(opt)
                                                               : bosch_strerror(rc);
            errorf("--%s %s: %s: %s", s->lib[i].name, s->lib[i].value, bosch_err_name(rc), msg);
            return EXIT_ERROR;
        }
    }
    return 0;
}

/* Writes `text` from column `col`, wrapped at 79 columns with continuation
 * lines at column `indent`. */
static void wrapped(FILE *f, const char *text, size_t col, size_t indent)
{
    int first = 1;
    while (*text) {
        size_t n = strcspn(text, " ");
        if (!first && col + 1 + n > 79) {
            fprintf(f, "\n%*s", (int)indent, "");
            col = indent;
        } else if (!first) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)n, text);
        col += n;
        text += n;
        text += strspn(text, " ");
        first = 0;
    }
    fputc('\n', f);
}

void print_lib_options(FILE *f)
{
    load();
    for (size_t k = 0; k < n_offered; k++) {
        const char *name = bosch_option_name(table_index[k]);
        char head[64], text[512];
        snprintf(head, sizeof head, "--%.39s %s", spelled[k],
                 value_name(bosch_option_type(name)));
        const char *def = bosch_option_default(name);
        snprintf(text, sizeof text, "%s (default %s)", bosch_option_doc(name),
                 *def ? def : "none");
        /* the command's help layout: the text at column 21, or one space
         * after a longer head */
        size_t col = 2 + strlen(head) + 1;
        if (col < 21)
            col = 21;
        fprintf(f, "  %-*s", (int)(col - 2), head);
        wrapped(f, text, col, 21);
    }
}
