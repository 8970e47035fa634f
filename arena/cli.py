"""``arena``: the command line. This file holds only the commands; the work is elsewhere.

Every command turns the arena's and the engine's errors into one sentence on stderr and a
non-zero exit code (2 for bad input), never a traceback.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Optional

import typer

from engine import EngineError

from .errors import ArenaError, UsageError

app = typer.Typer(
    name="arena",
    help=(
        "Project L bot arena: bots written in any language play Project L through a JSON "
        "protocol on stdin/stdout, each in its own sandboxed process under a clock.\n\n"
        "Tournaments come from YAML files (`arena validate`, `arena run`, `arena standings`); "
        "Elo ladders live in `arena league`; `arena experiment` plays the same deals under "
        "several rule sets to test house rules at scale; `arena replay` and `arena index` show "
        "what happened. Bots are named (see `arena bots`) or given as commands; rules are the "
        "base game plus variants (see `arena variants`). Every command prints a sentence and "
        "exits non-zero on bad input.\n\n"
        "Start with: arena run tournaments/demo.yaml"
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)
bench_app = typer.Typer(help="Benchmarks that print measured figures.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")


def fail(message: str, code: int = 1) -> None:
    """Print ``message`` on stderr and exit with ``code``."""
    typer.echo(f"arena: {message}", err=True)
    raise typer.Exit(code)


def guarded(fn):
    """Turn the arena's and the engine's errors into a sentence and an exit code."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ArenaError as exc:
            fail(str(exc), exc.exit_code)
        except EngineError as exc:
            fail(str(exc), 2)
        except KeyboardInterrupt:
            fail("interrupted", 130)

    return wrapper


def command(*args, **kwargs):
    """``@app.command`` with :func:`guarded` error handling."""

    def deco(fn):
        return app.command(*args, **kwargs)(guarded(fn))

    return deco


def emit_json(obj) -> None:
    typer.echo(json.dumps(obj, sort_keys=True))


@command("cards")
def cards_cmd(
    card_id: Optional[str] = typer.Argument(None, metavar="[ID]", help="A card id (W07, B12, GW03) to draw."),
    card_set_name: str = typer.Option("base", "--set", help="Card set to list: base or ghost."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> None:
    """List the puzzle cards, or draw one card as a 5x5 grid."""
    from engine.cards import card_set


    if card_id is not None:
        for name in ("base", "ghost"):
            cs = card_set(name)
            for p in cs.puzzles:
                if p.id.upper() == card_id.upper():
                    if as_json:
                        emit_json({"id": p.id, "color": p.color, "points": p.points, "reward": p.reward,
                                   "shape": list(p.rows), "cells": p.size})
                        return
                    typer.echo(f"{p.id}  {p.color}, {p.points} points, reward {p.reward}, {p.size} cells")
                    for row in p.rows:
                        typer.echo("  " + " ".join(row))
                    return
        raise UsageError(f"no card {card_id!r} (ids look like W07, B12, GW03; see `arena cards`)")
    cs = card_set(card_set_name)
    if as_json:
        emit_json([{"id": p.id, "color": p.color, "points": p.points, "reward": p.reward, "cells": p.size}
                   for p in cs.puzzles])
        return
    typer.echo(f"{cs.name}: {len(cs.puzzles)} puzzles, shapes " + " ".join(s.name for s in cs.shapes))
    typer.echo(f"{'id':5} {'color':5} {'points':>6} {'reward':>6} {'cells':>5}")
    for p in cs.puzzles:
        typer.echo(f"{p.id:5} {p.color:5} {p.points:>6} {p.reward:>6} {p.size:>5}")


@command("replay")
def replay_cmd(
    path: Path = typer.Argument(..., help="A replay file written by `arena play --replay`."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Only check that the replay reproduces."),
    color: Optional[bool] = typer.Option(None, "--color/--no-color", help="Colour the pieces (default: if a terminal)."),
    html_out: Optional[Path] = typer.Option(None, "--html", metavar="OUT.html",
                                            help="Write a self-contained HTML viewer of the game instead."),
) -> None:
    """Re-simulate a saved game, print it turn by turn, and fail if it does not reproduce."""
    from .render import use_color
    from .replay_view import show_replay

    if html_out is not None:
        from .replay_html import write_html

        out = write_html(path, html_out)
        typer.echo(f"{path}: reproduces; viewer written to {out}")
        return
    if color is None:
        color = use_color()
    if color:
        _keep_colour()
    show_replay(path, quiet=quiet, color=color)


def _keep_colour() -> None:
    """Ask click not to strip colour codes from ``echo`` (it does when stdout is not a
    terminal), for ``--color`` into a pipe and for ``FORCE_COLOR``."""
    import importlib

    for name in ("typer._click.globals", "click.globals"):
        try:
            ctx = importlib.import_module(name).get_current_context(silent=True)
        except (ImportError, AttributeError):
            continue
        if ctx is not None:
            ctx.color = True


@bench_app.command("engine")
@guarded
def bench_engine_cmd(
    games: int = typer.Option(40, "--games", min=1, help="Recorded greedy games to replay."),
    rules: str = typer.Option("", "--rules", help="Variants, comma-separated (default: base rules)."),
    base_deals: bool = typer.Option(False, "--base-deals", help="Deal a variant's games the base game's cards, to "
                                    "measure the variant's machinery on the same states as the base rules."),
    as_json: bool = typer.Option(False, "--json", help="Print the figures as one JSON object."),
) -> None:
    """Engine decisions per second and legal-action listing time, on one core."""
    from engine import RuleSpec

    from .bench import bench_engine

    spec = RuleSpec.make([v for v in rules.split(",") if v])
    result = bench_engine(games=games, spec=spec, base_deals=base_deals)
    if as_json:
        emit_json(result)
        return
    typer.echo(f"rules {result['rules']}: {result['decisions']} decisions from {result['games']} greedy games"
               f"{' on the base game deals' if base_deals else ''}")
    typer.echo(f"  engine decisions/s (list + apply): {result['decisions_per_s']:,.0f}")
    typer.echo(f"  same, caches cold:                 {result['cold_decisions_per_s']:,.0f}")
    typer.echo(f"  legal-action listing, median:      {result['enumerate_us_median']:.2f} us")
    typer.echo(f"  random-vs-random games/s:          {result['random_games_per_s']:,.1f}")


from . import cli_play  # noqa: E402,F401  (registers `arena play`)
from . import cli_bots  # noqa: E402,F401  (registers `arena bots`, `arena check-bot`, `arena bench protocol`)
from . import cli_tournament  # noqa: E402,F401
from . import cli_variants  # noqa: E402,F401  (registers `arena variants`, `arena plugins`, `arena solo`)
from . import cli_league  # noqa: E402,F401  (registers `arena league`, `arena experiment`, `arena index`, `arena replay --html`)


def main() -> None:
    """Console entry point."""
    app()


if __name__ == "__main__":
    main()
