"""bosch.backend: libbosch-torch through ctypes, on the shipped organism
(models/organism: a 4-layer Qwen3 with 4 KV groups of 2 query heads, vocab
128). Skipped when libbosch-torch or the organism cannot be found
(BOSCH_ORGANISM, else bosch.backend.organism_dir()).

The end-to-end test also runs the bosch command on the result file when
BOSCH_CLI names it. The forward passes are short: two calibration samples
of 255 tokens, on one libtorch thread (BOSCH_TEST_THREADS to change; on a
shared CPU one thread is several times faster than two).
"""

import gc
import json
import math
import os
import re
import subprocess
import sys

import pytest

import bosch
from bosch import _lib

if not bosch.backend_available():
    pytest.skip("libbosch-torch not found", allow_module_level=True)

from bosch import backend  # noqa: E402
from bosch import text as T  # noqa: E402
from _tiny_tokenizer import tiny_tokenizer_json  # noqa: E402

ORGANISM = backend.organism_dir()
if ORGANISM is None:
    pytest.skip("the organism model was not found (set BOSCH_ORGANISM)", allow_module_level=True)

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
WINDOW, SINK = 32, 4  # the organism's bosch.json


@pytest.fixture(scope="module")
def model():
    threads = int(os.environ.get("BOSCH_TEST_THREADS", "1"))
    with backend.Model(ORGANISM, device="cpu", dtype="f32", threads=threads) as m:
        yield m


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    # two calibration samples: enough to separate full from SWA attention
    path = tmp_path_factory.mktemp("organism") / "calib2.jsonl"
    with open(os.path.join(ORGANISM, "calib.jsonl")) as f:
        path.write_text("".join(f.readlines()[:2]))
    with backend.Task.read_jsonl(path) as t:
        yield t


@pytest.fixture(scope="module")
def evaluator(model, task):
    with backend.Evaluator(model, task, window=WINDOW, sink=SINK, metric="logprob",
                           batch=8) as ev:
        yield ev


def test_every_declared_function_exists():
    assert _lib.missing_torch_symbols == [] and _lib.missing_text_symbols == []
    cdll, path = _lib.load_torch()
    assert path == backend.library_path and os.path.isfile(path)
    for name in _lib.TORCH_PROTOTYPES:
        fn = getattr(cdll, name)
        returns_nothing = name.endswith(("_free", "_params_init"))
        assert fn.argtypes is not None and (fn.restype is not None or returns_nothing), name


@pytest.mark.parametrize("header,protos", [("torch.h", "TORCH_PROTOTYPES"),
                                           ("text.h", "TEXT_PROTOTYPES")])
def test_every_public_function_is_declared(header, protos):
    # Each non-deprecated function of the header has a prototype in _lib.
    path = os.path.join(SOURCE_ROOT, "include", "bosch", header)
    if not os.path.isfile(path):
        pytest.skip(f"{path} not found (not a source tree)")
    src = open(path).read()
    decls = re.findall(r"BOSCH_(?:TORCH|TEXT)_API\s+(BOSCH_TORCH_DEPRECATED\([^)]*\)\s+)?"
                       r"[\w\s\*]*?\b(bosch_\w+)\s*\(", src)
    public = {name for deprecated, name in decls if not deprecated}
    assert len(public) > 20
    assert public - set(getattr(_lib, protos)) == set()
    assert set(getattr(_lib, protos)) - public == set()


def test_model(model):
    assert model.shape == backend.ModelShape(4, 4, 2, 128)
    assert (model.layers, model.kv_groups, model.heads_per_group, model.vocab) == (4, 4, 2, 128)
    assert model.units == 16 and model.query_heads == 32
    assert model.device == "cpu" and model.dtype == "f32"
    size = os.path.getsize(os.path.join(ORGANISM, "model.safetensors"))
    assert abs(model.param_bytes - size) < 64 * 1024  # f32 weights as stored
    assert model.last_error == ""
    assert "layers=4" in repr(model)
    p = model.problem(ratio=0.25)
    assert (p.layers, p.kv_groups, p.heads_per_group, p.target_units) == (4, 4, 2, 4)
    assert model.problem().target_units == 8
    assert backend.dtype_name(backend.DType.BF16) == "bf16" and backend.dtype_name(9) is None
    assert isinstance(backend.cuda_available(), bool)
    assert backend.model_defaults(ORGANISM)["window"] == WINDOW


