"""The bot protocol: messages, request ids, and the validation of replies.

The middle of three layers. :class:`Protocol` talks to a *channel* (a
:class:`~arena.process.transport.LineTransport`, or a scripted fake in tests) that sends and reads
lines; it builds each message with one ``json.dumps``, gives it the next request id, and
checks the reply by hand (the JSON Schema in ``arena/process/schema/protocol.json`` is for tests
and ``arena check-bot``, not for the hot path). A reply whose id is older than the open
request (late, or a duplicate) is discarded and logged, never taken as the answer. The
messages themselves are documented in ``docs/protocol.md``.
"""

from __future__ import annotations

import json
import logging
import sys
import time

from engine.codec import show

from ..jsonline import dumps as _dumps, line as json_line, orjson as _orjson
from .transport import BotNonJson, BotProtocolError, printable

log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
REQUEST_KINDS = ("action", "reward", "level_up", "finish")
#: the deepest nesting of arrays and objects a reply may have (a reply needs 6)
MAX_DEPTH = 32
#: the longest ``name`` or ``version`` a ``ready`` may give, in characters
MAX_NAME = 200
#: stale replies kept in :attr:`Protocol.discarded` (the rest are only counted and logged)
MAX_DISCARDED = 20


class _DuplicateKey(ValueError):
    """An object names the same field twice (RFC 8259 leaves its meaning open)."""


class _NotFinite(ValueError):
    """``NaN``, ``Infinity`` or a number too large for a double (``1e999``): not JSON numbers."""


def _object(pairs: list) -> dict:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"field {show(key)} appears twice in one object")
            seen.add(key)
    return obj


def _float(text: str) -> float:
    value = float(text)
    if value - value != 0.0:  # inf - inf is nan; nan is never equal
        raise _NotFinite(f"the number {show(text)} is too large")
    return value


def _constant(name: str):
    raise _NotFinite(f"{name} is not a JSON number")


# One decoder for every reply: strict JSON (no NaN, Infinity, 1e999 or repeated fields).
# The field check costs a Python call per object (replies have one to a dozen); calling
# the C scanner directly for a line that is exactly one value saves more than that.
_decoder = json.JSONDecoder(object_pairs_hook=_object, parse_float=_float, parse_constant=_constant)
_scan_once = _decoder.scan_once
_decode_padded = _decoder.decode  # blanks around the value, and every error message


def _decode(text: str):
    try:
        value, end = _scan_once(text, 0)
    except StopIteration:
        return _decode_padded(text)
    return value if end == len(text) else _decode_padded(text)


class EncodedJSON(str):
    """A value already encoded as JSON text, put into a message's line as it is.

    The ``cards`` of ``hello`` (tens of kilobytes, the same for every game of a ruleset) are
    encoded once this way instead of once per seat and game."""

    @classmethod
    def of(cls, value) -> "EncodedJSON":
        """``value`` encoded as the protocol encodes messages (compact, UTF-8 as is)."""
        return cls(_dumps(value))


def encode(message: dict) -> bytes:
    """One message as a UTF-8 JSON line (an :class:`EncodedJSON` ``cards`` value spliced in)."""
    cards = message.get("cards")
    if type(cards) is EncodedJSON:
        rest = {k: v for k, v in message.items() if k != "cards"}
        return json_line(rest)[:-2] + b',"cards":' + cards.encode() + b"}\n"
    return json_line(message)


def card_data(rules) -> dict:
    """The shapes and puzzles of a compiled ruleset, as sent in ``hello``."""
    return {
        "shapes": [{"name": s.name, "level": s.level, "cells": [list(c) for c in s.cells]} for s in rules.shapes],
        "puzzles": [{"id": p.id, "color": p.color, "points": p.points, "reward": p.reward,
                     "cells": [[r, c] for r in range(len(p.rows)) for c in range(len(p.rows[r])) if p.rows[r][c] == "#"]}
                    for p in rules.puzzles],
    }


def hello_message(seat: int, rules, time_control: dict, bot_seed: int) -> dict:
    """The handshake request (its id is added when it is sent)."""
    return {"type": "hello", "protocol": PROTOCOL_VERSION, "seat": seat, "players": rules.players,
            "rules": rules.spec.to_json(), "params": rules.params, "cards": card_data(rules),
            "time_control": time_control, "seed": bot_seed}


def request_message(kind: str, obs: dict, events: list, clock: dict, legal: list | None) -> dict:
    """An ``action``/``reward``/``level_up``/``finish`` request (its id is added when sent)."""
    msg = {"type": kind, "observation": obs, "actions_left": obs["actions_left"], "clock": clock, "events": events}
    if legal is not None:
        msg["legal"] = legal
    return msg


