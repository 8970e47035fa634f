"""Running a tournament: schedule minus stored games, an executor, the store, progress, the sprt.

:func:`run_tournament` opens (or resumes) the results database of the output folder, plays
every scheduled game whose key is not stored yet on the chosen executor, stores each
finished game in its own transaction as it arrives, shows a progress bar with the leader
(or the sprt's LLR), and stops an sprt as soon as it decides. Killing it at any moment
loses at most the games in flight; running it again continues where it stopped.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import signal
import sys
import time
from pathlib import Path
from typing import Callable

from ..errors import ArenaError
from ..process.sandbox import announce, sweep_stale
from .config import TournamentConfig
from ..cluster.named import make_executor
from ..execution.work import Interrupted, WorkerLost, play_one
from .gamelines import append_game_line, append_line, catch_up, game_faults
from .requests import build_request
from .schedule import GameTask, schedule, total_games
from .sprt import SPRT, describe, game_score
from .standings import game_points
from .store import Store

log = logging.getLogger("arena.tournament")


class Terminated(KeyboardInterrupt):
    """Raised in the coordinator by SIGTERM while a run plays, so it stops as on Ctrl-C."""


class OutputClosed(KeyboardInterrupt):
    """Raised by whoever prints a run's lines when its standard output is gone (the reader
    of ``arena match ... | head -3`` has left); the run stops as on Ctrl-C."""


class StopSignals:
    """SIGINT and SIGTERM while a run plays (main thread only).

    The first one stops the run: ``KeyboardInterrupt`` (:class:`Terminated` for SIGTERM)
    is raised at once, or, inside :meth:`hold` (a game being stored and its lines written),
    as the section ends, so a stored game always has its lines. Later ones are only
    recorded in :attr:`received`, so the results the caller prints after a stop are not
    cut short by a second Ctrl-C (nor by the one a terminal sends a whole pipeline)."""

    def __init__(self):
        self.received: list[int] = []
        self.stopping = False
        self.output_closed = False
        self._holding = 0
        self._pending: int | None = None
        self._previous: dict = {}

    def install(self) -> "StopSignals":
        """Take over SIGINT and SIGTERM until :meth:`restore` (a no-op off the main thread)."""
        import threading

        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) is not signal.SIG_IGN:  # started ignoring it (nohup, &): so be it
                    self._previous[sig] = signal.signal(sig, self._on_signal)
        return self

    def restore(self) -> None:
        """Put back the handlers :meth:`install` replaced."""
        for sig, previous in self._previous.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)
        self._previous = {}

    @staticmethod
    def _error(signum: int) -> KeyboardInterrupt:
        return Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    def _on_signal(self, signum, frame) -> None:
        self.received.append(signum)
        if self.stopping:
            return
        if self._holding:
            self._pending = signum
            return
        self.stopping = True
        raise self._error(signum)

    def closed_output(self) -> OutputClosed:
        """The run's standard output is gone: stop as on a signal; the error to raise."""
        self.output_closed = True
        self.stopping = True
        return OutputClosed()

    @contextlib.contextmanager
    def hold(self):
        """A section no signal cuts in two: one arriving meanwhile stops the run after it."""
        self._holding += 1
        try:
            yield
        finally:
            self._holding -= 1
            if not self._holding and self._pending is not None:
                signum, self._pending = self._pending, None
                if not self.stopping:
                    self.stopping = True
                    raise self._error(signum)

    def exit_code(self) -> int:
        """130 after SIGINT, 143 after SIGTERM (the first received), 141 when only the
        output was closed (as a program killed by SIGPIPE), else 130."""
        if self.received:
            return 143 if self.received[0] == signal.SIGTERM else 130
        return 141 if self.output_closed else 130


def config_json(cfg: TournamentConfig) -> dict:
    """What ``arena standings`` needs to know about the tournament, stored with the results."""
    return {"name": cfg.name, "file": cfg.path, "rules": cfg.rules.to_json(), "seats": cfg.seats,
            "format": cfg.format, "format_options": cfg.format_options, "anchor": cfg.anchor,
            "bots": [b.name for b in cfg.bots], "scheduled": total_games(cfg), "rotations": cfg.rotations}


#: fingerprint fields a resumed run may change: the schedule is a prefix of a longer one
#: (group ``i`` plays the same table and deal whatever the total), so a finished match grows
GROWABLE = ("games", "rounds")


