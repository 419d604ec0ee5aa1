"""Every option of the library's table is reachable from Python with the
library's default: a keyword of Optimizer, a property (made from the table
at import, nothing typed by hand), and a line of Optimizer's docstring."""

import bosch
from bosch._lib import lib


def _table():
    """The table read straight from libbosch (not through bosch.options)."""
    out = []
    for i in range(lib.bosch_option_count()):
        raw = lib.bosch_option_name(i)
        out.append((raw.decode(), lib.bosch_option_type(raw),
                    lib.bosch_option_default(raw).decode()))
    return out


def _typed(kind, text):
    if kind == 0:  # uint
        return int(text)
    if kind == 1:  # double
        return float(text)
    if kind == 2:  # bool
        return text == "1"
    return text


def test_every_option_is_a_property_with_the_library_default(problem):
    table = _table()
    assert len(table) >= 20
    opt = bosch.Optimizer(problem)
    for name, kind, default in table:
        attr = getattr(bosch.Optimizer, name, None)
        assert isinstance(attr, property), name
        assert getattr(opt, name) == _typed(kind, default), name
        assert f"      {name} (" in bosch.Optimizer.__doc__, name


def test_every_option_takes_its_default_as_keyword_and_property(problem):
    for name, kind, default in _table():
        if name == "journal":  # "" is no journal; the keyword takes a path or None
            continue
        value = _typed(kind, default)
        opt = bosch.Optimizer(problem, **{name: value})
        assert getattr(opt, name) == value, name
        setattr(opt, name, value)
        assert opt.get_option(name) == bosch.Optimizer(problem).get_option(name), name


def test_property_sets_through_the_library_checks(problem):
    opt = bosch.Optimizer(problem)
    opt.budget = 77
    assert opt.get_option_value("budget") == 77
    try:
        opt.batch_size = 0
    except bosch.BoschError as e:
        assert "batch_size" in str(e)
    else:
        raise AssertionError("batch_size 0 accepted")


def test_options_lists_the_same_table():
    assert [o.name for o in bosch.options()] == [name for name, _, _ in _table()]
