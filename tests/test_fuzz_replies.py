"""Fuzzing the whole reply path: no bytes a bot writes may do anything but earn a verdict.

A reply goes line -> :func:`arena.process.protocol.parse_line` -> the id and ``action``
checks of :class:`~arena.process.protocol.Protocol` -> the referee's
:func:`~arena.referee.decode_action` (the engine's codec) -> ``Game.apply``. For any line,
exactly one of three things may happen: a :class:`~arena.process.transport.BotFault`
with its verdict, an :class:`~engine.errors.IllegalAction` with the state untouched, or a
legal application. Any other exception is a bug. The lines come from four generators:
arbitrary bytes, arbitrary JSON values in every place of a reply, byte-level mutations of
real replies, and field-level mutations of every legal action of states in every phase
of several rule sets. A second property plays whole games through the referee's game
loop (``_Match``) with one seat answering a fuzzed line, and checks that the game ends
with a result and a record that can be stored.

The examples per test come from the settings profile ``replies`` (about 20 s for the
file on a busy 2-core machine); ``ARENA_FUZZ_EXAMPLES=20000 pytest tests/test_fuzz_replies.py``
runs a longer campaign.
"""

from __future__ import annotations

import itertools
import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.process.protocol import Protocol
from arena.process.timecontrol import Clock, TimeControl
from arena.process.transport import BotFault, BotTimeout
from arena.referee import _Match, _Seat, decode_action
from engine import Game, IllegalAction, RuleSpec, action_from_json, action_to_json
from engine.codec import MAX_INT, MAX_LIST, show
from variant_helpers import choose

VERDICTS = {"non_json", "protocol_error", "timeout"}
EXAMPLES = int(os.environ.get("ARENA_FUZZ_EXAMPLES", "0")) or None
settings.register_profile("replies", max_examples=EXAMPLES or 150, deadline=None, derandomize=EXAMPLES is None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                 HealthCheck.filter_too_much])
REPLIES = settings.get_profile("replies")
FEW = settings(REPLIES, max_examples=(EXAMPLES or 150) // 4)


# ---------------------------------------------------------------- states in every phase
def _states() -> list[Game]:
    """States of several rule sets, in every phase a decision is asked in (action, reward,
    level_up, finish), reached by seeded play (half greedy, so puzzles get completed)."""
    out: list[Game] = []
    # a short reserve makes the revised rules ask for rewards; ghost seed 1 levels up
    for variants, players, params, seed in (((), 2, {}, 11), (("revised",), 3, {"reserve_per_shape": 3}, 0),
                                            (("ghost",), 2, {}, 1), (("solo",), 1, {}, 2), (("no-master",), 2, {}, 3),
                                            (("revised", "ghost"), 4, {}, 4)):
        game = Game.new(RuleSpec.make(variants, {"max_rounds": 30, **params}), players, seed)
        rng = random.Random(seed)
        seen: dict[str, int] = {}
        while not game.is_over:
            phase = game.phase_name
            if seen.get(phase, 0) < (3 if phase == "action" else 2) and rng.random() < (0.2 if phase == "action" else 1):
                seen[phase] = seen.get(phase, 0) + 1
                out.append(game.clone())
            game.apply(choose(game, rng, greedy_share=0.9))
    return out


STATES = _states()
PHASES = {g.phase_name for g in STATES}
FIELDS = ["type", "color", "slot", "give", "take", "puzzle", "piece", "cells", "placements", "steps", "blind", "id",
          "action"]
NAMES = sorted({s.name for g in STATES for s in g.rules.shapes} | {p.id for p in STATES[0].rules.puzzles[:6]}
               | {"white", "black", "pass", "take_piece", "take_puzzle", "place", "master", "upgrade", "reward",
                  "level_up", "finish", "ghost", "recycle"})


def test_the_states_cover_every_phase():
    assert PHASES == {"action", "reward", "level_up", "finish"}, PHASES


# ---------------------------------------------------------------- strategies
scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-3, max_value=12), st.integers(), st.integers(min_value=-10 ** 60, max_value=10 ** 60),
    st.sampled_from([MAX_INT - 1, MAX_INT, -MAX_INT, 2 ** 63, 10 ** 4299]),
    st.floats(), st.sampled_from([float("nan"), float("inf"), -0.0, 1e308, 0.5]),
    st.text(max_size=12), st.sampled_from(NAMES), st.sampled_from(["\ud800", "\udfff", "x\ud83d", "\x00", "é", "𝄞"]))


