"""The ``planner`` bot: legal full games under every rule set, its clock, no mutation of
the game it is given, no peeking at hidden cards, known completions, the master action,
the finishing touches, and its puzzle solver."""

from __future__ import annotations

import gc
import random
import time

import pytest

from engine import Game, RuleSpec, observation
from engine.actions import Finish, Master
from engine.game import PuzzleInPlay
from engine.observation import game_from_observation

from bots.planner import PlannerPolicy, solver_for
from bots.planner.search import determinize
from bots.planner.solver import PuzzleSolver
from bots.planner_eval import main as planner_eval, play_one, wilson
from arena.plugins import policy


def _shape(game, name):
    return game.rules.shape_index[name]


def _card(game, pid):
    return game.rules.puzzle_index[pid]


def _variant_available(name):
    try:
        Game.new(RuleSpec.make([name]), 1 if name == "solo" else 2, 1)
    except Exception:  # noqa: BLE001 - a variant that is not installed
        return False
    return True


def _play(game, bots, seed=0):
    rng = random.Random(seed)
    while not game.is_over:
        seat = game.to_move()
        action = bots[seat].choose(game, rng)
        game.apply(action)  # raises IllegalAction if the planner chose badly
    return game.result()


def test_r3_plays_a_legal_base_game_to_the_end_and_beats_nobody_by_accident():
    game = Game.new(RuleSpec.make(), 2, 3)
    result = _play(game, [PlannerPolicy(move_ms=100), policy("greedy")])
    assert game.is_over and not result["adjudicated"]
    assert result["completed"][0] >= 3


@pytest.mark.parametrize("variants,players", [
    (["revised"], 2), (["ghost"], 2), (["open-scores", "revised"], 2), (["no-master"], 3), (["solo"], 1),
    (["revised", "ghost"], 4),
])
def test_r8_plays_legal_games_under_variants(variants, players):
    if not all(_variant_available(v) for v in variants):
        pytest.fail(f"variant missing from the engine: {variants}")
    game = Game.new(RuleSpec.make(variants), players, 5)
    bots = [PlannerPolicy(move_ms=100)] + [policy("greedy") for _ in range(players - 1)]
    result = _play(game, bots)
    assert game.is_over
    assert result["completed"][0] >= 1


def test_answers_within_its_time_budget():
    # The bot normally runs in a process of its own. Here it shares the test process, whose
    # heap (every earlier test's objects, the engine's caches) would make the collector's
    # full passes last longer than a bot process ever sees: freeze what is already there.
    gc.collect()
    gc.freeze()
    try:
        game = Game.new(RuleSpec.make(), 2, 11)
        planner, greedy = PlannerPolicy(move_ms=150), policy("greedy")
        rng = random.Random(1)
        times = []
        while not game.is_over and len(times) < 20:
            if game.to_move() == 0:
                t0 = time.perf_counter()
                action = planner.choose(game, rng)
                times.append(time.perf_counter() - t0)
            else:
                action = greedy.choose(game, rng)
            game.apply(action)
    finally:
        gc.unfreeze()
    assert len(times) == 20
    assert max(times) < 0.150, f"slowest decision {max(times) * 1000:.0f} ms for a 150 ms budget"


def test_never_mutates_the_game_it_is_given():
    game = Game.new(RuleSpec.make(), 2, 4)
    planner, greedy = PlannerPolicy(move_ms=20), policy("greedy")
    rng = random.Random(2)
    checked = 0
    while not game.is_over:
        if game.to_move() == 0:
            before = game.to_json()
            action = planner.choose(game, rng)
            assert game.to_json() == before
            checked += 1
        else:
            action = greedy.choose(game, rng)
        game.apply(action)
    assert checked > 10