def parse_line(line: bytes) -> dict:
    """A reply line as a JSON object; :class:`BotNonJson` if it is not one.

    Whatever the bytes, this raises only :class:`BotNonJson` or :class:`BotProtocolError`:
    the line must be UTF-8 (no byte-order mark), hold one strict JSON object (RFC 8259
    numbers: no ``NaN``, ``Infinity`` or ``1e999``, at most 4300 digits in an integer;
    strings without lone surrogates such as ``"\\ud800"``), nest at most
    :data:`MAX_DEPTH` levels and name each field of an object once.
    """
    if _orjson is not None:
        # The fast path: a line that is exactly the compact form orjson writes of what it
        # read holds one object that names each field once (a repeated field would be
        # missing from the rewrite), with finite numbers (orjson refuses the others) and no
        # lone surrogate or invalid UTF-8 (refused too); a bot written with the Python SDK,
        # or any compact writer, sends such lines. Anything else takes the careful path.
        try:
            msg = _orjson.loads(line)
            same = type(msg) is dict and _orjson.dumps(msg) == line
        except (_orjson.JSONDecodeError, _orjson.JSONEncodeError):  # the latter: nested past orjson's writer
            same = False
        if same and (line.count(b"[") + line.count(b"{") <= MAX_DEPTH or nesting(msg) <= MAX_DEPTH):
            return msg
    try:
        text = line.decode()
    except UnicodeDecodeError as exc:
        raise BotNonJson(f"not UTF-8 (byte {exc.start}: {exc.reason}): {snippet(line)}") from None
    try:
        msg = _decode(text)
    except _DuplicateKey as exc:
        raise BotProtocolError(f"{exc}: {snippet(line)}") from None
    except RecursionError:
        raise BotNonJson(f"nested deeper than {MAX_DEPTH} levels: {snippet(line)}") from None
    except ValueError as exc:  # JSONDecodeError, a non-finite number, an integer of over 4300 digits
        if not isinstance(exc, (json.JSONDecodeError, _NotFinite)):
            exc = f"an integer has more than {sys.get_int_max_str_digits()} digits"
        raise BotNonJson(f"not JSON ({exc}): {snippet(line)}") from None
    if type(msg) is not dict:
        raise BotNonJson(f"a reply must be a JSON object: {snippet(line)}")
    # Both checks below walk the message, so they run only when the bytes allow a failure:
    # fewer brackets than MAX_DEPTH cannot nest deeper, no backslash-u cannot be a surrogate.
    if line.count(b"[") + line.count(b"{") > MAX_DEPTH and nesting(msg) > MAX_DEPTH:
        raise BotNonJson(f"nested deeper than {MAX_DEPTH} levels: {snippet(line)}")
    if b"\\u" in line:
        try:
            _dumps(msg).encode()
        except UnicodeEncodeError:
            raise BotNonJson(f"a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), which UTF-8 cannot "
                             f"carry: {snippet(line)}") from None
    return msg


