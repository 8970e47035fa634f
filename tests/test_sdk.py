"""The Python SDK and the built-in protocol bots, in-process and as processes."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

import arena.hookspecs as hookspecs
from arena.plugins import BotRegistrationError, bot_command, bots
from arena.sdk import Bot
from bots.run import PassBot, PolicyBot
from engine import Game, RuleSpec, action_from_json, observation
from engine.events import events_since


class Lucky(Bot):
    name, version, want_legal = "lucky", "2.0", True

    def act(self, observation):
        return self.legal[-1]


def lines(*msgs):
    return io.BytesIO(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))


def request(game, seat, rid, legal=True):
    from engine import action_to_json
    msg = {"type": game.phase_name, "id": rid, "observation": observation(game, seat), "actions_left": game.actions_left,
           "clock": {"move_ms": 100, "game_left_ms": None}, "events": events_since(game, seat, 0)[0]}
    if legal:
        msg["legal"] = [action_to_json(game.rules, a) for a in game.legal_actions()]
    return msg


def test_a_ten_line_bot_answers_hello_and_requests_echoing_ids():
    game = Game.new(RuleSpec(), 2, 1)
    out = io.BytesIO()
    Lucky().run(lines({"type": "hello", "id": 1, "seat": 0, "seed": 3}, request(game, 0, 2),
                      {"type": "game_over", "id": 3, "result": {"scores": [0, 0]}, "events": []},
                      {"type": "quit", "id": 4}, {"type": "hello", "id": 5}), out)
    replies = [json.loads(x) for x in out.getvalue().splitlines()]
    assert replies[0] == {"type": "ready", "id": 1, "name": "lucky", "version": "2.0", "legal_actions": True}
    assert replies[1]["id"] == 2 and replies[1]["action"] == request(game, 0, 2)["legal"][-1]
    assert len(replies) == 2, "nothing after quit; no reply to game_over"


def test_default_decisions_decline_and_place_nothing():
    bot = Lucky()
    assert bot.level_up({}) == {"type": "level_up", "steps": []}
    assert bot.finish({}) == {"type": "finish", "placements": []}
    assert bot.reward({"decision": {"options": ["T4", "L4"]}}) == {"type": "reward", "take": "T4"}


def test_a_bot_without_act_says_what_to_implement():
    with pytest.raises(NotImplementedError, match="act"):
        Bot().act({})


@pytest.mark.parametrize("name", ["greedy", "random"])
def test_policy_bots_play_legal_actions_from_the_observation_alone(name):
    game = Game.new(RuleSpec(), 2, 4)
    bot = PolicyBot(name)
    bot.handle({"type": "hello", "id": 1, "seat": 0, "seed": 9, "rules": game.rules.spec.to_json(), "players": 2})
    for rid in range(2, 40):
        if game.is_over:
            break
        seat = game.to_move()
        reply = bot.handle(request(game, seat, rid, legal=False))
        assert reply["id"] == rid
        game.apply(action_from_json(game.rules, reply["action"]))


def test_the_pass_bot_passes():
    assert PassBot().act({}) == {"type": "pass"}


def test_bots_run_rejects_an_unknown_name():
    proc = subprocess.run([sys.executable, "-m", "bots.run", "nosuch"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "no built-in policy named 'nosuch'" in proc.stderr


def test_built_in_bots_register_through_the_hook():
    known = bots()
    assert {"greedy", "random", "pass"} <= set(known)
    # each built-in bot is its own plugin of the `arena` entry-point group
    assert {name: known[name].plugin for name in ("greedy", "random", "pass", "planner")} == {
        "greedy": "bots.greedy", "random": "bots.random", "pass": "bots.pass", "planner": "bots.planner"}
    # every built-in bot plays in-process too (`pass` as well: arena bots lists it, --inprocess plays it)
    assert known["greedy"].policy is not None and known["pass"].policy is not None
    assert bot_command("greedy")[-3:] == ["-m", "bots.run", "greedy"]


def test_every_host_hook_is_prefixed_typed_and_documented():
    specs = [getattr(hookspecs, n) for n in dir(hookspecs) if n.startswith("arena_")]
    assert specs
    for fn in specs:
        assert fn.__doc__ and ":param" in fn.__doc__
        assert fn.__annotations__, f"{fn.__name__} has no type annotations"


def test_registrations_are_validated_in_one_place(monkeypatch):
    import arena.plugins as plugins
    from arena.hookspecs import hookimpl

    class Twice:
        @hookimpl
        def arena_register_bots(self, register):
            register(name="greedy", command=["x"], description="again")

    pm = plugins.plugin_manager()
    monkeypatch.setattr(plugins, "_BOTS", None)
    pm.register(Twice(), name="twice")
    try:
        with pytest.raises(BotRegistrationError, match="registered twice"):
            plugins.bots()
    finally:
        pm.unregister(name="twice")
        monkeypatch.setattr(plugins, "_BOTS", None)


def test_the_sdk_reads_and_writes_its_lines_with_or_without_orjson(monkeypatch):
    """Lines are read and replies written by orjson, or by the standard library where orjson
    is missing or refuses a value (an integer beyond 64 bits in a bot's reply)."""
    import arena.jsonline as jsonline

    class Echo(Bot):
        def act(self, observation):
            return {"type": "pass", "note": 2 ** 70}

    game = Game.new(RuleSpec(), 2, 1)
    request = {"type": "action", "id": 5, "observation": observation(game, 0), "clock": {}, "events": []}
    for module in (jsonline.orjson, None):
        monkeypatch.setattr(jsonline, "orjson", module)
        out = io.BytesIO()
        Echo().run(io.BytesIO((json.dumps(request) + "\n" + '{"type": "quit"}\n').encode()), out)
        assert json.loads(out.getvalue()) == {"id": 5, "action": {"type": "pass", "note": 2 ** 70}}


GC_PROBE = """
import gc, sys
from arena.sdk import Bot
class Probe(Bot):
    gc_thresholds = {thresholds}
    def new_game(self, hello):
        self.name = f"t{{gc.get_threshold()[0]}}-frozen{{gc.get_freeze_count() > 0}}"
Probe().run()
"""


@pytest.mark.parametrize("thresholds, said", [("(10_000, 20, 20)", "t10000-frozenTrue"), ("None", "t700-frozenTrue")])
def test_a_bot_process_serves_with_its_start_up_frozen_and_the_collector_it_asks_for(thresholds, said):
    hello = {"type": "hello", "id": 1, "seat": 0, "seed": 3}
    out = subprocess.run([sys.executable, "-c", GC_PROBE.format(thresholds=thresholds)], check=True,
                         input=json.dumps(hello) + "\n" + json.dumps({"type": "quit"}) + "\n",
                         capture_output=True, text=True, timeout=60).stdout
    assert json.loads(out)["name"] == said


def test_a_bot_served_on_given_streams_leaves_the_callers_collector_alone():
    import gc

    before = gc.get_threshold(), gc.get_freeze_count()
    out = io.BytesIO()
    Lucky().run(lines({"type": "hello", "id": 1, "seat": 0}, {"type": "quit"}), out)
    assert json.loads(out.getvalue())["name"] == "lucky"
    assert (gc.get_threshold(), gc.get_freeze_count()) == before
