"""Protocol tests against scripted exchanges: no process, a fake channel plays the bot."""

from __future__ import annotations

import json

import pytest

from arena.process.protocol import (Protocol, card_data, check_ready, encode, hello_message, parse_line,
                            request_message)
from arena.process.schema import validate
from arena.process.transport import BotNonJson, BotProtocolError, BotTimeout
from engine import Game, RuleSpec, action_to_json, compile_rules, observation
from engine.events import events_since


class ScriptedChannel:
    """A channel whose replies are scripted: each entry is bytes or ``fn(sent_message) -> bytes``."""

    def __init__(self, *replies):
        self.replies = list(replies)
        self.sent: list[dict] = []
        self.now = 0.0
        self.open = False

    def send(self, data: bytes, deadline: float) -> float:
        assert data.endswith(b"\n") and data.count(b"\n") == 1, "one message is one line"
        assert not self.open, "one request in flight"
        self.sent.append(json.loads(data))
        self.open = True
        return self.now

    def read_line(self, deadline: float):
        if not self.replies:
            raise BotTimeout("no reply before the deadline")
        item = self.replies.pop(0)
        line = item(self.sent[-1]) if callable(item) else item
        self.now += 0.001
        return line, self.now

    def done(self) -> None:
        self.open = False


def reply_to(action):
    return lambda sent: json.dumps({"id": sent["id"], "action": action}).encode()


def ready(sent):
    return json.dumps({"type": "ready", "id": sent["id"], "name": "scripted", "version": "1", "legal_actions": True}).encode()


@pytest.fixture
def game():
    return Game.new(RuleSpec(), 2, 3)


def test_hello_and_ready_handshake(game):
    ch = ScriptedChannel(ready)
    proto = Protocol(ch)
    r = proto.hello(hello_message(1, game.rules, {"move_ms": 100, "startup_ms": 1000, "grace_ms": 50}, 7), 1.0)
    assert (r.name, r.version, r.legal_actions) == ("scripted", "1", True)
    hello = ch.sent[0]
    assert hello["type"] == "hello" and hello["id"] == 1 and hello["seat"] == 1 and hello["players"] == 2
    assert hello["protocol"] == 1 and hello["seed"] == 7
    assert validate(hello, "hello") == []


def test_card_data_lists_every_shape_and_puzzle_cell(game):
    cards = card_data(game.rules)
    assert [s["name"] for s in cards["shapes"]][:2] == ["O1", "I2"]
    w01 = next(p for p in cards["puzzles"] if p["id"] == "W01")
    assert len(w01["cells"]) == game.rules.puzzles[game.rules.puzzle_index["W01"]].size


def test_request_ids_increase_and_the_reply_must_echo_them(game):
    ch = ScriptedChannel(ready, reply_to({"type": "pass"}), reply_to({"type": "take_piece"}))
    proto = Protocol(ch)
    proto.hello(hello_message(0, game.rules, {}, 1), 1.0)
    obs = observation(game, 0)
    a1, wall = proto.request(request_message("action", obs, [], {"move_ms": 100, "game_left_ms": None}, None), 1.0)
    a2, _ = proto.request(request_message("action", obs, [], {"move_ms": 100, "game_left_ms": None}, None), 1.0)
    assert (a1, a2) == ({"type": "pass"}, {"type": "take_piece"})
    assert [m["id"] for m in ch.sent] == [1, 2, 3]
    assert wall == pytest.approx(0.001)


def test_a_stale_reply_is_discarded_and_logged_not_taken_as_the_answer(game, caplog):
    stale = json.dumps({"id": 1, "action": {"type": "take_piece"}}).encode()
    ch = ScriptedChannel(ready, stale, reply_to({"type": "pass"}))
    proto = Protocol(ch, "seat0")
    proto.hello(hello_message(0, game.rules, {}, 1), 1.0)
    with caplog.at_level("INFO", logger="arena.process.protocol"):
        action, _ = proto.request(request_message("action", observation(game, 0), [], {}, None), 1.0)
    assert action == {"type": "pass"}
    assert proto.discarded == [{"id": 1, "expected": 2, "line": stale.decode()}]
    assert "discarded a stale reply" in caplog.text


