"""passages.jsonl's lines written by msgspec in one call are ``Passage.canonical_line``'s bytes, or not written so."""

from __future__ import annotations

import pytest

from turnbench.passages import Passage, canonical_blocks, encoded_block


def _slow(rows: list[Passage]) -> bytes:
    return b"".join(p.canonical_line() for p in rows)


def test_every_code_point_is_escaped_as_the_canonical_encoder_escapes_it():
    # escaping is character by character: a string of a thousand code points checks each of them
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    rows = [Passage(f"p{k}", "m", "".join(map(chr, points[k:k + 1000])), 0.0, 1.0, k // 1000)
            for k in range(0, len(points), 1000)]
    got = encoded_block(rows)
    assert got is not None and got == _slow(rows)


@pytest.mark.parametrize("value", [0.0, -0.0, 0.1, 1 / 3, 2.5, 100.0, 12345678.9, 123456789012345.6, 1e15, 1e-4])
def test_a_float_both_encoders_write_alike_takes_the_fast_path(value):
    rows = [Passage("a", "m", "s", value, abs(value) + 1.0, 0, "turn", "f" * 64, 3)]
    assert encoded_block(rows) == _slow(rows)


def _same_either_way(rows: list[Passage]) -> None:
    """The block written as canonical_blocks writes it is the lines written one by one, or both refuse alike."""
    try:
        want: bytes | type[Exception] = _slow(rows)
    except (TypeError, ValueError) as exc:
        want = type(exc)
    fast = encoded_block(rows)
    assert fast is None or fast == want
    if isinstance(want, bytes):
        assert b"".join(canonical_blocks(rows)) == want
    else:
        with pytest.raises(want):
            b"".join(canonical_blocks(rows))


@pytest.mark.parametrize("value", [1e16, 1e22, 1e-5, -1e-7, 1.7976931348623157e308])
def test_a_float_msgspec_writes_otherwise_leaves_the_block_to_the_canonical_encoder(value):
    rows = [Passage("a", "m", "s", 0.0, 1.0, 0), Passage("b", "m", "s", value, value, 1)]
    assert encoded_block(rows) is None  # 1e16 against 1e+16, 0.00001 against 1e-05
    _same_either_way(rows)


@pytest.mark.parametrize("value", [5e-324, 2.2250738585072014e-308, 9007199254740993.0, 1e-4, 0.0001234])
def test_any_float_is_written_as_repr_writes_it(value):
    _same_either_way([Passage("b", "m", "s", value, value, 1)])


def test_declared_words_are_written_as_the_canonical_encoder_writes_them():
    rows = [Passage("a", "m", "s", 0.0, 1.0, 0, holds=((0, 0, 5),)), Passage("b", "m", "s", 1.0, 2.0, 1),
            Passage("c", "m", "s", 2.0, 3.0, 2, "window", "", 0, holds=((1, 2, 4), (2, 0, 1)))]
    assert encoded_block(rows) == _slow(rows)


@pytest.mark.parametrize("odd", [
    Passage("t", "m", "s", 0.0, 1.0, 1, text="its own text"),
    Passage("v", "m", "", 0.0, 1.0, 1, speakers=("a", "b")),
    Passage("u", "m", "", 0.0, 1.0, 1, speakers=()),
    Passage("y", "m", "s", 0.0, 1.0, True),  # type: ignore[arg-type]
    Passage("w", "m", "s", 1, 2, 1),  # type: ignore[arg-type]
    Passage(7, "m", "s", 0.0, 1.0, 1),  # type: ignore[arg-type]
], ids=["text", "speakers", "unknown speakers", "bool index", "int times", "int id"])
def test_anything_else_is_left_to_the_canonical_encoder(odd):
    rows = [Passage("a", "m", "s", 0.0, 1.0, 0), odd]
    assert encoded_block(rows) is None
    _same_either_way(rows)


def test_a_lone_surrogate_is_refused_as_before_and_a_huge_number_written_whole():
    rows = [Passage("x", "m", "lone \ud800 surrogate", 0.0, 1.0, 1)]
    assert encoded_block(rows) is None
    with pytest.raises(UnicodeEncodeError):  # not UTF-8: the canonical encoder refuses it
        b"".join(canonical_blocks(rows))
    _same_either_way([Passage("z", "m", "s", 0.0, 1.0, 1 << 70, words=(1 << 64) + 1)])
