"""Replays: seed + rules + deal + the action list, and their re-simulation.

A replay is plain JSON. Re-simulating it from the seed (or deal) must reproduce every
state: :func:`resimulate` applies each recorded action, and at the end compares the result
and a digest of the final state with the recorded ones, raising
:class:`~engine.errors.ReplayMismatch` with the first difference.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterator

from .codec import from_json as action_from_json
from .errors import EngineError, IllegalAction, ReplayMismatch
from .game import Game
from .jsonfile import read_json_file
from .rules import RuleSpec
from .state_json import history_to_json

FORMAT = "project-l-replay"
VERSION = 1


def state_digest(game: Game) -> str:
    """SHA-256 of the canonical JSON of the state (history excluded)."""
    obj = game.to_json()
    obj.pop("history", None)
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def make_replay(game: Game, deal: dict | None = None, meta: dict | None = None) -> dict:
    """The replay record of ``game`` (finished or not)."""
    record = {
        "format": FORMAT,
        "version": VERSION,
        "rules": game.rules.spec.to_json(),
        "players": game.n,
        "seed": game.seed,
        "deal": deal,
        "actions": history_to_json(game.rules, game.history),
        "result": game.result() if game.is_over else None,
        "final_digest": state_digest(game),
    }
    if meta:
        record.update(meta)
    return record


def load_replay(path: str | Path) -> dict:
    """Read a replay file; errors name the file and what is wrong."""
    record = read_json_file(path, ReplayMismatch, "replay")
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ReplayMismatch(f"{path}: not a Project L replay (no \"format\": \"{FORMAT}\")")
    for key in ("rules", "players", "seed", "actions"):
        if key not in record:
            raise ReplayMismatch(f"{path}: the replay has no field '{key}'")
    return record


def steps(record: dict) -> Iterator[tuple[int, dict, Game]]:
    """Re-simulate ``record``, yielding ``(index, entry, game after the entry)``."""
    try:
        game = Game.new(RuleSpec.from_json(record["rules"]), record["players"], record["seed"], record.get("deal"))
    except EngineError as exc:
        raise ReplayMismatch(f"cannot start the recorded game: {exc}") from None
    actions = record["actions"]
    if not isinstance(actions, list):
        raise ReplayMismatch("field 'actions' must be a list of {\"seat\": ..., \"action\": ...} entries")
    for i, entry in enumerate(actions):
        if not isinstance(entry, dict):
            raise ReplayMismatch(f"action {i} must be an object with 'seat' and 'action', got {json.dumps(entry)}")
        seat = entry.get("seat")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < game.n:
            raise ReplayMismatch(f"action {i} names seat {seat!r}, not a seat of this {game.n}-player game")
        if entry.get("forfeit"):
            game.forfeit(seat)
        else:
            if seat != game.to_move():
                raise ReplayMismatch(f"action {i}: recorded for seat {seat}, but seat {game.to_move()} is to move")
            try:
                game.apply(action_from_json(game.rules, entry.get("action")))
            except IllegalAction as exc:
                raise ReplayMismatch(f"action {i} ({json.dumps(entry.get('action'))}) is rejected: {exc}") from None
        yield i, entry, game


def resimulate(record: dict) -> Game:
    """Re-simulate and check ``record``; returns the final game."""
    game = None
    for _, _, game in steps(record):
        pass
    if game is None:
        game = Game.new(RuleSpec.from_json(record["rules"]), record["players"], record["seed"], record.get("deal"))
    if record.get("result") is not None:
        if not game.is_over:
            raise ReplayMismatch("the recorded game is over, but the re-simulated game is not")
        if game.result() != record["result"]:
            raise ReplayMismatch(f"result differs: recorded {record['result']}, re-simulated {game.result()}")
    digest = record.get("final_digest")
    if digest is not None and digest != state_digest(game):
        raise ReplayMismatch("the final state differs from the recorded one (digest mismatch)")
    return game
