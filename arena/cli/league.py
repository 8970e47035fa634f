"""``arena league new|add|play|table|retire``: long-lived Elo ladders in one SQLite file."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .app import app, emit_json, guarded
from ..errors import ArenaError, UsageError
from .options import parse_rules
from ..botspec.spec import MAX_MS

league_app = typer.Typer(help="Long-lived Elo ladders in one SQLite file: new, add, play, table, retire.",
                         no_args_is_help=True)
app.add_typer(league_app, name="league")


def league_command(name: str):
    """``@league_app.command`` with the CLI's error handling."""

    def deco(fn):
        return league_app.command(name)(guarded(fn))

    return deco


@league_command("new")
def league_new_cmd(
    file: Path = typer.Argument(..., help="The league file to create (SQLite)."),
    rules: str = typer.Option("", "--rules", help="Variants, comma-separated, e.g. revised,ghost."),
    param: List[str] = typer.Option([], "--param", help="A rule parameter NAME=VALUE (repeatable)."),
    seats: int = typer.Option(2, "--seats", min=2, max=4, help="Seats per game (2-4)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the league's deals."),
    move_ms: int = typer.Option(1000, "--move-ms", min=1, max=MAX_MS, help="Time per move of bot processes, in ms."),
    sandbox: str = typer.Option("auto", "--sandbox", help="Sandbox of bot processes: auto (the strongest tier where it plays: strict wherever bubblewrap works), none, basic or strict."),
    deals: Optional[Path] = typer.Option(None, "--deals", metavar="BOOK",
                                         help="A deal book (JSON lines, `arena deals make`) kept in the league file: "
                                              "group i plays deal i, cycled."),
) -> None:
    """Create a league with its rules; add bots with `arena league add`."""
    from engine import compile_rules

    from ..league import League

    spec = parse_rules(rules, param)
    compile_rules(spec, seats)
    if sandbox not in ("auto", "none", "basic", "strict"):
        raise UsageError(f"--sandbox {sandbox!r}: give auto, none, basic or strict")
    book = None
    if deals is not None:
        from ..tournament.config import read_book

        book = read_book(deals, spec, seats)
    league = League.create(file, spec, seats, seed, {"move_ms": move_ms}, sandbox)
    try:
        if book:
            from ..league.play import set_deal_book

            set_deal_book(league, book)
    finally:
        league.close()
    typer.echo(f"created league {file}: {seats} seats, rules {spec.label()}; add bots with "
               f"`arena league add {file} NAME --bot REGISTERED` or `--cmd COMMAND`")


@league_command("add")
def league_add_cmd(
    file: Path = typer.Argument(..., help="The league file."),
    name: str = typer.Argument(..., help="The entry's name, NAME or NAME@VERSION (a new version is a new entry)."),
    bot: Optional[str] = typer.Option(None, "--bot", help="A registered bot (see `arena bots`)."),
    cmd: Optional[str] = typer.Option(None, "--cmd", help="A command line that starts the bot."),
    check: bool = typer.Option(True, "--check/--no-check",
                               help="Run the conformance check (`arena check-bot`) on a --cmd bot first and refuse "
                                    "it if it fails."),
) -> None:
    """Add a bot to the league under a name that is never reused.

    A bot given with --cmd must first pass the conformance check of `arena check-bot`
    (handshake, every decision kind, a full game against itself); a bot that fails is
    refused with the reason and the league is not changed.
    """
    from ..botspec import CommandError, anchor, locate
    from ..league import League
    from ..plugins import bots

    if (bot is None) == (cmd is None):
        raise UsageError("give exactly one of --bot REGISTERED or --cmd COMMAND")
    argv = None
    if bot is not None:
        known = bots()
        if bot not in known:
            raise UsageError(f"unknown bot {bot!r} (registered bots: {', '.join(sorted(known))}; or give --cmd)")
    else:
        try:
            locate(cmd)  # starts here, as typed here
            # kept as typed, its paths anchored: each machine that plays it finds its programs
            argv = anchor(cmd)
        except CommandError as exc:
            raise UsageError(f"--cmd: {exc}") from None
    from ..league.store import NAME_RE

    with League.open(file) as league:
        if not NAME_RE.fullmatch(name or "") or name in {e.name for e in league.entries()}:
            league.add(name, bot, argv)  # refused with the league's own sentence before any check runs
    if argv is not None and check:
        from ..process.check_bot import require_conforming

        with League.open(file) as league:
            move_ms = int((league.meta("time_control") or {}).get("move_ms", 2000))
        require_conforming(argv, name, move_ms=max(move_ms, 2000), echo=lambda t: typer.echo(t, err=True))
    with League.open(file) as league:
        league.add(name, bot, argv)
        base = name.split("@")[0]
        older = [e.name for e in league.entries(active_only=True) if e.name != name and e.name.split("@")[0] == base]
    typer.echo(f"added {name} to {file}")
    if older:
        typer.echo(f"note: {', '.join(older)} {'is' if len(older) == 1 else 'are'} still playing; "
                   f"`arena league retire {file} NAME` if the new version replaces {'it' if len(older) == 1 else 'them'}")


