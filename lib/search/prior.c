/* The host's priors as a subproblem sees them: one value per variable
 * (higher = more important to keep full attention), for strategies that
 * warm-start from a static ranking or use it in a surrogate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/subproblem_impl.h"

static int ensure(bosch_subproblem *sp)
{
    if (!sp->prior)
        sp->prior = malloc(sp->n * sizeof *sp->prior);
    return sp->prior ? BOSCH_OK : BOSCH_E_NOMEM;
}

int subproblem_prior_from_units(bosch_subproblem *sp, const double *unit_prior)
{
    if (ensure(sp) < 0)
        return BOSCH_E_NOMEM;
    for (size_t v = 0; v < sp->n; v++) {
        double sum = 0.0;
        size_t a = sp->var_start[v], b = sp->var_start[v + 1];
        for (size_t i = a; i < b; i++)
            sum += unit_prior[sp->var_units[i]];
        sp->prior[v] = b > a ? sum / (double)(b - a) : 0.0;
    }
    return BOSCH_OK;
}

int bosch_subproblem_prior(const bosch_subproblem *sp, double *prior)
{
    if (!sp || !prior)
        return BOSCH_E_INVALID;
    if (!sp->prior)
        return BOSCH_E_NOT_FOUND;
    memcpy(prior, sp->prior, sp->n * sizeof *prior);
    return BOSCH_OK;
}

int bosch_subproblem_set_prior(bosch_subproblem *sp, const double *prior)
{
    if (!sp)
        return BOSCH_E_INVALID;
    if (!prior) {
        free(sp->prior);
        sp->prior = NULL;
        return BOSCH_OK;
    }
    for (size_t v = 0; v < sp->n; v++)
        if (!isfinite(prior[v]))
            return BOSCH_E_BAD_SCORE;
    if (ensure(sp) < 0)
        return BOSCH_E_NOMEM;
    memcpy(sp->prior, prior, sp->n * sizeof *prior);
    return BOSCH_OK;
}
