"""The planner in solo (R12): it looks one own turn further than the turn it plays (the
automaton's replies are deterministic), inside its budget, and stays replayable."""

from __future__ import annotations

import random

import pytest

from engine import Game, RuleSpec
from engine.actions import FINISH, OVER

import bots.planner.policy as planner_mod  # where PlannerPolicy finds next_turn_value
import bots.planner.search as search_mod
from bots.planner import PlannerPolicy, solver_for
from bots.planner.evaluate import Context, Weights
from bots.planner.search import TurnSearch, by_first_action, determinize, next_turn_value, turn_ends, unseen_cards


def _solo(seed=3, difficulty="challenging"):
    return Game.new(RuleSpec.make(["solo"], {"difficulty": difficulty}), 1, seed)


def _search(game, width=3, nodes=None):
    rng = random.Random(1)
    root = determinize(game, 0, rng)
    ctx = Context(root, 0, solver_for(game.rules), Weights(), solo=True, unseen=unseen_cards(game, 0), rng=rng)
    search = TurnSearch(ctx, float("inf"), nodes, keep_ends=True)
    search.run(root, width)
    return root, ctx, search


def next_turn(search, ctx, width, keep=12):
    """One sweep of the lookahead: each first action at its best two-turn line."""
    ends = turn_ends(search, keep)
    return by_first_action(ends, [next_turn_value(search, ctx, end, width)[0] for end in ends])


def test_r12_lookahead_values_each_first_action_at_the_end_of_the_next_turn(monkeypatch):
    game = _solo()
    root, ctx, search = _search(game)
    assert search.complete_ends and all(c.round == root.round + 1 for _, c, _ in search.complete_ends)
    rounds = []
    real = search_mod.evaluate

    def spy(g, c):
        rounds.append(g.round)
        return real(g, c)
    monkeypatch.setattr(search_mod, "evaluate", spy)
    values = next_turn(search, ctx, width=1, keep=4)
    # the best ends of this turn (at most 2 per first action), each followed by a search
    # of the next turn: the positions valued reach the turn after (two automaton replies)
    assert 2 <= len(values) <= 4 and set(values) <= {f for _, _, f in search.complete_ends}
    assert max(rounds) == root.round + 2 and min(rounds) == root.round + 1
    # the automaton's second reply is in those values: a line's value can fall or rise
    best_now = {f: search.complete[f] for f in values}
    assert any(abs(values[f] - best_now[f]) > 1e-9 for f in values)


def test_r12_lookahead_keeps_a_finished_game_at_its_own_value():
    game = _solo()
    root, ctx, search = _search(game)
    v, c, f = max(search.complete_ends, key=lambda t: t[0])
    c.phase = OVER  # as if the game had ended with this turn
    search.complete_ends = [(v, c, f)]
    assert next_turn(search, ctx, width=3) == {f: v}
    c.phase = FINISH
    assert next_turn(search, ctx, width=3) == {f: v}


def test_r12_lookahead_runs_only_in_solo_and_can_be_turned_off(monkeypatch):
    calls = []
    real = planner_mod.next_turn_value

    def spy(search, ctx, end, width, **kw):
        calls.append(width)
        return real(search, ctx, end, width, **kw)
    monkeypatch.setattr(planner_mod, "next_turn_value", spy)
    PlannerPolicy(nodes=3000, max_width=6).choose(_solo(), random.Random(1))
    assert calls and calls[0] == 1  # widened from 1 while the budget lasted
    calls.clear()
    PlannerPolicy(nodes=3000, max_width=6, lookahead=0).choose(_solo(), random.Random(1))
    assert not calls
    PlannerPolicy(nodes=3000, max_width=6).choose(Game.new(RuleSpec.make(["revised"]), 2, 3), random.Random(1))
    assert not calls


@pytest.mark.slow
def test_r12_solo_game_with_the_node_budget_replays_move_for_move():
    def play(move_ms):
        game = _solo(seed=7)
        bot = PlannerPolicy(nodes=800, max_width=3, move_ms=move_ms)
        rng = random.Random(5)
        while not game.is_over:
            game.apply(bot.choose(game, rng))
        return [repr(a) for _, a in game.history]
    assert play(0.001) == play(10_000)


def test_r12_lock_pieces_in_play_are_worth_keeping():
    from bots.planner.evaluate import evaluate
    game = _solo(difficulty="unbeatable")  # locks (1, 2, 1), nothing in the supply: 4 in play
    ctx = Context(game, 0, solver_for(game.rules), Weights(solo_exposure=3.0), solo=True)
    four = evaluate(game, ctx)
    game.extra["locks"] = [0, 1, 0]  # what a skipped automaton turn leaves (R12.3)
    one = evaluate(game, ctx)
    assert four - one == pytest.approx(3.0 * (2.0 - 1.0))  # two open columns a turn, not one
    game.extra["locks"] = [0, 0, 0]
    assert one - evaluate(game, ctx) == pytest.approx(3.0)  # three open columns
    game.extra["automaton_supply"] = 3  # in its supply they still come back as locks
    assert evaluate(game, ctx) == pytest.approx(four)
    off = Context(game, 0, solver_for(game.rules), Weights(solo_exposure=0.0), solo=True)
    game.extra["automaton_supply"] = 0
    assert evaluate(game, off) == pytest.approx(evaluate(_solo(difficulty="unbeatable"), off))


