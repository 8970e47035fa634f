"""Progress for runs without a progress bar: a line now and then instead of silence."""

from __future__ import annotations

import time


class Ticker:
    """Progress as a line now and then, for runs without a progress bar: every ``every_s``
    seconds (and at the end) ``played N of M games (P%), R games/s``."""

    def __init__(self, total: int, done: int, echo, what: str = "games", every_s: float = 10.0):
        self.total, self.done, self.echo, self.what, self.every_s = total, done, echo, what, every_s
        self.start = self.last = time.perf_counter()
        self.played = 0

    def update(self, n: int = 1) -> None:
        """Count ``n`` finished games; print a line if ``every_s`` passed since the last."""
        self.done += n
        self.played += n
        now = time.perf_counter()
        if now - self.last >= self.every_s:
            self.last = now
            self.echo(self.line())

    def line(self) -> str:
        """``played 120 of 400 games (30%), 12.3 games/s``."""
        rate = self.played / max(time.perf_counter() - self.start, 1e-9)
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return f"played {self.done} of {self.total} {self.what} ({pct:.0f}%), {rate:.1f} {self.what}/s"
