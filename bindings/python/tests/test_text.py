"""bosch.text: libbosch-text through ctypes (tokenizer, chat format, text and
RULER tasks). Skipped when libbosch-text cannot be found."""

import gc
import json

import pytest

import bosch
from bosch import _lib

if not bosch.text_available():
    pytest.skip("libbosch-text not found", allow_module_level=True)

import bosch.text as T  # noqa: E402
from _tiny_tokenizer import tiny_tokenizer_json  # noqa: E402


@pytest.fixture(scope="module")
def tok():
    with T.Tokenizer.from_json(tiny_tokenizer_json()) as t:
        yield t


@pytest.fixture(scope="module")
def byte_tok():
    with T.Tokenizer.from_json(tiny_tokenizer_json(byte_level=True)) as t:
        yield t


def test_every_declared_function_exists():
    assert _lib.missing_text_symbols == []
    cdll, _ = _lib.load_text()
    for name in _lib.TEXT_PROTOTYPES:
        assert getattr(cdll, name).argtypes is not None, name


def test_tokenizer(tok, tmp_path):
    assert tok.vocab_size == 51
    assert tok.encode(" the") == [44, 4]
    assert tok.encode(b" the") == [44, 4]
    assert tok.decode(tok.encode("hello there")) == "hello there"
    assert tok.token_id("<|im_end|>") == 50 and tok.is_special(50)
    assert tok.token_id("no such token") is None
    assert tok.token(0) == "a" and tok.token(10_000) is None
    assert tok.is_ordinary(0) and not tok.is_ordinary(50)
    assert tok.ordinary_ids() == list(range(49))
    # where a continuation stops: the special tokens (<|im_start|>,
    # <|im_end|>) and rows past the vocabulary
    assert tok.is_special(49) and tok.is_special(50) and not tok.is_special(48)
    assert tok.stop_ids() == [49, 50] and tok.stop_ids(53) == [49, 50, 51, 52]
    assert tok.stop_ids(3) == []
    with pytest.raises(ValueError, match="rows"):
        tok.stop_ids(-1)
    # added tokens: ids by default, text with special=False
    assert tok.encode("<|im_end|>") == [50]
    assert 50 not in tok.encode("<|im_end|>", special=False)
    assert tok.decode([0, 50, 1], skip_special=True) == "ab"
    assert tok.decode([0, 50, 1]) == "a<|im_end|>b"
    assert tok.encode("") == [] and tok.decode([]) == ""
    with pytest.raises(bosch.InvalidArgumentError):
        tok.decode([999])
    # the same tokenizer from a file
    path = tmp_path / "tokenizer.json"
    path.write_text(tiny_tokenizer_json())
    with T.Tokenizer(path) as t2:
        assert t2.encode(" the") == [44, 4]
    assert t2.closed
    with pytest.raises(ValueError, match="closed"):
        t2.encode("a")


def test_tokenizer_errors_carry_the_c_message(tmp_path):
    with pytest.raises(bosch.BoschIOError, match="bosch_tokenizer_open: .*nonexistent"):
        T.Tokenizer(tmp_path / "nonexistent.json")
    assert T.create_error()[0] == bosch.ErrorCode.E_IO
    with pytest.raises(bosch.InvalidArgumentError, match="bosch_tokenizer_from_json"):
        T.Tokenizer.from_json('{"model": {"type": "WordPiece"}}')


def test_chat_format_and_match():
    m = [{"role": "user", "content": "Hi"}]
    assert T.chat_format(m, generation_prompt=False) == "<|im_start|>user\nHi<|im_end|>\n"
    assert T.chat_format(m) == ("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
                                "<think>\n\n</think>\n\n")
    assert T.chat_format([("user", "Hi")], thinking=True) == \
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    with pytest.raises(bosch.InvalidArgumentError):
        T.chat_format([("robot", "x")])
    assert T.match_all("The Answer is 42", ["answer", "42", "x"]) == pytest.approx(2 / 3)
    assert T.match_all("anything", []) == 0.0


