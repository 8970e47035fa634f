"""The league's ratings as a maintained value: refitted in the background, never by a request.

A fit of the whole league (Bradley-Terry or Plackett-Luce with a bootstrap over groups for
the intervals) takes about a second per thousand games. A page that refitted when a game
was stored would make every visitor wait for it while the league plays, and concurrent
visitors would each start one. So :class:`RatingsKeeper` keeps the last fit, the
:class:`Snapshot`, and one thread of its own refits it:

- when games were stored since the last fit, once per batch: at most every
  ``min_interval_s`` and never more often than every three fits' durations, so the fitter
  takes at most a third of a core whatever the league's size and pace;
- at once when an entry was added or retired (the table's rows change).

The fit runs in a short-lived forked process (:func:`fit_apart`), so its numerical work
does not compete with the pages for Python's interpreter lock. Pages show the snapshot with the time it was fitted and the number of games it saw
(:func:`arena.web.views.leaderboard`); the very first fit after a start is a quick one
without intervals (no bootstrap), followed by the full one. The rating history of every
entry (its rating after each twelfth of the league's games) is fitted in the same pass.

Each full fit is also kept as a point of the league's rating history (the league file's
``web_ratings`` table, at most :data:`.store.RATING_POINTS` points, thinned where they are
oldest), which the leaderboard draws beside each entry (:meth:`RatingsKeeper.trend`).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..league.table import league_table
from ..tournament.ratings import fit_ratings
from .games import all_games

log = logging.getLogger(__name__)

#: Points of an entry's rating history.
HISTORY_POINTS = 12

_keepers: dict[str, "RatingsKeeper"] = {}
_keepers_lock = threading.Lock()


@dataclass(frozen=True)
class Snapshot:
    """One fit: the league table (rows with ratings and intervals), every entry's rating
    history, how many games it saw, when it was made and how long it took."""

    table: dict
    history: dict = field(default_factory=dict)
    games: int = 0
    fitted: float = 0.0
    seconds: float = 0.0
    intervals: bool = True


def keeper_of(path) -> "RatingsKeeper | None":
    """The running keeper of the league file ``path``, if any (one per served league)."""
    with _keepers_lock:
        return _keepers.get(str(Path(path).resolve()))


def history_of(games: list[dict], entries: list) -> dict[str, list[tuple[int, float]]]:
    """Every entry's rating after each ~1/12 of ``games`` (a fit without intervals on the games so far)."""
    anchor = entries[0].name if entries else None
    out: dict[str, list] = {e.name: [] for e in entries}
    if not games:
        return {}
    step = max(1, len(games) // HISTORY_POINTS)
    for k in sorted(set(list(range(step, len(games) + 1, step)) + [len(games)])):
        fit = fit_ratings(games[:k], anchor=anchor, bootstrap=0)
        if fit is None:
            continue
        for name, elo in fit.elo.items():
            if name in out:
                out[name].append((k, elo))
    return {n: pts for n, pts in out.items() if pts}


def snapshot(league, games: list[dict], intervals: bool = True, history: bool = True) -> Snapshot:
    """A fit of ``games`` (every game of ``league``, oldest first)."""
    t0 = time.perf_counter()
    table = league_table(league, bootstrap=None if intervals else 0, games=games)
    hist = history_of(games, league.entries()) if history else {}
    return Snapshot(table=table, history=hist, games=len(games), fitted=time.time(),
                    seconds=time.perf_counter() - t0, intervals=intervals)


class _Frozen:
    """What :func:`snapshot` reads of a league, read beforehand: a forked fitter must not
    touch the parent's SQLite connection."""

    def __init__(self, league):
        self.path, self.spec, self.seats = league.path, league.spec, league.seats
        self._entries = league.entries()

    def entries(self, active_only: bool = False) -> list:
        return [e for e in self._entries if e.active or not active_only]


def fit_apart(league, games: list[dict], timeout_s: float = 600.0) -> Snapshot:
    """:func:`snapshot` in a forked process of its own, so the fit (seconds of numerical work
    holding Python's interpreter lock) does not slow the pages of this one; in this thread
    when a process cannot be forked. The child dies with this process (``PR_SET_PDEATHSIG``)
    and runs at a lower CPU priority."""
    import os
    import pickle
    import select
    import signal

    frozen = _Frozen(league)
    try:
        r, w = os.pipe()
        pid = os.fork()
    except OSError:
        return snapshot(frozen, games)
    if pid == 0:  # the fitter: compute, send, leave without running this process's exit handlers
        code = 1
        try:
            os.close(r)
            try:
                import ctypes

                ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
                os.nice(5)
            except (OSError, AttributeError):
                pass
            data = pickle.dumps(snapshot(frozen, games))
            view = memoryview(data)
            while view:
                view = view[os.write(w, view):]
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([r], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                raise RuntimeError(f"the ratings fit took over {timeout_s:g} s")
            chunk = os.read(r, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(r)
        os.waitpid(pid, 0)
    if not chunks:
        raise RuntimeError("the ratings fitter ended without an answer")
    return pickle.loads(b"".join(chunks))


def _state(league) -> tuple:
    return league.conn.execute("SELECT (SELECT COUNT(*) FROM games), (SELECT MAX(id) FROM games), "
                               "(SELECT COUNT(*) FROM entries), (SELECT COUNT(retired) FROM entries)").fetchone()


class RatingsKeeper:
    """Keeps the ratings of the league file ``path`` fitted, in a thread of its own."""

    def __init__(self, path, min_interval_s: float = 5.0, poll_s: float = 1.0, apart: bool = True):
        self.path = Path(path)
        self.apart = apart  # fit in a forked process (:func:`fit_apart`)
        self.min_interval_s = min_interval_s
        self.poll_s = poll_s
        self.stopping = threading.Event()
        self.fitted = threading.Event()  # set once a first snapshot exists
        self._snapshot: Snapshot | None = None
        self._trend: list = []  # the kept points: (fitted, games, {entry: elo})
        self.fits = 0
        self.thread = threading.Thread(target=self._loop, name="ratings", daemon=True)

    def current(self) -> Snapshot | None:
        """The last fit (None before the first one)."""
        return self._snapshot

    def trend(self) -> list:
        """The league's rating history, oldest first: ``(fitted, games, {entry: elo})`` per kept fit."""
        return self._trend

    def _keep_point(self, league, snap: Snapshot) -> None:
        from .store import RATING_POINTS, add_rating_point, rating_points

        ratings = {r["name"]: r["elo"] for r in snap.table.get("table") or [] if r.get("elo") is not None}
        if not ratings or (self._trend and self._trend[-1][1] == snap.games and self._trend[-1][2] == ratings):
            return  # nothing new to draw (an entry added or retired, no game since)
        try:
            add_rating_point(league, snap.fitted, snap.games, ratings)
            self._trend = rating_points(league)
        except Exception:  # noqa: BLE001 - a busy file: the point is kept in memory, the next one goes to the file
            log.exception("keeping the ratings of %s", self.path)
            self._trend = (self._trend + [(snap.fitted, snap.games, ratings)])[-RATING_POINTS:]

    def start(self) -> "RatingsKeeper":
        """Register as the keeper of the file and start fitting."""
        with _keepers_lock:
            _keepers[str(self.path.resolve())] = self
        self.thread.start()
        return self

    def stop(self, wait_s: float = 5.0) -> None:
        """Stop (a fit in progress is left to finish in the background: the thread is a daemon)."""
        self.stopping.set()
        with _keepers_lock:
            if _keepers.get(str(self.path.resolve())) is self:
                del _keepers[str(self.path.resolve())]
        if self.thread.is_alive():
            self.thread.join(wait_s)

    def _loop(self) -> None:
        from .store import open_league

        try:
            league = open_league(self.path)
        except Exception:  # noqa: BLE001 - the pages fall back to fits of their own
            log.exception("the ratings keeper could not open %s", self.path)
            return
        try:
            from .store import rating_points

            self._trend = rating_points(league)
        except Exception:  # noqa: BLE001 - an empty history; the next fit starts one
            log.exception("reading the rating history of %s", self.path)
        try:
            seen, last_start, last_took = None, 0.0, 0.0
            while not self.stopping.is_set():
                try:
                    state = _state(league)
                    entries_changed = seen is None or state[2:] != seen[2:]
                    due = time.monotonic() >= last_start + max(self.min_interval_s, 3 * last_took)
                    if state != seen and (entries_changed or due):
                        last_start = time.monotonic()
                        games = all_games(league)
                        if self._snapshot is None and len(games) > 200:
                            # a quick first answer for the pages, the intervals follow
                            self._snapshot = snapshot(league, games, intervals=False, history=False)
                            self.fitted.set()
                        self._snapshot = fit_apart(league, games) if self.apart else snapshot(league, games)
                        self._keep_point(league, self._snapshot)
                        self.fits += 1
                        self.fitted.set()
                        last_took = time.monotonic() - last_start
                        seen = state
                except Exception:  # noqa: BLE001 - keep the last fit; try again later
                    log.exception("refitting the ratings of %s", self.path)
                    self.stopping.wait(10 * self.poll_s)
                self.stopping.wait(self.poll_s)
        finally:
            league.close()
