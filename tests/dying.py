"""A game function's way to kill its own worker process once, for the worker-death tests."""

from __future__ import annotations

import os
from pathlib import Path


def die_the_first_time(request: dict) -> None:
    """Kill this process (exit code 9) if ``request`` is the chosen deal (``ARENA_TEST_SEED``)
    and it has not died for it yet (the marker file ``ARENA_TEST_MARKER`` remembers)."""
    marker = Path(os.environ["ARENA_TEST_MARKER"])
    if request["seed"] == int(os.environ["ARENA_TEST_SEED"]) and not marker.exists():
        marker.write_text("died")
        os._exit(9)
