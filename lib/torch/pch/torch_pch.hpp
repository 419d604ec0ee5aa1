// Precompiled once per build for libbosch-torch's C++ sources (meson's
// cpp_pch): <torch/torch.h> is most of each translation unit's compile time
// (measured in lib/torch/meson.build's comment).
#pragma once

#include <torch/torch.h>