def play_settings(cfg: TournamentConfig) -> dict:
    """What changes how a game is played without changing the schedule: the time control,
    the sandbox, the fault policy, the bots' options and whether bots run as processes.
    A resumed run must keep them (or say ``allow_changes``, and the change is recorded)."""
    return {"time_control": dict(cfg.time_control), "sandbox": cfg.sandbox, "fault_policy": cfg.fault_policy,
            "options": {b.name: dict(b.options) for b in cfg.bots if b.options}, "play": cfg.play}


def _show(value) -> str:
    if value is None:
        return "none"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def settings_changes(old: dict, new: dict) -> list[str]:
    """``time_control.move_ms 500 -> 5``: each play setting that differs, old value first."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{k} {_show(a.get(k))} -> {_show(b.get(k))}"
                    for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        else:
            out.append(f"{key} {_show(a)} -> {_show(b)}")
    return out


def check_resume(store: Store, cfg: TournamentConfig, allow_changes: bool = False) -> dict:
    """Whether ``cfg`` may continue the run stored in ``store``, before anything is played.

    Raises :class:`~arena.tournament.store.StoreError` (one sentence) when the folder holds
    another tournament, when a schedule would shrink below what is stored, or when a play
    setting changed without ``allow_changes``. Returns ``{"extended": (old, new) or None,
    "changes": [...]}`` for the caller to report and record."""
    from .store import StoreError

    out: dict = {"extended": None, "changes": []}
    text = store.meta("fingerprint")
    if text is None:
        return out
    old, new = json.loads(text), json.loads(json.dumps(cfg.fingerprint()))
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    folder = store.path.parent
    if diff and (not set(diff) <= set(GROWABLE) or cfg.format in ("swiss", "knockout")):
        raise StoreError(f"{folder} holds results of a different tournament (differs in: {', '.join(diff)}); "
                         f"give another --output folder or remove this one")
    if diff:
        count, scheduled = store.count(), total_games(cfg)
        if scheduled < count:
            raise StoreError(f"{folder} holds {count} games, more than the {scheduled} now scheduled; ask for "
                             f"{count} games or more to continue it, or give another --output folder")
        stored = json.loads(store.meta("config") or "{}").get("scheduled")
        out["extended"] = (stored, scheduled)
    stored_play = store.meta("play")
    if stored_play is not None:
        changes = settings_changes(json.loads(stored_play), json.loads(json.dumps(play_settings(cfg))))
        if changes and not allow_changes:
            raise StoreError(f"{folder} was played with other settings that change the games "
                             f"({'; '.join(changes)}); continue it with the same settings, or give "
                             f"--allow-changes to go on with the new ones (the change is recorded)")
        out["changes"] = changes
    return out


def _log_faults(path: Path, task: GameTask, outcome: dict) -> None:
    """``--log-protocol``: after a game's lines, each fault of the game as the arena's note
    (``!``), as cutechess-cli's ``-debug`` shows why a game ended."""
    from ..process.transport import ProtocolLog

    faults = game_faults(task.bots, outcome)
    if not faults:
        return
    try:
        plog = ProtocolLog(str(path), task.key)
    except OSError:
        return  # a log that cannot be written loses its notes, never the game
    try:
        for f in faults:
            when = "at the start" if f["move"] is None else f"at move {f['move']}"
            plog.tracer(f["seat"], f["bot"])("!", f"fault: {f['verdict']} {when}: {f['detail']}".encode())
    finally:
        plog.close()


class WaitBetweenGames:
    """A worker's game function that waits ``wait_ms`` before each game but its first
    (cutechess-cli's and fastchess's ``-wait``: bots get time to quit and the machine to
    settle), then plays it with ``game_fn`` (by default the referee, or the in-process
    policies for ``play: inprocess``). Picklable: it travels to the worker."""

    uses_pool = True  # the referee's games take the worker's pool of bot processes

    def __init__(self, wait_ms: int, game_fn: Callable | None, play: str):
        self.wait_ms, self.game_fn, self.play = int(wait_ms), game_fn, play

    def __call__(self, request: dict, pool=None) -> dict:
        global _PLAYED_IN_WORKER
        if _PLAYED_IN_WORKER:
            time.sleep(self.wait_ms / 1000.0)
        _PLAYED_IN_WORKER = True
        return play_one(request, pool, self.play, self.game_fn)