@pytest.mark.parametrize("seed", [50001, 50005, 50007])
def test_r12_unbeatable_first_turn_keeps_the_four_lock_pieces_in_play(seed):
    # letting the automaton find every column locked would save a white puzzle now and
    # leave one lock piece for the rest of the game (R12.3)
    game = _solo(seed, "unbeatable")
    bot = PlannerPolicy(nodes=1500)
    rng = random.Random(seed)
    while game.round == 1:
        game.apply(bot.choose(game, rng))
    assert sum(game.extra["locks"]) + game.extra["automaton_supply"] == 4
    assert len(game.extra["automaton_pile"]) == 1


def test_r12_a_wider_run_is_made_only_where_the_beam_dropped_a_line(monkeypatch):
    game = _solo()
    root, ctx, search = _search(game, width=1)
    assert search.cut  # the first action of a turn has more options than one line
    # the last action of a turn: every line ends it, nothing to drop
    last = game.clone()
    while last.actions_left > 1:
        last.apply(PlannerPolicy(nodes=200).choose(last, random.Random(2)))
    _, _, small = _search(last, width=1)
    _, _, wide = _search(last, width=48)
    assert not small.cut and small.complete == wide.complete and small.nodes == wide.nodes
    # the planner does not repeat it at wider beams
    widths = []
    real = TurnSearch.run

    def run(self, root, width, depth=12):
        widths.append(width)
        return real(self, root, width, depth)
    monkeypatch.setattr(TurnSearch, "run", run)
    PlannerPolicy(nodes=2000, lookahead=0).choose(last, random.Random(1))
    assert widths == [1]
    widths.clear()
    PlannerPolicy(nodes=2000, lookahead=0).choose(game, random.Random(1))
    assert widths[:3] == [1, 3, 6]


def test_r12_a_sweep_cut_short_counts_for_the_ends_it_reached(monkeypatch):
    """The lookahead keeps, per end, the best next-turn line found at any width: the ends
    reached by a sweep the budget cut short count (most promising first), an end searched
    exactly is not searched again, and no answer comes before every end was searched."""
    game = _solo()
    log = []
    real = planner_mod.next_turn_value

    def spy(search, ctx, end, width, **kw):
        value, exact = real(search, ctx, end, width, **kw)
        log.append((id(end[1]), width, value, exact))
        return value, exact
    monkeypatch.setattr(planner_mod, "next_turn_value", spy)
    PlannerPolicy(nodes=6000, max_width=48).choose(game, random.Random(1))
    ends = {e for e, _, _, _ in log}
    assert len(ends) > 1
    first = [e for e, w, _, _ in log if w == 1]
    assert sorted(first) == sorted(ends)  # every end once at width 1 before any wider
    assert log[:len(first)] == [t for t in log if t[1] == 1]
    exact = {e for e, _, _, x in log if x}
    for e in exact:  # searched exactly: never again
        assert [t[1] for t in log if t[0] == e][-1] == max(t[1] for t in log if t[0] == e)
        assert sum(1 for t in log if t[0] == e and t[3]) == 1
    widest = max(w for _, w, _, _ in log)
    # the last sweep was cut short by the budget: only some of the ends got it
    assert widest > 1 and 0 < sum(1 for _, w, _, _ in log if w == widest) < len(ends - exact)


def test_r12_lookahead_answer_needs_every_end_searched_once(monkeypatch):
    """A budget that runs out before every end of the turn was searched once leaves the
    turn search's own answer."""
    game = _solo()

    def starved(*args, **kw):
        raise search_mod.OutOfTime
    plain = PlannerPolicy(nodes=6000, lookahead=0).choose(game, random.Random(1))
    monkeypatch.setattr(planner_mod, "next_turn_value", starved)
    assert PlannerPolicy(nodes=6000).choose(game, random.Random(1)) == plain
    calls = []
    real = search_mod.next_turn_value

    def half(search, ctx, end, width, **kw):  # the first sweep reaches one end only
        if calls:
            raise search_mod.OutOfTime
        calls.append(1)
        return real(search, ctx, end, width, **kw)
    monkeypatch.setattr(planner_mod, "next_turn_value", half)
    assert PlannerPolicy(nodes=6000).choose(game, random.Random(1)) == plain
