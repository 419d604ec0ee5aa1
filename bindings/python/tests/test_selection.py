"""bosch.Selection: result files through libbosch (selection.h)."""

import json
import math

import pytest

import bosch
from bosch import selection as bsel


def make_sample():
    sel = bosch.Selection(4, 2, 4)
    sel.mask = [1, 0, 0, 0, 1, 1, 0, 1]
    sel.method = "baseline:bme"
    sel.status = "BOSCH_DONE"
    sel.model_path = "/models/m"
    sel.target_ratio = 0.5
    sel.metric = "exact"
    sel.set_score("raw", 0.75)
    sel.set_score(bosch.ScoreKind.FULL, 1.0)
    sel.set_score("all_swa", 0.5)
    sel.set_score("normalized", 0.5)
    sel.set_kv_saving(1024, 128, 4)
    sel.set_setting("niah.context", 1024)
    sel.set_setting("window", 128)
    sel.set_setting("metric", "exact")
    sel.set_setting("ratio", 0.5)
    sel.set_setting("prefix_cache", True)
    sel.importance = [0.1, 0.2, math.nan, 0.4, 0.5, 0.6, 0.7, 0.8]
    sel.set_evaluations(3)
    return sel


def test_fields():
    sel = make_sample()
    assert (sel.layers, sel.kv_groups, sel.heads_per_group, sel.units) == (4, 2, 4, 8)
    assert sel.mask == [1, 0, 0, 0, 1, 1, 0, 1]
    assert sel.swa_units == 4 and sel.ratio == 0.5
    assert sel.layer_ratios == [0.5, 0.0, 1.0, 0.5]
    assert sel.method == "baseline:bme" and sel.status == "BOSCH_DONE"
    assert sel.model_path == "/models/m" and sel.metric == "exact"
    assert sel.library_version is None
    assert sel.scores["raw"] == 0.75 and math.isnan(sel.scores["objective"])
    kv = sel.kv_saving
    assert (kv["context"], kv["window"], kv["sink"]) == (1024, 128, 4)
    assert kv["fraction"] == pytest.approx(bosch.kv_saving(0.5, 1024, 128, 4))
    assert sel.settings == {"niah.context": 1024, "window": 128, "metric": "exact",
                            "ratio": 0.5, "prefix_cache": True}
    assert sel.setting("absent", 7) == 7
    assert sel.evaluations == {"total": 3, "replayed": 0}
    assert math.isnan(sel.importance[2])
    sel.method = None
    assert sel.method is None


def test_unset_fields():
    sel = bosch.Selection(2, 2)
    assert sel.mask == [0, 0, 0, 0]
    assert sel.importance is None and sel.kv_saving is None and sel.evaluations is None
    assert math.isnan(sel.target_ratio) and sel.settings == {}


def test_round_trip(tmp_path):
    sel = make_sample()
    p1, p2 = tmp_path / "a.json", tmp_path / "b.json"
    sel.write_json(p1)
    back = bosch.read_selection(p1)
    assert back.mask == sel.mask and back.method == sel.method
    assert back.settings == sel.settings
    assert back.library_version == bosch.__version__
    back.write_json(p2)
    assert p1.read_bytes() == p2.read_bytes()
    doc = json.loads(p1.read_text().replace("NaN", "null"))
    assert doc["format"] == "bosch-mask" and doc["format_version"] == 1
    assert doc["unit_mask"] == "10001101"
    assert doc["settings"]["niah"] == {"context": 1024}
    assert doc["unit_importance"][2] is None
    assert len(doc["head_mask"]) == 4 and len(doc["head_mask"][0]) == 8


def test_tsv_per_kv_head(tmp_path):
    sel = make_sample()
    p = tmp_path / "m.tsv"
    sel.write_tsv(p)
    rows = [line.split("\t") for line in p.read_text().splitlines()]
    assert len(rows) == 4 and all(len(r) == 2 for r in rows)  # layers x KV groups
    assert rows == [["0", "1"], ["1", "1"], ["0", "0"], ["1", "0"]]  # 1 = full


def test_write_prefix_and_svg(tmp_path):
    sel = make_sample()
    sel.write(tmp_path / "out")
    for ext in ("json", "tsv", "svg"):
        assert (tmp_path / f"out.{ext}").stat().st_size > 0
    svg = (tmp_path / "out.svg").read_text()
    assert "baseline:bme: SWA ratio 0.500 (target 0.500)" in svg
    assert svg.count("<title>layer ") == 8  # a tooltip per cell
    assert "<title>/models/m</title>" in svg and ">model: m</text>" in svg


def test_read_errors(tmp_path):
    with pytest.raises(bosch.BoschIOError, match="No such file"):
        bosch.Selection.read(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "other"}')
    with pytest.raises(bosch.JournalCorruptError, match='"format" is not "bosch-mask"'):
        bosch.Selection.read(bad)
    bad.write_text('{"format": "bosch-mask", "format_version": 9}')
    with pytest.raises(bosch.JournalMismatchError, match="unsupported format_version 9"):
        bosch.Selection.read(bad)
    bad.write_text('{"format": "bosch-mask", "model": {"layers": 1, "kv_groups": 2, '
                   '"heads_per_group": 1}, "unit_mask": "0"}')
    with pytest.raises(bosch.JournalCorruptError, match="length differs"):
        bosch.Selection.read(bad)