_PLAYED_IN_WORKER = False  # set in a worker process once it played a game


def _die_with_parent() -> None:
    """Worker initializer: Ctrl-C is the coordinator's business; on Linux the worker is killed
    when the coordinator dies (kill -9)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class _Live:
    """Running figures for the progress line: points per bot and the sprt's group scores."""

    def __init__(self, cfg: TournamentConfig, games: list[dict]):
        self.cfg = cfg
        self.points: dict[str, list[float]] = {}
        self.partial: dict[int, list[float]] = {}
        self.scores: list[float] = []
        self.test = None
        if cfg.format == "sprt":
            o = cfg.format_options
            self.test = SPRT.of(o, cfg.rotations)
        for g in sorted(games, key=lambda g: (g["group"], g["rotation"])):
            self.add(g["group"], [x["bot"] for x in g["seats"]], [x["rank"] for x in g["seats"]])

    def add(self, group: int, bots: list[str], ranks: list[int]) -> None:
        """Count one stored game."""
        for s, bot in enumerate(bots):
            p = self.points.setdefault(bot, [0.0, 0])
            p[0] += game_points(ranks, s)
            p[1] += 1
        if self.test is not None:
            part = self.partial.setdefault(group, [])
            part.append(game_score(ranks, bots, self.cfg.format_options["candidate"]))
            if len(part) == self.cfg.rotations:
                self.scores.append(sum(part) / len(part))
                del self.partial[group]

    def sprt(self) -> dict | None:
        """The sprt's status over the complete groups so far (None if not an sprt)."""
        return self.test.status(self.scores) if self.test else None

    def line(self) -> str:
        """The progress bar's live line: the leader, or the sprt's LLR and bounds."""
        if self.test is not None:
            return describe(self.sprt())
        if not self.points:
            return ""
        bot, (pts, n) = max(self.points.items(), key=lambda kv: kv[1][0] / kv[1][1])
        return f"leader {bot} {pts / n:.2f} pts/game"


