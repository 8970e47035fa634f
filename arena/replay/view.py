"""``arena replay``: re-simulate a replay and print it turn by turn.

Each action is labelled with the round it was played in -- the round before the engine
applied it (the last action of a round ends it, and the game's counter then already shows
the next round)."""

from __future__ import annotations

from pathlib import Path

import typer

from engine.errors import ReplayMismatch
from engine.replay import resimulate, steps

from ..errors import ArenaError
from .lines import load_game
from .render import describe, render_player, render_rows, use_color


class ReplayFailed(ArenaError):
    """The replay does not reproduce (or cannot be read)."""

    exit_code = 3


def played_steps(record: dict):
    """Re-simulate ``record``, yielding ``(index, entry, round it was played in, game after it)``."""
    current = 1  # a game starts in round 1 (R2)
    for i, entry, game in steps(record):
        yield i, entry, current, game
        current = game.round


def show_replay(path: Path, quiet: bool = False, color: bool | None = None, game_number: int | None = None) -> None:
    """Print the game in ``path`` -- a replay file, or game ``game_number`` (default the first)
    of a JSON-lines file of games (``--games-out``) -- and check it reproduces; raises
    :class:`ReplayFailed`."""
    label = str(path)
    try:
        record, label = load_game(path, game_number)
        if quiet:
            game = resimulate(record)
        else:
            color = use_color() if color is None else color
            game = None
            for i, entry, played_in, game in played_steps(record):
                typer.echo(f"[{i:4}] round {played_in}: {describe(entry)}")
                nxt = record["actions"][i + 1] if i + 1 < len(record["actions"]) else None
                if nxt is None or nxt.get("seat") != entry.get("seat"):
                    for line in render_player(game, entry["seat"], color):
                        typer.echo("       " + line)
            game = resimulate(record)
            typer.echo("")
            for line in render_rows(game):
                typer.echo(line)
    except ReplayMismatch as exc:
        raise ReplayFailed(f"{label}: the replay does not reproduce: {exc}") from None
    res = game.result()
    typer.echo(f"{label}: reproduces; scores {res['scores']}, ranking {res['ranking']}, "
               f"{res['rounds']} rounds{' (adjudicated)' if res['adjudicated'] else ''}")