@league_command("play")
def league_play_cmd(
    file: Path = typer.Argument(..., help="The league file."),
    games: int = typer.Option(..., "--games", "-n", min=1, help="Games to play (rounded up to whole seat-rotated groups)."),
    concurrency: int = typer.Option(2, "--concurrency", "-j", min=1, help="Games at once."),
    processes: bool = typer.Option(False, "--processes", help="Play built-in bots as processes too (default: in-process)."),
    dask: Optional[str] = typer.Option(None, "--dask", metavar="ADDRESS",
                                       help="Play on the Dask cluster of this scheduler (tcp://host:8786); see "
                                            "docs/cluster.md."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Do not print the table afterwards."),
    progress: bool = typer.Option(True, "--progress/--no-progress",
                                  help="Show the progress bar (without it: a line every ten seconds)."),
    keep_replays: Optional[int] = typer.Option(None, "--keep-replays", min=0, metavar="N",
                                               help="Keep the replays of the newest N games only (0: all); "
                                                    "saved in the league file for later runs and arena serve."),
) -> None:
    """Play games between the active entries (few games and close ratings first) and store them.

    Each game is stored as it finishes; after Ctrl-C or kill -9 the next `league play`
    first completes the seat-rotated groups the stopped run left unfinished.
    """
    from ..league import League
    from ..league.play import play_league
    from ..league.table import league_table, render_table

    with League.open(file, exclusive=True) as league:
        executor = None
        if dask:
            from ..cluster.executor import DaskExecutor

            executor = DaskExecutor(dask, run=str(Path(file).resolve()))
        if keep_replays is not None:
            league._set_meta("keep_replays", keep_replays)
        # each game's replay beside the league file, where arena serve shows it
        summary = play_league(league, games, concurrency, "bots" if processes else "auto",
                              echo=lambda t: typer.echo(t, err=True), progress=progress, executor=executor,
                              replays=Path(f"{file}.replays"), keep_replays=int(league.meta("keep_replays", 0) or 0))
        if summary["failed"] and not summary["played"]:
            raise ArenaError(f"no game could be played ({summary['failed'][0]}); nothing was stored")
        typer.echo(f"{summary['played']} games played in {summary['elapsed_s']:.1f} s"
                   + (f"; {len(summary['failed'])} not played" if summary["failed"] else ""))
        if not quiet:
            typer.echo(render_table(league_table(league)))


@league_command("table")
def league_table_cmd(
    file: Path = typer.Argument(..., help="The league file."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
    as_csv: bool = typer.Option(False, "--csv", help="Print as CSV, one row per entry."),
    bootstrap: Optional[int] = typer.Option(None, "--bootstrap", min=0,
                                            help="Bootstrap resamples over groups for the intervals (default: 200 at 2 seats, 100 at 3-4; 0: inverse Hessian)."),
) -> None:
    """Ratings refitted on all games, with 95% intervals, games, points per game and recent form."""
    from ..league import League
    from ..league.table import league_table, render_csv, render_table

    if as_json and as_csv:
        raise UsageError("give --json or --csv, not both")
    with League.open(file, read_only=True) as league:
        tab = league_table(league, bootstrap)
    if as_json:
        emit_json(tab)
    elif as_csv:
        typer.echo(render_csv(tab), nl=False)
    else:
        typer.echo(render_table(tab))


@league_command("retire")
def league_retire_cmd(
    file: Path = typer.Argument(..., help="The league file."),
    name: str = typer.Argument(..., help="The entry to retire."),
) -> None:
    """Stop matching an entry; its games and rating stay in the table."""
    from ..league import League

    with League.open(file) as league:
        league.retire(name)
    typer.echo(f"retired {name}; its games stay in {file}")
