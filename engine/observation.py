"""What one seat may see (OpenSpiel-style: the observation is separate from the state).

Hidden: the order of both decks (only their sizes are shown) and, when the rule set hides
scores (R10), the other players' completed puzzles and scores (their count stays
visible). During the finishing touches the others' choices are not applied until every
seat has chosen, so none can be seen (R6.1).
"""

from __future__ import annotations

from .actions import COLOR_NAMES, OVER, PHASE_NAMES
from .belongings import PlayerState
from .game import Game
from .rules import RuleSpec, compile_rules
from .state_json import puzzle_from_json


def _names(rules) -> tuple:
    """``(shape names, puzzle ids, each placement's piece as (shape name, its cells))`` of a
    compiled ruleset, made once and kept on it (the rules never change once compiled)."""
    names = rules.__dict__.get("_observation_names")
    if names is None:
        g = rules.geometry
        shape_names = tuple(s.name for s in rules.shapes)
        pieces = tuple((shape_names[g.placement_shape[pid]], tuple(g.placement_cells[pid]))
                       for pid in range(len(g.placement_cells)))
        names = rules._observation_names = (shape_names, tuple(p.id for p in rules.puzzles), pieces)
    return names


def observation(game, seat: int) -> dict:
    """The JSON-ready view of ``game`` for ``seat``.

    Every list and mapping in it is its own (a caller may edit it): only strings and numbers
    are shared with the game."""
    rules = game.rules
    shape_names, ids, pieces = _names(rules)
    all_visible = rules.scores_visible or game.phase == OVER  # piles are revealed at the end
    seats = []
    for s, p in enumerate(game.players):
        entry = {
            "seat": s,
            "supply": {name: n for name, n in zip(shape_names, p.supply) if n},
            "unfinished": [{"puzzle": ids[pz.card],
                            "pieces": [{"piece": pieces[pid][0], "cells": [list(c) for c in pieces[pid][1]]}
                                       for pid in pz.placed]}
                           for pz in p.unfinished],
            "completed_count": len(p.completed),
            "forfeited": p.forfeited,
        }
        if all_visible or s == seat:
            entry["completed"] = [ids[c] for c in p.completed]
            entry["score"] = game.score(s)
        seats.append(entry)
    spec = rules.spec
    rows = game.rows
    decks = game.decks
    obs = {
        "seat": seat,
        "players": game.n,
        "rules": {"variants": list(spec.variants), "params": {}} if not spec.params else spec.to_json(),
        "round": game.round,
        "phase": PHASE_NAMES[game.phase],
        "to_move": game.to_move(),
        "actions_left": game.actions_left,
        "master_used": game.master_used,
        "end_triggered": game.end_triggered,
        "final_round": game.final_round or None,
        "reserve": dict(zip(shape_names, game.reserve)),
        "rows": {COLOR_NAMES[0]: [ids[x] if x >= 0 else None for x in rows[0]],
                 COLOR_NAMES[1]: [ids[x] if x >= 0 else None for x in rows[1]]},
        "decks": {COLOR_NAMES[0]: len(decks[0]), COLOR_NAMES[1]: len(decks[1])},
        "seats": seats,
    }
    if game.decision is not None and game.seat == seat:
        obs["decision"] = game.decision
    for hook in rules.observe_hooks:
        hook(game, seat, obs)
    return obs


def game_from_observation(obs: dict, reuse: dict | None = None):
    """A :class:`~engine.game.Game` a bot can search from, rebuilt from its observation.

    What the seat cannot see is left unknown: deck contents become placeholders (-1, an
    empty slot if drawn) of the right length, and hidden completed piles become empty
    lists. ``legal_actions()`` and ``apply()`` for the seat to move are exact, and so is
    the resolution of completions still waiting behind an open decision.

    ``reuse``, a dict the caller keeps from one call to the next (a bot rebuilds a game for
    every request; most puzzles in play have not changed since the previous one), holds each
    seat's puzzles as last read, with their JSON: a puzzle whose JSON equals the last one's
    is a copy of the puzzle read then, not read again piece by piece. The caller must leave
    the observations it passed unchanged (the last is compared with the next).
    """
    rules = _compiled(obs["rules"], obs["players"])
    game = Game(rules, None)
    shape_names = _names(rules)[0]
    shape_index, puzzle_index = rules.shape_index, rules.puzzle_index
    reserve = obs["reserve"]
    game.reserve = [reserve.get(name, 0) for name in shape_names]
    decks = obs["decks"]
    game.decks = [[-1] * decks["white"], [-1] * decks["black"]]
    rows = obs["rows"]
    game.rows = [[puzzle_index[x] if x is not None else -1 for x in rows["white"]],
                 [puzzle_index[x] if x is not None else -1 for x in rows["black"]]]
    seats = obs["seats"]
    if len(seats) != len(game.players):  # (the game made one fresh state per seat of its rules)
        game.players = [PlayerState(len(rules.shapes)) for _ in seats]
    if reuse is not None and reuse.get("rules") is not rules:
        reuse.clear()
        reuse["rules"] = rules
    for i, (p, entry) in enumerate(zip(game.players, seats)):
        supply = p.supply
        for name, n in entry["supply"].items():
            supply[shape_index[name]] = n
        p.completed = [puzzle_index[c] for c in entry.get("completed", ())]
        p.forfeited = entry["forfeited"]
        if reuse is None:
            p.unfinished = [puzzle_from_json(rules, u) for u in entry["unfinished"]]
            continue
        p.unfinished = out = []
        for u in entry["unfinished"]:
            key = (i, u.get("puzzle"))
            known = reuse.get(key)
            if known is None or known[0] != u:
                pz = puzzle_from_json(rules, u)
                known = reuse[key] = (u, pz)
            out.append(known[1].copy())
    game.seat = obs["to_move"] if obs["to_move"] >= 0 else obs["seat"]
    game.actions_left = obs["actions_left"]
    game.master_used = obs["master_used"]
    game.round = obs["round"]
    game.end_triggered = obs["end_triggered"]
    game.final_round = obs["final_round"] or 0
    game.phase = PHASE_NAMES.index(obs["phase"])
    game.decision = obs.get("decision")
    if game.decision is not None and 0 <= game.seat < len(game.players):
        # R4.1/R11.5: completions still waiting behind the open decision are the mover's
        # fully covered puzzles, in the order taken; they are resolved after it.
        recess = rules.recess
        game.pending = [pz.card for pz in game.players[game.seat].unfinished if pz.filled == recess[pz.card]]
    for hook in rules.restore_hooks:
        hook(game, obs)
    return game


_COMPILED: dict = {}


def _compiled(spec_json, players):
    """The compiled ruleset of an observation's ``rules`` (a bot rebuilds a game for every
    request: the usual spec, variants without parameters, is looked up by its names)."""
    if type(spec_json) is dict and not spec_json.get("params") and spec_json.keys() <= {"variants", "params"}:
        variants = spec_json.get("variants")
        if type(variants) is list and all(type(v) is str for v in variants):
            key = (tuple(variants), players)
            hit = _COMPILED.get(key)
            if hit is None:
                if len(_COMPILED) > 64:
                    _COMPILED.clear()
                hit = _COMPILED[key] = compile_rules(RuleSpec.from_json(spec_json), players)
            return hit
    return compile_rules(RuleSpec.from_json(spec_json), players)

