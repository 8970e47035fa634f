"""Time controls: how long a bot may think, per move and per game.

A :class:`TimeControl` is plain data taken from a tournament (or ``arena play``):

- ``move_ms``: the limit of one move (one request to one reply);
- ``game_ms``: an optional budget for the whole game. With ``mode="clock"`` (a chess
  clock) every move's time is taken from it and ``increment_ms`` is added back after each
  move; a move may use at most ``min(move_ms, what is left)``. With ``mode="bank"`` the
  budget is a bank of overage: a move may run past ``move_ms`` by what the bank holds, and
  only the overage is taken from it (``increment_ms`` is added after each move);
- ``startup_ms``: the limit of the handshake (process start to ``ready``);
- ``grace_ms``: a small margin added to every limit for the pipe and the scheduler.

Each is at most ``MAX_MS`` (a day): a wait goes to ``poll()``, which takes less than 2**31 ms.

Time is measured by the arena with ``time.perf_counter()`` from the moment the request
is flushed into the bot's stdin to the moment the reply's newline is read.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..botspec.spec import MAX_MS, too_long
from ..errors import ArenaError

MODES = ("clock", "bank")


class TimeControlError(ArenaError):
    """A time control in a request or tournament file is malformed."""

    exit_code = 2


@dataclass(frozen=True)
class TimeControl:
    """Per-move limit, optional game budget (clock or bank), start-up limit, grace."""

    move_ms: int = 1000
    game_ms: int | None = None
    increment_ms: int = 0
    startup_ms: int = 10000
    grace_ms: int = 50
    mode: str = "clock"

    @classmethod
    def from_json(cls, obj: dict | None) -> "TimeControl":
        """Build from a mapping; missing keys take the defaults above."""
        if obj is None:
            return cls()
        if not isinstance(obj, dict):
            raise TimeControlError("time_control must be a mapping such as {\"move_ms\": 1000}")
        known = set(cls.__dataclass_fields__)
        for key in obj:
            if key not in known:
                raise TimeControlError(f"time_control has no field {key!r} (fields: {', '.join(sorted(known))})")
        tc = cls(**{k: v for k, v in obj.items() if not (v is None and k != "game_ms")})
        for key in ("move_ms", "increment_ms", "startup_ms", "grace_ms"):
            v = getattr(tc, key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise TimeControlError(f"time_control {key} must be a whole number of milliseconds >= 0, got {v!r}")
        if tc.move_ms <= 0:
            raise TimeControlError("time_control move_ms must be at least 1 millisecond")
        if tc.game_ms is not None and (isinstance(tc.game_ms, bool) or not isinstance(tc.game_ms, int) or tc.game_ms < 0):
            raise TimeControlError(f"time_control game_ms must be null or a whole number of milliseconds, got {tc.game_ms!r}")
        for key in ("move_ms", "game_ms", "increment_ms", "startup_ms", "grace_ms"):
            if getattr(tc, key) is not None and too_long(f"time_control {key}", getattr(tc, key)):
                raise TimeControlError(too_long(f"time_control {key}", getattr(tc, key)))
        if tc.mode not in MODES:
            raise TimeControlError(f"time_control mode must be one of {', '.join(MODES)}, got {tc.mode!r}")
        return tc

    def to_json(self) -> dict:
        """Plain data, as given to bots in ``hello`` and stored in replays (every field is a
        number, None or a string: no deep copy is needed, as ``dataclasses.asdict`` makes)."""
        return {"move_ms": self.move_ms, "game_ms": self.game_ms, "increment_ms": self.increment_ms,
                "startup_ms": self.startup_ms, "grace_ms": self.grace_ms, "mode": self.mode}


class Clock:
    """One seat's clock under a :class:`TimeControl`."""

    __slots__ = ("tc", "left_ms")

    def __init__(self, tc: TimeControl):
        self.tc = tc
        self.left_ms: float | None = None if tc.game_ms is None else float(tc.game_ms)

    def allowance_ms(self) -> float:
        """The limit of the next move, without the grace margin."""
        tc = self.tc
        if self.left_ms is None:
            return float(tc.move_ms)
        if tc.mode == "clock":
            return max(0.0, min(float(tc.move_ms), self.left_ms))
        return tc.move_ms + max(0.0, self.left_ms)

    def charge(self, elapsed_ms: float) -> None:
        """Take a finished move's time off the clock and add the increment."""
        if self.left_ms is None:
            return
        tc = self.tc
        used = elapsed_ms if tc.mode == "clock" else max(0.0, elapsed_ms - tc.move_ms)
        self.left_ms = max(0.0, self.left_ms - used) + tc.increment_ms

    def view(self) -> dict:
        """What the bot is told in each request: its limits now, in milliseconds."""
        return {"move_ms": int(self.allowance_ms()),
                "game_left_ms": None if self.left_ms is None else int(self.left_ms),
                "increment_ms": self.tc.increment_ms, "mode": self.tc.mode}
