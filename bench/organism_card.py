#!/usr/bin/python3
"""Measures the organism's retrieval and its single-unit effects (issue 5).

Through `bosch eval` on the model's held-out tasks (exact-match accuracy):
  - single-needle NIAH with full attention and with every unit SWA;
  - multi-needle NIAH (4 needles, one queried) likewise;
  - every unit alone SWA (the others full) and every unit alone full (the
    others SWA): the table of single-unit effects.
Prints a Markdown report (and writes it with --markdown).

The mask files are written by libbosch through the Python binding
(bindings/python, bosch.Selection), loaded from --library.

Usage: bench/organism_card.py [--bosch build/cli/bosch] [--model models/organism]
                              [--library build/lib/libbosch.so.0]
                              [--work DIR] [--markdown FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_binding(library):
    """The bosch package of bindings/python over `library`."""
    if library:
        os.environ["BOSCH_LIBRARY"] = os.path.abspath(library)
    sys.path.insert(0, os.path.join(REPO, "bindings", "python"))
    import bosch  # noqa: E402 (needs BOSCH_LIBRARY first)
    return bosch


def evaluate(bosch, model, mask_path, task):
    p = subprocess.run([bosch, "eval", "--mask", mask_path, "--model", model, "--task", task,
                        "--metric", "exact"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if p.returncode != 0:
        sys.exit(f"organism_card: bosch eval failed: {p.stderr}")
    m = re.search(r"^score (\S+) \(full (\S+), all-SWA (\S+)\)", p.stdout, re.M)
    return float(m.group(1)), float(m.group(2)), float(m.group(3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bosch", default="build/cli/bosch")
    ap.add_argument("--model", default="models/organism")
    ap.add_argument("--library", default="build/lib/libbosch.so.0",
                    help="libbosch for the Python binding ('' = the binding's own lookup)")
    ap.add_argument("--work", default=None)
    ap.add_argument("--markdown")
    args = ap.parse_args()
    bosch = load_binding(args.library)
    work = args.work or tempfile.mkdtemp(prefix="organism-card-")
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(args.model, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(args.model, "bosch.json")) as f:
        sugg = json.load(f)
    L, G = cfg["num_hidden_layers"], cfg["num_key_value_heads"]
    H = cfg["num_attention_heads"] // G
    U = L * G

    def mask_file(name, bits):
        path = os.path.join(work, name + ".json")
        sel = bosch.Selection(L, G, H)
        sel.mask = bits
        sel.method = name
        sel.set_setting("window", sugg.get("window", 32))
        sel.set_setting("sink", sugg.get("sink", 4))
        sel.write_json(path)
        sel.close()
        return path

    heldout = os.path.join(args.model, sugg["heldout"])
    multi = os.path.join(args.model, sugg.get("heldout_multi", "heldout4.jsonl"))
    full_mask = mask_file("full", [0] * U)
    _, f1, s1 = evaluate(args.bosch, args.model, full_mask, heldout)
    _, f4, s4 = evaluate(args.bosch, args.model, full_mask, multi)
    alone_swa, alone_full = [], []
    for u in range(U):
        bits = [0] * U
        bits[u] = 1
        alone_swa.append(evaluate(args.bosch, args.model, mask_file(f"swa{u}", bits), heldout)[0])
        bits = [1] * U
        bits[u] = 0
        alone_full.append(evaluate(args.bosch, args.model, mask_file(f"full{u}", bits), heldout)[0])
        print(f"unit {u}: alone SWA {alone_swa[-1]:.3f}, alone full {alone_full[-1]:.3f}",
              file=sys.stderr, flush=True)

    out = []
    out.append(f"Window {sugg.get('window', 32)}, sink {sugg.get('sink', 4)}; exact-match "
               f"accuracy on held-out prompts of {cfg.get('max_position_embeddings')} tokens.")
    out.append("")
    out.append("| task | full attention | every unit SWA |")
    out.append("|---|---|---|")
    out.append(f"| single needle (`{sugg['heldout']}`) | {f1:.3f} | {s1:.3f} |")
    out.append(f"| 4 needles, one queried (`{os.path.basename(multi)}`) | {f4:.3f} | {s4:.3f} |")
    out.append("")
    out.append("Single-unit effects on the single-needle task (unit = layer x KV group):")
    out.append("")
    out.append("| layer | " + " | ".join(f"group {g}: alone SWA / alone full" for g in range(G)) + " |")
    out.append("|---|" + "---|" * G)
    for layer in range(L):
        cells = [f"{alone_swa[layer * G + g]:.3f} / {alone_full[layer * G + g]:.3f}"
                 for g in range(G)]
        out.append(f"| {layer} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Alone SWA: that unit SWA, every other full (full attention scores "
               f"{f1:.3f}). Alone full: that unit full, every other SWA (all-SWA scores {s1:.3f}).")
    md = "\n".join(out) + "\n"
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
