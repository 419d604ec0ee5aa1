#include "suite.h"

#include <stdlib.h>

TCase *tcase_new(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_set_timeout(tc, TEST_TIMEOUT);
    suite_add_tcase(s, tc);
    return tc;
}

int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
