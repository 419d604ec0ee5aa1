/* Names of the stages and variants (the vocabulary every module shares). */
#include "bosch/bosch.h"

const char *bosch_stage_name(int stage)
{
    static const char *const names[] = {"anchors", "probe", "alloc", "group"};
    return stage >= 0 && stage < BOSCH_STAGE_COUNT ? names[stage] : "unknown";
}

const char *bosch_variant_name(int variant)
{
    static const char *const names[] = {"full", "probe-only", "group-only", "layer-level"};
    return variant >= 0 && variant <= BOSCH_VARIANT_LAYER_LEVEL ? names[variant] : NULL;
}