def _deep(n: int):
    value: object = 0
    for i in range(n):
        value = [value] if i % 2 else {"a": value}
    return value


json_values = st.recursive(
    scalars,
    lambda kids: st.one_of(st.lists(kids, max_size=5), st.dictionaries(st.one_of(st.sampled_from(FIELDS), st.text(max_size=6)),
                                                                       kids, max_size=5)),
    max_leaves=25) | st.one_of(st.integers(min_value=1, max_value=60), st.just(900)).map(_deep)


def dumps(value) -> bytes:
    """JSON the way a careless bot writes it: NaN and Infinity as Python writes them, and
    surrogates escaped (``\\ud800``); a structure too deep for ``json`` is written by hand."""
    try:
        return json.dumps(value).encode()
    except (RecursionError, ValueError):
        return b'"?"'


def _replace_id(line: bytes, rid: int) -> bytes:
    return line.replace(b"{id}", str(rid).encode())


@st.composite
def action_objects(draw):
    """An action-like object: a known type with fields from the codecs' vocabulary."""
    obj = {"type": draw(st.sampled_from(NAMES) | scalars)}
    for key in draw(st.lists(st.sampled_from(FIELDS[1:11]), max_size=4, unique=True)):
        obj[key] = draw(json_values)
    return obj


def mutate(draw, value):
    """One random change deep inside ``value`` (an R14 action): a field set to an arbitrary
    value, removed, added, or a number pushed out of range; lists grown or emptied."""
    if isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        op = draw(st.integers(0, 4))
        if op == 0:
            value[key] = draw(json_values)
        elif op == 1:
            del value[key]
        elif op == 2:
            value[draw(st.sampled_from(FIELDS) | st.text(max_size=5))] = draw(json_values)
        else:
            value[key] = mutate(draw, value[key])
    elif isinstance(value, list):
        op = draw(st.integers(0, 4))
        if op == 0 or not value:
            value.append(draw(json_values))
        elif op == 1:
            value.clear()
        elif op == 2:
            value.extend(value * draw(st.integers(1, 3)))
        else:
            i = draw(st.integers(0, len(value) - 1))
            value[i] = mutate(draw, value[i])
    elif isinstance(value, bool) or value is None:
        return draw(json_values)
    elif isinstance(value, int):
        return draw(st.sampled_from([-1, 5, 25, MAX_INT, -MAX_INT - 1, 10 ** 30, value + 1, float(value), str(value)]))
    else:
        return draw(json_values)
    return value


@st.composite
def mutated_actions(draw, game: Game):
    legal = game.legal_actions()
    if game.phase_name == "action":
        legal += list(itertools.islice(game.master_actions(), 5))
    obj = action_to_json(game.rules, draw(st.sampled_from(legal)))
    for _ in range(draw(st.integers(1, 3))):
        obj = mutate(draw, obj)
    return obj


def byte_mutations(line: bytes):
    """Byte-level mutations of a valid reply line: flips, insertions, deletions, splices."""
    specials = [b"[", b"{", b"]", b"}", b'"', b"\\", b"\\u", b"\\ud800", b"\xff", b"\xc3", b"1e999", b"NaN", b"-",
                b"\x00", b",", b":", b"9" * 30]

    @st.composite
    def build(draw):
        data = bytearray(line)
        for _ in range(draw(st.integers(1, 6))):
            i = draw(st.integers(0, len(data)))
            op = draw(st.integers(0, 3))
            if op == 0:
                data[i:i] = draw(st.sampled_from(specials))
            elif op == 1:
                del data[i:i + draw(st.integers(1, 4))]
            elif op == 2 and i < len(data):
                data[i] = draw(st.integers(0, 255))
            else:
                data[i:i] = draw(st.sampled_from(specials)) * draw(st.integers(1, 1500))
        return bytes(data).replace(b"\n", b" ")

    return build()