def test_a_duplicate_reply_is_discarded_at_the_next_request(game):
    dup = reply_to({"type": "take_piece"})
    ch = ScriptedChannel(ready, dup, lambda sent: json.dumps({"id": sent["id"] - 1, "action": {"type": "take_piece"}}).encode(),
                         reply_to({"type": "pass"}))
    proto = Protocol(ch)
    proto.hello(hello_message(0, game.rules, {}, 1), 1.0)
    obs = observation(game, 0)
    assert proto.request(request_message("action", obs, [], {}, None), 1.0)[0] == {"type": "take_piece"}
    assert proto.request(request_message("action", obs, [], {}, None), 1.0)[0] == {"type": "pass"}
    assert [d["id"] for d in proto.discarded] == [2]


@pytest.mark.parametrize("line, error, words", [
    (b"hello there", BotNonJson, "not JSON"),
    (b"[1, 2]", BotNonJson, "JSON object"),
    (b'{"id": 99, "action": {"type": "pass"}}', BotProtocolError, "does not match the request id 2"),
    (b'{"id": "2", "action": {"type": "pass"}}', BotProtocolError, "does not match"),
    (b'{"action": {"type": "pass"}}', BotProtocolError, "does not match"),
    (b'{"id": 2, "move": "pass"}', BotProtocolError, "needs an object field 'action'"),
    (b'{"id": 2, "type": "ready", "action": {"type": "pass"}}', BotProtocolError, "has type 'ready'"),
])
def test_bad_replies_are_faults_with_their_own_verdict(game, line, error, words):
    ch = ScriptedChannel(ready, line)
    proto = Protocol(ch)
    proto.hello(hello_message(0, game.rules, {}, 1), 1.0)
    with pytest.raises(error) as info:
        proto.request(request_message("action", observation(game, 0), [], {}, None), 1.0)
    assert words in str(info.value)
    assert not ch.open, "the request is settled even when the reply is bad"


def test_verdict_names():
    assert (BotNonJson.verdict, BotProtocolError.verdict, BotTimeout.verdict) == ("non_json", "protocol_error", "timeout")


@pytest.mark.parametrize("msg, words", [
    ({"type": "action", "id": 1, "name": "x"}, "expected a 'ready'"),
    ({"type": "ready", "id": 1}, "non-empty string field 'name'"),
    ({"type": "ready", "id": 1, "name": "x", "version": 2}, "'version' must be a string"),
    ({"type": "ready", "id": 1, "name": "x", "legal_actions": "yes"}, "must be true or false"),
])
def test_ready_is_checked_by_hand(msg, words):
    with pytest.raises(BotProtocolError, match=words):
        check_ready(msg)
    assert validate(msg, "ready") != [] or msg["type"] != "ready"


def test_no_reply_is_a_timeout(game):
    proto = Protocol(ScriptedChannel())
    with pytest.raises(BotTimeout):
        proto.hello(hello_message(0, game.rules, {}, 1), 0.01)


def test_requests_carry_events_legal_options_and_match_the_schema(game):
    rules = game.rules
    game.apply(game.legal_actions()[0])
    events, nxt = events_since(game, 1, 0)
    assert events and events[0]["seat"] == 0 and nxt == len(game.history)
    legal = [action_to_json(rules, a) for a in game.legal_actions()]
    msg = request_message("action", observation(game, 0), events, {"move_ms": 5, "game_left_ms": None}, legal)
    msg["id"] = 4
    assert validate(msg, "request") == []
    assert msg["actions_left"] == game.actions_left and msg["legal"] == legal
    bare = request_message("action", observation(game, 0), [], {"move_ms": 5, "game_left_ms": None}, None)
    assert "legal" not in bare


def test_encode_is_one_compact_utf8_line():
    line = encode({"type": "quit", "id": 3, "note": "é"})
    assert line == '{"type":"quit","id":3,"note":"é"}\n'.encode()
    assert parse_line(line[:-1]) == {"type": "quit", "id": 3, "note": "é"}