@pytest.mark.parametrize("variants,players", [((), 2), (["revised"], 2), (["solo"], 1)])
def test_plays_from_a_game_rebuilt_from_its_observation(variants, players):
    """Decks unknown, hidden completed piles (R9.6), the solo grid from the observation."""
    game = Game.new(RuleSpec.make(variants), players, 8)
    planner, greedy = PlannerPolicy(move_ms=100), policy("greedy")
    rng = random.Random(3)
    while not game.is_over:
        seat = game.to_move()
        if seat == 0:
            view = game_from_observation(observation(game, 0))
            action = planner.choose(view, rng)
        else:
            action = greedy.choose(game, rng)
        game.apply(action)
    assert game.result()["completed"][0] >= 1


def test_does_not_read_the_hidden_deck_order():
    """Two games that differ only in their hidden deck orders look the same to the search."""
    a = Game.new(RuleSpec.make(), 2, 21)
    b = a.clone()
    b.decks = [list(reversed(d)) for d in b.decks]
    da, db = determinize(a, 0, random.Random(9)), determinize(b, 0, random.Random(9))
    assert da.decks == db.decks and [len(d) for d in da.decks] == [len(d) for d in a.decks]
    visible = set(a.rows[0] + a.rows[1])
    assert not visible & set(da.decks[0] + da.decks[1])
    assert PlannerPolicy(move_ms=50).choose(a, random.Random(9)) in a.legal_actions()


def _setup(puzzles, supply, seed=0, actions_left=3, last_round=False):
    game = Game.new(RuleSpec.make(), 2, seed)
    if last_round:  # R5.2: the end was triggered a round ago; this is the last turn
        game.end_triggered = True
        game.final_round = game.round
    p = game.players[0]
    p.supply = [0] * len(game.rules.shapes)
    for name, n in supply.items():
        p.supply[_shape(game, name)] = n
    p.unfinished = [PuzzleInPlay(_card(game, pid)) for pid in puzzles]
    game.actions_left = actions_left
    return game


def test_r4_completes_a_puzzle_its_supply_can_fill():
    # W15 is a straight line of five cells: an I4 and an O1 complete it
    game = _setup(["W15"], {"I4": 1, "O1": 1}, last_round=True)
    planner = PlannerPolicy(move_ms=300)
    rng = random.Random(0)
    for _ in range(3):
        if game.seat != 0:
            break
        game.apply(planner.choose(game, rng))
    assert _card(game, "W15") in game.players[0].completed


def test_r3_6_takes_the_master_action_when_it_completes_two_puzzles_at_once():
    # W09 and W10 are I2 and I3 slots: with one action left only the master finishes both
    game = _setup(["W09", "W10"], {"I2": 1, "I3": 1}, actions_left=1, last_round=True)
    action = PlannerPolicy(move_ms=300).choose(game, random.Random(0))
    assert isinstance(action, Master) and len(action.placements) == 2
    game.apply(action)
    completed = game.players[0].completed
    assert _card(game, "W09") in completed and _card(game, "W10") in completed


def test_r6_finishing_touches_complete_puzzles_worth_more_than_their_pieces():
    game = _setup(["B13", "W22"], {"I4": 1, "L4": 1, "O1": 2, "I2": 1})
    game.start_finish()
    action = PlannerPolicy(move_ms=100).choose(game, random.Random(0))
    assert isinstance(action, Finish)
    cards = {place.puzzle for place in action.placements}
    # B13 (3 points, 8 cells: I4 + L4 or so) is worth it; W22 (0 points) is not
    assert _card(game, "B13") in cards and _card(game, "W22") not in cards
    game.apply(action)
    game.apply(Finish(()))  # the other seat adds nothing
    assert game.is_over and game.result()["scores"][0] == 3 - len(action.placements)


