"""The background player of ``arena serve``: league games, round after round, for as long as it runs.

Each round is one call of :func:`arena.league.play.play_league` (the league's own
matchmaking, seat rotation and concurrency), so the games are stored exactly as
``arena league play`` stores them: each finished game in one transaction, keyed by
(group, rotation). A round asks the league's next group number afresh, so a server
killed in the middle of a game loses only the game in flight (it was never stored) and
a restart plays on from the next group: nothing stored is lost or played twice.

Every game's replay is written to ``LEAGUE.db.replays/GROUP-ROTATION.json`` by the
worker that played it, before the game is stored; a replay left by a game that was never
stored is overwritten when that group number is played again.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from ..errors import ArenaError
from ..league import LeagueError
from ..league.play import play_league
from ..tournament.executors import LocalExecutor
from .store import open_league

log = logging.getLogger(__name__)


def replays_dir(league_path: Path) -> Path:
    """Where game replays live: ``LEAGUE.db.replays/`` next to the league file."""
    return Path(f"{league_path}.replays")


def replay_path(league_path: Path, group: int, rotation: int) -> Path:
    """The replay file of the game (group, rotation)."""
    return replays_dir(league_path) / f"{group}-{rotation}.json"


class _RecordingExecutor:
    """The local executor, writing each game's replay and stopping when the server stops."""

    def __init__(self, league_path: Path, concurrency: int, stopping: threading.Event):
        self.inner = LocalExecutor(concurrency)
        self.league_path = league_path
        self.stopping = stopping

    def run(self, tasks, payload, stop, on_death):
        """:meth:`LocalExecutor.run` with a replay path in every request."""
        def with_replay(task):
            job = payload(task)
            job["request"]["replay_path"] = str(replay_path(self.league_path, task.group, task.rotation))
            return job

        return self.inner.run(tasks, with_replay, lambda: stop() or self.stopping.is_set(), on_death)


class Player:
    """Plays rounds of league games in a background thread until :meth:`stop`."""

    def __init__(self, league_path: Path, concurrency: int = 2, groups_per_round: int = 2, idle_s: float = 5.0,
                 play: str = "auto"):
        self.league_path = Path(league_path)
        self.concurrency = concurrency
        self.groups_per_round = groups_per_round
        self.idle_s = idle_s
        self.play = play
        self.stopping = threading.Event()
        self.status = "starting"
        self.rounds = 0
        self.thread = threading.Thread(target=self._loop, name="league-player", daemon=True)

    def start(self) -> None:
        """Start playing."""
        replays_dir(self.league_path).mkdir(exist_ok=True)
        self.thread.start()

    def stop(self, wait_s: float = 30.0) -> None:
        """Stop: games in flight are dropped (never stored), then the thread ends."""
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join(wait_s)

    def _loop(self) -> None:
        league = open_league(self.league_path)
        try:
            while not self.stopping.is_set():
                seats = league.seats
                active = league.entries(active_only=True)
                if len(active) < seats:
                    self.status = f"waiting for entries: {len(active)} active, {seats} needed"
                    self.stopping.wait(self.idle_s)
                    continue
                self.status = "playing"
                executor = _RecordingExecutor(self.league_path, self.concurrency, self.stopping)
                try:
                    summary = play_league(league, self.groups_per_round * seats, self.concurrency, self.play,
                                          echo=log.warning, executor=executor)
                except (LeagueError, ArenaError) as exc:
                    self.status = f"paused: {exc}"
                    log.warning("league round not played: %s", exc)
                    self.stopping.wait(self.idle_s)
                    continue
                except Exception as exc:  # keep serving; try again after a pause
                    self.status = f"paused after an error ({type(exc).__name__}: {exc})"
                    log.exception("league round failed")
                    self.stopping.wait(self.idle_s * 6)
                    continue
                self.rounds += 1
                if summary["failed"] and not summary["played"]:
                    self.status = f"paused: no game could be played ({summary['failed'][0]})"
                    self.stopping.wait(self.idle_s)
            self.status = "stopped"
        finally:
            league.close()