# ---------------------------------------------------------------- the path under test
class OneReply:
    """A channel whose bot answers one request with ``line`` (``{id}`` becomes the request's id)."""

    def __init__(self, line: bytes):
        self.line = line
        self.sent = 0

    def send(self, data: bytes, deadline: float) -> float:
        self.sent = json.loads(data)["id"]
        return 0.0

    def read_line(self, deadline: float):
        if self.line is None:  # the line was a stale reply (an older id), discarded: then silence
            raise BotTimeout("no reply before the deadline")
        line, self.line = _replace_id(self.line, self.sent), None
        return line, 0.001

    def done(self) -> None:
        pass


def judge(state: Game, line: bytes) -> str:
    """The outcome of one reply line, as the referee meets it: a verdict or ``applied``."""
    game = state.clone()
    proto = Protocol(OneReply(line), "fuzz")
    proto.next_id = 2  # after the handshake
    try:
        reply, _ = proto.request({"type": game.phase_name}, 1.0)
    except BotFault as fault:
        assert fault.verdict in VERDICTS, fault
        assert fault.detail.encode("utf-8") and len(fault.detail) < 600
        return fault.verdict
    before = game.to_json()
    try:
        action = decode_action(game.rules, reply)
        game.apply(action)
    except IllegalAction as exc:
        assert str(exc).encode("utf-8") and len(str(exc)) < 800, str(exc)[:200]
        assert game.to_json() == before, "a rejected action changed the state"
        return "illegal_action"
    assert any(type(a) is type(action) and a == action for a in state.legal_actions()) or \
        state.phase_name == "action", f"a decision outside the listed options was applied: {action}"
    return "applied"


states = st.sampled_from(STATES)


@REPLIES
@given(states, st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"")))
def test_arbitrary_bytes_are_a_verdict(state, line):
    assert judge(state, line) in VERDICTS | {"illegal_action", "applied"}


@REPLIES
@given(states, json_values, st.sampled_from(["action", "id", "reply", "extra", "type"]))
def test_any_json_value_anywhere_in_a_reply_is_a_verdict(state, value, where):
    body = dumps(value)
    line = {"action": b'{"id": {id}, "action": ' + body + b"}",
            "id": b'{"id": ' + body + b', "action": {"type": "pass"}}',
            "reply": body,
            "extra": b'{"id": {id}, "action": {"type": "pass"}, "note": ' + body + b"}",
            "type": b'{"id": {id}, "type": ' + body + b', "action": {"type": "pass"}}'}[where]
    assert judge(state, line) in VERDICTS | {"illegal_action", "applied"}


@REPLIES
@given(states, action_objects())
def test_action_like_objects_are_decoded_or_refused(state, obj):
    outcome = judge(state, b'{"id": {id}, "action": ' + dumps(obj) + b"}")
    assert outcome in VERDICTS | {"illegal_action", "applied"}


@REPLIES
@given(st.data())
def test_mutated_legal_actions_are_decoded_or_refused(data):
    state = data.draw(states)
    obj = data.draw(mutated_actions(state))
    assert judge(state, b'{"id": {id}, "action": ' + dumps(obj) + b"}") in VERDICTS | {"illegal_action", "applied"}


@REPLIES
@given(st.data())
def test_byte_mutations_of_legal_replies_are_a_verdict(data):
    state = data.draw(states)
    obj = action_to_json(state.rules, data.draw(st.sampled_from(state.legal_actions())))
    line = data.draw(byte_mutations(b'{"id": {id}, "action": ' + json.dumps(obj).encode() + b"}"))
    assert judge(state, line) in VERDICTS | {"illegal_action", "applied"}


@FEW
@given(st.data())
def test_the_codec_raises_only_illegal_action_for_any_value(data):
    state = data.draw(states)
    value = data.draw(json_values | action_objects() | mutated_actions(state))
    try:
        action_from_json(state.rules, value)
    except IllegalAction as exc:
        assert len(str(exc)) < 800


