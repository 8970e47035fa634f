"""Protocol tests against scripted exchanges: no process, a fake channel plays the bot."""

from __future__ import annotations

import json

import pytest

from arena.process.protocol import (Protocol, card_data, check_ready, encode, hello_message, parse_line,
                            request_message)
from arena.process.schema import validate
from arena.process.transport import BotNonJson, BotProtocolError, BotTimeout
from engine import Game, RuleSpec, action_to_json, observation
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
        sent.append(json.loads(json.dumps(message)))
        return original(message)

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
