/* The overlap of the full units of two selections (the paper's turnover
 * analysis: whether the heads kept full at one SWA ratio are those kept at
 * another). */
#include "bosch/bosch.h"

#include "selection/selection_impl.h"

#define FN "bosch_selection_overlap"

/* Jaccard |A ∩ B| / |A ∪ B|; two empty sets are the same set. */
static double jaccard(size_t both, size_t either)
{
    return either ? (double)both / (double)either : 1.0;
}

int bosch_selection_overlap(const bosch_selection *a, const bosch_selection *b,
                            double *per_layer, size_t layers, double *overall)
{
    if (!a)
        return BOSCH_E_INVALID;
    if (!b)
        return sel_fail(a, BOSCH_E_INVALID, FN ": the other selection is NULL");
    if (a->layers != b->layers || a->kv_groups != b->kv_groups ||
        a->heads_per_group != b->heads_per_group)
        return sel_fail(a, BOSCH_E_INVALID,
                        FN ": shapes differ (%u x %u x %u against %u x %u x %u: layers x KV "
                           "groups x heads per group)",
                        a->layers, a->kv_groups, a->heads_per_group, b->layers, b->kv_groups,
                        b->heads_per_group);
    if (per_layer && layers != a->layers)
        return sel_fail(a, BOSCH_E_INVALID, FN ": per_layer has %zu entries, the selections %u "
                        "layers", layers, a->layers);
    size_t both = 0, either = 0;
    for (uint32_t l = 0; l < a->layers; l++) {
        size_t lb = 0, le = 0;
        for (uint32_t g = 0; g < a->kv_groups; g++) {
            const size_t u = (size_t)l * a->kv_groups + g;
            const int fa = !a->mask[u], fb = !b->mask[u]; /* full units */
            lb += fa && fb;
            le += fa || fb;
        }
        if (per_layer)
            per_layer[l] = jaccard(lb, le);
        both += lb;
        either += le;
    }
    if (overall)
        *overall = jaccard(both, either);
    return BOSCH_OK;
}
