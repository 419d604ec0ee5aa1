"""The Python binding of this source tree for the bench scripts: the bosch
package of bindings/python over the libraries of build/ (each only where
its environment variable is unset and the file exists)."""
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_binding():
    """(bosch, bosch.backend), loaded over the source tree's build/."""
    for var, rel in (("BOSCH_LIBRARY", "build/lib/libbosch.so.0"),
                     ("BOSCH_TEXT_LIBRARY", "build/lib/text/libbosch-text.so.0"),
                     ("BOSCH_TORCH_LIBRARY", "build/lib/torch/libbosch-torch.so.0")):
        if var not in os.environ and os.path.exists(os.path.join(REPO, rel)):
            os.environ[var] = os.path.join(REPO, rel)
    sys.path.insert(0, os.path.join(REPO, "bindings", "python"))
    import bosch  # noqa: E402 (needs the variables first)
    from bosch import backend  # noqa: E402
    return bosch, backend
