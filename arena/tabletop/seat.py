"""The person's seat: what the referee's game loop asks of a bot process, answered by a page.

The game loop runs in one thread and calls :meth:`PersonSeat.ask` as it would call a bot
process's; the web server's threads read :meth:`PersonSeat.view` and hand the person's
choice to :meth:`PersonSeat.submit`, which accepts only an item of the legal list of the
request being answered (so nothing illegal reaches the referee).
"""

from __future__ import annotations

import json
import threading
import time

from ..process.protocol import Ready
from ..process.transport import BotTimeout

#: The person's limit for a move when no clock is asked for: a day (the game waits).
NO_CLOCK_MS = 86_400_000


class ActionRefused(ValueError):
    """An action the person may not send now; its text is the sentence shown to them."""


def _canonical(action) -> str:
    return json.dumps(action, sort_keys=True, separators=(",", ":"))


class PersonSeat:
    """A seat played from the page, with the methods of a bot process the referee calls."""

    def __init__(self, name: str):
        self.name = name
        self.ready = Ready(name, "person", True)
        self.pid = -1
        self.dead = False
        self._lock = threading.Condition()
        self._request: dict | None = None  # the request waiting for the person's answer
        self._answer = None
        self._events: list[dict] = []  # every event the seat was told, in order
        self._observation: dict | None = None
        self._result: dict | None = None
        self._turn = 0
        self.closed = False
        self.replay_path: str | None = None
        self.game = None  # the game, read only in its own thread (see _public_view)
        self.public: dict | None = None  # what a spectator may see: as of the person's last turn

    # --- what the referee calls -------------------------------------------------------
    def send_hello(self, hello: dict, startup_s: float) -> None:
        """The page needs no start: the seat is ready at once."""

    def await_ready(self) -> Ready:
        """The person's ``ready``: their name, and that they want the legal list."""
        return self.ready

    def ask(self, message: dict, limit_s: float) -> tuple[dict, float, float]:
        """Show ``message`` to the page and wait for the person's choice, at most ``limit_s``."""
        start = time.monotonic()
        public = self._public_view()
        with self._lock:
            self.public = public
            self._events.extend(message.get("events") or ())
            self._observation = message["observation"]
            self._request = message
            self._answer = None
            self._turn += 1
            self._lock.notify_all()
            while self._answer is None and not self.closed:
                left = limit_s - (time.monotonic() - start)
                if left <= 0:
                    self._request = None
                    raise BotTimeout(f"no move within {limit_s * 1000:.0f} ms")
                self._lock.wait(min(left, 1.0))
            answer, self._answer, self._request = self._answer, None, None
            self._lock.notify_all()
        if answer is None:
            raise BotTimeout("the person left the table")
        return answer, time.monotonic() - start, 0.0

    def notify(self, message: dict) -> None:
        """``game_over``: the last events (the result is shown once the replay is written, see :meth:`finish`)."""
        with self._lock:
            self._events.extend(message.get("events") or ())
            self._lock.notify_all()

    def _public_view(self) -> dict | None:
        """What a spectator may see of the game now (called in the game's thread, between moves)."""
        if self.game is None:
            return None
        from engine.spectator import spectator_events, spectator_observation

        return {"observation": spectator_observation(self.game), "events": spectator_events(self.game),
                "over": self.game.is_over}

    def finish(self, result: dict, final_view: dict | None, replay_path: str | None = None) -> None:
        """The game is over (also when the person was not told: a forfeit): its result, the
        seat's last view (every pile is shown once a game is over) and its replay file."""
        public = self._public_view() if replay_path else None
        with self._lock:
            self._result = result
            self.replay_path = replay_path
            if public is not None:
                self.public = public
            if final_view is not None:
                self._observation = final_view
            self._request = None
            self._lock.notify_all()

    def cpu_since_last_read(self) -> float:
        return 0.0

    def pause(self) -> None:
        """Nothing to freeze."""

    def resume(self) -> None:
        """Nothing to wake."""

    def close(self, quit_first: bool = True) -> int | None:
        """The seat is given up (a fault): the page is told the game goes on without it."""
        with self._lock:
            self.closed = True
            self._lock.notify_all()
        return None

    # --- what the page calls ----------------------------------------------------------
    def view(self) -> dict:
        """``{"observation", "legal", "over", "result", "events", "turn"}`` of the seat now:
        ``legal`` is empty while the others move."""
        with self._lock:
            req = self._request if self._answer is None else None  # an answer sent is not yet taken
            return {"observation": self._observation, "legal": list(req.get("legal") or []) if req else [],
                    "over": self._result is not None, "result": self._result,
                    "events": list(self._events), "turn": self._turn,
                    "clock": req.get("clock") if req else None}

    def wait_change(self, turn: int, events: int, timeout_s: float) -> None:
        """Wait up to ``timeout_s`` until the seat's view differs from ``turn`` and ``events``."""
        end = time.monotonic() + timeout_s
        with self._lock:
            while (self._turn == turn and len(self._events) == events and self._result is None
                   and time.monotonic() < end):
                self._lock.wait(max(0.0, min(0.5, end - time.monotonic())))

    def submit(self, action) -> None:
        """Play ``action`` (one item of the legal list) or raise :class:`ActionRefused`."""
        with self._lock:
            if self._result is not None:
                raise ActionRefused("the game is over: no move can be played")
            req = self._request
            if req is None or self._answer is not None:
                raise ActionRefused("it is not your move: wait until the page offers moves")
            if not isinstance(action, dict):
                raise ActionRefused("the body must be one JSON object, an item of the 'legal' list of GET /api/state")
            key = _canonical(action)
            for item in req.get("legal") or ():
                if _canonical(item) == key:
                    self._answer = item
                    self._lock.notify_all()
                    return
            raise ActionRefused(f"{key[:200]} is not one of the {len(req.get('legal') or ())} legal moves "
                                "of GET /api/state; nothing was played")
