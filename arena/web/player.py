"""The background player of ``arena serve``: league games, round after round, at the operator's pace.

Each round is one call of :func:`arena.league.play.play_league` (the league's own
matchmaking, seat rotation and concurrency), so the games are stored exactly as
``arena league play`` stores them: each finished game in one transaction, keyed by
(group, rotation). A round asks the league's next group number afresh, so a server
killed in the middle of a game loses only the game in flight (it was never stored) and
a restart plays on from the next group: nothing stored is lost or played twice.

**Pace.** ``Settings.pace`` games per minute (``arena serve --pace``): after each round
the player waits until the games it played fit that rate. Each group is built around the
entry whose rating is least certain (no games, few games, or games that were foregone
conclusions), so new and uncertain entries are played first.

**Priority.** The game workers run ``nice`` :data:`WORKER_NICE` below the web process, so
a league played at full pace leaves the pages the CPU they need.

**Sandbox.** Bots of command-line entries are played in ``Settings.game_tier`` (strict
unless the operator asked for less), whatever tier the league file names, and the league
file, the packages and the replays are hidden from them.

**Replays.** The worker that plays a game writes its replay to
``LEAGUE.db.replays/.pending/GROUP-ROTATION.json``; once the game's transaction is
committed the file is renamed to ``LEAGUE.db.replays/GROUP-ROTATION.json`` (a game that
was not stored has its pending replay removed). At start, :func:`reconcile_replays`
finishes what a killed server left: a pending replay of a stored game is put in place,
any other pending replay and any replay without a stored game is removed. So every
stored game has its replay and every replay its game.

**Bots' stderr.** Each bot's stderr of each game is kept in ``LEAGUE.db.logs/`` as
``GROUP-ROTATION-seatI-ENTRY.stderr.log`` (the referee's name for it, ``ENTRY`` with
characters other than letters, digits, ``_``, ``.`` and ``-`` made ``_``), for the newest
:data:`KEEP_LOGS` games of each entry; its author reads them on their private page.

**Games in flight.** A game played with bot processes on this machine's workers appends
every line to and from its bots to ``LEAGUE.db.live/GROUP-ROTATION.log`` (the referee's
protocol log, after a first line of JSON naming the game's rules, seats, seed and deal),
from which :mod:`.live` rebuilds the moves played so far; the file is removed when the
game is stored or dropped. Both folders are private (0700), like the replays.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from pathlib import Path

from ..errors import ArenaError
from ..league import LeagueError
from ..league.play import play_league, prune_replays
from ..execution.local import LocalExecutor
from ..tournament.store import FolderLock, StoreError
from .store import open_league

log = logging.getLogger(__name__)
REPLAY_RE = re.compile(r"(\d+)-(\d+)\.json")


def replays_dir(league_path: Path) -> Path:
    """Where game replays live: ``LEAGUE.db.replays/`` next to the league file."""
    return Path(f"{league_path}.replays")


def logs_dir(league_path: Path) -> Path:
    """Where the bots' stderr of each game is kept: ``LEAGUE.db.logs/``."""
    return Path(f"{league_path}.logs")


def live_dir(league_path: Path) -> Path:
    """Where the games in flight write their moves: ``LEAGUE.db.live/``."""
    return Path(f"{league_path}.live")


def live_path(league_path: Path, group: int, rotation: int) -> Path:
    """The protocol log of the game (group, rotation) while it plays."""
    return live_dir(league_path) / f"{group}-{rotation}.log"


#: Games whose stderr logs are kept, per entry.
KEEP_LOGS = 20
_LOG_RE = re.compile(r"\d+-\d+-seat\d+-(.+)\.stderr\.log")


