/* The model families the exports that read a config.json (hf, trtllm)
 * know, told by the config's "architectures" (else its "model_type", what
 * transformers' AutoConfig goes by), and what each family's transformers 5
 * config can say about sliding windows (docs/export.md, "Families"). */
#include "bosch/bosch.h"

#include <json-c/json.h>
#include <string.h>

#include "selection/selection_impl.h"

static const struct sel_family families[] = {
    {"Qwen3ForCausalLM", "qwen3", SEL_HF_PER_LAYER},
    {"Qwen3MoeForCausalLM", "qwen3_moe", SEL_HF_USE_SLIDING_ALL},
    {"Qwen2ForCausalLM", "qwen2", SEL_HF_PER_LAYER},
    {"MistralForCausalLM", "mistral", SEL_HF_WINDOW_ALL},
    {"LlamaForCausalLM", "llama", SEL_HF_NO_WINDOW},
};
#define N_FAMILIES (sizeof families / sizeof families[0])
#define SUPPORTED                                                                      \
    "Qwen3ForCausalLM, Qwen3MoeForCausalLM, Qwen2ForCausalLM, MistralForCausalLM, " \
    "LlamaForCausalLM"

static const struct sel_family *by_arch(const char *arch)
{
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (!strcmp(families[i].arch, arch))
            return &families[i];
    return NULL;
}

static const struct sel_family *by_model_type(const char *type)
{
    for (size_t i = 0; i < N_FAMILIES; i++)
        if (!strcmp(families[i].model_type, type))
            return &families[i];
    return NULL;
}

/* "architectures" (absent or null: *out stays NULL): one known architecture,
 * named once or more. A status after sel_fail. */
static int from_architectures(const bosch_selection *s, json_object *v, const char *path,
                              const char *fn, const struct sel_family **out)
{
    if (!json_object_is_type(v, json_type_array))
        return sel_fail(s, BOSCH_E_CORRUPT,
                        "%s: %s: \"architectures\" is not an array of names", fn, path);
    const char *first = NULL;
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *a = json_object_array_get_idx(v, i);
        if (!a || !json_object_is_type(a, json_type_string))
            return sel_fail(s, BOSCH_E_CORRUPT,
                            "%s: %s: \"architectures\" is not an array of names", fn, path);
        const char *name = json_object_get_string(a);
        if (!by_arch(name))
            return sel_fail(s, BOSCH_E_INVALID,
                            "%s: %s: architecture %s is not one the export knows (supported: "
                            SUPPORTED ")", fn, path, name);
        if (first && strcmp(first, name))
            return sel_fail(s, BOSCH_E_INVALID,
                            "%s: %s: \"architectures\" names both %s and %s (give the one "
                            "of the checkpoint)", fn, path, first, name);
        first = name;
    }
    *out = first ? by_arch(first) : NULL;
    return BOSCH_OK;
}

int sel_config_family(const bosch_selection *s, json_object *cfg, const char *path,
                      const char *fn, const struct sel_family **out)
{
    json_object *v;
    const struct sel_family *arch = NULL;
    *out = NULL;
    if (json_object_object_get_ex(cfg, "architectures", &v) && v) {
        int rc = from_architectures(s, v, path, fn, &arch);
        if (rc)
            return rc;
    }
    const char *type = NULL;
    if (json_object_object_get_ex(cfg, "model_type", &v) && v) {
        if (!json_object_is_type(v, json_type_string))
            return sel_fail(s, BOSCH_E_CORRUPT, "%s: %s: \"model_type\" is not a string", fn,
                            path);
        type = json_object_get_string(v);
    }
    if (!arch && !type)
        return sel_fail(s, BOSCH_E_INVALID,
                        "%s: %s: no \"architectures\" or \"model_type\" to tell the model "
                        "family by (supported: " SUPPORTED ")", fn, path);
    /* transformers builds the config class from model_type: both must agree. */
    const struct sel_family *typed = type ? by_model_type(type) : arch;
    if (!typed && !arch)
        return sel_fail(s, BOSCH_E_INVALID,
                        "%s: %s: model_type %s is not one the export knows (supported: "
                        SUPPORTED ")", fn, path, type);
    if (arch && typed != arch)
        return sel_fail(s, BOSCH_E_INVALID,
                        "%s: %s: architecture %s but model_type %s (%s's is %s): a config "
                        "of which model?", fn, path, arch->arch, type, arch->arch,
                        arch->model_type);
    *out = typed;
    return BOSCH_OK;
}
