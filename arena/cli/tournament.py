"""``arena validate``, ``arena run``, ``arena standings`` and ``arena index``: tournaments from YAML files."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..errors import ArenaError, UsageError
from .app import command, emit_json
from .live import Output, finish_run, line_buffered, run_match, stored_report
from .options import AllowChanges, Check, GamesOut, LogProtocol, OutputFormat, Wait
from .prechecks import check_bots, check_output_format, output_files, precheck


@command("validate")
def validate_cmd(
    file: Path = typer.Argument(..., help="A tournament or experiment file (YAML)."),
) -> None:
    """Check a tournament file (or an experiment file, which has rule_sets, sweep, until or
    target) without running it."""
    from ..tournament.config import validate
    from ..tournament.schedule import group_count, total_games
    from ..tournament.yamlsource import load_with_lines

    src = load_with_lines(file)  # read once: a field of thousands of bots is a big file
    doc = src.value
    from ..experiment.config import OWN_KEYS

    if isinstance(doc, dict) and any(key in doc for key in OWN_KEYS if key != "description"):
        from ..experiment import load_experiment

        exp = load_experiment(file)
        base = exp.base
        typer.echo(f"{file}: valid experiment. {exp.name}: {len(exp.rule_sets)} rule sets "
                   f"({', '.join(r.name for r in exp.rule_sets)}), {len(base.bots)} bots, {base.seats} seats, "
                   f"{total_games(base)} games per rule set, output {base.output}")
        return
    cfg = validate(src)
    kind = "at most " if cfg.format in ("sprt", "knockout") else ""
    typer.echo(f"{file}: valid. {cfg.name}: {cfg.format}, {len(cfg.bots)} bots, {cfg.seats} seats, rules "
               f"{cfg.rules.label()}, {kind}{total_games(cfg)} games in {group_count(cfg)} groups, "
               f"output {cfg.output}")


@command("run")
def run_cmd(
    file: Path = typer.Argument(..., help="A tournament file (YAML)."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Output folder (overrides the file's)."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", "-j", min=1,
                                              help="Games at once (default: the file's, else the core count)."),
    dask: Optional[str] = typer.Option(None, "--dask", metavar="ADDRESS",
                                       help="Run on the Dask scheduler at ADDRESS (tcp://host:8786)."),
    inprocess: bool = typer.Option(False, "--inprocess", help="Play built-in bots inside the workers (no bot processes)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show the progress bar."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary and standings as one JSON object."),
    deals: Optional[Path] = typer.Option(None, "--deals", metavar="BOOK",
                                         help="A deal book (JSON lines, `arena deals make`): group i plays deal i "
                                              "(overrides the file's)."),
    check: Check = None,
    allow_changes: AllowChanges = False,
    games_out: GamesOut = None,
    log_protocol: LogProtocol = None,
    output_format: OutputFormat = "arena",
    report_every: int = typer.Option(10, "--report-every", min=1, metavar="N",
                                     help="With --output-format fastchess or cutechess: their results block "
                                          "every N games (fastchess: pairs)."),
    wait: Wait = 0,
) -> None:
    """Run a tournament (or continue it: games already stored in the output folder are not replayed).

    Exits non-zero when a game could not be played (it is not stored; running again retries it)."""
    from ..tournament.config import load_config
    from ..tournament.runner import Interrupted, run_tournament
    from ..tournament.schedule import total_games
    from ..tournament.standings import render_text

    cfg = load_config(file).with_overrides(output=output, concurrency=concurrency, dask=dask,
                                           play="inprocess" if inprocess else None, deals=deals)
    if cfg.play == "inprocess" and any(b.bot is None for b in cfg.bots):
        raise UsageError("--inprocess plays built-in bots only; this tournament has command-line bots")
    fmt = check_output_format(output_format)
    if fmt != "arena" and as_json:
        raise UsageError("give --json or --output-format, not both")
    files = output_files(cfg, games_out, log_protocol)
    stored = precheck(cfg, allow_changes)
    if stored:  # a folder's games are not played again: say so before anything runs
        typer.echo(f"continuing {cfg.name}: {len(stored)} of {total_games(cfg)} games already stored in "
                   f"{cfg.output}", err=True)
    if cfg.format == "sprt" and not as_json:
        o = cfg.format_options
        typer.echo(f"SPRT: candidate {o['candidate']} vs baseline {o['baseline']}", err=True)
    check_bots(cfg, check, files.get("protocol_log"))
    if fmt != "arena":
        summary = run_match(cfg, report_every=report_every, progress=progress, allow_changes=allow_changes,
                            output_format=fmt, wait_ms=wait, **files)
        _fail_unplayed(summary)
        return
    line_buffered()
    try:
        summary = run_tournament(cfg, progress=progress, allow_changes=allow_changes, wait_ms=wait, **files)
    except Interrupted as exc:  # Ctrl-C (exit 130) or SIGTERM (143): the standings so far first
        import json

        # on stderr when stdout is gone (`arena run ... | tee log`: Ctrl-C stops tee too)
        Output(exc.signals).results([json.dumps({"interrupted": True, "summary": exc.summary,
                                                 **stored_report(cfg)}, sort_keys=True)] if as_json
                                    else render_text(stored_report(cfg)).rstrip("\n").split("\n"))
        raise
    rep = finish_run(cfg, summary)
    if as_json:
        emit_json({"summary": summary, **rep})
    else:
        typer.echo(f"{summary['played']} games played in {summary['elapsed_s']:.1f} s "
                   f"({summary['stored']} of {summary['scheduled']} stored in {summary['output']})"
                   + (f"; {summary['worker_deaths']} worker deaths" if summary["worker_deaths"] else "")
                   + (f"; {summary['failed']} games not played, run again to retry" if summary["failed"] else ""))
        typer.echo(render_text(rep))
        typer.echo(f"games and replays: {summary['index']}")
    _fail_unplayed(summary)


def _fail_unplayed(summary: dict) -> None:
    """A run that could not play its schedule fails (the standings printed lack those games)."""
    if summary["failed"]:
        raise ArenaError(f"{summary['failed']} of {summary['scheduled']} games could not be played and are not "
                         f"stored (the reasons are in {Path(summary['output']) / 'tournament.log'}); run the same "
                         f"command again to retry them")


@command("standings")
def standings_cmd(
    output: Path = typer.Argument(..., help="A tournament's output folder."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON (a `standings` list, one object per bot)."),
    as_csv: bool = typer.Option(False, "--csv", help="Print the standings as CSV."),
    h2h: bool = typer.Option(False, "--head-to-head", help="With --csv: the head-to-head matrix, one row per pair."),
    bootstrap: Optional[int] = typer.Option(None, "--bootstrap", min=0,
                                            help="Bootstrap resamples over groups for the intervals (default: 200 at 2 seats, 100 at 3-4; 0: inverse Hessian)."),
    anchor: Optional[str] = typer.Option(None, "--anchor", metavar="BOT",
                                         help="The bot rated 0 (default: the tournament's anchor)."),
) -> None:
    """Print the standings, ratings and sprt of a tournament from its database (also while it runs)."""
    from ..tournament.standings import render_csv, render_text, report
    from ..tournament.store import Store

    if as_json and as_csv:
        raise UsageError("give --json or --csv, not both")
    store = Store.open(output, create=False)
    try:
        rep = report(store, bootstrap=bootstrap, anchor=anchor)
    finally:
        store.close()
    if as_json:
        emit_json(rep)
    elif as_csv and h2h:
        from ..tournament.standings import render_head_to_head_csv

        typer.echo(render_head_to_head_csv(rep["head_to_head"]), nl=False)
    elif as_csv:
        typer.echo(render_csv(rep), nl=False)
    else:
        typer.echo(render_text(rep))


@command("index")
def index_cmd(
    output: Path = typer.Argument(..., help="A tournament's output folder."),
    viewers: bool = typer.Option(True, "--viewers/--no-viewers", help="Write an HTML viewer beside each replay."),
    out: Optional[Path] = typer.Option(None, "--out", metavar="DIR",
                                       help="Write index.html and the viewers into DIR instead (for a read-only "
                                            "folder of results); the output folder is only read."),
) -> None:
    """Write index.html in a tournament's output folder: standings and every game with its replay."""
    from ..tournament.index import write_index

    path = write_index(output, viewers=viewers, out=out)
    typer.echo(f"wrote {path}")
