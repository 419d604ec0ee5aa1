"""tools/real_models/smollm2_table.py's refusals (issue 52): a results
directory made with other settings, another model or other generated tasks
is refused by name before anything runs, and left as it was; one made with
the same ones is reused. On a stand-in checkpoint directory (a byte-level
tokenizer, placeholder weights: prepare() reads only their bytes), so no
model runs."""
import json
import os
import sys

import pytest

import bosch
from bosch import _lib

if _lib.load_text()[0] is None:
    pytest.skip("libbosch-text not found", allow_module_level=True)

from _tiny_tokenizer import tiny_tokenizer_json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "real_models"))
import smollm2_table  # noqa: E402


def args_for(model, out, **kw):
    a = dict(model=str(model), out=str(out), task="niah_single_1", context=600, window=32,
             sink=4, calib=2, heldout=3, budget=120, screen_lengths=[400])
    a.update(kw)
    return type("Args", (), a)


@pytest.fixture
def model(tmp_path):
    d = tmp_path / "model"
    d.mkdir()
    (d / "tokenizer.json").write_text(tiny_tokenizer_json(byte_level=True))
    (d / "config.json").write_text('{"model_type": "llama"}')
    (d / "model.safetensors").write_bytes(b"weights one")
    return d


def snapshot(out):
    return {p: open(os.path.join(out, p), "rb").read()
            for p in ("settings.json", "model/calib.jsonl", "model/heldout.jsonl")}


def test_same_settings_reuse_the_directory(model, tmp_path):
    out = tmp_path / "out"
    mdir = smollm2_table.prepare(args_for(model, out))
    with open(os.path.join(mdir, "bosch.json")) as f:
        assert json.load(f)["calib"] == "calib.jsonl"
    before = snapshot(out)
    os.unlink(os.path.join(mdir, "bosch.json"))  # the model directory is made again
    assert smollm2_table.prepare(args_for(model, out)) == mdir
    assert snapshot(out) == before


@pytest.mark.parametrize("change, named", [
    ({"window": 64}, "'window': (32, 64)"),
    ({"heldout": 4}, "'heldout': (3, 4)"),
    ("weights", "weights_sha256"),
])
def test_other_settings_or_model_are_refused(model, tmp_path, change, named):
    out = tmp_path / "out"
    smollm2_table.prepare(args_for(model, out))
    before = snapshot(out)
    if change == "weights":
        (model / "model.safetensors").write_bytes(b"weights two")
        change = {}
    with pytest.raises(SystemExit) as e:
        smollm2_table.prepare(args_for(model, out, **change))
    assert named in str(e.value) and "use another --out" in str(e.value)
    assert snapshot(out) == before


def test_tasks_generated_differently_are_refused(model, tmp_path):
    out = tmp_path / "out"
    mdir = smollm2_table.prepare(args_for(model, out))
    # the same settings, but the recorded tasks are not what this machine generates
    stamp = os.path.join(out, "settings.json")
    with open(stamp) as f:
        st = json.load(f)
    st["heldout.jsonl_sha256"] = "0" * 64
    with open(stamp, "w") as f:
        json.dump(st, f)
    os.unlink(os.path.join(mdir, "bosch.json"))
    with pytest.raises(SystemExit) as e:
        smollm2_table.prepare(args_for(model, out))
    assert "heldout.jsonl generated here differs" in str(e.value)
    assert not os.path.exists(os.path.join(mdir, "bosch.json"))
    assert not [n for n in os.listdir(mdir) if n.endswith(".tmp")]
    with open(stamp) as f:
        assert json.load(f)["heldout.jsonl_sha256"] == "0" * 64


def test_screen_renderings_are_made_recorded_and_checked(model, tmp_path):
    # the calibration samples rendered shorter for the screened rows: made
    # where missing, their sha256 added to settings.json, a different one
    # refused by name with the file left as it was
    out = tmp_path / "out"
    a = args_for(model, out)
    mdir = smollm2_table.prepare(a)
    smollm2_table.prepare_screens(a, mdir)
    path = os.path.join(mdir, "calib-s400.jsonl")
    with open(os.path.join(out, "settings.json")) as f:
        st = json.load(f)
    assert st["calib-s400.jsonl_sha256"] == smollm2_table.sha256(path)
    with open(path) as f, open(os.path.join(mdir, "calib.jsonl")) as g:
        short = [json.loads(x) for x in f]
        full = [json.loads(x) for x in g]
    assert [s["answers"] for s in short] == [s["answers"] for s in full]
    smollm2_table.prepare_screens(a, mdir)  # nothing to do
    st["calib-s400.jsonl_sha256"] = "0" * 64
    with open(os.path.join(out, "settings.json"), "w") as f:
        json.dump(st, f)
    before = open(path, "rb").read()
    with pytest.raises(SystemExit, match="calib-s400.jsonl generated here differs"):
        smollm2_table.prepare_screens(a, mdir)
    assert open(path, "rb").read() == before
    assert not [n for n in os.listdir(mdir) if n.endswith(".tmp")]
