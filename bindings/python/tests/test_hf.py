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
    # selection = libbosch-torch's hybrid KV cache, token for token
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
