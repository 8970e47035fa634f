"""``arena replay``: re-simulate a replay and print it turn by turn."""

from __future__ import annotations

from pathlib import Path

import typer

from engine.errors import ReplayMismatch
from engine.replay import load_replay, resimulate, steps

from ..errors import ArenaError
from .render import describe, render_player, render_rows, use_color


class ReplayFailed(ArenaError):
    """The replay does not reproduce (or cannot be read)."""

    exit_code = 3


def show_replay(path: Path, quiet: bool = False, color: bool | None = None) -> None:
    """Print the game in ``path`` and check it reproduces; raises :class:`ReplayFailed`."""
    try:
        record = load_replay(path)
        if quiet:
            game = resimulate(record)
        else:
            color = use_color() if color is None else color
            game = None
            last_round = 0
            for i, entry, game in steps(record):
                if game.round != last_round and not game.is_over:
                    last_round = game.round
                typer.echo(f"[{i:4}] round {game.round if not game.is_over else '-'}: {describe(entry)}")
                nxt = record["actions"][i + 1] if i + 1 < len(record["actions"]) else None
                if nxt is None or nxt.get("seat") != entry.get("seat"):
                    for line in render_player(game, entry["seat"], color):
                        typer.echo("       " + line)
            game = resimulate(record)
            typer.echo("")
            for line in render_rows(game):
                typer.echo(line)
    except ReplayMismatch as exc:
        raise ReplayFailed(f"{path}: the replay does not reproduce: {exc}") from None
    res = game.result()
    typer.echo(f"{path}: reproduces; scores {res['scores']}, ranking {res['ranking']}, "
               f"{res['rounds']} rounds{' (adjudicated)' if res['adjudicated'] else ''}")
