"""R14's canonical JSON for actions and decisions, at the engine's edge.

``to_json(rules, action)`` and ``from_json(rules, obj)`` convert between the compact
action tuples of :mod:`engine.actions` and the JSON bots speak. Decoding validates the
shape of the message (types, fields, cells on the grid, that the cells are the named
shape) and raises :class:`~engine.errors.IllegalAction` citing the rule; whether the
action is *legal now* is decided by :meth:`engine.game.Game.apply`.

Decoding faces whatever a bot sends, so :func:`from_json` raises nothing but
:class:`~engine.errors.IllegalAction` for any JSON value (a decoder's unexpected error
included), quotes the offending values shortened (:func:`show`), and bounds what it will
read: integers within :data:`MAX_INT`, lists of at most :data:`MAX_LIST` items.
"""

from __future__ import annotations

import reprlib
from typing import Any

from .actions import (BLACK, COLOR_NAMES, PASS, TAKE_PIECE, WHITE, Finish, LevelUp, Master, Pass, Place,
                      Reward, TakePiece, TakePuzzle, Upgrade)
from .cards import GRID
from .errors import IllegalAction

_COLORS = {"white": WHITE, "black": BLACK}
#: the largest magnitude of an integer field (slots are single digits)
MAX_INT = 1 << 31
#: the most items of a list field (placements, steps); a finishing touch of a whole
#: deck of puzzles places fewer than 1,400 pieces
MAX_LIST = 4096

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = _REPR.maxother = 60
_REPR.maxlong = 24
_REPR.maxlist = _REPR.maxdict = _REPR.maxtuple = _REPR.maxset = 6


def describe_error(exc: BaseException, limit: int = 200) -> str:
    """``TypeError: ...`` for a message: at most ``limit`` characters, surrogates escaped."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to at most ``limit`` characters, for messages quoting a bot's data.

    Safe for any value: deep or huge structures, integers beyond ``int``'s string limit,
    strings with lone surrogates (``repr`` escapes them).
    """
    try:
        text = _REPR.repr(value)
    except Exception:  # e.g. ValueError: an int of over 4300 digits has no repr
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def to_json(rules, action) -> dict:
    """R14 JSON of ``action`` under ``rules``."""
    enc = rules.encoders.get(type(action))
    if enc is None:
        raise IllegalAction("R14", f"no JSON form for {type(action).__name__}")
    return enc(rules, action)


