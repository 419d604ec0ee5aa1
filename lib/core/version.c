#include "bosch/bosch.h"

unsigned bosch_version_number(void)
{
    return BOSCH_VERSION_NUMBER;
}

const char *bosch_version_string(void)
{
    return BOSCH_VERSION_STRING;
}