def prune_logs(folder: Path, keep: int = KEEP_LOGS) -> int:
    """Keep the stderr logs of the newest ``keep`` games of each entry in ``folder``; how many were removed."""
    by_entry: dict[str, list] = {}
    try:
        found = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in found:
        m = _LOG_RE.fullmatch(entry.name)
        if m:
            try:
                by_entry.setdefault(m[1], []).append((entry.stat().st_mtime, entry.path))
            except OSError:
                pass
    gone = 0
    for files in by_entry.values():
        files.sort()
        for _, path in files[:max(0, len(files) - keep)]:
            _remove(path)
            gone += 1
    return gone


def pending_dir(league_path: Path) -> Path:
    """Where a replay waits until its game is stored."""
    return replays_dir(league_path) / ".pending"


def replay_path(league_path: Path, group: int, rotation: int) -> Path:
    """The replay file of the game (group, rotation)."""
    return replays_dir(league_path) / f"{group}-{rotation}.json"


def reconcile_replays(league) -> dict:
    """Make the replays folder match the stored games (run it while no game is in flight).

    Returns ``{"restored", "removed", "missing"}``: pending replays of stored games put in
    place, files removed (replays of games never stored, leftovers), and the ids of stored
    games that have no replay (written nowhere: nothing can bring them back)."""
    folder, pending = replays_dir(league.path), pending_dir(league.path)
    folder.mkdir(mode=0o700, exist_ok=True)
    pending.mkdir(mode=0o700, exist_ok=True)
    games = {(grp, rot): gid for gid, grp, rot in league.conn.execute("SELECT id, grp, rotation FROM games")}
    out = {"restored": 0, "removed": 0, "missing": []}
    for entry in os.scandir(pending):
        m = REPLAY_RE.fullmatch(entry.name)
        key = (int(m[1]), int(m[2])) if m else None
        final = folder / entry.name
        if key in games and not final.exists() and entry.is_file(follow_symlinks=False):
            os.replace(entry.path, final)
            out["restored"] += 1
        else:
            _remove(entry.path)
            out["removed"] += 1
    for entry in os.scandir(folder):
        if entry.name == ".pending":
            continue
        m = REPLAY_RE.fullmatch(entry.name)
        if not m or (int(m[1]), int(m[2])) not in games:
            _remove(entry.path)
            out["removed"] += 1
    have = {tuple(map(int, REPLAY_RE.fullmatch(n).groups())) for n in os.listdir(folder) if REPLAY_RE.fullmatch(n)}
    out["missing"] = sorted(gid for key, gid in games.items() if key not in have)
    return out


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            import shutil
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
    except OSError:
        pass


def _echo(text: str) -> None:
    """What a round says: its progress lines are routine, anything else is worth a warning."""
    (log.info if text.startswith("played ") else log.warning)(text)


#: How much lower the game workers' CPU priority is than the web process's (``nice``).
WORKER_NICE = 10


def _lower_priority() -> None:
    """Worker initializer: games yield the CPU to the pages (the bots' clocks have their grace)."""
    try:
        os.nice(WORKER_NICE)
    except OSError:
        pass