def test_threads():
    before = backend.get_threads()
    try:
        backend.set_threads(1)
        assert backend.get_threads() == 1
    finally:
        backend.set_threads(before)
    with pytest.raises(ValueError):
        backend.set_threads(0)


def test_open_errors(tmp_path):
    with pytest.raises(bosch.BoschIOError, match=r"bosch_torch_model_open_device: .*nope"):
        backend.Model(tmp_path / "nope", device="cpu")
    assert backend.create_error()[0] == bosch.ErrorCode.E_IO
    with pytest.raises(bosch.InvalidArgumentError, match="tpu"):
        backend.Model(ORGANISM, device="tpu")
    with pytest.raises(ValueError, match="dtype"):
        backend.Model(ORGANISM, dtype="f8")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text(json.dumps({"architectures": ["GPT2"]}))
    os.symlink(os.path.join(ORGANISM, "model.safetensors"), tmp_path / "bad" / "model.safetensors")
    with pytest.raises(bosch.InvalidArgumentError, match="GPT2"):
        backend.Model(tmp_path / "bad", device=backend.Device.CPU)


def test_tasks(model, task, tmp_path):
    assert len(task) == task.samples == 2 and task.prompt_len == 255
    assert task.prompt_len_of(1) == 255
    with pytest.raises(IndexError):
        task.prompt_len_of(2)
    task.write_jsonl(tmp_path / "t.jsonl")
    first = json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])
    assert first == json.loads(open(os.path.join(ORGANISM, "calib.jsonl")).readline())
    n = backend.Task.niah(vocab=128, context=64, samples=3, seed=1)
    assert len(n) == 3 and n.prompt_len == 64
    # niah_ids with the list {3, ..., vocab-1} and markers 0, 1, 2 is niah itself
    ids = backend.Task.niah_ids(range(3, 128), context=64, samples=3, seed=1)
    n.write_jsonl(tmp_path / "a.jsonl")
    ids.write_jsonl(tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    with pytest.raises(bosch.InvalidArgumentError, match="bosch_torch_task_create_niah"):
        backend.Task.niah(vocab=128, context=4, samples=1)
    with pytest.raises(bosch.BoschIOError, match="bosch_torch_task_read_jsonl"):
        backend.Task.read_jsonl(tmp_path / "missing.jsonl")
    # a task with ids outside the vocabulary is refused by the evaluator
    big = backend.Task.niah(vocab=1000, context=64, samples=2, seed=1)
    with pytest.raises(bosch.InvalidArgumentError, match="outside the vocabulary"):
        backend.Evaluator(model, big, window=8)
    with pytest.raises(ValueError):
        backend.Evaluator(model, task, window=0)
    with pytest.raises(ValueError, match="metric"):
        backend.Evaluator(model, task, window=8, metric="bleu")


def test_full_and_swa_masks(evaluator):
    s_full, s_swa = evaluator.anchors()
    # the organism retrieves beyond the window: all-SWA is much worse
    assert s_full > s_swa + 1.0
    assert s_full < 0 and s_swa < 0  # mean log-probabilities
    units = evaluator.units
    # one mask in every accepted form gives the same score
    assert evaluator.score(bytes(units)) == pytest.approx(s_full, abs=1e-4)
    assert evaluator.score([1] * units) == pytest.approx(s_swa, abs=1e-4)
    assert evaluator.score("1" * units) == pytest.approx(s_swa, abs=1e-4)
    half = [1, 0] * (units // 2)
    batch = evaluator.score_batch([bytes(units), half, b"\x05" * units])
    assert batch[0] == pytest.approx(s_full, abs=1e-4) and batch[2] == pytest.approx(s_swa,
                                                                                    abs=1e-4)
    assert evaluator(b"\x00" * units + bytes(half)) == pytest.approx(batch[:2], abs=1e-4)
    assert evaluator.score_batch([]) == []
    with pytest.raises(ValueError):
        evaluator.score([0] * (units - 1))
    with pytest.raises(TypeError, match="score"):
        evaluator.score_batch([0] * units)


def test_prefix_cache_reference(model, task):
    # Any reference gives the uncached scores; a wrong length is refused.
    units = model.units
    masks = [bytes(units), [1, 0] * (units // 2), [0] * 4 + [1] * (units - 4)]
    with backend.Evaluator(model, task, window=WINDOW, sink=SINK, metric="logprob",
                           prefix_cache=False) as ev:
        want = ev.score_batch(masks)
    with backend.Evaluator(model, task, window=WINDOW, sink=SINK, metric="logprob") as ev:
        for ref in (None, masks[2], [1] * units):
            assert ev.set_reference(ref) is ev
            assert ev.score_batch(masks) == pytest.approx(want, abs=1e-5)
        with pytest.raises(ValueError):
            ev.set_reference([1] * (units - 1))


def test_noise_and_anchor_tolerance(model, task, evaluator):
    # The organism's anchors are far apart; its rounding noise is tiny.
    noise = evaluator.noise()
    s_full, s_swa = evaluator.anchors()
    assert 0 < noise < 1e-4 and evaluator.noise() == noise
    assert s_full - s_swa > 1e4 * noise
    # A window covering every prompt: the anchors tie bit for bit, and the
    # noise as anchor tolerance refuses the search.
    with backend.Evaluator(model, task, window=100000, metric="logprob") as ev:
        a, b = ev.anchors()
        assert a == b
        opt = bosch.Optimizer(model.problem(ratio=0.5), budget=20)
        opt.set_anchor_tolerance(ev.noise())
        with pytest.raises(bosch.AnchorsError):
            opt.optimize(batch_evaluator=ev)


def test_masks_as_numpy(evaluator):
    np = pytest.importorskip("numpy")
    units = evaluator.units
    m = np.zeros((2, units), dtype=np.int64)
    m[1, :] = 1
    s = evaluator.score_batch(m)
    assert s == pytest.approx(list(evaluator.anchors()), abs=1e-4)
    assert evaluator.score(np.ones(units, dtype=bool)) == pytest.approx(s[1], abs=1e-4)


def test_anchors_ordered_per_layer(evaluator):
    # SWA in more layers never helps here: all-full > one SWA layer > all-SWA
    s_full, s_swa = evaluator.anchors()
    g = evaluator.units // 4
    one_layer = [1] * g + [0] * (3 * g)
    s_one = evaluator.score(one_layer)
    assert s_full >= s_one >= s_swa


def test_requests(model, evaluator):
    # bosch_torch_request_batch_eval: at fidelity 1 every draw scores the whole
    # task (the score of score_batch); below 1 a share of the samples
    units = evaluator.units
    half = [1, 0] * (units // 2)
    full_scores = evaluator.score_batch([bytes(units), half])
    got = evaluator.score_requests([bytes(units), half, half], [1.0, 1.0, 1.0], [0, 0, 3])
    assert got == pytest.approx(full_scores + full_scores[1:], abs=1e-4)
    # two samples: fidelity 0.5 is one sample, draw d starts at sample d mod 2
    s0, s1, s2 = evaluator.score_requests([half] * 3, [0.5] * 3, [0, 1, 2])
    assert s2 == pytest.approx(s0, abs=1e-4)
    assert all(math.isfinite(s) for s in (s0, s1))
    assert evaluator.score_requests([], [], []) == []
    with pytest.raises(bosch.InvalidArgumentError):
        evaluator.score_requests([half], [0.0], [0])
    # plugged into the optimizer: the library calls bosch_torch_request_batch_eval
    problem = model.problem(ratio=0.5)
    opt = bosch.Optimizer(problem, seed=0, budget=24, batch_size=8, confirm=2)
    result = opt.optimize(request_batch_evaluator=evaluator)
    assert result.ok and result.feasible and result.total_evaluations <= 24
    assert result.confirmations == 2
    assert result.score == pytest.approx(result.search_score, abs=1e-4)  # f = 1: same score
    opt = bosch.Optimizer(problem, seed=0, budget=24, batch_size=8, screen_fidelity=0.5)
    result = opt.optimize(request_evaluator=evaluator)  # takes the batch form
    assert result.ok and result.cost <= 24
    assert result.cost == pytest.approx(sum(h.fidelity for h in result.history))


def test_requests_in_parts(model):
    # bosch_torch_sample_eval: a request's samples scored in parts, their
    # values added in order over their count, give its score bit for bit
    # with one sample per forward (what an MPI job cuts over its ranks)
    with backend.Task.read_jsonl(os.path.join(ORGANISM, "calib.jsonl")) as t, \
            backend.Evaluator(model, t, window=WINDOW, sink=SINK, metric="logprob") as ev:
        ev.set_forward_samples(1)
        mask = [1, 1, 0, 1] * (ev.units // 4)
        assert ev.request_samples(1.0) == 32 and ev.request_samples(0.25) == 8
        for fid, draw in ((1.0, 0), (0.25, 3)):
            k = ev.request_samples(fid)
            values = (ev.sample_values(mask, fid, draw, 0, 3) +
                      ev.sample_values(mask, fid, draw, 3, k - 5) +
                      ev.sample_values(mask, fid, draw, k - 2))
            assert len(values) == k
            total = 0.0
            for v in values:
                total += v
            assert total / k == ev.score_requests([mask], [fid], [draw])[0]
        with pytest.raises(bosch.InvalidArgumentError, match="of a request of 32"):
            ev.sample_values(mask, 1.0, 0, 30, 3)
        with pytest.raises(ValueError, match="outside"):
            ev.request_samples(0.0)


def test_static_scores(model, task, evaluator):
    for name in backend.SCORERS:
        if name == "fisher":
            continue  # a backward pass: covered by the C tests
        sc = model.scores(task, name, window=WINDOW, sink=SINK)
        assert len(sc.heads) == model.query_heads and len(sc.units) == model.units
        hpg = model.heads_per_group
        for u in range(model.units):
            heads = sc.heads[u * hpg:(u + 1) * hpg]
            if name == "duo-on-the-fly":  # kvpress averages a unit's heads
                assert sc.units[u] == pytest.approx(sum(heads) / hpg, abs=1e-12)
            else:
                assert sc.units[u] == max(heads)
    loc = model.scores(task, backend.Scorer.LOCALITY, window=WINDOW, sink=SINK)
    assert all(0.0 <= v <= 1.0 for v in loc.heads)
    assert loc == model.scores(task, "locality", window=WINDOW, sink=SINK)  # deterministic
    # the baseline of the scores is a feasible mask
    p = model.problem(ratio=0.5)
    mask = bosch.baseline_static(p, loc.units)
    assert sum(mask) == 8 and p.is_feasible(mask)
    assert bosch.baseline_static_heads(p, loc.heads, "max") == mask
    with pytest.raises(ValueError, match="scorer"):
        model.scores(task, "attention")


def test_forward(model):
    np = pytest.importorskip("numpy")
    tokens = [[5, 6, 7, 8, 9, 10], [11, 12, 13, 14, 15, 16]]
    logits = model.forward(tokens, positions=[4, 5])
    assert logits.shape == (2, 2, 128) and logits.dtype == np.float32
    last = model.forward(tokens)
    assert last.shape == (2, 1, 128)
    assert np.allclose(last[:, 0], logits[:, 1], atol=1e-4)
    # with window 2, SWA changes the last position's logits
    swa = model.forward(tokens, masks=[b"\x01" * 16] * 2, window=2, sink=0)
    assert not np.allclose(swa[:, 0], last[:, 0], atol=1e-4)
    with pytest.raises(ValueError):
        model.forward([[1, 2], [3]])
    with pytest.raises(bosch.InvalidArgumentError, match="position"):
        model.forward(tokens, positions=[6])


def test_generate_through_the_kv_cache(model, task):
    # The task's first sample continued through the hybrid KV cache under a
    # mask of 12 sliding units: the tokens of a greedy loop over the masked
    # forward; the bytes held as the mask says. Its 255 tokens + 12 new ones
    # would pass the organism's 256 positions (refused, before any forward):
    # the first 244 continue.
    s = task.sample(0)
    assert len(s.prompt) == task.prompt_len_of(0) and s.answer and s.max_new == len(s.answer) + 16
    mask = bytes([1] * 12 + [0] * 4)
    with pytest.raises(bosch.InvalidArgumentError,
                       match=r"255 tokens \+ max_new 12 = 267 positions, more than the model's "
                             r"max_position_embeddings \(256\)"):
        model.generate(s.prompt, mask=mask, window=WINDOW, sink=SINK, max_new=12)
    prompt = s.prompt[:244]
    g = model.generate(prompt, mask=mask, window=WINDOW, sink=SINK, max_new=12)
    seq = list(prompt)
    for _ in range(12):
        row = model.forward([seq], masks=[mask], window=WINDOW, sink=SINK)[0, 0]
        seq.append(max(range(len(row)), key=lambda v: row[v]))
    assert g.tokens == seq[len(prompt):]
    assert model.generate(prompt, mask=mask, window=WINDOW, sink=SINK, max_new=12,
                          reference=True).tokens == g.tokens
    cap = len(prompt) + 12
    per_token = 2 * 32 * 4  # keys and values, head_dim 32, f32
    assert g.kv_bytes_full == 16 * cap * per_token
    assert g.kv_bytes == (4 * cap + 12 * (WINDOW + SINK)) * per_token
    assert g.prefill_seconds >= 0 and g.decode_seconds >= 0
    # a stop token ends it, kept; errors name the problem
    assert model.generate(prompt, mask=mask, window=WINDOW, sink=SINK, max_new=12,
                          stop=[g.tokens[2]]).tokens[-1] == g.tokens[2]
    with pytest.raises(bosch.InvalidArgumentError, match="vocabulary"):
        model.generate([1, 500], max_new=2)
    with pytest.raises(ValueError):
        model.generate([], max_new=2)
    with pytest.raises(IndexError):
        task.sample(len(task))


def test_text_task_on_the_organism(model, tmp_path):
    tok = T.Tokenizer.from_json(tiny_tokenizer_json())
    path = tmp_path / "text.jsonl"
    rows = [{"text": "the key is 42. what is the key? the key is", "answers": ["42"],
             "max_new_tokens": 3},
            {"messages": [{"role": "user", "content": "the code is 7. the code is"}],
             "answers": ["7"]}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    t = backend.Task.from_text_jsonl(path, tok)
    assert len(t) == 2 and t.prompt_len_of(0) == len(tok.encode(rows[0]["text"]))
    for metric in ("logprob", "match", "exact"):
        with backend.Evaluator(model, t, window=8, sink=1, metric=metric) as ev:
            s_full, s_swa = ev.anchors()
            if metric != "logprob":
                assert 0.0 <= s_full <= 1.0 and 0.0 <= s_swa <= 1.0
    # the task borrows the tokenizer: closing the tokenizer closes the task first
    ev = backend.Evaluator(model, t, window=8)
    tok.close()
    assert t.closed and ev.closed
    # RULER tasks encode (the organism's 256 positions are too few to score them)
    with T.Tokenizer.from_json(tiny_tokenizer_json()) as tok2:
        r = backend.Task.ruler(tok2, "niah_single_1", context=600, samples=2, seed=1)
        assert len(r) == 2 and 400 < r.prompt_len <= 600
        r.close()


def test_lifetimes(model, task):
    ev = backend.Evaluator(model, task, window=WINDOW, sink=SINK)
    # the evaluator keeps its model and task alive
    assert ev.model is model and ev.task is task
    ev.close()
    ev.close()
    with pytest.raises(ValueError, match="closed"):
        ev.score(bytes(16))
    # closing a model closes its evaluators first
    m2 = backend.Model(ORGANISM, device="cpu")
    ev2 = backend.Evaluator(m2, task, window=WINDOW, sink=SINK)
    m2.close()
    assert ev2.closed and m2.closed
    assert not task.closed
    opt = bosch.Optimizer(bosch.Problem(4, 4, 2), seed=0, budget=4)
    ev3 = backend.Evaluator(model, task, window=WINDOW, sink=SINK)
    opt.set_batch_evaluator(ev3)
    ev3.close()
    with pytest.raises(ValueError, match="evaluator used as evaluator has been closed"):
        opt.optimize()
    del ev, ev2, ev3, m2
    gc.collect()


def test_end_to_end_search_and_result_file(model, task, evaluator, tmp_path):
    """Scores the organism through the backend, searches with the core
    optimizer (bosch_torch_batch_eval called by the library), writes the
    result file with bosch.Selection, and lets the C command read it."""
    problem = model.problem(ratio=0.5)
    s_full, s_swa = evaluator.anchors()
    seen = []
    opt = bosch.Optimizer(problem, seed=0, budget=16, batch_size=8)
    result = opt.optimize(evaluator=evaluator, progress=seen.append)
    assert result.ok and result.feasible and sum(result.mask) == 8
    assert result.total_evaluations <= 16 and seen
    assert result.anchors == pytest.approx((s_full, s_swa), abs=1e-4)
    # the reported score is the evaluator's score of the mask
    assert evaluator.score(result.mask) == pytest.approx(result.score, abs=1e-4)
    assert result.score > s_swa  # (a mask may score above full attention)
    # ask/tell through the same evaluator from Python gives the same result
    opt2 = bosch.Optimizer(problem, seed=0, budget=16, batch_size=8)
    while batch := opt2.ask():
        for i, s in enumerate(evaluator.score_batch(batch)):
            opt2.tell(i, s)
    assert opt2.result().mask == result.mask

    sel = bosch.Selection.from_result(result, problem)
    sel.method = "bosch"
    sel.metric = "logprob"
    sel.model_path = ORGANISM
    sel.set_kv_saving(task.prompt_len, WINDOW, SINK)
    sel.set_setting("window", WINDOW)
    sel.set_setting("sink", SINK)
    sel.set_setting("metric", "logprob")
    sel.set_setting("task", "calib.jsonl[:2]")
    prefix = tmp_path / "organism-50"
    sel.write(prefix)
    back = bosch.Selection.read(f"{prefix}.json")
    assert back.mask == result.mask and back.method == "bosch"
    assert back.settings["window"] == WINDOW and back.metric == "logprob"
    assert (tmp_path / "organism-50.tsv").is_file() and (tmp_path / "organism-50.svg").is_file()

    cli = os.environ.get("BOSCH_CLI")
    if not cli:
        pytest.skip("BOSCH_CLI is not set: the bosch command was not run on the file")
    proc = subprocess.run([cli, "show", f"{prefix}.json"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "4 layers x 4 KV groups x 2 query heads/group, SWA units 8/16" in proc.stdout
    assert "settings: window 32, sink 4, metric logprob" in proc.stdout
    for layer in range(4):  # the map: one row per layer, '#' = SWA
        row = "".join("#" if v else "." for v in result.mask[layer * 4:(layer + 1) * 4])
        assert re.search(rf"^\s*{layer}\s+{re.escape(row)}\s", proc.stdout, re.M), proc.stdout


def test_sliding_layers_of_the_organism(model):
    # the organism's config has no sliding window: no layer slides
    assert model.sliding_window == 0
    assert model.sliding_layers == [False] * 4
    assert model.max_positions == 256  # its config.json's max_position_embeddings
    assert model.problem().unit_fix(0, 0) is None


def test_sliding_layers_of_a_hybrid_config(tmp_path):
    # the organism's weights under a config whose layers 1 and 3 slide
    cfg = json.load(open(os.path.join(ORGANISM, "config.json")))
    cfg.update(use_sliding_window=True, sliding_window=16,
               layer_types=["full_attention", "sliding_attention"] * 2)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    os.symlink(os.path.join(ORGANISM, "model.safetensors"), tmp_path / "model.safetensors")
    with backend.Model(tmp_path, device="cpu") as m:
        assert m.sliding_window == 16
        assert m.sliding_layers == [False, True, False, True]
        p = m.problem()
        assert [p.unit_fix(layer, 0) for layer in range(4)] == [None, "swa", None, "swa"]


def test_one_libbosch_in_the_process():
    # libbosch-torch and libbosch-text bind to the libbosch the binding loaded
    # (the loader shares a soname once loaded), so problems and evaluators
    # cross between them safely.
    if not os.path.exists("/proc/self/maps"):
        pytest.skip("no /proc/self/maps")
    files = {os.path.realpath(line.split()[-1]) for line in open("/proc/self/maps")
             if re.search(r"/libbosch(-text|-torch)?\.so", line)}
    by = {}
    for f in files:
        by.setdefault(re.search(r"libbosch(-text|-torch)?", os.path.basename(f)).group(0),
                      set()).add(f)
    assert by["libbosch"] == {os.path.realpath(bosch.library_file)}
    assert by["libbosch-text"] == {os.path.realpath(bosch.text.library_path)}
    assert by["libbosch-torch"] == {os.path.realpath(backend.library_path)}


def test_example_script(tmp_path):
    """examples/search_organism.py, the README's walk-through, runs."""
    script = os.path.join(HERE, "..", "examples", "search_organism.py")
    env = dict(os.environ, BOSCH_ORGANISM=ORGANISM, BOSCH_LIBRARY=bosch.library_file,
               BOSCH_TEXT_LIBRARY=bosch.text.library_path,
               BOSCH_TORCH_LIBRARY=backend.library_path, PYTHONPATH=os.path.dirname(HERE))
    out = tmp_path / "out" / "organism"
    proc = subprocess.run([sys.executable, script, "--samples", "2", "--budget", "12",
                           "--device", "cpu", "--threads", "1", "--out", str(out)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "search: BOSCH_" in proc.stdout and "locality baseline" in proc.stdout
    sel = bosch.Selection.read(f"{out}.json")
    assert sel.swa_units == 8 and sel.settings["metric"] == "logprob"


def test_run_identity_refuses_another_task_on_resume(model, task, tmp_path):
    # The evaluator's identity goes into the journal: a resume with another
    # metric or task is refused naming the key; the same evaluator resumes.
    ident = model.identity
    assert re.fullmatch(r"xxh3:[0-9a-f]{16}-[0-9a-f]{16}", ident), ident
    with backend.Model(ORGANISM, device="cpu", dtype="f32") as again:
        assert again.identity == ident  # same files, same identity
    path = tmp_path / "j.bin"

    def run(metric, t, budget=12):
        with backend.Evaluator(model, t, window=WINDOW, sink=SINK, metric=metric) as ev:
            opt = bosch.Optimizer(model.problem(ratio=0.5), seed=1, budget=budget)
            opt.set_journal(path, mode="auto")
            ev.identify(opt)
            assert opt.get_run_identity("torch.model") == ident
            assert opt.get_run_identity("torch.metric") == metric
            return opt.optimize(batch_evaluator=ev)

    first = run("logprob", task)
    with pytest.raises(bosch.JournalMismatchError, match=r"identity\.torch\.metric"):
        run("exact", task)
    with backend.Task.niah(model.vocab, 64, 2, seed=9) as other:
        with pytest.raises(bosch.JournalMismatchError, match=r"identity\.torch\.task"):
            run("logprob", other)
    again = run("logprob", task)
    assert again.replayed == first.total_evaluations


def _write_task(path, samples):
    path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    return backend.Task.read_jsonl(path)


def test_screen_task_scores_screened_requests(model, tmp_path):
    # Length as a fidelity (issue 53): with a screen task (the same samples,
    # shorter prompts: here the last 100 tokens of each), a request below
    # fidelity 1 is scored on every screen sample, as an evaluator of the
    # screen task scores it; requests at 1 are untouched. Bad screen tasks
    # are refused by name and change nothing; the screen task enters the
    # run identity.
    with open(os.path.join(ORGANISM, "calib.jsonl")) as f:
        rows = [json.loads(line) for line in f.readlines()[:4]]
    short = [dict(r, prompt=r["prompt"][-100:]) for r in rows]
    full_t = _write_task(tmp_path / "full.jsonl", rows)
    short_t = _write_task(tmp_path / "short.jsonl", short)
    with full_t, short_t, \
            backend.Evaluator(model, full_t, window=WINDOW, sink=SINK, metric="logprob") as ev, \
            backend.Evaluator(model, short_t, window=WINDOW, sink=SINK, metric="logprob") as sev:
        m = [1, 0] * (ev.units // 2)
        on_full, = ev.score_batch([m])
        on_short, = sev.score_batch([m])
        quarter, = ev.score_requests([m], [0.25], [0])  # one sample of the full task
        assert on_short != pytest.approx(on_full, abs=1e-3)
        assert ev.request_samples(0.25) == 1
        ev.set_screen_task(short_t)
        got = ev.score_requests([m, m, m], [0.25, 1.0, 0.5], [0, 0, 3])
        assert got[0] == pytest.approx(on_short, abs=1e-6)  # every screen sample, any draw
        assert got[2] == pytest.approx(on_short, abs=1e-6)
        assert got[1] == pytest.approx(on_full, abs=1e-6)
        assert got[0] != pytest.approx(quarter, abs=1e-3)
        assert ev.request_samples(0.25) == 4 and ev.request_samples(1.0) == 4
        parts = ev.sample_values(m, 0.25, 0, 0, 4)
        assert sum(parts) / 4 == pytest.approx(on_short, abs=1e-5)
        assert ev.score_batch([m])[0] == pytest.approx(on_full, abs=1e-6)
        opt = bosch.Optimizer(model.problem(ratio=0.5), seed=1, budget=12)
        ev.identify(opt)
        assert opt.get_run_identity("torch.screen_task") not in (None, "")
        assert opt.get_run_identity("torch.screen_task") != opt.get_run_identity("torch.task")
        # refusals: named, and the screen task in place stays
        other = [dict(r, answer=[r["answer"][0] ^ 1] + r["answer"][1:]) for r in short]
        longer = [dict(short[0], prompt=rows[0]["prompt"] + rows[0]["prompt"][:4])] + short[1:]
        for bad, why in ((short[:3], "3 samples, the evaluator's task 4"),
                         (other, "other answers"),
                         (longer, "prompt tokens")):
            with _write_task(tmp_path / "bad.jsonl", bad) as t:
                with pytest.raises(bosch.InvalidArgumentError, match=why):
                    ev.set_screen_task(t)
        assert ev.score_requests([m], [0.25], [0])[0] == pytest.approx(on_short, abs=1e-6)
        ev.set_screen_task(None)
        assert ev.score_requests([m], [0.25], [0])[0] == pytest.approx(quarter, abs=1e-6)
        opt = bosch.Optimizer(model.problem(ratio=0.5), seed=1, budget=12)
        ev.identify(opt)
        assert opt.get_run_identity("torch.screen_task") is None