class _NoBar:
    """The progress bar of a run that shows none: a disabled tqdm would still start tqdm's
    monitor thread, which outlives the run."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass


def run_tournament(cfg: TournamentConfig, game_fn: Callable | None = None, executor=None,
                   progress: bool = True, echo: Callable[[str], None] | None = None,
                   on_game: Callable[[GameTask, dict], None] | None = None, allow_changes: bool = False,
                   games_out: Path | None = None, protocol_log: Path | None = None,
                   signals: StopSignals | None = None, on_start: Callable[[GameTask], None] | None = None,
                   wait_ms: int = 0) -> dict:
    """Play (or continue) the tournament ``cfg``; returns a summary of this run.

    ``game_fn`` replaces the game function (default: :func:`arena.referee.play_game`, or
    the in-process policies when the file says ``play: inprocess``); ``executor`` replaces
    the one the file names (tests pass a Dask client's executor); ``on_game(task, outcome)``
    is called after each game is stored (``arena match`` prints live results with it).
    A stored run is continued only with the same schedule (it may grow: more ``games`` or
    ``rounds``) and the same play settings, unless ``allow_changes`` (see :func:`check_resume`).
    ``games_out`` gets a line per game played, its replay with its result (:func:`game_line`);
    ``protocol_log`` every line to and from the bots, timed (see
    :class:`arena.process.transport.ProtocolLog`). ``games.jsonl`` and ``games_out`` agree
    with the database when the run starts and when it stops, however it stops
    (:func:`arena.tournament.gamelines.catch_up`). ``signals``: the caller's installed
    :class:`StopSignals` (it prints after the run and wants a second Ctrl-C recorded, not
    raised); by default the run installs its own. ``on_start(task)`` is called as each game
    is handed to a worker (``Started game N of M``); ``wait_ms``: each worker waits that
    long between its games (cutechess-cli's ``-wait``).
    """
    from tqdm import tqdm

    echo = echo or (lambda text: tqdm.write(text, file=sys.stderr))
    output = Path(cfg.output).resolve()
    sweep_stale()  # what bots of killed runs left: processes, working folders, cgroups, mounts
    if cfg.play == "bots" and game_fn is None and cfg.executor != "dask":
        # the tier the games get, or a sentence why none can run (on a cluster each worker
        # decides, and the run names each worker's tier)
        echo(announce(cfg.sandbox, installed_only=all(b.cmd is None for b in cfg.bots)))
    store = _open_store(cfg, output, allow_changes, echo)
    handler = _start_log(output)
    run = _TournamentRun(cfg, store, output, echo, games_out, protocol_log)
    run.on_game, run.on_start = on_game, on_start
    run.game_fn = game_fn if not wait_ms else WaitBetweenGames(wait_ms, game_fn, cfg.play)
    if executor is None:
        executor = make_executor(cfg.executor, cfg.address, cfg.concurrency, run=str(output),
                                 initializer=_die_with_parent)
    run.bar = tqdm(total=run.summary["scheduled"], initial=run.summary["stored_before"], unit="game",
                   file=sys.stderr, dynamic_ncols=True, smoothing=0.1) if progress else _NoBar()
    run.bar.set_postfix_str(run.live.line())
    run.progress = progress
    t0 = time.perf_counter()
    own_signals = signals is None
    signals = StopSignals().install() if own_signals else signals
    try:
        for task, reply in executor.run(run.pending, run.payload, lambda: run.stop, run.on_death):
            run.take(task, reply, signals)
    except ArenaError as exc:
        if getattr(exc, "event", None):  # what stopped the run (the cluster's scheduler was lost)
            store.add_event(exc.event, str(exc))
        raise
    except KeyboardInterrupt as exc:
        raise run.interrupted(exc, signals) from None
    finally:
        if own_signals:
            signals.stopping = True  # the run ends as it is; a signal now is only recorded
        try:
            run.close(handler, t0)
        finally:
            if own_signals:
                signals.restore()
    return run.summary


def _open_store(cfg: TournamentConfig, output: Path, allow_changes: bool, echo: Callable[[str], None]) -> Store:
    """The output folder's store, checked to continue ``cfg`` (see :func:`check_resume`),
    what changed recorded, the run's settings stored and its folders made."""
    store = Store.open(output)
    try:
        resume = check_resume(store, cfg, allow_changes)
    except BaseException:
        store.close()
        raise
    if resume["extended"]:
        store.add_event("extended", f"scheduled games {resume['extended'][0]} -> {resume['extended'][1]}")
    if resume["changes"]:
        store.add_event("settings-changed", "; ".join(resume["changes"]))
        echo(f"arena: continuing with changed settings (recorded): {'; '.join(resume['changes'])}")
    store.set_meta("fingerprint", json.dumps(cfg.fingerprint(), sort_keys=True))
    store.set_meta("play", json.dumps(play_settings(cfg), sort_keys=True))
    store.set_meta("config", json.dumps(config_json(cfg), sort_keys=True))
    (output / "logs").mkdir(exist_ok=True)
    if cfg.replays:
        (output / "replays").mkdir(exist_ok=True)
    return store


class _TournamentRun:
    """One run of :func:`run_tournament`: the games still to play, and each game that comes
    back stored with its lines, counted, shown and handed to ``on_game``."""

    on_game: Callable[[GameTask, dict], None] | None = None
    on_start: Callable[[GameTask], None] | None = None
    game_fn: Callable | None = None
    bar = None
    progress = False

    def __init__(self, cfg: TournamentConfig, store: Store, output: Path, echo: Callable[[str], None],
                 games_out: Path | None, protocol_log: Path | None):
        self.cfg, self.store, self.output, self.echo, self.protocol_log = cfg, store, output, echo, protocol_log
        self.files = {"jsonl": output / "games.jsonl", "out": Path(games_out) if games_out is not None else None}
        self.known: dict = {}
        caught = catch_up(store, self.files["jsonl"], self.files["out"], self.known)  # what a stopped run left
        if any(caught.values()):
            store.add_event("lines-rebuilt", "; ".join(f"{path}: {n}" for path, n in caught.items() if n))
        done = store.keys()
        stored_games = store.games()
        self.live = _Live(cfg, stored_games)
        self.summary = {"output": str(output), "scheduled": total_games(cfg), "stored_before": len(done),
                        "played": 0, "duplicates": 0, "failed": 0, "worker_deaths": 0, "game_cpu_s": 0.0,
                        "game_wall_s": 0.0, "sprt": self.live.sprt()}
        self.stop = bool(self.summary["sprt"] and self.summary["sprt"]["decision"])
        self.ready_seen: set[str] = set()
        self.plan = None
        if cfg.format == "swiss":  # round k+1 is paired from the stored results of round k
            from .swiss import SwissPlan
            self.plan = SwissPlan(cfg, stored_games)
            self.pending = self.plan.tasks()
        elif cfg.format == "knockout":  # a tie starts when both its bots are known
            from .knockout import KnockoutPlan
            self.plan = KnockoutPlan(cfg, stored_games)
            self.pending = self.plan.tasks()
        else:
            self.pending = (t for t in schedule(cfg) if t.key not in done)
        self.shown = time.perf_counter()

    def payload(self, task: GameTask) -> dict:
        """What a worker needs to play ``task`` (see :mod:`arena.execution.work`)."""
        request = build_request(self.cfg, task, self.output)
        if self.protocol_log is not None:
            request["protocol_log"] = {"path": str(self.protocol_log), "game": task.key}
        if self.on_start is not None:
            self.on_start(task)
        return {"key": task.key, "request": request, "play": self.cfg.play, "game_fn": self.game_fn}

    def on_death(self, keys: list[str], detail: str) -> None:
        """A worker died with games of the run: recorded, logged and said."""
        self.summary["worker_deaths"] += 1
        self.store.add_event("worker-died", f"{detail}: {', '.join(keys)}")
        log.warning("%s: %s", detail, ", ".join(keys))
        self.echo(f"arena: {detail} (games {', '.join(keys)})")

    def take(self, task: GameTask, reply, signals: StopSignals) -> None:
        """One game back from the executor: stored with its lines, or its failure recorded."""
        if isinstance(reply, ArenaError):
            raise ArenaError(f"game {task.key} cannot be played: {reply}; the tournament stops "
                             f"({self.store.count()} games stored)")
        if isinstance(reply, Exception):
            self.not_played(task, reply)
            return
        outcome = reply["outcome"]
        with signals.hold():  # stored and its lines written, or none of it
            recorded = self.store.record_game(task, outcome, reply.get("worker", ""))
            if recorded:
                self.write_lines(task, outcome)
        if self.plan is not None:
            self.plan.stored(task, outcome["result"]["ranking"])
        if recorded and self.protocol_log is not None:
            _log_faults(self.protocol_log, task, outcome)
        if not recorded:
            self.summary["duplicates"] += 1
            return
        self.counted(task, reply)

    def not_played(self, task: GameTask, reply: Exception) -> None:
        """A game that could not be played: recorded; the next run retries it."""
        self.summary["failed"] += 1
        kind = "worker-died" if isinstance(reply, WorkerLost) else "game-failed"
        self.store.add_event(kind, f"{task.key}: {reply}")
        log.error("game %s not played: %s", task.key, reply)
        if self.plan is not None:
            self.plan.lost(task)
        self.echo(f"arena: game {task.key} was not played ({reply}); run again to retry it")

    def write_lines(self, task: GameTask, outcome: dict) -> None:
        """A stored game's line in ``games.jsonl`` (and in ``games_out``)."""
        append_line(self.files["jsonl"], task, outcome)
        self.known.setdefault(self.files["jsonl"], set()).add(task.key)
        if self.files["out"] is not None:
            append_game_line(self.files["out"], task, outcome)
            self.known.setdefault(self.files["out"], set()).add(task.key)

    def counted(self, task: GameTask, reply: dict) -> None:
        """A newly stored game in the summary, the live figures and the bar; the sprt asked."""
        outcome, summary = reply["outcome"], self.summary
        summary["played"] += 1
        summary["game_cpu_s"] += reply.get("cpu_s") or 0.0
        summary["game_wall_s"] += reply.get("wall_s") or 0.0
        self.live.add(task.group, list(task.bots), outcome["result"]["ranking"])
        _remember_ready(self.store, task, outcome, self.ready_seen)
        if self.on_game is not None:
            self.on_game(task, outcome)
        self.bar.update(1)
        if self.progress and time.perf_counter() >= self.shown + 0.2:  # the live line, a few times a second
            self.shown = time.perf_counter()
            self.bar.set_postfix_str(self.live.line(), refresh=False)
        status = self.live.sprt()
        if status and status["decision"] and not self.stop:
            self.stop = True
            self.store.set_meta("sprt_decision", json.dumps(status))
            self.echo(f"arena: sprt decided: {describe(status)}")

    def interrupted(self, exc: KeyboardInterrupt, signals: StopSignals) -> Interrupted:
        """The :class:`Interrupted` a signal (or a closed output) turns the run into."""
        signals.stopping = True  # what comes now is recorded, not raised
        if isinstance(exc, OutputClosed):
            signals.output_closed = True
        elif not signals.received:  # raised by another handler than ours
            signals.received.append(signal.SIGTERM if isinstance(exc, Terminated) else signal.SIGINT)
        code = signals.exit_code()
        how = {143: "terminated (SIGTERM)", 141: "stopped: its output was closed"}.get(code, "interrupted")
        err = Interrupted(f"{how}: {self.store.count()} of {self.summary['scheduled']} games are stored in "
                          f"{self.output}; run the same command again to continue")
        err.exit_code = code
        err.summary = self.summary
        err.signals = signals
        return err

    def close(self, handler: logging.Handler, t0: float) -> None:
        """The end of the run, however it ends: lines caught up, the bar and the log closed,
        the summary completed (a Swiss or knockout's pairings stored) and the store closed."""
        try:
            catch_up(self.store, self.files["jsonl"], self.files["out"], self.known)  # a line per stored game
        except OSError as exc:
            self.echo(f"arena: cannot bring the game lines up to date ({exc}); the next run does it")
        if self.progress:
            self.bar.set_postfix_str(self.live.line(), refresh=False)
        self.bar.close()
        _stop_log(handler)
        summary, plan = self.summary, self.plan
        summary["elapsed_s"] = time.perf_counter() - t0
        summary["stored"] = self.store.count()
        summary["sprt"] = self.live.sprt()
        if plan is not None and self.cfg.format == "knockout":
            summary["knockout"] = plan.summary()
            self.store.set_meta("knockout", json.dumps(summary["knockout"]))
        elif plan is not None:
            summary["swiss"] = {"rounds_paired": len(plan.pairings), "rounds": plan.rounds,
                                "repeat_pairings": plan.repeats}
            self.store.set_meta("swiss", json.dumps({"pairings": plan.pairings, "byes": [
                None if b is None else plan.names[b] for b in plan.bye_of], "standings": plan.standings()}))
        self.store.close()


def _remember_ready(store: Store, task: GameTask, outcome: dict, seen: set[str]) -> None:
    """Keep the name and version each bot sent in ``ready`` (``meta`` key ``ready:BOT``), so
    standings and the index name a command-line bot as it names itself."""
    for bot, seat in zip(task.bots, outcome.get("seats") or []):
        ready = seat.get("bot") if isinstance(seat, dict) else None
        if bot in seen or not isinstance(ready, dict) or not ready.get("name"):
            continue
        seen.add(bot)
        store.set_meta(f"ready:{bot}", json.dumps({"name": ready["name"], "version": ready.get("version")}))


class _LogFile(logging.FileHandler):
    """The tournament log; skips the record that only wakes the log's receiving thread."""

    def emit(self, record: logging.LogRecord) -> None:
        if not getattr(record, "arena_wake", False):
            super().emit(record)


def _mp_handler(file: logging.Handler) -> logging.Handler:
    """``file`` behind a multiprocessing-logging handler: records from forked workers reach it
    through a queue read by one thread of the coordinator."""
    from multiprocessing_logging import MultiProcessingHandler

    class Handler(MultiProcessingHandler):
        def close(self) -> None:
            # The receiving thread polls its queue every 0.2 s; a closing record wakes it at
            # once, so a run does not end with a 0.2 s wait (nor leave the thread behind).
            if getattr(self, "_is_closed", True) or not hasattr(self, "_receive_thread"):
                return super().close()
            self._is_closed = True
            self.queue.put_nowait(logging.makeLogRecord({"arena_wake": True}))
            self._receive_thread.join(5.0)
            self.sub_handler.close()
            logging.Handler.close(self)

    return Handler("arena-log", sub_handler=file)


def _start_log(output: Path) -> logging.Handler:
    """Log of the coordinator and of every worker (through multiprocessing-logging) in one file."""
    logger = logging.getLogger("arena")
    file = _LogFile(output / "tournament.log", encoding="utf-8")
    file.setFormatter(logging.Formatter("%(asctime)s %(processName)s[%(process)d] %(name)s %(levelname)s %(message)s"))
    handler = _mp_handler(file)
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    return handler


def _stop_log(handler: logging.Handler) -> None:
    """Flush and close the log; its receiving thread ends."""
    logging.getLogger("arena").removeHandler(handler)
    handler.close()
