"""Whole states as JSON and back; what a seat's observation shows and hides; events."""

from __future__ import annotations

import copy
import json
import random

import pytest

from arena.plugins import policy
from conftest import W09, act, dealt, place, start_finish, take
from engine import Game, RuleSpec, compile_rules, observation
from engine.events import events_since
from engine.observation import game_from_observation


def _json_round_trip(game):
    obj = json.loads(json.dumps(game.to_json()))
    back = Game.from_json(obj)
    assert back == game
    assert back.to_json() == game.to_json()
    return back


def _greedy_game(players=3, seed=4, steps=None, **params):
    game = Game.new(RuleSpec.make((), params), players, seed)
    pols = [policy("greedy") if s % 2 == 0 else policy("random") for s in range(players)]
    rng = random.Random(seed)
    n = 0
    while not game.is_over and (steps is None or n < steps):
        game.apply(pols[game.to_move()].choose(game, rng))
        n += 1
    return game


def test_state_round_trip_at_setup_mid_game_and_end():
    game = dealt(3)
    _json_round_trip(game)
    take(game, "white", 2)
    place(game, "W10", "O1", [[1, 2]])
    _json_round_trip(game)
    game.forfeit(2)
    _json_round_trip(game)
    for steps in (10, 40, None):
        _json_round_trip(_greedy_game(steps=steps))


def test_state_round_trip_during_the_finishing_touches():
    game = dealt(2, black=["B13", "B14", "B15", "B16"])
    take(game, "white", 0)
    start_finish(game)
    act(game, {"type": "finish", "placements": [{"puzzle": "W09", "piece": "I2", "cells": W09}]})
    back = _json_round_trip(game)
    assert back.to_json()["finishes"] == {"0": [{"puzzle": "W09", "piece": "I2", "cells": W09}]}
    act(back, {"type": "finish", "placements": []})
    act(game, {"type": "finish", "placements": []})
    assert back == game and back.is_over and back.players[0].locked == 1


def test_restored_game_plays_on_exactly_like_the_original():
    game = _greedy_game(steps=30)
    back = Game.from_json(game.to_json())
    rng_a, rng_b = random.Random(9), random.Random(9)
    pols = [policy("greedy") for _ in range(3)]
    while not game.is_over:
        a = pols[game.to_move()].choose(game, rng_a)
        b = pols[back.to_move()].choose(back, rng_b)
        assert a == b
        game.apply(a)
        back.apply(b)
    assert back == game and back.result() == game.result()


def test_clone_is_independent():
    game = dealt()
    take(game, "white", 2)
    c = game.clone()
    place(c, "W10", "O1", [[1, 2]])
    assert c != game
    assert game.players[0].unfinished[0].placed == [] and game.players[0].supply[0] == 1
    assert game.clone() == game


# ---------------------------------------------------------------- observations
def test_observation_hides_the_order_of_both_decks():
    game = _greedy_game(steps=12)
    hidden = [game.rules.puzzles[c].id for d in game.decks for c in d]
    all_blacks = {p.id for p in game.rules.puzzles if p.color == "black"}
    in_game = {game.rules.puzzles[c].id for c in game.decks[1] + game.rows[1]} | {
        game.rules.puzzles[pz.card].id for p in game.players for pz in p.unfinished} | {
        game.rules.puzzles[c].id for p in game.players for c in p.completed}
    left_out = all_blacks - in_game
    assert hidden and left_out
    for seat in range(game.n):
        obs = observation(game, seat)
        text = json.dumps(obs)
        for cid in hidden + sorted(left_out):
            assert f'"{cid}"' not in text, f"{cid} is visible to seat {seat}"
        assert obs["decks"] == {"white": len(game.decks[0]), "black": len(game.decks[1])}
        assert json.loads(text) == obs


def test_observation_shows_rows_supplies_and_puzzles():
    game = dealt(2)
    take(game, "white", 2)
    place(game, "W10", "O1", [[1, 2]])
    obs = observation(game, 1)
    assert obs["rows"]["white"] == ["W09", "W22", "W24", "W27"]
    assert obs["seats"][0]["supply"] == {"I2": 1}
    assert obs["seats"][0]["unfinished"] == [{"puzzle": "W10", "pieces": [{"piece": "O1", "cells": [[1, 2]]}]}]
    assert obs["to_move"] == 0 and obs["seat"] == 1 and obs["actions_left"] == 1
    assert obs["reserve"]["O1"] == 8 and obs["reserve"]["L4"] == 10


def test_base_rules_show_every_score():
    game = dealt(2)
    take(game, "white", 0)
    place(game, "W09", "I2", W09)
    for seat in (0, 1):
        obs = observation(game, seat)
        assert obs["seats"][0]["completed"] == ["W09"] and obs["seats"][0]["score"] == 1
        assert obs["seats"][1]["completed"] == [] and obs["seats"][1]["score"] == 0