# ---------------------------------------------------------------- whole games through the referee's loop
class ScriptedBot:
    """What the referee's game loop needs of a bot process, over a real :class:`Protocol`:
    the bot answers request number ``when`` with ``line`` and every other with its first
    legal option."""

    def __init__(self, line: bytes | None, when: int):
        self.line, self.when = line, when
        self.asked = 0
        self.protocol = Protocol(self, "scripted")
        self.protocol.next_id = 2
        self.pending: dict = {}
        self.closed = False

    # the channel side
    def send(self, data: bytes, deadline: float) -> float:
        self.pending = json.loads(data)
        return 0.0

    def read_line(self, deadline: float):
        msg = self.pending
        self.asked += 1
        if self.asked == self.when and self.line is not None:
            return _replace_id(self.line, msg["id"]), 0.0005
        return json.dumps({"id": msg["id"], "action": msg["legal"][0]}).encode(), 0.0005

    def done(self) -> None:
        pass

    # the BotProcess side
    def ask(self, message: dict, limit_s: float):
        action, wall = self.protocol.request(message, limit_s)
        return action, wall, 0.0

    def cpu_since_last_read(self) -> float:
        return 0.0

    def notify(self, message: dict) -> None:
        json.dumps(message)

    def pause(self) -> None:
        pass

    def resume(self) -> None:
        pass

    def close(self, quit_first: bool = True) -> None:
        self.closed = True


SHORT = RuleSpec.make(("revised",), {"max_rounds": 2})


def referee_game(line: bytes, when: int, policy: str) -> tuple[Game, list[_Seat]]:
    tc = TimeControl.from_json({"move_ms": 1000})
    game = Game.new(SHORT, 2, 7)
    seats = [_Seat(name, Clock(tc)) for name in ("hostile", "good")]
    for seat, bot in zip(seats, (ScriptedBot(line, when), ScriptedBot(None, 0))):
        seat.bot = bot
        seat.ready = {"name": seat.name, "version": "", "legal_actions": True}
    match = _Match(game, seats, {"fault_policy": policy, "pause_idle": False, "seed": 7}, tc)
    try:
        match.play()
    finally:
        match.close_all()
    return game, seats


