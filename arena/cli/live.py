"""A run while it plays, as ``arena match`` and ``arena run`` print it: live lines (ours, or
fastchess's and cutechess-cli's), standard output that may go away under us, the results so
far after Ctrl-C or SIGTERM, and the stored standings and ``index.html`` once it is over."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from ..tournament.tally import Tally
from .app import emit_json
from .prechecks import precheck


def finish_run(cfg, summary: dict) -> dict:
    """After a run (``arena run``, ``arena match``): the stored standings, and ``index.html``
    written, its path put in ``summary["index"]``."""
    from ..tournament.index import write_index

    rep = stored_report(cfg)
    # index.html with the standings and every game; HTML viewers for the first games only,
    # so a long tournament is not slowed down (`arena index` writes them all).
    summary["index"] = str(write_index(cfg.output, viewers=True, max_viewers=100))
    return rep


def stored_report(cfg) -> dict:
    """The standings of what ``cfg``'s folder holds now (after an interrupted run too)."""
    from ..tournament.standings import report
    from ..tournament.store import Store

    store = Store.open(cfg.output, create=False)
    try:
        return report(store)
    finally:
        store.close()


def line_buffered() -> None:
    """Live lines reach a pipe (``arena match ... | tee log``) as they are printed: stdout is
    made line-buffered, as a terminal is, instead of block-buffered."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        try:
            reconfigure(line_buffering=True)
        except (ValueError, OSError):
            pass


class Output:
    """Standard output while a match runs, and where its results go once it is gone.

    :meth:`say` raises :class:`~arena.tournament.runner.OutputClosed` (through ``signals``)
    when the reader has left, and from then on standard output is ``/dev/null`` (so nothing
    complains at exit). After an interruption :meth:`results` writes to stderr when stdout
    is gone: closed, or a pipe whose reader the same Ctrl-C stopped (``| tee log``)."""

    def __init__(self, signals):
        self.signals = signals
        self.gone = False

    def close(self) -> None:
        """Standard output is gone: point it at ``/dev/null``."""
        from .app import stdout_gone

        self.gone = True
        stdout_gone()

    def say(self, text: str) -> None:
        """One live line on stdout."""
        from tqdm import tqdm

        if self.gone:
            return
        try:
            tqdm.write(text, file=sys.stdout)
        except BrokenPipeError:
            self.close()
            raise self.signals.closed_output() from None

    def reader_left(self, wait_s: float = 1.0) -> bool:
        """Whether stdout is a pipe nobody reads any more, waiting up to ``wait_s`` for its
        reader to go (a terminal's Ctrl-C reaches ``tee`` as it reaches us)."""
        from .app import stdout_closed

        return stdout_closed(wait_s)

    def results(self, lines: list[str]) -> None:
        """The results block after an interruption: stdout if someone reads it, else stderr."""
        if not self.gone and self.signals.received and self.reader_left():
            self.close()
        if not self.gone:
            try:
                for line in lines:
                    sys.stdout.write(line + "\n")
                sys.stdout.flush()
                return
            except BrokenPipeError:
                self.close()
        for line in lines:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def run_match(cfg, live: bool = True, report_every: int = 10, progress: bool = False, as_json: bool = False,
              allow_changes: bool = False, games_out: Optional[Path] = None,
              protocol_log: Optional[Path] = None, output_format: str = "arena", wait_ms: int = 0) -> dict:
    """Run the match ``cfg`` through the tournament runner, printing live results in
    ``output_format`` (``arena``, ``fastchess``, ``cutechess``); returns the summary."""
    from ..tournament.runner import StopSignals

    signals = StopSignals().install()
    try:
        if output_format != "arena" and not as_json:
            return _run_foreign(cfg, signals, output_format, live, report_every, progress, allow_changes,
                                games_out, protocol_log, wait_ms)
        return _run_match(cfg, signals, live, report_every, progress, as_json, allow_changes, games_out,
                          protocol_log, wait_ms)
    finally:
        signals.restore()


def _run_foreign(cfg, signals, fmt: str, live: bool, report_every: int, progress: bool, allow_changes: bool,
                 games_out: Optional[Path], protocol_log: Optional[Path], wait_ms: int) -> dict:
    """A match whose standard output is fastchess's or cutechess-cli's lines, and nothing
    else (ours -- the summary, the standings, the sprt's start -- go to stderr)."""
    from ..tournament.gamelines import game_faults
    from ..tournament.output_formats import EngineOutput
    from ..tournament.runner import Interrupted, run_tournament
    from ..tournament.standings import render_text

    stored = precheck(cfg, allow_changes)
    tally = Tally(cfg, stored)
    lines = EngineOutput(cfg, fmt, stored)
    line_buffered()
    out = Output(signals)
    state = {"printed": False}

    def say(texts: list[str]) -> None:
        if live:
            for text in texts:
                out.say(text)

    if stored:
        typer.echo(f"continuing {cfg.name}: {len(stored)} games already stored in {cfg.output}", err=True)

    def on_game(task, outcome) -> None:
        game = tally.add(task, outcome)
        say(lines.finished(task, {**game, "faults": game_faults(task.bots, outcome)}))
        state["printed"] = lines.due(report_every)
        if state["printed"]:
            say(lines.interval())

    try:
        summary = run_tournament(cfg, progress=progress, on_game=on_game, allow_changes=allow_changes,
                                 games_out=games_out, protocol_log=protocol_log, signals=signals,
                                 on_start=lambda task: say(lines.started(task)), wait_ms=wait_ms)
    except Interrupted as exc:
        if signals.output_closed and not signals.received:
            raise typer.Exit(exc.exit_code) from None
        out.results((lines.interval() if live else []) + render_text(stored_report(cfg)).rstrip("\n").split("\n"))
        raise
    rep = finish_run(cfg, summary)
    decision = (summary.get("sprt") or {}).get("decision")
    if not state["printed"] or decision:
        say(lines.interval())
    say(lines.final(decision))
    typer.echo(f"{summary['played']} games played in {summary['elapsed_s']:.1f} s "
               f"({summary['stored']} of {summary['scheduled']} stored in {summary['output']})"
               + (f"; {summary['failed']} games not played, run again to retry" if summary["failed"] else ""),
               err=True)
    typer.echo(render_text(rep), err=True)
    return summary


def _run_match(cfg, signals, live: bool, report_every: int, progress: bool, as_json: bool, allow_changes: bool,
               games_out: Optional[Path], protocol_log: Optional[Path], wait_ms: int = 0) -> dict:
    import json

    from ..tournament.runner import Interrupted, run_tournament
    from ..tournament.standings import render_text

    stored = precheck(cfg, allow_changes)
    tally = Tally(cfg, stored)
    line_buffered()
    out = Output(signals)

    def live_figures() -> dict:
        return {"pairs": tally.pairs()} if cfg.seats == 2 else tally.ranks()

    say = out.say

    if live and cfg.format == "sprt":
        o = cfg.format_options
        say(f"SPRT: candidate {o['candidate']} vs baseline {o['baseline']} "
            f"(elo0 {o['elo0']:g}, elo1 {o['elo1']:g}, alpha {o['alpha']:g}, beta {o['beta']:g}"
            + (", model normalized: elo0 and elo1 in nElo)" if o.get("model") == "normalized" else ")"))
    if live and stored:
        say(f"continuing {cfg.name}: {len(stored)} games already stored in {cfg.output}")

    def on_game(task, outcome) -> None:
        game = tally.add(task, outcome)
        if live:
            say(tally.game_line(game))
            if len(tally.games) % report_every == 0:
                for line in tally.report_lines():
                    say(line)

    try:
        summary = run_tournament(cfg, progress=progress, on_game=on_game, allow_changes=allow_changes,
                                 games_out=games_out, protocol_log=protocol_log, signals=signals, wait_ms=wait_ms)
    except Interrupted as exc:
        if signals.output_closed and not signals.received:
            raise typer.Exit(exc.exit_code) from None  # the reader left (| head): nothing to say
        # as cutechess-cli and fastchess do: the results so far, then the exit code (130, 143)
        if as_json:
            lines = [json.dumps({"interrupted": True, "summary": exc.summary, "live": live_figures(),
                                 **stored_report(cfg)}, sort_keys=True)]
        else:
            lines = (tally.report_lines() if live else []) + render_text(stored_report(cfg)).rstrip("\n").split("\n")
        out.results(lines)
        raise
    rep = finish_run(cfg, summary)
    if as_json:
        emit_json({"summary": summary, "live": live_figures(), **rep})
        return summary
    if live and len(tally.games) % report_every != 0:
        for line in tally.report_lines():
            say(line)
    typer.echo(f"{summary['played']} games played in {summary['elapsed_s']:.1f} s "
               f"({summary['stored']} of {summary['scheduled']} stored in {summary['output']})"
               + (f"; {summary['failed']} games not played, run again to retry" if summary["failed"] else ""))
    typer.echo(render_text(rep))
    return summary
