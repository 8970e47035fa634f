"""The built-in bots' registrations: the same hook third-party bot packages implement.

Each built-in runs as a protocol bot process: ``python -m bots.run NAME`` (see
:mod:`bots.run`). The example bots in other languages are not registered (they need
``node`` or a C compiler); run them with ``--cmd``.
"""

from __future__ import annotations

import sys

from arena.hookspecs import hookimpl


@hookimpl
def arena_register_bots(register) -> None:
    """Register ``random``, ``greedy`` and the trivial ``pass`` bot."""
    register(name="random", command=[sys.executable, "-m", "bots.run", "random"],
             description="uniformly random legal single actions; a baseline and a fuzzer")
    register(name="greedy", command=[sys.executable, "-m", "bots.run", "greedy"],
             description="one-ply player: completes the most valuable puzzles it can")
    register(name="pass", command=[sys.executable, "-m", "bots.run", "pass"],
             description="always passes and places nothing; for tests and benchmarks")