def _start_live(league_path: Path, task, request: dict) -> dict | None:
    """The protocol log of a game about to be handed out, begun with a line naming the game."""
    import json

    path = live_path(league_path, task.group, task.rotation)
    head = {"group": task.group, "rotation": task.rotation, "bots": list(task.bots), "rules": request.get("rules"),
            "players": request.get("players"), "seed": request.get("seed"), "deal": request.get("deal"),
            "started": time.time()}
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, (json.dumps(head) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError as exc:
        log.warning("game %s-%s cannot be followed live: %s", task.group, task.rotation, exc)
        return None
    return {"path": str(path), "game": f"{task.group}-{task.rotation}"}


class _RecordingExecutor:
    """The local executor, writing each game's replay and stopping when the server stops."""

    def __init__(self, league_path: Path, concurrency: int, stopping: threading.Event, private: list[str],
                 in_flight: dict, inner=None):
        # or a Dask cluster's executor (``dask``)
        self.local = inner is None  # only this machine's workers can write the live protocol logs
        self.inner = inner or LocalExecutor(concurrency, initializer=_lower_priority)
        self.league_path = league_path
        self.stopping = stopping
        self.private = private
        self.in_flight = in_flight

    def run(self, tasks, payload, stop, on_death):
        """:meth:`LocalExecutor.run` with a pending replay path in every request; the games
        handed out and not yet answered are kept in ``in_flight``."""
        def with_replay(task):
            job = payload(task)
            job["request"]["replay_path"] = str(pending_dir(self.league_path) / f"{task.group}-{task.rotation}.json")
            job["request"]["private_paths"] = list(self.private)
            if job.get("play") != "inprocess":
                job["request"]["log_dir"] = str(logs_dir(self.league_path))
                if self.local:
                    job["request"]["protocol_log"] = _start_live(self.league_path, task, job["request"])
            self.in_flight[(task.group, task.rotation)] = {"group": task.group, "rotation": task.rotation,
                                                          "seed": task.seed, "bots": list(task.bots),
                                                          "started": time.time()}
            return job

        try:
            for task, reply in self.inner.run(tasks, with_replay, lambda: stop() or self.stopping.is_set(), on_death):
                self.in_flight.pop((task.group, task.rotation), None)
                if isinstance(reply, BaseException):  # never stored: no one will follow it
                    live_path(self.league_path, task.group, task.rotation).unlink(missing_ok=True)
                pending = pending_dir(self.league_path) / f"{task.group}-{task.rotation}.json"
                if not isinstance(reply, BaseException) and not pending.is_file():
                    # a game without its replay is not stored: the group is completed later
                    why = (reply.get("outcome") or {}).get("replay_error") or "its replay was not written"
                    reply = ArenaError(f"game {task.group}-{task.rotation} is not stored: {why}")
                yield task, reply
        finally:
            for group, rotation in list(self.in_flight):  # dropped: no one will follow them
                live_path(self.league_path, group, rotation).unlink(missing_ok=True)
            self.in_flight.clear()


class Player:
    """Plays rounds of league games in a background thread until :meth:`stop`."""

    def __init__(self, league_path: Path, concurrency: int = 2, groups_per_round: int = 2, idle_s: float = 5.0,
                 play: str = "auto", settings=None, dask: str | None = None):
        from .submissions import Settings, private_paths

        self.league_path = Path(league_path)
        self.dask = dask  # a Dask scheduler's address: the games play on its cluster (docs/cluster.md)
        self.concurrency = concurrency
        self.groups_per_round = groups_per_round
        self.idle_s = idle_s
        self.play = play
        self.settings = settings or Settings()
        self.private = private_paths(self.league_path)
        self.stopping = threading.Event()
        self.status = "starting"
        self.rounds = 0
        self.reconciled: dict | None = None
        self._in_flight: dict = {}
        self.lock: FolderLock | None = None
        self.thread = threading.Thread(target=self._loop, name="league-player", daemon=True)

    def start(self) -> None:
        """Take the league's play lock (the one ``arena league play`` takes) and start playing;
        if another server or ``league play`` holds it, serve without playing and say why."""
        replays_dir(self.league_path).mkdir(mode=0o700, exist_ok=True)
        pending_dir(self.league_path).mkdir(mode=0o700, exist_ok=True)
        try:
            self.lock = FolderLock.acquire(self.league_path.with_name(self.league_path.name + ".lock"),
                                           "an arena serve")
        except StoreError as exc:
            self.status = f"not playing: {exc}"
            log.warning("%s", self.status)
            return
        try:
            os.chmod(self.lock.path, 0o600)
        except OSError:
            pass
        self.thread.start()

    def stop(self, wait_s: float = 30.0) -> None:
        """Stop: games in flight are dropped (never stored), then the thread ends."""
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(wait_s)
        if self.lock is not None and not self.thread.is_alive():
            self.lock.release()
            self.lock = None

    def live(self) -> list[dict]:
        """The games in flight: ``[{"group", "rotation", "seed", "bots", "started"}]``, oldest first."""
        return sorted((dict(g) for g in list(self._in_flight.values())), key=lambda g: g["started"])

    def _stored(self, task, reply, stored: bool) -> None:
        pending = pending_dir(self.league_path) / f"{task.group}-{task.rotation}.json"
        live_path(self.league_path, task.group, task.rotation).unlink(missing_ok=True)
        try:
            if stored and pending.exists():
                os.replace(pending, replay_path(self.league_path, task.group, task.rotation))
            else:
                pending.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("replay of game %s-%s: %s", task.group, task.rotation, exc)

    def _loop(self) -> None:
        league = open_league(self.league_path)
        pace = float(self.settings.pace or 0)
        cluster = None
        if self.dask:
            from ..cluster.executor import DaskExecutor

            # one for every round: the workers keep their bot processes and the bots' unpacked
            # (and built) packages, which a round of a few games would otherwise start and build
            # again; after a failed round it connects afresh (the scheduler may have gone)
            cluster = DaskExecutor(self.dask, run=str(self.league_path.resolve()), keep=True)
        try:
            self.reconciled = reconcile_replays(league)
            for folder in (logs_dir(self.league_path), live_dir(self.league_path)):
                folder.mkdir(mode=0o700, exist_ok=True)
            for entry in os.scandir(live_dir(self.league_path)):  # games a stopped server left in flight
                _remove(entry.path)
            if self.reconciled["missing"]:
                log.warning("%d stored games have no replay (games %s...)", len(self.reconciled["missing"]),
                            ", ".join(map(str, self.reconciled["missing"][:5])))
            while not self.stopping.is_set():
                seats = league.seats
                active = league.entries(active_only=True)
                if len(active) < seats:
                    self.status = f"waiting for entries: {len(active)} active, {seats} needed"
                    self.stopping.wait(self.idle_s)
                    continue
                self.status = "playing" + (f" ({pace:g} games a minute)" if pace else "")
                from .submissions import private_paths

                self.private = private_paths(self.league_path)  # what the folder holds now
                executor = _RecordingExecutor(self.league_path, self.concurrency, self.stopping, self.private,
                                              self._in_flight, cluster)
                groups = 1 if pace else self.groups_per_round
                t0 = time.monotonic()
                try:
                    summary = play_league(league, groups * seats, self.concurrency, self.play,
                                          echo=_echo, executor=executor, sandbox=self.settings.game_tier,
                                          priority="uncertain", on_stored=self._stored)
                except (LeagueError, ArenaError) as exc:
                    self.status = f"paused: {exc}"
                    log.warning("league round not played: %s", exc)
                    if cluster is not None:
                        cluster.shutdown()
                    self.stopping.wait(self.idle_s)
                    continue
                except Exception as exc:  # keep serving; try again after a pause
                    self.status = f"paused after an error ({type(exc).__name__}: {exc})"
                    log.exception("league round failed")
                    if cluster is not None:
                        cluster.shutdown()
                    self.stopping.wait(self.idle_s * 6)
                    continue
                self.rounds += 1
                keep = int(league.meta("keep_replays", 0) or 0)  # `arena league play --keep-replays N`
                if keep:
                    prune_replays(replays_dir(self.league_path), keep)
                prune_logs(logs_dir(self.league_path))
                if summary["failed"] and not summary["played"]:
                    self.status = f"paused: no game could be played ({summary['failed'][0]})"
                    self.stopping.wait(self.idle_s)
                elif pace:
                    games = summary["played"] + len(summary["failed"])
                    self.stopping.wait(max(0.0, t0 + games * 60.0 / pace - time.monotonic()))
            self.status = "stopped"
        finally:
            if cluster is not None:
                cluster.shutdown()
            league.close()