def test_argument_errors(tmp_path):
    with pytest.raises(ValueError):
        bosch.Selection(0, 2)
    sel = bosch.Selection(2, 2)
    with pytest.raises(ValueError):
        sel.mask = [0, 1]
    with pytest.raises(bosch.InvalidArgumentError):
        sel.target_ratio = 2.0
    with pytest.raises(bosch.InvalidArgumentError, match="key"):
        sel.set_setting("a.b.c", 1)
    with pytest.raises(TypeError):
        sel.set_setting("x", [1])
    with pytest.raises(ValueError):
        sel.score("bogus")
    with pytest.raises(bosch.BoschIOError):
        sel.write_json(tmp_path / "no-dir" / "x.json")
    sel.close()
    with pytest.raises(ValueError):
        sel.mask


def test_from_result(problem, testbed, make_opt):
    opt = make_opt(problem)
    res = opt.optimize(batch_evaluator=testbed)
    sel = bosch.Selection.from_result(res, problem)
    assert sel.mask == res.mask and sel.method == "bosch"
    assert sel.status == res.status_name
    assert sel.scores["normalized"] == res.normalized_score
    ev = sel.evaluations
    assert ev["total"] == res.total_evaluations
    assert {k: ev[k] for k in ("anchors", "probe", "alloc", "group")} == res.evaluations


def test_write_history(tmp_path):
    p = tmp_path / "h.jsonl"
    bsel.write_history(p, ["000", [1, 1, 1]], [1.0, 0.25], ["anchors", "baseline"], 1.0, 0.0)
    lines = [json.loads(line) for line in p.read_text().splitlines()]
    assert [r["stage"] for r in lines] == ["anchors", "baseline"]
    assert lines[1] == {"eval": 1, "stage": "baseline", "score": 0.25, "normalized": 0.25,
                        "swa_units": 3, "wall_s": None, "mask": "111"}


def test_exports(tmp_path):
    sel = make_sample()
    assert not sel.is_layer_level
    proj = sel.project_layers()
    # 4 SWA units of 2 per layer: 2 whole layers, those with the most SWA
    # heads (layer 2, then the tie of layers 0 and 3 goes to the higher index:
    # the importance holds a NaN)
    assert proj.is_layer_level and proj.mask == [0, 0, 0, 0, 1, 1, 1, 1]
    assert proj.method == "layer-projection:baseline:bme"
    assert proj.kv_saving["sink"] == 0 and proj.kv_saving["window"] == 128
    assert proj.setting("window") == 128  # the settings are kept
    assert math.isnan(proj.score("raw"))
    sel.export_duo(tmp_path / "duo")
    tsv = (tmp_path / "duo" / "full_attention_heads.tsv").read_text().split()
    assert tsv == ["0", "1", "1", "1", "0", "0", "1", "0"]  # 1 = full
    cfg = json.loads((tmp_path / "duo" / "config.json").read_text())
    assert (cfg["sink_size"], cfg["recent_size"]) == (4, 128)
    src = tmp_path / "config.json"
    src.write_text(json.dumps({"num_hidden_layers": 4, "num_key_value_heads": 2,
                               "num_attention_heads": 8, "model_type": "qwen3"}))
    with pytest.raises(bosch.InvalidArgumentError):
        sel.export_hf(src, tmp_path / "hf.json")  # head-level
    proj.export_hf(src, tmp_path / "hf.json")
    hf = json.loads((tmp_path / "hf.json").read_text())
    assert hf["use_sliding_window"] is True and hf["sliding_window"] == 128
    assert hf["layer_types"] == ["full_attention"] * 2 + ["sliding_attention"] * 2
    assert hf["model_type"] == "qwen3"
    src.write_text(json.dumps({"num_hidden_layers": 5}))
    with pytest.raises(bosch.JournalMismatchError):
        proj.export_hf(src)
    # TensorRT-LLM: the window on sliding layers, max_seq_len on full ones
    proj.export_trtllm(tmp_path / "trt.yaml", max_seq_len=4096)
    lines = (tmp_path / "trt.yaml").read_text().splitlines()
    assert lines[-2:] == ["kv_cache_config:", "  max_attention_window: [4096, 4096, 128, 128]"]
    src.write_text(json.dumps({"num_hidden_layers": 4, "max_position_embeddings": 40960,
                               "model_type": "qwen3"}))
    proj.export_trtllm(tmp_path / "trt.yaml", model_config=src)
    assert "[40960, 40960, 128, 128]" in (tmp_path / "trt.yaml").read_text()
    with pytest.raises(bosch.InvalidArgumentError):
        sel.export_trtllm(tmp_path / "x.yaml", max_seq_len=4096)  # head-level
    with pytest.raises(bosch.InvalidArgumentError):
        proj.export_trtllm(tmp_path / "x.yaml")  # no max_seq_len, no config


def test_overlap_against_sets():
    # the Jaccard index of the full units, against Python's sets
    import random
    rng = random.Random(3)
    L, G = 6, 4
    a, b = bosch.Selection(L, G, 2), bosch.Selection(L, G, 2)
    a.mask = [rng.random() < 0.6 for _ in range(L * G)]
    b.mask = [rng.random() < 0.7 for _ in range(L * G)]
    fa = {u for u, m in enumerate(a.mask) if not m}
    fb = {u for u, m in enumerate(b.mask) if not m}
    overall, per = a.overlap(b)
    assert overall == pytest.approx(len(fa & fb) / len(fa | fb))
    for l in range(L):
        la = {u for u in fa if u // G == l}
        lb = {u for u in fb if u // G == l}
        want = len(la & lb) / len(la | lb) if la | lb else 1.0
        assert per[l] == pytest.approx(want)
    assert b.overlap(a)[0] == overall and a.overlap(a)[0] == 1.0
    with pytest.raises(bosch.InvalidArgumentError, match="shapes differ"):
        a.overlap(bosch.Selection(L, G, 1))
