#!/usr/bin/env python3
"""Scoring selections with lm-evaluation-harness (issue 52, part 5), as a user
does it: `python -m bosch.harness` is lm-eval's own command line with the
model type `bosch-hf` registered (lm-eval's HFLM, the selection applied by
bosch.hf.apply). This tool

  1. installs lm-eval 0.4.13 hash-pinned (tools/real_models/
     harness-requirements.txt) with --target into a cache, beside the Python
     that runs it (PyTorch 2.x and transformers 5: CI's .ci/torch2-deps);
  2. writes two local lm-eval tasks (YAML over JSON Lines files, loaded with
     --include_path): `bosch_niah`, RULER's niah_single_2 through
     libbosch-text (SmolLM2's tokenizer and ChatML, needles kept out of the
     last two windows, held-out seed 1, so the prompts are those bosch eval
     scores), and `bosch_qa`, short questions written here, whose prompts
     fit in the window (short-context ability, which a selection should
     keep). Both are scored as RULER scores (string_match_all: the share of
     the answers the continuation contains; QA: any of the accepted forms);
  3. runs `python -m bosch.harness --model bosch-hf --model_args
     pretrained=DIR,selection=SEL.json ...` once per selection (and once
     with none: the model as it is) and prints one line each.

  /opt/libbosch-torch2/bin/python tools/real_models/harness.py --model smollm2/f32 \\
      --selection bosch=/tmp/t/bosch-r0.75.json --selection best=... [--needles 50]
  ... harness.py --smoke     (CI, test 'real-harness': converts SmolLM2 itself,
                              8 needles; full attention must answer, all-SWA not)

Exit 77 (meson's skip) without torch/transformers or without the network
when nothing is cached.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
REQUIREMENTS = os.path.join(HERE, "harness-requirements.txt")

# Short questions: a prompt (ChatML) of 20-25 tokens, within a 32-token
# window plus sinks, and an answer of at most 24 tokens, whose last tokens
# reach a little past it: short-context ability, which a selection should
# keep as full attention does.
QA = [
    ("What is the capital of France?", ["Paris"]),
    ("What is the capital of Italy?", ["Rome"]),
    ("What is the capital of Japan?", ["Tokyo"]),
    ("What is the capital of Germany?", ["Berlin"]),
    ("What is the capital of Spain?", ["Madrid"]),
    ("What is the capital of England?", ["London"]),
    ("What is the largest planet in the solar system?", ["Jupiter"]),
    ("Which planet is known as the Red Planet?", ["Mars"]),
    ("What color is the sky on a clear day?", ["blue"]),
    ("What color is grass?", ["green"]),
    ("How many days are in a week?", ["7", "seven"]),
    ("How many legs does a spider have?", ["8", "eight"]),
    ("What is 2 plus 2?", ["4", "four"]),
    ("What is the opposite of hot?", ["cold"]),
    ("What do bees make?", ["honey"]),
    ("What is frozen water called?", ["ice"]),
    ("Who wrote Romeo and Juliet?", ["Shakespeare"]),
    ("What is the chemical symbol for water?", ["H2O"]),
    ("What animal is known as the king of the jungle?", ["lion"]),
    ("In which continent is Egypt?", ["Africa"]),
]

NIAH_YAML = """task: bosch_niah
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: "{{{{prompt}}}}"
doc_to_target: "{{{{answers[0]}}}}"
process_results: !function bosch_utils.match_all
generation_kwargs:
  until: ["<|im_end|>", "<|endoftext|>"]
  max_gen_toks: {max_new}
  do_sample: false
metric_list:
  - metric: match
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""

QA_YAML = NIAH_YAML.replace("task: bosch_niah", "task: bosch_qa").replace(
    "bosch_utils.match_all", "bosch_utils.match_any")

UTILS = '''"""RULER's string_match_all, and its any-of form for short answers."""


def match_all(doc, results):
    pred = results[0].lower()
    return {"match": sum(a.lower() in pred for a in doc["answers"]) / len(doc["answers"])}


def match_any(doc, results):
    pred = results[0].lower()
    return {"match": float(any(a.lower() in pred for a in doc["answers"]))}
'''


def install(cache):
    """lm-eval and what it imports, hash-pinned, in cache/lm-eval (once)."""
    lib = os.path.join(cache, "lm-eval")
    stamp = os.path.join(lib, ".requirements")
    with open(REQUIREMENTS) as f:
        want = f.read()
    if not os.path.exists(stamp) or open(stamp).read() != want:
        shutil.rmtree(lib, ignore_errors=True)
        r = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "install",
                            "--quiet", "--no-deps", "--only-binary", ":all:", "--require-hashes",
                            "--target", lib, "-r", REQUIREMENTS], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "pip")
        with open(stamp, "w") as f:
            f.write(want)
    return lib


