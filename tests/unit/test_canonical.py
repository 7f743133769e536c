"""turnbench/canonical.py: atomic writes must not leave owner-only files and directories behind
(mkstemp/mkdtemp create 0600/0700)."""

from __future__ import annotations

import os
import stat

import pytest

from turnbench import canonical


def test_atomic_files_and_staged_directories_get_the_modes_open_and_mkdir_would_give(tmp_path):
    old = os.umask(0o022)
    try:
        canonical._umask.cache_clear()
        f = tmp_path / "a.json"
        canonical.write_json(f, {"b": 1, "a": 2})
        assert f.read_bytes() == b'{\n  "a": 2,\n  "b": 1\n}\n'
        assert stat.S_IMODE(f.stat().st_mode) == 0o644
        with canonical.staged_directory(tmp_path / "out") as stage:
            (stage / "x").write_text("x")
        assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o755
    finally:
        os.umask(old)
        canonical._umask.cache_clear()


def test_parse_json_reads_as_json_loads_reads_and_refuses_what_it_refuses():
    import json

    cases = ['{"a":1}', ' {"a":1}', '{"a":1} ', '{"a":1}\n', '{"a":1}\r\n\t', '{"a":1}\x0b', '\ufeff{"a":1}', '', ' ',
             'NaN', '[1, NaN]', '{"a": -Infinity}', '1 2', '{"a":1}{', '"x"', '[1,]', '[1]\u00a0', '{"a":1,"a":2}',
             '[' * 40 + ']' * 40]
    for text in [*cases, *(c.encode("utf-8") for c in cases), '{"a":[1]}'.encode("utf-16")]:
        try:
            want = ("value", json.loads(text, parse_constant=canonical._no_constant))
        except ValueError as exc:
            want = ("refused", str(exc))
        try:
            got = ("value", canonical.parse_json(text))
        except ValueError as exc:
            got = ("refused", str(exc))
        assert got == want, text
    with pytest.raises(ValueError, match="nested too deeply"):
        canonical.parse_json("[" * 100_000 + "]" * 100_000)