def from_json(rules, obj: Any):
    """Parse R14 JSON into an action; raises :class:`IllegalAction` on a malformed message."""
    if not isinstance(obj, dict):
        raise IllegalAction("R14", f"an action must be a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    if not isinstance(kind, str):
        raise IllegalAction("R14", "an action needs a string field 'type'")
    dec = rules.decoders.get(kind)
    if dec is None:
        known = ", ".join(sorted(rules.decoders))
        raise IllegalAction("R14", f"unknown action type {show(kind)} under rules {rules.spec.label()} (known: {known})")
    try:
        return dec(rules, obj)
    except IllegalAction:
        raise
    except Exception as exc:  # a decoder (a variant's too) met a value it did not expect
        raise IllegalAction("R14", f"malformed {kind} action ({describe_error(exc)})") from None


# ---------------------------------------------------------------- field helpers
def check_fields(obj: dict, allowed: tuple[str, ...], what: str) -> None:
    """Reject fields an action of kind ``what`` does not have."""
    for key in obj:
        if key not in allowed:
            raise IllegalAction("R14", f"{what} has no field {show(key)} (fields: {', '.join(allowed)})")


def get_int(obj: dict, key: str, what: str) -> int:
    v = obj.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise IllegalAction("R14", f"{what} needs an integer field {key!r}, got {show(v)}")
    if not -MAX_INT < v < MAX_INT:
        raise IllegalAction("R14", f"{what} field {key!r} is out of range, got {show(v)}")
    return v


def get_color(obj: dict, what: str) -> int:
    v = obj.get("color")
    if not isinstance(v, str) or v not in _COLORS:
        raise IllegalAction("R14", f"{what} needs field 'color' to be \"white\" or \"black\", got {show(v)}")
    return _COLORS[v]


def get_shape(rules, obj: dict, key: str, what: str) -> int:
    v = obj.get(key)
    if not isinstance(v, str):
        raise IllegalAction("R14", f"{what} needs a piece name in field {key!r}, got {show(v)}")
    s = rules.shape_index.get(v)
    if s is None:
        raise IllegalAction("R0", f"unknown piece {show(v)} (pieces: {', '.join(sh.name for sh in rules.shapes)})")
    return s


def get_list(obj: dict, key: str, what: str) -> list:
    v = obj.get(key)
    if not isinstance(v, list):
        raise IllegalAction("R14", f"{what} needs a list in field {key!r}, got {show(v)}")
    if len(v) > MAX_LIST:
        raise IllegalAction("R14", f"{what} field {key!r} has {len(v)} items; at most {MAX_LIST} are read")
    return v


def shape_name(rules, s: int) -> str:
    return rules.shapes[s].name


_PLACEMENT_FIELDS = frozenset(("type", "puzzle", "piece", "cells"))


def cells_mask(cells) -> int | None:
    """The bitmask of a ``[[row, col], ...]`` list of distinct on-grid integer cells, or
    None for anything else (the checking path then says what is wrong)."""
    if type(cells) is not list:
        return None
    m = 0
    for cell in cells:
        if type(cell) is not list or len(cell) != 2:
            return None
        r, c = cell
        if type(r) is not int or type(c) is not int or not (0 <= r < GRID and 0 <= c < GRID):
            return None
        bit = 1 << (r * GRID + c)
        if m & bit:
            return None
        m |= bit
    return m


def piece_placement(rules, shape_name: Any, cells: Any) -> int | None:
    """The placement id of a well-formed piece (a shape's name and its cells), or None."""
    shape = rules.shape_index.get(shape_name) if type(shape_name) is str else None
    if shape is None:
        return None
    m = cells_mask(cells)
    return None if m is None else rules.geometry.lookup.get((shape, m))


def parse_placement(rules, obj: Any, what: str = "a placement") -> Place:
    """``{"puzzle": id, "piece": shape, "cells": [[r, c], ...]}`` -> :class:`Place`.

    A well-formed placement is read straight away; anything else goes through the checks
    below, which raise with a sentence that says what is wrong (the same verdicts)."""
    if type(obj) is dict and obj.keys() <= _PLACEMENT_FIELDS:
        puzzle = obj.get("puzzle")
        card = rules.puzzle_index.get(puzzle) if type(puzzle) is str else None
        if card is not None:
            pid = piece_placement(rules, obj.get("piece"), obj.get("cells"))
            if pid is not None:
                return Place(card, pid)
    if not isinstance(obj, dict):
        raise IllegalAction("R14", f"{what} must be an object with 'puzzle', 'piece' and 'cells'")
    check_fields(obj, ("type", "puzzle", "piece", "cells"), what)
    pid = obj.get("puzzle")
    if not isinstance(pid, str):
        raise IllegalAction("R14", f"{what} needs a card id in field 'puzzle', got {show(pid)}")
    card = rules.puzzle_index.get(pid)
    if card is None:
        raise IllegalAction("R3.5", f"there is no puzzle {show(pid)} in this game")
    shape = get_shape(rules, obj, "piece", what)
    cells = obj.get("cells")
    if not isinstance(cells, list) or not cells:
        raise IllegalAction("R14", f"{what} needs field 'cells': a list of [row, col] pairs")
    seen = set()
    for cell in cells:
        if (not isinstance(cell, list) or len(cell) != 2
                or any(isinstance(x, bool) or not isinstance(x, int) for x in cell)):
            raise IllegalAction("R14", f"{what}: each cell must be a [row, col] pair of integers, got {show(cell)}")
        r, c = cell
        if not (0 <= r < GRID and 0 <= c < GRID):
            raise IllegalAction("R3.5", f"cell [{show(r)}, {show(c)}] is off the 5x5 grid")
        if (r, c) in seen:
            raise IllegalAction("R14", f"{what}: cell [{r}, {c}] is listed twice")
        seen.add((r, c))
    placement = rules.geometry.placement_of(shape, cells)
    if placement is None:
        raise IllegalAction("R3.5", f"cells {cells} are not a {shape_name(rules, shape)} in any rotation or reflection")
    return Place(card, placement)


def placement_json(rules, place: Place) -> dict:
    """R14's placement object (without ``type``)."""
    g = rules.geometry
    return {"puzzle": rules.puzzles[place.puzzle].id,
            "piece": rules.shapes[g.placement_shape[place.placement]].name,
            "cells": g.cells_of(place.placement)}


def parse_placements(rules, obj: dict, what: str) -> tuple[Place, ...]:
    return tuple(parse_placement(rules, x, f"{what} placement {i}") for i, x in enumerate(get_list(obj, "placements", what)))


# ---------------------------------------------------------------- base decoders/encoders
def _dec_take_puzzle(rules, obj):
    check_fields(obj, ("type", "color", "slot"), "take_puzzle")
    return TakePuzzle(get_color(obj, "take_puzzle"), get_int(obj, "slot", "take_puzzle"))


def _dec_take_piece(rules, obj):
    check_fields(obj, ("type",), "take_piece")
    return TAKE_PIECE


def _dec_upgrade(rules, obj):
    check_fields(obj, ("type", "give", "take"), "upgrade")
    return Upgrade(get_shape(rules, obj, "give", "upgrade"), get_shape(rules, obj, "take", "upgrade"))


def _dec_place(rules, obj):
    return parse_placement(rules, obj, "place")


def _dec_master(rules, obj):
    check_fields(obj, ("type", "placements"), "master")
    return Master(parse_placements(rules, obj, "master"))


def _dec_pass(rules, obj):
    check_fields(obj, ("type",), "pass")
    return PASS


def _dec_reward(rules, obj):
    check_fields(obj, ("type", "take"), "reward")
    return Reward(get_shape(rules, obj, "take", "reward"))


def _dec_level_up(rules, obj):
    check_fields(obj, ("type", "steps"), "level_up")
    steps = []
    for i, st in enumerate(get_list(obj, "steps", "level_up")):
        if not isinstance(st, dict):
            raise IllegalAction("R14", f"level_up step {i} must be an object with 'give' and 'take'")
        check_fields(st, ("give", "take"), f"level_up step {i}")
        steps.append((get_shape(rules, st, "give", f"level_up step {i}"), get_shape(rules, st, "take", f"level_up step {i}")))
    return LevelUp(tuple(steps))


def _dec_finish(rules, obj):
    check_fields(obj, ("type", "placements"), "finish")
    return Finish(parse_placements(rules, obj, "finish"))


BASE_DECODERS = {
    "take_puzzle": _dec_take_puzzle,
    "take_piece": _dec_take_piece,
    "upgrade": _dec_upgrade,
    "place": _dec_place,
    "master": _dec_master,
    "pass": _dec_pass,
    "reward": _dec_reward,
    "level_up": _dec_level_up,
    "finish": _dec_finish,
}

BASE_ENCODERS = {
    TakePuzzle: lambda rules, a: {"type": "take_puzzle", "color": COLOR_NAMES[a.color], "slot": a.slot},
    TakePiece: lambda rules, a: {"type": "take_piece"},
    Upgrade: lambda rules, a: {"type": "upgrade", "give": shape_name(rules, a.give), "take": shape_name(rules, a.take)},
    Place: lambda rules, a: {"type": "place", **placement_json(rules, a)},
    Master: lambda rules, a: {"type": "master", "placements": [placement_json(rules, p) for p in a.placements]},
    Pass: lambda rules, a: {"type": "pass"},
    Reward: lambda rules, a: {"type": "reward", "take": shape_name(rules, a.take)},
    LevelUp: lambda rules, a: {"type": "level_up", "steps": [{"give": shape_name(rules, g), "take": shape_name(rules, t)} for g, t in a.steps]},
    Finish: lambda rules, a: {"type": "finish", "placements": [placement_json(rules, p) for p in a.placements]},
}