lines = st.one_of(
    st.binary(max_size=120).map(lambda b: b.replace(b"\n", b"")),
    json_values.map(lambda v: b'{"id": {id}, "action": ' + dumps(v) + b"}"),
    action_objects().map(lambda v: b'{"id": {id}, "action": ' + dumps(v) + b"}"),
    byte_mutations(b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": 1}}'))


@FEW
@given(lines, st.integers(1, 6), st.sampled_from(["forfeit", "random"]))
def test_a_game_with_a_fuzzed_reply_ends_with_a_result_and_a_storable_record(line, when, policy):
    game, seats = referee_game(line, when, policy)
    assert game.is_over
    result = game.result()
    hostile, good = seats
    assert good.faults == [], good.faults
    assert len(hostile.faults) <= 1
    for fault in hostile.faults:
        assert fault["verdict"] in VERDICTS | {"illegal_action"}
        fault["detail"].encode("utf-8")
        if policy == "forfeit":
            assert result["forfeited"] == [True, False] and result["ranking"] == [2, 1]
    json.dumps({"result": result, "faults": hostile.faults}, allow_nan=False)


# ---------------------------------------------------------------- the named hostile inputs, one by one
GOOD = {"type": "take_puzzle", "color": "white", "slot": 0}


@pytest.mark.parametrize("name, line, outcome, words", [
    ("1,000 nested brackets as the reply", b"[" * 1000, "non_json", "nested deeper"),
    ("1,000 nested brackets as the action", b'{"id": {id}, "action": ' + b"[" * 1000 + b"]" * 1000 + b"}", "non_json",
     "nested deeper"),
    ("deep structure in a field", b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": '
     + b"[" * 20 + b"]" * 20 + b"}}", "illegal_action", "needs an integer field 'slot', got [[[[...]]]]"),
    ("deep structure as the cells", b'{"id": {id}, "action": {"type": "place", "puzzle": "W01", "piece": "O1", '
     b'"cells": ' + b"[" * 25 + b"]" * 25 + b"}}", "illegal_action", "each cell must be a [row, col] pair"),
    ("1e999999", b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": 1e999999}}', "non_json",
     "too large"),
    ("NaN", b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": NaN}}', "non_json",
     "NaN is not a JSON number"),
    ("Infinity", b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": Infinity}}', "non_json",
     "Infinity is not a JSON number"),
    ("an int of 5,000 digits", b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": '
     + b"9" * 5000 + b"}}", "non_json", "more than 4300 digits"),
    ("an int of 4,000 digits", b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": '
     + b"9" * 4000 + b"}}", "illegal_action", "field 'slot' is out of range"),
    ("a float slot", b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": 1.0}}',
     "illegal_action", "needs an integer field 'slot', got 1.0"),
    ("a lone surrogate", b'{"id": {id}, "action": {"type": "\\ud800"}}', "non_json", "lone UTF-16 surrogate"),
    ("invalid UTF-8", b'{"id": {id}, "action": {"type": "pass\xff"}}', "non_json", "not UTF-8"),
    ("Latin-1", '{"id": {id}, "action": {"type": "pässe"}}'.encode("latin-1"), "non_json", "not UTF-8"),
    ("duplicate keys", b'{"id": {id}, "action": {"type": "take_piece", "type": "pass"}}', "protocol_error",
     "field 'type' appears twice"),
    ("a list reply", b'[{"id": {id}}]', "non_json", "must be a JSON object"),
    ("a string reply", b'"take_piece"', "non_json", "must be a JSON object"),
    ("an action that is a string", b'{"id": {id}, "action": "take_piece"}', "protocol_error",
     "needs an object field 'action'"),
    ("an unknown field", b'{"id": {id}, "action": {"type": "take_piece", "with": "love"}}', "illegal_action",
     "take_piece has no field 'with'"),
    ("a huge unknown field", b'{"id": {id}, "action": {"type": "take_piece", "' + b"k" * 500_000 + b'": 1}}',
     "illegal_action", "take_piece has no field 'kkkk"),
    ("an unknown type", b'{"id": {id}, "action": {"type": "win"}}', "illegal_action", "unknown action type 'win'"),
    ("a slot out of range", b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": 9}}',
     "illegal_action", "R3.1: slot 9 is not in the row"),
    ("a negative slot", b'{"id": {id}, "action": {"type": "take_puzzle", "color": "white", "slot": -1}}',
     "illegal_action", "slot -1"),
    ("a cell off the grid", b'{"id": {id}, "action": {"type": "place", "puzzle": "W01", "piece": "O1", '
     b'"cells": [[5, 0]]}}', "illegal_action", "cell [5, 0] is off the 5x5 grid"),
    ("a huge cell", b'{"id": {id}, "action": {"type": "place", "puzzle": "W01", "piece": "O1", '
     b'"cells": [[' + b"9" * 400 + b', 0]]}}', "illegal_action", "is off the 5x5 grid"),
    ("a boolean cell", b'{"id": {id}, "action": {"type": "place", "puzzle": "W01", "piece": "O1", '
     b'"cells": [[true, 0]]}}', "illegal_action", "each cell must be a [row, col] pair of integers"),
    ("ten thousand placements", b'{"id": {id}, "action": {"type": "master", "placements": ['
     + b",".join([b"{}"] * 10_000) + b"]}}", "illegal_action", f"has 10000 items; at most {MAX_LIST} are read"),
    ("a reply with a wrong id", b'{"id": 999, "action": {"type": "pass"}}', "protocol_error", "does not match"),
    ("the good reply", json.dumps({"id": "{id}", "action": GOOD}).replace('"{id}"', "{id}").encode(), "applied", ""),
])
def test_each_named_hostile_reply_gets_its_verdict(name, line, outcome, words):
    state = Game.new(RuleSpec(), 2, 3)
    proto = Protocol(OneReply(line), "fuzz")
    proto.next_id = 2
    game = state.clone()
    got, detail = "applied", ""
    try:
        reply, _ = proto.request({"type": "action"}, 1.0)
        game.apply(decode_action(game.rules, reply))
    except BotFault as fault:
        got, detail = fault.verdict, fault.detail
    except IllegalAction as exc:
        got, detail = "illegal_action", str(exc)
    assert (got, name) == (outcome, name), detail[:300]
    assert words in detail, detail[:300]
    assert len(detail) < 600 and detail.encode("utf-8") is not None
    assert judge(state, line) == outcome


def test_show_is_short_and_safe_for_any_value():
    assert show(_deep(5000)) == "[{'a': [{...}]}]"
    assert show(10 ** 4299).startswith("1000") and len(show(10 ** 4299)) <= 80
    huge = 10 ** 5000  # past int's string limit: no repr at all
    assert show(huge) == "<int>"
    assert show("\ud800") == "'\\ud800'"
    assert len(show("x" * 10 ** 6, 200)) <= 200 and len(show(["x" * 50] * 50, 200)) <= 200
