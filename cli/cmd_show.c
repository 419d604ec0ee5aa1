/* bosch show PREFIX.json: prints a saved mask; no model needed. */
#include <stdio.h>

#include "cli.h"
#include "options.h"
#include "output.h"

int cmd_show(int argc, char **argv)
{
    struct settings s;
    settings_default(&s);
    const char *file = NULL;
    int rc = parse_command(CMD_SHOW, argc, argv, &s, &file);
    if (rc)
        return rc;
    if (!file)
        file = s.mask;
    if (!file) {
        errorf("show: which mask? usage: bosch show PREFIX.json");
        return EXIT_USAGE;
    }
    bosch_selection *sel = read_mask(file);
    if (!sel)
        return EXIT_ERROR;
    print_picture(sel);
    print_scores(sel);
    const char *model = bosch_selection_model_path(sel);
    if (model && *model)
        printf("model: %.4095s\n", model);
    struct mask_settings ms;
    mask_settings(sel, &ms);
    if (ms.window)
        printf("settings: window %u, sink %u, metric %s\n", ms.window, ms.sink,
               *ms.metric ? ms.metric : "?");
    bosch_selection_free(sel);
    return EXIT_OK;
}
