"""envcheck.userdata: TOML and JSON values envcheck can compute with, or an error naming the file and the key."""

from __future__ import annotations

import sys

import pytest

from envcheck.errors import UsageError
from envcheck.userdata import INT_BITS, MAX_KEY_PARTS, checked_numbers, key_path, parse_json, parse_toml

LIMIT = sys.get_int_max_str_digits()


@pytest.mark.parametrize("text, key", [
    (f'{{"a": {2 ** INT_BITS - 1}}}', None),  # the largest integer kept
    (f'{{"a": {-(2 ** INT_BITS)}}}', None),  # the smallest
    (f'{{"a": {2 ** INT_BITS}}}', "a"),  # one past it
    (f'{{"a": {-(2 ** INT_BITS) - 1}}}', "a"),
    ('{"a": [1, {"b": ' + "9" * (LIMIT + 1) + "}]}", "a[1].b"),  # past Python's conversion limit
    ('{"a": ' + "9" * 30 + "}", "a"),
    ('{"t": 1e308}', None),
    ('{"t": 1e999}', "t"),  # read as infinity
    ('{"t": -1e999}', "t"),
    ('{"t": Infinity}', "t"),
    ('{"t": NaN}', "t"),
    ('{"t": 2.2250738585072014e-308}', None),  # the smallest normal number
    ('{"t": 2.2250738585072e-308}', "t"),  # subnormal
    ('{"t": 5e-324}', "t"),
    ('{"t": 1e-400}', None),  # reads as 0.0, which is a number like any other
    ('{"t": 0.0, "f": true, "n": null}', None),
    ('{"odd key!": {"x": 1e999}}', '"odd key!".x'),
])
def test_json_numbers_at_each_boundary(text, key):
    if key is None:
        assert parse_json(text, "r.json") is not None
        return
    with pytest.raises(UsageError) as caught:
        parse_json(text, "r.json")
    assert str(caught.value).startswith(f"r.json: key {key}: "), caught.value


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "r.json: not usable JSON: nested too deeply"),
    ('{"a": }', "r.json: not valid JSON (line 1, column 7"),
])
def test_unusable_json_is_named(text, message):
    with pytest.raises(UsageError) as caught:
        parse_json(text, "r.json")
    assert str(caught.value).startswith(message)


def test_the_error_class_is_the_callers():
    class Mine(UsageError):
        pass

    with pytest.raises(Mine):
        parse_json('{"a": 1e999}', "x", Mine)
    with pytest.raises(Mine):
        parse_toml("a = inf", "x", Mine)


@pytest.mark.parametrize("text, message", [
    (f"a = {2 ** INT_BITS - 1}\n", None),
    (f"a = {2 ** INT_BITS}\n", "key a: an integer of 64 bits"),
    ("[tool.other]\nbig = " + "9" * (LIMIT + 1) + "\n", f"key tool.other.big (line 2): an integer of more than {LIMIT}"),
    ('s = "' + "9" * (LIMIT + 5) + '"\nbig = ' + "9" * (LIMIT + 1) + "\n", "key big (line 2)"),  # not the string's
    ("h = 0x" + "f" * 5000 + "\n", "key h: an integer of 20000 bits"),
    ("t = inf\n", "key t: inf"),
    ("t = -inf\n", "key t: -inf"),
    ("t = nan\n", "key t: nan"),
    ("t = 1e999\n", "key t: inf"),
    ("t = 5e-324\n", "key t: 5e-324, too small to tell from zero"),
    ("[[runs]]\nok = 1\n[[runs]]\nt = 5e-324\n", "key runs[1].t"),
    ("t = 1e-300\n", None),
])
def test_toml_numbers_at_each_boundary(text, message):
    if message is None:
        assert parse_toml(text, "p.toml")
        return
    with pytest.raises(UsageError) as caught:
        parse_toml(text, "p.toml")
    assert str(caught.value).startswith(f"p.toml: {message}"), caught.value


def _key(parts: int) -> str:
    return ".".join(f"k{i}" for i in range(parts))


@pytest.mark.parametrize("text, refused_on", [
    (f"{_key(MAX_KEY_PARTS)} = 1\n", None),
    (f"{_key(MAX_KEY_PARTS + 1)} = 1\n", 1),
    (f"# {_key(200)}\na = 1\n", None),  # a comment is not a key
    (f"a = 1  # {_key(200)}\n", None),
    (f'doc = """\n{_key(200)}\n"""\n', None),  # nor a line inside a multi-line string
    (f"doc = '''\n{_key(200)}\n'''\n", None),
    (f'doc = """ends with a quote""""\n{_key(MAX_KEY_PARTS + 1)} = 1\n', 2),  # the string ends where TOML says
    (f'doc = """\n{_key(200)}\n"""\n{_key(MAX_KEY_PARTS + 1)} = 1\n', 4),  # the line numbers hold
    (f'url = "a#{_key(200)}"\n', None),  # a '#' inside a string starts no comment
    (f'x = "#" \n{_key(MAX_KEY_PARTS + 1)} = 1\n', 2),
    (f'{_key(MAX_KEY_PARTS - 1)}."b.c.d" = 1\n', None),  # the dots inside a quoted part are not separators
    (f"[{_key(MAX_KEY_PARTS + 1)}]\n", 1),
])
def test_the_dotted_key_guard_reads_only_keys(text, refused_on):
    if refused_on is None:
        parse_toml(text, "p.toml")
        return
    with pytest.raises(UsageError, match=rf"^p.toml: not usable TOML: a dotted key of more than {MAX_KEY_PARTS} parts "
                                         rf"\(line {refused_on}\)$"):
        parse_toml(text, "p.toml")


def test_a_deep_value_is_checked_without_recursion():
    deep: list = [1e999]
    for _ in range(50_000):
        deep = [deep]
    with pytest.raises(UsageError) as caught:
        checked_numbers({"runs": deep}, "x")
    assert str(caught.value).startswith("x: key runs[0][0][0][0][0]...[0][0][0][0][0][0]: inf ")


@pytest.mark.parametrize("parent, key, shown", [
    ("", "a", "a"), ("a", 3, "a[3]"), ("a", "b c", 'a."b c"'), ("", "x" * 100, '"' + "x" * 80 + '..."'),
])
def test_key_path(parent, key, shown):
    assert key_path(parent, key) == shown