def test_encode_gives_the_standard_librarys_json_for_every_message(monkeypatch):
    """orjson writes the lines; the standard library's text is the reference (same values,
    integer keys as strings), and what orjson refuses (an integer beyond 64 bits in a
    bot's options) is written by the standard library instead of failing."""
    import arena.jsonline as jsonline
    import arena.process.protocol as protocol

    game = Game.new(RuleSpec.make(["revised"]), 2, 5)
    msg = request_message("action", observation(game, 1), [], {"move_ms": 5.5, "game_left_ms": None}, None)
    msg.update(id=7, scores={0: 3, 1: -2})
    line = encode(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == json.loads(json.dumps(msg))
    huge = {"type": "hello", "id": 1, "options": {"depth": 2 ** 70}}
    assert json.loads(encode(huge)) == huge
    hello = hello_message(0, compile_rules(RuleSpec(), 2), {"move_ms": 100}, 3)
    hello["cards"] = protocol.EncodedJSON.of(hello["cards"])
    spliced = json.loads(encode(hello))
    assert spliced["cards"] == json.loads(hello["cards"]) and spliced["seat"] == 0
    monkeypatch.setattr(jsonline, "orjson", None)  # the standard library alone: the same values
    assert json.loads(encode(msg)) == json.loads(line)


def test_schema_rejects_a_reply_without_id():
    assert validate({"action": {"type": "pass"}}, "reply")
    assert validate({"id": 1, "action": {"type": "pass"}}, "reply") == []
    assert validate({"type": "game_over", "id": 9, "result": {"scores": [1], "ranking": [1]}, "events": []}, "game_over") == []
    assert validate({"type": "quit", "id": 9}, "quit") == []


def test_every_message_the_referee_sends_in_a_real_game_matches_the_schema(monkeypatch):
    import arena.process.protocol as protocol
    from arena.referee import play_game

    sent = []
    original = protocol.encode

    def spy(message):
        line = original(message)
        sent.append(json.loads(line))  # what goes down the pipe
        return line

    monkeypatch.setattr(protocol, "encode", spy)
    play_game({"seats": [{"bot": "random"}, {"bot": "pass"}], "seed": 2, "sandbox": "none",
               "rules": {"variants": [], "params": {"max_rounds": 2}}})
    kinds = {"hello": "hello", "action": "request", "reward": "request", "level_up": "request", "finish": "request",
             "game_over": "game_over", "quit": "quit"}
    assert {m["type"] for m in sent} >= {"hello", "action", "finish", "game_over", "quit"}
    for m in sent:
        assert validate(m, kinds[m["type"]]) == [], m["type"]
    hellos = [m for m in sent if m["type"] == "hello"]
    assert sorted(h["seat"] for h in hellos) == [0, 1] and all(h["id"] == 1 for h in hellos)


# ---------------------------------------------------------------- hostile reply lines
DEEP = b"[" * 1000 + b"]" * 1000


@pytest.mark.parametrize("name, line, error, words", [
    ("1,000 nested arrays", DEEP, BotNonJson, "nested deeper than 32 levels"),
    ("unclosed nesting", b"[" * 1000, BotNonJson, "nested deeper than 32 levels"),
    ("a million nested arrays", b"[" * 1_000_000, BotNonJson, "nested deeper than 32 levels"),
    ("nesting inside the action", b'{"id": 2, "action": ' + b'{"a":' * 40 + b"1" + b"}" * 40 + b"}", BotNonJson,
     "nested deeper than 32 levels"),
    ("nesting that Python parses", b'{"id": 2, "action": ' + b"[" * 200 + b"]" * 200 + b"}", BotNonJson,
     "nested deeper than 32 levels"),
    ("invalid UTF-8", b'{"id": 2, "action": {"type": "\xff\xfe"}}', BotNonJson, "not UTF-8 (byte 30: invalid start byte)"),
    ("UTF-16 with a byte-order mark", '{"id": 2}'.encode("utf-16"), BotNonJson, "not UTF-8"),
    ("a UTF-8 byte-order mark", b'\xef\xbb\xbf{"id": 2}', BotNonJson, "not JSON"),
    ("overlong UTF-8", b'{"id": 2, "x": "\xc0\xaf"}', BotNonJson, "not UTF-8"),
    ("a number too large for a double", b'{"id": 2, "action": {"type": "take_puzzle", "slot": 1e999999}}', BotNonJson,
     "the number '1e999999' is too large"),
    ("NaN", b'{"id": NaN, "action": {"type": "pass"}}', BotNonJson, "NaN is not a JSON number"),
    ("Infinity", b'{"id": 2, "action": {"type": "take_puzzle", "slot": -Infinity}}', BotNonJson,
     "-Infinity is not a JSON number"),
    ("an integer of 5,000 digits", b'{"id": 2, "action": {"slot": ' + b"7" * 5000 + b"}}", BotNonJson,
     "an integer has more than 4300 digits"),
    ("an id of 5,000 digits", b'{"id": ' + b"9" * 5000 + b"}", BotNonJson, "more than 4300 digits"),
    ("a lone high surrogate", b'{"id": 2, "action": {"type": "\\ud800"}}', BotNonJson, "lone UTF-16 surrogate"),
    ("a lone low surrogate in a key", b'{"id": 2, "action": {"\\uDC00": 1}}', BotNonJson, "lone UTF-16 surrogate"),
    ("a repeated field", b'{"id": 2, "id": 2, "action": {"type": "pass"}}', BotProtocolError,
     "field 'id' appears twice"),
    ("a repeated field in the action", b'{"id": 2, "action": {"type": "pass", "type": "take_piece"}}',
     BotProtocolError, "field 'type' appears twice"),
    ("an empty line", b"", BotNonJson, "not JSON"),
    ("blanks", b" \t\r", BotNonJson, "not JSON"),
    ("NUL bytes", b"\x00" * 10, BotNonJson, "not JSON"),
    ("a control character in a string", b'{"id": 2, "x": "a\x01b"}', BotNonJson, "not JSON"),
    ("two objects", b'{"id": 2} {"id": 2}', BotNonJson, "Extra data"),
    ("a list", b'[{"id": 2, "action": {"type": "pass"}}]', BotNonJson, "a reply must be a JSON object"),
    ("a string", b'"pass"', BotNonJson, "a reply must be a JSON object"),
    ("null", b"null", BotNonJson, "a reply must be a JSON object"),
    ("a number", b"2", BotNonJson, "a reply must be a JSON object"),
    ("an id that is an object", b'{"id": {"id": 2}, "action": {"type": "pass"}}', BotProtocolError,
     "reply id {'id': 2} does not match"),
    ("an id that is true", b'{"id": true, "action": {"type": "pass"}}', BotProtocolError, "reply id True does not match"),
    ("an id that is a float", b'{"id": 2.0, "action": {"type": "pass"}}', BotProtocolError, "reply id 2.0 does not match"),
    ("a huge id", b'{"id": ' + b"9" * 4000 + b', "action": {"type": "pass"}}', BotProtocolError, "does not match"),
    ("an action that is a list", b'{"id": 2, "action": ["pass"]}', BotProtocolError, "needs an object field 'action'"),
    ("an action that is null", b'{"id": 2, "action": null}', BotProtocolError, "needs an object field 'action'"),
    ("a type that is a list", b'{"id": 2, "type": [1], "action": {"type": "pass"}}', BotProtocolError,
     "has type [1]"),
])
def test_each_hostile_reply_line_is_a_verdict(game, name, line, error, words):
    ch = ScriptedChannel(ready, line)
    proto = Protocol(ch)
    proto.hello(hello_message(0, game.rules, {}, 1), 1.0)
    with pytest.raises(error) as info:
        proto.request(request_message("action", observation(game, 0), [], {}, None), 1.0)
    assert words in str(info.value), name
    assert len(str(info.value)) < 600, "the detail quotes the line shortened"
    assert str(info.value).encode("utf-8"), "the detail is storable text"
    assert not ch.open


@pytest.mark.parametrize("line", [
    b'{"id": 2, "action": {"type": "pass"}, "note": "\\ud83d\\ude00"}',  # a surrogate pair is one character
    b'{"id": 2, "action": {"type": "pass"}, "path": "C:\\\\ud800"}',      # an escaped backslash, then text
    b'{"id": 2, "action": {"type": "pass"}, "x": 1e300, "y": -0.0, "z": ' + b"9" * 4300 + b"}",
    b'{"id": 2, "action": {"type": "pass"}, "deep": ' + b"[" * 30 + b"]" * 30 + b"}",
    b'{"id": 2, "action": {"type": "pass"}, "many": [' + b",".join([b"[1]"] * 100) + b"]}",
    b'\t{"id": 2, "action": {"type": "pass"}}\r',
])
def test_unusual_but_valid_replies_are_accepted(game, line):
    ch = ScriptedChannel(ready, line)
    proto = Protocol(ch)
    proto.hello(hello_message(0, game.rules, {}, 1), 1.0)
    action, _ = proto.request(request_message("action", observation(game, 0), [], {}, None), 1.0)
    assert action == {"type": "pass"}


def test_parse_line_keeps_its_speed_on_a_plain_reply():
    line = b'{"id": 7, "action": {"type": "finish", "placements": [' + b", ".join(
        [b'{"puzzle": "W01", "piece": "I2", "cells": [[0, 0], [0, 1]]}'] * 8) + b"]}}"
    assert parse_line(line)["action"]["placements"][7]["cells"] == [[0, 0], [0, 1]]


def test_a_ready_with_an_endless_name_is_a_protocol_error():
    with pytest.raises(BotProtocolError, match="at most 200 characters"):
        check_ready({"type": "ready", "id": 1, "name": "x" * 10_000})


def test_stale_replies_beyond_the_first_twenty_are_only_counted(game):
    stale = json.dumps({"id": 1, "action": {"type": "take_piece"}}).encode()
    ch = ScriptedChannel(ready, *[stale] * 500, reply_to({"type": "pass"}))
    proto = Protocol(ch)
    proto.hello(hello_message(0, game.rules, {}, 1), 1.0)
    action, _ = proto.request(request_message("action", observation(game, 0), [], {}, None), 1.0)
    assert action == {"type": "pass"}
    assert len(proto.discarded) == 20 and proto.discarded_count == 500


def test_true_is_not_the_id_1(game):
    proto = Protocol(ScriptedChannel(b'{"type": "ready", "id": true, "name": "x"}'))
    with pytest.raises(BotProtocolError, match="reply id True does not match the request id 1"):
        proto.hello(hello_message(0, game.rules, {}, 1), 1.0)


def test_control_characters_of_a_bot_are_escaped_in_messages(game):
    ch = ScriptedChannel(ready, b'\x1b[2J\x1b]0;owned\x07 not json')
    proto = Protocol(ch)
    proto.hello(hello_message(0, game.rules, {}, 1), 1.0)
    with pytest.raises(BotNonJson) as info:
        proto.request(request_message("action", observation(game, 0), [], {}, None), 1.0)
    assert "\x1b" not in str(info.value) and "\\x1b[2J\\x1b]0;owned\\x07 not json" in str(info.value)
    with pytest.raises(BotProtocolError, match="must be printable text"):
        check_ready({"type": "ready", "id": 1, "name": "bot\x1b[31m"})


def test_pre_encoded_cards_make_the_same_hello_line():
    """The referee encodes a ruleset's card data once and splices it into every hello."""
    from engine import RuleSpec, compile_rules

    from arena.process.protocol import EncodedJSON

    rules = compile_rules(RuleSpec.make(["revised", "ghost"]), 3)
    hello = hello_message(1, rules, {"move_ms": 100}, 7)
    hello.update(id=5, options={"name": "é"})
    spliced = dict(hello, cards=EncodedJSON.of(hello["cards"]))
    line = encode(spliced)
    assert line.endswith(b"}\n") and line.count(b"\n") == 1
    assert json.loads(line) == json.loads(encode(hello))
