// The table of model families (family.hpp).
#include "family.hpp"

namespace bosch_torch {
namespace {

const ModelFamily *const kFamilies[] = {
    &kQwen3Family, &kQwen3MoeFamily, &kQwen2Family, &kLlamaFamily, &kMistralFamily,
};

} // namespace

const ModelFamily *find_family(const std::string &architecture) {
    for (const ModelFamily *f : kFamilies)
        if (architecture == f->architecture)
            return f;
    return nullptr;
}

std::string supported_architectures() {
    std::string s;
    for (const ModelFamily *f : kFamilies)
        s += (s.empty() ? "" : ", ") + std::string(f->architecture);
    return s;
}

} // namespace bosch_torch
