"""bosch.backend on the families beyond Qwen3 (issue 51): a Llama (both
biases, tied embeddings, GQA 3:1), a Mistral (its window on every layer,
and none) and a Qwen2 (q/k/v biases, max_window_layers) checkpoint, written
here with the standard library (config.json + safetensors, f32): open,
forward, identity, evaluate, search, static scores. Their logits are
compared with transformers in tools/hf_parity.py; this checks that Python
reaches every path. Skipped when libbosch-torch cannot be found."""

import json
import math
import random

import pytest

import bosch

if not bosch.backend_available():
    pytest.skip("libbosch-torch not found", allow_module_level=True)

from bosch import backend  # noqa: E402
from test_moe import write_safetensors  # noqa: E402

LAYERS, HIDDEN, HEADS, KV, HEAD_DIM, INTER, VOCAB = 2, 24, 6, 2, 8, 32, 40


def write_checkpoint(directory, arch, extra, seed=3, q_bias=False, o_bias=False,
                     mlp_bias=False, tie=False):
    rng = random.Random(seed)

    def linear(out, inp):
        return (out, inp), [rng.gauss(0, 1 / math.sqrt(inp)) for _ in range(out * inp)]

    def vec(n, scale=0.1, base=0.0):
        return (n,), [base + scale * rng.gauss(0, 1) for _ in range(n)]

    t = {"model.embed_tokens.weight": ((VOCAB, HIDDEN),
                                       [rng.gauss(0, 1) for _ in range(VOCAB * HIDDEN)]),
         "model.norm.weight": vec(HIDDEN, base=1.0)}
    if not tie:
        t["lm_head.weight"] = linear(VOCAB, HIDDEN)
    for layer in range(LAYERS):
        p = "model.layers.%d." % layer
        t[p + "input_layernorm.weight"] = vec(HIDDEN, base=1.0)
        t[p + "post_attention_layernorm.weight"] = vec(HIDDEN, base=1.0)
        for name, out in (("q", HEADS * HEAD_DIM), ("k", KV * HEAD_DIM), ("v", KV * HEAD_DIM)):
            t[p + "self_attn.%s_proj.weight" % name] = linear(out, HIDDEN)
            if q_bias:
                t[p + "self_attn.%s_proj.bias" % name] = vec(out)
        t[p + "self_attn.o_proj.weight"] = linear(HIDDEN, HEADS * HEAD_DIM)
        if o_bias:
            t[p + "self_attn.o_proj.bias"] = vec(HIDDEN)
        for name, shape in (("gate", (INTER, HIDDEN)), ("up", (INTER, HIDDEN)),
                            ("down", (HIDDEN, INTER))):
            t[p + "mlp.%s_proj.weight" % name] = linear(*shape)
            if mlp_bias:
                t[p + "mlp.%s_proj.bias" % name] = vec(shape[0])
    directory.mkdir(parents=True, exist_ok=True)
    write_safetensors(str(directory / "model.safetensors"), t)
    config = dict(architectures=[arch], vocab_size=VOCAB, hidden_size=HIDDEN,
                  intermediate_size=INTER, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                  num_key_value_heads=KV, head_dim=HEAD_DIM, rms_norm_eps=1e-5, rope_theta=10000.0,
                  tie_word_embeddings=tie, hidden_act="silu", max_position_embeddings=512)
    config.update(extra)
    (directory / "config.json").write_text(json.dumps(config, indent=2))
    return directory


FAMILIES = {
    "llama": ("LlamaForCausalLM", dict(model_type="llama", attention_bias=True, mlp_bias=True,
                                       rope_parameters=dict(rope_type="llama3", factor=8.0,
                                                            low_freq_factor=1.0,
                                                            high_freq_factor=4.0,
                                                            original_max_position_embeddings=64)),
              dict(q_bias=True, o_bias=True, mlp_bias=True, tie=True)),
    "mistral": ("MistralForCausalLM", dict(model_type="mistral", sliding_window=None), {}),
    "qwen2": ("Qwen2ForCausalLM", dict(model_type="qwen2", use_sliding_window=False),
              dict(q_bias=True)),
}


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family_dir(request, tmp_path_factory):
    arch, extra, weights = FAMILIES[request.param]
    d = tmp_path_factory.mktemp(request.param) / "ckpt"
    return request.param, write_checkpoint(d, arch, extra, **weights)


