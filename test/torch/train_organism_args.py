#!/usr/bin/python3
"""tools/train_organism.py refuses a bad --unit-drop before it writes
anything: a clear message, a non-zero exit, no output directory.
Skipped (77) when this python cannot import torch (the script needs it)."""
import os
import subprocess
import sys
import tempfile

try:
    import numpy  # noqa: F401
    import torch  # noqa: F401
except ImportError:
    sys.exit(77)

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                      "train_organism.py")
CASES = [
    (["--unit-drop", "16:0.5"], "the unit must be below 16"),         # 4 layers x 4 groups
    (["--unit-drop", "3:1.5"], "the probability within 0..1"),
    (["--unit-drop", "3"], "--unit-drop wants U:P[,U:P...], got '3'"),
    (["--unit-drop", "1:0.5,x:0.2"], "--unit-drop wants U:P[,U:P...]"),
    (["--unit-drop", "1:0.5:2"], "--unit-drop wants U:P[,U:P...]"),
]
failed = 0
with tempfile.TemporaryDirectory() as tmp:
    for i, (args, expect) in enumerate(CASES):
        out = os.path.join(tmp, f"run{i}")
        p = subprocess.run([sys.executable, SCRIPT, out, "--steps", "1"] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ok = p.returncode != 0 and expect in p.stderr and not os.path.exists(out)
        if not ok:
            failed += 1
            print(f"FAIL {args}: rc {p.returncode}, exists {os.path.exists(out)}, "
                  f"stderr {p.stderr.strip()!r}")
        else:
            print(f"ok {args}")
sys.exit(1 if failed else 0)
