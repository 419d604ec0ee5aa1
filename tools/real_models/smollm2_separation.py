#!/usr/bin/env python3
"""Where full attention and all-SWA part on SmolLM2 (issue 52, part 2's
sizing): RULER's needle task through libbosch-text with SmolLM2's
tokenizer and chat format, at each (context, window) of a grid, scored by
libbosch-torch's evaluator under the all-full and the all-SWA masks.

Needle depths: a needle within the last window of the prompt is seen by any
mask, so such samples measure nothing. The depths are spread over
[0, depth_max] with depth_max = 1 - 2 * window / context: the needle then
lies more than a window (plus the question and the chat markup after the
haystack) before the position that answers.

  PYTHONPATH=bindings/python BOSCH_LIBRARY_DIR=build/lib \\
    python3 tools/real_models/smollm2_separation.py --model DIR/f32 \\
        [--grid 512:32,1024:64,...] [--samples 16] [--task niah_single_2]

Prints one line per point: full and all-SWA accuracy (metric exact: every
answer token argmax-correct under teacher forcing), the samples, seconds.
"""
import argparse
import os
import sys
import time

import bosch
from bosch import backend, text

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from smollm2 import needle_depth_max  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--grid", default="512:32,512:64,1024:32,1024:64,1024:128,2048:64,2048:128")
    ap.add_argument("--samples", type=int, default=16)
    ap.add_argument("--task", default="niah_single_2")
    ap.add_argument("--sink", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    tok = text.Tokenizer(os.path.join(args.model, "tokenizer.json"))
    print("model %s, task %s, %d samples per point, sink %d, metric exact"
          % (args.model, args.task, args.samples, args.sink), flush=True)
    with backend.Model(args.model, device="cpu", dtype="f32", threads=args.threads) as model:
        for point in args.grid.split(","):
            context, window = (int(x) for x in point.split(":"))
            depth_max = needle_depth_max(window, context)
            t0 = time.time()
            with backend.Task.ruler(tok, args.task, context, args.samples, args.seed,
                                    depth_min=0.0, depth_max=depth_max) as task, \
                    backend.Evaluator(model, task, window=window, sink=args.sink,
                                      metric="exact") as ev:
                full, swa = ev.anchors()
            print("context %5d window %4d depths [0, %.3f]: full %.3f all-SWA %.3f "
                  "(%d samples, %.0f s)" % (context, window, depth_max, full, swa,
                                            args.samples, time.time() - t0), flush=True)
    print("bosch %s" % bosch.__version__)


if __name__ == "__main__":
    main()
