"""bosch.backend.Checkpoint: a model directory in one call
(bosch_torch_checkpoint_open), on the shipped organism and on copies of it
with another bosch.json. Skipped without libbosch-torch or the organism."""

import os

import pytest

import bosch

if not bosch.backend_available():
    pytest.skip("libbosch-torch not found", allow_module_level=True)

from bosch import backend  # noqa: E402

ORGANISM = backend.organism_dir()
if ORGANISM is None:
    pytest.skip("the organism model was not found (set BOSCH_ORGANISM)", allow_module_level=True)


def copy_of_organism(tmp_path, bosch_json=None):
    d = tmp_path / "model"
    d.mkdir()
    for name in ("config.json", "model.safetensors"):
        os.symlink(os.path.abspath(os.path.join(ORGANISM, name)), d / name)
    if bosch_json is not None:
        (d / "bosch.json").write_text(bosch_json)
    return d


def test_opens_the_organism_as_the_command_does():
    with backend.Checkpoint.open(ORGANISM, device="cpu", threads=1) as ck:
        assert ck.model.units == 16 and ck.model.vocab == 128
        assert ck.task_source.endswith("/calib.jsonl")
        assert ck.suggested == {"window": 32, "sink": 4, "budget": 200, "metric": "logprob"}
        assert set(ck.suggested_files) == {"calib", "heldout", "heldout_multi"}
        assert ck.tokenizer is None and ck.tokenizer_path == ""
        assert ck.description.startswith("f32 on cpu, ")
        assert len(ck.task) == 32
        ev = ck.evaluator()
        assert (ev.window, ev.sink, ev.metric) == (32, 4, "logprob")
        # the same task as reading the file by hand
        with backend.Task.read_jsonl(ck.suggested_files["calib"]) as t:
            assert t.prompt_len == ck.task.prompt_len and len(t) == len(ck.task)
        text = repr(ck)
        assert "calib.jsonl" in text and "32 samples" in text
    # closing the checkpoint closes what it lent, and what borrows that
    assert ck.model.closed and ck.task.closed and ev.closed


def test_heldout_role_and_given_tasks(tmp_path):
    with backend.Checkpoint.open(ORGANISM, device="cpu", role="heldout") as ck:
        assert ck.task_source.endswith("/heldout.jsonl")
    with backend.Checkpoint.open(ORGANISM, device="cpu", task="niah", context=48,
                                 samples=2) as ck:
        assert ck.task_source == "niah"
        assert len(ck.task) == 2 and ck.task.prompt_len == 48
        # the directory's suggested window wins over the NIAH default
        assert ck.evaluator().window == 32
    d = copy_of_organism(tmp_path)
    with backend.Checkpoint.open(d, device="cpu", context=64, samples=2) as ck:
        assert ck.task_source == "niah" and ck.suggested == {}
        assert ck.evaluator().window == 16  # the bosch command's default: context / 4
    with pytest.raises(ValueError):
        backend.Checkpoint.open(ORGANISM, role="test")


def test_errors_name_what_failed(tmp_path):
    d = copy_of_organism(tmp_path, '{"windw": 6}')
    with pytest.raises(bosch.InvalidArgumentError, match='bosch.json: unknown key "windw"'):
        backend.Checkpoint.open(d, device="cpu")
    with pytest.raises(bosch.BoschIOError, match="cannot load the model in"):
        backend.Checkpoint.open(tmp_path / "none", device="cpu")
    with pytest.raises(bosch.InvalidArgumentError, match="a generated task is limited"):
        backend.Checkpoint.open(ORGANISM, device="cpu", task="niah", samples=65536,
                                context=4096)


def test_export_hf_dir(tmp_path):
    sel = bosch.Selection(4, 4, 2)
    sel.mask = "0000000011111111"
    sel.set_kv_saving(256, 32, 0)
    out = tmp_path / "served"
    linked, kept = sel.export_hf_dir(ORGANISM, out)
    assert kept == 0 and linked == len([f for f in os.listdir(ORGANISM)
                                        if f not in ("config.json",) and not f.startswith(".")])
    assert os.path.islink(out / "model.safetensors")
    with backend.Checkpoint.open(out, device="cpu", task="niah", context=64, samples=1) as ck:
        assert ck.model.sliding_window == 32
        assert ck.model.sliding_layers == [False, False, True, True]
    with pytest.raises(bosch.InvalidArgumentError, match="model directory itself"):
        sel.export_hf_dir(ORGANISM, ORGANISM)
    sel.close()
    with pytest.raises(ValueError, match="the selection has been closed"):
        sel.ratio
