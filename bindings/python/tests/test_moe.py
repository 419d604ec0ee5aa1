"""bosch.backend on a Qwen3-MoE checkpoint (Qwen3MoeForCausalLM), unchanged
from the dense model: open, forward, evaluate, search, static scores. The
checkpoint is written here (config.json + safetensors, f32, in the hub's
layout of one tensor per expert) with the standard library only. Skipped
when libbosch-torch cannot be found."""

import json
import math
import random
import struct

import pytest

import bosch

if not bosch.backend_available():
    pytest.skip("libbosch-torch not found", allow_module_level=True)

from bosch import backend  # noqa: E402

LAYERS, HIDDEN, HEADS, KV, HEAD_DIM = 2, 16, 4, 2, 8
EXPERTS, PER_TOKEN, MOE_I, DENSE_I, VOCAB = 4, 2, 8, 24, 40


def write_safetensors(path, tensors):
    """tensors: {name: (shape, list of floats)}, stored as F32."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        shape, values = tensors[name]
        blob = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": list(shape),
                        "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_moe_checkpoint(directory, seed=3):
    rng = random.Random(seed)

    def linear(out, inp):
        return (out, inp), [rng.gauss(0, 1 / math.sqrt(inp)) for _ in range(out * inp)]

    def norm(n):
        return (n,), [1 + 0.1 * rng.gauss(0, 1) for _ in range(n)]

    t = {"model.embed_tokens.weight": ((VOCAB, HIDDEN),
                                       [rng.gauss(0, 1) for _ in range(VOCAB * HIDDEN)]),
         "model.norm.weight": norm(HIDDEN), "lm_head.weight": linear(VOCAB, HIDDEN)}
    for layer in range(LAYERS):
        p = "model.layers.%d." % layer
        t[p + "input_layernorm.weight"] = norm(HIDDEN)
        t[p + "post_attention_layernorm.weight"] = norm(HIDDEN)
        t[p + "self_attn.q_proj.weight"] = linear(HEADS * HEAD_DIM, HIDDEN)
        t[p + "self_attn.k_proj.weight"] = linear(KV * HEAD_DIM, HIDDEN)
        t[p + "self_attn.v_proj.weight"] = linear(KV * HEAD_DIM, HIDDEN)
        t[p + "self_attn.o_proj.weight"] = linear(HIDDEN, HEADS * HEAD_DIM)
        t[p + "self_attn.q_norm.weight"] = norm(HEAD_DIM)
        t[p + "self_attn.k_norm.weight"] = norm(HEAD_DIM)
        if layer == 0:  # mlp_only_layers: [0]
            t[p + "mlp.gate_proj.weight"] = linear(DENSE_I, HIDDEN)
            t[p + "mlp.up_proj.weight"] = linear(DENSE_I, HIDDEN)
            t[p + "mlp.down_proj.weight"] = linear(HIDDEN, DENSE_I)
            continue
        t[p + "mlp.gate.weight"] = linear(EXPERTS, HIDDEN)
        for e in range(EXPERTS):
            x = p + "mlp.experts.%d." % e
            t[x + "gate_proj.weight"] = linear(MOE_I, HIDDEN)
            t[x + "up_proj.weight"] = linear(MOE_I, HIDDEN)
            t[x + "down_proj.weight"] = linear(HIDDEN, MOE_I)
    directory.mkdir(parents=True, exist_ok=True)
    write_safetensors(str(directory / "model.safetensors"), t)
    config = dict(architectures=["Qwen3MoeForCausalLM"], model_type="qwen3_moe",
                  vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=DENSE_I,
                  num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                  num_key_value_heads=KV, head_dim=HEAD_DIM, rms_norm_eps=1e-6,
                  rope_theta=10000.0, tie_word_embeddings=False, hidden_act="silu",
                  num_experts=EXPERTS, num_experts_per_tok=PER_TOKEN,
                  moe_intermediate_size=MOE_I, norm_topk_prob=True, decoder_sparse_step=1,
                  mlp_only_layers=[0], use_sliding_window=False, sliding_window=None)
    (directory / "config.json").write_text(json.dumps(config, indent=2))
    return directory


@pytest.fixture(scope="module")
def moe_dir(tmp_path_factory):
    return write_moe_checkpoint(tmp_path_factory.mktemp("moe") / "ckpt")


def test_moe_model_evaluates_and_searches(moe_dir):
    np = pytest.importorskip("numpy")
    with backend.Model(str(moe_dir), device="cpu", dtype="f32", threads=1) as model:
        assert model.units == LAYERS * KV and model.heads_per_group == HEADS // KV
        assert model.experts == (EXPERTS, PER_TOKEN, LAYERS - 1)  # layer 0 is dense
        tokens = [[5, 6, 7, 8, 9, 10, 11, 12], [13, 14, 15, 16, 17, 18, 19, 20]]
        full = model.forward(tokens, positions=list(range(8)))
        assert full.shape == (2, 8, VOCAB) and np.isfinite(full).all()
        swa = model.forward(tokens, masks=[b"\x01" * model.units] * 2, window=2, sink=0,
                            positions=list(range(8)))
        assert not np.allclose(swa, full, atol=1e-4)
        # each sequence alone: routing is per token
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
            sc = model.scores(task, "retrieval", window=4, sink=1)
            assert len(sc.units) == model.units
            assert all(math.isfinite(v) for v in sc.units)


def test_moe_refusal_names_the_field(moe_dir, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "model.safetensors").write_bytes((moe_dir / "model.safetensors").read_bytes())
    config = json.loads((moe_dir / "config.json").read_text())
    config["num_experts_per_tok"] = EXPERTS + 1
    (bad / "config.json").write_text(json.dumps(config))
    with pytest.raises(bosch.InvalidArgumentError, match="num_experts_per_tok"):
        backend.Model(str(bad), device="cpu", dtype="f32")
