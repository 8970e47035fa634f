"""A reply line in orjson's own compact form is read by orjson alone (the referee's fast
path); every other line takes the careful path. Both must give the same object, and the
same verdict for a line that breaks the protocol, whatever the bytes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from arena.jsonline import line as json_line
from arena.process import protocol
from arena.process.protocol import parse_line
from arena.process.transport import BotFault

values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2 ** 70), max_value=2 ** 70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=30)


def careful(line: bytes):
    """``parse_line`` with the fast path off: the object, or the fault's verdict and detail."""
    saved = protocol._orjson
    protocol._orjson = None
    try:
        return outcome(line)
    finally:
        protocol._orjson = saved


def outcome(line: bytes):
    try:
        return ("ok", parse_line(line))
    except BotFault as fault:
        return (fault.verdict, fault.detail)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=6), values, max_size=5))
def test_a_compact_line_gives_what_the_careful_path_gives(obj):
    for line in (json_line(obj)[:-1], json.dumps(obj).encode(), json.dumps(obj, separators=(",", ":")).encode()):
        assert repr(outcome(line)) == repr(careful(line))


@pytest.mark.parametrize("line", [
    b'{"id":1,"id":2,"action":{"type":"pass"}}',           # a field named twice
    b'{"id":1,"action":{"type":"pass","type":"pass"}}',
    b'{"id":1,"x":NaN}', b'{"id":1,"x":1e999}', b'{"id":1,"x":Infinity}',
    b'{"id":1,"x":"\\ud800"}',                             # a lone surrogate
    b'{"id":1,"x":123456789012345678901234567890}',        # past 64 bits: read exactly
    b'\xef\xbb\xbf{"id":1}', b'{"id":1,"x":"\xff"}',       # a byte-order mark, not UTF-8
    b'{"id":1,"x":' + b"[" * 40 + b"]" * 40 + b"}",        # nested past MAX_DEPTH
    b'{"id":1,"x":' + b"[" * 300 + b"]" * 300 + b"}",      # past what orjson writes back
    b'[1,2]', b'"text"', b'{"id":1}  ', b' {"id":1}',
])
def test_lines_that_break_the_protocol_get_the_careful_paths_verdict(line):
    assert repr(outcome(line)) == repr(careful(line))


def test_a_compact_reply_never_reaches_the_careful_decoder(monkeypatch):
    def refuse(text):
        raise AssertionError("the careful decoder was asked")

    monkeypatch.setattr(protocol, "_decode", refuse)
    line = b'{"id":7,"action":{"type":"place","piece":"L3","puzzle":"W12","cells":[[0,1],[1,1],[1,2]]}}'
    assert parse_line(line)["action"]["cells"] == [[0, 1], [1, 1], [1, 2]]
    with pytest.raises(AssertionError):
        parse_line(b'{"id": 7, "action": {"type": "pass"}}')  # spaces: the careful path