def nesting(value) -> int:
    """How deeply arrays and objects nest in ``value`` (0 for a number or a string), level by
    level without recursion; counting stops past :data:`MAX_DEPTH`."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level and depth <= MAX_DEPTH:
        depth += 1
        inner = []
        for v in level:
            for x in (v.values() if type(v) is dict else v):
                if type(x) is dict or type(x) is list:
                    inner.append(x)
        level = inner
    return depth


def snippet(line: bytes, limit: int = 200) -> str:
    """The start of an offending line, for messages: invalid UTF-8 replaced, and control
    characters escaped (``\\x1b``), so a bot cannot drive the terminal that shows it."""
    return printable(line[:limit].decode("utf-8", "replace")) + ("..." if len(line) > limit else "")


class Ready:
    """What a bot said in ``ready``: name, version, whether it wants legal lists."""

    __slots__ = ("name", "version", "legal_actions")

    def __init__(self, name: str, version: str, legal_actions: bool):
        self.name = name
        self.version = version
        self.legal_actions = legal_actions

    def to_json(self) -> dict:
        """Plain data for records."""
        return {"name": self.name, "version": self.version, "legal_actions": self.legal_actions}


def check_ready(msg: dict) -> Ready:
    """Validate a ``ready`` reply."""
    if msg.get("type") != "ready":
        raise BotProtocolError(f"expected a 'ready' reply to hello, got type {msg.get('type')!r}")
    name, version, legal = msg.get("name"), msg.get("version", ""), msg.get("legal_actions", False)
    if not isinstance(name, str) or not name:
        raise BotProtocolError("'ready' needs a non-empty string field 'name'")
    if not isinstance(version, str):
        raise BotProtocolError("'ready' field 'version' must be a string")
    if len(name) > MAX_NAME or len(version) > MAX_NAME:
        raise BotProtocolError(f"'ready' fields 'name' and 'version' may have at most {MAX_NAME} characters")
    if not (name.isprintable() and version.isprintable()):
        raise BotProtocolError(f"'ready' fields 'name' and 'version' must be printable text, got {show(name)}, "
                               f"{show(version)}")
    if not isinstance(legal, bool):
        raise BotProtocolError("'ready' field 'legal_actions' must be true or false")
    return Ready(name, version, legal)


def check_action_reply(msg: dict, kind: str) -> dict:
    """The R14 object of a reply to an ``action``/decision request (not yet checked by the engine)."""
    action = msg.get("action")
    if not isinstance(action, dict):
        raise BotProtocolError(f"a reply to '{kind}' needs an object field 'action' (R14 JSON), got {show(msg, 200)}")
    t = msg.get("type")
    if t is not None and t != "action":
        raise BotProtocolError(f"a reply to '{kind}' has type {show(t)}; leave it out or use \"action\"")
    return action


class Protocol:
    """Requests with ids over a channel; one request open at a time.

    The channel has ``send(data, deadline) -> t_flush``, ``read_line(deadline) -> (line,
    t_newline)`` and ``done()``; deadlines and times are ``time.perf_counter()`` values.
    """

    def __init__(self, channel, label: str = "bot"):
        self.channel = channel
        self.label = label
        self.next_id = 1
        self.discarded: list[dict] = []
        self.discarded_count = 0
        self.ready: Ready | None = None
        self._t0 = 0.0
        # Every line is logged (with the pid) at DEBUG; checked once, off the hot path.
        self._debug = log.isEnabledFor(logging.DEBUG)

    def send(self, message: dict, limit_s: float) -> tuple[int, float]:
        """Send a request; returns its id and its deadline (flush time + ``limit_s``)."""
        rid = self.next_id
        self.next_id += 1
        message["id"] = rid
        data = encode(message)
        if self._debug:
            log.debug("%s pid %s << %s", self.label, getattr(self.channel, "pid", "-"), snippet(data, 300))
        t0 = self.channel.send(data, time.perf_counter() + limit_s)
        self._t0 = t0
        return rid, t0 + limit_s

    def receive(self, rid: int, deadline: float) -> tuple[dict, float]:
        """The reply to request ``rid`` (stale replies skipped) and its wall time in seconds."""
        channel = self.channel
        try:
            while True:
                line, t1 = channel.read_line(deadline)
                if self._debug:
                    log.debug("%s pid %s >> %s", self.label, getattr(channel, "pid", "-"), snippet(line, 300))
                msg = parse_line(line)
                got = msg.get("id")
                if type(got) is int and 0 < got < rid:
                    self._discard(got, rid, line)
                    continue
                if got != rid or type(got) is not int:  # 2.0 and true are not the id 2 or 1
                    raise BotProtocolError(f"reply id {show(got)} does not match the request id {rid}: {snippet(line)}")
                return msg, t1 - self._t0
        finally:
            channel.done()

    def _discard(self, got: int, rid: int, line: bytes) -> None:
        # A bot may repeat old replies up to its output cap: the first few are kept for
        # the record, the rest only counted, so the record stays small.
        self.discarded_count += 1
        if len(self.discarded) < MAX_DISCARDED:
            self.discarded.append({"id": got, "expected": rid, "line": snippet(line, 120)})
            log.info("%s pid %s: discarded a stale reply (id %d, waiting for %d): %s", self.label,
                     getattr(self.channel, "pid", "-"), got, rid, snippet(line, 120))
        elif self.discarded_count == MAX_DISCARDED + 1:
            log.info("%s pid %s: more stale replies; only counted from now on", self.label,
                     getattr(self.channel, "pid", "-"))

    def _exchange(self, message: dict, limit_s: float) -> tuple[dict, float]:
        rid, deadline = self.send(message, limit_s)
        return self.receive(rid, deadline)

    def hello(self, hello: dict, limit_s: float) -> Ready:
        """Send ``hello`` and wait for ``ready`` (within the start-up limit)."""
        msg, _ = self._exchange(hello, limit_s)
        self.ready = check_ready(msg)
        return self.ready

    def request(self, message: dict, limit_s: float) -> tuple[dict, float]:
        """Send a request and return the reply's R14 object and the wall time (seconds)."""
        msg, wall = self._exchange(message, limit_s)
        return check_action_reply(msg, message["type"]), wall

    def notify(self, message: dict, limit_s: float = 1.0) -> None:
        """Send a message that has no reply (``game_over``, ``quit``)."""
        message["id"] = self.next_id
        self.next_id += 1
        try:
            self.channel.send(encode(message), time.perf_counter() + limit_s)
        finally:
            self.channel.done()