def test_solver_finds_a_tiling_within_the_counts_and_proves_impossibility():
    game = Game.new(RuleSpec.make(), 2, 0)
    rs = game.rules
    solver = PuzzleSolver(rs.geometry, rs.shape_level)
    w15 = rs.recess[_card(game, "W15")]
    counts = [0] * len(rs.shapes)
    counts[_shape(game, "I4")] = 1
    counts[_shape(game, "O1")] = 1
    tiling = solver.complete(w15, counts)
    assert tiling is not None and len(tiling) == 2
    covered = 0
    for pid in tiling:
        assert covered & rs.geometry.placement_mask[pid] == 0
        covered |= rs.geometry.placement_mask[pid]
    assert covered == w15
    counts[_shape(game, "I4")] = 0
    assert solver.complete(w15, counts) is None


def test_solver_multisets_all_tile_and_cheapest_prices_missing_pieces():
    game = Game.new(RuleSpec.make(), 2, 0)
    rs = game.rules
    solver = solver_for(rs)
    recess = rs.recess[_card(game, "W16")]
    sets = solver.multisets(recess)
    assert sets
    for ms in sets:
        assert sum(n * lv for n, lv in zip(ms, rs.shape_level)) == bin(recess).count("1")
        assert solver.complete(recess, list(ms)) is not None
    nothing = [0] * len(rs.shapes)
    cost, ms, _ = solver.cheapest(recess, nothing)
    assert cost == sum(n * lv for n, lv in zip(ms, rs.shape_level))  # every cell bought
    cost_now, _, _ = solver.cheapest(recess, list(ms))
    assert cost_now == 0


def test_wilson_interval_brackets_the_rate():
    lo, hi = wilson(85, 100)
    assert lo < 0.85 < hi and 0.76 < lo < 0.78 and 0.90 < hi < 0.91


@pytest.mark.parametrize("safety", ["0", "1.5", "-0.2"])
def test_planner_eval_rejects_a_safety_that_is_not_a_share_of_the_move(safety, capsys):
    with pytest.raises(SystemExit) as exit_info:
        planner_eval(["--solo", "--games", "1", "--safety", safety])
    assert exit_info.value.code == 2
    assert "--safety must be a share of the move time" in capsys.readouterr().err


def test_planner_eval_gives_the_planner_its_safety(monkeypatch):
    seen = []
    real = PlannerPolicy.__init__

    def init(self, *args, **kwargs):
        seen.append(kwargs.get("safety"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(PlannerPolicy, "__init__", init)
    job = (3, 1, 0, ["solo"], {"difficulty": "standard"}, 30, "greedy", {}, (None, 3, 3, 0, 0.9))
    result = play_one(job)
    assert seen == [0.9] and result["decisions"] > 0
    play_one(job[:-1] + ((None, 3, 3, 0),))
    assert seen[-1] == 0.6  # the default when a budget names none


def test_the_garbage_collector_is_paused_during_a_decision_and_restored_after(monkeypatch):
    """The planner pauses Python's cyclic collector while it searches (its copies form no
    cycles: nothing is left for the collector) and restores it as it was, also when the
    search fails."""
    from bots.planner.search import TurnSearch

    game = Game.new(RuleSpec.make(["solo"]), 1, 4)
    bot = PlannerPolicy(nodes=800)
    states = []
    real = TurnSearch.run

    def run(self, root, width, depth=12):
        states.append(gc.isenabled())
        return real(self, root, width, depth)
    monkeypatch.setattr(TurnSearch, "run", run)
    was = gc.isenabled()
    try:
        gc.enable()
        gc.collect()
        gc.disable()
        bot.choose(game, random.Random(1))
        assert gc.collect() == 0  # the search left no cyclic garbage
        assert not gc.isenabled()  # off before, off after
        gc.enable()
        bot.choose(game, random.Random(1))
        assert gc.isenabled()
        assert states and not any(states)

        def boom(*args):
            raise RuntimeError("search failed")
        monkeypatch.setattr(TurnSearch, "run", boom)
        with pytest.raises(RuntimeError):
            bot.choose(game, random.Random(1))
        assert gc.isenabled()
    finally:
        gc.enable() if was else gc.disable()
