"""``arena bots`` and ``arena check-bot``: the registered bots, and whether a program speaks the protocol."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .app import command, emit_json
from ..errors import UsageError
from ..botspec.spec import MAX_MS


@command("bots")
def bots_cmd(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """List the registered bots: name, plugin, command and description."""
    from ..plugins import bots

    entries = sorted(bots().values(), key=lambda b: b.name)
    if as_json:
        emit_json([b.to_json() for b in entries])
        return
    width = max([len(b.name) for b in entries] + [4])
    for b in entries:
        typer.echo(f"{b.name:{width}}  {b.description}")
        typer.echo(f"{'':{width}}  from {b.plugin}: {' '.join(b.command)}")
    typer.echo("Any other program runs with --cmd \"COMMAND\" (see docs/writing-a-bot.md).")


@command("check-bot", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def check_bot_cmd(
    argv: List[str] = typer.Argument(..., metavar="-- COMMAND...", help="The bot's command line, after --."),
    move_ms: int = typer.Option(2000, "--move-ms", min=1, max=MAX_MS, help="Time limit of one move, in milliseconds."),
    startup_ms: int = typer.Option(10000, "--startup-ms", min=1, max=MAX_MS, help="Time limit of the handshake."),
    seed: int = typer.Option(1, "--seed", help="Seed of the games played."),
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
    sandbox: str = typer.Option("auto", "--sandbox", metavar="TIER", help="auto (the strongest tier here), none, basic or strict: the bot under check is held as in a game."),
    program_dir: Optional[Path] = typer.Option(None, "--dir", metavar="FOLDER", help="The bot's program folder, shown to it read-only (default: its script's or executable's)."),
    read_only: List[Path] = typer.Option([], "--ro", metavar="FOLDER", help="One more folder the bot may read (repeatable)."),
) -> None:
    """Check that a bot speaks the protocol: handshake, requests, every decision, a full game.

    Prints one PASS/FAIL line per check (with the offending message) and exits 0 only if
    the bot conforms, e.g. `arena check-bot -- node bots/examples/js/bot.js`.
    """
    from ..botspec import CommandError, locate
    from ..process.check_bot import check_bot

    if not argv:
        raise UsageError("give the bot's command after --, e.g. arena check-bot -- python my_bot.py")
    try:
        locate(list(argv))  # as typed here: relative paths, wrappers, interpreters' shims
    except CommandError as exc:
        raise UsageError(f"{exc}: give the bot's command as you would run it here, "
                         "e.g. arena check-bot -- python my_bot.py") from None
    folders = [program_dir] if program_dir else []
    for folder in folders + list(read_only):
        if not folder.is_dir():
            raise UsageError(f"{folder}: no such folder")
    report = check_bot(list(argv), move_ms=move_ms, startup_ms=startup_ms, seed=seed,
                       echo=lambda text: typer.echo(text, err=True), sandbox=sandbox,
                       program_dir=str(program_dir.resolve()) if program_dir else None,
                       read_only=[str(p.resolve()) for p in read_only])
    if as_json:
        emit_json(report.to_json())
    else:
        for check in report.checks:
            typer.echo(check.line())
        passed = sum(c.ok for c in report.checks)
        typer.echo(f"{passed}/{len(report.checks)} checks passed: "
                   f"{'the bot conforms' if report.ok else 'the bot does not conform'}")
    if not report.ok:
        raise typer.Exit(1)