def test_dumps_writes_what_json_dumps_writes_and_refuses_what_it_refuses():
    """canonical.dumps calls the C encoder json.dumps would build, built once: byte for byte the same text on every
    kind of value, and the same refusals."""
    import json
    import math
    import random

    import pytest

    from turnbench import canonical

    def reference(obj):
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)

    rng = random.Random(5)
    strings = ["", "m00012:00034", 'q"uote\\back', "tab\there\nnl", "\x00\x1f\x7f", "é ☃ 𝄞", "\ud800", "</script>"]

    def value(depth):
        kind = rng.randrange(9 if depth < 4 else 6)
        if kind == 0:
            return rng.choice(strings)
        if kind == 1:
            return rng.choice([0, -1, 7, 2**70, -(2**63)])
        if kind == 2:
            return rng.choice([0.0, -0.0, 1e-7, 0.1, 123456789.125, 1e300, -2.5e-308, 1 / 3])
        if kind == 3:
            return rng.choice([True, False, None])
        if kind in (4, 5):
            return rng.choice(strings) + str(rng.randrange(3))
        if kind in (6, 7):
            return {rng.choice(strings) + str(i): value(depth + 1) for i in range(rng.randrange(4))}
        return [value(depth + 1) for _ in range(rng.randrange(4))]

    def indented(obj):
        return (json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()

    for _ in range(3000):
        obj = value(0)
        assert canonical.dumps(obj) == reference(obj)
        try:
            want = indented(obj)
        except UnicodeEncodeError:  # a lone surrogate is not UTF-8: refused by both
            with pytest.raises(UnicodeEncodeError):
                canonical.pretty(obj)
        else:
            assert canonical.pretty(obj) == want
    # pretty's own shapes: empty containers at every depth, a row of plain values beside nested ones, a key that is
    # not a string (handed to json itself), tuples
    for obj in ({}, [], [[]], {"a": {}, "b": [], "c": [[], {}]}, {"row": {"x": 1, "values": {"b": 0.5, "a": 1e-7}}},
                {"a": {2: "b", 10: "a"}}, [{"k": (1, (2, 3))}], {"s": "é\n☃", "n": None, "t": True}):
        assert canonical.pretty(obj) == indented(obj), obj
    # keys sorted as numbers, then written as strings
    assert canonical.dumps({2: "b", 10: "a"}) == reference({2: "b", 10: "a"}) == '{"2":"b","10":"a"}'
    assert canonical.dumps((1, 2)) == reference((1, 2)) == "[1,2]"
    for bad, kind in ((math.nan, ValueError), ({"x": [math.inf]}, ValueError), ({"x": {1, 2}}, TypeError),
                      (b"bytes", TypeError), ({1: "a", "b": 2}, TypeError)):
        with pytest.raises(kind) as ours:
            canonical.dumps(bad)
        with pytest.raises(kind) as theirs:
            reference(bad)
        assert str(ours.value) == str(theirs.value)
        with pytest.raises(kind):
            canonical.pretty({"nested": [bad]})


def test_without_the_c_encoder_dumps_and_pretty_are_json_dumps_itself(monkeypatch):
    import json

    from turnbench import canonical

    obj = {"b": [1, {"c": 0.5}], "a": "é"}
    fast = (canonical.dumps(obj), canonical.pretty(obj))
    monkeypatch.setattr(canonical, "_COMPACT", None)
    assert (canonical.dumps(obj), canonical.pretty(obj)) == fast == (
        json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False),
        (json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode())


def test_the_encoder_writes_repr_where_it_is_trusted_to_and_is_not_trusted_elsewhere():
    """``float_texts`` is ``repr`` for every float ``encoder_writes_repr`` passes: random bit patterns, scores of
    every magnitude and rounding, halfway cases, integral values, both zeros, the ends of the range; a run holding
    any value outside it (where the two differ, or could) is not passed, and is written by ``repr``."""
    import math
    import random
    import struct
    from array import array

    rnd = random.Random(20261203)
    values = [0.0, -0.0, 1.0, -5.0, 0.1, 0.2, 0.1 + 0.2, 1e-4, 1e15, 9999999999999998.0, 2.5, 0.5, 1 / 3, math.pi,
              123456789012345.6, 0.000123456789, 5e-4]
    for _ in range(200_000):
        kind = rnd.random()
        if kind < 0.4:
            x = struct.unpack("d", struct.pack("Q", rnd.getrandbits(64)))[0]
        elif kind < 0.7:
            x = round(rnd.uniform(-100, 100), rnd.randint(0, 9))
        else:
            x = rnd.uniform(0.5, 1) * 10.0 ** rnd.randint(-4, 15)
        values.append(x)
    trusted = [x for x in values if canonical.encoder_writes_repr([x])]
    assert len(trusted) > 100_000
    assert canonical.encoder_writes_repr(array("d", trusted))
    assert canonical.float_texts(array("d", trusted)) == list(map(repr, trusted))
    assert canonical.float_texts([]) == []
    # outside the range the encoder writes another text (1e16, 0.00009999), or its text is not checked at all
    for outside in (1e16, -1e16, 9.999e-05, 5e-324, 1.7976931348623157e308, float("nan"), float("inf")):
        assert not canonical.encoder_writes_repr([*trusted[:5], outside])
        assert canonical.float_texts(array("d", [*trusted[:5], outside])) is None
    assert all(_encoder_text(x) != repr(x) for x in (1e16, 9.999e-05, 1e-5, -2e-7))
    assert not canonical.encoder_writes_repr([1.0, None]) and not canonical.encoder_writes_repr(["1.0"])


def test_lines_by_the_encoder_are_the_canonical_lines_or_refused_alike():
    """``encoded_lines`` is ``dumps_line`` row by row, for rows of every JSON type, keys in any order and strings of
    any character; a NaN among the floats is refused as ``dumps`` refuses it (msgspec would have written null), and
    a float out of the range the encoder writes as repr is written as repr writes it."""
    rows = [{"target": "passage", "id": f"p{i}", "zeta": [i, -i, [True, None]], "Alpha": "é\u2028\"\\\t\x01",
             "start": i / 7, "end": 1e15 + i, "n": {"b": 1, "a": "x"}} for i in range(50)]
    floats = [r[k] for r in rows for k in ("start", "end")]
    want = b"".join(canonical.dumps_line(r) for r in rows)
    assert canonical.encoded_lines(rows, floats) == want and canonical.encoded_lines([], []) == b""
    far = [{**rows[0], "end": 1e16}]
    assert canonical.encoded_lines(far, [far[0]["start"], 1e16]) == canonical.dumps_line(far[0]) and b"1e+16" in \
        canonical.dumps_line(far[0])
    nan = [{**rows[0], "start": float("nan")}]
    with pytest.raises(ValueError):
        canonical.encoded_lines(nan, [float("nan"), nan[0]["end"]])
    odd = [{**rows[0], "start": None}]  # not a number where a float was promised: written as dumps writes it
    assert canonical.encoded_lines(odd, [None, odd[0]["end"]]) == canonical.dumps_line(odd[0])
    lone = [{**rows[0], "id": "\ud800"}]
    with pytest.raises(ValueError):
        canonical.encoded_lines(lone, floats[:2])


def _encoder_text(x):
    import msgspec

    return msgspec.json.encode(x).decode()


def test_the_text_scan_is_the_range_where_the_encoder_writes_repr():
    """``encoder_writes_repr`` decides by scanning the encoder's text (no pass per value in Python): the same answer
    as the range, value by value and for whole runs — finite, under 1e16 in size and, unless zero, at least 1e-4 —
    at the ends of the range and beyond, for both zeros, NaN, infinities, subnormals, integers and bools; and every
    value inside it is written as repr writes it."""
    import math
    import random
    import struct

    def in_range(x):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            return False
        x = abs(float(x))
        return math.isfinite(x) and x < 1e16 and (x == 0 or x >= 1e-4)

    rnd = random.Random(20261206)
    edges = [0.0, -0.0, 1e-4, -1e-4, math.nextafter(1e-4, 0), -math.nextafter(1e-4, 0), 1e16, math.nextafter(1e16, 0),
             -1e16, 5e-324, 1e-300, float("nan"), float("inf"), -float("inf"), 7, 10**16, 10**16 - 1, 0, True,
             0.00010001, 10.00001, 100.00009, -0.00012]
    values = edges + [struct.unpack("d", struct.pack("Q", rnd.getrandbits(64)))[0] for _ in range(20_000)]
    values += [rnd.uniform(0.5, 1) * 10.0 ** rnd.randint(-6, 17) for _ in range(20_000)]
    values += [rnd.uniform(-1, 1) * 10.0 ** rnd.randint(-6, 3) for _ in range(20_000)]
    answers = [canonical.encoder_writes_repr([x]) for x in values]
    assert answers == [in_range(x) for x in values], [x for x, a in zip(values, answers, strict=True)
                                                        if a != in_range(x)][:5]
    assert {*answers} == {True, False}  # both answers were tried
    inside = [x for x, a in zip(values, answers, strict=True) if a]
    assert [_encoder_text(float(x)) for x in inside] == [repr(float(x)) for x in inside]
    assert canonical.encoder_writes_repr(inside) and canonical.encoder_writes_repr([])
    for outside in (1e16, 9e-5, -9e-5, float("nan")):  # first, between or last: found wherever it is in the text
        for at in (0, len(inside) // 2, len(inside)):
            assert not canonical.encoder_writes_repr([*inside[:at], outside, *inside[at:]])