def test_rules_that_hide_scores_show_only_the_count_to_others():
    # A copy of the compiled base rules with the R10 seam closed, as a rule set hiding
    # scores would have it: what each seat sees is then decided by the observation alone.
    rs = copy.copy(compile_rules(RuleSpec.make(), 2))
    rs.scores_visible = False
    game = Game.new(rs, 2, 0, {"white": ["W09", "W22", "W10", "W27"], "black": ["B13", "B14", "B15", "B16", "B17"]})
    take(game, "white", 0)
    place(game, "W09", "I2", W09)
    own, other = observation(game, 0)["seats"][0], observation(game, 1)["seats"][0]
    assert own["completed"] == ["W09"] and own["score"] == 1 and own["completed_count"] == 1
    assert "completed" not in other and "score" not in other and other["completed_count"] == 1
    assert "W09" not in json.dumps(observation(game, 1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_game_from_observation_lists_the_same_legal_actions(seed):
    game = Game.new(RuleSpec.make((), {"max_rounds": 12}), 3, seed)
    pols = [policy("greedy"), policy("random"), policy("greedy")]
    rng = random.Random(seed)
    while not game.is_over:
        seat = game.to_move()
        rebuilt = game_from_observation(observation(game, seat))
        assert rebuilt.to_move() == seat and rebuilt.phase == game.phase
        assert [(type(a), a) for a in rebuilt.legal_actions()] == [(type(a), a) for a in game.legal_actions()]
        action = pols[seat].choose(game, rng)
        if game.phase_name == "action":
            rebuilt.apply(action)
        game.apply(action)


@pytest.mark.parametrize("variants, seed", [((), 0), ((), 5), (("revised",), 1), (("ghost",), 2)])
def test_a_rebuild_that_reuses_the_last_puzzles_is_the_rebuild_from_scratch(variants, seed):
    """Each seat's bot keeps a ``reuse`` dict across its requests, and its policy may apply
    actions to the game it was given (placing pieces on the reused puzzles): every rebuild
    still equals the one made from the observation alone."""
    game = Game.new(RuleSpec.make(variants), 2, seed)
    pols = [policy("greedy"), policy("random")]
    rng = random.Random(seed)
    reuse: list[dict] = [{}, {}]
    search = random.Random(seed + 1)
    while not game.is_over:
        seat = game.to_move()
        obs = observation(game, seat)
        fresh, again = game_from_observation(obs), game_from_observation(obs, reuse[seat])
        state = lambda g: [[(pz.card, pz.filled, pz.placed) for pz in p.unfinished] for p in g.players]  # noqa: E731
        assert state(again) == state(fresh)
        assert [(type(a), a) for a in again.legal_actions()] == [(type(a), a) for a in fresh.legal_actions()]
        for _ in range(3):  # a search on the game it was given must not reach the next rebuild
            if not again.is_over and again.legal_actions():
                again.apply(search.choice(again.legal_actions()))
        game.apply(pols[seat].choose(game, rng))
    assert len(reuse[0]) > 1 and len(reuse[1]) > 1  # (the puzzles it kept)


# ---------------------------------------------------------------- events
@pytest.mark.parametrize("variants", [(), ("revised",), ("ghost",)])
def test_events_with_each_actions_json_made_once_are_the_events_made_per_seat(variants):
    """The referee keeps one list of encoded actions for all the seats of a game: every
    seat's events are still the ones made for it alone, the game's end included."""
    game = Game.new(RuleSpec.make(variants), 3, 7)
    pols = [policy("greedy"), policy("random"), policy("greedy")]
    rng = random.Random(7)
    encoded: list = []
    start = [0, 0, 0]
    while True:
        for viewer in range(3):
            shared, nxt = events_since(game, viewer, start[viewer], encoded)
            assert (shared, nxt) == events_since(game, viewer, start[viewer])
            start[viewer] = nxt if rng.random() < 0.5 else start[viewer]  # some seats wait a few moves
        if game.is_over:
            break
        game.apply(pols[game.to_move()].choose(game, rng))
    assert len(encoded) == len(game.history) or game.rules.event_filter is not None


def test_events_since_reports_every_action_once_in_json():
    game = _greedy_game(players=2, steps=25)
    game.forfeit(1)
    seen, start = [], 0
    for _ in range(3):
        events, start = events_since(game, 0, start)
        seen.extend(events)
    assert start == len(game.history) and len(seen) == len(game.history)
    assert seen[-1] == {"seat": 1, "forfeit": True}
    for event, (seat, action) in zip(seen, game.history):
        assert event["seat"] == seat
        json.dumps(event)
