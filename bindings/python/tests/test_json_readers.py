"""A JSON key given twice is refused by every reader, C and Python alike,
naming the key and the file (json-c and json.load would keep the last)."""

import pytest

import bosch
from bosch import _json

MASK = ('{"format": "bosch-mask", "model": {"layers": 2, "kv_groups": 2, '
        '"heads_per_group": 1},\n "unit_mask": "0000", %s: "1111"}\n')


def test_python_reader_names_key_and_file():
    with pytest.raises(ValueError, match=r'^f.json: key "a" is given twice \(give each key once\)$'):
        _json.loads('{"a": 1, "b": {"a": 2}, "a": 3}', "f.json")
    with pytest.raises(ValueError, match='key "a" is given twice'):
        _json.loads('{"a": 1, "\\u0061": 2}', "f.json")  # one key once decoded
    assert _json.loads('{"a": 1, "b": {"a": 2}}', "f.json") == {"a": 1, "b": {"a": 2}}


@pytest.mark.parametrize("key", ['"unit_mask"', '"unit_\\u006dask"'])
def test_mask_file(tmp_path, key):
    p = tmp_path / "m.json"
    p.write_text(MASK % key)
    with pytest.raises(bosch.BoschError, match=r'm.json: malformed mask file: line 2: key '
                                               r'"unit_mask" is given twice'):
        bosch.Selection.read(p)


def test_text_task(tmp_path):
    p = tmp_path / "t.jsonl"
    p.write_text('{"text": "a", "answers": ["1"], "text": "b"}\n')
    from bosch import text
    with pytest.raises(bosch.BoschError, match=r't.jsonl:1: key "text" is given twice'):
        text.TextTask.read_jsonl(p)


def test_bosch_json_as_written(tmp_path):
    if not bosch.backend_available():
        pytest.skip("libbosch-torch not found")
    from bosch import backend
    (tmp_path / "bosch.json").write_text('{"window": 6,\n "window": 7}\n')
    with pytest.raises(ValueError, match=r'bosch.json: key "window" is given twice'):
        backend.model_defaults(tmp_path)
    (tmp_path / "bosch.json").write_text('{"window": 6}\n')
    assert backend.model_defaults(tmp_path) == {"window": 6}