def test_text_task_jsonl(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [{"text": "the key is 42. the key is", "answers": ["42"], "max_new_tokens": 3},
             {"messages": [{"role": "user", "content": "code 7?"}], "answers": ["7", "x"],
              "answer_prefix": "the code is"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with T.TextTask.read_jsonl(path) as task:
        assert len(task) == task.samples == 2
        assert task.prompt(0) == "the key is 42. the key is"
        assert task.prompt(1).startswith("<|im_start|>user\ncode 7?<|im_end|>\n")
        assert task.prompt(1).endswith("the code is")
        assert "<think>" in task.prompt(1) and "<think>" not in task.prompt(1, thinking=True)
        assert task.answers(0) == ["42"] and task.answers(1) == ["7", "x"]
        assert task.target(0) == " 42" and task.target(1) == " 7, x"
        assert task.max_new_tokens(0) == 3 and task.max_new_tokens(1) == 0
        with pytest.raises(IndexError):
            task.prompt(2)
        task.write_jsonl(tmp_path / "back.jsonl")
    with T.TextTask.read_jsonl(tmp_path / "back.jsonl") as back:
        assert back.answers(1) == ["7", "x"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": 3}\n')
    with pytest.raises(bosch.InvalidArgumentError, match="bosch_text_task_read_jsonl"):
        T.TextTask.read_jsonl(bad)


def test_ruler(byte_tok):
    assert T.RULER_TASKS[0] == "niah_single_1" and "niah_multiquery" in T.RULER_TASKS
    assert len(T.RULER_TASKS) == 8
    with T.TextTask.ruler(byte_tok, "niah_single_1", context=600, samples=2, seed=3) as r:
        assert len(r) == 2
        for i in range(2):
            n = len(byte_tok.encode(r.prompt(i)))
            assert 400 < n <= 600
            assert r.answers(i) and all(a in r.prompt(i) for a in r.answers(i))
        again = T.TextTask.ruler(byte_tok, "niah_single_1", context=600, samples=2, seed=3)
        assert again.prompt(1) == r.prompt(1)  # seeded
    with pytest.raises(bosch.InvalidArgumentError, match="too short"):
        T.TextTask.ruler(byte_tok, "niah_single_1", context=100, samples=1)
    with pytest.raises(bosch.InvalidArgumentError, match="niah_nope"):
        T.TextTask.ruler(byte_tok, "niah_nope", context=600, samples=1)


def test_handles_are_freed(tok):
    t = T.Tokenizer.from_json(tiny_tokenizer_json())
    t.close()
    t.close()  # idempotent
    assert repr(t) == "bosch.text.Tokenizer(closed)"
    t = T.Tokenizer.from_json(tiny_tokenizer_json())
    del t
    gc.collect()


def _llama3_style_json() -> str:
    """The byte-level tiny tokenizer with Llama 3's special tokens and
    post-processor (a Sequence of ByteLevel and a TemplateProcessing that
    adds <|begin_of_text|>)."""
    j = json.loads(tiny_tokenizer_json(byte_level=True))
    base = max(j["model"]["vocab"].values()) + 1
    names = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
             "<|end_header_id|>", "<|eot_id|>"]
    j["added_tokens"] = [{"id": base + k, "content": s, "special": True, "normalized": False}
                         for k, s in enumerate(names)]
    bos = names[0]
    j["post_processor"] = {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        {"type": "TemplateProcessing",
         "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [], "special_tokens": {bos: {"id": bos, "ids": [base], "tokens": [bos]}}}]}
    return json.dumps(j)


def test_chat_styles_and_template(tok):
    m = [{"role": "user", "content": " Hi "}]
    assert T.chat_format(m, style="chatml") == \
        "<|im_start|>user\n Hi <|im_end|>\n<|im_start|>assistant\n"
    assert T.chat_format(m, style=T.ChatStyle.LLAMA3, generation_prompt=False) == \
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
    assert T.chat_format(m, style="qwen3") == T.chat_format(m)
    with pytest.raises(ValueError, match="unknown chat style"):
        T.chat_format(m, style="llama2")
    with pytest.raises(ValueError, match="NONE"):
        T.chat_format(m, style=T.ChatStyle.NONE)
    assert T.ChatStyle.LLAMA3.label == "llama3" and T.ChatStyle.NONE.label is None
    # the tiny tokenizer has <|im_start|> and <|im_end|> but no <think>: ChatML
    assert tok.chat_style == T.ChatStyle.CHATML
    assert tok.template == ([], []) and tok.encode("ab", add_special=True) == tok.encode("ab")
    with T.Tokenizer.from_json(_llama3_style_json()) as l3:
        bos = l3.token_id("<|begin_of_text|>")
        assert l3.chat_style == T.ChatStyle.LLAMA3
        assert l3.template == ([bos], [])
        assert l3.encode("ab", add_special=True) == [bos] + l3.encode("ab")


def test_ruler_takes_the_tokenizers_chat_format(tmp_path):
    with T.Tokenizer.from_json(_llama3_style_json()) as l3:
        with T.TextTask.ruler(l3, "niah_single_1", context=600, samples=2, seed=3) as r:
            assert r.chat_style(0) == T.ChatStyle.LLAMA3
            p = r.prompt(0)
            assert p.startswith("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n")
            assert "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n" in p
            assert "<|im_start|>" not in p and "<think>" not in p
            assert len(l3.encode(p)) <= 600
            r.write_jsonl(tmp_path / "r.jsonl")
        with T.TextTask.read_jsonl(tmp_path / "r.jsonl") as back:
            assert back.chat_style(1) == T.ChatStyle.LLAMA3
            back.set_chat_style("chatml")
            assert back.prompt(1).startswith("<|im_start|>user\n")
        # a tokenizer with no known chat format: chat refused, plain text fine
        j = json.loads(_llama3_style_json())
        j["added_tokens"] = j["added_tokens"][:2]
        with T.Tokenizer.from_json(json.dumps(j)) as plain:
            assert plain.chat_style == T.ChatStyle.NONE
            with pytest.raises(bosch.InvalidArgumentError, match="has no chat format"):
                T.TextTask.ruler(plain, "niah_single_1", context=600, samples=1)
            with T.TextTask.ruler(plain, "niah_single_1", context=600, samples=1,
                                  chat=False) as r:
                assert r.chat_style(0) == T.ChatStyle.NONE


@pytest.mark.parametrize("name", ["niah_single_1", "niah_single_2", "niah_multikey_1",
                                  "niah_multivalue"])
def test_ruler_shorter_rendering_keeps_the_samples(byte_tok, tmp_path, name):
    # Length as a fidelity (issue 53): the same task, seed and samples at a
    # shorter context are the same samples in a shorter haystack: the same
    # needle sentences, question and answers, each prompt shorter.
    import re
    needle = re.compile(r"One of the special magic \w+ for [\w-]+ is: [^\n]+?\.")
    rendered = {}
    for context in (1200, 600):
        path = tmp_path / f"{context}.jsonl"
        with T.TextTask.ruler(byte_tok, name, context=context, samples=4, seed=5) as r:
            r.write_jsonl(str(path))
        rendered[context] = [json.loads(line) for line in path.read_text().splitlines()]
    for long, short in zip(rendered[1200], rendered[600]):
        a = long["messages"][0]["content"]
        b = short["messages"][0]["content"]
        assert long["answers"] == short["answers"] and long["answers"]
        assert needle.findall(a) and sorted(needle.findall(a)) == sorted(needle.findall(b))
        assert a.rsplit("\n", 1)[1] == b.rsplit("\n", 1)[1]  # the question
        assert len(byte_tok.encode(b)) < len(byte_tok.encode(a))
