"""A whole game state as JSON and back (``Game.to_json`` / ``Game.from_json``).

Names, not indices, appear in the JSON (card ids, shape names, placements as cells), so a
saved state stays readable and survives changes to internal numbering. ``history`` holds
the actions in R14 JSON; a forfeit is recorded as ``{"seat": s, "forfeit": true}``.
"""

from __future__ import annotations

from .actions import PHASE_NAMES
from .belongings import PlayerState, PuzzleInPlay
from .codec import from_json as action_from_json
from .codec import parse_placement, piece_placement, placement_json, to_json as action_to_json
from .rules import RuleSpec, compile_rules, jsonable


def _card_ids(rules, cards):
    return [rules.puzzles[c].id if c >= 0 else None for c in cards]


def _cards(rules, ids):
    return [rules.puzzle_index[i] if i is not None else -1 for i in ids]


def _shape_counts(rules, counts) -> dict[str, int]:
    return {rules.shapes[s].name: n for s, n in enumerate(counts) if n}


def _counts(rules, obj) -> list[int]:
    out = [0] * len(rules.shapes)
    for name, n in obj.items():
        out[rules.shape_index[name]] = n
    return out


def puzzle_to_json(rules, pz: PuzzleInPlay) -> dict:
    """A puzzle in play: ``{"puzzle": id, "pieces": [{"piece": shape, "cells": [...]}]}``."""
    g = rules.geometry
    shapes, shape_of, cells = rules.shapes, g.placement_shape, g.placement_cells
    return {"puzzle": rules.puzzles[pz.card].id,
            "pieces": [{"piece": shapes[shape_of[pid]].name, "cells": list(map(list, cells[pid]))} for pid in pz.placed]}


def puzzle_from_json(rules, obj: dict) -> PuzzleInPlay:
    """Inverse of :func:`puzzle_to_json` (each piece checked to be its shape)."""
    pz = PuzzleInPlay(rules.puzzle_index[obj["puzzle"]])
    masks = rules.geometry.placement_mask
    for piece in obj["pieces"]:
        placement = None
        if type(piece) is dict and len(piece) == 2:  # {"piece", "cells"}, as puzzle_to_json writes it
            placement = piece_placement(rules, piece.get("piece"), piece.get("cells"))
        if placement is None:  # anything else is checked, and refused with a sentence
            placement = parse_placement(rules, {"puzzle": obj["puzzle"], **piece}).placement
        pz.placed.append(placement)
        pz.filled |= masks[placement]
    return pz


def history_to_json(rules, history) -> list[dict]:
    """The action log as ``[{"seat": s, "action": {...}}, ...]``."""
    out = []
    for seat, action in history:
        if action is None:
            out.append({"seat": seat, "forfeit": True})
        else:
            out.append({"seat": seat, "action": action_to_json(rules, action)})
    return out


def game_to_json(game) -> dict:
    rules = game.rules
    players = []
    for p in game.players:
        players.append({
            "supply": _shape_counts(rules, p.supply),
            "unfinished": [puzzle_to_json(rules, pz) for pz in p.unfinished],
            "completed": _card_ids(rules, p.completed),
            "finish_pieces": p.finish_pieces,
            "locked": p.locked,
            "forfeited": p.forfeited,
            "extra": jsonable(p.extra),
        })
    return {
        "rules": rules.spec.to_json(),
        "players": game.n,
        "seed": game.seed,
        "reserve": _shape_counts(rules, game.reserve),
        "decks": {"white": _card_ids(rules, game.decks[0]), "black": _card_ids(rules, game.decks[1])},
        "rows": {"white": _card_ids(rules, game.rows[0]), "black": _card_ids(rules, game.rows[1])},
        "seats": players,
        "seat": game.seat,
        "actions_left": game.actions_left,
        "master_used": game.master_used,
        "round": game.round,
        "end_triggered": game.end_triggered,
        "final_round": game.final_round,
        "phase": PHASE_NAMES[game.phase],
        "adjudicated": game.adjudicated,
        "pending": _card_ids(rules, game.pending),
        "decision": jsonable(game.decision),
        "finishes": {str(seat): [placement_json(rules, pl) for pl in places]
                     for seat, places in sorted(game.finishes.items())},
        "history": history_to_json(rules, game.history),
        "extra": jsonable(game.extra),
    }


def game_from_json(obj: dict, game_class):
    """The game ``obj`` describes, built as a ``game_class`` (:class:`~engine.game.Game`)."""
    spec = RuleSpec.from_json(obj["rules"])
    rules = compile_rules(spec, obj["players"])
    game = game_class(rules, obj["seed"])
    game.reserve = _counts(rules, obj["reserve"])
    game.decks = [_cards(rules, obj["decks"]["white"]), _cards(rules, obj["decks"]["black"])]
    game.rows = [_cards(rules, obj["rows"]["white"]), _cards(rules, obj["rows"]["black"])]
    game.players = []
    for po in obj["seats"]:
        p = PlayerState(len(rules.shapes))
        p.supply = _counts(rules, po["supply"])
        p.unfinished = [puzzle_from_json(rules, u) for u in po["unfinished"]]
        p.completed = _cards(rules, po["completed"])
        p.finish_pieces = po["finish_pieces"]
        p.locked = po["locked"]
        p.forfeited = po["forfeited"]
        p.extra = po.get("extra") or {}
        game.players.append(p)
    game.seat = obj["seat"]
    game.actions_left = obj["actions_left"]
    game.master_used = obj["master_used"]
    game.round = obj["round"]
    game.end_triggered = obj["end_triggered"]
    game.final_round = obj["final_round"]
    game.phase = PHASE_NAMES.index(obj["phase"])
    game.adjudicated = obj["adjudicated"]
    game.pending = _cards(rules, obj["pending"])
    game.decision = obj["decision"]
    game.finishes = {int(seat): tuple(parse_placement(rules, pl) for pl in places)
                     for seat, places in obj["finishes"].items()}
    game.history = []
    for entry in obj["history"]:
        if entry.get("forfeit"):
            game.history.append((entry["seat"], None))
        else:
            game.history.append((entry["seat"], action_from_json(rules, entry["action"])))
    game.extra = obj.get("extra") or {}
    return game
