"""Following a game in flight: its moves so far, rebuilt from the protocol log its worker appends.

A game of bot processes played by ``arena serve``'s own workers appends every line to and
from its bots to ``LEAGUE.db.live/GROUP-ROTATION.log`` (:func:`.player.live_path`; the
referee's protocol log, after a first line naming the game's rules, seats, seed and deal).
:class:`LiveGame` reads what was appended since its last call and replays it on a fresh
game, as the referee played it: a reply to the request the seat was asked (same ``id``)
is its move; a reply the rules refuse, or a seat asked nothing more while it was to move
(it timed out, crashed or broke the protocol), is that seat's forfeit, the league's fault
policy. The record it gives (:meth:`LiveGame.record`) is a replay of the game so far, for
the server's own use: it names the seed. The public sees the game through
:meth:`LiveGame.frozen` and :mod:`.spectator` (what a spectator of the table sees); the
stored replay replaces it when the game ends.

Games whose seats are all built-in bots are played inside a worker in milliseconds and
have no such file; neither do games played on a Dask cluster (their workers are elsewhere).
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

from engine import Game, RuleSpec, action_from_json, make_replay

from .player import live_path

_LINE = re.compile(r"(\S+) \S+ seat(\d+) .*? ([<>]) (.*)")
#: Bytes of a live file read per call at most (a game's log grows by a few MB at most).
READ_CAP = 8 << 20


def _seconds(stamp: str) -> float | None:
    """A protocol log's time (``2026-11-27T11:02:03.123456Z``) in seconds, or None."""
    import calendar
    import time

    try:
        whole, _, frac = stamp.rstrip("Z").partition(".")
        return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + float("0." + (frac or "0"))
    except ValueError:
        return None


class LiveGame:
    """The moves of one game in flight, read incrementally from its protocol log."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.offset = 0
        self.head: dict | None = None
        self.game: Game | None = None
        self.asked: dict[int, tuple] = {}  # seat -> (id, time) of the request it has not answered yet
        self.move_times: list = []  # as the referee's replay has them: one per entry of the game's history
        self.inode = None
        self.broken: str | None = None
        self.lock = threading.Lock()

    def update(self) -> bool:
        """Read what was appended; False when the file is gone (the game ended or was dropped)."""
        with self.lock:
            try:
                with open(self.path, "rb") as f:
                    st = os.fstat(f.fileno())
                    if self.inode is not None and st.st_ino != self.inode:
                        return False  # a new game of that name: this one is over
                    self.inode = st.st_ino
                    f.seek(self.offset)
                    data = f.read(READ_CAP)
            except OSError:
                return False
            end = data.rfind(b"\n")
            if end < 0:
                return True
            self.offset += end + 1
            for raw in data[:end].split(b"\n"):
                self._line(raw.decode("utf-8", "replace"))
            return True

    def _line(self, text: str) -> None:
        if self.broken:
            return
        if self.head is None:
            try:
                self.head = json.loads(text)
                self.game = Game.new(RuleSpec.from_json(self.head["rules"]), int(self.head["players"]),
                                     int(self.head["seed"]), self.head.get("deal"))
            except Exception as exc:  # noqa: BLE001 - a file that is not a live game shows as such
                self.broken = f"the game cannot be followed ({type(exc).__name__})"
            return
        m = _LINE.fullmatch(text)
        game = self.game
        if m is None or game is None or game.is_over:
            return
        seat, direction = int(m[2]), m[3]
        try:
            msg = json.loads(m[4])
        except ValueError:
            msg = None
        if direction == ">":
            if isinstance(msg, dict) and "observation" in msg:
                self._forfeit_until(seat)
                self.asked[seat] = (msg.get("id"), _seconds(m[1]))
            return
        if seat not in self.asked or not isinstance(msg, dict) or msg.get("id") != self.asked[seat][0]:
            return  # a line that answers nothing asked (a stale reply, a ready): the referee ignores it too
        _, asked_at = self.asked.pop(seat)
        if game.to_move() != seat:
            return
        try:
            if msg.get("type") not in (None, "action"):
                raise ValueError("not an action")
            game.apply(action_from_json(game.rules, msg.get("action")))
        except Exception:  # noqa: BLE001 - the referee forfeits a seat whose reply the rules refuse
            self._forfeit(seat)
            return
        answered = _seconds(m[1])
        self.move_times.append({"wall_ms": round((answered - asked_at) * 1000, 1)}
                               if answered is not None and asked_at is not None else None)

    def _forfeit_until(self, seat: int) -> None:
        """The arena asks ``seat``: every seat to move before it failed to answer and was forfeited."""
        game = self.game
        for _ in range(game.n):
            mover = game.to_move()
            if game.is_over or mover == seat or mover is None or game.players[mover].forfeited:
                return
            self._forfeit(mover)

    def _forfeit(self, seat: int) -> None:
        self.asked.pop(seat, None)
        self.game.forfeit(seat)
        self.move_times.append(None)

    def record(self) -> dict | None:
        """The replay record of the game so far (None before its first line)."""
        with self.lock:
            if self.head is None or self.game is None:
                return None
            record = make_replay(self.game, self.head.get("deal"), {
                "bots": self.head.get("bots"), "seats": self.head.get("bots"),
                "move_times": list(self.move_times) if any(self.move_times) else None})
            record["result"] = None
            record["final_digest"] = None
            return record

    def frozen(self):
        """The game as read so far (:class:`.spectator.Frozen`), None before its first line
        or when it cannot be followed."""
        from .spectator import Frozen

        with self.lock:
            if self.head is None or self.game is None or self.broken:
                return None
            return Frozen(dict(self.head), list(self.game.history), list(self.move_times))

    def state(self) -> dict:
        """``{"moves", "bots", "started"}``: how far the game is."""
        with self.lock:
            head = self.head or {}
            return {"moves": len(self.game.history) if self.game is not None else 0,
                    "bots": head.get("bots") or [], "started": head.get("started"), "error": self.broken}


_games: dict[str, LiveGame] = {}
_games_lock = threading.Lock()


def follow(league_path: Path, group: int, rotation: int) -> LiveGame | None:
    """The game (group, rotation) in flight, brought up to date; None if it is not in flight."""
    path = live_path(league_path, group, rotation)
    key = str(path)
    with _games_lock:
        live = _games.get(key)
        if live is None:
            if not path.is_file():
                return None
            live = _games[key] = LiveGame(path)
            if len(_games) > 256:  # the oldest first; a game still followed is read again from its start
                _games.pop(next(iter(_games)))
    if live.update():
        return live
    with _games_lock:
        if _games.get(key) is live:
            del _games[key]
    fresh = LiveGame(path)  # a new game under that name, or none
    if not fresh.update():
        return None
    with _games_lock:
        _games[key] = fresh
    return fresh
