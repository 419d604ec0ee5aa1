/* RULER's NIAH task table (scripts/synthetic.yaml), template, answer
 * prefix and noise sentence (scripts/data/synthetic/constants.py, niah.py),
 * the parameters' defaults and checks. */
#include "text/ruler_gen.h"

#include <stdio.h>
#include <string.h>

/* scripts/synthetic.yaml. */
const struct spec ruler_specs[] = {
    {"niah_single_1", HAY_NOISE, K_WORDS, K_NUMBERS, 1, 1, 1},
    {"niah_single_2", HAY_ESSAY, K_WORDS, K_NUMBERS, 1, 1, 1},
    {"niah_single_3", HAY_ESSAY, K_WORDS, K_UUIDS, 1, 1, 1},
    {"niah_multikey_1", HAY_ESSAY, K_WORDS, K_NUMBERS, 4, 1, 1},
    {"niah_multikey_2", HAY_NEEDLE, K_WORDS, K_NUMBERS, 1, 1, 1},
    {"niah_multikey_3", HAY_NEEDLE, K_UUIDS, K_UUIDS, 1, 1, 1},
    {"niah_multivalue", HAY_ESSAY, K_WORDS, K_NUMBERS, 1, 4, 1},
    {"niah_multiquery", HAY_ESSAY, K_WORDS, K_NUMBERS, 1, 1, 4},
};
const size_t ruler_n_specs = sizeof ruler_specs / sizeof ruler_specs[0];

/* constants.py TASKS['niah'] and niah.py's needle and noise haystack. */
const char ruler_template[] =
    "Some special magic {type_needle_v} are hidden within the following text. Make sure to "
    "memorize it. I will quiz you about the {type_needle_v} afterwards.\n{context}\nWhat are "
    "all the special magic {type_needle_v} for {query} mentioned in the provided text?";
const char ruler_answer_prefix[] =
    " The special magic {type_needle_v} for {query} mentioned in the provided text are";
const char ruler_noise[] = "The grass is green. The sky is blue. The sun is yellow. Here we go. "
                            "There and back again.";
/* tokens_to_generate of niah. */

const char *const ruler_kind_names[] = {"words", "numbers", "uuids"};

BOSCH_TEXT_API const char *bosch_text_ruler_task_name(size_t i)
{
    return i < ruler_n_specs ? ruler_specs[i].name : NULL;
}

BOSCH_TEXT_API void bosch_text_ruler_params_init(struct bosch_text_ruler_params *p)
{
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->struct_size = sizeof *p;
    p->task = "niah_single_1";
    p->context = 4096;
    p->samples = 10;
    p->seed = 0;
    p->depth_min = 0.0;
    p->depth_max = 1.0;
    p->chat = 1;
}

int ruler_check_params(const struct bosch_text_ruler_params *p, const struct spec **sp, char *err,
                        size_t errlen)
{
    if (!p) {
        snprintf(err, errlen, "params is NULL");
        return BOSCH_E_INVALID;
    }
    if (p->struct_size != sizeof *p) {
        snprintf(err, errlen, "struct_size %zu is not sizeof(struct bosch_text_ruler_params) "
                 "(%zu): call bosch_text_ruler_params_init", p->struct_size, sizeof *p);
        return BOSCH_E_INVALID;
    }
    *sp = NULL;
    for (size_t i = 0; p->task && i < ruler_n_specs; i++)
        if (!strcmp(p->task, ruler_specs[i].name))
            *sp = &ruler_specs[i];
    if (!*sp) {
        snprintf(err, errlen, "unknown task \"%.64s\" (niah_single_1..3, niah_multikey_1..3, "
                 "niah_multivalue, niah_multiquery)", p->task ? p->task : "(null)");
        return BOSCH_E_INVALID;
    }
    if (!p->samples) {
        snprintf(err, errlen, "samples is 0");
        return BOSCH_E_INVALID;
    }
    if (!p->context) {
        snprintf(err, errlen, "context is 0");
        return BOSCH_E_INVALID;
    }
    if (!(p->depth_min >= 0.0 && p->depth_min <= p->depth_max && p->depth_max <= 1.0)) {
        snprintf(err, errlen, "depths [%g, %g] are not within 0 <= depth_min <= depth_max <= 1",
                 p->depth_min, p->depth_max);
        return BOSCH_E_INVALID;
    }
    return BOSCH_OK;
}