def write_tasks(model, tasks, needles, context, window, seed, max_new):
    """The two tasks' JSON Lines, YAML and utils in `tasks`."""
    from bosch import text
    sys.path.insert(0, HERE)
    from smollm2 import needle_depth_max
    os.makedirs(tasks, exist_ok=True)
    tok = text.Tokenizer(os.path.join(model, "tokenizer.json"))
    style = tok.chat_style
    depth_max = needle_depth_max(window, context)
    with text.TextTask.ruler(tok, "niah_single_2", context, needles, seed,
                             depth_min=0.0, depth_max=depth_max) as t:
        rows = [{"prompt": t.prompt(i), "answers": t.answers(i)} for i in range(len(t))]
    with open(os.path.join(tasks, "niah.jsonl"), "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    with open(os.path.join(tasks, "qa.jsonl"), "w") as f:
        for q, answers in QA:
            prompt = text.chat_format([("user", q + " Answer in one word.")], style=style)
            f.write(json.dumps({"prompt": prompt, "answers": answers}) + "\n")
    for name, yaml, data in (("bosch_niah.yaml", NIAH_YAML, "niah.jsonl"),
                             ("bosch_qa.yaml", QA_YAML, "qa.jsonl")):
        with open(os.path.join(tasks, name), "w") as f:
            f.write(yaml.format(data=os.path.abspath(os.path.join(tasks, data)),
                                max_new=max_new if name == "bosch_niah.yaml" else 24))
    with open(os.path.join(tasks, "bosch_utils.py"), "w") as f:
        f.write(UTILS)
    return len(rows), len(QA)


def run_harness(lib, model, selection, tasks, out, batch):
    """`python -m bosch.harness` for one selection; returns ({task: score}, seconds)."""
    args = "pretrained=%s,dtype=float32" % model
    if selection:
        args += ",selection=%s" % selection
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [lib, os.path.join(ROOT, "bindings", "python")] +
        ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])),
        TQDM_DISABLE="1", TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, "-m", "bosch.harness", "--model", "bosch-hf", "--model_args", args,
           "--tasks", "bosch_niah,bosch_qa", "--include_path", tasks, "--device", "cpu", "--batch_size", str(batch),
           "--output_path", out, "--log_samples"]
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.time() - t0
    if r.returncode != 0:
        raise RuntimeError("%s\n%s" % (" ".join(cmd), r.stderr[-3000:]))
    found = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs
             if f.startswith("results") and f.endswith(".json")]
    with open(max(found, key=os.path.getmtime)) as f:
        res = json.load(f)["results"]
    return {t: res[t]["match,none"] for t in ("bosch_niah", "bosch_qa")}, wall, " ".join(cmd)


def all_swa(model, path, window, sink):
    """An all-SWA selection of `model`'s shape (the smoke test's lower anchor)."""
    import bosch
    with open(os.path.join(model, "config.json")) as f:
        cfg = json.load(f)
    G = cfg["num_key_value_heads"]
    sel = bosch.Selection(cfg["num_hidden_layers"], G, cfg["num_attention_heads"] // G)
    sel.mask = [1] * (cfg["num_hidden_layers"] * G)
    sel.method = "all-swa"
    sel.set_setting("window", window)
    sel.set_setting("sink", sink)
    sel.write_json(path)
    return path


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="a converted SmolLM2 directory (smollm2.py --out X: X/f32)")
    ap.add_argument("--selection", action="append", default=[], metavar="NAME=PREFIX.json")
    ap.add_argument("--needles", type=int, default=50)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--window", type=int, default=32, help="of the all-SWA anchor and depths")
    ap.add_argument("--sink", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1, help="of the needle prompts (1: held out)")
    ap.add_argument("--max-new", type=int, default=16)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--out", default="", help="tasks and lm-eval outputs (default: temporary)")
    ap.add_argument("--smoke", action="store_true",
                    help="CI: convert SmolLM2 here, 8 needles, full and all-SWA, checked")
    ap.add_argument("--cache", default=os.environ.get(
        "BOSCH_REAL_MODELS_CACHE", os.path.expanduser("~/.cache/libbosch/real-models")))
    args = ap.parse_args(argv)
    import importlib.util
    for m in ("torch", "transformers"):
        if importlib.util.find_spec(m) is None:
            print("skipped: no %s in %s" % (m, sys.executable))
            return 77
    tmp = tempfile.mkdtemp(prefix="bosch-harness-")
    out = args.out or tmp
    try:
        try:
            lib = install(args.cache)
            model = args.model
            if args.smoke and not model:
                sys.path.insert(0, HERE)
                import smollm2
                gguf = smollm2.fetch(args.cache)
                dirs, _ = smollm2.convert(gguf, os.path.join(tmp, "smollm2"))
                model = dirs["f32"]
        except (RuntimeError, OSError) as exc:
            print("skipped: cannot install lm-eval or fetch the model (%s)"
                  % str(exc).splitlines()[0])
            return 77
        if not model:
            ap.error("--model is required (or --smoke)")
        sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
        needles = 8 if args.smoke else args.needles
        n, q = write_tasks(model, os.path.join(out, "tasks"), needles, args.context,
                           args.window, args.seed, args.max_new)
        sels = [("full attention", "")] + [tuple(s.split("=", 1)) for s in args.selection]
        if args.smoke:
            sels.append(("all-SWA", all_swa(model, os.path.join(out, "all-swa.json"),
                                            args.window, args.sink)))
        print("lm-eval 0.4.13 on %s: bosch_niah %d prompts at %d tokens, bosch_qa %d questions"
              % (model, n, args.context, q), flush=True)
        scores = {}
        for name, sel in sels:
            s, wall, cmd = run_harness(lib, model, sel, os.path.join(out, "tasks"),
                                       os.path.join(out, "results", name.replace(" ", "-")),
                                       args.batch)
            scores[name] = s
            print("%-16s niah %.3f  qa %.3f  (%.0f s)" % (name, s["bosch_niah"], s["bosch_qa"],
                                                          wall), flush=True)
            print("    $ " + cmd, flush=True)
        if args.smoke:
            full, swa = scores["full attention"], scores["all-SWA"]
            ok = full["bosch_niah"] >= 0.75 and swa["bosch_niah"] <= 0.25 and \
                full["bosch_qa"] >= 0.5
            print("%s: full attention must find >= 6 of 8 needles, all-SWA <= 2, and answer "
                  ">= half the questions" % ("ok" if ok else "FAIL"))
            return 0 if ok else 1
        return 0
    finally:
        if not args.out:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