def test_family_model_evaluates_and_searches(family_dir):
    np = pytest.importorskip("numpy")
    name, d = family_dir
    with backend.Model(str(d), device="cpu", dtype="f32", threads=1) as model:
        assert model.units == LAYERS * KV and model.heads_per_group == HEADS // KV
        assert model.identity.startswith("xxh3:")
        tokens = [[5, 6, 7, 8, 9, 10, 11, 12], [13, 14, 15, 16, 17, 18, 19, 20]]
        full = model.forward(tokens, positions=list(range(8)))
        assert full.shape == (2, 8, VOCAB) and np.isfinite(full).all()
        swa = model.forward(tokens, masks=[b"\x01" * model.units] * 2, window=2, sink=0,
                            positions=list(range(8)))
        assert not np.allclose(swa, full, atol=1e-4)
        alone = model.forward(tokens[:1], positions=list(range(8)))
        assert np.allclose(alone[0], full[0], atol=1e-5)
        with backend.Task.niah(vocab=VOCAB, context=48, samples=2, seed=1) as task, \
                backend.Evaluator(model, task, window=4, sink=1, metric="logprob") as ev:
            s_full, s_swa = ev.anchors()
            assert math.isfinite(s_full) and math.isfinite(s_swa) and s_full != s_swa
            opt = bosch.Optimizer(model.problem(ratio=0.5), seed=0, budget=12, batch_size=4)
            result = opt.optimize(evaluator=ev)
            assert result.ok and sum(result.mask) == model.units // 2
            assert ev.score(result.mask) == pytest.approx(result.score, abs=1e-4)
            for kind in ("retrieval", "fisher"):
                sc = model.scores(task, kind, window=4, sink=1)
                assert len(sc.units) == model.units
                assert all(math.isfinite(v) for v in sc.units), (name, kind)


def test_family_identity_names_the_architecture(tmp_path):
    """The same weights under two families are two models (different
    forwards), so their identities differ."""
    weights = dict(q_bias=False)
    a = write_checkpoint(tmp_path / "m", "MistralForCausalLM", dict(sliding_window=None),
                         **weights)
    b = write_checkpoint(tmp_path / "l", "LlamaForCausalLM", {}, **weights)
    with backend.Model(str(a), device="cpu", dtype="f32") as ma, \
            backend.Model(str(b), device="cpu", dtype="f32") as mb:
        assert ma.identity != mb.identity
        tokens = [[5, 6, 7, 8, 9, 10]]
        np = pytest.importorskip("numpy")
        # ...while their logits agree: Mistral without a window is Llama without biases.
        assert np.allclose(ma.forward(tokens, positions=[5]), mb.forward(tokens, positions=[5]),
                           atol=1e-6)


def test_mistral_window_fixes_every_layer(tmp_path):
    d = write_checkpoint(tmp_path / "w", "MistralForCausalLM", dict(sliding_window=3))
    np = pytest.importorskip("numpy")
    with backend.Model(str(d), device="cpu", dtype="f32") as model:
        tokens = [[5, 6, 7, 8, 9, 10, 11, 12]]
        # The config slides every layer over 3 tokens whatever the masks say.
        full = model.forward(tokens, positions=list(range(8)))
        masked = model.forward(tokens, masks=[b"\x01" * model.units], window=2, sink=1,
                               positions=list(range(8)))
        assert np.array_equal(full, masked)


def test_unknown_architecture_points_to_bosch_hf(tmp_path):
    d = write_checkpoint(tmp_path / "g", "GPT2LMHeadModel", {})
    with pytest.raises(bosch.InvalidArgumentError, match="bosch.hf"):
        backend.Model(str(d), device="cpu", dtype="f32")
