"""One JSON value per line, the bot protocol's unit, on both sides of the pipe.

Lines are compact UTF-8 JSON ending in ``\\n``. They are written and read by orjson (a
dependency: several times faster than the standard library), and the standard library
writes what orjson refuses (integers beyond 64 bits, say, in a bot's options or reply).
The referee (:mod:`arena.process.protocol`) and the Python SDK (:mod:`arena.sdk`) share it.
"""

from __future__ import annotations

import json

try:
    import orjson
except ImportError:  # pragma: no cover - the same text, from the standard library
    orjson = None

#: compact JSON text by the standard library (no spaces, non-ASCII kept)
dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def line(value) -> bytes:
    """``value`` as one compact UTF-8 JSON line (integer keys written as strings)."""
    if orjson is not None:
        try:
            # string keys only, as every message of the protocol has: twice as fast as
            # allowing other keys, which the retry below does, for the same text
            return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
        except orjson.JSONEncodeError:
            try:
                return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE)
            except orjson.JSONEncodeError:
                pass
    return (dumps(value) + "\n").encode()


def loads(data):
    """One JSON value from ``data`` (bytes or text)."""
    return orjson.loads(data) if orjson is not None else json.loads(data)
